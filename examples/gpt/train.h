/* train.h -- training a gpt_model: the graphs of one step (forward, backward,
 * AdamW), nanoGPT's learning-rate schedule, gradient clipping, evaluation. */
#ifndef GPT_TRAIN_H
#define GPT_TRAIN_H

#include "data.h"
#include "gpt.h"

struct train_opts {
    int batch, n_ctx;            /* B sequences of T tokens per step */
    int64_t iters;               /* total steps */
    float lr, min_lr;            /* peak and final learning rate */
    int64_t warmup, decay_iters; /* linear warmup, then cosine decay to min_lr at decay_iters */
    float beta1, beta2, eps, weight_decay, clip;
    int threads;
    uint64_t seed;
    int eval_batches;            /* validation batches per evaluation */
    bool fused;                  /* attention through ggml_flash_attn_ext */
};

/* Data parallelism (dist.h): rank `rank` of `ranks` (unset: one process)
 * computes rows [rank*B, (rank+1)*B) of every batch of ranks*B sequences;
 * reduce() sums over the ranks, in place, the n gradients (then multiplies
 * them by scale) and n_sums floats. */
struct train_parallel {
    int rank, ranks;
    bool (*reduce)(void * ud, struct ggml_tensor ** grads, int n, float scale, float * sums, int n_sums);
    void * ud;
};

struct trainer {
    struct gpt_model * model;
    const struct corpus * data;
    struct train_opts o;
    struct ggml_context * ctx;         /* graphs and activations */
    struct ggml_cgraph * step_graph;   /* forward + backward */
    struct ggml_cgraph * opt_graph;    /* AdamW on every parameter */
    struct ggml_cgraph * eval_graph;   /* forward only */
    struct gpt_graph train_io, eval_io;
    struct ggml_tensor * grads[4 + 6 * GPT_MAX_LAYERS];
    struct ggml_tensor * adamw_decay, * adamw_no_decay;  /* [7] AdamW hyper-parameters */
    struct ggml_backend_buffer * buffer;
    struct train_parallel par;
};

/* nanoGPT's get_lr: linear warmup, cosine decay, then min_lr. */
float train_lr(const struct train_opts * o, int64_t step);

bool trainer_init(struct trainer * t, struct gpt_model * m, const struct corpus * data, const struct train_opts * o);
void trainer_free(struct trainer * t);

/* One optimisation step (step counts from 0): returns the training loss of
 * the batch before the update, and the gradient norm before clipping.
 * false + message when the compute fails or the loss is not finite (then the
 * parameters are left as they were). */
bool trainer_step(struct trainer * t, int64_t step, float * loss, float * grad_norm);

/* Mean validation loss over the fixed batches 0..eval_batches-1 of stream 1
 * (each rank its rows of them). */
bool trainer_eval(struct trainer * t, float * loss);

#endif

/* train.h -- training a gpt_model through ggml-opt: one optimization
 * context holds the forward, backward and AdamW graphs, the gradient
 * clipping, the NaN/Inf check and (under MPI) the gradient reduction; this
 * file fills its batches, names nanoGPT's schedule and the parameters
 * without weight decay, and evaluates. */
#ifndef GPT_TRAIN_H
#define GPT_TRAIN_H

#include "data.h"
#include "gpt.h"

#include "ggml-opt.h"

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
    enum ggml_prec prec;         /* of the matrix products (GGML_PREC_BF16: --precision bf16) */
};

struct trainer {
    struct gpt_model * model;
    const struct corpus * data;
    struct train_opts o;
    ggml_backend_t backend;
    ggml_backend_sched_t sched;
    struct ggml_context * ctx_io;       /* tokens, targets, mask: memory of their own */
    struct ggml_context * ctx_compute;  /* the forward tensors (the scheduler's memory) */
    ggml_backend_buffer_t io_buffer;
    struct gpt_graph io;
    ggml_opt_context_t opt;
    struct ggml_tensor ** adam_m, ** adam_v;  /* the context's moments, by parameter, named as in checkpoints */
    int rank, ranks;                    /* this process's rows of each batch (data parallelism) */
};

/* The learning-rate schedule of o (nanoGPT's get_lr) and its value at step. */
struct ggml_opt_lr_schedule train_schedule(const struct train_opts * o);
float train_lr(const struct train_opts * o, int64_t step);

/* Builds the context; the AdamW moments start from the model's (zero for a
 * new model, a checkpoint's after gpt_load). false + message on failure. */
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

/* gpt_save with the context's AdamW moments and step count. */
bool trainer_save(const struct trainer * t, const char * path, int64_t step);

#endif

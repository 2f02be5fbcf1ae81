/* gpt.h -- a small GPT (nanoGPT's architecture) built from ggmlr ops:
 * token + position embeddings, pre-norm blocks of causal multi-head attention
 * and a GELU MLP, a final LayerNorm, and an LM head tied to the token
 * embedding. No biases, no dropout (nanoGPT's "baby GPT" defaults). */
#ifndef GPT_H
#define GPT_H

#include "ggml.h"

#include <stdbool.h>
#include <stdint.h>

#define GPT_MAX_LAYERS 64

struct gpt_config {
    int n_vocab, n_ctx, n_embd, n_head, n_kv_head, n_layer;
};

struct gpt_layer {
    struct ggml_tensor * ln1_w;     /* [C] */
    struct ggml_tensor * attn_qkv;  /* [C, C + 2*Hkv*D]: q, k, v projections side by side */
    struct ggml_tensor * attn_proj; /* [C, C] */
    struct ggml_tensor * ln2_w;     /* [C] */
    struct ggml_tensor * mlp_fc;    /* [C, 4C] */
    struct ggml_tensor * mlp_proj;  /* [4C, C] */
};

/* One parameter: its weights and the AdamW moments of a loaded checkpoint
 * (zero for a new model; training keeps the live moments in its ggml-opt
 * context, which starts from these). */
struct gpt_param {
    struct ggml_tensor * w, * adam_m, * adam_v;
    bool decays;  /* weight decay applies (matrices, not LayerNorm gains) */
};

struct gpt_model {
    struct gpt_config cfg;
    struct ggml_context * ctx;  /* holds the parameters and their moments */
    struct ggml_tensor * wte;   /* [C, V] token embedding, also the LM head */
    struct ggml_tensor * wpe;   /* [C, T] position embedding */
    struct ggml_tensor * lnf_w; /* [C] */
    struct gpt_layer layers[GPT_MAX_LAYERS];
    /* every parameter, in the order of gpt.c's descriptor tables (the
     * checkpoint's order) */
    int n_params;
    struct gpt_param * params;
};

/* Why cfg cannot be built, or NULL. */
const char * gpt_config_error(const struct gpt_config * cfg);

/* Parameters initialised as nanoGPT does: N(0, 0.02), residual projections
 * N(0, 0.02/sqrt(2L)), LayerNorm weights 1; moments zero. false + message on failure. */
bool gpt_model_init(struct gpt_model * m, const struct gpt_config * cfg, uint64_t seed);
void gpt_model_free(struct gpt_model * m);
int64_t gpt_model_n_weights(const struct gpt_model * m);

/* The tensors of one forward pass over a batch of B sequences of T tokens. */
struct gpt_graph {
    struct ggml_tensor * tokens;   /* I32 [T, B], input */
    struct ggml_tensor * targets;  /* I32 [T*B], input (next tokens) */
    struct ggml_tensor * mask;     /* F32 [T, T] causal mask, filled by gpt_graph_set_mask */
    struct ggml_tensor * logits;   /* [V, T*B] */
    struct ggml_tensor * loss;     /* [1] mean cross-entropy, nats per token */
};

/* How the forward pass computes: attention fused through ggml_flash_attn_ext
 * (or mul_mat + soft_max_ext + mul_mat), and the precision of the matrix
 * products, the fused attention's included (GGML_PREC_BF16: bf16 operands,
 * FP32 sums, where the CPU has them; autodiff gives the backward's products
 * the same). */
struct gpt_build_opts {
    bool fused;
    enum ggml_prec prec;
};

/* Record the forward pass in ctx; the inputs (tokens, targets, mask) are
 * created in ctx_io, which may be ctx. */
bool gpt_build(const struct gpt_model * m, struct ggml_context * ctx_io, struct ggml_context * ctx, int B, int T,
               const struct gpt_build_opts * opts, struct gpt_graph * out);
void gpt_graph_set_mask(const struct gpt_graph * g);

/* Checkpoints (GGUF): configuration, vocabulary, parameters, and unless
 * adam_m is NULL the AdamW moments (adam_m[i], adam_v[i] of parameter i) and
 * the step count. */
bool gpt_save(const struct gpt_model * m, const char * path, const unsigned char * vocab, int n_vocab,
              struct ggml_tensor * const * adam_m, struct ggml_tensor * const * adam_v, int64_t step);
/* Loads a checkpoint written by gpt_save into a new model; vocab (256 bytes)
 * receives the vocabulary, *step the step count (0 when it has none). */
bool gpt_load(struct gpt_model * m, const char * path, unsigned char * vocab, int64_t * step);

#endif

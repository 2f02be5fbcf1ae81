/* graph.c -- the forward pass of a llama-family block stack:
 *   x = token_embd[tokens]
 *   per block: h = rmsnorm(x) * attn_norm
 *              q, k, v = Wq h (+bq), Wk h (+bk), Wv h (+bv), RoPE on q and k
 *              x += Wo attention(q, k, v)        (grouped-query, causal, fused)
 *              h = rmsnorm(x) * ffn_norm
 *              x += Wdown (silu(Wgate h) * Wup h)
 *   logits = output (rmsnorm(x) * output_norm)
 * Every linear map may carry a LoRA adapter: W x + (alpha/r) B (A x). */
#include "llama.h"

#include <math.h>
#include <stdio.h>

static struct ggml_tensor * linear(struct ggml_context * ctx, const struct llama_model * m, const struct llama_lora * lora,
                                   int l, enum llama_mat k, struct ggml_tensor * x) {
    struct ggml_tensor * y = ggml_mul_mat(ctx, m->layers[l].w[k], x);
    if (lora && lora->a[l][k]) {
        struct ggml_tensor * ab = ggml_mul_mat(ctx, lora->b[l][k], ggml_mul_mat(ctx, lora->a[l][k], x));
        y = ggml_add(ctx, y, ggml_scale(ctx, ab, lora->alpha / (float) lora->rank));
    }
    return y;
}

static struct ggml_tensor * add_bias(struct ggml_context * ctx, struct ggml_tensor * y, struct ggml_tensor * b) {
    return b ? ggml_add(ctx, y, b) : y;
}

static struct ggml_tensor * rms_norm(struct ggml_context * ctx, const struct llama_model * m, struct ggml_tensor * x, struct ggml_tensor * w) {
    return ggml_mul(ctx, ggml_rms_norm(ctx, x, m->hp.rms_eps), w);
}

static struct ggml_tensor * rope(struct ggml_context * ctx, const struct llama_model * m, struct ggml_tensor * x, struct ggml_tensor * pos) {
    const struct llama_hparams * hp = &m->hp;
    /* llama.cpp's defaults: no YaRN extension (ext_factor 0), attn_factor 1 */
    return ggml_rope_ext(ctx, x, pos, NULL, hp->n_rot, hp->rope_mode, hp->n_ctx, hp->rope_base, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
}

/* Causal grouped-query attention of block l over h [C, T*B]; returns [C, T*B]. */
static struct ggml_tensor * attention(struct ggml_context * ctx, struct ggml_cgraph * gf, const struct llama_model * m,
                                      const struct llama_lora * lora, struct llama_kv * kv, int l, struct ggml_tensor * h,
                                      const struct llama_batch * in, int n_past, int T, int B) {
    const struct llama_hparams * hp = &m->hp;
    const struct llama_layer * L = &m->layers[l];
    const int64_t H = hp->n_head, Hkv = hp->n_head_kv, D = hp->n_embd / H, Ckv = D * Hkv;
    struct ggml_tensor * q = add_bias(ctx, linear(ctx, m, lora, l, LLAMA_Q, h), L->bq);
    struct ggml_tensor * k = add_bias(ctx, linear(ctx, m, lora, l, LLAMA_K, h), L->bk);
    struct ggml_tensor * v = add_bias(ctx, linear(ctx, m, lora, l, LLAMA_V, h), L->bv);
    q = rope(ctx, m, ggml_reshape_4d(ctx, q, D, H, T, B), in->pos);
    k = rope(ctx, m, ggml_reshape_4d(ctx, k, D, Hkv, T, B), in->pos);
    if (kv) {
        /* rows n_past .. n_past+T-1 of the cache take the new keys and values;
         * attention then reads rows 0 .. n_past+T-1 */
        const size_t row = kv->k[l]->nb[1];
        const int64_t n_kv = n_past + T;
        ggml_build_forward_expand(gf, ggml_cpy(ctx, ggml_reshape_2d(ctx, k, Ckv, T), ggml_view_2d(ctx, kv->k[l], Ckv, T, row, (size_t) n_past * row)));
        ggml_build_forward_expand(gf, ggml_cpy(ctx, v, ggml_view_2d(ctx, kv->v[l], Ckv, T, row, (size_t) n_past * row)));
        k = ggml_view_3d(ctx, kv->k[l], D, Hkv, n_kv, D * sizeof(float), row, 0);
        v = ggml_view_3d(ctx, kv->v[l], D, Hkv, n_kv, D * sizeof(float), row, 0);
    } else {
        v = ggml_reshape_4d(ctx, v, D, Hkv, T, B);
    }
    /* heads as flash attention wants them: [D, tokens, heads, B] */
    struct ggml_tensor * y = ggml_flash_attn_ext(ctx, ggml_permute(ctx, q, 0, 2, 1, 3), ggml_permute(ctx, k, 0, 2, 1, 3),
                                                 ggml_permute(ctx, v, 0, 2, 1, 3), in->mask, 1.0f / sqrtf((float) D), 0.0f, 0.0f);
    return linear(ctx, m, lora, l, LLAMA_O, ggml_reshape_2d(ctx, y, hp->n_embd, (int64_t) T * B));  /* y: [D, H, T, B] */
}

struct ggml_tensor * llama_build(struct ggml_context * ctx, struct ggml_context * ctx_io, struct ggml_cgraph * gf,
                                 const struct llama_model * m, const struct llama_lora * lora, struct llama_kv * kv,
                                 int n_past, int T, int B, bool last_only, bool checkpoint, struct llama_batch * in) {
    const struct llama_hparams * hp = &m->hp;
    const int n_kv = kv ? n_past + T : T;
    if (T < 1 || B < 1 || n_past < 0 || (kv && (B != 1 || n_kv > kv->n_ctx)) || (!kv && n_past != 0)) {
        fprintf(stderr, "error: a batch of %d x %d tokens after %d does not fit the context (%d)\n", B, T, n_past, kv ? kv->n_ctx : T);
        return NULL;
    }
    in->tokens = ggml_new_tensor_1d(ctx_io, GGML_TYPE_I32, (int64_t) T * B);
    in->pos = ggml_new_tensor_1d(ctx_io, GGML_TYPE_I32, T);
    in->mask = ggml_new_tensor_2d(ctx_io, GGML_TYPE_F32, n_kv, T);
    if (!in->tokens || !in->pos || !in->mask) { fprintf(stderr, "error: building the model: %s\n", ggml_last_error()); return NULL; }
    ggml_set_input(in->tokens); ggml_set_input(in->pos); ggml_set_input(in->mask);
    struct ggml_tensor * x = ggml_get_rows(ctx, m->tok_embd, in->tokens);  /* [C, T*B] */
    for (int l = 0; l < hp->n_layer; l++) {
        const struct llama_layer * L = &m->layers[l];
        if (checkpoint) ggml_set_checkpoint(x);  /* the residual stream between blocks: kept, the rest recomputed */
        x = ggml_add(ctx, x, attention(ctx, gf, m, lora, kv, l, rms_norm(ctx, m, x, L->attn_norm), in, n_past, T, B));
        struct ggml_tensor * h = rms_norm(ctx, m, x, L->ffn_norm);
        h = ggml_swiglu_split(ctx, linear(ctx, m, lora, l, LLAMA_GATE, h), linear(ctx, m, lora, l, LLAMA_UP, h));
        x = ggml_add(ctx, x, linear(ctx, m, lora, l, LLAMA_DOWN, h));
    }
    if (checkpoint) ggml_set_checkpoint(x);
    x = rms_norm(ctx, m, x, m->output_norm);
    if (last_only) x = ggml_view_2d(ctx, x, hp->n_embd, 1, x->nb[1], (size_t) ((int64_t) T * B - 1) * x->nb[1]);
    struct ggml_tensor * logits = ggml_mul_mat(ctx, m->output, x);
    if (!logits) { fprintf(stderr, "error: building the model: %s\n", ggml_last_error()); return NULL; }
    ggml_set_output(logits);
    return logits;
}

void llama_batch_fill(const struct llama_batch * in, int n_past) {
    const int64_t T = in->pos->ne[0], n_kv = in->mask->ne[0];
    int32_t * pos = in->pos->data;
    float * mask = in->mask->data;
    for (int64_t t = 0; t < T; t++) {
        pos[t] = n_past + (int32_t) t;
        for (int64_t j = 0; j < n_kv; j++) mask[t * n_kv + j] = j <= n_past + t ? 0.0f : -INFINITY;
    }
}

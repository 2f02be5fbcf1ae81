/* gpt.c -- the model: parameters, their initialisation, the forward pass
 * (training and sampling share it), and GGUF checkpoints. */
#include "gpt.h"

#include "gguf.h"
#include "rng.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char * gpt_config_error(const struct gpt_config * c) {
    if (c->n_vocab < 2 || c->n_vocab > 256) return "the vocabulary must hold 2..256 symbols";
    if (c->n_ctx < 1 || c->n_ctx > 65536) return "the context length must be 1..65536";
    if (c->n_layer < 1 || c->n_layer > GPT_MAX_LAYERS) return "the number of layers must be 1..64";
    if (c->n_head < 1 || c->n_embd < 1 || c->n_embd % c->n_head != 0) return "the embedding size must be a positive multiple of the number of heads";
    if (c->n_kv_head < 1 || c->n_head % c->n_kv_head != 0) return "the number of heads must be a multiple of the number of key/value heads";
    if ((int64_t) c->n_embd * c->n_embd * c->n_layer > (int64_t) 1 << 34) return "the model is too large";
    return NULL;
}

/* ---- initialisation ---- */

static void fill_normal(struct ggml_tensor * t, double std, uint64_t * s) {
    float * x = t->data;
    for (int64_t i = 0; i < ggml_nelements(t); i++) {
        const double r = sqrt(-2.0 * log(rng_uniform(s))), a = 2.0 * M_PI * rng_uniform(s);
        x[i] = (float) (std * r * cos(a));
    }
}

static void fill_const(struct ggml_tensor * t, float v) {
    float * x = t->data;
    for (int64_t i = 0; i < ggml_nelements(t); i++) x[i] = v;
}

/* ---- parameters: one descriptor per tensor ---- */

/* A dimension in units of the configuration. */
enum gpt_dim { DIM_1, DIM_C, DIM_E /* C + 2*Hkv*D */, DIM_4C, DIM_V, DIM_T };

/* nanoGPT's initialisation: N(0, 0.02); the projections into the residual
 * stream N(0, 0.02/sqrt(2L)); LayerNorm gains 1. */
enum gpt_init { INIT_ONES, INIT_NORMAL, INIT_NORMAL_RESID };

struct gpt_param_desc {
    const char * name;  /* GGUF name (blk.N. is prepended for a layer's) */
    size_t offset;      /* of the tensor pointer in struct gpt_model or struct gpt_layer */
    enum gpt_dim ne0, ne1;
    enum gpt_init init;
    bool decays;
};

/* The order of these tables is the order of parameters, of the random
 * numbers of their initialisation and of the checkpoint's tensors. A
 * variant block (SwiGLU, biases) adds rows here and fields in gpt_layer. */
static const struct gpt_param_desc model_params[] = {
    {"token_embd.weight",    offsetof(struct gpt_model, wte),   DIM_C, DIM_V, INIT_NORMAL, true},
    {"position_embd.weight", offsetof(struct gpt_model, wpe),   DIM_C, DIM_T, INIT_NORMAL, true},
    {"output_norm.weight",   offsetof(struct gpt_model, lnf_w), DIM_C, DIM_1, INIT_ONES,   false},
};
static const struct gpt_param_desc layer_params[] = {
    {"ln1.weight",       offsetof(struct gpt_layer, ln1_w),     DIM_C,  DIM_1,  INIT_ONES,         false},
    {"attn.qkv.weight",  offsetof(struct gpt_layer, attn_qkv),  DIM_C,  DIM_E,  INIT_NORMAL,       true},
    {"attn.proj.weight", offsetof(struct gpt_layer, attn_proj), DIM_C,  DIM_C,  INIT_NORMAL_RESID, true},
    {"ln2.weight",       offsetof(struct gpt_layer, ln2_w),     DIM_C,  DIM_1,  INIT_ONES,         false},
    {"mlp.fc.weight",    offsetof(struct gpt_layer, mlp_fc),    DIM_C,  DIM_4C, INIT_NORMAL,       true},
    {"mlp.proj.weight",  offsetof(struct gpt_layer, mlp_proj),  DIM_4C, DIM_C,  INIT_NORMAL_RESID, true},
};
enum { N_MODEL_PARAMS = sizeof model_params / sizeof model_params[0], N_LAYER_PARAMS = sizeof layer_params / sizeof layer_params[0] };

static int64_t dim_size(const struct gpt_config * c, enum gpt_dim d) {
    const int64_t C = c->n_embd, D = C / c->n_head;
    switch (d) {
        case DIM_1:  return 1;
        case DIM_C:  return C;
        case DIM_E:  return C + 2 * (int64_t) c->n_kv_head * D;
        case DIM_4C: return 4 * C;
        case DIM_V:  return c->n_vocab;
        default:     return c->n_ctx;
    }
}

/* The descriptor of parameter i and, for a layer's, its layer. */
static const struct gpt_param_desc * param_desc(int i, int * layer) {
    *layer = i < N_MODEL_PARAMS ? -1 : (i - N_MODEL_PARAMS) / N_LAYER_PARAMS;
    return i < N_MODEL_PARAMS ? &model_params[i] : &layer_params[(i - N_MODEL_PARAMS) % N_LAYER_PARAMS];
}

/* Creates every parameter (and its moments) in a fresh context; no values yet. */
static bool create_params(struct gpt_model * m, const struct gpt_config * cfg) {
    const char * why = gpt_config_error(cfg);
    if (why) { fprintf(stderr, "error: %s\n", why); return false; }
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->n_params = N_MODEL_PARAMS + N_LAYER_PARAMS * cfg->n_layer;
    int64_t n_floats = 0;
    for (int i = 0, l; i < m->n_params; i++) {
        const struct gpt_param_desc * d = param_desc(i, &l);
        n_floats += 3 * dim_size(cfg, d->ne0) * dim_size(cfg, d->ne1);
    }
    struct ggml_init_params ip = {(size_t) (3 * m->n_params) * (ggml_tensor_overhead() + 64) + (size_t) n_floats * sizeof(float), NULL, false};
    m->ctx = ggml_init(ip);
    m->params = calloc((size_t) m->n_params, sizeof *m->params);
    if (!m->ctx || !m->params) { fprintf(stderr, "error: %s\n", m->ctx ? "out of memory" : ggml_last_error()); gpt_model_free(m); return false; }
    for (int i = 0, l; i < m->n_params; i++) {
        const struct gpt_param_desc * d = param_desc(i, &l);
        const int64_t ne0 = dim_size(cfg, d->ne0), ne1 = dim_size(cfg, d->ne1);
        struct ggml_tensor * t = d->ne1 == DIM_1 ? ggml_new_tensor_1d(m->ctx, GGML_TYPE_F32, ne0) : ggml_new_tensor_2d(m->ctx, GGML_TYPE_F32, ne0, ne1);
        struct ggml_tensor * mt = t ? ggml_dup_tensor(m->ctx, t) : NULL;
        struct ggml_tensor * vt = mt ? ggml_dup_tensor(m->ctx, t) : NULL;
        if (!vt) { fprintf(stderr, "error: %s\n", ggml_last_error()); gpt_model_free(m); return false; }
        char name[GGML_MAX_NAME], aux[GGML_MAX_NAME + 8];
        if (l < 0) snprintf(name, sizeof name, "%s", d->name);
        else snprintf(name, sizeof name, "blk.%d.%s", l, d->name);
        ggml_set_name(t, name);
        snprintf(aux, sizeof aux, "adam_m.%s", name); ggml_set_name(mt, aux);
        snprintf(aux, sizeof aux, "adam_v.%s", name); ggml_set_name(vt, aux);
        ggml_set_zero(mt);
        ggml_set_zero(vt);
        ggml_set_param(t);
        char * owner = l < 0 ? (char *) m : (char *) &m->layers[l];
        *(struct ggml_tensor **) (owner + d->offset) = t;
        m->params[i] = (struct gpt_param) {.w = t, .adam_m = mt, .adam_v = vt, .decays = d->decays};
    }
    return true;
}

bool gpt_model_init(struct gpt_model * m, const struct gpt_config * cfg, uint64_t seed) {
    if (!create_params(m, cfg)) return false;
    uint64_t s = seed;
    const double std = 0.02, std_resid = 0.02 / sqrt(2.0 * cfg->n_layer);
    for (int i = 0, l; i < m->n_params; i++) {
        const struct gpt_param_desc * d = param_desc(i, &l);
        if (d->init == INIT_ONES) fill_const(m->params[i].w, 1.0f);
        else fill_normal(m->params[i].w, d->init == INIT_NORMAL_RESID ? std_resid : std, &s);
    }
    return true;
}

void gpt_model_free(struct gpt_model * m) {
    ggml_free(m->ctx);
    free(m->params);
    m->ctx = NULL;
    m->params = NULL;
}

int64_t gpt_model_n_weights(const struct gpt_model * m) {
    int64_t n = 0;
    for (int i = 0; i < m->n_params; i++) n += ggml_nelements(m->params[i].w);
    return n;
}

/* ---- forward pass ---- */

/* a^T b at the build's precision */
static struct ggml_tensor * product(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, enum ggml_prec prec) {
    struct ggml_tensor * y = ggml_mul_mat(ctx, a, b);
    if (y) ggml_mul_mat_set_prec(y, prec);
    return y;
}

/* Causal self-attention of x [C, T*B]: returns [C, T*B]. q, k, v are views of
 * one projection; heads are laid out [D, T, H, B] as ggml_flash_attn_ext wants. */
static struct ggml_tensor * attention(struct ggml_context * ctx, const struct gpt_model * m, const struct gpt_layer * L,
                                      struct ggml_tensor * x, struct ggml_tensor * mask, int B, int T, const struct gpt_build_opts * o) {
    const int64_t C = m->cfg.n_embd, H = m->cfg.n_head, Hkv = m->cfg.n_kv_head, D = C / H, E = C + 2 * Hkv * D;
    const size_t f = sizeof(float);
    struct ggml_tensor * qkv = product(ctx, L->attn_qkv, x, o->prec);  /* [E, T*B] */
    struct ggml_tensor * q = ggml_view_4d(ctx, qkv, D, H, T, B, D * f, E * f, E * T * f, 0);
    struct ggml_tensor * k = ggml_view_4d(ctx, qkv, D, Hkv, T, B, D * f, E * f, E * T * f, C * f);
    struct ggml_tensor * v = ggml_view_4d(ctx, qkv, D, Hkv, T, B, D * f, E * f, E * T * f, (C + Hkv * D) * f);
    q = ggml_permute(ctx, q, 0, 2, 1, 3);  /* [D, T, H, B] */
    k = ggml_permute(ctx, k, 0, 2, 1, 3);
    const float scale = 1.0f / sqrtf((float) D);
    struct ggml_tensor * y;  /* [D, H, T, B] */
    if (o->fused) {
        y = ggml_flash_attn_ext(ctx, q, k, ggml_permute(ctx, v, 0, 2, 1, 3), mask, scale, 0.0f, 0.0f);
        if (y) ggml_flash_attn_ext_set_prec(y, o->prec);  /* its products (and, by autodiff, its backward's) */
    } else {
        /* scores [T_k, T_q, H, B] = k^T q; probabilities; out [D, T_q, H, B] = v p */
        struct ggml_tensor * p = ggml_soft_max_ext(ctx, product(ctx, k, q, o->prec), mask, scale, 0.0f);
        struct ggml_tensor * vt = ggml_cont(ctx, ggml_permute(ctx, v, 1, 2, 0, 3));  /* [T, D, Hkv, B] */
        y = ggml_cont(ctx, ggml_permute(ctx, product(ctx, vt, p, o->prec), 0, 2, 1, 3));
    }
    y = ggml_reshape_2d(ctx, y, C, (int64_t) T * B);
    return product(ctx, L->attn_proj, y, o->prec);
}

/* LayerNorm without bias: norm(x) * w */
static struct ggml_tensor * layer_norm(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * w) {
    return ggml_mul(ctx, ggml_norm(ctx, x, 1e-5f), w);
}

bool gpt_build(const struct gpt_model * m, struct ggml_context * ctx_io, struct ggml_context * ctx, int B, int T,
               const struct gpt_build_opts * o, struct gpt_graph * out) {
    const int64_t C = m->cfg.n_embd;
    if (T < 1 || T > m->cfg.n_ctx || B < 1) { fprintf(stderr, "error: batch %d x %d does not fit the model (context %d)\n", B, T, m->cfg.n_ctx); return false; }
    out->tokens = ggml_new_tensor_2d(ctx_io, GGML_TYPE_I32, T, B);
    out->targets = ggml_new_tensor_1d(ctx_io, GGML_TYPE_I32, (int64_t) T * B);
    out->mask = ggml_new_tensor_2d(ctx_io, GGML_TYPE_F32, T, T);
    if (!out->tokens || !out->targets || !out->mask) { fprintf(stderr, "error: building the model: %s\n", ggml_last_error()); return false; }
    ggml_set_input(out->tokens); ggml_set_input(out->targets); ggml_set_input(out->mask);
    /* x = wte[tokens] + wpe[0..T) */
    struct ggml_tensor * x = ggml_get_rows(ctx, m->wte, ggml_reshape_1d(ctx, out->tokens, (int64_t) T * B));  /* [C, T*B] */
    struct ggml_tensor * pos = ggml_view_2d(ctx, m->wpe, C, T, m->wpe->nb[1], 0);
    x = ggml_reshape_2d(ctx, ggml_add(ctx, ggml_reshape_3d(ctx, x, C, T, B), pos), C, (int64_t) T * B);
    for (int l = 0; l < m->cfg.n_layer; l++) {
        const struct gpt_layer * L = &m->layers[l];
        x = ggml_add(ctx, x, attention(ctx, m, L, layer_norm(ctx, x, L->ln1_w), out->mask, B, T, o));
        struct ggml_tensor * h = ggml_gelu(ctx, product(ctx, L->mlp_fc, layer_norm(ctx, x, L->ln2_w), o->prec));
        x = ggml_add(ctx, x, product(ctx, L->mlp_proj, h, o->prec));
    }
    out->logits = product(ctx, m->wte, layer_norm(ctx, x, m->lnf_w), o->prec);  /* [V, T*B] */
    out->loss = ggml_cross_entropy_loss(ctx, out->logits, out->targets);
    if (!out->loss) { fprintf(stderr, "error: building the model: %s\n", ggml_last_error()); return false; }
    ggml_set_output(out->logits);
    ggml_set_loss(out->loss);
    return true;
}

void gpt_graph_set_mask(const struct gpt_graph * g) {
    const int64_t T = g->mask->ne[0];
    float * mk = g->mask->data;
    for (int64_t n = 0; n < T; n++)
        for (int64_t j = 0; j < T; j++) mk[n * T + j] = j <= n ? 0.0f : -INFINITY;  /* query n sees keys 0..n */
}

/* ---- checkpoints ---- */

#define KEY_ARCH "general.architecture"
#define ARCH "ggmlr-gpt"

bool gpt_save(const struct gpt_model * m, const char * path, const unsigned char * vocab, int n_vocab,
              struct ggml_tensor * const * adam_m, struct ggml_tensor * const * adam_v, int64_t step) {
    struct gguf_context * g = gguf_init_empty();
    if (!g) { fprintf(stderr, "error: %s\n", ggml_last_error()); return false; }
    gguf_set_val_str(g, KEY_ARCH, ARCH);
    gguf_set_val_u32(g, ARCH ".vocab_size", (uint32_t) m->cfg.n_vocab);
    gguf_set_val_u32(g, ARCH ".context_length", (uint32_t) m->cfg.n_ctx);
    gguf_set_val_u32(g, ARCH ".embedding_length", (uint32_t) m->cfg.n_embd);
    gguf_set_val_u32(g, ARCH ".attention.head_count", (uint32_t) m->cfg.n_head);
    gguf_set_val_u32(g, ARCH ".attention.head_count_kv", (uint32_t) m->cfg.n_kv_head);
    gguf_set_val_u32(g, ARCH ".block_count", (uint32_t) m->cfg.n_layer);
    gguf_set_arr_data(g, ARCH ".vocab", GGUF_TYPE_UINT8, vocab, (size_t) n_vocab);
    for (int i = 0; i < m->n_params; i++) gguf_add_tensor(g, m->params[i].w);
    if (adam_m) {
        gguf_set_val_u64(g, "training.step", (uint64_t) step);
        for (int i = 0; i < m->n_params; i++) { gguf_add_tensor(g, adam_m[i]); gguf_add_tensor(g, adam_v[i]); }
    }
    const bool ok = gguf_write_to_file(g, path, false);
    if (!ok) fprintf(stderr, "error: writing %s: %s\n", path, ggml_last_error());
    gguf_free(g);
    return ok;
}

static bool get_u32(struct gguf_context * g, const char * key, int * out) {
    const int64_t id = gguf_find_key(g, key);
    if (id < 0 || gguf_get_kv_type(g, id) != GGUF_TYPE_UINT32) { fprintf(stderr, "error: checkpoint has no u32 key %s\n", key); return false; }
    const uint32_t v = gguf_get_val_u32(g, id);
    if (v > 1u << 20) { fprintf(stderr, "error: checkpoint key %s = %u is out of range\n", key, v); return false; }
    *out = (int) v;
    return true;
}

/* Copies tensor `name` of the loaded context into dst after checking its shape. */
static bool load_tensor(struct ggml_context * src, const char * name, struct ggml_tensor * dst) {
    const struct ggml_tensor * t = ggml_get_tensor(src, name);
    if (!t || t->type != GGML_TYPE_F32 || !ggml_are_same_shape(t, dst)) {
        fprintf(stderr, "error: checkpoint tensor %s is missing or has the wrong shape or type\n", name);
        return false;
    }
    memcpy(dst->data, t->data, ggml_nbytes(dst));
    return true;
}

bool gpt_load(struct gpt_model * m, const char * path, unsigned char * vocab, int64_t * step) {
    struct ggml_context * data = NULL;
    struct gguf_init_params ip = {false, &data};
    struct gguf_context * g = gguf_init_from_file(path, ip);
    if (!g) { fprintf(stderr, "error: cannot load checkpoint %s: %s\n", path, ggml_last_error()); return false; }
    bool ok = false;
    struct gpt_config cfg;
    const int64_t arch = gguf_find_key(g, KEY_ARCH), vk = gguf_find_key(g, ARCH ".vocab");
    if (arch < 0 || gguf_get_kv_type(g, arch) != GGUF_TYPE_STRING || strcmp(gguf_get_val_str(g, arch), ARCH) != 0) {
        fprintf(stderr, "error: %s is not a " ARCH " checkpoint\n", path);
    } else if (get_u32(g, ARCH ".vocab_size", &cfg.n_vocab) && get_u32(g, ARCH ".context_length", &cfg.n_ctx) &&
               get_u32(g, ARCH ".embedding_length", &cfg.n_embd) && get_u32(g, ARCH ".attention.head_count", &cfg.n_head) &&
               get_u32(g, ARCH ".attention.head_count_kv", &cfg.n_kv_head) && get_u32(g, ARCH ".block_count", &cfg.n_layer)) {
        if (vk < 0 || gguf_get_kv_type(g, vk) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, vk) != GGUF_TYPE_UINT8 ||
            gguf_get_arr_n(g, vk) != (size_t) cfg.n_vocab) {
            fprintf(stderr, "error: checkpoint %s has no vocabulary of %d symbols\n", path, cfg.n_vocab);
        } else if (create_params(m, &cfg)) {
            memcpy(vocab, gguf_get_arr_data(g, vk), (size_t) cfg.n_vocab);
            ok = true;
            for (int i = 0; i < m->n_params && ok; i++) ok = load_tensor(data, ggml_get_name(m->params[i].w), m->params[i].w);
            const int64_t sk = gguf_find_key(g, "training.step");
            *step = 0;
            if (ok && sk >= 0 && gguf_get_kv_type(g, sk) == GGUF_TYPE_UINT64) {
                *step = (int64_t) gguf_get_val_u64(g, sk);
                for (int i = 0; i < m->n_params && ok; i++)
                    ok = load_tensor(data, ggml_get_name(m->params[i].adam_m), m->params[i].adam_m) &&
                         load_tensor(data, ggml_get_name(m->params[i].adam_v), m->params[i].adam_v);
            }
            if (!ok) gpt_model_free(m);
        }
    }
    gguf_free(g);
    ggml_free(data);
    return ok;
}

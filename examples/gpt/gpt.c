/* gpt.c -- the model: parameters, their initialisation, the forward pass
 * (training and sampling share it), and GGUF checkpoints. */
#include "gpt.h"

#include "gguf.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
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

/* Creates every parameter (and its moments) in a fresh context; no values yet. */
static bool create_params(struct gpt_model * m, const struct gpt_config * cfg) {
    const char * why = gpt_config_error(cfg);
    if (why) { fprintf(stderr, "error: %s\n", why); return false; }
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    const int64_t C = cfg->n_embd, D = C / cfg->n_head, E = C + 2 * (int64_t) cfg->n_kv_head * D;
    const int64_t n_tensors = 3 * (4 + 6 * (int64_t) cfg->n_layer);
    const int64_t n_floats = 3 * (C * cfg->n_vocab + C * cfg->n_ctx + C + cfg->n_layer * (2 * C + C * E + C * C + 8 * C * C));
    struct ggml_init_params ip = {(size_t) n_tensors * (ggml_tensor_overhead() + 64) + (size_t) n_floats * sizeof(float), NULL, false};
    m->ctx = ggml_init(ip);
    if (!m->ctx) { fprintf(stderr, "error: %s\n", ggml_last_error()); return false; }
    char name[GGML_MAX_NAME];
    struct ggml_tensor ** slots[4 + 6 * GPT_MAX_LAYERS];
    int64_t shapes[4 + 6 * GPT_MAX_LAYERS][2];
    int n = 0;
    slots[n] = &m->wte;   shapes[n][0] = C; shapes[n][1] = cfg->n_vocab; n++;
    slots[n] = &m->wpe;   shapes[n][0] = C; shapes[n][1] = cfg->n_ctx;   n++;
    slots[n] = &m->lnf_w; shapes[n][0] = C; shapes[n][1] = 1;            n++;
    for (int l = 0; l < cfg->n_layer; l++) {
        struct gpt_layer * L = &m->layers[l];
        slots[n] = &L->ln1_w;     shapes[n][0] = C;     shapes[n][1] = 1;     n++;
        slots[n] = &L->attn_qkv;  shapes[n][0] = C;     shapes[n][1] = E;     n++;
        slots[n] = &L->attn_proj; shapes[n][0] = C;     shapes[n][1] = C;     n++;
        slots[n] = &L->ln2_w;     shapes[n][0] = C;     shapes[n][1] = 1;     n++;
        slots[n] = &L->mlp_fc;    shapes[n][0] = C;     shapes[n][1] = 4 * C; n++;
        slots[n] = &L->mlp_proj;  shapes[n][0] = 4 * C; shapes[n][1] = C;     n++;
    }
    static const char * const layer_names[6] = {"ln1.weight", "attn.qkv.weight", "attn.proj.weight", "ln2.weight", "mlp.fc.weight", "mlp.proj.weight"};
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * t = shapes[i][1] == 1 ? ggml_new_tensor_1d(m->ctx, GGML_TYPE_F32, shapes[i][0])
                                                   : ggml_new_tensor_2d(m->ctx, GGML_TYPE_F32, shapes[i][0], shapes[i][1]);
        struct ggml_tensor * mt = t ? ggml_dup_tensor(m->ctx, t) : NULL;
        struct ggml_tensor * vt = mt ? ggml_dup_tensor(m->ctx, t) : NULL;
        if (!vt) { fprintf(stderr, "error: %s\n", ggml_last_error()); ggml_free(m->ctx); m->ctx = NULL; return false; }
        if (i < 3) snprintf(name, sizeof name, "%s", i == 0 ? "token_embd.weight" : i == 1 ? "position_embd.weight" : "output_norm.weight");
        else snprintf(name, sizeof name, "blk.%d.%s", (i - 3) / 6, layer_names[(i - 3) % 6]);
        ggml_set_name(t, name);
        char aux[GGML_MAX_NAME + 8];
        snprintf(aux, sizeof aux, "adam_m.%s", name); ggml_set_name(mt, aux);
        snprintf(aux, sizeof aux, "adam_v.%s", name); ggml_set_name(vt, aux);
        ggml_set_zero(mt);
        ggml_set_zero(vt);
        ggml_set_param(t);
        *slots[i] = t;
        m->params[i] = t; m->adam_m[i] = mt; m->adam_v[i] = vt;
    }
    m->n_params = n;
    return true;
}

bool gpt_model_init(struct gpt_model * m, const struct gpt_config * cfg, uint64_t seed) {
    if (!create_params(m, cfg)) return false;
    uint64_t s = seed;
    const double std = 0.02, std_resid = 0.02 / sqrt(2.0 * cfg->n_layer);
    for (int i = 0; i < m->n_params; i++) {
        struct ggml_tensor * t = m->params[i];
        if (!gpt_param_decays(m, i)) fill_const(t, 1.0f);  /* LayerNorm gains */
        else {
            const bool resid = i >= 3 && ((i - 3) % 6 == 2 || (i - 3) % 6 == 5);  /* attn.proj, mlp.proj */
            fill_normal(t, resid ? std_resid : std, &s);
        }
    }
    return true;
}

void gpt_model_free(struct gpt_model * m) {
    ggml_free(m->ctx);
    m->ctx = NULL;
}

int64_t gpt_model_n_weights(const struct gpt_model * m) {
    int64_t n = 0;
    for (int i = 0; i < m->n_params; i++) n += ggml_nelements(m->params[i]);
    return n;
}

bool gpt_param_decays(const struct gpt_model * m, int i) { return ggml_n_dims(m->params[i]) >= 2; }

/* ---- forward pass ---- */

/* Causal self-attention of x [C, T*B]: returns [C, T*B]. q, k, v are views of
 * one projection; heads are laid out [D, T, H, B] as ggml_flash_attn_ext wants. */
static struct ggml_tensor * attention(struct ggml_context * ctx, const struct gpt_model * m, const struct gpt_layer * L,
                                      struct ggml_tensor * x, struct ggml_tensor * mask, int B, int T, bool fused) {
    const int64_t C = m->cfg.n_embd, H = m->cfg.n_head, Hkv = m->cfg.n_kv_head, D = C / H, E = C + 2 * Hkv * D;
    const size_t f = sizeof(float);
    struct ggml_tensor * qkv = ggml_mul_mat(ctx, L->attn_qkv, x);  /* [E, T*B] */
    struct ggml_tensor * q = ggml_view_4d(ctx, qkv, D, H, T, B, D * f, E * f, E * T * f, 0);
    struct ggml_tensor * k = ggml_view_4d(ctx, qkv, D, Hkv, T, B, D * f, E * f, E * T * f, C * f);
    struct ggml_tensor * v = ggml_view_4d(ctx, qkv, D, Hkv, T, B, D * f, E * f, E * T * f, (C + Hkv * D) * f);
    q = ggml_permute(ctx, q, 0, 2, 1, 3);  /* [D, T, H, B] */
    k = ggml_permute(ctx, k, 0, 2, 1, 3);
    const float scale = 1.0f / sqrtf((float) D);
    struct ggml_tensor * y;  /* [D, H, T, B] */
    if (fused) {
        y = ggml_flash_attn_ext(ctx, q, k, ggml_permute(ctx, v, 0, 2, 1, 3), mask, scale, 0.0f, 0.0f);
    } else {
        /* scores [T_k, T_q, H, B] = k^T q; probabilities; out [D, T_q, H, B] = v p */
        struct ggml_tensor * p = ggml_soft_max_ext(ctx, ggml_mul_mat(ctx, k, q), mask, scale, 0.0f);
        struct ggml_tensor * vt = ggml_cont(ctx, ggml_permute(ctx, v, 1, 2, 0, 3));  /* [T, D, Hkv, B] */
        y = ggml_cont(ctx, ggml_permute(ctx, ggml_mul_mat(ctx, vt, p), 0, 2, 1, 3));
    }
    y = ggml_reshape_2d(ctx, y, C, (int64_t) T * B);
    return ggml_mul_mat(ctx, L->attn_proj, y);
}

/* LayerNorm without bias: norm(x) * w */
static struct ggml_tensor * layer_norm(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * w) {
    return ggml_mul(ctx, ggml_norm(ctx, x, 1e-5f), w);
}

bool gpt_build(const struct gpt_model * m, struct ggml_context * ctx, int B, int T, bool fused, struct gpt_graph * out) {
    const int64_t C = m->cfg.n_embd;
    if (T < 1 || T > m->cfg.n_ctx || B < 1) { fprintf(stderr, "error: batch %d x %d does not fit the model (context %d)\n", B, T, m->cfg.n_ctx); return false; }
    out->tokens = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, T, B);
    out->targets = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, (int64_t) T * B);
    out->mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, T, T);
    ggml_set_input(out->tokens); ggml_set_input(out->targets); ggml_set_input(out->mask);
    /* x = wte[tokens] + wpe[0..T) */
    struct ggml_tensor * x = ggml_get_rows(ctx, m->wte, ggml_reshape_1d(ctx, out->tokens, (int64_t) T * B));  /* [C, T*B] */
    struct ggml_tensor * pos = ggml_view_2d(ctx, m->wpe, C, T, m->wpe->nb[1], 0);
    x = ggml_reshape_2d(ctx, ggml_add(ctx, ggml_reshape_3d(ctx, x, C, T, B), pos), C, (int64_t) T * B);
    for (int l = 0; l < m->cfg.n_layer; l++) {
        const struct gpt_layer * L = &m->layers[l];
        x = ggml_add(ctx, x, attention(ctx, m, L, layer_norm(ctx, x, L->ln1_w), out->mask, B, T, fused));
        struct ggml_tensor * h = ggml_gelu(ctx, ggml_mul_mat(ctx, L->mlp_fc, layer_norm(ctx, x, L->ln2_w)));
        x = ggml_add(ctx, x, ggml_mul_mat(ctx, L->mlp_proj, h));
    }
    out->logits = ggml_mul_mat(ctx, m->wte, layer_norm(ctx, x, m->lnf_w));  /* [V, T*B] */
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

bool gpt_save(const struct gpt_model * m, const char * path, const unsigned char * vocab, int n_vocab, bool with_optimizer, int64_t step) {
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
    for (int i = 0; i < m->n_params; i++) gguf_add_tensor(g, m->params[i]);
    if (with_optimizer) {
        gguf_set_val_u64(g, "training.step", (uint64_t) step);
        for (int i = 0; i < m->n_params; i++) { gguf_add_tensor(g, m->adam_m[i]); gguf_add_tensor(g, m->adam_v[i]); }
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
            for (int i = 0; i < m->n_params && ok; i++) ok = load_tensor(data, ggml_get_name(m->params[i]), m->params[i]);
            const int64_t sk = gguf_find_key(g, "training.step");
            *step = 0;
            if (ok && sk >= 0 && gguf_get_kv_type(g, sk) == GGUF_TYPE_UINT64) {
                *step = (int64_t) gguf_get_val_u64(g, sk);
                for (int i = 0; i < m->n_params && ok; i++)
                    ok = load_tensor(data, ggml_get_name(m->adam_m[i]), m->adam_m[i]) && load_tensor(data, ggml_get_name(m->adam_v[i]), m->adam_v[i]);
            }
            if (!ok) gpt_model_free(m);
        }
    }
    gguf_free(g);
    ggml_free(data);
    return ok;
}

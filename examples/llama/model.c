/* model.c -- loading a llama-family GGUF: llama.cpp's keys
 * (<arch>.embedding_length, ...) and tensor names (token_embd, blk.N.attn_q,
 * ...), every shape checked against the hyper-parameters. */
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char * const mat_names[LLAMA_N_MAT] = {
    [LLAMA_Q] = "attn_q", [LLAMA_K] = "attn_k", [LLAMA_V] = "attn_v", [LLAMA_O] = "attn_output",
    [LLAMA_GATE] = "ffn_gate", [LLAMA_UP] = "ffn_up", [LLAMA_DOWN] = "ffn_down",
};

const char * llama_mat_name(enum llama_mat m) { return m < LLAMA_N_MAT ? mat_names[m] : "?"; }

/* A positive u32 key <arch>.<key> (or a default when dflt >= 0 and the key is absent). */
static bool get_int(const struct gguf_context * g, const char * arch, const char * key, int dflt, int * out) {
    char name[128];
    snprintf(name, sizeof name, "%s.%s", arch, key);
    const int64_t id = gguf_find_key(g, name);
    if (id < 0 && dflt >= 0) { *out = dflt; return true; }
    if (id < 0) { fprintf(stderr, "error: the model has no key %s\n", name); return false; }
    const enum gguf_type t = gguf_get_kv_type(g, id);
    uint64_t v;
    if (t == GGUF_TYPE_UINT32) v = gguf_get_val_u32(g, id);
    else if (t == GGUF_TYPE_INT32 && gguf_get_val_i32(g, id) >= 0) v = (uint64_t) gguf_get_val_i32(g, id);
    else if (t == GGUF_TYPE_UINT64) v = gguf_get_val_u64(g, id);
    else { fprintf(stderr, "error: key %s is not an unsigned integer\n", name); return false; }
    if (v < 1 || v > (1u << 24)) { fprintf(stderr, "error: key %s = %llu is out of range\n", name, (unsigned long long) v); return false; }
    *out = (int) v;
    return true;
}

static bool get_float(const struct gguf_context * g, const char * arch, const char * key, float dflt, float * out) {
    char name[128];
    snprintf(name, sizeof name, "%s.%s", arch, key);
    const int64_t id = gguf_find_key(g, name);
    if (id < 0) { *out = dflt; return true; }
    if (gguf_get_kv_type(g, id) != GGUF_TYPE_FLOAT32) { fprintf(stderr, "error: key %s is not a float32\n", name); return false; }
    *out = gguf_get_val_f32(g, id);
    if (!(*out > 0.0f)) { fprintf(stderr, "error: key %s = %g must be positive\n", name, (double) *out); return false; }
    return true;
}

static bool read_hparams(const struct gguf_context * g, struct llama_hparams * hp) {
    const int64_t id = gguf_find_key(g, "general.architecture");
    if (id < 0 || gguf_get_kv_type(g, id) != GGUF_TYPE_STRING) { fprintf(stderr, "error: the file has no general.architecture\n"); return false; }
    const char * arch = gguf_get_val_str(g, id);
    if (strcmp(arch, "llama") != 0 && strcmp(arch, "qwen2") != 0) {
        fprintf(stderr, "error: architecture '%s' is not supported (llama, qwen2)\n", arch);
        return false;
    }
    memset(hp, 0, sizeof *hp);
    snprintf(hp->arch, sizeof hp->arch, "%s", arch);
    hp->rope_mode = strcmp(arch, "qwen2") == 0 ? GGML_ROPE_TYPE_NEOX : GGML_ROPE_TYPE_NORMAL;
    if (!get_int(g, arch, "context_length", -1, &hp->n_ctx) || !get_int(g, arch, "embedding_length", -1, &hp->n_embd) ||
        !get_int(g, arch, "feed_forward_length", -1, &hp->n_ff) || !get_int(g, arch, "block_count", -1, &hp->n_layer) ||
        !get_int(g, arch, "attention.head_count", -1, &hp->n_head) ||
        !get_int(g, arch, "attention.head_count_kv", hp->n_head, &hp->n_head_kv) ||
        !get_float(g, arch, "rope.freq_base", 10000.0f, &hp->rope_base) ||
        !get_float(g, arch, "attention.layer_norm_rms_epsilon", 1e-5f, &hp->rms_eps))
        return false;
    if (hp->n_layer > LLAMA_MAX_LAYERS) { fprintf(stderr, "error: %d layers (at most %d)\n", hp->n_layer, LLAMA_MAX_LAYERS); return false; }
    if (hp->n_embd % hp->n_head != 0 || hp->n_head % hp->n_head_kv != 0) {
        fprintf(stderr, "error: embedding_length %d, head_count %d and head_count_kv %d do not divide\n", hp->n_embd, hp->n_head, hp->n_head_kv);
        return false;
    }
    const int head_dim = hp->n_embd / hp->n_head;
    if (!get_int(g, arch, "rope.dimension_count", head_dim, &hp->n_rot)) return false;
    if (hp->n_rot > head_dim || hp->n_rot % 2 != 0) { fprintf(stderr, "error: rope.dimension_count %d does not fit head size %d\n", hp->n_rot, head_dim); return false; }
    return true;
}

/* Tensor `name` of the file with shape [ne0, ne1] (ne1 = 1: a vector); NULL
 * with a message when it is missing (unless optional) or shaped otherwise. */
static struct ggml_tensor * want(const struct llama_model * m, const char * name, int64_t ne0, int64_t ne1, bool optional, bool * ok) {
    struct ggml_tensor * t = ggml_get_tensor(m->ctx, name);
    if (!t) {
        if (!optional && *ok) fprintf(stderr, "error: the model has no tensor %s\n", name);
        if (!optional) *ok = false;
        return NULL;
    }
    if (t->ne[0] != ne0 || t->ne[1] != ne1 || t->ne[2] != 1 || t->ne[3] != 1) {
        if (*ok) fprintf(stderr, "error: tensor %s is [%lld, %lld, %lld, %lld], the hyper-parameters say [%lld, %lld]\n", name,
                         (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2], (long long) t->ne[3], (long long) ne0, (long long) ne1);
        *ok = false;
        return NULL;
    }
    return t;
}

bool llama_model_load(struct llama_model * m, const char * path) {
    memset(m, 0, sizeof *m);
    struct gguf_init_params ip = {.no_alloc = false, .ctx = &m->ctx};
    m->gguf = gguf_init_from_file(path, ip);
    if (!m->gguf) { fprintf(stderr, "error: cannot load %s: %s\n", path, ggml_last_error()); return false; }
    struct llama_hparams * hp = &m->hp;
    bool ok = read_hparams(m->gguf, hp);
    if (ok) {
        /* the vocabulary size is token_embd's row count */
        m->tok_embd = ggml_get_tensor(m->ctx, "token_embd.weight");
        if (!m->tok_embd) { fprintf(stderr, "error: the model has no tensor token_embd.weight\n"); ok = false; }
        else if (m->tok_embd->ne[0] != hp->n_embd || m->tok_embd->ne[2] != 1 || m->tok_embd->ne[3] != 1) {
            fprintf(stderr, "error: token_embd.weight has rows of %lld, embedding_length is %d\n", (long long) m->tok_embd->ne[0], hp->n_embd);
            ok = false;
        } else hp->n_vocab = (int) m->tok_embd->ne[1];
    }
    if (!ok) { llama_model_free(m); return false; }
    const int64_t C = hp->n_embd, V = hp->n_vocab, D = C / hp->n_head, Ckv = D * hp->n_head_kv, F = hp->n_ff;
    m->output_norm = want(m, "output_norm.weight", C, 1, false, &ok);
    m->output = want(m, "output.weight", C, V, true, &ok);
    if (!m->output) m->output = m->tok_embd;  /* tied output */
    const int64_t shape[LLAMA_N_MAT][2] = {
        [LLAMA_Q] = {C, C}, [LLAMA_K] = {C, Ckv}, [LLAMA_V] = {C, Ckv}, [LLAMA_O] = {C, C},
        [LLAMA_GATE] = {C, F}, [LLAMA_UP] = {C, F}, [LLAMA_DOWN] = {F, C},
    };
    const bool biases = strcmp(hp->arch, "qwen2") == 0;
    for (int l = 0; l < hp->n_layer && ok; l++) {
        struct llama_layer * L = &m->layers[l];
        char name[GGML_MAX_NAME];
        snprintf(name, sizeof name, "blk.%d.attn_norm.weight", l); L->attn_norm = want(m, name, C, 1, false, &ok);
        snprintf(name, sizeof name, "blk.%d.ffn_norm.weight", l);  L->ffn_norm = want(m, name, C, 1, false, &ok);
        for (int k = 0; k < LLAMA_N_MAT; k++) {
            snprintf(name, sizeof name, "blk.%d.%s.weight", l, mat_names[k]);
            L->w[k] = want(m, name, shape[k][0], shape[k][1], false, &ok);
        }
        if (biases) {
            snprintf(name, sizeof name, "blk.%d.attn_q.bias", l); L->bq = want(m, name, C, 1, false, &ok);
            snprintf(name, sizeof name, "blk.%d.attn_k.bias", l); L->bk = want(m, name, Ckv, 1, false, &ok);
            snprintf(name, sizeof name, "blk.%d.attn_v.bias", l); L->bv = want(m, name, Ckv, 1, false, &ok);
        }
    }
    if (ok && (m->output_norm->type != GGML_TYPE_F32)) { fprintf(stderr, "error: output_norm.weight must be F32\n"); ok = false; }
    for (int l = 0; l < hp->n_layer && ok; l++)
        if (m->layers[l].attn_norm->type != GGML_TYPE_F32 || m->layers[l].ffn_norm->type != GGML_TYPE_F32 ||
            (m->layers[l].bq && (m->layers[l].bq->type != GGML_TYPE_F32 || m->layers[l].bk->type != GGML_TYPE_F32 || m->layers[l].bv->type != GGML_TYPE_F32))) {
            fprintf(stderr, "error: the norms and biases of block %d must be F32\n", l);
            ok = false;
        }
    if (!ok) { llama_model_free(m); return false; }
    return true;
}

void llama_model_free(struct llama_model * m) {
    if (m->gguf) gguf_free(m->gguf);
    ggml_free(m->ctx_f32);
    ggml_free(m->ctx);
    memset(m, 0, sizeof *m);
}

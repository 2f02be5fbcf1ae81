/* lora.c -- LoRA adapters: W x + (alpha/r) B (A x) with A [n_in, r] and
 * B [r, n_out] (llama.cpp's lora_a / lora_b), new ones initialised as
 * LoRA's paper does (A random, B zero, so training starts from the base
 * model), and their GGUF in llama.cpp's adapter format. */
#include "llama.h"

#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The adapter tensors of matrix k of layer l (no data yet). */
static bool create_pair(struct llama_lora * l, const struct llama_model * m, int layer, int k, int rank) {
    const struct ggml_tensor * w = m->layers[layer].w[k];
    struct ggml_tensor * a = ggml_new_tensor_2d(l->ctx, GGML_TYPE_F32, w->ne[0], rank);
    struct ggml_tensor * b = ggml_new_tensor_2d(l->ctx, GGML_TYPE_F32, rank, w->ne[1]);
    if (!a || !b) { fprintf(stderr, "error: LoRA tensors: %s\n", ggml_last_error()); return false; }
    ggml_format_name(a, "blk.%d.%s.weight.lora_a", layer, llama_mat_name((enum llama_mat) k));
    ggml_format_name(b, "blk.%d.%s.weight.lora_b", layer, llama_mat_name((enum llama_mat) k));
    l->a[layer][k] = a;
    l->b[layer][k] = b;
    return true;
}

static bool create(struct llama_lora * l, const struct llama_model * m, int rank, float alpha, unsigned mats) {
    memset(l, 0, sizeof *l);
    if (rank < 1 || mats == 0 || (mats & ~LLAMA_LORA_ALL) || !(alpha > 0.0f)) {
        fprintf(stderr, "error: a LoRA needs a rank >= 1, alpha > 0 and some matrices\n");
        return false;
    }
    l->rank = rank;
    l->alpha = alpha;
    l->mats = mats;
    size_t floats = 0, n = 0;
    for (int layer = 0; layer < m->hp.n_layer; layer++)
        for (int k = 0; k < LLAMA_N_MAT; k++)
            if (mats & (1u << k)) { floats += (size_t) rank * (size_t) (m->layers[layer].w[k]->ne[0] + m->layers[layer].w[k]->ne[1]); n += 2; }
    struct ggml_init_params ip = {.mem_size = n * (ggml_tensor_overhead() + 64) + floats * sizeof(float), .mem_buffer = NULL, .no_alloc = false};
    l->ctx = ggml_init(ip);
    if (!l->ctx) { fprintf(stderr, "error: LoRA: %s\n", ggml_last_error()); return false; }
    for (int layer = 0; layer < m->hp.n_layer; layer++)
        for (int k = 0; k < LLAMA_N_MAT; k++)
            if ((mats & (1u << k)) && !create_pair(l, m, layer, k, rank)) { llama_lora_free(l); return false; }
    return true;
}

bool llama_lora_init(struct llama_lora * l, const struct llama_model * m, int rank, float alpha, unsigned mats, uint64_t seed) {
    if (!create(l, m, rank, alpha, mats)) return false;
    uint64_t s = seed;
    const double std = 1.0 / sqrt((double) rank);
    for (int layer = 0; layer < m->hp.n_layer; layer++)
        for (int k = 0; k < LLAMA_N_MAT; k++) {
            if (!l->a[layer][k]) continue;
            float * a = l->a[layer][k]->data;
            for (int64_t i = 0; i < ggml_nelements(l->a[layer][k]); i++) {  /* Box-Muller */
                const double r = sqrt(-2.0 * log(rng_uniform(&s))), t = 2.0 * M_PI * rng_uniform(&s);
                a[i] = (float) (std * r * cos(t));
            }
            memset(l->b[layer][k]->data, 0, ggml_nbytes(l->b[layer][k]));
        }
    return true;
}

void llama_lora_free(struct llama_lora * l) {
    ggml_free(l->ctx);
    memset(l, 0, sizeof *l);
}

bool llama_lora_save(const struct llama_lora * l, const struct llama_model * m, const char * path) {
    struct gguf_context * g = gguf_init_empty();
    if (!g) { fprintf(stderr, "error: %s\n", ggml_last_error()); return false; }
    gguf_set_val_str(g, "general.architecture", m->hp.arch);
    gguf_set_val_str(g, "general.type", "adapter");
    gguf_set_val_str(g, "adapter.type", "lora");
    gguf_set_val_f32(g, "adapter.lora.alpha", l->alpha);
    for (int layer = 0; layer < m->hp.n_layer; layer++)
        for (int k = 0; k < LLAMA_N_MAT; k++)
            if (l->a[layer][k]) { gguf_add_tensor(g, l->a[layer][k]); gguf_add_tensor(g, l->b[layer][k]); }
    const bool ok = gguf_write_to_file(g, path, false);
    if (!ok) fprintf(stderr, "error: writing %s: %s\n", path, ggml_last_error());
    gguf_free(g);
    return ok;
}

static bool key_is(const struct gguf_context * g, const char * key, const char * want, const char * path) {
    const int64_t id = gguf_find_key(g, key);
    if (id >= 0 && gguf_get_kv_type(g, id) == GGUF_TYPE_STRING && strcmp(gguf_get_val_str(g, id), want) == 0) return true;
    fprintf(stderr, "error: %s: %s is not '%s'\n", path, key, want);
    return false;
}

/* The layer and matrix of "blk.N.<mat>.weight.lora_a"; false for another name. */
static bool parse_name(const char * name, int n_layer, int * layer, int * k) {
    char mat[32], tail[16];
    int used = 0;
    if (sscanf(name, "blk.%d.%31[a-z_].weight.%15[a-z_]%n", layer, mat, tail, &used) != 3 || name[used] != '\0') return false;
    if (*layer < 0 || *layer >= n_layer || strcmp(tail, "lora_a") != 0) return false;
    for (*k = 0; *k < LLAMA_N_MAT; (*k)++) if (strcmp(mat, llama_mat_name((enum llama_mat) *k)) == 0) return true;
    return false;
}

bool llama_lora_load(struct llama_lora * l, const struct llama_model * m, const char * path) {
    memset(l, 0, sizeof *l);
    struct ggml_context * data = NULL;
    struct gguf_init_params ip = {.no_alloc = false, .ctx = &data};
    struct gguf_context * g = gguf_init_from_file(path, ip);
    if (!g) { fprintf(stderr, "error: cannot load %s: %s\n", path, ggml_last_error()); return false; }
    bool ok = key_is(g, "general.type", "adapter", path) && key_is(g, "adapter.type", "lora", path) &&
              key_is(g, "general.architecture", m->hp.arch, path);
    /* the adapters present, and their rank (one for all, here) */
    unsigned mats = 0;
    int rank = 0;
    for (int64_t i = 0; ok && i < gguf_get_n_tensors(g); i++) {
        const char * name = gguf_get_tensor_name(g, i);
        const size_t len = strlen(name);
        int layer, k;
        if ((len > 7 && strcmp(name + len - 7, ".lora_b") == 0) || strncmp(name, "adam_", 5) == 0) continue;  /* B: with its A; moments: a checkpoint's */
        if (!parse_name(name, m->hp.n_layer, &layer, &k)) { fprintf(stderr, "error: %s: tensor %s is not blk.N.<matrix>.weight.lora_a/_b of this model\n", path, name); ok = false; break; }
        const struct ggml_tensor * a = ggml_get_tensor(data, name);
        mats |= 1u << k;
        if (rank == 0) rank = (int) a->ne[1];
    }
    const int64_t alpha_id = ok ? gguf_find_key(g, "adapter.lora.alpha") : -1;
    /* llama.cpp: without alpha the scale is 1, i.e. alpha = r */
    float alpha = (float) rank;
    if (alpha_id >= 0) {
        if (gguf_get_kv_type(g, alpha_id) != GGUF_TYPE_FLOAT32) { fprintf(stderr, "error: %s: adapter.lora.alpha is not a float32\n", path); ok = false; }
        else alpha = gguf_get_val_f32(g, alpha_id);
    }
    if (ok && rank == 0) { fprintf(stderr, "error: %s holds no LoRA tensors\n", path); ok = false; }
    ok = ok && create(l, m, rank, alpha, mats);
    /* every layer of an adapted matrix must be in the file, with llama.cpp's shapes */
    for (int layer = 0; ok && layer < m->hp.n_layer; layer++)
        for (int k = 0; ok && k < LLAMA_N_MAT; k++) {
            if (!l->a[layer][k]) continue;
            for (int ab = 0; ab < 2 && ok; ab++) {
                struct ggml_tensor * dst = ab ? l->b[layer][k] : l->a[layer][k];
                const struct ggml_tensor * src = ggml_get_tensor(data, ggml_get_name(dst));
                if (!src || src->type != GGML_TYPE_F32 || !ggml_are_same_shape(src, dst)) {
                    fprintf(stderr, "error: %s: %s is missing, not F32 or not [%lld, %lld]\n", path, ggml_get_name(dst), (long long) dst->ne[0], (long long) dst->ne[1]);
                    ok = false;
                } else memcpy(dst->data, src->data, ggml_nbytes(dst));
            }
        }
    if (!ok && l->ctx) llama_lora_free(l);
    gguf_free(g);
    ggml_free(data);
    return ok;
}

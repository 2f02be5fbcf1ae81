/* lora_merge.c -- the merged model: the base GGUF with each adapted matrix
 * replaced by W' = W + (alpha/r) B A in W's own type (F32/F16/BF16 stored
 * as such, a quantized W re-quantized to its type), every other tensor and
 * every key copied unchanged. With A [n_in, r] and B [r, n_out] (rows of
 * ne0), W'[o][i] = W[o][i] + (alpha/r) sum_k B[o][k] A[k][i], summed in
 * double and rounded once. */
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>

bool llama_lora_merge_check(const struct llama_model * m, const struct llama_lora * l) {
    for (int layer = 0; layer < m->hp.n_layer; layer++)
        for (int k = 0; k < LLAMA_N_MAT; k++)
            if (l->a[layer][k] && !llama_type_storable(m->layers[layer].w[k]->type, ggml_get_name(m->layers[layer].w[k]))) return false;
    return true;
}

struct merge {
    const struct llama_model * m;
    const struct llama_lora * l;
};

/* W + (alpha/r) B A for the adapted matrix w of layer, k, made in ctx; NULL on failure */
static struct ggml_tensor * merged(const struct merge * mg, struct ggml_context * ctx, int layer, int k) {
    const struct ggml_tensor * w = mg->m->layers[layer].w[k], * a = mg->l->a[layer][k], * b = mg->l->b[layer][k];
    const int64_t n_in = w->ne[0], n_out = w->ne[1], r = mg->l->rank;
    const double s = (double) mg->l->alpha / (double) r;
    const float * A = a->data, * B = b->data;
    float * x = malloc(sizeof(float) * (size_t) (n_in * n_out));
    double * acc = malloc(sizeof(double) * (size_t) n_in);
    struct ggml_tensor * out = NULL;
    if (x && acc && llama_tensor_to_f32(w, x)) {
        for (int64_t o = 0; o < n_out; o++) {
            for (int64_t i = 0; i < n_in; i++) acc[i] = 0.0;
            for (int64_t j = 0; j < r; j++) {
                const double bj = B[o * r + j];
                for (int64_t i = 0; i < n_in; i++) acc[i] += bj * A[j * n_in + i];
            }
            for (int64_t i = 0; i < n_in; i++) x[o * n_in + i] = (float) ((double) x[o * n_in + i] + s * acc[i]);
        }
        out = llama_tensor_from_f32(ctx, w, w->type, x);
    } else if (!x || !acc) fprintf(stderr, "error: out of memory merging %s\n", ggml_get_name(w));
    free(x);
    free(acc);
    return out;
}

static struct ggml_tensor * replace(void * ud, struct ggml_context * ctx, struct ggml_tensor * t) {
    const struct merge * mg = ud;
    for (int layer = 0; layer < mg->m->hp.n_layer; layer++)
        for (int k = 0; k < LLAMA_N_MAT; k++)
            if (mg->m->layers[layer].w[k] == t) return mg->l->a[layer][k] ? merged(mg, ctx, layer, k) : t;
    return t;
}

bool llama_lora_merge(const struct llama_model * m, const struct llama_lora * l, const char * path) {
    if (!llama_lora_merge_check(m, l)) return false;
    struct merge mg = {.m = m, .l = l};
    return llama_model_write(m, path, replace, &mg);
}

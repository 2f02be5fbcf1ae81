/* train_full.c -- full fine-tuning / pre-training: every weight of the model
 * is a parameter. AdamW (ggml-opt) updates F32 tensors, so F16 and BF16
 * weights are trained as F32 master copies (kept in a context of the
 * model's own, the model's pointers moved to them) and rounded back to
 * their stored type only when the model is written; checkpoints hold the F32
 * copies, so a resumed run is bitwise the uninterrupted one. Quantized
 * weights cannot be trained (refused, naming the tensor). */
#include "llama.h"

#include <stdio.h>

int llama_model_weights(const struct llama_model * m, struct ggml_tensor ** out) {
    int n = 0;
    out[n++] = m->tok_embd;
    if (m->output != m->tok_embd) out[n++] = m->output;  /* tied: one tensor */
    out[n++] = m->output_norm;
    for (int l = 0; l < m->hp.n_layer; l++) {
        const struct llama_layer * L = &m->layers[l];
        out[n++] = L->attn_norm;
        out[n++] = L->ffn_norm;
        for (int k = 0; k < LLAMA_N_MAT; k++) out[n++] = L->w[k];
        if (L->bq) { out[n++] = L->bq; out[n++] = L->bk; out[n++] = L->bv; }
    }
    return n;
}

/* Every pointer of m that holds `from` now holds `to`. */
static void repoint(struct llama_model * m, const struct ggml_tensor * from, struct ggml_tensor * to) {
    struct ggml_tensor ** fields[3] = {&m->tok_embd, &m->output, &m->output_norm};
    for (int i = 0; i < 3; i++) if (*fields[i] == from) *fields[i] = to;
    for (int l = 0; l < m->hp.n_layer; l++) {
        struct llama_layer * L = &m->layers[l];
        struct ggml_tensor ** lf[5] = {&L->attn_norm, &L->ffn_norm, &L->bq, &L->bk, &L->bv};
        for (int i = 0; i < 5; i++) if (*lf[i] == from) *lf[i] = to;
        for (int k = 0; k < LLAMA_N_MAT; k++) if (L->w[k] == from) L->w[k] = to;
    }
}

bool llama_model_make_trainable(struct llama_model * m) {
    struct ggml_tensor * w[LLAMA_MAX_WEIGHTS];
    const int n = llama_model_weights(m, w);
    size_t bytes = 0;
    for (int i = 0; i < n; i++) {
        if (w[i]->type != GGML_TYPE_F32 && w[i]->type != GGML_TYPE_F16 && w[i]->type != GGML_TYPE_BF16) {
            fprintf(stderr, "error: %s is %s: full training needs F32, F16 or BF16 weights (train a LoRA on a quantized model)\n",
                    ggml_get_name(w[i]), ggml_type_name(w[i]->type));
            return false;
        }
        if (w[i]->type != GGML_TYPE_F32) bytes += (size_t) ggml_nelements(w[i]) * sizeof(float) + 64;
    }
    if (bytes == 0) return true;  /* all F32: trained in place */
    struct ggml_init_params ip = {.mem_size = (size_t) n * ggml_tensor_overhead() + bytes, .mem_buffer = NULL, .no_alloc = false};
    m->ctx_f32 = ggml_init(ip);
    if (!m->ctx_f32) { fprintf(stderr, "error: the F32 copies of the weights: %s\n", ggml_last_error()); return false; }
    for (int i = 0; i < n; i++) {
        if (w[i]->type == GGML_TYPE_F32) continue;
        struct ggml_tensor * f = ggml_new_tensor(m->ctx_f32, GGML_TYPE_F32, GGML_MAX_DIMS, w[i]->ne);
        if (!f || !llama_tensor_to_f32(w[i], f->data)) { fprintf(stderr, "error: %s: %s\n", ggml_get_name(w[i]), ggml_last_error()); return false; }
        ggml_set_name(f, ggml_get_name(w[i]));
        repoint(m, w[i], f);
    }
    return true;
}

/* The trained value of the file's tensor t: its F32 copy, or t itself. */
static struct ggml_tensor * trained(const struct llama_model * m, struct ggml_tensor * t) {
    struct ggml_tensor * f = m->ctx_f32 ? ggml_get_tensor(m->ctx_f32, ggml_get_name(t)) : NULL;
    return f ? f : t;
}

/* the trained value rounded to the file's type */
static struct ggml_tensor * in_stored_type(void * ud, struct ggml_context * ctx, struct ggml_tensor * t) {
    struct ggml_tensor * f = trained(ud, t);
    return f == t ? t : llama_tensor_from_f32(ctx, t, t->type, f->data);
}

bool llama_model_save_trained(const struct llama_model * m, const char * path) {
    return llama_model_write(m, path, in_stored_type, (void *) m);
}

static struct ggml_tensor * as_trained(void * ud, struct ggml_context * ctx, struct ggml_tensor * t) {
    (void) ctx;  /* nothing new: the F32 tensors themselves */
    return trained(ud, t);
}

struct gguf_context * llama_model_gguf_f32(const struct llama_model * m) {
    return llama_model_gguf(m, NULL, as_trained, (void *) m);
}

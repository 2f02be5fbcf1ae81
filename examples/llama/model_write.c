/* model_write.c -- writing a model GGUF that is the loaded file with some
 * tensors replaced: every key copied, the tensors in the file's order, each
 * the file's own or the caller's replacement (same name and shape); and
 * float values stored in a tensor type (F32 as is, F16/BF16 rounded, a
 * quantized type re-quantized with ggml_quantize_chunk). Shared by the
 * merged model (lora_merge.c) and full fine-tuning (train_full.c). */
#include "llama.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool llama_type_storable(enum ggml_type type, const char * name) {
    const struct ggml_type_traits * tt = ggml_get_type_traits(type);
    if (type == GGML_TYPE_F32 || (tt && tt->from_float_ref && tt->to_float && !ggml_quantize_requires_imatrix(type))) return true;
    fprintf(stderr, "error: %s is %s, which cannot be written back from floats (%s)\n", name, ggml_type_name(type),
            ggml_quantize_requires_imatrix(type) ? "it needs an importance matrix" : "no quantizer");
    return false;
}

struct ggml_tensor * llama_tensor_from_f32(struct ggml_context * ctx, const struct ggml_tensor * like, enum ggml_type type, const float * x) {
    struct ggml_tensor * t = ggml_new_tensor(ctx, type, GGML_MAX_DIMS, like->ne);
    if (!t) { fprintf(stderr, "error: %s: %s\n", ggml_get_name(like), ggml_last_error()); return NULL; }
    ggml_set_name(t, ggml_get_name(like));
    if (ggml_quantize_chunk(type, x, t->data, 0, ggml_nrows(like), like->ne[0], NULL) == 0) {
        fprintf(stderr, "error: %s: %s\n", ggml_get_name(like), ggml_last_error());
        return NULL;
    }
    return t;
}

bool llama_tensor_to_f32(const struct ggml_tensor * t, float * out) {
    if (t->type == GGML_TYPE_F32) { memcpy(out, t->data, ggml_nbytes(t)); return true; }
    const struct ggml_type_traits * tt = ggml_get_type_traits(t->type);
    if (!tt || !tt->to_float) { fprintf(stderr, "error: %s: type %s has no conversion to floats\n", ggml_get_name(t), ggml_type_name(t->type)); return false; }
    tt->to_float(t->data, out, ggml_nelements(t));
    return true;
}

struct gguf_context * llama_model_gguf(const struct llama_model * m, struct ggml_context * ctx, llama_replace_fn replace, void * ud) {
    struct gguf_context * g = gguf_init_empty();
    if (!g) { fprintf(stderr, "error: %s\n", ggml_last_error()); return NULL; }
    gguf_set_kv(g, m->gguf);
    for (int64_t i = 0; i < gguf_get_n_tensors(m->gguf); i++) {
        struct ggml_tensor * t = ggml_get_tensor(m->ctx, gguf_get_tensor_name(m->gguf, i));
        struct ggml_tensor * w = t ? replace(ud, ctx, t) : NULL;
        if (!w) { gguf_free(g); return NULL; }
        gguf_add_tensor(g, w);
    }
    return g;
}

bool llama_model_write(const struct llama_model * m, const char * path, llama_replace_fn replace, void * ud) {
    size_t bytes = 0;
    const int64_t n = gguf_get_n_tensors(m->gguf);
    for (int64_t i = 0; i < n; i++) bytes += gguf_get_tensor_size(m->gguf, i) + GGML_MEM_ALIGN;
    /* pages only the replacements touch are used */
    struct ggml_init_params ip = {.mem_size = (size_t) n * ggml_tensor_overhead() + bytes, .mem_buffer = NULL, .no_alloc = false};
    struct ggml_context * ctx = ggml_init(ip);
    if (!ctx) { fprintf(stderr, "error: %s\n", ggml_last_error()); return false; }
    struct gguf_context * g = llama_model_gguf(m, ctx, replace, ud);
    const bool ok = g && llama_gguf_write(g, path);
    if (g) gguf_free(g);
    ggml_free(ctx);
    return ok;
}

bool llama_gguf_write(struct gguf_context * g, const char * path) {
    if (gguf_write_to_file(g, path, false)) return true;
    fprintf(stderr, "error: writing %s: %s\n", path, ggml_last_error());
    unlink(path);  /* no partial file */
    return false;
}

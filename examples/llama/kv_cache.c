/* kv_cache.c -- inference: a cache of every layer's keys and values (F32,
 * one row per position), so that a prompt is processed in one batch and
 * each further token costs one token's forward pass, the prefix read from
 * the cache instead of recomputed. */
#include "llama.h"

#include "ggml-cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool llama_session_init(struct llama_session * s, const struct llama_model * m, const struct llama_lora * lora, int n_ctx, int threads) {
    memset(s, 0, sizeof *s);
    s->model = m;
    s->lora = lora;
    const struct llama_hparams * hp = &m->hp;
    if (n_ctx < 1 || n_ctx > hp->n_ctx) { fprintf(stderr, "error: a context of %d tokens (the model's is %d)\n", n_ctx, hp->n_ctx); return false; }
    const int64_t Ckv = (int64_t) hp->n_embd / hp->n_head * hp->n_head_kv;
    struct ggml_init_params ip = {.mem_size = (size_t) (2 * hp->n_layer) * (ggml_tensor_overhead() + (size_t) (Ckv * n_ctx) * sizeof(float) + 64),
                                  .mem_buffer = NULL, .no_alloc = false};
    s->kv.ctx = ggml_init(ip);
    s->kv.n_ctx = n_ctx;
    s->backend = ggml_backend_cpu_init();
    s->galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    if (!s->kv.ctx || !s->backend || !s->galloc) { fprintf(stderr, "error: the KV cache: %s\n", ggml_last_error()); llama_session_free(s); return false; }
    ggml_backend_cpu_set_n_threads(s->backend, threads > 0 ? threads : ggml_cpu_n_cores());
    for (int l = 0; l < hp->n_layer; l++) {
        s->kv.k[l] = ggml_new_tensor_2d(s->kv.ctx, GGML_TYPE_F32, Ckv, n_ctx);
        s->kv.v[l] = ggml_new_tensor_2d(s->kv.ctx, GGML_TYPE_F32, Ckv, n_ctx);
        if (!s->kv.k[l] || !s->kv.v[l]) { fprintf(stderr, "error: the KV cache: %s\n", ggml_last_error()); llama_session_free(s); return false; }
    }
    return true;
}

void llama_session_free(struct llama_session * s) {
    ggml_free(s->kv.ctx);
    if (s->galloc) ggml_gallocr_free(s->galloc);
    if (s->backend) ggml_backend_free(s->backend);
    free(s->logits);
    memset(s, 0, sizeof *s);
}

bool llama_decode(struct llama_session * s, const int32_t * tokens, int n, bool all_logits) {
    const struct llama_model * m = s->model;
    const int V = m->hp.n_vocab;
    if (n < 1 || s->kv.n_past + n > s->kv.n_ctx) {
        fprintf(stderr, "error: %d more tokens after %d do not fit the context of %d\n", n, s->kv.n_past, s->kv.n_ctx);
        return false;
    }
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= V) { fprintf(stderr, "error: token %d is not in the vocabulary (%d)\n", tokens[i], V); return false; }
    const size_t graph_size = 64 + 64 * (size_t) m->hp.n_layer;
    struct ggml_init_params ip = {.mem_size = ggml_tensor_overhead() * graph_size + ggml_graph_overhead_custom(graph_size, false),
                                  .mem_buffer = NULL, .no_alloc = true};
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_cgraph * gf = ctx ? ggml_new_graph_custom(ctx, graph_size, false) : NULL;
    struct llama_batch in;
    struct ggml_tensor * logits = gf ? llama_build(ctx, ctx, gf, m, s->lora, &s->kv, s->kv.n_past, n, 1, !all_logits, false, &in) : NULL;
    bool ok = logits != NULL;
    if (ok) ggml_build_forward_expand(gf, logits);
    if (ok && !ggml_gallocr_alloc_graph(s->galloc, gf)) { fprintf(stderr, "error: allocating the graph: %s\n", ggml_last_error()); ok = false; }
    if (ok) {
        memcpy(in.tokens->data, tokens, (size_t) n * sizeof *tokens);
        llama_batch_fill(&in, s->kv.n_past);
        if (ggml_backend_graph_compute(s->backend, gf) != GGML_STATUS_SUCCESS) { fprintf(stderr, "error: decoding: %s\n", ggml_last_error()); ok = false; }
    }
    if (ok) {
        const int rows = (int) logits->ne[1];
        float * out = realloc(s->logits, (size_t) rows * (size_t) V * sizeof *out);
        if (!out) { fprintf(stderr, "error: out of memory\n"); ok = false; }
        else {
            memcpy(out, logits->data, (size_t) rows * (size_t) V * sizeof *out);
            s->logits = out;
            s->n_logits = rows;
            s->kv.n_past += n;
        }
    }
    if (ctx && !gf) fprintf(stderr, "error: %s\n", ggml_last_error());
    ggml_free(ctx);
    return ok;
}

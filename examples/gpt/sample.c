/* sample.c -- generation: one forward pass per new character over the last
 * n_ctx characters (the causal mask makes padding after them irrelevant),
 * then temperature and top-k sampling from the logits at the last position. */
#include "sample.h"

#include "rng.h"

#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Index drawn from softmax(logits / temperature) restricted to the top_k largest. */
static int draw(const float * logits, int V, float temperature, int top_k, uint64_t * rng) {
    double p[256];
    int order[256];
    for (int i = 0; i < V; i++) order[i] = i;
    /* selection of the top_k largest (V <= 256) */
    const int k = top_k > 0 && top_k < V ? top_k : V;
    for (int i = 0; i < k; i++)
        for (int j = i + 1; j < V; j++)
            if (logits[order[j]] > logits[order[i]]) { const int s = order[i]; order[i] = order[j]; order[j] = s; }
    double sum = 0.0;
    for (int i = 0; i < k; i++) sum += p[i] = exp((double) (logits[order[i]] - logits[order[0]]) / temperature);
    double u = rng_uniform(rng) * sum;
    for (int i = 0; i < k; i++) {
        if ((u -= p[i]) <= 0) return order[i];
    }
    return order[k - 1];
}

bool gpt_generate(const struct gpt_model * m, const struct corpus * vocab, const char * prompt, int n_new,
                  float temperature, int top_k, uint64_t seed, int threads) {
    const int T = m->cfg.n_ctx, V = m->cfg.n_vocab;
    struct ggml_init_params ip = {ggml_tensor_overhead() * 4096 + ggml_graph_overhead_custom(4096, false), NULL, true};
    struct ggml_context * ctx = ggml_init(ip);
    if (!ctx) { fprintf(stderr, "error: %s\n", ggml_last_error()); return false; }
    struct gpt_graph io;
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 4096, false);
    const struct gpt_build_opts build = {true, GGML_PREC_DEFAULT};
    bool ok = g && gpt_build(m, ctx, ctx, 1, T, &build, &io);
    if (ok) ggml_build_forward_expand(g, io.logits);
    ggml_backend_t cpu = ok ? ggml_backend_cpu_init() : NULL;
    struct ggml_backend_buffer * buf = cpu ? ggml_backend_alloc_ctx_tensors(ctx, cpu) : NULL;
    if (cpu) ggml_backend_free(cpu);
    int32_t * hist = malloc(((size_t) strlen(prompt) + (size_t) n_new + 1) * sizeof *hist);
    if (!buf || !hist) {
        if (ok) fprintf(stderr, "error: preparing generation: %s\n", ggml_last_error());
        free(hist);
        if (buf) ggml_backend_buffer_free(buf);
        ggml_free(ctx);
        return false;
    }
    gpt_graph_set_mask(&io);
    int n = 0;
    for (const unsigned char * c = (const unsigned char *) prompt; *c; c++)
        if (vocab->id_of[*c] >= 0) hist[n++] = vocab->id_of[*c];
    if (n == 0) hist[n++] = vocab->id_of['\n'] >= 0 ? vocab->id_of['\n'] : 0;
    fwrite(prompt, 1, strlen(prompt), stdout);
    uint64_t rng = seed;
    int32_t * tok = io.tokens->data;
    memset(io.targets->data, 0, (size_t) T * sizeof(int32_t));
    for (int s = 0; s < n_new && ok; s++) {
        const int start = n > T ? n - T : 0, len = n - start;
        for (int t = 0; t < T; t++) tok[t] = t < len ? hist[start + t] : 0;
        if (ggml_graph_compute_with_ctx(ctx, g, threads) != GGML_STATUS_SUCCESS) {
            fprintf(stderr, "\nerror: generation: %s\n", ggml_last_error());
            ok = false;
            break;
        }
        const float * logits = (const float *) io.logits->data + (size_t) (len - 1) * (size_t) V;
        hist[n] = draw(logits, V, temperature, top_k, &rng);
        fputc(vocab->vocab[hist[n]], stdout);
        n++;
    }
    fputc('\n', stdout);
    free(hist);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return ok;
}

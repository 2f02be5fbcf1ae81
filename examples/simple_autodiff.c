/* simple_autodiff.c -- build a small graph with fused attention, differentiate
 * it, compute it, and print the loss and gradients.
 *
 *   loss = sum(W ⊙ attention(q, k, v)) + sum(q²)
 *
 * The gradients are printed next to central finite differences of the loss,
 * so the output shows by itself that the backward pass is right. */
#include "ggml.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { DK = 4, DV = 3, N = 3, M = 5, H = 2, HKV = 1 };

static void fill(struct ggml_tensor * t, unsigned seed) {
    for (int64_t i = 0; i < ggml_nelements(t); i++) {
        seed = seed * 1103515245u + 12345u;
        ggml_set_f32_1d(t, i, (float) ((seed >> 8) % 2001) / 1000.0f - 1.0f);
    }
}

static int fail(const char * what) {
    fprintf(stderr, "error: %s: %s\n", what, ggml_last_error());
    return 1;
}

int main(void) {
    struct ggml_init_params params = {.mem_size = 32 * 1024 * 1024, .mem_buffer = NULL, .no_alloc = false};
    struct ggml_context * ctx = ggml_init(params);
    if (!ctx) return fail("ggml_init");

    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DK, N, H, 1);
    struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DK, M, HKV, 1);
    struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DV, M, HKV, 1);
    struct ggml_tensor * w = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DV, H, N, 1);
    fill(q, 1); fill(k, 2); fill(v, 3); fill(w, 4);
    ggml_set_name(q, "q"); ggml_set_name(k, "k"); ggml_set_name(v, "v");
    ggml_set_param(q); ggml_set_param(k); ggml_set_param(v);

    /* ops are lazy: these calls only record nodes */
    struct ggml_tensor * attn = ggml_flash_attn_ext(ctx, q, k, v, NULL, 1.0f / sqrtf(DK), 0.0f, 0.0f);
    struct ggml_tensor * loss = ggml_add(ctx, ggml_sum(ctx, ggml_mul(ctx, attn, w)), ggml_sum(ctx, ggml_sqr(ctx, q)));
    if (!loss) return fail("building the loss");  /* NULL propagates: one check for the whole chain */
    ggml_set_loss(loss);

    struct ggml_cgraph * fwd = ggml_new_graph(ctx);
    ggml_build_forward_expand(fwd, loss);
    struct ggml_cgraph * graph = ggml_new_graph_custom(ctx, GGML_DEFAULT_GRAPH_SIZE, true);
    ggml_build_forward_expand(graph, loss);
    if (ggml_build_backward_expand(ctx, graph, NULL) != GGML_STATUS_SUCCESS) return fail("ggml_build_backward_expand");
    ggml_graph_reset(graph);  /* loss gradient := 1, accumulators := 0 */
    if (ggml_graph_compute_with_ctx(ctx, graph, ggml_cpu_n_cores()) != GGML_STATUS_SUCCESS) return fail("compute");

    printf("ggmlr example: loss = sum(W * attention(q, k, v)) + sum(q^2)   [SIMD path: %s]\n", ggml_cpu_simd_name());
    printf("graph: %d nodes, loss = %.6f\n\n", ggml_graph_n_nodes(graph), ggml_get_f32_1d(loss, 0));

    struct ggml_tensor * inputs[3] = {q, k, v};
    double worst = 0.0;
    for (int p = 0; p < 3; p++) {
        struct ggml_tensor * x = inputs[p];
        struct ggml_tensor * g = ggml_graph_get_grad(graph, x);
        printf("d loss / d %s (first 6 of %lld):  analytic | finite difference\n", ggml_get_name(x), (long long) ggml_nelements(x));
        for (int64_t i = 0; i < ggml_nelements(x); i++) {
            const float x0 = ggml_get_f32_1d(x, i), eps = 1e-2f;
            ggml_set_f32_1d(x, i, x0 + eps);
            ggml_graph_compute_with_ctx(ctx, fwd, 1);
            const double lp = ggml_get_f32_1d(loss, 0);
            ggml_set_f32_1d(x, i, x0 - eps);
            ggml_graph_compute_with_ctx(ctx, fwd, 1);
            const double lm = ggml_get_f32_1d(loss, 0);
            ggml_set_f32_1d(x, i, x0);
            const double fd = (lp - lm) / (2.0 * eps), an = ggml_get_f32_1d(g, i);
            if (fabs(an - fd) > worst) worst = fabs(an - fd);
            if (i < 6) printf("  [%lld] %+.6f | %+.6f\n", (long long) i, an, fd);
        }
    }
    printf("\nlargest |analytic - finite difference| = %.2e\n", worst);
    ggml_free(ctx);
    return worst < 1e-2 ? 0 : 1;
}

/* upstream_style.c -- a program written against upstream ggml's API (mul_mat,
 * add, sqr, sum; autodiff via ggml_new_graph_custom + ggml_build_backward_expand
 * + ggml_graph_reset + ggml_graph_compute_with_ctx), compiled against the
 * INSTALLED library with `pkg-config --cflags --libs ggmlr`. It checks the
 * numbers against a float64 computation and exits non-zero on a mismatch.
 *
 *   f(W, x, b) = sum((W x + b)^2)   df/dW = 2 (Wx+b) x^T,  df/db = 2 (Wx+b) */
#include "ggml.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdio.h>

int main(void) {
    struct ggml_init_params params = {
        /*.mem_size   =*/ 16 * 1024 * 1024,
        /*.mem_buffer =*/ NULL,
        /*.no_alloc   =*/ false,
    };
    struct ggml_context * ctx = ggml_init(params);

    const int K = 3, M = 2;
    struct ggml_tensor * W = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);  /* rows of W are ne0 */
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, 1);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, M, 1);
    float wv[6] = {0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f}, xv[3] = {1.0f, 2.0f, -1.0f}, bv[2] = {0.1f, -0.2f};
    for (int i = 0; i < 6; i++) ggml_set_f32_1d(W, i, wv[i]);
    for (int i = 0; i < 3; i++) ggml_set_f32_1d(x, i, xv[i]);
    for (int i = 0; i < 2; i++) ggml_set_f32_1d(b, i, bv[i]);
    ggml_set_param(W);
    ggml_set_param(b);

    struct ggml_tensor * y = ggml_add(ctx, ggml_mul_mat(ctx, W, x), b);
    struct ggml_tensor * f = ggml_sum(ctx, ggml_sqr(ctx, y));
    ggml_set_loss(f);

    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, GGML_DEFAULT_GRAPH_SIZE, true);
    ggml_build_forward_expand(gf, f);
    ggml_build_backward_expand(ctx, gf, NULL);
    ggml_graph_reset(gf);
    ggml_graph_compute_with_ctx(ctx, gf, 2);

    int bad = 0;
    double loss = 0;
    for (int i = 0; i < M; i++) {
        double yi = bv[i];
        for (int k = 0; k < K; k++) yi += (double) wv[k + K * i] * xv[k];
        loss += yi * yi;
        if (fabs(ggml_get_f32_1d(ggml_graph_get_grad(gf, b), i) - 2 * yi) > 1e-5) bad++;
        for (int k = 0; k < K; k++)
            if (fabs(ggml_get_f32_1d(ggml_graph_get_grad(gf, W), k + K * i) - 2 * yi * xv[k]) > 1e-5) bad++;
    }
    if (fabs(ggml_get_f32_1d(f, 0) - loss) > 1e-5 * fabs(loss)) bad++;
    printf("upstream-style program: loss %.6f (expected %.6f), %d mismatches\n", ggml_get_f32_1d(f, 0), loss, bad);
    ggml_free(ctx);
    return bad ? 1 : 0;
}

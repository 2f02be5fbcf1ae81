/* test_threads.c -- results do not depend on the thread count: a graph mixing
 * mul_mat (with broadcasting), add with broadcasting, soft_max, sum_rows and
 * repeat_back, and its backward pass, computed with 1, 2, 3 and 8 threads must
 * give bitwise identical forward values and gradients. */
#include "common/test_common.h"

#include <stdlib.h>
#include <string.h>

enum { N_OUT = 6 };

struct net {
    struct ggml_context * ctx;
    struct ggml_cgraph * g;
    struct ggml_tensor * out[N_OUT];  /* loss, an activation, and the three gradients + one more activation */
};

static struct net build(void) {
    struct net n;
    n.ctx = tc_ctx(64);
    struct ggml_context * ctx = n.ctx;
    struct ggml_tensor * w = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 37, 23, 1, 2);   /* broadcast over x's dim 2 */
    struct ggml_tensor * x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 37, 29, 3, 2);
    struct ggml_tensor * bias = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 23, 1, 3, 1);
    struct ggml_tensor * wt = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 23, 29, 3, 2);
    tc_fill_uniform(w, -1, 1);
    tc_fill_uniform(x, -1, 1);
    tc_fill_uniform(bias, -1, 1);
    tc_fill_uniform(wt, -1, 1);
    ggml_set_param(w);
    ggml_set_param(x);
    ggml_set_param(bias);
    struct ggml_tensor * h = ggml_add(ctx, ggml_mul_mat(ctx, w, x), bias);   /* [23, 29, 3, 2] */
    struct ggml_tensor * sm = ggml_soft_max_ext(ctx, h, NULL, 0.8f, 0.0f);
    struct ggml_tensor * rows = ggml_sum_rows(ctx, ggml_sqr(ctx, sm));       /* [1, 29, 3, 2] */
    struct ggml_tensor * rb = ggml_repeat_back(ctx, h, bias);                /* [23, 1, 3, 1] */
    struct ggml_tensor * loss = ggml_add(ctx, ggml_add(ctx, ggml_sum(ctx, ggml_mul(ctx, sm, wt)), ggml_sum(ctx, rows)),
                                         ggml_sum(ctx, ggml_sqr(ctx, ggml_scale(ctx, rb, 0.01f))));
    ggml_set_loss(loss);
    n.g = ggml_new_graph_custom(ctx, 1024, true);
    ggml_build_forward_expand(n.g, loss);
    if (ggml_build_backward_expand(ctx, n.g, NULL) != GGML_STATUS_SUCCESS) {
        fprintf(stderr, "backward build failed: %s\n", ggml_last_error());
        exit(2);
    }
    n.out[0] = loss;
    n.out[1] = sm;
    n.out[2] = ggml_graph_get_grad(n.g, w);
    n.out[3] = ggml_graph_get_grad(n.g, x);
    n.out[4] = ggml_graph_get_grad(n.g, bias);
    n.out[5] = rb;
    return n;
}

/* reset gradients, compute, and copy every output's bytes */
static void run(struct net * n, int nth, void * bytes[N_OUT]) {
    ggml_graph_reset(n->g);
    tc_compute(n->ctx, n->g, nth);
    for (int i = 0; i < N_OUT; i++) {
        const size_t nb = ggml_nbytes(n->out[i]);
        bytes[i] = malloc(nb);
        memcpy(bytes[i], n->out[i]->data, nb);
    }
}

int main(void) {
    tc_seed(11);
    struct net n = build();
    const char * names[N_OUT] = {"loss", "soft_max", "grad w", "grad x", "grad bias", "repeat_back"};
    for (int i = 0; i < N_OUT; i++) CHECK(n.out[i] != NULL && ggml_is_contiguous(n.out[i]), "output %s exists", names[i]);
    void * ref[N_OUT];
    run(&n, 1, ref);
    /* the reference run is not trivially zero or NaN */
    const float l = *(const float *) ref[0];
    CHECK(isfinite(l) && l != 0.0f, "loss %g is finite and non-zero", (double) l);
    for (int i = 2; i < 5; i++) {
        double s = 0;
        for (int64_t j = 0; j < ggml_nelements(n.out[i]); j++) s += fabs(((const float *) ref[i])[j]);
        CHECK(isfinite(s) && s > 0, "%s is finite and not all zero", names[i]);
    }
    const int threads[] = {2, 3, 8, 1};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        void * got[N_OUT];
        run(&n, threads[t], got);
        for (int i = 0; i < N_OUT; i++) {
            CHECK(memcmp(got[i], ref[i], ggml_nbytes(n.out[i])) == 0, "%s with %d threads is bitwise equal to 1 thread", names[i], threads[t]);
            free(got[i]);
        }
    }
    for (int i = 0; i < N_OUT; i++) free(ref[i]);
    ggml_free(n.ctx);
    return tc_finish("threads");
}

/* test_opt_steps.c -- the optimizer steps opt_step_adamw and opt_step_sgd:
 * state updates in place with no gradient, so not rows of the op table.
 * Each takes two steps against numbers worked out from its formula in
 * double (and one element by hand); adamw gives the same bytes with 1 and 3
 * threads. Their bad arguments are in test_op_refusals. */
#include "common/test_common.h"

#include <stdlib.h>
#include <string.h>

#define NTH 3

static enum ggml_status run(struct ggml_context * ctx, struct ggml_tensor * out, int nth) {
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(g, out);
    return ggml_graph_compute_with_ctx(ctx, g, nth);
}

static struct ggml_tensor * rand_tensor(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4], double lo, double hi) {
    struct ggml_tensor * t = ggml_new_tensor(ctx, type, 4, ne);
    tc_fill_uniform(t, lo, hi);
    return t;
}

static bool same_bits(const struct ggml_tensor * x, const void * y) { return memcmp(x->data, y, ggml_nbytes(x)) == 0; }

static void test_adamw(void) {
    struct ggml_context * ctx = tc_ctx(16);
    enum { N = 4 };
    const double w0[N] = {0.5, -1.0, 2.0, 0.0};
    const double grads[2][N] = {{0.1, -0.2, 0.3, 1e-3}, {-0.05, 0.4, 0.0, -2.0}};
    /* the op is given float hyper-parameters: the reference uses the same values (1 - 0.999f is 4.7e-5 off 1e-3) */
    const double alpha = 1e-2f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, wd = 0.1f;
    struct ggml_tensor * w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N), * gr = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_tensor * m = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N), * v = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_tensor * hp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7);
    ggml_set_param(w);
    for (int i = 0; i < N; i++) ggml_set_f32_1d(w, i, (float) w0[i]);
    ggml_set_zero(m);
    ggml_set_zero(v);
    struct ggml_tensor * step = ggml_opt_step_adamw(ctx, w, gr, m, v, hp);
    if (!CHECK(step != NULL, "adamw: %s", ggml_last_error())) { ggml_free(ctx); return; }
    CHECK(step->data == w->data && ggml_are_same_shape(step, w), "adamw: the result is a view of a");
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_expand(g, step);
    double rw[N], rm[N] = {0}, rv[N] = {0};
    memcpy(rw, w0, sizeof rw);
    for (int t = 1; t <= 2; t++) {
        const double b1h = (float) (1 / (1 - pow(beta1, t))), b2h = (float) (1 / (1 - pow(beta2, t)));
        const float hpv[7] = {(float) alpha, (float) beta1, (float) beta2, (float) eps, (float) wd, (float) b1h, (float) b2h};
        memcpy(hp->data, hpv, sizeof hpv);
        for (int i = 0; i < N; i++) ggml_set_f32_1d(gr, i, (float) grads[t - 1][i]);
        CHECK(ggml_graph_compute_with_ctx(ctx, g, NTH) == GGML_STATUS_SUCCESS, "adamw step %d: %s", t, ggml_last_error());
        for (int i = 0; i < N; i++) {
            const double gi = grads[t - 1][i];
            rm[i] = beta1 * rm[i] + (1 - beta1) * gi;
            rv[i] = beta2 * rv[i] + (1 - beta2) * gi * gi;
            rw[i] = rw[i] * (1 - alpha * wd) - alpha * (rm[i] * b1h) / (sqrt(rv[i] * b2h) + eps);
        }
        CHECK_REL(tc_rel_err_tensor(w, rw), 1e-6, "adamw weights");
        CHECK_REL(tc_rel_err_tensor(m, rm), 1e-6, "adamw first moment");
        CHECK_REL(tc_rel_err_tensor(v, rv), 1e-6, "adamw second moment");
    }
    /* element 0 worked by hand: step 1: m = 0.01, v = 1e-5, m^ = 0.1, v^ = 0.01,
       w = 0.5 * 0.999 - 0.01 * 0.1 / (0.1 + 1e-8) = 0.4895;
       step 2: m = 0.009 - 0.005 = 0.004, v = 9.99e-6 + 2.5e-6 = 1.249e-5, m^ = 0.004 / 0.19 = 0.021052632,
       v^ = 1.249e-5 / 0.001999 = 0.0062481241, sqrt = 0.079045076,
       w = 0.4895 * 0.999 - 0.01 * 0.021052632 / 0.079045086 = 0.4890105 - 0.0026633686 = 0.48634713 */
    CHECK(fabs(ggml_get_f32_1d(w, 0) - 0.48634713) < 2e-7, "adamw element 0 after 2 steps: %.9g, by hand 0.48634713", (double) ggml_get_f32_1d(w, 0));
    ggml_free(ctx);
}

static void test_sgd(void) {
    struct ggml_context * ctx = tc_ctx(16);
    enum { N = 3 };
    const double w0[N] = {0.5, -1.0, 2.0};
    const double grads[2][N] = {{0.1, -0.2, 0.3}, {-0.05, 0.4, 0.0}};
    const double alpha = 0.1f, wd = 0.01f;  /* the float values the op is given */
    struct ggml_tensor * w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N), * gr = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_tensor * hp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    ggml_set_param(w);
    for (int i = 0; i < N; i++) ggml_set_f32_1d(w, i, (float) w0[i]);
    ggml_set_f32_1d(hp, 0, (float) alpha);
    ggml_set_f32_1d(hp, 1, (float) wd);
    struct ggml_tensor * step = ggml_opt_step_sgd(ctx, w, gr, hp);
    if (!CHECK(step != NULL, "sgd: %s", ggml_last_error())) { ggml_free(ctx); return; }
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_expand(g, step);
    double rw[N];
    memcpy(rw, w0, sizeof rw);
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < N; i++) ggml_set_f32_1d(gr, i, (float) grads[t][i]);
        CHECK(ggml_graph_compute_with_ctx(ctx, g, NTH) == GGML_STATUS_SUCCESS, "sgd step %d: %s", t, ggml_last_error());
        for (int i = 0; i < N; i++) rw[i] = rw[i] * (1 - alpha * wd) - alpha * grads[t][i];
        CHECK_REL(tc_rel_err_tensor(w, rw), 1e-6, "sgd weights");
    }
    /* element 1 by hand: -1 * 0.999 + 0.02 = -0.979; -0.979 * 0.999 - 0.04 = -1.018021 */
    CHECK(fabs(ggml_get_f32_1d(w, 1) - -1.018021) < 2e-7, "sgd element 1 after 2 steps: %.9g, by hand -1.018021", (double) ggml_get_f32_1d(w, 1));
    ggml_free(ctx);
}

/* adamw from the same state with 1 and 3 threads: the same bytes */
static void test_adamw_threads(void) {
    struct ggml_context * ctx = tc_ctx(32);
    const int64_t zne[4] = {31, 101, 1, 1};
    /* adamw from the same state with 1 and 3 threads */
    struct ggml_tensor * w = rand_tensor(ctx, GGML_TYPE_F32, zne, -1, 1), * g = rand_tensor(ctx, GGML_TYPE_F32, zne, -1, 1);
    struct ggml_tensor * m = rand_tensor(ctx, GGML_TYPE_F32, zne, -1, 1), * v = rand_tensor(ctx, GGML_TYPE_F32, zne, 0, 1);
    struct ggml_tensor * hp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7);
    const float hpv[7] = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f, 10.0f, 1000.0f};
    memcpy(hp->data, hpv, sizeof hpv);
    ggml_set_param(w);
    struct ggml_tensor * step = ggml_opt_step_adamw(ctx, w, g, m, v, hp);
    const size_t nb = ggml_nbytes(w);
    char * saved = malloc(3 * nb), * after1 = malloc(3 * nb);
    struct ggml_tensor * state[3] = {w, m, v};
    for (int k = 0; k < 3; k++) memcpy(saved + k * nb, state[k]->data, nb);
    CHECK(run(ctx, step, 1) == GGML_STATUS_SUCCESS, "adamw 1 thread");
    for (int k = 0; k < 3; k++) { memcpy(after1 + k * nb, state[k]->data, nb); memcpy(state[k]->data, saved + k * nb, nb); }
    CHECK(run(ctx, step, 3) == GGML_STATUS_SUCCESS, "adamw 3 threads");
    for (int k = 0; k < 3; k++) CHECK(same_bits(state[k], after1 + k * nb), "adamw: tensor %d differs between 1 and 3 threads", k);
    free(saved);
    free(after1);
    ggml_free(ctx);
}

int main(void) {
    tc_seed(20240611);
    test_adamw();
    test_sgd();
    test_adamw_threads();
    return tc_finish("opt_steps");
}

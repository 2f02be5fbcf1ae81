/* test_grad_composites.c -- checks across ops, not of one op (those are
 * the op table's, tests/test_ops.c): gradients by finite differences through
 * chains of ops (attention, an MLP, a layer norm, a softmax classifier, ...)
 * and of one tensor seen through several views, whose gradients autodiff
 * sums (in place); _inplace forms over parameters (a new tensor: the
 * parameter keeps its values); and the fused softmax backward against the
 * ops it replaced.
 *
 * Tolerances: step 1e-2, |analytic - numeric| <= atol + 1e-2 |numeric| with
 * atol 1e-3 on parameters of magnitude <= 2 (2e-4 for the cross-entropy
 * chains): a factor-of-2 or sign error, a missing broadcast sum or a dropped
 * term exceeds this by far, while the float32 forward and the O(eps^2)
 * truncation stay well below it. */
#include "common/test_common.h"

#include <string.h>

/* A constant tensor shaped like ne with uniform values in [lo, hi]. */
static struct ggml_tensor * const_like(struct ggml_context * ctx, const int64_t ne[4], double lo, double hi) {
    struct ggml_tensor * w = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    tc_fill_uniform(w, lo, hi);
    return w;
}

#define P0 p[0]
#define P1 p[1]
#define P2 p[2]
#define BUILDER(name) static struct ggml_tensor * name(struct ggml_context * ctx, struct ggml_tensor ** p, void * user)
#define UNUSED_USER (void) user

/* ---- gradients of one tensor through several views, summed by autodiff ---- */

BUILDER(b_view_two_regions) {  /* two views of one param add up */
    UNUSED_USER;
    struct ggml_tensor * a = tc_weighted_sum(ctx, ggml_view_1d(ctx, P0, 30, 0));
    struct ggml_tensor * b = tc_weighted_sum(ctx, ggml_view_1d(ctx, P0, 30, 20 * 4));
    return ggml_add(ctx, a, b);
}

/* The q, k and v of a fused projection: three strided views of rows of one
 * param [12, 5], each through its own op (autodiff sums their gradients in
 * one tensor, in place). */
BUILDER(b_view_three_slices) {
    UNUSED_USER;
    struct ggml_tensor * sl[3];
    for (int i = 0; i < 3; i++) sl[i] = ggml_view_2d(ctx, P0, 4, 5, P0->nb[1], (size_t) (4 * i) * sizeof(float));
    struct ggml_tensor * q = tc_weighted_sum(ctx, ggml_sqr(ctx, sl[0])), * k = tc_weighted_sum(ctx, sl[1]), * v = tc_weighted_sum(ctx, ggml_scale(ctx, sl[2], 3.0f));
    return ggml_add(ctx, ggml_add(ctx, q, k), v);
}
BUILDER(b_view_and_whole) {  /* a view's gradient summed with the whole param's, in either order */
    const bool view_first = user != NULL;
    struct ggml_tensor * part = tc_weighted_sum(ctx, ggml_view_2d(ctx, P0, 3, 4, P0->nb[1], 2 * sizeof(float)));
    struct ggml_tensor * whole = tc_weighted_sum(ctx, ggml_sqr(ctx, P0));
    return view_first ? ggml_add(ctx, part, whole) : ggml_add(ctx, whole, part);
}
BUILDER(b_view_of_sum_twice) {  /* y = x + x seen through two views: y's gradient goes to x twice */
    UNUSED_USER;
    struct ggml_tensor * y = ggml_add(ctx, P0, P0);
    return ggml_add(ctx, tc_weighted_sum(ctx, ggml_view_1d(ctx, y, 20, 0)), tc_weighted_sum(ctx, ggml_view_1d(ctx, y, 20, 30 * sizeof(float))));
}

/* ---- chains of ops ---- */

BUILDER(b_sum_squared) {  /* (sum(x * W))^2: gradient 2 S W, sum's backward with a non-unit upstream */
    UNUSED_USER;
    return ggml_sum(ctx, ggml_sqr(ctx, ggml_sum(ctx, ggml_mul(ctx, P0, const_like(ctx, P0->ne, -1, 1)))));
}

/* a mask with values in [-1, 1], some -Inf, and row 1 all -Inf (gradient 0 there) */
static struct ggml_tensor * make_mask(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4]) {
    struct ggml_tensor * m = ggml_new_tensor(ctx, type, 4, ne);
    for (int64_t i = 0; i < ggml_nelements(m); i++) {
        const bool inf = (i / ne[0]) % ne[1] == 1 || tc_uniform(0, 1) < 0.2;
        ggml_set_f32_1d(m, i, inf ? -INFINITY : (float) tc_uniform(-1, 1));
    }
    return m;
}

BUILDER(b_attention) {  /* out = V^T softmax(0.5 K^T Q + mask): q [4,3], k [4,5], vt [5,4] */
    UNUSED_USER;
    const int64_t mne[4] = {5, 3, 1, 1};
    struct ggml_tensor * s = ggml_soft_max_ext(ctx, ggml_mul_mat(ctx, P1, P0), make_mask(ctx, GGML_TYPE_F16, mne), 0.5f, 0.0f);
    return tc_weighted_sum(ctx, ggml_mul_mat(ctx, P2, s));
}
BUILDER(b_mlp) {  /* sum((W2 sqr(W1 x + b1) - t)^2): w1 [4,6], x [4,3], b1 [6,1], shared range */
    UNUSED_USER;
    const int64_t w2ne[4] = {6, 2, 1, 1}, tne[4] = {2, 3, 1, 1};
    struct ggml_tensor * h = ggml_sqr(ctx, ggml_add(ctx, ggml_mul_mat(ctx, P0, P1), P2));
    struct ggml_tensor * y = ggml_mul_mat(ctx, const_like(ctx, w2ne, -1, 1), h);
    return ggml_sum(ctx, ggml_sqr(ctx, ggml_sub(ctx, y, const_like(ctx, tne, -1, 1))));
}
BUILDER(b_layer_norm) {  /* (x - mean) / sqrt(mean((x - mean)^2) + 0.1), per row, broadcasts of a function of x */
    UNUSED_USER;
    const int64_t one[4] = {1, 1, 1, 1};
    struct ggml_tensor * c = ggml_sub(ctx, P0, ggml_mean(ctx, P0));
    struct ggml_tensor * eps = const_like(ctx, one, 0.1, 0.1);
    struct ggml_tensor * sd = ggml_sqrt(ctx, ggml_add(ctx, ggml_mean(ctx, ggml_sqr(ctx, c)), eps));
    return tc_weighted_sum(ctx, ggml_div(ctx, c, sd));
}
BUILDER(b_log_chain) {  /* log(sqrt(x * y) + x / y), positive params */
    UNUSED_USER;
    return tc_weighted_sum(ctx, ggml_log(ctx, ggml_add(ctx, ggml_sqrt(ctx, ggml_mul(ctx, P0, P1)), ggml_div(ctx, P0, P1))));
}
BUILDER(b_repeat_chain) {  /* scale(repeat(sum_rows(x))) * x - repeat_back(...) */
    UNUSED_USER;
    struct ggml_tensor * r = ggml_repeat(ctx, ggml_scale(ctx, ggml_sum_rows(ctx, P0), 0.3f), P0);
    const int64_t bne[4] = {5, 1, 2, 1};
    struct ggml_tensor * rb = ggml_repeat_back(ctx, ggml_mul(ctx, r, P0), ggml_new_tensor(ctx, GGML_TYPE_F32, 4, bne));
    return tc_weighted_sum(ctx, ggml_sub(ctx, ggml_sqr(ctx, rb), ggml_mean(ctx, rb)));
}
BUILDER(b_used_twice) {  /* sum(x*x) + sum(x): gradient 2x + 1 accumulated from two paths */
    UNUSED_USER;
    return ggml_add(ctx, ggml_sum(ctx, ggml_mul(ctx, P0, P0)), ggml_sum(ctx, P0));
}

BUILDER(b_block) {  /* a transformer-ish chain: gelu(rms_norm(x)) -> norm -> silu, then tanh of a softmax */
    (void) user;
    struct ggml_tensor * h = ggml_silu(ctx, ggml_norm(ctx, ggml_gelu(ctx, ggml_rms_norm(ctx, p[0], 1e-5f)), 1e-5f));
    return tc_weighted_sum(ctx, ggml_tanh(ctx, ggml_soft_max(ctx, h)));
}

/* An I32 tensor [ne0, ne1, ne2] of the given values, or of uniform values in [0, hi) when vals is NULL. */
static struct ggml_tensor * indices(struct ggml_context * ctx, int64_t ne0, int64_t ne1, int64_t ne2, const int32_t * vals, int hi) {
    struct ggml_tensor * t = ggml_new_tensor_3d(ctx, GGML_TYPE_I32, ne0, ne1, ne2);
    int32_t * d = t->data;
    for (int64_t i = 0; i < ggml_nelements(t); i++) d[i] = vals ? vals[i] : tc_randint(0, hi - 1);
    return t;
}

static struct ggml_tensor * b_get_rows_then_mul_mat(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    (void) user;  /* embedding lookup feeding a projection: mul_mat(w [4, 3], emb [4, 6]) */
    const int32_t tok[6] = {0, 2, 2, 5, 1, 2};
    return tc_weighted_sum(ctx, ggml_mul_mat(ctx, p[1], ggml_get_rows(ctx, p[0], indices(ctx, 6, 1, 1, tok, 0))));
}

static struct ggml_tensor * b_classifier(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    (void) user;  /* cross_entropy(mul_mat(w [3, 6], x [3, 4]), classes): a softmax classifier */
    return ggml_cross_entropy_loss(ctx, ggml_mul_mat(ctx, p[0], p[1]), indices(ctx, 4, 1, 1, NULL, 6));
}

struct gcase {
    const char * name;
    tc_loss_builder build;
    const void * user;
    int n_params;
    int64_t shapes[3][4];
    double lo, hi, atol;  /* step 1e-2, rtol 1e-2 */
};

#define S1(a, b, c, d) {{a, b, c, d}}
#define S2(a, b, c, d, e, f, g, h) {{a, b, c, d}, {e, f, g, h}}
#define S3(a, b, c, d, e, f, g, h, i, j, k, l) {{a, b, c, d}, {e, f, g, h}, {i, j, k, l}}

static const struct gcase cases[] = {
    {"two views of one param", b_view_two_regions, NULL, 1, S1(7, 5, 3, 1), -1, 1, 1e-3},
    {"three row slices (q, k, v)", b_view_three_slices, NULL, 1, S1(12, 5, 1, 1), -1, 1, 1e-3},
    {"whole param, then a view", b_view_and_whole, NULL, 1, S1(7, 5, 1, 1), -1, 1, 1e-3},
    {"a view, then the whole param", b_view_and_whole, "", 1, S1(7, 5, 1, 1), -1, 1, 1e-3},
    {"two views of x + x", b_view_of_sum_twice, NULL, 1, S1(7, 5, 2, 1), -1, 1, 1e-3},
    {"sum squared", b_sum_squared, NULL, 1, S1(5, 3, 2, 2), -1, 1, 1e-3},
    {"attention chain", b_attention, NULL, 3, S3(4, 3, 1, 1, 4, 5, 1, 1, 5, 4, 1, 1), -1, 1, 1e-3},
    {"mlp chain", b_mlp, NULL, 3, S3(4, 6, 1, 1, 4, 3, 1, 1, 6, 1, 1, 1), -1, 1, 1e-3},
    {"layer norm chain", b_layer_norm, NULL, 1, S1(6, 4, 2, 1), -1, 1, 1e-3},
    {"log/sqrt/div chain", b_log_chain, NULL, 2, S2(5, 3, 2, 1, 5, 3, 2, 1), 0.5, 2, 1e-3},
    {"repeat/repeat_back chain", b_repeat_chain, NULL, 1, S1(5, 3, 2, 2), -1, 1, 1e-3},
    {"param used twice: sum(x*x) + sum(x)", b_used_twice, NULL, 1, S1(5, 3, 2, 2), -1, 1, 1e-3},
    {"rms_norm/gelu/norm/silu/soft_max/tanh chain", b_block, NULL, 1, S1(8, 3, 1, 1), -1, 1, 1e-3},
    /* step 1e-2 on inputs in [-2, 2], atol 2e-4: cross-entropy gradients are ~1/R (softmax - p) */
    {"get_rows then mul_mat", b_get_rows_then_mul_mat, NULL, 2, S2(4, 6, 1, 1, 4, 3, 1, 1), -2, 2, 2e-4},
    {"softmax classifier", b_classifier, NULL, 2, S2(3, 6, 1, 1, 3, 4, 1, 1), -2, 2, 2e-4},
};

static bool compute_nth(struct ggml_context * ctx, struct ggml_tensor * out, int nth) {
    if (!CHECK(out != NULL, "op returned NULL: %s", ggml_last_error())) return false;
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(g, out);
    return CHECK(ggml_graph_compute_with_ctx(ctx, g, nth) == GGML_STATUS_SUCCESS, "compute failed: %s", ggml_last_error());
}

static bool poison_compute(struct ggml_context * ctx, struct ggml_tensor * out) {
    if (out) tc_poison(out);
    return compute_nth(ctx, out, 3);
}

static void test_soft_max_back_fused(void) {
    static const int64_t shapes[][4] = {{7, 5, 3, 1}, {1, 4, 1, 1}, {64, 3, 1, 2}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        struct ggml_context * ctx = tc_ctx(16);
        struct ggml_tensor * x = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, shapes[c]), * dy = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, shapes[c]);
        tc_fill_uniform(x, -3, 3);
        tc_fill_uniform(dy, -1, 1);
        const float scale = 0.7f;
        struct ggml_tensor * y = ggml_soft_max_ext(ctx, x, NULL, scale, 0.0f);
        if (!compute_nth(ctx, y, 3)) { ggml_free(ctx); continue; }
        struct ggml_tensor * dx = ggml_soft_max_ext_back(ctx, dy, y, scale, 0.0f);
        /* the composed ops the backward rule used before: scale(y * (dy - sum_rows(dy * y)));
         * the float64 check of the kernel is a row of tests/ops/soft_max.c */
        struct ggml_tensor * composed = ggml_scale(ctx, ggml_mul(ctx, y, ggml_sub(ctx, dy, ggml_sum_rows(ctx, ggml_mul(ctx, dy, y)))), scale);
        const int64_t n = ggml_nelements(y);
        if (poison_compute(ctx, dx) && poison_compute(ctx, composed)) {
            double maxd = 0;
            for (int64_t i = 0; i < n; i++) maxd = fmax(maxd, fabs(tc_get(dx, i) - tc_get(composed, i)));
            CHECK(maxd <= 1e-6, "soft_max_ext_back matches the composed ops within rounding (max diff %.3g)", maxd);
        }
        ggml_free(ctx);
    }
}

/* An _inplace form over a parameter writes a new tensor (the parameter is
 * never overwritten): its gradient is the one of the form without _inplace,
 * by finite differences, and the parameter keeps its values after a compute. */
static struct ggml_tensor * b_inplace_on_param(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    (void) user;
    struct ggml_tensor * y = ggml_mul(ctx, ggml_rms_norm_inplace(ctx, p[0], 1e-6f), ggml_unary_inplace(ctx, p[1], GGML_UNARY_OP_SILU));
    return ggml_sum(ctx, ggml_sqr(ctx, y));
}

static void test_inplace_on_param(void) {
    static const int64_t shapes[2][4] = {{9, 4, 1, 1}, {9, 4, 1, 1}};
    const int bad = tc_gradcheck("rms_norm_inplace, silu_inplace on parameters", b_inplace_on_param, NULL, 2, shapes, -2, 2, 1e-2, 1e-3, 1e-2);
    printf("%-50s %s\n", "rms_norm_inplace, silu_inplace on parameters", bad ? "FAILED" : "ok");
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 9, 4);
    tc_fill_uniform(x, -2, 2);
    ggml_set_param(x);
    float before[36];
    memcpy(before, x->data, sizeof before);
    struct ggml_tensor * y = ggml_rms_norm_inplace(ctx, x, 1e-6f);
    CHECK(y && y->data != x->data && !y->view_src, "an _inplace form over a parameter is a new tensor");
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);
    tc_compute(ctx, g, 2);
    CHECK(memcmp(before, x->data, sizeof before) == 0, "the parameter keeps its values");
    ggml_free(ctx);
}

int main(void) {
    tc_seed(7);
    test_inplace_on_param();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct gcase * c = &cases[i];
        const int bad = tc_gradcheck(c->name, c->build, (void *) c->user, c->n_params, c->shapes, c->lo, c->hi, 1e-2, c->atol, 1e-2);
        printf("%-50s %s\n", c->name, bad ? "FAILED" : "ok");
    }
    test_soft_max_back_fused();
    return tc_finish("grad_composites");
}

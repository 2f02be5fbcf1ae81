/* test_ops_backward.c -- every backward rule (all ops except flash attention)
 * through the one generic finite-difference checker, tc_gradcheck.
 *
 * Each loss is a scalar sum(f(params) * W) with a fixed random weight W (so
 * gradients are not uniform and a wrong index or transpose shows), or a
 * composite chain. Tolerances: step 1e-2, |analytic - numeric| <= 1e-3 +
 * 1e-2 |numeric| with parameters of magnitude <= 2: a factor-of-2 or sign
 * error, a missing broadcast sum or a dropped term exceeds this by far, while
 * the float32 forward and the O(eps^2) truncation stay well below it. */
#include "common/test_common.h"

#include <string.h>

/* ---- loss helpers ---- */

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

/* ---- copies and layout ---- */

BUILDER(b_dup) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_dup(ctx, P0)); }
BUILDER(b_cont_permuted) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_cont(ctx, ggml_permute(ctx, P0, 2, 0, 3, 1))); }
BUILDER(b_cpy) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_cpy(ctx, P0, ggml_dup_tensor(ctx, P0))); }
BUILDER(b_cpy_new_shape) {  /* [5,3,2,2] -> [12,5]: flat order kept */
    UNUSED_USER;
    return tc_weighted_sum(ctx, ggml_cpy(ctx, P0, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 12, 5)));
}
BUILDER(b_cpy_permuted_src) {
    UNUSED_USER;
    return tc_weighted_sum(ctx, ggml_cpy(ctx, ggml_permute(ctx, P0, 1, 2, 0, 3), ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 10, 6)));
}
BUILDER(b_cpy_f16) {  /* F32 -> F16 -> F32: the gradient passes straight through the conversions */
    UNUSED_USER;
    struct ggml_tensor * h = ggml_cpy(ctx, P0, ggml_new_tensor(ctx, GGML_TYPE_F16, 4, P0->ne));
    return tc_weighted_sum(ctx, ggml_cpy(ctx, h, ggml_new_tensor(ctx, GGML_TYPE_F32, 4, P0->ne)));
}
BUILDER(b_reshape_2d) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_reshape_2d(ctx, P0, 6, 10)); }
BUILDER(b_reshape_4d) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_reshape_4d(ctx, ggml_reshape_1d(ctx, P0, 60), 3, 4, 1, 5)); }
BUILDER(b_permute) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_permute(ctx, P0, 2, 0, 3, 1)); }
BUILDER(b_transpose) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_transpose(ctx, P0)); }
BUILDER(b_permute_then_transpose_cont) {
    UNUSED_USER;
    return tc_weighted_sum(ctx, ggml_cont(ctx, ggml_transpose(ctx, ggml_permute(ctx, P0, 1, 3, 0, 2))));
}

/* views of a param [7,5,3,1]: only the viewed elements get a gradient */
BUILDER(b_view_1d) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_view_1d(ctx, P0, 11, 13 * 4)); }
BUILDER(b_view_2d) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_view_2d(ctx, P0, 3, 2, P0->nb[1], (1 + 2 * 7) * 4)); }
BUILDER(b_view_3d) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_view_3d(ctx, P0, 4, 2, 2, 2 * P0->nb[1], P0->nb[2], (2 + 7) * 4)); }
BUILDER(b_view_4d) {
    UNUSED_USER;
    return tc_weighted_sum(ctx, ggml_view_4d(ctx, P0, 2, 3, 2, 1, P0->nb[1], P0->nb[2], P0->nb[3], (3 + 7 + 35) * 4));
}
BUILDER(b_view_overlapping) {  /* sliding windows: elements seen several times get summed gradients */
    UNUSED_USER;
    return tc_weighted_sum(ctx, ggml_view_2d(ctx, P0, 4, 9, 2 * 4, 4));
}
BUILDER(b_view_of_view) {  /* offsets 20 + 6 floats */
    UNUSED_USER;
    return tc_weighted_sum(ctx, ggml_view_1d(ctx, ggml_view_1d(ctx, P0, 40, 20 * 4), 9, 6 * 4));
}
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

/* ---- element-wise ---- */

struct bin_case { struct ggml_tensor * (*fn)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *); bool transpose_a; };
static const struct bin_case k_sub = {ggml_sub, false}, k_mul = {ggml_mul, false}, k_div = {ggml_div, false};
static const struct bin_case k_add_t = {ggml_add, true}, k_mul_t = {ggml_mul, true}, k_div_t = {ggml_div, true};
BUILDER(b_binary) {
    const struct bin_case * c = user;
    struct ggml_tensor * a = c->transpose_a ? ggml_transpose(ctx, P0) : P0;
    return tc_weighted_sum(ctx, c->fn(ctx, a, P1));
}
BUILDER(b_binary_self) {  /* the same param on both sides */
    const struct bin_case * c = user;
    return tc_weighted_sum(ctx, c->fn(ctx, P0, P0));
}

struct un_case { struct ggml_tensor * (*fn)(struct ggml_context *, struct ggml_tensor *); };
static const struct un_case k_sqr = {ggml_sqr}, k_sqrt = {ggml_sqrt}, k_log = {ggml_log};
BUILDER(b_unary) { const struct un_case * c = user; return tc_weighted_sum(ctx, c->fn(ctx, P0)); }
BUILDER(b_unary_transposed) { const struct un_case * c = user; return tc_weighted_sum(ctx, c->fn(ctx, ggml_transpose(ctx, P0))); }
BUILDER(b_scale) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_scale(ctx, P0, -1.7f)); }

/* ---- reductions and broadcasting ---- */

BUILDER(b_sum) { UNUSED_USER; return ggml_sum(ctx, P0); }
BUILDER(b_sum_squared) {  /* (sum(x * W))^2: gradient 2 S W, sum's backward with a non-unit upstream */
    UNUSED_USER;
    return ggml_sum(ctx, ggml_sqr(ctx, ggml_sum(ctx, ggml_mul(ctx, P0, const_like(ctx, P0->ne, -1, 1)))));
}
BUILDER(b_sum_rows) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_sum_rows(ctx, P0)); }
BUILDER(b_sum_rows_permuted) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_sum_rows(ctx, ggml_permute(ctx, P0, 1, 0, 3, 2))); }
BUILDER(b_mean) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_mean(ctx, P0)); }

struct shape_case { int64_t ne[4]; };
static const struct shape_case k_rep_532 = {{5, 3, 2, 2}}, k_rep_6322 = {{6, 3, 2, 2}}, k_rep_3222 = {{3, 2, 2, 2}};
static const struct shape_case k_rb_5121 = {{5, 1, 2, 1}}, k_rb_2121 = {{2, 1, 2, 1}}, k_rb_1111 = {{1, 1, 1, 1}};
BUILDER(b_repeat) {
    const struct shape_case * c = user;
    return tc_weighted_sum(ctx, ggml_repeat(ctx, P0, ggml_new_tensor(ctx, GGML_TYPE_F32, 4, c->ne)));
}
BUILDER(b_repeat_back) {
    const struct shape_case * c = user;
    return tc_weighted_sum(ctx, ggml_repeat_back(ctx, P0, ggml_new_tensor(ctx, GGML_TYPE_F32, 4, c->ne)));
}

/* acc of b [3,2,2,1] into a [7,5,3,1] at (2,1,1); both are params */
BUILDER(b_acc) {
    UNUSED_USER;
    return tc_weighted_sum(ctx, ggml_acc(ctx, P0, P1, P0->nb[1], P0->nb[2], P0->nb[3], (2 + 7 + 35) * 4));
}
BUILDER(b_acc_strided) {  /* every other row, b transposed */
    UNUSED_USER;
    return tc_weighted_sum(ctx, ggml_acc(ctx, P0, ggml_transpose(ctx, P1), 2 * P0->nb[1], P0->nb[2], P0->nb[3], 4));
}

/* ---- matrix product and softmax ---- */

BUILDER(b_mul_mat) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_mul_mat(ctx, P0, P1)); }
BUILDER(b_mul_mat_ta) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_mul_mat(ctx, ggml_transpose(ctx, P0), P1)); }
BUILDER(b_mul_mat_tb) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_mul_mat(ctx, P0, ggml_transpose(ctx, P1))); }
BUILDER(b_mul_mat_same) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_mul_mat(ctx, P0, P0)); }  /* x^T x */
BUILDER(b_out_prod) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_out_prod(ctx, P0, P1)); }
BUILDER(b_out_prod_tb) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_out_prod(ctx, P0, ggml_transpose(ctx, P1))); }
BUILDER(b_out_prod_same) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_out_prod(ctx, P0, P0)); }  /* x x^T */

struct sm_case { enum ggml_type mtype; int64_t mne[4]; float scale, max_bias; };
static const struct sm_case k_sm_f32 = {GGML_TYPE_F32, {7, 6, 1, 1}, 0.7f, 0.0f};
static const struct sm_case k_sm_f16 = {GGML_TYPE_F16, {7, 5, 3, 1}, 1.9f, 0.0f};
static const struct sm_case k_sm_alibi = {GGML_TYPE_F32, {7, 5, 1, 1}, 1.1f, 4.0f};
/* a mask with values in [-1, 1], some -Inf, and row 1 all -Inf (gradient 0 there) */
static struct ggml_tensor * make_mask(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4]) {
    struct ggml_tensor * m = ggml_new_tensor(ctx, type, 4, ne);
    for (int64_t i = 0; i < ggml_nelements(m); i++) {
        const bool inf = (i / ne[0]) % ne[1] == 1 || tc_uniform(0, 1) < 0.2;
        ggml_set_f32_1d(m, i, inf ? -INFINITY : (float) tc_uniform(-1, 1));
    }
    return m;
}
BUILDER(b_soft_max) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_soft_max(ctx, P0)); }
BUILDER(b_soft_max_transposed) { UNUSED_USER; return tc_weighted_sum(ctx, ggml_soft_max(ctx, ggml_transpose(ctx, P0))); }
BUILDER(b_soft_max_ext) {
    const struct sm_case * c = user;
    return tc_weighted_sum(ctx, ggml_soft_max_ext(ctx, P0, make_mask(ctx, c->mtype, c->mne), c->scale, c->max_bias));
}

/* ---- composite chains ---- */

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

/* ---- the table ---- */

#define S1(a, b, c, d) {{a, b, c, d}}
#define S2(a, b, c, d, e, f, g, h) {{a, b, c, d}, {e, f, g, h}}
#define S3(a, b, c, d, e, f, g, h, i, j, k, l) {{a, b, c, d}, {e, f, g, h}, {i, j, k, l}}

struct gcase {
    const char * name;
    tc_loss_builder build;
    const void * user;
    int n_params;
    int64_t shapes[3][4];
    double lo, hi, eps;  /* eps 0: the default 1e-2 */
};

static const struct gcase cases[] = {
    {"dup", b_dup, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"cont of permuted param", b_cont_permuted, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"cpy", b_cpy, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"cpy to a new shape", b_cpy_new_shape, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"cpy of a permuted view", b_cpy_permuted_src, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    /* the loss is linear in x, so a large step has no truncation error, and F16 rounding of x +- 0.5
       (|x| <= 1.5, error <= 2^-11 * 1.5 each) moves the numeric slope by <= 1.5e-3 * |W| */
    {"cpy F32->F16->F32", b_cpy_f16, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0.5},
    {"reshape_2d", b_reshape_2d, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"reshape_1d+4d", b_reshape_4d, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"permute", b_permute, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"transpose", b_transpose, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"permute+transpose+cont", b_permute_then_transpose_cont, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"view_1d", b_view_1d, NULL, 1, S1(7, 5, 3, 1), -1, 1, 0},
    {"view_2d", b_view_2d, NULL, 1, S1(7, 5, 3, 1), -1, 1, 0},
    {"view_3d", b_view_3d, NULL, 1, S1(7, 5, 3, 1), -1, 1, 0},
    {"view_4d", b_view_4d, NULL, 1, S1(7, 5, 3, 1), -1, 1, 0},
    {"overlapping view", b_view_overlapping, NULL, 1, S1(24, 1, 1, 1), -1, 1, 0},
    {"view of a view", b_view_of_view, NULL, 1, S1(7, 5, 3, 1), -1, 1, 0},
    {"two views of one param", b_view_two_regions, NULL, 1, S1(7, 5, 3, 1), -1, 1, 0},
    {"three row slices (q, k, v)", b_view_three_slices, NULL, 1, S1(12, 5, 1, 1), -1, 1, 0},
    {"whole param, then a view", b_view_and_whole, NULL, 1, S1(7, 5, 1, 1), -1, 1, 0},
    {"a view, then the whole param", b_view_and_whole, "", 1, S1(7, 5, 1, 1), -1, 1, 0},
    {"two views of x + x", b_view_of_sum_twice, NULL, 1, S1(7, 5, 2, 1), -1, 1, 0},
    {"sub", b_binary, &k_sub, 2, S2(5, 3, 2, 2, 5, 3, 2, 2), -1, 1, 0},
    {"mul", b_binary, &k_mul, 2, S2(5, 3, 2, 2, 5, 3, 2, 2), -1, 1, 0},
    {"div", b_binary, &k_div, 2, S2(5, 3, 2, 2, 5, 3, 2, 2), 0.5, 1.5, 0},
    {"sub broadcast [1,3,1,1]", b_binary, &k_sub, 2, S2(5, 3, 2, 2, 1, 3, 1, 1), -1, 1, 0},
    {"mul broadcast [5,1,2,1]", b_binary, &k_mul, 2, S2(5, 3, 2, 2, 5, 1, 2, 1), -1, 1, 0},
    {"mul broadcast scalar", b_binary, &k_mul, 2, S2(5, 3, 2, 2, 1, 1, 1, 1), -1, 1, 0},
    {"div broadcast [1,3,2,1]", b_binary, &k_div, 2, S2(5, 3, 2, 2, 1, 3, 2, 1), 0.5, 1.5, 0},
    {"div broadcast tiled ne0 [1,3,1,2]", b_binary, &k_div, 2, S2(6, 3, 2, 2, 2, 3, 1, 2), 0.5, 1.5, 0},
    {"add, a transposed", b_binary, &k_add_t, 2, S2(3, 5, 2, 1, 5, 1, 2, 1), -1, 1, 0},
    {"mul, a transposed, broadcast", b_binary, &k_mul_t, 2, S2(3, 5, 2, 1, 5, 1, 1, 1), -1, 1, 0},
    {"div, a transposed", b_binary, &k_div_t, 2, S2(3, 5, 2, 1, 5, 3, 2, 1), 0.5, 1.5, 0},
    {"mul x*x", b_binary_self, &k_mul, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"div x/x (gradient 0)", b_binary_self, &k_div, 1, S1(5, 3, 1, 1), 0.5, 1.5, 0},
    {"scale", b_scale, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"sqrt", b_unary, &k_sqrt, 1, S1(5, 3, 2, 2), 0.5, 2, 0},
    {"log", b_unary, &k_log, 1, S1(5, 3, 2, 2), 0.5, 2, 0},
    {"sqr of transposed", b_unary_transposed, &k_sqr, 1, S1(5, 3, 2, 1), -1, 1, 0},
    {"sqrt of transposed", b_unary_transposed, &k_sqrt, 1, S1(5, 3, 2, 1), 0.5, 2, 0},
    {"log of transposed", b_unary_transposed, &k_log, 1, S1(5, 3, 2, 1), 0.5, 2, 0},
    {"sum", b_sum, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"sum squared", b_sum_squared, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"sum_rows", b_sum_rows, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"sum_rows of permuted", b_sum_rows_permuted, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"mean", b_mean, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"repeat [5,1,2,1]->[5,3,2,2]", b_repeat, &k_rep_532, 1, S1(5, 1, 2, 1), -1, 1, 0},
    {"repeat [2,1,1,2]->[6,3,2,2]", b_repeat, &k_rep_6322, 1, S1(2, 1, 1, 2), -1, 1, 0},
    {"repeat [1,1,1,1]->[3,2,2,2]", b_repeat, &k_rep_3222, 1, S1(1, 1, 1, 1), -1, 1, 0},
    {"repeat_back [5,3,2,2]->[5,1,2,1]", b_repeat_back, &k_rb_5121, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"repeat_back [6,3,2,2]->[2,1,2,1]", b_repeat_back, &k_rb_2121, 1, S1(6, 3, 2, 2), -1, 1, 0},
    {"repeat_back [3,2,2,2]->[1,1,1,1]", b_repeat_back, &k_rb_1111, 1, S1(3, 2, 2, 2), -1, 1, 0},
    {"acc (a and b)", b_acc, NULL, 2, S2(7, 5, 3, 1, 3, 2, 2, 1), -1, 1, 0},
    {"acc strided, b transposed", b_acc_strided, NULL, 2, S2(7, 5, 3, 1, 2, 4, 2, 1), -1, 1, 0},
    {"mul_mat", b_mul_mat, NULL, 2, S2(6, 4, 1, 1, 6, 5, 1, 1), -1, 1, 0},
    {"mul_mat K=1", b_mul_mat, NULL, 2, S2(1, 4, 1, 1, 1, 3, 1, 1), -1, 1, 0},
    {"mul_mat batched", b_mul_mat, NULL, 2, S2(5, 3, 2, 2, 5, 4, 2, 2), -1, 1, 0},
    {"mul_mat broadcast dims 2,3 [4,3,2,1] x [4,2,6,3]", b_mul_mat, NULL, 2, S2(4, 3, 2, 1, 4, 2, 6, 3), -1, 1, 0},
    {"mul_mat broadcast dims 2,3 [4,3,2,3] x [4,2,4,6]", b_mul_mat, NULL, 2, S2(4, 3, 2, 3, 4, 2, 4, 6), -1, 1, 0},
    {"mul_mat broadcast dim 3 only [3,2,1,1] x [3,2,1,4]", b_mul_mat, NULL, 2, S2(3, 2, 1, 1, 3, 2, 1, 4), -1, 1, 0},
    {"mul_mat a transposed", b_mul_mat_ta, NULL, 2, S2(4, 6, 1, 1, 6, 5, 1, 1), -1, 1, 0},
    {"mul_mat b transposed, broadcast", b_mul_mat_tb, NULL, 2, S2(6, 4, 1, 1, 5, 6, 3, 1), -1, 1, 0},
    {"mul_mat x^T x", b_mul_mat_same, NULL, 1, S1(5, 4, 1, 1), -1, 1, 0},
    {"mul_mat past one panel", b_mul_mat, NULL, 2, S2(5, 70, 1, 1, 5, 8, 1, 1), -1, 1, 0},
    {"out_prod", b_out_prod, NULL, 2, S2(4, 6, 1, 1, 5, 6, 1, 1), -1, 1, 0},
    {"out_prod n=1", b_out_prod, NULL, 2, S2(4, 1, 1, 1, 3, 1, 1, 1), -1, 1, 0},
    {"out_prod batched", b_out_prod, NULL, 2, S2(3, 5, 2, 2, 4, 5, 2, 2), -1, 1, 0},
    {"out_prod broadcast dims 2,3 [3,4,2,1] x [2,4,6,3]", b_out_prod, NULL, 2, S2(3, 4, 2, 1, 2, 4, 6, 3), -1, 1, 0},
    {"out_prod broadcast dims 2,3 [3,4,2,3] x [2,4,4,6]", b_out_prod, NULL, 2, S2(3, 4, 2, 3, 2, 4, 4, 6), -1, 1, 0},
    {"out_prod b transposed, broadcast", b_out_prod_tb, NULL, 2, S2(4, 6, 1, 1, 6, 5, 3, 1), -1, 1, 0},
    {"out_prod past one panel", b_out_prod, NULL, 2, S2(70, 5, 1, 1, 8, 5, 1, 1), -1, 1, 0},
    {"out_prod x x^T", b_out_prod_same, NULL, 1, S1(5, 4, 1, 1), -1, 1, 0},
    {"soft_max", b_soft_max, NULL, 1, S1(7, 5, 3, 1), -1, 1, 0},
    {"soft_max of transposed", b_soft_max_transposed, NULL, 1, S1(5, 7, 2, 1), -1, 1, 0},
    {"soft_max_ext F32 mask, scale", b_soft_max_ext, &k_sm_f32, 1, S1(7, 5, 3, 1), -1, 1, 0},
    {"soft_max_ext F16 mask planes, scale", b_soft_max_ext, &k_sm_f16, 1, S1(7, 5, 3, 2), -1, 1, 0},
    {"soft_max_ext ALiBi", b_soft_max_ext, &k_sm_alibi, 1, S1(7, 5, 6, 1), -1, 1, 0},
    {"attention chain", b_attention, NULL, 3, S3(4, 3, 1, 1, 4, 5, 1, 1, 5, 4, 1, 1), -1, 1, 0},
    {"mlp chain", b_mlp, NULL, 3, S3(4, 6, 1, 1, 4, 3, 1, 1, 6, 1, 1, 1), -1, 1, 0},
    {"layer norm chain", b_layer_norm, NULL, 1, S1(6, 4, 2, 1), -1, 1, 0},
    {"log/sqrt/div chain", b_log_chain, NULL, 2, S2(5, 3, 2, 1, 5, 3, 2, 1), 0.5, 2, 0},
    {"repeat/repeat_back chain", b_repeat_chain, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
    {"param used twice: sum(x*x) + sum(x)", b_used_twice, NULL, 1, S1(5, 3, 2, 2), -1, 1, 0},
};

int main(void) {
    tc_seed(7);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct gcase * c = &cases[i];
        const int bad = tc_gradcheck(c->name, c->build, (void *) c->user, c->n_params, c->shapes, c->lo, c->hi,
                                     c->eps > 0 ? c->eps : 1e-2, 1e-3, 1e-2);
        printf("%-50s %s\n", c->name, bad ? "FAILED" : "ok");
    }
    return tc_finish("ops_backward");
}

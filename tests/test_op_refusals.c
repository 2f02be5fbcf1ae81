/* test_op_refusals.c -- what the op constructors refuse and what a compute
 * refuses: every bad argument (NULL, wrong type or shape, bad parameters)
 * gives NULL with a message; an index or class label out of range fails the
 * compute with a message (with 1 and 3 threads) and skips the nodes after
 * it, and the next valid graph computes normally. The op table
 * (tests/test_ops.c) checks what the ops compute. */
#include "common/test_common.h"
#include "ops/ops_internal.h"  /* white-box: the internal backward ops */

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define NTH 3

#define N_ACT 40
static struct ggml_tensor * (*const act_fns[N_ACT])(struct ggml_context *, struct ggml_tensor *) = {
    ggml_neg, ggml_tanh, ggml_relu, ggml_sigmoid, ggml_gelu, ggml_silu, ggml_exp, ggml_gelu_erf, ggml_gelu_quick,
    ggml_abs, ggml_sgn, ggml_step, ggml_elu, ggml_hardswish, ggml_hardsigmoid, ggml_expm1, ggml_softplus,
    ggml_floor, ggml_ceil, ggml_round, ggml_trunc,
    ggml_abs_inplace, ggml_sgn_inplace, ggml_neg_inplace, ggml_step_inplace, ggml_tanh_inplace, ggml_elu_inplace,
    ggml_relu_inplace, ggml_sigmoid_inplace, ggml_gelu_inplace, ggml_gelu_quick_inplace, ggml_silu_inplace,
    ggml_exp_inplace, ggml_expm1_inplace, ggml_softplus_inplace, ggml_gelu_erf_inplace, ggml_floor_inplace,
    ggml_ceil_inplace, ggml_round_inplace, ggml_trunc_inplace};

static enum ggml_status run(struct ggml_context * ctx, struct ggml_tensor * out, int nth) {
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(g, out);
    return ggml_graph_compute_with_ctx(ctx, g, nth);
}

/* Poison out, compute it, and check the status. */
static bool compute_ok(struct ggml_context * ctx, struct ggml_tensor * out, const char * what) {
    if (!CHECK(out != NULL, "%s: constructor returned NULL: %s", what, ggml_last_error())) return false;
    if (out->type != GGML_TYPE_I32) tc_poison(out);
    return CHECK(run(ctx, out, NTH) == GGML_STATUS_SUCCESS, "%s: compute failed: %s", what, ggml_last_error());
}

/* An I32 tensor [ne0, ne1, ne2] of the given values, or of uniform values in [0, hi) when vals is NULL. */
static struct ggml_tensor * indices(struct ggml_context * ctx, int64_t ne0, int64_t ne1, int64_t ne2, const int32_t * vals, int hi) {
    struct ggml_tensor * t = ggml_new_tensor_3d(ctx, GGML_TYPE_I32, ne0, ne1, ne2);
    int32_t * d = t->data;
    for (int64_t i = 0; i < ggml_nelements(t); i++) d[i] = vals ? vals[i] : tc_randint(0, hi - 1);
    return t;
}

static struct ggml_tensor * rand_tensor(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4], double lo, double hi) {
    struct ggml_tensor * t = ggml_new_tensor(ctx, type, 4, ne);
    tc_fill_uniform(t, lo, hi);
    return t;
}

static int32_t idx_at(const struct ggml_tensor * b, int64_t j, int64_t i2, int64_t i3) {
    return ((const int32_t *) b->data)[j + b->ne[0] * (i2 + b->ne[1] * i3)];
}

/* reference: out[i0, j, i2, i3] = a[i0, b[j, i2, i3], i2, i3], compared exactly */
static void check_get_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, const char * what) {
    struct ggml_tensor * out = ggml_get_rows(ctx, a, b);
    if (!compute_ok(ctx, out, what)) return;
    CHECK(out->ne[0] == a->ne[0] && out->ne[1] == b->ne[0] && out->ne[2] == b->ne[1] && out->ne[3] == b->ne[2], "%s: result shape", what);
    CHECK(out->type == (a->type == GGML_TYPE_I32 ? GGML_TYPE_I32 : GGML_TYPE_F32), "%s: result type %s", what, ggml_type_name(out->type));
    int bad = 0;
    for (int64_t i3 = 0; i3 < out->ne[3]; i3++) for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
    for (int64_t j = 0; j < out->ne[1]; j++) for (int64_t i0 = 0; i0 < out->ne[0]; i0++) {
        const double want = ggml_get_f32_nd(a, (int) i0, idx_at(b, j, i2, i3), (int) i2, (int) i3);
        if (ggml_get_f32_nd(out, (int) i0, (int) j, (int) i2, (int) i3) != want) bad++;
    }
    CHECK(bad == 0, "%s: %d elements differ from the rows they should copy", what, bad);
}

/* out's compute fails with a message containing `expect`, with 1 and 3 threads;
 * `after` (a node computed after out) is skipped: it stays poisoned. */
static void check_fails(struct ggml_context * ctx, struct ggml_tensor * out, const char * expect, const char * what) {
    if (!CHECK(out != NULL, "%s: constructor returned NULL: %s", what, ggml_last_error())) return;
    struct ggml_tensor * after = ggml_scale(ctx, ggml_sum(ctx, out), 2.0f);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(g, out);
    ggml_build_forward_expand(g, after);
    for (int nth = 1; nth <= 3; nth += 2) {
        tc_poison(after);
        ggml_clear_error();
        const enum ggml_status st = ggml_graph_compute_with_ctx(ctx, g, nth);
        CHECK(st == GGML_STATUS_FAILED, "%s (%d threads): status %d, want GGML_STATUS_FAILED", what, nth, (int) st);
        CHECK(strstr(ggml_last_error(), expect) != NULL, "%s (%d threads): message '%s' lacks '%s'", what, nth, ggml_last_error(), expect);
        CHECK(isnan(ggml_get_f32_1d(after, 0)), "%s (%d threads): a node after the failure was computed", what, nth);
    }
}

#define EXPECT_NULL(expr, what)                                                                                       \
    do {                                                                                                              \
        ggml_clear_error();                                                                                           \
        struct ggml_tensor * r_ = (expr);                                                                             \
        CHECK(r_ == NULL && ggml_last_error()[0] != '\0', "%s: want NULL with a message (got %p, '%s')", what, (void *) r_, ggml_last_error()); \
    } while (0)

static void expect_refused(struct ggml_tensor * t, const char * what) {
    CHECK(t == NULL && ggml_last_error()[0] != '\0', "%s: should be refused with a message", what);
    ggml_clear_error();
}

static void test_out_of_range(void) {
    struct ggml_context * ctx = tc_ctx(16);
    const int64_t ne[4] = {5, 4, 1, 1}, nb[4] = {5, 4, 2, 1};
    struct ggml_tensor * table = rand_tensor(ctx, GGML_TYPE_F32, ne, -1, 1), * table_b = rand_tensor(ctx, GGML_TYPE_F32, nb, -1, 1);
    const int32_t neg[3] = {0, -1, 2}, past[3] = {3, 4, 0}, huge[3] = {INT32_MIN, 0, INT32_MAX};
    check_fails(ctx, ggml_get_rows(ctx, table, indices(ctx, 3, 1, 1, neg, 0)), "index -1", "get_rows index -1");
    check_fails(ctx, ggml_get_rows(ctx, table, indices(ctx, 3, 1, 1, past, 0)), "index 4", "get_rows index = rows");
    check_fails(ctx, ggml_get_rows(ctx, table, indices(ctx, 3, 1, 1, huge, 0)), "outside [0, 4)", "get_rows INT32_MIN / MAX");
    const int32_t batched_bad[6] = {0, 1, 2, 3, 3, 4};  /* the bad one is in the second batch */
    check_fails(ctx, ggml_get_rows(ctx, table_b, indices(ctx, 3, 2, 1, batched_bad, 0)), "index 4", "get_rows batched index = rows");
    const int64_t gne[4] = {5, 3, 1, 1};
    check_fails(ctx, ggml_get_rows_back(ctx, rand_tensor(ctx, GGML_TYPE_F32, gne, -1, 1), indices(ctx, 3, 1, 1, neg, 0), table),
                "index -1", "get_rows_back index -1");
    check_fails(ctx, ggml_get_rows_back(ctx, rand_tensor(ctx, GGML_TYPE_F32, gne, -1, 1), indices(ctx, 3, 1, 1, past, 0), table),
                "index 4", "get_rows_back index = rows");
    const int32_t cls_neg[4] = {0, 1, -1, 2}, cls_past[4] = {0, 5, 1, 2};  /* 5 classes */
    check_fails(ctx, ggml_cross_entropy_loss(ctx, table, indices(ctx, 4, 1, 1, cls_neg, 0)), "class -1", "cross_entropy class -1");
    check_fails(ctx, ggml_cross_entropy_loss(ctx, table, indices(ctx, 4, 1, 1, cls_past, 0)), "class 5", "cross_entropy class = classes");
    check_fails(ctx, ggml_cross_entropy_loss_back(ctx, ggml_new_f32(ctx, 1), table, indices(ctx, 4, 1, 1, cls_past, 0)), "class 5",
                "cross_entropy_back class = classes");
    /* after all that, a valid graph computes normally */
    const int32_t ok[3] = {3, 0, 3};
    check_get_rows(ctx, table, indices(ctx, 3, 1, 1, ok, 0), "get_rows after failures");
    ggml_free(ctx);
}

static void test_bad_arguments(void) {
    struct ggml_context * ctx = tc_ctx(16);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 4), * a3 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 5, 4, 2);
    struct ggml_tensor * idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3), * fidx = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    struct ggml_tensor * idx2 = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 2), * idx4 = ggml_new_tensor_4d(ctx, GGML_TYPE_I32, 3, 1, 1, 2);
    EXPECT_NULL(ggml_get_rows(NULL, a, idx), "get_rows NULL context");
    EXPECT_NULL(ggml_get_rows(ctx, NULL, idx), "get_rows NULL a");
    EXPECT_NULL(ggml_get_rows(ctx, a, NULL), "get_rows NULL b");
    EXPECT_NULL(ggml_get_rows(ctx, a, fidx), "get_rows F32 indices");
    EXPECT_NULL(ggml_get_rows(ctx, a, idx2), "get_rows b->ne[1] != a->ne[2]");
    EXPECT_NULL(ggml_get_rows(ctx, a3, idx), "get_rows a->ne[2] != b->ne[1]");
    EXPECT_NULL(ggml_get_rows(ctx, a, idx4), "get_rows 4-D indices");
    struct ggml_tensor * gb = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    EXPECT_NULL(ggml_get_rows_back(ctx, gb, idx, NULL), "get_rows_back NULL c");
    EXPECT_NULL(ggml_get_rows_back(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3), idx, a), "get_rows_back ne0 mismatch");
    EXPECT_NULL(ggml_get_rows_back(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 2), idx, a), "get_rows_back a->ne[1] < b->ne[0]");
    EXPECT_NULL(ggml_get_rows_back(ctx, gb, fidx, a), "get_rows_back F32 indices");
    EXPECT_NULL(ggml_get_rows_back(ctx, gb, idx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 0)), "get_rows_back c without rows");
    struct ggml_tensor * labels_i = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4);
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, a, NULL), "cross_entropy NULL labels");
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5)), "cross_entropy dense labels of another shape");
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 5, 4)), "cross_entropy F16 labels");
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, a, ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 5)), "cross_entropy I32 labels, wrong row count");
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, a3, labels_i), "cross_entropy I32 labels, missing dims");
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 5, 4), labels_i), "cross_entropy F16 logits");
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 0, 4), labels_i), "cross_entropy no classes");
    EXPECT_NULL(ggml_cross_entropy_loss_back(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2), a, labels_i), "cross_entropy_back a gradient of 2 elements");
    EXPECT_NULL(ggml_cross_entropy_loss_back(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1), a, labels_i), "cross_entropy_back I32 gradient");
    EXPECT_NULL(ggml_cross_entropy_loss_back(ctx, NULL, a, labels_i), "cross_entropy_back NULL gradient");
    EXPECT_NULL(ggml_cross_entropy_loss_back(ctx, ggml_new_f32(ctx, 1), labels_i, a), "cross_entropy_back logits and labels swapped");
    EXPECT_NULL(ggml_argmax(ctx, a3), "argmax 3-D");
    EXPECT_NULL(ggml_argmax(ctx, idx2), "argmax I32");
    EXPECT_NULL(ggml_argmax(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 0, 3)), "argmax empty rows");
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 4), * g = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 4);
    struct ggml_tensor * m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 4), * v = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 4);
    struct ggml_tensor * hp7 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7), * hp2 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    EXPECT_NULL(ggml_opt_step_adamw(ctx, w, g, m, v, hp7), "adamw on a tensor that is not a parameter");
    ggml_set_param(w);
    CHECK(ggml_opt_step_adamw(ctx, w, g, m, v, hp7) != NULL, "adamw valid call: %s", ggml_last_error());
    EXPECT_NULL(ggml_opt_step_adamw(ctx, w, g, m, NULL, hp7), "adamw NULL v");
    EXPECT_NULL(ggml_opt_step_adamw(ctx, w, g, m, v, hp2), "adamw 2 hyper-parameters");
    EXPECT_NULL(ggml_opt_step_adamw(ctx, w, g, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5), v, hp7), "adamw m of another shape");
    EXPECT_NULL(ggml_opt_step_adamw(ctx, w, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 5, 4), m, v, hp7), "adamw F16 gradient");
    EXPECT_NULL(ggml_opt_step_adamw(ctx, w, ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5)), m, v, hp7), "adamw strided gradient");
    struct ggml_tensor * wt = ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5));
    ggml_set_param(wt);
    EXPECT_NULL(ggml_opt_step_adamw(ctx, wt, g, m, v, hp7), "adamw strided weights");
    CHECK(ggml_opt_step_sgd(ctx, w, g, hp2) != NULL, "sgd valid call: %s", ggml_last_error());
    EXPECT_NULL(ggml_opt_step_sgd(ctx, w, g, hp7), "sgd 7 hyper-parameters");
    EXPECT_NULL(ggml_opt_step_sgd(ctx, w, g, ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 2)), "sgd F16 hyper-parameters");
    EXPECT_NULL(ggml_opt_step_sgd(ctx, w, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 20), hp2), "sgd gradient of another shape");
    ggml_free(ctx);
}

static void test_nn_errors(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3), * h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 3);
    struct ggml_tensor * other = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 4);
    struct ggml_tensor * ints = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 4, 3);  /* activations take F32, F16 and BF16 */
    for (int k = 0; k < N_ACT; k++) {
        EXPECT_NULL(act_fns[k](ctx, NULL), "activation of NULL");
        EXPECT_NULL(act_fns[k](NULL, x), "activation without a context");
        EXPECT_NULL(act_fns[k](ctx, ints), "activation of I32");
    }
    static const int bad_ops[] = {22, 23, 100, -1, INT_MAX};
    for (size_t i = 0; i < sizeof bad_ops / sizeof bad_ops[0]; i++) {
        EXPECT_NULL(ggml_unary(ctx, x, (enum ggml_unary_op) bad_ops[i]), "ggml_unary with an unknown op");
        EXPECT_NULL(ggml_unary_inplace(ctx, x, (enum ggml_unary_op) bad_ops[i]), "ggml_unary_inplace with an unknown op");
        EXPECT_NULL(ggmlr_unary_back(ctx, x, x, &(const struct ggmlr_unary_params) {.op = bad_ops[i]}), "unary_back with an unknown op");
        CHECK(strcmp(ggml_unary_op_name((enum ggml_unary_op) bad_ops[i]), "UNKNOWN") == 0, "name of unknown unary op %d", bad_ops[i]);
    }
    /* XIELU's parameters are not in ggml_unary's arguments */
    EXPECT_NULL(ggml_unary(ctx, x, GGML_UNARY_OP_XIELU), "ggml_unary with XIELU");
    EXPECT_NULL(ggml_unary_inplace(ctx, x, GGML_UNARY_OP_XIELU), "ggml_unary_inplace with XIELU");
    static const float bad_xielu[] = {NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad_xielu / sizeof bad_xielu[0]; i++) {
        EXPECT_NULL(ggml_xielu(ctx, x, bad_xielu[i], 0.8f, 0.5f, -1e-6f), "xielu with a non-finite alpha_n");
        EXPECT_NULL(ggml_xielu(ctx, x, 0.8f, bad_xielu[i], 0.5f, -1e-6f), "xielu with a non-finite alpha_p");
        EXPECT_NULL(ggml_xielu(ctx, x, 0.8f, 0.8f, bad_xielu[i], -1e-6f), "xielu with a non-finite beta");
        EXPECT_NULL(ggml_xielu(ctx, x, 0.8f, 0.8f, 0.5f, bad_xielu[i]), "xielu with a non-finite eps");
    }
    EXPECT_NULL(ggml_xielu(ctx, NULL, 0.8f, 0.8f, 0.5f, -1e-6f), "xielu of NULL");
    EXPECT_NULL(ggml_xielu(ctx, ints, 0.8f, 0.8f, 0.5f, -1e-6f), "xielu of I32");
    static const char * const names[GGML_UNARY_OP_COUNT] = {"ABS", "SGN", "NEG", "STEP", "TANH", "ELU", "RELU", "SIGMOID",
        "GELU", "GELU_QUICK", "SILU", "HARDSWISH", "HARDSIGMOID", "EXP", "EXPM1", "SOFTPLUS", "GELU_ERF", "XIELU", "FLOOR",
        "CEIL", "ROUND", "TRUNC"};  /* upstream's, by number */
    for (int op = 0; op < GGML_UNARY_OP_COUNT; op++)
        CHECK(strcmp(ggml_unary_op_name((enum ggml_unary_op) op), names[op]) == 0, "unary op %d is %s", op, names[op]);
    ggml_clear_error();
    CHECK(ggml_get_unary_op(x) == GGML_UNARY_OP_COUNT && ggml_last_error()[0], "get_unary_op of a non-UNARY tensor: COUNT and a message");
    ggml_clear_error();
    CHECK(ggml_get_unary_op(NULL) == GGML_UNARY_OP_COUNT && ggml_last_error()[0], "get_unary_op of NULL");
    const struct ggmlr_unary_params gelu = {.op = GGML_UNARY_OP_GELU};
    EXPECT_NULL(ggmlr_unary_back(ctx, x, other, &gelu), "unary_back of mismatched shapes");
    EXPECT_NULL(ggmlr_unary_back(ctx, x, h, &gelu), "unary_back of F16 x");
    static const float bad_eps[] = {-1e-5f, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad_eps / sizeof bad_eps[0]; i++) {
        EXPECT_NULL(ggml_norm(ctx, x, bad_eps[i]), "norm with a bad eps");
        EXPECT_NULL(ggml_rms_norm(ctx, x, bad_eps[i]), "rms_norm with a bad eps");
        EXPECT_NULL(ggml_rms_norm_back(ctx, x, x, bad_eps[i]), "rms_norm_back with a bad eps");
        EXPECT_NULL(ggmlr_norm_back(ctx, x, x, bad_eps[i]), "norm_back with a bad eps");
    }
    EXPECT_NULL(ggml_norm(ctx, NULL, 1e-5f), "norm of NULL");
    EXPECT_NULL(ggml_rms_norm(NULL, x, 1e-5f), "rms_norm without a context");
    EXPECT_NULL(ggml_norm(ctx, h, 1e-5f), "norm of F16");
    EXPECT_NULL(ggml_rms_norm_back(ctx, x, other, 1e-5f), "rms_norm_back of mismatched shapes");
    EXPECT_NULL(ggml_rms_norm_back(ctx, h, x, 1e-5f), "rms_norm_back of F16 dy");
    EXPECT_NULL(ggml_rms_norm_back(ctx, x, NULL, 1e-5f), "rms_norm_back of NULL x");
    EXPECT_NULL(ggml_soft_max_ext_back(ctx, x, NULL, 1.0f, 0.0f), "soft_max_ext_back of NULL y");
    EXPECT_NULL(ggml_soft_max_ext_back(ctx, x, other, 1.0f, 0.0f), "soft_max_ext_back of mismatched shapes");
    EXPECT_NULL(ggml_soft_max_ext_back(ctx, x, h, 1.0f, 0.0f), "soft_max_ext_back of F16 y");
    EXPECT_NULL(ggml_soft_max_ext_back(ctx, x, x, NAN, 0.0f), "soft_max_ext_back with a NaN scale");
    EXPECT_NULL(ggml_soft_max_ext_back(ctx, x, x, 1.0f, -1.0f), "soft_max_ext_back with max_bias < 0");
    EXPECT_NULL(ggml_soft_max_ext_back(NULL, x, x, 1.0f, 0.0f), "soft_max_ext_back without a context");
    ggml_free(ctx);
}

static void test_rope_errors(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 2, 5), * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 5);
    struct ggml_tensor * xbf = ggml_new_tensor_3d(ctx, GGML_TYPE_BF16, 8, 2, 5), * pos_f = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);
    struct ggml_tensor * pos_short = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4), * pos_2d = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 5, 2);
    struct ggml_tensor * ff_short = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3), * ff_i32 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4);
    struct ggml_tensor * ff_2d = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2);
    const float nan = NAN, inf = INFINITY;
    for (int back = 0; back < 2; back++) {
        struct ggml_tensor * (*rope)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, int, int, int,
                                     float, float, float, float, float, float) = back ? ggml_rope_ext_back : ggml_rope_ext;
        ggml_clear_error();
        CHECK(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1) != NULL, "a valid call works: %s", ggml_last_error());
        CHECK(rope(ctx, x, pos, NULL, 2, 2, 4096, 10000, 0.5f, 1, 1, 32, 1) != NULL, "a valid YaRN call works: %s", ggml_last_error());
        expect_refused(rope(NULL, x, pos, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "NULL context");
        expect_refused(rope(ctx, NULL, pos, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "NULL a");
        expect_refused(rope(ctx, x, NULL, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "NULL positions");
        expect_refused(rope(ctx, xbf, pos, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "BF16 a (upstream's CPU backend takes F32 and F16)");
        expect_refused(rope(ctx, x, pos_f, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "F32 positions");
        expect_refused(rope(ctx, x, pos_short, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "positions shorter than ne2");
        expect_refused(rope(ctx, x, pos_2d, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "2-D positions");
        expect_refused(rope(ctx, x, pos, ff_short, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "frequency factors shorter than n_dims/2");
        expect_refused(rope(ctx, x, pos, ff_i32, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "I32 frequency factors");
        expect_refused(rope(ctx, x, pos, ff_2d, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "2-D frequency factors");
        const int bad_modes[] = {1, 3, 4, 8, 24, -1, INT_MAX};
        for (size_t i = 0; i < sizeof bad_modes / sizeof bad_modes[0]; i++)
            expect_refused(rope(ctx, x, pos, NULL, 8, bad_modes[i], 0, 10000, 1, 0, 1, 32, 1), "mode other than 0 / 2");
        const int bad_dims[] = {7, 1, 0, -2, 10, INT_MAX, INT_MIN};
        for (size_t i = 0; i < sizeof bad_dims / sizeof bad_dims[0]; i++)
            expect_refused(rope(ctx, x, pos, NULL, bad_dims[i], 0, 0, 10000, 1, 0, 1, 32, 1), "odd, non-positive or too large n_dims");
        const float bad_base[] = {0, -10000, nan, inf, -inf};
        for (size_t i = 0; i < sizeof bad_base / sizeof bad_base[0]; i++)
            expect_refused(rope(ctx, x, pos, NULL, 8, 0, 0, bad_base[i], 1, 0, 1, 32, 1), "freq_base <= 0 or not finite");
        const float bad_scale[] = {0, -1, nan, inf};
        for (size_t i = 0; i < sizeof bad_scale / sizeof bad_scale[0]; i++)
            expect_refused(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, bad_scale[i], 0, 1, 32, 1), "freq_scale <= 0 or not finite");
        expect_refused(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, 1, nan, 1, 32, 1), "NaN ext_factor");
        expect_refused(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, 1, 0, inf, 32, 1), "Inf attn_factor");
        expect_refused(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, 1, 0, 1, nan, 1), "NaN beta_fast");
        expect_refused(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, -inf), "-Inf beta_slow");
        /* YaRN takes any n_ctx_orig, beta_fast, beta_slow and freq_base > 0, as upstream (its correction dims for them) */
        CHECK(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, 0.5f, 1, 1, 32, 1) != NULL, "YaRN with n_ctx_orig 0 works: %s", ggml_last_error());
        CHECK(rope(ctx, x, pos, NULL, 8, 0, 4096, 10000, 0.5f, 1, 1, 0, 1) != NULL, "YaRN with beta_fast 0 works: %s", ggml_last_error());
        CHECK(rope(ctx, x, pos, NULL, 8, 0, 4096, 1, 0.5f, 1, 1, 32, 1) != NULL, "YaRN with freq_base 1 works: %s", ggml_last_error());
    }
    ggml_free(ctx);
}

static void test_out_prod_errors(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3), * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 2);
    CHECK(ggml_out_prod(ctx, a, b) == NULL && strstr(ggml_last_error(), "ne[1]"), "out_prod refuses a->ne[1] != b->ne[1]");
    CHECK(ggml_out_prod(ctx, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2), ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 5, 3, 3)) == NULL,
          "out_prod refuses planes of b that are not a multiple of a's");
    CHECK(ggml_out_prod(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3), ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 32, 3)) == NULL,
          "out_prod refuses a quantized second operand (the first may be a stored weight: test_weight_types; the second F32, F16 or BF16)");
    CHECK(ggml_out_prod(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3), ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 5, 3)) == NULL,
          "out_prod refuses an I32 second operand");
    CHECK(ggml_out_prod(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 4, 3), ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3)) == NULL,
          "out_prod refuses an I32 first operand");
    ggml_free(ctx);
}

/* add1, sin, cos, clamp, leaky_relu, silu_back, group_norm, l2_norm, cumsum, count_equal, argsort, top_k:
 * NULL inputs, types, shapes, parameters */
static void test_elementwise_errors(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3), * h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 3);
    struct ggml_tensor * one = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1), * two = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor * other = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 4);
    struct ggml_tensor * ints = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 4);  /* F16 and BF16 are taken, as upstream */
    EXPECT_NULL(ggml_add1(ctx, x, two), "add1 of a b with 2 elements");
    EXPECT_NULL(ggml_add1(ctx, x, x), "add1 of a b shaped like a");
    EXPECT_NULL(ggml_add1_inplace(ctx, x, two), "add1_inplace of a b with 2 elements");
    EXPECT_NULL(ggml_add1(ctx, NULL, one), "add1 of NULL a");
    EXPECT_NULL(ggml_add1(ctx, x, NULL), "add1 of NULL b");
    EXPECT_NULL(ggml_add1(ctx, ints, one), "add1 of I32 a");
    struct ggml_tensor * (*const fns[])(struct ggml_context *, struct ggml_tensor *) = {ggml_sin, ggml_cos, ggml_sin_inplace, ggml_cos_inplace};
    for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++) {
        EXPECT_NULL(fns[k](ctx, NULL), "sin/cos of NULL");
        EXPECT_NULL(fns[k](NULL, x), "sin/cos without a context");
        EXPECT_NULL(fns[k](ctx, ints), "sin/cos of I32");
    }
    EXPECT_NULL(ggml_clamp(ctx, x, 1.0f, -1.0f), "clamp with min > max");
    EXPECT_NULL(ggml_clamp(ctx, x, NAN, 1.0f), "clamp with a NaN min");
    EXPECT_NULL(ggml_clamp(ctx, x, 0.0f, NAN), "clamp with a NaN max");
    EXPECT_NULL(ggml_clamp(ctx, ints, 0.0f, 1.0f), "clamp of I32");
    CHECK(ggml_clamp(ctx, x, -INFINITY, INFINITY) != NULL, "clamp with infinite bounds");
    EXPECT_NULL(ggml_leaky_relu(ctx, x, NAN, false), "leaky_relu with a NaN slope");
    EXPECT_NULL(ggml_leaky_relu(ctx, x, INFINITY, true), "leaky_relu with an infinite slope");
    EXPECT_NULL(ggml_leaky_relu(ctx, ints, 0.1f, false), "leaky_relu of I32");
    EXPECT_NULL(ggml_silu_back(ctx, x, other), "silu_back of mismatched shapes");
    EXPECT_NULL(ggml_silu_back(ctx, x, h), "silu_back of F16 x");
    EXPECT_NULL(ggml_silu_back(ctx, NULL, x), "silu_back of NULL dy");
    EXPECT_NULL(ggml_group_norm(ctx, x, 0, 1e-5f), "group_norm with 0 groups");
    EXPECT_NULL(ggml_group_norm(ctx, x, -2, 1e-5f), "group_norm with -2 groups");
    EXPECT_NULL(ggml_group_norm(ctx, x, 2, NAN), "group_norm with a NaN eps");
    EXPECT_NULL(ggml_group_norm(ctx, x, 2, -1.0f), "group_norm with a negative eps");
    EXPECT_NULL(ggml_group_norm(ctx, h, 2, 1e-5f), "group_norm of F16");
    EXPECT_NULL(ggml_group_norm(ctx, NULL, 2, 1e-5f), "group_norm of NULL");
    EXPECT_NULL(ggmlr_group_norm_back(ctx, x, other, 2, 1e-5f), "group_norm_back of mismatched shapes");
    EXPECT_NULL(ggmlr_group_norm_back(ctx, NULL, x, 2, 1e-5f), "group_norm_back of NULL dy");
    EXPECT_NULL(ggml_l2_norm(ctx, x, INFINITY), "l2_norm with an infinite eps");
    EXPECT_NULL(ggml_l2_norm(ctx, x, -1e-6f), "l2_norm with a negative eps");
    EXPECT_NULL(ggml_l2_norm(ctx, h, 1e-6f), "l2_norm of F16");
    EXPECT_NULL(ggmlr_l2_norm_back(ctx, x, other, 1e-6f), "l2_norm_back of mismatched shapes");
    struct ggml_tensor * i = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 4, 3), * i_other = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 4);
    EXPECT_NULL(ggml_cumsum(ctx, h), "cumsum of F16");
    EXPECT_NULL(ggml_cumsum(ctx, NULL), "cumsum of NULL");
    EXPECT_NULL(ggml_count_equal(ctx, x, x), "count_equal of F32");
    EXPECT_NULL(ggml_count_equal(ctx, i, i_other), "count_equal of mismatched shapes");
    EXPECT_NULL(ggml_count_equal(ctx, i, NULL), "count_equal of NULL b");
    EXPECT_NULL(ggml_argsort(ctx, x, (enum ggml_sort_order) 2), "argsort with an unknown order");
    EXPECT_NULL(ggml_argsort(ctx, i, GGML_SORT_ORDER_ASC), "argsort of I32");
    EXPECT_NULL(ggml_top_k(ctx, x, 0), "top_k with k 0");
    EXPECT_NULL(ggml_top_k(ctx, x, 5), "top_k with k > ne0");
    EXPECT_NULL(ggml_top_k(ctx, h, 2), "top_k of F16");
    CHECK(ggml_top_k(ctx, x, 4) != NULL, "top_k with k = ne0");
    ggml_free(ctx);
}

/* set_rows, set, the masks and the generators: bad arguments give NULL; an
 * index out of range or a row written twice fails the compute */
static void test_write_mask_fill_errors(void) {
    struct ggml_context * ctx = tc_ctx(16);
    const int64_t na[4] = {5, 4, 2, 1}, nbr[4] = {5, 3, 2, 1};
    struct ggml_tensor * a = rand_tensor(ctx, GGML_TYPE_F32, na, -1, 1), * b = rand_tensor(ctx, GGML_TYPE_F32, nbr, -1, 1);
    const int32_t neg[6] = {0, 1, 2, 0, -1, 3}, past[6] = {0, 4, 1, 0, 1, 2}, twice[6] = {0, 1, 2, 3, 1, 3};
    check_fails(ctx, ggml_set_rows(ctx, a, b, indices(ctx, 3, 2, 1, neg, 0)), "index -1", "set_rows index -1");
    check_fails(ctx, ggml_set_rows(ctx, a, b, indices(ctx, 3, 2, 1, past, 0)), "index 4", "set_rows index = rows");
    check_fails(ctx, ggml_set_rows(ctx, a, b, indices(ctx, 3, 2, 1, twice, 0)), "row 3 of batch (1, 0) is written twice", "set_rows row twice");
    const int32_t ok[6] = {3, 0, 2, 1, 2, 0};
    struct ggml_tensor * c = indices(ctx, 3, 2, 1, ok, 0), * c3 = indices(ctx, 3, 3, 1, NULL, 4), * c2 = indices(ctx, 2, 2, 1, NULL, 4);
    struct ggml_tensor * a16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 5, 4, 2, 1), * bi = ggml_new_tensor_4d(ctx, GGML_TYPE_I32, 5, 3, 2, 1);
    EXPECT_NULL(ggml_set_rows(NULL, a, b, c), "set_rows NULL context");
    EXPECT_NULL(ggml_set_rows(ctx, NULL, b, c), "set_rows NULL a");
    EXPECT_NULL(ggml_set_rows(ctx, a, b, NULL), "set_rows NULL c");
    EXPECT_NULL(ggml_set_rows(ctx, a, bi, c), "set_rows I32 b");
    EXPECT_NULL(ggml_set_rows(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_I32, 5, 4, 2, 1), b, c), "set_rows I32 a");
    EXPECT_NULL(ggml_set_rows(ctx, a, b, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 2, 1)), "set_rows F32 indices");
    EXPECT_NULL(ggml_set_rows(ctx, a, b, c2), "set_rows c->ne[0] != b->ne[1]");
    EXPECT_NULL(ggml_set_rows(ctx, a, b, c3), "set_rows ne2 % ne11 != 0");
    EXPECT_NULL(ggml_set_rows(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 4, 2, 1), b, c), "set_rows ne0 mismatch");
    EXPECT_NULL(ggml_set_rows(ctx, ggml_transpose(ctx, a16), b, c), "set_rows a's rows not packed");
    /* set: the region inside a, in int32 slots, of a's type */
    EXPECT_NULL(ggml_set(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], 24), "set region past the end");
    EXPECT_NULL(ggml_set(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], 2), "set misaligned offset");
    EXPECT_NULL(ggml_set(ctx, a, bi, a->nb[1], a->nb[2], a->nb[3], 0), "set b of another type");
    EXPECT_NULL(ggml_set_1d(ctx, a16, a16, 0), "set F16");
    EXPECT_NULL(ggml_set(ctx, a, b, (size_t) INT32_MAX + 4, a->nb[2], a->nb[3], 0), "set stride past int32");
    EXPECT_NULL(ggml_set_2d(ctx, ggml_transpose(ctx, a), b, a->nb[1], 0), "set non-contiguous a");
    EXPECT_NULL(ggml_set_1d_inplace(ctx, NULL, b, 0), "set_1d_inplace NULL a");
    /* masks */
    EXPECT_NULL(ggml_diag_mask_inf(ctx, a, -1), "diag_mask_inf n_past < 0");
    EXPECT_NULL(ggml_diag_mask_zero_inplace(ctx, a16, 0), "diag_mask_zero F16");
    EXPECT_NULL(ggml_diag(ctx, a), "diag of a matrix");
    EXPECT_NULL(ggml_tri(ctx, a, GGML_TRI_TYPE_LOWER), "tri non-square");
    EXPECT_NULL(ggml_tri(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 3), (enum ggml_tri_type) 4), "tri unknown type");
    /* generators */
    EXPECT_NULL(ggml_fill(ctx, bi, 1.0f), "fill I32");
    EXPECT_NULL(ggml_fill_inplace(ctx, ggml_transpose(ctx, a), 1.0f), "fill_inplace non-contiguous");
    EXPECT_NULL(ggml_arange(ctx, 1.0f, 1.0f, 1.0f), "arange stop == start");
    EXPECT_NULL(ggml_arange(ctx, 0.0f, 4.0f, -1.0f), "arange step < 0");
    EXPECT_NULL(ggml_arange(ctx, 0.0f, 4.0f, 0.0f), "arange step 0");
    EXPECT_NULL(ggml_arange(ctx, 0.0f, INFINITY, 1.0f), "arange stop Inf");
    EXPECT_NULL(ggml_arange(NULL, 0.0f, 4.0f, 1.0f), "arange NULL context");
    ggml_free(ctx);
}

/* add_id and mul_mat_id: shapes as upstream's; an expert id out of range fails the compute */
static void test_moe_errors(void) {
    struct ggml_context * ctx = tc_ctx(16);
    const int64_t na[4] = {6, 2, 3, 1}, nb[4] = {6, 4, 1, 1}, nas[4] = {6, 5, 4, 1}, nbm[4] = {6, 1, 3, 1};
    struct ggml_tensor * a = rand_tensor(ctx, GGML_TYPE_F32, na, -1, 1), * b = rand_tensor(ctx, GGML_TYPE_F32, nb, -1, 1);
    struct ggml_tensor * as = rand_tensor(ctx, GGML_TYPE_F32, nas, -1, 1), * bm = rand_tensor(ctx, GGML_TYPE_F32, nbm, -1, 1);
    const int32_t neg[6] = {0, 1, 2, 3, -1, 0}, past[6] = {0, 1, 4, 3, 2, 0}, ok[6] = {0, 1, 2, 3, 3, 0};
    check_fails(ctx, ggml_add_id(ctx, a, b, indices(ctx, 2, 3, 1, neg, 0)), "expert id -1", "add_id id -1");
    check_fails(ctx, ggml_add_id(ctx, a, b, indices(ctx, 2, 3, 1, past, 0)), "expert id 4", "add_id id = experts");
    check_fails(ctx, ggml_mul_mat_id(ctx, as, bm, indices(ctx, 2, 3, 1, neg, 0)), "expert id -1", "mul_mat_id id -1");
    check_fails(ctx, ggml_mul_mat_id(ctx, as, bm, indices(ctx, 2, 3, 1, past, 0)), "expert id 4", "mul_mat_id id = experts");
    struct ggml_tensor * ids = indices(ctx, 2, 3, 1, ok, 0);
    EXPECT_NULL(ggml_add_id(NULL, a, b, ids), "add_id NULL context");
    EXPECT_NULL(ggml_add_id(ctx, a, b, NULL), "add_id NULL ids");
    EXPECT_NULL(ggml_add_id(ctx, a, b, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 3)), "add_id F32 ids");
    EXPECT_NULL(ggml_add_id(ctx, a, b, indices(ctx, 3, 2, 1, NULL, 4)), "add_id ids [3,2] for a [6,2,3]");
    EXPECT_NULL(ggml_add_id(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 4), ids), "add_id b->ne[0] != a->ne[0]");
    EXPECT_NULL(ggml_add_id(ctx, a, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 6, 4, 2), ids), "add_id 3-D b");
    EXPECT_NULL(ggml_mul_mat_id(ctx, as, bm, NULL), "mul_mat_id NULL ids");
    EXPECT_NULL(ggml_mul_mat_id(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 5, 4, 2), bm, ids), "mul_mat_id 4-D as");
    EXPECT_NULL(ggml_mul_mat_id(ctx, as, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 5, 1, 3), ids), "mul_mat_id K mismatch");
    EXPECT_NULL(ggml_mul_mat_id(ctx, as, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 6, 3, 3), ids), "mul_mat_id n_used % n_b != 0");
    EXPECT_NULL(ggml_mul_mat_id(ctx, as, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 6, 1, 2), ids), "mul_mat_id tokens mismatch");
    EXPECT_NULL(ggml_mul_mat_id(ctx, as, bm, indices(ctx, 2, 3, 2, NULL, 4)), "mul_mat_id 3-D ids");
    /* roll and timestep_embedding: upstream's bounds */
    EXPECT_NULL(ggml_roll(ctx, a, 6, 0, 0, 0), "roll shift0 = ne0");
    EXPECT_NULL(ggml_roll(ctx, a, 0, -2, 0, 0), "roll shift1 = -ne1");
    EXPECT_NULL(ggml_roll(ctx, a, 0, 0, 0, 1), "roll shift3 with ne3 = 1");
    EXPECT_NULL(ggml_roll(ctx, ids, 0, 0, 0, 0), "roll I32");
    EXPECT_NULL(ggml_timestep_embedding(ctx, a, 8, 10000), "timestep_embedding of a matrix");
    EXPECT_NULL(ggml_timestep_embedding(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4), 0, 10000), "timestep_embedding dim 0");
    EXPECT_NULL(ggml_timestep_embedding(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4), 8, 0), "timestep_embedding max_period 0");
    ggml_free(ctx);
}

/* upstream's other forms of existing ops (ggml.h's block after the optimizer steps) */
static void test_other_forms_errors(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2), * xt = ggml_transpose(ctx, x);
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
    EXPECT_NULL(ggml_norm_inplace(ctx, xt, 1e-5f), "norm_inplace of a transposed view");
    EXPECT_NULL(ggml_group_norm_inplace(ctx, xt, 2, 1e-5f), "group_norm_inplace of a transposed view");
    EXPECT_NULL(ggml_soft_max_inplace(ctx, xt), "soft_max_inplace of a transposed view");
    EXPECT_NULL(ggml_rope_inplace(ctx, xt, pos, 2, 0), "rope_inplace of a transposed view");
    EXPECT_NULL(ggml_rope(ctx, x, pos, 4, 1), "rope with mode 1");
    EXPECT_NULL(ggml_cont_4d(ctx, x, 5, 5, 1, 1), "cont_4d to 25 of 24 elements");
    EXPECT_NULL(ggml_cont_2d(ctx, x, -4, -6), "cont_2d with negative sizes");
    EXPECT_NULL(ggml_cont_4d(ctx, x, INT64_MAX, INT64_MAX, 2, 2), "cont_4d whose count overflows");
    EXPECT_NULL(ggml_repeat_4d(ctx, x, 6, 3, 2, 1), "repeat_4d to 6 of 4");
    EXPECT_NULL(ggml_repeat_4d(ctx, x, INT64_MAX / 4 * 4, INT64_MAX / 3 * 3, 2, 1), "repeat_4d whose count overflows");
    EXPECT_NULL(ggml_argsort_top_k(ctx, x, 5), "argsort_top_k with k > ne0");
    EXPECT_NULL(ggml_scale_bias(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3), 1.0f, 0.0f), "scale_bias of I32");
    /* the void forms leave their tensor as it was, with a message */
    struct ggml_tensor * sm = ggml_soft_max(ctx, x), * sinks3 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    ggml_clear_error();
    ggml_soft_max_add_sinks(sm, sinks3);
    CHECK(ggml_last_error()[0] != '\0' && ggmlr_soft_max_sinks_decode(sm) == NULL, "add_sinks with 3 sinks for 2 heads: a message, no sinks");
    ggml_clear_error();
    ggml_soft_max_add_sinks(x, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2));
    CHECK(ggml_last_error()[0] != '\0' && ggmlr_soft_max_sinks_decode(x) == NULL, "add_sinks to a tensor that is no soft_max: a message");
    ggml_clear_error();
    ggml_soft_max_add_sinks(sm, ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 2));
    CHECK(ggml_last_error()[0] != '\0' && ggmlr_soft_max_sinks_decode(sm) == NULL, "add_sinks of F16 sinks: a message");
    ggml_clear_error();
    ggml_mul_mat_set_prec(x, GGML_PREC_F32);
    CHECK(ggml_last_error()[0] != '\0', "mul_mat_set_prec of a tensor that is no mul_mat: a message");
    ggml_clear_error();
    struct ggml_tensor * mm = ggml_mul_mat(ctx, x, x);
    ggml_mul_mat_set_prec(mm, GGML_PREC_F32);
    ggml_mul_mat_set_hint(mm, GGML_HINT_NONE);
    CHECK(ggml_last_error()[0] == '\0', "mul_mat_set_prec / _hint of a mul_mat: accepted");
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 2, 1), * kv = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 5, 2, 1);
    struct ggml_tensor * fa = ggml_flash_attn_ext(ctx, q, kv, kv, NULL, 0.5f, 0.0f, 0.0f);
    CHECK(fa && ggml_flash_attn_ext_get_prec(fa) == GGML_PREC_DEFAULT, "flash_attn_ext's precision is DEFAULT at first");
    ggml_flash_attn_ext_set_prec(fa, GGML_PREC_F32);
    CHECK(ggml_flash_attn_ext_get_prec(fa) == GGML_PREC_F32 && ggmlr_flash_attn_params_decode(fa).scale == 0.5f, "set_prec F32 is read back, the scale kept");
    ggml_clear_error();
    ggml_flash_attn_ext_set_prec(mm, GGML_PREC_F32);
    CHECK(ggml_last_error()[0] != '\0', "flash_attn_ext_set_prec of a mul_mat: a message");
    EXPECT_NULL(ggml_rope(ctx, x, pos, 4, GGML_ROPE_TYPE_MROPE), "rope with mode MROPE");
    ggml_free(ctx);
}

int main(void) {
    tc_seed(20240611);
    test_other_forms_errors();
    test_out_of_range();
    test_bad_arguments();
    test_nn_errors();
    test_rope_errors();
    test_out_prod_errors();
    test_elementwise_errors();
    test_write_mask_fill_errors();
    test_moe_errors();
    return tc_finish("op_refusals");
}

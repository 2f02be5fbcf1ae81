/* reduce.c -- reductions and broadcasting: sum, sum_rows, mean, cumsum,
 * repeat, repeat_back (its adjoint), argmax, count_equal, argsort, top_k,
 * and the backward rules (kernel: cpu/kernels/reduce.c; the integer results
 * have none: autodiff refuses them). Notation as in copy.c. */
#include "ops/grad.h"

struct ggml_tensor * ggml_sum(struct ggml_context * ctx, struct ggml_tensor * a) {
    REQUIRE_CTX("ggml_sum"); REQUIRE("ggml_sum", a); REQUIRE_F32("ggml_sum", a);
    const int64_t ne[4] = {1, 1, 1, 1};
    return ggmlr_new_node(ctx, GGML_OP_SUM, GGML_TYPE_F32, ne, a, NULL);
}

static struct ggml_tensor * row_reduce(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    const int64_t ne[4] = {1, a->ne[1], a->ne[2], a->ne[3]};
    return ggmlr_new_node(ctx, op, GGML_TYPE_F32, ne, a, NULL);
}

struct ggml_tensor * ggml_sum_rows(struct ggml_context * ctx, struct ggml_tensor * a) { return row_reduce("ggml_sum_rows", ctx, GGML_OP_SUM_ROWS, a); }

struct ggml_tensor * ggml_mean(struct ggml_context * ctx, struct ggml_tensor * a)     { return row_reduce("ggml_mean", ctx, GGML_OP_MEAN, a); }

/* repeat tiles elements of any of upstream's repeat types unchanged; the result has a's type */
static bool check_repeat_type(const char * fn, const struct ggml_tensor * a) {
    if (a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16 || a->type == GGML_TYPE_BF16 || a->type == GGML_TYPE_I32 ||
        a->type == GGML_TYPE_I16) return true;
    ggmlr_fail_type(fn, "a", a, "F32, F16, BF16, I32 or I16");
    return false;
}

struct ggml_tensor * ggml_repeat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE_CTX("ggml_repeat"); REQUIRE("ggml_repeat", a); REQUIRE("ggml_repeat", b);
    if (!check_repeat_type("ggml_repeat", a)) return NULL;
    if (!ggml_can_repeat(a, b)) return ggmlr_fail_shapes("ggml_repeat", "b's shape must be a multiple of a's", a, b);
    return ggmlr_new_node(ctx, GGML_OP_REPEAT, a->type, b->ne, a, NULL);
}

/* a tiled to ne0..ne3, each a multiple of a's (a zero size only where a's is zero) */
struct ggml_tensor * ggml_repeat_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const char * fn = "ggml_repeat_4d";
    REQUIRE_CTX(fn); REQUIRE(fn, a);
    if (!check_repeat_type(fn, a)) return NULL;
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    double bound = 1.0;
    for (int i = 0; i < 4; i++) {
        const bool multiple = a->ne[i] == 0 ? ne[i] == 0 : ne[i] >= 0 && ne[i] % a->ne[i] == 0;
        if (!multiple) {
            ggmlr_set_error("%s: ne[%d] = %lld must be a multiple of a->ne[%d] = %lld", fn, i, (long long) ne[i], i, (long long) a->ne[i]);
            return NULL;
        }
        bound *= (double) ne[i];
    }
    if (!ggmlr_check_size_bound(fn, bound)) return NULL;
    return ggmlr_new_node(ctx, GGML_OP_REPEAT, a->type, ne, a, NULL);
}

struct ggml_tensor * ggml_repeat_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE_CTX("ggml_repeat_back"); REQUIRE("ggml_repeat_back", a); REQUIRE("ggml_repeat_back", b); REQUIRE_F32("ggml_repeat_back", a);
    if (!ggml_can_repeat(b, a)) return ggmlr_fail_shapes("ggml_repeat_back", "a's shape must be a multiple of b's", a, b);
    return ggmlr_new_node(ctx, GGML_OP_REPEAT_BACK, GGML_TYPE_F32, b->ne, a, NULL);
}

struct ggml_tensor * ggml_argmax(struct ggml_context * ctx, struct ggml_tensor * a) {
    const char * fn = "ggml_argmax";
    REQUIRE_CTX(fn); REQUIRE(fn, a);
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16) return ggmlr_fail_type(fn, "a", a, "F32 or F16");
    if (a->ne[2] != 1 || a->ne[3] != 1) { ggmlr_set_error("%s: a must be a matrix (got ne2 = %lld, ne3 = %lld)", fn, (long long) a->ne[2], (long long) a->ne[3]); return NULL; }
    if (a->ne[0] < 1 || a->ne[0] > INT32_MAX) { ggmlr_set_error("%s: rows must have 1 to INT32_MAX elements (got %lld)", fn, (long long) a->ne[0]); return NULL; }
    const int64_t ne[4] = {a->ne[1], 1, 1, 1};
    return ggmlr_new_node(ctx, GGML_OP_ARGMAX, GGML_TYPE_I32, ne, a, NULL);
}

struct ggml_tensor * ggml_cumsum(struct ggml_context * ctx, struct ggml_tensor * a) {
    const char * fn = "ggml_cumsum";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    return ggmlr_new_node(ctx, GGML_OP_CUMSUM, GGML_TYPE_F32, a->ne, a, NULL);
}

struct ggml_tensor * ggml_count_equal(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_count_equal";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (a->type != GGML_TYPE_I32) return ggmlr_fail_type(fn, "a", a, "I32");
    if (b->type != GGML_TYPE_I32) return ggmlr_fail_type(fn, "b", b, "I32");
    if (!ggml_are_same_shape(a, b)) return ggmlr_fail_shapes(fn, "a and b must have the same shape", a, b);
    if (ggml_nelements(a) > INT32_MAX) { ggmlr_set_error("%s: more than INT32_MAX elements: the I32 count could overflow", fn); return NULL; }
    const int64_t ne[4] = {1, 1, 1, 1};
    return ggmlr_new_node(ctx, GGML_OP_COUNT_EQUAL, GGML_TYPE_I32, ne, a, b);
}

/* ARGSORT (all ne0 indices) and TOP_K (k of them): F32 rows of at most INT32_MAX elements */
static struct ggml_tensor * sort_op(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, int k) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (a->ne[0] > INT32_MAX) { ggmlr_set_error("%s: rows of more than INT32_MAX elements (got %lld)", fn, (long long) a->ne[0]); return NULL; }
    if (op == GGML_OP_TOP_K && (k < 1 || k > a->ne[0])) {
        ggmlr_set_error("%s: k = %d must be in 1..ne0 = %lld", fn, k, (long long) a->ne[0]);
        return NULL;
    }
    const int64_t ne[4] = {op == GGML_OP_TOP_K ? k : a->ne[0], a->ne[1], a->ne[2], a->ne[3]};
    return ggmlr_new_node(ctx, op, GGML_TYPE_I32, ne, a, NULL);
}

struct ggml_tensor * ggml_argsort(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_sort_order order) {
    const char * fn = "ggml_argsort";
    if (order != GGML_SORT_ORDER_ASC && order != GGML_SORT_ORDER_DESC) { ggmlr_set_error("%s: unknown sort order %d", fn, (int) order); return NULL; }
    struct ggml_tensor * t = sort_op(fn, ctx, GGML_OP_ARGSORT, a, 0);
    if (t) ggmlr_sort_params_encode(t, order);
    return t;
}

struct ggml_tensor * ggml_top_k(struct ggml_context * ctx, struct ggml_tensor * a, int k) {
    return sort_op("ggml_top_k", ctx, GGML_OP_TOP_K, a, k);
}

/* upstream's: the first k columns (a view) of the descending argsort */
struct ggml_tensor * ggml_argsort_top_k(struct ggml_context * ctx, struct ggml_tensor * a, int k) {
    const char * fn = "ggml_argsort_top_k";
    REQUIRE_CTX(fn); REQUIRE(fn, a);
    if (k < 0 || k > a->ne[0]) { ggmlr_set_error("%s: k = %d must be in 0..ne0 = %lld", fn, k, (long long) a->ne[0]); return NULL; }
    struct ggml_tensor * s = ggml_argsort(ctx, a, GGML_SORT_ORDER_DESC);
    return s ? ggml_view_4d(ctx, s, k, s->ne[1], s->ne[2], s->ne[3], s->nb[1], s->nb[2], s->nb[3], 0) : NULL;
}

/* ---- backward ---- */

RULE(grad_sum) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_repeat(ctx, g, A)); }

RULE(grad_mean) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_scale(ctx, ggml_repeat(ctx, g, A), 1.0f / (float) A->ne[0])); }

RULE(grad_repeat) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_repeat_back(ctx, g, A)); }

RULE(grad_repeat_back) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_repeat(ctx, g, A)); }

/* dx_i = sum_{j >= i} g_j (the reverse cumsum) = g_i - cumsum(g)_i + sum(g) */
RULE(grad_cumsum) {
    if (!need[0]) return true;
    return ggmlr_grad_acc(ctx, gph, A, ggml_add(ctx, ggml_sub(ctx, g, ggml_cumsum(ctx, g)), ggml_sum_rows(ctx, g)));
}

GRAD_RULE(sum, NULL, grad_sum);
GRAD_RULE(cumsum, NULL, grad_cumsum);
GRAD_RULE(mean, NULL, grad_mean);
GRAD_RULE(repeat, NULL, grad_repeat);
GRAD_RULE(repeat_back, NULL, grad_repeat_back);

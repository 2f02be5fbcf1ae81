/* reduce.c -- reductions and broadcasting: sum, sum_rows, mean, repeat,
 * repeat_back (its adjoint), argmax, and their backward rules (kernel:
 * cpu/kernels/reduce.c). Notation as in copy.c. */
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

struct ggml_tensor * ggml_repeat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE_CTX("ggml_repeat"); REQUIRE("ggml_repeat", a); REQUIRE("ggml_repeat", b); REQUIRE_F32("ggml_repeat", a);
    if (!ggml_can_repeat(a, b)) return ggmlr_fail_shapes("ggml_repeat", "b's shape must be a multiple of a's", a, b);
    return ggmlr_new_node(ctx, GGML_OP_REPEAT, GGML_TYPE_F32, b->ne, a, NULL);
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

/* ---- backward ---- */

RULE(grad_sum) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_repeat(ctx, g, A)); }

RULE(grad_mean) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_scale(ctx, ggml_repeat(ctx, g, A), 1.0f / (float) A->ne[0])); }

RULE(grad_repeat) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_repeat_back(ctx, g, A)); }

RULE(grad_repeat_back) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_repeat(ctx, g, A)); }

GRAD_RULE(sum, NULL, grad_sum);
GRAD_RULE(mean, NULL, grad_mean);
GRAD_RULE(repeat, NULL, grad_repeat);
GRAD_RULE(repeat_back, NULL, grad_repeat_back);

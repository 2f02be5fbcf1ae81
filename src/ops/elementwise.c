/* elementwise.c -- add, sub, mul, div (b broadcast over a: its gradient is
 * summed back down), sqr, sqrt, log, scale, and their backward rules
 * (kernel: cpu/kernels/elementwise.c). Notation as in copy.c. */
#include "ops/grad.h"

static struct ggml_tensor * binary_op(const char * fn, struct ggml_context * ctx, enum ggml_op op,
                                      struct ggml_tensor * a, struct ggml_tensor * b, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    REQUIRE_F32(fn, a); REQUIRE_F32(fn, b);
    if (!ggml_can_repeat(b, a)) return ggmlr_fail_shapes(fn, "b must broadcast over a (each a->ne[i] a multiple of b->ne[i])", a, b);
    struct ggml_tensor * t = inplace ? ggmlr_new_view(fn, ctx, a, op, a->ne, a->nb, 0) : ggmlr_new_node(ctx, op, GGML_TYPE_F32, a->ne, a, b);
    if (!t) return NULL;
    t->src[0] = a;
    t->src[1] = b;
    return t;
}

struct ggml_tensor * ggml_add(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_add", ctx, GGML_OP_ADD, a, b, false); }

struct ggml_tensor * ggml_sub(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_sub", ctx, GGML_OP_SUB, a, b, false); }

struct ggml_tensor * ggml_mul(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_mul", ctx, GGML_OP_MUL, a, b, false); }

struct ggml_tensor * ggml_div(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_div", ctx, GGML_OP_DIV, a, b, false); }

struct ggml_tensor * ggml_add_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_add_inplace", ctx, GGML_OP_ADD, a, b, true); }

static struct ggml_tensor * unary_op(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    return ggmlr_new_node(ctx, op, GGML_TYPE_F32, a->ne, a, NULL);
}

struct ggml_tensor * ggml_sqr(struct ggml_context * ctx, struct ggml_tensor * a)  { return unary_op("ggml_sqr", ctx, GGML_OP_SQR, a); }

struct ggml_tensor * ggml_sqrt(struct ggml_context * ctx, struct ggml_tensor * a) { return unary_op("ggml_sqrt", ctx, GGML_OP_SQRT, a); }

struct ggml_tensor * ggml_log(struct ggml_context * ctx, struct ggml_tensor * a)  { return unary_op("ggml_log", ctx, GGML_OP_LOG, a); }

struct ggml_tensor * ggml_scale(struct ggml_context * ctx, struct ggml_tensor * a, float s) {
    struct ggml_tensor * t = unary_op("ggml_scale", ctx, GGML_OP_SCALE, a);
    if (t) ggmlr_f32_param_encode(t, s);
    return t;
}

/* ---- backward ---- */

RULE(grad_add) {
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, g)) return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, ggmlr_grad_reduce_to(ctx, g, B));
}

RULE(grad_sub) {
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, g)) return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, ggml_scale(ctx, ggmlr_grad_reduce_to(ctx, g, B), -1.0f));
}

RULE(grad_mul) {
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, ggml_mul(ctx, g, B))) return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, ggmlr_grad_reduce_to(ctx, ggml_mul(ctx, g, A), B));
}

/* d(a/b)/db = -(a/b)/b */
RULE(grad_div) {
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, ggml_div(ctx, g, B))) return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, ggml_scale(ctx, ggmlr_grad_reduce_to(ctx, ggml_mul(ctx, g, ggml_div(ctx, node, B)), B), -1.0f));
}

RULE(grad_sqr) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_mul(ctx, ggml_scale(ctx, A, 2.0f), g)); }

/* d sqrt(a) = 1 / (2 sqrt(a)) */
RULE(grad_sqrt) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_div(ctx, ggml_scale(ctx, g, 0.5f), node)); }

RULE(grad_log) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_div(ctx, g, A)); }

RULE(grad_scale) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_scale(ctx, g, ggmlr_f32_param_decode(node))); }

GRAD_RULE(add, NULL, grad_add);
GRAD_RULE(sub, NULL, grad_sub);
GRAD_RULE(mul, NULL, grad_mul);
GRAD_RULE(div, NULL, grad_div);
GRAD_RULE(sqr, NULL, grad_sqr);
GRAD_RULE(sqrt, NULL, grad_sqrt);
GRAD_RULE(log, NULL, grad_log);
GRAD_RULE(scale, NULL, grad_scale);

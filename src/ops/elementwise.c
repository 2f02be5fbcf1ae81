/* elementwise.c -- add, sub, mul, div (b broadcast over a: its gradient is
 * summed back down), add_id (b's rows picked by expert ids), sqr, sqrt, log, scale, and their backward rules
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

/* dst[:, i1, i2, i3] = a[:, i1, i2, i3] + b[:, ids[i1, i2]] (the biases of the experts a token's rows went to) */
struct ggml_tensor * ggml_add_id(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * ids) {
    const char * fn = "ggml_add_id";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b); REQUIRE(fn, ids);
    REQUIRE_F32(fn, a); REQUIRE_F32(fn, b);
    if (ids->type != GGML_TYPE_I32) return ggmlr_fail_type(fn, "ids", ids, "I32");
    if (a->ne[0] != b->ne[0] || b->ne[2] != 1 || b->ne[3] != 1) return ggmlr_fail_shapes(fn, "b must be [a->ne[0], n_expert]", a, b);
    if (ids->ne[0] != a->ne[1] || ids->ne[1] != a->ne[2] || ids->ne[2] != 1 || ids->ne[3] != 1)
        return ggmlr_fail_shapes(fn, "ids must be [a->ne[1], a->ne[2]]", a, ids);
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_ADD_ID, GGML_TYPE_F32, a->ne, a, b);
    if (t) ggmlr_expert_ids_encode(t, ids);
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

/* y = a + b[:, ids]: da = g, db = g's rows added into b's rows ids[i1, i2] */
static const char * refuse_add_id(const struct ggml_tensor * node, const bool * need) {
    if (need[2]) return "ADD_ID: the expert ids are integers and have no gradient";
    if (need[1] && A->ne[3] != 1) return "ADD_ID: b's gradient needs a with ne3 == 1";
    return NULL;
}

RULE(grad_add_id) {
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, g)) return false;
    if (!need[1]) return true;
    struct ggml_tensor * gc = ggmlr_grad_contiguous(ctx, g);
    struct ggml_tensor * g2 = gc ? ggml_reshape_2d(ctx, gc, g->ne[0], g->ne[1] * g->ne[2]) : NULL;
    return ggmlr_grad_acc(ctx, gph, B, ggmlr_scatter_by_ids(ctx, g2, ggmlr_expert_ids_decode(node), B->ne[1]));
}

GRAD_RULE(add, NULL, grad_add);
GRAD_RULE(add_id, refuse_add_id, grad_add_id);
GRAD_RULE(sub, NULL, grad_sub);
GRAD_RULE(mul, NULL, grad_mul);
GRAD_RULE(div, NULL, grad_div);
GRAD_RULE(sqr, NULL, grad_sqr);
GRAD_RULE(sqrt, NULL, grad_sqrt);
GRAD_RULE(log, NULL, grad_log);
GRAD_RULE(scale, NULL, grad_scale);

/* elementwise.c -- add, sub, mul, div (b broadcast over a: its gradient is
 * summed back down), add_id (b's rows picked by expert ids), add1 (a + the
 * scalar b), sqr, sqrt, log, sin, cos, scale, scale_bias, clamp, leaky_relu, the
 * _inplace forms upstream has of those, and their backward rules (kernel:
 * cpu/kernels/elementwise.c). Notation as in copy.c. */
#include "ops/grad.h"

#include <math.h>

static struct ggml_tensor * binary_op(const char * fn, struct ggml_context * ctx, enum ggml_op op,
                                      struct ggml_tensor * a, struct ggml_tensor * b, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    REQUIRE_FLOAT(fn, a); REQUIRE_FLOAT(fn, b);
    if (!ggml_can_repeat(b, a)) return ggmlr_fail_shapes(fn, "b must broadcast over a (each a->ne[i] a multiple of b->ne[i])", a, b);
    /* the result has a's type (upstream) */
    struct ggml_tensor * t = inplace ? ggmlr_new_view(fn, ctx, a, op, a->ne, a->nb, 0) : ggmlr_new_node(ctx, op, a->type, a->ne, a, b);
    if (!t) return NULL;
    t->src[0] = a;
    t->src[1] = b;
    return t;
}

struct ggml_tensor * ggml_add(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_add", ctx, GGML_OP_ADD, a, b, false); }

/* a + b with a result of type `type` (F32, F16 or BF16): a of another type
 * is widened to F32 first. Upstream makes one ADD node with that result
 * type; here it is add then a copy (CPY) when the type is not F32. */
struct ggml_tensor * ggml_add_cast(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, enum ggml_type type) {
    REQUIRE_CTX("ggml_add_cast"); REQUIRE("ggml_add_cast", a); REQUIRE("ggml_add_cast", b);
    if (type != GGML_TYPE_F32 && type != GGML_TYPE_F16 && type != GGML_TYPE_BF16) {
        ggmlr_set_error("ggml_add_cast: the result's type must be F32, F16 or BF16 (got %s)", ggml_type_name(type));
        return NULL;
    }
    struct ggml_tensor * wide = a->type == GGML_TYPE_F32 ? a : ggml_cast(ctx, a, GGML_TYPE_F32);
    struct ggml_tensor * sum = wide ? ggml_add(ctx, wide, b) : NULL;
    return sum && type != GGML_TYPE_F32 ? ggml_cast(ctx, sum, type) : sum;
}

struct ggml_tensor * ggml_sub(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_sub", ctx, GGML_OP_SUB, a, b, false); }

struct ggml_tensor * ggml_mul(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_mul", ctx, GGML_OP_MUL, a, b, false); }

struct ggml_tensor * ggml_div(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_div", ctx, GGML_OP_DIV, a, b, false); }

struct ggml_tensor * ggml_add_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_add_inplace", ctx, GGML_OP_ADD, a, b, true); }

struct ggml_tensor * ggml_sub_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_sub_inplace", ctx, GGML_OP_SUB, a, b, true); }

struct ggml_tensor * ggml_mul_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_mul_inplace", ctx, GGML_OP_MUL, a, b, true); }

struct ggml_tensor * ggml_div_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_div_inplace", ctx, GGML_OP_DIV, a, b, true); }

/* upstream's add1 (deprecated there for ggml_add): b is one element */
static struct ggml_tensor * add1_op(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (!ggml_is_scalar(b)) return ggmlr_fail_shapes(fn, "b must be a scalar (one element)", a, b);
    return binary_op(fn, ctx, GGML_OP_ADD1, a, b, inplace);
}

struct ggml_tensor * ggml_add1(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return add1_op("ggml_add1", ctx, a, b, false); }

struct ggml_tensor * ggml_add1_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return add1_op("ggml_add1_inplace", ctx, a, b, true); }

/* y = f(a) element by element: a new tensor, or (inplace) a view of a written over it */
static struct ggml_tensor * unary_op(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_FLOAT(fn, a);
    return inplace ? ggmlr_new_view(fn, ctx, a, op, a->ne, a->nb, 0) : ggmlr_new_node(ctx, op, a->type, a->ne, a, NULL);
}

struct ggml_tensor * ggml_sqr(struct ggml_context * ctx, struct ggml_tensor * a)  { return unary_op("ggml_sqr", ctx, GGML_OP_SQR, a, false); }

struct ggml_tensor * ggml_sqrt(struct ggml_context * ctx, struct ggml_tensor * a) { return unary_op("ggml_sqrt", ctx, GGML_OP_SQRT, a, false); }

struct ggml_tensor * ggml_log(struct ggml_context * ctx, struct ggml_tensor * a)  { return unary_op("ggml_log", ctx, GGML_OP_LOG, a, false); }

struct ggml_tensor * ggml_sqr_inplace(struct ggml_context * ctx, struct ggml_tensor * a)  { return unary_op("ggml_sqr_inplace", ctx, GGML_OP_SQR, a, true); }

struct ggml_tensor * ggml_sqrt_inplace(struct ggml_context * ctx, struct ggml_tensor * a) { return unary_op("ggml_sqrt_inplace", ctx, GGML_OP_SQRT, a, true); }

struct ggml_tensor * ggml_log_inplace(struct ggml_context * ctx, struct ggml_tensor * a)  { return unary_op("ggml_log_inplace", ctx, GGML_OP_LOG, a, true); }

struct ggml_tensor * ggml_sin(struct ggml_context * ctx, struct ggml_tensor * a)  { return unary_op("ggml_sin", ctx, GGML_OP_SIN, a, false); }

struct ggml_tensor * ggml_sin_inplace(struct ggml_context * ctx, struct ggml_tensor * a) { return unary_op("ggml_sin_inplace", ctx, GGML_OP_SIN, a, true); }

struct ggml_tensor * ggml_cos(struct ggml_context * ctx, struct ggml_tensor * a)  { return unary_op("ggml_cos", ctx, GGML_OP_COS, a, false); }

struct ggml_tensor * ggml_cos_inplace(struct ggml_context * ctx, struct ggml_tensor * a) { return unary_op("ggml_cos_inplace", ctx, GGML_OP_COS, a, true); }

/* s * a + b (upstream's slots: [0] s, [1] b) */
static struct ggml_tensor * scale_op(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, float s, float b, bool inplace) {
    struct ggml_tensor * t = unary_op(fn, ctx, GGML_OP_SCALE, a, inplace);
    if (t) ggmlr_scale_params_encode(t, &(const struct ggmlr_scale_params) {.s = s, .bias = b});
    return t;
}

struct ggml_tensor * ggml_scale(struct ggml_context * ctx, struct ggml_tensor * a, float s) { return scale_op("ggml_scale", ctx, a, s, 0.0f, false); }

struct ggml_tensor * ggml_scale_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float s) {
    return scale_op("ggml_scale_inplace", ctx, a, s, 0.0f, true);
}

struct ggml_tensor * ggml_scale_bias(struct ggml_context * ctx, struct ggml_tensor * a, float s, float b) {
    return scale_op("ggml_scale_bias", ctx, a, s, b, false);
}

struct ggml_tensor * ggml_scale_bias_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float s, float b) {
    return scale_op("ggml_scale_bias_inplace", ctx, a, s, b, true);
}

/* min(max(a, min), max): a new tensor (upstream's is a view of a, written
 * over it, with a TODO to change that once clamp has a backward: it has) */
struct ggml_tensor * ggml_clamp(struct ggml_context * ctx, struct ggml_tensor * a, float min, float max) {
    const char * fn = "ggml_clamp";
    if (isnan(min) || isnan(max) || min > max) {
        ggmlr_set_error("%s: min %g and max %g must be numbers with min <= max", fn, (double) min, (double) max);
        return NULL;
    }
    struct ggml_tensor * t = unary_op(fn, ctx, GGML_OP_CLAMP, a, false);
    if (t) ggmlr_clamp_params_encode(t, &(const struct ggmlr_clamp_params) {min, max});
    return t;
}

/* a > 0 ? a : negative_slope * a */
struct ggml_tensor * ggml_leaky_relu(struct ggml_context * ctx, struct ggml_tensor * a, float negative_slope, bool inplace) {
    const char * fn = "ggml_leaky_relu";
    if (!isfinite(negative_slope)) {
        ggmlr_set_error("%s: negative_slope %g must be finite", fn, (double) negative_slope);
        return NULL;
    }
    struct ggml_tensor * t = unary_op(fn, ctx, GGML_OP_LEAKY_RELU, a, inplace);
    if (t) ggmlr_f32_param_encode(t, negative_slope);
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

RULE(grad_sin) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_mul(ctx, g, ggml_cos(ctx, A))); }

RULE(grad_cos) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_scale(ctx, ggml_mul(ctx, g, ggml_sin(ctx, A)), -1.0f)); }

/* clamp' = [y == x] (1 inside [min, max], bounds included as in torch; 0
 * outside): dx = g - g [y != x], with [d != 0] = step(|d|) */
RULE(grad_clamp) {
    if (!need[0]) return true;
    return ggmlr_grad_acc(ctx, gph, A, ggml_sub(ctx, g, ggml_mul(ctx, g, ggml_step(ctx, ggml_abs(ctx, ggml_sub(ctx, node, A))))));
}

/* leaky' = s + (1 - s) [x > 0], s the negative slope */
RULE(grad_leaky_relu) {
    if (!need[0]) return true;
    const float s = ggmlr_f32_param_decode(node);
    struct ggml_tensor * pos = ggml_mul(ctx, g, ggml_step(ctx, A));
    return ggmlr_grad_acc(ctx, gph, A, ggml_add(ctx, ggml_scale(ctx, g, s), ggml_scale(ctx, pos, 1.0f - s)));
}

RULE(grad_scale) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_scale(ctx, g, ggmlr_scale_params_decode(node).s)); }

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
/* mul, sqr and log read a, which their _inplace forms overwrite; div and
 * sqrt read only b and the result */
GRAD_RULE(mul, ggmlr_refuse_in_place, grad_mul);
GRAD_RULE(div, NULL, grad_div);
GRAD_RULE(sqr, ggmlr_refuse_in_place, grad_sqr);
GRAD_RULE(sqrt, NULL, grad_sqrt);
GRAD_RULE(log, ggmlr_refuse_in_place, grad_log);
GRAD_RULE(scale, NULL, grad_scale);
/* add1 is add with b broadcast: b's gradient is the sum of g (upstream's rule takes the mean, a TODO there) */
GRAD_RULE(add1, NULL, grad_add);
GRAD_RULE(sin, ggmlr_refuse_in_place, grad_sin);
GRAD_RULE(cos, ggmlr_refuse_in_place, grad_cos);
GRAD_RULE(clamp, NULL, grad_clamp);
GRAD_RULE(leaky_relu, ggmlr_refuse_in_place, grad_leaky_relu);

/* unary.c -- the activations (UNARY: neg, tanh, relu, sigmoid, gelu,
 * gelu_quick, gelu_erf, silu, exp), UNARY_BACK (g * f'(x)) and the backward rule
 * (kernel: cpu/kernels/unary.c). F32; results shaped like the input. */
#include "ops/grad.h"

enum ggml_unary_op ggml_get_unary_op(const struct ggml_tensor * tensor) {
    if (!tensor || (tensor->op != GGML_OP_UNARY && tensor->op != GGML_OP_UNARY_BACK)) {
        ggmlr_set_error("ggml_get_unary_op: tensor is %s, not a UNARY node", tensor ? ggml_op_name(tensor->op) : "NULL");
        return GGML_UNARY_OP_COUNT;
    }
    return ggmlr_unary_params_decode(tensor);
}

static bool check_unary_op(const char * fn, int op) {
    if (ggmlr_unary_op_is_valid(op)) return true;
    ggmlr_set_error("%s: unknown unary op %d (implemented: NEG, TANH, RELU, SIGMOID, GELU, GELU_QUICK, SILU, EXP, GELU_ERF)", fn, op);
    return false;
}

struct ggml_tensor * ggml_unary(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op) {
    const char * fn = "ggml_unary";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (!check_unary_op(fn, op)) return NULL;
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_UNARY, GGML_TYPE_F32, a->ne, a, NULL);
    if (t) ggmlr_unary_params_encode(t, op);
    return t;
}

struct ggml_tensor * ggml_neg(struct ggml_context * ctx, struct ggml_tensor * a)      { return ggml_unary(ctx, a, GGML_UNARY_OP_NEG); }

struct ggml_tensor * ggml_tanh(struct ggml_context * ctx, struct ggml_tensor * a)     { return ggml_unary(ctx, a, GGML_UNARY_OP_TANH); }

struct ggml_tensor * ggml_relu(struct ggml_context * ctx, struct ggml_tensor * a)     { return ggml_unary(ctx, a, GGML_UNARY_OP_RELU); }

struct ggml_tensor * ggml_sigmoid(struct ggml_context * ctx, struct ggml_tensor * a)  { return ggml_unary(ctx, a, GGML_UNARY_OP_SIGMOID); }

struct ggml_tensor * ggml_gelu(struct ggml_context * ctx, struct ggml_tensor * a)     { return ggml_unary(ctx, a, GGML_UNARY_OP_GELU); }

struct ggml_tensor * ggml_gelu_erf(struct ggml_context * ctx, struct ggml_tensor * a) { return ggml_unary(ctx, a, GGML_UNARY_OP_GELU_ERF); }

struct ggml_tensor * ggml_silu(struct ggml_context * ctx, struct ggml_tensor * a)     { return ggml_unary(ctx, a, GGML_UNARY_OP_SILU); }

struct ggml_tensor * ggml_exp(struct ggml_context * ctx, struct ggml_tensor * a)      { return ggml_unary(ctx, a, GGML_UNARY_OP_EXP); }

struct ggml_tensor * ggml_gelu_quick(struct ggml_context * ctx, struct ggml_tensor * a) { return ggml_unary(ctx, a, GGML_UNARY_OP_GELU_QUICK); }

struct ggml_tensor * ggmlr_unary_back(struct ggml_context * ctx, struct ggml_tensor * g, struct ggml_tensor * x, enum ggml_unary_op op) {
    const char * fn = "unary_back";
    REQUIRE_CTX(fn); REQUIRE(fn, g); REQUIRE(fn, x);
    if (!ggmlr_check_same_f32_pair(fn, g, x) || !check_unary_op(fn, op)) return NULL;
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_UNARY_BACK, GGML_TYPE_F32, g->ne, g, x);
    if (t) ggmlr_unary_params_encode(t, op);
    return t;
}

/* ---- backward ---- */

/* dx = g * f'(x) by UNARY_BACK, which evaluates f' at x; for EXP,
 * f' = f, so g * y reuses the forward result. */
RULE(grad_unary) {
    if (!need[0]) return true;
    const enum ggml_unary_op op = ggml_get_unary_op(node);
    struct ggml_tensor * dx = op == GGML_UNARY_OP_EXP ? ggml_mul(ctx, g, node) : ggmlr_unary_back(ctx, g, A, op);
    return ggmlr_grad_acc(ctx, gph, A, dx);
}

GRAD_RULE(unary, NULL, grad_unary);

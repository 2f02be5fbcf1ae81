/* grad_nn.c -- backward rules of the neural-network ops (activations,
 * normalisation, softmax), each one fused backward op (ops_nn.c).
 * Notation as in grad_rules.c: y = node, g = dL/dy. */
#include "autodiff/grad.h"

/* dx = g * f'(x) by UNARY_BACK, which evaluates f' at x; for EXP,
 * f' = f, so g * y reuses the forward result. */
RULE_SIGNATURE(ggmlr_grad_unary) {
    if (!need[0]) return true;
    const enum ggml_unary_op op = ggml_get_unary_op(node);
    struct ggml_tensor * dx = op == GGML_UNARY_OP_EXP ? ggml_mul(ctx, g, node) : ggmlr_unary_back(ctx, g, A, op);
    return ggmlr_grad_acc(ctx, gph, A, dx);
}

RULE_SIGNATURE(ggmlr_grad_norm) {
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggmlr_norm_back(ctx, g, A, ggmlr_get_op_param_f32(node, 0)));
}

RULE_SIGNATURE(ggmlr_grad_rms_norm) {
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_rms_norm_back(ctx, g, A, ggmlr_get_op_param_f32(node, 0)));
}

const char * ggmlr_refuse_soft_max(const struct ggml_tensor * node, const bool * need) {
    (void) node;
    return need[1] ? "SOFT_MAX: the gradient with respect to the mask is not implemented (the mask is a parameter)" : NULL;
}
/* y = softmax(scale*x + mask): dx = scale * y * (g - sum_rows(g*y)), one SOFT_MAX_BACK node */
RULE_SIGNATURE(ggmlr_grad_soft_max) {
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_soft_max_ext_back(ctx, g, node, ggmlr_get_op_param_f32(node, 0),
                                                                          ggmlr_get_op_param_f32(node, 1)));
}

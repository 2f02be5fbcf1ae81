/* grad_rope.c -- backward rule of the rotary embedding (row in grad_rules.c).
 *
 * y = R x per pair, R = m [[cos t, -sin t], [sin t, cos t]] fixed by the
 * position: dx = R^T g, which is ROPE_BACK of g; ROPE_BACK's matrix is R^T, so
 * its gradient is ROPE of g (double backward works). */
#include "autodiff/grad.h"

const char * ggmlr_refuse_rope(const struct ggml_tensor * node, const bool * need) {
    (void) node;
    if (need[1]) return "ROPE: the positions are integers and have no gradient";
    if (need[2]) return "ROPE: the gradient with respect to the frequency factors is not implemented";
    return NULL;
}

RULE_SIGNATURE(ggmlr_grad_rope) {
    const struct ggmlr_rope_params prm = ggmlr_rope_params_of(node);
    const enum ggml_op transpose = node->op == GGML_OP_ROPE ? GGML_OP_ROPE_BACK : GGML_OP_ROPE;
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggmlr_rope_node(ctx, transpose, g, B, node->src[2], &prm));
}

/* grad_train.c -- backward rules of the training ops (rows in grad_rules.c). */
#include "autodiff/grad.h"

/* ---- y = get_rows(a, idx): the rows of g scatter-added back to where they came from ---- */

const char * ggmlr_refuse_get_rows(const struct ggml_tensor * node, const bool * need) {
    if (need[1]) return "GET_ROWS: the indices are integers and have no gradient";
    if (need[0] && A->type == GGML_TYPE_I32) return "GET_ROWS: an I32 table has no gradient";
    return NULL;
}

RULE_SIGNATURE(ggmlr_grad_get_rows) {
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_get_rows_back(ctx, g, B, A));
}

/* ---- L = cross_entropy_loss(z, labels): dz = (softmax(z) sum(p) - p) g / rows ---- */

const char * ggmlr_refuse_cross_entropy_loss(const struct ggml_tensor * node, const bool * need) {
    (void) node;
    return need[1] ? "CROSS_ENTROPY_LOSS: the gradient with respect to the labels is not implemented (the labels are a parameter)" : NULL;
}

RULE_SIGNATURE(ggmlr_grad_cross_entropy_loss) {
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_cross_entropy_loss_back(ctx, A, B, g));
}

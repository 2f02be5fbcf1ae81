/* loss.c -- the cross-entropy loss, its gradient op, and the backward rule
 * (kernel: cpu/kernels/loss.c). */
#include "ops/grad.h"

/* logits a [nc, rows...] F32 with at least one class and one row; labels b
 * F32 shaped like a, or I32 [rows of a] (one class index per row). */
static bool check_cross_entropy(const char * fn, const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->type != GGML_TYPE_F32) { ggmlr_fail_type(fn, "the logits", a, "F32"); return false; }
    if (ggml_nelements(a) == 0) { ggmlr_set_error("%s: the logits are empty (no class or no row)", fn); return false; }
    if (b->type == GGML_TYPE_F32) {
        if (!ggml_are_same_shape(a, b)) { ggmlr_fail_shapes(fn, "F32 labels must be shaped like the logits", a, b); return false; }
    } else if (b->type == GGML_TYPE_I32) {
        if (b->ne[0] != a->ne[1] || b->ne[1] != a->ne[2] || b->ne[2] != a->ne[3] || b->ne[3] != 1) {
            ggmlr_fail_shapes(fn, "I32 labels must be [ne1, ne2, ne3] of the logits (one class per row)", a, b);
            return false;
        }
    } else {
        ggmlr_fail_type(fn, "the labels", b, "F32 (distributions) or I32 (class indices)");
        return false;
    }
    return true;
}

struct ggml_tensor * ggml_cross_entropy_loss(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_cross_entropy_loss";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (!check_cross_entropy(fn, a, b)) return NULL;
    const int64_t ne[4] = {1, 1, 1, 1};
    return ggmlr_new_node(ctx, GGML_OP_CROSS_ENTROPY_LOSS, GGML_TYPE_F32, ne, a, b);
}

/* upstream's order: a the loss's gradient (one element), b the logits, c the
 * labels; the node keeps logits and labels as sources 0, 1 as the loss does */
struct ggml_tensor * ggml_cross_entropy_loss_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c) {
    const char * fn = "ggml_cross_entropy_loss_back";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b); REQUIRE(fn, c);
    REQUIRE_F32(fn, a);
    if (ggml_nelements(a) != 1) { ggmlr_set_error("%s: a (the loss gradient) must have one element (got %lld)", fn, (long long) ggml_nelements(a)); return NULL; }
    if (!check_cross_entropy(fn, b, c)) return NULL;
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_CROSS_ENTROPY_LOSS_BACK, GGML_TYPE_F32, b->ne, b, c);
    if (t) ggmlr_loss_grad_encode(t, a);
    return t;
}

/* ---- backward: L = cross_entropy_loss(z, labels): dz = (softmax(z) sum(p) - p) g / rows ---- */

static const char * refuse_cross_entropy_loss(const struct ggml_tensor * node, const bool * need) {
    (void) node;
    return need[1] ? "CROSS_ENTROPY_LOSS: the gradient with respect to the labels is not implemented (the labels are a parameter)" : NULL;
}

RULE(grad_cross_entropy_loss) {
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_cross_entropy_loss_back(ctx, g, A, B));
}

GRAD_RULE(cross_entropy_loss, refuse_cross_entropy_loss, grad_cross_entropy_loss);

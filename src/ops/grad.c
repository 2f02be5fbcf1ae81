/* grad.c -- how a backward rule adds a source's gradient (ggmlr_grad_acc).
 *
 * A view's gradient is a zero tensor with g in the view's region (an ACC on
 * zeros, the view rule in copy.c). Summed with another gradient x it is x with
 * g added into the region: one ACC instead of a zero fill, the region and an
 * ADD over the whole tensor, for every view past the first (the q, k and v
 * views of a fused projection). The sums are the same, up to the order of the
 * additions where one view's rows overlap (sliding windows).
 *
 * The ACC works in x's own memory when x is private: an ACC that only this
 * gradient slot holds (a view's gradient, or such a sum), marked private_sum
 * (core/op_list.h) until the node's own rule runs (ggmlr_grad_release: from
 * then on the rule may hand it on, unchanged, to other slots, and it is the
 * node's gradient that ggml_graph_get_grad returns). Otherwise it works on a
 * copy of x. */
#include "ops/grad.h"

static bool is_acc_on_zeros(const struct ggml_tensor * t) { return t->op == GGML_OP_ACC && ggmlr_acc_params_decode(t).zero_base; }
static bool is_private(const struct ggml_tensor * t) { return t->op == GGML_OP_ACC && ggmlr_acc_params_decode(t).private_sum; }

static void set_private(struct ggml_tensor * t, bool private_sum) {
    struct ggmlr_acc_params p = ggmlr_acc_params_decode(t);
    p.private_sum = private_sum;
    ggmlr_acc_params_encode(t, &p);
}

void ggmlr_grad_release(struct ggml_tensor * t) {
    if (t && t->op == GGML_OP_ACC) set_private(t, false);
}

void ggmlr_grad_mark_private(struct ggml_tensor * t) {
    if (t) set_private(t, true);
}

static struct ggml_tensor * sum_of_grads(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * y) {
    if (is_acc_on_zeros(x) && !is_acc_on_zeros(y)) { struct ggml_tensor * t = x; x = y; y = t; }
    if (!is_acc_on_zeros(y) || !ggml_is_contiguous(x)) {
        ggmlr_grad_release(x);  /* no longer the slot's sum: the ADD is */
        return ggml_add(ctx, x, y);
    }
    const struct ggmlr_acc_params p = ggmlr_acc_params_decode(y);
    const bool in_place = is_private(x);
    struct ggml_tensor * sum = ggmlr_acc_impl(ctx, x, y->src[1], p.nb1, p.nb2, p.nb3, p.offset, in_place ? ACC_IN_PLACE : ACC_ON_COPY);
    if (sum) {
        ggmlr_grad_release(x);
        ggmlr_grad_mark_private(sum);
    }
    return sum;
}

bool ggmlr_grad_acc(struct ggml_context * ctx, struct ggml_cgraph * gph, struct ggml_tensor * src, struct ggml_tensor * contrib) {
    if (!contrib) return false;
    const size_t slot = ggmlr_hash_find(gph, src);
    if (slot == SIZE_MAX) return true;  /* not part of the graph: nothing to accumulate */
    gph->grads[slot] = gph->grads[slot] ? sum_of_grads(ctx, gph->grads[slot], contrib) : contrib;
    return gph->grads[slot] != NULL;
}

struct ggml_tensor * ggmlr_grad_reduce_to(struct ggml_context * ctx, struct ggml_tensor * g, const struct ggml_tensor * t) {
    return ggml_are_same_shape(g, t) ? g : ggml_repeat_back(ctx, g, (struct ggml_tensor *) t);
}

struct ggml_tensor * ggmlr_grad_contiguous(struct ggml_context * ctx, struct ggml_tensor * t) {
    return ggml_is_contiguous(t) ? t : ggml_cont(ctx, t);
}

const char * ggmlr_refuse_not_f32(const struct ggml_tensor * node, const bool * need) {
    static _Thread_local char msg[160];
    for (int s = 0; s < GGML_MAX_SRC; s++) {
        const struct ggml_tensor * src = node->src[s];
        if (!src || !need[s] || (src->type == GGML_TYPE_F32 && node->type == GGML_TYPE_F32)) continue;
        snprintf(msg, sizeof msg, "%s: an %s %s has no gradient here (gradients are F32: make it F32)", ggml_op_name(node->op),
                 ggml_type_name(src->type == GGML_TYPE_F32 ? node->type : src->type), src->type == GGML_TYPE_F32 ? "result" : "input");
        return msg;
    }
    return NULL;
}

const char * ggmlr_refuse_in_place(const struct ggml_tensor * node, const bool * need) {
    if (!need[0] || !node->view_src) return NULL;
    return "an in-place op (ggml_*_inplace) has overwritten its input, which its gradient needs: use the form without _inplace";
}

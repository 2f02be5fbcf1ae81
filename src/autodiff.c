/* autodiff.c -- reverse-mode differentiation: ggml_build_backward_expand.
 *
 * Gradients are built from ordinary ops (one rule per op below), so the
 * executor needs no special knowledge of them. The loss gradient is a leaf
 * that ggml_graph_reset sets to 1; each parameter gets an accumulator that the
 * backward graph adds into and ggml_graph_reset zeroes (upstream semantics).
 * The build is all-or-nothing: a refusal or a failure leaves the graph as it was. */
#include "internal.h"

#include <stdlib.h>

/* Why node's gradient cannot be built for the sources that need one, or NULL. */
static const char * refusal(const struct ggml_tensor * node, const bool * src_needs) {
    static _Thread_local char msg[256];
    switch (node->op) {
        case GGML_OP_NONE: case GGML_OP_DUP: case GGML_OP_CONT: case GGML_OP_CPY: case GGML_OP_RESHAPE:
        case GGML_OP_PERMUTE: case GGML_OP_TRANSPOSE: case GGML_OP_ADD: case GGML_OP_SUB: case GGML_OP_MUL:
        case GGML_OP_DIV: case GGML_OP_SQR: case GGML_OP_SQRT: case GGML_OP_LOG: case GGML_OP_SCALE:
        case GGML_OP_SUM: case GGML_OP_SUM_ROWS: case GGML_OP_MEAN: case GGML_OP_REPEAT:
        case GGML_OP_REPEAT_BACK: case GGML_OP_ACC: case GGML_OP_MUL_MAT:
            return NULL;
        case GGML_OP_VIEW:
            if (!ggml_is_contiguous(node->src[0])) {
                snprintf(msg, sizeof msg, "VIEW of the non-contiguous tensor '%s' has no backward (ggml_cont it first)", node->src[0]->name);
                return msg;
            }
            return NULL;
        case GGML_OP_SOFT_MAX:
            return src_needs[1] ? "SOFT_MAX: the gradient with respect to the mask is not implemented (the mask is a parameter)" : NULL;
        case GGML_OP_FLASH_ATTN_EXT:
            if (ggmlr_get_op_param_f32(node, 1) > 0)  return "FLASH_ATTN_EXT: backward with max_bias > 0 (ALiBi) is not implemented";
            if (ggmlr_get_op_param_f32(node, 2) != 0) return "FLASH_ATTN_EXT: backward with logit_softcap != 0 is not implemented";
            if (node->src[1]->type != GGML_TYPE_F32 || node->src[2]->type != GGML_TYPE_F32)
                return "FLASH_ATTN_EXT: backward needs F32 K and V (this node has F16 K/V)";
            if (src_needs[3]) return "FLASH_ATTN_EXT: the gradient with respect to the mask is not implemented (the mask is a parameter)";
            return NULL;
        case GGML_OP_FLASH_ATTN_BACK:
            return "FLASH_ATTN_BACK has no backward of its own";
        default:
            snprintf(msg, sizeof msg, "%s has no backward rule", ggml_op_name(node->op));
            return msg;
    }
}

/* g summed down to the shape of t when t was broadcast (ggml's modulo tiling). */
static struct ggml_tensor * reduce_to(struct ggml_context * ctx, struct ggml_tensor * g, const struct ggml_tensor * t) {
    return ggml_are_same_shape(g, t) ? g : ggml_repeat_back(ctx, g, (struct ggml_tensor *) t);
}

static struct ggml_tensor * contiguous(struct ggml_context * ctx, struct ggml_tensor * t) {
    return ggml_is_contiguous(t) ? t : ggml_cont(ctx, t);
}

/* d/da of mul_mat(a, b): [K, M, ne12, ne13], summed over the contiguous groups
 * of b's heads that shared one head of a (mul_mat broadcasts by division). */
static struct ggml_tensor * mul_mat_grad_a(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * g) {
    struct ggml_tensor * full = ggml_mul_mat(ctx, ggml_cont(ctx, ggml_transpose(ctx, b)), ggml_cont(ctx, ggml_transpose(ctx, g)));
    if (!full) return NULL;
    const int64_t km = a->ne[0] * a->ne[1];
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    if (r2 > 1) {
        /* index i12 = i02*r2 + r: view [km, r2, ne02, ne13] and sum over r */
        struct ggml_tensor * v = ggml_reshape_4d(ctx, full, km, r2, a->ne[2], b->ne[3]);
        struct ggml_tensor * shape = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, km, 1, a->ne[2], b->ne[3]);
        full = ggml_repeat_back(ctx, v, shape);
    }
    if (r3 > 1 && full) {
        struct ggml_tensor * v = ggml_reshape_4d(ctx, full, km * a->ne[2], r3, a->ne[3], 1);
        struct ggml_tensor * shape = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, km * a->ne[2], 1, a->ne[3], 1);
        full = ggml_repeat_back(ctx, v, shape);
    }
    return full ? ggml_reshape_4d(ctx, full, a->ne[0], a->ne[1], a->ne[2], a->ne[3]) : NULL;
}

/* Add `contrib` to the gradient of src (hash slot of src). */
static bool accumulate(struct ggml_context * ctx, struct ggml_cgraph * g, struct ggml_tensor * src, struct ggml_tensor * contrib) {
    if (!contrib) return false;
    const size_t slot = ggmlr_hash_find(g, src);
    if (slot == SIZE_MAX) return true;  /* not part of the graph: nothing to accumulate */
    g->grads[slot] = g->grads[slot] ? ggml_add(ctx, g->grads[slot], contrib) : contrib;
    return g->grads[slot] != NULL;
}

/* Contributions of node (with gradient gr) to the gradients of its sources. */
static bool backward_rule(struct ggml_context * ctx, struct ggml_cgraph * g, struct ggml_tensor * node,
                          struct ggml_tensor * gr, const bool * need) {
    struct ggml_tensor * a = node->src[0];
    struct ggml_tensor * b = node->src[1];
    bool ok = true;
    switch (node->op) {
        case GGML_OP_DUP: case GGML_OP_CONT:
            if (need[0]) ok = accumulate(ctx, g, a, gr);
            break;
        case GGML_OP_CPY: case GGML_OP_RESHAPE:  /* b of CPY is overwritten: it gets no gradient */
            if (need[0]) ok = accumulate(ctx, g, a, ggml_reshape(ctx, contiguous(ctx, gr), a));
            break;
        case GGML_OP_VIEW: {
            size_t offset;
            memcpy(&offset, node->op_params, sizeof offset);
            if (need[0]) ok = accumulate(ctx, g, a, ggmlr_acc_impl(ctx, a, contiguous(ctx, gr), node->nb[1], node->nb[2], node->nb[3], offset, true));
            break;
        }
        case GGML_OP_PERMUTE: {
            int inv[4];
            for (int i = 0; i < 4; i++) inv[node->op_params[i]] = i;
            if (need[0]) ok = accumulate(ctx, g, a, ggml_permute(ctx, gr, inv[0], inv[1], inv[2], inv[3]));
            break;
        }
        case GGML_OP_TRANSPOSE:
            if (need[0]) ok = accumulate(ctx, g, a, ggml_transpose(ctx, gr));
            break;
        case GGML_OP_ADD:
            if (need[0]) ok = accumulate(ctx, g, a, gr);
            if (need[1] && ok) ok = accumulate(ctx, g, b, reduce_to(ctx, gr, b));
            break;
        case GGML_OP_SUB:
            if (need[0]) ok = accumulate(ctx, g, a, gr);
            if (need[1] && ok) ok = accumulate(ctx, g, b, ggml_scale(ctx, reduce_to(ctx, gr, b), -1.0f));
            break;
        case GGML_OP_MUL:
            if (need[0]) ok = accumulate(ctx, g, a, ggml_mul(ctx, gr, b));
            if (need[1] && ok) ok = accumulate(ctx, g, b, reduce_to(ctx, ggml_mul(ctx, gr, a), b));
            break;
        case GGML_OP_DIV:  /* d(a/b)/db = -(a/b)/b */
            if (need[0]) ok = accumulate(ctx, g, a, ggml_div(ctx, gr, b));
            if (need[1] && ok) ok = accumulate(ctx, g, b, ggml_scale(ctx, reduce_to(ctx, ggml_mul(ctx, gr, ggml_div(ctx, node, b)), b), -1.0f));
            break;
        case GGML_OP_SQR:
            if (need[0]) ok = accumulate(ctx, g, a, ggml_mul(ctx, ggml_scale(ctx, a, 2.0f), gr));
            break;
        case GGML_OP_SQRT:  /* d sqrt(a) = 1 / (2 sqrt(a)) */
            if (need[0]) ok = accumulate(ctx, g, a, ggml_div(ctx, ggml_scale(ctx, gr, 0.5f), node));
            break;
        case GGML_OP_LOG:
            if (need[0]) ok = accumulate(ctx, g, a, ggml_div(ctx, gr, a));
            break;
        case GGML_OP_SCALE:
            if (need[0]) ok = accumulate(ctx, g, a, ggml_scale(ctx, gr, ggmlr_get_op_param_f32(node, 0)));
            break;
        case GGML_OP_SUM: case GGML_OP_SUM_ROWS:
            if (need[0]) ok = accumulate(ctx, g, a, ggml_repeat(ctx, gr, a));
            break;
        case GGML_OP_MEAN:
            if (need[0]) ok = accumulate(ctx, g, a, ggml_scale(ctx, ggml_repeat(ctx, gr, a), 1.0f / (float) a->ne[0]));
            break;
        case GGML_OP_REPEAT:
            if (need[0]) ok = accumulate(ctx, g, a, ggml_repeat_back(ctx, gr, a));
            break;
        case GGML_OP_REPEAT_BACK:
            if (need[0]) ok = accumulate(ctx, g, a, ggml_repeat(ctx, gr, a));
            break;
        case GGML_OP_ACC: {
            size_t p[4];
            memcpy(p, node->op_params, sizeof p);
            if (need[0] && !node->op_params[8]) ok = accumulate(ctx, g, a, gr);
            if (need[1] && ok) {
                struct ggml_tensor * gc = contiguous(ctx, gr);
                ok = accumulate(ctx, g, b, ggml_view_4d(ctx, gc, b->ne[0], b->ne[1], b->ne[2], b->ne[3], p[0], p[1], p[2], p[3]));
            }
            break;
        }
        case GGML_OP_MUL_MAT:
            if (need[0]) ok = accumulate(ctx, g, a, mul_mat_grad_a(ctx, a, b, gr));
            if (need[1] && ok) ok = accumulate(ctx, g, b, ggml_mul_mat(ctx, ggml_cont(ctx, ggml_transpose(ctx, a)), contiguous(ctx, gr)));
            break;
        case GGML_OP_SOFT_MAX: {
            /* y = softmax(scale*x + mask): dx = scale * y * (g - sum_rows(g*y)) */
            if (need[0]) {
                struct ggml_tensor * dot = ggml_sum_rows(ctx, ggml_mul(ctx, gr, node));
                ok = accumulate(ctx, g, a, ggml_scale(ctx, ggml_mul(ctx, node, ggml_sub(ctx, gr, dot)), ggmlr_get_op_param_f32(node, 0)));
            }
            break;
        }
        case GGML_OP_FLASH_ATTN_EXT: {
            struct ggml_tensor * q = node->src[0], * k = node->src[1], * v = node->src[2];
            struct ggml_tensor * fab = ggmlr_flash_attn_back_saved(ctx, node, gr);
            if (!fab) return false;
            struct ggml_tensor * srcs[3] = {q, k, v};
            size_t offset = 0;
            for (int i = 0; i < 3 && ok; i++) {
                struct ggml_tensor * s = srcs[i];
                if (need[i]) {
                    const size_t es = sizeof(float);
                    struct ggml_tensor * slice = ggml_view_4d(ctx, fab, s->ne[0], s->ne[1], s->ne[2], s->ne[3], es * (size_t) s->ne[0],
                                                              es * (size_t) (s->ne[0] * s->ne[1]), es * (size_t) (s->ne[0] * s->ne[1] * s->ne[2]), offset);
                    ok = accumulate(ctx, g, s, slice);
                }
                offset += (size_t) ggmlr_pad16_floats(ggml_nelements(s)) * sizeof(float);
            }
            break;
        }
        default:
            break;
    }
    return ok;
}

/* Index of t among the graph's nodes, or -1 (a leaf or not in the graph). */
static int node_index(const struct ggml_cgraph * g, const int * index_of_slot, const struct ggml_tensor * t) {
    if (!t) return -1;
    const size_t slot = ggmlr_hash_find(g, t);
    return slot == SIZE_MAX ? -1 : index_of_slot[slot];
}

static enum ggml_status build_backward(struct ggml_context * ctx, struct ggml_cgraph * g, struct ggml_tensor ** grad_accs,
                                       bool * needs, bool * reaches, int * index_of_slot) {
    const int n = g->n_nodes;
    for (size_t s = 0; s < g->hash_size; s++) index_of_slot[s] = -1;
    for (int i = 0; i < n; i++) index_of_slot[ggmlr_hash_find(g, g->nodes[i])] = i;
    /* needs[i]: node i depends on a parameter (sources come first in the order) */
    int n_loss = 0;
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * node = g->nodes[i];
        needs[i] = (node->flags & GGML_TENSOR_FLAG_PARAM) != 0;
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            const int j = node_index(g, index_of_slot, node->src[s]);
            if (j >= 0 && needs[j]) needs[i] = true;
        }
        if (node->flags & GGML_TENSOR_FLAG_LOSS) n_loss++;
    }
    if (n_loss == 0) { ggmlr_set_error("ggml_build_backward_expand: the graph has no loss (mark one with ggml_set_loss)"); return GGML_STATUS_FAILED; }
    /* reaches[i]: node i feeds a loss; check every rule we will need before building anything */
    for (int i = n - 1; i >= 0; i--) {
        struct ggml_tensor * node = g->nodes[i];
        reaches[i] = reaches[i] || (node->flags & GGML_TENSOR_FLAG_LOSS);
        if (!reaches[i] || !needs[i]) continue;
        bool src_needs[GGML_MAX_SRC] = {false};
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            const int j = node_index(g, index_of_slot, node->src[s]);
            if (j >= 0) { src_needs[s] = needs[j]; reaches[j] = true; }
        }
        const char * why = refusal(node, src_needs);
        if (why) { ggmlr_set_error("ggml_build_backward_expand: cannot differentiate node '%s': %s", node->name, why); return GGML_STATUS_FAILED; }
    }
    /* loss gradients: leaves that ggml_graph_reset sets to 1 (zero until then) */
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * node = g->nodes[i];
        if (!(node->flags & GGML_TENSOR_FLAG_LOSS) || !needs[i]) continue;
        struct ggml_tensor * lg = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
        if (!lg) return GGML_STATUS_ALLOC_FAILED;
        ggml_set_name(lg, "loss grad");
        if (lg->data) ggml_set_zero(lg);
        g->grads[ggmlr_hash_find(g, node)] = lg;
    }
    /* reverse sweep */
    for (int i = n - 1; i >= 0; i--) {
        struct ggml_tensor * node = g->nodes[i];
        struct ggml_tensor * gr = g->grads[ggmlr_hash_find(g, node)];
        if (!gr || !needs[i] || node->op == GGML_OP_NONE) continue;
        bool need[GGML_MAX_SRC] = {false};
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            const int j = node_index(g, index_of_slot, node->src[s]);
            need[s] = j >= 0 && needs[j];
        }
        if (!backward_rule(ctx, g, node, gr, need)) return GGML_STATUS_FAILED;
    }
    /* add the gradients to the graph; parameters accumulate into their own tensors */
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * node = g->nodes[i];
        const size_t slot = ggmlr_hash_find(g, node);
        struct ggml_tensor * gr = g->grads[slot];
        if (!gr || !needs[i] || (node->flags & GGML_TENSOR_FLAG_LOSS)) continue;
        if (node->flags & GGML_TENSOR_FLAG_PARAM) {
            struct ggml_tensor * acc = grad_accs && grad_accs[i] ? grad_accs[i] : ggml_new_tensor(ctx, GGML_TYPE_F32, 4, node->ne);
            if (!acc) return GGML_STATUS_ALLOC_FAILED;
            if (!ggml_are_same_shape(acc, node) || acc->type != GGML_TYPE_F32 || !ggml_is_contiguous(acc)) {
                ggmlr_set_error("ggml_build_backward_expand: grad_accs[%d] must be a contiguous F32 tensor shaped like '%s'", i, node->name);
                return GGML_STATUS_FAILED;
            }
            if (acc->data && !(grad_accs && grad_accs[i])) ggml_set_zero(acc);
            struct ggml_tensor * sum = ggml_add_inplace(ctx, acc, gr);
            if (!sum) return GGML_STATUS_ALLOC_FAILED;
            char name[GGML_MAX_NAME + 8];
            snprintf(name, sizeof name, "grad of %s", node->name);
            ggml_set_name(sum, name);
            g->grad_accs[slot] = sum;
            gr = sum;
        }
        if (ggml_build_forward_expand_status(g, gr) != GGML_STATUS_SUCCESS) return GGML_STATUS_FAILED;
    }
    return GGML_STATUS_SUCCESS;
}

enum ggml_status ggml_build_backward_expand(struct ggml_context * ctx, struct ggml_cgraph * g, struct ggml_tensor ** grad_accs) {
    if (!ctx || !g) { ggmlr_set_error("ggml_build_backward_expand: context or graph is NULL"); return GGML_STATUS_FAILED; }
    if (!g->grads) {
        ggmlr_set_error("ggml_build_backward_expand: the graph was created without gradients (use ggml_new_graph_custom(ctx, size, true))");
        return GGML_STATUS_FAILED;
    }
    for (size_t i = 0; i < g->hash_size; i++) {
        if (g->grads[i]) { ggmlr_set_error("ggml_build_backward_expand: this graph already has its backward pass"); return GGML_STATUS_FAILED; }
    }
    const int n_nodes = g->n_nodes, n_leafs = g->n_leafs;
    bool * flags = calloc(2 * (size_t) (n_nodes + 1), sizeof *flags);
    int * index_of_slot = malloc(g->hash_size * sizeof *index_of_slot);
    enum ggml_status st = GGML_STATUS_ALLOC_FAILED;
    if (flags && index_of_slot) st = build_backward(ctx, g, grad_accs, flags, flags + n_nodes + 1, index_of_slot);
    else ggmlr_set_error("ggml_build_backward_expand: out of memory");
    free(flags);
    free(index_of_slot);
    if (st != GGML_STATUS_SUCCESS) {
        /* all or nothing: forget every node and gradient this call added */
        g->n_nodes = n_nodes;
        g->n_leafs = n_leafs;
        memset(g->grads, 0, g->hash_size * sizeof *g->grads);
        memset(g->grad_accs, 0, g->hash_size * sizeof *g->grad_accs);
        ggmlr_graph_rebuild_hash(g);
    }
    return st;
}

/* grad_rules.c -- one backward rule per op (and, next to it, when it refuses).
 *
 * Notation: y = op(a, b, ...) is the node, g = dL/dy its gradient; each rule
 * adds dL/da = g * dy/da (and so on) to the sources that need one. */
#include "autodiff/grad.h"

/* A view's gradient is a zero tensor with g in the view's region (an ACC on
 * zeros, grad_view). Summed with another gradient x it is x with g added into
 * the region: one ACC instead of a zero fill, the region and an ADD over the
 * whole tensor, for every view past the first (the q, k and v views of a fused
 * projection). The sums are the same, up to the order of the additions where
 * one view's rows overlap (sliding windows).
 *
 * The ACC works in x's own memory when x is private: an ACC that only this
 * gradient slot holds (a view's gradient, or such a sum), marked by
 * op_params[PRIVATE_SUM] until the node's own rule runs (ggmlr_grad_release:
 * from then on the rule may hand it on, unchanged, to other slots, and it is
 * the node's gradient that ggml_graph_get_grad returns).
 * Otherwise it works on a copy of x. */
#define PRIVATE_SUM (GGMLR_ACC_ZERO_BASE + 1)   /* the op_params slot after the ACC's own */

static bool is_acc_on_zeros(const struct ggml_tensor * t) { return t->op == GGML_OP_ACC && t->op_params[GGMLR_ACC_ZERO_BASE]; }
static bool is_private(const struct ggml_tensor * t) { return t->op == GGML_OP_ACC && t->op_params[PRIVATE_SUM]; }

void ggmlr_grad_release(struct ggml_tensor * t) {
    if (t && t->op == GGML_OP_ACC) t->op_params[PRIVATE_SUM] = 0;
}

static struct ggml_tensor * sum_of_grads(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * y) {
    if (is_acc_on_zeros(x) && !is_acc_on_zeros(y)) { struct ggml_tensor * t = x; x = y; y = t; }
    if (!is_acc_on_zeros(y) || !ggml_is_contiguous(x)) {
        ggmlr_grad_release(x);  /* no longer the slot's sum: the ADD is */
        return ggml_add(ctx, x, y);
    }
    size_t p[4];
    memcpy(p, y->op_params, sizeof p);
    const bool in_place = is_private(x);
    struct ggml_tensor * sum = ggmlr_acc_impl(ctx, x, y->src[1], p[0], p[1], p[2], p[3], in_place ? ACC_IN_PLACE : ACC_ON_COPY);
    if (sum) {
        ggmlr_grad_release(x);
        sum->op_params[PRIVATE_SUM] = 1;
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

/* ---- copies and layout: the gradient flows back unchanged, re-shaped ---- */

RULE(grad_copy) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, g); }

/* CPY's destination b is overwritten: it gets no gradient */
RULE(grad_reshape) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_reshape(ctx, ggmlr_grad_contiguous(ctx, g), A)); }

static const char * refuse_view(const struct ggml_tensor * node, const bool * need) {
    static _Thread_local char msg[256];
    (void) need;
    if (ggml_is_contiguous(A)) return NULL;
    snprintf(msg, sizeof msg, "VIEW of the non-contiguous tensor '%s' has no backward (ggml_cont it first)", A->name);
    return msg;
}
/* the view's region of a zero tensor shaped like a receives g */
RULE(grad_view) {
    size_t offset;
    memcpy(&offset, node->op_params, sizeof offset);
    if (!need[0]) return true;
    struct ggml_tensor * region = ggmlr_acc_impl(ctx, A, ggmlr_grad_contiguous(ctx, g), node->nb[1], node->nb[2], node->nb[3], offset, ACC_ON_ZEROS);
    if (region) region->op_params[PRIVATE_SUM] = 1;
    return ggmlr_grad_acc(ctx, gph, A, region);
}

RULE(grad_permute) {
    int inv[4];
    for (int i = 0; i < 4; i++) inv[node->op_params[i]] = i;
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_permute(ctx, g, inv[0], inv[1], inv[2], inv[3]));
}

RULE(grad_transpose) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_transpose(ctx, g)); }

/* ---- element-wise (b broadcast over a: its gradient is summed back down) ---- */

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

RULE(grad_scale) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_scale(ctx, g, ggmlr_get_op_param_f32(node, 0))); }

/* ---- reductions and broadcasting ---- */

RULE(grad_sum) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_repeat(ctx, g, A)); }

RULE(grad_mean) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_scale(ctx, ggml_repeat(ctx, g, A), 1.0f / (float) A->ne[0])); }

RULE(grad_repeat) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_repeat_back(ctx, g, A)); }

RULE(grad_repeat_back) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_repeat(ctx, g, A)); }

/* y = a with b added into a region: a gets g (unless the base was zeros), b gets g's region */
RULE(grad_acc) {
    size_t p[4];
    memcpy(p, node->op_params, sizeof p);
    if (need[0] && !node->op_params[GGMLR_ACC_ZERO_BASE] && !ggmlr_grad_acc(ctx, gph, A, g)) return false;
    if (!need[1]) return true;
    struct ggml_tensor * gc = ggmlr_grad_contiguous(ctx, g);
    return ggmlr_grad_acc(ctx, gph, B, ggml_view_4d(ctx, gc, B->ne[0], B->ne[1], B->ne[2], B->ne[3], p[0], p[1], p[2], p[3]));
}

/* ---- matrix product ---- */

/* A gradient computed per plane of b, [ne0, ne1, ne12, ne13], summed down to
 * a's planes: the contiguous groups of b's planes that shared one plane of a
 * (mul_mat and out_prod broadcast by division, i02 = i12 / r2). */
static struct ggml_tensor * sum_to_planes_of(struct ggml_context * ctx, struct ggml_tensor * full, const struct ggml_tensor * a) {
    if (!full) return NULL;
    const int64_t n01 = full->ne[0] * full->ne[1];
    const int64_t r2 = full->ne[2] / a->ne[2], r3 = full->ne[3] / a->ne[3];
    if (r2 > 1) {
        /* index i12 = i02*r2 + r: view [n01, r2, ne02, ne13] and sum over r */
        struct ggml_tensor * v = ggml_reshape_4d(ctx, full, n01, r2, a->ne[2], full->ne[3]);
        struct ggml_tensor * shape = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n01, 1, a->ne[2], full->ne[3]);
        full = ggml_repeat_back(ctx, v, shape);
    }
    if (r3 > 1 && full) {
        struct ggml_tensor * v = ggml_reshape_4d(ctx, full, n01 * a->ne[2], r3, a->ne[3], 1);
        struct ggml_tensor * shape = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n01 * a->ne[2], 1, a->ne[3], 1);
        full = ggml_repeat_back(ctx, v, shape);
    }
    return full ? ggml_reshape_4d(ctx, full, a->ne[0], a->ne[1], a->ne[2], a->ne[3]) : NULL;
}

/* a [n0, n1, ne02, ne03] with its planes repeated as mul_mat/out_prod broadcast
 * them to ne2 x ne3 (plane i2 = a's plane i2 / r2): a repeat along a new
 * dimension just below each broadcast one, merged back by a reshape. */
static struct ggml_tensor * expand_planes(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne2, int64_t ne3) {
    const int64_t n01 = a->ne[0] * a->ne[1], r2 = ne2 / a->ne[2], r3 = ne3 / a->ne[3];
    if (r2 == 1 && r3 == 1) return a;
    struct ggml_tensor * t = ggml_reshape_4d(ctx, ggmlr_grad_contiguous(ctx, a), n01, 1, a->ne[2], a->ne[3]);
    t = ggml_repeat(ctx, t, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n01, r2, a->ne[2], a->ne[3]));  /* [n01, r2, ne02, ne03] */
    t = ggml_reshape_4d(ctx, t, n01 * ne2, 1, a->ne[3], 1);
    t = ggml_repeat(ctx, t, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n01 * ne2, r3, a->ne[3], 1));   /* [n01*ne2, r3, ne03] */
    return ggml_reshape_4d(ctx, t, a->ne[0], a->ne[1], ne2, ne3);
}

/* y = a^T b (ggml's mul_mat), y[m, n] = sum_k a[k, m] b[k, n]:
 *   da[k, m] = sum_n b[k, n] g[m, n] = out_prod(b, g)
 *   db[k, n] = sum_m a[k, m] g[m, n] = out_prod(a, g^T)
 * Both read their operands through strides: no transposed copy is made. */
RULE(grad_mul_mat) {
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, sum_to_planes_of(ctx, ggml_out_prod(ctx, B, g), A))) return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, ggml_out_prod(ctx, A, ggml_transpose(ctx, g)));
}

/* y[i, j] = sum_k a[i, k] b[j, k]:
 *   da[i, k] = sum_j g[i, j] b[j, k] = out_prod(g, b^T)   (per plane of b, summed to a's)
 *   db[j, k] = sum_i g[i, j] a[i, k] = mul_mat(g, a)      (a's planes expanded to b's) */
RULE(grad_out_prod) {
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, sum_to_planes_of(ctx, ggml_out_prod(ctx, g, ggml_transpose(ctx, B)), A))) return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, ggml_mul_mat(ctx, g, expand_planes(ctx, A, B->ne[2], B->ne[3])));
}

/* ---- attention (softmax: grad_nn.c) ---- */

static const char * refuse_flash_attn_ext(const struct ggml_tensor * node, const bool * need) {
    if (ggmlr_get_op_param_f32(node, 1) > 0)  return "FLASH_ATTN_EXT: backward with max_bias > 0 (ALiBi) is not implemented";
    if (ggmlr_get_op_param_f32(node, 2) != 0) return "FLASH_ATTN_EXT: backward with logit_softcap != 0 is not implemented";
    if (node->src[1]->type != GGML_TYPE_F32 || node->src[2]->type != GGML_TYPE_F32)
        return "FLASH_ATTN_EXT: backward needs F32 K and V (this node has F16 K/V)";
    if (need[3]) return "FLASH_ATTN_EXT: the gradient with respect to the mask is not implemented (the mask is a parameter)";
    return NULL;
}
/* one FLASH_ATTN_BACK node (reading the forward's saved statistics) gives
 * [dq | dk | dv]; each source takes its slice as a view */
RULE(grad_flash_attn_ext) {
    struct ggml_tensor * fab = ggmlr_flash_attn_back_saved(ctx, node, g);
    if (!fab) return false;
    size_t offset = 0;
    for (int i = 0; i < 3; i++) {
        struct ggml_tensor * s = node->src[i];
        if (need[i]) {
            const size_t es = sizeof(float);
            struct ggml_tensor * slice = ggml_view_4d(ctx, fab, s->ne[0], s->ne[1], s->ne[2], s->ne[3], es * (size_t) s->ne[0],
                                                      es * (size_t) (s->ne[0] * s->ne[1]), es * (size_t) (s->ne[0] * s->ne[1] * s->ne[2]), offset);
            if (!ggmlr_grad_acc(ctx, gph, s, slice)) return false;
        }
        offset += (size_t) ggmlr_pad16_floats(ggml_nelements(s)) * sizeof(float);
    }
    return true;
}

/* Rows for ops with no rule are left out (zero): autodiff refuses them with
 * "<OP> has no backward rule". */
const struct ggmlr_grad_rule ggmlr_grad_rules[] = {
    [GGML_OP_NONE]            = {0},
    [GGML_OP_DUP]             = {NULL, grad_copy},
    [GGML_OP_ADD]             = {NULL, grad_add},
    [GGML_OP_SUB]             = {NULL, grad_sub},
    [GGML_OP_MUL]             = {NULL, grad_mul},
    [GGML_OP_DIV]             = {NULL, grad_div},
    [GGML_OP_SQR]             = {NULL, grad_sqr},
    [GGML_OP_SQRT]            = {NULL, grad_sqrt},
    [GGML_OP_LOG]             = {NULL, grad_log},
    [GGML_OP_SUM]             = {NULL, grad_sum},
    [GGML_OP_SUM_ROWS]        = {NULL, grad_sum},
    [GGML_OP_MEAN]            = {NULL, grad_mean},
    [GGML_OP_REPEAT]          = {NULL, grad_repeat},
    [GGML_OP_REPEAT_BACK]     = {NULL, grad_repeat_back},
    [GGML_OP_SCALE]           = {NULL, grad_scale},
    [GGML_OP_CPY]             = {NULL, grad_reshape},
    [GGML_OP_CONT]            = {NULL, grad_copy},
    [GGML_OP_RESHAPE]         = {NULL, grad_reshape},
    [GGML_OP_VIEW]            = {refuse_view, grad_view},
    [GGML_OP_PERMUTE]         = {NULL, grad_permute},
    [GGML_OP_TRANSPOSE]       = {NULL, grad_transpose},
    [GGML_OP_ACC]             = {NULL, grad_acc},
    [GGML_OP_MUL_MAT]         = {NULL, grad_mul_mat},
    [GGML_OP_SOFT_MAX]        = {ggmlr_refuse_soft_max, ggmlr_grad_soft_max},
    [GGML_OP_FLASH_ATTN_EXT]  = {refuse_flash_attn_ext, grad_flash_attn_ext},
    [GGML_OP_FLASH_ATTN_BACK] = {0},
    [GGML_OP_GET_ROWS]        = {ggmlr_refuse_get_rows, ggmlr_grad_get_rows},
    [GGML_OP_GET_ROWS_BACK]   = {0},
    [GGML_OP_NORM]            = {NULL, ggmlr_grad_norm},
    [GGML_OP_RMS_NORM]        = {NULL, ggmlr_grad_rms_norm},
    [GGML_OP_NORM_BACK]       = {0},
    [GGML_OP_RMS_NORM_BACK]   = {0},
    [GGML_OP_UNARY]           = {NULL, ggmlr_grad_unary},
    [GGML_OP_UNARY_BACK]      = {0},
    [GGML_OP_SOFT_MAX_BACK]   = {0},
    [GGML_OP_CROSS_ENTROPY_LOSS]      = {ggmlr_refuse_cross_entropy_loss, ggmlr_grad_cross_entropy_loss},
    [GGML_OP_CROSS_ENTROPY_LOSS_BACK] = {0},
    [GGML_OP_OUT_PROD]        = {NULL, grad_out_prod},
    [GGML_OP_ROPE]            = {ggmlr_refuse_rope, ggmlr_grad_rope},
    [GGML_OP_ROPE_BACK]       = {ggmlr_refuse_rope, ggmlr_grad_rope},
    [GGML_OP_ARGMAX]          = {0},
    [GGML_OP_OPT_STEP_ADAMW]  = {0},
    [GGML_OP_OPT_STEP_SGD]    = {0},
};
_Static_assert(sizeof ggmlr_grad_rules / sizeof ggmlr_grad_rules[0] == GGML_OP_COUNT, "one backward row per op");

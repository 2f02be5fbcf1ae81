/* mask.c -- the structure of matrices (dims 0, 1 of each batch): diag (a
 * row placed on the diagonal), diag_mask_inf / diag_mask_zero (causal masks
 * past n_past), tri (a triangle kept), and their backward rules (kernel:
 * cpu/kernels/mask.c). F32, any layout (upstream asks for contiguous a). */
#include "ops/grad.h"

/* a [n, 1, ne2, ne3] -> [n, n, ne2, ne3], a's row on the diagonal */
struct ggml_tensor * ggml_diag(struct ggml_context * ctx, struct ggml_tensor * a) {
    const char * fn = "ggml_diag";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (a->ne[1] != 1) {
        ggmlr_set_error("%s: a must be one row per matrix, [n, 1, ne2, ne3] (got ne1 = %lld)", fn, (long long) a->ne[1]);
        return NULL;
    }
    const int64_t ne[4] = {a->ne[0], a->ne[0], a->ne[2], a->ne[3]};
    return ggmlr_new_node(ctx, GGML_OP_DIAG, GGML_TYPE_F32, ne, a, NULL);
}

static struct ggml_tensor * diag_mask(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, int n_past,
                                      bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (n_past < 0) { ggmlr_set_error("%s: n_past must be >= 0 (got %d)", fn, n_past); return NULL; }
    struct ggml_tensor * t = inplace ? ggmlr_new_view(fn, ctx, a, op, a->ne, a->nb, 0) : ggmlr_new_node(ctx, op, GGML_TYPE_F32, a->ne, a, NULL);
    if (t) ggmlr_i32_param_encode(t, n_past);
    return t;
}

struct ggml_tensor * ggml_diag_mask_inf(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) {
    return diag_mask("ggml_diag_mask_inf", ctx, GGML_OP_DIAG_MASK_INF, a, n_past, false);
}
struct ggml_tensor * ggml_diag_mask_inf_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) {
    return diag_mask("ggml_diag_mask_inf_inplace", ctx, GGML_OP_DIAG_MASK_INF, a, n_past, true);
}
struct ggml_tensor * ggml_diag_mask_zero(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) {
    return diag_mask("ggml_diag_mask_zero", ctx, GGML_OP_DIAG_MASK_ZERO, a, n_past, false);
}
struct ggml_tensor * ggml_diag_mask_zero_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) {
    return diag_mask("ggml_diag_mask_zero_inplace", ctx, GGML_OP_DIAG_MASK_ZERO, a, n_past, true);
}

struct ggml_tensor * ggml_tri(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_tri_type type) {
    const char * fn = "ggml_tri";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (a->ne[0] != a->ne[1]) return ggmlr_fail_shapes(fn, "a's matrices must be square (ne0 == ne1)", a, a);
    if (type < GGML_TRI_TYPE_UPPER_DIAG || type > GGML_TRI_TYPE_LOWER) {
        ggmlr_set_error("%s: unknown tri type %d (UPPER_DIAG, UPPER, LOWER_DIAG, LOWER)", fn, (int) type);
        return NULL;
    }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_TRI, GGML_TYPE_F32, a->ne, a, NULL);
    if (t) ggmlr_i32_param_encode(t, (int32_t) type);
    return t;
}

/* ---- backward: each op keeps some elements of a (or places them) and
 * writes constants elsewhere, so a's gradient is g where a's element landed
 * and 0 elsewhere ---- */

/* y = diag(a): a's gradient is g's diagonal, [n, 1, ne2, ne3]: the elements
 * k (n + 1) of each contiguous matrix of g */
RULE(grad_diag) {
    (void) need;
    struct ggml_tensor * gc = ggmlr_grad_contiguous(ctx, g);
    const int64_t n = A->ne[0];
    struct ggml_tensor * d = ggml_view_4d(ctx, gc, 1, n, A->ne[2], A->ne[3], (size_t) (n + 1) * sizeof(float), gc->nb[2], gc->nb[3], 0);
    return ggmlr_grad_acc(ctx, gph, A, ggml_reshape_4d(ctx, ggml_cont(ctx, d), n, 1, A->ne[2], A->ne[3]));
}

/* masked elements are constants (-Inf or 0): g masked to zero the same way */
RULE(grad_diag_mask) {
    (void) need;
    return ggmlr_grad_acc(ctx, gph, A, ggml_diag_mask_zero(ctx, g, ggmlr_i32_param_decode(node)));
}

RULE(grad_tri) {
    (void) need;
    return ggmlr_grad_acc(ctx, gph, A, ggml_tri(ctx, g, (enum ggml_tri_type) ggmlr_i32_param_decode(node)));
}

GRAD_RULE(diag, NULL, grad_diag);
GRAD_RULE(diag_mask, NULL, grad_diag_mask);
GRAD_RULE(tri, NULL, grad_tri);

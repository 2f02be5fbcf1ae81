/* copy.c -- copies and layout: dup (and in place), cont (and cont_1d..4d), cpy, reshape, view, permute,
 * transpose, roll (kernel: cpu/kernels/copy.c; the views have none), and their
 * backward rules: the gradient flows back unchanged, re-shaped.
 * Notation: y = op(a, b, ...) is the node, g = dL/dy its gradient; each rule
 * adds dL/da = g * dy/da (and so on) to the sources that need one. */
#include "ops/grad.h"

struct ggml_tensor * ggml_dup(struct ggml_context * ctx, struct ggml_tensor * a) {
    REQUIRE_CTX("ggml_dup"); REQUIRE("ggml_dup", a);
    return ggmlr_new_node(ctx, GGML_OP_DUP, a->type, a->ne, a, NULL);
}

/* a copied onto itself (upstream's dup_inplace: a view of a) */
struct ggml_tensor * ggml_dup_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    REQUIRE_CTX("ggml_dup_inplace"); REQUIRE("ggml_dup_inplace", a);
    struct ggml_tensor * t = ggmlr_new_view("ggml_dup_inplace", ctx, a, GGML_OP_DUP, a->ne, a->nb, 0);
    if (t) t->src[0] = a;
    return t;
}

struct ggml_tensor * ggml_cont(struct ggml_context * ctx, struct ggml_tensor * a) {
    REQUIRE_CTX("ggml_cont"); REQUIRE("ggml_cont", a);
    return ggmlr_new_node(ctx, GGML_OP_CONT, a->type, a->ne, a, NULL);
}

/* a's elements, in their logical order, in a new contiguous tensor of shape ne0..ne3 */
struct ggml_tensor * ggml_cont_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const char * fn = "ggml_cont_4d";
    REQUIRE_CTX(fn); REQUIRE(fn, a);
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    /* the count in double first, so that the int64_t product cannot overflow */
    double bound = 1.0;
    for (int i = 0; i < 4; i++) {
        if (ne[i] < 0) { ggmlr_set_error("%s: ne[%d] = %lld is negative", fn, i, (long long) ne[i]); return NULL; }
        bound *= (double) ne[i];
    }
    if (!ggmlr_check_size_bound(fn, bound)) return NULL;
    if (ne0 * ne1 * ne2 * ne3 != ggml_nelements(a)) {
        ggmlr_set_error("%s: %lld x %lld x %lld x %lld elements, but '%s' has %lld", fn, (long long) ne0, (long long) ne1, (long long) ne2,
                        (long long) ne3, a->name, (long long) ggml_nelements(a));
        return NULL;
    }
    if (ggml_is_quantized(a->type) && ne0 != a->ne[0]) { ggmlr_set_error("%s: a quantized tensor keeps its rows (ne0 = %lld)", fn, (long long) a->ne[0]); return NULL; }
    return ggmlr_new_node(ctx, GGML_OP_CONT, a->type, ne, a, NULL);
}

struct ggml_tensor * ggml_cont_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0) { return ggml_cont_4d(ctx, a, ne0, 1, 1, 1); }

struct ggml_tensor * ggml_cont_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1) { return ggml_cont_4d(ctx, a, ne0, ne1, 1, 1); }

struct ggml_tensor * ggml_cont_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    return ggml_cont_4d(ctx, a, ne0, ne1, ne2, 1);
}

struct ggml_tensor * ggml_cpy(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE_CTX("ggml_cpy"); REQUIRE("ggml_cpy", a); REQUIRE("ggml_cpy", b);
    if (ggml_nelements(a) != ggml_nelements(b))
        return ggmlr_fail_shapes("ggml_cpy", "a and b must have the same number of elements", a, b);
    /* a quantized side converts whole rows: row r of a (in order) is row r of b */
    if ((ggml_is_quantized(a->type) || ggml_is_quantized(b->type)) && a->ne[0] != b->ne[0])
        return ggmlr_fail_shapes("ggml_cpy", "a copy to or from a quantized type needs rows of one length (a->ne[0] == b->ne[0])", a, b);
    struct ggml_tensor * t = ggmlr_new_view("ggml_cpy", ctx, b, GGML_OP_CPY, b->ne, b->nb, 0);
    if (!t) return NULL;
    t->src[0] = a;
    t->src[1] = b;
    return t;
}

/* a copied into a new tensor of its shape and the given type (a CPY node, as upstream) */
struct ggml_tensor * ggml_cast(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_type type) {
    REQUIRE_CTX("ggml_cast"); REQUIRE("ggml_cast", a);
    return ggml_cpy(ctx, a, ggml_new_tensor(ctx, type, GGML_MAX_DIMS, a->ne));
}

struct ggml_tensor * ggml_reshape_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    REQUIRE_CTX("ggml_reshape"); REQUIRE("ggml_reshape", a);
    if (!ggml_is_contiguous(a)) { ggmlr_set_error("ggml_reshape: tensor '%s' is not contiguous (use ggml_cont first)", a->name); return NULL; }
    /* element count without signed overflow: the partial products (used for the strides) must fit too */
    const int64_t dims[4] = {ne0, ne1, ne2, ne3};
    int64_t count = 1;
    bool fits = true;
    for (int i = 0; i < 4 && fits; i++) {
        if (dims[i] < 0 || (dims[i] != 0 && count > INT64_MAX / dims[i])) fits = false;
        else count *= dims[i];
    }
    if (!fits || count != ggml_nelements(a)) {
        ggmlr_set_error("ggml_reshape: new shape [%lld, %lld, %lld, %lld] does not hold the %lld elements of '%s'",
                        (long long) ne0, (long long) ne1, (long long) ne2, (long long) ne3, (long long) ggml_nelements(a), a->name);
        return NULL;
    }
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    if (ggml_is_quantized(a->type) && ne0 % ggml_blck_size(a->type) != 0) {
        ggmlr_set_error("ggml_reshape: tensor '%s' is %s; ne0 = %lld must be whole blocks of %lld", a->name, ggml_type_name(a->type),
                        (long long) ne0, (long long) ggml_blck_size(a->type));
        return NULL;
    }
    const size_t row = ggml_row_size(a->type, ne0);  /* bytes of one row: whole blocks */
    /* unsigned products: with ne0 = 0 the other dims are unbounded (the count is 0) */
    const size_t nb[4] = {ggml_type_size(a->type), row, row * (size_t) ne1, row * (size_t) ne1 * (size_t) ne2};
    return ggmlr_new_view("ggml_reshape", ctx, a, GGML_OP_RESHAPE, ne, nb, 0);
}

struct ggml_tensor * ggml_reshape_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0) { return ggml_reshape_4d(ctx, a, ne0, 1, 1, 1); }

struct ggml_tensor * ggml_reshape_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1) { return ggml_reshape_4d(ctx, a, ne0, ne1, 1, 1); }

struct ggml_tensor * ggml_reshape_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) { return ggml_reshape_4d(ctx, a, ne0, ne1, ne2, 1); }

struct ggml_tensor * ggml_reshape(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE("ggml_reshape", b);
    return ggml_reshape_4d(ctx, a, b->ne[0], b->ne[1], b->ne[2], b->ne[3]);
}

struct ggml_tensor * ggml_view_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                  size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    REQUIRE_CTX("ggml_view"); REQUIRE("ggml_view", a);
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    const size_t nb[4] = {ggml_type_size(a->type), nb1, nb2, nb3};
    struct ggml_tensor * t = ggmlr_new_view("ggml_view", ctx, a, GGML_OP_VIEW, ne, nb, offset);
    if (t) ggmlr_view_params_encode(t, offset);  /* the backward rule needs it */
    return t;
}

struct ggml_tensor * ggml_view_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, size_t offset) {
    const size_t es = a ? ggml_type_size(a->type) : 0;
    return ggml_view_4d(ctx, a, ne0, 1, 1, 1, es * (size_t) ne0, es * (size_t) ne0, es * (size_t) ne0, offset);
}

struct ggml_tensor * ggml_view_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset) {
    return ggml_view_4d(ctx, a, ne0, ne1, 1, 1, nb1, nb1 * (size_t) ne1, nb1 * (size_t) ne1, offset);
}

struct ggml_tensor * ggml_view_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2, size_t offset) {
    return ggml_view_4d(ctx, a, ne0, ne1, ne2, 1, nb1, nb2, nb2 * (size_t) ne2, offset);
}

struct ggml_tensor * ggml_permute(struct ggml_context * ctx, struct ggml_tensor * a, int axis0, int axis1, int axis2, int axis3) {
    REQUIRE_CTX("ggml_permute"); REQUIRE("ggml_permute", a);
    const int axes[4] = {axis0, axis1, axis2, axis3};
    int seen = 0;
    for (int i = 0; i < 4; i++) {
        if (axes[i] < 0 || axes[i] > 3 || (seen & (1 << axes[i]))) {
            ggmlr_set_error("ggml_permute: axes (%d, %d, %d, %d) are not a permutation of 0..3", axis0, axis1, axis2, axis3);
            return NULL;
        }
        seen |= 1 << axes[i];
    }
    /* a block type's blocks stay whole only along dim 0 */
    if (ggml_is_quantized(a->type) && axis0 != 0) {
        ggmlr_set_error("ggml_permute: tensor '%s' is %s; a permutation of a quantized tensor keeps dim 0 (its blocks) in place",
                        a->name, ggml_type_name(a->type));
        return NULL;
    }
    int64_t ne[4]; size_t nb[4];
    for (int i = 0; i < 4; i++) { ne[axes[i]] = a->ne[i]; nb[axes[i]] = a->nb[i]; }
    struct ggml_tensor * t = ggmlr_new_tensor_impl(ctx, a->type, 4, ne, a, 0);
    if (!t) return NULL;
    memcpy(t->nb, nb, sizeof nb);
    t->op = GGML_OP_PERMUTE;
    t->src[0] = a;
    const struct ggmlr_permute_params prm = {{axis0, axis1, axis2, axis3}};
    ggmlr_permute_params_encode(t, &prm);
    return t;
}

struct ggml_tensor * ggml_transpose(struct ggml_context * ctx, struct ggml_tensor * a) {
    REQUIRE_CTX("ggml_transpose"); REQUIRE("ggml_transpose", a);
    struct ggml_tensor * t = ggml_permute(ctx, a, 1, 0, 2, 3);
    if (t) t->op = GGML_OP_TRANSPOSE;
    return t;
}

/* ---- backward ---- */

/* g, back in a's shape when cont_4d changed it (the same elements in the same order) */
RULE(grad_copy) {
    if (!need[0]) return true;
    return ggmlr_grad_acc(ctx, gph, A, ggml_are_same_shape(g, A) ? g : ggml_reshape(ctx, ggmlr_grad_contiguous(ctx, g), A));
}

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
    const size_t offset = ggmlr_view_params_decode(node);
    if (!need[0]) return true;
    struct ggml_tensor * region = ggmlr_acc_impl(ctx, A, ggmlr_grad_contiguous(ctx, g), node->nb[1], node->nb[2], node->nb[3], offset, ACC_ON_ZEROS);
    ggmlr_grad_mark_private(region);
    return ggmlr_grad_acc(ctx, gph, A, region);
}

RULE(grad_permute) {
    int inv[4];
    const struct ggmlr_permute_params prm = ggmlr_permute_params_decode(node);
    for (int i = 0; i < 4; i++) inv[prm.axes[i]] = i;
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_permute(ctx, g, inv[0], inv[1], inv[2], inv[3]));
}

RULE(grad_transpose) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_transpose(ctx, g)); }

/* ---- roll: elements moved along each dim, wrapping around ---- */

struct ggml_tensor * ggml_roll(struct ggml_context * ctx, struct ggml_tensor * a, int shift0, int shift1, int shift2, int shift3) {
    const char * fn = "ggml_roll";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    const struct ggmlr_roll_params p = {{shift0, shift1, shift2, shift3}};
    for (int d = 0; d < 4; d++)
        if (p.shift[d] <= -a->ne[d] || p.shift[d] >= a->ne[d]) {
            ggmlr_set_error("%s: shift%d = %d must be inside (-ne%d, ne%d) = (-%lld, %lld)", fn, d, (int) p.shift[d], d, d,
                            (long long) a->ne[d], (long long) a->ne[d]);
            return NULL;
        }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_ROLL, GGML_TYPE_F32, a->ne, a, NULL);
    if (t) ggmlr_roll_params_encode(t, &p);
    return t;
}

/* y = roll(a, s): a permutation of the elements, so da = roll(g, -s) */
RULE(grad_roll) {
    (void) need;
    const struct ggmlr_roll_params p = ggmlr_roll_params_decode(node);
    return ggmlr_grad_acc(ctx, gph, A, ggml_roll(ctx, g, -p.shift[0], -p.shift[1], -p.shift[2], -p.shift[3]));
}

GRAD_RULE(dup, NULL, grad_copy);
GRAD_RULE(roll, NULL, grad_roll);
GRAD_RULE(cpy, NULL, grad_reshape);
GRAD_RULE(reshape, NULL, grad_reshape);
GRAD_RULE(view, refuse_view, grad_view);
GRAD_RULE(permute, NULL, grad_permute);
GRAD_RULE(transpose, NULL, grad_transpose);

/* acc.c -- acc: b added into a strided region of a, and its backward rule
 * (kernel: cpu/kernels/acc.c). autodiff also builds it on zeros (the
 * gradient of a view) and in place (sums of gradients, ops/grad.c). */
#include "ops/grad.h"

/* b added into the strided region (nb1..nb3, offset) of a copy of a, of
 * zeros shaped like a, or of a itself (enum ggmlr_acc_base; parameters:
 * struct ggmlr_acc_params). */
struct ggml_tensor * ggmlr_acc_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                    size_t nb1, size_t nb2, size_t nb3, size_t offset, enum ggmlr_acc_base base) {
    REQUIRE_CTX("ggml_acc"); REQUIRE("ggml_acc", a); REQUIRE("ggml_acc", b);
    REQUIRE_F32("ggml_acc", a); REQUIRE_F32("ggml_acc", b);
    if (!ggml_is_contiguous(a)) { ggmlr_set_error("ggml_acc: a must be contiguous"); return NULL; }
    /* the region b lands in must lie inside a: the same check as a view of a */
    const size_t nb[4] = {ggml_type_size(a->type), nb1, nb2, nb3};
    size_t span;
    if (!ggmlr_region_span(b->ne, nb, nb[0], &span)) {
        ggmlr_set_error("ggml_acc: region strides span more than the address space (a has %zu bytes)", ggml_nbytes(a));
        return NULL;
    }
    if (offset > ggml_nbytes(a) || span > ggml_nbytes(a) - offset) {
        ggmlr_set_error("ggml_acc: region of %zu bytes at offset %zu runs past the %zu bytes of a", span, offset, ggml_nbytes(a));
        return NULL;
    }
    if (offset % nb[0] != 0 || nb1 % nb[0] != 0 || nb2 % nb[0] != 0 || nb3 % nb[0] != 0) {
        ggmlr_set_error("ggml_acc: offset %zu and strides (%zu, %zu, %zu) must be multiples of the element size %zu", offset, nb1, nb2, nb3, nb[0]);
        return NULL;
    }
    struct ggml_tensor * t = base == ACC_IN_PLACE ? ggmlr_new_view("ggml_acc", ctx, a, GGML_OP_ACC, a->ne, a->nb, 0)
                                                  : ggmlr_new_node(ctx, GGML_OP_ACC, GGML_TYPE_F32, a->ne, a, b);
    if (!t) return NULL;
    t->src[0] = a;
    t->src[1] = b;
    const struct ggmlr_acc_params prm = {nb1, nb2, nb3, offset, base == ACC_ON_ZEROS, 0};
    ggmlr_acc_params_encode(t, &prm);
    return t;
}

struct ggml_tensor * ggml_acc(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                              size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return ggmlr_acc_impl(ctx, a, b, nb1, nb2, nb3, offset, ACC_ON_COPY);
}

/* ---- backward ---- */

/* y = a with b added into a region: a gets g (unless the base was zeros), b gets g's region */
RULE(grad_acc) {
    const struct ggmlr_acc_params p = ggmlr_acc_params_decode(node);
    if (need[0] && !p.zero_base && !ggmlr_grad_acc(ctx, gph, A, g)) return false;
    if (!need[1]) return true;
    struct ggml_tensor * gc = ggmlr_grad_contiguous(ctx, g);
    return ggmlr_grad_acc(ctx, gph, B, ggml_view_4d(ctx, gc, B->ne[0], B->ne[1], B->ne[2], B->ne[3], p.nb1, p.nb2, p.nb3, p.offset));
}

GRAD_RULE(acc, NULL, grad_acc);

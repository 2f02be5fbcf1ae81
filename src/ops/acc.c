/* acc.c -- acc (b added into a strided region of a) and set (b written over
 * it), and their backward rules (kernel: cpu/kernels/acc.c). autodiff also
 * builds acc on zeros (the gradient of a view) and in place (sums of
 * gradients, ops/grad.c). */
#include "ops/grad.h"

/* The region (nb1..nb3, offset) that b lands in must lie inside a (the same
 * check as a view of a), its elements aligned. */
static bool region_ok(const char * fn, const struct ggml_tensor * a, const struct ggml_tensor * b, size_t nb1, size_t nb2, size_t nb3,
                      size_t offset) {
    if (!ggml_is_contiguous(a)) { ggmlr_set_error("%s: a must be contiguous", fn); return false; }
    const size_t nb[4] = {ggml_type_size(a->type), nb1, nb2, nb3};
    size_t span;
    if (!ggmlr_region_span(b->ne, nb, nb[0], &span)) {
        ggmlr_set_error("%s: region strides span more than the address space (a has %zu bytes)", fn, ggml_nbytes(a));
        return false;
    }
    if (offset > ggml_nbytes(a) || span > ggml_nbytes(a) - offset) {
        ggmlr_set_error("%s: region of %zu bytes at offset %zu runs past the %zu bytes of a", fn, span, offset, ggml_nbytes(a));
        return false;
    }
    if (offset % nb[0] != 0 || nb1 % nb[0] != 0 || nb2 % nb[0] != 0 || nb3 % nb[0] != 0) {
        ggmlr_set_error("%s: offset %zu and strides (%zu, %zu, %zu) must be multiples of the element size %zu", fn, offset, nb1, nb2, nb3, nb[0]);
        return false;
    }
    return true;
}

/* b added into the strided region (nb1..nb3, offset) of a copy of a, of
 * zeros shaped like a, or of a itself (enum ggmlr_acc_base; parameters:
 * struct ggmlr_acc_params). */
struct ggml_tensor * ggmlr_acc_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                    size_t nb1, size_t nb2, size_t nb3, size_t offset, enum ggmlr_acc_base base) {
    REQUIRE_CTX("ggml_acc"); REQUIRE("ggml_acc", a); REQUIRE("ggml_acc", b);
    REQUIRE_F32("ggml_acc", a); REQUIRE_F32("ggml_acc", b);
    if (!region_ok("ggml_acc", a, b, nb1, nb2, nb3, offset)) return NULL;
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

struct ggml_tensor * ggml_acc_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return ggmlr_acc_impl(ctx, a, b, nb1, nb2, nb3, offset, ACC_IN_PLACE);
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

/* ---- set: b written over the region (upstream keeps the strides and offset in int32 slots) ---- */

static struct ggml_tensor * set_impl(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                     size_t nb1, size_t nb2, size_t nb3, size_t offset, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_I32) return ggmlr_fail_type(fn, "a", a, "F32 or I32");
    if (b->type != a->type) return ggmlr_fail_type(fn, "b", b, ggml_type_name(a->type));
    if (nb1 > INT32_MAX || nb2 > INT32_MAX || nb3 > INT32_MAX || offset > INT32_MAX) {
        ggmlr_set_error("%s: strides (%zu, %zu, %zu) and offset %zu must fit in int32 (upstream's parameter slots)", fn, nb1, nb2, nb3, offset);
        return NULL;
    }
    if (!region_ok(fn, a, b, nb1, nb2, nb3, offset)) return NULL;
    struct ggml_tensor * t = inplace ? ggmlr_new_view(fn, ctx, a, GGML_OP_SET, a->ne, a->nb, 0) : ggmlr_new_node(ctx, GGML_OP_SET, a->type, a->ne, a, b);
    if (!t) return NULL;
    t->src[0] = a;
    t->src[1] = b;
    const struct ggmlr_set_params prm = {(int32_t) nb1, (int32_t) nb2, (int32_t) nb3, (int32_t) offset, inplace};
    ggmlr_set_params_encode(t, &prm);
    return t;
}

struct ggml_tensor * ggml_set(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t nb2,
                              size_t nb3, size_t offset) {
    return set_impl("ggml_set", ctx, a, b, nb1, nb2, nb3, offset, false);
}
struct ggml_tensor * ggml_set_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t nb2,
                                      size_t nb3, size_t offset) {
    return set_impl("ggml_set_inplace", ctx, a, b, nb1, nb2, nb3, offset, true);
}
/* _1d and _2d: the strides not given are a's */
#define SET_FORM(name, inplace, ...) set_impl(name, ctx, a, b, __VA_ARGS__, offset, inplace)
struct ggml_tensor * ggml_set_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t offset) {
    REQUIRE("ggml_set_1d", a);
    return SET_FORM("ggml_set_1d", false, a->nb[1], a->nb[2], a->nb[3]);
}
struct ggml_tensor * ggml_set_1d_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t offset) {
    REQUIRE("ggml_set_1d_inplace", a);
    return SET_FORM("ggml_set_1d_inplace", true, a->nb[1], a->nb[2], a->nb[3]);
}
struct ggml_tensor * ggml_set_2d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t offset) {
    REQUIRE("ggml_set_2d", a);
    return SET_FORM("ggml_set_2d", false, nb1, a->nb[2], a->nb[3]);
}
struct ggml_tensor * ggml_set_2d_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t offset) {
    REQUIRE("ggml_set_2d_inplace", a);
    return SET_FORM("ggml_set_2d_inplace", true, nb1, a->nb[2], a->nb[3]);
}

/* y = a with the region := b: a gets g with the region zeroed (zeros set
 * over a copy of g), b gets g's region. When b's rows overlap in the region,
 * later rows overwrite earlier ones and the region's view is no gradient. */
static const char * refuse_set(const struct ggml_tensor * node, const bool * need) {
    const struct ggmlr_set_params p = ggmlr_set_params_decode(node);
    if (A->type != GGML_TYPE_F32) return "SET: an I32 tensor has no gradient";
    if (need[1] && !ggmlr_region_rows_disjoint(B->ne, sizeof(float), (const size_t[3]) {(size_t) p.nb1, (size_t) p.nb2, (size_t) p.nb3}))
        return "SET: b's rows overlap in the region (later rows overwrite earlier ones): b has no gradient";
    return NULL;
}

RULE(grad_set) {
    const struct ggmlr_set_params p = ggmlr_set_params_decode(node);
    struct ggml_tensor * gc = ggmlr_grad_contiguous(ctx, g);
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, ggml_set(ctx, gc, ggml_fill(ctx, B, 0.0f), (size_t) p.nb1, (size_t) p.nb2, (size_t) p.nb3, (size_t) p.offset)))
        return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, ggml_view_4d(ctx, gc, B->ne[0], B->ne[1], B->ne[2], B->ne[3], (size_t) p.nb1, (size_t) p.nb2,
                                                                (size_t) p.nb3, (size_t) p.offset));
}

GRAD_RULE(set, refuse_set, grad_set);

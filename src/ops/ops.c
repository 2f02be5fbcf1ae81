/* ops.c -- op constructors: argument checks, result shapes, node creation.
 * No maths happens here; kernels live in cpu/. Every constructor returns NULL
 * with a message on bad input, and NULL inputs propagate. */
#include "core/internal.h"

#include <math.h>

/* A NULL input: either an earlier call failed (keep its message visible) or the caller passed NULL. */
struct ggml_tensor * ggmlr_null_input(const char * fn, const char * arg) {
    char prev[400];
    snprintf(prev, sizeof prev, "%s", ggml_last_error());
    if (prev[0]) ggmlr_set_error("%s: input '%s' is NULL (earlier error: %s)", fn, arg, prev);
    else         ggmlr_set_error("%s: input '%s' is NULL", fn, arg);
    return NULL;
}

struct ggml_tensor * ggmlr_fail_type(const char * fn, const char * arg, const struct ggml_tensor * t, const char * want) {
    ggmlr_set_error("%s: %s must be %s (got %s)", fn, arg, want, ggml_type_name(t->type));
    return NULL;
}

const char * ggmlr_shape_str(const struct ggml_tensor * t, char * buf, size_t n) {
    snprintf(buf, n, "[%lld, %lld, %lld, %lld]", (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2], (long long) t->ne[3]);
    return buf;
}

struct ggml_tensor * ggmlr_fail_shapes(const char * fn, const char * what, const struct ggml_tensor * a, const struct ggml_tensor * b) {
    char sa[96], sb[96];
    ggmlr_set_error("%s: %s (shapes %s and %s)", fn, what, ggmlr_shape_str(a, sa, sizeof sa), ggmlr_shape_str(b, sb, sizeof sb));
    return NULL;
}

struct ggml_tensor * ggmlr_new_node(struct ggml_context * ctx, enum ggml_op op, enum ggml_type type, const int64_t ne[4],
                                    struct ggml_tensor * src0, struct ggml_tensor * src1) {
    struct ggml_tensor * t = ggml_new_tensor(ctx, type, 4, ne);
    if (!t) return NULL;
    t->op = op;
    t->src[0] = src0;
    t->src[1] = src1;
    return t;
}

/* Bytes from the first to past the last element of a region of shape ne
 * (all >= 0) and strides nb; false when that overflows size_t. */
static bool region_span(const int64_t ne[4], const size_t nb[4], size_t esize, size_t * span) {
    *span = esize;
    for (int i = 0; i < 4; i++) {
        if (ne[i] == 0) { *span = 0; return true; }
    }
    for (int i = 0; i < 4; i++) {
        if (nb[i] != 0 && (size_t) (ne[i] - 1) > (SIZE_MAX - *span) / nb[i]) return false;
        *span += (size_t) (ne[i] - 1) * nb[i];
    }
    return true;
}

/* A view of a: shape ne, strides nb, starting `offset` bytes into a's data. */
static struct ggml_tensor * new_view(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op op,
                                     const int64_t ne[4], const size_t nb[4], size_t offset) {
    for (int i = 0; i < 4; i++)
        if (ne[i] < 0) { ggmlr_set_error("%s: ne[%d] is negative", fn, i); return NULL; }
    const size_t es = ggml_type_size(a->type);
    size_t span;
    const size_t avail = ggml_nbytes(a);
    if (!region_span(ne, nb, es, &span)) {
        ggmlr_set_error("%s: view strides span more than the address space (tensor '%s' has %zu bytes)", fn, a->name, avail);
        return NULL;
    }
    if (offset > avail || span > avail - offset) {
        ggmlr_set_error("%s: view of %zu bytes at offset %zu runs past the %zu bytes of tensor '%s'", fn, span, offset, avail, a->name);
        return NULL;
    }
    /* elements must stay aligned: kernels access them as float / half / int32 */
    if (offset % es != 0 || nb[0] % es != 0 || nb[1] % es != 0 || nb[2] % es != 0 || nb[3] % es != 0) {
        ggmlr_set_error("%s: offset %zu and strides (%zu, %zu, %zu, %zu) must be multiples of the element size %zu", fn, offset,
                        nb[0], nb[1], nb[2], nb[3], es);
        return NULL;
    }
    struct ggml_tensor * t = ggmlr_new_tensor_impl(ctx, a->type, 4, ne, a, offset);
    if (!t) return NULL;
    memcpy(t->nb, nb, sizeof t->nb);
    t->op = op;
    t->src[0] = a;
    return t;
}

/* ---- copies and layout ---- */

struct ggml_tensor * ggml_dup(struct ggml_context * ctx, struct ggml_tensor * a) {
    REQUIRE_CTX("ggml_dup"); REQUIRE("ggml_dup", a);
    return ggmlr_new_node(ctx, GGML_OP_DUP, a->type, a->ne, a, NULL);
}

struct ggml_tensor * ggml_cont(struct ggml_context * ctx, struct ggml_tensor * a) {
    REQUIRE_CTX("ggml_cont"); REQUIRE("ggml_cont", a);
    return ggmlr_new_node(ctx, GGML_OP_CONT, a->type, a->ne, a, NULL);
}

struct ggml_tensor * ggml_cpy(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE_CTX("ggml_cpy"); REQUIRE("ggml_cpy", a); REQUIRE("ggml_cpy", b);
    if (ggml_nelements(a) != ggml_nelements(b))
        return ggmlr_fail_shapes("ggml_cpy", "a and b must have the same number of elements", a, b);
    struct ggml_tensor * t = new_view("ggml_cpy", ctx, b, GGML_OP_CPY, b->ne, b->nb, 0);
    if (!t) return NULL;
    t->src[0] = a;
    t->src[1] = b;
    return t;
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
    const size_t es = ggml_type_size(a->type);
    const size_t nb[4] = {es, es * (size_t) ne0, es * (size_t) (ne0 * ne1), es * (size_t) (ne0 * ne1 * ne2)};
    return new_view("ggml_reshape", ctx, a, GGML_OP_RESHAPE, ne, nb, 0);
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
    struct ggml_tensor * t = new_view("ggml_view", ctx, a, GGML_OP_VIEW, ne, nb, offset);
    if (t) memcpy(t->op_params, &offset, sizeof offset);  /* the backward rule needs it */
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
    int64_t ne[4]; size_t nb[4];
    for (int i = 0; i < 4; i++) { ne[axes[i]] = a->ne[i]; nb[axes[i]] = a->nb[i]; }
    struct ggml_tensor * t = ggmlr_new_tensor_impl(ctx, a->type, 4, ne, a, 0);
    if (!t) return NULL;
    memcpy(t->nb, nb, sizeof nb);
    t->op = GGML_OP_PERMUTE;
    t->src[0] = a;
    for (int i = 0; i < 4; i++) t->op_params[i] = axes[i];
    return t;
}

struct ggml_tensor * ggml_transpose(struct ggml_context * ctx, struct ggml_tensor * a) {
    REQUIRE_CTX("ggml_transpose"); REQUIRE("ggml_transpose", a);
    struct ggml_tensor * t = ggml_permute(ctx, a, 1, 0, 2, 3);
    if (t) t->op = GGML_OP_TRANSPOSE;
    return t;
}

/* ---- element-wise ---- */

static struct ggml_tensor * binary_op(const char * fn, struct ggml_context * ctx, enum ggml_op op,
                                      struct ggml_tensor * a, struct ggml_tensor * b, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    REQUIRE_F32(fn, a); REQUIRE_F32(fn, b);
    if (!ggml_can_repeat(b, a)) return ggmlr_fail_shapes(fn, "b must broadcast over a (each a->ne[i] a multiple of b->ne[i])", a, b);
    struct ggml_tensor * t = inplace ? new_view(fn, ctx, a, op, a->ne, a->nb, 0) : ggmlr_new_node(ctx, op, GGML_TYPE_F32, a->ne, a, b);
    if (!t) return NULL;
    t->src[0] = a;
    t->src[1] = b;
    return t;
}

struct ggml_tensor * ggml_add(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_add", ctx, GGML_OP_ADD, a, b, false); }
struct ggml_tensor * ggml_sub(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_sub", ctx, GGML_OP_SUB, a, b, false); }
struct ggml_tensor * ggml_mul(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_mul", ctx, GGML_OP_MUL, a, b, false); }
struct ggml_tensor * ggml_div(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_div", ctx, GGML_OP_DIV, a, b, false); }
struct ggml_tensor * ggml_add_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) { return binary_op("ggml_add_inplace", ctx, GGML_OP_ADD, a, b, true); }

static struct ggml_tensor * unary_op(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    return ggmlr_new_node(ctx, op, GGML_TYPE_F32, a->ne, a, NULL);
}

struct ggml_tensor * ggml_sqr(struct ggml_context * ctx, struct ggml_tensor * a)  { return unary_op("ggml_sqr", ctx, GGML_OP_SQR, a); }
struct ggml_tensor * ggml_sqrt(struct ggml_context * ctx, struct ggml_tensor * a) { return unary_op("ggml_sqrt", ctx, GGML_OP_SQRT, a); }
struct ggml_tensor * ggml_log(struct ggml_context * ctx, struct ggml_tensor * a)  { return unary_op("ggml_log", ctx, GGML_OP_LOG, a); }

struct ggml_tensor * ggml_scale(struct ggml_context * ctx, struct ggml_tensor * a, float s) {
    struct ggml_tensor * t = unary_op("ggml_scale", ctx, GGML_OP_SCALE, a);
    if (t) ggmlr_set_op_param_f32(t, 0, s);
    return t;
}

/* ---- reductions and broadcasting ---- */

struct ggml_tensor * ggml_sum(struct ggml_context * ctx, struct ggml_tensor * a) {
    REQUIRE_CTX("ggml_sum"); REQUIRE("ggml_sum", a); REQUIRE_F32("ggml_sum", a);
    const int64_t ne[4] = {1, 1, 1, 1};
    return ggmlr_new_node(ctx, GGML_OP_SUM, GGML_TYPE_F32, ne, a, NULL);
}

static struct ggml_tensor * row_reduce(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    const int64_t ne[4] = {1, a->ne[1], a->ne[2], a->ne[3]};
    return ggmlr_new_node(ctx, op, GGML_TYPE_F32, ne, a, NULL);
}

struct ggml_tensor * ggml_sum_rows(struct ggml_context * ctx, struct ggml_tensor * a) { return row_reduce("ggml_sum_rows", ctx, GGML_OP_SUM_ROWS, a); }
struct ggml_tensor * ggml_mean(struct ggml_context * ctx, struct ggml_tensor * a)     { return row_reduce("ggml_mean", ctx, GGML_OP_MEAN, a); }

struct ggml_tensor * ggml_repeat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE_CTX("ggml_repeat"); REQUIRE("ggml_repeat", a); REQUIRE("ggml_repeat", b); REQUIRE_F32("ggml_repeat", a);
    if (!ggml_can_repeat(a, b)) return ggmlr_fail_shapes("ggml_repeat", "b's shape must be a multiple of a's", a, b);
    return ggmlr_new_node(ctx, GGML_OP_REPEAT, GGML_TYPE_F32, b->ne, a, NULL);
}

struct ggml_tensor * ggml_repeat_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE_CTX("ggml_repeat_back"); REQUIRE("ggml_repeat_back", a); REQUIRE("ggml_repeat_back", b); REQUIRE_F32("ggml_repeat_back", a);
    if (!ggml_can_repeat(b, a)) return ggmlr_fail_shapes("ggml_repeat_back", "a's shape must be a multiple of b's", a, b);
    return ggmlr_new_node(ctx, GGML_OP_REPEAT_BACK, GGML_TYPE_F32, b->ne, a, NULL);
}

/* b added into the strided region (nb1..nb3, offset) of a copy of a, of
 * zeros shaped like a, or of a itself (enum ggmlr_acc_base; op_params: see
 * GGMLR_ACC_ZERO_BASE). */
struct ggml_tensor * ggmlr_acc_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                    size_t nb1, size_t nb2, size_t nb3, size_t offset, enum ggmlr_acc_base base) {
    REQUIRE_CTX("ggml_acc"); REQUIRE("ggml_acc", a); REQUIRE("ggml_acc", b);
    REQUIRE_F32("ggml_acc", a); REQUIRE_F32("ggml_acc", b);
    if (!ggml_is_contiguous(a)) { ggmlr_set_error("ggml_acc: a must be contiguous"); return NULL; }
    /* the region b lands in must lie inside a: the same check as a view of a */
    const size_t nb[4] = {ggml_type_size(a->type), nb1, nb2, nb3};
    size_t span;
    if (!region_span(b->ne, nb, nb[0], &span)) {
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
    struct ggml_tensor * t = base == ACC_IN_PLACE ? new_view("ggml_acc", ctx, a, GGML_OP_ACC, a->ne, a->nb, 0)
                                                  : ggmlr_new_node(ctx, GGML_OP_ACC, GGML_TYPE_F32, a->ne, a, b);
    if (!t) return NULL;
    t->src[0] = a;
    t->src[1] = b;
    const size_t p[4] = {nb1, nb2, nb3, offset};
    memcpy(t->op_params, p, sizeof p);
    t->op_params[GGMLR_ACC_ZERO_BASE] = base == ACC_ON_ZEROS;
    return t;
}

struct ggml_tensor * ggml_acc(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                              size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return ggmlr_acc_impl(ctx, a, b, nb1, nb2, nb3, offset, ACC_ON_COPY);
}

/* ---- matrix product and softmax ---- */

struct ggml_tensor * ggml_mul_mat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE_CTX("ggml_mul_mat"); REQUIRE("ggml_mul_mat", a); REQUIRE("ggml_mul_mat", b);
    REQUIRE_F32("ggml_mul_mat", a); REQUIRE_F32("ggml_mul_mat", b);
    if (a->ne[0] != b->ne[0]) return ggmlr_fail_shapes("ggml_mul_mat", "a->ne[0] must equal b->ne[0]", a, b);
    if (a->ne[2] == 0 || a->ne[3] == 0 || b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0)
        return ggmlr_fail_shapes("ggml_mul_mat", "b->ne[2], b->ne[3] must be multiples of a's", a, b);
    const int64_t ne[4] = {a->ne[1], b->ne[1], b->ne[2], b->ne[3]};
    return ggmlr_new_node(ctx, GGML_OP_MUL_MAT, GGML_TYPE_F32, ne, a, b);
}

struct ggml_tensor * ggml_out_prod(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE_CTX("ggml_out_prod"); REQUIRE("ggml_out_prod", a); REQUIRE("ggml_out_prod", b);
    REQUIRE_F32("ggml_out_prod", a); REQUIRE_F32("ggml_out_prod", b);
    if (a->ne[1] != b->ne[1]) return ggmlr_fail_shapes("ggml_out_prod", "a->ne[1] must equal b->ne[1]", a, b);
    if (a->ne[2] == 0 || a->ne[3] == 0 || b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0)
        return ggmlr_fail_shapes("ggml_out_prod", "b->ne[2], b->ne[3] must be multiples of a's", a, b);
    const int64_t ne[4] = {a->ne[0], b->ne[0], b->ne[2], b->ne[3]};
    return ggmlr_new_node(ctx, GGML_OP_OUT_PROD, GGML_TYPE_F32, ne, a, b);
}

static bool mask_type_ok(const struct ggml_tensor * m) { return m->type == GGML_TYPE_F16 || m->type == GGML_TYPE_F32; }

struct ggml_tensor * ggml_soft_max_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask, float scale, float max_bias) {
    const char * fn = "ggml_soft_max_ext";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (mask) {
        if (!mask_type_ok(mask)) return ggmlr_fail_type(fn, "mask", mask, "F16 or F32");
        if (mask->ne[0] != a->ne[0] || mask->ne[1] < a->ne[1] || mask->ne[2] == 0 || mask->ne[3] == 0 ||
            a->ne[2] % mask->ne[2] != 0 || a->ne[3] % mask->ne[3] != 0)
            return ggmlr_fail_shapes(fn, "mask must be [ne0, >= ne1, a divisor of ne2, a divisor of ne3] of a", a, mask);
    }
    if (!isfinite(scale) || !isfinite(max_bias) || max_bias < 0) {
        ggmlr_set_error("%s: scale and max_bias must be finite, max_bias >= 0", fn);
        return NULL;
    }
    if (max_bias > 0 && !mask) { ggmlr_set_error("%s: max_bias > 0 (ALiBi) requires a mask", fn); return NULL; }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_SOFT_MAX, GGML_TYPE_F32, a->ne, a, mask);
    if (!t) return NULL;
    ggmlr_set_op_param_f32(t, 0, scale);
    ggmlr_set_op_param_f32(t, 1, max_bias);
    return t;
}

struct ggml_tensor * ggml_soft_max(struct ggml_context * ctx, struct ggml_tensor * a) { return ggml_soft_max_ext(ctx, a, NULL, 1.0f, 0.0f); }

/* ---- attention ---- */

/* Shape and type rules shared by the forward and backward ops (docs/attention.md). */
static bool check_attention(const char * fn, const struct ggml_tensor * q, const struct ggml_tensor * k,
                            const struct ggml_tensor * v, const struct ggml_tensor * mask, float scale) {
    if (q->type != GGML_TYPE_F32) { ggmlr_fail_type(fn, "q", q, "F32"); return false; }
    if (k->ne[0] != q->ne[0]) { ggmlr_fail_shapes(fn, "k->ne[0] (DK) must equal q->ne[0]", q, k); return false; }
    if (v->ne[1] != k->ne[1]) { ggmlr_fail_shapes(fn, "v->ne[1] (M) must equal k->ne[1]", k, v); return false; }
    if (v->ne[2] != k->ne[2]) { ggmlr_fail_shapes(fn, "v->ne[2] (Hkv) must equal k->ne[2]", k, v); return false; }
    if (k->ne[3] != q->ne[3] || v->ne[3] != q->ne[3]) { ggmlr_fail_shapes(fn, "q, k and v must have the same batch ne[3]", q, k); return false; }
    if (k->ne[2] == 0 || q->ne[2] % k->ne[2] != 0) { ggmlr_fail_shapes(fn, "H = q->ne[2] must be a multiple of Hkv = k->ne[2]", q, k); return false; }
    if (mask) {
        if (!mask_type_ok(mask)) { ggmlr_fail_type(fn, "mask", mask, "F16 or F32"); return false; }
        if (mask->ne[0] != k->ne[1]) { ggmlr_fail_shapes(fn, "mask->ne[0] must equal M = k->ne[1]", k, mask); return false; }
        if (mask->ne[1] < q->ne[1]) { ggmlr_fail_shapes(fn, "mask->ne[1] must be at least N = q->ne[1]", q, mask); return false; }
        if (mask->ne[2] == 0 || mask->ne[3] == 0) { ggmlr_fail_shapes(fn, "mask has an empty dimension", q, mask); return false; }
    }
    if (!isfinite(scale)) { ggmlr_set_error("%s: scale must be finite", fn); return false; }
    return true;
}

struct ggml_tensor * ggml_flash_attn_ext(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                         struct ggml_tensor * v, struct ggml_tensor * mask,
                                         float scale, float max_bias, float logit_softcap) {
    const char * fn = "ggml_flash_attn_ext";
    REQUIRE_CTX(fn); REQUIRE(fn, q); REQUIRE(fn, k); REQUIRE(fn, v);
    if (k->type != GGML_TYPE_F32 && k->type != GGML_TYPE_F16) return ggmlr_fail_type(fn, "k", k, "F32 or F16");
    if (v->type != GGML_TYPE_F32 && v->type != GGML_TYPE_F16) return ggmlr_fail_type(fn, "v", v, "F32 or F16");
    if (!check_attention(fn, q, k, v, mask, scale)) return NULL;
    if (!isfinite(max_bias) || max_bias < 0 || !isfinite(logit_softcap) || logit_softcap < 0) {
        ggmlr_set_error("%s: max_bias and logit_softcap must be finite and >= 0", fn);
        return NULL;
    }
    if (max_bias > 0 && !mask) { ggmlr_set_error("%s: max_bias > 0 (ALiBi) requires a mask", fn); return NULL; }
    const int64_t ne[4] = {v->ne[0], q->ne[2], q->ne[1], q->ne[3]};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_FLASH_ATTN_EXT, GGML_TYPE_F32, ne, q, k);
    if (!t) return NULL;
    /* Row statistics the forward writes as it goes (max and log-sum of each
     * query row's scores), so that its backward need not run the forward again. */
    struct ggml_tensor * stats = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2 * q->ne[1] * q->ne[2] * q->ne[3]);
    if (!stats) return NULL;
    ggml_set_name(stats, "flash_attn_ext stats");
    t->src[2] = v;
    t->src[3] = mask;
    t->src[GGMLR_FA_STATS_SRC] = stats;
    ggmlr_set_op_param_f32(t, 0, scale);
    ggmlr_set_op_param_f32(t, 1, max_bias);
    ggmlr_set_op_param_f32(t, 2, logit_softcap);
    return t;
}

struct ggml_tensor * ggmlr_flash_attn_stats(const struct ggml_tensor * fwd) { return fwd->src[GGMLR_FA_STATS_SRC]; }

struct ggml_tensor * ggml_flash_attn_back(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                          struct ggml_tensor * v, struct ggml_tensor * mask,
                                          struct ggml_tensor * d, float scale) {
    const char * fn = "ggml_flash_attn_back";
    REQUIRE_CTX(fn); REQUIRE(fn, q); REQUIRE(fn, k); REQUIRE(fn, v); REQUIRE(fn, d);
    REQUIRE_F32(fn, k); REQUIRE_F32(fn, v); REQUIRE_F32(fn, d);
    if (!check_attention(fn, q, k, v, mask, scale)) return NULL;
    if (d->ne[0] != v->ne[0] || d->ne[1] != q->ne[2] || d->ne[2] != q->ne[1] || d->ne[3] != q->ne[3]) {
        char sd[96];
        ggmlr_set_error("%s: d must be [DV, H, N, B] = [%lld, %lld, %lld, %lld] (got %s)", fn, (long long) v->ne[0],
                        (long long) q->ne[2], (long long) q->ne[1], (long long) q->ne[3], ggmlr_shape_str(d, sd, sizeof sd));
        return NULL;
    }
    /* each count is at most INT64_MAX / 4 (a tensor's size fits), so the sum fits in uint64 */
    const uint64_t len = (uint64_t) ggmlr_pad16_floats(ggml_nelements(q)) + (uint64_t) ggmlr_pad16_floats(ggml_nelements(k)) +
                         (uint64_t) ggmlr_pad16_floats(ggml_nelements(v));
    if (len > (uint64_t) INT64_MAX / sizeof(float)) {
        ggmlr_set_error("%s: the packed gradients of %llu floats are too large", fn, (unsigned long long) len);
        return NULL;
    }
    const int64_t ne[4] = {(int64_t) len, 1, 1, 1};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_FLASH_ATTN_BACK, GGML_TYPE_F32, ne, q, k);
    if (!t) return NULL;
    t->src[2] = v;
    t->src[3] = mask;
    t->src[4] = d;
    ggmlr_set_op_param_f32(t, 0, scale);
    return t;
}

struct ggml_tensor * ggmlr_flash_attn_back_saved(struct ggml_context * ctx, struct ggml_tensor * fwd, struct ggml_tensor * d) {
    struct ggml_tensor * t = ggml_flash_attn_back(ctx, fwd->src[0], fwd->src[1], fwd->src[2], fwd->src[3], d, ggmlr_get_op_param_f32(fwd, 0));
    if (!t) return NULL;
    t->src[5] = fwd;
    t->src[6] = ggmlr_flash_attn_stats(fwd);
    return t;
}

static const char * const op_names[] = {
    "NONE", "DUP", "ADD", "SUB", "MUL", "DIV", "SQR", "SQRT", "LOG", "SUM", "SUM_ROWS", "MEAN",
    "REPEAT", "REPEAT_BACK", "SCALE", "CPY", "CONT", "RESHAPE", "VIEW", "PERMUTE", "TRANSPOSE",
    "ACC", "MUL_MAT", "SOFT_MAX", "FLASH_ATTN_EXT", "FLASH_ATTN_BACK",
    "GET_ROWS", "GET_ROWS_BACK", "NORM", "RMS_NORM", "NORM_BACK", "RMS_NORM_BACK", "UNARY", "UNARY_BACK",
    "SOFT_MAX_BACK", "CROSS_ENTROPY_LOSS", "CROSS_ENTROPY_LOSS_BACK", "OUT_PROD", "ROPE", "ROPE_BACK",
    "ARGMAX", "OPT_STEP_ADAMW", "OPT_STEP_SGD",
};
_Static_assert(sizeof op_names / sizeof op_names[0] == GGML_OP_COUNT, "one name per op");

const char * ggml_op_name(enum ggml_op op) {
    return (op >= 0 && op < GGML_OP_COUNT) ? op_names[op] : "UNKNOWN";
}

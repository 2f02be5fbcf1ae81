/* checks.c -- what every op family's constructor shares: the argument
 * checks and their messages, node and view creation (ops/ops_internal.h).
 * No maths happens in ops/; kernels live in cpu/kernels/. Every constructor
 * returns NULL with a message on bad input, and NULL inputs propagate. */
#include "ops/ops_internal.h"

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

bool ggmlr_is_float_type(enum ggml_type type) { return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16; }

/* Only dup, cont, cpy and concat read or write a quantized tensor yet, the
 * first operand of mul_mat, out_prod, mul_mat_id, get_rows and get_rows_back
 * (a stored weight, experts, table or gradient, converted row by row) and
 * fused attention's K and V (converted as they are packed); the other
 * constructors refuse them. */
bool ggmlr_refuse_quantized(const char * fn, const struct ggml_tensor * t) {
    if (!t || !ggml_is_quantized(t->type)) return false;
    ggmlr_set_error("%s: tensor '%s' is %s; ops on quantized tensors are not implemented yet "
                    "(dequantize with ggml_get_type_traits(type)->to_float)", fn, t->name, ggml_type_name(t->type));
    return true;
}

struct ggml_tensor * ggmlr_new_node(struct ggml_context * ctx, enum ggml_op op, enum ggml_type type, const int64_t ne[4],
                                    struct ggml_tensor * src0, struct ggml_tensor * src1) {
    /* dup, cont and concat copy whole rows (or blocks) of any type; the products and get_rows(_back) read their first operand's rows as F32 */
    const bool copies = op == GGML_OP_DUP || op == GGML_OP_CONT || op == GGML_OP_CONCAT;
    const bool reads_weight = op == GGML_OP_MUL_MAT || op == GGML_OP_OUT_PROD || op == GGML_OP_MUL_MAT_ID || op == GGML_OP_GET_ROWS ||
                              op == GGML_OP_GET_ROWS_BACK;
    const bool reads_kv = op == GGML_OP_FLASH_ATTN_EXT || op == GGML_OP_FLASH_ATTN_BACK;  /* src1: K */
    if (!copies && ((!reads_weight && ggmlr_refuse_quantized(ggml_op_name(op), src0)) ||
                    (!reads_kv && ggmlr_refuse_quantized(ggml_op_name(op), src1)))) return NULL;
    struct ggml_tensor * t = ggml_new_tensor(ctx, type, 4, ne);
    if (!t) return NULL;
    t->op = op;
    t->src[0] = src0;
    t->src[1] = src1;
    return t;
}

/* Bytes from the first to past the last element of a region of shape ne
 * (all >= 0) and strides nb; false when that overflows size_t. */
bool ggmlr_region_span(const int64_t ne[4], const size_t nb[4], size_t esize, size_t * span) {
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

/* a trainable parameter, or a view of one */
static bool holds_param(const struct ggml_tensor * a) {
    return (a->flags & GGML_TENSOR_FLAG_PARAM) || (a->view_src && (a->view_src->flags & GGML_TENSOR_FLAG_PARAM));
}

/* A view of a: shape ne, strides nb, starting `offset` bytes into a's data. */
struct ggml_tensor * ggmlr_new_view(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op op,
                                     const int64_t ne[4], const size_t nb[4], size_t offset) {
    /* cpy's node is the whole of its destination, with its own strides; the
     * layout ops view a block type's rows as they are (whole blocks along dim 0) */
    const bool layout_only = op == GGML_OP_CPY || op == GGML_OP_SET_ROWS || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE;
    if (!layout_only && ggmlr_refuse_quantized(fn, a)) return NULL;
    /* An op written over a trainable parameter (an _inplace form) writes a
     * new tensor instead: a parameter is never overwritten, and the gradient
     * rules read its values (upstream overwrites it and differentiates at the
     * overwritten values). Custom ops keep the view: their callbacks may read
     * dst as a. */
    const bool custom = op == GGML_OP_MAP_CUSTOM1 || op == GGML_OP_MAP_CUSTOM2 || op == GGML_OP_MAP_CUSTOM3 || op == GGML_OP_CUSTOM;
    if (!layout_only && !custom && holds_param(a)) {
        struct ggml_tensor * t = ggml_new_tensor(ctx, a->type, 4, ne);
        if (!t) return NULL;
        t->op = op;
        t->src[0] = a;
        return t;
    }
    for (int i = 0; i < 4; i++)
        if (ne[i] < 0) { ggmlr_set_error("%s: ne[%d] is negative", fn, i); return NULL; }
    /* a block type's first dimension counts blocks of es bytes */
    const size_t es = ggml_type_size(a->type);
    const int64_t blck = ggml_blck_size(a->type);
    const int64_t ne_span[4] = {ne[0] / blck, ne[1], ne[2], ne[3]};
    size_t span;
    const size_t avail = ggml_nbytes(a);
    if (!ggmlr_region_span(ne_span, nb, es, &span)) {
        ggmlr_set_error("%s: view strides span more than the address space (tensor '%s' has %zu bytes)", fn, a->name, avail);
        return NULL;
    }
    if (offset > avail || span > avail - offset) {
        ggmlr_set_error("%s: view of %zu bytes at offset %zu runs past the %zu bytes of tensor '%s'", fn, span, offset, avail, a->name);
        return NULL;
    }
    /* An empty view reads nothing, but kernels still form its row pointers
     * (data + i1*nb1 + ...): those must stay inside a too, so a stride that
     * wrapped (a negative one cast to size_t) is refused here, not in a kernel. */
    if (span == 0) {
        const int64_t rows[4] = {1, ne[1] ? ne[1] : 1, ne[2] ? ne[2] : 1, ne[3] ? ne[3] : 1};
        size_t frame;
        if (!ggmlr_region_span(rows, nb, 0, &frame) || frame > avail - offset) {
            ggmlr_set_error("%s: the rows of an empty view (strides %zu, %zu, %zu) run past the %zu bytes of tensor '%s' at offset %zu",
                            fn, nb[1], nb[2], nb[3], avail, a->name, offset);
            return NULL;
        }
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

/* The gradient ops take two F32 tensors of one shape (any layout). */
bool ggmlr_check_same_f32_pair(const char * fn, const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->type != GGML_TYPE_F32) { ggmlr_fail_type(fn, "a", a, "F32"); return false; }
    if (b->type != GGML_TYPE_F32) { ggmlr_fail_type(fn, "b", b, "F32"); return false; }
    if (!ggml_are_same_shape(a, b)) { ggmlr_fail_shapes(fn, "a and b must have the same shape", a, b); return false; }
    return true;
}

bool ggmlr_check_size_bound(const char * fn, double bound) {
    if (bound < 0x1p62) return true;
    ggmlr_set_error("%s: the result's size would overflow (about %.3g elements along one dimension)", fn, bound);
    return false;
}

struct ggml_tensor * ggmlr_new_inplace(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op op) {
    if (!ggml_is_contiguous(a)) { ggmlr_set_error("%s: a must be contiguous (the result is written over it)", fn); return NULL; }
    return ggmlr_new_view(fn, ctx, a, op, a->ne, a->nb, 0);
}

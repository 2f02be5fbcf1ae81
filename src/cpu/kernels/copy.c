/* copy.c -- dup, cont and cpy: copies with type conversion (F32, F16, BF16,
 * I32, and the quantized types by whole rows), and roll (elements moved with wrap-around). */
#include "cpu/kernels/kernels.h"

static bool quantized_side(const struct ggml_tensor * dst) {
    return ggml_is_quantized(dst->type) || ggml_is_quantized(dst->src[0]->type);
}

/* Row r of dst (indices i1..i3) is src's row r in order: the same indices
 * when the shapes agree, else r unravelled over src's rows. */
static void src_row_of(const struct ggml_tensor * src, bool same_shape, int64_t r, int64_t i1, int64_t i2, int64_t i3,
                       int64_t * s1, int64_t * s2, int64_t * s3) {
    *s1 = i1; *s2 = i2; *s3 = i3;
    if (!same_shape) ggmlr_row_index(src, r, s1, s2, s3);
}

bool ggmlr_copy_moves_rows(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    return (dst->op == GGML_OP_CPY || dst->op == GGML_OP_DUP || dst->op == GGML_OP_CONT) && src->type == dst->type &&
           src->ne[0] == dst->ne[0] && src->nb[0] == ggml_type_size(src->type) && dst->nb[0] == ggml_type_size(dst->type);
}

/* A quantized source or destination of another type converts whole rows
 * (the constructor requires rows of one length): row r of src in order as
 * F32, dequantized when src is quantized, then quantized with dst's
 * reference quantizer (upstream's bytes) or stored element by element. */
static void dup_rows_converted(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const ggml_from_float_t quantize = ggml_is_quantized(dst->type) ? ggmlr_type_traits_own(dst->type)->from_float_ref : NULL;
    const bool same_shape = ggml_are_same_shape(src, dst);
    struct ggmlr_rows rows = ggmlr_my_dst_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        int64_t s1, s2, s3;
        src_row_of(src, same_shape, r, i1, i2, i3, &s1, &s2, &s3);
        const float * v = ggmlr_row_f32(src, s1, s2, s3, p->wdata);
        char * drow = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        if (quantize) quantize(v, drow, dst->ne[0]);
        else for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) ggmlr_store_f32(dst->type, drow + i0 * dst->nb[0], v[i0]);
    }
}

/* a row of floats for dup_rows_converted */
static size_t dup_work_size(const struct ggml_tensor * dst) {
    return quantized_side(dst) && dst->type != dst->src[0]->type ? (size_t) dst->ne[0] * sizeof(float) : 0;
}

/* dst := src element by element in logical (ne0-fastest) order; shapes may
 * differ when the element counts agree (ggml_cpy). Split over dst rows. */
static void ggmlr_compute_dup(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    if (quantized_side(dst) && src->type != dst->type) { dup_rows_converted(p, dst); return; }
    const bool same_shape = ggml_are_same_shape(src, dst);
    /* rows of one type and length, packed: row r of dst is row r of src (any
     * type, the only way for a block type: cont_4d may regroup its rows) */
    const bool row_copy = ggmlr_copy_moves_rows(dst);
    struct ggmlr_rows rows = ggmlr_my_dst_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        char * drow = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        if (row_copy) {
            int64_t s1, s2, s3;
            src_row_of(src, same_shape, r, i1, i2, i3, &s1, &s2, &s3);
            /* memmove: ggml_cpy of a view into the memory it views may overlap */
            memmove(drow, ggmlr_elem_ptr(src, 0, s1, s2, s3), ggml_row_size(dst->type, dst->ne[0]));
            continue;
        }
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            int64_t s0 = i0, s1 = i1, s2 = i2, s3 = i3;
            if (!same_shape) {
                int64_t lin = i0 + dst->ne[0] * r;
                s0 = lin % src->ne[0]; lin /= src->ne[0];
                s1 = lin % src->ne[1]; lin /= src->ne[1];
                s2 = lin % src->ne[2]; s3 = lin / src->ne[2];
            }
            const float v = ggmlr_load_f32(src->type, ggmlr_elem_ptr(src, s0, s1, s2, s3));
            ggmlr_store_f32(dst->type, drow + i0 * dst->nb[0], v);
        }
    }
}

/* i - s wrapped into [0, n), for |s| < n */
static int64_t wrap(int64_t i, int64_t n) { return i < 0 ? i + n : i >= n ? i - n : i; }

/* ROLL: dst[i0, i1, i2, i3] = a[(i0 - s0) mod ne0, (i1 - s1) mod ne1, ...]; threads split dst rows */
static void ggmlr_compute_roll(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggmlr_roll_params prm = ggmlr_roll_params_decode(dst);
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        float * y = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        const char * x = ggmlr_elem_ptr(a, 0, wrap(i1 - prm.shift[1], a->ne[1]), wrap(i2 - prm.shift[2], a->ne[2]), wrap(i3 - prm.shift[3], a->ne[3]));
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) y[i0] = *(const float *) (x + wrap(i0 - prm.shift[0], a->ne[0]) * a->nb[0]);
    }
}

GGMLR_KERNEL(dup, ggmlr_compute_dup, dup_work_size, NULL);
GGMLR_KERNEL(roll, ggmlr_compute_roll, NULL, NULL);

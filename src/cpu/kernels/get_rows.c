/* get_rows.c -- rows by index: get_rows (gather rows of a table by I32 index),
 * get_rows_back (its adjoint: scatter-add rows into zeros) and set_rows (rows
 * written into a tensor at I32 indices, in place). Indices come
 * from data, so each one is checked before it is used: an index out of range
 * fails the compute instead of reading or writing out of bounds. */
#include "cpu/kernels/kernels.h"

static int32_t index_at(const struct ggml_tensor * b, int64_t j, int64_t i2, int64_t i3) {
    return *(const int32_t *) ggmlr_elem_ptr(b, j, i2, i3, 0);
}

static bool index_ok(const struct ggmlr_compute_params * p, const char * op, int64_t row, int64_t rows, int64_t j, int64_t i2, int64_t i3) {
    if (row >= 0 && row < rows) return true;
    ggmlr_compute_fail(p, "%s: index %lld at (%lld, %lld, %lld) is outside [0, %lld)", op, (long long) row, (long long) j, (long long) i2,
                       (long long) i3, (long long) rows);
    return false;
}

/* dst row (j, i2, i3) = a row b[j, i2, i3] of batch (i2, i3); threads split dst rows */
static void ggmlr_compute_get_rows(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const int64_t n0 = a->ne[0];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, j, i2, i3;
    while (ggmlr_next_row(&rows, &r, &j, &i2, &i3)) {
        const int32_t row = index_at(b, j, i2, i3);
        if (!index_ok(p, "GET_ROWS", row, a->ne[1], j, i2, i3)) continue;
        char * out = ggmlr_elem_ptr(dst, 0, j, i2, i3);
        if (a->type == GGML_TYPE_I32) {
            for (int64_t i = 0; i < n0; i++) ((int32_t *) out)[i] = *(const int32_t *) ggmlr_elem_ptr(a, i, row, i2, i3);
            continue;
        }
        /* F32 or F16 into the F32 result: converted straight into it, or copied when a's row is already packed F32 */
        const float * x = ggmlr_row_f32(a, row, i2, i3, (float *) out);
        if (x != (const float *) out) memcpy(out, x, (size_t) n0 * sizeof(float));
    }
}

/* a row of a as F32 when it is not packed F32 */
static size_t get_rows_back_work_size(const struct ggml_tensor * dst) { return (size_t) dst->ne[0] * sizeof(float); }

/* dst = zeros shaped like c; dst row b[j, i2, i3] += a row (j, i2, i3), a of any type read as F32.
 * Each thread owns a range of dst rows, zeroes them, and scans its batches'
 * indices in order adding the rows that land in its range: a row that several
 * indices hit sums them in index order, whatever the thread count. */
static void ggmlr_compute_get_rows_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const int64_t n0 = dst->ne[0], rows = dst->ne[1], n_idx = b->ne[0];
    int64_t r0, r1;
    ggmlr_split(ggml_nrows(dst), p->ith, p->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        ggmlr_row_index(dst, r, &i1, &i2, &i3);
        memset(ggmlr_elem_ptr(dst, 0, i1, i2, i3), 0, (size_t) n0 * sizeof(float));
    }
    if (r0 >= r1) return;
    /* batches (i2, i3) that hold rows of [r0, r1) */
    for (int64_t batch = r0 / rows; batch <= (r1 - 1) / rows; batch++) {
        const int64_t i2 = batch % dst->ne[2], i3 = batch / dst->ne[2];
        for (int64_t j = 0; j < n_idx; j++) {
            const int32_t row = index_at(b, j, i2, i3);
            if (!index_ok(p, "GET_ROWS_BACK", row, rows, j, i2, i3)) continue;
            const int64_t r = batch * rows + row;
            if (r < r0 || r >= r1) continue;
            float * out = ggmlr_elem_ptr(dst, 0, row, i2, i3);
            const float * g = ggmlr_row_f32(a, j, i2, i3, p->wdata);
            for (int64_t i = 0; i < n0; i++) out[i] += g[i];
        }
    }
}

/* dst (a view of a) row c[j, i2 % ne11, i3 % ne12] of batch (i2, i3) := b row
 * (j, i2, i3), converted to dst's type. As in get_rows_back, each thread owns
 * a range of dst rows and scans its batches' indices in order, writing the
 * rows that land in its range; a byte per owned row of the batch (scratch)
 * marks the rows written, so that a row named twice fails the compute
 * instead of depending on which write comes last. */
static void ggmlr_compute_set_rows(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_set_rows_srcs s = ggmlr_set_rows_srcs_decode(dst);
    const int64_t n0 = dst->ne[0], rows = dst->ne[1], n_idx = s.b->ne[1];
    int64_t r0, r1;
    ggmlr_split(ggml_nrows(dst), p->ith, p->nth, &r0, &r1);
    if (r0 >= r1) return;
    float * conv = p->wdata;                                   /* one row of b as F32 */
    unsigned char * seen = (unsigned char *) (conv + n0);     /* rows of the batch: written yet */
    for (int64_t batch = r0 / rows; batch <= (r1 - 1) / rows; batch++) {
        const int64_t i2 = batch % dst->ne[2], i3 = batch / dst->ne[2];
        memset(seen, 0, (size_t) rows);
        for (int64_t j = 0; j < n_idx; j++) {
            const void * at = ggmlr_elem_ptr(s.c, j, i2 % s.c->ne[1], i3 % s.c->ne[2], 0);
            int64_t row;  /* I32 or I64 indices */
            if (s.c->type == GGML_TYPE_I64) memcpy(&row, at, sizeof row);
            else { int32_t r32; memcpy(&r32, at, sizeof r32); row = r32; }
            if (!index_ok(p, "SET_ROWS", row, rows, j, i2, i3)) return;
            const int64_t r = batch * rows + row;
            if (r < r0 || r >= r1) continue;
            if (seen[row]++) {
                ggmlr_compute_fail(p, "SET_ROWS: row %lld of batch (%lld, %lld) is written twice (index %lld)", (long long) row, (long long) i2,
                                   (long long) i3, (long long) j);
                return;
            }
            /* b may be a view of dst's own memory: the F32 row moves with
             * memmove, and is staged in conv before an F16 write over it */
            const float * x = ggmlr_row_f32(s.b, j, i2, i3, conv);
            void * out = ggmlr_elem_ptr(dst, 0, row, i2, i3);
            if (dst->type == GGML_TYPE_F32) {
                memmove(out, x, (size_t) n0 * sizeof(float));
            } else {
                if (x != conv) x = memcpy(conv, x, (size_t) n0 * sizeof(float));
                if (dst->type == GGML_TYPE_F16) ggml_fp32_to_fp16_row(x, out, n0);
                else ggmlr_type_traits_own(dst->type)->from_float_ref(x, out, n0);  /* BF16 or a block type */
            }
        }
    }
}

static size_t set_rows_work(const struct ggml_tensor * dst) { return (size_t) dst->ne[0] * sizeof(float) + (size_t) dst->ne[1]; }

GGMLR_KERNEL(set_rows, ggmlr_compute_set_rows, set_rows_work, NULL);
GGMLR_KERNEL(get_rows, ggmlr_compute_get_rows, NULL, NULL);
GGMLR_KERNEL(get_rows_back, ggmlr_compute_get_rows_back, get_rows_back_work_size, NULL);

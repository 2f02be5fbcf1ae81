/* copy.c -- kernels that move data: dup/cont/cpy (with type conversion),
 * repeat (tiling), repeat_back (its adjoint: summing tiles) and acc. */
#include "cpu/kernels/kernels.h"

const float * ggmlr_row_f32(const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3, float * scratch) {
    const char * row = (const char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
    if (t->type == GGML_TYPE_F32 && t->nb[0] == sizeof(float)) return (const float *) row;
    if (t->type == GGML_TYPE_F16 && t->nb[0] == sizeof(ggml_fp16_t)) {
        ggml_fp16_to_fp32_row((const ggml_fp16_t *) row, scratch, t->ne[0]);
    } else {
        for (int64_t i = 0; i < t->ne[0]; i++) scratch[i] = ggmlr_load_f32(t->type, row + i * t->nb[0]);
    }
    return scratch;
}

static bool same_elements(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->data != b->data || a->type != b->type) return false;
    for (int i = 0; i < GGML_MAX_DIMS; i++) if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i]) return false;
    return true;
}

/* Byte ranges [data, data + span) intersect. */
static bool bytes_overlap(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    const char * a0 = a->data, * b0 = b->data;
    const size_t na = ggmlr_tensor_nbytes_span(a), nb = ggmlr_tensor_nbytes_span(b);
    return na > 0 && nb > 0 && a0 < b0 + nb && b0 < a0 + na;
}

struct ggmlr_rows ggmlr_my_dst_rows(const struct ggmlr_compute_params * p, const struct ggml_tensor * dst) {
    for (int s = 0; s < GGML_MAX_SRC; s++) {
        const struct ggml_tensor * src = dst->src[s];
        if (src && src->data && !same_elements(src, dst) && bytes_overlap(src, dst)) {
            struct ggmlr_rows rows = {dst, 0, p->ith == 0 ? ggml_nrows(dst) : 0};
            return rows;
        }
    }
    return ggmlr_my_rows(p, dst);
}

/* dst := src element by element in logical (ne0-fastest) order; shapes may
 * differ when the element counts agree (ggml_cpy). Split over dst rows. */
void ggmlr_compute_dup(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const bool same_shape = ggml_are_same_shape(src, dst);
    const bool plain_copy = same_shape && src->type == dst->type && src->nb[0] == ggml_type_size(src->type) &&
                            dst->nb[0] == ggml_type_size(dst->type);
    struct ggmlr_rows rows = ggmlr_my_dst_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        char * drow = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        if (plain_copy) {
            /* memmove: ggml_cpy of a view into the memory it views may overlap */
            memmove(drow, ggmlr_elem_ptr(src, 0, i1, i2, i3), (size_t) dst->ne[0] * dst->nb[0]);
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

/* dst[i] = a[i mod a.ne] per dimension. */
void ggmlr_compute_repeat(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        float * d = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        const char * arow = ggmlr_elem_ptr(a, 0, i1 % a->ne[1], i2 % a->ne[2], i3 % a->ne[3]);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) d[i0] = *(const float *) (arow + (i0 % a->ne[0]) * a->nb[0]);
    }
}

/* dst[j] = sum of a over every index that reduces to j (mod dst.ne), in
 * double. Each dst row is summed by one thread in a fixed order (tiles t3, t2,
 * t1, t0 in turn), the row's ne0 sums side by side in scratch so that a is
 * read along its rows. */
size_t ggmlr_repeat_back_work_size(const struct ggml_tensor * dst) { return (size_t) dst->ne[0] * sizeof(double); }

void ggmlr_compute_repeat_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    if (ggml_nelements(dst) == 0) return;  /* nothing to write; the tile counts below would divide by zero */
    const int64_t n0 = dst->ne[0];
    const int64_t k0 = a->ne[0] / n0, k1 = a->ne[1] / dst->ne[1], k2 = a->ne[2] / dst->ne[2], k3 = a->ne[3] / dst->ne[3];
    const bool a_packed = a->nb[0] == sizeof(float);
    double * sum = p->wdata;
    /* items: rows of dst, each cut into column chunks when there are fewer
     * rows than threads (a bias gradient is one row); every element is still
     * summed in the same order, so the result does not depend on the split */
    const int64_t nrows = ggml_nrows(dst), chunks = nrows < p->nth ? p->nth : 1, per = (n0 + chunks - 1) / chunks;
    int64_t it0, it1;
    ggmlr_split(nrows * chunks, p->ith, p->nth, &it0, &it1);
    for (int64_t item = it0; item < it1; item++) {
        int64_t j1, j2, j3;
        ggmlr_row_index(dst, item / chunks, &j1, &j2, &j3);
        const int64_t c0 = (item % chunks) * per, c1 = c0 + per < n0 ? c0 + per : n0;
        for (int64_t j0 = c0; j0 < c1; j0++) sum[j0] = 0.0;
        for (int64_t t3 = 0; t3 < k3; t3++)
            for (int64_t t2 = 0; t2 < k2; t2++)
                for (int64_t t1 = 0; t1 < k1; t1++) {
                    const char * arow = ggmlr_elem_ptr(a, 0, j1 + t1 * dst->ne[1], j2 + t2 * dst->ne[2], j3 + t3 * dst->ne[3]);
                    for (int64_t t0 = 0; t0 < k0; t0++) {
                        if (a_packed) {
                            const float * x = (const float *) arow + t0 * n0;
                            for (int64_t j0 = c0; j0 < c1; j0++) sum[j0] += x[j0];
                        } else {
                            for (int64_t j0 = c0; j0 < c1; j0++) sum[j0] += *(const float *) (arow + (j0 + t0 * n0) * a->nb[0]);
                        }
                    }
                }
        float * d = ggmlr_elem_ptr(dst, 0, j1, j2, j3);
        for (int64_t j0 = c0; j0 < c1; j0++) d[j0] = (float) sum[j0];
    }
}

/* Whether b's rows land on disjoint elements of dst (each stride at least the
 * extent of the block below it, as for any view): then they can be added by
 * different threads. */
static bool acc_rows_disjoint(const struct ggml_tensor * b, const size_t st[3]) {
    size_t extent = (size_t) b->ne[0] * sizeof(float);
    for (int d = 1; d < 4; d++) {
        if (b->ne[d] <= 1) continue;
        if (st[d - 1] < extent) return false;
        extent += st[d - 1] * (size_t) (b->ne[d] - 1);
    }
    return true;
}

/* dst = a (or zeros; nothing when dst is a itself), then b added into the
 * region (nb1..nb3, offset) of dst. Phase 1 splits dst's bytes over the
 * threads; phase 2 splits b's rows when they land on disjoint elements, else
 * thread 0 adds them all, in order. */
void ggmlr_compute_acc(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    size_t prm[4];
    memcpy(prm, dst->op_params, sizeof prm);
    const bool zero_base = dst->op_params[GGMLR_ACC_ZERO_BASE] != 0;
    int64_t e0, e1;
    ggmlr_split(ggml_nelements(dst), p->ith, p->nth, &e0, &e1);
    float * d = dst->data;
    if (zero_base || d != a->data) {  /* else in place: dst is a */
        if (zero_base) memset(d + e0, 0, (size_t) (e1 - e0) * sizeof(float));
        else memcpy(d + e0, (const float *) a->data + e0, (size_t) (e1 - e0) * sizeof(float));
        ggmlr_barrier(p);
    }
    /* an empty b adds nothing (its strides were never checked against a: no row address is formed) */
    if (ggml_nelements(b) == 0) return;
    const bool disjoint = acc_rows_disjoint(b, prm);
    if (!disjoint && p->ith != 0) return;
    struct ggmlr_rows rows = ggmlr_my_rows(p, b);
    if (!disjoint) rows.next = 0, rows.end = ggml_nrows(b);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        float * t = (float *) ((char *) dst->data + prm[3] + i1 * prm[0] + i2 * prm[1] + i3 * prm[2]);
        const char * brow = ggmlr_elem_ptr(b, 0, i1, i2, i3);
        if (b->nb[0] == sizeof(float)) {  /* packed rows: a loop that vectorises */
            const float * x = (const float *) brow;
            for (int64_t i0 = 0; i0 < b->ne[0]; i0++) t[i0] += x[i0];
        } else {
            for (int64_t i0 = 0; i0 < b->ne[0]; i0++) t[i0] += *(const float *) (brow + i0 * b->nb[0]);
        }
    }
}

/* reduce.c -- sum (to a scalar), sum_rows and mean (per row), cumsum
 * (prefix sums per row), repeat (tiling) and repeat_back (its adjoint:
 * summing tiles), argmax, count_equal, argsort and top_k (a stable merge
 * sort of each row's indices). Sums accumulate in double, in a fixed order,
 * so they are accurate and thread-count independent. */
#include "cpu/kernels/kernels.h"
#include "cpu/simd/vec.h"

#include <math.h>
#include <string.h>

static double row_sum(const struct ggml_tensor * a, int64_t i1, int64_t i2, int64_t i3) {
    const char * row = ggmlr_elem_ptr(a, 0, i1, i2, i3);
    double s = 0.0;
    for (int64_t i = 0; i < a->ne[0]; i++) s += *(const float *) (row + i * a->nb[0]);
    return s;
}

static void ggmlr_compute_sum(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    if (p->ith != 0) return;
    const struct ggml_tensor * a = dst->src[0];
    double s = 0.0;
    for (int64_t r = 0; r < ggml_nrows(a); r++) {
        int64_t i1, i2, i3;
        ggmlr_row_index(a, r, &i1, &i2, &i3);
        s += row_sum(a, i1, i2, i3);
    }
    *(float *) dst->data = (float) s;
}

static void ggmlr_compute_sum_rows(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const double div = dst->op == GGML_OP_MEAN ? (double) a->ne[0] : 1.0;
    struct ggmlr_rows rows = ggmlr_my_rows(p, a);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        *(float *) ggmlr_elem_ptr(dst, 0, i1, i2, i3) = (float) (row_sum(a, i1, i2, i3) / div);
    }
}

/* dst[i] = a[i mod a.ne] per dimension, elements copied as bits (dst has a's
 * type: 4 bytes for F32/I32, 2 for F16/BF16/I16). */
#define REPEAT_ROW(T) \
    for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) memcpy(d + i0 * dst->nb[0], arow + (i0 % a->ne[0]) * a->nb[0], sizeof(T))
static void ggmlr_compute_repeat(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const size_t es = ggml_type_size(a->type);
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        char * d = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        const char * arow = ggmlr_elem_ptr(a, 0, i1 % a->ne[1], i2 % a->ne[2], i3 % a->ne[3]);
        if (es == 4) REPEAT_ROW(uint32_t);
        else         REPEAT_ROW(uint16_t);
    }
}

/* dst[j] = sum of a over every index that reduces to j (mod dst.ne), in
 * double. Each dst row is summed by one thread in a fixed order (tiles t3, t2,
 * t1, t0 in turn), the row's ne0 sums side by side in scratch so that a is
 * read along its rows. */
static size_t ggmlr_repeat_back_work_size(const struct ggml_tensor * dst) { return (size_t) dst->ne[0] * sizeof(double); }

static void ggmlr_compute_repeat_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
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
                            ggmlr_vec()->acc_f64(c1 - c0, (const float *) arow + t0 * n0 + c0, sum + c0);
                        } else {
                            for (int64_t j0 = c0; j0 < c1; j0++) sum[j0] += *(const float *) (arow + (j0 + t0 * n0) * a->nb[0]);
                        }
                    }
                }
        float * d = ggmlr_elem_ptr(dst, 0, j1, j2, j3);
        for (int64_t j0 = c0; j0 < c1; j0++) d[j0] = (float) sum[j0];
    }
}

/* one row of the source as floats (argmax, cumsum) */
static size_t ggmlr_row_work_size(const struct ggml_tensor * dst) { return (size_t) dst->src[0]->ne[0] * sizeof(float); }

/* dst[i1] = index of the largest element of row i1; the first one on ties (as upstream) */
static void ggmlr_compute_argmax(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    struct ggmlr_rows rows = ggmlr_my_rows(p, a);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const float * x = ggmlr_row_f32(a, i1, i2, i3, p->wdata);
        int32_t best = 0;
        for (int64_t i = 1; i < a->ne[0]; i++)
            if (x[i] > x[best]) best = (int32_t) i;
        *(int32_t *) ggmlr_elem_ptr(dst, i1, 0, 0, 0) = best;
    }
}

/* y_i = x_0 + ... + x_i, the running sum in double */
static void ggmlr_compute_cumsum(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const float * x = ggmlr_row_f32(a, i1, i2, i3, p->wdata);
        float * y = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        double s = 0.0;
        for (int64_t i = 0; i < a->ne[0]; i++) { s += x[i]; y[i] = (float) s; }
    }
}

/* one thread counts: the result is one integer */
static void ggmlr_compute_count_equal(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    if (p->ith != 0) return;
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    int32_t n = 0;
    for (int64_t r = 0; r < ggml_nrows(a); r++) {
        int64_t i1, i2, i3;
        ggmlr_row_index(a, r, &i1, &i2, &i3);
        const char * ra = ggmlr_elem_ptr(a, 0, i1, i2, i3), * rb = ggmlr_elem_ptr(b, 0, i1, i2, i3);
        for (int64_t i = 0; i < a->ne[0]; i++) n += *(const int32_t *) (ra + i * a->nb[0]) == *(const int32_t *) (rb + i * b->nb[0]);
    }
    *(int32_t *) dst->data = n;
}

/* does index i go before j: by value in the order, NaN last, ties by index (a strict total order) */
static inline bool sorts_before(const float * x, int32_t i, int32_t j, bool desc) {
    const bool ni = isnan(x[i]), nj = isnan(x[j]);
    if (ni != nj) return nj;
    if (!ni && x[i] != x[j]) return desc ? x[i] > x[j] : x[i] < x[j];
    return i < j;
}

/* the row's indices in idx sorted (bottom-up merge sort through tmp: O(n log n), stable) */
static void sort_indices(const float * x, int64_t n, bool desc, int32_t * idx, int32_t * tmp) {
    for (int64_t i = 0; i < n; i++) idx[i] = (int32_t) i;
    for (int64_t w = 1; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            const int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) tmp[o++] = sorts_before(x, idx[j], idx[i], desc) ? idx[j++] : idx[i++];
            while (i < mid) tmp[o++] = idx[i++];
            while (j < hi) tmp[o++] = idx[j++];
        }
        memcpy(idx, tmp, (size_t) n * sizeof *idx);
    }
}

/* a row of floats and two of indices */
static size_t ggmlr_sort_work_size(const struct ggml_tensor * dst) { return (size_t) dst->src[0]->ne[0] * (sizeof(float) + 2 * sizeof(int32_t)); }

/* ARGSORT (the order of its parameter) and TOP_K (descending, the first k) */
static void ggmlr_compute_sort(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const int64_t n = a->ne[0];
    const bool desc = dst->op == GGML_OP_TOP_K || ggmlr_sort_params_decode(dst) == GGML_SORT_ORDER_DESC;
    float * xbuf = p->wdata;
    int32_t * idx = (int32_t *) (xbuf + n), * tmp = idx + n;
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        sort_indices(ggmlr_row_f32(a, i1, i2, i3, xbuf), n, desc, idx, tmp);
        char * d = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        for (int64_t i = 0; i < dst->ne[0]; i++) *(int32_t *) (d + i * dst->nb[0]) = idx[i];
    }
}

GGMLR_KERNEL(sum, ggmlr_compute_sum, NULL, NULL);
GGMLR_KERNEL(sum_rows, ggmlr_compute_sum_rows, NULL, NULL);  /* SUM_ROWS, MEAN */
GGMLR_KERNEL(repeat, ggmlr_compute_repeat, NULL, NULL);
GGMLR_KERNEL(repeat_back, ggmlr_compute_repeat_back, ggmlr_repeat_back_work_size, NULL);
GGMLR_KERNEL(argmax, ggmlr_compute_argmax, ggmlr_row_work_size, NULL);
GGMLR_KERNEL(cumsum, ggmlr_compute_cumsum, ggmlr_row_work_size, NULL);
GGMLR_KERNEL(count_equal, ggmlr_compute_count_equal, NULL, NULL);
GGMLR_KERNEL(sort, ggmlr_compute_sort, ggmlr_sort_work_size, NULL);  /* ARGSORT, TOP_K */

/* solve_tri.c -- X with A X = B for triangular A (GGML_OP_SOLVE_TRI), any
 * input layout.
 *
 * a [n, n, ne2, ne3]: A[i][t] is element (t, i); b, dst [k, n, ne2, ne3]:
 * column c of B and X are elements (c, 0..n-1). Each column is solved by
 * substitution, forward for a lower A, backward for an upper one:
 *   x[i] = (b[i] - sum_{t on A's side of i} A[i][t] x[t]) / A[i][i]
 * (no division when uni). The work is split by (column, matrix); a zero on
 * the diagonal gives Inf or NaN, as upstream's. */
#include "cpu/kernels/kernels.h"

/* scratch: the column being solved and one row of A */
static size_t solve_tri_work_size(const struct ggml_tensor * dst) { return 2 * (size_t) dst->ne[1] * sizeof(float); }

/* Column c of matrix (i2, i3). */
static void solve_column(const struct ggml_tensor * a, const struct ggml_tensor * b, struct ggml_tensor * dst,
                         const struct ggmlr_solve_tri_params * p, int64_t c, int64_t i2, int64_t i3, float * x, float * arow) {
    const int64_t n = dst->ne[1];
    for (int64_t step = 0; step < n; step++) {
        const int64_t i = p->lower ? step : n - 1 - step;
        const float * ai = ggmlr_row_f32(a, i, i2, i3, arow);
        const int64_t t0 = p->lower ? 0 : i + 1, t1 = p->lower ? i : n;
        float sum = 0.0f;
        for (int64_t t = t0; t < t1; t++) sum += ai[t] * x[t];
        const float r = *(const float *) ggmlr_elem_ptr(b, c, i, i2, i3) - sum;
        x[i] = p->uni ? r : r / ai[i];
        *(float *) ggmlr_elem_ptr(dst, c, i, i2, i3) = x[i];
    }
}

static void solve_tri_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_solve_tri_params sp = ggmlr_solve_tri_params_decode(dst);
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const int64_t k = dst->ne[0], n = dst->ne[1];
    float * x = p->wdata, * arow = x + n;
    int64_t u0, u1;
    ggmlr_split(k * dst->ne[2] * dst->ne[3], p->ith, p->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t c = u % k, i2 = (u / k) % dst->ne[2], i3 = u / (k * dst->ne[2]);
        solve_column(a, b, dst, &sp, c, i2, i3, x, arow);
    }
}

GGMLR_KERNEL(solve_tri, solve_tri_forward, solve_tri_work_size, NULL);

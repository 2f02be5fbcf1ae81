/* matmul.c -- dst[i, j] = sum_k a[k, i] * b[k, j], per (i2, i3) plane; a's
 * planes are shared by contiguous groups of b's (i02 = i12 / (ne12/ne02)).
 *
 * Blocked on the attention micro-kernel tile_pv: a panel of TC columns of a is
 * packed transposed, aT[k][i], and each group of TILE_R columns j of b runs
 * the whole reduction over k in registers. A task is (plane, panel, group of
 * columns); every element of dst is computed by one task in a fixed order, so
 * the result does not depend on the thread count. */
#include "kernels.h"

#define TR GGMLR_TILE_R
#define J_PER_TASK (16 * TR)

size_t ggmlr_mul_mat_work_size(const struct ggml_tensor * dst) {
    const int64_t K = dst->src[0]->ne[0], TC = ggmlr_vec()->tile_c;
    /* panel aT[K][TC], TR gathered rows of b, a TR x TC result tile, one converted row */
    return (size_t) (K * TC + TR * K + TR * TC + K + 16) * sizeof(float);
}

void ggmlr_compute_mul_mat(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const struct ggmlr_vec_ops * vec = ggmlr_vec();
    const int64_t K = a->ne[0], M = a->ne[1], N = b->ne[1], TC = vec->tile_c;
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    const bool b_packed = b->type == GGML_TYPE_F32 && b->nb[0] == sizeof(float);
    float * panel = p->wdata, * brows = panel + K * TC, * ctile = brows + TR * K, * tmp = ctile + TR * TC;
    const int64_t n_panels = (M + TC - 1) / TC, n_groups = (N + J_PER_TASK - 1) / J_PER_TASK;
    const int64_t n_tasks = n_panels * n_groups * b->ne[2] * b->ne[3];
    for (int64_t task = p->ith; task < n_tasks; task += p->nth) {
        const int64_t pi = task % n_panels, gi = (task / n_panels) % n_groups, plane = task / (n_panels * n_groups);
        const int64_t i2 = plane % b->ne[2], i3 = plane / b->ne[2];
        const int64_t i0 = pi * TC, ni = M - i0 < TC ? M - i0 : TC;
        /* aT[k][c] = a[k, i0 + c], zero past M */
        for (int64_t c = 0; c < TC; c++) {
            if (c < ni) {
                const float * row = ggmlr_row_f32(a, i0 + c, i2 / r2, i3 / r3, tmp);
                for (int64_t k = 0; k < K; k++) panel[k * TC + c] = row[k];
            } else {
                for (int64_t k = 0; k < K; k++) panel[k * TC + c] = 0.0f;
            }
        }
        const int64_t j_end = (gi + 1) * J_PER_TASK < N ? (gi + 1) * J_PER_TASK : N;
        for (int64_t j0 = gi * J_PER_TASK; j0 < j_end; j0 += TR) {
            const int64_t nj = j_end - j0 < TR ? j_end - j0 : TR;
            /* TR rows of b, either in place (packed F32 rows) or gathered */
            const float * bp;
            int64_t ldb;
            if (b_packed && nj == TR) {
                bp = ggmlr_elem_ptr(b, 0, j0, i2, i3);
                ldb = (int64_t) (b->nb[1] / sizeof(float));
            } else {
                for (int64_t r = 0; r < TR; r++) {
                    if (r < nj) memcpy(brows + r * K, ggmlr_row_f32(b, j0 + r, i2, i3, brows + r * K), (size_t) K * sizeof(float));
                    else memset(brows + r * K, 0, (size_t) K * sizeof(float));
                }
                bp = brows;
                ldb = K;
            }
            float * out[TR];
            for (int r = 0; r < TR; r++) out[r] = ctile + r * TC;
            memset(ctile, 0, (size_t) (TR * TC) * sizeof(float));
            vec->tile_pv(K, bp, ldb, 1, panel, TC, out);
            for (int64_t r = 0; r < nj; r++) {
                float * d = ggmlr_elem_ptr(dst, i0, j0 + r, i2, i3);
                for (int64_t c = 0; c < ni; c++) *(float *) ((char *) d + c * dst->nb[0]) = ctile[r * TC + c];
            }
        }
    }
}

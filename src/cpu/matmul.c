/* matmul.c -- dst[i, j] = sum_k a[k, i] * b[k, j], per (i2, i3) plane; a's
 * planes are shared by contiguous groups of b's (i02 = i12 / (ne12/ne02)).
 *
 * Blocked on the GEMM micro-kernel gemm_6xc_acc. Phase 0 packs a, once, into
 * panels of TC columns stored transposed, aT[k][i] (shared scratch). Phase 1:
 * each group of TILE_R columns j of b runs the whole reduction over k against
 * one panel in registers. A task is (plane, panel, group of columns); every
 * element of dst is computed by one task in a fixed order, so the result does
 * not depend on the thread count. */
#include "kernels.h"

#define TR GGMLR_TILE_R
#define J_MAX (16 * TR)   /* columns of b per task, at most */
#define KC 256            /* reduction block: a panel block of KC x TC floats stays in L2 */
#define MIN_TASKS 8       /* split columns of b finer until there are this many tasks */

static int64_t n_panels(const struct ggml_tensor * a, int64_t TC) { return (a->ne[1] + TC - 1) / TC; }

/* Columns of b per task: a multiple of TR, small enough for MIN_TASKS tasks
 * when the shape allows. A function of the shape only. */
static int64_t cols_per_task(const struct ggml_tensor * a, const struct ggml_tensor * b, int64_t TC) {
    const int64_t others = n_panels(a, TC) * b->ne[2] * b->ne[3];
    if (others == 0) return TR;  /* an empty result: no tasks at all */
    const int64_t groups = (MIN_TASKS + others - 1) / others;
    int64_t j = (b->ne[1] + groups - 1) / groups;
    j = (j + TR - 1) / TR * TR;
    return j < TR ? TR : j > J_MAX ? J_MAX : j;
}

size_t ggmlr_mul_mat_work_size(const struct ggml_tensor * dst) {
    const int64_t K = dst->src[0]->ne[0], TC = ggmlr_vec()->tile_c;
    /* TR gathered row slices of b, the task's J_MAX x TC results, one converted row */
    const int64_t row = K > dst->src[1]->ne[0] ? K : dst->src[1]->ne[0];
    return (size_t) (TR * KC + J_MAX * TC + row + 16) * sizeof(float);
}

size_t ggmlr_mul_mat_shared_size(const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const int64_t TC = ggmlr_vec()->tile_c;
    return (size_t) (a->ne[2] * a->ne[3] * n_panels(a, TC) * a->ne[0] * TC) * sizeof(float);
}

void ggmlr_compute_mul_mat(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const struct ggmlr_vec_ops * vec = ggmlr_vec();
    const int64_t K = a->ne[0], M = a->ne[1], N = b->ne[1], TC = vec->tile_c, np = n_panels(a, TC);
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    float * panels = p->shared, * brows = p->wdata, * ctile = brows + TR * KC, * tmp = ctile + J_MAX * TC;

    /* phase 0: panel (plane of a, pi) holds aT[k][c] = a[k, pi*TC + c], zero past M */
    for (int64_t t = p->ith; t < a->ne[2] * a->ne[3] * np; t += p->nth) {
        const int64_t pi = t % np, plane = t / np, i0 = pi * TC;
        float * panel = panels + t * K * TC;
        for (int64_t c = 0; c < TC; c++) {
            if (i0 + c < M) {
                const float * row = ggmlr_row_f32(a, i0 + c, plane % a->ne[2], plane / a->ne[2], tmp);
                for (int64_t k = 0; k < K; k++) panel[k * TC + c] = row[k];
            } else {
                for (int64_t k = 0; k < K; k++) panel[k * TC + c] = 0.0f;
            }
        }
    }
    ggmlr_barrier(p);

    /* phase 1: task = (plane of b, panel, columns [j_begin, j_end) of b) */
    const bool b_packed = b->type == GGML_TYPE_F32 && b->nb[0] == sizeof(float);
    const int64_t J = cols_per_task(a, b, TC), n_groups = (N + J - 1) / J;
    const int64_t n_tasks = np * n_groups * b->ne[2] * b->ne[3];
    for (int64_t task = p->ith; task < n_tasks; task += p->nth) {
        const int64_t pi = task % np, gi = (task / np) % n_groups, plane = task / (np * n_groups);
        const int64_t i2 = plane % b->ne[2], i3 = plane / b->ne[2];
        const int64_t i0 = pi * TC, ni = M - i0 < TC ? M - i0 : TC;
        const float * panel = panels + ((i3 / r3) * a->ne[2] * np + (i2 / r2) * np + pi) * K * TC;
        const int64_t j_begin = gi * J, j_end = j_begin + J < N ? j_begin + J : N;
        memset(ctile, 0, (size_t) (J * TC) * sizeof(float));
        for (int64_t k0 = 0; k0 < K; k0 += KC) {
            const int64_t kc = K - k0 < KC ? K - k0 : KC;
            for (int64_t j0 = j_begin; j0 < j_end; j0 += TR) {
                const int64_t nj = j_end - j0 < TR ? j_end - j0 : TR;
                /* TR rows of b from k0, either in place (packed F32 rows) or gathered */
                const float * bp;
                int64_t ldb;
                if (b_packed && nj == TR) {
                    bp = (const float *) ggmlr_elem_ptr(b, k0, j0, i2, i3);
                    ldb = (int64_t) (b->nb[1] / sizeof(float));
                } else {  /* slice [k0, k0+kc) of each row, zero rows past nj */
                    for (int64_t r = 0; r < TR; r++) {
                        float * row = brows + r * KC;
                        if (r < nj) memcpy(row, ggmlr_row_f32(b, j0 + r, i2, i3, tmp) + k0, (size_t) kc * sizeof(float));
                        else memset(row, 0, (size_t) kc * sizeof(float));
                    }
                    bp = brows;
                    ldb = KC;
                }
                float * out[TR];
                for (int r = 0; r < TR; r++) out[r] = ctile + (j0 - j_begin + r) * TC;
                vec->gemm_6xc_acc(kc, bp, ldb, 1, panel + k0 * TC, TC, out);
            }
        }
        for (int64_t j = j_begin; j < j_end; j++) {
            float * d = ggmlr_elem_ptr(dst, i0, j, i2, i3);
            const float * c = ctile + (j - j_begin) * TC;
            if (dst->nb[0] == sizeof(float)) memcpy(d, c, (size_t) ni * sizeof(float));
            else for (int64_t i = 0; i < ni; i++) *(float *) ((char *) d + i * dst->nb[0]) = c[i];
        }
    }
}

/* mask.c -- the structure of matrices: diag, diag_mask_inf / diag_mask_zero
 * (element (i0, i1) := -Inf / 0 where i0 > n_past + i1) and tri (zeros
 * outside a triangle). F32, any layout; threads split dst rows, and each row
 * reads only the same row of a, so the in-place masks are safe. */
#include "cpu/kernels/kernels.h"

#include <math.h>

/* dst row (i1, i2, i3) = a[i1] at column i1, zeros elsewhere */
static void ggmlr_compute_diag(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        float * y = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        memset(y, 0, (size_t) dst->ne[0] * sizeof(float));
        y[i1] = *(const float *) ggmlr_elem_ptr(a, i1, 0, i2, i3);
    }
}

/* Row i1 of a matrix: a's row copied where keep(i0) says, `value` elsewhere.
 * keep is i0 <= lim (diag_mask: lim = n_past + i1) or one of tri's four
 * comparisons with i1; dst may be a itself. */
enum keep_rule { KEEP_LE, KEEP_LT, KEEP_GE, KEEP_GT };

static bool keeps(enum keep_rule k, int64_t i0, int64_t lim) {
    switch (k) {
        case KEEP_LE: return i0 <= lim;
        case KEEP_LT: return i0 < lim;
        case KEEP_GE: return i0 >= lim;
        default:      return i0 > lim;
    }
}

static void masked_rows(const struct ggmlr_compute_params * p, struct ggml_tensor * dst, enum keep_rule k, int64_t shift, float value) {
    const struct ggml_tensor * a = dst->src[0];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        float * y = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        const char * x = ggmlr_elem_ptr(a, 0, i1, i2, i3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            float * yi = (float *) ((char *) y + i0 * dst->nb[0]);
            *yi = keeps(k, i0, i1 + shift) ? *(const float *) (x + i0 * a->nb[0]) : value;
        }
    }
}

static void ggmlr_compute_diag_mask(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    masked_rows(p, dst, KEEP_LE, ggmlr_i32_param_decode(dst), dst->op == GGML_OP_DIAG_MASK_INF ? -INFINITY : 0.0f);
}

static void ggmlr_compute_tri(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    static const enum keep_rule rule[] = {
        [GGML_TRI_TYPE_UPPER_DIAG] = KEEP_GE, [GGML_TRI_TYPE_UPPER] = KEEP_GT,
        [GGML_TRI_TYPE_LOWER_DIAG] = KEEP_LE, [GGML_TRI_TYPE_LOWER] = KEEP_LT,
    };
    masked_rows(p, dst, rule[ggmlr_i32_param_decode(dst)], 0, 0.0f);
}

GGMLR_KERNEL(diag, ggmlr_compute_diag, NULL, NULL);
GGMLR_KERNEL(diag_mask, ggmlr_compute_diag_mask, NULL, NULL);
GGMLR_KERNEL(tri, ggmlr_compute_tri, NULL, NULL);

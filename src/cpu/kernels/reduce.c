/* reduce.c -- sum (to a scalar), sum_rows and mean (per row). Sums accumulate
 * in double, in a fixed order, so they are accurate and thread-count independent. */
#include "cpu/kernels/kernels.h"

static double row_sum(const struct ggml_tensor * a, int64_t i1, int64_t i2, int64_t i3) {
    const char * row = ggmlr_elem_ptr(a, 0, i1, i2, i3);
    double s = 0.0;
    for (int64_t i = 0; i < a->ne[0]; i++) s += *(const float *) (row + i * a->nb[0]);
    return s;
}

void ggmlr_compute_sum(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
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

void ggmlr_compute_sum_rows(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const double div = dst->op == GGML_OP_MEAN ? (double) a->ne[0] : 1.0;
    struct ggmlr_rows rows = ggmlr_my_rows(p, a);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        *(float *) ggmlr_elem_ptr(dst, 0, i1, i2, i3) = (float) (row_sum(a, i1, i2, i3) / div);
    }
}

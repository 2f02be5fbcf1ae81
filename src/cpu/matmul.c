/* matmul.c -- dst[i, j] = sum_k a[k, i] * b[k, j], per (i2, i3) plane; a's
 * planes are shared by contiguous groups of b's (i02 = i12 / (ne12/ne02)).
 * Each thread owns whole columns j of dst; a column is 4 dot products at a time. */
#include "kernels.h"

size_t ggmlr_mul_mat_work_size(const struct ggml_tensor * dst) {
    /* room to pack one row of a and one column of b that are not plain F32 */
    return 2 * (size_t) dst->src[0]->ne[0] * sizeof(float);
}

void ggmlr_compute_mul_mat(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const struct ggmlr_vec_ops * vec = ggmlr_vec();
    const int64_t K = a->ne[0], M = a->ne[1];
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    float * abuf = p->wdata, * bbuf = abuf + K;
    int64_t c0, c1;
    ggmlr_split(ggml_nrows(b), p->ith, p->nth, &c0, &c1);
    for (int64_t c = c0; c < c1; c++) {
        int64_t j, i2, i3;
        ggmlr_row_index(b, c, &j, &i2, &i3);
        const float * y = ggmlr_row_f32(b, j, i2, i3, bbuf);
        float * out = ggmlr_elem_ptr(dst, 0, j, i2, i3);
        for (int64_t i = 0; i < M; i++) {
            const float * x = ggmlr_row_f32(a, i, i2 / r2, i3 / r3, abuf);
            *(float *) ((char *) out + i * dst->nb[0]) = vec->dot(K, x, y);
        }
    }
}

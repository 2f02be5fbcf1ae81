/* loss.c -- cross-entropy loss over rows of logits z and its gradient.
 *
 * With lse = log sum_i exp(z_i) (computed as max + log sum exp(z_i - max), in
 * double, so logits of any size neither overflow nor lose the small terms):
 *   row loss  l = -sum_i p_i log softmax(z)_i = sum_i p_i (lse - z_i)
 *   loss      L = (1/R) sum over the R rows of l
 *   gradient  dL/dz_i = (softmax(z)_i sum_j p_j - p_i) / R
 * For I32 labels p is one-hot at the row's class c: l = lse - z_c. A class
 * outside [0, nc) fails the compute. */
#include "cpu/kernels/kernels.h"

#include <math.h>

/* Scratch per thread: one row of logits and one of labels, as floats. */
static size_t ggmlr_cross_entropy_work_size(const struct ggml_tensor * dst) { return 2 * (size_t) dst->src[0]->ne[0] * sizeof(float); }
/* Shared: each row's loss, summed in row order by one thread at the end. */
static size_t ggmlr_cross_entropy_shared_size(const struct ggml_tensor * dst) { return (size_t) ggml_nrows(dst->src[0]) * sizeof(double); }

static double log_sum_exp(const float * z, int64_t n) {
    float mx = z[0];
    for (int64_t i = 1; i < n; i++) if (z[i] > mx) mx = z[i];
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) s += exp((double) z[i] - mx);
    return mx + log(s);
}

/* The labels of row (i1, i2, i3): *dense points to nc floats (F32 labels), or
 * *cls is the class (I32 labels). False (compute failed) for a class out of range. */
static bool row_labels(const struct ggmlr_compute_params * p, const struct ggml_tensor * dst, const struct ggml_tensor * b, int64_t nc,
                       int64_t i1, int64_t i2, int64_t i3, float * scratch, const float ** dense, int32_t * cls) {
    *dense = NULL;
    if (b->type == GGML_TYPE_F32) { *dense = ggmlr_row_f32(b, i1, i2, i3, scratch); return true; }
    *cls = *(const int32_t *) ggmlr_elem_ptr(b, i1, i2, i3, 0);
    if (*cls >= 0 && *cls < nc) return true;
    ggmlr_compute_fail(p, "%s: class %d of row (%lld, %lld, %lld) is outside [0, %lld)", ggml_op_name(dst->op), (int) *cls,
                       (long long) i1, (long long) i2, (long long) i3, (long long) nc);
    return false;
}

static void ggmlr_compute_cross_entropy_loss(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const int64_t nc = a->ne[0];
    float * zbuf = p->wdata, * pbuf = zbuf + nc;
    double * row_loss = p->shared;
    struct ggmlr_rows rows = ggmlr_my_rows(p, a);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const float * dense;
        int32_t cls = 0;
        if (!row_labels(p, dst, b, nc, i1, i2, i3, pbuf, &dense, &cls)) { row_loss[r] = NAN; continue; }
        const float * z = ggmlr_row_f32(a, i1, i2, i3, zbuf);
        const double lse = log_sum_exp(z, nc);
        double l = 0.0;
        if (dense) {
            for (int64_t i = 0; i < nc; i++) l += dense[i] * (lse - z[i]);
        } else {
            l = lse - z[cls];
        }
        row_loss[r] = l;
    }
    ggmlr_barrier(p);
    if (p->ith != 0) return;
    const int64_t n_rows = ggml_nrows(a);
    double total = 0.0;
    for (int64_t k = 0; k < n_rows; k++) total += row_loss[k];
    *(float *) dst->data = (float) (total / (double) n_rows);
}

static void ggmlr_compute_cross_entropy_loss_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1], * dl = ggmlr_loss_grad_decode(dst);
    const int64_t nc = a->ne[0];
    const double scale = (double) *(const float *) dl->data / (double) ggml_nrows(a);
    float * zbuf = p->wdata, * pbuf = zbuf + nc;
    struct ggmlr_rows rows = ggmlr_my_rows(p, a);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const float * dense;
        int32_t cls = 0;
        if (!row_labels(p, dst, b, nc, i1, i2, i3, pbuf, &dense, &cls)) continue;
        const float * z = ggmlr_row_f32(a, i1, i2, i3, zbuf);
        const double lse = log_sum_exp(z, nc);
        double label_sum = 1.0;
        if (dense) {
            label_sum = 0.0;
            for (int64_t i = 0; i < nc; i++) label_sum += dense[i];
        }
        float * dz = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        for (int64_t i = 0; i < nc; i++) {
            const double label = dense ? dense[i] : (double) (i == cls);
            dz[i] = (float) ((exp((double) z[i] - lse) * label_sum - label) * scale);
        }
    }
}

GGMLR_KERNEL(cross_entropy_loss, ggmlr_compute_cross_entropy_loss, ggmlr_cross_entropy_work_size, ggmlr_cross_entropy_shared_size);
GGMLR_KERNEL(cross_entropy_loss_back, ggmlr_compute_cross_entropy_loss_back, ggmlr_cross_entropy_work_size, NULL);

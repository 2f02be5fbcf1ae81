/* norm.c -- row-wise normalisation along ne0 and its backward.
 *
 *   NORM:     y = x̂ = (x - mu) / sigma,  mu = mean(x), sigma = sqrt(var + eps), var = mean((x - mu)^2)
 *   RMS_NORM: y = x / r,                 r = sqrt(mean(x^2) + eps)
 *   NORM_BACK:     dx = (g - mean(g) - x̂ mean(g x̂)) / sigma
 *   RMS_NORM_BACK: dx = (g - x mean(g x) / r^2) / r
 *
 * Row statistics accumulate in double, the variance in a second pass over
 * x - mu, so rows with a large common offset (1000 + noise) keep their digits;
 * each row is done by one thread in a fixed order (thread-count independent).
 * A row with var + eps = 0 (eps = 0 and a constant row; for RMS_NORM a row of
 * zeros) has no defined normalisation: its outputs, and its gradients, are 0. */
#include "cpu/kernels/kernels.h"

#include <math.h>

static size_t ggmlr_norm_work_size(const struct ggml_tensor * dst) { return 2 * (size_t) dst->ne[0] * sizeof(float); }

struct row_stats { double mu, inv; };  /* inv = 1 / sigma (or 1 / r), 0 where undefined */

static struct row_stats stats(enum ggml_op op, const float * x, int64_t n, double eps) {
    double mu = 0.0, ss = 0.0;
    if (op == GGML_OP_NORM || op == GGML_OP_NORM_BACK) {
        for (int64_t i = 0; i < n; i++) mu += x[i];
        mu /= (double) n;
    }
    for (int64_t i = 0; i < n; i++) { const double d = x[i] - mu; ss += d * d; }
    const double v = ss / (double) n + eps;
    return (struct row_stats) {mu, v > 0.0 ? 1.0 / sqrt(v) : 0.0};
}

/* NORM and RMS_NORM (src[0] = x) */
static void ggmlr_compute_norm(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const double eps = ggmlr_f32_param_decode(dst);
    const int64_t n = a->ne[0];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const float * x = ggmlr_row_f32(a, i1, i2, i3, p->wdata);
        float * y = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        const struct row_stats s = stats(dst->op, x, n, eps);
        for (int64_t i = 0; i < n; i++) y[i] = (float) ((x[i] - s.mu) * s.inv);
    }
}

/* NORM_BACK and RMS_NORM_BACK (src[0] = g = dL/dy, src[1] = x) */
static void ggmlr_compute_norm_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * ga = dst->src[0], * xa = dst->src[1];
    const double eps = ggmlr_f32_param_decode(dst);
    const bool layer = dst->op == GGML_OP_NORM_BACK;
    const int64_t n = xa->ne[0];
    if (n == 0) return;  /* empty rows: no scratch either, and nothing to write */
    float * gbuf = p->wdata, * xbuf = gbuf + n;
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const float * g = ggmlr_row_f32(ga, i1, i2, i3, gbuf);
        const float * x = ggmlr_row_f32(xa, i1, i2, i3, xbuf);
        float * dx = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        const struct row_stats s = stats(dst->op, x, n, eps);
        /* z = x̂ (NORM) or x / r (RMS_NORM): dx = (g - [mean(g)] - z mean(g z)) / sigma */
        double sum_g = 0.0, sum_gz = 0.0;
        for (int64_t i = 0; i < n; i++) { sum_g += g[i]; sum_gz += g[i] * ((x[i] - s.mu) * s.inv); }
        const double mean_g = layer ? sum_g / (double) n : 0.0, mean_gz = sum_gz / (double) n;
        for (int64_t i = 0; i < n; i++) dx[i] = (float) ((g[i] - mean_g - (x[i] - s.mu) * s.inv * mean_gz) * s.inv);
    }
}

GGMLR_KERNEL(norm, ggmlr_compute_norm, ggmlr_norm_work_size, NULL);            /* NORM, RMS_NORM */
GGMLR_KERNEL(norm_back, ggmlr_compute_norm_back, ggmlr_norm_work_size, NULL);  /* NORM_BACK, RMS_NORM_BACK */

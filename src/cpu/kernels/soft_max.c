/* softmax.c -- y = softmax(scale * x + slope * mask) along rows (ne0), with
 * an attention sink (one more logit per head i2, in the denominator only)
 * when SOFT_MAX has one. A row whose inputs are all -Inf gives zeros (not
 * NaN), as attention does. */
#include "cpu/kernels/kernels.h"

#include <math.h>

/* ALiBi slope of head h (upstream ggml's formula); 1 when max_bias is 0. */
float ggmlr_alibi_slope(float max_bias, int64_t h, int64_t n_head) {
    if (max_bias <= 0.0f) return 1.0f;
    int64_t n_head_log2 = 1;
    while (n_head_log2 * 2 <= n_head) n_head_log2 *= 2;
    const float m0 = powf(2.0f, -max_bias / (float) n_head_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / (float) n_head_log2);
    return h < n_head_log2 ? powf(m0, (float) (h + 1)) : powf(m1, (float) (2 * (h - n_head_log2) + 1));
}

static size_t ggmlr_soft_max_work_size(const struct ggml_tensor * dst) { return 2 * (size_t) dst->ne[0] * sizeof(float); }

static void ggmlr_compute_soft_max(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * mask = dst->src[1], * sinks = ggmlr_soft_max_sinks_decode(dst);
    const struct ggmlr_soft_max_params prm = ggmlr_soft_max_params_decode(dst);
    const float scale = prm.scale, max_bias = prm.max_bias;
    const int64_t n = a->ne[0];
    if (n == 0) return;  /* empty rows: nothing to write, and no scratch to split */
    float * s = p->wdata, * mbuf = s + n;
    struct ggmlr_rows rows = ggmlr_my_rows(p, a);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const float * x = ggmlr_row_f32(a, i1, i2, i3, s);
        for (int64_t i = 0; i < n; i++) s[i] = x[i] * scale;
        if (mask) {
            const float slope = ggmlr_alibi_slope(max_bias, i2, a->ne[2]);
            const float * m = ggmlr_row_f32(mask, i1, i2 % mask->ne[2], i3 % mask->ne[3], mbuf);
            /* -Inf masks whatever the slope (a large max_bias underflows it to 0, and 0 * -Inf is NaN) */
            for (int64_t i = 0; i < n; i++) s[i] = m[i] == -INFINITY ? -INFINITY : s[i] + slope * m[i];
        }
        const float sink = sinks ? ggmlr_load_f32(GGML_TYPE_F32, ggmlr_elem_ptr(sinks, i2, 0, 0, 0)) : -INFINITY;
        float mx = sink;
        for (int64_t i = 0; i < n; i++) if (s[i] > mx) mx = s[i];
        float * y = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        if (mx == -INFINITY) { for (int64_t i = 0; i < n; i++) y[i] = 0.0f; continue; }
        double sum = sinks ? expf(sink - mx) : 0.0;
        for (int64_t i = 0; i < n; i++) { y[i] = expf(s[i] - mx); sum += y[i]; }
        const float inv = (float) (1.0 / sum);
        for (int64_t i = 0; i < n; i++) y[i] *= inv;
    }
}

/* SOFT_MAX_BACK (src[0] = dy, src[1] = y): dx = scale * y * (dy - sum(dy * y)),
 * the dot in double; the same steps as the composed sum_rows/sub/mul/scale. */
static void ggmlr_compute_soft_max_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * dya = dst->src[0], * ya = dst->src[1];
    const float scale = ggmlr_soft_max_params_decode(dst).scale;
    const int64_t n = dst->ne[0];
    if (n == 0) return;  /* empty rows: no scratch either, and nothing to write */
    float * dybuf = p->wdata, * ybuf = dybuf + n;
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const float * dy = ggmlr_row_f32(dya, i1, i2, i3, dybuf);
        const float * y = ggmlr_row_f32(ya, i1, i2, i3, ybuf);
        float * dx = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        double dot = 0.0;
        for (int64_t i = 0; i < n; i++) dot += dy[i] * y[i];
        const float dotf = (float) dot;
        for (int64_t i = 0; i < n; i++) dx[i] = (y[i] * (dy[i] - dotf)) * scale;
    }
}

GGMLR_KERNEL(soft_max, ggmlr_compute_soft_max, ggmlr_soft_max_work_size, NULL);
GGMLR_KERNEL(soft_max_back, ggmlr_compute_soft_max_back, ggmlr_soft_max_work_size, NULL);

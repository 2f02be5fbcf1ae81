/* dsv4_hc.c -- DeepSeek V4's hyper-connection kernels (DSV4_HC_COMB,
 * DSV4_HC_PRE, DSV4_HC_POST), any input layout.
 *
 * comb, per token t, C[d + hc s] for d, s < hc:
 *   C = softmax_d(mixes[2 hc + d + hc s, t] scale[2] + base[2 hc + d + hc s]) + eps
 *   then C[d, s] /= eps + sum_s' C[d, s']   (over s)
 *   and n_iter - 1 times: over d (C[d, s] /= eps + sum_d' C[d', s]), then over s.
 * pre:  y[i, t] = sum_h x[i, h, t] w[h, t]
 * post: y[i, d, t] = x[i, t] p[d, t] + sum_s r[i, s, t] c[d, s, t]
 * Sums run in a fixed order (h, s ascending); work is split by tokens (comb)
 * or result rows (pre, post). */
#include "cpu/kernels/kernels.h"

#include <math.h>

static inline float at1(const struct ggml_tensor * t, int64_t i0, int64_t i1) { return *(const float *) ggmlr_elem_ptr(t, i0, i1, 0, 0); }
static inline float at2(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2) {
    return *(const float *) ggmlr_elem_ptr(t, i0, i1, i2, 0);
}

/* ---- comb ---- */

/* divide each C[d, s] by eps + its sum over s (over_src) or over d */
static void normalise(float * c, int64_t hc, float eps, bool over_src) {
    for (int64_t j = 0; j < hc; j++) {
        float sum = eps;
        for (int64_t m = 0; m < hc; m++) sum += c[over_src ? j + hc * m : m + hc * j];
        const float inv = 1.0f / sum;
        for (int64_t m = 0; m < hc; m++) c[over_src ? j + hc * m : m + hc * j] *= inv;
    }
}

static size_t comb_work_size(const struct ggml_tensor * dst) { return (size_t) (dst->ne[0] * dst->ne[0]) * sizeof(float); }

static void comb_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_dsv4_hc_comb_srcs s = ggmlr_dsv4_hc_comb_srcs_decode(dst);
    const struct ggmlr_dsv4_hc_comb_params cp = ggmlr_dsv4_hc_comb_params_decode(dst);
    const int64_t hc = dst->ne[0], off = 2 * hc;
    const float sc = at1(s.scale, 2, 0);
    float * c = p->wdata;
    int64_t t0, t1;
    ggmlr_split(dst->ne[2], p->ith, p->nth, &t0, &t1);
    for (int64_t t = t0; t < t1; t++) {
        for (int64_t src = 0; src < hc; src++) {  /* softmax over d of column src */
            float * col = c + hc * src, mx = -INFINITY, sum = 0.0f;
            for (int64_t d = 0; d < hc; d++) {
                col[d] = at1(s.mixes, off + d + hc * src, t) * sc + at1(s.base, off + d + hc * src, 0);
                mx = fmaxf(mx, col[d]);
            }
            for (int64_t d = 0; d < hc; d++) { col[d] = expf(col[d] - mx); sum += col[d]; }
            for (int64_t d = 0; d < hc; d++) col[d] = col[d] / sum + cp.eps;
        }
        normalise(c, hc, cp.eps, true);
        for (int32_t it = 1; it < cp.n_iter; it++) {
            normalise(c, hc, cp.eps, false);
            normalise(c, hc, cp.eps, true);
        }
        for (int64_t src = 0; src < hc; src++)
            for (int64_t d = 0; d < hc; d++) *(float *) ggmlr_elem_ptr(dst, d, src, t, 0) = c[d + hc * src];
    }
}

/* ---- pre, post ---- */

static void pre_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * x = dst->src[0], * w = dst->src[1];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, t, i2, i3;
    while (ggmlr_next_row(&rows, &r, &t, &i2, &i3)) {
        float * y = ggmlr_elem_ptr(dst, 0, t, 0, 0);
        for (int64_t i = 0; i < dst->ne[0]; i++) {
            float sum = 0.0f;
            for (int64_t h = 0; h < x->ne[1]; h++) sum += at2(x, i, h, t) * at1(w, h, t);
            y[i] = sum;
        }
    }
}

static void post_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_dsv4_hc_post_srcs s = ggmlr_dsv4_hc_post_srcs_decode(dst);
    const int64_t hc = dst->ne[1];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, d, t, i3;
    while (ggmlr_next_row(&rows, &r, &d, &t, &i3)) {
        float * y = ggmlr_elem_ptr(dst, 0, d, t, 0);
        const float pd = at1(s.post, d, t);
        for (int64_t i = 0; i < dst->ne[0]; i++) {
            float sum = at1(s.x, i, t) * pd;
            for (int64_t src = 0; src < hc; src++) sum += at2(s.residual, i, src, t) * at2(s.comb, d, src, t);
            y[i] = sum;
        }
    }
}

GGMLR_KERNEL(dsv4_hc_comb, comb_forward, comb_work_size, NULL);
GGMLR_KERNEL(dsv4_hc_pre, pre_forward, NULL, NULL);
GGMLR_KERNEL(dsv4_hc_post, post_forward, NULL, NULL);

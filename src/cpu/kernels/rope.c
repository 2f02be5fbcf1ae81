/* rope.c -- rotary position embedding (ROPE) and its backward (ROPE_BACK).
 *
 * Row (i1, i2, i3) of a has its pair k < P rotated (P = n_dims/2, or n_dims
 * in VISION mode), over the entries from o = n_offs on: (o + 2k, o + 2k + 1)
 * in NORMAL mode, (o + k, o + k + n_dims/2) in NEOX, MROPE and IMROPE modes,
 * (k, k + n_dims) in VISION mode (o = 0, n_dims = ne0/2: the whole row):
 *   y0 = m (x0 cos t - x1 sin t),  y1 = m (x0 sin t + x1 cos t)
 * with, as upstream ggml (YaRN, ext_factor e = 0 for plain RoPE),
 *   t_ext = p base^(-2j/n_dims) / c[k]       (c: frequency factors, 1 without)
 *   t_int = freq_scale t_ext
 *   ramp  = 1 - clamp((k - lo) / max(0.001, hi - lo), 0, 1)   (NaN stays NaN, as upstream)
 *   t     = t_int (1 - e ramp) + t_ext e ramp
 *   m     = attn_factor (1 + 0.1 ln(1 / freq_scale))  when e != 0, else attn_factor
 *   lo, hi = the correction dims floor(d(beta_fast)), ceil(d(beta_slow)) clamped to
 *            [0, n_dims - 1], d(beta) = n_dims ln(n_ctx_orig / (2 pi beta)) / (2 ln base)
 * The position p is b[i2] in NORMAL and NEOX modes, and j = k. The
 * multi-section modes read the stream s of b (p = b[i2 + s ne2]) that pair k's
 * sector (k mod the sections' sum) falls in: by the running sums of the
 * sections (MROPE, VISION) or interleaved (IMROPE: sector q takes h when
 * q % 3 == 1 and q < 3 sections[1], w when q % 3 == 2 and q < 3 sections[2],
 * t when q % 3 == 0 and q < 3 sections[0], else e), j = k; in VISION mode j
 * counts the pairs since the sector entered the stream's section (upstream's
 * reset of each stream's angle at its section's first sector). The other
 * entries are copied. ROPE_BACK uses -t: the transpose, the gradient of ROPE
 * (and ROPE's matrix is the gradient of ROPE_BACK). a and the result are
 * F32 or F16 (one type): an F16 row is read as F32 and each output rounded
 * to F16 once.
 *
 * Angles, cos and sin are computed in double once per token (per row change
 * of i2) and the rotation in double, so each output is one float rounding
 * from the exact value even at large positions. Every row is computed by one
 * thread the same way: results do not depend on the thread count. */
#include "cpu/kernels/kernels.h"

#include <math.h>

/* scratch: 2 P doubles (cos, sin of each pair), then one row of a as F32 and one of the result */
static size_t ggmlr_rope_work_size(const struct ggml_tensor * dst) {
    const struct ggmlr_rope_params prm = ggmlr_rope_params_decode(dst);
    return 2 * (size_t) ggmlr_rope_n_pairs(&prm) * sizeof(double) + 2 * (size_t) dst->ne[0] * sizeof(float);
}

/* YaRN's ramp 1 - clamp((k - lo) / max(0.001, hi - lo), 0, 1), written with upstream's
 * max/min (a > b ? a : b) so that a NaN correction dim gives NaN as there */
static double yarn_ramp(int k, double lo, double hi) {
    const double y = (k - lo) / (0.001 > hi - lo ? 0.001 : hi - lo);
    const double low_clamped = 0.0 > y ? 0.0 : y;
    return 1.0 - (1.0 < low_clamped ? 1.0 : low_clamped);
}

/* the position stream (0..3: t, h, w, e) of a multi-section mode's sector q */
static int section_stream(const struct ggmlr_rope_params * prm, int q) {
    const int32_t * sec = prm->sections;
    if (prm->mode == GGML_ROPE_TYPE_IMROPE) {
        if (q % 3 == 1 && q < 3 * sec[1]) return 1;
        if (q % 3 == 2 && q < 3 * sec[2]) return 2;
        if (q % 3 == 0 && q < 3 * sec[0]) return 0;
        return 3;
    }
    return q < sec[0] ? 0 : q < sec[0] + sec[1] ? 1 : q < sec[0] + sec[1] + sec[2] ? 2 : 3;
}

/* cos_sin[2k], cos_sin[2k+1] = m cos t, sign m sin t of pair k for the token with positions pos[0..3]
 * (pos[0] only outside the multi-section modes) */
static void pair_rotations(const struct ggmlr_rope_params * prm, const struct ggml_tensor * freq_factors, const double * pos, double sign,
                           double * cos_sin) {
    const int n_pairs = ggmlr_rope_n_pairs(prm);
    const bool multi = ggmlr_rope_is_multi(prm->mode), vision = prm->mode == GGML_ROPE_TYPE_VISION;
    const int32_t * sec = prm->sections;
    const int sect_sum = sec[0] + sec[1] + sec[2] + sec[3];
    const double ext = prm->ext_factor, scale = prm->freq_scale;
    double lo = 0.0, hi = 0.0, m = prm->attn_factor;
    if (ext != 0.0) {
        float dims[2];
        ggmlr_rope_yarn_corr_dims(prm->n_dims, prm->n_ctx_orig, prm->freq_base, prm->beta_fast, prm->beta_slow, dims);
        lo = dims[0];
        hi = dims[1];
        m *= 1.0 + 0.1 * log(1.0 / scale);
    }
    int since_reset[GGML_MROPE_SECTIONS] = {0, 0, 0, 0};  /* VISION: j of each stream */
    for (int k = 0; k < n_pairs; k++) {
        int stream = 0, j = k;
        if (multi) {
            const int q = k % sect_sum;
            if (vision) {  /* the first matching boundary resets its stream, as upstream's else-if chain */
                const int starts[GGML_MROPE_SECTIONS] = {0, sec[0], sec[0] + sec[1], sec[0] + sec[1] + sec[2]};
                for (int s = 0; s < GGML_MROPE_SECTIONS; s++) {
                    if (q == starts[s]) { since_reset[s] = 0; break; }
                }
            }
            stream = section_stream(prm, q);
            if (vision) j = since_reset[stream];
            for (int s = 0; s < GGML_MROPE_SECTIONS; s++) since_reset[s]++;
        }
        double t_ext = pos[stream] * pow((double) prm->freq_base, -2.0 * j / prm->n_dims);
        if (freq_factors) t_ext /= ggmlr_load_f32(GGML_TYPE_F32, (const char *) freq_factors->data + k * freq_factors->nb[0]);
        double t = scale * t_ext;
        if (ext != 0.0) {
            const double ramp = yarn_ramp(k, lo, hi);
            t = t * (1.0 - ext * ramp) + t_ext * ext * ramp;
        }
        cos_sin[2 * k] = m * cos(t);
        cos_sin[2 * k + 1] = sign * m * sin(t);
    }
}

static void ggmlr_compute_rope(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * pos = dst->src[1], * freq_factors = ggmlr_rope_freq_factors_decode(dst);
    const struct ggmlr_rope_params prm = ggmlr_rope_params_decode(dst);
    const int64_t ne0 = dst->ne[0], ne2 = dst->ne[2], n_pairs = ggmlr_rope_n_pairs(&prm);
    const int n_streams = ggmlr_rope_is_multi(prm.mode) ? GGML_MROPE_SECTIONS : 1;
    /* the rotated span [first, first + 2 P); NORMAL: pair k is (2k, 2k+1), the others (k, k + P) */
    const int64_t first = prm.n_offs, span = 2 * n_pairs;
    const int64_t stride = prm.mode == GGML_ROPE_TYPE_NORMAL ? 2 : 1, offset = prm.mode == GGML_ROPE_TYPE_NORMAL ? 1 : n_pairs;
    const double sign = dst->op == GGML_OP_ROPE ? 1.0 : -1.0;
    double * cos_sin = p->wdata;
    float * row_scratch = (float *) (cos_sin + span), * out_scratch = row_scratch + ne0;
    const bool f32 = dst->type == GGML_TYPE_F32;  /* else F16: computed in F32, then rounded */
    int64_t cached_i2 = -1;
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        if (i2 != cached_i2) {
            double positions[GGML_MROPE_SECTIONS] = {0, 0, 0, 0};
            for (int s = 0; s < n_streams; s++)
                positions[s] = *(const int32_t *) ((const char *) pos->data + (i2 + s * ne2) * pos->nb[0]);
            pair_rotations(&prm, freq_factors, positions, sign, cos_sin);
            cached_i2 = i2;
        }
        const float * x = ggmlr_row_f32(a, i1, i2, i3, row_scratch);
        float * y = f32 ? (float *) ggmlr_elem_ptr(dst, 0, i1, i2, i3) : out_scratch;
        for (int64_t j = 0; j < first; j++) y[j] = x[j];
        for (int64_t k = 0; k < n_pairs; k++) {
            const int64_t j0 = first + k * stride, j1 = j0 + offset;
            const double c = cos_sin[2 * k], s = cos_sin[2 * k + 1], x0 = x[j0], x1 = x[j1];
            y[j0] = (float) (x0 * c - x1 * s);
            y[j1] = (float) (x0 * s + x1 * c);
        }
        for (int64_t j = first + span; j < ne0; j++) y[j] = x[j];
        if (!f32) ggml_fp32_to_fp16_row(y, ggmlr_elem_ptr(dst, 0, i1, i2, i3), ne0);
    }
}

GGMLR_KERNEL(rope, ggmlr_compute_rope, ggmlr_rope_work_size, NULL);  /* ROPE, ROPE_BACK */

/* TIMESTEP_EMBEDDING: row i of dst = cos(t_i f_j) for j < half, then sin(t_i f_j), then 0 when dim is
 * odd, f_j = exp(-ln(max_period) j / half) in float as upstream computes it; threads split the rows */
static void ggmlr_compute_timestep_embedding(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * ts = dst->src[0];
    const struct ggmlr_timestep_params prm = ggmlr_timestep_params_decode(dst);
    const int64_t half = prm.dim / 2;
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i, &i2, &i3)) {
        const float t = *(const float *) ggmlr_elem_ptr(ts, i, 0, 0, 0);
        float * y = ggmlr_elem_ptr(dst, 0, i, 0, 0);
        for (int64_t j = 0; j < half; j++) {
            const float arg = t * expf(-logf((float) prm.max_period) * (float) j / (float) half);
            y[j] = cosf(arg);
            y[j + half] = sinf(arg);
        }
        if (prm.dim % 2 != 0) y[2 * half] = 0.0f;
    }
}

GGMLR_KERNEL(timestep_embedding, ggmlr_compute_timestep_embedding, NULL, NULL);

/* flash_attn.c -- fused attention, forward and backward, without ever holding
 * the N x M score matrix (memory O(M) per thread).
 *
 * For query row n of head h (kv head hk = h / (H/Hkv)), batch b:
 *   s_m = scale * q.k_m           (softcap c > 0: c * tanh(s_m / c))
 *   s_m += slope_h * mask[m, n]   (mask plane h % mh, batch b % mb)
 *   p = softmax(s),  out = sum_m p_m v_m          (all -Inf: out = 0)
 * Backward (FlashAttention-2 identities), with L = logsumexp(s), dO = d[:, h, n, b]:
 *   p_m = exp(s_m - L),  dp_m = dO.v_m,  D = sum_m p_m dp_m  (= dO.out)
 *   ds_m = p_m (dp_m - D)
 *   dq += scale * sum_m ds_m k_m,  dk_m += scale * ds_m q,  dv_m += p_m dO
 * Forward work is split by query row; backward work by (kv head, batch), so
 * each dk/dv row has one writer and the result never depends on the thread count. */
#include "kernels.h"

#include <math.h>

struct attn_shape {
    int64_t DK, DV, N, M, H, Hkv, B;
};

static struct attn_shape shape_of(const struct ggml_tensor * q, const struct ggml_tensor * k, const struct ggml_tensor * v) {
    return (struct attn_shape) {q->ne[0], v->ne[0], q->ne[1], k->ne[1], q->ne[2], k->ne[2], q->ne[3]};
}

static float mask_value(const struct ggml_tensor * mask, int64_t m, int64_t n, int64_t h, int64_t b) {
    return ggmlr_load_f32(mask->type, ggmlr_elem_ptr(mask, m, n, h % mask->ne[2], b % mask->ne[3]));
}

/* Scores of one query row against all M keys, into s[M]; returns their max. */
static float row_scores(const struct ggmlr_vec_ops * vec, const float * q, const struct ggml_tensor * k,
                        const struct ggml_tensor * mask, int64_t n, int64_t h, int64_t hk, int64_t b,
                        float scale, float slope, float softcap, float * kbuf, float * s) {
    float mx = -INFINITY;
    for (int64_t m = 0; m < k->ne[1]; m++) {
        const float * kr = ggmlr_row_f32(k, m, hk, b, kbuf);
        float x = scale * vec->dot(k->ne[0], q, kr);
        if (softcap > 0.0f) x = softcap * tanhf(x / softcap);
        if (mask) x += slope * mask_value(mask, m, n, h, b);
        s[m] = x;
        if (x > mx) mx = x;
    }
    return mx;
}

size_t ggmlr_flash_attn_ext_work_size(const struct ggml_tensor * dst) {
    const struct attn_shape a = shape_of(dst->src[0], dst->src[1], dst->src[2]);
    return (size_t) (2 * a.DK + 2 * a.DV + a.M) * sizeof(float);
}

void ggmlr_compute_flash_attn_ext(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * q = dst->src[0], * k = dst->src[1], * v = dst->src[2], * mask = dst->src[3];
    const struct attn_shape a = shape_of(q, k, v);
    const float scale = ggmlr_get_op_param_f32(dst, 0);
    const float max_bias = ggmlr_get_op_param_f32(dst, 1);
    const float softcap = ggmlr_get_op_param_f32(dst, 2);
    const struct ggmlr_vec_ops * vec = ggmlr_vec();
    float * qbuf = p->wdata, * kbuf = qbuf + a.DK, * vbuf = kbuf + a.DK, * acc = vbuf + a.DV, * s = acc + a.DV;
    const int64_t group = a.H / a.Hkv;
    int64_t r0, r1;
    ggmlr_split(a.N * a.H * a.B, p->ith, p->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t h = r % a.H, n = (r / a.H) % a.N, b = r / (a.H * a.N);
        const int64_t hk = h / group;
        const float * qr = ggmlr_row_f32(q, n, h, b, qbuf);
        const float mx = row_scores(vec, qr, k, mask, n, h, hk, b, scale, ggmlr_alibi_slope(max_bias, h, a.H), softcap, kbuf, s);
        float * out = ggmlr_elem_ptr(dst, 0, h, n, b);
        for (int64_t i = 0; i < a.DV; i++) acc[i] = 0.0f;
        if (mx == -INFINITY) { memcpy(out, acc, (size_t) a.DV * sizeof(float)); continue; }
        double sum = 0.0;
        for (int64_t m = 0; m < a.M; m++) {
            const float pm = expf(s[m] - mx);
            if (pm == 0.0f) continue;
            sum += pm;
            vec->axpy(a.DV, pm, ggmlr_row_f32(v, m, hk, b, vbuf), acc);
        }
        const float inv = (float) (1.0 / sum);
        for (int64_t i = 0; i < a.DV; i++) out[i] = acc[i] * inv;
    }
}

size_t ggmlr_flash_attn_back_work_size(const struct ggml_tensor * dst) {
    const struct attn_shape a = shape_of(dst->src[0], dst->src[1], dst->src[2]);
    return (size_t) (3 * a.DK + 2 * a.DV + 2 * a.M) * sizeof(float);
}

void ggmlr_compute_flash_attn_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * q = dst->src[0], * k = dst->src[1], * v = dst->src[2], * mask = dst->src[3], * d = dst->src[4];
    const struct attn_shape a = shape_of(q, k, v);
    const float scale = ggmlr_get_op_param_f32(dst, 0);
    const struct ggmlr_vec_ops * vec = ggmlr_vec();
    float * qbuf = p->wdata, * kbuf = qbuf + a.DK, * dq = kbuf + a.DK;
    float * dobuf = dq + a.DK, * vbuf = dobuf + a.DV, * s = vbuf + a.DV, * dp = s + a.M;

    /* packed output [dq | dk | dv], dense, each slice 16-byte aligned */
    const int64_t nq = ggml_nelements(q), nk = ggml_nelements(k), nv = ggml_nelements(v);
    float * out = dst->data;
    float * gq = out, * gk = out + ggmlr_pad16_floats(nq), * gv = gk + ggmlr_pad16_floats(nk);
    if (p->ith == 0) {  /* the padding between slices */
        for (int64_t i = nq; i < ggmlr_pad16_floats(nq); i++) gq[i] = 0.0f;
        for (int64_t i = nk; i < ggmlr_pad16_floats(nk); i++) gk[i] = 0.0f;
        for (int64_t i = nv; i < ggmlr_pad16_floats(nv); i++) gv[i] = 0.0f;
    }
    const int64_t group = a.H / a.Hkv;
    int64_t t0, t1;
    ggmlr_split(a.Hkv * a.B, p->ith, p->nth, &t0, &t1);
    for (int64_t t = t0; t < t1; t++) {
        const int64_t hk = t % a.Hkv, b = t / a.Hkv;
        float * dk = gk + a.DK * a.M * (hk + a.Hkv * b);
        float * dv = gv + a.DV * a.M * (hk + a.Hkv * b);
        memset(dk, 0, (size_t) (a.DK * a.M) * sizeof(float));
        memset(dv, 0, (size_t) (a.DV * a.M) * sizeof(float));
        for (int64_t h = hk * group; h < (hk + 1) * group; h++) {
            for (int64_t n = 0; n < a.N; n++) {
                float * dqr = gq + a.DK * (n + a.N * (h + a.H * b));
                memset(dqr, 0, (size_t) a.DK * sizeof(float));
                const float * qr = ggmlr_row_f32(q, n, h, b, qbuf);
                const float mx = row_scores(vec, qr, k, mask, n, h, hk, b, scale, 1.0f, 0.0f, kbuf, s);
                if (mx == -INFINITY) continue;  /* fully masked row: zero gradients */
                double sum = 0.0;
                for (int64_t m = 0; m < a.M; m++) sum += expf(s[m] - mx);
                const float L = mx + (float) log(sum);
                const float * dO = ggmlr_row_f32(d, h, n, b, dobuf);
                double D = 0.0;
                for (int64_t m = 0; m < a.M; m++) {
                    s[m] = expf(s[m] - L);  /* s now holds p */
                    dp[m] = vec->dot(a.DV, dO, ggmlr_row_f32(v, m, hk, b, vbuf));
                    D += (double) s[m] * dp[m];
                }
                for (int64_t i = 0; i < a.DK; i++) dq[i] = 0.0f;
                for (int64_t m = 0; m < a.M; m++) {
                    if (s[m] == 0.0f) continue;
                    const float ds = scale * s[m] * (dp[m] - (float) D);
                    vec->axpy(a.DV, s[m], dO, dv + a.DV * m);
                    vec->axpy(a.DK, ds, ggmlr_row_f32(k, m, hk, b, kbuf), dq);
                    vec->axpy(a.DK, ds, qr, dk + a.DK * m);
                }
                memcpy(dqr, dq, (size_t) a.DK * sizeof(float));
            }
        }
    }
}

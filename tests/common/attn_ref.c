/* attn_ref.c -- see attn_ref.h. */
#include "attn_ref.h"

#include <stdlib.h>
#include <string.h>

int64_t attn_pad(int64_t n) {
    return (n * 4 + 15) / 16 * 16 / 4;  /* ceil(n*4/16)*16/4 */
}

double attn_alibi_slope(double max_bias, int64_t h, int64_t n_head) {
    if (max_bias <= 0) return 1.0;
    int64_t n_head_log2 = 1;
    while (n_head_log2 * 2 <= n_head) n_head_log2 *= 2;
    const double m0 = pow(2.0, -max_bias / (double) n_head_log2);
    const double m1 = pow(2.0, -(max_bias / 2.0) / (double) n_head_log2);
    return h < n_head_log2 ? pow(m0, (double) (h + 1)) : pow(m1, (double) (2 * (h - n_head_log2) + 1));
}

static const double * q_row(const attn_problem * p, int64_t n, int64_t h, int64_t b) {
    const attn_dims * a = &p->a;
    return p->q + a->DK * (n + a->N * (h + a->H * b));
}
static const double * k_row(const attn_problem * p, int64_t m, int64_t hk, int64_t b) {
    const attn_dims * a = &p->a;
    return p->k + a->DK * (m + a->M * (hk + a->Hkv * b));
}
static const double * v_row(const attn_problem * p, int64_t m, int64_t hk, int64_t b) {
    const attn_dims * a = &p->a;
    return p->v + a->DV * (m + a->M * (hk + a->Hkv * b));
}
static int64_t kv_head(const attn_dims * a, int64_t h) { return h / (a->H / a->Hkv); }
static int64_t out_index(const attn_dims * a, int64_t n, int64_t h, int64_t b) { return a->DV * (h + a->H * (n + a->N * b)); }

bool attn_ref_probs(const attn_problem * p, int64_t n, int64_t h, int64_t b, double * pr) {
    const attn_dims * a = &p->a;
    const int64_t hk = kv_head(a, h);
    const double * qr = q_row(p, n, h, b);
    const double slope = attn_alibi_slope(p->max_bias, h, a->H);
    double mx = -INFINITY;
    for (int64_t m = 0; m < a->M; m++) {
        const double * kr = k_row(p, m, hk, b);
        double dot = 0;
        for (int64_t i = 0; i < a->DK; i++) dot += qr[i] * kr[i];
        double s = p->scale * dot;
        if (p->softcap > 0) s = p->softcap * tanh(s / p->softcap);
        if (p->mask) {
            const int64_t mh = h % p->mne[2], mb = b % p->mne[3];
            s += slope * p->mask[m + a->M * (n + p->mne[1] * (mh + p->mne[2] * mb))];
        }
        pr[m] = s;
        if (s > mx) mx = s;
    }
    if (mx == -INFINITY) {
        for (int64_t m = 0; m < a->M; m++) pr[m] = 0;
        return false;
    }
    const double sink = p->sinks ? p->sinks[h] : -INFINITY;
    if (sink > mx) mx = sink;
    double sum = sink == -INFINITY ? 0 : exp(sink - mx);
    for (int64_t m = 0; m < a->M; m++) {
        pr[m] = exp(pr[m] - mx);
        sum += pr[m];
    }
    for (int64_t m = 0; m < a->M; m++) pr[m] /= sum;
    return true;
}

void attn_ref_forward(const attn_problem * p, double * out) {
    const attn_dims * a = &p->a;
    double * pr = malloc((size_t) a->M * sizeof *pr);
    for (int64_t b = 0; b < a->B; b++)
        for (int64_t h = 0; h < a->H; h++)
            for (int64_t n = 0; n < a->N; n++) {
                double * o = out + out_index(a, n, h, b);
                for (int64_t i = 0; i < a->DV; i++) o[i] = 0;
                if (!attn_ref_probs(p, n, h, b, pr)) continue;
                for (int64_t m = 0; m < a->M; m++) {
                    const double * vr = v_row(p, m, kv_head(a, h), b);
                    for (int64_t i = 0; i < a->DV; i++) o[i] += pr[m] * vr[i];
                }
            }
    free(pr);
}

void attn_ref_backward(const attn_problem * p, const double * d, double * dq, double * dk, double * dv) {
    const attn_dims * a = &p->a;
    if (p->softcap != 0) { fprintf(stderr, "attn_ref_backward: softcap is not supported\n"); exit(2); }
    memset(dq, 0, (size_t) attn_nq(a) * sizeof *dq);
    memset(dk, 0, (size_t) attn_nk(a) * sizeof *dk);
    memset(dv, 0, (size_t) attn_nv(a) * sizeof *dv);
    double * pr = malloc((size_t) a->M * sizeof *pr);
    double * dp = malloc((size_t) a->M * sizeof *dp);
    for (int64_t b = 0; b < a->B; b++)
        for (int64_t h = 0; h < a->H; h++)
            for (int64_t n = 0; n < a->N; n++) {
                if (!attn_ref_probs(p, n, h, b, pr)) continue;
                const int64_t hk = kv_head(a, h);
                const double * dO = d + out_index(a, n, h, b);
                const double * qr = q_row(p, n, h, b);
                double * dqr = dq + (qr - p->q);
                /* dP = dO V^T, D = rowsum(dO * O) = sum_m P dP */
                double D = 0;
                for (int64_t m = 0; m < a->M; m++) {
                    const double * vr = v_row(p, m, hk, b);
                    dp[m] = 0;
                    for (int64_t i = 0; i < a->DV; i++) dp[m] += dO[i] * vr[i];
                    D += pr[m] * dp[m];
                }
                for (int64_t m = 0; m < a->M; m++) {
                    const double ds = pr[m] * (dp[m] - D);  /* dS = P (dP - D) */
                    const double * kr = k_row(p, m, hk, b);
                    double * dkr = dk + (kr - p->k);
                    double * dvr = dv + (v_row(p, m, hk, b) - p->v);
                    for (int64_t i = 0; i < a->DK; i++) {
                        dqr[i] += p->scale * ds * kr[i];   /* dQ = scale dS K */
                        dkr[i] += p->scale * ds * qr[i];   /* dK = scale dS^T Q, summed over the group */
                    }
                    for (int64_t i = 0; i < a->DV; i++) dvr[i] += pr[m] * dO[i];  /* dV = P^T dO */
                }
            }
    free(pr);
    free(dp);
}

void attn_ref_dsinks(const attn_problem * p, const double * d, double * ds) {
    const attn_dims * a = &p->a;
    double * pr = malloc((size_t) a->M * sizeof *pr);
    for (int64_t h = 0; h < a->H; h++) ds[h] = 0;
    for (int64_t b = 0; b < a->B; b++)
        for (int64_t h = 0; h < a->H; h++)
            for (int64_t n = 0; n < a->N; n++) {
                if (!attn_ref_probs(p, n, h, b, pr)) continue;  /* nothing attended: out = 0 whatever the sink */
                const double * dO = d + out_index(a, n, h, b);
                double p_sink = 1, d_dot_out = 0;
                for (int64_t m = 0; m < a->M; m++) {
                    const double * vr = v_row(p, m, kv_head(a, h), b);
                    double dv = 0;
                    for (int64_t i = 0; i < a->DV; i++) dv += dO[i] * vr[i];
                    p_sink -= pr[m];
                    d_dot_out += pr[m] * dv;
                }
                ds[h] -= p_sink * d_dot_out;
            }
    free(pr);
}

double attn_ref_loss(const attn_problem * p, const double * d) {
    const int64_t n = attn_nout(&p->a);
    double * out = malloc((size_t) n * sizeof *out);
    attn_ref_forward(p, out);
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += d[i] * out[i];
    free(out);
    return s;
}

void attn_ref_numgrad(attn_problem * p, const double * d, int which, double eps, double * g) {
    double * x = which == 0 ? p->q : which == 1 ? p->k : which == 2 ? p->v : p->sinks;
    const int64_t n = which == 0 ? attn_nq(&p->a) : which == 1 ? attn_nk(&p->a) : which == 2 ? attn_nv(&p->a) : p->a.H;
    for (int64_t i = 0; i < n; i++) {
        const double x0 = x[i];
        x[i] = x0 + eps;
        const double fp = attn_ref_loss(p, d);
        x[i] = x0 - eps;
        const double fm = attn_ref_loss(p, d);
        x[i] = x0;
        g[i] = (fp - fm) / (2 * eps);
    }
}

/* ---- ggml side ---- */

double attn_round(enum ggml_type type, double x) {
    if (type == GGML_TYPE_F16) return (double) ggml_fp16_to_fp32(ggml_fp32_to_fp16((float) x));
    return (double) (float) x;
}

void attn_tensor_set(struct ggml_tensor * t, const double * x) {
    for (int64_t i = 0; i < ggml_nelements(t); i++) ggml_set_f32_1d(t, i, (float) x[i]);
}

double * attn_tensor_read(const struct ggml_tensor * t) {
    const int64_t n = ggml_nelements(t);
    double * x = malloc((size_t) (n > 0 ? n : 1) * sizeof *x);
    for (int64_t i = 0; i < n; i++) x[i] = ggml_get_f32_1d(t, i);
    return x;
}

static double * random_values(int64_t n, double lo, double hi, double quant, enum ggml_type type) {
    double * x = malloc((size_t) (n > 0 ? n : 1) * sizeof *x);
    for (int64_t i = 0; i < n; i++) {
        double u = tc_uniform(lo, hi);
        if (quant > 0) u = quant * round(u / quant);
        x[i] = attn_round(type, u);
    }
    return x;
}

/* A tensor of logical shape ne in the requested layout (views of a differently shaped storage). */
static struct ggml_tensor * make_tensor(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4], int layout) {
    switch (layout) {
        case AL_PERMUTED: {  /* storage [ne0, ne2, ne1, ne3], swap dims 1 and 2 */
            struct ggml_tensor * s = ggml_new_tensor_4d(ctx, type, ne[0], ne[2], ne[1], ne[3]);
            return ggml_permute(ctx, s, 0, 2, 1, 3);
        }
        case AL_TRANSPOSED: {  /* storage [ne1, ne0, ne2, ne3], swap dims 0 and 1 */
            struct ggml_tensor * s = ggml_new_tensor_4d(ctx, type, ne[1], ne[0], ne[2], ne[3]);
            return ggml_transpose(ctx, s);
        }
        default:
            return ggml_new_tensor_4d(ctx, type, ne[0], ne[1], ne[2], ne[3]);
    }
}

struct ggml_tensor * attn_make_mask(struct ggml_context * ctx, const attn_case * c, double ** host, int64_t mne[4]) {
    mne[0] = c->M;
    mne[1] = c->mN > 0 ? c->mN : c->N;
    mne[2] = c->mh > 0 ? c->mh : 1;
    mne[3] = c->mb > 0 ? c->mb : 1;
    const int64_t nm = mne[0] * mne[1] * mne[2] * mne[3];
    double * x = malloc((size_t) nm * sizeof *x);
    for (int64_t i = 0; i < nm; i++) {
        const int64_t m = i % c->M, n = (i / c->M) % mne[1], plane = i / (c->M * mne[1]);
        double y = 0;
        if (c->mask & AM_VALUES) y = tc_uniform(-2, 2);
        if ((c->mask & AM_CAUSAL) && m > n) y = -INFINITY;
        if ((c->mask & AM_RANDINF) && tc_uniform(0, 1) < 0.3) y = -INFINITY;
        if ((c->mask & AM_FULLROW) && plane == 0 && n % 3 == 0) y = -INFINITY;
        if ((c->mask & AM_TOPROWS) && plane == 0 && n < 30) y = -INFINITY;
        if ((c->mask & AM_KEYSPAN) && m >= 64 && m < 140) y = -INFINITY;
        if (n >= c->N) y = NAN;  /* rows past N must be ignored */
        x[i] = attn_round(c->mask_type, y);
    }
    struct ggml_tensor * t;
    if (c->layout == AL_CONTIGUOUS) {
        t = ggml_new_tensor_4d(ctx, c->mask_type, mne[0], mne[1], mne[2], mne[3]);
    } else {  /* rows padded by 3 elements: a strided view */
        struct ggml_tensor * s = ggml_new_tensor_4d(ctx, c->mask_type, mne[0] + 3, mne[1], mne[2], mne[3]);
        ggml_set_f32(s, 12345.0f);  /* the padding must never be read */
        t = ggml_view_4d(ctx, s, mne[0], mne[1], mne[2], mne[3], s->nb[1], s->nb[2], s->nb[3], 0);
    }
    ggml_set_name(t, "mask");
    attn_tensor_set(t, x);
    *host = x;
    return t;
}

void attn_inputs_make(struct ggml_context * ctx, const attn_case * c, attn_inputs * in) {
    memset(in, 0, sizeof *in);
    attn_problem * p = &in->p;
    p->a = (attn_dims) {c->DK, c->DV, c->N, c->M, c->H, c->Hkv, c->B};
    p->scale = c->scale;
    p->max_bias = c->max_bias;
    p->softcap = c->softcap;
    const double lo = (c->lo == 0 && c->hi == 0) ? -1 : c->lo, hi = (c->lo == 0 && c->hi == 0) ? 1 : c->hi;
    const attn_dims * a = &p->a;

    p->q = random_values(attn_nq(a), lo, hi, c->quant, GGML_TYPE_F32);
    p->k = random_values(attn_nk(a), lo, hi, c->quant, c->kv_type);
    p->v = random_values(attn_nv(a), lo, hi, c->quant, c->kv_type);
    if (c->pair_keys) {
        /* keys in pairs that differ by 32 in component 0 only, and every query's
         * component 0 in [-1/16, 1/16]: the two keys of a pair score within 2 of
         * each other for every query, while other keys score far apart. */
        for (int64_t i = 0; i < attn_nq(a); i += a->DK) p->q[i] = (double) tc_randint(-4, 4) / 64;
        for (int64_t t = 0; t < a->Hkv * a->B; t++)
            for (int64_t m = 1; m < a->M; m += 2) {
                double * kr = p->k + a->DK * (m + a->M * t);
                memcpy(kr, kr - a->DK, (size_t) a->DK * sizeof *kr);
                kr[0] = attn_round(c->kv_type, kr[0] + 32);
            }
    }
    const int64_t qne[4] = {a->DK, a->N, a->H, a->B};
    const int64_t kne[4] = {a->DK, a->M, a->Hkv, a->B};
    const int64_t vne[4] = {a->DV, a->M, a->Hkv, a->B};
    in->q = make_tensor(ctx, GGML_TYPE_F32, qne, c->layout);
    in->k = make_tensor(ctx, c->kv_type, kne, c->layout);
    in->v = make_tensor(ctx, c->kv_type, vne, c->layout);
    ggml_set_name(in->q, "q");
    ggml_set_name(in->k, "k");
    ggml_set_name(in->v, "v");
    attn_tensor_set(in->q, p->q);
    attn_tensor_set(in->k, p->k);
    attn_tensor_set(in->v, p->v);

    if (c->mask != AM_NONE) in->mask = attn_make_mask(ctx, c, &p->mask, p->mne);

    in->d = random_values(attn_nout(a), -1, 1, 0, GGML_TYPE_F32);
    in->d_t = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a->DV, a->H, a->N, a->B);
    ggml_set_name(in->d_t, "d");
    attn_tensor_set(in->d_t, in->d);

    if (c->sinks != AS_NONE) {
        p->sinks = random_values(a->H, -2, 2, 0, GGML_TYPE_F32);
        for (int64_t h = 0; h < a->H; h++) {
            if (c->sinks == AS_DOMINANT) p->sinks[h] = 10 + 0.5 * (double) h;
            else if (h % 4 == 1) p->sinks[h] = 10;
            else if (h % 4 == 3) p->sinks[h] = -INFINITY;
        }
        in->sinks = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, a->H);
        ggml_set_name(in->sinks, "sinks");
        attn_tensor_set(in->sinks, p->sinks);
    }
}

void attn_inputs_free(attn_inputs * in) {
    free(in->p.q);
    free(in->p.k);
    free(in->p.v);
    free(in->p.mask);
    free(in->p.sinks);
    free(in->d);
    memset(in, 0, sizeof *in);
}

attn_case attn_base_case(int64_t DK, int64_t DV, int64_t N, int64_t M, int64_t H, int64_t Hkv, int64_t B) {
    attn_case c = {0};
    c.DK = DK; c.DV = DV; c.N = N; c.M = M; c.H = H; c.Hkv = Hkv; c.B = B;
    c.kv_type = GGML_TYPE_F32;
    c.mask_type = GGML_TYPE_F16;
    c.scale = (float) (1.0 / sqrt((double) DK));
    return c;
}

int attn_named_cases(attn_named_case * out, int max) {
    int n = 0;
    attn_case c;
#define ADD(name, fwd) do { if (n < max) { out[n].what = (name); out[n].c = c; out[n].fwd_only = (fwd); n++; } } while (0)
    c = attn_base_case(4, 4, 3, 5, 1, 1, 1);                                 ADD("single head", false);
    c = attn_base_case(7, 7, 1, 9, 2, 1, 1);                                 ADD("N = 1", false);
    c = attn_base_case(5, 3, 6, 1, 2, 2, 2);                                 ADD("M = 1", false);
    c = attn_base_case(3, 5, 4, 6, 4, 2, 2);                                 ADD("DK != DV", false);
    c = attn_base_case(9, 2, 5, 7, 3, 3, 1);                                 ADD("H/Hkv = 1", false);
    c = attn_base_case(4, 6, 5, 7, 6, 3, 2);                                 ADD("H/Hkv = 2", false);
    c = attn_base_case(5, 5, 3, 4, 6, 2, 3);                                 ADD("H/Hkv = 3", false);
    c = attn_base_case(3, 4, 2, 5, 8, 2, 2);                                 ADD("H/Hkv = 4", false);
    c = attn_base_case(4, 4, 6, 6, 2, 1, 2); c.mask = AM_CAUSAL;             ADD("causal F16", false);
    c.mask_type = GGML_TYPE_F32;                                             ADD("causal F32", false);
    c = attn_base_case(4, 4, 3, 6, 2, 1, 1); c.mask = AM_CAUSAL;             ADD("causal, keys nobody sees", false);
    c = attn_base_case(5, 3, 7, 8, 4, 2, 2); c.mask = AM_RANDINF | AM_VALUES; ADD("random -Inf", false);
    c = attn_base_case(4, 5, 7, 5, 2, 2, 2); c.mask = AM_FULLROW | AM_VALUES; ADD("fully masked rows F16", false);
    c.mask_type = GGML_TYPE_F32;                                             ADD("fully masked rows F32", false);
    c = attn_base_case(4, 4, 5, 6, 2, 1, 1); c.mask = AM_VALUES; c.mN = 9;   ADD("mask N' > N (NaN rows)", false);
    c = attn_base_case(3, 4, 3, 5, 4, 2, 2); c.mask = AM_VALUES | AM_RANDINF; c.mh = 4; c.mb = 2; c.mN = 4;
                                                                             ADD("mask mh = H, mb = B", false);
    c = attn_base_case(3, 4, 3, 5, 6, 3, 3); c.mask = AM_VALUES; c.mh = 3; c.mb = 3;
                                                                             ADD("mask mh = H/2", false);
    c = attn_base_case(5, 3, 4, 6, 4, 2, 2); c.layout = AL_PERMUTED; c.mask = AM_VALUES | AM_RANDINF;
                                                                             ADD("permuted views", false);
    c = attn_base_case(5, 3, 4, 6, 4, 2, 2); c.layout = AL_TRANSPOSED; c.mask = AM_VALUES; c.mh = 2;
                                                                             ADD("transposed views", false);
    c.kv_type = GGML_TYPE_F16;                                               ADD("transposed F16 K/V", true);
    c = attn_base_case(6, 5, 4, 7, 4, 2, 2); c.kv_type = GGML_TYPE_F16; c.mask = AM_CAUSAL;
                                                                             ADD("F16 K/V", true);
    c = attn_base_case(4, 4, 3, 5, 8, 4, 2); c.mask = AM_VALUES; c.max_bias = 8.0f;
                                                                             ADD("ALiBi H = 8", true);
    c = attn_base_case(4, 4, 3, 5, 6, 3, 1); c.mask = AM_VALUES | AM_CAUSAL; c.max_bias = 8.0f; c.mh = 6;
                                                                             ADD("ALiBi H = 6", true);
    c = attn_base_case(4, 4, 3, 5, 3, 1, 1); c.mask = AM_VALUES; c.max_bias = 2.5f; c.mask_type = GGML_TYPE_F32;
                                                                             ADD("ALiBi H = 3", true);
    c = attn_base_case(4, 4, 3, 5, 2, 1, 2); c.softcap = 1.5f; c.scale = 2.0f; c.lo = -2; c.hi = 2;
                                                                             ADD("softcap 1.5", true);
    c.softcap = 30.0f; c.mask = AM_VALUES | AM_RANDINF;                      ADD("softcap 30 + mask", true);
    c = attn_base_case(4, 5, 6, 8, 2, 1, 2); c.scale = 1.0f; c.lo = -30; c.hi = 30; c.quant = 0.25; c.pair_keys = true;
                                                                             ADD("saturated softmax (exact scores)", false);
    c.mask = AM_CAUSAL;                                                      ADD("saturated softmax + causal", false);
    c = attn_base_case(4, 5, 6, 8, 2, 1, 2); c.scale = 1.0f; c.lo = -30; c.hi = 30;
                                                                             ADD("saturated softmax (random values)", true);
    c = attn_base_case(3, 3, 4, 6, 2, 1, 1); c.scale = 0.0f; c.mask = AM_RANDINF;
                                                                             ADD("scale 0", false);
    /* row maxima that grow across key tiles by more and by less than the forward's rescale margin */
    c = attn_base_case(4, 5, 6, 200, 2, 1, 1); c.scale = 1.0f; c.lo = -3; c.hi = 3;
                                                                             ADD("maxima growing across key tiles", false);
    c.lo = -30; c.hi = 30;                                                   ADD("maxima growing across key tiles, saturated", true);
    /* shapes spanning several query blocks, key tiles, feature tiles and key chunks */
    c = attn_base_case(64, 64, 200, 200, 4, 2, 1); c.mask = AM_CAUSAL;       ADD("large 64x200x200, H 4/2, causal F16", false);
    c = attn_base_case(64, 48, 37, 256, 2, 1, 2); c.mask = AM_VALUES | AM_RANDINF; c.mask_type = GGML_TYPE_F32;
                                                                             ADD("large M = 256, F32 mask", false);
    c = attn_base_case(32, 32, 130, 150, 2, 2, 1); c.mask = AM_CAUSAL; c.mask_type = GGML_TYPE_F32;
                                                                             ADD("causal F32 over many blocks", false);
    c = attn_base_case(8, 8, 60, 200, 3, 1, 2); c.mask = AM_TOPROWS | AM_KEYSPAN | AM_VALUES; c.mh = 3; c.mb = 2;
                                                                             ADD("masked query blocks and key tiles F16", false);
    c.mask_type = GGML_TYPE_F32; c.mask = AM_TOPROWS | AM_KEYSPAN | AM_CAUSAL; c.mh = 1; c.mN = 61;
                                                                             ADD("masked query blocks and key tiles F32", false);
    c = attn_base_case(32, 32, 300, 290, 2, 1, 1); c.mask = AM_CAUSAL;      ADD("N >= 256: 48-row query blocks, causal F16", false);
    c = attn_base_case(24, 16, 263, 270, 2, 1, 1); c.mask = AM_TOPROWS | AM_KEYSPAN | AM_RANDINF | AM_VALUES;
                                                                             ADD("N >= 256: masked query blocks and key tiles", false);
    c = attn_base_case(130, 80, 30, 70, 2, 1, 1); c.mask = AM_CAUSAL;        ADD("wide features DK 130, DV 80", false);
    c = attn_base_case(16, 16, 7, 333, 1, 1, 1); c.mask = AM_RANDINF;        ADD("many key chunks", false);
    c = attn_base_case(5, 7, 53, 65, 6, 2, 1);                               ADD("N over several blocks, GQA", false);
    c = attn_base_case(9, 11, 31, 70, 4, 2, 1); c.layout = AL_PERMUTED; c.mask = AM_VALUES | AM_FULLROW; c.mh = 2;
                                                                             ADD("permuted views over several tiles", false);
    c = attn_base_case(64, 64, 100, 150, 4, 1, 1); c.kv_type = GGML_TYPE_F16; c.mask = AM_VALUES | AM_CAUSAL;
    c.max_bias = 8.0f; c.softcap = 20.0f;                                    ADD("large F16 K/V, ALiBi, softcap", true);
#undef ADD
    return n;
}

static const char * type_str(enum ggml_type t) { return t == GGML_TYPE_F16 ? "F16" : "F32"; }

const char * attn_case_str(const attn_case * c) {
    static char buf[400];
    snprintf(buf, sizeof buf,
             "DK=%lld DV=%lld N=%lld M=%lld H=%lld Hkv=%lld B=%lld mask=%d(%s, mN=%lld mh=%lld mb=%lld) kv=%s layout=%d "
             "range=[%g,%g] quant=%g pairs=%d scale=%g max_bias=%g softcap=%g sinks=%d",
             (long long) c->DK, (long long) c->DV, (long long) c->N, (long long) c->M, (long long) c->H, (long long) c->Hkv,
             (long long) c->B, c->mask, type_str(c->mask_type), (long long) c->mN, (long long) c->mh, (long long) c->mb,
             type_str(c->kv_type), c->layout, c->lo, c->hi, c->quant, (int) c->pair_keys, (double) c->scale,
             (double) c->max_bias, (double) c->softcap, c->sinks);
    return buf;
}

static int64_t pick(const int64_t * v, int n) { return v[tc_randint(0, n - 1)]; }

attn_case attn_random_case(bool allow_fwd_only) {
    /* 80 and 72: whole micro-tiles and a half tile on every SIMD path;
     * 32 and 64: K / V rows read in place on every path */
    static const int64_t dks[] = {1, 2, 3, 4, 5, 7, 8, 16, 32, 33, 80};
    static const int64_t dvs[] = {1, 3, 4, 5, 8, 17, 64, 72};
    static const int64_t ns[]  = {1, 1, 2, 3, 4, 5, 7, 9, 13};
    static const int64_t ms[]  = {1, 1, 2, 3, 4, 5, 6, 9, 16, 31};
    attn_case c = {0};
    c.DK = pick(dks, 11);
    c.DV = tc_randint(0, 2) == 0 ? c.DK : pick(dvs, 8);
    c.N = pick(ns, 9);
    c.M = pick(ms, 10);
    c.Hkv = tc_randint(1, 3);
    c.H = c.Hkv * tc_randint(1, 4);
    c.B = tc_randint(1, 3);
    c.kv_type = GGML_TYPE_F32;
    c.mask_type = tc_randint(0, 1) ? GGML_TYPE_F16 : GGML_TYPE_F32;
    const int mk = tc_randint(0, 7);
    c.mask = mk == 0 ? AM_NONE : mk == 1 ? AM_ZERO : mk == 2 ? AM_CAUSAL : mk == 3 ? AM_VALUES | AM_RANDINF
           : mk == 4 ? AM_VALUES | AM_CAUSAL : mk == 5 ? AM_FULLROW | AM_VALUES : mk == 6 ? AM_RANDINF : AM_VALUES;
    if (c.mask) {
        static const int64_t extra[] = {0, 0, 1, 3};
        c.mN = c.N + pick(extra, 4);
        /* mask planes: one, one per head, or a proper divisor of H */
        const int r = tc_randint(0, 2);
        c.mh = r == 0 ? 1 : r == 1 ? c.H : (c.H % 2 == 0 ? c.H / 2 : 1);
        c.mb = tc_randint(0, 1) ? c.B : 1;
    }
    const int lay = tc_randint(0, 4);
    c.layout = lay <= 2 ? AL_CONTIGUOUS : lay == 3 ? AL_PERMUTED : AL_TRANSPOSED;
    static const float scales[] = {0.0f, 0.3f, 1.0f};
    const int sc = tc_randint(0, 3);
    c.scale = sc < 3 ? (float) (1.0 / sqrt((double) c.DK)) : scales[tc_randint(0, 2)];
    if (allow_fwd_only) {
        if (tc_randint(0, 3) == 0) c.kv_type = GGML_TYPE_F16;
        if (c.mask && tc_randint(0, 4) == 0) c.max_bias = tc_randint(0, 1) ? 8.0f : 2.5f;
        if (tc_randint(0, 4) == 0) {
            static const float caps[] = {1.5f, 20.0f, 50.0f};
            c.softcap = caps[tc_randint(0, 2)];
        }
    }
    return c;
}

bool attn_compute(struct ggml_context * ctx, struct ggml_tensor * t, int n_threads) {
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    if (!CHECK(g != NULL, "ggml_new_graph failed: %s", ggml_last_error())) return false;
    ggml_build_forward_expand(g, t);
    const enum ggml_status st = ggml_graph_compute_with_ctx(ctx, g, n_threads);
    return CHECK(st == GGML_STATUS_SUCCESS, "graph compute failed: %s", ggml_last_error());
}

/* flash_attn.c -- rows of fused attention at GGML_PREC_BF16 (the F32 kernel
 * has its own suites: test_flash_attn_forward/backward/graph, with masks,
 * sinks, GQA and layouts). out[:, h, n] = sum_m p_m v_m, p = softmax over m
 * of s_m = scale q_n . k_m + mask[m, n] (docs/attention.md).
 *
 * At GGML_PREC_BF16, where ggml_cpu_bf16_name() says the CPU multiplies bf16,
 * the products take bf16-rounded operands with FP32 sums (docs/precision.md):
 *   s_m = scale sum_d bf16(q_d) bf16(k_md) + mask,
 *   out = sum_m bf16(e^(s_m - mt)) e^(mt - mx) bf16(v_m) / sum_m e^(s_m - mx),
 * mt the row's reference max when key m's tile was added (the kernel's online
 * softmax: tiles of 64 keys, 128 for heads of <= 64 over >= 256 keys; the
 * reference moves to a tile's max when it passes the old one by more than 8),
 * mx the final one.
 * The reference below is that, in float64. Forward tolerance: relative
 * 2-norm error 2e-4. The FP32 kernel and the float64 reference form P and dS
 * an ulp or so apart, and a value that close to a bf16 rounding boundary
 * rounds to the neighbour (dS = P (dP - D) cancels, so its ulps are many):
 * each such flip moves the result by 2^-8 of one term, 1e-6 .. 1e-5 of it
 * in all at these sizes (5e-5 seen). Leaving the operands unrounded is off
 * by 2e-3 .. 3e-3, which check_refs checks is past 4x the tolerance.
 * Elsewhere the F32 kernel runs and the reference rounds nothing.
 *
 * Gradients: finite differences of the bf16 forward are noisy (a step moves
 * rounded values by whole bf16 units), so the gradient rows take a wider
 * step and tolerance (a wrong index or scale is still far off); check_refs
 * compares the backward's dq, dk and dv with a float64 reference of its
 * rounded products at 3e-4 (and the unrounded one: past 4x that). */
#include "ops/harness.h"

#include "ggml-cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RESCALE_MARGIN 8.0   /* how far a tile's max may pass the reference max before it moves */

struct fa_params { bool bf16, mask; float max_bias; };
static const struct fa_params p_bf16 = {true, false, 0.0f}, p_bf16_mask = {true, true, 0.0f}, p_f32_mask = {false, true, 0.0f},
                              p_alibi = {true, true, 1.0f};

static float scale_of(int64_t DK) { return 1.0f / sqrtf((float) DK); }

/* q [DK, N, H, B], k [DK, M, Hkv, B], v [DV, M, Hkv, B], mask [M, N, 1, 1] */
static struct ggml_tensor * b_fa(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct fa_params * p = params;
    struct ggml_tensor * y = ggml_flash_attn_ext(ctx, in[0], in[1], in[2], p->mask ? in[3] : NULL, scale_of(in[0]->ne[0]), p->max_bias, 0.0f);
    if (y && p->bf16) ggml_flash_attn_ext_set_prec(y, GGML_PREC_BF16);
    return y;
}

static void s_fa(const int64_t (*ne)[4], const void * params, int64_t no[4]) {
    (void) params;
    no[0] = ne[2][0]; no[1] = ne[0][2]; no[2] = ne[0][1]; no[3] = ne[0][3];
}

static double rnd(bool round, double x) { return round ? ops_round_bf16(x) : x; }

/* the problem in float64, shapes from the inputs */
struct fa_ref { const double * q, * k, * v, * mask; int64_t DK, DV, N, M, H, Hkv, B, key_tile; double scale, max_bias; bool round; };

/* the kernel's keys per tile (flash_attn.c): 128 for heads of <= 64 over >= 256 keys, else 64 */
static int64_t key_tile(int64_t DK, int64_t DV, int64_t M) { return DK <= 64 && DV <= 64 && M >= 256 ? 128 : 64; }

static struct fa_ref ref_of(const double * const * in, const int64_t (*ne)[4], const struct fa_params * p, bool round) {
    return (struct fa_ref) {in[0], in[1], in[2], p->mask ? in[3] : NULL, ne[0][0], ne[2][0], ne[0][1], ne[1][1], ne[0][2], ne[1][2],
                            ne[0][3], key_tile(ne[0][0], ne[2][0], ne[1][1]), scale_of(ne[0][0]), p->max_bias, round};
}

static bool rounds(const struct fa_params * p) { return p->bf16 && strcmp(ggml_cpu_bf16_name(), "f32") != 0; }

/* ALiBi's slope of head h (upstream's: n2 the largest power of two <= H) */
static double slope(const struct fa_ref * r, int64_t h) {
    if (r->max_bias <= 0) return 1.0;
    int64_t n2 = 1;
    while (2 * n2 <= r->H) n2 *= 2;
    return h < n2 ? pow(2.0, -r->max_bias * (double) (h + 1) / (double) n2) : pow(2.0, -r->max_bias * (double) (2 * (h - n2) + 1) / (2.0 * (double) n2));
}

/* the scores of query row (n, h, b) into s[M] */
static void scores(const struct fa_ref * r, int64_t n, int64_t h, int64_t b, double * s) {
    const int64_t hk = h / (r->H / r->Hkv);
    for (int64_t m = 0; m < r->M; m++) {
        double acc = 0;
        for (int64_t d = 0; d < r->DK; d++)
            acc += rnd(r->round, r->q[d + r->DK * (n + r->N * (h + r->H * b))]) * rnd(r->round, r->k[d + r->DK * (m + r->M * (hk + r->Hkv * b))]);
        s[m] = r->scale * acc + (r->mask ? slope(r, h) * r->mask[m + r->M * n] : 0.0);
    }
}

static void forward(const struct fa_ref * r, double * out) {
    double * s = malloc((size_t) r->M * sizeof(double)), * mt = malloc((size_t) r->M * sizeof(double));
    for (int64_t b = 0; b < r->B; b++) for (int64_t h = 0; h < r->H; h++) for (int64_t n = 0; n < r->N; n++) {
        const int64_t hk = h / (r->H / r->Hkv);
        scores(r, n, h, b, s);
        double ref = -INFINITY;  /* the kernel's reference max, tile by tile */
        for (int64_t m0 = 0; m0 < r->M; m0 += r->key_tile) {
            double tmax = -INFINITY;
            for (int64_t m = m0; m < r->M && m < m0 + r->key_tile; m++) tmax = s[m] > tmax ? s[m] : tmax;
            if (tmax > ref + RESCALE_MARGIN) ref = tmax;
            for (int64_t m = m0; m < r->M && m < m0 + r->key_tile; m++) mt[m] = ref;
        }
        double l = 0;
        for (int64_t m = 0; m < r->M; m++) l += s[m] == -INFINITY ? 0 : exp(s[m] - ref);
        for (int64_t f = 0; f < r->DV; f++) {
            double acc = 0;
            for (int64_t m = 0; m < r->M; m++) {
                if (s[m] == -INFINITY) continue;
                const double pm = rnd(r->round, exp(s[m] - mt[m])) * exp(mt[m] - ref);
                acc += pm * rnd(r->round, r->v[f + r->DV * (m + r->M * (hk + r->Hkv * b))]);
            }
            out[f + r->DV * (h + r->H * (n + r->N * b))] = l > 0 ? acc / l : 0.0;
        }
    }
    free(s);
    free(mt);
}

static void r_fa(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) no;
    const struct fa_ref r = ref_of(in, ne, params, rounds(params));
    forward(&r, out);
}

/* Gradients of sum(out * w) (w [DV, H, N, B]), with the backward's products
 * rounded as the kernel's: P = e^(s - L), dP = bf16(w) bf16(v)^T,
 * dS = P (dP - w . out), dv = bf16(P)^T bf16(w), dk = scale bf16(dS)^T bf16(q),
 * dq = scale bf16(dS) bf16(k) */
static void backward(const struct fa_ref * r, const double * w, double * dq, double * dk, double * dv) {
    const int64_t nout = r->DV * r->H * r->N * r->B;
    double * out = malloc((size_t) nout * sizeof(double)), * s = malloc((size_t) r->M * sizeof(double));
    forward(r, out);
    memset(dq, 0, (size_t) (r->DK * r->N * r->H * r->B) * sizeof(double));
    memset(dk, 0, (size_t) (r->DK * r->M * r->Hkv * r->B) * sizeof(double));
    memset(dv, 0, (size_t) (r->DV * r->M * r->Hkv * r->B) * sizeof(double));
    for (int64_t b = 0; b < r->B; b++) for (int64_t h = 0; h < r->H; h++) for (int64_t n = 0; n < r->N; n++) {
        const int64_t hk = h / (r->H / r->Hkv), row = r->DV * (h + r->H * (n + r->N * b));
        scores(r, n, h, b, s);
        double mx = -INFINITY, l = 0, D = 0;
        for (int64_t m = 0; m < r->M; m++) mx = s[m] > mx ? s[m] : mx;
        if (mx == -INFINITY) continue;
        for (int64_t m = 0; m < r->M; m++) l += exp(s[m] - mx);
        for (int64_t f = 0; f < r->DV; f++) D += w[row + f] * out[row + f];
        for (int64_t m = 0; m < r->M; m++) {
            const double pm = exp(s[m] - mx) / l;
            const int64_t vrow = r->DV * (m + r->M * (hk + r->Hkv * b)), krow = r->DK * (m + r->M * (hk + r->Hkv * b));
            const int64_t qrow = r->DK * (n + r->N * (h + r->H * b));
            double dp = 0;
            for (int64_t f = 0; f < r->DV; f++) dp += rnd(r->round, w[row + f]) * rnd(r->round, r->v[vrow + f]);
            const double ds = pm * (dp - D);
            for (int64_t f = 0; f < r->DV; f++) dv[vrow + f] += rnd(r->round, pm) * rnd(r->round, w[row + f]);
            for (int64_t d = 0; d < r->DK; d++) {
                dk[krow + d] += r->scale * rnd(r->round, ds) * rnd(r->round, r->q[qrow + d]);
                dq[qrow + d] += r->scale * rnd(r->round, ds) * rnd(r->round, r->k[krow + d]);
            }
        }
    }
    free(out);
    free(s);
}

/* rows n of mask [M, N] hide keys m > n + M - N (causal, the last query sees every key) */
static void f_causal(double * v, const int64_t ne[4]) {
    for (int64_t n = 0; n < ne[1]; n++)
        for (int64_t m = 0; m < ne[0]; m++) v[m + ne[0] * n] = m > n + ne[0] - ne[1] ? -INFINITY : v[m + ne[0] * n];
}

/* |relative 2-norm error| of x against ref */
static double rel_err(const double * x, const double * ref, int64_t n) {
    double e = 0, r = 0;
    for (int64_t i = 0; i < n; i++) { e += (x[i] - ref[i]) * (x[i] - ref[i]); r += ref[i] * ref[i]; }
    return sqrt(e / r);
}

/* The bf16 path against its reference and against the unrounded one (which
 * must be off by far more than the tolerance), forward and backward. */
static void check_case(int64_t DK, int64_t DV, int64_t N, int64_t M, int64_t H, int64_t Hkv, int64_t B) {
    struct ggml_context * ctx = tc_ctx(64);
    struct ggml_tensor * in[4] = {ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DK, N, H, B), ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DK, M, Hkv, B),
                                  ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DV, M, Hkv, B), ggml_new_tensor_4d(ctx, GGML_TYPE_F32, M, N, 1, 1)};
    double * host[4];
    for (int i = 0; i < 4; i++) {
        tc_fill_uniform(in[i], i == 3 ? -2 : -1, i == 3 ? 2 : 1);
        host[i] = malloc((size_t) ggml_nelements(in[i]) * sizeof(double));
        for (int64_t j = 0; j < ggml_nelements(in[i]); j++) host[i][j] = tc_get(in[i], j);
    }
    const int64_t mne[4] = {M, N, 1, 1};
    f_causal(host[3], mne);
    for (int64_t j = 0; j < M * N; j++) ((float *) in[3]->data)[j] = (float) host[3][j];
    for (int i = 0; i < 3; i++) ggml_set_param(in[i]);
    struct ggml_tensor * y = b_fa(ctx, in, &p_bf16_mask), * w = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, y->ne);
    tc_fill_uniform(w, -1, 1);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, y, w));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 256, true);
    ggml_build_forward_expand(g, loss);
    if (!CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "bf16 attention: backward: %s", ggml_last_error())) return;
    ggml_graph_reset(g);
    tc_compute(ctx, g, 2);
    const int64_t ne[4][4] = {{DK, N, H, B}, {DK, M, Hkv, B}, {DV, M, Hkv, B}, {M, N, 1, 1}};
    const int64_t n_of[4] = {ggml_nelements(y), DK * N * H * B, DK * M * Hkv * B, DV * M * Hkv * B};
    double * want[2][4], * got[4];
    double * wv = malloc((size_t) n_of[0] * sizeof(double));
    for (int64_t j = 0; j < n_of[0]; j++) wv[j] = tc_get(w, j);
    for (int i = 0; i < 4; i++) {
        got[i] = malloc((size_t) n_of[i] * sizeof(double));
        const struct ggml_tensor * t = i == 0 ? y : ggml_graph_get_grad(g, in[i - 1]);
        for (int64_t j = 0; j < n_of[i]; j++) got[i][j] = tc_get(t, j);
    }
    for (int round = 0; round < 2; round++) {
        const struct fa_ref r = ref_of((const double * const *) host, ne, &p_bf16_mask, round);
        for (int i = 0; i < 4; i++) want[round][i] = malloc((size_t) n_of[i] * sizeof(double));
        forward(&r, want[round][0]);
        backward(&r, wv, want[round][1], want[round][2], want[round][3]);
    }
    static const char * const names[4] = {"out", "dq", "dk", "dv"};
    static const double tol[4] = {2e-4, 3e-4, 3e-4, 3e-4};
    for (int i = 0; i < 4; i++) {
        const double e_rounded = rel_err(got[i], want[1][i], n_of[i]), e_plain = rel_err(got[i], want[0][i], n_of[i]);
        printf("bf16 attention %s: relative error %.2g against the rounded reference, %.2g against the unrounded one\n", names[i], e_rounded,
               e_plain);
        CHECK(e_rounded <= tol[i], "bf16 attention %s: error %.3g against the rounded reference (tolerance %.3g)", names[i], e_rounded, tol[i]);
        CHECK(e_plain > 4 * tol[i], "bf16 attention %s: error %.3g against the unrounded reference, not far past the tolerance %.3g",
              names[i], e_plain, tol[i]);
        for (int round = 0; round < 2; round++) free(want[round][i]);
        free(got[i]);
        free(host[i]);
    }
    free(wv);
    ggml_free(ctx);
}

static void check_refs(void) {
    if (strcmp(ggml_cpu_bf16_name(), "f32") == 0) return;  /* nothing rounds here */
    check_case(48, 40, 37, 150, 2, 1, 1);
    check_case(32, 32, 70, 150, 2, 2, 2);
    check_case(64, 64, 50, 300, 1, 1, 1);  /* tiles of 128 keys */
}

#define IN(D0, D1, D2, D3, LAYOUT) {.ne = {D0, D1, D2, D3}, .lo = -1, .hi = 1, .layout = LAYOUT}
#define MASK(M, N)                 {.ne = {M, N, 1, 1}, .lo = -2, .hi = 2, .fixed = true, .fill = f_causal}
/* q, k, v in every layout; NIN 4: with the mask (P's mask field set), 3: without */
#define FWD(P, NIN, WHAT, DK, DV, N, M, H, HKV, B)                                                                                  \
    {.op = "FLASH_ATTN_EXT", .variant = WHAT, .build = b_fa, .params = &P, .n_in = NIN,                                  \
     .in = {IN(DK, N, H, B, OPS_ANY_LAYOUT), IN(DK, M, HKV, B, OPS_ANY_LAYOUT), IN(DV, M, HKV, B, OPS_ANY_LAYOUT), MASK(M, N)}, \
     .shape = s_fa, .ref = r_fa, .tol = 2e-4}
/* finite differences of the rounded forward: each evaluation re-rounds every
 * P of the rows a step touches, ~1e-3 of the loss; step 0.15 and atol 2e-2 allow that */
#define GRAD(P, NIN, WHAT, DK, DV, N, M, H, HKV)                                                                                    \
    {.op = "FLASH_ATTN_EXT", .variant = WHAT, .build = b_fa, .params = &P, .n_in = NIN,                                  \
     .in = {IN(DK, N, H, 1, 0), IN(DK, M, HKV, 1, 0), IN(DV, M, HKV, 1, 0), MASK(M, N)}, .shape = s_fa, .ref = r_fa, .tol = 2e-4, \
     .grad = OPS_GRAD, .fd_eps = 0.15, .fd_atol = 2e-2, .fd_rtol = 5e-2}

static const struct ops_row rows[] = {
    FWD(p_bf16, 3, "bf16, one key tile, GQA 2:1", 64, 64, 20, 50, 2, 1, 1),
    FWD(p_bf16_mask, 4, "bf16, causal, 3 key tiles, 3 query blocks, 2 batches", 32, 32, 70, 150, 2, 2, 2),
    FWD(p_bf16_mask, 4, "bf16, causal, DK 40 != DV 24 (padded), odd rows", 40, 24, 9, 130, 3, 1, 1),
    FWD(p_bf16_mask, 4, "bf16, D 128, a partial last tile", 128, 128, 30, 100, 1, 1, 1),
    FWD(p_bf16, 3, "bf16, N = M = 1", 16, 8, 1, 1, 1, 1, 1),
    FWD(p_bf16_mask, 4, "bf16, causal, tiles of 128 keys", 64, 64, 40, 300, 1, 1, 1),
    {.op = "FLASH_ATTN_EXT", .variant = "bf16, K and V F16", .build = b_fa, .params = &p_bf16_mask, .n_in = 4,
     .in = {IN(32, 20, 2, 1, 0), {.ne = {32, 90, 1, 1}, .lo = -1, .hi = 1, .type = GGML_TYPE_F16},
            {.ne = {24, 90, 1, 1}, .lo = -1, .hi = 1, .type = GGML_TYPE_F16}, MASK(90, 20)},
     .shape = s_fa, .ref = r_fa, .tol = 2e-4},
    FWD(p_f32_mask, 4, "f32 (nothing rounded), causal", 40, 24, 9, 130, 3, 1, 1),
    GRAD(p_bf16, 3, "bf16 gradient", 16, 8, 7, 9, 2, 1),
    GRAD(p_bf16_mask, 4, "bf16 gradient, causal, 2 key tiles", 8, 8, 5, 70, 1, 1),
    {.op = "FLASH_ATTN_EXT", .variant = "ALiBi at bf16", .build = b_fa, .params = &p_alibi, .n_in = 4,
     .in = {IN(8, 3, 2, 1, 0), IN(8, 5, 1, 1, 0), IN(8, 5, 1, 1, 0), {.ne = {5, 3, 1, 1}, .lo = -1, .hi = 1, .fixed = true}},
     .shape = s_fa, .ref = r_fa, .tol = 2e-4, .grad = OPS_REFUSED, .refusal = "ALiBi"},
};

const struct ops_family ops_flash_attn = {"flash_attn", rows, sizeof rows / sizeof rows[0], check_refs, NULL};

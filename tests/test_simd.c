/* test_simd.c -- the run-time SIMD choice and the vector code behind it, on
 * the path this CPU gets (ctest runs it again with GGMLR_SIMD=scalar and
 * GGMLR_SIMD=avx2):
 *  - the dot product (flash attention's backward) for every length 1..70,
 *    so every tail of its 16- and 64-wide loops, on aligned and unaligned rows;
 *  - the scores of a query row against k keys (dot_rows) for k = 1..20 (every
 *    tail of its 8-row blocks), lengths 1..20 and up to 64, packed and strided;
 *  - mul_mat's packed-panel tiles for every M 1..70 (every tail of the 8-,
 *    16- and 64-column panels), N 1..13 (tails of the 6-row groups) and K
 *    up to past the 256-long reduction block, with aligned, unaligned and
 *    gathered (transposed) rows, and one shape too large for a task to run
 *    every panel;
 *  - the attention exponential (tile_exp_rows) against exp() in double over
 *    [-90, 0] and at -Inf, NaN and the underflow edge, with the row sums;
 *  - the attention backward's products with the softmax (P, dS) in their
 *    epilogue, on whole and half tiles, masked keys and a row that attends
 *    nothing;
 *  - the 8-row transpose that packs GEMM operands, for every length 1..40
 *    (tails of its 8-column blocks), bit for bit, and the F16 mask scan of
 *    fused attention against a one-by-one scan, for every length 1..100 and
 *    every position of the last live element;
 *  - the fp16 row converters for every length 0..70 (tails of the 8-wide
 *    F16C loop), bit for bit against the scalar one-value converters, and
 *    that GGMLR_SIMD=scalar turns F16C off;
 *  - GLU's non-temporal-store rows against its plain ones, bit for bit.
 *
 * Bound per sum of K products: |c - ref| <= K 2^-23 sum_k |a_k b_k|, twice the
 * classical float summation bound gamma_K = K u / (1 - K u), u = 2^-24. With
 * |a|, |b| in [0.5, 1] every product is >= 0.25, far above the bound (<=
 * 513^2 2^-23 for the largest K here, about 0.03), so a dropped, repeated or
 * misplaced element always fails. */
#include "common/test_common.h"

#include "cpu/simd/vec.h"  /* internal: the chosen primitives */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

static float rand_val(void) { const float v = (float) tc_uniform(0.5, 1); return (tc_next() & 1) ? v : -v; }

static void test_name(void) {
    const char * name = ggml_cpu_simd_name();
    CHECK(name && (!strcmp(name, "avx512") || !strcmp(name, "avx2") || !strcmp(name, "scalar")), "simd name '%s'", name ? name : "(null)");
    const char * want = getenv("GGMLR_SIMD");
    if (want && !strcmp(want, "scalar")) CHECK(!strcmp(name, "scalar"), "GGMLR_SIMD=scalar selects scalar (got %s)", name);
    if (want && !strcmp(want, "avx2")) CHECK(!strcmp(name, "avx2") || !strcmp(name, "scalar"), "GGMLR_SIMD=avx2 never selects avx512 (got %s)", name);
    printf("SIMD path: %s\n", name);
}

/* dot of n values starting `shift` floats into their buffers (unaligned for odd shifts). */
static void check_dot(int64_t n, int shift) {
    float x[80], y[80];
    for (int i = 0; i < 80; i++) { x[i] = rand_val(); y[i] = rand_val(); }
    double ref = 0, mag = 0;
    for (int64_t k = 0; k < n; k++) {
        ref += (double) x[shift + k] * y[shift + k];
        mag += fabs((double) x[shift + k] * y[shift + k]);
    }
    const double got = ggmlr_vec()->dot(n, x + shift, y + shift);
    CHECK(fabs(got - ref) <= (double) n * 0x1p-23 * mag, "dot n=%lld shift %d: %.9g, want %.9g", (long long) n, shift, got, ref);
}

/* dot_rows: k rows of n values, row stride ld >= n, x and the rows starting
 * `shift` floats in (unaligned for odd shifts); every y[m] against float64,
 * and nothing written past y[k - 1]. */
static void check_dot_rows(int64_t n, int64_t k, int64_t ld, int shift) {
    float x[80], rows[20 * 80 + 1], y[21];
    for (int i = 0; i < 80; i++) x[i] = rand_val();
    for (int i = 0; i < 20 * 80 + 1; i++) rows[i] = rand_val();
    for (int i = 0; i < 21; i++) y[i] = 12345.0f;
    ggmlr_vec()->dot_rows(n, k, x + shift, rows + shift, ld, y);
    for (int64_t m = 0; m < k; m++) {
        double ref = 0, mag = 0;
        for (int64_t f = 0; f < n; f++) {
            ref += (double) x[shift + f] * rows[shift + m * ld + f];
            mag += fabs((double) x[shift + f] * rows[shift + m * ld + f]);
        }
        CHECK(fabs(y[m] - ref) <= (double) n * 0x1p-23 * mag, "dot_rows n=%lld k=%lld ld=%lld shift %d: y[%lld] = %.9g, want %.9g",
              (long long) n, (long long) k, (long long) ld, shift, (long long) m, y[m], ref);
    }
    for (int64_t m = k; m < 21; m++) CHECK(y[m] == 12345.0f, "dot_rows n=%lld k=%lld wrote y[%lld]", (long long) n, (long long) k, (long long) m);
}

/* c = a^T b for a [K, M], b [K, N], b's rows starting `shift` floats into a
 * larger tensor (unaligned for odd shifts); a transposed when `ta`. */
static void check_mul_mat(int64_t K, int64_t M, int64_t N, int shift, bool ta) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * abase = ta ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, M, K) : ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor * bbase = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, K * N + shift);
    for (int64_t i = 0; i < ggml_nelements(abase); i++) ((float *) abase->data)[i] = rand_val();
    for (int64_t i = 0; i < ggml_nelements(bbase); i++) ((float *) bbase->data)[i] = rand_val();
    struct ggml_tensor * a = ta ? ggml_transpose(ctx, abase) : abase;
    struct ggml_tensor * b = ggml_view_2d(ctx, bbase, K, N, (size_t) K * sizeof(float), (size_t) shift * sizeof(float));
    struct ggml_tensor * c = ggml_mul_mat(ctx, a, b);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_expand(g, c);
    tc_poison(c);
    if (!CHECK(ggml_graph_compute_with_ctx(ctx, g, 2) == GGML_STATUS_SUCCESS, "compute K=%lld: %s", (long long) K, ggml_last_error())) {
        ggml_free(ctx);
        return;
    }
    const float * A = abase->data, * B = (const float *) bbase->data + shift;
    int bad = 0;
    for (int64_t j = 0; j < N; j++)
        for (int64_t i = 0; i < M; i++) {
            double ref = 0, mag = 0;
            for (int64_t k = 0; k < K; k++) {
                const double x = ta ? A[k * M + i] : A[i * K + k];
                ref += x * B[j * K + k];
                mag += fabs(x * B[j * K + k]);
            }
            const double got = ggml_get_f32_nd(c, (int) i, (int) j, 0, 0);
            if (!(fabs(got - ref) <= (double) K * 0x1p-23 * mag)) {
                if (bad < 3) fprintf(stderr, "  K=%lld M=%lld N=%lld shift=%d ta=%d c[%lld,%lld] = %.9g, want %.9g\n", (long long) K,
                                     (long long) M, (long long) N, shift, ta, (long long) i, (long long) j, got, ref);
                bad++;
            }
        }
    CHECK(bad == 0, "mul_mat K=%lld M=%lld N=%lld (b shift %d, a %s): %d of %lld outputs off", (long long) K, (long long) M,
          (long long) N, shift, ta ? "transposed" : "contiguous", bad, (long long) (M * N));
    ggml_free(ctx);
}

/* Row converters against the one-value converters, for every length 0..70,
 * on values that cover rounding, overflow, subnormals, Inf and NaN. */
/* GLU's non-temporal stores (act_impl.h, for results larger than the cache)
 * give the same bits as its plain stores, for every act and SWIGLU_OAI, every
 * length 1..150 (tails of the 8-, 16- and 64-wide loops), on an aligned y
 * and on y 1, 3 and 15 floats past alignment (its first vector stored
 * plainly, then streamed from the next aligned element). Each result
 * starts as a different poison, so an element a loop skips shows. */
static void check_glu_stream(void) {
    enum { N = 150 };
    static const int acts[] = {GGML_UNARY_OP_RELU, GGML_UNARY_OP_GELU, GGML_UNARY_OP_GELU_QUICK, GGML_UNARY_OP_GELU_ERF,
                               GGML_UNARY_OP_SILU, -1 /* SWIGLU_OAI */};
    float x[N], g[N];
    _Alignas(64) float plain[N + 16], streamed[N + 16];
    for (int i = 0; i < N; i++) { x[i] = (float) tc_uniform(-12, 12); g[i] = (float) tc_uniform(-3, 3); }
    int bad = 0;
    for (int a = 0; a < (int) (sizeof acts / sizeof acts[0]); a++)
        for (int64_t n = 1; n <= N; n++)
            for (int k = 0; k < 4; k++) {
                static const int shifts[4] = {0, 1, 3, 15};
                for (int i = 0; i < N + 16; i++) { plain[i] = -1.0f; streamed[i] = -2.0f; }
                float * yp = plain + shifts[k], * ys = streamed + shifts[k];
                if (acts[a] < 0) {
                    ggmlr_vec()->oai(n, x, g, 1.702f, 7.0f, yp, false);
                    ggmlr_vec()->oai(n, x, g, 1.702f, 7.0f, ys, true);
                } else {
                    ggmlr_vec()->glu(acts[a], n, x, g, yp, false);
                    ggmlr_vec()->glu(acts[a], n, x, g, ys, true);
                }
                if (memcmp(yp, ys, (size_t) n * sizeof(float)) != 0 || ys[n] != -2.0f) bad++;
            }
    CHECK(bad == 0, "GLU streamed rows: %d of %d differ from the plain stores", bad, 6 * N * 4);
}

/* copy_stream (IM2COL's streamed rows) gives x's bits, for every length
 * 0..150 and y 0, 1, 3 and 15 floats past alignment (head, streamed
 * vectors, tail); y starts as a poison, so an element it skips or writes
 * past the end shows. */
static void check_copy_stream(void) {
    enum { N = 150 };
    float x[N];
    _Alignas(64) float y[N + 16];
    for (int i = 0; i < N; i++) x[i] = (float) tc_uniform(-3, 3);
    x[7] = __builtin_nanf("0x123");  /* a NaN's payload is copied too */
    int bad = 0;
    for (int64_t n = 0; n <= N; n++)
        for (int k = 0; k < 4; k++) {
            static const int shifts[4] = {0, 1, 3, 15};
            for (int i = 0; i < N + 16; i++) y[i] = -2.0f;
            float * ys = y + shifts[k];
            ggmlr_vec()->copy_stream(n, x, ys);
            ggmlr_vec()->stream_fence();
            if (memcmp(x, ys, (size_t) n * sizeof(float)) != 0 || ys[n] != -2.0f || (shifts[k] > 0 && y[shifts[k] - 1] != -2.0f)) bad++;
        }
    CHECK(bad == 0, "copy_stream: %d of %d rows differ from x or write outside y", bad, (N + 1) * 4);
}

static void check_fp16_rows(void) {
    static const float specials[] = {0.0f, -0.0f, 1.0f, 65504.0f, 65520.0f, -1e10f, 0x1p-24f, 0x1p-25f, 0x1.8p-24f,
                                     0x1.ffcp-15f, 0x1.002p0f, INFINITY, -INFINITY, NAN, -NAN, 3.14159265f};
    enum { L = 70, NS = sizeof specials / sizeof specials[0] };
    float x[L + 1];
    uint16_t h[L + 1];
    for (int i = 0; i <= L; i++) {
        x[i] = i % 3 == 0 ? specials[(i / 3) % NS] : (float) tc_uniform(-70000, 70000) * (float) (i % 2 ? 1e-6 : 1);
        h[i] = (uint16_t) tc_next();
    }
    int bad_to16 = 0, bad_to32 = 0;
    for (int n = 0; n <= L; n++) {
        uint16_t out16[L + 1];
        float out32[L + 1];
        for (int i = 0; i <= L; i++) { out16[i] = 0xdead; out32[i] = -7.0f; }  /* past n must stay untouched */
        ggml_fp32_to_fp16_row(x, out16, n);
        ggml_fp16_to_fp32_row(h, out32, n);
        for (int i = 0; i <= L; i++) {
            const uint16_t want16 = i < n ? ggml_fp32_to_fp16(x[i]) : 0xdead;
            const float want32 = i < n ? ggml_fp16_to_fp32(h[i]) : -7.0f;
            bad_to16 += out16[i] != want16;
            bad_to32 += memcmp(&out32[i], &want32, sizeof want32) != 0;
        }
    }
    CHECK(bad_to16 == 0, "ggml_fp32_to_fp16_row: %d values differ from ggml_fp32_to_fp16 (lengths 0..%d)", bad_to16, L);
    CHECK(bad_to32 == 0, "ggml_fp16_to_fp32_row: %d values differ from ggml_fp16_to_fp32 (lengths 0..%d)", bad_to32, L);

    const char * want = getenv("GGMLR_SIMD");
    const struct ggmlr_vec_ops * vec = ggmlr_vec();
    if (want && !strcmp(want, "scalar"))
        CHECK(vec->fp16_to_fp32_row == ggmlr_fp16_to_fp32_row_scalar && vec->fp32_to_fp16_row == ggmlr_fp32_to_fp16_row_scalar,
              "GGMLR_SIMD=scalar: the fp16 row converters are the scalar ones (no F16C)");
#if defined(__x86_64__)
    /* every x86 path past scalar has F16C, and converts with it */
    if (strcmp(vec->name, "scalar") != 0)
        CHECK(vec->fp16_to_fp32_row != ggmlr_fp16_to_fp32_row_scalar && vec->fp32_to_fp16_row != ggmlr_fp32_to_fp16_row_scalar,
              "the %s path converts fp16 rows with F16C", vec->name);
#endif
}

/* s := exp(s - shift) on rows of 64: relative error <= 4e-7 + 1.2e-7 |x| for
 * x = s - shift (the polynomial's 2e-7 and the last rounding, plus the float
 * rounding of x log2(e), an error of |x| log2(e) 2^-24 in the exponent, that
 * is |x| 2^-24 relative, twice over for the rounding of x); exactly 0 below
 * 2^-126 (e^-87.34), NaN for NaN, and each row's sum. */
static void check_exp_rows(void) {
    enum { ROWS = 3, N = 64 };
    float s[ROWS * N], in[ROWS * N], shift[ROWS] = {0.0f, 1.5f, -INFINITY}, sum[ROWS];
    for (int i = 0; i < ROWS * N; i++) in[i] = (float) tc_uniform(-90, 0);
    in[0] = 0.0f; in[1] = -INFINITY; in[2] = -87.0f; in[3] = -88.0f;
    in[N] = NAN;
    memcpy(s, in, sizeof s);
    ggmlr_vec()->tile_exp_rows(ROWS, N, N, s, shift, sum);
    CHECK(s[0] == 1.0f && s[1] == 0.0f && s[2] > 0.0f && s[3] == 0.0f, "exp edges: exp(0) %g, exp(-Inf) %g, exp(-87) %g, exp(-88) %g",
          s[0], s[1], s[2], s[3]);
    CHECK(isnan(s[N]) && isnan(sum[1]), "exp(NaN) %g, the row's sum %g: NaN wanted", s[N], sum[1]);
    int bad = 0;
    double total = 0;
    for (int i = 0; i < N; i++) {
        const double x = (double) in[i] - shift[0], want = x < -126.0 * log(2.0) ? 0.0 : exp(x);
        total += s[i];
        if (i != 2 && (want == 0.0 ? s[i] != 0.0f : fabs(s[i] - want) > (4e-7 + 1.2e-7 * fabs(x)) * want)) bad++;
    }
    for (int i = N + 1; i < 2 * N; i++) {
        const double x = (double) in[i] - shift[1];
        if (x > -80.0 && fabs(s[i] - exp(x)) > (4e-7 + 1.2e-7 * fabs(x)) * exp(x)) bad++;
    }
    CHECK(bad == 0, "exp rows: %d values outside the error bound", bad);
    CHECK(fabs(sum[0] - total) <= 1e-6 * total, "exp row sum %.9g, want %.9g", sum[0], total);
    int nonzero = 0;
    for (int i = 2 * N; i < 3 * N; i++) nonzero += s[i] != 0.0f;
    CHECK(nonzero == 0 && sum[2] == 0.0f, "a row with shift -Inf: %d nonzero values, sum %g", nonzero, sum[2]);
}

/* Attention backward's products with the softmax in their epilogue, on 6
 * rows x tile_c (or tile_c / 2) columns, against double:
 *   gemm_6xc_p:  P = exp((S + mask - mx) - lsum),  S = sum_k a[r][k] b[k][j]
 *   gemm_6xc_ds: dS = p (dP - D),                   dP likewise, p given
 * Bounds: S and dP off by at most K 2^-23 sum_k |a b| (as for mul_mat), x =
 * S + mask - mx - lsum by that plus three roundings; P relative to the
 * exponential's bound (check_exp_rows) at that error in x. A mask of -Inf and
 * a row with mx = -Inf give exactly 0; columns past the width stay untouched. */
static void check_softmax_tiles(int64_t K, bool half) {
    enum { R = GGMLR_TILE_R, KMAX = 70, LMAX = 64 + 5 };
    const struct ggmlr_vec_ops * vec = ggmlr_vec();
    const int64_t W = half ? vec->tile_c / 2 : vec->tile_c, ldb = vec->tile_c + 1, ldc = vec->tile_c + 5;
    static float rows[R][KMAX], b[KMAX * LMAX], mask[R * LMAX], p[R * LMAX], c[R * LMAX];
    float mx[R], lsum[R], D[R];
    const float * a[R];
    for (int r = 0; r < R; r++) {
        for (int64_t k = 0; k < K; k++) rows[r][k] = 0.25f * rand_val();
        a[r] = rows[r];
        lsum[r] = (float) tc_uniform(0, 3);
        D[r] = rand_val();
    }
    for (int64_t i = 0; i < K * ldb; i++) b[i] = 0.25f * rand_val();
    for (int64_t i = 0; i < R * ldc; i++) {
        const uint32_t u = tc_next() % 4;
        mask[i] = u == 0 ? -INFINITY : u == 1 ? 0.0f : (float) tc_uniform(-1, 1);
        p[i] = (float) tc_uniform(0, 1);
    }
    /* rows' S in double; mx near each row's largest score, row 3 attends nothing */
    static double S[R][LMAX], mag[R][LMAX];
    for (int r = 0; r < R; r++) {
        double top = -1e30;
        for (int64_t j = 0; j < W; j++) {
            S[r][j] = mag[r][j] = 0;
            for (int64_t k = 0; k < K; k++) {
                S[r][j] += (double) a[r][k] * b[k * ldb + j];
                mag[r][j] += fabs((double) a[r][k] * b[k * ldb + j]);
            }
            top = S[r][j] > top ? S[r][j] : top;
        }
        mx[r] = r == 3 ? -INFINITY : (float) top;
    }
    for (int64_t i = 0; i < R * ldc; i++) c[i] = 99.0f;
    vec->gemm_6xc_p(half, K, a, b, ldb, c, ldc, mask, mx, lsum);
    int bad = 0, untouched = 0;
    for (int r = 0; r < R; r++)
        for (int64_t j = 0; j < ldc; j++) {
            const float got = c[r * ldc + j];
            if (j >= W) { untouched += got != 99.0f; continue; }
            const double m = mask[r * ldc + j];
            if (r == 3 || m == -INFINITY) { bad += got != 0.0f; continue; }
            const double x = S[r][j] + m - mx[r] - lsum[r], want = exp(x);
            const double ex = K * 0x1p-23 * mag[r][j] + 3 * 0x1p-24 * (fabs(S[r][j]) + fabs(m) + fabs(mx[r]) + lsum[r]);
            if (!(fabs(got - want) <= (ex * 1.01 + 4e-7 + 1.2e-7 * fabs(x)) * want)) bad++;
        }
    CHECK(bad == 0 && untouched == 0, "gemm_6xc_p K=%lld %s: %d values off, %d written past the width", (long long) K,
          half ? "half" : "whole", bad, untouched);
    for (int64_t i = 0; i < R * ldc; i++) c[i] = 99.0f;
    vec->gemm_6xc_ds(half, K, a, b, ldb, c, ldc, p, mx, D);
    bad = untouched = 0;
    for (int r = 0; r < R; r++)
        for (int64_t j = 0; j < ldc; j++) {
            const float got = c[r * ldc + j];
            if (j >= W) { untouched += got != 99.0f; continue; }
            if (r == 3) { bad += got != 0.0f; continue; }
            const double pv = p[r * ldc + j], want = pv * (S[r][j] - D[r]);
            const double ex = pv * (K * 0x1p-23 * mag[r][j] + 0x1p-24 * (fabs(S[r][j]) + fabs(D[r]))) + 0x1p-24 * fabs(want);
            if (!(fabs(got - want) <= ex * 1.01 + 1e-30)) bad++;
        }
    CHECK(bad == 0 && untouched == 0, "gemm_6xc_ds K=%lld %s: %d values off, %d written past the width", (long long) K,
          half ? "half" : "whole", bad, untouched);
}

/* dst[i * ldd + r] = mul * src[r * lds + i]: exact (one rounding, as here),
 * and nothing written past the 8 columns of each destination row */
static void check_transpose8(int64_t n) {
    enum { LDS = 45, LDD = 11 };
    float src[8 * LDS], dst[40 * LDD];
    for (int i = 0; i < 8 * LDS; i++) src[i] = rand_val();
    for (int i = 0; i < 40 * LDD; i++) dst[i] = 99.0f;
    const float mul = 0.3f;
    ggmlr_vec()->transpose8(n, src + 1, LDS, mul, dst, LDD);
    int bad = 0;
    for (int64_t i = 0; i < 40; i++)
        for (int r = 0; r < LDD; r++) {
            const float want = i < n && r < 8 ? mul * src[1 + r * LDS + i] : 99.0f;
            bad += dst[i * LDD + r] != want;
        }
    CHECK(bad == 0, "transpose8 n=%lld: %d elements wrong", (long long) n, bad);
}

/* scan_f16_mask on x[0, n) against the definition, element by element */
static void check_mask_scan_case(const uint16_t * x, int64_t n, const char * what) {
    bool ai = true, az = true;
    int64_t live = 0;
    for (int64_t i = 0; i < n; i++) {
        ai = ai && x[i] == 0xFC00;
        az = az && (x[i] & 0x7FFF) == 0;
        if (x[i] != 0xFC00) live = i + 1;
    }
    bool got_ai = !ai, got_az = !az;
    const int64_t got = ggmlr_vec()->scan_f16_mask(n, x, &got_ai, &got_az);
    CHECK(got_ai == ai && got_az == az && got == live, "mask scan (%s, n=%lld): all -Inf %d/%d, all zero %d/%d, live %lld/%lld wanted",
          what, (long long) n, got_ai, ai, got_az, az, (long long) got, (long long) live);
}

static void check_mask_scan(int64_t n) {
    uint16_t x[101];
    const uint16_t zeros[2] = {0x0000, 0x8000}, inf = 0xFC00;
    for (int64_t i = 0; i < n; i++) x[i] = inf;
    check_mask_scan_case(x + 1, n, "all -Inf");
    for (int64_t i = 0; i <= n; i++) x[i] = zeros[tc_next() & 1];
    check_mask_scan_case(x + 1, n, "all +-0");
    static const uint16_t values[4] = {0x3C00, 0xBC00, 0x0001, 0x8001};  /* +-1, +-the least subnormal */
    x[1 + tc_next() % n] = values[tc_next() % 4];  /* neither all -Inf nor all zero */
    check_mask_scan_case(x + 1, n, "one value");
    /* causal rows: live up to `last`, -Inf after; and a lone live element amid -Inf */
    for (int64_t last = 0; last < n; last++) {
        for (int64_t i = 0; i <= n; i++) x[i] = i <= last + 1 ? zeros[i & 1] : inf;
        check_mask_scan_case(x + 1, n, "causal");
        for (int64_t i = 0; i <= n; i++) x[i] = inf;
        x[1 + last] = values[last % 4];
        check_mask_scan_case(x + 1, n, "one live");
    }
}

int main(void) {
    tc_seed(70);
    for (int64_t n = 1; n <= 40; n++) check_transpose8(n);
    for (int64_t n = 1; n <= 100; n++) check_mask_scan(n);
    check_exp_rows();
    static const int64_t softmax_k[] = {1, 7, 64, 70};
    for (int i = 0; i < 4; i++) {
        check_softmax_tiles(softmax_k[i], false);
        check_softmax_tiles(softmax_k[i], true);
    }
    test_name();
    for (int64_t n = 1; n <= 70; n++) {
        check_dot(n, 0);
        check_dot(n, 1);
    }
    for (int64_t n = 1; n <= 70; n += (n < 20 ? 1 : 7))  /* every tail of the 16-wide loop; rows 1..20: every tail of the 8-row blocks */
        for (int64_t k = 1; k <= 20; k++) {
            check_dot_rows(n, k, n, 0);
            check_dot_rows(n, k, n + 9, 1);
        }
    for (int64_t M = 1; M <= 70; M++) {
        const int64_t K = 1 + (M * 7) % 40, N = 1 + M % 13;
        check_mul_mat(K, M, N, 0, false);
        check_mul_mat(K, M, N, 1, false);
        check_mul_mat(K, M, N, 3, true);
    }
    static const int64_t long_k[] = {255, 256, 257, 513};  /* around the reduction block */
    for (int i = 0; i < 4; i++) {
        check_mul_mat(long_k[i], 17, 7, 1, false);
        check_mul_mat(long_k[i], 65, 13, 3, true);
    }
    /* P's plane past 128 Ki floats: tasks of one panel each (smaller ones run every panel) */
    check_mul_mat(513, 300, 13, 1, false);
    check_mul_mat(513, 300, 13, 3, true);
    check_fp16_rows();
    check_glu_stream();
    check_copy_stream();
    return tc_finish("simd");
}

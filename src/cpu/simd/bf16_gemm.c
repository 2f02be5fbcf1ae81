/* bf16_gemm.c -- bf16_gemm.h: the path (CPUID; for AMX also XCR0 and the
 * kernel's permission for the tile data), packing with the F32 -> bf16
 * rounding of AVX512_BF16 (vcvtne[2]ps2bf16: round to nearest even, NaN
 * kept), and the two micro-kernels:
 *   avx512_bf16: 8 rows x 32 columns in 16 accumulators per pass, four
 *                passes; per pair of k, two vnni rows loaded, one pair of
 *                each row broadcast, 16 VDPBF16PS;
 *   amx:         tiles 0..3 hold the 32 x 32 accumulators, 4..5 the two
 *                16-row slices of the rows side, 6..7 the two 16-column
 *                slices of the vnni side; each 32-wide step of the
 *                reduction is four TDPBF16PS, every operand tile used twice. */
#define _GNU_SOURCE  /* syscall() */
#include "cpu/simd/bf16_gemm.h"

#include "cpu/simd/vec.h"
#include "ggml-cpu.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

static const char * path;
static bool tiles;  /* path is "amx" */

/* the OS grants the tile state (XCR0) and Linux hands it out on request, once per process (else SIGILL) */
static bool amx_usable(void) {
    unsigned a, b, c, d;
    __cpuid_count(7, 0, a, b, c, d);
    if (!((d >> 24) & 1) || !((d >> 22) & 1)) return false;  /* AMX-TILE, AMX-BF16 */
    __cpuid(1, a, b, c, d);
    if (!((c >> 27) & 1)) return false;  /* OSXSAVE: xgetbv is allowed */
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if (((lo >> 17) & 3) != 3) return false;  /* XTILECFG and XTILEDATA */
    return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
}

static void detect(void) {
    if (strcmp(ggmlr_vec()->name, "avx512") != 0 || !ggml_cpu_has_avx512_bf16() || !__builtin_cpu_supports("avx512bw")) return;
    if (__get_cpuid_max(0, NULL) < 7) return;
    const char * env = getenv("GGMLR_AMX");
    tiles = env && strcmp(env, "1") == 0 && amx_usable();
    path = tiles ? "amx" : "avx512_bf16";
}

const char * ggmlr_bf16_path(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, detect);
    return path;
}

#define T_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#define T_AMX __attribute__((target("amx-tile,amx-bf16,avx512f")))

/* n (<= 16) floats to bf16, the rest of the 16 zero */
static T_BF16 inline __m256i bf16x16(const float * x, int64_t n) {
    const __m512 v = n >= 16 ? _mm512_loadu_ps(x) : _mm512_maskz_loadu_ps((__mmask16) ((1u << n) - 1), x);
    return (__m256i) _mm512_cvtneps_pbh(v);
}

/* one row of K floats to bf16, zero up to Kp */
static T_BF16 void row_to_bf16(uint16_t * out, const float * x, int64_t K, int64_t Kp) {
    int64_t k = 0;
    for (; k < K; k += 16) _mm256_storeu_si256((__m256i *) (out + k), bf16x16(x + k, K - k));
    for (; k < Kp; k += 16) _mm256_storeu_si256((__m256i *) (out + k), _mm256_setzero_si256());
}

/* rows r < nr of v as F32 rows in tmp (stride Kp), or a pointer to them in place */
static const float * f32_row(const struct ggmlr_bf16_view * v, int64_t r, int64_t K, float * tmp) {
    const char * p = v->base + (size_t) r * v->rs;
    if (v->ks == sizeof(float)) return (const float *) p;
    for (int64_t k = 0; k < K; k++) tmp[k] = *(const float *) (p + (size_t) k * v->ks);
    return tmp;
}

void ggmlr_bf16_pack_rows(uint16_t * out, const struct ggmlr_bf16_view * v, int64_t r0, int64_t nr, int64_t K, int64_t Kp, float * tmp) {
    /* rows contiguous across r (k strided): transposed 8 values of k at a time into tmp */
    const bool transpose = v->ks != sizeof(float) && v->rs == sizeof(float) && v->ks % sizeof(float) == 0;
    if (transpose) {
        const int64_t K8 = K / 8 * 8;
        for (int64_t k0 = 0; k0 < K8; k0 += 8)
            ggmlr_vec()->transpose8(nr, (const float *) (v->base + (size_t) r0 * v->rs + (size_t) k0 * v->ks),
                                    (int64_t) (v->ks / sizeof(float)), 1.0f, tmp + k0, Kp);
        for (int64_t r = 0; r < nr; r++)
            for (int64_t k = K8; k < K; k++) tmp[r * Kp + k] = *(const float *) (v->base + (size_t) (r0 + r) * v->rs + (size_t) k * v->ks);
    }
    for (int64_t r = 0; r < 16; r++) {
        if (r >= nr) { memset(out + r * Kp, 0, (size_t) Kp * sizeof(uint16_t)); continue; }
        row_to_bf16(out + r * Kp, transpose ? tmp + r * Kp : f32_row(v, r0 + r, K, tmp), K, Kp);
    }
}

/* columns c packed (v->rs one float): for each pair of k, the two runs of 16
 * columns converted together and their lanes (k, c), (k + 1, c) interleaved */
static T_BF16 void pack_vnni_columns_packed(uint16_t * out, const struct ggmlr_bf16_view * v, int64_t c0, int64_t nc, int64_t K, int64_t Kp) {
    const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
                                                23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __mmask16 m = nc >= 16 ? (__mmask16) 0xffff : (__mmask16) ((1u << nc) - 1);
    const char * base = v->base + (size_t) c0 * v->rs;
    for (int64_t k = 0; k < Kp; k += 2) {
        const __m512 x0 = k < K ? _mm512_maskz_loadu_ps(m, base + (size_t) k * v->ks) : _mm512_setzero_ps();
        const __m512 x1 = k + 1 < K ? _mm512_maskz_loadu_ps(m, base + (size_t) (k + 1) * v->ks) : _mm512_setzero_ps();
        const __m512i pair = (__m512i) _mm512_cvtne2ps_pbh(x1, x0);  /* x0's 16 bf16 low, x1's high */
        _mm512_storeu_si512(out + k * 16, _mm512_permutexvar_epi16(interleave, pair));
    }
}

void ggmlr_bf16_pack_vnni(uint16_t * out, const struct ggmlr_bf16_view * v, int64_t c0, int64_t nc, int64_t K, int64_t Kp, float * tmp,
                         uint16_t * tmp16) {
    if (v->rs == sizeof(float)) { pack_vnni_columns_packed(out, v, c0, nc, K, Kp); return; }
    /* columns along k (contiguous or not): as rows, then pairs of k moved as 32-bit words */
    ggmlr_bf16_pack_rows(tmp16, v, c0, nc, K, Kp, tmp);
    const uint32_t * rows = (const uint32_t *) tmp16;
    uint32_t * o = (uint32_t *) out;
    for (int64_t kk = 0; kk < Kp / 2; kk++)
        for (int64_t c = 0; c < 16; c++) o[kk * 16 + c] = rows[c * (Kp / 2) + kk];
}

struct tile_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

static T_AMX void gemm_amx(int64_t Kp, const uint16_t * a_0, const uint16_t * a_1, int64_t lda, const uint16_t * b_0,
                                const uint16_t * b_1, float * c, int64_t ldc) {
    struct tile_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) { cfg.rows[t] = 16; cfg.colsb[t] = 64; }
    _tile_loadconfig(&cfg);
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
    const long sa = (long) (lda * (int64_t) sizeof(uint16_t));
    for (int64_t k = 0; k < Kp; k += GGMLR_BF16_K) {
        _tile_loadd(4, a_0 + k, sa);
        _tile_loadd(5, a_1 + k, sa);
        _tile_loadd(6, b_0 + k * 16, 64);
        _tile_loadd(7, b_1 + k * 16, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    const long sc = (long) (ldc * (int64_t) sizeof(float));
    _tile_stored(0, c, sc);
    _tile_stored(1, c + 16, sc);
    _tile_stored(2, c + 16 * ldc, sc);
    _tile_stored(3, c + 16 * ldc + 16, sc);
}

/* c[r * ldc + i] (+)= the products over k < kn of 8 rows r of a (lda apart)
 * and 32 columns of a vnni operand (b_0: columns 0..15, b_1: 16..31; the pair
 * row of k at k * ldb); acc: add to c, else write it */
static T_BF16 void dp_8x32(int64_t kn, const uint16_t * a, int64_t lda, const uint16_t * b_0, const uint16_t * b_1, int64_t ldb,
                           float * c, int64_t ldc, bool acc_c) {
    __m512 acc[8][2];
    for (int r = 0; r < 8; r++) {
        acc[r][0] = acc_c ? _mm512_loadu_ps(c + r * ldc) : _mm512_setzero_ps();
        acc[r][1] = acc_c ? _mm512_loadu_ps(c + r * ldc + 16) : _mm512_setzero_ps();
    }
    for (int64_t k = 0; k < kn; k += 2) {
        const __m512bh w0 = (__m512bh) _mm512_loadu_si512(b_0 + k * ldb), w1 = (__m512bh) _mm512_loadu_si512(b_1 + k * ldb);
        for (int r = 0; r < 8; r++) {
            int32_t pair;
            memcpy(&pair, a + r * lda + k, sizeof pair);
            const __m512bh x = (__m512bh) _mm512_set1_epi32(pair);
            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], x, w0);
            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], x, w1);
        }
    }
    for (int r = 0; r < 8; r++) {
        _mm512_storeu_ps(c + r * ldc, acc[r][0]);
        _mm512_storeu_ps(c + r * ldc + 16, acc[r][1]);
    }
}

/* the same on 16 columns (b) */
static T_BF16 void dp_8x16(int64_t kn, const uint16_t * a, int64_t lda, const uint16_t * b, int64_t ldb, float * c, int64_t ldc,
                           bool acc_c) {
    __m512 acc[8];
    for (int r = 0; r < 8; r++) acc[r] = acc_c ? _mm512_loadu_ps(c + r * ldc) : _mm512_setzero_ps();
    for (int64_t k = 0; k < kn; k += 2) {
        const __m512bh w = (__m512bh) _mm512_loadu_si512(b + k * ldb);
        for (int r = 0; r < 8; r++) {
            int32_t pair;
            memcpy(&pair, a + r * lda + k, sizeof pair);
            acc[r] = _mm512_dpbf16_ps(acc[r], (__m512bh) _mm512_set1_epi32(pair), w);
        }
    }
    for (int r = 0; r < 8; r++) _mm512_storeu_ps(c + r * ldc, acc[r]);
}

/* 8 rows of c (ldc apart) against columns [0, n) of b, 32 then 16 at a time */
static void dp_8xn(int64_t K, const uint16_t * a, int64_t lda, const uint16_t * b, int64_t ldb, int64_t n, float * c, int64_t ldc,
                   bool acc_c) {
    int64_t j = 0;
    for (; j + 32 <= n; j += 32) dp_8x32(K, a, lda, b + 2 * j, b + 2 * j + 32, ldb, c + j, ldc, acc_c);
    if (j < n) dp_8x16(K, a, lda, b + 2 * j, ldb, c + j, ldc, acc_c);
}

void ggmlr_bf16_gemm(int64_t m, int64_t n, int64_t K, const uint16_t * a, int64_t lda, const uint16_t * b, int64_t ldb, float * c,
                     int64_t ldc, bool acc_c) {
    int64_t r0 = 0;
    for (; r0 + 8 <= m; r0 += 8) dp_8xn(K, a + r0 * lda, lda, b, ldb, n, c + r0 * ldc, ldc, acc_c);
    if (r0 == m) return;
    /* the last rows (< 8) through a block of 8 rows of 16 columns at a time: c has no room past row m */
    float part[8 * 16];
    const int64_t rows = m - r0;
    memset(part, 0, sizeof part);
    for (int64_t j = 0; j < n; j += 16) {
        for (int64_t r = 0; r < rows && acc_c; r++) memcpy(part + r * 16, c + (r0 + r) * ldc + j, 16 * sizeof(float));
        dp_8x16(K, a + r0 * lda, lda, b + 2 * j, ldb, part, 16, acc_c);
        for (int64_t r = 0; r < rows; r++) memcpy(c + (r0 + r) * ldc + j, part + r * 16, 16 * sizeof(float));
    }
}

void ggmlr_bf16_row(uint16_t * out, const float * x, int64_t n, int64_t np) { row_to_bf16(out, x, n, np); }

T_BF16 void ggmlr_bf16_pair_words(uint32_t * out, int64_t stride, const float * x0, const float * x1, int64_t n, int64_t np) {
    const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
                                                23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    for (int64_t c = 0; c < np; c += 16) {
        const __mmask16 m = n - c >= 16 ? (__mmask16) 0xffff : n > c ? (__mmask16) ((1u << (n - c)) - 1) : 0;
        const __m512 v0 = _mm512_maskz_loadu_ps(m, x0 + c), v1 = x1 ? _mm512_maskz_loadu_ps(m, x1 + c) : _mm512_setzero_ps();
        const __m512i words = _mm512_permutexvar_epi16(interleave, (__m512i) _mm512_cvtne2ps_pbh(v1, v0));
        if (stride == 1) { _mm512_storeu_si512(out + c, words); continue; }
        uint32_t w[16];
        _mm512_storeu_si512(w, words);
        for (int64_t i = 0; i < 16; i++) out[(c + i) * stride] = w[i];
    }
}

void ggmlr_bf16_row_words(uint32_t * out, int64_t stride, const float * x, int64_t n, int64_t np) {
    uint16_t row[512];
    for (int64_t c0 = 0; c0 < np; c0 += 512) {
        const int64_t len = np - c0 < 512 ? np - c0 : 512;
        row_to_bf16(row, x + c0, n - c0 < 0 ? 0 : n - c0 < len ? n - c0 : len, len);
        const uint32_t * w = (const uint32_t *) row;  /* the pair (2i, 2i + 1) as one word */
        for (int64_t i = 0; i < len / 2; i++) out[(c0 / 2 + i) * stride] = w[i];
    }
}

/* the reduction in blocks of KB: the block's 32 columns of b (2 KB x 32 x 2
 * bytes) and 32 rows of a stay in L1 while the four 8-row passes read them */
#define KB 256

void ggmlr_bf16_gemm_32x32(int64_t Kp, const uint16_t * a_0, const uint16_t * a_1, int64_t lda, const uint16_t * b_0,
                           const uint16_t * b_1, float * c, int64_t ldc) {
    if (tiles) {
        gemm_amx(Kp, a_0, a_1, lda, b_0, b_1, c, ldc);
        return;
    }
    if (Kp == 0)  /* an empty reduction: zeros */
        for (int r = 0; r < 32; r++) memset(c + r * ldc, 0, 32 * sizeof(float));
    for (int64_t k0 = 0; k0 < Kp; k0 += KB) {
        const int64_t kn = Kp - k0 < KB ? Kp - k0 : KB;
        for (int h = 0; h < 4; h++)
            dp_8x32(kn, (h < 2 ? a_0 : a_1) + (h % 2) * 8 * lda + k0, lda, b_0 + k0 * 16, b_1 + k0 * 16, 16, c + h * 8 * ldc, ldc, k0 > 0);
    }
}

#else

const char * ggmlr_bf16_path(void) { return NULL; }
void ggmlr_bf16_gemm(int64_t m, int64_t n, int64_t K, const uint16_t * a, int64_t lda, const uint16_t * b, int64_t ldb, float * c,
                     int64_t ldc, bool acc_c) {
    (void) m; (void) n; (void) K; (void) a; (void) lda; (void) b; (void) ldb; (void) c; (void) ldc; (void) acc_c;
}
void ggmlr_bf16_row(uint16_t * out, const float * x, int64_t n, int64_t np) { (void) out; (void) x; (void) n; (void) np; }
void ggmlr_bf16_pair_words(uint32_t * out, int64_t stride, const float * x0, const float * x1, int64_t n, int64_t np) {
    (void) out; (void) stride; (void) x0; (void) x1; (void) n; (void) np;
}
void ggmlr_bf16_row_words(uint32_t * out, int64_t stride, const float * x, int64_t n, int64_t np) {
    (void) out; (void) stride; (void) x; (void) n; (void) np;
}
void ggmlr_bf16_pack_rows(uint16_t * out, const struct ggmlr_bf16_view * v, int64_t r0, int64_t nr, int64_t K, int64_t Kp, float * tmp) {
    (void) out; (void) v; (void) r0; (void) nr; (void) K; (void) Kp; (void) tmp;
}
void ggmlr_bf16_pack_vnni(uint16_t * out, const struct ggmlr_bf16_view * v, int64_t c0, int64_t nc, int64_t K, int64_t Kp, float * tmp,
                         uint16_t * tmp16) {
    (void) out; (void) v; (void) c0; (void) nc; (void) K; (void) Kp; (void) tmp; (void) tmp16;
}
void ggmlr_bf16_gemm_32x32(int64_t Kp, const uint16_t * a_0, const uint16_t * a_1, int64_t lda, const uint16_t * b_0,
                           const uint16_t * b_1, float * c, int64_t ldc) {
    (void) Kp; (void) a_0; (void) a_1; (void) lda; (void) b_0; (void) b_1; (void) c; (void) ldc;
}

#endif

const char * ggml_cpu_bf16_name(void) { return ggmlr_bf16_path() ? ggmlr_bf16_path() : "f32"; }

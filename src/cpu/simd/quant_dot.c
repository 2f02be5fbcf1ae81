/* quant_dot.c -- SIMD dot products of a stored row (Q8_0, Q4_0, Q4_K, Q6_K,
 * F16, BF16) with a row of its vec_dot_type, two builds picked at run time
 * by cpu_traits.c: AVX2 (+FMA, F16C) and AVX-512 with VNNI (and
 * AVX512_BF16 for BF16 rows, when the CPU has it). Every kernel computes
 * the integer dot of each (sub-)block exactly (no saturation can occur: the
 * products' pairs stay below 2^15) and scales it in float, so it differs
 * from the reference (quant/dot.c) by float rounding only. The types not
 * here use the reference.
 *
 * Maths per block, x the stored row, y the quantized activations (d, q):
 *   Q8_0 . Q8_0:  dx dy sum q_x q_y                       (32 per block)
 *   Q4_0 . Q8_0:  dx dy sum (n - 8) q_y,  n the nibble
 *   Q4_K . Q8_K:  dy (d sum_s sc_s sum n q_y - dmin sum_s m_s sum q_y)   (8 sub-blocks of 32)
 *   Q6_K . Q8_K:  dy d sum_s sc_s (sum u q_y - 32 sum q_y),  u = q6 + 32 in 0..63 (16 of 16)
 * the sums of q_y per 16 are Q8_K's bsums. */
#include "cpu/simd/quant_dot.h"

#include "quant/quant.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#include <string.h>

#define DOT_SIG(name) \
    void name(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc)
/* the kernels compute one row by one column; the API's nrc x nrc block is their loop */
#define DOT_API(name, isa)                                                                                  \
    DOT_SIG(ggmlr_vec_dot_##name##_##isa) {                                                                 \
        for (int c = 0; c < nrc; c++)                                                                       \
            for (int r = 0; r < nrc; r++)                                                                   \
                s[r + c * bs] = dot_##name##_##isa(n, (const char *) x + r * bx, (const char *) y + c * by); \
    }

/* ---- the 256-bit kernels: AVX2, and the same with VNNI's fused adds ---- */

#define ISA avx2
#define TARGET __attribute__((target("avx2,fma,f16c")))
#include "cpu/simd/quant_dot_impl.h"
#undef ISA
#undef TARGET

#define ISA avx512
#define TARGET __attribute__((target("avx512f,avx512vl,avx512bw,avx512vnni,avx2,fma,f16c")))
#define VNNI 1
#include "cpu/simd/quant_dot_impl.h"
#undef ISA
#undef TARGET
#undef VNNI

/* ---- the 512-bit ones ---- */

#define T512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512vnni,avx2,fma,f16c")))
#define T512BF __attribute__((target("avx512f,avx512vl,avx512bw,avx512bf16,avx2,fma,f16c")))

/* Q8_0 . Q8_0, two blocks per 512-bit register */
static T512 float dot_q8_0_avx512(int n, const void * vx, const void * vy) {
    const block_q8_0 * x = vx, * y = vy;
    const int nb = n / QK8_0;
    __m512 acc = _mm512_setzero_ps();
    int i = 0;
    for (; i + 2 <= nb; i += 2) {
        const __m512i qx = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) x[i].qs)),
                                              _mm256_loadu_si256((const __m256i *) x[i + 1].qs), 1);
        const __m512i qy = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) y[i].qs)),
                                              _mm256_loadu_si256((const __m256i *) y[i + 1].qs), 1);
        /* |qx| . sign(qy, qx) = qx . qy, unsigned by signed as vpdpbusd wants */
        const __mmask64 neg = _mm512_movepi8_mask(qx);
        const __m512i ax = _mm512_abs_epi8(qx), sy = _mm512_mask_sub_epi8(qy, neg, _mm512_setzero_si512(), qy);
        const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ax, sy);
        const __m512 d = _mm512_mask_blend_ps(0xff00, _mm512_set1_ps(_cvtsh_ss(x[i].d) * _cvtsh_ss(y[i].d)),
                                              _mm512_set1_ps(_cvtsh_ss(x[i + 1].d) * _cvtsh_ss(y[i + 1].d)));
        acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(p), acc);
    }
    float sum = _mm512_reduce_add_ps(acc);
    for (; i < nb; i++) {
        int s = 0;
        for (int j = 0; j < QK8_0; j++) s += x[i].qs[j] * y[i].qs[j];
        sum += _cvtsh_ss(x[i].d) * _cvtsh_ss(y[i].d) * (float) s;
    }
    return sum;
}
DOT_API(q8_0, avx512)

/* F16 . F16, 16 per register, two accumulators */
static T512 float dot_f16_avx512(int n, const void * vx, const void * vy) {
    const uint16_t * x = vx, * y = vy;
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (x + i))),
                             _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (y + i))), a0);
        a1 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (x + i + 16))),
                             _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (y + i + 16))), a1);
    }
    float sum = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
    for (; i < n; i++) sum += _cvtsh_ss(x[i]) * _cvtsh_ss(y[i]);
    return sum;
}
DOT_API(f16, avx512)

/* BF16 . BF16 with vdpbf16ps: pairs of exact bf16 products added into float */
static T512BF float dot_bf16_avx512(int n, const void * vx, const void * vy) {
    const uint16_t * x = vx, * y = vy;
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        a0 = _mm512_dpbf16_ps(a0, (__m512bh) _mm512_loadu_si512(x + i), (__m512bh) _mm512_loadu_si512(y + i));
        a1 = _mm512_dpbf16_ps(a1, (__m512bh) _mm512_loadu_si512(x + i + 32), (__m512bh) _mm512_loadu_si512(y + i + 32));
    }
    for (; i + 32 <= n; i += 32)
        a0 = _mm512_dpbf16_ps(a0, (__m512bh) _mm512_loadu_si512(x + i), (__m512bh) _mm512_loadu_si512(y + i));
    float sum = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
    for (; i < n; i++) {
        union { uint32_t u; float f; } a = {(uint32_t) x[i] << 16}, b = {(uint32_t) y[i] << 16};
        sum += a.f * b.f;
    }
    return sum;
}
DOT_API(bf16, avx512)

#endif

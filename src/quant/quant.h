/* quant.h -- the tensor types' formats: upstream's block layouts (read from
 * upstream's ggml-common.h, docs/quant-types.md) and the row converters of
 * every family. This is the lowest stage: it includes only the public
 * ggml.h (for the fp16 conversions) and its own headers.
 *
 * Every converter handles k elements, k a multiple of the type's block size
 * (the callers check it); quantizers are the reference ones, whose bytes are
 * upstream's for the same input. */
#ifndef GGMLR_QUANT_H
#define GGMLR_QUANT_H

#include "ggml.h"

#include <math.h>

#define QK4_0    32
#define QK4_1    32
#define QK5_0    32
#define QK5_1    32
#define QK8_0    32
#define QK8_1    32
#define QK4_NL   32
#define QK_MXFP4 32
#define QK_NVFP4 64
#define QK_NVFP4_SUB 16   /* NVFP4's sub-block: one UE4M3 scale per 16 */
#define QK1_0    128
#define QK2_0    64
#define QK_K     256   /* the super-block of the K types and IQ4_XS */
#define K_SCALE_SIZE 12

/* x = d * (q - 8), q a nibble: element j in the low nibble of qs[j], element
 * j + 16 in the high nibble */
typedef struct { ggml_fp16_t d; uint8_t qs[QK4_0 / 2]; } block_q4_0;
/* x = d * q + m */
typedef struct { ggml_fp16_t d, m; uint8_t qs[QK4_1 / 2]; } block_q4_1;
/* x = d * (q - 16), q = nibble | bit j of qh (little-endian u32) << 4 */
typedef struct { ggml_fp16_t d; uint8_t qh[4]; uint8_t qs[QK5_0 / 2]; } block_q5_0;
typedef struct { ggml_fp16_t d, m; uint8_t qh[4]; uint8_t qs[QK5_1 / 2]; } block_q5_1;
/* x = d * q */
typedef struct { ggml_fp16_t d; int8_t qs[QK8_0]; } block_q8_0;
/* s = d * sum(q): the block's sum, for dot products */
typedef struct { ggml_fp16_t d, s; int8_t qs[QK8_1]; } block_q8_1;

/* 16 sub-blocks of 16: scales[j] = scale (low nibble) | min (high nibble);
 * qs: 2-bit quants, 4 per byte (see k_quants.c for the order) */
typedef struct { uint8_t scales[QK_K / 16]; uint8_t qs[QK_K / 4]; ggml_fp16_t d, dmin; } block_q2_K;
/* 16 sub-blocks of 16, signed 6-bit scales packed in 12 bytes; 3-bit quants:
 * 2 low bits in qs, the high bit in hmask */
typedef struct { uint8_t hmask[QK_K / 8]; uint8_t qs[QK_K / 4]; uint8_t scales[12]; ggml_fp16_t d; } block_q3_K;
/* 8 sub-blocks of 32, 6-bit scales and mins packed in 12 bytes */
typedef struct { ggml_fp16_t d, dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qs[QK_K / 2]; } block_q4_K;
typedef struct { ggml_fp16_t d, dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qh[QK_K / 8]; uint8_t qs[QK_K / 2]; } block_q5_K;
/* 16 sub-blocks of 16, int8 scales; 6-bit quants: 4 low bits in ql, 2 high in qh */
typedef struct { uint8_t ql[QK_K / 2]; uint8_t qh[QK_K / 4]; int8_t scales[QK_K / 16]; ggml_fp16_t d; } block_q6_K;
/* float scale; bsums: sums of 16 quants each (for dot products) */
typedef struct { float d; int8_t qs[QK_K]; int16_t bsums[QK_K / 16]; } block_q8_K;

/* x = d * kvalues_iq4nl[q] */
typedef struct { ggml_fp16_t d; uint8_t qs[QK4_NL / 2]; } block_iq4_nl;
/* 8 sub-blocks of 32 with 6-bit scales: low 4 bits in scales_l, high 2 in scales_h */
typedef struct { ggml_fp16_t d; uint16_t scales_h; uint8_t scales_l[QK_K / 64]; uint8_t qs[QK_K / 2]; } block_iq4_xs;
/* x = 2^(e-127) * E2M1(q); e is E8M0 */
typedef struct { uint8_t e; uint8_t qs[QK_MXFP4 / 2]; } block_mxfp4;
/* x = UE4M3(d[s]) * E2M1(q) per sub-block s of 16; in sub-block s element j
 * is the low nibble of qs[8s + j], element j + 8 the high one */
typedef struct { uint8_t d[QK_NVFP4 / QK_NVFP4_SUB]; uint8_t qs[QK_NVFP4 / 2]; } block_nvfp4;

/* x = +d if bit j of qs (little-endian bit order) is set, else -d */
typedef struct { ggml_fp16_t d; uint8_t qs[QK1_0 / 8]; } block_q1_0;
/* x = d * (q - 1), q 2 bits: element j in bits 2*(j%4) of qs[j/4] */
typedef struct { ggml_fp16_t d; uint8_t qs[QK2_0 / 4]; } block_q2_0;

/* ternary: x = d * (t - 1), t in {0, 1, 2}. TQ1_0 packs 5 trits per byte
 * (4 in qh) as the leading base-3 digits of the fraction byte / 256;
 * TQ2_0 keeps t in 2 bits, in the order of Q2_K's quants (ternary.c) */
typedef struct { uint8_t qs[(QK_K - 4 * QK_K / 64) / 5]; uint8_t qh[QK_K / 64]; ggml_fp16_t d; } block_tq1_0;
typedef struct { uint8_t qs[QK_K / 4]; ggml_fp16_t d; } block_tq2_0;

_Static_assert(sizeof(block_q4_0) == 18 && sizeof(block_q4_1) == 20, "q4 block sizes");
_Static_assert(sizeof(block_q5_0) == 22 && sizeof(block_q5_1) == 24, "q5 block sizes");
_Static_assert(sizeof(block_q8_0) == 34 && sizeof(block_q8_1) == 36, "q8 block sizes");
_Static_assert(sizeof(block_q2_K) == 84 && sizeof(block_q3_K) == 110, "q2_K/q3_K block sizes");
_Static_assert(sizeof(block_q4_K) == 144 && sizeof(block_q5_K) == 176, "q4_K/q5_K block sizes");
_Static_assert(sizeof(block_q6_K) == 210 && sizeof(block_q8_K) == 292, "q6_K/q8_K block sizes");
_Static_assert(sizeof(block_iq4_nl) == 18 && sizeof(block_iq4_xs) == 136 && sizeof(block_mxfp4) == 17, "iq4/mxfp4 block sizes");
_Static_assert(sizeof(block_nvfp4) == 36 && sizeof(block_q1_0) == 18 && sizeof(block_q2_0) == 18, "nvfp4/q1_0/q2_0 block sizes");
_Static_assert(sizeof(block_tq1_0) == 54 && sizeof(block_tq2_0) == 66, "tq block sizes");

/* float -> int as x86's cvttss2si: truncation; NaN and values outside int32
 * give INT32_MIN. Upstream's reference quantizers convert with plain casts,
 * which compile to that; written out, the result is defined in C too. */
static inline int ggmlr_trunc_i32(float v) { return v > -2147483648.0f && v < 2147483648.0f ? (int) v : INT32_MIN; }

/* lroundf(v) (ties away from zero) then a cast to int, as upstream's
 * ternary quantizers write it, with x86-64's results made defined: NaN and
 * |v| >= 2^63 give lroundf's LONG_MIN, whose low 32 bits are 0; past int32
 * the low 32 bits of the long. */
static inline int ggmlr_lround_i32(float v) {
    if (!(v > -9223372036854775808.0f && v < 9223372036854775808.0f)) return 0;
    const uint32_t low = (uint32_t) (uint64_t) (int64_t) roundf(v);
    return low <= INT32_MAX ? (int) low : (int) (low - 0x80000000u) - INT32_MAX - 1;
}

/* the nearest integer, ties to even, for |v| < 2^22 (the quants' range) */
static inline int ggmlr_nearest_int(float v) {
    const float t = v + 12582912.0f;   /* 1.5 * 2^23: the sum's ulp is 1 */
    union { float f; int32_t i; } u = { t };
    return (u.i & 0x007fffff) - 0x00400000;
}

/* The signatures of ggml_to_float_t / ggml_from_float_t. */
#define GGMLR_QUANT_PAIR(name)                                                   \
    void ggmlr_quantize_row_##name(const float * x, void * y, int64_t k);    \
    void ggmlr_dequantize_row_##name(const void * x, float * y, int64_t k)

/* legacy.c: the 32-element blocks */
GGMLR_QUANT_PAIR(q4_0);
GGMLR_QUANT_PAIR(q4_1);
GGMLR_QUANT_PAIR(q5_0);
GGMLR_QUANT_PAIR(q5_1);
GGMLR_QUANT_PAIR(q8_0);
GGMLR_QUANT_PAIR(q8_1);
/* with an importance matrix (one weight per column of a row, not NULL):
 * Q4_0, Q4_1, Q5_0, Q5_1 */
void ggmlr_quantize_rows_legacy(enum ggml_type type, const float * x, void * y, int64_t nrows, int64_t n_per_row,
                                const float * imatrix);
/* k_quants.c: the 256-element super-blocks */
GGMLR_QUANT_PAIR(q2_K);
GGMLR_QUANT_PAIR(q3_K);
GGMLR_QUANT_PAIR(q4_K);
GGMLR_QUANT_PAIR(q5_K);
GGMLR_QUANT_PAIR(q6_K);
GGMLR_QUANT_PAIR(q8_K);
/* with an importance matrix (not NULL): Q2_K .. Q6_K */
void ggmlr_quantize_rows_k(enum ggml_type type, const float * x, void * y, int64_t nrows, int64_t n_per_row,
                           const float * imatrix);
/* iq4.c: the non-linear 4-bit grid. The reference row quantizer of IQ4_NL
 * is upstream's quantize_row_iq4_nl_ref (no scale search); the rows of
 * ggml_quantize_chunk search the scale (ntry 7) and take an optional
 * importance matrix (one weight per column of a row). */
GGMLR_QUANT_PAIR(iq4_nl);
GGMLR_QUANT_PAIR(iq4_xs);
void ggmlr_quantize_rows_iq4_nl(const float * x, void * y, int64_t nrows, int64_t n_per_row, const float * imatrix);
void ggmlr_quantize_rows_iq4_xs(const float * x, void * y, int64_t nrows, int64_t n_per_row, const float * imatrix);
/* mxfp4.c, nvfp4.c: the FP4 E2M1 grid (e2m1.h) under an E8M0 or UE4M3 scale */
GGMLR_QUANT_PAIR(mxfp4);
GGMLR_QUANT_PAIR(nvfp4);
/* low_bits.c: signs times the mean |x| (Q1_0), four levels (Q2_0) */
GGMLR_QUANT_PAIR(q1_0);
GGMLR_QUANT_PAIR(q2_0);
/* ternary.c: BitNet b1.58 / TriLM weights */
GGMLR_QUANT_PAIR(tq1_0);
GGMLR_QUANT_PAIR(tq2_0);
/* bf16.c: BF16 rows in the ggml_to_float_t / ggml_from_float_t shapes */
void ggmlr_bf16_to_float_row(const void * x, float * y, int64_t k);
void ggmlr_float_to_bf16_row(const float * x, void * y, int64_t k);

/* dot.c: the reference dot products, with upstream's ggml_vec_dot_t
 * signature, of a row of each type (x) and its vec_dot_type (y):
 * X(name, type of x, type of y) */
#define GGMLR_VEC_DOT_REFS(X) \
    X(f16, F16, F16) X(bf16, BF16, BF16) X(q4_0, Q4_0, Q8_0) X(q4_1, Q4_1, Q8_1) X(q5_0, Q5_0, Q8_0) X(q5_1, Q5_1, Q8_1) \
    X(q8_0, Q8_0, Q8_0) X(q2_K, Q2_K, Q8_K) X(q3_K, Q3_K, Q8_K) X(q4_K, Q4_K, Q8_K) X(q5_K, Q5_K, Q8_K) X(q6_K, Q6_K, Q8_K) \
    X(iq4_nl, IQ4_NL, Q8_0) X(iq4_xs, IQ4_XS, Q8_K) X(mxfp4, MXFP4, Q8_0) X(nvfp4, NVFP4, Q8_0) X(q1_0, Q1_0, Q8_0) \
    X(q2_0, Q2_0, Q8_0) X(tq1_0, TQ1_0, Q8_K) X(tq2_0, TQ2_0, Q8_K)
#define GGMLR_VEC_DOT_REF_DECL(name, TX, TY) \
    void ggmlr_vec_dot_##name##_ref(int n, float * s, size_t bs, const void * x, size_t bx, const void * y, size_t by, int nrc);
GGMLR_VEC_DOT_REFS(GGMLR_VEC_DOT_REF_DECL)
/* the same for any pair of types with to_float */
void ggmlr_vec_dot_ref(enum ggml_type tx, enum ggml_type ty, int n, float * s, size_t bs, const void * x, size_t bx,
                       const void * y, size_t by, int nrc);

/* traits.c: the type can hold tensors here (F32, I32, or it has a
 * dequantizer); an unknown number is not supported. */
bool ggmlr_type_is_supported(enum ggml_type type);
bool ggmlr_type_has_layout(enum ggml_type type);
/* traits.c: ggmlr's own row of a type: ggml_get_type_traits's, except that
 * Q8_1 and Q8_K keep the dequantizer (and Q8_K the reference quantizer)
 * that upstream's public table leaves out; NULL out of range. */
const struct ggml_type_traits * ggmlr_type_traits_own(enum ggml_type type);

#endif

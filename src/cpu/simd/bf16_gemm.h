/* bf16_gemm.h -- matrix products of bf16 operands with FP32 sums, for the
 * GGML_PREC_BF16 products (cpu/kernels/mul_mat_bf16.c): the packing of F32
 * operands into bf16 (round to nearest even, fused into the packing) and a
 * 32 x 32 micro-kernel, on one of two paths chosen at run time:
 *   "avx512_bf16": VDPBF16PS, 16 lanes each adding two bf16 products (AMD
 *                  Zen 4/5 run it at twice the FP32 FMA's rate);
 *   "amx":         Intel AMX tiles (TDPBF16PS), opt-in with GGMLR_AMX=1
 *                  (see ggmlr_bf16_path).
 * Operand layouts (u16 = one bf16; Kp = K rounded up to 32, zero-padded):
 *   rows:  [16][Kp]        row r = X(j0 + r, k), the rows side (j);
 *   vnni:  [Kp / 2][16][2] pair (k = 2kk, 2kk + 1) of column c = P(i0 + c, k),
 *                          as both VDPBF16PS (one 512-bit row per kk) and
 *                          TDPBF16PS (a B tile) read it.
 * Both paths compute C[r][c] = sum_k rows[r][k] * P(i0 + c, k), each pair of
 * bf16 products added into an FP32 sum, the pairs in increasing k. */
#ifndef GGMLR_BF16_GEMM_H
#define GGMLR_BF16_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GGMLR_BF16_K 32  /* Kp's granule: one tile step */

/* "amx", "avx512_bf16", or NULL when the CPU or the SIMD path has neither
 * (GGMLR_SIMD other than avx512). AMX needs AMX-TILE, AMX-BF16, the OS's
 * tile state (asked for once per process) and GGMLR_AMX=1: the tile kernel
 * has not been run on such a CPU yet, so it stays opt-in until it is. */
const char * ggmlr_bf16_path(void);

/* A view of F32 values: v(r, k) at base + r * rs + k * ks (bytes). */
struct ggmlr_bf16_view {
    const char * base;
    size_t rs, ks;
};

/* out = rows of v(r0 + r, k), r < nr (<= 16; the rest zero), k < K (the rest
 * up to Kp zero). tmp: 16 * Kp floats of scratch. */
void ggmlr_bf16_pack_rows(uint16_t * out, const struct ggmlr_bf16_view * v, int64_t r0, int64_t nr, int64_t K, int64_t Kp, float * tmp);
/* out = vnni of v(c0 + c, k), c < nc (<= 16). tmp: 16 * Kp floats and 16 * Kp u16 of scratch. */
void ggmlr_bf16_pack_vnni(uint16_t * out, const struct ggmlr_bf16_view * v, int64_t c0, int64_t nc, int64_t K, int64_t Kp, float * tmp,
                          uint16_t * tmp16);

/* c[r * ldc + i] = sum_k a(r, k) b(k, i) for r < 32 (rows blocks a_0: rows
 * 0..15, a_1: 16..31, lda u16 apart), i < 32 (vnni blocks b_0: columns 0..15,
 * b_1: 16..31), over the whole Kp; ldc in floats (>= 32). */
void ggmlr_bf16_gemm_32x32(int64_t Kp, const uint16_t * a_0, const uint16_t * a_1, int64_t lda, const uint16_t * b_0,
                           const uint16_t * b_1, float * c, int64_t ldc);

/* ---- the operands of fused attention (cpu/kernels/flash_attn_bf16.c) ----
 * A vnni operand of width ldb: element (k, j) at b[(k / 2) * 2 * ldb + 2 * j + k % 2],
 * i.e. pair row k / 2 holds ldb words (bf16(x(k, j)) low, bf16(x(k + 1, j)) high). */

/* c[r * ldc + j] (+)= sum_{k < K} a[r * lda + k] b(k, j) for r < m, j < n (a
 * multiple of 16), b a vnni operand of width ldb; K even; the rows of a are
 * read in groups of 8 (round_up(m, 8) rows readable), c only for r < m.
 * acc_c: add to c, else write it. Each sum in increasing k: the result does
 * not depend on how a caller splits m or n. */
void ggmlr_bf16_gemm(int64_t m, int64_t n, int64_t K, const uint16_t * a, int64_t lda, const uint16_t * b, int64_t ldb, float * c,
                     int64_t ldc, bool acc_c);
/* out[j] = bf16(x[j]) for j < n, 0 for n <= j < np (np a multiple of 16) */
void ggmlr_bf16_row(uint16_t * out, const float * x, int64_t n, int64_t np);
/* Two rows as words (bf16(x0[j]) low, bf16(x1[j]) high; x1 NULL: zeros) at
 * out[j * stride] for j < n, zero words for n <= j < np (np a multiple of 16):
 * stride 1 writes a pair row of a vnni operand, stride lda / 2 a column of
 * pairs of a rows operand (its transpose). */
void ggmlr_bf16_pair_words(uint32_t * out, int64_t stride, const float * x0, const float * x1, int64_t n, int64_t np);
/* One row's adjacent pairs as words: word i = (bf16(x[2i]), bf16(x[2i + 1]))
 * at out[i * stride], i < np / 2 (zero past n; np a multiple of 16): a row of
 * x becomes a column of a vnni operand (stride: its width). */
void ggmlr_bf16_row_words(uint32_t * out, int64_t stride, const float * x, int64_t n, int64_t np);

#endif

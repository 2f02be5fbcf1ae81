/* test_quant.c -- BF16 and the quantized types against the test's own
 * reading of upstream's layouts (ggml-common.h): every block decoded here
 * byte by byte, in float64, from the documented offsets (not through the
 * library's structs), then compared with to_float on random blocks (every
 * bit of every field exercised) and on hand-built ones; quantize then
 * dequantize must give, per element, the nearest level of the block's own
 * grid and a relative RMS error within the format's resolution; exactly
 * representable inputs come back exactly; the scale and rounding rules of
 * NVFP4, Q2_0 and the ternary types by hand; all-zero, huge and non-finite
 * blocks; upstream's type numbers and sizes; ggml_quantize_chunk's checks.
 * Byte identity with upstream is checked out of tree (docs/quant-types.md). */
#include "common/test_common.h"
#include "quant/quant.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* ---- the layouts, read independently ---- */

static double h16(const uint8_t * p) { return tc_ref_fp16_to_f64((uint16_t) (p[0] | p[1] << 8)); }
static const int iq4_grid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

/* FP4 E2M1: sign, 2 exponent bits (bias 1), 1 mantissa bit; exponent 0 is subnormal */
static double e2m1(int v) {
    const int s = v >> 3 & 1, ex = v >> 1 & 3, m = v & 1;
    const double mag = ex == 0 ? 0.5 * m : (1.0 + 0.5 * m) * ldexp(1.0, ex - 1);
    return s ? -mag : mag;
}

/* the 4-bit index of element e (0..31) of a 32-run whose 16 bytes start at q:
 * low nibbles hold elements 0..15, high nibbles 16..31 */
static int nib32(const uint8_t * q, int e) { return e < 16 ? q[e] & 15 : q[e - 16] >> 4; }

/* 2 bits of element e of a 256-block whose 64 bytes start at q: byte
 * 32*(e/128) + e%32, bits 2*((e%128)/32) */
static int two(const uint8_t * q, int e) { return q[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32)) & 3; }

/* UE4M3 (NVFP4's scale): 4 exponent bits (bias 7), 3 mantissa bits,
 * exponent 0 subnormal (m * 2^-9); as upstream, 0x7F (E4M3's NaN) is 0 and
 * bit 7 is not looked at otherwise */
static double ue4m3(uint8_t u) {
    if (u == 0x7f) return 0;
    const int ex = u >> 3 & 15, m = u & 7;
    return ex == 0 ? ldexp(m, -9) : (1 + m / 8.0) * ldexp(1.0, ex - 7);
}

/* TQ1_0: the trit of element e. A byte holds the first 5 base-3 digits of
 * byte / 256, i.e. of T = floor(byte * 243 / 256), most significant first;
 * elements 0..159 are digit e/32 of byte e%32, 160..239 digit (e-160)/16 of
 * byte 32 + (e-160)%16, 240..255 digit (e-240)/4 of qh byte (e-240)%4 */
static int tq1_trit(const uint8_t * b, int e) {
    const int byte = e < 160 ? b[e % 32] : e < 240 ? b[32 + (e - 160) % 16] : b[48 + (e - 240) % 4];
    const int digit = e < 160 ? e / 32 : e < 240 ? (e - 160) / 16 : (e - 240) / 4;
    int t = byte * 243 / 256;
    for (int k = digit; k < 4; k++) t /= 3;
    return t % 3;
}

/* Q4_K/Q5_K 6-bit scale (which = 0) or min (which = 1) of sub-block j from 12 bytes */
static int k4_scale(const uint8_t * s, int j, int which) {
    if (j < 4) return s[j + 4 * which] & 63;
    return (which ? s[j + 4] >> 4 : s[j + 4] & 15) | (s[j - 4 + 4 * which] >> 6) << 4;
}

/* Q4_K/Q5_K: the nibble of element e: 64-groups of 32 bytes, low nibble in the first half */
static int k4_nib(const uint8_t * q, int e) { return (e / 32) % 2 ? q[32 * (e / 64) + e % 32] >> 4 : q[32 * (e / 64) + e % 32] & 15; }

enum { NQ_MAX = 256 };
struct fmt { enum ggml_type type; int blck, bytes, nq; };  /* nq: the number of quant values q */
static const struct fmt fmts[] = {
    {GGML_TYPE_Q4_0, 32, 18, 16},   {GGML_TYPE_Q4_1, 32, 20, 16},    {GGML_TYPE_Q5_0, 32, 22, 32},
    {GGML_TYPE_Q5_1, 32, 24, 32},   {GGML_TYPE_Q8_0, 32, 34, 256},   {GGML_TYPE_Q8_1, 32, 36, 256},
    {GGML_TYPE_Q2_K, 256, 84, 4},   {GGML_TYPE_Q3_K, 256, 110, 8},   {GGML_TYPE_Q4_K, 256, 144, 16},
    {GGML_TYPE_Q5_K, 256, 176, 32}, {GGML_TYPE_Q6_K, 256, 210, 64},  {GGML_TYPE_Q8_K, 256, 292, 256},
    {GGML_TYPE_IQ4_NL, 32, 18, 16}, {GGML_TYPE_IQ4_XS, 256, 136, 16}, {GGML_TYPE_MXFP4, 32, 17, 16},
    {GGML_TYPE_NVFP4, 64, 36, 16},  {GGML_TYPE_Q1_0, 128, 18, 2},    {GGML_TYPE_Q2_0, 64, 18, 4},
    {GGML_TYPE_TQ1_0, 256, 54, 3},  {GGML_TYPE_TQ2_0, 256, 66, 3},
};
#define NFMT ((int) (sizeof fmts / sizeof fmts[0]))

/* Element e of block b in float64; q >= 0 replaces the stored quant (so
 * that every level of the element's grid can be listed). Offsets in bytes
 * from upstream's block structs. */
static double decode(enum ggml_type type, const uint8_t * b, int e, int q) {
    switch (type) {
        case GGML_TYPE_Q4_0: return h16(b) * ((q >= 0 ? q : nib32(b + 2, e)) - 8);
        case GGML_TYPE_Q4_1: return h16(b) * (q >= 0 ? q : nib32(b + 4, e)) + h16(b + 2);
        case GGML_TYPE_Q5_0: case GGML_TYPE_Q5_1: {
            const bool affine = type == GGML_TYPE_Q5_1;
            const uint8_t * qh = b + (affine ? 4 : 2);
            const uint32_t h = (uint32_t) qh[0] | (uint32_t) qh[1] << 8 | (uint32_t) qh[2] << 16 | (uint32_t) qh[3] << 24;
            const int v = q >= 0 ? q : nib32(qh + 4, e) | (int) (h >> e & 1) << 4;
            return affine ? h16(b) * v + h16(b + 2) : h16(b) * (v - 16);
        }
        case GGML_TYPE_Q8_0: return h16(b) * (q >= 0 ? q - 128 : (int8_t) b[2 + e]);
        case GGML_TYPE_Q8_1: return h16(b) * (q >= 0 ? q - 128 : (int8_t) b[4 + e]);
        case GGML_TYPE_Q2_K: {
            const uint8_t sc = b[e / 16];
            return h16(b + 80) * (sc & 15) * (q >= 0 ? q : two(b + 16, e)) - h16(b + 82) * (sc >> 4);
        }
        case GGML_TYPE_Q3_K: {
            const int j = e / 16;
            const int lo = j < 8 ? b[96 + j] & 15 : b[96 + j - 8] >> 4;
            const int s = (lo | (b[96 + 8 + j % 4] >> (2 * (j / 4)) & 3) << 4) - 32;
            const int v = q >= 0 ? q : two(b + 32, e) | (b[e % 32] >> (e / 32) & 1) << 2;  /* 0..7, high bit set: no -4 */
            return h16(b + 108) * s * (v - 4);
        }
        case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K: {
            const bool five = type == GGML_TYPE_Q5_K;
            const int j = e / 32;
            const uint8_t * qs = b + (five ? 48 : 16);
            const int v = q >= 0 ? q : k4_nib(qs, e) + (five ? 16 * (b[16 + e % 32] >> (e / 32) & 1) : 0);
            return h16(b) * k4_scale(b + 4, j, 0) * v - h16(b + 2) * k4_scale(b + 4, j, 1);
        }
        case GGML_TYPE_Q6_K: {
            const int h = e / 128, g = (e % 128) / 32, l = e % 32;
            const uint8_t lo = b[64 * h + l + 32 * (g & 1)];
            const int v = q >= 0 ? q : (g < 2 ? lo & 15 : lo >> 4) | (b[128 + 32 * h + l] >> (2 * g) & 3) << 4;
            return h16(b + 208) * (int8_t) b[192 + e / 16] * (v - 32);
        }
        case GGML_TYPE_Q8_K: {
            float d;
            memcpy(&d, b, 4);
            return (double) d * (q >= 0 ? q - 128 : (int8_t) b[4 + e]);
        }
        case GGML_TYPE_IQ4_NL: return h16(b) * iq4_grid[q >= 0 ? q : nib32(b + 2, e)];
        case GGML_TYPE_IQ4_XS: {
            const int ib = e / 32;
            const int sh = b[2] | b[3] << 8;
            const int ls = (b[4 + ib / 2] >> (4 * (ib % 2)) & 15) | (sh >> (2 * ib) & 3) << 4;
            return h16(b) * (ls - 32) * iq4_grid[q >= 0 ? q : nib32(b + 8 + 16 * ib, e % 32)];
        }
        case GGML_TYPE_MXFP4: return ldexp(1.0, b[0] - 127) * e2m1(q >= 0 ? q : nib32(b + 1, e));
        case GGML_TYPE_NVFP4: {   /* sub-block s = e/16: scale byte s, 8 bytes at 4 + 8s, low nibbles first */
            const int s = e / 16, j = e % 16;
            const uint8_t v = b[4 + 8 * s + j % 8];
            return ue4m3(b[s]) * e2m1(q >= 0 ? q : j < 8 ? v & 15 : v >> 4);
        }
        case GGML_TYPE_Q1_0: return h16(b) * ((q >= 0 ? q : b[2 + e / 8] >> (e % 8) & 1) ? 1 : -1);
        case GGML_TYPE_Q2_0: return h16(b) * ((q >= 0 ? q : b[2 + e / 4] >> (2 * (e % 4)) & 3) - 1);
        case GGML_TYPE_TQ1_0: return h16(b + 52) * ((q >= 0 ? q : tq1_trit(b, e)) - 1);
        case GGML_TYPE_TQ2_0: return h16(b + 64) * ((q >= 0 ? q : two(b, e)) - 1);
        default: return NAN;
    }
}

/* ggmlr's own rows: Q8_1 and Q8_K keep the converters upstream's public table leaves out */
static const struct ggml_type_traits * traits(enum ggml_type t) { return ggmlr_type_traits_own(t); }

/* quantize n values: the chunk path where upstream has one, else from_float_ref */
static void quantize(enum ggml_type t, const float * x, void * q, int64_t n) {
    if (t == GGML_TYPE_Q8_1 || t == GGML_TYPE_Q8_K) traits(t)->from_float_ref(x, q, n);
    else CHECK(ggml_quantize_chunk(t, x, q, 0, 1, n, NULL) == ggml_row_size(t, n), "%s: chunk size", ggml_type_name(t));
}

/* ---- numbers, sizes, names ---- */

static void test_type_table(void) {
    /* upstream's enum ggml_type values and ggml-common.h block sizes, typed in */
    static const struct { enum ggml_type t; int num; const char * name; int blck; size_t size; bool q; } want[] = {
        {GGML_TYPE_F32, 0, "f32", 1, 4, false},        {GGML_TYPE_F16, 1, "f16", 1, 2, false},
        {GGML_TYPE_Q4_0, 2, "q4_0", 32, 18, true},      {GGML_TYPE_Q4_1, 3, "q4_1", 32, 20, true},
        {GGML_TYPE_Q5_0, 6, "q5_0", 32, 22, true},      {GGML_TYPE_Q5_1, 7, "q5_1", 32, 24, true},
        {GGML_TYPE_Q8_0, 8, "q8_0", 32, 34, true},      {GGML_TYPE_Q8_1, 9, "q8_1", 32, 36, true},
        {GGML_TYPE_Q2_K, 10, "q2_K", 256, 84, true},    {GGML_TYPE_Q3_K, 11, "q3_K", 256, 110, true},
        {GGML_TYPE_Q4_K, 12, "q4_K", 256, 144, true},   {GGML_TYPE_Q5_K, 13, "q5_K", 256, 176, true},
        {GGML_TYPE_Q6_K, 14, "q6_K", 256, 210, true},   {GGML_TYPE_Q8_K, 15, "q8_K", 256, 292, true},
        {GGML_TYPE_IQ2_XXS, 16, "iq2_xxs", 256, 66, true}, {GGML_TYPE_IQ2_XS, 17, "iq2_xs", 256, 74, true},
        {GGML_TYPE_IQ3_XXS, 18, "iq3_xxs", 256, 98, true}, {GGML_TYPE_IQ1_S, 19, "iq1_s", 256, 50, true},
        {GGML_TYPE_IQ4_NL, 20, "iq4_nl", 32, 18, true}, {GGML_TYPE_IQ3_S, 21, "iq3_s", 256, 110, true},
        {GGML_TYPE_IQ2_S, 22, "iq2_s", 256, 82, true},  {GGML_TYPE_IQ4_XS, 23, "iq4_xs", 256, 136, true},
        {GGML_TYPE_I8, 24, "i8", 1, 1, false},          {GGML_TYPE_I16, 25, "i16", 1, 2, false},
        {GGML_TYPE_I32, 26, "i32", 1, 4, false},        {GGML_TYPE_I64, 27, "i64", 1, 8, false},
        {GGML_TYPE_F64, 28, "f64", 1, 8, false},        {GGML_TYPE_IQ1_M, 29, "iq1_m", 256, 56, true},
        {GGML_TYPE_BF16, 30, "bf16", 1, 2, false},      {GGML_TYPE_TQ1_0, 34, "tq1_0", 256, 54, true},
        {GGML_TYPE_TQ2_0, 35, "tq2_0", 256, 66, true},  {GGML_TYPE_MXFP4, 39, "mxfp4", 32, 17, true},
        {GGML_TYPE_NVFP4, 40, "nvfp4", 64, 36, true},   {GGML_TYPE_Q1_0, 41, "q1_0", 128, 18, true},
        {GGML_TYPE_Q2_0, 42, "q2_0", 64, 18, true},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct ggml_type_traits * tt = traits(want[i].t);
        CHECK((int) want[i].t == want[i].num && tt && strcmp(tt->type_name, want[i].name) == 0 &&
              strcmp(ggml_type_name(want[i].t), want[i].name) == 0, "type %d is %s", want[i].num, want[i].name);
        CHECK(ggml_blck_size(want[i].t) == want[i].blck && ggml_type_size(want[i].t) == want[i].size &&
              tt->blck_size == want[i].blck && tt->type_size == want[i].size, "%s: block %d of %zu bytes (got %lld, %zu)",
              want[i].name, want[i].blck, want[i].size, (long long) ggml_blck_size(want[i].t), ggml_type_size(want[i].t));
        CHECK(ggml_is_quantized(want[i].t) == want[i].q && tt->is_quantized == want[i].q, "%s: is_quantized", want[i].name);
        CHECK(ggml_row_size(want[i].t, 4 * want[i].blck) == 4 * want[i].size, "%s: row size", want[i].name);
    }
    CHECK(GGML_TYPE_COUNT == 43, "GGML_TYPE_COUNT is upstream's 43");
    static const int removed[] = {4, 5, 31, 32, 33, 36, 37, 38};
    for (size_t i = 0; i < sizeof removed / sizeof removed[0]; i++)
        CHECK(ggml_blck_size((enum ggml_type) removed[i]) == 0 && ggml_type_size((enum ggml_type) removed[i]) == 0,
              "type %d (removed upstream) has no size", removed[i]);
    CHECK(ggml_get_type_traits(GGML_TYPE_COUNT) == NULL && ggml_get_type_traits((enum ggml_type) -1) == NULL, "traits out of range");
    /* converters: every implemented type has both; named-only types none */
    for (int f = 0; f < NFMT; f++)
        CHECK(traits(fmts[f].type)->to_float && traits(fmts[f].type)->from_float_ref, "%s has converters", ggml_type_name(fmts[f].type));
    CHECK(!traits(GGML_TYPE_IQ2_XXS)->to_float && !traits(GGML_TYPE_IQ1_S)->from_float_ref, "named-only types have no converters");
    static const enum ggml_type small[] = {GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        CHECK(ggml_get_type_traits(small[i])->to_float && ggml_get_type_traits(small[i])->from_float_ref && ggmlr_type_is_supported(small[i]),
              "%s: upstream's public converters, tensors supported", ggml_type_name(small[i]));
    CHECK(ggml_quantize_requires_imatrix(GGML_TYPE_IQ2_XXS) && !ggml_quantize_requires_imatrix(GGML_TYPE_Q4_K), "requires_imatrix");
}

/* ---- tensors of block types ---- */

static void test_tensors(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * t = ggml_new_tensor_3d(ctx, GGML_TYPE_Q4_0, 64, 3, 2);
    CHECK(t && t->nb[0] == 18 && t->nb[1] == 36 && t->nb[2] == 108 && t->nb[3] == 216 && ggml_nbytes(t) == 216 &&
          ggml_is_contiguous(t) && ggml_nelements(t) == 384 && ggml_nrows(t) == 6, "Q4_0 [64,3,2]: nb from blocks");
    struct ggml_tensor * k = ggml_new_tensor_2d(ctx, GGML_TYPE_Q6_K, 512, 2);
    CHECK(k && k->nb[1] == 420 && ggml_nbytes(k) == 840, "Q6_K [512,2]");
    struct ggml_tensor * bad = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_K, 100, 2);
    CHECK(!bad && strstr(ggml_last_error(), "block size 256") && strstr(ggml_last_error(), "q4_K"), "ne0 not whole blocks: %s", ggml_last_error());
    struct ggml_tensor * b16 = ggml_new_tensor_1d(ctx, GGML_TYPE_BF16, 5);
    CHECK(b16 && b16->nb[0] == 2 && ggml_nbytes(b16) == 10, "BF16 tensor");
    if (b16) {
        ggml_set_f32_1d(b16, 2, 1.5f);
        CHECK(ggml_get_f32_1d(b16, 2) == 1.5f, "BF16 element access");
    }
    /* dup, cont, cpy and the layout ops take a quantized tensor (test_quant_copy.c,
     * test_quant_views.c): the others refuse with a message, never compute a wrong result */
    struct ggml_tensor * f = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, 3, 2);
    CHECK(t && f && !ggml_add(ctx, t, f) && strstr(ggml_last_error(), "q4_0"), "add of a quantized tensor refused: %s", ggml_last_error());
    CHECK(t && !ggml_view_1d(ctx, t, 16, 0) && strstr(ggml_last_error(), "block size"), "a view splitting a block refused: %s", ggml_last_error());
    CHECK(t && !ggml_reshape_2d(ctx, t, 48, 8) && strstr(ggml_last_error(), "whole blocks"), "a reshape splitting blocks refused");
    CHECK(t && !ggml_transpose(ctx, t) && strstr(ggml_last_error(), "dim 0"), "transpose refused");
    ggml_free(ctx);
}

/* ---- BF16 ---- */

static uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* Nearest bf16 of a non-NaN x, by comparing the two neighbours of the same
 * sign in float64; a tie goes to the even one. Past the largest bf16 the
 * upper neighbour is Inf, reached from the midpoint to 2^128 on (IEEE). */
static uint16_t ref_bf16(float x) {
    const uint32_t u = fbits(x);
    const uint16_t lo = (uint16_t) (u >> 16), hi = (uint16_t) (lo + 1);
    if ((u & 0xffff) == 0) return lo;
    const double ax = fabs((double) x), vl = fabs((double) bitsf((uint32_t) lo << 16));
    if ((hi & 0x7fff) == 0x7f80) return ax >= (vl + ldexp(1.0, 128)) / 2 ? hi : lo;
    const double vh = fabs((double) bitsf((uint32_t) hi << 16));
    if (ax - vl < vh - ax) return lo;
    if (vh - ax < ax - vl) return hi;
    return (lo & 1) ? hi : lo;
}

static void test_bf16(void) {
    static const struct { uint32_t x; uint16_t h; const char * why; } cases[] = {
        {0x3f800000, 0x3f80, "1"},         {0x80000000, 0x8000, "-0"},      {0x7f800000, 0x7f80, "Inf"},
        {0x3f808000, 0x3f80, "a tie to even stays"}, {0x3f818000, 0x3f82, "a tie to even goes up"},
        {0x3f808001, 0x3f81, "above the tie"}, {0x3f807fff, 0x3f80, "below the tie"},
        {0x7f7fffff, 0x7f80, "FLT_MAX rounds to Inf"}, {0x7f7f7fff, 0x7f7f, "below the last tie stays finite"},
        {0x00000001, 0x0000, "the smallest subnormal rounds to 0"}, {0x00008000, 0x0000, "a subnormal tie to even (0)"},
        {0x00018000, 0x0002, "a subnormal tie to even (2)"},
        {0x7f800001, 0x7fc0, "a signalling NaN with its payload in the low half stays NaN, quiet"},
        {0xffc00000, 0xffc0, "-qNaN"}, {0x7fa00000, 0x7fe0, "sNaN: quiet bit set, payload kept"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint16_t got = ggml_fp32_to_bf16(bitsf(cases[i].x)).bits;
        CHECK(got == cases[i].h, "bf16(0x%08x) = 0x%04x, want 0x%04x: %s", cases[i].x, got, cases[i].h, cases[i].why);
    }
    /* a sweep over the float bit patterns: nearest even, NaN stays NaN */
    int bad = 0, bad_back = 0, bad_row = 0;
    float xs[1024];
    ggml_bf16_t hs[1024];
    float ys[1024];
    int nx = 0;
    for (uint64_t u = 0; u <= 0xffffffffull; u += 4093) {
        const float x = bitsf((uint32_t) u);
        const uint16_t got = ggml_fp32_to_bf16(x).bits;
        if (isnan(x) ? !((got & 0x7f80) == 0x7f80 && (got & 0x7f)) : got != ref_bf16(x)) {
            if (bad < 5) fprintf(stderr, "  bf16(0x%08x) = 0x%04x, want 0x%04x\n", (uint32_t) u, got, ref_bf16(x));
            bad++;
        }
        xs[nx++] = x;
        if (nx == 1024) {
            ggml_fp32_to_bf16_row(xs, hs, nx);
            traits(GGML_TYPE_BF16)->to_float(hs, ys, nx);
            for (int i = 0; i < nx; i++) {
                bad_row += hs[i].bits != ggml_fp32_to_bf16(xs[i]).bits;
                const uint32_t want = (uint32_t) hs[i].bits << 16;   /* to float: the bits shifted back */
                bad_back += fbits(ys[i]) != want;
            }
            nx = 0;
        }
    }
    CHECK(bad == 0, "%d floats convert to the wrong bf16", bad);
    CHECK(bad_row == 0 && bad_back == 0, "row converters: %d differ from the scalar one, %d wrong back to float", bad_row, bad_back);
}

/* ---- the block formats ---- */

/* random bytes for a block, with its scales made finite (so every level is a number) */
static void random_block(const struct fmt * f, uint8_t * b) {
    for (int i = 0; i < f->bytes; i++) b[i] = (uint8_t) tc_randint(0, 255);
    const uint16_t h1 = (uint16_t) (tc_randint(0, 0x7bff) | (tc_randint(0, 1) << 15)), h2 = (uint16_t) tc_randint(0, 0x7bff);
    switch (f->type) {
        case GGML_TYPE_Q4_1: case GGML_TYPE_Q5_1: case GGML_TYPE_Q8_1: case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K:
            memcpy(b, &h1, 2); memcpy(b + 2, &h2, 2); break;
        case GGML_TYPE_Q2_K: memcpy(b + 80, &h1, 2); memcpy(b + 82, &h2, 2); break;
        case GGML_TYPE_Q3_K: memcpy(b + 108, &h1, 2); break;
        case GGML_TYPE_Q6_K: memcpy(b + 208, &h1, 2); break;
        case GGML_TYPE_Q8_K: { const float d = (float) tc_uniform(-2, 2); memcpy(b, &d, 4); break; }
        case GGML_TYPE_MXFP4: case GGML_TYPE_NVFP4: break;   /* every E8M0 byte but 255, every UE4M3 byte is finite */
        case GGML_TYPE_TQ1_0: memcpy(b + 52, &h1, 2); break;
        case GGML_TYPE_TQ2_0: memcpy(b + 64, &h1, 2); break;
        default: memcpy(b, &h1, 2); break;
    }
}

/* to_float of random blocks against the test's decoder: catches a wrong
 * nibble order, bit position or scale placement in any field */
static void test_decode_random(void) {
    for (int f = 0; f < NFMT; f++) {
        const struct fmt * ft = &fmts[f];
        uint8_t b[292];
        float y[256];
        int bad = 0;
        for (int rep = 0; rep < 200; rep++) {
            random_block(ft, b);
            if (ft->type == GGML_TYPE_MXFP4 && b[0] > 252) b[0] = 252;   /* 6 * 2^(e-127) stays below FLT_MAX */
            traits(ft->type)->to_float(b, y, ft->blck);
            for (int e = 0; e < ft->blck; e++) {
                const double want = decode(ft->type, b, e, -1);
                if (fabs(y[e] - want) > 4 * FLT_EPSILON * fabs(want) + 1e-45) {
                    if (bad < 3) fprintf(stderr, "  %s rep %d element %d: %.9g, want %.9g\n", ggml_type_name(ft->type), rep, e, y[e], want);
                    bad++;
                }
            }
        }
        CHECK(bad == 0, "%s: %d dequantized values differ from the layout read here", ggml_type_name(ft->type), bad);
    }
}

/* Hand-built blocks, values worked out by hand from the layout. */
static void test_decode_by_hand(void) {
    float y[256];
    /* Q4_0, d = 0.5 (fp16 0x3800); byte j = j | (15 - j) << 4: element j is
     * (j - 8) / 2, element j + 16 is (7 - j) / 2 */
    uint8_t q40[18] = {0x00, 0x38};
    for (int j = 0; j < 16; j++) q40[2 + j] = (uint8_t) (j | (15 - j) << 4);
    traits(GGML_TYPE_Q4_0)->to_float(q40, y, 32);
    CHECK(y[0] == -4.0f && y[15] == 3.5f && y[16] == 3.5f && y[31] == -4.0f && y[9] == 0.5f && y[25] == -1.0f, "Q4_0 by hand");
    /* Q5_0: d = 1, all nibbles 0, qh = 0x80000001: element 0 and 31 have
     * their fifth bit (16 - 16 = 0), the others are -16 */
    uint8_t q50[22] = {0x00, 0x3c, 0x01, 0x00, 0x00, 0x80};
    traits(GGML_TYPE_Q5_0)->to_float(q50, y, 32);
    CHECK(y[0] == 0.0f && y[31] == 0.0f && y[1] == -16.0f && y[16] == -16.0f, "Q5_0 by hand (qh little-endian)");
    /* Q4_K: d = 1, dmin = 0.5; sub-block 5: scale (byte 9 & 15) | (byte 1 >> 6) << 4
     * = 3 | 1 << 4 = 19, min (byte 9 >> 4) | (byte 5 >> 6) << 4 = 2 | 2 << 4 = 34;
     * its elements 160..191 are the high nibbles of bytes 64..95 of qs (= 7):
     * 19 * 7 - 0.5 * 34 = 116 */
    uint8_t q4k[144] = {0x00, 0x3c, 0x00, 0x38};
    q4k[4 + 1] = 0x40; q4k[4 + 5] = 0x80; q4k[4 + 9] = 0x23;
    for (int i = 64; i < 96; i++) q4k[16 + i] = 0x70;
    traits(GGML_TYPE_Q4_K)->to_float(q4k, y, 256);
    CHECK(y[160] == 116.0f && y[191] == 116.0f && y[128] == 0.0f, "Q4_K by hand (6-bit scale/min of sub-block 5): %g %g", y[160], y[128]);
    /* Q6_K: d = 1, scale 3 for every sub-block; element 200 = 128 + 2*32 + 8:
     * low nibble is the high half of ql[64 + 8], high bits qh[32 + 8] bits 4-5 */
    uint8_t q6k[210] = {0};
    memset(q6k + 192, 3, 16);
    q6k[208] = 0x00; q6k[209] = 0x3c;
    q6k[64 + 8] = 0x50; q6k[128 + 32 + 8] = 0x20;   /* q = 5 | 2 << 4 = 37 */
    traits(GGML_TYPE_Q6_K)->to_float(q6k, y, 256);
    CHECK(y[200] == 3.0f * (37 - 32) && y[8] == 3.0f * -32, "Q6_K by hand: %g", y[200]);
    /* MXFP4: e = 128 (2^1); nibble 0x5 is E2M1 0 10 1 = +1.5 * 2^1 = 3, 0xd
     * the same negative: 2 * 3 = 6 */
    uint8_t mx[17] = {128, 0xd5};
    traits(GGML_TYPE_MXFP4)->to_float(mx, y, 32);
    CHECK(y[0] == 6.0f && y[16] == -6.0f && y[1] == 0.0f, "MXFP4 by hand: %g %g", y[0], y[16]);
    /* NVFP4: scales 0x38 = 2^(7-7) = 1, 0x7F = 0 (NaN code), 0x01 = 2^-9
     * (subnormal), 0xFF = 1.875 * 2^8 = 480 (bit 7 unused); sub-block s's
     * elements j and j + 8 are the nibbles of byte 4 + 8s + j */
    uint8_t nv[36] = {0x38, 0x7f, 0x01, 0xff, 0xd5};
    nv[4 + 8] = 0x77; nv[4 + 16] = 0x07; nv[4 + 24] = 0x02;
    traits(GGML_TYPE_NVFP4)->to_float(nv, y, 64);
    CHECK(y[0] == 3.0f && y[8] == -3.0f && y[16] == 0.0f && y[24] == 0.0f && y[32] == 6.0f * 0x1p-9f && y[48] == 480.0f,
          "NVFP4 by hand: %g %g %g %g %g", y[0], y[8], y[16], y[32], y[48]);
    /* Q1_0: d = 0.5; bit j of the 16 bytes: element j is +d when set */
    uint8_t q10[18] = {0x00, 0x38, 0x01};
    q10[2 + 15] = 0x80;
    traits(GGML_TYPE_Q1_0)->to_float(q10, y, 128);
    CHECK(y[0] == 0.5f && y[1] == -0.5f && y[127] == 0.5f && y[120] == -0.5f, "Q1_0 by hand");
    /* Q2_0: d = 2; byte 0 = 0b11100100: elements 0..3 are q = 0, 1, 2, 3 -> -2, 0, 2, 4 */
    uint8_t q20[18] = {0x00, 0x40, 0xe4};
    traits(GGML_TYPE_Q2_0)->to_float(q20, y, 64);
    CHECK(y[0] == -2.0f && y[1] == 0.0f && y[2] == 2.0f && y[3] == 4.0f && y[4] == -2.0f, "Q2_0 by hand");
    /* TQ2_0: d = 1 after 64 bytes; element 193 = 128 + 2*32 + 1: byte 33, bits 4-5 */
    uint8_t tq2[66] = {0};
    tq2[33] = 0x20; tq2[64] = 0x00; tq2[65] = 0x3c;
    traits(GGML_TYPE_TQ2_0)->to_float(tq2, y, 256);
    CHECK(y[193] == 1.0f && y[129] == -1.0f && y[0] == -1.0f, "TQ2_0 by hand");
    /* TQ1_0: d = 1 after 52 bytes. qs[5] holds trits (2,0,1,1,0) of elements
     * 5, 37, 69, 101, 133: T = 162 + 9 + 3 = 174, byte ceil(174 * 256 / 243)
     * = 184; qs[40] holds (0,0,0,0,2) of elements 168, 184, 200, 216, 232:
     * byte ceil(2 * 256 / 243) = 3; qh[2] holds (1,2,0,2) of elements 242,
     * 246, 250, 254, shifted one digit: T = 47 * 3 = 141, byte 149 */
    uint8_t tq1[54] = {0};
    tq1[5] = 184; tq1[40] = 3; tq1[48 + 2] = 149; tq1[52] = 0x00; tq1[53] = 0x3c;
    traits(GGML_TYPE_TQ1_0)->to_float(tq1, y, 256);
    CHECK(y[5] == 1.0f && y[37] == -1.0f && y[69] == 0.0f && y[101] == 0.0f && y[133] == -1.0f && y[168] == -1.0f &&
          y[232] == 1.0f && y[242] == 0.0f && y[246] == 1.0f && y[250] == -1.0f && y[254] == 1.0f && y[0] == -1.0f,
          "TQ1_0 by hand");
}

/* The quantizers' rounding rules, worked out by hand: NVFP4's UE4M3 scale
 * of amax / 6 rounds half up on the fp32 bits (1.0625 -> 1.125, byte 0x39),
 * a subnormal one to the nearest m * 2^-9 (3.5 -> 4), and clamps at 448
 * (0x7E); the ternary types and Q2_0 round x / amax halves away from zero. */
static void test_rounding_by_hand(void) {
    float x[256] = {0}, y[256];
    uint8_t q[66];   /* the largest block here: TQ2_0 */
    x[0] = 6.375f; x[16] = 6 * 3.5f * 0x1p-9f; x[32] = 6000.0f;
    quantize(GGML_TYPE_NVFP4, x, q, 64);
    CHECK(q[0] == 0x39 && q[1] == 0x04 && q[2] == 0x7e && q[3] == 0x00, "NVFP4 scales: %02x %02x %02x %02x", q[0], q[1], q[2], q[3]);
    static const enum ggml_type ternary[] = {GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0};
    for (int i = 0; i < 2; i++) {
        memset(x, 0, sizeof x);
        x[0] = 1.0f; x[1] = 0.5f; x[200] = -0.5f; x[250] = 0.49f;
        quantize(ternary[i], x, q, 256);
        traits(ternary[i])->to_float(q, y, 256);
        CHECK(y[0] == 1.0f && y[1] == 1.0f && y[200] == -1.0f && y[250] == 0.0f && y[2] == 0.0f, "%s: halves away from zero",
              ggml_type_name(ternary[i]));
    }
    memset(x, 0, sizeof x);
    x[0] = 2.0f; x[1] = 1.0f; x[2] = -1.0f; x[3] = 0.9f;
    quantize(GGML_TYPE_Q2_0, x, q, 64);
    traits(GGML_TYPE_Q2_0)->to_float(q, y, 64);
    CHECK(y[0] == 2.0f && y[1] == 2.0f && y[2] == -2.0f && y[3] == 0.0f, "Q2_0: halves away from zero");
}

/* the largest |level| and the distance from x to the nearest level of element e */
static double nearest_level(const struct fmt * f, const uint8_t * b, int e, double x, double * maxabs) {
    double best = INFINITY;
    *maxabs = 0;
    for (int q = 0; q < f->nq; q++) {
        const double v = decode(f->type, b, e, q);
        best = fmin(best, fabs(v - x));
        *maxabs = fmax(*maxabs, fabs(v));
    }
    return best;
}

static void fill(float * x, int n, int dist) {
    for (int i = 0; i < n; i++) {
        const double u = tc_uniform(-1, 1);
        x[i] = dist == 0 ? (float) u : dist == 1 ? (float) (u * u * u * 5) : dist == 2 ? (float) (u * 0.1 + 0.3)
             : (float) (u + (tc_randint(0, 49) == 0 ? 30 * u : 0));
    }
}

/* quantize -> dequantize: each value is its block's level nearest to the
 * input (within the fp16 rounding of the scale used to pick it: 2^-9 of the
 * grid's largest level; the inputs keep the scales normal fp16 numbers),
 * and the error is within the format's resolution */
static void test_round_trip(void) {
    enum { N = 4096 };
    float * x = malloc(sizeof(float) * N), * y = malloc(sizeof(float) * N);
    uint8_t * q = malloc(N * 2);
    for (int f = 0; f < NFMT; f++) {
        const struct fmt * ft = &fmts[f];
        const char * name = ggml_type_name(ft->type);
        int not_nearest = 0;
        for (int dist = 0; dist < 4; dist++) {
            fill(x, N, dist);
            quantize(ft->type, x, q, N);
            traits(ft->type)->to_float(q, y, N);
            double err2 = 0, x2 = 0;
            for (int i = 0; i < N; i++) {
                const uint8_t * b = q + (size_t) (i / ft->blck) * (size_t) ft->bytes;
                double maxabs;
                const double near = nearest_level(ft, b, i % ft->blck, x[i], &maxabs);
                /* IQ4_NL's chunk path re-picks with the unrounded scale; others likewise within fp16 */
                if (fabs((double) y[i] - x[i]) > near + maxabs * 0x1p-9 + 1e-30) {
                    if (not_nearest < 3) fprintf(stderr, "  %s dist %d element %d: x %.9g -> %.9g, a level %.3g nearer\n",
                                                 name, dist, i, x[i], y[i], fabs((double) y[i] - x[i]) - near);
                    not_nearest++;
                }
                err2 += ((double) y[i] - x[i]) * ((double) y[i] - x[i]);
                x2 += (double) x[i] * x[i];
            }
            if (dist == 0) {
                const double rel = sqrt(err2 / x2);
                CHECK(rel <= tc_quant_rms_bound(ft->type), "%s: relative RMS error %.4g > %.4g (uniform data)", name, rel, tc_quant_rms_bound(ft->type));
                printf("  %-7s relative RMS error %.5f (bound %.5f)\n", name, rel, tc_quant_rms_bound(ft->type));
            }
        }
        CHECK(not_nearest == 0, "%s: %d values are not their block's nearest level", name, not_nearest);
        if (ft->type == GGML_TYPE_Q8_K) {   /* bsums: the sums of 16 quants */
            int bad = 0;
            for (int blk = 0; blk < N / 256; blk++) {
                const uint8_t * b = q + blk * 292;
                for (int j = 0; j < 16; j++) {
                    int s = 0;
                    for (int i = 0; i < 16; i++) s += (int8_t) b[4 + 16 * j + i];
                    bad += (int16_t) (b[260 + 2 * j] | b[261 + 2 * j] << 8) != s;
                }
            }
            CHECK(bad == 0, "q8_K: %d bsums wrong", bad);
        }
        if (ft->type == GGML_TYPE_Q8_1) {   /* s = d * sum(q), in fp16 */
            int bad = 0;
            for (int blk = 0; blk < N / 32; blk++) {
                const uint8_t * b = q + blk * 36;
                int s = 0;
                for (int i = 0; i < 32; i++) s += (int8_t) b[4 + i];
                bad += fabs(h16(b + 2) - h16(b) * s) > fabs(h16(b) * s) * 0x1p-9;
            }
            CHECK(bad == 0, "q8_1: %d block sums wrong", bad);
        }
    }
    free(x); free(y); free(q);
}

/* Values on a block's grid with a power-of-two scale come back exactly. */
static void test_exact(void) {
    float x[256], y[256];
    uint8_t q[512];
    struct { enum ggml_type t; int n; } cases[] = {
        {GGML_TYPE_Q4_0, 32}, {GGML_TYPE_Q4_1, 32}, {GGML_TYPE_Q5_0, 32}, {GGML_TYPE_Q5_1, 32}, {GGML_TYPE_Q8_0, 32},
        {GGML_TYPE_Q8_1, 32}, {GGML_TYPE_Q8_K, 256}, {GGML_TYPE_IQ4_NL, 32}, {GGML_TYPE_IQ4_XS, 256}, {GGML_TYPE_MXFP4, 32},
        {GGML_TYPE_NVFP4, 64}, {GGML_TYPE_Q1_0, 128}, {GGML_TYPE_Q2_0, 64}, {GGML_TYPE_TQ1_0, 256}, {GGML_TYPE_TQ2_0, 256},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const enum ggml_type t = cases[c].t;
        const int n = cases[c].n;
        for (int i = 0; i < n; i++) {
            const int k = tc_randint(0, 1000);
            switch (t) {
                case GGML_TYPE_Q4_0: x[i] = 0.25f * (i == 3 ? -8 : k % 16 - 8); break;              /* -8 fixes d */
                case GGML_TYPE_Q5_0: x[i] = 0.125f * (i == 3 ? -16 : k % 32 - 16); break;
                case GGML_TYPE_Q4_1: x[i] = -3.0f + 0.5f * (i == 0 ? 0 : i == 1 ? 15 : k % 16); break; /* min and max fix d */
                case GGML_TYPE_Q5_1: x[i] = -3.0f + 0.25f * (i == 0 ? 0 : i == 1 ? 31 : k % 32); break;
                case GGML_TYPE_Q8_0: case GGML_TYPE_Q8_1: x[i] = 0.0625f * (i == 3 ? 127 : k % 255 - 127); break;
                case GGML_TYPE_Q8_K: x[i] = 0.0625f * (i == 3 ? -127 : k % 255 - 127); break;
                case GGML_TYPE_IQ4_NL: case GGML_TYPE_IQ4_XS: x[i] = 0.5f * (float) iq4_grid[i % 32 == 3 ? 0 : k % 16]; break;
                case GGML_TYPE_NVFP4: x[i] = (float) e2m1(i % 16 == 3 ? 7 : k % 16); break;   /* amax 6: scale 6 / 6 = 1 */
                case GGML_TYPE_Q1_0: x[i] = k % 2 ? 0.25f : -0.25f; break;                    /* mean |x| = 0.25 */
                case GGML_TYPE_Q2_0: case GGML_TYPE_TQ1_0: case GGML_TYPE_TQ2_0: x[i] = 0.5f * (float) (i == 3 ? 1 : k % 3 - 1); break;
                default: x[i] = 4.0f * (float) e2m1(i == 3 ? 6 : k % 16); break;                   /* MXFP4: amax 4*4 */
            }
        }
        quantize(t, x, q, n);
        traits(t)->to_float(q, y, n);
        int bad = 0;
        for (int i = 0; i < n; i++) bad += y[i] != x[i];
        CHECK(bad == 0, "%s: %d exactly representable values changed", ggml_type_name(t), bad);
    }
}

/* all-zero blocks give zeros; a scale past fp16's range gives non-finite
 * values, never finite wrong ones (as upstream); NaN and Inf inputs quantize
 * without undefined behaviour (the sanitizer stage runs this) */
static void test_edges(void) {
    float x[512], y[512];
    uint8_t q[1024];
    for (int f = 0; f < NFMT; f++) {
        const struct fmt * ft = &fmts[f];
        const char * name = ggml_type_name(ft->type);
        memset(x, 0, sizeof x);
        quantize(ft->type, x, q, 256);
        traits(ft->type)->to_float(q, y, 256);
        int nonzero = 0;
        for (int i = 0; i < 256; i++) nonzero += y[i] != 0.0f;
        CHECK(nonzero == 0, "%s: an all-zero block dequantizes to %d nonzero values", name, nonzero);
        for (int i = 0; i < 256; i++) x[i] = (float) tc_uniform(-1, 1);
        x[7] = NAN; x[40] = INFINITY; x[100] = -INFINITY; x[300 % 256] = NAN;
        quantize(ft->type, x, q, 256);
        traits(ft->type)->to_float(q, y, 256);
    }
    /* the legacy types' fp16 scale overflows for a block of 1e10: Inf * q */
    static const enum ggml_type legacy[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0};
    for (size_t i = 0; i < sizeof legacy / sizeof legacy[0]; i++) {
        for (int j = 0; j < 32; j++) x[j] = (float) (1e10 * tc_uniform(0.5, 1)) * (j % 2 ? 1 : -1);
        quantize(legacy[i], x, q, 32);
        traits(legacy[i])->to_float(q, y, 32);
        int finite_wrong = 0;
        for (int j = 0; j < 32; j++) finite_wrong += isfinite(y[j]) && fabsf(y[j] - x[j]) > 1e-2f * fabsf(x[j]);
        CHECK(finite_wrong == 0, "%s: %d finite values far from a 1e10 block", ggml_type_name(legacy[i]), finite_wrong);
    }
    /* Q8_K (float scale) and MXFP4 (8-bit exponent) hold huge blocks */
    for (int j = 0; j < 256; j++) x[j] = (float) (1e30 * tc_uniform(-1, 1));
    quantize(GGML_TYPE_Q8_K, x, q, 256);
    traits(GGML_TYPE_Q8_K)->to_float(q, y, 256);
    double worst = 0, amax = 0;
    for (int j = 0; j < 256; j++) { worst = fmax(worst, fabs((double) y[j] - x[j])); amax = fmax(amax, fabs(x[j])); }
    CHECK(worst <= amax / 127 * 0.5001, "q8_K keeps a block of 1e30: error %g", worst);
    quantize(GGML_TYPE_MXFP4, x, q, 256);
    traits(GGML_TYPE_MXFP4)->to_float(q, y, 256);
    int nonfinite = 0;
    for (int j = 0; j < 256; j++) nonfinite += !isfinite(y[j]);
    CHECK(nonfinite == 0, "mxfp4 keeps a block of 1e30 finite");
}

/* ggml_validate_row_data on the five newest types, as upstream checks them:
 * the fp16 scale of Q1_0, Q2_0, TQ1_0 and TQ2_0 must be finite; every
 * NVFP4 byte is valid (a UE4M3 scale has no Inf or NaN code here) */
static void test_validate_new_types(void) {
    static const struct { enum ggml_type t; int d_at; } cases[] = {
        {GGML_TYPE_Q1_0, 0}, {GGML_TYPE_Q2_0, 0}, {GGML_TYPE_TQ1_0, 52}, {GGML_TYPE_TQ2_0, 64}, {GGML_TYPE_NVFP4, -1}};
    float x[512];
    uint8_t q[1024];
    for (int i = 0; i < 512; i++) x[i] = (float) tc_uniform(-1, 1);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const enum ggml_type t = cases[c].t;
        const size_t n = ggml_row_size(t, 512);
        quantize(t, x, q, 512);
        CHECK(ggml_validate_row_data(t, q, n), "%s: quantized data is valid: %s", ggml_type_name(t), ggml_last_error());
        CHECK(!ggml_validate_row_data(t, q, n - 1), "%s: a partial block is refused", ggml_type_name(t));
        if (cases[c].d_at >= 0) {
            q[ggml_type_size(t) + (size_t) cases[c].d_at] = 0x00;   /* the second block's scale: NaN (0x7e00) */
            q[ggml_type_size(t) + (size_t) cases[c].d_at + 1] = 0x7e;
            CHECK(!ggml_validate_row_data(t, q, n) && strstr(ggml_last_error(), ggml_type_name(t)), "%s: a NaN scale is refused: %s",
                  ggml_type_name(t), ggml_last_error());
        } else {
            memset(q, 0xff, n);
            CHECK(ggml_validate_row_data(t, q, n), "%s: every byte is valid", ggml_type_name(t));
        }
    }
}

/* ggml_quantize_chunk: offsets, sizes and refusals */
static void test_chunk(void) {
    enum { ROWS = 4, COLS = 512 };
    float x[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++) x[i] = (float) tc_uniform(-2, 2);
    uint8_t whole[ROWS * COLS * 4 + 1], part[ROWS * COLS * 4 + 1];
    static const enum ggml_type types[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0, GGML_TYPE_Q5_1,
                                           GGML_TYPE_Q8_0, GGML_TYPE_Q3_K, GGML_TYPE_Q6_K, GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS,
                                           GGML_TYPE_MXFP4, GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_TQ1_0,
                                           GGML_TYPE_TQ2_0};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        const enum ggml_type t = types[i];
        const size_t rs = ggml_row_size(t, COLS);
        memset(whole, 0xaa, sizeof whole); memset(part, 0x55, sizeof part);
        const size_t n1 = ggml_quantize_chunk(t, x, whole, 0, ROWS, COLS, NULL);
        /* rows 0-1 and 2-3 in two calls, the second at start = 2 rows */
        const size_t n2 = ggml_quantize_chunk(t, x, part, 0, 2, COLS, NULL) + ggml_quantize_chunk(t, x, part, 2 * COLS, 2, COLS, NULL);
        CHECK(n1 == ROWS * rs && n2 == n1 && memcmp(whole, part, n1) == 0 && whole[n1] == 0xaa,
              "%s: chunks at row offsets give the same bytes, nothing past the end", ggml_type_name(t));
    }
    /* F16 / BF16 / F32 rows are the plain conversions */
    ggml_quantize_chunk(GGML_TYPE_BF16, x, part, 0, 1, COLS, NULL);
    CHECK(((ggml_bf16_t *) part)[5].bits == ggml_fp32_to_bf16(x[5]).bits, "BF16 chunk");
    ggml_quantize_chunk(GGML_TYPE_F16, x, part, 0, 1, COLS, NULL);
    CHECK(((ggml_fp16_t *) part)[9] == ggml_fp32_to_fp16(x[9]), "F16 chunk");
    /* importance matrix: used by the legacy 4/5-bit, K and IQ4 types, ignored by Q8_0 (as upstream) */
    float imat[COLS];
    for (int i = 0; i < COLS; i++) imat[i] = (float) tc_uniform(0.01, 3);
    ggml_quantize_chunk(GGML_TYPE_Q8_0, x, whole, 0, 1, COLS, NULL);
    CHECK(ggml_quantize_chunk(GGML_TYPE_Q8_0, x, part, 0, 1, COLS, imat) == ggml_row_size(GGML_TYPE_Q8_0, COLS) &&
          memcmp(whole, part, ggml_row_size(GGML_TYPE_Q8_0, COLS)) == 0, "Q8_0 ignores an imatrix (as upstream)");
    /* so do NVFP4, Q1_0, Q2_0, TQ1_0 and TQ2_0, whose rows are the reference
     * quantizer's; and each refuses a row of partial blocks with a message */
    static const struct { enum ggml_type t; int64_t odd; } plain[] = {
        {GGML_TYPE_NVFP4, 96}, {GGML_TYPE_Q1_0, 192}, {GGML_TYPE_Q2_0, 32}, {GGML_TYPE_TQ1_0, 384}, {GGML_TYPE_TQ2_0, 128}};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        const enum ggml_type t = plain[i].t;
        const size_t rs = ggml_row_size(t, COLS);
        ggml_get_type_traits(t)->from_float_ref(x, whole, 2 * COLS);
        CHECK(ggml_quantize_chunk(t, x, part, 0, 2, COLS, imat) == 2 * rs && memcmp(whole, part, 2 * rs) == 0,
              "%s: chunk with an imatrix is the reference quantizer's bytes", ggml_type_name(t));
        CHECK(ggml_quantize_chunk(t, x, part, 0, 1, plain[i].odd, NULL) == 0 && strstr(ggml_last_error(), "multiple") &&
              strstr(ggml_last_error(), ggml_type_name(t)), "%s: a row of %lld refused: %s", ggml_type_name(t),
              (long long) plain[i].odd, ggml_last_error());
        struct ggml_context * ctx = tc_ctx(1);
        CHECK(!ggml_new_tensor_2d(ctx, t, plain[i].odd, 2) && strstr(ggml_last_error(), ggml_type_name(t)),
              "%s: a tensor of %lld columns refused: %s", ggml_type_name(t), (long long) plain[i].odd, ggml_last_error());
        ggml_free(ctx);
    }
    ggml_quantize_chunk(GGML_TYPE_IQ4_XS, x, whole, 0, 1, COLS, NULL);
    CHECK(ggml_quantize_chunk(GGML_TYPE_IQ4_XS, x, part, 0, 1, COLS, imat) == ggml_row_size(GGML_TYPE_IQ4_XS, COLS) &&
          memcmp(whole, part, ggml_row_size(GGML_TYPE_IQ4_XS, COLS)) != 0, "IQ4_XS uses an imatrix");
    ggml_quantize_chunk(GGML_TYPE_Q5_1, x, whole, 0, 1, COLS, NULL);
    CHECK(ggml_quantize_chunk(GGML_TYPE_Q5_1, x, part, 0, 1, COLS, imat) == ggml_row_size(GGML_TYPE_Q5_1, COLS) &&
          memcmp(whole, part, ggml_row_size(GGML_TYPE_Q5_1, COLS)) != 0, "Q5_1 uses an imatrix");
    /* the weighted paths stay within the format's resolution (x uniform in [-2, 2]) */
    static const enum ggml_type weighted[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q2_K,
                                              GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
                                              GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS};
    for (size_t i = 0; i < sizeof weighted / sizeof weighted[0]; i++) {
        float y[ROWS * COLS];
        CHECK(ggml_quantize_chunk(weighted[i], x, part, 0, ROWS, COLS, imat) == ROWS * ggml_row_size(weighted[i], COLS),
              "%s with an imatrix", ggml_type_name(weighted[i]));
        traits(weighted[i])->to_float(part, y, ROWS * COLS);
        double e2 = 0, x2 = 0;
        for (int j = 0; j < ROWS * COLS; j++) { e2 += ((double) y[j] - x[j]) * ((double) y[j] - x[j]); x2 += (double) x[j] * x[j]; }
        CHECK(sqrt(e2 / x2) <= tc_quant_rms_bound(weighted[i]), "%s with an imatrix: relative RMS error %.4g",
              ggml_type_name(weighted[i]), sqrt(e2 / x2));
    }
    ggml_quantize_chunk(GGML_TYPE_Q4_K, x, whole, 0, 1, COLS, NULL);
    ggml_quantize_chunk(GGML_TYPE_Q4_K, x, part, 0, 1, COLS, imat);
    CHECK(memcmp(whole, part, ggml_row_size(GGML_TYPE_Q4_K, COLS)) != 0, "Q4_K uses an imatrix");
    CHECK(ggml_quantize_chunk(GGML_TYPE_Q4_0, x, part, 0, 1, 100, NULL) == 0 && strstr(ggml_last_error(), "multiple"), "n_per_row not whole blocks");
    CHECK(ggml_quantize_chunk(GGML_TYPE_Q4_0, x, part, 32, 1, COLS, NULL) == 0 && strstr(ggml_last_error(), "start"), "start inside a row");
    CHECK(ggml_quantize_chunk(GGML_TYPE_Q8_K, x, part, 0, 1, COLS, NULL) == 0, "Q8_K has no chunk path (as upstream)");
    CHECK(ggml_quantize_chunk(GGML_TYPE_IQ2_XXS, x, part, 0, 1, COLS, imat) == 0 && strstr(ggml_last_error(), "iq2_xxs"), "IQ2_XXS refused");
    CHECK(ggml_quantize_chunk(GGML_TYPE_Q4_0, NULL, part, 0, 1, COLS, NULL) == 0, "NULL src refused");
    ggml_quantize_init(GGML_TYPE_Q4_0);
    ggml_quantize_free();
}

int main(void) {
    tc_seed(20261204);
    test_type_table();
    test_tensors();
    test_bf16();
    test_decode_random();
    test_decode_by_hand();
    test_rounding_by_hand();
    test_round_trip();
    test_exact();
    test_edges();
    test_chunk();
    test_validate_new_types();
    return tc_finish("quant");
}

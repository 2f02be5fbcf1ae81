#!/bin/sh
# compare-upstream-quants.sh -- byte identity with upstream ggml, out of tree.
#
# Builds upstream's src/ggml-quants.c (from a snapshot: a bare git dir, by
# default the mirror below) as upstream builds ggml-base (plain -O2, no
# -march, so no FMA and no F16C), links it with this library's static build
# into two small programs made in a temporary directory, and runs them:
#   compare       the same inputs (8 distributions, 8 rows of 4096) through
#                 upstream's quantize_<type> (ggml_quantize_chunk's path),
#                 quantize_row_<type>_ref and dequantize_row_<type>, and through
#                 ggml_quantize_chunk, from_float_ref and to_float here:
#                 bytes per block and floats bit for bit; with an importance
#                 matrix too for Q4_0..Q5_1, Q2_K..Q6_K, IQ4_NL, IQ4_XS (and
#                 for NVFP4, Q1_0, Q2_0, TQ1_0, TQ2_0, which ignore it); the
#                 last five also on a ninth input with NaN, Inf and 1e38
#   compare_conv  every float bit pattern through upstream's and this
#                 library's fp32->bf16 and fp32->fp16, every half back
# Nothing of upstream is copied into the repository. Usage, from the
# repository root after building build/:
#   ./scripts/compare-upstream-quants.sh [UPSTREAM_GIT_DIR] [BUILD_DIR]
set -eu
UP_GIT=${1:-/work/.mirror/ggml-org+ggml/repo}
BUILD=$(cd "${2:-build}" && pwd)
ROOT=$(pwd)
W=$(mktemp -d /tmp/ggmlr-upstream-quants.XXXXXX)
for f in src/ggml-common.h src/ggml-quants.c src/ggml-quants.h src/ggml-impl.h src/ggml-cpu/ggml-cpu-impl.h \
         include/ggml.h include/ggml-cpu.h include/ggml-backend.h include/ggml-alloc.h include/gguf.h; do
  mkdir -p "$W/up/$(dirname $f)"
  git --git-dir="$UP_GIT" show HEAD:$f > "$W/up/$f"
done
echo "upstream: $(git --git-dir="$UP_GIT" log -1 --format='%H %ad')"
cd "$W"
cat > upstream_conv.c <<'C'
/* upstream's scalar conversions (ggml-impl.h, compiled as ggml-base is: no F16C) */
#include "ggml-impl.h"
uint16_t up_fp32_to_bf16(float x) { return ggml_compute_fp32_to_bf16(x).bits; }
float    up_bf16_to_fp32(uint16_t h) { ggml_bf16_t b = {h}; return ggml_compute_bf16_to_fp32(b); }
uint16_t up_fp32_to_fp16(float x) { return GGML_FP32_TO_FP16(x); }
float    up_fp16_to_fp32(uint16_t h) { return GGML_FP16_TO_FP32(h); }
C
cat > compare.c <<'C'
/* Quantizes the same inputs with upstream's ggml-quants.c and with ggmlr;
 * compares bytes (ggml_quantize_chunk path and from_float_ref path) and the
 * dequantized floats bit for bit. */
#include "ggml.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UP(t) \
    void quantize_row_##t##_ref(const float *, void *, int64_t); \
    size_t quantize_##t(const float *, void *, int64_t, int64_t, const float *); \
    void dequantize_row_##t(const void *, float *, int64_t);
UP(q4_0) UP(q4_1) UP(q5_0) UP(q5_1) UP(q8_0) UP(q2_K) UP(q3_K) UP(q4_K) UP(q5_K) UP(q6_K) UP(iq4_nl) UP(iq4_xs) UP(mxfp4)
UP(nvfp4) UP(q1_0) UP(q2_0) UP(tq1_0) UP(tq2_0)
void quantize_row_q8_1_ref(const float *, void *, int64_t);
void quantize_row_q8_K_ref(const float *, void *, int64_t);
void dequantize_row_q8_K(const void *, float *, int64_t);

/* the library's own rows of the traits (src/quant/traits.c): the public
 * table, as upstream's, leaves Q8_K without converters */
const struct ggml_type_traits * ggmlr_type_traits_own(enum ggml_type type);

typedef void (*qref_t)(const float *, void *, int64_t);
typedef size_t (*qchunk_t)(const float *, void *, int64_t, int64_t, const float *);
typedef void (*deq_t)(const void *, float *, int64_t);
struct row { enum ggml_type type; qref_t ref; qchunk_t chunk; deq_t deq; };
#define R(T, t) {GGML_TYPE_##T, quantize_row_##t##_ref, quantize_##t, dequantize_row_##t}
static const struct row rows[] = {
    R(Q4_0, q4_0), R(Q4_1, q4_1), R(Q5_0, q5_0), R(Q5_1, q5_1), R(Q8_0, q8_0),
    {GGML_TYPE_Q8_1, quantize_row_q8_1_ref, NULL, NULL},
    R(Q2_K, q2_K), R(Q3_K, q3_K), R(Q4_K, q4_K), R(Q5_K, q5_K), R(Q6_K, q6_K),
    {GGML_TYPE_Q8_K, quantize_row_q8_K_ref, NULL, dequantize_row_q8_K},
    R(IQ4_NL, iq4_nl), R(IQ4_XS, iq4_xs), R(MXFP4, mxfp4),
    R(NVFP4, nvfp4), R(Q1_0, q1_0), R(Q2_0, q2_0), R(TQ1_0, tq1_0), R(TQ2_0, tq2_0),
};

/* the types whose quantizers are also compared on non-finite input */
static int hostile(enum ggml_type t) {
    return t == GGML_TYPE_NVFP4 || t == GGML_TYPE_Q1_0 || t == GGML_TYPE_Q2_0 || t == GGML_TYPE_TQ1_0 || t == GGML_TYPE_TQ2_0;
}

/* the types whose importance-matrix path is implemented here */
static int with_imatrix(enum ggml_type t) {
    return t == GGML_TYPE_Q4_0 || t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_0 || t == GGML_TYPE_Q5_1 ||
           t == GGML_TYPE_Q2_K || t == GGML_TYPE_Q3_K || t == GGML_TYPE_Q4_K || t == GGML_TYPE_Q5_K || t == GGML_TYPE_Q6_K ||
           t == GGML_TYPE_IQ4_NL || t == GGML_TYPE_IQ4_XS || hostile(t);   /* the last five ignore it, as upstream */
}

static uint64_t rng = 88172645463325252ull;
static double urand(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (rng >> 11) * (1.0 / 9007199254740992.0); }

/* distribution d of row r */
static void fill(float * x, int64_t n, int d) {
    for (int64_t i = 0; i < n; i++) {
        double u = urand() * 2 - 1;
        switch (d) {
            case 0: x[i] = (float) u; break;                                   /* uniform */
            case 1: x[i] = (float) (u * u * u * 3.0); break;                   /* peaked */
            case 2: x[i] = (float) (u + (urand() < 0.02 ? 40 * u : 0)); break;  /* outliers */
            case 3: x[i] = (float) (u * 1e-3 + 2e-3); break;                    /* small, one-signed */
            case 4: x[i] = (float) (u * 3e4); break;                            /* large */
            case 5: x[i] = (i / 32) % 3 == 0 ? 0.0f : (float) u; break;         /* zero 32-runs */
            case 6: x[i] = (i / 256) % 2 == 0 ? 0.5f : (float) u; break;        /* constant super-blocks */
            case 7: x[i] = (float) (sin(i * 0.37) * (1 + (i % 7))); break;      /* smooth */
            default: {                                                          /* non-finite and huge values */
                const double r = urand();
                x[i] = r < 0.01 ? NAN : r < 0.02 ? INFINITY : r < 0.03 ? -INFINITY : r < 0.05 ? (float) (u * 1e38) : (float) u;
            }
        }
    }
}

int main(void) {
    const int64_t n_per_row = 4096, nrows = 8, n = n_per_row * nrows;
    const int ndist = 8;
    float * x = malloc(sizeof(float) * n), * ya = malloc(sizeof(float) * n), * yb = malloc(sizeof(float) * n);
    float * imat = malloc(sizeof(float) * n_per_row);
    for (int64_t i = 0; i < n_per_row; i++) imat[i] = (float) (0.1 + urand());
    uint8_t * a = malloc(n * 4), * b = malloc(n * 4);
    int bad_types = 0;
    for (size_t t = 0; t < sizeof rows / sizeof rows[0]; t++) {
        const struct row * rw = &rows[t];
        const struct ggml_type_traits * tt = ggmlr_type_traits_own(rw->type);
        const size_t bytes = ggml_row_size(rw->type, n_per_row) * nrows;
        long zero_ref = 0, diff_chunk = 0, diff_ref = 0, diff_deq = 0, diff_imat = 0, blocks = 0;
        for (int d = 0; d < ndist + hostile(rw->type); d++) {
            fill(x, n, d);
            const size_t bs = ggml_type_size(rw->type);
            blocks += bytes / bs;
            /* chunk path */
            if (rw->chunk) {
                memset(a, 0, bytes); memset(b, 0, bytes);
                rw->chunk(x, a, nrows, n_per_row, NULL);
                size_t got = ggml_quantize_chunk(rw->type, x, b, 0, nrows, n_per_row, NULL);
                if (got != bytes) { printf("%s: chunk returned %zu, want %zu (%s)\n", tt->type_name, got, bytes, ggml_last_error()); bad_types++; }
                for (size_t k = 0; k < bytes; k += bs) diff_chunk += memcmp(a + k, b + k, bs) != 0;
                if (rw->deq && tt->to_float) {
                    rw->deq(a, ya, n);
                    tt->to_float(a, yb, n);
                    for (int64_t i = 0; i < n; i++) diff_deq += memcmp(&ya[i], &yb[i], 4) != 0;
                }
                /* importance matrix where implemented here */
                if (with_imatrix(rw->type)) {
                    memset(a, 0, bytes); memset(b, 0, bytes);
                    rw->chunk(x, a, nrows, n_per_row, imat);
                    ggml_quantize_chunk(rw->type, x, b, 0, nrows, n_per_row, imat);
                    for (size_t k = 0; k < bytes; k += bs) diff_imat += memcmp(a + k, b + k, bs) != 0;
                }
            }
            /* reference row path (from_float_ref) */
            memset(a, 0, bytes); memset(b, 0, bytes);
            rw->ref(x, a, n);
            tt->from_float_ref(x, b, n);
            for (size_t k = 0; k < bytes; k += bs) {
                if (memcmp(a + k, b + k, bs) == 0) continue;
                diff_ref++;
                /* a block whose input is all zero: upstream's IQ4_NL reference path leaves its indices as they were */
                const int64_t e0 = (int64_t) (k / bs) * ggml_blck_size(rw->type);
                int zero = 1;
                for (int64_t e = 0; e < ggml_blck_size(rw->type); e++) zero &= x[e0 + e] == 0.0f;
                zero_ref += zero;
            }
            if (!rw->chunk && rw->deq) {
                rw->deq(a, ya, n);
                tt->to_float(a, yb, n);
                for (int64_t i = 0; i < n; i++) diff_deq += memcmp(&ya[i], &yb[i], 4) != 0;
            }
        }
        /* random bytes (every field, NaN and Inf scales included) through both dequantizers */
        long diff_random = 0;
        if (rw->deq) {
            for (size_t k = 0; k < bytes; k++) a[k] = (uint8_t) (urand() * 256);
            rw->deq(a, ya, n);
            tt->to_float(a, yb, n);
            for (int64_t i = 0; i < n; i++) diff_random += memcmp(&ya[i], &yb[i], 4) != 0;
        }
        /* upstream's IQ4_NL reference path leaves an all-zero block's indices
         * as the previous block's (uninitialised for the first): not comparable */
        const bool zero_only = rw->type == GGML_TYPE_IQ4_NL && diff_ref == zero_ref;
        const bool ok = !diff_chunk && (!diff_ref || zero_only) && !diff_deq && !diff_imat && !diff_random;
        if (!ok) bad_types++;
        printf("%-7s %6ld blocks: chunk %s, ref %s, dequant %s%s%s\n", tt->type_name, blocks,
               rw->chunk ? (diff_chunk ? "DIFFERS" : "identical") : "n/a (upstream has none)",
               !diff_ref ? "identical" : zero_only ? "identical but for all-zero blocks (upstream: leftover indices)" : "DIFFERS",
               rw->deq ? (diff_deq ? "DIFFERS" : "identical") : "n/a",
               with_imatrix(rw->type) ? (diff_imat ? ", imatrix DIFFERS" : ", imatrix identical") : "",
               rw->deq ? (diff_random ? ", random blocks DIFFER" : ", random blocks identical") : "");
        if (!ok) printf("        differing blocks: chunk %ld ref %ld (%ld of them all-zero input), floats %ld, imatrix %ld, random-block floats %ld\n", diff_chunk, diff_ref, zero_ref, diff_deq, diff_imat, diff_random);
    }
    /* BF16 against upstream's formula is checked in the library's tests (no upstream symbol here) */
    printf("%s\n", bad_types ? "SOME TYPES DIFFER" : "all types identical");
    return bad_types != 0;
}
C
cat > compare_conv.c <<'C'
/* every float bit pattern through upstream's and ggmlr's bf16 / fp16 conversions */
#include "ggml.h"
#include <stdio.h>
#include <string.h>
uint16_t up_fp32_to_bf16(float x); float up_bf16_to_fp32(uint16_t h);
uint16_t up_fp32_to_fp16(float x); float up_fp16_to_fp32(uint16_t h);
int main(void) {
    unsigned long bf_diff = 0, bf_nan_diff = 0, f16_diff = 0, f16_nan_diff = 0, back_bf = 0, back_f16 = 0;
    for (uint64_t u = 0; u <= 0xffffffffull; u++) {
        uint32_t b = (uint32_t) u; float x; memcpy(&x, &b, 4);
        const int nan = x != x;
        if (up_fp32_to_bf16(x) != ggml_fp32_to_bf16(x).bits) { if (nan) bf_nan_diff++; else bf_diff++; }
        if (up_fp32_to_fp16(x) != ggml_fp32_to_fp16(x)) { if (nan) f16_nan_diff++; else f16_diff++; }
    }
    for (uint32_t h = 0; h <= 0xffff; h++) {
        ggml_bf16_t bh = {(uint16_t) h};
        float a = up_bf16_to_fp32((uint16_t) h), c = ggml_bf16_to_fp32(bh);
        if (memcmp(&a, &c, 4)) back_bf++;
        a = up_fp16_to_fp32((uint16_t) h); c = ggml_fp16_to_fp32((uint16_t) h);
        if (memcmp(&a, &c, 4)) back_f16++;
    }
    printf("fp32->bf16: %lu non-NaN inputs differ, %lu NaN inputs differ (of 2^32)\n", bf_diff, bf_nan_diff);
    printf("fp32->fp16: %lu non-NaN inputs differ, %lu NaN inputs differ (of 2^32)\n", f16_diff, f16_nan_diff);
    printf("bf16->fp32: %lu of 65536 differ; fp16->fp32: %lu of 65536 differ\n", back_bf, back_f16);
    return 0;
}
C
# upstream's ggml_validate_row_data renamed, so that this library's links; its
# ggml_abort (for upstream's asserts) is this library's
gcc -O2 -std=gnu11 -c up/src/ggml-quants.c -Iup/include -Iup/src -Dggml_validate_row_data=up_ggml_validate_row_data \
    -o upstream_quants.o
gcc -O2 -std=gnu11 -c upstream_conv.c -Iup/include -Iup/src -o upstream_conv.o
gcc -O2 -std=c11 -I"$ROOT/include" compare.c upstream_quants.o "$BUILD/libggmlr.a" -lm -lpthread -o compare
gcc -O2 -std=c11 -I"$ROOT/include" compare_conv.c upstream_conv.o "$BUILD/libggmlr.a" -lm -lpthread -o compare_conv
status=0
./compare || status=1
./compare_conv
rm -rf "$W"
exit $status

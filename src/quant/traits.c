/* traits.c -- the table of tensor types by upstream's number: name, block
 * size, bytes per block, and the row converters of the types implemented
 * here. Types this library only names (IQ1/IQ2/IQ3, F64) have their
 * sizes, so that GGUF files holding them can be read for their metadata,
 * and no converters. Numbers upstream removed have
 * no row (blck_size 0): an unknown type. */
#include "quant/quant.h"
#include "core/fp16.h"   /* the portable F16 row converters (core/fp16.c), not cpu/simd's */

#include <stddef.h>

#define TYPE(T, name, blck, size)  [GGML_TYPE_##T] = {.type_name = name, .blck_size = blck, .type_size = size}
#define QUANT(T, name, blck, block, fn)                                                     \
    [GGML_TYPE_##T] = {.type_name = name, .blck_size = blck, .type_size = sizeof(block),  \
                       .is_quantized = true, .to_float = ggmlr_dequantize_row_##fn,      \
                       .from_float_ref = ggmlr_quantize_row_##fn}
#define NAMED(T, name, size)  [GGML_TYPE_##T] = {.type_name = name, .blck_size = QK_K, .type_size = size, .is_quantized = true}

static void fp16_to_float(const void * x, float * y, int64_t k) { ggmlr_fp16_to_fp32_row_scalar(x, y, k); }
static void float_to_fp16(const float * x, void * y, int64_t k) { ggmlr_fp32_to_fp16_row_scalar(x, y, k); }

static const struct ggml_type_traits traits[GGML_TYPE_COUNT] = {
    TYPE(F32, "f32", 1, 4),
    [GGML_TYPE_F16]  = {.type_name = "f16", .blck_size = 1, .type_size = 2, .to_float = fp16_to_float, .from_float_ref = float_to_fp16},
    [GGML_TYPE_BF16] = {.type_name = "bf16", .blck_size = 1, .type_size = 2, .to_float = ggmlr_bf16_to_float_row,
                        .from_float_ref = ggmlr_float_to_bf16_row},
    TYPE(I8, "i8", 1, 1),
    TYPE(I16, "i16", 1, 2),
    TYPE(I32, "i32", 1, 4),
    TYPE(I64, "i64", 1, 8),
    TYPE(F64, "f64", 1, 8),
    QUANT(Q4_0, "q4_0", QK4_0, block_q4_0, q4_0),
    QUANT(Q4_1, "q4_1", QK4_1, block_q4_1, q4_1),
    QUANT(Q5_0, "q5_0", QK5_0, block_q5_0, q5_0),
    QUANT(Q5_1, "q5_1", QK5_1, block_q5_1, q5_1),
    QUANT(Q8_0, "q8_0", QK8_0, block_q8_0, q8_0),
    QUANT(Q8_1, "q8_1", QK8_1, block_q8_1, q8_1),
    QUANT(Q2_K, "q2_K", QK_K, block_q2_K, q2_K),
    QUANT(Q3_K, "q3_K", QK_K, block_q3_K, q3_K),
    QUANT(Q4_K, "q4_K", QK_K, block_q4_K, q4_K),
    QUANT(Q5_K, "q5_K", QK_K, block_q5_K, q5_K),
    QUANT(Q6_K, "q6_K", QK_K, block_q6_K, q6_K),
    QUANT(Q8_K, "q8_K", QK_K, block_q8_K, q8_K),
    QUANT(IQ4_NL, "iq4_nl", QK4_NL, block_iq4_nl, iq4_nl),
    QUANT(IQ4_XS, "iq4_xs", QK_K, block_iq4_xs, iq4_xs),
    QUANT(MXFP4, "mxfp4", QK_MXFP4, block_mxfp4, mxfp4),
    QUANT(NVFP4, "nvfp4", QK_NVFP4, block_nvfp4, nvfp4),
    QUANT(Q1_0, "q1_0", QK1_0, block_q1_0, q1_0),
    QUANT(Q2_0, "q2_0", QK2_0, block_q2_0, q2_0),
    QUANT(TQ1_0, "tq1_0", QK_K, block_tq1_0, tq1_0),
    QUANT(TQ2_0, "tq2_0", QK_K, block_tq2_0, tq2_0),
    /* named only: upstream's block sizes (ggml-common.h) */
    NAMED(IQ2_XXS, "iq2_xxs", 66),
    NAMED(IQ2_XS, "iq2_xs", 74),
    NAMED(IQ3_XXS, "iq3_xxs", 98),
    NAMED(IQ1_S, "iq1_s", 50),
    NAMED(IQ3_S, "iq3_s", 110),
    NAMED(IQ2_S, "iq2_s", 82),
    NAMED(IQ1_M, "iq1_m", 56),
};

/* What upstream's table (src/ggml.c) gives the two activation types: Q8_1
 * a reference quantizer and no dequantizer, Q8_K neither (its quantizer is
 * the CPU traits' from_float). Upstream programs such as test-quantize-fns
 * skip a type without to_float; ggmlr's own rows above keep both
 * converters (ggmlr_type_traits_own) for its kernels and tests. */
static const struct ggml_type_traits q8_1_public = {.type_name = "q8_1", .blck_size = QK8_1, .type_size = sizeof(block_q8_1),
                                                    .is_quantized = true, .from_float_ref = ggmlr_quantize_row_q8_1};
static const struct ggml_type_traits q8_K_public = {.type_name = "q8_K", .blck_size = QK_K, .type_size = sizeof(block_q8_K),
                                                    .is_quantized = true};

const struct ggml_type_traits * ggml_get_type_traits(enum ggml_type type) {
    if (type == GGML_TYPE_Q8_1) return &q8_1_public;
    if (type == GGML_TYPE_Q8_K) return &q8_K_public;
    return (unsigned) type < GGML_TYPE_COUNT ? &traits[type] : NULL;
}

const struct ggml_type_traits * ggmlr_type_traits_own(enum ggml_type type) {
    return (unsigned) type < GGML_TYPE_COUNT ? &traits[type] : NULL;
}

/* 0 / "unsupported" for a number out of range or removed upstream */
size_t  ggml_type_size(enum ggml_type type) { return (unsigned) type < GGML_TYPE_COUNT ? traits[type].type_size : 0; }
int64_t ggml_blck_size(enum ggml_type type) { return (unsigned) type < GGML_TYPE_COUNT ? traits[type].blck_size : 0; }
bool    ggml_is_quantized(enum ggml_type type) { return (unsigned) type < GGML_TYPE_COUNT && traits[type].is_quantized; }

const char * ggml_type_name(enum ggml_type type) {
    return (unsigned) type < GGML_TYPE_COUNT && traits[type].type_name ? traits[type].type_name : "unsupported";
}

/* upstream asserts ne % blck_size == 0; here a partial block counts as none */
size_t ggml_row_size(enum ggml_type type, int64_t ne) {
    const int64_t blck = ggml_blck_size(type);
    return blck > 0 && ne > 0 ? ggml_type_size(type) * (size_t) (ne / blck) : 0;
}

/* A type with a known block layout: its tensors can be created, viewed,
 * copied byte for byte and stored in GGUF even where nothing here can
 * convert them (the named-only types); computing with them is refused. */
bool ggmlr_type_has_layout(enum ggml_type type) { return ggml_type_size(type) > 0 && ggml_blck_size(type) > 0; }

bool ggmlr_type_is_supported(enum ggml_type type) {
    return type == GGML_TYPE_F32 || type == GGML_TYPE_I32 || type == GGML_TYPE_I16 || type == GGML_TYPE_I8 || type == GGML_TYPE_I64 ||
           (ggmlr_type_traits_own(type) && ggmlr_type_traits_own(type)->to_float);
}

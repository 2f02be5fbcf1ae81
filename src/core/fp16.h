/* fp16.h -- the portable fp16 row converters of core/fp16.c (the element
 * converters ggml_fp16_to_fp32 / ggml_fp32_to_fp16 are ggml.h's). Included by
 * quant/traits.c (the F16 type's converters), which sits beside core and
 * must not reach the SIMD ones; cpu/simd/ adds the F16C pair and picks the
 * one of the SIMD path in use (ggml_fp16_to_fp32_row etc.). */
#ifndef GGMLR_CORE_FP16_H
#define GGMLR_CORE_FP16_H

#include "ggml.h"

void ggmlr_fp16_to_fp32_row_scalar(const ggml_fp16_t * x, float * y, int64_t n);
void ggmlr_fp32_to_fp16_row_scalar(const float * x, ggml_fp16_t * y, int64_t n);

#endif

/* nvfp4.c -- NVFP4 (NVIDIA's FP4): blocks of 64 FP4 E2M1 values in four
 * sub-blocks of 16, each with its own UE4M3 scale (unsigned FP8: 4 exponent
 * bits, bias 7, 3 mantissa bits; exponent 0 subnormal, man * 2^-9):
 *   x[16s + j] = UE4M3(d[s]) * E2M1(q),
 * element j < 8 of sub-block s in the low nibble of qs[8s + j], element
 * j + 8 in the high one. As upstream, the byte 0x7F (E4M3's NaN) reads as 0
 * and bit 7 is otherwise ignored (0xFF reads as 0x7F would without the NaN
 * rule: 480).
 *
 * Quantizer (upstream's): per sub-block, d = UE4M3(amax / 6) rounded to the
 * nearest with ties away from zero (on the fp32 bits: the 4th dropped
 * mantissa bit decides; clamped to 448, the largest finite), so that the
 * largest level 6 * d is near amax; then each element goes to the nearest
 * level (e2m1.h). */
#include "quant/e2m1.h"
#include "quant/quant.h"

#include <math.h>
#include <string.h>

/* half the UE4M3 value of u (the E2M1 levels are doubled) */
static float ue4m3_half(uint8_t u) {
    if (u == 0 || u == 0x7f) return 0.0f;
    const int ex = u >> 3 & 15, man = u & 7;
    const float v = ex == 0 ? ldexpf((float) man, -9) : ldexpf(1.0f + (float) man / 8.0f, ex - 7);
    return v * 0.5f;
}

static uint8_t ue4m3_from_float(float x) {
    if (!(x > 0.0f)) return 0;   /* zero, negative, NaN */
    if (x > 448.0f) x = 448.0f;
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    int ex = (int) (bits >> 23 & 0xff) - 127 + 7;
    if (ex <= 0) {   /* below 2^-6: the subnormal man * 2^-9, man = round(x * 2^9) with halves up */
        const int man = (int) (x * 512.0f + 0.5f);
        return man < 1 ? 0 : (uint8_t) (man > 7 ? 7 : man);
    }
    if (ex >= 15) return 0x7e;
    int man = (int) (bits >> 20 & 7) + (int) (bits >> 19 & 1);
    if (man > 7) {   /* the rounding carried into the exponent */
        man = 0;
        if (++ex >= 15) return 0x7e;
    }
    return (uint8_t) (ex << 3 | man);
}

void ggmlr_quantize_row_nvfp4(const float * x, void * vy, int64_t k) {
    block_nvfp4 * y = vy;
    for (int64_t i = 0; i < k / QK_NVFP4; i++) {
        for (int s = 0; s < QK_NVFP4 / QK_NVFP4_SUB; s++, x += QK_NVFP4_SUB) {
            float amax = 0.0f;
            for (int j = 0; j < QK_NVFP4_SUB; j++)
                if (amax < fabsf(x[j])) amax = fabsf(x[j]);
            y[i].d[s] = ue4m3_from_float(amax / 6.0f);
            const float d = ue4m3_half(y[i].d[s]);
            for (int j = 0; j < QK_NVFP4_SUB / 2; j++)
                y[i].qs[s * QK_NVFP4_SUB / 2 + j] =
                    (uint8_t) (ggmlr_nearest_e2m1(x[j], d) | ggmlr_nearest_e2m1(x[j + QK_NVFP4_SUB / 2], d) << 4);
        }
    }
}

void ggmlr_dequantize_row_nvfp4(const void * vx, float * y, int64_t k) {
    const block_nvfp4 * x = vx;
    for (int64_t i = 0; i < k / QK_NVFP4; i++) {
        for (int s = 0; s < QK_NVFP4 / QK_NVFP4_SUB; s++, y += QK_NVFP4_SUB) {
            const float d = ue4m3_half(x[i].d[s]);
            for (int j = 0; j < QK_NVFP4_SUB / 2; j++) {
                const uint8_t b = x[i].qs[s * QK_NVFP4_SUB / 2 + j];
                y[j]                    = ggmlr_e2m1_doubled[b & 15] * d;
                y[j + QK_NVFP4_SUB / 2] = ggmlr_e2m1_doubled[b >> 4] * d;
            }
        }
    }
}

/* e2m1.h -- the FP4 E2M1 grid shared by MXFP4 and NVFP4: sign in bit 3, 2
 * exponent bits (bias 1), 1 mantissa bit, so the magnitudes 0, 0.5, 1, 1.5,
 * 2, 3, 4, 6. They are kept doubled as integers (the scales are halved to
 * match), as upstream's kvalues_mxfp4. */
#ifndef GGMLR_QUANT_E2M1_H
#define GGMLR_QUANT_E2M1_H

#include <math.h>
#include <stdint.h>

static const int8_t ggmlr_e2m1_doubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

/* the index i of the level ggmlr_e2m1_doubled[i] * d nearest to x; the first
 * on a tie (so +0 wins over -0, and a NaN x gives 0), as upstream */
static inline int ggmlr_nearest_e2m1(float x, float d) {
    int best = 0;
    float best_err = fabsf(ggmlr_e2m1_doubled[0] * d - x);
    for (int i = 1; i < 16; i++) {
        const float err = fabsf(ggmlr_e2m1_doubled[i] * d - x);
        if (err < best_err) { best = i; best_err = err; }
    }
    return best;
}

#endif

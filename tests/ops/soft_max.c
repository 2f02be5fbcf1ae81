/* soft_max.c -- rows of the softmax family. */
#include "ops/harness.h"

static const float k_scale = 0.7f;

static struct ggml_tensor * b_soft_max_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    (void) p;
    return ggml_soft_max_ext_back(ctx, in[0], in[1], k_scale, 0.0f);
}

/* dx = scale * y * (dy - sum_i dy_i y_i), per row of ne0 */
static void r_soft_max_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out,
                            const int64_t no[4]) {
    (void) ne; (void) p;
    const int64_t n0 = no[0], n = no[0] * no[1] * no[2] * no[3];
    for (int64_t r = 0; r < n / n0; r++) {
        double dot = 0;
        for (int64_t i = 0; i < n0; i++) dot += in[0][r * n0 + i] * in[1][r * n0 + i];
        for (int64_t i = 0; i < n0; i++) out[r * n0 + i] = k_scale * in[1][r * n0 + i] * (in[0][r * n0 + i] - dot);
    }
}

static const struct ops_row rows[] = {
    /* the backward of SOFT_MAX has no backward of its own; y of a softmax's
     * size (about 1/ne0), one row of one element (y = 1) */
    {"SOFT_MAX_BACK", "[7,5,3,1]", b_soft_max_back, NULL, 2, {{{7, 5, 3, 1}, -1, 1}, {{7, 5, 3, 1}, 0, 0.3}},
     r_soft_max_back, 1e-5, false, 0, 0, 0},
    {"SOFT_MAX_BACK", "[1,4,1,1]", b_soft_max_back, NULL, 2, {{{1, 4, 1, 1}, -1, 1}, {{1, 4, 1, 1}, 1, 1}},
     r_soft_max_back, 1e-5, false, 0, 0, 0},
    {"SOFT_MAX_BACK", "[64,3,1,2]", b_soft_max_back, NULL, 2, {{{64, 3, 1, 2}, -1, 1}, {{64, 3, 1, 2}, 0, 0.03}},
     r_soft_max_back, 1e-5, false, 0, 0, 0},
};

const struct ops_family ops_soft_max = {"soft_max", rows, sizeof rows / sizeof rows[0]};

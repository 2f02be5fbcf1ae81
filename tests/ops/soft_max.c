/* soft_max.c -- rows of the softmax family: soft_max, soft_max_ext (scale,
 * F32 / F16 masks with -Inf entries and fully masked rows, mask broadcasting,
 * ALiBi), attention sinks (forward and the gradient of x and the sinks), the
 * _inplace form, and soft_max_ext_back.
 *
 * Forward tolerance: relative 2-norm error 1e-5 (a sum of <= 64 exponentials
 * in float, ~1e-7); masked entries and fully masked rows must be exactly 0,
 * not NaN. */
#include "ops/harness.h"
#include "common/attn_ref.h"  /* attn_alibi_slope: upstream ggml's ALiBi slopes */

#include <stdlib.h>

struct sm_params {
    bool mask;  /* in[1] is the mask */
    float scale, max_bias;
    bool sinks;    /* the next input is the sinks [ne2] (ggml_soft_max_add_sinks) */
    bool inplace;  /* soft_max_ext_inplace */
};

static const struct sm_params p_plain = {.mask = false, .scale = 1.0f, .max_bias = 0.0f};

static struct ggml_tensor * b_soft_max(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct sm_params * p = params;
    if (p == &p_plain) return ggml_soft_max(ctx, in[0]);
    struct ggml_tensor * mask = p->mask ? in[1] : NULL;
    struct ggml_tensor * y = p->inplace ? ggml_soft_max_ext_inplace(ctx, in[0], mask, p->scale, p->max_bias)
                                        : ggml_soft_max_ext(ctx, in[0], mask, p->scale, p->max_bias);
    if (y && p->sinks) ggml_soft_max_add_sinks(y, in[p->mask ? 2 : 1]);
    return y;
}


/* softmax(scale*x + slope(i2)*mask[i0, i1, i2 % mne2, i3 % mne3]) along ne0; a row that is all -Inf gives zeros;
 * with sinks, e^(sinks[i2]) joins each row's denominator (and its max) */
static void r_soft_max(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    const struct sm_params * p = params;
    const int64_t n0 = no[0];
    double * s = malloc((size_t) n0 * sizeof *s);
    OPS_FOR4(no, zero, i1, i2, i3) {
        if (zero != 0) continue;  /* once per row */
        const double sink = p->sinks ? in[p->mask ? 2 : 1][i2] : -INFINITY;
        double mx = sink;
        for (int64_t i = 0; i < n0; i++) {
            s[i] = p->scale * in[0][ops_at(no, i, i1, i2, i3)];
            if (p->mask) s[i] += attn_alibi_slope(p->max_bias, i2, no[2]) * in[1][ops_at(ne[1], i, i1, i2 % ne[1][2], i3 % ne[1][3])];
            if (s[i] > mx) mx = s[i];
        }
        double sum = p->sinks && mx != -INFINITY ? exp(sink - mx) : 0;
        for (int64_t i = 0; i < n0; i++) sum += mx == -INFINITY ? 0.0 : exp(s[i] - mx);
        for (int64_t i = 0; i < n0; i++) out[ops_at(no, i, i1, i2, i3)] = mx == -INFINITY ? 0.0 : exp(s[i] - mx) / sum;
    }
    free(s);
}

/* where the reference is 0 (masked entries, fully masked rows) the result is exactly 0 */
static void post_zeros(const struct ggml_tensor * out, const double * ref, const void * params, const char * what) {
    (void) params;
    int bad = 0;
    for (int64_t i = 0; i < ggml_nelements(out); i++) bad += ref[i] == 0 && ggml_get_f32_1d(out, i) != 0.0f;
    CHECK(bad == 0, "%s: %d masked elements are not exactly 0", what, bad);
}

/* masks: values in [-1, 1], each -Inf with probability 0.2, and one row (index ne1) -Inf everywhere */
static void mask_with_row(double * v, const int64_t ne[4], int64_t inf_row) {
    OPS_FOR4(ne, i0, i1, i2, i3) {
        const int64_t i = ops_at(ne, i0, i1, i2, i3);
        if (i1 == inf_row || tc_uniform(0, 1) < 0.2) v[i] = -INFINITY;
    }
}
static void f_mask(double * v, const int64_t ne[4]) { mask_with_row(v, ne, -1); }
static void f_mask_row0(double * v, const int64_t ne[4]) { mask_with_row(v, ne, 0); }
static void f_mask_row1(double * v, const int64_t ne[4]) { mask_with_row(v, ne, 1); }
static void f_mask_row2(double * v, const int64_t ne[4]) { mask_with_row(v, ne, 2); }
static void f_mask_row3(double * v, const int64_t ne[4]) { mask_with_row(v, ne, 3); }
static void f_mask_row4(double * v, const int64_t ne[4]) { mask_with_row(v, ne, 4); }

/* ---- soft_max_ext_back ---- */

static const float k_back_scale = 0.7f;

static struct ggml_tensor * b_soft_max_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    (void) p;
    return ggml_soft_max_ext_back(ctx, in[0], in[1], k_back_scale, 0.0f);
}

/* dx = scale * y * (dy - sum_i dy_i y_i), per row of ne0 */
static void r_soft_max_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out,
                            const int64_t no[4]) {
    (void) ne; (void) p;
    const int64_t n0 = no[0], n = ops_nel(no);
    for (int64_t r = 0; r < n / n0; r++) {
        double dot = 0;
        for (int64_t i = 0; i < n0; i++) dot += in[0][r * n0 + i] * in[1][r * n0 + i];
        for (int64_t i = 0; i < n0; i++) out[r * n0 + i] = k_back_scale * in[1][r * n0 + i] * (in[0][r * n0 + i] - dot);
    }
}

static void check_refs(void) {
    CHECK(fabs(attn_alibi_slope(8, 0, 8) - 0.5) < 1e-15 && fabs(attn_alibi_slope(8, 7, 8) - 1.0 / 256) < 1e-15, "ALiBi slopes for 8 heads");
    CHECK(fabs(attn_alibi_slope(8, 4, 6) - 0.5) < 1e-15 && fabs(attn_alibi_slope(8, 5, 6) - 0.125) < 1e-15, "ALiBi m1 slopes for 6 heads");
}

/* mask parameters of the rows */
static const struct sm_params p_m1 = {.mask = true, .scale = 0.7f, .max_bias = 0.0f}, p_m2 = {.mask = true, .scale = 1.5f, .max_bias = 0.0f}, p_m3 = {.mask = true, .scale = 0.3f, .max_bias = 0.0f},
                              p_a1 = {.mask = true, .scale = 1.3f, .max_bias = 8.0f}, p_a2 = {.mask = true, .scale = 1.0f, .max_bias = 2.5f}, p_a3 = {.mask = true, .scale = 0.9f, .max_bias = 8.0f},
                              p_a4 = {.mask = true, .scale = 1.0f, .max_bias = 1.0f}, p_g16 = {.mask = true, .scale = 1.9f, .max_bias = 0.0f}, p_galibi = {.mask = true, .scale = 1.1f, .max_bias = 4.0f};

#define PLAIN(S) {.op = "SOFT_MAX", .variant = #S, .build = b_soft_max, .params = &p_plain, .n_in = 1,                    \
                  .in = {{.ne = OPS_SHAPE S, .lo = -3, .hi = 3, .layout = OPS_ANY_LAYOUT}}, .ref = r_soft_max, .tol = 1e-5}
#define EXT(NAME, P, X, LAY, M, MTYPE, FILL, GRAD)                                                                     \
    {.op = "SOFT_MAX", .variant = NAME, .build = b_soft_max, .params = &P, .n_in = 2,                                 \
     .in = {{.ne = OPS_SHAPE X, .lo = -2, .hi = 2, .layout = LAY}, {.ne = OPS_SHAPE M, .lo = -1, .hi = 1, .type = MTYPE, .fixed = true, .fill = FILL}}, \
     .ref = r_soft_max, .tol = 1e-5, .post = post_zeros, .grad = GRAD}
#define GRAD1(NAME, S, LAY) {.op = "SOFT_MAX", .variant = NAME, .build = b_soft_max, .params = &p_plain, .n_in = 1,       \
                             .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1, .layout = LAY}}, .ref = r_soft_max, .tol = 1e-5, .grad = OPS_GRAD}
#define BACK(S, YHI) {.op = "SOFT_MAX_BACK", .variant = #S, .build = b_soft_max_back, .n_in = 2,                         \
                      .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1}, {.ne = OPS_SHAPE S, .lo = 0, .hi = YHI}},           \
                      .ref = r_soft_max_back, .tol = 1e-5, .grad = OPS_REFUSED}

static const struct sm_params p_sinks = {.scale = 1.0f, .sinks = true}, p_sinks_mask = {.mask = true, .scale = 0.8f, .sinks = true},
                              p_sinks_alibi = {.mask = true, .scale = 1.2f, .max_bias = 4.0f, .sinks = true},
                              p_inplace = {.scale = 1.0f, .inplace = true}, p_inplace_mask = {.mask = true, .scale = 0.7f, .inplace = true};
/* x S, sinks [H = S's ne2] in [-2, 3] (large enough to take the max of some rows); with a mask M when P has one */
#define SINKS(NAME, P, S, H, LAY, GRAD)                                                                                    \
    {.op = "SOFT_MAX", .variant = NAME, .build = b_soft_max, .params = &P, .n_in = 2,                                 \
     .in = {{.ne = OPS_SHAPE S, .lo = -2, .hi = 2, .layout = LAY}, {.ne = {H, 1, 1, 1}, .lo = -2, .hi = 3}}, \
     .ref = r_soft_max, .tol = 1e-5, .grad = GRAD}
#define SINKS_MASK(NAME, P, S, H, M, GRAD)                                                                                 \
    {.op = "SOFT_MAX", .variant = NAME, .build = b_soft_max, .params = &P, .n_in = 3,                                 \
     .in = {{.ne = OPS_SHAPE S, .lo = -2, .hi = 2}, {.ne = OPS_SHAPE M, .lo = -1, .hi = 1, .fixed = true, .fill = f_mask_row1}, \
            {.ne = {H, 1, 1, 1}, .lo = -2, .hi = 3}},                                                     \
     .ref = r_soft_max, .tol = 1e-5, .post = post_zeros, .grad = GRAD}

static const struct ops_row rows[] = {
    /* attention sinks: forward on every layout of x, the gradient of x and of the sinks */
    SINKS("sinks [3]", p_sinks, (7, 5, 3, 2), 3, OPS_ANY_LAYOUT, OPS_FORWARD_ONLY), SINKS("sinks [1], one-element rows", p_sinks, (1, 6, 1, 2), 1, 0, OPS_FORWARD_ONLY),
    SINKS("gradient of x and sinks [4]", p_sinks, (6, 3, 4, 2), 4, OPS_CONTIG | OPS_TRANSPOSED, OPS_GRAD),
    SINKS_MASK("sinks, mask with a masked row, scale 0.8", p_sinks_mask, (7, 5, 3, 1), 3, (7, 6, 1, 1), OPS_FORWARD_ONLY),
    SINKS_MASK("sinks, ALiBi 4, 6 heads", p_sinks_alibi, (7, 5, 6, 1), 6, (7, 5, 1, 1), OPS_FORWARD_ONLY),
    SINKS_MASK("gradient, sinks and mask", p_sinks_mask, (5, 4, 3, 2), 3, (5, 4, 1, 1), OPS_GRAD),
    /* soft_max_ext_inplace (its rule reads only y: the gradient is the one the rows above check) */
    {.op = "SOFT_MAX", .variant = "_inplace", .build = b_soft_max, .params = &p_inplace, .n_in = 1,
     .in = {{.ne = {7, 5, 3, 2}, .lo = -3, .hi = 3}}, .ref = r_soft_max, .tol = 1e-5, .result = OPS_INPLACE},
    {.op = "SOFT_MAX", .variant = "_inplace with a mask", .build = b_soft_max, .params = &p_inplace_mask, .n_in = 2,
     .in = {{.ne = {7, 5, 3, 2}, .lo = -3, .hi = 3}, {.ne = {7, 5, 1, 1}, .lo = -1, .hi = 1, .fixed = true, .fill = f_mask_row2}},
     .ref = r_soft_max, .tol = 1e-5, .post = post_zeros, .result = OPS_INPLACE},
    PLAIN((7, 5, 3, 2)), PLAIN((1, 13, 1, 3)), PLAIN((64, 3, 1, 1)),
    /* a mask with more rows than x (padding), of both types; mask planes; ALiBi with 6 heads (n_head_log2 = 4:
       heads 4, 5 use m1), 8 heads (slopes 2^-1 .. 2^-8), 3 heads (n_head_log2 = 2) */
    EXT("F32 mask [7,6,1,1], scale 0.7", p_m1, (7, 5, 3, 2), 0, (7, 6, 1, 1), GGML_TYPE_F32, f_mask_row2, OPS_FORWARD_ONLY),
    EXT("F16 mask [7,6,1,1], scale 0.7", p_m1, (7, 5, 3, 2), 0, (7, 6, 1, 1), GGML_TYPE_F16, f_mask_row2, OPS_FORWARD_ONLY),
    EXT("F16 mask [7,5,3,2], scale 1.5, x transposed", p_m2, (7, 5, 3, 2), OPS_TRANSPOSED, (7, 5, 3, 2), GGML_TYPE_F16, f_mask_row0, OPS_FORWARD_ONLY),
    EXT("F32 mask [7,5,1,2], scale 0.3, x permuted", p_m3, (7, 5, 3, 2), OPS_PERMUTED, (7, 5, 1, 2), GGML_TYPE_F32, f_mask_row4, OPS_FORWARD_ONLY),
    EXT("ALiBi 8, 6 heads", p_a1, (7, 5, 6, 2), 0, (7, 5, 1, 1), GGML_TYPE_F32, f_mask, OPS_FORWARD_ONLY),
    EXT("ALiBi 2.5, F16 mask planes i2 % 3", p_a2, (7, 5, 6, 2), 0, (7, 5, 3, 1), GGML_TYPE_F16, f_mask_row3, OPS_FORWARD_ONLY),
    EXT("ALiBi 8, 8 heads, x transposed", p_a3, (5, 3, 8, 1), OPS_TRANSPOSED, (5, 4, 1, 1), GGML_TYPE_F32, f_mask, OPS_FORWARD_ONLY),
    EXT("ALiBi 1, 3 heads, F16 mask", p_a4, (9, 4, 3, 1), 0, (9, 4, 1, 1), GGML_TYPE_F16, f_mask_row1, OPS_FORWARD_ONLY),
    GRAD1("[7,5,3,1]", (7, 5, 3, 1), 0),
    GRAD1("of transposed", (7, 5, 2, 1), OPS_TRANSPOSED),
    EXT("gradient, F32 mask [7,6,1,1], scale 0.7", p_m1, (7, 5, 3, 1), 0, (7, 6, 1, 1), GGML_TYPE_F32, f_mask_row1, OPS_GRAD),
    EXT("gradient, F16 mask planes [7,5,3,1], scale 1.9", p_g16, (7, 5, 3, 2), 0, (7, 5, 3, 1), GGML_TYPE_F16, f_mask_row1, OPS_GRAD),
    EXT("gradient, ALiBi 4", p_galibi, (7, 5, 6, 1), 0, (7, 5, 1, 1), GGML_TYPE_F32, f_mask_row1, OPS_GRAD),
    EXT("gradient, mask + scale, fully masked row 2", p_m1, (7, 5, 2, 1), 0, (7, 6, 1, 1), GGML_TYPE_F32, f_mask_row2, OPS_GRAD),
    /* the mask as a parameter: autodiff refuses */
    {.op = "SOFT_MAX", .variant = "mask a parameter", .build = b_soft_max, .params = &p_m1, .n_in = 2,
     .in = {{.ne = {7, 5, 1, 1}, .lo = -1, .hi = 1}, {.ne = {7, 5, 1, 1}, .lo = -1, .hi = 1}}, .ref = r_soft_max, .tol = 1e-5,
     .grad = OPS_REFUSED, .refusal = "mask"},
    /* the backward of SOFT_MAX has no backward of its own; y of a softmax's size (about 1/ne0), one row of one element (y = 1) */
    BACK((7, 5, 3, 1), 0.3), BACK((1, 4, 1, 1), 1), BACK((64, 3, 1, 2), 0.03), BACK((67, 9, 2, 1), 0.03),
};

const struct ops_family ops_soft_max = {"soft_max", rows, sizeof rows / sizeof rows[0], check_refs, NULL};

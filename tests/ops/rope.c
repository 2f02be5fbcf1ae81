/* rope.c -- rows of rope_ext and rope_ext_back: both modes, n_dims < ne0,
 * freq_scale != 1, YaRN, frequency factors, strided input, positions up to
 * 1e6 and negative ones; rope_back(rope(x)) = m^2 x; upstream's other forms
 * (ggml_rope, ggml_rope_custom, the _inplace ones written over x).
 *
 * The reference follows the YaRN paper's formulation (inverse frequencies
 * inv_k = base^(-2k/n_dims) / c[k], interpolated ones inv_k * freq_scale,
 * mixed by the linear ramp between the correction dims, magnitude
 * attn_factor (1 + 0.1 ln(1/freq_scale))) with ggml's conventions (ramp over
 * the pair index k, denominator max(0.001, hi - lo)). The kernel computes its
 * angles in double and rounds each output once, so an element may be off by
 * one float rounding of itself (1.2e-7 |ref|) plus the double error of the
 * angle, below 1e-9 of the pair's magnitude (<= 1.3 * 2 sqrt 2 here: atol
 * 4e-9) for positions up to 1e6: an angle computed in float (off by ~0.1 rad
 * at 1e6), a wrong pairing or a wrong ramp fails by orders of magnitude. The
 * inverse holds to 4e-7 of m^2 |x|max (x in [-2, 2]). Gradients: the op is
 * linear, step 1e-2 is exact up to rounding; the harness defaults.
 *
 * timestep_embedding: [cos(t f_j) | sin(t f_j) | 0], f_j = max_period^(-j/half)
 * in float64; the kernel's float argument t f_j is off by ~2 float roundings
 * of |t f_j| <= 20 (~5e-6), hence atol 1e-5 (a wrong frequency or half is off
 * by 1e-1 or more). Gradient: timesteps in [0, 3], the harness defaults. */
#include "ops/harness.h"

#include <math.h>
#include <stdlib.h>

struct rp_params {
    int n_dims, mode, n_ctx_orig;
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    bool ff;  /* in[2]: frequency factors */
};

static struct ggml_tensor * rope(struct ggml_context * ctx, const struct rp_params * p, bool back, struct ggml_tensor ** in,
                                 struct ggml_tensor * x) {
    return (back ? ggml_rope_ext_back : ggml_rope_ext)(ctx, x, in[1], p->ff ? in[2] : NULL, p->n_dims, p->mode, p->n_ctx_orig,
                                                       p->freq_base, p->freq_scale, p->ext_factor, p->attn_factor, p->beta_fast,
                                                       p->beta_slow);
}
static struct ggml_tensor * b_rope(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) { return rope(ctx, p, false, in, in[0]); }
static struct ggml_tensor * b_rope_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) { return rope(ctx, p, true, in, in[0]); }
/* upstream's other forms of ROPE: the same rotation (the rows give them parameters each form can express) */
static struct ggml_tensor * b_rope_ext_inplace(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct rp_params * p = params;
    return ggml_rope_ext_inplace(ctx, in[0], in[1], p->ff ? in[2] : NULL, p->n_dims, p->mode, p->n_ctx_orig, p->freq_base, p->freq_scale,
                                 p->ext_factor, p->attn_factor, p->beta_fast, p->beta_slow);
}
static struct ggml_tensor * b_rope_custom(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct rp_params * p = params;
    return ggml_rope_custom(ctx, in[0], in[1], p->n_dims, p->mode, p->n_ctx_orig, p->freq_base, p->freq_scale, p->ext_factor,
                            p->attn_factor, p->beta_fast, p->beta_slow);
}
static struct ggml_tensor * b_rope_custom_inplace(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct rp_params * p = params;
    return ggml_rope_custom_inplace(ctx, in[0], in[1], p->n_dims, p->mode, p->n_ctx_orig, p->freq_base, p->freq_scale, p->ext_factor,
                                    p->attn_factor, p->beta_fast, p->beta_slow);
}
/* base 10000, no scaling: the rows' parameters must say so */
static struct ggml_tensor * b_rope_plain(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct rp_params * p = params;
    return ggml_rope(ctx, in[0], in[1], p->n_dims, p->mode);
}
static struct ggml_tensor * b_rope_plain_inplace(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct rp_params * p = params;
    return ggml_rope_inplace(ctx, in[0], in[1], p->n_dims, p->mode);
}
static struct ggml_tensor * b_inverse(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return rope(ctx, p, true, in, rope(ctx, p, false, in, in[0]));
}

static const double PI = 3.14159265358979323846;

/* the magnitude factor, and each pair's angle at position pos */
static double angles(const struct rp_params * p, const double * ff, double pos, double * angle) {
    const double base = p->freq_base, scale = p->freq_scale, ext = p->ext_factor;
    /* YaRN: the dimension index whose wavelength makes `beta` turns over n_ctx_orig tokens */
    const double d_fast = p->n_dims * log(p->n_ctx_orig / (p->beta_fast * 2 * PI)) / (2 * log(base));
    const double d_slow = p->n_dims * log(p->n_ctx_orig / (p->beta_slow * 2 * PI)) / (2 * log(base));
    const double lo = d_fast > 0 ? floor(d_fast) : 0, hi = ceil(d_slow) < p->n_dims - 1 ? ceil(d_slow) : p->n_dims - 1;
    for (int k = 0; k < p->n_dims / 2; k++) {
        const double inv_extrap = 1.0 / pow(base, (2.0 * k) / p->n_dims) / (ff ? ff[k] : 1.0);
        const double inv_interp = inv_extrap * scale;
        double inv = inv_interp;
        if (ext != 0) {
            double ramp = (k - lo) / (hi - lo > 0.001 ? hi - lo : 0.001);
            ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
            const double mask = (1 - ramp) * ext;  /* 1: extrapolate (high frequencies), 0: interpolate */
            inv = inv_interp * (1 - mask) + inv_extrap * mask;
        }
        angle[k] = pos * inv;
    }
    return ext != 0 ? p->attn_factor * (1 + 0.1 * log(1 / scale)) : p->attn_factor;
}

/* rope (sign 1) or rope_back (sign -1) of x [ne0, heads, tokens, ne3], positions in[1][token] */
static void ref_rope(const struct rp_params * p, const double * const * in, const int64_t ne[4], double sign, double * y) {
    const int64_t ne0 = ne[0], rows = ne[1] * ne[2] * ne[3];
    const int half = p->n_dims / 2;
    double * angle = malloc((size_t) half * sizeof *angle);
    for (int64_t r = 0; r < rows; r++) {
        const int64_t token = (r / ne[1]) % ne[2];
        const double m = angles(p, p->ff ? in[2] : NULL, in[1][token], angle);
        const double * xr = in[0] + r * ne0;
        double * yr = y + r * ne0;
        for (int64_t j = 0; j < ne0; j++) yr[j] = xr[j];
        for (int k = 0; k < half; k++) {
            const bool neox = p->mode == GGML_ROPE_TYPE_NEOX;
            const int64_t j0 = neox ? k : 2 * k, j1 = neox ? k + half : 2 * k + 1;
            const double c = cos(sign * angle[k]), s = sin(sign * angle[k]);
            yr[j0] = m * (c * xr[j0] - s * xr[j1]);
            yr[j1] = m * (s * xr[j0] + c * xr[j1]);
        }
    }
    free(angle);
}
static void r_rope(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    ref_rope(p, in, ne[0], 1, out);
}
static void r_rope_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    ref_rope(p, in, ne[0], -1, out);
}
/* the rotations cancel: m^2 x on the rotated dims, x on the others */
static void r_inverse(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) ne;
    const struct rp_params * p = params;
    double angle_unused[64];
    const double m = angles(p, NULL, 0, angle_unused);
    for (int64_t i = 0; i < ops_nel(no); i++) out[i] = (i % no[0] < p->n_dims ? m * m : 1.0) * in[0][i];
}

/* positions of the tokens, the list repeated */
static void f_positions(double * v, const int64_t ne[4]) {
    static const int32_t positions[] = {0, 1, -3, 17, 1000000, -100000, 65535, 7, 4096, -1, 250000, 2, 999983};
    for (int64_t i = 0; i < ops_nel(ne); i++) v[i] = positions[i % (int64_t) (sizeof positions / sizeof positions[0])];
}

/*                                             n_dims mode                     n_ctx  base     scale   ext   attn  fast  slow  ff */
static const struct rp_params
    c_normal      = {8,  GGML_ROPE_TYPE_NORMAL, 0,    10000,  1,      0,    1,    32,   1,    false},
    c_neox        = {16, GGML_ROPE_TYPE_NEOX,   0,    10000,  1,      0,    1,    32,   1,    false},
    c_partial     = {4,  GGML_ROPE_TYPE_NORMAL, 0,    10000,  0.25f,  0,    1,    32,   1,    false},
    c_neox_scale  = {6,  GGML_ROPE_TYPE_NEOX,   0,    500000, 0.5f,   0,    1,    32,   1,    false},
    c_tiny        = {2,  GGML_ROPE_TYPE_NEOX,   0,    10000,  1,      0,    1,    32,   1,    false},
    c_yarn        = {64, GGML_ROPE_TYPE_NEOX,   4096, 10000,  0.25f,  1,    1,    32,   1,    false},
    c_yarn_half   = {32, GGML_ROPE_TYPE_NORMAL, 512,  10000,  0.125f, 0.5f, 0.8f, 32,   1,    false},
    c_yarn_slow   = {24, GGML_ROPE_TYPE_NEOX,   2048, 10000,  0.5f,   1,    1,    1,    32,   false},
    c_yarn_clamp  = {16, GGML_ROPE_TYPE_NORMAL, 4096, 10,     0.5f,   1,    1,    1000, 1,    false},
    c_ff          = {12, GGML_ROPE_TYPE_NORMAL, 0,    10000,  1,      0,    1,    32,   1,    true},
    c_yarn_ff     = {16, GGML_ROPE_TYPE_NEOX,   1024, 10000,  0.5f,   1,    1.2f, 32,   1,    true},
    c_tr          = {8,  GGML_ROPE_TYPE_NORMAL, 0,    10000,  1,      0,    1,    32,   1,    false},
    c_tr_yarn     = {12, GGML_ROPE_TYPE_NEOX,   4096, 10000,  0.25f,  1,    1,    32,   1,    false};

#define X_(S, LAY) {.ne = OPS_SHAPE S, .lo = -2, .hi = 2, .layout = LAY}
#define TOKENS_(n0, n1, n2, n3) n2
#define POS_(S) {.ne = {TOKENS_ S, 1, 1, 1}, .type = GGML_TYPE_I32, .fixed = true, .fill = f_positions}
#define FF_(NFF) {.ne = {(NFF) ? (NFF) : 1, 1, 1, 1}, .lo = 0.5, .hi = 2, .fixed = true}
/* NFF: the number of frequency factors (n_dims / 2; 0: none) */
#define IN_(NFF, S, LAY) .n_in = (NFF) ? 3 : 2, .in = {X_(S, LAY), POS_(S), FF_(NFF)}
#define ONE(OP, BUILD, REF, NAME, P, NFF, S, LAY, ATOL, GRAD)                                                              \
    {.op = OP, .variant = NAME, .build = BUILD, .params = &P, IN_(NFF, S, LAY), .ref = REF, .cmp = OPS_ELEMENTS,       \
     .tol = 1.2e-7, .atol = ATOL, .grad = GRAD}
/* rope, rope_back and the inverse on one case; M2 = m^2, worked out from attn_factor and freq_scale */
#define CASE(NAME, P, NFF, S, LAY, M2)                                                                                      \
    ONE("ROPE", b_rope, r_rope, NAME, P, NFF, S, LAY, 4e-9, OPS_FORWARD_ONLY),                                            \
    ONE("ROPE_BACK", b_rope_back, r_rope_back, NAME, P, NFF, S, LAY, 4e-9, OPS_FORWARD_ONLY),                             \
    {.op = "ROPE_BACK", .variant = "rope_back(rope(x)), " NAME, .build = b_inverse, .params = &P, IN_(NFF, S, LAY),     \
     .ref = r_inverse, .cmp = OPS_ELEMENTS, .atol = 8e-7 * (M2)}
#define GRAD(NAME, P, NFF, S)                                                                                               \
    ONE("ROPE", b_rope, r_rope, "gradient, " NAME, P, NFF, S, 0, 4e-9, OPS_GRAD),                                          \
    ONE("ROPE_BACK", b_rope_back, r_rope_back, "gradient, " NAME, P, NFF, S, 0, 4e-9, OPS_GRAD)
/* the frequency factors as a parameter */
#define REFUSED(OP, BUILD, REF)                                                                                         \
    {.op = OP, .variant = "frequency factors a parameter", .build = BUILD, .params = &c_ff, .n_in = 3,                \
     .in = {X_((12, 2, 13, 1), 0), POS_((12, 2, 13, 1)), {.ne = {6, 1, 1, 1}, .lo = 0.5, .hi = 2}}, .ref = REF,       \
     .cmp = OPS_ELEMENTS, .tol = 1.2e-7, .atol = 4e-9, .grad = OPS_REFUSED, .refusal = "frequency factors"}
/* a form of ROPE on a contiguous x, written over it (INPLACE) or not */
#define FORM(NAME, BUILD, P, NFF, S, RESULT)                                                                                \
    {.op = "ROPE", .variant = NAME, .build = BUILD, .params = &P, IN_(NFF, S, 0), .ref = r_rope, .cmp = OPS_ELEMENTS,  \
     .tol = 1.2e-7, .atol = 4e-9, .result = RESULT}
struct te_params { int dim, max_period; };
static struct ggml_tensor * b_te(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct te_params * c = p;
    return ggml_timestep_embedding(ctx, in[0], c->dim, c->max_period);
}
static void s_te(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    no[0] = ((const struct te_params *) p)->dim; no[1] = ne[0][0]; no[2] = no[3] = 1;
}
static void r_te(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) ne;
    const struct te_params * c = p;
    const int64_t half = c->dim / 2;
    for (int64_t i = 0; i < no[1]; i++) {
        double * y = out + i * no[0];
        for (int64_t j = 0; j < half; j++) {
            const double arg = in[0][i] * pow((double) c->max_period, -(double) j / (double) half);
            y[j] = cos(arg);
            y[j + half] = sin(arg);
        }
        if (c->dim % 2) y[c->dim - 1] = 0;
    }
}
static const struct te_params te_8 = {8, 10000}, te_7 = {7, 100}, te_1 = {1, 10}, te_64 = {64, 10000};
#define TE(NAME, P, N, LO, HI, GRAD)                                                                                     \
    {.op = "TIMESTEP_EMBEDDING", .variant = NAME, .build = b_te, .params = &P, .n_in = 1,                              \
     .in = {{.ne = {N, 1, 1, 1}, .lo = LO, .hi = HI, .layout = OPS_CONTIG | OPS_TRANSPOSED}}, .shape = s_te, .ref = r_te, \
     .cmp = OPS_ELEMENTS, .atol = 1e-5, .grad = GRAD}

static const struct ops_row rows[] = {
    FORM("ggml_rope normal, n_dims < ne0", b_rope_plain, c_normal, 0, (10, 3, 13, 2), OPS_NEW),
    FORM("ggml_rope neox", b_rope_plain, c_neox, 0, (16, 2, 13, 1), OPS_NEW),
    FORM("ggml_rope_inplace neox", b_rope_plain_inplace, c_neox, 0, (18, 2, 13, 1), OPS_INPLACE),
    FORM("ggml_rope_ext_inplace YaRN, factors", b_rope_ext_inplace, c_yarn_ff, 8, (20, 3, 13, 1), OPS_INPLACE),
    FORM("ggml_rope_custom YaRN", b_rope_custom, c_yarn_half, 0, (32, 2, 13, 1), OPS_NEW),
    FORM("ggml_rope_custom_inplace YaRN", b_rope_custom_inplace, c_yarn_slow, 0, (26, 2, 13, 1), OPS_INPLACE),
    CASE("normal, all dims", c_normal, 0, (8, 3, 13, 2), 0, 1.0),
    CASE("neox, all dims", c_neox, 0, (16, 2, 13, 1), 0, 1.0),
    CASE("normal, n_dims < ne0 (odd ne0)", c_partial, 0, (7, 5, 13, 1), 0, 1.0),
    CASE("neox, n_dims < ne0, freq_scale", c_neox_scale, 0, (10, 3, 14, 3), 0, 1.0),
    CASE("neox, 1 token, 1 head", c_tiny, 0, (2, 1, 1, 1), 0, 1.0),
    CASE("neox, YaRN (ramp inside)", c_yarn, 0, (64, 2, 13, 1), 0, 1.2965),             /* (1 + 0.1 ln 4)^2 */
    CASE("normal, YaRN ext 0.5, attn 0.8", c_yarn_half, 0, (34, 3, 13, 1), 0, 0.9339),  /* (0.8 (1 + 0.1 ln 8))^2 */
    CASE("neox, YaRN, beta_slow > beta_fast", c_yarn_slow, 0, (24, 2, 13, 1), 0, 1.1435),  /* (1 + 0.1 ln 2)^2 */
    CASE("normal, YaRN, both dims clamped", c_yarn_clamp, 0, (16, 2, 13, 1), 0, 1.1435),
    CASE("normal, frequency factors", c_ff, 6, (12, 2, 13, 1), 0, 1.0),
    CASE("neox, YaRN + frequency factors", c_yarn_ff, 8, (20, 2, 13, 1), 0, 1.6466),    /* (1.2 (1 + 0.1 ln 2))^2 */
    CASE("normal, transposed input", c_tr, 0, (10, 7, 13, 1), OPS_TRANSPOSED, 1.0),
    CASE("neox, transposed input, YaRN", c_tr_yarn, 0, (12, 3, 13, 2), OPS_TRANSPOSED, 1.2965),
    GRAD("normal, all dims", c_normal, 0, (8, 3, 5, 1)),
    GRAD("neox, all dims", c_neox, 0, (16, 2, 5, 1)),
    GRAD("neox, n_dims < ne0, freq_scale", c_neox_scale, 0, (10, 3, 5, 1)),
    GRAD("neox, YaRN (ramp inside)", c_yarn, 0, (64, 2, 5, 1)),
    GRAD("normal, YaRN ext 0.5, attn 0.8", c_yarn_half, 0, (34, 3, 5, 1)),
    GRAD("normal, YaRN, both dims clamped", c_yarn_clamp, 0, (16, 2, 5, 1)),
    GRAD("neox, YaRN + frequency factors", c_yarn_ff, 8, (20, 2, 5, 1)),
    REFUSED("ROPE", b_rope, r_rope), REFUSED("ROPE_BACK", b_rope_back, r_rope_back),
    TE("dim 8, 5 timesteps", te_8, 5, 0, 20, OPS_FORWARD_ONLY),
    TE("odd dim 7, max_period 100", te_7, 6, 0, 20, OPS_FORWARD_ONLY),
    TE("dim 1: only the zero column", te_1, 3, 0, 20, OPS_FORWARD_ONLY),
    TE("dim 64, 37 timesteps", te_64, 37, 0, 20, OPS_FORWARD_ONLY),
    TE("gradient, dim 8", te_8, 4, 0, 3, OPS_GRAD),
    TE("gradient, odd dim 7", te_7, 4, 0, 3, OPS_GRAD),
    TE("gradient, dim 1 (zero)", te_1, 3, 0, 3, OPS_GRAD),
};

const struct ops_family ops_rope = {"rope", rows, sizeof rows / sizeof rows[0], NULL, NULL};

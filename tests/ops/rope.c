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
 * linear, step 1e-2 is exact up to rounding; the harness defaults. YaRN
 * with n_ctx_orig = 0 (upstream's test's): the correction dims are [0, -inf]
 * and the ramp keeps pair 0 alone extrapolated. F16 x and result: the
 * harness wants each output the nearest half of the reference.
 *
 * timestep_embedding: [cos(t f_j) | sin(t f_j) | 0], f_j = max_period^(-j/half)
 * in float64; the kernel's float argument t f_j is off by ~2 float roundings
 * of |t f_j| <= 20 (~5e-6), hence atol 1e-5 (a wrong frequency or half is off
 * by 1e-1 or more). Gradient: timesteps in [0, 3], the harness defaults. */
#include "ops/harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct rp_params {
    int n_dims, mode, n_ctx_orig;
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    bool ff;  /* in[2]: frequency factors */
    int sections[GGML_MROPE_SECTIONS];  /* the multi-section modes' (ggml_rope_multi) */
    int n_offs;                         /* != 0: ggml_rope_set_offset */
};

static bool is_multi(int mode) { return mode == GGML_ROPE_TYPE_MROPE || mode == GGML_ROPE_TYPE_VISION || mode == GGML_ROPE_TYPE_IMROPE; }

/* rope_ext(_back), or rope_multi(_back) in the multi-section modes; then the offset if the row has one */
static struct ggml_tensor * with_offset(const struct rp_params * p, struct ggml_tensor * t) {
    return p->n_offs && t ? ggml_rope_set_offset(t, p->n_offs) : t;
}
static struct ggml_tensor * rope(struct ggml_context * ctx, const struct rp_params * p, bool back, struct ggml_tensor ** in,
                                 struct ggml_tensor * x) {
    struct ggml_tensor * c = p->ff ? in[2] : NULL;
    int sections[GGML_MROPE_SECTIONS];
    memcpy(sections, p->sections, sizeof sections);
    if (is_multi(p->mode))
        return with_offset(p, (back ? ggml_rope_multi_back : ggml_rope_multi)(ctx, x, in[1], c, p->n_dims, sections, p->mode, p->n_ctx_orig,
                                                                              p->freq_base, p->freq_scale, p->ext_factor, p->attn_factor,
                                                                              p->beta_fast, p->beta_slow));
    return with_offset(p, (back ? ggml_rope_ext_back : ggml_rope_ext)(ctx, x, in[1], c, p->n_dims, p->mode, p->n_ctx_orig, p->freq_base,
                                                                      p->freq_scale, p->ext_factor, p->attn_factor, p->beta_fast, p->beta_slow));
}
static struct ggml_tensor * b_rope(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) { return rope(ctx, p, false, in, in[0]); }
static struct ggml_tensor * b_rope_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) { return rope(ctx, p, true, in, in[0]); }
/* upstream's other forms of ROPE: the same rotation (the rows give them parameters each form can express) */
static struct ggml_tensor * b_rope_ext_inplace(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct rp_params * p = params;
    return ggml_rope_ext_inplace(ctx, in[0], in[1], p->ff ? in[2] : NULL, p->n_dims, p->mode, p->n_ctx_orig, p->freq_base, p->freq_scale,
                                 p->ext_factor, p->attn_factor, p->beta_fast, p->beta_slow);
}
static struct ggml_tensor * b_rope_multi_inplace(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct rp_params * p = params;
    int sections[GGML_MROPE_SECTIONS];
    memcpy(sections, p->sections, sizeof sections);
    return with_offset(p, ggml_rope_multi_inplace(ctx, in[0], in[1], p->ff ? in[2] : NULL, p->n_dims, sections, p->mode, p->n_ctx_orig,
                                                  p->freq_base, p->freq_scale, p->ext_factor, p->attn_factor, p->beta_fast, p->beta_slow));
}
/* _inplace on a view of x without the last VIEW_CUT entries of each row (rows packed, not contiguous:
 * upstream's test's view), rope_ext's or rope_multi's by the mode */
enum { VIEW_CUT = 2 };
static struct ggml_tensor * b_rope_view_inplace(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct rp_params * p = params;
    struct ggml_tensor * x = in[0];
    struct ggml_tensor * v = ggml_view_4d(ctx, x, x->ne[0] - VIEW_CUT, x->ne[1], x->ne[2], x->ne[3], x->nb[1], x->nb[2], x->nb[3], 0);
    struct ggml_tensor * vin[3] = {v, in[1], in[2]};
    return is_multi(p->mode) ? b_rope_multi_inplace(ctx, vin, params) : b_rope_ext_inplace(ctx, vin, params);
}
static void s_view(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    (void) p;
    no[0] = ne[0][0] - VIEW_CUT; no[1] = ne[0][1]; no[2] = ne[0][2]; no[3] = ne[0][3];
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

/* the magnitude: attn_factor, times 1 + 0.1 ln(1/freq_scale) with YaRN */
static double magnitude(const struct rp_params * p) {
    return p->ext_factor != 0 ? p->attn_factor * (1 + 0.1 * log(1 / p->freq_scale)) : p->attn_factor;
}

/* rotated pairs: n_dims/2, or n_dims in VISION mode (the whole row, ne0 = 2 n_dims) */
static int n_pairs(const struct rp_params * p) { return p->mode == GGML_ROPE_TYPE_VISION ? p->n_dims : p->n_dims / 2; }

/* The position stream (0..3: t, h, w, e) of pair k and the exponent j of its frequency base^(-2j/n_dims):
 * one stream and j = k outside the multi-section modes. MROPE, VISION: the sector q = k mod (the sections'
 * sum) lies in section s when sections[0] + .. + sections[s-1] <= q < .. + sections[s]; IMROPE deals the
 * sectors out in turn, t h w t h w .., each stream while it has sections left (3 sections[s] sectors),
 * e after. VISION counts j from its section's start (upstream resets a stream's angle at its section's first
 * sector: the same whenever no two used sections start at one sector, as in every row); the others keep j = k. */
static int pair_stream(const struct rp_params * p, int k, int * j) {
    *j = k;
    if (!is_multi(p->mode)) return 0;
    const int * sec = p->sections;
    const int q = k % (sec[0] + sec[1] + sec[2] + sec[3]);
    if (p->mode == GGML_ROPE_TYPE_IMROPE) {
        const int turn = q % 3;  /* 0: t, 1: h, 2: w */
        return q < 3 * sec[turn] ? turn : 3;
    }
    int start = 0, s = 0;
    while (s < 3 && q >= start + sec[s]) start += sec[s++];
    if (p->mode == GGML_ROPE_TYPE_VISION) *j = q - start;
    return s;
}

/* each pair's angle for a token whose stream positions are pos[0..3] */
static void angles(const struct rp_params * p, const double * ff, const double * pos, double * angle) {
    const double base = p->freq_base, scale = p->freq_scale, ext = p->ext_factor;
    /* YaRN: the dimension index whose wavelength makes `beta` turns over n_ctx_orig tokens */
    const double d_fast = p->n_dims * log(p->n_ctx_orig / (p->beta_fast * 2 * PI)) / (2 * log(base));
    const double d_slow = p->n_dims * log(p->n_ctx_orig / (p->beta_slow * 2 * PI)) / (2 * log(base));
    const double lo = d_fast > 0 ? floor(d_fast) : 0, hi = ceil(d_slow) < p->n_dims - 1 ? ceil(d_slow) : p->n_dims - 1;
    for (int k = 0; k < n_pairs(p); k++) {
        int j;
        const int stream = pair_stream(p, k, &j);
        const double inv_extrap = 1.0 / pow(base, (2.0 * j) / p->n_dims) / (ff ? ff[k] : 1.0);
        const double inv_interp = inv_extrap * scale;
        double inv = inv_interp;
        if (ext != 0) {
            double ramp = (k - lo) / (hi - lo > 0.001 ? hi - lo : 0.001);
            ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
            const double mask = (1 - ramp) * ext;  /* 1: extrapolate (high frequencies), 0: interpolate */
            inv = inv_interp * (1 - mask) + inv_extrap * mask;
        }
        angle[k] = pos[stream] * inv;
    }
}

/* rope (sign 1) or rope_back (sign -1) of x [ne0, heads, tokens, ne3], positions in[1][token + s tokens] of stream s */
static void ref_rope(const struct rp_params * p, const double * const * in, const int64_t ne[4], double sign, double * y) {
    const int64_t ne0 = ne[0], rows = ne[1] * ne[2] * ne[3];
    const int pairs = n_pairs(p);
    const double m = magnitude(p);
    double * angle = malloc((size_t) pairs * sizeof *angle);
    for (int64_t r = 0; r < rows; r++) {
        const int64_t token = (r / ne[1]) % ne[2];
        double pos[4] = {0, 0, 0, 0};
        for (int s = 0; s < (is_multi(p->mode) ? 4 : 1); s++) pos[s] = in[1][token + s * ne[2]];
        angles(p, p->ff ? in[2] : NULL, pos, angle);
        const double * xr = in[0] + r * ne0;
        double * yr = y + r * ne0;
        for (int64_t j = 0; j < ne0; j++) yr[j] = xr[j];
        for (int k = 0; k < pairs; k++) {
            /* NORMAL: (2k, 2k+1); the others: (k, k + pairs); from n_offs on */
            const bool normal = p->mode == GGML_ROPE_TYPE_NORMAL;
            const int64_t j0 = p->n_offs + (normal ? 2 * k : k), j1 = normal ? j0 + 1 : j0 + pairs;
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
/* rope of the view: x's rows without their last VIEW_CUT entries */
static void r_rope_view(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const int64_t rows = no[1] * no[2] * no[3];
    double * x = malloc((size_t) (rows * no[0]) * sizeof *x);
    for (int64_t r = 0; r < rows; r++) memcpy(x + r * no[0], in[0] + r * ne[0][0], (size_t) no[0] * sizeof *x);
    const double * vin[3] = {x, in[1], in[2]};
    ref_rope(p, vin, no, 1, out);
    free(x);
}
static void r_rope_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    ref_rope(p, in, ne[0], -1, out);
}
/* the rotations cancel: m^2 x on the rotated entries [n_offs, n_offs + 2 pairs), x on the others */
static void r_inverse(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) ne;
    const struct rp_params * p = params;
    const double m = magnitude(p);
    for (int64_t i = 0; i < ops_nel(no); i++) {
        const int64_t j = i % no[0];
        out[i] = (j >= p->n_offs && j < p->n_offs + 2 * n_pairs(p) ? m * m : 1.0) * in[0][i];
    }
}

/* positions of the tokens, the list repeated */
static void f_positions(double * v, const int64_t ne[4]) {
    static const int32_t positions[] = {0, 1, -3, 17, 1000000, -100000, 65535, 7, 4096, -1, 250000, 2, 999983};
    for (int64_t i = 0; i < ops_nel(ne); i++) v[i] = positions[i % (int64_t) (sizeof positions / sizeof positions[0])];
}

/*                                             n_dims mode                     n_ctx  base     scale   ext   attn  fast  slow  ff     sections      n_offs */
static const struct rp_params
    c_normal      = {8,  GGML_ROPE_TYPE_NORMAL, 0,    10000,  1,      0,    1,    32,   1,    false, {0}, 0},
    c_neox        = {16, GGML_ROPE_TYPE_NEOX,   0,    10000,  1,      0,    1,    32,   1,    false, {0}, 0},
    c_partial     = {4,  GGML_ROPE_TYPE_NORMAL, 0,    10000,  0.25f,  0,    1,    32,   1,    false, {0}, 0},
    c_neox_scale  = {6,  GGML_ROPE_TYPE_NEOX,   0,    500000, 0.5f,   0,    1,    32,   1,    false, {0}, 0},
    c_tiny        = {2,  GGML_ROPE_TYPE_NEOX,   0,    10000,  1,      0,    1,    32,   1,    false, {0}, 0},
    c_yarn        = {64, GGML_ROPE_TYPE_NEOX,   4096, 10000,  0.25f,  1,    1,    32,   1,    false, {0}, 0},
    c_yarn_half   = {32, GGML_ROPE_TYPE_NORMAL, 512,  10000,  0.125f, 0.5f, 0.8f, 32,   1,    false, {0}, 0},
    c_yarn_slow   = {24, GGML_ROPE_TYPE_NEOX,   2048, 10000,  0.5f,   1,    1,    1,    32,   false, {0}, 0},
    c_yarn_clamp  = {16, GGML_ROPE_TYPE_NORMAL, 4096, 10,     0.5f,   1,    1,    1000, 1,    false, {0}, 0},
    c_ff          = {12, GGML_ROPE_TYPE_NORMAL, 0,    10000,  1,      0,    1,    32,   1,    true,  {0}, 0},
    c_yarn_ff     = {16, GGML_ROPE_TYPE_NEOX,   1024, 10000,  0.5f,   1,    1.2f, 32,   1,    true,  {0}, 0},
    c_tr          = {8,  GGML_ROPE_TYPE_NORMAL, 0,    10000,  1,      0,    1,    32,   1,    false, {0}, 0},
    c_tr_yarn     = {12, GGML_ROPE_TYPE_NEOX,   4096, 10000,  0.25f,  1,    1,    32,   1,    false, {0}, 0},
    /* the multi-section modes (ggml_rope_multi), then ggml_rope_set_offset (n_offs) */
    c_mrope       = {24, GGML_ROPE_TYPE_MROPE,  0,    10000,  1,      0,    1,    32,   1,    false, {4, 4, 4, 0}, 0},
    c_mrope_e     = {16, GGML_ROPE_TYPE_MROPE,  0,    10000,  1,      0,    1,    32,   1,    false, {2, 1, 1, 2}, 0},      /* sum 6 < 8 pairs: wraps */
    c_mrope_long  = {20, GGML_ROPE_TYPE_MROPE,  0,    10000,  1,      0,    1,    32,   1,    false, {6, 6, 6, 0}, 0},      /* sum 18 > 10 pairs */
    c_mrope_yarn  = {24, GGML_ROPE_TYPE_MROPE,  4096, 10000,  0.25f,  1,    1.2f, 32,   1,    true,  {6, 3, 3, 0}, 0},
    c_imrope      = {24, GGML_ROPE_TYPE_IMROPE, 0,    10000,  1,      0,    1,    32,   1,    false, {4, 4, 4, 0}, 0},
    c_imrope_e    = {16, GGML_ROPE_TYPE_IMROPE, 0,    10000,  1,      0,    1,    32,   1,    false, {2, 2, 1, 3}, 0},
    c_imrope_yarn = {20, GGML_ROPE_TYPE_IMROPE, 1024, 10000,  0.5f,   1,    1,    32,   1,    true,  {3, 4, 3, 0}, 0},
    c_vision      = {8,  GGML_ROPE_TYPE_VISION, 0,    10000,  1,      0,    1,    32,   1,    false, {4, 4, 0, 0}, 0},
    c_vision_wrap = {8,  GGML_ROPE_TYPE_VISION, 0,    10000,  1,      0,    1,    32,   1,    false, {2, 2, 0, 0}, 0},      /* sum 4 < 8 pairs */
    c_vision_yarn = {12, GGML_ROPE_TYPE_VISION, 2048, 10000,  0.5f,   1,    0.9f, 32,   1,    true,  {3, 3, 0, 0}, 0},
    c_multi_neox  = {8,  GGML_ROPE_TYPE_NEOX,   0,    10000,  1,      0,    1,    32,   1,    false, {4, 4, 4, 0}, 0},      /* sections ignored */
    c_offs_normal = {8,  GGML_ROPE_TYPE_NORMAL, 0,    10000,  1,      0,    1,    32,   1,    false, {0}, 4},
    c_offs_neox   = {10, GGML_ROPE_TYPE_NEOX,   4096, 10000,  0.25f,  1,    1,    32,   1,    true,  {0}, 2},
    c_offs_mrope  = {12, GGML_ROPE_TYPE_MROPE,  0,    10000,  1,      0,    1,    32,   1,    false, {2, 2, 2, 0}, 6},
    c_offs_imrope = {12, GGML_ROPE_TYPE_IMROPE, 0,    10000,  1,      0,    1,    32,   1,    false, {2, 2, 2, 0}, 4},
    /* YaRN without n_ctx_orig (upstream's test-backend-ops) */
    c_yarn_ctx0   = {16, GGML_ROPE_TYPE_NEOX,   0,    10000,  1,      0.7465f, 1, 1,    1,    false, {0}, 0},
    c_yarn_ctx0_n = {12, GGML_ROPE_TYPE_NORMAL, 0,    10000,  0.5f,   1,    1.4245f, 1, 1,    true,  {0}, 0},
    c_yarn_ctx0_m = {24, GGML_ROPE_TYPE_MROPE,  0,    10000,  1,      0.7465f, 1, 1,    1,    false, {4, 4, 4, 0}, 0};

#define X_(S, LAY) {.ne = OPS_SHAPE S, .lo = -2, .hi = 2, .layout = LAY}
#define TOKENS_(n0, n1, n2, n3) n2
/* NS: position streams, 1 (rope_ext) or 4 (the multi-section modes: t, h, w, e) */
#define POS_(NS, S) {.ne = {(NS) * TOKENS_ S, 1, 1, 1}, .type = GGML_TYPE_I32, .fixed = true, .fill = f_positions}
#define FF_(NFF) {.ne = {(NFF) ? (NFF) : 1, 1, 1, 1}, .lo = 0.5, .hi = 2, .fixed = true}
/* NFF: the number of frequency factors (one per pair; 0: none) */
#define IN_(NS, NFF, S, LAY) .n_in = (NFF) ? 3 : 2, .in = {X_(S, LAY), POS_(NS, S), FF_(NFF)}
#define ONE(NS, OP, BUILD, REF, NAME, P, NFF, S, LAY, ATOL, GRAD)                                                          \
    {.op = OP, .variant = NAME, .build = BUILD, .params = &P, IN_(NS, NFF, S, LAY), .ref = REF, .cmp = OPS_ELEMENTS,   \
     .tol = 1.2e-7, .atol = ATOL, .grad = GRAD}
/* rope, rope_back and the inverse on one case; M2 = m^2, worked out from attn_factor and freq_scale */
#define CASE_N(NS, NAME, P, NFF, S, LAY, M2)                                                                                \
    ONE(NS, "ROPE", b_rope, r_rope, NAME, P, NFF, S, LAY, 4e-9, OPS_FORWARD_ONLY),                                        \
    ONE(NS, "ROPE_BACK", b_rope_back, r_rope_back, NAME, P, NFF, S, LAY, 4e-9, OPS_FORWARD_ONLY),                         \
    {.op = "ROPE_BACK", .variant = "rope_back(rope(x)), " NAME, .build = b_inverse, .params = &P, IN_(NS, NFF, S, LAY), \
     .ref = r_inverse, .cmp = OPS_ELEMENTS, .atol = 8e-7 * (M2)}
#define GRAD_N(NS, NAME, P, NFF, S)                                                                                         \
    ONE(NS, "ROPE", b_rope, r_rope, "gradient, " NAME, P, NFF, S, 0, 4e-9, OPS_GRAD),                                      \
    ONE(NS, "ROPE_BACK", b_rope_back, r_rope_back, "gradient, " NAME, P, NFF, S, 0, 4e-9, OPS_GRAD)
#define CASE(...) CASE_N(1, __VA_ARGS__)
#define GRAD(...) GRAD_N(1, __VA_ARGS__)
#define MCASE(...) CASE_N(4, __VA_ARGS__)  /* ggml_rope_multi(_back) */
#define MGRAD(...) GRAD_N(4, __VA_ARGS__)
/* the frequency factors as a parameter */
#define REFUSED(OP, BUILD, REF)                                                                                         \
    {.op = OP, .variant = "frequency factors a parameter", .build = BUILD, .params = &c_ff, .n_in = 3,                \
     .in = {X_((12, 2, 13, 1), 0), POS_(1, (12, 2, 13, 1)), {.ne = {6, 1, 1, 1}, .lo = 0.5, .hi = 2}}, .ref = REF,    \
     .cmp = OPS_ELEMENTS, .tol = 1.2e-7, .atol = 4e-9, .grad = OPS_REFUSED, .refusal = "frequency factors"}
/* a form of ROPE on a contiguous x, written over it (INPLACE) or not */
#define FORM_N(NS, NAME, BUILD, P, NFF, S, RESULT)                                                                          \
    {.op = "ROPE", .variant = NAME, .build = BUILD, .params = &P, IN_(NS, NFF, S, 0), .ref = r_rope,                   \
     .cmp = OPS_ELEMENTS, .tol = 1.2e-7, .atol = 4e-9, .result = RESULT}
#define FORM(...) FORM_N(1, __VA_ARGS__)
/* _inplace on a view of packed rows that is not contiguous (TYPE: F32 or F16) */
#define VIEW_N(NS, NAME, P, NFF, S, TYPE)                                                                                    \
    {.op = "ROPE", .variant = "_inplace on a view, " NAME, .build = b_rope_view_inplace, .params = &P, .n_in = (NFF) ? 3 : 2, \
     .in = {{.ne = OPS_SHAPE S, .lo = -2, .hi = 2, .type = TYPE}, POS_(NS, S), FF_(NFF)}, .shape = s_view,                 \
     .out_type = TYPE, .ref = r_rope_view, .cmp = OPS_ELEMENTS, .tol = 1.2e-7, .atol = 4e-9, .result = OPS_INPLACE}
/* F16 x and result (the harness: each output the nearest half of the reference) */
#define HALF_N(NS, OP, NAME, BUILD, REF, P, NFF, S, RESULT)                                                                      \
    {.op = OP, .variant = "F16, " NAME, .build = BUILD, .params = &P, .n_in = (NFF) ? 3 : 2,                               \
     .in = {{.ne = OPS_SHAPE S, .lo = -2, .hi = 2, .type = GGML_TYPE_F16, .layout = (RESULT) == OPS_INPLACE ? 0 : OPS_CONTIG | OPS_TRANSPOSED}, \
            POS_(NS, S), FF_(NFF)},                                                                                      \
     .out_type = GGML_TYPE_F16, .ref = REF, .result = RESULT}
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
    FORM_N(4, "ggml_rope_multi_inplace MROPE", b_rope_multi_inplace, c_mrope, 0, (26, 2, 6, 1), OPS_INPLACE),
    FORM_N(4, "ggml_rope_multi_inplace IMROPE, offset", b_rope_multi_inplace, c_offs_imrope, 0, (20, 2, 6, 1), OPS_INPLACE),
    FORM("ggml_rope_multi NEOX (one stream, sections ignored)", b_rope_multi_inplace, c_multi_neox, 0, (10, 2, 13, 1), OPS_INPLACE),
    MCASE("MROPE, n_dims < ne0", c_mrope, 0, (28, 2, 6, 2), 0, 1.0),
    MCASE("MROPE, extra stream, sections wrap", c_mrope_e, 0, (16, 3, 5, 1), 0, 1.0),
    MCASE("MROPE, sections past n_dims/2", c_mrope_long, 0, (22, 2, 6, 1), 0, 1.0),
    MCASE("MROPE, YaRN + frequency factors", c_mrope_yarn, 12, (24, 2, 6, 1), 0, 1.8670),     /* (1.2 (1 + 0.1 ln 4))^2 */
    MCASE("IMROPE", c_imrope, 0, (24, 3, 6, 1), 0, 1.0),
    MCASE("IMROPE, extra stream", c_imrope_e, 0, (18, 2, 7, 1), 0, 1.0),
    MCASE("IMROPE, YaRN + frequency factors", c_imrope_yarn, 10, (20, 2, 6, 1), 0, 1.1435),   /* (1 + 0.1 ln 2)^2 */
    MCASE("VISION", c_vision, 0, (16, 3, 6, 1), 0, 1.0),
    MCASE("VISION, sections wrap", c_vision_wrap, 0, (16, 2, 5, 2), 0, 1.0),
    MCASE("VISION, YaRN + frequency factors", c_vision_yarn, 12, (24, 2, 6, 1), 0, 0.9262),  /* (0.9 (1 + 0.1 ln 2))^2 */
    MCASE("MROPE, transposed input", c_mrope_e, 0, (16, 5, 6, 1), OPS_TRANSPOSED, 1.0),
    MCASE("VISION, transposed input", c_vision, 0, (16, 4, 6, 1), OPS_TRANSPOSED, 1.0),
    CASE("normal, offset 4", c_offs_normal, 0, (14, 3, 13, 1), 0, 1.0),
    CASE("neox, offset 2, YaRN + frequency factors", c_offs_neox, 5, (15, 2, 13, 1), OPS_TRANSPOSED, 1.2965),
    MCASE("MROPE, offset 6", c_offs_mrope, 0, (20, 2, 6, 1), 0, 1.0),
    MCASE("IMROPE, offset 4", c_offs_imrope, 0, (16, 2, 6, 1), 0, 1.0),
    MGRAD("MROPE, extra stream", c_mrope_e, 0, (16, 2, 3, 1)),
    MGRAD("MROPE, YaRN + frequency factors", c_mrope_yarn, 12, (24, 2, 3, 1)),
    MGRAD("IMROPE, extra stream", c_imrope_e, 0, (18, 2, 3, 1)),
    MGRAD("VISION, YaRN + frequency factors", c_vision_yarn, 12, (24, 2, 3, 1)),
    GRAD("normal, offset 4", c_offs_normal, 0, (14, 2, 5, 1)),
    GRAD("neox, offset 2, YaRN + frequency factors", c_offs_neox, 5, (15, 2, 5, 1)),
    MGRAD("MROPE, offset 6", c_offs_mrope, 0, (20, 2, 3, 1)),
    REFUSED("ROPE", b_rope, r_rope), REFUSED("ROPE_BACK", b_rope_back, r_rope_back),
    CASE("neox, YaRN, n_ctx_orig 0", c_yarn_ctx0, 0, (16, 2, 13, 1), 0, 1.0),
    CASE("normal, YaRN, n_ctx_orig 0, frequency factors", c_yarn_ctx0_n, 6, (14, 2, 13, 1), OPS_TRANSPOSED, 2.3203),  /* (1.4245 (1 + 0.1 ln 2))^2 */
    MCASE("MROPE, YaRN, n_ctx_orig 0", c_yarn_ctx0_m, 0, (24, 2, 6, 1), 0, 1.0),
    GRAD("neox, YaRN, n_ctx_orig 0", c_yarn_ctx0, 0, (16, 2, 5, 1)),
    GRAD("normal, YaRN, n_ctx_orig 0, frequency factors", c_yarn_ctx0_n, 6, (14, 2, 5, 1)),
    MGRAD("MROPE, YaRN, n_ctx_orig 0", c_yarn_ctx0_m, 0, (24, 2, 3, 1)),
    VIEW_N(1, "neox, YaRN, n_ctx_orig 0", c_yarn_ctx0, 0, (18, 2, 13, 1), GGML_TYPE_F32),
    VIEW_N(1, "normal, YaRN + frequency factors, F16", c_yarn_half, 16, (36, 3, 13, 1), GGML_TYPE_F16),
    VIEW_N(4, "MROPE, YaRN, n_ctx_orig 0", c_yarn_ctx0_m, 0, (26, 2, 6, 1), GGML_TYPE_F32),
    VIEW_N(4, "VISION, F16", c_vision, 0, (18, 2, 6, 1), GGML_TYPE_F16),
    HALF_N(1, "ROPE", "normal, n_dims < ne0", b_rope, r_rope, c_partial, 0, (7, 3, 13, 1), OPS_NEW),
    HALF_N(1, "ROPE", "neox, YaRN + frequency factors", b_rope, r_rope, c_yarn_ff, 8, (20, 2, 13, 1), OPS_NEW),
    HALF_N(1, "ROPE_BACK", "neox, YaRN, n_ctx_orig 0", b_rope_back, r_rope_back, c_yarn_ctx0, 0, (16, 2, 13, 1), OPS_NEW),
    HALF_N(1, "ROPE", "ggml_rope_ext_inplace YaRN, factors", b_rope_ext_inplace, r_rope, c_yarn_ff, 8, (20, 3, 13, 1), OPS_INPLACE),
    HALF_N(4, "ROPE", "MROPE, offset 6", b_rope, r_rope, c_offs_mrope, 0, (20, 2, 6, 1), OPS_NEW),
    HALF_N(4, "ROPE", "IMROPE, YaRN + frequency factors", b_rope, r_rope, c_imrope_yarn, 10, (20, 2, 6, 1), OPS_NEW),
    HALF_N(4, "ROPE_BACK", "VISION, YaRN + frequency factors", b_rope_back, r_rope_back, c_vision_yarn, 12, (24, 2, 6, 1), OPS_NEW),
    HALF_N(4, "ROPE", "ggml_rope_multi_inplace MROPE", b_rope_multi_inplace, r_rope, c_mrope, 0, (26, 2, 6, 1), OPS_INPLACE),
    TE("dim 8, 5 timesteps", te_8, 5, 0, 20, OPS_FORWARD_ONLY),
    TE("odd dim 7, max_period 100", te_7, 6, 0, 20, OPS_FORWARD_ONLY),
    TE("dim 1: only the zero column", te_1, 3, 0, 20, OPS_FORWARD_ONLY),
    TE("dim 64, 37 timesteps", te_64, 37, 0, 20, OPS_FORWARD_ONLY),
    TE("gradient, dim 8", te_8, 4, 0, 3, OPS_GRAD),
    TE("gradient, odd dim 7", te_7, 4, 0, 3, OPS_GRAD),
    TE("gradient, dim 1 (zero)", te_1, 3, 0, 3, OPS_GRAD),
};

/* rope_multi's and rope_set_offset's refusals (rope_ext's are in tests/test_op_refusals.c) */
static void check_refusals(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 16, 2, 3, 1);
    struct ggml_tensor * pos1 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3), * pos4 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 12);
    struct ggml_tensor * ff4 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4), * ff8 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    int sec[4] = {2, 1, 1, 0}, vis[4] = {4, 4, 0, 0};
    int neg[4] = {2, -1, 1, 0}, zero3[4] = {0, 0, 0, 4}, too_long[4] = {8, 8, 1, 0}, huge[4] = {INT32_MAX, INT32_MAX, 1, 0};
#define MULTI(A, B, C, N, SEC, MODE) ggml_rope_multi(ctx, A, B, C, N, SEC, MODE, 0, 10000, 1, 0, 1, 32, 1)
#define MULTI_INPLACE(A, B, C, N, SEC, MODE) ggml_rope_multi_inplace(ctx, A, B, C, N, SEC, MODE, 0, 10000, 1, 0, 1, 32, 1)
    CHECK(MULTI(x, pos4, NULL, 8, sec, GGML_ROPE_TYPE_MROPE) != NULL, "a valid rope_multi works: %s", ggml_last_error());
    CHECK(MULTI(x, pos4, ff8, 8, vis, GGML_ROPE_TYPE_VISION) != NULL, "a valid VISION rope_multi works: %s", ggml_last_error());
    CHECK(MULTI(x, pos1, NULL, 8, NULL, GGML_ROPE_TYPE_NEOX) != NULL, "rope_multi NEOX without sections works: %s", ggml_last_error());
    OPS_EXPECT_REFUSED(MULTI(NULL, pos4, NULL, 8, sec, GGML_ROPE_TYPE_MROPE), "rope_multi with a NULL context");
    OPS_EXPECT_REFUSED(MULTI(x, NULL, NULL, 8, sec, GGML_ROPE_TYPE_MROPE), "rope_multi with NULL positions");
    OPS_EXPECT_REFUSED(MULTI(x, pos4, NULL, 8, NULL, GGML_ROPE_TYPE_MROPE), "rope_multi MROPE without sections");
    OPS_EXPECT_REFUSED(MULTI(x, pos1, NULL, 8, sec, GGML_ROPE_TYPE_MROPE), "rope_multi MROPE with one position per token");
    OPS_EXPECT_REFUSED(MULTI(x, pos4, NULL, 8, sec, GGML_ROPE_TYPE_NEOX), "rope_multi NEOX with 4 positions per token");
    OPS_EXPECT_REFUSED(MULTI(x, pos4, NULL, 8, neg, GGML_ROPE_TYPE_MROPE), "rope_multi with a negative section");
    OPS_EXPECT_REFUSED(MULTI(x, pos4, NULL, 8, zero3, GGML_ROPE_TYPE_IMROPE), "rope_multi with sections[0..2] all 0");
    OPS_EXPECT_REFUSED(MULTI(x, pos4, NULL, 8, too_long, GGML_ROPE_TYPE_MROPE), "rope_multi with sections summing past ne0");
    OPS_EXPECT_REFUSED(MULTI(x, pos4, NULL, 8, huge, GGML_ROPE_TYPE_MROPE), "rope_multi with sections near INT32_MAX");
    OPS_EXPECT_REFUSED(MULTI(x, pos4, NULL, 6, vis, GGML_ROPE_TYPE_VISION), "rope_multi VISION with ne0 != 2 n_dims");
    OPS_EXPECT_REFUSED(MULTI(x, pos4, ff4, 8, vis, GGML_ROPE_TYPE_VISION), "rope_multi VISION with n_dims/2 factors (it has n_dims pairs)");
    OPS_EXPECT_REFUSED(MULTI(x, pos4, NULL, 7, sec, GGML_ROPE_TYPE_MROPE), "rope_multi with an odd n_dims");
    OPS_EXPECT_REFUSED(MULTI(x, pos4, NULL, 8, sec, 16), "rope_multi with mode 16");
    OPS_EXPECT_REFUSED(MULTI(x, pos4, NULL, 8, sec, GGML_ROPE_TYPE_MROPE | 1), "rope_multi with mode 9");
    OPS_EXPECT_REFUSED(ggml_rope_multi_back(ctx, x, pos4, NULL, 8, NULL, GGML_ROPE_TYPE_IMROPE, 0, 10000, 1, 0, 1, 32, 1),
                       "rope_multi_back IMROPE without sections");
    OPS_EXPECT_REFUSED(ggml_rope_multi_inplace(ctx, x, pos4, NULL, 8, sec, GGML_ROPE_TYPE_MROPE, 0, -1, 1, 0, 1, 32, 1),
                       "rope_multi_inplace with freq_base -1");
    OPS_EXPECT_REFUSED(ggml_rope_ext(ctx, x, pos4, NULL, 8, GGML_ROPE_TYPE_MROPE, 0, 10000, 1, 0, 1, 32, 1), "rope_ext with mode MROPE");
    /* YaRN whose correction dims are NaN (upstream: NaN rows); with ext_factor 0 they are unused */
    OPS_EXPECT_REFUSED(ggml_rope_ext(ctx, x, pos1, NULL, 8, GGML_ROPE_TYPE_NEOX, -1, 10000, 1, 1, 1, 32, 1), "YaRN with n_ctx_orig -1");
    OPS_EXPECT_REFUSED(ggml_rope_ext_back(ctx, x, pos1, NULL, 8, GGML_ROPE_TYPE_NEOX, 512, 10000, 1, 1, 1, -32, 1), "YaRN with beta_fast -32");
    CHECK(ggml_rope_ext(ctx, x, pos1, NULL, 8, GGML_ROPE_TYPE_NEOX, -1, 10000, 1, 0, 1, 32, 1) != NULL, "n_ctx_orig -1 without YaRN works: %s",
          ggml_last_error());
    struct ggml_tensor * rows_overlap = ggml_view_3d(ctx, x, 16, 2, 3, 8 * sizeof(float), 16 * sizeof(float), 0);
    struct ggml_tensor * rows_cut = ggml_view_3d(ctx, x, 12, 2, 3, x->nb[1], x->nb[2], 0), * xt = ggml_transpose(ctx, x);
    OPS_EXPECT_REFUSED(MULTI_INPLACE(rows_overlap, pos4, NULL, 8, sec, GGML_ROPE_TYPE_MROPE), "rope_multi_inplace of a view whose rows overlap");
    OPS_EXPECT_REFUSED(MULTI_INPLACE(xt, ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4 * xt->ne[2]), NULL, 2, sec, GGML_ROPE_TYPE_MROPE),
                       "rope_multi_inplace of a transposed view");
    OPS_EXPECT_REFUSED(ggml_rope_ext_inplace(ctx, rows_overlap, pos1, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "rope_ext_inplace of overlapping rows");
    CHECK(MULTI_INPLACE(rows_cut, pos4, NULL, 8, sec, GGML_ROPE_TYPE_MROPE) != NULL, "rope_multi_inplace of packed rows apart works: %s",
          ggml_last_error());
    struct ggml_tensor * xbf = ggml_new_tensor_4d(ctx, GGML_TYPE_BF16, 16, 2, 3, 1);
    OPS_EXPECT_REFUSED(MULTI(xbf, pos4, NULL, 8, sec, GGML_ROPE_TYPE_MROPE), "rope_multi of BF16 a (upstream's CPU backend: F32, F16)");
#undef MULTI_INPLACE
#undef MULTI
    struct ggml_tensor * r = ggml_rope_ext(ctx, x, pos1, NULL, 8, GGML_ROPE_TYPE_NEOX, 0, 10000, 1, 0, 1, 32, 1);
    OPS_EXPECT_REFUSED(ggml_rope_set_offset(NULL, 2), "rope_set_offset of NULL");
    OPS_EXPECT_REFUSED(ggml_rope_set_offset(x, 2), "rope_set_offset of a tensor that is not a ROPE node");
    OPS_EXPECT_REFUSED(ggml_rope_set_offset(r, -2), "rope_set_offset -2");
    OPS_EXPECT_REFUSED(ggml_rope_set_offset(r, 3), "rope_set_offset odd");
    OPS_EXPECT_REFUSED(ggml_rope_set_offset(r, 10), "rope_set_offset past ne0 - n_dims");
    OPS_EXPECT_REFUSED(ggml_rope_set_offset(r, INT32_MAX - 1), "rope_set_offset INT32_MAX - 1");
    CHECK(ggml_rope_set_offset(r, 8) == r, "rope_set_offset 8 on ne0 16, n_dims 8 works: %s", ggml_last_error());
    OPS_EXPECT_REFUSED(ggml_rope_set_offset(ggml_rope_multi(ctx, x, pos4, NULL, 8, vis, GGML_ROPE_TYPE_VISION, 0, 10000, 1, 0, 1, 32, 1), 2),
                       "rope_set_offset of a VISION node");
    ggml_free(ctx);
}

/* ggml_rope_yarn_corr_dims at values worked out by hand: d(beta) = 128 ln(4096 / (2 pi beta)) / (2 ln 10000)
 * is 20.94 for beta 32 (floor 20) and 45.03 for beta 1 (ceil 46); n_ctx_orig 0 gives d = -inf: [0, -inf]
 * (upstream's MAX(0, -inf) and MIN(n_dims - 1, -inf)); the clamps at 0 and n_dims - 1 */
static void check_refs(void) {
    float dims[2];
    ggml_rope_yarn_corr_dims(128, 4096, 10000, 32, 1, dims);
    CHECK(dims[0] == 20 && dims[1] == 46, "yarn_corr_dims(128, 4096, 1e4, 32, 1) = [%g, %g], want [20, 46]", dims[0], dims[1]);
    ggml_rope_yarn_corr_dims(128, 0, 10000, 1, 1, dims);
    CHECK(dims[0] == 0 && isinf(dims[1]) && dims[1] < 0, "yarn_corr_dims with n_ctx_orig 0 = [%g, %g], want [0, -inf]", dims[0], dims[1]);
    ggml_rope_yarn_corr_dims(16, 4096, 10, 1000, 0.001f, dims);
    CHECK(dims[0] == 0 && dims[1] == 15, "yarn_corr_dims clamped = [%g, %g], want [0, 15]", dims[0], dims[1]);
}

const struct ops_family ops_rope = {"rope", rows, sizeof rows / sizeof rows[0], check_refs, check_refusals};

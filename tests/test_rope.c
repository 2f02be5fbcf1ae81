/* test_rope.c -- ggml_rope_ext / ggml_rope_ext_back: kernel against a float64
 * reference, inverse, backward rules, thread independence, bad input.
 *
 * The reference follows the YaRN paper's formulation (inverse frequencies
 * inv_k = base^(-2k/n_dims) / c[k], interpolated ones inv_k * freq_scale, mixed
 * by the linear ramp between the correction dims, magnitude attn_factor
 * (1 + 0.1 ln(1/freq_scale))) with ggml's conventions (ramp over the pair index
 * k, denominator max(0.001, hi - lo)). The kernel computes its angles in double
 * and rounds each output once, so an element may be off by about one float
 * rounding of itself (1.2e-7 |ref|) plus the double error of the angle, which
 * is below 1e-9 of the pair's magnitude for positions up to 1e6: an angle
 * computed in float (off by ~0.1 rad at position 1e6), a wrong pairing or a
 * wrong ramp fails by orders of magnitude. */
#include "common/test_common.h"
#include "core/internal.h"

#include <float.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define NTH 3

struct rope_case {
    const char * name;
    int64_t ne[4];
    int n_dims, mode, n_ctx_orig;
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    bool freq_factors;   /* a c of n_dims/2 values in [0.5, 2] */
    bool transposed;     /* a is a permuted view (ne0 not packed) */
};

static const int32_t positions[] = {0, 1, -3, 17, 1000000, -100000, 65535, 7, 4096, -1, 250000, 2, 999983};
#define N_POSITIONS ((int64_t) (sizeof positions / sizeof positions[0]))

/* ---- float64 reference ---- */

static const double PI = 3.14159265358979323846;

/* the magnitude factor and each pair's angle at position pos */
static double ref_angles(const struct rope_case * rc, const double * ff, double pos, double * angle) {
    const int half = rc->n_dims / 2;
    const double base = rc->freq_base, scale = rc->freq_scale, ext = rc->ext_factor;
    /* YaRN: the dimension index whose wavelength makes `beta` turns over n_ctx_orig tokens */
    const double d_fast = rc->n_dims * log(rc->n_ctx_orig / (rc->beta_fast * 2 * PI)) / (2 * log(base));
    const double d_slow = rc->n_dims * log(rc->n_ctx_orig / (rc->beta_slow * 2 * PI)) / (2 * log(base));
    const double lo = d_fast > 0 ? floor(d_fast) : 0, hi = ceil(d_slow) < rc->n_dims - 1 ? ceil(d_slow) : rc->n_dims - 1;
    for (int k = 0; k < half; k++) {
        const double inv_extrap = 1.0 / pow(base, (2.0 * k) / rc->n_dims) / (ff ? ff[k] : 1.0);
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
    return ext != 0 ? rc->attn_factor * (1 + 0.1 * log(1 / scale)) : rc->attn_factor;
}

/* y (and each element's pair magnitude |(x0, x1)| m, 0 for copied ones) of rope (sign 1) or rope_back (sign -1); x in logical order */
static void ref_rope(const struct rope_case * rc, const double * x, const double * ff, double sign, double * y, double * mag) {
    const int64_t ne0 = rc->ne[0], rows = rc->ne[1] * rc->ne[2] * rc->ne[3];
    const int half = rc->n_dims / 2;
    double * angle = malloc((size_t) half * sizeof *angle);
    for (int64_t r = 0; r < rows; r++) {
        const int64_t token = (r / rc->ne[1]) % rc->ne[2];
        const double m = ref_angles(rc, ff, positions[token % N_POSITIONS], angle);
        const double * xr = x + r * ne0;
        double * yr = y + r * ne0, * mr = mag + r * ne0;
        for (int64_t j = 0; j < ne0; j++) { yr[j] = xr[j]; mr[j] = 0; }
        for (int k = 0; k < half; k++) {
            const int64_t j0 = rc->mode == GGML_ROPE_TYPE_NEOX ? k : 2 * k, j1 = rc->mode == GGML_ROPE_TYPE_NEOX ? k + half : 2 * k + 1;
            const double c = cos(sign * angle[k]), s = sin(sign * angle[k]);
            yr[j0] = m * (c * xr[j0] - s * xr[j1]);
            yr[j1] = m * (s * xr[j0] + c * xr[j1]);
            mr[j0] = mr[j1] = fabs(m) * hypot(xr[j0], xr[j1]);
        }
    }
    free(angle);
}

/* ---- helpers ---- */

static bool compute_nth(struct ggml_context * ctx, struct ggml_tensor * out, int nth) {
    if (!CHECK(out != NULL, "op returned NULL: %s", ggml_last_error())) return false;
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(g, out);
    return CHECK(ggml_graph_compute_with_ctx(ctx, g, nth) == GGML_STATUS_SUCCESS, "compute failed: %s", ggml_last_error());
}

static double * values_of(const struct ggml_tensor * t) {
    double * v = malloc((size_t) ggml_nelements(t) * sizeof *v);
    for (int64_t i = 0; i < ggml_nelements(t); i++) v[i] = tc_get(t, i);
    return v;
}

struct rope_inputs { struct ggml_tensor * x, * pos, * ff; };

static struct rope_inputs make_inputs(struct ggml_context * ctx, const struct rope_case * rc) {
    struct rope_inputs in;
    const int64_t * ne = rc->ne;
    if (rc->transposed) {  /* stored [n_head, ne0, tokens, ne3], viewed as [ne0, n_head, ...] */
        in.x = ggml_permute(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne[1], ne[0], ne[2], ne[3]), 1, 0, 2, 3);
    } else {
        in.x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3]);
    }
    for (int64_t i = 0; i < ggml_nelements(in.x); i++) ggml_set_f32_1d(in.x, i, (float) tc_uniform(-2, 2));
    in.pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, ne[2]);
    for (int64_t i = 0; i < ne[2]; i++) ((int32_t *) in.pos->data)[i] = positions[i % N_POSITIONS];
    in.ff = NULL;
    if (rc->freq_factors) {
        in.ff = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, rc->n_dims / 2);
        tc_fill_uniform(in.ff, 0.5, 2);
    }
    return in;
}

static struct ggml_tensor * rope_op(struct ggml_context * ctx, const struct rope_case * rc, bool back, struct ggml_tensor * x,
                                    struct ggml_tensor * pos, struct ggml_tensor * ff) {
    return (back ? ggml_rope_ext_back : ggml_rope_ext)(ctx, x, pos, ff, rc->n_dims, rc->mode, rc->n_ctx_orig, rc->freq_base, rc->freq_scale,
                                                       rc->ext_factor, rc->attn_factor, rc->beta_fast, rc->beta_slow);
}

/* |y - ref| <= 1.2e-7 |ref| + 1e-9 mag element by element; copied entries exactly */
static void expect_close(const struct ggml_tensor * y, const double * ref, const double * mag, const char * what) {
    int bad = 0;
    for (int64_t i = 0; i < ggml_nelements(y); i++) {
        const double v = tc_get(y, i), tol = 1.2e-7 * fabs(ref[i]) + 1e-9 * mag[i];
        if (!(fabs(v - ref[i]) <= tol) && bad++ < 4) fprintf(stderr, "  %s: element %lld: got %.9g, want %.9g\n", what, (long long) i, v, ref[i]);
    }
    CHECK(bad == 0, "%s: %d elements off", what, bad);
}

/* ---- the cases: both modes, n_dims < ne0, freq_scale != 1, YaRN, frequency factors, strided input ---- */

static const struct rope_case cases[] = {
    /* name                                ne                 n_dims mode                     n_ctx  base     scale  ext   attn  fast  slow ff     tr */
    {"normal, all dims",                   {8, 3, 13, 2},     8,  GGML_ROPE_TYPE_NORMAL, 0,    10000,  1,     0,    1,    32,   1,   false, false},
    {"neox, all dims",                     {16, 2, 13, 1},    16, GGML_ROPE_TYPE_NEOX,   0,    10000,  1,     0,    1,    32,   1,   false, false},
    {"normal, n_dims < ne0 (odd ne0)",     {7, 5, 13, 1},     4,  GGML_ROPE_TYPE_NORMAL, 0,    10000,  0.25f, 0,    1,    32,   1,   false, false},
    {"neox, n_dims < ne0, freq_scale",     {10, 3, 14, 3},    6,  GGML_ROPE_TYPE_NEOX,   0,    500000, 0.5f,  0,    1,    32,   1,   false, false},
    {"neox, 1 token, 1 head",              {2, 1, 1, 1},      2,  GGML_ROPE_TYPE_NEOX,   0,    10000,  1,     0,    1,    32,   1,   false, false},
    {"neox, YaRN (ramp inside)",           {64, 2, 13, 1},    64, GGML_ROPE_TYPE_NEOX,   4096, 10000,  0.25f, 1,    1,    32,   1,   false, false},
    {"normal, YaRN ext 0.5, attn 0.8",     {34, 3, 13, 1},    32, GGML_ROPE_TYPE_NORMAL, 512,  10000,  0.125f, 0.5f, 0.8f, 32,  1,   false, false},
    {"neox, YaRN, beta_slow > beta_fast",  {24, 2, 13, 1},    24, GGML_ROPE_TYPE_NEOX,   2048, 10000,  0.5f,  1,    1,    1,    32,  false, false},
    {"normal, YaRN, both dims clamped",    {16, 2, 13, 1},    16, GGML_ROPE_TYPE_NORMAL, 4096, 10,     0.5f,  1,    1,    1000, 1,   false, false},
    {"normal, frequency factors",          {12, 2, 13, 1},    12, GGML_ROPE_TYPE_NORMAL, 0,    10000,  1,     0,    1,    32,   1,   true,  false},
    {"neox, YaRN + frequency factors",     {20, 2, 13, 1},    16, GGML_ROPE_TYPE_NEOX,   1024, 10000,  0.5f,  1,    1.2f, 32,   1,   true,  false},
    {"normal, transposed input",           {10, 7, 13, 1},    8,  GGML_ROPE_TYPE_NORMAL, 0,    10000,  1,     0,    1,    32,   1,   false, true},
    {"neox, transposed input, YaRN",       {12, 3, 13, 2},    12, GGML_ROPE_TYPE_NEOX,   4096, 10000,  0.25f, 1,    1,    32,   1,   false, true},
};
#define N_CASES ((int) (sizeof cases / sizeof cases[0]))

static void test_forward(void) {
    for (int c = 0; c < N_CASES; c++) {
        const struct rope_case * rc = &cases[c];
        struct ggml_context * ctx = tc_ctx(16);
        const struct rope_inputs in = make_inputs(ctx, rc);
        double * x = values_of(in.x), * ff = in.ff ? values_of(in.ff) : NULL;
        const int64_t n = ggml_nelements(in.x);
        double * ref = malloc((size_t) n * sizeof *ref), * mag = malloc((size_t) n * sizeof *mag);
        for (int back = 0; back < 2; back++) {
            struct ggml_tensor * y = rope_op(ctx, rc, back, in.x, in.pos, in.ff);
            if (y) tc_poison(y);
            if (!compute_nth(ctx, y, NTH)) continue;
            CHECK(y->type == GGML_TYPE_F32 && ggml_are_same_shape(y, in.x) && ggml_is_contiguous(y), "%s: F32 shaped like a", rc->name);
            ref_rope(rc, x, ff, back ? -1.0 : 1.0, ref, mag);
            char what[128];
            snprintf(what, sizeof what, "%s (%s)", rc->name, back ? "rope_ext_back" : "rope_ext");
            expect_close(y, ref, mag, what);
            printf("%-45s ok\n", what);
        }
        free(x); free(ff); free(ref); free(mag);
        ggml_free(ctx);
    }
}

/* rope_back(rope(x)) = m^2 x: the rotations cancel (m = 1 without YaRN and attn_factor) */
static void test_inverse(void) {
    for (int c = 0; c < N_CASES; c++) {
        const struct rope_case * rc = &cases[c];
        struct ggml_context * ctx = tc_ctx(16);
        const struct rope_inputs in = make_inputs(ctx, rc);
        struct ggml_tensor * y = rope_op(ctx, rc, true, rope_op(ctx, rc, false, in.x, in.pos, in.ff), in.pos, in.ff);
        if (compute_nth(ctx, y, NTH)) {
            double angle_unused[64];
            const double m = ref_angles(rc, NULL, 0, angle_unused);
            double worst = 0;
            for (int64_t i = 0; i < ggml_nelements(y); i++) {
                const double want = (i % rc->ne[0] < rc->n_dims ? m * m : 1.0) * tc_get(in.x, i);
                worst = fmax(worst, fabs(tc_get(y, i) - want) / (m * m * 2));  /* |x| <= 2 */
            }
            CHECK(worst <= 4e-7, "%s: rope_back(rope(x)) differs from m^2 x by %.3g (relative to m^2 |x|max)", rc->name, worst);
        }
        ggml_free(ctx);
    }
}

/* ---- backward rules by finite differences (the op is linear: step 1e-2 is exact up to rounding) ---- */

struct grad_user { const struct rope_case * rc; bool back; };

static struct ggml_tensor * wsum(struct ggml_context * ctx, struct ggml_tensor * t) {
    if (!t) return NULL;
    struct ggml_tensor * w = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, t->ne);
    tc_fill_uniform(w, -1, 1);
    return ggml_sum(ctx, ggml_mul(ctx, t, w));
}

static struct ggml_tensor * b_rope(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    const struct grad_user * u = user;
    const struct rope_inputs in = make_inputs(ctx, u->rc);
    /* a nonlinear loss around the op so the gradient reaching it is not constant */
    return wsum(ctx, ggml_sqr(ctx, rope_op(ctx, u->rc, u->back, p[0], in.pos, in.ff)));
}

static void test_gradients(void) {
    const int picks[] = {0, 1, 3, 5, 6, 8, 10};
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++) {
        const struct rope_case * rc = &cases[picks[i]];
        const int64_t shape[1][4] = {{rc->ne[0], rc->ne[1], rc->ne[2] < 5 ? rc->ne[2] : 5, 1}};
        struct rope_case small = *rc;
        memcpy(small.ne, shape[0], sizeof small.ne);
        for (int back = 0; back < 2; back++) {
            struct grad_user u = {&small, back};
            char what[128];
            snprintf(what, sizeof what, "grad %s %s", back ? "rope_ext_back" : "rope_ext", rc->name);
            const int bad = tc_gradcheck(what, b_rope, &u, 1, shape, -1, 1, 1e-2, 1e-3, 1e-2);
            printf("%-60s %s\n", what, bad ? "FAILED" : "ok");
        }
    }
}

/* the positions and the frequency factors get no gradient: refused, not built wrong */
static void test_refusals(void) {
    const struct rope_case * rc = &cases[9];  /* with frequency factors */
    struct ggml_context * ctx = tc_ctx(16);
    const struct rope_inputs in = make_inputs(ctx, rc);
    ggml_set_param(in.x);
    ggml_set_param(in.ff);
    struct ggml_tensor * loss = ggml_sum(ctx, rope_op(ctx, rc, false, in.x, in.pos, in.ff));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(g, loss);
    ggml_clear_error();
    CHECK(ggml_build_backward_expand(ctx, g, NULL) != GGML_STATUS_SUCCESS && strstr(ggml_last_error(), "frequency factors"),
          "a parameter frequency factor is refused (got: %s)", ggml_last_error());
    ggml_free(ctx);
}

/* ---- thread-count independence ---- */

static void test_threads(void) {
    for (int c = 0; c < N_CASES; c++) {
        const struct rope_case * rc = &cases[c];
        struct ggml_context * ctx = tc_ctx(16);
        const struct rope_inputs in = make_inputs(ctx, rc);
        for (int back = 0; back < 2; back++) {
            struct ggml_tensor * y1 = rope_op(ctx, rc, back, in.x, in.pos, in.ff), * y3 = rope_op(ctx, rc, back, in.x, in.pos, in.ff);
            if (!compute_nth(ctx, y1, 1) || !compute_nth(ctx, y3, 3)) continue;
            CHECK(memcmp(y1->data, y3->data, ggml_nbytes(y1)) == 0, "%s: 1 and 3 threads differ", rc->name);
        }
        ggml_free(ctx);
    }
}

/* ---- bad input: NULL with a message ---- */

static void expect_refused(struct ggml_tensor * t, const char * what) {
    CHECK(t == NULL && ggml_last_error()[0] != '\0', "%s: should be refused with a message", what);
    ggml_clear_error();
}

static void test_errors(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 2, 5), * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 5);
    struct ggml_tensor * x16 = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 8, 2, 5), * pos_f = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);
    struct ggml_tensor * pos_short = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4), * pos_2d = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 5, 2);
    struct ggml_tensor * ff_short = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3), * ff_i32 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4);
    struct ggml_tensor * ff_2d = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2);
    const float nan = NAN, inf = INFINITY;
    for (int back = 0; back < 2; back++) {
        struct ggml_tensor * (*rope)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, struct ggml_tensor *, int, int, int,
                                     float, float, float, float, float, float) = back ? ggml_rope_ext_back : ggml_rope_ext;
        ggml_clear_error();
        CHECK(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1) != NULL, "a valid call works: %s", ggml_last_error());
        CHECK(rope(ctx, x, pos, NULL, 2, 2, 4096, 10000, 0.5f, 1, 1, 32, 1) != NULL, "a valid YaRN call works: %s", ggml_last_error());
        expect_refused(rope(NULL, x, pos, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "NULL context");
        expect_refused(rope(ctx, NULL, pos, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "NULL a");
        expect_refused(rope(ctx, x, NULL, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "NULL positions");
        expect_refused(rope(ctx, x16, pos, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "F16 a");
        expect_refused(rope(ctx, x, pos_f, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "F32 positions");
        expect_refused(rope(ctx, x, pos_short, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "positions shorter than ne2");
        expect_refused(rope(ctx, x, pos_2d, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "2-D positions");
        expect_refused(rope(ctx, x, pos, ff_short, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "frequency factors shorter than n_dims/2");
        expect_refused(rope(ctx, x, pos, ff_i32, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "I32 frequency factors");
        expect_refused(rope(ctx, x, pos, ff_2d, 8, 0, 0, 10000, 1, 0, 1, 32, 1), "2-D frequency factors");
        const int bad_modes[] = {1, 3, 4, 8, 24, -1, INT_MAX};
        for (size_t i = 0; i < sizeof bad_modes / sizeof bad_modes[0]; i++)
            expect_refused(rope(ctx, x, pos, NULL, 8, bad_modes[i], 0, 10000, 1, 0, 1, 32, 1), "mode other than 0 / 2");
        const int bad_dims[] = {7, 1, 0, -2, 10, INT_MAX, INT_MIN};
        for (size_t i = 0; i < sizeof bad_dims / sizeof bad_dims[0]; i++)
            expect_refused(rope(ctx, x, pos, NULL, bad_dims[i], 0, 0, 10000, 1, 0, 1, 32, 1), "odd, non-positive or too large n_dims");
        const float bad_base[] = {0, -10000, nan, inf, -inf};
        for (size_t i = 0; i < sizeof bad_base / sizeof bad_base[0]; i++)
            expect_refused(rope(ctx, x, pos, NULL, 8, 0, 0, bad_base[i], 1, 0, 1, 32, 1), "freq_base <= 0 or not finite");
        const float bad_scale[] = {0, -1, nan, inf};
        for (size_t i = 0; i < sizeof bad_scale / sizeof bad_scale[0]; i++)
            expect_refused(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, bad_scale[i], 0, 1, 32, 1), "freq_scale <= 0 or not finite");
        expect_refused(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, 1, nan, 1, 32, 1), "NaN ext_factor");
        expect_refused(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, 1, 0, inf, 32, 1), "Inf attn_factor");
        expect_refused(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, 1, 0, 1, nan, 1), "NaN beta_fast");
        expect_refused(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, 1, 0, 1, 32, -inf), "-Inf beta_slow");
        /* YaRN's correction dims need n_ctx_orig, beta_fast, beta_slow > 0 and freq_base != 1 */
        expect_refused(rope(ctx, x, pos, NULL, 8, 0, 0, 10000, 0.5f, 1, 1, 32, 1), "YaRN with n_ctx_orig 0");
        expect_refused(rope(ctx, x, pos, NULL, 8, 0, 4096, 10000, 0.5f, 1, 1, 0, 1), "YaRN with beta_fast 0");
        expect_refused(rope(ctx, x, pos, NULL, 8, 0, 4096, 10000, 0.5f, 1, 1, 32, -1), "YaRN with negative beta_slow");
        expect_refused(rope(ctx, x, pos, NULL, 8, 0, 4096, 1, 0.5f, 1, 1, 32, 1), "YaRN with freq_base 1");
    }
    ggml_free(ctx);
}

int main(void) {
    tc_seed(29);
    test_forward();
    test_inverse();
    test_gradients();
    test_refusals();
    test_threads();
    test_errors();
    return tc_finish("rope");
}

/* pool.c -- rows of POOL_1D, POOL_2D and their gradient op POOL_2D_BACK.
 * The forward rows pool x + c, c a fixed permutation of steps of 0.25
 * centred on 0 and x in [-0.1, 0.1]: every window's largest element is the
 * same under the finite differences' steps (no kink is crossed) and half
 * the windows are all negative, so a padding read as 0 would show. F16
 * inputs: pooled as stored, F32 results, the gradient refused. */
#include "ops/harness.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

struct pool_case {
    enum ggml_op_pool op;
    int k0, k1, s0, s1, p0, p1;
    bool one_d;
};

static double offset_of(int64_t i, int64_t n) { return 0.25 * (double) ((i * 10007) % n) - 0.125 * (double) n; }

static struct ggml_tensor * pool_of(struct ggml_context * ctx, struct ggml_tensor * a, const struct pool_case * c) {
    if (c->one_d) return ggml_pool_1d(ctx, a, c->op, c->k0, c->s0, c->p0);
    return ggml_pool_2d(ctx, a, c->op, c->k0, c->k1, c->s0, c->s1, (float) c->p0, (float) c->p1);
}

static struct ggml_tensor * b_pool(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    struct ggml_tensor * c = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, in[0]->ne);
    const int64_t n = ggml_nelements(c);
    for (int64_t i = 0; i < n; i++) ((float *) c->data)[i] = (float) offset_of(i, n);
    return pool_of(ctx, ggml_add(ctx, in[0], c), p);
}

/* the pool of in[0] itself: an F16 input (upstream's tests pool F16 data) */
static struct ggml_tensor * b_pool_direct(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) { return pool_of(ctx, in[0], p); }

/* in[0] = dy, in[1] = the forward's input */
static struct ggml_tensor * b_pool_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct pool_case * c = p;
    return ggml_pool_2d_back(ctx, in[0], in[1], c->op, c->k0, c->k1, c->s0, c->s1, (float) c->p0, (float) c->p1);
}

/* ---- float64, from the definition ---- */

/* Window o along an axis of n inputs: start o s - p, the inside part [lo, hi). */
static void clip(int64_t o, int k, int s, int p, int64_t n, int64_t * lo, int64_t * hi) {
    *lo = o * s - p;
    *hi = *lo + k;
    if (*lo < 0) *lo = 0;
    if (*hi > n) *hi = n;
}

/* The pool of x (shape ne, with c's kernel, k1 = 1 in 1-D); with dy, the
 * gradient instead: dx scattered from each window. */
static void pool_ref(const struct pool_case * c, const double * x, const int64_t ne[4], const double * dy, double * out) {
    const int k1 = c->one_d ? 1 : c->k1, s1 = c->one_d ? 1 : c->s1, p1 = c->one_d ? 0 : c->p1;
    const int64_t OW = (ne[0] + 2 * c->p0 - c->k0) / c->s0 + 1, OH = (ne[1] + 2 * p1 - k1) / s1 + 1, planes = ne[2] * ne[3];
    if (dy)
        for (int64_t i = 0; i < ne[0] * ne[1] * planes; i++) out[i] = 0.0;
    for (int64_t q = 0; q < planes; q++)
        for (int64_t oy = 0; oy < OH; oy++)
            for (int64_t ox = 0; ox < OW; ox++) {
                int64_t x0, x1, y0, y1;
                clip(ox, c->k0, c->s0, c->p0, ne[0], &x0, &x1);
                clip(oy, k1, s1, p1, ne[1], &y0, &y1);
                const int64_t o = (q * OH + oy) * OW + ox;
                double best = -DBL_MAX, sum = 0.0;
                int64_t arg = -1;
                for (int64_t y = y0; y < y1; y++)
                    for (int64_t xx = x0; xx < x1; xx++) {
                        const int64_t i = (q * ne[1] + y) * ne[0] + xx;
                        sum += x[i];
                        if (x[i] > best) { best = x[i]; arg = i; }
                    }
                /* 1-D averages over what is inside, 2-D over the whole kernel */
                const double m = c->one_d ? (double) ((x1 - x0) * (y1 - y0)) : (double) c->k0 * k1;
                if (!dy) { out[o] = c->op == GGML_OP_POOL_MAX ? (arg >= 0 ? best : -FLT_MAX) : sum / m; continue; }
                if (c->op == GGML_OP_POOL_MAX) { if (arg >= 0) out[arg] += dy[o]; continue; }
                for (int64_t y = y0; y < y1; y++)
                    for (int64_t xx = x0; xx < x1; xx++) out[(q * ne[1] + y) * ne[0] + xx] += dy[o] / m;
            }
}

static void r_pool(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    const int64_t n = ne[0][0] * ne[0][1] * ne[0][2] * ne[0][3];
    double * x = malloc((size_t) n * sizeof *x);
    for (int64_t i = 0; i < n; i++) x[i] = in[0][i] + (double) (float) offset_of(i, n);
    pool_ref(p, x, ne[0], NULL, out);
    free(x);
}

static void r_pool_direct(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    pool_ref(p, in[0], ne[0], NULL, out);
}

static void r_pool_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    pool_ref(p, in[1], ne[1], in[0], out);
}

static const struct pool_case max1 = {GGML_OP_POOL_MAX, 3, 1, 2, 1, 1, 0, true}, avg1 = {GGML_OP_POOL_AVG, 3, 1, 2, 1, 1, 0, true},
                              avg1_wide = {GGML_OP_POOL_AVG, 4, 1, 1, 1, 3, 0, true}, max1_k1 = {GGML_OP_POOL_MAX, 1, 1, 1, 1, 0, 0, true},
                              max2 = {GGML_OP_POOL_MAX, 2, 2, 2, 2, 0, 0, false}, avg2 = {GGML_OP_POOL_AVG, 2, 2, 2, 2, 0, 0, false},
                              max2_pad = {GGML_OP_POOL_MAX, 3, 2, 2, 1, 1, 1, false}, avg2_pad = {GGML_OP_POOL_AVG, 3, 3, 1, 2, 1, 1, false},
                              max2_overlap = {GGML_OP_POOL_MAX, 3, 3, 1, 1, 1, 1, false};

/* result shapes: the pool of input 0, or (POOL_2D_BACK) input 1's shape */
static void s_pool(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const struct pool_case * c = p;
    no[0] = (ne[0][0] + 2 * c->p0 - c->k0) / c->s0 + 1;
    no[1] = c->one_d ? ne[0][1] : (ne[0][1] + 2 * c->p1 - c->k1) / c->s1 + 1;
    no[2] = ne[0][2]; no[3] = ne[0][3];
}
static void s_pool_back(const int64_t (*ne)[4], const void * p, int64_t no[4]) { (void) p; for (int d = 0; d < 4; d++) no[d] = ne[1][d]; }

#define IN_(S, LO, HI) {.ne = OPS_SHAPE S, .lo = LO, .hi = HI}
#define ROW_(OP, NAME, BUILD, CASE, SHAPE, REF, GRAD, N, ...)                                                        \
    {.op = OP, .variant = NAME, .build = BUILD, .params = &CASE, .n_in = N, .in = {__VA_ARGS__}, .shape = SHAPE, \
     .ref = REF, .cmp = OPS_NORM2, .tol = 1e-6, .grad = GRAD}
/* an F16 input (values the halves store; ties possible, any layout), F32 result; its gradient refused */
#define F16_(OP, NAME, CASE, S, GRAD)                                                                                \
    {.op = OP, .variant = "F16 input, " NAME, .build = b_pool_direct, .params = &CASE, .n_in = 1,                 \
     .in = {{.ne = OPS_SHAPE S, .lo = -3, .hi = 3, .type = GGML_TYPE_F16, .layout = OPS_ANY_LAYOUT}}, .shape = s_pool, \
     .ref = r_pool_direct, .cmp = OPS_NORM2, .tol = 1e-6, .grad = GRAD, .refusal = "f16"}
static const struct ops_row rows[] = {
    F16_("POOL_1D", "max k 3 s 2 p 1", max1, (9, 3, 2, 1), OPS_REFUSED), F16_("POOL_1D", "avg k 4 s 1 p 3", avg1_wide, (5, 2, 1, 3), OPS_FORWARD_ONLY),
    F16_("POOL_2D", "max 3x2 s 2,1 p 1,1", max2_pad, (7, 5, 2, 1), OPS_REFUSED), F16_("POOL_2D", "avg 2x2 s 2", avg2, (8, 6, 3, 2), OPS_FORWARD_ONLY),
    ROW_("POOL_1D", "max k 3 s 2 p 1, odd", b_pool, max1, s_pool, r_pool, OPS_GRAD, 1, IN_((9, 3, 2, 1), -0.1, 0.1)),
    ROW_("POOL_1D", "avg k 3 s 2 p 1 (inside count)", b_pool, avg1, s_pool, r_pool, OPS_GRAD, 1, IN_((9, 3, 2, 1), -0.1, 0.1)),
    ROW_("POOL_1D", "avg k 4 s 1 p 3", b_pool, avg1_wide, s_pool, r_pool, OPS_GRAD, 1, IN_((5, 2, 1, 3), -0.1, 0.1)),
    ROW_("POOL_1D", "max k 1 (identity)", b_pool, max1_k1, s_pool, r_pool, OPS_GRAD, 1, IN_((6, 4, 1, 1), -0.1, 0.1)),
    ROW_("POOL_2D", "max 2x2 s 2 [8,6,3,2]", b_pool, max2, s_pool, r_pool, OPS_GRAD, 1, IN_((8, 6, 3, 2), -0.1, 0.1)),
    ROW_("POOL_2D", "avg 2x2 s 2, odd [7,5,2,1]", b_pool, avg2, s_pool, r_pool, OPS_GRAD, 1, IN_((7, 5, 2, 1), -0.1, 0.1)),
    ROW_("POOL_2D", "max 3x2 s 2,1 p 1,1", b_pool, max2_pad, s_pool, r_pool, OPS_GRAD, 1, IN_((7, 5, 2, 1), -0.1, 0.1)),
    ROW_("POOL_2D", "avg 3x3 s 1,2 p 1 (k0*k1)", b_pool, avg2_pad, s_pool, r_pool, OPS_GRAD, 1, IN_((6, 7, 1, 2), -0.1, 0.1)),
    ROW_("POOL_2D", "max 3x3 s 1 p 1, overlapping", b_pool, max2_overlap, s_pool, r_pool, OPS_GRAD, 1, IN_((5, 4, 3, 1), -0.1, 0.1)),
    /* rows wide enough for the SIMD interior (blocks of 16 and 8 outputs, a scalar tail, clipped edges) */
    ROW_("POOL_1D", "max k 3 s 2 p 1, wide", b_pool, max1, s_pool, r_pool, OPS_GRAD, 1, IN_((75, 2, 1, 1), -0.1, 0.1)),
    ROW_("POOL_1D", "avg k 4 s 1 p 3, wide", b_pool, avg1_wide, s_pool, r_pool, OPS_GRAD, 1, IN_((41, 2, 1, 1), -0.1, 0.1)),
    ROW_("POOL_2D", "max 2x2 s 2, wide [70,4,2,1]", b_pool, max2, s_pool, r_pool, OPS_GRAD, 1, IN_((70, 4, 2, 1), -0.1, 0.1)),
    ROW_("POOL_2D", "avg 2x2 s 2, wide odd [67,3,1,2]", b_pool, avg2, s_pool, r_pool, OPS_GRAD, 1, IN_((67, 3, 1, 2), -0.1, 0.1)),
    ROW_("POOL_2D", "max 3x3 s 1 p 1, wide [58,3,2,1]", b_pool, max2_overlap, s_pool, r_pool, OPS_GRAD, 1, IN_((58, 3, 2, 1), -0.1, 0.1)),
    ROW_("POOL_2D", "avg 2x2 s 2, 16 + 8 + 1 outputs [50,2,1,1]", b_pool, avg2, s_pool, r_pool, OPS_GRAD, 1, IN_((50, 2, 1, 1), -0.1, 0.1)),
    ROW_("POOL_2D", "max 2x2 s 2, 16 + 8 + 1 outputs [50,2,1,1]", b_pool, max2, s_pool, r_pool, OPS_GRAD, 1, IN_((50, 2, 1, 1), -0.1, 0.1)),
    ROW_("POOL_2D", "avg 3x3 s 1,2 p 1, wide [53,5,1,1]", b_pool, avg2_pad, s_pool, r_pool, OPS_GRAD, 1, IN_((53, 5, 1, 1), -0.1, 0.1)),
    ROW_("POOL_2D_BACK", "max 2x2 s 2", b_pool_back, max2, s_pool_back, r_pool_back, OPS_REFUSED, 2, IN_((4, 3, 3, 2), -1, 1), IN_((8, 6, 3, 2), -3, 3)),
    ROW_("POOL_2D_BACK", "max 3x3 s 1 p 1, overlapping", b_pool_back, max2_overlap, s_pool_back, r_pool_back, OPS_REFUSED, 2,
         IN_((5, 4, 3, 1), -1, 1), IN_((5, 4, 3, 1), -3, 3)),
    ROW_("POOL_2D_BACK", "avg 3x3 s 1,2 p 1", b_pool_back, avg2_pad, s_pool_back, r_pool_back, OPS_REFUSED, 2, IN_((6, 4, 1, 2), -1, 1), IN_((6, 7, 1, 2), -3, 3)),
    ROW_("POOL_2D_BACK", "max 3x2 s 2,1 p 1,1", b_pool_back, max2_pad, s_pool_back, r_pool_back, OPS_REFUSED, 2, IN_((4, 6, 2, 1), -1, 1), IN_((7, 5, 2, 1), -3, 3)),
};

const struct ops_family ops_pool = {"pool", rows, sizeof rows / sizeof rows[0], NULL, NULL};

/* norm.c -- rows of norm ((x - mean) / sqrt(var + eps) per row), rms_norm
 * (x / sqrt(mean(x^2) + eps)) and their backward kernels (dx of sum(g *
 * norm(x))).
 *
 * Relative 2-norm error 1e-6 forward, 1e-5 backward, on rows with a large
 * common offset (1000 + noise), which a one-pass or float-only variance
 * fails; eps = 0 on a constant row (norm) or a zero row (rms_norm) is defined
 * as 0, forward and backward, never NaN. Gradients: the harness defaults. */
#include "ops/harness.h"
#include "ops/ops_internal.h"  /* white-box: the internal backward op of norm */

enum nm_op { NM_NORM, NM_RMS_NORM, NM_NORM_BACK, NM_RMS_NORM_BACK };
struct nm_params { enum nm_op op; float eps; };

static struct ggml_tensor * b_norm(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct nm_params * p = params;
    switch (p->op) {
        case NM_NORM:      return ggml_norm(ctx, in[0], p->eps);
        case NM_RMS_NORM:  return ggml_rms_norm(ctx, in[0], p->eps);
        case NM_NORM_BACK: return ggmlr_norm_back(ctx, in[0], in[1], p->eps);
        default:           return ggml_rms_norm_back(ctx, in[0], in[1], p->eps);
    }
}

/* one row, two passes; 0 where var + eps = 0, as the kernel documents */
static void norm_row(bool rms, const double * x, int64_t n, double eps, double * y) {
    double mu = 0, ss = 0;
    if (!rms) { for (int64_t i = 0; i < n; i++) mu += x[i]; mu /= n; }
    for (int64_t i = 0; i < n; i++) ss += (x[i] - mu) * (x[i] - mu);
    const double v = ss / n + eps;
    for (int64_t i = 0; i < n; i++) y[i] = v > 0 ? (x[i] - mu) / sqrt(v) : 0;
}

/* dx of sum(g * norm(x)): (g - mean(g) - z mean(g z)) / sd with z = (x - mu) / sd (rms: mu = 0, no mean(g)) */
static void norm_back_row(bool rms, const double * g, const double * x, int64_t n, double eps, double * dx) {
    double mu = 0, ss = 0, mg = 0, mgz = 0;
    if (!rms) { for (int64_t i = 0; i < n; i++) mu += x[i]; mu /= n; }
    for (int64_t i = 0; i < n; i++) ss += (x[i] - mu) * (x[i] - mu);
    const double sd = sqrt(ss / n + eps);
    for (int64_t i = 0; i < n; i++) { mg += g[i] / n; mgz += sd > 0 ? g[i] * (x[i] - mu) / sd / n : 0; }
    for (int64_t i = 0; i < n; i++) dx[i] = sd > 0 ? (g[i] - (rms ? 0 : mg) - (x[i] - mu) / sd * mgz) / sd : 0;
}

/* forward: in[0] = x; backward: in[0] = g, in[1] = x */
static void r_norm(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) ne;
    const struct nm_params * p = params;
    const bool rms = p->op == NM_RMS_NORM || p->op == NM_RMS_NORM_BACK, back = p->op >= NM_NORM_BACK;
    const int64_t n0 = no[0];
    for (int64_t r = 0; r < ops_nel(no) / n0; r++) {
        if (back) norm_back_row(rms, in[0] + r * n0, in[1] + r * n0, n0, p->eps, out + r * n0);
        else norm_row(rms, in[0] + r * n0, n0, p->eps, out + r * n0);
    }
}

/* a constant row (3.25), then a zero row */
static void f_degenerate(double * v, const int64_t ne[4]) { (void) ne; for (int i = 0; i < 5; i++) { v[i] = 3.25; v[5 + i] = 0; } }

#define X_(N0, ROWS, LO, HI, TR, FILL) {.ne = {N0, ROWS, 1, 1}, .lo = LO, .hi = HI, .layout = (TR) ? OPS_TRANSPOSED : 0, .fill = FILL}
#define G_(N0, ROWS) {.ne = {N0, ROWS, 1, 1}, .lo = -1, .hi = 1}
#define NM(OP, NAME, EPS, N0, ROWS, LO, HI, TR, FILL, GRAD_BACK)                                                       \
    {.op = #OP, .variant = NAME, .build = b_norm, .params = &(const struct nm_params) {NM_##OP, EPS}, .n_in = 1,        \
     .in = {X_(N0, ROWS, LO, HI, TR, FILL)}, .ref = r_norm, .tol = 1e-6},                                              \
    {.op = #OP "_BACK", .variant = NAME, .build = b_norm, .params = &(const struct nm_params) {NM_##OP##_BACK, EPS},   \
     .n_in = 2, .in = {G_(N0, ROWS), X_(N0, ROWS, LO, HI, TR, FILL)}, .ref = r_norm, .tol = 1e-5, .grad = GRAD_BACK}
/* rows of length n0, values offset +- noise */
#define CASE(NAME, N0, ROWS, OFFSET, NOISE, EPS, TR)                                                                  \
    NM(NORM, NAME, EPS, N0, ROWS, (OFFSET) - (NOISE), (OFFSET) + (NOISE), TR, NULL, OPS_FORWARD_ONLY),                 \
    NM(RMS_NORM, NAME, EPS, N0, ROWS, (OFFSET) - (NOISE), (OFFSET) + (NOISE), TR, NULL, OPS_FORWARD_ONLY)
#define GRAD(OP, NAME, EPS, S, LAY)                                                                                     \
    {.op = #OP, .variant = NAME, .build = b_norm, .params = &(const struct nm_params) {NM_##OP, EPS}, .n_in = 1,        \
     .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1, .layout = LAY}}, .ref = r_norm, .tol = 1e-6, .grad = OPS_GRAD}

static const struct ops_row rows[] = {
    CASE("[37 x 5]", 37, 5, 0, 2, 1e-5f, false),
    CASE("[64 x 3] eps 0.1", 64, 3, 0, 1, 0.1f, false),
    CASE("rows of length 1", 1, 4, 0, 2, 1e-5f, false),
    CASE("[129 x 4] offset 1000", 129, 4, 1000, 1, 1e-5f, false),
    CASE("[33 x 6] offset -1000, noise 0.01, eps 0", 33, 6, -1000, 0.01, 0.0f, false),
    CASE("[7 x 11] transposed", 7, 11, 0, 2, 1e-3f, true),
    CASE("[3 x 2] offset 5, eps 0, transposed", 3, 2, 5, 3, 0.0f, true),
    NM(NORM, "eps 0, constant and zero rows", 0.0f, 5, 2, 0, 0, false, f_degenerate, OPS_FORWARD_ONLY),
    NM(RMS_NORM, "eps 0, constant and zero rows", 0.0f, 5, 2, 0, 0, false, f_degenerate, OPS_FORWARD_ONLY),
    /* work split over threads; the backward ops have no backward of their own */
    NM(NORM, "[67 x 18]", 1e-5f, 67, 18, -4, 4, false, NULL, OPS_REFUSED),
    NM(RMS_NORM, "[67 x 18]", 1e-5f, 67, 18, -4, 4, false, NULL, OPS_REFUSED),
    GRAD(NORM, "gradient", 1e-5f, (7, 4, 2, 1), 0),
    GRAD(NORM, "gradient, of transposed", 1e-3f, (6, 4, 1, 1), OPS_TRANSPOSED),
    GRAD(RMS_NORM, "gradient", 1e-3f, (7, 4, 2, 1), 0),
    GRAD(RMS_NORM, "gradient, of transposed", 1e-5f, (6, 4, 1, 1), OPS_TRANSPOSED),
};

const struct ops_family ops_norm = {"norm", rows, sizeof rows / sizeof rows[0], NULL};

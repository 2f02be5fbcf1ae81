/* norm.c -- rows of norm ((x - mean) / sqrt(var + eps) per row), rms_norm
 * (x / sqrt(mean(x^2) + eps)), l2_norm (x / max(|x|, eps)), group_norm
 * (norm over each group of channels) and their backward kernels (dx of
 * sum(g * norm(x))).
 *
 * Relative 2-norm error 1e-6 forward, 1e-5 backward, on rows with a large
 * common offset (1000 + noise), which a one-pass or float-only variance
 * fails; eps = 0 on a constant row (norm) or a zero row (rms_norm) is defined
 * as 0, forward and backward, never NaN. l2_norm on both sides of eps (|x| >
 * eps: x / |x|; below: x / eps, whose gradient is g / eps). group_norm with
 * groups that divide the channels, that do not (a smaller last group), that
 * are empty (n_groups > channels), on rows offset by 1000. Gradients: the
 * harness defaults. The _inplace forms: forward, and autodiff's refusal. */
#include "ops/harness.h"
#include "ops/ops_internal.h"  /* white-box: the internal backward op of norm */

enum nm_op { NM_NORM, NM_RMS_NORM, NM_NORM_BACK, NM_RMS_NORM_BACK, NM_L2_NORM, NM_L2_NORM_BACK, NM_GROUP_NORM, NM_GROUP_NORM_BACK };
struct nm_params { enum nm_op op; float eps; int n_groups; bool inplace; };

static struct ggml_tensor * b_norm(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct nm_params * p = params;
    switch (p->op) {
        case NM_NORM:      return p->inplace ? ggml_norm_inplace(ctx, in[0], p->eps) : ggml_norm(ctx, in[0], p->eps);
        case NM_RMS_NORM:  return p->inplace ? ggml_rms_norm_inplace(ctx, in[0], p->eps) : ggml_rms_norm(ctx, in[0], p->eps);
        case NM_NORM_BACK: return ggmlr_norm_back(ctx, in[0], in[1], p->eps);
        case NM_L2_NORM:   return p->inplace ? ggml_l2_norm_inplace(ctx, in[0], p->eps) : ggml_l2_norm(ctx, in[0], p->eps);
        case NM_L2_NORM_BACK: return ggmlr_l2_norm_back(ctx, in[0], in[1], p->eps);
        case NM_GROUP_NORM: return p->inplace ? ggml_group_norm_inplace(ctx, in[0], p->n_groups, p->eps) : ggml_group_norm(ctx, in[0], p->n_groups, p->eps);
        case NM_GROUP_NORM_BACK: return ggmlr_group_norm_back(ctx, in[0], in[1], p->n_groups, p->eps);
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

/* y = x / m, m = max(|x|, eps); dy^T g = g / m - x (x.g) / (|x| m^2) where |x| > eps (m then depends on x) */
static void l2_row(bool back, const double * g, const double * x, int64_t n, double eps, double * out) {
    double ss = 0, gx = 0;
    for (int64_t i = 0; i < n; i++) { ss += x[i] * x[i]; gx += back ? g[i] * x[i] : 0; }
    const double nrm = sqrt(ss), m = nrm > eps ? nrm : eps;
    for (int64_t i = 0; i < n; i++) {
        if (m == 0) { out[i] = 0; continue; }  /* eps = 0 and a zero row: 0, as the kernel documents */
        out[i] = !back ? x[i] / m : g[i] / m - (nrm > eps ? x[i] * gx / (nrm * m * m) : 0);
    }
}

/* group_norm: for each ne3, channel group k is i2 in [k per, min((k + 1) per, C)), per = ceil(C / n_groups):
 * in logical order one block of ne0 ne1 (its channels) elements, normalised as one row */
static void r_group_norm(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) ne;
    const struct nm_params * p = params;
    const bool back = p->op == NM_GROUP_NORM_BACK;
    const int64_t plane = no[0] * no[1], per = (no[2] + p->n_groups - 1) / p->n_groups;
    for (int64_t i3 = 0; i3 < no[3]; i3++)
        for (int64_t c0 = 0; c0 < no[2]; c0 += per) {
            const int64_t c1 = c0 + per < no[2] ? c0 + per : no[2], off = plane * (c0 + no[2] * i3), cnt = plane * (c1 - c0);
            if (back) norm_back_row(false, in[0] + off, in[1] + off, cnt, p->eps, out + off);
            else norm_row(false, in[0] + off, cnt, p->eps, out + off);
        }
}

/* forward: in[0] = x; backward: in[0] = g, in[1] = x */
static void r_norm(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) ne;
    const struct nm_params * p = params;
    const bool rms = p->op == NM_RMS_NORM || p->op == NM_RMS_NORM_BACK, back = p->op == NM_NORM_BACK || p->op == NM_RMS_NORM_BACK;
    const int64_t n0 = no[0];
    if (p->op >= NM_L2_NORM) {
        const bool l2b = p->op == NM_L2_NORM_BACK;
        for (int64_t r = 0; r < ops_nel(no) / n0; r++) l2_row(l2b, l2b ? in[0] + r * n0 : NULL, in[l2b] + r * n0, n0, p->eps, out + r * n0);
        return;
    }
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
    {.op = #OP, .variant = NAME, .build = b_norm, .params = &(const struct nm_params) {.op = NM_##OP, .eps = EPS, .n_groups = 0}, .n_in = 1,     \
     .in = {X_(N0, ROWS, LO, HI, TR, FILL)}, .ref = r_norm, .tol = 1e-6},                                              \
    {.op = #OP "_BACK", .variant = NAME, .build = b_norm, .params = &(const struct nm_params) {.op = NM_##OP##_BACK, .eps = EPS, .n_groups = 0},\
     .n_in = 2, .in = {G_(N0, ROWS), X_(N0, ROWS, LO, HI, TR, FILL)}, .ref = r_norm, .tol = 1e-5, .grad = GRAD_BACK}
/* rows of length n0, values offset +- noise */
#define CASE(NAME, N0, ROWS, OFFSET, NOISE, EPS, TR)                                                                  \
    NM(NORM, NAME, EPS, N0, ROWS, (OFFSET) - (NOISE), (OFFSET) + (NOISE), TR, NULL, OPS_FORWARD_ONLY),                 \
    NM(RMS_NORM, NAME, EPS, N0, ROWS, (OFFSET) - (NOISE), (OFFSET) + (NOISE), TR, NULL, OPS_FORWARD_ONLY)
#define GRAD(OP, NAME, EPS, S, LAY)                                                                                     \
    {.op = #OP, .variant = NAME, .build = b_norm, .params = &(const struct nm_params) {.op = NM_##OP, .eps = EPS, .n_groups = 0}, .n_in = 1,     \
     .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1, .layout = LAY}}, .ref = r_norm, .tol = 1e-6, .grad = OPS_GRAD}

/* l2_norm and its backward on [N0 x ROWS] */
#define L2(NAME, EPS, N0, ROWS, LO, HI, TR, FILL, GRAD_BACK)                                                           \
    {.op = "L2_NORM", .variant = NAME, .build = b_norm, .params = &(const struct nm_params) {.op = NM_L2_NORM, .eps = EPS}, .n_in = 1, \
     .in = {X_(N0, ROWS, LO, HI, TR, FILL)}, .ref = r_norm, .tol = 1e-6},                                              \
    {.op = "L2_NORM_BACK", .variant = NAME, .build = b_norm, .params = &(const struct nm_params) {.op = NM_L2_NORM_BACK, .eps = EPS},  \
     .n_in = 2, .in = {G_(N0, ROWS), X_(N0, ROWS, LO, HI, TR, FILL)}, .ref = r_norm, .tol = 1e-5, .grad = GRAD_BACK}
/* group_norm and its backward on S, x in [LO, HI] with layouts LAY */
#define GN(NAME, NG, EPS, S, LO, HI, LAY, GRAD_BACK)                                                                  \
    {.op = "GROUP_NORM", .variant = NAME, .build = b_norm, .params = &(const struct nm_params) {.op = NM_GROUP_NORM, .eps = EPS, .n_groups = NG},   \
     .n_in = 1, .in = {{.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .layout = LAY}}, .ref = r_group_norm, .tol = 1e-6},      \
    {.op = "GROUP_NORM_BACK", .variant = NAME, .build = b_norm,                                                         \
     .params = &(const struct nm_params) {.op = NM_GROUP_NORM_BACK, .eps = EPS, .n_groups = NG}, .n_in = 2,                                     \
     .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1, .layout = LAY}, {.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .layout = LAY}}, \
     .ref = r_group_norm, .tol = 1e-5, .grad = GRAD_BACK}
#define GRAD_L2(NAME, EPS, S, LAY)                                                                                      \
    {.op = "L2_NORM", .variant = NAME, .build = b_norm, .params = &(const struct nm_params) {.op = NM_L2_NORM, .eps = EPS}, .n_in = 1, \
     .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1, .layout = LAY}}, .ref = r_norm, .tol = 1e-6, .grad = OPS_GRAD}
#define GRAD_GN(NAME, NG, EPS, S, LAY)                                                                                  \
    {.op = "GROUP_NORM", .variant = NAME, .build = b_norm, .params = &(const struct nm_params) {.op = NM_GROUP_NORM, .eps = EPS, .n_groups = NG},   \
     .n_in = 1, .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1, .layout = LAY}}, .ref = r_group_norm, .tol = 1e-6, .grad = OPS_GRAD}

/* the _inplace form on a contiguous S (offset 1000: the statistics are taken
 * before the row is overwritten); on a parameter it writes a new tensor,
 * so the rule reads the intact x and the gradient is checked */
#define INPLACE(OP, REF, NG, S)                                                                                         \
    {.op = #OP, .variant = "_inplace " #S, .build = b_norm, .params = &(const struct nm_params) {.op = NM_##OP, .eps = 1e-5f, .n_groups = NG, .inplace = true}, \
     .n_in = 1, .in = {{.ne = OPS_SHAPE S, .lo = 998, .hi = 1002}}, .ref = REF, .tol = 1e-6, .result = OPS_INPLACE,   \
     .grad = OPS_GRAD}
/* the _inplace form over an intermediate value: autodiff refuses it (the rule reads x) */
#define VIA(OP, REF, NG, S)                                                                                             \
    {.op = #OP, .variant = "_inplace of an intermediate " #S, .build = b_norm, .params = &(const struct nm_params) {.op = NM_##OP, .eps = 1e-5f, .n_groups = NG, .inplace = true}, \
     .n_in = 1, .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1}}, .ref = REF, .tol = 1e-6, .grad = OPS_REFUSED, .refusal = "in-place", .via_node = true}

static const struct ops_row rows[] = {
    INPLACE(NORM, r_norm, 0, (37, 5, 2, 1)), INPLACE(RMS_NORM, r_norm, 0, (37, 5, 2, 1)), INPLACE(L2_NORM, r_norm, 0, (37, 5, 2, 1)),
    INPLACE(GROUP_NORM, r_group_norm, 3, (5, 4, 7, 2)),
    VIA(NORM, r_norm, 0, (37, 5, 2, 1)), VIA(RMS_NORM, r_norm, 0, (37, 5, 2, 1)), VIA(L2_NORM, r_norm, 0, (37, 5, 2, 1)),
    VIA(GROUP_NORM, r_group_norm, 3, (5, 4, 7, 2)),
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
    L2("[37 x 5]", 1e-6f, 37, 5, -2, 2, false, NULL, OPS_FORWARD_ONLY),
    L2("[129 x 4] offset 1000", 1e-6f, 129, 4, 999, 1001, false, NULL, OPS_FORWARD_ONLY),
    L2("[7 x 3] below eps 10", 10.0f, 7, 3, -1, 1, false, NULL, OPS_FORWARD_ONLY),
    L2("[7 x 11] transposed", 1e-6f, 7, 11, -2, 2, true, NULL, OPS_FORWARD_ONLY),
    L2("rows of length 2", 1e-6f, 2, 4, -2, 2, false, NULL, OPS_FORWARD_ONLY),  /* length 1: y = sgn(x), a zero gradient */
    L2("eps 0, constant and zero rows", 0.0f, 5, 2, 0, 0, false, f_degenerate, OPS_FORWARD_ONLY),
    L2("[67 x 18]", 1e-6f, 67, 18, -4, 4, false, NULL, OPS_REFUSED),
    GRAD_L2("gradient", 1e-6f, (7, 4, 2, 1), 0), GRAD_L2("gradient, of transposed", 1e-6f, (6, 4, 1, 1), OPS_TRANSPOSED),
    GRAD_L2("gradient below eps 10", 10.0f, (7, 4, 1, 1), 0),
    GN("[5,4,6,2] 3 groups", 3, 1e-5f, (5, 4, 6, 2), -2, 2, OPS_CONTIG | OPS_TRANSPOSED | OPS_PERMUTED, OPS_FORWARD_ONLY),
    GN("[3,2,5,2] 2 groups of 3 and 2", 2, 1e-5f, (3, 2, 5, 2), -2, 2, OPS_CONTIG | OPS_TRANSPOSED, OPS_FORWARD_ONLY),
    GN("[4,3,5,1] 4 groups: 2, 2, 1 and none", 4, 1e-5f, (4, 3, 5, 1), -2, 2, 0, OPS_FORWARD_ONLY),
    GN("[2,3,3,2] 8 groups of 1 (5 empty)", 8, 1e-5f, (2, 3, 3, 2), -2, 2, 0, OPS_FORWARD_ONLY),
    GN("[6,5,4,1] 1 group, offset 1000, eps 0", 1, 0.0f, (6, 5, 4, 1), 999, 1001, 0, OPS_FORWARD_ONLY),
    GN("[9,7,8,3] 4 groups", 4, 1e-5f, (9, 7, 8, 3), -4, 4, 0, OPS_REFUSED),  /* 12 units over the threads */
    /* groups of 1,386 and 2,048 elements: one pass over each packed group, vector tails at its end */
    GN("[33,7,12,2] 2 groups, offset 100", 2, 1e-5f, (33, 7, 12, 2), 99, 101, OPS_ANY_LAYOUT, OPS_FORWARD_ONLY),
    GN("[32,32,6,1] 3 groups", 3, 1e-6f, (32, 32, 6, 1), -3, 3, OPS_ANY_LAYOUT, OPS_FORWARD_ONLY),
    GRAD_GN("gradient 2 groups", 2, 1e-5f, (4, 3, 4, 2), 0), GRAD_GN("gradient 2 groups of 2 and 1", 2, 1e-3f, (3, 2, 3, 1), 0),
    GRAD_GN("gradient of transposed", 3, 1e-5f, (3, 4, 6, 1), OPS_TRANSPOSED),
};

const struct ops_family ops_norm = {"norm", rows, sizeof rows / sizeof rows[0], NULL, NULL};

/* glu.c -- rows of the gated linear units (GLU) and their gradient op
 * (GLU_BACK). Inputs keep clear of the kinks (relu at 0, OAI's limits), so
 * finite differences see one smooth piece. */
#include "ops/harness.h"

#include <math.h>

struct glu_case {
    enum ggml_glu_op op;
    bool split, swapped;
    float alpha, limit;  /* SWIGLU_OAI */
};

static struct ggml_tensor * glu_of(struct ggml_context * ctx, struct ggml_tensor ** in, const struct glu_case * c) {
    if (c->op == GGML_GLU_OP_SWIGLU_OAI) return ggml_swiglu_oai(ctx, in[0], in[1], c->alpha, c->limit);
    return c->split ? ggml_glu_split(ctx, in[0], in[1], c->op) : ggml_glu(ctx, in[0], c->op, c->swapped);
}

static struct ggml_tensor * b_glu(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) { return glu_of(ctx, in, p); }

/* autodiff's GLU_BACK for a's or b's gradient; dy is the last input */
static struct ggml_tensor * b_glu_back_a(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct glu_case * c = p;
    return ops_grad_node(ctx, in, 0, c->split ? 2 : 1, b_glu, c);
}
static struct ggml_tensor * b_glu_back_b(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return ops_grad_node(ctx, in, 1, 2, b_glu, p);
}

/* ---- float64 ---- */

static const double PI = 3.14159265358979323846;

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

/* act(x) and act'(x) of each gate (OAI apart) */
static double act(enum ggml_glu_op op, double x, double * grad) {
    const double k = sqrt(2.0 / PI), c = 0.044715;
    switch (op) {
        case GGML_GLU_OP_REGLU: *grad = x > 0; return x > 0 ? x : 0;
        case GGML_GLU_OP_GEGLU: {
            const double u = k * (x + c * x * x * x), t = tanh(u);
            *grad = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x);
            return 0.5 * x * (1 + t);
        }
        case GGML_GLU_OP_GEGLU_ERF:
            *grad = 0.5 * (1 + erf(x / sqrt(2.0))) + x * exp(-0.5 * x * x) / sqrt(2 * PI);
            return 0.5 * x * (1 + erf(x / sqrt(2.0)));
        case GGML_GLU_OP_GEGLU_QUICK: {
            const double s = sigm(1.702 * x);
            *grad = s + 1.702 * x * s * (1 - s);
            return x * s;
        }
        default: {  /* SWIGLU */
            const double s = sigm(x);
            *grad = s + x * s * (1 - s);
            return x * s;
        }
    }
}

/* y, dx = dy * dy/dx and dg = dy * dy/dg for one element */
static void glu_point(const struct glu_case * c, double x, double g, double dy, double * y, double * dx, double * dg) {
    if (c->op == GGML_GLU_OP_SWIGLU_OAI) {
        const double xc = fmin(x, c->limit), gc = fmin(fmax(g, -c->limit), c->limit), s = sigm(c->alpha * xc);
        *y = xc * s * (gc + 1);
        *dx = x < c->limit ? dy * (gc + 1) * (s + c->alpha * xc * s * (1 - s)) : 0;
        *dg = g > -c->limit && g < c->limit ? dy * xc * s : 0;
        return;
    }
    double d;
    const double f = act(c->op, x, &d);
    *y = f * g;
    *dx = dy * g * d;
    *dg = dy * f;
}

/* Walks the rows: out_kind 0 = y, 1 = a's gradient, 2 = b's. */
static void glu_ref(const double * const * in, const int64_t (*ne)[4], const struct glu_case * c, double * out, int out_kind) {
    const int64_t n = c->split ? ne[0][0] : ne[0][0] / 2, rows = ne[0][1] * ne[0][2] * ne[0][3];
    const double * dyv = in[c->split ? 2 : 1];
    /* an odd row's last element is not read: its gradient is 0 */
    if (out_kind == 1 && !c->split) for (int64_t k = 0; k < rows * ne[0][0]; k++) out[k] = 0.0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < n; i++) {
            const double * ra = in[0] + r * ne[0][0];
            double x, g;
            int64_t ix = 0, ig = 0;
            if (c->split) { x = ra[i]; g = in[1][r * n + i]; }
            else {
                ix = c->swapped ? n + i : i;
                ig = c->swapped ? i : n + i;
                x = ra[ix]; g = ra[ig];
            }
            double y, dx, dg;
            glu_point(c, x, g, out_kind ? dyv[r * n + i] : 1.0, &y, &dx, &dg);
            if (out_kind == 0) out[r * n + i] = y;
            else if (c->split) out[r * n + i] = out_kind == 1 ? dx : dg;
            else { out[r * ne[0][0] + ix] = dx; out[r * ne[0][0] + ig] = dg; }
        }
}

static void r_glu(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    glu_ref(in, ne, p, out, 0);
}
static void r_glu_back_a(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    glu_ref(in, ne, p, out, 1);
}
static void r_glu_back_b(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    glu_ref(in, ne, p, out, 2);
}

static const struct glu_case swiglu = {GGML_GLU_OP_SWIGLU, false, false, 0, 0}, swiglu_sw = {GGML_GLU_OP_SWIGLU, false, true, 0, 0},
                             swiglu_split = {GGML_GLU_OP_SWIGLU, true, false, 0, 0}, geglu = {GGML_GLU_OP_GEGLU, false, false, 0, 0},
                             geglu_erf = {GGML_GLU_OP_GEGLU_ERF, false, false, 0, 0},
                             geglu_quick_sw = {GGML_GLU_OP_GEGLU_QUICK, false, true, 0, 0},
                             geglu_quick_split = {GGML_GLU_OP_GEGLU_QUICK, true, false, 0, 0},
                             reglu_split = {GGML_GLU_OP_REGLU, true, false, 0, 0}, reglu = {GGML_GLU_OP_REGLU, false, false, 0, 0},
                             geglu_erf_split = {GGML_GLU_OP_GEGLU_ERF, true, false, 0, 0},
                             oai = {GGML_GLU_OP_SWIGLU_OAI, true, false, 1.702f, 1.0f};

/* shape helpers: y has half of a's ne0 without b, a's shape with it; GLU_BACK a's or b's shape */
static void s_glu(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const struct glu_case * c = p;
    for (int d = 0; d < 4; d++) no[d] = ne[0][d];
    if (!c->split && c->op != GGML_GLU_OP_SWIGLU_OAI) no[0] /= 2;
}

#define IN_(S, LO, HI) {.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .layout = OPS_CONTIG | OPS_TRANSPOSED}
#define GLU_(NAME, CASE, N, ...)                                                                                      \
    {.op = "GLU", .variant = NAME, .build = b_glu, .params = &CASE, .n_in = N, .in = {__VA_ARGS__}, .shape = s_glu,     \
     .ref = r_glu, .cmp = OPS_NORM2, .tol = 1e-6, .grad = OPS_GRAD}
#define BACK_(NAME, BUILD, REF, CASE, N, ...)                                                                          \
    {.op = "GLU_BACK", .variant = NAME, .build = BUILD, .params = &CASE, .n_in = N, .in = {__VA_ARGS__}, .shape = s_back_##REF, \
     .ref = r_glu_back_##REF, .cmp = OPS_NORM2, .tol = 1e-6, .grad = OPS_REFUSED}
static void s_back_a(const int64_t (*ne)[4], const void * p, int64_t no[4]) { (void) p; for (int d = 0; d < 4; d++) no[d] = ne[0][d]; }
static void s_back_b(const int64_t (*ne)[4], const void * p, int64_t no[4]) { (void) p; for (int d = 0; d < 4; d++) no[d] = ne[1][d]; }

static const struct ops_row rows[] = {
    GLU_("swiglu [8,3,2,1]", swiglu, 1, IN_((8, 3, 2, 1), -3, 3)),
    GLU_("swiglu swapped", swiglu_sw, 1, IN_((8, 3, 2, 1), -3, 3)),
    GLU_("swiglu split, odd ne0", swiglu_split, 2, IN_((5, 3, 2, 1), -3, 3), IN_((5, 3, 2, 1), -2, 2)),
    GLU_("geglu [6,4,1,1]", geglu, 1, IN_((6, 4, 1, 1), -3, 3)),
    GLU_("geglu_erf [6,4,1,1]", geglu_erf, 1, IN_((6, 4, 1, 1), -3, 3)),
    GLU_("geglu_quick swapped", geglu_quick_sw, 1, IN_((6, 4, 1, 1), -3, 3)),
    GLU_("geglu_quick split", geglu_quick_split, 2, IN_((7, 2, 3, 1), -3, 3), IN_((7, 2, 3, 1), -2, 2)),
    GLU_("reglu split, x > 0", reglu_split, 2, IN_((6, 3, 1, 1), 0.05, 2), IN_((6, 3, 1, 1), -2, 2)),
    GLU_("reglu split, x < 0", reglu_split, 2, IN_((6, 3, 1, 1), -2, -0.05), IN_((6, 3, 1, 1), -2, 2)),
    GLU_("swiglu_oai inside the limits", oai, 2, IN_((6, 3, 1, 1), -3, 0.9), IN_((6, 3, 1, 1), -0.9, 0.9)),
    GLU_("swiglu_oai clamped", oai, 2, IN_((6, 3, 1, 1), 1.1, 3), IN_((6, 3, 1, 1), 1.1, 3)),
    GLU_("swiglu [64,37,1,1]: rows over threads", swiglu, 1, IN_((64, 37, 1, 1), -3, 3)),
    GLU_("swiglu odd ne0 [9,3,2,1]: the last element not read", swiglu, 1, IN_((9, 3, 2, 1), -3, 3)),
    GLU_("geglu_quick swapped, odd ne0", geglu_quick_sw, 1, IN_((7, 4, 1, 1), -3, 3)),
    /* the GLU gate's own exp (cpu/simd/act_impl.h) over its whole range, up to
     * where 1 + e^t overflows (x < -88): each element within 1e-6 of float64
     * (x sigmoid(x) has no rounded constant in its exponent: SWIGLU's relative
     * error is the exp's), and the others' saturation in the 2-norm */
    {.op = "GLU", .variant = "swiglu split, x over [-100, 100]: each element", .build = b_glu, .params = &swiglu_split, .n_in = 2,
     .in = {IN_((67, 5, 1, 1), -100, 100), IN_((67, 5, 1, 1), -2, 2)}, .shape = s_glu, .ref = r_glu, .cmp = OPS_ELEMENTS,
     .tol = 1e-6, .atol = 1e-30},
    {.op = "GLU", .variant = "geglu, x over [-12, 12]", .build = b_glu, .params = &geglu, .n_in = 1, .in = {IN_((68, 5, 1, 1), -12, 12)},
     .shape = s_glu, .ref = r_glu, .cmp = OPS_NORM2, .tol = 1e-6},
    {.op = "GLU", .variant = "geglu_quick split, x over [-60, 60]", .build = b_glu, .params = &geglu_quick_split, .n_in = 2,
     .in = {IN_((67, 5, 1, 1), -60, 60), IN_((67, 5, 1, 1), -2, 2)}, .shape = s_glu, .ref = r_glu, .cmp = OPS_NORM2, .tol = 1e-6},
    {.op = "GLU", .variant = "swiglu_oai, x over [-60, 0.9]", .build = b_glu, .params = &oai, .n_in = 2,
     .in = {IN_((67, 5, 1, 1), -60, 0.9), IN_((67, 5, 1, 1), -0.9, 0.9)}, .shape = s_glu, .ref = r_glu, .cmp = OPS_NORM2, .tol = 1e-6},
    /* results of 16 MiB and more are written with non-temporal stores (cpu/kernels/glu.c) */
    {.op = "GLU", .variant = "swiglu split [4096,1024]: a streamed result", .build = b_glu, .params = &swiglu_split, .n_in = 2,
     .in = {{.ne = {4096, 1024, 1, 1}, .lo = -3, .hi = 3, .layout = OPS_CONTIG}, {.ne = {4096, 1024, 1, 1}, .lo = -2, .hi = 2, .layout = OPS_CONTIG}},
     .shape = s_glu, .ref = r_glu, .cmp = OPS_NORM2, .tol = 1e-6, .grad = OPS_FORWARD_ONLY},
    {.op = "GLU", .variant = "swiglu_oai [4096,1024]: a streamed result", .build = b_glu, .params = &oai, .n_in = 2,
     .in = {{.ne = {4096, 1024, 1, 1}, .lo = -3, .hi = 0.9, .layout = OPS_CONTIG}, {.ne = {4096, 1024, 1, 1}, .lo = -0.9, .hi = 0.9, .layout = OPS_CONTIG}},
     .shape = s_glu, .ref = r_glu, .cmp = OPS_NORM2, .tol = 1e-6, .grad = OPS_FORWARD_ONLY},
    /* F16 a and result: relu(x) g of halves is exact in F32, rounded once */
    {.op = "GLU", .variant = "reglu F16", .build = b_glu, .params = &reglu, .n_in = 1,
     .in = {{.ne = {10, 3, 2, 1}, .lo = -3, .hi = 3, .type = GGML_TYPE_F16, .layout = OPS_CONTIG | OPS_TRANSPOSED}}, .shape = s_glu,
     .out_type = GGML_TYPE_F16, .ref = r_glu},
    BACK_("swiglu, both halves", b_glu_back_a, a, swiglu, 2, IN_((8, 3, 2, 1), -3, 3), IN_((4, 3, 2, 1), -1, 1)),
    BACK_("geglu_quick swapped", b_glu_back_a, a, geglu_quick_sw, 2, IN_((6, 4, 1, 1), -3, 3), IN_((3, 4, 1, 1), -1, 1)),
    BACK_("reglu, both halves", b_glu_back_a, a, reglu, 2, IN_((6, 4, 1, 1), -3, 3), IN_((3, 4, 1, 1), -1, 1)),
    BACK_("swiglu, odd ne0", b_glu_back_a, a, swiglu, 2, IN_((7, 4, 1, 1), -3, 3), IN_((3, 4, 1, 1), -1, 1)),
    BACK_("geglu_erf split: a", b_glu_back_a, a, geglu_erf_split, 3, IN_((5, 3, 1, 1), -3, 3), IN_((5, 3, 1, 1), -2, 2),
          IN_((5, 3, 1, 1), -1, 1)),
    BACK_("swiglu split: b", b_glu_back_b, b, swiglu_split, 3, IN_((5, 3, 1, 1), -3, 3), IN_((5, 3, 1, 1), -2, 2),
          IN_((5, 3, 1, 1), -1, 1)),
    BACK_("swiglu_oai: a", b_glu_back_a, a, oai, 3, IN_((6, 3, 1, 1), -3, 3), IN_((6, 3, 1, 1), -3, 3), IN_((6, 3, 1, 1), -1, 1)),
    BACK_("swiglu_oai: b", b_glu_back_b, b, oai, 3, IN_((6, 3, 1, 1), -3, 3), IN_((6, 3, 1, 1), -3, 3), IN_((6, 3, 1, 1), -1, 1)),
};

const struct ops_family ops_glu = {"glu", rows, sizeof rows / sizeof rows[0], NULL, NULL};

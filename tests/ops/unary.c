/* unary.c -- rows of the activations (ggml_unary and every named
 * constructor of enum ggml_unary_op, their _inplace forms, ggml_xielu) and
 * their backward kernel (UNARY_BACK: dx = g * f'(x); upstream's SILU_BACK).
 *
 * Compared element by element, |y - ref| <= rtol |ref| + atol: rtol 2e-6
 * forward (a few float roundings; a wrong formula or constant is off by 1e-3
 * or more) with atol 1e-7 for the far tails of GELU (|y| < 1e-7, where the
 * rounding of x is amplified by the steep exp / erfc); rtol 1e-5, atol 2e-7
 * backward (1 - t^2 and gelu' lose up to one ulp of 1 where they approach
 * 0). XIELU's atol is 1e-6: its coefficients are stored as floats (6e-8
 * relative) and its two terms cancel where it crosses 0, near x = -0.85.
 * A value beyond the float range must be +-Inf, as expf gives (exp's
 * derivative is exp itself, so g e^x is Inf where e^x is). Inputs include
 * magnitudes where tanh, sigmoid and exp saturate or overflow (up to 1e20),
 * halves (round: away from 0) and the kinks of the hard activations (+-3):
 * never NaN. Gradients: the harness defaults, on inputs away from every kink
 * and jump by more than the step; the piecewise-constant ops' gradient is 0.
 * An in-place activation computes over its input and autodiff refuses it. */
#include "ops/harness.h"
#include "ops/ops_internal.h"  /* white-box: the internal backward op */

#include <float.h>

enum un_form { UN_NAMED, UN_INPLACE, UN_GENERIC_INPLACE, UN_SILU_BACK };
struct un_params { enum ggml_unary_op op; bool back; enum un_form form; };

/* xielu's arguments in every XIELU row (llama.cpp's defaults for alpha and beta) */
static const float XI_ALPHA_N = 0.8f, XI_ALPHA_P = 0.8f, XI_BETA = 0.5f, XI_EPS = -1e-6f;

typedef struct ggml_tensor * (*un_fn)(struct ggml_context *, struct ggml_tensor *);
#define FN_(name, OP) [GGML_UNARY_OP_##OP] = ggml_##name
static const un_fn named[GGML_UNARY_OP_COUNT] = {
    FN_(abs, ABS), FN_(sgn, SGN), FN_(neg, NEG), FN_(step, STEP), FN_(tanh, TANH), FN_(elu, ELU), FN_(relu, RELU),
    FN_(sigmoid, SIGMOID), FN_(gelu, GELU), FN_(gelu_quick, GELU_QUICK), FN_(silu, SILU), FN_(hardswish, HARDSWISH),
    FN_(hardsigmoid, HARDSIGMOID), FN_(exp, EXP), FN_(expm1, EXPM1), FN_(softplus, SOFTPLUS), FN_(gelu_erf, GELU_ERF),
    FN_(floor, FLOOR), FN_(ceil, CEIL), FN_(round, ROUND), FN_(trunc, TRUNC)};
static const un_fn inplace[GGML_UNARY_OP_COUNT] = {  /* upstream has none for HARDSWISH, HARDSIGMOID, XIELU */
    FN_(abs_inplace, ABS), FN_(sgn_inplace, SGN), FN_(neg_inplace, NEG), FN_(step_inplace, STEP), FN_(tanh_inplace, TANH),
    FN_(elu_inplace, ELU), FN_(relu_inplace, RELU), FN_(sigmoid_inplace, SIGMOID), FN_(gelu_inplace, GELU),
    FN_(gelu_quick_inplace, GELU_QUICK), FN_(silu_inplace, SILU), FN_(exp_inplace, EXP), FN_(expm1_inplace, EXPM1),
    FN_(softplus_inplace, SOFTPLUS), FN_(gelu_erf_inplace, GELU_ERF), FN_(floor_inplace, FLOOR), FN_(ceil_inplace, CEIL),
    FN_(round_inplace, ROUND), FN_(trunc_inplace, TRUNC)};

static struct ggml_tensor * b_unary(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct un_params * p = params;
    const bool xielu = p->op == GGML_UNARY_OP_XIELU;
    if (p->form == UN_SILU_BACK) return ggml_silu_back(ctx, in[0], in[1]);  /* upstream's op: a = dy, b = x */
    if (p->back) {  /* XIELU's coefficients as ggml_xielu stores them */
        const struct ggmlr_unary_params prm = xielu ? ggmlr_unary_params_decode(ggml_xielu(ctx, in[1], XI_ALPHA_N, XI_ALPHA_P, XI_BETA, XI_EPS))
                                                    : (struct ggmlr_unary_params) {.op = p->op};
        return ggmlr_unary_back(ctx, in[0], in[1], &prm);
    }
    if (p->form == UN_GENERIC_INPLACE) return ggml_unary_inplace(ctx, in[0], p->op);
    if (p->form == UN_INPLACE) return inplace[p->op](ctx, in[0]);
    return xielu ? ggml_xielu(ctx, in[0], XI_ALPHA_N, XI_ALPHA_P, XI_BETA, XI_EPS) : named[p->op](ctx, in[0]);
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double softplus(double x) { return log(1 + exp(x)); }  /* float inputs: exp(x) finite in double */
static double sgn(double x) { return (x > 0) - (x < 0); }
static double hardsigmoid(double x) { return x <= -3 ? 0 : x >= 3 ? 1 : (x + 3) / 6; }
static const double K = 0.79788456080286535588, C = 0.044715;  /* sqrt(2/pi), GELU's cubic coefficient */
/* xielu's constrained coefficients, from its arguments */
static double xi_an(void) { return XI_BETA + softplus(XI_ALPHA_N); }
static double xi_ap(void) { return softplus(XI_ALPHA_P); }

static double ref_act(enum ggml_unary_op op, double x) {
    switch (op) {
        case GGML_UNARY_OP_NEG:     return -x;
        case GGML_UNARY_OP_TANH:    return tanh(x);
        case GGML_UNARY_OP_RELU:    return x > 0 ? x : 0;
        case GGML_UNARY_OP_SIGMOID: return sigmoid(x);
        case GGML_UNARY_OP_GELU:    return 0.5 * x * (1 + tanh(K * (x + C * x * x * x)));
        case GGML_UNARY_OP_SILU:    return x * sigmoid(x);
        case GGML_UNARY_OP_EXP:     return exp(x);
        case GGML_UNARY_OP_GELU_QUICK: return x * sigmoid(1.702 * x);
        case GGML_UNARY_OP_GELU_ERF: return 0.5 * x * erfc(-x / sqrt(2.0));
        case GGML_UNARY_OP_ABS:     return x < 0 ? -x : x;
        case GGML_UNARY_OP_SGN:     return sgn(x);
        case GGML_UNARY_OP_STEP:    return x > 0;
        case GGML_UNARY_OP_ELU:     return x > 0 ? x : expm1(x);
        case GGML_UNARY_OP_HARDSWISH: return x * hardsigmoid(x);
        case GGML_UNARY_OP_HARDSIGMOID: return hardsigmoid(x);
        case GGML_UNARY_OP_EXPM1:   return expm1(x);
        case GGML_UNARY_OP_SOFTPLUS: return x > 20 ? x : softplus(x);  /* upstream's cut: x + log1p(e^-x) differs by < 2.1e-9 */
        case GGML_UNARY_OP_FLOOR:   return floor(x);
        case GGML_UNARY_OP_CEIL:    return -floor(-x);
        case GGML_UNARY_OP_ROUND:   return sgn(x) * floor(fabs(x) + 0.5);  /* halves away from 0; exact in double for floats */
        case GGML_UNARY_OP_TRUNC:   return x < 0 ? -floor(-x) : floor(x);
        default:                    return x > 0 ? xi_ap() * x * x + XI_BETA * x
                                                 : xi_an() * (expm1(x < XI_EPS ? x : XI_EPS) - x) + XI_BETA * x;  /* XIELU */
    }
}

static double ref_act_grad(enum ggml_unary_op op, double x) {
    switch (op) {
        case GGML_UNARY_OP_NEG:     return -1;
        case GGML_UNARY_OP_TANH:    return 1 - tanh(x) * tanh(x);
        case GGML_UNARY_OP_RELU:    return x > 0;
        case GGML_UNARY_OP_SIGMOID: return sigmoid(x) * (1 - sigmoid(x));
        case GGML_UNARY_OP_GELU: {
            const double t = tanh(K * (x + C * x * x * x));
            return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * K * (1 + 3 * C * x * x);
        }
        case GGML_UNARY_OP_SILU:    return sigmoid(x) * (1 + x * (1 - sigmoid(x)));
        case GGML_UNARY_OP_EXP:     return exp(x);
        case GGML_UNARY_OP_GELU_QUICK: return sigmoid(1.702 * x) * (1 + 1.702 * x * (1 - sigmoid(1.702 * x)));
        case GGML_UNARY_OP_GELU_ERF: return 0.5 * erfc(-x / sqrt(2.0)) + x * exp(-0.5 * x * x) / sqrt(2 * 3.14159265358979323846);
        case GGML_UNARY_OP_ABS:     return sgn(x);
        case GGML_UNARY_OP_ELU:     return x > 0 ? 1 : exp(x);
        /* d/dx x (x + 3)/6 = (2x + 3)/6 inside; torch's one-sided values at -3 (inside) and 3 (inside) */
        case GGML_UNARY_OP_HARDSWISH: return x < -3 ? 0 : x <= 3 ? (2 * x + 3) / 6 : 1;
        case GGML_UNARY_OP_HARDSIGMOID: return x > -3 && x < 3 ? 1.0 / 6 : 0;
        case GGML_UNARY_OP_EXPM1:   return exp(x);
        case GGML_UNARY_OP_SOFTPLUS: return sigmoid(x);
        case GGML_UNARY_OP_XIELU:   return x > 0 ? 2 * xi_ap() * x + XI_BETA : xi_an() * ((x < XI_EPS ? exp(x) : 0) - 1) + XI_BETA;
        default:                    return 0;  /* SGN, STEP, FLOOR, CEIL, ROUND, TRUNC: piecewise constant */
    }
}

/* forward: f(x) of in[0]; backward: in[0] = g, in[1] = x */
static void r_unary(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) ne;
    const struct un_params * p = params;
    for (int64_t i = 0; i < ops_nel(no); i++) {
        if (!p->back) { out[i] = ref_act(p->op, in[0][i]); continue; }
        const double d = ref_act_grad(p->op, in[1][i]);
        out[i] = in[0][i] * (d > FLT_MAX ? INFINITY : d);
    }
}

static void post_unary_op(const struct ggml_tensor * out, const double * ref, const void * params, const char * what) {
    (void) ref;
    const struct un_params * p = params;
    if (p->back) return;
    CHECK(ggml_get_unary_op(out) == p->op, "%s: a UNARY node of its activation", what);
    if (p->op != GGML_UNARY_OP_XIELU) return;
    const struct ggmlr_unary_params s = ggmlr_unary_params_decode(out);  /* upstream's slots [1..4] */
    CHECK(fabs(s.alpha_n - xi_an()) < 1e-6 && fabs(s.alpha_p - xi_ap()) < 1e-6 && s.beta == XI_BETA && s.eps == XI_EPS,
          "%s: stores beta + softplus(alpha_n), softplus(alpha_p), beta, eps", what);
}

/* magnitudes where the activations saturate or overflow, halves, the hard kinks, then the uniform values */
static void f_specials(double * v, const int64_t ne[4]) {
    static const double specials[] = {0, -0.0, 0.5, -0.5, 1, -1, 3, -3, 5, -5, 10, -10, 20, -20, 50, -50, 88, -88, 89, -89,
                                      100, -100, 1e4, -1e4, 1e20, -1e20, 1e-30, -1e-30, 2.5, -2.5, 0.49999997, -1.5};
    for (int64_t i = 0; i < ops_nel(ne) && i < (int64_t) (sizeof specials / sizeof specials[0]); i++) v[i] = specials[i];
}
/* x * (+-1) for x in [lo, hi] > 0: both signs, away from the kink at 0 by more than the step */
static void f_signs(double * v, const int64_t ne[4]) { for (int64_t i = 0; i < ops_nel(ne); i++) if (i % 3) v[i] = -v[i]; }
/* v in [0, 1] to the three pieces of hardswish / hardsigmoid, each 0.1 or more from the kinks at +-3 */
static void f_hard(double * v, const int64_t ne[4]) {
    for (int64_t i = 0; i < ops_nel(ne); i++) v[i] = i % 3 == 0 ? -3.1 - 2 * v[i] : i % 3 == 1 ? 5.8 * v[i] - 2.9 : 3.1 + 2 * v[i];
}
/* v in [-3, 3] moved to k + [0.1, 0.4]: 0.1 or more from every integer and half (the jumps) */
static void f_between(double * v, const int64_t ne[4]) {
    for (int64_t i = 0; i < ops_nel(ne); i++) { const double k = floor(v[i]); v[i] = k + 0.1 + 0.3 * (v[i] - k); }
}

static void check_refs(void) {
    CHECK(fabs(ref_act(GGML_UNARY_OP_GELU, 1.0) - 0.8411919906) < 1e-9, "gelu(1) = 0.84119199");
    CHECK(fabs(ref_act(GGML_UNARY_OP_GELU_ERF, 1.0) - 0.8413447461) < 1e-9, "gelu_erf(1) = 0.84134475");
    CHECK(fabs(ref_act_grad(GGML_UNARY_OP_SILU, 0.0) - 0.5) < 1e-15, "silu'(0) = 1/2");
    CHECK(fabs(ref_act(GGML_UNARY_OP_GELU_QUICK, 1.0) - 0.8457957) < 1e-7, "gelu_quick(1) = 1/(1 + e^-1.702) = 0.8457957");
    CHECK(ref_act(GGML_UNARY_OP_ROUND, 2.5) == 3 && ref_act(GGML_UNARY_OP_ROUND, -2.5) == -3 && ref_act(GGML_UNARY_OP_ROUND, 0.49999997) == 0,
          "round(2.5) = 3, round(-2.5) = -3, round(0.49999997) = 0");
    CHECK(ref_act(GGML_UNARY_OP_CEIL, -1.5) == -1 && ref_act(GGML_UNARY_OP_TRUNC, -1.5) == -1 && ref_act(GGML_UNARY_OP_FLOOR, -1.5) == -2,
          "ceil, trunc, floor of -1.5: -1, -1, -2");
    CHECK(fabs(ref_act(GGML_UNARY_OP_ELU, -1.0) + 0.6321205588) < 1e-9, "elu(-1) = 1/e - 1");
    CHECK(fabs(ref_act(GGML_UNARY_OP_SOFTPLUS, 0.0) - 0.6931471806) < 1e-9, "softplus(0) = ln 2");
    CHECK(fabs(ref_act(GGML_UNARY_OP_HARDSWISH, 1.0) - 2.0 / 3) < 1e-15 && ref_act(GGML_UNARY_OP_HARDSIGMOID, 4.0) == 1,
          "hardswish(1) = 4/6, hardsigmoid(4) = 1");
    CHECK(fabs(xi_ap() - 1.1711006742) < 1e-9, "softplus(0.8f) = 1.17110067 (0.8f = 0.800000012)");
    CHECK(fabs(ref_act(GGML_UNARY_OP_XIELU, 1.0) - 1.6711006742) < 1e-9, "xielu(1) = softplus(0.8f) + 0.5");
}

#define P_(OP, BACK, FORM) &(const struct un_params) {GGML_UNARY_OP_##OP, BACK, FORM}
#define X_(S, LO, HI, FILL, LAY) {.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .layout = LAY, .fill = FILL}
/* an activation and its backward on x of shape S (x contiguous or transposed, g contiguous) */
#define ACT_T(OP, S, LO, HI, FILL, GRAD_BACK, ATOL)                                                                     \
    {.op = "UNARY", .variant = #OP " " #S, .build = b_unary, .params = P_(OP, false, UN_NAMED), .n_in = 1,              \
     .in = {X_(S, LO, HI, FILL, OPS_CONTIG | OPS_TRANSPOSED)}, .ref = r_unary, .cmp = OPS_ELEMENTS, .tol = 2e-6,        \
     .atol = (ATOL) > 0 ? (ATOL) : 1e-7, .post = post_unary_op},                                                          \
    {.op = "UNARY_BACK", .variant = #OP " " #S, .build = b_unary, .params = P_(OP, true, UN_NAMED), .n_in = 2,          \
     .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1}, X_(S, LO, HI, FILL, OPS_CONTIG | OPS_TRANSPOSED)}, .ref = r_unary,   \
     .cmp = OPS_ELEMENTS, .tol = 1e-5, .atol = (ATOL) > 0 ? (ATOL) : 2e-7, .grad = GRAD_BACK}
#define ACT(OP, S, LO, HI, FILL, GRAD_BACK) ACT_T(OP, S, LO, HI, FILL, GRAD_BACK, 0)
#define ALL(S, LO, HI, FILL, GRAD_BACK)                                                                                \
    ACT(NEG, S, LO, HI, FILL, GRAD_BACK), ACT(TANH, S, LO, HI, FILL, GRAD_BACK), ACT(RELU, S, LO, HI, FILL, GRAD_BACK), \
    ACT(SIGMOID, S, LO, HI, FILL, GRAD_BACK), ACT(GELU, S, LO, HI, FILL, GRAD_BACK), ACT(SILU, S, LO, HI, FILL, GRAD_BACK), \
    ACT(EXP, S, LO, HI, FILL, GRAD_BACK), ACT(GELU_ERF, S, LO, HI, FILL, GRAD_BACK), ACT(GELU_QUICK, S, LO, HI, FILL, GRAD_BACK), \
    ACT(ABS, S, LO, HI, FILL, GRAD_BACK), ACT(SGN, S, LO, HI, FILL, GRAD_BACK), ACT(STEP, S, LO, HI, FILL, GRAD_BACK),   \
    ACT(ELU, S, LO, HI, FILL, GRAD_BACK), ACT(HARDSWISH, S, LO, HI, FILL, GRAD_BACK),                                   \
    ACT(HARDSIGMOID, S, LO, HI, FILL, GRAD_BACK), ACT(EXPM1, S, LO, HI, FILL, GRAD_BACK),                               \
    ACT(SOFTPLUS, S, LO, HI, FILL, GRAD_BACK), ACT(FLOOR, S, LO, HI, FILL, GRAD_BACK), ACT(CEIL, S, LO, HI, FILL, GRAD_BACK), \
    ACT(ROUND, S, LO, HI, FILL, GRAD_BACK), ACT(TRUNC, S, LO, HI, FILL, GRAD_BACK), ACT_T(XIELU, S, LO, HI, FILL, GRAD_BACK, 1e-6)
#define GRAD(OP, NAME, S, LO, HI, FILL, LAY)                                                                           \
    {.op = "UNARY", .variant = #OP " gradient" NAME, .build = b_unary, .params = P_(OP, false, UN_NAMED), .n_in = 1,   \
     .in = {X_(S, LO, HI, FILL, LAY)}, .ref = r_unary, .cmp = OPS_ELEMENTS, .tol = 2e-6, .atol = 1e-6, .grad = OPS_GRAD}
/* written over its input (contiguous or transposed); on a parameter it
 * writes a new tensor (test_grad_composites checks that gradient); on an
 * intermediate value (VIA) autodiff refuses it, the rule reads the input */
#define INPLACE(OP, FORM, NAME)                                                                                        \
    {.op = "UNARY", .variant = #OP NAME, .build = b_unary, .params = P_(OP, false, FORM), .n_in = 1,                   \
     .in = {X_((19, 4, 2, 1), -6, 6, f_specials, OPS_CONTIG | OPS_TRANSPOSED)}, .ref = r_unary, .cmp = OPS_ELEMENTS,   \
     .tol = 2e-6, .atol = 1e-7, .result = OPS_INPLACE, .post = post_unary_op}
#define VIA(OP)                                                                                                        \
    {.op = "UNARY", .variant = #OP " _inplace of an intermediate", .build = b_unary, .params = P_(OP, false, UN_INPLACE), .n_in = 1, \
     .in = {X_((19, 4, 2, 1), -2, 2, NULL, OPS_CONTIG)}, .ref = r_unary, .cmp = OPS_ELEMENTS, .tol = 2e-6, .atol = 1e-7, \
     .grad = OPS_REFUSED, .refusal = "in-place", .via_node = true}
#define IN1(OP) INPLACE(OP, UN_INPLACE, " _inplace")
/* an F16 input and result (computed in F32, rounded once): the activations whose values are exact in half */
#define F16(OP)                                                                                                        \
    {.op = "UNARY", .variant = #OP " F16", .build = b_unary, .params = P_(OP, false, UN_NAMED), .n_in = 1,             \
     .in = {{.ne = {33, 4, 1, 1}, .lo = -6, .hi = 6, .type = GGML_TYPE_F16, .layout = OPS_CONTIG | OPS_TRANSPOSED}},      \
     .out_type = GGML_TYPE_F16, .ref = r_unary, .post = post_unary_op}

static const struct ops_row rows[] = {
    ALL((61, 3, 1, 1), -6, 6, f_specials, OPS_FORWARD_ONLY), ALL((1, 1, 1, 1), -6, 6, f_specials, OPS_FORWARD_ONLY),
    ALL((16, 2, 1, 1), -6, 6, f_specials, OPS_FORWARD_ONLY), ALL((37, 1, 1, 1), -6, 6, f_specials, OPS_FORWARD_ONLY),
    /* work split over threads; the backward op has no backward of its own */
    ALL((67, 9, 2, 1), -4, 4, NULL, OPS_REFUSED),
    GRAD(NEG, "", (5, 3, 2, 1), -2, 2, NULL, 0), GRAD(TANH, "", (5, 3, 2, 1), -2, 2, NULL, 0),
    GRAD(RELU, " away from 0", (5, 3, 2, 1), 0.05, 1, f_signs, 0), GRAD(SIGMOID, "", (5, 3, 2, 1), -3, 3, NULL, 0),
    GRAD(GELU, "", (5, 3, 2, 1), -3, 3, NULL, 0), GRAD(SILU, "", (5, 3, 2, 1), -3, 3, NULL, 0),
    GRAD(EXP, "", (5, 3, 2, 1), -2, 2, NULL, 0), GRAD(GELU_ERF, "", (5, 3, 2, 1), -3, 3, NULL, 0),
    GRAD(GELU_QUICK, "", (5, 3, 2, 1), -3, 3, NULL, 0),
    GRAD(GELU, " of transposed", (3, 5, 1, 1), -3, 3, NULL, OPS_TRANSPOSED),
    GRAD(EXP, " of transposed", (3, 5, 1, 1), -2, 2, NULL, OPS_TRANSPOSED),
    GRAD(ABS, " away from 0", (5, 3, 2, 1), 0.05, 2, f_signs, 0), GRAD(ELU, " away from 0", (5, 3, 2, 1), 0.05, 3, f_signs, 0),
    GRAD(HARDSWISH, " on its three pieces", (5, 3, 2, 1), 0, 1, f_hard, 0),
    GRAD(HARDSIGMOID, " on its three pieces", (5, 3, 2, 1), 0, 1, f_hard, 0),
    GRAD(EXPM1, "", (5, 3, 2, 1), -2, 2, NULL, 0), GRAD(SOFTPLUS, "", (5, 3, 2, 1), -3, 3, NULL, 0),
    GRAD(SOFTPLUS, " of transposed", (3, 5, 1, 1), -3, 3, NULL, OPS_TRANSPOSED),
    GRAD(XIELU, " away from [eps, 0]", (5, 3, 2, 1), 0.05, 2, f_signs, 0),
    GRAD(XIELU, " of transposed", (3, 5, 1, 1), 0.05, 2, f_signs, OPS_TRANSPOSED),
    /* piecewise constant: the gradient is 0 away from the jumps */
    GRAD(SGN, " (0)", (5, 3, 2, 1), -3, 3, f_between, 0), GRAD(STEP, " (0)", (5, 3, 2, 1), -3, 3, f_between, 0),
    GRAD(FLOOR, " (0)", (5, 3, 2, 1), -3, 3, f_between, 0), GRAD(CEIL, " (0)", (5, 3, 2, 1), -3, 3, f_between, 0),
    GRAD(ROUND, " (0)", (5, 3, 2, 1), -3, 3, f_between, 0), GRAD(TRUNC, " (0)", (5, 3, 2, 1), -3, 3, f_between, 0),
    {.op = "SILU_BACK", .variant = "(dy, x) (61, 3, 1, 1)", .build = b_unary, .params = P_(SILU, true, UN_SILU_BACK), .n_in = 2,
     .in = {{.ne = {61, 3, 1, 1}, .lo = -1, .hi = 1}, X_((61, 3, 1, 1), -6, 6, f_specials, OPS_CONTIG | OPS_TRANSPOSED)},
     .ref = r_unary, .cmp = OPS_ELEMENTS, .tol = 1e-5, .atol = 2e-7, .grad = OPS_REFUSED},
    {.op = "SILU_BACK", .variant = "(dy, x) (67, 9, 2, 1)", .build = b_unary, .params = P_(SILU, true, UN_SILU_BACK), .n_in = 2,
     .in = {{.ne = {67, 9, 2, 1}, .lo = -1, .hi = 1, .layout = OPS_CONTIG | OPS_TRANSPOSED}, X_((67, 9, 2, 1), -4, 4, NULL, 0)},
     .ref = r_unary, .cmp = OPS_ELEMENTS, .tol = 1e-5, .atol = 2e-7},
    IN1(ABS), IN1(SGN), IN1(NEG), IN1(STEP), IN1(TANH), IN1(ELU), IN1(RELU), IN1(SIGMOID), IN1(GELU), IN1(GELU_QUICK),
    IN1(SILU), IN1(EXP), IN1(EXPM1), IN1(SOFTPLUS), IN1(GELU_ERF), IN1(FLOOR), IN1(CEIL), IN1(ROUND), IN1(TRUNC),
    INPLACE(HARDSWISH, UN_GENERIC_INPLACE, " ggml_unary_inplace"), INPLACE(SILU, UN_GENERIC_INPLACE, " ggml_unary_inplace"), VIA(SILU),
    F16(NEG), F16(ABS), F16(RELU), F16(SGN), F16(STEP), F16(FLOOR), F16(CEIL), F16(ROUND), F16(TRUNC),
};

const struct ops_family ops_unary = {"unary", rows, sizeof rows / sizeof rows[0], check_refs, NULL};

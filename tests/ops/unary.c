/* unary.c -- rows of the activations (ggml_unary: neg, tanh, relu, sigmoid,
 * gelu, silu, exp, gelu_erf, gelu_quick) and their backward kernel (UNARY_BACK:
 * dx = g * f'(x)).
 *
 * Compared element by element, |y - ref| <= rtol |ref| + atol: rtol 2e-6
 * forward (a few float roundings; a wrong formula or constant is off by 1e-3
 * or more) with atol 1e-7 for the far tails of GELU (|y| < 1e-7, where the
 * rounding of x is amplified by the steep exp / erfc); rtol 1e-5, atol 2e-7
 * backward (1 - t^2 and gelu' lose up to one ulp of 1 where they approach
 * 0). A value beyond the float range must be +-Inf, as expf gives (exp's
 * derivative is exp itself, so g e^x is Inf where e^x is). Inputs include
 * magnitudes where tanh, sigmoid and exp saturate or overflow (up to 1e20):
 * never NaN. Gradients: the harness defaults. */
#include "ops/harness.h"
#include "ops/ops_internal.h"  /* white-box: the internal backward op */

#include <float.h>

struct un_params { enum ggml_unary_op op; bool back; };

static struct ggml_tensor * b_unary(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct un_params * p = params;
    if (p->back) return ggmlr_unary_back(ctx, in[0], in[1], p->op);
    switch (p->op) {  /* the named constructors */
        case GGML_UNARY_OP_NEG:     return ggml_neg(ctx, in[0]);
        case GGML_UNARY_OP_TANH:    return ggml_tanh(ctx, in[0]);
        case GGML_UNARY_OP_RELU:    return ggml_relu(ctx, in[0]);
        case GGML_UNARY_OP_SIGMOID: return ggml_sigmoid(ctx, in[0]);
        case GGML_UNARY_OP_GELU:    return ggml_gelu(ctx, in[0]);
        case GGML_UNARY_OP_SILU:    return ggml_silu(ctx, in[0]);
        case GGML_UNARY_OP_EXP:     return ggml_exp(ctx, in[0]);
        case GGML_UNARY_OP_GELU_QUICK: return ggml_gelu_quick(ctx, in[0]);
        default:                    return ggml_gelu_erf(ctx, in[0]);
    }
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static const double K = 0.79788456080286535588, C = 0.044715;  /* sqrt(2/pi), GELU's cubic coefficient */

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
        default:                    return 0.5 * x * erfc(-x / sqrt(2.0));
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
        default:                    return 0.5 * erfc(-x / sqrt(2.0)) + x * exp(-0.5 * x * x) / sqrt(2 * 3.14159265358979323846);
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
    if (!p->back) CHECK(ggml_get_unary_op(out) == p->op, "%s: a UNARY node of its activation", what);
}

/* magnitudes where the activations saturate or overflow, then the uniform values */
static void f_specials(double * v, const int64_t ne[4]) {
    static const double specials[] = {0, -0.0, 0.5, -0.5, 1, -1, 3, -3, 5, -5, 10, -10, 20, -20, 50, -50, 88, -88, 89, -89,
                                      100, -100, 1e4, -1e4, 1e20, -1e20, 1e-30, -1e-30};
    for (int64_t i = 0; i < ops_nel(ne) && i < (int64_t) (sizeof specials / sizeof specials[0]); i++) v[i] = specials[i];
}
/* x * (+-1) for x in [0.05, 1]: relu's inputs of both signs, away from the kink by more than the step */
static void f_signs(double * v, const int64_t ne[4]) { for (int64_t i = 0; i < ops_nel(ne); i++) if (i % 3) v[i] = -v[i]; }

static void check_refs(void) {
    CHECK(fabs(ref_act(GGML_UNARY_OP_GELU, 1.0) - 0.8411919906) < 1e-9, "gelu(1) = 0.84119199");
    CHECK(fabs(ref_act(GGML_UNARY_OP_GELU_ERF, 1.0) - 0.8413447461) < 1e-9, "gelu_erf(1) = 0.84134475");
    CHECK(fabs(ref_act_grad(GGML_UNARY_OP_SILU, 0.0) - 0.5) < 1e-15, "silu'(0) = 1/2");
    CHECK(fabs(ref_act(GGML_UNARY_OP_GELU_QUICK, 1.0) - 0.8457957) < 1e-7, "gelu_quick(1) = 1/(1 + e^-1.702) = 0.8457957");
}

#define P_(OP, BACK) &(const struct un_params) {GGML_UNARY_OP_##OP, BACK}
#define X_(S, LO, HI, FILL, LAY) {.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .layout = LAY, .fill = FILL}
/* an activation and its backward on x of shape S (x contiguous or transposed, g contiguous) */
#define ACT(OP, S, LO, HI, FILL, GRAD_BACK)                                                                            \
    {.op = "UNARY", .variant = #OP " " #S, .build = b_unary, .params = P_(OP, false), .n_in = 1,                       \
     .in = {X_(S, LO, HI, FILL, OPS_CONTIG | OPS_TRANSPOSED)}, .ref = r_unary, .cmp = OPS_ELEMENTS, .tol = 2e-6,       \
     .atol = 1e-7, .post = post_unary_op},                                                                              \
    {.op = "UNARY_BACK", .variant = #OP " " #S, .build = b_unary, .params = P_(OP, true), .n_in = 2,                   \
     .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1}, X_(S, LO, HI, FILL, OPS_CONTIG | OPS_TRANSPOSED)}, .ref = r_unary,  \
     .cmp = OPS_ELEMENTS, .tol = 1e-5, .atol = 2e-7, .grad = GRAD_BACK}
#define ALL(S, LO, HI, FILL, GRAD_BACK)                                                                                \
    ACT(NEG, S, LO, HI, FILL, GRAD_BACK), ACT(TANH, S, LO, HI, FILL, GRAD_BACK), ACT(RELU, S, LO, HI, FILL, GRAD_BACK), \
    ACT(SIGMOID, S, LO, HI, FILL, GRAD_BACK), ACT(GELU, S, LO, HI, FILL, GRAD_BACK), ACT(SILU, S, LO, HI, FILL, GRAD_BACK), \
    ACT(EXP, S, LO, HI, FILL, GRAD_BACK), ACT(GELU_ERF, S, LO, HI, FILL, GRAD_BACK), ACT(GELU_QUICK, S, LO, HI, FILL, GRAD_BACK)
#define GRAD(OP, NAME, S, LO, HI, FILL, LAY)                                                                           \
    {.op = "UNARY", .variant = #OP " gradient" NAME, .build = b_unary, .params = P_(OP, false), .n_in = 1,             \
     .in = {X_(S, LO, HI, FILL, LAY)}, .ref = r_unary, .cmp = OPS_ELEMENTS, .tol = 2e-6, .atol = 1e-7, .grad = OPS_GRAD}

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
};

const struct ops_family ops_unary = {"unary", rows, sizeof rows / sizeof rows[0], check_refs};

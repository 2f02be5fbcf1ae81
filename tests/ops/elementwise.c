/* elementwise.c -- rows of the element-wise ops: add, sub, mul, div (b
 * broadcast over a), add_inplace, add_id (b's rows picked by expert ids:
 * a[:, i1, i2, i3] + b[:, ids[i1, i2]]), add1 (b a scalar) and add1_inplace,
 * sqr, sqrt, log, sin, cos, scale and scale_bias (and their _inplace, with
 * sub, mul and div's: autodiff's refusal where the rule reads the
 * overwritten a), clamp, leaky_relu (and in place).
 *
 * Forward tolerance: relative 2-norm error 1e-5 (one float operation per
 * element, ~1e-7; a wrong element, index or broadcast is off by 1e-2 or
 * more), on every layout of every input. Gradients: the harness defaults,
 * clamp's and leaky_relu's on inputs 0.05 or more from their kinks; an
 * _inplace form over a parameter writes a new tensor (checked), over an
 * intermediate value that its rule reads it is refused. */
#include "ops/harness.h"

enum ew_op { EW_ADD, EW_SUB, EW_MUL, EW_DIV, EW_ADD1, EW_SQR, EW_SQRT, EW_LOG, EW_SIN, EW_COS, EW_SCALE, EW_CLAMP, EW_LEAKY };
struct ew_params {
    enum ew_op op;
    bool self;     /* the one input on both sides: x op x */
    bool inplace;  /* add_inplace, add1_inplace, sin/cos_inplace, leaky_relu(.., true) */
    float s;       /* scale, leaky_relu's negative slope; clamp's min */
    float hi;      /* clamp's max; scale_bias's bias (with .op = EW_SCALE) */
    bool cast;     /* EW_ADD through ggml_add_cast(a, b, F32) */
};

static const struct ew_params p_add = {.op = EW_ADD}, p_sub = {.op = EW_SUB}, p_mul = {.op = EW_MUL}, p_div = {.op = EW_DIV},
                              p_mul_self = {.op = EW_MUL, .self = true}, p_div_self = {.op = EW_DIV, .self = true},
                              p_add_inplace = {.op = EW_ADD, .inplace = true}, p_sqr = {.op = EW_SQR}, p_sqrt = {.op = EW_SQRT},
                              p_log = {.op = EW_LOG}, p_scale = {.op = EW_SCALE, .s = -1.7f},
                              p_add1 = {.op = EW_ADD1}, p_add1_inplace = {.op = EW_ADD1, .inplace = true},
                              p_sin = {.op = EW_SIN}, p_cos = {.op = EW_COS}, p_sin_inplace = {.op = EW_SIN, .inplace = true},
                              p_cos_inplace = {.op = EW_COS, .inplace = true}, p_clamp = {.op = EW_CLAMP, .s = -0.5f, .hi = 0.75f},
                              p_clamp_lo = {.op = EW_CLAMP, .s = -INFINITY, .hi = 0.25f},  /* a bound only above */
                              p_leaky = {.op = EW_LEAKY, .s = 0.1f}, p_leaky_neg = {.op = EW_LEAKY, .s = -0.3f},
                              p_leaky_inplace = {.op = EW_LEAKY, .s = 0.1f, .inplace = true},
                              p_sub_inplace = {.op = EW_SUB, .inplace = true}, p_mul_inplace = {.op = EW_MUL, .inplace = true},
                              p_div_inplace = {.op = EW_DIV, .inplace = true}, p_sqr_inplace = {.op = EW_SQR, .inplace = true},
                              p_sqrt_inplace = {.op = EW_SQRT, .inplace = true}, p_log_inplace = {.op = EW_LOG, .inplace = true},
                              p_scale_inplace = {.op = EW_SCALE, .s = -1.7f, .inplace = true},
                              p_scale_bias = {.op = EW_SCALE, .s = 0.6f, .hi = -0.35f},
                              p_scale_bias_inplace = {.op = EW_SCALE, .s = -1.3f, .hi = 2.5f, .inplace = true},
                              p_add_cast = {.op = EW_ADD, .cast = true};

static struct ggml_tensor * b_ew(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct ew_params * p = params;
    struct ggml_tensor * b = p->self ? in[0] : in[1];
    switch (p->op) {
        case EW_ADD:
            if (p->cast) return ggml_add_cast(ctx, in[0], b, GGML_TYPE_F32);
            return p->inplace ? ggml_add_inplace(ctx, in[0], b) : ggml_add(ctx, in[0], b);
        case EW_SUB:  return p->inplace ? ggml_sub_inplace(ctx, in[0], b) : ggml_sub(ctx, in[0], b);
        case EW_MUL:  return p->inplace ? ggml_mul_inplace(ctx, in[0], b) : ggml_mul(ctx, in[0], b);
        case EW_DIV:  return p->inplace ? ggml_div_inplace(ctx, in[0], b) : ggml_div(ctx, in[0], b);
        case EW_SQR:  return p->inplace ? ggml_sqr_inplace(ctx, in[0]) : ggml_sqr(ctx, in[0]);
        case EW_SQRT: return p->inplace ? ggml_sqrt_inplace(ctx, in[0]) : ggml_sqrt(ctx, in[0]);
        case EW_LOG:  return p->inplace ? ggml_log_inplace(ctx, in[0]) : ggml_log(ctx, in[0]);
        case EW_ADD1: return p->inplace ? ggml_add1_inplace(ctx, in[0], in[1]) : ggml_add1(ctx, in[0], in[1]);
        case EW_SIN:  return p->inplace ? ggml_sin_inplace(ctx, in[0]) : ggml_sin(ctx, in[0]);
        case EW_COS:  return p->inplace ? ggml_cos_inplace(ctx, in[0]) : ggml_cos(ctx, in[0]);
        case EW_CLAMP: return ggml_clamp(ctx, in[0], p->s, p->hi);
        case EW_LEAKY: return ggml_leaky_relu(ctx, in[0], p->s, p->inplace);
        default:
            if (p->hi != 0.0f) return p->inplace ? ggml_scale_bias_inplace(ctx, in[0], p->s, p->hi) : ggml_scale_bias(ctx, in[0], p->s, p->hi);
            return p->inplace ? ggml_scale_inplace(ctx, in[0], p->s) : ggml_scale(ctx, in[0], p->s);
    }
}

/* b tiled over a: b's index is a's modulo b's shape */
static void r_ew(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    const struct ew_params * p = params;
    const double * b = p->self ? in[0] : in[1];
    const int64_t * nb = p->self ? ne[0] : ne[1];
    OPS_FOR4(no, i0, i1, i2, i3) {
        const int64_t i = ops_at(no, i0, i1, i2, i3);
        const double x = in[0][i];
        const double y = p->op <= EW_ADD1 ? b[ops_at(nb, i0 % nb[0], i1 % nb[1], i2 % nb[2], i3 % nb[3])] : 0;
        switch (p->op) {
            case EW_ADD:  out[i] = x + y; break;
            case EW_SUB:  out[i] = x - y; break;
            case EW_MUL:  out[i] = x * y; break;
            case EW_DIV:  out[i] = x / y; break;
            case EW_SQR:  out[i] = x * x; break;
            case EW_SQRT: out[i] = sqrt(x); break;
            case EW_LOG:  out[i] = log(x); break;
            case EW_ADD1: out[i] = x + y; break;
            case EW_SIN:  out[i] = sin(x); break;
            case EW_COS:  out[i] = cos(x); break;
            case EW_CLAMP: out[i] = x < p->s ? p->s : x > p->hi ? p->hi : x; break;
            case EW_LEAKY: out[i] = x > 0 ? x : p->s * x; break;
            default:      out[i] = p->s * x + p->hi; break;
        }
    }
}

/* v in [0, 1] to 0.05 or more from clamp's bounds -0.5 and 0.75: below, inside, above */
static void f_clamp(double * v, const int64_t ne[4]) {
    for (int64_t i = 0; i < ops_nel(ne); i++) v[i] = i % 3 == 0 ? -0.55 - v[i] : i % 3 == 1 ? -0.45 + 1.15 * v[i] : 0.8 + v[i];
}
/* |x| in [lo, hi] > 0, both signs */
static void f_signs(double * v, const int64_t ne[4]) { for (int64_t i = 0; i < ops_nel(ne); i++) if (i % 2) v[i] = -v[i]; }

/* divisors of both signs, |b| in [lo, hi] */
static void f_random_sign(double * v, const int64_t ne[4]) {
    for (int64_t i = 0; i < ops_nel(ne); i++) if (tc_next() & 1) v[i] = -v[i];
}

#define IN_ANY(S, LO, HI, FILL) {.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .layout = OPS_ANY_LAYOUT, .fill = FILL}
#define FWD2(OP, P, A, B, BLO, BHI, BFILL)                                                                          \
    {.op = OP, .variant = "a " #A " b " #B, .build = b_ew, .params = &P, .n_in = 2,                                 \
     .in = {IN_ANY(A, -1, 1, NULL), IN_ANY(B, BLO, BHI, BFILL)}, .ref = r_ew, .tol = 1e-5}
/* every binary op on one pair of shapes, and add_inplace (a contiguous or transposed) */
#define BINARY(A, B)                                                                                                \
    FWD2("ADD", p_add, A, B, -1, 1, NULL), FWD2("SUB", p_sub, A, B, -1, 1, NULL), FWD2("MUL", p_mul, A, B, -1, 1, NULL), \
    FWD2("DIV", p_div, A, B, 0.5, 2, f_random_sign),                                                                \
    {.op = "ADD", .variant = "add_inplace a " #A " b " #B, .build = b_ew, .params = &p_add_inplace, .n_in = 2,       \
     .in = {{.ne = OPS_SHAPE A, .lo = -1, .hi = 1, .layout = OPS_CONTIG | OPS_TRANSPOSED}, {.ne = OPS_SHAPE B, .lo = -1, .hi = 1}}, \
     .ref = r_ew, .tol = 1e-5, .result = OPS_INPLACE}
/* scale and sqr on signed inputs, sqrt and log on positive ones */
#define UNARY(S)                                                                                                    \
    {.op = "SCALE", .variant = #S, .build = b_ew, .params = &p_scale, .n_in = 1, .in = {IN_ANY(S, -2, 2, NULL)}, .ref = r_ew, .tol = 1e-5}, \
    {.op = "SQR", .variant = #S, .build = b_ew, .params = &p_sqr, .n_in = 1, .in = {IN_ANY(S, -2, 2, NULL)}, .ref = r_ew, .tol = 1e-5},     \
    {.op = "SQRT", .variant = #S, .build = b_ew, .params = &p_sqrt, .n_in = 1, .in = {IN_ANY(S, 0.01, 4, NULL)}, .ref = r_ew, .tol = 1e-5}, \
    {.op = "LOG", .variant = #S, .build = b_ew, .params = &p_log, .n_in = 1, .in = {IN_ANY(S, 0.01, 4, NULL)}, .ref = r_ew, .tol = 1e-5}
/* gradient rows: inputs in [LO, HI], layouts LA and LB */
#define GRAD2(OP, P, NAME, A, LA, B, LB, LO, HI)                                                                    \
    {.op = OP, .variant = NAME, .build = b_ew, .params = &P, .n_in = 2,                                             \
     .in = {{.ne = OPS_SHAPE A, .lo = LO, .hi = HI, .layout = LA}, {.ne = OPS_SHAPE B, .lo = LO, .hi = HI, .layout = LB}}, \
     .ref = r_ew, .tol = 1e-5, .grad = OPS_GRAD}
#define GRAD1(OP, P, NAME, A, LA, LO, HI)                                                                           \
    {.op = OP, .variant = NAME, .build = b_ew, .params = &P, .n_in = 1, .in = {{.ne = OPS_SHAPE A, .lo = LO, .hi = HI, .layout = LA}}, \
     .ref = r_ew, .tol = 1e-5, .grad = OPS_GRAD}
static struct ggml_tensor * b_add_id(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    (void) params;
    return ggml_add_id(ctx, in[0], in[1], in[2]);
}
static void r_add_id(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) params;
    OPS_FOR4(no, i0, i1, i2, i3) {
        const int64_t e = (int64_t) in[2][ops_at(ne[2], i1, i2, 0, 0)];
        out[ops_at(no, i0, i1, i2, i3)] = in[0][ops_at(ne[0], i0, i1, i2, i3)] + in[1][ops_at(ne[1], i0, e, 0, 0)];
    }
}
/* a [ne0, n_used, n_tokens, ne3], b [ne0, 5 experts], ids [n_used, n_tokens] in [0, 4] (repeats: b's gradient sums them) */
#define ADD_ID(NAME, N0, N1, N2, N3, LAY, GRAD, FIXB)                                                                    \
    {.op = "ADD_ID", .variant = NAME, .build = b_add_id, .n_in = 3,                                                    \
     .in = {{.ne = {N0, N1, N2, N3}, .lo = -1, .hi = 1, .layout = LAY}, {.ne = {N0, 5, 1, 1}, .lo = -1, .hi = 1, .layout = LAY, .fixed = FIXB}, \
            {.ne = {N1, N2, 1, 1}, .lo = 0, .hi = 4, .type = GGML_TYPE_I32, .fixed = true}},                               \
     .ref = r_add_id, .tol = 1e-6, .grad = GRAD, .refusal = "ne3"}

/* F16 and BF16 operands (computed in F32, the result of a's type, as
 * upstream): an F16 result is the float64 reference rounded to F16 exactly
 * (the sums, products and quotients of F16 values are exact or correctly
 * rounded in float); a BF16 one within its half-ulp, 2^-8 relative */
#define FWD2_T(OP, P, TA, TB, B, BLO, BHI, BFILL)                                                                   \
    {.op = OP, .variant = #TA " a, " #TB " b " #B, .build = b_ew, .params = &P, .n_in = 2,                       \
     .in = {{.ne = {7, 5, 3, 2}, .lo = -1, .hi = 1, .type = GGML_TYPE_##TA, .layout = OPS_ANY_LAYOUT},              \
            {.ne = OPS_SHAPE B, .lo = BLO, .hi = BHI, .type = GGML_TYPE_##TB, .fill = BFILL}},                      \
     .ref = r_ew, .out_type = GGML_TYPE_##TA, .tol = 0x1p-8}
#define FWD1_T(OP, P, T, LO, HI)                                                                                    \
    {.op = OP, .variant = #T " (7, 5, 3, 2)", .build = b_ew, .params = &P, .n_in = 1,                               \
     .in = {{.ne = {7, 5, 3, 2}, .lo = LO, .hi = HI, .type = GGML_TYPE_##T, .layout = OPS_ANY_LAYOUT}},              \
     .ref = r_ew, .out_type = GGML_TYPE_##T, .tol = 0x1p-8}

/* a one-input op on every layout: forward over [LO, HI] */
#define FWD1(OP, P, NAME, S, LO, HI)                                                                                \
    {.op = OP, .variant = NAME " " #S, .build = b_ew, .params = &P, .n_in = 1, .in = {IN_ANY(S, LO, HI, NULL)}, .ref = r_ew, .tol = 1e-5}
/* written over input 0 (contiguous or transposed); GRAD: the harness's mode
 * (on a parameter the _inplace form writes a new tensor, so its gradient is
 * checked; over an intermediate value, VIA below, it is refused) */
#define INPLACE(OP, P, NAME, N_IN, GRAD)                                                                            \
    {.op = OP, .variant = NAME, .build = b_ew, .params = &P, .n_in = N_IN,                                          \
     .in = {{.ne = {7, 5, 3, 2}, .lo = -3, .hi = 3, .layout = OPS_CONTIG | OPS_TRANSPOSED}, {.ne = {1, 1, 1, 1}, .lo = -1, .hi = 1}}, \
     .ref = r_ew, .tol = 1e-5, .result = OPS_INPLACE, .grad = GRAD, .refusal = "in-place"}

/* written over a (contiguous or transposed) with b of shape B in [LO, HI];
 * GRAD: checked where the rule reads a (a parameter is never overwritten);
 * elsewhere the rule is the one the rows without _inplace check */
#define INPLACE2(OP, P, NAME, B, LO, HI, GRAD)                                                                      \
    {.op = OP, .variant = NAME " b " #B, .build = b_ew, .params = &P, .n_in = 2,                                    \
     .in = {{.ne = {7, 5, 3, 2}, .lo = -1, .hi = 1, .layout = OPS_CONTIG | OPS_TRANSPOSED}, {.ne = OPS_SHAPE B, .lo = LO, .hi = HI, .fill = f_random_sign}}, \
     .ref = r_ew, .tol = 1e-5, .result = OPS_INPLACE, .grad = GRAD, .refusal = "in-place"}
/* the _inplace form over an intermediate value (input 0 through a node), b
 * of a's shape: autodiff refuses it where the rule reads the overwritten input */
#define VIA(OP, P, NAME, N_IN)                                                                                      \
    {.op = OP, .variant = NAME " of an intermediate", .build = b_ew, .params = &P, .n_in = N_IN,                     \
     .in = {{.ne = {7, 5, 3, 2}, .lo = 0.5, .hi = 3}, {.ne = {7, 5, 3, 2}, .lo = -1, .hi = 1, .fixed = true}},       \
     .ref = r_ew, .tol = 1e-5, .grad = OPS_REFUSED, .refusal = "in-place", .via_node = true}
/* one input in [0.5, 3], written over */
#define INPLACE_POS(OP, P, NAME, GRAD)                                                                              \
    {.op = OP, .variant = NAME, .build = b_ew, .params = &P, .n_in = 1,                                             \
     .in = {{.ne = {7, 5, 3, 2}, .lo = 0.5, .hi = 3, .layout = OPS_CONTIG | OPS_TRANSPOSED}}, .ref = r_ew, .tol = 1e-5, \
     .result = OPS_INPLACE, .grad = GRAD, .refusal = "in-place"}

static const struct ops_row rows[] = {
    BINARY((7, 5, 3, 2), (7, 5, 3, 2)), BINARY((7, 5, 3, 2), (7, 1, 3, 1)), BINARY((7, 5, 3, 2), (1, 5, 1, 1)),
    BINARY((7, 5, 3, 2), (1, 1, 1, 1)), BINARY((7, 5, 3, 2), (7, 5, 1, 2)), BINARY((7, 5, 3, 2), (1, 5, 3, 1)),
    BINARY((6, 5, 3, 2), (2, 5, 1, 2)),  /* b tiled three times along ne0 */
    BINARY((1, 13, 1, 3), (1, 13, 1, 3)), BINARY((1, 13, 1, 3), (1, 1, 1, 3)), BINARY((1, 13, 1, 3), (1, 13, 1, 1)),
    UNARY((7, 5, 3, 2)), UNARY((1, 13, 1, 3)), UNARY((1, 1, 1, 1)),
    FWD2_T("ADD", p_add, F16, F16, (7, 1, 3, 1), -1, 1, NULL), FWD2_T("SUB", p_sub, F16, F32, (7, 5, 3, 2), -1, 1, NULL),
    FWD2_T("MUL", p_mul, F16, F16, (1, 5, 1, 1), -1, 1, NULL), FWD2_T("DIV", p_div, F16, F16, (7, 5, 1, 2), 0.5, 2, f_random_sign),
    FWD2_T("ADD", p_add, BF16, BF16, (1, 1, 1, 1), -1, 1, NULL), FWD2_T("MUL", p_mul, BF16, F32, (7, 5, 3, 2), -1, 1, NULL),
    FWD2_T("ADD", p_add, F32, F16, (7, 1, 3, 1), -1, 1, NULL),
    FWD1_T("SQR", p_sqr, F16, -2, 2), FWD1_T("SQRT", p_sqrt, F16, 0.01, 4), FWD1_T("SCALE", p_scale, F16, -2, 2),
    FWD1_T("CLAMP", p_clamp, F16, -1, 1), FWD1_T("LEAKY_RELU", p_leaky, F16, -1, 1),
    FWD1_T("SIN", p_sin, BF16, -3, 3), FWD1_T("COS", p_cos, BF16, -3, 3), FWD1_T("LOG", p_log, BF16, 0.1, 4),
    GRAD2("ADD", p_add, "same shape", (5, 3, 2, 2), 0, (5, 3, 2, 2), 0, -1, 1),
    /* ggml_add_cast: an F16 a widened, b broadcast; the gradient reaches b */
    {.op = "ADD", .variant = "add_cast F16 a, F32 result", .build = b_ew, .params = &p_add_cast, .n_in = 2,
     .in = {{.ne = {7, 5, 3, 2}, .lo = -1, .hi = 1, .type = GGML_TYPE_F16, .layout = OPS_ANY_LAYOUT}, {.ne = {7, 1, 3, 1}, .lo = -1, .hi = 1}},
     .ref = r_ew, .tol = 1e-6},
    {.op = "ADD", .variant = "add_cast gradient (F16 a)", .build = b_ew, .params = &p_add_cast, .n_in = 2,
     .in = {{.ne = {5, 3, 2, 1}, .lo = -1, .hi = 1, .type = GGML_TYPE_F16}, {.ne = {5, 3, 1, 1}, .lo = -1, .hi = 1}},
     .ref = r_ew, .tol = 1e-6, .grad = OPS_GRAD},
    GRAD2("ADD", p_add, "broadcast [5,1,2,1]", (5, 3, 2, 2), 0, (5, 1, 2, 1), 0, -1, 1),
    GRAD2("SUB", p_sub, "same shape", (5, 3, 2, 2), 0, (5, 3, 2, 2), 0, -1, 1),
    GRAD2("MUL", p_mul, "same shape", (5, 3, 2, 2), 0, (5, 3, 2, 2), 0, -1, 1),
    GRAD2("DIV", p_div, "same shape", (5, 3, 2, 2), 0, (5, 3, 2, 2), 0, 0.5, 1.5),
    GRAD2("SUB", p_sub, "broadcast [1,3,1,1]", (5, 3, 2, 2), 0, (1, 3, 1, 1), 0, -1, 1),
    GRAD2("MUL", p_mul, "broadcast [5,1,2,1]", (5, 3, 2, 2), 0, (5, 1, 2, 1), 0, -1, 1),
    GRAD2("MUL", p_mul, "broadcast scalar", (5, 3, 2, 2), 0, (1, 1, 1, 1), 0, -1, 1),
    GRAD2("DIV", p_div, "broadcast [1,3,2,1]", (5, 3, 2, 2), 0, (1, 3, 2, 1), 0, 0.5, 1.5),
    GRAD2("DIV", p_div, "broadcast tiled ne0 [1,3,1,2]", (6, 3, 2, 2), 0, (2, 3, 1, 2), 0, 0.5, 1.5),
    GRAD2("ADD", p_add, "a transposed", (5, 3, 2, 1), OPS_TRANSPOSED, (5, 1, 2, 1), 0, -1, 1),
    GRAD2("MUL", p_mul, "a transposed, broadcast", (5, 3, 2, 1), OPS_TRANSPOSED, (5, 1, 1, 1), 0, -1, 1),
    GRAD2("DIV", p_div, "a transposed", (5, 3, 2, 1), OPS_TRANSPOSED, (5, 3, 2, 1), 0, 0.5, 1.5),
    GRAD1("MUL", p_mul_self, "x*x", (5, 3, 2, 2), 0, -1, 1),
    GRAD1("DIV", p_div_self, "x/x (gradient 0)", (5, 3, 1, 1), 0, 0.5, 1.5),
    GRAD1("SCALE", p_scale, "[5,3,2,2]", (5, 3, 2, 2), 0, -1, 1),
    GRAD1("SQR", p_sqr, "[5,3,2,2]", (5, 3, 2, 2), 0, -1, 1),
    GRAD1("SQR", p_sqr, "odd shape", (37, 3, 2, 1), 0, -1, 1),
    GRAD1("SQRT", p_sqrt, "[5,3,2,2]", (5, 3, 2, 2), 0, 0.5, 2),
    GRAD1("LOG", p_log, "[5,3,2,2]", (5, 3, 2, 2), 0, 0.5, 2),
    GRAD1("SQR", p_sqr, "of transposed", (3, 5, 2, 1), OPS_TRANSPOSED, -1, 1),
    GRAD1("SQRT", p_sqrt, "of transposed", (3, 5, 2, 1), OPS_TRANSPOSED, 0.5, 2),
    GRAD1("LOG", p_log, "of transposed", (3, 5, 2, 1), OPS_TRANSPOSED, 0.5, 2),
    FWD2("ADD1", p_add1, (7, 5, 3, 2), (1, 1, 1, 1), -1, 1, NULL), FWD2("ADD1", p_add1, (1, 13, 1, 3), (1, 1, 1, 1), -1, 1, NULL),
    FWD1("SIN", p_sin, "", (7, 5, 3, 2), -10, 10), FWD1("COS", p_cos, "", (7, 5, 3, 2), -10, 10),
    FWD1("SIN", p_sin, "", (1, 1, 1, 1), -10, 10), FWD1("COS", p_cos, "", (1, 13, 1, 3), -10, 10),
    FWD1("CLAMP", p_clamp, "[-0.5, 0.75]", (7, 5, 3, 2), -2, 2), FWD1("CLAMP", p_clamp_lo, "[-inf, 0.25]", (7, 5, 3, 2), -2, 2),
    FWD1("CLAMP", p_clamp, "[-0.5, 0.75]", (1, 13, 1, 3), -2, 2),
    FWD1("LEAKY_RELU", p_leaky, "slope 0.1", (7, 5, 3, 2), -2, 2), FWD1("LEAKY_RELU", p_leaky_neg, "slope -0.3", (7, 5, 3, 2), -2, 2),
    FWD1("LEAKY_RELU", p_leaky, "slope 0.1", (1, 13, 1, 3), -2, 2),
    INPLACE("ADD1", p_add1_inplace, "add1_inplace", 2, OPS_FORWARD_ONLY), INPLACE("SIN", p_sin_inplace, "sin_inplace", 1, OPS_GRAD),
    INPLACE("COS", p_cos_inplace, "cos_inplace", 1, OPS_GRAD), INPLACE("LEAKY_RELU", p_leaky_inplace, "leaky_relu in place", 1, OPS_FORWARD_ONLY),
    INPLACE2("SUB", p_sub_inplace, "sub_inplace", (7, 5, 3, 2), -1, 1, OPS_FORWARD_ONLY), INPLACE2("SUB", p_sub_inplace, "sub_inplace broadcast", (7, 1, 3, 1), -1, 1, OPS_FORWARD_ONLY),
    INPLACE2("MUL", p_mul_inplace, "mul_inplace", (7, 5, 3, 2), -1, 1, OPS_GRAD), INPLACE2("MUL", p_mul_inplace, "mul_inplace broadcast", (1, 5, 1, 2), -1, 1, OPS_FORWARD_ONLY),
    INPLACE2("DIV", p_div_inplace, "div_inplace", (7, 5, 3, 2), 0.5, 2, OPS_FORWARD_ONLY), INPLACE2("DIV", p_div_inplace, "div_inplace broadcast", (7, 5, 1, 1), 0.5, 2, OPS_FORWARD_ONLY),
    INPLACE("SQR", p_sqr_inplace, "sqr_inplace", 1, OPS_GRAD), INPLACE_POS("SQRT", p_sqrt_inplace, "sqrt_inplace", OPS_FORWARD_ONLY),
    INPLACE_POS("LOG", p_log_inplace, "log_inplace", OPS_GRAD), INPLACE("SCALE", p_scale_inplace, "scale_inplace", 1, OPS_FORWARD_ONLY),
    INPLACE("SCALE", p_scale_bias_inplace, "scale_bias_inplace", 1, OPS_FORWARD_ONLY),
    VIA("MUL", p_mul_inplace, "mul_inplace", 2), VIA("SQR", p_sqr_inplace, "sqr_inplace", 1), VIA("LOG", p_log_inplace, "log_inplace", 1),
    VIA("SIN", p_sin_inplace, "sin_inplace", 1), VIA("COS", p_cos_inplace, "cos_inplace", 1),
    VIA("LEAKY_RELU", p_leaky_inplace, "leaky_relu in place", 1),
    FWD1("SCALE", p_scale_bias, "scale_bias", (7, 5, 3, 2), -2, 2), FWD1("SCALE", p_scale_bias, "scale_bias", (1, 13, 1, 3), -2, 2),
    GRAD1("SCALE", p_scale_bias, "scale_bias", (5, 3, 2, 2), OPS_CONTIG | OPS_TRANSPOSED, -1, 1),
    GRAD2("ADD1", p_add1, "a and the scalar b", (5, 3, 2, 2), 0, (1, 1, 1, 1), 0, -1, 1),
    GRAD2("ADD1", p_add1, "a transposed", (5, 3, 2, 1), OPS_TRANSPOSED, (1, 1, 1, 1), 0, -1, 1),
    GRAD1("SIN", p_sin, "[5,3,2,2]", (5, 3, 2, 2), 0, -4, 4), GRAD1("COS", p_cos, "[5,3,2,2]", (5, 3, 2, 2), 0, -4, 4),
    GRAD1("SIN", p_sin, "of transposed", (3, 5, 2, 1), OPS_TRANSPOSED, -4, 4),
    GRAD1("COS", p_cos, "of transposed", (3, 5, 2, 1), OPS_TRANSPOSED, -4, 4),
    {.op = "CLAMP", .variant = "gradient below, inside, above", .build = b_ew, .params = &p_clamp, .n_in = 1,
     .in = {{.ne = {5, 3, 2, 2}, .lo = 0, .hi = 1, .layout = OPS_CONTIG | OPS_TRANSPOSED, .fill = f_clamp}}, .ref = r_ew, .tol = 1e-5,
     .grad = OPS_GRAD},
    {.op = "LEAKY_RELU", .variant = "gradient slope 0.1, away from 0", .build = b_ew, .params = &p_leaky, .n_in = 1,
     .in = {{.ne = {5, 3, 2, 2}, .lo = 0.05, .hi = 2, .layout = OPS_CONTIG | OPS_TRANSPOSED, .fill = f_signs}}, .ref = r_ew, .tol = 1e-5,
     .grad = OPS_GRAD},
    {.op = "LEAKY_RELU", .variant = "gradient slope -0.3, away from 0", .build = b_ew, .params = &p_leaky_neg, .n_in = 1,
     .in = {{.ne = {5, 3, 2, 2}, .lo = 0.05, .hi = 2, .fill = f_signs}}, .ref = r_ew, .tol = 1e-5, .grad = OPS_GRAD},
    ADD_ID("a [7,3,4,1]", 7, 3, 4, 1, OPS_ANY_LAYOUT, OPS_FORWARD_ONLY, false),
    ADD_ID("a [7,3,4,2]: ids shared over ne3", 7, 3, 4, 2, OPS_ANY_LAYOUT, OPS_FORWARD_ONLY, false),
    ADD_ID("gradient of a and b", 6, 3, 4, 1, OPS_CONTIG | OPS_TRANSPOSED, OPS_GRAD, false),
    ADD_ID("b's gradient with ne3 > 1 refused", 6, 3, 4, 2, 0, OPS_REFUSED, false),
};

const struct ops_family ops_elementwise = {"elementwise", rows, sizeof rows / sizeof rows[0], NULL, NULL};

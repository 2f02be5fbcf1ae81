/* elementwise.c -- rows of the element-wise ops: add, sub, mul, div (b
 * broadcast over a), add_inplace, add_id (b's rows picked by expert ids:
 * a[:, i1, i2, i3] + b[:, ids[i1, i2]]), sqr, sqrt, log, scale.
 *
 * Forward tolerance: relative 2-norm error 1e-5 (one float operation per
 * element, ~1e-7; a wrong element, index or broadcast is off by 1e-2 or
 * more), on every layout of every input. Gradients: the harness defaults. */
#include "ops/harness.h"

enum ew_op { EW_ADD, EW_SUB, EW_MUL, EW_DIV, EW_SQR, EW_SQRT, EW_LOG, EW_SCALE };
struct ew_params {
    enum ew_op op;
    bool self;     /* the one input on both sides: x op x */
    bool inplace;  /* add_inplace */
    float s;       /* scale */
};

static const struct ew_params p_add = {.op = EW_ADD}, p_sub = {.op = EW_SUB}, p_mul = {.op = EW_MUL}, p_div = {.op = EW_DIV},
                              p_mul_self = {.op = EW_MUL, .self = true}, p_div_self = {.op = EW_DIV, .self = true},
                              p_add_inplace = {.op = EW_ADD, .inplace = true}, p_sqr = {.op = EW_SQR}, p_sqrt = {.op = EW_SQRT},
                              p_log = {.op = EW_LOG}, p_scale = {.op = EW_SCALE, .s = -1.7f};

static struct ggml_tensor * b_ew(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct ew_params * p = params;
    struct ggml_tensor * b = p->self ? in[0] : in[1];
    switch (p->op) {
        case EW_ADD:  return p->inplace ? ggml_add_inplace(ctx, in[0], b) : ggml_add(ctx, in[0], b);
        case EW_SUB:  return ggml_sub(ctx, in[0], b);
        case EW_MUL:  return ggml_mul(ctx, in[0], b);
        case EW_DIV:  return ggml_div(ctx, in[0], b);
        case EW_SQR:  return ggml_sqr(ctx, in[0]);
        case EW_SQRT: return ggml_sqrt(ctx, in[0]);
        case EW_LOG:  return ggml_log(ctx, in[0]);
        default:      return ggml_scale(ctx, in[0], p->s);
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
        const double y = p->op <= EW_DIV ? b[ops_at(nb, i0 % nb[0], i1 % nb[1], i2 % nb[2], i3 % nb[3])] : 0;
        switch (p->op) {
            case EW_ADD:  out[i] = x + y; break;
            case EW_SUB:  out[i] = x - y; break;
            case EW_MUL:  out[i] = x * y; break;
            case EW_DIV:  out[i] = x / y; break;
            case EW_SQR:  out[i] = x * x; break;
            case EW_SQRT: out[i] = sqrt(x); break;
            case EW_LOG:  out[i] = log(x); break;
            default:      out[i] = p->s * x; break;
        }
    }
}

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

static const struct ops_row rows[] = {
    BINARY((7, 5, 3, 2), (7, 5, 3, 2)), BINARY((7, 5, 3, 2), (7, 1, 3, 1)), BINARY((7, 5, 3, 2), (1, 5, 1, 1)),
    BINARY((7, 5, 3, 2), (1, 1, 1, 1)), BINARY((7, 5, 3, 2), (7, 5, 1, 2)), BINARY((7, 5, 3, 2), (1, 5, 3, 1)),
    BINARY((6, 5, 3, 2), (2, 5, 1, 2)),  /* b tiled three times along ne0 */
    BINARY((1, 13, 1, 3), (1, 13, 1, 3)), BINARY((1, 13, 1, 3), (1, 1, 1, 3)), BINARY((1, 13, 1, 3), (1, 13, 1, 1)),
    UNARY((7, 5, 3, 2)), UNARY((1, 13, 1, 3)), UNARY((1, 1, 1, 1)),
    GRAD2("ADD", p_add, "same shape", (5, 3, 2, 2), 0, (5, 3, 2, 2), 0, -1, 1),
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
    ADD_ID("a [7,3,4,1]", 7, 3, 4, 1, OPS_ANY_LAYOUT, OPS_FORWARD_ONLY, false),
    ADD_ID("a [7,3,4,2]: ids shared over ne3", 7, 3, 4, 2, OPS_ANY_LAYOUT, OPS_FORWARD_ONLY, false),
    ADD_ID("gradient of a and b", 6, 3, 4, 1, OPS_CONTIG | OPS_TRANSPOSED, OPS_GRAD, false),
    ADD_ID("b's gradient with ne3 > 1 refused", 6, 3, 4, 2, 0, OPS_REFUSED, false),
};

const struct ops_family ops_elementwise = {"elementwise", rows, sizeof rows / sizeof rows[0], NULL};

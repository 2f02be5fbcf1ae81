/* unary.c -- activations y = f(x) (GGML_OP_UNARY) and their backward
 * dx = g * f'(x) (GGML_OP_UNARY_BACK), element-wise, any input layout.
 *
 * Formulas (s = sigmoid, k = sqrt(2/pi), c = 0.044715):
 *   gelu(x)     = x/2 (1 + tanh u), u = k (x + c x^3)      = x s(2u)
 *   gelu'(x)    = s(2u) + 2 x s(2u) (1 - s(2u)) k (1 + 3 c x^2)
 *   gelu_erf(x) = x/2 (1 + erf(x / sqrt 2)),  gelu_erf'(x) = (1 + erf(x / sqrt 2))/2 + x phi(x)
 *     with 1 + erf(z) taken as erfc(-z): no cancellation for x << 0
 *   silu(x)     = x s(x),                     silu'(x)     = s(x) (1 + x (1 - s(x)))
 *   gelu_quick(x) = x s(1.702 x),             gelu_quick'(x) = s(1.702 x) (1 + 1.702 x (1 - s(1.702 x)))
 *   tanh' = 1 - tanh^2, sigmoid' = s (1 - s), exp' = exp, relu' = [x > 0], neg' = -1.
 *   abs' = sgn, elu(x) = x > 0 ? x : e^x - 1, elu' = x > 0 ? 1 : e^x, expm1' = e^x,
 *   softplus(x) = log(1 + e^x) (x above 20: x, as upstream), softplus' = s(x),
 *   hardsigmoid(x) = clamp((x + 3)/6, 0, 1), hardsigmoid' = 1/6 on (-3, 3), else 0,
 *   hardswish(x) = x hardsigmoid(x), hardswish' = 0 below -3, x/3 + 1/2 on [-3, 3], 1 above
 *     (torch's one-sided values at the kinks),
 *   xielu (alpha_n, alpha_p already constrained, see core/op_list.h):
 *     x > 0: alpha_p x^2 + beta x,                  ' = 2 alpha_p x + beta
 *     else:  alpha_n (expm1(min(x, eps)) - x) + beta x, ' = alpha_n ([x < eps] e^x - 1) + beta,
 *   sgn, step, floor, ceil, round (halves away from 0), trunc: piecewise constant, f' = 0
 *     (the backward rule's convention at the jumps, ops/unary.c).
 * expm1 and elu use expm1f, exact near 0 (upstream's expm1 is expf(x) - 1).
 * Written so that no finite input gives NaN: where s saturates to 0 or 1 the
 * terms that multiply x by s (1 - s) are exactly 0, and x^2 only enters
 * where it cannot overflow. GELU (both directions) and exp use the SIMD path
 * of vec.h; the others are plain loops. */
#include "cpu/kernels/kernels.h"

#include <math.h>

#define SQRT_2_OVER_PI 0.79788456080286535588f
#define GELU_COEF      0.044715f
#define INV_SQRT_2     0.70710678118654752440f
#define INV_SQRT_2PI   0.39894228040143267794f

static inline float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

#define GELU_QUICK_COEF 1.702f

static inline float sgnf(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : 0.0f; }
static inline float hardsigmoidf(float x) { return fminf(1.0f, fmaxf(0.0f, (x + 3.0f) / 6.0f)); }

/* y[i] = f(x[i]) for one row (y apart from x; also GLU's) */
void ggmlr_act_row(enum ggml_unary_op op, int64_t n, const float * x, float * y) {
    const struct ggmlr_vec_ops * v = ggmlr_vec();
    switch (op) {
        case GGML_UNARY_OP_NEG:      for (int64_t i = 0; i < n; i++) y[i] = -x[i]; break;
        case GGML_UNARY_OP_TANH:     for (int64_t i = 0; i < n; i++) y[i] = tanhf(x[i]); break;
        case GGML_UNARY_OP_RELU:     for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f; break;
        case GGML_UNARY_OP_SIGMOID:  for (int64_t i = 0; i < n; i++) y[i] = sigmoidf(x[i]); break;
        case GGML_UNARY_OP_GELU:     v->gelu(n, x, y); break;
        case GGML_UNARY_OP_SILU:     v->silu(n, x, y); break;
        case GGML_UNARY_OP_GELU_QUICK: v->gelu_quick(n, x, y); break;
        case GGML_UNARY_OP_EXP:      v->exp(n, x, y); break;
        case GGML_UNARY_OP_GELU_ERF: v->gelu_erf(n, x, y); break;
        case GGML_UNARY_OP_ABS:      for (int64_t i = 0; i < n; i++) y[i] = fabsf(x[i]); break;
        case GGML_UNARY_OP_SGN:      for (int64_t i = 0; i < n; i++) y[i] = sgnf(x[i]); break;
        case GGML_UNARY_OP_STEP:     for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? 1.0f : 0.0f; break;
        case GGML_UNARY_OP_ELU:      for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : expm1f(x[i]); break;
        case GGML_UNARY_OP_HARDSWISH: for (int64_t i = 0; i < n; i++) y[i] = x[i] * hardsigmoidf(x[i]); break;
        case GGML_UNARY_OP_HARDSIGMOID: for (int64_t i = 0; i < n; i++) y[i] = hardsigmoidf(x[i]); break;
        case GGML_UNARY_OP_EXPM1:    for (int64_t i = 0; i < n; i++) y[i] = expm1f(x[i]); break;
        case GGML_UNARY_OP_SOFTPLUS: for (int64_t i = 0; i < n; i++) y[i] = x[i] > 20.0f ? x[i] : log1pf(expf(x[i])); break;
        case GGML_UNARY_OP_FLOOR:    for (int64_t i = 0; i < n; i++) y[i] = floorf(x[i]); break;
        case GGML_UNARY_OP_CEIL:     for (int64_t i = 0; i < n; i++) y[i] = ceilf(x[i]); break;
        case GGML_UNARY_OP_ROUND:    for (int64_t i = 0; i < n; i++) y[i] = roundf(x[i]); break;
        case GGML_UNARY_OP_TRUNC:    for (int64_t i = 0; i < n; i++) y[i] = truncf(x[i]); break;
        default: break;  /* XIELU: xielu_row, with its parameters */
    }
}

static inline float silu_grad(float x) {
    const float s = sigmoidf(x);
    return s * (1.0f + x * (1.0f - s));
}

static inline float gelu_quick_grad(float x) {
    const float s = sigmoidf(GELU_QUICK_COEF * x);
    return s * (1.0f + GELU_QUICK_COEF * x * (1.0f - s));
}

static inline float gelu_erf_grad(float x) {
    return 0.5f * erfcf(-x * INV_SQRT_2) + x * INV_SQRT_2PI * expf(-0.5f * x * x);
}

static inline float hardswish_grad(float x) { return x < -3.0f ? 0.0f : x <= 3.0f ? x / 3.0f + 0.5f : 1.0f; }

/* dx[i] = g[i] * f'(x[i]) for one row (dx apart from g and x; also GLU's) */
void ggmlr_act_back_row(enum ggml_unary_op op, int64_t n, const float * g, const float * x, float * dx) {
    const struct ggmlr_vec_ops * v = ggmlr_vec();
    switch (op) {
        case GGML_UNARY_OP_NEG:      for (int64_t i = 0; i < n; i++) dx[i] = -g[i]; break;
        case GGML_UNARY_OP_TANH:     for (int64_t i = 0; i < n; i++) { const float t = tanhf(x[i]); dx[i] = g[i] * (1.0f - t * t); } break;
        case GGML_UNARY_OP_RELU:     for (int64_t i = 0; i < n; i++) dx[i] = x[i] > 0.0f ? g[i] : 0.0f; break;
        case GGML_UNARY_OP_SIGMOID:  for (int64_t i = 0; i < n; i++) { const float s = sigmoidf(x[i]); dx[i] = g[i] * s * (1.0f - s); } break;
        case GGML_UNARY_OP_GELU:     v->gelu_back(n, g, x, dx); break;
        case GGML_UNARY_OP_SILU:     for (int64_t i = 0; i < n; i++) dx[i] = g[i] * silu_grad(x[i]); break;
        case GGML_UNARY_OP_GELU_QUICK: for (int64_t i = 0; i < n; i++) dx[i] = g[i] * gelu_quick_grad(x[i]); break;
        case GGML_UNARY_OP_EXP:      v->exp(n, x, dx); for (int64_t i = 0; i < n; i++) dx[i] *= g[i]; break;
        case GGML_UNARY_OP_GELU_ERF: for (int64_t i = 0; i < n; i++) dx[i] = g[i] * gelu_erf_grad(x[i]); break;
        case GGML_UNARY_OP_ABS:      for (int64_t i = 0; i < n; i++) dx[i] = g[i] * sgnf(x[i]); break;
        case GGML_UNARY_OP_ELU:      for (int64_t i = 0; i < n; i++) dx[i] = x[i] > 0.0f ? g[i] : g[i] * expf(x[i]); break;
        case GGML_UNARY_OP_HARDSWISH: for (int64_t i = 0; i < n; i++) dx[i] = g[i] * hardswish_grad(x[i]); break;
        case GGML_UNARY_OP_HARDSIGMOID:
            for (int64_t i = 0; i < n; i++) dx[i] = x[i] > -3.0f && x[i] < 3.0f ? g[i] / 6.0f : 0.0f;
            break;
        case GGML_UNARY_OP_EXPM1:    v->exp(n, x, dx); for (int64_t i = 0; i < n; i++) dx[i] *= g[i]; break;
        case GGML_UNARY_OP_SOFTPLUS: for (int64_t i = 0; i < n; i++) dx[i] = g[i] * sigmoidf(x[i]); break;
        case GGML_UNARY_OP_SGN: case GGML_UNARY_OP_STEP: case GGML_UNARY_OP_FLOOR: case GGML_UNARY_OP_CEIL:
        case GGML_UNARY_OP_ROUND: case GGML_UNARY_OP_TRUNC:
            for (int64_t i = 0; i < n; i++) dx[i] = 0.0f;  /* zeros, not g * 0: an infinite g gives no NaN */
            break;
        default: break;  /* XIELU: xielu_back_row */
    }
}

static void xielu_row(const struct ggmlr_unary_params * p, int64_t n, const float * x, float * y) {
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] > 0.0f ? p->alpha_p * x[i] * x[i] + p->beta * x[i] : p->alpha_n * (expm1f(fminf(x[i], p->eps)) - x[i]) + p->beta * x[i];
}

static void xielu_back_row(const struct ggmlr_unary_params * p, int64_t n, const float * g, const float * x, float * dx) {
    for (int64_t i = 0; i < n; i++) {
        const float d = x[i] > 0.0f ? 2.0f * p->alpha_p * x[i] + p->beta
                                    : p->alpha_n * ((x[i] < p->eps ? expf(x[i]) : 0.0f) - 1.0f) + p->beta;
        dx[i] = g[i] * d;
    }
}

/* three rows of scratch: a's, x's (backward) and the result's when dst is strided (in place) or F16/BF16 */
static size_t ggmlr_unary_act_work_size(const struct ggml_tensor * dst) { return 3 * (size_t) dst->ne[0] * sizeof(float); }

/* UNARY (src[0] = x), UNARY_BACK and SILU_BACK (src[0] = g, src[1] = x), row by row;
 * an in-place UNARY writes each row over the row of a it read (the same
 * elements, so split rows do not race), through scratch when it is strided */
static void ggmlr_compute_unary_act(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const bool silu_back = dst->op == GGML_OP_SILU_BACK;  /* no parameters: UNARY_BACK of SILU */
    const struct ggmlr_unary_params prm = silu_back ? (struct ggmlr_unary_params) {.op = GGML_UNARY_OP_SILU} : ggmlr_unary_params_decode(dst);
    const enum ggml_unary_op op = (enum ggml_unary_op) prm.op;
    const bool back = dst->op != GGML_OP_UNARY;
    const struct ggml_tensor * a = dst->src[0], * x = back ? dst->src[1] : NULL;
    const int64_t n = dst->ne[0];
    if (n == 0) return;  /* empty rows: no scratch either, and nothing to write */
    const bool packed = dst->type == GGML_TYPE_F32 && dst->nb[0] == sizeof(float);
    float * abuf = p->wdata, * xbuf = abuf + n, * ybuf = xbuf + n;
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const float * arow = ggmlr_row_f32(a, i1, i2, i3, abuf);
        char * drow = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        float * y = packed ? (float *) drow : ybuf;
        if (back) {
            const float * xrow = ggmlr_row_f32(x, i1, i2, i3, xbuf);
            if (op == GGML_UNARY_OP_XIELU) xielu_back_row(&prm, n, arow, xrow, y);
            else                           ggmlr_act_back_row(op, n, arow, xrow, y);
        } else {
            if (op == GGML_UNARY_OP_XIELU) xielu_row(&prm, n, arow, y);
            else                           ggmlr_act_row(op, n, arow, y);
        }
        if (!packed) for (int64_t i = 0; i < n; i++) ggmlr_store_f32(dst->type, drow + i * dst->nb[0], y[i]);
    }
}

GGMLR_KERNEL(unary, ggmlr_compute_unary_act, ggmlr_unary_act_work_size, NULL);  /* UNARY, UNARY_BACK, SILU_BACK */

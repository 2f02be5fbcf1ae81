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

/* y[i] = f(x[i]) for one row (y apart from x; also GLU's) */
void ggmlr_act_row(enum ggml_unary_op op, int64_t n, const float * x, float * y) {
    const struct ggmlr_vec_ops * v = ggmlr_vec();
    switch (op) {
        case GGML_UNARY_OP_NEG:      for (int64_t i = 0; i < n; i++) y[i] = -x[i]; break;
        case GGML_UNARY_OP_TANH:     for (int64_t i = 0; i < n; i++) y[i] = tanhf(x[i]); break;
        case GGML_UNARY_OP_RELU:     for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f; break;
        case GGML_UNARY_OP_SIGMOID:  for (int64_t i = 0; i < n; i++) y[i] = sigmoidf(x[i]); break;
        case GGML_UNARY_OP_GELU:     v->gelu(n, x, y); break;
        case GGML_UNARY_OP_SILU:     for (int64_t i = 0; i < n; i++) y[i] = x[i] * sigmoidf(x[i]); break;
        case GGML_UNARY_OP_GELU_QUICK: for (int64_t i = 0; i < n; i++) y[i] = x[i] * sigmoidf(GELU_QUICK_COEF * x[i]); break;
        case GGML_UNARY_OP_EXP:      v->exp(n, x, y); break;
        case GGML_UNARY_OP_GELU_ERF: for (int64_t i = 0; i < n; i++) y[i] = 0.5f * x[i] * erfcf(-x[i] * INV_SQRT_2); break;
        default: break;  /* the constructor admits only the ops above */
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
        default: break;
    }
}

static size_t ggmlr_unary_act_work_size(const struct ggml_tensor * dst) { return 2 * (size_t) dst->ne[0] * sizeof(float); }

/* UNARY (src[0] = x) and UNARY_BACK (src[0] = g, src[1] = x), row by row */
static void ggmlr_compute_unary_act(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const enum ggml_unary_op op = ggmlr_unary_params_decode(dst);
    const bool back = dst->op == GGML_OP_UNARY_BACK;
    const struct ggml_tensor * a = dst->src[0], * x = back ? dst->src[1] : NULL;
    const int64_t n = dst->ne[0];
    if (n == 0) return;  /* empty rows: no scratch either, and nothing to write */
    float * abuf = p->wdata, * xbuf = abuf + n;
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const float * arow = ggmlr_row_f32(a, i1, i2, i3, abuf);
        float * y = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        if (back) ggmlr_act_back_row(op, n, arow, ggmlr_row_f32(x, i1, i2, i3, xbuf), y);
        else      ggmlr_act_row(op, n, arow, y);
    }
}

GGMLR_KERNEL(unary, ggmlr_compute_unary_act, ggmlr_unary_act_work_size, NULL);  /* UNARY, UNARY_BACK */

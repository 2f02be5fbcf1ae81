/* glu.c -- gated linear units y = act(x) * g (GGML_OP_GLU) and their
 * gradients (GGML_OP_GLU_BACK), row by row, any input layout.
 *
 * act is an activation of unary.c (relu, gelu, silu, gelu_erf, gelu_quick;
 * the forward runs fused in SIMD lanes, cpu/simd/act_impl.h)
 * and, for SWIGLU_OAI, x' sigmoid(alpha x') with x' = min(x, limit), the gate
 * g' = clamp(g, -limit, limit) + 1. Backward, with dy:
 *   dx = dy g act'(x)                        dg = dy act(x)
 *   OAI: dx = dy g' s (1 + alpha x' (1 - s)) [x < limit], s = sigmoid(alpha x')
 *        dg = dy x' s [-limit < g < limit]
 * Without b the row of a holds x and g side by side (x first unless
 * swapped) and GLU_BACK writes both halves of a's gradient. */
#include "cpu/kernels/kernels.h"

#include <math.h>

static enum ggml_unary_op act_of(int32_t glu_op) {
    switch (glu_op) {
        case GGML_GLU_OP_REGLU:       return GGML_UNARY_OP_RELU;
        case GGML_GLU_OP_GEGLU:       return GGML_UNARY_OP_GELU;
        case GGML_GLU_OP_GEGLU_ERF:   return GGML_UNARY_OP_GELU_ERF;
        case GGML_GLU_OP_GEGLU_QUICK: return GGML_UNARY_OP_GELU_QUICK;
        default:                      return GGML_UNARY_OP_SILU;  /* SWIGLU (OAI is handled apart) */
    }
}

/* One row's x and g: the halves of a's row, or the rows of a and b. */
struct glu_row { const float * x, * g; };

static struct glu_row glu_row(const struct ggml_tensor * a, const struct ggml_tensor * b, bool swapped, int64_t n, int64_t i1, int64_t i2,
                              int64_t i3, float * abuf, float * bbuf) {
    const float * ra = ggmlr_row_f32(a, i1, i2, i3, abuf);
    if (b) return (struct glu_row) {ra, ggmlr_row_f32(b, i1, i2, i3, bbuf)};
    return swapped ? (struct glu_row) {ra + n, ra} : (struct glu_row) {ra, ra + n};
}

static inline float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

/* OAI's gradients on one row (dx or dg may be NULL) */
static void oai_back_row(int64_t n, const float * dy, const float * x, const float * g, float alpha, float limit, float * dx, float * dg) {
    for (int64_t i = 0; i < n; i++) {
        const float xc = fminf(x[i], limit), gc = fminf(fmaxf(g[i], -limit), limit);
        const float s = sigmoidf(alpha * xc);
        if (dx) dx[i] = x[i] < limit ? dy[i] * (gc + 1.0f) * s * (1.0f + alpha * xc * (1.0f - s)) : 0.0f;
        if (dg) dg[i] = g[i] > -limit && g[i] < limit ? dy[i] * xc * s : 0.0f;
    }
}

/* scratch: a's row (2n floats when it holds both halves), b's row, the activation and an F16 result's F32 row */
static size_t glu_work_size(const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->op == GGML_OP_GLU ? dst->src[0] : ggmlr_glu_back_srcs_decode(dst).a;
    return (2 * (size_t) a->ne[0] + 4 * (size_t) dst->ne[0]) * sizeof(float);
}

static void glu_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_glu_params gp = ggmlr_glu_params_decode(dst);
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const int64_t n = dst->ne[0];
    if (n == 0) return;
    float * abuf = p->wdata, * bbuf = abuf + a->ne[0], * ybuf = bbuf + n;
    const bool f32 = dst->type == GGML_TYPE_F32;  /* else F16: computed in F32, then rounded */
    const bool stream = ggmlr_result_streams(dst);  /* large F32 results: non-temporal stores */
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const struct glu_row in = glu_row(a, b, gp.swapped, n, i1, i2, i3, abuf, bbuf);
        float * y = f32 ? (float *) ggmlr_elem_ptr(dst, 0, i1, i2, i3) : ybuf;
        if (gp.op == GGML_GLU_OP_SWIGLU_OAI) ggmlr_vec()->oai(n, in.x, in.g, gp.alpha, gp.limit, y, stream);
        else ggmlr_vec()->glu(act_of(gp.op), n, in.x, in.g, y, stream);
        if (!f32) ggml_fp32_to_fp16_row(y, ggmlr_elem_ptr(dst, 0, i1, i2, i3), n);
    }
}

/* Rows of dy: the gradient of a (which 0; without b both halves of its row)
 * or of b (which 1). */
static void glu_backward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_glu_params gp = ggmlr_glu_params_decode(dst);
    const struct ggmlr_glu_back_srcs s = ggmlr_glu_back_srcs_decode(dst);
    const int64_t n = s.dy->ne[0];
    if (n == 0) return;
    float * abuf = p->wdata, * bbuf = abuf + s.a->ne[0], * tmp = bbuf + n, * dybuf = tmp + n;
    struct ggmlr_rows rows = ggmlr_my_rows(p, s.dy);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const struct glu_row in = glu_row(s.a, s.b, gp.swapped, n, i1, i2, i3, abuf, bbuf);
        const float * dy = ggmlr_row_f32(s.dy, i1, i2, i3, dybuf);
        float * out = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        /* where dx and dg go in dst's row */
        float * dx = s.b ? (gp.which == 0 ? out : NULL) : (gp.swapped ? out + n : out);
        float * dg = s.b ? (gp.which == 1 ? out : NULL) : (gp.swapped ? out : out + n);
        if (!s.b && s.a->ne[0] > 2 * n) out[2 * n] = 0.0f;  /* an odd row's last element: not read, no gradient */
        if (gp.op == GGML_GLU_OP_SWIGLU_OAI) { oai_back_row(n, dy, in.x, in.g, gp.alpha, gp.limit, dx, dg); continue; }
        const enum ggml_unary_op act = act_of(gp.op);
        if (dx) {
            for (int64_t i = 0; i < n; i++) tmp[i] = dy[i] * in.g[i];
            ggmlr_act_back_row(act, n, tmp, in.x, dx);
        }
        if (dg) {
            ggmlr_act_row(act, n, in.x, dg);
            for (int64_t i = 0; i < n; i++) dg[i] *= dy[i];
        }
    }
}

GGMLR_KERNEL(glu, glu_forward, glu_work_size, NULL);
GGMLR_KERNEL(glu_back, glu_backward, glu_work_size, NULL);

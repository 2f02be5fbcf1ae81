/* pool.c -- POOL_1D, POOL_2D and POOL_2D_BACK (the maths: ops/pool.c).
 *
 * Forward: one output row (oy of a plane) per step, threads split the rows;
 * the window's input rows are read whole, one after the other.
 * Backward: each thread owns whole planes, zeroes its planes of dx and
 * scatters every output's dy into its window in one fixed order, so the sums
 * do not depend on the thread count. MAX keeps upstream's choice: the first
 * element > -FLT_MAX that no later one exceeds (none: the gradient is lost). */
#include "cpu/kernels/kernels.h"
#include "cpu/simd/vec.h"

#include <float.h>
#include <string.h>

/* an F32 or F16 (the forward's input) element */
static float at(const struct ggml_tensor * t, int64_t x, int64_t y, int64_t i2, int64_t i3) {
    const void * e = ggmlr_elem_ptr(t, x, y, i2, i3);
    return t->type == GGML_TYPE_F32 ? *(const float *) e : ggml_fp16_to_fp32(*(const ggml_fp16_t *) e);
}

/* Window o's inputs along one axis, clipped to [0, n): [lo, hi) (empty: hi <= lo). */
static void window(int64_t o, int32_t k, int32_t s, int32_t p, int64_t n, int64_t * lo, int64_t * hi) {
    const int64_t start = o * s - p;
    *lo = start < 0 ? 0 : start;
    *hi = start + k < n ? start + k : n;
}

/* AVG's divisor: k0 k1, or (avg_in) the elements inside the window; 0 for an empty window */
static int64_t avg_divisor(const struct ggmlr_pool_params * pp, int64_t x0, int64_t x1, int64_t y0, int64_t y1) {
    if (!pp->avg_in) return (int64_t) pp->k0 * pp->k1;
    return x1 > x0 && y1 > y0 ? (x1 - x0) * (y1 - y0) : 0;
}

/* one input row of a window: MAX keeps the largest (a NaN never wins), AVG sums
 * x0..x1 in order; acc holds dst's row, one entry per output column. The
 * outputs whose window lies inside the row (ox in [in0, in1)) go to the SIMD
 * primitive, the clipped ones at either edge element by element. */
static void pool_row(const struct ggmlr_pool_params * pp, const float * in, int64_t iw, float * acc, int64_t ow) {
    const bool is_max = pp->op == GGML_OP_POOL_MAX;
    /* interior: ox s0 - p0 >= 0 and ox s0 - p0 + k0 <= iw (in 64 bits: the
     * parameters may be anywhere in int32's range) */
    const int64_t k = pp->k0, s = pp->s0, pad = pp->p0;
    int64_t in0 = s > 0 && pad >= 0 ? (pad + s - 1) / s : ow, in1 = in0;
    if (s > 0 && iw - k + pad >= 0) in1 = (iw - k + pad) / s + 1;
    in0 = in0 < ow ? in0 : ow;
    in1 = in1 < ow ? in1 : ow;
    in1 = in1 > in0 ? in1 : in0;
    for (int64_t ox = 0; ox < ow; ox++) {
        if (ox == in0 && in1 > in0) {
            const int64_t first = in0 * pp->s0 - pp->p0;  /* the first interior window's first input */
            ggmlr_vec()->pool_rows(is_max, in1 - in0, pp->s0, pp->k0, in + first, iw - first, acc + in0);
            ox = in1 - 1;
            continue;
        }
        int64_t x0, x1;
        window(ox, pp->k0, pp->s0, pp->p0, iw, &x0, &x1);
        float res = acc[ox];
        if (is_max) for (int64_t x = x0; x < x1; x++) res = in[x] > res ? in[x] : res;
        else for (int64_t x = x0; x < x1; x++) res += in[x];
        acc[ox] = res;
    }
}

/* an F16 input's row, converted */
static size_t pool_work_size(const struct ggml_tensor * dst) { return (size_t) dst->src[0]->ne[0] * sizeof(float); }

/* Output row (oy, i2, i3) is built in place, the window's input rows y0..y1
 * in order (each read once as F32), then AVG divides each entry. */
static void pool_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_pool_params pp = ggmlr_pool_params_decode(dst);
    const struct ggml_tensor * a = dst->src[0];
    const int64_t ow = dst->ne[0];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, oy, i2, i3;
    while (ggmlr_next_row(&rows, &r, &oy, &i2, &i3)) {
        int64_t y0, y1;
        window(oy, pp.k1, pp.s1, pp.p1, a->ne[1], &y0, &y1);
        float * out = ggmlr_elem_ptr(dst, 0, oy, i2, i3);
        for (int64_t ox = 0; ox < ow; ox++) out[ox] = pp.op == GGML_OP_POOL_MAX ? -FLT_MAX : 0.0f;
        for (int64_t y = y0; y < y1; y++) pool_row(&pp, ggmlr_row_f32(a, y, i2, i3, p->wdata), a->ne[0], out, ow);
        for (int64_t ox = 0; pp.op == GGML_OP_POOL_AVG && ox < ow; ox++) {
            int64_t x0, x1;
            window(ox, pp.k0, pp.s0, pp.p0, a->ne[0], &x0, &x1);
            const int64_t m = avg_divisor(&pp, x0, x1, y0, y1);
            out[ox] = m > 0 ? out[ox] / (float) m : 0.0f;
        }
    }
}

static void pool_backward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_pool_params pp = ggmlr_pool_params_decode(dst);
    const struct ggml_tensor * dy = dst->src[0], * af = dst->src[1];
    int64_t q0, q1;
    ggmlr_split(dst->ne[2] * dst->ne[3], p->ith, p->nth, &q0, &q1);
    for (int64_t q = q0; q < q1; q++) {
        const int64_t i2 = q % dst->ne[2], i3 = q / dst->ne[2];
        for (int64_t y = 0; y < dst->ne[1]; y++) memset(ggmlr_elem_ptr(dst, 0, y, i2, i3), 0, (size_t) dst->ne[0] * sizeof(float));
        for (int64_t oy = 0; oy < dy->ne[1]; oy++) {
            int64_t y0, y1;
            window(oy, pp.k1, pp.s1, pp.p1, dst->ne[1], &y0, &y1);
            for (int64_t ox = 0; ox < dy->ne[0]; ox++) {
                int64_t x0, x1;
                window(ox, pp.k0, pp.s0, pp.p0, dst->ne[0], &x0, &x1);
                const float d = at(dy, ox, oy, i2, i3);
                if (pp.op == GGML_OP_POOL_MAX) {
                    float best = -FLT_MAX;
                    int64_t bx = -1, by = -1;
                    for (int64_t y = y0; y < y1; y++)
                        for (int64_t x = x0; x < x1; x++) {
                            const float v = at(af, x, y, i2, i3);
                            if (v > best) { best = v; bx = x; by = y; }
                        }
                    if (bx >= 0) *(float *) ggmlr_elem_ptr(dst, bx, by, i2, i3) += d;
                    continue;
                }
                const int64_t m = avg_divisor(&pp, x0, x1, y0, y1);
                if (m <= 0) continue;
                const float share = d / (float) m;
                for (int64_t y = y0; y < y1; y++)
                    for (int64_t x = x0; x < x1; x++) *(float *) ggmlr_elem_ptr(dst, x, y, i2, i3) += share;
            }
        }
    }
}

GGMLR_KERNEL(pool, pool_forward, pool_work_size, NULL);
GGMLR_KERNEL(pool_back, pool_backward, NULL, NULL);

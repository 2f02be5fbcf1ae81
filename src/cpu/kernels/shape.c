/* shape.c -- CONCAT, PAD, PAD_REFLECT_1D, PAD_BACK, UPSCALE and
 * UPSCALE_BACK (constructors and the maths: ops/shape.c). Every tensor is
 * read through its strides.
 *
 * UPSCALE follows upstream's arithmetic for positions and weights, in float:
 * per dim the scale factor sf = ne / ne_in ((ne - 1) / (ne_in - 1) on dims
 * 0, 1 with ALIGN_CORNERS, whose pixel offset is 0 instead of 0.5); the
 * modes' taps are below. UPSCALE_BACK scatters dy with the same weights;
 * each thread owns whole planes of the input's gradient and visits the
 * outputs in one order, so its sums do not depend on the thread count. */
#include "cpu/kernels/kernels.h"

#include <math.h>
#include <string.h>

/* ---- CONCAT, PAD, PAD_REFLECT_1D, PAD_BACK: one dst row per step ---- */

/* CONCAT moves units of nb[0] bytes: elements, or whole blocks of a block
 * type (whose ne[0] are whole blocks), so dim 0 counts units */
static void concat_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const int dim = ggmlr_i32_param_decode(dst);
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const size_t es = ggml_type_size(dst->type);
    const int64_t blck = ggml_blck_size(dst->type);
    const int64_t a_units[4] = {a->ne[0] / blck, a->ne[1], a->ne[2], a->ne[3]};
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i[4];
    while (ggmlr_next_row(&rows, &r, &i[1], &i[2], &i[3])) {
        for (i[0] = 0; i[0] < dst->ne[0] / blck; i[0]++) {
            const bool in_a = i[dim] < a_units[dim];
            int64_t j[4] = {i[0], i[1], i[2], i[3]};
            if (!in_a) j[dim] -= a_units[dim];
            memcpy(ggmlr_elem_ptr(dst, i[0], i[1], i[2], i[3]), ggmlr_elem_ptr(in_a ? a : b, j[0], j[1], j[2], j[3]), es);
        }
    }
}

/* Which element of a (n along the dim) output index i reads, -1 for a zero:
 * ZEROS i - lp where it lies in [0, n); CIRCULAR (i - lp) mod n; REFLECT
 * k = i - lp mirrored about 0 and n - 1 (|k| before, 2 (n - 1) - k after). */
static int64_t pad_source(int32_t mode, int64_t i, int32_t lp, int64_t n) {
    const int64_t k = i - lp;
    if (mode == GGMLR_PAD_CIRCULAR) return (k % n + n) % n;
    if (mode == GGMLR_PAD_REFLECT) return k < 0 ? -k : k >= n ? 2 * (n - 1) - k : k;
    return k >= 0 && k < n ? k : -1;
}

/* PAD, PAD_REFLECT_1D: out[i] = a[source(i)] per dim, 0 where a dim has none */
static void pad_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_pad_params pp = ggmlr_pad_params_decode(dst);
    const struct ggml_tensor * a = dst->src[0];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        float * out = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        const int64_t j1 = pad_source(pp.mode, i1, pp.lp[1], a->ne[1]), j2 = pad_source(pp.mode, i2, pp.lp[2], a->ne[2]),
                      j3 = pad_source(pp.mode, i3, pp.lp[3], a->ne[3]);
        const bool row_in = j1 >= 0 && j2 >= 0 && j3 >= 0;
        for (int64_t x = 0; x < dst->ne[0]; x++) {
            const int64_t j0 = row_in ? pad_source(pp.mode, x, pp.lp[0], a->ne[0]) : -1;
            out[x] = j0 >= 0 ? *(const float *) ggmlr_elem_ptr(a, j0, j1, j2, j3) : 0.0f;
        }
    }
}

/* PAD_BACK: dx[j] = sum of dy[i] over the i with source(i) = j, dst = dx
 * shaped like the pad's input, src[0] = dy. Along dims 1..3 (never
 * reflected) such an i is j + lp + k n for some whole k; along dim 0 the
 * row of dy is folded onto dx's in order. Each thread owns rows of dx and
 * visits their dy rows in one order: its sums do not depend on the thread
 * count. */
static void pad_backward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_pad_params pp = ggmlr_pad_params_decode(dst);
    const struct ggml_tensor * dy = dst->src[0];
    int64_t first[4], j[4];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r;
    while (ggmlr_next_row(&rows, &r, &j[1], &j[2], &j[3])) {
        float * dx = ggmlr_elem_ptr(dst, 0, j[1], j[2], j[3]);
        memset(dx, 0, (size_t) dst->ne[0] * sizeof(float));
        for (int d = 1; d < 4; d++) first[d] = (j[d] + pp.lp[d]) % dst->ne[d];
        for (int64_t i3 = first[3]; i3 < dy->ne[3]; i3 += dst->ne[3])
            for (int64_t i2 = first[2]; i2 < dy->ne[2]; i2 += dst->ne[2])
                for (int64_t i1 = first[1]; i1 < dy->ne[1]; i1 += dst->ne[1]) {
                    if (pad_source(pp.mode, i1, pp.lp[1], dst->ne[1]) != j[1] || pad_source(pp.mode, i2, pp.lp[2], dst->ne[2]) != j[2] ||
                        pad_source(pp.mode, i3, pp.lp[3], dst->ne[3]) != j[3])
                        continue;  /* a zero pad's i: it reads nothing */
                    for (int64_t x = 0; x < dy->ne[0]; x++) {
                        const int64_t j0 = pad_source(pp.mode, x, pp.lp[0], dst->ne[0]);
                        if (j0 >= 0) dx[j0] += *(const float *) ggmlr_elem_ptr(dy, x, i1, i2, i3);
                    }
                }
    }
}

/* ---- UPSCALE ----
 * Every mode is separable on dims 0, 1: output (i0, i1) = sum_j wy_j sum_i wx_i a[xi, yj] over each
 * axis's taps (index, weight), from upstream's float formulas per axis:
 *   NEAREST   one tap floor(i / sf), weight 1
 *   BILINEAR  x = (i + off) / sf - off: floor(x), floor(x) + 1 clamped, weights 1 - dx, dx (dx clamped to [0, 1])
 *   BICUBIC   the same x: floor(x) - 1 .. floor(x) + 2 clamped, Keys' cubic convolution weights (alpha -0.75)
 *             of the distances 1 + dx, dx, 1 - dx, 2 - dx (dx = x - floor(x))
 *   BILINEAR | ANTIALIAS  x = (i + off) / sf: the inputs s in [trunc(x - support + off), trunc(x + support + off))
 *             within [0, n), weight triangle((s - x + off) / support), support = max(1, 1 / sf), normalised to
 *             sum 1 (upstream divides by the sum of the 2-D products, which is the product of the two sums;
 *             no weight > 0: the output is 0).
 * Dims 2, 3 are always NEAREST. */

struct scale_axes {
    float sf[4], offset;
    int mode;        /* GGML_SCALE_MODE_*, with BILINEAR | ANTIALIAS as its own */
};
enum { MODE_ANTIALIAS = GGML_SCALE_MODE_COUNT };

static struct scale_axes scale_axes(const struct ggml_tensor * in, const struct ggml_tensor * out, int32_t mode) {
    struct scale_axes s;
    for (int d = 0; d < 4; d++) s.sf[d] = (float) out->ne[d] / (float) in->ne[d];
    s.offset = 0.5f;
    s.mode = mode & 0xFF;
    if (s.mode == GGML_SCALE_MODE_BILINEAR && (mode & GGML_SCALE_FLAG_ANTIALIAS)) s.mode = MODE_ANTIALIAS;
    if (mode & GGML_SCALE_FLAG_ALIGN_CORNERS) {
        s.offset = 0.0f;
        for (int d = 0; d < 2; d++)
            if (out->ne[d] > 1 && in->ne[d] > 1) s.sf[d] = (float) (out->ne[d] - 1) / (float) (in->ne[d] - 1);
    }
    return s;
}

static int64_t nearest(int64_t i, float sf, int64_t n_in) {
    const int64_t j = (int64_t) ((float) i / sf);
    return j < n_in ? j : n_in - 1;
}

/* the taps of one output index along one dim: n of them (at most max(4, n_in)) */
struct taps { int64_t n, * idx; float * w; };

/* bytes of scratch for the taps of dims 0 and 1 of an input shaped `in` */
static size_t taps_bytes(const struct ggml_tensor * in) {
    size_t n = 0;
    for (int d = 0; d < 2; d++) n += (size_t) (in->ne[d] > 4 ? in->ne[d] : 4);
    return n * (sizeof(int64_t) + sizeof(float));
}
static void taps_init(struct taps * tx, struct taps * ty, const struct ggml_tensor * in, void * wdata) {
    const int64_t cx = in->ne[0] > 4 ? in->ne[0] : 4, cy = in->ne[1] > 4 ? in->ne[1] : 4;
    tx->idx = wdata;
    ty->idx = tx->idx + cx;
    tx->w = (float *) (ty->idx + cy);
    ty->w = tx->w + cx;
}

static int64_t clamp_index(int64_t j, int64_t n_in) { return j < 0 ? 0 : j > n_in - 1 ? n_in - 1 : j; }

/* Keys' cubic convolution kernel, alpha = -0.75: |t| <= 1 and 1 < |t| < 2 */
static float cubic_near(float t) { const float a = -0.75f; return ((a + 2) * t - (a + 3)) * t * t + 1; }
static float cubic_far(float t) { const float a = -0.75f; return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; }

static void axis_taps(const struct scale_axes * s, int d, int64_t i, int64_t n_in, struct taps * t) {
    const float sf = s->sf[d], off = s->offset;
    if (s->mode == GGML_SCALE_MODE_NEAREST) {
        t->n = 1; t->idx[0] = nearest(i, sf, n_in); t->w[0] = 1.0f;
    } else if (s->mode == GGML_SCALE_MODE_BILINEAR) {
        const float x = ((float) i + off) / sf - off;
        const int64_t lo = clamp_index((int64_t) floorf(x), n_in), hi = clamp_index((int64_t) floorf(x) + 1, n_in);
        float w = x - (float) lo;
        w = w < 0.0f ? 0.0f : w > 1.0f ? 1.0f : w;
        t->n = 2; t->idx[0] = lo; t->idx[1] = hi; t->w[0] = 1 - w; t->w[1] = w;
    } else if (s->mode == GGML_SCALE_MODE_BICUBIC) {
        const float x = ((float) i + off) / sf - off, fl = floorf(x), dx = x - fl;
        const float w[4] = {cubic_far(dx + 1), cubic_near(dx), cubic_near(1 - dx), cubic_far(2 - dx)};
        t->n = 4;
        for (int k = 0; k < 4; k++) { t->idx[k] = clamp_index((int64_t) fl - 1 + k, n_in); t->w[k] = w[k]; }
    } else {  /* ANTIALIAS */
        const float support = 1.0f / sf > 1.0f ? 1.0f / sf : 1.0f, inv_support = 1.0f / support, x = ((float) i + off) / sf;
        const float lo_f = x - support + off, hi_f = x + support + off;
        const int64_t lo = lo_f > 0.0f ? (int64_t) lo_f : 0, hi = hi_f < (float) n_in ? (int64_t) hi_f : n_in;
        float sum = 0.0f;
        t->n = 0;
        for (int64_t k = lo; k < hi; k++) {
            const float w = 1.0f - fabsf(((float) k - x + off) * inv_support);
            if (w <= 0.0f) continue;
            t->idx[t->n] = k; t->w[t->n++] = w;
            sum += w;
        }
        for (int64_t k = 0; k < t->n; k++) t->w[k] /= sum;
    }
}

static float load(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return *(const float *) ggmlr_elem_ptr(t, i0, i1, i2, i3);
}

static size_t upscale_work_size(const struct ggml_tensor * dst) { return taps_bytes(dst->src[0]); }

static void upscale_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct scale_axes s = scale_axes(a, dst, ggmlr_i32_param_decode(dst));
    struct taps tx, ty;
    taps_init(&tx, &ty, a, p->wdata);
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const int64_t j2 = nearest(i2, s.sf[2], a->ne[2]), j3 = nearest(i3, s.sf[3], a->ne[3]);
        axis_taps(&s, 1, i1, a->ne[1], &ty);
        float * out = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            axis_taps(&s, 0, i0, a->ne[0], &tx);
            double v = 0.0;
            for (int64_t ky = 0; ky < ty.n; ky++) {
                double row = 0.0;
                for (int64_t kx = 0; kx < tx.n; kx++) row += (double) tx.w[kx] * load(a, tx.idx[kx], ty.idx[ky], j2, j3);
                v += ty.w[ky] * row;
            }
            out[i0] = (float) v;
        }
    }
}

static void add_at(struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) {
    *(float *) ggmlr_elem_ptr(t, i0, i1, i2, i3) += v;
}

static size_t upscale_back_work_size(const struct ggml_tensor * dst) { return taps_bytes(dst); }

/* dst shaped like the forward's input, src[0] = dy shaped like its output: the transpose, each dy
 * scattered with the forward's weights */
static void upscale_backward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * dy = dst->src[0];
    const struct scale_axes s = scale_axes(dst, dy, ggmlr_i32_param_decode(dst));
    struct taps tx, ty;
    taps_init(&tx, &ty, dst, p->wdata);
    int64_t q0, q1;
    ggmlr_split(dst->ne[2] * dst->ne[3], p->ith, p->nth, &q0, &q1);
    for (int64_t q = q0; q < q1; q++)
        for (int64_t y = 0; y < dst->ne[1]; y++) memset(ggmlr_elem_ptr(dst, 0, y, q % dst->ne[2], q / dst->ne[2]), 0, (size_t) dst->ne[0] * sizeof(float));
    for (int64_t i3 = 0; i3 < dy->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dy->ne[2]; i2++) {
            const int64_t j2 = nearest(i2, s.sf[2], dst->ne[2]), j3 = nearest(i3, s.sf[3], dst->ne[3]), q = j3 * dst->ne[2] + j2;
            if (q < q0 || q >= q1) continue;
            for (int64_t i1 = 0; i1 < dy->ne[1]; i1++) {
                axis_taps(&s, 1, i1, dst->ne[1], &ty);
                for (int64_t i0 = 0; i0 < dy->ne[0]; i0++) {
                    axis_taps(&s, 0, i0, dst->ne[0], &tx);
                    const float d = load(dy, i0, i1, i2, i3);
                    for (int64_t ky = 0; ky < ty.n; ky++)
                        for (int64_t kx = 0; kx < tx.n; kx++) add_at(dst, tx.idx[kx], ty.idx[ky], j2, j3, d * tx.w[kx] * ty.w[ky]);
                }
            }
        }
}

GGMLR_KERNEL(concat, concat_forward, NULL, NULL);
GGMLR_KERNEL(pad, pad_forward, NULL, NULL);  /* PAD, PAD_REFLECT_1D */
GGMLR_KERNEL(pad_back, pad_backward, NULL, NULL);
GGMLR_KERNEL(upscale, upscale_forward, upscale_work_size, NULL);
GGMLR_KERNEL(upscale_back, upscale_backward, upscale_back_work_size, NULL);

/* shape.c -- CONCAT, PAD, PAD_REFLECT_1D, PAD_BACK, UPSCALE and
 * UPSCALE_BACK (constructors and the maths: ops/shape.c). Every tensor is
 * read through its strides.
 *
 * UPSCALE follows upstream's arithmetic, in float: per dim the scale factor
 * sf = ne / ne_in ((ne - 1) / (ne_in - 1) on dims 0, 1 with ALIGN_CORNERS,
 * whose pixel offset is 0 instead of 0.5); NEAREST reads floor(i / sf);
 * BILINEAR on dims 0, 1 mixes the neighbours x0 = floor(x), x0 + 1 of
 * x = (i + offset) / sf - offset, both clamped to the edge, with weight
 * dx = x - x0 in [0, 1]. UPSCALE_BACK scatters dy with the same weights;
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

/* ---- UPSCALE ---- */

struct scale_axes {
    float sf[4], offset;
    bool bilinear;
};

static struct scale_axes scale_axes(const struct ggml_tensor * in, const struct ggml_tensor * out, int32_t mode) {
    struct scale_axes s;
    for (int d = 0; d < 4; d++) s.sf[d] = (float) out->ne[d] / (float) in->ne[d];
    s.offset = 0.5f;
    s.bilinear = (mode & 0xFF) == GGML_SCALE_MODE_BILINEAR;
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

/* Output i along an in-plane dim reads (1 - w) src[lo] + w src[hi]. */
struct tap { int64_t lo, hi; float w; };

static struct tap tap_of(const struct scale_axes * s, int d, int64_t i, int64_t n_in) {
    if (!s->bilinear) {
        const int64_t j = nearest(i, s->sf[d], n_in);
        return (struct tap) {j, j, 0.0f};
    }
    const float x = ((float) i + s->offset) / s->sf[d] - s->offset;
    int64_t lo = (int64_t) floorf(x), hi = lo + 1;
    lo = lo < 0 ? 0 : lo > n_in - 1 ? n_in - 1 : lo;
    hi = hi < 0 ? 0 : hi > n_in - 1 ? n_in - 1 : hi;
    const float w = x - (float) lo;
    return (struct tap) {lo, hi, w < 0.0f ? 0.0f : w > 1.0f ? 1.0f : w};
}

static float load(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return *(const float *) ggmlr_elem_ptr(t, i0, i1, i2, i3);
}

static void upscale_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct scale_axes s = scale_axes(a, dst, ggmlr_i32_param_decode(dst));
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const int64_t j2 = nearest(i2, s.sf[2], a->ne[2]), j3 = nearest(i3, s.sf[3], a->ne[3]);
        const struct tap ty = tap_of(&s, 1, i1, a->ne[1]);
        float * out = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const struct tap tx = tap_of(&s, 0, i0, a->ne[0]);
            if (!s.bilinear) { out[i0] = load(a, tx.lo, ty.lo, j2, j3); continue; }
            const float v00 = load(a, tx.lo, ty.lo, j2, j3), v10 = load(a, tx.hi, ty.lo, j2, j3);
            const float v01 = load(a, tx.lo, ty.hi, j2, j3), v11 = load(a, tx.hi, ty.hi, j2, j3);
            out[i0] = v00 * (1 - tx.w) * (1 - ty.w) + v10 * tx.w * (1 - ty.w) + v01 * (1 - tx.w) * ty.w + v11 * tx.w * ty.w;
        }
    }
}

static void add_at(struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) {
    *(float *) ggmlr_elem_ptr(t, i0, i1, i2, i3) += v;
}

/* dst shaped like the forward's input, src[0] = dy shaped like its output */
static void upscale_backward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * dy = dst->src[0];
    const struct scale_axes s = scale_axes(dst, dy, ggmlr_i32_param_decode(dst));
    int64_t q0, q1;
    ggmlr_split(dst->ne[2] * dst->ne[3], p->ith, p->nth, &q0, &q1);
    for (int64_t q = q0; q < q1; q++)
        for (int64_t y = 0; y < dst->ne[1]; y++) memset(ggmlr_elem_ptr(dst, 0, y, q % dst->ne[2], q / dst->ne[2]), 0, (size_t) dst->ne[0] * sizeof(float));
    for (int64_t i3 = 0; i3 < dy->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < dy->ne[2]; i2++) {
            const int64_t j2 = nearest(i2, s.sf[2], dst->ne[2]), j3 = nearest(i3, s.sf[3], dst->ne[3]), q = j3 * dst->ne[2] + j2;
            if (q < q0 || q >= q1) continue;
            for (int64_t i1 = 0; i1 < dy->ne[1]; i1++) {
                const struct tap ty = tap_of(&s, 1, i1, dst->ne[1]);
                for (int64_t i0 = 0; i0 < dy->ne[0]; i0++) {
                    const struct tap tx = tap_of(&s, 0, i0, dst->ne[0]);
                    const float d = load(dy, i0, i1, i2, i3);
                    if (!s.bilinear) { add_at(dst, tx.lo, ty.lo, j2, j3, d); continue; }
                    add_at(dst, tx.lo, ty.lo, j2, j3, d * (1 - tx.w) * (1 - ty.w));
                    add_at(dst, tx.hi, ty.lo, j2, j3, d * tx.w * (1 - ty.w));
                    add_at(dst, tx.lo, ty.hi, j2, j3, d * (1 - tx.w) * ty.w);
                    add_at(dst, tx.hi, ty.hi, j2, j3, d * tx.w * ty.w);
                }
            }
        }
}

GGMLR_KERNEL(concat, concat_forward, NULL, NULL);
GGMLR_KERNEL(pad, pad_forward, NULL, NULL);  /* PAD, PAD_REFLECT_1D */
GGMLR_KERNEL(pad_back, pad_backward, NULL, NULL);
GGMLR_KERNEL(upscale, upscale_forward, NULL, NULL);
GGMLR_KERNEL(upscale_back, upscale_backward, NULL, NULL);

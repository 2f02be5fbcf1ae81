/* conv.c -- IM2COL, IM2COL_BACK, CONV_TRANSPOSE_1D and _2D (constructors and
 * the maths: ops/conv.c).
 *
 * The image is [IW, IH, IC, N] (1-D: [IW, IC, N], IH = KH = OH = 1), the
 * patches [IC*KH*KW, OW, OH, N] (1-D: [IC*K, OW, N]); patch element
 * (ic, kh, kw) of output position (ow, oh) reads image element
 * (ow s0 + kw d0 - p0, oh s1 + kh d1 - p1), zero outside. IM2COL writes one
 * patch row per output position; IM2COL_BACK gathers, for each image element,
 * the patch entries that read it (those with iw + p0 - kw d0 a multiple of s0,
 * the quotient an output position), so each thread owns whole image rows and
 * the sums run in a fixed order. The transposed convolutions gather the
 * same way. Every tensor is read through its strides. IM2COL's image and
 * result, and the transposed convolutions' kernel, may be F16 (read as F32;
 * an F16 patch row is rounded once, from F32). */
#include "cpu/kernels/kernels.h"

#include <string.h>

/* The axes of one convolution, from the image and kernel tensors. */
struct conv_geom {
    int64_t iw, ih, ic, kw, kh, ow, oh;
    size_t  nbw, nbh, nbc, nbn;  /* the image's strides along iw, ih, ic, n (nbh 0 in 1-D) */
};

static struct conv_geom conv_geom(const struct ggml_tensor * img, const struct ggml_tensor * kern, const struct ggml_tensor * col, bool is_2d) {
    struct conv_geom g;
    g.iw = img->ne[0]; g.kw = kern->ne[0]; g.ow = col->ne[1];
    g.nbw = img->nb[0];
    if (is_2d) { g.ih = img->ne[1]; g.ic = img->ne[2]; g.kh = kern->ne[1]; g.oh = col->ne[2]; g.nbh = img->nb[1]; g.nbc = img->nb[2]; g.nbn = img->nb[3]; }
    else       { g.ih = 1;          g.ic = img->ne[1]; g.kh = 1;            g.oh = 1;          g.nbh = 0;          g.nbc = img->nb[1]; g.nbn = img->nb[2]; }
    return g;
}

/* an F32 or F16 element */
static inline float load(enum ggml_type type, const char * ptr) {
    return type == GGML_TYPE_F32 ? *(const float *) ptr : ggml_fp16_to_fp32(*(const ggml_fp16_t *) ptr);
}

/* A large F32 result (ggmlr_result_streams: the patches are KH*KW times the
 * image) is written with non-temporal stores (copy_stream): each row is built
 * in the scratch (in cache) a piece of channels at a time, each piece
 * streamed out. */
/* A streamed piece holds about this many patch entries (8 KiB: it stays in
 * L1 beside the image lines it reads; a whole row of IC*KH*KW reaches 256 KiB
 * in upstream's perf cases, and as the scratch it pushed those lines out of L2). */
#define IM2COL_PIECE_FLOATS 2048

/* KH*KW, the patch entries of one channel */
static int64_t im2col_area(const struct ggml_tensor * dst) {
    return dst->src[0]->ne[0] * (ggmlr_im2col_params_decode(dst).is_2d ? dst->src[0]->ne[1] : 1);
}

/* Channels per streamed piece: about IM2COL_PIECE_FLOATS entries, in a
 * multiple of 16 / gcd(area, 16) channels, so that the pieces of a row that
 * starts on a 64-byte line end on lines too (no line half plain, half streamed). */
static int64_t im2col_piece_channels(int64_t area) {
    if (area < 1) return 1;  /* an empty kernel: rows of no entries */
    int64_t whole = 16;
    for (int64_t a = area; whole > 1 && a % 2 == 0; a /= 2) whole /= 2;
    const int64_t cb = IM2COL_PIECE_FLOATS / area / whole * whole;
    return cb > 0 ? cb : 1;
}

/* An F16 result's row is built in F32 in the scratch a piece at a time, each
 * piece narrowed; a streamed one the same way, each piece copied out. */
static size_t im2col_work_size(const struct ggml_tensor * dst) {
    if (dst->type == GGML_TYPE_F32 && !ggmlr_result_streams(dst)) return 0;
    const int64_t piece = im2col_piece_channels(im2col_area(dst)) * im2col_area(dst);
    return (size_t) (piece < dst->ne[0] ? piece : dst->ne[0]) * sizeof(float);
}

/* The first tap k (0..n) of a row of n taps x0 + k d with x0 + k d >= lo. */
static int64_t first_tap_from(int64_t x0, int64_t d, int64_t n, int64_t lo) {
    if (x0 >= lo) return 0;
    const int64_t k = (lo - x0 + d - 1) / d;
    return k < n ? k : n;
}

/* Image row y = oh s1 + kh d1 - p1 (2-D; 1-D: row 0) of channel c, from the
 * batch's start img: NULL where y is outside the image (its entries are 0). */
static inline const char * im2col_image_row(const char * img, const struct conv_geom * g, const struct ggmlr_im2col_params * cp,
                                            int64_t oh, int64_t c, int64_t kh) {
    const int64_t y = cp->is_2d ? oh * cp->s1 + kh * cp->d1 - cp->p1 : 0;
    return y < 0 || y >= g->ih ? NULL : img + (size_t) y * g->nbh + (size_t) c * g->nbc;
}

/* Channels [c0, c1) of a patch row all of whose taps read inside the image
 * rows (packed F32, d0 = 1): entry (c, kh) is the K floats at `at` (the image at x0, its batch
 * n) in image row y = oh s1 + kh d1 - p1, or K zeros where y is outside. The
 * callers give K as a constant for the usual kernel widths, so each copy
 * compiles to a few moves instead of a loop. */
static inline __attribute__((always_inline)) void im2col_row_inside(const char * at, const struct conv_geom * g,
                                                                    const struct ggmlr_im2col_params * cp, int64_t oh,
                                                                    int64_t c0, int64_t c1, int64_t K, float * out) {
    for (int64_t c = c0; c < c1; c++)
        for (int64_t kh = 0; kh < g->kh; kh++, out += K) {
            const char * row = im2col_image_row(at, g, cp, oh, c, kh);
            if (!row) memset(out, 0, (size_t) K * sizeof(float));
            else memcpy(out, row, (size_t) K * sizeof(float));
        }
}

/* Channels [c0, c1) of the patch row of output position (ow, oh, n) into
 * out ((c1 - c0)*KH*KW floats).
 * The taps kw in [kw_lo, kw_hi) read inside the image row, the others are 0,
 * the same for every (c, kh): found once, so the copy loop has no bounds test. */
static void im2col_row(const struct ggml_tensor * b, const struct conv_geom * g, const struct ggmlr_im2col_params * cp,
                       int64_t ow, int64_t oh, int64_t n, int64_t c0, int64_t c1, float * out) {
    const int64_t x0 = ow * cp->s0 - cp->p0;
    const int64_t kw_lo = first_tap_from(x0, cp->d0, g->kw, 0);
    const int64_t kw_hi = first_tap_from(x0, cp->d0, g->kw, g->iw);  /* >= kw_lo: iw >= 0 */
    const bool packed = b->type == GGML_TYPE_F32 && g->nbw == sizeof(float) && cp->d0 == 1;
    const char * img = (const char *) b->data + (size_t) n * g->nbn;
    if (packed && kw_lo == 0 && kw_hi == g->kw) {  /* x0 >= 0 */
        const char * at = img + (size_t) x0 * sizeof(float);
        switch (g->kw) {
            case 1:  im2col_row_inside(at, g, cp, oh, c0, c1, 1, out); return;
            case 3:  im2col_row_inside(at, g, cp, oh, c0, c1, 3, out); return;
            case 5:  im2col_row_inside(at, g, cp, oh, c0, c1, 5, out); return;
            case 7:  im2col_row_inside(at, g, cp, oh, c0, c1, 7, out); return;
            default: im2col_row_inside(at, g, cp, oh, c0, c1, g->kw, out); return;
        }
    }
    for (int64_t c = c0; c < c1; c++)
        for (int64_t kh = 0; kh < g->kh; kh++, out += g->kw) {
            const char * row = im2col_image_row(img, g, cp, oh, c, kh);
            if (!row) { memset(out, 0, (size_t) g->kw * sizeof(float)); continue; }
            for (int64_t kw = 0; kw < kw_lo; kw++) out[kw] = 0.0f;
            if (packed) {
                for (int64_t kw = kw_lo; kw < kw_hi; kw++) out[kw] = ((const float *) row)[x0 + kw];
            } else {
                for (int64_t kw = kw_lo; kw < kw_hi; kw++) out[kw] = load(b->type, row + (size_t) (x0 + kw * cp->d0) * g->nbw);
            }
            for (int64_t kw = kw_hi; kw < g->kw; kw++) out[kw] = 0.0f;
        }
}

/* dst row (i1, i2, i3) = output position ow = i1, (oh, n) = (i2, i3) in 2-D,
 * (0, i2) in 1-D; each thread a contiguous range of rows */
static void im2col_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_im2col_params cp = ggmlr_im2col_params_decode(dst);
    const struct ggml_tensor * b = dst->src[1];
    const struct conv_geom g = conv_geom(b, dst->src[0], dst, cp.is_2d);
    const bool f32 = dst->type == GGML_TYPE_F32, stream = ggmlr_result_streams(dst);
    const int64_t area = im2col_area(dst), piece = im2col_piece_channels(area);
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        float * const row = ggmlr_elem_ptr(dst, 0, i1, i2, i3);  /* F16 elements where !f32 */
        const int64_t oh = cp.is_2d ? i2 : 0, n = cp.is_2d ? i3 : i2;
        if (f32 && !stream) { im2col_row(b, &g, &cp, i1, oh, n, 0, g.ic, row); continue; }
        for (int64_t c0 = 0; c0 < g.ic; c0 += piece) {
            const int64_t c1 = c0 + piece < g.ic ? c0 + piece : g.ic;
            im2col_row(b, &g, &cp, i1, oh, n, c0, c1, p->wdata);
            if (stream) ggmlr_vec()->copy_stream((c1 - c0) * area, p->wdata, row + c0 * area);
            else ggml_fp32_to_fp16_row(p->wdata, (ggml_fp16_t *) row + c0 * area, (c1 - c0) * area);
        }
    }
    if (stream) ggmlr_vec()->stream_fence();
}

/* The output position o reading input position i at kernel tap k, or -1. */
static int64_t tap_source(int64_t i, int64_t k, int32_t s, int32_t pad, int32_t d, int64_t n_out) {
    const int64_t t = i + pad - k * d;
    if (t < 0 || t % s != 0 || t / s >= n_out) return -1;
    return t / s;
}

/* dst row (i1, i2, i3) = image row (ih, ic, n) = (i1, i2, i3) in 2-D, (0, i1, i2) in 1-D */
static void im2col_backward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_im2col_params cp = ggmlr_im2col_params_decode(dst);
    const struct ggml_tensor * col = dst->src[0];
    const struct conv_geom g = conv_geom(dst, dst->src[1], col, cp.is_2d);
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const int64_t y = cp.is_2d ? i1 : 0, c = cp.is_2d ? i2 : i1, n = cp.is_2d ? i3 : i2;
        float * out = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        for (int64_t x = 0; x < g.iw; x++) {
            float sum = 0.0f;
            for (int64_t kh = 0; kh < g.kh; kh++) {
                const int64_t oh = cp.is_2d ? tap_source(y, kh, cp.s1, cp.p1, cp.d1, g.oh) : 0;
                if (oh < 0) continue;
                for (int64_t kw = 0; kw < g.kw; kw++) {
                    const int64_t ow = tap_source(x, kw, cp.s0, cp.p0, cp.d0, g.ow);
                    if (ow < 0) continue;
                    const int64_t e = (c * g.kh + kh) * g.kw + kw;
                    sum += *(const float *) (cp.is_2d ? ggmlr_elem_ptr(col, e, ow, oh, n) : ggmlr_elem_ptr(col, e, ow, n, 0));
                }
            }
            out[x] = sum;
        }
    }
}

/* CONV_TRANSPOSE_1D / _2D: y[x, y', oc, n] = sum over the taps (kw, kh) with
 * x - kw = s lx and y' - kh = s ly inside b, and over ic, of
 * a[kw, kh, oc, ic] b[lx, ly, ic, n] (1-D: KH = IH = 1, a [K, OC, IC], b [IL, IC]).
 * One dst row (y', oc, n) per step: a gather, in a fixed order. */
static void conv_transpose_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const int32_t s = ggmlr_conv_transpose_params_decode(dst).s0;
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const bool d2 = dst->op == GGML_OP_CONV_TRANSPOSE_2D;
    const int64_t kw_n = a->ne[0], kh_n = d2 ? a->ne[1] : 1, ic_n = d2 ? a->ne[3] : a->ne[2];
    const int64_t iw = b->ne[0], ih = d2 ? b->ne[1] : 1;
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const int64_t y = d2 ? i1 : 0, oc = d2 ? i2 : i1, n = i3;
        float * out = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        for (int64_t x = 0; x < dst->ne[0]; x++) {
            float sum = 0.0f;
            for (int64_t kh = 0; kh < kh_n; kh++) {
                const int64_t ly = tap_source(y, kh, s, 0, 1, ih);
                if (ly < 0) continue;
                for (int64_t kw = 0; kw < kw_n; kw++) {
                    const int64_t lx = tap_source(x, kw, s, 0, 1, iw);
                    if (lx < 0) continue;
                    for (int64_t ic = 0; ic < ic_n; ic++) {
                        const float av = load(a->type, d2 ? ggmlr_elem_ptr(a, kw, kh, oc, ic) : ggmlr_elem_ptr(a, kw, oc, ic, 0));
                        const float bv = *(const float *) (d2 ? ggmlr_elem_ptr(b, lx, ly, ic, n) : ggmlr_elem_ptr(b, lx, ic, 0, 0));
                        sum += av * bv;
                    }
                }
            }
            out[x] = sum;
        }
    }
}

GGMLR_KERNEL(conv_transpose, conv_transpose_forward, NULL, NULL);
GGMLR_KERNEL(im2col, im2col_forward, im2col_work_size, NULL);
GGMLR_KERNEL(im2col_back, im2col_backward, NULL, NULL);

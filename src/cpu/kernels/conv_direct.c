/* conv_direct.c -- the direct convolutions CONV_2D, CONV_3D, CONV_2D_DW, their
 * gradient op CONV_DIRECT_BACK, IM2COL_3D and COL2IM_1D (constructors and
 * the maths: ops/conv.c), and IM2COL_3D_BACK.
 *
 * Every tensor is seen with five axes through its strides: the data and the
 * output (w, h, d, channel, n), the kernel (w, h, d, icg, oc); a 2-D op has a
 * depth of 1, CONV_3D's channel and batch share ne3 (index n C + c). The
 * work is split by rows of the tensor written (one (h, d, channel, n) or
 * (h, d, icg, oc) each), built in an F32 scratch row in a fixed order, so the
 * result does not depend on the thread count. The inner loops run along w:
 * an axpy of one kernel tap over a row (forward, data gradient) or a dot
 * product of two rows (kernel gradient), unit-stride when s0 is 1 and the
 * rows are packed. */
#include "cpu/kernels/conv_gemm.h"
#include "cpu/kernels/kernels.h"

#include <string.h>

/* a tensor's five axes' strides in bytes; inner: the channels per n (data,
 * output) or icg per oc (kernel), for CONV_3D's shared ne3 */
struct view5 { const char * data; enum ggml_type type; size_t nb[5]; };

static struct view5 view5(const struct ggml_tensor * t, bool is_2d, int64_t inner) {
    struct view5 v = {t->data, t->type, {t->nb[0], t->nb[1], 0, t->nb[2], t->nb[3]}};
    if (!is_2d) { v.nb[2] = t->nb[2]; v.nb[3] = t->nb[3]; v.nb[4] = t->nb[3] * (size_t) inner; }
    return v;
}

static inline const char * at5(const struct view5 * v, int64_t i0, int64_t i1, int64_t i2, int64_t i3, int64_t i4) {
    return v->data + (size_t) i0 * v->nb[0] + (size_t) i1 * v->nb[1] + (size_t) i2 * v->nb[2] + (size_t) i3 * v->nb[3] + (size_t) i4 * v->nb[4];
}

static inline float load(enum ggml_type type, const char * ptr) {
    return type == GGML_TYPE_F32 ? *(const float *) ptr : ggml_fp16_to_fp32(*(const ggml_fp16_t *) ptr);
}

/* The output positions o in [0, n_out) whose tap reads input o s + off inside [0, n_in): [*lo, *hi). */
static void tap_range(int64_t n_in, int64_t n_out, int64_t off, int64_t s, int64_t * lo, int64_t * hi) {
    const int64_t last = n_in - 1 - off;
    *lo = off >= 0 ? 0 : (-off + s - 1) / s;
    *hi = last < 0 ? 0 : last / s + 1;
    if (*hi > n_out) *hi = n_out;
    if (*lo > *hi) *lo = *hi;
}

/* The output position o with o s + k d - p = i, or -1. */
static int64_t tap_source(int64_t i, int64_t k, int32_t s, int32_t p, int32_t d, int64_t n_out) {
    const int64_t t = i + p - k * d;
    if (t < 0 || t % s != 0 || t / s >= n_out) return -1;
    return t / s;
}

/* y[i ys] += w x[i] for i < n, x's elements xs bytes apart (F32) */
static void axpy(float * y, int64_t ys, float w, const char * x, size_t xs, int64_t n) {
    if (ys == 1 && xs == sizeof(float)) {
        const float * xf = (const float *) x;
        for (int64_t i = 0; i < n; i++) y[i] += w * xf[i];
    } else {
        for (int64_t i = 0; i < n; i++) y[i * ys] += w * *(const float *) (x + (size_t) i * xs);
    }
}

/* sum_i x[i] y[i] for i < n, F32 elements xs and ys bytes apart */
static float dot(const char * x, size_t xs, const char * y, size_t ys, int64_t n) {
    float sum = 0.0f;
    if (xs == sizeof(float) && ys == sizeof(float)) {
        const float * xf = (const float *) x, * yf = (const float *) y;
        for (int64_t i = 0; i < n; i++) sum += xf[i] * yf[i];
    } else {
        for (int64_t i = 0; i < n; i++) sum += *(const float *) (x + (size_t) i * xs) * *(const float *) (y + (size_t) i * ys);
    }
    return sum;
}

/* One direct convolution's axes and tensors, for its forward node or a CONV_DIRECT_BACK. */
struct conv_job {
    struct ggmlr_conv_direct_params p;
    struct ggmlr_conv_dims d;
    int64_t ow, oh, od, ocg;   /* output sizes, output channels per group */
    struct view5 kern, data, out;
    const int64_t * xlo, * xhi;  /* per kx, the outputs [xlo, xhi) whose tap lies inside the data row (tap_range) */
};

static struct conv_job conv_job(const struct ggml_tensor * kern, const struct ggml_tensor * data, const struct ggml_tensor * out,
                                const struct ggmlr_conv_direct_params * p) {
    struct conv_job j;
    j.p = *p;
    const enum ggml_op op = (enum ggml_op) p->fwd_op;
    const bool d2 = ggmlr_conv_direct_is_2d(op);
    j.d = ggmlr_conv_direct_dims(op, kern->ne, data->ne, p);
    j.ow = out->ne[0]; j.oh = out->ne[1]; j.od = d2 ? 1 : out->ne[2];
    j.ocg = j.d.groups > 0 ? j.d.oc / j.d.groups : 0;  /* 0 groups: a depthwise convolution of 0 channels, nothing to write */
    j.kern = view5(kern, d2, j.d.icg);
    j.data = view5(data, d2, j.d.ic);
    j.out = view5(out, d2, j.d.oc);
    return j;
}

/* The scratch of a thread: the x ranges of every kx (worked out once, not per
 * row: two divisions each), then the F32 row. Returns the row. */
static float * conv_scratch(struct conv_job * j, void * wdata) {
    int64_t * lo = wdata, * hi = lo + j->d.kw;
    for (int64_t kx = 0; kx < j->d.kw; kx++) tap_range(j->d.iw, j->ow, kx * j->p.d0 - j->p.p0, j->p.s0, &lo[kx], &hi[kx]);
    j->xlo = lo;
    j->xhi = hi;
    return (float *) (hi + j->d.kw);
}

/* r = ((i4 N3 + i3) N2 + i2) N1 + i1 */
static void split4(int64_t r, int64_t n1, int64_t n2, int64_t n3, int64_t * i1, int64_t * i2, int64_t * i3, int64_t * i4) {
    *i1 = r % n1; r /= n1;
    *i2 = r % n2; r /= n2;
    *i3 = r % n3; *i4 = r / n3;
}

static void store_row(const struct view5 * v, char * row, const float * acc, int64_t n) {
    for (int64_t i = 0; i < n; i++) *(float *) (row + (size_t) i * v->nb[0]) = acc[i];
}

/* output row (oy, oz, oc, n): acc[ox] += a[kx, ky, kz, icg, oc] b[ox s0 + kx d0 - p0, iy, iz, c, n] */
static void conv_forward_row(const struct conv_job * j, float * acc, int64_t oy, int64_t oz, int64_t oc, int64_t n) {
    const struct ggmlr_conv_direct_params * p = &j->p;
    memset(acc, 0, (size_t) j->ow * sizeof(float));
    const int64_t c0 = oc / j->ocg * j->d.icg;
    for (int64_t icg = 0; icg < j->d.icg; icg++)
        for (int64_t kz = 0; kz < j->d.kd; kz++) {
            const int64_t iz = oz * p->s2 + kz * p->d2 - p->p2;
            if (iz < 0 || iz >= j->d.id) continue;
            for (int64_t ky = 0; ky < j->d.kh; ky++) {
                const int64_t iy = oy * p->s1 + ky * p->d1 - p->p1;
                if (iy < 0 || iy >= j->d.ih) continue;
                const char * in = at5(&j->data, 0, iy, iz, c0 + icg, n);
                for (int64_t kx = 0; kx < j->d.kw; kx++) {
                    const int64_t lo = j->xlo[kx], hi = j->xhi[kx], off = kx * p->d0 - p->p0;
                    if (hi <= lo) continue;  /* no pointer formed outside the row */
                    const float w = load(j->kern.type, at5(&j->kern, kx, ky, kz, icg, oc));
                    axpy(acc + lo, 1, w, in + (size_t) (lo * p->s0 + off) * j->data.nb[0], (size_t) p->s0 * j->data.nb[0], hi - lo);
                }
            }
        }
}

/* data-gradient row (iy, iz, c, n): acc[ox s0 + kx d0 - p0] += a[kx, ky, kz, icg, oc] g[ox, oy, oz, oc, n]
 * over the oc of c's group and the taps (ky, kz) whose (oy, oz) exist */
static void conv_data_grad_row(const struct conv_job * j, float * acc, int64_t iy, int64_t iz, int64_t c, int64_t n) {
    const struct ggmlr_conv_direct_params * p = &j->p;
    memset(acc, 0, (size_t) j->d.iw * sizeof(float));
    const int64_t icg = c % j->d.icg, oc0 = c / j->d.icg * j->ocg;
    for (int64_t oc = oc0; oc < oc0 + j->ocg; oc++)
        for (int64_t kz = 0; kz < j->d.kd; kz++) {
            const int64_t oz = tap_source(iz, kz, p->s2, p->p2, p->d2, j->od);
            if (oz < 0) continue;
            for (int64_t ky = 0; ky < j->d.kh; ky++) {
                const int64_t oy = tap_source(iy, ky, p->s1, p->p1, p->d1, j->oh);
                if (oy < 0) continue;
                const char * g = at5(&j->out, 0, oy, oz, oc, n);
                for (int64_t kx = 0; kx < j->d.kw; kx++) {
                    const int64_t lo = j->xlo[kx], hi = j->xhi[kx], off = kx * p->d0 - p->p0;
                    if (hi <= lo) continue;  /* no pointer formed outside the row */
                    const float w = load(j->kern.type, at5(&j->kern, kx, ky, kz, icg, oc));
                    axpy(acc + lo * p->s0 + off, p->s0, w, g + (size_t) lo * j->out.nb[0], j->out.nb[0], hi - lo);
                }
            }
        }
}

/* kernel-gradient row (ky, kz, icg, oc): acc[kx] = sum_(n, oz, oy, ox) b[ox s0 + kx d0 - p0, iy, iz, c, n] g[ox, oy, oz, oc, n] */
static void conv_kernel_grad_row(const struct conv_job * j, float * acc, int64_t ky, int64_t kz, int64_t icg, int64_t oc) {
    const struct ggmlr_conv_direct_params * p = &j->p;
    memset(acc, 0, (size_t) j->d.kw * sizeof(float));
    const int64_t c = oc / j->ocg * j->d.icg + icg;
    for (int64_t n = 0; n < j->d.n; n++)
        for (int64_t oz = 0; oz < j->od; oz++) {
            const int64_t iz = oz * p->s2 + kz * p->d2 - p->p2;
            if (iz < 0 || iz >= j->d.id) continue;
            for (int64_t oy = 0; oy < j->oh; oy++) {
                const int64_t iy = oy * p->s1 + ky * p->d1 - p->p1;
                if (iy < 0 || iy >= j->d.ih) continue;
                const char * in = at5(&j->data, 0, iy, iz, c, n), * g = at5(&j->out, 0, oy, oz, oc, n);
                for (int64_t kx = 0; kx < j->d.kw; kx++) {
                    const int64_t lo = j->xlo[kx], hi = j->xhi[kx], off = kx * p->d0 - p->p0;
                    if (hi <= lo) continue;  /* no pointer formed outside the row */
                    acc[kx] += dot(g + (size_t) lo * j->out.nb[0], j->out.nb[0], in + (size_t) (lo * p->s0 + off) * j->data.nb[0],
                                   (size_t) p->s0 * j->data.nb[0], hi - lo);
                }
            }
        }
}

/* the scratch row: the written tensor's ne0 floats */
static size_t row_work_size(const struct ggml_tensor * dst) { return (size_t) dst->ne[0] * sizeof(float); }

/* conv_scratch's: 2 KW ranges and the row */
static size_t conv_work_size(const struct ggml_tensor * dst) {
    const bool back = dst->op == GGML_OP_CONV_DIRECT_BACK, wrt_kernel = back && ggmlr_conv_direct_params_decode(dst).wrt == 0;
    const int64_t kw = wrt_kernel ? dst->ne[0] : back ? dst->src[1]->ne[0] : dst->src[0]->ne[0];
    const size_t direct = 2 * (size_t) kw * sizeof(int64_t) + row_work_size(dst), gemm = ggmlr_conv_gemm_work_size(dst);
    return gemm > direct ? gemm : direct;
}

/* CONV_2D as a GEMM where it applies (conv_gemm.c), else the direct loops */
static void conv_direct_forward(const struct ggmlr_compute_params * prm, struct ggml_tensor * dst) {
    if (ggmlr_conv_gemm_work_size(dst) > 0) { ggmlr_conv_gemm_forward(prm, dst); return; }
    const struct ggmlr_conv_direct_params p = ggmlr_conv_direct_params_decode(dst);
    struct conv_job j = conv_job(dst->src[0], dst->src[1], dst, &p);
    float * acc = conv_scratch(&j, prm->wdata);
    int64_t r, end, oy, oz, oc, n;
    ggmlr_split(j.oh * j.od * j.d.oc * j.d.n, prm->ith, prm->nth, &r, &end);
    for (; r < end; r++) {
        split4(r, j.oh, j.od, j.d.oc, &oy, &oz, &oc, &n);
        conv_forward_row(&j, acc, oy, oz, oc, n);
        store_row(&j.out, (char *) at5(&j.out, 0, oy, oz, oc, n), acc, j.ow);
    }
}

/* src[0] the forward result's gradient, src[1] the forward's other source */
static void conv_direct_backward(const struct ggmlr_compute_params * prm, struct ggml_tensor * dst) {
    if (ggml_nelements(dst) == 0) return;  /* nothing to write; a divisor below may be 0 */
    const struct ggmlr_conv_direct_params p = ggmlr_conv_direct_params_decode(dst);
    const bool wrt_data = p.wrt == 1;
    struct conv_job j = wrt_data ? conv_job(dst->src[1], dst, dst->src[0], &p) : conv_job(dst, dst->src[1], dst->src[0], &p);
    float * acc = conv_scratch(&j, prm->wdata);
    const struct view5 * v = wrt_data ? &j.data : &j.kern;
    const int64_t n1 = wrt_data ? j.d.ih : j.d.kh, n2 = wrt_data ? j.d.id : j.d.kd, n3 = wrt_data ? j.d.ic : j.d.icg;
    int64_t r, end, i1, i2, i3, i4;
    ggmlr_split(ggml_nelements(dst) / dst->ne[0], prm->ith, prm->nth, &r, &end);
    for (; r < end; r++) {
        split4(r, n1, n2, n3, &i1, &i2, &i3, &i4);
        if (wrt_data) conv_data_grad_row(&j, acc, i1, i2, i3, i4);
        else          conv_kernel_grad_row(&j, acc, i1, i2, i3, i4);
        store_row(v, (char *) at5(v, 0, i1, i2, i3, i4), acc, dst->ne[0]);
    }
}

/* IM2COL_3D: dst row (ox, oy, oz + OD n) holds the patch (ic, kz, ky, kx) of
 * that output position; an F16 row is built in F32 in the scratch */
static size_t im2col_3d_work_size(const struct ggml_tensor * dst) { return dst->type == GGML_TYPE_F32 ? 0 : row_work_size(dst); }

static void im2col_3d_forward(const struct ggmlr_compute_params * prm, struct ggml_tensor * dst) {
    if (ggml_nelements(dst) == 0) return;  /* nothing to write; a divisor below may be 0 */
    const struct ggmlr_conv_direct_params p = ggmlr_conv_direct_params_decode(dst);
    const struct ggmlr_conv_dims d = ggmlr_conv_direct_dims(GGML_OP_CONV_3D, dst->src[0]->ne, dst->src[1]->ne, &p);
    const struct view5 b = view5(dst->src[1], false, d.ic);
    const int64_t od_n = dst->ne[3] / (dst->src[1]->ne[3] / d.ic);  /* OD: IM2COL_3D's parameters hold no N */
    struct ggmlr_rows rows = ggmlr_my_rows(prm, dst);
    int64_t r, ox, oy, i3;
    while (ggmlr_next_row(&rows, &r, &ox, &oy, &i3)) {
        const int64_t oz = i3 % od_n, n = i3 / od_n;
        float * const row0 = dst->type == GGML_TYPE_F32 ? ggmlr_elem_ptr(dst, 0, ox, oy, i3) : prm->wdata, * out = row0;
        for (int64_t ic = 0; ic < d.ic; ic++)
            for (int64_t kz = 0; kz < d.kd; kz++) {
                const int64_t iz = oz * p.s2 + kz * p.d2 - p.p2;
                for (int64_t ky = 0; ky < d.kh; ky++, out += d.kw) {
                    const int64_t iy = oy * p.s1 + ky * p.d1 - p.p1;
                    if (iz < 0 || iz >= d.id || iy < 0 || iy >= d.ih) { memset(out, 0, (size_t) d.kw * sizeof(float)); continue; }
                    const char * in = at5(&b, 0, iy, iz, ic, n);
                    for (int64_t kx = 0, ix = ox * p.s0 - p.p0; kx < d.kw; kx++, ix += p.d0)
                        out[kx] = ix >= 0 && ix < d.iw ? load(b.type, in + (size_t) ix * b.nb[0]) : 0.0f;
                }
            }
        if (row0 == prm->wdata) ggml_fp32_to_fp16_row(row0, ggmlr_elem_ptr(dst, 0, ox, oy, i3), dst->ne[0]);
    }
}

/* IM2COL_3D_BACK: dst row (iy, iz, n IC + ic) of the data gathers the patch
 * entries (ic, kz, ky, kx) of the output positions that read it: an add of
 * each tap's run of patches (along ox) onto every s0-th element */
static void im2col_3d_backward(const struct ggmlr_compute_params * prm, struct ggml_tensor * dst) {
    if (ggml_nelements(dst) == 0) return;  /* nothing to write; a divisor below may be 0 */
    const struct ggmlr_conv_direct_params p = ggmlr_conv_direct_params_decode(dst);
    const struct ggml_tensor * col = dst->src[0];
    const struct ggmlr_conv_dims d = ggmlr_conv_direct_dims(GGML_OP_CONV_3D, dst->src[1]->ne, dst->ne, &p);
    const int64_t n_n = dst->ne[3] / d.ic, od_n = n_n > 0 ? col->ne[3] / n_n : 0;
    float * acc = prm->wdata;
    struct ggmlr_rows rows = ggmlr_my_rows(prm, dst);
    int64_t r, iy, iz, i3;
    while (ggmlr_next_row(&rows, &r, &iy, &iz, &i3)) {
        const int64_t ic = i3 % d.ic, n = i3 / d.ic;
        memset(acc, 0, (size_t) d.iw * sizeof(float));
        for (int64_t kz = 0; kz < d.kd && n < n_n; kz++) {  /* channels past N*IC are not read: zero */
            const int64_t oz = tap_source(iz, kz, p.s2, p.p2, p.d2, od_n);
            if (oz < 0) continue;
            for (int64_t ky = 0; ky < d.kh; ky++) {
                const int64_t oy = tap_source(iy, ky, p.s1, p.p1, p.d1, col->ne[2]);
                if (oy < 0) continue;
                for (int64_t kx = 0; kx < d.kw; kx++) {
                    int64_t lo, hi;
                    const int64_t off = kx * p.d0 - p.p0, e = ((ic * d.kd + kz) * d.kh + ky) * d.kw + kx;
                    tap_range(d.iw, col->ne[1], off, p.s0, &lo, &hi);
                    if (hi <= lo) continue;
                    axpy(acc + lo * p.s0 + off, p.s0, 1.0f, (const char *) ggmlr_elem_ptr(col, e, lo, oy, oz + od_n * n), col->nb[1], hi - lo);
                }
            }
        }
        memcpy(ggmlr_elem_ptr(dst, 0, iy, iz, i3), acc, (size_t) d.iw * sizeof(float));
    }
}

/* an F32, F16 or BF16 element (COL2IM_1D's columns) */
static inline float load3(enum ggml_type type, const char * ptr) {
    if (type != GGML_TYPE_BF16) return load(type, ptr);
    ggml_bf16_t h;
    memcpy(&h, ptr, sizeof h);
    return ggml_bf16_to_fp32(h);
}

/* COL2IM_1D: dst row oc, y[t s0 + k - p0] += a[oc K + k, t], in t then k order,
 * summed in F32 and rounded once to the result's type (a's) */
static void col2im_1d_forward(const struct ggmlr_compute_params * prm, struct ggml_tensor * dst) {
    const struct ggmlr_col2im_params p = ggmlr_col2im_params_decode(dst);
    const struct ggml_tensor * a = dst->src[0];
    const int64_t k_n = a->ne[0] / p.oc, t_out = dst->ne[0];
    float * acc = prm->wdata;
    struct ggmlr_rows rows = ggmlr_my_rows(prm, dst);
    int64_t r, oc, i2, i3;
    while (ggmlr_next_row(&rows, &r, &oc, &i2, &i3)) {
        memset(acc, 0, (size_t) t_out * sizeof(float));
        for (int64_t t = 0; t < a->ne[1]; t++) {
            int64_t lo, hi;  /* the taps k with 0 <= t s0 + k - p0 < T_out */
            tap_range(t_out, k_n, t * p.s0 - p.p0, 1, &lo, &hi);
            const char * col = (const char *) a->data + (size_t) t * a->nb[1] + (size_t) (oc * k_n) * a->nb[0];
            for (int64_t k = lo; k < hi; k++) acc[t * p.s0 + k - p.p0] += load3(a->type, col + (size_t) k * a->nb[0]);
        }
        void * out = ggmlr_elem_ptr(dst, 0, oc, i2, i3);
        if (dst->type == GGML_TYPE_F32) memcpy(out, acc, (size_t) t_out * sizeof(float));
        else if (dst->type == GGML_TYPE_F16) ggml_fp32_to_fp16_row(acc, out, t_out);
        else ggml_fp32_to_bf16_row(acc, out, t_out);
    }
}

GGMLR_KERNEL(conv_direct, conv_direct_forward, conv_work_size, NULL);
GGMLR_KERNEL(conv_direct_back, conv_direct_backward, conv_work_size, NULL);
GGMLR_KERNEL(im2col_3d, im2col_3d_forward, im2col_3d_work_size, NULL);
GGMLR_KERNEL(im2col_3d_back, im2col_3d_backward, row_work_size, NULL);
GGMLR_KERNEL(col2im_1d, col2im_1d_forward, row_work_size, NULL);

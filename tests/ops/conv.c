/* conv.c -- rows of IM2COL, its adjoint IM2COL_BACK, the transposed
 * convolutions, the direct convolutions CONV_2D, CONV_2D_DW, CONV_3D and
 * their gradient op CONV_DIRECT_BACK (one reference: every product of the
 * definition, walked once), IM2COL_3D with IM2COL_3D_BACK, and COL2IM_1D. IM2COL reads the kernel tensor for its shape only, so the
 * builders make it themselves and the rows' inputs are the image (IM2COL)
 * or the patches' gradient (IM2COL_BACK). The
 * references follow the definition: im2col reads each patch entry from the
 * image, im2col_back scatters each patch entry back onto it (the kernel
 * gathers instead); the transposed convolutions scatter each input entry
 * through the kernel (the kernel gathers). The convolutions built on
 * im2col: test_conv. F16: im2col's image and patches, the transposed
 * convolutions' kernel (their gradients refused). */
#include "ops/harness.h"

#include <math.h>
#include <string.h>

struct im2col_case {
    int64_t kne[4];  /* the kernel's shape */
    int64_t ine[4];  /* the image's shape (IM2COL_BACK's result) */
    int s0, s1, p0, p1, d0, d1;
    bool is_2d;
};

static int64_t out_size(int64_t in, int64_t k, int s, int p, int d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

static struct ggml_tensor * b_im2col(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct im2col_case * c = p;
    struct ggml_tensor * k = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, c->kne);
    return ggml_im2col(ctx, k, in[0], c->s0, c->s1, c->p0, c->p1, c->d0, c->d1, c->is_2d, GGML_TYPE_F32);
}

/* a case with the patches' type: the case first, so the references read it as one */
struct im2col_typed { struct im2col_case c; enum ggml_type dst; };
static struct ggml_tensor * b_im2col_typed(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct im2col_typed * t = p;
    struct ggml_tensor * k = ggml_new_tensor(ctx, GGML_TYPE_F16, 4, t->c.kne);  /* upstream's F16 kernel (shape only) */
    return ggml_im2col(ctx, k, in[0], t->c.s0, t->c.s1, t->c.p0, t->c.p1, t->c.d0, t->c.d1, t->c.is_2d, t->dst);
}

static struct ggml_tensor * b_im2col_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct im2col_case * c = p;
    struct ggml_tensor * k = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, c->kne);
    int64_t ne[4] = {c->ine[0], c->ine[1], c->ine[2], c->ine[3]};
    return ggml_im2col_back(ctx, in[0], k, ne, c->s0, c->s1, c->p0, c->p1, c->d0, c->d1, c->is_2d);
}

/* Walks every patch entry (n, oh, ow, ic, kh, kw): copies the image entry it
 * reads into col_out (zero in the padding), or adds col_in's entry onto
 * img_out; returns the number of patch entries. */

static int64_t walk(const struct im2col_case * c, double * col_out, const double * col_in, double * img_out, const double * img_in) {
    const bool d2 = c->is_2d;
    const int64_t IW = c->ine[0], IH = d2 ? c->ine[1] : 1, IC = d2 ? c->ine[2] : c->ine[1], N = d2 ? c->ine[3] : c->ine[2];
    const int64_t KW = c->kne[0], KH = d2 ? c->kne[1] : 1;
    const int64_t OW = out_size(IW, KW, c->s0, c->p0, c->d0), OH = d2 ? out_size(IH, KH, c->s1, c->p1, c->d1) : 1;
    const int64_t K = IC * KH * KW;
    for (int64_t n = 0; n < N; n++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++)
                for (int64_t ic = 0; ic < IC; ic++)
                    for (int64_t kh = 0; kh < KH; kh++)
                        for (int64_t kw = 0; kw < KW; kw++) {
                            const int64_t x = ow * c->s0 + kw * c->d0 - c->p0, y = d2 ? oh * c->s1 + kh * c->d1 - c->p1 : 0;
                            const int64_t e = ((n * OH + oh) * OW + ow) * K + (ic * KH + kh) * KW + kw;
                            const bool inside = x >= 0 && x < IW && y >= 0 && y < IH;
                            const int64_t i = ((n * IC + ic) * IH + y) * IW + x;
                            if (col_out) col_out[e] = inside ? img_in[i] : 0.0;
                            if (img_out && inside) img_out[i] += col_in[e];
                        }
    return N * OH * OW * K;
}

static void r_im2col(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) ne;
    if (walk(p, out, NULL, NULL, in[0]) != no[0] * no[1] * no[2] * no[3])
        for (int64_t i = 0; i < no[0] * no[1] * no[2] * no[3]; i++) out[i] = NAN;  /* the node's shape is wrong */
}

static void r_im2col_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) ne;
    const struct im2col_case * c = p;
    const int64_t n = no[0] * no[1] * no[2] * no[3];
    for (int64_t i = 0; i < n; i++) out[i] = 0.0;
    walk(c, NULL, in[0], out, NULL);
    if (no[0] != c->ine[0] || no[1] != c->ine[1] || no[2] != c->ine[2] || no[3] != c->ine[3])
        for (int64_t i = 0; i < n; i++) out[i] = NAN;
}

/*                                  kernel          image          s0 s1 p0 p1 d0 d1 2-D */
static const struct im2col_case c2_basic = {{3, 3, 3, 4}, {7, 6, 3, 2}, 1, 1, 0, 0, 1, 1, true},
                                c2_odd = {{3, 2, 2, 1}, {9, 7, 2, 1}, 2, 3, 1, 2, 2, 1, true},
                                c2_pad = {{2, 3, 1, 2}, {5, 4, 1, 3}, 1, 2, 3, 1, 1, 2, true},
                                c2_1x1 = {{1, 1, 4, 1}, {5, 3, 4, 1}, 1, 1, 0, 0, 1, 1, true},
                                c2_sk = {{2, 2, 3, 1}, {8, 6, 3, 1}, 2, 2, 0, 0, 1, 1, true},
                                c1_basic = {{3, 2, 4, 1}, {10, 2, 1, 1}, 1, 0, 1, 0, 1, 0, false},
                                c1_odd = {{4, 3, 5, 1}, {11, 3, 2, 1}, 2, 0, 3, 0, 2, 0, false},
                                c1_full = {{5, 1, 1, 1}, {5, 1, 3, 1}, 3, 0, 2, 0, 1, 0, false},
                                /* kernel widths 5 and 7: the kernel's copies of a constant width (src/cpu/kernels/conv.c) */
                                c2_k5 = {{5, 3, 2, 1}, {9, 6, 2, 1}, 1, 1, 2, 1, 1, 1, true},
                                c1_k7 = {{7, 2, 3, 1}, {12, 2, 1, 1}, 1, 0, 2, 0, 1, 0, false};

static const struct im2col_typed t2_f16 = {.c = {{3, 2, 2, 1}, {9, 7, 2, 1}, 2, 3, 1, 2, 2, 1, true}, .dst = GGML_TYPE_F16},
                                 t1_f16 = {.c = {{4, 3, 5, 1}, {11, 3, 2, 1}, 2, 0, 3, 0, 2, 0, false}, .dst = GGML_TYPE_F16},
                                 t2_f32 = {.c = {{3, 3, 3, 4}, {7, 6, 3, 2}, 1, 1, 0, 0, 1, 1, true}, .dst = GGML_TYPE_F32},
                                 /* rows built in pieces of channels (src/cpu/kernels/conv.c, im2col_piece_channels):
                                    224 channels of a 3x3 kernel, then 6; one channel of a 2049-wide kernel */
                                 t2_pieces = {.c = {{3, 3, 230, 1}, {4, 3, 230, 1}, 1, 1, 0, 0, 1, 1, true}, .dst = GGML_TYPE_F16},
                                 t1_pieces = {.c = {{2049, 3, 1, 1}, {2050, 3, 1, 1}, 1, 0, 0, 0, 1, 0, false}, .dst = GGML_TYPE_F16};

/* ---- transposed convolutions: every input entry scattered through the kernel ---- */

struct ct_case { bool d2; int s; };

static struct ggml_tensor * b_conv_transpose(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct ct_case * c = p;
    return c->d2 ? ggml_conv_transpose_2d_p0(ctx, in[0], in[1], c->s) : ggml_conv_transpose_1d(ctx, in[0], in[1], c->s, 0, 1);
}

/* y[l s + k, oc] += a[k, oc, ic] b[l, ic], over 2 axes in 2-D (1-D: KH = IH = 1, N = 1) */
static void r_conv_transpose(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const struct ct_case * c = p;
    const int64_t KW = ne[0][0], KH = c->d2 ? ne[0][1] : 1, OC = c->d2 ? ne[0][2] : ne[0][1], IC = c->d2 ? ne[0][3] : ne[0][2];
    const int64_t IW = ne[1][0], IH = c->d2 ? ne[1][1] : 1, N = c->d2 ? ne[1][3] : 1;
    const int64_t OW = (IW - 1) * c->s + KW, OH = (IH - 1) * c->s + KH, n_out = OW * OH * OC * N;
    for (int64_t i = 0; i < n_out; i++) out[i] = 0.0;
    for (int64_t n = 0; n < N; n++)
        for (int64_t ic = 0; ic < IC; ic++)
            for (int64_t ly = 0; ly < IH; ly++)
                for (int64_t lx = 0; lx < IW; lx++)
                    for (int64_t oc = 0; oc < OC; oc++)
                        for (int64_t kh = 0; kh < KH; kh++)
                            for (int64_t kw = 0; kw < KW; kw++)
                                out[((n * OC + oc) * OH + ly * c->s + kh) * OW + lx * c->s + kw] +=
                                    in[0][((ic * OC + oc) * KH + kh) * KW + kw] * in[1][((n * IC + ic) * IH + ly) * IW + lx];
    if (n_out != no[0] * no[1] * no[2] * no[3])
        for (int64_t i = 0; i < no[0] * no[1] * no[2] * no[3]; i++) out[i] = NAN;
}

static const struct ct_case ct1_s1 = {false, 1}, ct1_s3 = {false, 3}, ct2_s1 = {true, 1}, ct2_s2 = {true, 2}, ct2_s3 = {true, 3};

/* ---- direct convolutions: every output entry summed from its definition ---- */

/* op: CONV_2D, CONV_2D_DW or CONV_3D; cwhn: the data (and kernel) stored
 * channels first, seen through a permutation, as upstream's test makes them */
struct cd_case { enum ggml_op op; int s[3], p[3], d[3]; int c, n, oc; bool cwhn; };

static struct ggml_tensor * channels_first(struct ggml_context * ctx, struct ggml_tensor * t, bool kernel) {
    struct ggml_tensor * m = ggml_cont(ctx, kernel ? ggml_permute(ctx, t, 2, 3, 1, 0) : ggml_permute(ctx, t, 1, 2, 0, 3));
    return kernel ? ggml_permute(ctx, m, 3, 2, 0, 1) : ggml_permute(ctx, m, 2, 0, 1, 3);
}

static struct ggml_tensor * b_conv_direct(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct cd_case * c = p;
    struct ggml_tensor * a = c->cwhn ? channels_first(ctx, in[0], true) : in[0], * b = c->cwhn ? channels_first(ctx, in[1], false) : in[1];
    if (c->op == GGML_OP_CONV_2D) return ggml_conv_2d_direct(ctx, a, b, c->s[0], c->s[1], c->p[0], c->p[1], c->d[0], c->d[1]);
    if (c->op == GGML_OP_CONV_2D_DW) return ggml_conv_2d_dw_direct(ctx, a, b, c->s[0], c->s[1], c->p[0], c->p[1], c->d[0], c->d[1]);
    return ggml_conv_3d_direct(ctx, a, b, c->s[0], c->s[1], c->s[2], c->p[0], c->p[1], c->p[2], c->d[0], c->d[1], c->d[2], c->c, c->n, c->oc);
}

/* autodiff's CONV_DIRECT_BACK for the kernel's (0) or the data's (1) gradient; dy is input 2 */
static struct ggml_tensor * b_cd_back_kernel(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return ops_grad_node(ctx, in, 0, 2, b_conv_direct, p);
}
static struct ggml_tensor * b_cd_back_data(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return ops_grad_node(ctx, in, 1, 2, b_conv_direct, p);
}

/* The axes: data [IW, IH, ID, C, N], kernel [KW, KH, KD, ICg, OC] (CONV_3D's
 * ne3 holds n C + c and oc ICg + icg), output [OW, OH, OD, OC, N]. */
struct cd_dims { int64_t in[3], k[3], o[3], C, N, ICg, OC, G; };

static struct cd_dims cd_dims(const struct cd_case * c, const int64_t (*ne)[4]) {
    const bool d3 = c->op == GGML_OP_CONV_3D;
    struct cd_dims d = {{ne[1][0], ne[1][1], d3 ? ne[1][2] : 1}, {ne[0][0], ne[0][1], d3 ? ne[0][2] : 1}, {0, 0, 0},
                        d3 ? c->c : ne[1][2], d3 ? c->n : ne[1][3], d3 ? c->c : ne[0][2], d3 ? c->oc : ne[0][3], 1};
    if (c->op == GGML_OP_CONV_2D_DW) d.G = d.C;
    for (int i = 0; i < 3; i++) d.o[i] = out_size(d.in[i], d.k[i], c->s[i], c->p[i], c->d[i]);
    return d;
}

/* Walks every product a[k, icg, oc] b[x, ch, n] of an output entry y[o, oc, n]:
 * y += a b (y non-NULL), or da += b dy, db += a dy (the adjoints). */
static void cd_walk(const struct cd_case * c, const struct cd_dims * d, const double * a, const double * b, double * y, const double * dy,
                    double * da, double * db) {
    const int64_t OCg = d->G > 0 ? d->OC / d->G : 0;  /* 0 groups: a depthwise convolution of 0 channels */
    for (int64_t n = 0; n < d->N; n++)
        for (int64_t oc = 0; oc < d->OC; oc++)
            for (int64_t oz = 0; oz < d->o[2]; oz++)
                for (int64_t oy = 0; oy < d->o[1]; oy++)
                    for (int64_t ox = 0; ox < d->o[0]; ox++) {
                        const int64_t yi = (((n * d->OC + oc) * d->o[2] + oz) * d->o[1] + oy) * d->o[0] + ox;
                        for (int64_t icg = 0; icg < d->ICg; icg++)
                            for (int64_t kz = 0; kz < d->k[2]; kz++)
                                for (int64_t ky = 0; ky < d->k[1]; ky++)
                                    for (int64_t kx = 0; kx < d->k[0]; kx++) {
                                        const int64_t x = ox * c->s[0] + kx * c->d[0] - c->p[0], yy = oy * c->s[1] + ky * c->d[1] - c->p[1],
                                                      z = oz * c->s[2] + kz * c->d[2] - c->p[2];
                                        if (x < 0 || x >= d->in[0] || yy < 0 || yy >= d->in[1] || z < 0 || z >= d->in[2]) continue;
                                        const int64_t ch = oc / OCg * d->ICg + icg;
                                        const int64_t ai = ((oc * d->ICg + icg) * d->k[2] + kz) * d->k[1] * d->k[0] + ky * d->k[0] + kx;
                                        const int64_t bi = (((n * d->C + ch) * d->in[2] + z) * d->in[1] + yy) * d->in[0] + x;
                                        if (y) y[yi] += a[ai] * b[bi];
                                        if (da) da[ai] += b[bi] * dy[yi];
                                        if (db) db[bi] += a[ai] * dy[yi];
                                    }
                    }
}

static void nan_unless(bool ok, double * out, const int64_t no[4]) {
    if (!ok) for (int64_t i = 0; i < ops_nel(no); i++) out[i] = NAN;  /* the node's shape is wrong */
}

static void r_conv_direct(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const struct cd_dims d = cd_dims(p, ne);
    const int64_t n = d.o[0] * d.o[1] * d.o[2] * d.OC * d.N;
    for (int64_t i = 0; i < n; i++) out[i] = 0.0;
    if (n == ops_nel(no)) cd_walk(p, &d, in[0], in[1], out, NULL, NULL, NULL);
    nan_unless(n == ops_nel(no), out, no);
}
static void r_cd_back_kernel(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const struct cd_dims d = cd_dims(p, ne);
    for (int64_t i = 0; i < ops_nel(no); i++) out[i] = 0.0;
    cd_walk(p, &d, in[0], in[1], NULL, in[2], out, NULL);
    nan_unless(ops_nel(no) == ops_nel(ne[0]), out, no);
}
static void r_cd_back_data(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const struct cd_dims d = cd_dims(p, ne);
    for (int64_t i = 0; i < ops_nel(no); i++) out[i] = 0.0;
    cd_walk(p, &d, in[0], in[1], NULL, in[2], NULL, out);
    nan_unless(ops_nel(no) == ops_nel(ne[1]), out, no);
}

static void s_conv_direct(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const struct cd_case * c = p;
    const struct cd_dims d = cd_dims(c, ne);
    const bool d3 = c->op == GGML_OP_CONV_3D;
    no[0] = d.o[0]; no[1] = d.o[1]; no[2] = d3 ? d.o[2] : d.OC; no[3] = d3 ? d.OC * d.N : d.N;
}
/* the shape of input 0 (the kernel's gradient; im2col_3d_back's data) or 1 (the data's gradient) */
static void s_cd_back_kernel(const int64_t (*ne)[4], const void * p, int64_t no[4]) { (void) p; memcpy(no, ne[0], 4 * sizeof no[0]); }
static void s_cd_back_data(const int64_t (*ne)[4], const void * p, int64_t no[4]) { (void) p; memcpy(no, ne[1], 4 * sizeof no[0]); }

/*                                    op                 s          p          d       c  n  oc cwhn */
static const struct cd_case cd2_basic = {GGML_OP_CONV_2D, {1, 1, 1}, {1, 1, 0}, {1, 1, 1}, 0, 0, 0, false},
                            cd2_odd = {GGML_OP_CONV_2D, {2, 3, 1}, {2, 0, 0}, {1, 2, 1}, 0, 0, 0, false},
                            cd2_cwhn = {GGML_OP_CONV_2D, {1, 2, 1}, {1, 1, 0}, {2, 1, 1}, 0, 0, 0, true},
                            dw_basic = {GGML_OP_CONV_2D_DW, {2, 2, 1}, {1, 1, 0}, {1, 1, 1}, 0, 0, 0, false},
                            dw_odd = {GGML_OP_CONV_2D_DW, {1, 2, 1}, {1, 2, 0}, {2, 1, 1}, 0, 0, 0, false},
                            dw_cwhn = {GGML_OP_CONV_2D_DW, {2, 1, 1}, {1, 0, 0}, {1, 2, 1}, 0, 0, 0, true},
                            cd3_basic = {GGML_OP_CONV_3D, {1, 1, 1}, {1, 0, 1}, {1, 1, 1}, 2, 2, 3, false},
                            cd3_odd = {GGML_OP_CONV_3D, {2, 1, 2}, {1, 1, 0}, {1, 2, 2}, 1, 1, 2, false};

/* ---- IM2COL_3D: the patches read from their definition; COL2IM_1D scatters each column entry ---- */

struct i3_case { int64_t kne[4]; int64_t ic; int s[3], p[3], d[3]; enum ggml_type dst; };

static struct ggml_tensor * b_im2col_3d(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct i3_case * c = p;
    struct ggml_tensor * k = ggml_new_tensor(ctx, GGML_TYPE_F16, 4, c->kne);  /* shape only, upstream's F16 */
    return ggml_im2col_3d(ctx, k, in[0], c->ic, c->s[0], c->s[1], c->s[2], c->p[0], c->p[1], c->p[2], c->d[0], c->d[1], c->d[2], c->dst);
}

static void s_im2col_3d(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const struct i3_case * c = p;
    int64_t o[3];
    for (int i = 0; i < 3; i++) o[i] = out_size(ne[0][i], c->kne[i], c->s[i], c->p[i], c->d[i]);
    no[0] = c->ic * c->kne[2] * c->kne[1] * c->kne[0]; no[1] = o[0]; no[2] = o[1]; no[3] = o[2] * (ne[0][3] / c->ic);
}

/* Walks every patch entry col[((ic KD + kz) KH + ky) KW + kx, ox, oy, oz + OD n],
 * which reads b[ox s0 + kx d0 - p0, .., .., n IC + ic] (zero outside b): copies
 * it into col_out, or adds col_in's entry onto img_out; returns the count. */
static int64_t walk_3d(const struct i3_case * c, const int64_t I[4], double * col_out, int64_t n_col, const double * img_in,
                       const double * col_in, double * img_out) {
    const int64_t * K = c->kne, N = I[3] / c->ic;
    int64_t O[3], e = 0;
    for (int i = 0; i < 3; i++) O[i] = out_size(I[i], K[i], c->s[i], c->p[i], c->d[i]);
    for (int64_t n = 0; n < N; n++)
        for (int64_t oz = 0; oz < O[2]; oz++)
            for (int64_t oy = 0; oy < O[1]; oy++)
                for (int64_t ox = 0; ox < O[0]; ox++)
                    for (int64_t ic = 0; ic < c->ic; ic++)
                        for (int64_t kz = 0; kz < K[2]; kz++)
                            for (int64_t ky = 0; ky < K[1]; ky++)
                                for (int64_t kx = 0; kx < K[0]; kx++, e++) {
                                    const int64_t x = ox * c->s[0] + kx * c->d[0] - c->p[0], y = oy * c->s[1] + ky * c->d[1] - c->p[1],
                                                  z = oz * c->s[2] + kz * c->d[2] - c->p[2];
                                    const bool inside = x >= 0 && x < I[0] && y >= 0 && y < I[1] && z >= 0 && z < I[2];
                                    const int64_t i = (((n * c->ic + ic) * I[2] + z) * I[1] + y) * I[0] + x;
                                    if (col_out && e < n_col) col_out[e] = inside ? img_in[i] : 0.0;
                                    if (img_out && inside) img_out[i] += col_in[e];
                                }
    return e;
}

static void r_im2col_3d(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    nan_unless(walk_3d(p, ne[0], out, ops_nel(no), in[0], NULL, NULL) == ops_nel(no), out, no);
}

/* autodiff's IM2COL_3D_BACK: the data's gradient for the patches' gradient dy (input 1) */
static struct ggml_tensor * b_im2col_3d_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return ops_grad_node(ctx, in, 0, 1, b_im2col_3d, p);
}
static void r_im2col_3d_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    for (int64_t i = 0; i < ops_nel(no); i++) out[i] = 0.0;
    const bool ok = ops_nel(no) == ops_nel(ne[0]);
    if (ok) walk_3d(p, ne[0], NULL, 0, NULL, in[1], out);
    nan_unless(ok, out, no);
}

struct c2i_case { int s0, oc, p0; };

static struct ggml_tensor * b_col2im_1d(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct c2i_case * c = p;
    return ggml_col2im_1d(ctx, in[0], c->s0, c->oc, c->p0);
}
static void s_col2im_1d(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const struct c2i_case * c = p;
    no[0] = (ne[0][1] - 1) * c->s0 + ne[0][0] / c->oc - 2 * c->p0; no[1] = c->oc; no[2] = no[3] = 1;
}
/* y[t s0 + k - p0, oc] += a[oc K + k, t] where inside */
static void r_col2im_1d(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const struct c2i_case * c = p;
    const int64_t K = ne[0][0] / c->oc, T = (ne[0][1] - 1) * c->s0 + K - 2 * c->p0;
    for (int64_t i = 0; i < ops_nel(no); i++) out[i] = 0.0;
    for (int64_t t = 0; t < ne[0][1]; t++)
        for (int64_t oc = 0; oc < c->oc; oc++)
            for (int64_t k = 0; k < K; k++) {
                const int64_t x = t * c->s0 + k - c->p0;
                if (x >= 0 && x < T && x + T * oc < ops_nel(no)) out[x + T * oc] += in[0][t * ne[0][0] + oc * K + k];
            }
    nan_unless(T * c->oc == ops_nel(no), out, no);
}

/*                                     kernel      IC  s          p          d          dst */
static const struct i3_case i3_basic = {{2, 3, 2, 4}, 2, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, GGML_TYPE_F32},
                            i3_f16 = {{3, 2, 2, 3}, 1, {2, 1, 1}, {1, 1, 0}, {1, 2, 1}, GGML_TYPE_F16},
                            i3_f32b = {{3, 2, 2, 3}, 1, {2, 1, 1}, {1, 1, 0}, {1, 2, 1}, GGML_TYPE_F32};
static const struct c2i_case c2i_up = {2, 3, 0}, c2i_pad = {1, 2, 1}, c2i_gaps = {3, 1, 0};

/* result shapes, from the definitions */
static void s_im2col(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    (void) ne;
    const struct im2col_case * c = p;
    const bool d2 = c->is_2d;
    const int64_t IC = d2 ? c->ine[2] : c->ine[1], KH = d2 ? c->kne[1] : 1;
    no[0] = IC * KH * c->kne[0];
    no[1] = out_size(c->ine[0], c->kne[0], c->s0, c->p0, c->d0);
    no[2] = d2 ? out_size(c->ine[1], c->kne[1], c->s1, c->p1, c->d1) : c->ine[2];
    no[3] = d2 ? c->ine[3] : 1;
}
static void s_im2col_back(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    (void) ne;
    memcpy(no, ((const struct im2col_case *) p)->ine, 4 * sizeof no[0]);
}
static void s_conv_transpose(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const struct ct_case * c = p;
    no[0] = (ne[1][0] - 1) * c->s + ne[0][0];
    no[1] = c->d2 ? (ne[1][1] - 1) * c->s + ne[0][1] : ne[0][1];
    no[2] = c->d2 ? ne[0][2] : 1;
    no[3] = c->d2 ? ne[1][3] : 1;
}

#define IN_(S, LO, HI) {.ne = OPS_SHAPE S, .lo = LO, .hi = HI}
#define ROW_(OP, NAME, BUILD, CASE, SHAPE, REF, N, ...)                                                              \
    {.op = OP, .variant = NAME, .build = BUILD, .params = &CASE, .n_in = N, .in = {__VA_ARGS__}, .shape = SHAPE, \
     .ref = REF, .cmp = OPS_NORM2, .tol = 1e-6, .grad = OPS_GRAD}

/* im2col with F16 patches or an F16 image (upstream's forms for F16 kernels), and the
 * transposed convolutions with an F16 kernel: forward (F16 results are the nearest
 * half of the reference), the gradient refused */
#define TYPED_(NAME, CASE, S, ITYPE, OTYPE, GRAD)                                                                    \
    {.op = "IM2COL", .variant = NAME, .build = b_im2col_typed, .params = &CASE, .n_in = 1,                        \
     .in = {{.ne = OPS_SHAPE S, .lo = -2, .hi = 2, .type = ITYPE, .layout = OPS_ANY_LAYOUT}}, .shape = s_im2col,   \
     .out_type = OTYPE, .ref = r_im2col, .cmp = OPS_NORM2, .tol = 1e-6, .grad = GRAD, .refusal = "f16"}
#define CT16_(OP, NAME, CASE, A, B, GRAD)                                                                           \
    {.op = OP, .variant = "F16 kernel, " NAME, .build = b_conv_transpose, .params = &CASE, .n_in = 2,              \
     .in = {{.ne = OPS_SHAPE A, .lo = -1, .hi = 1, .type = GGML_TYPE_F16}, {.ne = OPS_SHAPE B, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}}, \
     .shape = s_conv_transpose, .ref = r_conv_transpose, .cmp = OPS_NORM2, .tol = 1e-6, .grad = GRAD, .refusal = "f16"}

#define CD_(OP, NAME, CASE, A, B, GRAD)                                                                               \
    {.op = OP, .variant = NAME, .build = b_conv_direct, .params = &CASE, .n_in = 2,                                 \
     .in = {{.ne = OPS_SHAPE A, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}, {.ne = OPS_SHAPE B, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}}, \
     .shape = s_conv_direct, .ref = r_conv_direct, .cmp = OPS_NORM2, .tol = 1e-6, .grad = GRAD}
#define CD16_(OP, NAME, CASE, A, B)                                                                                   \
    {.op = OP, .variant = "F16 kernel, " NAME, .build = b_conv_direct, .params = &CASE, .n_in = 2,                  \
     .in = {{.ne = OPS_SHAPE A, .lo = -1, .hi = 1, .type = GGML_TYPE_F16}, {.ne = OPS_SHAPE B, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}}, \
     .shape = s_conv_direct, .ref = r_conv_direct, .cmp = OPS_NORM2, .tol = 1e-6, .grad = OPS_REFUSED, .refusal = "f16"}
/* CONV_DIRECT_BACK, gradient of the kernel or the data; its own gradient (a double backward) FD-checked.
 * The source whose gradient it is does not reach it: fixed (ops_grad_node makes it the parameter). */
#define FIXED_(S) {.ne = OPS_SHAPE S, .lo = -1, .hi = 1, .fixed = true}
enum { CD_kernel, CD_data };  /* the source input 0 or 1 whose gradient a row's node is */
#define CDB_(NAME, WHICH, CASE, A, B, Y)                                                                              \
    {.op = "CONV_DIRECT_BACK", .variant = NAME, .build = b_cd_back_##WHICH, .params = &CASE, .n_in = 3,              \
     .in = {{.ne = OPS_SHAPE A, .lo = -1, .hi = 1, .fixed = CD_##WHICH == CD_kernel},                              \
            {.ne = OPS_SHAPE B, .lo = -1, .hi = 1, .fixed = CD_##WHICH == CD_data}, IN_(Y, -1, 1)},                    \
     .shape = s_cd_back_##WHICH, .ref = r_cd_back_##WHICH, .cmp = OPS_NORM2, .tol = 1e-6, .grad = OPS_GRAD}
#define I3_(NAME, CASE, B, ITYPE, OTYPE, GRAD)                                                                               \
    {.op = "IM2COL_3D", .variant = NAME, .build = b_im2col_3d, .params = &CASE, .n_in = 1,                          \
     .in = {{.ne = OPS_SHAPE B, .lo = -2, .hi = 2, .type = ITYPE, .layout = OPS_ANY_LAYOUT}}, .shape = s_im2col_3d,  \
     .out_type = OTYPE, .ref = r_im2col_3d, .cmp = OPS_NORM2, .tol = 1e-6, .grad = GRAD, .refusal = "f16"}
#define C2I_(NAME, CASE, A, TYPE, GRAD)                                                                               \
    {.op = "COL2IM_1D", .variant = NAME, .build = b_col2im_1d, .params = &CASE, .n_in = 1,                          \
     .in = {{.ne = OPS_SHAPE A, .lo = -2, .hi = 2, .type = TYPE, .layout = OPS_ANY_LAYOUT}}, .shape = s_col2im_1d,   \
     .out_type = TYPE, .ref = r_col2im_1d, .cmp = OPS_NORM2, .tol = 1e-6, .grad = GRAD, .refusal = "f16"}

static const struct ops_row rows[] = {
    TYPED_("2-D F16 patches, s 2,3 p 1,2 d 2,1", t2_f16, (9, 7, 2, 1), GGML_TYPE_F32, GGML_TYPE_F16, OPS_FORWARD_ONLY),
    TYPED_("1-D F16 patches, s 2 p 3 d 2", t1_f16, (11, 3, 2, 1), GGML_TYPE_F32, GGML_TYPE_F16, OPS_FORWARD_ONLY),
    TYPED_("2-D F16 patches, 230 channels: 2 pieces", t2_pieces, (4, 3, 230, 1), GGML_TYPE_F32, GGML_TYPE_F16, OPS_FORWARD_ONLY),
    TYPED_("1-D F16 patches, K 2049: 3 pieces", t1_pieces, (2050, 3, 1, 1), GGML_TYPE_F32, GGML_TYPE_F16, OPS_FORWARD_ONLY),
    TYPED_("2-D F16 image and patches", t2_f16, (9, 7, 2, 1), GGML_TYPE_F16, GGML_TYPE_F16, OPS_FORWARD_ONLY),
    TYPED_("2-D F16 image, F32 patches", t2_f32, (7, 6, 3, 2), GGML_TYPE_F16, GGML_TYPE_F32, OPS_REFUSED),
    CT16_("CONV_TRANSPOSE_1D", "K 2 s 3", ct1_s3, (2, 3, 2, 1), (5, 2, 1, 1), OPS_REFUSED),
    CT16_("CONV_TRANSPOSE_2D", "3x2 s 2, batch 2", ct2_s2, (3, 2, 2, 2), (3, 4, 2, 2), OPS_REFUSED),
    ROW_("IM2COL", "2-D 3x3 [7,6,3,2]", b_im2col, c2_basic, s_im2col, r_im2col, 1, IN_((7, 6, 3, 2), -2, 2)),
    ROW_("IM2COL", "2-D s 2,3 p 1,2 d 2,1, odd", b_im2col, c2_odd, s_im2col, r_im2col, 1, IN_((9, 7, 2, 1), -2, 2)),
    ROW_("IM2COL", "2-D padding past the kernel", b_im2col, c2_pad, s_im2col, r_im2col, 1, IN_((5, 4, 1, 3), -2, 2)),
    ROW_("IM2COL", "2-D 1x1", b_im2col, c2_1x1, s_im2col, r_im2col, 1, IN_((5, 3, 4, 1), -2, 2)),
    ROW_("IM2COL", "2-D stride = kernel (sk_p0)", b_im2col, c2_sk, s_im2col, r_im2col, 1, IN_((8, 6, 3, 1), -2, 2)),
    ROW_("IM2COL", "1-D K 3 p 1", b_im2col, c1_basic, s_im2col, r_im2col, 1, IN_((10, 2, 1, 1), -2, 2)),
    ROW_("IM2COL", "2-D 5x3 p 2,1 [9,6,2,1]", b_im2col, c2_k5, s_im2col, r_im2col, 1, IN_((9, 6, 2, 1), -2, 2)),
    ROW_("IM2COL", "1-D K 7 p 2", b_im2col, c1_k7, s_im2col, r_im2col, 1, IN_((12, 2, 1, 1), -2, 2)),
    ROW_("IM2COL", "1-D s 2 p 3 d 2, batch 2", b_im2col, c1_odd, s_im2col, r_im2col, 1, IN_((11, 3, 2, 1), -2, 2)),
    ROW_("IM2COL", "1-D kernel = data, s 3", b_im2col, c1_full, s_im2col, r_im2col, 1, IN_((5, 1, 3, 1), -2, 2)),
    ROW_("IM2COL_BACK", "2-D 3x3", b_im2col_back, c2_basic, s_im2col_back, r_im2col_back, 1, IN_((27, 5, 4, 2), -2, 2)),
    ROW_("IM2COL_BACK", "2-D s 2,3 p 1,2 d 2,1", b_im2col_back, c2_odd, s_im2col_back, r_im2col_back, 1, IN_((12, 4, 4, 1), -2, 2)),
    ROW_("IM2COL_BACK", "2-D padding past the kernel", b_im2col_back, c2_pad, s_im2col_back, r_im2col_back, 1, IN_((6, 10, 1, 3), -2, 2)),
    ROW_("IM2COL_BACK", "1-D s 2 p 3 d 2", b_im2col_back, c1_odd, s_im2col_back, r_im2col_back, 1, IN_((12, 6, 2, 1), -2, 2)),
    ROW_("IM2COL_BACK", "1-D kernel = data, s 3", b_im2col_back, c1_full, s_im2col_back, r_im2col_back, 1, IN_((5, 2, 3, 1), -2, 2)),
    ROW_("CONV_TRANSPOSE_1D", "K 3 s 1", b_conv_transpose, ct1_s1, s_conv_transpose, r_conv_transpose, 2, IN_((3, 2, 3, 1), -1, 1),
         IN_((6, 3, 1, 1), -1, 1)),
    ROW_("CONV_TRANSPOSE_1D", "K 2 s 3 (gaps), odd", b_conv_transpose, ct1_s3, s_conv_transpose, r_conv_transpose, 2, IN_((2, 3, 2, 1), -1, 1),
         IN_((5, 2, 1, 1), -1, 1)),
    ROW_("CONV_TRANSPOSE_2D", "3x3 s 1", b_conv_transpose, ct2_s1, s_conv_transpose, r_conv_transpose, 2, IN_((3, 3, 2, 3), -1, 1),
         IN_((4, 3, 3, 1), -1, 1)),
    ROW_("CONV_TRANSPOSE_2D", "3x2 s 2 (overlap), batch 2", b_conv_transpose, ct2_s2, s_conv_transpose, r_conv_transpose, 2,
         IN_((3, 2, 2, 2), -1, 1), IN_((3, 4, 2, 2), -1, 1)),
    ROW_("CONV_TRANSPOSE_2D", "2x2 s 3 (gaps)", b_conv_transpose, ct2_s3, s_conv_transpose, r_conv_transpose, 2, IN_((2, 2, 1, 2), -1, 1),
         IN_((3, 2, 2, 1), -1, 1)),
    CD_("CONV_2D", "3x3 s 1 p 1, IC 3 OC 2, batch 2", cd2_basic, (3, 3, 3, 2), (6, 5, 3, 2), OPS_GRAD),
    CD_("CONV_2D", "2x3 s 2,3 p 2,0 d 1,2, odd", cd2_odd, (2, 3, 2, 3), (7, 9, 2, 1), OPS_GRAD),
    CD_("CONV_2D", "channels first (CWHN)", cd2_cwhn, (3, 2, 3, 2), (6, 7, 3, 2), OPS_GRAD),
    CD16_("CONV_2D", "3x3 s 1 p 1", cd2_basic, (3, 3, 3, 2), (6, 5, 3, 2)),
    /* the GEMM path's tails (conv_gemm.c): 300 positions = 256 + 44 columns, OC 7 = 6 + 1 rows */
    CD_("CONV_2D", "GEMM tails: 20x15 out, OC 7", cd2_basic, (3, 3, 2, 7), (20, 15, 2, 2), OPS_FORWARD_ONLY),
    CD_("CONV_2D", "GEMM tails, CWHN: 16x16 out, OC 8", cd2_cwhn, (3, 2, 3, 8), (18, 17, 3, 1), OPS_FORWARD_ONLY),
    CD16_("CONV_2D", "GEMM tails: 20x15 out, OC 7", cd2_basic, (3, 3, 2, 7), (20, 15, 2, 2)),
    CD_("CONV_2D_DW", "3x3 s 2 p 1, C 4, batch 2", dw_basic, (3, 3, 1, 4), (7, 6, 4, 2), OPS_GRAD),
    CD_("CONV_2D_DW", "2x3 s 1,2 p 1,2 d 2,1", dw_odd, (2, 3, 1, 3), (8, 7, 3, 1), OPS_GRAD),
    CD_("CONV_2D_DW", "channels first (CWHN): CWHN result", dw_cwhn, (3, 2, 1, 5), (7, 6, 5, 2), OPS_GRAD),
    CD16_("CONV_2D_DW", "3x3 s 2 p 1", dw_basic, (3, 3, 1, 4), (7, 6, 4, 2)),
    CD_("CONV_2D_DW", "0 channels", dw_basic, (3, 3, 1, 0), (7, 6, 0, 2), OPS_FORWARD_ONLY),
    CD_("CONV_2D", "0 input channels: zeros", cd2_basic, (3, 3, 0, 2), (6, 5, 0, 2), OPS_FORWARD_ONLY),
    CD_("CONV_3D", "2x2x2 p 1,0,1, IC 2 N 2 OC 3", cd3_basic, (2, 2, 2, 6), (5, 4, 4, 4), OPS_GRAD),
    CD_("CONV_3D", "3x2x2 s 2,1,2 p 1,1,0 d 1,2,2", cd3_odd, (3, 2, 2, 2), (7, 5, 6, 1), OPS_GRAD),
    CD16_("CONV_3D", "2x2x2", cd3_basic, (2, 2, 2, 6), (5, 4, 4, 4)),
    CDB_("CONV_2D: kernel", kernel, cd2_odd, (2, 3, 2, 3), (7, 9, 2, 1), (5, 2, 3, 1)),
    CDB_("CONV_2D: data", data, cd2_odd, (2, 3, 2, 3), (7, 9, 2, 1), (5, 2, 3, 1)),
    CDB_("CONV_2D_DW: data", data, dw_basic, (3, 3, 1, 4), (7, 6, 4, 2), (4, 3, 4, 2)),
    CDB_("CONV_3D: kernel", kernel, cd3_odd, (3, 2, 2, 2), (7, 5, 6, 1), (4, 5, 2, 2)),
    CDB_("CONV_3D: data", data, cd3_basic, (2, 2, 2, 6), (5, 4, 4, 4), (6, 3, 5, 6)),
    CDB_("CONV_2D_DW: kernel", kernel, dw_odd, (2, 3, 1, 3), (8, 7, 3, 1), (8, 5, 3, 1)),
    I3_("2x3x2 IC 2 N 2, s 1,2,1 p 1,0,1 d 1,1,2", i3_basic, (5, 6, 4, 4), GGML_TYPE_F32, GGML_TYPE_F32, OPS_GRAD),
    I3_("F16 data, F32 patches", i3_basic, (5, 6, 4, 4), GGML_TYPE_F16, GGML_TYPE_F32, OPS_REFUSED),
    I3_("N 0", i3_basic, (5, 6, 4, 0), GGML_TYPE_F32, GGML_TYPE_F32, OPS_FORWARD_ONLY),
    I3_("IC 2 of 5 channels (N 2, the last unread)", i3_basic, (5, 6, 4, 5), GGML_TYPE_F32, GGML_TYPE_F32, OPS_GRAD),
    I3_("IC 2 of 1 channel (N 0: empty, upstream's)", i3_basic, (5, 6, 4, 1), GGML_TYPE_F32, GGML_TYPE_F32, OPS_FORWARD_ONLY),
    {.op = "IM2COL_3D_BACK", .variant = "2x3x2 IC 2 N 2, s 1,2,1 p 1,0,1 d 1,1,2", .build = b_im2col_3d_back, .params = &i3_basic, .n_in = 2,
     .in = {FIXED_((5, 6, 4, 4)), IN_((24, 6, 2, 8), -1, 1)}, .shape = s_cd_back_kernel /* the data */, .ref = r_im2col_3d_back, .cmp = OPS_NORM2,
     .tol = 1e-6, .grad = OPS_GRAD},
    {.op = "IM2COL_3D_BACK", .variant = "3x2x2 IC 1 N 2, s 2,1,1 p 1,1,0 d 1,2,1", .build = b_im2col_3d_back, .params = &i3_f32b, .n_in = 2,
     .in = {FIXED_((7, 5, 4, 2)), IN_((12, 4, 5, 6), -1, 1)}, .shape = s_cd_back_kernel /* the data */, .ref = r_im2col_3d_back, .cmp = OPS_NORM2,
     .tol = 1e-6, .grad = OPS_GRAD},
    {.op = "IM2COL_3D_BACK", .variant = "IC 2 of 5 channels: the last one zero", .build = b_im2col_3d_back, .params = &i3_basic, .n_in = 2,
     .in = {FIXED_((5, 6, 4, 5)), IN_((24, 6, 2, 8), -1, 1)}, .shape = s_cd_back_kernel /* the data */, .ref = r_im2col_3d_back, .cmp = OPS_NORM2,
     .tol = 1e-6, .grad = OPS_GRAD},
    I3_("F16 patches, 3x2x2 s 2,1,1", i3_f16, (7, 5, 4, 2), GGML_TYPE_F32, GGML_TYPE_F16, OPS_FORWARD_ONLY),
    I3_("F16 data and patches", i3_f16, (7, 5, 4, 2), GGML_TYPE_F16, GGML_TYPE_F16, OPS_FORWARD_ONLY),
    C2I_("K 4 OC 3 s 2 (upstream's)", c2i_up, (12, 7, 1, 1), GGML_TYPE_F32, OPS_GRAD),
    C2I_("K 3 OC 2 s 1 p 1", c2i_pad, (6, 5, 1, 1), GGML_TYPE_F32, OPS_GRAD),
    C2I_("K 2 OC 1 s 3 (gaps)", c2i_gaps, (2, 6, 1, 1), GGML_TYPE_F32, OPS_GRAD),
    C2I_("F16", c2i_up, (12, 7, 1, 1), GGML_TYPE_F16, OPS_FORWARD_ONLY),
};

/* col2im_1d of BF16 columns: the F32 result (the table's rows) of the same
 * values, rounded once to bf16 */
static void check_refs(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * c32 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 12, 7), * c16 = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, 12, 7);
    for (int64_t i = 0; i < 12 * 7; i++) {
        ((ggml_bf16_t *) c16->data)[i] = ggml_fp32_to_bf16((float) tc_uniform(-2, 2));
        ((float *) c32->data)[i] = ggml_bf16_to_fp32(((ggml_bf16_t *) c16->data)[i]);
    }
    struct ggml_tensor * y32 = ggml_col2im_1d(ctx, c32, 2, 3, 1), * y16 = ggml_col2im_1d(ctx, c16, 2, 3, 1);
    CHECK(y16 && y16->type == GGML_TYPE_BF16, "col2im_1d of BF16 columns: a BF16 result (%s)", ggml_last_error());
    if (y16 && y32) {
        struct ggml_cgraph * g = ggml_new_graph(ctx);
        ggml_build_forward_expand(g, y32);
        ggml_build_forward_expand(g, y16);
        ggml_graph_compute_with_ctx(ctx, g, 3);
        int bad = 0;
        for (int64_t i = 0; i < ggml_nelements(y32); i++)
            bad += ggml_fp32_to_bf16(((float *) y32->data)[i]).bits != ((ggml_bf16_t *) y16->data)[i].bits;
        CHECK(bad == 0, "col2im_1d of BF16 columns: %d of %lld elements are not the F32 result rounded", bad, (long long) ggml_nelements(y32));
    }
    ggml_free(ctx);
}

/* what the constructors of the direct convolutions, im2col_3d and col2im_1d
 * refuse: NULL, types, channel counts that disagree, strides or dilations
 * below 1, negative paddings, a data smaller than the dilated kernel, sizes
 * that would overflow */
static void check_refusals(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * k2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 2, 4), * x2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 5, 2, 1);
    struct ggml_tensor * kdw = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 1, 2), * k16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 3, 3, 2, 4);
    struct ggml_tensor * x16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 6, 5, 2, 1), * ki = ggml_new_tensor_4d(ctx, GGML_TYPE_I32, 3, 3, 2, 4);
    struct ggml_tensor * k3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 2, 2, 6), * x3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 4, 4, 4);
    struct ggml_tensor * cols = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 12, 7), * ci = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 12, 7);
    struct ggml_tensor * c3 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 12, 7, 2);

    OPS_EXPECT_REFUSED(ggml_conv_2d_direct(NULL, k2, x2, 1, 1, 0, 0, 1, 1), "conv_2d_direct without a context");
    OPS_EXPECT_REFUSED(ggml_conv_2d_direct(ctx, NULL, x2, 1, 1, 0, 0, 1, 1), "conv_2d_direct of a NULL kernel");
    OPS_EXPECT_REFUSED(ggml_conv_2d_direct(ctx, k2, NULL, 1, 1, 0, 0, 1, 1), "conv_2d_direct of NULL data");
    OPS_EXPECT_REFUSED(ggml_conv_2d_direct(ctx, ki, x2, 1, 1, 0, 0, 1, 1), "conv_2d_direct of an I32 kernel");
    OPS_EXPECT_REFUSED(ggml_conv_2d_direct(ctx, k2, x16, 1, 1, 0, 0, 1, 1), "conv_2d_direct of F16 data");
    OPS_EXPECT_REFUSED(ggml_conv_2d_direct(ctx, k2, x3, 1, 1, 0, 0, 1, 1), "conv_2d_direct with IC 2 against 4");
    OPS_EXPECT_REFUSED(ggml_conv_2d_direct(ctx, k2, x2, 0, 1, 0, 0, 1, 1), "conv_2d_direct with stride 0");
    OPS_EXPECT_REFUSED(ggml_conv_2d_direct(ctx, k2, x2, 1, 1, -1, 0, 1, 1), "conv_2d_direct with padding -1");
    OPS_EXPECT_REFUSED(ggml_conv_2d_direct(ctx, k2, x2, 1, 1, 0, 0, 1, 0), "conv_2d_direct with dilation 0");
    OPS_EXPECT_REFUSED(ggml_conv_2d_direct(ctx, k2, x2, 1, 1, 0, 0, 3, 1), "conv_2d_direct with a dilated kernel wider than the data");
    OPS_EXPECT_REFUSED(ggml_conv_2d_direct(ctx, k2, x2, 1, 1, 0, 0, 1, INT32_MAX), "conv_2d_direct with a dilation of 2^31 - 1");
    CHECK(ggml_conv_2d_direct(ctx, k16, x2, 1, 1, 1, 1, 1, 1) != NULL, "conv_2d_direct of an F16 kernel");

    OPS_EXPECT_REFUSED(ggml_conv_2d_dw_direct(ctx, NULL, x2, 1, 1, 0, 0, 1, 1), "conv_2d_dw_direct of a NULL kernel");
    OPS_EXPECT_REFUSED(ggml_conv_2d_dw_direct(ctx, kdw, NULL, 1, 1, 0, 0, 1, 1), "conv_2d_dw_direct of NULL data");
    OPS_EXPECT_REFUSED(ggml_conv_2d_dw_direct(ctx, k2, x2, 1, 1, 0, 0, 1, 1), "conv_2d_dw_direct of a kernel with 2 input channels");
    OPS_EXPECT_REFUSED(ggml_conv_2d_dw_direct(ctx, kdw, x3, 1, 1, 0, 0, 1, 1), "conv_2d_dw_direct with 2 kernels for 4 channels");
    OPS_EXPECT_REFUSED(ggml_conv_2d_dw_direct(ctx, kdw, x2, 1, -2, 0, 0, 1, 1), "conv_2d_dw_direct with stride -2");
    OPS_EXPECT_REFUSED(ggml_conv_2d_dw_direct(ctx, kdw, x2, 1, 1, 0, 0, 1, 5), "conv_2d_dw_direct with a dilated kernel taller than the data");

    OPS_EXPECT_REFUSED(ggml_conv_3d_direct(ctx, NULL, x3, 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 2, 3), "conv_3d_direct of a NULL kernel");
    OPS_EXPECT_REFUSED(ggml_conv_3d_direct(ctx, k3, x3, 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 2, 2), "conv_3d_direct with IC*OC 4, kernel ne3 6");
    OPS_EXPECT_REFUSED(ggml_conv_3d_direct(ctx, k3, x3, 1, 1, 1, 0, 0, 0, 1, 1, 1, 2, 3, 3), "conv_3d_direct with IC*N 6, data ne3 4");
    OPS_EXPECT_REFUSED(ggml_conv_3d_direct(ctx, k3, x3, 1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 2, 3), "conv_3d_direct with IC 0");
    OPS_EXPECT_REFUSED(ggml_conv_3d_direct(ctx, k3, x3, 1, 1, 0, 0, 0, 0, 1, 1, 1, 2, 2, 3), "conv_3d_direct with depth stride 0");
    OPS_EXPECT_REFUSED(ggml_conv_3d_direct(ctx, k3, x3, 1, 1, 1, 0, 0, -1, 1, 1, 1, 2, 2, 3), "conv_3d_direct with depth padding -1");
    OPS_EXPECT_REFUSED(ggml_conv_3d_direct(ctx, k3, x3, 1, 1, 1, 0, 0, 0, 1, 1, 4, 2, 2, 3), "conv_3d_direct with a dilated depth past the data");
    OPS_EXPECT_REFUSED(ggml_conv_3d_direct(ctx, k16, x16, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 4), "conv_3d_direct of F16 data");

    OPS_EXPECT_REFUSED(ggml_im2col_3d(ctx, k3, NULL, 2, 1, 1, 1, 0, 0, 0, 1, 1, 1, GGML_TYPE_F32), "im2col_3d of NULL data");
    OPS_EXPECT_REFUSED(ggml_im2col_3d(ctx, k3, ci, 2, 1, 1, 1, 0, 0, 0, 1, 1, 1, GGML_TYPE_F32), "im2col_3d of I32 data");
    OPS_EXPECT_REFUSED(ggml_im2col_3d(ctx, k3, x3, 2, 1, 1, 1, 0, 0, 0, 1, 1, 1, GGML_TYPE_I32), "im2col_3d to I32 patches");
    OPS_EXPECT_REFUSED(ggml_im2col_3d(ctx, k3, x3, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, GGML_TYPE_F32), "im2col_3d with IC 0");
    OPS_EXPECT_REFUSED(ggml_im2col_3d(ctx, k3, x3, 2, 1, 1, 1, 0, 0, 0, 0, 1, 1, GGML_TYPE_F32), "im2col_3d with dilation 0");
    OPS_EXPECT_REFUSED(ggml_im2col_3d(ctx, k3, x3, (int64_t) 1 << 40, 1, 1, 1, 0, 0, 0, 1, 1, 1, GGML_TYPE_F32), "im2col_3d with IC 2^40");

    OPS_EXPECT_REFUSED(ggml_col2im_1d(NULL, cols, 2, 3, 0), "col2im_1d without a context");
    OPS_EXPECT_REFUSED(ggml_col2im_1d(ctx, NULL, 2, 3, 0), "col2im_1d of NULL");
    OPS_EXPECT_REFUSED(ggml_col2im_1d(ctx, ci, 2, 3, 0), "col2im_1d of I32 columns");
    OPS_EXPECT_REFUSED(ggml_col2im_1d(ctx, c3, 2, 3, 0), "col2im_1d of a 3-D tensor");
    OPS_EXPECT_REFUSED(ggml_col2im_1d(ctx, cols, 0, 3, 0), "col2im_1d with stride 0");
    OPS_EXPECT_REFUSED(ggml_col2im_1d(ctx, cols, 2, 0, 0), "col2im_1d with 0 channels");
    OPS_EXPECT_REFUSED(ggml_col2im_1d(ctx, cols, 2, 5, 0), "col2im_1d with 5 channels not dividing 12");
    OPS_EXPECT_REFUSED(ggml_col2im_1d(ctx, cols, 2, 3, -1), "col2im_1d with padding -1");
    OPS_EXPECT_REFUSED(ggml_col2im_1d(ctx, cols, 2, 3, 9), "col2im_1d cropping the whole signal");
    ggml_free(ctx);
}

const struct ops_family ops_conv = {"conv", rows, sizeof rows / sizeof rows[0], check_refs, check_refusals};

/* conv.c -- rows of IM2COL, its adjoint IM2COL_BACK and the transposed
 * convolutions. IM2COL reads the kernel tensor for its shape only, so the
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
                                c1_full = {{5, 1, 1, 1}, {5, 1, 3, 1}, 3, 0, 2, 0, 1, 0, false};

static const struct im2col_typed t2_f16 = {.c = {{3, 2, 2, 1}, {9, 7, 2, 1}, 2, 3, 1, 2, 2, 1, true}, .dst = GGML_TYPE_F16},
                                 t1_f16 = {.c = {{4, 3, 5, 1}, {11, 3, 2, 1}, 2, 0, 3, 0, 2, 0, false}, .dst = GGML_TYPE_F16},
                                 t2_f32 = {.c = {{3, 3, 3, 4}, {7, 6, 3, 2}, 1, 1, 0, 0, 1, 1, true}, .dst = GGML_TYPE_F32};

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

static const struct ops_row rows[] = {
    TYPED_("2-D F16 patches, s 2,3 p 1,2 d 2,1", t2_f16, (9, 7, 2, 1), GGML_TYPE_F32, GGML_TYPE_F16, OPS_FORWARD_ONLY),
    TYPED_("1-D F16 patches, s 2 p 3 d 2", t1_f16, (11, 3, 2, 1), GGML_TYPE_F32, GGML_TYPE_F16, OPS_FORWARD_ONLY),
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
};

const struct ops_family ops_conv = {"conv", rows, sizeof rows / sizeof rows[0], NULL, NULL};

/* conv.c -- rows of IM2COL and its adjoint IM2COL_BACK. The kernel tensor is
 * read for its shape only, so the builders make it themselves and the rows'
 * inputs are the image (IM2COL) or the patches' gradient (IM2COL_BACK). The
 * references follow the definition: im2col reads each patch entry from the
 * image, im2col_back scatters each patch entry back onto it (the kernel
 * gathers instead). The convolutions built on them: test_conv. */
#include "ops/harness.h"

#include <math.h>

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

#define FD 1e-2, 1e-3, 1e-2
static const struct ops_row rows[] = {
    {"IM2COL", "2-D 3x3 [7,6,3,2]", b_im2col, &c2_basic, 1, {{{7, 6, 3, 2}, -2, 2}}, r_im2col, 1e-6, true, FD},
    {"IM2COL", "2-D s 2,3 p 1,2 d 2,1, odd", b_im2col, &c2_odd, 1, {{{9, 7, 2, 1}, -2, 2}}, r_im2col, 1e-6, true, FD},
    {"IM2COL", "2-D padding past the kernel", b_im2col, &c2_pad, 1, {{{5, 4, 1, 3}, -2, 2}}, r_im2col, 1e-6, true, FD},
    {"IM2COL", "2-D 1x1", b_im2col, &c2_1x1, 1, {{{5, 3, 4, 1}, -2, 2}}, r_im2col, 1e-6, true, FD},
    {"IM2COL", "2-D stride = kernel (sk_p0)", b_im2col, &c2_sk, 1, {{{8, 6, 3, 1}, -2, 2}}, r_im2col, 1e-6, true, FD},
    {"IM2COL", "1-D K 3 p 1", b_im2col, &c1_basic, 1, {{{10, 2, 1, 1}, -2, 2}}, r_im2col, 1e-6, true, FD},
    {"IM2COL", "1-D s 2 p 3 d 2, batch 2", b_im2col, &c1_odd, 1, {{{11, 3, 2, 1}, -2, 2}}, r_im2col, 1e-6, true, FD},
    {"IM2COL", "1-D kernel = data, s 3", b_im2col, &c1_full, 1, {{{5, 1, 3, 1}, -2, 2}}, r_im2col, 1e-6, true, FD},
    {"IM2COL_BACK", "2-D 3x3", b_im2col_back, &c2_basic, 1, {{{27, 5, 4, 2}, -2, 2}}, r_im2col_back,
     1e-6, true, FD},
    {"IM2COL_BACK", "2-D s 2,3 p 1,2 d 2,1", b_im2col_back, &c2_odd, 1, {{{12, 4, 4, 1}, -2, 2}},
     r_im2col_back, 1e-6, true, FD},
    {"IM2COL_BACK", "2-D padding past the kernel", b_im2col_back, &c2_pad, 1, {{{6, 10, 1, 3}, -2, 2}},
     r_im2col_back, 1e-6, true, FD},
    {"IM2COL_BACK", "1-D s 2 p 3 d 2", b_im2col_back, &c1_odd, 1, {{{12, 6, 2, 1}, -2, 2}}, r_im2col_back, 1e-6, true, FD},
    {"IM2COL_BACK", "1-D kernel = data, s 3", b_im2col_back, &c1_full, 1, {{{5, 2, 3, 1}, -2, 2}}, r_im2col_back, 1e-6, true, FD},
};

const struct ops_family ops_conv = {"conv", rows, sizeof rows / sizeof rows[0]};

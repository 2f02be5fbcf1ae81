/* test_conv.c -- the convolutions built from im2col + mul_mat (ggml_conv_1d,
 * _1d_ph, _2d, _2d_sk_p0, _2d_s1_ph, _2d_dw, _1d_dw, _1d_dw_ph): the result against a direct
 * float64 convolution written from the definition
 *   y[ow, oh, oc, n] = sum_{ic, kh, kw} a[kw, kh, ic, oc] b[ow s0 + kw d0 - p0, oh s1 + kh d1 - p1, ic, n]
 * (zero outside b), with F32 and with F16 kernels (upstream's F16 patches),
 * the same on 1/2/3 threads bit for bit, the gradients of
 * kernel and data by finite differences, and the arguments refused. IM2COL
 * and IM2COL_BACK themselves have rows in tests/ops/conv.c. */
#include "common/test_common.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum conv_kind { K_1D, K_1D_PH, K_2D, K_2D_SK_P0, K_2D_S1_PH, K_2D_DW, K_1D_DW, K_1D_DW_PH };

struct conv_case {
    const char * name;
    enum conv_kind kind;
    int64_t ane[4], bne[4];  /* kernel, data */
    int s0, s1, p0, p1, d0, d1;
};

static struct ggml_tensor * conv_of(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, const struct conv_case * c) {
    switch (c->kind) {
        case K_1D:       return ggml_conv_1d(ctx, a, b, c->s0, c->p0, c->d0);
        case K_1D_PH:    return ggml_conv_1d_ph(ctx, a, b, c->s0, c->d0);
        case K_2D:       return ggml_conv_2d(ctx, a, b, c->s0, c->s1, c->p0, c->p1, c->d0, c->d1);
        case K_2D_SK_P0: return ggml_conv_2d_sk_p0(ctx, a, b);
        case K_2D_S1_PH: return ggml_conv_2d_s1_ph(ctx, a, b);
        case K_1D_DW:    return ggml_conv_1d_dw(ctx, a, b, c->s0, c->p0, c->d0);
        case K_1D_DW_PH: return ggml_conv_1d_dw_ph(ctx, a, b, c->s0, c->d0);
        default:         return ggml_conv_2d_dw(ctx, a, b, c->s0, c->s1, c->p0, c->p1, c->d0, c->d1);
    }
}

/* The effective 2-D parameters of a case (1-D: KH = IH = 1, its ic and n
 * axes one place down), from the wrappers' documented meaning. */
struct geom { int64_t KW, KH, IC, OC, IW, IH, N; int s0, s1, p0, p1, d0, d1; bool dw; };

static struct geom geom_of(const struct conv_case * c) {
    struct geom g = {c->ane[0], 1, 0, 0, c->bne[0], 1, 0, c->s0, 1, c->p0, 0, c->d0, 1, false};
    if (c->kind == K_1D || c->kind == K_1D_PH) {
        g.IC = c->ane[1]; g.OC = c->ane[2]; g.N = c->bne[2];
        if (c->kind == K_1D_PH) g.p0 = (int) (c->ane[0] / 2);
        return g;
    }
    if (c->kind == K_1D_DW || c->kind == K_1D_DW_PH) {  /* a [K, 1, C], b [IL, C, N] */
        g.IC = 1; g.OC = c->ane[2]; g.N = c->bne[2]; g.dw = true;
        if (c->kind == K_1D_DW_PH) g.p0 = (int) (c->ane[0] / 2);
        return g;
    }
    g.KH = c->ane[1]; g.IH = c->bne[1]; g.IC = c->ane[2]; g.OC = c->ane[3]; g.N = c->bne[3];
    g.s1 = c->s1; g.p1 = c->p1; g.d1 = c->d1;
    if (c->kind == K_2D_SK_P0) { g.s0 = (int) g.KW; g.s1 = (int) g.KH; g.p0 = g.p1 = 0; g.d0 = g.d1 = 1; }
    if (c->kind == K_2D_S1_PH) { g.s0 = g.s1 = 1; g.p0 = (int) (g.KW / 2); g.p1 = (int) (g.KH / 2); g.d0 = g.d1 = 1; }
    if (c->kind == K_2D_DW) { g.dw = true; g.IC = 1; g.OC = c->ane[3]; }
    return g;
}

static int64_t out_size(int64_t in, int64_t k, int s, int p, int d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

/* y in [OW, OH, OC, N] order (1-D: [OW, OC, N]); depthwise: channel oc reads only data channel oc */
static void conv_ref(const struct geom * g, const double * a, const double * b, double * y, int64_t * n_out) {
    const int64_t OW = out_size(g->IW, g->KW, g->s0, g->p0, g->d0), OH = out_size(g->IH, g->KH, g->s1, g->p1, g->d1);
    const int64_t BC = g->dw ? g->OC : g->IC;  /* the data's channels */
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t oc = 0; oc < g->OC; oc++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double s = 0.0;
                    for (int64_t ic = 0; ic < g->IC; ic++)
                        for (int64_t kh = 0; kh < g->KH; kh++)
                            for (int64_t kw = 0; kw < g->KW; kw++) {
                                const int64_t x = ow * g->s0 + kw * g->d0 - g->p0, yy = oh * g->s1 + kh * g->d1 - g->p1;
                                if (x < 0 || x >= g->IW || yy < 0 || yy >= g->IH) continue;
                                const int64_t bc = g->dw ? oc : ic;
                                s += a[((oc * g->IC + ic) * g->KH + kh) * g->KW + kw] * b[((n * BC + bc) * g->IH + yy) * g->IW + x];
                            }
                    y[((n * g->OC + oc) * OH + oh) * OW + ow] = s;
                }
    *n_out = g->N * g->OC * OH * OW;
}

/* ktype: the kernel's type. An F16 kernel makes F16 patches, as upstream's
 * (the depthwise form keeps F32 ones): the reference reads the data as halves then. */
static void check_forward(const struct conv_case * c, enum ggml_type ktype) {
    struct ggml_context * ctx = tc_ctx(64);
    struct ggml_tensor * a = ggml_new_tensor(ctx, ktype, 4, c->ane), * b = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, c->bne);
    tc_fill_uniform(a, -1, 1);
    tc_fill_uniform(b, -2, 2);
    struct ggml_tensor * y = conv_of(ctx, a, b, c);
    if (!CHECK(y != NULL, "%s: built (%s)", c->name, ggml_last_error())) { ggml_free(ctx); return; }
    const struct geom g = geom_of(c);
    double * av = malloc((size_t) ggml_nelements(a) * sizeof(double)), * bv = malloc((size_t) ggml_nelements(b) * sizeof(double));
    for (int64_t i = 0; i < ggml_nelements(a); i++) av[i] = tc_get(a, i);
    const bool dw = c->kind == K_2D_DW || c->kind == K_1D_DW || c->kind == K_1D_DW_PH;
    const bool half_patches = ktype == GGML_TYPE_F16 && !dw;
    for (int64_t i = 0; i < ggml_nelements(b); i++) bv[i] = half_patches ? tc_ref_round_fp16((float) tc_get(b, i)) : tc_get(b, i);
    const int64_t OW = out_size(g.IW, g.KW, g.s0, g.p0, g.d0), OH = out_size(g.IH, g.KH, g.s1, g.p1, g.d1);
    const bool one_d = c->kind == K_1D || c->kind == K_1D_PH || c->kind == K_1D_DW || c->kind == K_1D_DW_PH;
    const int64_t want[4] = {OW, one_d ? g.OC : OH, one_d ? g.N : g.OC, one_d ? 1 : g.N};
    CHECK(y->ne[0] == want[0] && y->ne[1] == want[1] && y->ne[2] == want[2] && y->ne[3] == want[3],
          "%s: shape [%lld, %lld, %lld, %lld], want [%lld, %lld, %lld, %lld]", c->name, (long long) y->ne[0], (long long) y->ne[1],
          (long long) y->ne[2], (long long) y->ne[3], (long long) want[0], (long long) want[1], (long long) want[2], (long long) want[3]);
    double * ref = malloc((size_t) (want[0] * want[1] * want[2] * want[3]) * sizeof(double));
    int64_t n_ref;
    conv_ref(&g, av, bv, ref, &n_ref);
    struct ggml_cgraph * gr = ggml_new_graph(ctx);
    ggml_build_forward_expand(gr, y);
    void * first = malloc(ggml_nbytes(y));
    for (int nth = 1; nth <= 3; nth++) {
        tc_poison(y);
        tc_compute(ctx, gr, nth);
        if (nth == 1) {
            const double err = n_ref == ggml_nelements(y) ? tc_rel_err_tensor(y, ref) : 1.0;
            CHECK(err <= 1e-6, "%s: relative error %.3g against the direct convolution", c->name, err);
            memcpy(first, y->data, ggml_nbytes(y));
        } else {
            CHECK(memcmp(first, y->data, ggml_nbytes(y)) == 0, "%s: %d threads differ from 1", c->name, nth);
        }
    }
    free(first); free(ref); free(av); free(bv);
    ggml_free(ctx);
}

static struct ggml_tensor * conv_loss(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    return tc_weighted_sum(ctx, conv_of(ctx, p[0], p[1], user));
}

static void check_gradient(const struct conv_case * c) {
    int64_t shapes[2][4];
    memcpy(shapes[0], c->ane, sizeof shapes[0]);
    memcpy(shapes[1], c->bne, sizeof shapes[1]);
    char what[96];
    snprintf(what, sizeof what, "%s gradient", c->name);
    tc_gradcheck(what, conv_loss, (void *) c, 2, (const int64_t (*)[4]) shapes, -1, 1, 1e-2, 1e-3, 1e-2);
}

static const struct conv_case cases[] = {
    {"conv_1d K 3", K_1D, {3, 2, 4, 1}, {9, 2, 1, 1}, 1, 0, 0, 0, 1, 0},
    {"conv_1d s 2 p 2 d 2, batch 3", K_1D, {3, 3, 2, 1}, {11, 3, 3, 1}, 2, 0, 2, 0, 2, 0},
    {"conv_1d_ph K 5 s 1", K_1D_PH, {5, 2, 3, 1}, {8, 2, 2, 1}, 1, 0, 0, 0, 1, 0},
    {"conv_2d 3x3 [7,6,3,2]", K_2D, {3, 3, 3, 4}, {7, 6, 3, 2}, 1, 1, 0, 0, 1, 1},
    {"conv_2d s 2,1 p 1,2 d 1,2, odd", K_2D, {3, 2, 2, 3}, {9, 7, 2, 2}, 2, 1, 1, 2, 1, 2},
    {"conv_2d 1x1", K_2D, {1, 1, 5, 2}, {4, 3, 5, 1}, 1, 1, 0, 0, 1, 1},
    {"conv_2d_sk_p0 2x3", K_2D_SK_P0, {2, 3, 2, 3}, {8, 9, 2, 1}, 0, 0, 0, 0, 0, 0},
    {"conv_2d_s1_ph 3x3", K_2D_S1_PH, {3, 3, 2, 2}, {6, 5, 2, 2}, 0, 0, 0, 0, 0, 0},
    {"conv_2d_dw 3x3 p 1", K_2D_DW, {3, 3, 1, 3}, {6, 5, 3, 2}, 1, 1, 1, 1, 1, 1},
    {"conv_2d_dw s 2 d 2", K_2D_DW, {2, 3, 1, 2}, {9, 8, 2, 1}, 2, 2, 0, 1, 2, 1},
    {"conv_1d_dw K 3 p 1 (upstream's c1)", K_1D_DW, {3, 1, 2, 1}, {6, 2, 1, 1}, 1, 0, 1, 0, 1, 0},
    {"conv_1d_dw s 2 p 2 d 2, batch 3", K_1D_DW, {3, 1, 4, 1}, {11, 4, 3, 1}, 2, 0, 2, 0, 2, 0},
    {"conv_1d_dw_ph K 5 s 3", K_1D_DW_PH, {5, 1, 3, 1}, {10, 3, 2, 1}, 3, 0, 0, 0, 1, 0},
};

/* ggml_conv_3d (im2col_3d + mul_mat, upstream's composition) against
 * ggml_conv_3d_direct, whose kernel has float64 rows in tests/ops/conv.c:
 * a [KW 2, KH 3, KD 2, OC 3 * IC 2], b [5, 6, 4, IC 2 * N 2] */
static struct ggml_tensor * conv_3d_loss(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    (void) user;
    return tc_weighted_sum(ctx, ggml_conv_3d(ctx, p[0], p[1], 2, 1, 2, 1, 1, 0, 1, 1, 1, 2));
}

static void check_conv_3d(void) {
    const int64_t ane[4] = {2, 3, 2, 6}, bne[4] = {5, 6, 4, 4};
    struct ggml_context * ctx = tc_ctx(16);
    struct ggml_tensor * a = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ane), * b = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, bne);
    tc_fill_uniform(a, -1, 1);
    tc_fill_uniform(b, -2, 2);
    struct ggml_tensor * y = ggml_conv_3d(ctx, a, b, 2, 1, 2, 1, 1, 0, 1, 1, 1, 2);
    struct ggml_tensor * z = ggml_conv_3d_direct(ctx, a, b, 1, 2, 1, 1, 0, 1, 1, 1, 2, 2, 2, 3);
    if (!CHECK(y && z, "conv_3d built: %s", ggml_last_error())) { ggml_free(ctx); return; }
    CHECK(ggml_are_same_shape(y, z), "conv_3d: shape [%lld, %lld, %lld, %lld] like conv_3d_direct's", (long long) y->ne[0],
          (long long) y->ne[1], (long long) y->ne[2], (long long) y->ne[3]);
    struct ggml_cgraph * gr = ggml_new_graph(ctx);
    ggml_build_forward_expand(gr, y);
    ggml_build_forward_expand(gr, z);
    tc_compute(ctx, gr, 2);
    double * ref = malloc((size_t) ggml_nelements(z) * sizeof(double));
    for (int64_t i = 0; i < ggml_nelements(z); i++) ref[i] = tc_get(z, i);
    const double err = tc_rel_err_tensor(y, ref);
    CHECK(err <= 1e-6, "conv_3d: relative error %.3g against conv_3d_direct", err);
    free(ref);
    ggml_free(ctx);
    const int64_t shapes[2][4] = {{2, 3, 2, 6}, {5, 6, 4, 4}};
    tc_gradcheck("conv_3d gradient", conv_3d_loss, NULL, 2, shapes, -1, 1, 1e-2, 1e-3, 1e-2);
    printf("%-36s %s\n", "conv_3d (im2col_3d + mul_mat)", "checked");
}

static void check_refused(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * k2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 2, 4), * x2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 8, 2, 1);
    struct ggml_tensor * x3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 8, 3, 1), * tiny = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 2, 2, 1);
    struct ggml_tensor * xi32 = ggml_new_tensor_4d(ctx, GGML_TYPE_I32, 8, 8, 2, 1);
    CHECK(!ggml_im2col(ctx, k2, x2, 1, 1, 0, 0, 1, 1, true, GGML_TYPE_I32), "im2col refuses I32 patches");
    CHECK(!ggml_im2col(ctx, k2, x2, 1, 1, 0, 0, 1, 1, true, GGML_TYPE_Q8_0), "im2col refuses quantized patches");
    CHECK(!ggml_im2col(ctx, k2, xi32, 1, 1, 0, 0, 1, 1, true, GGML_TYPE_F32), "im2col refuses I32 data");
    CHECK(!ggml_im2col(ctx, k2, x3, 1, 1, 0, 0, 1, 1, true, GGML_TYPE_F32), "im2col refuses channels that differ");
    CHECK(!ggml_im2col(ctx, k2, tiny, 1, 1, 0, 0, 1, 1, true, GGML_TYPE_F32), "im2col refuses data smaller than the kernel");
    CHECK(!ggml_im2col(ctx, k2, x2, 0, 1, 0, 0, 1, 1, true, GGML_TYPE_F32), "im2col refuses stride 0");
    CHECK(!ggml_im2col(ctx, k2, x2, 1, 1, -1, 0, 1, 1, true, GGML_TYPE_F32), "im2col refuses a negative padding");
    CHECK(!ggml_im2col(ctx, k2, x2, 1, 1, 0, 0, 1, 0, true, GGML_TYPE_F32), "im2col refuses dilation 0");
    CHECK(!ggml_conv_2d(ctx, k2, x3, 1, 1, 0, 0, 1, 1) && strstr(ggml_last_error(), "ggml_im2col"), "conv_2d passes im2col's message on: %s",
          ggml_last_error());
    int64_t ne[4] = {8, 8, 2, 1};
    struct ggml_tensor * col = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 18, 6, 6, 1);
    CHECK(ggml_im2col_back(ctx, col, k2, ne, 1, 1, 0, 0, 1, 1, true) != NULL, "im2col_back takes the patches of its shape");
    ne[0] = 9;
    CHECK(!ggml_im2col_back(ctx, col, k2, ne, 1, 1, 0, 0, 1, 1, true), "im2col_back refuses patches of another shape");
    struct ggml_tensor * kdw = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 1, 3);
    CHECK(!ggml_conv_2d_dw(ctx, kdw, x2, 1, 1, 1, 1, 1, 1), "conv_2d_dw refuses a kernel of other channels");
    struct ggml_tensor * k1dw = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 1, 3), * x1 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 2, 1);
    CHECK(!ggml_conv_1d_dw(ctx, k1dw, x1, 1, 1, 1) && strstr(ggml_last_error(), "ggml_conv_1d_dw"), "conv_1d_dw refuses a kernel of other channels");
    CHECK(!ggml_conv_1d_dw(ctx, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 2, 2), x1, 1, 1, 1), "conv_1d_dw refuses a kernel [K, 2, C]");
    CHECK(!ggml_conv_1d(ctx, NULL, x2, 1, 0, 1), "conv_1d refuses a NULL kernel");
    /* sizes past 2^62 are refused before any int64_t arithmetic could overflow */
    ggml_set_no_alloc(ctx, true);
    struct ggml_tensor * huge = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, (int64_t) 1 << 60), * h16 = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, (int64_t) 1 << 61);
    if (CHECK(huge && h16, "metadata-only tensors of 2^60 and 2^61 elements (%s)", ggml_last_error())) {
        CHECK(!ggml_concat(ctx, h16, h16, 0) && strstr(ggml_last_error(), "overflow"), "concat refuses 2^62 elements");
        CHECK(!ggml_upscale(ctx, huge, 8, GGML_SCALE_MODE_NEAREST) && strstr(ggml_last_error(), "overflow"), "upscale refuses 2^63");
        CHECK(ggml_pad(ctx, huge, INT_MAX, 0, 0, 0) != NULL, "pad to 2^61 + 2^31 fits (%s)", ggml_last_error());
        CHECK(!ggml_conv_transpose_1d(ctx, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 2, 1, 1), ggml_new_tensor_2d(ctx, GGML_TYPE_F32, (int64_t) 1 << 60, 1),
                                      8, 0, 1) && strstr(ggml_last_error(), "overflow"), "conv_transpose_1d refuses 2^63");
    }
    ggml_free(ctx);
}

int main(void) {
    tc_seed(21);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int before = tc_failures;
        check_forward(&cases[i], GGML_TYPE_F32);
        check_forward(&cases[i], GGML_TYPE_F16);
        check_gradient(&cases[i]);
        printf("%-36s %s\n", cases[i].name, tc_failures == before ? "ok" : "FAILED");
    }
    check_conv_3d();
    check_refused();
    return tc_finish("conv");
}

/* dsv4_hc.c -- rows of DeepSeek V4's hyper-connections: comb (softmax, then
 * Sinkhorn normalisations; no backward rule), pre (the streams mixed into
 * one) and post (the layer's output spread over the streams, the streams
 * mixed), with pre's and post's gradients by finite differences. Value
 * ranges are upstream's test's (weights and comb in [0, 1], post in [0, 2]). */
#include "ops/harness.h"

#include <math.h>

struct comb_case { float eps; int32_t n_iter; };

static struct ggml_tensor * b_comb(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct comb_case * c = p;
    return ggml_dsv4_hc_comb(ctx, in[0], in[1], in[2], c->eps, c->n_iter);
}
static struct ggml_tensor * b_pre(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    (void) p;
    return ggml_dsv4_hc_pre(ctx, in[0], in[1]);
}
static struct ggml_tensor * b_post(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    (void) p;
    return ggml_dsv4_hc_post(ctx, in[0], in[1], in[2], in[3]);
}

static void s_comb(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    (void) p;
    int64_t hc = 1;
    while ((2 + hc) * hc < ne[0][0]) hc++;
    no[0] = hc; no[1] = hc; no[2] = ne[0][1]; no[3] = 1;
}
static void s_pre(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    (void) p;
    no[0] = ne[0][0]; no[1] = ne[0][2]; no[2] = 1; no[3] = 1;
}
static void s_post(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    (void) p;
    for (int d = 0; d < 4; d++) no[d] = ne[1][d];
}

/* C[d + hc s]: divide by eps + the sum over s (over_src) or over d */
static void r_normalise(double * c, int64_t hc, double eps, bool over_src) {
    for (int64_t j = 0; j < hc; j++) {
        double sum = eps;
        for (int64_t m = 0; m < hc; m++) sum += c[over_src ? j + hc * m : m + hc * j];
        for (int64_t m = 0; m < hc; m++) c[over_src ? j + hc * m : m + hc * j] /= sum;
    }
}

static void r_comb(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const struct comb_case * cc = p;
    const int64_t hc = no[0];
    double c[64];
    for (int64_t t = 0; t < no[2]; t++) {
        for (int64_t s = 0; s < hc; s++) {
            double sum = 0;
            for (int64_t d = 0; d < hc; d++) {
                const int64_t m = 2 * hc + d + hc * s;
                c[d + hc * s] = exp(in[0][m + ne[0][0] * t] * in[1][2] + in[2][m]);
                sum += c[d + hc * s];
            }
            for (int64_t d = 0; d < hc; d++) c[d + hc * s] = c[d + hc * s] / sum + cc->eps;
        }
        r_normalise(c, hc, cc->eps, true);
        for (int32_t it = 1; it < cc->n_iter; it++) {
            r_normalise(c, hc, cc->eps, false);
            r_normalise(c, hc, cc->eps, true);
        }
        for (int64_t i = 0; i < hc * hc; i++) out[i + hc * hc * t] = c[i];
    }
}

static void r_pre(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) p;
    for (int64_t t = 0; t < no[1]; t++)
        for (int64_t i = 0; i < no[0]; i++) {
            double sum = 0;
            for (int64_t h = 0; h < ne[0][1]; h++) sum += in[0][ops_at(ne[0], i, h, t, 0)] * in[1][ops_at(ne[1], h, t, 0, 0)];
            out[i + no[0] * t] = sum;
        }
}

static void r_post(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) p;
    OPS_FOR4(no, i, d, t, i3) {
        double sum = in[0][ops_at(ne[0], i, t, 0, 0)] * in[2][ops_at(ne[2], d, t, 0, 0)];
        for (int64_t s = 0; s < no[1]; s++) sum += in[1][ops_at(ne[1], i, s, t, 0)] * in[3][ops_at(ne[3], d, s, t, 0)];
        out[ops_at(no, i, d, t, i3)] = sum;
    }
}

static const struct comb_case iter1 = {1e-6f, 1}, iter4 = {1e-6f, 4}, iter20 = {1e-6f, 20}, eps_big = {0.1f, 3};

#define IN_(S, LO, HI) {.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .layout = OPS_ANY_LAYOUT}
#define COMB_(NAME, CASE, M, T, GRAD)                                                                                  \
    {.op = "DSV4_HC_COMB", .variant = NAME, .build = b_comb, .params = &CASE, .n_in = 3,                               \
     .in = {IN_((M, T, 1, 1), -2, 2), IN_((3, 1, 1, 1), -0.5, 0.5), IN_((M, 1, 1, 1), -0.25, 0.25)}, .shape = s_comb,   \
     .ref = r_comb, .cmp = OPS_NORM2, .tol = 1e-6, .grad = GRAD, .refusal = "no backward rule"}
#define PRE_(NAME, E, H, T, GRAD)                                                                                       \
    {.op = "DSV4_HC_PRE", .variant = NAME, .build = b_pre, .n_in = 2, .in = {IN_((E, H, T, 1), -1, 1), IN_((H, T, 1, 1), 0, 1)}, \
     .shape = s_pre, .ref = r_pre, .cmp = OPS_NORM2, .tol = 1e-6, .grad = GRAD}
#define POST_(NAME, E, H, T, GRAD)                                                                                      \
    {.op = "DSV4_HC_POST", .variant = NAME, .build = b_post, .n_in = 4,                                                \
     .in = {IN_((E, T, 1, 1), -1, 1), IN_((E, H, T, 1), -1, 1), IN_((H, T, 1, 1), 0, 2), IN_((H, H, T, 1), 0, 1)},     \
     .shape = s_post, .ref = r_post, .cmp = OPS_NORM2, .tol = 1e-6, .grad = GRAD}

static const struct ops_row rows[] = {
    COMB_("hc 4, 1 token, 1 iteration", iter1, 24, 1, OPS_FORWARD_ONLY),
    COMB_("hc 4, 17 tokens, 4 iterations", iter4, 24, 17, OPS_FORWARD_ONLY),
    COMB_("hc 4, 17 tokens, 20 iterations", iter20, 24, 17, OPS_FORWARD_ONLY),
    COMB_("hc 2, eps 0.1, 3 iterations", eps_big, 8, 5, OPS_FORWARD_ONLY),
    COMB_("no gradient", iter4, 24, 3, OPS_REFUSED),
    PRE_("1 x 4 x 1", 1, 4, 1, OPS_FORWARD_ONLY),
    PRE_("31 x 4 x 17 (upstream's)", 31, 4, 17, OPS_FORWARD_ONLY),
    PRE_("hc 3", 9, 3, 5, OPS_FORWARD_ONLY),
    PRE_("gradient", 5, 4, 3, OPS_GRAD),
    POST_("1 x 4 x 1", 1, 4, 1, OPS_FORWARD_ONLY),
    POST_("31 x 4 x 17 (upstream's)", 31, 4, 17, OPS_FORWARD_ONLY),
    POST_("hc 3", 9, 3, 5, OPS_FORWARD_ONLY),
    POST_("gradient", 5, 4, 3, OPS_GRAD),
};

/* what the constructors refuse: NULLs, types, shapes, parameters */
static void check_refusals(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * mixes = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 24, 5), * scale = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    struct ggml_tensor * base = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 24), * m23 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 23, 5);
    struct ggml_tensor * m16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 24, 5), * s2 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor * b8 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8), * m3d = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 24, 5, 2);
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_comb(NULL, mixes, scale, base, 1e-6f, 4), "hc_comb without a context");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_comb(ctx, NULL, scale, base, 1e-6f, 4), "hc_comb of NULL mixes");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_comb(ctx, mixes, NULL, base, 1e-6f, 4), "hc_comb of a NULL scale");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_comb(ctx, mixes, scale, NULL, 1e-6f, 4), "hc_comb of a NULL base");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_comb(ctx, m16, scale, base, 1e-6f, 4), "hc_comb of F16 mixes");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_comb(ctx, m23, scale, base, 1e-6f, 4), "hc_comb of 23 mixes (not (2 + hc) hc)");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_comb(ctx, m3d, scale, base, 1e-6f, 4), "hc_comb of 3-D mixes");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_comb(ctx, mixes, s2, base, 1e-6f, 4), "hc_comb with 2 scales");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_comb(ctx, mixes, scale, b8, 1e-6f, 4), "hc_comb with a base not mixes' ne0");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_comb(ctx, mixes, scale, base, 1e-6f, 0), "hc_comb with n_iter 0");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_comb(ctx, mixes, scale, base, -1.0f, 4), "hc_comb with eps < 0");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_comb(ctx, mixes, scale, base, NAN, 4), "hc_comb with a NaN eps");

    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 7, 4, 5), * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5);
    struct ggml_tensor * x16 = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 7, 4, 5), * w3 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 5);
    struct ggml_tensor * x4d = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 7, 4, 5, 2), * w6 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 6);
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_pre(ctx, NULL, w), "hc_pre of a NULL x");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_pre(ctx, x, NULL), "hc_pre of NULL weights");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_pre(ctx, x16, w), "hc_pre of an F16 x");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_pre(ctx, x, w3), "hc_pre with weights for 3 streams");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_pre(ctx, x, w6), "hc_pre with weights for 6 tokens");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_pre(ctx, x4d, w), "hc_pre of a 4-D x");

    struct ggml_tensor * y = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 5), * comb = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 4, 5);
    struct ggml_tensor * y6 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 5), * comb3 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 5);
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_post(ctx, NULL, x, w, comb), "hc_post of a NULL x");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_post(ctx, y, NULL, w, comb), "hc_post of a NULL residual");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_post(ctx, y, x, NULL, comb), "hc_post of a NULL post");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_post(ctx, y, x, w, NULL), "hc_post of a NULL comb");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_post(ctx, y, x16, w, comb), "hc_post of an F16 residual");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_post(ctx, y6, x, w, comb), "hc_post with x's n_embd not residual's");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_post(ctx, y, x, w3, comb), "hc_post with post for 3 streams");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_post(ctx, y, x, w, comb3), "hc_post with a 4 x 3 comb");
    OPS_EXPECT_REFUSED(ggml_dsv4_hc_post(ctx, x, x, w, comb), "hc_post of a 3-D x");
    ggml_free(ctx);
}

const struct ops_family ops_dsv4_hc = {"dsv4_hc", rows, sizeof rows / sizeof rows[0], NULL, check_refusals};

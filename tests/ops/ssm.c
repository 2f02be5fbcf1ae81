/* ssm.c -- rows of the state-space (Mamba) ops: SSM_CONV, SSM_SCAN and their
 * gradient ops SSM_CONV_BACK, SSM_SCAN_BACK, with the constructors'
 * refusals.
 *
 * The references are float64 loops over upstream's definitions. SSM_SCAN's
 * gradient reference is the central difference, in float64, of that forward
 * loop (the scan is smooth: softplus, exp and products), so that it shares
 * no derivation with the kernel's reverse recurrence; SSM_CONV's, being
 * linear, is written out. */
#include "ops/harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- SSM_CONV: sx [d_conv - 1 + n_t, d_inner, n_s], c [d_conv, d_inner] ---- */

/* which: -1 the forward; 0, 1 the gradient of sx, c (SSM_CONV_BACK, dy the last input) */
struct conv_case { int which; };
static const struct conv_case conv_fwd = {-1}, conv_dsx = {0}, conv_dc = {1};

static struct ggml_tensor * b_conv(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    (void) p;
    return ggml_ssm_conv(ctx, in[0], in[1]);
}
static struct ggml_tensor * b_conv_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct conv_case * c = p;
    return ops_grad_node(ctx, in, c->which, 2, b_conv, c);
}

static void s_conv(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const struct conv_case * c = p;
    if (c->which >= 0) { memcpy(no, ne[c->which], 4 * sizeof no[0]); return; }
    no[0] = ne[1][1]; no[1] = ne[0][0] - ne[1][0] + 1; no[2] = ne[0][2]; no[3] = 1;
}

/* y[i, t, s] = sum_k sx[t + k, i, s] c[k, i]; the gradients of sum(y dy) */
static void r_conv(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const struct conv_case * c = p;
    const int64_t L = ne[0][0], D = ne[1][1], S = ne[0][2], K = ne[1][0], T = L - K + 1;
    const double * sx = in[0], * w = in[1], * dy = c->which >= 0 ? in[2] : NULL;
    memset(out, 0, (size_t) ops_nel(no) * sizeof(double));
    for (int64_t s = 0; s < S; s++)
        for (int64_t t = 0; t < T; t++)
            for (int64_t i = 0; i < D; i++)
                for (int64_t k = 0; k < K; k++) {
                    const int64_t ix = (t + k) + L * (i + D * s), iw = k + K * i, iy = i + D * (t + T * s);
                    if (c->which < 0) out[iy] += sx[ix] * w[iw];
                    else if (c->which == 0) out[ix] += dy[iy] * w[iw];
                    else out[iw] += dy[iy] * sx[ix];
                }
}

/* ---- SSM_SCAN: s, x, dt, A, B, C, ids (then dy for the gradient rows) ---- */

/* which: -1 the forward; 0..5 the gradient of s, x, dt, A, B, C (SSM_SCAN_BACK) */
struct scan_case { int64_t K; int which; };

static struct ggml_tensor * b_scan(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct scan_case * c = p;
    return ggml_ssm_scan(ctx, in[0], in[1], in[2], in[3], in[4], in[5], in[6], c->K);
}
static struct ggml_tensor * b_scan_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct scan_case * c = p;
    return ops_grad_node(ctx, in, c->which, 7, b_scan, c);
}

static void s_scan(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const struct scan_case * c = p;
    if (c->which >= 0) { memcpy(no, ne[c->which], 4 * sizeof no[0]); return; }
    no[0] = ops_nel(ne[1]) + c->K * ne[0][0] * ne[0][1] * ne[0][2] * ne[1][3];
    no[1] = no[2] = no[3] = 1;
}

static double softplus(double v) { return v > 20 ? v : log1p(exp(v)); }

/* upstream's scan: per sequence q, head h (group g) and row r,
 * st = s[:, r, h, ids[q]]; per token st = st exp(sp A) + B x sp, y = st . C;
 * then K state slots: slot k the state after token n_t - 1 - k (k = n_t: the
 * starting state), zeros past it */
static void scan_forward(const double * const * in, const int64_t (*ne)[4], int64_t K, double * out) {
    const int64_t D = ne[0][0], R = ne[1][0], H = ne[1][1], T = ne[1][2], Q = ne[1][3], G = ne[4][1], AD = ne[3][0];
    const double * s = in[0], * x = in[1], * dt = in[2], * a = in[3], * b = in[4], * c = in[5], * ids = in[6];
    const int64_t ny = R * H * T * Q;
    memset(out, 0, (size_t) (ny + K * D * R * H * Q) * sizeof(double));
    double * st = malloc((size_t) (D > 0 ? D : 1) * sizeof(double));
    for (int64_t q = 0; q < Q; q++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t r = 0; r < R; r++) {
                const int64_t g = h / (H / G), id = (int64_t) ids[q];
                for (int64_t d = 0; d < D; d++) st[d] = s[d + D * (r + R * (h + H * id))];
                for (int64_t t = 0; t <= T; t++) {
                    if (t > 0) {
                        const double sp = softplus(dt[h + H * ((t - 1) + T * q)]), xv = x[r + R * (h + H * ((t - 1) + T * q))];
                        double y = 0;
                        for (int64_t d = 0; d < D; d++) {
                            const int64_t ib = d + D * (g + G * ((t - 1) + T * q));
                            st[d] = st[d] * exp(sp * a[(AD == 1 ? 0 : d) + AD * h]) + b[ib] * xv * sp;
                            y += st[d] * c[ib];
                        }
                        out[r + R * (h + H * ((t - 1) + T * q))] = y;
                    }
                    const int64_t k = T - t;  /* the state after t tokens is slot T - t */
                    if (k < K)
                        for (int64_t d = 0; d < D; d++) out[ny + d + D * (r + R * (h + H * (q + Q * k)))] = st[d];
                }
            }
    free(st);
}

static void r_scan(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const struct scan_case * c = p;
    if (c->which < 0) { scan_forward(in, ne, c->K, out); return; }
    /* d sum(scan(in) dy) / d in[which], by central differences of the float64 scan */
    const int64_t n_out = ops_nel(ne[7]), n = ops_nel(no);
    double * y = malloc((size_t) n_out * sizeof(double));
    double * v = malloc((size_t) n * sizeof(double));
    memcpy(v, in[c->which], (size_t) n * sizeof(double));
    const double * args[8];
    memcpy(args, in, sizeof args);
    args[c->which] = v;
    const double h = 1e-5;
    for (int64_t i = 0; i < n; i++) {
        double f[2];
        for (int side = 0; side < 2; side++) {
            v[i] = in[c->which][i] + (side ? h : -h);
            scan_forward(args, ne, c->K, y);
            f[side] = 0;
            for (int64_t j = 0; j < n_out; j++) f[side] += y[j] * in[7][j];
        }
        v[i] = in[c->which][i];
        out[i] = (f[1] - f[0]) / (2 * h);
    }
    free(v);
    free(y);
}

/* ids: each sequence starts from the same state row (1), or the rows in reverse */
static void f_ids_same(double * v, const int64_t ne[4]) { for (int64_t q = 0; q < ne[0]; q++) v[q] = 1; }
static void f_ids_rev(double * v, const int64_t ne[4]) { for (int64_t q = 0; q < ne[0]; q++) v[q] = (double) (ne[0] - 1 - q); }

/* ---- the rows ---- */

#define IN_(S, LO, HI, LAYOUT) {.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .layout = LAYOUT}
#define CONV_(NAME, SX, C, GRAD) \
    {.op = "SSM_CONV", .variant = NAME, .build = b_conv, .params = &conv_fwd, .n_in = 2, \
     .in = {IN_(SX, -1, 1, OPS_ANY_LAYOUT), IN_(C, -1, 1, OPS_CONTIG | OPS_TRANSPOSED)}, .shape = s_conv, .ref = r_conv, \
     .cmp = OPS_NORM2, .tol = 1e-6, .grad = GRAD}
#define CONV_BACK_(NAME, CASE, SX, C, DY) \
    {.op = "SSM_CONV_BACK", .variant = NAME, .build = b_conv_back, .params = &CASE, .n_in = 3, \
     .in = {IN_(SX, -1, 1, OPS_CONTIG | OPS_TRANSPOSED), IN_(C, -1, 1, OPS_CONTIG), IN_(DY, -1, 1, OPS_CONTIG)}, .shape = s_conv, \
     .ref = r_conv, .cmp = OPS_NORM2, .tol = 1e-6, .grad = OPS_REFUSED}

/* scan inputs: d_state D, head_dim R, n_head H, n_t T, n_s Q, n_group G, state rows N, A's ne0 AD */
#define SCAN_IN(D, R, H, T, Q, G, N, AD, XLAY, BLAY, IDS)                                                                        \
    IN_((D, R, H, N), -1, 1, OPS_CONTIG), IN_((R, H, T, Q), -1, 1, XLAY), IN_((H, T, Q, 1), -1, 1, OPS_CONTIG),                  \
    IN_((AD, H, 1, 1), -1, -0.5, OPS_CONTIG), IN_((D, G, T, Q), -1, 1, BLAY), IN_((D, G, T, Q), -1, 1, BLAY),                     \
    {.ne = {Q, 1, 1, 1}, .lo = 0, .hi = N - 1, .type = GGML_TYPE_I32, .fixed = true, .fill = IDS}
#define SCAN_OUT(D, R, H, T, Q, N, K) (R * H * T * Q + K * D * R * H * Q)
#define SCAN_(NAME, CASE, GRAD, ...)                                                                                             \
    {.op = "SSM_SCAN", .variant = NAME, .build = b_scan, .params = &CASE, .n_in = 7, .in = {__VA_ARGS__}, .shape = s_scan,        \
     .ref = r_scan, .cmp = OPS_NORM2, .tol = 1e-6, .grad = GRAD}
#define SCAN_BACK_(NAME, CASE, D, R, H, T, Q, G, N, AD, K)                                                                       \
    {.op = "SSM_SCAN_BACK", .variant = NAME, .build = b_scan_back, .params = &CASE, .n_in = 8,                                   \
     .in = {SCAN_IN(D, R, H, T, Q, G, N, AD, OPS_CONTIG, OPS_CONTIG, f_ids_same),                                                \
            IN_((SCAN_OUT(D, R, H, T, Q, N, K), 1, 1, 1), -1, 1, OPS_CONTIG)},                                                   \
     .shape = s_scan, .ref = r_scan, .cmp = OPS_NORM2, .tol = 2e-5, .grad = OPS_REFUSED}

static const struct scan_case k1 = {1, -1}, k3 = {3, -1}, k6 = {6, -1}, k2 = {2, -1};
static const struct scan_case back3[6] = {{3, 0}, {3, 1}, {3, 2}, {3, 3}, {3, 4}, {3, 5}};
static const struct scan_case back1_A = {1, 3}, back1_dt = {1, 2}, back6_s = {6, 0};

static const struct ops_row rows[] = {
    CONV_("[6,4,2] by [3,4]", (6, 4, 2, 1), (3, 4, 1, 1), OPS_GRAD),
    CONV_("n_t = 1 (one token): [4,5,3] by [4,5]", (4, 5, 3, 1), (4, 5, 1, 1), OPS_GRAD),
    CONV_("d_conv = 1", (5, 3, 2, 1), (1, 3, 1, 1), OPS_GRAD),
    CONV_("n_t = 0: empty", (3, 4, 2, 1), (4, 4, 1, 1), OPS_FORWARD_ONLY),
    CONV_("[67,37,3] by [4,37]: rows over threads", (67, 37, 3, 1), (4, 37, 1, 1), OPS_FORWARD_ONLY),
    CONV_BACK_("sx", conv_dsx, (7, 4, 2, 1), (3, 4, 1, 1), (4, 5, 2, 1)),
    CONV_BACK_("c", conv_dc, (7, 4, 2, 1), (3, 4, 1, 1), (4, 5, 2, 1)),
    SCAN_("Mamba-2, 2 groups, K = 1", k1, OPS_GRAD,
          SCAN_IN(3, 2, 4, 3, 2, 2, 3, 1, OPS_CONTIG | OPS_PERMUTED, OPS_CONTIG | OPS_TRANSPOSED, NULL)),
    SCAN_("Mamba-1 (A [d_state, n_head]), head_dim 1", k1, OPS_GRAD, SCAN_IN(4, 1, 3, 4, 2, 1, 2, 4, OPS_CONTIG, OPS_CONTIG, f_ids_rev)),
    SCAN_("Mamba-2, K = 3 states of 4 tokens, shared start", k3, OPS_GRAD,
          SCAN_IN(3, 2, 4, 4, 2, 2, 3, 1, OPS_CONTIG, OPS_CONTIG, f_ids_same)),
    SCAN_("K = 6 past 3 tokens: the start, then zeros", k6, OPS_GRAD, SCAN_IN(2, 2, 2, 3, 2, 1, 2, 1, OPS_CONTIG, OPS_CONTIG, f_ids_rev)),
    SCAN_("n_t = 0: the starting states pass through", k2, OPS_FORWARD_ONLY,
          SCAN_IN(3, 2, 2, 0, 2, 1, 2, 1, OPS_CONTIG, OPS_CONTIG, f_ids_rev)),
    SCAN_("d_state 16, 8 heads, 3 sequences: over threads", k1, OPS_FORWARD_ONLY,
          SCAN_IN(16, 4, 8, 5, 3, 2, 4, 1, OPS_CONTIG, OPS_CONTIG, NULL)),
    /* the state rows as a parameter: indices, no gradient */
    {.op = "SSM_SCAN", .variant = "ids a parameter", .build = b_scan, .params = &k1, .n_in = 7,
     .in = {{.ne = {2, 2, 2, 2}, .lo = -1, .hi = 1, .fixed = true}, {.ne = {2, 2, 2, 1}, .lo = -1, .hi = 1, .fixed = true},
            {.ne = {2, 2, 1, 1}, .lo = -1, .hi = 1, .fixed = true}, {.ne = {1, 2, 1, 1}, .lo = -1, .hi = -0.5, .fixed = true},
            {.ne = {2, 1, 2, 1}, .lo = -1, .hi = 1, .fixed = true}, {.ne = {2, 1, 2, 1}, .lo = -1, .hi = 1, .fixed = true},
            {.ne = {1, 1, 1, 1}, .lo = 0, .hi = 1, .type = GGML_TYPE_I32}},
     .shape = s_scan, .ref = r_scan, .cmp = OPS_NORM2, .tol = 1e-6, .grad = OPS_REFUSED, .refusal = "indices"},
    SCAN_BACK_("s, K = 3, shared start", back3[0], 3, 2, 4, 4, 2, 2, 3, 1, 3),
    SCAN_BACK_("x, K = 3", back3[1], 3, 2, 4, 4, 2, 2, 3, 1, 3),
    SCAN_BACK_("dt, K = 3", back3[2], 3, 2, 4, 4, 2, 2, 3, 1, 3),
    SCAN_BACK_("A [1, n_head], K = 3", back3[3], 3, 2, 4, 4, 2, 2, 3, 1, 3),
    SCAN_BACK_("B, K = 3", back3[4], 3, 2, 4, 4, 2, 2, 3, 1, 3),
    SCAN_BACK_("C, K = 3", back3[5], 3, 2, 4, 4, 2, 2, 3, 1, 3),
    SCAN_BACK_("A [d_state, n_head] (Mamba-1)", back1_A, 4, 1, 3, 4, 2, 1, 2, 4, 1),
    SCAN_BACK_("dt (Mamba-1)", back1_dt, 4, 1, 3, 4, 2, 1, 2, 4, 1),
    SCAN_BACK_("s, K = 6 past 3 tokens", back6_s, 2, 2, 2, 3, 2, 1, 2, 1, 6),
};

/* ---- refusals ---- */

/* out's compute fails with a message naming `expect`, on 1 and 3 threads */
static void expect_compute_fails(struct ggml_context * ctx, struct ggml_tensor * out, const char * expect, const char * what) {
    if (!CHECK(out != NULL, "%s: constructor returned NULL: %s", what, ggml_last_error())) return;
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_expand(g, out);
    for (int nth = 1; nth <= 3; nth += 2) {
        ggml_clear_error();
        const enum ggml_status st = ggml_graph_compute_with_ctx(ctx, g, nth);
        CHECK(st == GGML_STATUS_FAILED && strstr(ggml_last_error(), expect) != NULL, "%s (%d threads): status %d, message '%s'", what,
              nth, (int) st, ggml_last_error());
    }
    ggml_clear_error();
}

static void check_refusals(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * sx = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 6, 4, 2), * c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 4);
    OPS_EXPECT_REFUSED(ggml_ssm_conv(NULL, sx, c), "ssm_conv without a context");
    OPS_EXPECT_REFUSED(ggml_ssm_conv(ctx, NULL, c), "ssm_conv of NULL sx");
    OPS_EXPECT_REFUSED(ggml_ssm_conv(ctx, sx, NULL), "ssm_conv of NULL c");
    OPS_EXPECT_REFUSED(ggml_ssm_conv(ctx, ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 6, 4, 2), c), "ssm_conv of F16 sx");
    OPS_EXPECT_REFUSED(ggml_ssm_conv(ctx, sx, ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 4)), "ssm_conv of I32 c");
    OPS_EXPECT_REFUSED(ggml_ssm_conv(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 4, 2, 2), c), "ssm_conv of 4-D sx");
    OPS_EXPECT_REFUSED(ggml_ssm_conv(ctx, sx, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 4, 2)), "ssm_conv of 3-D c");
    OPS_EXPECT_REFUSED(ggml_ssm_conv(ctx, sx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 5)), "ssm_conv, d_inner 5 vs 4");
    OPS_EXPECT_REFUSED(ggml_ssm_conv(ctx, sx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 4)), "ssm_conv, d_conv 8 past sx's 6 + 1");
    OPS_EXPECT_REFUSED(ggml_ssm_conv(ctx, sx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 0, 4)), "ssm_conv, d_conv 0");

    /* a valid scan: d_state 3, head_dim 2, n_head 4, n_t 3, n_s 2, n_group 2, 3 state rows */
    struct ggml_tensor * s = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 4, 3), * x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 4, 3, 2);
    struct ggml_tensor * dt = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2), * A = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, 4);
    struct ggml_tensor * B = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 3, 2), * C = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 3, 2);
    struct ggml_tensor * ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
    CHECK(ggml_ssm_scan(ctx, s, x, dt, A, B, C, ids, 1) != NULL, "ssm_scan of valid inputs: %s", ggml_last_error());
    struct ggml_tensor * const args[7] = {s, x, dt, A, B, C, ids};
    for (int i = 0; i < 7; i++) {
        struct ggml_tensor * a[7];
        memcpy(a, args, sizeof a);
        a[i] = NULL;
        OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, a[0], a[1], a[2], a[3], a[4], a[5], a[6], 1), "ssm_scan with a NULL source");
        a[i] = ggml_new_tensor(ctx, i == 6 ? GGML_TYPE_F32 : GGML_TYPE_F16, 4, args[i]->ne);
        OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, a[0], a[1], a[2], a[3], a[4], a[5], a[6], 1), "ssm_scan with a source of the wrong type");
    }
    OPS_EXPECT_REFUSED(ggml_ssm_scan(NULL, s, x, dt, A, B, C, ids, 1), "ssm_scan without a context");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, dt, A, B, C, ids, 0), "ssm_scan with K = 0");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, dt, A, B, C, ids, (int64_t) INT32_MAX + 1), "ssm_scan with K = 2^31");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 2, 2), A, B, C, ids, 1), "ssm_scan, dt's n_t");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 2, 2), A, B, C, ids, 1), "ssm_scan, 4-D dt");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 4, 3), x, dt, A, B, C, ids, 1), "ssm_scan, s's head_dim");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 2, 3), x, dt, A, B, C, ids, 1), "ssm_scan, s's n_head");
    struct ggml_tensor * b4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 2, 3, 2), * g3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 3, 2);
    struct ggml_tensor * g0 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 0, 3, 2);
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, dt, A, b4, b4, ids, 1), "ssm_scan, B's d_state");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, dt, A, B, b4, ids, 1), "ssm_scan, C unlike B");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, dt, A, g3, g3, ids, 1), "ssm_scan, 3 groups of 4 heads");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, dt, A, g0, g0, ids, 1), "ssm_scan, 0 groups");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, dt, A, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 2, 2), C, ids, 1), "ssm_scan, B's n_t");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, dt, A, B, C, ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3), 1), "ssm_scan, 3 ids for 2 sequences");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, dt, A, B, C, ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 2, 2), 1), "ssm_scan, ids a matrix");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, dt, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 4), B, C, ids, 1), "ssm_scan, A [2, n_head]");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, dt, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, 3), B, C, ids, 1), "ssm_scan, A's n_head");
    struct ggml_tensor * a1 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 4);
    CHECK(ggml_ssm_scan(ctx, s, x, dt, a1, B, C, ids, 1) != NULL, "ssm_scan, Mamba-1 A: %s", ggml_last_error());
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, dt, a1, B, C, ids, 2), "ssm_scan, Mamba-1 A with K = 2");
    OPS_EXPECT_REFUSED(ggml_ssm_scan(ctx, s, x, dt, A, B, C, ids, INT32_MAX), "ssm_scan, K = 2^31 - 1 states do not fit");

    /* an id that is not a row of s fails the compute */
    tc_fill_uniform(s, -1, 1); tc_fill_uniform(x, -1, 1); tc_fill_uniform(dt, -1, 1); tc_fill_uniform(A, -1, -0.5);
    tc_fill_uniform(B, -1, 1); tc_fill_uniform(C, -1, 1);
    const int32_t bad[2][2] = {{0, 3}, {-1, 0}};
    for (int i = 0; i < 2; i++) {
        memcpy(ids->data, bad[i], sizeof bad[i]);
        expect_compute_fails(ctx, ggml_ssm_scan(ctx, s, x, dt, A, B, C, ids, 1), "not a row of s", "ssm_scan, an id out of range");
    }
    ggml_free(ctx);
}

const struct ops_family ops_ssm = {"ssm", rows, sizeof rows / sizeof rows[0], NULL, check_refusals};

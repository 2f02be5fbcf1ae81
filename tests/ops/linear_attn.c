/* linear_attn.c -- rows of the recurrent linear attentions (RWKV_WKV6,
 * GATED_LINEAR_ATTN, RWKV_WKV7, GATED_DELTA_NET), their float64 references
 * (the recurrences as plain loops, states in double; the gradients by central
 * differences of them) and the constructors' refusals. Decays stay in (0, 1), as the models make them. */
#include "ops/harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct la_case {
    float scale;  /* GATED_LINEAR_ATTN */
    int64_t K;    /* GATED_DELTA_NET's snapshots */
};

static struct ggml_tensor * b_wkv6(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    (void) p;
    return ggml_rwkv_wkv6(ctx, in[0], in[1], in[2], in[3], in[4], in[5]);
}
static struct ggml_tensor * b_gla(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return ggml_gated_linear_attn(ctx, in[0], in[1], in[2], in[3], in[4], ((const struct la_case *) p)->scale);
}
static struct ggml_tensor * b_wkv7(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    (void) p;
    return ggml_rwkv_wkv7(ctx, in[0], in[1], in[2], in[3], in[4], in[5], in[6]);
}
static struct ggml_tensor * b_gdn(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return ggml_gated_delta_net(ctx, in[0], in[1], in[2], in[3], in[4], in[5], ((const struct la_case *) p)->K);
}

/* autodiff's RWKV_WKV6_BACK / GATED_LINEAR_ATTN_BACK: the packed gradients
 * of every input of the forward row (the gradient node of k is a slice of
 * it); the weight dy = dL/d(result) is the last input */
static struct ggml_tensor * back_of(struct ggml_tensor * grad_k) { return grad_k ? grad_k->view_src : NULL; }
static struct ggml_tensor * b_wkv6_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return back_of(ops_grad_node(ctx, in, 0, 6, b_wkv6, p));
}
static struct ggml_tensor * b_wkv7_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return back_of(ops_grad_node(ctx, in, 0, 7, b_wkv7, p));
}
static struct ggml_tensor * b_gdn_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return back_of(ops_grad_node(ctx, in, 0, 6, b_gdn, p));
}
static struct ggml_tensor * b_gla_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return back_of(ops_grad_node(ctx, in, 0, 5, b_gla, p));
}

/* ---- float64 ---- */

/* element (i, h, t) of a per-token input [S, H, T] */
#define TOK(x, i, h, t) (x)[(i) + S * ((h) + H * (t))]

/* RWKV_WKV6 (k, v, r, tf, td, state) and GATED_LINEAR_ATTN (k, v, q, g,
 * state): the state P[i][j] (key i, value j) of sequence n, head h */
static void decay_ref(const double * const * in, const int64_t (*ne)[4], bool wkv6, double scale, double * out) {
    const int64_t S = ne[0][0], H = ne[0][1], T = ne[0][2], C = S * H;
    const double * k = in[0], * v = in[1], * q = in[2], * w = in[wkv6 ? 4 : 3], * st = in[wkv6 ? 5 : 4];
    const int64_t n_seqs = ne[wkv6 ? 5 : 4][1], Ts = T / n_seqs;
    double * P = malloc(sizeof(double) * (size_t) (S * S));
    for (int64_t n = 0; n < n_seqs; n++)
        for (int64_t h = 0; h < H; h++) {
            for (int64_t e = 0; e < S * S; e++) P[e] = st[(n * H + h) * S * S + e];
            for (int64_t t = n * Ts; t < (n + 1) * Ts; t++) {
                if (!wkv6)  /* GLA reads the state after the update */
                    for (int64_t i = 0; i < S; i++)
                        for (int64_t j = 0; j < S; j++) P[i * S + j] = TOK(w, i, h, t) * P[i * S + j] + TOK(k, i, h, t) * TOK(v, j, h, t);
                for (int64_t j = 0; j < S; j++) {
                    double y = 0;
                    for (int64_t i = 0; i < S; i++)
                        y += wkv6 ? TOK(q, i, h, t) * (in[3][i + S * h] * TOK(k, i, h, t) * TOK(v, j, h, t) + P[i * S + j])
                                  : TOK(q, i, h, t) * P[i * S + j];
                    out[t * C + h * S + j] = scale * y;
                }
                if (wkv6)
                    for (int64_t i = 0; i < S; i++)
                        for (int64_t j = 0; j < S; j++) P[i * S + j] = TOK(w, i, h, t) * P[i * S + j] + TOK(k, i, h, t) * TOK(v, j, h, t);
            }
            for (int64_t e = 0; e < S * S; e++) out[C * T + (n * H + h) * S * S + e] = P[e];
        }
    free(P);
}

static void r_wkv6(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) p; (void) no;
    decay_ref(in, ne, true, 1.0, out);
}
static void r_gla(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    decay_ref(in, ne, false, ((const struct la_case *) p)->scale, out);
}

/* The gradients of sum(fwd(x) * dy) with respect to the n inputs x (dy is
 * in[n], shaped like fwd's result), packed input after input: central
 * differences of the float64 reference, step 1e-6 (their error, about 1e-10,
 * far below the rows' tolerance). */
static void fd_grads(ops_ref_fn fwd, int n, const double * const * in, const int64_t (*ne)[4], const void * p, double * out) {
    const int64_t n_out = ops_nel(ne[n]);
    double * x[OPS_MAX_IN], * y = malloc(sizeof(double) * (size_t) n_out);
    for (int s = 0; s < n; s++) {
        x[s] = malloc(sizeof(double) * (size_t) ops_nel(ne[s]));
        memcpy(x[s], in[s], sizeof(double) * (size_t) ops_nel(ne[s]));
    }
    const double h = 1e-6;
    int64_t at = 0;
    for (int s = 0; s < n; s++)
        for (int64_t e = 0; e < ops_nel(ne[s]); e++) {
            double loss[2];
            for (int side = 0; side < 2; side++) {
                x[s][e] = in[s][e] + (side ? -h : h);
                fwd((const double * const *) x, ne, p, y, NULL);
                loss[side] = 0;
                for (int64_t k = 0; k < n_out; k++) loss[side] += y[k] * in[n][k];
            }
            x[s][e] = in[s][e];
            out[at++] = (loss[0] - loss[1]) / (2 * h);
        }
    for (int s = 0; s < n; s++) free(x[s]);
    free(y);
}

static void r_wkv6_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    fd_grads(r_wkv6, 6, in, ne, p, out);
}
static void r_gla_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    fd_grads(r_gla, 5, in, ne, p, out);
}

/* RWKV_WKV7 (r, w, k, v, a, b, state): the state P[i][j] (value i, key j) */
static void r_wkv7(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) p; (void) no;
    const int64_t S = ne[0][0], H = ne[0][1], T = ne[0][2], C = S * H, n_seqs = ne[6][1], Ts = T / n_seqs;
    const double * r = in[0], * w = in[1], * k = in[2], * v = in[3], * a = in[4], * b = in[5];
    double * P = malloc(sizeof(double) * (size_t) (S * S));
    for (int64_t n = 0; n < n_seqs; n++)
        for (int64_t h = 0; h < H; h++) {
            for (int64_t e = 0; e < S * S; e++) P[e] = in[6][(n * H + h) * S * S + e];
            for (int64_t t = n * Ts; t < (n + 1) * Ts; t++)
                for (int64_t i = 0; i < S; i++) {
                    double sa = 0, y = 0;
                    for (int64_t j = 0; j < S; j++) sa += P[i * S + j] * TOK(a, j, h, t);
                    for (int64_t j = 0; j < S; j++) {
                        P[i * S + j] = P[i * S + j] * TOK(w, j, h, t) + TOK(v, i, h, t) * TOK(k, j, h, t) + sa * TOK(b, j, h, t);
                        y += P[i * S + j] * TOK(r, j, h, t);
                    }
                    out[t * C + h * S + i] = y;
                }
            for (int64_t e = 0; e < S * S; e++) out[C * T + (n * H + h) * S * S + e] = P[e];
        }
    free(P);
}

static void r_wkv7_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    fd_grads(r_wkv7, 7, in, ne, p, out);
}

/* GATED_DELTA_NET (q, k, v, g, beta, state): Sm[i][j], key i, value j; the
 * state tensor's element (i, j, h, n) is Sm[i][j] */
static void r_gdn(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    const int64_t K = ((const struct la_case *) p)->K;
    const int64_t S = ne[2][0], H = ne[2][1], T = ne[2][2], B = ne[2][3], G = ne[3][0];
    const int64_t Hq = ne[0][1], Bq = ne[0][3], Hk = ne[1][1], Bk = ne[1][3];
    double * Sm = malloc(sizeof(double) * (size_t) (S * S));
    const int64_t states = S * H * T * B, snap = S * S * H * B;
    for (int64_t n = 0; n < B; n++)
        for (int64_t h = 0; h < H; h++) {
            for (int64_t i = 0; i < S; i++)
                for (int64_t j = 0; j < S; j++) Sm[i * S + j] = in[5][ops_at(ne[5], i, j, h, n)];
            for (int64_t s = T; s < K; s++)
                for (int64_t i = 0; i < S; i++)
                    for (int64_t j = 0; j < S; j++) out[states + s * snap + (n * H + h) * S * S + j * S + i] = Sm[i * S + j];
            for (int64_t t = 0; t < T; t++) {
                const double beta = in[4][ops_at(ne[4], 0, h, t, n)];
                for (int64_t i = 0; i < S; i++)
                    for (int64_t j = 0; j < S; j++) Sm[i * S + j] *= exp(in[3][ops_at(ne[3], G == 1 ? 0 : i, h, t, n)]);
                for (int64_t j = 0; j < S; j++) {
                    double kS = 0;
                    for (int64_t i = 0; i < S; i++) kS += Sm[i * S + j] * in[1][ops_at(ne[1], i, h % Hk, t, n / (B / Bk))];
                    const double d = beta * (in[2][ops_at(ne[2], j, h, t, n)] - kS);
                    for (int64_t i = 0; i < S; i++) Sm[i * S + j] += in[1][ops_at(ne[1], i, h % Hk, t, n / (B / Bk))] * d;
                }
                for (int64_t j = 0; j < S; j++) {
                    double y = 0;
                    for (int64_t i = 0; i < S; i++) y += Sm[i * S + j] * in[0][ops_at(ne[0], i, h % Hq, t, n / (B / Bq))];
                    out[((n * T + t) * H + h) * S + j] = y / sqrt((double) S);
                }
                if (T - 1 - t < K)
                    for (int64_t i = 0; i < S; i++)
                        for (int64_t j = 0; j < S; j++) out[states + (T - 1 - t) * snap + (n * H + h) * S * S + j * S + i] = Sm[i * S + j];
            }
        }
    free(Sm);
}

static void r_gdn_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    fd_grads(r_gdn, 6, in, ne, p, out);
}

/* ---- shapes ---- */

/* [S*H, n_tokens + S*n_seqs], n_seqs the state's (input n_state) ne1 */
static void rec_shape(const int64_t (*ne)[4], int n_state, int64_t no[4]) {
    no[0] = ne[0][0] * ne[0][1]; no[1] = ne[0][2] + ne[0][0] * ne[n_state][1]; no[2] = no[3] = 1;
}
static void s_wkv6(const int64_t (*ne)[4], const void * p, int64_t no[4]) { (void) p; rec_shape(ne, 5, no); }
static void s_gla(const int64_t (*ne)[4], const void * p, int64_t no[4]) { (void) p; rec_shape(ne, 4, no); }
static void s_wkv7(const int64_t (*ne)[4], const void * p, int64_t no[4]) { (void) p; rec_shape(ne, 6, no); }
/* the packed gradients: as many as the forward's n inputs hold */
static void packed_shape(const int64_t (*ne)[4], int n, int64_t no[4]) {
    no[0] = 0; no[1] = no[2] = no[3] = 1;
    for (int s = 0; s < n; s++) no[0] += ops_nel(ne[s]);
}
static void s_wkv6_back(const int64_t (*ne)[4], const void * p, int64_t no[4]) { (void) p; packed_shape(ne, 6, no); }
static void s_gla_back(const int64_t (*ne)[4], const void * p, int64_t no[4]) { (void) p; packed_shape(ne, 5, no); }
static void s_wkv7_back(const int64_t (*ne)[4], const void * p, int64_t no[4]) { (void) p; packed_shape(ne, 7, no); }
static void s_gdn_back(const int64_t (*ne)[4], const void * p, int64_t no[4]) { (void) p; packed_shape(ne, 6, no); }
static void s_gdn(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const int64_t S = ne[2][0], H = ne[2][1], T = ne[2][2], B = ne[2][3];
    no[0] = S * H; no[1] = T * B + ((const struct la_case *) p)->K * S * B; no[2] = no[3] = 1;
}

static const struct la_case no_case = {0, 0}, gla_half = {0.5f, 0}, gdn_k1 = {0, 1}, gdn_k2 = {0, 2}, gdn_k4 = {0, 4};

#define IN_(S, LO, HI, LAY) {.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .layout = LAY}
#define TOKS(S, H, T, LAY) IN_((S, H, T, 1), -1, 1, LAY)
#define DECAY(S, H, T, LAY) IN_((S, H, T, 1), 0.3, 0.95, LAY)
#define STATE(S, H, N) IN_((S * S * H, N, 1, 1), -1, 1, OPS_CONTIG)
/* REFUSAL: a word autodiff's message holds where GRAD is OPS_REFUSED */
#define ROWR_(OP, NAME, BUILD, REF, SHAPE, CASE, GRAD, REFUSAL, N, ...)                                                        \
    {.op = OP, .variant = NAME, .build = BUILD, .params = &CASE, .n_in = N, .in = {__VA_ARGS__}, .shape = SHAPE, .ref = REF, \
     .cmp = OPS_NORM2, .tol = 1e-5, .grad = GRAD, .refusal = REFUSAL}
#define ROW_(OP, NAME, BUILD, REF, SHAPE, CASE, GRAD, N, ...) \
    ROWR_(OP, NAME, BUILD, REF, SHAPE, CASE, GRAD, "no backward rule", N, __VA_ARGS__)
#define WKV6_(NAME, S, H, T, N, LAY, GRAD)                                                                                        \
    ROW_("RWKV_WKV6", NAME, b_wkv6, r_wkv6, s_wkv6, no_case, GRAD, 6, TOKS(S, H, T, LAY), TOKS(S, H, T, OPS_CONTIG),          \
         TOKS(S, H, T, LAY), IN_((S, H, 1, 1), -1, 1, OPS_CONTIG), DECAY(S, H, T, OPS_CONTIG), STATE(S, H, N))
#define GLA_(NAME, S, H, T, N, LAY, GRAD)                                                                                         \
    ROW_("GATED_LINEAR_ATTN", NAME, b_gla, r_gla, s_gla, gla_half, GRAD, 5, TOKS(S, H, T, LAY), TOKS(S, H, T, OPS_CONTIG),    \
         TOKS(S, H, T, OPS_CONTIG), DECAY(S, H, T, LAY), STATE(S, H, N))
#define WKV7_IN(S, H, T, N, LAY)                                                                                                  \
    TOKS(S, H, T, LAY), DECAY(S, H, T, OPS_CONTIG), TOKS(S, H, T, OPS_CONTIG), TOKS(S, H, T, LAY),                              \
        IN_((S, H, T, 1), -0.5, 0.5, OPS_CONTIG), IN_((S, H, T, 1), -0.5, 0.5, OPS_CONTIG), STATE(S, H, N)
#define WKV7_(NAME, S, H, T, N, LAY, GRAD) \
    ROW_("RWKV_WKV7", NAME, b_wkv7, r_wkv7, s_wkv7, no_case, GRAD, 7, WKV7_IN(S, H, T, N, LAY))
#define WKV7_BACK_(NAME, S, H, T, N, LAY)                                                                                \
    ROW_("RWKV_WKV7_BACK", NAME, b_wkv7_back, r_wkv7_back, s_wkv7_back, no_case, OPS_REFUSED, 8, WKV7_IN(S, H, T, N, LAY), \
         IN_((S * H, T + S * N, 1, 1), -1, 1, OPS_CONTIG))
/* the gradient rows: the forward's inputs, then dy [S*H, T + S*N] */
#define WKV6_BACK_(NAME, S, H, T, N, LAY)                                                                                     \
    ROW_("RWKV_WKV6_BACK", NAME, b_wkv6_back, r_wkv6_back, s_wkv6_back, no_case, OPS_REFUSED, 7, TOKS(S, H, T, LAY),         \
         TOKS(S, H, T, OPS_CONTIG), TOKS(S, H, T, OPS_CONTIG), IN_((S, H, 1, 1), -1, 1, OPS_CONTIG), DECAY(S, H, T, OPS_CONTIG), \
         STATE(S, H, N), IN_((S * H, T + S * N, 1, 1), -1, 1, OPS_CONTIG))
#define GLA_BACK_(NAME, S, H, T, N, LAY)                                                                                      \
    ROW_("GATED_LINEAR_ATTN_BACK", NAME, b_gla_back, r_gla_back, s_gla_back, gla_half, OPS_REFUSED, 6, TOKS(S, H, T, LAY),   \
         TOKS(S, H, T, OPS_CONTIG), TOKS(S, H, T, OPS_CONTIG), DECAY(S, H, T, OPS_CONTIG), STATE(S, H, N),                    \
         IN_((S * H, T + S * N, 1, 1), -1, 1, OPS_CONTIG))
/* q, k [S, Hk, T, Bk]; v [S, H, T, B]; g [G, H, T, B] */
#define GDN_IN(S, Hk, H, T, Bk, B, G, LAY)                                                                                     \
    IN_((S, Hk, T, Bk), -0.5, 0.5, LAY), IN_((S, Hk, T, Bk), -0.5, 0.5, OPS_CONTIG), IN_((S, H, T, B), -1, 1, LAY),            \
        IN_((G, H, T, B), -2, -0.01, OPS_CONTIG), IN_((1, H, T, B), 0, 1, OPS_CONTIG), IN_((S, S, H, B), -1, 1, LAY)
#define GDN_(NAME, CASE, S, Hk, H, T, Bk, B, G, LAY, GRAD) \
    ROWR_("GATED_DELTA_NET", NAME, b_gdn, r_gdn, s_gdn, CASE, GRAD, "shared", 6, GDN_IN(S, Hk, H, T, Bk, B, G, LAY))
/* the gradient rows: dy [S*H, T*B + K*S*B] */
#define GDN_BACK_(NAME, CASE, K, S, H, T, B, G, LAY)                                                                                \
    ROW_("GATED_DELTA_NET_BACK", NAME, b_gdn_back, r_gdn_back, s_gdn_back, CASE, OPS_REFUSED, 7, GDN_IN(S, H, H, T, B, B, G, LAY), \
         IN_((S * H, T * B + K * S * B, 1, 1), -1, 1, OPS_CONTIG))

static const struct ops_row rows[] = {
    WKV6_("S 4, 2 heads, 2 sequences of 3", 4, 2, 6, 2, OPS_CONTIG, OPS_GRAD),
    WKV6_("k, r in any layout", 4, 2, 3, 1, OPS_ANY_LAYOUT, OPS_GRAD),
    WKV6_("S 8, 5 heads over threads", 8, 5, 4, 1, OPS_CONTIG, OPS_FORWARD_ONLY),
    WKV6_BACK_("S 4, 2 heads, 2 sequences of 3", 4, 2, 6, 2, OPS_CONTIG),
    WKV6_BACK_("k in any layout, 3 tokens", 4, 2, 3, 1, OPS_ANY_LAYOUT),
    WKV6_BACK_("S 8, 5 heads over threads", 8, 5, 4, 1, OPS_CONTIG),
    GLA_("S 4, 2 heads, 2 sequences of 3", 4, 2, 6, 2, OPS_CONTIG, OPS_GRAD),
    GLA_("k, g in any layout", 4, 2, 3, 1, OPS_ANY_LAYOUT, OPS_GRAD),
    GLA_("S 8, 5 heads over threads", 8, 5, 4, 1, OPS_CONTIG, OPS_FORWARD_ONLY),
    GLA_BACK_("S 4, 2 heads, 2 sequences of 3", 4, 2, 6, 2, OPS_CONTIG),
    GLA_BACK_("k in any layout, 3 tokens", 4, 2, 3, 1, OPS_ANY_LAYOUT),
    GLA_BACK_("S 8, 5 heads over threads", 8, 5, 4, 1, OPS_CONTIG),
    WKV7_("S 4, 2 heads, 2 sequences of 3", 4, 2, 6, 2, OPS_CONTIG, OPS_GRAD),
    WKV7_("r, v in any layout", 4, 2, 3, 1, OPS_ANY_LAYOUT, OPS_GRAD),
    WKV7_("S 8, 5 heads over threads", 8, 5, 4, 1, OPS_CONTIG, OPS_FORWARD_ONLY),
    WKV7_BACK_("S 4, 2 heads, 2 sequences of 3", 4, 2, 6, 2, OPS_CONTIG),
    WKV7_BACK_("r, v transposed, 3 tokens", 4, 2, 3, 1, OPS_CONTIG | OPS_TRANSPOSED),
    WKV7_BACK_("S 8, 5 heads over threads", 8, 5, 4, 1, OPS_CONTIG),
    GDN_("scalar gate, K 1", gdn_k1, 4, 2, 2, 3, 2, 2, 1, OPS_CONTIG, OPS_GRAD),
    GDN_("per-key gate, K 4 > T", gdn_k4, 4, 2, 2, 3, 2, 2, 4, OPS_CONTIG, OPS_GRAD),
    GDN_("per-key gate, q, k over heads and sequences, K 4 > T", gdn_k4, 4, 1, 2, 3, 1, 2, 4, OPS_CONTIG, OPS_REFUSED),
    GDN_("q, v, state in any layout, K 2", gdn_k2, 4, 2, 2, 3, 1, 1, 1, OPS_ANY_LAYOUT, OPS_GRAD),
    GDN_("S 8, 3 heads by 2 sequences over threads", gdn_k1, 8, 3, 3, 2, 2, 2, 8, OPS_CONTIG, OPS_FORWARD_ONLY),
    GDN_BACK_("scalar gate, K 1", gdn_k1, 1, 4, 2, 3, 2, 1, OPS_CONTIG),
    GDN_BACK_("per-key gate, K 4 > T", gdn_k4, 4, 4, 2, 3, 2, 4, OPS_CONTIG),
    GDN_BACK_("q, v, state transposed, K 2", gdn_k2, 2, 4, 2, 3, 1, 1, OPS_CONTIG | OPS_TRANSPOSED),
    GDN_BACK_("S 8, 3 heads by 2 sequences over threads", gdn_k2, 2, 8, 3, 2, 2, 8, OPS_CONTIG),
};

/* what the constructors refuse: NULL, types, shapes that disagree, a state of
 * the wrong size or layout, tokens not split evenly, K < 1 */
static void check_refusals(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 2, 6), * x5 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 2, 5);
    struct ggml_tensor * x16 = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 4, 2, 6), * xs = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 6);
    struct ggml_tensor * tf = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2), * tf3 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor * st = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, 2), * st_bad = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 31, 2);
    struct ggml_tensor * st4 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, 4);
    struct ggml_tensor * st_t = ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 32));
    CHECK(ggml_rwkv_wkv6(ctx, x, x, x, tf, x, st) != NULL, "rwkv_wkv6 of good inputs: %s", ggml_last_error());
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv6(NULL, x, x, x, tf, x, st), "rwkv_wkv6 without a context");
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv6(ctx, NULL, x, x, tf, x, st), "rwkv_wkv6 of a NULL k");
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv6(ctx, x, x, x, NULL, x, st), "rwkv_wkv6 of a NULL tf");
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv6(ctx, x, x, x, tf, x, NULL), "rwkv_wkv6 of a NULL state");
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv6(ctx, x, x16, x, tf, x, st), "rwkv_wkv6 of an F16 v");
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv6(ctx, x, x, xs, tf, x, st), "rwkv_wkv6 with r of other heads");
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv6(ctx, x, x, x, tf3, x, st), "rwkv_wkv6 with tf of other heads");
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv6(ctx, x, x, x, tf, x5, st), "rwkv_wkv6 with td of other tokens");
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv6(ctx, x, x, x, tf, x, st_bad), "rwkv_wkv6 with a state of the wrong size");
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv6(ctx, x, x, x, tf, x, st_t), "rwkv_wkv6 with a transposed state");
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv6(ctx, x, x, x, tf, x, st4), "rwkv_wkv6 with 6 tokens for 4 sequences");
    CHECK(ggml_gated_linear_attn(ctx, x, x, x, x, st, 0.5f) != NULL, "gated_linear_attn of good inputs: %s", ggml_last_error());
    OPS_EXPECT_REFUSED(ggml_gated_linear_attn(ctx, x, x, NULL, x, st, 0.5f), "gated_linear_attn of a NULL q");
    OPS_EXPECT_REFUSED(ggml_gated_linear_attn(ctx, x, x, x, x16, st, 0.5f), "gated_linear_attn of an F16 g");
    OPS_EXPECT_REFUSED(ggml_gated_linear_attn(ctx, x, x5, x, x, st, 0.5f), "gated_linear_attn with v of other tokens");
    OPS_EXPECT_REFUSED(ggml_gated_linear_attn(ctx, x, x, x, x, st_bad, 0.5f), "gated_linear_attn with a state of the wrong size");
    OPS_EXPECT_REFUSED(ggml_gated_linear_attn(ctx, x, x, x, x, st, NAN), "gated_linear_attn with a NaN scale");
    CHECK(ggml_rwkv_wkv7(ctx, x, x, x, x, x, x, st) != NULL, "rwkv_wkv7 of good inputs: %s", ggml_last_error());
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv7(ctx, x, x, x, x, x, NULL, st), "rwkv_wkv7 of a NULL b");
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv7(ctx, x, x, x16, x, x, x, st), "rwkv_wkv7 of an F16 k");
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv7(ctx, x, x, x, x, xs, x, st), "rwkv_wkv7 with a of other heads");
    OPS_EXPECT_REFUSED(ggml_rwkv_wkv7(ctx, x, x, x, x, x, x, st4), "rwkv_wkv7 with 6 tokens for 4 sequences");
    /* gated_delta_net: q, k [4, 2, 3, 1], v [4, 2, 3, 2] */
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 2, 3, 1), * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 2, 3, 2);
    struct ggml_tensor * g = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, 2, 3, 2), * g3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 3, 2);
    struct ggml_tensor * s = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 4, 2, 2), * s1 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 4, 2, 1);
    struct ggml_tensor * q3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 3, 1), * q5 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 2, 3, 1);
    struct ggml_tensor * v16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 4, 2, 3, 2);
    CHECK(ggml_gated_delta_net(ctx, q, q, v, g, g, s, 1) != NULL, "gated_delta_net of good inputs: %s", ggml_last_error());
    OPS_EXPECT_REFUSED(ggml_gated_delta_net(ctx, NULL, q, v, g, g, s, 1), "gated_delta_net of a NULL q");
    OPS_EXPECT_REFUSED(ggml_gated_delta_net(ctx, q, q, NULL, g, g, s, 1), "gated_delta_net of a NULL v");
    OPS_EXPECT_REFUSED(ggml_gated_delta_net(ctx, q, q, v16, g, g, s, 1), "gated_delta_net of an F16 v");
    OPS_EXPECT_REFUSED(ggml_gated_delta_net(ctx, q3, q, v, g, g, s, 1), "gated_delta_net with 3 q heads for 2");
    OPS_EXPECT_REFUSED(ggml_gated_delta_net(ctx, q, q5, v, g, g, s, 1), "gated_delta_net with k rows of 5 for 4");
    OPS_EXPECT_REFUSED(ggml_gated_delta_net(ctx, q, q, v, g3, g, s, 1), "gated_delta_net with a gate of 3 per head");
    OPS_EXPECT_REFUSED(ggml_gated_delta_net(ctx, q, q, v, g, g3, s, 1), "gated_delta_net with beta of 3 per head");
    OPS_EXPECT_REFUSED(ggml_gated_delta_net(ctx, q, q, v, g, g, s1, 1), "gated_delta_net with a state of 1 sequence for 2");
    OPS_EXPECT_REFUSED(ggml_gated_delta_net(ctx, q, q, v, g, g, s, 0), "gated_delta_net with K 0");
    OPS_EXPECT_REFUSED(ggml_gated_delta_net(ctx, q, q, v, g, g, s, (int64_t) 1 << 40), "gated_delta_net with K 2^40");
    ggml_free(ctx);
}

const struct ops_family ops_linear_attn = {"linear_attn", rows, sizeof rows / sizeof rows[0], NULL, check_refusals};

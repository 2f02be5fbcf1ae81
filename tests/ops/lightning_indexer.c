/* lightning_indexer.c -- rows of DeepSeek's lightning indexer: per key, the
 * weighted sum over heads of relu(q . k), plus the mask (a causal mask of
 * -Inf and zeros, as upstream's test; or small values), keys F32 or F16,
 * the mask broadcast over streams; gradients by finite differences (a small
 * step: relu's kink is then rarely crossed), F16 keys refused as parameters. */
#include "ops/harness.h"

#include <math.h>
#include <string.h>

static struct ggml_tensor * b_indexer(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    (void) p;
    return ggml_lightning_indexer(ctx, in[0], in[1], in[2], in[3]);
}

static void s_indexer(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    (void) p;
    no[0] = ne[1][2]; no[1] = ne[0][2]; no[2] = 1; no[3] = ne[0][3];
}

/* query t sees keys kv <= t + (n_kv - N) (the last N keys are the queries' own) */
static void fill_causal(double * v, const int64_t ne[4]) {
    OPS_FOR4(ne, kv, t, i2, i3) v[ops_at(ne, kv, t, i2, i3)] = kv <= t + ne[0] - ne[1] ? 0.0 : -INFINITY;
}

static void r_indexer(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) p;
    const int64_t d = ne[0][0], nh = ne[0][1];
    OPS_FOR4(no, kv, t, i2, s) {
        double score = 0;
        for (int64_t h = 0; h < nh; h++) {
            double dot = 0;
            for (int64_t i = 0; i < d; i++) dot += in[0][ops_at(ne[0], i, h, t, s)] * in[1][ops_at(ne[1], i, 0, kv, s)];
            score += fmax(dot, 0.0) * in[2][ops_at(ne[2], h, t, 0, s)];
        }
        out[ops_at(no, kv, t, i2, s)] = score + in[3][ops_at(ne[3], kv, t, 0, s % ne[3][3])];
    }
}

#define Q_(D, H, N, S) {.ne = {D, H, N, S}, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}
#define K_(D, KV, S, TYPE) {.ne = {D, 1, KV, S}, .lo = -1, .hi = 1, .type = TYPE, .layout = OPS_CONTIG | OPS_PERMUTED}
#define W_(H, N, S) {.ne = {H, N, 1, S}, .lo = -1, .hi = 1, .layout = OPS_CONTIG | OPS_TRANSPOSED}
#define M_(KV, N, SM, FILL, TYPE, FIXED) {.ne = {KV, N, 1, SM}, .lo = -0.5, .hi = 0.5, .type = TYPE, .fixed = FIXED, .fill = FILL}
#define ROW_(NAME, D, H, N, S, KV, KTYPE, MASK, GRAD, REFUSAL)                                                            \
    {.op = "LIGHTNING_INDEXER", .variant = NAME, .build = b_indexer, .n_in = 4,                                           \
     .in = {Q_(D, H, N, S), K_(D, KV, S, KTYPE), W_(H, N, S), MASK}, .shape = s_indexer, .ref = r_indexer,               \
     .cmp = OPS_ELEMENTS, .tol = 1e-5, .atol = 1e-5, .grad = GRAD, .fd_eps = 1e-3, .refusal = REFUSAL}
/* a constant F16 mask (upstream's type) */
#define ROW(NAME, D, H, N, S, KV, SM, KTYPE, FILL, GRAD) \
    ROW_(NAME, D, H, N, S, KV, KTYPE, M_(KV, N, SM, FILL, GGML_TYPE_F16, true), GRAD, NULL)

static const struct ops_row rows[] = {
    ROW("D 16, 4 heads, 8 keys, 5 queries, causal", 16, 4, 5, 1, 8, 1, GGML_TYPE_F32, fill_causal, OPS_FORWARD_ONLY),
    ROW("F16 keys", 16, 4, 5, 1, 8, 1, GGML_TYPE_F16, fill_causal, OPS_FORWARD_ONLY),
    ROW("4 streams, 4 masks", 8, 3, 3, 4, 7, 4, GGML_TYPE_F32, NULL, OPS_FORWARD_ONLY),
    ROW("4 streams, 1 mask, F16 keys", 8, 3, 3, 4, 7, 1, GGML_TYPE_F16, fill_causal, OPS_FORWARD_ONLY),
    ROW("1 key", 32, 6, 4, 2, 1, 2, GGML_TYPE_F32, NULL, OPS_FORWARD_ONLY),
    ROW("65 keys, rows over threads", 32, 8, 9, 2, 65, 1, GGML_TYPE_F16, fill_causal, OPS_FORWARD_ONLY),
    ROW("gradient: q, k, weights", 8, 2, 3, 1, 5, 1, GGML_TYPE_F32, NULL, OPS_GRAD),
    ROW("gradient: q, weights (F16 keys), 2 streams", 6, 3, 2, 2, 4, 1, GGML_TYPE_F16, NULL, OPS_GRAD),
    /* q, k >= 0.1: every dot product positive, no kink near the FD step */
    {.op = "LIGHTNING_INDEXER", .variant = "gradient: an F32 mask over 2 streams, positive scores", .build = b_indexer, .n_in = 4,
     .in = {{.ne = {4, 2, 3, 2}, .lo = 0.1, .hi = 1, .layout = OPS_ANY_LAYOUT}, {.ne = {4, 1, 3, 2}, .lo = 0.1, .hi = 1, .layout = OPS_CONTIG | OPS_PERMUTED}, W_(2, 3, 2),
            M_(3, 3, 1, NULL, GGML_TYPE_F32, false)},
     .shape = s_indexer, .ref = r_indexer, .cmp = OPS_ELEMENTS, .tol = 1e-5, .atol = 1e-5, .grad = OPS_GRAD},
    ROW_("F16 keys as a parameter", 8, 2, 3, 1, 5, GGML_TYPE_F16, M_(5, 3, 1, NULL, GGML_TYPE_F16, true), OPS_REFUSED, "f16"),
};

/* Keys of the other types (the table's rows hold F32 and F16 only): the
 * scores equal, bit for bit, those of F32 keys holding the dequantized values
 * (the kernel converts each key row, then runs the same F32 loop). */
static void check_key_types(void) {
    static const enum ggml_type types[] = {GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q5_1, GGML_TYPE_IQ4_NL};
    enum { D = 32, H = 3, N = 4, KV = 6, S = 2 };
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, D, H, N, S), * w = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, H, N, 1, S);
    struct ggml_tensor * m = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, KV, N, 1, 1), * kf = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, D, 1, KV, S);
    tc_fill_uniform(q, -1, 1); tc_fill_uniform(w, -1, 1); tc_fill_uniform(m, -0.5, 0.5);
    float src[D * KV * S];
    for (int i = 0; i < D * KV * S; i++) src[i] = (float) tc_uniform(-1, 1);
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const struct ggml_type_traits * tr = ggml_get_type_traits(types[ti]);
        struct ggml_tensor * kq = ggml_new_tensor_4d(ctx, types[ti], D, 1, KV, S);
        for (int r = 0; r < KV * S; r++) tr->from_float_ref(src + r * D, (char *) kq->data + r * kq->nb[2], D);
        tr->to_float(kq->data, kf->data, D * KV * S);
        struct ggml_tensor * yq = ggml_lightning_indexer(ctx, q, kq, w, m), * yf = ggml_lightning_indexer(ctx, q, kf, w, m);
        struct ggml_cgraph * g = ggml_new_graph(ctx);
        ggml_build_forward_expand(g, yq);
        ggml_build_forward_expand(g, yf);
        tc_compute(ctx, g, 3);
        CHECK(memcmp(yq->data, yf->data, ggml_nbytes(yf)) == 0, "lightning_indexer with %s keys: the scores of their F32 values",
              ggml_type_name(types[ti]));
    }
    ggml_free(ctx);
}

/* what the constructor refuses: NULLs, types, shapes */
static void check_refusals(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 3, 5, 2), * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 1, 7, 2);
    struct ggml_tensor * w = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 5, 1, 2), * m = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 7, 5, 1, 2);
    struct ggml_tensor * q16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 3, 5, 2), * ki = ggml_new_tensor_4d(ctx, GGML_TYPE_I32, 8, 1, 7, 2);
    struct ggml_tensor * mi = ggml_new_tensor_4d(ctx, GGML_TYPE_I32, 7, 5, 1, 2), * w16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 3, 5, 1, 2);
    struct ggml_tensor * k9 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 9, 1, 7, 2), * k2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 2, 7, 2);
    struct ggml_tensor * k1 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 1, 7, 1), * w4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 5, 1, 2);
    struct ggml_tensor * w6 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 6, 1, 2), * m8 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 5, 1, 2);
    struct ggml_tensor * m4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 7, 4, 1, 2), * m3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 7, 5, 1, 3);
    struct ggml_tensor * kq = ggml_new_tensor_4d(ctx, GGML_TYPE_Q8_0, 8, 1, 7, 2);
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(NULL, q, k, w, m), "lightning_indexer without a context");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, NULL, k, w, m), "lightning_indexer of a NULL q");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, NULL, w, m), "lightning_indexer of a NULL k");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, k, NULL, m), "lightning_indexer of NULL weights");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, k, w, NULL), "lightning_indexer of a NULL mask");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q16, k, w, m), "lightning_indexer of an F16 q");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, ki, w, m), "lightning_indexer of I32 keys");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, k, w16, m), "lightning_indexer of F16 weights");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, k, w, mi), "lightning_indexer of an I32 mask");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, k9, w, m), "lightning_indexer with k's D not q's");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, k2, w, m), "lightning_indexer with 2 key heads");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, k1, w, m), "lightning_indexer with keys for 1 stream of 2");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, kq, w, m), "lightning_indexer with Q8_0 rows of 8 (not whole blocks)");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, k, w4, m), "lightning_indexer with weights for 4 heads of 3");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, k, w6, m), "lightning_indexer with weights for 6 queries of 5");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, k, w, m8), "lightning_indexer with a mask over 8 keys of 7");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, k, w, m4), "lightning_indexer with a mask over 4 queries of 5");
    OPS_EXPECT_REFUSED(ggml_lightning_indexer(ctx, q, k, w, m3), "lightning_indexer with 3 masks for 2 streams");
    ggml_free(ctx);
}

const struct ops_family ops_lightning_indexer = {"lightning_indexer", rows, sizeof rows / sizeof rows[0], check_key_types, check_refusals};

/* test_flash_attn_graph.c -- flash_attn_ext inside autodiff graphs:
 * finite-difference checks through tc_gradcheck, the graph's gradients equal
 * to a direct ggml_flash_attn_back call with d = W, accumulation when q, k, v
 * feed other ops (or the same node twice), non-contiguous inputs and output
 * gradients, bitwise equality across thread counts, and every refusal of
 * ggml_build_backward_expand (which must leave the graph as it was); the
 * gradients with attention sinks (q, k, v and the sinks themselves). */
#include "common/attn_ref.h"

#include <stdlib.h>
#include <string.h>

#define GRAPH_TOL 1e-5

/* The tensor a param of layout `layout` stores its values in (the view's source). */
static struct ggml_tensor * storage_of(struct ggml_tensor * t, int layout) { return layout == AL_CONTIGUOUS ? t : t->src[0]; }
/* The gradient of that storage seen in the logical [.., N, H, B] order of the view. */
static struct ggml_tensor * logical_of(struct ggml_context * ctx, struct ggml_tensor * g, int layout) {
    if (!g) return NULL;
    return layout == AL_PERMUTED ? ggml_permute(ctx, g, 0, 2, 1, 3) : layout == AL_TRANSPOSED ? ggml_transpose(ctx, g) : g;
}

static double rel_err_tensor(const struct ggml_tensor * t, const double * ref) { return t ? tc_rel_err_tensor(t, ref) : INFINITY; }

/* ||x - ref|| / ||ref|| in float64 (0 when both are 0) */
static double rel_err_f64(const double * x, const double * ref, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) { num += (x[i] - ref[i]) * (x[i] - ref[i]); den += ref[i] * ref[i]; }
    return den > 0 ? sqrt(num / den) : num > 0 ? INFINITY : 0;
}

/* ---- 1. finite differences through tc_gradcheck ---- */

struct fd_user {
    attn_case c;
    int layout_q;      /* q param stored permuted: [DK, H, N, B] */
    bool permute_out;  /* loss on cont(permute(out)) */
    bool extra_ops;    /* + sum(sqr(q)) + sum(mul_mat(k, k)) + a second attention node */
    bool self_attn;    /* one param x used as q, k and v */
    bool sinks;        /* a fourth param: sinks [H] (ggml_flash_attn_ext_add_sinks) */
    double * mask_host;
};

static struct ggml_tensor * random_leaf(struct ggml_context * ctx, int64_t a, int64_t b, int64_t c, int64_t d) {
    struct ggml_tensor * t = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a, b, c, d);
    tc_fill_uniform(t, -1, 1);
    return t;
}

static struct ggml_tensor * fd_loss(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    struct fd_user * u = user;
    const attn_case * c = &u->c;
    struct ggml_tensor * mask = NULL;
    int64_t mne[4];
    if (c->mask) mask = attn_make_mask(ctx, c, &u->mask_host, mne);
    struct ggml_tensor * q = p[0], * k = u->self_attn ? p[0] : p[1], * v = u->self_attn ? p[0] : p[2];
    if (u->layout_q == AL_PERMUTED) q = ggml_permute(ctx, q, 0, 2, 1, 3);
    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, mask, c->scale, 0.0f, 0.0f);
    if (!out) return NULL;
    if (u->sinks) ggml_flash_attn_ext_add_sinks(out, p[3]);
    struct ggml_tensor * loss;
    if (u->permute_out) {
        struct ggml_tensor * po = ggml_cont(ctx, ggml_permute(ctx, out, 0, 2, 1, 3));  /* [DV, N, H, B] */
        loss = ggml_sum(ctx, ggml_mul(ctx, po, random_leaf(ctx, po->ne[0], po->ne[1], po->ne[2], po->ne[3])));
    } else {
        loss = ggml_sum(ctx, ggml_mul(ctx, out, random_leaf(ctx, out->ne[0], out->ne[1], out->ne[2], out->ne[3])));
    }
    if (u->extra_ops) {
        struct ggml_tensor * out2 = ggml_flash_attn_ext(ctx, q, k, v, NULL, 0.7f, 0.0f, 0.0f);
        loss = ggml_add(ctx, loss, ggml_sum(ctx, ggml_mul(ctx, out2, random_leaf(ctx, out2->ne[0], out2->ne[1], out2->ne[2], out2->ne[3]))));
        loss = ggml_add(ctx, loss, ggml_sum(ctx, ggml_sqr(ctx, p[0])));
        loss = ggml_add(ctx, loss, ggml_scale(ctx, ggml_sum(ctx, ggml_mul_mat(ctx, k, k)), 0.1f));
    }
    return loss;
}

static void test_gradcheck(void) {
    struct { const char * what; struct fd_user u; } cases[12];
    int n = 0;
    struct fd_user u;

    memset(&u, 0, sizeof u); u.c = attn_base_case(4, 4, 3, 5, 1, 1, 1);                              cases[n].what = "fd single head"; cases[n++].u = u;
    memset(&u, 0, sizeof u); u.c = attn_base_case(3, 5, 4, 4, 2, 1, 1); u.c.mask = AM_CAUSAL | AM_VALUES; cases[n].what = "fd causal + values"; cases[n++].u = u;
    memset(&u, 0, sizeof u); u.c = attn_base_case(3, 2, 2, 3, 4, 2, 2);                              cases[n].what = "fd GQA + batch"; cases[n++].u = u;
    memset(&u, 0, sizeof u); u.c = attn_base_case(2, 3, 3, 4, 6, 2, 2); u.c.mask = AM_VALUES | AM_RANDINF;
    u.c.mask_type = GGML_TYPE_F32; u.c.mh = 3; u.c.mb = 2; u.c.mN = 5;                          cases[n].what = "fd mask broadcast"; cases[n++].u = u;
    memset(&u, 0, sizeof u); u.c = attn_base_case(4, 3, 5, 4, 2, 2, 1); u.c.mask = AM_FULLROW | AM_VALUES;
                                                                                                 cases[n].what = "fd fully masked rows"; cases[n++].u = u;
    memset(&u, 0, sizeof u); u.c = attn_base_case(3, 4, 3, 5, 4, 2, 1); u.layout_q = AL_PERMUTED; u.permute_out = true;
                                                                                                 cases[n].what = "fd permuted q and out"; cases[n++].u = u;
    memset(&u, 0, sizeof u); u.c = attn_base_case(3, 3, 3, 4, 2, 1, 1); u.c.mask = AM_VALUES; u.extra_ops = true;
                                                                                                 cases[n].what = "fd shared inputs"; cases[n++].u = u;
    memset(&u, 0, sizeof u); u.c = attn_base_case(3, 3, 4, 4, 2, 2, 1); u.c.mask = AM_CAUSAL; u.self_attn = true;
                                                                                                 cases[n].what = "fd self-attention x,x,x"; cases[n++].u = u;
    memset(&u, 0, sizeof u); u.c = attn_base_case(3, 4, 3, 5, 4, 2, 2); u.c.mask = AM_CAUSAL | AM_VALUES; u.sinks = true;
                                                                                                 cases[n].what = "fd sinks, GQA + batch"; cases[n++].u = u;
    memset(&u, 0, sizeof u); u.c = attn_base_case(4, 3, 6, 4, 2, 1, 1); u.c.mask = AM_FULLROW | AM_VALUES; u.sinks = true;
                                                                                                 cases[n].what = "fd sinks, fully masked rows"; cases[n++].u = u;

    tc_seed(404);
    for (int i = 0; i < n; i++) {
        const attn_case * c = &cases[i].u.c;
        int64_t shapes[4][4] = {{c->DK, c->N, c->H, c->B}, {c->DK, c->M, c->Hkv, c->B}, {c->DV, c->M, c->Hkv, c->B}, {c->H, 1, 1, 1}};
        if (cases[i].u.layout_q == AL_PERMUTED) { shapes[0][1] = c->H; shapes[0][2] = c->N; }
        const int n_params = cases[i].u.self_attn ? 1 : cases[i].u.sinks ? 4 : 3;
        tc_gradcheck(cases[i].what, fd_loss, &cases[i].u, n_params, (const int64_t (*)[4]) shapes, -1, 1, 1e-2, 1e-3, 1e-2);
        free(cases[i].u.mask_host);
    }
}

/* ---- 2. the graph's gradients vs float64 and vs a direct flash_attn_back call ---- */

/* loss = sum(W * flash_attn_ext(q, k, v, mask)) with W = in.d; params as flagged
 * (bit 0 q, 1 k, 2 v). Checks every param gradient against the reference and
 * against a direct ggml_flash_attn_back(q, k, v, mask, W) (exactly equal), and
 * returns the gradients computed with n_threads (caller frees) for comparisons. */
static float * graph_case(const char * what, const attn_case * c, int params, int n_threads, int64_t * n_out) {
    struct ggml_context * ctx = tc_ctx(64);
    attn_inputs in;
    attn_inputs_make(ctx, c, &in);
    struct ggml_tensor * src[3] = {in.q, in.k, in.v};
    for (int s = 0; s < 3; s++)
        if (params & (1 << s)) ggml_set_param(storage_of(src[s], c->layout));
    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, in.q, in.k, in.v, in.mask, c->scale, 0.0f, 0.0f);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, out, in.d_t));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 2048, true);
    ggml_build_forward_expand(g, loss);
    float * result = NULL;
    if (!CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "%s: backward build failed: %s [%s]", what,
               ggml_last_error(), attn_case_str(c)))
        goto done;
    ggml_graph_reset(g);
    if (!CHECK(ggml_graph_compute_with_ctx(ctx, g, n_threads) == GGML_STATUS_SUCCESS, "%s: compute failed: %s", what, ggml_last_error()))
        goto done;

    const attn_dims * a = &in.p.a;
    const int64_t cnt[3] = {attn_nq(a), attn_nk(a), attn_nv(a)};
    double * ref[3];
    for (int s = 0; s < 3; s++) ref[s] = malloc((size_t) cnt[s] * sizeof(double));
    attn_ref_backward(&in.p, in.d, ref[0], ref[1], ref[2]);

    /* the direct call, with d = W (W has the output's shape [DV, H, N, B]) */
    struct ggml_tensor * fab = ggml_flash_attn_back(ctx, in.q, in.k, in.v, in.mask, in.d_t, c->scale);
    attn_compute(ctx, fab, n_threads);
    const int64_t off[3] = {0, attn_pad(cnt[0]), attn_pad(cnt[0]) + attn_pad(cnt[1])};

    *n_out = cnt[0] + cnt[1] + cnt[2];
    result = calloc((size_t) *n_out, sizeof(float));
    static const char * const names[3] = {"q", "k", "v"};
    for (int s = 0; s < 3; s++) {
        const int64_t pos = s == 0 ? 0 : s == 1 ? cnt[0] : cnt[0] + cnt[1];
        struct ggml_tensor * gr = ggml_graph_get_grad(g, storage_of(src[s], c->layout));
        if (!(params & (1 << s))) continue;
        if (!CHECK(gr != NULL, "%s: no gradient for %s", what, names[s])) continue;
        CHECK(ggml_are_same_shape(gr, storage_of(src[s], c->layout)), "%s: gradient of %s has the wrong shape", what, names[s]);
        struct ggml_tensor * lg = logical_of(ctx, gr, c->layout);
        const double e = rel_err_tensor(lg, ref[s]);
        CHECK(e < GRAPH_TOL, "%s: graph gradient of %s vs float64: relative error %.3g [%s]", what, names[s], e, attn_case_str(c));
        int differ = 0;
        for (int64_t i = 0; i < cnt[s]; i++) {
            const float x = ggml_get_f32_1d(lg, i);
            result[pos + i] = x;
            differ += x != ((const float *) fab->data)[off[s] + i];
        }
        CHECK(differ == 0, "%s: %d elements of the graph gradient of %s differ from flash_attn_back(d = W) [%s]", what, differ,
              names[s], attn_case_str(c));
    }
    for (int s = 0; s < 3; s++) free(ref[s]);
done:
    attn_inputs_free(&in);
    ggml_free(ctx);
    return result;
}

static void test_graph_vs_direct(void) {
    struct { const char * what; attn_case c; int params; } cases[16];
    int n = 0;
    attn_case c;
    c = attn_base_case(4, 4, 3, 5, 1, 1, 1);                                         cases[n].what = "graph single head";   cases[n].params = 7; cases[n++].c = c;
    c = attn_base_case(3, 5, 2, 4, 4, 2, 2);                                         cases[n].what = "graph seed shape";    cases[n].params = 7; cases[n++].c = c;
    c = attn_base_case(5, 3, 4, 6, 6, 2, 3); c.mask = AM_CAUSAL | AM_VALUES;         cases[n].what = "graph causal GQA";    cases[n].params = 7; cases[n++].c = c;
    c = attn_base_case(3, 4, 5, 5, 4, 4, 2); c.mask = AM_FULLROW | AM_RANDINF; c.mask_type = GGML_TYPE_F32; c.mh = 2; c.mb = 2; c.mN = 7;
                                                                                cases[n].what = "graph mask broadcast"; cases[n].params = 7; cases[n++].c = c;
    c = attn_base_case(4, 6, 3, 7, 3, 1, 1); c.mask = AM_VALUES;                     cases[n].what = "graph q only";        cases[n].params = 1; cases[n++].c = c;
                                                                                cases[n].what = "graph k only";        cases[n].params = 2; cases[n++].c = c;
                                                                                cases[n].what = "graph v only";        cases[n].params = 4; cases[n++].c = c;
                                                                                cases[n].what = "graph q and v";       cases[n].params = 5; cases[n++].c = c;
    c = attn_base_case(5, 3, 4, 6, 4, 2, 2); c.layout = AL_PERMUTED; c.mask = AM_VALUES;
                                                                                cases[n].what = "graph permuted params"; cases[n].params = 7; cases[n++].c = c;
    c.layout = AL_TRANSPOSED;                                                   cases[n].what = "graph transposed params"; cases[n].params = 7; cases[n++].c = c;
    c = attn_base_case(16, 16, 40, 40, 4, 2, 2); c.mask = AM_CAUSAL;                 cases[n].what = "graph 16x40x40";      cases[n].params = 7; cases[n++].c = c;
    tc_seed(505);
    for (int i = 0; i < n; i++) {
        int64_t len = 0;
        free(graph_case(cases[i].what, &cases[i].c, cases[i].params, 2, &len));
    }
}

/* The backward graph with 1, 2, 3 and 8 threads: bitwise identical gradients. */
static void test_graph_threads(void) {
    attn_case cs[2];
    cs[0] = attn_base_case(9, 7, 13, 11, 6, 3, 2);
    cs[0].mask = AM_VALUES | AM_RANDINF | AM_FULLROW;
    cs[0].mh = 2;
    cs[1] = attn_base_case(16, 12, 50, 150, 2, 1, 1);  /* several query blocks, key tiles and key chunks */
    cs[1].mask = AM_CAUSAL | AM_KEYSPAN;
    const int threads[4] = {1, 2, 3, 8};
    for (int ci = 0; ci < 2; ci++) {
        float * first = NULL;
        int64_t len0 = 0;
        for (int t = 0; t < 4; t++) {
            tc_seed(606);
            int64_t len = 0;
            float * r = graph_case("graph threads", &cs[ci], 7, threads[t], &len);
            if (!r) continue;
            if (!first) { first = r; len0 = len; continue; }
            CHECK(len == len0 && memcmp(first, r, (size_t) len * sizeof(float)) == 0, "graph case %d: gradients with %d threads differ from 1 thread",
                  ci, threads[t]);
            free(r);
        }
        free(first);
    }
}

/* Inputs of case c in ctx, with q, k and v marked as parameters. */
static const attn_dims * make_param_inputs(struct ggml_context * ctx, const attn_case * c, attn_inputs * in) {
    attn_inputs_make(ctx, c, in);
    ggml_set_param(in->q);
    ggml_set_param(in->k);
    ggml_set_param(in->v);
    return &in->p.a;
}

/* ---- 3. accumulation: q, k, v used by other ops and by two attention nodes ---- */

static void test_accumulation(void) {
    tc_seed(707);
    attn_case c = attn_base_case(5, 4, 4, 6, 4, 2, 2);
    c.mask = AM_CAUSAL | AM_VALUES;
    struct ggml_context * ctx = tc_ctx(32);
    attn_inputs in;
    const attn_dims * a = make_param_inputs(ctx, &c, &in);
    struct ggml_tensor * w2 = random_leaf(ctx, a->DV, a->H, a->N, a->B);
    double * w2h = attn_tensor_read(w2);
    /* loss = sum(W1*attn(q,k,v,mask)) + sum(W2*attn(q,k,v; scale 0.7)) + sum(q^2) + sum(k k^T) + 3 sum(v) */
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, ggml_flash_attn_ext(ctx, in.q, in.k, in.v, in.mask, c.scale, 0, 0), in.d_t));
    loss = ggml_add(ctx, loss, ggml_sum(ctx, ggml_mul(ctx, ggml_flash_attn_ext(ctx, in.q, in.k, in.v, NULL, 0.7f, 0, 0), w2)));
    loss = ggml_add(ctx, loss, ggml_sum(ctx, ggml_sqr(ctx, in.q)));
    loss = ggml_add(ctx, loss, ggml_sum(ctx, ggml_mul_mat(ctx, in.k, in.k)));
    loss = ggml_add(ctx, loss, ggml_sum(ctx, ggml_scale(ctx, in.v, 3.0f)));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 2048, true);
    ggml_build_forward_expand(g, loss);
    if (CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "accumulation: %s", ggml_last_error())) {
        const int64_t cnt[3] = {attn_nq(a), attn_nk(a), attn_nv(a)};
        double * r1[3], * r2[3];
        for (int s = 0; s < 3; s++) { r1[s] = malloc((size_t) cnt[s] * sizeof(double)); r2[s] = malloc((size_t) cnt[s] * sizeof(double)); }
        attn_ref_backward(&in.p, in.d, r1[0], r1[1], r1[2]);
        attn_problem p2 = in.p;
        p2.mask = NULL;
        p2.scale = (double) 0.7f;
        attn_ref_backward(&p2, w2h, r2[0], r2[1], r2[2]);
        for (int64_t i = 0; i < cnt[0]; i++) r1[0][i] += r2[0][i] + 2 * in.p.q[i];
        for (int64_t t = 0; t < a->Hkv * a->B; t++) {   /* d/dk sum_ij k_i.k_j = 2 sum_j k_j */
            for (int64_t i = 0; i < a->DK; i++) {
                double col = 0;
                for (int64_t m = 0; m < a->M; m++) col += in.p.k[a->DK * (m + a->M * t) + i];
                for (int64_t m = 0; m < a->M; m++) r1[1][a->DK * (m + a->M * t) + i] += 2 * col;
            }
        }
        for (int64_t i = 0; i < cnt[1]; i++) r1[1][i] += r2[1][i];
        for (int64_t i = 0; i < cnt[2]; i++) r1[2][i] += r2[2][i] + 3;
        for (int rep = 0; rep < 2; rep++) {  /* twice: ggml_graph_reset must clear the accumulators */
            ggml_graph_reset(g);
            tc_compute(ctx, g, 2);
            struct ggml_tensor * src[3] = {in.q, in.k, in.v};
            for (int s = 0; s < 3; s++) {
                const double e = rel_err_tensor(ggml_graph_get_grad(g, src[s]), r1[s]);
                CHECK(e < GRAPH_TOL, "accumulation (run %d): gradient %d relative error %.3g", rep, s, e);
            }
        }
        for (int s = 0; s < 3; s++) { free(r1[s]); free(r2[s]); }
    }
    free(w2h);
    attn_inputs_free(&in);
    ggml_free(ctx);
}

/* One tensor as several inputs of the same node: attn(q, k, k) and attn(x, x, x). */
static void test_same_tensor_twice(void) {
    tc_seed(808);
    for (int variant = 0; variant < 2; variant++) {
        attn_case c = variant == 0 ? attn_base_case(4, 4, 3, 5, 4, 2, 2) : attn_base_case(5, 5, 6, 6, 3, 3, 2);
        c.mask = variant == 0 ? AM_VALUES : AM_CAUSAL;
        struct ggml_context * ctx = tc_ctx(32);
        attn_inputs in;
        attn_inputs_make(ctx, &c, &in);
        const attn_dims * a = &in.p.a;
        struct ggml_tensor * x = variant == 0 ? in.k : in.q;  /* shared tensor */
        struct ggml_tensor * q = variant == 0 ? in.q : x;
        ggml_set_param(x);
        if (variant == 0) ggml_set_param(q);
        /* the reference sees the same values in every role */
        double * xh = variant == 0 ? in.p.k : in.p.q;
        attn_problem p = in.p;
        if (variant == 0) { p.v = xh; } else { p.k = xh; p.v = xh; }
        struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, ggml_flash_attn_ext(ctx, q, x, x, in.mask, c.scale, 0, 0), in.d_t));
        ggml_set_loss(loss);
        struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 2048, true);
        ggml_build_forward_expand(g, loss);
        if (CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "same tensor twice: %s", ggml_last_error())) {
            ggml_graph_reset(g);
            tc_compute(ctx, g, 3);
            const int64_t cnt[3] = {attn_nq(a), attn_nk(a), attn_nv(a)};
            double * r[3];
            for (int s = 0; s < 3; s++) r[s] = malloc((size_t) cnt[s] * sizeof(double));
            attn_ref_backward(&p, in.d, r[0], r[1], r[2]);
            if (variant == 0) {  /* k = v: dk + dv; q separately */
                for (int64_t i = 0; i < cnt[1]; i++) r[1][i] += r[2][i];
                const double eq = rel_err_tensor(ggml_graph_get_grad(g, q), r[0]);
                const double ex = rel_err_tensor(ggml_graph_get_grad(g, x), r[1]);
                CHECK(eq < GRAPH_TOL && ex < GRAPH_TOL, "attn(q, k, k): relative errors %.3g (q) %.3g (k)", eq, ex);
            } else {             /* q = k = v: dq + dk + dv */
                for (int64_t i = 0; i < cnt[0]; i++) r[0][i] += r[1][i] + r[2][i];
                const double ex = rel_err_tensor(ggml_graph_get_grad(g, x), r[0]);
                CHECK(ex < GRAPH_TOL, "attn(x, x, x): relative error %.3g", ex);
            }
            for (int s = 0; s < 3; s++) free(r[s]);
        }
        attn_inputs_free(&in);
        ggml_free(ctx);
    }
}

/* The output used through a permute: the gradient reaching flash_attn_back is a
 * non-contiguous view. */
static void test_permuted_output(void) {
    tc_seed(909);
    attn_case c = attn_base_case(4, 5, 3, 6, 4, 2, 2);
    c.mask = AM_VALUES | AM_RANDINF;
    struct ggml_context * ctx = tc_ctx(32);
    attn_inputs in;
    const attn_dims * a = make_param_inputs(ctx, &c, &in);
    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, in.q, in.k, in.v, in.mask, c.scale, 0, 0);
    struct ggml_tensor * w = random_leaf(ctx, a->DV, a->N, a->H, a->B);  /* weights in [DV, N, H, B] order */
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, ggml_cont(ctx, ggml_permute(ctx, out, 0, 2, 1, 3)), w));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 2048, true);
    ggml_build_forward_expand(g, loss);
    if (CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "permuted output: %s", ggml_last_error())) {
        ggml_graph_reset(g);
        tc_compute(ctx, g, 2);
        /* d[DV, H, N, B] = w[DV, N, H, B] transposed in dims 1, 2 */
        double * d = malloc((size_t) attn_nout(a) * sizeof *d);
        for (int64_t b = 0; b < a->B; b++)
            for (int64_t n = 0; n < a->N; n++)
                for (int64_t h = 0; h < a->H; h++)
                    for (int64_t i = 0; i < a->DV; i++)
                        d[i + a->DV * (h + a->H * (n + a->N * b))] = ggml_get_f32_nd(w, (int) i, (int) n, (int) h, (int) b);
        const int64_t cnt[3] = {attn_nq(a), attn_nk(a), attn_nv(a)};
        double * r[3];
        for (int s = 0; s < 3; s++) r[s] = malloc((size_t) cnt[s] * sizeof(double));
        attn_ref_backward(&in.p, d, r[0], r[1], r[2]);
        struct ggml_tensor * src[3] = {in.q, in.k, in.v};
        for (int s = 0; s < 3; s++) {
            const double e = rel_err_tensor(ggml_graph_get_grad(g, src[s]), r[s]);
            CHECK(e < GRAPH_TOL, "permuted output: gradient %d relative error %.3g", s, e);
        }
        for (int s = 0; s < 3; s++) free(r[s]);
        free(d);
    }
    attn_inputs_free(&in);
    ggml_free(ctx);
}

/* ---- 4. refusals ---- */

enum refusal_kind { R_ALIBI, R_SOFTCAP, R_F16, R_MASK_PARAM };

static void check_refusal(enum refusal_kind kind, int params, bool extra_loss_term) {
    static const char * const names[] = {"ALiBi", "softcap", "F16 K/V", "mask param"};
    static const char * const words[] = {"max_bias", "softcap", "not F32", "mask"};
    attn_case c = attn_base_case(4, 3, 3, 5, 4, 2, 2);
    c.mask = AM_VALUES | AM_CAUSAL;
    c.mask_type = GGML_TYPE_F32;
    if (kind == R_ALIBI) c.max_bias = 8.0f;
    if (kind == R_SOFTCAP) { c.softcap = 2.0f; c.mask = AM_NONE; }
    if (kind == R_F16) c.kv_type = GGML_TYPE_F16;
    struct ggml_context * ctx = tc_ctx(16);
    attn_inputs in;
    attn_inputs_make(ctx, &c, &in);
    struct ggml_tensor * src[4] = {in.q, in.k, in.v, in.mask};
    for (int s = 0; s < 4; s++)
        if ((params & (1 << s)) && src[s]) ggml_set_param(src[s]);
    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, in.q, in.k, in.v, in.mask, c.scale, c.max_bias, c.softcap);
    struct ggml_tensor * loss = ggml_sum(ctx, out);
    if (extra_loss_term) loss = ggml_add(ctx, loss, ggml_sum(ctx, ggml_sqr(ctx, in.q)));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 2048, true);
    ggml_build_forward_expand(g, loss);
    const int n0 = ggml_graph_n_nodes(g);
    struct ggml_tensor * last = ggml_graph_node(g, -1);
    ggml_clear_error();
    const enum ggml_status st = ggml_build_backward_expand(ctx, g, NULL);
    const char * msg = ggml_last_error();
    CHECK(st != GGML_STATUS_SUCCESS, "refusal %s (params %d): ggml_build_backward_expand succeeded", names[kind], params);
    CHECK(strstr(msg, "FLASH_ATTN_EXT") && strstr(msg, words[kind]), "refusal %s: message does not name FLASH_ATTN_EXT and '%s': \"%s\"",
          names[kind], words[kind], msg);
    CHECK(ggml_graph_n_nodes(g) == n0 && ggml_graph_node(g, -1) == last, "refusal %s: the graph changed (%d nodes, was %d)", names[kind],
          ggml_graph_n_nodes(g), n0);
    for (int s = 0; s < 4; s++)
        if (src[s]) CHECK(ggml_graph_get_grad(g, src[s]) == NULL, "refusal %s: a gradient of input %d was left behind", names[kind], s);
    /* the forward still computes, and right */
    tc_poison(out);
    CHECK(ggml_graph_compute_with_ctx(ctx, g, 2) == GGML_STATUS_SUCCESS, "refusal %s: forward compute failed: %s", names[kind], ggml_last_error());
    double * ref = malloc((size_t) attn_nout(&in.p.a) * sizeof *ref);
    attn_ref_forward(&in.p, ref);
    const double e = tc_rel_err_tensor(out, ref);
    CHECK(e < 1e-5, "refusal %s: forward relative error %.3g after the refusal", names[kind], e);
    double sum = 0;
    for (int64_t i = 0; i < attn_nout(&in.p.a); i++) sum += ref[i];
    if (!extra_loss_term) CHECK(fabs(ggml_get_f32_1d(loss, 0) - sum) <= 1e-5 * (1 + fabs(sum)), "refusal %s: loss value", names[kind]);
    free(ref);
    attn_inputs_free(&in);
    ggml_free(ctx);
}

static void test_refusals(void) {
    tc_seed(1001);
    check_refusal(R_ALIBI, 1, false);        /* param q */
    check_refusal(R_ALIBI, 4, false);        /* param v only: its gradient does not involve the slope, still refused */
    check_refusal(R_ALIBI, 1, true);
    check_refusal(R_SOFTCAP, 1, false);
    check_refusal(R_SOFTCAP, 2, false);      /* param k */
    check_refusal(R_F16, 2, false);          /* F16 K/V, K a param (a param q alone gets dq: test_flash_attn_types) */
    check_refusal(R_F16, 5, true);           /* V and q params */
    check_refusal(R_MASK_PARAM, 8, false);   /* only the mask */
    check_refusal(R_MASK_PARAM, 9, false);   /* mask and q */

    /* A node that no parameter reaches needs no gradient: an F16 K/V attention
     * beside a parameter elsewhere does not stop the build. */
    struct ggml_context * ctx = tc_ctx(8);
    attn_case c = attn_base_case(4, 4, 2, 3, 2, 1, 1);
    c.kv_type = GGML_TYPE_F16;
    attn_inputs in;
    attn_inputs_make(ctx, &c, &in);
    struct ggml_tensor * p = random_leaf(ctx, 5, 1, 1, 1);
    ggml_set_param(p);
    struct ggml_tensor * loss = ggml_add(ctx, ggml_sum(ctx, ggml_flash_attn_ext(ctx, in.q, in.k, in.v, NULL, c.scale, 0, 0)),
                                         ggml_sum(ctx, ggml_sqr(ctx, p)));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 2048, true);
    ggml_build_forward_expand(g, loss);
    if (CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "F16 attention without params: %s", ggml_last_error())) {
        ggml_graph_reset(g);
        tc_compute(ctx, g, 2);
        struct ggml_tensor * gp = ggml_graph_get_grad(g, p);
        int bad = !gp;
        for (int64_t i = 0; gp && i < 5; i++) bad += fabs(ggml_get_f32_1d(gp, i) - 2 * ggml_get_f32_1d(p, i)) > 1e-6;
        CHECK(bad == 0, "F16 attention without params: gradient of the other param");
    }
    attn_inputs_free(&in);
    ggml_free(ctx);
}

/* ---- 5. attention sinks ---- */

/* loss = sum(W * flash_attn_ext(q, k, v, mask) with sinks), params by bit (0 q,
 * 1 k, 2 v, 3 sinks). With fd, first the float64 formulas (dq, dk, dv from the
 * probabilities with the sink; ds = -sum p_sink (W . out)) against central
 * differences of the float64 forward; then the graph's gradients against
 * them, on 1 and 3 threads (the same bits). */
static void check_sinks_grad(const char * what, const attn_case * c, int params, bool fd) {
    struct ggml_context * ctx = tc_ctx(64);
    attn_inputs in;
    attn_inputs_make(ctx, c, &in);
    const attn_dims * a = &in.p.a;
    const int64_t cnt[4] = {attn_nq(a), attn_nk(a), attn_nv(a), a->H};
    static const char * const names[4] = {"q", "k", "v", "sinks"};
    double * ref[4];
    for (int s = 0; s < 4; s++) ref[s] = malloc((size_t) cnt[s] * sizeof(double));
    attn_ref_backward(&in.p, in.d, ref[0], ref[1], ref[2]);
    attn_ref_dsinks(&in.p, in.d, ref[3]);
    for (int s = 0; fd && s < 4; s++) {
        double * num = malloc((size_t) cnt[s] * sizeof(double));
        attn_ref_numgrad(&in.p, in.d, s, 1e-5, num);
        const double e = rel_err_f64(ref[s], num, cnt[s]);
        CHECK(e < 1e-7, "%s: float64 gradient of %s vs central differences: relative error %.3g", what, names[s], e);
        free(num);
    }
    struct ggml_tensor * src[4] = {in.q, in.k, in.v, in.sinks}, * param[4];
    for (int s = 0; s < 4; s++) {
        param[s] = s == 3 ? in.sinks : storage_of(src[s], c->layout);
        if (params & (1 << s)) ggml_set_param(param[s]);
    }
    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, in.q, in.k, in.v, in.mask, c->scale, 0.0f, 0.0f);
    ggml_flash_attn_ext_add_sinks(out, in.sinks);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, out, in.d_t));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 2048, true);
    ggml_build_forward_expand(g, loss);
    if (!CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "%s: backward build failed: %s", what, ggml_last_error()))
        goto done;
    float * first[4] = {NULL};
    const int threads[2] = {1, 3};
    for (int t = 0; t < 2; t++) {
        ggml_graph_reset(g);
        if (!CHECK(ggml_graph_compute_with_ctx(ctx, g, threads[t]) == GGML_STATUS_SUCCESS, "%s: compute failed: %s", what, ggml_last_error()))
            break;
        for (int s = 0; s < 4; s++) {
            if (!(params & (1 << s))) continue;
            struct ggml_tensor * gr = ggml_graph_get_grad(g, param[s]);
            if (!CHECK(gr != NULL, "%s: no gradient for %s", what, names[s])) continue;
            const size_t nb = ggml_nbytes(gr);
            if (t == 0) {
                first[s] = malloc(nb);
                memcpy(first[s], gr->data, nb);
                const double e = rel_err_tensor(s == 3 ? gr : logical_of(ctx, gr, c->layout), ref[s]);
                CHECK(e < GRAPH_TOL, "%s: graph gradient of %s vs float64: relative error %.3g [%s]", what, names[s], e, attn_case_str(c));
            } else {
                CHECK(memcmp(first[s], gr->data, nb) == 0, "%s: gradient of %s differs between 1 and 3 threads", what, names[s]);
            }
        }
    }
    for (int s = 0; s < 4; s++) free(first[s]);
done:
    for (int s = 0; s < 4; s++) free(ref[s]);
    attn_inputs_free(&in);
    ggml_free(ctx);
}

static void test_sinks(void) {
    tc_seed(707);
    attn_case c = attn_base_case(5, 4, 6, 7, 4, 2, 2);
    c.mask = AM_CAUSAL | AM_VALUES;
    c.sinks = AS_MIXED;
    check_sinks_grad("sinks, causal GQA + batch", &c, 15, true);
    c = attn_base_case(4, 3, 7, 5, 4, 2, 1);  /* head 3: a -Inf sink on fully masked rows */
    c.mask = AM_FULLROW | AM_VALUES;
    c.mask_type = GGML_TYPE_F32;
    c.sinks = AS_MIXED;
    check_sinks_grad("sinks, fully masked rows", &c, 15, true);
    c = attn_base_case(4, 4, 5, 6, 2, 1, 1);
    c.sinks = AS_DOMINANT;
    check_sinks_grad("dominant sinks, sinks only", &c, 8, true);
    check_sinks_grad("dominant sinks, q and v", &c, 5, true);
    c = attn_base_case(5, 3, 4, 6, 4, 2, 2);
    c.layout = AL_PERMUTED;
    c.mask = AM_VALUES;
    c.sinks = AS_MIXED;
    check_sinks_grad("sinks, permuted q, k, v", &c, 15, true);
    c = attn_base_case(16, 12, 50, 150, 4, 2, 1);  /* several query blocks, key tiles and key chunks */
    c.mask = AM_CAUSAL | AM_KEYSPAN;
    c.sinks = AS_MIXED;
    check_sinks_grad("sinks, 16x50x150", &c, 15, false);
}

int main(void) {
    if (tc_part("gradcheck")) test_gradcheck();
    if (tc_part("graph_vs_direct")) test_graph_vs_direct();
    if (tc_part("threads")) test_graph_threads();
    if (tc_part("accumulation")) test_accumulation();
    if (tc_part("same_tensor_twice")) test_same_tensor_twice();
    if (tc_part("permuted_output")) test_permuted_output();
    if (tc_part("refusals")) test_refusals();
    if (tc_part("sinks")) test_sinks();
    return tc_finish("flash_attn_graph");
}

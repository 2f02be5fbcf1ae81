/* test_flash_attn_seed.c -- the C translation of the user's acceptance test
 *  r/tests/testthat/test-flash-attn-back.R, one function per test_that(), same
 * shapes, masks and API path (no_alloc context + CPU backend for the direct
 * calls, a data context for the graphs). R's runif becomes the test RNG (same
 * seed numbers); the float64 reference of tests/common/attn_ref.c replaces the
 * R reference. Every expect_* of the R file is kept with its own semantics and
 * followed by a tighter check. */
#include "common/attn_ref.h"

#include <stdlib.h>
#include <string.h>

#define SEED_TOL  2e-2   /* the R file's tolerance */
#define TIGHT_TOL 1e-5   /* ours, with the same semantics */

/* testthat 3e expect_equal(object, expected, tolerance): waldo's num_equal --
 * over the elements that differ, mean|x - y| / mean|y| (absolute when
 * mean|y| <= tolerance) must be below the tolerance. */
static double waldo_diff(const double * x, const double * y, int64_t n, double tolerance) {
    double sd = 0, sy = 0;
    int64_t cnt = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(x[i]) != isnan(y[i])) return INFINITY;
        if (isnan(x[i]) || x[i] == y[i]) continue;
        sd += fabs(x[i] - y[i]);
        sy += fabs(y[i]);
        cnt++;
    }
    if (cnt == 0) return 0;
    const double avg_diff = sd / (double) cnt, avg_y = sy / (double) cnt;
    return (isfinite(avg_y) && avg_y > tolerance) ? avg_diff / avg_y : avg_diff;
}
#define EXPECT_EQUAL(x, y, n, tol, ...)                                                                                   \
    do {                                                                                                                  \
        const double e_ = waldo_diff((x), (y), (n), (tol));                                                               \
        CHECK(e_ < (tol), __VA_ARGS__);                                                                                   \
        if (!(e_ < (tol))) fprintf(stderr, "  (mean relative difference %.3g, tolerance %g)\n", e_, (double) (tol));    \
    } while (0)

/* runif(n, lo, hi), rounded to what an F32 tensor stores. */
static double * runif(int64_t n, double lo, double hi) {
    double * x = malloc((size_t) n * sizeof *x);
    for (int64_t i = 0; i < n; i++) x[i] = (double) (float) tc_uniform(lo, hi);
    return x;
}

static void set_data(struct ggml_tensor * t, const double * x) {
    const int64_t n = ggml_nelements(t);
    if (t->type == GGML_TYPE_F16) {
        ggml_fp16_t * h = malloc((size_t) n * sizeof *h);
        for (int64_t i = 0; i < n; i++) h[i] = ggml_fp32_to_fp16((float) x[i]);
        ggml_backend_tensor_set(t, h, 0, (size_t) n * sizeof *h);
        free(h);
    } else {
        float * f = malloc((size_t) n * sizeof *f);
        for (int64_t i = 0; i < n; i++) f[i] = (float) x[i];
        ggml_backend_tensor_set(t, f, 0, (size_t) n * sizeof *f);
        free(f);
    }
}

/* fab_grads(): the packed gradients of a direct ggml_flash_attn_back call, computed
 * through a no_alloc context and the CPU backend (2 threads), unpacked. The mask,
 * if any, is a 2-D F16 [M, N] tensor. The packed tensor is poisoned with NaN first;
 * *packed_out (optional) receives the whole packed vector. */
static bool fab_grads(const attn_dims * a, const double * q, const double * k, const double * v, const double * d, double scale,
                      const double * mask, double * gq, double * gk, double * gv, float ** packed_out, int64_t * len_out) {
    struct ggml_init_params ip = {64 * 1024 * 1024, NULL, true};
    struct ggml_context * ctx = ggml_init(ip);
    if (!CHECK(ctx != NULL, "fab_grads: ggml_init: %s", ggml_last_error())) return false;
    struct ggml_tensor * tq = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a->DK, a->N, a->H, a->B);
    struct ggml_tensor * tk = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a->DK, a->M, a->Hkv, a->B);
    struct ggml_tensor * tv = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a->DV, a->M, a->Hkv, a->B);
    struct ggml_tensor * td = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a->DV, a->H, a->N, a->B);
    struct ggml_tensor * tm = mask ? ggml_new_tensor_2d(ctx, GGML_TYPE_F16, a->M, a->N) : NULL;
    struct ggml_tensor * bk = ggml_flash_attn_back(ctx, tq, tk, tv, tm, td, (float) scale);
    bool ok = CHECK(bk != NULL, "fab_grads: ggml_flash_attn_back: %s", ggml_last_error());
    ggml_backend_t be = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(be, 2);
    ggml_backend_buffer_t buf = ok ? ggml_backend_alloc_ctx_tensors(ctx, be) : NULL;
    ok = ok && CHECK(buf != NULL, "fab_grads: alloc: %s", ggml_last_error());
    if (ok) {
        set_data(tq, q);
        set_data(tk, k);
        set_data(tv, v);
        set_data(td, d);
        if (tm) set_data(tm, mask);
        const int64_t len = ggml_nelements(bk);
        float * packed = malloc((size_t) len * sizeof *packed);
        for (int64_t i = 0; i < len; i++) packed[i] = NAN;  /* poison: nothing may stay unwritten */
        ggml_backend_tensor_set(bk, packed, 0, (size_t) len * sizeof *packed);
        struct ggml_cgraph * g = ggml_new_graph(ctx);
        ggml_build_forward_expand(g, bk);
        ok = CHECK(ggml_backend_graph_compute(be, g) == GGML_STATUS_SUCCESS, "fab_grads: compute: %s", ggml_last_error());
        ggml_backend_tensor_get(bk, packed, 0, (size_t) len * sizeof *packed);
        const int64_t nq = attn_nq(a), nk = attn_nk(a), nv = attn_nv(a);
        const int64_t off_k = attn_pad(nq), off_v = off_k + attn_pad(nk);
        ok = ok && CHECK(len >= off_v + nv, "fab_grads: packed length %lld < %lld", (long long) len, (long long) (off_v + nv));
        if (ok) {
            for (int64_t i = 0; i < nq; i++) gq[i] = packed[i];
            for (int64_t i = 0; i < nk; i++) gk[i] = packed[off_k + i];
            for (int64_t i = 0; i < nv; i++) gv[i] = packed[off_v + i];
        }
        if (packed_out) { *packed_out = packed; *len_out = len; }
        else free(packed);
    }
    ggml_backend_buffer_free(buf);
    ggml_backend_free(be);
    ggml_free(ctx);
    return ok;
}

/* num_grad(): central differences (eps = 1e-3, as in R) of sum(d * attn_ref). */
static void num_grad(const attn_dims * a, double * q, double * k, double * v, const double * d, double scale, double * mask,
                     int which, double * g) {
    attn_problem p = {*a, q, k, v, mask, {a->M, a->N, 1, 1}, scale, 0, 0, NULL};
    attn_ref_numgrad(&p, d, which, 1e-3, g);
}

/* The three FD test_that()s share this body: grads vs num_grad for q, k, v. */
static void fd_case(const char * what, const attn_dims * a, double * q, double * k, double * v, double * d, double * mask) {
    const double scale = 1 / sqrt((double) a->DK);
    const int64_t cnt[3] = {attn_nq(a), attn_nk(a), attn_nv(a)};
    double * ga[3], * gn[3], * gr[3];
    for (int s = 0; s < 3; s++) {
        ga[s] = calloc((size_t) cnt[s], sizeof(double));
        gn[s] = calloc((size_t) cnt[s], sizeof(double));
        gr[s] = calloc((size_t) cnt[s], sizeof(double));
    }
    static const char * const nm[3] = {"q", "k", "v"};
    if (fab_grads(a, q, k, v, d, scale, mask, ga[0], ga[1], ga[2], NULL, NULL)) {
        attn_problem p = {*a, q, k, v, mask, {a->M, a->N, 1, 1}, scale, 0, 0, NULL};
        attn_ref_backward(&p, d, gr[0], gr[1], gr[2]);
        for (int s = 0; s < 3; s++) {
            num_grad(a, q, k, v, d, scale, mask, s, gn[s]);
            EXPECT_EQUAL(ga[s], gn[s], cnt[s], SEED_TOL, "%s: grad %s vs num_grad (seed tolerance)", what, nm[s]);
            EXPECT_EQUAL(ga[s], gn[s], cnt[s], TIGHT_TOL, "%s: grad %s vs num_grad (tight tolerance)", what, nm[s]);
            double num = 0, den = 0;
            for (int64_t i = 0; i < cnt[s]; i++) { num += (ga[s][i] - gr[s][i]) * (ga[s][i] - gr[s][i]); den += gr[s][i] * gr[s][i]; }
            CHECK(den > 0 && sqrt(num / den) < 1e-5, "%s: grad %s vs float64 analytic: relative error %.3g", what, nm[s], den > 0 ? sqrt(num / den) : INFINITY);
            int nonfinite = 0;
            for (int64_t i = 0; i < cnt[s]; i++) nonfinite += !isfinite(ga[s][i]);
            CHECK(nonfinite == 0, "%s: grad %s has %d non-finite values", what, nm[s], nonfinite);
        }
    }
    for (int s = 0; s < 3; s++) { free(ga[s]); free(gn[s]); free(gr[s]); }
}

/* test_that("flash_attn_back matches finite differences (single head)") */
static void test_single_head(void) {
    tc_seed(11);
    const attn_dims a = {4, 4, 3, 5, 1, 1, 1};  /* DK DV N M H Hkv B */
    double * q = runif(attn_nq(&a), -1, 1), * k = runif(attn_nk(&a), -1, 1), * v = runif(attn_nv(&a), -1, 1);
    double * d = runif(attn_nout(&a), -1, 1);   /* c(DV, 1, N, 1) */
    fd_case("single head", &a, q, k, v, d, NULL);
    free(q); free(k); free(v); free(d);
}

/* test_that("flash_attn_back handles a mask") */
static void test_mask(void) {
    tc_seed(12);
    const attn_dims a = {4, 4, 3, 4, 1, 1, 1};
    double * q = runif(attn_nq(&a), -1, 1), * k = runif(attn_nk(&a), -1, 1), * v = runif(attn_nv(&a), -1, 1);
    double * d = runif(attn_nout(&a), -1, 1);
    /* causal mask [M, N]: query n attends to keys 0..n only */
    double mask[4 * 3];
    for (int n = 0; n < 3; n++)
        for (int m = 0; m < 4; m++) mask[m + 4 * n] = m > n ? -INFINITY : 0.0;
    fd_case("mask", &a, q, k, v, d, mask);
    /* a key no query attends to (key 3) gets no gradient -- and nothing is NaN */
    double gq[12], gk[16], gv[16];
    if (fab_grads(&a, q, k, v, d, 0.5, mask, gq, gk, gv, NULL, NULL)) {
        int nonfinite = 0, nonzero = 0;
        for (int i = 0; i < 16; i++) nonfinite += !isfinite(gk[i]);
        CHECK(nonfinite == 0, "mask: all(is.finite(a$k))");
        for (int i = 0; i < 4; i++) nonzero += gk[12 + i] != 0.0 || gv[12 + i] != 0.0;
        CHECK(nonzero == 0, "mask: the unseen key 3 has zero dk and dv");
    }
    free(q); free(k); free(v); free(d);
}

/* test_that("flash_attn_back handles grouped-query attention and batches") */
static void test_gqa_batches(void) {
    tc_seed(13);
    const attn_dims a = {4, 4, 2, 3, 4, 2, 2};
    double * q = runif(attn_nq(&a), -1, 1), * k = runif(attn_nk(&a), -1, 1), * v = runif(attn_nv(&a), -1, 1);
    double * d = runif(attn_nout(&a), -1, 1);
    fd_case("GQA and batches", &a, q, k, v, d, NULL);
    free(q); free(k); free(v); free(d);
}

/* test_that("a flash_attn_ext node differentiates inside a backward graph") */
static void test_graph(void) {
    struct ggml_context * ctx = tc_ctx(128);
    tc_seed(14);
    const attn_dims a = {4, 4, 3, 4, 1, 1, 1};
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a.DK, a.N, 1, 1);
    struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a.DK, a.M, 1, 1);
    struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a.DV, a.M, 1, 1);
    double * qh = runif(attn_nq(&a), -1, 1), * kh = runif(attn_nk(&a), -1, 1), * vh = runif(attn_nv(&a), -1, 1);
    attn_tensor_set(q, qh);
    attn_tensor_set(k, kh);
    attn_tensor_set(v, vh);
    ggml_set_param(q);
    ggml_set_param(v);
    const double scale = 1 / sqrt((double) a.DK);
    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, NULL, (float) scale, 0.0f, 0.0f);
    struct ggml_tensor * loss = ggml_sum(ctx, out);
    ggml_set_loss(loss);
    struct ggml_cgraph * graph = ggml_new_graph_custom(ctx, 2048, true);  /* ggml_build_forward_expand_grads */
    ggml_build_forward_expand(graph, loss);
    if (CHECK(ggml_build_backward_expand(ctx, graph, NULL) == GGML_STATUS_SUCCESS, "graph: ggml_build_backward_expand: %s", ggml_last_error())) {
        ggml_graph_reset(graph);
        CHECK(ggml_graph_compute_with_ctx(ctx, graph, 2) == GGML_STATUS_SUCCESS, "graph: compute: %s", ggml_last_error());
        struct ggml_tensor * gq = ggml_graph_get_grad(graph, q), * gv = ggml_graph_get_grad(graph, v);
        CHECK(gq != NULL, "graph: expect_false(is.null(gq))");
        CHECK(gv != NULL, "graph: expect_false(is.null(gv))");
        if (gq && gv) {
            int nonfinite = 0, nonpositive = 0;
            double mx = 0;
            for (int64_t i = 0; i < ggml_nelements(gq); i++) nonfinite += !isfinite(ggml_get_f32_1d(gq, i));
            for (int64_t i = 0; i < ggml_nelements(gv); i++) {
                const float x = ggml_get_f32_1d(gv, i);
                nonfinite += !isfinite(x);
                mx = fmax(mx, fabs(x));
                nonpositive += !(x > 0);
            }
            CHECK(nonfinite == 0, "graph: all(is.finite(gq)) and all(is.finite(gv))");
            CHECK(mx > 0, "graph: expect_gt(max(abs(gv)), 0)");
            /* tighter: every dv is a sum of attention weights (> 0), and both match float64 */
            CHECK(nonpositive == 0, "graph: %d elements of gv are not > 0", nonpositive);
            double * ones = malloc((size_t) attn_nout(&a) * sizeof *ones);
            for (int64_t i = 0; i < attn_nout(&a); i++) ones[i] = 1;
            double * r[3];
            const int64_t cnt[3] = {attn_nq(&a), attn_nk(&a), attn_nv(&a)};
            for (int s = 0; s < 3; s++) r[s] = malloc((size_t) cnt[s] * sizeof(double));
            attn_problem p = {a, qh, kh, vh, NULL, {0}, scale, 0, 0, NULL};
            attn_ref_backward(&p, ones, r[0], r[1], r[2]);
            const double eq = tc_rel_err_tensor(gq, r[0]), ev = tc_rel_err_tensor(gv, r[2]);
            CHECK(eq < 1e-5 && ev < 1e-5, "graph: gq, gv vs float64: relative errors %.3g, %.3g", eq, ev);
            for (int s = 0; s < 3; s++) free(r[s]);
            free(ones);
        }
    }
    free(qh); free(kh); free(vh);
    ggml_free(ctx);
}

/* test_that("the graph builder rejects attention features it cannot differentiate") */
static void test_alibi_refused(void) {
    struct ggml_context * ctx = tc_ctx(32);
    const int64_t DK = 4, DV = 4, N = 2, M = 2;
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DK, N, 1, 1);
    struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DK, M, 1, 1);
    struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DV, M, 1, 1);
    tc_fill_uniform(q, 0, 1);
    tc_fill_uniform(k, 0, 1);
    tc_fill_uniform(v, 0, 1);
    ggml_set_param(q);
    struct ggml_tensor * mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, M, N);
    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, mask, (float) (1 / sqrt((double) DK)), 8.0f, 0.0f);
    struct ggml_tensor * loss = ggml_sum(ctx, out);
    ggml_set_loss(loss);
    struct ggml_cgraph * graph = ggml_new_graph_custom(ctx, 2048, true);
    ggml_build_forward_expand(graph, loss);
    const int n0 = ggml_graph_n_nodes(graph);
    CHECK(ggml_build_backward_expand(ctx, graph, NULL) != GGML_STATUS_SUCCESS, "ALiBi: expect_error(ggml_build_backward_expand)");
    CHECK(strstr(ggml_last_error(), "FLASH_ATTN_EXT") != NULL, "ALiBi: the message names FLASH_ATTN_EXT: \"%s\"", ggml_last_error());
    CHECK(ggml_graph_n_nodes(graph) == n0, "ALiBi: the graph is unchanged");
    ggml_free(ctx);
}

/* test_that("the packed gradients occupy disjoint, in-bounds slices") */
static void test_packed_slices(void) {
    const attn_dims a = {3, 5, 2, 4, 4, 2, 2};
    tc_seed(31);
    double * q = runif(attn_nq(&a), -1, 1), * k = runif(attn_nk(&a), -1, 1), * v = runif(attn_nv(&a), -1, 1);
    double * d = runif(attn_nout(&a), -1, 1);
    const int64_t nq = attn_nq(&a), nk = attn_nk(&a), nv = attn_nv(&a);
    double * gq = malloc((size_t) nq * sizeof *gq), * gk = malloc((size_t) nk * sizeof *gk), * gv = malloc((size_t) nv * sizeof *gv);
    float * packed = NULL;
    int64_t len = 0;
    const double scale = 1 / sqrt((double) a.DK);
    if (fab_grads(&a, q, k, v, d, scale, NULL, gq, gk, gv, &packed, &len) && packed) {
        const int64_t off_k = attn_pad(nq), off_v = off_k + attn_pad(nk);
        CHECK(len >= off_v + nv, "packed: expect_gte(length(packed), off_v + nv)");
        CHECK(nq <= off_k, "packed: expect_lte(nq, off_k)");
        CHECK(off_k + nk <= off_v, "packed: expect_lte(off_k + nk, off_v)");
        double mq = 0, mk = 0, mv = 0;
        for (int64_t i = 0; i < nq; i++) mq = fmax(mq, fabs(packed[i]));
        for (int64_t i = 0; i < nk; i++) mk = fmax(mk, fabs(packed[off_k + i]));
        for (int64_t i = 0; i < nv; i++) mv = fmax(mv, fabs(packed[off_v + i]));
        CHECK(mq > 0, "packed: the q slice is not all zero");
        CHECK(mk > 0, "packed: the k slice is not all zero");
        CHECK(mv > 0, "packed: the v slice is not all zero");
        int pad_bad = 0;
        for (int64_t i = nq; i < off_k; i++) pad_bad += packed[i] != 0.0f;
        for (int64_t i = off_k + nk; i < off_v; i++) pad_bad += packed[i] != 0.0f;
        CHECK(pad_bad == 0, "packed: the padding between slices is zero");
        /* tighter: the exact length, a zero tail, nothing left NaN, and the values */
        CHECK(len == off_v + attn_pad(nv), "packed: length %lld, want %lld", (long long) len, (long long) (off_v + attn_pad(nv)));
        int tail_bad = 0, nan = 0;
        for (int64_t i = off_v + nv; i < len; i++) tail_bad += packed[i] != 0.0f;
        for (int64_t i = 0; i < len; i++) nan += isnan(packed[i]);
        CHECK(tail_bad == 0 && nan == 0, "packed: %d non-zero tail values, %d NaN", tail_bad, nan);
        double * r[3];
        const int64_t cnt[3] = {nq, nk, nv};
        for (int s = 0; s < 3; s++) r[s] = malloc((size_t) cnt[s] * sizeof(double));
        attn_problem p = {a, q, k, v, NULL, {0}, scale, 0, 0, NULL};
        attn_ref_backward(&p, d, r[0], r[1], r[2]);
        const double e0 = tc_rel_err_f32(packed, r[0], nq), e1 = tc_rel_err_f32(packed + off_k, r[1], nk),
                     e2 = tc_rel_err_f32(packed + off_v, r[2], nv);
        CHECK(e0 < 1e-5 && e1 < 1e-5 && e2 < 1e-5, "packed: slices vs float64: %.3g %.3g %.3g", e0, e1, e2);
        for (int s = 0; s < 3; s++) free(r[s]);
    }
    free(packed);
    free(q); free(k); free(v); free(d); free(gq); free(gk); free(gv);
}

/* test_that("autodiff views address their own slice of the packed buffer") */
static void test_autodiff_views(void) {
    const attn_dims a = {3, 5, 2, 4, 4, 2, 2};
    tc_seed(32);
    double * qd = runif(attn_nq(&a), -1, 1), * kd = runif(attn_nk(&a), -1, 1), * vd = runif(attn_nv(&a), -1, 1);
    const double scale = 1 / sqrt((double) a.DK);
    const int64_t cnt[3] = {attn_nq(&a), attn_nk(&a), attn_nv(&a)};

    /* gradients through the graph */
    struct ggml_context * ctx = tc_ctx(128);
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a.DK, a.N, a.H, a.B);
    struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a.DK, a.M, a.Hkv, a.B);
    struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a.DV, a.M, a.Hkv, a.B);
    attn_tensor_set(q, qd);
    attn_tensor_set(k, kd);
    attn_tensor_set(v, vd);
    ggml_set_param(q);
    ggml_set_param(k);
    ggml_set_param(v);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_flash_attn_ext(ctx, q, k, v, NULL, (float) scale, 0.0f, 0.0f));
    ggml_set_loss(loss);
    struct ggml_cgraph * graph = ggml_new_graph_custom(ctx, 2048, true);
    ggml_build_forward_expand(graph, loss);
    double * g[3] = {NULL, NULL, NULL};
    int64_t glen[3] = {0, 0, 0};
    if (CHECK(ggml_build_backward_expand(ctx, graph, NULL) == GGML_STATUS_SUCCESS, "views: backward: %s", ggml_last_error())) {
        ggml_graph_reset(graph);
        CHECK(ggml_graph_compute_with_ctx(ctx, graph, 2) == GGML_STATUS_SUCCESS, "views: compute: %s", ggml_last_error());
        struct ggml_tensor * src[3] = {q, k, v};
        for (int s = 0; s < 3; s++) {
            struct ggml_tensor * gt = ggml_graph_get_grad(graph, src[s]);
            if (!CHECK(gt != NULL, "views: no gradient for input %d", s)) continue;
            g[s] = attn_tensor_read(gt);
            glen[s] = ggml_nelements(gt);
        }
    }
    /* the same thing packed, sliced by hand; d/d(out) of sum(out) is all ones */
    double * ones = malloc((size_t) attn_nout(&a) * sizeof *ones);
    for (int64_t i = 0; i < attn_nout(&a); i++) ones[i] = 1;
    double * fa[3];
    for (int s = 0; s < 3; s++) fa[s] = calloc((size_t) cnt[s], sizeof(double));
    if (fab_grads(&a, qd, kd, vd, ones, scale, NULL, fa[0], fa[1], fa[2], NULL, NULL)) {
        static const char * const nm[3] = {"g_q", "g_k", "g_v"};
        for (int s = 0; s < 3; s++) {
            if (!g[s]) continue;
            EXPECT_EQUAL(g[s], fa[s], cnt[s], 1e-5, "views: %s equals the hand-sliced a$%c (tolerance 1e-5)", nm[s], "qkv"[s]);
            CHECK(glen[s] == cnt[s], "views: expect_length(%s, %lld): got %lld", nm[s], (long long) cnt[s], (long long) glen[s]);
            int differ = 0;  /* tighter: the very same numbers */
            for (int64_t i = 0; i < cnt[s]; i++) differ += g[s][i] != fa[s][i];
            CHECK(differ == 0, "views: %d elements of %s differ from the direct call", differ, nm[s]);
        }
    }
    for (int s = 0; s < 3; s++) { free(g[s]); free(fa[s]); }
    free(ones);
    free(qd); free(kd); free(vd);
    ggml_free(ctx);
}

int main(void) {
    test_single_head();
    test_mask();
    test_gqa_batches();
    test_graph();
    test_alibi_refused();
    test_packed_slices();
    test_autodiff_views();
    return tc_finish("flash_attn_seed");
}

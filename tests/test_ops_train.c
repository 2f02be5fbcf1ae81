/* test_ops_train.c -- the training ops: get_rows, get_rows_back,
 * cross_entropy_loss(_back), argmax, opt_step_adamw, opt_step_sgd.
 *
 * Forward kernels are compared with float64 references written here (plain
 * loops over the same float inputs), with results poisoned with NaN first;
 * the backward rules of GET_ROWS and CROSS_ENTROPY_LOSS go through the
 * finite-difference checker; each optimizer takes two steps against numbers
 * worked out from its formula in double. Indices and class labels out of
 * range must fail the compute with a message (and skip the nodes after it),
 * bad arguments must give NULL with a message, and results must be bitwise
 * the same with 1 and 3 threads.
 *
 * Tolerances: gathers and argmax are exact (equality). Sums of <= 200 float
 * terms and float softmax arithmetic stay below 1e-6 relative; 1e-5 catches
 * any wrong index, missing term or scale. */
#include "common/test_common.h"

#include <stdlib.h>
#include <string.h>

#define NTH 3
#define TOL 1e-5

/* ---- helpers ---- */

static enum ggml_status run(struct ggml_context * ctx, struct ggml_tensor * out, int nth) {
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(g, out);
    return ggml_graph_compute_with_ctx(ctx, g, nth);
}

/* Poison out, compute it, and check the status. */
static bool compute_ok(struct ggml_context * ctx, struct ggml_tensor * out, const char * what) {
    if (!CHECK(out != NULL, "%s: constructor returned NULL: %s", what, ggml_last_error())) return false;
    if (out->type != GGML_TYPE_I32) tc_poison(out);
    return CHECK(run(ctx, out, NTH) == GGML_STATUS_SUCCESS, "%s: compute failed: %s", what, ggml_last_error());
}

/* An I32 tensor [ne0, ne1, ne2] of the given values, or of uniform values in [0, hi) when vals is NULL. */
static struct ggml_tensor * indices(struct ggml_context * ctx, int64_t ne0, int64_t ne1, int64_t ne2, const int32_t * vals, int hi) {
    struct ggml_tensor * t = ggml_new_tensor_3d(ctx, GGML_TYPE_I32, ne0, ne1, ne2);
    int32_t * d = t->data;
    for (int64_t i = 0; i < ggml_nelements(t); i++) d[i] = vals ? vals[i] : tc_randint(0, hi - 1);
    return t;
}

static struct ggml_tensor * rand_tensor(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4], double lo, double hi) {
    struct ggml_tensor * t = ggml_new_tensor(ctx, type, 4, ne);
    tc_fill_uniform(t, lo, hi);
    return t;
}

static int32_t idx_at(const struct ggml_tensor * b, int64_t j, int64_t i2, int64_t i3) {
    return ((const int32_t *) b->data)[j + b->ne[0] * (i2 + b->ne[1] * i3)];
}

static double * ref_new(int64_t n) { return calloc((size_t) (n > 0 ? n : 1), sizeof(double)); }

/* ---- get_rows ---- */

/* reference: out[i0, j, i2, i3] = a[i0, b[j, i2, i3], i2, i3], compared exactly */
static void check_get_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, const char * what) {
    struct ggml_tensor * out = ggml_get_rows(ctx, a, b);
    if (!compute_ok(ctx, out, what)) return;
    CHECK(out->ne[0] == a->ne[0] && out->ne[1] == b->ne[0] && out->ne[2] == b->ne[1] && out->ne[3] == b->ne[2], "%s: result shape", what);
    CHECK(out->type == (a->type == GGML_TYPE_I32 ? GGML_TYPE_I32 : GGML_TYPE_F32), "%s: result type %s", what, ggml_type_name(out->type));
    int bad = 0;
    for (int64_t i3 = 0; i3 < out->ne[3]; i3++) for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
    for (int64_t j = 0; j < out->ne[1]; j++) for (int64_t i0 = 0; i0 < out->ne[0]; i0++) {
        const double want = ggml_get_f32_nd(a, (int) i0, idx_at(b, j, i2, i3), (int) i2, (int) i3);
        if (ggml_get_f32_nd(out, (int) i0, (int) j, (int) i2, (int) i3) != want) bad++;
    }
    CHECK(bad == 0, "%s: %d elements differ from the rows they should copy", what, bad);
}

static void test_get_rows(void) {
    struct ggml_context * ctx = tc_ctx(16);
    const int32_t repeated[13] = {3, 0, 10, 3, 3, 7, 0, 1, 10, 9, 2, 3, 5};
    const int64_t ne2d[4] = {7, 11, 1, 1}, ne4d[4] = {5, 4, 3, 2};
    check_get_rows(ctx, rand_tensor(ctx, GGML_TYPE_F32, ne2d, -3, 3), indices(ctx, 13, 1, 1, repeated, 0), "get_rows 2-D, repeated indices");
    check_get_rows(ctx, rand_tensor(ctx, GGML_TYPE_F32, ne4d, -3, 3), indices(ctx, 6, 3, 2, NULL, 4), "get_rows batched [5,4,3,2] by [6,3,2]");
    check_get_rows(ctx, rand_tensor(ctx, GGML_TYPE_F16, ne2d, -3, 3), indices(ctx, 13, 1, 1, repeated, 0), "get_rows of an F16 table");
    check_get_rows(ctx, rand_tensor(ctx, GGML_TYPE_I32, ne4d, -1000, 1000), indices(ctx, 6, 3, 2, NULL, 4), "get_rows of an I32 table");
    const int64_t tne[4] = {11, 7, 1, 1};  /* transposed: a [7, 11] with strided rows */
    check_get_rows(ctx, ggml_transpose(ctx, rand_tensor(ctx, GGML_TYPE_F32, tne, -3, 3)), indices(ctx, 13, 1, 1, repeated, 0),
                   "get_rows of a transposed table");
    ggml_free(ctx);
}

/* reference: zeros shaped like c, row b[j, i2, i3] += a[:, j, i2, i3], accumulated in double */
static void check_get_rows_back(struct ggml_context * ctx, const int64_t cne[4], struct ggml_tensor * b, const char * what) {
    const int64_t ane[4] = {cne[0], b->ne[0], cne[2], cne[3]};
    struct ggml_tensor * a = rand_tensor(ctx, GGML_TYPE_F32, ane, -2, 2);
    struct ggml_tensor * c = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, cne);
    struct ggml_tensor * out = ggml_get_rows_back(ctx, a, b, c);
    if (!compute_ok(ctx, out, what)) return;
    CHECK(ggml_are_same_shape(out, c), "%s: shaped like c", what);
    double * ref = ref_new(ggml_nelements(c));
    for (int64_t i3 = 0; i3 < ane[3]; i3++) for (int64_t i2 = 0; i2 < ane[2]; i2++)
    for (int64_t j = 0; j < ane[1]; j++) for (int64_t i0 = 0; i0 < ane[0]; i0++) {
        const int64_t row = idx_at(b, j, i2, i3);
        ref[i0 + cne[0] * (row + cne[1] * (i2 + cne[2] * i3))] += ggml_get_f32_nd(a, (int) i0, (int) j, (int) i2, (int) i3);
    }
    CHECK_REL(tc_rel_err_tensor(out, ref), TOL, what);
    free(ref);
}

static void test_get_rows_back(void) {
    struct ggml_context * ctx = tc_ctx(16);
    const int32_t dup[9] = {2, 2, 0, 5, 2, 0, 5, 5, 2};  /* rows 1, 3, 4 get nothing */
    const int64_t c2d[4] = {7, 6, 1, 1}, c4d[4] = {5, 4, 3, 2};
    check_get_rows_back(ctx, c2d, indices(ctx, 9, 1, 1, dup, 0), "get_rows_back with duplicates");
    check_get_rows_back(ctx, c4d, indices(ctx, 9, 3, 2, NULL, 4), "get_rows_back batched");
    ggml_free(ctx);
}

/* ---- cross entropy ---- */

/* Row r of the logits / labels (contiguous) as doubles. Reference loss and
 * gradient written from the definitions: log softmax with the max subtracted. */
static double ref_log_softmax(const float * z, int64_t nc, int64_t i) {
    double mx = z[0];
    for (int64_t k = 1; k < nc; k++) if (z[k] > mx) mx = z[k];
    double s = 0;
    for (int64_t k = 0; k < nc; k++) s += exp(z[k] - mx);
    return z[i] - mx - log(s);
}

/* label of class i in row r: dense labels, or one-hot of the I32 class */
static double ref_label(const struct ggml_tensor * b, int64_t nc, int64_t r, int64_t i) {
    if (b->type == GGML_TYPE_F32) return ((const float *) b->data)[r * nc + i];
    return ((const int32_t *) b->data)[r] == i ? 1.0 : 0.0;
}

static void check_cross_entropy(struct ggml_context * ctx, struct ggml_tensor * z, struct ggml_tensor * labels, const char * what) {
    const int64_t nc = z->ne[0], rows = ggml_nrows(z);
    const float * zd = z->data;
    /* forward: -(1/R) sum_r sum_i p_ri log softmax(z_r)_i */
    struct ggml_tensor * loss = ggml_cross_entropy_loss(ctx, z, labels);
    if (compute_ok(ctx, loss, what)) {
        double want = 0;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t i = 0; i < nc; i++) want -= ref_label(labels, nc, r, i) * ref_log_softmax(zd + r * nc, nc, i);
        want /= (double) rows;
        CHECK(ggml_nelements(loss) == 1, "%s: the loss is a scalar", what);
        CHECK_REL(fabs(ggml_get_f32_1d(loss, 0) - want) / (want != 0 ? fabs(want) : 1.0), TOL, what);
    }
    /* backward with upstream gradient 0.7: dz_ri = (softmax_ri sum_k p_rk - p_ri) 0.7 / R */
    struct ggml_tensor * dl = ggml_new_f32(ctx, 0.7f);
    struct ggml_tensor * dz = ggml_cross_entropy_loss_back(ctx, z, labels, dl);
    char name[160];
    snprintf(name, sizeof name, "%s, backward", what);
    if (!compute_ok(ctx, dz, name)) return;
    CHECK(ggml_are_same_shape(dz, z), "%s: shaped like the logits", name);
    double * ref = ref_new(ggml_nelements(z));
    for (int64_t r = 0; r < rows; r++) {
        double psum = 0;
        for (int64_t i = 0; i < nc; i++) psum += ref_label(labels, nc, r, i);
        for (int64_t i = 0; i < nc; i++)
            ref[r * nc + i] = (exp(ref_log_softmax(zd + r * nc, nc, i)) * psum - ref_label(labels, nc, r, i)) * 0.7 / (double) rows;
    }
    CHECK_REL(tc_rel_err_tensor(dz, ref), TOL, name);
    free(ref);
}

static void test_cross_entropy(void) {
    struct ggml_context * ctx = tc_ctx(16);
    const int64_t ne[4] = {37, 5, 2, 1}, nc = ne[0];
    struct ggml_tensor * z = rand_tensor(ctx, GGML_TYPE_F32, ne, -4, 4);
    /* dense labels: rows that are distributions, and (the formula does not assume it) rows that are not */
    struct ggml_tensor * dist = rand_tensor(ctx, GGML_TYPE_F32, ne, 0, 1), * raw = rand_tensor(ctx, GGML_TYPE_F32, ne, 0, 1);
    float * p = dist->data;
    for (int64_t r = 0; r < ggml_nrows(dist); r++) {
        double s = 0;
        for (int64_t i = 0; i < nc; i++) s += p[r * nc + i];
        for (int64_t i = 0; i < nc; i++) p[r * nc + i] = (float) (p[r * nc + i] / s);
    }
    check_cross_entropy(ctx, z, dist, "cross_entropy dense labels");
    check_cross_entropy(ctx, z, raw, "cross_entropy unnormalised dense labels");
    check_cross_entropy(ctx, z, indices(ctx, ne[1], ne[2], ne[3], NULL, (int) nc), "cross_entropy I32 labels");
    /* logits of +-80: exp(80) ~ 5.5e34 and 37 of them overflow a naive float sum of exponentials times anything */
    struct ggml_tensor * big = rand_tensor(ctx, GGML_TYPE_F32, ne, -80, 80);
    float * bd = big->data;
    bd[0] = 80.0f; bd[1] = 80.0f; bd[nc] = -80.0f;
    check_cross_entropy(ctx, big, dist, "cross_entropy logits +-80, dense labels");
    check_cross_entropy(ctx, big, indices(ctx, ne[1], ne[2], ne[3], NULL, (int) nc), "cross_entropy logits +-80, I32 labels");
    const int64_t one_class[4] = {1, 4, 1, 1};  /* one class: log softmax is 0 */
    check_cross_entropy(ctx, rand_tensor(ctx, GGML_TYPE_F32, one_class, -2, 2), indices(ctx, 4, 1, 1, NULL, 1), "cross_entropy one class");
    ggml_free(ctx);
}

/* ---- argmax ---- */

static void test_argmax(void) {
    struct ggml_context * ctx = tc_ctx(16);
    const int64_t nc = 6, rows = 5;
    const float vals[5][6] = {
        {1, 3, 3, 2, 0, 3},          /* ties: the first max (1) */
        {-1, -1, -1, -1, -1, -1},    /* all equal: 0 */
        {-5, -4, -3, -2, -1, -0.5f}, /* last */
        {9, 1, 2, 3, 4, 9},          /* first of a tie at both ends */
        {0, -0.0f, 0, 1e-30f, 0, 0}, /* tiny differences count */
    };
    const int32_t want[5] = {1, 0, 5, 0, 3};
    for (int type = 0; type < 2; type++) {
        struct ggml_tensor * a = ggml_new_tensor_2d(ctx, type ? GGML_TYPE_F16 : GGML_TYPE_F32, nc, rows);
        for (int64_t r = 0; r < rows; r++) for (int64_t i = 0; i < nc; i++) ggml_set_f32_nd(a, (int) i, (int) r, 0, 0, vals[r][i]);
        if (type) ggml_set_f32_nd(a, 3, 4, 0, 0, 1e-3f);  /* 1e-30 is 0 in F16 */
        struct ggml_tensor * out = ggml_argmax(ctx, a);
        if (!compute_ok(ctx, out, "argmax")) continue;
        CHECK(out->type == GGML_TYPE_I32 && out->ne[0] == rows && ggml_nelements(out) == rows, "argmax: I32 [rows]");
        for (int64_t r = 0; r < rows; r++)
            CHECK(((int32_t *) out->data)[r] == want[r], "argmax %s row %lld: %d, want %d", ggml_type_name(a->type), (long long) r,
                  ((int32_t *) out->data)[r], want[r]);
    }
    /* random rows against a plain scan */
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 101, 13);
    for (int64_t i = 0; i < ggml_nelements(a); i++) ggml_set_f32_1d(a, i, (float) tc_randint(-20, 20));  /* many ties */
    struct ggml_tensor * out = ggml_argmax(ctx, a);
    if (compute_ok(ctx, out, "argmax random")) {
        int bad = 0;
        for (int64_t r = 0; r < 13; r++) {
            int64_t best = 0;
            for (int64_t i = 1; i < 101; i++) if (ggml_get_f32_nd(a, (int) i, (int) r, 0, 0) > ggml_get_f32_nd(a, (int) best, (int) r, 0, 0)) best = i;
            if (((int32_t *) out->data)[r] != best) bad++;
        }
        CHECK(bad == 0, "argmax random: %d rows differ", bad);
    }
    ggml_free(ctx);
}

/* ---- backward rules by finite differences ---- */

/* sum(t * W) with a fixed random W */
static struct ggml_tensor * wsum(struct ggml_context * ctx, struct ggml_tensor * t) {
    if (!t) return NULL;
    return ggml_sum(ctx, ggml_mul(ctx, t, rand_tensor(ctx, GGML_TYPE_F32, t->ne, -1, 1)));
}

static struct ggml_tensor * b_get_rows(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    (void) user;
    const int32_t dup[8] = {4, 1, 4, 0, 6, 4, 1, 2};  /* rows 3, 5 untouched: gradient 0 */
    return wsum(ctx, ggml_get_rows(ctx, p[0], indices(ctx, 8, 1, 1, dup, 0)));
}
static struct ggml_tensor * b_get_rows_batched(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    (void) user;  /* table [4, 5, 3, 2] by indices [7, 3, 2] */
    return wsum(ctx, ggml_get_rows(ctx, p[0], indices(ctx, 7, 3, 2, NULL, 5)));
}
static struct ggml_tensor * b_get_rows_then_mul_mat(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    (void) user;  /* embedding lookup feeding a projection: mul_mat(w [4, 3], emb [4, 6]) */
    const int32_t tok[6] = {0, 2, 2, 5, 1, 2};
    return wsum(ctx, ggml_mul_mat(ctx, p[1], ggml_get_rows(ctx, p[0], indices(ctx, 6, 1, 1, tok, 0))));
}

/* 3 * cross_entropy(z, labels): the upstream gradient is 3, not 1 */
static struct ggml_tensor * b_cross_entropy_dense(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    (void) user;
    return ggml_scale(ctx, ggml_cross_entropy_loss(ctx, p[0], rand_tensor(ctx, GGML_TYPE_F32, p[0]->ne, 0, 1)), 3.0f);
}
static struct ggml_tensor * b_cross_entropy_i32(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    (void) user;
    return ggml_scale(ctx, ggml_cross_entropy_loss(ctx, p[0], indices(ctx, p[0]->ne[1], p[0]->ne[2], p[0]->ne[3], NULL, (int) p[0]->ne[0])), 3.0f);
}
static struct ggml_tensor * b_cross_entropy_transposed(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    (void) user;  /* logits a strided view: z = transpose(p) [5, 4] */
    struct ggml_tensor * z = ggml_transpose(ctx, p[0]);
    return ggml_scale(ctx, ggml_cross_entropy_loss(ctx, z, indices(ctx, z->ne[1], 1, 1, NULL, (int) z->ne[0])), 3.0f);
}
static struct ggml_tensor * b_classifier(struct ggml_context * ctx, struct ggml_tensor ** p, void * user) {
    (void) user;  /* cross_entropy(mul_mat(w [3, 6], x [3, 4]), classes): a softmax classifier */
    return ggml_cross_entropy_loss(ctx, ggml_mul_mat(ctx, p[0], p[1]), indices(ctx, 4, 1, 1, NULL, 6));
}

static void test_gradients(void) {
    /* step 1e-2 on inputs in [-2, 2]; |analytic - numeric| <= 2e-4 + 1e-2 |numeric|: the cross-entropy
       gradients are ~3/R * (softmax - p) ~ 1e-2..1e-1 here, so a missing term, sum(p) or 1/R shows */
    const int64_t s_rows[1][4] = {{5, 7, 1, 1}}, s_batched[1][4] = {{4, 5, 3, 2}}, s_emb[2][4] = {{4, 6, 1, 1}, {4, 3, 1, 1}};
    const int64_t s_ce[1][4] = {{7, 3, 2, 1}}, s_ce_t[1][4] = {{4, 5, 1, 1}}, s_cls[2][4] = {{3, 6, 1, 1}, {3, 4, 1, 1}};
    tc_gradcheck("get_rows with duplicates", b_get_rows, NULL, 1, s_rows, -2, 2, 1e-2, 2e-4, 1e-2);
    tc_gradcheck("get_rows batched", b_get_rows_batched, NULL, 1, s_batched, -2, 2, 1e-2, 2e-4, 1e-2);
    tc_gradcheck("get_rows then mul_mat", b_get_rows_then_mul_mat, NULL, 2, s_emb, -2, 2, 1e-2, 2e-4, 1e-2);
    tc_gradcheck("cross_entropy dense labels", b_cross_entropy_dense, NULL, 1, s_ce, -2, 2, 1e-2, 2e-4, 1e-2);
    tc_gradcheck("cross_entropy I32 labels", b_cross_entropy_i32, NULL, 1, s_ce, -2, 2, 1e-2, 2e-4, 1e-2);
    tc_gradcheck("cross_entropy transposed logits", b_cross_entropy_transposed, NULL, 1, s_ce_t, -2, 2, 1e-2, 2e-4, 1e-2);
    tc_gradcheck("softmax classifier", b_classifier, NULL, 2, s_cls, -2, 2, 1e-2, 2e-4, 1e-2);
}

/* Gradients autodiff must refuse: with respect to indices and dense labels. */
static void test_refused_gradients(void) {
    struct ggml_context * ctx = tc_ctx(16);
    const int64_t ne[4] = {5, 4, 1, 1};
    struct ggml_tensor * table = rand_tensor(ctx, GGML_TYPE_F32, ne, -1, 1);
    struct ggml_tensor * idx = indices(ctx, 3, 1, 1, NULL, 4);
    ggml_set_param(idx);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_get_rows(ctx, table, idx));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(g, loss);
    CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_FAILED && strstr(ggml_last_error(), "indices"),
          "get_rows: a gradient for the indices is refused (%s)", ggml_last_error());

    struct ggml_tensor * z = rand_tensor(ctx, GGML_TYPE_F32, ne, -1, 1), * labels = rand_tensor(ctx, GGML_TYPE_F32, ne, 0, 1);
    ggml_set_param(z);
    ggml_set_param(labels);
    struct ggml_tensor * ce = ggml_cross_entropy_loss(ctx, z, labels);
    ggml_set_loss(ce);
    struct ggml_cgraph * g2 = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(g2, ce);
    CHECK(ggml_build_backward_expand(ctx, g2, NULL) == GGML_STATUS_FAILED && strstr(ggml_last_error(), "labels"),
          "cross_entropy: a gradient for dense labels is refused (%s)", ggml_last_error());
    ggml_free(ctx);
}

/* ---- optimizers: two steps against the formulas worked in double ---- */

static void test_adamw(void) {
    struct ggml_context * ctx = tc_ctx(16);
    enum { N = 4 };
    const double w0[N] = {0.5, -1.0, 2.0, 0.0};
    const double grads[2][N] = {{0.1, -0.2, 0.3, 1e-3}, {-0.05, 0.4, 0.0, -2.0}};
    /* the op is given float hyper-parameters: the reference uses the same values (1 - 0.999f is 4.7e-5 off 1e-3) */
    const double alpha = 1e-2f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, wd = 0.1f;
    struct ggml_tensor * w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N), * gr = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_tensor * m = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N), * v = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_tensor * hp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7);
    ggml_set_param(w);
    for (int i = 0; i < N; i++) ggml_set_f32_1d(w, i, (float) w0[i]);
    ggml_set_zero(m);
    ggml_set_zero(v);
    struct ggml_tensor * step = ggml_opt_step_adamw(ctx, w, gr, m, v, hp);
    if (!CHECK(step != NULL, "adamw: %s", ggml_last_error())) { ggml_free(ctx); return; }
    CHECK(step->data == w->data && ggml_are_same_shape(step, w), "adamw: the result is a view of a");
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_expand(g, step);
    double rw[N], rm[N] = {0}, rv[N] = {0};
    memcpy(rw, w0, sizeof rw);
    for (int t = 1; t <= 2; t++) {
        const double b1h = (float) (1 / (1 - pow(beta1, t))), b2h = (float) (1 / (1 - pow(beta2, t)));
        const float hpv[7] = {(float) alpha, (float) beta1, (float) beta2, (float) eps, (float) wd, (float) b1h, (float) b2h};
        memcpy(hp->data, hpv, sizeof hpv);
        for (int i = 0; i < N; i++) ggml_set_f32_1d(gr, i, (float) grads[t - 1][i]);
        CHECK(ggml_graph_compute_with_ctx(ctx, g, NTH) == GGML_STATUS_SUCCESS, "adamw step %d: %s", t, ggml_last_error());
        for (int i = 0; i < N; i++) {
            const double gi = grads[t - 1][i];
            rm[i] = beta1 * rm[i] + (1 - beta1) * gi;
            rv[i] = beta2 * rv[i] + (1 - beta2) * gi * gi;
            rw[i] = rw[i] * (1 - alpha * wd) - alpha * (rm[i] * b1h) / (sqrt(rv[i] * b2h) + eps);
        }
        CHECK_REL(tc_rel_err_tensor(w, rw), 1e-6, "adamw weights");
        CHECK_REL(tc_rel_err_tensor(m, rm), 1e-6, "adamw first moment");
        CHECK_REL(tc_rel_err_tensor(v, rv), 1e-6, "adamw second moment");
    }
    /* element 0 worked by hand: step 1: m = 0.01, v = 1e-5, m^ = 0.1, v^ = 0.01,
       w = 0.5 * 0.999 - 0.01 * 0.1 / (0.1 + 1e-8) = 0.4895;
       step 2: m = 0.009 - 0.005 = 0.004, v = 9.99e-6 + 2.5e-6 = 1.249e-5, m^ = 0.004 / 0.19 = 0.021052632,
       v^ = 1.249e-5 / 0.001999 = 0.0062481241, sqrt = 0.079045076,
       w = 0.4895 * 0.999 - 0.01 * 0.021052632 / 0.079045086 = 0.4890105 - 0.0026633686 = 0.48634713 */
    CHECK(fabs(ggml_get_f32_1d(w, 0) - 0.48634713) < 2e-7, "adamw element 0 after 2 steps: %.9g, by hand 0.48634713", (double) ggml_get_f32_1d(w, 0));
    ggml_free(ctx);
}

static void test_sgd(void) {
    struct ggml_context * ctx = tc_ctx(16);
    enum { N = 3 };
    const double w0[N] = {0.5, -1.0, 2.0};
    const double grads[2][N] = {{0.1, -0.2, 0.3}, {-0.05, 0.4, 0.0}};
    const double alpha = 0.1f, wd = 0.01f;  /* the float values the op is given */
    struct ggml_tensor * w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N), * gr = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_tensor * hp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    ggml_set_param(w);
    for (int i = 0; i < N; i++) ggml_set_f32_1d(w, i, (float) w0[i]);
    ggml_set_f32_1d(hp, 0, (float) alpha);
    ggml_set_f32_1d(hp, 1, (float) wd);
    struct ggml_tensor * step = ggml_opt_step_sgd(ctx, w, gr, hp);
    if (!CHECK(step != NULL, "sgd: %s", ggml_last_error())) { ggml_free(ctx); return; }
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_expand(g, step);
    double rw[N];
    memcpy(rw, w0, sizeof rw);
    for (int t = 0; t < 2; t++) {
        for (int i = 0; i < N; i++) ggml_set_f32_1d(gr, i, (float) grads[t][i]);
        CHECK(ggml_graph_compute_with_ctx(ctx, g, NTH) == GGML_STATUS_SUCCESS, "sgd step %d: %s", t, ggml_last_error());
        for (int i = 0; i < N; i++) rw[i] = rw[i] * (1 - alpha * wd) - alpha * grads[t][i];
        CHECK_REL(tc_rel_err_tensor(w, rw), 1e-6, "sgd weights");
    }
    /* element 1 by hand: -1 * 0.999 + 0.02 = -0.979; -0.979 * 0.999 - 0.04 = -1.018021 */
    CHECK(fabs(ggml_get_f32_1d(w, 1) - -1.018021) < 2e-7, "sgd element 1 after 2 steps: %.9g, by hand -1.018021", (double) ggml_get_f32_1d(w, 1));
    ggml_free(ctx);
}

/* ---- indices out of range fail the compute ---- */

/* out's compute fails with a message containing `expect`, with 1 and 3 threads;
 * `after` (a node computed after out) is skipped: it stays poisoned. */
static void check_fails(struct ggml_context * ctx, struct ggml_tensor * out, const char * expect, const char * what) {
    if (!CHECK(out != NULL, "%s: constructor returned NULL: %s", what, ggml_last_error())) return;
    struct ggml_tensor * after = ggml_scale(ctx, ggml_sum(ctx, out), 2.0f);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(g, out);
    ggml_build_forward_expand(g, after);
    for (int nth = 1; nth <= 3; nth += 2) {
        tc_poison(after);
        ggml_clear_error();
        const enum ggml_status st = ggml_graph_compute_with_ctx(ctx, g, nth);
        CHECK(st == GGML_STATUS_FAILED, "%s (%d threads): status %d, want GGML_STATUS_FAILED", what, nth, (int) st);
        CHECK(strstr(ggml_last_error(), expect) != NULL, "%s (%d threads): message '%s' lacks '%s'", what, nth, ggml_last_error(), expect);
        CHECK(isnan(ggml_get_f32_1d(after, 0)), "%s (%d threads): a node after the failure was computed", what, nth);
    }
}

static void test_out_of_range(void) {
    struct ggml_context * ctx = tc_ctx(16);
    const int64_t ne[4] = {5, 4, 1, 1}, nb[4] = {5, 4, 2, 1};
    struct ggml_tensor * table = rand_tensor(ctx, GGML_TYPE_F32, ne, -1, 1), * table_b = rand_tensor(ctx, GGML_TYPE_F32, nb, -1, 1);
    const int32_t neg[3] = {0, -1, 2}, past[3] = {3, 4, 0}, huge[3] = {INT32_MIN, 0, INT32_MAX};
    check_fails(ctx, ggml_get_rows(ctx, table, indices(ctx, 3, 1, 1, neg, 0)), "index -1", "get_rows index -1");
    check_fails(ctx, ggml_get_rows(ctx, table, indices(ctx, 3, 1, 1, past, 0)), "index 4", "get_rows index = rows");
    check_fails(ctx, ggml_get_rows(ctx, table, indices(ctx, 3, 1, 1, huge, 0)), "outside [0, 4)", "get_rows INT32_MIN / MAX");
    const int32_t batched_bad[6] = {0, 1, 2, 3, 3, 4};  /* the bad one is in the second batch */
    check_fails(ctx, ggml_get_rows(ctx, table_b, indices(ctx, 3, 2, 1, batched_bad, 0)), "index 4", "get_rows batched index = rows");
    const int64_t gne[4] = {5, 3, 1, 1};
    check_fails(ctx, ggml_get_rows_back(ctx, rand_tensor(ctx, GGML_TYPE_F32, gne, -1, 1), indices(ctx, 3, 1, 1, neg, 0), table),
                "index -1", "get_rows_back index -1");
    check_fails(ctx, ggml_get_rows_back(ctx, rand_tensor(ctx, GGML_TYPE_F32, gne, -1, 1), indices(ctx, 3, 1, 1, past, 0), table),
                "index 4", "get_rows_back index = rows");
    const int32_t cls_neg[4] = {0, 1, -1, 2}, cls_past[4] = {0, 5, 1, 2};  /* 5 classes */
    check_fails(ctx, ggml_cross_entropy_loss(ctx, table, indices(ctx, 4, 1, 1, cls_neg, 0)), "class -1", "cross_entropy class -1");
    check_fails(ctx, ggml_cross_entropy_loss(ctx, table, indices(ctx, 4, 1, 1, cls_past, 0)), "class 5", "cross_entropy class = classes");
    check_fails(ctx, ggml_cross_entropy_loss_back(ctx, table, indices(ctx, 4, 1, 1, cls_past, 0), ggml_new_f32(ctx, 1)), "class 5",
                "cross_entropy_back class = classes");
    /* after all that, a valid graph computes normally */
    const int32_t ok[3] = {3, 0, 3};
    check_get_rows(ctx, table, indices(ctx, 3, 1, 1, ok, 0), "get_rows after failures");
    ggml_free(ctx);
}

/* ---- bad arguments give NULL with a message ---- */

#define EXPECT_NULL(expr, what)                                                                                       \
    do {                                                                                                              \
        ggml_clear_error();                                                                                           \
        struct ggml_tensor * r_ = (expr);                                                                             \
        CHECK(r_ == NULL && ggml_last_error()[0] != '\0', "%s: want NULL with a message (got %p, '%s')", what, (void *) r_, ggml_last_error()); \
    } while (0)

static void test_bad_arguments(void) {
    struct ggml_context * ctx = tc_ctx(16);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 4), * a3 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 5, 4, 2);
    struct ggml_tensor * idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3), * fidx = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    struct ggml_tensor * idx2 = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 2), * idx4 = ggml_new_tensor_4d(ctx, GGML_TYPE_I32, 3, 1, 1, 2);
    EXPECT_NULL(ggml_get_rows(NULL, a, idx), "get_rows NULL context");
    EXPECT_NULL(ggml_get_rows(ctx, NULL, idx), "get_rows NULL a");
    EXPECT_NULL(ggml_get_rows(ctx, a, NULL), "get_rows NULL b");
    EXPECT_NULL(ggml_get_rows(ctx, a, fidx), "get_rows F32 indices");
    EXPECT_NULL(ggml_get_rows(ctx, a, idx2), "get_rows b->ne[1] != a->ne[2]");
    EXPECT_NULL(ggml_get_rows(ctx, a3, idx), "get_rows a->ne[2] != b->ne[1]");
    EXPECT_NULL(ggml_get_rows(ctx, a, idx4), "get_rows 4-D indices");
    struct ggml_tensor * gb = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    EXPECT_NULL(ggml_get_rows_back(ctx, gb, idx, NULL), "get_rows_back NULL c");
    EXPECT_NULL(ggml_get_rows_back(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3), idx, a), "get_rows_back ne0 mismatch");
    EXPECT_NULL(ggml_get_rows_back(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 2), idx, a), "get_rows_back a->ne[1] != b->ne[0]");
    EXPECT_NULL(ggml_get_rows_back(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 5, 3), idx, a), "get_rows_back F16 gradient");
    EXPECT_NULL(ggml_get_rows_back(ctx, gb, fidx, a), "get_rows_back F32 indices");
    EXPECT_NULL(ggml_get_rows_back(ctx, gb, idx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 0)), "get_rows_back c without rows");
    struct ggml_tensor * labels_i = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4);
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, a, NULL), "cross_entropy NULL labels");
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5)), "cross_entropy dense labels of another shape");
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 5, 4)), "cross_entropy F16 labels");
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, a, ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 5)), "cross_entropy I32 labels, wrong row count");
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, a3, labels_i), "cross_entropy I32 labels, missing dims");
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 5, 4), labels_i), "cross_entropy F16 logits");
    EXPECT_NULL(ggml_cross_entropy_loss(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 0, 4), labels_i), "cross_entropy no classes");
    EXPECT_NULL(ggml_cross_entropy_loss_back(ctx, a, labels_i, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2)), "cross_entropy_back c of 2 elements");
    EXPECT_NULL(ggml_cross_entropy_loss_back(ctx, a, labels_i, ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1)), "cross_entropy_back I32 c");
    EXPECT_NULL(ggml_cross_entropy_loss_back(ctx, a, labels_i, NULL), "cross_entropy_back NULL c");
    EXPECT_NULL(ggml_argmax(ctx, a3), "argmax 3-D");
    EXPECT_NULL(ggml_argmax(ctx, idx2), "argmax I32");
    EXPECT_NULL(ggml_argmax(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 0, 3)), "argmax empty rows");
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 4), * g = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 4);
    struct ggml_tensor * m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 4), * v = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 4);
    struct ggml_tensor * hp7 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7), * hp2 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    EXPECT_NULL(ggml_opt_step_adamw(ctx, w, g, m, v, hp7), "adamw on a tensor that is not a parameter");
    ggml_set_param(w);
    CHECK(ggml_opt_step_adamw(ctx, w, g, m, v, hp7) != NULL, "adamw valid call: %s", ggml_last_error());
    EXPECT_NULL(ggml_opt_step_adamw(ctx, w, g, m, NULL, hp7), "adamw NULL v");
    EXPECT_NULL(ggml_opt_step_adamw(ctx, w, g, m, v, hp2), "adamw 2 hyper-parameters");
    EXPECT_NULL(ggml_opt_step_adamw(ctx, w, g, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5), v, hp7), "adamw m of another shape");
    EXPECT_NULL(ggml_opt_step_adamw(ctx, w, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 5, 4), m, v, hp7), "adamw F16 gradient");
    EXPECT_NULL(ggml_opt_step_adamw(ctx, w, ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5)), m, v, hp7), "adamw strided gradient");
    struct ggml_tensor * wt = ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5));
    ggml_set_param(wt);
    EXPECT_NULL(ggml_opt_step_adamw(ctx, wt, g, m, v, hp7), "adamw strided weights");
    CHECK(ggml_opt_step_sgd(ctx, w, g, hp2) != NULL, "sgd valid call: %s", ggml_last_error());
    EXPECT_NULL(ggml_opt_step_sgd(ctx, w, g, hp7), "sgd 7 hyper-parameters");
    EXPECT_NULL(ggml_opt_step_sgd(ctx, w, g, ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 2)), "sgd F16 hyper-parameters");
    EXPECT_NULL(ggml_opt_step_sgd(ctx, w, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 20), hp2), "sgd gradient of another shape");
    ggml_free(ctx);
}

/* ---- results do not depend on the thread count ---- */

static bool same_bits(const struct ggml_tensor * x, const void * y) { return memcmp(x->data, y, ggml_nbytes(x)) == 0; }

static void check_threads(struct ggml_context * ctx, struct ggml_tensor * out, const char * what) {
    if (!CHECK(out != NULL, "%s: %s", what, ggml_last_error())) return;
    void * one = malloc(ggml_nbytes(out));
    CHECK(run(ctx, out, 1) == GGML_STATUS_SUCCESS, "%s: 1 thread: %s", what, ggml_last_error());
    memcpy(one, out->data, ggml_nbytes(out));
    tc_poison(out);
    CHECK(run(ctx, out, 3) == GGML_STATUS_SUCCESS, "%s: 3 threads: %s", what, ggml_last_error());
    CHECK(same_bits(out, one), "%s: 1 and 3 threads differ", what);
    free(one);
}

static void test_thread_independence(void) {
    struct ggml_context * ctx = tc_ctx(32);
    const int64_t cne[4] = {9, 37, 1, 1}, gne[4] = {9, 200, 1, 1}, zne[4] = {31, 101, 1, 1};
    struct ggml_tensor * c = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, cne);
    check_threads(ctx, ggml_get_rows_back(ctx, rand_tensor(ctx, GGML_TYPE_F32, gne, -1, 1), indices(ctx, 200, 1, 1, NULL, 37), c),
                  "get_rows_back 200 indices into 37 rows");
    struct ggml_tensor * z = rand_tensor(ctx, GGML_TYPE_F32, zne, -5, 5), * cls = indices(ctx, 101, 1, 1, NULL, 31);
    struct ggml_tensor * dense = rand_tensor(ctx, GGML_TYPE_F32, zne, 0, 1);
    check_threads(ctx, ggml_cross_entropy_loss(ctx, z, cls), "cross_entropy I32 labels, 101 rows");
    check_threads(ctx, ggml_cross_entropy_loss(ctx, z, dense), "cross_entropy dense labels, 101 rows");
    check_threads(ctx, ggml_cross_entropy_loss_back(ctx, z, dense, ggml_new_f32(ctx, 1.3f)), "cross_entropy_back");
    check_threads(ctx, ggml_get_rows(ctx, z, cls), "get_rows");
    check_threads(ctx, ggml_argmax(ctx, z), "argmax");
    /* adamw from the same state with 1 and 3 threads */
    struct ggml_tensor * w = rand_tensor(ctx, GGML_TYPE_F32, zne, -1, 1), * g = rand_tensor(ctx, GGML_TYPE_F32, zne, -1, 1);
    struct ggml_tensor * m = rand_tensor(ctx, GGML_TYPE_F32, zne, -1, 1), * v = rand_tensor(ctx, GGML_TYPE_F32, zne, 0, 1);
    struct ggml_tensor * hp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7);
    const float hpv[7] = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f, 10.0f, 1000.0f};
    memcpy(hp->data, hpv, sizeof hpv);
    ggml_set_param(w);
    struct ggml_tensor * step = ggml_opt_step_adamw(ctx, w, g, m, v, hp);
    const size_t nb = ggml_nbytes(w);
    char * saved = malloc(3 * nb), * after1 = malloc(3 * nb);
    struct ggml_tensor * state[3] = {w, m, v};
    for (int k = 0; k < 3; k++) memcpy(saved + k * nb, state[k]->data, nb);
    CHECK(run(ctx, step, 1) == GGML_STATUS_SUCCESS, "adamw 1 thread");
    for (int k = 0; k < 3; k++) { memcpy(after1 + k * nb, state[k]->data, nb); memcpy(state[k]->data, saved + k * nb, nb); }
    CHECK(run(ctx, step, 3) == GGML_STATUS_SUCCESS, "adamw 3 threads");
    for (int k = 0; k < 3; k++) CHECK(same_bits(state[k], after1 + k * nb), "adamw: tensor %d differs between 1 and 3 threads", k);
    free(saved);
    free(after1);
    ggml_free(ctx);
}

int main(void) {
    tc_seed(20240611);
    test_get_rows();
    test_get_rows_back();
    test_cross_entropy();
    test_argmax();
    test_gradients();
    test_refused_gradients();
    test_adamw();
    test_sgd();
    test_out_of_range();
    test_bad_arguments();
    test_thread_independence();
    return tc_finish("ops_train");
}

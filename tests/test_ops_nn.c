/* test_ops_nn.c -- activations, norm / rms_norm, their backward kernels and
 * rules, and the fused softmax backward.
 *
 * Forward and backward kernels are compared element by element with float64
 * formulas written here (|y - ref| <= rtol |ref| + atol): rtol 2e-6 forward
 * (a few float roundings per element; a wrong formula or constant is off by
 * 1e-3 or more) with atol 1e-7 for the far tails of GELU (|y| < 1e-7, where
 * the float rounding of x is amplified by the steep exp / erfc), rtol 1e-5 and
 * atol 2e-7 for derivatives (1 - t^2 and gelu' lose up to one float ulp of 1
 * absolutely where they cross or approach 0). A value beyond the float range
 * must be +-Inf, as expf gives; exp's derivative is exp(x) itself, so g e^x
 * is Inf where e^x is. Inputs include
 * magnitudes where tanh, sigmoid and exp saturate or overflow (up to 1e20):
 * never NaN. Norms use a relative 2-norm error of 1e-6 on rows with a large
 * common offset (1000 + noise), which a one-pass or float-only variance fails.
 * Every backward rule goes through tc_gradcheck (step 1e-2, atol 1e-3, rtol
 * 1e-2, as in test_ops_backward.c). */
#include "common/test_common.h"
#include "ops/ops_internal.h"  /* white-box: the internal backward ops */

#include <float.h>
#include <stdlib.h>
#include <string.h>

#define NTH 3

#define N_ACT 8
static const enum ggml_unary_op acts[N_ACT] = {GGML_UNARY_OP_NEG, GGML_UNARY_OP_TANH, GGML_UNARY_OP_RELU, GGML_UNARY_OP_SIGMOID,
                                               GGML_UNARY_OP_GELU, GGML_UNARY_OP_SILU, GGML_UNARY_OP_EXP, GGML_UNARY_OP_GELU_ERF};
static struct ggml_tensor * (*const act_fns[N_ACT])(struct ggml_context *, struct ggml_tensor *) = {
    ggml_neg, ggml_tanh, ggml_relu, ggml_sigmoid, ggml_gelu, ggml_silu, ggml_exp, ggml_gelu_erf};

/* ---- float64 references ---- */

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static const double K = 0.79788456080286535588, C = 0.044715;  /* sqrt(2/pi), GELU's cubic coefficient */

static double ref_act(enum ggml_unary_op op, double x) {
    switch (op) {
        case GGML_UNARY_OP_NEG:      return -x;
        case GGML_UNARY_OP_TANH:     return tanh(x);
        case GGML_UNARY_OP_RELU:     return x > 0 ? x : 0;
        case GGML_UNARY_OP_SIGMOID:  return sigmoid(x);
        case GGML_UNARY_OP_GELU:     return 0.5 * x * (1 + tanh(K * (x + C * x * x * x)));
        case GGML_UNARY_OP_SILU:     return x * sigmoid(x);
        case GGML_UNARY_OP_EXP:      return exp(x);
        default:                     return 0.5 * x * erfc(-x / sqrt(2.0));
    }
}

static double ref_act_grad(enum ggml_unary_op op, double x) {
    switch (op) {
        case GGML_UNARY_OP_NEG:      return -1;
        case GGML_UNARY_OP_TANH:     return 1 - tanh(x) * tanh(x);
        case GGML_UNARY_OP_RELU:     return x > 0;
        case GGML_UNARY_OP_SIGMOID:  return sigmoid(x) * (1 - sigmoid(x));
        case GGML_UNARY_OP_GELU: {
            const double t = tanh(K * (x + C * x * x * x));
            return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * K * (1 + 3 * C * x * x);
        }
        case GGML_UNARY_OP_SILU:     return sigmoid(x) * (1 + x * (1 - sigmoid(x)));
        case GGML_UNARY_OP_EXP:      return exp(x);
        default:                     return 0.5 * erfc(-x / sqrt(2.0)) + x * exp(-0.5 * x * x) / sqrt(2 * 3.14159265358979323846);
    }
}

/* ---- helpers ---- */

static bool compute_nth(struct ggml_context * ctx, struct ggml_tensor * out, int nth) {
    if (!CHECK(out != NULL, "op returned NULL: %s", ggml_last_error())) return false;
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(g, out);
    return CHECK(ggml_graph_compute_with_ctx(ctx, g, nth) == GGML_STATUS_SUCCESS, "compute failed: %s", ggml_last_error());
}

static bool poison_compute(struct ggml_context * ctx, struct ggml_tensor * out) {
    if (out) tc_poison(out);
    return compute_nth(ctx, out, NTH);
}

/* Elements of y (logical order) off their reference; beyond the float range the value must be that Inf. */
static void expect_close(const struct ggml_tensor * y, const double * ref, double rtol, double atol, const char * what) {
    int bad = 0;
    for (int64_t i = 0; i < ggml_nelements(y); i++) {
        const double v = ggml_get_f32_1d(y, i);
        const bool ok = fabs(ref[i]) > FLT_MAX ? v == copysign(INFINITY, ref[i]) : fabs(v - ref[i]) <= rtol * fabs(ref[i]) + atol;
        if (!ok && bad++ < 4) fprintf(stderr, "  %s: element %lld: got %.9g, want %.9g\n", what, (long long) i, v, ref[i]);
    }
    CHECK(bad == 0, "%s: %d elements off", what, bad);
}

/* x values: magnitudes where the activations saturate or overflow, then uniform ones */
static const double specials[] = {0, -0.0, 0.5, -0.5, 1, -1, 3, -3, 5, -5, 10, -10, 20, -20, 50, -50, 88, -88, 89, -89,
                                  100, -100, 1e4, -1e4, 1e20, -1e20, 1e-30, -1e-30};

static struct ggml_tensor * act_input(struct ggml_context * ctx, int64_t n0, int64_t n1, bool transposed) {
    struct ggml_tensor * base = transposed ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n1, n0) : ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n0, n1);
    struct ggml_tensor * x = transposed ? ggml_transpose(ctx, base) : base;
    const int64_t n_special = sizeof specials / sizeof specials[0];
    for (int64_t i = 0; i < n0 * n1; i++) ggml_set_f32_1d(x, i, (float) (i < n_special ? specials[i] : tc_uniform(-6, 6)));
    return x;
}

static double * values_of(const struct ggml_tensor * t) {
    double * v = malloc((size_t) ggml_nelements(t) * sizeof *v);
    for (int64_t i = 0; i < ggml_nelements(t); i++) v[i] = ggml_get_f32_1d(t, i);
    return v;
}

/* ---- activations ---- */

static void test_activations(void) {
    static const int64_t shapes[][2] = {{61, 3}, {1, 1}, {16, 2}, {37, 1}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        for (int tr = 0; tr < 2; tr++) {
            struct ggml_context * ctx = tc_ctx(16);
            struct ggml_tensor * x = act_input(ctx, shapes[c][0], shapes[c][1], tr);
            struct ggml_tensor * g = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, shapes[c][0], shapes[c][1]);
            tc_fill_uniform(g, -1, 1);
            double * xv = values_of(x), * gv = values_of(g);
            const int64_t n = ggml_nelements(x);
            double * ref = malloc((size_t) n * sizeof *ref);
            for (int k = 0; k < N_ACT; k++) {
                const enum ggml_unary_op op = acts[k];
                char what[128];
                snprintf(what, sizeof what, "%s [%lld,%lld]%s", ggml_unary_op_name(op), (long long) shapes[c][0], (long long) shapes[c][1], tr ? " transposed" : "");
                struct ggml_tensor * y = act_fns[k](ctx, x);
                if (!CHECK(y && ggml_get_unary_op(y) == op && y->op == GGML_OP_UNARY, "%s: a UNARY node", what)) continue;
                for (int64_t i = 0; i < n; i++) ref[i] = ref_act(op, xv[i]);
                if (poison_compute(ctx, y)) expect_close(y, ref, 2e-6, 1e-7, what);
                struct ggml_tensor * dx = ggmlr_unary_back(ctx, g, x, op);
                for (int64_t i = 0; i < n; i++) {
                    const double d = ref_act_grad(op, xv[i]);
                    ref[i] = gv[i] * (d > FLT_MAX ? INFINITY : d);
                }
                strncat(what, " backward", sizeof what - strlen(what) - 1);
                if (poison_compute(ctx, dx)) expect_close(dx, ref, 1e-5, 2e-7, what);
            }
            free(ref); free(xv); free(gv);
            ggml_free(ctx);
        }
    }
    /* the references themselves, at points worked out by hand */
    CHECK(fabs(ref_act(GGML_UNARY_OP_GELU, 1.0) - 0.8411919906) < 1e-9, "gelu(1) = 0.84119199");
    CHECK(fabs(ref_act(GGML_UNARY_OP_GELU_ERF, 1.0) - 0.8413447461) < 1e-9, "gelu_erf(1) = 0.84134475");
    CHECK(fabs(ref_act_grad(GGML_UNARY_OP_SILU, 0.0) - 0.5) < 1e-15, "silu'(0) = 1/2");
}

/* ---- norm and rms_norm ---- */

/* float64 reference of one row (two passes), the result 0 where var + eps = 0 as the kernel documents */
static void ref_norm_row(bool rms, const double * x, int64_t n, double eps, double * y) {
    double mu = 0, ss = 0;
    if (!rms) { for (int64_t i = 0; i < n; i++) mu += x[i]; mu /= n; }
    for (int64_t i = 0; i < n; i++) ss += (x[i] - mu) * (x[i] - mu);
    const double v = ss / n + eps;
    for (int64_t i = 0; i < n; i++) y[i] = v > 0 ? (x[i] - mu) / sqrt(v) : 0;
}

/* dx of sum(g * norm(x)) by the DESIGN formulas */
static void ref_norm_back_row(bool rms, const double * g, const double * x, int64_t n, double eps, double * dx) {
    double mu = 0, ss = 0, mg = 0, mgz = 0;
    if (!rms) { for (int64_t i = 0; i < n; i++) mu += x[i]; mu /= n; }
    for (int64_t i = 0; i < n; i++) ss += (x[i] - mu) * (x[i] - mu);
    const double sd = sqrt(ss / n + eps);
    for (int64_t i = 0; i < n; i++) { mg += g[i] / n; mgz += g[i] * (x[i] - mu) / sd / n; }
    for (int64_t i = 0; i < n; i++) dx[i] = (g[i] - (rms ? 0 : mg) - (x[i] - mu) / sd * mgz) / sd;
}

struct norm_case { int64_t n0, rows; double offset, noise, eps; bool transposed; };

static void test_norms(void) {
    static const struct norm_case cases[] = {
        {37, 5, 0, 2, 1e-5, false}, {64, 3, 0, 1, 0.1, false}, {1, 4, 0, 2, 1e-5, false},  /* rows of length 1 */
        {129, 4, 1000, 1, 1e-5, false},   /* large common offset */
        {33, 6, -1000, 0.01, 0, false}, {7, 11, 0, 2, 1e-3, true}, {3, 2, 5, 3, 0, true},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const struct norm_case * k = &cases[c];
        struct ggml_context * ctx = tc_ctx(16);
        struct ggml_tensor * base = k->transposed ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k->rows, k->n0) : ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k->n0, k->rows);
        struct ggml_tensor * x = k->transposed ? ggml_transpose(ctx, base) : base;
        tc_fill_uniform(base, k->offset - k->noise, k->offset + k->noise);
        struct ggml_tensor * g = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k->n0, k->rows);
        tc_fill_uniform(g, -1, 1);
        double * xv = values_of(x), * gv = values_of(g), * ref = malloc((size_t) (k->n0 * k->rows) * sizeof *ref);
        for (int rms = 0; rms < 2; rms++) {
            char what[160];
            snprintf(what, sizeof what, "%s case %zu [%lld x %lld] offset %g eps %g%s", rms ? "rms_norm" : "norm", c, (long long) k->n0,
                     (long long) k->rows, k->offset, k->eps, k->transposed ? " transposed" : "");
            struct ggml_tensor * y = rms ? ggml_rms_norm(ctx, x, (float) k->eps) : ggml_norm(ctx, x, (float) k->eps);
            for (int64_t r = 0; r < k->rows; r++) ref_norm_row(rms, xv + r * k->n0, k->n0, (float) k->eps, ref + r * k->n0);
            if (poison_compute(ctx, y)) CHECK_REL(tc_rel_err_tensor(y, ref), 1e-6, what);
            struct ggml_tensor * dx = rms ? ggml_rms_norm_back(ctx, g, x, (float) k->eps) : ggmlr_norm_back(ctx, g, x, (float) k->eps);
            for (int64_t r = 0; r < k->rows; r++) ref_norm_back_row(rms, gv + r * k->n0, xv + r * k->n0, k->n0, (float) k->eps, ref + r * k->n0);
            strncat(what, " backward", sizeof what - strlen(what) - 1);
            if (poison_compute(ctx, dx)) CHECK_REL(tc_rel_err_tensor(dx, ref), 1e-5, what);
        }
        free(xv); free(gv); free(ref);
        ggml_free(ctx);
    }
    /* eps = 0 on a constant row (norm) and a zero row (rms_norm): defined as 0, forward and backward, no NaN */
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 2), * g = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 2);
    for (int i = 0; i < 5; i++) { ggml_set_f32_1d(x, i, 3.25f); ggml_set_f32_1d(x, 5 + i, 0.0f); }
    tc_fill_uniform(g, -1, 1);
    struct ggml_tensor * outs[4] = {ggml_norm(ctx, x, 0.0f), ggml_rms_norm(ctx, x, 0.0f), ggmlr_norm_back(ctx, g, x, 0.0f), ggml_rms_norm_back(ctx, g, x, 0.0f)};
    for (int o = 0; o < 4; o++) {
        if (!poison_compute(ctx, outs[o])) continue;
        const int64_t first = o % 2 == 0 ? 0 : 5;  /* norm: both rows are constant; rms_norm: the zero row */
        int bad = 0;
        for (int64_t i = first; i < 10; i++) bad += ggml_get_f32_1d(outs[o], i) != 0.0f;
        CHECK(bad == 0, "%s with eps = 0 on a degenerate row gives 0 (%d elements differ)", ggml_op_name(outs[o]->op), bad);
    }
    ggml_free(ctx);
}

/* ---- softmax backward ---- */

static void test_soft_max_back(void) {
    static const int64_t shapes[][4] = {{7, 5, 3, 1}, {1, 4, 1, 1}, {64, 3, 1, 2}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        struct ggml_context * ctx = tc_ctx(16);
        struct ggml_tensor * x = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, shapes[c]), * dy = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, shapes[c]);
        tc_fill_uniform(x, -3, 3);
        tc_fill_uniform(dy, -1, 1);
        const float scale = 0.7f;
        struct ggml_tensor * y = ggml_soft_max_ext(ctx, x, NULL, scale, 0.0f);
        if (!compute_nth(ctx, y, NTH)) { ggml_free(ctx); continue; }
        struct ggml_tensor * dx = ggml_soft_max_ext_back(ctx, dy, y, scale, 0.0f);
        /* the composed ops the backward rule used before: scale(y * (dy - sum_rows(dy * y)));
         * the float64 check of the kernel is a row of tests/ops/soft_max.c */
        struct ggml_tensor * composed = ggml_scale(ctx, ggml_mul(ctx, y, ggml_sub(ctx, dy, ggml_sum_rows(ctx, ggml_mul(ctx, dy, y)))), scale);
        const int64_t n = ggml_nelements(y);
        if (poison_compute(ctx, dx) && poison_compute(ctx, composed)) {
            double maxd = 0;
            for (int64_t i = 0; i < n; i++) maxd = fmax(maxd, fabs(tc_get(dx, i) - tc_get(composed, i)));
            CHECK(maxd <= 1e-6, "soft_max_ext_back matches the composed ops within rounding (max diff %.3g)", maxd);
        }
        ggml_free(ctx);
    }
}

/* ---- backward rules by finite differences ---- */

static struct ggml_tensor * wsum(struct ggml_context * ctx, struct ggml_tensor * t) {
    if (!t) return NULL;
    struct ggml_tensor * w = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, t->ne);
    tc_fill_uniform(w, -1, 1);
    return ggml_sum(ctx, ggml_mul(ctx, t, w));
}

#define BUILDER(name) static struct ggml_tensor * name(struct ggml_context * ctx, struct ggml_tensor ** p, void * user)

BUILDER(b_act) { return wsum(ctx, ggml_unary(ctx, p[0], *(const enum ggml_unary_op *) user)); }
BUILDER(b_act_transposed) { return wsum(ctx, ggml_unary(ctx, ggml_transpose(ctx, p[0]), *(const enum ggml_unary_op *) user)); }
/* relu of x * (+-1) with x in [0.05, 1]: inputs of both signs, away from the kink by more than the step */
BUILDER(b_relu_signed) {
    (void) user;
    struct ggml_tensor * sgn = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, p[0]->ne);
    for (int64_t i = 0; i < ggml_nelements(sgn); i++) ggml_set_f32_1d(sgn, i, i % 3 ? -1.0f : 1.0f);
    return wsum(ctx, ggml_relu(ctx, ggml_mul(ctx, p[0], sgn)));
}
BUILDER(b_norm) { (void) user; return wsum(ctx, ggml_norm(ctx, p[0], 1e-5f)); }
BUILDER(b_norm_transposed) { (void) user; return wsum(ctx, ggml_norm(ctx, ggml_transpose(ctx, p[0]), 1e-3f)); }
BUILDER(b_rms_norm) { (void) user; return wsum(ctx, ggml_rms_norm(ctx, p[0], 1e-3f)); }
BUILDER(b_rms_norm_transposed) { (void) user; return wsum(ctx, ggml_rms_norm(ctx, ggml_transpose(ctx, p[0]), 1e-5f)); }
BUILDER(b_soft_max_mask) {  /* scale 0.7, F32 mask with -Inf entries and one fully masked row */
    (void) user;
    struct ggml_tensor * m = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, p[0]->ne[0], p[0]->ne[1] + 1, 1, 1);
    for (int64_t i = 0; i < ggml_nelements(m); i++)
        ggml_set_f32_1d(m, i, i / m->ne[0] == 2 || tc_uniform(0, 1) < 0.2 ? -INFINITY : (float) tc_uniform(-1, 1));
    return wsum(ctx, ggml_soft_max_ext(ctx, p[0], m, 0.7f, 0.0f));
}
BUILDER(b_block) {  /* a transformer-ish chain: gelu(rms_norm(x)) -> norm -> silu, then tanh of a softmax */
    (void) user;
    struct ggml_tensor * h = ggml_silu(ctx, ggml_norm(ctx, ggml_gelu(ctx, ggml_rms_norm(ctx, p[0], 1e-5f)), 1e-5f));
    return wsum(ctx, ggml_tanh(ctx, ggml_soft_max(ctx, h)));
}

struct gcase { const char * name; tc_loss_builder build; const void * user; int64_t ne[4]; double lo, hi; };

static void test_gradients(void) {
    static enum ggml_unary_op ops[N_ACT];
    memcpy(ops, acts, sizeof ops);
    const struct gcase cases[] = {
        {"neg", b_act, &ops[0], {5, 3, 2, 1}, -2, 2},
        {"tanh", b_act, &ops[1], {5, 3, 2, 1}, -2, 2},
        {"relu away from 0", b_relu_signed, NULL, {5, 3, 2, 1}, 0.05, 1},
        {"sigmoid", b_act, &ops[3], {5, 3, 2, 1}, -3, 3},
        {"gelu", b_act, &ops[4], {5, 3, 2, 1}, -3, 3},
        {"silu", b_act, &ops[5], {5, 3, 2, 1}, -3, 3},
        {"exp", b_act, &ops[6], {5, 3, 2, 1}, -2, 2},
        {"gelu_erf", b_act, &ops[7], {5, 3, 2, 1}, -3, 3},
        {"gelu of transposed", b_act_transposed, &ops[4], {5, 3, 1, 1}, -3, 3},
        {"exp of transposed", b_act_transposed, &ops[6], {5, 3, 1, 1}, -2, 2},
        {"norm", b_norm, NULL, {7, 4, 2, 1}, -1, 1},
        {"norm of transposed", b_norm_transposed, NULL, {4, 6, 1, 1}, -1, 1},
        {"rms_norm", b_rms_norm, NULL, {7, 4, 2, 1}, -1, 1},
        {"rms_norm of transposed", b_rms_norm_transposed, NULL, {4, 6, 1, 1}, -1, 1},
        {"soft_max_ext mask + scale", b_soft_max_mask, NULL, {7, 5, 2, 1}, -1, 1},
        {"rms_norm/gelu/norm/silu/soft_max/tanh chain", b_block, NULL, {8, 3, 1, 1}, -1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int bad = tc_gradcheck(cases[i].name, cases[i].build, (void *) cases[i].user, 1, &cases[i].ne, cases[i].lo, cases[i].hi, 1e-2, 1e-3, 1e-2);
        printf("%-50s %s\n", cases[i].name, bad ? "FAILED" : "ok");
    }
}

/* ---- thread-count independence ---- */

static void test_threads(void) {
    struct ggml_context * ctx = tc_ctx(32);
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 67, 9, 2), * g = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 67, 9, 2);
    tc_fill_uniform(x, -4, 4);
    tc_fill_uniform(g, -1, 1);
    struct ggml_tensor * outs[2 * N_ACT + 5];
    int n_out = 0;
    for (int k = 0; k < N_ACT; k++) {
        outs[n_out++] = ggml_unary(ctx, x, acts[k]);
        outs[n_out++] = ggmlr_unary_back(ctx, g, x, acts[k]);
    }
    outs[n_out++] = ggml_norm(ctx, x, 1e-5f);
    outs[n_out++] = ggml_rms_norm(ctx, x, 1e-5f);
    outs[n_out++] = ggmlr_norm_back(ctx, g, x, 1e-5f);
    outs[n_out++] = ggml_rms_norm_back(ctx, g, x, 1e-5f);
    outs[n_out++] = ggml_soft_max_ext_back(ctx, g, ggml_soft_max(ctx, x), 0.5f, 0.0f);
    struct ggml_cgraph * gr = ggml_new_graph_custom(ctx, 128, false);
    for (int i = 0; i < n_out; i++) ggml_build_forward_expand(gr, outs[i]);
    const size_t bytes = ggml_nbytes(x);
    float * one = malloc(bytes * (size_t) n_out);
    tc_compute(ctx, gr, 1);
    for (int i = 0; i < n_out; i++) memcpy((char *) one + i * bytes, outs[i]->data, bytes);
    for (int i = 0; i < n_out; i++) tc_poison(outs[i]);
    tc_compute(ctx, gr, 3);
    for (int i = 0; i < n_out; i++)
        CHECK(memcmp((char *) one + i * bytes, outs[i]->data, bytes) == 0, "%s (output %d): 1 and 3 threads differ", ggml_op_name(outs[i]->op), i);
    free(one);
    ggml_free(ctx);
}

/* ---- bad input ---- */

#define EXPECT_NULL(expr, what) do { ggml_clear_error(); struct ggml_tensor * r_ = (expr); \
    CHECK(r_ == NULL && ggml_last_error()[0] != '\0', "%s: NULL with a message (got %p, '%s')", what, (void *) r_, ggml_last_error()); } while (0)

static void test_errors(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3), * h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 3);
    struct ggml_tensor * other = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 4);
    for (int k = 0; k < N_ACT; k++) {
        EXPECT_NULL(act_fns[k](ctx, NULL), "activation of NULL");
        EXPECT_NULL(act_fns[k](NULL, x), "activation without a context");
        EXPECT_NULL(act_fns[k](ctx, h), "activation of F16");
    }
    static const int bad_ops[] = {0, 1, 3, 5, 11, 12, 17, 20, 21, 22, 100, -1};
    for (size_t i = 0; i < sizeof bad_ops / sizeof bad_ops[0]; i++) {
        EXPECT_NULL(ggml_unary(ctx, x, (enum ggml_unary_op) bad_ops[i]), "ggml_unary with an unknown op");
        EXPECT_NULL(ggmlr_unary_back(ctx, x, x, (enum ggml_unary_op) bad_ops[i]), "unary_back with an unknown op");
        CHECK(strcmp(ggml_unary_op_name((enum ggml_unary_op) bad_ops[i]), "UNKNOWN") == 0, "name of unknown unary op %d", bad_ops[i]);
    }
    CHECK(strcmp(ggml_unary_op_name(GGML_UNARY_OP_GELU_ERF), "GELU_ERF") == 0, "GELU_ERF's name");
    ggml_clear_error();
    CHECK(ggml_get_unary_op(x) == GGML_UNARY_OP_COUNT && ggml_last_error()[0], "get_unary_op of a non-UNARY tensor: COUNT and a message");
    ggml_clear_error();
    CHECK(ggml_get_unary_op(NULL) == GGML_UNARY_OP_COUNT && ggml_last_error()[0], "get_unary_op of NULL");
    EXPECT_NULL(ggmlr_unary_back(ctx, x, other, GGML_UNARY_OP_GELU), "unary_back of mismatched shapes");
    EXPECT_NULL(ggmlr_unary_back(ctx, x, h, GGML_UNARY_OP_GELU), "unary_back of F16 x");
    static const float bad_eps[] = {-1e-5f, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad_eps / sizeof bad_eps[0]; i++) {
        EXPECT_NULL(ggml_norm(ctx, x, bad_eps[i]), "norm with a bad eps");
        EXPECT_NULL(ggml_rms_norm(ctx, x, bad_eps[i]), "rms_norm with a bad eps");
        EXPECT_NULL(ggml_rms_norm_back(ctx, x, x, bad_eps[i]), "rms_norm_back with a bad eps");
        EXPECT_NULL(ggmlr_norm_back(ctx, x, x, bad_eps[i]), "norm_back with a bad eps");
    }
    EXPECT_NULL(ggml_norm(ctx, NULL, 1e-5f), "norm of NULL");
    EXPECT_NULL(ggml_rms_norm(NULL, x, 1e-5f), "rms_norm without a context");
    EXPECT_NULL(ggml_norm(ctx, h, 1e-5f), "norm of F16");
    EXPECT_NULL(ggml_rms_norm_back(ctx, x, other, 1e-5f), "rms_norm_back of mismatched shapes");
    EXPECT_NULL(ggml_rms_norm_back(ctx, h, x, 1e-5f), "rms_norm_back of F16 dy");
    EXPECT_NULL(ggml_rms_norm_back(ctx, x, NULL, 1e-5f), "rms_norm_back of NULL x");
    EXPECT_NULL(ggml_soft_max_ext_back(ctx, x, NULL, 1.0f, 0.0f), "soft_max_ext_back of NULL y");
    EXPECT_NULL(ggml_soft_max_ext_back(ctx, x, other, 1.0f, 0.0f), "soft_max_ext_back of mismatched shapes");
    EXPECT_NULL(ggml_soft_max_ext_back(ctx, x, h, 1.0f, 0.0f), "soft_max_ext_back of F16 y");
    EXPECT_NULL(ggml_soft_max_ext_back(ctx, x, x, NAN, 0.0f), "soft_max_ext_back with a NaN scale");
    EXPECT_NULL(ggml_soft_max_ext_back(ctx, x, x, 1.0f, -1.0f), "soft_max_ext_back with max_bias < 0");
    EXPECT_NULL(ggml_soft_max_ext_back(NULL, x, x, 1.0f, 0.0f), "soft_max_ext_back without a context");
    ggml_free(ctx);
}

int main(void) {
    tc_seed(11);
    test_activations();
    test_norms();
    test_soft_max_back();
    test_gradients();
    test_threads();
    test_errors();
    printf("SIMD path: %s\n", ggml_cpu_simd_name());
    return tc_finish("ops_nn");
}

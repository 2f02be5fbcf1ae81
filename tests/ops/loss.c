/* loss.c -- rows of cross_entropy_loss (the mean over rows of -sum(labels *
 * log softmax(logits)); dense F32 labels, normalised or not, or I32 class
 * indices) and cross_entropy_loss_back.
 *
 * Tolerance: relative 2-norm error 1e-5 (float softmax arithmetic over <= 37
 * classes and sums of <= 101 rows stay below 1e-6; 1e-5 catches a wrong
 * index, a missing term or scale). Gradients: step 1e-2 on logits in
 * [-2, 2], atol 2e-4: the gradients are ~1/R (softmax - p) ~ 1e-2..1e-1 here,
 * so a missing term, sum(p) or 1/R shows. */
#include "ops/harness.h"

#include <string.h>

struct ce_params { bool i32_labels; };
static const struct ce_params p_dense = {false}, p_i32 = {true};

static struct ggml_tensor * b_ce(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    (void) params;
    return ggml_cross_entropy_loss(ctx, in[0], in[1]);
}
static struct ggml_tensor * b_ce_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    (void) params;
    return ggml_cross_entropy_loss_back(ctx, in[2], in[0], in[1]);  /* upstream's order: gradient, logits, labels */
}
static void s_scalar(const int64_t (*ne)[4], const void * params, int64_t no[4]) {
    (void) ne; (void) params;
    no[0] = no[1] = no[2] = no[3] = 1;
}

/* log softmax of row z (the max subtracted) at i */
static double log_softmax(const double * z, int64_t nc, int64_t i) {
    double mx = z[0], s = 0;
    for (int64_t k = 1; k < nc; k++) if (z[k] > mx) mx = z[k];
    for (int64_t k = 0; k < nc; k++) s += exp(z[k] - mx);
    return z[i] - mx - log(s);
}
/* label of class i in row r: dense, or one-hot of the I32 class */
static double label(const struct ce_params * p, const double * b, int64_t nc, int64_t r, int64_t i) {
    return p->i32_labels ? (b[r] == (double) i ? 1.0 : 0.0) : b[r * nc + i];
}

static void r_ce(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) no;
    const int64_t nc = ne[0][0], rows = ops_nel(ne[0]) / nc;
    double loss = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < nc; i++) loss -= label(params, in[1], nc, r, i) * log_softmax(in[0] + r * nc, nc, i);
    out[0] = loss / (double) rows;
}
/* dz_ri = (softmax_ri sum_k p_rk - p_ri) c / R */
static void r_ce_back(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) no;
    const int64_t nc = ne[0][0], rows = ops_nel(ne[0]) / nc;
    for (int64_t r = 0; r < rows; r++) {
        double psum = 0;
        for (int64_t i = 0; i < nc; i++) psum += label(params, in[1], nc, r, i);
        for (int64_t i = 0; i < nc; i++)
            out[r * nc + i] = (exp(log_softmax(in[0] + r * nc, nc, i)) * psum - label(params, in[1], nc, r, i)) * in[2][0] / (double) rows;
    }
}

/* rows that are distributions */
static void f_distributions(double * v, const int64_t ne[4]) {
    for (int64_t r = 0; r < ops_nel(ne) / ne[0]; r++) {
        double s = 0;
        for (int64_t i = 0; i < ne[0]; i++) s += v[r * ne[0] + i];
        for (int64_t i = 0; i < ne[0]; i++) v[r * ne[0] + i] /= s;
    }
}
/* logits of +-80: 37 exponentials of 80 overflow a naive float sum */
static void f_big(double * v, const int64_t ne[4]) { v[0] = 80; v[1] = 80; v[ne[0]] = -80; }

#define LOGITS(S, LO, HI, FILL, LAY) {.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .layout = LAY, .fill = FILL}
#define DENSE(S, FILL) {.ne = OPS_SHAPE S, .lo = 0, .hi = 1, .fixed = true, .fill = FILL}
#define CLASSES(S, NC) {.ne = OPS_SHAPE S, .lo = 0, .hi = (NC) - 1, .type = GGML_TYPE_I32}
/* the loss and its backward (upstream gradient C) on the same inputs */
#define BOTH(NAME, P, Z, LABELS, C)                                                                                     \
    {.op = "CROSS_ENTROPY_LOSS", .variant = NAME, .build = b_ce, .params = &P, .n_in = 2, .in = {Z, LABELS},           \
     .shape = s_scalar, .ref = r_ce, .tol = 1e-5},                                                                      \
    {.op = "CROSS_ENTROPY_LOSS_BACK", .variant = NAME, .build = b_ce_back, .params = &P, .n_in = 3,                     \
     .in = {Z, LABELS, {.ne = {1, 1, 1, 1}, .lo = C, .hi = C, .fixed = true}}, .ref = r_ce_back, .tol = 1e-5}
#define GRAD(NAME, P, Z, LABELS)                                                                                        \
    {.op = "CROSS_ENTROPY_LOSS", .variant = NAME, .build = b_ce, .params = &P, .n_in = 2, .in = {Z, LABELS},           \
     .shape = s_scalar, .ref = r_ce, .tol = 1e-5, .grad = OPS_GRAD, .fd_atol = 2e-4}

static const struct ops_row rows[] = {
    BOTH("dense labels", p_dense, LOGITS((37, 5, 2, 1), -4, 4, NULL, 0), DENSE((37, 5, 2, 1), f_distributions), 0.7),
    BOTH("unnormalised dense labels", p_dense, LOGITS((37, 5, 2, 1), -4, 4, NULL, 0), DENSE((37, 5, 2, 1), NULL), 0.7),
    BOTH("I32 labels", p_i32, LOGITS((37, 5, 2, 1), -4, 4, NULL, 0), CLASSES((5, 2, 1, 1), 37), 0.7),
    BOTH("logits +-80, dense labels", p_dense, LOGITS((37, 5, 2, 1), -80, 80, f_big, 0), DENSE((37, 5, 2, 1), f_distributions), 0.7),
    BOTH("logits +-80, I32 labels", p_i32, LOGITS((37, 5, 2, 1), -80, 80, f_big, 0), CLASSES((5, 2, 1, 1), 37), 0.7),
    BOTH("one class", p_i32, LOGITS((1, 4, 1, 1), -2, 2, NULL, 0), CLASSES((4, 1, 1, 1), 1), 0.7),
    BOTH("101 rows, I32 labels", p_i32, LOGITS((31, 101, 1, 1), -5, 5, NULL, 0), CLASSES((101, 1, 1, 1), 31), 1.3),
    BOTH("101 rows, dense labels", p_dense, LOGITS((31, 101, 1, 1), -5, 5, NULL, 0), DENSE((31, 101, 1, 1), NULL), 1.3),
    GRAD("gradient, dense labels", p_dense, LOGITS((7, 3, 2, 1), -2, 2, NULL, 0), DENSE((7, 3, 2, 1), NULL)),
    GRAD("gradient, I32 labels", p_i32, LOGITS((7, 3, 2, 1), -2, 2, NULL, 0), CLASSES((3, 2, 1, 1), 7)),
    GRAD("gradient, transposed logits", p_i32, LOGITS((5, 4, 1, 1), -2, 2, NULL, OPS_TRANSPOSED), CLASSES((4, 1, 1, 1), 5)),
    /* dense labels as a parameter; the backward op has no backward */
    {.op = "CROSS_ENTROPY_LOSS", .variant = "dense labels a parameter", .build = b_ce, .params = &p_dense, .n_in = 2,
     .in = {LOGITS((5, 4, 1, 1), -1, 1, NULL, 0), {.ne = {5, 4, 1, 1}, .lo = 0, .hi = 1}}, .shape = s_scalar, .ref = r_ce,
     .tol = 1e-5, .grad = OPS_REFUSED, .refusal = "labels"},
    {.op = "CROSS_ENTROPY_LOSS_BACK", .variant = "refused", .build = b_ce_back, .params = &p_i32, .n_in = 3,
     .in = {LOGITS((7, 3, 1, 1), -2, 2, NULL, 0), CLASSES((3, 1, 1, 1), 7), {.ne = {1, 1, 1, 1}, .lo = 1, .hi = 1, .fixed = true}},
     .ref = r_ce_back, .tol = 1e-5, .grad = OPS_REFUSED},
};

const struct ops_family ops_loss = {"loss", rows, sizeof rows / sizeof rows[0], NULL, NULL};

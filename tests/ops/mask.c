/* mask.c -- rows of diag (a row on the diagonal of each matrix),
 * diag_mask_inf / diag_mask_zero (element (i0, i1) := -Inf / 0 where
 * i0 > n_past + i1; in place too) and tri (zeros outside a triangle).
 *
 * Each output element is an input element or a constant: exact. Their
 * gradients are g where a's element landed and 0 elsewhere (finite
 * differences, harness defaults; diag_mask_inf's loss is taken of its
 * softmax, which is finite). */
#include "ops/harness.h"

#include <math.h>

struct mask_case { int n_past; enum ggml_tri_type tri; bool inplace; };

static struct ggml_tensor * b_diag(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    (void) p;
    return ggml_diag(ctx, in[0]);
}
static struct ggml_tensor * b_mask_inf(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct mask_case * c = p;
    return (c->inplace ? ggml_diag_mask_inf_inplace : ggml_diag_mask_inf)(ctx, in[0], c->n_past);
}
static struct ggml_tensor * b_mask_zero(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct mask_case * c = p;
    return (c->inplace ? ggml_diag_mask_zero_inplace : ggml_diag_mask_zero)(ctx, in[0], c->n_past);
}
/* a gradient row's loss must stay finite: the masked rows' softmax (exp(-Inf) = 0) */
static struct ggml_tensor * through_soft_max(struct ggml_context * ctx, struct ggml_tensor * out) { return ggml_soft_max(ctx, out); }
static struct ggml_tensor * b_tri(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return ggml_tri(ctx, in[0], ((const struct mask_case *) p)->tri);
}

static void s_diag(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    (void) p;
    no[0] = ne[0][0]; no[1] = ne[0][0]; no[2] = ne[0][2]; no[3] = ne[0][3];
}

static void r_diag(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) p;
    OPS_FOR4(no, i0, i1, i2, i3) out[ops_at(no, i0, i1, i2, i3)] = i0 == i1 ? in[0][ops_at(ne[0], i0, 0, i2, i3)] : 0.0;
}

static void r_mask(const double * const * in, const struct mask_case * c, double value, double * out, const int64_t no[4]) {
    OPS_FOR4(no, i0, i1, i2, i3) {
        const int64_t k = ops_at(no, i0, i1, i2, i3);
        out[k] = i0 > c->n_past + i1 ? value : in[0][k];
    }
}
static void r_mask_inf(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) ne;
    r_mask(in, p, -INFINITY, out, no);
}
static void r_mask_zero(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) ne;
    r_mask(in, p, 0.0, out, no);
}
static void r_tri(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) ne;
    const enum ggml_tri_type t = ((const struct mask_case *) p)->tri;
    OPS_FOR4(no, i0, i1, i2, i3) {
        const bool keep = t == GGML_TRI_TYPE_UPPER_DIAG ? i0 >= i1 : t == GGML_TRI_TYPE_UPPER ? i0 > i1
                        : t == GGML_TRI_TYPE_LOWER_DIAG ? i0 <= i1 : i0 < i1;
        const int64_t k = ops_at(no, i0, i1, i2, i3);
        out[k] = keep ? in[0][k] : 0.0;
    }
}

static const struct mask_case past0 = {0, 0, false}, past2 = {2, 0, false}, past0_ip = {0, 0, true}, past3_ip = {3, 0, true},
                              past9 = {9, 0, false}, up_d = {0, GGML_TRI_TYPE_UPPER_DIAG, false}, up = {0, GGML_TRI_TYPE_UPPER, false},
                              lo_d = {0, GGML_TRI_TYPE_LOWER_DIAG, false}, lo = {0, GGML_TRI_TYPE_LOWER, false};

#define ROW(OP, NAME, BUILD, REF, CASE, SHAPE, NE, LAY, RES, GRAD)                                                           \
    {.op = OP, .variant = NAME, .build = BUILD, .params = &CASE, .n_in = 1,                                               \
     .in = {{.ne = OPS_SHAPE NE, .lo = -2, .hi = 2, .layout = LAY}}, .shape = SHAPE, .ref = REF, .cmp = OPS_EXACT, .result = RES, \
     .grad = GRAD}

static const struct ops_row rows[] = {
    ROW("DIAG", "[7,1,3,2]", b_diag, r_diag, past0, s_diag, (7, 1, 3, 2), OPS_ANY_LAYOUT, OPS_NEW, OPS_FORWARD_ONLY),
    ROW("DIAG", "gradient", b_diag, r_diag, past0, s_diag, (5, 1, 2, 2), OPS_CONTIG | OPS_PERMUTED, OPS_NEW, OPS_GRAD),
    ROW("DIAG_MASK_INF", "n_past 0 [6,6,2,2]", b_mask_inf, r_mask_inf, past0, NULL, (6, 6, 2, 2), OPS_ANY_LAYOUT, OPS_NEW, OPS_FORWARD_ONLY),
    ROW("DIAG_MASK_INF", "n_past 2 [7,4,3,1]", b_mask_inf, r_mask_inf, past2, NULL, (7, 4, 3, 1), OPS_ANY_LAYOUT, OPS_NEW, OPS_FORWARD_ONLY),
    ROW("DIAG_MASK_INF", "in place, n_past 3", b_mask_inf, r_mask_inf, past3_ip, NULL, (8, 5, 2, 1), 0, OPS_INPLACE, OPS_FORWARD_ONLY),
    ROW("DIAG_MASK_INF", "n_past past the row: nothing masked", b_mask_inf, r_mask_inf, past9, NULL, (6, 4, 1, 1), 0, OPS_NEW, OPS_FORWARD_ONLY),
    {.op = "DIAG_MASK_INF", .variant = "gradient, through a softmax", .build = b_mask_inf, .params = &past2, .n_in = 1,
     .in = {{.ne = {6, 4, 2, 1}, .lo = -2, .hi = 2, .layout = OPS_CONTIG | OPS_TRANSPOSED}}, .ref = r_mask_inf, .cmp = OPS_EXACT,
     .grad = OPS_GRAD, .grad_through = through_soft_max},
    ROW("DIAG_MASK_ZERO", "n_past 0 [6,6,2,2]", b_mask_zero, r_mask_zero, past0, NULL, (6, 6, 2, 2), OPS_ANY_LAYOUT, OPS_NEW, OPS_FORWARD_ONLY),
    ROW("DIAG_MASK_ZERO", "in place", b_mask_zero, r_mask_zero, past0_ip, NULL, (6, 6, 2, 1), 0, OPS_INPLACE, OPS_FORWARD_ONLY),
    ROW("DIAG_MASK_ZERO", "gradient, n_past 2", b_mask_zero, r_mask_zero, past2, NULL, (6, 4, 2, 1), OPS_CONTIG | OPS_TRANSPOSED, OPS_NEW, OPS_GRAD),
    ROW("TRI", "upper with the diagonal", b_tri, r_tri, up_d, NULL, (6, 6, 2, 2), OPS_ANY_LAYOUT, OPS_NEW, OPS_FORWARD_ONLY),
    ROW("TRI", "strict upper", b_tri, r_tri, up, NULL, (6, 6, 2, 2), OPS_ANY_LAYOUT, OPS_NEW, OPS_FORWARD_ONLY),
    ROW("TRI", "lower with the diagonal", b_tri, r_tri, lo_d, NULL, (6, 6, 2, 2), OPS_ANY_LAYOUT, OPS_NEW, OPS_FORWARD_ONLY),
    ROW("TRI", "strict lower", b_tri, r_tri, lo, NULL, (6, 6, 2, 2), OPS_ANY_LAYOUT, OPS_NEW, OPS_FORWARD_ONLY),
    ROW("TRI", "[33,33]: rows over threads", b_tri, r_tri, lo, NULL, (33, 33, 1, 1), 0, OPS_NEW, OPS_FORWARD_ONLY),
    ROW("TRI", "gradient, strict lower", b_tri, r_tri, lo, NULL, (5, 5, 2, 1), OPS_CONTIG | OPS_TRANSPOSED, OPS_NEW, OPS_GRAD),
    ROW("TRI", "gradient, upper with the diagonal", b_tri, r_tri, up_d, NULL, (5, 5, 2, 1), 0, OPS_NEW, OPS_GRAD),
};

const struct ops_family ops_mask = {"mask", rows, sizeof rows / sizeof rows[0], NULL, NULL};

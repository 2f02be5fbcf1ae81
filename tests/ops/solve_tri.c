/* solve_tri.c -- rows of the triangular solve A X = B (lower or upper A, its
 * diagonal read or taken as ones) and its gradient by finite differences.
 *
 * A is made well conditioned: off the diagonal its values are divided by n,
 * on it they lie in [1, 2] (so X stays near B's size and finite differences
 * are accurate); with uni the diagonal keeps values far from 1, which the
 * solve must not read. The other triangle is random too and must be ignored. */
#include "ops/harness.h"

struct solve_case { bool lower, uni; };

static struct ggml_tensor * b_solve(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct solve_case * c = p;
    return ggml_solve_tri(ctx, in[0], in[1], true, c->lower, c->uni);
}

/* in [-1, 1]: off the diagonal / n; on it 1.5 + v / 2 (read) or 4 + v (uni: not read) */
static void fill_a(double * v, const int64_t ne[4], double diag_base, double diag_scale) {
    OPS_FOR4(ne, i0, i1, i2, i3) {
        double * x = &v[ops_at(ne, i0, i1, i2, i3)];
        *x = i0 == i1 ? diag_base + diag_scale * *x : *x / (double) ne[0];
    }
}
static void fill_tri(double * v, const int64_t ne[4]) { fill_a(v, ne, 1.5, 0.5); }
static void fill_uni(double * v, const int64_t ne[4]) { fill_a(v, ne, 4.0, 1.0); }

static void s_solve(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    (void) p;
    for (int d = 0; d < 4; d++) no[d] = ne[1][d];
}

/* substitution in float64, column by column */
static void r_solve(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const struct solve_case * c = p;
    const int64_t n = no[1];
    for (int64_t i3 = 0; i3 < no[3]; i3++)
        for (int64_t i2 = 0; i2 < no[2]; i2++)
            for (int64_t col = 0; col < no[0]; col++)
                for (int64_t step = 0; step < n; step++) {
                    const int64_t i = c->lower ? step : n - 1 - step;
                    double r = in[1][ops_at(ne[1], col, i, i2, i3)];
                    for (int64_t t = 0; t < n; t++)
                        if (c->lower ? t < i : t > i) r -= in[0][ops_at(ne[0], t, i, i2, i3)] * out[ops_at(no, col, t, i2, i3)];
                    out[ops_at(no, col, i, i2, i3)] = c->uni ? r : r / in[0][ops_at(ne[0], i, i, i2, i3)];
                }
}

static const struct solve_case lower = {true, false}, upper = {false, false}, lower_uni = {true, true}, upper_uni = {false, true};

#define A_(N, B2, B3, FILL) {.ne = {N, N, B2, B3}, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT, .fill = FILL}
#define B_(K, N, B2, B3) {.ne = {K, N, B2, B3}, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}
#define ROW(NAME, CASE, AIN, BIN, GRAD)                                                                                  \
    {.op = "SOLVE_TRI", .variant = NAME, .build = b_solve, .params = &CASE, .n_in = 2, .in = {AIN, BIN}, .shape = s_solve, \
     .ref = r_solve, .cmp = OPS_NORM2, .tol = 1e-6, .grad = GRAD}

static const struct ops_row rows[] = {
    ROW("lower [10,10,4,3] \\ [3,10,4,3] (upstream's)", lower, A_(10, 4, 3, fill_tri), B_(3, 10, 4, 3), OPS_FORWARD_ONLY),
    ROW("lower [17,17,2,4] \\ [9,17,2,4]", lower, A_(17, 2, 4, fill_tri), B_(9, 17, 2, 4), OPS_FORWARD_ONLY),
    ROW("lower [30,30,7,1] \\ [8,30,7,1]", lower, A_(30, 7, 1, fill_tri), B_(8, 30, 7, 1), OPS_FORWARD_ONLY),
    ROW("upper [11,11,1,1] \\ [5,11,1,1]", upper, A_(11, 1, 1, fill_tri), B_(5, 11, 1, 1), OPS_FORWARD_ONLY),
    ROW("lower uni [9,9,2,1] \\ [4,9,2,1]", lower_uni, A_(9, 2, 1, fill_uni), B_(4, 9, 2, 1), OPS_FORWARD_ONLY),
    ROW("upper uni [9,9,1,2] \\ [4,9,1,2]", upper_uni, A_(9, 1, 2, fill_uni), B_(4, 9, 1, 2), OPS_FORWARD_ONLY),
    ROW("n = 1", lower, A_(1, 2, 1, fill_tri), B_(3, 1, 2, 1), OPS_FORWARD_ONLY),
    ROW("gradient lower [5,5,2,1] \\ [3,5,2,1]", lower, A_(5, 2, 1, fill_tri), B_(3, 5, 2, 1), OPS_GRAD),
    ROW("gradient upper [4,4,1,2] \\ [2,4,1,2]", upper, A_(4, 1, 2, fill_tri), B_(2, 4, 1, 2), OPS_GRAD),
    ROW("gradient lower uni [5,5,1,1] \\ [3,5,1,1]", lower_uni, A_(5, 1, 1, fill_uni), B_(3, 5, 1, 1), OPS_GRAD),
    ROW("gradient upper uni [4,4,2,1] \\ [1,4,2,1]", upper_uni, A_(4, 2, 1, fill_uni), B_(1, 4, 2, 1), OPS_GRAD),
};

/* what the constructor refuses: NULLs, types, shapes, the right-hand form */
static void check_refusals(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 4, 2), * b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 4, 2);
    struct ggml_tensor * a16 = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 4, 4, 2), * b16 = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 3, 4, 2);
    struct ggml_tensor * rect = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2), * b5 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 5, 2);
    struct ggml_tensor * b1 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 4, 1), * b4d = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 4, 2, 2);
    OPS_EXPECT_REFUSED(ggml_solve_tri(NULL, a, b, true, true, false), "solve_tri without a context");
    OPS_EXPECT_REFUSED(ggml_solve_tri(ctx, NULL, b, true, true, false), "solve_tri of a NULL a");
    OPS_EXPECT_REFUSED(ggml_solve_tri(ctx, a, NULL, true, true, false), "solve_tri of a NULL b");
    OPS_EXPECT_REFUSED(ggml_solve_tri(ctx, a16, b, true, true, false), "solve_tri of an F16 a");
    OPS_EXPECT_REFUSED(ggml_solve_tri(ctx, a, b16, true, true, false), "solve_tri of an F16 b");
    OPS_EXPECT_REFUSED(ggml_solve_tri(ctx, a, b, false, true, false), "solve_tri with left = false");
    OPS_EXPECT_REFUSED(ggml_solve_tri(ctx, rect, b, true, true, false), "solve_tri of a non-square a");
    OPS_EXPECT_REFUSED(ggml_solve_tri(ctx, a, b5, true, true, false), "solve_tri with b's rows not a's");
    OPS_EXPECT_REFUSED(ggml_solve_tri(ctx, a, b1, true, true, false), "solve_tri with fewer matrices in b");
    OPS_EXPECT_REFUSED(ggml_solve_tri(ctx, a, b4d, true, true, false), "solve_tri with more matrices in b");
    ggml_free(ctx);
}

const struct ops_family ops_solve_tri = {"solve_tri", rows, sizeof rows / sizeof rows[0], NULL, check_refusals};

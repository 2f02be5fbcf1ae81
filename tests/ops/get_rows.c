/* get_rows.c -- rows of get_rows (rows of a picked by I32 indices, batched
 * over dims 2, 3; F32, F16 and I32 tables) and get_rows_back (the picked rows
 * added back into zeros shaped like the table), set_rows (rows of b written
 * into a, in place, at distinct I32 indices; c broadcast over b's dims 2, 3).
 *
 * A gather is exact; get_rows_back sums <= 200 terms in float: relative 2-norm
 * error 1e-5. Gradients: step 1e-2 on values in [-2, 2], atol 2e-4 (the
 * harness's rtol). Indices out of range are test_op_refusals' business. */
#include "ops/harness.h"

#include <string.h>

struct gr_params { int64_t c[4]; };  /* GET_ROWS_BACK: the table's shape */

static struct ggml_tensor * b_get_rows(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    (void) params;
    return ggml_get_rows(ctx, in[0], in[1]);
}
static struct ggml_tensor * b_get_rows_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct gr_params * p = params;
    return ggml_get_rows_back(ctx, in[0], in[1], ggml_new_tensor(ctx, GGML_TYPE_F32, 4, p->c));
}

static void s_get_rows(const int64_t (*ne)[4], const void * params, int64_t no[4]) {
    (void) params;
    no[0] = ne[0][0]; no[1] = ne[1][0]; no[2] = ne[1][1]; no[3] = ne[1][2];
}
static void s_get_rows_back(const int64_t (*ne)[4], const void * params, int64_t no[4]) {
    (void) ne;
    memcpy(no, ((const struct gr_params *) params)->c, 4 * sizeof *no);
}

/* out[i0, j, i2, i3] = a[i0, b[j, i2, i3], i2, i3] */
static void r_get_rows(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) params;
    OPS_FOR4(no, i0, j, i2, i3) {
        const int64_t row = (int64_t) in[1][ops_at(ne[1], j, i2, i3, 0)];
        out[ops_at(no, i0, j, i2, i3)] = in[0][ops_at(ne[0], i0, row, i2, i3)];
    }
}
/* zeros shaped like c, row b[j, i2, i3] += a[:, j, i2, i3] for each index j (a's rows past b's count unread) */
static void r_get_rows_back(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) params;
    memset(out, 0, (size_t) ops_nel(no) * sizeof *out);
    const int64_t picked[4] = {ne[0][0], ne[1][0], ne[0][2], ne[0][3]};
    OPS_FOR4(picked, i0, j, i2, i3) {
        const int64_t row = (int64_t) in[1][ops_at(ne[1], j, i2, i3, 0)];
        out[ops_at(no, i0, row, i2, i3)] += in[0][ops_at(ne[0], i0, j, i2, i3)];
    }
}

static struct ggml_tensor * b_set_rows(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    (void) params;
    return ggml_set_rows(ctx, in[0], in[1], in[2]);
}
/* a, then row c[j, i2 % ne11, i3 % ne12] of batch (i2, i3) := b[:, j, i2, i3] */
static void r_set_rows(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) params;
    memcpy(out, in[0], (size_t) ops_nel(no) * sizeof *out);
    OPS_FOR4(ne[1], i0, j, i2, i3) {
        const int64_t row = (int64_t) in[2][ops_at(ne[2], j, i2 % ne[2][1], i3 % ne[2][2], 0)];
        out[ops_at(no, i0, row, i2, i3)] = in[1][ops_at(ne[1], i0, j, i2, i3)];
    }
}

static void set_list(double * v, const int32_t * list, int n) { for (int i = 0; i < n; i++) v[i] = list[i]; }
static void f_repeated(double * v, const int64_t ne[4]) { (void) ne; set_list(v, (const int32_t[13]) {3, 0, 10, 3, 3, 7, 0, 1, 10, 9, 2, 3, 5}, 13); }
static void f_dup9(double * v, const int64_t ne[4]) { (void) ne; set_list(v, (const int32_t[9]) {2, 2, 0, 5, 2, 0, 5, 5, 2}, 9); }  /* rows 1, 3, 4 get nothing */
static void f_dup8(double * v, const int64_t ne[4]) { (void) ne; set_list(v, (const int32_t[8]) {4, 1, 4, 0, 6, 4, 1, 2}, 8); }   /* rows 3, 5 untouched */

/* distinct rows in each batch of indices [n, ...] into 9 rows: (2 j + 5 batch) mod 9 */
static void f_distinct9(double * v, const int64_t ne[4]) {
    for (int64_t k = 0; k < ops_nel(ne); k++) v[k] = (double) ((2 * (k % ne[0]) + 5 * (k / ne[0])) % 9);
}

#define IDX(S, HI, FILL) {.ne = OPS_SHAPE S, .lo = 0, .hi = HI, .type = GGML_TYPE_I32, .fill = FILL}
#define GET(NAME, A, TYPE, LO, HI, LAY, B, BHI, BFILL, CMP, GRAD) /* the result is I32 for an I32 table, else F32 */                                                      \
    {.op = "GET_ROWS", .variant = NAME, .build = b_get_rows, .n_in = 2,                                                \
     .in = {{.ne = OPS_SHAPE A, .lo = LO, .hi = HI, .type = TYPE, .layout = LAY}, IDX(B, BHI, BFILL)},               \
     .shape = s_get_rows, .ref = r_get_rows, .out_type = (TYPE) == GGML_TYPE_I32 ? GGML_TYPE_I32 : GGML_TYPE_F32, .cmp = CMP, .tol = 1e-5, .grad = GRAD, .fd_atol = 2e-4}
#define BACK(NAME, A, B, BHI, BFILL, C) BACK_T(NAME, A, GGML_TYPE_F32, B, BHI, BFILL, C)
#define BACK_T(NAME, A, ATYPE, B, BHI, BFILL, C)                                                                        \
    {.op = "GET_ROWS_BACK", .variant = NAME, .build = b_get_rows_back, .params = &(const struct gr_params) {OPS_SHAPE C}, \
     .n_in = 2, .in = {{.ne = OPS_SHAPE A, .lo = -2, .hi = 2, .type = ATYPE}, {.ne = OPS_SHAPE B, .lo = 0, .hi = BHI, .type = GGML_TYPE_I32, .fixed = true, .fill = BFILL}}, \
     .shape = s_get_rows_back, .ref = r_get_rows_back, .tol = 1e-5, .grad = OPS_REFUSED}
/* a [6, 9, ...] written in place (input 0), b's rows packed */
#define SET(NAME, A, ATYPE, B, BTYPE, C, GRAD)                                                                                    \
    {.op = "SET_ROWS", .variant = NAME, .build = b_set_rows, .n_in = 3,                                                       \
     .in = {{.ne = OPS_SHAPE A, .lo = -2, .hi = 2, .type = ATYPE}, {.ne = OPS_SHAPE B, .lo = -2, .hi = 2, .type = BTYPE},      \
            IDX(C, 8, f_distinct9)},                                                                                              \
     .out_type = ATYPE, .ref = r_set_rows, .cmp = OPS_EXACT, .result = OPS_INPLACE, .grad = GRAD}

static const struct ops_row rows[] = {
    GET("2-D, repeated indices", (7, 11, 1, 1), GGML_TYPE_F32, -3, 3, OPS_ANY_LAYOUT, (13, 1, 1, 1), 0, f_repeated, OPS_EXACT, OPS_FORWARD_ONLY),
    GET("batched [5,4,3,2] by [6,3,2]", (5, 4, 3, 2), GGML_TYPE_F32, -3, 3, OPS_ANY_LAYOUT, (6, 3, 2, 1), 3, NULL, OPS_EXACT, OPS_FORWARD_ONLY),
    GET("of an F16 table", (7, 11, 1, 1), GGML_TYPE_F16, -3, 3, 0, (13, 1, 1, 1), 0, f_repeated, OPS_EXACT, OPS_FORWARD_ONLY),
    GET("of an I32 table", (5, 4, 3, 2), GGML_TYPE_I32, -1000, 1000, 0, (6, 3, 2, 1), 3, NULL, OPS_EXACT, OPS_FORWARD_ONLY),
    GET("[31,101] by 101 indices", (31, 101, 1, 1), GGML_TYPE_F32, -5, 5, 0, (101, 1, 1, 1), 100, NULL, OPS_EXACT, OPS_FORWARD_ONLY),
    GET("gradient, duplicates", (5, 7, 1, 1), GGML_TYPE_F32, -2, 2, 0, (8, 1, 1, 1), 0, f_dup8, OPS_EXACT, OPS_GRAD),
    GET("gradient, batched [4,5,3,2] by [7,3,2]", (4, 5, 3, 2), GGML_TYPE_F32, -2, 2, 0, (7, 3, 2, 1), 4, NULL, OPS_EXACT, OPS_GRAD),
    /* the indices as a parameter */
    {.op = "GET_ROWS", .variant = "indices a parameter", .build = b_get_rows, .n_in = 2,
     .in = {{.ne = {5, 4, 1, 1}, .lo = -1, .hi = 1}, {.ne = {3, 1, 1, 1}, .lo = 0, .hi = 3, .type = GGML_TYPE_I32}},
     .shape = s_get_rows, .ref = r_get_rows, .cmp = OPS_EXACT, .grad = OPS_REFUSED, .refusal = "indices"},
    SET("[6,9,3,2] <- [6,4,3,2]", (6, 9, 3, 2), GGML_TYPE_F32, (6, 4, 3, 2), GGML_TYPE_F32, (4, 3, 2, 1), OPS_FORWARD_ONLY),
    SET("indices broadcast [4,1,1]", (6, 9, 3, 2), GGML_TYPE_F32, (6, 4, 3, 2), GGML_TYPE_F32, (4, 1, 1, 1), OPS_FORWARD_ONLY),
    SET("indices broadcast [5,3,1]", (6, 9, 3, 2), GGML_TYPE_F32, (6, 5, 3, 2), GGML_TYPE_F32, (5, 3, 1, 1), OPS_FORWARD_ONLY),
    SET("into F16", (6, 9, 3, 1), GGML_TYPE_F16, (6, 4, 3, 1), GGML_TYPE_F32, (4, 3, 1, 1), OPS_FORWARD_ONLY),
    SET("F16 rows into F32", (6, 9, 3, 1), GGML_TYPE_F32, (6, 4, 3, 1), GGML_TYPE_F16, (4, 3, 1, 1), OPS_FORWARD_ONLY),
    {.op = "SET_ROWS", .variant = "I64 indices", .build = b_set_rows, .n_in = 3,
     .in = {{.ne = {6, 9, 3, 1}, .lo = -2, .hi = 2}, {.ne = {6, 4, 3, 1}, .lo = -2, .hi = 2},
            {.ne = {4, 3, 1, 1}, .lo = 0, .hi = 8, .type = GGML_TYPE_I64, .fill = f_distinct9}},
     .ref = r_set_rows, .cmp = OPS_EXACT, .result = OPS_INPLACE},
    SET("F16 into F16, all 9 rows", (6, 9, 2, 1), GGML_TYPE_F16, (6, 9, 2, 1), GGML_TYPE_F16, (9, 2, 1, 1), OPS_FORWARD_ONLY),
    SET("[37,9] <- 1 row: rows over threads", (37, 9, 1, 1), GGML_TYPE_F32, (37, 1, 1, 1), GGML_TYPE_F32, (1, 1, 1, 1), OPS_FORWARD_ONLY),
    SET("gradient of a and b", (6, 9, 2, 2), GGML_TYPE_F32, (6, 4, 2, 2), GGML_TYPE_F32, (4, 2, 2, 1), OPS_GRAD),
    {.op = "SET_ROWS", .variant = "gradient of a, indices broadcast", .build = b_set_rows, .n_in = 3,
     .in = {{.ne = {5, 9, 3, 1}, .lo = -2, .hi = 2}, {.ne = {5, 4, 3, 1}, .lo = -2, .hi = 2, .fixed = true}, IDX((4, 1, 1, 1), 8, f_distinct9)},
     .ref = r_set_rows, .cmp = OPS_EXACT, .result = OPS_INPLACE, .grad = OPS_GRAD},
    {.op = "SET_ROWS", .variant = "b's gradient, indices broadcast", .build = b_set_rows, .n_in = 3,
     .in = {{.ne = {5, 9, 3, 1}, .lo = -2, .hi = 2, .fixed = true}, {.ne = {5, 4, 3, 1}, .lo = -2, .hi = 2},
            {.ne = {4, 1, 1, 1}, .lo = 0, .hi = 8, .type = GGML_TYPE_I32, .fixed = true, .fill = f_distinct9}},
     .ref = r_set_rows, .cmp = OPS_EXACT, .result = OPS_INPLACE, .grad = OPS_REFUSED, .refusal = "broadcast"},
    {.op = "SET_ROWS", .variant = "indices a parameter", .build = b_set_rows, .n_in = 3,
     .in = {{.ne = {5, 9, 1, 1}, .lo = -2, .hi = 2, .fixed = true}, {.ne = {5, 4, 1, 1}, .lo = -2, .hi = 2, .fixed = true},
            {.ne = {4, 1, 1, 1}, .lo = 0, .hi = 8, .type = GGML_TYPE_I32, .fill = f_distinct9}},
     .ref = r_set_rows, .cmp = OPS_EXACT, .result = OPS_INPLACE, .grad = OPS_REFUSED, .refusal = "indices"},
    BACK("duplicates", (7, 9, 1, 1), (9, 1, 1, 1), 0, f_dup9, (7, 6, 1, 1)),
    BACK("batched", (5, 9, 3, 2), (9, 3, 2, 1), 3, NULL, (5, 4, 3, 2)),
    BACK("200 indices into 37 rows", (9, 200, 1, 1), (200, 1, 1, 1), 36, NULL, (9, 37, 1, 1)),
    /* upstream's test: F16 gradient rows, and fewer indices than rows of a (the rest unread) */
    BACK_T("F16 rows, batched", (5, 9, 3, 2), GGML_TYPE_F16, (9, 3, 2, 1), 3, NULL, (5, 4, 3, 2)),
    BACK("4 indices, a has 9 rows", (7, 9, 2, 1), (4, 2, 1, 1), 5, NULL, (7, 6, 2, 1)),
};

const struct ops_family ops_get_rows = {"get_rows", rows, sizeof rows / sizeof rows[0], NULL, NULL};

/* reduce.c -- rows of the reductions and broadcasts: sum, sum_rows, mean,
 * cumsum, repeat, repeat_back, argmax, count_equal, argsort, top_k.
 *
 * Forward tolerance: relative 2-norm error 1e-5 (sums of <= 210 terms of
 * magnitude <= 1 in float, ~1e-7; a missing or doubled term is off by far
 * more); argmax is exact, ties to the first maximum; count_equal, argsort and
 * top_k are exact (I32), ties in index order, on integer rows full of ties.
 * Gradients: the harness defaults (the integer results have no rule). */
#include "ops/harness.h"

#include <string.h>

enum rd_op { RD_SUM, RD_SUM_ROWS, RD_MEAN, RD_REPEAT, RD_REPEAT_BACK, RD_ARGMAX, RD_CUMSUM, RD_COUNT_EQUAL, RD_ARGSORT_ASC,
             RD_ARGSORT_DESC, RD_TOP_K, RD_REPEAT_4D };
struct rd_params {
    enum rd_op op;
    int64_t ne[4];  /* REPEAT: the shape tiled to; REPEAT_BACK: the shape summed down to; TOP_K: k in ne[0] */
};

static struct ggml_tensor * b_reduce(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct rd_params * p = params;
    switch (p->op) {
        case RD_SUM:         return ggml_sum(ctx, in[0]);
        case RD_SUM_ROWS:    return ggml_sum_rows(ctx, in[0]);
        case RD_MEAN:        return ggml_mean(ctx, in[0]);
        case RD_REPEAT:      return ggml_repeat(ctx, in[0], ggml_new_tensor(ctx, GGML_TYPE_F32, 4, p->ne));
        case RD_REPEAT_4D:   return ggml_repeat_4d(ctx, in[0], p->ne[0], p->ne[1], p->ne[2], p->ne[3]);
        case RD_REPEAT_BACK: return ggml_repeat_back(ctx, in[0], ggml_new_tensor(ctx, GGML_TYPE_F32, 4, p->ne));
        case RD_CUMSUM:      return ggml_cumsum(ctx, in[0]);
        case RD_COUNT_EQUAL: return ggml_count_equal(ctx, in[0], in[1]);
        case RD_ARGSORT_ASC: return ggml_argsort(ctx, in[0], GGML_SORT_ORDER_ASC);
        case RD_ARGSORT_DESC: return ggml_argsort(ctx, in[0], GGML_SORT_ORDER_DESC);
        case RD_TOP_K:       return ggml_top_k(ctx, in[0], (int) p->ne[0]);
        default:             return ggml_argmax(ctx, in[0]);
    }
}

static void s_reduce(const int64_t (*ne)[4], const void * params, int64_t no[4]) {
    const struct rd_params * p = params;
    const int64_t * a = ne[0];
    switch (p->op) {
        case RD_SUM: case RD_COUNT_EQUAL: no[0] = no[1] = no[2] = no[3] = 1; break;
        case RD_CUMSUM: case RD_ARGSORT_ASC: case RD_ARGSORT_DESC: memcpy(no, a, 4 * sizeof *no); break;
        case RD_TOP_K:  memcpy(no, a, 4 * sizeof *no); no[0] = p->ne[0]; break;
        case RD_ARGMAX: no[0] = a[1]; no[1] = no[2] = no[3] = 1; break;
        case RD_REPEAT: case RD_REPEAT_4D: case RD_REPEAT_BACK: memcpy(no, p->ne, 4 * sizeof *no); break;
        default:        no[0] = 1; no[1] = a[1]; no[2] = a[2]; no[3] = a[3]; break;
    }
}

/* the index of the first largest element of each row */
static void argmax_rows(const double * x, int64_t n0, int64_t rows, double * out) {
    for (int64_t r = 0; r < rows; r++) {
        int64_t best = 0;
        for (int64_t i = 1; i < n0; i++) if (x[r * n0 + i] > x[r * n0 + best]) best = i;
        out[r] = (double) best;
    }
}

/* row r's prefix sums */
static void cumsum_rows(const double * x, int64_t n0, int64_t rows, double * out) {
    for (int64_t r = 0; r < rows; r++) {
        double s = 0;
        for (int64_t i = 0; i < n0; i++) out[r * n0 + i] = s += x[r * n0 + i];
    }
}

/* the first k of each row's indices sorted by value (ties: lower index first), by rank: index i lands at
 * the number of indices that go before it (O(n^2), unlike the kernel's merge sort) */
static void argsort_rows(const double * x, int64_t n0, int64_t rows, bool desc, int64_t k, double * out) {
    for (int64_t r = 0; r < rows; r++) {
        const double * v = x + r * n0;
        for (int64_t i = 0; i < n0; i++) {
            int64_t rank = 0;
            for (int64_t j = 0; j < n0; j++) rank += (desc ? v[j] > v[i] : v[j] < v[i]) || (v[j] == v[i] && j < i);
            if (rank < k) out[r * k + rank] = (double) i;
        }
    }
}

static void r_reduce(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    const struct rd_params * p = params;
    const int64_t * na = ne[0];
    const double * a = in[0];
    const int64_t rows = ops_nel(na) / (na[0] > 0 ? na[0] : 1);
    switch (p->op) {
        case RD_ARGMAX: argmax_rows(a, na[0], rows, out); return;
        case RD_CUMSUM: cumsum_rows(a, na[0], rows, out); return;
        case RD_ARGSORT_ASC: case RD_ARGSORT_DESC: argsort_rows(a, na[0], rows, p->op == RD_ARGSORT_DESC, na[0], out); return;
        case RD_TOP_K: argsort_rows(a, na[0], rows, true, p->ne[0], out); return;
        case RD_COUNT_EQUAL:
            out[0] = 0;
            for (int64_t i = 0; i < ops_nel(na); i++) out[0] += a[i] == in[1][i];
            return;
        default: break;
    }
    memset(out, 0, (size_t) ops_nel(no) * sizeof *out);
    const bool tile = p->op == RD_REPEAT || p->op == RD_REPEAT_4D;
    OPS_FOR4(tile ? no : na, i0, i1, i2, i3) {
        const double x = tile ? 0 : a[ops_at(na, i0, i1, i2, i3)];
        switch (p->op) {
            case RD_SUM:      out[0] += x; break;
            case RD_SUM_ROWS: out[ops_at(no, 0, i1, i2, i3)] += x; break;
            case RD_MEAN:     out[ops_at(no, 0, i1, i2, i3)] += x / (double) na[0]; break;
            case RD_REPEAT: case RD_REPEAT_4D:
                out[ops_at(no, i0, i1, i2, i3)] = a[ops_at(na, i0 % na[0], i1 % na[1], i2 % na[2], i3 % na[3])]; break;
            default:          out[ops_at(no, i0 % no[0], i1 % no[1], i2 % no[2], i3 % no[3])] += x; break;
        }
    }
}

/* rows of [6, 5] with ties, equal values, a last maximum and tiny differences;
 * F16 cannot hold 1e-30 (it is 0), so that row gets 1e-3 there */
static const float k_argmax_rows[5][6] = {
    {1, 3, 3, 2, 0, 3}, {-1, -1, -1, -1, -1, -1}, {-5, -4, -3, -2, -1, -0.5f}, {9, 1, 2, 3, 4, 9}, {0, -0.0f, 0, 1e-30f, 0, 0},
};
static const int32_t k_argmax_want[5] = {1, 0, 5, 0, 3};  /* worked out by hand */
static void f_argmax_rows(double * v, const int64_t ne[4]) { (void) ne; for (int i = 0; i < 30; i++) v[i] = k_argmax_rows[i / 6][i % 6]; }
static void f_argmax_rows_f16(double * v, const int64_t ne[4]) { f_argmax_rows(v, ne); v[4 * 6 + 3] = 1e-3; }
static void f_integers(double * v, const int64_t ne[4]) { for (int64_t i = 0; i < ops_nel(ne); i++) v[i] = round(v[i]); }  /* many ties */

static void check_refs(void) {
    double v[30], got[5];
    const int64_t ne[4] = {6, 5, 1, 1};
    f_argmax_rows(v, ne);
    argmax_rows(v, 6, 5, got);
    int bad = 0;
    for (int r = 0; r < 5; r++) bad += got[r] != k_argmax_want[r];
    CHECK(bad == 0, "the argmax reference picks the first maximum of the hand-made rows (%d rows differ)", bad);
}

static const struct rd_params p_sum = {RD_SUM, {0}}, p_sum_rows = {RD_SUM_ROWS, {0}}, p_mean = {RD_MEAN, {0}}, p_argmax = {RD_ARGMAX, {0}},
                              p_cumsum = {RD_CUMSUM, {0}}, p_count_equal = {RD_COUNT_EQUAL, {0}}, p_asc = {RD_ARGSORT_ASC, {0}},
                              p_desc = {RD_ARGSORT_DESC, {0}};

#define RED(S)                                                                                                          \
    {.op = "SUM", .variant = #S, .build = b_reduce, .params = &p_sum, .n_in = 1,                                       \
     .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}}, .shape = s_reduce, .ref = r_reduce, .tol = 1e-5},          \
    {.op = "SUM_ROWS", .variant = #S, .build = b_reduce, .params = &p_sum_rows, .n_in = 1,                             \
     .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}}, .shape = s_reduce, .ref = r_reduce, .tol = 1e-5},          \
    {.op = "MEAN", .variant = #S, .build = b_reduce, .params = &p_mean, .n_in = 1,                                     \
     .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}}, .shape = s_reduce, .ref = r_reduce, .tol = 1e-5}
/* small tiled to big, big summed down to small */
#define REP(SMALL, BIG, LAY, GRAD)                                                                                      \
    {.op = "REPEAT", .variant = #SMALL " -> " #BIG, .build = b_reduce,                                                 \
     .params = &(const struct rd_params) {RD_REPEAT, OPS_SHAPE BIG}, .n_in = 1,                                        \
     .in = {{.ne = OPS_SHAPE SMALL, .lo = -1, .hi = 1, .layout = LAY}}, .shape = s_reduce, .ref = r_reduce, .tol = 1e-5, .grad = GRAD}
#define REP_BACK(BIG, SMALL, LAY, GRAD)                                                                                 \
    {.op = "REPEAT_BACK", .variant = #BIG " -> " #SMALL, .build = b_reduce,                                            \
     .params = &(const struct rd_params) {RD_REPEAT_BACK, OPS_SHAPE SMALL}, .n_in = 1,                                 \
     .in = {{.ne = OPS_SHAPE BIG, .lo = -1, .hi = 1, .layout = LAY}}, .shape = s_reduce, .ref = r_reduce, .tol = 1e-5, .grad = GRAD}
/* repeat of the other element types: bits tiled unchanged, the result of a's type */
#define REP_T(TYPE, LO, HI, SMALL, BIG)                                                                                  \
    {.op = "REPEAT", .variant = #TYPE " " #SMALL " -> " #BIG, .build = b_reduce,                                       \
     .params = &(const struct rd_params) {RD_REPEAT, OPS_SHAPE BIG}, .n_in = 1,                                        \
     .in = {{.ne = OPS_SHAPE SMALL, .lo = LO, .hi = HI, .type = GGML_TYPE_##TYPE, .layout = OPS_ANY_LAYOUT}},          \
     .shape = s_reduce, .ref = r_reduce, .out_type = GGML_TYPE_##TYPE, .cmp = OPS_EXACT}
/* repeat_4d: SMALL tiled to the sizes BIG */
#define REP4(SMALL, BIG, LAY, GRAD)                                                                                     \
    {.op = "REPEAT", .variant = "repeat_4d " #SMALL " -> " #BIG, .build = b_reduce,                                   \
     .params = &(const struct rd_params) {RD_REPEAT_4D, OPS_SHAPE BIG}, .n_in = 1,                                     \
     .in = {{.ne = OPS_SHAPE SMALL, .lo = -1, .hi = 1, .layout = LAY}}, .shape = s_reduce, .ref = r_reduce, .tol = 1e-5, .grad = GRAD}
#define BOTH(SMALL, BIG) REP(SMALL, BIG, OPS_ANY_LAYOUT, OPS_FORWARD_ONLY), REP_BACK(BIG, SMALL, OPS_ANY_LAYOUT, OPS_FORWARD_ONLY)
#define GRAD1(OP, NAME, P, S, LAY)                                                                                      \
    {.op = OP, .variant = NAME, .build = b_reduce, .params = &P, .n_in = 1,                                            \
     .in = {{.ne = OPS_SHAPE S, .lo = -1, .hi = 1, .layout = LAY}}, .shape = s_reduce, .ref = r_reduce, .tol = 1e-5, .grad = OPS_GRAD}
#define ARGMAX(NAME, S, TYPE, LO, HI, FILL)                                                                             \
    {.op = "ARGMAX", .variant = NAME, .build = b_reduce, .params = &p_argmax, .n_in = 1,                               \
     .in = {{.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .type = TYPE, .fill = FILL}}, .shape = s_reduce, .out_type = GGML_TYPE_I32, .ref = r_reduce}

/* argsort (P: p_asc, p_desc) or top_k (P: its k) of x in [LO, HI] on every layout */
#define SORT(OP, NAME, P, S, LO, HI, FILL)                                                                       \
    {.op = OP, .variant = NAME " " #S, .build = b_reduce, .params = P, .n_in = 1,                                     \
     .in = {{.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .layout = OPS_ANY_LAYOUT, .fill = FILL}}, .shape = s_reduce,         \
     .out_type = GGML_TYPE_I32, .ref = r_reduce}
#define TOPK(K) (&(const struct rd_params) {RD_TOP_K, {K, 0, 0, 0}})

static const struct ops_row rows[] = {
    RED((7, 5, 3, 2)), RED((1, 13, 1, 3)), RED((13, 1, 1, 1)), RED((70, 3, 1, 1)),
    BOTH((7, 1, 3, 1), (7, 5, 3, 2)), BOTH((1, 5, 1, 1), (7, 5, 3, 2)), BOTH((2, 1, 3, 1), (6, 5, 3, 2)),
    BOTH((1, 1, 1, 1), (3, 2, 2, 2)), BOTH((7, 5, 3, 2), (7, 5, 3, 2)), BOTH((1, 13, 1, 3), (2, 13, 3, 3)),
    /* more tiles than repeat_back sums in one block (32): a bias gradient, and blocks that end inside a row */
    BOTH((5, 1, 1, 1), (5, 100, 1, 1)), BOTH((3, 2, 1, 1), (6, 40, 1, 1)),
    /* rows wide enough for the SIMD column sums (16 a vector, a tail, chunks starting inside a vector) */
    BOTH((37, 1, 1, 1), (37, 50, 1, 1)), BOTH((40, 2, 1, 1), (80, 30, 1, 1)),
    GRAD1("SUM", "gradient", p_sum, (5, 3, 2, 2), 0),
    GRAD1("SUM_ROWS", "gradient", p_sum_rows, (5, 3, 2, 2), 0),
    GRAD1("SUM_ROWS", "gradient, of a permuted param", p_sum_rows, (5, 3, 2, 2), OPS_PERMUTED),
    GRAD1("MEAN", "gradient", p_mean, (5, 3, 2, 2), 0),
    REP((5, 1, 2, 1), (5, 3, 2, 2), 0, OPS_GRAD), REP((2, 1, 1, 2), (6, 3, 2, 2), 0, OPS_GRAD), REP((1, 1, 1, 1), (3, 2, 2, 2), 0, OPS_GRAD),
    REP_BACK((5, 3, 2, 2), (5, 1, 2, 1), 0, OPS_GRAD), REP_BACK((6, 3, 2, 2), (2, 1, 2, 1), 0, OPS_GRAD),
    REP_BACK((3, 2, 2, 2), (1, 1, 1, 1), 0, OPS_GRAD),
    REP4((7, 1, 3, 1), (7, 5, 6, 2), OPS_ANY_LAYOUT, OPS_FORWARD_ONLY), REP4((2, 1, 1, 2), (6, 3, 2, 4), OPS_ANY_LAYOUT, OPS_FORWARD_ONLY),
    REP4((5, 1, 2, 1), (10, 3, 2, 2), 0, OPS_GRAD),
    REP_T(F16, -1, 1, (5, 1, 2, 1), (10, 3, 2, 2)), REP_T(BF16, -1, 1, (2, 1, 1, 2), (6, 3, 2, 4)),
    REP_T(I32, -100000, 100000, (5, 1, 2, 1), (10, 3, 2, 2)), REP_T(I16, -30000, 30000, (7, 1, 3, 1), (7, 5, 6, 2)),
    ARGMAX("ties, equal rows, tiny differences", (6, 5, 1, 1), GGML_TYPE_F32, 0, 0, f_argmax_rows),
    ARGMAX("F16, ties, equal rows", (6, 5, 1, 1), GGML_TYPE_F16, 0, 0, f_argmax_rows_f16),
    ARGMAX("integers in [-20, 20] (ties)", (101, 13, 1, 1), GGML_TYPE_F32, -20, 20, f_integers),
    ARGMAX("[31,101]", (31, 101, 1, 1), GGML_TYPE_F32, -5, 5, NULL),
    {.op = "CUMSUM", .variant = "(7, 5, 3, 2)", .build = b_reduce, .params = &p_cumsum, .n_in = 1,
     .in = {{.ne = {7, 5, 3, 2}, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}}, .shape = s_reduce, .ref = r_reduce, .tol = 1e-5},
    {.op = "CUMSUM", .variant = "(200, 3, 1, 1) offset 10", .build = b_reduce, .params = &p_cumsum, .n_in = 1,
     .in = {{.ne = {200, 3, 1, 1}, .lo = 9, .hi = 11}}, .shape = s_reduce, .ref = r_reduce, .tol = 1e-6},
    {.op = "CUMSUM", .variant = "(1, 13, 1, 3)", .build = b_reduce, .params = &p_cumsum, .n_in = 1,
     .in = {{.ne = {1, 13, 1, 3}, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}}, .shape = s_reduce, .ref = r_reduce, .tol = 1e-5},
    GRAD1("CUMSUM", "gradient", p_cumsum, (5, 3, 2, 2), 0), GRAD1("CUMSUM", "gradient, of transposed", p_cumsum, (6, 4, 1, 1), OPS_TRANSPOSED),
    {.op = "COUNT_EQUAL", .variant = "I32 in [0, 2] (7, 5, 3, 2)", .build = b_reduce, .params = &p_count_equal, .n_in = 2,
     .in = {{.ne = {7, 5, 3, 2}, .lo = 0, .hi = 2, .type = GGML_TYPE_I32, .layout = OPS_ANY_LAYOUT},
            {.ne = {7, 5, 3, 2}, .lo = 0, .hi = 2, .type = GGML_TYPE_I32, .layout = OPS_CONTIG | OPS_TRANSPOSED}},
     .shape = s_reduce, .out_type = GGML_TYPE_I32, .ref = r_reduce},
    {.op = "COUNT_EQUAL", .variant = "I32 a with itself (1, 1, 1, 1)", .build = b_reduce, .params = &p_count_equal, .n_in = 2,
     .in = {{.ne = {1, 1, 1, 1}, .lo = -5, .hi = 5, .type = GGML_TYPE_I32}, {.ne = {1, 1, 1, 1}, .lo = 7, .hi = 7, .type = GGML_TYPE_I32}},
     .shape = s_reduce, .out_type = GGML_TYPE_I32, .ref = r_reduce},
    SORT("ARGSORT", "ascending", &p_asc, (31, 7, 1, 1), -5, 5, NULL),
    SORT("ARGSORT", "descending", &p_desc, (31, 7, 1, 1), -5, 5, NULL),
    SORT("ARGSORT", "ascending, integers (ties)", &p_asc, (101, 5, 1, 1), -5, 5, f_integers),
    SORT("ARGSORT", "descending, integers (ties)", &p_desc, (101, 5, 1, 1), -5, 5, f_integers),
    SORT("ARGSORT", "ascending", &p_asc, (1, 4, 3, 1), -5, 5, NULL),
    SORT("ARGSORT", "descending", &p_desc, (64, 9, 2, 1), -5, 5, NULL),  /* rows over the threads */
    SORT("TOP_K", "k 1", TOPK(1), (31, 7, 1, 1), -5, 5, NULL),
    SORT("TOP_K", "k 5, integers (ties)", TOPK(5), (33, 6, 2, 1), -5, 5, f_integers),
    SORT("TOP_K", "k = ne0", TOPK(9), (9, 4, 1, 1), -5, 5, NULL),
    SORT("TOP_K", "k 3", TOPK(3), (40, 9, 2, 1), -5, 5, NULL),
};

const struct ops_family ops_reduce = {"reduce", rows, sizeof rows / sizeof rows[0], check_refs, NULL};

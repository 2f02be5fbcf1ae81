/* rel_pos.c -- rows of SAM's windowed-attention ops: WIN_PART, WIN_UNPART,
 * GET_REL_POS (and its gradient op GET_REL_POS_BACK), ADD_REL_POS. The
 * references index from the definitions: where each output element comes
 * from (a window's pixel, the table's row at offset k - 1 - i1 + i2), the
 * table's gradient as a scatter of every dy element onto its offset, and the
 * two position terms added to each score. */
#include "ops/harness.h"

#include <limits.h>

struct rp_case {
    int w, w0, h0;  /* win_part's window side; win_unpart's image */
    int k;          /* get_rel_pos: qh = kh = k */
    bool inplace;   /* ggml_add_rel_pos_inplace */
};

static int64_t ceil_div(int64_t n, int64_t w) { return (n + w - 1) / w; }

static struct ggml_tensor * b_win_part(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return ggml_win_part(ctx, in[0], ((const struct rp_case *) p)->w);
}
static struct ggml_tensor * b_win_unpart(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct rp_case * c = p;
    return ggml_win_unpart(ctx, in[0], c->w0, c->h0, c->w);
}
static struct ggml_tensor * b_get_rel_pos(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct rp_case * c = p;
    return ggml_get_rel_pos(ctx, in[0], c->k, c->k);
}
/* autodiff's GET_REL_POS_BACK of dy = in[1] */
static struct ggml_tensor * b_get_rel_pos_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return ops_grad_node(ctx, in, 0, 1, b_get_rel_pos, p);
}
static struct ggml_tensor * b_add_rel_pos(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return ((const struct rp_case *) p)->inplace ? ggml_add_rel_pos_inplace(ctx, in[0], in[1], in[2]) : ggml_add_rel_pos(ctx, in[0], in[1], in[2]);
}

/* ---- shapes ---- */

static void s_win_part(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const int w = ((const struct rp_case *) p)->w;
    no[0] = ne[0][0]; no[1] = w; no[2] = w; no[3] = ceil_div(ne[0][1], w) * ceil_div(ne[0][2], w);
}
static void s_win_unpart(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const struct rp_case * c = p;
    no[0] = ne[0][0]; no[1] = c->w0; no[2] = c->h0; no[3] = 1;
}
static void s_get_rel_pos(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const int k = ((const struct rp_case *) p)->k;
    no[0] = ne[0][0]; no[1] = k; no[2] = k; no[3] = 1;
}

/* the F16 result widened to F32, for the loss of the F16 row's refusal check */
static struct ggml_tensor * through_f32(struct ggml_context * ctx, struct ggml_tensor * out) {
    return ggml_cpy(ctx, out, ggml_new_tensor(ctx, GGML_TYPE_F32, 4, out->ne));
}

/* ---- float64 ---- */

static void r_win_part(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const int64_t w = ((const struct rp_case *) p)->w, W = ne[0][1], H = ne[0][2], npx = ceil_div(W, w);
    OPS_FOR4(no, c, i1, i2, i3) {
        const int64_t x = (i3 % npx) * w + i1, y = (i3 / npx) * w + i2;
        out[ops_at(no, c, i1, i2, i3)] = x < W && y < H ? in[0][ops_at(ne[0], c, x, y, 0)] : 0.0;
    }
}
static void r_win_unpart(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const struct rp_case * cs = p;
    const int64_t w = cs->w, npx = ceil_div(cs->w0, w);
    OPS_FOR4(no, c, i1, i2, i3) out[ops_at(no, c, i1, i2, i3)] = in[0][ops_at(ne[0], c, i1 % w, i2 % w, i1 / w + npx * (i2 / w))];
}
static void r_get_rel_pos(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const int64_t k = ((const struct rp_case *) p)->k;
    OPS_FOR4(no, c, i1, i2, i3) out[ops_at(no, c, i1, i2, i3)] = in[0][ops_at(ne[0], c, k - 1 - i1 + i2, 0, 0)];
}
/* every dy[c, i1, i2] added onto the table row it was read from */
static void r_get_rel_pos_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    const int64_t k = ((const struct rp_case *) p)->k;
    for (int64_t i = 0; i < ops_nel(no); i++) out[i] = 0.0;
    OPS_FOR4(ne[1], c, i1, i2, i3) out[ops_at(no, c, k - 1 - i1 + i2, 0, 0)] += in[1][ops_at(ne[1], c, i1, i2, i3)];
}
/* score (kw + K kh) of query row r, batch b, plus pw[kw] and ph[kh] of (r, b) */
static void r_add_rel_pos(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) p;
    const int64_t k = ne[1][0];
    OPS_FOR4(no, i0, r, b, i3) {
        const int64_t kw = i0 % k, kh = i0 / k, at = k * (r + no[1] * b);
        out[ops_at(no, i0, r, b, i3)] = in[0][ops_at(no, i0, r, b, i3)] + in[1][at + kw] + in[2][at + kh];
    }
}

/* the references at values worked out by hand (upstream's test-rel-pos.c):
 * table rows 0, 1, 2 at k = 2 give [[1, 0], [2, 1]]; a score of 1 plus pw
 * (kw) = 10 kw and ph (kh) = 100 kh */
static void check_refs(void) {
    const struct rp_case k2 = {.k = 2};
    const double table[3] = {0, 1, 2};
    const double * tin[1] = {table};
    const int64_t tne[1][4] = {{1, 3, 1, 1}}, gne[4] = {1, 2, 2, 1};
    double got[4];
    r_get_rel_pos(tin, tne, &k2, got, gne);
    CHECK(got[0] == 1 && got[1] == 0 && got[2] == 2 && got[3] == 1, "get_rel_pos reference at k = 2");

    const double a[4] = {1, 1, 1, 1}, pw[2] = {0, 10}, ph[2] = {0, 100};
    const double * ain[3] = {a, pw, ph};
    const int64_t ane[3][4] = {{4, 1, 1, 1}, {2, 1, 1, 1}, {2, 1, 1, 1}};
    double y[4];
    r_add_rel_pos(ain, ane, &k2, y, ane[0]);
    CHECK(y[0] == 1 && y[1] == 11 && y[2] == 101 && y[3] == 111, "add_rel_pos reference at K = 2");
}

static const struct rp_case w2 = {.w = 2}, w3 = {.w = 3}, w4 = {.w = 4}, un_5x4_w2 = {.w = 2, .w0 = 5, .h0 = 4},
                            un_6x3_w3 = {.w = 3, .w0 = 6, .h0 = 3}, un_3x2_w4 = {.w = 4, .w0 = 3, .h0 = 2}, k1 = {.k = 1}, k3 = {.k = 3},
                            k4 = {.k = 4}, add = {.inplace = false}, add_in = {.inplace = true};

#define IN_(S, LO, HI) {.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .layout = OPS_CONTIG | OPS_TRANSPOSED}
#define ROW_(OP, NAME, BUILD, CASE, SHAPE, REF, CMP, TOL, GRAD, N, ...)                                                   \
    {.op = OP, .variant = NAME, .build = BUILD, .params = &CASE, .n_in = N, .in = {__VA_ARGS__}, .shape = SHAPE, .ref = REF, \
     .cmp = CMP, .tol = TOL, .atol = TOL, .grad = GRAD}
#define PART_(NAME, CASE, S) ROW_("WIN_PART", NAME, b_win_part, CASE, s_win_part, r_win_part, OPS_EXACT, 0, OPS_GRAD, 1, IN_(S, -2, 2))
#define UNPART_(NAME, CASE, S) \
    ROW_("WIN_UNPART", NAME, b_win_unpart, CASE, s_win_unpart, r_win_unpart, OPS_EXACT, 0, OPS_GRAD, 1, IN_(S, -2, 2))
#define ADD_(NAME, CASE, A, P, LAYOUT_A, RESULT, GRAD)                                                                             \
    {.op = "ADD_REL_POS", .variant = NAME, .build = b_add_rel_pos, .params = &CASE, .n_in = 3,                                 \
     .in = {{.ne = OPS_SHAPE A, .lo = -2, .hi = 2, .layout = LAYOUT_A}, IN_(P, -1, 1), IN_(P, -1, 1)}, .ref = r_add_rel_pos,     \
     .cmp = OPS_ELEMENTS, .tol = 1e-6, .atol = 1e-6, .result = RESULT, .grad = GRAD}

static const struct ops_row rows[] = {
    PART_("[3,5,4] w 2, padded", w2, (3, 5, 4, 1)),
    PART_("[2,6,3] w 3, whole windows", w3, (2, 6, 3, 1)),
    PART_("[2,3,2] w 4, one window", w4, (2, 3, 2, 1)),
    PART_("[4,9,7] w 2: rows over threads", w2, (4, 9, 7, 1)),
    UNPART_("[3,2,2,6] to 5 x 4, w 2", un_5x4_w2, (3, 2, 2, 6)),
    UNPART_("[2,3,3,2] to 6 x 3, w 3", un_6x3_w3, (2, 3, 3, 2)),
    UNPART_("[2,4,4,1] to 3 x 2, w 4", un_3x2_w4, (2, 4, 4, 1)),
    ROW_("GET_REL_POS", "table [4,5], k 3", b_get_rel_pos, k3, s_get_rel_pos, r_get_rel_pos, OPS_EXACT, 0, OPS_GRAD, 1, IN_((4, 5, 1, 1), -2, 2)),
    ROW_("GET_REL_POS", "table [3,1], k 1", b_get_rel_pos, k1, s_get_rel_pos, r_get_rel_pos, OPS_EXACT, 0, OPS_GRAD, 1, IN_((3, 1, 1, 1), -2, 2)),
    {.op = "GET_REL_POS", .variant = "F16 table [5,7], k 4", .build = b_get_rel_pos, .params = &k4, .n_in = 1,
     .in = {{.ne = OPS_SHAPE(5, 7, 1, 1), .lo = -2, .hi = 2, .type = GGML_TYPE_F16, .layout = OPS_CONTIG | OPS_TRANSPOSED}},
     .shape = s_get_rel_pos, .out_type = GGML_TYPE_F16, .ref = r_get_rel_pos, .cmp = OPS_EXACT, .grad = OPS_REFUSED, .refusal = "GET_REL_POS: an f16 input", .grad_through = through_f32},
    ROW_("GET_REL_POS_BACK", "k 3", b_get_rel_pos_back, k3, NULL, r_get_rel_pos_back, OPS_ELEMENTS, 1e-6, OPS_REFUSED, 2,
         IN_((4, 5, 1, 1), -2, 2), IN_((4, 3, 3, 1), -1, 1)),
    ROW_("GET_REL_POS_BACK", "k 4", b_get_rel_pos_back, k4, NULL, r_get_rel_pos_back, OPS_ELEMENTS, 1e-6, OPS_REFUSED, 2,
         IN_((3, 7, 1, 1), -2, 2), IN_((3, 4, 4, 1), -1, 1)),
    ROW_("GET_REL_POS_BACK", "C 0: no scratch", b_get_rel_pos_back, k3, NULL, r_get_rel_pos_back, OPS_ELEMENTS, 1e-6, OPS_REFUSED, 2,
         IN_((0, 5, 1, 1), -2, 2), IN_((0, 3, 3, 1), -1, 1)),
    ADD_("K 3, R 2 x 2, B 2", add, (9, 4, 2, 1), (3, 2, 2, 2), OPS_CONTIG | OPS_TRANSPOSED, OPS_NEW, OPS_GRAD),
    ADD_("K 2, R 3 x 2", add, (4, 6, 1, 1), (2, 3, 2, 1), OPS_CONTIG | OPS_TRANSPOSED, OPS_NEW, OPS_GRAD),
    ADD_("K 4, R 5 x 1, B 3", add, (16, 5, 3, 1), (4, 5, 1, 3), OPS_CONTIG | OPS_TRANSPOSED, OPS_NEW, OPS_GRAD),
    ADD_("_inplace, K 3, R 2 x 2, B 2", add_in, (9, 4, 2, 1), (3, 2, 2, 2), OPS_CONTIG, OPS_INPLACE, OPS_FORWARD_ONLY),
    ADD_("K 0: empty rows, no scratch", add, (0, 4, 2, 1), (0, 2, 2, 2), OPS_CONTIG, OPS_NEW, OPS_FORWARD_ONLY),
};

/* what the constructors refuse: NULL, the wrong type, a window side <= 0, a
 * batch, an input that is not win_part's result, qh != kh, a table of the
 * wrong length, pw and ph that do not fit a, a non-contiguous a in place */
static void check_refusals(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * img = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 5, 4), * img16 = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 3, 5, 4);
    struct ggml_tensor * batch = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 5, 4, 2);
    OPS_EXPECT_REFUSED(ggml_win_part(ctx, NULL, 2), "win_part of NULL");
    OPS_EXPECT_REFUSED(ggml_win_part(NULL, img, 2), "win_part without a context");
    OPS_EXPECT_REFUSED(ggml_win_part(ctx, img16, 2), "win_part of F16");
    OPS_EXPECT_REFUSED(ggml_win_part(ctx, img, 0), "win_part with w 0");
    OPS_EXPECT_REFUSED(ggml_win_part(ctx, img, -3), "win_part with w -3");
    OPS_EXPECT_REFUSED(ggml_win_part(ctx, batch, 2), "win_part of a batch of images");
    OPS_EXPECT_REFUSED(ggml_win_part(ctx, img, INT_MAX), "win_part with w INT_MAX (too large a result)");

    struct ggml_tensor * wins = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 2, 6), * wins16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 3, 2, 2, 6);
    struct ggml_tensor * wide = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 2, 6);
    OPS_EXPECT_REFUSED(ggml_win_unpart(ctx, NULL, 5, 4, 2), "win_unpart of NULL");
    OPS_EXPECT_REFUSED(ggml_win_unpart(ctx, wins16, 5, 4, 2), "win_unpart of F16");
    OPS_EXPECT_REFUSED(ggml_win_unpart(ctx, wins, 5, 4, 0), "win_unpart with w 0");
    OPS_EXPECT_REFUSED(ggml_win_unpart(ctx, wins, -5, 4, 2), "win_unpart with w0 -5");
    OPS_EXPECT_REFUSED(ggml_win_unpart(ctx, wins, 5, -1, 2), "win_unpart with h0 -1");
    OPS_EXPECT_REFUSED(ggml_win_unpart(ctx, wide, 5, 4, 2), "win_unpart of 3 x 2 windows for w 2");
    OPS_EXPECT_REFUSED(ggml_win_unpart(ctx, wins, 7, 4, 2), "win_unpart of 6 windows for 8 (7 x 4, w 2)");
    OPS_EXPECT_REFUSED(ggml_win_unpart(ctx, wins, 5, 4, 3), "win_unpart with another w");

    struct ggml_tensor * table = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 5), * table_i32 = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 4, 5);
    struct ggml_tensor * tables = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 5, 2);
    OPS_EXPECT_REFUSED(ggml_get_rel_pos(ctx, NULL, 3, 3), "get_rel_pos of NULL");
    OPS_EXPECT_REFUSED(ggml_get_rel_pos(ctx, table_i32, 3, 3), "get_rel_pos of an I32 table");
    OPS_EXPECT_REFUSED(ggml_get_rel_pos(ctx, table, 3, 2), "get_rel_pos with qh != kh");
    OPS_EXPECT_REFUSED(ggml_get_rel_pos(ctx, table, 4, 4), "get_rel_pos of a table of 5 rows for k 4");
    OPS_EXPECT_REFUSED(ggml_get_rel_pos(ctx, table, 0, 0), "get_rel_pos with k 0");
    OPS_EXPECT_REFUSED(ggml_get_rel_pos(ctx, table, -3, -3), "get_rel_pos with k -3");
    OPS_EXPECT_REFUSED(ggml_get_rel_pos(ctx, tables, 3, 3), "get_rel_pos of two tables");

    struct ggml_tensor * s = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 9, 4, 2), * pw = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 2, 2);
    struct ggml_tensor * pw16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 3, 2, 2, 2), * pw_r3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 1, 2);
    struct ggml_tensor * pw_b1 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 2, 1), * pw_k2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 2, 2, 2);
    struct ggml_tensor * s_b3 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 9, 4, 2, 3), * s_t = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 9, 2);
    OPS_EXPECT_REFUSED(ggml_add_rel_pos(ctx, NULL, pw, pw), "add_rel_pos of NULL");
    OPS_EXPECT_REFUSED(ggml_add_rel_pos(ctx, s, NULL, pw), "add_rel_pos with pw NULL");
    OPS_EXPECT_REFUSED(ggml_add_rel_pos(ctx, s, pw, NULL), "add_rel_pos with ph NULL");
    OPS_EXPECT_REFUSED(ggml_add_rel_pos(ctx, s, pw16, pw16), "add_rel_pos with F16 pw, ph");
    OPS_EXPECT_REFUSED(ggml_add_rel_pos(ctx, s, pw, pw_b1), "add_rel_pos with pw and ph of two shapes");
    OPS_EXPECT_REFUSED(ggml_add_rel_pos(ctx, s, pw_k2, pw_k2), "add_rel_pos with K 2 for 9 scores");
    OPS_EXPECT_REFUSED(ggml_add_rel_pos(ctx, s, pw_r3, pw_r3), "add_rel_pos with 3 query rows for 4");
    OPS_EXPECT_REFUSED(ggml_add_rel_pos(ctx, s, pw_b1, pw_b1), "add_rel_pos with 1 batch for 2");
    OPS_EXPECT_REFUSED(ggml_add_rel_pos(ctx, s_b3, pw, pw), "add_rel_pos of a with ne3 3");
    OPS_EXPECT_REFUSED(ggml_add_rel_pos_inplace(ctx, ggml_transpose(ctx, s_t), pw, pw), "add_rel_pos_inplace of a transposed a");
    ggml_free(ctx);
}

const struct ops_family ops_rel_pos = {"rel_pos", rows, sizeof rows / sizeof rows[0], check_refs, check_refusals};

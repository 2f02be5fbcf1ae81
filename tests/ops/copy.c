/* copy.c -- rows of roll and of the copy family: dup, cont, cpy (shape changes, strided
 * sources and destinations, F32 <-> F16), and the views reshape, view,
 * permute, transpose.
 *
 * Data movement is exact: every element must equal its source (an F16
 * result the nearest half of it, overflow to Inf and subnormals included).
 * Views compute nothing: their values are read where ne, nb and the offset
 * point, so a wrong stride or offset shows. Gradients: the harness defaults,
 * except F32 -> F16 -> F32, whose loss is linear in x: step 0.5 has no
 * truncation error, and F16 rounding of x +- 0.5 (|x| <= 1.5, error <=
 * 2^-11 * 1.5) moves the numeric slope by <= 1.5e-3 |W|. */
#include "ops/harness.h"

#include <stdlib.h>
#include <string.h>

enum cp_kind { CP_DUP, CP_CONT, CP_CPY, CP_RESHAPE, CP_VIEW, CP_PERMUTE, CP_TRANSPOSE };

struct cp_params {
    enum cp_kind kind;
    int n_perm;              /* permutes of the input first (PERMUTE, TRANSPOSE: the last is the node) */
    int axes[2][4];          /* {1, 0, 2, 3} before a copy: ggml_transpose */
    int nd;                  /* RESHAPE / VIEW / CPY: the dims of ne (CPY 0: shaped like its source; RESHAPE 0: like a tensor of ne) */
    int64_t ne[4];
    int64_t st[4], offset;   /* VIEW: strides and offset in floats */
    int64_t outer[2];        /* VIEW of a view: the outer view's floats and offset (0: none) */
    bool flat_first;         /* RESHAPE: through reshape_1d first */
    enum ggml_type dst_type; /* CPY */
    bool dst_transposed;     /* CPY into a transposed view of a [ne1, ne0] tensor */
    bool via_f16;            /* CPY F32 -> F16, then the node F16 -> F32 */
    bool cast;               /* CPY through ggml_cast(x, dst_type) */
    bool inplace;            /* DUP: ggml_dup_inplace */
};

static bool is_transpose(const int ax[4]) { return ax[0] == 1 && ax[1] == 0 && ax[2] == 2 && ax[3] == 3; }

static struct ggml_tensor * b_copy(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct cp_params * p = params;
    struct ggml_tensor * x = in[0];
    const int pre = p->kind == CP_PERMUTE || p->kind == CP_TRANSPOSE ? p->n_perm - 1 : p->n_perm;
    for (int k = 0; k < pre; k++) {
        const int * a = p->axes[k];
        x = is_transpose(a) ? ggml_transpose(ctx, x) : ggml_permute(ctx, x, a[0], a[1], a[2], a[3]);
    }
    const int64_t * ne = p->ne;
    switch (p->kind) {
        case CP_DUP: return p->inplace ? ggml_dup_inplace(ctx, x) : ggml_dup(ctx, x);
        case CP_CONT:
            switch (p->nd) {  /* cont_1d..4d: the logical order into another shape */
                case 1: return ggml_cont_1d(ctx, x, ne[0]);
                case 2: return ggml_cont_2d(ctx, x, ne[0], ne[1]);
                case 3: return ggml_cont_3d(ctx, x, ne[0], ne[1], ne[2]);
                case 4: return ggml_cont_4d(ctx, x, ne[0], ne[1], ne[2], ne[3]);
                default: return ggml_cont(ctx, x);
            }
        case CP_CPY: {
            if (p->cast) return ggml_cast(ctx, x, p->dst_type);
            if (p->via_f16) return ggml_cpy(ctx, ggml_cpy(ctx, x, ggml_new_tensor(ctx, GGML_TYPE_F16, 4, x->ne)), ggml_new_tensor(ctx, GGML_TYPE_F32, 4, x->ne));
            if (p->dst_transposed) return ggml_cpy(ctx, x, ggml_transpose(ctx, ggml_new_tensor_2d(ctx, p->dst_type, x->ne[1], x->ne[0])));
            return ggml_cpy(ctx, x, p->nd ? ggml_new_tensor(ctx, p->dst_type, p->nd, ne) : ggml_new_tensor(ctx, p->dst_type, 4, x->ne));
        }
        case CP_RESHAPE:
            if (p->flat_first) x = ggml_reshape_1d(ctx, x, ggml_nelements(x));
            switch (p->nd) {
                case 1: return ggml_reshape_1d(ctx, x, ne[0]);
                case 2: return ggml_reshape_2d(ctx, x, ne[0], ne[1]);
                case 3: return ggml_reshape_3d(ctx, x, ne[0], ne[1], ne[2]);
                case 4: return ggml_reshape_4d(ctx, x, ne[0], ne[1], ne[2], ne[3]);
                default: return ggml_reshape(ctx, x, ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne));
            }
        case CP_VIEW: {
            if (p->outer[0]) x = ggml_view_1d(ctx, x, p->outer[0], (size_t) p->outer[1] * 4);
            const size_t o = (size_t) p->offset * 4, n1 = (size_t) p->st[1] * 4, n2 = (size_t) p->st[2] * 4, n3 = (size_t) p->st[3] * 4;
            switch (p->nd) {
                case 1: return ggml_view_1d(ctx, x, ne[0], o);
                case 2: return ggml_view_2d(ctx, x, ne[0], ne[1], n1, o);
                case 3: return ggml_view_3d(ctx, x, ne[0], ne[1], ne[2], n1, n2, o);
                default: return ggml_view_4d(ctx, x, ne[0], ne[1], ne[2], ne[3], n1, n2, n3, o);
            }
        }
        case CP_PERMUTE: {
            const int * a = p->axes[p->n_perm - 1];
            return ggml_permute(ctx, x, a[0], a[1], a[2], a[3]);
        }
        default: return ggml_transpose(ctx, x);
    }
}

/* ggml_permute semantics: result dim ax[i] is source dim i */
static void ref_permute(const double * a, const int64_t ne[4], const int ax[4], double * r, int64_t rne[4]) {
    for (int i = 0; i < 4; i++) rne[ax[i]] = ne[i];
    OPS_FOR4(rne, o0, o1, o2, o3) {
        const int64_t o[4] = {o0, o1, o2, o3};
        r[ops_at(rne, o0, o1, o2, o3)] = a[ops_at(ne, o[ax[0]], o[ax[1]], o[ax[2]], o[ax[3]])];
    }
}

/* views and reshapes (and a cpy into another shape): the shape asked for; the others: the source's, permuted */
static void s_copy(const int64_t (*ne)[4], const void * params, int64_t no[4]) {
    const struct cp_params * p = params;
    if (p->kind == CP_VIEW || p->kind == CP_RESHAPE || ((p->kind == CP_CPY || p->kind == CP_CONT) && p->nd)) {
        for (int d = 0; d < 4; d++) no[d] = (p->nd == 0 || d < p->nd) && p->ne[d] ? p->ne[d] : 1;
        return;
    }
    memcpy(no, ne[0], 4 * sizeof *no);
    for (int k = 0; k < p->n_perm; k++) {
        int64_t t[4];
        for (int i = 0; i < 4; i++) t[p->axes[k][i]] = no[i];
        memcpy(no, t, sizeof t);
    }
}

/* The input's elements in the order the node lists them: a view reads the
 * (contiguous) input's memory at offset + sum i_d st_d; the others keep the
 * logical order of the (permuted) source. */
static void r_copy(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    const struct cp_params * p = params;
    const int64_t n = ops_nel(ne[0]);
    if (p->kind == CP_VIEW) {
        OPS_FOR4(no, i0, i1, i2, i3)
            out[ops_at(no, i0, i1, i2, i3)] = in[0][p->outer[1] + p->offset + i0 + i1 * p->st[1] + i2 * p->st[2] + i3 * p->st[3]];
        return;
    }
    double * cur = malloc((size_t) n * sizeof *cur), * tmp = malloc((size_t) n * sizeof *tmp);
    int64_t cne[4], tne[4];
    memcpy(cur, in[0], (size_t) n * sizeof *cur);
    memcpy(cne, ne[0], sizeof cne);
    for (int k = 0; k < p->n_perm; k++) {
        ref_permute(cur, cne, p->axes[k], tmp, tne);
        memcpy(cur, tmp, (size_t) n * sizeof *cur);
        memcpy(cne, tne, sizeof cne);
    }
    for (int64_t i = 0; i < n; i++) out[i] = p->via_f16 ? tc_ref_round_fp16((float) cur[i]) : cur[i];
    free(cur);
    free(tmp);
}

static void post_contiguous(const struct ggml_tensor * out, const double * ref, const void * params, const char * what) {
    (void) ref; (void) params;
    CHECK(ggml_is_contiguous(out), "%s: the result is contiguous", what);
}

/* cpy writes its destination b and returns a view of it */
static void post_dst(const struct ggml_tensor * out, const double * ref, const void * params, const char * what) {
    (void) ref; (void) params;
    CHECK(out->src[1] && out->data == out->src[1]->data, "%s: the result is a view of the destination", what);
}

/* magnitudes up to 70000 (beyond F16's 65504: Inf), and 37 that are subnormal halves */
static void f_f16_range(double * v, const int64_t ne[4]) {
    for (int64_t i = 0; i < 37 && i < ops_nel(ne); i++) v[i] = ldexp(tc_uniform(-1, 1), -14 - (int) (i % 12));
}

static const struct cp_params p_dup = {.kind = CP_DUP}, p_dup_perm = {.kind = CP_DUP, .n_perm = 1, .axes = {{1, 3, 0, 2}}},
    p_cont_perm = {.kind = CP_CONT, .n_perm = 1, .axes = {{1, 3, 0, 2}}}, p_cont_perm2 = {.kind = CP_CONT, .n_perm = 1, .axes = {{2, 0, 3, 1}}},
    p_cont_perm_tr = {.kind = CP_CONT, .n_perm = 2, .axes = {{1, 3, 0, 2}, {1, 0, 2, 3}}},
    p_cpy = {.kind = CP_CPY}, p_cpy_flat = {.kind = CP_CPY, .n_perm = 1, .axes = {{1, 3, 0, 2}}, .nd = 2, .ne = {10, 21}},
    p_cpy_tdst = {.kind = CP_CPY, .dst_transposed = true}, p_cpy_12x5 = {.kind = CP_CPY, .nd = 2, .ne = {12, 5}},
    p_cpy_perm_10x6 = {.kind = CP_CPY, .n_perm = 1, .axes = {{1, 2, 0, 3}}, .nd = 2, .ne = {10, 6}},
    p_cpy_f16 = {.kind = CP_CPY, .dst_type = GGML_TYPE_F16}, p_cpy_f16_74x15 = {.kind = CP_CPY, .dst_type = GGML_TYPE_F16, .nd = 2, .ne = {74, 15}},
    p_cpy_via_f16 = {.kind = CP_CPY, .via_f16 = true}, p_cast_f16 = {.kind = CP_CPY, .cast = true, .dst_type = GGML_TYPE_F16},
    p_cast_f32 = {.kind = CP_CPY, .cast = true, .dst_type = GGML_TYPE_F32}, p_dup_inplace = {.kind = CP_DUP, .inplace = true},
    p_cont1 = {.kind = CP_CONT, .nd = 1, .ne = {210}}, p_cont2 = {.kind = CP_CONT, .n_perm = 1, .axes = {{1, 3, 0, 2}}, .nd = 2, .ne = {14, 15}},
    p_cont3 = {.kind = CP_CONT, .n_perm = 1, .axes = {{1, 0, 2, 3}}, .nd = 3, .ne = {5, 6, 7}},
    p_cont4 = {.kind = CP_CONT, .n_perm = 1, .axes = {{2, 0, 3, 1}}, .nd = 4, .ne = {3, 5, 7, 2}},
    p_gcont2 = {.kind = CP_CONT, .n_perm = 1, .axes = {{1, 0, 2, 3}}, .nd = 2, .ne = {6, 10}},
    p_rs1 = {.kind = CP_RESHAPE, .nd = 1, .ne = {210}}, p_rs2 = {.kind = CP_RESHAPE, .nd = 2, .ne = {14, 15}},
    p_rs3 = {.kind = CP_RESHAPE, .nd = 3, .ne = {5, 6, 7}}, p_rs4 = {.kind = CP_RESHAPE, .nd = 4, .ne = {3, 5, 7, 2}},
    p_rs_like = {.kind = CP_RESHAPE, .nd = 0, .ne = {30, 7, 1, 1}}, p_rs_6x10 = {.kind = CP_RESHAPE, .nd = 2, .ne = {6, 10}},
    p_rs_flat4 = {.kind = CP_RESHAPE, .nd = 4, .ne = {3, 4, 1, 5}, .flat_first = true},
    /* views of a [7, 5, 3, 2] (strides in floats: 7, 35, 105) */
    p_v1 = {.kind = CP_VIEW, .nd = 1, .ne = {11, 1, 1, 1}, .st = {1, 11, 11, 11}, .offset = 13},
    p_v2 = {.kind = CP_VIEW, .nd = 2, .ne = {4, 3, 1, 1}, .st = {1, 7, 21, 21}, .offset = 17},
    p_v2_rows = {.kind = CP_VIEW, .nd = 2, .ne = {3, 4, 1, 1}, .st = {1, 14, 56, 56}, .offset = 1},  /* every other row */
    p_v3 = {.kind = CP_VIEW, .nd = 3, .ne = {2, 3, 2, 1}, .st = {1, 7, 35, 70}, .offset = 43},
    p_v4 = {.kind = CP_VIEW, .nd = 4, .ne = {3, 2, 2, 2}, .st = {1, 7, 35, 105}, .offset = 60},
    p_v4_swap = {.kind = CP_VIEW, .nd = 4, .ne = {2, 5, 3, 1}, .st = {1, 35, 7, 105}, .offset = 6},  /* rows and planes swapped */
    p_vv = {.kind = CP_VIEW, .nd = 1, .ne = {9, 1, 1, 1}, .st = {1, 9, 9, 9}, .offset = 7, .outer = {100, 50}},
    /* views of a [7, 5, 3, 1] for the gradients */
    p_gv1 = {.kind = CP_VIEW, .nd = 1, .ne = {11, 1, 1, 1}, .st = {1, 11, 11, 11}, .offset = 13},
    p_gv2 = {.kind = CP_VIEW, .nd = 2, .ne = {3, 2, 1, 1}, .st = {1, 7, 7, 7}, .offset = 15},
    p_gv3 = {.kind = CP_VIEW, .nd = 3, .ne = {4, 2, 2, 1}, .st = {1, 14, 35, 35}, .offset = 9},
    p_gv4 = {.kind = CP_VIEW, .nd = 4, .ne = {2, 3, 2, 1}, .st = {1, 7, 35, 105}, .offset = 45},
    p_gv_overlap = {.kind = CP_VIEW, .nd = 2, .ne = {4, 9, 1, 1}, .st = {1, 2, 18, 18}, .offset = 1},  /* sliding windows of a [24] */
    p_gvv = {.kind = CP_VIEW, .nd = 1, .ne = {9, 1, 1, 1}, .st = {1, 9, 9, 9}, .offset = 6, .outer = {40, 20}},
    p_tr = {.kind = CP_TRANSPOSE, .n_perm = 1, .axes = {{1, 0, 2, 3}}}, p_perm_perm = {.kind = CP_PERMUTE, .n_perm = 2, .axes = {{2, 0, 3, 1}, {1, 3, 0, 2}}},
    p_gperm = {.kind = CP_PERMUTE, .n_perm = 1, .axes = {{2, 0, 3, 1}}};

#define PERM(A0, A1, A2, A3)                                                                                           \
    {.op = "PERMUTE", .variant = "(" #A0 "," #A1 "," #A2 "," #A3 ")", .build = b_copy,                                \
     .params = &(const struct cp_params) {.kind = CP_PERMUTE, .n_perm = 1, .axes = {{A0, A1, A2, A3}}}, .n_in = 1,      \
     .in = {{.ne = {7, 5, 3, 2}, .lo = -1, .hi = 1}}, .shape = s_copy, .ref = r_copy, .cmp = OPS_EXACT, .result = OPS_VIEW}
#define ROW(OP, NAME, P, S, TYPE, LAY, LO, HI, FILL, RESULT, POST, GRAD, OUT)                                          \
    {.op = OP, .variant = NAME, .build = b_copy, .params = &P, .n_in = 1,                                            \
     .in = {{.ne = OPS_SHAPE S, .lo = LO, .hi = HI, .type = TYPE, .layout = LAY, .fill = FILL}}, .shape = s_copy, .ref = r_copy,     \
     .out_type = OUT, .cmp = OPS_EXACT, .result = RESULT, .post = POST, .grad = GRAD}
#define FWD(OP, NAME, P, S, LAY, RESULT, POST) ROW(OP, NAME, P, S, GGML_TYPE_F32, LAY, -1, 1, NULL, RESULT, POST, OPS_FORWARD_ONLY, GGML_TYPE_F32)
#define F16(OP, NAME, P, S, TYPE, LAY, OUT) ROW(OP, NAME, P, S, TYPE, LAY, -70000, 70000, f_f16_range, OPS_NEW, post_dst, OPS_FORWARD_ONLY, OUT)
#define GRAD(OP, NAME, P, S, RESULT) ROW(OP, NAME, P, S, GGML_TYPE_F32, 0, -1, 1, NULL, RESULT, NULL, OPS_GRAD, GGML_TYPE_F32)
/* roll: y[i0, i1, i2, i3] = a[(i0 - s0) mod ne0, ...] (a permutation: exact; its gradient rolls back) */
struct roll_params { int s[4]; };
static struct ggml_tensor * b_roll(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct roll_params * p = params;
    return ggml_roll(ctx, in[0], p->s[0], p->s[1], p->s[2], p->s[3]);
}
static void r_roll(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    const struct roll_params * p = params;
    int64_t j[4];
    OPS_FOR4(no, i0, i1, i2, i3) {
        const int64_t i[4] = {i0, i1, i2, i3};
        for (int d = 0; d < 4; d++) j[d] = ((i[d] - p->s[d]) % ne[0][d] + ne[0][d]) % ne[0][d];
        out[ops_at(no, i0, i1, i2, i3)] = in[0][ops_at(ne[0], j[0], j[1], j[2], j[3])];
    }
}
#define ROLL(NAME, S0, S1, S2, S3, A, LAY, GRAD)                                                                          \
    {.op = "ROLL", .variant = NAME, .build = b_roll, .params = &(const struct roll_params) {{S0, S1, S2, S3}}, .n_in = 1, \
     .in = {{.ne = OPS_SHAPE A, .lo = -1, .hi = 1, .layout = LAY}}, .ref = r_roll, .cmp = OPS_EXACT, .grad = GRAD}

static const struct ops_row rows[] = {
    FWD("DUP", "[7,5,3,2]", p_dup, (7, 5, 3, 2), OPS_ANY_LAYOUT, OPS_NEW, post_contiguous),
    FWD("DUP", "of a permuted (1,3,0,2) view", p_dup_perm, (7, 5, 3, 2), 0, OPS_NEW, post_contiguous),
    FWD("CONT", "of a permuted (1,3,0,2) view", p_cont_perm, (7, 5, 3, 2), OPS_ANY_LAYOUT, OPS_NEW, post_contiguous),
    FWD("CPY", "into a tensor of the same shape", p_cpy, (7, 5, 3, 2), OPS_ANY_LAYOUT, OPS_NEW, post_dst),
    FWD("CPY", "of a permuted view into [10,21]", p_cpy_flat, (7, 5, 3, 2), 0, OPS_NEW, post_dst),
    FWD("CPY", "into a transposed view", p_cpy_tdst, (7, 5, 1, 1), 0, OPS_NEW, post_dst),
    F16("CPY", "F32 -> F16 (nearest even, overflow, subnormals)", p_cpy_f16, (37, 5, 3, 2), GGML_TYPE_F32, 0, GGML_TYPE_F16),
    F16("CPY", "ggml_cast F32 -> F16 of a view", p_cast_f16, (37, 5, 3, 2), GGML_TYPE_F32, OPS_PERMUTED | OPS_TRANSPOSED, GGML_TYPE_F16),
    F16("CPY", "F16 -> F32", p_cpy, (37, 5, 3, 2), GGML_TYPE_F16, 0, GGML_TYPE_F32),
    F16("CPY", "F16 -> F16 [74,15]", p_cpy_f16_74x15, (37, 5, 3, 2), GGML_TYPE_F16, 0, GGML_TYPE_F16),
    F16("CPY", "F16 view -> F32", p_cpy, (37, 5, 3, 2), GGML_TYPE_F16, OPS_PERMUTED | OPS_TRANSPOSED, GGML_TYPE_F32),
    FWD("RESHAPE", "1d [210]", p_rs1, (7, 5, 3, 2), 0, OPS_VIEW, post_contiguous),
    FWD("RESHAPE", "2d [14,15]", p_rs2, (7, 5, 3, 2), 0, OPS_VIEW, post_contiguous),
    FWD("RESHAPE", "3d [5,6,7]", p_rs3, (7, 5, 3, 2), 0, OPS_VIEW, post_contiguous),
    FWD("RESHAPE", "4d [3,5,7,2]", p_rs4, (7, 5, 3, 2), 0, OPS_VIEW, post_contiguous),
    FWD("RESHAPE", "like a [30,7]", p_rs_like, (7, 5, 3, 2), 0, OPS_VIEW, post_contiguous),
    FWD("VIEW", "1d, offset 13", p_v1, (7, 5, 3, 2), 0, OPS_VIEW, NULL),
    FWD("VIEW", "2d, offset 17", p_v2, (7, 5, 3, 2), 0, OPS_VIEW, NULL),
    FWD("VIEW", "2d, every other row", p_v2_rows, (7, 5, 3, 2), 0, OPS_VIEW, NULL),
    FWD("VIEW", "3d", p_v3, (7, 5, 3, 2), 0, OPS_VIEW, NULL),
    FWD("VIEW", "4d", p_v4, (7, 5, 3, 2), 0, OPS_VIEW, NULL),
    FWD("VIEW", "4d, swapped strides", p_v4_swap, (7, 5, 3, 2), 0, OPS_VIEW, NULL),
    FWD("VIEW", "of a view (offsets 50 + 7)", p_vv, (7, 5, 3, 2), 0, OPS_VIEW, NULL),
    PERM(0, 1, 2, 3), PERM(0, 1, 3, 2), PERM(0, 2, 1, 3), PERM(0, 2, 3, 1), PERM(0, 3, 1, 2), PERM(0, 3, 2, 1),
    PERM(1, 0, 2, 3), PERM(1, 0, 3, 2), PERM(1, 2, 0, 3), PERM(1, 2, 3, 0), PERM(1, 3, 0, 2), PERM(1, 3, 2, 0),
    PERM(2, 0, 1, 3), PERM(2, 0, 3, 1), PERM(2, 1, 0, 3), PERM(2, 1, 3, 0), PERM(2, 3, 0, 1), PERM(2, 3, 1, 0),
    PERM(3, 0, 1, 2), PERM(3, 0, 2, 1), PERM(3, 1, 0, 2), PERM(3, 1, 2, 0), PERM(3, 2, 0, 1), PERM(3, 2, 1, 0),
    FWD("PERMUTE", "of a permute", p_perm_perm, (7, 5, 3, 2), 0, OPS_VIEW, NULL),
    FWD("TRANSPOSE", "[7,5,3,2]", p_tr, (7, 5, 3, 2), 0, OPS_VIEW, NULL),
    GRAD("DUP", "gradient", p_dup, (5, 3, 2, 2), OPS_NEW),
    FWD("DUP", "dup_inplace", p_dup_inplace, (7, 5, 3, 2), OPS_CONTIG | OPS_TRANSPOSED, OPS_INPLACE, NULL),
    /* cont_1d..4d: a's logical order (of a permuted view too) in a new shape */
    FWD("CONT", "cont_1d [210]", p_cont1, (7, 5, 3, 2), OPS_ANY_LAYOUT, OPS_NEW, post_contiguous),
    FWD("CONT", "cont_2d [14,15] of a permuted view", p_cont2, (7, 5, 3, 2), 0, OPS_NEW, post_contiguous),
    FWD("CONT", "cont_3d [5,6,7] of a transposed view", p_cont3, (7, 5, 3, 2), 0, OPS_NEW, post_contiguous),
    FWD("CONT", "cont_4d [3,5,7,2] of a permuted view", p_cont4, (7, 5, 3, 2), OPS_CONTIG | OPS_TRANSPOSED, OPS_NEW, post_contiguous),
    GRAD("CONT", "gradient, cont_2d [6,10] of a transposed param", p_gcont2, (5, 3, 2, 2), OPS_NEW),
    GRAD("CONT", "gradient, of a permuted param", p_cont_perm2, (5, 3, 2, 2), OPS_NEW),
    GRAD("CPY", "gradient", p_cpy, (5, 3, 2, 2), OPS_NEW),
    GRAD("CPY", "gradient through ggml_cast", p_cast_f32, (5, 3, 2, 2), OPS_NEW),
    GRAD("CPY", "gradient, to a new shape [12,5]", p_cpy_12x5, (5, 3, 2, 2), OPS_NEW),
    GRAD("CPY", "gradient, of a permuted view", p_cpy_perm_10x6, (5, 3, 2, 2), OPS_NEW),
    {.op = "CPY", .variant = "gradient, F32 -> F16 -> F32", .build = b_copy, .params = &p_cpy_via_f16, .n_in = 1,
     .in = {{.ne = {5, 3, 2, 2}, .lo = -1, .hi = 1}}, .shape = s_copy, .ref = r_copy, .cmp = OPS_EXACT, .grad = OPS_GRAD, .fd_eps = 0.5},
    GRAD("RESHAPE", "gradient, 2d", p_rs_6x10, (5, 3, 2, 2), OPS_VIEW),
    GRAD("RESHAPE", "gradient, 1d then 4d", p_rs_flat4, (5, 3, 2, 2), OPS_VIEW),
    GRAD("PERMUTE", "gradient", p_gperm, (5, 3, 2, 2), OPS_VIEW),
    GRAD("TRANSPOSE", "gradient", p_tr, (5, 3, 2, 2), OPS_VIEW),
    GRAD("CONT", "gradient, permute + transpose", p_cont_perm_tr, (5, 3, 2, 2), OPS_NEW),
    GRAD("VIEW", "gradient, 1d", p_gv1, (7, 5, 3, 1), OPS_VIEW),
    GRAD("VIEW", "gradient, 2d", p_gv2, (7, 5, 3, 1), OPS_VIEW),
    GRAD("VIEW", "gradient, 3d", p_gv3, (7, 5, 3, 1), OPS_VIEW),
    GRAD("VIEW", "gradient, 4d", p_gv4, (7, 5, 3, 1), OPS_VIEW),
    GRAD("VIEW", "gradient, overlapping windows", p_gv_overlap, (24, 1, 1, 1), OPS_VIEW),
    GRAD("VIEW", "gradient, of a view", p_gvv, (7, 5, 3, 1), OPS_VIEW),
    /* a view of a strided tensor has no backward */
    {.op = "VIEW", .variant = "of a transposed tensor", .build = b_copy,
     .params = &(const struct cp_params) {.kind = CP_VIEW, .n_perm = 1, .axes = {{1, 0, 2, 3}}, .nd = 1, .ne = {5, 1, 1, 1}, .st = {1, 5, 5, 5}, .outer = {0, 0}},
     .n_in = 1, .in = {{.ne = {7, 5, 1, 1}, .lo = -1, .hi = 1}}, .shape = s_copy, .ref = r_copy, .cmp = OPS_EXACT, .result = OPS_VIEW,
     .grad = OPS_REFUSED, .refusal = "non-contiguous"},
    ROLL("shifts (2, -1, 1, 1)", 2, -1, 1, 1, (7, 5, 3, 2), OPS_ANY_LAYOUT, OPS_FORWARD_ONLY),
    ROLL("shifts (-6, 4, -2, -1)", -6, 4, -2, -1, (7, 5, 3, 2), OPS_ANY_LAYOUT, OPS_FORWARD_ONLY),
    ROLL("no shift", 0, 0, 0, 0, (7, 5, 3, 2), 0, OPS_FORWARD_ONLY),
    ROLL("gradient", 3, -2, 1, 0, (5, 4, 3, 1), OPS_CONTIG | OPS_TRANSPOSED, OPS_GRAD),
};

const struct ops_family ops_copy = {"copy", rows, sizeof rows / sizeof rows[0], NULL, NULL};

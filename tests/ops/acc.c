/* acc.c -- rows of acc (b added into a strided region of a copy of a) and
 * set (b written over it: a copy of a, or a itself for the _inplace forms;
 * rows that overlap in the region: the later row wins).
 *
 * Forward tolerance: relative 2-norm error 1e-5 (one addition per element);
 * a is left unchanged (the harness checks every input). Gradients (of a and
 * b): the harness defaults. */
#include "ops/harness.h"

#include <string.h>

struct acc_params { int64_t st[4], offset; };  /* the region's strides and offset, in floats */

static struct ggml_tensor * b_acc(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct acc_params * p = params;
    return ggml_acc(ctx, in[0], in[1], (size_t) p->st[1] * 4, (size_t) p->st[2] * 4, (size_t) p->st[3] * 4, (size_t) p->offset * 4);
}
static struct ggml_tensor * b_acc_inplace(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct acc_params * p = params;
    return ggml_acc_inplace(ctx, in[0], in[1], (size_t) p->st[1] * 4, (size_t) p->st[2] * 4, (size_t) p->st[3] * 4, (size_t) p->offset * 4);
}

static void r_acc(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    const struct acc_params * p = params;
    memcpy(out, in[0], (size_t) ops_nel(no) * sizeof *out);
    OPS_FOR4(ne[1], i0, i1, i2, i3) out[p->offset + i0 + i1 * p->st[1] + i2 * p->st[2] + i3 * p->st[3]] += in[1][ops_at(ne[1], i0, i1, i2, i3)];
}

enum set_form { SET_4D, SET_INPLACE, SET_1D, SET_1D_INPLACE, SET_2D, SET_2D_INPLACE };
struct set_params { struct acc_params r; enum set_form form; };  /* _1d / _2d: the strides not given are a's */

static struct ggml_tensor * b_set(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct set_params * p = params;
    const size_t s1 = (size_t) p->r.st[1] * 4, s2 = (size_t) p->r.st[2] * 4, s3 = (size_t) p->r.st[3] * 4, off = (size_t) p->r.offset * 4;
    switch (p->form) {
        case SET_INPLACE:    return ggml_set_inplace(ctx, in[0], in[1], s1, s2, s3, off);
        case SET_1D:         return ggml_set_1d(ctx, in[0], in[1], off);
        case SET_1D_INPLACE: return ggml_set_1d_inplace(ctx, in[0], in[1], off);
        case SET_2D:         return ggml_set_2d(ctx, in[0], in[1], s1, off);
        case SET_2D_INPLACE: return ggml_set_2d_inplace(ctx, in[0], in[1], s1, off);
        default:             return ggml_set(ctx, in[0], in[1], s1, s2, s3, off);
    }
}

/* a, then its region := b, row after row in order */
static void r_set(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    const struct acc_params * p = &((const struct set_params *) params)->r;
    memcpy(out, in[0], (size_t) ops_nel(no) * sizeof *out);
    OPS_FOR4(ne[1], i0, i1, i2, i3) out[p->offset + i0 + i1 * p->st[1] + i2 * p->st[2] + i3 * p->st[3]] = in[1][ops_at(ne[1], i0, i1, i2, i3)];
}

/* a [7, 5, 3, 2] (strides 7, 35, 105), b on every layout */
#define FWD(NAME, B, ST1, ST2, ST3, OFF)                                                                                \
    {.op = "ACC", .variant = NAME, .build = b_acc, .params = &(const struct acc_params) {{1, ST1, ST2, ST3}, OFF}, .n_in = 2, \
     .in = {{.ne = {7, 5, 3, 2}, .lo = -1, .hi = 1}, {.ne = OPS_SHAPE B, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}}, \
     .ref = r_acc, .tol = 1e-5}
/* a [7, 5, 3, 2] of TYPE, b [B] of TYPE on every layout */
#define SET(NAME, FORM, RES, TYPE, B, ST1, ST2, ST3, OFF, GRAD)                                                           \
    {.op = "SET", .variant = NAME, .build = b_set, .params = &(const struct set_params) {{{1, ST1, ST2, ST3}, OFF}, FORM},     \
     .n_in = 2, .in = {{.ne = {7, 5, 3, 2}, .lo = -9, .hi = 9, .type = TYPE}, {.ne = OPS_SHAPE B, .lo = -9, .hi = 9, .type = TYPE, \
     .layout = OPS_ANY_LAYOUT}}, .out_type = TYPE, .ref = r_set, .cmp = OPS_EXACT, .result = RES, .grad = GRAD}

static const struct ops_row rows[] = {
    FWD("[3,2,2,1] at (2,1,1,1)", (3, 2, 2, 1), 7, 35, 105, 2 + 7 + 35 + 105),
    FWD("the whole of a", (7, 5, 3, 2), 7, 35, 105, 0),
    FWD("every other row", (4, 3, 1, 1), 14, 42, 42, 1),
    FWD("the last 5 elements", (5, 1, 1, 1), 5, 5, 5, 203),
    FWD("rows and planes swapped", (2, 3, 2, 2), 35, 7, 105, 3),
    {.op = "ACC", .variant = "acc_inplace, every other row", .build = b_acc_inplace, .params = &(const struct acc_params) {{1, 14, 35, 105}, 3},
     .n_in = 2, .in = {{.ne = {7, 5, 3, 2}, .lo = -1, .hi = 1}, {.ne = {4, 2, 3, 2}, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}},
     .ref = r_acc, .tol = 1e-5, .result = OPS_INPLACE},
    {.op = "ACC", .variant = "gradient of a and b", .build = b_acc, .params = &(const struct acc_params) {{1, 7, 35, 105}, 2 + 7 + 35},
     .n_in = 2, .in = {{.ne = {7, 5, 3, 1}, .lo = -1, .hi = 1}, {.ne = {3, 2, 2, 1}, .lo = -1, .hi = 1}}, .ref = r_acc, .tol = 1e-5,
     .grad = OPS_GRAD},
    {.op = "ACC", .variant = "gradient, every other row, b transposed", .build = b_acc,
     .params = &(const struct acc_params) {{1, 14, 35, 105}, 1}, .n_in = 2,
     .in = {{.ne = {7, 5, 3, 1}, .lo = -1, .hi = 1}, {.ne = {4, 2, 2, 1}, .lo = -1, .hi = 1, .layout = OPS_TRANSPOSED}},
     .ref = r_acc, .tol = 1e-5, .grad = OPS_GRAD},
    SET("[3,2,2,1] at (2,1,1,1)", SET_4D, OPS_NEW, GGML_TYPE_F32, (3, 2, 2, 1), 7, 35, 105, 2 + 7 + 35 + 105, OPS_FORWARD_ONLY),
    SET("in place", SET_INPLACE, OPS_INPLACE, GGML_TYPE_F32, (3, 2, 2, 1), 7, 35, 105, 2 + 7 + 35 + 105, OPS_FORWARD_ONLY),
    SET("rows and planes swapped", SET_4D, OPS_NEW, GGML_TYPE_F32, (2, 3, 2, 2), 35, 7, 105, 3, OPS_FORWARD_ONLY),
    SET("rows overlap: the later wins", SET_4D, OPS_NEW, GGML_TYPE_F32, (5, 4, 1, 1), 2, 35, 105, 9, OPS_FORWARD_ONLY),
    SET("I32", SET_4D, OPS_NEW, GGML_TYPE_I32, (4, 3, 2, 1), 14, 35, 105, 1, OPS_FORWARD_ONLY),
    SET("_1d", SET_1D, OPS_NEW, GGML_TYPE_F32, (11, 1, 1, 1), 0, 0, 0, 40, OPS_FORWARD_ONLY),
    SET("_1d_inplace", SET_1D_INPLACE, OPS_INPLACE, GGML_TYPE_I32, (11, 1, 1, 1), 0, 0, 0, 199, OPS_FORWARD_ONLY),
    SET("_2d, every other row", SET_2D, OPS_NEW, GGML_TYPE_F32, (4, 2, 3, 1), 14, 35, 105, 3, OPS_FORWARD_ONLY),
    SET("_2d_inplace", SET_2D_INPLACE, OPS_INPLACE, GGML_TYPE_F32, (4, 2, 3, 1), 14, 35, 105, 3, OPS_FORWARD_ONLY),
    {.op = "SET", .variant = "gradient of a and b", .build = b_set, .params = &(const struct set_params) {{{1, 7, 35, 105}, 2 + 7 + 35}, SET_4D},
     .n_in = 2, .in = {{.ne = {7, 5, 3, 1}, .lo = -1, .hi = 1}, {.ne = {3, 2, 2, 1}, .lo = -1, .hi = 1, .layout = OPS_CONTIG | OPS_TRANSPOSED}},
     .ref = r_set, .cmp = OPS_EXACT, .grad = OPS_GRAD},
    {.op = "SET", .variant = "gradient, _2d every other row", .build = b_set, .params = &(const struct set_params) {{{1, 14, 35, 105}, 1}, SET_2D},
     .n_in = 2, .in = {{.ne = {7, 5, 3, 1}, .lo = -1, .hi = 1}, {.ne = {4, 2, 3, 1}, .lo = -1, .hi = 1}},
     .ref = r_set, .cmp = OPS_EXACT, .grad = OPS_GRAD},
    {.op = "SET", .variant = "rows overlap: b refused", .build = b_set, .params = &(const struct set_params) {{{1, 2, 35, 105}, 9}, SET_4D},
     .n_in = 2, .in = {{.ne = {7, 5, 3, 1}, .lo = -1, .hi = 1}, {.ne = {5, 4, 1, 1}, .lo = -1, .hi = 1}},
     .ref = r_set, .cmp = OPS_EXACT, .grad = OPS_REFUSED, .refusal = "overlap"},
};

const struct ops_family ops_acc = {"acc", rows, sizeof rows / sizeof rows[0], NULL, NULL};

/* acc.c -- rows of acc: b added into a strided region of a copy of a.
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

static void r_acc(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    const struct acc_params * p = params;
    memcpy(out, in[0], (size_t) ops_nel(no) * sizeof *out);
    OPS_FOR4(ne[1], i0, i1, i2, i3) out[p->offset + i0 + i1 * p->st[1] + i2 * p->st[2] + i3 * p->st[3]] += in[1][ops_at(ne[1], i0, i1, i2, i3)];
}

/* a [7, 5, 3, 2] (strides 7, 35, 105), b on every layout */
#define FWD(NAME, B, ST1, ST2, ST3, OFF)                                                                                \
    {.op = "ACC", .variant = NAME, .build = b_acc, .params = &(const struct acc_params) {{1, ST1, ST2, ST3}, OFF}, .n_in = 2, \
     .in = {{.ne = {7, 5, 3, 2}, .lo = -1, .hi = 1}, {.ne = OPS_SHAPE B, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}}, \
     .ref = r_acc, .tol = 1e-5}

static const struct ops_row rows[] = {
    FWD("[3,2,2,1] at (2,1,1,1)", (3, 2, 2, 1), 7, 35, 105, 2 + 7 + 35 + 105),
    FWD("the whole of a", (7, 5, 3, 2), 7, 35, 105, 0),
    FWD("every other row", (4, 3, 1, 1), 14, 42, 42, 1),
    FWD("the last 5 elements", (5, 1, 1, 1), 5, 5, 5, 203),
    FWD("rows and planes swapped", (2, 3, 2, 2), 35, 7, 105, 3),
    {.op = "ACC", .variant = "gradient of a and b", .build = b_acc, .params = &(const struct acc_params) {{1, 7, 35, 105}, 2 + 7 + 35},
     .n_in = 2, .in = {{.ne = {7, 5, 3, 1}, .lo = -1, .hi = 1}, {.ne = {3, 2, 2, 1}, .lo = -1, .hi = 1}}, .ref = r_acc, .tol = 1e-5,
     .grad = OPS_GRAD},
    {.op = "ACC", .variant = "gradient, every other row, b transposed", .build = b_acc,
     .params = &(const struct acc_params) {{1, 14, 35, 105}, 1}, .n_in = 2,
     .in = {{.ne = {7, 5, 3, 1}, .lo = -1, .hi = 1}, {.ne = {4, 2, 2, 1}, .lo = -1, .hi = 1, .layout = OPS_TRANSPOSED}},
     .ref = r_acc, .tol = 1e-5, .grad = OPS_GRAD},
};

const struct ops_family ops_acc = {"acc", rows, sizeof rows / sizeof rows[0], NULL};

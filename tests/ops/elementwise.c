/* elementwise.c -- rows of the element-wise ops. */
#include "ops/harness.h"

static struct ggml_tensor * b_add(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    (void) p;
    return ggml_add(ctx, in[0], in[1]);
}
static struct ggml_tensor * b_sqr(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    (void) p;
    return ggml_sqr(ctx, in[0]);
}

/* b broadcast over a: b's index is a's modulo b's shape */
static void r_add(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) p;
    for (int64_t i3 = 0; i3 < no[3]; i3++) for (int64_t i2 = 0; i2 < no[2]; i2++)
    for (int64_t i1 = 0; i1 < no[1]; i1++) for (int64_t i0 = 0; i0 < no[0]; i0++) {
        const int64_t ia = i0 + no[0] * (i1 + no[1] * (i2 + no[2] * i3));
        const int64_t ib = i0 % ne[1][0] + ne[1][0] * (i1 % ne[1][1] + ne[1][1] * (i2 % ne[1][2] + ne[1][2] * (i3 % ne[1][3])));
        out[ia] = in[0][ia] + in[1][ib];
    }
}
static void r_sqr(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) ne; (void) p;
    for (int64_t i = 0; i < no[0] * no[1] * no[2] * no[3]; i++) out[i] = in[0][i] * in[0][i];
}

static const struct ops_row rows[] = {
    {"ADD", "same shape", b_add, NULL, 2, {{{5, 3, 2, 2}, -1, 1}, {{5, 3, 2, 2}, -1, 1}}, r_add, 1e-6, true, 1e-2, 1e-3, 1e-2},
    {"ADD", "broadcast [5,1,2,1]", b_add, NULL, 2, {{{5, 3, 2, 2}, -1, 1}, {{5, 1, 2, 1}, -1, 1}}, r_add, 1e-6, true, 1e-2, 1e-3, 1e-2},
    {"SQR", "[5,3,2,2]", b_sqr, NULL, 1, {{{5, 3, 2, 2}, -1, 1}}, r_sqr, 1e-6, true, 1e-2, 1e-3, 1e-2},
    {"SQR", "odd shape", b_sqr, NULL, 1, {{{37, 3, 2, 1}, -1, 1}}, r_sqr, 1e-6, true, 1e-2, 1e-3, 1e-2},
};

const struct ops_family ops_elementwise = {"elementwise", rows, sizeof rows / sizeof rows[0]};

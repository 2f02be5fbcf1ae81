/* fill.c -- rows of fill (a constant shaped like a, F32 or F16; in place
 * too) and arange (start + step * i, F32).
 *
 * fill is exact; its gradient is zero (finite differences see none).
 * arange: each element is one float multiply-add, compared element-wise
 * within 2 float ulps of the float64 value; the count is upstream's
 * ceil((stop - start) / step) in float. */
#include "ops/harness.h"

#include <math.h>

struct fill_case { float c; bool inplace; };
struct arange_case { float start, stop, step; };

static struct ggml_tensor * b_fill(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct fill_case * c = p;
    return (c->inplace ? ggml_fill_inplace : ggml_fill)(ctx, in[0], c->c);
}
static struct ggml_tensor * b_arange(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    (void) in;
    const struct arange_case * c = p;
    return ggml_arange(ctx, c->start, c->stop, c->step);
}

static void r_fill(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) in; (void) ne;
    for (int64_t i = 0; i < ops_nel(no); i++) out[i] = ((const struct fill_case *) p)->c;
}
static void s_arange(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    (void) ne;
    const struct arange_case * c = p;
    no[0] = (int64_t) ceilf((c->stop - c->start) / c->step); no[1] = no[2] = no[3] = 1;
}
static void r_arange(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) in; (void) ne;
    const struct arange_case * c = p;
    for (int64_t i = 0; i < no[0]; i++) out[i] = (double) c->start + (double) c->step * (double) i;
}

static const struct fill_case f_pi = {3.25f, false}, f_neg = {-0.1f, false}, f_ip = {7.5f, true}, f_zero = {0.0f, false};
static const struct arange_case a_int = {0, 10, 1}, a_frac = {-1.5f, 2.2f, 0.25f}, a_big = {100, 1100, 3}, a_one = {2, 2.5f, 1};

#define FILL(NAME, CASE, TYPE, LAY, RES, GRAD)                                                                              \
    {.op = "FILL", .variant = NAME, .build = b_fill, .params = &CASE, .n_in = 1,                                          \
     .in = {{.ne = {7, 5, 3, 2}, .lo = -2, .hi = 2, .type = TYPE, .layout = LAY}}, .out_type = TYPE, .ref = r_fill,      \
     .cmp = OPS_EXACT, .result = RES, .grad = GRAD}
#define ARANGE(NAME, CASE)                                                                                                  \
    {.op = "ARANGE", .variant = NAME, .build = b_arange, .params = &CASE, .n_in = 0, .shape = s_arange, .ref = r_arange,   \
     .cmp = OPS_ELEMENTS, .tol = 2.4e-7}

static const struct ops_row rows[] = {
    FILL("F32, any layout", f_pi, GGML_TYPE_F32, OPS_ANY_LAYOUT, OPS_NEW, OPS_FORWARD_ONLY),
    FILL("F16 (-0.1 rounds to its half)", f_neg, GGML_TYPE_F16, 0, OPS_NEW, OPS_FORWARD_ONLY),
    FILL("in place", f_ip, GGML_TYPE_F32, 0, OPS_INPLACE, OPS_FORWARD_ONLY),
    FILL("F16 in place", f_ip, GGML_TYPE_F16, 0, OPS_INPLACE, OPS_FORWARD_ONLY),
    FILL("gradient: zero", f_zero, GGML_TYPE_F32, OPS_CONTIG | OPS_TRANSPOSED, OPS_NEW, OPS_GRAD),
    ARANGE("0..10 step 1", a_int),
    ARANGE("-1.5..2.2 step 0.25", a_frac),
    ARANGE("100..1100 step 3: 334 over threads", a_big),
    ARANGE("one element", a_one),
};

const struct ops_family ops_fill = {"fill", rows, sizeof rows / sizeof rows[0], NULL, NULL};

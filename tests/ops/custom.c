/* custom.c -- rows of the custom ops: map_custom1/2/3 (and _inplace),
 * custom_4d and custom_inplace, each running a function of this file that
 * reads its sources through their strides (every layout), splits the rows by
 * (ith, nth), and writes NaN where the task count it was given is wrong (so
 * n_tasks reaching it shows in the values). The float64 references compute
 * the same formulas; userdata carries the constant. Exact up to one float
 * rounding per operation (2-norm 1e-6). Autodiff refuses every one. */
#include "ops/harness.h"

#include <math.h>

static const float k_scale = 2.5f;  /* the functions' userdata */

/* element (i0..i3) of t as F32 */
static float at(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return *(const float *) ((const char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3]);
}

/* rows of dst for task ith of nth; y = f(row, i0) written through dst's strides */
#define FOR_MY_ELEMENTS(dst, ith, nth, i0, i1, i2, i3)                                                              \
    for (int64_t r_ = 0, nr_ = ggml_nrows(dst); r_ < nr_; r_++)                                                        \
        if (r_ % (nth) == (ith))                                                                                       \
            for (int64_t i1 = r_ % (dst)->ne[1], i2 = r_ / (dst)->ne[1] % (dst)->ne[2], i3 = r_ / (dst)->ne[1] / (dst)->ne[2], \
                         i0 = 0; i0 < (dst)->ne[0]; i0++)
#define OUT(dst, i0, i1, i2, i3) (*(float *) ((char *) (dst)->data + i0 * (dst)->nb[0] + i1 * (dst)->nb[1] + i2 * (dst)->nb[2] + i3 * (dst)->nb[3]))

/* y = s a + 1, s = *userdata; 2 tasks asked: nth <= 2 */
static void f1(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata) {
    const float s = *(const float *) userdata;
    FOR_MY_ELEMENTS(dst, ith, nth, i0, i1, i2, i3) OUT(dst, i0, i1, i2, i3) = nth <= 2 ? s * at(a, i0, i1, i2, i3) + 1.0f : NAN;
}
/* y = a - 3 b (every thread) */
static void f2(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith, int nth, void * userdata) {
    (void) userdata;
    FOR_MY_ELEMENTS(dst, ith, nth, i0, i1, i2, i3) OUT(dst, i0, i1, i2, i3) = at(a, i0, i1, i2, i3) - 3.0f * at(b, i0, i1, i2, i3);
}
/* y = a b + s c on one task (ith 0 of 1) */
static void f3(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, const struct ggml_tensor * c, int ith, int nth,
               void * userdata) {
    const float s = *(const float *) userdata;
    FOR_MY_ELEMENTS(dst, ith, nth, i0, i1, i2, i3)
        OUT(dst, i0, i1, i2, i3) = ith == 0 && nth == 1 ? at(a, i0, i1, i2, i3) * at(b, i0, i1, i2, i3) + s * at(c, i0, i1, i2, i3) : NAN;
}
/* y = sum_k (k + 1) src[k] over the sources there are (custom_4d: all args; custom_inplace: a and the args) */
static void f4(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    FOR_MY_ELEMENTS(dst, ith, nth, i0, i1, i2, i3) {
        float y = 0.0f;
        for (int k = 0; k < GGML_MAX_SRC && dst->src[k]; k++) y += (float) (k + 1) * at(dst->src[k], i0, i1, i2, i3);
        OUT(dst, i0, i1, i2, i3) = y;
    }
}

enum cu_form { CU_MAP1, CU_MAP2, CU_MAP3, CU_4D, CU_INPLACE };
struct cu_params { enum cu_form form; bool inplace; };

static struct ggml_tensor * b_custom(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct cu_params * p = params;
    void * s = (void *) &k_scale;
    switch (p->form) {
        case CU_MAP1: return (p->inplace ? ggml_map_custom1_inplace : ggml_map_custom1)(ctx, in[0], f1, 2, s);
        case CU_MAP2: return (p->inplace ? ggml_map_custom2_inplace : ggml_map_custom2)(ctx, in[0], in[1], f2, GGML_N_TASKS_MAX, NULL);
        case CU_MAP3: return (p->inplace ? ggml_map_custom3_inplace : ggml_map_custom3)(ctx, in[0], in[1], in[2], f3, 1, s);
        case CU_4D:   return ggml_custom_4d(ctx, GGML_TYPE_F32, in[0]->ne[0], in[0]->ne[1], in[0]->ne[2], in[0]->ne[3], in, 3, f4, GGML_N_TASKS_MAX, NULL);
        default:      return ggml_custom_inplace(ctx, in[0], in + 1, 2, f4, 3, NULL);
    }
}

static void r_custom(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) ne;
    const struct cu_params * p = params;
    for (int64_t i = 0; i < ops_nel(no); i++) {
        switch (p->form) {
            case CU_MAP1: out[i] = k_scale * in[0][i] + 1; break;
            case CU_MAP2: out[i] = in[0][i] - 3 * in[1][i]; break;
            case CU_MAP3: out[i] = in[0][i] * in[1][i] + k_scale * in[2][i]; break;
            default:      out[i] = in[0][i] + 2 * in[1][i] + 3 * in[2][i]; break;
        }
    }
}

static const struct cu_params p_map1 = {CU_MAP1, false}, p_map1_in = {CU_MAP1, true}, p_map2 = {CU_MAP2, false}, p_map2_in = {CU_MAP2, true},
                              p_map3 = {CU_MAP3, false}, p_map3_in = {CU_MAP3, true}, p_4d = {CU_4D, false}, p_inplace = {CU_INPLACE, true};

#define IN_(S, LAY) {.ne = OPS_SHAPE S, .lo = -2, .hi = 2, .layout = LAY}
/* N inputs of shape S (the first on layouts LAY0, the others any); RESULT: new or written over input 0 */
#define CU(OP, NAME, P, N, S, LAY0, RESULT)                                                                             \
    {.op = OP, .variant = NAME, .build = b_custom, .params = &P, .n_in = N,                                           \
     .in = {IN_(S, LAY0), IN_(S, OPS_ANY_LAYOUT), IN_(S, OPS_CONTIG | OPS_TRANSPOSED)}, .ref = r_custom, .tol = 1e-6, \
     .result = RESULT, .grad = OPS_REFUSED, .refusal = "no backward rule"}

static const struct ops_row rows[] = {
    CU("MAP_CUSTOM1", "map_custom1, 2 tasks", p_map1, 1, (7, 5, 3, 2), OPS_ANY_LAYOUT, OPS_NEW),
    CU("MAP_CUSTOM1", "map_custom1_inplace", p_map1_in, 1, (7, 5, 3, 2), OPS_CONTIG | OPS_TRANSPOSED, OPS_INPLACE),
    CU("MAP_CUSTOM2", "map_custom2, every thread", p_map2, 2, (7, 5, 3, 2), OPS_ANY_LAYOUT, OPS_NEW),
    CU("MAP_CUSTOM2", "map_custom2_inplace", p_map2_in, 2, (6, 4, 1, 3), OPS_CONTIG, OPS_INPLACE),
    CU("MAP_CUSTOM3", "map_custom3, 1 task", p_map3, 3, (7, 5, 3, 2), OPS_CONTIG | OPS_PERMUTED, OPS_NEW),
    CU("MAP_CUSTOM3", "map_custom3_inplace", p_map3_in, 3, (5, 9, 1, 1), OPS_CONTIG, OPS_INPLACE),
    CU("CUSTOM", "custom_4d of 3 args", p_4d, 3, (7, 5, 3, 2), OPS_ANY_LAYOUT, OPS_NEW),
    CU("CUSTOM", "custom_inplace, a and 2 args, 3 tasks", p_inplace, 3, (7, 5, 3, 2), OPS_CONTIG | OPS_TRANSPOSED, OPS_INPLACE),
};

/* what the constructors refuse: no function, a task count below 1 (other
 * than GGML_N_TASKS_MAX), more sources than a node holds, a NULL source */
static void check_refusals(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor * args[GGML_MAX_SRC + 1];
    for (int i = 0; i <= GGML_MAX_SRC; i++) args[i] = x;
    float s = k_scale;
    OPS_EXPECT_REFUSED(ggml_map_custom1(ctx, x, NULL, 1, NULL), "map_custom1 without a function");
    OPS_EXPECT_REFUSED(ggml_map_custom1(ctx, x, f1, 0, &s), "map_custom1 with 0 tasks");
    OPS_EXPECT_REFUSED(ggml_map_custom1(ctx, x, f1, -2, &s), "map_custom1 with -2 tasks");
    OPS_EXPECT_REFUSED(ggml_map_custom1(ctx, NULL, f1, 1, &s), "map_custom1 of NULL");
    OPS_EXPECT_REFUSED(ggml_map_custom2(ctx, x, NULL, NULL, 1, NULL), "map_custom2 without a function");
    OPS_EXPECT_REFUSED(ggml_map_custom3(ctx, x, x, NULL, NULL, 1, NULL), "map_custom3 without a function");
    OPS_EXPECT_REFUSED(ggml_custom_4d(ctx, GGML_TYPE_F32, 4, 3, 1, 1, args, GGML_MAX_SRC + 1, f4, 1, NULL), "custom_4d with 11 args");
    OPS_EXPECT_REFUSED(ggml_custom_4d(ctx, GGML_TYPE_F32, 4, 3, 1, 1, NULL, 2, f4, 1, NULL), "custom_4d with NULL args");
    OPS_EXPECT_REFUSED(ggml_custom_4d(ctx, GGML_TYPE_F32, -4, 3, 1, 1, args, 1, f4, 1, NULL), "custom_4d with a negative size");
    OPS_EXPECT_REFUSED(ggml_custom_4d(ctx, (enum ggml_type) 1000, 4, 3, 1, 1, args, 1, f4, 1, NULL), "custom_4d of an unknown type");
    OPS_EXPECT_REFUSED(ggml_custom_inplace(ctx, x, args, GGML_MAX_SRC, f4, 1, NULL), "custom_inplace with a and 10 args");
    struct ggml_tensor * some[2] = {x, NULL};
    OPS_EXPECT_REFUSED(ggml_custom_inplace(ctx, x, some, 2, f4, 1, NULL), "custom_inplace with a NULL arg");
    CHECK(ggml_custom_4d(ctx, GGML_TYPE_I32, 4, 3, 1, 1, NULL, 0, f4, GGML_N_TASKS_MAX, NULL) != NULL, "custom_4d without args");
    ggml_free(ctx);
}

const struct ops_family ops_custom = {"custom", rows, sizeof rows / sizeof rows[0], NULL, check_refusals};

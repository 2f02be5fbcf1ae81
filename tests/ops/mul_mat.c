/* mul_mat.c -- rows of mul_mat (c[i, j] = sum_k a[k, i] b[k, j]) and
 * out_prod (c[i, j] = sum_k a[i, k] b[j, k]), a's planes broadcast over b's,
 * and mul_mat_id (each (e, t) through the expert ids[e, t]; random ids repeat,
 * so the gradient of as sums several pairs into one expert).
 *
 * Sizes past one panel (64 rows with AVX-512), one reduction block (256),
 * several column groups and partial last groups, on every operand layout.
 * Forward tolerance: relative 2-norm error 1e-5 (sums of <= 300 products of
 * magnitude <= 1 in float, ~1e-7 relative; a wrong index or plane is off by
 * far more). At GGML_PREC_BF16 the reference rounds the operands to bf16
 * where ggml_cpu_bf16_name() says the CPU does (the products of two bf16 are
 * exact, the sums FP32 as above: the same 1e-5; operands left unrounded, or
 * truncated instead of rounded, are off by ~1e-3). Gradients: the harness defaults. */
#include "ops/harness.h"

#include "ggml-cpu.h"

#include <string.h>

/* self: the one input on both sides; bf16: at GGML_PREC_BF16 */
struct mm_params { bool out_prod, self, bf16; };
static const struct mm_params p_mm = {false, false, false}, p_mm_self = {false, true, false}, p_op = {true, false, false},
                              p_op_self = {true, true, false}, p_mm_bf16 = {false, false, true}, p_op_bf16 = {true, false, true};

static struct ggml_tensor * b_mm(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    const struct mm_params * p = params;
    struct ggml_tensor * b = p->self ? in[0] : in[1];
    struct ggml_tensor * y = p->out_prod ? ggml_out_prod(ctx, in[0], b) : ggml_mul_mat(ctx, in[0], b);
    if (y && p->bf16) ggml_mul_mat_set_prec(y, GGML_PREC_BF16);
    return y;
}

/* mul_mat [a1, b1, b2, b3], out_prod [a0, b0, b2, b3] */
static void s_mm(const int64_t (*ne)[4], const void * params, int64_t no[4]) {
    const struct mm_params * p = params;
    const int64_t * na = ne[0], * nb = p->self ? ne[0] : ne[1];
    no[0] = p->out_prod ? na[0] : na[1];
    no[1] = p->out_prod ? nb[0] : nb[1];
    no[2] = nb[2];
    no[3] = nb[3];
}

/* a's plane for b's plane (i2, i3) is (i2 / r2, i3 / r3) */
static void r_mm(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    const struct mm_params * p = params;
    const double * a = in[0], * b = p->self ? in[0] : in[1];
    const int64_t * na = ne[0], * nb = p->self ? ne[0] : ne[1];
    const int64_t r2 = nb[2] / na[2], r3 = nb[3] / na[3], K = p->out_prod ? na[1] : na[0];
    /* at GGML_PREC_BF16 the operands are rounded where the CPU multiplies bf16 */
    const bool round = p->bf16 && strcmp(ggml_cpu_bf16_name(), "f32") != 0;
    OPS_FOR4(no, i, j, i2, i3) {
        double s = 0;
        for (int64_t k = 0; k < K; k++) {
            const double x = p->out_prod ? a[ops_at(na, i, k, i2 / r2, i3 / r3)] : a[ops_at(na, k, i, i2 / r2, i3 / r3)];
            const double y = p->out_prod ? b[ops_at(nb, j, k, i2, i3)] : b[ops_at(nb, k, j, i2, i3)];
            s += round ? ops_round_bf16(x) * ops_round_bf16(y) : x * y;
        }
        out[ops_at(no, i, j, i2, i3)] = s;
    }
}

#define FWD(OP, P, A, B)                                                                                                \
    {.op = OP, .variant = "a " #A " b " #B, .build = b_mm, .params = &P, .n_in = 2,                                    \
     .in = {{.ne = OPS_SHAPE A, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}, {.ne = OPS_SHAPE B, .lo = -1, .hi = 1, .layout = OPS_ANY_LAYOUT}}, \
     .shape = s_mm, .ref = r_mm, .tol = 1e-5}
/* one dot product as the whole result: inputs in [0.25, 1], since a 2-norm
 * relative to one value that cancels to near 0 bounds nothing about float sums */
#define DOT(OP, P, A, B)                                                                                                \
    {.op = OP, .variant = "a " #A " b " #B, .build = b_mm, .params = &P, .n_in = 2,                                    \
     .in = {{.ne = OPS_SHAPE A, .lo = 0.25, .hi = 1, .layout = OPS_ANY_LAYOUT}, {.ne = OPS_SHAPE B, .lo = 0.25, .hi = 1, .layout = OPS_ANY_LAYOUT}}, \
     .shape = s_mm, .ref = r_mm, .tol = 1e-5}
/* a and b stored as TA, TB (F16, BF16: the reference reads the stored values) */
#define FWDT(OP, P, A, TA, B, TB)                                                                                       \
    {.op = OP, .variant = "a " #A " " #TA " b " #B " " #TB, .build = b_mm, .params = &P, .n_in = 2,                      \
     .in = {{.ne = OPS_SHAPE A, .lo = -1, .hi = 1, .type = TA, .layout = OPS_ANY_LAYOUT},                               \
            {.ne = OPS_SHAPE B, .lo = -1, .hi = 1, .type = TB, .layout = OPS_ANY_LAYOUT}},                              \
     .shape = s_mm, .ref = r_mm, .tol = 1e-5}
/* the gradient of the F32 operand, the other stored as F16 or BF16 (a constant) */
#define GRADT(OP_, P, NAME, A, TA, B, TB, LB)                                                                            \
    {.op = OP_, .variant = NAME, .build = b_mm, .params = &P, .n_in = 2,                                               \
     .in = {{.ne = OPS_SHAPE A, .lo = -1, .hi = 1, .type = TA}, {.ne = OPS_SHAPE B, .lo = -1, .hi = 1, .type = TB, .layout = LB}}, \
     .shape = s_mm, .ref = r_mm, .tol = 1e-5, .grad = OPS_GRAD}
/* mul_mat of K, M, N with a's planes (a2, a3) and b's (b2, b3) */
#define MM(K, M, N, A2, A3, B2, B3) FWD("MUL_MAT", p_mm, (K, M, A2, A3), (K, N, B2, B3))
#define OP(M, N, K, A2, A3, B2, B3) FWD("OUT_PROD", p_op, (M, K, A2, A3), (N, K, B2, B3))
#define GRAD2(OP_, P, NAME, A, LA, B, LB)                                                                              \
    {.op = OP_, .variant = NAME, .build = b_mm, .params = &P, .n_in = 2,                                               \
     .in = {{.ne = OPS_SHAPE A, .lo = -1, .hi = 1, .layout = LA}, {.ne = OPS_SHAPE B, .lo = -1, .hi = 1, .layout = LB}}, \
     .shape = s_mm, .ref = r_mm, .tol = 1e-5, .grad = OPS_GRAD}
#define GRAD1(OP_, P, NAME, A)                                                                                          \
    {.op = OP_, .variant = NAME, .build = b_mm, .params = &P, .n_in = 1, .in = {{.ne = OPS_SHAPE A, .lo = -1, .hi = 1}}, \
     .shape = s_mm, .ref = r_mm, .tol = 1e-5, .grad = OPS_GRAD}
/* mul_mat_id: out[m, e, t] = sum_k as[k, m, ids[e, t]] b[k, e % n_b, t] */
static struct ggml_tensor * b_mm_id(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params) {
    (void) params;
    return ggml_mul_mat_id(ctx, in[0], in[1], in[2]);
}
static void s_mm_id(const int64_t (*ne)[4], const void * params, int64_t no[4]) {
    (void) params;
    no[0] = ne[0][1]; no[1] = ne[2][0]; no[2] = ne[1][2]; no[3] = 1;
}
static void r_mm_id(const double * const * in, const int64_t (*ne)[4], const void * params, double * out, const int64_t no[4]) {
    (void) params;
    OPS_FOR4(no, m, e, t, i3) {
        const int64_t x = (int64_t) in[2][ops_at(ne[2], e, t, 0, 0)];
        double s = 0;
        for (int64_t k = 0; k < ne[0][0]; k++) s += in[0][ops_at(ne[0], k, m, x, 0)] * in[1][ops_at(ne[1], k, e % ne[1][1], t, 0)];
        out[ops_at(no, m, e, t, i3)] = s;
    }
}
#define MMID(NAME, AS, N_EXP, B, IDS, LAY, GRAD) MMIDT(NAME, AS, GGML_TYPE_F32, N_EXP, B, GGML_TYPE_F32, IDS, LAY, GRAD)
#define MMIDT(NAME, AS, TAS, N_EXP, B, TB, IDS, LAY, GRAD)                                                             \
    {.op = "MUL_MAT_ID", .variant = NAME, .build = b_mm_id, .n_in = 3,                                                  \
     .in = {{.ne = OPS_SHAPE AS, .lo = -1, .hi = 1, .type = TAS, .layout = LAY},                                        \
            {.ne = OPS_SHAPE B, .lo = -1, .hi = 1, .type = TB, .layout = LAY},                                          \
            {.ne = OPS_SHAPE IDS, .lo = 0, .hi = (N_EXP) - 1, .type = GGML_TYPE_I32, .fixed = true}},                   \
     .shape = s_mm_id, .ref = r_mm_id, .tol = 1e-5, .grad = GRAD}

static const struct ops_row rows[] = {
    MM(13, 7, 5, 1, 1, 1, 1), MM(1, 1, 1, 1, 1, 1, 1), MM(1, 4, 3, 1, 1, 1, 1), DOT("MUL_MAT", p_mm, (17, 1, 1, 1), (17, 1, 1, 1)),
    MM(70, 3, 2, 1, 1, 1, 1), MM(33, 6, 7, 3, 1, 3, 2),
    MM(9, 4, 3, 2, 1, 6, 3),  /* a broadcast over dims 2 (groups of 3) and 3 */
    MM(5, 3, 2, 2, 3, 4, 6),  /* groups of 2 in both dims */
    MM(6, 5, 4, 1, 2, 5, 2),
    MM(300, 130, 103, 1, 1, 1, 1), MM(257, 65, 13, 1, 1, 2, 1),  /* past a panel, a reduction block, a column group */
    OP(7, 5, 13, 1, 1, 1, 1), OP(1, 1, 1, 1, 1, 1, 1), OP(4, 3, 1, 1, 1, 1, 1), DOT("OUT_PROD", p_op, (1, 17, 1, 1), (1, 17, 1, 1)),
    OP(3, 2, 70, 1, 1, 1, 1), OP(6, 7, 33, 3, 1, 3, 2),
    OP(4, 3, 9, 2, 1, 6, 3),  /* a broadcast over dims 2 (groups of 3) and 3 */
    OP(3, 2, 5, 2, 3, 4, 6),  /* groups of 2 in both dims */
    OP(130, 103, 300, 1, 1, 1, 1), OP(65, 13, 257, 1, 1, 2, 1), OP(128, 82, 96, 1, 1, 1, 1),
    /* GGML_PREC_BF16: blocks of 32 x 32, K padded to 32, every packing path (layouts), broadcast planes */
    FWD("MUL_MAT", p_mm_bf16, (13, 7, 1, 1), (13, 5, 1, 1)), FWD("MUL_MAT", p_mm_bf16, (64, 32, 1, 1), (64, 32, 1, 1)),
    FWD("MUL_MAT", p_mm_bf16, (70, 33, 1, 1), (70, 47, 1, 1)), FWD("MUL_MAT", p_mm_bf16, (300, 130, 1, 1), (300, 103, 1, 1)),
    FWD("MUL_MAT", p_mm_bf16, (9, 4, 2, 1), (9, 3, 6, 3)), DOT("MUL_MAT", p_mm_bf16, (17, 1, 1, 1), (17, 1, 1, 1)),
    FWD("MUL_MAT", p_mm_bf16, (0, 5, 1, 1), (0, 3, 1, 1)), FWD("OUT_PROD", p_op_bf16, (5, 0, 1, 1), (3, 0, 1, 1)),  /* K = 0: zeros */
    FWD("OUT_PROD", p_op_bf16, (7, 13, 1, 1), (5, 13, 1, 1)), FWD("OUT_PROD", p_op_bf16, (32, 64, 1, 1), (32, 64, 1, 1)),
    FWD("OUT_PROD", p_op_bf16, (33, 70, 1, 1), (47, 70, 1, 1)), FWD("OUT_PROD", p_op_bf16, (130, 300, 1, 1), (103, 300, 1, 1)),
    FWD("OUT_PROD", p_op_bf16, (4, 9, 2, 1), (3, 9, 6, 3)),
    GRAD2("MUL_MAT", p_mm, "gradient", (6, 4, 1, 1), 0, (6, 5, 1, 1), 0),
    GRAD2("MUL_MAT", p_mm, "gradient, K=1", (1, 4, 1, 1), 0, (1, 3, 1, 1), 0),
    GRAD2("MUL_MAT", p_mm, "gradient, batched", (5, 3, 2, 2), 0, (5, 4, 2, 2), 0),
    GRAD2("MUL_MAT", p_mm, "gradient, broadcast [4,3,2,1] x [4,2,6,3]", (4, 3, 2, 1), 0, (4, 2, 6, 3), 0),
    GRAD2("MUL_MAT", p_mm, "gradient, broadcast [4,3,2,3] x [4,2,4,6]", (4, 3, 2, 3), 0, (4, 2, 4, 6), 0),
    GRAD2("MUL_MAT", p_mm, "gradient, broadcast dim 3 [3,2,1,1] x [3,2,1,4]", (3, 2, 1, 1), 0, (3, 2, 1, 4), 0),
    GRAD2("MUL_MAT", p_mm, "gradient, a transposed", (6, 4, 1, 1), OPS_TRANSPOSED, (6, 5, 1, 1), 0),
    GRAD2("MUL_MAT", p_mm, "gradient, b transposed, broadcast", (6, 4, 1, 1), 0, (6, 5, 3, 1), OPS_TRANSPOSED),
    GRAD1("MUL_MAT", p_mm_self, "gradient, x^T x", (5, 4, 1, 1)),
    GRAD2("MUL_MAT", p_mm, "gradient, past one panel", (5, 70, 1, 1), 0, (5, 8, 1, 1), 0),
    GRAD2("OUT_PROD", p_op, "gradient", (4, 6, 1, 1), 0, (5, 6, 1, 1), 0),
    GRAD2("OUT_PROD", p_op, "gradient, n=1", (4, 1, 1, 1), 0, (3, 1, 1, 1), 0),
    GRAD2("OUT_PROD", p_op, "gradient, batched", (3, 5, 2, 2), 0, (4, 5, 2, 2), 0),
    GRAD2("OUT_PROD", p_op, "gradient, broadcast [3,4,2,1] x [2,4,6,3]", (3, 4, 2, 1), 0, (2, 4, 6, 3), 0),
    GRAD2("OUT_PROD", p_op, "gradient, broadcast [3,4,2,3] x [2,4,4,6]", (3, 4, 2, 3), 0, (2, 4, 4, 6), 0),
    GRAD2("OUT_PROD", p_op, "gradient, b transposed, broadcast", (4, 6, 1, 1), 0, (5, 6, 3, 1), OPS_TRANSPOSED),
    GRAD2("OUT_PROD", p_op, "gradient, past one panel", (70, 5, 1, 1), 0, (8, 5, 1, 1), 0),
    GRAD1("OUT_PROD", p_op_self, "gradient, x x^T", (5, 4, 1, 1)),
    MMID("as [9,5,4] b [9,3,6] ids [3,6]", (9, 5, 4, 1), 4, (9, 3, 6, 1), (3, 6, 1, 1), OPS_ANY_LAYOUT, OPS_FORWARD_ONLY),
    MMID("b broadcast: [9,1,6], ids [4,6]", (9, 5, 4, 1), 4, (9, 1, 6, 1), (4, 6, 1, 1), OPS_ANY_LAYOUT, OPS_FORWARD_ONLY),
    MMID("b [9,2,5], ids [4,5]", (9, 5, 4, 1), 4, (9, 2, 5, 1), (4, 5, 1, 1), 0, OPS_FORWARD_ONLY),
    MMID("as [70,20,8] b [70,2,5] ids [4,5]", (70, 20, 8, 1), 8, (70, 2, 5, 1), (4, 5, 1, 1), 0, OPS_FORWARD_ONLY),
    MMID("K = 0: zeros", (0, 3, 4, 1), 4, (0, 2, 3, 1), (2, 3, 1, 1), 0, OPS_FORWARD_ONLY),
    MMID("gradient of as and b", (5, 3, 4, 1), 4, (5, 2, 3, 1), (2, 3, 1, 1), OPS_CONTIG | OPS_TRANSPOSED, OPS_GRAD),
    MMID("gradient, b broadcast [5,1,3], ids [3,3]", (5, 3, 4, 1), 4, (5, 1, 3, 1), (3, 3, 1, 1), 0, OPS_GRAD),
    MMID("gradient, b [4,2,3], ids [4,3]", (4, 3, 3, 1), 3, (4, 2, 3, 1), (4, 3, 1, 1), 0, OPS_GRAD),
    /* activations stored as F16 or BF16 (converted once per node), with F32 and F16 weights */
    FWDT("MUL_MAT", p_mm, (13, 7, 1, 1), GGML_TYPE_F32, (13, 5, 1, 1), GGML_TYPE_F16),
    FWDT("MUL_MAT", p_mm, (33, 6, 3, 1), GGML_TYPE_F32, (33, 7, 3, 2), GGML_TYPE_BF16),
    FWDT("MUL_MAT", p_mm, (9, 4, 2, 1), GGML_TYPE_F16, (9, 3, 6, 3), GGML_TYPE_F16),
    FWDT("MUL_MAT", p_mm, (300, 130, 1, 1), GGML_TYPE_F32, (300, 103, 1, 1), GGML_TYPE_F16),
    FWDT("MUL_MAT", p_mm, (70, 33, 1, 1), GGML_TYPE_BF16, (70, 5, 1, 1), GGML_TYPE_BF16),
    FWDT("OUT_PROD", p_op, (7, 13, 1, 1), GGML_TYPE_F32, (5, 13, 1, 1), GGML_TYPE_F16),
    FWDT("OUT_PROD", p_op, (6, 33, 3, 1), GGML_TYPE_F32, (7, 33, 3, 2), GGML_TYPE_BF16),
    FWDT("OUT_PROD", p_op, (4, 9, 2, 1), GGML_TYPE_F16, (3, 9, 6, 3), GGML_TYPE_F16),
    FWDT("OUT_PROD", p_op, (130, 300, 1, 1), GGML_TYPE_F32, (103, 300, 1, 1), GGML_TYPE_F16),
    GRADT("MUL_MAT", p_mm, "gradient of a, b F16", (6, 4, 1, 1), GGML_TYPE_F32, (6, 5, 1, 1), GGML_TYPE_F16, OPS_CONTIG | OPS_TRANSPOSED),
    GRADT("MUL_MAT", p_mm, "gradient of a, b BF16, broadcast", (4, 3, 2, 1), GGML_TYPE_F32, (4, 2, 6, 3), GGML_TYPE_BF16, 0),
    GRADT("MUL_MAT", p_mm, "gradient of b, a F16", (6, 4, 1, 1), GGML_TYPE_F16, (6, 5, 3, 1), GGML_TYPE_F32, 0),
    GRADT("OUT_PROD", p_op, "gradient of a, b F16", (4, 6, 1, 1), GGML_TYPE_F32, (5, 6, 1, 1), GGML_TYPE_F16, OPS_CONTIG | OPS_TRANSPOSED),
    GRADT("OUT_PROD", p_op, "gradient of a, b BF16, broadcast", (3, 4, 2, 1), GGML_TYPE_F32, (2, 4, 6, 3), GGML_TYPE_BF16, 0),
    GRADT("OUT_PROD", p_op, "gradient of b, a F16, broadcast", (3, 4, 2, 1), GGML_TYPE_F16, (2, 4, 6, 3), GGML_TYPE_F32, 0),
    MMIDT("as F16", (9, 5, 4, 1), GGML_TYPE_F16, 4, (9, 3, 6, 1), GGML_TYPE_F32, (3, 6, 1, 1), OPS_ANY_LAYOUT, OPS_FORWARD_ONLY),
    MMIDT("as BF16, b F16", (9, 5, 4, 1), GGML_TYPE_BF16, 4, (9, 1, 6, 1), GGML_TYPE_F16, (4, 6, 1, 1), OPS_ANY_LAYOUT, OPS_FORWARD_ONLY),
    MMIDT("gradient of b, as F16", (5, 3, 4, 1), GGML_TYPE_F16, 4, (5, 2, 3, 1), GGML_TYPE_F32, (2, 3, 1, 1), 0, OPS_GRAD),
    MMIDT("gradient of as, b BF16 broadcast", (5, 3, 4, 1), GGML_TYPE_F32, 4, (5, 1, 3, 1), GGML_TYPE_BF16, (3, 3, 1, 1), 0, OPS_GRAD),
    {.op = "MUL_MAT_ID", .variant = "ids a parameter", .build = b_mm_id, .n_in = 3,
     .in = {{.ne = {5, 3, 4, 1}, .lo = -1, .hi = 1, .fixed = true}, {.ne = {5, 2, 3, 1}, .lo = -1, .hi = 1, .fixed = true},
            {.ne = {2, 3, 1, 1}, .lo = 0, .hi = 3, .type = GGML_TYPE_I32}},
     .shape = s_mm_id, .ref = r_mm_id, .tol = 1e-5, .grad = OPS_REFUSED, .refusal = "expert ids"},
};

const struct ops_family ops_mul_mat = {"mul_mat", rows, sizeof rows / sizeof rows[0], NULL, NULL};

/* mul_mat.c -- the matrix products mul_mat and out_prod (kernel:
 * cpu/kernels/mul_mat.c) and their backward rules, each built from the
 * other product. The first operand may be stored as F16, BF16 or a block
 * type. Notation as in copy.c. */
#include "ops/grad.h"

/* The first operand may be a weight stored as F16, BF16 or a block type
 * (the kernel converts it as it packs); the second is F32. */
static bool weight_type_ok(const struct ggml_tensor * a) {
    return a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16 || a->type == GGML_TYPE_BF16 || ggml_is_quantized(a->type);
}

struct ggml_tensor * ggml_mul_mat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE_CTX("ggml_mul_mat"); REQUIRE("ggml_mul_mat", a); REQUIRE("ggml_mul_mat", b);
    if (!weight_type_ok(a)) return ggmlr_fail_type("ggml_mul_mat", "a", a, "F32, F16, BF16 or a quantized type");
    REQUIRE_F32("ggml_mul_mat", b);
    if (a->ne[0] != b->ne[0]) return ggmlr_fail_shapes("ggml_mul_mat", "a->ne[0] must equal b->ne[0]", a, b);
    if (a->ne[2] == 0 || a->ne[3] == 0 || b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0)
        return ggmlr_fail_shapes("ggml_mul_mat", "b->ne[2], b->ne[3] must be multiples of a's", a, b);
    const int64_t ne[4] = {a->ne[1], b->ne[1], b->ne[2], b->ne[3]};
    return ggmlr_new_node(ctx, GGML_OP_MUL_MAT, GGML_TYPE_F32, ne, a, b);
}

struct ggml_tensor * ggml_out_prod(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE_CTX("ggml_out_prod"); REQUIRE("ggml_out_prod", a); REQUIRE("ggml_out_prod", b);
    if (!weight_type_ok(a)) return ggmlr_fail_type("ggml_out_prod", "a", a, "F32, F16, BF16 or a quantized type");
    REQUIRE_F32("ggml_out_prod", b);
    if (a->ne[1] != b->ne[1]) return ggmlr_fail_shapes("ggml_out_prod", "a->ne[1] must equal b->ne[1]", a, b);
    if (a->ne[2] == 0 || a->ne[3] == 0 || b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0)
        return ggmlr_fail_shapes("ggml_out_prod", "b->ne[2], b->ne[3] must be multiples of a's", a, b);
    const int64_t ne[4] = {a->ne[0], b->ne[0], b->ne[2], b->ne[3]};
    return ggmlr_new_node(ctx, GGML_OP_OUT_PROD, GGML_TYPE_F32, ne, a, b);
}

/* ---- backward ---- */

/* A gradient computed per plane of b, [ne0, ne1, ne12, ne13], summed down to
 * a's planes: the contiguous groups of b's planes that shared one plane of a
 * (mul_mat and out_prod broadcast by division, i02 = i12 / r2). */
static struct ggml_tensor * sum_to_planes_of(struct ggml_context * ctx, struct ggml_tensor * full, const struct ggml_tensor * a) {
    if (!full) return NULL;
    const int64_t n01 = full->ne[0] * full->ne[1];
    const int64_t r2 = full->ne[2] / a->ne[2], r3 = full->ne[3] / a->ne[3];
    if (r2 > 1) {
        /* index i12 = i02*r2 + r: view [n01, r2, ne02, ne13] and sum over r */
        struct ggml_tensor * v = ggml_reshape_4d(ctx, full, n01, r2, a->ne[2], full->ne[3]);
        struct ggml_tensor * shape = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n01, 1, a->ne[2], full->ne[3]);
        full = ggml_repeat_back(ctx, v, shape);
    }
    if (r3 > 1 && full) {
        struct ggml_tensor * v = ggml_reshape_4d(ctx, full, n01 * a->ne[2], r3, a->ne[3], 1);
        struct ggml_tensor * shape = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n01 * a->ne[2], 1, a->ne[3], 1);
        full = ggml_repeat_back(ctx, v, shape);
    }
    return full ? ggml_reshape_4d(ctx, full, a->ne[0], a->ne[1], a->ne[2], a->ne[3]) : NULL;
}

/* a [n0, n1, ne02, ne03] with its planes repeated as mul_mat/out_prod broadcast
 * them to ne2 x ne3 (plane i2 = a's plane i2 / r2): a repeat along a new
 * dimension just below each broadcast one, merged back by a reshape. */
static struct ggml_tensor * expand_planes(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne2, int64_t ne3) {
    const int64_t n01 = a->ne[0] * a->ne[1], r2 = ne2 / a->ne[2], r3 = ne3 / a->ne[3];
    if (r2 == 1 && r3 == 1) return a;
    struct ggml_tensor * t = ggml_reshape_4d(ctx, ggmlr_grad_contiguous(ctx, a), n01, 1, a->ne[2], a->ne[3]);
    t = ggml_repeat(ctx, t, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n01, r2, a->ne[2], a->ne[3]));  /* [n01, r2, ne02, ne03] */
    t = ggml_reshape_4d(ctx, t, n01 * ne2, 1, a->ne[3], 1);
    t = ggml_repeat(ctx, t, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n01 * ne2, r3, a->ne[3], 1));   /* [n01*ne2, r3, ne03] */
    return ggml_reshape_4d(ctx, t, a->ne[0], a->ne[1], ne2, ne3);
}

/* y = a^T b (ggml's mul_mat), y[m, n] = sum_k a[k, m] b[k, n]:
 *   da[k, m] = sum_n b[k, n] g[m, n] = out_prod(b, g)
 *   db[k, n] = sum_m a[k, m] g[m, n] = out_prod(a, g^T)
 * Both read their operands through strides: no transposed copy is made. */
RULE(grad_mul_mat) {
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, sum_to_planes_of(ctx, ggml_out_prod(ctx, B, g), A))) return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, ggml_out_prod(ctx, A, ggml_transpose(ctx, g)));
}

/* y[i, j] = sum_k a[i, k] b[j, k]:
 *   da[i, k] = sum_j g[i, j] b[j, k] = out_prod(g, b^T)   (per plane of b, summed to a's)
 *   db[j, k] = sum_i g[i, j] a[i, k] = mul_mat(g, a)      (a's planes expanded to b's) */
RULE(grad_out_prod) {
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, sum_to_planes_of(ctx, ggml_out_prod(ctx, g, ggml_transpose(ctx, B)), A))) return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, ggml_mul_mat(ctx, g, expand_planes(ctx, A, B->ne[2], B->ne[3])));
}

GRAD_RULE(mul_mat, NULL, grad_mul_mat);
GRAD_RULE(out_prod, NULL, grad_out_prod);

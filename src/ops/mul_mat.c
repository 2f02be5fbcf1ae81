/* mul_mat.c -- the matrix products mul_mat, out_prod and mul_mat_id (experts picked by id) (kernel:
 * cpu/kernels/mul_mat.c) and their backward rules, each built from the
 * other product. The first operand may be stored as F16, BF16 or a block
 * type. Notation as in copy.c. */
#include "ops/grad.h"

/* The first operand may be a weight stored as F16, BF16 or a block type
 * (the kernel converts it as it packs); the second, the activations, F32,
 * F16 or BF16 (converted to F32 once per node). The result is F32. */
static bool weight_type_ok(const struct ggml_tensor * a) {
    return a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16 || a->type == GGML_TYPE_BF16 || ggml_is_quantized(a->type);
}

static bool activation_type_ok(const struct ggml_tensor * b) {
    return b->type == GGML_TYPE_F32 || b->type == GGML_TYPE_F16 || b->type == GGML_TYPE_BF16;
}

#define REQUIRE_WEIGHT(fn, t) do { if (!weight_type_ok(t)) return ggmlr_fail_type(fn, #t, t, "F32, F16, BF16 or a quantized type"); } while (0)
#define REQUIRE_ACTIVATION(fn, t) do { if (!activation_type_ok(t)) return ggmlr_fail_type(fn, #t, t, "F32, F16 or BF16"); } while (0)

struct ggml_tensor * ggml_mul_mat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE_CTX("ggml_mul_mat"); REQUIRE("ggml_mul_mat", a); REQUIRE("ggml_mul_mat", b);
    REQUIRE_WEIGHT("ggml_mul_mat", a); REQUIRE_ACTIVATION("ggml_mul_mat", b);
    if (a->ne[0] != b->ne[0]) return ggmlr_fail_shapes("ggml_mul_mat", "a->ne[0] must equal b->ne[0]", a, b);
    if (a->ne[2] == 0 || a->ne[3] == 0 || b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0)
        return ggmlr_fail_shapes("ggml_mul_mat", "b->ne[2], b->ne[3] must be multiples of a's", a, b);
    const int64_t ne[4] = {a->ne[1], b->ne[1], b->ne[2], b->ne[3]};
    return ggmlr_new_node(ctx, GGML_OP_MUL_MAT, GGML_TYPE_F32, ne, a, b);
}

struct ggml_tensor * ggml_out_prod(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE_CTX("ggml_out_prod"); REQUIRE("ggml_out_prod", a); REQUIRE("ggml_out_prod", b);
    REQUIRE_WEIGHT("ggml_out_prod", a); REQUIRE_ACTIVATION("ggml_out_prod", b);
    if (a->ne[1] != b->ne[1]) return ggmlr_fail_shapes("ggml_out_prod", "a->ne[1] must equal b->ne[1]", a, b);
    if (a->ne[2] == 0 || a->ne[3] == 0 || b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0)
        return ggmlr_fail_shapes("ggml_out_prod", "b->ne[2], b->ne[3] must be multiples of a's", a, b);
    const int64_t ne[4] = {a->ne[0], b->ne[0], b->ne[2], b->ne[3]};
    return ggmlr_new_node(ctx, GGML_OP_OUT_PROD, GGML_TYPE_F32, ne, a, b);
}

/* c[:, e, t] = mul_mat(as[:, :, ids[e, t]], b[:, e % n_b, t]): each token's rows through the experts it was routed to */
struct ggml_tensor * ggml_mul_mat_id(struct ggml_context * ctx, struct ggml_tensor * as, struct ggml_tensor * b, struct ggml_tensor * ids) {
    const char * fn = "ggml_mul_mat_id";
    REQUIRE_CTX(fn); REQUIRE(fn, as); REQUIRE(fn, b); REQUIRE(fn, ids);
    REQUIRE_WEIGHT(fn, as); REQUIRE_ACTIVATION(fn, b);
    if (ids->type != GGML_TYPE_I32) return ggmlr_fail_type(fn, "ids", ids, "I32");
    if (as->ne[3] != 1 || b->ne[3] != 1 || as->ne[0] != b->ne[0])
        return ggmlr_fail_shapes(fn, "as must be [K, M, n_expert] and b [K, n_b, n_tokens]", as, b);
    if (ids->ne[2] != 1 || ids->ne[3] != 1 || ids->ne[1] != b->ne[2] || b->ne[1] == 0 || ids->ne[0] % b->ne[1] != 0)
        return ggmlr_fail_shapes(fn, "ids must be [n_used, n_tokens] with n_used a multiple of b->ne[1] (b's shape second)", ids, b);
    const int64_t ne[4] = {as->ne[1], ids->ne[0], b->ne[2], 1};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_MUL_MAT_ID, GGML_TYPE_F32, ne, as, b);
    if (t) ggmlr_expert_ids_encode(t, ids);
    return t;
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

/* a product of a backward rule computes at its forward's precision */
static struct ggml_tensor * with_prec(struct ggml_tensor * t, const struct ggmlr_mul_mat_params * prec) {
    if (t) ggmlr_mul_mat_params_encode(t, prec);
    return t;
}

/* y = a^T b (ggml's mul_mat), y[m, n] = sum_k a[k, m] b[k, n]:
 *   da[k, m] = sum_n b[k, n] g[m, n] = out_prod(b, g)
 *   db[k, n] = sum_m a[k, m] g[m, n] = out_prod(a, g^T)
 * Both read their operands through strides: no transposed copy is made. */
RULE(grad_mul_mat) {
    const struct ggmlr_mul_mat_params prec = ggmlr_mul_mat_params_decode(node);
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, sum_to_planes_of(ctx, with_prec(ggml_out_prod(ctx, B, g), &prec), A))) return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, with_prec(ggml_out_prod(ctx, A, ggml_transpose(ctx, g)), &prec));
}

/* y[i, j] = sum_k a[i, k] b[j, k]:
 *   da[i, k] = sum_j g[i, j] b[j, k] = out_prod(g, b^T)   (per plane of b, summed to a's)
 *   db[j, k] = sum_i g[i, j] a[i, k] = mul_mat(g, a)      (a's planes expanded to b's) */
RULE(grad_out_prod) {
    const struct ggmlr_mul_mat_params prec = ggmlr_mul_mat_params_decode(node);
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, sum_to_planes_of(ctx, with_prec(ggml_out_prod(ctx, g, ggml_transpose(ctx, B)), &prec), A)))
        return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, with_prec(ggml_mul_mat(ctx, g, expand_planes(ctx, A, B->ne[2], B->ne[3])), &prec));
}

GRAD_RULE(mul_mat, NULL, grad_mul_mat);
GRAD_RULE(out_prod, NULL, grad_out_prod);

/* y[:, e, t] = W_et^T x_et with W_et = as[:, :, ids[e, t]] and x_et = b[:, e % n_b, t]
 * (P = n_used * n_tokens pairs, e fastest). Built from the ordinary ops, one
 * [K, M] matrix per pair (K * M * P floats): db_et = W_et g_et (a batched
 * mul_mat with W transposed), summed over the e that share a row of b; and
 * das[:, :, x] = the sum of the outer products x_et g_et^T over the pairs
 * routed to x (out_prod, then a scatter-add of whole matrices by id). */
static const char * refuse_mul_mat_id(const struct ggml_tensor * node, const bool * need) {
    (void) node;
    return need[2] ? "MUL_MAT_ID: the expert ids are integers and have no gradient" : NULL;
}

RULE(grad_mul_mat_id) {
    struct ggml_tensor * ids = ggmlr_expert_ids_decode(node);
    const int64_t K = A->ne[0], M = A->ne[1], n_exp = A->ne[2], nb = B->ne[1], n_used = ids->ne[0], T = ids->ne[1], P = n_used * T;
    struct ggml_tensor * gc = ggmlr_grad_contiguous(ctx, g);
    struct ggml_tensor * g_et = gc ? ggml_reshape_3d(ctx, gc, M, 1, P) : NULL;
    if (need[1]) {
        struct ggml_tensor * as2 = ggmlr_grad_contiguous(ctx, A);
        struct ggml_tensor * w = as2 ? ggmlr_gather_by_ids(ctx, ggml_reshape_2d(ctx, as2, K * M, n_exp), ids) : NULL;
        struct ggml_tensor * wt = w ? ggml_cont(ctx, ggml_transpose(ctx, ggml_reshape_3d(ctx, w, K, M, P))) : NULL;
        struct ggml_tensor * db = wt ? ggml_mul_mat(ctx, wt, g_et) : NULL;  /* [K, 1, P] */
        if (db && nb != n_used)  /* e = j + nb q: sum over q */
            db = ggml_repeat_back(ctx, ggml_reshape_4d(ctx, db, K, nb, n_used / nb, T), ggml_new_tensor_4d(ctx, GGML_TYPE_F32, K, nb, 1, T));
        if (!ggmlr_grad_acc(ctx, gph, B, db ? ggml_reshape_3d(ctx, db, K, nb, T) : NULL)) return false;
    }
    if (!need[0]) return true;
    struct ggml_tensor * bc = ggmlr_grad_contiguous(ctx, B);
    struct ggml_tensor * x = bc ? ggml_reshape_4d(ctx, bc, K, nb, 1, T) : NULL;
    if (x && nb != n_used) x = ggml_repeat(ctx, x, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, K, nb, n_used / nb, T));
    struct ggml_tensor * outer = x ? ggml_out_prod(ctx, ggml_reshape_3d(ctx, x, K, 1, P), g_et) : NULL;  /* [K, M, P] */
    struct ggml_tensor * das = outer ? ggmlr_scatter_by_ids(ctx, ggml_reshape_2d(ctx, outer, K * M, P), ids, n_exp) : NULL;
    return ggmlr_grad_acc(ctx, gph, A, das ? ggml_reshape_3d(ctx, das, K, M, n_exp) : NULL);
}

GRAD_RULE(mul_mat_id, refuse_mul_mat_id, grad_mul_mat_id);

/* The precision is kept on the node (GGML_PREC_BF16: ggml.h); hints change
 * nothing (no Hadamard path). A node other than a MUL_MAT or OUT_PROD, or a
 * precision outside the enum, is left as it is, with a message (upstream asserts). */
static bool mul_mat_node(const char * fn, const struct ggml_tensor * a) {
    if (!a) { ggmlr_null_input(fn, "a"); return false; }
    if (a->op == GGML_OP_MUL_MAT || a->op == GGML_OP_OUT_PROD) return true;
    ggmlr_set_error("%s: a must be a mul_mat or out_prod result (got op %s)", fn, ggml_op_name(a->op));
    return false;
}

void ggml_mul_mat_set_prec(struct ggml_tensor * a, enum ggml_prec prec) {
    const char * fn = "ggml_mul_mat_set_prec";
    if (!mul_mat_node(fn, a)) return;
    if (prec != GGML_PREC_DEFAULT && prec != GGML_PREC_F32 && prec != GGML_PREC_BF16) {
        ggmlr_set_error("%s: precision %d is not GGML_PREC_DEFAULT, GGML_PREC_F32 or GGML_PREC_BF16", fn, (int) prec);
        return;
    }
    ggmlr_mul_mat_params_encode(a, &(struct ggmlr_mul_mat_params) {(int32_t) prec});
}

enum ggml_prec ggml_mul_mat_get_prec(const struct ggml_tensor * a) {
    return mul_mat_node("ggml_mul_mat_get_prec", a) ? (enum ggml_prec) ggmlr_mul_mat_params_decode(a).prec : GGML_PREC_DEFAULT;
}

void ggml_mul_mat_set_hint(struct ggml_tensor * a, enum ggml_op_hint hint) {
    (void) hint;
    mul_mat_node("ggml_mul_mat_set_hint", a);
}

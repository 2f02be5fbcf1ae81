/* lightning_indexer.c -- DeepSeek's lightning indexer (GGML_OP_LIGHTNING_INDEXER;
 * kernel: cpu/kernels/lightning_indexer.c): the cheap scores by which
 * sparse attention picks the keys each query attends to.
 *
 * q [D, H, N, S] F32, k [D, 1, KV, S] (F32, F16, BF16 or quantized),
 * weights [H, N, 1, S] F32 (prescaled), mask [KV, N, 1, S'] F16 or F32 with
 * S % S' == 0 -> [KV, N, 1, S]:
 *   res[kv, t, 0, s] = sum_h relu(q[:, h, t, s] . k[:, 0, kv, s]) weights[h, t, 0, s] + mask[kv, t, 0, s % S']
 * The gradients, with z[kv, h, t] = q[:, h, t] . k[:, kv] (per stream) and
 * M[kv, h, t] = g[kv, t] w[h, t] [z > 0]:
 *   dq[:, h, t] = sum_kv M k[:, kv]    dk[:, kv] = sum_{h,t} M q[:, h, t]
 *   dw[h, t] = sum_kv g[kv, t] relu(z) dmask = g summed over the streams it serves
 * built from mul_mat (z), out_prod (dq, dk) and sum_rows (dw). */
#include "ops/grad.h"

struct ggml_tensor * ggml_lightning_indexer(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                            struct ggml_tensor * weights, struct ggml_tensor * mask) {
    const char * fn = "ggml_lightning_indexer";
    REQUIRE_CTX(fn); REQUIRE(fn, q); REQUIRE(fn, k); REQUIRE(fn, weights); REQUIRE(fn, mask);
    REQUIRE_F32(fn, q); REQUIRE_F32(fn, weights);
    if (!ggmlr_mask_type_ok(mask)) return ggmlr_fail_type(fn, "mask", mask, "F16 or F32");
    if (k->type != GGML_TYPE_F32 && k->type != GGML_TYPE_F16 && k->type != GGML_TYPE_BF16 && !ggml_is_quantized(k->type))
        return ggmlr_fail_type(fn, "k", k, "F32, F16, BF16 or a quantized type");
    if (k->ne[0] != q->ne[0] || k->ne[1] != 1 || k->ne[3] != q->ne[3])
        return ggmlr_fail_shapes(fn, "k must be [D, 1, n_kv, S] for q [D, H, N, S]", q, k);
    if (k->ne[0] % ggml_blck_size(k->type) != 0) return ggmlr_fail_shapes(fn, "k's rows must hold whole blocks of its type", q, k);
    if (weights->ne[0] != q->ne[1] || weights->ne[1] != q->ne[2] || weights->ne[2] != 1 || weights->ne[3] != q->ne[3])
        return ggmlr_fail_shapes(fn, "weights must be [H, N, 1, S] for q [D, H, N, S]", q, weights);
    if (mask->ne[0] != k->ne[2] || mask->ne[1] != q->ne[2] || mask->ne[2] != 1 || mask->ne[3] < 1 || q->ne[3] % mask->ne[3] != 0)
        return ggmlr_fail_shapes(fn, "mask must be [n_kv, N, 1, S'] with S a multiple of S' for q [D, H, N, S]", q, mask);
    const int64_t ne[4] = {k->ne[2], q->ne[2], 1, q->ne[3]};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_LIGHTNING_INDEXER, GGML_TYPE_F32, ne, NULL, NULL);
    if (t) ggmlr_lightning_indexer_srcs_encode(t, &(struct ggmlr_lightning_indexer_srcs) {q, k, weights, mask});
    return t;
}

/* ---- backward ---- */

/* t (contiguous) as [n0, n1, n2, n3] */
static struct ggml_tensor * as_4d(struct ggml_context * ctx, struct ggml_tensor * t, int64_t n0, int64_t n1, int64_t n2, int64_t n3) {
    struct ggml_tensor * c = t ? ggmlr_grad_contiguous(ctx, t) : NULL;
    return c ? ggml_reshape_4d(ctx, c, n0, n1, n2, n3) : NULL;
}

static const char * refuse_lightning_indexer(const struct ggml_tensor * node, const bool * need) {
    const struct ggmlr_lightning_indexer_srcs s = ggmlr_lightning_indexer_srcs_decode(node);
    if (s.k->type != GGML_TYPE_F32 && s.k->type != GGML_TYPE_F16)
        return "LIGHTNING_INDEXER: the backward reads k as F32 or F16 (make BF16 or quantized keys F16 for training)";
    return ggmlr_refuse_not_f32(node, need);
}

RULE(grad_lightning_indexer) {
    const struct ggmlr_lightning_indexer_srcs s = ggmlr_lightning_indexer_srcs_decode(node);
    const int64_t d = s.q->ne[0], nh = s.q->ne[1], n = s.q->ne[2], ns = s.q->ne[3], nkv = s.k->ne[2];
    struct ggml_tensor * kr = as_4d(ctx, s.k, d, nkv, 1, ns), * qr = as_4d(ctx, s.q, d, nh * n, 1, ns);
    struct ggml_tensor * z = kr && qr ? ggml_reshape_4d(ctx, ggml_mul_mat(ctx, kr, qr), nkv, nh, n, ns) : NULL;  /* [KV, H, N, S] */
    struct ggml_tensor * gr = as_4d(ctx, g, nkv, 1, n, ns), * wr = as_4d(ctx, s.weights, 1, nh, n, ns);
    if (!z || !gr || !wr) return false;
    if (need[0] || need[1]) {
        struct ggml_tensor * m = ggml_mul(ctx, ggml_mul(ctx, ggml_step(ctx, z), gr), wr);
        struct ggml_tensor * mr = m ? ggml_reshape_4d(ctx, m, nkv, nh * n, 1, ns) : NULL;  /* [KV, H N, 1, S] */
        if (!mr) return false;
        if (need[0] && !ggmlr_grad_acc(ctx, gph, s.q, as_4d(ctx, ggml_out_prod(ctx, kr, ggml_transpose(ctx, mr)), d, nh, n, ns))) return false;
        if (need[1] && !ggmlr_grad_acc(ctx, gph, s.k, as_4d(ctx, ggml_out_prod(ctx, qr, mr), d, 1, nkv, ns))) return false;
    }
    if (need[2] && !ggmlr_grad_acc(ctx, gph, s.weights, as_4d(ctx, ggml_sum_rows(ctx, ggml_mul(ctx, ggml_relu(ctx, z), gr)), nh, n, 1, ns)))
        return false;
    return !need[3] || ggmlr_grad_acc(ctx, gph, s.mask, ggmlr_grad_reduce_to(ctx, g, s.mask));
}

GRAD_RULE(lightning_indexer, refuse_lightning_indexer, grad_lightning_indexer);

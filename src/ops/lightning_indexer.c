/* lightning_indexer.c -- DeepSeek's lightning indexer (GGML_OP_LIGHTNING_INDEXER;
 * kernel: cpu/kernels/lightning_indexer.c): the cheap scores by which
 * sparse attention picks the keys each query attends to.
 *
 * q [D, H, N, S] F32, k [D, 1, KV, S] (F32, F16, BF16 or quantized),
 * weights [H, N, 1, S] F32 (prescaled), mask [KV, N, 1, S'] F16 or F32 with
 * S % S' == 0 -> [KV, N, 1, S]:
 *   res[kv, t, 0, s] = sum_h relu(q[:, h, t, s] . k[:, 0, kv, s]) weights[h, t, 0, s] + mask[kv, t, 0, s % S']
 * No backward rule: the scores feed a top-k selection, which has no gradient. */
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

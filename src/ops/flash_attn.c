/* flash_attn.c -- fused attention: flash_attn_ext and flash_attn_back
 * (kernels: cpu/kernels/flash_attn.c, flash_attn_back.c; docs/attention.md)
 * and the backward rule of the forward, one FLASH_ATTN_BACK node. */
#include "ops/grad.h"

#include <float.h>
#include <math.h>

/* K and V: F32, F16, BF16 or a block type (upstream's constructor takes any
 * type; the kernel converts their rows to F32). A block type this library
 * stores but cannot dequantize is accepted here, as upstream does, and its
 * compute fails with a message (supports_op says no). */
static bool kv_type_ok(const struct ggml_tensor * t) {
    return t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_F16 || t->type == GGML_TYPE_BF16 || ggml_is_quantized(t->type);
}

/* Shape and type rules shared by the forward and backward ops (docs/attention.md). */
static bool check_attention(const char * fn, const struct ggml_tensor * q, const struct ggml_tensor * k,
                            const struct ggml_tensor * v, const struct ggml_tensor * mask, float scale) {
    if (q->type != GGML_TYPE_F32) { ggmlr_fail_type(fn, "q", q, "F32"); return false; }
    if (!kv_type_ok(k)) { ggmlr_fail_type(fn, "k", k, "F32, F16, BF16 or a block type"); return false; }
    if (!kv_type_ok(v)) { ggmlr_fail_type(fn, "v", v, "F32, F16, BF16 or a block type"); return false; }
    if (k->ne[0] != q->ne[0]) { ggmlr_fail_shapes(fn, "k->ne[0] (DK) must equal q->ne[0]", q, k); return false; }
    if (v->ne[1] != k->ne[1]) { ggmlr_fail_shapes(fn, "v->ne[1] (M) must equal k->ne[1]", k, v); return false; }
    if (v->ne[2] != k->ne[2]) { ggmlr_fail_shapes(fn, "v->ne[2] (Hkv) must equal k->ne[2]", k, v); return false; }
    if (k->ne[3] != q->ne[3] || v->ne[3] != q->ne[3]) { ggmlr_fail_shapes(fn, "q, k and v must have the same batch ne[3]", q, k); return false; }
    if (k->ne[2] == 0 || q->ne[2] % k->ne[2] != 0) { ggmlr_fail_shapes(fn, "H = q->ne[2] must be a multiple of Hkv = k->ne[2]", q, k); return false; }
    if (mask) {
        if (!ggmlr_mask_type_ok(mask)) { ggmlr_fail_type(fn, "mask", mask, "F16 or F32"); return false; }
        if (mask->ne[0] != k->ne[1]) { ggmlr_fail_shapes(fn, "mask->ne[0] must equal M = k->ne[1]", k, mask); return false; }
        if (mask->ne[1] < q->ne[1]) { ggmlr_fail_shapes(fn, "mask->ne[1] must be at least N = q->ne[1]", q, mask); return false; }
        if (mask->ne[2] == 0 || mask->ne[3] == 0) { ggmlr_fail_shapes(fn, "mask has an empty dimension", q, mask); return false; }
    }
    if (!isfinite(scale)) { ggmlr_set_error("%s: scale must be finite", fn); return false; }
    return true;
}

struct ggml_tensor * ggml_flash_attn_ext(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                         struct ggml_tensor * v, struct ggml_tensor * mask,
                                         float scale, float max_bias, float logit_softcap) {
    const char * fn = "ggml_flash_attn_ext";
    REQUIRE_CTX(fn); REQUIRE(fn, q); REQUIRE(fn, k); REQUIRE(fn, v);
    if (!check_attention(fn, q, k, v, mask, scale)) return NULL;
    if (!isfinite(max_bias) || max_bias < 0 || !isfinite(logit_softcap) || logit_softcap < 0) {
        ggmlr_set_error("%s: max_bias and logit_softcap must be finite and >= 0", fn);
        return NULL;
    }
    if (max_bias > 0 && !mask) { ggmlr_set_error("%s: max_bias > 0 (ALiBi) requires a mask", fn); return NULL; }
    const int64_t ne[4] = {v->ne[0], q->ne[2], q->ne[1], q->ne[3]};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_FLASH_ATTN_EXT, GGML_TYPE_F32, ne, q, k);
    if (!t) return NULL;
    /* Row statistics the forward writes as it goes (max and log-sum of each
     * query row's scores), so that its backward need not run the forward again. */
    struct ggml_tensor * stats = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2 * q->ne[1] * q->ne[2] * q->ne[3]);
    if (!stats) return NULL;
    ggml_set_name(stats, "flash_attn_ext stats");
    const struct ggmlr_flash_attn_srcs srcs = {q, k, v, mask, NULL, stats, NULL};
    ggmlr_flash_attn_srcs_encode(t, &srcs);
    const struct ggmlr_flash_attn_params prm = {scale, max_bias, logit_softcap};
    ggmlr_flash_attn_params_encode(t, &prm);
    return t;
}

struct ggml_tensor * ggml_flash_attn_back(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                          struct ggml_tensor * v, struct ggml_tensor * mask,
                                          struct ggml_tensor * d, float scale) {
    const char * fn = "ggml_flash_attn_back";
    REQUIRE_CTX(fn); REQUIRE(fn, q); REQUIRE(fn, k); REQUIRE(fn, v); REQUIRE(fn, d);
    REQUIRE_F32(fn, d);
    if (!check_attention(fn, q, k, v, mask, scale)) return NULL;
    if (d->ne[0] != v->ne[0] || d->ne[1] != q->ne[2] || d->ne[2] != q->ne[1] || d->ne[3] != q->ne[3]) {
        char sd[96];
        ggmlr_set_error("%s: d must be [DV, H, N, B] = [%lld, %lld, %lld, %lld] (got %s)", fn, (long long) v->ne[0],
                        (long long) q->ne[2], (long long) q->ne[1], (long long) q->ne[3], ggmlr_shape_str(d, sd, sizeof sd));
        return NULL;
    }
    /* each count is at most INT64_MAX / 4 (a tensor's size fits), so the sum fits in uint64 */
    const uint64_t len = (uint64_t) ggmlr_pad16_floats(ggml_nelements(q)) + (uint64_t) ggmlr_pad16_floats(ggml_nelements(k)) +
                         (uint64_t) ggmlr_pad16_floats(ggml_nelements(v));
    if (len > (uint64_t) INT64_MAX / sizeof(float)) {
        ggmlr_set_error("%s: the packed gradients of %llu floats are too large", fn, (unsigned long long) len);
        return NULL;
    }
    const int64_t ne[4] = {(int64_t) len, 1, 1, 1};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_FLASH_ATTN_BACK, GGML_TYPE_F32, ne, q, k);
    if (!t) return NULL;
    const struct ggmlr_flash_attn_srcs srcs = {q, k, v, mask, d, NULL, NULL};
    ggmlr_flash_attn_srcs_encode(t, &srcs);
    const struct ggmlr_flash_attn_params prm = {scale, 0.0f, 0.0f};
    ggmlr_flash_attn_params_encode(t, &prm);
    return t;
}

struct ggml_tensor * ggmlr_flash_attn_back_saved(struct ggml_context * ctx, struct ggml_tensor * fwd, struct ggml_tensor * d) {
    struct ggmlr_flash_attn_srcs srcs = ggmlr_flash_attn_srcs_decode(fwd);
    struct ggml_tensor * t = ggml_flash_attn_back(ctx, srcs.q, srcs.k, srcs.v, srcs.mask, d, ggmlr_flash_attn_params_decode(fwd).scale);
    if (!t) return NULL;
    srcs.d = d;
    srcs.saved_out = fwd;
    ggmlr_flash_attn_srcs_encode(t, &srcs);  /* srcs.stats: the forward's */
    ggmlr_flash_attn_prec_encode(t, ggmlr_flash_attn_prec_decode(fwd));  /* the backward's products at the forward's precision */
    return t;
}

/* ---- backward ---- */

static const char * refuse_flash_attn_ext(const struct ggml_tensor * node, const bool * need) {
    const struct ggmlr_flash_attn_params prm = ggmlr_flash_attn_params_decode(node);
    const struct ggmlr_flash_attn_srcs srcs = ggmlr_flash_attn_srcs_decode(node);
    if (prm.max_bias > 0)  return "FLASH_ATTN_EXT: backward with max_bias > 0 (ALiBi) is not implemented";
    if (prm.logit_softcap != 0) return "FLASH_ATTN_EXT: backward with logit_softcap != 0 is not implemented";
    /* K or V of another type is frozen data (read converted); dQ still flows through it */
    if ((need[1] && srcs.k->type != GGML_TYPE_F32) || (need[2] && srcs.v->type != GGML_TYPE_F32))
        return "FLASH_ATTN_EXT: the gradient of a K or V that is not F32 is not implemented (only F32 K/V can learn; dq flows through any type)";
    if (need[3]) return "FLASH_ATTN_EXT: the gradient with respect to the mask is not implemented (the mask is a parameter)";
    return NULL;
}

/* one FLASH_ATTN_BACK node (reading the forward's saved statistics) gives
 * [dq | dk | dv]; each source takes its slice as a view. The statistics hold
 * the sink's term, so P = exp(S - L) there is the softmax with the sink and
 * these need nothing more. */
static bool grad_qkv(struct ggml_context * ctx, struct ggml_cgraph * gph, struct ggml_tensor * node, struct ggml_tensor * g,
                     const bool * need) {
    struct ggml_tensor * fab = ggmlr_flash_attn_back_saved(ctx, node, g);
    if (!fab) return false;
    size_t offset = 0;
    for (int i = 0; i < 3; i++) {
        struct ggml_tensor * s = node->src[i];
        if (need[i]) {
            const size_t es = sizeof(float);
            struct ggml_tensor * slice = ggml_view_4d(ctx, fab, s->ne[0], s->ne[1], s->ne[2], s->ne[3], es * (size_t) s->ne[0],
                                                      es * (size_t) (s->ne[0] * s->ne[1]), es * (size_t) (s->ne[0] * s->ne[1] * s->ne[2]), offset);
            if (!ggmlr_grad_acc(ctx, gph, s, slice)) return false;
        }
        offset += (size_t) ggmlr_pad16_floats(ggml_nelements(s)) * sizeof(float);
    }
    return true;
}

/* The sink of head h has probability p = exp(sink_h - mx - lsum) in each of
 * its rows (the saved statistics, [N, H, B] each) and dout/dsink = -p out, so
 * dsink_h = -sum over the rows (n, b) of head h of p (dO . out). mx is clamped
 * to a finite value first: a row with nothing attended and a -Inf sink keeps
 * mx = -Inf, and its p must come out 0, not NaN. */
static bool grad_sinks(struct ggml_context * ctx, struct ggml_cgraph * gph, struct ggml_tensor * node, struct ggml_tensor * g,
                       struct ggml_tensor * sinks) {
    const int64_t N = node->ne[2], H = node->ne[1], n_batch = node->ne[3];
    struct ggml_tensor * stats = ggmlr_flash_attn_srcs_decode(node).stats;
    const size_t fs = sizeof(float);
    struct ggml_tensor * mx = ggml_view_3d(ctx, stats, N, H, n_batch, N * fs, N * H * fs, 0);
    struct ggml_tensor * lsum = ggml_view_3d(ctx, stats, N, H, n_batch, N * fs, N * H * fs, (size_t) (N * H * n_batch) * fs);
    struct ggml_tensor * sink_col = ggml_reshape_3d(ctx, ggml_is_contiguous(sinks) ? sinks : ggml_cont(ctx, sinks), 1, H, 1);
    struct ggml_tensor * sink_minus_mx = ggml_neg(ctx, ggml_sub(ctx, ggml_clamp(ctx, mx, -FLT_MAX, FLT_MAX), sink_col));
    struct ggml_tensor * p = ggml_exp(ctx, ggml_sub(ctx, sink_minus_mx, lsum));                                    /* [N, H, B] */
    struct ggml_tensor * dot = ggml_reshape_3d(ctx, ggml_sum_rows(ctx, ggml_mul(ctx, g, node)), H, N, n_batch);    /* [H, N, B] */
    struct ggml_tensor * per_row = ggml_mul(ctx, p, ggml_cont(ctx, ggml_permute(ctx, dot, 1, 0, 2, 3)));           /* [N, H, B] */
    struct ggml_tensor * by_head = ggml_cont(ctx, ggml_permute(ctx, per_row, 0, 2, 1, 3));                         /* [N, B, H] */
    struct ggml_tensor * ds = ggml_sum_rows(ctx, ggml_reshape_2d(ctx, by_head, N * n_batch, H));                   /* [1, H] */
    return ggmlr_grad_acc(ctx, gph, sinks, ggml_reshape(ctx, ggml_scale(ctx, ds, -1.0f), sinks));
}

RULE(grad_flash_attn_ext) {
    if ((need[0] || need[1] || need[2]) && !grad_qkv(ctx, gph, node, g, need)) return false;
    struct ggml_tensor * sinks = ggmlr_flash_attn_sinks_decode(node);
    return !sinks || !need[4] || grad_sinks(ctx, gph, node, g, sinks);
}

GRAD_RULE(flash_attn_ext, refuse_flash_attn_ext, grad_flash_attn_ext);

/* Upstream's precision switch, kept on the node: GGML_PREC_DEFAULT and
 * GGML_PREC_F32 accumulate in F32 (ggmlr always does); GGML_PREC_BF16 (ggmlr's)
 * rounds the operands of the attention's products to bf16 where the CPU
 * multiplies bf16 (docs/precision.md), and autodiff gives the backward the
 * same (a FLASH_ATTN_BACK of ggml_flash_attn_back takes it too). A node
 * other than these two, or a value outside the enum, is refused with a
 * message and the node left as it was (upstream asserts). */
void ggml_flash_attn_ext_set_prec(struct ggml_tensor * a, enum ggml_prec prec) {
    const char * fn = "ggml_flash_attn_ext_set_prec";
    if (!a) { ggmlr_null_input(fn, "a"); return; }
    if (a->op != GGML_OP_FLASH_ATTN_EXT && a->op != GGML_OP_FLASH_ATTN_BACK) {
        ggmlr_set_error("%s: a must be a flash_attn_ext or flash_attn_back result (got op %s)", fn, ggml_op_name(a->op));
        return;
    }
    if (prec != GGML_PREC_DEFAULT && prec != GGML_PREC_F32 && prec != GGML_PREC_BF16) {
        ggmlr_set_error("%s: precision %d is not GGML_PREC_DEFAULT, GGML_PREC_F32 or GGML_PREC_BF16", fn, (int) prec);
        return;
    }
    ggmlr_flash_attn_prec_encode(a, (int32_t) prec);
}

/* sinks: F32, one per query head (q->ne[2]); as ggml_soft_max_add_sinks */
void ggml_flash_attn_ext_add_sinks(struct ggml_tensor * a, struct ggml_tensor * sinks) {
    const char * fn = "ggml_flash_attn_ext_add_sinks";
    if (!a) { ggmlr_null_input(fn, "a"); return; }
    if (a->op != GGML_OP_FLASH_ATTN_EXT) { ggmlr_set_error("%s: a must be a flash_attn_ext result (got op %s)", fn, ggml_op_name(a->op)); return; }
    const struct ggml_tensor * q = ggmlr_flash_attn_srcs_decode(a).q;
    if (sinks && sinks->type != GGML_TYPE_F32) { ggmlr_fail_type(fn, "sinks", sinks, "F32"); return; }
    if (sinks && (sinks->ne[0] != q->ne[2] || ggml_nelements(sinks) != sinks->ne[0])) {
        ggmlr_fail_shapes(fn, "sinks must be a vector of q->ne[2] values (one per query head)", q, sinks);
        return;
    }
    ggmlr_flash_attn_sinks_encode(a, sinks);
}

enum ggml_prec ggml_flash_attn_ext_get_prec(const struct ggml_tensor * a) {
    if (!a || (a->op != GGML_OP_FLASH_ATTN_EXT && a->op != GGML_OP_FLASH_ATTN_BACK)) {
        ggmlr_set_error("ggml_flash_attn_ext_get_prec: a must be a flash_attn_ext or flash_attn_back result");
        return GGML_PREC_DEFAULT;
    }
    return (enum ggml_prec) ggmlr_flash_attn_prec_decode(a);
}

/* dsv4_hc.c -- DeepSeek V4's hyper-connections (DSV4_HC_COMB, DSV4_HC_PRE,
 * DSV4_HC_POST) and the backward rules of pre and post (kernels:
 * cpu/kernels/dsv4_hc.c). F32; any layout.
 *
 * hc residual streams replace the one residual stream: pre mixes the
 * streams into a layer's input, post spreads the layer's output back and
 * mixes the streams, with the hc x hc matrix comb builds (a softmax, then
 * Sinkhorn normalisations towards a doubly stochastic matrix).
 *   pre:  y[i, t] = sum_h x[i, h, t] w[h, t]
 *         dx[i, h, t] = dy[i, t] w[h, t]             dw[h, t] = sum_i x[i, h, t] dy[i, t]
 *   post: y[i, d, t] = x[i, t] p[d, t] + sum_s r[i, s, t] c[d, s, t]
 *         dx = pre(dy, p)                           dp[d, t] = sum_i dy[i, d, t] x[i, t]
 *         dr[i, s, t] = sum_d dy[i, d, t] c[d, s, t] dc[d, s, t] = sum_i dy[i, d, t] r[i, s, t]
 * comb has no rule (its Sinkhorn loop would need its own backward op). */
#include "ops/grad.h"

/* t is [ne0, ne1, ne2, 1] (dimensions past n_dims 1) */
static bool dims_are(const struct ggml_tensor * t, int64_t ne0, int64_t ne1, int64_t ne2) {
    return t->ne[0] == ne0 && t->ne[1] == ne1 && t->ne[2] == ne2 && t->ne[3] == 1;
}

static struct ggml_tensor * fail_dims(const char * fn, const char * arg, const struct ggml_tensor * t, const char * want) {
    char buf[96];
    ggmlr_set_error("%s: %s must be %s (got %s)", fn, arg, want, ggmlr_shape_str(t, buf, sizeof buf));
    return NULL;
}

/* hc with (2 + hc) hc == m, or 0 */
static int64_t hc_of_mix_dim(int64_t m) {
    for (int64_t h = 1; h * h + 2 * h <= m; h++)
        if ((2 + h) * h == m) return h;
    return 0;
}

struct ggml_tensor * ggml_dsv4_hc_comb(struct ggml_context * ctx, struct ggml_tensor * mixes, struct ggml_tensor * scale,
                                       struct ggml_tensor * base, float eps, int32_t n_iter) {
    const char * fn = "ggml_dsv4_hc_comb";
    REQUIRE_CTX(fn); REQUIRE(fn, mixes); REQUIRE(fn, scale); REQUIRE(fn, base);
    REQUIRE_F32(fn, mixes); REQUIRE_F32(fn, scale); REQUIRE_F32(fn, base);
    const int64_t hc = hc_of_mix_dim(mixes->ne[0]);
    if (hc == 0 || !dims_are(mixes, mixes->ne[0], mixes->ne[1], 1)) return fail_dims(fn, "mixes", mixes, "[(2 + hc) hc, n_tokens], hc >= 1");
    if (scale->ne[0] < 3 || !dims_are(scale, scale->ne[0], 1, 1)) return fail_dims(fn, "scale", scale, "[>= 3]");
    if (!dims_are(base, mixes->ne[0], 1, 1)) return fail_dims(fn, "base", base, "[(2 + hc) hc], mixes' ne0");
    if (!isfinite(eps) || eps < 0.0f || n_iter < 1) {
        ggmlr_set_error("%s: needs a finite eps >= 0 and n_iter >= 1 (got %g, %d)", fn, (double) eps, (int) n_iter);
        return NULL;
    }
    const int64_t ne[4] = {hc, hc, mixes->ne[1], 1};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_DSV4_HC_COMB, GGML_TYPE_F32, ne, NULL, NULL);
    if (!t) return NULL;
    ggmlr_dsv4_hc_comb_srcs_encode(t, &(struct ggmlr_dsv4_hc_comb_srcs) {mixes, scale, base});
    ggmlr_dsv4_hc_comb_params_encode(t, &(struct ggmlr_dsv4_hc_comb_params) {eps, n_iter});
    return t;
}

struct ggml_tensor * ggml_dsv4_hc_pre(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * weights) {
    const char * fn = "ggml_dsv4_hc_pre";
    REQUIRE_CTX(fn); REQUIRE(fn, x); REQUIRE(fn, weights); REQUIRE_F32(fn, x); REQUIRE_F32(fn, weights);
    if (x->ne[1] < 1 || x->ne[3] != 1) return fail_dims(fn, "x", x, "[n_embd, hc, n_tokens], hc >= 1");
    if (!dims_are(weights, x->ne[1], x->ne[2], 1)) return fail_dims(fn, "weights", weights, "[hc, n_tokens] of x");
    const int64_t ne[4] = {x->ne[0], x->ne[2], 1, 1};
    return ggmlr_new_node(ctx, GGML_OP_DSV4_HC_PRE, GGML_TYPE_F32, ne, x, weights);
}

struct ggml_tensor * ggml_dsv4_hc_post(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * residual,
                                       struct ggml_tensor * post, struct ggml_tensor * comb) {
    const char * fn = "ggml_dsv4_hc_post";
    REQUIRE_CTX(fn); REQUIRE(fn, x); REQUIRE(fn, residual); REQUIRE(fn, post); REQUIRE(fn, comb);
    REQUIRE_F32(fn, x); REQUIRE_F32(fn, residual); REQUIRE_F32(fn, post); REQUIRE_F32(fn, comb);
    const int64_t e = x->ne[0], n = x->ne[1], hc = residual->ne[1];
    if (!dims_are(x, e, n, 1)) return fail_dims(fn, "x", x, "[n_embd, n_tokens]");
    if (hc < 1 || !dims_are(residual, e, hc, n)) return fail_dims(fn, "residual", residual, "[n_embd, hc, n_tokens] of x, hc >= 1");
    if (!dims_are(post, hc, n, 1)) return fail_dims(fn, "post", post, "[hc, n_tokens] of residual");
    if (!dims_are(comb, hc, hc, n)) return fail_dims(fn, "comb", comb, "[hc, hc, n_tokens] of residual");
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_DSV4_HC_POST, GGML_TYPE_F32, residual->ne, NULL, NULL);
    if (t) ggmlr_dsv4_hc_post_srcs_encode(t, &(struct ggmlr_dsv4_hc_post_srcs) {x, residual, post, comb});
    return t;
}

/* ---- backward ---- */

/* t [n0, n1, n2] as [1, n0, n1, n2]: a column of outer products for mul_mat */
static struct ggml_tensor * as_columns(struct ggml_context * ctx, struct ggml_tensor * t) {
    struct ggml_tensor * c = ggmlr_grad_contiguous(ctx, t);
    return c ? ggml_reshape_4d(ctx, c, 1, t->ne[0], t->ne[1], t->ne[2]) : NULL;
}

/* sum_i a[i, h, t] v[i, t] -> [h, t]: a [E, H, T], v [E, T] */
static struct ggml_tensor * contract_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * v) {
    struct ggml_tensor * vc = ggmlr_grad_contiguous(ctx, v);
    struct ggml_tensor * r = vc ? ggml_mul_mat(ctx, a, ggml_reshape_3d(ctx, vc, v->ne[0], 1, v->ne[1])) : NULL;  /* [H, 1, T] */
    return r ? ggml_reshape_2d(ctx, r, a->ne[1], a->ne[2]) : NULL;
}

RULE(grad_dsv4_hc_pre) {
    /* dx: the outer products dy[:, t] w[:, t]^T, [E, H, T] */
    if (need[0]) {
        struct ggml_tensor * gc = as_columns(ctx, g), * wc = as_columns(ctx, B);
        if (!ggmlr_grad_acc(ctx, gph, A, gc && wc ? ggml_mul_mat(ctx, gc, wc) : NULL)) return false;
    }
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, contract_rows(ctx, A, g));
}

RULE(grad_dsv4_hc_post) {
    const struct ggmlr_dsv4_hc_post_srcs s = ggmlr_dsv4_hc_post_srcs_decode(node);
    if (need[0] && !ggmlr_grad_acc(ctx, gph, s.x, ggml_dsv4_hc_pre(ctx, g, s.post))) return false;
    if (need[1]) {
        /* mul_mat(dy^T [H, E, T], c [H, H, T])[i, s] = sum_d dy[i, d] c[d, s] */
        struct ggml_tensor * gt = ggml_transpose(ctx, g);  /* mul_mat reads it through strides */
        if (!ggmlr_grad_acc(ctx, gph, s.residual, gt ? ggml_mul_mat(ctx, gt, s.comb) : NULL)) return false;
    }
    if (need[2] && !ggmlr_grad_acc(ctx, gph, s.post, contract_rows(ctx, g, s.x))) return false;
    /* mul_mat(dy, r)[d, s] = sum_i dy[i, d] r[i, s] */
    return !need[3] || ggmlr_grad_acc(ctx, gph, s.comb, ggml_mul_mat(ctx, g, s.residual));
}

GRAD_RULE(dsv4_hc_pre, NULL, grad_dsv4_hc_pre);
GRAD_RULE(dsv4_hc_post, NULL, grad_dsv4_hc_post);

/* ssm.c -- the state-space (Mamba) ops: SSM_CONV, SSM_SCAN, their backward
 * ops SSM_CONV_BACK and SSM_SCAN_BACK and the rules (kernels:
 * cpu/kernels/ssm.c). F32 (ids I32); any layout.
 *
 * ssm_conv: y[i, t, s] = sum_k sx[t + k, i, s] c[k, i], sx [d_conv - 1 + n_t,
 * d_inner, n_s], c [d_conv, d_inner] -> y [d_inner, n_t, n_s]. Its gradients:
 *   dsx[j, i, s] = sum_k dy[i, j - k, s] c[k, i]   (0 <= j - k < n_t)
 *   dc[k, i]     = sum_{s,t} dy[i, t, s] sx[t + k, i, s]
 *
 * ssm_scan: per sequence q, head h (group g = h / (n_head / n_group)) and row
 * r of the head, a recurrence over the tokens t with sp = softplus(dt[h, t, q]):
 *   h_{t+1}[d] = h_t[d] exp(sp A[d or 0, h]) + B[d, g, t, q] x[r, h, t, q] sp
 *   y[r, h, t, q] = sum_d h_{t+1}[d] C[d, g, t, q],   h_0 = s[:, r, h, ids[q]]
 * and state slot k < K of the result holds h_{n_t - k} (zeros past k = n_t).
 * Its gradients run the recurrence backwards (SSM_SCAN_BACK, one source's
 * at a time; the kernel gives the maths). */
#include "ops/grad.h"

/* upstream names ssm_scan's sources A, B and C: grad.h's shorthands for a
 * node's first two sources would rename them (the rules below spell src[]) */
#undef A
#undef B

struct ggml_tensor * ggml_ssm_conv(struct ggml_context * ctx, struct ggml_tensor * sx, struct ggml_tensor * c) {
    const char * fn = "ggml_ssm_conv";
    REQUIRE_CTX(fn); REQUIRE(fn, sx); REQUIRE(fn, c); REQUIRE_F32(fn, sx); REQUIRE_F32(fn, c);
    char bs[80], bc[80];
    if (sx->ne[3] != 1 || c->ne[2] != 1 || c->ne[3] != 1) {
        ggmlr_set_error("%s: sx must be 3-D [d_conv - 1 + n_t, d_inner, n_s] and c a matrix [d_conv, d_inner] (got %s and %s)", fn,
                        ggmlr_shape_str(sx, bs, sizeof bs), ggmlr_shape_str(c, bc, sizeof bc));
        return NULL;
    }
    const int64_t d_conv = c->ne[0], n_t = sx->ne[0] - d_conv + 1;
    if (d_conv < 1 || sx->ne[1] != c->ne[1] || n_t < 0) {
        ggmlr_set_error("%s: c [d_conv >= 1, d_inner] must match sx [d_conv - 1 + n_t, d_inner, n_s] (got %s and %s)", fn,
                        ggmlr_shape_str(c, bc, sizeof bc), ggmlr_shape_str(sx, bs, sizeof bs));
        return NULL;
    }
    const int64_t ne[4] = {c->ne[1], n_t, sx->ne[2], 1};
    return ggmlr_new_node(ctx, GGML_OP_SSM_CONV, GGML_TYPE_F32, ne, sx, c);
}

/* The shape checks of ssm_scan (upstream's, plus n_group >= 1 and
 * n_head % n_group == 0, which upstream's CPU kernel asserts). */
static bool ssm_scan_shapes_ok(const char * fn, const struct ggmlr_ssm_scan_srcs * a, int64_t K) {
    const int64_t d_state = a->s->ne[0], head_dim = a->x->ne[0], n_head = a->x->ne[1], n_t = a->x->ne[2], n_s = a->x->ne[3];
    char b1[80], b2[80];
    if (a->dt->ne[0] != n_head || a->dt->ne[1] != n_t || a->dt->ne[2] != n_s || a->dt->ne[3] != 1) {
        ggmlr_set_error("%s: dt must be [n_head, n_t, n_s] = [%lld, %lld, %lld] of x %s (got %s)", fn, (long long) n_head, (long long) n_t,
                        (long long) n_s, ggmlr_shape_str(a->x, b1, sizeof b1), ggmlr_shape_str(a->dt, b2, sizeof b2));
        return false;
    }
    if (a->s->ne[1] != head_dim || a->s->ne[2] != n_head) {
        ggmlr_set_error("%s: s must be [d_state, head_dim, n_head, n_rows] with x's head_dim %lld and n_head %lld (got %s)", fn,
                        (long long) head_dim, (long long) n_head, ggmlr_shape_str(a->s, b1, sizeof b1));
        return false;
    }
    if (!ggml_are_same_shape(a->B, a->C) || a->B->ne[0] != d_state || a->B->ne[2] != n_t || a->B->ne[3] != n_s || a->B->ne[1] < 1 ||
        n_head % a->B->ne[1] != 0) {
        ggmlr_set_error("%s: B and C must both be [d_state, n_group, n_t, n_s] = [%lld, n_group, %lld, %lld], n_group >= 1 dividing "
                        "n_head %lld (got %s and %s)", fn, (long long) d_state, (long long) n_t, (long long) n_s, (long long) n_head,
                        ggmlr_shape_str(a->B, b1, sizeof b1), ggmlr_shape_str(a->C, b2, sizeof b2));
        return false;
    }
    if (a->ids->ne[0] != n_s || a->ids->ne[1] != 1 || a->ids->ne[2] != 1 || a->ids->ne[3] != 1) {
        ggmlr_set_error("%s: ids must be a vector of n_s = %lld (got %s)", fn, (long long) n_s, ggmlr_shape_str(a->ids, b1, sizeof b1));
        return false;
    }
    if (a->A->ne[1] != n_head || a->A->ne[2] != 1 || a->A->ne[3] != 1 || (a->A->ne[0] != 1 && a->A->ne[0] != d_state)) {
        ggmlr_set_error("%s: A must be [d_state, n_head] (Mamba-1) or [1, n_head] (Mamba-2), d_state %lld, n_head %lld (got %s)", fn,
                        (long long) d_state, (long long) n_head, ggmlr_shape_str(a->A, b1, sizeof b1));
        return false;
    }
    if (a->A->ne[0] != 1 && K != 1) {
        ggmlr_set_error("%s: A of shape [d_state, n_head] (Mamba-1) keeps one state only (K = 1, got %lld)", fn, (long long) K);
        return false;
    }
    return true;
}

struct ggml_tensor * ggml_ssm_scan(struct ggml_context * ctx, struct ggml_tensor * s, struct ggml_tensor * x, struct ggml_tensor * dt,
                                   struct ggml_tensor * A, struct ggml_tensor * B, struct ggml_tensor * C, struct ggml_tensor * ids,
                                   int64_t K) {
    const char * fn = "ggml_ssm_scan";
    REQUIRE_CTX(fn); REQUIRE(fn, s); REQUIRE(fn, x); REQUIRE(fn, dt); REQUIRE(fn, A); REQUIRE(fn, B); REQUIRE(fn, C); REQUIRE(fn, ids);
    REQUIRE_F32(fn, s); REQUIRE_F32(fn, x); REQUIRE_F32(fn, dt); REQUIRE_F32(fn, A); REQUIRE_F32(fn, B); REQUIRE_F32(fn, C);
    if (ids->type != GGML_TYPE_I32) return ggmlr_fail_type(fn, "ids", ids, "I32");
    if (K < 1 || K > INT32_MAX) {
        ggmlr_set_error("%s: K, the number of states kept, must be in [1, 2^31 - 1] (got %lld)", fn, (long long) K);
        return NULL;
    }
    const struct ggmlr_ssm_scan_srcs a = {s, x, dt, A, B, C, ids, NULL};
    if (!ssm_scan_shapes_ok(fn, &a, K)) return NULL;
    const double state = (double) s->ne[0] * (double) s->ne[1] * (double) s->ne[2] * (double) x->ne[3];
    if (!ggmlr_check_size_bound(fn, (double) ggml_nelements(x) + (double) K * state)) return NULL;
    const int64_t ne[4] = {ggml_nelements(x) + K * s->ne[0] * s->ne[1] * s->ne[2] * x->ne[3], 1, 1, 1};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_SSM_SCAN, GGML_TYPE_F32, ne, NULL, NULL);
    if (!t) return NULL;
    ggmlr_ssm_scan_srcs_encode(t, &a);
    const struct ggmlr_ssm_scan_params p = {(int32_t) K, 0};
    ggmlr_ssm_scan_params_encode(t, &p);
    return t;
}

/* ---- backward ---- */

/* The gradient of SSM_CONV node fwd's sx (which 0) or c (which 1), given dy. */
static struct ggml_tensor * ssm_conv_back(struct ggml_context * ctx, const struct ggml_tensor * fwd, struct ggml_tensor * dy, int which) {
    const char * fn = "ssm_conv_back";
    REQUIRE_CTX(fn); REQUIRE(fn, fwd); REQUIRE(fn, dy);
    if (fwd->op != GGML_OP_SSM_CONV || dy->type != GGML_TYPE_F32 || !ggml_are_same_shape(dy, fwd)) {
        ggmlr_set_error("%s: needs an SSM_CONV node and an F32 dy shaped like it", fn);
        return NULL;
    }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_SSM_CONV_BACK, GGML_TYPE_F32, fwd->src[which]->ne, NULL, NULL);
    if (!t) return NULL;
    const struct ggmlr_ssm_conv_back_srcs s = {dy, fwd->src[0], fwd->src[1]};
    ggmlr_ssm_conv_back_srcs_encode(t, &s);
    ggmlr_i32_param_encode(t, which);
    return t;
}

RULE(grad_ssm_conv) {
    if (need[0] && !ggmlr_grad_acc(ctx, gph, node->src[0], ssm_conv_back(ctx, node, g, 0))) return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, node->src[1], ssm_conv_back(ctx, node, g, 1));
}

GRAD_RULE(ssm_conv, NULL, grad_ssm_conv);

/* The gradient of SSM_SCAN node fwd's source `which` (GGMLR_SSM_S..C), given dy. */
static struct ggml_tensor * ssm_scan_back(struct ggml_context * ctx, const struct ggml_tensor * fwd, struct ggml_tensor * dy, int which) {
    const char * fn = "ssm_scan_back";
    REQUIRE_CTX(fn); REQUIRE(fn, fwd); REQUIRE(fn, dy);
    if (fwd->op != GGML_OP_SSM_SCAN || dy->type != GGML_TYPE_F32 || !ggml_are_same_shape(dy, fwd) || which < GGMLR_SSM_S ||
        which > GGMLR_SSM_C) {
        ggmlr_set_error("%s: needs an SSM_SCAN node, an F32 dy shaped like it and a source among s, x, dt, A, B, C", fn);
        return NULL;
    }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_SSM_SCAN_BACK, GGML_TYPE_F32, fwd->src[which]->ne, NULL, NULL);
    if (!t) return NULL;
    struct ggmlr_ssm_scan_srcs s = ggmlr_ssm_scan_srcs_decode(fwd);
    s.dy = dy;
    ggmlr_ssm_scan_srcs_encode(t, &s);
    struct ggmlr_ssm_scan_params p = ggmlr_ssm_scan_params_decode(fwd);
    p.which = which;
    ggmlr_ssm_scan_params_encode(t, &p);
    return t;
}

RULE(grad_ssm_scan) {
    for (int i = GGMLR_SSM_S; i <= GGMLR_SSM_C; i++)
        if (need[i] && !ggmlr_grad_acc(ctx, gph, node->src[i], ssm_scan_back(ctx, node, g, i))) return false;
    return true;
}

static const char * refuse_ssm_scan(const struct ggml_tensor * node, const bool * need) {
    (void) node;
    return need[GGMLR_SSM_IDS] ? "SSM_SCAN: ids, the state rows, are indices and have no gradient" : NULL;
}

GRAD_RULE(ssm_scan, refuse_ssm_scan, grad_ssm_scan);

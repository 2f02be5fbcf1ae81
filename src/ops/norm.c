/* norm.c -- LayerNorm (norm), RMSNorm (rms_norm), l2_norm and group_norm,
 * their backward ops and rules, each one fused backward op (kernel:
 * cpu/kernels/norm.c). F32 only; the results are contiguous F32 shaped like
 * the input, or (_inplace) views of it written over it. */
#include "ops/grad.h"

#include <math.h>

static bool check_eps(const char * fn, float eps) {
    if (isfinite(eps) && eps >= 0.0f) return true;
    ggmlr_set_error("%s: eps must be finite and >= 0 (got %g)", fn, (double) eps);
    return false;
}

/* a new tensor, or (inplace, a contiguous) a view of a written over it */
static struct ggml_tensor * norm_op(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, float eps, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (!check_eps(fn, eps)) return NULL;
    struct ggml_tensor * t = inplace ? ggmlr_new_inplace(fn, ctx, a, op) : ggmlr_new_node(ctx, op, GGML_TYPE_F32, a->ne, a, NULL);
    if (t) ggmlr_f32_param_encode(t, eps);
    return t;
}

struct ggml_tensor * ggml_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op("ggml_norm", ctx, GGML_OP_NORM, a, eps, false);
}

struct ggml_tensor * ggml_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op("ggml_norm_inplace", ctx, GGML_OP_NORM, a, eps, true);
}

struct ggml_tensor * ggml_rms_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op("ggml_rms_norm", ctx, GGML_OP_RMS_NORM, a, eps, false);
}

struct ggml_tensor * ggml_rms_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op("ggml_rms_norm_inplace", ctx, GGML_OP_RMS_NORM, a, eps, true);
}

struct ggml_tensor * ggml_l2_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op("ggml_l2_norm", ctx, GGML_OP_L2_NORM, a, eps, false);
}

struct ggml_tensor * ggml_l2_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op("ggml_l2_norm_inplace", ctx, GGML_OP_L2_NORM, a, eps, true);
}

/* GROUP_NORM (src[0] = x) or GROUP_NORM_BACK (src[0] = dy, src[1] = x) */
static struct ggml_tensor * group_norm_op(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * dy,
                                          struct ggml_tensor * x, int n_groups, float eps, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, x); REQUIRE_F32(fn, x);
    if (dy && !ggmlr_check_same_f32_pair(fn, dy, x)) return NULL;
    if (!check_eps(fn, eps)) return NULL;
    if (n_groups < 1) { ggmlr_set_error("%s: n_groups must be >= 1 (got %d)", fn, n_groups); return NULL; }
    struct ggml_tensor * t = dy      ? ggmlr_new_node(ctx, op, GGML_TYPE_F32, x->ne, dy, x)
                           : inplace ? ggmlr_new_inplace(fn, ctx, x, op)
                                     : ggmlr_new_node(ctx, op, GGML_TYPE_F32, x->ne, x, NULL);
    if (t) ggmlr_group_norm_params_encode(t, &(const struct ggmlr_group_norm_params) {n_groups, eps});
    return t;
}

struct ggml_tensor * ggml_group_norm(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps) {
    return group_norm_op("ggml_group_norm", ctx, GGML_OP_GROUP_NORM, NULL, a, n_groups, eps, false);
}

struct ggml_tensor * ggml_group_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps) {
    return group_norm_op("ggml_group_norm_inplace", ctx, GGML_OP_GROUP_NORM, NULL, a, n_groups, eps, true);
}

struct ggml_tensor * ggmlr_group_norm_back(struct ggml_context * ctx, struct ggml_tensor * dy, struct ggml_tensor * x, int n_groups, float eps) {
    const char * fn = "group_norm_back";
    REQUIRE_CTX(fn); REQUIRE(fn, dy);
    return group_norm_op(fn, ctx, GGML_OP_GROUP_NORM_BACK, dy, x, n_groups, eps, false);
}

/* src[0] = dy, src[1] = x (upstream's order for rms_norm_back) */
static struct ggml_tensor * norm_back_op(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * dy,
                                         struct ggml_tensor * x, float eps) {
    REQUIRE_CTX(fn); REQUIRE(fn, dy); REQUIRE(fn, x);
    if (!ggmlr_check_same_f32_pair(fn, dy, x) || !check_eps(fn, eps)) return NULL;
    struct ggml_tensor * t = ggmlr_new_node(ctx, op, GGML_TYPE_F32, x->ne, dy, x);
    if (t) ggmlr_f32_param_encode(t, eps);
    return t;
}

struct ggml_tensor * ggmlr_norm_back(struct ggml_context * ctx, struct ggml_tensor * g, struct ggml_tensor * x, float eps) {
    return norm_back_op("norm_back", ctx, GGML_OP_NORM_BACK, g, x, eps);
}

struct ggml_tensor * ggml_rms_norm_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float eps) {
    return norm_back_op("ggml_rms_norm_back", ctx, GGML_OP_RMS_NORM_BACK, a, b, eps);
}

struct ggml_tensor * ggmlr_l2_norm_back(struct ggml_context * ctx, struct ggml_tensor * g, struct ggml_tensor * x, float eps) {
    return norm_back_op("l2_norm_back", ctx, GGML_OP_L2_NORM_BACK, g, x, eps);
}

/* ---- backward ---- */

RULE(grad_norm) {
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggmlr_norm_back(ctx, g, A, ggmlr_f32_param_decode(node)));
}

RULE(grad_rms_norm) {
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_rms_norm_back(ctx, g, A, ggmlr_f32_param_decode(node)));
}

RULE(grad_l2_norm) {
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggmlr_l2_norm_back(ctx, g, A, ggmlr_f32_param_decode(node)));
}

RULE(grad_group_norm) {
    if (!need[0]) return true;
    const struct ggmlr_group_norm_params p = ggmlr_group_norm_params_decode(node);
    return ggmlr_grad_acc(ctx, gph, A, ggmlr_group_norm_back(ctx, g, A, p.n_groups, p.eps));
}

/* each rule reads x, which the _inplace forms overwrite */
GRAD_RULE(norm, ggmlr_refuse_in_place, grad_norm);
GRAD_RULE(l2_norm, ggmlr_refuse_in_place, grad_l2_norm);
GRAD_RULE(group_norm, ggmlr_refuse_in_place, grad_group_norm);
GRAD_RULE(rms_norm, ggmlr_refuse_in_place, grad_rms_norm);

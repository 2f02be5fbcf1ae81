/* soft_max.c -- soft_max, soft_max_ext (scale, mask, ALiBi, attention
 * sinks), their _inplace forms and soft_max_ext_back, and the backward rule
 * (kernel: cpu/kernels/soft_max.c). */
#include "ops/grad.h"

#include <math.h>

static struct ggml_tensor * soft_max_impl(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask,
                                          float scale, float max_bias, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (mask) {
        if (!ggmlr_mask_type_ok(mask)) return ggmlr_fail_type(fn, "mask", mask, "F16 or F32");
        if (mask->ne[0] != a->ne[0] || mask->ne[1] < a->ne[1] || mask->ne[2] == 0 || mask->ne[3] == 0 ||
            a->ne[2] % mask->ne[2] != 0 || a->ne[3] % mask->ne[3] != 0)
            return ggmlr_fail_shapes(fn, "mask must be [ne0, >= ne1, a divisor of ne2, a divisor of ne3] of a", a, mask);
    }
    if (!isfinite(scale) || !isfinite(max_bias) || max_bias < 0) {
        ggmlr_set_error("%s: scale and max_bias must be finite, max_bias >= 0", fn);
        return NULL;
    }
    if (max_bias > 0 && !mask) { ggmlr_set_error("%s: max_bias > 0 (ALiBi) requires a mask", fn); return NULL; }
    struct ggml_tensor * t = inplace ? ggmlr_new_inplace(fn, ctx, a, GGML_OP_SOFT_MAX) : ggmlr_new_node(ctx, GGML_OP_SOFT_MAX, GGML_TYPE_F32, a->ne, a, mask);
    if (!t) return NULL;
    t->src[0] = a;
    t->src[1] = mask;
    const struct ggmlr_soft_max_params prm = {scale, max_bias};
    ggmlr_soft_max_params_encode(t, &prm);
    return t;
}

struct ggml_tensor * ggml_soft_max_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask, float scale, float max_bias) {
    return soft_max_impl("ggml_soft_max_ext", ctx, a, mask, scale, max_bias, false);
}

struct ggml_tensor * ggml_soft_max_ext_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask, float scale,
                                               float max_bias) {
    return soft_max_impl("ggml_soft_max_ext_inplace", ctx, a, mask, scale, max_bias, true);
}

struct ggml_tensor * ggml_soft_max(struct ggml_context * ctx, struct ggml_tensor * a) { return soft_max_impl("ggml_soft_max", ctx, a, NULL, 1.0f, 0.0f, false); }

struct ggml_tensor * ggml_soft_max_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return soft_max_impl("ggml_soft_max_inplace", ctx, a, NULL, 1.0f, 0.0f, true);
}

/* One more logit per head (ne2), sinks[i2], in each row's normalisation:
 * y_i = e^(x_i - m) / (sum_j e^(x_j - m) + e^(sinks[i2] - m)). NULL removes
 * them; a bad argument leaves a as it was, with a message. */
void ggml_soft_max_add_sinks(struct ggml_tensor * a, struct ggml_tensor * sinks) {
    const char * fn = "ggml_soft_max_add_sinks";
    if (!a) { ggmlr_null_input(fn, "a"); return; }
    if (a->op != GGML_OP_SOFT_MAX) { ggmlr_set_error("%s: a must be a soft_max result (got op %s)", fn, ggml_op_name(a->op)); return; }
    if (sinks && sinks->type != GGML_TYPE_F32) { ggmlr_fail_type(fn, "sinks", sinks, "F32"); return; }
    if (sinks && (sinks->ne[0] != a->ne[2] || ggml_nelements(sinks) != sinks->ne[0])) {
        ggmlr_fail_shapes(fn, "sinks must be a vector of a->ne[2] values (one per head)", a, sinks);
        return;
    }
    ggmlr_soft_max_sinks_encode(a, sinks);
}

/* a = dy, b = y; max_bias is kept (as upstream) but does not enter the
 * gradient: the mask term is constant in x. */
static struct ggml_tensor * soft_max_back_impl(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                               float scale, float max_bias, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (!ggmlr_check_same_f32_pair(fn, a, b)) return NULL;
    if (!isfinite(scale) || !isfinite(max_bias) || max_bias < 0) {
        ggmlr_set_error("%s: scale and max_bias must be finite, max_bias >= 0", fn);
        return NULL;
    }
    struct ggml_tensor * t = inplace ? ggmlr_new_inplace(fn, ctx, a, GGML_OP_SOFT_MAX_BACK) : ggmlr_new_node(ctx, GGML_OP_SOFT_MAX_BACK, GGML_TYPE_F32, a->ne, a, b);
    if (!t) return NULL;
    t->src[0] = a;
    t->src[1] = b;
    const struct ggmlr_soft_max_params prm = {scale, max_bias};
    ggmlr_soft_max_params_encode(t, &prm);
    return t;
}

struct ggml_tensor * ggml_soft_max_ext_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float scale, float max_bias) {
    return soft_max_back_impl("ggml_soft_max_ext_back", ctx, a, b, scale, max_bias, false);
}

/* written over a (dy) */
struct ggml_tensor * ggml_soft_max_ext_back_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float scale,
                                                    float max_bias) {
    return soft_max_back_impl("ggml_soft_max_ext_back_inplace", ctx, a, b, scale, max_bias, true);
}

/* ---- backward ---- */

static const char * refuse_soft_max(const struct ggml_tensor * node, const bool * need) {
    (void) node;
    return need[1] ? "SOFT_MAX: the gradient with respect to the mask is not implemented (the mask is a parameter)" : NULL;
}

/* sum over rows, tokens and ne3 of a [1, ne1, ne2, ne3] -> [1, 1, ne2, 1] */
static struct ggml_tensor * sum_per_head(struct ggml_context * ctx, struct ggml_tensor * r) {
    struct ggml_tensor * t = ggml_sum_rows(ctx, ggml_cont(ctx, ggml_permute(ctx, r, 3, 0, 1, 2)));  /* [1, ne2, ne3, 1] */
    return ggml_sum_rows(ctx, ggml_cont(ctx, ggml_permute(ctx, t, 1, 2, 0, 3)));                      /* [1, 1, ne2, 1] */
}

/* y = softmax(scale*x + mask): dx = scale * y * (g - sum_rows(g*y)), one
 * SOFT_MAX_BACK node (the sink adds a constant to each row's denominator,
 * which leaves that form). The sink's own probability is p = 1 - sum_i y_i
 * and dy_i/ds = -y_i p, so ds[h] = -sum over head h's rows of p sum_i g_i y_i. */
RULE(grad_soft_max) {
    const struct ggmlr_soft_max_params prm = ggmlr_soft_max_params_decode(node);
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, ggml_soft_max_ext_back(ctx, g, node, prm.scale, prm.max_bias))) return false;
    struct ggml_tensor * sinks = ggmlr_soft_max_sinks_decode(node);
    if (!sinks || !need[2]) return true;
    struct ggml_tensor * p_sink = ggml_scale_bias(ctx, ggml_sum_rows(ctx, node), -1.0f, 1.0f);
    struct ggml_tensor * per_row = ggml_mul(ctx, ggml_sum_rows(ctx, ggml_mul(ctx, g, node)), p_sink);
    return ggmlr_grad_acc(ctx, gph, sinks, ggml_reshape(ctx, ggml_scale(ctx, sum_per_head(ctx, per_row), -1.0f), sinks));
}

GRAD_RULE(soft_max, refuse_soft_max, grad_soft_max);

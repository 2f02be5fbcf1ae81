/* soft_max.c -- soft_max, soft_max_ext (scale, mask, ALiBi) and
 * soft_max_ext_back, and the backward rule (kernel: cpu/kernels/soft_max.c). */
#include "ops/grad.h"

#include <math.h>

struct ggml_tensor * ggml_soft_max_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask, float scale, float max_bias) {
    const char * fn = "ggml_soft_max_ext";
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
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_SOFT_MAX, GGML_TYPE_F32, a->ne, a, mask);
    if (!t) return NULL;
    const struct ggmlr_soft_max_params prm = {scale, max_bias};
    ggmlr_soft_max_params_encode(t, &prm);
    return t;
}

struct ggml_tensor * ggml_soft_max(struct ggml_context * ctx, struct ggml_tensor * a) { return ggml_soft_max_ext(ctx, a, NULL, 1.0f, 0.0f); }

/* a = dy, b = y; max_bias is kept (as upstream) but does not enter the
 * gradient: the mask term is constant in x. */
struct ggml_tensor * ggml_soft_max_ext_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float scale, float max_bias) {
    const char * fn = "ggml_soft_max_ext_back";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (!ggmlr_check_same_f32_pair(fn, a, b)) return NULL;
    if (!isfinite(scale) || !isfinite(max_bias) || max_bias < 0) {
        ggmlr_set_error("%s: scale and max_bias must be finite, max_bias >= 0", fn);
        return NULL;
    }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_SOFT_MAX_BACK, GGML_TYPE_F32, a->ne, a, b);
    if (!t) return NULL;
    const struct ggmlr_soft_max_params prm = {scale, max_bias};
    ggmlr_soft_max_params_encode(t, &prm);
    return t;
}

/* ---- backward ---- */

static const char * refuse_soft_max(const struct ggml_tensor * node, const bool * need) {
    (void) node;
    return need[1] ? "SOFT_MAX: the gradient with respect to the mask is not implemented (the mask is a parameter)" : NULL;
}

/* y = softmax(scale*x + mask): dx = scale * y * (g - sum_rows(g*y)), one SOFT_MAX_BACK node */
RULE(grad_soft_max) {
    const struct ggmlr_soft_max_params prm = ggmlr_soft_max_params_decode(node);
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_soft_max_ext_back(ctx, g, node, prm.scale, prm.max_bias));
}

GRAD_RULE(soft_max, refuse_soft_max, grad_soft_max);

/* ops_nn.c -- constructors of the neural-network ops: activations (UNARY and
 * its backward), LayerNorm / RMSNorm and their backward, the softmax backward.
 * F32 only; the results are contiguous F32 shaped like the input. */
#include "core/internal.h"

#include <math.h>

/* ---- activations ---- */

static const char * unary_op_name(int op) {
    switch (op) {
        case GGML_UNARY_OP_NEG:      return "NEG";
        case GGML_UNARY_OP_TANH:     return "TANH";
        case GGML_UNARY_OP_RELU:     return "RELU";
        case GGML_UNARY_OP_SIGMOID:  return "SIGMOID";
        case GGML_UNARY_OP_GELU:     return "GELU";
        case GGML_UNARY_OP_SILU:     return "SILU";
        case GGML_UNARY_OP_EXP:      return "EXP";
        case GGML_UNARY_OP_GELU_ERF: return "GELU_ERF";
        default:                     return NULL;
    }
}

bool ggmlr_unary_op_is_valid(int op) { return unary_op_name(op) != NULL; }

const char * ggml_unary_op_name(enum ggml_unary_op op) {
    const char * name = unary_op_name(op);
    return name ? name : "UNKNOWN";
}

enum ggml_unary_op ggml_get_unary_op(const struct ggml_tensor * tensor) {
    if (!tensor || (tensor->op != GGML_OP_UNARY && tensor->op != GGML_OP_UNARY_BACK)) {
        ggmlr_set_error("ggml_get_unary_op: tensor is %s, not a UNARY node", tensor ? ggml_op_name(tensor->op) : "NULL");
        return GGML_UNARY_OP_COUNT;
    }
    return (enum ggml_unary_op) tensor->op_params[0];
}

static bool check_unary_op(const char * fn, int op) {
    if (ggmlr_unary_op_is_valid(op)) return true;
    ggmlr_set_error("%s: unknown unary op %d (implemented: NEG, TANH, RELU, SIGMOID, GELU, SILU, EXP, GELU_ERF)", fn, op);
    return false;
}

struct ggml_tensor * ggml_unary(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op) {
    const char * fn = "ggml_unary";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (!check_unary_op(fn, op)) return NULL;
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_UNARY, GGML_TYPE_F32, a->ne, a, NULL);
    if (t) t->op_params[0] = (int32_t) op;
    return t;
}

struct ggml_tensor * ggml_neg(struct ggml_context * ctx, struct ggml_tensor * a)      { return ggml_unary(ctx, a, GGML_UNARY_OP_NEG); }
struct ggml_tensor * ggml_tanh(struct ggml_context * ctx, struct ggml_tensor * a)     { return ggml_unary(ctx, a, GGML_UNARY_OP_TANH); }
struct ggml_tensor * ggml_relu(struct ggml_context * ctx, struct ggml_tensor * a)     { return ggml_unary(ctx, a, GGML_UNARY_OP_RELU); }
struct ggml_tensor * ggml_sigmoid(struct ggml_context * ctx, struct ggml_tensor * a)  { return ggml_unary(ctx, a, GGML_UNARY_OP_SIGMOID); }
struct ggml_tensor * ggml_gelu(struct ggml_context * ctx, struct ggml_tensor * a)     { return ggml_unary(ctx, a, GGML_UNARY_OP_GELU); }
struct ggml_tensor * ggml_gelu_erf(struct ggml_context * ctx, struct ggml_tensor * a) { return ggml_unary(ctx, a, GGML_UNARY_OP_GELU_ERF); }
struct ggml_tensor * ggml_silu(struct ggml_context * ctx, struct ggml_tensor * a)     { return ggml_unary(ctx, a, GGML_UNARY_OP_SILU); }
struct ggml_tensor * ggml_exp(struct ggml_context * ctx, struct ggml_tensor * a)      { return ggml_unary(ctx, a, GGML_UNARY_OP_EXP); }

/* The gradient ops take two F32 tensors of one shape (any layout). */
static bool check_pair(const char * fn, const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->type != GGML_TYPE_F32) { ggmlr_fail_type(fn, "a", a, "F32"); return false; }
    if (b->type != GGML_TYPE_F32) { ggmlr_fail_type(fn, "b", b, "F32"); return false; }
    if (!ggml_are_same_shape(a, b)) { ggmlr_fail_shapes(fn, "a and b must have the same shape", a, b); return false; }
    return true;
}

struct ggml_tensor * ggmlr_unary_back(struct ggml_context * ctx, struct ggml_tensor * g, struct ggml_tensor * x, enum ggml_unary_op op) {
    const char * fn = "unary_back";
    REQUIRE_CTX(fn); REQUIRE(fn, g); REQUIRE(fn, x);
    if (!check_pair(fn, g, x) || !check_unary_op(fn, op)) return NULL;
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_UNARY_BACK, GGML_TYPE_F32, g->ne, g, x);
    if (t) t->op_params[0] = (int32_t) op;
    return t;
}

/* ---- normalisation ---- */

static bool check_eps(const char * fn, float eps) {
    if (isfinite(eps) && eps >= 0.0f) return true;
    ggmlr_set_error("%s: eps must be finite and >= 0 (got %g)", fn, (double) eps);
    return false;
}

static struct ggml_tensor * norm_op(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, float eps) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (!check_eps(fn, eps)) return NULL;
    struct ggml_tensor * t = ggmlr_new_node(ctx, op, GGML_TYPE_F32, a->ne, a, NULL);
    if (t) ggmlr_set_op_param_f32(t, 0, eps);
    return t;
}

struct ggml_tensor * ggml_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op("ggml_norm", ctx, GGML_OP_NORM, a, eps);
}

struct ggml_tensor * ggml_rms_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op("ggml_rms_norm", ctx, GGML_OP_RMS_NORM, a, eps);
}

/* src[0] = dy, src[1] = x (upstream's order for rms_norm_back) */
static struct ggml_tensor * norm_back_op(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * dy,
                                         struct ggml_tensor * x, float eps) {
    REQUIRE_CTX(fn); REQUIRE(fn, dy); REQUIRE(fn, x);
    if (!check_pair(fn, dy, x) || !check_eps(fn, eps)) return NULL;
    struct ggml_tensor * t = ggmlr_new_node(ctx, op, GGML_TYPE_F32, x->ne, dy, x);
    if (t) ggmlr_set_op_param_f32(t, 0, eps);
    return t;
}

struct ggml_tensor * ggmlr_norm_back(struct ggml_context * ctx, struct ggml_tensor * g, struct ggml_tensor * x, float eps) {
    return norm_back_op("norm_back", ctx, GGML_OP_NORM_BACK, g, x, eps);
}

struct ggml_tensor * ggml_rms_norm_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float eps) {
    return norm_back_op("ggml_rms_norm_back", ctx, GGML_OP_RMS_NORM_BACK, a, b, eps);
}

/* ---- softmax backward ---- */

/* a = dy, b = y; max_bias is kept (as upstream) but does not enter the
 * gradient: the mask term is constant in x. */
struct ggml_tensor * ggml_soft_max_ext_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float scale, float max_bias) {
    const char * fn = "ggml_soft_max_ext_back";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (!check_pair(fn, a, b)) return NULL;
    if (!isfinite(scale) || !isfinite(max_bias) || max_bias < 0) {
        ggmlr_set_error("%s: scale and max_bias must be finite, max_bias >= 0", fn);
        return NULL;
    }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_SOFT_MAX_BACK, GGML_TYPE_F32, a->ne, a, b);
    if (!t) return NULL;
    ggmlr_set_op_param_f32(t, 0, scale);
    ggmlr_set_op_param_f32(t, 1, max_bias);
    return t;
}

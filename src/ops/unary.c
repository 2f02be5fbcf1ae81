/* unary.c -- the activations (UNARY: every op of enum ggml_unary_op, with
 * upstream's named constructors and their _inplace forms; xielu with its
 * four parameters), UNARY_BACK (g * f'(x)), upstream's SILU_BACK and the backward rule (kernel:
 * cpu/kernels/unary.c). F32, F16 or BF16 (computed in F32, as upstream's CPU
 * backend); results shaped and typed like the input; the gradients F32. */
#include "ops/grad.h"

#include <math.h>

enum ggml_unary_op ggml_get_unary_op(const struct ggml_tensor * tensor) {
    if (!tensor || (tensor->op != GGML_OP_UNARY && tensor->op != GGML_OP_UNARY_BACK)) {
        ggmlr_set_error("ggml_get_unary_op: tensor is %s, not a UNARY node", tensor ? ggml_op_name(tensor->op) : "NULL");
        return GGML_UNARY_OP_COUNT;
    }
    return (enum ggml_unary_op) ggmlr_unary_params_decode(tensor).op;
}

/* XIELU's four parameters come only through ggml_xielu */
static bool check_unary_op(const char * fn, int op, bool xielu_ok) {
    if (!ggmlr_unary_op_is_valid(op)) {
        ggmlr_set_error("%s: unknown unary op %d (enum ggml_unary_op has 0..%d)", fn, op, GGML_UNARY_OP_COUNT - 1);
        return false;
    }
    if (op == GGML_UNARY_OP_XIELU && !xielu_ok) {
        ggmlr_set_error("%s: XIELU has parameters: build it with ggml_xielu", fn);
        return false;
    }
    return true;
}

/* y = f(a), a new tensor of a's type or (inplace) a view of a that the kernel writes over a */
static struct ggml_tensor * unary_impl(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a,
                                       const struct ggmlr_unary_params * prm, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a);
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16 && a->type != GGML_TYPE_BF16) return ggmlr_fail_type(fn, "a", a, "F32, F16 or BF16");
    if (!check_unary_op(fn, prm->op, true)) return NULL;
    struct ggml_tensor * t = inplace ? ggmlr_new_view(fn, ctx, a, GGML_OP_UNARY, a->ne, a->nb, 0)
                                     : ggmlr_new_node(ctx, GGML_OP_UNARY, a->type, a->ne, a, NULL);
    if (t) ggmlr_unary_params_encode(t, prm);
    return t;
}

static struct ggml_tensor * unary_op(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op, bool inplace) {
    if (!check_unary_op(fn, op, false)) return NULL;
    const struct ggmlr_unary_params prm = {.op = op};
    return unary_impl(fn, ctx, a, &prm, inplace);
}

struct ggml_tensor * ggml_unary(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op) {
    return unary_op("ggml_unary", ctx, a, op, false);
}

struct ggml_tensor * ggml_unary_inplace(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op) {
    return unary_op("ggml_unary_inplace", ctx, a, op, true);
}

/* ggml_<name> and ggml_<name>_inplace of activation OP */
#define UNARY_NAMED(name, OP)                                                                        \
    struct ggml_tensor * ggml_##name(struct ggml_context * ctx, struct ggml_tensor * a) {            \
        return unary_op("ggml_" #name, ctx, a, GGML_UNARY_OP_##OP, false);                           \
    }                                                                                                \
    struct ggml_tensor * ggml_##name##_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {  \
        return unary_op("ggml_" #name "_inplace", ctx, a, GGML_UNARY_OP_##OP, true);                 \
    }

UNARY_NAMED(abs, ABS)
UNARY_NAMED(sgn, SGN)
UNARY_NAMED(neg, NEG)
UNARY_NAMED(step, STEP)
UNARY_NAMED(tanh, TANH)
UNARY_NAMED(elu, ELU)
UNARY_NAMED(relu, RELU)
UNARY_NAMED(sigmoid, SIGMOID)
UNARY_NAMED(gelu, GELU)
UNARY_NAMED(gelu_quick, GELU_QUICK)
UNARY_NAMED(silu, SILU)
UNARY_NAMED(exp, EXP)
UNARY_NAMED(expm1, EXPM1)
UNARY_NAMED(softplus, SOFTPLUS)
UNARY_NAMED(gelu_erf, GELU_ERF)
UNARY_NAMED(floor, FLOOR)
UNARY_NAMED(ceil, CEIL)
UNARY_NAMED(round, ROUND)
UNARY_NAMED(trunc, TRUNC)

/* upstream has no _inplace form of these two */
struct ggml_tensor * ggml_hardswish(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op("ggml_hardswish", ctx, a, GGML_UNARY_OP_HARDSWISH, false);
}

struct ggml_tensor * ggml_hardsigmoid(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op("ggml_hardsigmoid", ctx, a, GGML_UNARY_OP_HARDSIGMOID, false);
}

/* log(1 + e^x) (upstream's cut at 20, where e^-x < 2.1e-9 is below x's ulp) */
static float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

/* The node stores the constrained coefficients, as upstream does:
 * alpha_n' = beta + softplus(alpha_n), alpha_p' = softplus(alpha_p). */
struct ggml_tensor * ggml_xielu(struct ggml_context * ctx, struct ggml_tensor * a, float alpha_n, float alpha_p, float beta, float eps) {
    const char * fn = "ggml_xielu";
    if (!isfinite(alpha_n) || !isfinite(alpha_p) || !isfinite(beta) || !isfinite(eps)) {
        ggmlr_set_error("%s: alpha_n %g, alpha_p %g, beta %g and eps %g must be finite", fn, (double) alpha_n, (double) alpha_p,
                        (double) beta, (double) eps);
        return NULL;
    }
    const struct ggmlr_unary_params prm = {GGML_UNARY_OP_XIELU, beta + softplus(alpha_n), softplus(alpha_p), beta, eps};
    return unary_impl(fn, ctx, a, &prm, false);
}

struct ggml_tensor * ggmlr_unary_back(struct ggml_context * ctx, struct ggml_tensor * g, struct ggml_tensor * x,
                                      const struct ggmlr_unary_params * prm) {
    const char * fn = "unary_back";
    REQUIRE_CTX(fn); REQUIRE(fn, g); REQUIRE(fn, x);
    if (!ggmlr_check_same_f32_pair(fn, g, x) || !check_unary_op(fn, prm->op, true)) return NULL;
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_UNARY_BACK, GGML_TYPE_F32, g->ne, g, x);
    if (t) ggmlr_unary_params_encode(t, prm);
    return t;
}

/* upstream's silu_back: a = dy, b = x; dy * silu'(x) (UNARY_BACK's SILU, as an op of its own) */
struct ggml_tensor * ggml_silu_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_silu_back";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (!ggmlr_check_same_f32_pair(fn, a, b)) return NULL;
    return ggmlr_new_node(ctx, GGML_OP_SILU_BACK, GGML_TYPE_F32, a->ne, a, b);
}

/* ---- backward ---- */

/* dx = g * f'(x) by UNARY_BACK, which evaluates f' at x; for EXP, f' = f,
 * so g * y reuses the forward result. SGN, STEP, FLOOR, CEIL, ROUND and
 * TRUNC are piecewise constant: f' = 0 except at their jumps, where it does
 * not exist, and UNARY_BACK gives 0 everywhere (as for relu at 0, the
 * value where the derivative is undefined is a convention). */
RULE(grad_unary) {
    if (!need[0]) return true;
    const struct ggmlr_unary_params prm = ggmlr_unary_params_decode(node);
    struct ggml_tensor * dx = prm.op == GGML_UNARY_OP_EXP ? ggml_mul(ctx, g, node) : ggmlr_unary_back(ctx, g, A, &prm);
    return ggmlr_grad_acc(ctx, gph, A, dx);
}

/* an in-place node has written f(x) over x, which f' needs (only exp's rule
 * reads the result instead; refusing every in-place node keeps it simple) */
GRAD_RULE(unary, ggmlr_refuse_in_place, grad_unary);

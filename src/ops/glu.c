/* glu.c -- gated linear units (GLU: reglu, geglu, swiglu, swiglu_oai,
 * geglu_erf, geglu_quick, each whole-row or split), GLU_BACK and the
 * backward rule (kernel: cpu/kernels/glu.c). F32; any layout.
 *
 * y = act(x) * g. Without b, x and g are the two halves of each row of a
 * (x first unless swapped) and y has half a's ne0; with b, x = a and g = b.
 * The gradients: dx = dy g act'(x), dg = dy act(x) (GLU_BACK computes
 * either, or both halves of a's row at once). */
#include "ops/grad.h"

enum ggml_glu_op ggml_get_glu_op(const struct ggml_tensor * tensor) {
    if (!tensor || (tensor->op != GGML_OP_GLU && tensor->op != GGML_OP_GLU_BACK)) {
        ggmlr_set_error("ggml_get_glu_op: tensor is %s, not a GLU node", tensor ? ggml_op_name(tensor->op) : "NULL");
        return GGML_GLU_OP_COUNT;
    }
    return (enum ggml_glu_op) ggmlr_glu_params_decode(tensor).op;
}

static struct ggml_tensor * glu_node(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                     const struct ggmlr_glu_params * p) {
    REQUIRE_CTX(fn); REQUIRE(fn, a);
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16) return ggmlr_fail_type(fn, "a", a, "F32 or F16");
    if (p->op < 0 || p->op >= GGML_GLU_OP_COUNT) {
        ggmlr_set_error("%s: unknown glu op %d (REGLU, GEGLU, SWIGLU, SWIGLU_OAI, GEGLU_ERF, GEGLU_QUICK)", fn, (int) p->op);
        return NULL;
    }
    int64_t ne[4] = {a->ne[0], a->ne[1], a->ne[2], a->ne[3]};
    if (b) {
        if (b->type != a->type) return ggmlr_fail_shapes(fn, "a and b must have one type", a, b);
        if (!ggml_are_same_shape(a, b)) return ggmlr_fail_shapes(fn, "a and b must have the same shape", a, b);
    } else {
        ne[0] /= 2;  /* x and the gate side by side; an odd row's last element is not read (as upstream) */
    }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_GLU, a->type, ne, a, b);
    if (t) ggmlr_glu_params_encode(t, p);
    return t;
}

struct ggml_tensor * ggml_glu(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_glu_op op, bool swapped) {
    const struct ggmlr_glu_params p = {.op = op, .swapped = swapped};
    return glu_node("ggml_glu", ctx, a, NULL, &p);
}

struct ggml_tensor * ggml_glu_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, enum ggml_glu_op op) {
    const struct ggmlr_glu_params p = {.op = op};
    REQUIRE("ggml_glu_split", b);
    return glu_node("ggml_glu_split", ctx, a, b, &p);
}

struct ggml_tensor * ggml_swiglu_oai(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float alpha, float limit) {
    const struct ggmlr_glu_params p = {.op = GGML_GLU_OP_SWIGLU_OAI, .alpha = alpha, .limit = limit};
    return glu_node("ggml_swiglu_oai", ctx, a, b, &p);
}

/* upstream's named forms: op, op_swapped, op_split */
#define GLU_FORMS(name, OP)                                                                                                          \
    struct ggml_tensor * ggml_##name(struct ggml_context * ctx, struct ggml_tensor * a) { return ggml_glu(ctx, a, OP, false); }       \
    struct ggml_tensor * ggml_##name##_swapped(struct ggml_context * ctx, struct ggml_tensor * a) { return ggml_glu(ctx, a, OP, true); } \
    struct ggml_tensor * ggml_##name##_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {             \
        return ggml_glu_split(ctx, a, b, OP);                                                                                        \
    }
GLU_FORMS(reglu, GGML_GLU_OP_REGLU)
GLU_FORMS(geglu, GGML_GLU_OP_GEGLU)
GLU_FORMS(swiglu, GGML_GLU_OP_SWIGLU)
GLU_FORMS(geglu_erf, GGML_GLU_OP_GEGLU_ERF)
GLU_FORMS(geglu_quick, GGML_GLU_OP_GEGLU_QUICK)

/* ---- backward ---- */

/* The gradient of GLU node fwd's a (which 0) or b (which 1), given dy;
 * without b, which 0 gives both halves of a's rows. */
static struct ggml_tensor * glu_back(struct ggml_context * ctx, const struct ggml_tensor * fwd, struct ggml_tensor * dy, int which) {
    const char * fn = "glu_back";
    REQUIRE_CTX(fn); REQUIRE(fn, fwd); REQUIRE(fn, dy);
    if (fwd->op != GGML_OP_GLU || (which == 1 && !fwd->src[1]) || !ggml_are_same_shape(dy, fwd)) {
        ggmlr_set_error("%s: needs a GLU node (with b for which 1) and dy shaped like it", fn);
        return NULL;
    }
    struct ggmlr_glu_params p = ggmlr_glu_params_decode(fwd);
    p.which = which;
    struct ggml_tensor * a = fwd->src[0], * b = fwd->src[1];
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_GLU_BACK, GGML_TYPE_F32, which ? b->ne : a->ne, NULL, NULL);
    if (!t) return NULL;
    const struct ggmlr_glu_back_srcs s = {dy, a, b};
    ggmlr_glu_back_srcs_encode(t, &s);
    ggmlr_glu_params_encode(t, &p);
    return t;
}

RULE(grad_glu) {
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, glu_back(ctx, node, g, 0))) return false;
    return !B || !need[1] || ggmlr_grad_acc(ctx, gph, B, glu_back(ctx, node, g, 1));
}

GRAD_RULE(glu, NULL, grad_glu);

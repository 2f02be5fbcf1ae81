/* glue_train_ops.c -- the training ops: activations, normalisation, row
 * gathering, softmax and cross-entropy backward, argmax and the optimizer steps. Same pattern as glue_ops.c (the macros of glue.h):
 * check the context, convert every argument, call, wrap or fail. */
#include "glue.h"

/* ---- f(ctx, a) ---- */

OP_A(ggml_neg)
OP_A(ggml_tanh)
OP_A(ggml_relu)
OP_A(ggml_sigmoid)
OP_A(ggml_gelu)
OP_A(ggml_gelu_erf)
OP_A(ggml_silu)
OP_A(ggml_exp)
OP_A(ggml_argmax)

/* ---- f(ctx, a, b) ---- */

OP_AB(ggml_get_rows)
OP_AB(ggml_cross_entropy_loss)

/* ---- f(ctx, a, b, c) ---- */

#define OP_ABC(fn) \
    SEXP R_##fn(SEXP ctx, SEXP a, SEXP b, SEXP c_) { \
        rg_ctx * c = rg_ctx_get(ctx, "ctx"); \
        struct ggml_tensor * ta = TENSOR(c, a, "a"); \
        struct ggml_tensor * tb = TENSOR(c, b, "b"); \
        struct ggml_tensor * tc = TENSOR(c, c_, "c"); \
        return FINISH(ctx, #fn, fn(c->ctx, ta, tb, tc)); \
    }

OP_ABC(ggml_get_rows_back)
OP_ABC(ggml_cross_entropy_loss_back)

/* ---- with parameters ---- */

SEXP R_ggml_unary(SEXP ctx, SEXP a, SEXP op) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    struct ggml_tensor * ta = TENSOR(c, a, "a");
    const int o = rg_int(op, "op");  /* the library refuses an unknown activation */
    return FINISH(ctx, "ggml_unary", ggml_unary(c->ctx, ta, (enum ggml_unary_op) o));
}

SEXP R_ggml_unary_op_name(SEXP op) { return Rf_mkString(ggml_unary_op_name((enum ggml_unary_op) rg_int(op, "op"))); }

SEXP R_ggml_get_unary_op(SEXP tensor) {
    const struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    ggml_clear_error();
    const enum ggml_unary_op op = ggml_get_unary_op(t);
    if (op == GGML_UNARY_OP_COUNT) rg_fail("ggml_get_unary_op");
    return Rf_ScalarInteger((int) op);
}

#define OP_A_EPS(fn) \
    SEXP R_##fn(SEXP ctx, SEXP a, SEXP eps) { \
        rg_ctx * c = rg_ctx_get(ctx, "ctx"); \
        struct ggml_tensor * ta = TENSOR(c, a, "a"); \
        const float e = rg_float(eps, "eps"); \
        return FINISH(ctx, #fn, fn(c->ctx, ta, e)); \
    }

OP_A_EPS(ggml_norm)
OP_A_EPS(ggml_rms_norm)

SEXP R_ggml_rms_norm_back(SEXP ctx, SEXP a, SEXP b, SEXP eps) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    struct ggml_tensor * ta = TENSOR(c, a, "a");
    struct ggml_tensor * tb = TENSOR(c, b, "b");
    const float e = rg_float(eps, "eps");
    return FINISH(ctx, "ggml_rms_norm_back", ggml_rms_norm_back(c->ctx, ta, tb, e));
}

SEXP R_ggml_soft_max_ext_back(SEXP ctx, SEXP a, SEXP b, SEXP scale, SEXP max_bias) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    struct ggml_tensor * ta = TENSOR(c, a, "a");
    struct ggml_tensor * tb = TENSOR(c, b, "b");
    const float sc = rg_float(scale, "scale"), mb = rg_float(max_bias, "max_bias");
    return FINISH(ctx, "ggml_soft_max_ext_back", ggml_soft_max_ext_back(c->ctx, ta, tb, sc, mb));
}

SEXP R_ggml_opt_step_adamw(SEXP ctx, SEXP a, SEXP grad, SEXP m, SEXP v, SEXP adamw_params) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    struct ggml_tensor * ta = TENSOR(c, a, "a");
    struct ggml_tensor * tg = TENSOR(c, grad, "grad");
    struct ggml_tensor * tm = TENSOR(c, m, "m");
    struct ggml_tensor * tv = TENSOR(c, v, "v");
    struct ggml_tensor * tp = TENSOR(c, adamw_params, "adamw_params");
    return FINISH(ctx, "ggml_opt_step_adamw", ggml_opt_step_adamw(c->ctx, ta, tg, tm, tv, tp));
}

SEXP R_ggml_opt_step_sgd(SEXP ctx, SEXP a, SEXP grad, SEXP sgd_params) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    struct ggml_tensor * ta = TENSOR(c, a, "a");
    struct ggml_tensor * tg = TENSOR(c, grad, "grad");
    struct ggml_tensor * tp = TENSOR(c, sgd_params, "sgd_params");
    return FINISH(ctx, "ggml_opt_step_sgd", ggml_opt_step_sgd(c->ctx, ta, tg, tp));
}

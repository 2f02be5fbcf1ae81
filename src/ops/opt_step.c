/* opt_step.c -- the optimizer steps opt_step_adamw and opt_step_sgd (kernel:
 * cpu/kernels/opt_step.c): nodes that update a parameter in place. They
 * have no backward rule. */
#include "ops/ops_internal.h"

/* The weights a (a contiguous F32 parameter) and each per-weight tensor in
 * `same` (gradient, moments: shaped like a), and the hyper-parameters (F32,
 * n_params elements). The result is a view of a whose computation updates a,
 * so building it into a graph performs the step. */
static struct ggml_tensor * opt_step(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a,
                                     struct ggml_tensor * const * same, const char * const * same_names, int n_same,
                                     struct ggml_tensor * hparams, int64_t n_params) {
    REQUIRE_F32(fn, a);
    if (!(a->flags & GGML_TENSOR_FLAG_PARAM)) { ggmlr_set_error("%s: a ('%s') must be a parameter (ggml_set_param)", fn, a->name); return NULL; }
    for (int i = 0; i < n_same; i++) {
        if (same[i]->type != GGML_TYPE_F32) return ggmlr_fail_type(fn, same_names[i], same[i], "F32");
        if (!ggml_are_same_shape(a, same[i])) return ggmlr_fail_shapes(fn, "every per-weight tensor must be shaped like a", a, same[i]);
    }
    for (int i = -1; i < n_same; i++) {
        const struct ggml_tensor * t = i < 0 ? a : same[i];
        if (!ggml_is_contiguous(t)) { ggmlr_set_error("%s: %s must be contiguous", fn, i < 0 ? "a" : same_names[i]); return NULL; }
    }
    if (hparams->type != GGML_TYPE_F32) return ggmlr_fail_type(fn, "the hyper-parameters", hparams, "F32");
    if (ggml_nelements(hparams) != n_params || !ggml_is_contiguous(hparams)) {
        ggmlr_set_error("%s: the hyper-parameters must be a contiguous F32 tensor of %lld elements (got %lld)", fn,
                        (long long) n_params, (long long) ggml_nelements(hparams));
        return NULL;
    }
    struct ggml_tensor * t = ggml_view_tensor(ctx, a);
    if (!t) return NULL;
    t->op = op;
    const struct ggmlr_opt_step_srcs srcs = {a, same[0], n_same > 1 ? same[1] : NULL, n_same > 1 ? same[2] : NULL, hparams};
    ggmlr_opt_step_srcs_encode(t, &srcs);
    return t;
}

struct ggml_tensor * ggml_opt_step_adamw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * grad,
                                         struct ggml_tensor * m, struct ggml_tensor * v, struct ggml_tensor * adamw_params) {
    const char * fn = "ggml_opt_step_adamw";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, grad); REQUIRE(fn, m); REQUIRE(fn, v); REQUIRE(fn, adamw_params);
    struct ggml_tensor * const same[3] = {grad, m, v};
    static const char * const names[3] = {"grad", "m", "v"};
    return opt_step(fn, ctx, GGML_OP_OPT_STEP_ADAMW, a, same, names, 3, adamw_params, 7);
}

struct ggml_tensor * ggml_opt_step_sgd(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * grad,
                                       struct ggml_tensor * sgd_params) {
    const char * fn = "ggml_opt_step_sgd";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, grad); REQUIRE(fn, sgd_params);
    struct ggml_tensor * const same[1] = {grad};
    static const char * const names[1] = {"grad"};
    return opt_step(fn, ctx, GGML_OP_OPT_STEP_SGD, a, same, names, 1, sgd_params, 2);
}

/* ops_train.c -- constructors of the ops a training loop needs beyond the
 * core set: embedding lookup (get_rows and its adjoint), the cross-entropy
 * loss and its gradient, argmax, and the optimizer steps. As in ops.c, only
 * checks and shapes live here; the kernels are cpu/rows.c, cpu/loss.c and
 * cpu/optim.c. */
#include "core/internal.h"

/* b as indices of a batched row lookup: I32 [n, ne2, ne3] against a table
 * whose dims 2 and 3 are (ne2, ne3). */
static bool check_indices(const char * fn, const struct ggml_tensor * table, const struct ggml_tensor * b) {
    if (b->type != GGML_TYPE_I32) { ggmlr_fail_type(fn, "b", b, "I32"); return false; }
    if (b->ne[3] != 1 || table->ne[2] != b->ne[1] || table->ne[3] != b->ne[2]) {
        ggmlr_fail_shapes(fn, "b must be [n, ne2, ne3] for a table [ne0, rows, ne2, ne3]", table, b);
        return false;
    }
    return true;
}

struct ggml_tensor * ggml_get_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_get_rows";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16 && a->type != GGML_TYPE_I32) return ggmlr_fail_type(fn, "a", a, "F32, F16 or I32");
    if (!check_indices(fn, a, b)) return NULL;
    /* upstream: float tables give F32 rows, an I32 table I32 rows */
    const enum ggml_type type = a->type == GGML_TYPE_I32 ? GGML_TYPE_I32 : GGML_TYPE_F32;
    const int64_t ne[4] = {a->ne[0], b->ne[0], b->ne[1], b->ne[2]};
    return ggmlr_new_node(ctx, GGML_OP_GET_ROWS, type, ne, a, b);
}

struct ggml_tensor * ggml_get_rows_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c) {
    const char * fn = "ggml_get_rows_back";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b); REQUIRE(fn, c);
    REQUIRE_F32(fn, a);
    if (!check_indices(fn, c, b)) return NULL;
    if (a->ne[0] != c->ne[0] || a->ne[1] != b->ne[0] || a->ne[2] != c->ne[2] || a->ne[3] != c->ne[3])
        return ggmlr_fail_shapes(fn, "a must be [c->ne[0], b->ne[0], c->ne[2], c->ne[3]] (a get_rows result of c)", a, c);
    if (c->ne[1] == 0 && ggml_nelements(b) > 0) return ggmlr_fail_shapes(fn, "c has no rows for the indices to pick", c, b);
    return ggmlr_new_node(ctx, GGML_OP_GET_ROWS_BACK, GGML_TYPE_F32, c->ne, a, b);
}

/* logits a [nc, rows...] F32 with at least one class and one row; labels b
 * F32 shaped like a, or I32 [rows of a] (one class index per row). */
static bool check_cross_entropy(const char * fn, const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->type != GGML_TYPE_F32) { ggmlr_fail_type(fn, "a", a, "F32"); return false; }
    if (ggml_nelements(a) == 0) { ggmlr_set_error("%s: the logits are empty (no class or no row)", fn); return false; }
    if (b->type == GGML_TYPE_F32) {
        if (!ggml_are_same_shape(a, b)) { ggmlr_fail_shapes(fn, "F32 labels must be shaped like the logits", a, b); return false; }
    } else if (b->type == GGML_TYPE_I32) {
        if (b->ne[0] != a->ne[1] || b->ne[1] != a->ne[2] || b->ne[2] != a->ne[3] || b->ne[3] != 1) {
            ggmlr_fail_shapes(fn, "I32 labels must be [ne1, ne2, ne3] of the logits (one class per row)", a, b);
            return false;
        }
    } else {
        ggmlr_fail_type(fn, "b", b, "F32 (distributions) or I32 (class indices)");
        return false;
    }
    return true;
}

struct ggml_tensor * ggml_cross_entropy_loss(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_cross_entropy_loss";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (!check_cross_entropy(fn, a, b)) return NULL;
    const int64_t ne[4] = {1, 1, 1, 1};
    return ggmlr_new_node(ctx, GGML_OP_CROSS_ENTROPY_LOSS, GGML_TYPE_F32, ne, a, b);
}

struct ggml_tensor * ggml_cross_entropy_loss_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c) {
    const char * fn = "ggml_cross_entropy_loss_back";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b); REQUIRE(fn, c);
    if (!check_cross_entropy(fn, a, b)) return NULL;
    REQUIRE_F32(fn, c);
    if (ggml_nelements(c) != 1) { ggmlr_set_error("%s: c (the loss gradient) must have one element (got %lld)", fn, (long long) ggml_nelements(c)); return NULL; }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_CROSS_ENTROPY_LOSS_BACK, GGML_TYPE_F32, a->ne, a, b);
    if (t) t->src[2] = c;
    return t;
}

struct ggml_tensor * ggml_argmax(struct ggml_context * ctx, struct ggml_tensor * a) {
    const char * fn = "ggml_argmax";
    REQUIRE_CTX(fn); REQUIRE(fn, a);
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16) return ggmlr_fail_type(fn, "a", a, "F32 or F16");
    if (a->ne[2] != 1 || a->ne[3] != 1) { ggmlr_set_error("%s: a must be a matrix (got ne2 = %lld, ne3 = %lld)", fn, (long long) a->ne[2], (long long) a->ne[3]); return NULL; }
    if (a->ne[0] < 1 || a->ne[0] > INT32_MAX) { ggmlr_set_error("%s: rows must have 1 to INT32_MAX elements (got %lld)", fn, (long long) a->ne[0]); return NULL; }
    const int64_t ne[4] = {a->ne[1], 1, 1, 1};
    return ggmlr_new_node(ctx, GGML_OP_ARGMAX, GGML_TYPE_I32, ne, a, NULL);
}

/* ---- optimizer steps ---- */

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
    t->src[0] = a;
    for (int i = 0; i < n_same; i++) t->src[1 + i] = same[i];
    t->src[1 + n_same] = hparams;
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

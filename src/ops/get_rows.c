/* get_rows.c -- embedding lookup: get_rows, get_rows_back (its adjoint,
 * a scatter-add), and the backward rule (kernel: cpu/kernels/get_rows.c). */
#include "ops/grad.h"

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
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16 && a->type != GGML_TYPE_BF16 && a->type != GGML_TYPE_I32 && !ggml_is_quantized(a->type))
        return ggmlr_fail_type(fn, "a", a, "F32, F16, BF16, I32 or a quantized type");
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

/* ---- backward: y = get_rows(a, idx): the rows of g scatter-added back to where they came from ---- */

static const char * refuse_get_rows(const struct ggml_tensor * node, const bool * need) {
    if (need[1]) return "GET_ROWS: the indices are integers and have no gradient";
    if (need[0] && A->type == GGML_TYPE_I32) return "GET_ROWS: an I32 table has no gradient";
    return NULL;
}

RULE(grad_get_rows) {
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_get_rows_back(ctx, g, B, A));
}

GRAD_RULE(get_rows, refuse_get_rows, grad_get_rows);

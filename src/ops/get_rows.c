/* get_rows.c -- rows by index: get_rows (embedding lookup), get_rows_back (its adjoint,
 * a scatter-add), set_rows (rows written at indices) and the backward rules (kernel: cpu/kernels/get_rows.c). */
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
    if (!check_indices(fn, c, b)) return NULL;
    /* a's rows beyond b's indices are not read (upstream: one row of a per index) */
    if (a->ne[0] != c->ne[0] || a->ne[1] < b->ne[0] || a->ne[2] != c->ne[2] || a->ne[3] != c->ne[3])
        return ggmlr_fail_shapes(fn, "a must be [c->ne[0], >= b->ne[0], c->ne[2], c->ne[3]] (a get_rows result of c)", a, c);
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

/* ---- set_rows: rows of b written into a at the indices c (a KV cache's write) ----
 * Upstream's slots: b, c, a (core/op_list.h); the result is a view of a. */

struct ggml_tensor * ggml_set_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c) {
    const char * fn = "ggml_set_rows";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b); REQUIRE(fn, c);
    /* a's rows are written converted: F32, F16, BF16 or a block type (a KV cache of Q8_0, as upstream;
     * a type stored here without a quantizer is refused when the graph computes) */
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16 && a->type != GGML_TYPE_BF16 && !ggml_is_quantized(a->type))
        return ggmlr_fail_type(fn, "a", a, "F32, F16, BF16 or a quantized type");
    if (a->ne[0] % ggml_blck_size(a->type) != 0) {
        ggmlr_set_error("%s: a's rows (%lld) must be whole blocks of %s (%lld)", fn, (long long) a->ne[0], ggml_type_name(a->type),
                        (long long) ggml_blck_size(a->type));
        return NULL;
    }
    if (b->type != GGML_TYPE_F32 && b->type != GGML_TYPE_F16) return ggmlr_fail_type(fn, "b", b, "F32 or F16");
    if (c->type != GGML_TYPE_I32 && c->type != GGML_TYPE_I64) return ggmlr_fail_type(fn, "c", c, "I32 or I64");
    if (a->ne[0] != b->ne[0] || a->ne[2] != b->ne[2] || a->ne[3] != b->ne[3])
        return ggmlr_fail_shapes(fn, "b must be [a->ne[0], n, a->ne[2], a->ne[3]]", a, b);
    if (c->ne[0] != b->ne[1] || c->ne[3] != 1 || c->ne[1] == 0 || c->ne[2] == 0 || b->ne[2] % c->ne[1] != 0 || b->ne[3] % c->ne[2] != 0)
        return ggmlr_fail_shapes(fn, "c must be [n, ne11, ne12] for b [ne0, n, ne2, ne3], with ne2 % ne11 == 0 and ne3 % ne12 == 0", b, c);
    if (a->nb[0] != ggml_type_size(a->type) || b->nb[0] != ggml_type_size(b->type)) {
        ggmlr_set_error("%s: the rows of a and b must be packed (nb[0] the element size)", fn);
        return NULL;
    }
    struct ggml_tensor * t = ggmlr_new_view(fn, ctx, a, GGML_OP_SET_ROWS, a->ne, a->nb, 0);
    if (!t) return NULL;
    const struct ggmlr_set_rows_srcs s = {a, b, c};
    ggmlr_set_rows_srcs_encode(t, &s);
    return t;
}

/* y = a with rows c[j] := b[j] (distinct rows in a batch: the kernel fails
 * otherwise): b's gradient is g's rows c[j] (get_rows), a's is g with those
 * rows zeroed (set_rows of zeros into a copy of g). */
static const char * refuse_set_rows(const struct ggml_tensor * node, const bool * need) {
    const struct ggmlr_set_rows_srcs s = ggmlr_set_rows_srcs_decode(node);
    if (need[1]) return "SET_ROWS: the indices are integers and have no gradient";
    if ((need[0] && s.b->type != GGML_TYPE_F32) || (need[2] && s.a->type != GGML_TYPE_F32))
        return "SET_ROWS: gradients need F32 a and b (an F16 write rounds)";
    if (need[0] && (s.c->ne[1] != s.b->ne[2] || s.c->ne[2] != s.b->ne[3]))
        return "SET_ROWS: b's gradient needs indices c [n, ne2, ne3] that do not broadcast";
    return NULL;
}

RULE(grad_set_rows) {
    const struct ggmlr_set_rows_srcs s = ggmlr_set_rows_srcs_decode(node);
    if (need[0] && !ggmlr_grad_acc(ctx, gph, s.b, ggml_get_rows(ctx, g, s.c))) return false;
    return !need[2] || ggmlr_grad_acc(ctx, gph, s.a, ggml_set_rows(ctx, ggml_dup(ctx, g), ggml_fill(ctx, s.b, 0.0f), s.c));
}

GRAD_RULE(set_rows, refuse_set_rows, grad_set_rows);

/* ---- the mixture-of-experts backward's row moves (ops_internal.h) ---- */

static struct ggml_tensor * flat_ids(struct ggml_context * ctx, struct ggml_tensor * ids) {
    struct ggml_tensor * c = ggmlr_grad_contiguous(ctx, ids);
    return c ? ggml_reshape_1d(ctx, c, ggml_nelements(ids)) : NULL;
}

struct ggml_tensor * ggmlr_gather_by_ids(struct ggml_context * ctx, struct ggml_tensor * table, struct ggml_tensor * ids) {
    return ggml_get_rows(ctx, table, flat_ids(ctx, ids));
}

struct ggml_tensor * ggmlr_scatter_by_ids(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * ids, int64_t n_rows) {
    struct ggml_tensor * shape = x ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, x->ne[0], n_rows) : NULL;
    return shape ? ggml_get_rows_back(ctx, x, flat_ids(ctx, ids), shape) : NULL;
}

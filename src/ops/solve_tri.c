/* solve_tri.c -- the triangular solve A X = B (GGML_OP_SOLVE_TRI) and its
 * backward rule (kernel: cpu/kernels/solve_tri.c). F32; any layout.
 *
 * a [n, n, ne2, ne3] holds A (element (i0, i1) is row i1, column i0), its
 * lower or upper triangle read, its diagonal taken as ones when uni;
 * b [k, n, ne2, ne3] holds B's k columns. The gradients of X = A^-1 B:
 *   dB = A^-T dX          (a solve with A's transpose: the other triangle)
 *   dA = -(dB X^T) on A's triangle (strictly below or above it when uni) */
#include "ops/grad.h"

struct ggml_tensor * ggml_solve_tri(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, bool left, bool lower,
                                    bool uni) {
    const char * fn = "ggml_solve_tri";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b); REQUIRE_F32(fn, a); REQUIRE_F32(fn, b);
    if (!left) {
        ggmlr_set_error("%s: left = false (X A = B) is not implemented (upstream's CPU backend neither): solve A^T X^T = B^T instead", fn);
        return NULL;
    }
    if (a->ne[0] != a->ne[1]) return ggmlr_fail_shapes(fn, "a must be square [n, n, ...]", a, b);
    if (b->ne[1] != a->ne[1] || b->ne[2] != a->ne[2] || b->ne[3] != a->ne[3])
        return ggmlr_fail_shapes(fn, "b must be [k, n, ne2, ne3] for a [n, n, ne2, ne3]", a, b);
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_SOLVE_TRI, GGML_TYPE_F32, b->ne, a, b);
    if (t) ggmlr_solve_tri_params_encode(t, &(struct ggmlr_solve_tri_params) {.left = 1, .lower = lower, .uni = uni});
    return t;
}

/* ---- backward ---- */

RULE(grad_solve_tri) {
    const struct ggmlr_solve_tri_params p = ggmlr_solve_tri_params_decode(node);
    /* A^T is the transposed view: its lower triangle is A's upper one */
    struct ggml_tensor * db = ggml_solve_tri(ctx, ggml_transpose(ctx, A), g, true, !p.lower, p.uni);
    if (!db) return false;
    if (need[1] && !ggmlr_grad_acc(ctx, gph, B, db)) return false;
    if (!need[0]) return true;
    /* mul_mat(X, dB)[j, i] = sum_c X[c, j] dB[c, i] = (dB X^T) at row i, column j */
    const enum ggml_tri_type keep = p.lower ? (p.uni ? GGML_TRI_TYPE_LOWER : GGML_TRI_TYPE_LOWER_DIAG)
                                            : (p.uni ? GGML_TRI_TYPE_UPPER : GGML_TRI_TYPE_UPPER_DIAG);
    struct ggml_tensor * outer = ggml_mul_mat(ctx, node, db);
    struct ggml_tensor * da = outer ? ggml_tri(ctx, outer, keep) : NULL;
    return ggmlr_grad_acc(ctx, gph, A, da ? ggml_scale(ctx, da, -1.0f) : NULL);
}

GRAD_RULE(solve_tri, NULL, grad_solve_tri);

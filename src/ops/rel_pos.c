/* rel_pos.c -- SAM's windowed attention (segment-anything's image encoder):
 * win_part / win_unpart (an image cut into w x w windows and put back),
 * get_rel_pos (a relative-position table read at every query-key offset),
 * add_rel_pos (its width and height terms added to attention scores), the
 * backward op GET_REL_POS_BACK and the rules (kernels: cpu/kernels/rel_pos.c).
 * F32; get_rel_pos also F16.
 *
 * Gradients: win_part and win_unpart are each other's (the padding's
 * gradient dropped); get_rel_pos is a gather, so its table's gradient is
 * the scatter-add GET_REL_POS_BACK; add_rel_pos passes g to a and sums it
 * over the broadcast axis for pw (over kh) and ph (over kw). */
#include "ops/grad.h"

#include <stdint.h>

/* ceil(n / w) for n >= 0, w > 0 */
static int64_t n_windows(int64_t n, int w) { return n / w + (n % w != 0); }

struct ggml_tensor * ggml_win_part(struct ggml_context * ctx, struct ggml_tensor * a, int w) {
    const char * fn = "ggml_win_part";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (w <= 0) { ggmlr_set_error("%s: the window's side w must be > 0 (got %d)", fn, w); return NULL; }
    if (a->ne[3] != 1) {
        char sa[96];
        ggmlr_set_error("%s: a must be one image [C, W, H, 1], got %s", fn, ggmlr_shape_str(a, sa, sizeof sa));
        return NULL;
    }
    const int64_t npx = n_windows(a->ne[1], w), npy = n_windows(a->ne[2], w);
    if (npx > INT32_MAX || npy > INT32_MAX || !ggmlr_check_size_bound(fn, (double) npx * (double) npy)) {
        ggmlr_set_error("%s: %lld x %lld windows are too many", fn, (long long) npx, (long long) npy);
        return NULL;
    }
    const int64_t ne[4] = {a->ne[0], w, w, npx * npy};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_WIN_PART, GGML_TYPE_F32, ne, a, NULL);
    if (t) ggmlr_win_part_params_encode(t, &(const struct ggmlr_win_part_params) {(int32_t) npx, (int32_t) npy, w});
    return t;
}

/* ggml_win_unpart with the image's sides as int64_t (the rule of win_part passes its input's) */
static struct ggml_tensor * win_unpart(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, int64_t w0, int64_t h0, int w) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (w <= 0 || w0 < 0 || h0 < 0) {
        ggmlr_set_error("%s: needs w > 0, w0 >= 0 and h0 >= 0 (got w %d, w0 %lld, h0 %lld)", fn, w, (long long) w0, (long long) h0);
        return NULL;
    }
    const int64_t np = n_windows(w0, w) * n_windows(h0, w);
    if (a->ne[1] != w || a->ne[2] != w || a->ne[3] != np) {
        ggmlr_set_error("%s: a must be ggml_win_part's [C, %d, %d, %lld] for a %lld x %lld image, got [%lld, %lld, %lld, %lld]", fn, w, w,
                        (long long) np, (long long) w0, (long long) h0, (long long) a->ne[0], (long long) a->ne[1], (long long) a->ne[2],
                        (long long) a->ne[3]);
        return NULL;
    }
    const int64_t ne[4] = {a->ne[0], w0, h0, 1};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_WIN_UNPART, GGML_TYPE_F32, ne, a, NULL);
    if (t) ggmlr_i32_param_encode(t, w);
    return t;
}

struct ggml_tensor * ggml_win_unpart(struct ggml_context * ctx, struct ggml_tensor * a, int w0, int h0, int w) {
    return win_unpart("ggml_win_unpart", ctx, a, w0, h0, w);
}

struct ggml_tensor * ggml_get_rel_pos(struct ggml_context * ctx, struct ggml_tensor * a, int qh, int kh) {
    const char * fn = "ggml_get_rel_pos";
    REQUIRE_CTX(fn); REQUIRE(fn, a);
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16) return ggmlr_fail_type(fn, "a", a, "F32 or F16");
    if (qh != kh || kh <= 0) { ggmlr_set_error("%s: needs qh == kh > 0 (got qh %d, kh %d)", fn, qh, kh); return NULL; }
    if (a->ne[1] != 2 * (int64_t) kh - 1 || a->ne[2] != 1 || a->ne[3] != 1) {
        ggmlr_set_error("%s: a must be the table [C, 2 kh - 1] = [C, %lld], got [%lld, %lld, %lld, %lld]", fn, 2 * (long long) kh - 1,
                        (long long) a->ne[0], (long long) a->ne[1], (long long) a->ne[2], (long long) a->ne[3]);
        return NULL;
    }
    const int64_t ne[4] = {a->ne[0], kh, qh, 1};
    return ggmlr_new_node(ctx, GGML_OP_GET_REL_POS, a->type, ne, a, NULL);
}

static struct ggml_tensor * add_rel_pos_op(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * pw,
                                           struct ggml_tensor * ph, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, pw); REQUIRE(fn, ph);
    REQUIRE_F32(fn, a); REQUIRE_F32(fn, pw); REQUIRE_F32(fn, ph);
    if (!ggml_are_same_shape(pw, ph)) return ggmlr_fail_shapes(fn, "pw and ph must have one shape", pw, ph);
    const int64_t k = pw->ne[0];
    /* a's row is K x K key positions: ne0 == K*K, checked without forming K*K */
    const bool k_fits = k == 0 ? a->ne[0] == 0 : a->ne[0] % k == 0 && a->ne[0] / k == k;
    if (!k_fits || pw->ne[1] * pw->ne[2] != a->ne[1] || pw->ne[3] != a->ne[2] || a->ne[3] != 1)
        return ggmlr_fail_shapes(fn, "a must be [K*K, R1*R2, B, 1] for pw, ph [K, R1, R2, B]", a, pw);
    struct ggml_tensor * t = inplace ? ggmlr_new_inplace(fn, ctx, a, GGML_OP_ADD_REL_POS)
                                     : ggmlr_new_node(ctx, GGML_OP_ADD_REL_POS, GGML_TYPE_F32, a->ne, NULL, NULL);
    if (!t) return NULL;
    ggmlr_add_rel_pos_srcs_encode(t, &(const struct ggmlr_add_rel_pos_srcs) {a, pw, ph});
    ggmlr_i32_param_encode(t, inplace);
    return t;
}

struct ggml_tensor * ggml_add_rel_pos(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * pw, struct ggml_tensor * ph) {
    return add_rel_pos_op("ggml_add_rel_pos", ctx, a, pw, ph, false);
}

struct ggml_tensor * ggml_add_rel_pos_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * pw,
                                              struct ggml_tensor * ph) {
    return add_rel_pos_op("ggml_add_rel_pos_inplace", ctx, a, pw, ph, true);
}

/* ---- backward ---- */

RULE(grad_win_part) {
    const int w = ggmlr_win_part_params_decode(node).w;
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, win_unpart("win_part's gradient", ctx, g, A->ne[1], A->ne[2], w));
}

RULE(grad_win_unpart) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggml_win_part(ctx, g, ggmlr_i32_param_decode(node))); }

/* The table's gradient given dy [C, k, k] (GET_REL_POS_BACK):
 * da[:, p] = sum over i2 of dy[:, k - 1 - p + i2, i2], [C, 2k - 1]. */
static struct ggml_tensor * get_rel_pos_back(struct ggml_context * ctx, struct ggml_tensor * dy) {
    const char * fn = "get_rel_pos_back";
    REQUIRE_CTX(fn); REQUIRE(fn, dy); REQUIRE_F32(fn, dy);
    if (dy->ne[1] != dy->ne[2] || dy->ne[1] <= 0 || dy->ne[3] != 1) {
        char sd[96];
        ggmlr_set_error("%s: dy must be [C, k, k, 1], got %s", fn, ggmlr_shape_str(dy, sd, sizeof sd));
        return NULL;
    }
    const int64_t ne[4] = {dy->ne[0], 2 * dy->ne[1] - 1, 1, 1};
    return ggmlr_new_node(ctx, GGML_OP_GET_REL_POS_BACK, GGML_TYPE_F32, ne, dy, NULL);
}

RULE(grad_get_rel_pos) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, get_rel_pos_back(ctx, g)); }

/* g [K*K, R, B] seen as [K (kw), K (kh), R, B]: pw's gradient sums over kh,
 * ph's over kw; each a [1, K, R, B] reshaped to pw's [K, R1, R2, B]. */
RULE(grad_add_rel_pos) {
    const struct ggmlr_add_rel_pos_srcs s = ggmlr_add_rel_pos_srcs_decode(node);
    const int64_t k = s.pw->ne[0];
    if (need[0] && !ggmlr_grad_acc(ctx, gph, s.a, g)) return false;
    if (!need[1] && !need[2]) return true;
    struct ggml_tensor * g4 = ggml_reshape_4d(ctx, ggmlr_grad_contiguous(ctx, g), k, k, node->ne[1], node->ne[2]);
    if (!g4) return false;
    const int64_t * pne = s.pw->ne;
    if (need[1]) {
        struct ggml_tensor * over_kh = ggml_sum_rows(ctx, ggmlr_grad_contiguous(ctx, ggml_transpose(ctx, g4)));
        if (!ggmlr_grad_acc(ctx, gph, s.pw, ggml_reshape_4d(ctx, over_kh, pne[0], pne[1], pne[2], pne[3]))) return false;
    }
    return !need[2] || ggmlr_grad_acc(ctx, gph, s.ph, ggml_reshape_4d(ctx, ggml_sum_rows(ctx, g4), pne[0], pne[1], pne[2], pne[3]));
}

GRAD_RULE(win_part, NULL, grad_win_part);
GRAD_RULE(win_unpart, NULL, grad_win_unpart);
GRAD_RULE(get_rel_pos, ggmlr_refuse_not_f32, grad_get_rel_pos);
GRAD_RULE(add_rel_pos, NULL, grad_add_rel_pos);

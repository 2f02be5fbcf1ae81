/* shape.c -- CONCAT, PAD (zeros or circular), PAD_REFLECT_1D, PAD_BACK,
 * UPSCALE, UPSCALE_BACK and their backward rules (kernels:
 * cpu/kernels/shape.c).
 *
 * CONCAT and a zero PAD copy each input element to one place of the result,
 * so an input's gradient is the matching region of g (a view, made
 * contiguous). A circular or reflecting pad copies some elements to several
 * places; PAD_BACK sums g over them (the pad's transpose, whose own gradient
 * is the pad again).
 * UPSCALE is linear: each output is a weighted sum of inputs (one with
 * NEAREST, 2x2 with BILINEAR, 4x4 with BICUBIC, the triangle filter's support
 * with ANTIALIAS), and its gradient UPSCALE_BACK scatters dy with the same
 * weights (the adjoint). */
#include "ops/grad.h"

struct ggml_tensor * ggml_concat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int dim) {
    const char * fn = "ggml_concat";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (dim < 0 || dim >= GGML_MAX_DIMS) { ggmlr_set_error("%s: dim %d is not in [0, %d)", fn, dim, GGML_MAX_DIMS); return NULL; }
    if (a->type != b->type) return ggmlr_fail_type(fn, "b", b, ggml_type_name(a->type));
    int64_t ne[4];
    for (int d = 0; d < 4; d++) {
        if (d != dim && a->ne[d] != b->ne[d]) return ggmlr_fail_shapes(fn, "the dims other than dim must be equal", a, b);
        if (!ggmlr_check_size_bound(fn, (double) a->ne[d] + (double) b->ne[d])) return NULL;
        ne[d] = d == dim ? a->ne[d] + b->ne[d] : a->ne[d];
    }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_CONCAT, a->type, ne, a, b);
    if (t) ggmlr_i32_param_encode(t, dim);
    return t;
}

/* PAD (zeros or circular) of a by p's paddings, each >= 0; a circular pad
 * reads a[(i - lp) mod n], so a padded dim must hold an element. */
static struct ggml_tensor * pad_node(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, const struct ggmlr_pad_params * p) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    int64_t ne[4];
    for (int d = 0; d < 4; d++) {
        if (p->lp[d] < 0 || p->rp[d] < 0) {
            ggmlr_set_error("%s: paddings must be >= 0 (dim %d: %d before, %d after)", fn, d, p->lp[d], p->rp[d]);
            return NULL;
        }
        if (p->mode == GGMLR_PAD_CIRCULAR && a->ne[d] == 0 && (p->lp[d] || p->rp[d])) {
            ggmlr_set_error("%s: dim %d is empty, so it cannot be padded circularly (%d before, %d after)", fn, d, p->lp[d], p->rp[d]);
            return NULL;
        }
        if (!ggmlr_check_size_bound(fn, (double) a->ne[d] + p->lp[d] + p->rp[d])) return NULL;
        ne[d] = a->ne[d] + p->lp[d] + p->rp[d];
    }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_PAD, GGML_TYPE_F32, ne, a, NULL);
    if (t) ggmlr_pad_params_encode(t, p);
    return t;
}

struct ggml_tensor * ggml_pad_ext(struct ggml_context * ctx, struct ggml_tensor * a, int lp0, int rp0, int lp1, int rp1, int lp2, int rp2,
                                  int lp3, int rp3) {
    const struct ggmlr_pad_params p = {{lp0, lp1, lp2, lp3}, {rp0, rp1, rp2, rp3}, GGMLR_PAD_ZEROS};
    return pad_node("ggml_pad_ext", ctx, a, &p);
}

struct ggml_tensor * ggml_pad(struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1, int p2, int p3) {
    return ggml_pad_ext(ctx, a, 0, p0, 0, p1, 0, p2, 0, p3);
}

struct ggml_tensor * ggml_pad_ext_circular(struct ggml_context * ctx, struct ggml_tensor * a, int lp0, int rp0, int lp1, int rp1, int lp2,
                                           int rp2, int lp3, int rp3) {
    const struct ggmlr_pad_params p = {{lp0, lp1, lp2, lp3}, {rp0, rp1, rp2, rp3}, GGMLR_PAD_CIRCULAR};
    return pad_node("ggml_pad_ext_circular", ctx, a, &p);
}

struct ggml_tensor * ggml_pad_circular(struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1, int p2, int p3) {
    return ggml_pad_ext_circular(ctx, a, 0, p0, 0, p1, 0, p2, 0, p3);
}

/* a mirror reaches p elements past the edge it does not repeat: 0 <= p < ne0 */
struct ggml_tensor * ggml_pad_reflect_1d(struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1) {
    const char * fn = "ggml_pad_reflect_1d";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (p0 < 0 || p1 < 0 || p0 >= a->ne[0] || p1 >= a->ne[0]) {
        ggmlr_set_error("%s: paddings %d, %d must be >= 0 and < ne0 = %lld", fn, p0, p1, (long long) a->ne[0]);
        return NULL;
    }
    const int64_t ne[4] = {a->ne[0] + p0 + p1, a->ne[1], a->ne[2], a->ne[3]};  /* <= 3 ne0: no overflow */
    const struct ggmlr_pad_params p = {{p0, 0, 0, 0}, {p1, 0, 0, 0}, GGMLR_PAD_REFLECT};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_PAD_REFLECT_1D, GGML_TYPE_F32, ne, a, NULL);
    if (t) ggmlr_pad_params_encode(t, &p);
    return t;
}

/* NEAREST, BILINEAR or BICUBIC, with GGML_SCALE_FLAG_ALIGN_CORNERS or not; GGML_SCALE_FLAG_ANTIALIAS with
 * BILINEAR only (upstream's assert) */
static bool scale_mode_ok(const char * fn, uint32_t mode) {
    const uint32_t m = mode & 0xFF, flags = mode & ~0xFFu;
    const uint32_t known = (uint32_t) GGML_SCALE_FLAG_ALIGN_CORNERS | (uint32_t) GGML_SCALE_FLAG_ANTIALIAS;
    if (m >= GGML_SCALE_MODE_COUNT || (flags & ~known) || ((flags & GGML_SCALE_FLAG_ANTIALIAS) && m != GGML_SCALE_MODE_BILINEAR)) {
        ggmlr_set_error("%s: mode 0x%x: NEAREST, BILINEAR or BICUBIC, with GGML_SCALE_FLAG_ALIGN_CORNERS or not, and "
                        "GGML_SCALE_FLAG_ANTIALIAS with BILINEAR only", fn, (unsigned) mode);
        return false;
    }
    return true;
}

static struct ggml_tensor * upscale_node(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, const int64_t ne[4],
                                         uint32_t mode) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE_F32(fn, a);
    if (!scale_mode_ok(fn, mode)) return NULL;
    for (int d = 0; d < 4; d++)
        if (ne[d] <= 0 || a->ne[d] <= 0) {
            ggmlr_set_error("%s: sizes must be > 0 (dim %d: %lld from %lld)", fn, d, (long long) ne[d], (long long) a->ne[d]);
            return NULL;
        }
    struct ggml_tensor * t = ggmlr_new_node(ctx, op, GGML_TYPE_F32, ne, a, NULL);
    if (t) ggmlr_i32_param_encode(t, (int32_t) mode);
    return t;
}

struct ggml_tensor * ggml_interpolate(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                      uint32_t mode) {
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return upscale_node("ggml_interpolate", ctx, GGML_OP_UPSCALE, a, ne, mode);
}

struct ggml_tensor * ggml_upscale_ext(struct ggml_context * ctx, struct ggml_tensor * a, int ne0, int ne1, int ne2, int ne3,
                                      enum ggml_scale_mode mode) {
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return upscale_node("ggml_upscale_ext", ctx, GGML_OP_UPSCALE, a, ne, (uint32_t) mode);
}

struct ggml_tensor * ggml_upscale(struct ggml_context * ctx, struct ggml_tensor * a, int scale_factor, enum ggml_scale_mode mode) {
    REQUIRE("ggml_upscale", a);
    if (scale_factor <= 1) { ggmlr_set_error("ggml_upscale: scale_factor must be > 1 (got %d)", scale_factor); return NULL; }
    if (!ggmlr_check_size_bound("ggml_upscale", (double) a->ne[0] * scale_factor) ||
        !ggmlr_check_size_bound("ggml_upscale", (double) a->ne[1] * scale_factor))
        return NULL;
    const int64_t ne[4] = {a->ne[0] * scale_factor, a->ne[1] * scale_factor, a->ne[2], a->ne[3]};
    return upscale_node("ggml_upscale", ctx, GGML_OP_UPSCALE, a, ne, (uint32_t) mode);
}

/* ---- backward ---- */

/* g's region of shape ne starting at element o, as a contiguous tensor */
static struct ggml_tensor * region_of(struct ggml_context * ctx, struct ggml_tensor * g, const int64_t ne[4], const int64_t o[4]) {
    const size_t off = (size_t) o[0] * g->nb[0] + (size_t) o[1] * g->nb[1] + (size_t) o[2] * g->nb[2] + (size_t) o[3] * g->nb[3];
    struct ggml_tensor * v = ggml_view_4d(ctx, g, ne[0], ne[1], ne[2], ne[3], g->nb[1], g->nb[2], g->nb[3], off);
    return v ? ggml_cont(ctx, v) : NULL;
}

RULE(grad_concat) {
    const int dim = ggmlr_i32_param_decode(node);
    int64_t o[4] = {0, 0, 0, 0};
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, region_of(ctx, g, A->ne, o))) return false;
    o[dim] = A->ne[dim];
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, region_of(ctx, g, B->ne, o));
}

/* The gradient of a circular or reflecting pad fwd's input, given dy shaped
 * like fwd (PAD_BACK): dx[j] = sum of dy[i] over the i that read a[j]. */
static struct ggml_tensor * pad_back(struct ggml_context * ctx, const struct ggml_tensor * fwd, struct ggml_tensor * dy) {
    const char * fn = "pad_back";
    REQUIRE_CTX(fn); REQUIRE(fn, fwd); REQUIRE(fn, dy);
    if ((fwd->op != GGML_OP_PAD && fwd->op != GGML_OP_PAD_REFLECT_1D) || dy->type != GGML_TYPE_F32 || !ggml_are_same_shape(dy, fwd)) {
        ggmlr_set_error("%s: needs a PAD or PAD_REFLECT_1D node and F32 dy shaped like it", fn);
        return NULL;
    }
    const struct ggmlr_pad_params p = ggmlr_pad_params_decode(fwd);
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_PAD_BACK, GGML_TYPE_F32, fwd->src[0]->ne, dy, NULL);
    if (t) ggmlr_pad_params_encode(t, &p);
    return t;
}

/* zeros: g's region where a sits; circular, reflect: PAD_BACK folds the
 * padding back onto the elements it copies */
RULE(grad_pad) {
    if (!need[0]) return true;
    const struct ggmlr_pad_params p = ggmlr_pad_params_decode(node);
    if (p.mode != GGMLR_PAD_ZEROS) return ggmlr_grad_acc(ctx, gph, A, pad_back(ctx, node, g));
    const int64_t o[4] = {p.lp[0], p.lp[1], p.lp[2], p.lp[3]};
    return ggmlr_grad_acc(ctx, gph, A, region_of(ctx, g, A->ne, o));
}

/* PAD_BACK is the transpose of its pad, so its gradient is that pad of g */
RULE(grad_pad_back) {
    if (!need[0]) return true;
    const struct ggmlr_pad_params p = ggmlr_pad_params_decode(node);
    struct ggml_tensor * gy = p.mode == GGMLR_PAD_REFLECT
                                  ? ggml_pad_reflect_1d(ctx, g, p.lp[0], p.rp[0])
                                  : ggml_pad_ext_circular(ctx, g, p.lp[0], p.rp[0], p.lp[1], p.rp[1], p.lp[2], p.rp[2], p.lp[3], p.rp[3]);
    return ggmlr_grad_acc(ctx, gph, A, gy);
}

/* The gradient of UPSCALE node fwd's input, given dy shaped like fwd (UPSCALE_BACK). */
static struct ggml_tensor * upscale_back(struct ggml_context * ctx, const struct ggml_tensor * fwd, struct ggml_tensor * dy) {
    const char * fn = "upscale_back";
    REQUIRE_CTX(fn); REQUIRE(fn, fwd); REQUIRE(fn, dy);
    if (fwd->op != GGML_OP_UPSCALE || dy->type != GGML_TYPE_F32 || !ggml_are_same_shape(dy, fwd)) {
        ggmlr_set_error("%s: needs an UPSCALE node and F32 dy shaped like it", fn);
        return NULL;
    }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_UPSCALE_BACK, GGML_TYPE_F32, fwd->src[0]->ne, dy, NULL);
    if (t) ggmlr_i32_param_encode(t, ggmlr_i32_param_decode(fwd));
    return t;
}

RULE(grad_upscale) { return !need[0] || ggmlr_grad_acc(ctx, gph, A, upscale_back(ctx, node, g)); }

GRAD_RULE(concat, NULL, grad_concat);
GRAD_RULE(pad, NULL, grad_pad);
GRAD_RULE(pad_back, NULL, grad_pad_back);
GRAD_RULE(upscale, NULL, grad_upscale);

/* conv.c -- convolution: IM2COL, its adjoint IM2COL_BACK, the transposed
 * convolutions CONV_TRANSPOSE_1D/_2D and their backward rules (kernels:
 * cpu/kernels/conv.c), and the convolutions built from im2col + mul_mat as
 * upstream builds them, so they run through the GEMM.
 *
 * im2col gathers each output position's receptive field into one row,
 * col[(ic, kh, kw), ow, oh, n] = b[ow s0 + kw d0 - p0, oh s1 + kh d1 - p1, ic, n]
 * (zero outside b), so that conv = col . kernel. It is linear in b, and
 * IM2COL_BACK (scatter-add of col back onto the image) is its adjoint:
 * d b = im2col_back(d col), d (d col) = im2col(d b). The kernel tensor is read
 * for its shape only, so it gets no gradient here (it gets one through the
 * mul_mat of the convolution). The kernel and the image may be F16 (the
 * patches then too, as upstream makes them); F16 tensors get no gradient. */
#include "ops/grad.h"

static bool f32_or_f16(enum ggml_type t) { return t == GGML_TYPE_F32 || t == GGML_TYPE_F16; }

static int64_t conv_out_size(int64_t in, int64_t k, int s, int p, int d) { return (in + 2 * (int64_t) p - (int64_t) d * (k - 1) - 1) / s + 1; }

/* Strides > 0, dilations > 0, paddings >= 0 on the axes the op reads. */
static bool im2col_params_ok(const char * fn, const struct ggmlr_im2col_params * p) {
    if (p->s0 <= 0 || p->d0 <= 0 || p->p0 < 0 || (p->is_2d && (p->s1 <= 0 || p->d1 <= 0 || p->p1 < 0))) {
        ggmlr_set_error("%s: strides and dilations must be > 0 and paddings >= 0 (s0 %d s1 %d p0 %d p1 %d d0 %d d1 %d)", fn, p->s0, p->s1,
                        p->p0, p->p1, p->d0, p->d1);
        return false;
    }
    return true;
}

/* The patches' shape for kernel a and data of shape bne; false (message
 * set) when a and the data disagree or the output would be empty. */
static bool im2col_shape(const char * fn, const struct ggml_tensor * a, const int64_t bne[4], const struct ggmlr_im2col_params * p,
                         int64_t ne[4]) {
    if (p->is_2d ? a->ne[2] != bne[2] : (a->ne[1] != bne[1] || bne[3] != 1)) {
        ggmlr_set_error("%s: the kernel's input channels (%lld) differ from the data's (%lld)%s", fn, (long long) a->ne[p->is_2d ? 2 : 1],
                        (long long) bne[p->is_2d ? 2 : 1], p->is_2d ? "" : ", or the 1-D data has ne3 > 1");
        return false;
    }
    const double kdim = (double) a->ne[0] * (double) a->ne[1] * (double) a->ne[2];
    if (!ggmlr_check_size_bound(fn, (double) bne[0] + 2.0 * p->p0 + (double) p->d0 * (double) a->ne[0]) ||
        !ggmlr_check_size_bound(fn, p->is_2d ? (double) bne[1] + 2.0 * p->p1 + (double) p->d1 * (double) a->ne[1] : 0.0) ||
        !ggmlr_check_size_bound(fn, kdim))
        return false;
    const int64_t ow = conv_out_size(bne[0], a->ne[0], p->s0, p->p0, p->d0);
    const int64_t oh = p->is_2d ? conv_out_size(bne[1], a->ne[1], p->s1, p->p1, p->d1) : 1;
    if (ow <= 0 || oh <= 0) {
        ggmlr_set_error("%s: the data [%lld, %lld] is smaller than the dilated kernel [%lld, %lld] with its padding", fn, (long long) bne[0],
                        (long long) bne[1], (long long) a->ne[0], (long long) (p->is_2d ? a->ne[1] : 1));
        return false;
    }
    if (p->is_2d) { ne[0] = a->ne[2] * a->ne[1] * a->ne[0]; ne[1] = ow; ne[2] = oh; ne[3] = bne[3]; }
    else          { ne[0] = a->ne[1] * a->ne[0];            ne[1] = ow; ne[2] = bne[2]; ne[3] = 1; }
    return true;
}

struct ggml_tensor * ggml_im2col(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int s1, int p0, int p1,
                                 int d0, int d1, bool is_2d, enum ggml_type dst_type) {
    const char * fn = "ggml_im2col";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (!f32_or_f16(b->type)) return ggmlr_fail_type(fn, "b", b, "F32 or F16");
    if (!f32_or_f16(dst_type)) {
        ggmlr_set_error("%s: dst_type must be F32 or F16 (got %s)", fn, ggml_type_name(dst_type));
        return NULL;
    }
    const struct ggmlr_im2col_params p = {s0, s1, p0, p1, d0, d1, is_2d};
    int64_t ne[4];
    if (!im2col_params_ok(fn, &p) || !im2col_shape(fn, a, b->ne, &p, ne)) return NULL;
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_IM2COL, dst_type, ne, a, b);
    if (t) ggmlr_im2col_params_encode(t, &p);
    return t;
}

struct ggml_tensor * ggml_im2col_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int64_t * ne, int s0, int s1,
                                      int p0, int p1, int d0, int d1, bool is_2d) {
    const char * fn = "ggml_im2col_back";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b); REQUIRE(fn, ne); REQUIRE_F32(fn, a);
    const struct ggmlr_im2col_params p = {s0, s1, p0, p1, d0, d1, is_2d};
    int64_t col[4];
    for (int i = 0; i < 4; i++)
        if (ne[i] <= 0) { ggmlr_set_error("%s: the data's shape must be positive (ne[%d] = %lld)", fn, i, (long long) ne[i]); return NULL; }
    if (!im2col_params_ok(fn, &p) || !im2col_shape(fn, b, ne, &p, col)) return NULL;
    if (col[0] != a->ne[0] || col[1] != a->ne[1] || col[2] != a->ne[2] || col[3] != a->ne[3]) {
        char buf[64];
        ggmlr_set_error("%s: a %s is not the im2col shape [%lld, %lld, %lld, %lld] of this kernel and data", fn, ggmlr_shape_str(a, buf, sizeof buf),
                        (long long) col[0], (long long) col[1], (long long) col[2], (long long) col[3]);
        return NULL;
    }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_IM2COL_BACK, GGML_TYPE_F32, ne, a, b);
    if (t) ggmlr_im2col_params_encode(t, &p);
    return t;
}

/* ---- convolutions: im2col, then one GEMM of the patches with the kernel ---- */

/* col [K, P...] reshaped to [K, P] times the kernel reshaped to [K, OC] -> [P, OC].
 * An F16 kernel (upstream's patches are then F16 too) is widened to F32 for
 * the GEMM's second operand: the products are those of upstream's. */
static struct ggml_tensor * patches_times_kernel(struct ggml_context * ctx, struct ggml_tensor * col, struct ggml_tensor * a, int64_t oc) {
    if (!col) return NULL;
    struct ggml_tensor * c2 = ggml_reshape_2d(ctx, col, col->ne[0], col->ne[1] * col->ne[2] * col->ne[3]);  /* no division: ne0 may be 0 */
    struct ggml_tensor * a2 = c2 ? ggml_reshape_2d(ctx, a, col->ne[0], oc) : NULL;
    if (a2 && a2->type != GGML_TYPE_F32) a2 = ggml_cpy(ctx, a2, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, a2->ne[0], a2->ne[1]));
    return a2 ? ggml_mul_mat(ctx, c2, a2) : NULL;
}

/* upstream's patches have the kernel's type: F16 for an F16 kernel, else F32 */
static enum ggml_type patch_type(const struct ggml_tensor * a) { return a->type == GGML_TYPE_F16 ? GGML_TYPE_F16 : GGML_TYPE_F32; }

/* r [P, OC] with P = (n0, n1, N) -> [n0, n1, OC, N]: the batch goes outermost */
static struct ggml_tensor * channels_inside_batch(struct ggml_context * ctx, struct ggml_tensor * r, int64_t n0, int64_t n1, int64_t n, int64_t oc) {
    struct ggml_tensor * t = r ? ggml_reshape_4d(ctx, r, n0, n1, n, oc) : NULL;
    t = t ? ggml_permute(ctx, t, 0, 1, 3, 2) : NULL;
    return t ? ggml_cont(ctx, t) : NULL;
}

struct ggml_tensor * ggml_conv_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int p0, int d0) {
    REQUIRE("ggml_conv_1d", a);
    struct ggml_tensor * col = ggml_im2col(ctx, a, b, s0, 0, p0, 0, d0, 0, false, patch_type(a));  /* [IC*K, OW, N] */
    struct ggml_tensor * r = patches_times_kernel(ctx, col, a, a->ne[2]);                           /* [OW*N, OC] */
    /* upstream reshapes r to [OW, OC, N] directly, which is right for N = 1 only */
    struct ggml_tensor * t = channels_inside_batch(ctx, r, col ? col->ne[1] : 0, 1, col ? col->ne[2] : 0, a->ne[2]);
    return t ? ggml_reshape_3d(ctx, t, t->ne[0], t->ne[2], t->ne[3]) : NULL;
}

struct ggml_tensor * ggml_conv_1d_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s, int d) {
    REQUIRE("ggml_conv_1d_ph", a);
    return ggml_conv_1d(ctx, a, b, s, (int) (a->ne[0] / 2), d);
}

struct ggml_tensor * ggml_conv_2d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int s1, int p0, int p1,
                                  int d0, int d1) {
    REQUIRE("ggml_conv_2d", a);
    struct ggml_tensor * col = ggml_im2col(ctx, a, b, s0, s1, p0, p1, d0, d1, true, patch_type(a));  /* [IC*KH*KW, OW, OH, N] */
    struct ggml_tensor * r = patches_times_kernel(ctx, col, a, a->ne[3]);                            /* [OW*OH*N, OC] */
    return col ? channels_inside_batch(ctx, r, col->ne[1], col->ne[2], col->ne[3], a->ne[3]) : NULL;
}

struct ggml_tensor * ggml_conv_2d_sk_p0(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE("ggml_conv_2d_sk_p0", a);
    return ggml_conv_2d(ctx, a, b, (int) a->ne[0], (int) a->ne[1], 0, 0, 1, 1);
}

struct ggml_tensor * ggml_conv_2d_s1_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    REQUIRE("ggml_conv_2d_s1_ph", a);
    return ggml_conv_2d(ctx, a, b, 1, 1, (int) (a->ne[0] / 2), (int) (a->ne[1] / 2), 1, 1);
}

/* Depthwise: each channel c is its own 1-channel image (b viewed as
 * [IW, IH, 1, C*N]); its patches [KH*KW, OW*OH, C, N] meet kernel c's row
 * [KH*KW, 1, C] in a mul_mat broadcast over the batch. */
struct ggml_tensor * ggml_conv_2d_dw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int s1, int p0, int p1,
                                     int d0, int d1) {
    const char * fn = "ggml_conv_2d_dw";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (a->ne[2] != 1 || a->ne[3] != b->ne[2]) {
        char sa[64], sb[64];
        ggmlr_set_error("%s: the kernel %s must be [KW, KH, 1, C] for data %s with C channels", fn, ggmlr_shape_str(a, sa, sizeof sa),
                        ggmlr_shape_str(b, sb, sizeof sb));
        return NULL;
    }
    struct ggml_tensor * b1 = ggml_reshape_4d(ctx, b, b->ne[0], b->ne[1], 1, b->ne[2] * b->ne[3]);
    struct ggml_tensor * col = b1 ? ggml_im2col(ctx, a, b1, s0, s1, p0, p1, d0, d1, true, GGML_TYPE_F32) : NULL;  /* [KH*KW, OW, OH, C*N] */
    if (!col) return NULL;
    struct ggml_tensor * cb = ggml_reshape_4d(ctx, col, col->ne[0], col->ne[1] * col->ne[2], b->ne[2], b->ne[3]);
    struct ggml_tensor * ka = ggml_reshape_4d(ctx, a, a->ne[0] * a->ne[1], 1, a->ne[3], 1);
    struct ggml_tensor * r = cb && ka ? ggml_mul_mat(ctx, ka, cb) : NULL;  /* [1, OW*OH, C, N] */
    return r ? ggml_reshape_4d(ctx, r, col->ne[1], col->ne[2], b->ne[2], b->ne[3]) : NULL;
}

/* 1-D depthwise: a [K, 1, C], b [IL, C, N] -> [OW, C, N]; channel c of b
 * (viewed as [IL, 1, C*N]) meets kernel row c, as in ggml_conv_2d_dw.
 * Upstream's composite (im2col of b as [IL, 1, C] + mul_mat) gives the same
 * [OW, C, 1] for N = 1 and drops the batch otherwise; its patches are F16
 * for an F16 kernel, F32 here (the products are the data's, unrounded). */
struct ggml_tensor * ggml_conv_1d_dw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int p0, int d0) {
    const char * fn = "ggml_conv_1d_dw";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (a->ne[1] != 1 || a->ne[2] != b->ne[1] || a->ne[3] != 1 || b->ne[3] != 1) {
        char sa[64], sb[64];
        ggmlr_set_error("%s: the kernel %s must be [K, 1, C] for data %s of [IL, C, N]", fn, ggmlr_shape_str(a, sa, sizeof sa),
                        ggmlr_shape_str(b, sb, sizeof sb));
        return NULL;
    }
    struct ggml_tensor * b1 = ggml_reshape_3d(ctx, b, b->ne[0], 1, b->ne[1] * b->ne[2]);
    struct ggml_tensor * col = b1 ? ggml_im2col(ctx, a, b1, s0, 0, p0, 0, d0, 0, false, GGML_TYPE_F32) : NULL;  /* [K, OW, C*N] */
    if (!col) return NULL;
    struct ggml_tensor * cb = ggml_reshape_4d(ctx, col, col->ne[0], col->ne[1], b->ne[1], b->ne[2]);
    struct ggml_tensor * ka = ggml_reshape_4d(ctx, a, a->ne[0], 1, a->ne[2], 1);
    struct ggml_tensor * r = cb && ka ? ggml_mul_mat(ctx, ka, cb) : NULL;  /* [1, OW, C, N] */
    return r ? ggml_reshape_3d(ctx, r, col->ne[1], b->ne[1], b->ne[2]) : NULL;
}

struct ggml_tensor * ggml_conv_1d_dw_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int d0) {
    REQUIRE("ggml_conv_1d_dw_ph", a);
    return ggml_conv_1d_dw(ctx, a, b, s0, (int) (a->ne[0] / 2), d0);
}

/* ---- transposed convolutions (a direct kernel) ---- */

static struct ggml_tensor * conv_transpose_node(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a,
                                                struct ggml_tensor * b, const struct ggmlr_conv_transpose_params * p) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b); REQUIRE_F32(fn, b);
    if (!f32_or_f16(a->type)) return ggmlr_fail_type(fn, "a", a, "F32 or F16");
    const bool d2 = op == GGML_OP_CONV_TRANSPOSE_2D;
    if (p->s0 <= 0 || p->p0 != 0 || p->d0 != 1) {
        ggmlr_set_error("%s: the stride must be > 0, the padding 0 and the dilation 1 (got %d, %d, %d)", fn, p->s0, p->p0, p->d0);
        return NULL;
    }
    if (d2 ? a->ne[3] != b->ne[2] : (a->ne[2] != b->ne[1] || a->ne[3] != 1 || b->ne[2] != 1 || b->ne[3] != 1)) {
        char sa[64], sb[64];
        ggmlr_set_error("%s: kernel %s and data %s disagree on the input channels (%s)", fn, ggmlr_shape_str(a, sa, sizeof sa),
                        ggmlr_shape_str(b, sb, sizeof sb), d2 ? "a [KW, KH, OC, IC], b [IW, IH, IC, N]" : "a [K, OC, IC], b a matrix [IL, IC]");
        return NULL;
    }
    if (!ggmlr_check_size_bound(fn, (double) b->ne[0] * p->s0 + (double) a->ne[0]) ||
        !ggmlr_check_size_bound(fn, (double) b->ne[1] * p->s0 + (double) a->ne[1]))
        return NULL;
    const int64_t ne[4] = {(b->ne[0] - 1) * p->s0 + a->ne[0], d2 ? (b->ne[1] - 1) * p->s0 + a->ne[1] : a->ne[1], d2 ? a->ne[2] : 1,
                           d2 ? b->ne[3] : 1};
    struct ggml_tensor * t = ggmlr_new_node(ctx, op, GGML_TYPE_F32, ne, a, b);
    if (t) ggmlr_conv_transpose_params_encode(t, p);
    return t;
}

struct ggml_tensor * ggml_conv_transpose_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int p0, int d0) {
    const struct ggmlr_conv_transpose_params p = {s0, p0, d0};
    return conv_transpose_node("ggml_conv_transpose_1d", ctx, GGML_OP_CONV_TRANSPOSE_1D, a, b, &p);
}

struct ggml_tensor * ggml_conv_transpose_2d_p0(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int stride) {
    const struct ggmlr_conv_transpose_params p = {stride, 0, 1};
    return conv_transpose_node("ggml_conv_transpose_2d_p0", ctx, GGML_OP_CONV_TRANSPOSE_2D, a, b, &p);
}

/* ---- backward ---- */

/* IM2COL: d b = im2col_back(g) (A is the kernel, shape only) */
RULE(grad_im2col) {
    if (!need[1]) return true;
    const struct ggmlr_im2col_params p = ggmlr_im2col_params_decode(node);
    return ggmlr_grad_acc(ctx, gph, B, ggml_im2col_back(ctx, g, A, B->ne, p.s0, p.s1, p.p0, p.p1, p.d0, p.d1, p.is_2d));
}

/* IM2COL_BACK: d a = im2col(g) (B is the kernel, shape only) */
RULE(grad_im2col_back) {
    if (!need[0]) return true;
    const struct ggmlr_im2col_params p = ggmlr_im2col_params_decode(node);
    return ggmlr_grad_acc(ctx, gph, A, ggml_im2col(ctx, B, g, p.s0, p.s1, p.p0, p.p1, p.d0, p.d1, p.is_2d, GGML_TYPE_F32));
}

/* CONV_TRANSPOSE_*: y = conv^T(a, b), so d b = conv(a, g) with the same
 * kernel tensor (its [K.., OC, IC] is a convolution kernel from OC to IC
 * channels), and d a[(oc, kh, kw), ic] = sum_(x, n) im2col(g)[(oc, kh, kw), x, n] b[x, ic, n]:
 * g's patches times b with its channels first (out_prod contracts ne1). */
RULE(grad_conv_transpose) {
    const int s = ggmlr_conv_transpose_params_decode(node).s0;
    const bool d2 = node->op == GGML_OP_CONV_TRANSPOSE_2D;
    struct ggml_tensor * a = ggmlr_grad_contiguous(ctx, A);
    if (!a) return false;
    if (need[1] && !ggmlr_grad_acc(ctx, gph, B, d2 ? ggml_conv_2d(ctx, a, g, s, s, 0, 0, 1, 1) : ggml_conv_1d(ctx, a, g, s, 0, 1))) return false;
    if (!need[0]) return true;
    struct ggml_tensor * col = ggml_im2col(ctx, a, g, s, s, 0, 0, 1, 1, d2, GGML_TYPE_F32);
    struct ggml_tensor * c2 = col ? ggml_reshape_2d(ctx, col, col->ne[0], ggml_nelements(col) / col->ne[0]) : NULL;
    struct ggml_tensor * bt = ggml_permute(ctx, B, 1, d2 ? 2 : 0, d2 ? 0 : 2, 3);  /* [IC, IW, IH, N] */
    bt = bt ? ggml_cont(ctx, bt) : NULL;
    struct ggml_tensor * b2 = bt ? ggml_reshape_2d(ctx, bt, bt->ne[0], ggml_nelements(bt) / bt->ne[0]) : NULL;
    struct ggml_tensor * da = c2 && b2 ? ggml_out_prod(ctx, c2, b2) : NULL;
    return ggmlr_grad_acc(ctx, gph, A, da ? ggml_reshape_4d(ctx, da, A->ne[0], A->ne[1], A->ne[2], A->ne[3]) : NULL);
}

/* F16 kernels, images and patches are constants */
GRAD_RULE(conv_transpose, ggmlr_refuse_not_f32, grad_conv_transpose);
GRAD_RULE(im2col, ggmlr_refuse_not_f32, grad_im2col);
GRAD_RULE(im2col_back, NULL, grad_im2col_back);

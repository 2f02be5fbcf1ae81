/* conv.c -- convolution: IM2COL, its adjoint IM2COL_BACK, the transposed
 * convolutions CONV_TRANSPOSE_1D/_2D and their backward rules (kernels:
 * cpu/kernels/conv.c), the convolutions built from im2col + mul_mat as
 * upstream builds them, so they run through the GEMM, and the direct
 * convolutions CONV_2D, CONV_3D, CONV_2D_DW with their gradient op
 * CONV_DIRECT_BACK, IM2COL_3D and COL2IM_1D (kernels: cpu/kernels/conv_direct.c).
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

/* A depthwise kernel [KW, KH, 1, C] for data [W, H, C, N]. */
static bool check_dw_kernel(const char * fn, const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->ne[2] == 1 && a->ne[3] == b->ne[2]) return true;
    char sa[64], sb[64];
    ggmlr_set_error("%s: the kernel %s must be [KW, KH, 1, C] for data %s with C channels", fn, ggmlr_shape_str(a, sa, sizeof sa),
                    ggmlr_shape_str(b, sb, sizeof sb));
    return false;
}

/* Depthwise: each channel c is its own 1-channel image (b viewed as
 * [IW, IH, 1, C*N]); its patches [KH*KW, OW*OH, C, N] meet kernel c's row
 * [KH*KW, 1, C] in a mul_mat broadcast over the batch. */
struct ggml_tensor * ggml_conv_2d_dw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int s1, int p0, int p1,
                                     int d0, int d1) {
    const char * fn = "ggml_conv_2d_dw";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (!check_dw_kernel(fn, a, b)) return NULL;
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

/* ---- direct convolutions (kernels: cpu/kernels/conv_direct.c) ----
 *
 * y[ox, oy, oz, oc, n] = sum_(icg, kz, ky, kx) a[kx, ky, kz, icg, oc]
 *                        b[ox s0 + kx d0 - p0, oy s1 + ky d1 - p1, oz s2 + kz d2 - p2, g ICg + icg, n]
 * (zero outside b), g = oc / (OC / groups) the group of oc; CONV_2D and
 * CONV_2D_DW have a depth of 1, CONV_2D_DW one group per channel.
 * ggmlr_conv_direct_dims (core/op_list.h) reads these axes off the tensors. */

static bool conv_direct_params_ok(const char * fn, const struct ggmlr_conv_direct_params * p) {
    if (p->s0 <= 0 || p->s1 <= 0 || p->s2 <= 0 || p->d0 <= 0 || p->d1 <= 0 || p->d2 <= 0 || p->p0 < 0 || p->p1 < 0 || p->p2 < 0) {
        ggmlr_set_error("%s: strides and dilations must be > 0 and paddings >= 0 (s %d %d %d, p %d %d %d, d %d %d %d)", fn, p->s0, p->s1,
                        p->s2, p->p0, p->p1, p->p2, p->d0, p->d1, p->d2);
        return false;
    }
    return true;
}

/* The output sizes [OW, OH, OD] of kernel dims k over data dims d; false
 * (message set) when a size would overflow or an output axis is empty. */
static bool conv_direct_out(const char * fn, const struct ggmlr_conv_dims * d, const struct ggmlr_conv_direct_params * p, int64_t out[3]) {
    const int64_t in[3] = {d->iw, d->ih, d->id}, k[3] = {d->kw, d->kh, d->kd};
    const int s[3] = {p->s0, p->s1, p->s2}, pad[3] = {p->p0, p->p1, p->p2}, dil[3] = {p->d0, p->d1, p->d2};
    for (int i = 0; i < 3; i++) {
        if (!ggmlr_check_size_bound(fn, (double) in[i] + 2.0 * pad[i] + (double) dil[i] * (double) k[i])) return false;
        out[i] = k[i] > 0 ? conv_out_size(in[i], k[i], s[i], pad[i], dil[i]) : 0;
        if (out[i] <= 0 || in[i] <= 0) {
            ggmlr_set_error("%s: the data's axis %d (%lld) is smaller than the dilated kernel's (%lld) with its padding", fn, i,
                            (long long) in[i], (long long) k[i]);
            return false;
        }
    }
    return ggmlr_check_size_bound(fn, (double) d->icg * (double) k[0] * (double) k[1] * (double) k[2]);
}

static struct ggml_tensor * conv_direct_node(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a,
                                             struct ggml_tensor * b, const struct ggmlr_conv_direct_params * p) {
    if (!f32_or_f16(a->type)) return ggmlr_fail_type(fn, "a", a, "F32 or F16");
    REQUIRE_F32(fn, b);
    if (!conv_direct_params_ok(fn, p)) return NULL;
    const struct ggmlr_conv_dims d = ggmlr_conv_direct_dims(op, a->ne, b->ne, p);
    int64_t o[3];
    if (!conv_direct_out(fn, &d, p, o)) return NULL;
    const int64_t ne[4] = {o[0], o[1], op == GGML_OP_CONV_3D ? o[2] : d.oc, op == GGML_OP_CONV_3D ? d.oc * d.n : d.n};
    struct ggml_tensor * t = ggmlr_new_node(ctx, op, GGML_TYPE_F32, ne, a, b);
    if (t) ggmlr_conv_direct_params_encode(t, p);
    return t;
}

struct ggml_tensor * ggml_conv_2d_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int s1, int p0,
                                         int p1, int d0, int d1) {
    const char * fn = "ggml_conv_2d_direct";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (a->ne[2] != b->ne[2]) {
        char sa[64], sb[64];
        ggmlr_set_error("%s: the kernel %s [KW, KH, IC, OC] and the data %s [IW, IH, IC, N] differ in IC", fn, ggmlr_shape_str(a, sa, sizeof sa),
                        ggmlr_shape_str(b, sb, sizeof sb));
        return NULL;
    }
    const struct ggmlr_conv_direct_params p = {s0, s1, 1, p0, p1, 0, d0, d1, 1, 0, 0, 0, GGML_OP_CONV_2D, 0};
    return conv_direct_node(fn, ctx, GGML_OP_CONV_2D, a, b, &p);
}

/* For data stored channels first (CWHN), the result is stored so too, as upstream's. */
struct ggml_tensor * ggml_conv_2d_dw_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int stride0, int stride1,
                                            int pad0, int pad1, int dilation0, int dilation1) {
    const char * fn = "ggml_conv_2d_dw_direct";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (!check_dw_kernel(fn, a, b)) return NULL;
    const struct ggmlr_conv_direct_params p = {stride0, stride1, 1, pad0, pad1, 0, dilation0, dilation1, 1, 0, 0, 0, GGML_OP_CONV_2D_DW, 0};
    struct ggml_tensor * t = conv_direct_node(fn, ctx, GGML_OP_CONV_2D_DW, a, b, &p);
    if (t && ggml_is_contiguous_channels(b)) {  /* the same bytes, channels innermost */
        t->nb[0] = (size_t) t->ne[2] * sizeof(float);
        t->nb[1] = (size_t) t->ne[0] * t->nb[0];
        t->nb[2] = sizeof(float);
    }
    return t;
}

/* Upstream's 3-D convolution through im2col_3d and mul_mat (a [KW, KH, KD, OC*IC],
 * b [IW, IH, ID, IC*N] -> [OW, OH, OD, OC*N], as ggml_conv_3d_direct): the
 * patches [IC*KD*KH*KW, OW, OH, OD*N] times the kernel's rows, then the
 * batch and output channels put back in order. F32 patches (upstream: F16). */
struct ggml_tensor * ggml_conv_3d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int64_t IC, int s0, int s1,
                                  int s2, int p0, int p1, int p2, int d0, int d1, int d2) {
    const char * fn = "ggml_conv_3d";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (IC <= 0 || a->ne[3] % IC != 0 || b->ne[3] % IC != 0) {
        ggmlr_set_error("%s: IC = %lld must divide the kernel's dimension 3 (%lld) and the data's (%lld)", fn, (long long) IC,
                        (long long) a->ne[3], (long long) b->ne[3]);
        return NULL;
    }
    struct ggml_tensor * patches = ggml_im2col_3d(ctx, a, b, IC, s0, s1, s2, p0, p1, p2, d0, d1, d2, GGML_TYPE_F32);
    if (!patches) return NULL;
    const int64_t OC = a->ne[3] / IC, N = b->ne[3] / IC, OW = patches->ne[1], OH = patches->ne[2], OD = patches->ne[3] / N;
    struct ggml_tensor * k = a->type == GGML_TYPE_F32 ? a : ggml_cast(ctx, a, GGML_TYPE_F32);
    struct ggml_tensor * y = ggml_mul_mat(ctx, ggml_reshape_2d(ctx, patches, patches->ne[0], OW * OH * OD * N),
                                          ggml_reshape_2d(ctx, k, a->ne[0] * a->ne[1] * a->ne[2] * IC, OC));  /* [OW*OH*OD*N, OC] */
    y = ggml_cont(ctx, ggml_permute(ctx, ggml_reshape_4d(ctx, y, OW * OH, OD, N, OC), 0, 1, 3, 2));     /* [OW*OH, OD, OC, N] */
    return ggml_reshape_4d(ctx, y, OW, OH, OD, OC * N);
}

struct ggml_tensor * ggml_conv_3d_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int s1, int s2,
                                         int p0, int p1, int p2, int d0, int d1, int d2, int n_channels, int n_batch, int n_channels_out) {
    const char * fn = "ggml_conv_3d_direct";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (n_channels <= 0 || n_batch <= 0 || n_channels_out <= 0 || a->ne[3] != (int64_t) n_channels * n_channels_out ||
        b->ne[3] != (int64_t) n_channels * n_batch) {
        char sa[64], sb[64];
        ggmlr_set_error("%s: the kernel %s must be [KW, KH, KD, IC*OC] and the data %s [IW, IH, ID, IC*N] (IC %d, N %d, OC %d, all > 0)", fn,
                        ggmlr_shape_str(a, sa, sizeof sa), ggmlr_shape_str(b, sb, sizeof sb), n_channels, n_batch, n_channels_out);
        return NULL;
    }
    const struct ggmlr_conv_direct_params p = {s0, s1, s2, p0, p1, p2, d0, d1, d2, n_channels, n_batch, n_channels_out, GGML_OP_CONV_3D, 0};
    return conv_direct_node(fn, ctx, GGML_OP_CONV_3D, a, b, &p);
}

/* The gradient of a direct convolution's kernel (wrt 0) or data (wrt 1),
 * given g, the gradient of its result, and its other source: CONV_DIRECT_BACK,
 * F32 of shape ne; p holds the forward op's parameters and fwd_op. */
static struct ggml_tensor * conv_direct_back(struct ggml_context * ctx, const struct ggmlr_conv_direct_params * p, int wrt,
                                             struct ggml_tensor * g, struct ggml_tensor * other, const int64_t ne[4]) {
    struct ggmlr_conv_direct_params q = *p;
    q.wrt = wrt;
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_CONV_DIRECT_BACK, GGML_TYPE_F32, ne, g, other);
    if (t) ggmlr_conv_direct_params_encode(t, &q);
    return t;
}

/* ---- IM2COL_3D, COL2IM_1D ---- */

/* im2col_3d's patches (kernels: cpu/kernels/conv_direct.c): the axes of a
 * CONV_3D with N = b->ne[3] / IC, rounded down as upstream's (the data's
 * last b->ne[3] % IC channels are not read); a's ne3 (OC*IC) is not read. */
struct ggml_tensor * ggml_im2col_3d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int64_t IC, int s0, int s1,
                                    int s2, int p0, int p1, int p2, int d0, int d1, int d2, enum ggml_type dst_type) {
    const char * fn = "ggml_im2col_3d";
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (!f32_or_f16(b->type)) return ggmlr_fail_type(fn, "b", b, "F32 or F16");
    if (!f32_or_f16(dst_type)) {
        ggmlr_set_error("%s: dst_type must be F32 or F16 (got %s)", fn, ggml_type_name(dst_type));
        return NULL;
    }
    if (IC <= 0 || IC > INT32_MAX) {
        ggmlr_set_error("%s: IC (%lld) must be in [1, 2^31)", fn, (long long) IC);
        return NULL;
    }
    const struct ggmlr_conv_direct_params p = {s0, s1, s2, p0, p1, p2, d0, d1, d2, (int32_t) IC, (int32_t) (b->ne[3] / IC), 0, GGML_OP_IM2COL_3D, 0};
    if (!conv_direct_params_ok(fn, &p)) return NULL;
    const struct ggmlr_conv_dims d = ggmlr_conv_direct_dims(GGML_OP_CONV_3D, a->ne, b->ne, &p);
    int64_t o[3];
    if (!conv_direct_out(fn, &d, &p, o) || !ggmlr_check_size_bound(fn, (double) o[2] * (double) d.n)) return NULL;
    const int64_t ne[4] = {IC * d.kd * d.kh * d.kw, o[0], o[1], o[2] * d.n};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_IM2COL_3D, dst_type, ne, a, b);
    if (t) ggmlr_conv_direct_params_encode(t, &p);
    return t;
}

/* The adjoint of im2col_3d (IM2COL_3D_BACK): the patches' gradient dcol added
 * back onto data of shape ne, for kernel a (shape only); p: IM2COL_3D's. */
static struct ggml_tensor * im2col_3d_back(struct ggml_context * ctx, struct ggml_tensor * dcol, struct ggml_tensor * a, const int64_t ne[4],
                                           const struct ggmlr_conv_direct_params * p) {
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_IM2COL_3D_BACK, GGML_TYPE_F32, ne, dcol, a);
    if (t) ggmlr_conv_direct_params_encode(t, p);
    return t;
}

/* y[t s0 + k - p0, oc] += a[oc K + k, t]: the transposed 1-D convolution of
 * columns a GEMM made, cropped by p0 on both sides. F32, F16 or BF16, the
 * result of a's type. */
struct ggml_tensor * ggml_col2im_1d(struct ggml_context * ctx, struct ggml_tensor * a, int s0, int oc, int p0) {
    const char * fn = "ggml_col2im_1d";
    REQUIRE_CTX(fn); REQUIRE(fn, a);
    if (!f32_or_f16(a->type) && a->type != GGML_TYPE_BF16) return ggmlr_fail_type(fn, "a", a, "F32, F16 or BF16");
    if (a->ne[2] != 1 || a->ne[3] != 1) {
        char sa[64];
        ggmlr_set_error("%s: a %s must be a matrix [K*OC, T_in]", fn, ggmlr_shape_str(a, sa, sizeof sa));
        return NULL;
    }
    if (s0 <= 0 || oc <= 0 || p0 < 0 || a->ne[0] % oc != 0 || a->ne[0] == 0 || a->ne[1] == 0) {
        ggmlr_set_error("%s: s0 (%d) and oc (%d) must be > 0, p0 (%d) >= 0, and a's ne0 (%lld) a positive multiple of oc, its ne1 (%lld) > 0",
                        fn, s0, oc, p0, (long long) a->ne[0], (long long) a->ne[1]);
        return NULL;
    }
    if (!ggmlr_check_size_bound(fn, (double) a->ne[1] * (double) s0 + (double) a->ne[0])) return NULL;
    const int64_t k = a->ne[0] / oc, t_out = (a->ne[1] - 1) * s0 + k - 2 * (int64_t) p0;
    if (t_out <= 0) {
        ggmlr_set_error("%s: the padding %d crops the whole signal ((T_in - 1) s0 + K = %lld)", fn, p0, (long long) (t_out + 2 * (int64_t) p0));
        return NULL;
    }
    const int64_t ne[4] = {t_out, oc, 1, 1};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_COL2IM_1D, a->type, ne, a, NULL);
    const struct ggmlr_col2im_params p = {s0, oc, p0};
    if (t) ggmlr_col2im_params_encode(t, &p);
    return t;
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

/* CONV_2D / CONV_3D / CONV_2D_DW: y is linear in each source, so
 * d a[kx, ky, kz, icg, oc] = sum_(n, o) b[o s + k d - p, g ICg + icg, n] g[o, oc, n] and
 * d b[i, c, n] = sum_(oc in c's group, k, o: o s + k d - p = i) a[k, icg, oc] g[o, oc, n],
 * each one CONV_DIRECT_BACK node (a gather, no patch buffer). */
RULE(grad_conv_direct) {
    struct ggmlr_conv_direct_params p = ggmlr_conv_direct_params_decode(node);
    p.fwd_op = (int32_t) node->op;
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, conv_direct_back(ctx, &p, 0, g, B, A->ne))) return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, conv_direct_back(ctx, &p, 1, g, A, B->ne));
}

/* CONV_DIRECT_BACK is bilinear in (the forward's g, its other source), and
 * <h, D(a, g)> = <conv(a, h), g> = <K(h, g), a> for the data gradient D, and
 * <h, K(b, g)> = <conv(h, b), g> = <D(h, g), b> for the kernel gradient K:
 * so its g gets a forward convolution of the incoming gradient h, and its
 * other source the other gradient op of h and g (a double backward). */
RULE(grad_conv_direct_back) {
    const struct ggmlr_conv_direct_params p = ggmlr_conv_direct_params_decode(node);
    const enum ggml_op fwd = (enum ggml_op) p.fwd_op;
    const char * fn = ggml_op_name(fwd);
    const bool wrt_data = p.wrt == 1;
    if (need[0] && !ggmlr_grad_acc(ctx, gph, A, wrt_data ? conv_direct_node(fn, ctx, fwd, B, g, &p) : conv_direct_node(fn, ctx, fwd, g, B, &p)))
        return false;
    return !need[1] || ggmlr_grad_acc(ctx, gph, B, conv_direct_back(ctx, &p, wrt_data ? 0 : 1, A, g, B->ne));
}

/* IM2COL_3D: d b = im2col_3d_back(g) (A is the kernel, shape only);
 * IM2COL_3D_BACK: d (d col) = im2col_3d(g), its adjoint (B the kernel) */
RULE(grad_im2col_3d) {
    if (!need[1]) return true;
    const struct ggmlr_conv_direct_params p = ggmlr_conv_direct_params_decode(node);
    return ggmlr_grad_acc(ctx, gph, B, im2col_3d_back(ctx, g, A, B->ne, &p));
}
RULE(grad_im2col_3d_back) {
    if (!need[0]) return true;
    const struct ggmlr_conv_direct_params p = ggmlr_conv_direct_params_decode(node);
    return ggmlr_grad_acc(ctx, gph, A, ggml_im2col_3d(ctx, B, g, p.c, p.s0, p.s1, p.s2, p.p0, p.p1, p.p2, p.d0, p.d1, p.d2, GGML_TYPE_F32));
}

/* COL2IM_1D is the adjoint of a 1-D im2col with kernel size K and OC channels:
 * d a[oc K + k, t] = g[t s0 + k - p0, oc] (zero outside), im2col(g); its
 * kernel argument (shape [K, OC] only) is a view of a's first K*OC elements. */
RULE(grad_col2im_1d) {
    if (!need[0]) return true;
    const struct ggmlr_col2im_params p = ggmlr_col2im_params_decode(node);
    struct ggml_tensor * kshape = ggml_view_2d(ctx, A, A->ne[0] / p.oc, p.oc, (size_t) (A->ne[0] / p.oc) * A->nb[0], 0);
    struct ggml_tensor * col = kshape ? ggml_im2col(ctx, kshape, g, p.s0, 0, p.p0, 0, 1, 0, false, GGML_TYPE_F32) : NULL;
    return ggmlr_grad_acc(ctx, gph, A, col ? ggml_reshape_2d(ctx, col, col->ne[0], col->ne[1]) : NULL);
}

/* F16 kernels, images and patches are constants */
GRAD_RULE(conv_transpose, ggmlr_refuse_not_f32, grad_conv_transpose);
GRAD_RULE(im2col, ggmlr_refuse_not_f32, grad_im2col);
GRAD_RULE(im2col_back, NULL, grad_im2col_back);
GRAD_RULE(conv_direct, ggmlr_refuse_not_f32, grad_conv_direct);
/* CONV_DIRECT_BACK's sources are F32 but an F16 kernel, which cannot need a
 * gradient here: the forward convolution reading it has refused first */
GRAD_RULE(conv_direct_back, NULL, grad_conv_direct_back);
GRAD_RULE(im2col_3d, ggmlr_refuse_not_f32, grad_im2col_3d);
GRAD_RULE(im2col_3d_back, NULL, grad_im2col_3d_back);
GRAD_RULE(col2im_1d, ggmlr_refuse_not_f32, grad_col2im_1d);

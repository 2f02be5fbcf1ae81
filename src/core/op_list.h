/* op_list.h -- what every op is, below both its constructors and its
 * kernels: its row in the op table and, for an op with scalar parameters or
 * sources past src[1], the typed struct its node carries. An op is added
 * here once (docs/adding-an-op.md).
 *
 * Included without GGMLR_OP defined it gives part 1, the parameter structs;
 * with GGMLR_OP defined only part 2, the rows, so that an X-macro table can
 * include it inside an initialiser.
 *
 * Part 1: the contract between an op's constructor, its backward rule and
 * its kernel. Each op (family) with parameters has one struct, one encode
 * (the constructor stores it) and one decode (rules and kernels read it); no
 * other file indexes op_params or names a source slot past src[1]. Slots
 * follow upstream ggml's layout where it has one (rope, soft_max,
 * flash_attn_ext, view, permute, scale, norm eps, unary op and xielu, glu),
 * so a node reads the same in both. op_params holds GGML_MAX_OP_PARAMS bytes
 * as 32-bit words; floats and size_t are copied in by bytes (no aliasing).
 *
 * Part 2: GGMLR_OP(OP, kernel, rule), one row per op. OP is the enum
 * ggml_op name without GGML_OP_ (and the op's name, as ggml_op_name gives
 * it); kernel names the CPU kernel (const struct ggmlr_kernel
 * ggmlr_kernel_<kernel>, defined in cpu/kernels/<family>.c; none: a view,
 * nothing to compute);
 * rule names the backward rule (const struct ggmlr_grad_rule
 * ggmlr_rule_<rule>, defined in ops/<family>.c next to the constructor;
 * none: autodiff refuses the op with a message). The rows are read by
 * core/op_names.c (the names), cpu/exec/kernel_table.c and
 * autodiff/rule_table.c (the tables, designated by op so that no row can
 * drift from the enum); tests/test_ops_table.c checks every row against
 * include/ggml.h. The rows are in upstream ggml's order, so the enumerators
 * have upstream's numbers; ggmlr's own ops come after them. */

#ifndef GGMLR_OP
/* ======== part 1: the parameters ======== */
#ifndef GGMLR_OP_LIST_PARAMS_H
#define GGMLR_OP_LIST_PARAMS_H

#include "ggml.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

static inline void ggmlr_params_put(struct ggml_tensor * t, const void * p, size_t n) {
    _Static_assert(GGML_MAX_OP_PARAMS >= 64, "op_params holds every struct below");
    memcpy(t->op_params, p, n);
}
static inline void ggmlr_params_get(const struct ggml_tensor * t, void * p, size_t n) { memcpy(p, t->op_params, n); }

/* ---- one float: LEAKY_RELU (negative_slope), NORM / RMS_NORM / L2_NORM and their _BACK (eps) ---- */

static inline void  ggmlr_f32_param_encode(struct ggml_tensor * t, float v) { ggmlr_params_put(t, &v, sizeof v); }
static inline float ggmlr_f32_param_decode(const struct ggml_tensor * t) { float v; ggmlr_params_get(t, &v, sizeof v); return v; }

/* ---- SCALE: y = s * x + bias (upstream's slots [0], [1]) ---- */

struct ggmlr_scale_params { float s, bias; };
static inline void ggmlr_scale_params_encode(struct ggml_tensor * t, const struct ggmlr_scale_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_scale_params ggmlr_scale_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_scale_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- one int32 (upstream's [0]): CONCAT (dim), UPSCALE and UPSCALE_BACK (mode | flags),
 * DIAG_MASK_INF / DIAG_MASK_ZERO (n_past), TRI (enum ggml_tri_type), WIN_UNPART (w, the
 * windows' side), ADD_REL_POS (inplace: 1 when the result is a itself), SSM_CONV_BACK
 * (which gradient: 0 sx, 1 c), GATED_DELTA_NET (K, the snapshots) ---- */

static inline void    ggmlr_i32_param_encode(struct ggml_tensor * t, int32_t v) { ggmlr_params_put(t, &v, sizeof v); }
static inline int32_t ggmlr_i32_param_decode(const struct ggml_tensor * t) { int32_t v; ggmlr_params_get(t, &v, sizeof v); return v; }

/* ---- GROUP_NORM, GROUP_NORM_BACK (upstream's layout: [0] n_groups, [1] eps) ---- */

struct ggmlr_group_norm_params { int32_t n_groups; float eps; };
static inline void ggmlr_group_norm_params_encode(struct ggml_tensor * t, const struct ggmlr_group_norm_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_group_norm_params ggmlr_group_norm_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_group_norm_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- ARGSORT: the enum ggml_sort_order (upstream's slot [0]) ---- */

static inline void ggmlr_sort_params_encode(struct ggml_tensor * t, enum ggml_sort_order o) { const int32_t v = (int32_t) o; ggmlr_params_put(t, &v, sizeof v); }
static inline enum ggml_sort_order ggmlr_sort_params_decode(const struct ggml_tensor * t) { int32_t v; ggmlr_params_get(t, &v, sizeof v); return (enum ggml_sort_order) v; }

/* ---- CLAMP (upstream's layout: [0] min, [1] max) ---- */

struct ggmlr_clamp_params { float min, max; };
static inline void ggmlr_clamp_params_encode(struct ggml_tensor * t, const struct ggmlr_clamp_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_clamp_params ggmlr_clamp_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_clamp_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- VIEW: the byte offset into the viewed tensor (its backward needs it) ---- */

static inline void   ggmlr_view_params_encode(struct ggml_tensor * t, size_t offset) { ggmlr_params_put(t, &offset, sizeof offset); }
static inline size_t ggmlr_view_params_decode(const struct ggml_tensor * t) { size_t o; ggmlr_params_get(t, &o, sizeof o); return o; }

/* ---- PERMUTE / TRANSPOSE: result dim axes[i] is source dim i ---- */

struct ggmlr_permute_params { int32_t axes[4]; };
static inline void ggmlr_permute_params_encode(struct ggml_tensor * t, const struct ggmlr_permute_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_permute_params ggmlr_permute_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_permute_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- ACC: b lands in the region (nb1..nb3, offset) of the base ----
 * zero_base: the base is zeros shaped like a (the backward of a view), not a.
 * private_sum: autodiff's mark on a gradient sum that only one gradient slot
 * holds, which it may add into in place (autodiff/grad_rules.c). */
struct ggmlr_acc_params {
    size_t  nb1, nb2, nb3, offset;
    int32_t zero_base, private_sum;
};
static inline void ggmlr_acc_params_encode(struct ggml_tensor * t, const struct ggmlr_acc_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_acc_params ggmlr_acc_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_acc_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- MAP_CUSTOM1/2/3, CUSTOM: the user's function, its task count and
 * data (upstream's slots). These two pointers are the user's code and data,
 * not tensors: every tensor the function reads is in src[]. ---- */

struct ggmlr_custom_params {
    union {
        ggml_custom1_op_t f1;  /* MAP_CUSTOM1 */
        ggml_custom2_op_t f2;  /* MAP_CUSTOM2 */
        ggml_custom3_op_t f3;  /* MAP_CUSTOM3 */
        ggml_custom_op_t  f;   /* CUSTOM */
    } fun;
    int32_t n_tasks;  /* > 0, or GGML_N_TASKS_MAX: as many as threads */
    void *  userdata;
};
static inline void ggmlr_custom_params_encode(struct ggml_tensor * t, const struct ggmlr_custom_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_custom_params ggmlr_custom_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_custom_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}
/* MAP_CUSTOM1/2/3: the function's tensors a, b, c (upstream's src[0..2]; NULL
 * past the op's arity) */
struct ggmlr_map_custom_srcs { struct ggml_tensor * a, * b, * c; };
static inline void ggmlr_map_custom_srcs_encode(struct ggml_tensor * t, const struct ggmlr_map_custom_srcs * s) {
    t->src[0] = s->a; t->src[1] = s->b; t->src[2] = s->c;
}
static inline struct ggmlr_map_custom_srcs ggmlr_map_custom_srcs_decode(const struct ggml_tensor * t) {
    const struct ggmlr_map_custom_srcs s = {t->src[0], t->src[1], t->src[2]};
    return s;
}
/* CUSTOM: its i-th tensor, 0 <= i < GGML_MAX_SRC (custom_inplace: a, then
 * the args; custom_4d: the args). The user's function reads dst->src[i], as
 * upstream's does. */
static inline void ggmlr_custom_src_encode(struct ggml_tensor * t, int i, struct ggml_tensor * s) { t->src[i] = s; }
static inline struct ggml_tensor * ggmlr_custom_src_decode(const struct ggml_tensor * t, int i) { return t->src[i]; }

/* ---- SOFT_MAX, SOFT_MAX_BACK: softmax(scale * x + slope * mask) ---- */

struct ggmlr_soft_max_params { float scale, max_bias; };
static inline void ggmlr_soft_max_params_encode(struct ggml_tensor * t, const struct ggmlr_soft_max_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_soft_max_params ggmlr_soft_max_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_soft_max_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}
/* SOFT_MAX's attention sinks: NULL or F32 [ne2], one logit per head (upstream's src[2]) */
static inline void ggmlr_soft_max_sinks_encode(struct ggml_tensor * t, struct ggml_tensor * sinks) { t->src[2] = sinks; }
static inline struct ggml_tensor * ggmlr_soft_max_sinks_decode(const struct ggml_tensor * t) { return t->src[2]; }

/* ---- UNARY, UNARY_BACK (upstream's layout: [0] the activation; XIELU's
 * [1] alpha_n = beta + softplus(alpha_n given), [2] alpha_p = softplus(alpha_p
 * given), [3] beta, [4] eps, already constrained as upstream stores them) ---- */

struct ggmlr_unary_params {
    int32_t op;
    float   alpha_n, alpha_p, beta, eps;
};
static inline void ggmlr_unary_params_encode(struct ggml_tensor * t, const struct ggmlr_unary_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_unary_params ggmlr_unary_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_unary_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- GLU (upstream's layout: [0] op, [1] swapped, [2] alpha, [3] limit
 * (SWIGLU_OAI)); GLU_BACK adds [4] which: the gradient of a (0) or of b (1) ---- */

struct ggmlr_glu_params {
    int32_t op, swapped;
    float   alpha, limit;
    int32_t which;
};
static inline void ggmlr_glu_params_encode(struct ggml_tensor * t, const struct ggmlr_glu_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_glu_params ggmlr_glu_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_glu_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- IM2COL, IM2COL_BACK (upstream's layout: s0, s1, p0, p1, d0, d1, is_2D);
 * 1-D (is_2d 0) reads only s0, p0, d0 ---- */

struct ggmlr_im2col_params { int32_t s0, s1, p0, p1, d0, d1, is_2d; };
static inline void ggmlr_im2col_params_encode(struct ggml_tensor * t, const struct ggmlr_im2col_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_im2col_params ggmlr_im2col_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_im2col_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- CONV_TRANSPOSE_1D (upstream's layout: s0, p0, d0; p0 = 0 and d0 = 1
 * the only ones upstream and ggmlr take) and CONV_TRANSPOSE_2D ([0] stride) ---- */

struct ggmlr_conv_transpose_params { int32_t s0, p0, d0; };
static inline void ggmlr_conv_transpose_params_encode(struct ggml_tensor * t, const struct ggmlr_conv_transpose_params * p) {
    ggmlr_params_put(t, p, t->op == GGML_OP_CONV_TRANSPOSE_1D ? sizeof *p : sizeof p->s0);
}
static inline struct ggmlr_conv_transpose_params ggmlr_conv_transpose_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_conv_transpose_params p = {0, 0, 1};
    ggmlr_params_get(t, &p, t->op == GGML_OP_CONV_TRANSPOSE_1D ? sizeof p : sizeof p.s0);
    return p;
}

/* ---- CONV_2D, CONV_2D_DW (upstream's layout: s0, s1, p0, p1, d0, d1),
 * CONV_3D (s0, s1, s2, p0, p1, p2, d0, d1, d2, c, n, oc), IM2COL_3D (the same
 * first ten, c = IC; n is not among them; and its gradient op IM2COL_3D_BACK)
 * and ggmlr's CONV_DIRECT_BACK (CONV_3D's twelve, then the
 * forward op and which of its sources the node is the gradient of: 0 the
 * kernel, 1 the data). A 2-D op decodes with s2 = d2 = 1, p2 = 0, and c, n,
 * oc 0 (its shapes hold them). ---- */

struct ggmlr_conv_direct_params { int32_t s0, s1, s2, p0, p1, p2, d0, d1, d2, c, n, oc, fwd_op, wrt; };
static inline bool ggmlr_conv_direct_is_2d(enum ggml_op op) { return op == GGML_OP_CONV_2D || op == GGML_OP_CONV_2D_DW; }
static inline size_t ggmlr_conv_direct_words(enum ggml_op op) {
    return op == GGML_OP_IM2COL_3D || op == GGML_OP_IM2COL_3D_BACK ? 10 : op == GGML_OP_CONV_3D ? 12 : 14;
}
static inline void ggmlr_conv_direct_params_encode(struct ggml_tensor * t, const struct ggmlr_conv_direct_params * p) {
    if (ggmlr_conv_direct_is_2d(t->op)) {
        const int32_t w[6] = {p->s0, p->s1, p->p0, p->p1, p->d0, p->d1};
        ggmlr_params_put(t, w, sizeof w);
    } else {
        ggmlr_params_put(t, p, ggmlr_conv_direct_words(t->op) * sizeof(int32_t));
    }
}
static inline struct ggmlr_conv_direct_params ggmlr_conv_direct_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_conv_direct_params p = {1, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, (int32_t) t->op, 0};
    if (ggmlr_conv_direct_is_2d(t->op)) {
        int32_t w[6];
        ggmlr_params_get(t, w, sizeof w);
        p.s0 = w[0]; p.s1 = w[1]; p.p0 = w[2]; p.p1 = w[3]; p.d0 = w[4]; p.d1 = w[5];
    } else {
        ggmlr_params_get(t, &p, ggmlr_conv_direct_words(t->op) * sizeof(int32_t));
    }
    return p;
}

/* The axes of a direct convolution (a CONV_3D for IM2COL_3D) with kernel
 * shape kne and data shape bne: data [IW, IH, ID, IC, N], kernel
 * [KW, KH, KD, ICg, OC], output channel oc in group oc / (OC / groups),
 * reading channels g ICg .. g ICg + ICg - 1. */
struct ggmlr_conv_dims { int64_t iw, ih, id, ic, n, kw, kh, kd, icg, oc, groups; };
static inline struct ggmlr_conv_dims ggmlr_conv_direct_dims(enum ggml_op op, const int64_t kne[4], const int64_t bne[4],
                                                            const struct ggmlr_conv_direct_params * p) {
    struct ggmlr_conv_dims d = {bne[0], bne[1], 1, bne[2], bne[3], kne[0], kne[1], 1, kne[2], kne[3], 1};
    if (op == GGML_OP_CONV_2D_DW) d.groups = d.ic;
    if (op == GGML_OP_CONV_3D || op == GGML_OP_IM2COL_3D || op == GGML_OP_IM2COL_3D_BACK) {
        d.id = bne[2]; d.kd = kne[2]; d.ic = d.icg = p->c; d.n = p->n; d.oc = p->oc;
    }
    return d;
}

/* ---- COL2IM_1D (upstream's layout: s0, oc, p0) ---- */

struct ggmlr_col2im_params { int32_t s0, oc, p0; };
static inline void ggmlr_col2im_params_encode(struct ggml_tensor * t, const struct ggmlr_col2im_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_col2im_params ggmlr_col2im_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_col2im_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- POOL_1D, POOL_2D, POOL_2D_BACK: one struct for the three, upstream's
 * slots per op: POOL_1D [op, k0, s0, p0]; POOL_2D and POOL_2D_BACK
 * [op, k0, k1, s0, s1, p0, p1], and POOL_2D_BACK adds ggmlr's [7] avg_in:
 * the average divides by the elements inside the input, not by k0*k1
 * (POOL_1D's average, whose backward POOL_2D_BACK is too). POOL_1D decodes as
 * a 2-D pool with k1 = s1 = 1, p1 = 0 and avg_in set. ---- */

struct ggmlr_pool_params { int32_t op, k0, k1, s0, s1, p0, p1, avg_in; };
static inline void ggmlr_pool_params_encode(struct ggml_tensor * t, const struct ggmlr_pool_params * p) {
    if (t->op == GGML_OP_POOL_1D) {
        const int32_t s[4] = {p->op, p->k0, p->s0, p->p0};
        ggmlr_params_put(t, s, sizeof s);
    } else {
        ggmlr_params_put(t, p, t->op == GGML_OP_POOL_2D ? 7 * sizeof(int32_t) : sizeof *p);
    }
}
static inline struct ggmlr_pool_params ggmlr_pool_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_pool_params p = {0, 0, 0, 0, 0, 0, 0, 0};
    if (t->op == GGML_OP_POOL_1D) {
        int32_t s[4];
        ggmlr_params_get(t, s, sizeof s);
        const struct ggmlr_pool_params q = {s[0], s[1], 1, s[2], 1, s[3], 0, 1};
        return q;
    }
    ggmlr_params_get(t, &p, t->op == GGML_OP_POOL_2D ? 7 * sizeof(int32_t) : sizeof p);
    return p;
}

/* ---- PAD, PAD_REFLECT_1D, PAD_BACK: lp[d] elements before and rp[d] after
 * each dim, filled as mode says. PAD has upstream's layout (lp0, rp0, lp1,
 * rp1, lp2, rp2, lp3, rp3, circular: 0 zeros, 1 circular); PAD_REFLECT_1D
 * upstream's (p0, p1: before and after dim 0, reflected); PAD_BACK (the
 * gradient of a circular or reflected pad) PAD's layout with the mode in
 * the last slot. ---- */

enum ggmlr_pad_mode {
    GGMLR_PAD_ZEROS = 0,
    GGMLR_PAD_CIRCULAR = 1,  /* a[(i - lp) mod n]: the other side of the torus */
    GGMLR_PAD_REFLECT = 2,   /* a[|i - lp|] before, a[2 (n - 1) - (i - lp)] after (the edge not repeated) */
};
struct ggmlr_pad_params { int32_t lp[4], rp[4]; int32_t mode; /* enum ggmlr_pad_mode */ };
struct ggmlr_pad_slots { int32_t lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3, mode; };
struct ggmlr_pad_reflect_slots { int32_t p0, p1; };
static inline void ggmlr_pad_params_encode(struct ggml_tensor * t, const struct ggmlr_pad_params * p) {
    if (t->op == GGML_OP_PAD_REFLECT_1D) {
        const struct ggmlr_pad_reflect_slots r = {p->lp[0], p->rp[0]};
        ggmlr_params_put(t, &r, sizeof r);
        return;
    }
    const struct ggmlr_pad_slots s = {p->lp[0], p->rp[0], p->lp[1], p->rp[1], p->lp[2], p->rp[2], p->lp[3], p->rp[3], p->mode};
    ggmlr_params_put(t, &s, sizeof s);
}
static inline struct ggmlr_pad_params ggmlr_pad_params_decode(const struct ggml_tensor * t) {
    if (t->op == GGML_OP_PAD_REFLECT_1D) {
        struct ggmlr_pad_reflect_slots r;
        ggmlr_params_get(t, &r, sizeof r);
        const struct ggmlr_pad_params p = {{r.p0, 0, 0, 0}, {r.p1, 0, 0, 0}, GGMLR_PAD_REFLECT};
        return p;
    }
    struct ggmlr_pad_slots s;
    ggmlr_params_get(t, &s, sizeof s);
    const struct ggmlr_pad_params p = {{s.lp0, s.lp1, s.lp2, s.lp3}, {s.rp0, s.rp1, s.rp2, s.rp3}, s.mode};
    return p;
}

/* ---- ROPE, ROPE_BACK (upstream's layout: [1] n_dims, [2] mode, [4] n_ctx_orig, [5..10] the floats,
 * [11..14] the sections of the multi-section modes, [15] n_offs) ----
 * sections: pairs per position stream (time, height, width, extra) in
 * GGML_ROPE_TYPE_MROPE / IMROPE / VISION, zeros in the other modes; n_offs: the
 * first rotated entry of each row (ggml_rope_set_offset), 0 by default. */
struct ggmlr_rope_params {
    int32_t n_dims, mode, n_ctx_orig;
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    int32_t sections[GGML_MROPE_SECTIONS], n_offs;
};
struct ggmlr_rope_slots {  /* the op_params words, as upstream lays them out */
    int32_t unused0, n_dims, mode, unused3, n_ctx_orig;
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
    int32_t sections[GGML_MROPE_SECTIONS], n_offs;
};
static inline void ggmlr_rope_params_encode(struct ggml_tensor * t, const struct ggmlr_rope_params * p) {
    const struct ggmlr_rope_slots s = {0, p->n_dims, p->mode, 0, p->n_ctx_orig, p->freq_base, p->freq_scale, p->ext_factor,
                                       p->attn_factor, p->beta_fast, p->beta_slow,
                                       {p->sections[0], p->sections[1], p->sections[2], p->sections[3]}, p->n_offs};
    ggmlr_params_put(t, &s, sizeof s);
}
static inline struct ggmlr_rope_params ggmlr_rope_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_rope_slots s;
    ggmlr_params_get(t, &s, sizeof s);
    const struct ggmlr_rope_params p = {s.n_dims, s.mode, s.n_ctx_orig, s.freq_base, s.freq_scale, s.ext_factor, s.attn_factor,
                                        s.beta_fast, s.beta_slow, {s.sections[0], s.sections[1], s.sections[2], s.sections[3]}, s.n_offs};
    return p;
}
/* the multi-section modes take 4 positions per token (upstream: mode & GGML_ROPE_TYPE_MROPE) */
static inline bool ggmlr_rope_is_multi(int32_t mode) {
    return mode == GGML_ROPE_TYPE_MROPE || mode == GGML_ROPE_TYPE_VISION || mode == GGML_ROPE_TYPE_IMROPE;
}
/* rotated pairs per row: n_dims/2, or n_dims in VISION mode (which rotates all 2 n_dims = ne0 entries) */
static inline int32_t ggmlr_rope_n_pairs(const struct ggmlr_rope_params * p) {
    return p->mode == GGML_ROPE_TYPE_VISION ? p->n_dims : p->n_dims / 2;
}
/* YaRN's ramp between the pairs [dims[0], dims[1]]: the pair whose
 * wavelength n_ctx_orig / beta turns, d(beta) = n_dims ln(n_ctx_orig / (2 pi beta)) / (2 ln base),
 * floor(d(beta_fast)) and ceil(d(beta_slow)), clipped to [0, n_dims - 1]. Here,
 * below both the public ggml_rope_yarn_corr_dims (ops/rope.c) and the kernel.
 * Any parameters are taken, as upstream: n_ctx_orig = 0 gives d = -inf, so
 * dims = [0, -inf] (the ramp then keeps pair 0 only); a NaN d (0/0, a
 * negative ratio) stays NaN, as upstream's MAX/MIN (a > b ? a : b) keep it,
 * where fmax/fmin would drop it. */
static inline void ggmlr_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow, float dims[2]) {
    const double pi = 3.14159265358979323846, den = 2.0 * log((double) freq_base);
    const double start = floor(n_dims * log(n_ctx_orig / (2.0 * pi * beta_fast)) / den);
    const double end = ceil(n_dims * log(n_ctx_orig / (2.0 * pi * beta_slow)) / den);
    dims[0] = (float) (0.0 > start ? 0.0 : start);
    dims[1] = (float) (n_dims - 1.0 < end ? n_dims - 1.0 : end);
}

/* ---- MUL_MAT, OUT_PROD: the precision of the products (upstream's word 0,
 * ggml_mul_mat_set_prec). GGML_PREC_BF16 rounds both operands to bf16 and
 * accumulates in F32 where AMX does it (cpu/kernels/mul_mat_bf16.c); the
 * backward rules give their products the forward's precision. ---- */
struct ggmlr_mul_mat_params { int32_t prec; };
static inline void ggmlr_mul_mat_params_encode(struct ggml_tensor * t, const struct ggmlr_mul_mat_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_mul_mat_params ggmlr_mul_mat_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_mul_mat_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- FLASH_ATTN_EXT, FLASH_ATTN_BACK ----
 * Parameters: scale, max_bias (ALiBi), logit_softcap (the backward op uses
 * scale only). Sources: q, k, v, mask (or NULL); the forward adds its
 * row-statistics tensor (2 * N*H*B floats: row max, then log of the row sum,
 * row index (b*H + h)*N + n), an output its kernel fills as it goes, kept in
 * src[] so that every graph walk sees it; the backward adds d = dL/dO and,
 * when built from a forward node (autodiff), that node and its statistics,
 * so that it reads the output instead of running the forward again. */
struct ggmlr_flash_attn_params { float scale, max_bias, logit_softcap; };
static inline void ggmlr_flash_attn_params_encode(struct ggml_tensor * t, const struct ggmlr_flash_attn_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_flash_attn_params ggmlr_flash_attn_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_flash_attn_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* The precision (upstream's word 3, after the floats above): FLASH_ATTN_EXT's
 * from ggml_flash_attn_ext_set_prec, FLASH_ATTN_BACK's its forward's (0 when
 * built on its own). GGML_PREC_BF16 rounds the products' operands to bf16
 * (cpu/kernels/flash_attn_bf16.c); the sums are F32 whatever it says. */
static inline void ggmlr_flash_attn_prec_encode(struct ggml_tensor * t, int32_t prec) {
    memcpy((char *) t->op_params + sizeof(struct ggmlr_flash_attn_params), &prec, sizeof prec);
}
static inline int32_t ggmlr_flash_attn_prec_decode(const struct ggml_tensor * t) {
    int32_t prec;
    memcpy(&prec, (const char *) t->op_params + sizeof(struct ggmlr_flash_attn_params), sizeof prec);
    return prec;
}

struct ggmlr_flash_attn_srcs {
    struct ggml_tensor * q, * k, * v, * mask;
    struct ggml_tensor * d;           /* FLASH_ATTN_BACK: dL/dO */
    struct ggml_tensor * stats;       /* FLASH_ATTN_EXT: its row statistics; FLASH_ATTN_BACK: the saved forward's */
    struct ggml_tensor * saved_out;   /* FLASH_ATTN_BACK built from a forward node: that node (else NULL) */
};
/* FLASH_ATTN_BACK's result packs [dq | dk | dv], each slice padded to a
 * multiple of 16 bytes (docs/attention.md): a slice's length in floats. */
static inline int64_t ggmlr_pad16_floats(int64_t n) { return (n + 3) / 4 * 4; }  /* = ceil(4n / 16) * 16 / 4, without overflow */

/* slots: q, k, v, mask at 0..3; EXT: the sinks (below) at 4, stats at 5; BACK: d at 4, and the saved forward node, then its stats, at 5, 6 */
static inline void ggmlr_flash_attn_srcs_encode(struct ggml_tensor * t, const struct ggmlr_flash_attn_srcs * s) {
    t->src[0] = s->q; t->src[1] = s->k; t->src[2] = s->v; t->src[3] = s->mask;
    if (t->op == GGML_OP_FLASH_ATTN_EXT) { t->src[5] = s->stats; return; }
    t->src[4] = s->d; t->src[5] = s->saved_out; t->src[6] = s->stats;
}
static inline struct ggmlr_flash_attn_srcs ggmlr_flash_attn_srcs_decode(const struct ggml_tensor * t) {
    const bool fwd = t->op == GGML_OP_FLASH_ATTN_EXT;
    const struct ggmlr_flash_attn_srcs s = {t->src[0], t->src[1], t->src[2], t->src[3], fwd ? NULL : t->src[4],
                                            fwd ? t->src[5] : t->src[6], fwd ? NULL : t->src[5]};
    return s;
}

/* FLASH_ATTN_EXT's attention sinks: NULL or F32 [H], one logit per query head that joins each row's
 * softmax denominator only (upstream's src[4], set by ggml_flash_attn_ext_add_sinks); NULL for BACK */
static inline void ggmlr_flash_attn_sinks_encode(struct ggml_tensor * t, struct ggml_tensor * sinks) { t->src[4] = sinks; }
static inline struct ggml_tensor * ggmlr_flash_attn_sinks_decode(const struct ggml_tensor * t) {
    return t->op == GGML_OP_FLASH_ATTN_EXT ? t->src[4] : NULL;
}

/* ---- the sources past a and b of the other ops ---- */

/* ROPE, ROPE_BACK: the frequency factors (or NULL) */
static inline void ggmlr_rope_freq_factors_encode(struct ggml_tensor * t, struct ggml_tensor * c) { t->src[2] = c; }
static inline struct ggml_tensor * ggmlr_rope_freq_factors_decode(const struct ggml_tensor * t) { return t->src[2]; }
/* GLU_BACK: dy, then the forward's a and b (b NULL without a split) */
struct ggmlr_glu_back_srcs { struct ggml_tensor * dy, * a, * b; };
static inline void ggmlr_glu_back_srcs_encode(struct ggml_tensor * t, const struct ggmlr_glu_back_srcs * s) {
    t->src[0] = s->dy; t->src[1] = s->a; t->src[2] = s->b;
}
static inline struct ggmlr_glu_back_srcs ggmlr_glu_back_srcs_decode(const struct ggml_tensor * t) {
    const struct ggmlr_glu_back_srcs s = {t->src[0], t->src[1], t->src[2]};
    return s;
}
/* CROSS_ENTROPY_LOSS_BACK: the loss gradient (one element) */
static inline void ggmlr_loss_grad_encode(struct ggml_tensor * t, struct ggml_tensor * c) { t->src[2] = c; }
static inline struct ggml_tensor * ggmlr_loss_grad_decode(const struct ggml_tensor * t) { return t->src[2]; }

/* OPT_STEP_ADAMW (grad, m, v, hyper-parameters) and OPT_STEP_SGD (grad,
 * hyper-parameters; m, v NULL): the weights a are src[0] */
struct ggmlr_opt_step_srcs { struct ggml_tensor * a, * grad, * m, * v, * hparams; };
static inline void ggmlr_opt_step_srcs_encode(struct ggml_tensor * t, const struct ggmlr_opt_step_srcs * s) {
    t->src[0] = s->a; t->src[1] = s->grad;
    if (t->op == GGML_OP_OPT_STEP_ADAMW) { t->src[2] = s->m; t->src[3] = s->v; t->src[4] = s->hparams; }
    else                                 { t->src[2] = s->hparams; }
}
static inline struct ggmlr_opt_step_srcs ggmlr_opt_step_srcs_decode(const struct ggml_tensor * t) {
    const bool adamw = t->op == GGML_OP_OPT_STEP_ADAMW;
    const struct ggmlr_opt_step_srcs s = {t->src[0], t->src[1], adamw ? t->src[2] : NULL, adamw ? t->src[3] : NULL, adamw ? t->src[4] : t->src[2]};
    return s;
}

/* ---- SET (upstream's layout: int32 [0..2] nb1..nb3, [3] offset, [4] inplace):
 * b written over the region (nb1..nb3, offset) of a copy of a, or of a ---- */
struct ggmlr_set_params { int32_t nb1, nb2, nb3, offset, inplace; };
static inline void ggmlr_set_params_encode(struct ggml_tensor * t, const struct ggmlr_set_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_set_params ggmlr_set_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_set_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}
/* ACC, SET: whether the rows of a region of shape ne (elements of esize
 * bytes, strides st = nb1..nb3) land on disjoint elements (each stride at
 * least the extent of the block below it, as for any view). */
static inline bool ggmlr_region_rows_disjoint(const int64_t ne[4], size_t esize, const size_t st[3]) {
    size_t extent = (size_t) ne[0] * esize;
    for (int d = 1; d < 4; d++) {
        if (ne[d] <= 1) continue;
        if (st[d - 1] < extent) return false;
        extent += st[d - 1] * (size_t) (ne[d] - 1);
    }
    return true;
}


/* ---- SSM_CONV_BACK: which gradient (0: sx, 1: c); its sources dy, then the
 * forward's sx and c ---- */
struct ggmlr_ssm_conv_back_srcs { struct ggml_tensor * dy, * sx, * c; };
static inline void ggmlr_ssm_conv_back_srcs_encode(struct ggml_tensor * t, const struct ggmlr_ssm_conv_back_srcs * s) {
    t->src[0] = s->dy; t->src[1] = s->sx; t->src[2] = s->c;
}
static inline struct ggmlr_ssm_conv_back_srcs ggmlr_ssm_conv_back_srcs_decode(const struct ggml_tensor * t) {
    const struct ggmlr_ssm_conv_back_srcs s = {t->src[0], t->src[1], t->src[2]};
    return s;
}

/* ---- SSM_SCAN (upstream's layout: [0] K, the states kept); SSM_SCAN_BACK
 * adds [1] which: the source whose gradient it is (0..5: s, x, dt, A, B, C).
 * Sources: upstream's s, x, dt, A, B, C, ids at 0..6; SSM_SCAN_BACK adds the
 * result's gradient dy at 7 ---- */
enum { GGMLR_SSM_S, GGMLR_SSM_X, GGMLR_SSM_DT, GGMLR_SSM_A, GGMLR_SSM_B, GGMLR_SSM_C, GGMLR_SSM_IDS, GGMLR_SSM_DY };
struct ggmlr_ssm_scan_params { int32_t K, which; };
static inline void ggmlr_ssm_scan_params_encode(struct ggml_tensor * t, const struct ggmlr_ssm_scan_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_ssm_scan_params ggmlr_ssm_scan_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_ssm_scan_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}
struct ggmlr_ssm_scan_srcs { struct ggml_tensor * s, * x, * dt, * A, * B, * C, * ids, * dy; };
static inline void ggmlr_ssm_scan_srcs_encode(struct ggml_tensor * t, const struct ggmlr_ssm_scan_srcs * s) {
    t->src[GGMLR_SSM_S] = s->s; t->src[GGMLR_SSM_X] = s->x; t->src[GGMLR_SSM_DT] = s->dt; t->src[GGMLR_SSM_A] = s->A;
    t->src[GGMLR_SSM_B] = s->B; t->src[GGMLR_SSM_C] = s->C; t->src[GGMLR_SSM_IDS] = s->ids;
    if (t->op == GGML_OP_SSM_SCAN_BACK) t->src[GGMLR_SSM_DY] = s->dy;
}
static inline struct ggmlr_ssm_scan_srcs ggmlr_ssm_scan_srcs_decode(const struct ggml_tensor * t) {
    const struct ggmlr_ssm_scan_srcs s = {t->src[GGMLR_SSM_S], t->src[GGMLR_SSM_X], t->src[GGMLR_SSM_DT], t->src[GGMLR_SSM_A],
                                          t->src[GGMLR_SSM_B], t->src[GGMLR_SSM_C], t->src[GGMLR_SSM_IDS],
                                          t->op == GGML_OP_SSM_SCAN_BACK ? t->src[GGMLR_SSM_DY] : NULL};
    return s;
}

/* ---- ARANGE (upstream's layout: [0] start, [1] stop, [2] step); FILL: one float (its value) ---- */
struct ggmlr_arange_params { float start, stop, step; };
static inline void ggmlr_arange_params_encode(struct ggml_tensor * t, const struct ggmlr_arange_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_arange_params ggmlr_arange_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_arange_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- SET_ROWS: the rows b written into a at the indices c; upstream's
 * slots (legacy order): b at 0, c at 1, a at 2 ---- */
struct ggmlr_set_rows_srcs { struct ggml_tensor * a, * b, * c; };
static inline void ggmlr_set_rows_srcs_encode(struct ggml_tensor * t, const struct ggmlr_set_rows_srcs * s) {
    t->src[0] = s->b; t->src[1] = s->c; t->src[2] = s->a;
}
static inline struct ggmlr_set_rows_srcs ggmlr_set_rows_srcs_decode(const struct ggml_tensor * t) {
    const struct ggmlr_set_rows_srcs s = {t->src[2], t->src[0], t->src[1]};
    return s;
}

/* ---- WIN_PART (upstream's layout: [0] npx, [1] npy, the windows along ne1
 * and ne2, [2] w, their side) ---- */
struct ggmlr_win_part_params { int32_t npx, npy, w; };
static inline void ggmlr_win_part_params_encode(struct ggml_tensor * t, const struct ggmlr_win_part_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_win_part_params ggmlr_win_part_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_win_part_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- ADD_REL_POS: a, then the width and height terms pw, ph (upstream's src[0..2]) ---- */
struct ggmlr_add_rel_pos_srcs { struct ggml_tensor * a, * pw, * ph; };
static inline void ggmlr_add_rel_pos_srcs_encode(struct ggml_tensor * t, const struct ggmlr_add_rel_pos_srcs * s) {
    t->src[0] = s->a; t->src[1] = s->pw; t->src[2] = s->ph;
}
static inline struct ggmlr_add_rel_pos_srcs ggmlr_add_rel_pos_srcs_decode(const struct ggml_tensor * t) {
    const struct ggmlr_add_rel_pos_srcs s = {t->src[0], t->src[1], t->src[2]};
    return s;
}

/* ---- ADD_ID, MUL_MAT_ID: the expert ids (upstream's src[2]) ---- */
static inline void ggmlr_expert_ids_encode(struct ggml_tensor * t, struct ggml_tensor * ids) { t->src[2] = ids; }
static inline struct ggml_tensor * ggmlr_expert_ids_decode(const struct ggml_tensor * t) { return t->src[2]; }

/* ---- ROLL (upstream's layout: [0..3] the shifts) ---- */
struct ggmlr_roll_params { int32_t shift[4]; };
static inline void ggmlr_roll_params_encode(struct ggml_tensor * t, const struct ggmlr_roll_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_roll_params ggmlr_roll_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_roll_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- TIMESTEP_EMBEDDING (upstream's layout: [0] dim, [1] max_period) ---- */
struct ggmlr_timestep_params { int32_t dim, max_period; };
static inline void ggmlr_timestep_params_encode(struct ggml_tensor * t, const struct ggmlr_timestep_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_timestep_params ggmlr_timestep_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_timestep_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- SOLVE_TRI: which triangle of a, and whether its diagonal is taken as
 * ones (upstream keeps no slots: it takes the lower, left, non-unit form only) ---- */
struct ggmlr_solve_tri_params { int32_t left, lower, uni; };
static inline void ggmlr_solve_tri_params_encode(struct ggml_tensor * t, const struct ggmlr_solve_tri_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_solve_tri_params ggmlr_solve_tri_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_solve_tri_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- LIGHTNING_INDEXER: q, k, weights, mask (upstream's src[0..3]) ---- */
struct ggmlr_lightning_indexer_srcs { struct ggml_tensor * q, * k, * weights, * mask; };
static inline void ggmlr_lightning_indexer_srcs_encode(struct ggml_tensor * t, const struct ggmlr_lightning_indexer_srcs * s) {
    t->src[0] = s->q; t->src[1] = s->k; t->src[2] = s->weights; t->src[3] = s->mask;
}
static inline struct ggmlr_lightning_indexer_srcs ggmlr_lightning_indexer_srcs_decode(const struct ggml_tensor * t) {
    const struct ggmlr_lightning_indexer_srcs s = {t->src[0], t->src[1], t->src[2], t->src[3]};
    return s;
}

/* ---- DSV4_HC_COMB (upstream's layout: [0] eps, [1] n_iter; mixes, scale, base at src[0..2]) ---- */
struct ggmlr_dsv4_hc_comb_params { float eps; int32_t n_iter; };
static inline void ggmlr_dsv4_hc_comb_params_encode(struct ggml_tensor * t, const struct ggmlr_dsv4_hc_comb_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_dsv4_hc_comb_params ggmlr_dsv4_hc_comb_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_dsv4_hc_comb_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}
struct ggmlr_dsv4_hc_comb_srcs { struct ggml_tensor * mixes, * scale, * base; };
static inline void ggmlr_dsv4_hc_comb_srcs_encode(struct ggml_tensor * t, const struct ggmlr_dsv4_hc_comb_srcs * s) {
    t->src[0] = s->mixes; t->src[1] = s->scale; t->src[2] = s->base;
}
static inline struct ggmlr_dsv4_hc_comb_srcs ggmlr_dsv4_hc_comb_srcs_decode(const struct ggml_tensor * t) {
    const struct ggmlr_dsv4_hc_comb_srcs s = {t->src[0], t->src[1], t->src[2]};
    return s;
}
/* ---- DSV4_HC_POST: x, residual, post, comb (upstream's src[0..3]) ---- */
struct ggmlr_dsv4_hc_post_srcs { struct ggml_tensor * x, * residual, * post, * comb; };
static inline void ggmlr_dsv4_hc_post_srcs_encode(struct ggml_tensor * t, const struct ggmlr_dsv4_hc_post_srcs * s) {
    t->src[0] = s->x; t->src[1] = s->residual; t->src[2] = s->post; t->src[3] = s->comb;
}
static inline struct ggmlr_dsv4_hc_post_srcs ggmlr_dsv4_hc_post_srcs_decode(const struct ggml_tensor * t) {
    const struct ggmlr_dsv4_hc_post_srcs s = {t->src[0], t->src[1], t->src[2], t->src[3]};
    return s;
}

/* ---- the recurrent linear attentions (upstream's source slots). The
 * diagonal-decay pair, RWKV_WKV6 (k, v, r, tf, td, state) and
 * GATED_LINEAR_ATTN (k, v, q, g, state; [0] the float scale), read as one
 * recurrence over a state S [key i, value j], per head:
 *   y_t[j] = sum_i q_i (a_i P_ij + b_i k_i v_j),  S_t = diag(w) P + k v^T,  P = S_{t-1}
 * with WKV6: q = r, a = 1, b = u = tf, w = td; GLA: q = scale q, a = w = g, b = 1 (u NULL).
 * Their _BACK ops hold the same sources at the same slots, then dL/d(result)
 * (contiguous) at slot n (5 or 6); their result packs the sources'
 * gradients, slot by slot (ggmlr_packed_grad_offset). ---- */
struct ggmlr_decay_attn_srcs { struct ggml_tensor * k, * v, * q, * u, * w, * state, * grad; };
static inline bool ggmlr_decay_attn_is_wkv6(const struct ggml_tensor * t) {
    return t->op == GGML_OP_RWKV_WKV6 || t->op == GGML_OP_RWKV_WKV6_BACK;
}
static inline int ggmlr_decay_attn_n_srcs(const struct ggml_tensor * t) { return ggmlr_decay_attn_is_wkv6(t) ? 6 : 5; }
static inline void ggmlr_decay_attn_srcs_encode(struct ggml_tensor * t, const struct ggmlr_decay_attn_srcs * s) {
    const bool wkv6 = ggmlr_decay_attn_is_wkv6(t);
    t->src[0] = s->k; t->src[1] = s->v; t->src[2] = s->q;
    if (wkv6) { t->src[3] = s->u; t->src[4] = s->w; t->src[5] = s->state; }
    else      { t->src[3] = s->w; t->src[4] = s->state; }
    if (t->op == GGML_OP_RWKV_WKV6_BACK || t->op == GGML_OP_GATED_LINEAR_ATTN_BACK) t->src[ggmlr_decay_attn_n_srcs(t)] = s->grad;
}
static inline struct ggmlr_decay_attn_srcs ggmlr_decay_attn_srcs_decode(const struct ggml_tensor * t) {
    const bool wkv6 = ggmlr_decay_attn_is_wkv6(t);
    const bool back = t->op == GGML_OP_RWKV_WKV6_BACK || t->op == GGML_OP_GATED_LINEAR_ATTN_BACK;
    const struct ggmlr_decay_attn_srcs s = {t->src[0], t->src[1], t->src[2], wkv6 ? t->src[3] : NULL, wkv6 ? t->src[4] : t->src[3],
                                            wkv6 ? t->src[5] : t->src[4], back ? t->src[ggmlr_decay_attn_n_srcs(t)] : NULL};
    return s;
}
/* the readout's scale: GLA's parameter, 1 for WKV6 */
static inline float ggmlr_decay_attn_scale_decode(const struct ggml_tensor * t) {
    if (ggmlr_decay_attn_is_wkv6(t)) return 1.0f;
    float v; ggmlr_params_get(t, &v, sizeof v); return v;
}
/* A packed gradient (RWKV_WKV6_BACK, GATED_LINEAR_ATTN_BACK, RWKV_WKV7_BACK, GATED_DELTA_NET_BACK):
 * where source slot's gradient starts, in floats (its sources' elements before it). */
static inline int64_t ggmlr_packed_grad_offset(const struct ggml_tensor * t, int slot) {
    int64_t off = 0;
    for (int s = 0; s < slot; s++) off += ggml_nelements(t->src[s]);
    return off;
}

/* RWKV_WKV7: r, w, k, v, a, b, state (upstream's slots); RWKV_WKV7_BACK the
 * same, then dL/d(result) (contiguous) at slot 7; its result packs the
 * sources' gradients slot by slot */
struct ggmlr_wkv7_srcs { struct ggml_tensor * r, * w, * k, * v, * a, * b, * state, * grad; };
static inline void ggmlr_wkv7_srcs_encode(struct ggml_tensor * t, const struct ggmlr_wkv7_srcs * s) {
    t->src[0] = s->r; t->src[1] = s->w; t->src[2] = s->k; t->src[3] = s->v; t->src[4] = s->a; t->src[5] = s->b; t->src[6] = s->state;
    if (t->op == GGML_OP_RWKV_WKV7_BACK) t->src[7] = s->grad;
}
static inline struct ggmlr_wkv7_srcs ggmlr_wkv7_srcs_decode(const struct ggml_tensor * t) {
    const struct ggmlr_wkv7_srcs s = {t->src[0], t->src[1], t->src[2], t->src[3], t->src[4], t->src[5], t->src[6],
                                      t->op == GGML_OP_RWKV_WKV7_BACK ? t->src[7] : NULL};
    return s;
}

/* GATED_DELTA_NET: q, k, v, g, beta, state (upstream's slots; K by
 * ggmlr_i32_param_encode); GATED_DELTA_NET_BACK the same and K, then
 * dL/d(result) (contiguous) at slot 6; its result packs the sources' gradients */
struct ggmlr_gdn_srcs { struct ggml_tensor * q, * k, * v, * g, * beta, * state, * grad; };
static inline void ggmlr_gdn_srcs_encode(struct ggml_tensor * t, const struct ggmlr_gdn_srcs * s) {
    t->src[0] = s->q; t->src[1] = s->k; t->src[2] = s->v; t->src[3] = s->g; t->src[4] = s->beta; t->src[5] = s->state;
    if (t->op == GGML_OP_GATED_DELTA_NET_BACK) t->src[6] = s->grad;
}
static inline struct ggmlr_gdn_srcs ggmlr_gdn_srcs_decode(const struct ggml_tensor * t) {
    const struct ggmlr_gdn_srcs s = {t->src[0], t->src[1], t->src[2], t->src[3], t->src[4], t->src[5],
                                     t->op == GGML_OP_GATED_DELTA_NET_BACK ? t->src[6] : NULL};
    return s;
}

#endif
#else
/* ======== part 2: the rows ======== */

/*       OP                       kernel              rule */
GGMLR_OP(NONE,                    none,               none)
GGMLR_OP(DUP,                     dup,                dup)
GGMLR_OP(ADD,                     binary,             add)
GGMLR_OP(ADD_ID,                  add_id,             add_id)
GGMLR_OP(ADD1,                    binary,             add1)
GGMLR_OP(ACC,                     acc,                acc)
GGMLR_OP(SUB,                     binary,             sub)
GGMLR_OP(MUL,                     binary,             mul)
GGMLR_OP(DIV,                     binary,             div)
GGMLR_OP(SQR,                     map,                sqr)
GGMLR_OP(SQRT,                    map,                sqrt)
GGMLR_OP(LOG,                     map,                log)
GGMLR_OP(SIN,                     map,                sin)
GGMLR_OP(COS,                     map,                cos)
GGMLR_OP(SUM,                     sum,                sum)
GGMLR_OP(SUM_ROWS,                sum_rows,           sum)
GGMLR_OP(CUMSUM,                  cumsum,             cumsum)
GGMLR_OP(MEAN,                    sum_rows,           mean)
GGMLR_OP(ARGMAX,                  argmax,             none)
GGMLR_OP(COUNT_EQUAL,             count_equal,        none)
GGMLR_OP(REPEAT,                  repeat,             repeat)
GGMLR_OP(REPEAT_BACK,             repeat_back,        repeat_back)
GGMLR_OP(CONCAT,                  concat,             concat)
GGMLR_OP(SILU_BACK,               unary,              none)
GGMLR_OP(NORM,                    norm,               norm)
GGMLR_OP(RMS_NORM,                norm,               rms_norm)
GGMLR_OP(RMS_NORM_BACK,           norm_back,          none)
GGMLR_OP(GROUP_NORM,              group_norm,         group_norm)
GGMLR_OP(L2_NORM,                 norm,               l2_norm)
GGMLR_OP(MUL_MAT,                 mul_mat,            mul_mat)
GGMLR_OP(MUL_MAT_ID,              mul_mat_id,         mul_mat_id)
GGMLR_OP(OUT_PROD,                mul_mat,            out_prod)
GGMLR_OP(SCALE,                   map,                scale)
GGMLR_OP(SET,                     set,                set)
GGMLR_OP(CPY,                     dup,                cpy)
GGMLR_OP(CONT,                    dup,                dup)
GGMLR_OP(RESHAPE,                 none,               reshape)
GGMLR_OP(VIEW,                    none,               view)
GGMLR_OP(PERMUTE,                 none,               permute)
GGMLR_OP(TRANSPOSE,               none,               transpose)
GGMLR_OP(GET_ROWS,                get_rows,           get_rows)
GGMLR_OP(GET_ROWS_BACK,           get_rows_back,      none)
GGMLR_OP(SET_ROWS,                set_rows,           set_rows)
GGMLR_OP(DIAG,                    diag,               diag)
GGMLR_OP(DIAG_MASK_INF,           diag_mask,          diag_mask)
GGMLR_OP(DIAG_MASK_ZERO,          diag_mask,          diag_mask)
GGMLR_OP(SOFT_MAX,                soft_max,           soft_max)
GGMLR_OP(SOFT_MAX_BACK,           soft_max_back,      none)
GGMLR_OP(ROPE,                    rope,               rope)
GGMLR_OP(ROPE_BACK,               rope,               rope)
GGMLR_OP(CLAMP,                   map,                clamp)
GGMLR_OP(CONV_TRANSPOSE_1D,       conv_transpose,     conv_transpose)
GGMLR_OP(IM2COL,                  im2col,             im2col)
GGMLR_OP(IM2COL_BACK,             im2col_back,        im2col_back)
GGMLR_OP(IM2COL_3D,               im2col_3d,          im2col_3d)
GGMLR_OP(COL2IM_1D,               col2im_1d,          col2im_1d)
GGMLR_OP(CONV_2D,                 conv_direct,        conv_direct)
GGMLR_OP(CONV_3D,                 conv_direct,        conv_direct)
GGMLR_OP(CONV_2D_DW,              conv_direct,        conv_direct)
GGMLR_OP(CONV_TRANSPOSE_2D,       conv_transpose,     conv_transpose)
GGMLR_OP(POOL_1D,                 pool,               pool_1d)
GGMLR_OP(POOL_2D,                 pool,               pool_2d)
GGMLR_OP(POOL_2D_BACK,            pool_back,          none)
GGMLR_OP(UPSCALE,                 upscale,            upscale)
GGMLR_OP(PAD,                     pad,                pad)
GGMLR_OP(PAD_REFLECT_1D,          pad,                pad)
GGMLR_OP(ROLL,                    roll,               roll)
GGMLR_OP(ARANGE,                  arange,             none)
GGMLR_OP(TIMESTEP_EMBEDDING,      timestep_embedding, timestep_embedding)
GGMLR_OP(ARGSORT,                 sort,               none)
GGMLR_OP(TOP_K,                   sort,               none)
GGMLR_OP(LEAKY_RELU,              map,                leaky_relu)
GGMLR_OP(TRI,                     tri,                tri)
GGMLR_OP(FILL,                    fill,               fill)
GGMLR_OP(FLASH_ATTN_EXT,          flash_attn_ext,     flash_attn_ext)
GGMLR_OP(FLASH_ATTN_BACK,         flash_attn_back,    none)
GGMLR_OP(SSM_CONV,                ssm_conv,           ssm_conv)
GGMLR_OP(SSM_SCAN,                ssm_scan,           ssm_scan)
GGMLR_OP(WIN_PART,                win_part,           win_part)
GGMLR_OP(WIN_UNPART,              win_unpart,         win_unpart)
GGMLR_OP(GET_REL_POS,             get_rel_pos,        get_rel_pos)
GGMLR_OP(ADD_REL_POS,             add_rel_pos,        add_rel_pos)
GGMLR_OP(RWKV_WKV6,               decay_attn,         decay_attn)
GGMLR_OP(GATED_LINEAR_ATTN,       decay_attn,         decay_attn)
GGMLR_OP(RWKV_WKV7,               rwkv_wkv7,          rwkv_wkv7)
GGMLR_OP(SOLVE_TRI,               solve_tri,          solve_tri)
GGMLR_OP(GATED_DELTA_NET,         gated_delta_net,    gated_delta_net)
GGMLR_OP(LIGHTNING_INDEXER,       lightning_indexer,  lightning_indexer)
GGMLR_OP(DSV4_HC_COMB,            dsv4_hc_comb,       none)
GGMLR_OP(DSV4_HC_PRE,             dsv4_hc_pre,        dsv4_hc_pre)
GGMLR_OP(DSV4_HC_POST,            dsv4_hc_post,       dsv4_hc_post)
GGMLR_OP(UNARY,                   unary,              unary)
GGMLR_OP(MAP_CUSTOM1,             custom,             none)
GGMLR_OP(MAP_CUSTOM2,             custom,             none)
GGMLR_OP(MAP_CUSTOM3,             custom,             none)
GGMLR_OP(CUSTOM,                  custom,             none)
GGMLR_OP(CROSS_ENTROPY_LOSS,      cross_entropy_loss, cross_entropy_loss)
GGMLR_OP(CROSS_ENTROPY_LOSS_BACK, cross_entropy_loss_back, none)
GGMLR_OP(OPT_STEP_ADAMW,          opt_step_adamw,     none)
GGMLR_OP(OPT_STEP_SGD,            opt_step_sgd,       none)
GGMLR_OP(GLU,                     glu,                glu)
/* ggmlr's own backward ops, after upstream's numbers */
GGMLR_OP(NORM_BACK,               norm_back,          none)
GGMLR_OP(UNARY_BACK,              unary,              none)
GGMLR_OP(GLU_BACK,                glu_back,           none)
GGMLR_OP(UPSCALE_BACK,            upscale_back,       none)
GGMLR_OP(L2_NORM_BACK,            norm_back,          none)
GGMLR_OP(GROUP_NORM_BACK,         group_norm,         none)
GGMLR_OP(PAD_BACK,                pad_back,           pad_back)
GGMLR_OP(GET_REL_POS_BACK,        get_rel_pos_back,   none)
GGMLR_OP(SSM_CONV_BACK,           ssm_conv_back,      none)
GGMLR_OP(SSM_SCAN_BACK,           ssm_scan_back,      none)
GGMLR_OP(RWKV_WKV6_BACK,          decay_attn_back,    none)
GGMLR_OP(GATED_LINEAR_ATTN_BACK,  decay_attn_back,    none)
GGMLR_OP(RWKV_WKV7_BACK,          rwkv_wkv7_back,     none)
GGMLR_OP(GATED_DELTA_NET_BACK,    gated_delta_net_back, none)
GGMLR_OP(CONV_DIRECT_BACK,        conv_direct_back,   conv_direct_back)
GGMLR_OP(IM2COL_3D_BACK,          im2col_3d_back,     im2col_3d_back)

#endif

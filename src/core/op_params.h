/* op_params.h -- the contract between an op's constructor, its backward rule
 * and its kernel: the scalar parameters a node carries in op_params, and the
 * sources beyond a and b, as typed structs.
 *
 * Each op (family) with parameters has one struct, one encode (the
 * constructor stores it) and one decode (rules and kernels read it); no other
 * file indexes op_params or names a source slot past src[1]. Slots follow
 * upstream ggml's layout where it has one (rope, soft_max, flash_attn_ext,
 * view, permute, scale, norm eps, unary op, glu), so a node reads the same in both.
 * op_params holds GGML_MAX_OP_PARAMS bytes as 32-bit words; floats and
 * size_t are copied in by bytes (no aliasing). */
#ifndef GGMLR_OP_PARAMS_H
#define GGMLR_OP_PARAMS_H

#include "ggml.h"

#include <stdbool.h>
#include <string.h>

static inline void ggmlr_params_put(struct ggml_tensor * t, const void * p, size_t n) {
    _Static_assert(GGML_MAX_OP_PARAMS >= 64, "op_params holds every struct below");
    memcpy(t->op_params, p, n);
}
static inline void ggmlr_params_get(const struct ggml_tensor * t, void * p, size_t n) { memcpy(p, t->op_params, n); }

/* ---- one float: SCALE (s), NORM / RMS_NORM and their _BACK (eps) ---- */

static inline void  ggmlr_f32_param_encode(struct ggml_tensor * t, float v) { ggmlr_params_put(t, &v, sizeof v); }
static inline float ggmlr_f32_param_decode(const struct ggml_tensor * t) { float v; ggmlr_params_get(t, &v, sizeof v); return v; }

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

/* ---- SOFT_MAX, SOFT_MAX_BACK: softmax(scale * x + slope * mask) ---- */

struct ggmlr_soft_max_params { float scale, max_bias; };
static inline void ggmlr_soft_max_params_encode(struct ggml_tensor * t, const struct ggmlr_soft_max_params * p) { ggmlr_params_put(t, p, sizeof *p); }
static inline struct ggmlr_soft_max_params ggmlr_soft_max_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_soft_max_params p; ggmlr_params_get(t, &p, sizeof p); return p;
}

/* ---- UNARY, UNARY_BACK: which activation ---- */

static inline void ggmlr_unary_params_encode(struct ggml_tensor * t, enum ggml_unary_op op) { const int32_t v = (int32_t) op; ggmlr_params_put(t, &v, sizeof v); }
static inline enum ggml_unary_op ggmlr_unary_params_decode(const struct ggml_tensor * t) { int32_t v; ggmlr_params_get(t, &v, sizeof v); return (enum ggml_unary_op) v; }

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

/* ---- ROPE, ROPE_BACK (upstream's layout: [1] n_dims, [2] mode, [4] n_ctx_orig, [5..10] the floats) ---- */

struct ggmlr_rope_params {
    int32_t n_dims, mode, n_ctx_orig;
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
};
struct ggmlr_rope_slots {  /* the op_params words, as upstream lays them out */
    int32_t unused0, n_dims, mode, unused3, n_ctx_orig;
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
};
static inline void ggmlr_rope_params_encode(struct ggml_tensor * t, const struct ggmlr_rope_params * p) {
    const struct ggmlr_rope_slots s = {0, p->n_dims, p->mode, 0, p->n_ctx_orig, p->freq_base, p->freq_scale, p->ext_factor,
                                       p->attn_factor, p->beta_fast, p->beta_slow};
    ggmlr_params_put(t, &s, sizeof s);
}
static inline struct ggmlr_rope_params ggmlr_rope_params_decode(const struct ggml_tensor * t) {
    struct ggmlr_rope_slots s;
    ggmlr_params_get(t, &s, sizeof s);
    const struct ggmlr_rope_params p = {s.n_dims, s.mode, s.n_ctx_orig, s.freq_base, s.freq_scale, s.ext_factor, s.attn_factor,
                                        s.beta_fast, s.beta_slow};
    return p;
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

struct ggmlr_flash_attn_srcs {
    struct ggml_tensor * q, * k, * v, * mask;
    struct ggml_tensor * d;           /* FLASH_ATTN_BACK: dL/dO */
    struct ggml_tensor * stats;       /* FLASH_ATTN_EXT: its row statistics; FLASH_ATTN_BACK: the saved forward's */
    struct ggml_tensor * saved_out;   /* FLASH_ATTN_BACK built from a forward node: that node (else NULL) */
};
/* FLASH_ATTN_BACK's result packs [dq | dk | dv], each slice padded to a
 * multiple of 16 bytes (docs/attention.md): a slice's length in floats. */
static inline int64_t ggmlr_pad16_floats(int64_t n) { return (n + 3) / 4 * 4; }  /* = ceil(4n / 16) * 16 / 4, without overflow */

/* slots: q, k, v, mask at 0..3; EXT: stats at 5; BACK: d at 4, and the saved forward node, then its stats, at 5, 6 */
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

/* ---- one int32: DIAG_MASK_INF / DIAG_MASK_ZERO (n_past), TRI (enum ggml_tri_type); [0] as upstream ---- */
static inline void    ggmlr_i32_param_encode(struct ggml_tensor * t, int32_t v) { ggmlr_params_put(t, &v, sizeof v); }
static inline int32_t ggmlr_i32_param_decode(const struct ggml_tensor * t) { int32_t v; ggmlr_params_get(t, &v, sizeof v); return v; }

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

#endif

/* rope.c -- position encodings: the rotary position embedding (ROPE) and
 * its backward (ROPE_BACK), and the sinusoidal timestep embedding
 * (TIMESTEP_EMBEDDING), constructors and backward rules.
 *
 * a F32 or F16 [ne0 = head dim, n_head, n_tokens, ne3], b I32 positions [n_tokens]
 * (4 n_tokens in the multi-section modes of rope_multi: streams t, h, w, e),
 * c NULL or F32 frequency factors [>= one per rotated pair]. Entries
 * [n_offs, n_offs + n_dims) of each row (n_offs 0 unless ggml_rope_set_offset
 * sets it; the whole row in VISION mode) are rotated pair by pair by an angle
 * growing with the position; the rest are copied (cpu/kernels/rope.c has the
 * pairings and the formula). ROPE_BACK rotates by minus that angle: each is
 * the other's gradient, with the same parameters (sections and offset too).
 * The result is contiguous, of a's type and shape, or (_inplace) a view of a
 * written over it: the rule does not read a, so those have a gradient too. */
#include "ops/grad.h"

#include <math.h>

/* ne[1..3] == 1 */
static bool is_vector(const struct ggml_tensor * t) { return t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1; }

/* the sections of a multi-section mode: each in [0, ne0], the first three not all 0 (a pair needs a
 * stream), their sum at most ne0 (upstream's bound) */
static bool check_sections(const char * fn, const struct ggml_tensor * a, const int32_t * sec) {
    const long long ne0 = a->ne[0];
    for (int s = 0; s < GGML_MROPE_SECTIONS; s++) {
        if (sec[s] < 0 || sec[s] > ne0) {
            ggmlr_set_error("%s: sections must be in [0, a->ne[0] = %lld] (got %d, %d, %d, %d)", fn, ne0, sec[0], sec[1], sec[2], sec[3]);
            return false;
        }
    }
    const long long sum = (long long) sec[0] + sec[1] + sec[2] + sec[3];
    if (sec[0] + sec[1] + sec[2] == 0 || sum > ne0) {
        ggmlr_set_error("%s: sections[0..2] must not all be 0 and the sections must sum to at most a->ne[0] = %lld (got %d, %d, %d, %d)",
                        fn, ne0, sec[0], sec[1], sec[2], sec[3]);
        return false;
    }
    return true;
}

static bool check_params(const char * fn, const struct ggml_tensor * a, const struct ggmlr_rope_params * prm) {
    if (prm->mode != GGML_ROPE_TYPE_NORMAL && prm->mode != GGML_ROPE_TYPE_NEOX && !ggmlr_rope_is_multi(prm->mode)) {
        ggmlr_set_error("%s: mode %d is not implemented (GGML_ROPE_TYPE_NORMAL, NEOX, MROPE, VISION or IMROPE)", fn, (int) prm->mode);
        return false;
    }
    if (prm->n_dims <= 0 || prm->n_dims % 2 != 0 || prm->n_dims > a->ne[0]) {
        ggmlr_set_error("%s: n_dims must be even, positive and at most a->ne[0] = %lld (got %d)", fn, (long long) a->ne[0], (int) prm->n_dims);
        return false;
    }
    if (prm->mode == GGML_ROPE_TYPE_VISION && (a->ne[0] != 2 * (int64_t) prm->n_dims || prm->n_offs != 0)) {
        ggmlr_set_error("%s: VISION mode rotates whole rows: a->ne[0] = %lld must be 2 n_dims = %lld, with no offset (got %d)", fn,
                        (long long) a->ne[0], 2 * (long long) prm->n_dims, (int) prm->n_offs);
        return false;
    }
    if (prm->n_offs < 0 || prm->n_offs % 2 != 0 || prm->n_offs > a->ne[0] - prm->n_dims) {
        ggmlr_set_error("%s: n_offs must be even, >= 0 and at most a->ne[0] - n_dims = %lld (got %d)", fn,
                        (long long) (a->ne[0] - prm->n_dims), (int) prm->n_offs);
        return false;
    }
    if (ggmlr_rope_is_multi(prm->mode) && !check_sections(fn, a, prm->sections)) return false;
    const float floats[6] = {prm->freq_base, prm->freq_scale, prm->ext_factor, prm->attn_factor, prm->beta_fast, prm->beta_slow};
    for (int i = 0; i < 6; i++) {
        if (!isfinite(floats[i])) {
            ggmlr_set_error("%s: freq_base, freq_scale, ext_factor, attn_factor, beta_fast and beta_slow must be finite (got %g, %g, %g, %g, %g, %g)",
                            fn, (double) floats[0], (double) floats[1], (double) floats[2], (double) floats[3], (double) floats[4], (double) floats[5]);
            return false;
        }
    }
    if (!(prm->freq_base > 0.0f) || !(prm->freq_scale > 0.0f)) {
        ggmlr_set_error("%s: freq_base and freq_scale must be > 0 (got %g and %g)", fn, (double) prm->freq_base, (double) prm->freq_scale);
        return false;
    }
    /* YaRN's n_ctx_orig, beta_fast and beta_slow are taken as upstream takes them: its correction dims
     * (core/op_list.h) are what upstream computes for any value (n_ctx_orig = 0, upstream's test's, ramps
     * pair 0 only), except where they are NaN (a negative n_ctx_orig or beta): upstream's rows are then
     * NaN, here the call is refused */
    if (prm->ext_factor != 0.0f) {
        float dims[2];
        ggmlr_rope_yarn_corr_dims(prm->n_dims, prm->n_ctx_orig, prm->freq_base, prm->beta_fast, prm->beta_slow, dims);
        if (isnan(dims[0]) || isnan(dims[1])) {
            ggmlr_set_error("%s: YaRN's correction dims are NaN for n_ctx_orig %d, beta_fast %g, beta_slow %g, freq_base %g "
                            "(every rotated row would be NaN)", fn, (int) prm->n_ctx_orig, (double) prm->beta_fast,
                            (double) prm->beta_slow, (double) prm->freq_base);
            return false;
        }
    }
    return true;
}

/* _inplace writes each row over itself, so a may be any view whose rows are packed (nb[0] the element
 * size, as upstream's kernel asserts) and apart: each stride at least the extent of the dim below, so
 * no row overlaps another (else a row's result would depend on the order the threads write) */
static bool rows_packed_apart(const struct ggml_tensor * a) {
    if (a->nb[0] != ggml_type_size(a->type)) return false;
    size_t below = (size_t) a->ne[0] * a->nb[0];  /* the bytes dims 0..d-1 span */
    for (int d = 1; d < GGML_MAX_DIMS; d++) {
        if (a->ne[d] <= 1) continue;
        if (a->nb[d] < below) return false;
        below += (size_t) (a->ne[d] - 1) * a->nb[d];
    }
    return true;
}

/* a new tensor, or (inplace) a view of a written over it */
static struct ggml_tensor * rope_impl(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, struct ggml_tensor * b,
                                      struct ggml_tensor * c, const struct ggmlr_rope_params * prm, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16) return ggmlr_fail_type(fn, "a", a, "F32 or F16");
    if (b->type != GGML_TYPE_I32) return ggmlr_fail_type(fn, "b (positions)", b, "I32");
    const bool multi = ggmlr_rope_is_multi(prm->mode);
    if (!is_vector(b) || b->ne[0] != (multi ? 4 : 1) * a->ne[2])
        return ggmlr_fail_shapes(fn, multi ? "b must be a vector of 4 a->ne[2] positions (t, h, w, e streams)" : "b must be a vector of a->ne[2] positions",
                                 a, b);
    if (!check_params(fn, a, prm)) return NULL;
    const int32_t n_pairs = ggmlr_rope_n_pairs(prm);
    if (c) {
        REQUIRE_F32(fn, c);
        if (!is_vector(c) || c->ne[0] < n_pairs) {
            char sc[96];
            ggmlr_set_error("%s: c (frequency factors) must be a vector of at least one value per rotated pair, %d (got %s)", fn, (int) n_pairs,
                            ggmlr_shape_str(c, sc, sizeof sc));
            return NULL;
        }
    }
    if (inplace && !rows_packed_apart(a)) {
        ggmlr_set_error("%s: a's rows must be packed and apart, as a's result is written over them (nb[0] the element size, each "
                        "stride at least the extent of the dim below)", fn);
        return NULL;
    }
    struct ggml_tensor * t = inplace ? ggmlr_new_view(fn, ctx, a, op, a->ne, a->nb, 0) : ggmlr_new_node(ctx, op, a->type, a->ne, a, b);
    if (!t) return NULL;
    t->src[0] = a;
    t->src[1] = b;
    ggmlr_rope_freq_factors_encode(t, c);
    ggmlr_rope_params_encode(t, prm);
    return t;
}

/* rope_ext's forms take one position per token: the multi-section modes are rope_multi's */
static struct ggml_tensor * rope_single(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, struct ggml_tensor * b,
                                        struct ggml_tensor * c, const struct ggmlr_rope_params * prm, bool inplace) {
    if (ggmlr_rope_is_multi(prm->mode)) {
        ggmlr_set_error("%s: mode %d is a multi-section mode: use ggml_rope_multi", fn, (int) prm->mode);
        return NULL;
    }
    return rope_impl(fn, ctx, op, a, b, c, prm, inplace);
}

/* rope_multi's parameters: the sections are kept in the multi-section modes only (zeros otherwise, as upstream) */
static struct ggml_tensor * rope_multi(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, struct ggml_tensor * b,
                                       struct ggml_tensor * c, int n_dims, const int * sections, int mode, int n_ctx_orig, float freq_base,
                                       float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow, bool inplace) {
    struct ggmlr_rope_params prm = {n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow, {0}, 0};
    if (ggmlr_rope_is_multi(mode)) {
        if (!sections) {
            ggmlr_set_error("%s: sections is NULL (mode %d needs GGML_MROPE_SECTIONS of them)", fn, mode);
            return NULL;
        }
        for (int s = 0; s < GGML_MROPE_SECTIONS; s++) prm.sections[s] = sections[s];
    }
    return rope_impl(fn, ctx, op, a, b, c, &prm, inplace);
}

struct ggml_tensor * ggml_rope_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                   int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                   float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    const struct ggmlr_rope_params prm = {n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow, {0}, 0};
    return rope_single("ggml_rope_ext", ctx, GGML_OP_ROPE, a, b, c, &prm, false);
}

struct ggml_tensor * ggmlr_rope_node(struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, struct ggml_tensor * b,
                                     struct ggml_tensor * c, const struct ggmlr_rope_params * prm) {
    return rope_impl(op == GGML_OP_ROPE ? "rope" : "rope_back", ctx, op, a, b, c, prm, false);
}

struct ggml_tensor * ggml_rope_ext_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                           int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                           float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    const struct ggmlr_rope_params prm = {n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow, {0}, 0};
    return rope_single("ggml_rope_ext_inplace", ctx, GGML_OP_ROPE, a, b, c, &prm, true);
}

/* upstream's older forms: ggml_rope is rope_ext with base 10000 and no scaling;
 * ggml_rope_custom is rope_ext without frequency factors */
static const struct ggmlr_rope_params plain_rope = {.freq_base = 10000.0f, .freq_scale = 1.0f, .attn_factor = 1.0f};

struct ggml_tensor * ggml_rope(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode) {
    struct ggmlr_rope_params prm = plain_rope;
    prm.n_dims = n_dims; prm.mode = mode;
    return rope_single("ggml_rope", ctx, GGML_OP_ROPE, a, b, NULL, &prm, false);
}

struct ggml_tensor * ggml_rope_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode) {
    struct ggmlr_rope_params prm = plain_rope;
    prm.n_dims = n_dims; prm.mode = mode;
    return rope_single("ggml_rope_inplace", ctx, GGML_OP_ROPE, a, b, NULL, &prm, true);
}

struct ggml_tensor * ggml_rope_custom(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode,
                                      int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                      float beta_fast, float beta_slow) {
    const struct ggmlr_rope_params prm = {n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow, {0}, 0};
    return rope_single("ggml_rope_custom", ctx, GGML_OP_ROPE, a, b, NULL, &prm, false);
}

struct ggml_tensor * ggml_rope_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode,
                                              int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                              float beta_fast, float beta_slow) {
    const struct ggmlr_rope_params prm = {n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow, {0}, 0};
    return rope_single("ggml_rope_custom_inplace", ctx, GGML_OP_ROPE, a, b, NULL, &prm, true);
}

struct ggml_tensor * ggml_rope_multi(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                     int n_dims, int sections[GGML_MROPE_SECTIONS], int mode, int n_ctx_orig, float freq_base,
                                     float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return rope_multi("ggml_rope_multi", ctx, GGML_OP_ROPE, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale, ext_factor,
                      attn_factor, beta_fast, beta_slow, false);
}

struct ggml_tensor * ggml_rope_multi_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                             int n_dims, int sections[GGML_MROPE_SECTIONS], int mode, int n_ctx_orig, float freq_base,
                                             float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return rope_multi("ggml_rope_multi_inplace", ctx, GGML_OP_ROPE, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
                      ext_factor, attn_factor, beta_fast, beta_slow, true);
}

struct ggml_tensor * ggml_rope_multi_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                          int n_dims, int sections[4], int mode, int n_ctx_orig, float freq_base,
                                          float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    return rope_multi("ggml_rope_multi_back", ctx, GGML_OP_ROPE_BACK, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
                      ext_factor, attn_factor, beta_fast, beta_slow, false);
}

/* the node keeps its sources and other parameters: only the offset is checked (against a's row) and set */
struct ggml_tensor * ggml_rope_set_offset(struct ggml_tensor * a, int n_offs) {
    const char * fn = "ggml_rope_set_offset";
    REQUIRE(fn, a);
    if (a->op != GGML_OP_ROPE && a->op != GGML_OP_ROPE_BACK) {
        ggmlr_set_error("%s: a must be a ROPE or ROPE_BACK node (got %s)", fn, ggml_op_name(a->op));
        return NULL;
    }
    struct ggmlr_rope_params prm = ggmlr_rope_params_decode(a);
    prm.n_offs = n_offs;
    if (!check_params(fn, a->src[0], &prm)) return NULL;
    ggmlr_rope_params_encode(a, &prm);
    return a;
}

/* YaRN's correction dims: the maths is core/op_list.h's, shared with the kernel */
void ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow, float dims[2]) {
    ggmlr_rope_yarn_corr_dims(n_dims, n_ctx_orig, freq_base, beta_fast, beta_slow, dims);
}

struct ggml_tensor * ggml_rope_ext_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                        int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                        float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    const struct ggmlr_rope_params prm = {n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow, {0}, 0};
    return rope_single("ggml_rope_ext_back", ctx, GGML_OP_ROPE_BACK, a, b, c, &prm, false);
}

/* ---- backward ----
 * y = R x per pair, R = m [[cos t, -sin t], [sin t, cos t]] fixed by the
 * position: dx = R^T g, which is ROPE_BACK of g; ROPE_BACK's matrix is R^T, so
 * its gradient is ROPE of g (double backward works). */

static const char * refuse_rope(const struct ggml_tensor * node, const bool * need) {
    (void) node;
    if (need[1]) return "ROPE: the positions are integers and have no gradient";
    if (need[2]) return "ROPE: the gradient with respect to the frequency factors is not implemented";
    return NULL;
}

RULE(grad_rope) {
    const struct ggmlr_rope_params prm = ggmlr_rope_params_decode(node);
    const enum ggml_op transpose = node->op == GGML_OP_ROPE ? GGML_OP_ROPE_BACK : GGML_OP_ROPE;
    return !need[0] || ggmlr_grad_acc(ctx, gph, A, ggmlr_rope_node(ctx, transpose, g, B, ggmlr_rope_freq_factors_decode(node), &prm));
}

GRAD_RULE(rope, refuse_rope, grad_rope);

/* ---- timestep_embedding: timesteps [N] -> [dim, N], row i = [cos(t_i f) | sin(t_i f) | 0 if dim is odd] ---- */

struct ggml_tensor * ggml_timestep_embedding(struct ggml_context * ctx, struct ggml_tensor * timesteps, int dim, int max_period) {
    const char * fn = "ggml_timestep_embedding";
    REQUIRE_CTX(fn); REQUIRE(fn, timesteps); REQUIRE_F32(fn, timesteps);
    if (timesteps->ne[1] != 1 || timesteps->ne[2] != 1 || timesteps->ne[3] != 1)
        return ggmlr_fail_shapes(fn, "timesteps must be a vector [N]", timesteps, timesteps);
    if (dim <= 0 || max_period <= 0) {
        ggmlr_set_error("%s: dim and max_period must be > 0 (got %d, %d)", fn, dim, max_period);
        return NULL;
    }
    const int64_t ne[4] = {dim, timesteps->ne[0], 1, 1};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_TIMESTEP_EMBEDDING, GGML_TYPE_F32, ne, timesteps, NULL);
    const struct ggmlr_timestep_params p = {dim, max_period};
    if (t) ggmlr_timestep_params_encode(t, &p);
    return t;
}

/* y = [cos(t f_j) | sin(t f_j)]: dt = sum_j f_j (g_sin,j cos(t f_j) - g_cos,j sin(t f_j)),
 * read from the result itself (f_j = exp(-ln(max_period) j / half), from
 * arange; the odd last column is a constant) */
RULE(grad_timestep_embedding) {
    (void) need;
    const struct ggmlr_timestep_params p = ggmlr_timestep_params_decode(node);
    const int64_t half = p.dim / 2, n = node->ne[1];
    if (half == 0) return ggmlr_grad_acc(ctx, gph, A, ggml_fill(ctx, A, 0.0f));
    struct ggml_tensor * gc = ggmlr_grad_contiguous(ctx, g);
    if (!gc) return false;
    const size_t off = (size_t) half * sizeof(float);
    struct ggml_tensor * cs = ggml_view_2d(ctx, node, half, n, node->nb[1], 0), * sn = ggml_view_2d(ctx, node, half, n, node->nb[1], off);
    struct ggml_tensor * gcos = ggml_view_2d(ctx, gc, half, n, gc->nb[1], 0), * gsin = ggml_view_2d(ctx, gc, half, n, gc->nb[1], off);
    struct ggml_tensor * f = ggml_exp(ctx, ggml_scale(ctx, ggml_arange(ctx, 0.0f, (float) half, 1.0f), -logf((float) p.max_period) / (float) half));
    struct ggml_tensor * d = ggml_mul(ctx, ggml_sub(ctx, ggml_mul(ctx, gsin, cs), ggml_mul(ctx, gcos, sn)), f);
    struct ggml_tensor * dt = ggml_sum_rows(ctx, d);
    return ggmlr_grad_acc(ctx, gph, A, dt ? ggml_reshape_1d(ctx, dt, n) : NULL);
}

GRAD_RULE(timestep_embedding, NULL, grad_timestep_embedding);

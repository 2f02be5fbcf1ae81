/* rope.c -- position encodings: the rotary position embedding (ROPE) and
 * its backward (ROPE_BACK), and the sinusoidal timestep embedding
 * (TIMESTEP_EMBEDDING), constructors and backward rules.
 *
 * a F32 [ne0 = head dim, n_head, n_tokens, ne3], b I32 positions [n_tokens],
 * c NULL or F32 frequency factors [>= n_dims/2]. The first n_dims entries of
 * each row are rotated pair by pair (pairs (2k, 2k+1) in NORMAL mode,
 * (k, k + n_dims/2) in NEOX mode) by an angle growing with the position;
 * the rest are copied (cpu/kernels/rope.c has the formula). ROPE_BACK rotates by
 * minus that angle: each is the other's gradient. The result is contiguous F32
 * shaped like a, or (_inplace) a view of a written over it: the rule does not
 * read a, so those have a gradient too. */
#include "ops/grad.h"

#include <math.h>

/* ne[1..3] == 1 */
static bool is_vector(const struct ggml_tensor * t) { return t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1; }

static bool check_params(const char * fn, const struct ggml_tensor * a, const struct ggmlr_rope_params * prm) {
    if (prm->mode != GGML_ROPE_TYPE_NORMAL && prm->mode != GGML_ROPE_TYPE_NEOX) {
        ggmlr_set_error("%s: mode %d is not implemented (GGML_ROPE_TYPE_NORMAL = 0 or GGML_ROPE_TYPE_NEOX = 2)", fn, (int) prm->mode);
        return false;
    }
    if (prm->n_dims <= 0 || prm->n_dims % 2 != 0 || prm->n_dims > a->ne[0]) {
        ggmlr_set_error("%s: n_dims must be even, positive and at most a->ne[0] = %lld (got %d)", fn, (long long) a->ne[0], (int) prm->n_dims);
        return false;
    }
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
    /* YaRN's correction dims are n_dims ln(n_ctx_orig / (2 pi beta)) / (2 ln freq_base): defined only for these */
    if (prm->ext_factor != 0.0f && (prm->n_ctx_orig <= 0 || !(prm->beta_fast > 0.0f) || !(prm->beta_slow > 0.0f) || prm->freq_base == 1.0f)) {
        ggmlr_set_error("%s: with ext_factor != 0 (YaRN), n_ctx_orig, beta_fast and beta_slow must be > 0 and freq_base != 1 "
                        "(got %d, %g, %g, %g)", fn, (int) prm->n_ctx_orig, (double) prm->beta_fast, (double) prm->beta_slow, (double) prm->freq_base);
        return false;
    }
    return true;
}

/* a new tensor, or (inplace, a contiguous) a view of a written over it */
static struct ggml_tensor * rope_impl(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, struct ggml_tensor * b,
                                      struct ggml_tensor * c, const struct ggmlr_rope_params * prm, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a); REQUIRE(fn, b);
    REQUIRE_F32(fn, a);
    if (b->type != GGML_TYPE_I32) return ggmlr_fail_type(fn, "b (positions)", b, "I32");
    if (!is_vector(b) || b->ne[0] != a->ne[2]) return ggmlr_fail_shapes(fn, "b must be a vector of a->ne[2] positions", a, b);
    if (!check_params(fn, a, prm)) return NULL;
    if (c) {
        REQUIRE_F32(fn, c);
        if (!is_vector(c) || c->ne[0] < prm->n_dims / 2) {
            char sc[96];
            ggmlr_set_error("%s: c (frequency factors) must be a vector of at least n_dims/2 = %d values (got %s)", fn, (int) prm->n_dims / 2,
                            ggmlr_shape_str(c, sc, sizeof sc));
            return NULL;
        }
    }
    struct ggml_tensor * t = inplace ? ggmlr_new_inplace(fn, ctx, a, op) : ggmlr_new_node(ctx, op, GGML_TYPE_F32, a->ne, a, b);
    if (!t) return NULL;
    t->src[0] = a;
    t->src[1] = b;
    ggmlr_rope_freq_factors_encode(t, c);
    ggmlr_rope_params_encode(t, prm);
    return t;
}

struct ggml_tensor * ggml_rope_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                   int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                   float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    const struct ggmlr_rope_params prm = {n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow};
    return ggmlr_rope_node(ctx, GGML_OP_ROPE, a, b, c, &prm);
}

struct ggml_tensor * ggmlr_rope_node(struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, struct ggml_tensor * b,
                                     struct ggml_tensor * c, const struct ggmlr_rope_params * prm) {
    return rope_impl(op == GGML_OP_ROPE ? "ggml_rope_ext" : "ggml_rope_ext_back", ctx, op, a, b, c, prm, false);
}

struct ggml_tensor * ggml_rope_ext_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                           int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                           float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    const struct ggmlr_rope_params prm = {n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow};
    return rope_impl("ggml_rope_ext_inplace", ctx, GGML_OP_ROPE, a, b, c, &prm, true);
}

/* upstream's older forms: ggml_rope is rope_ext with base 10000 and no scaling;
 * ggml_rope_custom is rope_ext without frequency factors */
static const struct ggmlr_rope_params plain_rope = {.freq_base = 10000.0f, .freq_scale = 1.0f, .attn_factor = 1.0f};

struct ggml_tensor * ggml_rope(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode) {
    struct ggmlr_rope_params prm = plain_rope;
    prm.n_dims = n_dims; prm.mode = mode;
    return rope_impl("ggml_rope", ctx, GGML_OP_ROPE, a, b, NULL, &prm, false);
}

struct ggml_tensor * ggml_rope_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode) {
    struct ggmlr_rope_params prm = plain_rope;
    prm.n_dims = n_dims; prm.mode = mode;
    return rope_impl("ggml_rope_inplace", ctx, GGML_OP_ROPE, a, b, NULL, &prm, true);
}

struct ggml_tensor * ggml_rope_custom(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode,
                                      int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                      float beta_fast, float beta_slow) {
    const struct ggmlr_rope_params prm = {n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow};
    return rope_impl("ggml_rope_custom", ctx, GGML_OP_ROPE, a, b, NULL, &prm, false);
}

struct ggml_tensor * ggml_rope_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode,
                                              int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                              float beta_fast, float beta_slow) {
    const struct ggmlr_rope_params prm = {n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow};
    return rope_impl("ggml_rope_custom_inplace", ctx, GGML_OP_ROPE, a, b, NULL, &prm, true);
}

/* YaRN's correction dims: the maths is core/op_list.h's, shared with the kernel */
void ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow, float dims[2]) {
    ggmlr_rope_yarn_corr_dims(n_dims, n_ctx_orig, freq_base, beta_fast, beta_slow, dims);
}

struct ggml_tensor * ggml_rope_ext_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                        int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                        float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    const struct ggmlr_rope_params prm = {n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow};
    return ggmlr_rope_node(ctx, GGML_OP_ROPE_BACK, a, b, c, &prm);
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

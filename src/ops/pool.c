/* pool.c -- POOL_1D, POOL_2D, their gradient op POOL_2D_BACK and the
 * backward rules (kernels: cpu/kernels/pool.c). F32 or F16 input (as
 * upstream; an F16 one has no gradient), F32 result, each (ne2, ne3) plane
 * apart; 1-D pools along ne0 of every row.
 *
 * Window o covers inputs o s - p ... o s - p + k - 1; what lies outside the
 * input is skipped. MAX: y = the largest element inside, dy flows to the
 * first largest (in row-major order of the window); AVG: y = sum / m with m
 * = k0 k1 (2-D, upstream's) or the elements inside (1-D), dy / m flows to
 * each element inside. POOL_2D_BACK with k1 = s1 = 1, p1 = 0 and avg_in is
 * POOL_1D's gradient. */
#include "ops/grad.h"

#include <math.h>

static int64_t pool_out_size(int64_t in, int k, int s, int p) { return (in + 2 * (int64_t) p - k) / s + 1; }

/* op known, kernels and strides > 0, paddings >= 0; ne = the output's shape for input shape in */
static bool pool_shape(const char * fn, const struct ggmlr_pool_params * p, const int64_t in[4], int64_t ne[4]) {
    if (p->op < 0 || p->op >= GGML_OP_POOL_COUNT) { ggmlr_set_error("%s: unknown pool op %d (MAX, AVG)", fn, (int) p->op); return false; }
    if (p->k0 <= 0 || p->k1 <= 0 || p->s0 <= 0 || p->s1 <= 0 || p->p0 < 0 || p->p1 < 0) {
        ggmlr_set_error("%s: kernel sizes and strides must be > 0, paddings >= 0 (k %d, %d s %d, %d p %d, %d)", fn, p->k0, p->k1, p->s0, p->s1,
                        p->p0, p->p1);
        return false;
    }
    if (!ggmlr_check_size_bound(fn, (double) in[0] + 2.0 * p->p0) || !ggmlr_check_size_bound(fn, (double) in[1] + 2.0 * p->p1)) return false;
    ne[0] = pool_out_size(in[0], p->k0, p->s0, p->p0);
    ne[1] = pool_out_size(in[1], p->k1, p->s1, p->p1);
    ne[2] = in[2]; ne[3] = in[3];
    if (in[0] + 2 * (int64_t) p->p0 < p->k0 || in[1] + 2 * (int64_t) p->p1 < p->k1) {
        ggmlr_set_error("%s: the padded input [%lld, %lld] is smaller than the kernel [%d, %d]", fn, (long long) (in[0] + 2 * p->p0),
                        (long long) (in[1] + 2 * p->p1), p->k0, p->k1);
        return false;
    }
    return true;
}

static struct ggml_tensor * pool_node(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a,
                                      const struct ggmlr_pool_params * p) {
    REQUIRE_CTX(fn); REQUIRE(fn, a);
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16) return ggmlr_fail_type(fn, "a", a, "F32 or F16");
    int64_t ne[4];
    if (!pool_shape(fn, p, a->ne, ne)) return NULL;
    struct ggml_tensor * t = ggmlr_new_node(ctx, op, GGML_TYPE_F32, ne, a, NULL);
    if (t) ggmlr_pool_params_encode(t, p);
    return t;
}

/* upstream's float paddings, which its kernel truncates: here whole numbers only */
static bool whole_paddings(const char * fn, float p0, float p1) {
    if (!(p0 == floorf(p0) && p1 == floorf(p1) && fabsf(p0) < 1e9f && fabsf(p1) < 1e9f)) {
        ggmlr_set_error("%s: paddings must be whole numbers (got %g, %g)", fn, (double) p0, (double) p1);
        return false;
    }
    return true;
}

struct ggml_tensor * ggml_pool_1d(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op_pool op, int k0, int s0, int p0) {
    const struct ggmlr_pool_params p = {op, k0, 1, s0, 1, p0, 0, 1};
    return pool_node("ggml_pool_1d", ctx, GGML_OP_POOL_1D, a, &p);
}

struct ggml_tensor * ggml_pool_2d(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op_pool op, int k0, int k1, int s0, int s1,
                                  float p0, float p1) {
    if (!whole_paddings("ggml_pool_2d", p0, p1)) return NULL;
    const struct ggmlr_pool_params p = {op, k0, k1, s0, s1, (int32_t) p0, (int32_t) p1, 0};
    return pool_node("ggml_pool_2d", ctx, GGML_OP_POOL_2D, a, &p);
}

/* dy (shaped like the pool of af with p) -> F32 shaped like af */
static struct ggml_tensor * pool_back(const char * fn, struct ggml_context * ctx, struct ggml_tensor * dy, struct ggml_tensor * af,
                                      const struct ggmlr_pool_params * p) {
    REQUIRE_CTX(fn); REQUIRE(fn, dy); REQUIRE(fn, af); REQUIRE_F32(fn, dy); REQUIRE_F32(fn, af);
    int64_t ne[4];
    if (!pool_shape(fn, p, af->ne, ne)) return NULL;
    if (ne[0] != dy->ne[0] || ne[1] != dy->ne[1] || ne[2] != dy->ne[2] || ne[3] != dy->ne[3]) {
        char sa[64], sf[64];
        ggmlr_set_error("%s: a %s is not the shape of the pool of af %s", fn, ggmlr_shape_str(dy, sa, sizeof sa), ggmlr_shape_str(af, sf, sizeof sf));
        return NULL;
    }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_POOL_2D_BACK, GGML_TYPE_F32, af->ne, dy, af);
    if (t) ggmlr_pool_params_encode(t, p);
    return t;
}

struct ggml_tensor * ggml_pool_2d_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * af, enum ggml_op_pool op, int k0,
                                       int k1, int s0, int s1, float p0, float p1) {
    if (!whole_paddings("ggml_pool_2d_back", p0, p1)) return NULL;
    const struct ggmlr_pool_params p = {op, k0, k1, s0, s1, (int32_t) p0, (int32_t) p1, 0};
    return pool_back("ggml_pool_2d_back", ctx, a, af, &p);
}

/* ---- backward: POOL_1D decodes as the 2-D pool it is ---- */

RULE(grad_pool) {
    if (!need[0]) return true;
    const struct ggmlr_pool_params p = ggmlr_pool_params_decode(node);
    return ggmlr_grad_acc(ctx, gph, A, pool_back("pool backward", ctx, g, A, &p));
}

/* an F16 input is a constant */
GRAD_RULE(pool_1d, ggmlr_refuse_not_f32, grad_pool);
GRAD_RULE(pool_2d, ggmlr_refuse_not_f32, grad_pool);

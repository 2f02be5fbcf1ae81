/* shape.c -- rows of CONCAT, PAD, PAD_REFLECT_1D, PAD_BACK, UPSCALE and
 * UPSCALE_BACK. The references index from the definitions: concat and the
 * pads by where each output element comes from (PAD_BACK as that map's
 * transpose); interpolation in float64 from its formula (x = (i + 0.5) n_in
 * / n - 0.5, or i (n_in - 1) / (n - 1) with aligned corners, neighbours
 * clamped to the edges; nearest floor(i n_in / n)), and UPSCALE_BACK as
 * that map's transpose; bicubic (Keys' kernel, alpha -0.75, of the distance
 * to the 4 neighbours) and antialiased bilinear (the triangle filter over
 * max(1, 1/sf) inputs, normalised) from their definitions too. The scale
 * factors are exact in binary, so float's nearest index cannot fall on the
 * other side of an integer; the other modes are continuous in x. */
#include "ops/harness.h"

#include <math.h>
#include <stdlib.h>

/* ---- CONCAT ---- */

static struct ggml_tensor * b_concat(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return ggml_concat(ctx, in[0], in[1], *(const int *) p);
}

static void r_concat(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    const int dim = *(const int *) p;
    int64_t n[4];
    for (int d = 0; d < 4; d++) n[d] = d == dim ? ne[0][d] + ne[1][d] : ne[0][d];
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < n[3]; i3++)
        for (int64_t i2 = 0; i2 < n[2]; i2++)
            for (int64_t i1 = 0; i1 < n[1]; i1++)
                for (int64_t i0 = 0; i0 < n[0]; i0++) {
                    int64_t j[4] = {i0, i1, i2, i3};
                    const int s = j[dim] < ne[0][dim] ? 0 : 1;
                    if (s) j[dim] -= ne[0][dim];
                    out[k++] = in[s][((j[3] * ne[s][2] + j[2]) * ne[s][1] + j[1]) * ne[s][0] + j[0]];
                }
}

/* ---- PAD, PAD_REFLECT_1D, PAD_BACK ---- */

enum pad_fill { PAD_ZEROS, PAD_CIRCULAR, PAD_REFLECT };  /* PAD_REFLECT: ggml_pad_reflect_1d(lp[0], rp[0]) */
struct pad_case { int lp[4], rp[4]; enum pad_fill fill; };

static struct ggml_tensor * b_pad(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    const struct pad_case * c = p;
    const bool after_only = !c->lp[0] && !c->lp[1] && !c->lp[2] && !c->lp[3];
    switch (c->fill) {
        case PAD_REFLECT: return ggml_pad_reflect_1d(ctx, in[0], c->lp[0], c->rp[0]);
        case PAD_CIRCULAR:
            if (after_only) return ggml_pad_circular(ctx, in[0], c->rp[0], c->rp[1], c->rp[2], c->rp[3]);
            return ggml_pad_ext_circular(ctx, in[0], c->lp[0], c->rp[0], c->lp[1], c->rp[1], c->lp[2], c->rp[2], c->lp[3], c->rp[3]);
        default:
            if (after_only) return ggml_pad(ctx, in[0], c->rp[0], c->rp[1], c->rp[2], c->rp[3]);
            return ggml_pad_ext(ctx, in[0], c->lp[0], c->rp[0], c->lp[1], c->rp[1], c->lp[2], c->rp[2], c->lp[3], c->rp[3]);
    }
}
static struct ggml_tensor * b_pad_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return ops_grad_node(ctx, in, 0, 1, b_pad, p);  /* autodiff's PAD_BACK of dy = in[1] */
}

/* The input index that output index i (of n + lp + rp) copies along one dim
 * of n, or -1 for a zero: the position k = i - lp counted from a's start,
 * walked around the ring of n (circular) or bounced off the ends (reflect). */
static int64_t pad_ref_source(enum pad_fill fill, int64_t i, int lp, int64_t n) {
    int64_t k = i - lp;
    if (fill == PAD_CIRCULAR) {
        while (k < 0) k += n;
        while (k >= n) k -= n;
    } else if (fill == PAD_REFLECT) {
        if (k < 0) k = -k;                        /* a[1], a[2].. before a[0] */
        if (k > n - 1) k = (n - 1) - (k - (n - 1));  /* a[n-2], a[n-3].. after a[n-1] */
    }
    return k >= 0 && k < n ? k : -1;
}

/* y = P a (dy NULL: out = y), or out = P^T dy; P copies a's source(i) to i */
static void pad_ref(const struct pad_case * c, const double * a, const int64_t na[4], const double * dy, double * out) {
    int64_t n[4];
    for (int d = 0; d < 4; d++) n[d] = na[d] + c->lp[d] + c->rp[d];
    if (dy)
        for (int64_t k = 0; k < ops_nel(na); k++) out[k] = 0.0;
    int64_t k = 0;
    OPS_FOR4(n, i0, i1, i2, i3) {
        const int64_t i[4] = {i0, i1, i2, i3};
        int64_t j[4];
        bool inside = true;
        for (int d = 0; d < 4; d++) {
            j[d] = pad_ref_source(c->fill, i[d], c->lp[d], na[d]);
            inside = inside && j[d] >= 0;
        }
        const int64_t src = inside ? ops_at(na, j[0], j[1], j[2], j[3]) : -1;
        if (!dy) out[k] = src >= 0 ? a[src] : 0.0;
        else if (src >= 0) out[src] += dy[k];
        k++;
    }
}

static void r_pad(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    pad_ref(p, in[0], ne[0], NULL, out);
}
static void r_pad_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    pad_ref(p, NULL, ne[0], in[1], out);
}

/* ---- UPSCALE, UPSCALE_BACK ---- */

enum up_kind { UP_FACTOR, UP_EXT, UP_INTERPOLATE };
struct up_case { enum up_kind kind; int factor; int64_t ne[4]; uint32_t mode; };

static struct ggml_tensor * up_of(struct ggml_context * ctx, struct ggml_tensor * a, const struct up_case * c) {
    switch (c->kind) {
        case UP_FACTOR: return ggml_upscale(ctx, a, c->factor, (enum ggml_scale_mode) c->mode);
        case UP_EXT:    return ggml_upscale_ext(ctx, a, (int) c->ne[0], (int) c->ne[1], (int) c->ne[2], (int) c->ne[3], (enum ggml_scale_mode) c->mode);
        default:        return ggml_interpolate(ctx, a, c->ne[0], c->ne[1], c->ne[2], c->ne[3], c->mode);
    }
}

static struct ggml_tensor * b_upscale(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) { return up_of(ctx, in[0], p); }
static struct ggml_tensor * b_upscale_back(struct ggml_context * ctx, struct ggml_tensor ** in, const void * p) {
    return ops_grad_node(ctx, in, 0, 1, b_upscale, p);  /* autodiff's UPSCALE_BACK of dy = in[1] */
}

/* Keys' cubic convolution kernel with alpha = -0.75 (PyTorch's and upstream's bicubic) */
static double keys_cubic(double t) {
    const double a = -0.75, u = fabs(t);
    if (u <= 1) return (a + 2) * u * u * u - (a + 3) * u * u + 1;
    if (u < 2) return a * u * u * u - 5 * a * u * u + 8 * a * u - 4 * a;
    return 0;
}

/* The inputs output i of n along a dim of n_in reads, with their weights: k of them (at most n_in + 4).
 * mode: the low byte, or GGML_SCALE_MODE_COUNT for bilinear with antialias; NEAREST reads floor(i / sf);
 * the others place output i at x = (i + 0.5) n_in / n - 0.5 (aligned corners: i (n_in - 1) / (n - 1)):
 * bilinear mixes floor(x), floor(x) + 1 (clamped to the edges, weight clamped to [0, 1]); bicubic the four
 * around it, Keys' kernel of the distance to each; antialias the inputs of upstream's window [c - support
 * + off, c + support + off) (c = (i + off) / sf = x + off, ends truncated toward 0, within [0, n_in): with
 * aligned corners, off = 0, it leaves out the last input of the triangle's support), the triangle filter's
 * weights 1 - |distance to x| / support, support max(1, 1 / sf), normalised to sum 1 (all 0: none). */
static int up_taps(int mode, bool align, int64_t i, int64_t n, int64_t n_in, int64_t * idx, double * w) {
    const double sf = align && n > 1 && n_in > 1 ? (double) (n - 1) / (double) (n_in - 1) : (double) n / (double) n_in;
    const double off = align ? 0.0 : 0.5, x = ((double) i + off) / sf - off;
    if (mode == GGML_SCALE_MODE_NEAREST) {
        idx[0] = (int64_t) floor((double) i / sf);
        if (idx[0] > n_in - 1) idx[0] = n_in - 1;
        w[0] = 1;
        return 1;
    }
    const int64_t f = (int64_t) floor(x);
    if (mode == GGML_SCALE_MODE_BILINEAR) {
        idx[0] = f < 0 ? 0 : f > n_in - 1 ? n_in - 1 : f;
        idx[1] = f + 1 < 0 ? 0 : f + 1 > n_in - 1 ? n_in - 1 : f + 1;
        w[1] = fmin(1.0, fmax(0.0, x - (double) idx[0]));
        w[0] = 1 - w[1];
        return 2;
    }
    if (mode == GGML_SCALE_MODE_BICUBIC) {
        for (int k = 0; k < 4; k++) {
            const int64_t j = f - 1 + k;
            idx[k] = j < 0 ? 0 : j > n_in - 1 ? n_in - 1 : j;
            w[k] = keys_cubic(x - (double) j);
        }
        return 4;
    }
    const double support = fmax(1.0, 1.0 / sf);
    double sum = 0;
    int k = 0;
    const double c = x + off, lo = trunc(c - support + off), hi = trunc(c + support + off);
    for (int64_t j = lo > 0 ? (int64_t) lo : 0; j < (hi < (double) n_in ? (int64_t) hi : n_in); j++) {
        const double wj = 1 - fabs((double) j - x) / support;
        if (wj > 0) { idx[k] = j; w[k++] = wj; sum += wj; }
    }
    for (int t = 0; t < k; t++) w[t] /= sum;
    return k;
}

/* y = M a (dy = NULL), or out = M^T dy: M's row for output (i0, i1, i2, i3) is the product of the taps of
 * dims 0 and 1 at the nearest plane (i2, i3) */
static void up_ref(const struct up_case * c, const double * a, const int64_t na[4], const double * dy, double * out) {
    const int mode = (c->mode & 0xFF) == GGML_SCALE_MODE_BILINEAR && (c->mode & GGML_SCALE_FLAG_ANTIALIAS) ? GGML_SCALE_MODE_COUNT
                                                                                                          : (int) (c->mode & 0xFF);
    const bool align = (c->mode & GGML_SCALE_FLAG_ALIGN_CORNERS) != 0;
    const int64_t n[4] = {c->kind == UP_FACTOR ? na[0] * c->factor : c->ne[0], c->kind == UP_FACTOR ? na[1] * c->factor : c->ne[1],
                          c->kind == UP_FACTOR ? na[2] : c->ne[2], c->kind == UP_FACTOR ? na[3] : c->ne[3]};
    int64_t * ix = malloc((size_t) (na[0] + 4) * sizeof *ix), * iy = malloc((size_t) (na[1] + 4) * sizeof *iy), j2, j3;
    double * wx = malloc((size_t) (na[0] + 4) * sizeof *wx), * wy = malloc((size_t) (na[1] + 4) * sizeof *wy), w;
    if (dy)
        for (int64_t i = 0; i < na[0] * na[1] * na[2] * na[3]; i++) out[i] = 0.0;
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < n[3]; i3++)
        for (int64_t i2 = 0; i2 < n[2]; i2++)
            for (int64_t i1 = 0; i1 < n[1]; i1++)
                for (int64_t i0 = 0; i0 < n[0]; i0++, k++) {
                    up_taps(GGML_SCALE_MODE_NEAREST, false, i3, n[3], na[3], &j3, &w);
                    up_taps(GGML_SCALE_MODE_NEAREST, false, i2, n[2], na[2], &j2, &w);
                    const int ky = up_taps(mode, align, i1, n[1], na[1], iy, wy), kx = up_taps(mode, align, i0, n[0], na[0], ix, wx);
                    const int64_t base = (j3 * na[2] + j2) * na[1];
                    if (!dy) out[k] = 0.0;
                    for (int ty = 0; ty < ky; ty++)
                        for (int tx = 0; tx < kx; tx++) {
                            const int64_t idx = (base + iy[ty]) * na[0] + ix[tx];
                            if (!dy) out[k] += wy[ty] * wx[tx] * a[idx];
                            else out[idx] += wy[ty] * wx[tx] * dy[k];
                        }
                }
    free(ix); free(iy); free(wx); free(wy);
}

static void r_upscale(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    up_ref(p, in[0], ne[0], NULL, out);
}
static void r_upscale_back(const double * const * in, const int64_t (*ne)[4], const void * p, double * out, const int64_t no[4]) {
    (void) no;
    up_ref(p, NULL, ne[0], in[1], out);
}

static const int dim0 = 0, dim1 = 1, dim2 = 2, dim3 = 3;
static const struct pad_case pad_r = {{0, 0, 0, 0}, {3, 1, 0, 2}, PAD_ZEROS}, pad_lr = {{2, 1, 1, 0}, {1, 0, 2, 1}, PAD_ZEROS},
                              pad_l0 = {{4, 0, 0, 0}, {0, 0, 0, 0}, PAD_ZEROS},
                              circ_r = {{0, 0, 0, 0}, {2, 1, 0, 1}, PAD_CIRCULAR}, circ_lr = {{2, 1, 1, 0}, {1, 2, 2, 1}, PAD_CIRCULAR},
                              circ_wide = {{5, 0, 3, 0}, {4, 2, 0, 0}, PAD_CIRCULAR},  /* around a [2, 1, ..] torus more than once */
                              refl_21 = {{2, 0, 0, 0}, {1, 0, 0, 0}, PAD_REFLECT}, refl_max = {{4, 0, 0, 0}, {4, 0, 0, 0}, PAD_REFLECT},
                              refl_0 = {{0, 0, 0, 0}, {0, 0, 0, 0}, PAD_REFLECT}, refl_r = {{0, 0, 0, 0}, {3, 0, 0, 0}, PAD_REFLECT};
#define AC GGML_SCALE_FLAG_ALIGN_CORNERS
static const struct up_case nn_x2 = {UP_FACTOR, 2, {0, 0, 0, 0}, GGML_SCALE_MODE_NEAREST},
                            nn_ext = {UP_EXT, 0, {6, 2, 6, 1}, GGML_SCALE_MODE_NEAREST},  /* [4,4,3,2]: x1.5, x0.5, x2, x0.5 */
                            bl_x3 = {UP_FACTOR, 3, {0, 0, 0, 0}, GGML_SCALE_MODE_BILINEAR},
                            bl_ext = {UP_INTERPOLATE, 0, {5, 3, 2, 1}, GGML_SCALE_MODE_BILINEAR},  /* [2,6,2,1]: x2.5, x0.5 */
                            bl_ac = {UP_INTERPOLATE, 0, {7, 7, 1, 2}, GGML_SCALE_MODE_BILINEAR | AC},  /* [3,4,1,2] */
                            nn_ac = {UP_INTERPOLATE, 0, {7, 4, 1, 1}, GGML_SCALE_MODE_NEAREST | AC},  /* [3,3,1,1] */
                            bc_x2 = {UP_FACTOR, 2, {0, 0, 0, 0}, GGML_SCALE_MODE_BICUBIC},
                            bc_ext = {UP_INTERPOLATE, 0, {5, 2, 2, 1}, GGML_SCALE_MODE_BICUBIC},  /* [3,5,2,1]: x5/3, x0.4 */
                            bc_ac = {UP_INTERPOLATE, 0, {7, 5, 1, 2}, GGML_SCALE_MODE_BICUBIC | AC},  /* [4,3,1,2] */
                            aa_down = {UP_INTERPOLATE, 0, {3, 2, 2, 1}, GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ANTIALIAS},  /* [8,7,2,1] */
                            aa_up = {UP_INTERPOLATE, 0, {7, 5, 1, 1}, GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ANTIALIAS},  /* [3,4,1,1] */
                            aa_ac = {UP_INTERPOLATE, 0, {3, 9, 1, 1},
                                     GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ANTIALIAS | AC};  /* [9,5,1,1]: sf 1/4, 2 */

/* result shapes from the definitions (UPSCALE_BACK: input 0's) */
static void s_concat(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const int dim = *(const int *) p;
    for (int d = 0; d < 4; d++) no[d] = d == dim ? ne[0][d] + ne[1][d] : ne[0][d];
}
static void s_pad(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const struct pad_case * c = p;
    for (int d = 0; d < 4; d++) no[d] = ne[0][d] + c->lp[d] + c->rp[d];
}
static void s_upscale(const int64_t (*ne)[4], const void * p, int64_t no[4]) {
    const struct up_case * c = p;
    for (int d = 0; d < 4; d++) no[d] = c->kind == UP_FACTOR ? (d < 2 ? ne[0][d] * c->factor : ne[0][d]) : c->ne[d];
}

#define IN_(S, LO, HI) {.ne = OPS_SHAPE S, .lo = LO, .hi = HI}
#define IN_ANY(S) {.ne = OPS_SHAPE S, .lo = -2, .hi = 2, .layout = OPS_ANY_LAYOUT}
#define IN_FIXED(S) {.ne = OPS_SHAPE S, .lo = -2, .hi = 2, .fixed = true}  /* the forward's input, which PAD_BACK does not read */
#define ROW_(OP, NAME, BUILD, CASE, SHAPE, REF, TOL, GRAD, N, ...)                                                   \
    {.op = OP, .variant = NAME, .build = BUILD, .params = &CASE, .n_in = N, .in = {__VA_ARGS__}, .shape = SHAPE, \
     .ref = REF, .cmp = OPS_NORM2, .tol = TOL, .grad = GRAD}
static const struct ops_row rows[] = {
    ROW_("CONCAT", "dim 0, odd", b_concat, dim0, s_concat, r_concat, 1e-7, OPS_GRAD, 2, IN_((3, 4, 2, 1), -2, 2), IN_((5, 4, 2, 1), -2, 2)),
    ROW_("CONCAT", "dim 1", b_concat, dim1, s_concat, r_concat, 1e-7, OPS_GRAD, 2, IN_((4, 1, 3, 2), -2, 2), IN_((4, 3, 3, 2), -2, 2)),
    ROW_("CONCAT", "dim 2", b_concat, dim2, s_concat, r_concat, 1e-7, OPS_GRAD, 2, IN_((3, 2, 2, 2), -2, 2), IN_((3, 2, 1, 2), -2, 2)),
    ROW_("CONCAT", "dim 3", b_concat, dim3, s_concat, r_concat, 1e-7, OPS_GRAD, 2, IN_((2, 3, 2, 1), -2, 2), IN_((2, 3, 2, 3), -2, 2)),
    ROW_("PAD", "pad after (ggml_pad)", b_pad, pad_r, s_pad, r_pad, 1e-7, OPS_GRAD, 1, IN_((5, 3, 2, 1), -2, 2)),
    ROW_("PAD", "pad_ext both sides, every dim", b_pad, pad_lr, s_pad, r_pad, 1e-7, OPS_GRAD, 1, IN_((3, 2, 2, 2), -2, 2)),
    ROW_("PAD", "pad_ext before dim 0 only", b_pad, pad_l0, s_pad, r_pad, 1e-7, OPS_GRAD, 1, IN_((3, 5, 1, 1), -2, 2)),
    ROW_("PAD", "pad_circular (after)", b_pad, circ_r, s_pad, r_pad, 1e-7, OPS_GRAD, 1, IN_ANY((3, 2, 2, 3))),
    ROW_("PAD", "pad_ext_circular both sides, every dim", b_pad, circ_lr, s_pad, r_pad, 1e-7, OPS_GRAD, 1, IN_ANY((3, 2, 3, 2))),
    ROW_("PAD", "pad_ext_circular wider than the dims", b_pad, circ_wide, s_pad, r_pad, 1e-7, OPS_GRAD, 1, IN_ANY((2, 1, 2, 1))),
    ROW_("PAD_REFLECT_1D", "2 before, 1 after", b_pad, refl_21, s_pad, r_pad, 1e-7, OPS_GRAD, 1, IN_ANY((5, 3, 2, 2))),
    ROW_("PAD_REFLECT_1D", "ne0 - 1 on both sides", b_pad, refl_max, s_pad, r_pad, 1e-7, OPS_GRAD, 1, IN_ANY((5, 2, 1, 3))),
    ROW_("PAD_REFLECT_1D", "after only", b_pad, refl_r, s_pad, r_pad, 1e-7, OPS_GRAD, 1, IN_ANY((4, 3, 1, 1))),
    ROW_("PAD_REFLECT_1D", "no padding, ne0 = 1", b_pad, refl_0, s_pad, r_pad, 1e-7, OPS_GRAD, 1, IN_ANY((1, 3, 2, 1))),
    ROW_("PAD_BACK", "circular, every dim", b_pad_back, circ_lr, NULL, r_pad_back, 1e-6, OPS_GRAD, 2, IN_FIXED((3, 2, 3, 2)),
         IN_ANY((6, 5, 6, 3))),
    ROW_("PAD_BACK", "circular, wider than the dims", b_pad_back, circ_wide, NULL, r_pad_back, 1e-6, OPS_GRAD, 2, IN_FIXED((2, 1, 2, 1)),
         IN_ANY((11, 3, 5, 1))),
    ROW_("PAD_BACK", "reflect, ne0 - 1 on both sides", b_pad_back, refl_max, NULL, r_pad_back, 1e-6, OPS_GRAD, 2, IN_FIXED((5, 2, 1, 3)),
         IN_ANY((13, 2, 1, 3))),
    ROW_("UPSCALE", "nearest x2 (ggml_upscale)", b_upscale, nn_x2, s_upscale, r_upscale, 1e-6, OPS_GRAD, 1, IN_((3, 4, 2, 1), -2, 2)),
    ROW_("UPSCALE", "nearest ext, every dim, up and down", b_upscale, nn_ext, s_upscale, r_upscale, 1e-6, OPS_GRAD, 1, IN_((4, 4, 3, 2), -2, 2)),
    ROW_("UPSCALE", "bilinear x3", b_upscale, bl_x3, s_upscale, r_upscale, 1e-6, OPS_GRAD, 1, IN_((3, 2, 2, 1), -2, 2)),
    ROW_("UPSCALE", "bilinear x2.5, x0.5", b_upscale, bl_ext, s_upscale, r_upscale, 1e-6, OPS_GRAD, 1, IN_((2, 6, 2, 1), -2, 2)),
    ROW_("UPSCALE", "bilinear align corners", b_upscale, bl_ac, s_upscale, r_upscale, 1e-6, OPS_GRAD, 1, IN_((3, 4, 1, 2), -2, 2)),
    ROW_("UPSCALE", "nearest align corners", b_upscale, nn_ac, s_upscale, r_upscale, 1e-6, OPS_GRAD, 1, IN_((3, 3, 1, 1), -2, 2)),
    ROW_("UPSCALE_BACK", "nearest ext", b_upscale_back, nn_ext, NULL, r_upscale_back, 1e-6, OPS_REFUSED, 2, IN_((4, 4, 3, 2), -2, 2), IN_((6, 2, 6, 1), -1, 1)),
    ROW_("UPSCALE_BACK", "bilinear x3", b_upscale_back, bl_x3, NULL, r_upscale_back, 1e-6, OPS_REFUSED, 2, IN_((3, 2, 2, 1), -2, 2), IN_((9, 6, 2, 1), -1, 1)),
    ROW_("UPSCALE_BACK", "bilinear x2.5, x0.5", b_upscale_back, bl_ext, NULL, r_upscale_back, 1e-6, OPS_REFUSED, 2, IN_((2, 6, 2, 1), -2, 2), IN_((5, 3, 2, 1), -1, 1)),
    ROW_("UPSCALE_BACK", "bilinear align corners", b_upscale_back, bl_ac, NULL, r_upscale_back, 1e-6, OPS_REFUSED, 2,
         IN_((3, 4, 1, 2), -2, 2), IN_((7, 7, 1, 2), -1, 1)),
    ROW_("UPSCALE", "bicubic x2 (ggml_upscale)", b_upscale, bc_x2, s_upscale, r_upscale, 1e-6, OPS_GRAD, 1, IN_((3, 4, 2, 1), -2, 2)),
    ROW_("UPSCALE", "bicubic x5/3, x0.4", b_upscale, bc_ext, s_upscale, r_upscale, 1e-6, OPS_GRAD, 1, IN_((3, 5, 2, 1), -2, 2)),
    ROW_("UPSCALE", "bicubic align corners", b_upscale, bc_ac, s_upscale, r_upscale, 1e-6, OPS_GRAD, 1, IN_((4, 3, 1, 2), -2, 2)),
    ROW_("UPSCALE", "bilinear antialias, down", b_upscale, aa_down, s_upscale, r_upscale, 1e-6, OPS_GRAD, 1, IN_((8, 7, 2, 1), -2, 2)),
    ROW_("UPSCALE", "bilinear antialias, up", b_upscale, aa_up, s_upscale, r_upscale, 1e-6, OPS_GRAD, 1, IN_((3, 4, 1, 1), -2, 2)),
    ROW_("UPSCALE", "bilinear antialias, align corners", b_upscale, aa_ac, s_upscale, r_upscale, 1e-6, OPS_GRAD, 1, IN_((9, 5, 1, 1), -2, 2)),
    ROW_("UPSCALE_BACK", "bicubic x5/3, x0.4", b_upscale_back, bc_ext, NULL, r_upscale_back, 1e-6, OPS_REFUSED, 2, IN_((3, 5, 2, 1), -2, 2),
         IN_((5, 2, 2, 1), -1, 1)),
    ROW_("UPSCALE_BACK", "bicubic align corners", b_upscale_back, bc_ac, NULL, r_upscale_back, 1e-6, OPS_REFUSED, 2, IN_((4, 3, 1, 2), -2, 2),
         IN_((7, 5, 1, 2), -1, 1)),
    ROW_("UPSCALE_BACK", "bilinear antialias, down", b_upscale_back, aa_down, NULL, r_upscale_back, 1e-6, OPS_REFUSED, 2,
         IN_((8, 7, 2, 1), -2, 2), IN_((3, 2, 2, 1), -1, 1)),
    ROW_("UPSCALE_BACK", "bilinear antialias, align corners", b_upscale_back, aa_ac, NULL, r_upscale_back, 1e-6, OPS_REFUSED, 2,
         IN_((9, 5, 1, 1), -2, 2), IN_((3, 9, 1, 1), -1, 1)),
};

/* what the pad constructors refuse: NULL, a type other than F32, a negative
 * padding, a circular padding of an empty dim, a reflection reaching past
 * the far edge (p >= ne0) */
static void check_refusals(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor * h = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 3);
    struct ggml_tensor * e = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 0, 2);
    OPS_EXPECT_REFUSED(ggml_pad(ctx, NULL, 1, 0, 0, 0), "pad of NULL");
    OPS_EXPECT_REFUSED(ggml_pad(NULL, x, 1, 0, 0, 0), "pad without a context");
    OPS_EXPECT_REFUSED(ggml_pad(ctx, h, 1, 0, 0, 0), "pad of F16");
    OPS_EXPECT_REFUSED(ggml_pad_ext(ctx, x, 0, 0, -1, 0, 0, 0, 0, 0), "pad_ext with lp1 = -1");
    OPS_EXPECT_REFUSED(ggml_pad_ext(ctx, x, 0, 0, 0, 0, 0, 0, 0, INT32_MAX), "pad_ext past the largest size");
    OPS_EXPECT_REFUSED(ggml_pad_circular(ctx, NULL, 1, 0, 0, 0), "pad_circular of NULL");
    OPS_EXPECT_REFUSED(ggml_pad_circular(ctx, h, 1, 0, 0, 0), "pad_circular of F16");
    OPS_EXPECT_REFUSED(ggml_pad_circular(ctx, x, 0, -2, 0, 0), "pad_circular with p1 = -2");
    OPS_EXPECT_REFUSED(ggml_pad_ext_circular(NULL, x, 1, 1, 0, 0, 0, 0, 0, 0), "pad_ext_circular without a context");
    OPS_EXPECT_REFUSED(ggml_pad_ext_circular(ctx, x, 0, 0, 0, 0, 0, 0, -1, 0), "pad_ext_circular with lp3 = -1");
    OPS_EXPECT_REFUSED(ggml_pad_ext_circular(ctx, e, 0, 0, 1, 0, 0, 0, 0, 0), "pad_ext_circular of an empty dim 1");
    CHECK(ggml_pad_ext_circular(ctx, e, 1, 2, 0, 0, 0, 0, 0, 0) != NULL, "pad_ext_circular of an empty tensor, its empty dim unpadded");
    ggml_clear_error();
    OPS_EXPECT_REFUSED(ggml_pad_reflect_1d(ctx, NULL, 1, 1), "pad_reflect_1d of NULL");
    OPS_EXPECT_REFUSED(ggml_pad_reflect_1d(NULL, x, 1, 1), "pad_reflect_1d without a context");
    OPS_EXPECT_REFUSED(ggml_pad_reflect_1d(ctx, h, 1, 1), "pad_reflect_1d of F16");
    OPS_EXPECT_REFUSED(ggml_pad_reflect_1d(ctx, x, -1, 1), "pad_reflect_1d with p0 = -1");
    OPS_EXPECT_REFUSED(ggml_pad_reflect_1d(ctx, x, 1, -1), "pad_reflect_1d with p1 = -1");
    OPS_EXPECT_REFUSED(ggml_pad_reflect_1d(ctx, x, 4, 0), "pad_reflect_1d with p0 = ne0");
    OPS_EXPECT_REFUSED(ggml_pad_reflect_1d(ctx, x, 0, 4), "pad_reflect_1d with p1 = ne0");
    OPS_EXPECT_REFUSED(ggml_pad_reflect_1d(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 0), 0, 0), "pad_reflect_1d of ne0 = 0");
    /* the scale modes: NEAREST, BILINEAR, BICUBIC (each with ALIGN_CORNERS or not), ANTIALIAS with BILINEAR only */
    const uint32_t AA = GGML_SCALE_FLAG_ANTIALIAS;
    CHECK(ggml_interpolate(ctx, x, 7, 5, 1, 1, GGML_SCALE_MODE_BICUBIC | AC) != NULL, "interpolate bicubic, align corners: %s", ggml_last_error());
    CHECK(ggml_interpolate(ctx, x, 2, 2, 1, 1, GGML_SCALE_MODE_BILINEAR | AA | AC) != NULL, "interpolate antialias: %s", ggml_last_error());
    CHECK(ggml_upscale(ctx, x, 2, GGML_SCALE_MODE_BICUBIC) != NULL, "upscale bicubic: %s", ggml_last_error());
    OPS_EXPECT_REFUSED(ggml_interpolate(ctx, x, 7, 5, 1, 1, GGML_SCALE_MODE_COUNT), "interpolate with mode GGML_SCALE_MODE_COUNT");
    OPS_EXPECT_REFUSED(ggml_interpolate(ctx, x, 7, 5, 1, 1, GGML_SCALE_MODE_NEAREST | AA), "interpolate nearest with antialias");
    OPS_EXPECT_REFUSED(ggml_interpolate(ctx, x, 7, 5, 1, 1, GGML_SCALE_MODE_BICUBIC | AA), "interpolate bicubic with antialias");
    OPS_EXPECT_REFUSED(ggml_interpolate(ctx, x, 7, 5, 1, 1, GGML_SCALE_MODE_BILINEAR | (1u << 10)), "interpolate with an unknown flag");
    OPS_EXPECT_REFUSED(ggml_upscale(ctx, h, 2, GGML_SCALE_MODE_BICUBIC), "upscale bicubic of F16");
    OPS_EXPECT_REFUSED(ggml_interpolate(ctx, x, 0, 5, 1, 1, GGML_SCALE_MODE_BILINEAR | AA), "interpolate antialias to ne0 = 0");
    ggml_free(ctx);
}

const struct ops_family ops_shape = {"shape", rows, sizeof rows / sizeof rows[0], NULL, check_refusals};

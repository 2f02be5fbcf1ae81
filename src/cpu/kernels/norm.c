/* norm.c -- row-wise normalisation along ne0, group normalisation, and
 * their backward.
 *
 *   NORM:     y = x̂ = (x - mu) / sigma,  mu = mean(x), sigma = sqrt(var + eps), var = mean((x - mu)^2)
 *   RMS_NORM: y = x / r,                 r = sqrt(mean(x^2) + eps)
 *   L2_NORM:  y = x / m,                 m = max(|x|, eps), |x| = sqrt(sum(x^2))
 *   NORM_BACK:     dx = (g - mean(g) - x̂ mean(g x̂)) / sigma
 *   RMS_NORM_BACK: dx = (g - x mean(g x) / r^2) / r
 *   L2_NORM_BACK:  dx = (g - y sum(g y) [|x| > eps]) / m   (m = eps is a constant: y = x / eps)
 *   GROUP_NORM, GROUP_NORM_BACK: NORM and NORM_BACK over the elements of a
 *     group of channels (ne2) of one ne3, instead of a row
 *
 * Row statistics accumulate in double (SIMD lanes widened to double:
 * cpu/simd/vec_impl.h), the variance in a second pass over
 * x - mu, so rows with a large common offset (1000 + noise) keep their digits;
 * each row is done by one thread in a fixed order (thread-count independent).
 * A row with var + eps = 0 (eps = 0 and a constant row; for RMS_NORM and
 * L2_NORM a row of zeros) has no defined normalisation: its outputs, and its
 * gradients, are 0. */
#include "cpu/kernels/kernels.h"

#include <math.h>

static size_t ggmlr_norm_work_size(const struct ggml_tensor * dst) { return 2 * (size_t) dst->ne[0] * sizeof(float); }

/* inv = 1 / sigma (or 1 / r, 1 / m), 0 where undefined; k the factor of sum(g z) in the
 * gradient: 1 / n (a mean) for NORM and RMS_NORM, [|x| > eps] for L2_NORM */
struct row_stats { double mu, inv, k; };

static struct row_stats stats(enum ggml_op op, const float * x, int64_t n, double eps) {
    const struct ggmlr_vec_ops * v = ggmlr_vec();
    const double mu = op == GGML_OP_NORM || op == GGML_OP_NORM_BACK ? v->dot_dev(n, x, 0.0, NULL, 0.0) / (double) n : 0.0;
    const double ss = v->dot_dev(n, x, mu, x, mu);
    if (op == GGML_OP_L2_NORM || op == GGML_OP_L2_NORM_BACK) {
        const double nrm = sqrt(ss), m = nrm > eps ? nrm : eps;
        return (struct row_stats) {0.0, m > 0.0 ? 1.0 / m : 0.0, nrm > eps ? 1.0 : 0.0};
    }
    const double var = ss / (double) n + eps;
    return (struct row_stats) {mu, var > 0.0 ? 1.0 / sqrt(var) : 0.0, 1.0 / (double) n};
}

/* NORM, RMS_NORM and L2_NORM (src[0] = x) */
static void ggmlr_compute_norm(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const double eps = ggmlr_f32_param_decode(dst);
    const int64_t n = a->ne[0];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const float * x = ggmlr_row_f32(a, i1, i2, i3, p->wdata);
        float * y = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        const struct row_stats s = stats(dst->op, x, n, eps);
        ggmlr_vec()->norm_apply(n, x, s.mu, s.inv, NULL, 0.0, 0.0, y);
    }
}

/* NORM_BACK, RMS_NORM_BACK and L2_NORM_BACK (src[0] = g = dL/dy, src[1] = x) */
static void ggmlr_compute_norm_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * ga = dst->src[0], * xa = dst->src[1];
    const double eps = ggmlr_f32_param_decode(dst);
    const bool layer = dst->op == GGML_OP_NORM_BACK;
    const int64_t n = xa->ne[0];
    if (n == 0) return;  /* empty rows: no scratch either, and nothing to write */
    float * gbuf = p->wdata, * xbuf = gbuf + n;
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const float * g = ggmlr_row_f32(ga, i1, i2, i3, gbuf);
        const float * x = ggmlr_row_f32(xa, i1, i2, i3, xbuf);
        float * dx = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        const struct row_stats s = stats(dst->op, x, n, eps);
        /* z = x̂ (NORM), x / r (RMS_NORM) or y (L2_NORM): dx = (g - [mean(g)] - z k sum(g z)) / sigma */
        const struct ggmlr_vec_ops * v = ggmlr_vec();
        const double mean_g = layer ? v->dot_dev(n, g, 0.0, NULL, 0.0) / (double) n : 0.0;
        const double mean_gz = v->dot_dev(n, g, 0.0, x, s.mu) * s.inv * s.k;
        v->norm_apply(n, x, s.mu, s.inv, g, mean_g, mean_gz, dx);
    }
}

/* ---- GROUP_NORM: each (group, ne3) is one unit of work, done by one thread in a fixed order ---- */

struct group { int64_t c0, c1, i3; };  /* channels [c0, c1) of ne3 index i3 */

static int64_t n_units(const struct ggml_tensor * dst) { return (int64_t) ggmlr_group_norm_params_decode(dst).n_groups * dst->ne[3]; }

static struct group group_of(const struct ggml_tensor * dst, int64_t u) {
    const int64_t ng = ggmlr_group_norm_params_decode(dst).n_groups, nc = dst->ne[2];
    const int64_t per = (nc + ng - 1) / ng, c0 = (u % ng) * per;  /* upstream's split: ceil(C / n_groups) channels each */
    return (struct group) {c0 < nc ? c0 : nc, c0 + per < nc ? c0 + per : nc, u / ng};
}

/* A group is ne1 (c1 - c0) rows of ne0 elements, taken in runs of `run`
 * rows: the whole group at once where every tensor it reads or writes holds
 * it as one packed F32 stretch (the usual layout: the passes then go over
 * long vectors instead of short rows, e.g. 32-element rows of a 32x32
 * image), else row by row. */
static bool packed_f32(const struct ggml_tensor * t) {
    if (!t) return true;  /* the forward has no g */
    return t->type == GGML_TYPE_F32 && t->nb[0] == sizeof(float) && t->nb[1] == t->ne[0] * t->nb[0] && t->nb[2] == t->ne[1] * t->nb[1];
}

static int64_t run_rows(const struct ggml_tensor * x, const struct ggml_tensor * g, const struct ggml_tensor * dst, struct group gr) {
    return packed_f32(x) && packed_f32(g) && packed_f32(dst) ? x->ne[1] * (gr.c1 - gr.c0) : 1;
}

/* the q-th run of a group: its first row's (i1, i2) and its n elements */
struct run { int64_t i1, i2, n; };

static struct run run_of(const struct ggml_tensor * t, struct group gr, int64_t run, int64_t q) {
    const int64_t row = q * run;
    return (struct run) {row % t->ne[1], gr.c0 + row / t->ne[1], run * t->ne[0]};
}

/* mean and 1 / sqrt(var + eps) of a group (0 where undefined), the variance in a second pass */
static struct row_stats group_stats(const struct ggml_tensor * x, struct group gr, int64_t run, double eps, float * buf) {
    const int64_t cnt = x->ne[0] * x->ne[1] * (gr.c1 - gr.c0), n_runs = x->ne[1] * (gr.c1 - gr.c0) / run;
    const struct ggmlr_vec_ops * v = ggmlr_vec();
    double mu = 0.0, ss = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t q = 0; q < n_runs; q++) {
            const struct run rn = run_of(x, gr, run, q);
            const float * r = ggmlr_row_f32(x, rn.i1, rn.i2, gr.i3, buf);
            if (pass == 0) mu += v->dot_dev(rn.n, r, 0.0, NULL, 0.0);
            else ss += v->dot_dev(rn.n, r, mu, r, mu);
        }
        if (pass == 0) mu /= (double) cnt;
    }
    const double var = ss / (double) cnt + eps;
    return (struct row_stats) {mu, var > 0.0 ? 1.0 / sqrt(var) : 0.0, 1.0 / (double) cnt};
}

/* GROUP_NORM (src[0] = x) and GROUP_NORM_BACK (src[0] = g, src[1] = x) */
static void ggmlr_compute_group_norm(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const bool back = dst->op == GGML_OP_GROUP_NORM_BACK;
    const struct ggml_tensor * x = back ? dst->src[1] : dst->src[0], * ga = back ? dst->src[0] : NULL;
    const double eps = ggmlr_group_norm_params_decode(dst).eps;
    const int64_t n = dst->ne[0];
    if (n == 0 || dst->ne[1] == 0) return;
    float * xbuf = p->wdata, * gbuf = xbuf + n;
    int64_t u0, u1;
    ggmlr_split(n_units(dst), p->ith, p->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const struct group gr = group_of(dst, u);
        if (gr.c1 <= gr.c0) continue;
        const int64_t run = run_rows(x, ga, dst, gr), n_runs = dst->ne[1] * (gr.c1 - gr.c0) / run;
        const struct row_stats s = group_stats(x, gr, run, eps, xbuf);
        const struct ggmlr_vec_ops * v = ggmlr_vec();
        double mean_g = 0.0, mean_gz = 0.0;  /* backward: mean(g), mean(g x̂) over the group */
        for (int64_t q = 0; back && q < n_runs; q++) {
            const struct run rn = run_of(x, gr, run, q);
            const float * xr = ggmlr_row_f32(x, rn.i1, rn.i2, gr.i3, xbuf), * g = ggmlr_row_f32(ga, rn.i1, rn.i2, gr.i3, gbuf);
            mean_g += v->dot_dev(rn.n, g, 0.0, NULL, 0.0);
            mean_gz += v->dot_dev(rn.n, g, 0.0, xr, s.mu);
        }
        mean_g *= s.k; mean_gz *= s.k * s.inv;
        for (int64_t q = 0; q < n_runs; q++) {
            const struct run rn = run_of(x, gr, run, q);
            const float * xr = ggmlr_row_f32(x, rn.i1, rn.i2, gr.i3, xbuf);
            float * y = ggmlr_elem_ptr(dst, 0, rn.i1, rn.i2, gr.i3);
            v->norm_apply(rn.n, xr, s.mu, s.inv, back ? ggmlr_row_f32(ga, rn.i1, rn.i2, gr.i3, gbuf) : NULL, mean_g, mean_gz, y);
        }
    }
}

GGMLR_KERNEL(norm, ggmlr_compute_norm, ggmlr_norm_work_size, NULL);            /* NORM, RMS_NORM, L2_NORM */
GGMLR_KERNEL(norm_back, ggmlr_compute_norm_back, ggmlr_norm_work_size, NULL);  /* NORM_BACK, RMS_NORM_BACK, L2_NORM_BACK */
GGMLR_KERNEL(group_norm, ggmlr_compute_group_norm, ggmlr_norm_work_size, NULL);  /* GROUP_NORM, GROUP_NORM_BACK */

/* ssm.c -- the state-space (Mamba) kernels: SSM_CONV, SSM_SCAN and their
 * gradients SSM_CONV_BACK, SSM_SCAN_BACK; F32, any input layout.
 *
 * SSM_CONV: y[i, t, s] = sum_k sx[t + k, i, s] c[k, i] (k < d_conv), rows
 * (t, s) of y over the threads. SSM_CONV_BACK, given dy [d_inner, n_t, n_s]:
 *   dsx[j, i, s] = sum_k dy[i, j - k, s] c[k, i]   over 0 <= j - k < n_t
 *   dc[k, i]     = sum_s sum_t dy[i, t, s] sx[t + k, i, s]
 *
 * SSM_SCAN: per sequence q, head h (group g = h / (n_head / n_group)) and
 * row r of the head, with sp_t = softplus(dt[h, t, q]) (the identity above 20,
 * as upstream) and a_d = A[d, h] (Mamba-1) or A[0, h] (Mamba-2):
 *   h_0 = s[:, r, h, ids[q]]
 *   h_{t+1}[d] = h_t[d] e_t[d] + B[d, g, t, q] x[r, h, t, q] sp_t,   e_t[d] = exp(sp_t a_d)
 *   y[r, h, t, q] = sum_d h_{t+1}[d] C[d, g, t, q]
 * The result packs y [head_dim, n_head, n_t, n_s], then K state slots
 * [d_state, head_dim, n_head, n_s]: slot k = h_{n_t - k} for k <= n_t, zeros
 * past it. Units (q, h) over the threads.
 *
 * SSM_SCAN_BACK, given dy (gy for y, gS_k for slot k; gS_k = 0 for k >= K): the states are
 * recomputed forwards, then with G = dL/dh_{t+1} (all paths) backwards:
 *   G = G_next e_{t+1} + gy_t C_t + gS_{n_t-1-t}       (G_next e_{t+1}: 0 at t = n_t - 1)
 *   dC_t += gy_t h_{t+1},  dB_t += G x_t sp_t,  dx_t = sum_d G B_t sp_t
 *   dsp_t = sum_d G (h_t e_t a + B_t x_t),  ddt = dsp_t softplus'(dt),  dA += G h_t e_t sp_t
 *   ds[:, r, h, ids[q]] += G_0 e_0 + gS_{n_t}
 * One node per source. Its elements are split into units, each a region of
 * the gradient that one thread owns and adds rows (q, h) into in a fixed
 * order (scan_unit), so that the sums do not depend on the thread count. */
#include "cpu/kernels/kernels.h"

#include <math.h>
#include <string.h>

static inline float f32_at(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return *(const float *) ggmlr_elem_ptr(t, i0, i1, i2, i3);
}
static inline void f32_add(struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, float v) {
    *(float *) ggmlr_elem_ptr(t, i0, i1, i2, i3) += v;
}

/* ---- SSM_CONV ---- */

static void ssm_conv_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * sx = dst->src[0], * c = dst->src[1];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, t, s, i3;
    while (ggmlr_next_row(&rows, &r, &t, &s, &i3)) {
        float * y = ggmlr_elem_ptr(dst, 0, t, s, 0);
        for (int64_t i = 0; i < dst->ne[0]; i++) {
            float sum = 0.0f;
            for (int64_t k = 0; k < c->ne[0]; k++) sum += f32_at(sx, t + k, i, s, 0) * f32_at(c, k, i, 0, 0);
            y[i] = sum;
        }
    }
}

/* rows of dsx (i, s) or of dc (i); which is op_params' */
static void ssm_conv_backward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_ssm_conv_back_srcs a = ggmlr_ssm_conv_back_srcs_decode(dst);
    const int64_t d_conv = a.c->ne[0], n_t = a.dy->ne[1], n_s = a.dy->ne[2];
    const bool want_c = ggmlr_i32_param_decode(dst) == 1;
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i, s, i3;
    while (ggmlr_next_row(&rows, &r, &i, &s, &i3)) {
        float * out = ggmlr_elem_ptr(dst, 0, i, s, 0);
        for (int64_t j = 0; j < dst->ne[0]; j++) {
            float sum = 0.0f;
            if (want_c) {
                for (int64_t q = 0; q < n_s; q++)
                    for (int64_t t = 0; t < n_t; t++) sum += f32_at(a.dy, i, t, q, 0) * f32_at(a.sx, t + j, i, q, 0);
            } else {
                const int64_t k0 = j - n_t + 1 > 0 ? j - n_t + 1 : 0, k1 = j < d_conv - 1 ? j : d_conv - 1;
                for (int64_t k = k0; k <= k1; k++) sum += f32_at(a.dy, i, j - k, s, 0) * f32_at(a.c, k, i, 0, 0);
            }
            out[j] = sum;
        }
    }
}

/* ---- SSM_SCAN ---- */

struct scan {
    struct ggmlr_ssm_scan_srcs a;
    int64_t d_state, head_dim, n_head, n_t, n_s, n_group, K;
    int which;
};

static struct scan scan_of(const struct ggml_tensor * dst) {
    const struct ggmlr_ssm_scan_srcs a = ggmlr_ssm_scan_srcs_decode(dst);
    const struct ggmlr_ssm_scan_params prm = ggmlr_ssm_scan_params_decode(dst);
    const struct scan sc = {a, a.s->ne[0], a.x->ne[0], a.x->ne[1], a.x->ne[2], a.x->ne[3], a.B->ne[1], prm.K, prm.which};
    return sc;
}

static inline float softplus(float v) { return v > 20.0f ? v : log1pf(expf(v)); }
static inline float softplus_grad(float v) { return v > 20.0f ? 1.0f : 1.0f / (1.0f + expf(-v)); }
static inline int64_t group_of(const struct scan * sc, int64_t h) { return h / (sc->n_head / sc->n_group); }
static inline float a_at(const struct scan * sc, int64_t d, int64_t h) { return f32_at(sc->a.A, sc->a.A->ne[0] == 1 ? 0 : d, h, 0, 0); }
static inline int32_t id_at(const struct scan * sc, int64_t q) { return *(const int32_t *) ggmlr_elem_ptr(sc->a.ids, q, 0, 0, 0); }

/* the packed result's (or its gradient's) offsets: y[r, h, t, q] and slot k's state row (q, h, r) */
static inline int64_t y_index(const struct scan * sc, int64_t r, int64_t h, int64_t t, int64_t q) {
    return r + sc->head_dim * (h + sc->n_head * (t + sc->n_t * q));
}
static inline int64_t slot_index(const struct scan * sc, int64_t k, int64_t q, int64_t h, int64_t r) {
    return sc->head_dim * sc->n_head * sc->n_t * sc->n_s + (((k * sc->n_s + q) * sc->n_head + h) * sc->head_dim + r) * sc->d_state;
}

/* Every thread checks every id before any work (and thread 0 reports), so
 * that no thread reads a state row that is not there. */
static bool ids_ok(const struct ggmlr_compute_params * p, const struct scan * sc) {
    for (int64_t q = 0; q < sc->n_s; q++) {
        const int32_t id = id_at(sc, q);
        if (id >= 0 && id < sc->a.s->ne[3]) continue;
        if (p->ith == 0)
            ggmlr_compute_fail(p, "SSM_SCAN: ids[%lld] = %d is not a row of s (it has %lld)", (long long) q, (int) id, (long long) sc->a.s->ne[3]);
        return false;
    }
    return true;
}

/* Token t of row (q, h, r): next = prev e_t + B x sp (next may be prev); returns y. */
static float scan_step(const struct scan * sc, int64_t q, int64_t h, int64_t r, int64_t t, const float * prev, float * next) {
    const int64_t g = group_of(sc, h);
    const float sp = softplus(f32_at(sc->a.dt, h, t, q, 0)), x_sp = f32_at(sc->a.x, r, h, t, q) * sp;
    float y = 0.0f;
    for (int64_t d = 0; d < sc->d_state; d++) {
        const float v = prev[d] * expf(sp * a_at(sc, d, h)) + f32_at(sc->a.B, d, g, t, q) * x_sp;
        y += v * f32_at(sc->a.C, d, g, t, q);
        next[d] = v;
    }
    return y;
}

static void load_state(const struct scan * sc, int64_t q, int64_t h, int64_t r, float * st) {
    for (int64_t d = 0; d < sc->d_state; d++) st[d] = f32_at(sc->a.s, d, r, h, id_at(sc, q));
}

static size_t ssm_scan_work_size(const struct ggml_tensor * dst) {
    const struct scan sc = scan_of(dst);
    return (size_t) sc.d_state * sizeof(float);
}

static void ssm_scan_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct scan sc = scan_of(dst);
    if (!ids_ok(p, &sc)) return;
    float * out = dst->data, * st = p->wdata;
    const size_t row_bytes = (size_t) sc.d_state * sizeof(float);
    int64_t u0, u1;
    ggmlr_split(sc.n_s * sc.n_head, p->ith, p->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t q = u / sc.n_head, h = u % sc.n_head;
        for (int64_t r = 0; r < sc.head_dim; r++) {
            load_state(&sc, q, h, r, st);
            if (row_bytes && sc.K > sc.n_t) memcpy(out + slot_index(&sc, sc.n_t, q, h, r), st, row_bytes);
            for (int64_t k = sc.n_t + 1; row_bytes && k < sc.K; k++) memset(out + slot_index(&sc, k, q, h, r), 0, row_bytes);
            for (int64_t t = 0; t < sc.n_t; t++) {
                out[y_index(&sc, r, h, t, q)] = scan_step(&sc, q, h, r, t, st, st);
                const int64_t k = sc.n_t - 1 - t;
                if (row_bytes && k < sc.K) memcpy(out + slot_index(&sc, k, q, h, r), st, row_bytes);
            }
        }
    }
}

/* ---- SSM_SCAN_BACK ---- */

/* scratch: the states h_0..h_{n_t}, then G */
static size_t ssm_scan_back_work_size(const struct ggml_tensor * dst) {
    const struct scan sc = scan_of(dst);
    return (size_t) (sc.n_t + 2) * (size_t) sc.d_state * sizeof(float);
}

/* The reverse recurrence of row (q, h, r), adding its part of the gradient
 * of source sc->which into dst (the maths at the top). */
static void scan_back_row(const struct scan * sc, int64_t q, int64_t h, int64_t r, float * hs, struct ggml_tensor * dst) {
    const int64_t D = sc->d_state, g = group_of(sc, h);
    const struct ggml_tensor * dy = sc->a.dy;
    float * G = hs + (sc->n_t + 1) * D;
    load_state(sc, q, h, r, hs);
    for (int64_t t = 0; t < sc->n_t; t++) scan_step(sc, q, h, r, t, hs + t * D, hs + (t + 1) * D);
    memset(G, 0, (size_t) D * sizeof(float));
    for (int64_t t = sc->n_t - 1; t >= 0; t--) {
        const float dtv = f32_at(sc->a.dt, h, t, q, 0), sp = softplus(dtv), xv = f32_at(sc->a.x, r, h, t, q);
        const float gy = f32_at(dy, y_index(sc, r, h, t, q), 0, 0, 0);
        const int64_t k = sc->n_t - 1 - t;
        const float * prev = hs + t * D, * cur = prev + D;
        float dx = 0.0f, dsp = 0.0f;
        for (int64_t d = 0; d < D; d++) {
            const float a = a_at(sc, d, h), e = expf(sp * a), b = f32_at(sc->a.B, d, g, t, q);
            const float gd = G[d] + gy * f32_at(sc->a.C, d, g, t, q) + (k < sc->K ? f32_at(dy, slot_index(sc, k, q, h, r) + d, 0, 0, 0) : 0.0f);
            if (sc->which == GGMLR_SSM_C) f32_add(dst, d, g, t, q, gy * cur[d]);
            if (sc->which == GGMLR_SSM_B) f32_add(dst, d, g, t, q, gd * xv * sp);
            if (sc->which == GGMLR_SSM_A) f32_add(dst, sc->a.A->ne[0] == 1 ? 0 : d, h, 0, 0, gd * prev[d] * e * sp);
            dx += gd * b * sp;
            dsp += gd * (prev[d] * e * a + b * xv);
            G[d] = gd * e;
        }
        if (sc->which == GGMLR_SSM_X) f32_add(dst, r, h, t, q, dx);
        if (sc->which == GGMLR_SSM_DT) f32_add(dst, h, t, q, 0, dsp * softplus_grad(dtv));
    }
    if (sc->which != GGMLR_SSM_S) return;
    const int64_t k = sc->n_t;
    for (int64_t d = 0; d < D; d++)
        f32_add(dst, d, r, h, id_at(sc, q), G[d] + (k < sc->K ? f32_at(dy, slot_index(sc, k, q, h, r) + d, 0, 0, 0) : 0.0f));
}

/* Unit u of the gradient of sc->which, the region of dst it owns and the
 * rows (q, h) that add into it, in this order: s: (state row, head) over
 * the sequences that start from that row; x, dt: (q, h); A: head h over the
 * sequences; B, C: (q, group g) over the group's heads. */
struct scan_unit { int64_t q0, q1, h0, h1, id; /* id < 0: every q */ };

static int64_t scan_units(const struct scan * sc) {
    switch (sc->which) {
        case GGMLR_SSM_S: return sc->a.s->ne[3] * sc->n_head;
        case GGMLR_SSM_A: return sc->n_head;
        case GGMLR_SSM_B: case GGMLR_SSM_C: return sc->n_s * sc->n_group;
        default: return sc->n_s * sc->n_head;  /* x, dt */
    }
}

static struct scan_unit scan_unit(const struct scan * sc, int64_t u) {
    const int64_t hpg = sc->n_head / sc->n_group;  /* n_group >= 1: the constructor's check */
    switch (sc->which) {
        case GGMLR_SSM_S: return (struct scan_unit) {0, sc->n_s, u % sc->n_head, u % sc->n_head + 1, u / sc->n_head};
        case GGMLR_SSM_A: return (struct scan_unit) {0, sc->n_s, u, u + 1, -1};
        case GGMLR_SSM_B: case GGMLR_SSM_C: {
            const int64_t q = u / sc->n_group, g = u % sc->n_group;
            return (struct scan_unit) {q, q + 1, g * hpg, (g + 1) * hpg, -1};
        }
        default: return (struct scan_unit) {u / sc->n_head, u / sc->n_head + 1, u % sc->n_head, u % sc->n_head + 1, -1};
    }
}

static void ssm_scan_backward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct scan sc = scan_of(dst);
    const bool ok = ids_ok(p, &sc);
    int64_t e0, e1, u0, u1;  /* the gradient starts at zero: each thread clears its part, then adds */
    ggmlr_split(ggml_nelements(dst), p->ith, p->nth, &e0, &e1);
    if (e1 > e0) memset((float *) dst->data + e0, 0, (size_t) (e1 - e0) * sizeof(float));
    ggmlr_barrier(p);
    if (!ok || sc.d_state == 0) return;  /* no state: every gradient is zero */
    ggmlr_split(scan_units(&sc), p->ith, p->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const struct scan_unit w = scan_unit(&sc, u);
        for (int64_t q = w.q0; q < w.q1; q++) {
            if (w.id >= 0 && id_at(&sc, q) != w.id) continue;
            for (int64_t h = w.h0; h < w.h1; h++)
                for (int64_t r = 0; r < sc.head_dim; r++) scan_back_row(&sc, q, h, r, p->wdata, dst);
        }
    }
}

GGMLR_KERNEL(ssm_conv, ssm_conv_forward, NULL, NULL);
GGMLR_KERNEL(ssm_conv_back, ssm_conv_backward, NULL, NULL);
GGMLR_KERNEL(ssm_scan, ssm_scan_forward, ssm_scan_work_size, NULL);
GGMLR_KERNEL(ssm_scan_back, ssm_scan_backward, ssm_scan_back_work_size, NULL);

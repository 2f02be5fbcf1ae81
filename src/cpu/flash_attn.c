/* flash_attn.c -- fused attention, forward and backward, tiled so that the
 * N x M score matrix never exists: memory is O(N + M) per head.
 *
 * For query row n of head h (kv head hk = h / (H/Hkv)), batch b:
 *   s_m = scale * q.k_m           (softcap c > 0: c * tanh(s_m / c))
 *   s_m += slope_h * mask[m, n]   (mask plane h % mh, batch b % mb)
 *   p = softmax(s),  out = sum_m p_m v_m          (all -Inf: out = 0)
 *
 * Forward (FlashAttention-2): per block of QB query rows, walk K/V in tiles of
 * TC keys: S = Q K^T in registers (tile_abt), an online softmax (running max
 * and sum, rescaling O when the max grows), O += P V (tile_pv); divide by the
 * sum once at the end. A tile whose mask is all -Inf is skipped.
 *
 * Backward, with L = logsumexp(s) and D = dO . out per row (phase 1, by the
 * forward itself), then per tile of keys (phase 2):
 *   P = exp(S - L),  dP = dO V^T,  dS = P (dP - D)
 *   dV += P^T dO,  dK += scale dS^T Q,  dQ += scale dS K
 * A phase-2 task owns a kv head and a fixed chunk of its keys, and loops over
 * the query heads of its group: every dK/dV row has one writer. dQ gets one
 * private partial sum per key chunk, added in chunk order in phase 3. The chunk
 * count depends on the shape only, so results never depend on the thread count. */
#include "kernels.h"

#include <math.h>
#include <stdatomic.h>

#define TR GGMLR_TILE_R
#define QB (4 * TR)          /* query rows per task */
#define MIN_TASKS 8          /* backward: split keys until there are this many tasks */

struct fa {
    const struct ggml_tensor * q, * k, * v, * mask, * d;
    int64_t DK, DV, N, M, H, Hkv, B, group;
    int64_t DKp, DVp;        /* feature dims padded to whole tiles */
    int64_t TC;              /* keys per tile */
    float scale, max_bias, softcap;
    const struct ggmlr_vec_ops * vec;
};

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

static struct fa fa_of(const struct ggml_tensor * dst) {
    struct fa a;
    a.q = dst->src[0]; a.k = dst->src[1]; a.v = dst->src[2]; a.mask = dst->src[3]; a.d = dst->src[4];
    a.DK = a.q->ne[0]; a.DV = a.v->ne[0]; a.N = a.q->ne[1]; a.M = a.k->ne[1];
    a.H = a.q->ne[2]; a.Hkv = a.k->ne[2]; a.B = a.q->ne[3]; a.group = a.H / a.Hkv;
    a.vec = ggmlr_vec();
    a.TC = a.vec->tile_c;
    a.DKp = round_up(a.DK, a.TC); a.DVp = round_up(a.DV, a.TC);
    a.scale = ggmlr_get_op_param_f32(dst, 0);
    a.max_bias = dst->op == GGML_OP_FLASH_ATTN_EXT ? ggmlr_get_op_param_f32(dst, 1) : 0.0f;
    a.softcap = dst->op == GGML_OP_FLASH_ATTN_EXT ? ggmlr_get_op_param_f32(dst, 2) : 0.0f;
    return a;
}

/* Tasks are taken dynamically (an atomic counter in shared scratch when there
 * is one, else a static split); each task's result is independent of who runs it. */
static bool next_task(const struct ggmlr_compute_params * p, atomic_long * counter, int64_t n, int64_t * task, int64_t * cursor) {
    if (counter) { *task = atomic_fetch_add_explicit(counter, 1, memory_order_relaxed); return *task < n; }
    *task = *cursor;
    *cursor += p->nth;
    return *task < n;
}

/* row (i1,i2,i3) of t times mul, as F32 into dst[0..n), zeros up to npad */
static void load_row(const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3, float mul, float * dst, int64_t npad, float * tmp) {
    const float * r = ggmlr_row_f32(t, i1, i2, i3, tmp);
    for (int64_t i = 0; i < t->ne[0]; i++) dst[i] = r[i] * mul;
    for (int64_t i = t->ne[0]; i < npad; i++) dst[i] = 0.0f;
}

/* mt[r][j] = slope * mask[m0 + j, n0 + r] for r < nr, j < nk; -Inf elsewhere
 * (keys past the tile, rows past the block). Returns whether any entry is finite. */
static bool mask_tile(const struct fa * a, int64_t b, int64_t h, int64_t n0, int64_t nr, int64_t m0, int64_t nk, float slope, float * mt) {
    bool any = false;
    for (int64_t r = 0; r < QB; r++) {
        float * row = mt + r * a->TC;
        for (int64_t j = 0; j < a->TC; j++) {
            float x = -INFINITY;
            if (r < nr && j < nk) {
                x = a->mask ? slope * ggmlr_load_f32(a->mask->type, ggmlr_elem_ptr(a->mask, m0 + j, n0 + r, h % a->mask->ne[2], b % a->mask->ne[3])) : 0.0f;
                any = any || x != -INFINITY;
            }
            row[j] = x;
        }
    }
    return any;
}

/* K rows [m0, m0+nk) of kv head hk, batch b: transposed into kt[d][j] (TC wide)
 * and/or row-major into kp[j][DKp]; rows past nk are zero. Same for V. */
static void pack_kv(const struct fa * a, const struct ggml_tensor * t, int64_t dim, int64_t dimp, int64_t b, int64_t hk,
                    int64_t m0, int64_t nk, float * tr, float * rows, float * tmp) {
    for (int64_t j = 0; j < a->TC; j++) {
        float * rj = rows ? rows + j * dimp : tmp + dimp;
        if (j < nk) load_row(t, m0 + j, hk, b, 1.0f, rj, dimp, tmp);
        else for (int64_t i = 0; i < dimp; i++) rj[i] = 0.0f;
        if (tr) for (int64_t i = 0; i < dim; i++) tr[i * a->TC + j] = rj[i];
    }
}

/* ---- forward ---- */

/* tmp: 2 * max(DKp, DVp) floats, for converting rows (load_row, pack_kv) */
struct fwd_scratch { float * q, * kt, * v, * s, * mt, * o, * mx, * l, * dummy, * tmp; };

static size_t fwd_floats(const struct fa * a) {
    const int64_t TC = a->TC, wide = a->DKp > a->DVp ? a->DKp : a->DVp;
    return (size_t) (QB * a->DKp + a->DK * TC + TC * a->DVp + (QB * TC + TR) + QB * TC + QB * a->DVp + 2 * QB + (wide + TC) + (2 * wide + 64));
}

static struct fwd_scratch fwd_layout(const struct fa * a, float * w) {
    const int64_t TC = a->TC, wide = a->DKp > a->DVp ? a->DKp : a->DVp;
    struct fwd_scratch s;
    s.q = w;                 w += QB * a->DKp;
    s.kt = w;                w += a->DK * TC;
    s.v = w;                 w += TC * a->DVp;
    s.s = w;                 w += QB * TC + TR;
    s.mt = w;                w += QB * TC;
    s.o = w;                 w += QB * a->DVp;
    s.mx = w;                w += QB;
    s.l = w;                 w += QB;
    s.dummy = w;             w += wide + TC;
    s.tmp = w;
    return s;
}

/* Attention for rows [n0, n0+nr) of head h, batch b: normalised outputs into
 * s->o (rows of DVp) and, when mx is given, each row's logsumexp as max (mx)
 * plus log of the sum (lsum): kept apart, since mx + lsum would round away
 * the digits that exp(s - mx - lsum) needs when scores are large. */
static void forward_block(const struct fa * a, const struct fwd_scratch * s, int64_t b, int64_t h, int64_t n0, int64_t nr,
                          float * mx, float * lsum) {
    const int64_t TC = a->TC, hk = h / a->group;
    const float slope = ggmlr_alibi_slope(a->max_bias, h, a->H);
    for (int64_t r = 0; r < QB; r++) {
        if (r < nr) load_row(a->q, n0 + r, h, b, a->scale, s->q + r * a->DKp, a->DKp, s->tmp);
        else for (int64_t i = 0; i < a->DKp; i++) s->q[r * a->DKp + i] = 0.0f;
        for (int64_t i = 0; i < a->DVp; i++) s->o[r * a->DVp + i] = 0.0f;
        s->mx[r] = -INFINITY;
        s->l[r] = 0.0f;
    }
    for (int64_t m0 = 0; m0 < a->M; m0 += TC) {
        const int64_t nk = a->M - m0 < TC ? a->M - m0 : TC;
        if (!mask_tile(a, b, h, n0, nr, m0, nk, slope, s->mt)) continue;  /* nothing to attend to here */
        pack_kv(a, a->k, a->DK, a->DKp, b, hk, m0, nk, s->kt, NULL, s->tmp);
        pack_kv(a, a->v, a->DV, a->DVp, b, hk, m0, nk, NULL, s->v, s->tmp);
        for (int64_t r0 = 0; r0 < nr; r0 += TR) {
            const float * rows[TR];
            for (int r = 0; r < TR; r++) rows[r] = s->q + (r0 + r) * a->DKp;
            a->vec->tile_abt(a->DK, rows, s->kt, s->s + r0 * TC, TC);
        }
        for (int64_t r = 0; r < QB; r++) {
            float * sr = s->s + r * TC;
            const float * mr = s->mt + r * TC;
            float rmax = -INFINITY;
            for (int64_t j = 0; j < TC; j++) {
                float x = sr[j];
                if (a->softcap > 0.0f) x = a->softcap * tanhf(x / a->softcap);
                x += mr[j];
                sr[j] = x;
                rmax = x > rmax ? x : rmax;
            }
            if (r >= nr || rmax == -INFINITY) { for (int64_t j = 0; j < TC; j++) sr[j] = 0.0f; continue; }
            const float mnew = rmax > s->mx[r] ? rmax : s->mx[r];
            a->vec->tile_exp(TC, sr, mnew, sr);
            float sum = 0.0f;
            for (int64_t j = 0; j < TC; j++) sum += sr[j];
            if (mnew > s->mx[r]) {  /* the running max grew: rescale what was accumulated */
                const float alpha = s->mx[r] == -INFINITY ? 0.0f : expf(s->mx[r] - mnew);
                s->l[r] *= alpha;
                a->vec->scal(a->DVp, alpha, s->o + r * a->DVp);
                s->mx[r] = mnew;
            }
            s->l[r] += sum;
        }
        for (int64_t r0 = 0; r0 < nr; r0 += TR) {
            for (int64_t f0 = 0; f0 < a->DVp; f0 += TC) {
                float * out[TR];
                for (int r = 0; r < TR; r++) out[r] = s->o + (r0 + r) * a->DVp + f0;
                a->vec->tile_pv(nk, s->s + r0 * TC, TC, 1, s->v + f0, a->DVp, out);
            }
        }
    }
    for (int64_t r = 0; r < nr; r++) {
        const float inv = s->l[r] > 0.0f ? 1.0f / s->l[r] : 0.0f;
        a->vec->scal(a->DVp, inv, s->o + r * a->DVp);
        if (mx) { mx[r] = s->l[r] > 0.0f ? s->mx[r] : -INFINITY; lsum[r] = s->l[r] > 0.0f ? logf(s->l[r]) : 0.0f; }
    }
}

size_t ggmlr_flash_attn_ext_work_size(const struct ggml_tensor * dst) {
    const struct fa a = fa_of(dst);
    return fwd_floats(&a) * sizeof(float);
}

void ggmlr_compute_flash_attn_ext(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct fa a = fa_of(dst);
    const struct fwd_scratch s = fwd_layout(&a, p->wdata);
    const int64_t nqb = (a.N + QB - 1) / QB;
    int64_t task, cursor = p->ith;
    while (next_task(p, NULL, nqb * a.H * a.B, &task, &cursor)) {
        const int64_t qb = task % nqb, h = (task / nqb) % a.H, b = task / (nqb * a.H);
        const int64_t n0 = qb * QB, nr = a.N - n0 < QB ? a.N - n0 : QB;
        forward_block(&a, &s, b, h, n0, nr, NULL, NULL);
        for (int64_t r = 0; r < nr; r++) memcpy(ggmlr_elem_ptr(dst, 0, h, n0 + r, b), s.o + r * a.DVp, (size_t) a.DV * sizeof(float));
    }
}

/* ---- backward ---- */

struct bwd_scratch { float * kt, * kp, * vt, * dk, * dv, * q, * dO, * s, * dp, * mt, * dummy, * tmp; };

static size_t bwd_floats(const struct fa * a) {
    const int64_t TC = a->TC, wide = a->DKp > a->DVp ? a->DKp : a->DVp;
    return (size_t) (a->DK * TC + TC * a->DKp + a->DV * TC + TC * a->DKp + TC * a->DVp + QB * a->DKp + QB * a->DVp +
                     2 * (QB * TC + TR) + QB * TC + (wide + TC) + (2 * wide + 64));
}

static struct bwd_scratch bwd_layout(const struct fa * a, float * w) {
    const int64_t TC = a->TC, wide = a->DKp > a->DVp ? a->DKp : a->DVp;
    struct bwd_scratch s;
    s.kt = w;     w += a->DK * TC;
    s.kp = w;     w += TC * a->DKp;
    s.vt = w;     w += a->DV * TC;
    s.dk = w;     w += TC * a->DKp;
    s.dv = w;     w += TC * a->DVp;
    s.q = w;      w += QB * a->DKp;
    s.dO = w;     w += QB * a->DVp;
    s.s = w;      w += QB * TC + TR;
    s.dp = w;     w += QB * TC + TR;
    s.mt = w;     w += QB * TC;
    s.dummy = w;  w += wide + TC;
    s.tmp = w;
    return s;
}

/* key chunks per (kv head, batch): a function of the shape only */
static int64_t n_chunks(const struct fa * a) {
    const int64_t nkb = (a->M + a->TC - 1) / a->TC, heads = a->B * a->Hkv;
    int64_t c = (MIN_TASKS + heads - 1) / heads;
    return c < 1 ? 1 : c > nkb ? (nkb > 0 ? nkb : 1) : c;
}

struct bwd_shared { atomic_long counter[3]; float * mx, * lsum, * D, * dq; };

static struct bwd_shared * bwd_shared_layout(const struct fa * a, void * base) {
    struct bwd_shared * sh = base;
    float * f = (float *) ((char *) base + round_up((int64_t) sizeof *sh, 64));
    const int64_t rows = a->B * a->H * a->N;
    sh->mx = f;    f += rows;
    sh->lsum = f;  f += rows;
    sh->D = f;     f += rows;
    sh->dq = f;
    return sh;
}

size_t ggmlr_flash_attn_back_shared_size(const struct ggml_tensor * dst) {
    const struct fa a = fa_of(dst);
    const int64_t rows = a.B * a.H * a.N;
    return (size_t) round_up((int64_t) sizeof(struct bwd_shared), 64) + (size_t) (3 * rows + n_chunks(&a) * rows * a.DKp) * sizeof(float);
}

size_t ggmlr_flash_attn_back_work_size(const struct ggml_tensor * dst) {
    const struct fa a = fa_of(dst);
    const size_t f = fwd_floats(&a), b = bwd_floats(&a);
    return (f > b ? f : b) * sizeof(float);
}

/* Phase 2 for one key tile [m0, m0+nk) of kv head hk, batch b; dQ partials go to dq (chunk's rows). */
static void backward_tile(const struct fa * a, const struct bwd_scratch * s, const struct bwd_shared * sh, float * dq,
                          int64_t b, int64_t hk, int64_t m0, int64_t nk) {
    const int64_t TC = a->TC;
    pack_kv(a, a->k, a->DK, a->DKp, b, hk, m0, nk, s->kt, s->kp, s->tmp);
    pack_kv(a, a->v, a->DV, a->DVp, b, hk, m0, nk, s->vt, NULL, s->tmp);
    memset(s->dk, 0, (size_t) (TC * a->DKp) * sizeof(float));
    memset(s->dv, 0, (size_t) (TC * a->DVp) * sizeof(float));
    for (int64_t h = hk * a->group; h < (hk + 1) * a->group; h++) {
        for (int64_t n0 = 0; n0 < a->N; n0 += QB) {
            const int64_t nr = a->N - n0 < QB ? a->N - n0 : QB;
            if (!mask_tile(a, b, h, n0, nr, m0, nk, 1.0f, s->mt)) continue;
            const int64_t row0 = (b * a->H + h) * a->N + n0;  /* index of row n0 in L, D, dq */
            for (int64_t r = 0; r < QB; r++) {
                if (r < nr) {
                    load_row(a->q, n0 + r, h, b, a->scale, s->q + r * a->DKp, a->DKp, s->tmp);
                    load_row(a->d, h, n0 + r, b, 1.0f, s->dO + r * a->DVp, a->DVp, s->tmp);
                } else {
                    memset(s->q + r * a->DKp, 0, (size_t) a->DKp * sizeof(float));
                    memset(s->dO + r * a->DVp, 0, (size_t) a->DVp * sizeof(float));
                }
            }
            for (int64_t r0 = 0; r0 < nr; r0 += TR) {
                const float * qrows[TR], * drows[TR];
                for (int r = 0; r < TR; r++) { qrows[r] = s->q + (r0 + r) * a->DKp; drows[r] = s->dO + (r0 + r) * a->DVp; }
                a->vec->tile_abt(a->DK, qrows, s->kt, s->s + r0 * TC, TC);
                a->vec->tile_abt(a->DV, drows, s->vt, s->dp + r0 * TC, TC);
            }
            /* s := P = exp(S + mask - mx - lsum), dp := dS = P (dP - D) */
            for (int64_t r = 0; r < QB; r++) {
                float * sr = s->s + r * TC, * dr = s->dp + r * TC;
                const float * mr = s->mt + r * TC;
                const float mx = r < nr ? sh->mx[row0 + r] : -INFINITY;
                if (mx == -INFINITY) {
                    for (int64_t j = 0; j < TC; j++) { sr[j] = 0.0f; dr[j] = 0.0f; }
                    continue;
                }
                for (int64_t j = 0; j < TC; j++) sr[j] = (sr[j] + mr[j]) - mx;
                a->vec->tile_exp(TC, sr, sh->lsum[row0 + r], sr);
                const float D = sh->D[row0 + r];
                for (int64_t j = 0; j < TC; j++) dr[j] = sr[j] * (dr[j] - D);
            }
            /* dV += P^T dO and dK += dS^T (scale Q), key rows in tiles of TR */
            for (int64_t j0 = 0; j0 < nk; j0 += TR) {
                for (int64_t f0 = 0; f0 < a->DVp; f0 += TC) {
                    float * out[TR];
                    for (int r = 0; r < TR; r++) out[r] = j0 + r < nk ? s->dv + (j0 + r) * a->DVp + f0 : s->dummy;
                    a->vec->tile_pv(nr, s->s + j0, 1, TC, s->dO + f0, a->DVp, out);
                }
                for (int64_t f0 = 0; f0 < a->DKp; f0 += TC) {
                    float * out[TR];
                    for (int r = 0; r < TR; r++) out[r] = j0 + r < nk ? s->dk + (j0 + r) * a->DKp + f0 : s->dummy;
                    a->vec->tile_pv(nr, s->dp + j0, 1, TC, s->q + f0, a->DKp, out);
                }
            }
            /* dQ partial += dS K (the scale is applied once, in phase 3) */
            for (int64_t r0 = 0; r0 < nr; r0 += TR) {
                for (int64_t f0 = 0; f0 < a->DKp; f0 += TC) {
                    float * out[TR];
                    for (int r = 0; r < TR; r++) out[r] = r0 + r < nr ? dq + (row0 + r0 + r) * a->DKp + f0 : s->dummy;
                    a->vec->tile_pv(nk, s->dp + r0 * TC, TC, 1, s->kp + f0, a->DKp, out);
                }
            }
        }
    }
}

void ggmlr_compute_flash_attn_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct fa a = fa_of(dst);
    struct bwd_shared * sh = bwd_shared_layout(&a, p->shared);
    const int64_t nq = ggml_nelements(a.q), nk = ggml_nelements(a.k), nv = ggml_nelements(a.v);
    float * gq = dst->data, * gk = gq + ggmlr_pad16_floats(nq), * gv = gk + ggmlr_pad16_floats(nk);
    const int64_t chunks = n_chunks(&a), rows = a.B * a.H * a.N;
    if (p->ith == 0) {
        for (int i = 0; i < 3; i++) atomic_store_explicit(&sh->counter[i], 0, memory_order_relaxed);
        /* the padding between slices */
        for (int64_t i = nq; i < ggmlr_pad16_floats(nq); i++) gq[i] = 0.0f;
        for (int64_t i = nk; i < ggmlr_pad16_floats(nk); i++) gk[i] = 0.0f;
        for (int64_t i = nv; i < ggmlr_pad16_floats(nv); i++) gv[i] = 0.0f;
    }
    ggmlr_barrier(p);

    /* phase 1: L and D per query row, from the forward */
    const struct fwd_scratch fs = fwd_layout(&a, p->wdata);
    const int64_t nqb = (a.N + QB - 1) / QB;
    int64_t task, cursor = 0;
    while (next_task(p, &sh->counter[0], nqb * a.H * a.B, &task, &cursor)) {
        const int64_t qb = task % nqb, h = (task / nqb) % a.H, b = task / (nqb * a.H);
        const int64_t n0 = qb * QB, nr = a.N - n0 < QB ? a.N - n0 : QB, row0 = (b * a.H + h) * a.N + n0;
        forward_block(&a, &fs, b, h, n0, nr, sh->mx + row0, sh->lsum + row0);
        for (int64_t r = 0; r < nr; r++) {
            const float * dO = ggmlr_row_f32(a.d, h, n0 + r, b, fs.tmp);
            sh->D[row0 + r] = a.vec->dot(a.DV, dO, fs.o + r * a.DVp);
        }
    }
    ggmlr_barrier(p);

    /* phase 2: per (kv head, batch, key chunk) */
    const struct bwd_scratch bs = bwd_layout(&a, p->wdata);
    const int64_t nkb = (a.M + a.TC - 1) / a.TC;
    while (next_task(p, &sh->counter[1], a.B * a.Hkv * chunks, &task, &cursor)) {
        const int64_t c = task % chunks, hk = (task / chunks) % a.Hkv, b = task / (chunks * a.Hkv);
        float * dq = sh->dq + c * rows * a.DKp;
        for (int64_t h = hk * a.group; h < (hk + 1) * a.group; h++)
            memset(dq + (b * a.H + h) * a.N * a.DKp, 0, (size_t) (a.N * a.DKp) * sizeof(float));
        for (int64_t kb = c * nkb / chunks; kb < (c + 1) * nkb / chunks; kb++) {
            const int64_t m0 = kb * a.TC, nkt = a.M - m0 < a.TC ? a.M - m0 : a.TC;
            backward_tile(&a, &bs, sh, dq, b, hk, m0, nkt);
            float * dk = gk + a.DK * (m0 + a.M * (hk + a.Hkv * b));
            float * dv = gv + a.DV * (m0 + a.M * (hk + a.Hkv * b));
            for (int64_t j = 0; j < nkt; j++) {
                memcpy(dk + j * a.DK, bs.dk + j * a.DKp, (size_t) a.DK * sizeof(float));
                memcpy(dv + j * a.DV, bs.dv + j * a.DVp, (size_t) a.DV * sizeof(float));
            }
        }
    }
    ggmlr_barrier(p);

    /* phase 3: dq = scale * sum of the chunks' partials, in chunk order */
    int64_t r0, r1;
    ggmlr_split(rows, p->ith, p->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        float * out = gq + r * a.DK;
        for (int64_t i = 0; i < a.DK; i++) out[i] = 0.0f;
        for (int64_t c = 0; c < chunks; c++) {
            const float * part = sh->dq + (c * rows + r) * a.DKp;
            for (int64_t i = 0; i < a.DK; i++) out[i] += part[i];
        }
        for (int64_t i = 0; i < a.DK; i++) out[i] *= a.scale;
    }
}

/* flash_attn_back.c -- the backward of fused attention (the maths: see
 * flash_attn.c): per-row statistics (phase 1), then per key chunk P, dS and
 * the dV, dK, dQ products (phase 2), then dQ's chunk partials summed in a
 * fixed order (phase 3). */
#include "cpu/kernels/flash_attn_bf16.h"

#include <math.h>
#include <string.h>

/* Key tiles per span: their dK/dV accumulators stay in scratch while each block
 * of query rows is loaded once and meets all of them (4x less q/dO/dQ traffic
 * than one tile at a time, for 4 x KB x (DKp + DVp) floats of scratch). */
#define SPAN 4

/* per thread: dK/dV accumulators of a span of key tiles, a block of query rows
 * (q, dO: when not read in place), scores and gradients of one tile, a zero
 * row; with bf16, the rounded query block and tile operands */
struct bwd_scratch { float * dk, * dv, * q, * dO, * s, * dp, * mt, * dummy, * zero, * tmp; struct bf16_query bq; struct bf16_tile bt; };

static size_t bwd_floats(const struct fa * a) {
    const int64_t KB = a->KB, wide = a->DKp > a->DVp ? a->DKp : a->DVp;
    return (size_t) (SPAN * KB * (a->DKp + a->DVp) + a->QB * a->DKp + a->QB * a->DVp + 2 * (a->QB * KB + TR) + a->QB * KB +
                     (wide + a->TC) + wide + (2 * wide + 64) + (a->bf16 ? ggmlr_fa_bf16_bwd_u16(a) / 2 : 0));
}

static struct bwd_scratch bwd_layout(const struct fa * a, float * w) {
    const int64_t KB = a->KB, wide = a->DKp > a->DVp ? a->DKp : a->DVp;
    struct bwd_scratch s;
    s.dk = w;     w += SPAN * KB * a->DKp;
    s.dv = w;     w += SPAN * KB * a->DVp;
    s.q = w;      w += a->QB * a->DKp;
    s.dO = w;     w += a->QB * a->DVp;
    s.s = w;      w += a->QB * KB + TR;
    s.dp = w;     w += a->QB * KB + TR;
    s.mt = w;     w += a->QB * KB;
    s.dummy = w;  w += wide + a->TC;
    s.zero = w;   w += wide;
    s.tmp = w;    w += 2 * wide + 64;
    memset(s.zero, 0, (size_t) wide * sizeof(float));
    if (a->bf16) {
        uint16_t * u = (uint16_t *) w;
        s.bq = (struct bf16_query) {u, u + a->QB * a->DKp, u + a->QB * (a->DKp + a->DVp), u + a->QB * (2 * a->DKp + a->DVp)};
        u += 2 * a->QB * (a->DKp + a->DVp);
        s.bt = (struct bf16_tile) {s.s, s.dp, u, u + a->KB * a->QB, u + 2 * a->KB * a->QB};
    }
    return s;
}

static size_t ggmlr_flash_attn_back_shared_size(const struct ggml_tensor * dst) {
    const struct fa a = ggmlr_fa_of(dst);
    return ggmlr_fa_shared_bytes(&a, true, NULL, NULL);
}

static size_t ggmlr_flash_attn_back_work_size(const struct ggml_tensor * dst) {
    const struct fa a = ggmlr_fa_of(dst);
    const size_t f = ggmlr_fa_fwd_floats(&a), b = bwd_floats(&a);
    /* phase 1 of few query rows: the decode path's scratch, then a row of dO */
    const size_t d = ggmlr_fa_decode_fits(&a) ? ggmlr_fa_decode_floats(&a) + (size_t) ggmlr_fa_row_floats(&a) : 0;
    const size_t fb = f > b ? f : b;
    return (fb > d ? fb : d) * sizeof(float);
}

/* The query block: rows [n0, n0+nr) of q and dO for head h (q, dO), their
 * statistics into mx, lsum, D (mx = -Inf past nr: those rows give P = 0). */
struct query_rows { struct row_block q, dO; };

static struct query_rows load_query_block(const struct fa * a, const struct fa_shared * sh, const struct bwd_scratch * s,
                                          int64_t b, int64_t h, int64_t n0, int64_t nr, float * mx, float * lsum, float * D) {
    const int64_t row0 = (b * a->H + h) * a->N + n0;
    const struct query_rows qr = {ggmlr_fa_query_rows(a->q, a->q_in_place, 1, b, h, n0, nr, a->DKp, s->q, s->zero, s->tmp),
                                  ggmlr_fa_query_rows(a->d, a->d_in_place, 2, b, h, n0, nr, a->DVp, s->dO, s->zero, s->tmp)};
    if (a->bf16) ggmlr_fa_bf16_query_block(a, &qr.q, &qr.dO, nr, &s->bq);
    for (int64_t r = 0; r < a->QB; r++) {
        mx[r] = r < nr ? sh->mx[row0 + r] : -INFINITY;
        lsum[r] = r < nr ? sh->lsum[row0 + r] : 0.0f;
        D[r] = r < nr ? sh->D[row0 + r] : 0.0f;
    }
    return qr;
}

/* One key tile against the loaded query block: P, dS, then dV and dK of the
 * tile (accumulators dk, dv) and the block's dQ contributions (added into dq,
 * the rows of this key chunk's partial sums), over the tile's live keys (bi:
 * past group_live[g], P = dS = 0 in the rows of group g).
 * mt: the tile's mask (rows of KB), or NULL when it adds nothing. */
static void backward_tile(const struct fa * a, const struct fa_shared * sh, const struct bwd_scratch * s, const struct query_rows * qr,
                          int64_t b, int64_t hk, int64_t kb, const struct block_info * bi, int64_t nr, const float * mx,
                          const float * lsum, const float * D, const float * mt, float * dk, float * dv, float * dq) {
    int64_t gnl[GROUPS];  /* columns of S, dP per group of rows */
    const int64_t KB = a->KB, t = tile_index(a, b, hk, kb), live = group_columns(a, bi, gnl), nl = round_up(live, a->TC / 2);
    if (a->bf16) {  /* every row over the block's live keys in whole 32s */
        ggmlr_fa_bf16_backward_tile(a, sh, &s->bq, &s->bt, t, nr, round_up(live, 32), mx, lsum, D, mt, dk, dv, dq);
        return;
    }
    int64_t ldk;
    const float * kt = sh->kt + t * a->DK * KB, * vt = sh->vt + t * a->DV * KB;
    const float * kp = ggmlr_fa_tile_rows(a, a->k, a->k_in_place, sh->kp, a->DKp, b, hk, kb, &ldk);
    /* per group of rows: s := P = exp(S + mask - mx - lsum) and dp := dS = P (dP - D),
     * with S = Q K^T and dP = dO V^T only in registers; zeros from a group's
     * columns to the tile's, as dV and dK read whole columns */
    for (int64_t r0 = 0; r0 < nr; r0 += TR) {
        const float * qrows[TR], * drows[TR];
        tile_row_ptrs(&qr->q, r0, nr, qrows);
        tile_row_ptrs(&qr->dO, r0, nr, drows);
        const int64_t cols = gnl[r0 / TR];
        float * p = s->s + r0 * KB, * ds = s->dp + r0 * KB;
        for (int64_t j0 = 0; j0 < cols; j0 += a->TC) {
            const bool half = j0 + a->TC > cols;
            a->vec->gemm_6xc_p(half, a->DK, qrows, kt + j0, KB, p + j0, KB, mt ? mt + r0 * KB + j0 : NULL, mx + r0, lsum + r0);
            a->vec->gemm_6xc_ds(half, a->DV, drows, vt + j0, KB, ds + j0, KB, p + j0, mx + r0, D + r0);
        }
        for (int r = 0; r < TR && cols < nl; r++) {
            memset(p + r * KB + cols, 0, (size_t) (nl - cols) * sizeof(float));
            memset(ds + r * KB + cols, 0, (size_t) (nl - cols) * sizeof(float));
        }
    }
    /* dV += P^T dO and dK += dS^T Q (the scale is applied once, when dK is written), key rows in tiles of TR */
    for (int64_t j0 = 0; j0 < live; j0 += TR) {
        /* leading groups of rows that attend none of keys j0.. (P = dS = 0) are skipped */
        int64_t k0 = 0;
        while (k0 < nr && bi->group_live[k0 / TR] <= j0) k0 += TR;
        if (k0 >= nr) continue;
        float * vrows[TR], * krows[TR];
        for (int r = 0; r < TR; r++) {
            vrows[r] = j0 + r < live ? dv + (j0 + r) * a->DVp : s->dummy;
            krows[r] = j0 + r < live ? dk + (j0 + r) * a->DKp : s->dummy;
        }
        ggmlr_fa_acc_rows(a, nr - k0, s->s + k0 * KB + j0, 1, KB, qr->dO.base + k0 * qr->dO.ld, qr->dO.ld, vrows, a->DVp);
        ggmlr_fa_acc_rows(a, nr - k0, s->dp + k0 * KB + j0, 1, KB, qr->q.base + k0 * qr->q.ld, qr->q.ld, krows, a->DKp);
    }
    /* dQ += dS K (the scale is applied once, in phase 3) */
    for (int64_t r0 = 0; r0 < nr; r0 += TR) {
        float * out[TR];
        for (int r = 0; r < TR; r++) out[r] = r0 + r < nr ? dq + (r0 + r) * a->DKp : s->dummy;
        ggmlr_fa_acc_rows(a, bi->group_live[r0 / TR], s->dp + r0 * KB, KB, 1, kp, ldk, out, a->DKp);
    }
}

/* Phase 2 for key tiles [kb0, kb1) (at most SPAN) of kv head hk, batch b:
 * their dK, dV into s->dk, s->dv; dQ contributions added into dq (this
 * chunk's partial sums). */
static void backward_span(const struct fa * a, const struct fa_shared * sh, const struct bwd_scratch * s, float * dq,
                          int64_t b, int64_t hk, int64_t kb0, int64_t kb1) {
    const int64_t KB = a->KB;
    memset(s->dk, 0, (size_t) (SPAN * KB * a->DKp) * sizeof(float));
    memset(s->dv, 0, (size_t) (SPAN * KB * a->DVp) * sizeof(float));
    float mx[QB_MAX], lsum[QB_MAX], D[QB_MAX];
    for (int64_t h = hk * a->group; h < (hk + 1) * a->group; h++) {
        for (int64_t n0 = 0; n0 < a->N; n0 += a->QB) {
            const int64_t nr = a->N - n0 < a->QB ? a->N - n0 : a->QB;
            bool loaded = false;
            struct query_rows qr;
            for (int64_t kb = kb0; kb < kb1; kb++) {
                const int64_t m0 = kb * KB, nk = a->M - m0 < KB ? a->M - m0 : KB;
                const struct block_info bi = ggmlr_fa_block_at(a, sh, b, h, n0 / a->QB, kb, nk);
                const int kind = ggmlr_fa_mask_tile(a, bi.cls, b, h, n0, nr, m0, nk, 1.0f, s->mt);
                if (kind == TILE_EMPTY) continue;
                if (!loaded) {
                    qr = load_query_block(a, sh, s, b, h, n0, nr, mx, lsum, D);
                    loaded = true;
                    /* the next block's dO rows lie H rows apart (dO is [DV, H, N]) and its mask rows M apart */
                    for (int64_t n = n0 + a->QB; n < n0 + 2 * a->QB && n < a->N; n++)
                        ggmlr_fa_prefetch_bytes(ggmlr_elem_ptr(a->d, 0, h, n, b), a->DV * (int64_t) a->d->nb[0]);
                    for (int64_t next = kb0; next < kb1; next++) ggmlr_fa_prefetch_mask_tile(a, sh, b, h, n0 / a->QB + 1, next);
                }
                backward_tile(a, sh, s, &qr, b, hk, kb, &bi, nr, mx, lsum, D,
                              kind == TILE_MASKED ? s->mt : NULL, s->dk + (kb - kb0) * KB * a->DKp, s->dv + (kb - kb0) * KB * a->DVp,
                              dq + ((b * a->H + h) * a->N + n0) * a->DKp);
            }
        }
    }
}

static void ggmlr_compute_flash_attn_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct fa a = ggmlr_fa_of(dst);
    struct fa_shared * sh = ggmlr_fa_shared_layout(p, &a, true);
    const int64_t nq = ggml_nelements(a.q), nk = ggml_nelements(a.k), nv = ggml_nelements(a.v);
    float * gq = dst->data, * gk = gq + ggmlr_pad16_floats(nq), * gv = gk + ggmlr_pad16_floats(nk);
    const int64_t chunks = ggmlr_fa_n_chunks(&a), rows = a.B * a.H * a.N, nkb = n_key_tiles(&a);
    if (p->ith == 0) {  /* the padding between slices */
        for (int64_t i = nq; i < ggmlr_pad16_floats(nq); i++) gq[i] = 0.0f;
        for (int64_t i = nk; i < ggmlr_pad16_floats(nk); i++) gk[i] = 0.0f;
        for (int64_t i = nv; i < ggmlr_pad16_floats(nv); i++) gv[i] = 0.0f;
    }
    const struct fwd_scratch fs = ggmlr_fa_fwd_layout(&a, p->wdata);
    ggmlr_fa_start_node(p, sh);
    ggmlr_fa_pack_all(p, &a, sh, true, fs.tmp);

    /* phase 1: each query row's statistics and D = dO . out, from the forward
     * node's saved output and statistics (autodiff), or by running the forward */
    const struct ggmlr_flash_attn_srcs srcs = ggmlr_flash_attn_srcs_decode(dst);
    const struct ggml_tensor * saved_out = srcs.saved_out, * saved_stats = srcs.stats;
    int64_t task;
    if (saved_out) {
        const float * st = saved_stats->data;
        int64_t r0, r1;
        ggmlr_split(rows, p->ith, p->nth, &r0, &r1);
        for (int64_t r = r0; r < r1; r++) {
            const int64_t n = r % a.N, h = (r / a.N) % a.H, b = r / (a.N * a.H);
            sh->mx[r] = st[r];
            sh->lsum[r] = st[rows + r];
            const float * dO = ggmlr_row_f32(a.d, h, n, b, fs.tmp);
            sh->D[r] = a.vec->dot(a.DV, dO, ggmlr_row_f32(saved_out, h, n, b, fs.tmp + ggmlr_fa_row_floats(&a)));
        }
    } else if (ggmlr_fa_decode_fits(&a)) {  /* the forward node's own path for these shapes */
        float * dO_buf = (float *) p->wdata + ggmlr_fa_decode_floats(&a);  /* after the decode path's scratch */
        while (next_task(&sh->counter[1], ggmlr_fa_decode_n_tasks(&a), &task)) {
            float mx[DECODE_HEADS], lsum[DECODE_HEADS];
            const struct fa_decode_task t = ggmlr_fa_decode_run(&a, task, p->wdata, mx, lsum);
            for (int64_t g = 0; g < t.G; g++) {
                const int64_t row = (t.b * a.H + t.h0 + g) * a.N + t.n;
                sh->mx[row] = mx[g];
                sh->lsum[row] = lsum[g];
                sh->D[row] = a.vec->dot(a.DV, ggmlr_row_f32(a.d, t.h0 + g, t.n, t.b, dO_buf), t.o + g * a.DVp);
            }
        }
    } else {
        while (next_task(&sh->counter[1], n_query_tasks(&a), &task)) {
            const struct query_block q = query_block(&a, task);
            const int64_t row0 = (q.b * a.H + q.h) * a.N + q.n0;
            ggmlr_fa_forward_block(&a, sh, &fs, q.b, q.h, q.n0, q.nr, sh->mx + row0, sh->lsum + row0);
            for (int64_t r = 0; r < q.nr; r++) {
                const float * dO = ggmlr_row_f32(a.d, q.h, q.n0 + r, q.b, fs.tmp);
                sh->D[row0 + r] = a.vec->dot(a.DV, dO, fs.o + r * a.DVp);
            }
        }
    }
    ggmlr_barrier(p);

    /* phase 2: per (kv head, batch, key chunk) */
    const struct bwd_scratch bs = bwd_layout(&a, p->wdata);
    while (next_task(&sh->counter[2], a.B * a.Hkv * chunks, &task)) {
        const int64_t c = task % chunks, hk = (task / chunks) % a.Hkv, b = task / (chunks * a.Hkv);
        float * dq = sh->dq + c * rows * a.DKp;
        for (int64_t h = hk * a.group; h < (hk + 1) * a.group; h++)
            memset(dq + (b * a.H + h) * a.N * a.DKp, 0, (size_t) (a.N * a.DKp) * sizeof(float));
        const int64_t kb_end = (c + 1) * nkb / chunks;
        for (int64_t kb0 = c * nkb / chunks; kb0 < kb_end; kb0 += SPAN) {
            const int64_t kb1 = kb0 + SPAN < kb_end ? kb0 + SPAN : kb_end;
            backward_span(&a, sh, &bs, dq, b, hk, kb0, kb1);
            /* keys [m0, m1) of this span, dense in the packed output */
            const int64_t m0 = kb0 * a.KB, m1 = kb1 * a.KB < a.M ? kb1 * a.KB : a.M;
            float * dk = gk + a.DK * (m0 + a.M * (hk + a.Hkv * b));
            float * dv = gv + a.DV * (m0 + a.M * (hk + a.Hkv * b));
            for (int64_t j = 0; j < m1 - m0 && !a.bf16; j++) {
                for (int64_t i = 0; i < a.DK; i++) dk[j * a.DK + i] = a.scale * bs.dk[j * a.DKp + i];  /* dK = scale dS^T Q */
                memcpy(dv + j * a.DV, bs.dv + j * a.DVp, (size_t) a.DV * sizeof(float));
            }
            /* bf16: the accumulators are transposed per tile, [DKp][KB] and [DVp][KB] */
            for (int64_t j = 0; j < m1 - m0 && a.bf16; j++) {
                const float * tk = bs.dk + j / a.KB * a.KB * a.DKp + j % a.KB, * tv = bs.dv + j / a.KB * a.KB * a.DVp + j % a.KB;
                for (int64_t i = 0; i < a.DK; i++) dk[j * a.DK + i] = a.scale * tk[i * a.KB];
                for (int64_t i = 0; i < a.DV; i++) dv[j * a.DV + i] = tv[i * a.KB];
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

GGMLR_KERNEL(flash_attn_back, ggmlr_compute_flash_attn_back, ggmlr_flash_attn_back_work_size, ggmlr_flash_attn_back_shared_size);

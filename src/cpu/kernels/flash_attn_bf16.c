/* flash_attn_bf16.c -- the products of fused attention at GGML_PREC_BF16
 * (docs/precision.md), where the CPU multiplies bf16 (cpu/simd/bf16_gemm.h):
 * every operand of a product is rounded to bf16 (to nearest even) as it is
 * packed, each product of two bf16 is exact in FP32, the sums are FP32. The
 * softmax statistics, the mask, the scale and dS = P (dP - D) stay FP32:
 *   forward   S = scale (bf16(Q) bf16(K)^T) + mask,   O += bf16(P) bf16(V)
 *   backward  S as above, dP = bf16(dO) bf16(V)^T,
 *             dV += bf16(P)^T bf16(dO),  dK += bf16(dS)^T bf16(Q),  dQ += bf16(dS) bf16(K)
 * (P of the forward is relative to the row's running max; of the backward,
 * exp(S - L) with the saved statistics.) The rest of the tiling, masks and
 * task split is flash_attn.c's and flash_attn_back.c's; this file packs the
 * bf16 operands and runs the products on them.
 *
 * Layouts (u16 = one bf16; a vnni operand of width w: bf16_gemm.h):
 *   per key tile, in shared scratch (the slots of struct fa_shared):
 *     kt: K as vnni [DKp/2][KB][2]   (S = Q K^T: columns are keys)
 *     vp: V as vnni [KB/2][DVp][2]   (O += P V: columns are features)
 *     vt: V as vnni [DVp/2][KB][2]   (backward dP = dO V^T)
 *     kp: K as vnni [KB/2][DKp][2]   (backward dQ += dS K)
 *   per block of query rows: Q and dO as rows [QB][DKp], [QB][DVp], and
 *   (backward) transposed, rows [DKp][QB], [DVp][QB];
 *   per tile: P and dS as vnni [QB/2][KB][2], dS as rows [QB][KB].
 * The backward accumulates dK and dV transposed, dK^T = Q^T dS and
 * dV^T = dO^T P ([D][KB] per tile): then every per-tile operand is packed
 * with contiguous stores, and only the query block (once per span of tiles)
 * is transposed.
 * Padding (features past D, keys past the tile, rows past the block) is zero. */
#include "cpu/kernels/flash_attn_bf16.h"

#include "cpu/simd/bf16_gemm.h"

#include <math.h>
#include <string.h>

static uint16_t * tile16(float * slot, int64_t t, int64_t per_tile) { return (uint16_t *) slot + t * per_tile; }

void ggmlr_fa_bf16_pack_tile(const struct fa * a, struct fa_shared * sh, bool backward, int64_t b, int64_t hk, int64_t kb, float * tmp) {
    const int64_t KB = a->KB, m0 = kb * KB, nk = a->M - m0 < KB ? a->M - m0 : KB, t = tile_index(a, b, hk, kb);
    uint32_t * kt = (uint32_t *) tile16(sh->kt, t, a->DKp * KB), * vp = (uint32_t *) tile16(sh->vp, t, KB * a->DVp);
    uint32_t * kp = backward ? (uint32_t *) tile16(sh->kp, t, KB * a->DKp) : NULL;
    uint32_t * vt = backward ? (uint32_t *) tile16(sh->vt, t, a->DVp * KB) : NULL;
    float * tmp1 = tmp + ggmlr_fa_row_floats(a);  /* a second converted row */
    /* a pair of keys at a time: rows 2i, 2i + 1 are pair row i of vp (and
     * kp), and each row is one column (key) of kt (and vt); keys past nk: zero */
    for (int64_t j = 0; j < KB; j += 2) {
        const int64_t n0 = j < nk ? 1 : 0, n1 = j + 1 < nk ? 1 : 0;
        const float * k0 = n0 ? ggmlr_row_f32(a->k, m0 + j, hk, b, tmp) : tmp, * k1 = n1 ? ggmlr_row_f32(a->k, m0 + j + 1, hk, b, tmp1) : NULL;
        ggmlr_bf16_row_words(kt + j, KB, k0, n0 * a->DK, a->DKp);
        ggmlr_bf16_row_words(kt + j + 1, KB, k1 ? k1 : tmp, n1 * a->DK, a->DKp);
        if (kp) ggmlr_bf16_pair_words(kp + j / 2 * a->DKp, 1, k0, k1, n0 * a->DK, a->DKp);
        const float * v0 = n0 ? ggmlr_row_f32(a->v, m0 + j, hk, b, tmp) : tmp, * v1 = n1 ? ggmlr_row_f32(a->v, m0 + j + 1, hk, b, tmp1) : NULL;
        ggmlr_bf16_pair_words(vp + j / 2 * a->DVp, 1, v0, v1, n0 * a->DV, a->DVp);
        if (vt) {
            ggmlr_bf16_row_words(vt + j, KB, v0, n0 * a->DV, a->DVp);
            ggmlr_bf16_row_words(vt + j + 1, KB, v1 ? v1 : tmp, n1 * a->DV, a->DVp);
        }
    }
}

/* rows [0, nr) of rb rounded into out (rows of dimp), zero rows up to a whole 8 */
void ggmlr_fa_bf16_rows(const struct row_block * rb, int64_t nr, int64_t dim, int64_t dimp, uint16_t * out) {
    for (int64_t r = 0; r < nr; r++) ggmlr_bf16_row(out + r * dimp, rb->base + r * rb->ld, dim, dimp);
    for (int64_t r = nr; r < round_up(nr, 8); r++) memset(out + r * dimp, 0, (size_t) dimp * sizeof(uint16_t));
}

/* rows [0, nr) of x (rows of ld, ncols of them read, np written) transposed
 * into the rows operand out [np][ldo] (ldo >= nr rounded to 2; an odd last
 * row paired with zeros) */
static void transpose_rows(const float * x, int64_t ld, int64_t nr, int64_t ncols, int64_t np, uint16_t * out, int64_t ldo) {
    for (int64_t r = 0; r < nr; r += 2)
        ggmlr_bf16_pair_words((uint32_t *) out + r / 2, ldo / 2, x + r * ld, r + 1 < nr ? x + (r + 1) * ld : NULL, ncols, np);
}

/* rows [0, nr) of x (rows of ld) as a vnni operand [nr/2][ldo][2] of ncols columns */
static void pair_rows(const float * x, int64_t ld, int64_t nr, int64_t ncols, uint16_t * out, int64_t ldo) {
    for (int64_t r = 0; r < nr; r += 2)
        ggmlr_bf16_pair_words((uint32_t *) out + r / 2 * ldo, 1, x + r * ld, r + 1 < nr ? x + (r + 1) * ld : NULL, ncols, ncols);
}

void ggmlr_fa_bf16_query_block(const struct fa * a, const struct row_block * q, const struct row_block * dO, int64_t nr,
                               const struct bf16_query * bq) {
    ggmlr_fa_bf16_rows(q, nr, a->DK, a->DKp, bq->q);
    ggmlr_fa_bf16_rows(dO, nr, a->DV, a->DVp, bq->dO);
    transpose_rows(q->base, q->ld, nr, a->DK, a->DKp, bq->qt, a->QB);
    transpose_rows(dO->base, dO->ld, nr, a->DV, a->DVp, bq->dot, a->QB);
}

/* S[r][j] = scale * sum_d q16[r][d] K[m0 + j][d] for r < nr, j < ncols (rows of KB) */
static void scores(const struct fa * a, const struct fa_shared * sh, int64_t t, const uint16_t * q16, int64_t nr, int64_t ncols, float * s) {
    ggmlr_bf16_gemm(nr, ncols, a->DKp, q16, a->DKp, tile16(sh->kt, t, a->DKp * a->KB), a->KB, s, a->KB, false);
    for (int64_t r = 0; r < nr; r++) a->vec->scal(ncols, a->scale, s + r * a->KB);
}

void ggmlr_fa_bf16_scores(const struct fa * a, const struct fa_shared * sh, int64_t t, const uint16_t * q16, int64_t nr, int64_t ncols,
                          float * s, const float * mask, float * tile_max) {
    scores(a, sh, t, q16, nr, ncols, s);
    if (tile_max)
        for (int64_t r = 0; r < nr; r++) tile_max[r] = a->vec->tile_add_max(ncols, s + r * a->KB, mask ? mask + r * a->KB : NULL);
}

void ggmlr_fa_bf16_pv(const struct fa * a, const struct fa_shared * sh, int64_t t, const float * p, int64_t nr, int64_t ncols,
                      uint16_t * p16, float * o) {
    const int64_t KB = a->KB;
    for (int64_t r = 0; r < nr; r++) ggmlr_bf16_row(p16 + r * KB, p + r * KB, ncols, ncols);
    for (int64_t r = nr; r < round_up(nr, 8); r++) memset(p16 + r * KB, 0, (size_t) ncols * sizeof(uint16_t));
    ggmlr_bf16_gemm(nr, a->DVp, ncols, p16, KB, tile16(sh->vp, t, KB * a->DVp), a->DVp, o, a->DVp, true);
}

void ggmlr_fa_bf16_backward_tile(const struct fa * a, const struct fa_shared * sh, const struct bf16_query * bq, const struct bf16_tile * bt,
                                 int64_t t, int64_t nr, int64_t ncols, const float * mx, const float * lsum, const float * D,
                                 const float * mt, float * dk, float * dv, float * dq) {
    const int64_t KB = a->KB, nr2 = round_up(nr, 2);
    float * p = bt->s, * ds = bt->dp;
    /* P = exp((scale S + mask - mx) - lsum), as the F32 kernel forms it; rows with nothing attended: 0 */
    ggmlr_bf16_gemm(nr, ncols, a->DKp, bq->q, a->DKp, tile16(sh->kt, t, a->DKp * KB), KB, p, KB, false);
    for (int64_t r = 0; r < nr; r++) {
        float * pr = p + r * KB;
        const float * mr = mt ? mt + r * KB : NULL;
        const float m = mx[r], sc = a->scale;
        if (m == -INFINITY) for (int64_t j = 0; j < ncols; j++) pr[j] = -INFINITY;
        else if (mr) for (int64_t j = 0; j < ncols; j++) pr[j] = (sc * pr[j] + mr[j]) - m;
        else for (int64_t j = 0; j < ncols; j++) pr[j] = sc * pr[j] - m;
        float sum;
        a->vec->tile_exp_rows(1, ncols, KB, pr, &lsum[r], &sum);
    }
    /* dS = P (dP - D), dP = dO V^T */
    ggmlr_bf16_gemm(nr, ncols, a->DVp, bq->dO, a->DVp, tile16(sh->vt, t, a->DVp * KB), KB, ds, KB, false);
    for (int64_t r = 0; r < nr; r++)
        for (int64_t j = 0; j < ncols; j++) ds[r * KB + j] = p[r * KB + j] * (ds[r * KB + j] - D[r]);
    /* dV^T += dO^T P and dK^T += Q^T dS over the block's rows; dQ += dS K over the tile's keys */
    pair_rows(p, KB, nr, ncols, bt->p_pairs, KB);
    pair_rows(ds, KB, nr, ncols, bt->ds_pairs, KB);
    ggmlr_bf16_gemm(a->DVp, ncols, nr2, bq->dot, a->QB, bt->p_pairs, KB, dv, KB, true);
    ggmlr_bf16_gemm(a->DKp, ncols, nr2, bq->qt, a->QB, bt->ds_pairs, KB, dk, KB, true);
    for (int64_t r = 0; r < round_up(nr, 8); r++) {
        if (r < nr) ggmlr_bf16_row(bt->ds16 + r * KB, ds + r * KB, ncols, ncols);
        else memset(bt->ds16 + r * KB, 0, (size_t) ncols * sizeof(uint16_t));
    }
    ggmlr_bf16_gemm(nr, a->DKp, ncols, bt->ds16, KB, tile16(sh->kp, t, KB * a->DKp), a->DKp, dq, a->DKp, true);
}

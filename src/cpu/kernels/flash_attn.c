/* flash_attn.c -- fused attention, tiled so that the N x M score matrix never
 * exists: memory is O(N + M) per head. This file: the forward, and what the
 * backward (flash_attn_back.c) shares with it (flash_attn_impl.h): the shape,
 * mask classes, K/V packing and GEMM wrappers.
 *
 * For query row n of head h (kv head hk = h / (H/Hkv)), batch b:
 *   s_m = scale * q.k_m           (softcap c > 0: c * tanh(s_m / c))
 *   s_m += slope_h * mask[m, n]   (mask plane h % mh, batch b % mb)
 *   p = softmax(s),  out = sum_m p_m v_m          (all -Inf: out = 0)
 *   (with sinks: sinks[h] joins the softmax's denominator, not the sum)
 *
 * Forward (FlashAttention-2): per block of QB query rows, walk K/V in tiles of
 * KB keys: S = Q (scale K)^T + mask in 6 x TC register tiles with the rows'
 * maxima (gemm_6xc_store; the scale rides in the packed K^T), an online
 * softmax (running max and sum; O is rescaled when the max passes the reference
 * it was accumulated against by more than a margin), O += P V
 * (gemm_6xc_acc, and a half-width kernel for a last TC / 2 columns); divide by
 * the sum once at the end. A tile whose mask is all -Inf is skipped; on a tile
 * whose mask ends in keys that every row masks, the work stops at the last
 * live key. Q, V (and K, dO in the backward) are read where they lie when
 * their rows are packed F32; only the transposed K^T (and V^T) are packed.
 *
 * The forward also saves each row's max and log-sum (the node's statistics
 * tensor), so a backward built by autodiff can skip running it again.
 *
 * Backward, with L = logsumexp(s) and D = dO . out per row (phase 1: from the
 * saved output and statistics, or by running the forward when
 * ggml_flash_attn_back is called on its own), then per tile of keys (phase 2):
 *   P = exp(S - L),  dP = dO V^T,  dS = P (dP - D)
 *   dV += P^T dO,  dK += scale dS^T Q,  dQ += scale dS K
 * A phase-2 task owns a kv head and a fixed chunk of its keys, and loops over
 * the query heads of its group: every dK/dV row has one writer. dQ gets one
 * private partial sum per key chunk, added in chunk order in phase 3. The chunk
 * count depends on the shape only, so results never depend on the thread count. */
#include "cpu/kernels/flash_attn_bf16.h"
#include "cpu/simd/bf16_gemm.h"

#include <math.h>

#define RESCALE_MARGIN 8.0f   /* forward: how far a score may pass the reference max before O is rescaled */
#define MIN_TASKS 8          /* backward: split keys until there are this many tasks */

/* Rows of t (consecutive along dimension dim) can serve as a row-major GEMM
 * operand where they lie: F32, packed elements, and no padding to add
 * (dimp == ne0), so a micro-tile never reads past a row (nor the tensor). */
static bool rows_in_place(const struct ggml_tensor * t, int64_t dimp, int dim) {
    return t->type == GGML_TYPE_F32 && t->nb[0] == sizeof(float) && t->nb[dim] % sizeof(float) == 0 && t->ne[0] == dimp;
}

struct fa ggmlr_fa_of(const struct ggml_tensor * dst) {
    struct fa a;
    const struct ggmlr_flash_attn_srcs srcs = ggmlr_flash_attn_srcs_decode(dst);
    a.q = srcs.q; a.k = srcs.k; a.v = srcs.v; a.mask = srcs.mask; a.d = srcs.d;
    a.sinks = ggmlr_flash_attn_sinks_decode(dst);
    a.DK = a.q->ne[0]; a.DV = a.v->ne[0]; a.N = a.q->ne[1]; a.M = a.k->ne[1];
    a.H = a.q->ne[2]; a.Hkv = a.k->ne[2]; a.B = a.q->ne[3]; a.group = a.H / a.Hkv;
    a.vec = ggmlr_vec();
    a.TC = a.vec->tile_c;
    /* small heads over many keys: twice the keys per tile, so the softmax
     * bookkeeping of a row is paid half as often (3-7 % on D = 64, N = 1024;
     * D = 128 and short sequences do better with the smaller tile) */
    const bool wide_tiles = a.DK <= 64 && a.DV <= 64 && a.M >= 4 * KEYS_PER_TILE;
    a.KB = round_up(wide_tiles ? 2 * KEYS_PER_TILE : KEYS_PER_TILE, a.TC);
    /* long sequences: 48 query rows per block, so the backward's dV and dK
     * products reduce over 48 rows per load of their accumulators (+2-8 %
     * at N >= 1024); short ones keep 24 (more, smaller tasks) */
    a.QB = a.N >= 4 * KEYS_PER_TILE ? QB_MAX : QB_MAX / 2;
    a.DKp = round_up(a.DK, a.TC / 2); a.DVp = round_up(a.DV, a.TC / 2);
    a.k_in_place = rows_in_place(a.k, a.DKp, 1);
    a.v_in_place = rows_in_place(a.v, a.DVp, 1);
    a.q_in_place = rows_in_place(a.q, a.DKp, 1);
    /* dO is [DV, H, N, B]: a head's query rows lie H rows apart (4 KiB at
     * DV = 128, H = 8), where the dV products' 48 reads of a block would share
     * a few L1 sets; so they are read in place only when they are adjacent
     * (H = 1), else copied once per block (AVX2 D = 128: +5-7 %) */
    a.d_in_place = a.d && rows_in_place(a.d, a.DVp, 2) && a.d->nb[2] == (size_t) a.DVp * sizeof(float);
    const struct ggmlr_flash_attn_params prm = ggmlr_flash_attn_params_decode(dst);  /* BACK: scale only (the rest 0) */
    a.scale = prm.scale;
    a.max_bias = prm.max_bias;
    a.softcap = prm.logit_softcap;
    /* GGML_PREC_BF16 (FLASH_ATTN_BACK: its forward's, docs/precision.md) where the CPU multiplies bf16 */
    a.bf16 = ggmlr_flash_attn_prec_decode(dst) == GGML_PREC_BF16 && ggmlr_bf16_path() != NULL;
    return a;
}

/* c[r][j] = sum_{k < K} rows[r][k] * b[k * ldb + j] (+ add[r * ldc + j]) for
 * r < TR, j < width (a multiple of TC / 2), with the rows' maxima into rmax:
 * whole micro-tiles, then a half tile for what is left. add, rmax: may be NULL. */
static void store_rows(const struct fa * a, int64_t K, const float * const * rows, const float * b, int64_t ldb, float * c, int64_t ldc,
                       const float * add, float * rmax, int64_t width) {
    for (int64_t j0 = 0; j0 < width; j0 += a->TC) {
        if (j0 + a->TC <= width) a->vec->gemm_6xc_store(K, rows, b + j0, ldb, c + j0, ldc, add ? add + j0 : NULL, rmax);
        else a->vec->gemm_6xh_store(K, rows, b + j0, ldb, c + j0, ldc, add ? add + j0 : NULL, rmax);
    }
}

/* out[r][f] += sum_{k < K} x[r * xrs + k * xks] * b[k * ldb + f] for r < TR,
 * f < width (a multiple of TC / 2): whole micro-tiles, then a half tile for
 * what is left. out holds the TR row pointers. */
void ggmlr_fa_acc_rows(const struct fa * a, int64_t K, const float * x, int64_t xrs, int64_t xks, const float * b, int64_t ldb,
                       float * const * out, int64_t width) {
    for (int64_t f0 = 0; f0 < width; f0 += a->TC) {
        float * o[TR];
        for (int r = 0; r < TR; r++) o[r] = out[r] + f0;
        if (f0 + a->TC <= width) a->vec->gemm_6xc_acc(K, x, xrs, xks, b + f0, ldb, o);
        else a->vec->gemm_6xh_acc(K, x, xrs, xks, b + f0, ldb, o);
    }
}

/* Rows [n0, n0+nr) of t for head h, batch b, consecutive along dimension dim
 * (q [D, N, H, B]: 1, dO [D, H, N, B]: 2): where they lie when in_place, else
 * converted into buf as rows of dimp (zero padded). */
struct row_block ggmlr_fa_query_rows(const struct ggml_tensor * t, bool in_place, int dim, int64_t b, int64_t h, int64_t n0, int64_t nr,
                                     int64_t dimp, float * buf, const float * zero, float * tmp) {
    const int64_t i1 = dim == 1 ? n0 : h, i2 = dim == 1 ? h : n0;
    if (in_place) return (struct row_block) {(const float *) ggmlr_elem_ptr(t, 0, i1, i2, b), (int64_t) (t->nb[dim] / sizeof(float)), zero};
    for (int64_t r = 0; r < nr; r++) {
        float * dst = buf + r * dimp;
        memcpy(dst, ggmlr_row_f32(t, dim == 1 ? n0 + r : h, dim == 1 ? h : n0 + r, b, tmp), (size_t) t->ne[0] * sizeof(float));
        memset(dst + t->ne[0], 0, (size_t) (dimp - t->ne[0]) * sizeof(float));
    }
    return (struct row_block) {buf, dimp, zero};
}

/* Of the nk mask elements at src: whether all are -Inf, whether all are zero,
 * and 1 + the index of the last one that is not -Inf (0 if none). F16 masks
 * (the usual kind) are scanned a vector at a time: the whole mask is read once
 * per node, so this pass is worth keeping lean. */
struct mask_row { bool all_inf, all_zero; int64_t live; };

static struct mask_row scan_mask_row(const struct fa * a, const char * src, int64_t nk) {
    const struct ggml_tensor * m = a->mask;
    struct mask_row mr = {true, true, nk};
    if (m->type == GGML_TYPE_F16 && m->nb[0] == sizeof(ggml_fp16_t)) {
        mr.live = a->vec->scan_f16_mask(nk, (const uint16_t *) src, &mr.all_inf, &mr.all_zero);
        return mr;
    }
    const bool f32 = m->type == GGML_TYPE_F32 && m->nb[0] == sizeof(float);
    for (int64_t i = 0; i < nk; i++) {
        const float x = f32 ? ((const float *) src)[i] : ggmlr_load_f32(m->type, src + i * m->nb[0]);
        mr.all_inf &= x == -INFINITY;
        mr.all_zero &= x == 0.0f;
    }
    while (mr.live > 0 && (f32 ? ((const float *) src)[mr.live - 1] : ggmlr_load_f32(m->type, src + (mr.live - 1) * m->nb[0])) == -INFINITY)
        mr.live--;
    return mr;
}

/* Classes of every key tile for query rows [n0, n0+nr) of mask plane (i2, i3)
 * into info[key tiles]. The mask is read row by row, in memory order (a block
 * at a time would jump M elements per row and defeat the prefetcher). */
static void classify_blocks(const struct fa * a, int64_t i2, int64_t i3, int64_t n0, int64_t nr, struct block_info * info) {
    enum { SOME_LIVE = 1, SOME_NONZERO = 2 };
    const int64_t nkb = n_key_tiles(a);
    memset(info, 0, (size_t) nkb * sizeof *info);
    for (int64_t r = 0; r < nr; r++) {
        const char * row = ggmlr_elem_ptr(a->mask, 0, n0 + r, i2, i3);
        for (int64_t kb = 0; kb < nkb; kb++) {
            const int64_t m0 = kb * a->KB, nk = a->M - m0 < a->KB ? a->M - m0 : a->KB;
            const struct mask_row mr = scan_mask_row(a, row + m0 * a->mask->nb[0], nk);
            info[kb].cls |= (mr.all_inf ? 0 : SOME_LIVE) | (mr.all_zero ? 0 : SOME_NONZERO);
            uint8_t * gl = &info[kb].group_live[r / TR];
            if (mr.live > *gl) *gl = (uint8_t) mr.live;
        }
    }
    for (int64_t kb = 0; kb < nkb; kb++)
        info[kb].cls = !(info[kb].cls & SOME_LIVE) ? BLOCK_MASKED : !(info[kb].cls & SOME_NONZERO) ? BLOCK_ZERO : BLOCK_MIXED;
}

/* TILE_EMPTY: the block is entirely masked (nothing to compute). TILE_PLAIN:
 * an all-zero block that fills the tile adds nothing (mt is not written; rows
 * past the block need no -Inf, their statistics already exclude them).
 * TILE_MASKED: mt[r][j] = slope * mask[m0 + j, n0 + r] for r < nr, j < nk;
 * -Inf elsewhere (keys past the tile, rows past the block). */
int ggmlr_fa_mask_tile(const struct fa * a, uint8_t cls, int64_t b, int64_t h, int64_t n0, int64_t nr, int64_t m0, int64_t nk,
                       float slope, float * mt) {
    if (cls == BLOCK_MASKED) return TILE_EMPTY;
    if (cls == BLOCK_ZERO && nk == a->KB) return TILE_PLAIN;
    bool any = false;
    for (int64_t r = 0; r < a->QB; r++) {
        float * row = mt + r * a->KB;
        int64_t j = 0;
        if (r < nr && cls == BLOCK_ZERO) {
            for (; j < nk; j++) row[j] = 0.0f;
            any = any || nk > 0;
        } else if (r < nr) {
            const struct ggml_tensor * m = a->mask;
            const char * src = ggmlr_elem_ptr(m, m0, n0 + r, h % m->ne[2], b % m->ne[3]);
            if (m->type == GGML_TYPE_F16 && m->nb[0] == sizeof(ggml_fp16_t)) ggml_fp16_to_fp32_row((const ggml_fp16_t *) src, row, nk);
            else if (m->type == GGML_TYPE_F32 && m->nb[0] == sizeof(float)) memcpy(row, src, (size_t) nk * sizeof(float));
            else for (j = 0; j < nk; j++) row[j] = ggmlr_load_f32(m->type, src + j * m->nb[0]);
            if (slope != 1.0f) {
                /* -Inf stays -Inf: a large max_bias underflows the slope to 0, and 0 * -Inf is NaN */
                for (j = 0; j < nk; j++) row[j] = row[j] != -INFINITY ? row[j] * slope : row[j];
            }
            j = nk;
            /* a mixed block is not all -Inf */
            any = any || cls == BLOCK_MIXED;
        }
        for (; j < a->KB; j++) row[j] = -INFINITY;
    }
    return any ? TILE_MASKED : TILE_EMPTY;
}

/* key chunks per (kv head, batch) in the backward: a function of the shape only */
int64_t ggmlr_fa_n_chunks(const struct fa * a) {
    const int64_t nkb = n_key_tiles(a), heads = a->B * a->Hkv;
    if (heads == 0) return 1;  /* an empty batch: nothing to split */
    int64_t c = (MIN_TASKS + heads - 1) / heads;
    return c < 1 ? 1 : c > nkb ? (nkb > 0 ? nkb : 1) : c;
}

/* floats of each packed array, for all tiles */
static int64_t tiles_floats(const struct fa * a, int64_t per_tile) { return a->B * a->Hkv * n_key_tiles(a) * per_tile; }

static int64_t n_mask_blocks(const struct fa * a) {
    return a->mask ? a->mask->ne[2] * a->mask->ne[3] * n_query_blocks(a) * n_key_tiles(a) : 0;
}

/* Bytes of shared scratch; with sh, also points its arrays into base. */
size_t ggmlr_fa_shared_bytes(const struct fa * a, bool backward, struct fa_shared * sh, void * base) {
    const int64_t rows = a->B * a->H * a->N, KB = a->KB;
    /* bf16 tiles: two values per float, every slot packed, features padded */
    const int64_t kt = a->bf16 ? a->DKp * KB / 2 : a->DK * KB, vt = a->bf16 ? a->DVp * KB / 2 : a->DV * KB;
    const int64_t vp = a->bf16 ? KB * a->DVp / 2 : a->v_in_place ? 0 : KB * a->DVp;
    const int64_t kp = a->bf16 ? KB * a->DKp / 2 : a->k_in_place ? 0 : KB * a->DKp;
    const int64_t sizes[8] = {
        tiles_floats(a, kt), tiles_floats(a, vp), backward ? tiles_floats(a, kp) : 0, backward ? tiles_floats(a, vt) : 0,
        backward ? rows : 0, backward ? rows : 0, backward ? rows : 0, backward ? ggmlr_fa_n_chunks(a) * rows * a->DKp : 0,
    };
    size_t off = (size_t) round_up((int64_t) sizeof(struct fa_shared), 64);
    if (sh) sh->blocks = (struct block_info *) ((char *) base + off);
    off += (size_t) round_up(n_mask_blocks(a) * (int64_t) sizeof(struct block_info), 64);
    float ** slots[8] = {NULL};
    if (sh) {
        float ** p[8] = {&sh->kt, &sh->vp, &sh->kp, &sh->vt, &sh->mx, &sh->lsum, &sh->D, &sh->dq};
        memcpy(slots, p, sizeof p);
    }
    for (int i = 0; i < 8; i++) {
        if (sh) *slots[i] = (float *) ((char *) base + off);
        off += (size_t) round_up(sizes[i], 16) * sizeof(float);
    }
    return off;
}

/* Class of query block qb x key tile kb (of nk keys) for head h, batch b, and
 * its live keys, per group of rows and in all: past them every row (of the
 * group) is -Inf; nk unless the block is mixed. */
struct block_info ggmlr_fa_block_at(const struct fa * a, const struct fa_shared * sh, int64_t b, int64_t h, int64_t qb, int64_t kb,
                                    int64_t nk) {
    struct block_info bi = {BLOCK_ZERO, {0}};
    if (a->mask) {
        const int64_t plane = (b % a->mask->ne[3]) * a->mask->ne[2] + h % a->mask->ne[2];
        bi = sh->blocks[(plane * n_query_blocks(a) + qb) * n_key_tiles(a) + kb];
    }
    if (bi.cls != BLOCK_MIXED)
        for (int g = 0; g < GROUPS; g++) bi.group_live[g] = (uint8_t) nk;
    return bi;
}

/* Starts loading [p, p + bytes) into the caches. */
KEEP_CALLS void ggmlr_fa_prefetch_bytes(const void * p, int64_t bytes) {
    for (int64_t off = 0; off < bytes + 63; off += 64) __builtin_prefetch((const char *) p + off);
}

/* Starts loading the mask rows of query block qb x key tile kb when they will
 * be read (a mixed block), so that the current tile's arithmetic hides the
 * latency: mask rows lie M elements apart and miss the caches. */
void ggmlr_fa_prefetch_mask_tile(const struct fa * a, const struct fa_shared * sh, int64_t b, int64_t h, int64_t qb, int64_t kb) {
    if (qb >= n_query_blocks(a) || kb >= n_key_tiles(a) || ggmlr_fa_block_at(a, sh, b, h, qb, kb, 0).cls != BLOCK_MIXED) return;
    const struct ggml_tensor * m = a->mask;
    const int64_t n0 = qb * a->QB, nr = a->N - n0 < a->QB ? a->N - n0 : a->QB, m0 = kb * a->KB;
    const int64_t bytes = (a->M - m0 < a->KB ? a->M - m0 : a->KB) * (int64_t) m->nb[0];
    for (int64_t r = 0; r < nr; r++) ggmlr_fa_prefetch_bytes(ggmlr_elem_ptr(m, m0, n0 + r, h % m->ne[2], b % m->ne[3]), bytes);
}

/* Thread 0 writes the layout; start_node's barrier publishes it to the others
 * (every thread writing the same pointers at once would be a data race). */
struct fa_shared * ggmlr_fa_shared_layout(const struct ggmlr_compute_params * p, const struct fa * a, bool backward) {
    struct fa_shared * sh = p->shared;
    if (p->ith == 0) ggmlr_fa_shared_bytes(a, backward, sh, p->shared);
    return sh;
}

/* Row-major rows of key tile kb of t (K or V; kv head hk, batch b) and their
 * stride *ld: t's own rows when in_place, else the packed copy (rows of dimp). */
const float * ggmlr_fa_tile_rows(const struct fa * a, const struct ggml_tensor * t, bool in_place, const float * packed, int64_t dimp,
                                 int64_t b, int64_t hk, int64_t kb, int64_t * ld) {
    if (!in_place) {
        *ld = dimp;
        return packed + tile_index(a, b, hk, kb) * a->KB * dimp;
    }
    *ld = (int64_t) (t->nb[1] / sizeof(float));
    return (const float *) ggmlr_elem_ptr(t, 0, kb * a->KB, hk, b);
}

/* rows [m0, m0+nk) of t (kv head hk, batch b): row-major into rows[KB][dimp]
 * and/or transposed and times tr_mul into tr[dim][KB]; rows past nk are zero.
 * F32 rows with packed elements are transposed in blocks of 8 keys. */
static void pack_rows(const struct fa * a, const struct ggml_tensor * t, int64_t dim, int64_t dimp, int64_t b, int64_t hk,
                      int64_t m0, int64_t nk, float * tr, float tr_mul, float * rows, float * tmp) {
    const bool blocks = tr && t->type == GGML_TYPE_F32 && t->nb[0] == sizeof(float) && t->nb[1] % sizeof(float) == 0;
    const int64_t transposed = blocks ? nk / 8 * 8 : 0;  /* keys [0, transposed) are done in blocks */
    for (int64_t j = 0; j < transposed; j += 8)
        a->vec->transpose8(dim, ggmlr_elem_ptr(t, 0, m0 + j, hk, b), (int64_t) (t->nb[1] / sizeof(float)), tr_mul, tr + j, a->KB);
    for (int64_t j = 0; j < a->KB; j++) {
        if (j >= nk) {
            if (rows) memset(rows + j * dimp, 0, (size_t) dimp * sizeof(float));
            if (tr) for (int64_t i = 0; i < dim; i++) tr[i * a->KB + j] = 0.0f;
            continue;
        }
        if (!rows && j < transposed) continue;
        const float * src = ggmlr_row_f32(t, m0 + j, hk, b, tmp);
        if (rows) {
            memcpy(rows + j * dimp, src, (size_t) dim * sizeof(float));
            memset(rows + j * dimp + dim, 0, (size_t) (dimp - dim) * sizeof(float));
        }
        if (tr && j >= transposed) for (int64_t i = 0; i < dim; i++) tr[i * a->KB + j] = src[i] * tr_mul;
    }
}

/* Phase 0 of both ops: pack every K/V tile and classify every mask block; ends with a barrier. */
void ggmlr_fa_pack_all(const struct ggmlr_compute_params * p, const struct fa * a, struct fa_shared * sh, bool backward, float * tmp) {
    const int64_t KB = a->KB, nkb = n_key_tiles(a), n_pack = a->B * a->Hkv * nkb;
    const int64_t nqb = n_query_blocks(a), n_rows = a->mask ? a->mask->ne[2] * a->mask->ne[3] * nqb : 0;
    int64_t task;
    while (next_task(&sh->counter[0], n_pack + n_rows, &task)) {
        if (task < n_pack) {
            const int64_t kb = task % nkb, hk = (task / nkb) % a->Hkv, b = task / (nkb * a->Hkv);
            if (a->bf16) {
                ggmlr_fa_bf16_pack_tile(a, sh, backward, b, hk, kb, tmp);
                continue;
            }
            const int64_t m0 = kb * KB, nk = a->M - m0 < KB ? a->M - m0 : KB, t = tile_index(a, b, hk, kb);
            /* K^T carries the scale: S = q (scale k) */
            pack_rows(a, a->k, a->DK, a->DKp, b, hk, m0, nk, sh->kt + t * a->DK * KB, a->scale,
                      backward && !a->k_in_place ? sh->kp + t * KB * a->DKp : NULL, tmp);
            if (backward || !a->v_in_place)
                pack_rows(a, a->v, a->DV, a->DVp, b, hk, m0, nk, backward ? sh->vt + t * a->DV * KB : NULL, 1.0f,
                          a->v_in_place ? NULL : sh->vp + t * KB * a->DVp, tmp);
        } else {
            const int64_t row = task - n_pack, qb = row % nqb, plane = row / nqb;
            const int64_t n0 = qb * a->QB, nr = a->N - n0 < a->QB ? a->N - n0 : a->QB;
            classify_blocks(a, plane % a->mask->ne[2], plane / a->mask->ne[2], n0, nr, sh->blocks + row * nkb);
        }
    }
    ggmlr_barrier(p);
}

/* Thread 0 resets the task counters; everyone waits for that. */
void ggmlr_fa_start_node(const struct ggmlr_compute_params * p, struct fa_shared * sh) {
    if (p->ith == 0) for (int i = 0; i < 3; i++) atomic_store_explicit(&sh->counter[i], 0, memory_order_relaxed);
    ggmlr_barrier(p);
}

/* ---- forward ---- */

/* the second half of fwd_scratch.tmp, for converting a second row */
int64_t ggmlr_fa_row_floats(const struct fa * a) { return a->DKp > a->DVp ? a->DKp : a->DVp; }

size_t ggmlr_fa_fwd_floats(const struct fa * a) {
    const int64_t KB = a->KB, wide = a->DKp > a->DVp ? a->DKp : a->DVp;
    const int64_t bf16 = a->bf16 ? (a->QB * a->DKp + a->QB * KB) / 2 : 0;  /* q16, p16 */
    return (size_t) (a->QB * a->DKp + (a->QB * KB + TR) + a->QB * KB + a->QB * a->DVp + 2 * a->QB + wide + (2 * wide + 64) + bf16);
}

struct fwd_scratch ggmlr_fa_fwd_layout(const struct fa * a, float * w) {
    const int64_t KB = a->KB;
    struct fwd_scratch s;
    s.q = w;    w += a->QB * a->DKp;
    s.s = w;    w += a->QB * KB + TR;
    s.mt = w;   w += a->QB * KB;
    s.o = w;    w += a->QB * a->DVp;
    s.mx = w;   w += a->QB;
    s.l = w;    w += a->QB;
    s.zero = w; w += ggmlr_fa_row_floats(a);
    s.tmp = w;  w += 2 * ggmlr_fa_row_floats(a) + 64;
    s.q16 = a->bf16 ? (uint16_t *) w : NULL;
    s.p16 = a->bf16 ? s.q16 + a->QB * a->DKp : NULL;
    memset(s.zero, 0, (size_t) ggmlr_fa_row_floats(a) * sizeof(float));
    return s;
}

/* The head's sink logit joins the denominators of rows [0, nr) once every key
 * is in, outside the tile loops: l += e^(sink - mx), or, past the margin, the
 * sink becomes the reference max (O and l rescaled by e^(mx - sink), l += 1).
 * A row with nothing attended keeps O = 0; a -Inf sink adds nothing. */
static void add_sink(const struct fa * a, float sink, int64_t nr, const struct fwd_scratch * s) {
    if (sink == -INFINITY) return;
    for (int64_t r = 0; r < nr; r++) {
        if (sink > s->mx[r] + RESCALE_MARGIN) {
            const float alpha = s->mx[r] != -INFINITY ? expf(s->mx[r] - sink) : 0.0f;
            s->l[r] = s->l[r] * alpha + 1.0f;
            a->vec->scal(a->DVp, alpha, s->o + r * a->DVp);
            s->mx[r] = sink;
        } else {
            s->l[r] += expf(sink - s->mx[r]);
        }
    }
}

/* Attention for rows [n0, n0+nr) of head h, batch b: normalised outputs into
 * s->o (rows of DVp) and, when mx is given, each row's logsumexp as max (mx)
 * plus log of the sum (lsum): kept apart, since mx + lsum would round away
 * the digits that exp(s - mx - lsum) needs when scores are large. */
void ggmlr_fa_forward_block(const struct fa * a, const struct fa_shared * sh, const struct fwd_scratch * s,
                            int64_t b, int64_t h, int64_t n0, int64_t nr, float * mx, float * lsum) {
    const int64_t KB = a->KB, hk = h / a->group;
    const float slope = ggmlr_alibi_slope(a->max_bias, h, a->H);
    const struct row_block q = ggmlr_fa_query_rows(a->q, a->q_in_place, 1, b, h, n0, nr, a->DKp, s->q, s->zero, s->tmp);
    if (a->bf16) ggmlr_fa_bf16_rows(&q, nr, a->DK, a->DKp, s->q16);
    for (int64_t r = 0; r < a->QB; r++) {
        memset(s->o + r * a->DVp, 0, (size_t) a->DVp * sizeof(float));
        s->mx[r] = -INFINITY;
        s->l[r] = 0.0f;
    }
    for (int64_t kb = 0; kb < n_key_tiles(a); kb++) {
        const int64_t m0 = kb * KB, nk = a->M - m0 < KB ? a->M - m0 : KB, t = tile_index(a, b, hk, kb);
        const struct block_info bi = ggmlr_fa_block_at(a, sh, b, h, n0 / a->QB, kb, nk);
        const int kind = ggmlr_fa_mask_tile(a, bi.cls, b, h, n0, nr, m0, nk, slope, s->mt);
        if (kind == TILE_EMPTY) continue;
        ggmlr_fa_prefetch_mask_tile(a, sh, b, h, n0 / a->QB, kb + 1);
        /* keys [0, group_live[g]) matter to the rows of group g: their S and
         * exponentials run over nl[g] of them (whole half tiles) */
        int64_t nl[GROUPS];
        const int64_t live = group_columns(a, &bi, nl);
        /* bf16: one width for every row, the block's live keys in whole 32s */
        for (int g = 0; g < GROUPS && a->bf16; g++) nl[g] = round_up(live, 32);
        int64_t ldv;
        const float * kt = sh->kt + t * a->DK * KB, * vp = ggmlr_fa_tile_rows(a, a->v, a->v_in_place, sh->vp, a->DVp, b, hk, kb, &ldv);
        /* S = Q K^T + mask and each row's max in one pass; a softcap comes
         * before the mask, so then they are separate passes */
        const bool capped = a->softcap > 0.0f;
        const float * add = kind == TILE_MASKED && !capped ? s->mt : NULL;
        float tile_max[QB_MAX];
        for (int64_t r = 0; r < a->QB; r++) tile_max[r] = -INFINITY;
        if (a->bf16) ggmlr_fa_bf16_scores(a, sh, t, s->q16, nr, nl[0], s->s, add, capped ? NULL : tile_max);
        for (int64_t r0 = 0; r0 < nr && !a->bf16; r0 += TR) {
            const float * rows[TR];
            tile_row_ptrs(&q, r0, nr, rows);
            store_rows(a, a->DK, rows, kt, KB, s->s + r0 * KB, KB, add ? add + r0 * KB : NULL, capped ? NULL : tile_max + r0, nl[r0 / TR]);
        }
        for (int64_t r = 0; r < nr; r++) {
            float * sr = s->s + r * KB;
            if (capped) {
                for (int64_t j = 0; j < nl[r / TR]; j++) sr[j] = a->softcap * tanhf(sr[j] / a->softcap);
                tile_max[r] = a->vec->tile_add_max(nl[r / TR], sr, kind == TILE_MASKED ? s->mt + r * KB : NULL);
            }
            const float rmax = tile_max[r];
            /* the reference max moves only when a score passes it by more than
             * RESCALE_MARGIN (exp(s - mx) <= e^8 cannot overflow), so the
             * rescale of what was accumulated, an exp and a pass over the
             * row, is rare after a row's first tile instead of frequent */
            if (rmax > s->mx[r] + RESCALE_MARGIN) {
                if (s->mx[r] != -INFINITY) {  /* else O and l are still zero */
                    const float alpha = expf(s->mx[r] - rmax);
                    s->l[r] *= alpha;
                    a->vec->scal(a->DVp, alpha, s->o + r * a->DVp);
                }
                s->mx[r] = rmax;
            }
        }
        /* P = exp(S - running max); rows past nr (max -Inf) and rows with nothing
         * attended yet come out as zeros */
        float tile_sum[QB_MAX];
        for (int64_t r0 = 0; r0 < nr; r0 += TR) a->vec->tile_exp_rows(TR, nl[r0 / TR], KB, s->s + r0 * KB, s->mx + r0, tile_sum + r0);
        for (int64_t r = 0; r < nr; r++) s->l[r] += tile_sum[r];
        if (a->bf16) ggmlr_fa_bf16_pv(a, sh, t, s->s, nr, nl[0], s->p16, s->o);
        for (int64_t r0 = 0; r0 < nr && !a->bf16; r0 += TR) {
            float * out[TR];
            for (int r = 0; r < TR; r++) out[r] = s->o + (r0 + r) * a->DVp;
            ggmlr_fa_acc_rows(a, bi.group_live[r0 / TR], s->s + r0 * KB, KB, 1, vp, ldv, out, a->DVp);
        }
    }
    if (a->sinks) add_sink(a, *(const float *) ggmlr_elem_ptr(a->sinks, h, 0, 0, 0), nr, s);
    for (int64_t r = 0; r < nr; r++) {
        const float inv = s->l[r] > 0.0f ? 1.0f / s->l[r] : 0.0f;
        a->vec->scal(a->DVp, inv, s->o + r * a->DVp);
        if (mx) { mx[r] = s->l[r] > 0.0f ? s->mx[r] : -INFINITY; lsum[r] = s->l[r] > 0.0f ? logf(s->l[r]) : 0.0f; }
    }
}

static size_t ggmlr_flash_attn_ext_work_size(const struct ggml_tensor * dst) {
    const struct fa a = ggmlr_fa_of(dst);
    return (ggmlr_fa_decode_fits(&a) ? ggmlr_fa_decode_floats(&a) : ggmlr_fa_fwd_floats(&a)) * sizeof(float);
}

static size_t ggmlr_flash_attn_ext_shared_size(const struct ggml_tensor * dst) {
    const struct fa a = ggmlr_fa_of(dst);
    return ggmlr_fa_decode_fits(&a) ? sizeof(struct fa_shared) : ggmlr_fa_shared_bytes(&a, false, NULL, NULL);
}

static void ggmlr_compute_flash_attn_ext(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct fa a = ggmlr_fa_of(dst);
    if (ggmlr_fa_decode_fits(&a)) {  /* one or two query rows: no tiles (flash_attn_decode.c) */
        ggmlr_fa_decode(p, &a, dst);
        return;
    }
    struct fa_shared * sh = ggmlr_fa_shared_layout(p, &a, false);
    const struct fwd_scratch s = ggmlr_fa_fwd_layout(&a, p->wdata);
    ggmlr_fa_start_node(p, sh);
    ggmlr_fa_pack_all(p, &a, sh, false, s.tmp);
    /* the row statistics, for a backward that does not run the forward again */
    const struct ggml_tensor * stats = ggmlr_flash_attn_srcs_decode(dst).stats;
    float * st = stats ? stats->data : NULL;
    const int64_t rows = a.B * a.H * a.N;
    int64_t task;
    while (next_task(&sh->counter[1], n_query_tasks(&a), &task)) {
        const struct query_block q = query_block(&a, task);
        const int64_t row0 = (q.b * a.H + q.h) * a.N + q.n0;
        ggmlr_fa_forward_block(&a, sh, &s, q.b, q.h, q.n0, q.nr, st ? st + row0 : NULL, st ? st + rows + row0 : NULL);
        for (int64_t r = 0; r < q.nr; r++) memcpy(ggmlr_elem_ptr(dst, 0, q.h, q.n0 + r, q.b), s.o + r * a.DVp, (size_t) a.DV * sizeof(float));
    }
}

GGMLR_KERNEL(flash_attn_ext, ggmlr_compute_flash_attn_ext, ggmlr_flash_attn_ext_work_size, ggmlr_flash_attn_ext_shared_size);

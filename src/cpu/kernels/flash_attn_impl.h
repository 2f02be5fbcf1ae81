/* flash_attn_impl.h -- what fused attention's forward (flash_attn.c) and
 * backward (flash_attn_back.c) share: the node's shape and layout (struct
 * fa), the K/V tiles and mask classes packed once per node in shared scratch
 * (struct fa_shared), the GEMM wrapper over query blocks, and the forward
 * over one block of query rows, which the backward runs as its phase 1 when
 * it has no saved forward. The maths is in flash_attn.c's opening comment. */
#ifndef GGMLR_FLASH_ATTN_IMPL_H
#define GGMLR_FLASH_ATTN_IMPL_H

#include "cpu/kernels/kernels.h"

#include <stdatomic.h>

#define TR GGMLR_TILE_R
#define QB_MAX (8 * TR)      /* query rows per block, at most (struct fa: QB) */
#define KEYS_PER_TILE 64     /* keys per K/V tile (rounded up to whole micro-tiles): the
                              * softmax bookkeeping of a row is paid once per tile */

struct fa {
    const struct ggml_tensor * q, * k, * v, * mask, * d;
    const struct ggml_tensor * sinks;  /* FLASH_ATTN_EXT: NULL or one logit per query head */
    int64_t DK, DV, N, M, H, Hkv, B, group;
    int64_t DKp, DVp;        /* feature dims padded to whole half tiles (TC / 2 columns) */
    int64_t TC;              /* columns of a GEMM micro-tile (vec->tile_c) */
    int64_t KB;              /* keys per tile: a multiple of TC */
    int64_t QB;              /* query rows per block: a multiple of TR, <= QB_MAX */
    bool k_in_place, v_in_place; /* K / V rows read where they lie instead of packed row-major copies */
    bool q_in_place, d_in_place; /* the same for query rows and their output gradients */
    float scale, max_bias, softcap;
    bool bf16;               /* GGML_PREC_BF16 where the CPU multiplies bf16: the products in flash_attn_bf16.c */
    const struct ggmlr_vec_ops * vec;
};

static inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

static inline int64_t n_key_tiles(const struct fa * a) { return (a->M + a->KB - 1) / a->KB; }

/* Threads take tasks from a shared counter; each task's result is independent
 * of which thread runs it. */
static inline bool next_task(atomic_long * counter, int64_t n, int64_t * task) {
    *task = atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
    return *task < n;
}

/* A block of query rows as a GEMM operand: row r (< the block's rows) at
 * base + r * ld; zero row: DKp or DVp zeros, for the rows past the block that
 * a micro-tile of TR rows still reads. */
struct row_block { const float * base; int64_t ld; const float * zero; };

/* the TR row pointers of rows [r0, r0 + TR) of a block of nr rows */
static inline void tile_row_ptrs(const struct row_block * rb, int64_t r0, int64_t nr, const float ** rows) {
    for (int r = 0; r < TR; r++) rows[r] = r0 + r < nr ? rb->base + (r0 + r) * rb->ld : rb->zero;
}

/* A mask block (QB query rows x KB keys of one mask plane) is classified once
 * per node: all -Inf (skip it), all zero (no mask to add) or mixed. Causal
 * masks are mixed only along the diagonal. A mixed block also records how
 * many of its keys are live per group of TR rows (a micro-tile's rows): past
 * the last key that some row of a group attends, every row of
 * the group is -Inf, P = dS = 0 exactly, and the group's products stop there.
 * On a causal diagonal the groups' limits step down with the diagonal, so
 * about half of the triangle above it is skipped. */
#define GROUPS (QB_MAX / TR)
enum { BLOCK_MASKED, BLOCK_ZERO, BLOCK_MIXED };
struct block_info { uint8_t cls, group_live[GROUPS]; };  /* group_live <= KB */
_Static_assert(2 * KEYS_PER_TILE <= 192, "live counts (<= KB: at most 2 KEYS_PER_TILE rounded up to a 64-column micro-tile) fit in a byte");

/* The columns of S that each group of rows computes (cols[g]: its live keys
 * in whole half micro-tiles); returns the block's live keys, the most of any
 * group's. */
static inline int64_t group_columns(const struct fa * a, const struct block_info * bi, int64_t cols[GROUPS]) {
    int64_t live = 0;
    for (int g = 0; g < GROUPS; g++) {
        cols[g] = round_up(bi->group_live[g], a->TC / 2);
        if (bi->group_live[g] > live) live = bi->group_live[g];
    }
    return live;
}

/* What a tile of keys adds to the scores of a block of query rows. */
enum { TILE_EMPTY, TILE_PLAIN, TILE_MASKED };

/* ---- K/V packed once per node, in shared scratch ----
 * Tile (b, hk, kb) covers keys [kb*KB, kb*KB + KB) of kv head hk, batch b:
 *   kt [DK][KB]   K transposed (for S = Q K^T)
 *   vp [KB][DVp]  V row-major  (for O += P V)
 *   kp [KB][DKp]  K row-major  (backward: dQ += dS K)
 *   vt [DV][KB]   V transposed (backward: dP = dO V^T)
 * Keys past M are zero. Packing once costs O(M D); every query block reuses it.
 * vp and kp are skipped when V's / K's own rows will do (rows_in_place): the
 * products that read them run over the tile's nk keys only.
 * With bf16 the four slots hold bf16 tiles instead (always packed; layouts:
 * flash_attn_bf16.c). */

struct fa_shared {
    atomic_long counter[3];
    struct block_info * blocks;    /* [mb][mh][query blocks][key tiles], when there is a mask */
    float * kt, * vp, * kp, * vt;  /* packed tiles (kp, vt: backward only) */
    float * mx, * lsum, * D, * dq; /* backward only: per-row statistics, dQ partials */
};

static inline int64_t n_query_blocks(const struct fa * a) { return (a->N + a->QB - 1) / a->QB; }

/* Query task t: rows [n0, n0+nr) of head h, batch b (a block of QB rows). */
struct query_block { int64_t b, h, n0, nr; };

static inline int64_t n_query_tasks(const struct fa * a) { return n_query_blocks(a) * a->H * a->B; }

static inline struct query_block query_block(const struct fa * a, int64_t t) {
    const int64_t nqb = n_query_blocks(a), n0 = (t % nqb) * a->QB;
    return (struct query_block) {t / (nqb * a->H), (t / nqb) % a->H, n0, a->N - n0 < a->QB ? a->N - n0 : a->QB};
}

static inline int64_t tile_index(const struct fa * a, int64_t b, int64_t hk, int64_t kb) { return (b * a->Hkv + hk) * n_key_tiles(a) + kb; }

/* per thread; zero: a zero row; tmp: 2 * max(DKp, DVp) floats, for converting rows;
 * with bf16: the query rows and one tile's P rounded (q16 [QB][DKp], p16 [QB][KB]) */
struct fwd_scratch { float * q, * s, * mt, * o, * mx, * l, * zero, * tmp; uint16_t * q16, * p16; };

/* GCC takes a function that only prefetches for one without side effects and
 * deletes the calls; noipa keeps them. */
#if defined(__GNUC__) && !defined(__clang__)
#define KEEP_CALLS __attribute__((noipa))
#else
#define KEEP_CALLS
#endif

/* ---- defined in flash_attn.c ---- */

/* the node's shape, layout, tile sizes and parameters */
struct fa ggmlr_fa_of(const struct ggml_tensor * dst);

/* out[r] += x's TR rows times b, over a width of whole and half micro-tiles */
void ggmlr_fa_acc_rows(const struct fa * a, int64_t K, const float * x, int64_t xrs, int64_t xks, const float * b, int64_t ldb,
                       float * const * out, int64_t width);

/* a block of query rows as a GEMM operand, read in place or converted */
struct row_block ggmlr_fa_query_rows(const struct ggml_tensor * t, bool in_place, int dim, int64_t b, int64_t h, int64_t n0, int64_t nr,
                                     int64_t dimp, float * buf, const float * zero, float * tmp);

/* masks: a tile's mask rows and kind (TILE_*), a block's class and live keys, prefetches */
int ggmlr_fa_mask_tile(const struct fa * a, uint8_t cls, int64_t b, int64_t h, int64_t n0, int64_t nr, int64_t m0, int64_t nk,
                       float slope, float * mt);
struct block_info ggmlr_fa_block_at(const struct fa * a, const struct fa_shared * sh, int64_t b, int64_t h, int64_t qb, int64_t kb,
                                    int64_t nk);
void ggmlr_fa_prefetch_bytes(const void * p, int64_t bytes);
void ggmlr_fa_prefetch_mask_tile(const struct fa * a, const struct fa_shared * sh, int64_t b, int64_t h, int64_t qb, int64_t kb);

/* shared scratch: the backward's key chunks, its bytes and layout, the packed
 * tiles (phase 0 of both ops, ending with a barrier), the task counters */
int64_t ggmlr_fa_n_chunks(const struct fa * a);
size_t ggmlr_fa_shared_bytes(const struct fa * a, bool backward, struct fa_shared * sh, void * base);
struct fa_shared * ggmlr_fa_shared_layout(const struct ggmlr_compute_params * p, const struct fa * a, bool backward);
const float * ggmlr_fa_tile_rows(const struct fa * a, const struct ggml_tensor * t, bool in_place, const float * packed, int64_t dimp,
                                 int64_t b, int64_t hk, int64_t kb, int64_t * ld);
void ggmlr_fa_pack_all(const struct ggmlr_compute_params * p, const struct fa * a, struct fa_shared * sh, bool backward, float * tmp);
void ggmlr_fa_start_node(const struct ggmlr_compute_params * p, struct fa_shared * sh);

/* the forward over one block of query rows, in per-thread scratch (row_floats:
 * the offset of fwd_scratch.tmp's second row) */
size_t ggmlr_fa_fwd_floats(const struct fa * a);
struct fwd_scratch ggmlr_fa_fwd_layout(const struct fa * a, float * w);
int64_t ggmlr_fa_row_floats(const struct fa * a);
void ggmlr_fa_forward_block(const struct fa * a, const struct fa_shared * sh, const struct fwd_scratch * s,
                            int64_t b, int64_t h, int64_t n0, int64_t nr, float * mx, float * lsum);

/* the forward of few query rows (flash_attn_decode.c): no packing; per-thread
 * scratch of decode_floats, shared: struct fa_shared only. A task is query row
 * n of the G <= DECODE_HEADS query heads h0.. of kv head hk; run: its outputs
 * at o (rows of DVp, in the scratch w), each head's max and log-sum. */
#define DECODE_MAX_ROWS 2
#define DECODE_HEADS 8
struct fa_decode_task { int64_t b, hk, n, h0, G; float * o; };
bool ggmlr_fa_decode_fits(const struct fa * a);
size_t ggmlr_fa_decode_floats(const struct fa * a);
int64_t ggmlr_fa_decode_n_tasks(const struct fa * a);
struct fa_decode_task ggmlr_fa_decode_run(const struct fa * a, int64_t task, float * w, float * mx, float * lsum);
void ggmlr_fa_decode(const struct ggmlr_compute_params * p, const struct fa * a, struct ggml_tensor * dst);

#endif

/* flash_attn_bf16.h -- fused attention's products at GGML_PREC_BF16
 * (flash_attn_bf16.c; struct fa's bf16 is set): the packing of the K/V tiles
 * and of a block of query rows into bf16, and the products that
 * flash_attn.c's forward and flash_attn_back.c's backward call in place of
 * their F32 micro-kernels. Column counts (ncols) are whole multiples of 32
 * keys: past a tile's live keys the mask is -Inf, so P = dS = 0 there. */
#ifndef GGMLR_FLASH_ATTN_BF16_H
#define GGMLR_FLASH_ATTN_BF16_H

#include "cpu/kernels/flash_attn_impl.h"

/* a block of query rows rounded to bf16 (backward): rows of q and dO for S
 * and dP, and transposed (qt [DKp][QB], dot [DVp][QB]) for dK^T and dV^T */
struct bf16_query { uint16_t * q, * dO, * qt, * dot; };
/* one tile's scores and gradients: s, dp (F32, rows of KB) and the rounded
 * operands P, dS as vnni pairs of rows ([QB/2][KB][2]) and dS as rows [QB][KB] */
struct bf16_tile { float * s, * dp; uint16_t * p_pairs, * ds_pairs, * ds16; };

/* u16 of per-thread scratch: the backward's query block and tile */
static inline int64_t ggmlr_fa_bf16_bwd_u16(const struct fa * a) { return 3 * a->QB * a->KB + 2 * a->QB * (a->DKp + a->DVp); }

/* key tile kb of kv head hk, batch b into the bf16 slots of sh (kt, vp; backward: kp, vt); tmp: two rows */
void ggmlr_fa_bf16_pack_tile(const struct fa * a, struct fa_shared * sh, bool backward, int64_t b, int64_t hk, int64_t kb, float * tmp);
/* rows [0, nr) of rb rounded into out (rows of dimp), zero rows up to a whole 8 */
void ggmlr_fa_bf16_rows(const struct row_block * rb, int64_t nr, int64_t dim, int64_t dimp, uint16_t * out);
void ggmlr_fa_bf16_query_block(const struct fa * a, const struct row_block * q, const struct row_block * dO, int64_t nr,
                               const struct bf16_query * bq);

/* forward: s = scale Q K^T of tile t (rows r < nr of KB, ncols keys), and
 * with tile_max each row's max after adding mask (NULL: none) */
void ggmlr_fa_bf16_scores(const struct fa * a, const struct fa_shared * sh, int64_t t, const uint16_t * q16, int64_t nr, int64_t ncols,
                          float * s, const float * mask, float * tile_max);
/* forward: o (rows of DVp) += P V of tile t, P rows r < nr of p (ncols keys), rounded into p16 (rows of KB) */
void ggmlr_fa_bf16_pv(const struct fa * a, const struct fa_shared * sh, int64_t t, const float * p, int64_t nr, int64_t ncols,
                      uint16_t * p16, float * o);
/* backward of tile t against a query block of nr rows (statistics mx, lsum,
 * D; mask mt or NULL): dk, dv (the tile's accumulators, transposed: [DKp][KB],
 * [DVp][KB]) and dq (the block's rows of this chunk's partial sums) += their products */
void ggmlr_fa_bf16_backward_tile(const struct fa * a, const struct fa_shared * sh, const struct bf16_query * bq, const struct bf16_tile * bt,
                                 int64_t t, int64_t nr, int64_t ncols, const float * mx, const float * lsum, const float * D,
                                 const float * mt, float * dk, float * dv, float * dq);

#endif

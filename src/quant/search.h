/* search.h -- scale searches shared by the block families (search.c). */
#ifndef GGMLR_QUANT_SEARCH_H
#define GGMLR_QUANT_SEARCH_H

#include "quant/quant.h"

#define GROUP_MAX_EPS 1e-15f   /* a (sub-)block below this magnitude is all zero */

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static inline int imin_(int a, int b) { return a < b ? a : b; }

/* Symmetric: L = q + nmax, q in [-nmax, nmax); returns the scale. qw: the
 * weights (NULL: x^2). */
float ggmlr_make_qx_quants(int n, int nmax, const float * x, int8_t * L, const float * qw);
/* Q3_K's symmetric search with coordinate descent (weights x^2; the last
 * argument is unused, for the shape of ggmlr_make_qx_quants). */
float ggmlr_make_q3_quants(int n, int nmax, const float * x, int8_t * L, const float * unused);
/* Affine: L in [0, nmax], x ~ scale*L - *the_min; weights NULL: x^2. */
float ggmlr_make_qkx_quants(int n, int nmax, const float * x, const float * weights, uint8_t * L, float * the_min,
                            uint8_t * Laux, float rmin, float rdelta, int nstep, bool use_mad);

/* Non-negative x onto 0..nmax with weights qw (not NULL); returns the scale. */
float ggmlr_make_qp_quants(int n, int nmax, const float * x, uint8_t * L, const float * qw);

#endif

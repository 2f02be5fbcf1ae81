/* opt_dist.h -- the data-parallel hook of an optimization context (not installed).
 *
 * The training API (opt.c, opt_eval.c) knows nothing of MPI: a transport
 * (src/mpi/opt_mpi.c) attaches one reduction here. With a hook attached, a
 * context of rank `rank` among `size` behaves as one context whose batch is
 * the concatenation of every rank's batch (rank r holds rows [r*n, (r+1)*n)
 * of a global batch of size*n):
 *   - ggml_opt_epoch reads local batch ib*size + rank for global batch ib;
 *   - after each evaluation the loss becomes that of the global batch, the
 *     predictions those of all ranks in rank order, ncorrect the total;
 *   - before each optimizer step the gradient accumulators are summed over
 *     the ranks (and scaled by 1/size for a per-datapoint loss), so the norm,
 *     the clipping, the NaN/Inf check and the step agree on every rank. */
#ifndef GGMLR_OPT_DIST_H
#define GGMLR_OPT_DIST_H

#include "ggml-opt.h"

struct ggmlr_opt_dist {
    int rank, size;
    /* Sum the n tensors (F32, contiguous) element-wise over all ranks and
     * multiply the sums by scale, in place; also sum extra[0..n_extra) in
     * place. Every rank gets the same values. */
    enum ggml_status (*allreduce)(void * ud, struct ggml_tensor * const * ts, int n, float scale, float * extra, int n_extra);
    void (*free_ud)(void * ud);  /* called by ggml_opt_free and when the hook is replaced */
    void * ud;
};

/* Attach (a copy of) d, or detach with d == NULL. */
enum ggml_status ggmlr_opt_set_dist(ggml_opt_context_t oc, const struct ggmlr_opt_dist * d);

/* The optimizer state a transport broadcasts when it attaches: every tensor
 * whose values must agree across ranks (parameters, then AdamW moments), and
 * the step counter. ts has room for 3 * ggmlr_opt_n_params(oc) entries. */
int   ggmlr_opt_n_params(ggml_opt_context_t oc);
int   ggmlr_opt_state_tensors(ggml_opt_context_t oc, struct ggml_tensor ** ts);
int64_t * ggmlr_opt_iter(ggml_opt_context_t oc);
/* A hash of everything that must be the same on every rank (shapes and types
 * of the inputs, outputs and parameters, loss, optimizer, build type, opt_period). */
uint64_t ggmlr_opt_config_hash(ggml_opt_context_t oc);

#endif

/* opt_internal.h -- the objects of the training API (ggml-opt.h) shared by
 * its files (not installed): opt_dataset.c, opt.c and opt_eval.c each work
 * on datasets and optimization contexts, so their layouts live here. */
#ifndef GGMLR_OPT_INTERNAL_H
#define GGMLR_OPT_INTERNAL_H

#include "core/internal.h"

#include "ggml-opt.h"
#include "opt/opt_dist.h"

struct ggml_opt_dataset {
    struct ggml_context * ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor *  data;    /* [ne_datapoint, ndata] */
    struct ggml_tensor *  labels;  /* [ne_label, ndata] or NULL */
    int64_t ndata;
    int64_t ndata_shard;
    size_t  nbs_data;    /* bytes of one shard of data */
    size_t  nbs_labels;  /* bytes of one shard of labels */
    int64_t   nshards;
    int64_t * permutation;  /* shard order; batches read shards in this order */
};

struct ggml_opt_context {
    ggml_backend_sched_t  backend_sched;
    struct ggml_context * ctx_compute;  /* the user's forward tensors (no_alloc) */
    struct ggml_context * ctx_static;   /* tensors that keep their values; buf_static */
    struct ggml_context * ctx_graph;    /* the graphs and the backward tensors (no_alloc) */
    ggml_backend_buffer_t buf_static;

    struct ggml_tensor * inputs;
    struct ggml_tensor * outputs;
    struct ggml_tensor * labels;
    struct ggml_tensor * loss;
    struct ggml_tensor * pred;      /* I32 [ndata_batch], filled on the host */
    struct ggml_tensor * ncorrect;  /* I32 [1], filled on the host */
    /* the steps' parameter vectors, [7] or [2], one per parameter group
     * (group 0: the parameters of no group, factors 1) */
    int32_t               n_groups;
    struct ggml_tensor ** group_pars;
    float *               group_lr_scale;
    float *               group_wd_scale;
    int32_t *             param_group;  /* by parameter */

    struct ggml_cgraph * gf;
    struct ggml_cgraph * gb_grad;
    struct ggml_cgraph * g_step;
    struct ggml_cgraph * allocated_graph;  /* the graph the scheduler's memory is laid out for */
    struct ggml_cgraph * next_graph;       /* chosen by ggml_opt_alloc, NULL when none is */
    bool                 step_after_next;  /* the next eval ends an accumulation period */

    int                   n_params;
    struct ggml_tensor ** params;
    struct ggml_tensor ** grad_accs;  /* by parameter */
    struct ggml_tensor ** grad_m;     /* AdamW moments by parameter */
    struct ggml_tensor ** grad_v;

    enum ggml_opt_loss_type      loss_type;
    enum ggml_opt_build_type     build_type;
    enum ggml_opt_optimizer_type optimizer;
    bool                         loss_per_datapoint;
    int32_t opt_period;
    int32_t opt_i;             /* micro-batches done in the current period */
    bool    period_nonfinite;  /* a loss of the current period was NaN/Inf */
    int64_t iter;              /* optimizer step count t, from 1 */

    ggml_opt_get_optimizer_params get_opt_pars;
    void *                        get_opt_pars_ud;
    bool                          apply_nonfinite;
    uint64_t                      rng;
    struct ggml_opt_lr_schedule   lr_schedule;
    bool                          user_loss;       /* the loss is the caller's (ggml_opt_params.loss) */
    double                        last_grad_norm;  /* before clipping, at the last step; NaN before the first */

    ggml_opt_batch_callback batch_callback;
    void *                  batch_callback_ud;
    bool                    stopped;  /* the batch callback asked to stop */

    /* upstream's non-static mode (ggml_opt_init without ctx_compute, inputs
     * and outputs): the parameters of ggml_opt_init, built into a full
     * context by each ggml_opt_prepare_alloc (opt.c) */
    bool                    static_graphs;
    struct ggml_opt_params  deferred;

    /* data parallelism (opt_dist.h); dist.size == 1 without it */
    struct ggmlr_opt_dist dist;
    float *   dist_extra;  /* the reduced scalars of one evaluation: loss, ncorrect, predictions of all ranks */
    int32_t * pred_all;    /* [dist.size * ndata_batch] predictions of the global batch */
};

#endif

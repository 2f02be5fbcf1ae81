/*
 * ggml-opt.h -- training: datasets, optimization contexts (loss, gradients,
 * AdamW / SGD steps, gradient accumulation), results, epochs and a fit loop.
 * Names, arguments and meaning follow upstream ggml's ggml-opt.h.
 *
 * Differences from upstream (all deliberate):
 *  - Errors are values. Functions that upstream declares void and that can
 *    fail (ggml_opt_dataset_shuffle, _get_batch, ggml_opt_alloc, ggml_opt_eval,
 *    ggml_opt_epoch, ggml_opt_fit) return an enum ggml_status; constructors
 *    return NULL. The message is in ggml_last_error(). Nothing aborts: a bad
 *    dataset shape, a wrong type, a NULL handle or out-of-range optimizer
 *    parameters are refused.
 *  - Non-finite values: after each backward pass the loss and the gradients
 *    are checked. A NaN/Inf loss or gradient makes ggml_opt_eval return
 *    GGML_STATUS_ABORTED with a message, counts in ggml_opt_result_nonfinite,
 *    and the optimizer step of that accumulation period is skipped (the
 *    parameters and the AdamW moments stay as they were, the step counter
 *    does not advance) unless ggml_opt_params.apply_nonfinite is true.
 *    ggml_opt_epoch and ggml_opt_fit carry on after such a batch and return
 *    GGML_STATUS_ABORTED at the end.
 *  - Gradient clipping by global norm: ggml_opt_optimizer_params.clip_norm
 *    (0 = off, the default). Before each optimizer step the accumulated
 *    gradients g of all parameters are scaled by clip_norm / (||g|| + 1e-6)
 *    when ||g|| > clip_norm (torch's clip_grad_norm_),
 *    ||g|| = sqrt(sum over all parameters of sum g^2) in double.
 *  - Parameter groups, learning-rate schedules, a loss of the caller's own
 *    and a per-batch callback that can stop: see ggml_opt_params' extensions.
 *  - Static graphs (ggml_opt_params with ctx_compute, inputs and outputs),
 *    or upstream's non-static mode (all three NULL; then per batch
 *    ggml_opt_prepare_alloc, ggml_opt_alloc, ggml_opt_eval). In that mode
 *    each ggml_opt_prepare_alloc builds the graphs, loss and optimizer steps
 *    for the batch's tensors (from outputs; gf must hold outputs) and carries
 *    the optimizer state over; the parameters must be the same tensors'
 *    shapes each time; a batch's ctx_compute may be freed only after the next
 *    ggml_opt_prepare_alloc (or ggml_opt_free), which takes the scheduler's
 *    memory back from its tensors. No loss or labels of the caller's, no
 *    ggml_opt_epoch and no data parallelism in that mode.
 *  - The gradients, the optimizer steps and the three graphs live in a context
 *    of the optimization context's own; ctx_compute only holds the forward
 *    tensors and is allocated by the scheduler.
 *  - ggml_opt_pred is I32 [ndata_batch] and ggml_opt_ncorrect I32 [1] (there
 *    is no I64 type); both are filled on the host from the argmax of outputs
 *    and labels after each evaluation (cross-entropy loss only, as upstream).
 *  - The shuffle RNG is seeded from ggml_opt_params.seed (same seed, same
 *    order on every platform).
 *  - ggml_opt_dataset_get_batch_host refuses bad arguments with a message
 *    (nothing copied) where upstream asserts.
 */
#ifndef GGML_OPT_H
#define GGML_OPT_H

#include "ggml.h"
#include "ggml-backend.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ggml_opt_dataset;
struct ggml_opt_context;
struct ggml_opt_result;

typedef struct ggml_opt_dataset * ggml_opt_dataset_t;
typedef struct ggml_opt_context * ggml_opt_context_t;
typedef struct ggml_opt_result  * ggml_opt_result_t;

/* ====== Loss ====== */

/* The quantity the optimizer minimizes. With a batch of n datapoints
 * (outputs [ne0, n]) and opt_period micro-batches per step:
 *   MEAN               sum(outputs) / (ne0*n*opt_period)
 *   SUM                sum(outputs)
 *   CROSS_ENTROPY      ggml_cross_entropy_loss(outputs, labels) / opt_period
 *   MEAN_SQUARED_ERROR sum((outputs - labels)^2) / (ne0*n*opt_period)  */
enum ggml_opt_loss_type {
    GGML_OPT_LOSS_TYPE_MEAN,
    GGML_OPT_LOSS_TYPE_SUM,
    GGML_OPT_LOSS_TYPE_CROSS_ENTROPY,
    GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR,
};

/* ====== Dataset ====== */

/* data [ne_datapoint, ndata] of type_data, labels [ne_label, ndata] of
 * type_label (none when ne_label == 0), in CPU memory. Shards of ndata_shard
 * datapoints are the unit of shuffling and copying. NULL + message on bad input. */
GGML_API ggml_opt_dataset_t ggml_opt_dataset_init(
        enum ggml_type type_data,
        enum ggml_type type_label,
        int64_t        ne_datapoint,
        int64_t        ne_label,
        int64_t        ndata,
        int64_t        ndata_shard);
GGML_API void ggml_opt_dataset_free(ggml_opt_dataset_t dataset);

GGML_API int64_t              ggml_opt_dataset_ndata (ggml_opt_dataset_t dataset);
GGML_API struct ggml_tensor * ggml_opt_dataset_data  (ggml_opt_dataset_t dataset); /* [ne_datapoint, ndata] */
GGML_API struct ggml_tensor * ggml_opt_dataset_labels(ggml_opt_dataset_t dataset); /* [ne_label, ndata] or NULL */

/* Shuffle the shards of the first idata datapoints (all when idata < 0) with
 * opt_ctx's RNG; idata must be a multiple of ndata_shard. */
GGML_API enum ggml_status ggml_opt_dataset_shuffle(ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset, int64_t idata);

/* Copy batch ibatch (in shuffled order) into data_batch [ne_datapoint, n] and
 * labels_batch [ne_label, n] (NULL exactly when the dataset has no labels). */
GGML_API enum ggml_status ggml_opt_dataset_get_batch(
        ggml_opt_dataset_t   dataset,
        struct ggml_tensor * data_batch,
        struct ggml_tensor * labels_batch,
        int64_t              ibatch);
/* The same into host memory: nb_data_batch bytes of data (a whole number n
 * of shards) and, exactly when the dataset has labels, n shards of labels. */
GGML_API void ggml_opt_dataset_get_batch_host(
        ggml_opt_dataset_t   dataset,
        void               * data_batch,
        size_t               nb_data_batch,
        void               * labels_batch,
        int64_t              ibatch);

/* ====== Model / Context ====== */

enum ggml_opt_build_type {
    GGML_OPT_BUILD_TYPE_FORWARD = 10,
    GGML_OPT_BUILD_TYPE_GRAD    = 20,
    GGML_OPT_BUILD_TYPE_OPT     = 30,
};

enum ggml_opt_optimizer_type {
    GGML_OPT_OPTIMIZER_TYPE_ADAMW,
    GGML_OPT_OPTIMIZER_TYPE_SGD,

    GGML_OPT_OPTIMIZER_TYPE_COUNT
};

struct ggml_opt_optimizer_params {
    struct {
        float alpha; /* learning rate, > 0 */
        float beta1; /* first moment decay, [0, 1) (upstream allows 1) */
        float beta2; /* second moment decay, [0, 1) */
        float eps;   /* added to sqrt(v), >= 0 */
        float wd;    /* decoupled weight decay, [0, 1]; 0 = off */
    } adamw;
    struct {
        float alpha; /* learning rate, > 0 */
        float wd;    /* decoupled weight decay, [0, 1] */
    } sgd;
    float clip_norm; /* extension: clip the global gradient norm to this; 0 = off */
};

/* Called before each optimizer step; userdata is ggml_opt_params.get_opt_pars_ud. */
typedef struct ggml_opt_optimizer_params (*ggml_opt_get_optimizer_params)(void * userdata);

/* AdamW alpha 1e-3, beta1 0.9, beta2 0.999, eps 1e-8, wd 0; SGD alpha 1e-3, wd 0; no clipping. */
GGML_API struct ggml_opt_optimizer_params ggml_opt_get_default_optimizer_params(void * userdata);
/* *(struct ggml_opt_optimizer_params *) userdata (the defaults when userdata is NULL). */
GGML_API struct ggml_opt_optimizer_params ggml_opt_get_constant_optimizer_params(void * userdata);

/* extension: parameters whose learning rate and weight decay are scaled:
 * alpha * lr_scale and wd * wd_scale (wd_scale 0: no decay). */
struct ggml_opt_param_group {
    struct ggml_tensor * const * params;
    int32_t                      n_params;
    float                        lr_scale;
    float                        wd_scale;
};

/* extension: the learning rate of optimizer step `step` (from 0) as a
 * function of alpha, the peak that get_opt_pars gives:
 *   CONSTANT       alpha
 *   WARMUP_COSINE  alpha (step+1)/(warmup+1) for step < warmup, then a cosine
 *                  from alpha at warmup to min_lr at decay_steps, then min_lr
 *                  (nanoGPT's get_lr) */
enum ggml_opt_lr_schedule_type {
    GGML_OPT_LR_SCHEDULE_CONSTANT,
    GGML_OPT_LR_SCHEDULE_WARMUP_COSINE,
};

struct ggml_opt_lr_schedule {
    enum ggml_opt_lr_schedule_type type;
    int64_t warmup;      /* steps of linear warmup */
    int64_t decay_steps; /* the step at which the cosine reaches min_lr */
    float   min_lr;
};

GGML_API float ggml_opt_lr_schedule_lr(const struct ggml_opt_lr_schedule * schedule, float alpha, int64_t step);

/* extension: called after each batch of ggml_opt_epoch with the result so
 * far and the batches done in this part; false stops the training. */
typedef bool (*ggml_opt_batch_callback)(void * userdata, bool train, ggml_opt_context_t opt_ctx, ggml_opt_result_t result,
                                        int64_t ibatch, int64_t ibatch_max);

struct ggml_opt_params {
    ggml_backend_sched_t backend_sched;

    /* the model: ctx_compute (no_alloc) holds the tensors between inputs
     * [ne_datapoint, ndata_batch] and outputs [ne_label, ndata_batch];
     * inputs and the parameters (ggml_set_param) must have memory */
    struct ggml_context * ctx_compute;
    struct ggml_tensor  * inputs;
    struct ggml_tensor  * outputs;

    enum ggml_opt_loss_type  loss_type;
    enum ggml_opt_build_type build_type;

    int32_t opt_period; /* micro-batches whose gradients are summed into one optimizer step */

    ggml_opt_get_optimizer_params get_opt_pars;
    void *                        get_opt_pars_ud;

    enum ggml_opt_optimizer_type optimizer;

    /* extensions */
    bool     apply_nonfinite; /* apply an optimizer step even when the loss or a gradient is NaN/Inf */
    uint64_t seed;            /* seed of the shuffle RNG */

    /* A loss the caller built from outputs (F32, one element), used instead
     * of the one loss_type names; loss_type then only says whether it is a
     * mean over datapoints (anything but SUM) or a sum, which decides how
     * micro-batches and ranks combine. labels is the caller's label input
     * for it (optional, for ggml_opt_labels and ggml_opt_epoch's batches).
     * No predictions or accuracy are computed for such a loss. */
    struct ggml_tensor * loss;
    struct ggml_tensor * labels;

    /* Parameters with their own learning-rate and weight-decay factors (for
     * example no decay on norm gains); the others have factors 1. */
    const struct ggml_opt_param_group * param_groups;
    int32_t                             n_param_groups;

    struct ggml_opt_lr_schedule lr_schedule; /* on alpha; zero: constant */

    /* Called after every batch of ggml_opt_epoch (and so ggml_opt_fit);
     * returning false stops the training after that batch. */
    ggml_opt_batch_callback batch_callback;
    void *                  batch_callback_ud;
};

GGML_API struct ggml_opt_params ggml_opt_default_params(
        ggml_backend_sched_t    backend_sched,
        enum ggml_opt_loss_type loss_type);

/* Builds the forward, gradient and optimizer graphs; NULL + message on bad input. */
GGML_API ggml_opt_context_t ggml_opt_init(struct ggml_opt_params params);
GGML_API void ggml_opt_free(ggml_opt_context_t opt_ctx);

/* Zero the gradient accumulators; with optimizer, also the AdamW moments and the step count. */
GGML_API void ggml_opt_reset(ggml_opt_context_t opt_ctx, bool optimizer);

GGML_API bool ggml_opt_static_graphs(ggml_opt_context_t opt_ctx);

GGML_API struct ggml_tensor * ggml_opt_inputs(  ggml_opt_context_t opt_ctx);
GGML_API struct ggml_tensor * ggml_opt_outputs( ggml_opt_context_t opt_ctx);
GGML_API struct ggml_tensor * ggml_opt_labels(  ggml_opt_context_t opt_ctx); /* NULL for MEAN and SUM */
GGML_API struct ggml_tensor * ggml_opt_loss(    ggml_opt_context_t opt_ctx);
GGML_API struct ggml_tensor * ggml_opt_pred(    ggml_opt_context_t opt_ctx); /* cross-entropy only */
GGML_API struct ggml_tensor * ggml_opt_ncorrect(ggml_opt_context_t opt_ctx); /* cross-entropy only */

/* The gradient accumulator of a parameter (NULL for other tensors). */
GGML_API struct ggml_tensor * ggml_opt_grad_acc(ggml_opt_context_t opt_ctx, struct ggml_tensor * node);
/* extension: the AdamW moments of a parameter (NULL for other tensors or with SGD). */
GGML_API struct ggml_tensor * ggml_opt_grad_m(ggml_opt_context_t opt_ctx, struct ggml_tensor * node);
GGML_API struct ggml_tensor * ggml_opt_grad_v(ggml_opt_context_t opt_ctx, struct ggml_tensor * node);
/* extension: the optimizer steps done (the t of AdamW's bias corrections is
 * this + 1); set it when resuming with restored moments. */
GGML_API int64_t ggml_opt_get_steps(ggml_opt_context_t opt_ctx);
GGML_API void    ggml_opt_set_steps(ggml_opt_context_t opt_ctx, int64_t steps);
/* extension: the global gradient norm before clipping at the last optimizer step. */
GGML_API double  ggml_opt_last_grad_norm(ggml_opt_context_t opt_ctx);

GGML_API enum ggml_opt_optimizer_type ggml_opt_context_optimizer_type(ggml_opt_context_t opt_ctx);
GGML_API const char * ggml_opt_optimizer_name(enum ggml_opt_optimizer_type optimizer);

/* ====== Optimization Result ====== */

GGML_API ggml_opt_result_t ggml_opt_result_init(void);
GGML_API void ggml_opt_result_free(ggml_opt_result_t result);
GGML_API void ggml_opt_result_reset(ggml_opt_result_t result);

/* Uncertainties may be NULL. The loss is the mean over batches (the sum for
 * SUM); its uncertainty, as upstream, the standard error of that mean (for
 * SUM the standard deviation of the per-batch losses). */
GGML_API void ggml_opt_result_ndata(   ggml_opt_result_t result, int64_t * ndata);
GGML_API void ggml_opt_result_loss(    ggml_opt_result_t result, double  * loss,     double * unc);
GGML_API void ggml_opt_result_pred(    ggml_opt_result_t result, int32_t * pred);  /* ndata values */
GGML_API void ggml_opt_result_accuracy(ggml_opt_result_t result, double  * accuracy, double * unc);
/* extension: evaluations whose loss or gradients were not finite */
GGML_API void ggml_opt_result_nonfinite(ggml_opt_result_t result, int64_t * nonfinite);

/* ====== Computation ====== */

/* Non-static mode: the model of the next batch (see the top of this file). */
GGML_API void ggml_opt_prepare_alloc(
        ggml_opt_context_t    opt_ctx,
        struct ggml_context * ctx_compute,
        struct ggml_cgraph  * gf,
        struct ggml_tensor  * inputs,
        struct ggml_tensor  * outputs);

/* Choose the next graph: forward only, or forward + backward (+ the optimizer
 * step at the end of each opt_period). Call once before each ggml_opt_eval. */
GGML_API enum ggml_status ggml_opt_alloc(ggml_opt_context_t opt_ctx, bool backward);

/* Compute the graph chosen by ggml_opt_alloc and add to result (may be NULL).
 * GGML_STATUS_ABORTED: a loss or gradient was not finite (see the top of this file). */
GGML_API enum ggml_status ggml_opt_eval(ggml_opt_context_t opt_ctx, ggml_opt_result_t result);

/* ====== High-level functions ====== */

/* Called after each batch: train, the context, the dataset, the result so far,
 * batches done, batches in this part of the dataset, start time in microseconds. */
typedef void (*ggml_opt_epoch_callback)(
        bool               train,
        ggml_opt_context_t opt_ctx,
        ggml_opt_dataset_t dataset,
        ggml_opt_result_t  result,
        int64_t            ibatch,
        int64_t            ibatch_max,
        int64_t            t_start_us);

/* Train on the datapoints before idata_split (all when < 0), evaluate on the rest. */
GGML_API enum ggml_status ggml_opt_epoch(
        ggml_opt_context_t      opt_ctx,
        ggml_opt_dataset_t      dataset,
        ggml_opt_result_t       result_train,
        ggml_opt_result_t       result_eval,
        int64_t                 idata_split,
        ggml_opt_epoch_callback callback_train,
        ggml_opt_epoch_callback callback_eval);

/* Progress bar with loss and accuracy, written through the log callback (ggml_log_set; stderr by default). */
GGML_API void ggml_opt_epoch_callback_progress_bar(
        bool               train,
        ggml_opt_context_t opt_ctx,
        ggml_opt_dataset_t dataset,
        ggml_opt_result_t  result,
        int64_t            ibatch,
        int64_t            ibatch_max,
        int64_t            t_start_us);

/* Fit outputs(inputs) to dataset for nepoch epochs with optimizer steps of
 * nbatch_logical datapoints (a multiple of inputs->ne[1] that divides ndata);
 * the last val_split (in [0, 1)) of the dataset is used for validation only.
 * get_opt_pars receives a pointer to the current epoch (int64_t, from 1);
 * ggmlr: ggml_opt_get_constant_optimizer_params receives NULL instead (its
 * defaults: it would read a params struct from the epoch's 8 bytes). */
GGML_API enum ggml_status ggml_opt_fit(
        ggml_backend_sched_t          backend_sched,
        struct ggml_context         * ctx_compute,
        struct ggml_tensor          * inputs,
        struct ggml_tensor          * outputs,
        ggml_opt_dataset_t            dataset,
        enum ggml_opt_loss_type       loss_type,
        enum ggml_opt_optimizer_type  optimizer,
        ggml_opt_get_optimizer_params get_opt_pars,
        int64_t                       nepoch,
        int64_t                       nbatch_logical,
        float                         val_split,
        bool                          silent);

#ifdef __cplusplus
}
#endif

#endif /* GGML_OPT_H */

/* opt.c -- the training API of ggml-opt.h: datasets, optimization contexts,
 * results, epochs and the fit loop.
 *
 * An optimization context owns three graphs over the user's model:
 *   gf      forward: inputs -> outputs -> loss
 *   gb_grad forward + backward; each parameter's gradient is added into its
 *           accumulator (ctx_static), so opt_period micro-batches sum up
 *   g_step  the optimizer steps alone, reading the accumulators
 * The step is its own graph so that, between the backward pass and the step,
 * the host can check the loss and gradients for NaN/Inf and clip the global
 * gradient norm: one pass over the accumulators, the same order of work as
 * the step itself.
 *
 * Memory: the user's parameters and inputs have their own; labels, the loss,
 * predictions, accumulators, AdamW moments and the step nodes live in
 * ctx_static with one buffer (they must survive from one evaluation to the
 * next); the forward tensors of ctx_compute and the backward tensors get
 * memory from the scheduler for whichever graph runs. */
#include "internal.h"

#include "ggml-opt.h"
#include "opt_dist.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

/* wall-clock microseconds (C11 timespec_get: no POSIX needed) */
static int64_t time_us(void) {
    struct timespec ts;
    if (timespec_get(&ts, TIME_UTC) != TIME_UTC) return 0;
    return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ====== Dataset ====== */

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

ggml_opt_dataset_t ggml_opt_dataset_init(enum ggml_type type_data, enum ggml_type type_label, int64_t ne_datapoint,
                                         int64_t ne_label, int64_t ndata, int64_t ndata_shard) {
    if (ne_datapoint <= 0 || ne_label < 0 || ndata <= 0 || ndata_shard <= 0 || ndata % ndata_shard != 0) {
        ggmlr_set_error("ggml_opt_dataset_init: need ne_datapoint > 0, ne_label >= 0, ndata > 0 and ndata a multiple of "
                        "ndata_shard > 0 (got %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ")",
                        ne_datapoint, ne_label, ndata, ndata_shard);
        return NULL;
    }
    if (!ggmlr_type_is_supported(type_data) || (ne_label > 0 && !ggmlr_type_is_supported(type_label))) {
        ggmlr_set_error("ggml_opt_dataset_init: unsupported data or label type (%d, %d)", (int) type_data, (int) type_label);
        return NULL;
    }
    struct ggml_opt_dataset * ds = ggmlr_calloc(1, sizeof *ds);
    if (!ds) { ggmlr_set_error("ggml_opt_dataset_init: out of memory"); return NULL; }
    ds->ndata = ndata;
    ds->ndata_shard = ndata_shard;
    ds->nshards = ndata / ndata_shard;
    struct ggml_init_params ip = {2 * ggml_tensor_overhead(), NULL, true};
    ds->ctx = ggml_init(ip);
    ds->permutation = ggmlr_malloc((size_t) ds->nshards * sizeof *ds->permutation);
    if (!ds->ctx || !ds->permutation) goto fail;
    ds->data = ggml_new_tensor_2d(ds->ctx, type_data, ne_datapoint, ndata);
    if (!ds->data) goto fail;
    ggml_set_name(ds->data, "dataset data");
    ds->nbs_data = ds->data->nb[1] * (size_t) ndata_shard;
    if (ne_label > 0) {
        ds->labels = ggml_new_tensor_2d(ds->ctx, type_label, ne_label, ndata);
        if (!ds->labels) goto fail;
        ggml_set_name(ds->labels, "dataset labels");
        ds->nbs_labels = ds->labels->nb[1] * (size_t) ndata_shard;
    }
    ds->buf = ggml_backend_alloc_ctx_tensors_from_buft(ds->ctx, ggml_backend_cpu_buffer_type());
    if (!ds->buf) goto fail;
    for (int64_t i = 0; i < ds->nshards; i++) ds->permutation[i] = i;
    return ds;
fail:
    if (!ds->permutation) ggmlr_set_error("ggml_opt_dataset_init: out of memory");
    ggml_opt_dataset_free(ds);
    return NULL;
}

void ggml_opt_dataset_free(ggml_opt_dataset_t ds) {
    if (!ds) return;
    ggml_backend_buffer_free(ds->buf);
    ggml_free(ds->ctx);
    free(ds->permutation);
    free(ds);
}

int64_t ggml_opt_dataset_ndata(ggml_opt_dataset_t ds) { return ds ? ds->ndata : 0; }
struct ggml_tensor * ggml_opt_dataset_data(ggml_opt_dataset_t ds) { return ds ? ds->data : NULL; }
struct ggml_tensor * ggml_opt_dataset_labels(ggml_opt_dataset_t ds) { return ds ? ds->labels : NULL; }

enum ggml_status ggml_opt_dataset_get_batch(ggml_opt_dataset_t ds, struct ggml_tensor * data_batch, struct ggml_tensor * labels_batch, int64_t ibatch) {
    static const char * fn = "ggml_opt_dataset_get_batch";
    if (!ds || !data_batch) { ggmlr_set_error("%s: dataset or data_batch is NULL", fn); return GGML_STATUS_FAILED; }
    if ((labels_batch == NULL) != (ds->labels == NULL)) {
        ggmlr_set_error("%s: labels_batch must be given exactly when the dataset has labels", fn);
        return GGML_STATUS_FAILED;
    }
    if (data_batch->type != ds->data->type || (labels_batch && labels_batch->type != ds->labels->type)) {
        ggmlr_set_error("%s: batch types differ from the dataset's (%s, %s)", fn, ggml_type_name(ds->data->type),
                        ds->labels ? ggml_type_name(ds->labels->type) : "no labels");
        return GGML_STATUS_FAILED;
    }
    const size_t nb_batch = ggml_nbytes(data_batch);
    if (nb_batch == 0 || nb_batch % ds->nbs_data != 0) {
        ggmlr_set_error("%s: data_batch '%s' (%zu bytes) is not a whole number of shards of %zu bytes", fn, data_batch->name, nb_batch, ds->nbs_data);
        return GGML_STATUS_FAILED;
    }
    const int64_t shards_per_batch = (int64_t) (nb_batch / ds->nbs_data);
    if (labels_batch && ggml_nbytes(labels_batch) != (size_t) shards_per_batch * ds->nbs_labels) {
        ggmlr_set_error("%s: labels_batch '%s' has %zu bytes, the batch's labels are %zu", fn, labels_batch->name,
                        ggml_nbytes(labels_batch), (size_t) shards_per_batch * ds->nbs_labels);
        return GGML_STATUS_FAILED;
    }
    if (ibatch < 0 || ibatch >= ds->nshards / shards_per_batch) {
        ggmlr_set_error("%s: batch %" PRId64 " is out of range (the dataset has %" PRId64 " of this size)", fn, ibatch, ds->nshards / shards_per_batch);
        return GGML_STATUS_FAILED;
    }
    for (int64_t k = 0; k < shards_per_batch; k++) {
        const int64_t ishard = ds->permutation[ibatch * shards_per_batch + k];
        enum ggml_status st = ggml_backend_tensor_set_checked(data_batch, (const char *) ds->data->data + ishard * ds->nbs_data,
                                                              (size_t) k * ds->nbs_data, ds->nbs_data);
        if (st == GGML_STATUS_SUCCESS && labels_batch) {
            st = ggml_backend_tensor_set_checked(labels_batch, (const char *) ds->labels->data + ishard * ds->nbs_labels,
                                                 (size_t) k * ds->nbs_labels, ds->nbs_labels);
        }
        if (st != GGML_STATUS_SUCCESS) return st;
    }
    return GGML_STATUS_SUCCESS;
}

/* ====== Context ====== */

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
    struct ggml_tensor * opt_pars;  /* the step's parameter vector, [7] or [2] */

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

    /* data parallelism (opt_dist.h); dist.size == 1 without it */
    struct ggmlr_opt_dist dist;
    float *   dist_extra;  /* the reduced scalars of one evaluation: loss, ncorrect, predictions of all ranks */
    int32_t * pred_all;    /* [dist.size * ndata_batch] predictions of the global batch */
};

struct ggml_opt_optimizer_params ggml_opt_get_default_optimizer_params(void * userdata) {
    (void) userdata;
    struct ggml_opt_optimizer_params p;
    p.adamw.alpha = 0.001f;
    p.adamw.beta1 = 0.9f;
    p.adamw.beta2 = 0.999f;
    p.adamw.eps   = 1e-8f;
    p.adamw.wd    = 0.0f;
    p.sgd.alpha   = 1e-3f;
    p.sgd.wd      = 0.0f;
    p.clip_norm   = 0.0f;
    return p;
}

struct ggml_opt_optimizer_params ggml_opt_get_constant_optimizer_params(void * userdata) {
    return userdata ? *(const struct ggml_opt_optimizer_params *) userdata : ggml_opt_get_default_optimizer_params(NULL);
}

struct ggml_opt_params ggml_opt_default_params(ggml_backend_sched_t backend_sched, enum ggml_opt_loss_type loss_type) {
    struct ggml_opt_params p;
    memset(&p, 0, sizeof p);
    p.backend_sched   = backend_sched;
    p.loss_type       = loss_type;
    p.build_type      = GGML_OPT_BUILD_TYPE_OPT;
    p.opt_period      = 1;
    p.get_opt_pars    = ggml_opt_get_default_optimizer_params;
    p.get_opt_pars_ud = NULL;
    p.optimizer       = GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    p.apply_nonfinite = false;
    p.seed            = 0;
    return p;
}

const char * ggml_opt_optimizer_name(enum ggml_opt_optimizer_type o) {
    switch (o) {
        case GGML_OPT_OPTIMIZER_TYPE_ADAMW: return "adamw";
        case GGML_OPT_OPTIMIZER_TYPE_SGD:   return "sgd";
        default:                            return "undefined";
    }
}

/* Graph capacity: the scheduler's, at least upstream's default. */
static size_t graph_capacity(const struct ggml_opt_context * oc) {
    const size_t s = ggml_backend_sched_get_graph_size(oc->backend_sched);
    return s > GGML_DEFAULT_GRAPH_SIZE ? s : GGML_DEFAULT_GRAPH_SIZE;
}

static bool named(struct ggml_tensor * t, const char * prefix, const char * name) {
    if (!t) return false;
    char buf[2 * GGML_MAX_NAME];  /* ggml_set_name truncates */
    snprintf(buf, sizeof buf, "%s%s", prefix, name);
    ggml_set_name(t, buf);
    return true;
}

/* The loss of outputs (and labels) in ctx_static, scaled by 1/opt_period when
 * it is a mean so that the accumulated gradient is that of the logical batch. */
static bool build_loss(struct ggml_opt_context * oc) {
    struct ggml_context * cs = oc->ctx_static;
    struct ggml_tensor * out = oc->outputs;
    const float mean_scale = 1.0f / ((float) oc->opt_period * (float) ggml_nelements(out));
    struct ggml_tensor * loss = NULL;
    if (oc->loss_type == GGML_OPT_LOSS_TYPE_CROSS_ENTROPY || oc->loss_type == GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR) {
        oc->labels = ggml_new_tensor(cs, GGML_TYPE_F32, GGML_MAX_DIMS, out->ne);
        if (!named(oc->labels, "labels", "")) return false;
        ggml_set_input(oc->labels);
    }
    switch (oc->loss_type) {
        case GGML_OPT_LOSS_TYPE_MEAN:
            loss = ggml_scale(cs, ggml_sum(cs, out), mean_scale);
            break;
        case GGML_OPT_LOSS_TYPE_SUM:
            loss = ggml_sum(cs, out);
            break;
        case GGML_OPT_LOSS_TYPE_CROSS_ENTROPY:
            loss = ggml_cross_entropy_loss(cs, out, oc->labels);
            if (loss && oc->opt_period > 1) loss = ggml_scale(cs, loss, 1.0f / (float) oc->opt_period);
            break;
        case GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR:
            loss = ggml_scale(cs, ggml_sum(cs, ggml_sqr(cs, ggml_sub(cs, out, oc->labels))), mean_scale);
            break;
    }
    if (!named(loss, "loss", "")) return false;
    oc->loss_per_datapoint = oc->loss_type != GGML_OPT_LOSS_TYPE_SUM;
    ggml_set_output(loss);
    ggml_set_loss(loss);
    if (!(loss->flags & GGML_TENSOR_FLAG_LOSS)) return false;  /* ggml_set_loss said why */
    oc->loss = loss;
    if (oc->loss_type == GGML_OPT_LOSS_TYPE_CROSS_ENTROPY) {
        oc->pred = ggml_new_tensor_1d(cs, GGML_TYPE_I32, out->ne[1]);
        oc->ncorrect = ggml_new_tensor_1d(cs, GGML_TYPE_I32, 1);
        if (!named(oc->pred, "pred", "") || !named(oc->ncorrect, "ncorrect", "")) return false;
    }
    return true;
}

/* A graph of the model and (once built) its loss, in the same node order every time. */
static struct ggml_cgraph * forward_graph(struct ggml_opt_context * oc, bool grads) {
    struct ggml_cgraph * g = ggml_new_graph_custom(oc->ctx_graph, graph_capacity(oc), grads);
    if (!g || ggml_build_forward_expand_status(g, oc->outputs) != GGML_STATUS_SUCCESS) return NULL;
    if (oc->loss && ggml_build_forward_expand_status(g, oc->loss) != GGML_STATUS_SUCCESS) return NULL;
    return g;
}

static bool build_backward(struct ggml_opt_context * oc) {
    oc->gb_grad = forward_graph(oc, true);
    if (!oc->gb_grad) return false;
    const int n_nodes = ggml_graph_n_nodes(oc->gb_grad);
    struct ggml_tensor ** accs_by_node = ggmlr_calloc((size_t) n_nodes, sizeof *accs_by_node);
    if (!accs_by_node) { ggmlr_set_error("ggml_opt_init: out of memory"); return false; }
    for (int i = 0, p = 0; i < n_nodes; i++) {
        struct ggml_tensor * node = ggml_graph_node(oc->gb_grad, i);
        if (node->flags & GGML_TENSOR_FLAG_PARAM) accs_by_node[i] = oc->grad_accs[p++];
    }
    const enum ggml_status st = ggml_build_backward_expand(oc->ctx_graph, oc->gb_grad, accs_by_node);
    free(accs_by_node);
    return st == GGML_STATUS_SUCCESS;
}

static bool build_step(struct ggml_opt_context * oc) {
    struct ggml_context * cs = oc->ctx_static;
    const bool adamw = oc->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    oc->opt_pars = ggml_new_tensor_1d(cs, GGML_TYPE_F32, adamw ? 7 : 2);
    if (!named(oc->opt_pars, ggml_opt_optimizer_name(oc->optimizer), " params")) return false;
    ggml_set_input(oc->opt_pars);
    oc->g_step = ggml_new_graph_custom(oc->ctx_graph, graph_capacity(oc), false);
    if (!oc->g_step) return false;
    for (int p = 0; p < oc->n_params; p++) {
        struct ggml_tensor * w = oc->params[p];
        struct ggml_tensor * step;
        if (adamw) {
            oc->grad_m[p] = ggml_new_tensor(cs, GGML_TYPE_F32, GGML_MAX_DIMS, w->ne);
            oc->grad_v[p] = ggml_new_tensor(cs, GGML_TYPE_F32, GGML_MAX_DIMS, w->ne);
            if (!named(oc->grad_m[p], "AdamW m for ", w->name) || !named(oc->grad_v[p], "AdamW v for ", w->name)) return false;
            step = ggml_opt_step_adamw(cs, w, oc->grad_accs[p], oc->grad_m[p], oc->grad_v[p], oc->opt_pars);
        } else {
            step = ggml_opt_step_sgd(cs, w, oc->grad_accs[p], oc->opt_pars);
        }
        if (!named(step, ggml_opt_optimizer_name(oc->optimizer), " step")) return false;
        if (ggml_build_forward_expand_status(oc->g_step, step) != GGML_STATUS_SUCCESS) return false;
    }
    return true;
}

static bool check_params(const struct ggml_opt_params * p) {
    static const char * fn = "ggml_opt_init";
    if (!p->backend_sched) { ggmlr_set_error("%s: backend_sched is NULL", fn); return false; }
    if (!p->ctx_compute || !p->inputs || !p->outputs) {
        ggmlr_set_error("%s: ctx_compute, inputs and outputs must be set (only static graphs are supported)", fn);
        return false;
    }
    if (!p->inputs->data) { ggmlr_set_error("%s: inputs '%s' must have memory (allocate them statically)", fn, p->inputs->name); return false; }
    if ((unsigned) p->loss_type > GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR) { ggmlr_set_error("%s: unknown loss type %d", fn, (int) p->loss_type); return false; }
    if (p->build_type != GGML_OPT_BUILD_TYPE_FORWARD && p->build_type != GGML_OPT_BUILD_TYPE_GRAD && p->build_type != GGML_OPT_BUILD_TYPE_OPT) {
        ggmlr_set_error("%s: unknown build type %d", fn, (int) p->build_type);
        return false;
    }
    if ((unsigned) p->optimizer >= GGML_OPT_OPTIMIZER_TYPE_COUNT) { ggmlr_set_error("%s: unknown optimizer %d", fn, (int) p->optimizer); return false; }
    if (p->opt_period < 1) { ggmlr_set_error("%s: opt_period must be >= 1 (got %d)", fn, (int) p->opt_period); return false; }
    if (p->build_type == GGML_OPT_BUILD_TYPE_OPT && !p->get_opt_pars) { ggmlr_set_error("%s: get_opt_pars is NULL", fn); return false; }
    if (p->outputs->type != GGML_TYPE_F32) { ggmlr_set_error("%s: outputs '%s' must be F32", fn, p->outputs->name); return false; }
    if (p->loss_type == GGML_OPT_LOSS_TYPE_CROSS_ENTROPY && (p->outputs->ne[2] != 1 || p->outputs->ne[3] != 1)) {
        ggmlr_set_error("%s: cross-entropy needs 2-D outputs [classes, datapoints]", fn);
        return false;
    }
    return true;
}

ggml_opt_context_t ggml_opt_init(struct ggml_opt_params params) {
    if (!check_params(&params)) return NULL;
    struct ggml_opt_context * oc = ggmlr_calloc(1, sizeof *oc);
    if (!oc) { ggmlr_set_error("ggml_opt_init: out of memory"); return NULL; }
    oc->backend_sched   = params.backend_sched;
    oc->ctx_compute     = params.ctx_compute;
    oc->inputs          = params.inputs;
    oc->outputs         = params.outputs;
    oc->loss_type       = params.loss_type;
    oc->build_type      = params.build_type;
    oc->optimizer       = params.optimizer;
    oc->opt_period      = params.opt_period;
    oc->get_opt_pars    = params.get_opt_pars;
    oc->get_opt_pars_ud = params.get_opt_pars_ud;
    oc->apply_nonfinite = params.apply_nonfinite;
    oc->rng             = params.seed;
    oc->iter            = 1;
    oc->dist.size       = 1;
    ggml_set_input(oc->inputs);
    ggml_set_output(oc->outputs);

    const size_t cap = graph_capacity(oc);
    struct ggml_init_params gp = {3 * ggml_graph_overhead_custom(cap, true) + 2 * cap * ggml_tensor_overhead(), NULL, true};
    oc->ctx_graph = ggml_init(gp);
    if (!oc->ctx_graph) goto fail;

    /* the parameters are the PARAM nodes of the model, in graph order */
    oc->gf = forward_graph(oc, false);
    if (!oc->gf) goto fail;
    for (int i = 0; i < ggml_graph_n_nodes(oc->gf); i++) {
        const struct ggml_tensor * node = ggml_graph_node(oc->gf, i);
        if (node->flags & GGML_TENSOR_FLAG_LOSS) {
            ggmlr_set_error("ggml_opt_init: the model already has a loss ('%s'); outputs must be the model's output", node->name);
            goto fail;
        }
        if (node->flags & GGML_TENSOR_FLAG_PARAM) oc->n_params++;
    }
    const size_t np = (size_t) oc->n_params;
    oc->params    = ggmlr_calloc(np + 1, sizeof *oc->params);
    oc->grad_accs = ggmlr_calloc(np + 1, sizeof *oc->grad_accs);
    oc->grad_m    = ggmlr_calloc(np + 1, sizeof *oc->grad_m);
    oc->grad_v    = ggmlr_calloc(np + 1, sizeof *oc->grad_v);
    if (!oc->params || !oc->grad_accs || !oc->grad_m || !oc->grad_v) { ggmlr_set_error("ggml_opt_init: out of memory"); goto fail; }
    for (int i = 0, p = 0; i < ggml_graph_n_nodes(oc->gf); i++) {
        struct ggml_tensor * node = ggml_graph_node(oc->gf, i);
        if (!(node->flags & GGML_TENSOR_FLAG_PARAM)) continue;
        if (!node->data) { ggmlr_set_error("ggml_opt_init: parameter '%s' has no memory (allocate it statically)", node->name); goto fail; }
        oc->params[p++] = node;
    }
    if (oc->build_type >= GGML_OPT_BUILD_TYPE_GRAD && oc->n_params == 0) {
        ggmlr_set_error("ggml_opt_init: the model has no parameters (mark them with ggml_set_param)");
        goto fail;
    }

    /* labels, loss chain, pred, ncorrect, opt params; per parameter accumulator, m, v, step */
    struct ggml_init_params sp = {(12 + 4 * np) * ggml_tensor_overhead(), NULL, true};
    oc->ctx_static = ggml_init(sp);
    if (!oc->ctx_static || !build_loss(oc)) goto fail;
    if (ggml_build_forward_expand_status(oc->gf, oc->loss) != GGML_STATUS_SUCCESS) goto fail;
    if (oc->build_type >= GGML_OPT_BUILD_TYPE_GRAD) {
        for (int p = 0; p < oc->n_params; p++) {
            oc->grad_accs[p] = ggml_new_tensor(oc->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, oc->params[p]->ne);
            if (!named(oc->grad_accs[p], "grad acc for ", oc->params[p]->name)) goto fail;
        }
        if (!build_backward(oc)) goto fail;
    }
    if (oc->build_type == GGML_OPT_BUILD_TYPE_OPT && !build_step(oc)) goto fail;
    oc->buf_static = ggml_backend_alloc_ctx_tensors(oc->ctx_static, ggml_backend_sched_get_backend(oc->backend_sched, 0));
    if (!oc->buf_static) goto fail;
    return oc;
fail:
    ggml_opt_free(oc);
    return NULL;
}

void ggml_opt_free(ggml_opt_context_t oc) {
    if (!oc) return;
    ggmlr_opt_set_dist(oc, NULL);
    /* the scheduler's memory may point at tensors of ctx_graph */
    if (oc->allocated_graph) ggml_backend_sched_reset(oc->backend_sched);
    ggml_backend_buffer_free(oc->buf_static);
    ggml_free(oc->ctx_static);
    ggml_free(oc->ctx_graph);
    free(oc->params);
    free(oc->grad_accs);
    free(oc->grad_m);
    free(oc->grad_v);
    free(oc);
}

static void zero_all(struct ggml_tensor ** ts, int n) {
    for (int i = 0; i < n; i++) if (ts[i] && ts[i]->data) memset(ts[i]->data, 0, ggml_nbytes(ts[i]));
}

void ggml_opt_reset(ggml_opt_context_t oc, bool optimizer) {
    if (!oc) return;
    zero_all(oc->grad_accs, oc->n_params);
    oc->opt_i = 0;
    oc->period_nonfinite = false;
    if (optimizer) {
        zero_all(oc->grad_m, oc->n_params);
        zero_all(oc->grad_v, oc->n_params);
        oc->iter = 1;
    }
}

bool ggml_opt_static_graphs(ggml_opt_context_t oc) { return oc != NULL; }
struct ggml_tensor * ggml_opt_inputs(ggml_opt_context_t oc)   { return oc ? oc->inputs : NULL; }
struct ggml_tensor * ggml_opt_outputs(ggml_opt_context_t oc)  { return oc ? oc->outputs : NULL; }
struct ggml_tensor * ggml_opt_labels(ggml_opt_context_t oc)   { return oc ? oc->labels : NULL; }
struct ggml_tensor * ggml_opt_loss(ggml_opt_context_t oc)     { return oc ? oc->loss : NULL; }
struct ggml_tensor * ggml_opt_pred(ggml_opt_context_t oc)     { return oc ? oc->pred : NULL; }
struct ggml_tensor * ggml_opt_ncorrect(ggml_opt_context_t oc) { return oc ? oc->ncorrect : NULL; }
enum ggml_opt_optimizer_type ggml_opt_context_optimizer_type(ggml_opt_context_t oc) { return oc ? oc->optimizer : GGML_OPT_OPTIMIZER_TYPE_COUNT; }

struct ggml_tensor * ggml_opt_grad_acc(ggml_opt_context_t oc, struct ggml_tensor * node) {
    if (!oc || !node) return NULL;
    for (int p = 0; p < oc->n_params; p++) if (oc->params[p] == node) return oc->grad_accs[p];
    return NULL;
}

/* ====== Data parallelism hook (opt_dist.h) ====== */

enum ggml_status ggmlr_opt_set_dist(ggml_opt_context_t oc, const struct ggmlr_opt_dist * d) {
    if (!oc) { ggmlr_set_error("ggmlr_opt_set_dist: context is NULL"); return GGML_STATUS_FAILED; }
    if (d && (d->size < 1 || d->rank < 0 || d->rank >= d->size || !d->allreduce)) {
        ggmlr_set_error("ggmlr_opt_set_dist: rank %d of %d, or no reduction", d->rank, d->size);
        return GGML_STATUS_FAILED;
    }
    float * extra = NULL;
    int32_t * pred_all = NULL;
    if (d) {
        const size_t n_pred = (size_t) d->size * (size_t) oc->outputs->ne[1];
        extra = malloc((2 + n_pred) * sizeof *extra);
        pred_all = malloc(n_pred * sizeof *pred_all);
        if (!extra || !pred_all) {
            free(extra);
            free(pred_all);
            ggmlr_set_error("ggmlr_opt_set_dist: out of memory");
            return GGML_STATUS_ALLOC_FAILED;
        }
    }
    if (oc->dist.free_ud) oc->dist.free_ud(oc->dist.ud);
    free(oc->dist_extra);
    free(oc->pred_all);
    memset(&oc->dist, 0, sizeof oc->dist);
    oc->dist.size = 1;
    if (d) oc->dist = *d;
    oc->dist_extra = extra;
    oc->pred_all = pred_all;
    return GGML_STATUS_SUCCESS;
}

int ggmlr_opt_n_params(ggml_opt_context_t oc) { return oc ? oc->n_params : 0; }

int ggmlr_opt_state_tensors(ggml_opt_context_t oc, struct ggml_tensor ** ts) {
    int n = 0;
    for (int p = 0; p < oc->n_params; p++) ts[n++] = oc->params[p];
    for (int p = 0; p < oc->n_params; p++) {
        if (oc->grad_m[p]) ts[n++] = oc->grad_m[p];
        if (oc->grad_v[p]) ts[n++] = oc->grad_v[p];
    }
    return n;
}

int64_t * ggmlr_opt_iter(ggml_opt_context_t oc) { return &oc->iter; }

/* FNV-1a over 64-bit words */
static uint64_t hash_word(uint64_t h, uint64_t w) {
    for (int i = 0; i < 8; i++) h = (h ^ ((w >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    return h;
}

static uint64_t hash_tensor_shape(uint64_t h, const struct ggml_tensor * t) {
    h = hash_word(h, (uint64_t) t->type);
    for (int d = 0; d < GGML_MAX_DIMS; d++) h = hash_word(h, (uint64_t) t->ne[d]);
    return h;
}

uint64_t ggmlr_opt_config_hash(ggml_opt_context_t oc) {
    uint64_t h = 0xcbf29ce484222325ull;
    h = hash_tensor_shape(h, oc->inputs);
    h = hash_tensor_shape(h, oc->outputs);
    h = hash_word(h, (uint64_t) oc->n_params);
    for (int p = 0; p < oc->n_params; p++) h = hash_tensor_shape(h, oc->params[p]);
    h = hash_word(h, (uint64_t) oc->loss_type);
    h = hash_word(h, (uint64_t) oc->build_type);
    h = hash_word(h, (uint64_t) oc->optimizer);
    return hash_word(h, (uint64_t) oc->opt_period);
}

/* splitmix64: a small, well-mixed generator whose sequence is the same everywhere */
static uint64_t rng_next(uint64_t * state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform in [0, n) without modulo bias: reject the first 2^64 mod n values */
static uint64_t rng_below(uint64_t * state, uint64_t n) {
    const uint64_t reject_below = (0 - n) % n;
    uint64_t r;
    do r = rng_next(state); while (r < reject_below);
    return r % n;
}

enum ggml_status ggml_opt_dataset_shuffle(ggml_opt_context_t oc, ggml_opt_dataset_t ds, int64_t idata) {
    if (!oc || !ds) { ggmlr_set_error("ggml_opt_dataset_shuffle: context or dataset is NULL"); return GGML_STATUS_FAILED; }
    if (idata > ds->ndata || (idata >= 0 && idata % ds->ndata_shard != 0)) {
        ggmlr_set_error("ggml_opt_dataset_shuffle: idata %" PRId64 " must be <= ndata %" PRId64 " and a multiple of ndata_shard %" PRId64,
                        idata, ds->ndata, ds->ndata_shard);
        return GGML_STATUS_FAILED;
    }
    const int64_t n = idata < 0 ? ds->nshards : idata / ds->ndata_shard;
    for (int64_t i = n - 1; i > 0; i--) {  /* Fisher-Yates */
        const int64_t j = (int64_t) rng_below(&oc->rng, (uint64_t) i + 1);
        const int64_t t = ds->permutation[i];
        ds->permutation[i] = ds->permutation[j];
        ds->permutation[j] = t;
    }
    return GGML_STATUS_SUCCESS;
}

/* ====== Result ====== */

struct ggml_opt_result {
    int64_t   ndata;
    int64_t   nbatches;
    float *   loss;      /* per batch */
    int32_t * pred;      /* per datapoint */
    int64_t   cap_loss, cap_pred;
    int64_t   ncorrect;  /* -1: no accuracy for this loss */
    int64_t   nonfinite;
    int32_t   opt_period;
    bool      loss_per_datapoint;
};

ggml_opt_result_t ggml_opt_result_init(void) {
    struct ggml_opt_result * r = ggmlr_calloc(1, sizeof *r);
    if (!r) ggmlr_set_error("ggml_opt_result_init: out of memory");
    return r;
}

void ggml_opt_result_free(ggml_opt_result_t r) {
    if (!r) return;
    free(r->loss);
    free(r->pred);
    free(r);
}

void ggml_opt_result_reset(ggml_opt_result_t r) {
    if (!r) return;
    r->ndata = r->nbatches = r->ncorrect = r->nonfinite = 0;
}

void ggml_opt_result_ndata(ggml_opt_result_t r, int64_t * ndata) { if (ndata) *ndata = r ? r->ndata : 0; }
void ggml_opt_result_nonfinite(ggml_opt_result_t r, int64_t * n) { if (n) *n = r ? r->nonfinite : 0; }

void ggml_opt_result_loss(ggml_opt_result_t r, double * loss, double * unc) {
    if (unc) *unc = NAN;
    if (!loss) return;
    *loss = r && r->nbatches == 0 ? 0.0 : NAN;
    if (!r || r->nbatches == 0) return;
    /* a per-datapoint loss was divided by opt_period in each micro-batch */
    const double scale = r->loss_per_datapoint ? r->opt_period : 1.0;
    double sum = 0.0, sum2 = 0.0;
    for (int64_t i = 0; i < r->nbatches; i++) {
        const double l = r->loss[i] * scale;
        sum += l;
        sum2 += l * l;
    }
    const double n = (double) r->nbatches, mean = sum / n;
    *loss = r->loss_per_datapoint ? mean : sum;
    if (!unc || r->nbatches < 2) return;
    /* standard error of the mean (of the sum for SUM) with Bessel's correction */
    const double var = (sum2 / n - mean * mean) * n / (n - 1);
    *unc = r->loss_per_datapoint ? sqrt(var / n) : sqrt(var * n);
}

void ggml_opt_result_pred(ggml_opt_result_t r, int32_t * pred) {
    if (r && pred && r->ncorrect >= 0) memcpy(pred, r->pred, (size_t) r->ndata * sizeof *pred);
}

void ggml_opt_result_accuracy(ggml_opt_result_t r, double * accuracy, double * unc) {
    const bool known = r && r->ncorrect >= 0 && r->ndata > 0;
    const double acc = known ? (double) r->ncorrect / (double) r->ndata : NAN;
    if (accuracy) *accuracy = acc;
    if (unc) *unc = known && r->ndata >= 2 ? sqrt(acc * (1.0 - acc) / (double) (r->ndata - 1)) : NAN;
}

static bool grow(void ** p, int64_t * cap, int64_t need, size_t elem) {
    if (need <= *cap) return true;
    const int64_t ncap = need > 2 * *cap ? need : 2 * *cap;
    void * q = ggmlr_realloc(*p, (size_t) ncap * elem);
    if (!q) return false;
    *p = q;
    *cap = ncap;
    return true;
}

/* ====== Computation ====== */

enum ggml_status ggml_opt_alloc(ggml_opt_context_t oc, bool backward) {
    if (!oc) { ggmlr_set_error("ggml_opt_alloc: context is NULL"); return GGML_STATUS_FAILED; }
    if (oc->next_graph) { ggmlr_set_error("ggml_opt_alloc: called twice without ggml_opt_eval"); return GGML_STATUS_FAILED; }
    if (backward && oc->build_type < GGML_OPT_BUILD_TYPE_GRAD) {
        ggmlr_set_error("ggml_opt_alloc: the context was built for the forward pass only");
        return GGML_STATUS_FAILED;
    }
    struct ggml_cgraph * g = backward ? oc->gb_grad : oc->gf;
    if (oc->allocated_graph != g) {
        ggml_backend_sched_reset(oc->backend_sched);
        oc->allocated_graph = NULL;
        if (!ggml_backend_sched_alloc_graph(oc->backend_sched, g)) return GGML_STATUS_ALLOC_FAILED;
        oc->allocated_graph = g;
    }
    if (backward && oc->opt_i == 0) {  /* a new accumulation period */
        zero_all(oc->grad_accs, oc->n_params);
        oc->period_nonfinite = false;
    }
    oc->step_after_next = backward && oc->build_type == GGML_OPT_BUILD_TYPE_OPT && oc->opt_i + 1 == oc->opt_period;
    oc->next_graph = g;
    return GGML_STATUS_SUCCESS;
}

/* Row-wise argmax of a [ne0, ne1] tensor, the first maximum on ties (as ggml_argmax). */
static int32_t argmax_col(const struct ggml_tensor * t, int64_t j) {
    int32_t best = 0;
    float vbest = -INFINITY;
    for (int64_t i = 0; i < t->ne[0]; i++) {
        const float v = ggmlr_load_f32(t->type, ggmlr_elem_ptr(t, i, j, 0, 0));
        if (v > vbest) { vbest = v; best = (int32_t) i; }
    }
    return best;
}

static void host_predictions(struct ggml_opt_context * oc) {
    int32_t * pred = oc->pred->data;
    int32_t ncorrect = 0;
    for (int64_t j = 0; j < oc->outputs->ne[1]; j++) {
        pred[j] = argmax_col(oc->outputs, j);
        ncorrect += pred[j] == argmax_col(oc->labels, j);
    }
    *(int32_t *) oc->ncorrect->data = ncorrect;
}

static bool valid_opt_pars(const struct ggml_opt_context * oc, const struct ggml_opt_optimizer_params * p) {
    const bool clip_ok = p->clip_norm >= 0.0f && isfinite(p->clip_norm);
    if (oc->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW) {
        const bool ok = p->adamw.alpha > 0.0f && isfinite(p->adamw.alpha) && p->adamw.beta1 >= 0.0f && p->adamw.beta1 < 1.0f &&
                        p->adamw.beta2 >= 0.0f && p->adamw.beta2 < 1.0f && p->adamw.eps >= 0.0f && isfinite(p->adamw.eps) &&
                        p->adamw.wd >= 0.0f && p->adamw.wd <= 1.0f;
        if (!ok || !clip_ok) {
            ggmlr_set_error("ggml_opt_eval: AdamW needs alpha > 0, beta1 and beta2 in [0, 1), eps >= 0, wd in [0, 1], clip_norm >= 0 "
                            "(got %g, %g, %g, %g, %g, %g)", p->adamw.alpha, p->adamw.beta1, p->adamw.beta2, p->adamw.eps, p->adamw.wd, p->clip_norm);
        }
        return ok && clip_ok;
    }
    const bool ok = p->sgd.alpha > 0.0f && isfinite(p->sgd.alpha) && p->sgd.wd >= 0.0f && p->sgd.wd <= 1.0f;
    if (!ok || !clip_ok) {
        ggmlr_set_error("ggml_opt_eval: SGD needs alpha > 0, wd in [0, 1], clip_norm >= 0 (got %g, %g, %g)", p->sgd.alpha, p->sgd.wd, p->clip_norm);
    }
    return ok && clip_ok;
}

/* sum of g^2 over all accumulators (NaN/Inf propagate into it) */
static double grad_sum_squares(const struct ggml_opt_context * oc) {
    double s = 0.0;
    for (int p = 0; p < oc->n_params; p++) {
        const float * g = oc->grad_accs[p]->data;
        for (int64_t i = 0; i < ggml_nelements(oc->grad_accs[p]); i++) s += (double) g[i] * g[i];
    }
    return s;
}

static void scale_grads(struct ggml_opt_context * oc, float s) {
    for (int p = 0; p < oc->n_params; p++) {
        float * g = oc->grad_accs[p]->data;
        for (int64_t i = 0; i < ggml_nelements(oc->grad_accs[p]); i++) g[i] *= s;
    }
}

/* End of an accumulation period: check, clip, and run the optimizer step. */
static enum ggml_status optimizer_step(struct ggml_opt_context * oc) {
    const struct ggml_opt_optimizer_params p = oc->get_opt_pars(oc->get_opt_pars_ud);
    if (!valid_opt_pars(oc, &p)) return GGML_STATUS_FAILED;
    if (oc->dist.size > 1) {
        /* the gradient of the global batch: the sum over ranks, divided by the
         * number of ranks when the loss is a mean over datapoints */
        const float scale = oc->loss_per_datapoint ? 1.0f / (float) oc->dist.size : 1.0f;
        const enum ggml_status st = oc->dist.allreduce(oc->dist.ud, oc->grad_accs, oc->n_params, scale, NULL, 0);
        if (st != GGML_STATUS_SUCCESS) return st;
    }
    const double norm = sqrt(grad_sum_squares(oc));
    const bool nonfinite = oc->period_nonfinite || !isfinite(norm);
    if (nonfinite && !oc->apply_nonfinite) {
        ggmlr_set_error("ggml_opt_eval: %s is not finite; the optimizer step was skipped", oc->period_nonfinite ? "the loss" : "a gradient");
        return GGML_STATUS_ABORTED;
    }
    if (p.clip_norm > 0.0f && norm > p.clip_norm) scale_grads(oc, (float) (p.clip_norm / norm));
    float * par = oc->opt_pars->data;
    if (oc->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW) {
        /* bias corrections of the moments after t steps: 1/(1 - beta^t) */
        const float t = (float) oc->iter;
        par[0] = p.adamw.alpha;
        par[1] = p.adamw.beta1;
        par[2] = p.adamw.beta2;
        par[3] = p.adamw.eps;
        par[4] = p.adamw.wd;
        par[5] = 1.0f / (1.0f - powf(p.adamw.beta1, t));
        par[6] = 1.0f / (1.0f - powf(p.adamw.beta2, t));
    } else {
        par[0] = p.sgd.alpha;
        par[1] = p.sgd.wd;
    }
    const enum ggml_status st = ggml_backend_sched_graph_compute(oc->backend_sched, oc->g_step);
    if (st != GGML_STATUS_SUCCESS) return st;
    oc->iter++;
    if (!nonfinite) return GGML_STATUS_SUCCESS;
    ggmlr_set_error("ggml_opt_eval: %s is not finite; the optimizer step was applied (apply_nonfinite)", oc->period_nonfinite ? "the loss" : "a gradient");
    return GGML_STATUS_ABORTED;
}

/* With data parallelism: the loss of the global batch (the mean of the ranks'
 * means, or the sum of their sums), the predictions of every rank in rank
 * order and the total of correct ones, the same on every rank. */
static enum ggml_status reduce_evaluation(struct ggml_opt_context * oc) {
    const int64_t n = oc->outputs->ne[1];
    const int size = oc->dist.size;
    float * x = oc->dist_extra;  /* the counts and class indices below 2^24 are exact in float */
    int n_extra = 1;
    x[0] = *(const float *) oc->loss->data;
    if (oc->pred) {
        x[1] = (float) *(const int32_t *) oc->ncorrect->data;
        for (int64_t j = 0; j < size * n; j++) x[2 + j] = 0.0f;
        for (int64_t j = 0; j < n; j++) x[2 + oc->dist.rank * n + j] = (float) ((const int32_t *) oc->pred->data)[j];
        n_extra = 2 + (int) (size * n);
    }
    const enum ggml_status st = oc->dist.allreduce(oc->dist.ud, NULL, 0, 1.0f, x, n_extra);
    if (st != GGML_STATUS_SUCCESS) return st;
    *(float *) oc->loss->data = oc->loss_per_datapoint ? x[0] / (float) size : x[0];
    if (oc->pred) {
        *(int32_t *) oc->ncorrect->data = (int32_t) x[1];
        for (int64_t j = 0; j < size * n; j++) oc->pred_all[j] = (int32_t) x[2 + j];
    }
    return GGML_STATUS_SUCCESS;
}

static enum ggml_status add_to_result(struct ggml_opt_context * oc, struct ggml_opt_result * r, bool nonfinite) {
    const int64_t n = oc->outputs->ne[1] * oc->dist.size;
    const int32_t * pred = oc->dist.size > 1 ? oc->pred_all : oc->pred ? oc->pred->data : NULL;
    if (!grow((void **) &r->loss, &r->cap_loss, r->nbatches + 1, sizeof *r->loss) ||
        (oc->pred && !grow((void **) &r->pred, &r->cap_pred, r->ndata + n, sizeof *r->pred))) {
        ggmlr_set_error("ggml_opt_eval: out of memory for the result");
        return GGML_STATUS_ALLOC_FAILED;
    }
    if (r->nbatches == 0) {
        r->opt_period = oc->opt_period;
        r->loss_per_datapoint = oc->loss_per_datapoint;
    }
    r->loss[r->nbatches++] = *(const float *) oc->loss->data;
    if (oc->pred && r->ncorrect >= 0) {
        memcpy(r->pred + r->ndata, pred, (size_t) n * sizeof *r->pred);
        r->ncorrect += *(const int32_t *) oc->ncorrect->data;
    } else {
        r->ncorrect = -1;
    }
    r->ndata += n;
    r->nonfinite += nonfinite;
    return GGML_STATUS_SUCCESS;
}

enum ggml_status ggml_opt_eval(ggml_opt_context_t oc, ggml_opt_result_t result) {
    if (!oc) { ggmlr_set_error("ggml_opt_eval: context is NULL"); return GGML_STATUS_FAILED; }
    struct ggml_cgraph * g = oc->next_graph;
    if (!g) { ggmlr_set_error("ggml_opt_eval: call ggml_opt_alloc first"); return GGML_STATUS_FAILED; }
    oc->next_graph = NULL;
    if (result && result->nbatches > 0 && (result->opt_period != oc->opt_period || result->loss_per_datapoint != oc->loss_per_datapoint)) {
        ggmlr_set_error("ggml_opt_eval: the result holds batches of a context with another loss type or opt_period");
        return GGML_STATUS_FAILED;
    }
    const bool backward = g == oc->gb_grad;
    if (backward) {
        struct ggml_tensor * loss_grad = ggml_graph_get_grad(g, oc->loss);  /* dL/dL, a leaf of the backward graph */
        if (loss_grad) ggml_set_f32(loss_grad, 1.0f);
    }
    enum ggml_status st = ggml_backend_sched_graph_compute(oc->backend_sched, g);
    if (st != GGML_STATUS_SUCCESS) return st;
    if (oc->pred) host_predictions(oc);
    if (oc->dist.size > 1 && (st = reduce_evaluation(oc)) != GGML_STATUS_SUCCESS) return st;
    const bool loss_finite = isfinite(*(const float *) oc->loss->data);
    bool nonfinite = !loss_finite;
    if (backward) {
        oc->period_nonfinite |= !loss_finite;
        oc->opt_i = (oc->opt_i + 1) % oc->opt_period;
        if (oc->step_after_next) {
            st = optimizer_step(oc);
            if (st == GGML_STATUS_FAILED || st == GGML_STATUS_ALLOC_FAILED) return st;
            nonfinite = nonfinite || st == GGML_STATUS_ABORTED;
        }
    }
    if (!loss_finite && st == GGML_STATUS_SUCCESS) {
        ggmlr_set_error("ggml_opt_eval: the loss is not finite");
        st = GGML_STATUS_ABORTED;
    }
    if (result) {
        const enum ggml_status rs = add_to_result(oc, result, nonfinite);
        if (rs != GGML_STATUS_SUCCESS) return rs;
    }
    return st;
}

/* ====== High-level functions ====== */

/* The worse of two statuses: a failure beats an abort beats success. */
static enum ggml_status worse(enum ggml_status a, enum ggml_status b) {
    if (a < 0 || b < 0) return a < b ? a : b;
    return a > b ? a : b;
}

enum ggml_status ggml_opt_epoch(ggml_opt_context_t oc, ggml_opt_dataset_t ds, ggml_opt_result_t result_train, ggml_opt_result_t result_eval,
                                int64_t idata_split, ggml_opt_epoch_callback callback_train, ggml_opt_epoch_callback callback_eval) {
    static const char * fn = "ggml_opt_epoch";
    if (!oc || !ds) { ggmlr_set_error("%s: context or dataset is NULL", fn); return GGML_STATUS_FAILED; }
    struct ggml_tensor * inputs = oc->inputs, * data = ds->data;
    /* with data parallelism a batch is every rank's inputs side by side */
    const int64_t ndata = data->ne[1], ndata_batch = inputs->ne[1] * oc->dist.size;
    if (data->ne[0] != inputs->ne[0] || ndata % ndata_batch != 0) {
        ggmlr_set_error("%s: datapoints of %" PRId64 " elements, %" PRId64 " of them, do not fit batches of inputs [%" PRId64 ", %" PRId64 "] on %d ranks",
                        fn, data->ne[0], ndata, inputs->ne[0], inputs->ne[1], oc->dist.size);
        return GGML_STATUS_FAILED;
    }
    idata_split = idata_split < 0 ? ndata : idata_split;
    if (idata_split > ndata || idata_split % ndata_batch != 0) {
        ggmlr_set_error("%s: idata_split %" PRId64 " must be <= %" PRId64 " and a multiple of the batch size %" PRId64, fn, idata_split, ndata, ndata_batch);
        return GGML_STATUS_FAILED;
    }
    const int64_t nbatches = ndata / ndata_batch, ibatch_split = idata_split / ndata_batch;
    enum ggml_status worst = GGML_STATUS_SUCCESS;
    int64_t t_start = time_us();
    for (int64_t ib = 0; ib < nbatches; ib++) {
        const bool train = ib < ibatch_split;
        if (ib == ibatch_split) t_start = time_us();
        enum ggml_status st = ggml_opt_alloc(oc, train);
        if (st == GGML_STATUS_SUCCESS) st = ggml_opt_dataset_get_batch(ds, inputs, oc->labels, ib * oc->dist.size + oc->dist.rank);
        if (st != GGML_STATUS_SUCCESS) {
            oc->next_graph = NULL;
            return st;
        }
        st = ggml_opt_eval(oc, train ? result_train : result_eval);
        if (st != GGML_STATUS_SUCCESS && st != GGML_STATUS_ABORTED) return st;
        worst = worse(worst, st);
        ggml_opt_epoch_callback cb = train ? callback_train : callback_eval;
        if (cb) {
            cb(train, oc, ds, train ? result_train : result_eval, train ? ib + 1 : ib + 1 - ibatch_split,
               train ? ibatch_split : nbatches - ibatch_split, t_start);
        }
    }
    return worst;
}

/* "what=hh:mm:ss" into buf */
static const char * hms(char * buf, size_t n, const char * what, int64_t us) {
    const int64_t s = us / 1000000;
    snprintf(buf, n, "%s=%02" PRId64 ":%02" PRId64 ":%02" PRId64, what, s / 3600, s / 60 % 60, s % 60);
    return buf;
}

void ggml_opt_epoch_callback_progress_bar(bool train, ggml_opt_context_t oc, ggml_opt_dataset_t ds, ggml_opt_result_t result,
                                          int64_t ibatch, int64_t ibatch_max, int64_t t_start_us) {
    (void) ds;
    if (oc && oc->dist.rank != 0) return;  /* one progress bar per job */
    enum { BAR = 20 };
    const int64_t filled = ibatch_max > 0 ? BAR * ibatch / ibatch_max : BAR;
    char bar[BAR + 1], t[48], eta[48];
    for (int64_t j = 0; j < BAR; j++) bar[j] = j < filled ? '=' : ' ';
    bar[BAR] = '\0';
    const int64_t batch = oc ? oc->inputs->ne[1] * oc->dist.size : 0;
    double loss, loss_unc, acc, acc_unc;
    ggml_opt_result_loss(result, &loss, &loss_unc);
    ggml_opt_result_accuracy(result, &acc, &acc_unc);
    const int64_t elapsed = time_us() - t_start_us;
    ggmlr_log(GGML_LOG_LEVEL_INFO, "%s[%s] data=%07" PRId64 "/%07" PRId64 " loss=%.5f+-%.5f acc=%.2f+-%.2f%% %s %s %s",
              train ? "train: " : "val:   ", bar, ibatch * batch, ibatch_max * batch, loss, loss_unc, 100.0 * acc, 100.0 * acc_unc,
              hms(t, sizeof t, "t", elapsed), hms(eta, sizeof eta, "ETA", ibatch > 0 ? elapsed * (ibatch_max - ibatch) / ibatch : 0),
              ibatch == ibatch_max ? "\n" : "\r");
}

enum ggml_status ggml_opt_fit(ggml_backend_sched_t backend_sched, struct ggml_context * ctx_compute, struct ggml_tensor * inputs,
                              struct ggml_tensor * outputs, ggml_opt_dataset_t ds, enum ggml_opt_loss_type loss_type,
                              enum ggml_opt_optimizer_type optimizer, ggml_opt_get_optimizer_params get_opt_pars, int64_t nepoch,
                              int64_t nbatch_logical, float val_split, bool silent) {
    static const char * fn = "ggml_opt_fit";
    if (!inputs || !ds) { ggmlr_set_error("%s: inputs or dataset is NULL", fn); return GGML_STATUS_FAILED; }
    const int64_t t_fit_start = time_us();
    const int64_t ndata = ds->ndata, nbatch_physical = inputs->ne[1];
    if (nbatch_logical <= 0 || ndata % nbatch_logical != 0 || nbatch_logical % nbatch_physical != 0) {
        ggmlr_set_error("%s: nbatch_logical %" PRId64 " must divide ndata %" PRId64 " and be a multiple of the batch size %" PRId64,
                        fn, nbatch_logical, ndata, nbatch_physical);
        return GGML_STATUS_FAILED;
    }
    if (!(val_split >= 0.0f && val_split < 1.0f) || nepoch < 0) {
        ggmlr_set_error("%s: val_split must be in [0, 1) (got %g) and nepoch >= 0", fn, val_split);
        return GGML_STATUS_FAILED;
    }
    const int64_t opt_period = nbatch_logical / nbatch_physical;
    if (opt_period > INT32_MAX) { ggmlr_set_error("%s: nbatch_logical / batch size is too large", fn); return GGML_STATUS_FAILED; }
    const int64_t nbatches_logical = ndata / nbatch_logical;
    const int64_t idata_split = (int64_t) ((1.0f - val_split) * (float) nbatches_logical) * nbatch_logical;

    int64_t epoch = 1;
    struct ggml_opt_params params = ggml_opt_default_params(backend_sched, loss_type);
    params.ctx_compute     = ctx_compute;
    params.inputs          = inputs;
    params.outputs         = outputs;
    params.opt_period      = (int32_t) opt_period;
    params.get_opt_pars    = get_opt_pars;
    params.get_opt_pars_ud = &epoch;
    params.optimizer       = optimizer;
    ggml_opt_context_t oc = ggml_opt_init(params);
    ggml_opt_result_t result_train = ggml_opt_result_init(), result_val = ggml_opt_result_init();
    enum ggml_status worst = oc && result_train && result_val ? GGML_STATUS_SUCCESS : GGML_STATUS_FAILED;
    /* shuffling only matters when a batch is not the whole dataset */
    if (worst == GGML_STATUS_SUCCESS && nbatch_logical < ndata) worst = ggml_opt_dataset_shuffle(oc, ds, -1);
    ggml_opt_epoch_callback cb = silent ? NULL : ggml_opt_epoch_callback_progress_bar;
    for (; epoch <= nepoch && (worst == GGML_STATUS_SUCCESS || worst == GGML_STATUS_ABORTED); epoch++) {
        if (nbatch_logical < idata_split) {
            const enum ggml_status st = ggml_opt_dataset_shuffle(oc, ds, idata_split);
            if (st != GGML_STATUS_SUCCESS) { worst = st; break; }
        }
        ggml_opt_result_reset(result_train);
        ggml_opt_result_reset(result_val);
        if (!silent) ggmlr_log(GGML_LOG_LEVEL_INFO, "%s: epoch %04" PRId64 "/%04" PRId64 ":\n", fn, epoch, nepoch);
        worst = worse(worst, ggml_opt_epoch(oc, ds, result_train, result_val, idata_split, cb, cb));
        if (!silent) ggmlr_log(GGML_LOG_LEVEL_CONT, "\n");
    }
    if (!silent) {
        char t[48];
        ggmlr_log(GGML_LOG_LEVEL_INFO, "%s: training took %s\n", fn, hms(t, sizeof t, "t", time_us() - t_fit_start));
    }
    ggml_opt_free(oc);
    ggml_opt_result_free(result_train);
    ggml_opt_result_free(result_val);
    return worst;
}

/* opt.c -- the optimization contexts of ggml-opt.h: default parameters, the
 * graphs and memory ggml_opt_init builds, the accessors, and the data-parallel
 * hook (opt_dist.h). Running a context is in opt_eval.c, datasets in
 * opt_dataset.c.
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
#include "opt/opt_internal.h"

#include <math.h>
#include <stdlib.h>

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
static bool build_loss(struct ggml_opt_context * oc, struct ggml_tensor * user_loss) {
    struct ggml_context * cs = oc->ctx_static;
    struct ggml_tensor * out = oc->outputs;
    const float mean_scale = 1.0f / ((float) oc->opt_period * (float) ggml_nelements(out));
    struct ggml_tensor * loss = NULL;
    oc->loss_per_datapoint = oc->loss_type != GGML_OPT_LOSS_TYPE_SUM;
    if (user_loss) {
        /* a mean is divided by opt_period so that the accumulated gradient is
         * that of the logical batch; only the node the backward pass starts
         * from carries the loss flag */
        if (oc->opt_period == 1 || !oc->loss_per_datapoint) {
            loss = user_loss;
        } else {
            user_loss->flags &= ~GGML_TENSOR_FLAG_LOSS;
            loss = ggml_scale(cs, user_loss, 1.0f / (float) oc->opt_period);
            if (!named(loss, "loss", "")) return false;
        }
        ggml_set_output(loss);
        ggml_set_loss(loss);
        if (!(loss->flags & GGML_TENSOR_FLAG_LOSS)) return false;
        oc->loss = loss;
        return true;
    }
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
    for (int g = 0; g < oc->n_groups; g++) {
        char what[32];
        snprintf(what, sizeof what, " params %d", g);
        oc->group_pars[g] = ggml_new_tensor_1d(cs, GGML_TYPE_F32, adamw ? 7 : 2);
        if (!named(oc->group_pars[g], ggml_opt_optimizer_name(oc->optimizer), what)) return false;
        ggml_set_input(oc->group_pars[g]);
    }
    oc->g_step = ggml_new_graph_custom(oc->ctx_graph, graph_capacity(oc), false);
    if (!oc->g_step) return false;
    for (int p = 0; p < oc->n_params; p++) {
        struct ggml_tensor * w = oc->params[p];
        struct ggml_tensor * step;
        if (adamw) {
            oc->grad_m[p] = ggml_new_tensor(cs, GGML_TYPE_F32, GGML_MAX_DIMS, w->ne);
            oc->grad_v[p] = ggml_new_tensor(cs, GGML_TYPE_F32, GGML_MAX_DIMS, w->ne);
            if (!named(oc->grad_m[p], "AdamW m for ", w->name) || !named(oc->grad_v[p], "AdamW v for ", w->name)) return false;
            step = ggml_opt_step_adamw(cs, w, oc->grad_accs[p], oc->grad_m[p], oc->grad_v[p], oc->group_pars[oc->param_group[p]]);
        } else {
            step = ggml_opt_step_sgd(cs, w, oc->grad_accs[p], oc->group_pars[oc->param_group[p]]);
        }
        if (!named(step, ggml_opt_optimizer_name(oc->optimizer), " step")) return false;
        if (ggml_build_forward_expand_status(oc->g_step, step) != GGML_STATUS_SUCCESS) return false;
    }
    return true;
}

/* Group 0 holds the parameters of no group (factors 1); group g + 1 is
 * param_groups[g]. A tensor of a group must be a parameter of the model, in
 * at most one group. */
static bool assign_groups(struct ggml_opt_context * oc, const struct ggml_opt_params * p) {
    oc->n_groups = 1 + p->n_param_groups;
    oc->group_pars = ggmlr_calloc((size_t) oc->n_groups, sizeof *oc->group_pars);
    oc->group_lr_scale = ggmlr_calloc((size_t) oc->n_groups, sizeof *oc->group_lr_scale);
    oc->group_wd_scale = ggmlr_calloc((size_t) oc->n_groups, sizeof *oc->group_wd_scale);
    if (!oc->group_pars || !oc->group_lr_scale || !oc->group_wd_scale) { ggmlr_set_error("ggml_opt_init: out of memory"); return false; }
    oc->group_lr_scale[0] = oc->group_wd_scale[0] = 1.0f;
    for (int g = 0; g < p->n_param_groups; g++) {
        const struct ggml_opt_param_group * pg = &p->param_groups[g];
        oc->group_lr_scale[g + 1] = pg->lr_scale;
        oc->group_wd_scale[g + 1] = pg->wd_scale;
        for (int j = 0; j < pg->n_params; j++) {
            int found = -1;
            for (int q = 0; q < oc->n_params && found < 0; q++) if (oc->params[q] == pg->params[j]) found = q;
            if (found < 0) {
                ggmlr_set_error("ggml_opt_init: tensor %d of parameter group %d ('%s') is not a parameter of the model", j, g,
                                pg->params[j] ? pg->params[j]->name : "NULL");
                return false;
            }
            if (oc->param_group[found] != 0) {
                ggmlr_set_error("ggml_opt_init: parameter '%s' is in groups %d and %d", pg->params[j]->name, oc->param_group[found] - 1, g);
                return false;
            }
            oc->param_group[found] = g + 1;
        }
    }
    return true;
}

/* static_inputs: the inputs must have memory (static graphs; with
 * ggml_opt_prepare_alloc the scheduler gives it). */
static bool check_params(const struct ggml_opt_params * p, bool static_inputs) {
    static const char * fn = "ggml_opt_init";
    if (!p->backend_sched) { ggmlr_set_error("%s: backend_sched is NULL", fn); return false; }
    if (!p->ctx_compute || !p->inputs || !p->outputs) {
        ggmlr_set_error("%s: ctx_compute, inputs and outputs must all be set (static graphs) or all be NULL (ggml_opt_prepare_alloc)", fn);
        return false;
    }
    if (static_inputs && !p->inputs->data) { ggmlr_set_error("%s: inputs '%s' must have memory (allocate them statically)", fn, p->inputs->name); return false; }
    if ((unsigned) p->loss_type > GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR) { ggmlr_set_error("%s: unknown loss type %d", fn, (int) p->loss_type); return false; }
    if (p->build_type != GGML_OPT_BUILD_TYPE_FORWARD && p->build_type != GGML_OPT_BUILD_TYPE_GRAD && p->build_type != GGML_OPT_BUILD_TYPE_OPT) {
        ggmlr_set_error("%s: unknown build type %d", fn, (int) p->build_type);
        return false;
    }
    if ((unsigned) p->optimizer >= GGML_OPT_OPTIMIZER_TYPE_COUNT) { ggmlr_set_error("%s: unknown optimizer %d", fn, (int) p->optimizer); return false; }
    if (p->opt_period < 1) { ggmlr_set_error("%s: opt_period must be >= 1 (got %d)", fn, (int) p->opt_period); return false; }
    if (p->build_type == GGML_OPT_BUILD_TYPE_OPT && !p->get_opt_pars) { ggmlr_set_error("%s: get_opt_pars is NULL", fn); return false; }
    if (p->outputs->type != GGML_TYPE_F32) { ggmlr_set_error("%s: outputs '%s' must be F32", fn, p->outputs->name); return false; }
    if (p->loss && (p->loss->type != GGML_TYPE_F32 || ggml_nelements(p->loss) != 1)) {
        ggmlr_set_error("%s: loss '%s' must be F32 with one element", fn, p->loss->name);
        return false;
    }
    if (p->labels && !p->loss) { ggmlr_set_error("%s: labels are given without the loss that reads them", fn); return false; }
    if (p->labels && !p->labels->data) { ggmlr_set_error("%s: labels '%s' must have memory (allocate them statically)", fn, p->labels->name); return false; }
    if (p->n_param_groups < 0 || (p->n_param_groups > 0 && !p->param_groups)) {
        ggmlr_set_error("%s: n_param_groups %d without param_groups", fn, (int) p->n_param_groups);
        return false;
    }
    for (int g = 0; g < p->n_param_groups; g++) {
        const struct ggml_opt_param_group * pg = &p->param_groups[g];
        if (pg->n_params < 0 || (pg->n_params > 0 && !pg->params) || !(pg->lr_scale >= 0.0f && isfinite(pg->lr_scale)) ||
            !(pg->wd_scale >= 0.0f && isfinite(pg->wd_scale))) {
            ggmlr_set_error("%s: parameter group %d needs its tensors and finite scales >= 0 (lr_scale %g, wd_scale %g)", fn, g,
                            pg->lr_scale, pg->wd_scale);
            return false;
        }
    }
    const struct ggml_opt_lr_schedule * ls = &p->lr_schedule;
    if ((unsigned) ls->type > GGML_OPT_LR_SCHEDULE_WARMUP_COSINE || ls->warmup < 0 || ls->decay_steps < 0 || !(ls->min_lr >= 0.0f && isfinite(ls->min_lr))) {
        ggmlr_set_error("%s: lr_schedule needs a known type, warmup >= 0, decay_steps >= 0 and min_lr >= 0", fn);
        return false;
    }
    if (p->loss_type == GGML_OPT_LOSS_TYPE_CROSS_ENTROPY && !p->loss && (p->outputs->ne[2] != 1 || p->outputs->ne[3] != 1)) {
        ggmlr_set_error("%s: cross-entropy needs 2-D outputs [classes, datapoints]", fn);
        return false;
    }
    return true;
}

/* What every context takes from params before it has a model: the scheduler,
 * the loss, build and optimizer kinds, the period, and a fresh run (step 1,
 * the seed's random stream, no gradient norm yet, one process). */
static void set_run_state(struct ggml_opt_context * oc, const struct ggml_opt_params * p) {
    oc->backend_sched  = p->backend_sched;
    oc->loss_type      = p->loss_type;
    oc->build_type     = p->build_type;
    oc->optimizer      = p->optimizer;
    oc->opt_period     = p->opt_period;
    oc->rng            = p->seed;
    oc->iter           = 1;
    oc->dist.size      = 1;
    oc->last_grad_norm = NAN;
}

/* A context built for params' model: static graphs (ggml_opt_init), or this
 * batch's (ggml_opt_prepare_alloc, static_inputs false). */
static struct ggml_opt_context * build_context(struct ggml_opt_params params, bool static_inputs) {
    if (!check_params(&params, static_inputs)) return NULL;
    struct ggml_opt_context * oc = ggmlr_calloc(1, sizeof *oc);
    if (!oc) { ggmlr_set_error("ggml_opt_init: out of memory"); return NULL; }
    set_run_state(oc, &params);
    oc->static_graphs   = static_inputs;
    oc->ctx_compute     = params.ctx_compute;
    oc->inputs          = params.inputs;
    oc->outputs         = params.outputs;
    oc->get_opt_pars    = params.get_opt_pars;
    oc->get_opt_pars_ud = params.get_opt_pars_ud;
    oc->apply_nonfinite = params.apply_nonfinite;
    oc->lr_schedule     = params.lr_schedule;
    oc->user_loss       = params.loss != NULL;
    oc->batch_callback    = params.batch_callback;
    oc->batch_callback_ud = params.batch_callback_ud;
    oc->labels          = params.labels;
    if (oc->labels) ggml_set_input(oc->labels);
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
    oc->param_group = ggmlr_calloc(np + 1, sizeof *oc->param_group);
    if (!oc->params || !oc->grad_accs || !oc->grad_m || !oc->grad_v || !oc->param_group) { ggmlr_set_error("ggml_opt_init: out of memory"); goto fail; }
    for (int i = 0, p = 0; i < ggml_graph_n_nodes(oc->gf); i++) {
        struct ggml_tensor * node = ggml_graph_node(oc->gf, i);
        if (!(node->flags & GGML_TENSOR_FLAG_PARAM)) continue;
        if (!node->data) { ggmlr_set_error("ggml_opt_init: parameter '%s' has no memory (allocate it statically)", node->name); goto fail; }
        oc->params[p++] = node;
    }
    if (!assign_groups(oc, &params)) goto fail;
    if (oc->build_type >= GGML_OPT_BUILD_TYPE_GRAD && oc->n_params == 0) {
        ggmlr_set_error("ggml_opt_init: the model has no parameters (mark them with ggml_set_param)");
        goto fail;
    }

    /* labels, loss chain, pred, ncorrect, opt params; per parameter accumulator, m, v, step */
    struct ggml_init_params sp = {(12 + (size_t) oc->n_groups + 4 * np) * ggml_tensor_overhead(), NULL, true};
    oc->ctx_static = ggml_init(sp);
    if (!oc->ctx_static || !build_loss(oc, params.loss)) goto fail;
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

ggml_opt_context_t ggml_opt_init(struct ggml_opt_params params) {
    if (params.ctx_compute || params.inputs || params.outputs) return build_context(params, true);
    /* upstream's non-static mode: the model comes with each ggml_opt_prepare_alloc */
    static const char * fn = "ggml_opt_init";
    if (!params.backend_sched) { ggmlr_set_error("%s: backend_sched is NULL", fn); return NULL; }
    if (params.loss || params.labels) {
        ggmlr_set_error("%s: a loss or labels of the caller's need static graphs (ctx_compute, inputs, outputs)", fn);
        return NULL;
    }
    struct ggml_opt_context * oc = ggmlr_calloc(1, sizeof *oc);
    if (!oc) { ggmlr_set_error("%s: out of memory", fn); return NULL; }
    set_run_state(oc, &params);
    oc->deferred = params;
    return oc;
}

static void free_contents(struct ggml_opt_context * oc) {
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
    free(oc->param_group);
    free(oc->group_pars);
    free(oc->group_lr_scale);
    free(oc->group_wd_scale);
}

void ggml_opt_free(ggml_opt_context_t oc) {
    if (!oc) return;
    free_contents(oc);
    free(oc);
}

/* Non-static mode: a context built for this batch's model (as ggml_opt_init
 * with these tensors would), taking over the state of the last one: the
 * gradient accumulators, the AdamW moments, the step counter, the position
 * in the accumulation period and the RNG. The parameters must be the same
 * (count and shapes) every time. */
void ggml_opt_prepare_alloc(ggml_opt_context_t oc, struct ggml_context * ctx_compute, struct ggml_cgraph * gf, struct ggml_tensor * inputs,
                            struct ggml_tensor * outputs) {
    static const char * fn = "ggml_opt_prepare_alloc";
    if (!oc || !ctx_compute || !gf || !inputs || !outputs) { ggmlr_set_error("%s: an argument is NULL", fn); return; }
    if (oc->static_graphs) { ggmlr_set_error("%s: the context has static graphs (ggml_opt_init was given ctx_compute, inputs, outputs)", fn); return; }
    if (oc->next_graph) { ggmlr_set_error("%s: called between ggml_opt_alloc and ggml_opt_eval", fn); return; }
    if (oc->dist.size > 1) { ggmlr_set_error("%s: data parallelism needs static graphs", fn); return; }
    if (ggmlr_hash_find(gf, outputs) == SIZE_MAX) { ggmlr_set_error("%s: outputs '%s' is not a node of gf", fn, outputs->name); return; }
    struct ggml_opt_params p = oc->deferred;
    p.ctx_compute = ctx_compute;
    p.inputs = inputs;
    p.outputs = outputs;
    struct ggml_opt_context * fresh = build_context(p, false);
    if (!fresh) return;
    if (oc->gf) {
        bool same = fresh->n_params == oc->n_params;
        for (int i = 0; same && i < oc->n_params; i++) same = ggml_are_same_shape(fresh->params[i], oc->params[i]);
        if (!same) {
            ggmlr_set_error("%s: the model's parameters (%d) differ from the last batch's (%d, or their shapes)", fn, fresh->n_params, oc->n_params);
            ggml_opt_free(fresh);
            return;
        }
        struct ggml_tensor ** from[3] = {oc->grad_accs, oc->grad_m, oc->grad_v}, ** to[3] = {fresh->grad_accs, fresh->grad_m, fresh->grad_v};
        for (int k = 0; k < 3; k++) {
            for (int i = 0; i < oc->n_params; i++) {
                if (from[k][i] && to[k][i] && from[k][i]->data && to[k][i]->data) memcpy(to[k][i]->data, from[k][i]->data, ggml_nbytes(to[k][i]));
            }
        }
    }
    fresh->iter = oc->iter;
    fresh->opt_i = oc->opt_i;
    fresh->period_nonfinite = oc->period_nonfinite;
    fresh->rng = oc->rng;
    fresh->last_grad_norm = oc->last_grad_norm;
    fresh->stopped = oc->stopped;
    fresh->deferred = oc->deferred;
    free_contents(oc);
    *oc = *fresh;
    free(fresh);
}

bool ggml_opt_static_graphs(ggml_opt_context_t oc) { return oc && oc->static_graphs; }
struct ggml_tensor * ggml_opt_inputs(ggml_opt_context_t oc)   { return oc ? oc->inputs : NULL; }
struct ggml_tensor * ggml_opt_outputs(ggml_opt_context_t oc)  { return oc ? oc->outputs : NULL; }
struct ggml_tensor * ggml_opt_labels(ggml_opt_context_t oc)   { return oc ? oc->labels : NULL; }
struct ggml_tensor * ggml_opt_loss(ggml_opt_context_t oc)     { return oc ? oc->loss : NULL; }
struct ggml_tensor * ggml_opt_pred(ggml_opt_context_t oc)     { return oc ? oc->pred : NULL; }
struct ggml_tensor * ggml_opt_ncorrect(ggml_opt_context_t oc) { return oc ? oc->ncorrect : NULL; }
enum ggml_opt_optimizer_type ggml_opt_context_optimizer_type(ggml_opt_context_t oc) { return oc ? oc->optimizer : GGML_OPT_OPTIMIZER_TYPE_COUNT; }

static int param_index(const struct ggml_opt_context * oc, const struct ggml_tensor * node) {
    if (!oc || !node) return -1;
    for (int p = 0; p < oc->n_params; p++) if (oc->params[p] == node) return p;
    return -1;
}

struct ggml_tensor * ggml_opt_grad_acc(ggml_opt_context_t oc, struct ggml_tensor * node) {
    const int p = param_index(oc, node);
    return p < 0 ? NULL : oc->grad_accs[p];
}
struct ggml_tensor * ggml_opt_grad_m(ggml_opt_context_t oc, struct ggml_tensor * node) {
    const int p = param_index(oc, node);
    return p < 0 ? NULL : oc->grad_m[p];
}
struct ggml_tensor * ggml_opt_grad_v(ggml_opt_context_t oc, struct ggml_tensor * node) {
    const int p = param_index(oc, node);
    return p < 0 ? NULL : oc->grad_v[p];
}

int64_t ggml_opt_get_steps(ggml_opt_context_t oc) { return oc ? oc->iter - 1 : 0; }
void ggml_opt_set_steps(ggml_opt_context_t oc, int64_t steps) { if (oc && steps >= 0) oc->iter = steps + 1; }
double ggml_opt_last_grad_norm(ggml_opt_context_t oc) { return oc ? oc->last_grad_norm : NAN; }

/* ====== Data parallelism hook (opt_dist.h) ====== */

enum ggml_status ggmlr_opt_set_dist(ggml_opt_context_t oc, const struct ggmlr_opt_dist * d) {
    if (!oc) { ggmlr_set_error("ggmlr_opt_set_dist: context is NULL"); return GGML_STATUS_FAILED; }
    if (d && !oc->static_graphs) { ggmlr_set_error("ggmlr_opt_set_dist: data parallelism needs static graphs"); return GGML_STATUS_FAILED; }
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
    if (!t) return hash_word(h, UINT64_MAX);  /* non-static mode before ggml_opt_prepare_alloc */
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

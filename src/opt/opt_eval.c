/* opt_eval.c -- running an optimization context (ggml-opt.h): ggml_opt_alloc
 * and ggml_opt_eval (the forward pass, the backward pass into the
 * accumulators and, at the end of a period, the host's NaN/Inf check and
 * gradient clipping before the step graph; see opt.c for the graphs), the
 * results they fill, and the loops built on them: ggml_opt_epoch, its
 * progress bar and ggml_opt_fit. */
#include "opt/opt_internal.h"

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
    /* upstream's meaning: with the per-batch losses' variance (Bessel's
     * correction), the standard error of their mean for a mean loss, their
     * standard deviation for SUM */
    const double var = (sum2 / n - mean * mean) * n / (n - 1);
    *unc = r->loss_per_datapoint ? sqrt(var / n) : sqrt(var);
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

enum ggml_status ggml_opt_alloc(ggml_opt_context_t oc, bool backward) {
    if (!oc) { ggmlr_set_error("ggml_opt_alloc: context is NULL"); return GGML_STATUS_FAILED; }
    if (oc->next_graph) { ggmlr_set_error("ggml_opt_alloc: called twice without ggml_opt_eval"); return GGML_STATUS_FAILED; }
    if (!oc->gf) { ggmlr_set_error("ggml_opt_alloc: no model yet (call ggml_opt_prepare_alloc first)"); return GGML_STATUS_FAILED; }
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

/* sum of x[j]^2 in double as 8 interleaved partial sums: a fixed order (the
 * same result every run) in 8 independent chains, which vectorise (3x faster
 * than one chain of dependent additions) */
static double sum_squares(const float * x, int64_t n) {
    double part[8] = {0};
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; k++) part[k] += (double) x[j + k] * x[j + k];
    for (; j < n; j++) part[j % 8] += (double) x[j] * x[j];
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

/* sum of g^2 over all accumulators (NaN/Inf propagate into it) */
static double grad_sum_squares(const struct ggml_opt_context * oc) {
    double s = 0.0;
    for (int p = 0; p < oc->n_params; p++) s += sum_squares(oc->grad_accs[p]->data, ggml_nelements(oc->grad_accs[p]));
    return s;
}

float ggml_opt_lr_schedule_lr(const struct ggml_opt_lr_schedule * ls, float alpha, int64_t step) {
    if (!ls || ls->type != GGML_OPT_LR_SCHEDULE_WARMUP_COSINE) return alpha;
    if (step < ls->warmup) return alpha * (float) (step + 1) / (float) (ls->warmup + 1);
    if (step > ls->decay_steps) return ls->min_lr;
    const int64_t span = ls->decay_steps - ls->warmup;
    const double ratio = (double) (step - ls->warmup) / (double) (span > 0 ? span : 1);
    const double coeff = 0.5 * (1.0 + cos(3.14159265358979323846 * ratio));
    return (float) (ls->min_lr + coeff * (alpha - ls->min_lr));
}

/* The step's parameter vector of each group: the schedule's learning rate
 * and the weight decay, times the group's factors; AdamW's bias corrections
 * of the moments after t steps, 1/(1 - beta^t), in double. */
static void set_group_pars(struct ggml_opt_context * oc, const struct ggml_opt_optimizer_params * p) {
    const int64_t step = oc->iter - 1;
    const bool adamw = oc->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    const float lr = ggml_opt_lr_schedule_lr(&oc->lr_schedule, adamw ? p->adamw.alpha : p->sgd.alpha, step);
    for (int g = 0; g < oc->n_groups; g++) {
        float * par = oc->group_pars[g]->data;
        if (adamw) {
            par[0] = lr * oc->group_lr_scale[g];
            par[1] = p->adamw.beta1;
            par[2] = p->adamw.beta2;
            par[3] = p->adamw.eps;
            par[4] = p->adamw.wd * oc->group_wd_scale[g];
            par[5] = (float) (1.0 / (1.0 - pow(p->adamw.beta1, (double) oc->iter)));
            par[6] = (float) (1.0 / (1.0 - pow(p->adamw.beta2, (double) oc->iter)));
        } else {
            par[0] = lr * oc->group_lr_scale[g];
            par[1] = p->sgd.wd * oc->group_wd_scale[g];
        }
    }
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
    oc->last_grad_norm = norm;
    const bool nonfinite = oc->period_nonfinite || !isfinite(norm);
    if (nonfinite && !oc->apply_nonfinite) {
        ggmlr_set_error("ggml_opt_eval: %s is not finite; the optimizer step was skipped", oc->period_nonfinite ? "the loss" : "a gradient");
        return GGML_STATUS_ABORTED;
    }
    /* torch's clip_grad_norm_: the 1e-6 keeps the scale finite at norm 0 */
    if (p.clip_norm > 0.0f && norm > p.clip_norm) scale_grads(oc, (float) (p.clip_norm / (norm + 1e-6)));
    set_group_pars(oc, &p);
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
    if (!oc->static_graphs) { ggmlr_set_error("%s: needs static graphs (ggml_opt_init with ctx_compute, inputs, outputs)", fn); return GGML_STATUS_FAILED; }
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
    oc->stopped = false;
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
        const int64_t done = train ? ib + 1 : ib + 1 - ibatch_split, of = train ? ibatch_split : nbatches - ibatch_split;
        if (cb) cb(train, oc, ds, train ? result_train : result_eval, done, of, t_start);
        if (oc->batch_callback && !oc->batch_callback(oc->batch_callback_ud, train, oc, train ? result_train : result_eval, done, of)) {
            oc->stopped = true;
            break;
        }
    }
    return worst;
}

/* "hh:mm:ss" into buf */
static const char * hms(char * buf, size_t n, int64_t us) {
    const int64_t s = us / 1000000;
    snprintf(buf, n, "%02" PRId64 ":%02" PRId64 ":%02" PRId64, s / 3600, s / 60 % 60, s % 60);
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
    const int64_t batch = oc && oc->inputs ? oc->inputs->ne[1] * oc->dist.size : 0;
    double loss, loss_unc, acc, acc_unc;
    ggml_opt_result_loss(result, &loss, &loss_unc);
    ggml_opt_result_accuracy(result, &acc, &acc_unc);
    const int64_t elapsed = time_us() - t_start_us;
    ggmlr_log(GGML_LOG_LEVEL_INFO, "%s[%s] data=%07" PRId64 "/%07" PRId64 " loss=%.5f+-%.5f acc=%.2f+-%.2f%% t=%s ETA=%s %s",
              train ? "train: " : "val:   ", bar, ibatch * batch, ibatch_max * batch, loss, loss_unc, 100.0 * acc, 100.0 * acc_unc,
              hms(t, sizeof t, elapsed), hms(eta, sizeof eta, ibatch > 0 ? elapsed * (ibatch_max - ibatch) / ibatch : 0),
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
    /* the epoch, as upstream documents; but ggml_opt_get_constant_optimizer_params
     * reads a whole params struct through its userdata, which would run past
     * the int64_t: it gets NULL instead (its defaults) */
    params.get_opt_pars_ud = get_opt_pars == ggml_opt_get_constant_optimizer_params ? NULL : (void *) &epoch;
    params.optimizer       = optimizer;
    ggml_opt_context_t oc = ggml_opt_init(params);
    ggml_opt_result_t result_train = ggml_opt_result_init(), result_val = ggml_opt_result_init();
    enum ggml_status worst = oc && result_train && result_val ? GGML_STATUS_SUCCESS : GGML_STATUS_FAILED;
    /* shuffling only matters when a batch is not the whole dataset */
    if (worst == GGML_STATUS_SUCCESS && nbatch_logical < ndata) worst = ggml_opt_dataset_shuffle(oc, ds, -1);
    ggml_opt_epoch_callback cb = silent ? NULL : ggml_opt_epoch_callback_progress_bar;
    for (; epoch <= nepoch && (worst == GGML_STATUS_SUCCESS || worst == GGML_STATUS_ABORTED) && !oc->stopped; epoch++) {
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
        ggmlr_log(GGML_LOG_LEVEL_INFO, "%s: training took %s\n", fn, hms(t, sizeof t, time_us() - t_fit_start));
    }
    ggml_opt_free(oc);
    ggml_opt_result_free(result_train);
    ggml_opt_result_free(result_val);
    return worst;
}

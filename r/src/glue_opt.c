/* glue_opt.c -- training objects (ggml-opt.h) and the backend scheduler.
 *
 * Lifetimes:
 *  - A scheduler record is shared by its handle and every optimization
 *    context using it (a count); the C scheduler is freed when the last one
 *    lets go, so ggml_backend_sched_free on the handle cannot pull it from
 *    under an optimization context. The handle keeps its backends' handles;
 *    every compute checks that they are still alive.
 *  - An optimization context pins ctx_compute (its memory stays until the
 *    optimization context is freed: the scheduler's bookkeeping points at its
 *    tensors), holds a reference on the scheduler, and keeps both handles.
 *  - Datasets and results own their memory. A dataset's and an optimization
 *    context's own tensors are tensor handles owned by them.
 *  - get_opt_pars is an R function, run inside the optimizer step (on the
 *    calling thread) through R_tryEvalSilent: an R error there cannot jump
 *    over the library's bookkeeping; it is reported once the call returns.
 */
#include "glue.h"

#include "ggml-opt.h"

#include <R_ext/Utils.h>
#include <stdlib.h>
#include <string.h>

#define CLS_SCHED   "ggml_backend_sched"
#define CLS_DATASET "ggml_opt_dataset"
#define CLS_RESULT  "ggml_opt_result"
#define CLS_OPT     "ggml_opt_context"

/* ---- scheduler ---- */

typedef struct {
    ggml_backend_sched_t sched;
    int refs;  /* the handle, plus one per optimization context */
} rg_sched;

static void sched_unref(rg_sched * s) {
    if (--s->refs > 0) return;
    ggml_backend_sched_free(s->sched);
    free(s);
}

static void sched_release(SEXP x) {
    rg_sched * s = R_ExternalPtrAddr(x);
    if (!s) return;
    R_ClearExternalPtr(x);
    sched_unref(s);
}

/* Every backend of the scheduler (kept in the handle) must still be alive. */
static void sched_check_backends(SEXP sched_handle) {
    SEXP backends = R_ExternalPtrProtected(sched_handle);
    for (R_xlen_t i = 0; i < XLENGTH(backends); i++) {
        if (!R_ExternalPtrAddr(VECTOR_ELT(backends, i)))
            Rf_error("backend %lld of the scheduler has been freed (ggml_backend_free)", (long long) i + 1);
    }
}

SEXP R_ggml_backend_sched_new(SEXP backends, SEXP graph_size) {
    if (TYPEOF(backends) != VECSXP || XLENGTH(backends) < 1 || XLENGTH(backends) > 16)
        Rf_error("'backends' must be a list of 1 to 16 ggml backends");
    const R_xlen_t n = XLENGTH(backends);
    ggml_backend_t * bes = (ggml_backend_t *) R_alloc((size_t) n, sizeof *bes);
    for (R_xlen_t i = 0; i < n; i++) bes[i] = rg_backend_get(VECTOR_ELT(backends, i), "backends");
    const size_t gs = (size_t) rg_count(graph_size, "graph_size");
    SEXP keep = PROTECT(Rf_duplicate(backends));
    SEXP x = PROTECT(rg_object_handle(CLS_SCHED, keep, sched_release));
    rg_sched * s = calloc(1, sizeof *s);
    if (!s) Rf_error("ggml_backend_sched_new: out of memory");
    s->refs = 1;
    R_SetExternalPtrAddr(x, s);
    ggml_clear_error();
    s->sched = ggml_backend_sched_new(bes, NULL, (int) n, gs, false, true);
    if (!s->sched) {
        sched_release(x);
        rg_fail("ggml_backend_sched_new");
    }
    UNPROTECT(2);
    return x;
}

SEXP R_ggml_backend_sched_free(SEXP sched) { return rg_object_free(sched, CLS_SCHED, "sched", sched_release); }

SEXP R_ggml_backend_sched_get_n_backends(SEXP sched) {
    return Rf_ScalarInteger(ggml_backend_sched_get_n_backends(((rg_sched *) rg_object_get(sched, CLS_SCHED, "sched"))->sched));
}

SEXP R_ggml_backend_sched_get_graph_size(SEXP sched) {
    return rg_size_sexp((double) ggml_backend_sched_get_graph_size(((rg_sched *) rg_object_get(sched, CLS_SCHED, "sched"))->sched));
}

SEXP R_ggml_backend_sched_reset(SEXP sched) {
    ggml_backend_sched_reset(((rg_sched *) rg_object_get(sched, CLS_SCHED, "sched"))->sched);
    return sched;
}

/* ---- datasets ---- */

static void dataset_release(SEXP x) {
    ggml_opt_dataset_t ds = R_ExternalPtrAddr(x);
    if (!ds) return;
    R_ClearExternalPtr(x);
    ggml_opt_dataset_free(ds);
}

SEXP R_ggml_opt_dataset_init(SEXP type_data, SEXP type_label, SEXP ne_datapoint, SEXP ne_label, SEXP ndata, SEXP ndata_shard) {
    const enum ggml_type td = rg_type(type_data, "type_data"), tl = rg_type(type_label, "type_label");
    const int64_t nd = rg_count(ne_datapoint, "ne_datapoint"), nl = rg_count(ne_label, "ne_label");
    const int64_t n = rg_count(ndata, "ndata"), ns = rg_count(ndata_shard, "ndata_shard");
    SEXP x = PROTECT(rg_object_handle(CLS_DATASET, R_NilValue, dataset_release));
    ggml_clear_error();
    rg_object_set(x, ggml_opt_dataset_init(td, tl, nd, nl, n, ns), "ggml_opt_dataset_init");
    UNPROTECT(1);
    return x;
}

SEXP R_ggml_opt_dataset_free(SEXP dataset) { return rg_object_free(dataset, CLS_DATASET, "dataset", dataset_release); }

SEXP R_ggml_opt_dataset_ndata(SEXP dataset) {
    return rg_size_sexp((double) ggml_opt_dataset_ndata(rg_object_get(dataset, CLS_DATASET, "dataset")));
}

SEXP R_ggml_opt_dataset_data(SEXP dataset) {
    return rg_tensor_wrap(ggml_opt_dataset_data(rg_object_get(dataset, CLS_DATASET, "dataset")), dataset);
}

SEXP R_ggml_opt_dataset_labels(SEXP dataset) {
    return rg_tensor_wrap(ggml_opt_dataset_labels(rg_object_get(dataset, CLS_DATASET, "dataset")), dataset);
}

SEXP R_ggml_opt_dataset_get_batch(SEXP dataset, SEXP data_batch, SEXP labels_batch, SEXP ibatch) {
    ggml_opt_dataset_t ds = rg_object_get(dataset, CLS_DATASET, "dataset");
    struct ggml_tensor * d = rg_tensor_get(data_batch, "data_batch", 0);
    struct ggml_tensor * l = rg_tensor_get(labels_batch, "labels_batch", 1);
    const int64_t ib = rg_count(ibatch, "ibatch");
    ggml_clear_error();
    rg_check_status(ggml_opt_dataset_get_batch(ds, d, l, ib), "ggml_opt_dataset_get_batch");
    return R_NilValue;
}

/* ---- results ---- */

static void result_release(SEXP x) {
    ggml_opt_result_t r = R_ExternalPtrAddr(x);
    if (!r) return;
    R_ClearExternalPtr(x);
    ggml_opt_result_free(r);
}

SEXP R_ggml_opt_result_init(void) {
    SEXP x = PROTECT(rg_object_handle(CLS_RESULT, R_NilValue, result_release));
    ggml_clear_error();
    rg_object_set(x, ggml_opt_result_init(), "ggml_opt_result_init");
    UNPROTECT(1);
    return x;
}

SEXP R_ggml_opt_result_free(SEXP result) { return rg_object_free(result, CLS_RESULT, "result", result_release); }

SEXP R_ggml_opt_result_reset(SEXP result) {
    ggml_opt_result_reset(rg_object_get(result, CLS_RESULT, "result"));
    return result;
}

SEXP R_ggml_opt_result_ndata(SEXP result) {
    int64_t n = 0;
    ggml_opt_result_ndata(rg_object_get(result, CLS_RESULT, "result"), &n);
    return rg_size_sexp((double) n);
}

SEXP R_ggml_opt_result_nonfinite(SEXP result) {
    int64_t n = 0;
    ggml_opt_result_nonfinite(rg_object_get(result, CLS_RESULT, "result"), &n);
    return rg_size_sexp((double) n);
}

/* c(value, uncertainty) */
static SEXP pair(double v, double unc) {
    SEXP out = PROTECT(Rf_allocVector(REALSXP, 2));
    REAL(out)[0] = v;
    REAL(out)[1] = unc;
    UNPROTECT(1);
    return out;
}

SEXP R_ggml_opt_result_loss(SEXP result) {
    double v = 0, unc = 0;
    ggml_opt_result_loss(rg_object_get(result, CLS_RESULT, "result"), &v, &unc);
    return pair(v, unc);
}

SEXP R_ggml_opt_result_accuracy(SEXP result) {
    double v = 0, unc = 0;
    ggml_opt_result_accuracy(rg_object_get(result, CLS_RESULT, "result"), &v, &unc);
    return pair(v, unc);
}

SEXP R_ggml_opt_result_pred(SEXP result) {
    ggml_opt_result_t r = rg_object_get(result, CLS_RESULT, "result");
    int64_t n = 0;
    ggml_opt_result_ndata(r, &n);
    if (n > R_XLEN_T_MAX) Rf_error("ggml_opt_result_pred: too many datapoints");
    SEXP out = PROTECT(Rf_allocVector(INTSXP, (R_xlen_t) n));
    if (n > 0) ggml_opt_result_pred(r, INTEGER(out));
    UNPROTECT(1);
    return out;
}

/* ---- optimization contexts ---- */

/* Optimizer parameters as R hands them to C: alpha, beta1, beta2, eps, wd
 * (AdamW), alpha, wd (SGD), clip_norm. */
#define N_OPT_PARS 8

typedef struct {
    ggml_opt_context_t oc;
    rg_sched * sched;
    rg_ctx * compute;
    SEXP get_opt_pars;  /* function(ud) returning N_OPT_PARS numbers; kept alive by the handle */
    SEXP ud;
    int pars_failed;    /* get_opt_pars failed during the last call */
    int pars_held;      /* the steps of a run of batches reuse `last` (set by epoch_batches, reset by every entry) */
    char pars_error[512];
    struct ggml_opt_optimizer_params last;  /* what the last successful call gave */
} rg_opt;

static void pars_from(const double * v, struct ggml_opt_optimizer_params * p) {
    p->adamw.alpha = (float) v[0]; p->adamw.beta1 = (float) v[1]; p->adamw.beta2 = (float) v[2];
    p->adamw.eps = (float) v[3]; p->adamw.wd = (float) v[4];
    p->sgd.alpha = (float) v[5]; p->sgd.wd = (float) v[6];
    p->clip_norm = (float) v[7];
}

static void pars_to(const struct ggml_opt_optimizer_params * p, double * v) {
    v[0] = p->adamw.alpha; v[1] = p->adamw.beta1; v[2] = p->adamw.beta2; v[3] = p->adamw.eps; v[4] = p->adamw.wd;
    v[5] = p->sgd.alpha; v[6] = p->sgd.wd; v[7] = p->clip_norm;
}

/* The C callback: evaluate get_opt_pars(ud) without letting an R error (or
 * an interrupt) jump out of the library. On failure it remembers why and
 * hands back the last good parameters; eval() signals the error once the
 * library has returned. */
static struct ggml_opt_optimizer_params call_get_opt_pars(void * userdata) {
    rg_opt * o = userdata;
    if (o->pars_held) return o->last;
    int err = 0;
    SEXP call = PROTECT(Rf_lang2(o->get_opt_pars, o->ud));
    SEXP v = PROTECT(R_tryEvalSilent(call, R_GlobalEnv, &err));
    if (err || TYPEOF(v) != REALSXP || XLENGTH(v) != N_OPT_PARS) {
        if (!o->pars_failed) {
            snprintf(o->pars_error, sizeof o->pars_error, "%s", err ? R_curErrorBuf() : "get_opt_pars must return 8 numbers");
            o->pars_failed = 1;
        }
    } else {
        pars_from(REAL(v), &o->last);
    }
    UNPROTECT(2);
    return o->last;
}

static void opt_release(SEXP x) {
    rg_opt * o = R_ExternalPtrAddr(x);
    if (!o) return;
    R_ClearExternalPtr(x);
    ggml_opt_free(o->oc);     /* resets the scheduler: needs it and ctx_compute's tensors */
    sched_unref(o->sched);
    rg_ctx_unpin(o->compute);
    free(o);
}

/* The live optimization context behind x, with its backends alive. */
static rg_opt * opt_get(SEXP x) {
    rg_opt * o = rg_object_get(x, CLS_OPT, "opt_ctx");
    sched_check_backends(VECTOR_ELT(R_ExternalPtrProtected(x), 0));
    return o;
}

/* A learning-rate schedule from c(type, warmup, decay_steps, min_lr) (R/opt.R's .lr_schedule_vector). */
static struct ggml_opt_lr_schedule schedule_from(SEXP sc, const char * arg) {
    if (TYPEOF(sc) != REALSXP || XLENGTH(sc) != 4 || !rg_is_int32(REAL(sc)[0])) Rf_error("'%s' is malformed", arg);
    const double * v = REAL(sc);
    return (struct ggml_opt_lr_schedule) {.type = (enum ggml_opt_lr_schedule_type) (int) v[0], .warmup = rg_count_value(v[1], "warmup"),
                                          .decay_steps = rg_count_value(v[2], "decay_steps"), .min_lr = (float) v[3]};
}

/* The extensions of ggml_opt_params from ext = list(loss, labels, groups,
 * schedule) (see ggml_opt_init in R/opt.R): groups a list of
 * list(params = list of tensors, lr_scale, wd_scale), schedule
 * c(type, warmup, decay_steps, min_lr). The group arrays live until the
 * .Call returns; ggml_opt_init copies what it keeps. */
static void opt_extensions(SEXP ext, struct ggml_opt_params * p, struct ggml_opt_param_group ** groups) {
    if (TYPEOF(ext) != VECSXP || XLENGTH(ext) != 4) Rf_error("ggml_opt_init: 'params' extensions are malformed");
    p->loss = rg_tensor_get(VECTOR_ELT(ext, 0), "params$loss", 1);
    p->labels = rg_tensor_get(VECTOR_ELT(ext, 1), "params$labels", 1);
    SEXP gs = VECTOR_ELT(ext, 2), sc = VECTOR_ELT(ext, 3);
    if (gs != R_NilValue) {
        if (TYPEOF(gs) != VECSXP) Rf_error("'params$param_groups' must be a list of groups");
        const R_xlen_t n = XLENGTH(gs);
        if (n > INT32_MAX) Rf_error("'params$param_groups': too many groups");
        *groups = (struct ggml_opt_param_group *) R_alloc((size_t) n + 1, sizeof **groups);
        for (R_xlen_t g = 0; g < n; g++) {
            SEXP e = VECTOR_ELT(gs, g);
            if (TYPEOF(e) != VECSXP || XLENGTH(e) != 3) Rf_error("'params$param_groups[[%ld]]' must be list(params, lr_scale, wd_scale)", (long) g + 1);
            SEXP ts = VECTOR_ELT(e, 0);
            if (TYPEOF(ts) != VECSXP || XLENGTH(ts) > INT32_MAX) Rf_error("'params$param_groups[[%ld]]$params' must be a list of tensors", (long) g + 1);
            struct ggml_tensor ** t = (struct ggml_tensor **) R_alloc((size_t) XLENGTH(ts) + 1, sizeof *t);
            for (R_xlen_t j = 0; j < XLENGTH(ts); j++) t[j] = rg_tensor_get(VECTOR_ELT(ts, j), "a group's tensor", 0);
            (*groups)[g] = (struct ggml_opt_param_group) {.params = t, .n_params = (int32_t) XLENGTH(ts),
                                                          .lr_scale = rg_float(VECTOR_ELT(e, 1), "lr_scale"),
                                                          .wd_scale = rg_float(VECTOR_ELT(e, 2), "wd_scale")};
        }
        p->param_groups = *groups;
        p->n_param_groups = (int32_t) n;
    }
    if (sc != R_NilValue) p->lr_schedule = schedule_from(sc, "params$lr_schedule");
}

/* params: the list made by ggml_opt_default_params (checked by the R code);
 * prot slots of the handle: 0 scheduler, 1 ctx_compute, 2 get_opt_pars, 3 ud,
 * 4 the extensions (their tensors' handles keep the contexts alive). */
SEXP R_ggml_opt_init(SEXP sched, SEXP ctx_compute, SEXP inputs, SEXP outputs, SEXP ints, SEXP get_opt_pars, SEXP ud, SEXP seed, SEXP ext) {
    rg_sched * s = rg_object_get(sched, CLS_SCHED, "backend_sched");
    sched_check_backends(sched);
    /* no ctx_compute, inputs, outputs: upstream's non-static mode, the model
     * comes with each ggml_opt_prepare_alloc */
    const bool per_batch = ctx_compute == R_NilValue && inputs == R_NilValue && outputs == R_NilValue;
    rg_ctx * c = per_batch ? NULL : rg_ctx_get(ctx_compute, "ctx_compute");
    struct ggml_tensor * in = per_batch ? NULL : rg_tensor_arg(c, inputs, "inputs", 0);
    struct ggml_tensor * out = per_batch ? NULL : rg_tensor_arg(c, outputs, "outputs", 0);
    if (TYPEOF(ints) != VECSXP || XLENGTH(ints) != 5) Rf_error("ggml_opt_init: 'params' is malformed");
    struct ggml_opt_params p = ggml_opt_default_params(s->sched, GGML_OPT_LOSS_TYPE_MEAN);
    p.ctx_compute = c ? c->ctx : NULL;
    p.inputs = in;
    p.outputs = out;
    p.loss_type = (enum ggml_opt_loss_type) rg_int(VECTOR_ELT(ints, 0), "loss_type");
    p.build_type = (enum ggml_opt_build_type) rg_int(VECTOR_ELT(ints, 1), "build_type");
    p.opt_period = rg_int(VECTOR_ELT(ints, 2), "opt_period");
    p.optimizer = (enum ggml_opt_optimizer_type) rg_int(VECTOR_ELT(ints, 3), "optimizer");
    p.apply_nonfinite = rg_bool(VECTOR_ELT(ints, 4), "apply_nonfinite");
    p.seed = (uint64_t) rg_count(seed, "seed");
    if (!Rf_isFunction(get_opt_pars)) Rf_error("'get_opt_pars' must be a function");
    struct ggml_opt_param_group * groups = NULL;
    opt_extensions(ext, &p, &groups);

    SEXP prot = PROTECT(Rf_allocVector(VECSXP, 5));
    SET_VECTOR_ELT(prot, 0, sched);
    SET_VECTOR_ELT(prot, 1, ctx_compute);
    SET_VECTOR_ELT(prot, 2, get_opt_pars);
    SET_VECTOR_ELT(prot, 3, ud);
    SET_VECTOR_ELT(prot, 4, ext);
    SEXP x = PROTECT(rg_object_handle(CLS_OPT, prot, opt_release));
    rg_opt * o = calloc(1, sizeof *o);
    if (!o) Rf_error("ggml_opt_init: out of memory");
    o->get_opt_pars = get_opt_pars;
    o->ud = ud;
    o->last = ggml_opt_get_default_optimizer_params(NULL);
    p.get_opt_pars = call_get_opt_pars;
    p.get_opt_pars_ud = o;
    ggml_clear_error();
    o->oc = ggml_opt_init(p);
    if (!o->oc) {
        free(o);
        rg_fail("ggml_opt_init");
    }
    o->sched = s;
    s->refs++;
    o->compute = c;
    if (c) rg_ctx_pin(c);
    R_SetExternalPtrAddr(x, o);
    UNPROTECT(2);
    return x;
}

/* Non-static mode: this batch's model. The new ctx_compute is pinned (and
 * held in prot slot 1) in place of the last one, which the context needed
 * until now. */
SEXP R_ggml_opt_prepare_alloc(SEXP opt_ctx, SEXP ctx_compute, SEXP graph, SEXP inputs, SEXP outputs) {
    rg_opt * o = opt_get(opt_ctx);
    rg_ctx * c = rg_ctx_get(ctx_compute, "ctx_compute");
    struct ggml_cgraph * gf = rg_graph_get(graph, "graph");
    struct ggml_tensor * in = rg_tensor_arg(c, inputs, "inputs", 0);
    struct ggml_tensor * out = rg_tensor_arg(c, outputs, "outputs", 0);
    ggml_clear_error();
    ggml_opt_prepare_alloc(o->oc, c->ctx, gf, in, out);
    if (ggml_last_error()[0]) rg_fail("ggml_opt_prepare_alloc");
    rg_ctx_pin(c);
    rg_ctx_unpin(o->compute);
    o->compute = c;
    SET_VECTOR_ELT(R_ExternalPtrProtected(opt_ctx), 1, ctx_compute);
    return opt_ctx;
}

SEXP R_ggml_opt_free(SEXP opt_ctx) { return rg_object_free(opt_ctx, CLS_OPT, "opt_ctx", opt_release); }

SEXP R_ggml_opt_reset(SEXP opt_ctx, SEXP optimizer) {
    rg_opt * o = rg_object_get(opt_ctx, CLS_OPT, "opt_ctx");
    ggml_opt_reset(o->oc, rg_bool(optimizer, "optimizer"));
    return opt_ctx;
}

SEXP R_ggml_opt_static_graphs(SEXP opt_ctx) {
    return Rf_ScalarLogical(ggml_opt_static_graphs(((rg_opt *) rg_object_get(opt_ctx, CLS_OPT, "opt_ctx"))->oc));
}

SEXP R_ggml_opt_context_optimizer_type(SEXP opt_ctx) {
    return Rf_ScalarInteger((int) ggml_opt_context_optimizer_type(((rg_opt *) rg_object_get(opt_ctx, CLS_OPT, "opt_ctx"))->oc));
}

SEXP R_ggml_opt_optimizer_name(SEXP optimizer) {
    const int t = rg_int(optimizer, "optimizer");
    if (t < 0 || t >= GGML_OPT_OPTIMIZER_TYPE_COUNT) Rf_error("'optimizer' must be GGML_OPT_OPTIMIZER_TYPE_ADAMW or _SGD (got %d)", t);
    return Rf_mkString(ggml_opt_optimizer_name((enum ggml_opt_optimizer_type) t));
}

/* The context's tensors: inputs and outputs belong to ctx_compute, the rest
 * (labels, loss, predictions, accumulators) to the optimization context. */
SEXP R_ggml_opt_tensor(SEXP opt_ctx, SEXP which) {
    rg_opt * o = rg_object_get(opt_ctx, CLS_OPT, "opt_ctx");
    const char * w = rg_string(which, "which");
    SEXP compute = VECTOR_ELT(R_ExternalPtrProtected(opt_ctx), 1);
    if (!strcmp(w, "inputs"))   return rg_tensor_wrap(ggml_opt_inputs(o->oc), compute);
    if (!strcmp(w, "outputs"))  return rg_tensor_wrap(ggml_opt_outputs(o->oc), compute);
    if (!strcmp(w, "labels"))   return rg_tensor_wrap(ggml_opt_labels(o->oc), opt_ctx);
    if (!strcmp(w, "loss"))     return rg_tensor_wrap(ggml_opt_loss(o->oc), opt_ctx);
    if (!strcmp(w, "pred"))     return rg_tensor_wrap(ggml_opt_pred(o->oc), opt_ctx);
    if (!strcmp(w, "ncorrect")) return rg_tensor_wrap(ggml_opt_ncorrect(o->oc), opt_ctx);
    Rf_error("unknown optimization context tensor '%s'", w);
}

SEXP R_ggml_opt_grad_acc(SEXP opt_ctx, SEXP node) {
    rg_opt * o = rg_object_get(opt_ctx, CLS_OPT, "opt_ctx");
    return rg_tensor_wrap(ggml_opt_grad_acc(o->oc, rg_tensor_get(node, "node", 0)), opt_ctx);
}

/* The AdamW moments of a parameter (which = "m" or "v"). */
SEXP R_ggml_opt_grad_moment(SEXP opt_ctx, SEXP node, SEXP which) {
    rg_opt * o = rg_object_get(opt_ctx, CLS_OPT, "opt_ctx");
    struct ggml_tensor * t = rg_tensor_get(node, "node", 0);
    return rg_tensor_wrap(strcmp(rg_string(which, "which"), "m") == 0 ? ggml_opt_grad_m(o->oc, t) : ggml_opt_grad_v(o->oc, t), opt_ctx);
}

SEXP R_ggml_opt_get_steps(SEXP opt_ctx) {
    return rg_size_sexp((double) ggml_opt_get_steps(((rg_opt *) rg_object_get(opt_ctx, CLS_OPT, "opt_ctx"))->oc));
}

SEXP R_ggml_opt_set_steps(SEXP opt_ctx, SEXP steps) {
    ggml_opt_set_steps(((rg_opt *) rg_object_get(opt_ctx, CLS_OPT, "opt_ctx"))->oc, rg_count(steps, "steps"));
    return opt_ctx;
}

SEXP R_ggml_opt_last_grad_norm(SEXP opt_ctx) {
    return Rf_ScalarReal(ggml_opt_last_grad_norm(((rg_opt *) rg_object_get(opt_ctx, CLS_OPT, "opt_ctx"))->oc));
}

SEXP R_ggml_opt_lr_schedule_lr(SEXP schedule, SEXP alpha, SEXP step) {
    const struct ggml_opt_lr_schedule s = schedule_from(schedule, "schedule");
    return Rf_ScalarReal(ggml_opt_lr_schedule_lr(&s, rg_float(alpha, "alpha"), rg_count(step, "step")));
}

SEXP R_ggml_opt_alloc(SEXP opt_ctx, SEXP backward) {
    rg_opt * o = opt_get(opt_ctx);
    const int b = rg_bool(backward, "backward");
    ggml_clear_error();
    rg_check_status(ggml_opt_alloc(o->oc, b), "ggml_opt_alloc");
    return opt_ctx;
}

/* ggml_opt_eval; GGML_STATUS_ABORTED (a loss or gradient was not finite) is
 * returned, not an error: an epoch carries on after it. */
static enum ggml_status eval(rg_opt * o, ggml_opt_result_t r) {
    o->pars_failed = 0;
    o->pars_held = 0;
    ggml_clear_error();
    const enum ggml_status st = ggml_opt_eval(o->oc, r);
    if (o->pars_failed) Rf_error("ggml_opt_eval: get_opt_pars failed: %s", o->pars_error);
    if (st != GGML_STATUS_SUCCESS && st != GGML_STATUS_ABORTED) rg_check_status(st, "ggml_opt_eval");
    return st;
}

static ggml_opt_result_t result_or_null(SEXP result) {
    return result == R_NilValue ? NULL : rg_object_get(result, CLS_RESULT, "result");
}

SEXP R_ggml_opt_eval(SEXP opt_ctx, SEXP result) {
    rg_opt * o = opt_get(opt_ctx);
    ggml_opt_result_t r = result_or_null(result);
    return Rf_ScalarInteger((int) eval(o, r));
}

/* n batches from ibatch on in one call, R called once: get_opt_pars is
 * evaluated at the start and its parameters hold for the run (R code runs
 * only between runs, so it could not have changed them), and an interrupt
 * is taken between batches only. Returns the worst status. */
SEXP R_ggml_opt_epoch_batches(SEXP opt_ctx, SEXP dataset, SEXP result, SEXP ibatch, SEXP n_batches, SEXP train) {
    rg_opt * o = opt_get(opt_ctx);
    ggml_opt_dataset_t ds = rg_object_get(dataset, CLS_DATASET, "dataset");
    ggml_opt_result_t r = result_or_null(result);
    const int64_t first = rg_count(ibatch, "ibatch"), n = rg_count(n_batches, "n_batches");
    const int backward = rg_bool(train, "train");
    if (first + n > ggml_opt_dataset_ndata(ds) / ggml_opt_inputs(o->oc)->ne[1]) Rf_error("ggml_opt_epoch: batches past the dataset's end");
    o->pars_failed = 0;
    o->pars_held = 0;
    call_get_opt_pars(o);
    if (o->pars_failed) Rf_error("ggml_opt_eval: get_opt_pars failed: %s", o->pars_error);
    enum ggml_status worst = GGML_STATUS_SUCCESS;
    for (int64_t ib = first; ib < first + n; ib++) {
        R_CheckUserInterrupt();  /* between batches: no graph is chosen and left unrun */
        ggml_clear_error();
        rg_check_status(ggml_opt_dataset_get_batch(ds, ggml_opt_inputs(o->oc), ggml_opt_labels(o->oc), ib), "ggml_opt_epoch");
        rg_check_status(ggml_opt_alloc(o->oc, backward), "ggml_opt_epoch");
        o->pars_held = 1;
        const enum ggml_status st = ggml_opt_eval(o->oc, r);
        o->pars_held = 0;
        if (st != GGML_STATUS_SUCCESS && st != GGML_STATUS_ABORTED) rg_check_status(st, "ggml_opt_eval");
        if (st > worst) worst = st;
    }
    return Rf_ScalarInteger((int) worst);
}

SEXP R_ggml_opt_dataset_shuffle(SEXP opt_ctx, SEXP dataset, SEXP idata) {
    rg_opt * o = rg_object_get(opt_ctx, CLS_OPT, "opt_ctx");
    ggml_opt_dataset_t ds = rg_object_get(dataset, CLS_DATASET, "dataset");
    const double v = rg_double(idata, "idata");
    const int64_t n = v < 0 ? -1 : rg_count_value(v, "idata");
    ggml_clear_error();
    rg_check_status(ggml_opt_dataset_shuffle(o->oc, ds, n), "ggml_opt_dataset_shuffle");
    return R_NilValue;
}

SEXP R_ggml_opt_default_optimizer_params(void) {
    const struct ggml_opt_optimizer_params p = ggml_opt_get_default_optimizer_params(NULL);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, N_OPT_PARS));
    pars_to(&p, REAL(out));
    UNPROTECT(1);
    return out;
}

/* train.c -- the character model's training through ggml-opt (see train.h):
 * the optimization context runs forward + backward into its accumulators,
 * then (ggml_opt_eval at the end of each step) the global gradient norm,
 * clipping, the NaN/Inf check and AdamW with nanoGPT's schedule, the LayerNorm
 * gains in a parameter group without weight decay. */
#include "train.h"

#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ggml_opt_lr_schedule train_schedule(const struct train_opts * o) {
    return (struct ggml_opt_lr_schedule) {.type = GGML_OPT_LR_SCHEDULE_WARMUP_COSINE, .warmup = o->warmup, .decay_steps = o->decay_iters,
                                          .min_lr = o->min_lr};
}

float train_lr(const struct train_opts * o, int64_t step) {
    const struct ggml_opt_lr_schedule s = train_schedule(o);
    return ggml_opt_lr_schedule_lr(&s, o->lr, step);
}

static bool fail(const char * what) {
    fprintf(stderr, "error: %s: %s\n", what, ggml_last_error());
    return false;
}

/* The optimizer's constants; the schedule scales alpha (the peak) per step. */
static struct ggml_opt_optimizer_params adamw_params(void * userdata) {
    const struct trainer * t = userdata;
    struct ggml_opt_optimizer_params p = ggml_opt_get_default_optimizer_params(NULL);
    p.adamw.alpha = t->o.lr;
    p.adamw.beta1 = t->o.beta1;
    p.adamw.beta2 = t->o.beta2;
    p.adamw.eps = t->o.eps;
    p.adamw.wd = t->o.weight_decay;
    p.clip_norm = t->o.clip;
    return p;
}

/* The optimization context over the model: its moments start from the
 * model's and take the checkpoint's names. */
static bool build_opt(struct trainer * t) {
    struct gpt_model * m = t->model;
    struct ggml_tensor ** no_decay = calloc((size_t) m->n_params, sizeof *no_decay);
    if (!no_decay) { fprintf(stderr, "error: out of memory\n"); return false; }
    int n_no_decay = 0;
    for (int i = 0; i < m->n_params; i++) if (!m->params[i].decays) no_decay[n_no_decay++] = m->params[i].w;
    const struct ggml_opt_param_group gains = {.params = no_decay, .n_params = n_no_decay, .lr_scale = 1.0f, .wd_scale = 0.0f};
    struct ggml_opt_params p = ggml_opt_default_params(t->sched, GGML_OPT_LOSS_TYPE_MEAN);
    p.ctx_compute = t->ctx_compute;
    p.inputs = t->io.tokens;
    p.outputs = t->io.logits;
    p.loss = t->io.loss;
    p.labels = t->io.targets;
    p.get_opt_pars = adamw_params;
    p.get_opt_pars_ud = t;
    p.param_groups = &gains;
    p.n_param_groups = 1;
    p.lr_schedule = train_schedule(&t->o);
    t->opt = ggml_opt_init(p);
    free(no_decay);
    if (!t->opt) return fail("building the training graphs");
    t->adam_m = calloc((size_t) m->n_params, sizeof *t->adam_m);
    t->adam_v = calloc((size_t) m->n_params, sizeof *t->adam_v);
    if (!t->adam_m || !t->adam_v) { fprintf(stderr, "error: out of memory\n"); return false; }
    for (int i = 0; i < m->n_params; i++) {
        const struct gpt_param * q = &m->params[i];
        t->adam_m[i] = ggml_opt_grad_m(t->opt, q->w);
        t->adam_v[i] = ggml_opt_grad_v(t->opt, q->w);
        if (!t->adam_m[i] || !t->adam_v[i]) { fprintf(stderr, "error: parameter %s is not in the graph\n", ggml_get_name(q->w)); return false; }
        memcpy(t->adam_m[i]->data, q->adam_m->data, ggml_nbytes(q->adam_m));
        memcpy(t->adam_v[i]->data, q->adam_v->data, ggml_nbytes(q->adam_v));
        ggml_set_name(t->adam_m[i], ggml_get_name(q->adam_m));
        ggml_set_name(t->adam_v[i], ggml_get_name(q->adam_v));
    }
    return true;
}

bool trainer_init(struct trainer * t, struct gpt_model * m, const struct corpus * data, const struct train_opts * o) {
    memset(t, 0, sizeof *t);
    t->model = m; t->data = data; t->o = *o;
    t->ranks = 1;
    const int64_t need = (int64_t) o->n_ctx + 2;
    if (data->n_train < need || data->n - data->n_train < need) {
        fprintf(stderr, "error: the text is too short: each split needs at least %lld characters\n", (long long) need);
        return false;
    }
    const size_t graph_size = 16384;
    t->backend = ggml_backend_cpu_init();
    if (!t->backend) return fail("the CPU backend");
    ggml_backend_cpu_set_n_threads(t->backend, o->threads);
    t->sched = ggml_backend_sched_new(&t->backend, NULL, 1, graph_size, false, true);
    struct ggml_init_params io_params = {4 * ggml_tensor_overhead(), NULL, true};
    struct ggml_init_params compute_params = {ggml_tensor_overhead() * graph_size, NULL, true};
    t->ctx_io = ggml_init(io_params);
    t->ctx_compute = ggml_init(compute_params);
    if (!t->sched || !t->ctx_io || !t->ctx_compute) return fail("ggml_init");
    const struct gpt_build_opts build = {o->fused, o->prec};
    if (!gpt_build(m, t->ctx_io, t->ctx_compute, o->batch, o->n_ctx, &build, &t->io)) return false;
    t->io_buffer = ggml_backend_alloc_ctx_tensors(t->ctx_io, t->backend);
    if (!t->io_buffer) return fail("allocating the inputs");
    gpt_graph_set_mask(&t->io);
    return build_opt(t);
}

void trainer_free(struct trainer * t) {
    ggml_opt_free(t->opt);
    free(t->adam_m);
    free(t->adam_v);
    if (t->io_buffer) ggml_backend_buffer_free(t->io_buffer);
    ggml_free(t->ctx_compute);
    ggml_free(t->ctx_io);
    if (t->sched) ggml_backend_sched_free(t->sched);
    if (t->backend) ggml_backend_free(t->backend);
    memset(t, 0, sizeof *t);
}

static void set_batch(const struct trainer * t, int stream, int64_t index) {
    corpus_batch(t->data, stream, t->o.seed, index, t->rank * t->o.batch, t->o.batch, t->o.n_ctx, t->io.tokens->data, t->io.targets->data);
}

/* One evaluation of the chosen graph; the loss is that of the global batch. */
static enum ggml_status run(struct trainer * t, bool backward, float * loss) {
    enum ggml_status st = ggml_opt_alloc(t->opt, backward);
    if (st == GGML_STATUS_SUCCESS || st == GGML_STATUS_ABORTED) {
        st = ggml_opt_eval(t->opt, NULL);
        *loss = *(const float *) ggml_opt_loss(t->opt)->data;
    }
    return st;
}

bool trainer_step(struct trainer * t, int64_t step, float * loss, float * grad_norm) {
    set_batch(t, 0, step);
    ggml_opt_set_steps(t->opt, step);
    const enum ggml_status st = run(t, true, loss);
    *grad_norm = (float) ggml_opt_last_grad_norm(t->opt);
    if (st == GGML_STATUS_ABORTED) {
        fprintf(stderr, "error: step %lld: the loss (%g) or the gradient norm (%g) is not finite; the parameters were not updated\n",
                (long long) step, (double) *loss, (double) *grad_norm);
        return false;
    }
    return st == GGML_STATUS_SUCCESS || fail("training step");
}

bool trainer_eval(struct trainer * t, float * loss) {
    double sum = 0.0;
    for (int b = 0; b < t->o.eval_batches; b++) {
        set_batch(t, 1, b);
        float l;
        if (run(t, false, &l) != GGML_STATUS_SUCCESS) return fail("evaluation");
        sum += l;
    }
    *loss = (float) (sum / (t->o.eval_batches > 0 ? t->o.eval_batches : 1));
    return true;
}

bool trainer_save(const struct trainer * t, const char * path, int64_t step) {
    return gpt_save(t->model, path, t->data->vocab, t->data->n_vocab, t->adam_m, t->adam_v, step);
}

/* train.c -- one training step as two graphs: (1) forward + backward into
 * gradient accumulators, (2) AdamW on every parameter. Between them the host
 * clips the gradients by their global norm (as torch's clip_grad_norm_). */
#include "train.h"

#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

float train_lr(const struct train_opts * o, int64_t step) {
    if (step < o->warmup) return o->lr * (float) (step + 1) / (float) (o->warmup + 1);
    if (step > o->decay_iters) return o->min_lr;
    const double ratio = (double) (step - o->warmup) / (double) (o->decay_iters - o->warmup > 0 ? o->decay_iters - o->warmup : 1);
    const double coeff = 0.5 * (1.0 + cos(M_PI * ratio));
    return (float) (o->min_lr + coeff * (o->lr - o->min_lr));
}

static bool fail(const char * what) {
    fprintf(stderr, "error: %s: %s\n", what, ggml_last_error());
    return false;
}

/* The index in graph g of node t, or -1. */
static int node_index(struct ggml_cgraph * g, const struct ggml_tensor * t) {
    for (int i = 0; i < ggml_graph_n_nodes(g); i++)
        if (ggml_graph_node(g, i) == t) return i;
    return -1;
}

bool trainer_init(struct trainer * t, struct gpt_model * m, const struct corpus * data, const struct train_opts * o) {
    memset(t, 0, sizeof *t);
    t->model = m; t->data = data; t->o = *o;
    const int64_t need = (int64_t) o->n_ctx + 2;
    if (data->n_train < need || data->n - data->n_train < need) {
        fprintf(stderr, "error: the text is too short: each split needs at least %lld characters\n", (long long) need);
        return false;
    }
    const size_t graph_size = 16384;
    struct ggml_init_params ip = {ggml_tensor_overhead() * graph_size * 2 + 3 * ggml_graph_overhead_custom(graph_size, true), NULL, true};
    t->ctx = ggml_init(ip);
    if (!t->ctx) return fail("ggml_init");
    if (!gpt_build(m, t->ctx, o->batch, o->n_ctx, o->fused, &t->train_io)) return false;
    if (!gpt_build(m, t->ctx, o->batch, o->n_ctx, o->fused, &t->eval_io)) return false;
    t->step_graph = ggml_new_graph_custom(t->ctx, graph_size, true);
    t->eval_graph = ggml_new_graph_custom(t->ctx, graph_size, false);
    t->opt_graph = ggml_new_graph_custom(t->ctx, graph_size, false);
    if (!t->step_graph || !t->eval_graph || !t->opt_graph) return fail("creating graphs");
    ggml_build_forward_expand(t->step_graph, t->train_io.loss);
    ggml_build_forward_expand(t->eval_graph, t->eval_io.loss);
    /* gradient accumulators of our own (plain tensors, no lineage), so the
     * optimizer graph reads them without pulling in the backward pass */
    const int n_nodes = ggml_graph_n_nodes(t->step_graph);
    struct ggml_tensor ** accs = calloc((size_t) n_nodes, sizeof *accs);
    if (!accs) { fprintf(stderr, "error: out of memory\n"); return false; }
    for (int i = 0; i < m->n_params; i++) {
        const int at = node_index(t->step_graph, m->params[i]);
        t->grads[i] = ggml_dup_tensor(t->ctx, m->params[i]);
        if (at < 0 || !t->grads[i]) { free(accs); fprintf(stderr, "error: parameter %d is not in the graph\n", i); return false; }
        accs[at] = t->grads[i];
    }
    const enum ggml_status st = ggml_build_backward_expand(t->ctx, t->step_graph, accs);
    free(accs);
    if (st != GGML_STATUS_SUCCESS) return fail("building the backward pass");
    t->adamw_decay = ggml_new_tensor_1d(t->ctx, GGML_TYPE_F32, 7);
    t->adamw_no_decay = ggml_new_tensor_1d(t->ctx, GGML_TYPE_F32, 7);
    for (int i = 0; i < m->n_params; i++) {
        struct ggml_tensor * hp = gpt_param_decays(m, i) ? t->adamw_decay : t->adamw_no_decay;
        struct ggml_tensor * s = ggml_opt_step_adamw(t->ctx, m->params[i], t->grads[i], m->adam_m[i], m->adam_v[i], hp);
        if (!s) return fail("building the optimizer step");
        ggml_build_forward_expand(t->opt_graph, s);
    }
    ggml_backend_t cpu = ggml_backend_cpu_init();
    t->buffer = cpu ? ggml_backend_alloc_ctx_tensors(t->ctx, cpu) : NULL;
    if (cpu) ggml_backend_free(cpu);
    if (!t->buffer) return fail("allocating activations");
    gpt_graph_set_mask(&t->train_io);
    gpt_graph_set_mask(&t->eval_io);
    return true;
}

void trainer_free(struct trainer * t) {
    if (t->buffer) ggml_backend_buffer_free(t->buffer);
    ggml_free(t->ctx);
    memset(t, 0, sizeof *t);
}

static void set_batch(const struct trainer * t, const struct gpt_graph * io, int stream, int64_t index) {
    corpus_batch(t->data, stream, t->o.seed, index, t->par.rank * t->o.batch, t->o.batch, t->o.n_ctx, io->tokens->data, io->targets->data);
}

/* With data parallelism: *x becomes its mean over the ranks, and so do the
 * gradients when n > 0 (the loss is a mean over rows, so the mean of the
 * ranks' gradients is the gradient of the whole batch). */
static bool mean_over_ranks(struct trainer * t, int n, float * x) {
    if (t->par.ranks <= 1) return true;
    const float inv = 1.0f / (float) t->par.ranks;
    if (!t->par.reduce(t->par.ud, t->grads, n, inv, x, 1)) return false;
    *x *= inv;
    return true;
}

/* sum of x[j]^2 in double as 8 interleaved partial sums: a fixed order (the
 * same result every run) in 8 independent chains, which vectorise (3x faster
 * than one chain of dependent additions: 0.5 -> 0.2 ms a step) */
static double sum_squares(const float * x, int64_t n) {
    double part[8] = {0};
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 8; k++) part[k] += (double) x[j + k] * x[j + k];
    for (; j < n; j++) part[j % 8] += (double) x[j] * x[j];
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

/* AdamW hyper-parameters of step `step` (t = step + 1 in the bias corrections). */
static void set_adamw(struct ggml_tensor * hp, const struct train_opts * o, float lr, float wd, int64_t step) {
    float * p = hp->data;
    p[0] = lr; p[1] = o->beta1; p[2] = o->beta2; p[3] = o->eps; p[4] = wd;
    p[5] = (float) (1.0 / (1.0 - pow(o->beta1, (double) (step + 1))));
    p[6] = (float) (1.0 / (1.0 - pow(o->beta2, (double) (step + 1))));
}

bool trainer_step(struct trainer * t, int64_t step, float * loss, float * grad_norm) {
    const struct gpt_model * m = t->model;
    set_batch(t, &t->train_io, 0, step);
    ggml_graph_reset(t->step_graph);  /* loss gradient 1, accumulators 0 */
    if (ggml_graph_compute_with_ctx(t->ctx, t->step_graph, t->o.threads) != GGML_STATUS_SUCCESS) return fail("training step");
    *loss = ggml_get_f32_1d(t->train_io.loss, 0);
    if (!mean_over_ranks(t, m->n_params, loss)) return false;
    /* global gradient norm, summed in a fixed order (deterministic) */
    double ss = 0.0;
    for (int i = 0; i < m->n_params; i++) ss += sum_squares(t->grads[i]->data, ggml_nelements(t->grads[i]));
    const double norm = sqrt(ss);
    *grad_norm = (float) norm;
    if (!isfinite(*loss) || !isfinite(norm)) {
        fprintf(stderr, "error: step %lld: the loss (%g) or the gradient norm (%g) is not finite; the parameters were not updated\n",
                (long long) step, (double) *loss, norm);
        return false;
    }
    if (t->o.clip > 0 && norm > t->o.clip) {
        const float scale = (float) (t->o.clip / (norm + 1e-6));
        for (int i = 0; i < m->n_params; i++) {
            float * g = t->grads[i]->data;
            const int64_t n = ggml_nelements(t->grads[i]);
            for (int64_t j = 0; j < n; j++) g[j] *= scale;
        }
    }
    const float lr = train_lr(&t->o, step);
    set_adamw(t->adamw_decay, &t->o, lr, t->o.weight_decay, step);
    set_adamw(t->adamw_no_decay, &t->o, lr, 0.0f, step);
    if (ggml_graph_compute_with_ctx(t->ctx, t->opt_graph, t->o.threads) != GGML_STATUS_SUCCESS) return fail("optimizer step");
    return true;
}

bool trainer_eval(struct trainer * t, float * loss) {
    double sum = 0.0;
    for (int b = 0; b < t->o.eval_batches; b++) {
        set_batch(t, &t->eval_io, 1, b);
        if (ggml_graph_compute_with_ctx(t->ctx, t->eval_graph, t->o.threads) != GGML_STATUS_SUCCESS) return fail("evaluation");
        sum += ggml_get_f32_1d(t->eval_io.loss, 0);
    }
    *loss = (float) (sum / (t->o.eval_batches > 0 ? t->o.eval_batches : 1));
    return mean_over_ranks(t, 0, loss);
}

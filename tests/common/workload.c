/* workload.c -- see workload.h. Written for failure at any call: every
 * constructor result is checked and one exit path frees what was made. */
#include "workload.h"

#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <math.h>
#include <string.h>

/* A private xorshift stream, so that workloads running on several threads at
 * once draw the same data as one alone (the shared tc_ RNG is global). */
static float next_uniform(uint64_t * s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (float) ((double) (*s >> 11) / 9007199254740992.0) * 2.0f - 1.0f;
}

static void fill(struct ggml_tensor * t, uint64_t * s, float amp) {
    float * p = t->data;
    for (int64_t i = 0; i < ggml_nelements(t); i++) p[i] = amp * next_uniform(s);
}

#define FAIL_IF(cond) do { if (cond) { st = GGML_STATUS_FAILED; goto done; } } while (0)

enum ggml_status tw_train_autodiff(uint64_t seed, int n_threads, int steps, float * out) {
    enum ggml_status st = GGML_STATUS_SUCCESS;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    struct ggml_init_params ip = {(size_t) 4 << 20, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    if (!ctx) return GGML_STATUS_ALLOC_FAILED;
    enum { NIN = 8, NHID = 6, NOUT = 4, NB = 16 };
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, NIN, NB);
    struct ggml_tensor * y = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, NOUT, NB);
    struct ggml_tensor * w[2] = {ggml_new_tensor_2d(ctx, GGML_TYPE_F32, NIN, NHID), ggml_new_tensor_2d(ctx, GGML_TYPE_F32, NHID, NOUT)};
    struct ggml_tensor * hp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7);
    FAIL_IF(!x || !y || !w[0] || !w[1] || !hp);
    fill(x, &s, 1.0f);
    fill(w[0], &s, 0.5f);
    fill(w[1], &s, 0.5f);
    float * yp = y->data;
    for (int b = 0; b < NB; b++)
        for (int k = 0; k < NOUT; k++) yp[b * NOUT + k] = k == b % NOUT;
    ggml_set_param(w[0]);
    ggml_set_param(w[1]);
    struct ggml_tensor * h = ggml_gelu(ctx, ggml_mul_mat(ctx, w[0], x));
    struct ggml_tensor * logits = ggml_mul_mat(ctx, w[1], ggml_rms_norm(ctx, h, 1e-5f));
    struct ggml_tensor * loss = ggml_cross_entropy_loss(ctx, logits, y);
    FAIL_IF(!loss);
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 256, true);
    FAIL_IF(!g);
    if ((st = ggml_build_forward_expand_status(g, loss)) != GGML_STATUS_SUCCESS) goto done;
    if ((st = ggml_build_backward_expand(ctx, g, NULL)) != GGML_STATUS_SUCCESS) goto done;
    /* the steps in a graph of their own (it recomputes the gradients they read) */
    struct ggml_cgraph * gopt = ggml_new_graph_custom(ctx, 256, false);
    FAIL_IF(!gopt);
    for (int i = 0; i < 2; i++) {
        struct ggml_tensor * m = ggml_dup_tensor(ctx, w[i]), * v = ggml_dup_tensor(ctx, w[i]);
        FAIL_IF(!m || !v);
        ggml_set_zero(m);
        ggml_set_zero(v);
        struct ggml_tensor * step = ggml_opt_step_adamw(ctx, w[i], ggml_graph_get_grad(g, w[i]), m, v, hp);
        FAIL_IF(!step);
        if ((st = ggml_build_forward_expand_status(gopt, step)) != GGML_STATUS_SUCCESS) goto done;
    }
    const float alpha = 0.05f, beta1 = 0.9f, beta2 = 0.999f;
    for (int t = 1; t <= steps; t++) {
        const float p[7] = {alpha, beta1, beta2, 1e-8f, 0.01f, 1.0f / (1.0f - powf(beta1, (float) t)), 1.0f / (1.0f - powf(beta2, (float) t))};
        memcpy(hp->data, p, sizeof p);
        ggml_graph_reset(g);
        if ((st = ggml_graph_compute_with_ctx(ctx, g, n_threads)) != GGML_STATUS_SUCCESS) goto done;
        if ((st = ggml_graph_compute_with_ctx(ctx, gopt, n_threads)) != GGML_STATUS_SUCCESS) goto done;
    }
    memcpy(out, w[0]->data, NIN * NHID * sizeof *out);
    memcpy(out + NIN * NHID, w[1]->data, NHID * NOUT * sizeof *out);
done:
    ggml_free(ctx);
    return st;
}

struct tw_opt_config tw_opt_default(void) {
    struct tw_opt_config c;
    c.loss = GGML_OPT_LOSS_TYPE_CROSS_ENTROPY;
    c.optimizer = GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    c.build = GGML_OPT_BUILD_TYPE_OPT;
    c.opt_period = 1;
    c.epochs = 2;
    c.idata_split = 40;
    c.hyper = ggml_opt_get_default_optimizer_params(NULL);
    c.hyper.adamw.alpha = c.hyper.sgd.alpha = 0.05f;
    return c;
}

enum ggml_status tw_train_opt(uint64_t seed, int n_threads, const struct tw_opt_config * cfg, float * out, double * loss) {
    enum { NIN = 2, NCLASS = 3, NBATCH = 8, NDATA = 48 };
    enum ggml_status st = GGML_STATUS_SUCCESS;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    struct ggml_context * ctx_static = NULL, * ctx_compute = NULL;
    ggml_backend_buffer_t buf = NULL;
    ggml_backend_sched_t sched = NULL;
    ggml_opt_dataset_t dataset = NULL;
    ggml_opt_context_t opt = NULL;
    ggml_opt_result_t result = NULL;
    ggml_backend_t backend = ggml_backend_cpu_init();
    FAIL_IF(!backend);
    ggml_backend_cpu_set_n_threads(backend, n_threads);
    sched = ggml_backend_sched_new(&backend, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, true);
    FAIL_IF(!sched);
    struct ggml_init_params ps = {8 * ggml_tensor_overhead(), NULL, true};
    ctx_static = ggml_init(ps);
    FAIL_IF(!ctx_static);
    struct ggml_tensor * W = ggml_new_tensor_2d(ctx_static, GGML_TYPE_F32, NIN, NCLASS);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx_static, GGML_TYPE_F32, NCLASS);
    struct ggml_tensor * inputs = ggml_new_tensor_2d(ctx_static, GGML_TYPE_F32, NIN, NBATCH);
    FAIL_IF(!W || !b || !inputs);
    ggml_set_param(W);
    ggml_set_param(b);
    buf = ggml_backend_alloc_ctx_tensors(ctx_static, backend);
    FAIL_IF(!buf);
    fill(W, &s, 0.1f);
    ggml_set_zero(b);
    struct ggml_init_params pc = {64 * ggml_tensor_overhead() + 3 * ggml_graph_overhead(), NULL, true};
    ctx_compute = ggml_init(pc);
    FAIL_IF(!ctx_compute);
    struct ggml_tensor * logits = ggml_add(ctx_compute, ggml_mul_mat(ctx_compute, W, inputs), b);
    FAIL_IF(!logits);
    dataset = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, NIN, NCLASS, NDATA, 1);
    FAIL_IF(!dataset);
    float * x = ggml_opt_dataset_data(dataset)->data, * y = ggml_opt_dataset_labels(dataset)->data;
    static const float centre[NCLASS][NIN] = {{-1.0f, 0.0f}, {1.0f, 1.0f}, {0.5f, -1.0f}};
    for (int j = 0; j < NDATA; j++) {
        for (int d = 0; d < NIN; d++) x[NIN * j + d] = centre[j % NCLASS][d] + 0.4f * next_uniform(&s);
        for (int k = 0; k < NCLASS; k++) y[NCLASS * j + k] = k == j % NCLASS;
    }
    struct ggml_opt_params params = ggml_opt_default_params(sched, cfg->loss);
    params.ctx_compute = ctx_compute;
    params.inputs = inputs;
    params.outputs = logits;
    params.build_type = cfg->build;
    params.optimizer = cfg->optimizer;
    params.opt_period = cfg->opt_period;
    params.get_opt_pars = ggml_opt_get_constant_optimizer_params;
    params.get_opt_pars_ud = (void *) &cfg->hyper;
    params.seed = seed;
    opt = ggml_opt_init(params);
    result = ggml_opt_result_init();
    FAIL_IF(!opt || !result);
    for (int64_t e = 0; e < cfg->epochs; e++) {
        ggml_opt_result_reset(result);
        if ((st = ggml_opt_epoch(opt, dataset, result, NULL, cfg->idata_split, NULL, NULL)) != GGML_STATUS_SUCCESS) goto done;
    }
    if (loss) ggml_opt_result_loss(result, loss, NULL);
    if (out) {
        memcpy(out, W->data, NIN * NCLASS * sizeof *out);
        memcpy(out + NIN * NCLASS, b->data, NCLASS * sizeof *out);
    }
done:
    ggml_opt_result_free(result);
    ggml_opt_free(opt);
    ggml_opt_dataset_free(dataset);
    ggml_free(ctx_compute);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx_static);
    ggml_backend_sched_free(sched);
    ggml_backend_free(backend);
    return st;
}

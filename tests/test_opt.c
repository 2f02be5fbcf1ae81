/* test_opt.c -- the training API (ggml-opt.h) and the CPU scheduler.
 *
 * Datasets (batches, a seeded deterministic shuffle), results against
 * statistics computed here, defaults, refusals, the scheduler's memory
 * handling, the graphs ggml_opt_init builds; then training: one SGD and two
 * AdamW steps against float64 references, gradient accumulation (opt_period 2
 * = one step on the doubled batch), clipping by global norm, a NaN loss that
 * is reported and not applied, linear regression whose MSE falls and a
 * classification whose accuracy rises. */
#include "common/test_common.h"

#include "common/opt_model.h"
#include "ggml-opt.h"

#include <stdlib.h>
#include <string.h>

/* ---- scheduler ---- */

static void test_sched(ggml_backend_t be) {
    ggml_backend_t none[1] = {NULL};
    CHECK(ggml_backend_sched_new(NULL, NULL, 1, 0, false, false) == NULL && ggml_last_error()[0], "sched: NULL backends refused");
    CHECK(ggml_backend_sched_new(&be, NULL, 0, 0, false, false) == NULL, "sched: 0 backends refused");
    CHECK(ggml_backend_sched_new(none, NULL, 1, 0, false, false) == NULL, "sched: NULL backend refused");
    ggml_backend_buffer_type_t bad = (ggml_backend_buffer_type_t) &be;
    CHECK(ggml_backend_sched_new(&be, &bad, 1, 0, false, false) == NULL, "sched: foreign buffer type refused");
    ggml_backend_buffer_type_t cpu = ggml_backend_get_default_buffer_type(be);
    CHECK(cpu == ggml_backend_cpu_buffer_type() && strcmp(ggml_backend_buft_name(cpu), "CPU") == 0, "CPU buffer type");
    ggml_backend_sched_t s = ggml_backend_sched_new(&be, &cpu, 1, 64, false, true);
    if (!CHECK(s != NULL, "sched_new: %s", ggml_last_error())) return;
    CHECK(ggml_backend_sched_get_n_backends(s) == 1 && ggml_backend_sched_get_backend(s, 0) == be, "sched backend 0");
    CHECK(ggml_backend_sched_get_backend(s, 1) == NULL, "sched backend 1 does not exist");

    /* (a + b) viewed and summed; a, b have memory, the rest gets it from the scheduler */
    struct ggml_init_params p = {16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
    struct ggml_context * cs = ggml_init(p), * cc = ggml_init(p);
    struct ggml_tensor * a = ggml_new_tensor_1d(cs, GGML_TYPE_F32, 6), * b = ggml_new_tensor_1d(cs, GGML_TYPE_F32, 6);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(cs, cpu);
    CHECK(ggml_backend_alloc_ctx_tensors_from_buft(cs, bad) == NULL, "alloc from a foreign buffer type refused");
    const float av[6] = {1, 2, 3, 4, 5, 6}, bv[6] = {10, 20, 30, 40, 50, 60};
    ggml_backend_tensor_set(a, av, 0, sizeof av);
    ggml_backend_tensor_set(b, bv, 0, sizeof bv);
    struct ggml_tensor * sum = ggml_add(cc, a, b);
    struct ggml_tensor * tail = ggml_view_1d(cc, sum, 3, 3 * sizeof(float));
    struct ggml_tensor * total = ggml_sum(cc, tail);
    struct ggml_cgraph * g = ggml_new_graph(cc);
    ggml_build_forward_expand(g, total);
    CHECK(ggml_backend_sched_alloc_graph(s, g) && sum->data && total->data, "alloc_graph gives memory");
    CHECK(tail->data == (char *) sum->data + 3 * sizeof(float), "a view gets its base's memory");
    CHECK(ggml_backend_sched_graph_compute(s, g) == GGML_STATUS_SUCCESS, "sched compute: %s", ggml_last_error());
    CHECK(ggml_get_f32_1d(total, 0) == 44 + 55 + 66, "sched compute result %g", ggml_get_f32_1d(total, 0));
    ggml_backend_sched_reset(s);
    CHECK(sum->data == NULL && tail->data == NULL && total->data == NULL && a->data != NULL, "reset takes back only the scheduler's memory");
    /* compute allocates by itself */
    CHECK(ggml_backend_sched_graph_compute(s, g) == GGML_STATUS_SUCCESS && ggml_get_f32_1d(total, 0) == 165, "compute after reset");
    CHECK(ggml_backend_sched_graph_compute(s, NULL) == GGML_STATUS_FAILED, "NULL graph refused");
    ggml_backend_sched_free(s);
    ggml_backend_buffer_free(buf);
    ggml_free(cc);
    ggml_free(cs);
}

/* ---- datasets ---- */

static void test_dataset(ggml_backend_sched_t sched, ggml_backend_t be) {
    CHECK(ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 0, 1, 8, 1) == NULL && ggml_last_error()[0], "ne_datapoint 0 refused");
    CHECK(ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 3, 1, 8, 9) == NULL, "a shard larger than the dataset refused");
    {   /* ndata not a multiple of the shard (upstream's meaning): 8 datapoints in
         * shards of 3 are 2 shards; datapoints 6 and 7 are in no batch */
        ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 1, 1, 8, 3);
        struct ggml_init_params p = {2 * ggml_tensor_overhead() + 256, NULL, false};
        struct ggml_context * ctx = ggml_init(p);
        struct ggml_tensor * xb = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, 3), * yb = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, 3);
        bool ok = ds != NULL;
        for (int j = 0; ok && j < 8; j++) ggml_set_f32_1d(ggml_opt_dataset_data(ds), j, (float) j);
        for (int ib = 0; ok && ib < 2; ib++) {
            ok &= ggml_opt_dataset_get_batch(ds, xb, yb, ib) == GGML_STATUS_SUCCESS;
            for (int j = 0; j < 3; j++) ok &= ggml_get_f32_1d(xb, j) == (float) (3 * ib + j);
        }
        CHECK(ok, "8 datapoints in shards of 3: two batches of 3, in order");
        CHECK(!ds || ggml_opt_dataset_get_batch(ds, xb, yb, 2) == GGML_STATUS_FAILED, "no third batch (the 2 left over are in no shard)");
        ggml_opt_dataset_free(ds);
        ggml_free(ctx);
    }
    CHECK(ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 3, -1, 8, 1) == NULL, "negative ne_label refused");
    CHECK(ggml_opt_dataset_init((enum ggml_type) 7, GGML_TYPE_F32, 3, 1, 8, 1) == NULL, "unsupported type refused");

    enum { ND = 12, NE = 3, NL = 2, SHARD = 2, NB = 4 };
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, NE, NL, ND, SHARD);
    if (!CHECK(ds != NULL, "dataset: %s", ggml_last_error())) return;
    struct ggml_tensor * data = ggml_opt_dataset_data(ds), * labels = ggml_opt_dataset_labels(ds);
    CHECK(ggml_opt_dataset_ndata(ds) == ND && data->ne[0] == NE && data->ne[1] == ND && labels->ne[0] == NL && labels->ne[1] == ND, "dataset shapes");
    for (int j = 0; j < ND; j++) {
        for (int i = 0; i < NE; i++) ggml_set_f32_nd(data, i, j, 0, 0, (float) (100 * j + i));
        for (int i = 0; i < NL; i++) ggml_set_f32_nd(labels, i, j, 0, 0, (float) (-100 * j - i));
    }
    struct ggml_init_params p = {8 * ggml_tensor_overhead(), NULL, false};
    p.mem_size += 4096;
    struct ggml_context * ctx = ggml_init(p);
    struct ggml_tensor * xb = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, NE, NB), * yb = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, NL, NB);
    bool ok = true;
    for (int ib = 0; ib < ND / NB; ib++) {
        ok &= ggml_opt_dataset_get_batch(ds, xb, yb, ib) == GGML_STATUS_SUCCESS;
        for (int j = 0; j < NB; j++) {
            const int src = ib * NB + j;
            for (int i = 0; i < NE; i++) ok &= ggml_get_f32_nd(xb, i, j, 0, 0) == (float) (100 * src + i);
            for (int i = 0; i < NL; i++) ok &= ggml_get_f32_nd(yb, i, j, 0, 0) == (float) (-100 * src - i);
        }
    }
    CHECK(ok, "unshuffled batches hold the datapoints in order");
    CHECK(ggml_opt_dataset_get_batch(ds, xb, yb, ND / NB) == GGML_STATUS_FAILED && ggml_last_error()[0], "batch past the end refused");
    CHECK(ggml_opt_dataset_get_batch(ds, xb, yb, -1) == GGML_STATUS_FAILED, "negative batch refused");
    CHECK(ggml_opt_dataset_get_batch(ds, xb, NULL, 0) == GGML_STATUS_FAILED, "missing labels refused");
    CHECK(ggml_opt_dataset_get_batch(NULL, xb, yb, 0) == GGML_STATUS_FAILED, "NULL dataset refused");
    struct ggml_tensor * odd = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, NE, 3);   /* 1.5 shards */
    CHECK(ggml_opt_dataset_get_batch(ds, odd, yb, 0) == GGML_STATUS_FAILED, "batch of a partial shard refused");
    struct ggml_tensor * ib32 = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, NE, NB);
    CHECK(ggml_opt_dataset_get_batch(ds, ib32, yb, 0) == GGML_STATUS_FAILED, "batch of another type refused");

    /* get_batch_host: batch 1 of 4 datapoints is datapoints 4..7; batch 5 of one shard (2) is 10, 11 */
    float hx[NE * NB], hy[NL * NB];
    ggml_clear_error();
    ggml_opt_dataset_get_batch_host(ds, hx, sizeof hx, hy, 1);
    ok = ggml_last_error()[0] == '\0';
    for (int j = 0; j < NB; j++) {
        for (int i = 0; i < NE; i++) ok &= hx[j * NE + i] == (float) (100 * (4 + j) + i);
        for (int i = 0; i < NL; i++) ok &= hy[j * NL + i] == (float) (-100 * (4 + j) - i);
    }
    CHECK(ok, "get_batch_host: batch 1 holds datapoints 4..7 (hx[0] = %g, hy[3] = %g)", hx[0], hy[3]);
    ggml_opt_dataset_get_batch_host(ds, hx, SHARD * NE * sizeof(float), hy, 5);
    CHECK(hx[0] == 1000.0f && hx[NE + 2] == 1102.0f && hy[1] == -1001.0f && hy[NL] == -1100.0f, "batch 5 of one shard: datapoints 10, 11");
    memset(hx, 0, sizeof hx);
    ggml_clear_error();
    ggml_opt_dataset_get_batch_host(ds, hx, sizeof hx, hy, ND / NB);
    CHECK(strstr(ggml_last_error(), "out of range") && hx[0] == 0.0f, "host batch past the end refused, nothing copied");
    ggml_clear_error();
    ggml_opt_dataset_get_batch_host(ds, hx, 3 * NE * sizeof(float), hy, 0);
    CHECK(strstr(ggml_last_error(), "whole number of shards") != NULL, "host batch of 1.5 shards refused");
    ggml_clear_error();
    ggml_opt_dataset_get_batch_host(ds, hx, sizeof hx, NULL, 0);
    CHECK(strstr(ggml_last_error(), "labels") != NULL, "host batch without labels refused");
    ggml_clear_error();
    ggml_opt_dataset_get_batch_host(ds, hx, (ND + SHARD) * NE * sizeof(float), hy, 0);
    CHECK(strstr(ggml_last_error(), "out of range") != NULL, "a host batch larger than the dataset refused");
    ggml_clear_error();
    ggml_opt_dataset_get_batch_host(NULL, hx, sizeof hx, hy, 0);
    CHECK(strstr(ggml_last_error(), "NULL") != NULL, "NULL dataset refused");

    /* shuffle: the same seed gives the same order; every datapoint once; shards stay whole */
    struct model m;
    if (!CHECK(model_init(&m, be, NE, 1, NB), "model: %s", ggml_last_error())) { ggml_free(ctx); ggml_opt_dataset_free(ds); return; }
    ggml_opt_context_t o1 = opt_for(sched, &m, GGML_OPT_LOSS_TYPE_SUM, GGML_OPT_OPTIMIZER_TYPE_SGD, 1, NULL);
    ggml_opt_context_t o2 = opt_for(sched, &m, GGML_OPT_LOSS_TYPE_SUM, GGML_OPT_OPTIMIZER_TYPE_SGD, 1, NULL);
    if (CHECK(o1 && o2, "opt contexts: %s", ggml_last_error())) {
        ggml_opt_dataset_t ds2 = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, NE, NL, ND, SHARD);
        ggml_backend_tensor_set(ggml_opt_dataset_data(ds2), data->data, 0, ggml_nbytes(data));
        ggml_backend_tensor_set(ggml_opt_dataset_labels(ds2), labels->data, 0, ggml_nbytes(labels));
        CHECK(ggml_opt_dataset_shuffle(o1, ds, -1) == GGML_STATUS_SUCCESS && ggml_opt_dataset_shuffle(o2, ds2, -1) == GGML_STATUS_SUCCESS, "shuffle");
        int seen[ND] = {0};
        bool same = true, identity = true, whole = true, consistent = true;
        float x1[NE * NB], x2[NE * NB], y1[NL * NB];
        for (int ib = 0; ib < ND / NB; ib++) {
            ggml_opt_dataset_get_batch(ds, xb, yb, ib);
            ggml_backend_tensor_get(xb, x1, 0, sizeof x1);
            ggml_backend_tensor_get(yb, y1, 0, sizeof y1);
            ggml_opt_dataset_get_batch(ds2, xb, yb, ib);
            ggml_backend_tensor_get(xb, x2, 0, sizeof x2);
            same &= memcmp(x1, x2, sizeof x1) == 0;
            for (int j = 0; j < NB; j++) {
                const int src = (int) x1[j * NE] / 100;
                seen[src]++;
                identity &= src == ib * NB + j;
                if (j % SHARD == 1) whole &= src == (int) x1[(j - 1) * NE] / 100 + 1 && src % SHARD == 1;
                consistent &= y1[j * NL] == (float) (-100 * src);
            }
        }
        bool once = true;
        for (int i = 0; i < ND; i++) once &= seen[i] == 1;
        CHECK(same, "the same seed shuffles the same way");
        CHECK(!identity, "the shuffle changed the order");
        CHECK(once && whole && consistent, "a permutation of whole shards, labels moved with their data");
        /* a partial shuffle leaves the tail in place */
        ggml_opt_dataset_t ds3 = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, NE, NL, ND, SHARD);
        ggml_backend_tensor_set(ggml_opt_dataset_data(ds3), data->data, 0, ggml_nbytes(data));
        CHECK(ggml_opt_dataset_shuffle(o1, ds3, 3) == GGML_STATUS_FAILED, "idata not a multiple of the shard refused");
        CHECK(ggml_opt_dataset_shuffle(o1, ds3, ND + 2) == GGML_STATUS_FAILED, "idata past the end refused");
        CHECK(ggml_opt_dataset_shuffle(o1, ds3, 8) == GGML_STATUS_SUCCESS, "partial shuffle");
        ggml_opt_dataset_get_batch(ds3, xb, yb, 2);
        ggml_backend_tensor_get(xb, x1, 0, sizeof x1);
        bool tail = true;
        for (int j = 0; j < NB; j++) tail &= (int) x1[j * NE] / 100 == 8 + j;
        CHECK(tail, "datapoints past idata keep their place");
        ggml_opt_dataset_free(ds2);
        ggml_opt_dataset_free(ds3);
    }
    ggml_opt_free(o1);
    ggml_opt_free(o2);
    model_free(&m);
    ggml_free(ctx);
    ggml_opt_dataset_free(ds);
}

/* ---- defaults, refusals, graphs ---- */

static void test_params_and_refusals(ggml_backend_sched_t sched, ggml_backend_t be) {
    struct ggml_opt_optimizer_params d = ggml_opt_get_default_optimizer_params(NULL);
    CHECK(d.adamw.alpha == 0.001f && d.adamw.beta1 == 0.9f && d.adamw.beta2 == 0.999f && d.adamw.eps == 1e-8f && d.adamw.wd == 0.0f &&
          d.sgd.alpha == 1e-3f && d.sgd.wd == 0.0f && d.clip_norm == 0.0f, "default optimizer params (upstream's)");
    struct ggml_opt_optimizer_params c = d;
    c.adamw.alpha = 0.25f;
    c.clip_norm = 3.0f;
    struct ggml_opt_optimizer_params c2 = ggml_opt_get_constant_optimizer_params(&c);
    CHECK(c2.adamw.alpha == 0.25f && c2.clip_norm == 3.0f, "constant optimizer params");
    struct ggml_opt_params p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_MEAN);
    CHECK(p.backend_sched == sched && p.loss_type == GGML_OPT_LOSS_TYPE_MEAN && p.build_type == GGML_OPT_BUILD_TYPE_OPT && p.opt_period == 1 &&
          p.get_opt_pars == ggml_opt_get_default_optimizer_params && p.optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW && !p.apply_nonfinite &&
          !p.ctx_compute && !p.inputs && !p.outputs, "default opt params");
    CHECK(strcmp(ggml_opt_optimizer_name(GGML_OPT_OPTIMIZER_TYPE_SGD), "sgd") == 0 && strcmp(ggml_opt_optimizer_name(GGML_OPT_OPTIMIZER_TYPE_ADAMW), "adamw") == 0, "names");

    struct model m;
    if (!CHECK(model_init(&m, be, 3, 2, 4), "model: %s", ggml_last_error())) return;
    ggml_opt_context_t lazy = ggml_opt_init(p);  /* upstream's non-static mode: the model comes per batch */
    CHECK(lazy && !ggml_opt_static_graphs(lazy), "no model: a context for ggml_opt_prepare_alloc: %s", ggml_last_error());
    ggml_opt_free(lazy);
    p.ctx_compute = m.ctx_compute;
    CHECK(ggml_opt_init(p) == NULL && strstr(ggml_last_error(), "all be NULL"), "a partial model refused: %s", ggml_last_error());
    p.inputs = m.x; p.outputs = m.out;
    struct ggml_opt_params q = p;
    q.backend_sched = NULL;
    CHECK(ggml_opt_init(q) == NULL, "NULL scheduler refused");
    q = p; q.opt_period = 0;
    CHECK(ggml_opt_init(q) == NULL, "opt_period 0 refused");
    q = p; q.loss_type = (enum ggml_opt_loss_type) 9;
    CHECK(ggml_opt_init(q) == NULL, "unknown loss refused");
    q = p; q.optimizer = GGML_OPT_OPTIMIZER_TYPE_COUNT;
    CHECK(ggml_opt_init(q) == NULL, "unknown optimizer refused");
    q = p; q.get_opt_pars = NULL;
    CHECK(ggml_opt_init(q) == NULL, "no optimizer params callback refused");
    q = p; q.outputs = ggml_sum(m.ctx_compute, m.out);
    ggml_set_loss(q.outputs);
    CHECK(ggml_opt_init(q) == NULL && strstr(ggml_last_error(), "loss"), "a model with a loss of its own refused: %s", ggml_last_error());
    q = p; q.outputs = ggml_scale(m.ctx_compute, m.x, 2.0f);
    CHECK(ggml_opt_init(q) == NULL && strstr(ggml_last_error(), "parameters"), "a model without parameters refused: %s", ggml_last_error());

    /* graphs of a valid context */
    for (int lt = 0; lt <= GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR; lt++) {
        q = p;
        q.loss_type = (enum ggml_opt_loss_type) lt;
        ggml_opt_context_t o = ggml_opt_init(q);
        if (!CHECK(o != NULL, "init loss %d: %s", lt, ggml_last_error())) continue;
        const bool labelled = lt == GGML_OPT_LOSS_TYPE_CROSS_ENTROPY || lt == GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR;
        struct ggml_tensor * loss = ggml_opt_loss(o), * labels = ggml_opt_labels(o);
        CHECK(ggml_opt_static_graphs(o) && ggml_opt_inputs(o) == m.x && ggml_opt_outputs(o) == m.out, "inputs/outputs");
        CHECK(loss && ggml_is_scalar(loss) && (loss->flags & GGML_TENSOR_FLAG_LOSS) && loss->data, "loss %d is a scalar with memory", lt);
        CHECK(labelled == (labels != NULL) && (!labels || (ggml_are_same_shape(labels, m.out) && labels->data)), "labels of loss %d", lt);
        const bool ce = lt == GGML_OPT_LOSS_TYPE_CROSS_ENTROPY;
        CHECK(ce == (ggml_opt_pred(o) != NULL) && ce == (ggml_opt_ncorrect(o) != NULL), "pred/ncorrect for cross-entropy only");
        struct ggml_tensor * gW = ggml_opt_grad_acc(o, m.W);
        CHECK(gW && ggml_are_same_shape(gW, m.W) && gW->data && ggml_opt_grad_acc(o, m.b) && ggml_opt_grad_acc(o, m.x) == NULL, "grad accumulators");
        CHECK(ggml_opt_context_optimizer_type(o) == GGML_OPT_OPTIMIZER_TYPE_ADAMW, "optimizer type");
        CHECK(ggml_opt_eval(o, NULL) == GGML_STATUS_FAILED && strstr(ggml_last_error(), "ggml_opt_alloc"), "eval before alloc refused");
        CHECK(ggml_opt_alloc(o, false) == GGML_STATUS_SUCCESS && ggml_opt_alloc(o, true) == GGML_STATUS_FAILED, "alloc twice refused");
        CHECK(ggml_opt_eval(o, NULL) == GGML_STATUS_SUCCESS, "forward eval of loss %d: %s", lt, ggml_last_error());
        ggml_opt_free(o);
    }
    q = p;
    q.build_type = GGML_OPT_BUILD_TYPE_FORWARD;
    ggml_opt_context_t fo = ggml_opt_init(q);
    CHECK(fo && ggml_opt_grad_acc(fo, m.W) == NULL && ggml_opt_alloc(fo, true) == GGML_STATUS_FAILED, "forward-only context refuses backward");
    ggml_opt_free(fo);

    /* bad optimizer parameters are refused at the step */
    struct ggml_opt_optimizer_params bad = d;
    bad.adamw.alpha = 0.0f;
    q = p;
    q.get_opt_pars = ggml_opt_get_constant_optimizer_params;
    q.get_opt_pars_ud = &bad;
    ggml_opt_context_t o = ggml_opt_init(q);
    CHECK(o && ggml_opt_alloc(o, true) == GGML_STATUS_SUCCESS && ggml_opt_eval(o, NULL) == GGML_STATUS_FAILED && strstr(ggml_last_error(), "alpha"),
          "alpha 0 refused: %s", ggml_last_error());
    ggml_opt_free(o);
    CHECK(ggml_opt_alloc(NULL, true) == GGML_STATUS_FAILED && ggml_opt_eval(NULL, NULL) == GGML_STATUS_FAILED, "NULL context refused");
    CHECK(ggml_opt_epoch(NULL, NULL, NULL, NULL, -1, NULL, NULL) == GGML_STATUS_FAILED, "NULL epoch refused");
    ggml_opt_free(NULL);
    ggml_opt_result_free(NULL);
    ggml_opt_dataset_free(NULL);
    model_free(&m);
}

/* ---- results: the statistics of known batch losses ---- */

static void test_results(ggml_backend_sched_t sched, ggml_backend_t be) {
    /* SUM of outputs with W = 0, b = 0.5: the loss of a batch is 0.5 * M * B, always;
     * MEAN of a model whose outputs are W x with x varying gives known batch means */
    enum { K = 2, M = 1, B = 3, NBATCH = 4 };
    struct model m;
    if (!CHECK(model_init(&m, be, K, M, B), "model: %s", ggml_last_error())) return;
    const float W[K] = {1.0f, -2.0f}, b[M] = {0.5f};
    model_set(&m, W, b);
    for (int lt = GGML_OPT_LOSS_TYPE_MEAN; lt <= GGML_OPT_LOSS_TYPE_SUM; lt++) {
        ggml_opt_context_t o = opt_for(sched, &m, (enum ggml_opt_loss_type) lt, GGML_OPT_OPTIMIZER_TYPE_SGD, 1, NULL);
        ggml_opt_result_t r = ggml_opt_result_init();
        double losses[NBATCH];
        for (int ib = 0; ib < NBATCH; ib++) {
            float x[K * B];
            fill_f32(x, K * B, -1, 1);
            ggml_backend_tensor_set(m.x, x, 0, sizeof x);
            double s = 0.0;
            for (int j = 0; j < B; j++) s += b[0] + (double) W[0] * x[j * K] + (double) W[1] * x[j * K + 1];
            losses[ib] = lt == GGML_OPT_LOSS_TYPE_MEAN ? s / B : s;
            ggml_opt_alloc(o, false);
            CHECK(ggml_opt_eval(o, r) == GGML_STATUS_SUCCESS, "eval: %s", ggml_last_error());
        }
        double sum = 0.0, sum2 = 0.0;
        for (int i = 0; i < NBATCH; i++) { sum += losses[i]; sum2 += losses[i] * losses[i]; }
        const double mean = sum / NBATCH, var = (sum2 - NBATCH * mean * mean) / (NBATCH - 1);  /* sample variance */
        const double want = lt == GGML_OPT_LOSS_TYPE_MEAN ? mean : sum;
        /* upstream's (test-opt's) meaning: the standard error of the mean, and for SUM the losses' standard deviation */
        const double want_unc = lt == GGML_OPT_LOSS_TYPE_MEAN ? sqrt(var / NBATCH) : sqrt(var);
        double loss, unc, acc, acc_unc;
        int64_t nd, nf;
        ggml_opt_result_loss(r, &loss, &unc);
        ggml_opt_result_ndata(r, &nd);
        ggml_opt_result_accuracy(r, &acc, &acc_unc);
        ggml_opt_result_nonfinite(r, &nf);
        CHECK(nd == NBATCH * B && nf == 0, "result ndata %lld", (long long) nd);
        CHECK(fabs(loss - want) <= 1e-5 * (1 + fabs(want)) && fabs(unc - want_unc) <= 1e-4 * (1 + want_unc),
              "loss type %d: %g +- %g, want %g +- %g", lt, loss, unc, want, want_unc);
        CHECK(isnan(acc) && isnan(acc_unc), "no accuracy without cross-entropy");
        ggml_opt_result_reset(r);
        ggml_opt_result_loss(r, &loss, &unc);
        ggml_opt_result_ndata(r, &nd);
        CHECK(nd == 0 && loss == 0.0 && isnan(unc), "reset result");
        ggml_opt_result_free(r);
        ggml_opt_free(o);
    }
    model_free(&m);
}

/* ---- optimizer steps against float64 references ---- */

static void test_sgd_and_accumulation(ggml_backend_sched_t sched, ggml_backend_t be) {
    struct step_case one, two;
    if (!CHECK(step_case_init(&one, be, RB) && step_case_init(&two, be, RB / 2), "models")) return;
    memcpy(two.W0, one.W0, sizeof one.W0); memcpy(two.b0, one.b0, sizeof one.b0);
    memcpy(two.x, one.x, sizeof one.x);    memcpy(two.y, one.y, sizeof one.y);
    model_set(&two.m, two.W0, two.b0);
    struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
    pars.sgd.alpha = 0.1f;
    pars.sgd.wd = 0.05f;
    ggml_opt_context_t o1 = opt_for(sched, &one.m, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, GGML_OPT_OPTIMIZER_TYPE_SGD, 1, &pars);
    ggml_opt_context_t o2 = opt_for(sched, &two.m, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, GGML_OPT_OPTIMIZER_TYPE_SGD, 2, &pars);
    if (!CHECK(o1 && o2, "opt contexts: %s", ggml_last_error())) goto done;
    double gW[RK * RM], gb[RM];
    const double loss_ref = mse_grad_ref(&one.m, one.W0, one.b0, one.x, one.y, RB, gW, gb);
    ggml_opt_result_t r1 = ggml_opt_result_init(), r2 = ggml_opt_result_init();
    CHECK(train_batch(o1, &one, 0, r1) == GGML_STATUS_SUCCESS, "SGD step: %s", ggml_last_error());
    CHECK(train_batch(o2, &two, 0, r2) == GGML_STATUS_SUCCESS, "micro-batch 1: %s", ggml_last_error());
    float mid[RK * RM];
    ggml_backend_tensor_get(two.m.W, mid, 0, sizeof mid);
    CHECK(memcmp(mid, two.W0, sizeof mid) == 0, "no step after the first micro-batch of two");
    CHECK(train_batch(o2, &two, RB / 2, r2) == GGML_STATUS_SUCCESS, "micro-batch 2: %s", ggml_last_error());

    /* the gradient and the step: w1 = w0 (1 - alpha wd) - alpha g */
    double W1[RK * RM], b1[RM];
    for (int i = 0; i < RK * RM; i++) W1[i] = one.W0[i] * (1.0 - 0.1 * 0.05) - 0.1 * gW[i];
    for (int i = 0; i < RM; i++) b1[i] = one.b0[i] * (1.0 - 0.1 * 0.05) - 0.1 * gb[i];
    CHECK(max_abs_diff(ggml_opt_grad_acc(o1, one.m.W), gW) < 1e-5, "gradient of W vs float64");
    CHECK(max_abs_diff(ggml_opt_grad_acc(o2, two.m.W), gW) < 1e-5, "accumulated gradient of W vs float64");
    CHECK(max_abs_diff(one.m.W, W1) < 1e-5 && max_abs_diff(one.m.b, b1) < 1e-5, "SGD step vs float64");
    CHECK(max_abs_diff(two.m.W, W1) < 1e-5 && max_abs_diff(two.m.b, b1) < 1e-5, "opt_period 2 = one step on the doubled batch");
    double l1, l2;
    ggml_opt_result_loss(r1, &l1, NULL);
    ggml_opt_result_loss(r2, &l2, NULL);
    CHECK(fabs(l1 - loss_ref) < 1e-5 * (1 + loss_ref) && fabs(l2 - loss_ref) < 1e-5 * (1 + loss_ref),
          "result loss %g / %g (accumulated), float64 %g", l1, l2, loss_ref);
    ggml_opt_result_free(r1);
    ggml_opt_result_free(r2);
done:
    ggml_opt_free(o1);
    ggml_opt_free(o2);
    model_free(&one.m);
    model_free(&two.m);
}

static void test_adamw_two_steps(ggml_backend_sched_t sched, ggml_backend_t be) {
    struct step_case c;
    if (!CHECK(step_case_init(&c, be, RB), "model")) return;
    struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
    pars.adamw.alpha = 0.01f; pars.adamw.beta1 = 0.8f; pars.adamw.beta2 = 0.9f; pars.adamw.eps = 1e-3f; pars.adamw.wd = 0.1f;
    ggml_opt_context_t o = opt_for(sched, &c.m, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, GGML_OPT_OPTIMIZER_TYPE_ADAMW, 1, &pars);
    if (!CHECK(o != NULL, "opt: %s", ggml_last_error())) { model_free(&c.m); return; }
    /* reference: t = 1, 2; m = b1 m + (1-b1) g, v = b2 v + (1-b2) g^2,
     * w = w (1 - alpha wd) - alpha (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps) */
    float Wf[RK * RM], bf[RM];
    memcpy(Wf, c.W0, sizeof Wf); memcpy(bf, c.b0, sizeof bf);
    double mW[RK * RM] = {0}, vW[RK * RM] = {0}, mb[RM] = {0}, vb[RM] = {0};
    double Wd[RK * RM], bd[RM];
    for (int t = 1; t <= 2; t++) {
        double gW[RK * RM], gb[RM];
        mse_grad_ref(&c.m, Wf, bf, c.x, c.y, RB, gW, gb);
        const double b1h = 1.0 / (1.0 - pow(0.8, t)), b2h = 1.0 / (1.0 - pow(0.9, t));
        for (int i = 0; i < RK * RM + RM; i++) {
            const bool isW = i < RK * RM;
            double * mm = isW ? &mW[i] : &mb[i - RK * RM], * vv = isW ? &vW[i] : &vb[i - RK * RM];
            const double g = isW ? gW[i] : gb[i - RK * RM], w = isW ? Wf[i] : bf[i - RK * RM];
            *mm = 0.8 * *mm + 0.2 * g;
            *vv = 0.9 * *vv + 0.1 * g * g;
            const double w1 = w * (1.0 - 0.01 * 0.1) - 0.01 * (*mm * b1h) / (sqrt(*vv * b2h) + 1e-3);
            if (isW) Wd[i] = w1; else bd[i - RK * RM] = w1;
        }
        CHECK(train_batch(o, &c, 0, NULL) == GGML_STATUS_SUCCESS, "AdamW step %d: %s", t, ggml_last_error());
        CHECK(max_abs_diff(c.m.W, Wd) < 2e-6 && max_abs_diff(c.m.b, bd) < 2e-6, "AdamW step %d vs float64 (t from 1): %g", t, max_abs_diff(c.m.W, Wd));
        ggml_backend_tensor_get(c.m.W, Wf, 0, sizeof Wf);
        ggml_backend_tensor_get(c.m.b, bf, 0, sizeof bf);
    }
    /* reset(optimizer): moments and t start over, so the next step is a first step again */
    ggml_opt_reset(o, true);
    double gW[RK * RM], gb[RM];
    mse_grad_ref(&c.m, Wf, bf, c.x, c.y, RB, gW, gb);
    for (int i = 0; i < RK * RM; i++) Wd[i] = Wf[i] * (1.0 - 0.01 * 0.1) - 0.01 * gW[i] / (fabs(gW[i]) + 1e-3);
    CHECK(train_batch(o, &c, 0, NULL) == GGML_STATUS_SUCCESS && max_abs_diff(c.m.W, Wd) < 2e-6, "first step again after reset");
    ggml_opt_free(o);
    model_free(&c.m);
}

static void test_clipping(ggml_backend_sched_t sched, ggml_backend_t be) {
    struct step_case c;
    if (!CHECK(step_case_init(&c, be, RB), "model")) return;
    double gW[RK * RM], gb[RM];
    mse_grad_ref(&c.m, c.W0, c.b0, c.x, c.y, RB, gW, gb);
    double norm2 = 0.0;
    for (int i = 0; i < RK * RM; i++) norm2 += gW[i] * gW[i];
    for (int i = 0; i < RM; i++) norm2 += gb[i] * gb[i];
    const double norm = sqrt(norm2);
    for (int variant = 0; variant < 2; variant++) {
        /* clip_norm below the norm scales the step down to it; above, nothing changes */
        const double clip = variant == 0 ? 0.25 * norm : 4.0 * norm;
        const double s = clip < norm ? clip / norm : 1.0;
        model_set(&c.m, c.W0, c.b0);
        struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
        pars.sgd.alpha = 0.5f;
        pars.clip_norm = (float) clip;
        ggml_opt_context_t o = opt_for(sched, &c.m, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, GGML_OPT_OPTIMIZER_TYPE_SGD, 1, &pars);
        if (!CHECK(o && train_batch(o, &c, 0, NULL) == GGML_STATUS_SUCCESS, "clipped step: %s", ggml_last_error())) { ggml_opt_free(o); continue; }
        double Wd[RK * RM], bd[RM], step2 = 0.0;
        for (int i = 0; i < RK * RM; i++) {
            Wd[i] = c.W0[i] - 0.5 * s * gW[i];
            step2 += pow(ggml_get_f32_1d(c.m.W, i) - c.W0[i], 2);
        }
        for (int i = 0; i < RM; i++) {
            bd[i] = c.b0[i] - 0.5 * s * gb[i];
            step2 += pow(ggml_get_f32_1d(c.m.b, i) - c.b0[i], 2);
        }
        CHECK(max_abs_diff(c.m.W, Wd) < 1e-5 && max_abs_diff(c.m.b, bd) < 1e-5, "clip %s: step vs float64", variant ? "off" : "on");
        CHECK(fabs(sqrt(step2) - 0.5 * fmin(clip, norm)) < 1e-4 * norm, "clip %s: |step| %g, want alpha * min(clip, |g|) = %g",
              variant ? "off" : "on", sqrt(step2), 0.5 * fmin(clip, norm));
        ggml_opt_free(o);
    }
    model_free(&c.m);
}

static void test_nonfinite(ggml_backend_sched_t sched, ggml_backend_t be) {
    struct step_case c;
    if (!CHECK(step_case_init(&c, be, RB), "model")) return;
    c.x[5] = NAN;  /* one input: the loss and the gradients become NaN */
    for (int apply = 0; apply < 2; apply++) {
        model_set(&c.m, c.W0, c.b0);
        struct ggml_opt_params p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR);
        p.ctx_compute = c.m.ctx_compute; p.inputs = c.m.x; p.outputs = c.m.out;
        p.apply_nonfinite = apply;
        ggml_opt_context_t o = ggml_opt_init(p);
        if (!CHECK(o != NULL, "opt: %s", ggml_last_error())) continue;
        ggml_opt_result_t r = ggml_opt_result_init();
        ggml_clear_error();
        const enum ggml_status st = train_batch(o, &c, 0, r);
        int64_t nf;
        ggml_opt_result_nonfinite(r, &nf);
        CHECK(st == GGML_STATUS_ABORTED && ggml_last_error()[0] && nf == 1, "NaN loss reported (status %d, '%s', %lld)", (int) st, ggml_last_error(), (long long) nf);
        float W[RK * RM], b[RM];
        ggml_backend_tensor_get(c.m.W, W, 0, sizeof W);
        ggml_backend_tensor_get(c.m.b, b, 0, sizeof b);
        const bool untouched = memcmp(W, c.W0, sizeof W) == 0 && memcmp(b, c.b0, sizeof b) == 0;
        if (!apply) {
            CHECK(untouched, "parameters untouched after a NaN loss");
            /* the next finite batch trains normally, as a first AdamW step */
            float xfine[RK * RB];
            memcpy(xfine, c.x, sizeof xfine);
            c.x[5] = 0.5f;
            CHECK(train_batch(o, &c, 0, r) == GGML_STATUS_SUCCESS, "finite batch after a NaN one: %s", ggml_last_error());
            double gW[RK * RM], gb[RM], Wd[RK * RM];
            mse_grad_ref(&c.m, c.W0, c.b0, c.x, c.y, RB, gW, gb);
            for (int i = 0; i < RK * RM; i++) Wd[i] = c.W0[i] - 0.001 * gW[i] / (fabs(gW[i]) + 1e-8);
            CHECK(max_abs_diff(c.m.W, Wd) < 1e-6, "the step after a skipped one is step t = 1");
            memcpy(c.x, xfine, sizeof xfine);
        } else {
            CHECK(!untouched && isnan(ggml_get_f32_1d(c.m.W, 0)), "apply_nonfinite applies the NaN step");
        }
        ggml_opt_result_free(r);
        ggml_opt_free(o);
    }
    model_free(&c.m);
}

/* ---- training ---- */

static void test_linear_regression(ggml_backend_sched_t sched, ggml_backend_t be) {
    enum { K = 4, B = 16, ND = 256 };
    const float Wt[K] = {1.5f, -2.0f, 0.5f, 3.0f}, bt = -0.7f;
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, K, 1, ND, 1);
    struct model m;
    if (!CHECK(ds && model_init(&m, be, K, 1, B), "setup: %s", ggml_last_error())) { ggml_opt_dataset_free(ds); return; }
    float * x = ggml_opt_dataset_data(ds)->data, * y = ggml_opt_dataset_labels(ds)->data;
    for (int j = 0; j < ND; j++) {
        double v = bt;
        for (int k = 0; k < K; k++) { x[j * K + k] = (float) tc_uniform(-1, 1); v += Wt[k] * x[j * K + k]; }
        y[j] = (float) (v + tc_uniform(-0.01, 0.01));
    }
    const float W0[K] = {0}, b0[1] = {0};
    model_set(&m, W0, b0);
    struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
    pars.adamw.alpha = 0.05f;
    ggml_opt_context_t o = opt_for(sched, &m, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, GGML_OPT_OPTIMIZER_TYPE_ADAMW, 1, &pars);
    ggml_opt_result_t rt = ggml_opt_result_init(), rv = ggml_opt_result_init();
    double first = NAN, last = NAN, val = NAN;
    for (int epoch = 0; o && epoch < 30; epoch++) {
        ggml_opt_dataset_shuffle(o, ds, ND - 4 * B);
        ggml_opt_result_reset(rt);
        ggml_opt_result_reset(rv);
        if (!CHECK(ggml_opt_epoch(o, ds, rt, rv, ND - 4 * B, NULL, NULL) == GGML_STATUS_SUCCESS, "epoch: %s", ggml_last_error())) break;
        ggml_opt_result_loss(rt, epoch == 0 ? &first : &last, NULL);
        ggml_opt_result_loss(rv, &val, NULL);
    }
    CHECK(last < 1e-3 * first && val < 1e-3, "MSE falls: first epoch %g, last %g, validation %g", first, last, val);
    double err = fabs(ggml_get_f32_1d(m.b, 0) - bt);
    for (int k = 0; k < K; k++) err = fmax(err, fabs(ggml_get_f32_1d(m.W, k) - Wt[k]));
    CHECK(err < 0.02, "learned weights within %g of the true ones", err);
    ggml_opt_result_free(rt);
    ggml_opt_result_free(rv);
    ggml_opt_free(o);
    model_free(&m);
    ggml_opt_dataset_free(ds);
}

/* three Gaussian blobs in the plane, one-hot labels */
static void make_blobs(ggml_opt_dataset_t ds, int nd) {
    static const float centre[3][2] = {{-1.0f, 0.0f}, {1.0f, 0.8f}, {0.5f, -1.2f}};
    float * x = ggml_opt_dataset_data(ds)->data, * y = ggml_opt_dataset_labels(ds)->data;
    for (int j = 0; j < nd; j++) {
        const int c = j % 3;
        x[2 * j] = centre[c][0] + (float) tc_uniform(-0.4, 0.4);
        x[2 * j + 1] = centre[c][1] + (float) tc_uniform(-0.4, 0.4);
        for (int k = 0; k < 3; k++) y[3 * j + k] = k == c;
    }
}

static double accuracy_of(ggml_opt_context_t o, ggml_opt_dataset_t ds) {
    ggml_opt_result_t r = ggml_opt_result_init();
    ggml_opt_epoch(o, ds, NULL, r, 0, NULL, NULL);
    double acc;
    ggml_opt_result_accuracy(r, &acc, NULL);
    ggml_opt_result_free(r);
    return acc;
}

static int64_t progress_calls;
static void count_progress(bool train, ggml_opt_context_t o, ggml_opt_dataset_t ds, ggml_opt_result_t r, int64_t ib, int64_t ib_max, int64_t t0) {
    (void) o; (void) ds; (void) r; (void) t0;
    progress_calls += train && ib >= 1 && ib <= ib_max;
}

/* what ggml_opt_fit prints when not silent, gathered from the log */
static char fit_log[1 << 14];
static void gather_log(enum ggml_log_level level, const char * text, void * user) {
    (void) level; (void) user;
    const size_t used = strlen(fit_log);
    snprintf(fit_log + used, sizeof fit_log - used, "%s", text);
}

/* ggml_opt_fit passes a pointer to the epoch (from 1) */
static bool fit_epochs_ok = true;
static struct ggml_opt_optimizer_params fit_pars(void * ud) {
    const int64_t epoch = *(const int64_t *) ud;
    fit_epochs_ok &= epoch >= 1 && epoch <= 20;
    struct ggml_opt_optimizer_params p = ggml_opt_get_default_optimizer_params(NULL);
    p.adamw.alpha = 0.05f;
    return p;
}

static void test_classification(ggml_backend_sched_t sched, ggml_backend_t be) {
    enum { B = 12, ND = 240 };
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 2, 3, ND, 1);
    struct model m;
    if (!CHECK(ds && model_init(&m, be, 2, 3, B), "setup: %s", ggml_last_error())) { ggml_opt_dataset_free(ds); return; }
    make_blobs(ds, ND);
    /* start from weights that put every point into class 0 */
    const float W0[6] = {0, 0, 0, 0, 0, 0}, b0[3] = {1.0f, 0.0f, 0.0f};
    model_set(&m, W0, b0);
    struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
    pars.sgd.alpha = 0.5f;
    ggml_opt_context_t o = opt_for(sched, &m, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY, GGML_OPT_OPTIMIZER_TYPE_SGD, 2, &pars);
    if (!CHECK(o != NULL, "opt: %s", ggml_last_error())) { model_free(&m); ggml_opt_dataset_free(ds); return; }
    const double acc0 = accuracy_of(o, ds);
    ggml_opt_result_t r = ggml_opt_result_init();
    double loss0 = NAN, loss1 = NAN;
    for (int epoch = 0; epoch < 15; epoch++) {
        ggml_opt_dataset_shuffle(o, ds, -1);
        ggml_opt_result_reset(r);
        progress_calls = 0;
        CHECK(ggml_opt_epoch(o, ds, r, NULL, -1, count_progress, NULL) == GGML_STATUS_SUCCESS, "epoch: %s", ggml_last_error());
        ggml_opt_result_loss(r, epoch == 0 ? &loss0 : &loss1, NULL);
    }
    CHECK(progress_calls == ND / B, "callback once per batch (%lld)", (long long) progress_calls);
    const double acc1 = accuracy_of(o, ds);
    CHECK(fabs(acc0 - 1.0 / 3.0) < 1e-9 && acc1 > 0.95 && loss1 < 0.5 * loss0, "accuracy %g -> %g, cross-entropy %g -> %g", acc0, acc1, loss0, loss1);
    /* predictions agree with argmax of the outputs computed here (in dataset order: a fresh copy) */
    ggml_opt_dataset_t ds_eval = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 2, 3, ND, 1);
    ggml_backend_tensor_set(ggml_opt_dataset_data(ds_eval), ggml_opt_dataset_data(ds)->data, 0, ggml_nbytes(ggml_opt_dataset_data(ds)));
    ggml_opt_result_t re = ggml_opt_result_init();
    ggml_opt_epoch(o, ds_eval, NULL, re, 0, NULL, NULL);
    int32_t * pred = malloc(ND * sizeof *pred);
    ggml_opt_result_pred(re, pred);
    const float * x = ggml_opt_dataset_data(ds)->data;
    int agree = 0;
    for (int j = 0; j < ND; j++) {
        int best = 0;
        double vbest = -INFINITY;
        for (int c = 0; c < 3; c++) {
            const double v = ggml_get_f32_1d(m.b, c) + (double) ggml_get_f32_1d(m.W, 2 * c) * x[2 * j] + (double) ggml_get_f32_1d(m.W, 2 * c + 1) * x[2 * j + 1];
            if (v > vbest) { vbest = v; best = c; }
        }
        agree += pred[j] == best;
    }
    CHECK(agree == ND, "predictions match a float64 argmax (%d of %d)", agree, ND);
    free(pred);
    ggml_opt_dataset_free(ds_eval);
    ggml_opt_result_free(re);
    ggml_opt_result_free(r);
    ggml_opt_free(o);

    /* ggml_opt_fit from the same start trains too */
    model_set(&m, W0, b0);
    CHECK(ggml_opt_fit(sched, m.ctx_compute, m.x, m.out, ds, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY, GGML_OPT_OPTIMIZER_TYPE_ADAMW,
                       fit_pars, 20, 2 * B, 0.2f, true) == GGML_STATUS_SUCCESS, "fit: %s", ggml_last_error());
    CHECK(fit_epochs_ok, "get_opt_pars receives the epoch, 1 to nepoch");
    CHECK(ggml_opt_fit(sched, m.ctx_compute, m.x, m.out, ds, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY, GGML_OPT_OPTIMIZER_TYPE_ADAMW,
                       ggml_opt_get_default_optimizer_params, 1, B + 1, 0.2f, true) == GGML_STATUS_FAILED, "fit: bad logical batch refused");
    /* the constant-parameters callback reads a params struct through its
     * userdata: fit must not hand it the 8-byte epoch (ASan sees the overread) */
    CHECK(ggml_opt_fit(sched, m.ctx_compute, m.x, m.out, ds, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY, GGML_OPT_OPTIMIZER_TYPE_ADAMW,
                       ggml_opt_get_constant_optimizer_params, 1, 2 * B, 0.2f, true) == GGML_STATUS_SUCCESS,
          "fit with constant optimizer params: %s", ggml_last_error());
    /* not silent: upstream's lines (the epoch, a progress line per batch with
     * the time and the time left, the whole time as hh:mm:ss) */
    fit_log[0] = '\0';
    ggml_log_set(gather_log, NULL);
    ggml_opt_fit(sched, m.ctx_compute, m.x, m.out, ds, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY, GGML_OPT_OPTIMIZER_TYPE_ADAMW,
                 ggml_opt_get_default_optimizer_params, 1, 2 * B, 0.2f, false);
    ggml_log_set(NULL, NULL);
    CHECK(strstr(fit_log, "ggml_opt_fit: epoch 0001/0001:\n") && strstr(fit_log, "train: [") && strstr(fit_log, "val:   [") &&
          strstr(fit_log, "] data=0000192/0000192 loss=") && strstr(fit_log, " t=00:00:00 ETA=00:00:00 ") &&
          strstr(fit_log, "ggml_opt_fit: training took 00:00:0"),
          "fit's progress lines as upstream's:\n%s", fit_log);
    ggml_opt_context_t oe = opt_for(sched, &m, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY, GGML_OPT_OPTIMIZER_TYPE_ADAMW, 1, NULL);
    const double acc_fit = oe ? accuracy_of(oe, ds) : 0.0;
    CHECK(acc_fit > 0.9, "accuracy after ggml_opt_fit %g", acc_fit);
    ggml_opt_free(oe);
    model_free(&m);
    ggml_opt_dataset_free(ds);
}

/* Upstream's non-static mode: a model built anew for every batch, handed
 * over with ggml_opt_prepare_alloc, trains bit for bit like the same model
 * in static graphs (AdamW, accumulation over 2 batches: the moments and the
 * accumulators carry over between the rebuilt contexts). */
static struct ggml_context * batch_model(struct model * m, int B, struct ggml_tensor ** x, struct ggml_tensor ** out, struct ggml_cgraph ** gf, bool with_b) {
    struct ggml_init_params pc = {16 * ggml_tensor_overhead() + ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, true), NULL, true};
    struct ggml_context * ctx = ggml_init(pc);
    *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, m->K, B);
    *out = ggml_mul_mat(ctx, m->W, *x);
    if (with_b) *out = ggml_add(ctx, *out, m->b);
    *gf = ggml_new_graph_custom(ctx, GGML_DEFAULT_GRAPH_SIZE, true);
    ggml_build_forward_expand(*gf, *out);
    return ctx;
}

static void test_prepare_alloc(ggml_backend_sched_t sched, ggml_backend_t be) {
    enum { B = 4 };
    struct step_case c1, c2;
    if (!CHECK(step_case_init(&c1, be, B) && step_case_init(&c2, be, B), "models")) return;
    memcpy(c2.W0, c1.W0, sizeof c1.W0); memcpy(c2.b0, c1.b0, sizeof c1.b0);
    memcpy(c2.x, c1.x, sizeof c1.x); memcpy(c2.y, c1.y, sizeof c1.y);
    model_set(&c2.m, c2.W0, c2.b0);
    struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
    pars.adamw.alpha = 0.05f;
    ggml_opt_context_t o1 = opt_for(sched, &c1.m, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, GGML_OPT_OPTIMIZER_TYPE_ADAMW, 2, &pars);
    /* a scheduler of its own: a reset by one context takes the memory of the other's graph */
    ggml_backend_sched_t sched2 = ggml_backend_sched_new(&be, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, true);
    struct ggml_opt_params p = ggml_opt_default_params(sched2, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR);
    p.optimizer = GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    p.opt_period = 2;
    p.get_opt_pars = ggml_opt_get_constant_optimizer_params;
    p.get_opt_pars_ud = &pars;
    ggml_opt_context_t o2 = ggml_opt_init(p);
    if (!CHECK(o1 && o2, "contexts: %s", ggml_last_error())) { model_free(&c1.m); model_free(&c2.m); ggml_backend_sched_free(sched2); return; }
    CHECK(ggml_opt_static_graphs(o1) && !ggml_opt_static_graphs(o2) && ggml_opt_inputs(o2) == NULL, "static and non-static contexts");
    CHECK(ggml_opt_alloc(o2, true) == GGML_STATUS_FAILED && strstr(ggml_last_error(), "ggml_opt_prepare_alloc"), "alloc before a model is refused");

    ggml_opt_result_t r1 = ggml_opt_result_init(), r2 = ggml_opt_result_init();
    struct ggml_context * prev = NULL;
    bool same = true, ok = true;
    for (int ib = 0; ib < 6; ib++) {
        const int j0 = ib % 2 * B;
        ok &= train_batch(o1, &c1, j0, r1) == GGML_STATUS_SUCCESS;
        struct ggml_tensor * x, * out;
        struct ggml_cgraph * gf;
        struct ggml_context * ctx = batch_model(&c2.m, B, &x, &out, &gf, true);
        ggml_clear_error();
        ggml_opt_prepare_alloc(o2, ctx, gf, x, out);
        ok &= ggml_last_error()[0] == '\0' && ggml_opt_inputs(o2) == x && ggml_opt_outputs(o2) == out;
        ggml_free(prev);  /* the last batch's model, once the next one is prepared */
        prev = ctx;
        ok &= ggml_opt_alloc(o2, true) == GGML_STATUS_SUCCESS;
        ggml_backend_tensor_set(x, c2.x + j0 * RK, 0, (size_t) B * RK * sizeof(float));
        ggml_backend_tensor_set(ggml_opt_labels(o2), c2.y + j0 * RM, 0, (size_t) B * RM * sizeof(float));
        ok &= ggml_opt_eval(o2, r2) == GGML_STATUS_SUCCESS;
        same &= memcmp(c1.m.W->data, c2.m.W->data, ggml_nbytes(c1.m.W)) == 0 && memcmp(c1.m.b->data, c2.m.b->data, ggml_nbytes(c1.m.b)) == 0;
    }
    double l1, l2, u;
    ggml_opt_result_loss(r1, &l1, &u);
    ggml_opt_result_loss(r2, &l2, &u);
    CHECK(ok, "six batches in both modes: %s", ggml_last_error());
    CHECK(same && l1 == l2 && ggml_opt_get_steps(o1) == 3 && ggml_opt_get_steps(o2) == 3, "the same parameters after every batch, loss %.9g vs %.9g, 3 steps each", l1, l2);
    CHECK(memcmp(c1.m.W->data, c1.W0, sizeof c1.W0) != 0, "and they did change");

    /* refusals */
    struct ggml_tensor * x, * out;
    struct ggml_cgraph * gf;
    struct ggml_context * other = batch_model(&c2.m, B, &x, &out, &gf, false);
    ggml_opt_prepare_alloc(o2, other, gf, x, out);
    CHECK(strstr(ggml_last_error(), "parameters (1) differ") != NULL && ggml_opt_outputs(o2) != out, "a model with other parameters is refused: %s", ggml_last_error());
    ggml_clear_error();
    ggml_opt_prepare_alloc(o1, other, gf, x, out);
    CHECK(strstr(ggml_last_error(), "static graphs") != NULL, "a static context takes no model per batch");
    ggml_clear_error();
    ggml_opt_prepare_alloc(o2, other, gf, x, NULL);
    CHECK(strstr(ggml_last_error(), "NULL") != NULL, "NULL outputs");
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, RK, RM, 8, 1);
    CHECK(ggml_opt_epoch(o2, ds, NULL, NULL, 0, NULL, NULL) == GGML_STATUS_FAILED && strstr(ggml_last_error(), "static graphs"), "no epochs without static graphs");
    p.loss = out;
    CHECK(ggml_opt_init(p) == NULL && strstr(ggml_last_error(), "static graphs"), "no loss of the caller's without static graphs");
    ggml_opt_dataset_free(ds);
    ggml_opt_result_free(r1);
    ggml_opt_result_free(r2);
    ggml_opt_free(o1);
    ggml_opt_free(o2);
    ggml_free(other);
    ggml_free(prev);
    ggml_backend_sched_free(sched2);
    model_free(&c1.m);
    model_free(&c2.m);
}

int main(void) {
    tc_seed(20240611);
    ggml_backend_t be = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(be, 1);
    test_sched(be);
    ggml_backend_sched_t sched = ggml_backend_sched_new(&be, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, true);
    if (CHECK(sched != NULL, "sched: %s", ggml_last_error())) {
        test_dataset(sched, be);
        test_params_and_refusals(sched, be);
        test_results(sched, be);
        test_sgd_and_accumulation(sched, be);
        test_adamw_two_steps(sched, be);
        test_prepare_alloc(sched, be);
        test_clipping(sched, be);
        test_nonfinite(sched, be);
        test_linear_regression(sched, be);
        test_classification(sched, be);
    }
    ggml_backend_sched_free(sched);
    ggml_backend_free(be);
    return tc_finish("test_opt");
}

/* opt_fit.c -- training written the way upstream ggml programs are (mnist-style):
 * a CPU backend and scheduler, parameters and inputs in a statically
 * allocated context, the model's other tensors in a no_alloc context, a
 * dataset, and ggml_opt_fit. The model is a softmax classifier of three
 * clusters in the plane; the program prints the accuracy before and after. */
#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-opt.h"

#include <stdio.h>
#include <stdlib.h>

enum { NCLASS = 3, NBATCH = 16, NDATA = 960 };

static double accuracy(ggml_backend_sched_t sched, struct ggml_context * ctx_compute, struct ggml_tensor * inputs,
                       struct ggml_tensor * logits, ggml_opt_dataset_t dataset) {
    struct ggml_opt_params params = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    params.ctx_compute = ctx_compute;
    params.inputs      = inputs;
    params.outputs     = logits;
    params.build_type  = GGML_OPT_BUILD_TYPE_FORWARD;
    ggml_opt_context_t opt_ctx = ggml_opt_init(params);
    ggml_opt_result_t result = ggml_opt_result_init();
    double acc = -1.0;
    if (opt_ctx && result && ggml_opt_epoch(opt_ctx, dataset, NULL, result, 0, NULL, NULL) == GGML_STATUS_SUCCESS) {
        ggml_opt_result_accuracy(result, &acc, NULL);
    }
    ggml_opt_result_free(result);
    ggml_opt_free(opt_ctx);
    return acc;
}

int main(void) {
    ggml_backend_t backend = ggml_backend_cpu_init();
    ggml_backend_sched_t sched = ggml_backend_sched_new(&backend, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, true);
    if (!sched) { fprintf(stderr, "%s\n", ggml_last_error()); return 1; }

    /* parameters and inputs: memory of their own */
    struct ggml_init_params ps = {8 * ggml_tensor_overhead(), NULL, true};
    struct ggml_context * ctx_static = ggml_init(ps);
    struct ggml_tensor * W = ggml_new_tensor_2d(ctx_static, GGML_TYPE_F32, 2, NCLASS);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx_static, GGML_TYPE_F32, NCLASS);
    struct ggml_tensor * inputs = ggml_new_tensor_2d(ctx_static, GGML_TYPE_F32, 2, NBATCH);
    ggml_set_name(W, "W");
    ggml_set_name(b, "b");
    ggml_set_name(inputs, "inputs");
    ggml_set_param(W);
    ggml_set_param(b);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx_static, backend);

    /* the model: logits [NCLASS, NBATCH] = W^T inputs + b */
    struct ggml_init_params pc = {GGML_DEFAULT_GRAPH_SIZE * ggml_tensor_overhead() + 3 * ggml_graph_overhead(), NULL, true};
    struct ggml_context * ctx_compute = ggml_init(pc);
    struct ggml_tensor * logits = ggml_add(ctx_compute, ggml_mul_mat(ctx_compute, W, inputs), b);

    /* three clusters, one-hot labels */
    ggml_opt_dataset_t dataset = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 2, NCLASS, NDATA, 1);
    if (!buf || !logits || !dataset) { fprintf(stderr, "%s\n", ggml_last_error()); return 1; }
    float * x = ggml_opt_dataset_data(dataset)->data, * y = ggml_opt_dataset_labels(dataset)->data;
    static const float centre[NCLASS][2] = {{-1.0f, 0.0f}, {1.0f, 1.0f}, {0.5f, -1.0f}};
    srand(1);
    for (int j = 0; j < NDATA; j++) {
        const int c = j % NCLASS;
        for (int d = 0; d < 2; d++) x[2 * j + d] = centre[c][d] + 0.8f * ((float) rand() / (float) RAND_MAX - 0.5f);
        for (int k = 0; k < NCLASS; k++) y[NCLASS * j + k] = k == c;
    }
    ggml_set_zero(W);
    ggml_set_zero(b);

    printf("accuracy before training: %.1f%%\n", 100.0 * accuracy(sched, ctx_compute, inputs, logits, dataset));
    const enum ggml_status st = ggml_opt_fit(sched, ctx_compute, inputs, logits, dataset, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY,
                                             GGML_OPT_OPTIMIZER_TYPE_ADAMW, ggml_opt_get_default_optimizer_params,
                                             /*nepoch =*/ 10, /*nbatch_logical =*/ 2 * NBATCH, /*val_split =*/ 0.1f, /*silent =*/ false);
    if (st != GGML_STATUS_SUCCESS) fprintf(stderr, "ggml_opt_fit: %s\n", ggml_last_error());
    printf("accuracy after training:  %.1f%%\n", 100.0 * accuracy(sched, ctx_compute, inputs, logits, dataset));

    ggml_opt_dataset_free(dataset);
    ggml_free(ctx_compute);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx_static);
    ggml_backend_sched_free(sched);
    ggml_backend_free(backend);
    return st == GGML_STATUS_SUCCESS ? 0 : 1;
}

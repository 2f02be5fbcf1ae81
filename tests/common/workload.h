/* workload.h -- small, complete training runs shared by the tests that need
 * "a representative workload": the allocation-failure test, the concurrency
 * test and the API fuzzer. Each builds everything it uses, returns a status
 * (any library failure is passed on, never crashes) and frees everything on
 * every path, so that a failed run leaks nothing. */
#ifndef GGMLR_TEST_WORKLOAD_H
#define GGMLR_TEST_WORKLOAD_H

#include "ggml.h"
#include "ggml-opt.h"

#include <stdint.h>

/* Plain autodiff: a two-layer GELU model (8 -> 6 -> 4) trained with
 * cross-entropy on seeded data for `steps` AdamW steps (ggml_opt_step_adamw),
 * on n_threads threads. Its 8*6 + 6*4 final weights go to out[TW_N_WEIGHTS]. */
#define TW_N_WEIGHTS 72
enum ggml_status tw_train_autodiff(uint64_t seed, int n_threads, int steps, float * out);

/* The training API: a softmax classifier (2 -> 3, plus bias) on a seeded
 * dataset of 48 points in batches of 8, through a CPU scheduler and
 * ggml_opt_init/ggml_opt_epoch, for `epochs` epochs. The 3*2 + 3 final
 * parameters go to out[TW_N_OPT_PARAMS]; *loss gets the last epoch's loss. */
#define TW_N_OPT_PARAMS 9
struct tw_opt_config {
    enum ggml_opt_loss_type      loss;
    enum ggml_opt_optimizer_type optimizer;
    enum ggml_opt_build_type     build;
    int32_t                      opt_period;
    int64_t                      epochs;
    int64_t                      idata_split;  /* < 0: all data trains */
    struct ggml_opt_optimizer_params hyper;
};
struct tw_opt_config tw_opt_default(void);
enum ggml_status tw_train_opt(uint64_t seed, int n_threads, const struct tw_opt_config * cfg, float * out, double * loss);

#endif

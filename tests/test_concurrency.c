/* test_concurrency.c -- the library used from several threads at once: each
 * application thread builds and computes its own graphs and trains its own
 * small models (plain autodiff + ggml_opt_step_adamw, and the ggml_opt
 * training API through its own CPU scheduler), each with 1-3 compute
 * threads of its own. Every result must be bitwise the one the same work
 * gives when it runs alone: nothing is shared between contexts, graphs,
 * schedulers or thread pools. Also run under ThreadSanitizer (test-all.sh). */
#include "common/test_common.h"
#include "common/workload.h"

#include <pthread.h>
#include <string.h>

#define N_APP_THREADS 4
#define ROUNDS        2

struct job {
    int id;
    float autodiff[TW_N_WEIGHTS], opt[TW_N_OPT_PARAMS];
    double loss;
    enum ggml_status st_autodiff, st_opt;
    char error[256];
};

/* One thread's work: the seed, step count and thread count all depend on id. */
static void run_job(struct job * j) {
    const int nth = 1 + j->id % 3;
    struct tw_opt_config cfg = tw_opt_default();
    cfg.optimizer = j->id % 2 ? GGML_OPT_OPTIMIZER_TYPE_SGD : GGML_OPT_OPTIMIZER_TYPE_ADAMW;
    j->st_autodiff = tw_train_autodiff(100 + (uint64_t) j->id, nth, 4 + j->id, j->autodiff);
    j->st_opt = tw_train_opt(200 + (uint64_t) j->id, nth, &cfg, j->opt, &j->loss);
    /* the last error is per thread: copy it out while this thread still runs */
    snprintf(j->error, sizeof j->error, "%s", ggml_last_error());
}

static void * thread_main(void * arg) {
    for (int r = 0; r < ROUNDS; r++) run_job(arg);
    return NULL;
}

int main(void) {
    struct job alone[N_APP_THREADS], together[N_APP_THREADS];
    memset(alone, 0, sizeof alone);
    memset(together, 0, sizeof together);
    for (int i = 0; i < N_APP_THREADS; i++) {
        alone[i].id = together[i].id = i;
        run_job(&alone[i]);
        CHECK(alone[i].st_autodiff == GGML_STATUS_SUCCESS && alone[i].st_opt == GGML_STATUS_SUCCESS, "job %d alone: %s", i, alone[i].error);
    }
    pthread_t th[N_APP_THREADS];
    int started = 0;
    for (int i = 0; i < N_APP_THREADS; i++)
        if (CHECK(pthread_create(&th[i], NULL, thread_main, &together[i]) == 0, "pthread_create")) started++;
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < started; i++) {
        CHECK(together[i].st_autodiff == GGML_STATUS_SUCCESS && together[i].st_opt == GGML_STATUS_SUCCESS, "job %d together: %s", i,
              together[i].error);
        CHECK(memcmp(alone[i].autodiff, together[i].autodiff, sizeof alone[i].autodiff) == 0, "job %d: autodiff weights bitwise as alone", i);
        CHECK(memcmp(alone[i].opt, together[i].opt, sizeof alone[i].opt) == 0, "job %d: ggml_opt parameters bitwise as alone", i);
        CHECK(memcmp(&alone[i].loss, &together[i].loss, sizeof alone[i].loss) == 0, "job %d: loss bitwise as alone", i);
        /* and the training did something: the loss is a finite number */
        CHECK(isfinite(alone[i].loss) && alone[i].loss > 0.0, "job %d: loss %g", i, alone[i].loss);
    }
    return tc_finish("concurrency");
}

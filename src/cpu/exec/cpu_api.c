/* cpu_api.c -- ggml-cpu.h's thread pools owned by the caller, NUMA queries
 * and the row converters. */
#include "cpu/exec/threadpool.h"
#include "core/internal.h"
#include "ggml-cpu.h"

#include <dirent.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

struct ggml_threadpool * ggml_threadpool_new(struct ggml_threadpool_params * params) {
    static const char fn[] = "ggml_threadpool_new";
    if (!params) { ggmlr_set_error("%s: params is NULL", fn); return NULL; }
    if (params->n_threads < 1 || params->n_threads > GGML_MAX_N_THREADS) {
        ggmlr_set_error("%s: n_threads %d is not in 1..%d", fn, params->n_threads, GGML_MAX_N_THREADS);
        return NULL;
    }
    struct ggml_threadpool * tp = ggmlr_calloc(1, sizeof *tp);
    if (!tp) { ggmlr_set_error("%s: out of memory", fn); return NULL; }
    if (!(tp->pool = ggmlr_pool_new())) { free(tp); return NULL; }
    tp->n_threads = params->n_threads;
    return tp;
}

void ggml_threadpool_free(struct ggml_threadpool * tp) {
    if (!tp) return;
    ggmlr_pool_free(tp->pool);
    free(tp);
}

int ggml_threadpool_get_n_threads(struct ggml_threadpool * tp) {
    if (!tp) { ggmlr_set_error("ggml_threadpool_get_n_threads: threadpool is NULL"); return 0; }
    return tp->n_threads;
}

/* A compute resumes a paused pool (as upstream's does) and an idle pool here
 * costs nothing, so pausing changes nothing. */
void ggml_threadpool_pause(struct ggml_threadpool * tp) {
    if (!tp) ggmlr_set_error("ggml_threadpool_pause: threadpool is NULL");
}

void ggml_threadpool_resume(struct ggml_threadpool * tp) {
    if (!tp) ggmlr_set_error("ggml_threadpool_resume: threadpool is NULL");
}

/* NUMA: the number of nodes Linux lists in sysfs (0 before ggml_numa_init). */
static atomic_int numa_nodes;

void ggml_numa_init(enum ggml_numa_strategy numa) {
    if ((int) numa < 0 || numa >= GGML_NUMA_STRATEGY_COUNT) {
        ggmlr_set_error("ggml_numa_init: no NUMA strategy %d", (int) numa);
        return;
    }
    int n = 0;
    DIR * dir = opendir("/sys/devices/system/node");
    for (struct dirent * e; dir && (e = readdir(dir));) {
        const char * name = e->d_name;
        if (strncmp(name, "node", 4) == 0 && name[4] >= '0' && name[4] <= '9') n++;
    }
    if (dir) closedir(dir);
    atomic_store(&numa_nodes, n > 0 ? n : 1);
}

bool ggml_is_numa(void) { return atomic_load(&numa_nodes) > 1; }

/* Row converters. */
static bool rows_ok(const char * fn, const void * x, const void * y, int64_t n) {
    if (n > 0 && (!x || !y)) { ggmlr_set_error("%s: a row pointer is NULL", fn); return false; }
    return n > 0;
}

void ggml_cpu_fp32_to_fp32(const float * x, float * y, int64_t n) {
    if (rows_ok("ggml_cpu_fp32_to_fp32", x, y, n)) memmove(y, x, (size_t) n * sizeof *x);
}

void ggml_cpu_fp32_to_i32(const float * x, int32_t * y, int64_t n) {
    if (!rows_ok("ggml_cpu_fp32_to_i32", x, y, n)) return;
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i];
        y[i] = isnan(v) ? 0 : v >= 2147483648.0f ? INT32_MAX : v < -2147483648.0f ? INT32_MIN : (int32_t) v;
    }
}

void ggml_cpu_fp32_to_fp16(const float * x, ggml_fp16_t * y, int64_t n) {
    if (rows_ok("ggml_cpu_fp32_to_fp16", x, y, n)) ggml_fp32_to_fp16_row(x, y, n);
}

void ggml_cpu_fp16_to_fp32(const ggml_fp16_t * x, float * y, int64_t n) {
    if (rows_ok("ggml_cpu_fp16_to_fp32", x, y, n)) ggml_fp16_to_fp32_row(x, y, n);
}

void ggml_cpu_fp32_to_bf16(const float * x, ggml_bf16_t * y, int64_t n) {
    if (rows_ok("ggml_cpu_fp32_to_bf16", x, y, n)) ggml_fp32_to_bf16_row(x, y, n);
}

void ggml_cpu_bf16_to_fp32(const ggml_bf16_t * x, float * y, int64_t n) {
    if (rows_ok("ggml_cpu_bf16_to_fp32", x, y, n)) ggml_bf16_to_fp32_row(x, y, n);
}

/* platform.c -- what upstream's ggml.h offers about the platform and build:
 * the clocks (wall time from the monotonic clock, which needs no set-up, so
 * ggml_time_init does nothing; "cycles" as process CPU time in clock()
 * ticks, as upstream counts them), ggml_fopen, the version. */
#include "core/internal.h"

#include <time.h>

void ggml_time_init(void) {}

static int64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t ggml_time_ms(void) { return monotonic_ns() / 1000000; }
int64_t ggml_time_us(void) { return monotonic_ns() / 1000; }
int64_t ggml_cycles(void) { return (int64_t) clock(); }
int64_t ggml_cycles_per_ms(void) { return CLOCKS_PER_SEC / 1000; }

/* upstream converts a UTF-8 name for Windows; POSIX names are bytes already */
FILE * ggml_fopen(const char * fname, const char * mode) {
    if (!fname || !mode) { ggmlr_set_error("ggml_fopen: file name or mode is NULL"); return NULL; }
    return fopen(fname, mode);
}

#ifndef GGMLR_VERSION
#define GGMLR_VERSION "0.1.0"
#endif
const char * ggml_version(void) { return GGMLR_VERSION; }
const char * ggml_commit(void) { return "unknown"; }  /* a build does not know its git commit */

bool ggml_guid_matches(ggml_guid_t guid_a, ggml_guid_t guid_b) {
    return guid_a && guid_b && memcmp(guid_a, guid_b, sizeof(ggml_guid)) == 0;
}

void ggml_threadpool_params_init(struct ggml_threadpool_params * p, int n_threads) {
    if (!p) return;
    memset(p->cpumask, 0, sizeof p->cpumask);
    p->n_threads = n_threads;
    p->prio = GGML_SCHED_PRIO_NORMAL;
    p->poll = 50;
    p->strict_cpu = false;
    p->paused = false;
}

struct ggml_threadpool_params ggml_threadpool_params_default(int n_threads) {
    struct ggml_threadpool_params p;
    ggml_threadpool_params_init(&p, n_threads);
    return p;
}

bool ggml_threadpool_params_match(const struct ggml_threadpool_params * p0, const struct ggml_threadpool_params * p1) {
    if (!p0 || !p1) return false;
    return p0->n_threads == p1->n_threads && p0->prio == p1->prio && p0->poll == p1->poll && p0->strict_cpu == p1->strict_cpu &&
           memcmp(p0->cpumask, p1->cpumask, sizeof p0->cpumask) == 0;
}

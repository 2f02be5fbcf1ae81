/* time.c -- upstream's clocks: wall time from the monotonic clock (no set-up,
 * so ggml_time_init does nothing), "cycles" as process CPU time in clock()
 * ticks, as upstream counts them. */
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

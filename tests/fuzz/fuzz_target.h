/* fuzz_target.h -- what a fuzz target (tests/fuzz/fuzz_*.c) provides and may
 * use. libFuzzer calls LLVMFuzzerTestOneInput with each input it makes; the
 * replay driver (replay.c) calls it with every file of a corpus, so that any
 * build, gcc's included, re-runs every input that ever crashed. */
#ifndef GGMLR_FUZZ_TARGET_H
#define GGMLR_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size);

/* Huge requests under AddressSanitizer return NULL (as libc does) instead of
 * aborting: the library must cope. Each target defines it with this macro. */
#define FUZZ_ASAN_OPTIONS                                                                  \
    const char * __asan_default_options(void) __attribute__((visibility("default"), used)); \
    const char * __asan_default_options(void) { return "allocator_may_return_null=1"; }

/* A broken invariant is a crash: libFuzzer keeps the input, the replay fails. */
#define FUZZ_ASSERT(cond, ...)                                                        \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: invariant failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                             \
            fputc('\n', stderr);                                                      \
            abort();                                                                  \
        }                                                                             \
    } while (0)

#endif

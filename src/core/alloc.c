/* alloc.c -- every heap allocation of the library goes through these
 * wrappers, so that a test can make one chosen allocation fail and check that
 * the caller gets an error, leaks nothing and keeps working. The hook costs one
 * relaxed atomic load per allocation and is inert unless a test arms it. */
#include "core/internal.h"

#include <stdatomic.h>
#include <stdlib.h>

/* Allocations still to succeed before the one that fails; -1: none fails.
 * Atomic because computes and other threads allocate too. */
static atomic_long allocs_before_failure = -1;
static atomic_long allocs_counted;

void ggmlr_test_fail_alloc_after(long k) {
    if (k >= 0) atomic_store(&allocs_counted, 0);  /* disarming keeps the count */
    atomic_store(&allocs_before_failure, k < 0 ? -1 : k);
}

long ggmlr_test_alloc_count(void) { return atomic_load(&allocs_counted); }

/* Whether this allocation is the one to fail (each armed hook fails once). */
static bool alloc_fails(void) {
    if (atomic_load_explicit(&allocs_before_failure, memory_order_relaxed) < 0) return false;
    atomic_fetch_add(&allocs_counted, 1);
    /* the thread that takes the counter from 0 to -1 owns the failure */
    return atomic_fetch_sub(&allocs_before_failure, 1) == 0;
}

void * ggmlr_malloc(size_t size) { return alloc_fails() ? NULL : malloc(size); }

void * ggmlr_calloc(size_t n, size_t size) { return alloc_fails() ? NULL : calloc(n, size); }

void * ggmlr_realloc(void * p, size_t size) { return alloc_fails() ? NULL : realloc(p, size); }

void * ggmlr_aligned_alloc(size_t align, size_t size) { return alloc_fails() ? NULL : aligned_alloc(align, size); }

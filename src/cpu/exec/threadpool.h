/* threadpool.h -- worker threads that live between computes, their barrier
 * and their scratch memory.
 *
 * A pool runs one job at a time on nth threads: the calling thread is thread
 * 0, workers 1..nth-1 wait (spin briefly, then sleep) for the next job. The
 * CPU backend owns one pool; every other calling thread gets its own pool on
 * first use, freed when the thread exits. A forked child starts with empty
 * pools (the parent's workers do not exist there); unloading the library
 * stops and joins every worker. See docs/threading.md. */
#ifndef GGMLR_THREADPOOL_H
#define GGMLR_THREADPOOL_H

#include <stdbool.h>
#include <stddef.h>

#define GGMLR_MAX_THREADS 256

struct ggmlr_pool;

/* A pool with no workers yet (they start on the first job); NULL + message when out of memory. */
struct ggmlr_pool * ggmlr_pool_new(void);
/* Stops and joins the workers, frees the scratch. NULL is a no-op. */
void ggmlr_pool_free(struct ggmlr_pool * pool);
/* The calling thread's own pool (created on first use); NULL + message when it cannot be made. */
struct ggmlr_pool * ggmlr_pool_of_this_thread(void);

/* Takes the pool for one compute (other callers wait) and resizes it to
 * n_threads - 1 workers. Returns the number of threads the job will run on:
 * n_threads, or fewer when the system refuses more threads (results do not
 * depend on the thread count). */
int  ggmlr_pool_acquire(struct ggmlr_pool * pool, int n_threads);
/* At least size bytes of scratch, kept for the next compute when not huge;
 * NULL when out of memory. Valid until ggmlr_pool_release. */
void * ggmlr_pool_scratch(struct ggmlr_pool * pool, size_t size);
/* Runs job(arg, ith) for ith = 0..nth-1 (0 on the calling thread), returns when all have returned. */
void ggmlr_pool_run(struct ggmlr_pool * pool, void (*job)(void * arg, int ith), void * arg);
/* Every thread of the running job waits here until all have arrived. */
void ggmlr_pool_barrier(struct ggmlr_pool * pool);
/* Ends the compute begun by ggmlr_pool_acquire. */
void ggmlr_pool_release(struct ggmlr_pool * pool);

/* Upstream's public thread pool (ggml-cpu.h, cpu_api.c): one of the pools
 * above, owned by the caller. */
struct ggml_threadpool {
    struct ggmlr_pool * pool;
    int                 n_threads;
};

#endif

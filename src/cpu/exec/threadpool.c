/* threadpool.c -- persistent workers, barrier and scratch (see threadpool.h).
 *
 * Every wait is on a "wait word": a counter the waiter expects to change. It
 * spins SPIN_LIMIT pauses first (the next job or the last thread at a barrier
 * is usually microseconds away), then sleeps on a condition variable, so an
 * idle worker costs no CPU. Lost wake-ups are ruled out Dekker-style: the
 * bumper increments the value then reads `sleepers`, a sleeper increments
 * `sleepers` then reads the value (all sequentially consistent), so at least
 * one of them sees the other. */
#include "cpu/exec/threadpool.h"

#include "core/internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>

#define SPIN_LIMIT (1 << 14)
/* Scratch above this is returned after the compute instead of kept. */
#define SCRATCH_KEEP ((size_t) 256 << 20)

struct wait_word {
    _Alignas(64) atomic_uint value;  /* own cache line: spun on by every thread */
    atomic_int sleepers;
    pthread_mutex_t lock;
    pthread_cond_t cond;
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static bool wait_word_init(struct wait_word * w) {
    atomic_store(&w->sleepers, 0);
    if (pthread_mutex_init(&w->lock, NULL) != 0) return false;
    if (pthread_cond_init(&w->cond, NULL) != 0) { pthread_mutex_destroy(&w->lock); return false; }
    return true;
}

static void wait_word_destroy(struct wait_word * w) {
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
}

/* Waits until the value differs from old; returns the new value (acquire). */
static unsigned wait_change(struct wait_word * w, unsigned old) {
    unsigned v;
    for (int i = 0; i < SPIN_LIMIT; i++) {
        if ((v = atomic_load_explicit(&w->value, memory_order_acquire)) != old) return v;
        cpu_relax();
    }
    pthread_mutex_lock(&w->lock);
    atomic_fetch_add(&w->sleepers, 1);
    while ((v = atomic_load(&w->value)) == old) pthread_cond_wait(&w->cond, &w->lock);
    atomic_fetch_sub(&w->sleepers, 1);
    pthread_mutex_unlock(&w->lock);
    return v;
}

/* value++ (release), waking whoever sleeps on it. */
static void wait_bump(struct wait_word * w) {
    atomic_fetch_add(&w->value, 1);
    if (atomic_load(&w->sleepers) > 0) {
        pthread_mutex_lock(&w->lock);
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
    }
}

struct worker {
    pthread_t thread;
    struct ggmlr_pool * pool;
    int ith;
    unsigned first_job;  /* job counter when it started: it waits for the next one */
};

struct ggmlr_pool {
    struct wait_word jobs;     /* bumped to publish a job (or to stop the workers) */
    struct wait_word done;     /* bumped by the last worker to finish a job */
    struct wait_word barrier;  /* barrier generation */
    _Alignas(64) atomic_int arrived;  /* threads at the barrier */
    atomic_int pending;        /* workers still in the current job */
    atomic_bool stop;
    pthread_mutex_t owner;     /* held from acquire to release: one compute at a time */
    int n_workers;             /* running workers: threads 1..n_workers */
    int nth;                   /* threads of the current compute */
    void (*job)(void * arg, int ith);
    void * job_arg;
    void * scratch;            /* kept between computes */
    size_t scratch_size;
    void * scratch_big;        /* one compute's block above SCRATCH_KEEP */
    struct ggmlr_pool * prev, * next;  /* the registry of all pools */
    struct worker workers[GGMLR_MAX_THREADS];
};

/* Every pool, for the fork handler and the library destructor. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ggmlr_pool * registry;
static atomic_bool closed;  /* the library is being unloaded: no new workers */
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static pthread_key_t thread_pool_key;
static bool thread_pool_key_ok;

static void * worker_main(void * arg) {
    const struct worker * w = arg;
    struct ggmlr_pool * pool = w->pool;
    unsigned seen = w->first_job;
    for (;;) {
        seen = wait_change(&pool->jobs, seen);
        if (atomic_load_explicit(&pool->stop, memory_order_relaxed)) return NULL;  /* stored before the bump we acquired */
        pool->job(pool->job_arg, w->ith);
        if (atomic_fetch_sub_explicit(&pool->pending, 1, memory_order_acq_rel) == 1) wait_bump(&pool->done);
    }
}

/* Starts workers up to n; fewer when the system refuses threads. Workers
 * block every signal: handlers (R's, say) must run on the caller's threads. */
static void grow(struct ggmlr_pool * pool, int n) {
    if (pool->n_workers >= n) return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    while (pool->n_workers < n) {
        struct worker * w = &pool->workers[pool->n_workers + 1];
        w->pool = pool;
        w->ith = pool->n_workers + 1;
        w->first_job = atomic_load(&pool->jobs.value);
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) break;
        pool->n_workers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Caller holds owner (no job runs). */
static void stop_workers(struct ggmlr_pool * pool) {
    if (pool->n_workers == 0) return;
    atomic_store(&pool->stop, true);
    wait_bump(&pool->jobs);
    for (int i = 1; i <= pool->n_workers; i++) pthread_join(pool->workers[i].thread, NULL);
    atomic_store(&pool->stop, false);
    pool->n_workers = 0;
}

/* In a forked child only the forking thread exists: the pools' workers are
 * gone and their locks may have been held by threads that are gone too. */
static void before_fork(void) { pthread_mutex_lock(&registry_lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&registry_lock); }
static void after_fork_child(void) {
    for (struct ggmlr_pool * p = registry; p; p = p->next) {
        p->n_workers = 0;
        atomic_store(&p->arrived, 0);
        atomic_store(&p->pending, 0);
        atomic_store(&p->stop, false);
        pthread_mutex_init(&p->owner, NULL);
        wait_word_init(&p->jobs);
        wait_word_init(&p->done);
        wait_word_init(&p->barrier);
    }
    pthread_mutex_unlock(&registry_lock);
}

static void free_thread_pool(void * pool) { ggmlr_pool_free(pool); }

static void setup(void) {
    thread_pool_key_ok = pthread_key_create(&thread_pool_key, free_thread_pool) == 0;
    pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

/* dlclose (R's dyn.unload) or exit: no worker may outlive the code it runs,
 * and no thread may later call a key destructor that is no longer mapped.
 * The pools stay allocated (a backend may still point at one) but empty;
 * computes after this run on the calling thread alone. */
__attribute__((destructor)) static void close_library(void) {
    atomic_store(&closed, true);
    pthread_mutex_lock(&registry_lock);
    for (struct ggmlr_pool * p = registry; p; p = p->next) {
        pthread_mutex_lock(&p->owner);
        stop_workers(p);
        free(p->scratch);
        p->scratch = NULL;
        p->scratch_size = 0;
        pthread_mutex_unlock(&p->owner);
    }
    pthread_mutex_unlock(&registry_lock);
    if (thread_pool_key_ok) {
        thread_pool_key_ok = false;
        pthread_key_delete(thread_pool_key);
    }
}

struct ggmlr_pool * ggmlr_pool_new(void) {
    pthread_once(&setup_once, setup);
    struct ggmlr_pool * pool = ggmlr_aligned_alloc(64, (sizeof *pool + 63) / 64 * 64);
    if (!pool) { ggmlr_set_error("thread pool: out of memory"); return NULL; }
    memset(pool, 0, sizeof *pool);
    bool ok = pthread_mutex_init(&pool->owner, NULL) == 0;
    bool ok_jobs = ok && wait_word_init(&pool->jobs);
    bool ok_done = ok_jobs && wait_word_init(&pool->done);
    bool ok_barrier = ok_done && wait_word_init(&pool->barrier);
    if (!ok_barrier) {
        if (ok_done) wait_word_destroy(&pool->done);
        if (ok_jobs) wait_word_destroy(&pool->jobs);
        if (ok) pthread_mutex_destroy(&pool->owner);
        free(pool);
        ggmlr_set_error("thread pool: cannot create its locks");
        return NULL;
    }
    pthread_mutex_lock(&registry_lock);
    pool->next = registry;
    if (registry) registry->prev = pool;
    registry = pool;
    pthread_mutex_unlock(&registry_lock);
    return pool;
}

void ggmlr_pool_free(struct ggmlr_pool * pool) {
    if (!pool) return;
    pthread_mutex_lock(&registry_lock);
    if (pool->prev) pool->prev->next = pool->next;
    else registry = pool->next;
    if (pool->next) pool->next->prev = pool->prev;
    pthread_mutex_unlock(&registry_lock);
    pthread_mutex_lock(&pool->owner);
    stop_workers(pool);
    pthread_mutex_unlock(&pool->owner);
    wait_word_destroy(&pool->barrier);
    wait_word_destroy(&pool->done);
    wait_word_destroy(&pool->jobs);
    pthread_mutex_destroy(&pool->owner);
    free(pool->scratch);
    free(pool);
}

struct ggmlr_pool * ggmlr_pool_of_this_thread(void) {
    pthread_once(&setup_once, setup);
    if (!thread_pool_key_ok || atomic_load(&closed)) return NULL;
    struct ggmlr_pool * pool = pthread_getspecific(thread_pool_key);
    if (!pool && (pool = ggmlr_pool_new()) != NULL && pthread_setspecific(thread_pool_key, pool) != 0) {
        ggmlr_pool_free(pool);
        pool = NULL;
    }
    return pool;
}

int ggmlr_pool_acquire(struct ggmlr_pool * pool, int n_threads) {
    pthread_mutex_lock(&pool->owner);
    int nth = n_threads < 1 ? 1 : n_threads > GGMLR_MAX_THREADS ? GGMLR_MAX_THREADS : n_threads;
    if (atomic_load(&closed)) nth = 1;
    if (pool->n_workers > nth - 1) stop_workers(pool);  /* shrinking is rare: restart the rest */
    grow(pool, nth - 1);
    pool->nth = pool->n_workers + 1;
    return pool->nth;
}

void * ggmlr_pool_scratch(struct ggmlr_pool * pool, size_t size) {
    if (size > SCRATCH_KEEP) return pool->scratch_big = ggmlr_malloc(size);
    if (pool->scratch_size < size) {
        free(pool->scratch);
        pool->scratch = ggmlr_malloc(size);
        pool->scratch_size = pool->scratch ? size : 0;
    }
    return pool->scratch;
}

void ggmlr_pool_run(struct ggmlr_pool * pool, void (*job)(void * arg, int ith), void * arg) {
    if (pool->nth == 1) { job(arg, 0); return; }
    pool->job = job;
    pool->job_arg = arg;
    atomic_store_explicit(&pool->pending, pool->n_workers, memory_order_relaxed);
    const unsigned done = atomic_load_explicit(&pool->done.value, memory_order_relaxed);
    wait_bump(&pool->jobs);  /* publishes job, job_arg and pending */
    job(arg, 0);
    wait_change(&pool->done, done);
}

void ggmlr_pool_barrier(struct ggmlr_pool * pool) {
    const int nth = pool->nth;
    if (nth == 1) return;
    /* every thread reads the generation before it arrives, so all read the same one */
    const unsigned gen = atomic_load_explicit(&pool->barrier.value, memory_order_acquire);
    if (atomic_fetch_add_explicit(&pool->arrived, 1, memory_order_acq_rel) == nth - 1) {
        atomic_store_explicit(&pool->arrived, 0, memory_order_relaxed);
        wait_bump(&pool->barrier);
    } else {
        wait_change(&pool->barrier, gen);
    }
}

void ggmlr_pool_release(struct ggmlr_pool * pool) {
    free(pool->scratch_big);
    pool->scratch_big = NULL;
    pthread_mutex_unlock(&pool->owner);
}

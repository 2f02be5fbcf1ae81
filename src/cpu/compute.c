/* compute.c -- the graph executor: checks, scratch memory, threads, and the
 * per-node dispatch to kernels. All threads walk the node list together and
 * meet at a barrier after each node that does work. */
#include "kernels.h"

#include "ggml-cpu.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 256

int ggml_cpu_n_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int) n;
}

/* Ops whose result is a view of their source: nothing to compute. */
static bool is_noop(const struct ggml_tensor * t) {
    switch (t->op) {
        case GGML_OP_NONE: case GGML_OP_RESHAPE: case GGML_OP_VIEW: case GGML_OP_PERMUTE: case GGML_OP_TRANSPOSE:
            return true;
        default:
            return false;
    }
}

static size_t work_size(const struct ggml_tensor * t) {
    switch (t->op) {
        case GGML_OP_MUL_MAT:         return ggmlr_mul_mat_work_size(t);
        case GGML_OP_SOFT_MAX:        return ggmlr_soft_max_work_size(t);
        case GGML_OP_FLASH_ATTN_EXT:  return ggmlr_flash_attn_ext_work_size(t);
        case GGML_OP_FLASH_ATTN_BACK: return ggmlr_flash_attn_back_work_size(t);
        default:                      return 0;
    }
}

static size_t shared_size(const struct ggml_tensor * t) {
    switch (t->op) {
        case GGML_OP_MUL_MAT:         return ggmlr_mul_mat_shared_size(t);
        case GGML_OP_FLASH_ATTN_EXT:  return ggmlr_flash_attn_ext_shared_size(t);
        case GGML_OP_FLASH_ATTN_BACK: return ggmlr_flash_attn_back_shared_size(t);
        default:                      return 0;
    }
}

static void compute_node(const struct ggmlr_compute_params * p, struct ggml_tensor * t) {
    switch (t->op) {
        case GGML_OP_DUP: case GGML_OP_CONT: case GGML_OP_CPY: ggmlr_compute_dup(p, t); break;
        case GGML_OP_ADD: case GGML_OP_SUB: case GGML_OP_MUL: case GGML_OP_DIV: ggmlr_compute_binary(p, t); break;
        case GGML_OP_SQR: case GGML_OP_SQRT: case GGML_OP_LOG: case GGML_OP_SCALE: ggmlr_compute_unary(p, t); break;
        case GGML_OP_SUM:             ggmlr_compute_sum(p, t); break;
        case GGML_OP_SUM_ROWS: case GGML_OP_MEAN: ggmlr_compute_sum_rows(p, t); break;
        case GGML_OP_REPEAT:          ggmlr_compute_repeat(p, t); break;
        case GGML_OP_REPEAT_BACK:     ggmlr_compute_repeat_back(p, t); break;
        case GGML_OP_ACC:             ggmlr_compute_acc(p, t); break;
        case GGML_OP_MUL_MAT:         ggmlr_compute_mul_mat(p, t); break;
        case GGML_OP_SOFT_MAX:        ggmlr_compute_soft_max(p, t); break;
        case GGML_OP_FLASH_ATTN_EXT:  ggmlr_compute_flash_attn_ext(p, t); break;
        case GGML_OP_FLASH_ATTN_BACK: ggmlr_compute_flash_attn_back(p, t); break;
        default: break;
    }
}

/* Every tensor a kernel will touch must have memory. */
static bool check_graph(const struct ggml_cgraph * g) {
    for (int i = 0; i < g->n_nodes; i++) {
        const struct ggml_tensor * t = g->nodes[i];
        if (t->op < 0 || t->op >= GGML_OP_COUNT) { ggmlr_set_error("graph compute: node %d has an unknown op", i); return false; }
        if (is_noop(t)) continue;
        if (!t->data) {
            ggmlr_set_error("graph compute: result '%s' (op %s) has no memory; allocate the context's tensors "
                            "(ggml_backend_alloc_ctx_tensors) after building the ops", t->name, ggml_op_name(t->op));
            return false;
        }
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            const struct ggml_tensor * src = t->src[s];
            if (src && !src->data) {  /* even an empty one: kernels form row pointers from its data */
                ggmlr_set_error("graph compute: input '%s' of %s has no data", src->name, ggml_op_name(t->op));
                return false;
            }
        }
    }
    return true;
}

/* Scratch memory is kept per calling thread between computes: a fresh block
 * each time would cost a page fault per 4 KiB, every call. Blocks above
 * SCRATCH_KEEP bytes are returned at once instead of being kept. */
#define SCRATCH_KEEP ((size_t) 256 << 20)

struct scratch { void * p; size_t size; };
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static bool scratch_key_ok;

static void scratch_free(void * s) {
    free(((struct scratch *) s)->p);
    free(s);
}

static void scratch_init(void) { scratch_key_ok = pthread_key_create(&scratch_key, scratch_free) == 0; }

/* A block of at least size bytes; *owned says the caller must free it. */
static void * scratch_get(size_t size, bool * owned) {
    pthread_once(&scratch_once, scratch_init);
    struct scratch * s = scratch_key_ok ? pthread_getspecific(scratch_key) : NULL;
    if (!s && scratch_key_ok && (s = calloc(1, sizeof *s)) != NULL && pthread_setspecific(scratch_key, s) != 0) {
        free(s);
        s = NULL;
    }
    *owned = !s || size > SCRATCH_KEEP;
    if (*owned) return malloc(size);
    if (s->size < size) {
        free(s->p);
        s->p = malloc(size);
        s->size = s->p ? size : 0;
    }
    return s->p;
}

struct executor {
    struct ggml_cgraph * graph;
    int nth;
    char * wdata;
    size_t wsize;  /* per thread */
    void * shared;
    atomic_int arrived;
    atomic_int generation;
    atomic_int go;  /* 0: wait until every thread exists, 1: run, -1: give up */
};

#define SPIN_LIMIT (1 << 14)

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

void ggmlr_barrier(const struct ggmlr_compute_params * p) {
    struct executor * ex = p->executor;
    if (ex->nth == 1) return;
    const int gen = atomic_load_explicit(&ex->generation, memory_order_acquire);
    if (atomic_fetch_add_explicit(&ex->arrived, 1, memory_order_acq_rel) == ex->nth - 1) {
        atomic_store_explicit(&ex->arrived, 0, memory_order_relaxed);
        atomic_fetch_add_explicit(&ex->generation, 1, memory_order_release);
    } else {
        /* spin (the others are usually microseconds away), then give the core up */
        int spins = 0;
        while (atomic_load_explicit(&ex->generation, memory_order_acquire) == gen) {
            if (++spins < SPIN_LIMIT) cpu_relax();
            else sched_yield();
        }
    }
}

struct worker_arg { struct executor * ex; int ith; };

static void * run_worker(void * arg) {
    const struct worker_arg * w = arg;
    struct executor * ex = w->ex;
    char * wdata = ex->wdata ? ex->wdata + (size_t) w->ith * ex->wsize : NULL;  /* no scratch: no pointer arithmetic on NULL */
    const struct ggmlr_compute_params p = {w->ith, ex->nth, wdata, ex->wsize, ex->shared, ex};
    int go;
    while ((go = atomic_load_explicit(&ex->go, memory_order_acquire)) == 0) sched_yield();
    if (go < 0) return NULL;
    for (int i = 0; i < ex->graph->n_nodes; i++) {
        struct ggml_tensor * t = ex->graph->nodes[i];
        if (is_noop(t)) continue;
        compute_node(&p, t);
        ggmlr_barrier(&p);
    }
    return NULL;
}

enum ggml_status ggmlr_graph_compute(struct ggml_cgraph * g, int n_threads) {
    if (!g) { ggmlr_set_error("graph compute: graph is NULL"); return GGML_STATUS_FAILED; }
    if (!check_graph(g)) return GGML_STATUS_FAILED;
    int nth = n_threads > 0 ? n_threads : ggml_cpu_n_cores();
    if (nth > MAX_THREADS) nth = MAX_THREADS;
    size_t wsize = 0, ssize = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const size_t w = work_size(g->nodes[i]), s = shared_size(g->nodes[i]);
        if (w > wsize) wsize = w;
        if (s > ssize) ssize = s;
    }
    wsize = (wsize + 63) / 64 * 64;
    ssize = (ssize + 63) / 64 * 64;
    struct executor ex = {.graph = g, .nth = nth, .wsize = wsize};
    atomic_init(&ex.arrived, 0);
    atomic_init(&ex.generation, 0);
    void * wbuf = NULL;
    bool wbuf_owned = false;
    if (wsize + ssize > 0) {
        const size_t total = wsize * (size_t) nth + ssize;
        wbuf = scratch_get(total + 64, &wbuf_owned);
        if (!wbuf) { ggmlr_set_error("graph compute: cannot allocate %zu bytes of scratch", total); return GGML_STATUS_ALLOC_FAILED; }
        ex.wdata = (char *) (((uintptr_t) wbuf + 63) / 64 * 64);
        ex.shared = ex.wdata + wsize * (size_t) nth;
    }
    struct worker_arg args[MAX_THREADS];
    pthread_t threads[MAX_THREADS];
    atomic_init(&ex.go, 0);
    int started = 1;
    for (int i = 1; i < nth; i++) {
        args[i] = (struct worker_arg) {&ex, i};
        if (pthread_create(&threads[i], NULL, run_worker, &args[i]) != 0) break;
        started++;
    }
    atomic_store_explicit(&ex.go, started == nth ? 1 : -1, memory_order_release);
    args[0] = (struct worker_arg) {&ex, 0};
    if (started == nth) run_worker(&args[0]);
    for (int i = 1; i < started; i++) pthread_join(threads[i], NULL);
    if (wbuf_owned) free(wbuf);
    if (started < nth) { ggmlr_set_error("graph compute: could not start %d threads", nth); return GGML_STATUS_FAILED; }
    return GGML_STATUS_SUCCESS;
}

enum ggml_status ggml_graph_compute_with_ctx(struct ggml_context * ctx, struct ggml_cgraph * graph, int n_threads) {
    (void) ctx;  /* scratch memory comes from the heap, not the context */
    return ggmlr_graph_compute(graph, n_threads);
}

/* compute.c -- the graph executor: checks, the per-node dispatch to kernels,
 * and failures. All threads of a pool (threadpool.c) walk the node list
 * together and meet at a barrier after each node that does work. */
#include "cpu/kernels/kernels.h"
#include "cpu/exec/compute.h"
#include "cpu/exec/profile.h"
#include "cpu/exec/threadpool.h"

#include "ggml-cpu.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

int ggml_cpu_n_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > GGMLR_MAX_THREADS ? GGMLR_MAX_THREADS : (int) n;
}

static bool is_noop(const struct ggml_tensor * t) { return ggmlr_op_is_view(t->op); }

/* views do no work, nor nodes only ordered into the graph (ggml_build_forward_order / _select) */
static bool is_skipped(const struct ggml_tensor * t) { return is_noop(t) || !(t->flags & GGML_TENSOR_FLAG_COMPUTE); }

static size_t work_size(const struct ggml_tensor * t) {
    const struct ggmlr_kernel * k = ggmlr_kernels[t->op];
    return k->work_size ? k->work_size(t) : 0;
}

static size_t shared_size(const struct ggml_tensor * t) {
    const struct ggmlr_kernel * k = ggmlr_kernels[t->op];
    return k->shared_size ? k->shared_size(t) : 0;
}

static void compute_node(const struct ggmlr_compute_params * p, struct ggml_tensor * t) { ggmlr_kernels[t->op]->compute(p, t); }

/* The first of t and its sources whose type nothing here converts, or NULL. */
static const struct ggml_tensor * unconvertible(const struct ggml_tensor * t) {
    if (is_noop(t) || ggmlr_copy_moves_rows(t)) return NULL;
    if (!ggmlr_type_is_supported(t->type)) return t;
    for (int s = 0; s < GGML_MAX_SRC; s++) if (t->src[s] && !ggmlr_type_is_supported(t->src[s]->type)) return t->src[s];
    return NULL;
}

bool ggmlr_cpu_supports_op(const struct ggml_tensor * t) {
    if (!t || t->op < 0 || t->op >= GGML_OP_COUNT || unconvertible(t)) return false;
    return is_noop(t) || ggmlr_kernels[t->op]->compute != NULL;
}

/* Every tensor a kernel will touch must have memory. */
static bool check_graph(const struct ggml_cgraph * g) {
    for (int i = 0; i < g->n_nodes; i++) {
        const struct ggml_tensor * t = g->nodes[i];
        if (t->op < 0 || t->op >= GGML_OP_COUNT) { ggmlr_set_error("graph compute: node %d has an unknown op", i); return false; }
        if (is_skipped(t)) continue;
        if (!ggmlr_kernels[t->op]->compute) {
            ggmlr_set_error("graph compute: op %s (node '%s') has no CPU kernel", ggml_op_name(t->op), t->name);
            return false;
        }
        const struct ggml_tensor * x = unconvertible(t);
        if (x) {
            ggmlr_set_error("graph compute: op %s (node '%s') needs '%s' of type %s as floats, and this library stores that "
                            "type but cannot convert it (docs/quant-types.md)", ggml_op_name(t->op), t->name, x->name,
                            ggml_type_name(x->type));
            return false;
        }
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

/* One compute: the graph, its scratch, and the first failure. */
struct ggmlr_executor {
    struct ggml_cgraph * graph;
    struct ggmlr_pool * pool;
    int nth;
    char * wdata;
    size_t wsize;  /* per thread */
    void * shared;
    atomic_int failed_node;  /* index of the failing node; INT_MAX while none failed */
    char * message;          /* GGMLR_FAIL_MESSAGE bytes, written only on failure */
    int test_fail_node;      /* ggmlr_test_fail_at_node */
    uint64_t * node_ns;      /* per-node wall times when profiling, else NULL */
};

static _Thread_local int test_fail_node = -1;

void ggmlr_test_fail_at_node(int node) { test_fail_node = node; }

void ggmlr_barrier(const struct ggmlr_compute_params * p) { ggmlr_pool_barrier(p->executor->pool); }

/* A failure in node i is recorded before the barrier that ends node i, and
 * every thread reads it only after that barrier: all threads stop after the
 * same node, and none waits at a barrier the others skip. Nodes are computed
 * in order, so the first failure recorded is in the earliest failing node. */
void ggmlr_compute_fail(const struct ggmlr_compute_params * p, const char * fmt, ...) {
    struct ggmlr_executor * ex = p->executor;
    int none = INT_MAX;
    if (!atomic_compare_exchange_strong(&ex->failed_node, &none, p->node)) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ex->message, GGMLR_FAIL_MESSAGE, fmt, ap);
    va_end(ap);
}

static void run_thread(void * arg, int ith) {
    struct ggmlr_executor * ex = arg;
    char * wdata = ex->wdata ? ex->wdata + (size_t) ith * ex->wsize : NULL;  /* no scratch: no pointer arithmetic on NULL */
    struct ggmlr_compute_params p = {ith, ex->nth, wdata, ex->wsize, ex->shared, ex, 0};
    uint64_t * const node_ns = ith == 0 ? ex->node_ns : NULL;
    uint64_t t0 = node_ns ? ggmlr_profile_now_ns() : 0;
    for (int i = 0; i < ex->graph->n_nodes; i++) {
        struct ggml_tensor * t = ex->graph->nodes[i];
        if (is_skipped(t)) continue;
        p.node = i;
        compute_node(&p, t);
        if (i == ex->test_fail_node && ith == ex->nth - 1) ggmlr_compute_fail(&p, "test failure requested at node %d", i);
        ggmlr_barrier(&p);
        if (node_ns) {
            const uint64_t t1 = ggmlr_profile_now_ns();
            node_ns[i] = t1 - t0;
            t0 = t1;
        }
        if (atomic_load_explicit(&ex->failed_node, memory_order_relaxed) <= i) break;  /* ordered by the barrier */
    }
}

/* Scratch of a graph: per-thread bytes and shared bytes, each a multiple of 64. */
static void scratch_sizes(const struct ggml_cgraph * g, size_t * wsize, size_t * ssize) {
    *wsize = *ssize = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i]->op < 0 || g->nodes[i]->op >= GGML_OP_COUNT) continue;  /* check_graph refuses it */
        const size_t w = work_size(g->nodes[i]), s = shared_size(g->nodes[i]);
        if (w > *wsize) *wsize = w;
        if (s > *ssize) *ssize = s;
    }
    *wsize = (*wsize + 63) / 64 * 64;
    *ssize = (*ssize + 63) / 64 * 64;
}

/* scratch: the caller's (ggml_graph_compute with a plan), or NULL for the pool's. */
static enum ggml_status compute(struct ggmlr_pool * pool, struct ggml_cgraph * g, int n_threads, char * scratch, size_t scratch_size) {
    if (!g) { ggmlr_set_error("graph compute: graph is NULL"); return GGML_STATUS_FAILED; }
    if (!check_graph(g)) return GGML_STATUS_FAILED;
    size_t wsize, ssize;
    scratch_sizes(g, &wsize, &ssize);
    struct ggmlr_pool * own_pool = NULL;  /* only when this thread can keep none (library unloading) */
    if (!pool && !(pool = ggmlr_pool_of_this_thread()) && !(pool = own_pool = ggmlr_pool_new())) return GGML_STATUS_ALLOC_FAILED;
    char message[GGMLR_FAIL_MESSAGE];  /* outside ex: zero-filling it with ex cost ~30 ns a compute */
    struct ggmlr_executor ex = {.graph = g, .pool = pool, .wsize = wsize, .message = message, .test_fail_node = test_fail_node};
    ex.nth = ggmlr_pool_acquire(pool, n_threads > 0 ? n_threads : ggml_cpu_n_cores());
    atomic_init(&ex.failed_node, INT_MAX);
    enum ggml_status status = GGML_STATUS_SUCCESS;
    if (wsize + ssize > 0) {
        const size_t total = wsize * (size_t) ex.nth + ssize;
        char * wbuf = scratch ? (scratch_size >= total + 64 ? scratch : NULL) : ggmlr_pool_scratch(pool, total + 64);
        if (!wbuf && scratch) {
            ggmlr_set_error("ggml_graph_compute: the plan's work_data holds %zu bytes, the compute needs %zu", scratch_size, total + 64);
            status = GGML_STATUS_FAILED;
        } else if (!wbuf) {
            ggmlr_set_error("graph compute: cannot allocate %zu bytes of scratch", total);
            status = GGML_STATUS_ALLOC_FAILED;
        } else {
            ex.wdata = (char *) (((uintptr_t) wbuf + 63) / 64 * 64);
            ex.shared = ex.wdata + wsize * (size_t) ex.nth;
        }
    }
    if (status == GGML_STATUS_SUCCESS && ggmlr_profile_enabled()) ex.node_ns = calloc((size_t) g->n_nodes + 1, sizeof *ex.node_ns);
    if (status == GGML_STATUS_SUCCESS) ggmlr_pool_run(pool, run_thread, &ex);
    ggmlr_pool_release(pool);
    ggmlr_pool_free(own_pool);
    if (ex.node_ns) {
        ggmlr_profile_print(g, ex.node_ns, ex.nth);
        free(ex.node_ns);
    }
    const int failed = atomic_load(&ex.failed_node);
    if (failed != INT_MAX) {
        const struct ggml_tensor * t = g->nodes[failed];
        ggmlr_set_error("graph compute: node %d '%s' (%s): %s", failed, t->name, ggml_op_name(t->op), ex.message);
        status = GGML_STATUS_FAILED;
    }
    return status;
}

enum ggml_status ggmlr_graph_compute(struct ggmlr_pool * pool, struct ggml_cgraph * g, int n_threads) {
    return compute(pool, g, n_threads, NULL, 0);
}

enum ggml_status ggml_graph_compute_with_ctx(struct ggml_context * ctx, struct ggml_cgraph * graph, int n_threads) {
    (void) ctx;  /* scratch memory comes from the calling thread's pool, not the context */
    return ggmlr_graph_compute(NULL, graph, n_threads);
}

struct ggml_cplan ggml_graph_plan(const struct ggml_cgraph * g, int n_threads, struct ggml_threadpool * threadpool) {
    struct ggml_cplan plan = {0};
    plan.n_threads = n_threads > 0 ? n_threads : ggml_cpu_n_cores();
    plan.threadpool = threadpool;
    if (!g) { ggmlr_set_error("ggml_graph_plan: graph is NULL"); return plan; }
    size_t wsize, ssize;
    scratch_sizes(g, &wsize, &ssize);
    /* the compute uses at most n_threads threads; 64 bytes to align the start */
    const int nth = plan.n_threads < GGMLR_MAX_THREADS ? plan.n_threads : GGMLR_MAX_THREADS;
    if (wsize + ssize > 0) plan.work_size = wsize * (size_t) nth + ssize + 64;
    return plan;
}

enum ggml_status ggml_graph_compute(struct ggml_cgraph * g, struct ggml_cplan * plan) {
    if (!plan) { ggmlr_set_error("ggml_graph_compute: plan is NULL"); return GGML_STATUS_FAILED; }
    if (plan->work_size > 0 && !plan->work_data) {
        ggmlr_set_error("ggml_graph_compute: the plan needs %zu bytes of work_data and has none", plan->work_size);
        return GGML_STATUS_FAILED;
    }
    if (plan->abort_callback && plan->abort_callback(plan->abort_callback_data)) return GGML_STATUS_ABORTED;
    /* a caller's pool: at most its n_threads */
    const struct ggml_threadpool * tp = plan->threadpool;
    const int nth = tp && (plan->n_threads <= 0 || plan->n_threads > tp->n_threads) ? tp->n_threads : plan->n_threads;
    return compute(tp ? tp->pool : NULL, g, nth, (char *) plan->work_data, plan->work_size);
}

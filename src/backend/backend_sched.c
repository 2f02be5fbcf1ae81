/* backend-sched.c -- upstream's backend scheduler entry points for CPU
 * backends: give memory to the tensors of a graph that have none, compute the
 * graph, take the memory back on reset.
 *
 * There is one device, so there is nothing to split or copy: a graph runs on
 * backends[0] as a whole. Each ggml_backend_sched_alloc_graph call places
 * the tensors that still lack memory with a graph allocator of its own
 * (galloc.c: intermediate results share memory once their readers have run;
 * leafs, inputs, outputs and results keep theirs); the scheduler remembers
 * them, and ggml_backend_sched_reset frees the allocators and clears their
 * data pointers, so a later graph never sees memory that is gone. */
#include "backend/backend_internal.h"

#include "ggml-cpu.h"

#include <stdlib.h>

#define SCHED_MAX_BACKENDS 16

struct ggml_backend_sched {
    ggml_backend_t backends[SCHED_MAX_BACKENDS];
    int            n_backends;
    size_t         graph_size;

    ggml_gallocr_t *        gallocs;   /* one per alloc_graph call that needed memory */
    size_t                  n_gallocs;
    struct ggml_tensor **   assigned;  /* tensors whose data points into a gallocr's buffer */
    size_t                  n_assigned, cap_assigned;

    /* ggml_backend_sched_set_tensor_backend's requests until the next reset */
    struct { struct ggml_tensor * node; int backend; } * wanted;
    size_t n_wanted, cap_wanted;
    int    n_splits;  /* of the last graph split or allocated */
    ggml_backend_sched_eval_callback eval_callback;
    void *                           eval_user_data;
};

ggml_backend_sched_t ggml_backend_sched_new(ggml_backend_t * backends, ggml_backend_buffer_type_t * bufts, int n_backends,
                                            size_t graph_size, bool parallel, bool op_offload) {
    (void) parallel;
    (void) op_offload;
    if (!backends || n_backends < 1 || n_backends > SCHED_MAX_BACKENDS) {
        ggmlr_set_error("ggml_backend_sched_new: need 1 to %d backends (got %d%s)", SCHED_MAX_BACKENDS, n_backends, backends ? "" : ", array NULL");
        return NULL;
    }
    for (int i = 0; i < n_backends; i++) {
        if (!ggml_backend_is_cpu(backends[i])) { ggmlr_set_error("ggml_backend_sched_new: backend %d is not a CPU backend", i); return NULL; }
        if (bufts && bufts[i] && bufts[i] != ggml_backend_cpu_buffer_type()) {
            ggmlr_set_error("ggml_backend_sched_new: buffer type %d is not the CPU buffer type", i);
            return NULL;
        }
    }
    struct ggml_backend_sched * sched = ggmlr_calloc(1, sizeof *sched);
    if (!sched) { ggmlr_set_error("ggml_backend_sched_new: out of memory"); return NULL; }
    for (int i = 0; i < n_backends; i++) sched->backends[i] = backends[i];
    sched->n_backends = n_backends;
    sched->graph_size = graph_size > 0 ? graph_size : GGML_DEFAULT_GRAPH_SIZE;
    return sched;
}

void ggml_backend_sched_reset(ggml_backend_sched_t sched) {
    if (!sched) return;
    for (size_t i = 0; i < sched->n_assigned; i++) {
        sched->assigned[i]->data = NULL;
        sched->assigned[i]->buffer = NULL;
    }
    sched->n_assigned = 0;
    for (size_t i = 0; i < sched->n_gallocs; i++) ggml_gallocr_free(sched->gallocs[i]);
    free(sched->gallocs);
    sched->gallocs = NULL;
    sched->n_gallocs = 0;
    sched->n_wanted = 0;
}

void ggml_backend_sched_free(ggml_backend_sched_t sched) {
    if (!sched) return;
    ggml_backend_sched_reset(sched);
    free(sched->assigned);
    free(sched->wanted);
    free(sched);
}

int ggml_backend_sched_get_n_backends(ggml_backend_sched_t sched) { return sched ? sched->n_backends : 0; }

ggml_backend_t ggml_backend_sched_get_backend(ggml_backend_sched_t sched, int i) {
    if (!sched || i < 0 || i >= sched->n_backends) { ggmlr_set_error("ggml_backend_sched_get_backend: no backend %d", i); return NULL; }
    return sched->backends[i];
}

size_t ggml_backend_sched_get_graph_size(ggml_backend_sched_t sched) { return sched ? sched->graph_size : 0; }

size_t ggml_backend_sched_get_buffer_size(ggml_backend_sched_t sched, ggml_backend_t backend) {
    size_t total = 0;
    for (size_t i = 0; sched && backend && i < sched->n_gallocs; i++) total += ggml_gallocr_get_buffer_size(sched->gallocs[i], 0);
    return total;
}

bool ggml_backend_sched_reserve(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    if (!sched || !graph) { ggmlr_set_error("ggml_backend_sched_reserve: scheduler or graph is NULL"); return false; }
    return true;
}

/* Every tensor of the graph in order: leafs, then nodes (sources first). */
static struct ggml_tensor * graph_tensor(const struct ggml_cgraph * g, int i) { return i < g->n_leafs ? g->leafs[i] : g->nodes[i - g->n_leafs]; }

static bool track(ggml_backend_sched_t sched, struct ggml_tensor * t) {
    if (sched->n_assigned == sched->cap_assigned) {
        const size_t cap = sched->cap_assigned ? 2 * sched->cap_assigned : 64;
        struct ggml_tensor ** bigger = ggmlr_realloc(sched->assigned, cap * sizeof *bigger);
        if (!bigger) { ggmlr_set_error("ggml_backend_sched_alloc_graph: out of memory"); return false; }
        sched->assigned = bigger;
        sched->cap_assigned = cap;
    }
    sched->assigned[sched->n_assigned++] = t;
    return true;
}

bool ggml_backend_sched_alloc_graph(ggml_backend_sched_t sched, struct ggml_cgraph * g) {
    if (!sched || !g) { ggmlr_set_error("ggml_backend_sched_alloc_graph: scheduler or graph is NULL"); return false; }
    /* the tensors that get memory now: the graph's (and sources outside it) without any */
    const size_t first = sched->n_assigned;
    for (int i = 0; i < g->n_leafs + g->n_nodes; i++) {
        struct ggml_tensor * t = graph_tensor(g, i);
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            struct ggml_tensor * src = t->src[s];
            if (src && !src->data && ggmlr_hash_find(g, src) == SIZE_MAX && !track(sched, src)) goto fail;
        }
        if (!t->data && !track(sched, t)) goto fail;
    }
    sched->n_splits = g->n_nodes > 0 ? 1 : 0;
    if (sched->n_assigned == first) return true;
    ggml_gallocr_t * more = ggmlr_realloc(sched->gallocs, (sched->n_gallocs + 1) * sizeof *more);
    if (!more) { ggmlr_set_error("ggml_backend_sched_alloc_graph: out of memory"); goto fail; }
    sched->gallocs = more;
    ggml_gallocr_t ga = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    if (!ga) goto fail;
    if (ggml_gallocr_alloc_graph(ga, g)) {
        sched->gallocs[sched->n_gallocs++] = ga;  /* reset frees it, and what it placed */
        return true;
    }
    ggml_gallocr_free(ga);
fail:
    /* all or nothing: the graph's tensors are as they were, and none is
     * tracked (their context may be freed before the scheduler) */
    for (size_t i = first; i < sched->n_assigned; i++) {
        sched->assigned[i]->data = NULL;
        sched->assigned[i]->buffer = NULL;
    }
    sched->n_assigned = first;
    return false;
}

/* With an eval callback: the nodes up to each one the callback wants to see
 * are computed as a part of the graph, then that node is shown. */
static enum ggml_status compute_observed(ggml_backend_sched_t sched, struct ggml_cgraph * g) {
    int j0 = 0;
    for (int j = 0; j < g->n_nodes; j++) {
        struct ggml_tensor * t = g->nodes[j];
        const bool want = sched->eval_callback(t, true, sched->eval_user_data);
        if (!want && j + 1 < g->n_nodes) continue;
        struct ggml_cgraph part = *g;  /* a view of nodes j0..j (the hash set is shared, read only) */
        part.nodes = g->nodes + j0;
        part.n_nodes = j + 1 - j0;
        const enum ggml_status st = ggml_backend_graph_compute(sched->backends[0], &part);
        if (st != GGML_STATUS_SUCCESS) return st;
        if (want && !sched->eval_callback(t, false, sched->eval_user_data)) break;
        j0 = j + 1;
    }
    return GGML_STATUS_SUCCESS;
}

enum ggml_status ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph * g) {
    if (!sched || !g) { ggmlr_set_error("ggml_backend_sched_graph_compute: scheduler or graph is NULL"); return GGML_STATUS_FAILED; }
    if (!ggml_backend_sched_alloc_graph(sched, g)) return GGML_STATUS_ALLOC_FAILED;
    if (sched->eval_callback) return compute_observed(sched, g);
    return ggml_backend_graph_compute(sched->backends[0], g);
}

enum ggml_status ggml_backend_sched_graph_compute_async(ggml_backend_sched_t sched, struct ggml_cgraph * g) {
    return ggml_backend_sched_graph_compute(sched, g);  /* CPU computes are synchronous */
}

void ggml_backend_sched_synchronize(ggml_backend_sched_t sched) { (void) sched; }

void ggml_backend_sched_set_eval_callback(ggml_backend_sched_t sched, ggml_backend_sched_eval_callback callback, void * user_data) {
    if (!sched) { ggmlr_set_error("ggml_backend_sched_set_eval_callback: scheduler is NULL"); return; }
    sched->eval_callback = callback;
    sched->eval_user_data = user_data;
}

int ggml_backend_sched_get_n_splits(ggml_backend_sched_t sched) { return sched ? sched->n_splits : 0; }
int ggml_backend_sched_get_n_copies(ggml_backend_sched_t sched) { return sched ? 1 : 0; }

/* index of backend in sched, -1 (with a message naming fn) when it is not there */
static int backend_index(const char * fn, ggml_backend_sched_t sched, ggml_backend_t backend) {
    for (int i = 0; sched && backend && i < sched->n_backends; i++) if (sched->backends[i] == backend) return i;
    ggmlr_set_error("%s: %s", fn, !sched ? "scheduler is NULL" : "the backend is not one of the scheduler's");
    return -1;
}

ggml_backend_buffer_type_t ggml_backend_sched_get_buffer_type(ggml_backend_sched_t sched, ggml_backend_t backend) {
    return backend_index("ggml_backend_sched_get_buffer_type", sched, backend) >= 0 ? ggml_backend_cpu_buffer_type() : NULL;
}

void ggml_backend_sched_set_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor * node, ggml_backend_t backend) {
    static const char fn[] = "ggml_backend_sched_set_tensor_backend";
    const int b = backend_index(fn, sched, backend);
    if (b < 0) return;
    if (!node) { ggmlr_set_error("%s: node is NULL", fn); return; }
    for (size_t i = 0; i < sched->n_wanted; i++) {
        if (sched->wanted[i].node == node) { sched->wanted[i].backend = b; return; }
    }
    if (sched->n_wanted == sched->cap_wanted) {
        const size_t cap = sched->cap_wanted ? 2 * sched->cap_wanted : 16;
        void * bigger = ggmlr_realloc(sched->wanted, cap * sizeof *sched->wanted);
        if (!bigger) { ggmlr_set_error("%s: out of memory", fn); return; }
        sched->wanted = bigger;
        sched->cap_wanted = cap;
    }
    sched->wanted[sched->n_wanted].node = node;
    sched->wanted[sched->n_wanted++].backend = b;
}

ggml_backend_t ggml_backend_sched_get_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor * node) {
    for (size_t i = 0; sched && node && i < sched->n_wanted; i++) {
        if (sched->wanted[i].node == node) return sched->backends[sched->wanted[i].backend];
    }
    return NULL;
}

void ggml_backend_sched_split_graph(ggml_backend_sched_t sched, struct ggml_cgraph * g) {
    if (!sched || !g) { ggmlr_set_error("ggml_backend_sched_split_graph: scheduler or graph is NULL"); return; }
    sched->n_splits = g->n_nodes > 0 ? 1 : 0;  /* one device: the graph is one split */
}

void ggml_backend_sched_reserve_size(ggml_backend_sched_t sched, struct ggml_cgraph * g, size_t * sizes) {
    static const char fn[] = "ggml_backend_sched_reserve_size";
    if (!sched || !g || !sizes) { ggmlr_set_error("%s: scheduler, graph or sizes is NULL", fn); return; }
    for (int i = 0; i < sched->n_backends; i++) sizes[i] = 0;
    ggml_backend_sched_reset(sched);
    ggml_backend_sched_split_graph(sched, g);
    ggml_gallocr_t ga = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    if (!ga) return;
    ggml_gallocr_reserve_n_size(ga, g, NULL, NULL, sizes);
    ggml_gallocr_free(ga);
}

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
}

void ggml_backend_sched_free(ggml_backend_sched_t sched) {
    if (!sched) return;
    ggml_backend_sched_reset(sched);
    free(sched->assigned);
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

enum ggml_status ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph * g) {
    if (!sched || !g) { ggmlr_set_error("ggml_backend_sched_graph_compute: scheduler or graph is NULL"); return GGML_STATUS_FAILED; }
    if (!ggml_backend_sched_alloc_graph(sched, g)) return GGML_STATUS_ALLOC_FAILED;
    return ggml_backend_graph_compute(sched->backends[0], g);
}

/* backend-sched.c -- upstream's backend scheduler entry points for CPU
 * backends: give memory to the tensors of a graph that have none, compute the
 * graph, take the memory back on reset.
 *
 * There is one device, so there is nothing to split or copy: a graph runs on
 * backends[0] as a whole. Each ggml_backend_sched_alloc_graph call gives one
 * zeroed block to the tensors that still lack memory; the scheduler remembers
 * them, and ggml_backend_sched_reset frees the blocks and clears their data
 * pointers, so a later graph never sees memory that is gone. */
#include "backend/backend_internal.h"

#include "ggml-cpu.h"

#include <stdlib.h>

#define SCHED_MAX_BACKENDS 16

struct ggml_backend_sched {
    ggml_backend_t backends[SCHED_MAX_BACKENDS];
    int            n_backends;
    size_t         graph_size;

    ggml_backend_buffer_t * blocks;    /* one per alloc_graph call that needed memory */
    size_t                  n_blocks;
    struct ggml_tensor **   assigned;  /* tensors whose data points into a block */
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
    for (size_t i = 0; i < sched->n_blocks; i++) ggml_backend_buffer_free(sched->blocks[i]);
    free(sched->blocks);
    sched->blocks = NULL;
    sched->n_blocks = 0;
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

bool ggml_backend_sched_reserve(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    if (!sched || !graph) { ggmlr_set_error("ggml_backend_sched_reserve: scheduler or graph is NULL"); return false; }
    return true;
}

static bool needs_block_memory(const struct ggml_tensor * t) { return !t->data && !t->view_src; }

/* Every tensor of the graph in order: leafs, then nodes (sources first). */
static struct ggml_tensor * graph_tensor(const struct ggml_cgraph * g, int i) { return i < g->n_leafs ? g->leafs[i] : g->nodes[i - g->n_leafs]; }

bool ggml_backend_sched_alloc_graph(ggml_backend_sched_t sched, struct ggml_cgraph * g) {
    if (!sched || !g) { ggmlr_set_error("ggml_backend_sched_alloc_graph: scheduler or graph is NULL"); return false; }
    const int n = g->n_leafs + g->n_nodes;
    size_t total = 0, n_new = 0;
    for (int i = 0; i < n; i++) {
        const struct ggml_tensor * t = graph_tensor(g, i);
        if (t->data) continue;
        n_new++;  /* a base that needs a block, or a view of one */
        if (!needs_block_memory(t)) continue;
        const size_t bytes = ggmlr_align_up(ggml_nbytes(t));
        if (bytes > SIZE_MAX - total) { ggmlr_set_error("ggml_backend_sched_alloc_graph: graph memory overflows"); return false; }
        total += bytes;
    }
    if (n_new == 0) return true;
    if (sched->n_assigned + n_new > sched->cap_assigned) {
        const size_t cap = 2 * (sched->n_assigned + n_new);
        struct ggml_tensor ** bigger = ggmlr_realloc(sched->assigned, cap * sizeof *bigger);
        if (!bigger) { ggmlr_set_error("ggml_backend_sched_alloc_graph: out of memory"); return false; }
        sched->assigned = bigger;
        sched->cap_assigned = cap;
    }
    ggml_backend_buffer_t * more_blocks = ggmlr_realloc(sched->blocks, (sched->n_blocks + 1) * sizeof *more_blocks);
    if (!more_blocks) { ggmlr_set_error("ggml_backend_sched_alloc_graph: out of memory"); return false; }
    sched->blocks = more_blocks;
    ggml_backend_buffer_t block = ggmlr_buffer_new("ggml_backend_sched_alloc_graph", total);
    if (!block) return false;
    sched->blocks[sched->n_blocks++] = block;
    /* bases first, then views: a view's base is a leaf or an earlier node, or
     * memory that was there before; view_src is always a base (context.c) */
    size_t offs = 0;
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * t = graph_tensor(g, i);
        if (!needs_block_memory(t)) continue;
        t->data = (char *) block->data + offs;
        t->buffer = block;
        offs += ggmlr_align_up(ggml_nbytes(t));
        sched->assigned[sched->n_assigned++] = t;
    }
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * t = graph_tensor(g, i);
        if (t->data || !t->view_src) continue;
        if (!t->view_src->data) {
            ggmlr_set_error("ggml_backend_sched_alloc_graph: view '%s' of '%s', which is not in the graph and has no memory", t->name, t->view_src->name);
            return false;  /* what was assigned stays tracked; reset frees it */
        }
        t->data = (char *) t->view_src->data + t->view_offs;
        t->buffer = t->view_src->buffer;
        sched->assigned[sched->n_assigned++] = t;
    }
    return true;
}

enum ggml_status ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph * g) {
    if (!sched || !g) { ggmlr_set_error("ggml_backend_sched_graph_compute: scheduler or graph is NULL"); return GGML_STATUS_FAILED; }
    if (!ggml_backend_sched_alloc_graph(sched, g)) return GGML_STATUS_ALLOC_FAILED;
    return ggml_backend_graph_compute(sched->backends[0], g);
}

/* galloc.c -- ggml-alloc.h: the tensor allocator (bump allocation in a
 * buffer), the graph allocator, and one buffer for a context's tensors.
 *
 * The graph allocator walks the nodes in execution order, the order the
 * executor computes them in, over a virtual address range [0, peak):
 *
 *   - leafs, then inputs, get memory first and keep it to the end;
 *   - before node i runs, it gets memory (best fit among the free ranges,
 *     else the end of the range grows);
 *   - after node i, each source whose last reader was node i gives its memory
 *     back (a view keeps its base alive: the base is given back when neither
 *     it nor any of its views has a reader left).
 *
 * Node i's memory is taken before its sources give theirs back, so a result
 * never overlaps the inputs of the node computing it: every kernel stays
 * correct without knowing about the allocator. Never given back: leafs,
 * parameters, inputs, outputs, nodes that no node reads (the results), and
 * tensors that had memory before (they are not the allocator's). A planning
 * pass gives the peak; the buffer grows to it; then the addresses are set. */
#include "backend/backend_internal.h"

#include <stdlib.h>

/* ---- tensor allocator ---- */

struct ggml_tallocr ggml_tallocr_new(ggml_backend_buffer_t buffer) {
    struct ggml_tallocr t = {buffer, ggml_backend_buffer_get_base(buffer), GGMLR_BUFFER_ALIGN, 0};
    if (!buffer) ggmlr_set_error("ggml_tallocr_new: buffer is NULL");
    return t;
}

enum ggml_status ggml_tallocr_alloc(struct ggml_tallocr * talloc, struct ggml_tensor * tensor) {
    if (!talloc || !talloc->buffer || !tensor) { ggmlr_set_error("ggml_tallocr_alloc: allocator, its buffer or tensor is NULL"); return GGML_STATUS_FAILED; }
    const size_t size = ggmlr_buffer_tensor_size(tensor), cap = ggml_backend_buffer_get_size(talloc->buffer);
    /* the padding of the last tensor may pass the buffer's end: its bytes may not */
    if (size == SIZE_MAX || talloc->offset > cap || ggml_nbytes(tensor) > cap - talloc->offset) {
        ggmlr_set_error("ggml_tallocr_alloc: '%s' (%zu bytes) does not fit in the buffer (%zu of %zu bytes used)",
                        tensor->name, ggml_nbytes(tensor), talloc->offset, cap);
        return GGML_STATUS_ALLOC_FAILED;
    }
    const enum ggml_status st = ggml_backend_tensor_alloc(talloc->buffer, tensor, (char *) talloc->base + talloc->offset);
    if (st == GGML_STATUS_SUCCESS) talloc->offset += size;
    return st;
}

/* ---- graph allocator ---- */

/* What the plan knows of one tensor of the graph. */
struct tensor_info {
    const struct ggml_tensor * t;  /* NULL: empty slot */
    int    n_readers;              /* nodes still to run that read it */
    int    n_views;                /* views of it still alive */
    bool   alive;                  /* holds memory of this plan now */
    bool   keep;                   /* a leaf, or read from outside the graph: kept to the end */
    size_t offset;                 /* where it lives once placed (kept after it dies) */
};

/* A free range of the virtual address space, below `end`. */
struct free_range { size_t offset, size; };

struct ggml_gallocr {
    ggml_backend_buffer_t buffer;

    /* the plan at hand (its arrays are reused between calls) */
    struct tensor_info * info;  /* open addressing by pointer, power-of-two capacity */
    size_t info_cap, info_n;
    struct free_range * free;   /* sorted by offset, never adjacent */
    size_t n_free, cap_free;
    size_t end, peak;
};

ggml_gallocr_t ggml_gallocr_new(ggml_backend_buffer_type_t buft) {
    if (buft != ggml_backend_cpu_buffer_type()) { ggmlr_set_error("ggml_gallocr_new: buffer type is not the CPU one"); return NULL; }
    struct ggml_gallocr * ga = ggmlr_calloc(1, sizeof *ga);
    if (!ga) ggmlr_set_error("ggml_gallocr_new: out of memory");
    return ga;
}

ggml_gallocr_t ggml_gallocr_new_n(ggml_backend_buffer_type_t * bufts, int n_bufs) {
    if (!bufts || n_bufs != 1) { ggmlr_set_error("ggml_gallocr_new_n: one buffer type is supported (got %d)", n_bufs); return NULL; }
    return ggml_gallocr_new(bufts[0]);
}

void ggml_gallocr_free(ggml_gallocr_t ga) {
    if (!ga) return;
    ggml_backend_buffer_free(ga->buffer);
    free(ga->info);
    free(ga->free);
    free(ga);
}

size_t ggml_gallocr_get_buffer_size(ggml_gallocr_t ga, int buffer_id) {
    return ga && buffer_id == 0 ? ggml_backend_buffer_get_size(ga->buffer) : 0;
}

static size_t hash_ptr(const void * p) { return (size_t) (((uintptr_t) p >> 4) * 0x9E3779B97F4A7C15ull); }

static bool info_rehash(struct ggml_gallocr * ga, size_t cap) {
    struct tensor_info * bigger = ggmlr_calloc(cap, sizeof *bigger);
    if (!bigger) return false;
    for (size_t i = 0; i < ga->info_cap; i++) {
        if (!ga->info[i].t) continue;
        size_t j = hash_ptr(ga->info[i].t) & (cap - 1);
        while (bigger[j].t) j = (j + 1) & (cap - 1);
        bigger[j] = ga->info[i];
    }
    free(ga->info);
    ga->info = bigger;
    ga->info_cap = cap;
    return true;
}

/* The entry of t, created when missing; NULL with a message when out of memory. */
static struct tensor_info * info_of(struct ggml_gallocr * ga, const struct ggml_tensor * t) {
    if (2 * (ga->info_n + 1) > ga->info_cap && !info_rehash(ga, ga->info_cap ? 2 * ga->info_cap : 256)) {
        ggmlr_set_error("ggml_gallocr: out of memory");
        return NULL;
    }
    size_t j = hash_ptr(t) & (ga->info_cap - 1);
    while (ga->info[j].t && ga->info[j].t != t) j = (j + 1) & (ga->info_cap - 1);
    if (!ga->info[j].t) {
        ga->info[j].t = t;
        ga->info_n++;
    }
    return &ga->info[j];
}

/* Best fit among the free ranges, else the end grows (taking along a free
 * range that touches the end). */
static bool range_take(struct ggml_gallocr * ga, size_t size, size_t * offset) {
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < ga->n_free; i++) {
        if (ga->free[i].size >= size && (best == SIZE_MAX || ga->free[i].size < ga->free[best].size)) best = i;
    }
    if (best != SIZE_MAX) {
        *offset = ga->free[best].offset;
        ga->free[best].offset += size;
        ga->free[best].size -= size;
        if (ga->free[best].size == 0) {
            memmove(&ga->free[best], &ga->free[best + 1], (ga->n_free - best - 1) * sizeof *ga->free);
            ga->n_free--;
        }
        return true;
    }
    size_t start = ga->end;
    if (ga->n_free > 0 && ga->free[ga->n_free - 1].offset + ga->free[ga->n_free - 1].size == ga->end) {
        start = ga->free[--ga->n_free].offset;
    }
    if (size > SIZE_MAX - start) return false;
    *offset = start;
    ga->end = start + size;
    if (ga->end > ga->peak) ga->peak = ga->end;
    return true;
}

/* Gives [offset, offset + size) back, merging it with its neighbours; a range
 * that reaches the end lowers the end instead. */
static bool range_give(struct ggml_gallocr * ga, size_t offset, size_t size) {
    if (offset + size == ga->end) {
        ga->end = offset;
        if (ga->n_free > 0 && ga->free[ga->n_free - 1].offset + ga->free[ga->n_free - 1].size == ga->end) {
            ga->end = ga->free[--ga->n_free].offset;
        }
        return true;
    }
    size_t i = 0;
    while (i < ga->n_free && ga->free[i].offset < offset) i++;
    const bool join_prev = i > 0 && ga->free[i - 1].offset + ga->free[i - 1].size == offset;
    const bool join_next = i < ga->n_free && offset + size == ga->free[i].offset;
    if (join_prev && join_next) {
        ga->free[i - 1].size += size + ga->free[i].size;
        memmove(&ga->free[i], &ga->free[i + 1], (ga->n_free - i - 1) * sizeof *ga->free);
        ga->n_free--;
    } else if (join_prev) {
        ga->free[i - 1].size += size;
    } else if (join_next) {
        ga->free[i].offset = offset;
        ga->free[i].size += size;
    } else {
        if (ga->n_free == ga->cap_free) {
            const size_t cap = ga->cap_free ? 2 * ga->cap_free : 64;
            struct free_range * bigger = ggmlr_realloc(ga->free, cap * sizeof *bigger);
            if (!bigger) { ggmlr_set_error("ggml_gallocr: out of memory"); return false; }
            ga->free = bigger;
            ga->cap_free = cap;
        }
        memmove(&ga->free[i + 1], &ga->free[i], (ga->n_free - i) * sizeof *ga->free);
        ga->free[i] = (struct free_range) {offset, size};
        ga->n_free++;
    }
    return true;
}

/* Whether the allocator gives t memory: it has none and is not a view. */
static bool needs_memory(const struct ggml_tensor * t) { return !t->data && !t->view_src; }

static bool kept_by_flags(const struct ggml_tensor * t) {
    return (t->flags & (GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT | GGML_TENSOR_FLAG_PARAM)) != 0;
}

/* Plans memory for t (once) if it needs some. */
static bool place(struct ggml_gallocr * ga, const struct ggml_tensor * t, bool keep) {
    if (!needs_memory(t)) return true;
    struct tensor_info * in = info_of(ga, t);
    if (!in) return false;
    in->keep |= keep;
    if (in->alive) return true;
    const size_t size = ggmlr_buffer_tensor_size(t);
    if (size == SIZE_MAX || !range_take(ga, size, &in->offset)) {
        ggmlr_set_error("ggml_gallocr: the graph's memory overflows at '%s'", t->name);
        return false;
    }
    in->alive = true;
    return true;
}

/* Memory of t back, if this plan gave it and nothing may still read it. */
static bool give_back(struct ggml_gallocr * ga, struct tensor_info * in) {
    if (!in->alive || in->keep || in->n_readers > 0 || in->n_views > 0 || kept_by_flags(in->t)) return true;
    in->alive = false;
    return range_give(ga, in->offset, ggmlr_buffer_tensor_size(in->t));
}

/* A node that reads src has run: one reader less; a view without readers
 * lets go of its base (view_src is always a base, see context.c). */
static bool read_done(struct ggml_gallocr * ga, const struct ggml_tensor * src) {
    struct tensor_info * in = info_of(ga, src);
    if (!in) return false;
    if (--in->n_readers > 0 || in->n_views > 0 || kept_by_flags(src)) return true;
    if (!src->view_src) return give_back(ga, in);
    struct tensor_info * base = info_of(ga, src->view_src);
    if (!base) return false;
    base->n_views--;
    return give_back(ga, base);
}

/* The plan of graph g: every tensor's offset and the peak (see the top). */
static bool plan(struct ggml_gallocr * ga, const struct ggml_cgraph * g) {
    if (ga->info_cap) memset(ga->info, 0, ga->info_cap * sizeof *ga->info);
    ga->info_n = 0;
    ga->n_free = 0;
    ga->end = ga->peak = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const struct ggml_tensor * node = g->nodes[i];
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            struct tensor_info * in = node->src[s] ? info_of(ga, node->src[s]) : NULL;
            if (node->src[s] && !in) return false;
            if (in) in->n_readers++;
        }
        struct tensor_info * base = node->view_src ? info_of(ga, node->view_src) : NULL;
        if (node->view_src && !base) return false;
        if (base) base->n_views++;
    }
    for (int i = 0; i < g->n_leafs; i++) if (!place(ga, g->leafs[i], true)) return false;
    for (int i = 0; i < g->n_nodes; i++) {
        const struct ggml_tensor * node = g->nodes[i];
        if ((node->flags & GGML_TENSOR_FLAG_INPUT) && !place(ga, node, false)) return false;
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            if (node->src[s] && (node->src[s]->flags & GGML_TENSOR_FLAG_INPUT) && !place(ga, node->src[s], false)) return false;
        }
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const struct ggml_tensor * node = g->nodes[i];
        for (int s = 0; s < GGML_MAX_SRC; s++) {  /* a source neither leaf nor earlier node: kept like a leaf */
            const struct ggml_tensor * src = node->src[s];
            if (src && needs_memory(src) && !info_of(ga, src)->alive && !place(ga, src, true)) return false;
        }
        const struct ggml_tensor * vs = node->view_src;
        if (vs && needs_memory(vs) && !info_of(ga, vs)->alive) {
            ggmlr_set_error("ggml_gallocr: view '%s' of '%s', which has no memory and is not computed before it", node->name, vs->name);
            return false;
        }
        if (!place(ga, node, false)) return false;
        for (int s = 0; s < GGML_MAX_SRC; s++) if (node->src[s] && !read_done(ga, node->src[s])) return false;
    }
    return true;
}

/* The buffer holds at least `size` bytes. Growing frees the old buffer. */
static bool ensure_buffer(struct ggml_gallocr * ga, size_t size) {
    if (ga->buffer && ggml_backend_buffer_get_size(ga->buffer) >= size) return true;
    ggml_backend_buffer_t bigger = ggmlr_buffer_new("ggml_gallocr", size);
    if (!bigger) return false;
    bigger->usage = GGML_BACKEND_BUFFER_USAGE_COMPUTE;
    ggml_backend_buffer_free(ga->buffer);
    ga->buffer = bigger;
    return true;
}

static bool check_ids(const char * fn, const struct ggml_cgraph * g, const int * node_ids, const int * leaf_ids) {
    for (int i = 0; node_ids && i < g->n_nodes; i++) {
        if (node_ids[i] != 0) { ggmlr_set_error("%s: node %d asks for buffer %d (there is one)", fn, i, node_ids[i]); return false; }
    }
    for (int i = 0; leaf_ids && i < g->n_leafs; i++) {
        if (leaf_ids[i] != 0) { ggmlr_set_error("%s: leaf %d asks for buffer %d (there is one)", fn, i, leaf_ids[i]); return false; }
    }
    return true;
}

void ggml_gallocr_reserve_n_size(ggml_gallocr_t ga, struct ggml_cgraph * g, const int * node_ids, const int * leaf_ids, size_t * sizes) {
    if (!sizes) return;
    sizes[0] = 0;
    if (!ga || !g) { ggmlr_set_error("ggml_gallocr_reserve_n_size: allocator or graph is NULL"); return; }
    if (check_ids("ggml_gallocr_reserve_n_size", g, node_ids, leaf_ids) && plan(ga, g)) sizes[0] = ga->peak;
}

bool ggml_gallocr_reserve_n(ggml_gallocr_t ga, struct ggml_cgraph * g, const int * node_ids, const int * leaf_ids) {
    if (!ga || !g) { ggmlr_set_error("ggml_gallocr_reserve: allocator or graph is NULL"); return false; }
    return check_ids("ggml_gallocr_reserve", g, node_ids, leaf_ids) && plan(ga, g) && ensure_buffer(ga, ga->peak);
}

bool ggml_gallocr_reserve(ggml_gallocr_t ga, struct ggml_cgraph * g) { return ggml_gallocr_reserve_n(ga, g, NULL, NULL); }

static void assign_one(struct ggml_gallocr * ga, struct ggml_tensor * t) {
    if (!needs_memory(t)) return;
    t->data = (char *) ga->buffer->data + info_of(ga, t)->offset;  /* the plan has its entry */
    t->buffer = ga->buffer;
}

/* Sets the planned addresses: bases first (every one the plan placed), then views. */
static bool assign(struct ggml_gallocr * ga, struct ggml_cgraph * g) {
    for (int i = 0; i < g->n_leafs; i++) assign_one(ga, g->leafs[i]);
    for (int i = 0; i < g->n_nodes; i++) {
        for (int s = 0; s < GGML_MAX_SRC; s++) if (g->nodes[i]->src[s]) assign_one(ga, g->nodes[i]->src[s]);
        assign_one(ga, g->nodes[i]);
    }
    for (int i = 0; i < g->n_leafs + g->n_nodes; i++) {
        struct ggml_tensor * t = i < g->n_leafs ? g->leafs[i] : g->nodes[i - g->n_leafs];
        if (!t->data && t->view_src && ggml_backend_view_init(t) != GGML_STATUS_SUCCESS) return false;
    }
    return true;
}

bool ggml_gallocr_alloc_graph(ggml_gallocr_t ga, struct ggml_cgraph * g) {
    if (!ga || !g) { ggmlr_set_error("ggml_gallocr_alloc_graph: allocator or graph is NULL"); return false; }
    return plan(ga, g) && ensure_buffer(ga, ga->peak) && assign(ga, g);
}

/* ---- one buffer for a context's tensors ---- */

/* Bytes for every tensor of ctx without memory; SIZE_MAX on overflow. */
static size_t ctx_tensors_size(struct ggml_context * ctx) {
    size_t total = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        if (t->data || t->view_src) continue;
        const size_t n = ggmlr_align_up(ggml_nbytes(t));
        if (n > SIZE_MAX - total) return SIZE_MAX;
        total += n;
    }
    return total;
}

size_t ggml_backend_alloc_ctx_tensors_from_buft_size(struct ggml_context * ctx, ggml_backend_buffer_type_t buft) {
    if (!ctx || buft != ggml_backend_cpu_buffer_type()) return 0;
    const size_t n = ctx_tensors_size(ctx);
    return n == SIZE_MAX ? 0 : n;
}

static ggml_backend_buffer_t alloc_ctx_tensors(const char * fn, struct ggml_context * ctx) {
    const size_t total = ctx_tensors_size(ctx);
    if (total == SIZE_MAX) { ggmlr_set_error("%s: total size overflows", fn); return NULL; }
    ggml_backend_buffer_t buf = ggmlr_buffer_new(fn, total);
    if (!buf) return NULL;
    size_t offs = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        if (t->data || t->view_src) continue;
        t->data = (char *) buf->data + offs;
        t->buffer = buf;
        offs += ggmlr_align_up(ggml_nbytes(t));
    }
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        if (!t->data && t->view_src && t->view_src->data) (void) ggml_backend_view_init(t);
    }
    return buf;
}

ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_t backend) {
    if (!ctx || !backend) { ggmlr_set_error("ggml_backend_alloc_ctx_tensors: context or backend is NULL"); return NULL; }
    return alloc_ctx_tensors("ggml_backend_alloc_ctx_tensors", ctx);
}

ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, ggml_backend_buffer_type_t buft) {
    if (!ctx || buft != ggml_backend_cpu_buffer_type()) {
        ggmlr_set_error("ggml_backend_alloc_ctx_tensors_from_buft: context is NULL or buffer type is not the CPU one");
        return NULL;
    }
    return alloc_ctx_tensors("ggml_backend_alloc_ctx_tensors_from_buft", ctx);
}

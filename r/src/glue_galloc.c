/* glue_galloc.c -- the graph allocator (ggml-alloc.h) in R.
 *
 * ggml_gallocr_alloc_graph gives the tensors of a graph that have no memory
 * a place in the allocator's one buffer, which a later reserve or alloc may
 * replace by a bigger one and which goes with the allocator. So that no
 * tensor ever points into freed memory, the allocator remembers the context
 * of the graph it placed last and keeps that context's memory (a pin); before
 * its buffer can change (reserve, alloc, free, collection) every tensor
 * pointing into it, in that context and the contexts connected to it, loses
 * its data again (using it is then a clean "no data" R error). */
#include "glue.h"

#include "ggml-alloc.h"

#include <stdlib.h>

#define CLS_GALLOC "ggml_gallocr"

typedef struct {
    ggml_gallocr_t ga;
    rg_ctx * placed_ctx;               /* pinned: the graph placed last, or NULL */
    ggml_backend_buffer_t placed_buf;  /* the buffer its tensors point into */
} rg_galloc;

/* Takes the data of the last placement back; 0 when out of memory (then the
 * placement stays, and so must the buffer). */
static int release_placement(rg_galloc * g) {
    if (!g->placed_ctx) return 1;
    if (!rg_ctx_detach_connected(g->placed_ctx, g->placed_buf)) return 0;
    rg_ctx * c = g->placed_ctx;
    g->placed_ctx = NULL;
    g->placed_buf = NULL;
    rg_ctx_unpin(c);
    return 1;
}

static void galloc_release(SEXP x) {
    rg_galloc * g = R_ExternalPtrAddr(x);
    if (!g) return;
    R_ClearExternalPtr(x);
    if (!release_placement(g)) return;  /* out of memory: the buffer is kept (leaked) rather than left dangling */
    ggml_gallocr_free(g->ga);
    free(g);
}

static rg_galloc * galloc_arg(SEXP x) { return rg_object_get(x, CLS_GALLOC, "galloc"); }

static void release_or_fail(rg_galloc * g) {
    if (!release_placement(g)) Rf_error("out of memory while taking back the tensors of the graph placed before");
}

SEXP R_ggml_gallocr_new(void) {
    SEXP x = PROTECT(rg_object_handle(CLS_GALLOC, R_NilValue, galloc_release));
    rg_galloc * g = calloc(1, sizeof *g);
    if (!g) Rf_error("ggml_gallocr_new: out of memory");
    R_SetExternalPtrAddr(x, g);
    ggml_clear_error();
    g->ga = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    if (!g->ga) {
        galloc_release(x);
        rg_fail("ggml_gallocr_new");
    }
    UNPROTECT(1);
    return x;
}

SEXP R_ggml_gallocr_free(SEXP galloc) { return rg_object_free(galloc, CLS_GALLOC, "galloc", galloc_release); }

SEXP R_ggml_gallocr_reserve(SEXP galloc, SEXP graph) {
    rg_galloc * g = galloc_arg(galloc);
    struct ggml_cgraph * cg = rg_graph_get(graph, "graph");
    release_or_fail(g);  /* the buffer may grow */
    ggml_clear_error();
    if (!ggml_gallocr_reserve(g->ga, cg)) rg_fail("ggml_gallocr_reserve");
    return Rf_ScalarLogical(1);
}

/* The tensors without memory of the contexts connected to c (those the
 * allocator may place), in a malloc'd array of *count; NULL with *count 0
 * when there are none. */
static struct ggml_tensor ** tensors_without_memory(rg_ctx * c, size_t * count) {
    size_t n_ctx, n = 0, cap = 0;
    rg_ctx ** ctxs = rg_ctx_connected(c, &n_ctx);
    struct ggml_tensor ** out = NULL;
    if (!ctxs) Rf_error("ggml_gallocr_alloc_graph: out of memory");
    for (size_t k = 0; k < n_ctx; k++) {
        struct ggml_context * ctx = ctxs[k]->ctx;
        for (struct ggml_tensor * t = ctx ? ggml_get_first_tensor(ctx) : NULL; t; t = ggml_get_next_tensor(ctx, t)) {
            if (t->data || t->view_src) continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                struct ggml_tensor ** v = realloc(out, cap * sizeof *v);
                if (!v) { free(out); free(ctxs); Rf_error("ggml_gallocr_alloc_graph: out of memory"); }
                out = v;
            }
            out[n++] = t;
        }
    }
    free(ctxs);
    *count = n;
    return out;
}

SEXP R_ggml_gallocr_alloc_graph(SEXP galloc, SEXP graph) {
    rg_galloc * g = galloc_arg(galloc);
    struct ggml_cgraph * cg = rg_graph_get(graph, "graph");
    rg_ctx * c = rg_ctx_get(rg_owner(graph), "graph");
    release_or_fail(g);
    size_t n;
    struct ggml_tensor ** candidates = tensors_without_memory(c, &n);
    rg_ctx_pin(c);  /* before placing: the memory must stay while tensors point into the buffer */
    ggml_clear_error();
    const bool ok = ggml_gallocr_alloc_graph(g->ga, cg);
    for (size_t i = 0; i < n && !g->placed_ctx; i++) {
        if (candidates[i]->buffer) {  /* placed by this call: its buffer is the allocator's */
            g->placed_ctx = c;
            g->placed_buf = candidates[i]->buffer;
        }
    }
    free(candidates);
    if (!g->placed_ctx) rg_ctx_unpin(c);  /* nothing placed */
    if (!ok) {
        release_or_fail(g);  /* a partial placement is taken back */
        rg_fail("ggml_gallocr_alloc_graph");
    }
    return Rf_ScalarLogical(1);
}

SEXP R_ggml_gallocr_get_buffer_size(SEXP galloc, SEXP buffer_id) {
    rg_galloc * g = galloc_arg(galloc);
    const int id = rg_int(buffer_id, "buffer_id");
    if (id != 0) Rf_error("'buffer_id' must be 0: the allocator has one buffer");
    return rg_size_sexp((double) ggml_gallocr_get_buffer_size(g->ga, id));
}

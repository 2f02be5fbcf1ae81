/* graph_copy.c -- upstream's ggml_backend_graph_copy (a graph's tensors
 * duplicated into a new context, with the data they hold copied into one
 * buffer of the backend) and ggml_backend_compare_graph_backend (a graph
 * computed on two backends, node by node, each result handed to a callback). */
#include "backend/backend_internal.h"

#include "cpu/kernels/kernels.h"

#include <stdlib.h>

/* Every tensor of the graph, sources and view bases before their users:
 * leafs, then each node's view base and sources not seen yet, then the node. */
struct tensor_list { struct ggml_tensor ** v; int n, cap; };

static int list_find(const struct tensor_list * l, const struct ggml_tensor * t) {
    for (int i = 0; i < l->n; i++) if (l->v[i] == t) return i;
    return -1;
}

static bool list_add(struct tensor_list * l, struct ggml_tensor * t) {
    if (!t || list_find(l, t) >= 0) return true;
    if (t->view_src && !list_add(l, t->view_src)) return false;
    for (int s = 0; s < GGML_MAX_SRC; s++) if (t->src[s] && !list_add(l, t->src[s])) return false;
    if (l->n == l->cap) {
        const int cap = l->cap ? 2 * l->cap : 64;
        struct ggml_tensor ** bigger = ggmlr_realloc(l->v, (size_t) cap * sizeof *bigger);
        if (!bigger) return false;
        l->v = bigger;
        l->cap = cap;
    }
    l->v[l->n++] = t;
    return true;
}

/* A tensor like t (type, shape, strides, op, parameters, flags, name) whose
 * sources and view base are the copies of t's, in `copies` (same indexes as `all`). */
static struct ggml_tensor * dup_node(struct ggml_context * ctx, const struct tensor_list * all, struct ggml_tensor ** copies,
                                     const struct ggml_tensor * t) {
    struct ggml_tensor * base = t->view_src ? copies[list_find(all, t->view_src)] : NULL;
    struct ggml_tensor * c = ggmlr_new_tensor_impl(ctx, t->type, GGML_MAX_DIMS, t->ne, base, t->view_offs);
    if (!c) return NULL;
    memcpy(c->nb, t->nb, sizeof c->nb);
    c->op = t->op;
    memcpy(c->op_params, t->op_params, sizeof c->op_params);
    c->flags = t->flags;
    for (int s = 0; s < GGML_MAX_SRC; s++) c->src[s] = t->src[s] ? copies[list_find(all, t->src[s])] : NULL;
    memcpy(c->name, t->name, sizeof c->name);
    return c;
}

struct ggml_backend_graph_copy ggml_backend_graph_copy(ggml_backend_t backend, struct ggml_cgraph * graph) {
    struct ggml_backend_graph_copy out = {0};
    if (!backend || !graph) { ggmlr_set_error("ggml_backend_graph_copy: backend or graph is NULL"); return out; }
    struct tensor_list all = {0};
    bool ok = true;
    for (int i = 0; ok && i < graph->n_leafs; i++) ok = list_add(&all, graph->leafs[i]);
    for (int i = 0; ok && i < graph->n_nodes; i++) ok = list_add(&all, graph->nodes[i]);
    struct ggml_tensor ** copies = ok ? ggmlr_calloc((size_t) all.n + 1, sizeof *copies) : NULL;
    struct ggml_init_params ip = {(size_t) all.n * ggml_tensor_overhead() + ggml_graph_overhead_custom((size_t) graph->size, false), NULL, true};
    struct ggml_context * ctx = copies ? ggml_init(ip) : NULL;
    struct ggml_cgraph * g = ctx ? ggml_new_graph_custom(ctx, (size_t) graph->size, false) : NULL;
    ok = g != NULL;
    if (!ok && !ggml_last_error()[0]) ggmlr_set_error("ggml_backend_graph_copy: out of memory");
    for (int i = 0; ok && i < all.n; i++) ok = (copies[i] = dup_node(ctx, &all, copies, all.v[i])) != NULL;
    ggml_backend_buffer_t buf = ok ? ggml_backend_alloc_ctx_tensors(ctx, backend) : NULL;
    if (buf) {
        for (int i = 0; i < all.n; i++) {  /* the data there is (leafs, and results already computed) */
            if (!all.v[i]->view_src && all.v[i]->data) memcpy(copies[i]->data, all.v[i]->data, ggml_nbytes(all.v[i]));
        }
        for (int i = 0; i < graph->n_nodes; i++) ggml_graph_add_node(g, copies[list_find(&all, graph->nodes[i])]);
        out = (struct ggml_backend_graph_copy) {buf, ctx, NULL, g};
    } else {
        ggml_free(ctx);
    }
    free(copies);
    free(all.v);
    return out;
}

void ggml_backend_graph_copy_free(struct ggml_backend_graph_copy copy) {
    ggml_backend_buffer_free(copy.buffer);
    ggml_free(copy.ctx_allocated);
    ggml_free(copy.ctx_unallocated);
}

/* The one-node graph of node i of g (shares g's arrays; computing needs nothing else). */
static struct ggml_cgraph one_node(const struct ggml_cgraph * g, int i) {
    struct ggml_cgraph v = {0};
    v.size = 1;
    v.n_nodes = 1;
    v.nodes = &g->nodes[i];
    return v;
}

bool ggml_backend_compare_graph_backend(ggml_backend_t backend1, ggml_backend_t backend2, struct ggml_cgraph * graph,
                                        ggml_backend_eval_callback callback, void * user_data,
                                        struct ggml_tensor const * const * test_nodes, size_t num_test_nodes) {
    if (!callback || (num_test_nodes > 0 && !test_nodes)) { ggmlr_set_error("ggml_backend_compare_graph_backend: callback or test nodes are NULL"); return false; }
    struct ggml_backend_graph_copy copy = ggml_backend_graph_copy(backend2, graph);
    if (!copy.buffer) return false;
    struct ggml_cgraph * g1 = graph, * g2 = copy.graph;
    bool ok = true;
    if (num_test_nodes > 0) {  /* the whole graph, then the nodes asked for */
        ok = ggml_backend_graph_compute(backend1, g1) == GGML_STATUS_SUCCESS && ggml_backend_graph_compute(backend2, g2) == GGML_STATUS_SUCCESS;
        bool found = false;
        for (int i = 0; ok && i < g1->n_nodes; i++) {
            for (size_t j = 0; j < num_test_nodes; j++) {
                if (g1->nodes[i] == test_nodes[j]) { (void) callback(i, g1->nodes[i], g2->nodes[i], user_data); found = true; }
            }
        }
        if (ok && !found) { ggmlr_set_error("ggml_backend_compare_graph_backend: no test node is in the graph"); ok = false; }
    } else {
        for (int i = 0; ok && i < g1->n_nodes; i++) {
            struct ggml_cgraph v1 = one_node(g1, i), v2 = one_node(g2, i);
            ok = ggml_backend_graph_compute(backend1, &v1) == GGML_STATUS_SUCCESS && ggml_backend_graph_compute(backend2, &v2) == GGML_STATUS_SUCCESS;
            if (ok && ggmlr_op_is_view(g1->nodes[i]->op)) continue;  /* nothing computed, nothing to compare */
            if (ok && !callback(i, g1->nodes[i], g2->nodes[i], user_data)) break;
        }
    }
    ggml_backend_graph_copy_free(copy);
    return ok;
}

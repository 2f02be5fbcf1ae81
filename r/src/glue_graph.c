/* glue_graph.c -- graphs, parameters and losses, automatic differentiation,
 * and computing a graph on the CPU.
 *
 * A graph lives in its context's arena; its handle keeps that context alive.
 * Nodes and gradients read back from a graph are given the graph's context
 * as owner: that context (directly or through its dependencies) keeps their
 * memory alive. */
#include "glue.h"

static rg_ctx * graph_ctx(SEXP graph) { return R_ExternalPtrAddr(rg_owner(graph)); }

/* ---- creation and expansion ---- */

SEXP R_ggml_new_graph(SEXP ctx) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    ggml_clear_error();
    struct ggml_cgraph * g = ggml_new_graph(c->ctx);
    if (!g) rg_fail("ggml_new_graph");
    return rg_graph_wrap(g, ctx);
}

SEXP R_ggml_new_graph_custom(SEXP ctx, SEXP size, SEXP grads) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    const int64_t n = rg_count(size, "size");
    const int with_grads = rg_bool(grads, "grads");
    ggml_clear_error();
    struct ggml_cgraph * g = ggml_new_graph_custom(c->ctx, (size_t) n, with_grads);
    if (!g) rg_fail("ggml_new_graph_custom");
    return rg_graph_wrap(g, ctx);
}

/* A new graph in ctx holding tensor and everything it depends on. */
static SEXP build_forward(SEXP ctx, SEXP tensor, SEXP graph_size, int grads, const char * fn) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    struct ggml_tensor * t = rg_tensor_arg(c, tensor, "tensor", 0);
    const int64_t size = rg_count(graph_size, "graph_size");
    ggml_clear_error();
    struct ggml_cgraph * g = ggml_new_graph_custom(c->ctx, (size_t) size, grads);
    if (!g) rg_fail(fn);
    rg_check_status(ggml_build_forward_expand_status(g, t), fn);
    return rg_graph_wrap(g, ctx);
}

SEXP R_ggml_build_forward_expand(SEXP ctx, SEXP tensor, SEXP graph_size) {
    return build_forward(ctx, tensor, graph_size, 0, "ggml_build_forward_expand");
}

SEXP R_ggml_build_forward_expand_grads(SEXP ctx, SEXP tensor, SEXP graph_size) {
    return build_forward(ctx, tensor, graph_size, 1, "ggml_build_forward_expand_grads");
}

/* C's ggml_build_forward_expand(graph, tensor): add to an existing graph. */
SEXP R_ggml_graph_expand(SEXP graph, SEXP tensor) {
    struct ggml_cgraph * g = rg_graph_get(graph, "graph");
    struct ggml_tensor * t = rg_tensor_arg(graph_ctx(graph), tensor, "tensor", 0);
    ggml_clear_error();
    rg_check_status(ggml_build_forward_expand_status(g, t), "ggml_graph_expand");
    return graph;
}

/* grad_accs: NULL, or a list with one entry per graph node (NULL or the F32
 * tensor the node's gradient is accumulated into, for parameters). */
SEXP R_ggml_build_backward_expand(SEXP ctx, SEXP graph, SEXP grad_accs) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    struct ggml_cgraph * g = rg_graph_get(graph, "graph");
    /* The graph will point at gradient nodes made in ctx, and they at the
     * graph's nodes: one context for both keeps the lifetimes simple. */
    if (graph_ctx(graph) != c) Rf_error("ggml_build_backward_expand: 'ctx' must be the context the graph was created in");
    struct ggml_tensor ** accs = NULL;
    if (grad_accs != R_NilValue) {
        const int n = ggml_graph_n_nodes(g);
        if (TYPEOF(grad_accs) != VECSXP || XLENGTH(grad_accs) != n)
            Rf_error("ggml_build_backward_expand: 'grad_accs' must be NULL or a list with one entry (NULL or a tensor) per graph node (%d)", n);
        accs = (struct ggml_tensor **) R_alloc((size_t) n + 1, sizeof *accs);
        for (int i = 0; i < n; i++) accs[i] = rg_tensor_arg(c, VECTOR_ELT(grad_accs, i), "grad_accs", 1);
    }
    ggml_clear_error();
    rg_check_status(ggml_build_backward_expand(c->ctx, g, accs), "ggml_build_backward_expand");
    return graph;
}

/* ---- flags ---- */

#define SET_FLAG(fn) \
    SEXP R_##fn(SEXP tensor) { fn(rg_tensor_get(tensor, "tensor", 0)); return tensor; }

SET_FLAG(ggml_set_param)
SET_FLAG(ggml_set_input)
SET_FLAG(ggml_set_output)

/* ggml_set_loss is void: it refuses a non-scalar by not setting the flag. */
SEXP R_ggml_set_loss(SEXP tensor) {
    struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    ggml_clear_error();
    ggml_set_loss(t);
    if (!(t->flags & GGML_TENSOR_FLAG_LOSS)) rg_fail("ggml_set_loss");
    return tensor;
}

/* ---- queries ---- */

SEXP R_ggml_graph_reset(SEXP graph) {
    struct ggml_cgraph * g = rg_graph_get(graph, "graph");
    ggml_clear_error();
    ggml_graph_reset(g);
    if (ggml_last_error()[0]) rg_fail("ggml_graph_reset");
    return graph;
}

SEXP R_ggml_graph_get_grad(SEXP graph, SEXP tensor) {
    struct ggml_cgraph * g = rg_graph_get(graph, "graph");
    return rg_tensor_wrap(ggml_graph_get_grad(g, rg_tensor_get(tensor, "tensor", 0)), rg_owner(graph));
}

SEXP R_ggml_graph_get_grad_acc(SEXP graph, SEXP tensor) {
    struct ggml_cgraph * g = rg_graph_get(graph, "graph");
    return rg_tensor_wrap(ggml_graph_get_grad_acc(g, rg_tensor_get(tensor, "tensor", 0)), rg_owner(graph));
}

SEXP R_ggml_graph_size(SEXP graph)    { return Rf_ScalarInteger(ggml_graph_size(rg_graph_get(graph, "graph"))); }
SEXP R_ggml_graph_n_nodes(SEXP graph) { return Rf_ScalarInteger(ggml_graph_n_nodes(rg_graph_get(graph, "graph"))); }

SEXP R_ggml_graph_node(SEXP graph, SEXP i) {
    struct ggml_cgraph * g = rg_graph_get(graph, "graph");
    const int idx = rg_int(i, "i");
    ggml_clear_error();
    struct ggml_tensor * t = ggml_graph_node(g, idx);
    if (!t) rg_fail("ggml_graph_node");
    return rg_tensor_wrap(t, rg_owner(graph));
}

/* Upstream's ggml_graph_view: nodes i0 .. i1 - 1 of graph (no leafs), here as
 * a new graph in graph's context (upstream's shares the node array). */
SEXP R_ggml_graph_view(SEXP graph, SEXP i0, SEXP i1) {
    struct ggml_cgraph * g = rg_graph_get(graph, "graph");
    rg_ctx * c = rg_ctx_get(rg_owner(graph), "graph");
    const int from = rg_int(i0, "i0"), to = rg_int(i1, "i1"), n = ggml_graph_n_nodes(g);
    if (from < 0 || from > to || to > n) Rf_error("'i0' and 'i1' must satisfy 0 <= i0 <= i1 <= %d (the graph's nodes)", n);
    ggml_clear_error();
    struct ggml_cgraph * view = ggml_new_graph_custom(c->ctx, (size_t) (to > from ? to - from : 1), false);
    if (!view) rg_fail("ggml_graph_view");
    for (int i = from; i < to; i++) ggml_graph_add_node(view, ggml_graph_node(g, i));
    return rg_graph_wrap(view, rg_owner(graph));
}

SEXP R_ggml_graph_get_tensor(SEXP graph, SEXP name) {
    struct ggml_cgraph * g = rg_graph_get(graph, "graph");
    return rg_tensor_wrap(ggml_graph_get_tensor(g, rg_string(name, "name")), rg_owner(graph));
}

/* ---- compute ---- */

static SEXP compute(SEXP ctx, SEXP graph, int n_threads) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    struct ggml_cgraph * g = rg_graph_get(graph, "graph");
    ggml_clear_error();
    rg_check_status(ggml_graph_compute_with_ctx(c->ctx, g, n_threads), "ggml_graph_compute");
    return graph;
}

SEXP R_ggml_graph_compute(SEXP ctx, SEXP graph) { return compute(ctx, graph, rg_default_threads()); }

SEXP R_ggml_graph_compute_with_ctx(SEXP ctx, SEXP graph, SEXP n_threads) {
    const int n = rg_int(n_threads, "n_threads");
    if (n < 1 || n > 256) Rf_error("'n_threads' must be between 1 and 256 (got %d)", n);
    return compute(ctx, graph, n);
}

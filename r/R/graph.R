# Graphs, parameters and losses, automatic differentiation and computing
# on the CPU (src/glue_graph.c).

ggml_new_graph <- function(ctx) .Call(C_ggml_new_graph, ctx)
ggml_new_graph_custom <- function(ctx, size, grads) .Call(C_ggml_new_graph_custom, ctx, size, grads)

# Unlike C, which expands an existing graph, these make the graph in ctx.
ggml_build_forward_expand <- function(ctx, tensor, graph_size = GGML_DEFAULT_GRAPH_SIZE) {
  .Call(C_ggml_build_forward_expand, ctx, tensor, graph_size)
}
ggml_build_forward_expand_grads <- function(ctx, tensor, graph_size = GGML_DEFAULT_GRAPH_SIZE) {
  .Call(C_ggml_build_forward_expand_grads, ctx, tensor, graph_size)
}
# C's ggml_build_forward_expand(graph, tensor).
ggml_graph_expand <- function(graph, tensor) invisible(.Call(C_ggml_graph_expand, graph, tensor))
ggml_build_backward_expand <- function(ctx, graph, grad_accs = NULL) {
  invisible(.Call(C_ggml_build_backward_expand, ctx, graph, grad_accs))
}

ggml_set_param <- function(tensor) invisible(.Call(C_ggml_set_param, tensor))
ggml_set_loss <- function(tensor) invisible(.Call(C_ggml_set_loss, tensor))
ggml_set_input <- function(tensor) invisible(.Call(C_ggml_set_input, tensor))
ggml_set_output <- function(tensor) invisible(.Call(C_ggml_set_output, tensor))

ggml_graph_reset <- function(graph) invisible(.Call(C_ggml_graph_reset, graph))
ggml_graph_get_grad <- function(graph, tensor) .Call(C_ggml_graph_get_grad, graph, tensor)
ggml_graph_get_grad_acc <- function(graph, tensor) .Call(C_ggml_graph_get_grad_acc, graph, tensor)
ggml_graph_size <- function(graph) .Call(C_ggml_graph_size, graph)
ggml_graph_n_nodes <- function(graph) .Call(C_ggml_graph_n_nodes, graph)
ggml_graph_node <- function(graph, i) .Call(C_ggml_graph_node, graph, i)
ggml_graph_get_tensor <- function(graph, name) .Call(C_ggml_graph_get_tensor, graph, name)
# Nodes i0 .. i1 - 1 of graph as a graph of their own (in graph's context).
ggml_graph_view <- function(graph, i0, i1) .Call(C_ggml_graph_view, graph, i0, i1)
# Printed to the console through the library's log.
ggml_graph_print <- function(graph) invisible(.Call(C_ggml_graph_print, graph))

ggml_graph_compute <- function(ctx, graph) invisible(.Call(C_ggml_graph_compute, ctx, graph))
ggml_graph_compute_with_ctx <- function(ctx, graph, n_threads = ggml_get_n_threads()) {
  invisible(.Call(C_ggml_graph_compute_with_ctx, ctx, graph, n_threads))
}

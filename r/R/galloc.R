# The graph allocator (ggml-alloc.h; src/glue_galloc.c): memory in one CPU
# buffer for the tensors of a graph that have none.

ggml_gallocr_new <- function() .Call(C_ggml_gallocr_new)
ggml_gallocr_free <- function(galloc) invisible(.Call(C_ggml_gallocr_free, galloc))
ggml_gallocr_reserve <- function(galloc, graph) .Call(C_ggml_gallocr_reserve, galloc, graph)
ggml_gallocr_alloc_graph <- function(galloc, graph) .Call(C_ggml_gallocr_alloc_graph, galloc, graph)
ggml_gallocr_get_buffer_size <- function(galloc, buffer_id = 0L) .Call(C_ggml_gallocr_get_buffer_size, galloc, buffer_id)

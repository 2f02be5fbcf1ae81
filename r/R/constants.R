# Constants shared with the C library (upstream ggml's numbering).

GGML_TYPE_F32 <- 0L
GGML_TYPE_F16 <- 1L
GGML_TYPE_I32 <- 26L

# Default capacity (nodes) of a graph.
GGML_DEFAULT_GRAPH_SIZE <- 2048L

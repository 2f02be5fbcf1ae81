# Constants shared with the C library (upstream ggml's numbering).

GGML_TYPE_F32 <- 0L
GGML_TYPE_F16 <- 1L
GGML_TYPE_I32 <- 26L

# Default capacity (nodes) of a graph.
GGML_DEFAULT_GRAPH_SIZE <- 2048L

# GGML_UNARY_OP_* (upstream numbering; only these activations exist)
GGML_UNARY_OP_NEG <- 2L
GGML_UNARY_OP_TANH <- 4L
GGML_UNARY_OP_RELU <- 6L
GGML_UNARY_OP_SIGMOID <- 7L
GGML_UNARY_OP_GELU <- 8L
GGML_UNARY_OP_SILU <- 10L
GGML_UNARY_OP_EXP <- 13L
GGML_UNARY_OP_GELU_ERF <- 16L

# ggml_rope_ext modes (upstream values)
GGML_ROPE_TYPE_NORMAL <- 0L
GGML_ROPE_TYPE_NEOX <- 2L

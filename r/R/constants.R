# Constants shared with the C library (upstream ggml's numbering).

GGML_TYPE_F32 <- 0L
GGML_TYPE_F16 <- 1L
GGML_TYPE_I32 <- 26L

# Default capacity (nodes) of a graph.
GGML_DEFAULT_GRAPH_SIZE <- 2048L

# GGML_UNARY_OP_* (upstream numbering; only these activations are implemented)
GGML_UNARY_OP_NEG <- 2L
GGML_UNARY_OP_TANH <- 4L
GGML_UNARY_OP_RELU <- 6L
GGML_UNARY_OP_SIGMOID <- 7L
GGML_UNARY_OP_GELU <- 8L
GGML_UNARY_OP_SILU <- 10L
GGML_UNARY_OP_EXP <- 13L
GGML_UNARY_OP_GELU_ERF <- 16L
GGML_UNARY_OP_GELU_QUICK <- 9L

# GGML_GLU_OP_* (upstream numbering): the gates of ggml_glu / ggml_glu_split
GGML_GLU_OP_REGLU <- 0L
GGML_GLU_OP_GEGLU <- 1L
GGML_GLU_OP_SWIGLU <- 2L
GGML_GLU_OP_SWIGLU_OAI <- 3L
GGML_GLU_OP_GEGLU_ERF <- 4L
GGML_GLU_OP_GEGLU_QUICK <- 5L

# GGML_TRI_TYPE_* (upstream numbering): the triangle ggml_tri keeps (column i0, row i1)
GGML_TRI_TYPE_UPPER_DIAG <- 0L
GGML_TRI_TYPE_UPPER <- 1L
GGML_TRI_TYPE_LOWER_DIAG <- 2L
GGML_TRI_TYPE_LOWER <- 3L

# ggml_rope_ext modes (upstream values)
GGML_ROPE_TYPE_NORMAL <- 0L
GGML_ROPE_TYPE_NEOX <- 2L

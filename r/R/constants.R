# Constants shared with the C library (upstream ggml's numbering).

GGML_TYPE_F32 <- 0L
GGML_TYPE_F16 <- 1L
GGML_TYPE_I32 <- 26L

# Default capacity (nodes) of a graph.
GGML_DEFAULT_GRAPH_SIZE <- 2048L

# GGML_UNARY_OP_* (upstream numbering; every activation is implemented, XIELU through ggml_xielu)
GGML_UNARY_OP_ABS <- 0L
GGML_UNARY_OP_SGN <- 1L
GGML_UNARY_OP_NEG <- 2L
GGML_UNARY_OP_STEP <- 3L
GGML_UNARY_OP_TANH <- 4L
GGML_UNARY_OP_ELU <- 5L
GGML_UNARY_OP_RELU <- 6L
GGML_UNARY_OP_SIGMOID <- 7L
GGML_UNARY_OP_GELU <- 8L
GGML_UNARY_OP_GELU_QUICK <- 9L
GGML_UNARY_OP_SILU <- 10L
GGML_UNARY_OP_HARDSWISH <- 11L
GGML_UNARY_OP_HARDSIGMOID <- 12L
GGML_UNARY_OP_EXP <- 13L
GGML_UNARY_OP_EXPM1 <- 14L
GGML_UNARY_OP_SOFTPLUS <- 15L
GGML_UNARY_OP_GELU_ERF <- 16L
GGML_UNARY_OP_XIELU <- 17L
GGML_UNARY_OP_FLOOR <- 18L
GGML_UNARY_OP_CEIL <- 19L
GGML_UNARY_OP_ROUND <- 20L
GGML_UNARY_OP_TRUNC <- 21L

# GGML_GLU_OP_* (upstream numbering): the gates of ggml_glu / ggml_glu_split
GGML_GLU_OP_REGLU <- 0L
GGML_GLU_OP_GEGLU <- 1L
GGML_GLU_OP_SWIGLU <- 2L
GGML_GLU_OP_SWIGLU_OAI <- 3L
GGML_GLU_OP_GEGLU_ERF <- 4L
GGML_GLU_OP_GEGLU_QUICK <- 5L

# GGML_SORT_ORDER_* (upstream numbering): ggml_argsort's order
GGML_SORT_ORDER_ASC <- 0L
GGML_SORT_ORDER_DESC <- 1L

# GGML_TRI_TYPE_* (upstream numbering): the triangle ggml_tri keeps (column i0, row i1)
GGML_TRI_TYPE_UPPER_DIAG <- 0L
GGML_TRI_TYPE_UPPER <- 1L
GGML_TRI_TYPE_LOWER_DIAG <- 2L
GGML_TRI_TYPE_LOWER <- 3L
# GGML_OP_POOL_* (upstream numbering): the pooling of ggml_pool_1d / ggml_pool_2d
GGML_OP_POOL_MAX <- 0L
GGML_OP_POOL_AVG <- 1L

# GGML_SCALE_MODE_* (upstream numbering): the resampling of ggml_upscale / ggml_upscale_ext
GGML_SCALE_MODE_NEAREST <- 0L
GGML_SCALE_MODE_BILINEAR <- 1L

# ggml_rope_ext modes (upstream values)
GGML_ROPE_TYPE_NORMAL <- 0L
GGML_ROPE_TYPE_NEOX <- 2L

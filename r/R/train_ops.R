# Training ops (src/glue_train_ops.c): activations, normalisation, row
# gathering, losses, argmax and optimizer steps.

# GGML_UNARY_OP_* (upstream numbering; only these activations exist)
GGML_UNARY_OP_NEG <- 2L
GGML_UNARY_OP_TANH <- 4L
GGML_UNARY_OP_RELU <- 6L
GGML_UNARY_OP_SIGMOID <- 7L
GGML_UNARY_OP_GELU <- 8L
GGML_UNARY_OP_SILU <- 10L
GGML_UNARY_OP_EXP <- 13L
GGML_UNARY_OP_GELU_ERF <- 16L

ggml_unary <- function(ctx, a, op) .Call(C_ggml_unary, ctx, a, op)
ggml_unary_op_name <- function(op) .Call(C_ggml_unary_op_name, op)
ggml_get_unary_op <- function(tensor) .Call(C_ggml_get_unary_op, tensor)
ggml_neg <- function(ctx, a) .Call(C_ggml_neg, ctx, a)
ggml_tanh <- function(ctx, a) .Call(C_ggml_tanh, ctx, a)
ggml_relu <- function(ctx, a) .Call(C_ggml_relu, ctx, a)
ggml_sigmoid <- function(ctx, a) .Call(C_ggml_sigmoid, ctx, a)
ggml_gelu <- function(ctx, a) .Call(C_ggml_gelu, ctx, a)
ggml_gelu_erf <- function(ctx, a) .Call(C_ggml_gelu_erf, ctx, a)
ggml_silu <- function(ctx, a) .Call(C_ggml_silu, ctx, a)
ggml_exp <- function(ctx, a) .Call(C_ggml_exp, ctx, a)

ggml_norm <- function(ctx, a, eps = 1e-5) .Call(C_ggml_norm, ctx, a, eps)
ggml_rms_norm <- function(ctx, a, eps = 1e-5) .Call(C_ggml_rms_norm, ctx, a, eps)
ggml_rms_norm_back <- function(ctx, a, b, eps = 1e-5) .Call(C_ggml_rms_norm_back, ctx, a, b, eps)

ggml_get_rows <- function(ctx, a, b) .Call(C_ggml_get_rows, ctx, a, b)
ggml_get_rows_back <- function(ctx, a, b, c) .Call(C_ggml_get_rows_back, ctx, a, b, c)
ggml_soft_max_ext_back <- function(ctx, a, b, scale = 1, max_bias = 0) {
  .Call(C_ggml_soft_max_ext_back, ctx, a, b, scale, max_bias)
}
ggml_cross_entropy_loss <- function(ctx, a, b) .Call(C_ggml_cross_entropy_loss, ctx, a, b)
ggml_cross_entropy_loss_back <- function(ctx, a, b, c) .Call(C_ggml_cross_entropy_loss_back, ctx, a, b, c)
ggml_argmax <- function(ctx, a) .Call(C_ggml_argmax, ctx, a)

ggml_opt_step_adamw <- function(ctx, a, grad, m, v, adamw_params) {
  .Call(C_ggml_opt_step_adamw, ctx, a, grad, m, v, adamw_params)
}
ggml_opt_step_sgd <- function(ctx, a, grad, sgd_params) .Call(C_ggml_opt_step_sgd, ctx, a, grad, sgd_params)

# Op constructors (lazy: each records a node in ctx; src/glue_ops.c).
# Shapes, strides and offsets follow C: ne0 varies fastest, strides and
# offsets are in bytes.

# copies and layout
ggml_dup <- function(ctx, a) .Call(C_ggml_dup, ctx, a)
ggml_cpy <- function(ctx, a, b) .Call(C_ggml_cpy, ctx, a, b)
ggml_cont <- function(ctx, a) .Call(C_ggml_cont, ctx, a)
ggml_reshape <- function(ctx, a, b) .Call(C_ggml_reshape, ctx, a, b)
ggml_reshape_1d <- function(ctx, a, ne0) .Call(C_ggml_reshape_nd, ctx, a, list(ne0))
ggml_reshape_2d <- function(ctx, a, ne0, ne1) .Call(C_ggml_reshape_nd, ctx, a, list(ne0, ne1))
ggml_reshape_3d <- function(ctx, a, ne0, ne1, ne2) {
  .Call(C_ggml_reshape_nd, ctx, a, list(ne0, ne1, ne2))
}
ggml_reshape_4d <- function(ctx, a, ne0, ne1, ne2, ne3) {
  .Call(C_ggml_reshape_nd, ctx, a, list(ne0, ne1, ne2, ne3))
}
ggml_view_1d <- function(ctx, a, ne0, offset) {
  .Call(C_ggml_view_nd, ctx, a, list(ne0), list(), offset)
}
ggml_view_2d <- function(ctx, a, ne0, ne1, nb1, offset) {
  .Call(C_ggml_view_nd, ctx, a, list(ne0, ne1), list(nb1), offset)
}
ggml_view_3d <- function(ctx, a, ne0, ne1, ne2, nb1, nb2, offset) {
  .Call(C_ggml_view_nd, ctx, a, list(ne0, ne1, ne2), list(nb1, nb2), offset)
}
ggml_view_4d <- function(ctx, a, ne0, ne1, ne2, ne3, nb1, nb2, nb3, offset) {
  .Call(C_ggml_view_nd, ctx, a, list(ne0, ne1, ne2, ne3), list(nb1, nb2, nb3), offset)
}
ggml_permute <- function(ctx, a, axis0, axis1, axis2, axis3) {
  .Call(C_ggml_permute, ctx, a, axis0, axis1, axis2, axis3)
}
ggml_transpose <- function(ctx, a) .Call(C_ggml_transpose, ctx, a)

# element-wise (b broadcasts over a)
ggml_add <- function(ctx, a, b) .Call(C_ggml_add, ctx, a, b)
ggml_sub <- function(ctx, a, b) .Call(C_ggml_sub, ctx, a, b)
ggml_mul <- function(ctx, a, b) .Call(C_ggml_mul, ctx, a, b)
ggml_div <- function(ctx, a, b) .Call(C_ggml_div, ctx, a, b)
ggml_add_inplace <- function(ctx, a, b) .Call(C_ggml_add_inplace, ctx, a, b)
ggml_scale <- function(ctx, a, s) .Call(C_ggml_scale, ctx, a, s)
ggml_sqr <- function(ctx, a) .Call(C_ggml_sqr, ctx, a)
ggml_sqrt <- function(ctx, a) .Call(C_ggml_sqrt, ctx, a)
ggml_log <- function(ctx, a) .Call(C_ggml_log, ctx, a)

# reductions and broadcasting
ggml_sum <- function(ctx, a) .Call(C_ggml_sum, ctx, a)
ggml_sum_rows <- function(ctx, a) .Call(C_ggml_sum_rows, ctx, a)
ggml_mean <- function(ctx, a) .Call(C_ggml_mean, ctx, a)
ggml_repeat <- function(ctx, a, b) .Call(C_ggml_repeat, ctx, a, b)
ggml_repeat_back <- function(ctx, a, b) .Call(C_ggml_repeat_back, ctx, a, b)
ggml_acc <- function(ctx, a, b, nb1, nb2, nb3, offset) {
  .Call(C_ggml_acc, ctx, a, b, nb1, nb2, nb3, offset)
}

# matrix product and softmax
ggml_mul_mat <- function(ctx, a, b) .Call(C_ggml_mul_mat, ctx, a, b)
ggml_out_prod <- function(ctx, a, b) .Call(C_ggml_out_prod, ctx, a, b)
ggml_soft_max <- function(ctx, a) .Call(C_ggml_soft_max, ctx, a)
ggml_soft_max_ext <- function(ctx, a, mask = NULL, scale = 1, max_bias = 0) {
  .Call(C_ggml_soft_max_ext, ctx, a, mask, scale, max_bias)
}

# attention
ggml_flash_attn_ext <- function(ctx, q, k, v, mask = NULL, scale, max_bias = 0, logit_softcap = 0) {
  .Call(C_ggml_flash_attn_ext, ctx, q, k, v, mask, scale, max_bias, logit_softcap)
}
ggml_flash_attn_back <- function(ctx, q, k, v, mask, d, scale) {
  .Call(C_ggml_flash_attn_back, ctx, q, k, v, mask, d, scale)
}

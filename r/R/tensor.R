# Tensors: creation, facts, names, element access and fp16 conversion
# (src/glue_tensor.c).

ggml_new_tensor <- function(ctx, type = GGML_TYPE_F32, n_dims = length(ne), ne) {
  .Call(C_ggml_new_tensor, ctx, type, n_dims, ne)
}
ggml_new_tensor_1d <- function(ctx, type = GGML_TYPE_F32, ne0) {
  .Call(C_ggml_new_tensor, ctx, type, 1L, list(ne0))
}
ggml_new_tensor_2d <- function(ctx, type = GGML_TYPE_F32, ne0, ne1) {
  .Call(C_ggml_new_tensor, ctx, type, 2L, list(ne0, ne1))
}
ggml_new_tensor_3d <- function(ctx, type = GGML_TYPE_F32, ne0, ne1, ne2) {
  .Call(C_ggml_new_tensor, ctx, type, 3L, list(ne0, ne1, ne2))
}
ggml_new_tensor_4d <- function(ctx, type = GGML_TYPE_F32, ne0, ne1, ne2, ne3) {
  .Call(C_ggml_new_tensor, ctx, type, 4L, list(ne0, ne1, ne2, ne3))
}
ggml_new_f32 <- function(ctx, value) .Call(C_ggml_new_f32, ctx, value)
ggml_dup_tensor <- function(ctx, src) .Call(C_ggml_dup_tensor, ctx, src)
ggml_view_tensor <- function(ctx, src) .Call(C_ggml_view_tensor, ctx, src)

ggml_nelements <- function(tensor) .Call(C_ggml_nelements, tensor)
ggml_nrows <- function(tensor) .Call(C_ggml_nrows, tensor)
ggml_nbytes <- function(tensor) .Call(C_ggml_nbytes, tensor)
ggml_element_size <- function(tensor) .Call(C_ggml_element_size, tensor)
ggml_n_dims <- function(tensor) .Call(C_ggml_n_dims, tensor)
ggml_is_contiguous <- function(tensor) .Call(C_ggml_is_contiguous, tensor)
ggml_is_scalar <- function(tensor) .Call(C_ggml_is_scalar, tensor)
ggml_is_transposed <- function(tensor) .Call(C_ggml_is_transposed, tensor)
ggml_is_permuted <- function(tensor) .Call(C_ggml_is_permuted, tensor)
ggml_are_same_shape <- function(a, b) .Call(C_ggml_are_same_shape, a, b)
ggml_can_repeat <- function(a, b) .Call(C_ggml_can_repeat, a, b)
ggml_tensor_shape <- function(tensor) .Call(C_ggml_tensor_shape, tensor)
ggml_tensor_type <- function(tensor) .Call(C_ggml_tensor_type, tensor)
ggml_tensor_op <- function(tensor) .Call(C_ggml_tensor_op, tensor)

ggml_type_size <- function(type) .Call(C_ggml_type_size, type)
ggml_type_name <- function(type) .Call(C_ggml_type_name, type)
ggml_op_name <- function(op) .Call(C_ggml_op_name, op)
ggml_unary_op_name <- function(op) .Call(C_ggml_unary_op_name, op)
ggml_get_unary_op <- function(tensor) .Call(C_ggml_get_unary_op, tensor)

ggml_set_name <- function(tensor, name) invisible(.Call(C_ggml_set_name, tensor, name))
ggml_get_name <- function(tensor) .Call(C_ggml_get_name, tensor)
# C's printf-style ggml_format_name, with R's sprintf formats.
ggml_format_name <- function(tensor, fmt, ...) ggml_set_name(tensor, sprintf(fmt, ...))

ggml_set_f32 <- function(tensor, values) invisible(.Call(C_ggml_set_f32, tensor, values))
ggml_get_f32 <- function(tensor) .Call(C_ggml_get_f32, tensor)
ggml_set_zero <- function(tensor) invisible(.Call(C_ggml_set_zero, tensor))
ggml_get_f32_1d <- function(tensor, i) .Call(C_ggml_get_f32_1d, tensor, i)
ggml_set_f32_1d <- function(tensor, i, value) invisible(.Call(C_ggml_set_f32_1d, tensor, i, value))
ggml_get_f32_nd <- function(tensor, i0, i1 = 0, i2 = 0, i3 = 0) .Call(C_ggml_get_f32_nd, tensor, i0, i1, i2, i3)
ggml_set_f32_nd <- function(tensor, i0, i1 = 0, i2 = 0, i3 = 0, value) {
  invisible(.Call(C_ggml_set_f32_nd, tensor, i0, i1, i2, i3, value))
}

ggml_fp32_to_fp16 <- function(x) .Call(C_ggml_fp32_to_fp16, x)
ggml_fp16_to_fp32 <- function(x) .Call(C_ggml_fp16_to_fp32, x)

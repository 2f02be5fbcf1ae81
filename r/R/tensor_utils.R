# CRAN ggmlR's tensor utilities: strides and layout facts, op parameters,
# whole-tensor copies and fills, I32 element access, and counting a
# context's tensors (src/glue_runtime.c, and the element access of tensor.R).

ggml_tensor_nb <- function(tensor) .Call(C_ggml_tensor_nb, tensor)

ggml_is_contiguous_0 <- function(tensor) .Call(C_ggml_tensor_layout_is, tensor, "contiguous_0")
ggml_is_contiguous_1 <- function(tensor) .Call(C_ggml_tensor_layout_is, tensor, "contiguous_1")
ggml_is_contiguous_2 <- function(tensor) .Call(C_ggml_tensor_layout_is, tensor, "contiguous_2")
ggml_is_contiguously_allocated <- function(tensor) .Call(C_ggml_tensor_layout_is, tensor, "contiguously_allocated")
ggml_is_contiguous_channels <- function(tensor) .Call(C_ggml_tensor_layout_is, tensor, "contiguous_channels")
ggml_is_contiguous_rows <- function(tensor) .Call(C_ggml_tensor_layout_is, tensor, "contiguous_rows")
ggml_are_same_stride <- function(a, b) .Call(C_ggml_are_same_stride, a, b)
# The same type, shape and strides: one's bytes can stand for the other's.
ggml_are_same_layout <- function(a, b) {
  ggml_tensor_type(a) == ggml_tensor_type(b) && ggml_are_same_shape(a, b) && ggml_are_same_stride(a, b)
}

ggml_get_op_params <- function(tensor) .Call(C_ggml_get_op_params, tensor)
ggml_set_op_params <- function(tensor, params) invisible(.Call(C_ggml_set_op_params, tensor, params))
ggml_get_op_params_i32 <- function(tensor, index) .Call(C_ggml_get_op_params_i32, tensor, index)
ggml_set_op_params_i32 <- function(tensor, index, value) invisible(.Call(C_ggml_set_op_params_i32, tensor, index, value))
ggml_get_op_params_f32 <- function(tensor, index) .Call(C_ggml_get_op_params_f32, tensor, index)
ggml_set_op_params_f32 <- function(tensor, index, value) invisible(.Call(C_ggml_set_op_params_f32, tensor, index, value))

# The number of tensors in ctx (graphs and other objects not counted).
ggml_tensor_num <- function(ctx) {
  n <- 0L
  t <- ggml_get_first_tensor(ctx)
  while (!is.null(t)) {
    n <- n + 1L
    t <- ggml_get_next_tensor(ctx, t)
  }
  n
}

# dst's data becomes a copy of src's (same type and shape, both with data).
ggml_tensor_copy <- function(dst, src) {
  if (ggml_tensor_type(dst) != ggml_tensor_type(src) || !ggml_are_same_shape(dst, src)) {
    stop("'dst' and 'src' must have the same type and shape", call. = FALSE)
  }
  invisible(ggml_backend_tensor_set(dst, ggml_backend_tensor_get(src)))
}

# Every element of tensor set to value.
ggml_tensor_set_f32_scalar <- function(tensor, value) {
  if (!is.numeric(value) || length(value) != 1) stop("'value' must be a single number", call. = FALSE)
  invisible(ggml_backend_tensor_set_data(tensor, rep(value, ggml_nelements(tensor))))
}

ggml_backend_tensor_get_f32_first <- function(tensor) ggml_backend_tensor_get_data(tensor, 0, 1)

# ---- I32 tensors: elements by index (ggml_set_i32 and friends: tensor_i32.R) ----

ggml_get_i32_nd <- function(tensor, i0, i1 = 0, i2 = 0, i3 = 0) {
  i32_tensor(tensor, "ggml_get_i32_nd")
  as.integer(ggml_get_f32_nd(tensor, i0, i1, i2, i3))
}
ggml_set_i32_nd <- function(tensor, i0, i1 = 0, i2 = 0, i3 = 0, value) {
  i32_tensor(tensor, "ggml_set_i32_nd")
  invisible(ggml_set_f32_nd(tensor, i0, i1, i2, i3, value))
}

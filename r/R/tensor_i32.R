# Integer data of I32 tensors (CRAN ggmlR's names). The values travel through
# the type-generic element access of ggml_set_f32 / ggml_get_f32, which is
# exact for I32 and refuses NA, fractions and values outside 32 bits; these
# add the check that the tensor really is I32 and give integers back.

i32_tensor <- function(tensor, fn) {
  if (!inherits(tensor, "ggml_tensor")) stop(fn, ": 'tensor' must be a ggml_tensor", call. = FALSE)
  if (ggml_tensor_type(tensor) != GGML_TYPE_I32)
    stop(fn, ": the tensor has type ", ggml_type_name(ggml_tensor_type(tensor)), ", not i32", call. = FALSE)
  tensor
}

ggml_set_i32 <- function(tensor, data) {
  i32_tensor(tensor, "ggml_set_i32")
  if (!is.numeric(data) && !is.logical(data)) stop("ggml_set_i32: 'data' must be numbers", call. = FALSE)
  ggml_set_f32(tensor, as.double(data))
}

ggml_get_i32 <- function(tensor) as.integer(ggml_get_f32(i32_tensor(tensor, "ggml_get_i32")))

ggml_new_i32 <- function(ctx, value) {
  if (length(value) != 1) stop("ggml_new_i32: 'value' must be one number", call. = FALSE)
  scalar <- ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1)
  ggml_set_i32(scalar, value)
  scalar
}

# R arrays in and out of tensors in one call. An array with dim c(ne0, ne1, ...)
# has the element order of a contiguous tensor of that shape.

.array_dim <- function(x) {
  d <- if (is.null(dim(x))) length(x) else dim(x)
  if (length(d) > 4) stop("an array of at most 4 dimensions is needed (got ", length(d), ")", call. = FALSE)
  d
}

ggml_new_tensor_from_array <- function(ctx, x, type = NULL) {
  if (!is.numeric(x) && !is.logical(x) || is.factor(x)) {
    stop("'x' must be a numeric (double or integer) vector or array", call. = FALSE)
  }
  if (is.null(type)) type <- if (is.integer(x) || is.logical(x)) GGML_TYPE_I32 else GGML_TYPE_F32
  d <- .array_dim(x)
  t <- ggml_new_tensor(ctx, type, length(d), d)
  ggml_set_array(t, x)
  t
}

ggml_set_array <- function(tensor, x) {
  shape <- ggml_tensor_shape(tensor)
  d <- .array_dim(x)
  if (!identical(as.numeric(c(d, rep(1, 4 - length(d)))), as.numeric(shape))) {
    stop(sprintf("ggml_set_array: an array of dim (%s) does not fit tensor '%s' of shape [%s]",
                 paste(d, collapse = ", "), ggml_get_name(tensor), paste(shape, collapse = ", ")), call. = FALSE)
  }
  if (length(x) > 0) ggml_backend_tensor_set_data(tensor, if (is.logical(x)) as.integer(x) else as.vector(x))
  invisible(tensor)
}

ggml_get_array <- function(tensor) {
  shape <- ggml_tensor_shape(tensor)
  v <- ggml_backend_tensor_get_data(tensor)
  if (ggml_tensor_type(tensor) == GGML_TYPE_I32) v <- as.integer(v)
  n <- ggml_n_dims(tensor)
  if (n > 1) dim(v) <- shape[seq_len(n)]  # a 1-d tensor comes back as a plain vector
  v
}

# CRAN ggmlR's direct element-wise ops: the result of op(a, b) as an R
# vector, computed in a graph of a temporary context (a and b unchanged).

.cpu_direct <- function(op, a, b) {
  if (!inherits(a, "ggml_tensor") || !inherits(b, "ggml_tensor")) stop("'a' and 'b' must be tensors", call. = FALSE)
  if (!identical(ggml_tensor_shape(a), ggml_tensor_shape(b))) stop("'a' and 'b' must have the same shape", call. = FALSE)
  ctx <- ggml_init(4 * ggml_nelements(a) + 4 * ggml_tensor_overhead() + ggml_graph_overhead() + 1024)
  on.exit(ggml_free(ctx))
  out <- op(ctx, a, b)
  ggml_graph_compute(ctx, ggml_build_forward_expand(ctx, out))
  ggml_get_f32(out)
}

ggml_cpu_add <- function(a, b) .cpu_direct(ggml_add, a, b)
ggml_cpu_mul <- function(a, b) .cpu_direct(ggml_mul, a, b)

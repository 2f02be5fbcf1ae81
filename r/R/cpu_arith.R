# CRAN ggmlR's immediate element-wise helpers: the values of two F32 tensors
# with as many elements combined now by the library's op (in float, as a
# graph would), returned as an R vector; no graph of the caller's is touched.

cpu_elementwise <- function(a, b, op, fn) {
  for (t in list(a, b)) {
    if (!inherits(t, "ggml_tensor")) stop(fn, ": 'a' and 'b' must be ggml_tensor handles", call. = FALSE)
    if (ggml_tensor_type(t) != GGML_TYPE_F32) stop(fn, ": both tensors must be F32", call. = FALSE)
  }
  n <- ggml_nelements(a)
  if (ggml_nelements(b) != n) stop(fn, ": the tensors must have the same number of elements", call. = FALSE)
  if (n == 0) return(numeric(0))
  ctx <- ggml_init(8 * n + 1024^2)
  on.exit(ggml_free(ctx))
  x <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n)
  y <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n)
  ggml_set_f32(x, ggml_get_f32(a))
  ggml_set_f32(y, ggml_get_f32(b))
  result <- op(ctx, x, y)
  ggml_graph_compute(ctx, ggml_build_forward_expand(ctx, result))
  ggml_get_f32(result)
}

ggml_cpu_add <- function(a, b) cpu_elementwise(a, b, ggml_add, "ggml_cpu_add")
ggml_cpu_mul <- function(a, b) cpu_elementwise(a, b, ggml_mul, "ggml_cpu_mul")

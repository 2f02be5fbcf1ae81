# Helpers shared by the test files (testthat loads helper-*.R first).

# A tensor holding x (an R vector or array; dim gives ne0, ne1, ...).
tensor_of <- function(ctx, x, type = GGML_TYPE_F32) {
  d <- if (is.null(dim(x))) length(x) else dim(x)
  t <- ggml_new_tensor(ctx, type, length(d), d)
  if (length(x) > 0) ggml_set_f32(t, as.numeric(x))
  t
}

# Compute t's graph in ctx and return its values.
compute <- function(ctx, t) {
  ggml_graph_compute(ctx, ggml_build_forward_expand(ctx, t))
  ggml_get_f32(t)
}

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

# A 1-d tensor of `type` and n elements in CPU backend memory; its context
# and backend are freed when the calling test ends.
backend_tensor_1d <- function(type, n, env = parent.frame()) {
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  withr::defer(ggml_free(ctx), envir = env)
  t <- ggml_new_tensor_1d(ctx, type, n)
  be <- ggml_backend_cpu_init()
  withr::defer(ggml_backend_free(be), envir = env)
  ggml_backend_alloc_ctx_tensors(ctx, be)
  t
}

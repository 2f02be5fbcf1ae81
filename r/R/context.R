# Contexts (memory arenas), memory facts, errors and threads.
# The checks and conversions live in the C glue (src/glue_context.c).

ggml_init <- function(mem_size = 16 * 1024^2, no_alloc = FALSE) {
  .Call(C_ggml_init, mem_size, no_alloc)
}

# CRAN ggmlR's: a context for the tensors of the given shapes (each a vector of
# up to 4 sizes) of `type`, with their headers, plus extra_mb MiB.
ggml_init_auto <- function(..., extra_mb = 10, type = GGML_TYPE_F32, no_alloc = FALSE) {
  shapes <- list(...)
  if (!is.numeric(extra_mb) || length(extra_mb) != 1 || is.na(extra_mb) || extra_mb < 0) {
    stop("'extra_mb' must be a number >= 0", call. = FALSE)
  }
  bytes <- 0
  for (s in shapes) {
    if (!is.numeric(s) || length(s) < 1 || length(s) > 4 || anyNA(s) || any(s < 0)) {
      stop("each shape must be 1 to 4 sizes >= 0", call. = FALSE)
    }
    bytes <- bytes + ggml_type_size(type) * prod(s) / ggml_blck_size(type) + ggml_tensor_overhead()
  }
  ggml_init(ceiling(bytes + extra_mb * 1024^2), no_alloc = no_alloc)
}

ggml_free <- function(ctx) invisible(.Call(C_ggml_free, ctx))
# Forget every object of ctx and reuse its memory; the handles made before
# are refused from then on.
ggml_reset <- function(ctx) invisible(.Call(C_ggml_reset, ctx))

# CRAN ggmlR's: evaluates expr with `ctx` bound to a new context of mem_size
# bytes, freed on the way out (a tensor of it returned is then unusable).
ggml_with_temp_ctx <- function(mem_size, expr) {
  ctx <- ggml_init(mem_size)
  on.exit(ggml_free(ctx), add = TRUE)
  env <- new.env(parent = parent.frame())
  env$ctx <- ctx
  eval(substitute(expr), env)
}

ggml_set_no_alloc <- function(ctx, no_alloc) invisible(.Call(C_ggml_set_no_alloc, ctx, no_alloc))
ggml_get_no_alloc <- function(ctx) .Call(C_ggml_get_no_alloc, ctx)
ggml_used_mem <- function(ctx) .Call(C_ggml_used_mem, ctx)
ggml_get_mem_size <- function(ctx) .Call(C_ggml_get_mem_size, ctx)

ggml_tensor_overhead <- function() .Call(C_ggml_tensor_overhead)
ggml_graph_overhead <- function() .Call(C_ggml_graph_overhead)
ggml_graph_overhead_custom <- function(size, grads) .Call(C_ggml_graph_overhead_custom, size, grads)

ggml_get_first_tensor <- function(ctx) .Call(C_ggml_get_first_tensor, ctx)
ggml_get_next_tensor <- function(ctx, tensor) .Call(C_ggml_get_next_tensor, ctx, tensor)
ggml_get_tensor <- function(ctx, name) .Call(C_ggml_get_tensor, ctx, name)

ggml_last_error <- function() .Call(C_ggml_last_error)
ggml_clear_error <- function() invisible(.Call(C_ggml_clear_error))
ggml_status_to_string <- function(status) .Call(C_ggml_status_to_string, status)

ggml_set_n_threads <- function(n) {
  old <- .Call(C_ggml_get_n_threads)
  .Call(C_ggml_set_n_threads, n)
  invisible(old)
}
ggml_get_n_threads <- function() .Call(C_ggml_get_n_threads)
ggml_cpu_n_cores <- function() .Call(C_ggml_cpu_n_cores)
ggml_cpu_simd_name <- function() .Call(C_ggml_cpu_simd_name)

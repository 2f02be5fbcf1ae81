# The graph allocator (R/galloc.R): placements, and no tensor left pointing
# into a buffer that is gone.

# y = (a + a)^2 in a no_alloc context, a an input and y an output.
square_of_double <- function(ctx, n = 4) {
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n)
  ggml_set_input(a)
  y <- ggml_sqr(ctx, ggml_add(ctx, a, a))
  ggml_set_output(y)
  list(a = a, y = y, graph = ggml_build_forward_expand(ctx, y))
}

test_that("a placed graph computes; the next placement takes the old one back", {
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  on.exit(ggml_free(ctx))
  s <- square_of_double(ctx)
  galloc <- ggml_gallocr_new()
  expect_true(ggml_gallocr_reserve(galloc, s$graph))
  expect_gte(ggml_gallocr_get_buffer_size(galloc), 2 * 16)  # at least a and y
  expect_error(ggml_backend_tensor_get_data(s$y))  # reserve places nothing
  expect_true(ggml_gallocr_alloc_graph(galloc, s$graph))
  be <- ggml_backend_cpu_init()
  ggml_backend_tensor_set_data(s$a, c(1, -2, 0.5, 3))
  expect_identical(ggml_backend_graph_compute(be, s$graph), 0L)
  expect_equal(ggml_backend_tensor_get_data(s$y), c(4, 16, 1, 36))
  big <- ggml_init(1024^2, no_alloc = TRUE)
  t <- square_of_double(big, 4096)  # a bigger buffer: the old one is freed
  expect_true(ggml_gallocr_alloc_graph(galloc, t$graph))
  expect_error(ggml_backend_tensor_get_data(s$y), "data|memory")
  ggml_backend_tensor_set_data(t$a, rep(1, 4096))
  ggml_backend_graph_compute(be, t$graph)
  expect_equal(ggml_backend_tensor_get_data(t$y), rep(4, 4096))
  ggml_gallocr_free(galloc)
  expect_error(ggml_backend_tensor_get_data(t$y), "data|memory")
  expect_silent(ggml_gallocr_free(galloc))
  ggml_backend_free(be)
  ggml_free(big)
})

test_that("tensors with memory are left alone", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3)
  ggml_set_f32(a, c(1, 2, 3))
  y <- ggml_add(ctx, a, a)
  g <- ggml_build_forward_expand(ctx, y)
  galloc <- ggml_gallocr_new()
  expect_true(ggml_gallocr_alloc_graph(galloc, g))
  ggml_gallocr_free(galloc)
  ggml_graph_compute(ctx, g)
  expect_identical(ggml_get_f32(y), c(2, 4, 6))
})

test_that("a freed context's memory stays while the allocator uses it", {
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  s <- square_of_double(ctx)
  galloc <- ggml_gallocr_new()
  ggml_gallocr_alloc_graph(galloc, s$graph)
  expect_error(ggml_reset(ctx), "graph allocator")
  ggml_free(ctx)
  gc()
  ggml_gallocr_free(galloc)  # takes the data back from the (kept) tensors, then lets the memory go
  expect_error(ggml_backend_tensor_get_data(s$y), "freed")
  galloc2 <- ggml_gallocr_new()
  ctx2 <- ggml_init(1024^2, no_alloc = TRUE)
  s2 <- square_of_double(ctx2)
  ggml_gallocr_alloc_graph(galloc2, s2$graph)
  rm(galloc2)
  gc()  # the collected allocator takes its placement back too
  expect_error(ggml_backend_tensor_get_data(s2$y), "data|memory")
  ggml_free(ctx2)
})

test_that("hostile arguments are R errors", {
  galloc <- ggml_gallocr_new()
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  s <- square_of_double(ctx)
  expect_error(ggml_gallocr_get_buffer_size(galloc, 1), "must be 0")
  expect_error(ggml_gallocr_alloc_graph(galloc, s$y), "graph")
  expect_error(ggml_gallocr_alloc_graph(ctx, s$graph), "ggml_gallocr")
  expect_error(ggml_gallocr_free(ctx), "ggml_gallocr")
  ggml_gallocr_free(galloc)
  expect_error(ggml_gallocr_alloc_graph(galloc, s$graph), "freed")
  ggml_free(ctx)
  expect_error(ggml_gallocr_reserve(ggml_gallocr_new(), s$graph), "freed")
})

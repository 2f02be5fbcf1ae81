# Handles are memory safe: a freed context, backend or buffer is an R error
# when used, freeing twice is harmless, and the garbage collector frees what
# was forgotten -- without ever taking the session down.

test_that("using a tensor, graph or context after ggml_free is an error", {
  ctx <- ggml_init(1024^2)
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4)
  ggml_set_f32(a, 1:4)
  g <- ggml_build_forward_expand(ctx, ggml_sqr(ctx, a))
  ggml_free(ctx)

  expect_error(ggml_get_f32(a), "freed")
  expect_error(ggml_set_f32(a, 1), "freed")
  expect_error(ggml_nelements(a), "freed")
  expect_error(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4), "freed")
  expect_error(ggml_add(ctx, a, a), "freed")
  expect_error(ggml_graph_compute(ctx, g), "freed")
  expect_error(ggml_graph_n_nodes(g), "freed")
  expect_error(ggml_used_mem(ctx), "freed")
  # printing never fails
  expect_output(print(a), "freed")
  expect_output(print(ctx), "freed")
  expect_output(print(g), "freed")
})

test_that("freeing twice is harmless", {
  ctx <- ggml_init(1024^2)
  expect_silent(ggml_free(ctx))
  expect_silent(ggml_free(ctx))

  be <- ggml_backend_cpu_init()
  expect_silent(ggml_backend_free(be))
  expect_silent(ggml_backend_free(be))

  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8)
  be <- ggml_backend_cpu_init()
  buf <- ggml_backend_alloc_ctx_tensors(ctx, be)
  expect_silent(ggml_backend_buffer_free(buf))
  expect_silent(ggml_backend_buffer_free(buf))
  ggml_free(ctx)
  expect_silent(ggml_backend_buffer_free(buf))  # its context is gone too
  ggml_backend_free(be)
})

test_that("the wrong kind of handle is an error, not a crash", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4)
  g <- ggml_new_graph(ctx)
  be <- ggml_backend_cpu_init()
  on.exit(ggml_backend_free(be), add = TRUE)

  expect_error(ggml_sqr(ctx, g), "must be a ggml tensor")
  expect_error(ggml_sqr(a, a), "must be a ggml context")
  expect_error(ggml_graph_compute(ctx, a), "must be a ggml graph")
  expect_error(ggml_backend_graph_compute(ctx, g), "must be a ggml backend")
  expect_error(ggml_free(a), "must be a ggml context")
  expect_error(ggml_backend_free(ctx), "must be a ggml backend")
  expect_error(ggml_backend_buffer_free(a), "must be a ggml backend buffer")
})

test_that("a handle restored from disk is refused", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4)
  f <- tempfile(fileext = ".rds")
  on.exit(unlink(f), add = TRUE)
  saveRDS(list(ctx = ctx, a = a), f)
  back <- readRDS(f)
  expect_error(ggml_get_f32(back$a), "not a usable")
  expect_error(ggml_used_mem(back$ctx), "not a usable")
  expect_silent(ggml_free(back$ctx))
})

test_that("the garbage collector frees forgotten contexts and backends", {
  for (i in 1:20) {
    ctx <- ggml_init(4 * 1024^2)
    a <- ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 8)
    ggml_set_f32(a, runif(64))
    g <- ggml_build_forward_expand(ctx, ggml_sum(ctx, ggml_sqr(ctx, a)))
    ggml_graph_compute(ctx, g)
    be <- ggml_backend_cpu_init()
    if (i %% 2 == 0) ggml_free(ctx)  # some freed by hand, some left to the GC
  }
  rm(ctx, a, g, be)
  for (i in 1:3) gc()
  expect_true(TRUE)  # reaching here without a crash is the test
})

test_that("a tensor keeps its context alive", {
  make <- function() {
    ctx <- ggml_init(1024^2)
    a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3)
    ggml_set_f32(a, c(1.5, 2.5, 3.5))
    a  # the context object is no longer referenced by name
  }
  a <- make()
  for (i in 1:3) gc()
  expect_equal(ggml_get_f32(a), c(1.5, 2.5, 3.5))
})

test_that("a buffer stays alive as long as its context, even if its handle is dropped", {
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5)
  be <- ggml_backend_cpu_init()
  ggml_backend_alloc_ctx_tensors(ctx, be)  # handle not kept
  ggml_backend_free(be)                    # buffers do not need their backend
  for (i in 1:3) gc()
  ggml_backend_tensor_set_data(a, c(1, 2, 3, 4, 5))
  for (i in 1:3) gc()
  expect_equal(ggml_backend_tensor_get_data(a), c(1, 2, 3, 4, 5))
})

test_that("a freed buffer leaves its tensors without data, cleanly", {
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4)
  v <- ggml_view_1d(ctx, a, 2, 4)
  be <- ggml_backend_cpu_init()
  on.exit(ggml_backend_free(be), add = TRUE)
  buf <- ggml_backend_alloc_ctx_tensors(ctx, be)
  expect_equal(ggml_backend_buffer_get_size(buf), 64)  # one tensor, 64-byte aligned
  ggml_backend_tensor_set_data(a, c(10, 20, 30, 40))
  expect_equal(ggml_get_f32(v), c(20, 30))

  ggml_backend_buffer_free(buf)
  expect_error(ggml_backend_buffer_get_size(buf), "freed")
  expect_error(ggml_backend_tensor_get_data(a), "no memory")
  expect_error(ggml_get_f32(v), "no data")
  g <- ggml_build_forward_expand(ctx, ggml_sqr(ctx, a))
  expect_error(ggml_backend_graph_compute(be, g), "no")

  # the tensors can be allocated again
  buf2 <- ggml_backend_alloc_ctx_tensors(ctx, be)
  ggml_backend_tensor_set_data(a, c(1, 2, 3, 4))
  ggml_backend_graph_compute(be, g)
  expect_equal(ggml_backend_tensor_get_data(ggml_graph_node(g, -1)), c(1, 4, 9, 16))
})

test_that("a freed backend is an error", {
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  on.exit(ggml_free(ctx))
  ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4)
  be <- ggml_backend_cpu_init()
  ggml_backend_free(be)
  expect_error(ggml_backend_alloc_ctx_tensors(ctx, be), "backend has been freed")
  expect_error(ggml_backend_cpu_set_n_threads(be, 2L), "backend has been freed")
  expect_error(ggml_backend_graph_compute(be, ggml_new_graph(ctx)), "backend has been freed")
  expect_output(print(be), "freed")
})

test_that("an op across contexts keeps the other context's memory alive", {
  weights <- ggml_init(1024^2)
  w <- ggml_new_tensor_1d(weights, GGML_TYPE_F32, 3)
  ggml_set_f32(w, c(1, 2, 3))

  work <- ggml_init(1024^2)
  on.exit(ggml_free(work))
  y <- ggml_scale(work, w, 2)            # a node in `work` reading `w`
  g <- ggml_build_forward_expand(work, y)

  ggml_free(weights)                     # `work` still points into it
  expect_error(ggml_get_f32(w), "freed") # the handle is closed ...
  for (i in 1:3) gc()
  ggml_graph_compute(work, g)            # ... but the memory is still there
  expect_equal(ggml_get_f32(y), c(2, 4, 6))
})

test_that("two contexts cannot point into each other", {
  c1 <- ggml_init(1024^2)
  c2 <- ggml_init(1024^2)
  on.exit({ ggml_free(c1); ggml_free(c2) })
  a1 <- ggml_new_tensor_1d(c1, GGML_TYPE_F32, 2)
  a2 <- ggml_new_tensor_1d(c2, GGML_TYPE_F32, 2)
  ggml_add(c2, a2, a1)                   # c2 -> c1
  expect_error(ggml_add(c1, a1, a2), "point into each other")
  expect_s3_class(ggml_add(c1, a1, a1), "ggml_tensor")  # c1 still works
})

test_that("gradients are built in the graph's own context", {
  c1 <- ggml_init(4 * 1024^2)
  c2 <- ggml_init(1024^2)
  on.exit({ ggml_free(c1); ggml_free(c2) })
  x <- ggml_new_tensor_1d(c1, GGML_TYPE_F32, 2)
  ggml_set_param(x)
  loss <- ggml_sum(c1, ggml_sqr(c1, x))
  ggml_set_loss(loss)
  g <- ggml_build_forward_expand_grads(c1, loss)
  expect_error(ggml_build_backward_expand(c2, g), "context the graph was created in")
})

test_that("ggml_format_name names with sprintf formats and ggml_graph_get_tensor finds by name", {
  ctx <- ggml_init(1024^2)
  x <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3)
  y <- ggml_format_name(ggml_sqr(ctx, x), "layer_%d_%s", 2L, "sq")
  expect_equal(ggml_get_name(y), "layer_2_sq")
  g <- ggml_build_forward_expand(ctx, ggml_sum(ctx, y))
  found <- ggml_graph_get_tensor(g, "layer_2_sq")
  expect_equal(ggml_get_name(found), "layer_2_sq")
  expect_equal(ggml_tensor_op(found), ggml_tensor_op(y))
  expect_null(ggml_graph_get_tensor(g, "no such tensor"))
  expect_error(ggml_graph_get_tensor(g, NA_character_))
  ggml_free(ctx)
})

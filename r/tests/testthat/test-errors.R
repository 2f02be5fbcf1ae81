# Bad input is an R error with a clear message; the session and everything
# already built stay usable.

test_that("arguments of the wrong type are refused", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4)

  expect_error(ggml_init("big"), "'mem_size' must be a single number")
  expect_error(ggml_init(no_alloc = NA), "'no_alloc' must be TRUE or FALSE")
  expect_error(ggml_add(ctx, a, "b"), "'b' must be a ggml tensor, not a character vector")
  expect_error(ggml_add(ctx, list(), a), "'a' must be a ggml tensor, not a list")
  expect_error(ggml_scale(ctx, a, "2"), "'s' must be a single number")
  expect_error(ggml_scale(ctx, a, c(1, 2)), "'s' must be a single number")
  expect_error(ggml_scale(ctx, a, NA_real_), "'s' must not be NA")
  expect_error(ggml_set_name(a, 3), "'name' must be a single string")
  expect_error(ggml_set_f32(a, "x"), "'values' must be a numeric vector")
  expect_error(ggml_new_tensor_1d(ctx, "f32", 4), "'type' must be a single number")
  expect_error(ggml_new_tensor_1d(ctx, 4L, 4), "'type' must be a tensor type")  # 4: a removed type
  expect_error(ggml_set_n_threads(0), "between 1 and 256")
})

test_that("NULL where a tensor is required is refused; NULL masks are fine", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3)
  expect_error(ggml_sqr(ctx, NULL), "'a' is NULL")
  expect_error(ggml_mul_mat(ctx, a, NULL), "'b' is NULL")
  expect_error(ggml_flash_attn_ext(ctx, a, a, NULL, NULL, 1), "'v' is NULL")
  expect_s3_class(ggml_soft_max_ext(ctx, a, NULL, 1, 0), "ggml_tensor")
})

test_that("sizes must be whole, finite, non-negative numbers", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  expect_error(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, -1), "'ne0' must not be negative")
  expect_error(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, NA_real_), "'ne1' must not be NA")
  expect_error(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, NA_integer_), "'ne1' must not be NA")
  expect_error(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2.5), "'ne0' must be a whole number")
  expect_error(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, Inf), "'ne0' must be finite")
  expect_error(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, NaN), "'ne0' must not be NA or NaN")
  expect_error(ggml_new_tensor(ctx, GGML_TYPE_F32, 2, c(3, 4, 5)), "n_dims = 2")
  expect_error(ggml_new_tensor(ctx, GGML_TYPE_F32, 5, 1:5), "'n_dims' must be 1 to 4")
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8)
  expect_error(ggml_view_1d(ctx, a, 4, -4), "'offset' must not be negative")
  expect_error(ggml_get_f32_1d(a, -1), "'i' must not be negative")
  # too big for the arena: the library's own message
  expect_error(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1e9), "not enough space")
  expect_equal(ggml_tensor_shape(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2)), c(2, 1, 1, 1))
})

test_that("shape mismatches carry the library's message", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3)
  b <- ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 3)
  expect_error(ggml_add(ctx, a, b), "ggml_add: b must broadcast over a.*\\[4, 3, 1, 1\\].*\\[3, 3, 1, 1\\]")
  expect_error(ggml_mul_mat(ctx, a, b), "ggml_mul_mat: a->ne\\[0\\] must equal b->ne\\[0\\]")
  expect_error(ggml_reshape_2d(ctx, a, 5, 2), "does not hold the 12 elements")
  expect_error(ggml_view_2d(ctx, a, 4, 4, 16, 0), "runs past")
  expect_error(ggml_permute(ctx, a, 0, 0, 1, 2), "not a permutation")
  q <- ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 2, 1, 1)
  k <- ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 2, 1, 1)
  expect_error(ggml_flash_attn_ext(ctx, q, k, k, NULL, 1), "DK")
})

test_that("data of the wrong length or out of range is refused", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4)
  expect_error(ggml_set_f32(a, 1:3), "length 3, which does not match the tensor.s 4 elements")
  expect_error(ggml_set_f32(a, numeric(0)), "length 0")
  expect_error(ggml_backend_tensor_set_data(a, 1:5), "5 elements at offset 0 do not fit")
  expect_error(ggml_backend_tensor_set_data(a, 1:2, offset = 3), "2 elements at offset 3 do not fit")
  expect_error(ggml_backend_tensor_get_data(a, offset = 5), "do not fit")
  expect_error(ggml_backend_tensor_get_data(a, 1, n_elements = 4), "do not fit")
  expect_error(ggml_get_f32_1d(a, 4), "out of range")
  expect_error(ggml_backend_tensor_set(a, 1:4), "'data' must be a raw vector")
  expect_error(ggml_backend_tensor_set(a, raw(20)), "out of bounds")
  # partial writes land where asked
  ggml_set_f32(a, 0)
  ggml_backend_tensor_set_data(a, c(7, 8), offset = 1)
  expect_equal(ggml_get_f32(a), c(0, 7, 8, 0))
  expect_equal(ggml_backend_tensor_get_data(a, 2, 1), 8)
  # a non-contiguous view cannot be transferred as a block
  m <- ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 2)
  expect_error(ggml_backend_tensor_get_data(ggml_transpose(ctx, m)), "not contiguous")
})

test_that("tensors of a no_alloc context have no data until allocated", {
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4)
  expect_error(ggml_get_f32(a), "has no data")
  expect_error(ggml_set_f32(a, 1), "has no data")
  expect_error(ggml_backend_tensor_set_data(a, 1:4), "has no memory")
  expect_error(ggml_backend_tensor_get_data(a), "has no memory")
  g <- ggml_build_forward_expand(ctx, ggml_sqr(ctx, a))
  expect_error(ggml_graph_compute(ctx, g), "has no memory")
})

test_that("a non-scalar loss is refused", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4)
  expect_error(ggml_set_loss(a), "scalar F32")
  expect_error(ggml_set_loss(ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1)), "scalar F32")
  g <- ggml_build_forward_expand_grads(ctx, ggml_sum(ctx, a))
  expect_error(ggml_build_backward_expand(ctx, g), "no loss")
})

test_that("backward through ALiBi attention refuses, and the graph still works", {
  ctx <- ggml_init(32 * 1024^2)
  on.exit(ggml_free(ctx))
  DK <- 4L; N <- 2L; M <- 3L
  set.seed(5)
  q <- ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DK, N, 1, 1)
  k <- ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DK, M, 1, 1)
  v <- ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DK, M, 1, 1)
  mask <- ggml_new_tensor_2d(ctx, GGML_TYPE_F16, M, N)
  qd <- runif(DK * N); kd <- runif(DK * M); vd <- runif(DK * M)
  ggml_set_f32(q, qd); ggml_set_f32(k, kd); ggml_set_f32(v, vd); ggml_set_f32(mask, 0)
  ggml_set_param(q)
  out <- ggml_flash_attn_ext(ctx, q, k, v, mask, 0.5, max_bias = 8)
  loss <- ggml_sum(ctx, out)
  ggml_set_loss(loss)
  g <- ggml_build_forward_expand_grads(ctx, loss)
  n_before <- ggml_graph_n_nodes(g)

  expect_error(ggml_build_backward_expand(ctx, g), "max_bias > 0 \\(ALiBi\\) is not implemented")
  expect_match(ggml_last_error(), "ALiBi")
  expect_equal(ggml_graph_n_nodes(g), n_before)  # all or nothing
  expect_null(ggml_graph_get_grad(g, q))

  # the forward graph still computes, and gives the right answer: with one
  # head the ALiBi slope is 2^-8 and the mask is zero, so it is plain attention
  ggml_graph_compute(ctx, g)
  Q <- matrix(qd, DK); K <- matrix(kd, DK); V <- matrix(vd, DK)
  ref <- sapply(1:N, function(n) {
    s <- 0.5 * colSums(Q[, n] * K)
    p <- exp(s - max(s)); p <- p / sum(p)
    V %*% p
  })
  expect_equal(ggml_get_f32(out), as.numeric(ref), tolerance = 1e-5)
  expect_equal(ggml_get_f32(loss), sum(ref), tolerance = 1e-5)
})

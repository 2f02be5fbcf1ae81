# Ops against base R. An R array with dim = c(ne0, ne1, ...) has the element
# order of a contiguous tensor, so a ggml "row" (along ne0) is an R column.

test_that("mul_mat is crossprod, broadcast over heads", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(1)
  A <- matrix(rnorm(12), 4, 3)
  B <- matrix(rnorm(20), 4, 5)
  r <- ggml_mul_mat(ctx, tensor_of(ctx, A), tensor_of(ctx, B))
  expect_equal(ggml_tensor_shape(r), c(3, 5, 1, 1))
  expect_equal(compute(ctx, r), as.numeric(crossprod(A, B)), tolerance = 1e-6)

  # a has 2 heads, b has 4: b's head h uses a's head (h - 1) %/% 2 + 1
  A3 <- array(rnorm(4 * 3 * 2), c(4, 3, 2))
  B3 <- array(rnorm(4 * 5 * 4), c(4, 5, 4))
  r3 <- ggml_mul_mat(ctx, tensor_of(ctx, A3), tensor_of(ctx, B3))
  ref <- unlist(lapply(1:4, function(h) crossprod(A3[, , (h - 1) %/% 2 + 1], B3[, , h])))
  expect_equal(compute(ctx, r3), ref, tolerance = 1e-6)
})

test_that("out_prod is a %*% t(b)", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(11)
  A <- matrix(rnorm(15), 3, 5)  # [M = 3, K = 5]
  B <- matrix(rnorm(20), 4, 5)  # [N = 4, K = 5]
  r <- ggml_out_prod(ctx, tensor_of(ctx, A), tensor_of(ctx, B))
  expect_equal(ggml_tensor_shape(r), c(3, 4, 1, 1))
  expect_equal(compute(ctx, r), as.numeric(A %*% t(B)), tolerance = 1e-6)
  expect_error(ggml_out_prod(ctx, tensor_of(ctx, A), tensor_of(ctx, t(B))), "ne\\[1\\]")
})

test_that("element-wise ops broadcast b over a", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(2)
  A <- matrix(runif(12, 1, 2), 4, 3)
  b <- runif(4, 1, 2)
  ta <- tensor_of(ctx, A)
  tb <- tensor_of(ctx, matrix(b, 4, 1))
  expect_equal(compute(ctx, ggml_add(ctx, ta, tb)), as.numeric(A + b), tolerance = 1e-6)
  expect_equal(compute(ctx, ggml_sub(ctx, ta, tb)), as.numeric(A - b), tolerance = 1e-6)
  expect_equal(compute(ctx, ggml_mul(ctx, ta, tb)), as.numeric(A * b), tolerance = 1e-6)
  expect_equal(compute(ctx, ggml_div(ctx, ta, tb)), as.numeric(A / b), tolerance = 1e-6)
  row <- tensor_of(ctx, matrix(c(10, 20, 30), 1, 3))   # [1, 3]: one value per column
  expect_equal(compute(ctx, ggml_add(ctx, ta, row)), as.numeric(sweep(A, 2, c(10, 20, 30), "+")), tolerance = 1e-6)
  expect_equal(compute(ctx, ggml_sqr(ctx, ta)), as.numeric(A^2), tolerance = 1e-6)
  expect_equal(compute(ctx, ggml_sqrt(ctx, ta)), as.numeric(sqrt(A)), tolerance = 1e-6)
  expect_equal(compute(ctx, ggml_log(ctx, ta)), as.numeric(log(A)), tolerance = 1e-6)
  expect_equal(compute(ctx, ggml_scale(ctx, ta, -3)), as.numeric(-3 * A), tolerance = 1e-6)
})

test_that("reductions and repeats", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(3)
  A <- matrix(rnorm(15), 5, 3)
  ta <- tensor_of(ctx, A)
  expect_equal(compute(ctx, ggml_sum(ctx, ta)), sum(A), tolerance = 1e-6)
  expect_equal(compute(ctx, ggml_sum_rows(ctx, ta)), colSums(A), tolerance = 1e-6)
  expect_equal(compute(ctx, ggml_mean(ctx, ta)), colMeans(A), tolerance = 1e-6)
  small <- tensor_of(ctx, matrix(c(1, 2), 2, 1))
  shape <- ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3)
  expect_equal(compute(ctx, ggml_repeat(ctx, small, shape)), rep(c(1, 2), 6))
  back <- ggml_repeat_back(ctx, tensor_of(ctx, matrix(1:12, 4, 3)), small)
  expect_equal(compute(ctx, back), c(1 + 3 + 5 + 7 + 9 + 11, 2 + 4 + 6 + 8 + 10 + 12))
})

test_that("soft_max and soft_max_ext work along rows", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(4)
  X <- matrix(rnorm(15, sd = 3), 5, 3)
  softmax <- function(s) { e <- exp(s - max(s)); e / sum(e) }
  tx <- tensor_of(ctx, X)
  expect_equal(compute(ctx, ggml_soft_max(ctx, tx)), as.numeric(apply(X, 2, softmax)), tolerance = 1e-6)

  mask <- matrix(0, 5, 3)
  mask[4:5, 1] <- -Inf
  mask[1, 3] <- -Inf
  tm <- tensor_of(ctx, mask)
  ref <- apply(0.5 * X + mask, 2, softmax)
  expect_equal(compute(ctx, ggml_soft_max_ext(ctx, tx, tm, scale = 0.5)), as.numeric(ref), tolerance = 1e-6)
})

test_that("layout ops: transpose, permute, views, reshape, cpy, acc", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  A <- matrix(as.numeric(1:12), 4, 3)
  ta <- tensor_of(ctx, A)

  tt <- ggml_transpose(ctx, ta)
  expect_false(ggml_is_contiguous(tt))
  expect_equal(ggml_get_f32(tt), as.numeric(t(A)))       # reads honour strides
  expect_equal(compute(ctx, ggml_cont(ctx, tt)), as.numeric(t(A)))

  X <- array(as.numeric(1:24), c(2, 3, 4))
  p <- ggml_permute(ctx, tensor_of(ctx, X), 1, 2, 0, 3)  # source axis i goes to axis[i]
  expect_equal(ggml_tensor_shape(p), c(4, 2, 3, 1))
  expect_equal(compute(ctx, ggml_cont(ctx, p)), as.numeric(aperm(X, c(3, 1, 2))))

  v <- ggml_view_2d(ctx, ta, 2, 3, 16, 4)                # rows 2:3 of every column
  expect_equal(ggml_get_f32(v), as.numeric(A[2:3, ]))
  expect_equal(ggml_get_f32(ggml_view_1d(ctx, ta, 3, 8)), c(3, 4, 5))
  expect_equal(ggml_get_f32_nd(ta, 1, 2, 0, 0), A[2, 3])
  expect_equal(ggml_get_f32(ggml_reshape_2d(ctx, ta, 6, 2)), as.numeric(A))
  expect_equal(ggml_tensor_shape(ggml_reshape_3d(ctx, ta, 2, 2, 3)), c(2, 2, 3, 1))

  dst <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 12)
  expect_equal(compute(ctx, ggml_cpy(ctx, ta, dst)), as.numeric(A))

  B <- matrix(c(100, 200, 300, 400), 2, 2)
  acc <- ggml_acc(ctx, ta, tensor_of(ctx, B), 16, 48, 48, 4)
  ref <- A; ref[2:3, 1:2] <- ref[2:3, 1:2] + B
  expect_equal(compute(ctx, acc), as.numeric(ref))
})

test_that("gradient of sum(sqr(x)) is 2x, and of sum(log(x)) is 1/x", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(5)
  xv <- runif(6, 0.5, 2)
  x <- tensor_of(ctx, matrix(xv, 3, 2))
  ggml_set_param(x)
  loss <- ggml_add(ctx, ggml_sum(ctx, ggml_sqr(ctx, x)), ggml_sum(ctx, ggml_log(ctx, x)))
  ggml_set_loss(loss)
  g <- ggml_build_forward_expand_grads(ctx, loss)
  ggml_build_backward_expand(ctx, g)
  ggml_graph_reset(g)
  ggml_graph_compute(ctx, g)
  expect_equal(ggml_get_f32(loss), sum(xv^2) + sum(log(xv)), tolerance = 1e-6)
  expect_equal(ggml_get_f32(ggml_graph_get_grad(g, x)), 2 * xv + 1 / xv, tolerance = 1e-6)
  expect_gt(ggml_graph_n_nodes(g), 4)
})

test_that("gradient through mul_mat matches the analytic one", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(6)
  W <- matrix(rnorm(12), 4, 3)
  X <- matrix(rnorm(8), 4, 2)
  tw <- tensor_of(ctx, W)
  tx <- tensor_of(ctx, X)
  ggml_set_param(tw)
  loss <- ggml_sum(ctx, ggml_sqr(ctx, ggml_mul_mat(ctx, tw, tx)))
  ggml_set_loss(loss)
  g <- ggml_build_forward_expand_grads(ctx, loss)
  ggml_build_backward_expand(ctx, g)
  ggml_graph_reset(g)
  ggml_graph_compute(ctx, g)
  Y <- crossprod(W, X)                     # 3 x 2
  expect_equal(ggml_get_f32(ggml_graph_get_grad(g, tw)), as.numeric(X %*% t(2 * Y)), tolerance = 1e-5)
  expect_null(ggml_graph_get_grad(g, tx))  # not a parameter
})

test_that("flash_attn_ext matches plain attention (mask, grouped heads)", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(7)
  DK <- 3L; DV <- 2L; N <- 2L; M <- 4L; H <- 2L
  q <- array(rnorm(DK * N * H), c(DK, N, H, 1))
  k <- array(rnorm(DK * M), c(DK, M, 1, 1))
  v <- array(rnorm(DV * M), c(DV, M, 1, 1))
  mask <- matrix(0, M, N)
  mask[3:4, 1] <- -Inf
  tm <- ggml_new_tensor_2d(ctx, GGML_TYPE_F16, M, N)
  ggml_set_f32(tm, as.numeric(mask))
  out <- ggml_flash_attn_ext(ctx, tensor_of(ctx, q), tensor_of(ctx, k), tensor_of(ctx, v), tm, 0.7)
  expect_equal(ggml_tensor_shape(out), c(DV, H, N, 1))
  ref <- array(0, c(DV, H, N))
  for (h in 1:H) for (n in 1:N) {
    s <- 0.7 * colSums(q[, n, h, 1] * k[, , 1, 1]) + mask[, n]
    p <- exp(s - max(s)); p <- p / sum(p)
    ref[, h, n] <- v[, , 1, 1] %*% p
  }
  expect_equal(compute(ctx, out), as.numeric(ref), tolerance = 1e-5)
})

test_that("a no_alloc context computes on the backend, the same for any thread count", {
  ctx <- ggml_init(16 * 1024^2, no_alloc = TRUE)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 32)
  b <- ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 16)
  r <- ggml_soft_max(ctx, ggml_mul_mat(ctx, a, b))
  be <- ggml_backend_cpu_init()
  on.exit(ggml_backend_free(be), add = TRUE)
  buf <- ggml_backend_alloc_ctx_tensors(ctx, be)
  expect_gte(ggml_backend_buffer_get_size(buf), 4 * (64 * 32 + 64 * 16 + 2 * 32 * 16))
  set.seed(8)
  A <- matrix(rnorm(64 * 32), 64); B <- matrix(rnorm(64 * 16), 64)
  ggml_backend_tensor_set_data(a, A)
  ggml_backend_tensor_set_data(b, B)
  g <- ggml_build_forward_expand(ctx, r)
  res <- lapply(c(1L, 2L, 3L), function(n) {
    ggml_backend_cpu_set_n_threads(be, n)
    ggml_backend_graph_compute(be, g)
    ggml_backend_tensor_get_data(r)
  })
  expect_identical(res[[1]], res[[2]])
  expect_identical(res[[1]], res[[3]])
  S <- crossprod(A, B)
  ref <- apply(S, 2, function(s) exp(s - max(s)) / sum(exp(s - max(s))))
  expect_equal(res[[1]], as.numeric(ref), tolerance = 1e-5)
})

test_that("context, tensor and graph facts", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  expect_equal(ggml_get_mem_size(ctx), 1024^2)
  expect_false(ggml_get_no_alloc(ctx))
  a <- ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 4, 3, 2)
  expect_equal(ggml_used_mem(ctx), ggml_tensor_overhead() + 4 * 3 * 2 * 2)
  expect_equal(c(ggml_nelements(a), ggml_nrows(a), ggml_nbytes(a), ggml_element_size(a)), c(24, 6, 48, 2))
  expect_equal(ggml_n_dims(a), 3L)
  expect_identical(ggml_tensor_type(a), GGML_TYPE_F16)
  expect_equal(ggml_type_name(GGML_TYPE_I32), "i32")
  expect_equal(ggml_type_size(GGML_TYPE_F32), 4)
  ggml_set_name(a, "weights")
  expect_equal(ggml_get_name(a), "weights")
  expect_equal(ggml_get_name(ggml_get_tensor(ctx, "weights")), "weights")
  expect_null(ggml_get_tensor(ctx, "nothing"))
  expect_equal(ggml_get_name(ggml_get_first_tensor(ctx)), "weights")
  expect_null(ggml_get_next_tensor(ctx, a))
  expect_output(print(a), "'weights' f16 \\[4, 3, 2, 1\\]")
  s <- ggml_sum(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2))
  expect_equal(ggml_op_name(ggml_tensor_op(s)), "SUM")
  g <- ggml_new_graph_custom(ctx, 16, FALSE)
  ggml_graph_expand(g, s)
  expect_equal(ggml_graph_size(g), 16L)
  expect_equal(ggml_graph_n_nodes(g), 1L)
  expect_equal(ggml_get_name(ggml_graph_node(g, 0)), ggml_get_name(s))
  expect_true(ggml_is_scalar(s))
  expect_true(ggml_can_repeat(s, a))
  expect_false(ggml_are_same_shape(s, a))
  old <- ggml_set_n_threads(1)
  expect_equal(ggml_get_n_threads(), 1L)
  ggml_set_n_threads(old)
  expect_true(ggml_cpu_simd_name() %in% c("avx512", "avx2", "scalar"))
  expect_gte(ggml_cpu_n_cores(), 1L)
})

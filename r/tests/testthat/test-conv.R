# Convolution, pooling and the shape ops from R, against references written in
# R from the definitions, and one gradient through conv + pool.

test_that("conv_2d, conv_1d and conv_transpose_1d match direct sums", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(5)
  k <- array(rnorm(3 * 2 * 2 * 3), c(3, 2, 2, 3))  # [KW, KH, IC, OC]
  x <- array(rnorm(6 * 5 * 2), c(6, 5, 2, 1))     # [IW, IH, IC, N]
  ev <- function(t) { ggml_graph_compute(ctx, ggml_build_forward_expand(ctx, t)); ggml_get_array(t) }
  y <- ev(ggml_conv_2d(ctx, ggml_new_tensor_from_array(ctx, k), ggml_new_tensor_from_array(ctx, x), s0 = 2, p0 = 1, p1 = 1))
  ow <- (6 + 2 - 3) %/% 2 + 1; oh <- (5 + 2 - 2) + 1
  ref <- array(0, c(ow, oh, 3))
  for (oc in 1:3) for (i in 1:ow) for (j in 1:oh) for (ic in 1:2) for (kh in 1:2) for (kw in 1:3) {
    xi <- (i - 1) * 2 + kw - 2; yj <- (j - 1) + kh - 2  # 0-based, padding 1
    if (xi >= 0 && xi < 6 && yj >= 0 && yj < 5) ref[i, j, oc] <- ref[i, j, oc] + k[kw, kh, ic, oc] * x[xi + 1, yj + 1, ic, 1]
  }
  expect_equal(as.vector(y), as.vector(ref), tolerance = 1e-5)
  k1 <- array(rnorm(3 * 2 * 4), c(3, 2, 4)); x1 <- matrix(rnorm(7 * 2), 7, 2)
  y1 <- ev(ggml_conv_1d(ctx, ggml_new_tensor_from_array(ctx, k1), ggml_new_tensor_from_array(ctx, x1), d0 = 2))
  ref1 <- sapply(1:4, function(oc) sapply(1:3, function(i) sum(sapply(1:2, function(ic) sum(k1[, ic, oc] * x1[i + c(0, 2, 4), ic])))))
  expect_equal(as.vector(y1), as.vector(ref1), tolerance = 1e-5)
  kt <- array(rnorm(2 * 3 * 2), c(2, 3, 2)); bt <- matrix(rnorm(4 * 2), 4, 2)  # [K, OC, IC], [IL, IC]
  yt <- ev(ggml_conv_transpose_1d(ctx, ggml_new_tensor_from_array(ctx, kt), ggml_new_tensor_from_array(ctx, bt), s0 = 3))
  reft <- matrix(0, (4 - 1) * 3 + 2, 3)
  for (l in 1:4) for (kk in 1:2) for (oc in 1:3) reft[(l - 1) * 3 + kk, oc] <- reft[(l - 1) * 3 + kk, oc] + sum(kt[kk, oc, ] * bt[l, ])
  expect_equal(as.vector(yt), as.vector(reft), tolerance = 1e-5)
  # F16 patches hold the F32 patches rounded to half precision (relative error below 2^-11)
  im2 <- function(type) ev(ggml_im2col(ctx, ggml_new_tensor_from_array(ctx, k), ggml_new_tensor_from_array(ctx, x),
                                       1, 1, 0, 0, 1, 1, TRUE, type))
  p32 <- im2(GGML_TYPE_F32); p16 <- im2(GGML_TYPE_F16)
  expect_equal(dim(p16), dim(p32))
  expect_true(all(abs(p16 - p32) <= abs(p32) * 2^-11))
  expect_gt(max(abs(p16 - p32)), 0)  # the rounding happened: F16 was not silently F32
})

test_that("pooling, concat, pad and upscale match their definitions", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  x <- matrix(c(1, 5, 2, 8, 3, 7, 4, 6, 9, 0, 2, 1), 4, 3)
  tx <- ggml_new_tensor_from_array(ctx, x)
  ev <- function(t) { ggml_graph_compute(ctx, ggml_build_forward_expand(ctx, t)); ggml_get_array(t) }
  expect_equal(as.vector(ev(ggml_pool_2d(ctx, tx, GGML_OP_POOL_MAX, 2, 2))), c(7, 8))
  expect_equal(as.vector(ev(ggml_pool_2d(ctx, tx, GGML_OP_POOL_AVG, 2, 2))), c(16, 20) / 4)
  # 1-D average over the elements inside: windows [-1, 0] and [1, 2] of each column
  expect_equal(as.vector(ev(ggml_pool_1d(ctx, tx, GGML_OP_POOL_AVG, 2, 2, 1))), as.vector(rbind(x[1, ], colMeans(x[2:3, ]), x[4, ])))
  expect_equal(ev(ggml_concat(ctx, tx, tx, 1)), cbind(x, x))
  expect_equal(ev(ggml_pad_ext(ctx, tx, lp0 = 1, rp1 = 1)), cbind(rbind(0, x), 0))
  expect_equal(ev(ggml_upscale(ctx, tx, 2L)), x[rep(1:4, each = 2), rep(1:3, each = 2)])
  expect_error(ggml_pool_2d(ctx, tx, GGML_OP_POOL_MAX, 2, 2, p0 = 0.5), "whole")
})

test_that("a gradient flows through conv_2d and max pooling", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(9)
  k <- ggml_new_tensor_from_array(ctx, array(rnorm(3 * 3 * 2 * 2), c(3, 3, 2, 2)))
  x <- ggml_new_tensor_from_array(ctx, array(rnorm(6 * 6 * 2), c(6, 6, 2, 1)))
  ggml_set_param(k)
  loss <- ggml_sum(ctx, ggml_pool_2d(ctx, ggml_conv_2d(ctx, k, x, p0 = 1, p1 = 1), GGML_OP_POOL_MAX, 2, 2))
  ggml_set_loss(loss)
  g <- ggml_build_forward_expand_grads(ctx, loss)
  ggml_build_backward_expand(ctx, g)
  ggml_graph_reset(g)
  ggml_graph_compute(ctx, g)
  grad <- ggml_get_f32(ggml_graph_get_grad(g, k))
  # finite differences on two entries of the kernel
  f <- function() { gf <- ggml_build_forward_expand(ctx, loss); ggml_graph_compute(ctx, gf); ggml_get_f32(loss) }
  for (i in c(1, 17)) {
    v <- ggml_get_f32(k); h <- 1e-2
    v[i] <- v[i] + h; ggml_set_f32(k, v); fp <- f()
    v[i] <- v[i] - 2 * h; ggml_set_f32(k, v); fm <- f()
    v[i] <- v[i] + h; ggml_set_f32(k, v)
    expect_equal(grad[i], (fp - fm) / (2 * h), tolerance = 1e-2)
  }
})

# Convolution, pooling and batch-norm layers of the sequential model
# (R/layers.R): CRAN ggmlR's shapes, predictions against plain R loops on
# set weights, training, and argument errors.

# Weights of a compiled model's layer, set from R vectors in ggml order.
set_weights <- function(model, i, ...) {
  w <- list(...)
  for (k in names(w)) ggml_backend_tensor_set_data(model$layers[[i]]$weights[[k]], w[[k]])
}

test_that("shapes follow CRAN ggmlR's nn_infer_shapes", {
  m <- ggml_model_sequential() |>
    ggml_layer_conv_2d(32, c(3, 3), activation = "relu", input_shape = c(28, 28, 1)) |>
    ggml_layer_max_pooling_2d(c(2, 2)) |>
    ggml_layer_flatten() |>
    ggml_layer_dense(10, activation = "softmax")
  s <- lapply(ggmlR:::nn_infer_shapes(m)$layers, `[[`, "output_shape")
  expect_equal(s, list(c(26L, 26L, 32L), c(13L, 13L, 32L), 5408L, 10L))
  expect_equal(m$layers[[2]]$config$strides, c(2L, 2L))
  same <- ggml_model_sequential() |> ggml_layer_conv_2d(16, 3, padding = "same", strides = 2, input_shape = c(28, 27, 1))
  expect_equal(ggmlR:::nn_infer_shapes(same)$layers[[1]]$output_shape, c(14L, 14L, 16L))
  c1 <- ggml_model_sequential() |> ggml_layer_conv_1d(16, 5, input_shape = c(100, 1))
  expect_equal(ggmlR:::nn_infer_shapes(c1)$layers[[1]]$output_shape, c(96L, 16L))
  g <- ggml_model_sequential() |> ggml_layer_conv_2d(8, 3, input_shape = c(9, 9, 2)) |>
    ggml_layer_batch_norm() |> ggml_layer_global_average_pooling_2d()
  g <- ggmlR:::nn_infer_shapes(g)
  expect_equal(g$layers[[3]]$output_shape, 8L)
  expect_equal(vapply(g$layers, ggmlR:::.layer_n_params, numeric(1)), c(3 * 3 * 2 * 8 + 8, 16, 0))
})

test_that("conv_2d with 'same' padding, max pooling: predictions match R loops", {
  set.seed(3)
  m <- ggml_model_sequential() |>
    ggml_layer_conv_2d(2, c(3, 2), padding = "same", input_shape = c(5, 6, 3)) |>
    ggml_layer_max_pooling_2d(2) |>
    ggml_layer_flatten()
  m <- ggml_compile(m, loss = "mse")
  K <- array(rnorm(2 * 3 * 3 * 2), c(2, 3, 3, 2))  # ggml [KW, KH, IC, OC]
  b <- c(0.5, -1)
  set_weights(m, 1, kernel = as.vector(K), bias = b)
  x <- array(rnorm(4 * 5 * 6 * 3), c(4, 5, 6, 3))
  # cross-correlation, zero padding floor(k / 2) before each axis
  conv <- array(0, c(4, 5, 6, 2))
  for (n in 1:4) for (oh in 1:5) for (ow in 1:6) for (oc in 1:2) {
    s <- b[oc]
    for (kh in 1:3) for (kw in 1:2) for (ic in 1:3) {
      h <- oh + kh - 2; w <- ow + kw - 2
      if (h >= 1 && h <= 5 && w >= 1 && w <= 6) s <- s + x[n, h, w, ic] * K[kw, kh, ic, oc]
    }
    conv[n, oh, ow, oc] <- s
  }
  pool <- array(0, c(4, 2, 3, 2))
  for (n in 1:4) for (ph in 1:2) for (pw in 1:3) for (oc in 1:2) pool[n, ph, pw, oc] <- max(conv[n, 2 * ph - 1:0, 2 * pw - 1:0, oc])
  p <- predict(m, x)
  # flatten: the datapoint's values in ggml order (channel fastest, then width, then height)
  want <- t(apply(pool, 1, function(a) as.vector(aperm(a, c(3, 2, 1)))))
  expect_equal(dim(p), c(4L, 12L))
  expect_equal(p, want, tolerance = 1e-5)
})

test_that("conv_1d, global pooling and batch norm match R loops", {
  set.seed(4)
  m <- ggml_model_sequential() |>
    ggml_layer_conv_1d(3, 2, strides = 2, activation = "relu", input_shape = c(7, 2)) |>
    ggml_layer_flatten()
  m <- ggml_compile(m, loss = "mse")
  K <- array(rnorm(2 * 2 * 3), c(2, 2, 3))  # ggml [K, IC, OC]
  set_weights(m, 1, kernel = as.vector(K), bias = c(0.1, 0.2, -0.3))
  x <- array(rnorm(3 * 7 * 2), c(3, 7, 2))
  want <- array(0, c(3, 3, 3))  # [n, position, filter]
  for (n in 1:3) for (o in 1:3) for (f in 1:3) want[n, o, f] <- max(0, c(0.1, 0.2, -0.3)[f] + sum(x[n, 2 * o - 1:0, ] * K[, , f]))
  expect_equal(predict(m, x), t(apply(want, 1, function(a) as.vector(t(a)))), tolerance = 1e-5)

  g <- ggml_model_sequential() |>
    ggml_layer_batch_norm() |>
    ggml_layer_global_max_pooling_2d()
  g$input_shape <- c(3L, 4L, 2L)
  g2 <- ggml_model_sequential() |> ggml_layer_global_average_pooling_2d()
  g2$input_shape <- c(3L, 4L, 2L)
  g <- ggml_compile(g, loss = "mse")
  g2 <- ggml_compile(g2, loss = "mse")
  set_weights(g, 1, gamma = c(2, 0.5), beta = c(1, -1), moving_mean = c(3, 2.5), moving_var = c(4, 1.5))
  x <- array(rnorm(5 * 3 * 4 * 2, 3, 2), c(5, 3, 4, 2))
  bn_train <- bn_pred <- x
  for (ch in 1:2) {  # training: per channel over the batch and the positions (population variance)
    v <- x[, , , ch]
    bn_train[, , , ch] <- (v - mean(v)) / sqrt(mean((v - mean(v))^2) + 1e-5) * c(2, 0.5)[ch] + c(1, -1)[ch]
    bn_pred[, , , ch] <- (v - c(3, 2.5)[ch]) / sqrt(c(4, 1.5)[ch] + 1e-5) * c(2, 0.5)[ch] + c(1, -1)[ch]
  }
  expect_equal(predict(g, x, batch_size = 2), apply(bn_pred, c(1, 4), max), tolerance = 1e-5)
  ctx <- ggml_init(16 * 1024^2)
  x_t <- ggml_new_tensor(ctx, GGML_TYPE_F32, 4, c(2, 4, 3, 5))
  ggml_backend_tensor_set_data(x_t, as.vector(aperm(x, 4:1)))
  y_t <- ggmlR:::.build_forward(g, ctx, x_t, training = TRUE)
  ggml_graph_compute(ctx, ggml_build_forward_expand(ctx, y_t))
  expect_equal(matrix(ggml_backend_tensor_get_data(y_t), 5, byrow = TRUE), apply(bn_train, c(1, 4), max), tolerance = 1e-4)
  ggml_free(ctx)
  expect_equal(predict(g2, x), apply(x, c(1, 4), mean), tolerance = 1e-5)
})

test_that("a small CNN learns which half of an image is brighter", {
  set.seed(5)
  n <- 192
  x <- array(runif(n * 6 * 6), c(n, 6, 6, 1))
  top <- apply(x[, 1:3, , 1, drop = FALSE], 1, mean) > apply(x[, 4:6, , 1, drop = FALSE], 1, mean)
  y <- cbind(top, !top) * 1
  m <- ggml_model_sequential() |>
    ggml_layer_conv_2d(4, 3, activation = "relu", padding = "same", input_shape = c(6, 6, 1)) |>
    ggml_layer_max_pooling_2d(2) |>
    ggml_layer_flatten() |>
    ggml_layer_dense(2, activation = "softmax")
  m <- ggml_compile(m, optimizer = "adam", loss = "categorical_crossentropy", learning_rate = 0.01)
  m <- fit(m, x, y, epochs = 40, batch_size = 32, verbose = 0)
  expect_lt(tail(m$history$train_loss, 1), 0.5 * m$history$train_loss[1])
  expect_gt(evaluate(m, x, y)$accuracy, 0.85)
})

test_that("image layers refuse other shapes and bad arguments", {
  expect_error(ggml_layer_conv_2d(ggml_model_sequential(), 0, 3), "filters")
  expect_error(ggml_layer_conv_2d(ggml_model_sequential(), 4, c(3, 3, 3)), "kernel_size")
  expect_error(ggml_layer_conv_2d(ggml_model_sequential(), 4, 3, padding = "full"), "padding")
  expect_error(ggml_layer_batch_norm(ggml_model_sequential(), eps = -1), "eps")
  flat <- ggml_model_sequential() |> ggml_layer_conv_2d(4, 3, input_shape = 10)
  expect_error(ggmlR:::nn_infer_shapes(flat), "height, width, channels")
  small <- ggml_model_sequential() |> ggml_layer_conv_2d(4, 5, input_shape = c(3, 3, 1))
  expect_error(ggml_compile(small), "does not fit")
})

test_that("fit sets batch_norm's moving statistics to those of the layer's inputs over the data", {
  set.seed(6)
  n <- 40
  x <- cbind(rnorm(n, 2, 3), rnorm(n, -1, 0.5))
  y <- diag(2)[ifelse(x[, 1] > 2, 1, 2), ]
  m <- ggml_model_sequential() |>
    ggml_layer_batch_norm() |>
    ggml_layer_dense(3, activation = "relu") |>
    ggml_layer_batch_norm() |>
    ggml_layer_dense(2, activation = "softmax")
  m$input_shape <- 2L
  m <- ggml_compile(m, learning_rate = 0.01)
  stats <- function(i) lapply(m$layers[[i]]$weights[c("moving_mean", "moving_var")], ggml_backend_tensor_get_data)
  expect_equal(stats(1), list(moving_mean = c(0, 0), moving_var = c(1, 1)))
  m <- fit(m, x, y, epochs = 3, batch_size = 8, verbose = 0)
  pop_var <- function(v) colMeans(sweep(v, 2, colMeans(v))^2)
  expect_equal(stats(1), list(moving_mean = colMeans(x), moving_var = pop_var(x)), tolerance = 1e-5)
  # the second one sees the dense layer's output of the first one's inference values
  g <- function(w) ggml_backend_tensor_get_data(m$layers[[1]]$weights[[w]])
  z <- sweep(sweep(x, 2, colMeans(x)), 2, g("gamma") / sqrt(pop_var(x) + 1e-5), `*`)
  z <- sweep(z, 2, g("beta"), `+`)
  d <- m$layers[[2]]$weights
  h <- pmax(sweep(z %*% matrix(ggml_backend_tensor_get_data(d$weight), 2, 3), 2, ggml_backend_tensor_get_data(d$bias), `+`), 0)
  expect_equal(stats(3), list(moving_mean = colMeans(h), moving_var = pop_var(h)), tolerance = 1e-4)
  # a prediction does not depend on the rest of its batch
  expect_equal(predict(m, x[1:5, ], batch_size = 5), predict(m, x, batch_size = 40)[1:5, ], tolerance = 1e-6)
  expect_equal(vapply(m$layers, ggmlR:::.layer_n_params, numeric(1)), c(4, 9, 6, 8))  # moving statistics are not parameters
})

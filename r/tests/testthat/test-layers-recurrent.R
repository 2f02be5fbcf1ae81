# LSTM and GRU layers (R/layers.R): predictions against R loops of their
# equations on the model's own weights, shapes, training and errors.

sigm <- function(v) 1 / (1 + exp(-v))

# x [n, seq, features]; the layer's weights as R matrices ([in, out], x %*% W)
r_recurrent <- function(l, x) {
  w <- lapply(l$weights, ggml_get_array)
  u <- l$config$units
  n <- dim(x)[1]
  h <- matrix(0, n, u); cell <- matrix(0, n, u)
  out <- array(0, c(n, dim(x)[2], u))
  for (t in seq_len(dim(x)[2])) {
    xt <- matrix(x[, t, ], n)
    if (l$type == "lstm") {
      z <- xt %*% w$W_gates + h %*% w$U_gates + matrix(w$b_gates, n, 4 * u, byrow = TRUE)
      blk <- function(k) z[, k * u + seq_len(u), drop = FALSE]
      cell <- sigm(blk(1)) * cell + sigm(blk(0)) * tanh(blk(2))
      h <- sigm(blk(3)) * tanh(cell)
    } else {
      zr <- sigm(xt %*% w$W_zh + h %*% w$U_zh + matrix(w$b_zh, n, 2 * u, byrow = TRUE))
      z <- zr[, seq_len(u), drop = FALSE]; r <- zr[, u + seq_len(u), drop = FALSE]
      nn <- tanh(xt %*% w$W_n + matrix(w$b_n, n, u, byrow = TRUE) + r * (h %*% w$U_n))
      h <- (1 - z) * nn + z * h
    }
    out[, t, ] <- h
  }
  if (l$config$return_sequences) out else h
}

test_that("lstm and gru layers compute their equations", {
  for (type in c("lstm", "gru")) {
    for (rs in c(FALSE, TRUE)) {
      set.seed(7)
      layer <- if (type == "lstm") ggml_layer_lstm else ggml_layer_gru
      m <- ggml_model_sequential() |> layer(3, return_sequences = rs, input_shape = c(4, 2))
      m <- ggml_compile(m, loss = "mse")
      for (wn in names(m$layers[[1]]$weights)) {  # biases too, so that every term counts
        t <- m$layers[[1]]$weights[[wn]]
        ggml_backend_tensor_set_data(t, stats::runif(ggml_nelements(t), -0.8, 0.8))
      }
      x <- array(stats::rnorm(5 * 4 * 2), c(5, 4, 2))
      p <- predict(m, x)
      want <- r_recurrent(m$layers[[1]], x)
      expect_equal(dim(p), dim(want), info = paste(type, rs))
      expect_equal(p, want, tolerance = 1e-5, info = paste(type, rs))
    }
  }
})

test_that("recurrent layers: shapes, parameters, training", {
  m <- ggml_model_sequential() |> ggml_layer_lstm(8, input_shape = c(6, 3)) |> ggml_layer_dense(2, activation = "softmax")
  m <- ggmlR:::nn_infer_shapes(m)
  expect_equal(m$layers[[1]]$output_shape, 8L)
  expect_equal(ggmlR:::.layer_n_params(m$layers[[1]]), 3 * 32 + 8 * 32 + 32)
  g <- ggmlR:::nn_infer_shapes(ggml_model_sequential() |> ggml_layer_gru(5, return_sequences = TRUE, input_shape = c(6, 3)))
  expect_equal(g$layers[[1]]$output_shape, c(6L, 5L))
  expect_equal(ggmlR:::.layer_n_params(g$layers[[1]]), 3 * 10 + 5 * 10 + 10 + 3 * 5 + 5 * 5 + 5)

  # which of two channels has the larger sum over the sequence
  set.seed(11)
  n <- 128
  x <- array(stats::rnorm(n * 6 * 2), c(n, 6, 2))
  first <- apply(x[, , 1], 1, sum) > apply(x[, , 2], 1, sum)
  y <- cbind(first, !first) * 1
  for (layer in list(ggml_layer_lstm, ggml_layer_gru)) {
    m <- ggml_model_sequential() |> layer(8, input_shape = c(6, 2)) |> ggml_layer_dense(2, activation = "softmax")
    m <- ggml_compile(m, loss = "categorical_crossentropy", learning_rate = 0.02)
    m <- fit(m, x, y, epochs = 30, batch_size = 32, verbose = 0)
    expect_true(all(is.finite(m$history$train_loss)))
    expect_lt(tail(m$history$train_loss, 1), 0.6 * m$history$train_loss[1])
  }
})

test_that("recurrent layers refuse bad arguments and shapes", {
  expect_error(ggml_layer_lstm(ggml_model_sequential(), 0), "units")
  expect_error(ggml_layer_gru(ggml_model_sequential(), 4, return_sequences = NA), "return_sequences")
  expect_error(ggml_layer_lstm(ggml_model_sequential(), 4, activation = "swish"), "activation")
  flat <- ggml_model_sequential() |> ggml_layer_lstm(4, input_shape = 10)
  expect_error(ggmlR:::nn_infer_shapes(flat), "sequence length, features")
})

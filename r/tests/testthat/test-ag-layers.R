# ag_* layers: outputs computed again with plain R from the layers' weights,
# gradients by finite differences.

test_that("ag_linear computes activation(W x + b) with Glorot-uniform W", {
  set.seed(1)
  layer <- ag_linear(3, 2, activation = "tanh")
  expect_equal(dim(layer$W$data), c(2L, 3L))
  expect_true(all(abs(layer$W$data) <= sqrt(6 / 5)))
  layer$b$data <- matrix(c(0.5, -0.5), 2, 1)
  x <- matrix(c(1, 2, 3, -1, 0, 1), 3, 2)
  expect_equal(layer$forward(x)$data, tanh(layer$W$data %*% x + c(0.5, -0.5)))
  expect_named(layer$params(), c("W", "b"))
  expect_error(ag_linear(3, 2, activation = "swish"), "activation")
  expect_error(ag_linear(0, 2), "positive")
})

test_that("ag_sequential chains layers and names parameters by layer", {
  model <- ag_sequential(ag_linear(2, 3), ag_dropout(0.5), ag_linear(3, 1))
  expect_named(model$parameters(), c("layer1_W", "layer1_b", "layer3_W", "layer3_b"))
  ag_eval(model)
  expect_false(model$layers[[2]]$training)
  x <- matrix(c(1, 2), 2, 1)
  p <- model$parameters()
  expected <- p$layer3_W$data %*% (p$layer1_W$data %*% x + p$layer1_b$data) + p$layer3_b$data
  expect_equal(model$forward(x)$data, expected)
  ag_train(model)
  expect_true(model$layers[[2]]$training)
  expect_output(print(model), "3 layers, train mode")
  expect_error(ag_sequential(list(a = 1)), "forward")
})

test_that("ag_dropout keeps 1 / (1 - rate) times the kept values", {
  set.seed(2)
  drop <- ag_dropout(0.25)
  out <- drop$forward(matrix(1, 20, 20))$data
  expect_setequal(unique(as.numeric(out)), c(0, 4 / 3))
  ag_eval(drop)
  x <- ag_tensor(matrix(1, 2, 2))
  expect_identical(drop$forward(x), x)
  expect_error(ag_dropout(1), "rate")
  expect_error(ag_dropout(NA), "rate")
})

test_that("ag_batch_norm normalises rows and its input gradient is the full one", {
  set.seed(3)
  bn <- ag_batch_norm(2, eps = 1e-5, momentum = 0.5)
  x <- matrix(c(1, 10, 3, 20, 5, 60), 2, 3)
  out <- bn$forward(x)$data
  mu <- rowMeans(x); v <- rowMeans((x - mu)^2)
  expect_equal(out, (x - mu) / sqrt(v + 1e-5))
  expect_equal(bn$running_mean, matrix(0.5 * mu, 2, 1))
  expect_equal(bn$running_var, matrix(0.5 + 0.5 * v, 2, 1))
  # the loss weights the outputs unequally so the gradient through the
  # batch mean and variance does not vanish
  w <- matrix(c(1, -2, 0.5, 3, -1, 2), 2, 3)
  expect_grad_matches_fd(x, function(p) ag_sum(ag_mul(bn$forward(p), w)), tolerance = 1e-5)
  ag_eval(bn)
  expect_equal(bn$forward(x)$data, (x - as.numeric(bn$running_mean)) / sqrt(as.numeric(bn$running_var) + 1e-5))
  expect_error(bn$forward(matrix(0, 3, 2)), "rows")
})

test_that("ag_embedding looks up columns and scatters gradients to them", {
  set.seed(4)
  emb <- ag_embedding(4, 2)
  ids <- c(2L, 0L, 2L)
  expect_equal(emb$forward(ids)$data, emb$weight$data[, c(3, 1, 3)])
  with_grad_tape(loss <- ag_sum(emb$forward(ids)))
  g <- get(as.character(emb$weight$id), backward(loss))
  expect_equal(g, matrix(c(1, 1, 0, 0, 2, 2, 0, 0), 2, 4))
  expect_error(emb$forward(4L), "ids")
})

# Attention recomputed in plain R: per head softmax over keys of
# t(K_h) Q_h / sqrt(d_k), heads stacked, then W_o and b_o.
plain_attention <- function(mha, q, kv, causal = FALSE) {
  Q <- mha$W_q$data %*% q; K <- mha$W_k$data %*% kv; V <- mha$W_v$data %*% kv
  heads <- lapply(seq_len(mha$n_heads), function(h) {
    rows <- ((h - 1) * mha$d_k + 1):(h * mha$d_k)
    s <- t(K[rows, , drop = FALSE]) %*% Q[rows, , drop = FALSE] / sqrt(mha$d_k)
    if (causal) s[row(s) > col(s)] <- -Inf
    a <- apply(s, 2, function(col) exp(col - max(col)) / sum(exp(col - max(col))))
    V[rows, , drop = FALSE] %*% matrix(a, ncol(K))
  })
  mha$W_o$data %*% do.call(rbind, heads) + as.numeric(mha$b_o$data)
}

test_that("ag_multihead_attention equals attention written out in plain R", {
  set.seed(5)
  mha <- ag_multihead_attention(4, 2)
  mha$b_o$data <- matrix(c(0.1, 0.2, 0.3, 0.4), 4, 1)
  q <- matrix(rnorm(12), 4, 3); kv <- matrix(rnorm(20), 4, 5)
  expect_equal(mha$forward(q, kv)$data, plain_attention(mha, q, kv))
  expect_equal(mha$forward(q, causal_mask = TRUE)$data, plain_attention(mha, q, q, causal = TRUE))
  expect_named(mha$parameters(), c("W_q", "W_k", "W_v", "W_o", "b_o"))
  expect_error(ag_multihead_attention(6, 4), "multiple")
})

test_that("ag_multihead_attention gradients match finite differences", {
  set.seed(6)
  mha <- ag_multihead_attention(4, 2, bias = FALSE)
  x <- matrix(rnorm(12), 4, 3)
  target <- matrix(rnorm(12), 4, 3)
  W_q <- mha$W_q$data
  expect_grad_matches_fd(W_q, function(w) {
    mha$W_q <- w
    ag_mse_loss(mha$forward(x), target)
  }, tolerance = 1e-5)
})

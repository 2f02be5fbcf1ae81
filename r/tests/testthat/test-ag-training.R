# ag_* data loading, data-parallel training and saving.

test_that("ag_dataloader yields complete batches in order or shuffled", {
  x <- matrix(1:10, 1, 10); y <- matrix(11:20, 1, 10)
  dl <- ag_dataloader(x, y, batch_size = 4, shuffle = FALSE)
  expect_equal(dl$n_batches(), 2L)
  b1 <- dl$next_batch()
  expect_equal(b1$x$data, matrix(1:4, 1, 4))
  expect_equal(b1$y$data, matrix(11:14, 1, 4))
  dl$next_batch()
  expect_false(dl$has_next())
  expect_error(dl$next_batch(), "reset")
  set.seed(7)
  shuffled <- ag_dataloader(x, batch_size = 5)
  seen <- unlist(lapply(shuffled$epoch(), function(b) as.numeric(b$x$data)))
  expect_setequal(seen, 1:10)
  expect_equal(dim(ag_dataloader(t(x), batch_size = 2, col_major = FALSE)$next_batch()$x$data), c(1L, 2L))
  expect_error(ag_dataloader(x, matrix(1, 1, 3)), "same number")
  expect_error(ag_dataloader("x"), "numeric")
  expect_output(print(dl), "n=10")
})

test_that("dp_train with two replicas averages the gradients of two samples", {
  data <- list(list(x = matrix(1), y = matrix(3)), list(x = matrix(2), y = matrix(2)))
  make_model <- function() {
    W <- ag_param(matrix(0))
    list(forward = function(x) ag_matmul(W, x), parameters = function() list(W = W))
  }
  fit <- dp_train(make_model, data,
                  loss_fn = function(out, y) ag_mse_loss(out, y),
                  forward_fn = function(model, s) model$forward(s$x),
                  target_fn = function(s) s$y,
                  n_gpu = 2, n_iter = 1, lr = 0.1, verbose = FALSE)
  # losses (0 - 3)^2 and (0 - 2)^2; gradients -6 and -8 average to -7,
  # so Adam's first step is +lr
  expect_equal(fit$loss_history, (9 + 4) / 2)
  expect_equal(as.numeric(fit$params$W$data), 0.1, tolerance = 1e-6)
  expect_error(dp_train(make_model, list()), "non-empty")
})

test_that("ag_save_model / ag_load_model restore weights and running statistics", {
  set.seed(8)
  build <- function() ag_sequential(ag_linear(2, 3), ag_batch_norm(3), ag_linear(3, 1))
  model <- build()
  model$forward(matrix(rnorm(10), 2, 5))   # moves the running statistics
  path <- tempfile(fileext = ".rds")
  ag_save_model(model, path, model_fn = build)
  loaded <- ag_load_model(path)
  expect_false(loaded$training)
  for (name in names(model$parameters()))
    expect_equal(loaded$parameters()[[name]]$data, model$parameters()[[name]]$data)
  expect_equal(loaded$layers[[2]]$running_var, model$layers[[2]]$running_var)
  expect_output(print(readRDS(path)), "ag_state")

  expect_error(ag_load_model(path, model_fn = function() ag_sequential(ag_linear(2, 3))), "mismatch")
  ag_save_model(model, path)
  expect_error(ag_load_model(path), "model_fn")
  expect_error(ag_save_model(list(), path), "ag_sequential")
  saveRDS(1, path)
  expect_error(ag_load_model(path, model_fn = build), "container")
})

test_that("device and dtype defaults are labels that can be switched back", {
  expect_equal(ag_default_device(), "cpu")
  expect_equal(ag_dtype("f16"), "f32")
  expect_equal(ag_tensor(1)$dtype, "f16")
  expect_equal(ag_dtype("f32"), "f16")
  expect_error(ag_device("tpu"), "device")
  x <- ag_tensor(1)
  expect_identical(ag_to_device(x, "cpu"), x)
  expect_error(ag_to_device(1, "cpu"), "ag_tensor")
})

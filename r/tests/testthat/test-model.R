# The Keras-like model API (R/model.R, R/layers.R, R/fit.R): training on
# problems with known answers, predictions against R's own forward pass,
# GGUF round trips, callbacks and argument errors.

# R's forward pass of dense/flatten/dropout/embedding layers from the
# model's trained weights (ggml [in, units] is the R matrix W with x %*% W).
r_forward <- function(model, x) {
  act <- function(v, a) {
    if (is.null(a)) return(v)
    switch(a, linear = v, relu = pmax(v, 0), sigmoid = 1 / (1 + exp(-v)), tanh = tanh(v),
           softmax = { e <- exp(v - apply(v, 1, max)); e / rowSums(e) })
  }
  for (l in model$layers) {
    x <- switch(l$type,
      dense = act(sweep(x %*% ggml_get_array(l$weights$weight), 2, ggml_get_array(l$weights$bias), "+"), l$config$activation),
      dropout = x,
      flatten = x,
      embedding = {
        tab <- ggml_get_array(l$weights$weight)          # [dim, vocab]
        t(apply(x, 1, function(ids) as.vector(tab[, ids + 1])))  # each row: dim values of id 1, then id 2, ...
      })
  }
  x
}

two_class <- function(n, seed) {
  set.seed(seed)
  x <- matrix(runif(n * 4), n, 4)
  y <- matrix(0, n, 2)
  y[cbind(seq_len(n), ifelse(x %*% c(1, -1, 2, -2) > 0, 1, 2))] <- 1
  list(x = x, y = y)
}

test_that("a dense model learns a linear map: the weights reach the true coefficients", {
  set.seed(1)
  X <- matrix(rnorm(512 * 3), 512)
  Y <- X %*% c(1, -2, 0.5) + 0.3
  m <- ggml_model_sequential() |>
    ggml_layer_dense(1, input_shape = 3) |>
    compile(optimizer = "sgd", loss = "mse", learning_rate = 0.1)
  m <- fit(m, X, Y, epochs = 10, batch_size = 32, verbose = 0)
  h <- m$history
  expect_s3_class(h, "ggml_history")
  expect_length(h$train_loss, 10)
  expect_lt(h$train_loss[10], h$train_loss[1] / 1000)
  expect_equal(as.vector(ggml_get_array(m$layers[[1]]$weights$weight)), c(1, -2, 0.5), tolerance = 1e-4)
  expect_equal(ggml_get_array(m$layers[[1]]$weights$bias), 0.3, tolerance = 1e-4)
  expect_equal(predict(m, X[1:5, , drop = FALSE]), X[1:5, ] %*% c(1, -2, 0.5) + 0.3, tolerance = 1e-4)
  expect_lt(evaluate(m, X, Y)$loss, 1e-8)
})

test_that("a classifier's loss falls and predict/evaluate match R's forward pass", {
  d <- two_class(512, 2)
  set.seed(3)
  m <- ggml_model_sequential() |>
    ggml_layer_dense(16, activation = "relu", input_shape = 4) |>
    ggml_layer_dropout(0.2) |>
    ggml_layer_dense(2, activation = "softmax")
  expect_false(m$compiled)
  m <- compile(m, optimizer = "adam", loss = "categorical_crossentropy", learning_rate = 0.01)
  expect_true(m$compiled)
  m <- fit(m, d$x, d$y, epochs = 30, batch_size = 32, validation_split = 0.25, verbose = 0)
  h <- m$history
  expect_length(h$val_loss, 30)
  expect_lt(h$train_loss[30], 0.6 * h$train_loss[1])
  expect_gt(h$val_accuracy[30], 0.85)
  p <- predict(m, d$x)
  ref <- r_forward(m, d$x)
  expect_equal(dim(p), c(512L, 2L))
  expect_equal(p, ref, tolerance = 1e-5)
  e <- evaluate(m, d$x, d$y)
  expect_equal(e$loss, -mean(rowSums(d$y * log(ref))), tolerance = 1e-5)
  expect_equal(e$accuracy, mean(max.col(ref) == max.col(d$y)))
  # weights scale each datapoint's cross-entropy
  sw <- seq(0.5, 2, length.out = 512)
  expect_equal(evaluate(m, d$x, d$y, sample_weight = sw)$loss, -mean(sw * rowSums(d$y * log(ref))), tolerance = 1e-5)
  cw <- c("0" = 1, "1" = 3)
  expect_equal(evaluate(m, d$x, d$y, class_weight = cw)$loss,
               -mean(cw[max.col(d$y)] * rowSums(d$y * log(ref))), tolerance = 1e-5)
  expect_error(evaluate(ggml_model_sequential() |> ggml_layer_dense(2, input_shape = 4) |> compile(loss = "mse"),
                        d$x, d$y, sample_weight = sw), "cross-entropy")
  expect_equal(ggml_predict_classes(m, d$x), max.col(ref, ties.method = "first"))
  # batch size of predict does not change the result
  expect_equal(ggml_predict(m, d$x, batch_size = 7), p, tolerance = 1e-6)
  expect_output(print(h), "Training History \\(30 epochs\\)")
  pdf(NULL)
  expect_invisible(plot(h))
  dev.off()
})

test_that("dropout masks act while training only", {
  d <- two_class(128, 4)
  train <- function(rate) {
    set.seed(5)
    m <- ggml_model_sequential() |> ggml_layer_dense(8, activation = "tanh", input_shape = 4) |>
      ggml_layer_dropout(rate) |> ggml_layer_dense(2, activation = "softmax") |> compile()
    fit(m, d$x, d$y, epochs = 3, batch_size = 32, verbose = 0)
  }
  a <- train(0)
  b <- train(0.5)
  # same initial weights (same seed), different training: the mask was applied
  expect_false(isTRUE(all.equal(a$history$train_loss, b$history$train_loss)))
  expect_equal(predict(b, d$x), r_forward(b, d$x), tolerance = 1e-5)
  expect_error(ggml_layer_dropout(ggml_model_sequential(), 1), "rate")
})

test_that("an embedding model learns from token ids and predicts as R computes", {
  set.seed(6)
  ids <- matrix(sample(0:9, 256 * 5, TRUE), 256)
  storage.mode(ids) <- "integer"
  y <- matrix(0, 256, 2)
  y[cbind(1:256, ids[, 2] %% 2 + 1)] <- 1       # class: parity of the second token
  m <- ggml_model_sequential() |> ggml_layer_embedding(10, 3, input_shape = 5) |> ggml_layer_flatten() |>
    ggml_layer_dense(2, activation = "softmax") |> compile(learning_rate = 0.05)
  expect_equal(m$layers[[2]]$output_shape, 15L)
  m <- fit(m, ids, y, epochs = 20, batch_size = 32, verbose = 0)
  expect_gt(m$history$train_accuracy[20], 0.95)
  expect_equal(predict(m, ids), r_forward(m, ids), tolerance = 1e-5)
  expect_error(predict(m, ids + 10L), "token ids")
})

test_that("save and load round trip the architecture, the compilation and the weights", {
  d <- two_class(64, 7)
  m <- ggml_model_sequential() |>
    ggml_layer_dense(8, activation = "relu", input_shape = 4, name = "hidden") |>
    ggml_layer_dropout(0.1) |>
    ggml_layer_dense(2, activation = "softmax") |>
    compile(optimizer = "sgd", loss = "mse")
  m <- fit(m, d$x, d$y, epochs = 2, batch_size = 32, verbose = 0)
  f <- tempfile(fileext = ".gguf")
  on.exit(unlink(f))
  ggml_save_model(m, f)
  m2 <- ggml_load_model(f)
  expect_s3_class(m2, "ggml_sequential_model")
  expect_true(m2$compiled)
  expect_identical(vapply(m2$layers, `[[`, "", "name"), c("hidden", "dropout_1", "dense_2"))  # counted per type, as CRAN
  expect_identical(m2$layers[[1]]$config$units, 8L)
  expect_identical(m2$layers[[1]]$config$activation, "relu")
  expect_null(m2$layers[[2]]$config$activation)
  expect_equal(m2$layers[[2]]$config$rate, 0.1)
  expect_identical(m2$compilation$optimizer, "sgd")
  expect_identical(m2$compilation$loss, "mse")
  expect_identical(predict(m2, d$x), predict(m, d$x))
  # a GGUF file that is not a model
  g <- gguf_init_empty()
  gguf_set_val_str(g, "general.architecture", "llama")
  gguf_write_to_file(g, f)
  gguf_free(g)
  expect_error(ggml_load_model(f), "not a sequential model")
  expect_error(ggml_load_model(tempfile()), "existing file")
  expect_error(ggml_save_model(ggml_model_sequential(), f), "compiled")
})

test_that("early stopping ends training and an LR schedule sets the rate of each epoch", {
  d <- two_class(64, 8)
  new_model <- function() {
    set.seed(9)
    ggml_model_sequential() |> ggml_layer_dense(2, activation = "softmax", input_shape = 4) |> compile(learning_rate = 0.01)
  }
  # min_delta larger than any change: no epoch after the first improves
  expect_message(m <- fit(new_model(), d$x, d$y, epochs = 10, batch_size = 64, verbose = 0,
                          callbacks = list(ggml_callback_early_stopping("loss", patience = 2, min_delta = 10))),
                 "Early stopping at epoch 3")
  expect_length(m$history$train_loss, 3)
  # schedules: full-batch SGD on MSE is w <- w - lr_e * 2/N X'(Xw + b - y),
  # computed here in float64 with the rates the schedule should give
  set.seed(11)
  X <- matrix(rnorm(64 * 2), 64)
  Y <- X %*% c(2, -1) + 0.5
  gd <- function(cb, epochs, lrs) {
    m <- ggml_model_sequential() |> ggml_layer_dense(1, input_shape = 2) |> compile(optimizer = "sgd", loss = "mse", learning_rate = 0.1)
    w <- as.vector(ggml_get_array(m$layers[[1]]$weights$weight))
    b <- 0
    m <- fit(m, X, Y, epochs = epochs, batch_size = 64, verbose = 0, callbacks = list(cb))
    for (lr in lrs) {
      r <- as.vector(X %*% w + b - Y)
      w <- w - lr * 2 / 64 * as.vector(crossprod(X, r))
      b <- b - lr * 2 / 64 * sum(r)
    }
    expect_equal(as.vector(ggml_get_array(m$layers[[1]]$weights$weight)), w, tolerance = 1e-5)
    expect_equal(ggml_get_array(m$layers[[1]]$weights$bias), b, tolerance = 1e-5)
  }
  gd(ggml_schedule_step_decay(step_size = 2, gamma = 0.5), 5, 0.1 * c(1, 1, 0.5, 0.5, 0.25))
  gd(ggml_schedule_cosine_decay(eta_min = 0.01, T_max = 4), 4, 0.01 + 0.09 * (1 + cos(pi * (0:3) / 4)) / 2)
  # min_delta 10: every epoch after the first (an improvement on Inf) is a
  # plateau, so from epoch 3 on the rate halves each epoch, down to min_lr
  gd(ggml_schedule_reduce_on_plateau("loss", factor = 0.5, patience = 1, min_lr = 0.03, min_delta = 10), 4,
     c(0.1, 0.1, 0.05, 0.03))
})

test_that("models print and summarise their layers and parameter counts", {
  m <- ggml_model_sequential()
  expect_output(print(m), "no layers")
  m <- m |> ggml_layer_dense(16, activation = "relu", input_shape = 4) |> ggml_layer_dense(3)
  expect_identical(vapply(m$layers, `[[`, "", "name"), c("dense_1", "dense_2"))
  out <- capture.output(print(m))
  expect_true(any(grepl("Total parameters: 131", out)))   # 4*16 + 16 + 16*3 + 3
  expect_output(s <- summary(m), "Trainable parameters: 131")
  expect_equal(s$params, c(80, 51))
})

test_that("misuse of the model API gives R errors", {
  d <- two_class(32, 10)
  expect_error(ggml_compile(ggml_model_sequential()), "no layers")
  m <- ggml_model_sequential() |> ggml_layer_dense(2, input_shape = 4)
  expect_error(fit(m, d$x, d$y), "compiled")
  expect_error(predict(m, d$x), "compiled")
  expect_error(ggml_compile(ggml_model_sequential() |> ggml_layer_dense(2)), "input_shape")
  expect_error(ggml_layer_dense(ggml_model_sequential(), 0), "units")
  expect_error(ggml_layer_dense(ggml_model_sequential(), 2, activation = "swish"), "activation")
  expect_error(ggml_layer_dense(list(), 2), "ggml_model_sequential")
  expect_error(compile(m, optimizer = "lbfgs"), "should be one of")
  m <- compile(m, learning_rate = 0.1)
  expect_error(ggml_layer_dense(m, 2), "compiled")
  expect_error(fit(m, d$x, d$y[, 1]), "columns")
  expect_error(fit(m, d$x[, 1:3], d$y), "input_shape")
  expect_error(fit(m, d$x[1:5, ], d$y), "as many rows")
  x_na <- d$x
  x_na[3, 2] <- NA
  expect_error(fit(m, x_na, d$y), "NA")
  expect_error(fit(m, d$x, d$y, epochs = -1), "epochs")
  expect_error(fit(m, d$x, d$y, validation_data = d$x), "list")
  expect_error(evaluate(m, d$x, d$y[, 1]), "columns")
  expect_error(fit(m, d$x, d$y, sample_weights = rep(1, 32)), "unsupported argument\\(s\\): sample_weights")
  expect_error(fit(m, d$x, d$y, sample_weight = rep(1, 31)), "one weight per datapoint")
  expect_error(evaluate(m, d$x, d$y, class_weight = c("0" = 1, "1" = 2), sample_weight = rep(1, 32)), "not both")
  expect_error(evaluate(m, d$x, d$y, class_weight = c("0" = 1)), "every datapoint's class")
  expect_error(predict(m, d$x, 32, 0, 1), "unsupported")
})

test_that("frozen layers keep their weights, layers are found by name and index, weight files load", {
  d <- two_class(64, 12)
  set.seed(13)
  m <- ggml_model_sequential() |> ggml_layer_dense(4, activation = "relu", input_shape = 4, name = "hidden") |>
    ggml_layer_dense(2, activation = "softmax") |> compile(learning_rate = 0.01)
  w <- function(i) ggml_get_array(m$layers[[i]]$weights$weight)
  w1 <- w(1)
  w2 <- w(2)
  m <- ggml_freeze_weights(m, layer_names = "hidden")
  m <- fit(m, d$x, d$y, epochs = 2, batch_size = 32, verbose = 0)
  expect_identical(w(1), w1)
  expect_false(identical(w(2), w2))
  m <- ggml_unfreeze_weights(m)
  m <- fit(m, d$x, d$y, epochs = 1, batch_size = 32, verbose = 0)
  expect_false(identical(w(1), w1))
  m0 <- ggml_freeze_weights(m, from = 1, to = 2)
  expect_error(fit(m0, d$x, d$y, verbose = 0), "no trainable weights")
  expect_error(ggml_freeze_weights(m, from = 0), "Invalid range")
  expect_error(ggml_freeze_weights(m, layer_names = "nope"), "No layers found")
  expect_identical(ggml_get_layer(m, name = "hidden")$config$units, 4L)
  expect_identical(ggml_get_layer(m, index = 2)$name, "dense_2")
  expect_error(ggml_get_layer(m, index = 3), "out of range")
  expect_error(ggml_get_layer(m), "either index or name")
  expect_error(ggml_get_layer(m, name = "x"), "No layer with name")
  expect_error(ggml_pop_layer(m), "compiled")
  expect_error(ggml_pop_layer(ggml_model_sequential()), "no layers")
  p <- ggml_model_sequential() |> ggml_layer_dense(3, input_shape = 2) |> ggml_pop_layer()
  expect_length(p$layers, 0)
  expect_null(p$input_shape)
  # weights into a fresh model of the same architecture, not into another
  f <- tempfile(fileext = ".gguf")
  on.exit(unlink(f))
  ggml_save_weights(m, f)
  fresh <- ggml_model_sequential() |> ggml_layer_dense(4, activation = "relu", input_shape = 4) |>
    ggml_layer_dense(2, activation = "softmax") |> compile()
  expect_false(identical(predict(fresh, d$x), predict(m, d$x)))
  fresh <- ggml_load_weights(fresh, f)
  expect_identical(predict(fresh, d$x), predict(m, d$x))
  other <- ggml_model_sequential() |> ggml_layer_dense(5, input_shape = 4) |> ggml_layer_dense(2) |> compile()
  expect_error(ggml_load_weights(other, f), "mismatch")
})

test_that("a functional chain is the sequential model of its layers", {
  d <- two_class(64, 14)
  set.seed(15)
  s <- ggml_model_sequential() |> ggml_layer_dense(4, activation = "tanh", input_shape = 4) |>
    ggml_layer_dense(2, activation = "softmax") |> compile()
  set.seed(15)
  inp <- ggml_input(shape = 4)
  out <- inp |> ggml_layer_dense(4, activation = "tanh") |> ggml_layer_dense(2, activation = "softmax")
  f <- compile(ggml_model(inputs = inp, outputs = out))
  expect_s3_class(f, "ggml_functional_model")
  expect_true(f$compiled)
  expect_identical(vapply(f$layers, `[[`, "", "type"), c("dense", "dense"))
  s <- fit(s, d$x, d$y, epochs = 2, batch_size = 32, verbose = 0)
  f <- fit(f, d$x, d$y, epochs = 2, batch_size = 32, verbose = 0)
  expect_identical(predict(f, d$x), predict(s, d$x))
  expect_error(ggml_model(ggml_input(4), out), "not computed from")
  expect_error(ggml_model(inp, list()), "nodes")
})

# ggml_training_history and ggml_model_backend (R/diagnostics.R).

tiny_model <- function(backend = "cpu") {
  model <- ggml_model_sequential()
  model <- ggml_layer_dense(model, 4, activation = "relu", input_shape = 2)
  model <- ggml_layer_dense(model, 2, activation = "softmax")
  ggml_compile(model, backend = backend)
}
tiny_x <- matrix(c(0, 0, 1, 1, 0, 1, 0, 1), ncol = 2)
tiny_y <- cbind(c(1, 0, 0, 1), c(0, 1, 1, 0))

test_that("the history as a wide and a long data frame", {
  model <- ggml_fit(tiny_model(), tiny_x, tiny_y, epochs = 3, batch_size = 2, verbose = 0)
  h <- ggml_training_history(model)
  expect_identical(names(h), c("epoch", "train_loss", "train_accuracy"))
  expect_identical(h$epoch, 1:3)
  expect_equal(h$train_loss, as.double(model$history$train_loss))
  long <- ggml_training_history(model, format = "long")
  expect_identical(names(long), c("epoch", "metric", "split", "value"))
  expect_identical(nrow(long), 6L)
  expect_equal(long$value[long$metric == "loss"], h$train_loss)
  expect_equal(long$value[long$metric == "accuracy"], h$train_accuracy)
  expect_identical(unique(long$split), "train")
  expect_error(ggml_training_history(model, format = "tall"))
})

test_that("validation columns appear with validation data", {
  model <- ggml_fit(tiny_model(), rbind(tiny_x, tiny_x), rbind(tiny_y, tiny_y), epochs = 2, batch_size = 2,
                    validation_split = 0.5, verbose = 0)
  h <- ggml_training_history(model)
  expect_identical(names(h), c("epoch", "train_loss", "train_accuracy", "val_loss", "val_accuracy"))
  expect_identical(nrow(ggml_training_history(model, "long")), 8L)
})

test_that("an unfitted model has no history; an uncompiled one no backend", {
  model <- ggml_layer_dense(ggml_model_sequential(), 2, input_shape = 2)
  expect_warning(h <- ggml_training_history(model), "no training history")
  expect_null(h)
  expect_error(ggml_model_backend(model), "not compiled")
})

test_that("the backend is the CPU, whatever was requested", {
  expect_identical(ggml_model_backend(tiny_model()), "cpu")
  expect_identical(ggml_model_backend(tiny_model("auto"), verbose = TRUE),
                   list(requested = "auto", used = "cpu", device = "cpu", fallback = FALSE))
  expect_identical(ggml_model_backend(tiny_model("cpu"), verbose = TRUE)$requested, "cpu")
})

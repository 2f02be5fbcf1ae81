# CRAN ggmlR's model diagnostics: a fitted model's training history as a
# data frame, and the backend its compilation uses.

ggml_training_history <- function(object, format = c("wide", "long"), ...) {
  format <- match.arg(format)
  history <- object$history
  if (is.null(history) || length(history$epochs) == 0) {
    warning("the model has no training history (it has not been fitted)", call. = FALSE)
    return(NULL)
  }
  wide <- data.frame(epoch = as.integer(history$epochs),
                     train_loss = as.double(history$train_loss),
                     train_accuracy = as.double(history$train_accuracy))
  has_val <- length(history$val_loss) > 0 && any(!is.na(history$val_loss))
  if (has_val) {
    wide$val_loss <- as.double(history$val_loss)
    wide$val_accuracy <- as.double(history$val_accuracy)
  }
  if (format == "wide") return(wide)
  splits <- if (has_val) c("train", "val") else "train"
  long <- expand.grid(metric = c("loss", "accuracy"), split = splits, stringsAsFactors = FALSE)
  parts <- lapply(seq_len(nrow(long)), function(i) {
    column <- paste(long$split[i], long$metric[i], sep = "_")
    data.frame(epoch = wide$epoch, metric = long$metric[i], split = long$split[i], value = wide[[column]],
               stringsAsFactors = FALSE)
  })
  do.call(rbind, parts)
}

# Only the CPU backend exists here: "auto" and "cpu" both compute on it, and
# nothing ever falls back.
ggml_model_backend <- function(object, verbose = FALSE) {
  if (!isTRUE(object$compiled)) stop("the model is not compiled: its backend is unknown (call ggml_compile first)", call. = FALSE)
  if (!verbose) return("cpu")
  requested <- object$compilation$backend_requested
  list(requested = if (is.null(requested)) "cpu" else requested, used = "cpu", device = "cpu", fallback = FALSE)
}

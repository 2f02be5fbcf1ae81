# Loss functions of the autograd engine (ag_*). Each returns a [1, 1]
# ag_tensor. Targets may be ag_tensors or plain matrices; they are treated as
# constants. Classification losses average over columns (samples).

.ag_check_same_shape <- function(a, b, what) {
  if (!identical(dim(a), dim(b)))
    stop(sprintf("%s: prediction is %s but target is %s", what,
                 paste(dim(a), collapse = "x"), paste(dim(b), collapse = "x")),
         call. = FALSE)
}

ag_mse_loss <- function(pred, target) {
  p <- .ag_data(pred); y <- .ag_data(target)
  .ag_check_same_shape(p, y, "ag_mse_loss")
  residual <- p - y
  .ag_result(matrix(mean(residual^2)), list(pred = pred), function(grad_out)
    list(pred = (2 / length(residual)) * residual * as.numeric(grad_out)))
}

.ag_probability_floor <- 1e-7

ag_cross_entropy_loss <- function(pred, target) {
  p <- .ag_data(pred); y <- .ag_data(target)
  .ag_check_same_shape(p, y, "ag_cross_entropy_loss")
  p_clamped <- pmin(pmax(p, .ag_probability_floor), 1 - .ag_probability_floor)
  n <- ncol(p)
  .ag_result(matrix(-sum(y * log(p_clamped)) / n), list(pred = pred), function(grad_out)
    list(pred = -y / p_clamped / n * as.numeric(grad_out)))
}

# Targets of a softmax loss: a one-hot matrix as the logits, or 0-based class
# indices (an integer vector, a numeric vector, or a one-row matrix).
.ag_class_targets <- function(target, n_classes, n_samples) {
  is_indices <- is.integer(target) || is.null(dim(target)) ||
    (nrow(target) == 1L && n_classes > 1L)
  if (!is_indices) {
    .ag_check_same_shape(matrix(0, n_classes, n_samples), target,
                         "ag_softmax_cross_entropy_loss")
    return(target)
  }
  index <- as.integer(target)
  if (length(index) != n_samples || anyNA(index) || any(index < 0L | index >= n_classes))
    stop(sprintf("ag_softmax_cross_entropy_loss: need %d class indices in 0..%d",
                 n_samples, n_classes - 1L), call. = FALSE)
  one_hot <- matrix(0, n_classes, n_samples)
  one_hot[cbind(index + 1L, seq_len(n_samples))] <- 1
  one_hot
}

ag_softmax_cross_entropy_loss <- function(logits, target) {
  z <- .ag_data(logits)
  y <- .ag_class_targets(if (is_ag_tensor(target)) target$data else target,
                         nrow(z), ncol(z))
  p <- .ag_softmax_columns(z)
  n <- ncol(z)
  .ag_result(matrix(-sum(y * log(pmax(p, .ag_probability_floor))) / n),
             list(logits = logits), function(grad_out)
    list(logits = (p - y) / n * as.numeric(grad_out)))
}

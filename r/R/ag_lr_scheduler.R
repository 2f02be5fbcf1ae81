# Learning-rate schedules for ag_* optimizers: each $step() (one per epoch)
# sets the optimizer's $lr and returns it invisibly.

.ag_new_scheduler <- function(optimizer, class, lr_at) {
  if (!is.environment(optimizer) || !is.numeric(optimizer$lr))
    stop("optimizer must be an ag_* optimizer", call. = FALSE)
  scheduler <- new.env(parent = emptyenv())
  scheduler$optimizer <- optimizer
  scheduler$last_epoch <- 0L
  scheduler$step <- function() {
    scheduler$last_epoch <- scheduler$last_epoch + 1L
    optimizer$lr <- lr_at(scheduler$last_epoch, optimizer$lr)
    invisible(optimizer$lr)
  }
  scheduler$get_lr <- function() optimizer$lr
  class(scheduler) <- class
  scheduler
}

# Multiply the rate by gamma every step_size epochs.
lr_scheduler_step <- function(optimizer, step_size, gamma = 0.1) {
  step_size <- .ag_check_count(step_size, "step_size")
  scheduler <- .ag_new_scheduler(optimizer, "lr_scheduler_step", function(epoch, lr)
    if (epoch %% step_size == 0L) lr * gamma else lr)
  scheduler$step_size <- step_size
  scheduler$gamma <- gamma
  scheduler
}

# Cosine annealing from the optimizer's rate at creation (epoch 1) towards
# lr_min over T_max epochs; then it stays at the last value, or starts a new
# cycle when restart is TRUE.
lr_scheduler_cosine <- function(optimizer, T_max, lr_min = 0, restart = FALSE) {
  T_max <- .ag_check_count(T_max, "T_max")
  lr_max <- optimizer$lr
  scheduler <- .ag_new_scheduler(optimizer, "lr_scheduler_cosine", function(epoch, lr) {
    phase <- if (restart) (epoch - 1L) %% T_max else min(epoch - 1L, T_max - 1L)
    lr_min + 0.5 * (lr_max - lr_min) * (1 + cos(pi * phase / T_max))
  })
  scheduler$T_max <- T_max
  scheduler$lr_min <- lr_min
  scheduler$lr_max <- lr_max
  scheduler$restart <- restart
  scheduler
}

print.lr_scheduler_step <- function(x, ...) {
  cat(sprintf("lr_scheduler_step | step_size=%d | gamma=%.4f | epoch=%d | lr=%.6f\n",
              x$step_size, x$gamma, x$last_epoch, x$get_lr()))
  invisible(x)
}

print.lr_scheduler_cosine <- function(x, ...) {
  cat(sprintf("lr_scheduler_cosine | T_max=%d | lr_max=%.6f | lr_min=%.6f | epoch=%d | lr=%.6f\n",
              x$T_max, x$lr_max, x$lr_min, x$last_epoch, x$get_lr()))
  invisible(x)
}

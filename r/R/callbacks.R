# Epoch callbacks of fit() and ggml_fit_opt(), as CRAN ggmlR's: lists with
# on_epoch_begin / on_epoch_end(epoch, logs, state). state is an environment
# with stop (TRUE ends training after the epoch), lr_ud (the learning-rate
# handle, see opt_lr.R) and nepoch. The schedules change the AdamW and the
# SGD rate alike, so that they act on either optimizer.

.callback_state <- function(lr_ud, nepoch) {
  if (!is.numeric(nepoch) || length(nepoch) != 1 || is.na(nepoch) || nepoch < 0) stop("'nepoch' must be a number >= 0", call. = FALSE)
  state <- new.env(parent = emptyenv())
  state$stop <- FALSE
  state$lr_ud <- lr_ud
  state$nepoch <- nepoch
  state
}

.check_callbacks <- function(callbacks) {
  if (!is.list(callbacks) || !all(vapply(callbacks, is.list, logical(1)))) {
    stop("'callbacks' must be a list of callbacks (lists of on_epoch_begin / on_epoch_end functions)", call. = FALSE)
  }
  invisible(callbacks)
}

.run_callbacks <- function(callbacks, hook, epoch, logs, state) {
  for (cb in callbacks) if (is.function(cb[[hook]])) cb[[hook]](epoch, logs, state)
}

# ggml_opt_fit's epoch_callback: on_epoch_end of the epoch just done, then
# on_epoch_begin of the next one and before_next(); FALSE (stop) when a
# callback set state$stop or the last epoch is done.
.callbacks_epoch_hook <- function(callbacks, state, logs_of, before_next = function() NULL) {
  function(epoch, row, opt_ctx) {
    logs <- logs_of(row)
    .run_callbacks(callbacks, "on_epoch_end", epoch, logs, state)
    if (isTRUE(state$stop) || epoch >= state$nepoch) return(FALSE)
    .run_callbacks(callbacks, "on_epoch_begin", epoch + 1, logs, state)
    before_next()
    !isTRUE(state$stop)
  }
}

# Both rates as f(rates), f taking and giving c(adamw, sgd).
.update_rates <- function(lr_ud, f) {
  new_rates <- f(ggml_opt_get_lr(lr_ud))
  ggml_opt_set_lr(lr_ud, adamw_lr = new_rates[[1]], sgd_lr = new_rates[[2]])
}

.monitor_mode <- function(monitor, mode) {
  mode <- match.arg(mode, c("auto", "min", "max"))
  if (mode == "auto") if (grepl("loss", monitor)) "min" else "max" else mode
}

# A callback that calls on_plateau(epoch, state) when `monitor` has not
# improved by more than min_delta for `patience` epochs, then counts again.
.plateau_callback <- function(monitor, patience, min_delta, mode, on_plateau) {
  mode <- .monitor_mode(monitor, mode)
  best <- if (mode == "min") Inf else -Inf
  wait <- 0L
  list(on_epoch_end = function(epoch, logs, state) {
    v <- logs[[monitor]]
    if (is.null(v) || is.na(v)) return(invisible(NULL))
    if (if (mode == "min") v < best - min_delta else v > best + min_delta) {
      best <<- v
      wait <<- 0L
    } else {
      wait <<- wait + 1L
      if (wait >= patience) {
        on_plateau(epoch, state)
        wait <<- 0L
      }
    }
    invisible(NULL)
  })
}

ggml_callback_early_stopping <- function(monitor = "val_loss", patience = 5, min_delta = 0, mode = "auto") {
  .plateau_callback(monitor, patience, min_delta, mode, function(epoch, state) {
    message(sprintf("Early stopping at epoch %d (no improvement in %s for %d epochs)", epoch, monitor, patience))
    state$stop <- TRUE
  })
}

# the rates * factor, not below min_lr, at each plateau.
ggml_schedule_reduce_on_plateau <- function(monitor = "val_loss", factor = 0.5, patience = 5, min_lr = 1e-7,
                                            min_delta = 1e-4, mode = "auto") {
  .plateau_callback(monitor, patience, min_delta, mode, function(epoch, state) {
    .update_rates(state$lr_ud, function(rates) pmax(rates * factor, min_lr))
  })
}

# the rates * gamma every step_size epochs.
ggml_schedule_step_decay <- function(step_size = 10, gamma = 0.1) {
  list(on_epoch_begin = function(epoch, logs, state) {
    if (epoch > 1 && (epoch - 1) %% step_size == 0) .update_rates(state$lr_ud, function(rates) rates * gamma)
    invisible(NULL)
  })
}

# eta_min + (eta_max - eta_min) (1 + cos(pi (epoch - 1) / T_max)) / 2, eta_max
# the rate at the first epoch, T_max the number of epochs by default.
ggml_schedule_cosine_decay <- function(eta_min = 0, T_max = NULL) {
  eta_max <- NULL
  list(on_epoch_begin = function(epoch, logs, state) {
    if (is.null(eta_max)) eta_max <<- ggml_opt_get_lr(state$lr_ud)
    t_max <- if (is.null(T_max)) state$nepoch else T_max
    .update_rates(state$lr_ud, function(rates) eta_min + 0.5 * (eta_max - eta_min) * (1 + cos(pi * (epoch - 1) / t_max)))
    invisible(NULL)
  })
}

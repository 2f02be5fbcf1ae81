# CRAN ggmlR's training with a learning rate that R changes between epochs.
# A learning-rate handle (class ggml_opt_lr) holds the AdamW and the SGD
# rate; the optimization context's get_opt_pars reads it at every optimizer
# step, so a change takes effect at the next step. ggml_fit_opt trains
# through ggml_opt_fit (the one training loop) with the callbacks of
# callbacks.R between epochs.

.lr_handle <- function(adamw, sgd) {
  handle <- new.env(parent = emptyenv())
  handle$adamw <- adamw
  handle$sgd <- sgd
  structure(handle, class = "ggml_opt_lr")
}

.check_lr_handle <- function(lr_ud) {
  if (!inherits(lr_ud, "ggml_opt_lr")) stop("'lr_ud' must be a learning-rate handle (ggml_opt_init_for_fit()$lr_ud)", call. = FALSE)
  lr_ud
}

# A handle at ggml-opt's default rates.
.default_lr_handle <- function() {
  defaults <- ggml_opt_get_default_optimizer_params()
  .lr_handle(defaults$adamw$alpha, defaults$sgd$alpha)
}

# ggml-opt's default optimizer parameters with the handle's rates and
# AdamW's betas and weight decay from `adamw` (list(beta1, beta2, wd)).
.lr_opt_pars <- function(lr_ud, clip_norm = 0, adamw = NULL) {
  pars <- ggml_opt_get_default_optimizer_params()
  pars$adamw[names(adamw)] <- adamw
  pars$adamw$alpha <- lr_ud$adamw
  pars$sgd$alpha <- lr_ud$sgd
  pars$clip_norm <- clip_norm
  pars
}

ggml_opt_get_lr <- function(lr_ud) {
  .check_lr_handle(lr_ud)
  c(adamw = lr_ud$adamw, sgd = lr_ud$sgd)
}

# NA keeps a rate as it is.
ggml_opt_set_lr <- function(lr_ud, adamw_lr = NA, sgd_lr = NA) {
  .check_lr_handle(lr_ud)
  rate <- function(x, what) {
    if (length(x) != 1 || !(is.numeric(x) || is.logical(x))) stop(sprintf("'%s' must be one number or NA", what), call. = FALSE)
    if (!is.na(x) && (!is.finite(x) || x < 0)) stop(sprintf("'%s' must be a finite number >= 0 or NA", what), call. = FALSE)
    as.double(x)
  }
  adamw_lr <- rate(adamw_lr, "adamw_lr")
  sgd_lr <- rate(sgd_lr, "sgd_lr")
  if (!is.na(adamw_lr)) lr_ud$adamw <- adamw_lr
  if (!is.na(sgd_lr)) lr_ud$sgd <- sgd_lr
  invisible(NULL)
}

ggml_opt_init_for_fit <- function(sched, loss_type, optimizer = GGML_OPT_OPTIMIZER_TYPE_ADAMW, opt_period = 1L,
                                  ctx_compute = NULL, inputs = NULL, outputs = NULL) {
  lr_ud <- .default_lr_handle()
  params <- .opt_params(sched, loss_type, optimizer, opt_period, ctx_compute, inputs, outputs)
  params$get_opt_pars <- function(ud) .lr_opt_pars(lr_ud)
  list(opt_ctx = .opt_init(params), lr_ud = lr_ud)
}

# Returns the per-epoch history (a data frame). The callbacks' state holds
# stop, lr_ud (the rates, ggml-opt's defaults at the start) and nepoch.
ggml_fit_opt <- function(sched, ctx_compute, inputs, outputs, dataset, loss_type = GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR,
                         optimizer = GGML_OPT_OPTIMIZER_TYPE_ADAMW, nepoch = 10L, nbatch_logical = 32L, val_split = 0,
                         callbacks = list(), silent = FALSE) {
  .check_callbacks(callbacks)
  state <- .callback_state(.default_lr_handle(), nepoch)
  .run_callbacks(callbacks, "on_epoch_begin", 1, list(), state)
  if (isTRUE(state$stop) || nepoch == 0) {
    return(data.frame(epoch = integer(0), train_loss = numeric(0), train_accuracy = numeric(0),
                      val_loss = numeric(0), val_accuracy = numeric(0)))
  }
  logs_of <- function(row) as.list(row[c("train_loss", "train_accuracy", "val_loss", "val_accuracy")])
  history <- ggml_opt_fit(sched, ctx_compute, inputs, outputs, dataset, loss_type, optimizer,
                          get_opt_pars = function(epoch) .lr_opt_pars(state$lr_ud), nepoch = nepoch,
                          nbatch_logical = nbatch_logical, val_split = val_split, silent = silent,
                          epoch_callback = .callbacks_epoch_hook(callbacks, state, logs_of))
  history$epoch <- as.integer(history$epoch)
  history
}

print.ggml_opt_lr <- function(x, ...) {
  cat(sprintf("<ggml learning rates: AdamW %g, SGD %g>\n", x$adamw, x$sgd))
  invisible(x)
}

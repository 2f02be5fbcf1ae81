# Optimizers of the autograd engine (ag_*). An optimizer is an environment
# holding the parameters by name; $step(grads) takes the environment that
# backward() returns (gradients keyed by tensor id) and replaces each
# parameter's $data; $zero_grad() clears $grad and the tape.

.ag_new_optimizer <- function(params, class, update) {
  if (!is.list(params) || !all(vapply(params, is_ag_tensor, logical(1L))))
    stop("params must be a list of ag_tensors", call. = FALSE)
  if (is.null(names(params))) names(params) <- paste0("param", seq_along(params))
  opt <- new.env(parent = emptyenv())
  opt$params <- params
  opt$step <- function(grads) {
    if (!is.environment(grads)) stop("grads must be the result of backward()", call. = FALSE)
    opt$before_step()
    for (name in names(opt$params)) {
      param <- opt$params[[name]]
      g <- get0(as.character(param$id), envir = grads, inherits = FALSE)
      if (!is.null(g)) param$data <- param$data - update(name, g)
    }
    invisible(opt)
  }
  opt$before_step <- function() NULL
  opt$zero_grad <- function() {
    for (param in opt$params) param$grad <- NULL
    .ag_tape_clear()
    invisible(opt)
  }
  class(opt) <- class
  opt
}

.ag_zeros_like <- function(params) lapply(params, function(p) p$data * 0)

optimizer_sgd <- function(params, lr = 0.01, momentum = 0.0) {
  opt <- .ag_new_optimizer(params, "ag_optimizer_sgd", function(name, g) {
    if (opt$momentum == 0) return(opt$lr * g)
    opt$velocity[[name]] <- opt$momentum * opt$velocity[[name]] + g
    opt$lr * opt$velocity[[name]]
  })
  opt$lr <- lr
  opt$momentum <- momentum
  opt$velocity <- .ag_zeros_like(opt$params)
  opt
}

optimizer_adam <- function(params, lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8) {
  opt <- .ag_new_optimizer(params, "ag_optimizer_adam", function(name, g) {
    opt$m[[name]] <- opt$beta1 * opt$m[[name]] + (1 - opt$beta1) * g
    opt$v[[name]] <- opt$beta2 * opt$v[[name]] + (1 - opt$beta2) * g^2
    m_hat <- opt$m[[name]] / (1 - opt$beta1^opt$t)
    v_hat <- opt$v[[name]] / (1 - opt$beta2^opt$t)
    opt$lr * m_hat / (sqrt(v_hat) + opt$eps)
  })
  opt$lr <- lr; opt$beta1 <- beta1; opt$beta2 <- beta2; opt$eps <- eps
  opt$t <- 0L
  opt$m <- .ag_zeros_like(opt$params)
  opt$v <- .ag_zeros_like(opt$params)
  opt$before_step <- function() opt$t <- opt$t + 1L
  opt
}

print.ag_optimizer_sgd <- function(x, ...) {
  cat("SGD optimizer | lr =", x$lr, "| momentum =", x$momentum,
      "| params:", length(x$params), "\n")
  invisible(x)
}

print.ag_optimizer_adam <- function(x, ...) {
  cat("Adam optimizer | lr =", x$lr, "| beta1 =", x$beta1, "| beta2 =", x$beta2,
      "| step =", x$t, "| params:", length(x$params), "\n")
  invisible(x)
}

# Scale the gradients of params (in the environment backward() returned) so
# that their joint L2 norm is at most max_norm; returns the norm before.
clip_grad_norm <- function(params, grads, max_norm) {
  if (!is.environment(grads)) stop("grads must be the result of backward()", call. = FALSE)
  max_norm <- .ag_check_scalar(max_norm, "max_norm")
  keys <- unique(vapply(params, function(p) as.character(p$id), character(1L)))
  keys <- keys[vapply(keys, exists, logical(1L), envir = grads, inherits = FALSE)]
  total_norm <- sqrt(sum(vapply(keys, function(k) sum(get(k, envir = grads)^2), numeric(1L))))
  if (total_norm > max_norm) {
    scale <- max_norm / (total_norm + 1e-6)
    for (k in keys) assign(k, get(k, envir = grads) * scale, envir = grads)
  }
  invisible(total_norm)
}

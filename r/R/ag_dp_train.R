# Data-parallel training of an ag_* model: n_gpu replicas start from the same
# weights, each takes its own sample per iteration, their gradients are
# averaged, one Adam step updates replica 1 and the weights are copied to the
# others. Here the replicas run one after another in this R process, so the
# result is that of training with gradients averaged over n_gpu samples.

dp_train <- function(make_model, data, loss_fn = NULL, forward_fn = NULL,
                     target_fn = NULL, n_gpu = NULL, n_iter = 10L, lr = 1e-3,
                     max_norm = Inf, verbose = 10L) {
  if (!is.function(make_model)) stop("make_model must be a function", call. = FALSE)
  if (!is.list(data) || length(data) == 0L) stop("data must be a non-empty list", call. = FALSE)
  if (is.null(n_gpu)) n_gpu <- max(1L, sum(.ag_has_gpu()))
  n_gpu <- .ag_check_count(n_gpu, "n_gpu")
  n_iter <- .ag_check_count(n_iter, "n_iter")

  replicas <- lapply(seq_len(n_gpu), function(i) make_model())
  replica_params <- lapply(replicas, function(m) m$parameters())
  param_names <- names(replica_params[[1L]])
  copy_weights_from_first <- function() {
    for (i in seq_len(n_gpu)[-1L])
      for (name in param_names) replica_params[[i]][[name]]$data <- replica_params[[1L]][[name]]$data
  }
  copy_weights_from_first()
  opt <- optimizer_adam(replica_params[[1L]], lr = lr)

  as_input <- function(s) if (is_ag_tensor(s)) s else ag_tensor(s)
  # Loss of one replica on one sample; its gradients keyed by parameter name.
  replica_step <- function(i, sample) {
    model <- replicas[[i]]
    with_grad_tape({
      out <- if (is.null(forward_fn)) model$forward(as_input(sample)) else forward_fn(model, sample)
      loss <- if (is.null(loss_fn)) out
              else loss_fn(out, if (is.null(target_fn)) sample else target_fn(sample))
    })
    grads <- backward(loss)
    list(loss = sum(.ag_data(loss)),
         grads = lapply(replica_params[[i]], function(p)
           get0(as.character(p$id), envir = grads, inherits = FALSE)))
  }

  loss_history <- numeric(n_iter)
  for (iter in seq_len(n_iter)) {
    first <- ((iter - 1L) * n_gpu) %% length(data)
    results <- lapply(seq_len(n_gpu), function(i)
      replica_step(i, data[[(first + i - 1L) %% length(data) + 1L]]))
    loss_history[iter] <- mean(vapply(results, `[[`, numeric(1L), "loss"))

    averaged <- new.env(parent = emptyenv())
    for (name in param_names) {
      parts <- Filter(Negate(is.null), lapply(results, function(r) r$grads[[name]]))
      if (length(parts))
        assign(as.character(replica_params[[1L]][[name]]$id), Reduce(`+`, parts) / n_gpu,
               envir = averaged)
    }
    if (is.finite(max_norm)) clip_grad_norm(replica_params[[1L]], averaged, max_norm)
    opt$step(averaged)
    opt$zero_grad()
    copy_weights_from_first()

    if (!isFALSE(verbose) && (iter == 1L || iter %% as.integer(verbose) == 0L))
      cat(sprintf("[dp_train] iter %4d / %d  loss = %.6f\n", iter, n_iter, loss_history[iter]))
  }
  list(params = replica_params[[1L]], loss_history = loss_history, model = replicas[[1L]])
}

# Training (ggml-opt.h; src/glue_opt.c): the backend scheduler, datasets,
# optimization contexts, results, and the epoch and fit loops. The loops are
# written here over the C primitives, so that R callbacks run between
# batches and an interrupt (Ctrl-C) stops between two batches with every
# handle valid.

GGML_OPT_LOSS_TYPE_MEAN <- 0L
GGML_OPT_LOSS_TYPE_SUM <- 1L
GGML_OPT_LOSS_TYPE_CROSS_ENTROPY <- 2L
GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR <- 3L
GGML_OPT_BUILD_TYPE_FORWARD <- 10L
GGML_OPT_BUILD_TYPE_GRAD <- 20L
GGML_OPT_BUILD_TYPE_OPT <- 30L
GGML_OPT_OPTIMIZER_TYPE_ADAMW <- 0L
GGML_OPT_OPTIMIZER_TYPE_SGD <- 1L
GGML_STATUS_SUCCESS <- 0L
GGML_STATUS_ABORTED <- 1L

# CRAN ggmlR's names for the same constants.
ggml_opt_loss_type_mean <- function() GGML_OPT_LOSS_TYPE_MEAN
ggml_opt_loss_type_sum <- function() GGML_OPT_LOSS_TYPE_SUM
ggml_opt_loss_type_cross_entropy <- function() GGML_OPT_LOSS_TYPE_CROSS_ENTROPY
ggml_opt_loss_type_mse <- function() GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR
ggml_opt_optimizer_type_adamw <- function() GGML_OPT_OPTIMIZER_TYPE_ADAMW
ggml_opt_optimizer_type_sgd <- function() GGML_OPT_OPTIMIZER_TYPE_SGD

# ---- scheduler ----

# CRAN ggmlR's signature; `parallel` is accepted and has no effect (one CPU backend).
ggml_backend_sched_new <- function(backends, parallel = TRUE, graph_size = GGML_DEFAULT_GRAPH_SIZE) {
  if (!is.logical(parallel) || length(parallel) != 1 || is.na(parallel)) stop("'parallel' must be TRUE or FALSE", call. = FALSE)
  if (inherits(backends, "ggml_backend")) backends <- list(backends)
  .Call(C_ggml_backend_sched_new, backends, graph_size)
}
ggml_backend_sched_free <- function(sched) invisible(.Call(C_ggml_backend_sched_free, sched))
ggml_backend_sched_get_n_backends <- function(sched) .Call(C_ggml_backend_sched_get_n_backends, sched)
ggml_backend_sched_get_graph_size <- function(sched) .Call(C_ggml_backend_sched_get_graph_size, sched)
ggml_backend_sched_reset <- function(sched) invisible(.Call(C_ggml_backend_sched_reset, sched))

# ---- datasets ----

ggml_opt_dataset_init <- function(type_data, type_label, ne_datapoint, ne_label, ndata, ndata_shard = 1) {
  .Call(C_ggml_opt_dataset_init, type_data, type_label, ne_datapoint, ne_label, ndata, ndata_shard)
}
ggml_opt_dataset_free <- function(dataset) invisible(.Call(C_ggml_opt_dataset_free, dataset))
ggml_opt_dataset_ndata <- function(dataset) .Call(C_ggml_opt_dataset_ndata, dataset)
ggml_opt_dataset_data <- function(dataset) .Call(C_ggml_opt_dataset_data, dataset)
ggml_opt_dataset_labels <- function(dataset) .Call(C_ggml_opt_dataset_labels, dataset)
ggml_opt_dataset_shuffle <- function(opt_ctx, dataset, idata = -1) {
  invisible(.Call(C_ggml_opt_dataset_shuffle, opt_ctx, dataset, idata))
}
ggml_opt_dataset_get_batch <- function(dataset, data_batch, labels_batch = NULL, ibatch) {
  invisible(.Call(C_ggml_opt_dataset_get_batch, dataset, data_batch, labels_batch, ibatch))
}

# A dataset holding the columns of data (and labels): one call.
ggml_opt_dataset_from_arrays <- function(data, labels = NULL, ndata_shard = 1) {
  as_matrix <- function(x) if (is.null(dim(x))) matrix(x, nrow = 1) else matrix(x, nrow = prod(dim(x)[-length(dim(x))]))
  type_of <- function(x) if (is.integer(x)) GGML_TYPE_I32 else GGML_TYPE_F32
  d <- as_matrix(data)
  l <- if (is.null(labels)) NULL else as_matrix(labels)
  if (!is.null(l) && ncol(l) != ncol(d)) stop("'data' and 'labels' must have as many datapoints (last dimension)", call. = FALSE)
  ds <- ggml_opt_dataset_init(type_of(data), if (is.null(l)) GGML_TYPE_F32 else type_of(labels),
                              nrow(d), if (is.null(l)) 0 else nrow(l), ncol(d), ndata_shard)
  ggml_backend_tensor_set_data(ggml_opt_dataset_data(ds), as.vector(d))
  if (!is.null(l)) ggml_backend_tensor_set_data(ggml_opt_dataset_labels(ds), as.vector(l))
  ds
}

# ---- results ----

ggml_opt_result_init <- function() .Call(C_ggml_opt_result_init)
ggml_opt_result_free <- function(result) invisible(.Call(C_ggml_opt_result_free, result))
ggml_opt_result_reset <- function(result) invisible(.Call(C_ggml_opt_result_reset, result))
ggml_opt_result_ndata <- function(result) .Call(C_ggml_opt_result_ndata, result)
ggml_opt_result_loss <- function(result) {
  v <- .Call(C_ggml_opt_result_loss, result)
  c(loss = v[1], uncertainty = v[2])
}
ggml_opt_result_pred <- function(result) .Call(C_ggml_opt_result_pred, result)
ggml_opt_result_accuracy <- function(result) {
  v <- .Call(C_ggml_opt_result_accuracy, result)
  c(accuracy = v[1], uncertainty = v[2])
}
ggml_opt_result_nonfinite <- function(result) .Call(C_ggml_opt_result_nonfinite, result)

# ---- optimizer parameters ----

.opt_pars_names <- c("alpha", "beta1", "beta2", "eps", "wd", "sgd_alpha", "sgd_wd", "clip_norm")

.opt_pars_list <- function(v) {
  list(adamw = list(alpha = v[1], beta1 = v[2], beta2 = v[3], eps = v[4], wd = v[5]),
       sgd = list(alpha = v[6], wd = v[7]), clip_norm = v[8])
}

# The list form (as ggml_opt_get_default_optimizer_params gives) as the 8
# numbers the C side reads; missing entries take the defaults.
.opt_pars_vector <- function(p) {
  d <- .opt_pars_list(.Call(C_ggml_opt_default_optimizer_params))
  if (!is.list(p)) stop("get_opt_pars must return a list like ggml_opt_get_default_optimizer_params()", call. = FALSE)
  a <- utils::modifyList(d$adamw, as.list(p$adamw))
  s <- utils::modifyList(d$sgd, as.list(p$sgd))
  v <- c(a$alpha, a$beta1, a$beta2, a$eps, a$wd, s$alpha, s$wd, if (is.null(p$clip_norm)) d$clip_norm else p$clip_norm)
  if (length(v) != 8 || !is.numeric(v) || anyNA(v)) stop("optimizer parameters must be single numbers, not NA", call. = FALSE)
  as.double(v)
}

ggml_opt_get_default_optimizer_params <- function(userdata = NULL) {
  .opt_pars_list(.Call(C_ggml_opt_default_optimizer_params))
}
ggml_opt_get_constant_optimizer_params <- function(userdata = NULL) {
  if (is.null(userdata)) ggml_opt_get_default_optimizer_params() else userdata
}

# ---- optimization contexts ----

# Extensions: loss and labels (a loss of the caller's own), param_groups
# (ggml_opt_param_group()s), lr_schedule (ggml_opt_lr_schedule()).
ggml_opt_default_params <- function(backend_sched, loss_type) {
  list(backend_sched = backend_sched, ctx_compute = NULL, inputs = NULL, outputs = NULL,
       loss_type = loss_type, build_type = GGML_OPT_BUILD_TYPE_OPT, opt_period = 1L,
       get_opt_pars = ggml_opt_get_default_optimizer_params, get_opt_pars_ud = NULL,
       optimizer = GGML_OPT_OPTIMIZER_TYPE_ADAMW, apply_nonfinite = FALSE, seed = 0,
       loss = NULL, labels = NULL, param_groups = NULL, lr_schedule = NULL)
}

# Parameters whose learning rate is alpha * lr_scale and weight decay wd * wd_scale.
ggml_opt_param_group <- function(params, lr_scale = 1, wd_scale = 1) {
  if (inherits(params, "ggml_tensor")) params <- list(params)
  if (!is.list(params) || !all(vapply(params, inherits, logical(1), "ggml_tensor"))) {
    stop("'params' must be a tensor or a list of tensors", call. = FALSE)
  }
  structure(list(params = params, lr_scale = as.double(lr_scale), wd_scale = as.double(wd_scale)), class = "ggml_opt_param_group")
}

# The learning rate of step `step` (from 0) as a function of the peak alpha:
# constant, or nanoGPT's linear warmup then cosine decay to min_lr at decay_steps.
ggml_opt_lr_schedule <- function(type = c("constant", "warmup_cosine"), warmup = 0, decay_steps = 0, min_lr = 0) {
  type <- match.arg(type)
  structure(list(type = type, warmup = warmup, decay_steps = decay_steps, min_lr = min_lr), class = "ggml_opt_lr_schedule")
}

.lr_schedule_vector <- function(s) {
  if (!inherits(s, "ggml_opt_lr_schedule")) stop("a schedule must come from ggml_opt_lr_schedule()", call. = FALSE)
  v <- c(match(s$type, c("constant", "warmup_cosine")) - 1, s$warmup, s$decay_steps, s$min_lr)
  if (!is.numeric(v) || length(v) != 4 || anyNA(v)) stop("a schedule's warmup, decay_steps and min_lr must be single numbers", call. = FALSE)
  as.double(v)
}

ggml_opt_lr_schedule_lr <- function(schedule, alpha, step) .Call(C_ggml_opt_lr_schedule_lr, .lr_schedule_vector(schedule), alpha, step)

# Upstream's ggml_opt_init(params), params a list from ggml_opt_default_params,
# or CRAN ggmlR's ggml_opt_init(sched, loss_type, optimizer, opt_period,
# ctx_compute, inputs, outputs).
ggml_opt_init <- function(sched, loss_type, optimizer = GGML_OPT_OPTIMIZER_TYPE_ADAMW, opt_period = 1L,
                          ctx_compute = NULL, inputs = NULL, outputs = NULL) {
  if (is.list(sched) && missing(loss_type)) return(.opt_init(sched))
  .opt_init(.opt_params(sched, loss_type, optimizer, opt_period, ctx_compute, inputs, outputs))
}

.opt_params <- function(sched, loss_type, optimizer, opt_period, ctx_compute, inputs, outputs) {
  given <- !c(is.null(ctx_compute), is.null(inputs), is.null(outputs))
  if (any(given) && !all(given)) {
    stop("ctx_compute, inputs and outputs go together: all three (static graphs) or none ",
         "(the model comes with each ggml_opt_prepare_alloc)", call. = FALSE)
  }
  params <- ggml_opt_default_params(sched, loss_type)
  params[c("optimizer", "opt_period", "ctx_compute", "inputs", "outputs")] <- list(optimizer, opt_period, ctx_compute, inputs, outputs)
  params
}

.opt_init <- function(params) {
  if (!is.list(params)) stop("'params' must be a list from ggml_opt_default_params", call. = FALSE)
  f <- params$get_opt_pars
  if (!is.function(f)) stop("'params$get_opt_pars' must be a function", call. = FALSE)
  get_pars <- function(ud) .opt_pars_vector(f(ud))
  ints <- list(params$loss_type, params$build_type, params$opt_period, params$optimizer, params$apply_nonfinite)
  if (any(vapply(ints, is.null, logical(1)))) stop("'params' is missing entries (use ggml_opt_default_params)", call. = FALSE)
  groups <- params$param_groups
  if (inherits(groups, "ggml_opt_param_group")) groups <- list(groups)
  if (!is.null(groups) && !all(vapply(groups, inherits, logical(1), "ggml_opt_param_group"))) {
    stop("'params$param_groups' must be a list of ggml_opt_param_group()s", call. = FALSE)
  }
  ext <- list(params$loss, params$labels, if (is.null(groups)) NULL else lapply(groups, unclass),
              if (is.null(params$lr_schedule)) NULL else .lr_schedule_vector(params$lr_schedule))
  .Call(C_ggml_opt_init, params$backend_sched, params$ctx_compute, params$inputs, params$outputs, ints,
        get_pars, params$get_opt_pars_ud, if (is.null(params$seed)) 0 else params$seed, ext)
}
ggml_opt_free <- function(opt_ctx) invisible(.Call(C_ggml_opt_free, opt_ctx))
ggml_opt_reset <- function(opt_ctx, optimizer = FALSE) invisible(.Call(C_ggml_opt_reset, opt_ctx, optimizer))
ggml_opt_static_graphs <- function(opt_ctx) .Call(C_ggml_opt_static_graphs, opt_ctx)
ggml_opt_prepare_alloc <- function(opt_ctx, ctx_compute, graph, inputs, outputs) {
  invisible(.Call(C_ggml_opt_prepare_alloc, opt_ctx, ctx_compute, graph, inputs, outputs))
}
ggml_opt_inputs <- function(opt_ctx) .Call(C_ggml_opt_tensor, opt_ctx, "inputs")
ggml_opt_outputs <- function(opt_ctx) .Call(C_ggml_opt_tensor, opt_ctx, "outputs")
ggml_opt_labels <- function(opt_ctx) .Call(C_ggml_opt_tensor, opt_ctx, "labels")
ggml_opt_loss <- function(opt_ctx) .Call(C_ggml_opt_tensor, opt_ctx, "loss")
ggml_opt_pred <- function(opt_ctx) .Call(C_ggml_opt_tensor, opt_ctx, "pred")
ggml_opt_ncorrect <- function(opt_ctx) .Call(C_ggml_opt_tensor, opt_ctx, "ncorrect")
ggml_opt_grad_acc <- function(opt_ctx, node) .Call(C_ggml_opt_grad_acc, opt_ctx, node)
ggml_opt_grad_m <- function(opt_ctx, node) .Call(C_ggml_opt_grad_moment, opt_ctx, node, "m")
ggml_opt_grad_v <- function(opt_ctx, node) .Call(C_ggml_opt_grad_moment, opt_ctx, node, "v")
ggml_opt_get_steps <- function(opt_ctx) .Call(C_ggml_opt_get_steps, opt_ctx)
ggml_opt_set_steps <- function(opt_ctx, steps) invisible(.Call(C_ggml_opt_set_steps, opt_ctx, steps))
ggml_opt_last_grad_norm <- function(opt_ctx) .Call(C_ggml_opt_last_grad_norm, opt_ctx)
ggml_opt_context_optimizer_type <- function(opt_ctx) .Call(C_ggml_opt_context_optimizer_type, opt_ctx)
ggml_opt_optimizer_name <- function(optimizer) .Call(C_ggml_opt_optimizer_name, optimizer)

ggml_opt_alloc <- function(opt_ctx, backward = TRUE) invisible(.Call(C_ggml_opt_alloc, opt_ctx, backward))
# Returns GGML_STATUS_SUCCESS, or GGML_STATUS_ABORTED (with a warning) when
# the loss or a gradient was not finite; other failures are errors.
ggml_opt_eval <- function(opt_ctx, result = NULL) {
  st <- .Call(C_ggml_opt_eval, opt_ctx, result)
  if (st == GGML_STATUS_ABORTED) warning(ggml_last_error(), call. = FALSE)
  invisible(st)
}

# ---- epochs and fitting ----

.now_us <- function() as.numeric(Sys.time()) * 1e6

.hms <- function(s) {
  s <- max(0, round(s))
  sprintf("%02d:%02d:%02d", s %/% 3600, s %/% 60 %% 60, s %% 60)
}

# Progress of one part (train or validation) of an epoch, with the same
# arguments as the C callback: a utils::txtProgressBar followed by the loss,
# the accuracy, the elapsed time and the ETA.
ggml_opt_epoch_callback_progress_bar <- function(train, opt_ctx, dataset, result, ibatch, ibatch_max, t_start_us) {
  .progress_bar(train, result, ibatch, ibatch_max, t_start_us)
}

# The progress bar; with tokens_per_batch > 0 also the tokens per second.
.progress_bar <- function(train, result, ibatch, ibatch_max, t_start_us, tokens_per_batch = 0) {
  key <- if (train) "train" else "val"
  if (ibatch == 1 || is.null(.progress[[key]])) {
    .progress[[key]] <- utils::txtProgressBar(min = 0, max = max(1, ibatch_max), style = 3, width = 30)
  }
  utils::setTxtProgressBar(.progress[[key]], ibatch)
  loss <- ggml_opt_result_loss(result)
  acc <- ggml_opt_result_accuracy(result)
  elapsed <- (.now_us() - t_start_us) / 1e6
  eta <- if (ibatch > 0) elapsed * (ibatch_max - ibatch) / ibatch else 0
  cat(sprintf(" %s loss=%.5f+-%.5f%s%s t=%s ETA %s ", key, loss[[1]], loss[[2]],
              if (is.na(acc[[1]])) "" else sprintf(" acc=%.2f%%", 100 * acc[[1]]),
              if (tokens_per_batch > 0 && elapsed > 0) sprintf(" %.0f tok/s", ibatch * tokens_per_batch / elapsed) else "",
              .hms(elapsed), .hms(eta)))
  if (ibatch == ibatch_max) {
    close(.progress[[key]])
    .progress[[key]] <- NULL
  }
  invisible(NULL)
}
.progress <- new.env(parent = emptyenv())

# The batches run in C, callback_interval at a time (within the training
# and the evaluation part); the callbacks see the last batch of each run.
ggml_opt_epoch <- function(opt_ctx, dataset, result_train = NULL, result_eval = NULL, idata_split = -1,
                           callback_train = NULL, callback_eval = NULL, callback_interval = 1L) {
  # CRAN ggmlR's TRUE / FALSE: the progress bar or none
  as_callback <- function(cb) if (isTRUE(cb)) ggml_opt_epoch_callback_progress_bar else if (isFALSE(cb)) NULL else cb
  callback_train <- as_callback(callback_train)
  callback_eval <- as_callback(callback_eval)
  inputs <- ggml_opt_inputs(opt_ctx)
  ndata <- ggml_opt_dataset_ndata(dataset)
  nb <- ggml_tensor_shape(inputs)[2]
  if (ndata %% nb != 0) stop(sprintf("ggml_opt_epoch: %g datapoints do not fill whole batches of %g", ndata, nb), call. = FALSE)
  if (idata_split < 0) idata_split <- ndata
  if (idata_split > ndata || idata_split %% nb != 0) {
    stop(sprintf("ggml_opt_epoch: idata_split %g must be <= %g and a multiple of the batch size %g", idata_split, ndata, nb),
         call. = FALSE)
  }
  callback_interval <- .check_count(callback_interval, "callback_interval")
  nbatches <- ndata %/% nb
  split <- idata_split %/% nb
  worst <- GGML_STATUS_SUCCESS
  t_start <- .now_us()
  ib <- 0
  while (ib < nbatches) {
    train <- ib < split
    if (ib == split) t_start <- .now_us()
    n_run <- min(callback_interval, (if (train) split else nbatches) - ib)
    result <- if (train) result_train else result_eval
    worst <- max(worst, .Call(C_ggml_opt_epoch_batches, opt_ctx, dataset, result, ib, n_run, train))
    ib <- ib + n_run
    cb <- if (train) callback_train else callback_eval
    if (!is.null(cb) && identical(cb(train, opt_ctx, dataset, result, if (train) ib else ib - split,
                                     if (train) split else nbatches - split, t_start), FALSE)) {
      return(invisible(structure(worst, stopped = TRUE)))
    }
  }
  invisible(worst)
}

# Fit outputs(inputs) to the dataset; see ?ggml_opt_fit. Returns a data
# frame of the per-epoch losses and accuracies (invisibly).
ggml_opt_fit <- function(backend_sched, ctx_compute, inputs, outputs, dataset, loss_type = GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR,
                         optimizer = GGML_OPT_OPTIMIZER_TYPE_ADAMW,
                         get_opt_pars = ggml_opt_get_default_optimizer_params,
                         nepoch = 1, nbatch_logical = ggml_tensor_shape(inputs)[2], val_split = 0, silent = FALSE,
                         callback = if (silent) NULL else ggml_opt_epoch_callback_progress_bar,
                         epoch_callback = NULL, seed = 0, loss = NULL, labels = NULL, lr_schedule = NULL, param_groups = NULL,
                         callback_interval = 1L) {
  ndata <- ggml_opt_dataset_ndata(dataset)
  nb <- ggml_tensor_shape(inputs)[2]
  if (!is.numeric(nbatch_logical) || length(nbatch_logical) != 1 || is.na(nbatch_logical) || nbatch_logical <= 0 ||
      ndata %% nbatch_logical != 0 || nbatch_logical %% nb != 0) {
    stop(sprintf("ggml_opt_fit: nbatch_logical must divide ndata %g and be a multiple of the batch size %g", ndata, nb),
         call. = FALSE)
  }
  if (!is.numeric(val_split) || length(val_split) != 1 || is.na(val_split) || val_split < 0 || val_split >= 1) {
    stop("ggml_opt_fit: val_split must be in [0, 1)", call. = FALSE)
  }
  if (!is.numeric(nepoch) || length(nepoch) != 1 || is.na(nepoch) || nepoch < 0) stop("ggml_opt_fit: nepoch must be >= 0", call. = FALSE)
  nbatches_logical <- ndata %/% nbatch_logical
  idata_split <- floor((1 - val_split) * nbatches_logical) * nbatch_logical
  epoch <- 1
  params <- ggml_opt_default_params(backend_sched, loss_type)
  params$ctx_compute <- ctx_compute
  params$inputs <- inputs
  params$outputs <- outputs
  params$opt_period <- nbatch_logical %/% nb
  params$optimizer <- optimizer
  params$get_opt_pars <- function(ud) get_opt_pars(epoch)  # receives the current epoch, from 1
  params$seed <- seed
  params[c("loss", "labels", "lr_schedule", "param_groups")] <- list(loss, labels, lr_schedule, param_groups)  # NULL entries kept (`$<-` would drop them)
  opt_ctx <- .opt_init(params)
  on.exit(ggml_opt_free(opt_ctx))
  result_train <- ggml_opt_result_init()
  on.exit(ggml_opt_result_free(result_train), add = TRUE)
  result_val <- ggml_opt_result_init()
  on.exit(ggml_opt_result_free(result_val), add = TRUE)
  if (nbatch_logical < ndata) ggml_opt_dataset_shuffle(opt_ctx, dataset, -1)
  history <- data.frame(epoch = numeric(0), train_loss = numeric(0), train_accuracy = numeric(0),
                        val_loss = numeric(0), val_accuracy = numeric(0))
  worst <- GGML_STATUS_SUCCESS
  while (epoch <= nepoch) {
    if (nbatch_logical < idata_split) ggml_opt_dataset_shuffle(opt_ctx, dataset, idata_split)
    ggml_opt_result_reset(result_train)
    ggml_opt_result_reset(result_val)
    if (!silent) cat(sprintf("ggml_opt_fit: epoch %04d/%04d:\n", as.integer(epoch), as.integer(nepoch)))
    st <- ggml_opt_epoch(opt_ctx, dataset, result_train, result_val, idata_split, callback, callback, callback_interval)
    worst <- max(worst, st)
    row <- data.frame(epoch = epoch, train_loss = ggml_opt_result_loss(result_train)[[1]],
                      train_accuracy = ggml_opt_result_accuracy(result_train)[[1]],
                      val_loss = if (idata_split < ndata) ggml_opt_result_loss(result_val)[[1]] else NA_real_,
                      val_accuracy = if (idata_split < ndata) ggml_opt_result_accuracy(result_val)[[1]] else NA_real_)
    history <- rbind(history, row)
    if (!silent) cat("\n")
    if (isTRUE(attr(st, "stopped"))) break
    if (!is.null(epoch_callback) && identical(epoch_callback(epoch, row, opt_ctx), FALSE)) break
    epoch <- epoch + 1
  }
  if (worst == GGML_STATUS_ABORTED) warning("ggml_opt_fit: some batches had a loss or gradient that was not finite", call. = FALSE)
  invisible(history)
}

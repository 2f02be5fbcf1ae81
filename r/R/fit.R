# fit(), evaluate() and predict() of the sequential model. fit() builds the
# training graph once and trains through ggml-opt (ggml_opt_fit: the batches
# run in C, ten in one call; R is called between those runs for progress,
# between batches only for dropout masks, and between epochs for the callbacks). Callbacks are CRAN ggmlR's: lists with
# on_epoch_begin / on_epoch_end(epoch, logs, state) (callbacks.R).

# Rows of x (or the first dimension of an array) are datapoints: x[N, d1, ..., dk]
# becomes the ggml data [dk, ..., d1, N].
.n_rows <- function(x) if (is.null(dim(x))) length(x) else dim(x)[1]

# Datapoints of x, or of a list of arrays (one per input of a functional
# model), which must agree.
.n_datapoints <- function(x) {
  if (!.is_input_list(x)) return(.n_rows(x))
  n <- vapply(x, .n_rows, numeric(1))
  if (length(n) == 0 || any(n != n[1])) stop("the arrays of 'x' must have as many rows (datapoints)", call. = FALSE)
  n[1]
}
.is_input_list <- function(x) is.list(x) && !is.data.frame(x)

# Shapes of a model's inputs (one for a sequential model).
.input_shapes <- function(model) if (.is_graph(model)) lapply(model$inputs, function(n) n$config$shape) else list(model$input_shape)

# Shapes of a model's outputs and the layer computing its (last) output
# (NULL when a merge does).
.output_shapes <- function(model) {
  if (!.is_graph(model)) return(list(model$layers[[length(model$layers)]]$output_shape))
  lapply(model$graph[model$output_nodes], `[[`, "shape")
}
.output_layer <- function(model) {
  if (!.is_graph(model)) return(model$layers[[length(model$layers)]])
  e <- model$graph[[model$output_nodes[length(model$output_nodes)]]]
  if (is.null(e$layer)) NULL else model$layers[[e$layer]]
}

# The data of x for the model's inputs, datapoint after datapoint: each
# datapoint's inputs one after the other, each in ggml order.
.model_data <- function(model, x) {
  shapes <- .input_shapes(model)
  if (!.is_input_list(x)) {
    if (length(shapes) > 1) stop(sprintf("'x' must be a list of %d arrays, one per input", length(shapes)), call. = FALSE)
    x <- list(x)
  }
  if (length(x) != length(shapes)) stop(sprintf("'x' has %d arrays but the model has %d inputs", length(x), length(shapes)), call. = FALSE)
  n <- .n_datapoints(x)
  data <- do.call(rbind, lapply(seq_along(shapes), function(k) matrix(.to_ggml_data(x[[k]], shapes[[k]]), ncol = n)))
  if (.input_is_ids(model)) {
    vocab <- min(vapply(Filter(function(l) l$type == "embedding", model$layers), function(l) l$config$vocab_size, integer(1)))
    if (any(data < 0 | data >= vocab | data != floor(data))) stop(sprintf("'x' must hold token ids 0..%d", vocab - 1), call. = FALSE)
  }
  as.vector(data)
}

.to_ggml_data <- function(x, input_shape) {
  if (!is.numeric(x)) stop("'x' must be a numeric matrix or array", call. = FALSE)
  if (anyNA(x)) stop("'x' has NA values", call. = FALSE)
  d <- if (is.null(dim(x))) c(length(x), 1L) else dim(x)
  if (!identical(as.integer(d[-1]), as.integer(input_shape))) {
    stop(sprintf("'x' has datapoints of shape (%s) but the model's input_shape is (%s)",
                 paste(d[-1], collapse = ", "), paste(input_shape, collapse = ", ")), call. = FALSE)
  }
  as.vector(aperm(array(x, d), c(rev(seq_along(d)[-1]), 1)))
}

# x then xv along the first dimension (vectors: concatenated).
.bind_rows <- function(x, xv) {
  if (.is_input_list(x)) {
    if (!.is_input_list(xv) || length(xv) != length(x)) stop("'validation_data' must have one array per input, as 'x'", call. = FALSE)
    return(Map(.bind_rows, x, xv))
  }
  if (is.null(dim(x))) return(c(x, xv))
  if (!identical(dim(x)[-1], dim(xv)[-1])) stop("'validation_data' must have datapoints of the shape of 'x'", call. = FALSE)
  aperm(array(c(aperm(x), aperm(xv)), c(rev(dim(x)[-1]), .n_rows(x) + .n_rows(xv))))
}

.as_label_matrix <- function(y) if (is.null(dim(y))) matrix(y, ncol = 1) else as.matrix(y)

.check_compiled <- function(model) {
  if (!inherits(model, "ggml_sequential_model")) stop("'model' must be a sequential model", call. = FALSE)
  if (!isTRUE(model$compiled)) stop("the model must be compiled (ggml_compile) before it is used", call. = FALSE)
  .check_alive(model)
}

# A compiled model whose ggml memory is gone: read back by readRDS (or load)
# after saveRDS (or save), which keep no C memory, or its context freed.
.model_handles <- function(model) {
  c(list(model$compilation$ctx_weights, model$compilation$backend),
    unlist(lapply(model$layers, `[[`, "weights"), recursive = FALSE, use.names = FALSE))
}
.check_alive <- function(model) {
  h <- Filter(Negate(is.null), .model_handles(model))
  if (!all(vapply(h, .valid, logical(1)))) {
    stop("the model's ggml memory is gone: it was saved with saveRDS (or save) and read back, which keeps no ggml ",
         "memory, or its context was freed. Save a model with ggml_save_model() and read it back with ggml_load_model()",
         call. = FALSE)
  }
  invisible(model)
}

# The methods take ... for the generics' sake; an argument they do not know
# (CRAN's class_weight, sample_weight) is an error, not silently dropped.
.no_extra_args <- function(...) {
  if (...length() == 0) return(invisible(NULL))
  a <- names(list(...))
  if (is.null(a)) a <- character(...length())
  stop(sprintf("unsupported argument(s): %s", paste(ifelse(nzchar(a), a, "<unnamed>"), collapse = ", ")), call. = FALSE)
}

# Weights for cross-entropy, as labels scaled per datapoint: CE is linear in
# the labels, so CE(p, w y) = w CE(p, y). class_weight is named by the
# classes from 0 (CRAN's convention), sample_weight has one weight per row.
.weighted_labels <- function(y, class_weight, sample_weight, ce) {
  if (is.null(class_weight) && is.null(sample_weight)) return(y)
  if (!is.null(class_weight) && !is.null(sample_weight)) stop("give class_weight or sample_weight, not both", call. = FALSE)
  if (!ce) stop("class_weight and sample_weight need the cross-entropy loss", call. = FALSE)
  w <- if (!is.null(sample_weight)) {
    if (length(sample_weight) != nrow(y)) stop(sprintf("sample_weight must have length %d, one weight per datapoint", nrow(y)), call. = FALSE)
    sample_weight
  } else {
    unlist(class_weight)[as.character(max.col(y, ties.method = "first") - 1)]
  }
  if (!is.numeric(w) || anyNA(w) || any(w < 0)) stop("the weights must be numbers >= 0 covering every datapoint's class", call. = FALSE)
  y * as.vector(w)
}

.is_ce <- function(model) model$compilation$loss %in% c("categorical_crossentropy", "crossentropy", "cross_entropy")

.input_is_ids <- function(model) {
  if (.is_graph(model)) identical(model$inputs[[1]]$config$dtype, "int32") else identical(model$layers[[1]]$type, "embedding")
}

# Token ids in, a sequence out (c(T, classes)): trained on the next token.
.is_sequence_model <- function(model) !.is_graph(model) && .input_is_ids(model) && length(model$layers[[length(model$layers)]]$output_shape) == 2

.check_ids <- function(x, vocab, what) {
  if (!is.numeric(x) || anyNA(x) || any(x != floor(x)) || any(x < 0 | x >= vocab)) {
    stop(sprintf("'%s' must hold token ids 0..%d without NA", what, vocab - 1), call. = FALSE)
  }
  x
}

# Windows [T, n] of a sequence model's inputs and targets (the next tokens):
# from a long vector of ids (windows of T + 1 tokens every `stride` tokens,
# stride T by default), a matrix of windows [n, T + 1], or a matrix [n, T]
# with the targets y [n, T].
.token_windows <- function(model, x, y, stride) {
  t_len <- model$input_shape[1]
  vocab <- model$layers[[1]]$config$vocab_size
  .check_ids(x, vocab, "x")
  if (is.null(dim(x))) {
    if (!is.null(y)) stop("'y' must be NULL for a vector of tokens: the targets are the next tokens", call. = FALSE)
    stride <- if (is.null(stride)) t_len else .check_count(stride, "stride")
    if (length(x) < t_len + 1) stop(sprintf("'x' has %d tokens, fewer than a window of %d + 1", length(x), t_len), call. = FALSE)
    idx <- outer(seq_len(t_len) - 1, seq(1, length(x) - t_len, by = stride), "+")
    return(list(x = matrix(x[idx], t_len), y = matrix(x[idx + 1], t_len), n = ncol(idx)))
  }
  if (!is.null(stride)) stop("'stride' is for a vector of tokens, not a matrix of windows", call. = FALSE)
  if (length(dim(x)) != 2) stop("'x' must be a vector of tokens or a matrix of windows", call. = FALSE)
  if (is.null(y) && ncol(x) == t_len + 1) return(list(x = t(x[, -(t_len + 1), drop = FALSE]), y = t(x[, -1, drop = FALSE]), n = nrow(x)))
  if (ncol(x) != t_len || is.null(y) || !identical(dim(y), dim(x))) {
    stop(sprintf("'x' must be windows [n, %d] (inputs and the next token), or [n, %d] with targets 'y' of the same shape",
                 t_len + 1, t_len), call. = FALSE)
  }
  list(x = t(x), y = t(.check_ids(y, model$layers[[length(model$layers)]]$output_shape[2], "y")), n = nrow(x))
}

# The training data as ggml-opt wants it: data and labels as vectors of
# whole datapoints (ggml order), their types and sizes per datapoint.
# Feature models: rows of x and y (one-hot or values); sequence models
# (.is_sequence_model): token windows whose labels are the next tokens.
.fit_data <- function(model, x, y, validation_data, validation_split, class_weight, sample_weight, stride) {
  if (.is_sequence_model(model)) {
    if (!is.null(class_weight) || !is.null(sample_weight)) stop("class_weight and sample_weight are not supported for token sequences", call. = FALSE)
    w <- .token_windows(model, x, y, stride)
    if (!is.null(validation_data)) {
      if (!is.list(validation_data) || length(validation_data) < 1) stop("'validation_data' must be a list(x_val) or list(x_val, y_val)", call. = FALSE)
      v <- .token_windows(model, validation_data[[1]], if (length(validation_data) > 1) validation_data[[2]], stride)
      validation_split <- v$n / (w$n + v$n)
      w <- list(x = cbind(w$x, v$x), y = cbind(w$y, v$y), n = w$n + v$n)
    }
    t_len <- model$input_shape[1]
    return(list(data = as.vector(w$x), labels = as.vector(w$y), n = w$n, ne_data = t_len, ne_label = t_len,
                type_data = GGML_TYPE_I32, type_label = GGML_TYPE_I32, val_split = validation_split))
  }
  y <- .as_label_matrix(y)
  if (.n_datapoints(x) != nrow(y)) stop("'x' and 'y' must have as many rows (datapoints)", call. = FALSE)
  y <- .weighted_labels(y, class_weight, sample_weight, .is_ce(model))
  if (!is.null(validation_data)) {
    if (!is.list(validation_data) || length(validation_data) < 2) stop("'validation_data' must be a list(x_val, y_val)", call. = FALSE)
    yv <- .as_label_matrix(validation_data[[2]])
    n_val <- .n_datapoints(validation_data[[1]])
    validation_split <- n_val / (nrow(y) + n_val)
    x <- .bind_rows(x, validation_data[[1]])
    y <- rbind(y, yv)
  }
  if (!is.numeric(y) || anyNA(y)) stop("'y' must be numeric without NA", call. = FALSE)
  out <- .output_shapes(model)
  out <- out[[length(out)]]
  if (ncol(y) != out[1] || length(out) != 1) {
    stop(sprintf("'y' has %d columns but the model's output shape is (%s)", ncol(y), paste(out, collapse = ", ")), call. = FALSE)
  }
  list(data = .model_data(model, x), labels = as.vector(t(y)), n = nrow(y), ne_data = sum(vapply(.input_shapes(model), prod, numeric(1))),
       ne_label = ncol(y), type_data = if (.input_is_ids(model)) GGML_TYPE_I32 else GGML_TYPE_F32, type_label = GGML_TYPE_F32,
       val_split = validation_split)
}

# The progress bar, early stopping and the learning-rate schedules act
# through `state`; train masks of the dropout sites are redrawn before every
# training batch and set to 1 for validation batches. Sequence models train
# on cross-entropy against the next token (I32 labels) at every position.
# As in CRAN ggmlR, a backend scheduler first (or no model, all arguments
# named) is ggml_fit_opt's low-level training.
ggml_fit <- function(model, ...) {
  if (missing(model)) return(ggml_fit_opt(...))
  UseMethod("ggml_fit")
}

ggml_fit.ggml_backend_sched <- function(model, ...) ggml_fit_opt(model, ...)

ggml_fit.ggml_sequential_model <- function(model, x, y = NULL, epochs = 1, batch_size = 32, validation_split = 0,
                                           validation_data = NULL, verbose = 1, callbacks = list(),
                                           class_weight = NULL, sample_weight = NULL, stride = NULL, clip_norm = 0,
                                           lr_schedule = NULL, ...) {
  .no_extra_args(...)
  .check_compiled(model)
  epochs <- .check_count(epochs, "epochs")
  batch_size <- .check_count(batch_size, "batch_size")
  if (!is.numeric(clip_norm) || length(clip_norm) != 1 || is.na(clip_norm) || clip_norm < 0) {
    stop("'clip_norm' must be a number >= 0 (0: no clipping)", call. = FALSE)
  }
  if (!is.null(lr_schedule) && !inherits(lr_schedule, "ggml_opt_lr_schedule")) {
    stop("'lr_schedule' must be NULL or come from ggml_opt_lr_schedule()", call. = FALSE)
  }
  .check_callbacks(callbacks)
  fd <- .fit_data(model, x, y, validation_data, validation_split, class_weight, sample_weight, stride)
  seq_model <- .is_sequence_model(model)
  n <- fd$n
  batch_size <- min(batch_size, n)
  usable <- n %/% batch_size * batch_size
  if (usable < n && verbose > 0) message(sprintf("fit: the last %d datapoint(s) do not fill a batch of %d and are left out", n - usable, batch_size))
  ds <- ggml_opt_dataset_init(fd$type_data, fd$type_label, fd$ne_data, fd$ne_label, usable, 1)
  on.exit(ggml_opt_dataset_free(ds))
  ggml_backend_tensor_set_data(ggml_opt_dataset_data(ds), fd$data[seq_len(usable * fd$ne_data)])
  ggml_backend_tensor_set_data(ggml_opt_dataset_labels(ds), fd$labels[seq_len(usable * fd$ne_label)])

  # the graph: inputs, labels of a sequence model, dropout masks and the
  # attention layers' positions and mask (in memory, as ggml-opt wants its
  # inputs), outputs (logits for cross-entropy) in a no_alloc context
  sites <- unlist(lapply(model$layers, .dropout_sites), recursive = FALSE)
  t_len <- if (.is_graph(model)) 0 else model$input_shape[1]
  io_bytes <- 4 * batch_size * (fd$ne_data + if (seq_model) fd$ne_label else 0) +
    4 * batch_size * sum(vapply(sites, function(d) prod(d$shape), numeric(1))) + .attention_inputs_bytes(t_len)
  io <- ggml_init(io_bytes + (length(sites) + 2) * (ggml_tensor_overhead() + 64) + 1024)
  on.exit(ggml_free(io), add = TRUE)
  ctx <- ggml_init(64 * 1024^2, no_alloc = TRUE)
  on.exit(ggml_free(ctx), add = TRUE)
  # ggml-opt takes the batch as the inputs' second dimension: [datapoint, batch], reshaped for the layers
  inputs <- ggml_new_tensor_2d(io, fd$type_data, fd$ne_data, batch_size)
  masks <- lapply(sites, function(d) ggml_new_tensor(io, GGML_TYPE_F32, length(d$shape) + 1, c(rev(d$shape), batch_size)))
  set_masks <- function(train) {
    for (k in names(sites)) {
      n_el <- ggml_nelements(masks[[k]])
      rate <- sites[[k]]$rate
      ggml_backend_tensor_set_data(masks[[k]], if (train) (stats::runif(n_el) >= rate) / (1 - rate) else rep(1, n_el))
    }
  }
  # the parameters: copies of the trainable layers' weights, copied back after training
  train <- Filter(function(i) model$layers[[i]]$trainable && length(model$layers[[i]]$weights) > 0, seq_along(model$layers))
  if (length(train) == 0) stop("the model has no trainable weights (see ggml_unfreeze_weights)", call. = FALSE)
  ws <- unlist(lapply(model$layers[train], function(l) l$weights[.trained_weight_names(l)]))
  pctx <- ggml_init(sum(vapply(ws, ggml_nbytes, numeric(1))) + length(ws) * (ggml_tensor_overhead() + 64) + 1024)
  on.exit(ggml_free(pctx), add = TRUE)
  tm <- model
  no_decay <- list()  # biases and norm gains: a parameter group without weight decay
  for (i in train) {
    for (k in .trained_weight_names(model$layers[[i]])) {
      w <- model$layers[[i]]$weights[[k]]
      p <- ggml_dup_tensor(pctx, w)
      ggml_set_name(p, ggml_get_name(w))
      ggml_backend_tensor_set_data(p, ggml_backend_tensor_get_data(w))
      ggml_set_param(p)
      tm$layers[[i]]$weights[[k]] <- p
      if (.is_bias_or_gain(k)) no_decay[[length(no_decay) + 1]] <- p
    }
  }
  adamw <- model$compilation$adamw
  param_groups <- if (length(no_decay) > 0 && !is.null(adamw) && adamw$wd > 0) list(ggml_opt_param_group(no_decay, wd_scale = 0))
  ce <- .is_ce(model)
  x_in <- if (.is_graph(model)) inputs else .reshape_batch(ctx, inputs, model$input_shape, batch_size)
  outputs <- .build_forward(tm, ctx, x_in, masks = if (length(sites) > 0) masks, logits = ce || seq_model, mem_ctx = io,
                            training = TRUE)
  labels <- loss <- NULL
  if (seq_model) {  # mean over the T * batch positions of -log softmax(logits)[next token]
    labels <- ggml_new_tensor_2d(io, GGML_TYPE_I32, t_len, batch_size)
    outputs <- ggml_reshape_2d(ctx, outputs, ggml_tensor_shape(outputs)[1], t_len * batch_size)
    loss <- ggml_cross_entropy_loss(ctx, outputs, ggml_reshape_1d(ctx, labels, t_len * batch_size))
  }

  sgd <- model$compilation$optimizer == "sgd"
  lr_ud <- .default_lr_handle()
  if (!is.null(model$compilation$learning_rate)) {
    ggml_opt_set_lr(lr_ud, adamw_lr = model$compilation$learning_rate, sgd_lr = model$compilation$learning_rate)
  }
  state <- .callback_state(lr_ud, epochs)
  batch_cb <- function(train, opt_ctx, dataset, result, ibatch, ibatch_max, t_start_us) {
    if (length(sites) > 0) set_masks(train && ibatch < ibatch_max)
    if (verbose > 0) .progress_bar(train, result, ibatch, ibatch_max, t_start_us, if (seq_model) batch_size * t_len else 0)
    invisible(NULL)
  }
  # R between batches only where dropout masks need redrawing; otherwise
  # the batches run in C, .fit_log_interval at a time, R seeing their ends
  callback_interval <- if (length(sites) > 0) 1L else .fit_log_interval
  logs_of <- function(row) list(loss = row$train_loss, accuracy = row$train_accuracy, val_loss = row$val_loss, val_accuracy = row$val_accuracy)
  epoch_cb <- .callbacks_epoch_hook(callbacks, state, logs_of, before_next = function() if (length(sites) > 0) set_masks(TRUE))
  .run_callbacks(callbacks, "on_epoch_begin", 1, list(), state)
  if (length(sites) > 0) set_masks(TRUE)
  loss_type <- if (seq_model) GGML_OPT_LOSS_TYPE_MEAN else if (ce) GGML_OPT_LOSS_TYPE_CROSS_ENTROPY else GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR
  h <- ggml_opt_fit(model$compilation$sched, ctx, inputs, outputs, ds, loss_type,
                    optimizer = if (sgd) GGML_OPT_OPTIMIZER_TYPE_SGD else GGML_OPT_OPTIMIZER_TYPE_ADAMW,
                    get_opt_pars = function(epoch) .lr_opt_pars(state$lr_ud, clip_norm, adamw), nepoch = epochs,
                    nbatch_logical = batch_size, val_split = fd$val_split,
                    silent = verbose <= 0, callback = batch_cb, epoch_callback = epoch_cb, loss = loss, labels = labels,
                    lr_schedule = lr_schedule, param_groups = param_groups, callback_interval = callback_interval)
  for (i in train) {
    for (w in .trained_weight_names(model$layers[[i]])) {
      ggml_backend_tensor_set_data(model$layers[[i]]$weights[[w]], ggml_backend_tensor_get_data(tm$layers[[i]]$weights[[w]]))
    }
  }
  if (!seq_model) .set_moving_stats(model, x)
  model$history <- structure(list(train_loss = h$train_loss, train_accuracy = h$train_accuracy, val_loss = h$val_loss,
                                  val_accuracy = h$val_accuracy, epochs = h$epoch), class = "ggml_history")
  invisible(model)
}

# Batches between fit()'s progress reports (the C main job logs every 10 steps).
.fit_log_interval <- 10L

# The moving statistics of each batch_norm layer, in order: the mean and
# population variance per channel of the layer's inputs over x, computed by
# the model up to that layer (earlier batch_norm layers using theirs).
.set_moving_stats <- function(model, x) {
  for (i in which(vapply(model$layers, function(l) l$type == "batch_norm", logical(1)))) {
    l <- model$layers[[i]]
    v <- matrix(as.numeric(.layer_inputs(model, i, x)), ncol = l$input_shape[length(l$input_shape)])  # a channel per column
    mu <- colMeans(v)
    ggml_backend_tensor_set_data(l$weights$moving_mean, mu)
    ggml_backend_tensor_set_data(l$weights$moving_var, colMeans(sweep(v, 2, mu)^2))
  }
  invisible(model)
}

# The inputs of layer i (its first use in a graph) for the datapoints x, as
# predict() returns them: [n, input_shape].
.layer_inputs <- function(model, i, x) {
  probe <- model
  if (.is_graph(model)) {
    parent <- model$graph[[which(vapply(model$graph, function(e) identical(e$layer, i), logical(1)))[1]]]$parents[1]
    e <- model$graph[[parent]]
    if (e$kind == "input") return(if (.is_input_list(x)) x[[e$input]] else x)
    probe$output_nodes <- parent
  } else {
    if (i == 1) return(x)
    probe$layers <- model$layers[seq_len(i - 1)]
  }
  ggml_predict(probe, x)
}

fit.ggml_sequential_model <- function(object, x, y = NULL, epochs = 1L, batch_size = 32L, validation_split = 0,
                                      validation_data = NULL, verbose = 1L, callbacks = list(), ...) {
  ggml_fit(object, x = x, y = y, epochs = epochs, batch_size = batch_size, validation_split = validation_split,
           validation_data = validation_data, verbose = verbose, callbacks = callbacks, ...)
}

# Elements of a layer's intermediate results for one datapoint (a bound):
# its output, or for the transformer layers their projections, heads and
# feed-forward values.
.layer_act_elems <- function(l) {
  t_len <- l$input_shape[1]
  switch(l$type,
    multihead_attention = , transformer_block = {
      heads <- (l$config$num_heads + 2 * l$config$num_kv_heads) * .key_dim(l)
      t_len * (12 * l$input_shape[2] + 4 * heads + 4 * (if (is.null(l$config$ff_dim)) 0 else l$config$ff_dim) + 4 * l$config$num_heads)
    },
    lm_head = t_len * (3 * l$input_shape[2] + l$config$vocab_size),
    prod(l$output_shape))
}

# The forward pass on batches of x in a context of their own (no dropout).
ggml_predict <- function(model, ...) UseMethod("ggml_predict")

ggml_predict.ggml_sequential_model <- function(model, x, batch_size = 32L, verbose = 0, ...) {
  .no_extra_args(...)
  .check_compiled(model)
  batch_size <- .check_count(batch_size, "batch_size")
  data <- .model_data(model, x)
  n <- .n_datapoints(x)
  per <- sum(vapply(.input_shapes(model), prod, numeric(1)))
  out_shapes <- .output_shapes(model)
  acts <- .act_elems(model) + per
  t_len <- if (.is_graph(model)) 0 else model$input_shape[1]
  n_tensors <- length(model$layers) + length(model$graph)
  out <- lapply(out_shapes, function(s) vector("list", 0))
  for (start in seq(1, n, by = batch_size)) {
    nb <- min(batch_size, n - start + 1)
    ctx <- ggml_init(8 * nb * acts + 64 * n_tensors * (ggml_tensor_overhead() + 64) + ggml_graph_overhead() +
                     .attention_inputs_bytes(t_len) + 1024^2)
    type <- if (.input_is_ids(model)) GGML_TYPE_I32 else GGML_TYPE_F32
    x_t <- if (.is_graph(model)) ggml_new_tensor_2d(ctx, type, per, nb)
           else ggml_new_tensor(ctx, type, length(model$input_shape) + 1, c(rev(model$input_shape), nb))
    ggml_backend_tensor_set_data(x_t, data[(start - 1) * per + seq_len(nb * per)])
    ys <- if (.is_graph(model)) .build_graph(model, ctx, x_t, all_outputs = TRUE) else list(.build_forward(model, ctx, x_t))
    graph <- ggml_build_forward_expand(ctx, ys[[1]])
    for (y_t in ys[-1]) ggml_graph_expand(graph, y_t)
    ggml_graph_compute(ctx, graph)
    for (k in seq_along(ys)) out[[k]][[length(out[[k]]) + 1]] <- ggml_backend_tensor_get_data(ys[[k]])
    ggml_free(ctx)
  }
  # rows of datapoints: ggml's [rev(shape), n] as an array [n, shape]
  preds <- Map(function(v, s) {
    v <- unlist(v)
    if (length(s) == 1) matrix(v, nrow = n, byrow = TRUE) else aperm(array(v, c(rev(s), n)), c(length(s) + 1, rev(seq_along(s))))
  }, out, out_shapes)
  if (length(preds) == 1) preds[[1]] else preds
}

# Elements of the intermediate results of one datapoint (a bound).
.act_elems <- function(model) {
  if (!.is_graph(model)) return(sum(vapply(model$layers, .layer_act_elems, numeric(1))))
  sum(vapply(model$graph, function(e) if (is.null(e$layer)) prod(e$shape) else .layer_act_elems(model$layers[[e$layer]]), numeric(1)))
}

predict.ggml_sequential_model <- function(object, x, batch_size = 32L, ...) ggml_predict(object, x = x, batch_size = batch_size, ...)

# Class indices (from 1) of the largest output.
ggml_predict_classes <- function(model, x, batch_size = 32L) as.integer(max.col(ggml_predict(model, x, batch_size), ties.method = "first"))

# Loss and accuracy over all of x, from the predictions: cross-entropy
# -mean(rowSums(y * log(p))), MSE mean((y - p)^2); accuracy the share of
# rows whose largest prediction is the label's class (NA for one output).
ggml_evaluate <- function(model, ...) UseMethod("ggml_evaluate")

ggml_evaluate.ggml_sequential_model <- function(model, x, y = NULL, batch_size = 32, sample_weight = NULL, class_weight = NULL,
                                                verbose = 0, ...) {
  .no_extra_args(...)
  .check_compiled(model)
  if (.is_sequence_model(model)) {
    if (!is.null(class_weight) || !is.null(sample_weight)) stop("class_weight and sample_weight are not supported for token sequences", call. = FALSE)
    return(.evaluate_sequences(model, .token_windows(model, x, y, NULL), batch_size))
  }
  y <- .as_label_matrix(y)
  if (.n_datapoints(x) != nrow(y)) stop("'x' and 'y' must have as many rows (datapoints)", call. = FALSE)
  ce <- .is_ce(model)
  y <- .weighted_labels(y, class_weight, sample_weight, ce)
  p <- ggml_predict(model, x, batch_size = batch_size)
  if (.is_graph(model) && length(model$output_nodes) > 1) p <- p[[length(p)]]  # the output fit trains
  if (!identical(dim(p), dim(y))) stop(sprintf("'y' must have %d columns", ncol(p)), call. = FALSE)
  if (ce && !identical(.output_layer(model)$config$activation, "softmax")) {
    p <- exp(p - apply(p, 1, max))
    p <- p / rowSums(p)
  }
  loss <- if (ce) -mean(rowSums(y * log(pmax(p, 1e-7)))) else mean((y - p)^2)
  acc <- if (ncol(y) > 1) mean(max.col(p, ties.method = "first") == max.col(y, ties.method = "first")) else NA_real_
  list(loss = loss, accuracy = acc, n_samples = nrow(y))
}

# Next-token cross-entropy and accuracy of a sequence model over windows w
# (.token_windows): mean over positions of logsumexp(z) - z[target].
.evaluate_sequences <- function(model, w, batch_size) {
  p <- ggml_predict(model, t(w$x), batch_size = batch_size)  # [n, T, vocab]
  z <- matrix(aperm(p, c(3, 2, 1)), dim(p)[3])               # [vocab, T * n]
  if (identical(model$layers[[length(model$layers)]]$config$activation, "softmax")) z <- log(pmax(z, 1e-30))
  target <- as.vector(w$y) + 1
  top <- apply(z, 2, max)
  lse <- top + log(colSums(exp(sweep(z, 2, top))))
  list(loss = mean(lse - z[cbind(target, seq_along(target))]),
       accuracy = mean(max.col(t(z), ties.method = "first") == target), n_samples = w$n)
}

evaluate.ggml_sequential_model <- function(x, test_x, test_y = NULL, batch_size = 32L, ...) {
  ggml_evaluate(x, x = test_x, y = test_y, batch_size = batch_size, ...)
}

# ---- history ----

print.ggml_history <- function(x, ...) {
  n <- length(x$epochs)
  cat(sprintf("Training History (%d epoch%s)\n", n, if (n == 1) "" else "s"))
  if (n > 0) {
    cat(sprintf("  Final train loss:     %.4f\n  Final train accuracy: %.4f\n", x$train_loss[n], x$train_accuracy[n]))
    if (!is.na(x$val_loss[n])) cat(sprintf("  Final val loss:       %.4f\n  Final val accuracy:   %.4f\n", x$val_loss[n], x$val_accuracy[n]))
  }
  invisible(x)
}

plot.ggml_history <- function(x, ...) {
  val <- any(!is.na(x$val_loss))
  graphics::plot(x$epochs, x$train_loss, type = "l", col = "blue", xlab = "Epoch", ylab = "Loss", main = "Loss",
                 ylim = range(c(x$train_loss, if (val) x$val_loss), na.rm = TRUE), ...)
  if (val) {
    graphics::lines(x$epochs, x$val_loss, col = "red")
    graphics::legend("topright", legend = c("train", "validation"), col = c("blue", "red"), lty = 1)
  }
  invisible(x)
}

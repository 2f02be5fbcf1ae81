# Layers of the sequential model (CRAN ggmlR's names and arguments): each
# constructor appends a description list(type, name, trainable, config,
# input_shape, output_shape, weights) to model$layers. Shapes are R shapes of
# one datapoint (c(features) or c(seq, dim)); in ggml the datapoint's dims are
# reversed and the batch comes last, so a dense layer acts on ne0.

.layer_types <- c("dense", "flatten", "dropout", "embedding")
.activations <- c("linear", "relu", "sigmoid", "tanh", "softmax", "gelu", "silu")

# "dense_1", "dense_2", ...: counted per layer type.
.layer_name <- function(model, type) {
  paste0(type, "_", sum(vapply(model$layers, function(l) identical(l$type, type), logical(1))) + 1L)
}

.check_count <- function(x, what) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || x < 1 || x != floor(x)) {
    stop(sprintf("'%s' must be a positive whole number", what), call. = FALSE)
  }
  as.integer(x)
}

.add_layer <- function(model, type, config, name, trainable, input_shape = NULL) {
  if (inherits(model, "ggml_tensor_node")) return(.add_node(model, type, config, name, trainable))
  if (!inherits(model, "ggml_sequential_model")) stop("'model' must come from ggml_model_sequential() or ggml_input()", call. = FALSE)
  if (isTRUE(model$compiled)) stop("layers cannot be added to a compiled model", call. = FALSE)
  if (is.null(name)) name <- .layer_name(model, type)
  if (!is.character(name) || length(name) != 1 || is.na(name)) stop("'name' must be a single string", call. = FALSE)
  if (!is.logical(trainable) || length(trainable) != 1 || is.na(trainable)) stop("'trainable' must be TRUE or FALSE", call. = FALSE)
  if (!is.null(input_shape)) {
    input_shape <- vapply(input_shape, .check_count, integer(1), "input_shape")
    if (is.null(model$input_shape)) model$input_shape <- input_shape
  }
  layer <- list(type = type, name = name, trainable = trainable, config = config,
                input_shape = input_shape, output_shape = NULL, weights = list())
  model$layers <- c(model$layers, list(layer))
  model
}

ggml_layer_dense <- function(model, units, activation = NULL, input_shape = NULL, name = NULL, trainable = TRUE) {
  if (!is.null(activation) && !(is.character(activation) && length(activation) == 1 && activation %in% .activations)) {
    stop(sprintf("'activation' must be NULL or one of %s", paste(.activations, collapse = ", ")), call. = FALSE)
  }
  .add_layer(model, "dense", list(units = .check_count(units, "units"), activation = activation), name, trainable, input_shape)
}

ggml_layer_flatten <- function(model, name = NULL, trainable = TRUE) {
  .add_layer(model, "flatten", list(), name, trainable)
}

# Inverted dropout while training (kept units scaled by 1 / (1 - rate)), the
# identity in predict() and evaluate().
ggml_layer_dropout <- function(model, rate, stochastic = FALSE, name = NULL, trainable = FALSE) {
  if (!is.numeric(rate) || length(rate) != 1 || is.na(rate) || rate < 0 || rate >= 1) {
    stop("'rate' must be a number in [0, 1)", call. = FALSE)
  }
  .add_layer(model, "dropout", list(rate = as.double(rate), stochastic = isTRUE(stochastic)), name, trainable)
}

# Integer ids 0..vocab_size-1 (one datapoint: c(seq)) to rows of a learned
# table: output c(seq, dim).
ggml_layer_embedding <- function(model, vocab_size, dim, input_shape = NULL, name = NULL, trainable = TRUE) {
  .add_layer(model, "embedding", list(vocab_size = .check_count(vocab_size, "vocab_size"), dim = .check_count(dim, "dim")),
             name, trainable, input_shape)
}

# Output shapes of every layer from model$input_shape (CRAN's nn_infer_shapes).
nn_infer_shapes <- function(model) {
  shape <- model$input_shape
  if (is.null(shape)) stop("the model has no input_shape: give input_shape to its first layer", call. = FALSE)
  for (i in seq_along(model$layers)) {
    l <- model$layers[[i]]
    l$input_shape <- shape
    shape <- switch(l$type,
      dense = c(shape[-length(shape)], l$config$units),
      flatten = as.integer(prod(shape)),
      dropout = shape,
      embedding = {
        if (i != 1) stop("an embedding layer must be the first layer", call. = FALSE)
        if (length(shape) != 1) stop("an embedding layer takes input_shape = c(sequence length)", call. = FALSE)
        c(shape, l$config$dim)
      })
    l$output_shape <- as.integer(shape)
    model$layers[[i]] <- l
  }
  model
}

# Weight shapes (ggml order) of a layer whose input_shape is known.
.layer_weight_shapes <- function(l) {
  switch(l$type,
    dense = list(weight = c(l$input_shape[length(l$input_shape)], l$config$units), bias = l$config$units),
    embedding = list(weight = c(l$config$dim, l$config$vocab_size)),
    list())
}

.layer_n_params <- function(l) {
  if (is.null(l$input_shape)) return(NA_real_)
  sum(vapply(.layer_weight_shapes(l), prod, numeric(1)))
}

# Allocate the weights of every layer in one context (not parameters: fit()
# trains copies of the trainable ones) and initialise them from R's RNG (set.seed gives the same model): Glorot-uniform matrices
# (limit sqrt(6 / (fan_in + fan_out))), zero biases, U(-0.05, 0.05) embeddings.
.init_weights <- function(model) {
  shapes <- lapply(model$layers, .layer_weight_shapes)
  n <- sum(vapply(shapes, length, integer(1)))
  bytes <- sum(vapply(unlist(shapes, recursive = FALSE), function(s) 4 * prod(s), numeric(1)))
  ctx <- ggml_init(bytes + (n + 1) * (ggml_tensor_overhead() + 64) + 1024)
  for (i in seq_along(model$layers)) {
    l <- model$layers[[i]]
    l$weights <- list()
    for (w in names(shapes[[i]])) {
      s <- shapes[[i]][[w]]
      v <- if (w == "bias") numeric(prod(s))
           else if (l$type == "embedding") stats::runif(prod(s), -0.05, 0.05)
           else { lim <- sqrt(6 / sum(s)); stats::runif(prod(s), -lim, lim) }
      t <- ggml_new_tensor(ctx, GGML_TYPE_F32, length(s), s)
      ggml_set_name(t, sprintf("l%d.%s", i, w))
      ggml_backend_tensor_set_data(t, v)
      l$weights[[w]] <- t
    }
    model$layers[[i]] <- l
  }
  model$compilation$ctx_weights <- ctx
  model
}

.apply_activation <- function(ctx, t, activation) {
  if (is.null(activation)) return(t)
  switch(activation, linear = t, relu = ggml_relu(ctx, t), sigmoid = ggml_sigmoid(ctx, t), tanh = ggml_tanh(ctx, t),
         softmax = ggml_soft_max(ctx, t), gelu = ggml_gelu(ctx, t), silu = ggml_silu(ctx, t))
}

# The forward graph of the layers on x (ggml shape c(rev(input_shape), batch)).
# masks: one tensor per dropout layer (training) or NULL (inference);
# logits = TRUE leaves out a final softmax, which ggml-opt's cross-entropy
# applies itself.
.build_forward <- function(model, ctx, x, masks = NULL, logits = FALSE) {
  nb <- ggml_tensor_shape(x)[length(model$input_shape) + 1]
  n <- length(model$layers)
  for (i in seq_len(n)) {
    l <- model$layers[[i]]
    x <- switch(l$type,
      dense = {
        act <- l$config$activation
        if (logits && i == n && identical(act, "softmax")) act <- NULL
        .apply_activation(ctx, ggml_add(ctx, ggml_mul_mat(ctx, l$weights$weight, x), l$weights$bias), act)
      },
      flatten = ggml_reshape_2d(ctx, ggml_cont(ctx, x), l$output_shape, nb),
      dropout = if (is.null(masks) || l$config$rate == 0) x else ggml_mul(ctx, x, masks[[l$name]]),
      # get_rows takes a vector of ids: look up seq * batch rows, then split them
      embedding = ggml_reshape_3d(ctx, ggml_get_rows(ctx, l$weights$weight, ggml_reshape_1d(ctx, x, ggml_nelements(x))),
                                  l$config$dim, l$input_shape, nb))
  }
  x
}

# ---- layer access and freezing (CRAN ggmlR's names) ----

ggml_get_layer <- function(model, index = NULL, name = NULL) {
  if (is.null(index) == is.null(name)) stop("give either index or name (not both)", call. = FALSE)
  n <- length(model$layers)
  if (!is.null(index)) {
    if (!is.numeric(index) || length(index) != 1 || is.na(index) || index < 1 || index > n) {
      stop(sprintf("layer index %s out of range (the model has %d layers)", format(index), n), call. = FALSE)
    }
    return(model$layers[[index]])
  }
  for (l in model$layers) if (identical(l$name, name)) return(l)
  stop(sprintf("No layer with name '%s'", name), call. = FALSE)
}

ggml_pop_layer <- function(model) {
  if (isTRUE(model$compiled)) stop("layers cannot be removed from a compiled model", call. = FALSE)
  n <- length(model$layers)
  if (n == 0) stop("the model has no layers to remove", call. = FALSE)
  model$layers <- model$layers[-n]
  if (n == 1) model$input_shape <- NULL
  model
}

# Set the trainable flag of layers from:to or of those named layer_names;
# fit() trains only trainable layers, so this also works on a compiled model.
.set_trainable <- function(model, from, to, layer_names, value) {
  n <- length(model$layers)
  if (n == 0) stop("the model has no layers", call. = FALSE)
  if (!is.null(layer_names)) {
    idx <- which(vapply(model$layers, `[[`, "", "name") %in% layer_names)
    if (length(idx) == 0) stop(sprintf("No layers found with names: %s", paste(layer_names, collapse = ", ")), call. = FALSE)
  } else {
    if (!is.numeric(from) || !is.numeric(to) || length(from) != 1 || length(to) != 1 || is.na(from) || is.na(to) ||
        from < 1 || to > n || from > to) {
      stop(sprintf("Invalid range: from=%s to=%s (the model has %d layers)", format(from), format(to), n), call. = FALSE)
    }
    idx <- from:to
  }
  for (i in idx) model$layers[[i]]$trainable <- value
  model
}

ggml_freeze_weights <- function(model, from = 1L, to = length(model$layers), layer_names = NULL, ...) {
  .set_trainable(model, from, to, layer_names, FALSE)
}

ggml_unfreeze_weights <- function(model, from = 1L, to = length(model$layers), layer_names = NULL, ...) {
  .set_trainable(model, from, to, layer_names, TRUE)
}

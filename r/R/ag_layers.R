# Layers of the autograd engine (ag_*). A layer has $forward(x) and a
# function listing its parameters by name ($params() for ag_linear, a plain
# list; $parameters() for the environment-based layers). Layers with a
# $training flag behave differently in training and evaluation.

.ag_glorot <- function(fan_in, fan_out) {
  limit <- sqrt(6 / (fan_in + fan_out))
  matrix(stats::runif(fan_out * fan_in, -limit, limit), fan_out, fan_in)
}

.ag_activations <- c("relu", "sigmoid", "tanh", "softmax")

.ag_check_activation <- function(activation) {
  if (!is.null(activation) &&
      !(is.character(activation) && length(activation) == 1L && activation %in% .ag_activations))
    stop("activation must be NULL or one of ", paste0('"', .ag_activations, '"', collapse = ", "),
         call. = FALSE)
}

.ag_activate <- function(x, activation) {
  if (is.null(activation)) x else get(paste0("ag_", activation), mode = "function")(x)
}

.ag_check_count <- function(value, what) {
  if (!is.numeric(value) || length(value) != 1L || is.na(value) || value < 1)
    stop(what, " must be a positive integer", call. = FALSE)
  as.integer(value)
}

ag_linear <- function(in_features, out_features, activation = NULL) {
  in_features <- .ag_check_count(in_features, "in_features")
  out_features <- .ag_check_count(out_features, "out_features")
  .ag_check_activation(activation)
  W <- ag_param(.ag_glorot(in_features, out_features))
  b <- ag_param(matrix(0, out_features, 1L))
  list(W = W, b = b,
       forward = function(x) .ag_activate(ag_add(ag_matmul(W, x), b), activation),
       params = function() list(W = W, b = b))
}

# Parameters of any layer, whichever of the two conventions it follows.
.ag_layer_params <- function(layer) {
  for (accessor in c("parameters", "params")) {
    f <- if (is.environment(layer)) get0(accessor, envir = layer, inherits = FALSE)
         else if (is.list(layer)) layer[[accessor]]
    if (is.function(f)) return(f())
  }
  list()
}

ag_train <- function(model) UseMethod("ag_train")
ag_eval <- function(model) UseMethod("ag_eval")

.ag_set_training <- function(model, training) {
  if (is.environment(model)) {
    model$training <- training
    for (layer in model$layers) .ag_set_training(layer, training)
  }
  invisible(model)
}

ag_train.default <- function(model) .ag_set_training(model, TRUE)
ag_eval.default <- function(model) .ag_set_training(model, FALSE)

.ag_new_layer <- function(class, name, parameters = function() list()) {
  layer <- new.env(parent = emptyenv())
  layer$training <- TRUE
  layer$name <- name
  layer$parameters <- parameters
  class(layer) <- c(class, "ag_layer")
  layer
}

ag_sequential <- function(...) {
  layers <- list(...)
  if (length(layers) == 1L && is.list(layers[[1L]]) && !is.environment(layers[[1L]]) &&
      is.null(layers[[1L]]$forward))
    layers <- layers[[1L]]
  for (layer in layers)
    if (!(is.list(layer) || is.environment(layer)) || !is.function(layer$forward)) stop("every layer needs a $forward function", call. = FALSE)
  model <- .ag_new_layer("ag_sequential", "sequential")
  model$layers <- layers
  model$forward <- function(x) {
    for (layer in model$layers) x <- layer$forward(x)
    x
  }
  # Names "layer<i>_<name>" keep parameters of equal names apart.
  model$parameters <- function() {
    params <- list()
    for (i in seq_along(model$layers)) {
      layer_params <- .ag_layer_params(model$layers[[i]])
      if (length(layer_params))
        params[paste0("layer", i, "_", names(layer_params))] <- layer_params
    }
    params
  }
  model
}

print.ag_sequential <- function(x, ...) {
  cat("ag_sequential (", length(x$layers), " layers, ",
      if (x$training) "train" else "eval", " mode)\n", sep = "")
  for (i in seq_along(x$layers)) {
    layer <- x$layers[[i]]
    cat(sprintf("  [%d] %s\n", i, if (!is.null(layer$name)) layer$name
                else if (is.function(layer$params)) "linear" else class(layer)[1L]))
  }
  invisible(x)
}

# Inverted dropout mask: kept values are scaled by 1 / (1 - rate).
.ag_dropout_mask <- function(shape, rate) {
  matrix((stats::runif(prod(shape)) > rate) / (1 - rate), shape[1L], shape[2L])
}

ag_dropout <- function(rate) {
  if (!is.numeric(rate) || length(rate) != 1L || is.na(rate) || rate < 0 || rate >= 1)
    stop("rate must be a number in [0, 1)", call. = FALSE)
  layer <- .ag_new_layer("ag_dropout", paste0("dropout(", rate, ")"))
  layer$rate <- as.double(rate)
  layer$forward <- function(x) {
    if (!layer$training || layer$rate == 0) return(x)
    ag_mul(x, .ag_dropout_mask(dim(.ag_data(x)), layer$rate))
  }
  layer
}

# (x - mean) / sqrt(var + eps) per row. With batch statistics the gradient
# flows through the mean and variance too; with running statistics they are
# constants.
.ag_normalise_rows <- function(x, mean, var, eps, batch_stats) {
  v <- .ag_data(x)
  inv_std <- 1 / sqrt(var + eps)
  x_hat <- (v - mean) * inv_std
  .ag_result(x_hat, list(x = x), function(grad_out) {
    if (!batch_stats) return(list(x = grad_out * inv_std))
    list(x = inv_std * (grad_out - rowMeans(grad_out) - x_hat * rowMeans(grad_out * x_hat)))
  })
}

ag_batch_norm <- function(num_features, eps = 1e-5, momentum = 0.1) {
  num_features <- .ag_check_count(num_features, "num_features")
  layer <- .ag_new_layer("ag_batch_norm", paste0("batch_norm(", num_features, ")"),
                         function() list(gamma = layer$gamma, beta = layer$beta))
  layer$gamma <- ag_param(matrix(1, num_features, 1L))
  layer$beta <- ag_param(matrix(0, num_features, 1L))
  layer$running_mean <- matrix(0, num_features, 1L)
  layer$running_var <- matrix(1, num_features, 1L)
  layer$num_features <- num_features
  layer$eps <- eps
  layer$momentum <- momentum
  layer$forward <- function(x) {
    v <- .ag_data(x)
    if (nrow(v) != num_features)
      stop(sprintf("ag_batch_norm: input has %d rows, expected %d", nrow(v), num_features),
           call. = FALSE)
    if (layer$training) {
      mean <- rowMeans(v)
      var <- rowMeans((v - mean)^2)
      layer$running_mean <- (1 - layer$momentum) * layer$running_mean + layer$momentum * mean
      layer$running_var <- (1 - layer$momentum) * layer$running_var + layer$momentum * var
    } else {
      mean <- as.numeric(layer$running_mean)
      var <- as.numeric(layer$running_var)
    }
    x_hat <- .ag_normalise_rows(x, mean, var, layer$eps, batch_stats = layer$training)
    ag_add(ag_mul(layer$gamma, x_hat), layer$beta)
  }
  layer
}

ag_embedding <- function(vocab_size, dim) {
  vocab_size <- .ag_check_count(vocab_size, "vocab_size")
  dim <- .ag_check_count(dim, "dim")
  layer <- .ag_new_layer("ag_embedding", sprintf("embedding(%d, %d)", vocab_size, dim),
                         function() list(weight = layer$weight))
  limit <- sqrt(1 / vocab_size)
  layer$weight <- ag_param(matrix(stats::runif(vocab_size * dim, -limit, limit), dim, vocab_size))
  layer$vocab_size <- vocab_size
  layer$dim <- dim
  # idx holds 0-based token ids; the output has one column per id.
  layer$forward <- function(idx) {
    ids <- as.integer(.ag_data(idx))
    if (anyNA(ids) || any(ids < 0L | ids >= vocab_size))
      stop(sprintf("ag_embedding: ids must be in 0..%d", vocab_size - 1L), call. = FALSE)
    weight <- layer$weight
    .ag_result(weight$data[, ids + 1L, drop = FALSE], list(weight = weight),
               function(grad_out) {
                 g <- matrix(0, dim, vocab_size)
                 for (k in seq_along(ids)) g[, ids[k] + 1L] <- g[, ids[k] + 1L] + grad_out[, k]
                 list(weight = g)
               })
  }
  layer
}

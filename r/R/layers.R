# Layers of the sequential model (CRAN ggmlR's names and arguments): each
# constructor appends a description list(type, name, trainable, config,
# input_shape, output_shape, weights) to model$layers. Shapes are R shapes of
# one datapoint (c(features) or c(seq, dim)); in ggml the datapoint's dims are
# reversed and the batch comes last, so a dense layer acts on ne0.

.layer_types <- c("dense", "flatten", "dropout", "embedding", "conv_1d", "conv_2d", "max_pooling_2d",
                  "global_max_pooling_2d", "global_average_pooling_2d", "batch_norm", "lstm", "gru",
                  "positional_embedding", "multihead_attention", "transformer_block", "lm_head")
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
  if (inherits(model, "ggml_layer_spec")) return(.layer_object(type, config, name, trainable))
  if (!inherits(model, "ggml_sequential_model")) stop("'model' must come from ggml_model_sequential() or ggml_input()", call. = FALSE)
  if (.is_graph(model)) stop("layers are applied to nodes of a functional model, not to the model", call. = FALSE)
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
  .add_layer(model, "dense", list(units = .check_count(units, "units"), activation = .check_activation(activation)), name, trainable,
             input_shape)
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
ggml_layer_embedding <- function(model, vocab_size, dim, input_shape = NULL, name = NULL, trainable = TRUE, init_std = NULL) {
  .add_layer(model, "embedding", list(vocab_size = .check_count(vocab_size, "vocab_size"), dim = .check_count(dim, "dim"),
                                      init_std = .check_init_std(init_std)),
             name, trainable, input_shape)
}

# ---- convolution, pooling and batch normalisation ----
# A datapoint c(H, W, C) is ggml [C, W, H] (reversed, like every shape here);
# ggml's conv_2d and pool_2d work on planes [W, H, C, N], so these layers
# permute in and out (.to_planes / .from_planes). A sequence c(L, C) is ggml
# [C, L] and conv_1d works on [L, C, N] (a transpose in and out).

.check_pair <- function(x, what) {
  x <- vapply(x, .check_count, integer(1), what)
  if (length(x) == 1) x <- rep(x, 2L)
  if (length(x) != 2) stop(sprintf("'%s' must have one or two values", what), call. = FALSE)
  x
}

.check_padding <- function(padding) {
  if (!is.character(padding) || length(padding) != 1 || !padding %in% c("valid", "same")) {
    stop("'padding' must be \"valid\" or \"same\"", call. = FALSE)
  }
  padding
}

.check_activation <- function(activation) {
  if (!is.null(activation) && !(is.character(activation) && length(activation) == 1 && activation %in% .activations)) {
    stop(sprintf("'activation' must be NULL or one of %s", paste(.activations, collapse = ", ")), call. = FALSE)
  }
  activation
}

# kernel_size and strides are c(height, width) (or one number for both).
ggml_layer_conv_2d <- function(model, filters, kernel_size, activation = NULL, input_shape = NULL, strides = c(1L, 1L),
                               padding = "valid", name = NULL, trainable = TRUE) {
  config <- list(filters = .check_count(filters, "filters"), kernel_size = .check_pair(kernel_size, "kernel_size"),
                 strides = .check_pair(strides, "strides"), padding = .check_padding(padding),
                 activation = .check_activation(activation))
  .add_layer(model, "conv_2d", config, name, trainable, input_shape)
}

ggml_layer_conv_1d <- function(model, filters, kernel_size, activation = NULL, input_shape = NULL, strides = 1L,
                               padding = "valid", name = NULL, trainable = TRUE) {
  config <- list(filters = .check_count(filters, "filters"), kernel_size = .check_count(kernel_size, "kernel_size"),
                 strides = .check_count(strides, "strides"), padding = .check_padding(padding),
                 activation = .check_activation(activation))
  .add_layer(model, "conv_1d", config, name, trainable, input_shape)
}

ggml_layer_max_pooling_2d <- function(model, pool_size = c(2L, 2L), strides = NULL, name = NULL, trainable = TRUE) {
  pool_size <- .check_pair(pool_size, "pool_size")
  strides <- if (is.null(strides)) pool_size else .check_pair(strides, "strides")
  .add_layer(model, "max_pooling_2d", list(pool_size = pool_size, strides = strides), name, trainable)
}

ggml_layer_global_max_pooling_2d <- function(model, name = NULL, trainable = TRUE) {
  .add_layer(model, "global_max_pooling_2d", list(), name, trainable)
}

ggml_layer_global_average_pooling_2d <- function(model, name = NULL, trainable = TRUE) {
  .add_layer(model, "global_average_pooling_2d", list(), name, trainable)
}

# Each channel (the last dimension of a datapoint) normalised to mean 0 and
# variance 1 over the batch and the positions, then scaled and shifted by
# learned gamma and beta: (x - mean) / sqrt(var + eps) * gamma + beta. The
# statistics are the batch's while training; predict() and evaluate() use
# moving_mean and moving_var, which fit() sets to the statistics of the
# layer's inputs over the training data (.set_moving_stats), so a prediction
# does not depend on the other datapoints of its batch (CRAN ggmlR's layer
# of this name divides each row by its RMS instead; documented on ?ggml-layers).
ggml_layer_batch_norm <- function(model, eps = 1e-5, name = NULL, trainable = TRUE) {
  if (!is.numeric(eps) || length(eps) != 1 || is.na(eps) || eps <= 0) stop("'eps' must be a positive number", call. = FALSE)
  .add_layer(model, "batch_norm", list(eps = as.double(eps)), name, trainable)
}

# ---- recurrent layers ----
# A sequence c(seq, features) (ggml [features, seq, N]) run step by step,
# unrolled in the graph (so fit() backpropagates through time); the state
# starts at 0. The result is the last state c(units), or every state
# c(seq, units) with return_sequences = TRUE.
#   LSTM: [i f g o] = W x + U h + b; i, f, o = recurrent_activation, g = activation;
#         c = f c + i g; h = o activation(c)
#   GRU:  [z r] = recurrent_activation(W_zh x + U_zh h + b_zh);
#         n = activation(W_n x + b_n + r (U_n h)); h = (1 - z) n + z h
.recurrent_layer <- function(model, type, units, return_sequences, activation, recurrent_activation, input_shape, name,
                             trainable) {
  if (!is.logical(return_sequences) || length(return_sequences) != 1 || is.na(return_sequences)) {
    stop("'return_sequences' must be TRUE or FALSE", call. = FALSE)
  }
  config <- list(units = .check_count(units, "units"), return_sequences = return_sequences,
                 activation = .check_activation(activation), recurrent_activation = .check_activation(recurrent_activation))
  .add_layer(model, type, config, name, trainable, input_shape)
}

ggml_layer_lstm <- function(model, units, return_sequences = FALSE, activation = "tanh", recurrent_activation = "sigmoid",
                            input_shape = NULL, name = NULL, trainable = TRUE) {
  .recurrent_layer(model, "lstm", units, return_sequences, activation, recurrent_activation, input_shape, name, trainable)
}

ggml_layer_gru <- function(model, units, return_sequences = FALSE, activation = "tanh", recurrent_activation = "sigmoid",
                           input_shape = NULL, name = NULL, trainable = TRUE) {
  .recurrent_layer(model, "gru", units, return_sequences, activation, recurrent_activation, input_shape, name, trainable)
}

.need_rank <- function(l, shape, rank, what) {
  if (length(shape) != rank) {
    stop(sprintf("layer '%s' (%s) needs datapoints of shape %s, not (%s)", l$name, l$type, what, paste(shape, collapse = ", ")),
         call. = FALSE)
  }
}

# Output length of a convolution or pooling along one axis ("same": ceiling(n / s)).
.conv_out <- function(n, k, s, padding, l) {
  out <- if (identical(padding, "same")) ceiling(n / s) else floor((n - k) / s) + 1
  if (out < 1) stop(sprintf("layer '%s' (%s): a window of %d does not fit in %d", l$name, l$type, k, n), call. = FALSE)
  as.integer(out)
}

# Output shapes of every layer from model$input_shape (CRAN's nn_infer_shapes);
# a functional model's graph has its own walk (.infer_graph_shapes).
nn_infer_shapes <- function(model) {
  if (.is_graph(model)) return(.infer_graph_shapes(model))
  shape <- model$input_shape
  if (is.null(shape)) stop("the model has no input_shape: give input_shape to its first layer", call. = FALSE)
  for (i in seq_along(model$layers)) {
    l <- model$layers[[i]]
    if (l$type == "embedding" && i != 1) stop("an embedding layer must be the first layer", call. = FALSE)
    l$input_shape <- shape
    shape <- .layer_output_shape(l, shape)
    l$output_shape <- shape
    model$layers[[i]] <- l
  }
  model
}

# The output shape of layer l on datapoints of the given shape.
.layer_output_shape <- function(l, shape) {
  shape <- switch(l$type,
    dense = c(shape[-length(shape)], l$config$units),
    conv_2d = {
      .need_rank(l, shape, 3, "c(height, width, channels)")
      k <- l$config$kernel_size; s <- l$config$strides
      c(.conv_out(shape[1], k[1], s[1], l$config$padding, l), .conv_out(shape[2], k[2], s[2], l$config$padding, l), l$config$filters)
    },
    conv_1d = {
      .need_rank(l, shape, 2, "c(length, channels)")
      c(.conv_out(shape[1], l$config$kernel_size, l$config$strides, l$config$padding, l), l$config$filters)
    },
    max_pooling_2d = {
      .need_rank(l, shape, 3, "c(height, width, channels)")
      k <- l$config$pool_size; s <- l$config$strides
      c(.conv_out(shape[1], k[1], s[1], "valid", l), .conv_out(shape[2], k[2], s[2], "valid", l), shape[3])
    },
    global_max_pooling_2d = , global_average_pooling_2d = {
      .need_rank(l, shape, 3, "c(height, width, channels)")
      shape[3]
    },
    batch_norm = shape,
    lstm = , gru = {
      .need_rank(l, shape, 2, "c(sequence length, features)")
      if (l$config$return_sequences) c(shape[1], l$config$units) else l$config$units
    },
    positional_embedding = , multihead_attention = , transformer_block = , lm_head = .transformer_out_shape(l, shape),
    flatten = as.integer(prod(shape)),
    dropout = shape,
    embedding = {
      if (length(shape) != 1) stop("an embedding layer takes input_shape = c(sequence length)", call. = FALSE)
      c(shape, l$config$dim)
    })
  as.integer(shape)
}

# Weight shapes (ggml order) of a layer whose input_shape is known.
.layer_weight_shapes <- function(l) {
  switch(l$type,
    dense = list(weight = c(l$input_shape[length(l$input_shape)], l$config$units), bias = l$config$units),
    embedding = list(weight = c(l$config$dim, l$config$vocab_size)),
    conv_2d = list(kernel = c(rev(l$config$kernel_size), l$input_shape[3], l$config$filters), bias = l$config$filters),
    conv_1d = list(kernel = c(l$config$kernel_size, l$input_shape[2], l$config$filters), bias = l$config$filters),
    batch_norm = stats::setNames(rep(list(l$input_shape[length(l$input_shape)]), 4), c("gamma", "beta", .moving_stats)),
    lstm = list(W_gates = c(l$input_shape[2], 4 * l$config$units), U_gates = c(l$config$units, 4 * l$config$units),
                b_gates = 4 * l$config$units),
    gru = list(W_zh = c(l$input_shape[2], 2 * l$config$units), U_zh = c(l$config$units, 2 * l$config$units),
               b_zh = 2 * l$config$units, W_n = c(l$input_shape[2], l$config$units), U_n = c(l$config$units, l$config$units),
               b_n = l$config$units),
    positional_embedding = , multihead_attention = , transformer_block = , lm_head = .transformer_weight_shapes(l),
    list())
}

# Statistics kept beside the weights, set by fit() and not trained.
.moving_stats <- c("moving_mean", "moving_var")
.trained_weight_names <- function(l) setdiff(names(l$weights), .moving_stats)

# Learned parameters (the moving statistics are not counted).
.layer_n_params <- function(l) {
  if (is.null(l$input_shape)) return(NA_real_)
  shapes <- .layer_weight_shapes(l)
  sum(vapply(shapes[setdiff(names(shapes), .moving_stats)], prod, numeric(1)))
}

# Allocate the weights of every layer in one context (not parameters: fit()
# trains copies of the trainable ones) and initialise them from R's RNG (set.seed gives the same model): Glorot-uniform matrices
# (limit sqrt(6 / (fan_in + fan_out))), He-uniform kernels (limit sqrt(6 / fan_in), fan_in = the kernel's size times
# its input channels), zero biases and betas (names bias, beta, b_*, *_b<k>, *_beta), gammas (*gamma) of 1,
# U(-0.05, 0.05) token and position embeddings (N(0, init_std) given init_std); the transformer layers' matrices N(0, 0.02), their
# residual projections N(0, 0.02 / sqrt(2 * blocks)) (GPT-2's initialisation, .transformer_init).
# Biases, betas and gammas by their names (bias, beta, b_*, *_b<k>, *_beta, *gamma).
.is_bias_or_gain <- function(w) w %in% c("bias", "beta") || startsWith(w, "b_") || grepl("_(b[0-9]+|beta)$", w) || endsWith(w, "gamma")

.init_weights <- function(model) {
  shapes <- lapply(model$layers, .layer_weight_shapes)
  n <- sum(vapply(shapes, length, integer(1)))
  bytes <- sum(vapply(unlist(shapes, recursive = FALSE), function(s) 4 * prod(s), numeric(1)))
  ctx <- ggml_init(bytes + (n + 1) * (ggml_tensor_overhead() + 64) + 1024)
  n_blocks <- sum(vapply(model$layers, function(l) l$type %in% c("multihead_attention", "transformer_block"), logical(1)))
  for (i in seq_along(model$layers)) {
    l <- model$layers[[i]]
    l$weights <- list()
    for (w in names(shapes[[i]])) {
      s <- shapes[[i]][[w]]
      v <- if (w == "moving_mean" || (.is_bias_or_gain(w) && !endsWith(w, "gamma"))) numeric(prod(s))
           else if (endsWith(w, "gamma") || w == "moving_var") rep(1, prod(s))
           else if (w == "kernel") { lim <- sqrt(6 / prod(s[-length(s)])); stats::runif(prod(s), -lim, lim) }
           else if (l$type %in% c("embedding", "positional_embedding")) {
             if (is.null(l$config$init_std)) stats::runif(prod(s), -0.05, 0.05) else stats::rnorm(prod(s), 0, l$config$init_std)
           }
           else if (l$type %in% .transformer_types) .transformer_init(w, prod(s), n_blocks)
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

# [C, W, H, N] <-> the planes [W, H, C, N] of ggml's conv_2d and pool_2d.
.to_planes <- function(ctx, x) ggml_cont(ctx, ggml_permute(ctx, x, 2L, 0L, 1L, 3L))
.from_planes <- function(ctx, x) ggml_cont(ctx, ggml_permute(ctx, x, 1L, 2L, 0L, 3L))

.build_conv_2d <- function(ctx, l, x) {
  k <- l$config$kernel_size; s <- l$config$strides
  # "same": the window centred (floor(k / 2) each side; an even k one row more at the end is cut by the output size)
  p <- if (identical(l$config$padding, "same")) k %/% 2L else c(0L, 0L)
  y <- ggml_conv_2d(ctx, l$weights$kernel, .to_planes(ctx, x), s[2], s[1], p[2], p[1], 1L, 1L)
  y <- ggml_add(ctx, y, ggml_reshape_4d(ctx, l$weights$bias, 1L, 1L, l$config$filters, 1L))
  out <- l$output_shape
  ne <- ggml_tensor_shape(y)
  if (!identical(as.integer(ne[1:2]), rev(out[1:2]))) {  # "same" with an even kernel: one extra row or column
    y <- ggml_view_4d(ctx, y, out[2], out[1], out[3], ne[4], 4 * ne[1], 4 * ne[1] * ne[2], 4 * ne[1] * ne[2] * ne[3], 0)
  }
  .from_planes(ctx, .apply_activation(ctx, y, l$config$activation))
}

.build_conv_1d <- function(ctx, l, x) {
  k <- l$config$kernel_size
  p <- if (identical(l$config$padding, "same")) k %/% 2L else 0L
  y <- ggml_conv_1d(ctx, l$weights$kernel, ggml_cont(ctx, ggml_transpose(ctx, x)), l$config$strides, p, 1L)
  y <- ggml_add(ctx, y, ggml_reshape_3d(ctx, l$weights$bias, 1L, l$config$filters, 1L))
  ne <- ggml_tensor_shape(y)
  if (ne[1] != l$output_shape[1]) y <- ggml_view_3d(ctx, y, l$output_shape[1], ne[2], ne[3], 4 * ne[1], 4 * ne[1] * ne[2], 0)
  ggml_cont(ctx, ggml_transpose(ctx, .apply_activation(ctx, y, l$config$activation)))
}

.build_pool <- function(ctx, l, x, nb) {
  shp <- l$input_shape
  pooled <- switch(l$type,
    max_pooling_2d = ggml_pool_2d(ctx, .to_planes(ctx, x), GGML_OP_POOL_MAX, l$config$pool_size[2], l$config$pool_size[1],
                                  l$config$strides[2], l$config$strides[1], 0, 0),
    global_max_pooling_2d = ggml_pool_2d(ctx, .to_planes(ctx, x), GGML_OP_POOL_MAX, shp[2], shp[1], shp[2], shp[1], 0, 0),
    global_average_pooling_2d = ggml_pool_2d(ctx, .to_planes(ctx, x), GGML_OP_POOL_AVG, shp[2], shp[1], shp[2], shp[1], 0, 0))
  if (l$type == "max_pooling_2d") .from_planes(ctx, pooled) else ggml_reshape_2d(ctx, pooled, shp[3], nb)
}

# Training: batch statistics per channel, x as [C, M] (M = positions * batch)
# transposed to rows of one channel, ggml_norm over each row, transposed
# back. Inference: the moving statistics ([C] vectors, broadcast over x).
.build_batch_norm <- function(ctx, l, x, training) {
  w <- l$weights
  if (!training) {
    scale <- ggml_div(ctx, w$gamma, ggml_sqrt(ctx, ggml_scale_bias(ctx, w$moving_var, 1, l$config$eps)))
    return(ggml_add(ctx, ggml_mul(ctx, ggml_sub(ctx, x, w$moving_mean), scale), w$beta))
  }
  shp <- ggml_tensor_shape(x)
  c_dim <- shp[1]
  rows <- ggml_cont(ctx, ggml_transpose(ctx, ggml_reshape_2d(ctx, x, c_dim, ggml_nelements(x) %/% c_dim)))
  y <- ggml_cont(ctx, ggml_transpose(ctx, ggml_norm(ctx, rows, l$config$eps)))
  y <- ggml_add(ctx, ggml_mul(ctx, y, l$weights$gamma), l$weights$beta)
  ggml_reshape(ctx, y, x)
}

# Rows [k u, (k + 1) u) of a contiguous [m, N] tensor, as [u, N].
.rows_view <- function(ctx, t, k, u) {
  ne <- ggml_tensor_shape(t)
  ggml_view_2d(ctx, t, u, ne[2], 4 * ne[1], 4 * k * u)
}

.build_recurrent <- function(ctx, l, x) {
  ne <- ggml_tensor_shape(x)  # [features, seq, N], contiguous
  f <- ne[1]; seq <- ne[2]; nb <- ne[3]; u <- l$config$units; w <- l$weights
  act <- function(t) .apply_activation(ctx, t, l$config$activation)
  ract <- function(t) .apply_activation(ctx, t, l$config$recurrent_activation)
  h <- NULL; cell <- NULL; hs <- NULL
  for (t in seq_len(seq)) {
    x_t <- ggml_view_2d(ctx, x, f, nb, 4 * f * seq, 4 * f * (t - 1))
    if (l$type == "lstm") {
      z <- ggml_add(ctx, ggml_mul_mat(ctx, w$W_gates, x_t), w$b_gates)
      if (!is.null(h)) z <- ggml_add(ctx, z, ggml_mul_mat(ctx, w$U_gates, h))
      ig <- ggml_mul(ctx, ract(.rows_view(ctx, z, 0, u)), act(.rows_view(ctx, z, 2, u)))
      cell <- if (is.null(cell)) ig else ggml_add(ctx, ggml_mul(ctx, ract(.rows_view(ctx, z, 1, u)), cell), ig)
      h <- ggml_mul(ctx, ract(.rows_view(ctx, z, 3, u)), act(cell))
    } else {
      zr <- ggml_add(ctx, ggml_mul_mat(ctx, w$W_zh, x_t), w$b_zh)
      if (!is.null(h)) zr <- ggml_add(ctx, zr, ggml_mul_mat(ctx, w$U_zh, h))
      zr <- ract(zr)
      pre <- ggml_add(ctx, ggml_mul_mat(ctx, w$W_n, x_t), w$b_n)
      if (!is.null(h)) pre <- ggml_add(ctx, pre, ggml_mul(ctx, .rows_view(ctx, zr, 1, u), ggml_mul_mat(ctx, w$U_n, h)))
      n <- act(pre)
      zn <- ggml_mul(ctx, .rows_view(ctx, zr, 0, u), n)
      h <- if (is.null(h)) ggml_sub(ctx, n, zn) else ggml_add(ctx, ggml_sub(ctx, n, zn), ggml_mul(ctx, .rows_view(ctx, zr, 0, u), h))
    }
    if (l$config$return_sequences) {
      h3 <- ggml_reshape_3d(ctx, ggml_cont(ctx, h), u, 1L, nb)
      hs <- if (is.null(hs)) h3 else ggml_concat(ctx, hs, h3, 1L)
    }
  }
  if (l$config$return_sequences) hs else h
}

# The forward graph of the layers on x (ggml shape c(rev(input_shape), batch)).
# masks: one tensor per dropout site (.dropout_sites; training) or NULL
# (inference); logits = TRUE leaves out a final softmax, which ggml-opt's
# cross-entropy applies itself; mem_ctx: a context with memory for the
# attention layers' positions and mask (ctx itself when it has memory).
# A functional model's graph is built by .build_graph (x: its flat inputs).
# training = TRUE: batch statistics in batch_norm layers (else their moving ones).
.build_forward <- function(model, ctx, x, masks = NULL, logits = FALSE, mem_ctx = ctx, training = FALSE) {
  model <- .with_tied_head(model)
  if (.is_graph(model)) return(.build_graph(model, ctx, x, masks, logits, training = training))
  nb <- ggml_tensor_shape(x)[length(model$input_shape) + 1]
  n <- length(model$layers)
  att <- NULL
  for (i in seq_len(n)) {
    l <- model$layers[[i]]
    if (is.null(att) && l$type %in% c("multihead_attention", "transformer_block")) att <- .attention_inputs(mem_ctx, l$input_shape[1])
    x <- .build_layer(ctx, l, x, nb, masks, strip_softmax = logits && i == n, att = att, training = training)
  }
  x
}

# One layer l on x (batch nb); strip_softmax leaves out a softmax activation.
.build_layer <- function(ctx, l, x, nb, masks = NULL, strip_softmax = FALSE, att = NULL, training = FALSE) {
  switch(l$type,
    positional_embedding = , multihead_attention = , transformer_block = , lm_head = .build_transformer(ctx, l, x, att, masks),
    dense = {
      act <- l$config$activation
      if (strip_softmax && identical(act, "softmax")) act <- NULL
      .apply_activation(ctx, ggml_add(ctx, ggml_mul_mat(ctx, l$weights$weight, x), l$weights$bias), act)
    },
    flatten = ggml_reshape_2d(ctx, ggml_cont(ctx, x), l$output_shape, nb),
    dropout = if (is.null(masks[[l$name]])) x else ggml_mul(ctx, x, masks[[l$name]]),
    conv_2d = .build_conv_2d(ctx, l, x),
    conv_1d = .build_conv_1d(ctx, l, x),
    max_pooling_2d = , global_max_pooling_2d = , global_average_pooling_2d = .build_pool(ctx, l, x, nb),
    batch_norm = .build_batch_norm(ctx, l, x, training),
    lstm = , gru = .build_recurrent(ctx, l, x),
    # get_rows takes a vector of ids: look up seq * batch rows, then split them
    embedding = ggml_reshape_3d(ctx, ggml_get_rows(ctx, l$weights$weight, ggml_reshape_1d(ctx, x, ggml_nelements(x))),
                                l$config$dim, l$input_shape, nb))
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
  if (.is_graph(model)) stop("layers cannot be removed from a functional model", call. = FALSE)
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

# The Keras-like model API of CRAN ggmlR: sequential models, compile(),
# printing and GGUF persistence. A model is a list (class
# ggml_sequential_model) of layer descriptions; compile() infers the shapes
# and allocates the weights in one ggml context, which fit() then trains in
# place through ggml-opt (fit.R).

ggml_model_sequential <- function() {
  structure(list(layers = list(), input_shape = NULL, compiled = FALSE,
                 compilation = list(ctx_weights = NULL, backend = NULL, sched = NULL, optimizer = NULL,
                                    loss = NULL, metrics = NULL, learning_rate = NULL)),
            class = c("ggml_sequential_model", "list"))
}

.optimizers <- c("adam", "adamw", "sgd")
.losses <- c("categorical_crossentropy", "crossentropy", "cross_entropy", "mse", "mean_squared_error")

# Generics with the names keras and CRAN ggmlR use (as in the generics package).
compile <- function(object, ...) UseMethod("compile")
fit <- function(object, ...) UseMethod("fit")
evaluate <- function(x, ...) UseMethod("evaluate")

ggml_compile <- function(model, ...) UseMethod("ggml_compile")

# beta1, beta2 and weight_decay are AdamW's (ggml-opt's defaults); the
# weight decay applies to the matrices and embeddings, not to the norms'
# gains and betas or to biases (as GPT-2 and the C main job train).
ggml_compile.ggml_sequential_model <- function(model, optimizer = "adam", loss = "categorical_crossentropy",
                                               metrics = c("accuracy"), backend = "auto", learning_rate = NULL,
                                               beta1 = 0.9, beta2 = 0.999, weight_decay = 0, ...) {
  if (length(model$layers) == 0) stop("the model has no layers: add layers before compiling", call. = FALSE)
  optimizer <- match.arg(optimizer, .optimizers)
  loss <- match.arg(loss, .losses)
  if (!backend %in% c("auto", "cpu")) stop(sprintf("backend '%s' is not available: use 'auto' or 'cpu'", backend), call. = FALSE)
  if (!is.null(learning_rate) && (!is.numeric(learning_rate) || length(learning_rate) != 1 || is.na(learning_rate) ||
                                  learning_rate <= 0)) {
    stop("'learning_rate' must be NULL or a positive number", call. = FALSE)
  }
  in_unit <- function(x, what, upper_open) {
    if (!is.numeric(x) || length(x) != 1 || is.na(x) || x < 0 || (upper_open && x >= 1)) {
      stop(sprintf("'%s' must be a number %s", what, if (upper_open) "in [0, 1)" else ">= 0"), call. = FALSE)
    }
    as.double(x)
  }
  adamw <- list(beta1 = in_unit(beta1, "beta1", TRUE), beta2 = in_unit(beta2, "beta2", TRUE),
                wd = in_unit(weight_decay, "weight_decay", FALSE))
  model <- nn_infer_shapes(model)
  model <- .init_weights(model)
  .with_tied_head(model)  # a tied head that does not fit its embedding is an error now, not at fit()
  cpu <- ggml_backend_cpu_init()
  model$compilation$backend <- cpu
  model$compilation$backend_requested <- backend
  model$compilation$sched <- ggml_backend_sched_new(cpu)
  model$compilation$optimizer <- optimizer
  model$compilation$loss <- loss
  model$compilation$metrics <- metrics
  model$compilation$learning_rate <- learning_rate
  model$compilation$adamw <- adamw
  model$compiled <- TRUE
  invisible(model)
}

compile.ggml_sequential_model <- function(object, optimizer = "adam", loss = "categorical_crossentropy",
                                          metrics = c("accuracy"), ...) {
  ggml_compile(object, optimizer = optimizer, loss = loss, metrics = metrics, ...)
}

print.ggml_sequential_model <- function(x, ...) {
  cat("ggml Sequential Model\n")
  if (length(x$layers) == 0) {
    cat("  (no layers)\n")
    return(invisible(x))
  }
  m <- if (is.null(x$input_shape)) x else nn_infer_shapes(x)
  cat(sprintf("  %-22s %-20s %-14s %10s\n", "Layer", "Type", "Output shape", "Params"))
  for (l in m$layers) {
    cat(sprintf("  %-22s %-20s %-14s %10s\n", l$name, l$type,
                if (is.null(l$output_shape)) "?" else paste0("(", paste(l$output_shape, collapse = ", "), ")"),
                format(.layer_n_params(l))))
  }
  cat(sprintf("  Total parameters: %s\n", format(sum(vapply(m$layers, .layer_n_params, numeric(1))))))
  cat(sprintf("  Compiled: %s\n", if (isTRUE(x$compiled)) paste(x$compilation$optimizer, x$compilation$loss, sep = ", ") else "no"))
  if (isTRUE(x$compiled) && !all(vapply(Filter(Negate(is.null), .model_handles(x)), .valid, logical(1)))) {
    cat("  Its ggml memory is gone (read back by readRDS? use ggml_save_model / ggml_load_model)\n")
  }
  invisible(x)
}

summary.ggml_sequential_model <- function(object, ...) {
  m <- nn_infer_shapes(object)
  n <- vapply(m$layers, .layer_n_params, numeric(1))
  trainable <- vapply(m$layers, function(l) l$trainable, logical(1))
  cat(sprintf("Model Summary (%s)\n", if (.is_graph(m)) "functional" else "sequential"))
  for (s in .input_shapes(m)) cat(sprintf("  Input shape: (%s)\n", paste(s, collapse = ", ")))
  print(m)
  cat(sprintf("  Trainable parameters: %s\n  Non-trainable parameters: %s\n", format(sum(n[trainable])), format(sum(n[!trainable]))))
  cat(sprintf("  Weight memory: %.1f KiB (F32)\n", 4 * sum(n) / 1024))
  invisible(data.frame(name = vapply(m$layers, `[[`, "", "name"), type = vapply(m$layers, `[[`, "", "type"),
                       params = n, trainable = trainable))
}

# ---- persistence (GGUF) ----

# Architecture as GGUF keys ggmlr.model.* and ggmlr.layer.<i>.*, each config
# entry as an array of its R type; weights as tensors l<i>.<weight>. A
# functional model adds its graph as ggmlr.node.<j>.* (kind, name, parents,
# layer, input, axis, shape, dtype) and ggmlr.graph.outputs.
ggml_save_model <- function(model, path) .write_model(model, path, weights_only = FALSE)

.write_model <- function(model, path, weights_only) {
  if (!inherits(model, "ggml_sequential_model") || !isTRUE(model$compiled)) stop("'model' must be a compiled model", call. = FALSE)
  .check_alive(model)
  g <- gguf_init_empty()
  on.exit(gguf_free(g))
  put <- function(key, v) {
    if (is.null(v)) return(invisible(NULL))
    if (is.character(v)) gguf_set_arr_str(g, key, v)
    else if (is.logical(v)) gguf_set_val_bool(g, key, v)
    else if (is.integer(v)) gguf_set_arr_data(g, key, GGUF_TYPE_INT32, v)
    else gguf_set_arr_data(g, key, GGUF_TYPE_FLOAT64, v)
  }
  gguf_set_val_str(g, "general.architecture", if (.is_graph(model)) "ggmlr.functional" else "ggmlr.sequential")
  gguf_set_val_bool(g, "ggmlr.model.weights_only", weights_only)
  put("ggmlr.model.input_shape", model$input_shape)
  gguf_set_val_i32(g, "ggmlr.model.n_layers", length(model$layers))
  for (k in c("optimizer", "loss", "metrics", "learning_rate")) {
    if (length(model$compilation[[k]]) > 0) put(paste0("ggmlr.model.", k), model$compilation[[k]])
  }
  for (i in seq_along(model$layers)) {
    l <- model$layers[[i]]
    p <- sprintf("ggmlr.layer.%d.", i)
    put(paste0(p, "type"), l$type)
    put(paste0(p, "name"), l$name)
    put(paste0(p, "trainable"), l$trainable)
    for (k in names(l$config)) put(paste0(p, "config.", k), l$config[[k]])
    for (w in l$weights) gguf_add_tensor(g, w)
  }
  if (.is_graph(model)) {
    gguf_set_val_i32(g, "ggmlr.graph.n_nodes", length(model$graph))
    put("ggmlr.graph.outputs", as.integer(model$output_nodes))
    for (j in seq_along(model$graph)) {
      e <- model$graph[[j]]
      p <- sprintf("ggmlr.node.%d.", j)
      put(paste0(p, "kind"), e$kind)
      put(paste0(p, "name"), e$name)
      if (length(e$parents) > 0) put(paste0(p, "parents"), as.integer(e$parents))
      put(paste0(p, "layer"), e$layer)
      put(paste0(p, "axis"), e$axis)
      if (e$kind == "input") {
        put(paste0(p, "input"), e$input)
        put(paste0(p, "shape"), model$inputs[[e$input]]$config$shape)
        put(paste0(p, "dtype"), model$inputs[[e$input]]$config$dtype)
      }
    }
  }
  gguf_write_to_file(g, path)
  invisible(path)
}

ggml_load_model <- function(path, backend = "auto") .read_model(path, backend, weights_only_ok = FALSE)

.read_model <- function(path, backend = "auto", weights_only_ok) {
  if (!is.character(path) || length(path) != 1 || !file.exists(path)) stop("'path' must name an existing file", call. = FALSE)
  f <- gguf_init_from_file(path)
  on.exit({ gguf_free(f$gguf); if (!is.null(f$ctx)) ggml_free(f$ctx) })
  g <- f$gguf
  get <- function(key, must = TRUE) {
    id <- gguf_find_key(g, key)
    if (id < 0) {
      if (must) stop(sprintf("ggml_load_model: '%s' has no key %s: not a model written by ggml_save_model", path, key), call. = FALSE)
      return(NULL)
    }
    v <- gguf_get_val(g, id)
    if (gguf_get_kv_type(g, id) == GGUF_TYPE_ARRAY && gguf_get_arr_type(g, id) == GGUF_TYPE_INT32) as.integer(v) else v
  }
  arch <- get("general.architecture")
  if (!identical(arch, "ggmlr.sequential") && !identical(arch, "ggmlr.functional")) stop("ggml_load_model: not a sequential model nor a functional one", call. = FALSE)
  if (isTRUE(get("ggmlr.model.weights_only", FALSE)) && !weights_only_ok) {
    stop(sprintf("'%s' holds weights only (written by ggml_save_weights): read it into a compiled model with ggml_load_weights",
                 path), call. = FALSE)
  }
  keys <- vapply(seq_len(gguf_get_n_kv(g)) - 1, function(k) gguf_get_key(g, k), "")
  layers <- lapply(seq_len(get("ggmlr.model.n_layers")), function(i) {
    p <- sprintf("ggmlr.layer.%d.", i)
    type <- get(paste0(p, "type"))
    if (!type %in% .layer_types) stop(sprintf("ggml_load_model: unknown layer type '%s'", type), call. = FALSE)
    ck <- keys[startsWith(keys, paste0(p, "config."))]
    list(type = type, name = get(paste0(p, "name")), trainable = get(paste0(p, "trainable")),
         config = stats::setNames(lapply(ck, get), substring(ck, nchar(p) + 8)))
  })
  if (arch == "ggmlr.functional") {
    model <- .graph_from_keys(get, layers)
  } else {
    model <- ggml_model_sequential()
    model$input_shape <- get("ggmlr.model.input_shape")
    for (l in layers) model <- .add_layer(model, l$type, l$config, l$name, l$trainable)
  }
  model <- ggml_compile(model, optimizer = get("ggmlr.model.optimizer"), loss = get("ggmlr.model.loss"),
                        metrics = get("ggmlr.model.metrics", FALSE), backend = backend,
                        learning_rate = get("ggmlr.model.learning_rate", FALSE))
  .copy_weights(model, f$ctx)
  model
}

# The functional model of the saved graph (its nodes rebuilt in order).
.graph_from_keys <- function(get, layers) {
  nodes <- list()
  inputs <- list()
  for (j in seq_len(get("ggmlr.graph.n_nodes"))) {
    p <- sprintf("ggmlr.node.%d.", j)
    kind <- get(paste0(p, "kind"))
    parents <- nodes[get(paste0(p, "parents"), FALSE)]
    name <- get(paste0(p, "name"))
    nodes[[j]] <- switch(kind,
      input = inputs[[get(paste0(p, "input"))]] <- ggml_input(get(paste0(p, "shape")), name, get(paste0(p, "dtype"))),
      add = ggml_layer_add(parents, name),
      concatenate = ggml_layer_concatenate(parents, get(paste0(p, "axis")), name),
      layer = {
        l <- layers[[get(paste0(p, "layer"))]]
        .new_node(l$type, c(l$config, list(name = l$name)), parents, trainable = l$trainable)
      },
      stop(sprintf("ggml_load_model: unknown node kind '%s'", kind), call. = FALSE))
  }
  ggml_model(inputs, nodes[get("ggmlr.graph.outputs")])
}

# The weights of a compiled model from the tensors of the same names in ctx.
.copy_weights <- function(model, ctx) {
  for (l in model$layers) {
    for (w in l$weights) {
      src <- ggml_get_tensor(ctx, ggml_get_name(w))
      if (is.null(src) || !identical(ggml_tensor_shape(src), ggml_tensor_shape(w))) {
        stop(sprintf("weights mismatch: tensor %s is missing or has another shape", ggml_get_name(w)), call. = FALSE)
      }
      ggml_backend_tensor_set_data(w, ggml_backend_tensor_get_data(src))
    }
  }
  invisible(model)
}

# Weights only: the file of ggml_save_model, read into a compiled model of
# the same layer types and shapes.
ggml_save_weights <- function(model, path) {
  .write_model(model, path, weights_only = TRUE)
  invisible(model)
}

ggml_load_weights <- function(model, path) {
  .check_compiled(model)
  saved <- .read_model(path, weights_only_ok = TRUE)
  types <- function(m) vapply(m$layers, `[[`, "", "type")
  if (!identical(types(saved), types(model)) ||
      !identical(lapply(saved$layers, `[[`, "output_shape"), lapply(model$layers, `[[`, "output_shape"))) {
    stop(sprintf("architecture mismatch: the file has layers %s, the model %s", paste(types(saved), collapse = ", "),
                 paste(types(model), collapse = ", ")), call. = FALSE)
  }
  for (i in seq_along(model$layers)) {
    for (w in names(model$layers[[i]]$weights)) {
      ggml_backend_tensor_set_data(model$layers[[i]]$weights[[w]], ggml_backend_tensor_get_data(saved$layers[[i]]$weights[[w]]))
    }
  }
  ggml_free(saved$compilation$ctx_weights)
  invisible(model)
}

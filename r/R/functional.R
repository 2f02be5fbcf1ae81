# The functional API of CRAN ggmlR: graphs of layers that branch and merge.
# A node (class ggml_tensor_node) records how it is computed, not a tensor:
# list(id, node_type, layer_id, trainable, config, parents). ggml_model()
# sorts the nodes reachable from the outputs into model$graph and collects
# their layers into model$layers, the list every sequential method already
# works on (shapes, weights, dropout sites, training copies, GGUF). A layer
# is known by its name: nodes of the same name are one layer applied several
# times, sharing its weights (ggml_apply() of one layer object, or layers
# given the same name).

.fn_counters <- new.env(parent = emptyenv())

# 1, 2, ... per kind of name, over the session (as CRAN: input_1, dense_3).
.next_count <- function(kind) {
  n <- if (is.null(.fn_counters[[kind]])) 1L else .fn_counters[[kind]] + 1L
  assign(kind, n, envir = .fn_counters)
  n
}
.auto_name <- function(type) paste0(type, "_", .next_count(type))

.check_name <- function(name, type) {
  if (is.null(name)) return(.auto_name(type))
  if (!is.character(name) || length(name) != 1 || is.na(name) || !nzchar(name)) stop("'name' must be a single string", call. = FALSE)
  name
}

.check_flag <- function(x, what) {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) stop(sprintf("'%s' must be TRUE or FALSE", what), call. = FALSE)
  x
}

.new_node <- function(node_type, config, parents, layer_id = NULL, trainable = NULL) {
  structure(list(id = paste0("node_", .next_count(".node")), node_type = node_type, layer_id = layer_id,
                 trainable = trainable, config = config, parents = parents), class = "ggml_tensor_node")
}

.is_node <- function(x) inherits(x, "ggml_tensor_node")

ggml_input <- function(shape, name = NULL, dtype = "float32") {
  shape <- vapply(shape, .check_count, integer(1), "shape")
  if (length(shape) < 1 || length(shape) > 3) stop("'shape' must have 1 to 3 dimensions", call. = FALSE)
  if (!is.character(dtype) || length(dtype) != 1 || !dtype %in% c("float32", "int32")) {
    stop("'dtype' must be \"float32\" or \"int32\"", call. = FALSE)
  }
  .new_node("input", list(shape = shape, name = .check_name(name, "input"), dtype = dtype), list())
}

# A layer constructor applied to a node (from .add_layer).
.add_node <- function(node, type, config, name, trainable) {
  .new_node(type, c(config, list(name = .check_name(name, type))), list(node), trainable = .check_flag(trainable, "trainable"))
}

# ---- layer objects, applied with ggml_apply() ----

# ggml_dense() and the others call the layer constructor on this marker,
# which .add_layer turns into a layer object (the same checks as the layers).
.layer_spec <- function() structure(list(), class = "ggml_layer_spec")

.layer_object <- function(type, config, name, trainable) {
  structure(list(layer_id = paste0("layer_", .next_count(".layer")), node_type = type, name = .check_name(name, type),
                 config = config, trainable = .check_flag(trainable, "trainable")), class = "ggml_layer")
}

ggml_dense <- function(units, activation = NULL, name = NULL, trainable = TRUE) {
  ggml_layer_dense(.layer_spec(), units, activation = activation, name = name, trainable = trainable)
}

ggml_batch_norm <- function(eps = 1e-5, name = NULL, trainable = TRUE) {
  ggml_layer_batch_norm(.layer_spec(), eps = eps, name = name, trainable = trainable)
}

ggml_embedding <- function(vocab_size, dim, name = NULL, trainable = TRUE) {
  ggml_layer_embedding(.layer_spec(), vocab_size, dim, name = name, trainable = trainable)
}

ggml_lstm <- function(units, return_sequences = FALSE, activation = "tanh", recurrent_activation = "sigmoid", name = NULL,
                      trainable = TRUE) {
  ggml_layer_lstm(.layer_spec(), units, return_sequences, activation, recurrent_activation, name = name, trainable = trainable)
}

ggml_gru <- function(units, return_sequences = FALSE, activation = "tanh", recurrent_activation = "sigmoid", name = NULL,
                     trainable = TRUE) {
  ggml_layer_gru(.layer_spec(), units, return_sequences, activation, recurrent_activation, name = name, trainable = trainable)
}

print.ggml_layer <- function(x, ...) {
  cat(sprintf("ggml layer '%s' (%s)\n", x$name, x$node_type))
  invisible(x)
}

ggml_apply <- function(tensor, layer) {
  if (!.is_node(tensor)) stop("'tensor' must be a ggml_tensor_node (from ggml_input() or a layer)", call. = FALSE)
  if (!inherits(layer, "ggml_layer")) stop("'layer' must be a ggml_layer object (from ggml_dense() and the others)", call. = FALSE)
  .new_node(layer$node_type, c(layer$config, list(name = layer$name)), list(tensor), layer_id = layer$layer_id,
            trainable = layer$trainable)
}

# ---- merging nodes ----

.check_merge <- function(tensors) {
  if (.is_node(tensors) || !is.list(tensors) || length(tensors) < 2) {
    stop("'tensors' must be a list of at least 2 ggml_tensor_node objects", call. = FALSE)
  }
  if (!all(vapply(tensors, .is_node, logical(1)))) stop("every element of 'tensors' must be a ggml_tensor_node", call. = FALSE)
  unname(tensors)
}

# Element-wise sum of nodes of one shape.
ggml_layer_add <- function(tensors, name = NULL) {
  tensors <- .check_merge(tensors)
  .new_node("add", list(name = .check_name(name, "add")), tensors)
}

# axis counts the datapoint's dimensions from 0 in R order (0 the first,
# -1 the last: the features or channels); the other dimensions must agree.
ggml_layer_concatenate <- function(tensors, axis = 0L, name = NULL) {
  tensors <- .check_merge(tensors)
  if (!is.numeric(axis) || length(axis) != 1 || is.na(axis) || axis != floor(axis) || abs(axis) > 1e6) {
    stop("'axis' must be a whole number", call. = FALSE)
  }
  .new_node("concatenate", list(axis = as.integer(axis), name = .check_name(name, "concatenate")), tensors)
}

# ---- the model ----

# The nodes reachable from outputs, each after its parents (inputs first).
nn_topo_sort <- function(outputs) {
  if (.is_node(outputs)) outputs <- list(outputs)
  seen <- new.env(parent = emptyenv())
  ordered <- list()
  visit <- function(node) {
    if (!is.null(seen[[node$id]])) return(invisible(NULL))
    assign(node$id, TRUE, envir = seen)
    for (p in node$parents) visit(p)
    ordered[[length(ordered) + 1L]] <<- node
    invisible(NULL)
  }
  for (o in outputs) visit(o)
  ordered
}

.node_list <- function(x, what) {
  if (.is_node(x)) x <- list(x)
  if (!is.list(x) || length(x) == 0 || !all(vapply(x, .is_node, logical(1)))) {
    stop(sprintf("'%s' must be a ggml_tensor_node or a list of such nodes", what), call. = FALSE)
  }
  unname(x)
}

.merge_types <- c("add", "concatenate")

# model$graph: one entry per node in topological order, list(kind = "input",
# "layer", "add" or "concatenate", parents (graph indices), layer (index in
# model$layers), input (index in model$inputs), axis, name); model$output_nodes
# the graph indices of the outputs (the last one is what fit trains).
ggml_model <- function(inputs, outputs) {
  inputs <- .node_list(inputs, "inputs")
  outputs <- .node_list(outputs, "outputs")
  for (i in seq_along(inputs)) {
    if (!identical(inputs[[i]]$node_type, "input")) {
      stop(sprintf("'inputs[[%d]]' has node_type '%s': model inputs must come from ggml_input()", i, inputs[[i]]$node_type),
           call. = FALSE)
    }
  }
  input_ids <- vapply(inputs, `[[`, "", "id")
  if (anyDuplicated(input_ids)) stop("'inputs' lists a node twice", call. = FALSE)
  if (length(unique(vapply(inputs, function(n) n$config$dtype, ""))) > 1) {
    stop("the inputs must have one dtype (all float32 or all int32)", call. = FALSE)
  }
  nodes <- nn_topo_sort(outputs)
  ids <- vapply(nodes, `[[`, "", "id")
  model <- ggml_model_sequential()
  graph <- vector("list", length(nodes))
  for (j in seq_along(nodes)) {
    node <- nodes[[j]]
    entry <- list(kind = node$node_type, name = node$config$name, parents = match(vapply(node$parents, `[[`, "", "id"), ids))
    if (node$node_type == "input") {
      entry$input <- match(node$id, input_ids)
      if (is.na(entry$input)) {
        stop(sprintf("'outputs' are not computed from 'inputs' alone: input '%s' is not in 'inputs'", node$config$name),
             call. = FALSE)
      }
    } else if (node$node_type %in% .merge_types) {
      entry$axis <- node$config$axis
    } else {
      entry$kind <- "layer"
      if (node$node_type %in% .transformer_types) {
        stop(sprintf("layer '%s': the transformer layers are for sequential models", node$config$name), call. = FALSE)
      }
      entry$layer <- .graph_layer(model, node)
      if (entry$layer > length(model$layers)) {
        model$layers[[entry$layer]] <- list(type = node$node_type, name = node$config$name, trainable = node$trainable,
                                            config = node$config[names(node$config) != "name"], input_shape = NULL,
                                            output_shape = NULL, weights = list())
      }
    }
    graph[[j]] <- entry
  }
  unused <- setdiff(input_ids, ids)
  if (length(unused) > 0) {
    stop(sprintf("input '%s' is not used to compute 'outputs'", inputs[[match(unused[1], input_ids)]]$config$name), call. = FALSE)
  }
  model$inputs <- inputs
  model$outputs <- outputs
  model$graph <- graph
  model$output_nodes <- match(vapply(outputs, `[[`, "", "id"), ids)
  class(model) <- c("ggml_functional_model", class(model))
  model
}

# The index in model$layers of a node's layer: the layer of its name, which
# must then be of the same kind (type, configuration, trainable), or a new one.
.graph_layer <- function(model, node) {
  i <- match(node$config$name, vapply(model$layers, `[[`, "", "name"))
  if (is.na(i)) return(length(model$layers) + 1L)
  l <- model$layers[[i]]
  if (!identical(l$type, node$node_type) || !identical(l$config, node$config[names(node$config) != "name"]) ||
      !identical(l$trainable, node$trainable)) {
    stop(sprintf("the name '%s' is given to two different layers: a shared layer is one layer applied twice (ggml_apply)",
                 node$config$name), call. = FALSE)
  }
  i
}

.is_graph <- function(model) !is.null(model$graph)

# Shapes of every node (entry$shape) and of every layer's input and output;
# a shared layer must see one input shape.
.infer_graph_shapes <- function(model) {
  g <- model$graph
  for (j in seq_along(g)) {
    e <- g[[j]]
    parent_shapes <- lapply(g[e$parents], `[[`, "shape")
    if (e$kind %in% .merge_types && model$inputs[[1]]$config$dtype == "int32" && any(vapply(g[e$parents], `[[`, "", "kind") == "input")) {
      stop(sprintf("'%s' merges int32 inputs: token ids go to embedding layers", e$name), call. = FALSE)
    }
    e$shape <- switch(e$kind,
      input = model$inputs[[e$input]]$config$shape,
      add = {
        for (s in parent_shapes[-1]) {
          if (!identical(s, parent_shapes[[1]])) {
            stop(sprintf("ggml_layer_add '%s': shape mismatch, (%s) and (%s)", e$name, paste(parent_shapes[[1]], collapse = ", "),
                         paste(s, collapse = ", ")), call. = FALSE)
          }
        }
        parent_shapes[[1]]
      },
      concatenate = .concat_shape(e, parent_shapes),
      layer = {
        l <- model$layers[[e$layer]]
        shape <- parent_shapes[[1]]
        on_ids <- identical(g[[e$parents]]$kind, "input") && model$inputs[[g[[e$parents]]$input]]$config$dtype == "int32"
        if ((l$type == "embedding") != on_ids) {
          stop(sprintf("layer '%s': embedding layers take an input of dtype int32 (token ids), the other layers float32 values",
                       l$name), call. = FALSE)
        }
        if (!is.null(l$input_shape) && !identical(l$input_shape, shape)) {
          stop(sprintf("shared layer '%s' is applied to datapoints of shapes (%s) and (%s)", l$name,
                       paste(l$input_shape, collapse = ", "), paste(shape, collapse = ", ")), call. = FALSE)
        }
        l$input_shape <- shape
        l$output_shape <- .layer_output_shape(l, shape)
        model$layers[[e$layer]] <- l
        l$output_shape
      })
    g[[j]] <- e
  }
  model$graph <- g
  model
}

.concat_shape <- function(e, parent_shapes) {
  rank <- length(parent_shapes[[1]])
  axis <- if (e$axis < 0) rank + e$axis else e$axis
  if (axis < 0 || axis >= rank) {
    stop(sprintf("ggml_layer_concatenate '%s': axis %d is out of range for datapoints of %d dimension(s) (valid: %d to %d)",
                 e$name, e$axis, rank, -rank, rank - 1), call. = FALSE)
  }
  for (s in parent_shapes) {
    if (length(s) != rank || !identical(s[-(axis + 1)], parent_shapes[[1]][-(axis + 1)])) {
      stop(sprintf("ggml_layer_concatenate '%s': shape mismatch, (%s) and (%s) differ outside axis %d", e$name,
                   paste(parent_shapes[[1]], collapse = ", "), paste(s, collapse = ", "), e$axis), call. = FALSE)
    }
  }
  out <- parent_shapes[[1]]
  out[axis + 1] <- sum(vapply(parent_shapes, `[`, integer(1), axis + 1))
  out
}

# A tensor t reshaped to a datapoint shape (R order) times the batch nb.
.reshape_batch <- function(ctx, t, shape, nb) {
  ne <- c(rev(shape), nb)
  switch(length(ne) - 1, ggml_reshape_2d(ctx, t, ne[1], ne[2]), ggml_reshape_3d(ctx, t, ne[1], ne[2], ne[3]),
         ggml_reshape_4d(ctx, t, ne[1], ne[2], ne[3], ne[4]))
}

# The graph on flat [sum of the inputs' sizes, batch]: each input is its rows
# of flat (a view of them when there are several). Returns the tensor of the
# last output, or with all_outputs = TRUE a list of every output's tensor;
# logits = TRUE leaves out a softmax computing the last output; training as
# for .build_forward.
.build_graph <- function(model, ctx, flat, masks = NULL, logits = FALSE, all_outputs = FALSE, training = FALSE) {
  nb <- ggml_tensor_shape(flat)[2]
  sizes <- vapply(.input_shapes(model), prod, numeric(1))
  offsets <- cumsum(c(0, sizes))
  row_bytes <- ggml_element_size(flat) * sum(sizes)
  loss_node <- model$output_nodes[length(model$output_nodes)]
  built <- vector("list", length(model$graph))
  for (j in seq_along(model$graph)) {
    e <- model$graph[[j]]
    xs <- built[e$parents]
    built[[j]] <- switch(e$kind,
      input = {
        k <- e$input
        rows <- if (length(sizes) == 1) flat
                else ggml_cont(ctx, ggml_view_2d(ctx, flat, sizes[k], nb, row_bytes, ggml_element_size(flat) * offsets[k]))
        .reshape_batch(ctx, rows, e$shape, nb)
      },
      add = Reduce(function(a, b) ggml_add(ctx, a, b), xs),
      concatenate = {
        rank <- length(e$shape)
        axis <- if (e$axis < 0) rank + e$axis else e$axis
        Reduce(function(a, b) ggml_concat(ctx, a, b, rank - 1L - axis), xs)
      },
      layer = .build_layer(ctx, model$layers[[e$layer]], xs[[1]], nb, masks, strip_softmax = logits && j == loss_node,
                           training = training))
  }
  if (all_outputs) built[model$output_nodes] else built[[loss_node]]
}

# ---- printing ----

print.ggml_functional_model <- function(x, ...) {
  cat("ggml Functional Model\n")
  m <- tryCatch(nn_infer_shapes(x), error = function(e) x)
  shape_str <- function(s) if (is.null(s)) "?" else paste0("(", paste(s, collapse = ", "), ")")
  cat(sprintf("  %-20s %-20s %-14s %10s  %s\n", "Node", "Type", "Output shape", "Params", "Inputs"))
  for (e in m$graph) {
    l <- if (is.null(e$layer)) NULL else m$layers[[e$layer]]
    cat(sprintf("  %-20s %-20s %-14s %10s  %s\n", e$name, if (is.null(l)) e$kind else l$type, shape_str(e$shape),
                if (is.null(l)) "0" else format(.layer_n_params(l)),
                paste(vapply(m$graph[e$parents], `[[`, "", "name"), collapse = ", ")))
  }
  cat(sprintf("  Total parameters: %s\n", format(sum(vapply(m$layers, .layer_n_params, numeric(1))))))
  cat(sprintf("  Compiled: %s\n", if (isTRUE(x$compiled)) paste(x$compilation$optimizer, x$compilation$loss, sep = ", ") else "no"))
  invisible(x)
}

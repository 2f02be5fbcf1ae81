# Saving and loading ag_* models as a state dict: the parameter values (by
# the names model$parameters() gives) and the batch-norm running statistics,
# as plain matrices in an RDS file. The architecture is rebuilt by a function
# (model_fn) stored in the file or given at load time.

.ag_state_format <- "ggmlR.ag_state"
.ag_state_version <- 1L

.ag_model_layers <- function(model) if (!is.null(model$layers)) model$layers else list(model)

# Running statistics of batch-norm layers, keyed like the parameters.
.ag_buffers <- function(model) {
  buffers <- list()
  layers <- .ag_model_layers(model)
  for (i in seq_along(layers)) {
    if (!inherits(layers[[i]], "ag_batch_norm")) next
    buffers[[paste0("layer", i, "_running_mean")]] <- layers[[i]]$running_mean
    buffers[[paste0("layer", i, "_running_var")]] <- layers[[i]]$running_var
  }
  buffers
}

.ag_set_buffers <- function(model, buffers) {
  layers <- .ag_model_layers(model)
  for (i in seq_along(layers)) {
    if (!inherits(layers[[i]], "ag_batch_norm")) next
    for (stat in c("running_mean", "running_var")) {
      saved <- buffers[[paste0("layer", i, "_", stat)]]
      if (!is.null(saved)) layers[[i]][[stat]] <- saved
    }
  }
}

ag_save_model <- function(model, path, model_fn = NULL) {
  if (!inherits(model, c("ag_sequential", "ag_layer")))
    stop("ag_save_model(): `model` must be an ag_sequential or ag_* layer", call. = FALSE)
  if (!is.null(model_fn) && !is.function(model_fn))
    stop("ag_save_model(): `model_fn` must be a function or NULL", call. = FALSE)
  params <- model$parameters()
  state <- structure(list(
    format = .ag_state_format,
    version = .ag_state_version,
    parameters = lapply(params, .ag_data),
    param_dtypes = vapply(params, function(p) p$dtype, character(1L)),
    buffers = .ag_buffers(model),
    model_fn = model_fn,
    ggmlR_version = getNamespaceVersion("ggmlR"),
    R_version = getRversion(),
    created = Sys.time()
  ), class = "ggmlR_ag_state")
  saveRDS(state, path)
  invisible(path)
}

ag_load_model <- function(path, model_fn = NULL, device = NULL) {
  state <- readRDS(path)
  if (!is.list(state) || !identical(state$format, .ag_state_format))
    stop("ag_load_model(): file is not a ggmlR ag_state container", call. = FALSE)
  if (!identical(state$version, .ag_state_version))
    stop("ag_load_model(): unsupported container version ", state$version, call. = FALSE)
  build <- if (!is.null(model_fn)) model_fn else state$model_fn
  if (!is.function(build))
    stop("ag_load_model(): no `model_fn`; pass one, or save the model with `model_fn`",
         call. = FALSE)
  if (!is.null(device)) {
    previous <- ag_device(device)
    on.exit(ag_device(previous), add = TRUE)
  }
  model <- build()
  if (!inherits(model, c("ag_sequential", "ag_layer")))
    stop("ag_load_model(): `model_fn` must return an ag_sequential or ag_* layer", call. = FALSE)

  params <- model$parameters()
  saved <- state$parameters
  if (!setequal(names(params), names(saved)))
    stop("ag_load_model(): parameter mismatch between file (",
         paste(names(saved), collapse = ", "), ") and model (",
         paste(names(params), collapse = ", "), ")", call. = FALSE)
  for (name in names(params))
    if (!identical(dim(params[[name]]$data), dim(saved[[name]])))
      stop(sprintf("ag_load_model(): shape mismatch for '%s': model %s, file %s", name,
                   paste(dim(params[[name]]$data), collapse = "x"),
                   paste(dim(saved[[name]]), collapse = "x")), call. = FALSE)
  for (name in names(params)) params[[name]]$data <- saved[[name]]
  .ag_set_buffers(model, state$buffers)
  ag_eval(model)
  model
}

print.ggmlR_ag_state <- function(x, ...) {
  cat("<ggmlR ag_state>\n")
  cat("  format:         ", x$format, " v", x$version, "\n", sep = "")
  cat("  parameters:     ", length(x$parameters), "\n", sep = "")
  cat("  buffers:        ", length(x$buffers), "\n", sep = "")
  cat("  model_fn saved: ", !is.null(x$model_fn), "\n", sep = "")
  cat("  created:        ", format(x$created), "\n", sep = "")
  invisible(x)
}

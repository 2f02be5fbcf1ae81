# CRAN ggmlR's GGUF reader: a loaded file as one "gguf" object (its GGUF
# context, the ggml context holding its tensors, and header facts), read by
# name. Written over the GGUF context API of gguf.R.

gguf_load <- function(path, meta_only = FALSE) {
  if (!is.logical(meta_only) || length(meta_only) != 1 || is.na(meta_only)) {
    stop("'meta_only' must be TRUE or FALSE", call. = FALSE)
  }
  path <- normalizePath(path, mustWork = TRUE)
  # meta_only: the header and tensor infos only, no ggml context for the data
  loaded <- gguf_init_from_file(path, no_alloc = meta_only, ctx = !meta_only)
  g <- loaded$gguf
  structure(list(ptr = g, ctx = loaded$ctx, path = path,
                 version = as.integer(gguf_get_version(g)),
                 n_tensors = as.integer(gguf_get_n_tensors(g)),
                 n_kv = as.integer(gguf_get_n_kv(g)),
                 meta_only = meta_only),
            class = "gguf")
}

print.gguf <- function(x, ...) {
  cat(sprintf("GGUF file: %s\n", basename(x$path)))
  cat(sprintf("  Version:  %d\n", x$version))
  cat(sprintf("  Tensors:  %d\n", x$n_tensors))
  cat(sprintf("  Metadata: %d key-value pairs\n", x$n_kv))
  if (isTRUE(x$meta_only)) cat("  (meta_only: tensor data not loaded)\n")
  invisible(x)
}

gguf_check_object <- function(x) {
  if (!inherits(x, "gguf")) stop("Expected a gguf object (from gguf_load)", call. = FALSE)
}

# The tensor id of `name`, or an R error.
gguf_tensor_id <- function(x, name) {
  if (!is.character(name) || length(name) != 1 || is.na(name)) stop("'name' must be a single string", call. = FALSE)
  id <- gguf_find_tensor(x$ptr, name)
  if (id < 0) stop(sprintf("Tensor '%s' not found", name), call. = FALSE)
  id
}

gguf_metadata <- function(x) {
  gguf_check_object(x)
  n <- gguf_get_n_kv(x$ptr)
  ids <- seq_len(n) - 1
  values <- lapply(ids, function(id) gguf_get_val(x$ptr, id))
  names(values) <- vapply(ids, function(id) gguf_get_key(x$ptr, id), "")
  values
}

gguf_tensor_names <- function(x) {
  gguf_check_object(x)
  vapply(seq_len(gguf_get_n_tensors(x$ptr)) - 1, function(id) gguf_get_tensor_name(x$ptr, id), "")
}

gguf_tensor_info <- function(x, name) {
  gguf_check_object(x)
  id <- gguf_tensor_id(x, name)
  ne <- gguf_get_tensor_ne(x$ptr, id)
  n_dims <- max(1, which(ne != 1))  # as ggml_n_dims: trailing sizes of 1 dropped
  shape <- ne[seq_len(n_dims)]
  if (all(shape <= .Machine$integer.max)) shape <- as.integer(shape)
  list(name = name, shape = shape,
       type = ggml_type_name(gguf_get_tensor_type(x$ptr, id)),
       size_bytes = gguf_get_tensor_size(x$ptr, id))
}

gguf_tensor_data <- function(x, name) {
  gguf_check_object(x)
  if (isTRUE(x$meta_only)) {
    stop("GGUF loaded with meta_only=TRUE, tensor data not available. ",
         "Reload with gguf_load(path, meta_only=FALSE)", call. = FALSE)
  }
  shape <- gguf_tensor_info(x, name)$shape
  values <- ggml_backend_tensor_get_data(ggml_get_tensor(x$ctx, name))
  if (length(shape) > 1) dim(values) <- shape
  values
}

# Printing handles. A handle whose context (or backend) is gone prints as
# such instead of failing.

.valid <- function(x) .Call(C_ggml_handle_valid, x)

.bytes <- function(n) {
  if (n < 1024) return(paste(n, "B"))
  units <- c("KiB", "MiB", "GiB", "TiB")
  e <- min(floor(log(n, 1024)), length(units))
  sprintf("%.1f %s", n / 1024^e, units[e])
}

print.ggml_context <- function(x, ...) {
  if (.valid(x)) {
    cat(sprintf("<ggml_context: %s of %s used%s>\n", .bytes(ggml_used_mem(x)),
                .bytes(ggml_get_mem_size(x)), if (ggml_get_no_alloc(x)) ", no_alloc" else ""))
  } else {
    cat("<ggml_context: freed>\n")
  }
  invisible(x)
}

print.ggml_tensor <- function(x, ...) {
  if (.valid(x)) {
    name <- ggml_get_name(x)
    cat(sprintf("<ggml_tensor%s %s [%s]>\n", if (nzchar(name)) paste0(" '", name, "'") else "",
                ggml_type_name(ggml_tensor_type(x)), paste(ggml_tensor_shape(x), collapse = ", ")))
  } else {
    cat("<ggml_tensor: its context has been freed>\n")
  }
  invisible(x)
}

print.ggml_cgraph <- function(x, ...) {
  if (.valid(x)) {
    cat(sprintf("<ggml_cgraph: %d nodes, capacity %d>\n", ggml_graph_n_nodes(x), ggml_graph_size(x)))
  } else {
    cat("<ggml_cgraph: its context has been freed>\n")
  }
  invisible(x)
}

print.ggml_backend <- function(x, ...) {
  cat(if (.valid(x)) sprintf("<ggml_backend %s>\n", ggml_backend_name(x)) else "<ggml_backend: freed>\n")
  invisible(x)
}

print.ggml_backend_buffer <- function(x, ...) {
  cat(if (.valid(x)) sprintf("<ggml_backend_buffer: %s>\n", .bytes(ggml_backend_buffer_get_size(x)))
      else "<ggml_backend_buffer: freed>\n")
  invisible(x)
}

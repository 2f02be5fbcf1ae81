# Printing handles. A handle whose context (or backend) is gone prints as
# such instead of failing.

.valid <- function(x) .Call(C_ggml_handle_valid, x)
# A handle saved with saveRDS (or save) and read back: R keeps the object but
# not its C address, which is NULL then.
.restored <- function(x) .Call(C_ggml_handle_restored, x)

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

# The values of a tensor for printing: all of them up to `all` elements, else
# the first `head` (whole blocks of a quantized type); NULL when it has no
# data to read (no_alloc, not allocated) or its type has no conversion.
.print_values <- function(x, all = 20, head = 10) {
  n <- ggml_nelements(x)
  if (n <= all) return(tryCatch(ggml_backend_tensor_get_data(x), error = function(e) NULL))
  b <- ggml_blck_size(ggml_tensor_type(x))
  v <- tryCatch(ggml_backend_tensor_get_data(x, 0, min(n, ceiling(head / b) * b)), error = function(e) NULL)
  v[seq_len(min(length(v), head))]
}

print.ggml_tensor <- function(x, ...) {
  if (.valid(x)) {
    name <- ggml_get_name(x)
    cat(sprintf("<ggml_tensor%s %s [%s]>\n", if (nzchar(name)) paste0(" '", name, "'") else "",
                ggml_type_name(ggml_tensor_type(x)), paste(ggml_tensor_shape(x), collapse = ", ")))
    v <- .print_values(x)
    if (length(v)) {
      txt <- format(v, digits = getOption("digits"))
      rest <- ggml_nelements(x) - length(v)
      cat(strwrap(paste(c(txt, if (rest > 0) sprintf("... (%s more)", format(rest, big.mark = ","))), collapse = " "),
                  width = getOption("width"), prefix = "  "), sep = "\n")
    }
  } else if (.restored(x)) {
    cat("<ggml_tensor: restored by readRDS/load, its memory is gone (save models with ggml_save_model)>\n")
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

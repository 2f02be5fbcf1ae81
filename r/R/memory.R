# CRAN ggmlR's memory helpers: what a tensor takes in a context, and the
# state of a context's arena.

GGML_MEM_ALIGN <- 16  # the arena's alignment (ggml.h)

# Bytes a tensor of this type and shape takes in a context's arena: its
# header and its data, padded as the arena places them.
ggml_estimate_memory <- function(type = GGML_TYPE_F32, ne0, ne1 = 1, ne2 = 1, ne3 = 1) {
  ne <- c(ne0, ne1, ne2, ne3)
  if (!is.numeric(ne) || anyNA(ne) || any(ne < 0) || any(ne != floor(ne))) {
    stop("'ne0' to 'ne3' must be whole numbers >= 0", call. = FALSE)
  }
  if (ne0 %% ggml_blck_size(type) != 0) {
    stop(sprintf("'ne0' must be a multiple of the block size of %s (%d)", ggml_type_name(type), ggml_blck_size(type)), call. = FALSE)
  }
  data_bytes <- ggml_type_size(type) * (ne0 / ggml_blck_size(type)) * ne1 * ne2 * ne3
  ggml_tensor_overhead() + ceiling(data_bytes / GGML_MEM_ALIGN) * GGML_MEM_ALIGN
}

ggml_print_mem_status <- function(ctx) {
  total <- ggml_get_mem_size(ctx)
  used <- ggml_used_mem(ctx)
  free <- total - used
  mib <- 1024^2
  cat("GGML Context Memory Status:\n")
  cat(sprintf("  Total: %.2f MB\n", total / mib))
  cat(sprintf("  Used:  %.2f MB (%.1f%%)\n", used / mib, 100 * used / total))
  cat(sprintf("  Free:  %.2f MB (%.1f%%)\n", free / mib, 100 * free / total))
  invisible(list(total = total, used = used, free = free))
}

ggml_get_max_tensor_size <- function(ctx) .Call(C_ggml_get_max_tensor_size, ctx)
# Printed to the console through the library's log.
ggml_print_objects <- function(ctx) invisible(.Call(C_ggml_print_objects, ctx))

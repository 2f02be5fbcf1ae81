# GGUF files (src/glue_gguf.c). Key and tensor ids count from 0, as in C.

GGUF_TYPE_UINT8 <- 0L
GGUF_TYPE_INT8 <- 1L
GGUF_TYPE_UINT16 <- 2L
GGUF_TYPE_INT16 <- 3L
GGUF_TYPE_UINT32 <- 4L
GGUF_TYPE_INT32 <- 5L
GGUF_TYPE_FLOAT32 <- 6L
GGUF_TYPE_BOOL <- 7L
GGUF_TYPE_STRING <- 8L
GGUF_TYPE_ARRAY <- 9L
GGUF_TYPE_UINT64 <- 10L
GGUF_TYPE_INT64 <- 11L
GGUF_TYPE_FLOAT64 <- 12L

gguf_init_empty <- function() .Call(C_gguf_init_empty)
# list(gguf = the GGUF context, ctx = a ggml context holding the tensors, or NULL)
gguf_init_from_file <- function(fname, no_alloc = FALSE, ctx = TRUE) .Call(C_gguf_init_from_file, fname, no_alloc, ctx)
# A GGUF context, or a file loaded by gguf_load (its contexts are freed
# together; freeing again is harmless).
gguf_free <- function(ctx) {
  if (inherits(ctx, "gguf")) {
    .Call(C_gguf_free, ctx$ptr)
    if (!is.null(ctx$ctx)) ggml_free(ctx$ctx)
    return(invisible(NULL))
  }
  if (!inherits(ctx, "gguf_context")) stop("Expected a gguf object (from gguf_load) or a GGUF context", call. = FALSE)
  invisible(.Call(C_gguf_free, ctx))
}
gguf_type_name <- function(type) .Call(C_gguf_type_name, type)

gguf_get_version <- function(ctx) .Call(C_gguf_get_version, ctx)
gguf_get_alignment <- function(ctx) .Call(C_gguf_get_alignment, ctx)
gguf_get_data_offset <- function(ctx) .Call(C_gguf_get_data_offset, ctx)
gguf_get_meta_size <- function(ctx) .Call(C_gguf_get_meta_size, ctx)
gguf_get_n_kv <- function(ctx) .Call(C_gguf_get_n_kv, ctx)
gguf_find_key <- function(ctx, key) .Call(C_gguf_find_key, ctx, key)
gguf_get_key <- function(ctx, key_id) .Call(C_gguf_get_key, ctx, key_id)
gguf_get_kv_type <- function(ctx, key_id) .Call(C_gguf_get_kv_type, ctx, key_id)
gguf_get_arr_type <- function(ctx, key_id) .Call(C_gguf_get_arr_type, ctx, key_id)
gguf_get_arr_n <- function(ctx, key_id) .Call(C_gguf_get_arr_n, ctx, key_id)
gguf_get_arr_data <- function(ctx, key_id) .Call(C_gguf_get_arr_data, ctx, key_id)
gguf_get_arr_str <- function(ctx, key_id, i) {
  if (gguf_get_arr_type(ctx, key_id) != GGUF_TYPE_STRING) stop("gguf_get_arr_str: the array does not hold strings", call. = FALSE)
  v <- gguf_get_arr_data(ctx, key_id)
  if (!is.numeric(i) || length(i) != 1 || is.na(i) || i < 0 || i >= length(v) || i != floor(i)) {
    stop(sprintf("gguf_get_arr_str: index %s out of range 0..%d", format(i), length(v) - 1), call. = FALSE)
  }
  v[[i + 1]]
}
gguf_remove_key <- function(ctx, key) .Call(C_gguf_remove_key, ctx, key)

# gguf_get_val_<type>(ctx, key_id) and gguf_set_val_<type>(ctx, key, val): one
# accessor per GGUF type, all the same call with the type fixed.
gguf_val_getter <- function(type) {
  force(type)
  function(ctx, key_id) .Call(C_gguf_get_val, ctx, key_id, type)
}
gguf_val_setter <- function(type) {
  force(type)
  function(ctx, key, val) invisible(.Call(C_gguf_set_val, ctx, key, type, val))
}

gguf_get_val_u8 <- gguf_val_getter(GGUF_TYPE_UINT8)
gguf_get_val_i8 <- gguf_val_getter(GGUF_TYPE_INT8)
gguf_get_val_u16 <- gguf_val_getter(GGUF_TYPE_UINT16)
gguf_get_val_i16 <- gguf_val_getter(GGUF_TYPE_INT16)
gguf_get_val_u32 <- gguf_val_getter(GGUF_TYPE_UINT32)
gguf_get_val_i32 <- gguf_val_getter(GGUF_TYPE_INT32)
gguf_get_val_f32 <- gguf_val_getter(GGUF_TYPE_FLOAT32)
gguf_get_val_u64 <- gguf_val_getter(GGUF_TYPE_UINT64)
gguf_get_val_i64 <- gguf_val_getter(GGUF_TYPE_INT64)
gguf_get_val_f64 <- gguf_val_getter(GGUF_TYPE_FLOAT64)
gguf_get_val_bool <- gguf_val_getter(GGUF_TYPE_BOOL)
gguf_get_val_str <- gguf_val_getter(GGUF_TYPE_STRING)
# The value of any key: scalars by their type, arrays as vectors.
gguf_get_val <- function(ctx, key_id) {
  t <- gguf_get_kv_type(ctx, key_id)
  if (t == GGUF_TYPE_ARRAY) gguf_get_arr_data(ctx, key_id) else .Call(C_gguf_get_val, ctx, key_id, t)
}

gguf_set_val_u8 <- gguf_val_setter(GGUF_TYPE_UINT8)
gguf_set_val_i8 <- gguf_val_setter(GGUF_TYPE_INT8)
gguf_set_val_u16 <- gguf_val_setter(GGUF_TYPE_UINT16)
gguf_set_val_i16 <- gguf_val_setter(GGUF_TYPE_INT16)
gguf_set_val_u32 <- gguf_val_setter(GGUF_TYPE_UINT32)
gguf_set_val_i32 <- gguf_val_setter(GGUF_TYPE_INT32)
gguf_set_val_f32 <- gguf_val_setter(GGUF_TYPE_FLOAT32)
gguf_set_val_u64 <- gguf_val_setter(GGUF_TYPE_UINT64)
gguf_set_val_i64 <- gguf_val_setter(GGUF_TYPE_INT64)
gguf_set_val_f64 <- gguf_val_setter(GGUF_TYPE_FLOAT64)
gguf_set_val_bool <- gguf_val_setter(GGUF_TYPE_BOOL)
gguf_set_val_str <- gguf_val_setter(GGUF_TYPE_STRING)
gguf_set_arr_data <- function(ctx, key, type, data) invisible(.Call(C_gguf_set_arr_data, ctx, key, type, data))
gguf_set_arr_str <- function(ctx, key, data) invisible(.Call(C_gguf_set_arr_str, ctx, key, data))
gguf_set_kv <- function(ctx, src) invisible(.Call(C_gguf_set_kv, ctx, src))

gguf_get_n_tensors <- function(ctx) .Call(C_gguf_get_n_tensors, ctx)
gguf_find_tensor <- function(ctx, name) .Call(C_gguf_find_tensor, ctx, name)
gguf_get_tensor_offset <- function(ctx, tensor_id) .Call(C_gguf_get_tensor_offset, ctx, tensor_id)
gguf_get_tensor_name <- function(ctx, tensor_id) .Call(C_gguf_get_tensor_name, ctx, tensor_id)
gguf_get_tensor_type <- function(ctx, tensor_id) .Call(C_gguf_get_tensor_type, ctx, tensor_id)
gguf_get_tensor_size <- function(ctx, tensor_id) .Call(C_gguf_get_tensor_size, ctx, tensor_id)
gguf_get_tensor_ne <- function(ctx, tensor_id) .Call(C_gguf_get_tensor_ne, ctx, tensor_id)
gguf_add_tensor <- function(ctx, tensor) invisible(.Call(C_gguf_add_tensor, ctx, tensor))
gguf_write_to_file <- function(ctx, fname, only_meta = FALSE) invisible(.Call(C_gguf_write_to_file, ctx, fname, only_meta))

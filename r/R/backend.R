# The CPU backend, backend buffers and data transfer (src/glue_backend.c).

ggml_backend_cpu_init <- function() .Call(C_ggml_backend_cpu_init)
ggml_backend_free <- function(backend) invisible(.Call(C_ggml_backend_free, backend))
ggml_backend_is_cpu <- function(backend) .Call(C_ggml_backend_is_cpu, backend)
ggml_backend_name <- function(backend) .Call(C_ggml_backend_name, backend)
ggml_backend_cpu_set_n_threads <- function(backend, n_threads) {
  invisible(.Call(C_ggml_backend_cpu_set_n_threads, backend, n_threads))
}
ggml_backend_graph_compute <- function(backend, graph) .Call(C_ggml_backend_graph_compute, backend, graph)

ggml_backend_alloc_ctx_tensors <- function(ctx, backend) .Call(C_ggml_backend_alloc_ctx_tensors, ctx, backend)
ggml_backend_buffer_free <- function(buffer) invisible(.Call(C_ggml_backend_buffer_free, buffer))
ggml_backend_buffer_get_size <- function(buffer) .Call(C_ggml_backend_buffer_get_size, buffer)

# raw bytes, offsets in bytes (as C)
ggml_backend_tensor_set <- function(tensor, data, offset = 0, size = length(data)) {
  invisible(.Call(C_ggml_backend_tensor_set, tensor, data, offset, size))
}
ggml_backend_tensor_get <- function(tensor, offset = 0, size = ggml_nbytes(tensor) - offset) {
  .Call(C_ggml_backend_tensor_get, tensor, offset, size)
}

# numbers converted to / from the tensor's type, offsets in elements
ggml_backend_tensor_set_data <- function(tensor, data, offset = 0) {
  invisible(.Call(C_ggml_backend_tensor_set_data, tensor, data, offset))
}
ggml_backend_tensor_get_data <- function(tensor, offset = 0, n_elements = NULL) {
  .Call(C_ggml_backend_tensor_get_data, tensor, offset, n_elements)
}

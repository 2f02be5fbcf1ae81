# Devices, the backend registry, backends made from them, buffer facts and
# settings (src/glue_devices.c), and upstream's event, graph plan and async
# entry points as the CPU backend has them. Indices count from 0, as in C.

ggml_backend_device_type <- function(name) {
  types <- .Call(C_ggml_backend_device_types)
  types[[name]]
}
ggml_backend_device_type_cpu <- function() ggml_backend_device_type("cpu")
ggml_backend_device_type_gpu <- function() ggml_backend_device_type("gpu")
ggml_backend_device_type_igpu <- function() ggml_backend_device_type("igpu")
ggml_backend_device_type_accel <- function() ggml_backend_device_type("accel")

ggml_backend_buffer_usage_any <- function() 0L
ggml_backend_buffer_usage_weights <- function() 1L
ggml_backend_buffer_usage_compute <- function() 2L

ggml_backend_dev_count <- function() .Call(C_ggml_backend_dev_count)
ggml_backend_dev_get <- function(index) .Call(C_ggml_backend_dev_get, index)
ggml_backend_dev_by_name <- function(name) .Call(C_ggml_backend_dev_by_name, name)
ggml_backend_dev_by_type <- function(type) .Call(C_ggml_backend_dev_by_type, type)
ggml_backend_dev_name <- function(device) .Call(C_ggml_backend_dev_name, device)
ggml_backend_dev_description <- function(device) .Call(C_ggml_backend_dev_description, device)
ggml_backend_dev_memory <- function(device) .Call(C_ggml_backend_dev_memory, device)
ggml_backend_dev_type <- function(device) .Call(C_ggml_backend_dev_type, device)
ggml_backend_dev_get_props <- function(device) .Call(C_ggml_backend_dev_get_props, device)
ggml_backend_dev_supports_op <- function(device, op) .Call(C_ggml_backend_dev_supports_op, device, op)
ggml_backend_dev_offload_op <- function(device, op) .Call(C_ggml_backend_dev_offload_op, device, op)
ggml_backend_dev_init <- function(device, params = NULL) .Call(C_ggml_backend_dev_init, device, params)
ggml_backend_dev_backend_reg <- function(device) .Call(C_ggml_backend_dev_backend_reg, device)

ggml_backend_reg_count <- function() .Call(C_ggml_backend_reg_count)
ggml_backend_reg_get <- function(index) .Call(C_ggml_backend_reg_get, index)
ggml_backend_reg_by_name <- function(name) .Call(C_ggml_backend_reg_by_name, name)
ggml_backend_reg_name <- function(reg) .Call(C_ggml_backend_reg_name, reg)
ggml_backend_reg_dev_count <- function(reg) .Call(C_ggml_backend_reg_dev_count, reg)
ggml_backend_reg_dev_get <- function(reg, index) .Call(C_ggml_backend_reg_dev_get, reg, index)
# Backends are built in, never loaded: load gives NULL (with a warning),
# load_all and unload have nothing to do.
ggml_backend_load <- function(path) .Call(C_ggml_backend_load, path)
ggml_backend_load_all <- function() invisible(NULL)
# Every registry and device comes from the library and is registered
# already: registering one again changes nothing.
ggml_backend_register <- function(reg) {
  ggml_backend_reg_name(reg)
  invisible(NULL)
}
ggml_backend_device_register <- function(device) {
  ggml_backend_dev_name(device)
  invisible(NULL)
}
ggml_backend_unload <- function(reg) {
  ggml_backend_reg_name(reg)  # checks that it is a registry
  invisible(NULL)
}

ggml_backend_init_by_name <- function(name, params = NULL) .Call(C_ggml_backend_init_by_name, name, params)
ggml_backend_init_by_type <- function(type, params = NULL) .Call(C_ggml_backend_init_by_type, type, params)
ggml_backend_init_best <- function() .Call(C_ggml_backend_init_best)
ggml_backend_get_device <- function(backend) .Call(C_ggml_backend_get_device, backend)
ggml_backend_synchronize <- function(backend) invisible(.Call(C_ggml_backend_synchronize, backend))
# Computes are synchronous: this is ggml_backend_graph_compute.
ggml_backend_graph_compute_async <- function(backend, graph) ggml_backend_graph_compute(backend, graph)

ggml_backend_buffer_name <- function(buffer) .Call(C_ggml_backend_buffer_name, buffer)
ggml_backend_buffer_is_host <- function(buffer) .Call(C_ggml_backend_buffer_is_host, buffer)
ggml_backend_buffer_get_usage <- function(buffer) .Call(C_ggml_backend_buffer_get_usage, buffer)
ggml_backend_buffer_set_usage <- function(buffer, usage) invisible(.Call(C_ggml_backend_buffer_set_usage, buffer, usage))
ggml_backend_buffer_clear <- function(buffer, value = 0L) invisible(.Call(C_ggml_backend_buffer_clear, buffer, value))
ggml_backend_buffer_reset <- function(buffer) invisible(.Call(C_ggml_backend_buffer_reset, buffer))
# Every buffer here is one CPU buffer, never a multi-buffer.
ggml_backend_buffer_is_multi_buffer <- function(buffer) {
  ggml_backend_buffer_name(buffer)  # checks that it is a usable buffer
  FALSE
}

# Events: as upstream, a device without events (the CPU device) gives NULL,
# and freeing NULL does nothing; there is no event to record or wait on.
ggml_backend_event_new <- function(device) {
  ggml_backend_dev_name(device)  # checks that it is a device
  NULL
}
ggml_backend_event_free <- function(event) {
  if (!is.null(event)) ggml_backend_no_event()
  invisible(NULL)
}
ggml_backend_no_event <- function() stop("'event' must be a backend event: the CPU device has none (ggml_backend_event_new gives NULL)", call. = FALSE)
ggml_backend_event_record <- function(event, backend) ggml_backend_no_event()
ggml_backend_event_synchronize <- function(event) ggml_backend_no_event()
ggml_backend_event_wait <- function(backend, event) ggml_backend_no_event()

# A graph plan: the graph and the backend it is computed on.
ggml_backend_graph_plan_create <- function(backend, graph) {
  ggml_backend_name(backend)  # checks both handles now, not at compute
  ggml_graph_n_nodes(graph)
  structure(list(backend = backend, graph = graph), class = "ggml_backend_graph_plan")
}
ggml_backend_graph_plan_check <- function(backend, plan) {
  if (!inherits(plan, "ggml_backend_graph_plan")) stop("'plan' must come from ggml_backend_graph_plan_create", call. = FALSE)
  if (!identical(plan$backend, backend)) stop("'plan' was made for another backend", call. = FALSE)
}
ggml_backend_graph_plan_free <- function(backend, plan) {
  ggml_backend_graph_plan_check(backend, plan)
  invisible(NULL)
}
ggml_backend_graph_plan_compute <- function(backend, plan) {
  ggml_backend_graph_plan_check(backend, plan)
  ggml_backend_graph_compute(backend, plan$graph)
}

# Transfers are synchronous: these are ggml_backend_tensor_set / _get (raw
# bytes, offsets and sizes in bytes, as upstream's C) and a copy of the data.
ggml_backend_tensor_set_async <- function(backend, tensor, data, offset = 0, size = length(data)) {
  ggml_backend_name(backend)  # checks that it is a live backend
  ggml_backend_tensor_set(tensor, data, offset, size)
}
ggml_backend_tensor_get_async <- function(backend, tensor, offset = 0, size = ggml_nbytes(tensor) - offset) {
  ggml_backend_name(backend)
  ggml_backend_tensor_get(tensor, offset, size)
}
ggml_backend_tensor_copy_async <- function(backend_src, backend_dst, src, dst) {
  ggml_backend_name(backend_src)
  ggml_backend_name(backend_dst)
  if (!ggml_are_same_shape(src, dst) || ggml_tensor_type(src) != ggml_tensor_type(dst)) {
    stop("'src' and 'dst' must have the same shape and type", call. = FALSE)
  }
  ggml_backend_tensor_set(dst, ggml_backend_tensor_get(src))
}

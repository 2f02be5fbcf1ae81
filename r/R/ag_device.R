# Device and dtype defaults of the autograd engine (ag_*).
#
# The engine computes in R double precision on the CPU; "gpu" is accepted as
# a device label only where a GPU backend device exists, and the dtype is a
# label kept with each tensor (no ag_* arithmetic is done in reduced precision).

.ag_defaults <- new.env(parent = emptyenv())
.ag_defaults$device <- "cpu"
.ag_defaults$dtype  <- "f32"

.ag_devices <- c("cpu", "gpu")
.ag_dtypes  <- c("f32", "f16", "bf16")

.ag_check_device <- function(device) {
  if (!is.character(device) || length(device) != 1L || !device %in% .ag_devices)
    stop("device must be one of ", paste0('"', .ag_devices, '"', collapse = ", "),
         call. = FALSE)
  device
}

.ag_check_dtype <- function(dtype) {
  if (!is.character(dtype) || length(dtype) != 1L || !dtype %in% .ag_dtypes)
    stop("dtype must be one of ", paste0('"', .ag_dtypes, '"', collapse = ", "),
         call. = FALSE)
  dtype
}

.ag_has_gpu <- function() {
  !is.null(ggml_backend_dev_by_type(ggml_backend_device_type_gpu()))
}

ag_device <- function(device) {
  device <- .ag_check_device(device)
  if (device == "gpu" && !.ag_has_gpu())
    stop("ag_device(\"gpu\"): no GPU backend device is available", call. = FALSE)
  previous <- .ag_defaults$device
  .ag_defaults$device <- device
  invisible(previous)
}

ag_default_device <- function() .ag_defaults$device

ag_dtype <- function(dtype) {
  dtype <- .ag_check_dtype(dtype)
  previous <- .ag_defaults$dtype
  .ag_defaults$dtype <- dtype
  invisible(previous)
}

ag_default_dtype <- function() .ag_defaults$dtype

ag_to_device <- function(tensor, device) {
  if (!is_ag_tensor(tensor)) stop("tensor must be an ag_tensor", call. = FALSE)
  device <- .ag_check_device(device)
  if (identical(device, tensor$device)) return(tensor)
  moved <- ag_tensor(tensor$data, device = device, dtype = tensor$dtype)
  moved$requires_grad <- tensor$requires_grad
  moved
}

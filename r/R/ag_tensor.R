# ag_tensor: the value type of the eager autograd engine (ag_*).
#
# An ag_tensor is an environment so that an optimizer that replaces $data
# is seen by every reference to the parameter (as with torch tensors).
# Values are R double matrices: the engine computes eagerly in double
# precision, which is what makes finite-difference gradient checks with
# eps = 1e-5 meaningful (ggml's f32 graphs would lose those digits).

.ag_ids <- new.env(parent = emptyenv())
.ag_ids$last <- 0L

.ag_new_id <- function() {
  .ag_ids$last <- .ag_ids$last + 1L
  .ag_ids$last
}

# Coerce user data to a double matrix; a vector becomes one column.
.ag_as_matrix <- function(data) {
  if (is_ag_tensor(data)) return(data$data)
  if (!(is.numeric(data) || is.logical(data)) || is.list(data))
    stop("ag_tensor data must be a numeric matrix or vector, not ",
         class(data)[1L], call. = FALSE)
  if (is.null(dim(data))) data <- matrix(data, ncol = 1L)
  if (length(dim(data)) != 2L)
    stop("ag_tensor data must have 2 dimensions, not ", length(dim(data)),
         call. = FALSE)
  storage.mode(data) <- "double"
  data
}

ag_tensor <- function(data, device = ag_default_device(),
                      dtype = ag_default_dtype()) {
  tensor <- new.env(parent = emptyenv())
  tensor$id            <- .ag_new_id()
  tensor$data          <- .ag_as_matrix(data)
  tensor$grad          <- NULL
  tensor$requires_grad <- FALSE
  tensor$grad_fn       <- NULL
  tensor$device        <- .ag_check_device(device)
  tensor$dtype         <- .ag_check_dtype(dtype)
  class(tensor) <- "ag_tensor"
  tensor
}

ag_param <- function(data, device = ag_default_device(),
                     dtype = ag_default_dtype()) {
  tensor <- ag_tensor(data, device = device, dtype = dtype)
  tensor$requires_grad <- TRUE
  tensor
}

is_ag_tensor <- function(x) inherits(x, "ag_tensor")

# The value of an ag_tensor, or of a plain matrix/vector used as a constant.
.ag_data <- function(x) {
  if (is_ag_tensor(x)) x$data else .ag_as_matrix(x)
}

.ag_requires_grad <- function(x) is_ag_tensor(x) && isTRUE(x$requires_grad)

print.ag_tensor <- function(x, ...) {
  cat("ag_tensor [", paste(dim(x$data), collapse = "x"), "]",
      if (x$device != "cpu") paste0(" [", x$device, "]"),
      if (x$dtype != "f32") paste0(" [", x$dtype, "]"),
      if (x$requires_grad) " (requires_grad)", "\n", sep = "")
  print(x$data, ...)
  if (!is.null(x$grad)) {
    cat("  grad:\n")
    print(x$grad, ...)
  }
  invisible(x)
}

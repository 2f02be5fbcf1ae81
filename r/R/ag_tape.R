# The gradient tape of the autograd engine (ag_*) and the backward pass.
#
# Inside with_grad_tape() every op whose inputs need gradients appends a node
# (output id, inputs, vector-Jacobian product). backward() walks the nodes in
# reverse order of recording, which is a reverse topological order because an
# op is recorded after its inputs exist.

.ag_tape <- new.env(parent = emptyenv())
.ag_tape$enabled <- FALSE
.ag_tape$nodes   <- list()

.ag_tape_clear <- function() .ag_tape$nodes <- list()

with_grad_tape <- function(expr) {
  .ag_tape_clear()
  .ag_tape$enabled <- TRUE
  on.exit(.ag_tape$enabled <- FALSE)
  eval(substitute(expr), envir = parent.frame())
}

# Make the output tensor of an op. `inputs` is a named list of ag_tensors or
# constants; `vjp(grad_out)` returns a list, by the same names, of gradients
# for the inputs (entries for inputs without requires_grad are ignored).
.ag_result <- function(value, inputs, vjp, like = inputs[[1L]]) {
  out <- ag_tensor(value,
                   device = if (is_ag_tensor(like)) like$device else ag_default_device(),
                   dtype  = if (is_ag_tensor(like)) like$dtype  else ag_default_dtype())
  out$requires_grad <- any(vapply(inputs, .ag_requires_grad, logical(1L)))
  if (out$requires_grad) {
    out$grad_fn <- vjp
    if (.ag_tape$enabled)
      .ag_tape$nodes[[length(.ag_tape$nodes) + 1L]] <-
        list(output_id = out$id, inputs = inputs, grad_fn = vjp)
  }
  out
}

backward <- function(loss) {
  if (!is_ag_tensor(loss)) stop("backward() requires an ag_tensor", call. = FALSE)
  grads <- new.env(parent = emptyenv())
  assign(as.character(loss$id), matrix(1, nrow(loss$data), ncol(loss$data)),
         envir = grads)
  touched <- list()

  for (node in rev(.ag_tape$nodes)) {
    grad_out <- get0(as.character(node$output_id), envir = grads, inherits = FALSE)
    if (is.null(grad_out)) next
    input_grads <- node$grad_fn(grad_out)
    for (name in names(node$inputs)) {
      input <- node$inputs[[name]]
      if (!.ag_requires_grad(input) || is.null(input_grads[[name]])) next
      key <- as.character(input$id)
      previous <- get0(key, envir = grads, inherits = FALSE)
      assign(key, if (is.null(previous)) input_grads[[name]] else previous + input_grads[[name]],
             envir = grads)
      touched[[key]] <- input
    }
  }

  # Accumulate into $grad once per tensor, as repeated backward calls would.
  for (key in names(touched)) {
    tensor <- touched[[key]]
    g <- get(key, envir = grads, inherits = FALSE)
    tensor$grad <- if (is.null(tensor$grad)) g else tensor$grad + g
  }
  invisible(grads)
}

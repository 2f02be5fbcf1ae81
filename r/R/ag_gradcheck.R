# Gradient check for the autograd engine: compares backward()'s gradients
# with central finite differences of fn(inputs), for every input that
# requires gradients.

ag_gradcheck <- function(fn, inputs, eps = 1e-5, atol = 1e-4, verbose = FALSE,
                         quiet = FALSE) {
  if (!is.function(fn)) stop("fn must be a function", call. = FALSE)
  if (!is.list(inputs) || is.null(names(inputs)))
    stop("inputs must be a named list of ag_tensors", call. = FALSE)
  scalar_loss <- function() {
    with_grad_tape(loss <- fn(inputs))
    sum(.ag_data(loss))
  }
  with_grad_tape(loss <- fn(inputs))
  grads <- backward(loss)

  all_ok <- TRUE
  for (name in names(inputs)) {
    input <- inputs[[name]]
    if (!.ag_requires_grad(input)) next
    analytic <- get0(as.character(input$id), envir = grads, inherits = FALSE)
    if (is.null(analytic)) {
      if (!quiet) cat(sprintf("[gradcheck] '%s': no analytical gradient\n", name))
      all_ok <- FALSE
      next
    }
    original <- input$data
    numeric_grad <- original * 0
    for (k in seq_along(original)) {
      input$data[k] <- original[k] + eps
      f_plus <- scalar_loss()
      input$data[k] <- original[k] - eps
      f_minus <- scalar_loss()
      input$data <- original
      numeric_grad[k] <- (f_plus - f_minus) / (2 * eps)
    }
    max_err <- max(abs(analytic - numeric_grad))
    pass <- is.finite(max_err) && max_err < atol
    all_ok <- all_ok && pass
    if (!quiet) cat(sprintf("[gradcheck] '%s': max_err = %.2e  %s\n", name, max_err,
                            if (pass) "PASS" else "FAIL"))
    if (verbose) {
      cat("  analytical:\n"); print(round(analytic, 6))
      cat("  numerical:\n");  print(round(numeric_grad, 6))
    }
  }
  if (!quiet) cat(sprintf("[gradcheck] Overall: %s\n", if (all_ok) "PASS" else "FAIL"))
  invisible(all_ok)
}

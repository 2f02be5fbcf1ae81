# Helpers for the ag_* (eager autograd) tests.

# Central finite differences of f (a matrix -> number function) at x.
fd_grad <- function(f, x, eps = 1e-6) {
  g <- x * 0
  for (k in seq_along(x)) {
    up <- x; up[k] <- up[k] + eps
    down <- x; down[k] <- down[k] - eps
    g[k] <- (f(up) - f(down)) / (2 * eps)
  }
  g
}

# The gradient backward() gives for param after loss_of(param) is taped.
ag_grad_of <- function(param, loss_of) {
  with_grad_tape(loss <- loss_of(param))
  get0(as.character(param$id), envir = backward(loss), inherits = FALSE)
}

# Check backward() of loss_of against finite differences of the same
# function evaluated on fresh parameters.
expect_grad_matches_fd <- function(value, loss_of, tolerance = 1e-6) {
  analytic <- ag_grad_of(ag_param(value), loss_of)
  numeric <- fd_grad(function(v) as.numeric(loss_of(ag_param(v))$data), value)
  expect_equal(analytic, numeric, tolerance = tolerance)
}

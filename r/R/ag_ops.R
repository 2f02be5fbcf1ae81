# Differentiable ops of the autograd engine (ag_*), evaluated eagerly on R
# double matrices. Each op computes its value and hands .ag_result() the
# vector-Jacobian product for its inputs. Matrices are [features, samples]:
# softmax normalises each column, dim = 1 reduces over columns (per row).

# Expand a [1, n] or [m, 1] operand to [nr, nc] (and a [1, 1] to both).
.ag_expand <- function(x, nr, nc) {
  if (nrow(x) == nr && ncol(x) == nc) return(x)
  if ((nrow(x) != 1L && nrow(x) != nr) || (ncol(x) != 1L && ncol(x) != nc))
    stop(sprintf("shapes %dx%d and %dx%d cannot be broadcast", nrow(x), ncol(x), nr, nc),
         call. = FALSE)
  x[rep_len(seq_len(nrow(x)), nr), rep_len(seq_len(ncol(x)), nc), drop = FALSE]
}

# Sum a gradient back down to the shape of an operand that was broadcast.
.ag_reduce_to <- function(g, shape) {
  if (shape[1L] == 1L && nrow(g) > 1L) g <- matrix(colSums(g), 1L)
  if (shape[2L] == 1L && ncol(g) > 1L) g <- matrix(rowSums(g), ncol = 1L)
  g
}

# Elementwise binary op with broadcasting of either operand; d_a and d_b give
# the partial derivatives from the expanded values.
.ag_elementwise <- function(A, B, f, d_a, d_b) {
  a <- .ag_data(A); b <- .ag_data(B)
  nr <- max(nrow(a), nrow(b)); nc <- max(ncol(a), ncol(b))
  a_full <- .ag_expand(a, nr, nc); b_full <- .ag_expand(b, nr, nc)
  .ag_result(f(a_full, b_full), list(A = A, B = B), function(grad_out) list(
    A = if (.ag_requires_grad(A)) .ag_reduce_to(grad_out * d_a(a_full, b_full), dim(a)),
    B = if (.ag_requires_grad(B)) .ag_reduce_to(grad_out * d_b(a_full, b_full), dim(b))
  ))
}

ag_add <- function(A, B) {
  .ag_elementwise(A, B, `+`, function(a, b) 1, function(a, b) 1)
}

ag_sub <- function(A, B) {
  .ag_elementwise(A, B, `-`, function(a, b) 1, function(a, b) -1)
}

ag_mul <- function(A, B) {
  .ag_elementwise(A, B, `*`, function(a, b) b, function(a, b) a)
}

ag_matmul <- function(A, B) {
  a <- .ag_data(A); b <- .ag_data(B)
  if (ncol(a) != nrow(b))
    stop(sprintf("ag_matmul: non-conformable %dx%d and %dx%d", nrow(a), ncol(a),
                 nrow(b), ncol(b)), call. = FALSE)
  .ag_result(a %*% b, list(A = A, B = B), function(grad_out) list(
    A = if (.ag_requires_grad(A)) grad_out %*% t(b),
    B = if (.ag_requires_grad(B)) crossprod(a, grad_out)
  ))
}

# Elementwise unary op: derivative(x, y) is dy/dx from input and output values.
.ag_unary <- function(x, f, derivative) {
  x_value <- .ag_data(x)
  y_value <- f(x_value)
  .ag_result(y_value, list(x = x), function(grad_out)
    list(x = grad_out * derivative(x_value, y_value)))
}

.ag_check_scalar <- function(value, what) {
  if (!is.numeric(value) || length(value) != 1L || is.na(value))
    stop(what, " must be a single number", call. = FALSE)
  as.double(value)
}

ag_scale <- function(x, scalar) {
  scalar <- .ag_check_scalar(scalar, "scalar")
  .ag_unary(x, function(v) v * scalar, function(v, y) scalar)
}

ag_relu <- function(x) .ag_unary(x, function(v) pmax(v, 0), function(v, y) (v > 0) * 1)

ag_sigmoid <- function(x) .ag_unary(x, function(v) 1 / (1 + exp(-v)), function(v, y) y * (1 - y))

ag_tanh <- function(x) .ag_unary(x, tanh, function(v, y) 1 - y^2)

ag_log <- function(x) .ag_unary(x, log, function(v, y) 1 / v)

ag_exp <- function(x) .ag_unary(x, exp, function(v, y) y)

ag_pow <- function(x, p) {
  p <- .ag_check_scalar(p, "p")
  .ag_unary(x, function(v) v^p, function(v, y) p * v^(p - 1))
}

ag_clamp <- function(x, lo = -Inf, hi = Inf) {
  lo <- .ag_check_scalar(lo, "lo"); hi <- .ag_check_scalar(hi, "hi")
  .ag_unary(x, function(v) pmin(pmax(v, lo), hi), function(v, y) (v > lo & v < hi) * 1)
}

# Column-wise softmax, shifted by each column's maximum for stability.
.ag_softmax_columns <- function(v) {
  e <- exp(sweep(v, 2L, apply(v, 2L, max)))
  sweep(e, 2L, colSums(e), "/")
}

ag_softmax <- function(x) {
  p <- .ag_softmax_columns(.ag_data(x))
  .ag_result(p, list(x = x), function(grad_out)
    list(x = p * sweep(grad_out, 2L, colSums(p * grad_out))))
}

.ag_check_dim <- function(dim) {
  if (!is.null(dim) && !(length(dim) == 1L && dim %in% c(1, 2)))
    stop("dim must be NULL, 1 or 2", call. = FALSE)
}

# Reductions keep matrices: dim = NULL gives [1, 1], dim = 1 sums each row
# to [nrow, 1], dim = 2 sums each column to [1, ncol]. keepdim is accepted
# for compatibility; the result is a matrix either way.
.ag_reduce <- function(x, dim, divide) {
  .ag_check_dim(dim)
  v <- .ag_data(x)
  if (is.null(dim)) {
    value <- matrix(sum(v)); count <- length(v)
  } else if (dim == 1) {
    value <- matrix(rowSums(v), ncol = 1L); count <- ncol(v)
  } else {
    value <- matrix(colSums(v), 1L); count <- nrow(v)
  }
  n <- if (divide) count else 1
  .ag_result(value / n, list(x = x), function(grad_out)
    list(x = .ag_expand(grad_out / n, nrow(v), ncol(v))))
}

ag_sum <- function(x, dim = NULL, keepdim = FALSE) .ag_reduce(x, dim, divide = FALSE)

ag_mean <- function(x, dim = NULL, keepdim = FALSE) .ag_reduce(x, dim, divide = TRUE)

ag_reshape <- function(x, nrow, ncol) {
  v <- .ag_data(x)
  n <- length(v)
  nrow <- as.integer(.ag_check_scalar(nrow, "nrow"))
  ncol <- as.integer(.ag_check_scalar(ncol, "ncol"))
  if (nrow == -1L) nrow <- n %/% ncol
  if (ncol == -1L) ncol <- n %/% nrow
  if (!isTRUE(nrow >= 0L && ncol >= 0L && nrow * ncol == n))
    stop(sprintf("ag_reshape: cannot reshape %d values to %sx%s", n, nrow, ncol),
         call. = FALSE)
  .ag_result(matrix(v, nrow, ncol), list(x = x), function(grad_out)
    list(x = matrix(grad_out, nrow(v), ncol(v))))
}

ag_transpose <- function(x) {
  .ag_result(t(.ag_data(x)), list(x = x), function(grad_out) list(x = t(grad_out)))
}

# Rows from..to of x (used to split attention heads).
.ag_row_slice <- function(x, from, to) {
  v <- .ag_data(x)
  rows <- seq.int(from, to)
  .ag_result(v[rows, , drop = FALSE], list(x = x), function(grad_out) {
    g <- matrix(0, nrow(v), ncol(v))
    g[rows, ] <- grad_out
    list(x = g)
  })
}

# Stack a list of tensors with equal column counts on top of each other.
.ag_row_concat <- function(tensors) {
  if (length(tensors) == 1L) return(tensors[[1L]])
  values <- lapply(tensors, .ag_data)
  ends <- cumsum(vapply(values, nrow, integer(1L)))
  starts <- ends - vapply(values, nrow, integer(1L)) + 1L
  inputs <- stats::setNames(tensors, paste0("t", seq_along(tensors)))
  .ag_result(do.call(rbind, values), inputs, function(grad_out)
    stats::setNames(lapply(seq_along(tensors), function(i)
      grad_out[starts[i]:ends[i], , drop = FALSE]), names(inputs)))
}

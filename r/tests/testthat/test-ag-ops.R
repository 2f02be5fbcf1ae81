# ag_* tensors, ops, losses and the tape: values by plain R arithmetic,
# gradients derived by hand or by finite differences.

test_that("ag_tensor stores a double matrix; vectors become one column", {
  x <- ag_tensor(1:3)
  expect_identical(x$data, matrix(c(1, 2, 3), 3, 1))
  expect_false(x$requires_grad)
  expect_true(ag_param(matrix(1, 2, 2))$requires_grad)
  expect_true(is_ag_tensor(x))
  expect_false(is_ag_tensor(matrix(1)))
  expect_false(ag_tensor(1)$id == ag_tensor(1)$id)
})

test_that("ag_tensor rejects data that is not numeric", {
  expect_error(ag_tensor("a"), "numeric")
  expect_error(ag_tensor(list(1, 2)), "numeric")
  expect_error(ag_tensor(array(0, c(2, 2, 2))), "2 dimensions")
  expect_error(ag_tensor(1, device = "tpu"), "device")
  expect_error(ag_tensor(1, dtype = "q4"), "dtype")
})

test_that("matmul gradients are grad %*% t(B) and t(A) %*% grad", {
  A <- ag_param(matrix(c(1, 2, 3, 4), 2, 2))
  B <- ag_param(matrix(c(5, 6, 7, 8, 9, 10), 2, 3))
  with_grad_tape(loss <- ag_sum(ag_matmul(A, B)))
  grads <- backward(loss)
  ones <- matrix(1, 2, 3)
  expect_equal(ag_matmul(A, B)$data, matrix(c(1, 2, 3, 4), 2, 2) %*% B$data)
  expect_equal(get(as.character(A$id), grads), ones %*% t(B$data))
  expect_equal(get(as.character(B$id), grads), t(A$data) %*% ones)
  # backward also accumulates into $grad
  expect_equal(A$grad, ones %*% t(B$data))
  expect_error(ag_matmul(A, ag_tensor(matrix(1, 3, 3))), "non-conformable")
})

test_that("add, sub and mul broadcast a row or a column and reduce its gradient", {
  a <- matrix(1:6, 3, 2)
  col <- matrix(c(10, 20, 30), 3, 1)
  row <- matrix(c(2, 3), 1, 2)
  expect_equal(ag_add(ag_tensor(a), col)$data, a + c(10, 20, 30))
  expect_equal(ag_sub(ag_tensor(a), row)$data, a - rbind(row, row, row))
  expect_equal(ag_mul(ag_tensor(a), row)$data, a * rbind(row, row, row))

  # d/d row of sum(a * row) = column sums of a
  r <- ag_param(row)
  with_grad_tape(loss <- ag_sum(ag_mul(a, r)))
  expect_equal(get(as.character(r$id), backward(loss)), matrix(colSums(a), 1, 2))
  # d/d col of sum(a - col) = -ncol(a) per row
  cp <- ag_param(col)
  with_grad_tape(loss <- ag_sum(ag_sub(a, cp)))
  expect_equal(get(as.character(cp$id), backward(loss)), matrix(-2, 3, 1))
  expect_error(ag_add(ag_tensor(a), matrix(1, 2, 2)), "broadcast")
})

test_that("unary ops: values and derivatives", {
  v <- matrix(c(-1.5, -0.2, 0.3, 2), 2, 2)
  pos <- abs(v) + 0.5
  expect_equal(ag_relu(v)$data, pmax(v, 0))
  expect_equal(ag_sigmoid(v)$data, 1 / (1 + exp(-v)))
  expect_equal(ag_tanh(v)$data, tanh(v))
  expect_equal(ag_exp(v)$data, exp(v))
  expect_equal(ag_log(pos)$data, log(pos))
  expect_equal(ag_pow(pos, 3)$data, pos^3)
  expect_equal(ag_scale(v, -2)$data, -2 * v)
  expect_equal(ag_clamp(v, -1, 1)$data, matrix(c(-1, -0.2, 0.3, 1), 2, 2))

  expect_equal(ag_grad_of(ag_param(v), function(x) ag_sum(ag_relu(x))), (v > 0) * 1)
  s <- 1 / (1 + exp(-v))
  expect_equal(ag_grad_of(ag_param(v), function(x) ag_sum(ag_sigmoid(x))), s * (1 - s))
  expect_equal(ag_grad_of(ag_param(v), function(x) ag_sum(ag_tanh(x))), 1 - tanh(v)^2)
  expect_equal(ag_grad_of(ag_param(pos), function(x) ag_sum(ag_log(x))), 1 / pos)
  expect_equal(ag_grad_of(ag_param(pos), function(x) ag_sum(ag_pow(x, 3))), 3 * pos^2)
  expect_equal(ag_grad_of(ag_param(v), function(x) ag_sum(ag_clamp(x, -1, 1))),
               matrix(c(0, 1, 1, 0), 2, 2))
  expect_error(ag_pow(v, "2"), "single number")
  expect_error(ag_scale(v, c(1, 2)), "single number")
})

test_that("softmax normalises columns and its gradient matches finite differences", {
  z <- matrix(c(1, 2, 3, -1, 0, 1000), 3, 2)
  p <- ag_softmax(z)$data
  e1 <- exp(c(1, 2, 3)); 
  expect_equal(p[, 1], e1 / sum(e1))
  expect_equal(p[, 2], c(0, 0, 1))   # no overflow for a large logit
  w <- matrix(c(0.5, -1, 2, 1, 0.25, -0.5), 3, 2)
  expect_grad_matches_fd(matrix(c(0.1, -0.4, 0.3, 0.8, -0.2, 0.05), 3, 2),
                         function(x) ag_sum(ag_mul(ag_softmax(x), w)))
})

test_that("sum and mean reduce all, per row (dim 1) or per column (dim 2)", {
  x <- matrix(1:6, 2, 3)
  expect_equal(ag_sum(x)$data, matrix(21))
  expect_equal(ag_sum(x, dim = 1)$data, matrix(c(9, 12), 2, 1))
  expect_equal(ag_sum(x, dim = 2)$data, matrix(c(3, 7, 11), 1, 3))
  expect_equal(ag_mean(x, dim = 1)$data, matrix(c(3, 4), 2, 1))
  expect_equal(ag_mean(x, dim = 2)$data, matrix(c(1.5, 3.5, 5.5), 1, 3))
  expect_equal(ag_grad_of(ag_param(x), function(p) ag_mean(p)), matrix(1 / 6, 2, 3))
  # sum over rows of (row sums weighted by c(1, 2)): gradient is the weight per row
  expect_equal(ag_grad_of(ag_param(x), function(p) ag_sum(ag_mul(ag_sum(p, dim = 1), c(1, 2)))),
               matrix(c(1, 2), 2, 3))
  expect_error(ag_sum(x, dim = 3), "dim")
})

test_that("reshape and transpose move gradients back to the input's layout", {
  x <- matrix(1:6, 2, 3)
  expect_equal(ag_reshape(x, 3, -1)$data, matrix(1:6, 3, 2))
  expect_equal(ag_transpose(x)$data, t(x))
  w <- matrix(c(1, 0, 2, 0, 3, 0), 3, 2)
  expect_equal(ag_grad_of(ag_param(x), function(p) ag_sum(ag_mul(ag_reshape(p, 3, 2), w))),
               matrix(w, 2, 3))
  expect_equal(ag_grad_of(ag_param(x), function(p) ag_sum(ag_mul(ag_transpose(p), w))), t(w))
  expect_error(ag_reshape(x, 4, 2), "reshape")
  expect_error(ag_reshape(x, NA, 2), "nrow")
})

test_that("mse loss is the mean squared error with gradient 2 (p - y) / n", {
  p <- matrix(c(1, 2, 3, 4), 2, 2); y <- matrix(c(0, 2, 1, 1), 2, 2)
  expect_equal(as.numeric(ag_mse_loss(p, y)$data), (1 + 0 + 4 + 9) / 4)
  expect_equal(ag_grad_of(ag_param(p), function(x) ag_mse_loss(x, y)), 2 * (p - y) / 4)
  expect_error(ag_mse_loss(p, matrix(0, 3, 1)), "target")
})

test_that("softmax cross-entropy takes one-hot or 0-based indices", {
  z <- matrix(c(2, 1, 0, 0, 3, 1), 3, 2)
  y <- matrix(c(1, 0, 0, 0, 0, 1), 3, 2)
  p <- apply(z, 2, function(col) exp(col) / sum(exp(col)))
  expected <- -(log(p[1, 1]) + log(p[3, 2])) / 2
  expect_equal(as.numeric(ag_softmax_cross_entropy_loss(z, y)$data), expected)
  expect_equal(as.numeric(ag_softmax_cross_entropy_loss(z, c(0L, 2L))$data), expected)
  expect_equal(ag_grad_of(ag_param(z), function(x) ag_softmax_cross_entropy_loss(x, y)),
               (p - y) / 2)
  expect_error(ag_softmax_cross_entropy_loss(z, c(0L, 3L)), "class indices")
  expect_error(ag_softmax_cross_entropy_loss(z, c(0L, NA)), "class indices")
})

test_that("cross-entropy on probabilities: value and gradient -y / p / n", {
  p <- matrix(c(0.7, 0.2, 0.1, 0.3, 0.3, 0.4), 3, 2)
  y <- matrix(c(1, 0, 0, 0, 0, 1), 3, 2)
  expect_equal(as.numeric(ag_cross_entropy_loss(p, y)$data), -(log(0.7) + log(0.4)) / 2)
  expect_equal(ag_grad_of(ag_param(p), function(x) ag_cross_entropy_loss(x, y)), -y / p / 2)
})

test_that("a tensor used twice gets the sum of both gradients", {
  x <- matrix(c(1, -2, 3), 3, 1)
  # d/dx sum(x * x + 3 x) = 2 x + 3
  expect_equal(ag_grad_of(ag_param(x), function(p) ag_sum(ag_add(ag_mul(p, p), ag_scale(p, 3)))),
               2 * x + 3)
})

test_that("ops outside with_grad_tape are not recorded", {
  w <- ag_param(matrix(2))
  loss <- ag_mul(w, 3)
  expect_true(loss$requires_grad)
  grads <- backward(loss)
  expect_null(get0(as.character(w$id), envir = grads, inherits = FALSE))
  expect_error(backward(matrix(1)), "ag_tensor")
})

test_that("ag_gradcheck passes a correct gradient and fails a wrong one", {
  set.seed(1)
  W <- ag_param(matrix(runif(6, 0.5, 1.5), 2, 3))
  expect_true(ag_gradcheck(function(ins) ag_sum(ag_log(ins$W)), list(W = W), quiet = TRUE))
  # an op whose backward is deliberately wrong (twice the true derivative)
  doubled <- function(x) ggmlR:::.ag_result(x$data^2, list(x = x), function(g) list(x = 4 * x$data * g))
  expect_false(ag_gradcheck(function(ins) ag_sum(doubled(ins$W)), list(W = W), quiet = TRUE))
  expect_output(ag_gradcheck(function(ins) ag_sum(ins$W), list(W = W)), "PASS")
})

test_that("print shows shape and requires_grad", {
  expect_output(print(ag_param(matrix(1, 2, 3))), "ag_tensor \\[2x3\\] \\(requires_grad\\)")
})

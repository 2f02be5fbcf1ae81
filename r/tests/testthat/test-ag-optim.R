# ag_* optimizers, learning-rate schedules and gradient clipping: one step
# worked out by hand from the update rules.

grads_for <- function(param, g) {
  grads <- new.env()
  assign(as.character(param$id), g, envir = grads)
  grads
}

test_that("SGD steps w - lr * g, with momentum v = m v + g", {
  w <- ag_param(matrix(c(1, 2), 2, 1))
  opt <- optimizer_sgd(list(w = w), lr = 0.1)
  opt$step(grads_for(w, matrix(c(1, -1), 2, 1)))
  expect_equal(w$data, matrix(c(0.9, 2.1), 2, 1))

  w <- ag_param(matrix(0, 1, 1))
  opt <- optimizer_sgd(list(w = w), lr = 0.5, momentum = 0.9)
  opt$step(grads_for(w, matrix(1)))   # v = 1
  opt$step(grads_for(w, matrix(1)))   # v = 1.9
  expect_equal(as.numeric(w$data), -0.5 * (1 + 1.9))
  expect_output(print(opt), "SGD optimizer \\| lr = 0.5 \\| momentum = 0.9")
})

test_that("Adam's first step moves each weight by lr against the gradient's sign", {
  w <- ag_param(matrix(c(1, 1), 2, 1))
  opt <- optimizer_adam(list(w = w), lr = 0.01)
  opt$step(grads_for(w, matrix(c(3, -0.5), 2, 1)))
  # m_hat = g, v_hat = g^2 after one step: update lr * g / (|g| + eps)
  expect_equal(w$data, matrix(1 - 0.01 * c(3, -0.5) / (c(3, 0.5) + 1e-8), 2, 1))
  expect_identical(opt$t, 1L)
  # second step with the same gradient: m_hat = g, v_hat = g^2 again
  opt$step(grads_for(w, matrix(c(3, -0.5), 2, 1)))
  expect_equal(w$data, matrix(1 - 2 * 0.01 * c(3, -0.5) / (c(3, 0.5) + 1e-8), 2, 1))
})

test_that("zero_grad clears $grad and the tape; parameters without gradients stay", {
  w <- ag_param(matrix(2)); other <- ag_param(matrix(5))
  opt <- optimizer_sgd(list(w = w, other = other), lr = 1)
  with_grad_tape(loss <- ag_mul(w, 3))
  grads <- backward(loss)
  expect_equal(w$grad, matrix(3))
  opt$step(grads)
  expect_equal(w$data, matrix(-1))
  expect_equal(other$data, matrix(5))
  opt$zero_grad()
  expect_null(w$grad)
  expect_equal(length(ggmlR:::.ag_tape$nodes), 0L)
  expect_error(opt$step(list()), "backward")
  expect_error(optimizer_adam(list(matrix(1))), "ag_tensors")
})

test_that("step schedule multiplies by gamma every step_size epochs", {
  opt <- optimizer_sgd(list(w = ag_param(matrix(1))), lr = 1)
  sch <- lr_scheduler_step(opt, step_size = 2, gamma = 0.5)
  lrs <- vapply(1:5, function(i) sch$step(), numeric(1))
  expect_equal(lrs, c(1, 0.5, 0.5, 0.25, 0.25))
  expect_output(print(sch), "epoch=5")
})

test_that("cosine schedule follows lr_min + (lr_max - lr_min) (1 + cos(pi t / T)) / 2", {
  opt <- optimizer_adam(list(w = ag_param(matrix(1))), lr = 0.2)
  sch <- lr_scheduler_cosine(opt, T_max = 4, lr_min = 0.1)
  lrs <- vapply(1:6, function(i) sch$step(), numeric(1))
  t <- c(0, 1, 2, 3, 3, 3)
  expect_equal(lrs, 0.1 + 0.05 * (1 + cos(pi * t / 4)))
  sch2 <- lr_scheduler_cosine(optimizer_sgd(list(w = ag_param(matrix(1))), lr = 1),
                              T_max = 2, restart = TRUE)
  expect_equal(vapply(1:4, function(i) sch2$step(), numeric(1)), c(1, 0.5, 1, 0.5))
  expect_error(lr_scheduler_cosine(list(lr = 1), T_max = 2), "optimizer")
})

test_that("clip_grad_norm scales the joint norm down to max_norm", {
  a <- ag_param(matrix(0, 1, 2)); b <- ag_param(matrix(0))
  grads <- new.env()
  assign(as.character(a$id), matrix(c(3, 0), 1, 2), envir = grads)
  assign(as.character(b$id), matrix(4), envir = grads)
  expect_equal(clip_grad_norm(list(a = a, b = b), grads, max_norm = 10), 5)
  expect_equal(get(as.character(b$id), grads), matrix(4))
  expect_equal(clip_grad_norm(list(a = a, b = b), grads, max_norm = 1), 5)
  expect_equal(get(as.character(b$id), grads), matrix(4 / (5 + 1e-6)))
  expect_error(clip_grad_norm(list(a = a), list(), 1), "backward")
})

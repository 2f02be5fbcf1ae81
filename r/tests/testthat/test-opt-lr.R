# CRAN ggmlR's low-level training API: the constants' functions, the
# CRAN form of ggml_opt_init, learning-rate handles, ggml_fit on a
# scheduler with callbacks, and the small helpers.

# y = X w + b on N datapoints of 2 features, the model out = W x + b with
# W and b parameters, inputs [2, N]: one full batch per epoch.
linear_setup <- function(X, y, w0 = c(0, 0), b0 = 0) {
  cpu <- ggml_backend_cpu_init()
  sched <- ggml_backend_sched_new(list(cpu), parallel = FALSE)
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  x_in <- ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, nrow(X))
  W <- ggml_set_param(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 1))
  b <- ggml_set_param(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1))
  out <- ggml_add(ctx, ggml_mul_mat(ctx, W, x_in), b)
  buf <- ggml_backend_alloc_ctx_tensors(ctx, cpu)
  ggml_backend_tensor_set_data(W, w0)
  ggml_backend_tensor_set_data(b, b0)
  ds <- ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 2, 1, nrow(X), 1)
  ggml_backend_tensor_set_data(ggml_opt_dataset_data(ds), as.vector(t(X)))
  ggml_backend_tensor_set_data(ggml_opt_dataset_labels(ds), as.vector(y))
  list(cpu = cpu, sched = sched, ctx = ctx, inputs = x_in, outputs = out, W = W, b = b, dataset = ds, buf = buf)
}

# full-batch gradient descent on the mean squared error, in float64:
# w <- w - lr * 2/N X'(Xw + b - y), one step per rate
gd_steps <- function(X, y, lrs, w = c(0, 0), b = 0) {
  for (lr in lrs) {
    r <- as.vector(X %*% w + b - y)
    w <- w - lr * 2 / nrow(X) * as.vector(crossprod(X, r))
    b <- b - lr * 2 / nrow(X) * sum(r)
  }
  list(w = w, b = b)
}

set.seed(3)
X <- matrix(rnorm(16), 8)
Y <- as.vector(X %*% c(2, -1) + 0.5)

test_that("the constants' functions are the GGML_OPT_* values", {
  expect_identical(ggml_opt_loss_type_mean(), 0L)
  expect_identical(ggml_opt_loss_type_sum(), 1L)
  expect_identical(ggml_opt_loss_type_cross_entropy(), 2L)
  expect_identical(ggml_opt_loss_type_mse(), 3L)
  expect_identical(ggml_opt_optimizer_type_adamw(), 0L)
  expect_identical(ggml_opt_optimizer_type_sgd(), 1L)
  expect_identical(ggml_opt_optimizer_name(ggml_opt_optimizer_type_sgd()), "sgd")
})

test_that("results name their uncertainty", {
  r <- ggml_opt_result_init()
  expect_named(ggml_opt_result_loss(r), c("loss", "uncertainty"))
  expect_named(ggml_opt_result_accuracy(r), c("accuracy", "uncertainty"))
  ggml_opt_result_free(r)
})

test_that("ggml_opt_init takes CRAN's arguments as well as a params list", {
  s <- linear_setup(X, Y)
  oc <- ggml_opt_init(sched = s$sched, loss_type = ggml_opt_loss_type_mse(), optimizer = ggml_opt_optimizer_type_sgd(),
                      opt_period = 2L, ctx_compute = s$ctx, inputs = s$inputs, outputs = s$outputs)
  expect_identical(ggml_opt_context_optimizer_type(oc), GGML_OPT_OPTIMIZER_TYPE_SGD)
  expect_true(ggml_opt_static_graphs(oc))
  expect_silent(ggml_opt_reset(oc))
  ggml_opt_free(oc)
  p <- ggml_opt_default_params(s$sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR)
  p[c("ctx_compute", "inputs", "outputs")] <- list(s$ctx, s$inputs, s$outputs)
  oc <- ggml_opt_init(p)
  expect_identical(ggml_opt_context_optimizer_type(oc), GGML_OPT_OPTIMIZER_TYPE_ADAMW)
  ggml_opt_free(oc)
  expect_error(ggml_opt_init(s$sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, opt_period = 0L, ctx_compute = s$ctx,
                             inputs = s$inputs, outputs = s$outputs), "opt_period")
})

test_that("a learning-rate handle starts at ggml-opt's defaults and sets each rate", {
  s <- linear_setup(X, Y)
  fit_ctx <- ggml_opt_init_for_fit(s$sched, ggml_opt_loss_type_mse(), ggml_opt_optimizer_type_sgd(), 1L,
                                   s$ctx, s$inputs, s$outputs)
  expect_named(fit_ctx, c("opt_ctx", "lr_ud"))
  lr <- fit_ctx$lr_ud
  expect_equal(ggml_opt_get_lr(lr), c(adamw = 0.001, sgd = 0.001), tolerance = 1e-6)
  ggml_opt_set_lr(lr, adamw_lr = 0.25)
  expect_equal(ggml_opt_get_lr(lr), c(adamw = 0.25, sgd = 0.001), tolerance = 1e-6)
  ggml_opt_set_lr(lr, sgd_lr = 0.5, adamw_lr = NA)
  expect_equal(ggml_opt_get_lr(lr), c(adamw = 0.25, sgd = 0.5))
  expect_output(print(lr), "AdamW 0.25, SGD 0.5")
  expect_error(ggml_opt_set_lr(lr, adamw_lr = -1), "adamw_lr")
  expect_error(ggml_opt_set_lr(lr, sgd_lr = "a"), "sgd_lr")
  expect_error(ggml_opt_set_lr(lr, sgd_lr = c(1, 2)), "sgd_lr")
  expect_error(ggml_opt_set_lr(lr, adamw_lr = Inf), "adamw_lr")
  expect_error(ggml_opt_get_lr(list(adamw = 1)), "learning-rate handle")
  expect_error(ggml_opt_set_lr(fit_ctx$opt_ctx, 0.1), "learning-rate handle")
  expect_equal(ggml_opt_get_lr(lr), c(adamw = 0.25, sgd = 0.5))

  # the optimizer reads the handle at its step: one full-batch SGD step at 0.5
  ggml_opt_epoch(fit_ctx$opt_ctx, s$dataset)
  want <- gd_steps(X, Y, 0.5)
  expect_equal(as.vector(ggml_backend_tensor_get_data(s$W)), want$w, tolerance = 1e-5)
  expect_equal(ggml_backend_tensor_get_data(s$b), want$b, tolerance = 1e-5)
  ggml_opt_free(fit_ctx$opt_ctx)
})

test_that("ggml_fit on a scheduler trains with the schedules' rates and stops on request", {
  s <- linear_setup(X, Y)
  begin_rates <- list()
  start_at_0.1 <- list(on_epoch_begin = function(epoch, logs, state) {
    if (epoch == 1) ggml_opt_set_lr(state$lr_ud, adamw_lr = 0.1, sgd_lr = 0.1)
  })
  record <- list(on_epoch_begin = function(epoch, logs, state) begin_rates[[epoch]] <<- ggml_opt_get_lr(state$lr_ud))
  hist <- ggml_fit(s$sched, s$ctx, s$inputs, s$outputs, s$dataset, optimizer = ggml_opt_optimizer_type_sgd(),
                   nepoch = 5L, nbatch_logical = 8L, silent = TRUE,
                   callbacks = list(start_at_0.1, ggml_schedule_step_decay(step_size = 2, gamma = 0.5), record))
  lrs <- 0.1 * c(1, 1, 0.5, 0.5, 0.25)
  expect_equal(vapply(begin_rates, `[[`, 0, "sgd"), lrs)
  expect_equal(vapply(begin_rates, `[[`, 0, "adamw"), lrs)
  want <- gd_steps(X, Y, lrs)
  expect_equal(as.vector(ggml_backend_tensor_get_data(s$W)), want$w, tolerance = 1e-5)
  expect_equal(ggml_backend_tensor_get_data(s$b), want$b, tolerance = 1e-5)
  expect_named(hist, c("epoch", "train_loss", "train_accuracy", "val_loss", "val_accuracy"))
  expect_identical(hist$epoch, 1:5)
  expect_true(all(is.na(hist$val_loss)))
  # the loss of epoch e is that of the weights before its step
  w3 <- gd_steps(X, Y, lrs[1:2])
  expect_equal(hist$train_loss[3], mean((X %*% w3$w + w3$b - Y)^2), tolerance = 1e-5)

  # all arguments named (no model) is the same function; state$stop ends it
  ends <- integer(0)
  stop_at_2 <- list(on_epoch_end = function(epoch, logs, state) {
    ends <<- c(ends, epoch)
    expect_true(is.finite(logs$train_loss))
    if (epoch == 2) state$stop <- TRUE
  })
  hist <- ggml_fit(sched = s$sched, ctx_compute = s$ctx, inputs = s$inputs, outputs = s$outputs, dataset = s$dataset,
                   nepoch = 10L, nbatch_logical = 8L, silent = TRUE, callbacks = list(stop_at_2))
  expect_equal(ends, 1:2)
  expect_equal(nrow(hist), 2)
  # stopping before the first epoch trains nothing
  w_before <- ggml_backend_tensor_get_data(s$W)
  hist <- ggml_fit_opt(s$sched, s$ctx, s$inputs, s$outputs, s$dataset, nepoch = 3L, nbatch_logical = 8L, silent = TRUE,
                       callbacks = list(list(on_epoch_begin = function(epoch, logs, state) state$stop <- TRUE)))
  expect_equal(nrow(hist), 0)
  expect_identical(ggml_backend_tensor_get_data(s$W), w_before)
  expect_error(ggml_fit(s$sched, s$ctx, s$inputs, s$outputs, s$dataset, callbacks = function() 1), "callbacks")
  expect_error(ggml_fit(s$sched, s$ctx, s$inputs, s$outputs, s$dataset, nepoch = NA), "nepoch")
})

test_that("the callbacks follow their monitor and change both rates", {
  state <- new.env()
  state$stop <- FALSE
  state$lr_ud <- ggml_opt_init_for_fit  # not a handle: a schedule refuses it
  expect_error(ggml_schedule_step_decay(1, 0.5)$on_epoch_begin(2, list(), state), "learning-rate handle")

  es <- ggml_callback_early_stopping(monitor = "val_accuracy", patience = 2, min_delta = 0.05)
  for (v in c(0.5, 0.6, 0.62)) es$on_epoch_end(1, list(val_accuracy = v), state)   # 0.62 is not 0.05 better
  expect_false(state$stop)
  es$on_epoch_end(4, list(val_accuracy = NA), state)                                # ignored
  expect_false(state$stop)
  expect_message(es$on_epoch_end(5, list(val_accuracy = 0.64), state), "Early stopping at epoch 5")
  expect_true(state$stop)

  fit_ctx <- local({
    s <- linear_setup(X, Y)
    ggml_opt_init_for_fit(s$sched, ggml_opt_loss_type_mse(), ctx_compute = s$ctx, inputs = s$inputs, outputs = s$outputs)
  })
  state$lr_ud <- fit_ctx$lr_ud
  ggml_opt_set_lr(state$lr_ud, adamw_lr = 0.4, sgd_lr = 0.04)
  plateau <- ggml_schedule_reduce_on_plateau(monitor = "loss", factor = 0.5, patience = 1, min_lr = 0.03, min_delta = 0)
  plateau$on_epoch_end(1, list(loss = 2), state)
  expect_equal(ggml_opt_get_lr(state$lr_ud), c(adamw = 0.4, sgd = 0.04))
  plateau$on_epoch_end(2, list(loss = 2), state)
  expect_equal(ggml_opt_get_lr(state$lr_ud), c(adamw = 0.2, sgd = 0.03))   # 0.02 floored at min_lr
  plateau$on_epoch_end(3, list(loss = 1), state)                             # an improvement: no change
  expect_equal(ggml_opt_get_lr(state$lr_ud), c(adamw = 0.2, sgd = 0.03))

  cosine <- ggml_schedule_cosine_decay(eta_min = 0.01)
  state$nepoch <- 4
  got <- t(vapply(1:4, function(e) { cosine$on_epoch_begin(e, list(), state); ggml_opt_get_lr(state$lr_ud) }, numeric(2)))
  expect_equal(unname(got[, "adamw"]), 0.01 + (0.2 - 0.01) * (1 + cos(pi * (0:3) / 4)) / 2)
  expect_equal(unname(got[, "sgd"]), 0.01 + (0.03 - 0.01) * (1 + cos(pi * (0:3) / 4)) / 2)
  ggml_opt_free(fit_ctx$opt_ctx)
})

test_that("ggml_with_temp_ctx evaluates with a context it frees afterwards", {
  total <- 10
  got <- ggml_with_temp_ctx(1024^2, {
    a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3)
    ggml_set_f32(a, c(1, 2, 3))
    sum(ggml_get_f32(a)) + total
  })
  expect_identical(got, 16)
  expect_false(exists("a", inherits = FALSE))
  leaked <- ggml_with_temp_ctx(1024^2, ctx)
  expect_error(ggml_new_tensor_1d(leaked, GGML_TYPE_F32, 1), "freed")
  expect_error(ggml_with_temp_ctx(-1, 1))
})

test_that("without a model the context takes one per batch (ggml_opt_prepare_alloc)", {
  cpu <- ggml_backend_cpu_init()
  sched <- ggml_backend_sched_new(list(cpu), parallel = FALSE)
  oc <- ggml_opt_init(sched = sched, loss_type = ggml_opt_loss_type_mse(), optimizer = ggml_opt_optimizer_type_sgd())
  expect_false(ggml_opt_static_graphs(oc))
  expect_equal(ggml_opt_context_optimizer_type(oc), ggml_opt_optimizer_type_sgd())
  expect_silent(ggml_opt_reset(oc, optimizer = TRUE))
  expect_error(ggml_opt_alloc(oc, TRUE), "prepare_alloc")
  set.seed(3)
  W0 <- matrix(runif(6, -1, 1), 3, 2)
  pctx <- ggml_init(1024^2)
  w <- ggml_set_param(ggml_new_tensor_from_array(pctx, W0))
  W <- W0
  for (step in 1:2) {  # a new compute context and graph each batch, the same parameter
    X <- matrix(runif(12, -1, 1), 3, 4); Y <- matrix(runif(8, -1, 1), 2, 4)
    x <- ggml_new_tensor_2d(pctx, GGML_TYPE_F32, 3, 4)
    ctx <- ggml_init(1024^2, no_alloc = TRUE)
    out <- ggml_mul_mat(ctx, w, x)
    gf <- ggml_build_forward_expand(ctx, out)
    ggml_opt_prepare_alloc(oc, ctx, gf, x, out)
    ggml_opt_alloc(oc, TRUE)
    ggml_set_array(x, X); ggml_set_array(ggml_opt_labels(oc), Y)
    ggml_opt_eval(oc)
    # float64: SGD at ggml-opt's default rate (1e-3, no decay) on the mean squared error
    e <- 2 * (t(W) %*% X - Y) / 8
    W <- W - 1e-3 * X %*% t(e)
    expect_equal(ggml_get_array(w), W, tolerance = 1e-6)
  }
  expect_error(ggml_opt_prepare_alloc(oc, ctx, gf, x, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2)), "not a node")
  expect_error(ggml_opt_init(sched = sched, loss_type = ggml_opt_loss_type_mse(), ctx_compute = ctx), "go together")
  expect_error(ggml_opt_init(list()), "get_opt_pars")
  ggml_opt_free(oc)
  expect_error(ggml_opt_prepare_alloc(oc, ctx, gf, x, out), "freed")
  ggml_backend_sched_free(sched)
})

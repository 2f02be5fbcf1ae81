# Training from R: the training ops against float64 references, arrays in
# and out, ggml_opt_fit / ggml_opt_epoch with callbacks and interrupts, GGUF
# round trips, and the character model of examples/gpt.

test_that("arrays go in and out of tensors with their shape and type", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  x <- array(rnorm(24), c(2, 3, 4))
  t <- ggml_new_tensor_from_array(ctx, x)
  expect_equal(ggml_tensor_type(t), GGML_TYPE_F32)
  expect_equal(ggml_tensor_shape(t), c(2, 3, 4, 1))
  expect_equal(ggml_get_array(t), x, tolerance = 1e-6)
  i <- ggml_new_tensor_from_array(ctx, matrix(1:6, 3))
  expect_identical(ggml_get_array(i), matrix(1:6, 3))
  expect_error(ggml_set_array(t, matrix(0, 3, 2)), "does not fit")
  expect_error(ggml_new_tensor_from_array(ctx, array(0, c(1, 1, 1, 1, 2))), "at most 4")
  expect_error(ggml_new_tensor_from_array(ctx, "a"), "numeric")
  expect_error(ggml_set_array(i, matrix(c(1.5, 2, 3, 4, 5, 6), 3)), "32-bit integer")
})

test_that("training ops match float64 references", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(3)
  x <- matrix(rnorm(12), 4, 3)
  tx <- ggml_new_tensor_from_array(ctx, x)
  ev <- function(t) { ggml_graph_compute(ctx, ggml_build_forward_expand(ctx, t)); ggml_get_array(t) }
  expect_equal(ev(ggml_gelu_erf(ctx, tx)), x * pnorm(x), tolerance = 1e-5)
  expect_equal(ev(ggml_silu(ctx, tx)), x / (1 + exp(-x)), tolerance = 1e-5)
  expect_equal(ev(ggml_tanh(ctx, tx)), tanh(x), tolerance = 1e-5)
  expect_equal(ev(ggml_relu(ctx, tx)), pmax(x, 0), tolerance = 1e-6)
  expect_equal(ev(ggml_unary(ctx, tx, GGML_UNARY_OP_NEG)), -x, tolerance = 1e-6)
  expect_equal(ev(ggml_gelu_quick(ctx, tx)), x / (1 + exp(-1.702 * x)), tolerance = 1e-5)
  expect_equal(ev(ggml_softplus(ctx, tx)), log1p(exp(x)), tolerance = 1e-5)
  expect_equal(ev(ggml_hardswish(ctx, tx)), x * pmin(1, pmax(0, (x + 3) / 6)), tolerance = 1e-6)
  halves <- ggml_new_tensor_from_array(ctx, c(2.5, -2.5, 0.5, -1.5))
  expect_equal(as.vector(ev(ggml_round(ctx, halves))), c(3, -3, 1, -2))  # away from 0, not R's round-half-even
  expect_equal(as.vector(ev(ggml_unary(ctx, halves, GGML_UNARY_OP_TRUNC))), c(2, -2, 0, -1))
  xi <- function(v) ifelse(v > 0, log1p(exp(0.8)) * v^2 + 0.5 * v, (0.5 + log1p(exp(0.8))) * (expm1(pmin(v, -1e-6)) - v) + 0.5 * v)
  expect_equal(ev(ggml_xielu(ctx, tx)), xi(x), tolerance = 1e-5)
  expect_error(ggml_unary(ctx, tx, GGML_UNARY_OP_XIELU), "ggml_xielu")
  # gated units: x the first half of each row (2 of 4), the gate the second
  silu <- function(v) v / (1 + exp(-v))
  expect_equal(ev(ggml_swiglu(ctx, tx)), silu(x[1:2, ]) * x[3:4, ], tolerance = 1e-5)
  expect_equal(ev(ggml_swiglu_swapped(ctx, tx)), silu(x[3:4, ]) * x[1:2, ], tolerance = 1e-5)
  expect_equal(ev(ggml_glu(ctx, tx, GGML_GLU_OP_REGLU)), pmax(x[1:2, ], 0) * x[3:4, ], tolerance = 1e-6)
  expect_equal(ev(ggml_swiglu_split(ctx, tx, tx)), silu(x) * x, tolerance = 1e-5)
  # an odd row: its last element is not read (as upstream)
  odd <- rbind(x[1:4, ], rep(99, ncol(x)))
  expect_equal(ev(ggml_swiglu(ctx, ggml_new_tensor_from_array(ctx, odd))), silu(x[1:2, ]) * x[3:4, ], tolerance = 1e-5)
  expect_equal(ggml_unary_op_name(GGML_UNARY_OP_GELU), "GELU")
  nrm <- apply(x, 2, function(c) (c - mean(c)) / sqrt(mean((c - mean(c))^2) + 1e-5))
  expect_equal(ev(ggml_norm(ctx, tx, 1e-5)), nrm, tolerance = 1e-5)
  expect_equal(ev(ggml_rms_norm(ctx, tx, 1e-5)), apply(x, 2, function(c) c / sqrt(mean(c^2) + 1e-5)), tolerance = 1e-5)
  expect_identical(as.vector(ev(ggml_argmax(ctx, tx))), as.integer(apply(x, 2, which.max) - 1))
  expect_equal(ev(ggml_cumsum(ctx, tx)), apply(x, 2, cumsum), tolerance = 1e-6)
  expect_identical(ev(ggml_argsort(ctx, tx, GGML_SORT_ORDER_DESC)), apply(x, 2, function(c) order(-c) - 1L))
  expect_identical(ev(ggml_top_k(ctx, tx, 2L)), apply(x, 2, function(c) order(-c)[1:2] - 1L))
  idx <- ggml_new_tensor_from_array(ctx, c(2L, 0L))
  expect_equal(ev(ggml_get_rows(ctx, tx, idx)), x[, c(3, 1)], tolerance = 1e-6)
  lab <- ggml_new_tensor_from_array(ctx, c(1L, 3L, 0L))
  ref <- mean(sapply(1:3, function(j) -x[c(2, 4, 1)[j], j] + log(sum(exp(x[, j])))))
  expect_equal(as.vector(ev(ggml_cross_entropy_loss(ctx, tx, lab))), ref, tolerance = 1e-5)
  expect_error(ggml_unary(ctx, tx, 99L), "unary|activation|op")
  expect_error(ggml_norm(ctx, tx, NA_real_), "NA")
})

test_that("ggml_opt_fit trains a linear model, calls back, and reports per epoch", {
  set.seed(1)
  X <- matrix(runif(4 * 128, -1, 1), 4)
  Y <- matrix(colSums(X * c(1, -2, 0.5, 3)) + 0.5, 1)
  ds <- ggml_opt_dataset_from_arrays(X, Y)
  pctx <- ggml_init(1024^2)
  w <- ggml_set_param(ggml_new_tensor_from_array(pctx, matrix(0, 4, 1)))
  b <- ggml_set_param(ggml_new_tensor_from_array(pctx, 0))
  x <- ggml_new_tensor_2d(pctx, GGML_TYPE_F32, 4, 16)
  ctx <- ggml_init(16 * 1024^2, no_alloc = TRUE)
  y <- ggml_add(ctx, ggml_mul_mat(ctx, w, x), b)
  sched <- ggml_backend_sched_new(ggml_backend_cpu_init())
  calls <- 0
  cb <- function(train, opt_ctx, dataset, result, ibatch, ibatch_max, t_start_us) calls <<- calls + 1
  epochs <- NULL
  h <- ggml_opt_fit(sched, ctx, x, y, ds, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, nepoch = 20, val_split = 0.25,
                    get_opt_pars = function(epoch) { epochs <<- c(epochs, epoch); list(adamw = list(alpha = 0.05)) },
                    silent = TRUE, callback = cb)
  expect_equal(nrow(h), 20)
  expect_lt(h$val_loss[20], 1e-3 * h$val_loss[1])
  expect_equal(calls, 20 * 8)
  expect_true(all(diff(epochs) >= 0) && max(epochs) == 20)
  expect_equal(as.vector(ggml_get_array(w)), c(1, -2, 0.5, 3), tolerance = 1e-2)
  # the default display: a progress bar with the loss and the ETA
  out <- capture.output(ggml_opt_fit(sched, ctx, x, y, ds, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, nepoch = 1))
  expect_true(any(grepl("ETA", out)) && any(grepl("loss=", out)) && any(grepl("100%", out)))
  # an error in get_opt_pars is an R error, and nothing is left half done
  expect_error(ggml_opt_fit(sched, ctx, x, y, ds, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, silent = TRUE,
                            get_opt_pars = function(e) stop("no parameters today")), "no parameters today")
  expect_error(ggml_opt_fit(sched, ctx, x, y, ds, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, nbatch_logical = 7), "nbatch_logical")
})

test_that("ggml-opt's extensions from R: groups, schedule, moments, steps, a callback that stops", {
  set.seed(5)
  X <- matrix(runif(3 * 32, -1, 1), 3)
  Y <- matrix(runif(2 * 32, -1, 1), 2)
  pctx <- ggml_init(1024^2)
  W0 <- matrix(runif(6, -1, 1), 3, 2); b0 <- runif(2, -1, 1)
  w <- ggml_set_param(ggml_new_tensor_from_array(pctx, W0))
  b <- ggml_set_param(ggml_new_tensor_from_array(pctx, matrix(b0, 2, 1)))
  x <- ggml_new_tensor_2d(pctx, GGML_TYPE_F32, 3, 8)
  ctx <- ggml_init(16 * 1024^2, no_alloc = TRUE)
  out <- ggml_add(ctx, ggml_mul_mat(ctx, w, x), b)
  sched <- ggml_backend_sched_new(ggml_backend_cpu_init())
  p <- ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR)
  p$ctx_compute <- ctx; p$inputs <- x; p$outputs <- out
  p$optimizer <- GGML_OPT_OPTIMIZER_TYPE_SGD
  p$get_opt_pars <- function(ud) list(sgd = list(alpha = 0.3, wd = 0.1))
  p$param_groups <- list(ggml_opt_param_group(b, lr_scale = 0.5, wd_scale = 0))
  p$lr_schedule <- ggml_opt_lr_schedule("warmup_cosine", warmup = 2, decay_steps = 10, min_lr = 0.01)
  opt <- ggml_opt_init(p)
  expect_null(ggml_opt_grad_m(opt, w))  # SGD keeps no moments
  expect_true(is.na(ggml_opt_last_grad_norm(opt)))
  ggml_opt_alloc(opt, TRUE)
  ggml_set_array(x, X[, 1:8]); ggml_set_array(ggml_opt_labels(opt), Y[, 1:8])
  ggml_opt_eval(opt)
  # float64: the MSE gradient, lr 0.3/3 at step 0 of the warmup; b at half lr, no decay
  o <- t(W0) %*% X[, 1:8] + b0; e <- 2 * (o - Y[, 1:8]) / 16
  gW <- X[, 1:8] %*% t(e); gb <- rowSums(e)
  expect_equal(ggml_get_array(w), W0 * (1 - 0.1 * 0.1) - 0.1 * gW, tolerance = 1e-6)
  expect_equal(as.vector(ggml_get_array(b)), b0 - 0.05 * gb, tolerance = 1e-6)
  expect_equal(ggml_opt_last_grad_norm(opt), sqrt(sum(gW^2) + sum(gb^2)), tolerance = 1e-6)
  expect_equal(ggml_opt_get_steps(opt), 1)
  ggml_opt_set_steps(opt, 4)
  expect_equal(ggml_opt_get_steps(opt), 4)
  s <- p$lr_schedule
  expect_equal(ggml_opt_lr_schedule_lr(s, 0.3, 1), 0.2, tolerance = 1e-7)
  expect_equal(ggml_opt_lr_schedule_lr(s, 0.3, 6), 0.01 + 0.5 * (1 + cos(pi * 4 / 8)) * 0.29, tolerance = 1e-6)
  expect_equal(ggml_opt_lr_schedule_lr(s, 0.3, 11), 0.01, tolerance = 1e-7)
  expect_error(ggml_opt_param_group(list(1, 2)), "tensor")
  expect_error(ggml_opt_lr_schedule("cyclic"), "should be one of")
  p2 <- p; p2$param_groups <- list(ggml_opt_param_group(x))
  expect_error(ggml_opt_init(p2), "not a parameter")
  # a per-batch callback that returns FALSE stops the epoch after that batch
  ds <- ggml_opt_dataset_from_arrays(X, Y)
  seen <- 0
  st <- ggml_opt_epoch(opt, ds, callback_train = function(...) { seen <<- seen + 1; seen < 2 })
  expect_true(isTRUE(attr(st, "stopped")))
  expect_equal(seen, 2)
  expect_equal(ggml_opt_get_steps(opt), 6)
  ggml_opt_free(opt)
  ggml_backend_sched_free(sched)
  ggml_free(ctx); ggml_free(pctx)
})

test_that("an interrupt in a callback stops an epoch and leaves every handle usable", {
  set.seed(2)
  ds <- ggml_opt_dataset_from_arrays(matrix(runif(64), 2), matrix(runif(32), 1))
  pctx <- ggml_init(1024^2)
  w <- ggml_set_param(ggml_new_tensor_from_array(pctx, matrix(0, 2, 1)))
  x <- ggml_new_tensor_2d(pctx, GGML_TYPE_F32, 2, 4)
  ctx <- ggml_init(16 * 1024^2, no_alloc = TRUE)
  y <- ggml_mul_mat(ctx, w, x)
  sched <- ggml_backend_sched_new(ggml_backend_cpu_init())
  p <- ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR)
  p$ctx_compute <- ctx; p$inputs <- x; p$outputs <- y
  oc <- ggml_opt_init(p)
  res <- ggml_opt_result_init()
  stop_at_3 <- function(train, opt_ctx, dataset, result, ibatch, ibatch_max, t_start_us) {
    if (ibatch == 3) signalCondition(structure(class = c("interrupt", "condition"), list(message = "", call = NULL)))
  }
  got <- tryCatch(ggml_opt_epoch(oc, ds, res, NULL, -1, stop_at_3), interrupt = function(e) "interrupted")
  expect_identical(got, "interrupted")
  expect_equal(ggml_opt_result_ndata(res), 12)
  # the context goes on: a full epoch after the interrupt
  ggml_opt_result_reset(res)
  expect_equal(ggml_opt_epoch(oc, ds, res), GGML_STATUS_SUCCESS)
  expect_equal(ggml_opt_result_ndata(res), 32)
  expect_true(is.finite(ggml_opt_result_loss(res)[["loss"]]))
  # and the same through ggml_opt_fit, whose own objects are freed on the way out
  got <- tryCatch(ggml_opt_fit(sched, ctx, x, y, ds, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, nepoch = 3, silent = TRUE,
                               callback = stop_at_3), interrupt = function(e) "interrupted")
  expect_identical(got, "interrupted")
  ggml_opt_free(oc); ggml_opt_free(oc)
  expect_error(ggml_opt_eval(oc), "freed")
  ggml_opt_result_free(res)
  expect_error(ggml_opt_result_loss(res), "freed")
})

test_that("GGUF key/values and tensors round-trip through a file", {
  path <- tempfile(fileext = ".gguf")
  on.exit(unlink(path))
  ctx <- ggml_init(1024^2)
  a <- ggml_set_name(ggml_new_tensor_from_array(ctx, matrix(rnorm(6), 2, 3)), "a")
  i <- ggml_set_name(ggml_new_tensor_from_array(ctx, 1:5), "i")
  g <- gguf_init_empty()
  gguf_set_val_str(g, "name", "héllo")
  gguf_set_val_u32(g, "u32", 4e9)
  gguf_set_val_i8(g, "i8", -5)
  gguf_set_val_u64(g, "u64", 2^52)
  gguf_set_val_f64(g, "f64", pi)
  gguf_set_val_bool(g, "b", TRUE)
  gguf_set_arr_data(g, "bytes", GGUF_TYPE_UINT8, c(1, 2, 255))
  gguf_set_arr_str(g, "strs", c("x", "yz"))
  gguf_add_tensor(g, a)
  gguf_add_tensor(g, i)
  expect_error(gguf_set_val_u8(g, "bad", 256), "range")
  expect_error(gguf_set_val_i32(g, "bad", NA_real_), "NA")
  expect_error(gguf_add_tensor(g, a), "duplicate|already|exists")
  gguf_write_to_file(g, path)
  gguf_free(g)
  f <- gguf_init_from_file(path)
  h <- f$gguf
  expect_equal(gguf_get_val_str(h, gguf_find_key(h, "name")), "héllo")
  expect_equal(gguf_get_val_u32(h, gguf_find_key(h, "u32")), 4e9)
  expect_equal(gguf_get_val_i8(h, gguf_find_key(h, "i8")), -5L)
  expect_equal(gguf_get_val_u64(h, gguf_find_key(h, "u64")), 2^52)
  expect_equal(gguf_get_val(h, gguf_find_key(h, "f64")), pi)
  expect_true(gguf_get_val_bool(h, gguf_find_key(h, "b")))
  expect_identical(gguf_get_arr_data(h, gguf_find_key(h, "bytes")), c(1L, 2L, 255L))
  expect_identical(gguf_get_arr_str(h, gguf_find_key(h, "strs"), 1), "yz")
  expect_error(gguf_get_val_u32(h, gguf_find_key(h, "i8")), "holds i8")
  expect_error(gguf_get_key(h, 1e6), ".")
  expect_equal(gguf_get_n_tensors(h), 2)
  expect_equal(gguf_get_tensor_ne(h, gguf_find_tensor(h, "a")), c(2, 3, 1, 1))
  expect_equal(ggml_get_array(ggml_get_tensor(f$ctx, "a")), ggml_get_array(a))
  expect_identical(ggml_get_array(ggml_get_tensor(f$ctx, "i")), 1:5)
  gguf_free(h); gguf_free(h)
  expect_error(gguf_get_n_kv(h), "freed")
  # a tensor whose context was freed cannot be written
  g <- gguf_init_empty()
  c2 <- ggml_init(1024^2)
  gguf_add_tensor(g, ggml_set_name(ggml_new_tensor_1d(c2, GGML_TYPE_F32, 3), "t"))
  ggml_free(c2)
  expect_error(gguf_write_to_file(g, path), "freed")
  expect_error(gguf_init_from_file(tempfile()), ".")
})

# ---- the character model (inst/examples/train_austen.R) ----

example_script <- function() {
  p <- system.file("examples", "train_austen.R", package = "ggmlR")
  if (!nzchar(p)) p <- file.path("..", "..", "inst", "examples", "train_austen.R")
  p
}

# The ggmlr repository around these tests, if there is one (not in R CMD check).
repo_root <- function() {
  d <- normalizePath(file.path("..", "..", ".."), mustWork = FALSE)
  if (file.exists(file.path(d, "data", "austen.txt")) && file.exists(file.path(d, "include", "ggml.h"))) d else NULL
}

austen <- function() {
  root <- repo_root()
  if (!is.null(root)) return(readBin(file.path(root, "data", "austen.txt"), "raw", 5e6))
  skip_if_not_installed("janeaustenr")
  charToRaw(paste(janeaustenr::austen_books()$text, collapse = "\n"))
}

tiny_cfg <- list(n_ctx = 16, n_embd = 32, n_head = 2, n_layer = 1)
tiny_opts <- list(batch = 4, warmup = 5, eval_batches = 2, eval_interval = 20, lr = 3e-3)

test_that("the character model trains from R: loss falls, plot, checkpoint, sample", {
  env <- new.env()
  sys.source(example_script(), envir = env)
  old <- ggml_set_n_threads(1)
  on.exit(ggml_set_n_threads(old))
  out <- tempfile("austen")
  r <- NULL
  capture.output(r <- env$train_austen(iters = 40, out_dir = out, cfg = tiny_cfg, opts = tiny_opts, text = austen(),
                                       sample_len = 40, progress = TRUE))
  first <- mean(r$log$train_loss[1:5]); last <- mean(r$log$train_loss[36:40])
  expect_lt(last, first - 0.8)                 # from ~ln(82) = 4.4 to ~3.1
  expect_lt(r$val_loss, r$log$val_loss[1] - 0.8)
  expect_true(file.exists(file.path(out, "loss.png")) || !capabilities("png"))
  expect_equal(nchar(r$sample, "bytes"), 40)
  # the checkpoint loads back to the same validation loss
  ld <- env$gpt_load(r$checkpoint)
  expect_equal(ld$model$step, 40)
  tr <- env$trainer(ld$model, r$corpus, env$train_opts(batch = 4, eval_batches = 2))
  expect_equal(env$trainer_eval(tr), r$val_loss, tolerance = 1e-6)
  # a truncated or corrupted checkpoint is an R error
  bytes <- readBin(r$checkpoint, "raw", file.info(r$checkpoint)$size)
  bad <- tempfile(fileext = ".gguf")
  writeBin(bytes[seq_len(length(bytes) %/% 2)], bad)
  expect_error(env$gpt_load(bad), ".")
  corrupt <- bytes; corrupt[9:16] <- as.raw(255)
  writeBin(corrupt, bad)
  expect_error(env$gpt_load(bad), ".")
  writeBin(bytes[1:3], bad)
  expect_error(env$gpt_load(bad), ".")
  unlink(c(out, bad), recursive = TRUE)
})

test_that("checkpoints interoperate with the C program (train_austen)", {
  root <- repo_root()
  exe <- if (!is.null(root)) file.path(root, "build", "train_austen") else ""
  if (!nzchar(exe) || !file.exists(exe)) skip("the C program is not built at build/train_austen of the repository")
  env <- new.env()
  sys.source(example_script(), envir = env)
  old <- ggml_set_n_threads(1)
  on.exit(ggml_set_n_threads(old))
  text <- file.path(root, "data", "austen.txt")
  cout <- tempfile("cout")
  args <- c("--layers", 1, "--heads", 2, "--embd", 32, "--ctx", 16, "--batch", 4, "--iters", 30, "--warmup", 5,
            "--eval-batches", 2, "--eval-interval", 10, "--no-plot", "--sample-len", 0, "--threads", 1, "--data", text)
  system2(exe, c(args, "--out", cout), stdout = FALSE, stderr = FALSE)
  csv <- utils::read.csv(file.path(cout, "loss.csv"))
  c_val <- utils::tail(csv$val_loss, 1)
  # C's checkpoint in R: the validation loss C wrote in its CSV
  cp <- env$corpus(readBin(text, "raw", file.info(text)$size))
  ld <- env$gpt_load(file.path(cout, "checkpoint.gguf"))
  tr <- env$trainer(ld$model, cp, env$train_opts(batch = 4, eval_batches = 2))
  r_val <- env$trainer_eval(tr)
  expect_equal(r_val, c_val, tolerance = 1e-5)
  # R's checkpoint in C: C resumes from it and evaluates it at the same step
  rpath <- tempfile(fileext = ".gguf")
  env$gpt_save(ld$model, rpath, cp$vocab)
  expect_identical(readBin(rpath, "raw", 1e7), readBin(file.path(cout, "checkpoint.gguf"), "raw", 1e7))
  cout2 <- tempfile("cout")
  system2(exe, c("--resume", rpath, "--iters", 30, "--batch", 4, "--eval-batches", 2, "--no-plot", "--sample-len", 0,
                 "--threads", 1, "--data", text, "--out", cout2), stdout = FALSE, stderr = FALSE)
  expect_equal(utils::tail(utils::read.csv(file.path(cout2, "loss.csv"))$val_loss, 1), r_val, tolerance = 1e-5)
  unlink(c(cout, cout2, rpath), recursive = TRUE)
})

test_that("CRAN ggmlR's calling conventions: ggml_init_auto, ggml_backend_sched_new(list, parallel =)", {
  ctx <- ggml_init_auto(c(100L, 20L), 7L, extra_mb = 0)
  a <- ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 100, 20)
  b <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7)
  expect_equal(ggml_nbytes(a) + ggml_nbytes(b), 4 * 2007)
  expect_error(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4096), "memory|space|enough")  # sized for those two
  ggml_free(ctx)
  expect_error(ggml_init_auto(c(1, 2, 3, 4, 5)), "1 to 4 sizes")
  cpu <- ggml_backend_cpu_init()
  s <- ggml_backend_sched_new(list(cpu), parallel = FALSE)
  expect_equal(ggml_backend_sched_get_n_backends(s), 1L)
  expect_equal(ggml_backend_sched_get_graph_size(ggml_backend_sched_new(cpu, graph_size = 512)), 512L)
  expect_error(ggml_backend_sched_new(list(cpu), parallel = NA), "parallel")
})

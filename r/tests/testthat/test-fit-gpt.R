# What the character GPT needs to train as the C main job does: N(0, std)
# embeddings, an LM head tied to the token embedding, AdamW's betas and a
# weight decay that spares the norms' gains, and batches run in C several
# at a time with R called between the runs.

weights_of <- function(model, i, w) ggml_backend_tensor_get_data(ggml_get_layer(model, index = i)$weights[[w]])

tiny_gpt <- function(tie = TRUE, vocab = 7, dim = 8, t_len = 4, wd = 0, lr = 1e-2, std = 0.02) {
  m <- ggml_model_sequential() |> ggml_layer_embedding(vocab, dim, input_shape = t_len, init_std = std) |>
    ggml_layer_positional_embedding(init_std = std)
  m <- ggml_layer_transformer_block(m, 2, 16, rope = FALSE, bias = FALSE, qkv = "fused")
  compile(ggml_layer_lm_head(m, vocab, bias = FALSE, tie_embedding = tie), optimizer = "adamw", learning_rate = lr,
          beta2 = 0.99, weight_decay = wd)
}

test_that("init_std draws the embeddings N(0, init_std); without it they stay U(-0.05, 0.05)", {
  set.seed(11)
  m <- ggml_model_sequential() |> ggml_layer_embedding(60, 50, input_shape = 3, init_std = 0.3) |> ggml_layer_flatten() |>
    ggml_layer_dense(2) |> compile()
  e <- weights_of(m, 1, "weight")
  expect_length(e, 3000)
  expect_equal(sd(e), 0.3, tolerance = 0.05)     # sd of 3000 draws: within a few %
  expect_gt(max(abs(e)), 0.6)                     # beyond any uniform(-0.05, 0.05)
  m2 <- ggml_model_sequential() |> ggml_layer_embedding(60, 50, input_shape = 3) |> ggml_layer_flatten() |>
    ggml_layer_dense(2) |> compile()
  expect_lte(max(abs(weights_of(m2, 1, "weight"))), 0.05)
  expect_error(ggml_layer_embedding(ggml_model_sequential(), 5, 4, init_std = -1), "init_std")
  expect_error(ggml_layer_positional_embedding(ggml_model_sequential(), init_std = NA), "init_std")
})

test_that("a tied head has no matrix of its own and computes LN(x) E^T with the embedding E", {
  set.seed(5)
  vocab <- 6; dim <- 4; t_len <- 3
  m <- ggml_model_sequential() |> ggml_layer_embedding(vocab, dim, input_shape = t_len, init_std = 0.5) |>
    ggml_layer_lm_head(vocab, bias = FALSE, tie_embedding = TRUE) |> compile()
  expect_named(ggml_get_layer(m, index = 2)$weights, "gamma")
  expect_equal(sum(vapply(m$layers, function(l) length(unlist(lapply(l$weights, ggml_backend_tensor_get_data))), 0)),
               vocab * dim + dim)  # E and the norm's gain
  E <- matrix(weights_of(m, 1, "weight"), dim, vocab)  # column v: the vector of token v
  ids <- c(2, 0, 5)
  x <- E[, ids + 1]
  ln <- apply(x, 2, function(v) (v - mean(v)) / sqrt(mean((v - mean(v))^2) + 1e-5))  # gain 1
  want <- t(ln) %*% E                                                               # [t, vocab]
  got <- ggml_predict(m, matrix(ids, 1))
  expect_equal(dim(got), c(1, t_len, vocab))
  expect_equal(got[1, , ], want, tolerance = 1e-5)
  # a head that does not fit the embedding is refused when compiling
  bad <- ggml_model_sequential() |> ggml_layer_embedding(vocab, dim, input_shape = t_len) |>
    ggml_layer_lm_head(vocab + 1, tie_embedding = TRUE)
  expect_error(compile(bad), "tied lm_head")
  expect_error(ggml_layer_lm_head(ggml_model_sequential(), 5, tie_embedding = NA), "tie_embedding")
})

test_that("training a tied model moves the shared embedding, and generation uses it", {
  set.seed(2)
  m <- tiny_gpt()
  e0 <- weights_of(m, 1, "weight")
  m <- fit(m, rep(0:6, 30), epochs = 1, batch_size = 4, verbose = 0)
  expect_false(isTRUE(all.equal(weights_of(m, 1, "weight"), e0)))
  expect_named(ggml_get_layer(m, index = 4)$weights, "gamma")
  expect_length(generate(m, c(0L, 1L), n = 5, temperature = 0), 5)
})

test_that("compile checks AdamW's betas and weight decay", {
  m <- ggml_model_sequential() |> ggml_layer_dense(2, input_shape = 3)
  expect_error(compile(m, optimizer = "adamw", beta2 = 1), "beta2")
  expect_error(compile(m, optimizer = "adamw", beta1 = NA), "beta1")
  expect_error(compile(m, optimizer = "adamw", weight_decay = -0.1), "weight_decay")
  expect_equal(compile(m, optimizer = "adamw")$compilation$adamw, list(beta1 = 0.9, beta2 = 0.999, wd = 0))
})

test_that("weight decay shrinks matrices and embeddings by lr * wd per step but not the norms' gains", {
  # one AdamW step on the same batch from the same start, with and without
  # decay: the gradient part is the same, so the difference is -lr * wd * w0
  lr <- 0.01; wd <- 0.5
  trained <- function(decay) {
    set.seed(9)
    m <- tiny_gpt(wd = decay, lr = lr)
    w0 <- list(emb = weights_of(m, 1, "weight"), pos = weights_of(m, 2, "weight"), fc = weights_of(m, 3, "ff_w1"),
               gain = weights_of(m, 3, "ln1_gamma"))
    m <- fit(m, 0:4, epochs = 1, batch_size = 1, verbose = 0)  # one window, one step
    list(w0 = w0, w1 = list(emb = weights_of(m, 1, "weight"), pos = weights_of(m, 2, "weight"),
                            fc = weights_of(m, 3, "ff_w1"), gain = weights_of(m, 3, "ln1_gamma")))
  }
  plain <- trained(0); decayed <- trained(wd)
  expect_identical(plain$w0, decayed$w0)
  for (k in c("emb", "pos", "fc")) expect_equal(decayed$w1[[k]] - plain$w1[[k]], -lr * wd * plain$w0[[k]], tolerance = 1e-4)
  expect_equal(decayed$w1$gain, plain$w1$gain)
})

test_that("ggml_opt_epoch runs callback_interval batches a call, the rates of a run read at its start", {
  # out = w x + b, one datapoint a batch, SGD on the squared error:
  # w <- w - lr * 2 (w x + b - y) x, in order (no shuffle in ggml_opt_epoch)
  set.seed(4)
  x <- rnorm(7); y <- 3 * x - 1
  cpu <- ggml_backend_cpu_init()
  sched <- ggml_backend_sched_new(list(cpu), parallel = FALSE)
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  x_in <- ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, 1)
  w <- ggml_set_param(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1))
  b <- ggml_set_param(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1))
  out <- ggml_add(ctx, ggml_mul(ctx, x_in, w), b)
  buf <- ggml_backend_alloc_ctx_tensors(ctx, cpu)
  ggml_backend_tensor_set_data(w, 0); ggml_backend_tensor_set_data(b, 0)
  ds <- ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 1, 1, 7, 1)
  ggml_backend_tensor_set_data(ggml_opt_dataset_data(ds), x)
  ggml_backend_tensor_set_data(ggml_opt_dataset_labels(ds), y)
  fc <- ggml_opt_init_for_fit(sched, ggml_opt_loss_type_mse(), ggml_opt_optimizer_type_sgd(), 1L, ctx, x_in, out)
  ggml_opt_set_lr(fc$lr_ud, sgd_lr = 0.1)
  seen <- integer(0)
  cb <- function(train, opt_ctx, dataset, result, ibatch, ibatch_max, t_start_us) {
    seen <<- c(seen, ibatch)
    if (ibatch == 3) ggml_opt_set_lr(fc$lr_ud, sgd_lr = 0.05)  # for the batches after this run
    expect_equal(ibatch_max, 7)
    NULL
  }
  ggml_opt_epoch(fc$opt_ctx, ds, ggml_opt_result_init(), NULL, -1, cb, NULL, callback_interval = 3)
  expect_identical(as.numeric(seen), c(3, 6, 7))
  wv <- 0; bv <- 0
  for (i in 1:7) {
    lr <- if (i <= 3) 0.1 else 0.05
    r <- wv * x[i] + bv - y[i]
    wv <- wv - lr * 2 * r * x[i]; bv <- bv - lr * 2 * r
  }
  expect_equal(ggml_backend_tensor_get_data(w), wv, tolerance = 1e-5)
  expect_equal(ggml_backend_tensor_get_data(b), bv, tolerance = 1e-5)
  expect_error(ggml_opt_epoch(fc$opt_ctx, ds, callback_interval = 0), "callback_interval")
  ggml_opt_free(fc$opt_ctx)
})

test_that("an interrupt during fit stops it and leaves the model as it was, usable", {
  skip_on_os("windows")  # SIGINT to itself
  set.seed(3)
  m <- tiny_gpt()
  ids <- rep(0:6, 40)
  before <- ggml_predict(m, matrix(0:3, 1))
  interrupt_after_first <- list(on_epoch_end = function(epoch, logs, state) tools::pskill(Sys.getpid(), tools::SIGINT))
  got <- tryCatch(fit(m, ids, epochs = 3, batch_size = 2, verbose = 0, callbacks = list(interrupt_after_first)),
                  interrupt = function(e) "interrupted")
  expect_identical(got, "interrupted")
  expect_equal(ggml_predict(m, matrix(0:3, 1)), before)
  m <- fit(m, ids, epochs = 1, batch_size = 2, verbose = 0)
  expect_false(isTRUE(all.equal(ggml_predict(m, matrix(0:3, 1)), before)))
})

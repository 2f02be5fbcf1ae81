# Transformer layers (R/transformer.R): the attention layer against a plain
# R reference (forward, and its gradients against central differences of
# the reference in double), training a tiny causal model on a repeating
# pattern, generation, persistence and refusals.

# RoPE (normal mode) of a head's vectors z [D, T] at positions 0..T-1:
# pairs (z[2i], z[2i+1]) rotated by t * 10000^(-2i / D).
rope_ref <- function(z) {
  d <- nrow(z)
  for (t in seq_len(ncol(z))) for (i in seq_len(d / 2) - 1) {
    th <- (t - 1) * 10000^(-2 * i / d)
    a <- z[2 * i + 1, t]; b <- z[2 * i + 2, t]
    z[2 * i + 1, t] <- a * cos(th) - b * sin(th)
    z[2 * i + 2, t] <- a * sin(th) + b * cos(th)
  }
  z
}

# Multi-head attention of x [C, T, N] (ggml order) with weights w (R
# matrices in ggml order, [in, out]): out = Wo^T concat_h softmax(...) v.
# A fused wqkv is [Wq Wk Wv] side by side.
mha_ref <- function(w, x, cfg, d) {
  h <- cfg$num_heads; hkv <- cfg$num_kv_heads
  if (!is.null(w$wqkv)) {
    w$wq <- w$wqkv[, seq_len(h * d), drop = FALSE]
    w$wk <- w$wqkv[, h * d + seq_len(hkv * d), drop = FALSE]
    w$wv <- w$wqkv[, (h + hkv) * d + seq_len(hkv * d), drop = FALSE]
  }
  t_len <- dim(x)[2]
  out <- array(0, dim(x))
  for (b in seq_len(dim(x)[3])) {
    xb <- matrix(x[, , b], dim(x)[1])
    q <- t(w$wq) %*% xb; k <- t(w$wk) %*% xb; v <- t(w$wv) %*% xb
    y <- matrix(0, h * d, t_len)
    for (hh in seq_len(h)) {
      g <- (hh - 1) %/% (h / hkv)
      rows_q <- (hh - 1) * d + seq_len(d); rows_k <- g * d + seq_len(d)
      qh <- q[rows_q, , drop = FALSE]; kh <- k[rows_k, , drop = FALSE]
      if (cfg$rope) { qh <- rope_ref(qh); kh <- rope_ref(kh) }
      s <- t(kh) %*% qh / sqrt(d)  # [key, query]
      if (cfg$causal) s[outer(seq_len(t_len), seq_len(t_len), ">")] <- -Inf
      p <- exp(sweep(s, 2, apply(s, 2, max)))
      p <- sweep(p, 2, colSums(p), "/")
      y[rows_q, ] <- v[rows_k, , drop = FALSE] %*% p
    }
    out[, , b] <- t(w$wo) %*% y
  }
  out
}

# The attention layer of config args on input c(t_len, c_dim), its weights
# and x as parameters in ctx (values U(-0.6, 0.6)).
attention_setup <- function(ctx, args, t_len, c_dim, nb) {
  m <- do.call(ggml_layer_multihead_attention, c(list(ggml_model_sequential()), args))
  m$input_shape <- c(t_len, c_dim)
  l <- ggmlR:::nn_infer_shapes(m)$layers[[1]]
  l$weights <- lapply(ggmlR:::.layer_weight_shapes(l), function(s) {
    t <- ggml_new_tensor(ctx, GGML_TYPE_F32, length(s), s)
    ggml_set_f32(t, stats::runif(prod(s), -0.6, 0.6))
    ggml_set_param(t)
  })
  x <- ggml_set_param(tensor_of(ctx, array(stats::runif(c_dim * t_len * nb, -1, 1), c(c_dim, t_len, nb))))
  list(l = l, x = x, y = ggmlR:::.build_transformer(ctx, l, x, ggmlR:::.attention_inputs(ctx, t_len), NULL))
}

test_that("multihead attention computes its formula (GQA, RoPE, causal mask or none, fused QKV)", {
  cases <- list(list(num_heads = 4, key_dim = 4, num_kv_heads = 2, causal = TRUE, rope = TRUE),
                list(num_heads = 2, num_kv_heads = 2, causal = FALSE, rope = FALSE),
                list(num_heads = 4, key_dim = 2, num_kv_heads = 1, causal = TRUE, rope = FALSE),
                list(num_heads = 4, key_dim = 4, num_kv_heads = 2, causal = TRUE, rope = TRUE, qkv = "fused"),
                list(num_heads = 2, num_kv_heads = 1, causal = TRUE, rope = FALSE, qkv = "fused"))
  for (args in cases) {
    set.seed(3)
    ctx <- ggml_init(16 * 1024^2)
    s <- attention_setup(ctx, args, 5, 8, 2)
    got <- compute(ctx, s$y)
    w <- lapply(s$l$weights, ggml_get_array)
    want <- mha_ref(w, ggml_get_array(s$x), s$l$config, ggmlR:::.key_dim(s$l))
    expect_equal(got, as.vector(want), tolerance = 1e-5, info = deparse(args))
    ggml_free(ctx)
  }
})

check_attention_gradients <- function(args) {
  set.seed(5)
  ctx <- ggml_init(32 * 1024^2)
  on.exit(ggml_free(ctx))
  s <- attention_setup(ctx, args, 4, 6, 2)
  r <- array(stats::rnorm(6 * 4 * 2), c(6, 4, 2))
  loss <- ggml_sum(ctx, ggml_mul(ctx, s$y, tensor_of(ctx, r)))
  ggml_set_loss(loss)
  g <- ggml_build_forward_expand_grads(ctx, loss)
  ggml_build_backward_expand(ctx, g)
  ggml_graph_reset(g)
  ggml_graph_compute(ctx, g)
  d <- ggmlR:::.key_dim(s$l)
  w <- lapply(s$l$weights, ggml_get_array)
  x <- ggml_get_array(s$x)
  f <- function(w, x) sum(mha_ref(w, x, s$l$config, d) * r)
  expect_equal(ggml_get_f32(loss), f(w, x), tolerance = 1e-5)
  eps <- 1e-5
  fd <- function(set) vapply(seq_along(set(NULL)), function(i) (set(i, eps) - set(i, -eps)) / (2 * eps), numeric(1))
  for (nm in names(w)) {
    num <- fd(function(i, e) { if (is.null(i)) return(w[[nm]]); w2 <- w; w2[[nm]][i] <- w2[[nm]][i] + e; f(w2, x) })
    expect_equal(ggml_get_f32(ggml_graph_get_grad(g, s$l$weights[[nm]])), num, tolerance = 1e-4, info = nm)
  }
  num <- fd(function(i, e) { if (is.null(i)) return(x); x2 <- x; x2[i] <- x2[i] + e; f(w, x2) })
  expect_equal(ggml_get_f32(ggml_graph_get_grad(g, s$x)), num, tolerance = 1e-4, info = "x")
}

test_that("multihead attention's gradients match central differences", {
  check_attention_gradients(list(num_heads = 4, key_dim = 2, num_kv_heads = 2))
})

test_that("fused QKV attention's gradients (through its views and RoPE) match central differences", {
  check_attention_gradients(list(num_heads = 4, key_dim = 2, num_kv_heads = 2, qkv = "fused"))
})

# 0 1 2 3 4 2 1 repeated: from two tokens of context the next one is
# determined; from one token (the first position of a window) not always, so
# the best mean loss over windows of 8 is (4/7) log(2) / 8 = 0.05, a model of
# the current token alone (no attention) gets (4/7) log(2) = 0.40, and an
# untrained one log(5) = 1.6.
pattern <- rep(c(0L, 1L, 2L, 3L, 4L, 2L, 1L), 60)

tiny_gpt <- function(...) {
  ggml_model_sequential() |>
    ggml_layer_embedding(5, 16, input_shape = 8) |>
    ggml_layer_transformer_block(num_heads = 2, ff_dim = 32, ...) |>
    ggml_layer_lm_head(5) |>
    compile(optimizer = "adam", learning_rate = 1e-2)
}

test_that("a tiny causal transformer learns a repeating pattern and generates it", {
  set.seed(1)
  m <- tiny_gpt()
  m <- fit(m, pattern, epochs = 12, batch_size = 16, stride = 1, verbose = 0, clip_norm = 1,
           lr_schedule = ggml_opt_lr_schedule("warmup_cosine", warmup = 10, decay_steps = 300, min_lr = 1e-3))
  loss <- m$history$train_loss
  expect_true(all(is.finite(loss)))
  expect_gt(loss[1], 0.4)
  expect_lt(tail(loss, 1), 0.15)
  expect_identical(generate(m, c(0L, 1L, 2L), n = 11, temperature = 0), c(3L, 4L, 2L, 1L, 0L, 1L, 2L, 3L, 4L, 2L, 1L))
  a <- generate(m, 0L, n = 20, temperature = 1, top_k = 2, seed = 9)
  expect_identical(a, generate(m, 0L, n = 20, temperature = 1, top_k = 2, seed = 9))
  expect_true(all(a %in% 0:4))
  e <- evaluate(m, pattern[1:201])  # 25 windows of 8 and their next tokens
  expect_equal(e$n_samples, 25)
  expect_lt(e$loss, 0.15)
  expect_gt(e$accuracy, 0.9)
  # predictions: per-position logits of the next token
  p <- predict(m, matrix(pattern[1:8], 1))
  expect_equal(dim(p), c(1L, 8L, 5L))
  expect_identical(apply(p[1, 3:8, ], 1, which.max) - 1L, pattern[4:9])
  # save and load: the same predictions
  path <- tempfile(fileext = ".gguf")
  ggml_save_model(m, path)
  m2 <- ggml_load_model(path)
  expect_equal(predict(m2, matrix(pattern[1:8], 1)), p)
})

test_that("swiglu, rms_norm, dropout, learned positions and windows as a matrix train", {
  set.seed(2)
  m <- ggml_model_sequential() |>
    ggml_layer_embedding(5, 16, input_shape = 8) |>
    ggml_layer_positional_embedding() |>
    ggml_layer_transformer_block(num_heads = 4, num_kv_heads = 2, ff_dim = 24, activation = "swiglu", norm = "rms_norm",
                                 dropout = 0.1, rope = FALSE) |>
    ggml_layer_lm_head(5, norm = "rms_norm") |>
    compile(optimizer = "adam", learning_rate = 1e-2)
  utils::capture.output(s <- summary(m))
  expect_equal(s$params, c(80, 128, 2 * 16 + 16 * 16 + 2 * 16 * 8 + 16 * 16 + 3 * 16 * 24, 16 + 16 * 5))
  windows <- t(vapply(seq_len(300), function(i) pattern[i + 0:8], integer(9)))
  m <- fit(m, windows, epochs = 10, batch_size = 15, validation_split = 0.1, verbose = 0)
  expect_lt(tail(m$history$train_loss, 1), 0.3 * m$history$train_loss[1])
  expect_true(is.finite(tail(m$history$val_loss, 1)))
  # inputs and targets given apart: the same windows
  m <- fit(m, windows[, 1:8], windows[, 2:9], epochs = 1, batch_size = 15, verbose = 0)
  expect_true(is.finite(m$history$train_loss))
})

# The C main job's architecture: learned positions, no biases, fused QKV.
bias_free_gpt <- function() {
  ggml_model_sequential() |>
    ggml_layer_embedding(5, 16, input_shape = 8) |>
    ggml_layer_positional_embedding() |>
    ggml_layer_transformer_block(num_heads = 2, ff_dim = 32, rope = FALSE, bias = FALSE, qkv = "fused") |>
    ggml_layer_lm_head(5, bias = FALSE) |>
    compile(optimizer = "adam", learning_rate = 1e-2)
}

test_that("bias = FALSE leaves out the betas and MLP biases, qkv = 'fused' has one QKV weight", {
  set.seed(4)
  m <- bias_free_gpt()
  block <- m$layers[[3]]
  expect_identical(names(block$weights), c("ln1_gamma", "wqkv", "wo", "ln2_gamma", "ff_w1", "ff_w2"))
  expect_equal(dim(ggml_get_array(block$weights$wqkv)), c(16, 48))
  expect_identical(names(m$layers[[4]]$weights), c("gamma", "weight"))
  utils::capture.output(s <- summary(m))
  expect_equal(s$params, c(5 * 16, 8 * 16, 16 + 16 * 48 + 16 * 16 + 16 + 16 * 32 + 32 * 16, 16 + 16 * 5))
  # zero-initialised biases change nothing: with the same seed (ones and
  # zeros draw no random numbers) both models compute the same logits
  set.seed(4)
  with_bias <- ggml_model_sequential() |> ggml_layer_embedding(5, 16, input_shape = 8) |> ggml_layer_positional_embedding() |>
    ggml_layer_transformer_block(num_heads = 2, ff_dim = 32, rope = FALSE, qkv = "fused") |> ggml_layer_lm_head(5) |> compile()
  x <- matrix(pattern[1:16], 2, byrow = TRUE)
  expect_equal(predict(m, x), predict(with_bias, x), tolerance = 1e-6)
})

test_that("the bias-free fused-QKV model learns the pattern and keeps its options through save and load", {
  set.seed(1)
  m <- fit(bias_free_gpt(), pattern, epochs = 12, batch_size = 16, stride = 1, verbose = 0, clip_norm = 1,
           lr_schedule = ggml_opt_lr_schedule("warmup_cosine", warmup = 10, decay_steps = 300, min_lr = 1e-3))
  expect_lt(tail(m$history$train_loss, 1), 0.15)
  expect_identical(generate(m, c(0L, 1L, 2L), n = 7, temperature = 0), c(3L, 4L, 2L, 1L, 0L, 1L, 2L))
  path <- tempfile(fileext = ".gguf")
  on.exit(unlink(path))
  ggml_save_model(m, path)
  m2 <- ggml_load_model(path)
  expect_identical(m2$layers[[3]]$config$qkv, "fused")
  expect_false(m2$layers[[3]]$config$bias)
  expect_equal(predict(m2, matrix(pattern[1:8], 1)), predict(m, matrix(pattern[1:8], 1)))
})

test_that("generate with a KV cache draws the tokens of the recomputed windows", {
  for (make in list(tiny_gpt, bias_free_gpt)) {  # RoPE and biases; learned positions and fused QKV
    set.seed(6)
    m <- fit(make(), pattern, epochs = 2, batch_size = 16, stride = 1, verbose = 0)
    # 3 + 20 ids pass the 8 positions: the cache serves the first ones, the sliding window the rest
    greedy <- generate(m, c(0L, 1L, 2L), n = 20, temperature = 0, kv_cache = FALSE)
    expect_identical(generate(m, c(0L, 1L, 2L), n = 20, temperature = 0), greedy)
    drawn <- generate(m, 4L, n = 20, temperature = 1.5, seed = 11, kv_cache = FALSE)
    expect_identical(generate(m, 4L, n = 20, temperature = 1.5, seed = 11), drawn)
    expect_identical(generate(m, pattern[1:8], n = 3, temperature = 0), generate(m, pattern[1:8], n = 3, temperature = 0, kv_cache = FALSE))
  }
  expect_error(generate(m, 1L, kv_cache = NA), "kv_cache")
})

test_that("transformer layers refuse bad arguments with messages", {
  s <- ggml_model_sequential()
  expect_error(ggml_layer_multihead_attention(s, 0), "num_heads")
  expect_error(ggml_layer_multihead_attention(s, 4, num_kv_heads = 3), "num_kv_heads")
  expect_error(ggml_layer_multihead_attention(s, 2, key_dim = 3), "even")
  expect_error(ggml_layer_multihead_attention(s, 2, causal = NA), "causal")
  expect_error(ggml_layer_transformer_block(s, 2, 16, activation = "relu"), "activation")
  expect_error(ggml_layer_transformer_block(s, 2, 16, norm = "batch_norm"), "norm")
  expect_error(ggml_layer_transformer_block(s, 2, 16, dropout = 1), "dropout")
  expect_error(ggml_layer_transformer_block(s, 2, 0), "ff_dim")
  expect_error(ggml_layer_lm_head(s, 0), "vocab_size")
  expect_error(ggml_layer_lm_head(s, 5, bias = NA), "bias")
  expect_error(ggml_layer_transformer_block(s, 2, 16, bias = "no"), "bias")
  expect_error(ggml_layer_transformer_block(s, 2, 16, qkv = "joint"), "qkv")
  expect_error(ggml_layer_multihead_attention(s, 2, qkv = c("fused", "separate")), "qkv")
  emb <- ggml_model_sequential() |> ggml_layer_embedding(5, 6, input_shape = 8)
  expect_error(compile(emb |> ggml_layer_multihead_attention(4)), "not a multiple of num_heads")
  expect_error(compile(ggml_model_sequential() |> ggml_layer_dense(4, input_shape = 6) |> ggml_layer_multihead_attention(2)),
               "sequence length, dim")
  expect_error(compile(emb |> ggml_layer_multihead_attention(6)), "even key_dim")
  m <- tiny_gpt()
  expect_error(fit(m, c(pattern, 5L), verbose = 0), "token ids 0..4")
  expect_error(fit(m, c(pattern, NA), verbose = 0), "token ids")
  expect_error(fit(m, pattern[1:8], verbose = 0), "fewer than a window")
  expect_error(fit(m, pattern, pattern, verbose = 0), "'y' must be NULL")
  expect_error(fit(m, matrix(0L, 4, 5), verbose = 0), "windows")
  expect_error(fit(m, pattern, clip_norm = -1, verbose = 0), "clip_norm")
  expect_error(fit(m, pattern, lr_schedule = "cosine", verbose = 0), "lr_schedule")
  expect_error(generate(m, integer(0)), "prompt_ids")
  expect_error(generate(m, 7L), "token ids")
  expect_error(generate(m, 1L, temperature = -1), "temperature")
  expect_error(generate(m, 1L, top_k = 1.5), "top_k")
  expect_error(generate(m, 1L, n = -2), "'n'")
  bidir <- ggml_model_sequential() |> ggml_layer_embedding(5, 8, input_shape = 4) |>
    ggml_layer_multihead_attention(2, causal = FALSE) |> ggml_layer_lm_head(5) |> compile()
  expect_error(generate(bidir, 1L), "causal")
  dense <- ggml_model_sequential() |> ggml_layer_dense(2, input_shape = 3) |> compile(loss = "mse")
  expect_error(generate(dense, 1L), "token ids to per-position logits")
})

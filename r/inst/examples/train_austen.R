# train_austen.R -- the character-level GPT of examples/gpt (gpt.c, train.c,
# train_austen.c) through the R API: the same architecture (token + position
# embeddings, pre-norm blocks of causal attention through ggml_flash_attn_ext
# and a GELU MLP of width 4C, LayerNorm with a gain and no bias, a final norm,
# an LM head tied to the token embedding), the same training (cross-entropy on
# I32 next-character labels, AdamW with linear warmup and cosine decay,
# gradient clipping by global norm, all through ggml-opt), the same batches (same seed, same
# windows of the text) and the same GGUF checkpoints, so that a checkpoint
# written by either program loads in the other.
#
#   Rscript train_austen.R [iters] [out_dir]      train, plot, save, sample
#
# or source() it and call train_austen(...) with other settings.

library(ggmlR)

# ---- the text ----

# Jane Austen's six novels: data/austen.txt of the ggmlr repository, or
# janeaustenr::austen_books() (the same text, lines joined with "\n").
austen_text <- function(path = NULL) {
  if (is.null(path)) {
    for (p in c("data/austen.txt", "../data/austen.txt", "../../data/austen.txt", "../../../data/austen.txt")) {
      if (file.exists(p)) { path <- p; break }
    }
  }
  if (!is.null(path)) return(readBin(path, "raw", file.info(path)$size))
  if (!requireNamespace("janeaustenr", quietly = TRUE)) {
    stop("no data/austen.txt here and the janeaustenr package is not installed", call. = FALSE)
  }
  charToRaw(paste(janeaustenr::austen_books()$text, collapse = "\n"))
}

# The corpus as examples/gpt/data.c makes it: the distinct bytes, sorted, are
# the vocabulary; the first 90% of the characters train, the rest validate.
corpus <- function(bytes, train_frac = 0.9, vocab = NULL) {
  codes <- as.integer(bytes)
  if (is.null(vocab)) vocab <- sort(unique(codes))
  ids <- match(codes, vocab) - 1L
  list(vocab = as.integer(vocab), ids = ids, n = length(ids), n_train = floor(length(ids) * train_frac))
}

# ---- corpus_batch's offsets: splitmix64 in 16-bit limbs (R has no uint64) ----

u64 <- function(hex) {  # "9e3779b97f4a7c15" -> 4 limbs, least significant first
  hex <- formatC(hex, width = 16, flag = "0")
  rev(strtoi(substring(hex, c(1, 5, 9, 13), c(4, 8, 12, 16)), 16L))
}
u64_num <- function(x) {  # a whole number < 2^53 -> limbs
  l <- numeric(4)
  for (k in 1:4) { l[k] <- x %% 65536; x <- x %/% 65536 }
  l
}
u64_carry <- function(s) {
  for (k in 1:3) { s[k + 1] <- s[k + 1] + s[k] %/% 65536; s[k] <- s[k] %% 65536 }
  s[4] <- s[4] %% 65536
  s
}
u64_add <- function(a, b) u64_carry(a + b)
u64_mul <- function(a, b) {
  s <- numeric(4)
  for (i in 1:4) for (j in 1:(5 - i)) s[i + j - 1] <- s[i + j - 1] + a[i] * b[j]
  # each sum < 4 * 2^32: carry limb by limb (exact in doubles)
  u64_carry(s)
}
u64_xor <- function(a, b) as.numeric(bitwXor(as.integer(a), as.integer(b)))
u64_shr <- function(a, n) {
  q <- n %/% 16; r <- n %% 16
  a <- c(a, 0, 0, 0, 0)
  out <- numeric(4)
  for (k in 1:4) out[k] <- (a[k + q] %/% 2^r + (a[k + q + 1] * 2^(16 - r)) %% 65536) %% 65536
  out
}
u64_mod <- function(a, m) {  # a mod m for m < 2^31
  acc <- 0
  for (k in 4:1) acc <- (acc * 65536 + a[k]) %% m
  acc
}
K_GOLDEN <- u64("9e3779b97f4a7c15"); K_INDEX <- u64("632be59bd9b4e019")
K_MIX1 <- u64("bf58476d1ce4e5b9"); K_MIX2 <- u64("94d049bb133111eb")
rng_mix <- function(z) {
  z <- u64_mul(u64_xor(z, u64_shr(z, 30)), K_MIX1)
  z <- u64_mul(u64_xor(z, u64_shr(z, 27)), K_MIX2)
  u64_xor(z, u64_shr(z, 31))
}

# Batch `index` of stream 0 (train) or 1 (validation): B windows of T + 1
# characters at the offsets examples/gpt/data.c gives for (seed, stream, index).
corpus_batch <- function(cp, stream, seed, index, B, T) {
  start <- if (stream == 0) 0 else cp$n_train
  end <- if (stream == 0) cp$n_train else cp$n
  span <- end - start - T
  h <- rng_mix(u64_add(u64_mul(u64_num(seed), K_GOLDEN), u64_num(stream)))
  h <- u64_add(h, u64_mul(u64_num(index), K_INDEX))
  tokens <- targets <- matrix(0L, T, B)
  for (b in seq_len(B)) {
    o <- start + if (span > 0) u64_mod(rng_mix(u64_add(h, u64_num(b - 1))), span) else 0
    tokens[, b] <- cp$ids[o + seq_len(T)]
    targets[, b] <- cp$ids[o + 1 + seq_len(T)]
  }
  list(tokens = tokens, targets = targets)
}

# ---- the model ----

gpt_config <- function(n_vocab, n_ctx = 64, n_embd = 128, n_head = 4, n_layer = 4, n_kv_head = n_head) {
  stopifnot(n_embd %% n_head == 0, n_head %% n_kv_head == 0, n_vocab >= 2, n_vocab <= 256)
  list(n_vocab = n_vocab, n_ctx = n_ctx, n_embd = n_embd, n_head = n_head, n_kv_head = n_kv_head, n_layer = n_layer)
}

LAYER_NAMES <- c("ln1.weight", "attn.qkv.weight", "attn.proj.weight", "ln2.weight", "mlp.fc.weight", "mlp.proj.weight")

# The parameters (names and shapes as gpt.c) and their AdamW moments, in one
# context; weights N(0, 0.02), residual projections N(0, 0.02 / sqrt(2L)),
# gains 1 (nanoGPT's initialisation; R's own random numbers).
gpt_model <- function(cfg, seed = 1337) {
  C <- cfg$n_embd; D <- C / cfg$n_head; E <- C + 2 * cfg$n_kv_head * D
  shapes <- list(token_embd.weight = c(C, cfg$n_vocab), position_embd.weight = c(C, cfg$n_ctx), output_norm.weight = C)
  for (l in seq_len(cfg$n_layer) - 1) {
    s <- list(C, c(C, E), c(C, C), C, c(C, 4 * C), c(4 * C, C))
    names(s) <- paste0("blk.", l, ".", LAYER_NAMES)
    shapes <- c(shapes, s)
  }
  n_floats <- 3 * sum(vapply(shapes, prod, 0))
  ctx <- ggml_init(3 * length(shapes) * (ggml_tensor_overhead() + 64) + 4 * n_floats + 1024)
  set.seed(seed)
  params <- m <- v <- list()
  for (name in names(shapes)) {
    d <- shapes[[name]]
    p <- ggml_new_tensor(ctx, GGML_TYPE_F32, length(d), d)
    ggml_set_name(p, name)
    if (length(d) == 1) ggml_set_f32(p, 1) else {
      std <- if (grepl("proj.weight$", name)) 0.02 / sqrt(2 * cfg$n_layer) else 0.02
      ggml_set_f32(p, rnorm(prod(d), 0, std))
    }
    ggml_set_param(p)
    params[[name]] <- p
    m[[name]] <- ggml_set_name(ggml_dup_tensor(ctx, p), paste0("adam_m.", name))
    v[[name]] <- ggml_set_name(ggml_dup_tensor(ctx, p), paste0("adam_v.", name))
    ggml_set_zero(m[[name]]); ggml_set_zero(v[[name]])
  }
  list(cfg = cfg, ctx = ctx, params = params, m = m, v = v, step = 0)
}

layer_norm <- function(ctx, x, w) ggml_mul(ctx, ggml_norm(ctx, x, 1e-5), w)

# Causal self-attention of x [C, T*B] (gpt.c's attention(), fused path).
attention <- function(ctx, model, l, x, mask, B, T) {
  cfg <- model$cfg
  C <- cfg$n_embd; H <- cfg$n_head; Hkv <- cfg$n_kv_head; D <- C / H; E <- C + 2 * Hkv * D; f <- 4
  p <- function(name) model$params[[paste0("blk.", l, ".", name)]]
  qkv <- ggml_mul_mat(ctx, p("attn.qkv.weight"), x)  # [E, T*B]
  q <- ggml_view_4d(ctx, qkv, D, H, T, B, D * f, E * f, E * T * f, 0)
  k <- ggml_view_4d(ctx, qkv, D, Hkv, T, B, D * f, E * f, E * T * f, C * f)
  v <- ggml_view_4d(ctx, qkv, D, Hkv, T, B, D * f, E * f, E * T * f, (C + Hkv * D) * f)
  q <- ggml_permute(ctx, q, 0, 2, 1, 3)  # [D, T, H, B]
  k <- ggml_permute(ctx, k, 0, 2, 1, 3)
  v <- ggml_permute(ctx, v, 0, 2, 1, 3)
  y <- ggml_flash_attn_ext(ctx, q, k, v, mask, scale = 1 / sqrt(D))  # [D, H, T, B]
  ggml_mul_mat(ctx, p("attn.proj.weight"), ggml_reshape_2d(ctx, y, C, T * B))
}

# The forward pass over B sequences of T tokens (gpt.c's gpt_build); the
# inputs in ctx_io (which may be ctx).
gpt_build <- function(model, ctx_io, ctx, B, T) {
  cfg <- model$cfg; C <- cfg$n_embd; P <- model$params
  tokens <- ggml_set_input(ggml_new_tensor_2d(ctx_io, GGML_TYPE_I32, T, B))
  targets <- ggml_set_input(ggml_new_tensor_1d(ctx_io, GGML_TYPE_I32, T * B))
  mask <- ggml_set_input(ggml_new_tensor_2d(ctx_io, GGML_TYPE_F32, T, T))
  x <- ggml_get_rows(ctx, P$token_embd.weight, ggml_reshape_1d(ctx, tokens, T * B))  # [C, T*B]
  pos <- ggml_view_2d(ctx, P$position_embd.weight, C, T, C * 4, 0)
  x <- ggml_reshape_2d(ctx, ggml_add(ctx, ggml_reshape_3d(ctx, x, C, T, B), pos), C, T * B)
  for (l in seq_len(cfg$n_layer) - 1) {
    p <- function(name) P[[paste0("blk.", l, ".", name)]]
    x <- ggml_add(ctx, x, attention(ctx, model, l, layer_norm(ctx, x, p("ln1.weight")), mask, B, T))
    h <- ggml_gelu(ctx, ggml_mul_mat(ctx, p("mlp.fc.weight"), layer_norm(ctx, x, p("ln2.weight"))))
    x <- ggml_add(ctx, x, ggml_mul_mat(ctx, p("mlp.proj.weight"), h))
  }
  logits <- ggml_mul_mat(ctx, P$token_embd.weight, layer_norm(ctx, x, P$output_norm.weight))  # [V, T*B]
  loss <- ggml_cross_entropy_loss(ctx, logits, targets)
  ggml_set_output(logits)
  ggml_set_loss(loss)
  list(tokens = tokens, targets = targets, mask = mask, logits = logits, loss = loss)
}

# query n sees keys 0..n
set_mask <- function(io) {
  T <- ggml_tensor_shape(io$mask)[1]
  ggml_set_array(io$mask, outer(seq_len(T), seq_len(T), function(j, n) ifelse(j <= n, 0, -Inf)))
}

set_batch <- function(io, batch) {
  ggml_set_array(io$tokens, batch$tokens)
  ggml_set_array(io$targets, as.vector(batch$targets))
}

# ---- training (train.c): one ggml-opt context runs forward + backward,
# the global gradient norm and clipping, and AdamW with nanoGPT's schedule;
# the LayerNorm gains are a parameter group without weight decay ----

train_opts <- function(batch = 12, iters = 2000, lr = 1e-3, min_lr = 1e-4, warmup = 100, decay_iters = iters,
                       beta1 = 0.9, beta2 = 0.99, eps = 1e-8, weight_decay = 0.1, clip = 1.0, seed = 1337,
                       eval_batches = 20, eval_interval = 250) {
  as.list(environment())
}

# nanoGPT's get_lr: linear warmup, cosine decay to min_lr at decay_iters.
train_schedule <- function(o) ggml_opt_lr_schedule("warmup_cosine", o$warmup, o$decay_iters, o$min_lr)
train_lr <- function(o, step) ggml_opt_lr_schedule_lr(train_schedule(o), o$lr, step)

# The optimization context over the model; its AdamW moments start from the
# model's (zero, or a checkpoint's) and take the checkpoint's names.
trainer <- function(model, cp, o) {
  B <- o$batch; T <- model$cfg$n_ctx
  size <- 16384
  backend <- ggml_backend_cpu_init()
  sched <- ggml_backend_sched_new(backend, graph_size = size)
  ctx_io <- ggml_init(4 * ggml_tensor_overhead(), no_alloc = TRUE)
  ctx <- ggml_init(ggml_tensor_overhead() * size, no_alloc = TRUE)
  io <- gpt_build(model, ctx_io, ctx, B, T)
  buffer <- ggml_backend_alloc_ctx_tensors(ctx_io, backend)
  set_mask(io)
  params <- ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_MEAN)
  params$ctx_compute <- ctx
  params$inputs <- io$tokens
  params$outputs <- io$logits
  params$loss <- io$loss
  params$labels <- io$targets
  params$get_opt_pars <- function(ud) {
    list(adamw = list(alpha = o$lr, beta1 = o$beta1, beta2 = o$beta2, eps = o$eps, wd = o$weight_decay), clip_norm = o$clip)
  }
  params$param_groups <- list(ggml_opt_param_group(Filter(function(p) ggml_n_dims(p) < 2, model$params), wd_scale = 0))
  params$lr_schedule <- train_schedule(o)
  opt <- ggml_opt_init(params)
  m <- v <- list()
  for (name in names(model$params)) {
    p <- model$params[[name]]
    m[[name]] <- ggml_set_name(ggml_opt_grad_m(opt, p), paste0("adam_m.", name))
    v[[name]] <- ggml_set_name(ggml_opt_grad_v(opt, p), paste0("adam_v.", name))
    ggml_set_f32(m[[name]], ggml_get_f32(model$m[[name]]))
    ggml_set_f32(v[[name]], ggml_get_f32(model$v[[name]]))
  }
  list(model = model, cp = cp, o = o, backend = backend, sched = sched, ctx = ctx, ctx_io = ctx_io, buffer = buffer,
       io = io, opt = opt, m = m, v = v)
}

trainer_free <- function(tr) {
  ggml_opt_free(tr$opt)
  ggml_backend_sched_free(tr$sched)
  ggml_free(tr$ctx)
  ggml_free(tr$ctx_io)
  invisible(NULL)
}

# One optimisation step: c(loss before the update, gradient norm before clipping).
trainer_step <- function(tr, step) {
  o <- tr$o
  set_batch(tr$io, corpus_batch(tr$cp, 0, o$seed, step, o$batch, tr$model$cfg$n_ctx))
  ggml_opt_set_steps(tr$opt, step)
  ggml_opt_alloc(tr$opt, TRUE)
  st <- suppressWarnings(ggml_opt_eval(tr$opt))
  loss <- ggml_get_f32(ggml_opt_loss(tr$opt))
  norm <- ggml_opt_last_grad_norm(tr$opt)
  if (st != GGML_STATUS_SUCCESS) {
    stop(sprintf("step %d: the loss (%g) or the gradient norm (%g) is not finite; the parameters were not updated", step, loss, norm))
  }
  c(loss = loss, grad_norm = norm)
}

# Mean validation loss over the fixed batches 0..eval_batches-1 of stream 1
# (train.c's trainer_eval: the value train_austen writes in loss.csv).
trainer_eval <- function(tr, n_batches = tr$o$eval_batches) {
  losses <- vapply(seq_len(n_batches) - 1, function(b) {
    set_batch(tr$io, corpus_batch(tr$cp, 1, tr$o$seed, b, tr$o$batch, tr$model$cfg$n_ctx))
    ggml_opt_alloc(tr$opt, FALSE)
    ggml_opt_eval(tr$opt)
    ggml_get_f32(ggml_opt_loss(tr$opt))
  }, 0)
  mean(losses)
}

# ---- checkpoints (gpt.c's gpt_save / gpt_load) ----

ARCH <- "ggmlr-gpt"

# The parameters and, unless m is NULL, the AdamW moments m[[name]], v[[name]]
# (a trainer's tr$m, tr$v; a loaded model's own model$m, model$v).
gpt_save <- function(model, path, vocab, m = model$m, v = model$v) {
  g <- gguf_init_empty()
  on.exit(gguf_free(g))
  cfg <- model$cfg
  gguf_set_val_str(g, "general.architecture", ARCH)
  gguf_set_val_u32(g, paste0(ARCH, ".vocab_size"), cfg$n_vocab)
  gguf_set_val_u32(g, paste0(ARCH, ".context_length"), cfg$n_ctx)
  gguf_set_val_u32(g, paste0(ARCH, ".embedding_length"), cfg$n_embd)
  gguf_set_val_u32(g, paste0(ARCH, ".attention.head_count"), cfg$n_head)
  gguf_set_val_u32(g, paste0(ARCH, ".attention.head_count_kv"), cfg$n_kv_head)
  gguf_set_val_u32(g, paste0(ARCH, ".block_count"), cfg$n_layer)
  gguf_set_arr_data(g, paste0(ARCH, ".vocab"), GGUF_TYPE_UINT8, vocab)
  for (p in model$params) gguf_add_tensor(g, p)
  if (!is.null(m)) {
    gguf_set_val_u64(g, "training.step", model$step)
    for (name in names(model$params)) { gguf_add_tensor(g, m[[name]]); gguf_add_tensor(g, v[[name]]) }
  }
  gguf_write_to_file(g, path)
  invisible(path)
}

# list(model, vocab); an R error for anything that is not a complete ggmlr-gpt checkpoint.
gpt_load <- function(path) {
  f <- gguf_init_from_file(path)
  g <- f$gguf
  on.exit({ gguf_free(g); ggml_free(f$ctx) })
  key <- function(name, type) {
    id <- gguf_find_key(g, name)
    if (id < 0 || gguf_get_kv_type(g, id) != type) stop(sprintf("%s: checkpoint has no %s key %s", path, gguf_type_name(type), name), call. = FALSE)
    id
  }
  if (gguf_get_val_str(g, key("general.architecture", GGUF_TYPE_STRING)) != ARCH) stop(path, " is not a ", ARCH, " checkpoint", call. = FALSE)
  u32 <- function(name) gguf_get_val_u32(g, key(paste0(ARCH, ".", name), GGUF_TYPE_UINT32))
  cfg <- gpt_config(u32("vocab_size"), u32("context_length"), u32("embedding_length"), u32("attention.head_count"),
                    u32("block_count"), u32("attention.head_count_kv"))
  vk <- key(paste0(ARCH, ".vocab"), GGUF_TYPE_ARRAY)
  vocab <- gguf_get_arr_data(g, vk)
  if (gguf_get_arr_type(g, vk) != GGUF_TYPE_UINT8 || length(vocab) != cfg$n_vocab) stop(path, ": bad vocabulary", call. = FALSE)
  model <- gpt_model(cfg)
  copy <- function(dst) {
    src <- ggml_get_tensor(f$ctx, ggml_get_name(dst))
    if (is.null(src) || ggml_tensor_type(src) != GGML_TYPE_F32 || !ggml_are_same_shape(src, dst)) {
      stop(sprintf("%s: tensor %s is missing or has the wrong shape or type", path, ggml_get_name(dst)), call. = FALSE)
    }
    ggml_set_f32(dst, ggml_get_f32(src))
  }
  for (p in model$params) copy(p)
  sk <- gguf_find_key(g, "training.step")
  if (sk >= 0 && gguf_get_kv_type(g, sk) == GGUF_TYPE_UINT64) {
    model$step <- gguf_get_val_u64(g, sk)
    for (name in names(model$params)) { copy(model$m[[name]]); copy(model$v[[name]]) }
  }
  list(model = model, vocab = vocab)
}

# ---- sampling (sample.c): temperature and top-k over the last position ----

gpt_sample <- function(model, vocab, prompt = "\n", n_new = 200, temperature = 0.8, top_k = 40, seed = 1337) {
  T <- model$cfg$n_ctx
  ctx <- ggml_init(ggml_tensor_overhead() * 4096 + ggml_graph_overhead_custom(4096, FALSE), no_alloc = TRUE)
  on.exit(ggml_free(ctx))
  io <- gpt_build(model, ctx, ctx, 1, T)
  graph <- ggml_build_forward_expand(ctx, io$logits, 4096)
  backend <- ggml_backend_cpu_init()
  ggml_backend_alloc_ctx_tensors(ctx, backend)
  ggml_backend_free(backend)
  set_mask(io)
  ggml_set_array(io$targets, integer(T))
  set.seed(seed)
  hist <- match(as.integer(charToRaw(prompt)), vocab) - 1L
  hist <- hist[!is.na(hist)]
  if (length(hist) == 0) hist <- 0L
  out <- raw(0)
  for (s in seq_len(n_new)) {
    window <- utils::tail(hist, T)
    ggml_set_array(io$tokens, matrix(c(window, integer(T - length(window))), T, 1))
    ggml_graph_compute(ctx, graph)
    logits <- ggml_get_array(io$logits)[, length(window)]
    keep <- order(logits, decreasing = TRUE)[seq_len(if (top_k > 0) min(top_k, length(logits)) else length(logits))]
    p <- exp((logits[keep] - max(logits)) / temperature)
    nxt <- keep[sample.int(length(keep), 1, prob = p)] - 1L
    hist <- c(hist, nxt)
    out <- c(out, as.raw(vocab[nxt + 1]))
  }
  rawToChar(out)
}

# ---- the whole job ----

train_austen <- function(iters = 2000, out_dir = "out", cfg = list(), opts = list(), text = NULL,
                         sample_len = 500, plot = TRUE, progress = TRUE, seed = 1337) {
  cp <- corpus(if (is.null(text)) austen_text() else text)
  cfg <- do.call(gpt_config, c(list(n_vocab = length(cp$vocab)), cfg))
  o <- do.call(train_opts, utils::modifyList(list(iters = iters, seed = seed), opts))
  model <- gpt_model(cfg, seed)
  tr <- trainer(model, cp, o)
  on.exit(trainer_free(tr), add = TRUE)
  dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
  n_weights <- sum(vapply(model$params, ggml_nelements, 0))
  cat(sprintf("character-level GPT on %d characters (%d train), vocabulary %d; %d layers, %d heads, embedding %d, context %d, %.2f M parameters\n",
              cp$n, cp$n_train, cfg$n_vocab, cfg$n_layer, cfg$n_head, cfg$n_embd, cfg$n_ctx, n_weights / 1e6))
  log <- data.frame(step = seq_len(o$iters) - 1, train_loss = NA_real_, val_loss = NA_real_, lr = NA_real_, grad_norm = NA_real_)
  bar <- if (progress && o$iters > 0) utils::txtProgressBar(min = 0, max = o$iters, style = 3, width = 30) else NULL
  t0 <- Sys.time()
  for (step in seq_len(o$iters) - 1) {
    if (o$eval_interval > 0 && step %% o$eval_interval == 0) log$val_loss[step + 1] <- trainer_eval(tr)
    r <- trainer_step(tr, step)
    log[step + 1, c("train_loss", "lr", "grad_norm")] <- c(r[["loss"]], train_lr(o, step), r[["grad_norm"]])
    if (!is.null(bar)) {
      utils::setTxtProgressBar(bar, step + 1)
      el <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
      cat(sprintf(" loss %.4f | ETA %s ", r[["loss"]], .hms_eta(el / (step + 1) * (o$iters - step - 1))))
    }
  }
  if (!is.null(bar)) close(bar)
  model$step <- o$iters
  val <- trainer_eval(tr)
  log <- rbind(log, data.frame(step = o$iters, train_loss = NA, val_loss = val, lr = NA, grad_norm = NA))
  cat(sprintf("step %d: validation loss %.4f (%.1f s)\n", o$iters, val, as.numeric(difftime(Sys.time(), t0, units = "secs"))))
  utils::write.csv(log, file.path(out_dir, "loss.csv"), row.names = FALSE, na = "")
  ckpt <- file.path(out_dir, "checkpoint.gguf")
  gpt_save(model, ckpt, cp$vocab, tr$m, tr$v)
  cat("checkpoint:", ckpt, "\n")
  if (plot) plot_loss(log, file.path(out_dir, "loss.png"))
  sample <- if (sample_len > 0) gpt_sample(model, cp$vocab, "\n", sample_len, seed = seed) else ""
  if (sample_len > 0) cat("\nsample (temperature 0.80, top-k 40):\n", sample, "\n", sep = "")
  invisible(list(model = model, trainer = tr, log = log, val_loss = val, checkpoint = ckpt, sample = sample, corpus = cp))
}

.hms_eta <- function(s) sprintf("%d:%02d", as.integer(s %/% 60), as.integer(round(s) %% 60))

# Train (grey: each batch; black: 25-step mean) and validation loss, base graphics.
plot_loss <- function(log, path) {
  grDevices::png(path, width = 900, height = 560, type = if (capabilities("cairo")) "cairo" else "Xlib")
  on.exit(grDevices::dev.off())
  d <- log[!is.na(log$train_loss), ]
  v <- log[!is.na(log$val_loss), ]
  graphics::par(mar = c(4.5, 4.5, 3, 1))
  graphics::plot(d$step, d$train_loss, type = "l", col = "grey55", ylim = range(c(d$train_loss, v$val_loss), finite = TRUE),
                 xlab = "step", ylab = "loss (nats per character)", main = "Character-level GPT on Jane Austen (R)")
  if (nrow(d) >= 25) graphics::lines(d$step, stats::filter(d$train_loss, rep(1 / 25, 25), sides = 1), lwd = 2)
  graphics::lines(v$step, v$val_loss, type = "o", col = "firebrick", pch = 19, lwd = 2)
  graphics::grid()
  graphics::legend("topright", c("train (batch)", "train (25-step mean)", "validation"), col = c("grey55", "black", "firebrick"),
                   lwd = c(1, 2, 2), pch = c(NA, NA, 19), bg = "white")
  invisible(path)
}

if (sys.nframe() == 0L) {
  args <- commandArgs(TRUE)
  train_austen(iters = if (length(args) >= 1) as.numeric(args[1]) else 2000,
               out_dir = if (length(args) >= 2) args[2] else "out")
}

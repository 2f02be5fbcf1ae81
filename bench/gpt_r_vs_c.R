# gpt_r_vs_c.R -- training speed per step of the R layer API's character GPT
# against the C main job (train_austen), same model size, batch and threads.
# R and C runs alternate (a loaded machine slows both alike) and the ratio of
# the medians is reported. R's time per step is the difference of a fit of
# warm + steps steps and one of warm steps, so the set-up (graph build, data
# copy) falls out; C's is train_austen's own time in training steps.
# From the repository's root, after building train_austen and installing r/:
#   Rscript bench/gpt_r_vs_c.R [train_austen binary (build/train_austen)] [steps (200)] [rounds (3)] [threads (2)]
library(ggmlR)
args <- commandArgs(TRUE)
c_binary <- if (length(args) >= 1) args[1] else "build/train_austen"
steps <- if (length(args) >= 2) as.integer(args[2]) else 200L
rounds <- if (length(args) >= 3) as.integer(args[3]) else 3L
warm <- 20L
threads <- if (length(args) >= 4) as.integer(args[4]) else 2L
batch <- 12L; t_len <- 64L

text <- as.integer(readBin("data/austen.txt", "raw", 1e8))
vocab <- sort(unique(text)); ids <- match(text, vocab) - 1L

# The example's model (biases, RoPE, separate Q/K/V), and the C job's
# architecture: learned positions, no biases, one fused QKV product.
models <- list(
  example = function() {
    m <- ggml_model_sequential() |> ggml_layer_embedding(length(vocab), 128, input_shape = t_len)
    for (i in 1:4) m <- ggml_layer_transformer_block(m, num_heads = 4, ff_dim = 512)
    ggml_layer_lm_head(m, length(vocab))
  },
  like_c = function() {
    m <- ggml_model_sequential() |> ggml_layer_embedding(length(vocab), 128, input_shape = t_len) |> ggml_layer_positional_embedding()
    for (i in 1:4) m <- ggml_layer_transformer_block(m, num_heads = 4, ff_dim = 512, rope = FALSE, bias = FALSE, qkv = "fused")
    ggml_layer_lm_head(m, length(vocab), bias = FALSE)
  })

r_fit_seconds <- function(build, n_steps) {
  set.seed(1337)
  m <- compile(build(), optimizer = "adamw", learning_rate = 1e-3)
  ggml_backend_cpu_set_n_threads(m$compilation$backend, threads)
  x <- ids[seq_len(n_steps * batch * t_len + 1)]
  t0 <- proc.time()[["elapsed"]]
  fit(m, x, epochs = 1, batch_size = batch, clip_norm = 1, verbose = 0,
      lr_schedule = ggml_opt_lr_schedule("warmup_cosine", warmup = 100, decay_steps = 2000, min_lr = 1e-4))
  proc.time()[["elapsed"]] - t0
}
r_step_ms <- function(build) 1000 * (r_fit_seconds(build, warm + steps) - r_fit_seconds(build, warm)) / steps

c_step_ms <- function() {
  out <- system2(c_binary, c("--iters", steps, "--threads", threads, "--batch", batch, "--ctx", t_len, "--eval-interval", 0,
                             "--eval-batches", 1, "--no-plot", "--sample-len", 0, "--out", tempdir()), stdout = TRUE)
  tps <- as.numeric(sub(".*: ([0-9.]+) tokens/s in training steps.*", "\\1", grep("tokens/s in training steps", out, value = TRUE)))
  1000 * batch * t_len / tps
}

ms <- matrix(NA_real_, rounds, length(models) + 1, dimnames = list(NULL, c("C", names(models))))
for (r in seq_len(rounds)) {
  ms[r, "C"] <- c_step_ms()
  for (k in names(models)) ms[r, k] <- r_step_ms(models[[k]])
  cat(sprintf("round %d: %s\n", r, paste(sprintf("%s %.1f ms", colnames(ms), ms[r, ]), collapse = ", ")))
}
med <- apply(ms, 2, stats::median)
cat(sprintf("median ms a step: %s\n", paste(sprintf("%s %.1f", names(med), med), collapse = ", ")))
for (k in names(models)) cat(sprintf("R %s / C speed: %.0f %%\n", k, 100 * med[["C"]] / med[[k]]))

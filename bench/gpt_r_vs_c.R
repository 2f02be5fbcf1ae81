# gpt_r_vs_c.R -- training speed per step of the R layer API's character GPT
# against the C main job (train_austen): same model size, batch, context and
# threads. Each side runs in a child process twice, for warm and for warm +
# steps optimizer steps; the difference over steps is its time per step, so
# start-up, data loading, graph building and final evaluation fall out and
# both sides are measured alike. Elapsed time and the children's CPU time
# (user + system) are both reported: on a machine loaded by other work the
# CPU time is the steadier. R and C runs alternate round after round and
# the ratios of the medians are printed.
# From the repository's root, after building train_austen and installing r/:
#   Rscript bench/gpt_r_vs_c.R [train_austen (build/train_austen)] [steps (200)] [rounds (3)] [threads (2)]
args <- commandArgs(TRUE)
c_binary <- if (length(args) >= 1) args[1] else "build/train_austen"
steps <- if (length(args) >= 2) as.integer(args[2]) else 200L
rounds <- if (length(args) >= 3) as.integer(args[3]) else 3L
threads <- if (length(args) >= 4) as.integer(args[4]) else 2L
warm <- 20L

# The R side: the 15-line example's model (the C job's architecture:
# learned positions, no biases, one QKV product), and the layers' defaults
# (RoPE, biases, separate Q/K/V products) for comparison.
r_child <- tempfile(fileext = ".R")
writeLines(c(
  "library(ggmlR)",
  "a <- commandArgs(TRUE); variant <- a[1]; n_steps <- as.integer(a[2]); threads <- as.integer(a[3])",
  "text <- as.integer(readBin('data/austen.txt', 'raw', 1e8))",
  "vocab <- sort(unique(text)); ids <- match(text, vocab) - 1L",
  "set.seed(1337)",
  "m <- ggml_model_sequential() |> ggml_layer_embedding(length(vocab), 128, input_shape = 64)",
  "like_c <- variant == 'like_c'",
  "if (like_c) m <- ggml_layer_positional_embedding(m)",
  "for (i in 1:4) m <- if (like_c) ggml_layer_transformer_block(m, 4, 512, rope = FALSE, bias = FALSE, qkv = 'fused') else",
  "  ggml_layer_transformer_block(m, 4, 512)",
  "m <- compile(ggml_layer_lm_head(m, length(vocab), bias = !like_c), optimizer = 'adamw', learning_rate = 1e-3)",
  "ggml_backend_cpu_set_n_threads(m$compilation$backend, threads)",
  "m <- fit(m, ids[seq_len(n_steps * 12 * 64 + 1)], epochs = 1, batch_size = 12, clip_norm = 1, verbose = 0,",
  "         lr_schedule = ggml_opt_lr_schedule('warmup_cosine', warmup = 100, decay_steps = 2000, min_lr = 1e-4))"), r_child)

# c(elapsed, cpu) seconds of a child command
child_seconds <- function(cmd, cmd_args) {
  t <- system.time(status <- system2(cmd, cmd_args, stdout = FALSE, stderr = FALSE))
  if (status != 0) stop(sprintf("%s %s failed", cmd, paste(cmd_args, collapse = " ")))
  c(elapsed = t[["elapsed"]], cpu = t[["user.child"]] + t[["sys.child"]])
}
run_c <- function(n) {
  child_seconds(c_binary, c("--iters", n, "--threads", threads, "--batch", 12, "--ctx", 64, "--eval-interval", 0,
                            "--eval-batches", 1, "--no-plot", "--sample-len", 0, "--out", tempdir()))
}
run_r <- function(variant) function(n) child_seconds(file.path(R.home("bin"), "Rscript"), c(r_child, variant, n, threads))
step_ms <- function(run) 1000 * (run(warm + steps) - run(warm)) / steps

sides <- list(C = run_c, R = run_r("like_c"), R_defaults = run_r("defaults"))
res <- array(NA_real_, c(rounds, length(sides), 2), list(NULL, names(sides), c("elapsed", "cpu")))
for (r in seq_len(rounds)) {
  for (k in names(sides)) res[r, k, ] <- step_ms(sides[[k]])
  cat(sprintf("round %d, ms a step (elapsed / cpu): %s\n", r,
              paste(sprintf("%s %.1f / %.1f", names(sides), res[r, , "elapsed"], res[r, , "cpu"]), collapse = ", ")))
}
med <- apply(res, c(2, 3), stats::median)
for (k in names(sides)[-1]) {
  cat(sprintf("%s / C speed, %d threads, %d steps: %.0f %% (elapsed), %.0f %% (cpu)\n", k, threads, steps,
              100 * med["C", "elapsed"] / med[k, "elapsed"], 100 * med["C", "cpu"] / med[k, "cpu"]))
}

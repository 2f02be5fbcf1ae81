# The llama-family model (src/glue_llama.c over the library of
# examples/llama): load a GGUF with llama.cpp's keys and tensor names,
# tokenize, compute logits, generate with a KV cache, fine-tune LoRA
# adapters (written in llama.cpp's adapter format), and write a tiny random
# model for examples and tests.

ggml_llama_load <- function(path) {
  llama_check_file(path, "path")
  .Call(C_ggml_llama_load, path.expand(path))
}

# Frees the model now (the garbage collector does it otherwise); a freed
# model is refused by every function, and freeing again is harmless.
ggml_llama_free <- function(model) invisible(.Call(C_ggml_llama_free, model))

ggml_llama_info <- function(model) .Call(C_ggml_llama_info, model)

print.ggml_llama_model <- function(x, ...) {
  info <- tryCatch(ggml_llama_info(x), error = function(e) NULL)
  if (is.null(info)) {
    cat("<ggml_llama_model: freed>\n")
    return(invisible(x))
  }
  cat(sprintf("<ggml_llama_model: %s, %d layers, width %d (feed-forward %d), %d/%d heads, vocabulary %d (%s), context %d>\n",
              info$arch, info$n_layer, info$n_embd, info$n_ff, info$n_head, info$n_head_kv, info$n_vocab,
              info$tokenizer, info$n_ctx))
  cat(sprintf("  types: token_embd %s, blocks %s, output %s%s\n", info$type_embd, info$type_blocks, info$type_output,
              if (info$tied) " (tied to token_embd)" else ""))
  invisible(x)
}

ggml_llama_tokenize <- function(model, text, add_bos = TRUE, special = TRUE) {
  .Call(C_ggml_llama_tokenize, model, text, add_bos, special)
}

ggml_llama_detokenize <- function(model, ids) .Call(C_ggml_llama_detokenize, model, ids)

# Logits [n_vocab, length(ids)]: column t scores the token after ids[1..t].
ggml_llama_logits <- function(model, ids, lora = NULL, threads = 0L) {
  lora <- llama_adapter_path(lora)
  .Call(C_ggml_llama_logits, model, ids, lora, threads)
}

ggml_llama_generate <- function(model, prompt, n_predict = 64L, temperature = 0.8, top_k = 40L, top_p = 0.95,
                                seed = 1, lora = NULL, n_ctx = 0L, threads = 0L) {
  lora <- llama_adapter_path(lora)
  res <- .Call(C_ggml_llama_generate, model, prompt, n_predict, temperature, top_k, top_p, seed, lora, n_ctx, threads)
  text <- res$text
  n_new <- length(res$ids)
  attr(text, "ids") <- res$ids
  attr(text, "n_prompt") <- res$n_prompt
  attr(text, "prompt_tokens_per_second") <- res$n_prompt / res$prompt_seconds
  attr(text, "tokens_per_second") <- if (n_new > 0) n_new / res$generation_seconds else NA_real_
  text
}

# The matrices LoRA can adapt, in the library's order (enum llama_mat) and
# the CLI's short names.
llama_lora_targets <- c("q", "k", "v", "o", "gate", "up", "down")

ggml_llama_finetune <- function(model, data, rank = 8L, alpha = 16, targets = c("q", "v"), iters = 100L, lr = 1e-3,
                                batch = 4L, n_ctx = 64L, accum = 1L, min_lr = 1e-4, warmup = 10L, weight_decay = 0,
                                clip = 1, val_split = 0.1, eval_every = 50L, eval_batches = 8L,
                                format = c("auto", "text", "jsonl"), checkpoint = NULL, save_every = 0L, resume = NULL,
                                adapter_out = tempfile(fileext = ".gguf"), seed = 1, threads = 0L, verbose = FALSE,
                                log_every = 10L, stop_after = 0L) {
  format <- match.arg(format)
  if (!is.character(data) || length(data) < 1 || anyNA(data)) {
    stop("'data' must be a text file name or a character vector of text, without NA", call. = FALSE)
  }
  from_file <- length(data) == 1 && file.exists(data) && !dir.exists(data)
  jsonl <- switch(format, auto = from_file && grepl("\\.jsonl$", data, ignore.case = TRUE), text = FALSE, jsonl = TRUE)
  data_name <- if (from_file) data else "<data>"
  text <- if (from_file) llama_read_text(data) else paste(enc2utf8(data), collapse = "\n")
  if (!is.character(targets) || length(targets) < 1 || anyNA(targets)) {
    stop("'targets' must name matrices: \"all\" or some of ", paste(llama_lora_targets, collapse = ", "), call. = FALSE)
  }
  if (identical(targets, "all")) targets <- llama_lora_targets
  unknown <- setdiff(targets, llama_lora_targets)
  if (length(unknown)) {
    stop("'targets': unknown matrices ", paste(unknown, collapse = ", "), " (use \"all\" or some of ",
         paste(llama_lora_targets, collapse = ", "), ")", call. = FALSE)
  }
  mats <- sum(2^(match(unique(targets), llama_lora_targets) - 1))
  # the order of the enum in glue_llama.c (FT_RANK ... FT_STOP_AFTER)
  options <- c(rank = llama_whole(rank, "rank", 1), alpha = llama_positive(alpha, "alpha"),
               iters = llama_whole(iters, "iters", 1), batch = llama_whole(batch, "batch", 1),
               n_ctx = llama_whole(n_ctx, "n_ctx", 2), accum = llama_whole(accum, "accum", 1),
               lr = llama_positive(lr, "lr"), min_lr = llama_nonnegative(min_lr, "min_lr"),
               warmup = llama_whole(warmup, "warmup", 0), weight_decay = llama_nonnegative(weight_decay, "weight_decay"),
               clip = llama_nonnegative(clip, "clip"), val_split = llama_fraction(val_split, "val_split"),
               eval_every = llama_whole(eval_every, "eval_every", 1), eval_batches = llama_whole(eval_batches, "eval_batches", 1),
               save_every = llama_whole(save_every, "save_every", 0), seed = llama_whole(seed, "seed", 0),
               threads = llama_whole(threads, "threads", 0), log_every = llama_whole(log_every, "log_every", 1),
               stop_after = llama_whole(stop_after, "stop_after", 0))
  if (!is.null(resume)) llama_check_file(resume, "resume")
  llama_check_path(adapter_out, "adapter_out")
  if (!is.null(checkpoint)) llama_check_path(checkpoint, "checkpoint")
  expand <- function(p) if (is.null(p)) NULL else path.expand(p)
  history <- .Call(C_ggml_llama_finetune, model, text, jsonl, data_name, as.integer(mats), options,
                   expand(checkpoint), expand(resume), path.expand(adapter_out), isTRUE(verbose))
  history <- as.data.frame(history)
  attr(history, "adapter") <- adapter_out
  class(history) <- c("ggml_llama_history", "data.frame")
  history
}

plot.ggml_llama_history <- function(x, ...) {
  graphics::plot(x$step, x$loss, type = "l", xlab = "step", ylab = "loss (nats)", ...)
  val <- !is.na(x$val_loss)
  if (any(val)) {
    graphics::lines(x$step[val], x$val_loss[val], type = "b", lty = 2, pch = 19)
    graphics::legend("topright", legend = c("training", "validation"), lty = c(1, 2), pch = c(NA, 19), bty = "n")
  }
  invisible(x)
}

ggml_llama_tiny <- function(path, arch = "llama", type = "f32", n_embd = 256L, n_ff = 512L, n_layer = 4L, n_head = 4L,
                            n_head_kv = 2L, n_ctx = 256L, tied = FALSE, seed = 1) {
  llama_check_path(path, "path")
  sizes <- c(n_embd = n_embd, n_ff = n_ff, n_layer = n_layer, n_head = n_head, n_head_kv = n_head_kv, n_ctx = n_ctx)
  if (!is.numeric(sizes) || length(sizes) != 6) {
    stop("n_embd, n_ff, n_layer, n_head, n_head_kv and n_ctx must each be one number", call. = FALSE)
  }
  .Call(C_ggml_llama_tiny, path.expand(path), arch, type, sizes, tied, seed)
  invisible(path)
}

# ---- argument checks ----

llama_check_path <- function(path, arg) {
  if (!is.character(path) || length(path) != 1 || is.na(path) || !nzchar(path)) {
    stop(sprintf("'%s' must be a file name (one non-empty string, not NA)", arg), call. = FALSE)
  }
}

llama_check_file <- function(path, arg) {
  llama_check_path(path, arg)
  if (!file.exists(path) || dir.exists(path)) stop(sprintf("'%s': no file %s", arg, path), call. = FALSE)
}

# An adapter: a file name, or a fine-tuning history (the adapter it wrote).
llama_adapter_path <- function(lora) {
  if (is.null(lora)) return(NULL)
  if (inherits(lora, "ggml_llama_history")) lora <- attr(lora, "adapter")
  llama_check_file(lora, "lora")
  path.expand(lora)
}

# The whole file as one UTF-8 string: it must be non-empty text (no NUL bytes).
llama_read_text <- function(path) {
  bytes <- readBin(path, "raw", file.info(path)$size)
  if (length(bytes) == 0) stop(sprintf("the data file %s is empty", path), call. = FALSE)
  if (any(bytes == as.raw(0))) stop(sprintf("the data file %s is not text (it holds NUL bytes)", path), call. = FALSE)
  text <- rawToChar(bytes)
  if (!validUTF8(text)) stop(sprintf("the data file %s is not UTF-8 text", path), call. = FALSE)
  Encoding(text) <- "UTF-8"
  text
}

llama_number <- function(x, arg) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || !is.finite(x)) {
    stop(sprintf("'%s' must be one finite number", arg), call. = FALSE)
  }
  as.double(x)
}

llama_whole <- function(x, arg, min) {
  x <- llama_number(x, arg)
  if (x != floor(x) || x < min || x > 2^53) stop(sprintf("'%s' must be a whole number >= %d", arg, min), call. = FALSE)
  x
}

llama_positive <- function(x, arg) {
  x <- llama_number(x, arg)
  if (x <= 0) stop(sprintf("'%s' must be > 0", arg), call. = FALSE)
  x
}

llama_nonnegative <- function(x, arg) {
  x <- llama_number(x, arg)
  if (x < 0) stop(sprintf("'%s' must be >= 0", arg), call. = FALSE)
  x
}

llama_fraction <- function(x, arg) {
  x <- llama_number(x, arg)
  if (x <= 0 || x >= 1) stop(sprintf("'%s' must be in (0, 1)", arg), call. = FALSE)
  x
}

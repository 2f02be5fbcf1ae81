# The llama-family model from R (R/llama.R, src/glue_llama.c), on tiny
# generated models: 2 layers, width 64, 4/2 heads.

tiny_model_file <- function(...) {
  path <- tempfile(fileext = ".gguf")
  ggml_llama_tiny(path, n_embd = 64, n_ff = 128, n_layer = 2, n_head = 4, n_head_kv = 2, n_ctx = 128, ...)
  path
}

# Text long enough for 32-token training sequences in both splits.
training_text <- paste(rep("the cat sat on the mat and the dog ate the hat. ", 60), collapse = "")

# The 0-based id of the largest logit of each column.
argmax_ids <- function(logits) apply(logits, 2, which.max) - 1L

test_that("a tiny model loads with the hyper-parameters it was written with", {
  path <- tiny_model_file(seed = 3)
  on.exit(unlink(path))
  m <- ggml_llama_load(path)
  info <- ggml_llama_info(m)
  expect_identical(info$arch, "llama")
  expect_identical(c(info$n_layer, info$n_embd, info$n_ff, info$n_head, info$n_head_kv, info$n_ctx),
                   c(2L, 64L, 128L, 4L, 2L, 128L))
  # tiny.c's vocabulary: 3 control tokens, 256 bytes, U+2581 and a..z, 20 merges
  expect_identical(info$n_vocab, 3L + 256L + 27L + 20L)
  expect_identical(c(info$type_embd, info$type_blocks), c("f32", "f32"))
  expect_false(info$tied)
  expect_identical(info$tokenizer, "llama")
  printed <- capture.output(print(m))
  expect_match(printed[1], "llama, 2 layers, width 64 (feed-forward 128), 4/2 heads, vocabulary 306", fixed = TRUE)
  expect_match(printed[2], "blocks f32", fixed = TRUE)
})

test_that("qwen2, tied and quantized tiny models load", {
  path <- tiny_model_file(arch = "qwen2", type = "q8_0", tied = TRUE)
  on.exit(unlink(path))
  info <- ggml_llama_info(ggml_llama_load(path))
  expect_identical(info$arch, "qwen2")
  expect_identical(info$type_blocks, "q8_0")
  expect_true(info$tied)
  expect_identical(info$type_output, info$type_embd)
})

test_that("tokenization follows the tiny vocabulary's merges, and back", {
  path <- tiny_model_file()
  on.exit(unlink(path))
  m <- ggml_llama_load(path)
  # ids: <s> = 1; U+2581 = 259, a..z = 260..285; merges from 286 in tiny.c's
  # order, "U+2581 a" the 9th (294). " abc" (the space prefix) -> [U+2581 a] b c
  expect_identical(ggml_llama_tokenize(m, "abc"), c(1L, 294L, 261L, 262L))
  expect_identical(ggml_llama_tokenize(m, "abc", add_bos = FALSE), c(294L, 261L, 262L))
  # "he" is the 4th merge (289); an upper-case letter is its byte token <0x48> = 3 + 0x48
  expect_identical(ggml_llama_tokenize(m, "He he", add_bos = FALSE), c(259L, 3L + 0x48L, 264L, 259L, 289L))
  expect_identical(ggml_llama_detokenize(m, c(294L, 261L, 262L)), " abc")
  expect_identical(ggml_llama_detokenize(m, ggml_llama_tokenize(m, "the Cat, 42!", add_bos = FALSE)), " the Cat, 42!")
  expect_identical(ggml_llama_detokenize(m, integer()), "")
})

test_that("greedy generation is the argmax of the logits, token by token", {
  path <- tiny_model_file(seed = 5)
  on.exit(unlink(path))
  m <- ggml_llama_load(path)
  prompt <- "it is a truth"
  out <- ggml_llama_generate(m, prompt, n_predict = 8, temperature = 0)
  new_ids <- attr(out, "ids")
  prompt_ids <- ggml_llama_tokenize(m, prompt)
  expect_identical(attr(out, "n_prompt"), length(prompt_ids))
  expect_true(length(new_ids) >= 1)
  # the logits of the whole sequence in one batch (no cache): position t's
  # argmax is the token generated after it
  seq <- c(prompt_ids, new_ids)
  logits <- ggml_llama_logits(m, seq)
  expect_identical(dim(logits), c(306L, length(seq)))
  n_p <- length(prompt_ids)
  expect_identical(argmax_ids(logits[, n_p - 1 + seq_along(new_ids), drop = FALSE]), new_ids)
  expect_identical(as.character(out), ggml_llama_detokenize(m, new_ids))
  expect_true(attr(out, "tokens_per_second") > 0)
  # top_k = 1 keeps the most likely token only: greedy whatever the temperature
  expect_identical(attr(ggml_llama_generate(m, prompt, n_predict = 8, temperature = 1.5, top_k = 1, seed = 9), "ids"), new_ids)
})

test_that("logits are causal: a prefix's logits are the longer sequence's first columns", {
  path <- tiny_model_file()
  on.exit(unlink(path))
  m <- ggml_llama_load(path)
  ids <- ggml_llama_tokenize(m, "one two three four")
  full <- ggml_llama_logits(m, ids)
  prefix <- ggml_llama_logits(m, ids[1:3])
  expect_equal(prefix, full[, 1:3], tolerance = 1e-5)
  expect_false(isTRUE(all.equal(full[, 3], full[, 4])))
})

test_that("sampled generation is deterministic for a seed", {
  path <- tiny_model_file()
  on.exit(unlink(path))
  m <- ggml_llama_load(path)
  a <- ggml_llama_generate(m, "the", n_predict = 20, temperature = 1, top_k = 0, top_p = 1, seed = 7)
  b <- ggml_llama_generate(m, "the", n_predict = 20, temperature = 1, top_k = 0, top_p = 1, seed = 7)
  c <- ggml_llama_generate(m, "the", n_predict = 20, temperature = 1, top_k = 0, top_p = 1, seed = 8)
  expect_identical(attr(a, "ids"), attr(b, "ids"))
  expect_identical(as.character(a), as.character(b))
  expect_false(identical(attr(a, "ids"), attr(c, "ids")))
  expect_identical(attr(ggml_llama_generate(m, "the", n_predict = 0), "ids"), integer())
})

test_that("LoRA fine-tuning lowers the loss and its adapter changes the logits", {
  path <- tiny_model_file(seed = 2)
  adapter <- tempfile(fileext = ".gguf")
  on.exit(unlink(c(path, adapter)))
  m <- ggml_llama_load(path)
  h <- ggml_llama_finetune(m, training_text, iters = 24, lr = 5e-3, warmup = 2, n_ctx = 32, eval_every = 12,
                           adapter_out = adapter, threads = 2)
  expect_s3_class(h, "data.frame")
  expect_identical(h$step, 1:24)
  expect_identical(which(!is.na(h$val_loss)), c(12L, 24L))
  # a random model starts near log(306) nats; the repeated sentence is learnt
  expect_true(h$loss[1] > log(306) - 1)
  expect_true(mean(h$loss[20:24]) < h$loss[1] - 1)
  expect_true(h$val_loss[24] < h$val_loss[12])
  expect_identical(attr(h, "adapter"), adapter)
  expect_true(file.exists(adapter))
  ids <- ggml_llama_tokenize(m, "the cat sat")
  base <- ggml_llama_logits(m, ids)
  tuned <- ggml_llama_logits(m, ids, lora = adapter)
  expect_false(isTRUE(all.equal(base, tuned)))
  expect_identical(ggml_llama_logits(m, ids, lora = h), tuned)
  # the adapter, reloaded with the model, still gives the tuned logits
  m2 <- ggml_llama_load(path)
  expect_identical(ggml_llama_logits(m2, ids, lora = adapter), tuned)
  prompt_ids <- ggml_llama_tokenize(m, "the cat")
  new_ids <- attr(ggml_llama_generate(m, "the cat", n_predict = 4, temperature = 0, lora = adapter), "ids")
  logits <- ggml_llama_logits(m, c(prompt_ids, new_ids), lora = adapter)
  expect_identical(argmax_ids(logits[, length(prompt_ids) - 1 + seq_along(new_ids), drop = FALSE]), new_ids)
})

test_that("an interrupted run resumed from its checkpoint is the uninterrupted run, bit for bit", {
  path <- tiny_model_file()
  files <- replicate(4, tempfile(fileext = ".gguf"))
  on.exit(unlink(c(path, files)))
  m <- ggml_llama_load(path)
  run <- function(...) ggml_llama_finetune(m, training_text, iters = 6, lr = 5e-3, warmup = 2, n_ctx = 32, threads = 2, ...)
  whole <- run(adapter_out = files[1])
  first <- run(adapter_out = files[2], checkpoint = files[3], stop_after = 3)
  expect_identical(first$step, 1:3)
  rest <- run(adapter_out = files[4], resume = files[3])
  expect_identical(rest$step, 4:6)
  expect_identical(c(first$loss, rest$loss), whole$loss)
  expect_identical(c(first$grad_norm, rest$grad_norm), whole$grad_norm)
  expect_identical(unname(tools::md5sum(files[4])), unname(tools::md5sum(files[1])))
  expect_error(ggml_llama_finetune(m, training_text, iters = 2, n_ctx = 32, resume = files[3]), "at step 3, past iters")
})

test_that("prompt/response JSONL data trains, and a bad line is named", {
  path <- tiny_model_file()
  pairs <- tempfile(fileext = ".jsonl")
  on.exit(unlink(c(path, pairs)))
  m <- ggml_llama_load(path)
  words <- c("pen", "sun", "cat", "dog", "owl", "map", "cup", "hat")
  writeLines(sprintf('{"prompt": "reverse: %s\\n", "response": "%s"}', words,
                     vapply(strsplit(words, ""), function(ch) paste(rev(ch), collapse = ""), "")), pairs)
  h <- ggml_llama_finetune(m, pairs, iters = 2, n_ctx = 16, batch = 2, val_split = 0.25, threads = 2)
  expect_true(all(is.finite(h$loss)))
  writeLines(c('{"prompt": "a", "response": "b"}', '{"prompt": 1}'), pairs)
  expect_error(ggml_llama_finetune(m, pairs, iters = 1), ":2: column")
})

# The repository's ggmlr-llama program (the CMake build's), or a skip.
llama_cli <- function() {
  exe <- normalizePath(file.path("..", "..", "..", "build", "ggmlr-llama"), mustWork = FALSE)
  if (!file.exists(exe)) skip("the C program is not built at build/ggmlr-llama of the repository")
  exe
}

test_that("the model, the generated text and the adapter are the ggmlr-llama program's, byte for byte", {
  exe <- llama_cli()
  dir <- tempfile()
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  at <- function(f) file.path(dir, f)
  sizes <- c("--embd", "64", "--ff", "128", "--layers", "2", "--ctx", "128", "--seed", "3")
  expect_identical(system2(exe, c("tiny", "-o", at("cli.gguf"), sizes), stdout = FALSE), 0L)
  tiny_model <- ggml_llama_tiny(at("r.gguf"), n_embd = 64, n_ff = 128, n_layer = 2, n_ctx = 128, seed = 3)
  expect_identical(unname(tools::md5sum(at("r.gguf"))), unname(tools::md5sum(at("cli.gguf"))))
  m <- ggml_llama_load(tiny_model)
  # generate prints the prompt, the continuation and a newline; an R string
  # holds no NUL byte, so the R text has the NUL tokens' bytes dropped
  cli_text <- function(args) {
    system2(exe, c("generate", "-m", at("cli.gguf"), "-p", shQuote("It is a truth"), "-t", "2", args),
            stdout = at("out.txt"), stderr = FALSE)
    bytes <- readBin(at("out.txt"), "raw", 4096)
    bytes[bytes != as.raw(0)]
  }
  r_text <- function(...) charToRaw(paste0("It is a truth", ggml_llama_generate(m, "It is a truth", threads = 2, ...), "\n"))
  expect_identical(r_text(n_predict = 24), cli_text(c("-n", "24")))
  expect_identical(r_text(n_predict = 16, temperature = 0), cli_text(c("-n", "16", "--temp", "0")))
  expect_identical(r_text(n_predict = 16, temperature = 1.2, top_k = 5, top_p = 0.9, seed = 11),
                   cli_text(c("-n", "16", "--temp", "1.2", "--top-k", "5", "--top-p", "0.9", "--seed", "11")))
  writeLines(training_text, at("data.txt"))
  expect_identical(system2(exe, c("finetune", "-m", at("cli.gguf"), "--data", at("data.txt"), "-o", at("cli-lora.gguf"),
                                  "--iters", "3", "--ctx", "32", "--targets", "all", "--rank", "4", "-t", "2"),
                           stderr = FALSE), 0L)
  ggml_llama_finetune(m, at("data.txt"), iters = 3, n_ctx = 32, targets = "all", rank = 4, adapter_out = at("r-lora.gguf"),
                      threads = 2)
  expect_identical(unname(tools::md5sum(at("r-lora.gguf"))), unname(tools::md5sum(at("cli-lora.gguf"))))
})

test_that("hostile input is refused with R errors", {
  path <- tiny_model_file()
  other <- tiny_model_file(seed = 4)
  wide <- tempfile(fileext = ".gguf")
  ggml_llama_tiny(wide, n_embd = 32, n_ff = 64, n_layer = 2, n_head = 2, n_head_kv = 1, n_ctx = 64)
  adapter_wide <- tempfile(fileext = ".gguf")
  junk <- tempfile()
  writeLines("not a model", junk)
  on.exit(unlink(c(path, other, wide, adapter_wide, junk)))
  expect_error(ggml_llama_load(tempfile()), "no file")
  expect_error(ggml_llama_load(junk), "not a GGUF file")
  expect_error(ggml_llama_load(NA_character_), "file name")
  expect_error(ggml_llama_load(42), "file name")
  m <- ggml_llama_load(path)
  expect_error(ggml_llama_tokenize(m, NA_character_), "single string")
  expect_error(ggml_llama_tokenize(m, "a", add_bos = NA), "TRUE or FALSE")
  expect_error(ggml_llama_detokenize(m, c(1, 306)), "not a token id")
  expect_error(ggml_llama_detokenize(m, c(1, NA)), "not a token id")
  expect_error(ggml_llama_detokenize(m, 1.5), "not a token id")
  expect_error(ggml_llama_detokenize(m, "a"), "numeric")
  expect_error(ggml_llama_logits(m, integer()), "1 to 128 tokens")
  expect_error(ggml_llama_generate(m, "x", n_predict = -1), "n_predict")
  expect_error(ggml_llama_generate(m, "x", top_p = 0), "top_p")
  expect_error(ggml_llama_generate(m, "x", temperature = NA), "temperature")
  expect_error(ggml_llama_generate(m, "x", seed = -1), "seed")
  expect_error(ggml_llama_generate(m, "x", n_predict = 200), "do not fit the context")
  expect_error(ggml_llama_generate(m, "x", lora = other), "general.type is not 'adapter'")
  # an adapter trained on a model of other shapes is refused, not applied
  ggml_llama_finetune(ggml_llama_load(wide), training_text, iters = 1, n_ctx = 16, adapter_out = adapter_wide)
  expect_error(ggml_llama_generate(m, "x", lora = adapter_wide), "not \\[64, 8\\]")
  expect_error(ggml_llama_finetune(m, "too short", iters = 1), "text is too short")
  expect_error(ggml_llama_finetune(m, c("a", NA)), "without NA")
  expect_error(ggml_llama_finetune(m, training_text, targets = "qq"), "unknown matrices qq")
  expect_error(ggml_llama_finetune(m, training_text, rank = 0), "'rank'")
  expect_error(ggml_llama_finetune(m, training_text, val_split = 1), "val_split")
  expect_error(ggml_llama_finetune(m, training_text, n_ctx = 1000), "context is 128")
  empty <- tempfile(fileext = ".txt")
  file.create(empty)
  on.exit(unlink(empty), add = TRUE)
  expect_error(ggml_llama_finetune(m, empty), "is empty")
  expect_error(ggml_llama_tiny(tempfile(), type = "q9_9"), "not a tensor type")
  expect_error(ggml_llama_tiny(tempfile(), n_embd = 30, n_head = 4), "multiple")
  expect_error(ggml_llama_tiny(tempfile(), arch = "gpt2"), "llama")
  expect_error(ggml_llama_tiny(tempfile(), n_layer = NA), "n_layer")
  expect_error(ggml_llama_info(ggml_backend_cpu_init()), "ggml_llama_model")
  ggml_llama_free(m)
  ggml_llama_free(m)
  expect_error(ggml_llama_generate(m, "x"), "has been freed")
  expect_error(ggml_llama_tokenize(m, "x"), "has been freed")
  expect_output(print(m), "freed")
})

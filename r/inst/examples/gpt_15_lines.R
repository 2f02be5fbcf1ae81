# gpt_15_lines.R -- the character-level GPT of train_austen.R on the layer API:
# token and learned position embeddings, 4 pre-norm transformer blocks without
# biases (causal attention from one fused QKV product through the fused
# flash-attention kernel and its backward, a GELU MLP), an LM head tied to the
# token embedding, N(0, 0.02) weights, as the C main job's model; next-character
# cross-entropy, AdamW (betas 0.9/0.99, weight decay 0.1 except on the norms'
# gains) with warmup + cosine decay and gradient clipping; the training loop runs in C (ggml-opt). 2000 steps of 12
# windows of 64 characters, as the C main job; from the repository's root:
# Rscript r/inst/examples/gpt_15_lines.R
library(ggmlR)
text <- if (file.exists("data/austen.txt")) readBin("data/austen.txt", "raw", 1e8) else   # the repository's copy, or
  charToRaw(paste(janeaustenr::austen_books()$text, collapse = "\n"))                     # the same text from janeaustenr
text <- as.integer(text)
vocab <- sort(unique(text)); ids <- match(text, vocab) - 1L; n_train <- floor(0.9 * length(ids))
set.seed(1337)
gpt <- ggml_model_sequential() |> ggml_layer_embedding(length(vocab), 128, input_shape = 64, init_std = 0.02) |>
  ggml_layer_positional_embedding(init_std = 0.02)
for (i in 1:4) gpt <- ggml_layer_transformer_block(gpt, num_heads = 4, ff_dim = 512, rope = FALSE, bias = FALSE, qkv = "fused")
gpt <- compile(ggml_layer_lm_head(gpt, length(vocab), bias = FALSE, tie_embedding = TRUE), optimizer = "adamw",
               learning_rate = 1e-3, beta1 = 0.9, beta2 = 0.99, weight_decay = 0.1)
stride <- floor(n_train / (2000 * 12))  # one epoch of 2000 batches of 12 windows
gpt <- fit(gpt, ids[1:n_train], epochs = 1, batch_size = 12, stride = stride, clip_norm = 1,
           validation_data = list(ids[-(1:n_train)]),
           lr_schedule = ggml_opt_lr_schedule("warmup_cosine", warmup = 100, decay_steps = 2000, min_lr = 1e-4))
cat(sprintf("validation loss %.3f\n", gpt$history$val_loss))
prompt <- match(as.integer(charToRaw("It is a truth universally")), vocab) - 1L
cat(rawToChar(as.raw(vocab[1 + generate(gpt, prompt, n = 300, temperature = 0.8, top_k = 20, seed = 1)])), "\n")
ggml_save_model(gpt, "austen_gpt.gguf")

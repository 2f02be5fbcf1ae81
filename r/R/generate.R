# Sampling from a causal sequence model: the forward graph of one window is
# built once and recomputed per token (no KV cache). The window is the last
# T ids, padded at the end with id 0 when shorter: with the causal mask the
# padding does not reach the position whose logits are read.

generate <- function(model, ...) UseMethod("generate")

generate.ggml_sequential_model <- function(model, prompt_ids, n = 100, temperature = 1, top_k = 0, seed = NULL, ...) {
  ggml_generate(model, prompt_ids, n = n, temperature = temperature, top_k = top_k, seed = seed, ...)
}

# The next token of logits z: argmax at temperature 0, else a draw from
# softmax(z / temperature) restricted to the top_k largest (0: all).
.sample_token <- function(z, temperature, top_k) {
  if (temperature == 0) return(which.max(z) - 1L)
  if (top_k > 0 && top_k < length(z)) z[z < sort(z, decreasing = TRUE)[top_k]] <- -Inf
  p <- exp((z - max(z)) / temperature)
  sample.int(length(z), 1L, prob = p / sum(p)) - 1L
}

ggml_generate <- function(model, prompt_ids, n = 100, temperature = 1, top_k = 0, seed = NULL, ...) {
  .no_extra_args(...)
  .check_compiled(model)
  if (!.is_sequence_model(model)) stop("generate needs a model from token ids to per-position logits (c(T, vocab))", call. = FALSE)
  att <- Filter(function(l) l$type %in% c("multihead_attention", "transformer_block"), model$layers)
  if (any(!vapply(att, function(l) l$config$causal, logical(1)))) stop("generate needs causal attention layers", call. = FALSE)
  if (length(prompt_ids) == 0) stop("'prompt_ids' must hold at least one token id", call. = FALSE)
  ids <- as.integer(.check_ids(prompt_ids, model$layers[[1]]$config$vocab_size, "prompt_ids"))
  n <- if (identical(n, 0) || identical(n, 0L)) 0L else .check_count(n, "n")
  if (!is.numeric(temperature) || length(temperature) != 1 || is.na(temperature) || temperature < 0) {
    stop("'temperature' must be a number >= 0 (0: the most likely token)", call. = FALSE)
  }
  if (!is.numeric(top_k) || length(top_k) != 1 || is.na(top_k) || top_k < 0 || top_k != floor(top_k)) {
    stop("'top_k' must be a whole number >= 0 (0: every token)", call. = FALSE)
  }
  if (!is.null(seed)) {  # a draw of its own: the caller's RNG state is put back
    if (!is.numeric(seed) || length(seed) != 1 || is.na(seed)) stop("'seed' must be NULL or a number", call. = FALSE)
    had <- exists(".Random.seed", envir = globalenv(), inherits = FALSE)
    if (had) saved <- get(".Random.seed", envir = globalenv())
    on.exit(if (had) assign(".Random.seed", saved, envir = globalenv()) else rm(".Random.seed", envir = globalenv()))
    set.seed(seed)
  }
  t_len <- model$input_shape[1]
  vocab <- model$layers[[length(model$layers)]]$output_shape[2]
  acts <- sum(vapply(model$layers, .layer_act_elems, numeric(1))) + t_len
  ctx <- ggml_init(8 * acts + 64 * length(model$layers) * (ggml_tensor_overhead() + 64) + ggml_graph_overhead() +
                   .attention_inputs_bytes(t_len) + 1024^2)
  on.exit(ggml_free(ctx), add = TRUE)
  x_t <- ggml_new_tensor_2d(ctx, GGML_TYPE_I32, t_len, 1)
  y_t <- .build_forward(model, ctx, x_t, logits = TRUE)
  graph <- ggml_build_forward_expand(ctx, y_t)
  out <- integer(n)
  for (i in seq_len(n)) {
    w <- utils::tail(ids, t_len)
    ggml_backend_tensor_set_data(x_t, c(w, integer(t_len - length(w))))
    ggml_graph_compute(ctx, graph)
    z <- ggml_backend_tensor_get_data(y_t)[(length(w) - 1) * vocab + seq_len(vocab)]
    out[i] <- .sample_token(z, temperature, top_k)
    ids <- c(ids, out[i])
  }
  out
}

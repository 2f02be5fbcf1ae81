# Sampling from a causal sequence model. With a KV cache (kv_cache = TRUE
# and a model of embedding, positional embedding, attention, transformer
# block, dropout and LM head layers) a graph of one position runs once per
# id while the ids fit the model's T positions: each attention layer keeps
# the keys and values of the positions before. Past T the window slides,
# every position moves, and as without a cache the forward graph of the
# window of the last T ids is recomputed per token (padded at the end with
# id 0 while shorter: with the causal mask the padding does not reach the
# position whose logits are read).

generate <- function(model, ...) UseMethod("generate")

generate.ggml_sequential_model <- function(model, prompt_ids, n = 100, temperature = 1, top_k = 0, seed = NULL,
                                           kv_cache = TRUE, ...) {
  ggml_generate(model, prompt_ids, n = n, temperature = temperature, top_k = top_k, seed = seed, kv_cache = kv_cache, ...)
}

# The next token of logits z: argmax at temperature 0, else a draw from
# softmax(z / temperature) restricted to the top_k largest (0: all).
.sample_token <- function(z, temperature, top_k) {
  if (temperature == 0) return(which.max(z) - 1L)
  if (top_k > 0 && top_k < length(z)) z[z < sort(z, decreasing = TRUE)[top_k]] <- -Inf
  p <- exp((z - max(z)) / temperature)
  sample.int(length(z), 1L, prob = p / sum(p)) - 1L
}

# The forward graph of one position p (inputs tok, pos: I32 [1]; mask F32
# [T, 1], 0 for the cached positions 0..p, -Inf after) with a zeroed K and V
# cache [D * Hkv, T] per attention layer. NULL when a layer has no cached form.
.decode_graph <- function(model, ctx, t_len) {
  cached_types <- c("embedding", "dropout", "positional_embedding", "multihead_attention", "transformer_block", "lm_head")
  if (!all(vapply(model$layers, function(l) l$type %in% cached_types, logical(1)))) return(NULL)
  tok <- ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1)
  att <- list(pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1), mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, t_len, 1), cache = list())
  zeroed_cache <- function(l) {  # masked rows still multiply: zeros, not NaN from old memory
    t <- ggml_new_tensor_2d(ctx, GGML_TYPE_F32, .key_dim(l) * l$config$num_kv_heads, t_len)
    ggml_backend_tensor_set_data(t, numeric(ggml_nelements(t)))
    t
  }
  for (l in Filter(function(l) l$type %in% c("multihead_attention", "transformer_block"), model$layers)) {
    att$cache[[l$name]] <- list(k = zeroed_cache(l), v = zeroed_cache(l))
  }
  x <- NULL
  for (l in .with_tied_head(model)$layers) {
    x <- switch(l$type,
      embedding = ggml_reshape_3d(ctx, ggml_get_rows(ctx, l$weights$weight, tok), l$config$dim, 1, 1),
      dropout = x,
      .build_transformer(ctx, l, x, att, NULL))
  }
  list(tok = tok, pos = att$pos, mask = att$mask, logits = x, graph = ggml_build_forward_expand(ctx, x))
}

ggml_generate <- function(model, prompt_ids, n = 100, temperature = 1, top_k = 0, seed = NULL, kv_cache = TRUE, ...) {
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
  kv_cache <- .check_flag(kv_cache, "kv_cache")
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
  cache_bytes <- 8 * t_len * sum(vapply(att, function(l) .key_dim(l) * l$config$num_kv_heads, numeric(1)))
  ctx <- ggml_init(2 * (8 * acts + 64 * length(model$layers) * (ggml_tensor_overhead() + 64) + ggml_graph_overhead()) +
                   cache_bytes + .attention_inputs_bytes(t_len) + 1024^2)
  on.exit(ggml_free(ctx), add = TRUE)
  decode <- if (kv_cache) .decode_graph(model, ctx, t_len)
  n_cached <- 0  # positions whose keys and values the cache holds
  x_t <- ggml_new_tensor_2d(ctx, GGML_TYPE_I32, t_len, 1)
  y_t <- .build_forward(model, ctx, x_t, logits = TRUE)
  graph <- ggml_build_forward_expand(ctx, y_t)
  out <- integer(n)
  for (i in seq_len(n)) {
    if (!is.null(decode) && length(ids) <= t_len) {
      for (p in seq(n_cached, length(ids) - 1)) {  # the prompt first, then each new id
        ggml_backend_tensor_set_data(decode$tok, ids[p + 1])
        ggml_backend_tensor_set_data(decode$pos, p)
        ggml_backend_tensor_set_data(decode$mask, ifelse(seq_len(t_len) - 1 <= p, 0, -Inf))
        ggml_graph_compute_with_ctx(ctx, decode$graph, 1L)  # one position's products are too small to share out
      }
      n_cached <- length(ids)
      z <- ggml_backend_tensor_get_data(decode$logits)
    } else {
      w <- utils::tail(ids, t_len)
      ggml_backend_tensor_set_data(x_t, c(w, integer(t_len - length(w))))
      ggml_graph_compute(ctx, graph)
      z <- ggml_backend_tensor_get_data(y_t)[(length(w) - 1) * vocab + seq_len(vocab)]
    }
    out[i] <- .sample_token(z, temperature, top_k)
    ids <- c(ids, out[i])
  }
  out
}

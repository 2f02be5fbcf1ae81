# Transformer layers of the sequential model, on the fused attention op:
# positional embeddings, multi-head attention (grouped-query heads, RoPE,
# causal mask) through ggml_flash_attn_ext (which has a backward, so fit()
# trains them without materialising the T x T scores), the pre-norm block
# and the language-model head. A sequence datapoint is c(T, C) in R, [C, T, N]
# in ggml.

.norms <- c("layer_norm", "rms_norm")
.ff_activations <- c("gelu", "swiglu")
.qkv_products <- c("separate", "fused")

.check_flag <- function(x, what) {
  if (!is.logical(x) || length(x) != 1 || is.na(x)) stop(sprintf("'%s' must be TRUE or FALSE", what), call. = FALSE)
  x
}

.check_choice <- function(x, choices, what) {
  if (!is.character(x) || length(x) != 1 || !x %in% choices) {
    stop(sprintf("'%s' must be one of %s", what, paste(sprintf("\"%s\"", choices), collapse = ", ")), call. = FALSE)
  }
  x
}

.check_rate <- function(rate) {
  if (!is.numeric(rate) || length(rate) != 1 || is.na(rate) || rate < 0 || rate >= 1) {
    stop("'dropout' must be a number in [0, 1)", call. = FALSE)
  }
  as.double(rate)
}

.check_eps <- function(eps) {
  if (!is.numeric(eps) || length(eps) != 1 || is.na(eps) || eps <= 0) stop("'eps' must be a positive number", call. = FALSE)
  as.double(eps)
}

# The attention configuration shared by both layers; key_dim NULL: C / num_heads.
.attention_config <- function(num_heads, key_dim, num_kv_heads, causal, rope, qkv) {
  num_heads <- .check_count(num_heads, "num_heads")
  num_kv_heads <- .check_count(num_kv_heads, "num_kv_heads")
  if (num_heads %% num_kv_heads != 0) {
    stop(sprintf("'num_kv_heads' (%d) must divide 'num_heads' (%d)", num_kv_heads, num_heads), call. = FALSE)
  }
  if (!is.null(key_dim)) key_dim <- .check_count(key_dim, "key_dim")
  rope <- .check_flag(rope, "rope")
  if (rope && !is.null(key_dim) && key_dim %% 2 != 0) stop("'key_dim' must be even with rope = TRUE", call. = FALSE)
  list(num_heads = num_heads, key_dim = key_dim, num_kv_heads = num_kv_heads, causal = .check_flag(causal, "causal"), rope = rope,
       qkv = .check_choice(qkv, .qkv_products, "qkv"))
}

# Configurations written before qkv and bias existed mean "separate" and TRUE.
.fused_qkv <- function(cfg) identical(cfg$qkv, "fused")
.has_bias <- function(cfg) !identical(cfg$bias, FALSE)

# Learned position vectors added to a sequence c(T, C): x[t, ] + P[t, ].
# init_std NULL: P starts U(-0.05, 0.05) as the embedding layer's; a number: N(0, init_std).
ggml_layer_positional_embedding <- function(model, name = NULL, trainable = TRUE, init_std = NULL) {
  .add_layer(model, "positional_embedding", list(init_std = .check_init_std(init_std)), name, trainable)
}

.check_init_std <- function(init_std) {
  if (is.null(init_std)) return(NULL)
  if (!is.numeric(init_std) || length(init_std) != 1 || is.na(init_std) || init_std <= 0) {
    stop("'init_std' must be NULL or a positive number", call. = FALSE)
  }
  as.double(init_std)
}

# Multi-head self-attention of a sequence c(T, C), output c(T, C):
#   q = x Wq, k = x Wk, v = x Wv (num_heads, num_kv_heads, num_kv_heads heads of key_dim),
#   RoPE on q and k (rope = TRUE), y_h = softmax(q_h k_g^T / sqrt(key_dim) + M) v_g with
#   g = the kv head of query head h (h %/% (num_heads / num_kv_heads)), M the causal mask
#   (0 where the key is not after the query, -Inf after), out = concat_h(y_h) Wo.
# qkv = "fused": one weight Wqkv = [Wq Wk Wv] and one product, q, k, v its views.
ggml_layer_multihead_attention <- function(model, num_heads, key_dim = NULL, causal = TRUE, num_kv_heads = num_heads,
                                           rope = TRUE, qkv = "separate", name = NULL, trainable = TRUE) {
  .add_layer(model, "multihead_attention", .attention_config(num_heads, key_dim, num_kv_heads, causal, rope, qkv), name, trainable)
}

# A pre-norm block: x = x + attention(norm1(x)); x = x + ff(norm2(x)), with
# ff(h) = gelu(h W1 + b1) W2 + b2 or swiglu: (silu(h Wg) * (h Wu)) Wd, and
# inverted dropout (rate `dropout`) on both branches while training.
# bias = FALSE: no b1, b2 and no layer-norm betas (GPT's bias-free variant).
ggml_layer_transformer_block <- function(model, num_heads, ff_dim, activation = "gelu", norm = "layer_norm", dropout = 0,
                                         key_dim = NULL, num_kv_heads = num_heads, causal = TRUE, rope = TRUE, eps = 1e-5,
                                         bias = TRUE, qkv = "separate", name = NULL, trainable = TRUE) {
  config <- c(.attention_config(num_heads, key_dim, num_kv_heads, causal, rope, qkv),
              list(ff_dim = .check_count(ff_dim, "ff_dim"), activation = .check_choice(activation, .ff_activations, "activation"),
                   norm = .check_choice(norm, .norms, "norm"), dropout = .check_rate(dropout), eps = .check_eps(eps),
                   bias = .check_flag(bias, "bias")))
  .add_layer(model, "transformer_block", config, name, trainable)
}

# The output head of a language model: a final norm, then logits over the
# vocabulary at every position: c(T, C) -> c(T, vocab_size). bias = FALSE: a
# layer norm without beta. tie_embedding = TRUE: the logits' matrix is the
# model's token embedding (GPT-2's tied head), not a weight of the head's own.
ggml_layer_lm_head <- function(model, vocab_size, norm = "layer_norm", eps = 1e-5, bias = TRUE, name = NULL, trainable = TRUE,
                               tie_embedding = FALSE) {
  config <- list(vocab_size = .check_count(vocab_size, "vocab_size"), norm = .check_choice(norm, .norms, "norm"),
                 eps = .check_eps(eps), bias = .check_flag(bias, "bias"), tie_embedding = .check_flag(tie_embedding, "tie_embedding"))
  .add_layer(model, "lm_head", config, name, trainable)
}

.is_tied_head <- function(l) l$type == "lm_head" && isTRUE(l$config$tie_embedding)

# The model with the token embedding's weight lent to a tied head as its
# `weight`, for building a graph (the head's own weight list stays without
# it, so the matrix is trained, counted and saved once, as the embedding's).
.with_tied_head <- function(model) {
  heads <- which(vapply(model$layers, .is_tied_head, logical(1)))
  if (length(heads) == 0) return(model)
  emb <- Filter(function(l) l$type == "embedding", model$layers)
  if (length(emb) == 0) stop("an lm_head with tie_embedding = TRUE needs an embedding layer in the model", call. = FALSE)
  e <- emb[[1]]
  for (i in heads) {
    l <- model$layers[[i]]
    if (l$config$vocab_size != e$config$vocab_size || (!is.null(l$input_shape) && l$input_shape[2] != e$config$dim)) {
      stop(sprintf("the tied lm_head '%s' (vocabulary %d, dim %s) must match the embedding '%s' (vocabulary %d, dim %d)",
                   l$name, l$config$vocab_size, if (is.null(l$input_shape)) "?" else l$input_shape[2], e$name,
                   e$config$vocab_size, e$config$dim), call. = FALSE)
    }
    model$layers[[i]]$weights$weight <- e$weights$weight
  }
  model
}

.transformer_types <- c("positional_embedding", "multihead_attention", "transformer_block", "lm_head")

.key_dim <- function(l) if (is.null(l$config$key_dim)) l$input_shape[2] %/% l$config$num_heads else l$config$key_dim

# Output shape of a transformer layer from its input shape c(T, C).
.transformer_out_shape <- function(l, shape) {
  .need_rank(l, shape, 2, "c(sequence length, dim)")
  if (l$type %in% c("multihead_attention", "transformer_block")) {
    h <- l$config$num_heads
    if (is.null(l$config$key_dim) && shape[2] %% h != 0) {
      stop(sprintf("layer '%s' (%s): dim %d is not a multiple of num_heads %d (give key_dim)", l$name, l$type, shape[2], h),
           call. = FALSE)
    }
    if (l$config$rope && .key_dim(l) %% 2 != 0) {
      stop(sprintf("layer '%s' (%s): RoPE needs an even key_dim, not %d", l$name, l$type, .key_dim(l)), call. = FALSE)
    }
  }
  if (l$type == "lm_head") c(shape[1], l$config$vocab_size) else shape
}

.norm_weight_shapes <- function(prefix, cfg, c_dim) {
  s <- list(c_dim)
  names(s) <- paste0(prefix, "gamma")
  if (cfg$norm == "layer_norm" && .has_bias(cfg)) s[[paste0(prefix, "beta")]] <- c_dim
  s
}

.attention_weight_shapes <- function(l) {
  c_dim <- l$input_shape[2]; d <- .key_dim(l); h <- l$config$num_heads; hkv <- l$config$num_kv_heads
  qkv <- if (.fused_qkv(l$config)) list(wqkv = c(c_dim, (h + 2 * hkv) * d))
         else list(wq = c(c_dim, h * d), wk = c(c_dim, hkv * d), wv = c(c_dim, hkv * d))
  c(qkv, list(wo = c(h * d, c_dim)))
}

.transformer_weight_shapes <- function(l) {
  c_dim <- l$input_shape[2]
  switch(l$type,
    positional_embedding = list(weight = c(c_dim, l$input_shape[1])),
    multihead_attention = .attention_weight_shapes(l),
    transformer_block = {
      f <- l$config$ff_dim
      ff <- if (l$config$activation == "swiglu") list(ff_gate = c(c_dim, f), ff_up = c(c_dim, f), ff_down = c(f, c_dim))
            else if (.has_bias(l$config)) list(ff_w1 = c(c_dim, f), ff_b1 = f, ff_w2 = c(f, c_dim), ff_b2 = c_dim)
            else list(ff_w1 = c(c_dim, f), ff_w2 = c(f, c_dim))
      c(.norm_weight_shapes("ln1_", l$config, c_dim), .attention_weight_shapes(l),
        .norm_weight_shapes("ln2_", l$config, c_dim), ff)
    },
    lm_head = c(.norm_weight_shapes("", l$config, c_dim), if (!.is_tied_head(l)) list(weight = c(c_dim, l$config$vocab_size))))
}

# A matrix of n values of a transformer layer: N(0, 0.02), the projections
# that end a residual branch (wo, ff_w2, ff_down) N(0, 0.02 / sqrt(2 blocks)).
.transformer_init <- function(w, n, n_blocks) {
  std <- if (w %in% c("wo", "ff_w2", "ff_down")) 0.02 / sqrt(2 * max(1, n_blocks)) else 0.02
  stats::rnorm(n, 0, std)
}

# Inputs with data that the attention layers read, for sequences of length T:
# pos (I32 [T], 0..T-1, RoPE's positions) and mask (F32 [T, T], ne0 the key j,
# ne1 the query i: 0 for j <= i, -Inf after). Created in mem_ctx (a context
# with memory) and filled now.
.attention_inputs <- function(mem_ctx, t_len) {
  pos <- ggml_new_tensor_1d(mem_ctx, GGML_TYPE_I32, t_len)
  ggml_backend_tensor_set_data(pos, seq_len(t_len) - 1)
  mask <- ggml_new_tensor_2d(mem_ctx, GGML_TYPE_F32, t_len, t_len)
  ggml_backend_tensor_set_data(mask, as.vector(outer(seq_len(t_len), seq_len(t_len), function(j, i) ifelse(j <= i, 0, -Inf))))
  list(pos = pos, mask = mask)
}

# Bytes .attention_inputs takes in its context.
.attention_inputs_bytes <- function(t_len) 4 * (t_len + t_len^2) + 2 * (ggml_tensor_overhead() + 64)

# The norm's gain, and its beta where the layer has one (bias = TRUE).
.apply_norm <- function(ctx, x, norm, w, prefix, eps) {
  y <- if (norm == "layer_norm") ggml_norm(ctx, x, eps) else ggml_rms_norm(ctx, x, eps)
  y <- ggml_mul(ctx, y, w[[paste0(prefix, "gamma")]])
  beta <- w[[paste0(prefix, "beta")]]
  if (is.null(beta)) y else ggml_add(ctx, y, beta)
}

# x [C, T*N] (rows of the batch's positions) -> attention output [C, T*N]
# (see ggml_layer_multihead_attention). With a KV cache (generation, one
# position: T = N = 1), k and v are written into the cache's row att$pos
# and the queries attend to the whole cache, its rows after pos masked.
.build_attention <- function(ctx, cfg, d, w, x, t_len, att, cache = NULL) {
  nb <- ggml_tensor_shape(x)[2] %/% t_len; h <- cfg$num_heads; hkv <- cfg$num_kv_heads
  if (.fused_qkv(cfg)) {  # views [D, heads, T, N] of the rows [Q K V] of one product
    e <- (h + 2 * hkv) * d
    qkv <- ggml_mul_mat(ctx, w$wqkv, x)
    split <- function(n, first) ggml_view_4d(ctx, qkv, d, n, t_len, nb, 4 * d, 4 * e, 4 * e * t_len, 4 * first * d)
    q <- split(h, 0); k <- split(hkv, h); v <- split(hkv, h + hkv)
  } else {
    q <- ggml_reshape_4d(ctx, ggml_mul_mat(ctx, w$wq, x), d, h, t_len, nb)
    k <- ggml_reshape_4d(ctx, ggml_mul_mat(ctx, w$wk, x), d, hkv, t_len, nb)
    v <- ggml_reshape_4d(ctx, ggml_mul_mat(ctx, w$wv, x), d, hkv, t_len, nb)
  }
  if (cfg$rope) {
    q <- ggml_rope_ext(ctx, q, att$pos, n_dims = d)
    k <- ggml_rope_ext(ctx, k, att$pos, n_dims = d)
  }
  if (!is.null(cache)) {  # cache rows [D * Hkv, T_max]: one position a row
    t_max <- ggml_tensor_shape(cache$k)[2]
    into_cache <- function(cache_t, y) {
      rows <- ggml_set_rows(ctx, cache_t, ggml_reshape_2d(ctx, ggml_cont(ctx, y), d * hkv, 1), att$pos)
      ggml_reshape_4d(ctx, rows, d, hkv, t_max, 1)
    }
    k <- into_cache(cache$k, k)
    v <- into_cache(cache$v, v)
  }
  heads_first <- function(y) ggml_permute(ctx, y, 0L, 2L, 1L, 3L)  # [D, T, heads, N]
  y <- ggml_flash_attn_ext(ctx, heads_first(q), heads_first(k), heads_first(v), if (cfg$causal) att$mask,
                           scale = 1 / sqrt(d))  # [D, H, T, N]
  ggml_mul_mat(ctx, w$wo, ggml_reshape_2d(ctx, y, h * d, t_len * nb))
}

# The dropout masks a layer reads while training: list(key = list(shape, rate)), shapes in R order.
.dropout_sites <- function(l) {
  rate <- switch(l$type, dropout = l$config$rate, transformer_block = l$config$dropout, 0)
  if (is.null(rate) || rate == 0) return(list())
  keys <- if (l$type == "dropout") l$name else paste0(l$name, c(".attn", ".ff"))
  stats::setNames(rep(list(list(shape = l$input_shape, rate = rate)), length(keys)), keys)
}

# A layer on x [C, T, N]. Its products take the positions as rows [C, T*N]:
# the gradient of a weight is then one outer product, where a product with
# [C, T, N] takes one per datapoint and sums them (repeat_back).
.build_transformer <- function(ctx, l, x, att, masks) {
  w <- l$weights; cfg <- l$config
  cache <- att$cache[[l$name]]
  if (l$type == "positional_embedding") {  # generation with a KV cache: the vector of position att$pos
    return(ggml_add(ctx, x, if (is.null(att$cache)) w$weight else ggml_reshape(ctx, ggml_get_rows(ctx, w$weight, att$pos), x)))
  }
  ne <- ggml_tensor_shape(x)
  rows <- ggml_reshape_2d(ctx, x, ne[1], ne[2] * ne[3])
  plus_bias <- function(t, b) if (is.null(b)) t else ggml_add(ctx, t, b)
  drop <- function(t, key) if (is.null(masks[[key]])) t else ggml_mul(ctx, t, ggml_reshape(ctx, masks[[key]], t))
  y <- switch(l$type,
    multihead_attention = .build_attention(ctx, cfg, .key_dim(l), w, rows, ne[2], att, cache),
    transformer_block = {
      a <- .build_attention(ctx, cfg, .key_dim(l), w, .apply_norm(ctx, rows, cfg$norm, w, "ln1_", cfg$eps), ne[2], att, cache)
      rows <- ggml_add(ctx, rows, drop(a, paste0(l$name, ".attn")))
      hn <- .apply_norm(ctx, rows, cfg$norm, w, "ln2_", cfg$eps)
      f <- if (cfg$activation == "swiglu") {
        ggml_mul_mat(ctx, w$ff_down, ggml_swiglu_split(ctx, ggml_mul_mat(ctx, w$ff_gate, hn), ggml_mul_mat(ctx, w$ff_up, hn)))
      } else {
        plus_bias(ggml_mul_mat(ctx, w$ff_w2, ggml_gelu(ctx, plus_bias(ggml_mul_mat(ctx, w$ff_w1, hn), w$ff_b1))), w$ff_b2)
      }
      ggml_add(ctx, rows, drop(f, paste0(l$name, ".ff")))
    },
    lm_head = ggml_mul_mat(ctx, w$weight, .apply_norm(ctx, rows, cfg$norm, w, "", cfg$eps)))
  ggml_reshape_3d(ctx, y, ggml_tensor_shape(y)[1], ne[2], ne[3])
}

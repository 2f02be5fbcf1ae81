# Multi-head attention for the autograd engine (ag_*). Inputs are
# [d_model, sequence]; every head attends with its own rows of the projected
# queries, keys and values, and the heads are stacked again before the
# output projection. Computed in R double precision like the other ag_* ops,
# so that its gradients can be checked by finite differences.

ag_multihead_attention <- function(d_model, n_heads, dropout = 0.0, bias = TRUE) {
  d_model <- .ag_check_count(d_model, "d_model")
  n_heads <- .ag_check_count(n_heads, "n_heads")
  if (d_model %% n_heads != 0L)
    stop(sprintf("d_model (%d) must be a multiple of n_heads (%d)", d_model, n_heads),
         call. = FALSE)
  if (!is.numeric(dropout) || length(dropout) != 1L || is.na(dropout) ||
      dropout < 0 || dropout >= 1)
    stop("dropout must be a number in [0, 1)", call. = FALSE)

  layer <- .ag_new_layer("ag_multihead_attention",
                         sprintf("multihead_attention(d=%d, h=%d)", d_model, n_heads),
                         function() {
                           p <- list(W_q = layer$W_q, W_k = layer$W_k,
                                     W_v = layer$W_v, W_o = layer$W_o)
                           if (!is.null(layer$b_o)) p$b_o <- layer$b_o
                           p
                         })
  layer$W_q <- ag_param(.ag_glorot(d_model, d_model))
  layer$W_k <- ag_param(.ag_glorot(d_model, d_model))
  layer$W_v <- ag_param(.ag_glorot(d_model, d_model))
  layer$W_o <- ag_param(.ag_glorot(d_model, d_model))
  layer$b_o <- if (bias) ag_param(matrix(0, d_model, 1L))
  layer$d_model <- d_model
  layer$n_heads <- n_heads
  layer$d_k <- d_model %/% n_heads
  layer$d_v <- layer$d_k
  layer$scale <- 1 / sqrt(layer$d_k)
  layer$dropout <- as.double(dropout)

  # causal_mask: query i attends to keys 1..i only.
  layer$forward <- function(q, k = q, v = k, causal_mask = FALSE) {
    Q <- ag_matmul(layer$W_q, q)
    K <- ag_matmul(layer$W_k, k)
    V <- ag_matmul(layer$W_v, v)
    n_q <- ncol(Q$data); n_kv <- ncol(K$data)
    # Scores are laid out [key, query] so that the column softmax of ag_softmax
    # normalises over the keys of each query.
    mask <- NULL
    if (isTRUE(causal_mask)) {
      mask <- matrix(0, n_kv, n_q)
      mask[row(mask) > col(mask)] <- -Inf
    }
    heads <- lapply(seq_len(layer$n_heads), function(h) {
      rows <- c((h - 1L) * layer$d_k + 1L, h * layer$d_k)
      q_h <- .ag_row_slice(Q, rows[1L], rows[2L])
      k_h <- .ag_row_slice(K, rows[1L], rows[2L])
      v_h <- .ag_row_slice(V, rows[1L], rows[2L])
      scores <- ag_scale(ag_matmul(ag_transpose(k_h), q_h), layer$scale)
      if (!is.null(mask)) scores <- ag_add(scores, mask)
      weights <- ag_softmax(scores)
      if (layer$training && layer$dropout > 0)
        weights <- ag_mul(weights, .ag_dropout_mask(dim(weights$data), layer$dropout))
      ag_matmul(v_h, weights)
    })
    out <- ag_matmul(layer$W_o, .ag_row_concat(heads))
    if (!is.null(layer$b_o)) out <- ag_add(out, layer$b_o)
    out
  }
  layer
}

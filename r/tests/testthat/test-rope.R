# ggml_rope_ext and ggml_rope_ext_back against a float64 R reference of
# RoPE with YaRN (upstream ggml's formula, written out below), in both modes.

# x: array [ne0, n_head, n_tokens, ne3]; pos: one position per token; ff:
# NULL or the frequency factors; sign -1 rotates by the opposite angles.
rope_ref <- function(x, pos, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor,
                     beta_fast, beta_slow, ff = NULL, sign = 1) {
  k <- 0:(n_dims / 2 - 1)
  theta_ext0 <- freq_base^(-2 * k / n_dims) / (if (is.null(ff)) 1 else ff[k + 1])
  m <- attn_factor; mix <- 0
  if (ext_factor != 0) {
    corr <- function(beta) n_dims * log(n_ctx_orig / (2 * pi * beta)) / (2 * log(freq_base))
    lo <- max(0, floor(corr(beta_fast))); hi <- min(n_dims - 1, ceiling(corr(beta_slow)))
    mix <- ext_factor * (1 - pmin(1, pmax(0, (k - lo) / max(0.001, hi - lo))))
    m <- m * (1 + 0.1 * log(1 / freq_scale))
  }
  # 1-based indices of the pairs' entries
  j0 <- if (mode == GGML_ROPE_TYPE_NEOX) k + 1 else 2 * k + 1
  j1 <- if (mode == GGML_ROPE_TYPE_NEOX) k + 1 + n_dims / 2 else 2 * k + 2
  y <- x
  for (t in seq_along(pos)) {
    theta_ext <- pos[t] * theta_ext0
    theta <- freq_scale * theta_ext * (1 - mix) + theta_ext * mix
    cs <- m * cos(theta); sn <- sign * m * sin(theta)
    x0 <- x[j0, , t, , drop = FALSE]; x1 <- x[j1, , t, , drop = FALSE]
    y[j0, , t, ] <- x0 * cs - x1 * sn
    y[j1, , t, ] <- x0 * sn + x1 * cs
  }
  y
}

# The R arguments of the rope ops, the reference's arguments too: exact in
# float, as the kernel receives them; the YaRN cases have correction dims 1.70
# and 5.28 for n_dims 8, so that floor and ceiling matter.
rope_cases <- list(
  plain_normal = list(n_dims = 6, mode = GGML_ROPE_TYPE_NORMAL, n_ctx_orig = 0, freq_base = 10000, freq_scale = 1,
                      ext_factor = 0, attn_factor = 1, beta_fast = 32, beta_slow = 1),
  scaled_neox  = list(n_dims = 8, mode = GGML_ROPE_TYPE_NEOX, n_ctx_orig = 0, freq_base = 500, freq_scale = 0.25,
                      ext_factor = 0, attn_factor = 0.75, beta_fast = 32, beta_slow = 1),
  yarn_normal  = list(n_dims = 8, mode = GGML_ROPE_TYPE_NORMAL, n_ctx_orig = 512, freq_base = 100, freq_scale = 0.5,
                      ext_factor = 0.625, attn_factor = 1.25, beta_fast = 11.5, beta_slow = 0.1875),
  yarn_neox    = list(n_dims = 6, mode = GGML_ROPE_TYPE_NEOX, n_ctx_orig = 512, freq_base = 100, freq_scale = 0.5,
                      ext_factor = 1, attn_factor = 1, beta_fast = 11.5, beta_slow = 0.1875)
)

rope_setup <- function(ctx, seed) {
  set.seed(seed)
  shape <- c(10, 3, 4, 2)  # ne0 > n_dims: the tail of each row is copied
  pos <- c(0L, 3L, 17L, 1000L)
  ta <- tensor_of(ctx, array(rnorm(prod(shape)), shape))
  list(a = ta, x = array(ggml_get_f32(ta), shape), b = tensor_of(ctx, pos, GGML_TYPE_I32), pos = pos,
       ff = c(1, 2, 0.5, 4, 1.5), tff = tensor_of(ctx, c(1, 2, 0.5, 4, 1.5)))
}

test_that("ggml_rope_ext and ggml_rope_ext_back match the float64 reference in both modes", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  s <- rope_setup(ctx, 5)
  for (name in names(rope_cases)) {
    p <- rope_cases[[name]]
    for (with_ff in c(FALSE, TRUE)) {
      ff <- if (with_ff) s$ff
      tc <- if (with_ff) s$tff
      for (back in c(FALSE, TRUE)) {
        op <- if (back) ggml_rope_ext_back else ggml_rope_ext
        got <- compute(ctx, do.call(op, c(list(ctx, s$a, s$b, tc), p)))
        ref <- do.call(rope_ref, c(list(s$x, s$pos), p, list(ff = ff, sign = if (back) -1 else 1)))
        # one float rounding of values below 4 in magnitude
        expect_lt(max(abs(got - as.vector(ref))), 2e-6, label = sprintf("%s%s%s", name, if (with_ff) " with c" else "",
                                                                       if (back) " (back)" else ""))
      }
    }
  }
  # the tail beyond n_dims is the input, and the rotation moves the rest
  got <- array(compute(ctx, ggml_rope_ext(ctx, s$a, s$b, n_dims = 6)), dim(s$x))
  expect_identical(got[7:10, , , ], s$x[7:10, , , ])
  expect_gt(max(abs(got[1:6, , 2:4, ] - s$x[1:6, , 2:4, ])), 0.1)
})

test_that("the defaults are plain RoPE, NEOX pairs differ from NORMAL ones, and back undoes the rotation", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  s <- rope_setup(ctx, 6)
  plain <- compute(ctx, ggml_rope_ext(ctx, s$a, s$b, NULL, 8, GGML_ROPE_TYPE_NORMAL, 0, 10000, 1, 0, 1, 32, 1))
  expect_identical(compute(ctx, ggml_rope_ext(ctx, s$a, s$b, n_dims = 8)), plain)
  neox <- compute(ctx, ggml_rope_ext(ctx, s$a, s$b, n_dims = 8, mode = GGML_ROPE_TYPE_NEOX))
  expect_gt(max(abs(neox - plain)), 0.1)
  y <- ggml_rope_ext(ctx, s$a, s$b, s$tff, n_dims = 8, mode = GGML_ROPE_TYPE_NEOX, freq_scale = 0.5)
  back <- ggml_rope_ext_back(ctx, y, s$b, s$tff, n_dims = 8, mode = GGML_ROPE_TYPE_NEOX, freq_scale = 0.5)
  expect_lt(max(abs(compute(ctx, back) - as.vector(s$x))), 1e-5)
})

test_that("the gradient of ggml_rope_ext is ggml_rope_ext_back's reference (autodiff through the binding)", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  s <- rope_setup(ctx, 7)
  p <- rope_cases$yarn_neox
  ggml_set_param(s$a)
  w <- array(rnorm(length(s$x)), dim(s$x))
  tw <- tensor_of(ctx, w)
  loss <- ggml_sum(ctx, ggml_mul(ctx, do.call(ggml_rope_ext, c(list(ctx, s$a, s$b, s$tff), p)), tw))
  ggml_set_loss(loss)
  g <- ggml_build_forward_expand_grads(ctx, loss)
  ggml_build_backward_expand(ctx, g)
  ggml_graph_reset(g)
  ggml_graph_compute(ctx, g)
  w32 <- array(ggml_get_f32(tw), dim(w))
  ref <- do.call(rope_ref, c(list(w32, s$pos), p, list(ff = s$ff, sign = -1)))
  expect_lt(max(abs(ggml_get_f32(ggml_graph_get_grad(g, s$a)) - as.vector(ref))), 1e-5)
})

test_that("the rope ops refuse bad arguments with the library's message", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  s <- rope_setup(ctx, 8)
  expect_error(ggml_rope_ext(ctx, s$a, s$b, n_dims = 7), "n_dims must be even")
  expect_error(ggml_rope_ext(ctx, s$a, s$b, n_dims = 12), "n_dims must be even")
  expect_error(ggml_rope_ext_back(ctx, s$a, s$b, n_dims = 6, mode = 1L), "mode 1 is not implemented")
  expect_error(ggml_rope_ext(ctx, s$a, s$a, n_dims = 6), "I32")
  expect_error(ggml_rope_ext(ctx, s$a, s$b, n_dims = 6, ext_factor = 1, n_ctx_orig = -1L), "YaRN")
  expect_error(ggml_rope_ext(ctx, s$a, s$b, tensor_of(ctx, c(1, 2)), n_dims = 6), "frequency factors")
  expect_error(ggml_rope_ext(ctx, s$a, s$b, n_dims = 6, freq_base = NA), "freq_base")
  expect_error(ggml_rope_ext(ctx, s$a, s$b, n_dims = 2.5), "n_dims")
})

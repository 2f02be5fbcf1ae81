# ggml_rope_multi against the rotation written out in R: NEOX pairs
# (k, k + n_dims/2), pair k turned by p_s * 10000^(-2k / n_dims), where s is
# the section of pair k and p_s the token's position in stream s.

neox_rotate <- function(x, angles) {
  half <- length(x) / 2
  k <- seq_len(half)
  c(x[k] * cos(angles) - x[k + half] * sin(angles), x[k] * sin(angles) + x[k + half] * cos(angles))
}

rope_multi_case <- function(ctx, x, streams, sections, op = ggml_rope_multi, mode = GGML_ROPE_TYPE_MROPE) {
  a <- ggml_new_tensor_3d(ctx, GGML_TYPE_F32, length(x), 1, 1)
  ggml_set_f32(a, x)
  pos <- ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4)
  ggml_set_i32(pos, streams)
  r <- op(ctx, a, pos, NULL, n_dims = length(x), sections = sections, mode = mode)
  list(result = compute(ctx, r), input = a, pos = pos)
}

test_that("each pair turns by the position of its section", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  x <- c(1, -2, 0.5, 3, 2, 1, -1, 0.25)
  streams <- c(1, 2, 3, 4)  # t, h, w, e of the one token
  theta <- 10000^(-2 * (0:3) / 8)
  # one pair per section: pair k takes stream k
  got <- rope_multi_case(ctx, x, streams, c(1, 1, 1, 1))
  expect_equal(got$result, neox_rotate(x, streams * theta), tolerance = 1e-5)
  # sections 2, 1, 0, 1: pairs 0 and 1 take t, pair 2 takes h, pair 3 takes e
  got <- rope_multi_case(ctx, x, streams, c(2, 1, 0, 1))
  expect_equal(got$result, neox_rotate(x, c(1, 1, 2, 4) * theta), tolerance = 1e-5)
  expect_identical(ggml_get_f32(got$input), x)  # the plain form leaves a alone
})

test_that("the _inplace form writes over a and the _back form undoes the rotation", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  x <- c(1, -2, 0.5, 3, 2, 1, -1, 0.25)
  theta <- 10000^(-2 * (0:3) / 8)
  got <- rope_multi_case(ctx, x, c(5, 6, 7, 8), c(1, 1, 1, 1), ggml_rope_multi_inplace)
  expect_equal(got$result, neox_rotate(x, c(5, 6, 7, 8) * theta), tolerance = 1e-5)
  expect_identical(ggml_get_f32(got$input), got$result)
  rotated <- neox_rotate(x, c(5, 6, 7, 8) * theta)
  back <- rope_multi_case(ctx, rotated, c(5, 6, 7, 8), c(1, 1, 1, 1), ggml_rope_multi_back)
  expect_equal(back$result, x, tolerance = 1e-5)
})

test_that("bad sections, modes and handles are R errors", {
  ctx <- ggml_init(16 * 1024^2)
  a <- ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 1, 1)
  pos <- ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4)
  expect_error(ggml_rope_multi(ctx, a, pos, n_dims = 8, sections = c(1, 1, 1), mode = GGML_ROPE_TYPE_MROPE), "sections")
  expect_error(ggml_rope_multi(ctx, a, pos, n_dims = 8, sections = c(1, NA, 1, 1), mode = GGML_ROPE_TYPE_MROPE), "sections")
  expect_error(ggml_rope_multi(ctx, a, pos, n_dims = 8, sections = c(1, 1.5, 1, 1), mode = GGML_ROPE_TYPE_MROPE), "sections")
  expect_error(ggml_rope_multi(ctx, a, pos, n_dims = 8, sections = "1", mode = GGML_ROPE_TYPE_MROPE))
  expect_error(ggml_rope_multi(ctx, a, pos, n_dims = 8, sections = c(1, 1, 1, 1), mode = 7))
  expect_error(ggml_rope_multi(ctx, a, a, n_dims = 8, sections = c(1, 1, 1, 1), mode = GGML_ROPE_TYPE_MROPE))
  expect_error(ggml_rope_multi(ctx, a, pos, n_dims = 9, sections = c(1, 1, 1, 1), mode = GGML_ROPE_TYPE_MROPE))
  ggml_free(ctx)
  expect_error(ggml_rope_multi(ctx, a, pos, n_dims = 8, sections = c(1, 1, 1, 1), mode = GGML_ROPE_TYPE_MROPE))
  expect_identical(c(GGML_ROPE_TYPE_NORM, GGML_ROPE_TYPE_MROPE, GGML_ROPE_TYPE_VISION, GGML_ROPE_TYPE_IMROPE),
                   c(0L, 8L, 24L, 40L))
})

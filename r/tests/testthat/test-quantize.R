# The tensor types in R: every type of enum ggml_type as a constant, tensors
# of F16, BF16 and the quantized types made from R arrays (quantized by the
# reference quantizers) and read back dequantized, with errors bounded by each
# type's step; types without a converter are refused with a message.

test_that("every type of enum ggml_type is a constant with C's value", {
  expect_identical(GGML_TYPE_F32, 0L)
  expect_identical(GGML_TYPE_Q4_0, 2L)
  expect_identical(GGML_TYPE_Q8_0, 8L)
  expect_identical(GGML_TYPE_Q6_K, 14L)
  expect_identical(GGML_TYPE_I32, 26L)
  expect_identical(GGML_TYPE_BF16, 30L)
  expect_identical(GGML_TYPE_MXFP4, 39L)
  expect_identical(ggml_type_name(GGML_TYPE_Q4_K), "q4_K")
  expect_equal(ggml_blck_size(GGML_TYPE_Q8_0), 32)
  expect_equal(ggml_type_size(GGML_TYPE_Q8_0), 34)
  expect_true(ggml_is_quantized(GGML_TYPE_Q4_0))
  expect_false(ggml_is_quantized(GGML_TYPE_BF16))
  expect_error(ggml_type_name(4L), "must be a tensor type")
  expect_error(ggml_type_name(1000L), "must be a tensor type")
})

# x (64 x 4) through a tensor of type ty and back: the dequantized values
roundtrip <- function(ctx, x, ty) {
  t <- ggml_new_tensor_from_array(ctx, x, ty)
  expect_identical(ggml_tensor_type(t), ty)
  y <- ggml_get_array(t)
  expect_type(y, "double")
  expect_identical(dim(y), dim(x))
  y
}

# per block of b elements (along each column): max |x|, recycled per element
block_amax <- function(x, b) {
  a <- apply(matrix(abs(x), nrow = b), 2, max)
  rep(a, each = b)
}

test_that("F16 and BF16 round trips are within half a unit in the last place", {
  ctx <- ggml_init(4 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(22)
  x <- matrix(rnorm(256, sd = 3), 64, 4)
  # round to nearest: relative error at most 2^-11 (11-bit significand) and
  # 2^-8 (8-bit); the double -> float rounding on the way adds 2^-24
  expect_true(all(abs(roundtrip(ctx, x, GGML_TYPE_F16) - x) <= abs(x) * (2^-11 + 2^-24) + 2^-25))
  expect_true(all(abs(roundtrip(ctx, x, GGML_TYPE_BF16) - x) <= abs(x) * (2^-8 + 2^-24)))
})

test_that("Q8_0, Q4_0 and Q4_1 round trips are within their steps", {
  ctx <- ggml_init(4 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(25)
  x <- matrix(rnorm(256), 64, 4)
  # Q8_0: d = amax / 127 (stored as fp16: relative error 2^-11), q = round(x / d)
  # in [-127, 127]: |x - q d'| <= d / 2 + 127 |d - d'|
  d <- block_amax(x, 32) / 127
  expect_true(all(abs(roundtrip(ctx, x, GGML_TYPE_Q8_0) - x) <= d * (0.5 + 127 * 2^-11) * (1 + 1e-6)))
  # Q4_0: d = m / -8 for m the value of largest |x|; q = min(15, trunc(x / d + 8.5)):
  # the clamp at 15 makes the error up to |d| for x = -m; |q - 8| <= 8 steps of d's rounding
  d <- block_amax(x, 32) / 8
  expect_true(all(abs(roundtrip(ctx, x, GGML_TYPE_Q4_0) - x) <= d * (1 + 8 * 2^-11) * (1 + 1e-6)))
  # Q4_1: d = (max - min) / 15, q = round((x - min) / d) in [0, 15], d and min
  # as fp16: |err| <= d / 2 + 15 |d - d'| + |min - min'|
  rng <- apply(matrix(x, nrow = 32), 2, function(v) diff(range(v)))
  mn <- apply(matrix(x, nrow = 32), 2, function(v) abs(min(v)))
  d <- rep(rng / 15, each = 32)
  expect_true(all(abs(roundtrip(ctx, x, GGML_TYPE_Q4_1) - x) <= (d * (0.5 + 15 * 2^-11) + rep(mn, each = 32) * 2^-11) * (1 + 1e-6)))
})

test_that("the other quantized types round trip within a bound of their bits", {
  ctx <- ggml_init(8 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(7)
  x <- matrix(rnorm(1024), 256, 4)
  # a b-bit code over a block's range [-amax, amax] has steps of about
  # 2 amax / (2^b - 1); its error is at most a step, here with room for the
  # scales' own rounding (sub-block scales of the K types, E8M0 of MXFP4): a
  # sanity bound, the exact bytes are the C tests' business
  bits <- c(Q5_0 = 5, Q5_1 = 5, Q2_K = 2, Q3_K = 3, Q4_K = 4, Q5_K = 5, Q6_K = 6, IQ4_NL = 4, IQ4_XS = 4, MXFP4 = 4)
  for (nm in names(bits)) {
    ty <- get(paste0("GGML_TYPE_", nm))
    b <- ggml_blck_size(ty)
    step <- 2 * block_amax(x, b) / (2^bits[[nm]] - 1)
    err <- abs(roundtrip(ctx, x, ty) - x)
    expect_true(all(err <= 2 * step), label = nm)
  }
})

test_that("NVFP4, Q1_0, Q2_0 and the ternary types round trip to their levels", {
  ctx <- ggml_init(8 * 1024^2)
  on.exit(ggml_free(ctx))
  set.seed(41)
  x <- matrix(rnorm(1024), 256, 4)
  # NVFP4: per 16, levels (0, .5, 1, 1.5, 2, 3, 4, 6) * amax / 6 up to the
  # UE4M3 scale's rounding (3 mantissa bits): half the widest gap, or the clip
  expect_true(all(abs(roundtrip(ctx, x, GGML_TYPE_NVFP4) - x) <= block_amax(x, 16) * (1 / 6 * (1 + 2^-4) + 2^-4)))
  # Q2_0 (per 64), TQ1_0, TQ2_0 (per 256): the nearest of -d, 0, d with d = amax in fp16
  for (ty in c(GGML_TYPE_Q2_0, GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0)) {
    a <- block_amax(x, ggml_blck_size(ty))
    expect_true(all(abs(roundtrip(ctx, x, ty) - x) <= a * (0.5 + 2^-11)), label = ggml_type_name(ty))
  }
  # Q1_0: the sign times the block's mean |x| (fp16), per 128
  m <- rep(apply(matrix(abs(x), nrow = 128), 2, mean), each = 128)
  expect_true(all(abs(roundtrip(ctx, x, GGML_TYPE_Q1_0) - ifelse(x >= 0, m, -m)) <= m * 2^-11))
  # CRAN ggmlR's per-type functions are the chunk path and the tensor's reading
  v <- as.vector(x)
  for (nm in c("nvfp4", "q1_0", "tq1_0", "tq2_0")) {
    ty <- get(paste0("GGML_TYPE_", toupper(nm)))
    q <- get(paste0("quantize_", nm))(v, 4, 256)
    expect_identical(q, ggml_quantize_chunk(ty, v, 4, 256), label = nm)
    expect_identical(get(paste0("dequantize_row_", nm))(q, 1024), as.vector(roundtrip(ctx, x, ty)), label = nm)
  }
})

test_that("ggml_quantize_chunk gives a tensor's bytes, and the dequantizers read them", {
  ctx <- ggml_init(4 * 1024^2)
  on.exit(ggml_free(ctx))
  x <- sin(seq_len(128))
  q <- ggml_quantize_chunk(GGML_TYPE_Q8_0, x, 2, 64)
  expect_type(q, "raw")
  expect_length(q, 2 * 2 * 34)
  t <- ggml_new_tensor_from_array(ctx, matrix(x, 64), GGML_TYPE_Q8_0)
  expect_identical(ggml_backend_tensor_get(t, 0, ggml_nbytes(t)), q)
  expect_identical(dequantize_row_q8_0(q, 128), ggml_get_array(t)[seq_len(128)])
  expect_identical(quantize_q4_K(rep(x, 4), 2, 256), ggml_quantize_chunk(GGML_TYPE_Q4_K, rep(x, 4), 2, 256))
  expect_error(ggml_quantize_chunk(GGML_TYPE_Q8_0, x, 1, 100), "nrows \\* n_per_row")
  expect_length(ggml_quantize_chunk(GGML_TYPE_Q8_0, x, 4, 32), 4 * 34)
  expect_error(ggml_quantize_chunk(GGML_TYPE_Q8_0, x, 2, 64, imatrix = 1:3), "imatrix")
  expect_error(ggml_quantize_chunk(GGML_TYPE_Q8_0, x[1:48], 1, 48), "whole blocks")
  expect_error(ggml_quantize_chunk(GGML_TYPE_Q8_0, c(NA, x[-1]), 2, 64), "not a finite")
  expect_error(ggml_quantize_chunk(GGML_TYPE_IQ2_XXS, rep(x, 2), 1, 256), "cannot quantize")
  expect_error(dequantize_row_q8_0(q[1:10], 64), "take")
})

test_that("types without a converter are refused with a message", {
  ctx <- ggml_init(4 * 1024^2)
  on.exit(ggml_free(ctx))
  t <- ggml_new_tensor_1d(ctx, GGML_TYPE_Q8_1, 64)
  expect_error(ggml_get_array(t), "q8_1, which has no conversion to numbers")
  t <- ggml_new_tensor_1d(ctx, GGML_TYPE_Q8_K, 256)
  expect_error(ggml_set_array(t, rnorm(256)), "q8_K, which has no conversion from numbers")
  t <- ggml_new_tensor_1d(ctx, GGML_TYPE_IQ2_XXS, 256)  # stored, not converted
  expect_error(ggml_get_array(t), "iq2_xxs, which has no conversion to numbers")
  q <- ggml_new_tensor_from_array(ctx, rnorm(64), GGML_TYPE_Q4_0)
  expect_error(ggml_backend_tensor_get_data(q, 16, 16), "multiples of 32")
  expect_error(ggml_set_array(q, c(Inf, rnorm(63))), "not a finite")
  expect_length(ggml_backend_tensor_get_data(q, 32, 32), 32)
})

test_that("a tensor prints its values: all of a small one, the first of a large one", {
  ctx <- ggml_init(4 * 1024^2)
  on.exit(ggml_free(ctx))
  expect_output(print(ggml_new_tensor_from_array(ctx, c(1.5, -2, 3))), "f32 \\[3, 1, 1, 1\\]>\n +1\\.5 -2\\.0 +3\\.0")
  expect_output(print(ggml_new_tensor_from_array(ctx, matrix(1:6, 2))), "i32.*\n +1 2 3 4 5 6$")
  out <- capture.output(print(ggml_new_tensor_from_array(ctx, as.numeric(1:100))))
  expect_match(paste(out, collapse = " "), "^<ggml_tensor f32 \\[100.* 1 +2 +3 .*10 \\.\\.\\. \\(90 more\\)$")
  out <- capture.output(print(ggml_new_tensor_from_array(ctx, rep(0.5, 64), GGML_TYPE_Q8_0)))
  expect_match(paste(out, collapse = " "), "q8_0 .*0\\.4999.*\\(54 more\\)")
  na <- ggml_init(1024^2, no_alloc = TRUE)
  on.exit(ggml_free(na), add = TRUE)
  expect_output(print(ggml_new_tensor_1d(na, GGML_TYPE_F32, 4)), "^<ggml_tensor f32 \\[4, 1, 1, 1\\]>$")
})

test_that("a tensor or model read back by readRDS gives an error naming ggml_save_model", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  f <- tempfile(fileext = ".rds")
  on.exit(unlink(f), add = TRUE)
  saveRDS(ggml_new_tensor_from_array(ctx, 1:3 / 2), f)
  t <- readRDS(f)
  expect_error(ggml_get_array(t), "ggml_save_model")
  expect_output(print(t), "readRDS")
  m <- ggml_model_sequential() |> ggml_layer_dense(2, input_shape = 3) |> ggml_compile(loss = "mse")
  saveRDS(m, f)
  back <- readRDS(f)
  x <- matrix(runif(12), 4, 3)
  expect_error(ggml_predict(back, x), "ggml_save_model\\(\\) and read it back with ggml_load_model")
  expect_error(fit(back, x, matrix(0, 4, 2), epochs = 1, verbose = 0), "ggml_save_model")
  expect_error(ggml_save_model(back, tempfile()), "ggml_load_model")
  expect_output(print(back), "ggml_save_model")
  expect_equal(dim(ggml_predict(m, x)), c(4, 2))  # the original is untouched
})

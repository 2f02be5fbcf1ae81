# F16 and I32 data cross the boundary exactly as IEEE binary16 / int32 would.

# Reference rounding of a double to the nearest binary16 value (ties to even),
# written from the format's definition: 10 fraction bits, exponent -14..15,
# subnormals spaced 2^-24, overflow past 65504 (from 65520 up) to Inf.
half_ref <- function(x) {
  vapply(x, function(v) {
    if (is.nan(v) || is.infinite(v) || v == 0) return(v)
    a <- abs(v)
    e <- floor(log2(a))
    if (2^e > a) e <- e - 1
    if (2^(e + 1) <= a) e <- e + 1
    e <- max(e, -14)
    ulp <- 2^(e - 10)
    q <- a / ulp
    r <- floor(q)
    d <- q - r
    if (d > 0.5 || (d == 0.5 && r %% 2 == 1)) r <- r + 1
    h <- r * ulp
    if (h > 65504) h <- Inf
    sign(v) * h
  }, numeric(1))
}

# Values are rounded from the double directly (test-adversarial.R checks
# doubles just off a binary16 tie, where rounding to float first would not do).
f16_cases <- c(
  0, 1, -2.5, 1 / 1024, 3.140625, 0.1, 1 / 3, 1000.7, 2049, 2051,
  65504, 65519, 65520, 1e5, -65536,             # largest finite, ties to Inf, overflow
  2^-14, 2^-24, 2^-25, 3 * 2^-25, 2^-26, 5e-8,   # min normal, subnormals, ties
  1 + 2^-11, 1 + 3 * 2^-11                        # ties to even in the normal range
)
f16_cases <- c(f16_cases, -f16_cases)

test_that("the reference itself agrees with known binary16 facts", {
  expect_equal(half_ref(c(65504, 65519, 65520)), c(65504, 65504, Inf))
  expect_equal(half_ref(c(2^-25, 3 * 2^-25)), c(0, 2^-23))
  expect_equal(half_ref(1 + 2^-11), 1)
  expect_equal(half_ref(1 + 3 * 2^-11), 1 + 2^-9)
})

test_that("F16 tensors round to nearest even through the backend transfer", {
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  on.exit(ggml_free(ctx))
  x <- c(f16_cases, -Inf, Inf, NaN)
  t <- ggml_new_tensor_1d(ctx, GGML_TYPE_F16, length(x))
  be <- ggml_backend_cpu_init()
  on.exit(ggml_backend_free(be), add = TRUE)
  ggml_backend_alloc_ctx_tensors(ctx, be)
  expect_equal(ggml_nbytes(t), 2 * length(x))

  ggml_backend_tensor_set_data(t, x)
  y <- ggml_backend_tensor_get_data(t)
  n <- length(f16_cases)
  expect_identical(y[1:n], half_ref(f16_cases))
  expect_identical(y[n + 1:2], c(-Inf, Inf))
  expect_true(is.nan(y[n + 3]))
  # the sign of zero survives (f16_cases[1] is 0, its negated twin -0)
  expect_identical(1 / y[c(1, n / 2 + 1)], c(Inf, -Inf))
})

test_that("F16 bit patterns match IEEE binary16", {
  bits <- ggml_fp32_to_fp16(c(1, -2, 65504, Inf, -Inf, 2^-24, 2^-14, 0, -0, 0.5))
  expect_identical(bits, c(0x3C00L, 0xC000L, 0x7BFFL, 0x7C00L, 0xFC00L, 0x0001L, 0x0400L, 0L, 0x8000L, 0x3800L))
  expect_true(ggml_fp32_to_fp16(NaN) %/% 1024L %% 32L == 31L && ggml_fp32_to_fp16(NaN) %% 1024L != 0L)
  expect_identical(ggml_fp16_to_fp32(c(0x3C00, 0x0001, 0x7BFF, 0xFC00)), c(1, 2^-24, 65504, -Inf))
  expect_true(is.nan(ggml_fp16_to_fp32(0x7E00)))
  expect_error(ggml_fp16_to_fp32(70000), "16-bit patterns")
  expect_error(ggml_fp16_to_fp32(NA), "numeric vector")
})

test_that("F16 tensors in an ordinary context read and write through ggml_set_f32", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  t <- ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 3, 2)
  x <- c(0.1, -1 / 3, 65519, 2^-25, 3 * 2^-25, 7)
  ggml_set_f32(t, x)
  expect_identical(ggml_get_f32(t), half_ref(x))
  expect_identical(ggml_get_f32_1d(t, 1), half_ref(-1 / 3))
  ggml_set_f32(t, 1e6)  # fill: overflows to Inf
  expect_identical(ggml_get_f32(t), rep(Inf, 6))
})

test_that("I32 tensors hold exact 32-bit integers", {
  t <- backend_tensor_1d(GGML_TYPE_I32, 6)
  x <- c(0, -1, 2147483647, -2147483648, 16777217, 42L)
  ggml_backend_tensor_set_data(t, x)
  expect_identical(ggml_backend_tensor_get_data(t), as.numeric(x))
  ggml_backend_tensor_set_data(t, 5:6, offset = 4)
  expect_identical(ggml_backend_tensor_get_data(t, 3), c(-2147483648, 5, 6))
  # little-endian int32 bytes, as C sees them
  expect_identical(ggml_backend_tensor_get(t, 16, 4), as.raw(c(5, 0, 0, 0)))

  expect_error(ggml_backend_tensor_set_data(t, c(1, NA, 3, 4, 5, 6)), "not a 32-bit integer")
  expect_error(ggml_backend_tensor_set_data(t, 1.5), "not a 32-bit integer")
  expect_error(ggml_backend_tensor_set_data(t, 2^31), "not a 32-bit integer")
  expect_identical(ggml_backend_tensor_get_data(t, 3), c(-2147483648, 5, 6))  # unchanged
})

test_that("F32 data round-trips through float precision", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  t <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5)
  x <- c(1 / 3, -Inf, NaN, 1e-45, 3.4e38)
  ggml_backend_tensor_set_data(t, x)
  y <- ggml_backend_tensor_get_data(t)
  # 1/3 to float: 24 significant bits
  expect_equal(y[1], 11184811 / 2^25)
  expect_identical(y[2], -Inf)
  expect_true(is.nan(y[3]))
  expect_equal(y[4], 2^-149)  # smallest float subnormal
  expect_identical(ggml_backend_tensor_get(t, 4, 4), writeBin(-Inf, raw(), size = 4))
})

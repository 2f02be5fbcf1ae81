# Reference row quantizers, Q8_K's dequantizer and the block facts, against
# bytes worked out by hand from upstream's block layouts.

test_that("a Q8_0 row holds the fp16 scale then the int8 values", {
  # max |x| = 127, so the scale d is 1 (fp16 0x3C00) and each value is itself
  x <- c(127, -3, rep(0, 30))
  q <- quantize_row_q8_0_ref(x, 32)
  expect_identical(q, as.raw(c(0x00, 0x3C, 0x7F, 0xFD, rep(0, 30))))
  expect_equal(dequantize_row_q8_0(q, 32), x)
})

test_that("a Q8_K row is the float scale, the int8 values and the sums of 16", {
  # upstream scales by -127 / (the value of largest magnitude), here 127: d = -1
  x <- c(127, 5, rep(0, 254))
  q <- quantize_row_q8_K_ref(x, 256)
  expect_length(q, 4 + 256 + 2 * 16)
  expect_identical(q[1:4], writeBin(-1, raw(), size = 4, endian = "little"))
  expect_identical(q[5:6], as.raw(c(0x81, 0xFB)))  # -127, -5
  expect_identical(q[261:262], writeBin(-132L, raw(), size = 2, endian = "little"))
  expect_equal(dequantize_row_q8_K(q, 256), x)
  two_blocks <- c(x, -x / 127)
  expect_equal(dequantize_row_q8_K(quantize_row_q8_K_ref(two_blocks, 512), 512), two_blocks, tolerance = 1e-6)
  expect_identical(dequantize_row_q8_K(raw(0), 0), numeric(0))
})

test_that("each reference quantizer gives its type's bytes and reads back closely", {
  x <- sin(seq_len(256))
  types <- list(q4_0 = GGML_TYPE_Q4_0, q4_1 = GGML_TYPE_Q4_1, q5_0 = GGML_TYPE_Q5_0, q5_1 = GGML_TYPE_Q5_1,
                q2_K = GGML_TYPE_Q2_K, q3_K = GGML_TYPE_Q3_K, q4_K = GGML_TYPE_Q4_K, q5_K = GGML_TYPE_Q5_K,
                q6_K = GGML_TYPE_Q6_K, tq1_0 = GGML_TYPE_TQ1_0, tq2_0 = GGML_TYPE_TQ2_0,
                iq4_nl = GGML_TYPE_IQ4_NL, iq4_xs = GGML_TYPE_IQ4_XS, mxfp4 = GGML_TYPE_MXFP4, q8_1 = GGML_TYPE_Q8_1)
  for (name in names(types)) {
    q <- get(paste0("quantize_row_", name, "_ref"))(x, 256)
    expect_identical(length(q), as.integer(ggml_type_size(types[[name]]) * 256 / ggml_blck_size(types[[name]])), label = name)
    if (!name %in% c("q8_1", "tq1_0", "tq2_0")) {  # ternary types keep only signs; Q8_1 has no dequantizer
      back <- get(paste0("dequantize_row_", name))(q, 256)
      expect_lt(max(abs(back - x)), 0.35, label = name)
    }
  }
})

test_that("block facts are the type's name, bytes and elements per block", {
  expect_identical(ggml_quant_block_info(GGML_TYPE_Q4_0),
                   list(type_name = "q4_0", type_size = 18L, block_size = 32L, is_quantized = TRUE))
  expect_identical(ggml_quant_block_info(GGML_TYPE_Q4_K),
                   list(type_name = "q4_K", type_size = 144L, block_size = 256L, is_quantized = TRUE))
  expect_identical(ggml_quant_block_info(GGML_TYPE_F16),
                   list(type_name = "f16", type_size = 2L, block_size = 1L, is_quantized = FALSE))
  expect_error(ggml_quant_block_info("q4_0"))
})

test_that("bad rows, lengths and types are R errors", {
  expect_error(quantize_row_q4_0_ref(runif(31), 31), "whole blocks")
  expect_error(quantize_row_q4_0_ref(runif(64), 32), "n_elements")
  expect_error(quantize_row_q4_0_ref(c(NA, runif(31)), 32), "finite")
  expect_error(quantize_row_q4_0_ref("a", 1))
  expect_error(quantize_row_q4_0_ref(runif(32), -32))
  expect_error(dequantize_row_q8_K(1:10, 256), "raw")
  expect_error(dequantize_row_q8_K(raw(10), 256), "bytes")
  expect_error(dequantize_row_q8_K(raw(292), 100), "multiple")
  expect_error(dequantize_row_q8_K(raw(292), NA), "multiple")
  # the IQ1/IQ2/IQ3 types are named, not implemented: every call is refused
  expect_error(quantize_row_iq3_xxs_ref(runif(256), 256), "iq3_xxs")
  expect_error(quantize_iq2_xs(runif(256), 1, 256, rep(1, 256)), "iq2_xs")
  expect_error(dequantize_row_iq1_m(raw(56), 256), "iq1_m")
})

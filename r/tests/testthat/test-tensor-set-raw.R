# ggml_backend_tensor_set_data with a raw vector: the bytes of whole blocks of
# the tensor's type, copied as they are (offset in elements, as for numbers).

q8_0_block <- function(q) {
  # d = 0.5 as fp16 (0x3800, little-endian), then 32 int8 quants
  c(as.raw(c(0x00, 0x38)), writeBin(as.integer(q), raw(), size = 1))
}

test_that("raw Q8_0 blocks are stored as given and read back as d * q", {
  w <- backend_tensor_1d(GGML_TYPE_Q8_0, 64)
  ggml_backend_tensor_set_data(w, rep(0, 64))
  q <- -16:15
  ggml_backend_tensor_set_data(w, q8_0_block(q), offset = 32)
  expect_identical(ggml_backend_tensor_get(w, 34, 34), q8_0_block(q))
  expect_equal(ggml_backend_tensor_get_data(w), c(rep(0, 32), 0.5 * q))
})

test_that("raw bytes fill an F32 tensor as its floats", {
  a <- backend_tensor_1d(GGML_TYPE_F32, 3)
  ggml_backend_tensor_set_data(a, c(9, 9, 9))
  ggml_backend_tensor_set_data(a, writeBin(c(1.5, -2), raw(), size = 4), offset = 1)
  expect_equal(ggml_backend_tensor_get_data(a), c(9, 1.5, -2))
})

test_that("raw data that is not whole blocks inside the tensor is refused", {
  w <- backend_tensor_1d(GGML_TYPE_Q8_0, 64)
  block <- q8_0_block(rep(1, 32))
  expect_error(ggml_backend_tensor_set_data(w, block[-1]), "not a whole number of q8_0 blocks")
  expect_error(ggml_backend_tensor_set_data(w, c(block, block, block)), "do not fit")
  expect_error(ggml_backend_tensor_set_data(w, block, offset = 16), "multiples of 32")
  expect_error(ggml_backend_tensor_set_data(w, block, offset = NA), "offset")
})

test_that("raw data for a tensor without memory or of a freed context is refused", {
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  w <- ggml_new_tensor_1d(ctx, GGML_TYPE_Q8_0, 32)
  block <- q8_0_block(rep(1, 32))
  expect_error(ggml_backend_tensor_set_data(w, block), "has no memory")
  ggml_free(ctx)
  expect_error(ggml_backend_tensor_set_data(w, block), "freed")
})

test_that("the Vulkan probes answer as a build without Vulkan", {
  expect_false(ggml_vulkan_available())
  expect_identical(ggml_vulkan_device_count(), 0L)
})

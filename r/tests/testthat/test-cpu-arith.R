# ggml_cpu_add / ggml_cpu_mul: immediate element-wise results as R vectors.

test_that("sums and products pair the elements in element order, in float", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  a <- tensor_of(ctx, matrix(c(1, 2, 3, 4, 5, 6), 2, 3))
  b <- tensor_of(ctx, c(10, 20, 30, 40, 50, 0.1))
  expect_equal(ggml_cpu_add(a, b), c(11, 22, 33, 44, 55, 6.1), tolerance = 1e-7)
  expect_false(identical(ggml_cpu_add(a, b)[6], 6.1))  # float, not double, arithmetic
  expect_equal(ggml_cpu_mul(a, b), c(10, 40, 90, 160, 250, 0.6), tolerance = 1e-7)
  # the inputs are left alone
  expect_identical(ggml_get_f32(a), c(1, 2, 3, 4, 5, 6))
  empty <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 0)
  expect_identical(ggml_cpu_mul(empty, empty), numeric(0))
})

test_that("other types, sizes and handles are R errors", {
  ctx <- ggml_init(1024^2)
  a <- tensor_of(ctx, c(1, 2, 3))
  expect_error(ggml_cpu_add(a, tensor_of(ctx, c(1, 2))), "same number")
  expect_error(ggml_cpu_mul(a, tensor_of(ctx, c(1, 2, 3), GGML_TYPE_F16)), "F32")
  expect_error(ggml_cpu_mul(a, 1:3), "ggml_tensor")
  ggml_free(ctx)
  expect_error(ggml_cpu_add(a, a))
})

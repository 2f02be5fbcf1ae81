# ggml_im2col with upstream's argument names (is_2D) and CRAN's default (2-D).

test_that("2-D patches of a 3 x 3 image under a 2 x 2 kernel, kernel column fastest", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  kernel <- ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 2, 1, 1)
  image <- tensor_of(ctx, array(1:9, c(3, 3, 1, 1)))
  patches <- ggml_im2col(ctx, kernel, image, 1, 1, 0, 0, 1, 1)
  expect_identical(ggml_tensor_shape(patches), c(4, 2, 2, 1))
  # patch (ow, oh) = image[ow + 0:1, oh + 0:1] (0-based), read kw first
  expect_identical(compute(ctx, patches), c(1, 2, 4, 5,  2, 3, 5, 6,  4, 5, 7, 8,  5, 6, 8, 9))
  explicit <- ggml_im2col(ctx, kernel, image, 1, 1, 0, 0, 1, 1, is_2D = TRUE, dst_type = GGML_TYPE_F32)
  expect_identical(compute(ctx, explicit), compute(ctx, patches))
  expect_error(ggml_im2col(ctx, kernel, image, 1, 1, 0, 0, 1, 1, is_2D = NA))
})

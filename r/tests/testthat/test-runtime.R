# Version, self-test, CPU features, log and abort settings, the seed and the
# OpenMP thread setting (R/runtime.R, R/seed.R).

test_that("version and self-test", {
  expect_identical(ggml_version(), "0.1.0")
  expect_true(ggml_test())
})

test_that("CPU features agree with the SIMD path the kernels chose", {
  f <- ggml_cpu_features()
  expect_true(all(vapply(f, is.logical, TRUE)))
  expect_true(all(c("sse3", "avx2", "avx512", "neon", "riscv_v", "llamafile") %in% names(f)))
  expect_identical(ggml_cpu_has_avx2(), f$avx2)
  expect_identical(ggml_cpu_has_neon(), f$neon)
  simd <- ggml_cpu_simd_name()
  if (simd == "avx2") expect_true(f$avx2)
  if (simd == "avx512") expect_true(f$avx512)
  expect_type(ggml_cpu_get_sve_cnt(), "integer")
  expect_type(ggml_cpu_get_rvv_vlen(), "integer")
})

test_that("the log goes to R's console and can be switched", {
  on.exit(ggml_log_set_r())
  expect_true(ggml_log_is_r_enabled())
  ggml_log_set_default()
  expect_false(ggml_log_is_r_enabled())
  ggml_log_set_r()
  expect_true(ggml_log_is_r_enabled())
  on.exit(ggml_set_abort_callback_default(), add = TRUE)
  expect_false(ggml_abort_is_r_enabled())
  ggml_set_abort_callback_r()
  expect_true(ggml_abort_is_r_enabled())
})

test_that("ggml_set_seed seeds R's generator and checks its argument", {
  ggml_set_seed(7)
  a <- runif(3)
  set.seed(7)
  expect_identical(a, runif(3))
  expect_identical(withVisible(ggml_set_seed(3))$visible, FALSE)
  expect_identical(ggml_set_seed(3), 3L)
  expect_null(ggml_set_seed(NULL))
  expect_error(ggml_set_seed(1.5), "single whole number")
  expect_error(ggml_set_seed("1"), "single whole number")
  expect_error(ggml_set_seed(c(1, 2)), "single whole number")
})

test_that("ggml_set_omp_threads sets the default thread count", {
  old <- ggml_set_omp_threads(1)
  on.exit(ggml_set_n_threads(old))
  expect_identical(ggml_get_n_threads(), 1L)
  expect_error(ggml_set_omp_threads(0))
})

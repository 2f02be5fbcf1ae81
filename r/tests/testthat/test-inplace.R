# The _inplace forms: the same values as their plain forms (computed here with
# base R), written over their first input, whose handle then reads them.

inplace_case <- function(ctx, op, x, ...) {
  a <- tensor_of(ctx, x)
  r <- op(ctx, a, ...)
  list(result = compute(ctx, r), input_after = ggml_get_f32(a))
}

test_that("unary _inplace forms compute their op and write it over the input", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  x <- c(-2.5, -1, -0.25, 0, 0.5, 1.5, 2.5, 3)
  sigmoid <- function(v) 1 / (1 + exp(-v))
  cases <- list(
    ggml_abs_inplace = abs(x), ggml_neg_inplace = -x, ggml_sgn_inplace = sign(x),
    ggml_step_inplace = as.numeric(x > 0), ggml_tanh_inplace = tanh(x),
    ggml_elu_inplace = ifelse(x > 0, x, exp(x) - 1), ggml_relu_inplace = pmax(x, 0),
    ggml_sigmoid_inplace = sigmoid(x), ggml_silu_inplace = x * sigmoid(x),
    ggml_gelu_erf_inplace = x * pnorm(x), ggml_gelu_quick_inplace = x * sigmoid(1.702 * x),
    ggml_gelu_inplace = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))),
    ggml_exp_inplace = exp(x), ggml_expm1_inplace = exp(x) - 1, ggml_softplus_inplace = log1p(exp(x)),
    ggml_floor_inplace = floor(x), ggml_ceil_inplace = ceiling(x),
    ggml_round_inplace = sign(x) * floor(abs(x) + 0.5), ggml_trunc_inplace = trunc(x),
    ggml_sin_inplace = sin(x), ggml_cos_inplace = cos(x), ggml_sqr_inplace = x^2)
  for (name in names(cases)) {
    got <- inplace_case(ctx, get(name), x)
    expect_equal(got$result, cases[[name]], tolerance = 1e-3, label = name)
    expect_identical(got$input_after, got$result, label = name)
  }
  pos <- c(0.25, 1, 4, 9)
  expect_equal(inplace_case(ctx, ggml_sqrt_inplace, pos)$result, c(0.5, 1, 2, 3), tolerance = 1e-6)
  expect_equal(inplace_case(ctx, ggml_log_inplace, pos)$result, log(pos), tolerance = 1e-6)
  expect_equal(inplace_case(ctx, ggml_unary_inplace, x, GGML_UNARY_OP_ABS)$result, abs(x))
  expect_equal(inplace_case(ctx, ggml_dup_inplace, x)$result, x)
})

test_that("binary and scaling _inplace forms broadcast b and write over a", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  A <- matrix(c(2, 4, 6, 8, 10, 12), 2, 3)
  b <- c(2, 4)
  for (case in list(list(ggml_sub_inplace, A - b), list(ggml_mul_inplace, A * b), list(ggml_div_inplace, A / b))) {
    got <- inplace_case(ctx, case[[1]], A, tensor_of(ctx, b))
    expect_equal(got$result, as.numeric(case[[2]]))
    expect_identical(got$input_after, got$result)
  }
  expect_equal(inplace_case(ctx, ggml_add1_inplace, A, tensor_of(ctx, 0.5))$result, as.numeric(A + 0.5))
  expect_equal(inplace_case(ctx, ggml_scale_inplace, A, 0.5)$result, as.numeric(A / 2))
  expect_equal(inplace_case(ctx, ggml_scale_bias_inplace, A, 2, -1)$result, as.numeric(2 * A - 1))
  # acc: b added into the second column of A (byte offset of one row of 2 floats)
  got <- inplace_case(ctx, ggml_acc_inplace, A, tensor_of(ctx, c(1, 1)), 8, 24, 24, 8)
  expect_equal(got$result, c(2, 4, 7, 9, 10, 12))
})

test_that("norm, softmax and rope _inplace forms equal their plain forms", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  X <- matrix(c(1, 2, 3, 4, -1, 0, 5, 2), 4, 2)
  centered <- sweep(X, 2, colMeans(X))
  expect_equal(inplace_case(ctx, ggml_norm_inplace, X, 0)$result,
               as.numeric(sweep(centered, 2, sqrt(colMeans(centered^2)), "/")), tolerance = 1e-5)
  expect_equal(inplace_case(ctx, ggml_rms_norm_inplace, X, 0)$result,
               as.numeric(sweep(X, 2, sqrt(colMeans(X^2)), "/")), tolerance = 1e-5)
  expect_equal(inplace_case(ctx, ggml_l2_norm_inplace, X, 0)$result,
               as.numeric(sweep(X, 2, sqrt(colSums(X^2)), "/")), tolerance = 1e-5)
  softmax <- apply(X, 2, function(v) exp(v) / sum(exp(v)))
  expect_equal(inplace_case(ctx, ggml_soft_max_inplace, X)$result, as.numeric(softmax), tolerance = 1e-6)
  expect_equal(inplace_case(ctx, ggml_soft_max_ext_inplace, X, NULL, 2)$result,
               as.numeric(apply(2 * X, 2, function(v) exp(v) / sum(exp(v)))), tolerance = 1e-6)
  # group norm over 2 channels of 2 x 1: each channel normalised alone
  G <- array(c(1, 3, 10, 14), c(2, 1, 2))
  expect_equal(inplace_case(ctx, ggml_group_norm_inplace, G, 2, 0)$result, c(-1, 1, -1, 1), tolerance = 1e-5)
  # rope at positions 0 and 1 (one head, two tokens): the pair of token 1 turns by 1 radian
  R <- array(c(1, 0, 1, 0), c(2, 1, 2))
  pos <- ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2)
  ggml_set_i32(pos, 0:1)
  expect_equal(inplace_case(ctx, ggml_rope_inplace, R, pos, 2)$result, c(1, 0, cos(1), sin(1)), tolerance = 1e-6)
  expect_equal(inplace_case(ctx, ggml_rope_ext_inplace, R, pos, NULL, 2)$result, c(1, 0, cos(1), sin(1)), tolerance = 1e-6)
  expect_equal(inplace_case(ctx, ggml_rope_custom_inplace, R, pos, 2)$result, c(1, 0, cos(1), sin(1)), tolerance = 1e-6)
})

test_that("the _inplace forms refuse what their plain forms refuse, and autodiff through one that overwrites what its rule reads", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  a <- tensor_of(ctx, c(1, 2, 3, 4))
  expect_error(ggml_mul_inplace(ctx, a, tensor_of(ctx, c(1, 2, 3))))
  expect_error(ggml_abs_inplace(ctx, "a"))
  expect_error(ggml_scale_inplace(ctx, a, NA))
  expect_error(ggml_norm_inplace(ctx, ggml_transpose(ctx, tensor_of(ctx, matrix(1:6, 2, 3)))))
  x <- tensor_of(ctx, c(1, 2, 3))
  ggml_set_param(x)
  loss <- ggml_sum(ctx, ggml_sqr_inplace(ctx, x))
  g <- ggml_build_forward_expand_grads(ctx, loss)
  expect_error(ggml_build_backward_expand(ctx, g))
  freed <- ggml_init(1024^2)
  t <- tensor_of(freed, 1)
  ggml_free(freed)
  expect_error(ggml_neg_inplace(ctx, t))
})

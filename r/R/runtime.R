# The running library: its version and a self-test, the CPU's features, where
# the library's log and abort messages go, and CRAN ggmlR's OpenMP thread
# setting (src/glue_runtime.c).

ggml_version <- function() .Call(C_ggml_version)

# A small computation checked against its known result: TRUE when the
# library computes correctly here.
ggml_test <- function() {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4)
  b <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4)
  ggml_set_f32(a, c(1, 2, 3, 4))
  ggml_set_f32(b, c(0.5, -2, 8, 1))
  y <- ggml_mul(ctx, ggml_add(ctx, a, b), b)
  ggml_graph_compute(ctx, ggml_build_forward_expand(ctx, y))
  identical(ggml_get_f32(y), c(0.75, 0, 88, 5))
}

# ---- CPU features ----

ggml_cpu_features <- function() as.list(.Call(C_ggml_cpu_has_features))

ggml_cpu_has <- function(feature) .Call(C_ggml_cpu_has_features)[[feature]]
ggml_cpu_has_sse3 <- function() ggml_cpu_has("sse3")
ggml_cpu_has_ssse3 <- function() ggml_cpu_has("ssse3")
ggml_cpu_has_avx <- function() ggml_cpu_has("avx")
ggml_cpu_has_avx_vnni <- function() ggml_cpu_has("avx_vnni")
ggml_cpu_has_avx2 <- function() ggml_cpu_has("avx2")
ggml_cpu_has_bmi2 <- function() ggml_cpu_has("bmi2")
ggml_cpu_has_f16c <- function() ggml_cpu_has("f16c")
ggml_cpu_has_fma <- function() ggml_cpu_has("fma")
ggml_cpu_has_avx512 <- function() ggml_cpu_has("avx512")
ggml_cpu_has_avx512_vbmi <- function() ggml_cpu_has("avx512_vbmi")
ggml_cpu_has_avx512_vnni <- function() ggml_cpu_has("avx512_vnni")
ggml_cpu_has_avx512_bf16 <- function() ggml_cpu_has("avx512_bf16")
ggml_cpu_has_amx_int8 <- function() ggml_cpu_has("amx_int8")
ggml_cpu_has_neon <- function() ggml_cpu_has("neon")
ggml_cpu_has_arm_fma <- function() ggml_cpu_has("arm_fma")
ggml_cpu_has_fp16_va <- function() ggml_cpu_has("fp16_va")
ggml_cpu_has_dotprod <- function() ggml_cpu_has("dotprod")
ggml_cpu_has_matmul_int8 <- function() ggml_cpu_has("matmul_int8")
ggml_cpu_has_sve <- function() ggml_cpu_has("sve")
ggml_cpu_has_sme <- function() ggml_cpu_has("sme")
ggml_cpu_has_riscv_v <- function() ggml_cpu_has("riscv_v")
ggml_cpu_has_vsx <- function() ggml_cpu_has("vsx")
ggml_cpu_has_vxe <- function() ggml_cpu_has("vxe")
ggml_cpu_has_wasm_simd <- function() ggml_cpu_has("wasm_simd")
ggml_cpu_has_llamafile <- function() ggml_cpu_has("llamafile")
ggml_cpu_get_sve_cnt <- function() .Call(C_ggml_cpu_get_sve_cnt)
ggml_cpu_get_rvv_vlen <- function() .Call(C_ggml_cpu_get_rvv_vlen)

# ---- log and abort messages ----

ggml_log_set_r <- function() invisible(.Call(C_ggml_log_set_r))
ggml_log_set_default <- function() invisible(.Call(C_ggml_log_set_default))
ggml_log_is_r_enabled <- function() .Call(C_ggml_log_is_r_enabled)
ggml_set_abort_callback_r <- function() invisible(.Call(C_ggml_set_abort_callback_r))
ggml_set_abort_callback_default <- function() invisible(.Call(C_ggml_set_abort_callback_default))
ggml_abort_is_r_enabled <- function() .Call(C_ggml_abort_is_r_enabled)

# ---- threads ----

# CRAN ggmlR sets its OpenMP thread count; here the CPU code runs on the
# library's own workers, so this sets the package default thread count
# (ggml_set_n_threads) and returns the previous one invisibly.
ggml_set_omp_threads <- function(n) ggml_set_n_threads(n)

# Multi-section rope (Qwen2-VL's M-RoPE and its VISION / IMROPE variants),
# CRAN ggmlR's signature: the positions b hold 4 I32 streams of ne2 tokens
# each, and sections[s] pairs of each row take their angle from stream s.

ggml_rope_multi <- function(ctx, a, b, c = NULL, n_dims, sections = c(0L, 0L, 0L, 0L), mode = 0L,
                            n_ctx_orig = 0L, freq_base = 10000, freq_scale = 1, ext_factor = 0,
                            attn_factor = 1, beta_fast = 32, beta_slow = 1) {
  .Call(C_ggml_rope_multi, ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
        ext_factor, attn_factor, beta_fast, beta_slow)
}

ggml_rope_multi_inplace <- function(ctx, a, b, c = NULL, n_dims, sections = c(0L, 0L, 0L, 0L), mode = 0L,
                                    n_ctx_orig = 0L, freq_base = 10000, freq_scale = 1, ext_factor = 0,
                                    attn_factor = 1, beta_fast = 32, beta_slow = 1) {
  .Call(C_ggml_rope_multi_inplace, ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
        ext_factor, attn_factor, beta_fast, beta_slow)
}

ggml_rope_multi_back <- function(ctx, a, b, c = NULL, n_dims, sections = c(0L, 0L, 0L, 0L), mode = 0L,
                                 n_ctx_orig = 0L, freq_base = 10000, freq_scale = 1, ext_factor = 0,
                                 attn_factor = 1, beta_fast = 32, beta_slow = 1) {
  .Call(C_ggml_rope_multi_back, ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
        ext_factor, attn_factor, beta_fast, beta_slow)
}

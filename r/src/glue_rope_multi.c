/* glue_rope_multi.c -- the multi-section rope constructors (ggml_rope_multi,
 * its _inplace form and its gradient), bound by hand: their sections are a C
 * array of GGML_MROPE_SECTIONS ints, a kind the binding table has no row
 * conversion for. Every argument is converted and checked before the call. */
#include "glue.h"

typedef struct ggml_tensor * (*rope_multi_fn)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *,
                                              struct ggml_tensor *, int, int *, int, int, float, float, float, float,
                                              float, float);

static SEXP rope_multi(const char * fn, rope_multi_fn construct, SEXP r_ctx, SEXP r_a, SEXP r_b, SEXP r_c,
                       SEXP r_n_dims, SEXP r_sections, SEXP r_mode, SEXP r_n_ctx_orig, SEXP r_freq_base,
                       SEXP r_freq_scale, SEXP r_ext_factor, SEXP r_attn_factor, SEXP r_beta_fast, SEXP r_beta_slow) {
    rg_ctx * ctx = rg_ctx_get(r_ctx, "ctx");
    struct ggml_tensor * a = TENSOR(ctx, r_a, "a");
    struct ggml_tensor * b = TENSOR(ctx, r_b, "b");
    struct ggml_tensor * c = TENSOR_OR_NULL(ctx, r_c, "c");
    const int n_dims = rg_int(r_n_dims, "n_dims");
    if (rg_numeric_len(r_sections, "sections") != GGML_MROPE_SECTIONS)
        Rf_error("%s: 'sections' must hold %d whole numbers", fn, GGML_MROPE_SECTIONS);
    int sections[GGML_MROPE_SECTIONS];
    for (int s = 0; s < GGML_MROPE_SECTIONS; s++) {
        const double v = rg_num_at(r_sections, s);
        if (!rg_is_int32(v)) Rf_error("%s: element %d of 'sections' (%g) is not a whole number", fn, s + 1, v);
        sections[s] = (int) v;
    }
    const int mode = rg_int(r_mode, "mode");
    const int n_ctx_orig = rg_int(r_n_ctx_orig, "n_ctx_orig");
    const float freq_base = rg_float(r_freq_base, "freq_base");
    const float freq_scale = rg_float(r_freq_scale, "freq_scale");
    const float ext_factor = rg_float(r_ext_factor, "ext_factor");
    const float attn_factor = rg_float(r_attn_factor, "attn_factor");
    const float beta_fast = rg_float(r_beta_fast, "beta_fast");
    const float beta_slow = rg_float(r_beta_slow, "beta_slow");
    return FINISH(r_ctx, fn, construct(ctx->ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
                                       ext_factor, attn_factor, beta_fast, beta_slow));
}

#define ROPE_MULTI_ENTRY(name)                                                                                     \
    SEXP R_##name(SEXP r_ctx, SEXP r_a, SEXP r_b, SEXP r_c, SEXP r_n_dims, SEXP r_sections, SEXP r_mode,            \
                  SEXP r_n_ctx_orig, SEXP r_freq_base, SEXP r_freq_scale, SEXP r_ext_factor, SEXP r_attn_factor,    \
                  SEXP r_beta_fast, SEXP r_beta_slow) {                                                             \
        return rope_multi(#name, name, r_ctx, r_a, r_b, r_c, r_n_dims, r_sections, r_mode, r_n_ctx_orig,           \
                          r_freq_base, r_freq_scale, r_ext_factor, r_attn_factor, r_beta_fast, r_beta_slow);        \
    }

ROPE_MULTI_ENTRY(ggml_rope_multi)
ROPE_MULTI_ENTRY(ggml_rope_multi_inplace)
ROPE_MULTI_ENTRY(ggml_rope_multi_back)

# Upstream's per-row reference quantizers (quantize_row_<type>_ref), Q8_K's
# dequantizer and a summary of a type's block, with CRAN ggmlR's names.

.row_ref_quantizer <- function(type) {
  force(type)
  function(src_data, n_elements) .Call(C_ggml_quantize_row_ref, type, src_data, n_elements)
}

quantize_row_q4_0_ref <- .row_ref_quantizer(GGML_TYPE_Q4_0)
quantize_row_q4_1_ref <- .row_ref_quantizer(GGML_TYPE_Q4_1)
quantize_row_q5_0_ref <- .row_ref_quantizer(GGML_TYPE_Q5_0)
quantize_row_q5_1_ref <- .row_ref_quantizer(GGML_TYPE_Q5_1)
quantize_row_q8_0_ref <- .row_ref_quantizer(GGML_TYPE_Q8_0)
quantize_row_q8_1_ref <- .row_ref_quantizer(GGML_TYPE_Q8_1)
quantize_row_q2_K_ref <- .row_ref_quantizer(GGML_TYPE_Q2_K)
quantize_row_q3_K_ref <- .row_ref_quantizer(GGML_TYPE_Q3_K)
quantize_row_q4_K_ref <- .row_ref_quantizer(GGML_TYPE_Q4_K)
quantize_row_q5_K_ref <- .row_ref_quantizer(GGML_TYPE_Q5_K)
quantize_row_q6_K_ref <- .row_ref_quantizer(GGML_TYPE_Q6_K)
quantize_row_q8_K_ref <- .row_ref_quantizer(GGML_TYPE_Q8_K)
quantize_row_tq1_0_ref <- .row_ref_quantizer(GGML_TYPE_TQ1_0)
quantize_row_tq2_0_ref <- .row_ref_quantizer(GGML_TYPE_TQ2_0)
quantize_row_iq4_nl_ref <- .row_ref_quantizer(GGML_TYPE_IQ4_NL)
quantize_row_iq4_xs_ref <- .row_ref_quantizer(GGML_TYPE_IQ4_XS)
quantize_row_mxfp4_ref <- .row_ref_quantizer(GGML_TYPE_MXFP4)
# named-only types (no grid tables here): refused with an error naming the type
quantize_row_iq3_xxs_ref <- .row_ref_quantizer(GGML_TYPE_IQ3_XXS)
quantize_row_iq3_s_ref <- .row_ref_quantizer(GGML_TYPE_IQ3_S)
quantize_row_iq2_s_ref <- .row_ref_quantizer(GGML_TYPE_IQ2_S)

# Q8_K is an activation type: as upstream, its public traits have no
# dequantizer, so the library's cast kernel reads the blocks instead.
dequantize_row_q8_K <- function(raw_data, n_elements) {
  if (!is.raw(raw_data)) stop("dequantize_row_q8_K: 'raw_data' must be a raw vector", call. = FALSE)
  if (!is.numeric(n_elements) || length(n_elements) != 1 || is.na(n_elements) || n_elements < 0 ||
      n_elements %% ggml_blck_size(GGML_TYPE_Q8_K) != 0)
    stop("dequantize_row_q8_K: 'n_elements' must be a multiple of ", ggml_blck_size(GGML_TYPE_Q8_K), call. = FALSE)
  bytes <- n_elements / ggml_blck_size(GGML_TYPE_Q8_K) * ggml_type_size(GGML_TYPE_Q8_K)
  if (length(raw_data) < bytes)
    stop("dequantize_row_q8_K: ", n_elements, " elements take ", bytes, " bytes, 'raw_data' has ", length(raw_data),
         call. = FALSE)
  if (n_elements == 0) return(numeric(0))
  ctx <- ggml_init(bytes + 4 * n_elements + 1024^2)
  on.exit(ggml_free(ctx))
  blocks <- ggml_new_tensor_1d(ctx, GGML_TYPE_Q8_K, n_elements)
  ggml_backend_tensor_set(blocks, raw_data[seq_len(bytes)], 0)
  values <- ggml_cast(ctx, blocks, GGML_TYPE_F32)
  ggml_graph_compute(ctx, ggml_build_forward_expand(ctx, values))
  ggml_get_f32(values)
}

ggml_quant_block_info <- function(type) {
  list(type_name = ggml_type_name(type), type_size = as.integer(ggml_type_size(type)),
       block_size = as.integer(ggml_blck_size(type)), is_quantized = ggml_is_quantized(type))
}

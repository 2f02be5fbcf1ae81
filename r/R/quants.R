# Quantized types from R (src/glue_tensor.c), with CRAN ggmlR's names and
# calling conventions: facts about the types, quantizing R numbers into the
# bytes of a type and dequantizing such bytes. Tensors of these types take
# and give R numbers directly: ggml_new_tensor_from_array(ctx, x, type),
# ggml_set_array() and ggml_get_array() quantize and dequantize.

ggml_blck_size <- function(type) .Call(C_ggml_blck_size, type)
ggml_type_sizef <- function(type) .Call(C_ggml_type_sizef, type)
ggml_is_quantized <- function(type) .Call(C_ggml_is_quantized, type)
ggml_quantize_requires_imatrix <- function(type) .Call(C_ggml_quantize_requires_imatrix, type)
ggml_quantize_init <- function(type) invisible(.Call(C_ggml_quantize_init, type))
ggml_quantize_free <- function() invisible(.Call(C_ggml_quantize_free))

# nrows rows of n_per_row values of src (row after row) as the bytes of type.
ggml_quantize_chunk <- function(type, src, nrows, n_per_row, imatrix = NULL) {
  .Call(C_ggml_quantize_chunk, type, src, nrows, n_per_row, imatrix)
}

# CRAN ggmlR's per-type functions, for the types with both converters here.
.dequantizer <- function(type) {
  force(type)
  function(raw_data, n_elements) .Call(C_ggml_dequantize_row, type, raw_data, n_elements)
}
.quantizer <- function(type) {
  force(type)
  function(src_data, n_rows, n_per_row, imatrix = NULL) ggml_quantize_chunk(type, src_data, n_rows, n_per_row, imatrix)
}

dequantize_row_q4_0 <- .dequantizer(GGML_TYPE_Q4_0)
dequantize_row_q4_1 <- .dequantizer(GGML_TYPE_Q4_1)
dequantize_row_q5_0 <- .dequantizer(GGML_TYPE_Q5_0)
dequantize_row_q5_1 <- .dequantizer(GGML_TYPE_Q5_1)
dequantize_row_q8_0 <- .dequantizer(GGML_TYPE_Q8_0)
dequantize_row_q2_K <- .dequantizer(GGML_TYPE_Q2_K)
dequantize_row_q3_K <- .dequantizer(GGML_TYPE_Q3_K)
dequantize_row_q4_K <- .dequantizer(GGML_TYPE_Q4_K)
dequantize_row_q5_K <- .dequantizer(GGML_TYPE_Q5_K)
dequantize_row_q6_K <- .dequantizer(GGML_TYPE_Q6_K)
dequantize_row_iq4_nl <- .dequantizer(GGML_TYPE_IQ4_NL)
dequantize_row_iq4_xs <- .dequantizer(GGML_TYPE_IQ4_XS)
dequantize_row_mxfp4 <- .dequantizer(GGML_TYPE_MXFP4)
dequantize_row_nvfp4 <- .dequantizer(GGML_TYPE_NVFP4)
dequantize_row_q1_0 <- .dequantizer(GGML_TYPE_Q1_0)
dequantize_row_tq1_0 <- .dequantizer(GGML_TYPE_TQ1_0)
dequantize_row_tq2_0 <- .dequantizer(GGML_TYPE_TQ2_0)

quantize_q4_0 <- .quantizer(GGML_TYPE_Q4_0)
quantize_q4_1 <- .quantizer(GGML_TYPE_Q4_1)
quantize_q5_0 <- .quantizer(GGML_TYPE_Q5_0)
quantize_q5_1 <- .quantizer(GGML_TYPE_Q5_1)
quantize_q8_0 <- .quantizer(GGML_TYPE_Q8_0)
quantize_q2_K <- .quantizer(GGML_TYPE_Q2_K)
quantize_q3_K <- .quantizer(GGML_TYPE_Q3_K)
quantize_q4_K <- .quantizer(GGML_TYPE_Q4_K)
quantize_q5_K <- .quantizer(GGML_TYPE_Q5_K)
quantize_q6_K <- .quantizer(GGML_TYPE_Q6_K)
quantize_iq4_nl <- .quantizer(GGML_TYPE_IQ4_NL)
quantize_iq4_xs <- .quantizer(GGML_TYPE_IQ4_XS)
quantize_mxfp4 <- .quantizer(GGML_TYPE_MXFP4)
quantize_nvfp4 <- .quantizer(GGML_TYPE_NVFP4)
quantize_q1_0 <- .quantizer(GGML_TYPE_Q1_0)
quantize_tq1_0 <- .quantizer(GGML_TYPE_TQ1_0)
quantize_tq2_0 <- .quantizer(GGML_TYPE_TQ2_0)

# CRAN's names for the IQ1/IQ2/IQ3 types, which this library names without
# implementing (their grid tables are not in it): the library refuses each
# call with an error naming the type.
dequantize_row_iq2_xxs <- .dequantizer(GGML_TYPE_IQ2_XXS)
dequantize_row_iq2_xs <- .dequantizer(GGML_TYPE_IQ2_XS)
dequantize_row_iq2_s <- .dequantizer(GGML_TYPE_IQ2_S)
dequantize_row_iq3_xxs <- .dequantizer(GGML_TYPE_IQ3_XXS)
dequantize_row_iq3_s <- .dequantizer(GGML_TYPE_IQ3_S)
dequantize_row_iq1_s <- .dequantizer(GGML_TYPE_IQ1_S)
dequantize_row_iq1_m <- .dequantizer(GGML_TYPE_IQ1_M)
quantize_iq2_xxs <- .quantizer(GGML_TYPE_IQ2_XXS)
quantize_iq2_xs <- .quantizer(GGML_TYPE_IQ2_XS)
quantize_iq2_s <- .quantizer(GGML_TYPE_IQ2_S)
quantize_iq3_xxs <- .quantizer(GGML_TYPE_IQ3_XXS)
quantize_iq3_s <- .quantizer(GGML_TYPE_IQ3_S)
quantize_iq1_s <- .quantizer(GGML_TYPE_IQ1_S)
quantize_iq1_m <- .quantizer(GGML_TYPE_IQ1_M)

/* llama_ref.h -- a float64 reference forward pass of a llama-family model
 * (plain loops over the weights, dequantized), for the llama tests. */
#ifndef GGMLR_TEST_LLAMA_REF_H
#define GGMLR_TEST_LLAMA_REF_H

#include "llama.h"

/* The weights of m as doubles; when lora is not NULL each adapted matrix
 * computes W x~ + (alpha/r) B A x, x~ the activations rounded as mul_mat
 * rounds them for W's type (8-bit blocks for a quantized W, x otherwise). */
struct llama_ref;
/* tolerance of logits on quantized weights against this reference: one
 * activation that float rounding moves to the next 8-bit level is a step the
 * reference cannot follow; a few such steps stay below it, a wrong scale or
 * block layout gives O(1) */
#define LLAMA_REF_TOL_QUANT 1e-2
struct llama_ref * llama_ref_new(const struct llama_model * m, const struct llama_lora * lora);
void llama_ref_free(struct llama_ref * r);
/* logits [T][n_vocab] of tokens[0..T) from position 0 */
void llama_ref_forward(const struct llama_ref * r, const int32_t * tokens, int T, double * logits);

#endif

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

/* mean over t of -log softmax(reference logits_t)[tgt_t] */
double llama_ref_loss(const struct llama_model * m, const struct llama_lora * lora, const int32_t * tok, const int32_t * tgt, int T);
/* The gradients of the cross-entropy of a fixed 6-token sequence with
 * respect to params (marked as parameters here; F32), from the model's
 * backward graph, against central differences of llama_ref_loss at
 * per_param random entries of each: the relative error sqrt(sum (g - fd)^2 /
 * sum fd^2) (INFINITY if nothing could be compared); *n_checked entries. */
double llama_ref_grad_error(const struct llama_model * m, const struct llama_lora * lora, struct ggml_tensor ** params, int n_params,
                            int per_param, int * n_checked);
/* n tokens with structure to learn: a cycle of 23 tokens, one in 8 replaced
 * by noise; the last tenth for validation (free d.tokens). */
struct llama_data llama_test_stream(int n_vocab, int64_t n);

#endif

/* llama_ref.h -- a float64 reference forward pass of a llama-family model
 * (plain loops over the weights, dequantized), for the llama tests. */
#ifndef GGMLR_TEST_LLAMA_REF_H
#define GGMLR_TEST_LLAMA_REF_H

#include "llama.h"

/* The weights of m as doubles; when lora is not NULL each adapted matrix is
 * W + (alpha/r) B A, merged here in double. */
struct llama_ref;
struct llama_ref * llama_ref_new(const struct llama_model * m, const struct llama_lora * lora);
void llama_ref_free(struct llama_ref * r);
/* logits [T][n_vocab] of tokens[0..T) from position 0 */
void llama_ref_forward(const struct llama_ref * r, const int32_t * tokens, int T, double * logits);

#endif

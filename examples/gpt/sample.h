/* sample.h -- text generation from a trained gpt_model. */
#ifndef GPT_SAMPLE_H
#define GPT_SAMPLE_H

#include "data.h"
#include "gpt.h"

/* Writes n_new characters continuing `prompt` to stdout (temperature > 0;
 * top_k <= 0 means the whole vocabulary). Characters of the prompt that are
 * not in the vocabulary are skipped. false + message on failure. */
bool gpt_generate(const struct gpt_model * m, const struct corpus * vocab, const char * prompt, int n_new,
                  float temperature, int top_k, uint64_t seed, int threads);

#endif

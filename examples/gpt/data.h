/* data.h -- a character-level corpus: the text as bytes, its vocabulary (the
 * distinct bytes, sorted), the train/validation split, and seeded batches. */
#ifndef GPT_DATA_H
#define GPT_DATA_H

#include <stdbool.h>
#include <stdint.h>

struct corpus {
    unsigned char vocab[256]; /* id -> byte */
    int id_of[256];           /* byte -> id, -1 when absent */
    int n_vocab;
    int32_t * ids;            /* the whole text as ids */
    int64_t n, n_train;       /* first n_train ids train, the rest validate */
};

/* Reads path; train_frac of the characters (from the start) train. false + message on failure. */
bool corpus_load(struct corpus * c, const char * path, double train_frac);
void corpus_free(struct corpus * c);
/* Uses a vocabulary from a checkpoint instead of the text's own. */
void corpus_set_vocab(struct corpus * c, const unsigned char * vocab, int n_vocab);

/* Rows first_row .. first_row+B-1 of batch `index` of stream `stream` (0
 * train, 1 validation): windows of T+1 ids at offsets that depend only on
 * (seed, stream, index, row), so a run resumed at any step sees the same
 * batches, and N processes taking B rows each see one batch of N*B rows.
 * tokens [B*T] inputs, targets the next ids. */
void corpus_batch(const struct corpus * c, int stream, uint64_t seed, int64_t index, int first_row, int B, int T,
                  int32_t * tokens, int32_t * targets);

#endif

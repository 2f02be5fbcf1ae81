/* data.c -- corpus loading and batches. */
#include "data.h"

#include "rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool corpus_load(struct corpus * c, const char * path, double train_frac) {
    memset(c, 0, sizeof *c);
    FILE * f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "error: cannot open the training text %s\n", path); return false; }
    unsigned char * text = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 1 << 20;
            unsigned char * t = realloc(text, cap);
            if (!t) { free(text); fclose(f); fprintf(stderr, "error: out of memory reading %s\n", path); return false; }
            text = t;
        }
        const size_t got = fread(text + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    const bool read_error = ferror(f);
    fclose(f);
    if (read_error || n < 2) { free(text); fprintf(stderr, "error: %s is unreadable or shorter than 2 characters\n", path); return false; }
    bool seen[256] = {false};
    for (size_t i = 0; i < n; i++) seen[text[i]] = true;
    for (int b = 0; b < 256; b++) {
        c->id_of[b] = seen[b] ? c->n_vocab : -1;
        if (seen[b]) c->vocab[c->n_vocab++] = (unsigned char) b;
    }
    c->ids = malloc(n * sizeof *c->ids);
    if (!c->ids) { free(text); fprintf(stderr, "error: out of memory\n"); return false; }
    for (size_t i = 0; i < n; i++) c->ids[i] = c->id_of[text[i]];
    free(text);
    c->n = (int64_t) n;
    c->n_train = (int64_t) ((double) n * train_frac);
    return true;
}

void corpus_free(struct corpus * c) {
    free(c->ids);
    c->ids = NULL;
}

void corpus_set_vocab(struct corpus * c, const unsigned char * vocab, int n_vocab) {
    for (int b = 0; b < 256; b++) c->id_of[b] = -1;
    for (int i = 0; i < n_vocab; i++) { c->vocab[i] = vocab[i]; c->id_of[vocab[i]] = i; }
    c->n_vocab = n_vocab;
}

void corpus_batch(const struct corpus * c, int stream, uint64_t seed, int64_t index, int B, int T, int32_t * tokens, int32_t * targets) {
    const int64_t start = stream == 0 ? 0 : c->n_train, end = stream == 0 ? c->n_train : c->n;
    const int64_t span = end - start - T;  /* offsets o with o + T < end */
    for (int b = 0; b < B; b++) {
        const uint64_t r = rng_mix(rng_mix(seed * 0x9e3779b97f4a7c15ull + (uint64_t) stream) + (uint64_t) index * 0x632be59bd9b4e019ull + (uint64_t) b);
        const int64_t o = start + (span > 0 ? (int64_t) (r % (uint64_t) span) : 0);
        for (int t = 0; t < T; t++) {
            tokens[b * T + t] = c->ids[o + t];
            targets[b * T + t] = c->ids[o + t + 1];
        }
    }
}

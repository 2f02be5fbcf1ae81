/* sample.c -- the next token from logits: greedy at temperature 0, else
 * softmax(logits / temperature) over the top_k largest, cut to the smallest
 * set whose probability reaches top_p (nucleus), drawn with splitmix64. */
#include "llama.h"

#include "rng.h"

#include <math.h>
#include <stdlib.h>

struct cand { float logit; int id; };

static int by_logit_desc(const void * a, const void * b) {
    const struct cand * x = a, * y = b;
    if (x->logit != y->logit) return x->logit > y->logit ? -1 : 1;
    return x->id - y->id;  /* ties: the smaller id first, so the order is total */
}

int llama_sample(struct llama_sampler * s, const float * logits, int n_vocab) {
    int best = 0;
    for (int i = 1; i < n_vocab; i++) if (logits[i] > logits[best]) best = i;
    if (s->temperature <= 0.0f) return best;
    struct cand * c = malloc((size_t) n_vocab * sizeof *c);
    if (!c) return best;
    for (int i = 0; i < n_vocab; i++) c[i] = (struct cand) {.logit = logits[i], .id = i};
    qsort(c, (size_t) n_vocab, sizeof *c, by_logit_desc);
    int k = s->top_k > 0 && s->top_k < n_vocab ? s->top_k : n_vocab;
    double sum = 0.0;
    for (int i = 0; i < k; i++) sum += exp((double) (c[i].logit - c[0].logit) / s->temperature);
    if (s->top_p > 0.0f && s->top_p < 1.0f) {
        double acc = 0.0;
        for (int i = 0; i < k; i++) {
            acc += exp((double) (c[i].logit - c[0].logit) / s->temperature);
            if (acc >= s->top_p * sum) { k = i + 1; sum = acc; break; }
        }
    }
    double u = rng_uniform(&s->state) * sum;
    int id = c[k - 1].id;
    for (int i = 0; i < k; i++)
        if ((u -= exp((double) (c[i].logit - c[0].logit) / s->temperature)) <= 0.0) { id = c[i].id; break; }
    free(c);
    return id;
}

/* merge.c -- the merge loop of BPE tokenizers, as llama.cpp runs it: all
 * adjacent pairs that score go into a priority queue (highest score first,
 * then the leftmost); the best is merged, its new neighbours queued; a
 * queued pair whose symbols changed since is stale and skipped. O(n log n). */
#include "tokenizer_impl.h"

#include <stdlib.h>

struct bigram { float score; size_t left, right, size; };

static bool before(const struct bigram * x, const struct bigram * y) {
    return x->score > y->score || (x->score == y->score && x->left < y->left);
}

struct heap { struct bigram * b; size_t n; };

static void heap_push(struct heap * h, struct bigram e) {
    size_t i = h->n++;
    for (; i > 0 && before(&e, &h->b[(i - 1) / 2]); i = (i - 1) / 2) h->b[i] = h->b[(i - 1) / 2];
    h->b[i] = e;
}

static struct bigram heap_pop(struct heap * h) {
    const struct bigram top = h->b[0], last = h->b[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && before(&h->b[c + 1], &h->b[c])) c++;
        if (!before(&h->b[c], &last)) break;
        h->b[i] = h->b[c];
        i = c;
    }
    if (h->n) h->b[i] = last;
    return top;
}

static void try_pair(const struct llama_vocab * v, const char * s, const struct tok_sym * y, size_t left, tok_pair_fn pair, struct heap * h) {
    if (left == TOK_NONE || y[left].next == TOK_NONE) return;
    const size_t right = y[left].next;
    float score;
    if (pair(v, s, y[left].start, y[left].size, y[right].size, &score))
        heap_push(h, (struct bigram) {.score = score, .left = left, .right = right, .size = y[left].size + y[right].size});
}

bool tok_merge(const struct llama_vocab * v, const char * s, size_t n, struct tok_sym * y, size_t * ns_out, tok_pair_fn pair) {
    size_t ns = 0;
    for (size_t i = 0; i < n; ns++) {  /* a truncated UTF-8 sequence: what is left */
        size_t l = tok_utf8_len((unsigned char) s[i]);
        if (l > n - i) l = n - i;
        y[ns] = (struct tok_sym) {.start = i, .size = l, .prev = ns ? ns - 1 : TOK_NONE, .next = i + l < n ? ns + 1 : TOK_NONE};
        i += l;
    }
    *ns_out = ns;
    /* the first ns - 1 pairs, then at most two per merge */
    struct heap h = {.b = malloc((3 * ns + 1) * sizeof *h.b), .n = 0};
    if (!h.b) return false;
    for (size_t i = 0; i + 1 < ns; i++) try_pair(v, s, y, i, pair, &h);
    while (h.n) {
        const struct bigram b = heap_pop(&h);
        if (y[b.left].size == 0 || y[b.right].size == 0 || y[b.left].next != b.right || y[b.left].size + y[b.right].size != b.size) continue;
        y[b.left].size = b.size;
        y[b.right].size = 0;
        y[b.left].next = y[b.right].next;
        if (y[b.right].next != TOK_NONE) y[y[b.right].next].prev = b.left;
        try_pair(v, s, y, y[b.left].prev, pair, &h);
        try_pair(v, s, y, b.left, pair, &h);
    }
    free(h.b);
    return true;
}

/* spm.c -- SentencePiece BPE ("llama"), as llama.cpp tokenizes:
 *   text -> (a space prefix) spaces as U+2581 -> one symbol per UTF-8 character
 *   merge the adjacent pair whose joined text is the highest-scored token
 *   each symbol -> its token, or its bytes as <0xXX> tokens (byte fallback), else <unk> */
#include "tokenizer_impl.h"

#include <stdlib.h>
#include <string.h>

#define SPACE_MARK "\xe2\x96\x81"  /* U+2581 */

static bool pair_score(const struct llama_vocab * v, const char * s, size_t a, size_t na, size_t nb, float * score) {
    const int id = tok_find(v, s + a, na + nb);
    if (id < 0) return false;
    *score = v->scores[id];
    return true;
}

/* The start of the next word after s[a]: the next U+2581 that follows another character, or n. */
static size_t word_end(const char * s, size_t n, size_t a) {
    for (size_t k = a + 1; k + 3 <= n; k++)
        if (memcmp(s + k, SPACE_MARK, 3) == 0 && (k < 3 || memcmp(s + k - 3, SPACE_MARK, 3) != 0)) return k;
    return n;
}

bool tok_spm(const struct llama_vocab * v, const char * text, size_t len, bool prefix, struct tok_out * o) {
    size_t n_sp = prefix;
    for (size_t i = 0; i < len; i++) n_sp += text[i] == ' ';
    char * s = malloc(len + 2 * n_sp + 1);
    struct tok_sym * y = malloc((len + 3 * n_sp + 1) * sizeof *y);
    if (!s || !y) { free(s); free(y); return false; }
    size_t n = 0, ns = 0;
    if (prefix) { memcpy(s, SPACE_MARK, 3); n = 3; }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') { memcpy(s + n, SPACE_MARK, 3); n += 3; }
        else s[n++] = text[i];
    }
    /* Merged word by word when no token joins a character to a following
     * U+2581 (then no merge crosses a word start, and each word's merges
     * come in the order the whole text's would): the same tokens, with a
     * small heap instead of one over the whole text. */
    bool ok = true;
    for (size_t a = 0, b; ok && a < n; a = b) {
        b = v->spm_words ? word_end(s, n, a) : n;
        ok = tok_merge(v, s + a, b - a, y, &ns, pair_score);
        for (size_t i = ns ? 0 : TOK_NONE; ok && i != TOK_NONE; i = y[i].next) {
            const char * sym = s + a + y[i].start;
            const int id = tok_find(v, sym, y[i].size);
            if (id >= 0) { ok = tok_push(o, id); continue; }
            for (size_t k = 0; k < y[i].size && ok; k++) {
                const int bid = v->byte_id[(unsigned char) sym[k]];
                ok = tok_push(o, bid >= 0 ? bid : v->unk);
            }
        }
    }
    free(s);
    free(y);
    return ok;
}

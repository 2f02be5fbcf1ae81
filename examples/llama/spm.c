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
    bool ok = tok_merge(v, s, n, y, &ns, pair_score);
    for (size_t i = ns ? 0 : TOK_NONE; ok && i != TOK_NONE; i = y[i].next) {
        const int id = tok_find(v, s + y[i].start, y[i].size);
        if (id >= 0) { ok = tok_push(o, id); continue; }
        for (size_t k = 0; k < y[i].size && ok; k++) {
            const int bid = v->byte_id[(unsigned char) s[y[i].start + k]];
            ok = tok_push(o, bid >= 0 ? bid : v->unk);
        }
    }
    free(s);
    free(y);
    return ok;
}

/* bpe.c -- byte-level BPE ("gpt2"), as llama.cpp tokenizes:
 *   split the text with the file's pre-tokenizer (pretok.c), each piece's
 *   bytes as GPT-2's characters (printable bytes as themselves, the others
 *   from U+0100 on); a piece that is a token is that token when the
 *   pre-tokenizer ignores merges (llama3); else merge the adjacent pair of
 *   lowest rank in tokenizer.ggml.merges, and map each symbol to its token
 *   (else its characters' tokens, else <unk>). */
#include "tokenizer_impl.h"

#include <stdlib.h>

/* ---- GPT-2's byte <-> character map ---- */

static bool printable(unsigned b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255); }

unsigned tok_byte_char(unsigned char b) {
    if (printable(b)) return b;
    unsigned n = 0;  /* the others, in byte order, from 256 */
    for (unsigned c = 0; c < b; c++) n += !printable(c);
    return 256 + n;
}

int tok_char_byte(unsigned cp) {
    if (cp < 256) return printable(cp) ? (int) cp : -1;
    for (unsigned b = 0; b < 256; b++) if (!printable(b) && tok_byte_char((unsigned char) b) == cp) return (int) b;
    return -1;
}

/* ---- merges ---- */

static bool pair_rank(const struct llama_vocab * v, const char * s, size_t a, size_t na, size_t nb, float * score) {
    const int r = tok_merge_rank(v, s + a, na, nb);
    if (r < 0) return false;
    *score = -(float) r;  /* the lowest rank first */
    return true;
}

static size_t put_utf8(char * d, unsigned cp) {
    if (cp < 0x80) { d[0] = (char) cp; return 1; }
    if (cp < 0x800) { d[0] = (char) (0xc0 | (cp >> 6)); d[1] = (char) (0x80 | (cp & 0x3f)); return 2; }
    d[0] = (char) (0xe0 | (cp >> 12)); d[1] = (char) (0x80 | ((cp >> 6) & 0x3f)); d[2] = (char) (0x80 | (cp & 0x3f));
    return 3;
}

/* One pre-tokenized piece. */
static bool bpe_piece(const struct llama_vocab * v, const char * text, size_t len, char * s, struct tok_sym * y, struct tok_out * o) {
    size_t n = 0, ns = 0;
    for (size_t i = 0; i < len; i++) n += put_utf8(s + n, tok_byte_char((unsigned char) text[i]));
    const int whole = v->ignore_merges ? tok_find(v, s, n) : -1;
    if (whole >= 0) return tok_push(o, whole);
    bool ok = tok_merge(v, s, n, y, &ns, pair_rank);
    for (size_t i = ns ? 0 : TOK_NONE; ok && i != TOK_NONE; i = y[i].next) {
        const int id = tok_find(v, s + y[i].start, y[i].size);
        if (id >= 0) { ok = tok_push(o, id); continue; }
        for (size_t k = y[i].start, l; k < y[i].start + y[i].size && ok; k += l) {  /* its characters one by one */
            l = tok_utf8_len((unsigned char) s[k]);
            const int cid = tok_find(v, s + k, l);
            ok = tok_push(o, cid >= 0 ? cid : v->unk);
        }
    }
    return ok;
}

bool tok_bpe(const struct llama_vocab * v, const char * text, size_t len, struct tok_out * o) {
    size_t * ends = malloc((len + 1) * sizeof *ends);
    char * s = malloc(2 * len + 1);  /* a byte's character takes at most 2 bytes of UTF-8 */
    struct tok_sym * y = malloc((2 * len + 1) * sizeof *y);
    const size_t n = ends && s && y ? llama_pre_split(v->pre, text, len, ends) : (size_t) -1;
    bool ok = n != (size_t) -1;
    for (size_t p = 0, from = 0; ok && p < n; from = ends[p++]) ok = bpe_piece(v, text + from, ends[p] - from, s, y, o);
    free(ends); free(s); free(y);
    return ok;
}

/* bpe.c -- byte-level BPE ("gpt2"), as llama.cpp tokenizes with the GPT-2
 * pre-tokenizer:
 *   split the text as the regex
 *     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *   would (written out as code below), each piece's bytes as GPT-2's
 *   characters (printable bytes as themselves, the others from U+0100 on),
 *   merge the adjacent pair of lowest rank in tokenizer.ggml.merges, and
 *   map each symbol to its token (else its bytes' tokens).
 * Character classes: ASCII exactly; beyond it the Unicode spaces, the digit
 * blocks of a few scripts and the punctuation and symbol blocks are told
 * apart, everything else counts as a letter (no Unicode tables here). */
#include "tokenizer_impl.h"

#include <stdlib.h>
#include <string.h>

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

/* ---- the pre-tokenizer ---- */

enum cls { C_LETTER, C_NUMBER, C_SPACE, C_OTHER };

/* The code point at s[i] (invalid UTF-8: the byte) and its length. */
static unsigned decode(const char * s, size_t n, size_t i, size_t * len) {
    const unsigned char c = (unsigned char) s[i];
    size_t l = tok_utf8_len(c);
    if (l > n - i) l = 1;
    unsigned cp = l == 1 ? c : l == 2 ? c & 0x1f : l == 3 ? c & 0x0f : c & 0x07;
    for (size_t k = 1; k < l; k++) {
        if (((unsigned char) s[i + k] & 0xc0) != 0x80) { *len = 1; return c; }
        cp = (cp << 6) | ((unsigned char) s[i + k] & 0x3f);
    }
    *len = l;
    return cp;
}

static enum cls classify(unsigned cp) {
    if (cp < 0x80) {
        if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) return C_LETTER;
        if (cp >= '0' && cp <= '9') return C_NUMBER;
        if (cp == ' ' || (cp >= 9 && cp <= 13)) return C_SPACE;
        return C_OTHER;
    }
    if (cp == 0x85 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f ||
        cp == 0x205f || cp == 0x3000)
        return C_SPACE;
    if (cp == 0xb2 || cp == 0xb3 || cp == 0xb9 || (cp >= 0xbc && cp <= 0xbe) || (cp >= 0x660 && cp <= 0x669) || (cp >= 0x6f0 && cp <= 0x6f9) ||
        (cp >= 0x966 && cp <= 0x96f) || (cp >= 0xff10 && cp <= 0xff19))
        return C_NUMBER;
    if ((cp < 0xc0 && cp != 0xaa && cp != 0xb5 && cp != 0xba) || cp == 0xd7 || cp == 0xf7 || (cp >= 0x2010 && cp <= 0x2bff) ||
        (cp >= 0x3001 && cp <= 0x303f) || (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff01 && cp <= 0xff0f) || (cp >= 0xff1a && cp <= 0xff20) ||
        (cp >= 0xff3b && cp <= 0xff40) || (cp >= 0xff5b && cp <= 0xff65) || (cp >= 0x1f000 && cp <= 0x1faff))
        return C_OTHER;
    return C_LETTER;
}

static enum cls cls_at(const char * s, size_t n, size_t i, size_t * len) { return classify(decode(s, n, i, len)); }

/* The end of the piece that starts at i. */
static size_t piece_end(const char * s, size_t n, size_t i) {
    static const char * const contractions[] = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"};
    if (s[i] == '\'')
        for (int k = 0; k < 7; k++) {
            const size_t l = strlen(contractions[k]);
            if (l <= n - i && memcmp(s + i, contractions[k], l) == 0) return i + l;
        }
    size_t l, j = i;
    enum cls c = cls_at(s, n, i, &l);
    if (s[i] == ' ' && i + 1 < n) {  /* " ?" before letters, numbers, others */
        size_t l2;
        const enum cls c2 = cls_at(s, n, i + 1, &l2);
        if (c2 != C_SPACE) { j = i + 1; c = c2; l = l2; }
    }
    if (c != C_SPACE) {  /* a run of one class */
        size_t e = j + l;
        while (e < n && cls_at(s, n, e, &l) == c) e += l;
        return e;
    }
    /* whitespace: \s+(?!\S) keeps the last one for the next piece when a
     * non-space follows and the run is longer than one character */
    size_t e = i, last = i;
    while (e < n && cls_at(s, n, e, &l) == C_SPACE) { last = e; e += l; }
    return e < n && last > i ? last : e;
}

size_t llama_gpt2_split(const char * text, size_t len, size_t * ends) {
    size_t n = 0;
    for (size_t i = 0; i < len; i = ends[n++]) ends[n] = piece_end(text, len, i);
    return n;
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
    bool ok = ends && s && y;
    const size_t n = ok ? llama_gpt2_split(text, len, ends) : 0;
    for (size_t p = 0, from = 0; ok && p < n; from = ends[p++]) ok = bpe_piece(v, text + from, ends[p] - from, s, y, o);
    free(ends); free(s); free(y);
    return ok;
}

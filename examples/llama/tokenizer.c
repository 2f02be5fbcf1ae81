/* tokenizer.c -- the vocabulary of the model file and llama.cpp's
 * SentencePiece-BPE tokenization ("llama"):
 *   text -> (a space prefix) spaces as U+2581 -> one symbol per UTF-8 character
 *   repeat: of the adjacent pairs whose joined text is a token, merge the
 *           one of highest score (the leftmost on ties)
 *   each symbol -> its token, or its bytes as <0xXX> tokens (byte fallback)
 * With parse_special the texts of control and user-defined tokens are cut
 * out first (the longest match at each place) and become those tokens; each
 * piece of plain text after one gets the space prefix again, as llama.cpp does. */
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TOK_NORMAL = 1, TOK_UNKNOWN = 2, TOK_CONTROL = 3, TOK_USER = 4, TOK_UNUSED = 5, TOK_BYTE = 6 };

#define SPACE_MARK "\xe2\x96\x81"  /* U+2581 */

static uint32_t hash_bytes(const char * s, size_t n) {
    uint32_t h = 2166136261u;  /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char) s[i]) * 16777619u;
    return h;
}

/* The id of the token whose text is s[0..n), or -1. */
static int find(const struct llama_vocab * v, const char * s, size_t n) {
    for (uint32_t i = hash_bytes(s, n) & v->hash_mask;; i = (i + 1) & v->hash_mask) {
        const int id = v->hash[i];
        if (id < 0) return -1;
        if (strlen(v->text[id]) == n && memcmp(v->text[id], s, n) == 0) return id;
    }
}

static int get_id(const struct gguf_context * g, const char * key, int dflt, int n) {
    const int64_t k = gguf_find_key(g, key);
    if (k < 0) return dflt;
    int64_t id = gguf_get_kv_type(g, k) == GGUF_TYPE_UINT32 ? (int64_t) gguf_get_val_u32(g, k)
               : gguf_get_kv_type(g, k) == GGUF_TYPE_INT32 ? gguf_get_val_i32(g, k) : -1;
    return id >= 0 && id < n ? (int) id : dflt;
}

static bool get_bool(const struct gguf_context * g, const char * key, bool dflt) {
    const int64_t k = gguf_find_key(g, key);
    return k >= 0 && gguf_get_kv_type(g, k) == GGUF_TYPE_BOOL ? gguf_get_val_bool(g, k) : dflt;
}

bool llama_vocab_load(struct llama_vocab * v, const struct llama_model * m) {
    memset(v, 0, sizeof *v);
    const struct gguf_context * g = m->gguf;
    const int64_t km = gguf_find_key(g, "tokenizer.ggml.model"), kt = gguf_find_key(g, "tokenizer.ggml.tokens");
    const int64_t ks = gguf_find_key(g, "tokenizer.ggml.scores"), ky = gguf_find_key(g, "tokenizer.ggml.token_type");
    if (km < 0 || gguf_get_kv_type(g, km) != GGUF_TYPE_STRING) { fprintf(stderr, "error: the model has no tokenizer.ggml.model\n"); return false; }
    if (strcmp(gguf_get_val_str(g, km), "llama") != 0) {
        fprintf(stderr, "error: tokenizer '%s' is not supported (llama)\n", gguf_get_val_str(g, km));
        return false;
    }
    if (kt < 0 || gguf_get_kv_type(g, kt) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, kt) != GGUF_TYPE_STRING) {
        fprintf(stderr, "error: the model has no tokenizer.ggml.tokens\n");
        return false;
    }
    const size_t n = gguf_get_arr_n(g, kt);
    if (n != (size_t) m->hp.n_vocab) { fprintf(stderr, "error: %zu tokens, token_embd has %d rows\n", n, m->hp.n_vocab); return false; }
    if (ks < 0 || gguf_get_kv_type(g, ks) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, ks) != GGUF_TYPE_FLOAT32 || gguf_get_arr_n(g, ks) != n) {
        fprintf(stderr, "error: the model has no tokenizer.ggml.scores for its %zu tokens (SentencePiece needs them)\n", n);
        return false;
    }
    v->n = (int) n;
    v->text = malloc(n * sizeof *v->text);
    v->scores = malloc(n * sizeof *v->scores);
    v->types = malloc(n * sizeof *v->types);
    uint32_t cap = 1;
    while (cap < 2 * n) cap <<= 1;
    v->hash = malloc(cap * sizeof *v->hash);
    v->special = malloc(n * sizeof *v->special);
    v->hash_mask = cap - 1;
    if (!v->text || !v->scores || !v->types || !v->hash || !v->special) { fprintf(stderr, "error: out of memory\n"); llama_vocab_free(v); return false; }
    memcpy(v->scores, gguf_get_arr_data(g, ks), n * sizeof *v->scores);
    const bool typed = ky >= 0 && gguf_get_kv_type(g, ky) == GGUF_TYPE_ARRAY && gguf_get_arr_type(g, ky) == GGUF_TYPE_INT32 && gguf_get_arr_n(g, ky) == n;
    memset(v->hash, 0xff, cap * sizeof *v->hash);
    for (int b = 0; b < 256; b++) v->byte_id[b] = -1;
    for (size_t i = 0; i < n; i++) {
        v->text[i] = gguf_get_arr_str(g, kt, i);
        v->types[i] = typed ? ((const int32_t *) gguf_get_arr_data(g, ky))[i] : TOK_NORMAL;
        const size_t len = strlen(v->text[i]);
        if (find(v, v->text[i], len) < 0) {  /* the first of duplicate texts wins */
            uint32_t h = hash_bytes(v->text[i], len) & v->hash_mask;
            while (v->hash[h] >= 0) h = (h + 1) & v->hash_mask;
            v->hash[h] = (int32_t) i;
        }
        if ((v->types[i] == TOK_CONTROL || v->types[i] == TOK_USER) && len > 0) v->special[v->n_special++] = (int32_t) i;
        unsigned b;
        if (v->types[i] == TOK_BYTE && len == 6 && sscanf(v->text[i], "<0x%2X>", &b) == 1) v->byte_id[b] = (int) i;
    }
    v->unk = get_id(g, "tokenizer.ggml.unknown_token_id", 0, v->n);
    v->bos = get_id(g, "tokenizer.ggml.bos_token_id", 1 < v->n ? 1 : 0, v->n);
    v->eos = get_id(g, "tokenizer.ggml.eos_token_id", 2 < v->n ? 2 : 0, v->n);
    v->add_bos = get_bool(g, "tokenizer.ggml.add_bos_token", true);
    v->add_space_prefix = get_bool(g, "tokenizer.ggml.add_space_prefix", true);
    return true;
}

void llama_vocab_free(struct llama_vocab * v) {
    free(v->text); free(v->scores); free(v->types); free(v->hash); free(v->special);
    memset(v, 0, sizeof *v);
}

struct out { int32_t * ids; int n, cap; };

static bool push(struct out * o, int32_t id) {
    if (o->n == o->cap) {
        const int cap = o->cap ? 2 * o->cap : 64;
        int32_t * ids = realloc(o->ids, (size_t) cap * sizeof *ids);
        if (!ids) return false;
        o->ids = ids; o->cap = cap;
    }
    o->ids[o->n++] = id;
    return true;
}

static size_t utf8_len(unsigned char c) { return c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1; }

/* A candidate merge: symbols left and right (its neighbour when queued),
 * their joined size then, and the score of the token they would form. */
struct bigram { float score; size_t left, right, size; };

/* heap order: the higher score first, then the leftmost (llama.cpp's queue) */
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

/* symbols as a linked list over the escaped text */
struct sym { size_t start, size, prev, next; };
#define NONE ((size_t) -1)

static void try_bigram(const struct llama_vocab * v, const char * s, const struct sym * y, size_t left, struct heap * h) {
    if (left == NONE || y[left].next == NONE) return;
    const size_t right = y[left].next, size = y[left].size + y[right].size;
    const int id = find(v, s + y[left].start, size);
    if (id >= 0) heap_push(h, (struct bigram) {.score = v->scores[id], .left = left, .right = right, .size = size});
}

/* One piece of plain text (no special tokens). */
static bool tokenize_plain(const struct llama_vocab * v, const char * text, size_t len, bool prefix, struct out * o) {
    /* the escaped text: spaces (and the prefix) as U+2581 */
    size_t n_sp = prefix;
    for (size_t i = 0; i < len; i++) n_sp += text[i] == ' ';
    const size_t cap = len + n_sp + 1;
    char * s = malloc(len + 2 * n_sp + 1);
    struct sym * y = malloc(cap * sizeof *y);
    /* each merge queues at most two bigrams, on top of the first n - 1 */
    struct heap h = {.b = malloc(3 * cap * sizeof *h.b), .n = 0};
    if (!s || !y || !h.b) { free(s); free(y); free(h.b); return false; }
    size_t n = 0;
    if (prefix) { memcpy(s, SPACE_MARK, 3); n = 3; }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') { memcpy(s + n, SPACE_MARK, 3); n += 3; }
        else s[n++] = text[i];
    }
    /* symbols: one per UTF-8 character (a truncated sequence: what is left) */
    size_t ns = 0;
    for (size_t i = 0; i < n; ns++) {
        size_t l = utf8_len((unsigned char) s[i]);
        if (l > n - i) l = n - i;
        y[ns] = (struct sym) {.start = i, .size = l, .prev = ns ? ns - 1 : NONE, .next = i + l < n ? ns + 1 : NONE};
        i += l;
    }
    for (size_t i = 0; i + 1 < ns; i++) try_bigram(v, s, y, i, &h);
    /* merge the best pair until none is left; a queued pair whose symbols
     * have changed since is stale and skipped */
    while (h.n) {
        const struct bigram b = heap_pop(&h);
        if (y[b.left].size == 0 || y[b.right].size == 0 || y[b.left].size + y[b.right].size != b.size || y[b.left].next != b.right) continue;
        y[b.left].size = b.size;
        y[b.right].size = 0;
        y[b.left].next = y[b.right].next;
        if (y[b.right].next != NONE) y[y[b.right].next].prev = b.left;
        try_bigram(v, s, y, y[b.left].prev, &h);
        try_bigram(v, s, y, b.left, &h);
    }
    bool ok = true;
    for (size_t i = ns ? 0 : NONE; i != NONE && ok; i = y[i].next) {
        const int id = find(v, s + y[i].start, y[i].size);
        if (id >= 0) { ok = push(o, id); continue; }
        for (size_t k = 0; k < y[i].size && ok; k++) {  /* byte fallback, else <unk> */
            const int bid = v->byte_id[(unsigned char) s[y[i].start + k]];
            ok = push(o, bid >= 0 ? bid : v->unk);
        }
    }
    free(s); free(y); free(h.b);
    return ok;
}

/* The longest control or user-defined token whose text starts at s, or -1. */
static int special_at(const struct llama_vocab * v, const char * s, size_t left, size_t * len) {
    int best = -1;
    *len = 0;
    for (int i = 0; i < v->n_special; i++) {
        const int id = v->special[i];
        const size_t l = strlen(v->text[id]);
        if (l > *len && l <= left && memcmp(s, v->text[id], l) == 0) { best = id; *len = l; }
    }
    return best;
}

int llama_tokenize(const struct llama_vocab * v, const char * text, size_t len, bool add_bos, bool parse_special, int32_t ** out) {
    struct out o = {0};
    bool ok = !add_bos || push(&o, v->bos);
    bool prev_special = true;  /* the space prefix: at the start and after each special token */
    size_t from = 0;
    for (size_t i = 0; i <= len && ok;) {
        size_t sl = 0;
        const int sp = i < len && parse_special ? special_at(v, text + i, len - i, &sl) : -1;
        if (sp < 0 && i < len) { i++; continue; }
        if (i > from) { ok = tokenize_plain(v, text + from, i - from, v->add_space_prefix && prev_special, &o); prev_special = false; }
        if (sp < 0) break;
        ok = ok && push(&o, sp);
        prev_special = true;
        i += sl;
        from = i;
    }
    if (!ok) { free(o.ids); fprintf(stderr, "error: out of memory\n"); return -1; }
    *out = o.ids;
    return o.n;
}

int llama_token_to_piece(const struct llama_vocab * v, int32_t id, char * buf, int cap) {
    if (id < 0 || id >= v->n || cap < 1) return 0;
    if (v->types[id] == TOK_CONTROL || v->types[id] == TOK_UNKNOWN || v->types[id] == TOK_UNUSED) return 0;
    if (v->types[id] == TOK_BYTE) {
        unsigned b;
        if (sscanf(v->text[id], "<0x%2X>", &b) != 1) return 0;
        buf[0] = (char) b;
        return 1;
    }
    int n = 0;
    for (const char * s = v->text[id]; *s && n < cap;) {
        if (strncmp(s, SPACE_MARK, 3) == 0) { buf[n++] = ' '; s += 3; }
        else buf[n++] = *s++;
    }
    return n;
}

/* tokenizer.c -- the vocabulary of the model file (tokens, scores, types,
 * merges, special ids, the pre-tokenizer) and tokenization, as llama.cpp
 * does it: the texts of special tokens are cut out first (user-defined ones
 * always, control and unknown ones when parse_special is set), each in turn
 * from the longest, everywhere it occurs in what text is left; the plain
 * text between them goes to the file's flavour, SentencePiece (spm.c) or
 * byte-level BPE (bpe.c). SentencePiece gives each plain piece at the start
 * or after a special token the space prefix. */
#include "tokenizer_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPACE_MARK "\xe2\x96\x81"  /* U+2581 */

uint32_t tok_hash(const char * s, size_t n) {
    uint32_t h = 2166136261u;  /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char) s[i]) * 16777619u;
    return h;
}

int tok_find(const struct llama_vocab * v, const char * s, size_t n) {
    for (uint32_t i = tok_hash(s, n) & v->hash_mask;; i = (i + 1) & v->hash_mask) {
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

static uint32_t merge_hash(const char * a, size_t na, const char * b, size_t nb) { return (tok_hash(a, na) * 31u) ^ tok_hash(b, nb); }

static int merge_rank_of(const struct llama_vocab * v, const char * a, size_t na, const char * b, size_t nb) {
    for (uint32_t i = merge_hash(a, na, b, nb) & v->merge_mask;; i = (i + 1) & v->merge_mask) {
        const int r = v->merge_hash[i];
        if (r < 0) return -1;
        const char * m = v->merges[r];
        if (strlen(m) == na + nb + 1 && memcmp(m, a, na) == 0 && m[na] == ' ' && memcmp(m + na + 1, b, nb) == 0) return r;
    }
}

int tok_merge_rank(const struct llama_vocab * v, const char * s, size_t na, size_t nb) {
    return v->merge_hash ? merge_rank_of(v, s, na, s + na, nb) : -1;
}

/* "a b" -> its rank, hashed as tok_merge_rank looks it up */
static bool load_merges(struct llama_vocab * v, const struct gguf_context * g, int64_t k) {
    const size_t n = gguf_get_arr_n(g, k);
    uint32_t cap = 1;
    while (cap < 2 * n) cap <<= 1;
    v->merges = malloc(n * sizeof *v->merges);
    v->merge_hash = malloc(cap * sizeof *v->merge_hash);
    if (!v->merges || !v->merge_hash) { fprintf(stderr, "error: out of memory\n"); return false; }
    v->merge_mask = cap - 1;
    v->n_merges = (int) n;
    memset(v->merge_hash, 0xff, cap * sizeof *v->merge_hash);
    for (size_t r = 0; r < n; r++) {
        const char * m = v->merges[r] = gguf_get_arr_str(g, k, r);
        const char * sp = m[0] ? strchr(m + 1, ' ') : NULL;  /* the first space after the first byte, as llama.cpp splits */
        if (!sp) { fprintf(stderr, "error: merge %zu ('%s') is not two tokens separated by a space\n", r, m); return false; }
        const size_t na = (size_t) (sp - m), nb = strlen(sp + 1);
        if (merge_rank_of(v, m, na, sp + 1, nb) >= 0) continue;  /* a repeated merge keeps its first rank */
        uint32_t h = merge_hash(m, na, sp + 1, nb) & v->merge_mask;
        while (v->merge_hash[h] >= 0) h = (h + 1) & v->merge_mask;
        v->merge_hash[h] = (int32_t) r;
    }
    return true;
}

struct special_len { size_t len; int32_t id; };

static int by_length(const void * a, const void * b) {
    const struct special_len * x = a, * y = b;
    return x->len != y->len ? (x->len < y->len ? 1 : -1) : (x->id > y->id) - (x->id < y->id);
}

/* The special tokens, the longest text first (equal lengths by id), the order they are cut out in. */
static bool sort_special(struct llama_vocab * v) {
    struct special_len * t = malloc((size_t) (v->n_special ? v->n_special : 1) * sizeof *t);
    if (!t) return false;
    for (int i = 0; i < v->n_special; i++) t[i] = (struct special_len) {strlen(v->text[v->special[i]]), v->special[i]};
    qsort(t, (size_t) v->n_special, sizeof *t, by_length);
    for (int i = 0; i < v->n_special; i++) v->special[i] = t[i].id;
    free(t);
    return true;
}

/* Whether the token text t has a character other than U+2581 followed by U+2581. */
static bool joins_word_start(const char * t) {
    for (const char * m = strstr(t, SPACE_MARK); m; m = strstr(m + 3, SPACE_MARK))
        if (m > t && (m - t < 3 || memcmp(m - 3, SPACE_MARK, 3) != 0)) return true;
    return false;
}

bool llama_vocab_load(struct llama_vocab * v, const struct llama_model * m) {
    memset(v, 0, sizeof *v);
    const struct gguf_context * g = m->gguf;
    const int64_t km = gguf_find_key(g, "tokenizer.ggml.model"), kt = gguf_find_key(g, "tokenizer.ggml.tokens");
    const int64_t ks = gguf_find_key(g, "tokenizer.ggml.scores"), ky = gguf_find_key(g, "tokenizer.ggml.token_type");
    if (km < 0 || gguf_get_kv_type(g, km) != GGUF_TYPE_STRING) { fprintf(stderr, "error: the model has no tokenizer.ggml.model\n"); return false; }
    const char * model = gguf_get_val_str(g, km);
    v->bpe = strcmp(model, "gpt2") == 0;
    if (!v->bpe && strcmp(model, "llama") != 0) { fprintf(stderr, "error: tokenizer '%s' is not supported (llama, gpt2)\n", model); return false; }
    if (kt < 0 || gguf_get_kv_type(g, kt) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, kt) != GGUF_TYPE_STRING) {
        fprintf(stderr, "error: the model has no tokenizer.ggml.tokens\n");
        return false;
    }
    const size_t n = gguf_get_arr_n(g, kt);
    if (n != (size_t) m->hp.n_vocab) { fprintf(stderr, "error: %zu tokens, token_embd has %d rows\n", n, m->hp.n_vocab); return false; }
    const bool scored = ks >= 0 && gguf_get_kv_type(g, ks) == GGUF_TYPE_ARRAY && gguf_get_arr_type(g, ks) == GGUF_TYPE_FLOAT32 && gguf_get_arr_n(g, ks) == n;
    if (!v->bpe && !scored) { fprintf(stderr, "error: the model has no tokenizer.ggml.scores for its %zu tokens (SentencePiece needs them)\n", n); return false; }
    const int64_t kmg = gguf_find_key(g, "tokenizer.ggml.merges"), kp = gguf_find_key(g, "tokenizer.ggml.pre");
    if (v->bpe) {
        if (kmg < 0 || gguf_get_kv_type(g, kmg) != GGUF_TYPE_ARRAY || gguf_get_arr_type(g, kmg) != GGUF_TYPE_STRING || gguf_get_arr_n(g, kmg) == 0) {
            fprintf(stderr, "error: the gpt2 tokenizer has no tokenizer.ggml.merges\n");
            return false;
        }
        /* no tokenizer.ggml.pre: llama.cpp's default */
        const char * pre = kp >= 0 && gguf_get_kv_type(g, kp) == GGUF_TYPE_STRING ? gguf_get_val_str(g, kp) : "default";
        if (!(v->pre = llama_pre_find(pre))) {
            char names[1024];
            llama_pre_list(names, sizeof names);
            fprintf(stderr, "error: pre-tokenizer '%s' (tokenizer.ggml.pre) is not supported; supported: %s\n", pre, names);
            return false;
        }
        v->ignore_merges = llama_pre_ignore_merges(v->pre);
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
    if (scored) memcpy(v->scores, gguf_get_arr_data(g, ks), n * sizeof *v->scores);
    else memset(v->scores, 0, n * sizeof *v->scores);
    if (v->bpe && !load_merges(v, g, kmg)) { llama_vocab_free(v); return false; }
    const bool typed = ky >= 0 && gguf_get_kv_type(g, ky) == GGUF_TYPE_ARRAY && gguf_get_arr_type(g, ky) == GGUF_TYPE_INT32 && gguf_get_arr_n(g, ky) == n;
    memset(v->hash, 0xff, cap * sizeof *v->hash);
    for (int b = 0; b < 256; b++) v->byte_id[b] = -1;
    for (size_t i = 0; i < n; i++) {
        v->text[i] = gguf_get_arr_str(g, kt, i);
        v->types[i] = typed ? ((const int32_t *) gguf_get_arr_data(g, ky))[i] : TOK_NORMAL;
        const size_t len = strlen(v->text[i]);
        if (tok_find(v, v->text[i], len) < 0) {  /* the first of duplicate texts wins */
            uint32_t h = tok_hash(v->text[i], len) & v->hash_mask;
            while (v->hash[h] >= 0) h = (h + 1) & v->hash_mask;
            v->hash[h] = (int32_t) i;
        }
        if ((v->types[i] == TOK_CONTROL || v->types[i] == TOK_USER || v->types[i] == TOK_UNKNOWN) && len > 0) v->special[v->n_special++] = (int32_t) i;
        unsigned b;
        if (v->types[i] == TOK_BYTE && len == 6 && sscanf(v->text[i], "<0x%2X>", &b) == 1) v->byte_id[b] = (int) i;
    }
    v->spm_words = !v->bpe;
    for (size_t i = 0; i < n && v->spm_words; i++) v->spm_words = !joins_word_start(v->text[i]);
    v->unk = get_id(g, "tokenizer.ggml.unknown_token_id", 0, v->n);
    v->bos = get_id(g, "tokenizer.ggml.bos_token_id", 1 < v->n ? 1 : 0, v->n);
    v->eos = get_id(g, "tokenizer.ggml.eos_token_id", 2 < v->n ? 2 : 0, v->n);
    if (!sort_special(v)) { fprintf(stderr, "error: out of memory\n"); llama_vocab_free(v); return false; }
    v->add_bos = get_bool(g, "tokenizer.ggml.add_bos_token", v->bpe ? llama_pre_add_bos(v->pre) : true);
    v->add_eos = get_bool(g, "tokenizer.ggml.add_eos_token", false);
    v->add_space_prefix = get_bool(g, "tokenizer.ggml.add_space_prefix", !v->bpe);
    return true;
}

void llama_vocab_free(struct llama_vocab * v) {
    free(v->text); free(v->scores); free(v->types); free(v->hash); free(v->special); free(v->merges); free(v->merge_hash);
    memset(v, 0, sizeof *v);
}

bool tok_push(struct tok_out * o, int32_t id) {
    if (o->n == o->cap) {
        const int cap = o->cap ? 2 * o->cap : 64;
        int32_t * ids = realloc(o->ids, (size_t) cap * sizeof *ids);
        if (!ids) return false;
        o->ids = ids; o->cap = cap;
    }
    o->ids[o->n++] = id;
    return true;
}

size_t tok_utf8_len(unsigned char c) { return c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1; }

/* A part of the text: plain text[from..to), or the special token id. */
struct frag { size_t from, to; int32_t id; };
struct frags { struct frag * f; size_t n, cap; };

static bool frag_push(struct frags * l, struct frag f) {
    if (l->n == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 16;
        struct frag * p = realloc(l->f, cap * sizeof *p);
        if (!p) return false;
        l->f = p; l->cap = cap;
    }
    l->f[l->n++] = f;
    return true;
}

/* The first occurrence of s[0..n) in text[from..to), or to. */
static size_t find(const char * text, size_t from, size_t to, const char * s, size_t n) {
    for (size_t i = from; i + n <= to; i++) {
        const char * c = memchr(text + i, s[0], to - n + 1 - i);
        if (!c) break;
        i = (size_t) (c - text);
        if (memcmp(c, s, n) == 0) return i;
    }
    return to;
}

/* Cuts the special tokens out of the text: each in turn (the longest first)
 * out of every plain fragment left, at every occurrence, leftmost first. */
static bool partition(const struct llama_vocab * v, const char * text, size_t len, bool parse_special, struct frags * out) {
    struct frags a = {0}, b = {0};
    bool ok = len == 0 || frag_push(&a, (struct frag) {0, len, -1});
    for (int k = 0; k < v->n_special && ok; k++) {
        const int32_t id = v->special[k];
        if (!parse_special && v->types[id] != TOK_USER) continue;  /* user-defined tokens are always cut out */
        const char * s = v->text[id];
        const size_t n = strlen(s);
        b.n = 0;
        for (size_t f = 0; f < a.n && ok; f++) {
            struct frag x = a.f[f];
            if (x.id >= 0) { ok = frag_push(&b, x); continue; }
            for (size_t at; ok && x.from < x.to; x.from = at + n) {
                at = find(text, x.from, x.to, s, n);
                if (at == x.to) { ok = frag_push(&b, x); break; }
                ok = (at == x.from || frag_push(&b, (struct frag) {x.from, at, -1})) && frag_push(&b, (struct frag) {at, at + n, id});
            }
        }
        const struct frags t = a; a = b; b = t;
    }
    free(b.f);
    *out = a;
    return ok;
}

int llama_tokenize(const struct llama_vocab * v, const char * text, size_t len, bool add_special, bool parse_special, int32_t ** out) {
    struct tok_out o = {0};
    struct frags parts = {0};
    bool ok = partition(v, text, len, parse_special, &parts) && (!add_special || !v->add_bos || tok_push(&o, v->bos));
    bool prev_special = true;  /* the space prefix: at the start and after each special token */
    for (size_t f = 0; f < parts.n && ok; f++) {
        const struct frag x = parts.f[f];
        if (x.id >= 0) {
            ok = tok_push(&o, x.id);
            prev_special = true;
            continue;
        }
        ok = v->bpe ? tok_bpe(v, text + x.from, x.to - x.from, &o)
                    : tok_spm(v, text + x.from, x.to - x.from, v->add_space_prefix && prev_special, &o);
        prev_special = false;
    }
    ok = ok && (!add_special || !v->add_eos || tok_push(&o, v->eos));
    free(parts.f);
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
    if (v->bpe) {  /* GPT-2's characters back to bytes */
        const char * s = v->text[id];
        for (size_t i = 0, len = strlen(s), l; i < len && n < cap; i += l) {
            l = tok_utf8_len((unsigned char) s[i]);
            unsigned cp = l == 1 ? (unsigned char) s[i] : l == 2 ? (s[i] & 0x1fu) : l == 3 ? (s[i] & 0x0fu) : (s[i] & 0x07u);
            for (size_t k = 1; k < l && i + k < len; k++) cp = (cp << 6) | (s[i + k] & 0x3fu);
            const int b = tok_char_byte(cp);
            if (b >= 0) buf[n++] = (char) b;
        }
        return n;
    }
    for (const char * s = v->text[id]; *s && n < cap;) {
        if (strncmp(s, SPACE_MARK, 3) == 0) { buf[n++] = ' '; s += 3; }
        else buf[n++] = *s++;
    }
    return n;
}

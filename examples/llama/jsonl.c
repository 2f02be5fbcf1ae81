/* jsonl.c -- prompt/response training data: one JSON object per line with
 * string fields "prompt" and "response", read by a small strict parser
 * (objects of string values only; the escapes \" \\ \/ \b \f \n \r \t and
 * \uXXXX with surrogate pairs; no raw control characters, no NUL, no
 * duplicate keys, nothing after the object). Each pair becomes
 * BOS + prompt + response + EOS, the pairs are packed end to end, and the
 * loss mask marks the tokens the loss predicts: the response's and the EOS. */
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cursor {
    const char * s;
    size_t n, i;
    char * err;
    size_t err_cap;
};

static bool bad(struct cursor * c, const char * what) {
    snprintf(c->err, c->err_cap, "column %zu: %s", c->i + 1, what);
    return false;
}

static void skip_ws(struct cursor * c) {
    while (c->i < c->n && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\r' || c->s[c->i] == '\n')) c->i++;
}

static int hex4(const char * s) {
    int v = 0;
    for (int k = 0; k < 4; k++) {
        const char h = s[k];
        const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

static size_t put_utf8(char * o, unsigned cp) {
    if (cp < 0x80) { o[0] = (char) cp; return 1; }
    if (cp < 0x800) { o[0] = (char) (0xc0 | (cp >> 6)); o[1] = (char) (0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) { o[0] = (char) (0xe0 | (cp >> 12)); o[1] = (char) (0x80 | ((cp >> 6) & 0x3f)); o[2] = (char) (0x80 | (cp & 0x3f)); return 3; }
    o[0] = (char) (0xf0 | (cp >> 18)); o[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char) (0x80 | ((cp >> 6) & 0x3f)); o[3] = (char) (0x80 | (cp & 0x3f));
    return 4;
}

/* The length of the valid UTF-8 sequence at s[0..left) (no overlongs, no
 * surrogates, at most U+10FFFF), or 0. */
static size_t utf8_seq(const unsigned char * s, size_t left) {
    const unsigned char c = s[0];
    const size_t l = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (l == 0 || l > left) return 0;
    unsigned cp = l == 1 ? c : l == 2 ? (c & 0x1fu) : l == 3 ? (c & 0x0fu) : (c & 0x07u);
    for (size_t k = 1; k < l; k++) {
        if ((s[k] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[k] & 0x3fu);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[l] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return l;
}

/* A JSON string at the cursor (its opening quote); *out is malloc'ed, NUL-terminated. */
static bool parse_string(struct cursor * c, char ** out, size_t * out_len) {
    if (c->i >= c->n || c->s[c->i] != '"') return bad(c, "expected a string");
    c->i++;
    char * o = malloc(c->n - c->i + 1);  /* an escape never produces more bytes than it takes */
    if (!o) return bad(c, "out of memory");
    size_t n = 0;
    for (;;) {
        if (c->i >= c->n) { free(o); return bad(c, "the string is not closed"); }
        const unsigned char ch = (unsigned char) c->s[c->i];
        if (ch == '"') { c->i++; break; }
        if (ch < 0x20) { free(o); return bad(c, "a control character in a string (write it as an escape)"); }
        if (ch != '\\') {
            const size_t l = utf8_seq((const unsigned char *) c->s + c->i, c->n - c->i);
            if (l == 0) { free(o); return bad(c, "not UTF-8"); }
            memcpy(o + n, c->s + c->i, l);
            n += l;
            c->i += l;
            continue;
        }
        if (c->i + 1 >= c->n) { free(o); return bad(c, "the string is not closed"); }
        const char e = c->s[c->i + 1];
        const char * simple = strchr("\"\\/bfnrt", e);
        if (e != '\0' && simple) {
            static const char to[] = "\"\\/\b\f\n\r\t";
            o[n++] = to[simple - "\"\\/bfnrt"];
            c->i += 2;
            continue;
        }
        if (e != 'u') { free(o); return bad(c, "an unknown escape"); }
        int cp = c->i + 6 <= c->n ? hex4(c->s + c->i + 2) : -1;
        if (cp < 0) { free(o); return bad(c, "\\u needs four hex digits"); }
        c->i += 6;
        if (cp >= 0xdc00 && cp <= 0xdfff) { c->i -= 6; free(o); return bad(c, "a low surrogate without a high one before it"); }
        if (cp >= 0xd800 && cp <= 0xdbff) {
            const int lo = c->i + 6 <= c->n && c->s[c->i] == '\\' && c->s[c->i + 1] == 'u' ? hex4(c->s + c->i + 2) : -1;
            if (lo < 0xdc00 || lo > 0xdfff) { c->i -= 6; free(o); return bad(c, "a high surrogate without a low one after it"); }
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            c->i += 6;
        }
        if (cp == 0) { c->i -= 6; free(o); return bad(c, "\\u0000 (NUL) is not text"); }
        n += put_utf8(o + n, (unsigned) cp);
    }
    o[n] = '\0';
    *out = o;
    *out_len = n;
    return true;
}

bool llama_jsonl_parse_line(const char * line, size_t len, struct llama_pair * p, char * err, size_t err_cap) {
    memset(p, 0, sizeof *p);
    struct cursor c = {.s = line, .n = len, .i = 0, .err = err, .err_cap = err_cap};
    skip_ws(&c);
    if (c.i >= c.n || line[c.i] != '{') return bad(&c, "expected a JSON object ({\"prompt\": ..., \"response\": ...})");
    c.i++;
    skip_ws(&c);
    bool ok = true, first = true;
    while (ok) {
        if (c.i < c.n && line[c.i] == '}' && first) { c.i++; break; }
        char * key = NULL, * val = NULL;
        size_t key_len = 0, val_len = 0;
        ok = parse_string(&c, &key, &key_len);
        if (ok) { skip_ws(&c); ok = c.i < c.n && line[c.i] == ':' ? (c.i++, true) : bad(&c, "expected ':' after a key"); }
        if (ok) {
            skip_ws(&c);
            ok = c.i < c.n && line[c.i] == '"' ? parse_string(&c, &val, &val_len)
                                                 : bad(&c, "a value that is not a string (only string values are read)");
        }
        if (ok) {
            const bool is_p = strcmp(key, "prompt") == 0 && key_len == 6, is_r = strcmp(key, "response") == 0 && key_len == 8;
            char ** slot = is_p ? &p->prompt : is_r ? &p->response : NULL;
            if (slot && *slot) { ok = bad(&c, is_p ? "\"prompt\" twice" : "\"response\" twice"); free(val); }
            else if (slot) { *slot = val; if (is_p) p->prompt_len = val_len; else p->response_len = val_len; }
            else free(val);  /* another field: read, not used */
        }
        free(key);
        if (!ok) break;
        skip_ws(&c);
        first = false;
        if (c.i < c.n && line[c.i] == ',') { c.i++; skip_ws(&c); continue; }
        if (c.i < c.n && line[c.i] == '}') { c.i++; break; }
        ok = bad(&c, "expected ',' or '}'");
    }
    if (ok) {
        skip_ws(&c);
        if (c.i < c.n) ok = bad(&c, "text after the object");
        else if (!p->prompt) ok = bad(&c, "no \"prompt\" field");
        else if (!p->response) ok = bad(&c, "no \"response\" field");
    }
    if (!ok) llama_pair_free(p);
    return ok;
}

void llama_pair_free(struct llama_pair * p) {
    free(p->prompt);
    free(p->response);
    memset(p, 0, sizeof *p);
}

/* Appends n ids (mask value m) to the growing arrays. */
static bool append(struct llama_data * d, int64_t * cap, const int32_t * ids, int64_t n, uint8_t m) {
    if (n == 0) return true;
    if (d->n + n > *cap) {
        int64_t c = *cap ? *cap : 1024;
        while (c < d->n + n) c *= 2;
        int32_t * t = realloc(d->tokens, (size_t) c * sizeof *t);
        if (t) d->tokens = t;
        uint8_t * k = t ? realloc(d->loss_mask, (size_t) c) : NULL;
        if (k) d->loss_mask = k;
        if (!t || !k) return false;
        *cap = c;
    }
    memcpy(d->tokens + d->n, ids, (size_t) n * sizeof *ids);
    memset(d->loss_mask + d->n, m, (size_t) n);
    d->n += n;
    return true;
}

void llama_data_free(struct llama_data * d) {
    free(d->tokens);
    free(d->loss_mask);
    free(d->starts);
    memset(d, 0, sizeof *d);
}

bool llama_jsonl_data(const struct llama_vocab * v, const char * path, const char * text, size_t len, struct llama_data * d) {
    memset(d, 0, sizeof *d);
    struct llama_vocab v_resp = *v;  /* the response continues the prompt: no space prefix of its own */
    v_resp.add_space_prefix = false;
    int64_t cap = 0, cap_starts = 0;
    bool ok = true;
    size_t line_no = 0;
    char err[200];
    for (size_t at = 0; ok && at < len;) {
        const char * nl = memchr(text + at, '\n', len - at);
        const size_t end = nl ? (size_t) (nl - text) : len;
        line_no++;
        size_t k = at;
        while (k < end && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r')) k++;
        if (k < end) {  /* blank lines are skipped */
            struct llama_pair p;
            if (!llama_jsonl_parse_line(text + at, end - at, &p, err, sizeof err)) {
                fprintf(stderr, "error: %s:%zu: %s\n", path, line_no, err);
                ok = false;
                break;
            }
            int32_t * pt = NULL, * rt = NULL;
            const int np = llama_tokenize(v, p.prompt, p.prompt_len, false, false, &pt);
            const int nr = np < 0 ? -1 : llama_tokenize(&v_resp, p.response, p.response_len, false, false, &rt);
            if (d->n_starts == cap_starts) {
                cap_starts = cap_starts ? 2 * cap_starts : 256;
                int64_t * s = realloc(d->starts, (size_t) cap_starts * sizeof *s);
                if (s) d->starts = s; else ok = false;
            }
            if (ok && np >= 0 && nr >= 0) d->starts[d->n_starts++] = d->n;
            const int32_t bos = v->bos, eos = v->eos;
            ok = ok && np >= 0 && nr >= 0 && (!v->add_bos || bos < 0 || append(d, &cap, &bos, 1, 0)) && append(d, &cap, pt, np, 0) &&
                 append(d, &cap, rt, nr, 1) && (eos < 0 || append(d, &cap, &eos, 1, 1));
            if (!ok) fprintf(stderr, "error: %s:%zu: out of memory\n", path, line_no);
            free(pt);
            free(rt);
            llama_pair_free(&p);
        }
        at = end + 1;
    }
    if (ok && d->n_starts == 0) { fprintf(stderr, "error: %s holds no prompt/response lines\n", path); ok = false; }
    if (!ok) llama_data_free(d);
    return ok;
}

void llama_data_split(struct llama_data * d, float val_split) {
    const int64_t at = (int64_t) ((1.0 - val_split) * (double) d->n);
    d->n_train = at;
    if (!d->starts) return;
    d->n_train = d->n;  /* whole examples on each side: the first one that starts at or after `at` begins validation */
    for (int64_t k = 0; k < d->n_starts; k++)
        if (d->starts[k] >= at) { d->n_train = d->starts[k]; break; }
}

/* test_llama_vocab_vectors.c -- the tokenizer against llama.cpp's own test
 * vectors: its repository's models/ggml-vocab-NAME.gguf (a vocabulary-only
 * GGUF) with NAME.gguf.inp (texts separated by "\n__ggml_vocab_test__\n")
 * and NAME.gguf.out (the ids llama.cpp gives each, one line per text,
 * no special tokens added or parsed). The directory is
 * GGMLR_LLAMA_VOCAB_DIR (e.g. a llama.cpp checkout's models/); without it
 * the test says so and checks nothing else. Every vocabulary there whose
 * three files are present is checked, and at least one must be. */
#include "common/test_common.h"

#include "gguf.h"
#include "llama.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define SEPARATOR "\n__ggml_vocab_test__\n"

static char * read_all(const char * path, size_t * len) {
    FILE * f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char * s = malloc(cap + 1);
    for (size_t r; s && (r = fread(s + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) {
            char * t = realloc(s, 2 * cap + 1);
            if (!t) { free(s); s = NULL; break; }
            s = t; cap *= 2;
        }
    }
    fclose(f);
    if (s) { s[n] = 0; *len = n; }
    return s;
}

/* One vocabulary: every text of .inp tokenized as .out's line says. The count of mismatches, -1 if not loaded. */
static int check_vocab(const char * dir, const char * name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct gguf_init_params gp = {.no_alloc = true, .ctx = NULL};
    struct gguf_context * g = gguf_init_from_file(path, gp);
    if (!CHECK(g, "%s: not a GGUF", name)) return -1;
    const int64_t kt = gguf_find_key(g, "tokenizer.ggml.tokens");
    struct llama_model m = {.gguf = g, .hp = {.n_vocab = kt >= 0 ? (int) gguf_get_arr_n(g, kt) : 0}};
    struct llama_vocab v;
    if (!llama_vocab_load(&v, &m)) {  /* a tokenizer this example does not have (bert, ...): say so, not a failure */
        fprintf(stderr, "%s: not loaded (above), skipped\n", name);
        gguf_free(g);
        return -1;
    }
    size_t n_inp = 0, n_out = 0;
    snprintf(path, sizeof path, "%s/%s.inp", dir, name);
    char * inp = read_all(path, &n_inp);
    snprintf(path, sizeof path, "%s/%s.out", dir, name);
    char * out = read_all(path, &n_out);
    int bad = 0, cases = 0;
    if (CHECK(inp && out, "%s: .inp or .out unreadable", name)) {
        char * text = inp, * line = out;
        for (char * sep; (sep = strstr(text, SEPARATOR)) != NULL; text = sep + strlen(SEPARATOR), cases++) {
            char * eol = strchr(line, '\n');
            if (!CHECK(eol, "%s: .out has fewer lines than .inp has texts", name)) { bad++; break; }
            *eol = 0;
            int32_t * ids = NULL;
            const int n = llama_tokenize(&v, text, (size_t) (sep - text), false, false, &ids);
            bool same = n >= 0;
            char * p = line;
            for (int i = 0; same && i < n; i++) {
                char * end;
                const long want = strtol(p, &end, 10);
                same = end != p && want == ids[i];
                p = end;
            }
            while (same && *p == ' ') p++;
            same = same && *p == 0;
            if (!CHECK(same, "%s: text %d '%.*s': ids differ", name, cases, (int) (sep - text), text)) {
                fprintf(stderr, "  llama.cpp:%s\n  ours:     ", line);
                for (int i = 0; i < n; i++) fprintf(stderr, " %d", ids[i]);
                fprintf(stderr, "\n");
                bad++;
            }
            free(ids);
            line = eol + 1;
        }
        fprintf(stderr, "%s: %d texts, %d differ\n", name, cases, bad);
    }
    free(inp);
    free(out);
    llama_vocab_free(&v);
    gguf_free(g);
    return bad;
}

int main(void) {
    const char * dir = getenv("GGMLR_LLAMA_VOCAB_DIR");
    if (!dir || !*dir) {
        fprintf(stderr, "test_llama_vocab_vectors: GGMLR_LLAMA_VOCAB_DIR not set (llama.cpp's models/ directory): nothing to check\n");
        return 0;
    }
    DIR * d = opendir(dir);
    if (!CHECK(d, "cannot open %s", dir)) return tc_finish("test_llama_vocab_vectors");
    int checked = 0;
    for (struct dirent * e; (e = readdir(d)) != NULL;) {
        const size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".gguf") != 0 || strncmp(e->d_name, "ggml-vocab-", 11) != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.out", dir, e->d_name);
        FILE * f = fopen(path, "rb");
        if (!f) continue;
        fclose(f);
        checked += check_vocab(dir, e->d_name) >= 0;
    }
    closedir(d);
    CHECK(checked > 0, "no vocabulary with .inp and .out in %s", dir);
    return tc_finish("test_llama_vocab_vectors");
}

/* llama-cpp-logits.c -- the reference side of scripts/compare-llama-cpp.sh:
 * runs a GGUF model through llama.cpp's C API (llama.h) so that its numbers
 * can be set beside ggmlr-llama's. Not part of the build and not run in CI:
 * the script compiles it against a llama.cpp build tree given to it.
 *
 *   llama-cpp-logits logits   MODEL IDS [--lora F] [--all] [--fa] [-t N]
 *       evaluates the token ids IDS (comma list) in one batch and prints the
 *       logits of the last position (--all: of every position), one line of
 *       n_vocab numbers per position -- ggmlr-llama logits' format;
 *   llama-cpp-logits tokenize MODEL INP
 *       tokenizes each text of INP (llama.cpp's test-vector .inp: texts
 *       each followed by "\n__ggml_vocab_test__\n"), as llama.cpp's
 *       test-tokenizer-0 does (no BOS/EOS added, special tokens not matched),
 *       and prints the .out file: a line " id id ..." per text;
 *   llama-cpp-logits speed    MODEL IDS N [--fa] [-t N]
 *       the prompt IDS in one batch, then N tokens one at a time, each the
 *       argmax of the last logits (greedy, as ggmlr-llama generate --temp 0);
 *       prints "generation: N tokens in MS ms (TPS tokens/s)".
 *
 * The KV cache is F32 and flash attention off, so that attention is F32
 * arithmetic as in ggmlr-llama and the logits differ by the weights' only;
 * --fa: llama.cpp's flash attention and F16 cache (its usual setting).
 * Errors: a message and exit status 2. */
#define _POSIX_C_SOURCE 200809L
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SEPARATOR "\n__ggml_vocab_test__\n"

static void quiet(enum ggml_log_level level, const char * text, void * user) {
    (void) user;
    if (level >= GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

static bool no_progress(float progress, void * user) {
    (void) progress;
    (void) user;
    return true;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* "1,5,7" -> ids; their count, or -1 on a malformed list. */
static int parse_ids(const char * s, llama_token * ids, int cap) {
    int n = 0;
    while (*s) {
        char * end;
        const long v = strtol(s, &end, 10);
        if (end == s || v < 0 || n == cap) return -1;
        ids[n++] = (llama_token) v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

static int usage(void) {
    fprintf(stderr, "usage: llama-cpp-logits logits MODEL IDS [--lora F] [--all] [--fa] [-t N]\n"
                    "       llama-cpp-logits tokenize MODEL INP\n"
                    "       llama-cpp-logits speed MODEL IDS N [--fa] [-t N]\n");
    return 2;
}

int main(int argc, char ** argv) {
    if (argc < 4) return usage();
    const char * cmd = argv[1], * path = argv[2], * lora = NULL;
    bool all = false, fa = false;
    int threads = 2, n_gen = 0, first_opt = 4;
    if (strcmp(cmd, "speed") == 0) {
        if (argc < 5) return usage();
        n_gen = atoi(argv[4]);
        first_opt = 5;
    } else if (strcmp(cmd, "logits") != 0 && strcmp(cmd, "tokenize") != 0) return usage();
    for (int i = first_opt; i < argc; i++) {
        if (strcmp(argv[i], "--all") == 0) all = true;
        else if (strcmp(argv[i], "--fa") == 0) fa = true;
        else if (strcmp(argv[i], "--lora") == 0 && i + 1 < argc) lora = argv[++i];
        else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
        else return usage();
    }

    llama_log_set(quiet, NULL);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    mp.progress_callback = no_progress;  /* no dots on stderr */
    mp.vocab_only = strcmp(cmd, "tokenize") == 0;  /* the test vocabularies have no weights */
    struct llama_model * model = llama_model_load_from_file(path, mp);
    if (!model) { fprintf(stderr, "error: llama.cpp could not load %s\n", path); return 2; }
    const struct llama_vocab * vocab = llama_model_get_vocab(model);
    const int n_vocab = llama_vocab_n_tokens(vocab);

    if (strcmp(cmd, "tokenize") == 0) {
        static char inp[1 << 20];
        FILE * f = fopen(argv[3], "rb");
        const size_t len = f ? fread(inp, 1, sizeof inp - 1, f) : 0;
        if (f) fclose(f);
        if (len == 0 || len == sizeof inp - 1) { fprintf(stderr, "error: %s: unreadable, empty or over 1 MiB\n", argv[3]); return 2; }
        inp[len] = 0;
        static llama_token ids[1 << 20];
        for (char * text = inp, * sep; (sep = strstr(text, SEPARATOR)) != NULL; text = sep + strlen(SEPARATOR)) {
            const int n = llama_tokenize(vocab, text, (int32_t) (sep - text), ids, 1 << 20, false, false);
            if (n < 0) { fprintf(stderr, "error: llama_tokenize failed\n"); return 2; }
            for (int i = 0; i < n; i++) printf(" %d", ids[i]);
            printf("\n");
        }
        llama_model_free(model);
        return 0;
    }

    llama_token ids[4096];
    const int n = parse_ids(argv[3], ids, 4096);
    if (n < 1) { fprintf(stderr, "error: '%s' is not a comma list of token ids\n", argv[3]); return 2; }
    for (int i = 0; i < n; i++) if (ids[i] >= n_vocab) { fprintf(stderr, "error: id %d is not below n_vocab %d\n", ids[i], n_vocab); return 2; }

    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t) (n + n_gen + 1);
    cp.n_batch = cp.n_ubatch = (uint32_t) (n > 512 ? n : 512);
    cp.n_threads = cp.n_threads_batch = threads;
    /* llama.cpp's flash attention casts K and V to F16 (llama-graph.cpp,
     * build_attn_mha), about 1e-3 of the logits' scale away from exact
     * arithmetic; without it, on an F32 cache, its attention is F32 throughout. */
    cp.type_k = cp.type_v = fa ? GGML_TYPE_F16 : GGML_TYPE_F32;
    cp.flash_attn_type = fa ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.no_perf = true;
    struct llama_context * ctx = llama_init_from_model(model, cp);
    if (!ctx) { fprintf(stderr, "error: llama.cpp could not make a context\n"); return 2; }
    if (lora) {
        struct llama_adapter_lora * a = llama_adapter_lora_init(model, lora);
        if (!a || llama_set_adapter_lora(ctx, a, 1.0f) != 0) { fprintf(stderr, "error: llama.cpp could not load the adapter %s\n", lora); return 2; }
    }

    /* every position's logits are requested, so --all can print them */
    struct llama_batch b = llama_batch_init(n, 0, 1);
    for (int i = 0; i < n; i++) {
        b.token[i] = ids[i];
        b.pos[i] = i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = all || i == n - 1;
    }
    b.n_tokens = n;
    if (llama_decode(ctx, b) != 0) { fprintf(stderr, "error: llama_decode failed\n"); return 2; }

    if (strcmp(cmd, "logits") == 0) {
        for (int i = all ? 0 : n - 1; i < n; i++) {
            const float * row = llama_get_logits_ith(ctx, i);
            for (int k = 0; k < n_vocab; k++) printf("%s%.9g", k ? " " : "", (double) row[k]);
            printf("\n");
        }
    } else {
        const double t0 = now_s();
        for (int g = 0; g < n_gen; g++) {
            const float * row = llama_get_logits_ith(ctx, -1);
            llama_token best = 0;
            for (int k = 1; k < n_vocab; k++) if (row[k] > row[best]) best = k;
            if (g + 1 == n_gen) break;  /* as ggmlr-llama generate: the last token is not decoded */
            if (llama_decode(ctx, llama_batch_get_one(&best, 1)) != 0) { fprintf(stderr, "error: llama_decode failed\n"); return 2; }
        }
        const double t1 = now_s();
        printf("generation: %d tokens in %.1f ms (%.1f tokens/s)\n", n_gen, 1e3 * (t1 - t0), n_gen / (t1 - t0));
    }
    llama_batch_free(b);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}

/* fuzz_tokenizer.c -- the llama example's tokenizer on the fuzzer's bytes.
 * Byte 0 picks the pre-tokenizer, byte 1 parse_special (bit 0) and
 * add_special (bit 1); the rest is the text (any bytes, invalid UTF-8
 * included). The vocabulary is byte-level BPE with a token for every byte,
 * a few merges, a control and a user-defined token. Invariants: the
 * pre-tokenizer's pieces are non-empty, ascending and cover the text; every
 * token id is in range; without special tokens parsed or added, the
 * tokens' pieces give the text back byte for byte.
 * Build with -DGGMLR_FUZZ=ON (clang) and run e.g.
 *   build-fuzz/tests/fuzz_tokenizer -max_total_time=60 corpus-copy/ tests/corpus/tokenizer */
#include "fuzz_target.h"

#include "gguf.h"
#include "llama.h"
#include "tokenizer_impl.h"

#include <stdbool.h>
#include <string.h>

FUZZ_ASAN_OPTIONS

static const char * const pre_names[] = {"default", "gpt-2", "llama3", "qwen2", "qwen35", "seed-coder", "deepseek-v3", "gpt-4o",
                                         "tekken", "deepseek-llm", "deepseek-coder", "falcon", "starcoder", "bloom", "viking"};
enum { N_PRE = sizeof pre_names / sizeof pre_names[0], N_BYTES = 256, N_TOKENS = N_BYTES + 5 };

/* The vocabulary for each pre-tokenizer, loaded once. */
static struct llama_vocab vocabs[N_PRE];
static struct llama_model models[N_PRE];
static char byte_text[N_BYTES][3];

static void setup(void) {
    static const char * extra[] = {"\xc4\xa0t", "he", "\xc4\xa0the", "<|ctl|>", "<u>"};  /* Ġt, he, Ġthe; a control and a user-defined token */
    static const char * merges[] = {"\xc4\xa0 t", "h e", "\xc4\xa0t he"};
    const char * tokens[N_TOKENS];
    int32_t types[N_TOKENS];
    for (int b = 0; b < N_BYTES; b++) {  /* GPT-2's character of each byte, as UTF-8 */
        const unsigned c = tok_byte_char((unsigned char) b);
        if (c < 0x80) { byte_text[b][0] = (char) c; byte_text[b][1] = 0; }
        else { byte_text[b][0] = (char) (0xc0 | (c >> 6)); byte_text[b][1] = (char) (0x80 | (c & 0x3f)); byte_text[b][2] = 0; }
        tokens[b] = byte_text[b];
        types[b] = 1;
    }
    for (int k = 0; k < 5; k++) { tokens[N_BYTES + k] = extra[k]; types[N_BYTES + k] = 1; }
    types[N_BYTES + 3] = 3;
    types[N_BYTES + 4] = 4;
    for (int p = 0; p < N_PRE; p++) {
        struct gguf_context * g = gguf_init_empty();
        gguf_set_val_str(g, "tokenizer.ggml.model", "gpt2");
        gguf_set_val_str(g, "tokenizer.ggml.pre", pre_names[p]);
        gguf_set_arr_str(g, "tokenizer.ggml.tokens", tokens, N_TOKENS);
        gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types, N_TOKENS);
        gguf_set_arr_str(g, "tokenizer.ggml.merges", merges, 3);
        gguf_set_val_u32(g, "tokenizer.ggml.bos_token_id", N_BYTES + 3);
        gguf_set_val_u32(g, "tokenizer.ggml.eos_token_id", N_BYTES + 3);
        gguf_set_val_bool(g, "tokenizer.ggml.add_eos_token", true);
        models[p] = (struct llama_model) {.gguf = g, .hp = {.n_vocab = N_TOKENS}};
        FUZZ_ASSERT(llama_vocab_load(&vocabs[p], &models[p]), "vocabulary for %s", pre_names[p]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    static bool ready;
    if (!ready) { setup(); ready = true; }
    if (size < 2) return 0;
    const int p = data[0] % N_PRE;
    const bool parse_special = data[1] & 1, add_special = data[1] & 2;
    const char * text = (const char *) data + 2;
    const size_t len = size - 2;

    size_t * ends = malloc((len ? len : 1) * sizeof *ends);
    if (!ends) return 0;
    const size_t n = llama_pre_split(vocabs[p].pre, text, len, ends);
    if (n != (size_t) -1) {
        FUZZ_ASSERT(len == 0 ? n == 0 : n >= 1 && ends[n - 1] == len, "%s: %zu pieces do not cover %zu bytes", pre_names[p], n, len);
        for (size_t i = 0; i < n; i++) FUZZ_ASSERT(ends[i] > (i ? ends[i - 1] : 0), "%s: piece %zu empty or out of order", pre_names[p], i);
    }
    free(ends);

    int32_t * ids = NULL;
    const int n_ids = llama_tokenize(&vocabs[p], text, len, add_special, parse_special, &ids);
    if (n_ids < 0) return 0;  /* out of memory, with a message */
    for (int i = 0; i < n_ids; i++) FUZZ_ASSERT(ids[i] >= 0 && ids[i] < N_TOKENS, "%s: token %d is %d", pre_names[p], i, ids[i]);
    if (!parse_special && !add_special) {  /* every byte has a token: the pieces are the text */
        char * back = malloc(len + 16);
        size_t m = 0;
        for (int i = 0; back && i < n_ids; i++) m += (size_t) llama_token_to_piece(&vocabs[p], ids[i], back + m, (int) (len + 16 - m));
        FUZZ_ASSERT(!back || (m == len && memcmp(back, text, len) == 0), "%s: %zu bytes back from %zu", pre_names[p], m, len);
        free(back);
    }
    free(ids);
    return 0;
}

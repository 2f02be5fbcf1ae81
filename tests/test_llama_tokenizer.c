/* test_llama_tokenizer.c -- SentencePiece-BPE tokenization of the tiny
 * model's vocabulary (ids: 0 <unk>, 1 <s>, 2 </s>, 3 + b the byte token
 * <0xbb>, 259 U+2581, 260 + c - 'a' the letters, then the merges in
 * tiny.c's order, scores -1, -2, ...) and of a hand-built one for ties;
 * byte-level BPE on a hand-built vocabulary (GPT-2's pre-tokenizer, llama3's
 * whole-token pieces); special tokens, BOS and EOS as llama.cpp adds them.
 * (The pre-tokenizers' splits: test_llama_pretok.c.)
 * Every expectation below is derived by hand from the rules. */
#include "common/test_common.h"

#include "llama.h"
#include "tokenizer_impl.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SP = 259, UNK = 0 };
#define L(c) (260 + (c) - 'a')
#define B(b) (3 + (b))
enum { T_THE = 290, T_IN = 291, T_AN = 292, T_ON = 295 };

static void expect(const struct llama_vocab * v, const char * text, bool bos, bool special, const int32_t * want, int n_want) {
    int32_t * got = NULL;
    const int n = llama_tokenize(v, text, strlen(text), bos, special, &got);
    bool same = n == n_want && memcmp(got, want, sizeof *want * (size_t) n) == 0;
    if (!CHECK(same, "tokenize '%s'%s: %d tokens, expected %d", text, special ? " (special)" : "", n, n_want)) {
        for (int i = 0; i < n; i++) fprintf(stderr, " %d", got[i]);
        fprintf(stderr, "\n");
    }
    free(got);
}

#define EXPECT(v, text, bos, special, ...) do { const int32_t w_[] = {__VA_ARGS__}; expect(v, text, bos, special, w_, (int) (sizeof w_ / sizeof w_[0])); } while (0)

static void test_tiny_vocab(void) {
    char path[] = "/tmp/ggmlr_tok_XXXXXX";
    const int fd = mkstemp(path);
    if (!CHECK(fd >= 0, "mkstemp")) return;
    close(fd);
    const struct llama_tiny_opts o = {.arch = "llama", .n_embd = 32, .n_ff = 32, .n_layer = 1, .n_head = 2, .n_head_kv = 1, .n_ctx = 8,
                                      .type = GGML_TYPE_F32, .seed = 1};
    struct llama_model m;
    struct llama_vocab v;
    if (CHECK(llama_tiny_write(path, &o) && llama_model_load(&m, path), "tiny model") && CHECK(llama_vocab_load(&v, &m), "vocab")) {
        CHECK(v.bos == 1 && v.eos == 2 && v.unk == 0 && v.add_bos && v.add_space_prefix && v.byte_id[0x41] == B(0x41), "vocab: ids and flags");
        /* ▁ t h e: ▁t (-1), then ▁th (-3), then ▁the (-5) */
        EXPECT(&v, "the", true, false, 1, T_THE);
        /* ▁and▁then: ▁t, ▁th, ▁the; then an (-7) beats ▁a (-9), so ▁and is never formed */
        EXPECT(&v, "and then", false, false, SP, T_AN, L('d'), T_THE, L('n'));
        /* É is C3 89, not a token: byte fallback; A (0x41) too */
        EXPECT(&v, "\xc3\x89tA", false, false, SP, B(0xc3), B(0x89), L('t'), B(0x41));
        /* on (-10) twice */
        EXPECT(&v, "onon", false, false, SP, T_ON, T_ON);
        /* special tokens: cut out, and the text after one gets the prefix again */
        EXPECT(&v, "</s>in", false, true, 2, SP, T_IN);
        EXPECT(&v, "</s>in", false, false, SP, B('<'), B('/'), L('s'), B('>'), T_IN);
        EXPECT(&v, "", true, false, 1);
        EXPECT(&v, "<unk>", false, true, UNK);  /* unknown-type tokens are cut out with the control ones */
        /* pieces: U+2581 as a space, bytes as themselves, control tokens as nothing */
        int32_t * ids = NULL;
        const char * text = "and then \xc3\x89t\nA";
        const int n = llama_tokenize(&v, text, strlen(text), true, false, &ids);
        char buf[128];
        int len = 0;
        for (int i = 0; i < n; i++) len += llama_token_to_piece(&v, ids[i], buf + len, (int) sizeof buf - len);
        CHECK(len == (int) strlen(text) + 1 && buf[0] == ' ' && memcmp(buf + 1, text, strlen(text)) == 0, "pieces: the text comes back");
        free(ids);
        llama_vocab_free(&v);
    }
    if (m.ctx) llama_model_free(&m);
    unlink(path);
}

/* A SentencePiece vocabulary in g without a space prefix: tokens, scores, types. */
static void spm_vocab(struct gguf_context * g, const char ** tokens, const float * scores, const int32_t * types, int n) {
    gguf_set_val_str(g, "tokenizer.ggml.model", "llama");
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", tokens, n);
    gguf_set_arr_data(g, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores, n);
    gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types, n);
    gguf_set_val_bool(g, "tokenizer.ggml.add_space_prefix", false);
}

/* "ab" and "bc" of equal score: the leftmost pair is merged first; no space prefix */
static void test_ties(void) {
    struct gguf_context * g = gguf_init_empty();
    const char * tokens[] = {"<unk>", "<s>", "</s>", "\xe2\x96\x81", "a", "b", "c", "ab", "bc", "<0x21>"};
    const float scores[] = {0, 0, 0, -10, -10, -10, -10, -1, -1, 0};
    const int32_t types[] = {2, 3, 3, 1, 1, 1, 1, 1, 1, 6};
    spm_vocab(g, tokens, scores, types, 10);
    struct llama_model m = {.gguf = g, .hp = {.n_vocab = 10}};
    struct llama_vocab v;
    if (CHECK(llama_vocab_load(&v, &m), "ties: vocab")) {
        EXPECT(&v, "abc", false, false, 7, 6);
        EXPECT(&v, "bcab", false, false, 8, 7);
        EXPECT(&v, "a b!", false, false, 4, 3, 5, 9);
        EXPECT(&v, "?", false, false, UNK);  /* no character token and no byte token: <unk> */
        llama_vocab_free(&v);
    }
    /* a vocabulary without scores is refused */
    gguf_remove_key(g, "tokenizer.ggml.scores");
    fprintf(stderr, "(expected) ");
    CHECK(!llama_vocab_load(&v, &m), "ties: a vocabulary without scores loaded");
    gguf_free(g);
}

/* SentencePiece merges word by word unless a token joins a character to a
 * following U+2581: "a▁" here, so "a a" must merge across the word start. */
static void test_word_start(void) {
    struct gguf_context * g = gguf_init_empty();
    const char * tokens[] = {"<unk>", "a", "\xe2\x96\x81", "a\xe2\x96\x81", ("\xe2\x96\x81" "a")};
    const float scores[] = {0, -10, -10, -1, -2};
    const int32_t types[] = {2, 1, 1, 1, 1};
    enum { A = 1, SP_ = 2, A_SP = 3, SP_A = 4 };
    spm_vocab(g, tokens, scores, types, 5);
    struct llama_model m = {.gguf = g, .hp = {.n_vocab = 5}};
    struct llama_vocab v;
    if (CHECK(llama_vocab_load(&v, &m), "word start: vocab")) {
        CHECK(!v.spm_words, "word start: a token joins a character to U+2581, yet words are merged apart");
        EXPECT(&v, "a a", false, false, A_SP, A);  /* a▁ (-1) before ▁a (-2) */
        llama_vocab_free(&v);
    }
    /* without "a▁": word by word, and the same tokens as over the whole text */
    tokens[3] = "aa";
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", tokens, 5);
    if (CHECK(llama_vocab_load(&v, &m), "word start: vocab 2")) {
        CHECK(v.spm_words, "word start: no token joins a word start, yet merged whole");
        EXPECT(&v, "a a", false, false, A, SP_A);
        llama_vocab_free(&v);
    }
    gguf_free(g);
}

/* A byte-level BPE vocabulary in g: pre-tokenizer, tokens, their types, merges. */
static void bpe_vocab(struct gguf_context * g, const char * pre, const char ** tokens, const int32_t * types, int n, const char ** merges, int n_merges) {
    gguf_set_val_str(g, "tokenizer.ggml.model", "gpt2");
    gguf_set_val_str(g, "tokenizer.ggml.pre", pre);
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", tokens, n);
    gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types, n);
    gguf_set_arr_str(g, "tokenizer.ggml.merges", merges, n_merges);
}

static void test_gpt2(void) {
    /* GPT-2's byte characters: space U+0120, newline U+010A, DEL U+0121, soft hyphen U+0143 */
    CHECK(tok_byte_char(' ') == 0x120 && tok_byte_char('\n') == 0x10a && tok_byte_char(127) == 0x121 && tok_byte_char(173) == 0x143 &&
          tok_byte_char('a') == 'a' && tok_char_byte(0x143) == 173 && tok_char_byte(0x100) == 0 && tok_char_byte(0x20) == -1,
          "gpt2: the byte-to-character map");
    struct gguf_context * g = gguf_init_empty();
    /* Ġ = U+0120, Ċ = U+010A */
    const char * tokens[] = {"h", "e", "l", "o", "w", "r", "d", "\xc4\xa0", "\xc4\x8a", "ll", "he", "hell", "hello", "\xc4\xa0w", "or",
                             "\xc4\xa0wor", "<|endoftext|>", "<unk>", "world"};
    const int32_t types[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 2, 1};
    const char * merges[] = {"l l", "h e", "he ll", "hell o", "\xc4\xa0 w", "o r", "\xc4\xa0w or"};
    enum { HELLO = 12, OR = 14, GWOR = 15, EOT = 16, UNK_ = 17, WORLD = 18 };  /* no merge makes "world" */
    bpe_vocab(g, "gpt2", tokens, types, 19, merges, 7);
    gguf_set_val_u32(g, "tokenizer.ggml.unknown_token_id", UNK_);
    gguf_set_val_u32(g, "tokenizer.ggml.bos_token_id", EOT);
    struct llama_model m = {.gguf = g, .hp = {.n_vocab = 19}};
    struct llama_vocab v;
    if (CHECK(llama_vocab_load(&v, &m), "gpt2: vocab")) {
        CHECK(!v.add_bos && !v.add_space_prefix, "gpt2: no BOS and no space prefix by default");
        /* hello: l l (0), h e (1), he ll (2), hell o (3); Ġworld: Ġ w (4), o r (5), Ġw or (6), then l, d */
        EXPECT(&v, "hello world", false, false, HELLO, GWOR, 2, 6);
        /* world without its space: o r, and no merge makes w + or */
        EXPECT(&v, "hello\nworld", false, false, HELLO, 8, 4, OR, 2, 6);
        EXPECT(&v, "<|endoftext|>hello", false, true, EOT, HELLO);
        EXPECT(&v, "helz", false, false, 10, 2, UNK_);
        int32_t * ids = NULL;
        const int n = llama_tokenize(&v, "hello world", 11, false, false, &ids);
        char buf[64];
        int len = 0;
        for (int i = 0; i < n; i++) len += llama_token_to_piece(&v, ids[i], buf + len, (int) sizeof buf - len);
        CHECK(len == 11 && memcmp(buf, "hello world", 11) == 0, "gpt2: pieces give the text back");
        free(ids);
        llama_vocab_free(&v);
    }
    /* llama3 ignores merges: a piece that is a token is that token; BOS by default */
    gguf_set_val_str(g, "tokenizer.ggml.pre", "llama-bpe");
    if (CHECK(llama_vocab_load(&v, &m), "llama-bpe: vocab")) {
        CHECK(v.add_bos && v.ignore_merges, "llama-bpe: BOS and merges ignored by default");
        EXPECT(&v, "hello\nworld", true, false, EOT, HELLO, 8, WORLD);
        /* "Ġworld" is no token: merged as before */
        EXPECT(&v, "hello world", false, false, HELLO, GWOR, 2, 6);
        llama_vocab_free(&v);
    }
    /* dbrx: the same regex, merges not ignored; the file's add_bos_token wins over the type's default */
    gguf_set_val_str(g, "tokenizer.ggml.pre", "dbrx");
    gguf_set_val_bool(g, "tokenizer.ggml.add_bos_token", true);
    if (CHECK(llama_vocab_load(&v, &m), "dbrx: vocab")) {
        EXPECT(&v, "hello\nworld", true, false, EOT, HELLO, 8, 4, OR, 2, 6);
        llama_vocab_free(&v);
    }
    gguf_remove_key(g, "tokenizer.ggml.add_bos_token");
    gguf_set_val_str(g, "tokenizer.ggml.pre", "no-such-type");
    fprintf(stderr, "(expected) ");
    CHECK(!llama_vocab_load(&v, &m), "gpt2: an unsupported pre-tokenizer loaded");
    gguf_remove_key(g, "tokenizer.ggml.pre");
    gguf_remove_key(g, "tokenizer.ggml.merges");
    fprintf(stderr, "(expected) ");
    CHECK(!llama_vocab_load(&v, &m), "gpt2: a tokenizer without merges loaded");
    gguf_free(g);
}

/* Special tokens, as llama.cpp cuts them out: each in turn from the longest
 * text, user-defined ones always, control and unknown ones with
 * parse_special; EOS last when add_eos_token says so. */
static void test_special(void) {
    struct gguf_context * g = gguf_init_empty();
    const char * tokens[] = {"a", "b", "c", "d", "cd", "<u>", "ab", "bcd", "<unk>", "</s>"};
    const int32_t types[] = {1, 1, 1, 1, 1, 4, 3, 4, 2, 3};  /* <u> and bcd user-defined, ab and </s> control, <unk> unknown */
    enum { A, B_, C, D, CD, U, AB, BCD, UNK_, EOS };
    const char * merges[] = {"c d"};
    bpe_vocab(g, "gpt-2", tokens, types, 10, merges, 1);
    gguf_set_val_u32(g, "tokenizer.ggml.unknown_token_id", UNK_);
    gguf_set_val_u32(g, "tokenizer.ggml.eos_token_id", EOS);
    gguf_set_val_bool(g, "tokenizer.ggml.add_eos_token", true);
    struct llama_model m = {.gguf = g, .hp = {.n_vocab = 10}};
    struct llama_vocab v;
    if (CHECK(llama_vocab_load(&v, &m), "special: vocab")) {
        CHECK(!v.add_bos && v.add_eos, "special: add_bos and add_eos");
        EXPECT(&v, "a<u>b", false, false, A, U, B_);         /* user-defined: even without parse_special */
        EXPECT(&v, "abcd", false, true, A, BCD);             /* bcd (3 bytes) is cut out before ab (2) */
        EXPECT(&v, "abcd", false, false, A, BCD);            /* ab is control: not without parse_special */
        EXPECT(&v, "abab", false, true, AB, AB);
        EXPECT(&v, "abab", false, false, A, B_, A, B_);      /* one piece; no merge of a and b */
        EXPECT(&v, "<unk>cd", false, true, UNK_, CD);
        EXPECT(&v, "acd", true, false, A, CD, EOS);          /* add_special: EOS last (and no BOS) */
        EXPECT(&v, "", true, false, EOS);
        llama_vocab_free(&v);
    }
    gguf_free(g);
}

int main(void) {
    test_tiny_vocab();
    test_ties();
    test_word_start();
    test_gpt2();
    test_special();
    return tc_finish("test_llama_tokenizer");
}

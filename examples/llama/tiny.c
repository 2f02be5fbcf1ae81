/* tiny.c -- a small random llama-family model written as llama.cpp writes
 * one: its keys, tensor names and shapes, weights of any block type
 * (quantized with ggml_quantize_chunk), and a SentencePiece vocabulary of
 * the control tokens, the 256 byte tokens, the lowercase letters and a few
 * merges. For tests and for trying the program without a download. */
#include "llama.h"

#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SentencePiece's space, U+2581 */
#define SP "\xe2\x96\x81"

/* merged pieces, best first: the score of piece i is -(i + 1) */
static const char * const merges[] = {
    SP "t", "th", SP "th", "he", SP "the", "in", "an", "er", SP "a", "on",
    "re", "nd", SP "and", "ing", SP "o", "ou", "is", SP "i", "at", "en",
};
enum { N_MERGES = sizeof merges / sizeof merges[0], N_SINGLE = 27 /* ▁ and a..z */, TINY_VOCAB = 3 + 256 + N_SINGLE + N_MERGES };

/* SentencePiece's token types, as llama.cpp stores them */
enum { TOKEN_NORMAL = 1, TOKEN_UNKNOWN = 2, TOKEN_CONTROL = 3, TOKEN_BYTE = 6 };

static void write_vocab(struct gguf_context * g) {
    static char bytes[256][8], singles[N_SINGLE][8];
    const char * tokens[TINY_VOCAB];
    float scores[TINY_VOCAB];
    int32_t types[TINY_VOCAB];
    int n = 0;
    const char * control[3] = {"<unk>", "<s>", "</s>"};
    for (int i = 0; i < 3; i++, n++) { tokens[n] = control[i]; scores[n] = 0.0f; types[n] = i == 0 ? TOKEN_UNKNOWN : TOKEN_CONTROL; }
    for (int b = 0; b < 256; b++, n++) {
        snprintf(bytes[b], sizeof bytes[b], "<0x%02X>", b);
        tokens[n] = bytes[b]; scores[n] = 0.0f; types[n] = TOKEN_BYTE;
    }
    for (int i = 0; i < N_SINGLE; i++, n++) {
        if (i == 0) snprintf(singles[i], sizeof singles[i], SP);
        else snprintf(singles[i], sizeof singles[i], "%c", 'a' + i - 1);
        tokens[n] = singles[i]; scores[n] = -1000.0f - (float) i; types[n] = TOKEN_NORMAL;
    }
    for (int i = 0; i < N_MERGES; i++, n++) { tokens[n] = merges[i]; scores[n] = -(float) (i + 1); types[n] = TOKEN_NORMAL; }
    gguf_set_val_str(g, "tokenizer.ggml.model", "llama");
    gguf_set_arr_str(g, "tokenizer.ggml.tokens", tokens, (size_t) n);
    gguf_set_arr_data(g, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, scores, (size_t) n);
    gguf_set_arr_data(g, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, types, (size_t) n);
    gguf_set_val_u32(g, "tokenizer.ggml.unknown_token_id", 0);
    gguf_set_val_u32(g, "tokenizer.ggml.bos_token_id", 1);
    gguf_set_val_u32(g, "tokenizer.ggml.eos_token_id", 2);
    gguf_set_val_bool(g, "tokenizer.ggml.add_bos_token", true);
}

/* Uniform in [-a, a]. */
static float uniform(uint64_t * s, float a) { return (float) ((2.0 * rng_uniform(s) - 1.0) * a); }

/* A tensor [ne0, ne1] of type `type` holding uniform values in [center - a, center + a]. */
static struct ggml_tensor * add_tensor(struct ggml_context * ctx, struct gguf_context * g, const char * name, enum ggml_type type,
                                       int64_t ne0, int64_t ne1, float center, float a, uint64_t * s) {
    if (ne0 % ggml_blck_size(type) != 0) { fprintf(stderr, "error: %s: rows of %lld are not whole blocks of %s\n", name, (long long) ne0, ggml_type_name(type)); return NULL; }
    struct ggml_tensor * t = ne1 == 1 ? ggml_new_tensor_1d(ctx, type, ne0) : ggml_new_tensor_2d(ctx, type, ne0, ne1);
    float * x = malloc((size_t) (ne0 * ne1) * sizeof *x);
    if (!t || !x) { free(x); fprintf(stderr, "error: %s: %s\n", name, t ? "out of memory" : ggml_last_error()); return NULL; }
    for (int64_t i = 0; i < ne0 * ne1; i++) x[i] = center + uniform(s, a);
    if (type == GGML_TYPE_F32) memcpy(t->data, x, (size_t) (ne0 * ne1) * sizeof *x);
    else ggml_quantize_chunk(type, x, t->data, 0, ne1, ne0, NULL);
    free(x);
    ggml_set_name(t, name);
    gguf_add_tensor(g, t);
    return t;
}

bool llama_tiny_write(const char * path, const struct llama_tiny_opts * o) {
    const bool qwen = strcmp(o->arch, "qwen2") == 0;
    if (!qwen && strcmp(o->arch, "llama") != 0) { fprintf(stderr, "error: architecture '%s' (llama, qwen2)\n", o->arch); return false; }
    if (o->n_layer < 1 || o->n_head < 1 || o->n_head_kv < 1 || o->n_embd % o->n_head || o->n_head % o->n_head_kv || o->n_ff < 1 || o->n_ctx < 1) {
        fprintf(stderr, "error: inconsistent tiny model sizes\n");
        return false;
    }
    const int64_t C = o->n_embd, F = o->n_ff, V = TINY_VOCAB, D = C / o->n_head, Ckv = D * o->n_head_kv;
    const size_t mem = (size_t) (8 + 16 * o->n_layer) * (ggml_tensor_overhead() + 64) +
                       sizeof(float) * (size_t) (2 * V * C + o->n_layer * (4 * C * C + 3 * C * F + 8 * C));
    struct ggml_init_params ip = {.mem_size = mem, .mem_buffer = NULL, .no_alloc = false};
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * g = gguf_init_empty();
    if (!ctx || !g) { fprintf(stderr, "error: %s\n", ggml_last_error()); ggml_free(ctx); if (g) gguf_free(g); return false; }
    char key[128];
#define ARCH_KEY(k) (snprintf(key, sizeof key, "%s." k, o->arch), key)
    gguf_set_val_str(g, "general.architecture", o->arch);
    gguf_set_val_str(g, "general.name", "ggmlr tiny random model");
    gguf_set_val_u32(g, ARCH_KEY("context_length"), (uint32_t) o->n_ctx);
    gguf_set_val_u32(g, ARCH_KEY("embedding_length"), (uint32_t) C);
    gguf_set_val_u32(g, ARCH_KEY("feed_forward_length"), (uint32_t) F);
    gguf_set_val_u32(g, ARCH_KEY("block_count"), (uint32_t) o->n_layer);
    gguf_set_val_u32(g, ARCH_KEY("attention.head_count"), (uint32_t) o->n_head);
    gguf_set_val_u32(g, ARCH_KEY("attention.head_count_kv"), (uint32_t) o->n_head_kv);
    gguf_set_val_u32(g, ARCH_KEY("rope.dimension_count"), (uint32_t) D);
    gguf_set_val_u32(g, ARCH_KEY("vocab_size"), (uint32_t) V);
    gguf_set_val_f32(g, ARCH_KEY("rope.freq_base"), qwen ? 1000000.0f : 10000.0f);
    gguf_set_val_f32(g, ARCH_KEY("attention.layer_norm_rms_epsilon"), 1e-5f);
#undef ARCH_KEY
    write_vocab(g);
    uint64_t s = o->seed;
    /* weights ~ U(-sqrt(3/n_in), sqrt(3/n_in)) (unit variance of each output
     * for unit inputs), norm gains ~ 1 +- 0.2 */
    const float a_c = sqrtf(3.0f / (float) C), a_f = sqrtf(3.0f / (float) F);
    bool ok = add_tensor(ctx, g, "token_embd.weight", o->type, C, V, 0.0f, 1.0f, &s) &&
              add_tensor(ctx, g, "output_norm.weight", GGML_TYPE_F32, C, 1, 1.0f, 0.2f, &s) &&
              (o->tied || add_tensor(ctx, g, "output.weight", o->type, C, V, 0.0f, a_c, &s));
    for (int l = 0; l < o->n_layer && ok; l++) {
        char name[GGML_MAX_NAME];
#define T(suffix, type, ne0, ne1, center, a) (snprintf(name, sizeof name, "blk.%d." suffix, l), add_tensor(ctx, g, name, type, ne0, ne1, center, a, &s) != NULL)
        ok = T("attn_norm.weight", GGML_TYPE_F32, C, 1, 1.0f, 0.2f) &&
             T("attn_q.weight", o->type, C, C, 0.0f, a_c) && T("attn_k.weight", o->type, C, Ckv, 0.0f, a_c) &&
             T("attn_v.weight", o->type, C, Ckv, 0.0f, a_c) && T("attn_output.weight", o->type, C, C, 0.0f, a_c) &&
             (!qwen || (T("attn_q.bias", GGML_TYPE_F32, C, 1, 0.0f, 0.1f) && T("attn_k.bias", GGML_TYPE_F32, Ckv, 1, 0.0f, 0.1f) &&
                        T("attn_v.bias", GGML_TYPE_F32, Ckv, 1, 0.0f, 0.1f))) &&
             T("ffn_norm.weight", GGML_TYPE_F32, C, 1, 1.0f, 0.2f) &&
             T("ffn_gate.weight", o->type, C, F, 0.0f, a_c) && T("ffn_up.weight", o->type, C, F, 0.0f, a_c) &&
             T("ffn_down.weight", o->type, F, C, 0.0f, a_f);
#undef T
    }
    if (ok && !gguf_write_to_file(g, path, false)) { fprintf(stderr, "error: writing %s: %s\n", path, ggml_last_error()); ok = false; }
    gguf_free(g);
    ggml_free(ctx);
    return ok;
}

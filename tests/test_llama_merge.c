/* test_llama_merge.c -- the merged model (base + LoRA adapter written as one
 * GGUF) on tiny generated models of each stored type: its logits equal the
 * base's with the adapter applied (F32: up to float rounding; F16, BF16 and
 * quantized types: within the error that storing the same floats in that
 * type makes, measured on the F32 model of the same seed); the tensors the
 * adapter does not touch and every key are copied unchanged. */
#include "common/test_common.h"
#include "llama.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/ggmlr_merge_XXXXXX";

enum { T = 8 };
static const int32_t tokens[T] = {1, 3, 14, 25, 36, 47, 58, 69};

/* logits [T][V] of tokens with m (and lora, may be NULL), as doubles */
static bool logits_of(const struct llama_model * m, const struct llama_lora * lora, double * out) {
    struct llama_session s;
    if (!CHECK(llama_session_init(&s, m, lora, T, 2) && llama_decode(&s, tokens, T, true), "decode")) return false;
    for (int64_t i = 0; i < (int64_t) T * m->hp.n_vocab; i++) out[i] = s.logits[i];
    llama_session_free(&s);
    return true;
}

static double rel_err(const double * x, const double * ref, int64_t n) {
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < n; i++) { num += (x[i] - ref[i]) * (x[i] - ref[i]); den += ref[i] * ref[i]; }
    return sqrt(num / den);
}

/* every key of a equals b's in count and name; every tensor not in `changed`
 * (a list of names) has the same type and bytes */
static void check_copied(const struct llama_model * a, const struct llama_model * b, const struct llama_lora * l, const char * what) {
    CHECK(gguf_get_n_kv(a->gguf) == gguf_get_n_kv(b->gguf) && gguf_get_n_tensors(a->gguf) == gguf_get_n_tensors(b->gguf), "%s: key or tensor count", what);
    for (int64_t i = 0; i < gguf_get_n_kv(a->gguf) && i < gguf_get_n_kv(b->gguf); i++)
        CHECK(strcmp(gguf_get_key(a->gguf, i), gguf_get_key(b->gguf, i)) == 0, "%s: key %lld", what, (long long) i);
    int same = 0, merged = 0;
    for (int64_t i = 0; i < gguf_get_n_tensors(a->gguf); i++) {
        const char * name = gguf_get_tensor_name(a->gguf, i);
        const struct ggml_tensor * x = ggml_get_tensor(a->ctx, name), * y = ggml_get_tensor(b->ctx, name);
        if (!CHECK(y && x->type == y->type && ggml_nbytes(x) == ggml_nbytes(y), "%s: %s type or size", what, name)) continue;
        int layer = -1;
        char mat[32] = "";
        const bool adapted = sscanf(name, "blk.%d.%31[a-z_].weight", &layer, mat) == 2 &&
                             ((strcmp(mat, "attn_q") == 0 && l->a[layer][LLAMA_Q]) || (strcmp(mat, "ffn_down") == 0 && l->a[layer][LLAMA_DOWN]));
        const bool equal = memcmp(x->data, y->data, ggml_nbytes(x)) == 0;
        if (adapted) { merged++; CHECK(!equal, "%s: %s was not changed", what, name); }
        else { same++; CHECK(equal, "%s: %s changed", what, name); }
    }
    CHECK(merged == 2 * a->hp.n_layer && same > 0, "%s: %d merged, %d copied", what, merged, same);
}

static void test_type(enum ggml_type type) {
    const char * tn = ggml_type_name(type);
    struct llama_tiny_opts o = {.arch = "llama", .n_embd = 256, .n_ff = 256, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ctx = 16,
                                .type = GGML_TYPE_F32, .seed = 4};
    struct llama_model f32, base, out;
    if (!CHECK(llama_tiny_write("f32.gguf", &o) && llama_model_load(&f32, "f32.gguf"), "%s: f32 model", tn)) return;
    o.type = type;
    if (!CHECK(llama_tiny_write("base.gguf", &o) && llama_model_load(&base, "base.gguf"), "%s: base", tn)) { llama_model_free(&f32); return; }
    /* adapters on q and down with B != 0 (new adapters have B = 0, no change) */
    struct llama_lora l;
    const unsigned mats = (1u << LLAMA_Q) | (1u << LLAMA_DOWN);
    if (CHECK(llama_lora_init(&l, &base, 4, 8.0f, mats, 7), "%s: lora", tn)) {
        tc_seed(11);
        for (int layer = 0; layer < base.hp.n_layer; layer++) { tc_fill_uniform(l.b[layer][LLAMA_Q], -0.1, 0.1); tc_fill_uniform(l.b[layer][LLAMA_DOWN], -0.1, 0.1); }
        if (CHECK(llama_lora_merge(&base, &l, "merged.gguf") && llama_model_load(&out, "merged.gguf"), "%s: merge and reload", tn)) {
            const int64_t n = (int64_t) T * base.hp.n_vocab;
            double * with = malloc(sizeof(double) * (size_t) n), * merged = malloc(sizeof(double) * (size_t) n),
                   * plain = malloc(sizeof(double) * (size_t) n), * exact = malloc(sizeof(double) * (size_t) n);
            if (logits_of(&base, &l, with) && logits_of(&out, NULL, merged) && logits_of(&base, NULL, plain) && logits_of(&f32, NULL, exact)) {
                const double e = rel_err(merged, with, n), e_adapter = rel_err(plain, with, n);
                /* the type's own error: the same floats stored in it (the F32 model of the same seed) */
                const double e_type = rel_err(plain, exact, n);
                const double tol = type == GGML_TYPE_F32 ? 1e-5 : 2.0 * e_type;
                printf("merged %-5s: logits vs base + adapter: relative error %.2e (tolerance %.2e; the type's own error %.2e; "
                       "the adapter's effect %.2e)\n", tn, e, tol, e_type, e_adapter);
                CHECK(e < tol, "%s: merged logits relative error %g >= %g", tn, e, tol);
                CHECK(e_adapter > 3.0 * tol, "%s: the adapter changes the logits too little (%g) for the check to mean anything", tn, e_adapter);
            }
            check_copied(&base, &out, &l, tn);
            free(with); free(merged); free(plain); free(exact);
            llama_model_free(&out);
        }
        llama_lora_free(&l);
    }
    llama_model_free(&base);
    llama_model_free(&f32);
}

int main(void) {
    if (!mkdtemp(dir) || chdir(dir) != 0) { perror(dir); return 1; }  /* the models are written there */
    const enum ggml_type types[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (tc_part(ggml_type_name(types[i]))) test_type(types[i]);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return tc_finish("test_llama_merge");
}

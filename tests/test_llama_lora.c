/* test_llama_lora.c -- LoRA on the tiny generated models: the gradients of
 * A and B against central differences of a float64 reference loss; training
 * on a Q4_K base lowers the validation loss; a run resumed from a checkpoint
 * repeats the uninterrupted run's losses bit for bit; the adapter file
 * reloads, and applying it gives the logits of W + (alpha/r) B A (float64). */
#include "common/test_common.h"
#include "common/llama_ref.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/ggmlr_lora_XXXXXX";

static const char * path_of(const char * name) {
    static char buf[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
    return buf[i];
}

static bool load_tiny(struct llama_model * m, const struct llama_tiny_opts * o, const char * name) {
    const char * path = path_of(name);
    return CHECK(llama_tiny_write(path, o) && llama_model_load(m, path), "%s: write and load", name);
}

static void test_gradients(void) {
    const struct llama_tiny_opts o = {.arch = "qwen2", .n_embd = 32, .n_ff = 48, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ctx = 16,
                                      .type = GGML_TYPE_F32, .seed = 3};
    struct llama_model m;
    if (!load_tiny(&m, &o, "grad.gguf")) return;
    struct llama_lora l;
    if (!CHECK(llama_lora_init(&l, &m, 2, 4.0f, LLAMA_LORA_ALL, 1), "grad: lora")) { llama_model_free(&m); return; }
    /* B = 0 would make A's gradient zero: give B values */
    tc_seed(17);
    struct ggml_tensor * params[2 * LLAMA_N_MAT * 2];
    int n = 0;
    for (int layer = 0; layer < m.hp.n_layer; layer++)
        for (int k = 0; k < LLAMA_N_MAT; k++) { tc_fill_uniform(l.b[layer][k], -0.2, 0.2); params[n++] = l.a[layer][k]; params[n++] = l.b[layer][k]; }
    int checked = 0;
    const double e = llama_ref_grad_error(&m, &l, params, n, 4, &checked);
    printf("LoRA gradients (%d entries of A and B) vs float64 central differences: relative error %.2e\n", checked, e);
    CHECK(e < 1e-3, "grad: relative error %g", e);
    llama_lora_free(&l);
    llama_model_free(&m);
}

static struct llama_train_opts opts(void) {
    return (struct llama_train_opts) {.batch = 4, .n_ctx = 16, .accum = 2, .iters = 30, .lr = 2e-2f, .min_lr = 2e-3f, .warmup = 3,
                                      .beta1 = 0.9f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 0.0f, .clip = 1.0f,
                                      .threads = 2, .seed = 5, .eval_batches = 4};
}

static const struct llama_tiny_opts q4k_base = {.arch = "llama", .n_embd = 256, .n_ff = 256, .n_layer = 2, .n_head = 4, .n_head_kv = 2,
                                                .n_ctx = 32, .type = GGML_TYPE_Q4_K, .seed = 8};

/* trains steps [from, to) (from a checkpoint when from > 0), saving at `save`; losses[step] */
static bool train(const struct llama_model * m, const struct llama_data * d, int from, int to, int save, float * losses, float * val0, float * val1) {
    struct llama_lora l;
    const struct llama_train_opts o = opts();
    bool ok = from == 0 ? llama_lora_init(&l, m, 4, 8.0f, LLAMA_LORA_DEFAULT, 21) : llama_lora_load(&l, m, path_of("ckpt.gguf"));
    if (!CHECK(ok, "train: lora")) return false;
    struct llama_trainer t;
    ok = CHECK(llama_trainer_init(&t, m, &l, d, &o), "train: init");
    int64_t step = 0;
    if (ok && from > 0) ok = CHECK(llama_trainer_resume(&t, path_of("ckpt.gguf"), &step) && step == from, "train: resume at %lld", (long long) step);
    if (ok && val0) ok = CHECK(llama_trainer_eval(&t, val0), "train: eval");
    for (int s = from; s < to && ok; s++) {
        float gn;
        ok = CHECK(llama_trainer_step(&t, s, &losses[s], &gn), "train: step %d", s);
        if (ok && s + 1 == save) ok = CHECK(llama_trainer_save(&t, path_of("ckpt.gguf"), s + 1), "train: save");
    }
    if (ok && val1) ok = CHECK(llama_trainer_eval(&t, val1), "train: eval");
    if (ok && to == (int) o.iters) ok = CHECK(llama_lora_save(&l, m, path_of("adapter.gguf")), "train: adapter");
    if (t.opt) llama_trainer_free(&t);
    llama_lora_free(&l);
    return ok;
}

static void test_training(void) {
    struct llama_model m;
    if (!load_tiny(&m, &q4k_base, "q4k.gguf")) return;
    struct llama_data d = llama_test_stream(m.hp.n_vocab, 4000);
    const int N = (int) opts().iters;
    float full[64], resumed[64], val0, val1;
    if (train(&m, &d, 0, N, N / 2, full, &val0, &val1)) {
        printf("LoRA on a Q4_K base: validation loss %.4f -> %.4f after %d steps (train %.4f -> %.4f)\n", (double) val0, (double) val1, N,
               (double) full[0], (double) full[N - 1]);
        CHECK(val1 < val0 - 1.0f, "training: validation loss %g -> %g", (double) val0, (double) val1);
        if (train(&m, &d, N / 2, N, -1, resumed, NULL, NULL)) {
            CHECK(memcmp(full + N / 2, resumed + N / 2, sizeof(float) * (size_t) (N - N / 2)) == 0, "resume: the losses differ");
            for (int s = N / 2; s < N; s++) if (full[s] != resumed[s]) { printf("  step %d: %.9g vs %.9g\n", s, (double) full[s], (double) resumed[s]); break; }
        }
    }
    free(d.tokens);
    llama_model_free(&m);
}

/* the adapter written by the training above, on its base: the logits with it
 * are those of the merged weights (float64 reference) and differ from the base's */
static void test_adapter_file(void) {
    struct llama_model m;
    if (!load_tiny(&m, &q4k_base, "q4k.gguf")) return;
    struct llama_lora l;
    if (!CHECK(llama_lora_load(&l, &m, path_of("adapter.gguf")), "adapter: load")) { llama_model_free(&m); return; }
    CHECK(l.rank == 4 && l.alpha == 8.0f && l.mats == LLAMA_LORA_DEFAULT && l.a[1][LLAMA_V] && !l.a[0][LLAMA_K], "adapter: rank, alpha, matrices");
    CHECK(l.a[0][LLAMA_Q]->ne[0] == 256 && l.a[0][LLAMA_Q]->ne[1] == 4 && l.b[0][LLAMA_V]->ne[0] == 4 && l.b[0][LLAMA_V]->ne[1] == 128,
          "adapter: llama.cpp's shapes lora_a [n_in, r], lora_b [r, n_out]");
    enum { T = 8 };
    const int32_t tok[T] = {1, 3, 14, 25, 36, 47, 58, 69};
    const int V = m.hp.n_vocab;
    double * ref = malloc(sizeof(double) * T * (size_t) V), * base = malloc(sizeof(double) * T * (size_t) V);
    struct llama_ref * r = llama_ref_new(&m, &l), * r0 = llama_ref_new(&m, NULL);
    llama_ref_forward(r, tok, T, ref);
    llama_ref_forward(r0, tok, T, base);
    struct llama_session s;
    if (CHECK(llama_session_init(&s, &m, &l, T, 2) && llama_decode(&s, tok, T, true), "adapter: decode")) {
        const double e = tc_rel_err_f32(s.logits, ref, (int64_t) T * V), e0 = tc_rel_err_f32(s.logits, base, (int64_t) T * V);
        printf("logits with the adapter: relative error %.2e to W x + (alpha/r) B A x in float64, %.2e to the base model\n", e, e0);
        CHECK(e < LLAMA_REF_TOL_QUANT, "adapter: relative error %g to the merged reference (Q4_K base)", e);
        CHECK(e0 > 1e-2, "adapter: the adapter hardly changes the logits (%g)", e0);
        llama_session_free(&s);
    }
    llama_ref_free(r); llama_ref_free(r0);
    free(ref); free(base);
    llama_lora_free(&l);
    /* another architecture's base refuses it */
    struct llama_tiny_opts o = q4k_base;
    o.arch = "qwen2";
    struct llama_model q;
    if (load_tiny(&q, &o, "qwen.gguf")) {
        fprintf(stderr, "(expected) ");
        CHECK(!llama_lora_load(&l, &q, path_of("adapter.gguf")), "adapter: loaded on another architecture");
        llama_model_free(&q);
    }
    llama_model_free(&m);
}

int main(void) {
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    if (tc_part("gradients")) test_gradients();
    if (tc_part("training")) { test_training(); test_adapter_file(); }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return tc_finish("test_llama_lora");
}

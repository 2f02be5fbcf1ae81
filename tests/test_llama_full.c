/* test_llama_full.c -- full training of every weight on tiny generated
 * models: the gradients of all weights (norms, matrices, biases, a tied
 * embedding) against central differences of the float64 reference loss;
 * training a BF16 model (through F32 copies) lowers the validation loss; a
 * run resumed from a checkpoint, with gradient checkpointing (recomputed
 * activations), repeats the uninterrupted run's losses and writes the same
 * model bit for bit; the written model keeps BF16, reloads,
 * and gives the trained weights' logits to BF16's rounding; the loss
 * reported does not depend on gradient accumulation; a quantized model is
 * refused. */
#include "common/test_common.h"
#include "common/llama_ref.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/ggmlr_full_XXXXXX";

static void test_gradients(void) {
    const struct llama_tiny_opts o = {.arch = "qwen2", .n_embd = 32, .n_ff = 48, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ctx = 16,
                                      .type = GGML_TYPE_F32, .tied = true, .seed = 3};
    struct llama_model m;
    if (!CHECK(llama_tiny_write("grad.gguf", &o) && llama_model_load(&m, "grad.gguf") && llama_model_make_trainable(&m), "grad: model")) return;
    struct ggml_tensor * w[LLAMA_MAX_WEIGHTS];
    const int n = llama_model_weights(&m, w);
    CHECK(n == 2 + 2 * (2 + LLAMA_N_MAT + 3), "grad: %d weights (tied: token_embd once)", n);
    tc_seed(23);
    int checked = 0;
    const double e = llama_ref_grad_error(&m, NULL, w, n, 6, &checked);
    printf("full training: gradients (%d entries of %d weights) vs float64 central differences: relative error %.2e\n", checked, n, e);
    CHECK(e < 1e-3, "grad: relative error %g", e);
    llama_model_free(&m);
}

static const struct llama_tiny_opts bf16_base = {.arch = "llama", .n_embd = 64, .n_ff = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 2,
                                                 .n_ctx = 32, .type = GGML_TYPE_BF16, .seed = 8};

static struct llama_train_opts opts(void) {
    return (struct llama_train_opts) {.batch = 4, .n_ctx = 16, .accum = 1, .iters = 24, .lr = 5e-3f, .min_lr = 5e-4f, .warmup = 3,
                                      .beta1 = 0.9f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 0.0f, .clip = 1.0f,
                                      .threads = 2, .seed = 5, .eval_batches = 4};
}

/* Trains the base's weights over steps [from, to) (from ckpt.gguf when
 * from > 0), checkpointing after step `save`, and writes the model to out;
 * losses[step]. The trained model stays in *m (free it). */
static bool train(struct llama_model * m, const struct llama_data * d, int from, int to, int save, float * losses, float * val0, float * val1,
                  const char * out, bool grad_checkpoint) {
    if (!CHECK(llama_model_load(m, "base.gguf") && llama_model_make_trainable(m), "train: model")) return false;
    struct llama_train_opts o = opts();
    o.grad_checkpoint = grad_checkpoint;
    struct llama_trainer t;
    bool ok = CHECK(llama_trainer_init(&t, m, NULL, d, &o), "train: init");
    int64_t step = 0;
    if (ok && from > 0) ok = CHECK(llama_trainer_resume(&t, "ckpt.gguf", &step) && step == from, "train: resume at %lld", (long long) step);
    if (ok && val0) ok = CHECK(llama_trainer_eval(&t, val0), "train: eval");
    for (int s = from; s < to && ok; s++) {
        float gn;
        ok = CHECK(llama_trainer_step(&t, s, &losses[s], &gn), "train: step %d", s);
        if (ok && s + 1 == save) ok = CHECK(llama_trainer_save(&t, "ckpt.gguf", s + 1), "train: save");
    }
    if (ok && val1) ok = CHECK(llama_trainer_eval(&t, val1), "train: eval");
    if (ok) ok = CHECK(llama_model_save_trained(m, out), "train: write %s", out);
    if (t.opt) llama_trainer_free(&t);
    return ok;
}

/* logits [T][V] of a fixed prompt, as doubles */
enum { T = 8 };
static bool logits_of(const struct llama_model * m, double * out) {
    static const int32_t tok[T] = {1, 3, 14, 25, 36, 47, 58, 69};
    struct llama_session s;
    if (!CHECK(llama_session_init(&s, m, NULL, T, 2) && llama_decode(&s, tok, T, true), "decode")) return false;
    for (int64_t i = 0; i < (int64_t) T * m->hp.n_vocab; i++) out[i] = s.logits[i];
    llama_session_free(&s);
    return true;
}

static bool same_files(const char * a, const char * b) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
    return system(cmd) == 0;
}

/* the written model: BF16 kept, reloads, the trained logits to BF16's rounding, not the base's */
static void check_written(const struct llama_model * trained) {
    struct llama_model w, base;
    if (!CHECK(llama_model_load(&w, "full.gguf") && llama_model_load(&base, "base.gguf"), "written: reload")) return;
    CHECK(w.layers[1].w[LLAMA_DOWN]->type == GGML_TYPE_BF16 && w.tok_embd->type == GGML_TYPE_BF16 && w.output_norm->type == GGML_TYPE_F32,
          "written: the stored types changed");
    const int64_t n = (int64_t) T * w.hp.n_vocab;
    double * a = malloc(sizeof(double) * (size_t) n), * b = malloc(sizeof(double) * (size_t) n), * c = malloc(sizeof(double) * (size_t) n);
    if (logits_of(trained, a) && logits_of(&w, b) && logits_of(&base, c)) {
        double num = 0.0, num0 = 0.0, den = 0.0;
        for (int64_t i = 0; i < n; i++) { num += (b[i] - a[i]) * (b[i] - a[i]); num0 += (c[i] - a[i]) * (c[i] - a[i]); den += a[i] * a[i]; }
        const double e = sqrt(num / den), e0 = sqrt(num0 / den);
        printf("written BF16 model: logits vs the trained F32 weights' %.2e (the untrained base's: %.2e)\n", e, e0);
        CHECK(e < 2e-2 && e0 > 10.0 * e, "written: logits error %g, base %g", e, e0);
    }
    free(a); free(b); free(c);
    /* it generates */
    struct llama_session s;
    const int32_t bos = 1;
    struct llama_sampler smp = {.temperature = 0.0f, .top_k = 0, .top_p = 1.0f, .state = 1};
    if (CHECK(llama_session_init(&s, &w, NULL, 8, 2) && llama_decode(&s, &bos, 1, false), "written: decode")) {
        for (int i = 0; i < 4; i++) {
            const int32_t next = llama_sample(&smp, s.logits, w.hp.n_vocab);
            if (!CHECK(next >= 0 && next < w.hp.n_vocab && llama_decode(&s, &next, 1, false), "written: generate")) break;
        }
        llama_session_free(&s);
    }
    llama_model_free(&w);
    llama_model_free(&base);
}

/* The validation loss of the untrained base with gradient accumulation over
 * `accum` micro-batches: the loss reported must not depend on it. */
static float val_loss_with_accum(const struct llama_data * d, int accum) {
    struct llama_model m;
    struct llama_trainer t;
    struct llama_train_opts o = opts();
    o.accum = accum;
    float v = -1.0f;
    if (CHECK(llama_model_load(&m, "base.gguf") && llama_model_make_trainable(&m) && llama_trainer_init(&t, &m, NULL, d, &o), "accum %d: init", accum)) {
        CHECK(llama_trainer_eval(&t, &v), "accum %d: eval", accum);
        llama_trainer_free(&t);
    }
    llama_model_free(&m);
    return v;
}

static void test_training(void) {
    struct llama_model m, r;
    if (!CHECK(llama_tiny_write("base.gguf", &bf16_base) && llama_model_load(&m, "base.gguf"), "base")) return;
    struct llama_data d = llama_test_stream(m.hp.n_vocab, 4000);
    llama_model_free(&m);
    const int N = (int) opts().iters;
    float full[64], resumed[64], val0, val1;
    if (train(&m, &d, 0, N, N / 2, full, &val0, &val1, "full.gguf", false)) {
        printf("full training of a BF16 model: validation loss %.4f -> %.4f after %d steps (train %.4f -> %.4f)\n", (double) val0, (double) val1, N,
               (double) full[0], (double) full[N - 1]);
        CHECK(val1 < val0 - 1.0f, "training: validation loss %g -> %g", (double) val0, (double) val1);
        const float v3 = val_loss_with_accum(&d, 3);
        CHECK(fabsf(v3 - val0) <= 1e-6f * val0, "the validation loss with --accum 3 is %g, with 1 %g", (double) v3, (double) val0);
        check_written(&m);
        /* resumed with gradient checkpointing: the same losses and model still */
        if (train(&r, &d, N / 2, N, -1, resumed, NULL, NULL, "resumed.gguf", true)) {
            CHECK(memcmp(full + N / 2, resumed + N / 2, sizeof(float) * (size_t) (N - N / 2)) == 0, "resume: the losses differ");
            CHECK(same_files("full.gguf", "resumed.gguf"), "resume: the written models differ");
        }
        llama_model_free(&r);
    }
    llama_model_free(&m);
    free(d.tokens);
}

static void test_refused(void) {
    struct llama_tiny_opts o = bf16_base;
    o.type = GGML_TYPE_Q8_0;
    struct llama_model m;
    if (!CHECK(llama_tiny_write("q8.gguf", &o) && llama_model_load(&m, "q8.gguf"), "refused: model")) return;
    fprintf(stderr, "(expected) ");
    CHECK(!llama_model_make_trainable(&m), "refused: a Q8_0 model was made trainable");
    llama_model_free(&m);
}

int main(void) {
    if (!mkdtemp(dir) || chdir(dir) != 0) { perror(dir); return 1; }  /* the models are written there */
    if (tc_part("gradients")) test_gradients();
    if (tc_part("training")) test_training();
    if (tc_part("refused")) test_refused();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return tc_finish("test_llama_full");
}

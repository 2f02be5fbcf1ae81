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

/* mean over t of -log softmax(ref logits_t)[targets_t] */
static double ref_loss(const struct llama_model * m, const struct llama_lora * l, const int32_t * tok, const int32_t * tgt, int T) {
    const int V = m->hp.n_vocab;
    double * lg = malloc(sizeof(double) * (size_t) T * (size_t) V);
    struct llama_ref * r = llama_ref_new(m, l);
    llama_ref_forward(r, tok, T, lg);
    double loss = 0.0;
    for (int t = 0; t < T; t++) {
        const double * z = lg + (size_t) t * V;
        double mx = z[0], s = 0.0;
        for (int i = 1; i < V; i++) if (z[i] > mx) mx = z[i];
        for (int i = 0; i < V; i++) s += exp(z[i] - mx);
        loss += mx + log(s) - z[tgt[t]];
    }
    llama_ref_free(r);
    free(lg);
    return loss / T;
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
    for (int layer = 0; layer < m.hp.n_layer; layer++)
        for (int k = 0; k < LLAMA_N_MAT; k++) { tc_fill_uniform(l.b[layer][k], -0.2, 0.2); ggml_set_param(l.a[layer][k]); ggml_set_param(l.b[layer][k]); }
    enum { T = 6 };
    const int32_t tok[T] = {1, 290, 300, 104, 270, 288}, tgt[T] = {290, 300, 104, 270, 288, 2};
    struct ggml_context * ctx = tc_ctx(64);
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 8192, true);
    struct llama_batch in;
    struct ggml_tensor * logits = llama_build(ctx, ctx, gf, &m, &l, NULL, 0, T, 1, false, &in);
    struct ggml_tensor * targets = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, T);
    struct ggml_tensor * loss = ggml_cross_entropy_loss(ctx, logits, targets);
    ggml_set_loss(loss);
    ggml_build_forward_expand(gf, loss);
    if (CHECK(ggml_build_backward_expand(ctx, gf, NULL) == GGML_STATUS_SUCCESS, "grad: backward: %s", ggml_last_error())) {
        memcpy(in.tokens->data, tok, sizeof tok);
        memcpy(targets->data, tgt, sizeof tgt);
        llama_batch_fill(&in, 0);
        ggml_graph_reset(gf);
        CHECK(ggml_graph_compute_with_ctx(ctx, gf, 2) == GGML_STATUS_SUCCESS, "grad: compute");
        const double l0 = ref_loss(&m, &l, tok, tgt, T);
        CHECK(fabs(*(float *) loss->data - l0) < 1e-5 * fabs(l0), "grad: loss %g, float64 %g", (double) *(float *) loss->data, l0);
        /* 4 entries of every A and B: analytic against central differences */
        double num = 0.0, den = 0.0;
        int n = 0;
        for (int layer = 0; layer < m.hp.n_layer; layer++)
            for (int k = 0; k < LLAMA_N_MAT; k++)
                for (int ab = 0; ab < 2; ab++) {
                    struct ggml_tensor * w = ab ? l.b[layer][k] : l.a[layer][k];
                    const float * g = ggml_graph_get_grad(gf, w)->data;
                    float * x = w->data;
                    for (int s = 0; s < 4; s++, n++) {
                        const int64_t i = tc_randint(0, (int) ggml_nelements(w) - 1);
                        const float x0 = x[i], h = 1e-3f;
                        x[i] = x0 + h; const double lp = ref_loss(&m, &l, tok, tgt, T); const float xp = x[i];
                        x[i] = x0 - h; const double lm = ref_loss(&m, &l, tok, tgt, T); const float xm = x[i];
                        x[i] = x0;
                        const double fd = (lp - lm) / ((double) xp - (double) xm);
                        num += (g[i] - fd) * (g[i] - fd);
                        den += fd * fd;
                    }
                }
        const double e = sqrt(num / den);
        printf("LoRA gradients (%d entries of A and B) vs float64 central differences: relative error %.2e\n", n, e);
        CHECK(den > 0.0 && e < 1e-3, "grad: relative error %g", e);
    }
    ggml_free(ctx);
    llama_lora_free(&l);
    llama_model_free(&m);
}

/* a token stream with structure a LoRA can learn: a cycle of 23 tokens,
 * one in 8 replaced by noise */
static struct llama_data make_data(int V, int64_t n) {
    struct llama_data d = {.tokens = malloc(sizeof(int32_t) * (size_t) n), .n = n, .n_train = n * 9 / 10};
    uint64_t s = 99;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        d.tokens[i] = (s >> 61) == 0 ? (int32_t) ((s >> 33) % (uint64_t) V) : (int32_t) (3 + (i % 23) * 11);
    }
    return d;
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
    struct llama_data d = make_data(m.hp.n_vocab, 4000);
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

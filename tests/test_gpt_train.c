/* test_gpt_train.c -- the character model end to end on a tiny configuration:
 * the loss falls; fused and unfused attention give the same loss curve;
 * a run resumed from a checkpoint gives bitwise the same losses as the
 * uninterrupted run; a checkpoint round trip keeps every parameter bit. */
#include "common/test_common.h"

#include "data.h"
#include "gpt.h"
#include "train.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct gpt_config tiny_cfg(int n_vocab) {
    return (struct gpt_config) {.n_vocab = n_vocab, .n_ctx = 16, .n_embd = 32, .n_head = 4, .n_kv_head = 2, .n_layer = 2};
}

static struct train_opts tiny_opts(bool fused) {
    return (struct train_opts) {.batch = 4, .n_ctx = 16, .iters = 60, .lr = 3e-3f, .min_lr = 3e-4f, .warmup = 5, .decay_iters = 60,
                                .beta1 = 0.9f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 0.1f, .clip = 1.0f,
                                .threads = 2, .seed = 7, .eval_batches = 4, .fused = fused};
}

/* Trains a fresh tiny model for steps [0, n) and stores the losses. */
static bool run(const struct corpus * data, bool fused, int n, float * losses) {
    struct gpt_model m;
    const struct gpt_config cfg = tiny_cfg(data->n_vocab);
    if (!CHECK(gpt_model_init(&m, &cfg, 11), "model init")) return false;
    struct trainer t;
    const struct train_opts o = tiny_opts(fused);
    bool ok = CHECK(trainer_init(&t, &m, data, &o), "trainer init");
    float gn;
    for (int s = 0; s < n && ok; s++) ok = CHECK(trainer_step(&t, s, &losses[s], &gn), "step %d", s);
    if (ok) trainer_free(&t);
    gpt_model_free(&m);
    return ok;
}

static void test_loss_falls_and_fused_matches(const struct corpus * data) {
    enum { N = 60 };
    float fused[N], unfused[N];
    if (!run(data, true, N, fused) || !run(data, false, N, unfused)) return;
    /* ln(82) = 4.41 at the start; a few dozen steps reach the unigram level (~3.3) */
    double first = 0, last = 0;
    for (int s = 0; s < 5; s++) { first += fused[s] / 5; last += fused[N - 5 + s] / 5; }
    CHECK(first > 4.0 && last < first - 0.8, "loss falls clearly: %.3f -> %.3f", first, last);
    double worst = 0;
    for (int s = 0; s < 50; s++) {
        const double rel = fabs((double) fused[s] - unfused[s]) / fabs((double) unfused[s]);
        if (rel > worst) worst = rel;
    }
    CHECK(worst <= 1e-4, "fused and unfused attention: loss curves differ by %.3g relative over 50 steps", worst);
}

static void test_resume_is_bitwise(const struct corpus * data) {
    enum { N = 20, K = 10 };
    float straight[N], resumed[N];
    if (!run(data, true, N, straight)) return;
    char path[] = "/tmp/ggmlr_gpt_ckpt_XXXXXX";
    const int fd = mkstemp(path);
    if (!CHECK(fd >= 0, "temporary file")) return;
    close(fd);
    /* first K steps, checkpoint, free everything */
    struct gpt_model m;
    const struct gpt_config cfg = tiny_cfg(data->n_vocab);
    const struct train_opts o = tiny_opts(true);
    struct trainer t;
    float gn;
    bool ok = gpt_model_init(&m, &cfg, 11) && trainer_init(&t, &m, data, &o);
    for (int s = 0; s < K && ok; s++) ok = trainer_step(&t, s, &resumed[s], &gn);
    ok = ok && trainer_save(&t, path, K);
    trainer_free(&t);
    gpt_model_free(&m);
    /* load and continue */
    unsigned char vocab[256];
    int64_t step = -1;
    ok = CHECK(ok && gpt_load(&m, path, vocab, &step), "checkpoint written and loaded") && CHECK(step == K, "step %lld saved", (long long) step);
    if (ok) ok = CHECK(memcmp(vocab, data->vocab, (size_t) data->n_vocab) == 0, "vocabulary round trip");
    if (ok && CHECK(trainer_init(&t, &m, data, &o), "trainer init after load")) {
        for (int s = K; s < N && ok; s++) ok = trainer_step(&t, s, &resumed[s], &gn);
        trainer_free(&t);
    }
    if (ok) gpt_model_free(&m);
    unlink(path);
    for (int s = 0; s < N && ok; s++)
        CHECK(memcmp(&straight[s], &resumed[s], sizeof(float)) == 0, "step %d: resumed loss %.9g != uninterrupted %.9g", s, resumed[s], straight[s]);
}

static void test_bad_checkpoints(void) {
    struct gpt_model m;
    unsigned char vocab[256];
    int64_t step;
    CHECK(!gpt_load(&m, "/nonexistent/ckpt.gguf", vocab, &step), "a missing file is refused");
    char path[] = "/tmp/ggmlr_gpt_bad_XXXXXX";
    const int fd = mkstemp(path);
    if (!CHECK(fd >= 0, "temporary file")) return;
    CHECK(write(fd, "GGUF\3\0\0\0garbage", 15) == 15, "write");
    close(fd);
    CHECK(!gpt_load(&m, path, vocab, &step), "a truncated file is refused");
    unlink(path);
}

int main(void) {
    struct corpus data;
    if (!corpus_load(&data, GGMLR_SOURCE_DIR "/data/austen.txt", 0.9)) return 1;
    CHECK(data.n == 4025028 && data.n_vocab == 82, "corpus: %lld bytes, %d symbols", (long long) data.n, data.n_vocab);
    test_loss_falls_and_fused_matches(&data);
    test_resume_is_bitwise(&data);
    test_bad_checkpoints();
    corpus_free(&data);
    return tc_finish("gpt_train");
}

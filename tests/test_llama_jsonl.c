/* test_llama_jsonl.c -- prompt/response fine-tuning data: the strict JSONL
 * line parser on hand-written good and bad lines; the packed tokens and
 * loss mask of a small file on the tiny model's vocabulary (positions
 * derived by hand); the trainer's labels cover exactly the response tokens
 * and its loss is their mean cross-entropy (float64 reference); a short
 * LoRA run on such data lowers the validation loss. */
#include "common/test_common.h"
#include "common/llama_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/ggmlr_jsonl_XXXXXX";

static bool good(const char * line, const char * prompt, const char * response) {
    struct llama_pair p;
    char err[200] = "";
    const bool ok = llama_jsonl_parse_line(line, strlen(line), &p, err, sizeof err);
    const bool same = ok && p.prompt_len == strlen(prompt) && strcmp(p.prompt, prompt) == 0 && p.response_len == strlen(response) &&
                      strcmp(p.response, response) == 0;
    CHECK(same, "parse %s: %s", line, ok ? "other strings" : err);
    if (ok) llama_pair_free(&p);
    return same;
}

static void bad(const char * line, const char * why) {
    struct llama_pair p;
    char err[200] = "";
    const bool ok = llama_jsonl_parse_line(line, strlen(line), &p, err, sizeof err);
    CHECK(!ok && strstr(err, why) && !p.prompt && !p.response, "parse %s: expected '%s', got %s", line, why, ok ? "success" : err);
    if (ok) llama_pair_free(&p);
}

static void test_parser(void) {
    good("{\"prompt\": \"xy\", \"response\": \"zq\"}", "xy", "zq");
    good("  {\"response\":\"zq\",\"prompt\":\"\"}  \r", "", "zq");
    good("{\"prompt\": \"a\\\"b\\\\c\\/d\", \"response\": \"\\n\\t\\r\\b\\f\"}", "a\"b\\c/d", "\n\t\r\b\f");
    good("{\"prompt\": \"\\u00e9\\u20AC\", \"response\": \"\\ud83d\\ude00\"}", "\xc3\xa9\xe2\x82\xac", "\xf0\x9f\x98\x80");
    good("{\"prompt\": \"caf\xc3\xa9\", \"response\": \"\\u0041\"}", "caf\xc3\xa9", "A");
    good("{\"id\": \"7\", \"prompt\": \"p\", \"source\": \"x\", \"response\": \"r\"}", "p", "r");
    bad("", "expected a JSON object");
    bad("[1, 2]", "expected a JSON object");
    bad("{}", "no \"prompt\"");
    bad("{\"prompt\": \"a\"}", "no \"response\"");
    bad("{\"prompt\": \"a\", \"response\": 3}", "not a string");
    bad("{\"prompt\": \"a\", \"response\": \"b\"} x", "text after the object");
    bad("{\"prompt\": \"a\" \"response\": \"b\"}", "expected ',' or '}'");
    bad("{\"prompt\": \"a\", \"response\": \"b\"", "expected ',' or '}'");
    bad("{\"prompt\": \"a\", \"response\": \"b\",}", "expected a string");
    bad("{\"prompt\" \"a\"}", "expected ':'");
    bad("{\"prompt\": \"a\", \"prompt\": \"b\", \"response\": \"c\"}", "\"prompt\" twice");
    bad("{\"prompt\": \"a\\x\", \"response\": \"b\"}", "unknown escape");
    bad("{\"prompt\": \"\\u12\", \"response\": \"b\"}", "four hex digits");
    bad("{\"prompt\": \"\\ud83d\", \"response\": \"b\"}", "high surrogate");
    bad("{\"prompt\": \"\\ud83d\\u0041\", \"response\": \"b\"}", "high surrogate");
    bad("{\"prompt\": \"\\ude00\", \"response\": \"b\"}", "low surrogate");
    bad("{\"prompt\": \"\\u0000\", \"response\": \"b\"}", "NUL");
    bad("{\"prompt\": \"a\tb\", \"response\": \"b\"}", "control character");
    bad("{\"prompt\": \"a\xff\", \"response\": \"b\"}", "not UTF-8");
    bad("{\"prompt\": \"\xed\xa0\x80\", \"response\": \"b\"}", "not UTF-8");  /* an encoded surrogate */
    bad("{\"prompt\": \"abc", "not closed");
}

static const struct llama_tiny_opts tiny = {.arch = "llama", .n_embd = 64, .n_ff = 96, .n_layer = 2, .n_head = 4, .n_head_kv = 2,
                                            .n_ctx = 32, .type = GGML_TYPE_F32, .seed = 4};

/* The tiny vocabulary: 0 <unk>, 1 <s>, 2 </s>, 3 + b the byte b, 259 U+2581,
 * 260 + i the letter 'a' + i, then merges none of which joins x, y, z, q. */
enum { BOS = 1, EOS = 2, NL = 3 + '\n', SPACE = 259, X = 260 + 'x' - 'a', Y = 260 + 'y' - 'a', Z = 260 + 'z' - 'a', Q = 260 + 'q' - 'a' };

static void test_data(const struct llama_model * m, const struct llama_vocab * v) {
    /* the prompt gets the space prefix, the response continues it */
    const char * text = "{\"prompt\": \"xy\", \"response\": \"zq\"}\n\n{\"prompt\": \"xy\", \"response\": \"z\\nq\"}\n";
    const int32_t want[] = {BOS, SPACE, X, Y, Z, Q, EOS, BOS, SPACE, X, Y, Z, NL, Q, EOS};
    const uint8_t mask[] = {0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1};
    enum { N = sizeof want / sizeof want[0] };
    struct llama_data d;
    if (CHECK(llama_jsonl_data(v, "two.jsonl", text, strlen(text), &d), "data: two lines")) {
        CHECK(d.n == N && memcmp(d.tokens, want, sizeof want) == 0, "data: the tokens of BOS + prompt + response + EOS, packed");
        CHECK(d.n == N && memcmp(d.loss_mask, mask, sizeof mask) == 0, "data: the loss mask covers the response and EOS only");
        CHECK(d.n_starts == 2 && d.starts[0] == 0 && d.starts[1] == 7, "data: the examples start at 0 and 7");
        llama_data_split(&d, 0.5f);
        CHECK(d.n_train == 7, "data: the split falls on an example's start (n_train %lld)", (long long) d.n_train);
        llama_data_free(&d);
    }
    (void) m;
    const char * broken = "{\"prompt\": \"xy\", \"response\": \"zq\"}\n{\"prompt\": \"xy\"}\n";
    fprintf(stderr, "(expected) ");
    CHECK(!llama_jsonl_data(v, "broken.jsonl", broken, strlen(broken), &d) && !d.tokens && !d.loss_mask && !d.starts, "data: a bad line 2");
    fprintf(stderr, "(expected) ");
    CHECK(!llama_jsonl_data(v, "blank.jsonl", "\n  \n", 4, &d), "data: no pairs");
}

static struct llama_train_opts opts(int T, int B, int iters) {
    return (struct llama_train_opts) {.batch = B, .n_ctx = T, .accum = 1, .iters = iters, .lr = 1e-2f, .min_lr = 1e-3f, .warmup = 2,
                                      .beta1 = 0.9f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 0.0f, .clip = 1.0f,
                                      .threads = 2, .seed = 3, .eval_batches = 1};
}

/* six copies of ("xy", "zq"): whatever examples a batch of T = 7 draws,
 * rows 3, 4, 5 of each sequence predict z, q and EOS, the rest are prompt
 * or the next example's BOS (or padding) */
static void test_labels(const struct llama_model * m, const struct llama_vocab * v) {
    char text[512] = "";
    for (int i = 0; i < 6; i++) strcat(text, "{\"prompt\": \"xy\", \"response\": \"zq\"}\n");
    struct llama_data d;
    if (!CHECK(llama_jsonl_data(v, "six.jsonl", text, strlen(text), &d), "labels: data")) return;
    llama_data_split(&d, 0.5f);
    struct llama_lora l;
    struct llama_trainer t;
    enum { T = 7, B = 2 };
    const struct llama_train_opts o = opts(T, B, 4);
    if (CHECK(llama_lora_init(&l, m, 2, 4.0f, LLAMA_LORA_DEFAULT, 1), "labels: lora")) {
        /* B != 0 so that the loss differs from the base model's */
        tc_seed(5);
        for (int layer = 0; layer < m->hp.n_layer; layer++) { tc_fill_uniform(l.b[layer][LLAMA_Q], -0.3, 0.3); tc_fill_uniform(l.b[layer][LLAMA_V], -0.3, 0.3); }
        if (CHECK(llama_trainer_init(&t, m, &l, &d, &o), "labels: trainer")) {
            CHECK(t.n_train_starts == 3 && d.n_train == 21, "labels: 3 examples for training, 3 for validation");
            float loss = NAN;
            if (CHECK(llama_trainer_eval(&t, &loss), "labels: eval")) {
                const int V = m->hp.n_vocab;
                const float * lab = t.targets->data;
                const int32_t cls[T] = {-1, -1, -1, Z, Q, EOS, -1};
                bool exact = t.targets->type == GGML_TYPE_F32 && t.targets->ne[0] == V && t.targets->ne[1] == T * B;
                for (int r = 0; r < T * B && exact; r++)
                    for (int c = 0; c < V; c++) {
                        const float want = cls[r % T] == c ? (float) (T * B) / (3.0f * B) : 0.0f;
                        if (lab[(size_t) r * V + c] != want) { exact = false; printf("  row %d class %d: %g, expected %g\n", r, c, (double) lab[(size_t) r * V + c], (double) want); break; }
                    }
                CHECK(exact, "labels: one-hot rows (weight T*B/count) on the response's targets, zero rows elsewhere");
                /* the mean cross-entropy of rows 3..5 of the window, float64 */
                const int32_t win[T] = {BOS, SPACE, X, Y, Z, Q, EOS};
                double * z = malloc(sizeof(double) * T * (size_t) V), ref = 0.0;
                struct llama_ref * rf = llama_ref_new(m, &l);
                llama_ref_forward(rf, win, T, z);
                for (int r = 3; r <= 5; r++) {
                    const double * row = z + (size_t) r * V;
                    double mx = row[0], s = 0.0;
                    for (int c = 1; c < V; c++) if (row[c] > mx) mx = row[c];
                    for (int c = 0; c < V; c++) s += exp(row[c] - mx);
                    ref += (mx + log(s) - row[cls[r]]) / 3.0;
                }
                printf("masked loss %.6f, float64 mean over the 3 response targets %.6f\n", (double) loss, ref);
                CHECK(fabs(loss - ref) < 1e-4 * fabs(ref), "labels: loss %g, reference %g", (double) loss, ref);
                llama_ref_free(rf);
                free(z);
            }
            llama_trainer_free(&t);
        }
        llama_lora_free(&l);
    }
    llama_data_free(&d);
}

/* 12 prompts, each answered by its letters reversed, four times over: LoRA
 * learns the responses (the validation split holds the same pairs). */
static void test_training(const struct llama_model * m, const struct llama_vocab * v) {
    static const char * const words[] = {"cat", "dog", "sun", "map", "pen", "cup", "box", "hat", "jam", "kit", "log", "owl"};
    enum { NW = sizeof words / sizeof words[0] };
    char text[8192] = "";
    for (int rep = 0; rep < 4; rep++)
        for (int w = 0; w < NW; w++) {
            const char * s = words[(w * 5 + rep) % NW];
            char line[128];
            snprintf(line, sizeof line, "{\"prompt\": \"%s\", \"response\": \" %c%c%c\"}\n", s, s[2], s[1], s[0]);
            strcat(text, line);
        }
    struct llama_data d;
    if (!CHECK(llama_jsonl_data(v, "words.jsonl", text, strlen(text), &d), "training: data")) return;
    llama_data_split(&d, 0.25f);
    struct llama_lora l;
    struct llama_trainer t;
    enum { STEPS = 40 };
    struct llama_train_opts o = opts(16, 4, STEPS);
    o.eval_batches = 4;
    float val0 = 0, val1 = 0, first = 0, last = 0;
    if (CHECK(llama_lora_init(&l, m, 4, 8.0f, LLAMA_LORA_ALL, 2), "training: lora")) {
        bool ok = CHECK(llama_trainer_init(&t, m, &l, &d, &o), "training: trainer") && CHECK(llama_trainer_eval(&t, &val0), "training: eval");
        for (int s = 0; s < STEPS && ok; s++) {
            float loss, gn;
            ok = CHECK(llama_trainer_step(&t, s, &loss, &gn), "training: step %d", s);
            if (s == 0) first = loss;
            last = loss;
        }
        if (ok && CHECK(llama_trainer_eval(&t, &val1), "training: eval")) {
            printf("JSONL LoRA: %lld pairs, validation loss on the responses %.4f -> %.4f after %d steps (train %.4f -> %.4f)\n",
                   (long long) d.n_starts, (double) val0, (double) val1, STEPS, (double) first, (double) last);
            CHECK(val1 < 0.5f * val0, "training: validation loss %g -> %g", (double) val0, (double) val1);
        }
        if (t.opt) llama_trainer_free(&t);
        llama_lora_free(&l);
    }
    llama_data_free(&d);
}

int main(void) {
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    if (tc_part("parser")) test_parser();
    char path[300];
    snprintf(path, sizeof path, "%s/tiny.gguf", dir);
    struct llama_model m;
    struct llama_vocab v;
    if (CHECK(llama_tiny_write(path, &tiny) && llama_model_load(&m, path), "tiny model")) {
        if (CHECK(llama_vocab_load(&v, &m), "vocabulary")) {
            if (tc_part("data")) test_data(&m, &v);
            if (tc_part("labels")) test_labels(&m, &v);
            if (tc_part("training")) test_training(&m, &v);
            llama_vocab_free(&v);
        }
        llama_model_free(&m);
    }
    unlink(path);
    rmdir(dir);
    return tc_finish("test_llama_jsonl");
}

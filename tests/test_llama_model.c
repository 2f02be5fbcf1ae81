/* test_llama_model.c -- the llama example's model on tiny generated files:
 * the forward pass against a float64 reference (llama with GQA, qwen2 with
 * biases and a tied output, Q8_0 and Q4_K weights), KV-cache decoding
 * against a full recompute, and the loader's refusals. */
#include "common/test_common.h"
#include "common/llama_ref.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/ggmlr_llama_XXXXXX";

static const char * path_of(const char * name) {
    static char buf[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
    return buf[i];
}

static const int32_t seq[] = {1, 259, 290, 300, 3 + 'h', 270, 288, 12, 301, 260, 299, 2};
enum { N_SEQ = sizeof seq / sizeof seq[0] };

/* logits of seq[0..n) decoded in one batch */
static bool full(const struct llama_model * m, int n, float * out) {
    struct llama_session s;
    if (!llama_session_init(&s, m, NULL, n, 2)) return false;
    const bool ok = llama_decode(&s, seq, n, true);
    if (ok) memcpy(out, s.logits, sizeof(float) * (size_t) n * (size_t) m->hp.n_vocab);
    llama_session_free(&s);
    return ok;
}

static double rel_err(const float * x, const double * ref, int64_t n) { return tc_rel_err_f32(x, ref, n); }

/* the model written with o against the float64 reference */
static void check_reference(const char * what, const struct llama_tiny_opts * o, double tol) {
    const char * path = path_of("ref.gguf");
    struct llama_model m;
    if (!CHECK(llama_tiny_write(path, o) && llama_model_load(&m, path), "%s: write and load", what)) return;
    const int V = m.hp.n_vocab;
    float * got = malloc(sizeof(float) * N_SEQ * (size_t) V);
    double * ref = malloc(sizeof(double) * N_SEQ * (size_t) V);
    struct llama_ref * r = llama_ref_new(&m, NULL);
    llama_ref_forward(r, seq, N_SEQ, ref);
    if (CHECK(full(&m, N_SEQ, got), "%s: decode", what)) {
        const double e = rel_err(got, ref, (int64_t) N_SEQ * V);
        printf("%-28s relative error to float64 %.2e (tolerance %.0e)\n", what, e, tol);
        CHECK_REL(e, tol, what);
        /* the logits must differ between positions, or the check above proves little */
        double d = 0.0;
        for (int i = 0; i < V; i++) d += fabs(ref[i] - ref[(N_SEQ - 1) * V + i]);
        CHECK(d / V > 0.1, "%s: the reference logits barely depend on the position (%g)", what, d / V);
    }
    llama_ref_free(r);
    free(got); free(ref);
    llama_model_free(&m);
}

static struct llama_tiny_opts small(const char * arch) {
    return (struct llama_tiny_opts) {.arch = arch, .n_embd = 64, .n_ff = 96, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ctx = 32,
                                     .type = GGML_TYPE_F32, .tied = false, .seed = 5};
}

static void test_reference(void) {
    struct llama_tiny_opts o = small("llama");
    check_reference("llama F32, GQA 4/2", &o, 1e-5);
    o.n_head_kv = 4;
    check_reference("llama F32, MHA 4/4", &o, 1e-5);
    o = small("qwen2");
    o.tied = true;
    check_reference("qwen2 F32, biases, tied", &o, 1e-5);
    /* block types need rows of whole blocks (Q4_K: 256) */
    o = (struct llama_tiny_opts) {.arch = "llama", .n_embd = 256, .n_ff = 256, .n_layer = 1, .n_head = 4, .n_head_kv = 1, .n_ctx = 16,
                                  .type = GGML_TYPE_Q8_0, .seed = 9};
    /* quantized weights multiply activations rounded to 8 bits (llama_ref.h) */
    check_reference("llama Q8_0, GQA 4/1", &o, LLAMA_REF_TOL_QUANT);
    o.type = GGML_TYPE_Q4_K;
    check_reference("llama Q4_K, GQA 4/1", &o, LLAMA_REF_TOL_QUANT);
    o.type = GGML_TYPE_F16;
    check_reference("llama F16, GQA 4/1", &o, 1e-5);
}

/* the prompt in one batch, then chunks and single tokens from the cache,
 * against one batch of the whole sequence */
static void test_kv_cache(void) {
    const struct llama_tiny_opts o = small("llama");
    const char * path = path_of("kv.gguf");
    struct llama_model m;
    if (!CHECK(llama_tiny_write(path, &o) && llama_model_load(&m, path), "kv: write and load")) return;
    const int V = m.hp.n_vocab;
    float * ref = malloc(sizeof(float) * N_SEQ * (size_t) V);
    struct llama_session s;
    if (CHECK(full(&m, N_SEQ, ref), "kv: full") && CHECK(llama_session_init(&s, &m, NULL, 32, 2), "kv: session")) {
        const int chunks[] = {5, 3, 1, 1, 1, 1};
        int at = 0;
        double worst = 0.0;
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            if (!CHECK(llama_decode(&s, seq + at, chunks[c], true), "kv: decode at %d", at)) break;
            CHECK(s.kv.n_past == at + chunks[c] && s.n_logits == chunks[c], "kv: counts");
            for (int i = 0; i < chunks[c] * V; i++) {
                const double e = fabs(s.logits[i] - ref[(size_t) at * V + i]) / (1.0 + fabs(ref[(size_t) at * V + i]));
                if (e > worst) worst = e;
            }
            at += chunks[c];
        }
        printf("KV cache vs full recompute: worst error %.2e\n", worst);
        CHECK(worst < 1e-5, "kv: cached decoding differs from the full recompute by %g", worst);
        /* the last token alone: its logits are the last row */
        CHECK(llama_decode(&s, seq, 1, false) && s.n_logits == 1, "kv: last-only logits");
        CHECK(!llama_decode(&s, seq, 32, false), "kv: a batch past the context is refused");
        llama_session_free(&s);
    }
    free(ref);
    llama_model_free(&m);
}

/* a copy of `from` with one edit; load must fail */
static void expect_refusal(const char * what, const char * from, void (*edit)(struct gguf_context *)) {
    struct ggml_context * data = NULL;
    struct gguf_init_params ip = {.no_alloc = false, .ctx = &data};
    struct gguf_context * g = gguf_init_from_file(from, ip);
    if (!CHECK(g != NULL, "%s: reload", what)) return;
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++)  /* the loaded tensors are the data to write */
        gguf_set_tensor_data(g, gguf_get_tensor_name(g, i), ggml_get_tensor(data, gguf_get_tensor_name(g, i))->data);
    edit(g);
    const char * path = path_of("bad.gguf");
    CHECK(gguf_write_to_file(g, path, false), "%s: write: %s", what, ggml_last_error());
    gguf_free(g);
    ggml_free(data);
    struct llama_model m;
    fprintf(stderr, "(expected) ");
    CHECK(!llama_model_load(&m, path), "%s: loaded", what);
}

static void edit_arch(struct gguf_context * g) { gguf_set_val_str(g, "general.architecture", "gptneox"); }
static void edit_missing_key(struct gguf_context * g) { gguf_remove_key(g, "llama.block_count"); }
static void edit_shape(struct gguf_context * g) { gguf_set_val_u32(g, "llama.attention.head_count_kv", 4); }
static void edit_ff(struct gguf_context * g) { gguf_set_val_u32(g, "llama.feed_forward_length", 128); }

static void test_refusals(void) {
    const struct llama_tiny_opts o = small("llama");
    const char * path = path_of("good.gguf");
    if (!CHECK(llama_tiny_write(path, &o), "refusals: write")) return;
    expect_refusal("another architecture", path, edit_arch);
    expect_refusal("a missing key", path, edit_missing_key);
    expect_refusal("head_count_kv against attn_k", path, edit_shape);
    expect_refusal("feed_forward_length against ffn_up", path, edit_ff);
    struct llama_model m;
    fprintf(stderr, "(expected) ");
    CHECK(!llama_model_load(&m, path_of("absent.gguf")), "a missing file loaded");
}

/* greedy, top-k 1 and a tiny top-p pick the largest; at temperature 1 the
 * frequencies of 40000 draws follow softmax(logits) */
static void test_sampler(void) {
    const float logits[5] = {0.5f, 2.0f, -1.0f, 1.0f, 0.0f};
    struct llama_sampler g = {.temperature = 0.0f, .state = 1}, k1 = {.temperature = 1.0f, .top_k = 1, .state = 2},
                         p0 = {.temperature = 1.0f, .top_p = 0.01f, .state = 3};
    CHECK(llama_sample(&g, logits, 5) == 1 && llama_sample(&k1, logits, 5) == 1 && llama_sample(&p0, logits, 5) == 1, "sampler: argmax");
    struct llama_sampler s = {.temperature = 1.0f, .top_p = 1.0f, .state = 42};
    int count[5] = {0};
    const int n = 40000;
    for (int i = 0; i < n; i++) count[llama_sample(&s, logits, 5)]++;
    double z = 0.0;
    for (int i = 0; i < 5; i++) z += exp((double) logits[i]);
    for (int i = 0; i < 5; i++) {
        const double p = exp((double) logits[i]) / z, sd = sqrt(p * (1 - p) / n);
        CHECK(fabs(count[i] / (double) n - p) < 5 * sd, "sampler: token %d drawn %d times, expected %.0f", i, count[i], p * n);
    }
    /* top_k 2 at temperature 1: only tokens 1 and 3, in the ratio e^2 : e^1 */
    struct llama_sampler s2 = {.temperature = 1.0f, .top_k = 2, .state = 7};
    int c1 = 0, c3 = 0, other = 0;
    for (int i = 0; i < n; i++) { const int t = llama_sample(&s2, logits, 5); c1 += t == 1; c3 += t == 3; other += t != 1 && t != 3; }
    const double p1 = exp(2.0) / (exp(2.0) + exp(1.0));
    CHECK(other == 0 && fabs(c1 / (double) n - p1) < 5 * sqrt(p1 * (1 - p1) / n), "sampler: top-k 2 gave %d / %d / %d", c1, c3, other);
}

int main(void) {
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    if (tc_part("reference")) test_reference();
    if (tc_part("kv")) test_kv_cache();
    if (tc_part("refusals")) test_refusals();
    if (tc_part("sampler")) test_sampler();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return tc_finish("test_llama_model");
}

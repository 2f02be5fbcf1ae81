/* main.c -- ggmlr-llama: generate text with a llama-family GGUF model (KV
 * cache, sampling, optionally a LoRA adapter), fine-tune LoRA adapters or
 * (--full) every weight on a text file or prompt/response JSONL, merge an
 * adapter into its model, or write a tiny random model to try them. Wrong
 * arguments, missing or unusable files: a message and exit status 2,
 * nothing written. */
#include "llama.h"

#include "ggml-cpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { EXIT_USAGE = 2 };

/* ---- options: one table per command, parsed and printed from it ---- */

enum kind { O_INT, O_U64, O_FLOAT, O_STR, O_FLAG };
struct opt { const char * name; enum kind kind; void * dst; const char * help; };

static void usage(FILE * f, const char * cmd, const char * what, const struct opt * o, int n) {
    fprintf(f, "usage: ggmlr-llama %s [options]\n%s\n\noptions:\n", cmd, what);
    for (int i = 0; i < n; i++) {
        const char * arg = o[i].kind == O_FLAG ? "" : o[i].kind == O_STR ? " S" : o[i].kind == O_FLOAT ? " X" : " N";
        char left[40];
        snprintf(left, sizeof left, "%s%s", o[i].name, arg);
        fprintf(f, "  %-22s %s\n", left, o[i].help);
    }
    fprintf(f, "  %-22s %s\n", "-h, --help", "this text");
}

/* 0: parsed; 1: help printed; 2: an error printed */
static int parse(int argc, char ** argv, const char * cmd, const char * what, const struct opt * o, int n) {
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) { usage(stdout, cmd, what, o, n); return 1; }
        int k = 0;
        while (k < n && strcmp(argv[i], o[k].name) != 0) k++;
        if (k == n) { fprintf(stderr, "error: %s: unknown option '%s' (--help lists them)\n", cmd, argv[i]); return EXIT_USAGE; }
        if (o[k].kind == O_FLAG) { *(bool *) o[k].dst = true; continue; }
        if (i + 1 == argc) { fprintf(stderr, "error: %s: %s needs a value\n", cmd, argv[i]); return EXIT_USAGE; }
        const char * v = argv[++i];
        char * end = NULL;
        errno = 0;
        switch (o[k].kind) {
            case O_INT: { const long x = strtol(v, &end, 10); if (x < -1000000000L || x > 1000000000L) errno = ERANGE; *(int *) o[k].dst = (int) x; break; }
            case O_U64: *(uint64_t *) o[k].dst = strtoull(v, &end, 10); break;
            case O_FLOAT: *(float *) o[k].dst = strtof(v, &end); break;
            default: *(const char **) o[k].dst = v; end = (char *) v + strlen(v); break;
        }
        if (errno || end == v || *end) { fprintf(stderr, "error: %s: %s '%s' is not a number\n", cmd, o[k].name, v); return EXIT_USAGE; }
    }
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* ---- tiny ---- */

static int cmd_tiny(int argc, char ** argv) {
    struct llama_tiny_opts o = {.arch = "llama", .n_embd = 256, .n_ff = 512, .n_layer = 4, .n_head = 4, .n_head_kv = 2, .n_ctx = 256,
                                .type = GGML_TYPE_F32, .seed = 1};
    const char * out = NULL, * type = "f32";
    bool tied = false;
    const struct opt opts[] = {
        {"-o", O_STR, &out, "the GGUF to write (required)"},
        {"--arch", O_STR, &o.arch, "llama or qwen2 (q/k/v biases, NEOX RoPE) (llama)"},
        {"--type", O_STR, &type, "type of the matrices and token_embd: f32 f16 bf16 q8_0 q4_0 q4_k q6_k ... (f32)"},
        {"--embd", O_INT, &o.n_embd, "embedding_length (256)"},
        {"--ff", O_INT, &o.n_ff, "feed_forward_length (512)"},
        {"--layers", O_INT, &o.n_layer, "block_count (4)"},
        {"--heads", O_INT, &o.n_head, "attention.head_count (4)"},
        {"--kv-heads", O_INT, &o.n_head_kv, "attention.head_count_kv (2)"},
        {"--ctx", O_INT, &o.n_ctx, "context_length (256)"},
        {"--tied", O_FLAG, &tied, "no output.weight: the output is token_embd"},
        {"--seed", O_U64, &o.seed, "of the random weights (1)"},
    };
    const int r = parse(argc, argv, "tiny", "Writes a small llama-family model with random weights and a SentencePiece vocabulary.", opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : r;
    if (!out) { fprintf(stderr, "error: tiny: -o OUT.gguf is required\n"); return EXIT_USAGE; }
    o.tied = tied;
    o.type = GGML_TYPE_COUNT;
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char * name = ggml_type_name((enum ggml_type) t);
        if (name && strcasecmp(name, type) == 0 && ggml_blck_size((enum ggml_type) t) > 0) o.type = (enum ggml_type) t;
    }
    if (o.type == GGML_TYPE_COUNT) { fprintf(stderr, "error: tiny: unknown type '%s'\n", type); return EXIT_USAGE; }
    if (!llama_tiny_write(out, &o)) return EXIT_USAGE;
    printf("wrote %s: %s, %d layers, embedding %d, %d/%d heads, %s weights\n", out, o.arch, o.n_layer, o.n_embd, o.n_head, o.n_head_kv, ggml_type_name(o.type));
    return 0;
}

/* ---- generate ---- */

static void print_piece(const struct llama_vocab * v, int32_t id) {
    char buf[256];
    const int n = llama_token_to_piece(v, id, buf, sizeof buf);
    fwrite(buf, 1, (size_t) n, stdout);
    fflush(stdout);
}

static int cmd_generate(int argc, char ** argv) {
    const char * model = NULL, * adapter = NULL, * prompt = "";
    int n_new = 64, threads = 0, n_ctx = 0;
    struct llama_sampler smp = {.temperature = 0.8f, .top_k = 40, .top_p = 0.95f, .state = 0};
    uint64_t seed = 1;
    const struct opt opts[] = {
        {"-m", O_STR, &model, "the model GGUF (required)"},
        {"--lora", O_STR, &adapter, "a LoRA adapter GGUF (llama.cpp's format)"},
        {"-p", O_STR, &prompt, "the prompt (\"\")"},
        {"-n", O_INT, &n_new, "tokens to generate (64)"},
        {"--temp", O_FLOAT, &smp.temperature, "temperature; 0: greedy (0.8)"},
        {"--top-k", O_INT, &smp.top_k, "sample from the k most likely; 0: all (40)"},
        {"--top-p", O_FLOAT, &smp.top_p, "nucleus: the smallest set of this probability (0.95)"},
        {"--seed", O_U64, &seed, "of the sampler (1)"},
        {"--ctx", O_INT, &n_ctx, "KV cache size in tokens (prompt + n, at most the model's)"},
        {"-t", O_INT, &threads, "threads (all cores)"},
    };
    const int r = parse(argc, argv, "generate", "Continues the prompt: the prompt in one batch, then one token at a time from a KV cache.", opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : r;
    if (!model) { fprintf(stderr, "error: generate: -m MODEL.gguf is required\n"); return EXIT_USAGE; }
    if (n_new < 0 || smp.temperature < 0 || smp.top_k < 0 || !(smp.top_p > 0 && smp.top_p <= 1) || threads < 0) {
        fprintf(stderr, "error: generate: -n, --temp, --top-k must be >= 0 and --top-p in (0, 1]\n");
        return EXIT_USAGE;
    }
    smp.state = seed;
    struct llama_model m;
    if (!llama_model_load(&m, model)) return EXIT_USAGE;
    struct llama_vocab v;
    struct llama_lora l = {0};
    struct llama_session s = {0};
    int32_t * tok = NULL;
    int status = EXIT_USAGE;
    if (!llama_vocab_load(&v, &m)) goto out_model;
    if (adapter && !llama_lora_load(&l, &m, adapter)) goto out_vocab;
    const int n_prompt = llama_tokenize(&v, prompt, strlen(prompt), true, true, &tok);
    if (n_prompt < 1) { fprintf(stderr, "error: generate: the prompt has no tokens\n"); goto out_lora; }
    if (n_ctx == 0) n_ctx = n_prompt + n_new < m.hp.n_ctx ? n_prompt + n_new : m.hp.n_ctx;
    if (n_prompt + n_new > n_ctx) {
        fprintf(stderr, "error: generate: %d prompt tokens + %d new ones do not fit the context of %d (the model's: %d)\n", n_prompt, n_new, n_ctx, m.hp.n_ctx);
        goto out_lora;
    }
    if (!llama_session_init(&s, &m, adapter ? &l : NULL, n_ctx, threads)) goto out_lora;
    status = 1;
    fwrite(prompt, 1, strlen(prompt), stdout);
    const double t0 = now_s();
    if (!llama_decode(&s, tok, n_prompt, false)) goto out_session;
    const double t1 = now_s();
    int n_done = 0;
    for (; n_done < n_new; n_done++) {
        const int32_t next = llama_sample(&smp, s.logits, m.hp.n_vocab);
        if (next == v.eos) break;
        print_piece(&v, next);
        if (n_done + 1 < n_new && !llama_decode(&s, &next, 1, false)) goto out_session;
    }
    const double t2 = now_s();
    printf("\n");
    fprintf(stderr, "prompt: %d tokens in %.1f ms (%.1f tokens/s); generation: %d tokens in %.1f ms (%.1f tokens/s)\n", n_prompt,
            1e3 * (t1 - t0), n_prompt / (t1 - t0), n_done, 1e3 * (t2 - t1), n_done > 0 ? n_done / (t2 - t1) : 0.0);
    status = 0;
out_session:
    llama_session_free(&s);
out_lora:
    free(tok);
    if (l.ctx) llama_lora_free(&l);
out_vocab:
    llama_vocab_free(&v);
out_model:
    llama_model_free(&m);
    return status;
}

/* ---- logits ---- */

/* Token ids given directly (the tokenizer out of the way), evaluated in one
 * batch; the logits printed as text, one line per position, so that another
 * implementation's can be set beside them (scripts/compare-llama-cpp.sh). */
static int cmd_logits(int argc, char ** argv) {
    const char * model = NULL, * adapter = NULL, * ids = NULL;
    int threads = 0;
    bool all = false;
    const struct opt opts[] = {
        {"-m", O_STR, &model, "the model GGUF (required)"},
        {"--lora", O_STR, &adapter, "a LoRA adapter GGUF (llama.cpp's format)"},
        {"--tokens", O_STR, &ids, "the token ids, a comma list such as 1,72,101 (required)"},
        {"--all", O_FLAG, &all, "every position's logits, not only the last one's"},
        {"-t", O_INT, &threads, "threads (all cores)"},
    };
    const int r = parse(argc, argv, "logits", "Prints the logits of token ids evaluated in one batch: n_vocab numbers a line, one line per position.", opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : r;
    if (!model || !ids) { fprintf(stderr, "error: logits: -m MODEL.gguf and --tokens IDS are required\n"); return EXIT_USAGE; }
    if (threads < 0) { fprintf(stderr, "error: logits: -t must be >= 0\n"); return EXIT_USAGE; }
    struct llama_model m;
    if (!llama_model_load(&m, model)) return EXIT_USAGE;
    struct llama_lora l = {0};
    struct llama_session s = {0};
    const size_t cap = strlen(ids) / 2 + 1;  /* a comma list of n ids has at least 2n - 1 characters */
    int32_t * tok = malloc(sizeof *tok * cap);
    int n = 0, status = EXIT_USAGE;
    for (const char * p = ids; tok && *p;) {
        char * end;
        errno = 0;
        const long v = strtol(p, &end, 10);
        if (errno || end == p || v < 0 || v >= m.hp.n_vocab || (*end && *end != ',') || (size_t) n == cap) {
            fprintf(stderr, "error: logits: --tokens '%s' is not a comma list of ids below n_vocab %d\n", ids, m.hp.n_vocab);
            goto out;
        }
        tok[n++] = (int32_t) v;
        p = *end ? end + 1 : end;
    }
    if (n == 0 || n > m.hp.n_ctx) { fprintf(stderr, "error: logits: %d tokens: need 1 to the model's context of %d\n", n, m.hp.n_ctx); goto out; }
    if (adapter && !llama_lora_load(&l, &m, adapter)) goto out;
    if (!llama_session_init(&s, &m, adapter ? &l : NULL, n, threads)) goto out;
    status = 1;
    if (llama_decode(&s, tok, n, all)) {
        for (int i = 0; i < s.n_logits; i++) {
            const float * row = s.logits + (size_t) i * (size_t) m.hp.n_vocab;
            for (int k = 0; k < m.hp.n_vocab; k++) printf("%s%.9g", k ? " " : "", (double) row[k]);
            printf("\n");
        }
        status = 0;
    }
    llama_session_free(&s);
out:
    if (l.ctx) llama_lora_free(&l);
    free(tok);
    llama_model_free(&m);
    return status;
}

/* ---- finetune ---- */

/* The whole file, which must be non-empty UTF-8 text without NUL bytes. */
static char * read_text(const char * path, size_t * len) {
    FILE * f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "error: cannot open %s: %s\n", path, strerror(errno)); return NULL; }
    size_t cap = 1 << 16, n = 0;
    char * s = malloc(cap);
    for (size_t got; s && (got = fread(s + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) { char * t = realloc(s, cap *= 2); if (!t) { free(s); s = NULL; } else s = t; }
    }
    fclose(f);
    if (!s) { fprintf(stderr, "error: out of memory reading %s\n", path); return NULL; }
    const char * why = n == 0 ? "is empty" : NULL;
    for (size_t i = 0; i < n && !why;) {
        const unsigned char c = (unsigned char) s[i];
        const size_t l = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (c == 0) why = "is not text (it holds NUL bytes)";
        else if (l == 0 || i + l > n) why = "is not UTF-8 text";
        for (size_t k = 1; k < l && !why; k++) if (((unsigned char) s[i + k] & 0xc0) != 0x80) why = "is not UTF-8 text";
        i += l ? l : 1;
    }
    if (why) { fprintf(stderr, "error: the data file %s %s\n", path, why); free(s); return NULL; }
    *len = n;
    return s;
}

/* "q,v", "all", or a comma list of q k v o gate up down -> the matrix bits (0: bad) */
static unsigned parse_targets(const char * s) {
    if (strcmp(s, "all") == 0) return LLAMA_LORA_ALL;
    static const char * const short_names[LLAMA_N_MAT] = {"q", "k", "v", "o", "gate", "up", "down"};
    unsigned mats = 0;
    for (const char * p = s; *p;) {
        const size_t n = strcspn(p, ",");
        int k = 0;
        while (k < LLAMA_N_MAT && !(strlen(short_names[k]) == n && strncmp(p, short_names[k], n) == 0)) k++;
        if (k == LLAMA_N_MAT) return 0;
        mats |= 1u << k;
        p += n + (p[n] == ',');
    }
    return mats;
}

static int cmd_finetune(int argc, char ** argv) {
    const char * model = NULL, * data_path = NULL, * out = NULL, * targets = "q,v", * ckpt = NULL, * resume = NULL, * format = NULL,
               * merge_out = NULL;
    int rank = 8, log_every = 10, eval_every = 50, save_every = 0, stop_after = 0;
    bool full = false, grad_checkpoint = false;
    float alpha = 16.0f, val_split = 0.1f;
    struct llama_train_opts o = {.batch = 4, .n_ctx = 64, .accum = 1, .iters = 100, .lr = 1e-3f, .min_lr = 1e-4f, .warmup = 10,
                                 .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.0f, .clip = 1.0f,
                                 .threads = 0, .seed = 1, .eval_batches = 8};
    int iters = 100, warmup = 10;
    const struct opt opts[] = {
        {"-m", O_STR, &model, "the base model GGUF, any weight type (required)"},
        {"--data", O_STR, &data_path, "UTF-8 text to train on, tokenized and packed into sequences (required)"},
        {"--format", O_STR, &format, "text or jsonl: {\"prompt\": ..., \"response\": ...} per line, the loss on the response (from --data's extension: .jsonl)"},
        {"-o", O_STR, &out, "the adapter GGUF to write, llama.cpp's format; with --full the model GGUF (required)"},
        {"--full", O_FLAG, &full, "train every weight (F32, F16 or BF16; F16/BF16 through F32 copies) instead of LoRA adapters"},
        {"--merge-out", O_STR, &merge_out, "also write the merged model: W + (alpha/r) B A in each matrix's type (quantized: re-quantized)"},
        {"--rank", O_INT, &rank, "LoRA rank r (8)"},
        {"--alpha", O_FLOAT, &alpha, "LoRA alpha: the update is (alpha/r) B A (16)"},
        {"--targets", O_STR, &targets, "q,v (default), all, or a comma list of q k v o gate up down"},
        {"--iters", O_INT, &iters, "optimizer steps (100)"},
        {"--batch", O_INT, &o.batch, "sequences per micro-batch (4)"},
        {"--ctx", O_INT, &o.n_ctx, "tokens per sequence (64)"},
        {"--accum", O_INT, &o.accum, "micro-batches per optimizer step (1)"},
        {"--lr", O_FLOAT, &o.lr, "peak learning rate, AdamW (1e-3)"},
        {"--min-lr", O_FLOAT, &o.min_lr, "final learning rate of the cosine (1e-4)"},
        {"--warmup", O_INT, &warmup, "steps of linear warmup (10)"},
        {"--wd", O_FLOAT, &o.weight_decay, "weight decay (0)"},
        {"--clip", O_FLOAT, &o.clip, "clip the gradient norm to this; 0: off (1)"},
        {"--val-split", O_FLOAT, &val_split, "the last part of the text held out for validation (0.1)"},
        {"--eval-every", O_INT, &eval_every, "validation loss every N steps and at the end (50)"},
        {"--eval-batches", O_INT, &o.eval_batches, "batches per validation (8)"},
        {"--log-every", O_INT, &log_every, "a progress line every N steps (10)"},
        {"--checkpoint", O_STR, &ckpt, "write adapters + AdamW state here (every --save-every steps and at the end)"},
        {"--save-every", O_INT, &save_every, "steps between checkpoints; 0: only at the end (0)"},
        {"--stop-after", O_INT, &stop_after, "stop (checkpoint and adapter written) after this step, as if interrupted; 0: run to --iters"},
        {"--resume", O_STR, &resume, "continue from a checkpoint (bitwise the same as without the interruption)"},
        {"--grad-checkpoint", O_FLAG, &grad_checkpoint, "keep only each block's input and recompute its activations in the backward pass (less memory, one more forward of compute; the same losses bit for bit)"},
        {"--seed", O_U64, &o.seed, "of the adapters' initialisation and the batches (1)"},
        {"-t", O_INT, &o.threads, "threads (all cores)"},
    };
    const int r = parse(argc, argv, "finetune", "Trains LoRA adapters on a frozen base model and writes them as an adapter GGUF,\n"
                      "or (--full) trains all the weights of an F32/F16/BF16 model and writes the model.", opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : r;
    if (!model || !data_path || !out) { fprintf(stderr, "error: finetune: -m MODEL, --data TEXT and -o ADAPTER are required\n"); return EXIT_USAGE; }
    const size_t dl = strlen(data_path);
    if (!format) format = dl >= 6 && strcmp(data_path + dl - 6, ".jsonl") == 0 ? "jsonl" : "text";
    const bool jsonl = strcmp(format, "jsonl") == 0;
    if (!jsonl && strcmp(format, "text") != 0) { fprintf(stderr, "error: finetune: --format '%s': use text or jsonl\n", format); return EXIT_USAGE; }
    if (full && merge_out) { fprintf(stderr, "error: finetune: --merge-out is for LoRA (--full writes the model itself to -o)\n"); return EXIT_USAGE; }
    const unsigned mats = parse_targets(targets);
    if (!mats) { fprintf(stderr, "error: finetune: --targets '%s': use all or a comma list of q k v o gate up down\n", targets); return EXIT_USAGE; }
    if (rank < 1 || !(alpha > 0) || iters < 1 || warmup < 0 || !(o.lr > 0) || o.min_lr < 0 || o.clip < 0 || o.weight_decay < 0 ||
        !(val_split > 0 && val_split < 1) || eval_every < 1 || log_every < 1 || save_every < 0 || stop_after < 0 || o.threads < 0 || o.eval_batches < 1) {
        fprintf(stderr, "error: finetune: an option is out of range (--help gives them)\n");
        return EXIT_USAGE;
    }
    o.iters = iters;
    o.warmup = warmup;
    o.grad_checkpoint = grad_checkpoint;
    struct llama_model m;
    if (!llama_model_load(&m, model)) return EXIT_USAGE;
    struct llama_vocab v;
    struct llama_lora l = {0};
    struct llama_trainer t = {0};
    struct llama_data d = {0};
    int status = EXIT_USAGE;
    size_t len = 0;
    char * text = NULL;
    if (!llama_vocab_load(&v, &m)) goto out_model;
    if (!(text = read_text(data_path, &len))) goto out_vocab;
    if (jsonl) {
        if (!llama_jsonl_data(&v, data_path, text, len, &d)) goto out_text;
    } else {
        const int n = llama_tokenize(&v, text, len, true, false, &d.tokens);
        if (n < 0) goto out_text;
        d.n = n;
    }
    llama_data_split(&d, val_split);
    if (full ? !llama_model_make_trainable(&m)
             : resume ? !llama_lora_load(&l, &m, resume) : !llama_lora_init(&l, &m, rank, alpha, mats, o.seed)) goto out_text;
    if (merge_out && !llama_lora_merge_check(&m, &l)) goto out_lora;
    if (!llama_trainer_init(&t, &m, full ? NULL : &l, &d, &o)) goto out_lora;
    int64_t step = 0;
    if (resume && !llama_trainer_resume(&t, resume, &step)) goto out_trainer;
    status = 1;
    if (full) {
        int64_t n_weights = 0;
        for (int i = 0; i < t.n_params; i++) n_weights += ggml_nelements(t.params[i]);
        fprintf(stderr, "finetune: %s (%s, %d layers), all %lld weights (%d tensors); %lld tokens (%lld for training), %d x %d tokens x %d per step\n",
                model, m.hp.arch, m.hp.n_layer, (long long) n_weights, t.n_params, (long long) d.n, (long long) d.n_train, o.batch, o.n_ctx, o.accum);
    } else
        fprintf(stderr, "finetune: %s (%s, %d layers), LoRA rank %d alpha %g on %s; %lld tokens (%lld for training), %d x %d tokens x %d per step\n",
                model, m.hp.arch, m.hp.n_layer, l.rank, (double) l.alpha, targets, (long long) d.n, (long long) d.n_train, o.batch, o.n_ctx, o.accum);
    if (jsonl) {
        int64_t n_resp = 0;
        for (int64_t i = 0; i < d.n; i++) n_resp += d.loss_mask[i];
        fprintf(stderr, "finetune: %lld prompt/response pairs (%lld for training), %lld response tokens: the loss is on those only\n",
                (long long) d.n_starts, (long long) t.n_train_starts, (long long) n_resp);
    }
    if (resume) fprintf(stderr, "finetune: resumed from %s at step %lld\n", resume, (long long) step);
    double t_last = now_s();
    int64_t since = 0;
    const int64_t end = stop_after > 0 && stop_after < o.iters ? stop_after : o.iters;
    for (; step < end; step++) {
        float loss, gn;
        if (!llama_trainer_step(&t, step, &loss, &gn)) goto out_trainer;
        since++;
        const bool last = step + 1 == end;
        if ((step + 1) % log_every == 0 || last) {
            const struct ggml_opt_lr_schedule sched = {.type = GGML_OPT_LR_SCHEDULE_WARMUP_COSINE, .warmup = o.warmup, .decay_steps = o.iters, .min_lr = o.min_lr};
            const double tnow = now_s();
            fprintf(stderr, "step %5lld/%lld  loss %.4f  lr %.2e  grad-norm %.3f  %.0f tokens/s\n", (long long) step + 1, (long long) o.iters,
                    (double) loss, (double) ggml_opt_lr_schedule_lr(&sched, o.lr, step), (double) gn,
                    (double) since * o.batch * o.n_ctx * o.accum / (tnow - t_last));
            t_last = tnow;
            since = 0;
        }
        if ((step + 1) % eval_every == 0 || last) {
            float val;
            if (!llama_trainer_eval(&t, &val)) goto out_trainer;
            fprintf(stderr, "step %5lld  validation loss %.4f\n", (long long) step + 1, (double) val);
        }
        if (ckpt && ((save_every > 0 && (step + 1) % save_every == 0) || last) && !llama_trainer_save(&t, ckpt, step + 1)) goto out_trainer;
    }
    if (!(full ? llama_model_save_trained(&m, out) : llama_lora_save(&l, &m, out))) goto out_trainer;
    fprintf(stderr, "finetune: wrote the %s %s\n", full ? "model" : "adapter", out);
    if (merge_out) {
        if (!llama_lora_merge(&m, &l, merge_out)) goto out_trainer;
        fprintf(stderr, "finetune: wrote the merged model %s\n", merge_out);
    }
    status = 0;
out_trainer:
    llama_trainer_free(&t);
out_lora:
    if (l.ctx) llama_lora_free(&l);
out_text:
    llama_data_free(&d);
    free(text);
out_vocab:
    llama_vocab_free(&v);
out_model:
    llama_model_free(&m);
    return status;
}

/* ---- merge ---- */

static int cmd_merge(int argc, char ** argv) {
    const char * model = NULL, * adapter = NULL, * out = NULL;
    const struct opt opts[] = {
        {"-m", O_STR, &model, "the base model GGUF (required)"},
        {"--lora", O_STR, &adapter, "the LoRA adapter GGUF, llama.cpp's format or a finetune checkpoint (required)"},
        {"-o", O_STR, &out, "the merged model GGUF to write (required)"},
    };
    const int r = parse(argc, argv, "merge",
                        "Writes the base model with W + (alpha/r) B A in place of each adapted matrix W, in W's type\n"
                        "(F32/F16/BF16 stored as such; a quantized W is re-quantized to its own type with ggml_quantize_chunk,\n"
                        "which adds that type's rounding once more); every other tensor and all metadata are copied unchanged.",
                        opts, sizeof opts / sizeof opts[0]);
    if (r) return r == 1 ? 0 : r;
    if (!model || !adapter || !out) { fprintf(stderr, "error: merge: -m MODEL, --lora ADAPTER and -o OUT are required\n"); return EXIT_USAGE; }
    struct llama_model m;
    if (!llama_model_load(&m, model)) return EXIT_USAGE;
    struct llama_lora l;
    int status = EXIT_USAGE;
    if (llama_lora_load(&l, &m, adapter)) {
        if (!llama_lora_merge_check(&m, &l)) status = EXIT_USAGE;
        else if (!llama_lora_merge(&m, &l, out)) status = 1;
        else { status = 0; fprintf(stderr, "merge: wrote %s (%s + %s, rank %d alpha %g)\n", out, model, adapter, l.rank, (double) l.alpha); }
        llama_lora_free(&l);
    }
    llama_model_free(&m);
    return status;
}

static void main_usage(FILE * f) {
    fprintf(f, "usage: ggmlr-llama COMMAND [options]    (ggmlr-llama COMMAND --help for its options)\n\n"
               "commands:\n"
               "  generate   continue a prompt with a llama-family GGUF model (and a LoRA adapter)\n"
               "  finetune   train LoRA adapters on a text file or prompt/response JSONL; writes an adapter GGUF that llama.cpp loads\n"
               "             (--full: train every weight of an F32/F16/BF16 model and write the model)\n"
               "  merge      write a base model with a LoRA adapter merged into its weights\n"
               "  tiny       write a small random model to try the others\n"
               "  logits     print the logits of given token ids (to compare with another implementation)\n");
}

int main(int argc, char ** argv) {
    if (argc < 2) { main_usage(stderr); return EXIT_USAGE; }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) { main_usage(stdout); return 0; }
    if (strcmp(argv[1], "generate") == 0) return cmd_generate(argc - 2, argv + 2);
    if (strcmp(argv[1], "finetune") == 0) return cmd_finetune(argc - 2, argv + 2);
    if (strcmp(argv[1], "merge") == 0) return cmd_merge(argc - 2, argv + 2);
    if (strcmp(argv[1], "tiny") == 0) return cmd_tiny(argc - 2, argv + 2);
    if (strcmp(argv[1], "logits") == 0) return cmd_logits(argc - 2, argv + 2);
    fprintf(stderr, "error: unknown command '%s'\n", argv[1]);
    main_usage(stderr);
    return EXIT_USAGE;
}

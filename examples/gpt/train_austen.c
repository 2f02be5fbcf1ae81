/* train_austen.c -- the main job: trains a character-level GPT on Jane
 * Austen's novels, shows its progress, writes the loss curve (CSV and PNG)
 * and a GGUF checkpoint, and ends with a sample of generated text.
 *
 *   train_austen [options]             train (defaults: nanoGPT's CPU "baby GPT")
 *   train_austen --sample "prompt"     generate from a checkpoint
 *
 * Run with --help for the options. Under mpirun, N ranks train one model
 * data-parallel (dist.h, docs/mpi.md): each step is N*B sequences. */
#include "data.h"
#include "dist.h"
#include "gpt.h"
#include "sample.h"
#include "train.h"

#include "ggml-cpu.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct cli {
    struct gpt_config cfg;
    struct train_opts train;
    const char * data_path, * out_dir, * resume, * sample_prompt, * checkpoint;
    int64_t eval_interval, log_interval, checkpoint_every;
    int sample_len, top_k;
    float temperature;
    bool plot;
    const struct preset * preset;  /* --preset, or NULL */
};

/* A preset: a fixed list of options that replaces the defaults before the
 * command line's own options are read, so every explicit option overrides it
 * wherever it stands. Fixed step counts (not a time limit) keep a preset's
 * run bitwise repeatable. */
struct preset {
    const char * name, * what;
    const char * const * options;  /* NAME VALUE pairs, NULL-terminated */
};

/* 5min: the lowest validation loss in 5 minutes of training on 2 cores.
 * Short runs at equal CPU time (bench/README.md, "Quality per minute") put
 * steps before size: the baby model at batch 12 x 64 beat wider, deeper,
 * longer-context and larger-batch ones, and its peak learning rate was best
 * at 4e-3 (2e-3 and 8e-3 were worse). bf16 products make a step cheaper;
 * 12000 steps take an estimated 3.5-4.5 minutes on an idle 2-core AVX-512
 * machine and reach a validation loss of 1.2865. */
static const char * const preset_5min[] = {
    "--layers", "4", "--heads", "4", "--embd", "128", "--ctx", "64", "--batch", "12", "--precision", "bf16",
    "--iters", "12000", "--decay-iters", "12000", "--warmup", "100", "--lr", "4e-3", "--min-lr", "4e-4",
    "--weight-decay", "0.1", "--eval-interval", "1000", NULL};

static const struct preset presets[] = {
    {"5min", "the lowest validation loss in 5 minutes of training on 2 cores", preset_5min},
};

static const struct preset * find_preset(const char * name) {
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (!strcmp(presets[i].name, name)) return &presets[i];
    return NULL;
}

static void usage(FILE * f) {
    fprintf(f,
        "usage: train_austen [options]            train, then print a sample\n"
        "       train_austen --sample PROMPT [--checkpoint FILE] [sampling options]\n"
        "\nmodel:\n"
        "  --layers N (4)  --heads N (4)  --kv-heads N (= heads; fewer for grouped-query attention)\n"
        "  --embd N (128)  --ctx N (64)   --attn fused|unfused (fused: ggml_flash_attn_ext)\n"
        "  --precision f32|bf16 (f32; bf16: matrix products, fused attention's included, of bf16 operands, FP32 sums, where the CPU has them)\n"
        "training:\n"
        "  --batch N (12)  --iters N (2000)  --lr X (1e-3)  --min-lr X (1e-4)  --warmup N (100)\n"
        "  --decay-iters N (2000)  --beta1 X (0.9)  --beta2 X (0.99)  --weight-decay X (0.1)  --clip X (1.0)\n"
        "  --threads N (all cores)  --seed N (1337)  --data FILE (data/austen.txt)\n"
        "  --eval-interval N (250)  --eval-batches N (20)  --log-interval N (10)\n"
        "  --out DIR (out): loss.csv, loss.png, checkpoint.gguf\n"
        "  --checkpoint-every N (0: only at the end)  --resume FILE (continue a run from its checkpoint)\n"
        "  --no-plot  (do not draw loss.png)\n"
        "sampling:\n"
        "  --sample PROMPT  --checkpoint FILE (out/checkpoint.gguf)  --sample-len N (500 after training, 500)\n"
        "  --temperature X (0.8)  --top-k N (40)\n"
        "presets (--preset NAME: its options replace the defaults; options given on the command line override it):\n");
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        fprintf(f, "  %s: %s:\n   ", presets[i].name, presets[i].what);
        for (const char * const * o = presets[i].options; *o; o += 2) fprintf(f, " %s %s", o[0], o[1]);
        fprintf(f, "\n");
    }
}

static bool parse_i64(const char * s, int64_t lo, int64_t hi, int64_t * out) {
    char * end;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

static bool parse_f(const char * s, double lo, double hi, float * out) {
    char * end;
    errno = 0;
    const double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) return false;
    *out = (float) v;
    return true;
}

static const char * const valued_options[] = {"--layers", "--heads", "--kv-heads", "--embd", "--ctx", "--batch", "--iters",
    "--warmup", "--decay-iters", "--threads", "--seed", "--eval-interval", "--eval-batches", "--log-interval",
    "--checkpoint-every", "--sample-len", "--top-k", "--lr", "--min-lr", "--beta1", "--beta2", "--weight-decay", "--clip",
    "--temperature", "--attn", "--precision", "--data", "--out", "--resume", "--sample", "--checkpoint", "--preset"};

static bool is_valued_option(const char * a) {
    for (size_t k = 0; k < sizeof valued_options / sizeof valued_options[0]; k++)
        if (!strcmp(a, valued_options[k])) return true;
    return false;
}

/* Sets option a (one of valued_options but --preset) to val; false when val is out of range. */
static bool set_option(struct cli * c, const char * a, const char * val) {
    int64_t v;
    bool ok = true;
#define INT_OPT(name, lo, hi, dst) else if (!strcmp(a, name)) { ok = parse_i64(val, lo, hi, &v); if (ok) dst = v; }
#define F_OPT(name, lo, hi, dst) else if (!strcmp(a, name)) { ok = parse_f(val, lo, hi, &dst); }
    if (0) {}
    INT_OPT("--layers", 1, GPT_MAX_LAYERS, c->cfg.n_layer)
    INT_OPT("--heads", 1, 4096, c->cfg.n_head)
    INT_OPT("--kv-heads", 1, 4096, c->cfg.n_kv_head)
    INT_OPT("--embd", 1, 65536, c->cfg.n_embd)
    INT_OPT("--ctx", 1, 65536, c->cfg.n_ctx)
    INT_OPT("--batch", 1, 65536, c->train.batch)
    INT_OPT("--iters", 0, (int64_t) 1 << 40, c->train.iters)
    INT_OPT("--warmup", 0, (int64_t) 1 << 40, c->train.warmup)
    INT_OPT("--decay-iters", 0, (int64_t) 1 << 40, c->train.decay_iters)
    INT_OPT("--threads", 1, 256, c->train.threads)
    INT_OPT("--seed", 0, INT64_MAX, c->train.seed)
    INT_OPT("--eval-interval", 0, INT64_MAX, c->eval_interval)
    INT_OPT("--eval-batches", 1, 1 << 20, c->train.eval_batches)
    INT_OPT("--log-interval", 1, INT64_MAX, c->log_interval)
    INT_OPT("--checkpoint-every", 0, INT64_MAX, c->checkpoint_every)
    INT_OPT("--sample-len", 0, 1 << 24, c->sample_len)
    INT_OPT("--top-k", 0, 256, c->top_k)
    F_OPT("--lr", 0, 10, c->train.lr)
    F_OPT("--min-lr", 0, 10, c->train.min_lr)
    F_OPT("--beta1", 0, 0.999999, c->train.beta1)
    F_OPT("--beta2", 0, 0.999999, c->train.beta2)
    F_OPT("--weight-decay", 0, 10, c->train.weight_decay)
    F_OPT("--clip", 0, 1e9, c->train.clip)
    F_OPT("--temperature", 1e-3, 100, c->temperature)
    else if (!strcmp(a, "--attn")) {
        ok = !strcmp(val, "fused") || !strcmp(val, "unfused");
        c->train.fused = !strcmp(val, "fused");
    }
    else if (!strcmp(a, "--precision")) {
        ok = !strcmp(val, "f32") || !strcmp(val, "bf16");
        c->train.prec = !strcmp(val, "bf16") ? GGML_PREC_BF16 : GGML_PREC_DEFAULT;
    }
    else if (!strcmp(a, "--data")) c->data_path = val;
    else if (!strcmp(a, "--out")) c->out_dir = val;
    else if (!strcmp(a, "--resume")) c->resume = val;
    else if (!strcmp(a, "--sample")) c->sample_prompt = val;
    else if (!strcmp(a, "--checkpoint")) c->checkpoint = val;
#undef INT_OPT
#undef F_OPT
    return ok;
}

static bool parse_args(int argc, char ** argv, struct cli * c) {
    *c = (struct cli) {
        .cfg = {0, 64, 128, 4, 0, 4},
        .train = {.batch = 12, .n_ctx = 64, .iters = 2000, .lr = 1e-3f, .min_lr = 1e-4f, .warmup = 100, .decay_iters = 2000,
                  .beta1 = 0.9f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 0.1f, .clip = 1.0f,
                  .threads = ggml_cpu_n_cores(), .seed = 1337, .eval_batches = 20, .fused = true},
        .data_path = "data/austen.txt", .out_dir = "out", .checkpoint = NULL,
        .eval_interval = 250, .log_interval = 10, .sample_len = 500, .top_k = 40, .temperature = 0.8f, .plot = true,
    };
    /* first pass: the syntax, and the preset (the last one named), whose options become the defaults */
    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); exit(0); }
        if (!strcmp(a, "--no-plot")) continue;
        if (!is_valued_option(a)) { fprintf(stderr, "error: unknown option %s (see --help)\n", a); return false; }
        if (i + 1 >= argc) { fprintf(stderr, "error: %s needs a value (see --help)\n", a); return false; }
        if (!strcmp(a, "--preset") && !(c->preset = find_preset(argv[i + 1]))) {
            fprintf(stderr, "error: unknown preset '%s' (presets:", argv[i + 1]);
            for (size_t k = 0; k < sizeof presets / sizeof presets[0]; k++) fprintf(stderr, " %s", presets[k].name);
            fprintf(stderr, ")\n");
            return false;
        }
        i++;
    }
    for (const char * const * o = c->preset ? c->preset->options : NULL; o && *o; o += 2)
        if (!set_option(c, o[0], o[1])) { fprintf(stderr, "error: preset %s: bad value '%s' for %s\n", c->preset->name, o[1], o[0]); return false; }
    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        if (!strcmp(a, "--no-plot")) { c->plot = false; continue; }
        const char * val = argv[++i];
        if (!strcmp(a, "--preset")) continue;
        if (!set_option(c, a, val)) { fprintf(stderr, "error: bad value '%s' for %s (see --help)\n", val, a); return false; }
    }
    if (c->cfg.n_kv_head == 0) c->cfg.n_kv_head = c->cfg.n_head;
    c->train.n_ctx = c->cfg.n_ctx;
    return true;
}

static void fmt_time(double s, char * buf, size_t n) {
    const long t = (long) (s + 0.5);
    if (t >= 3600) snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* Draws loss.png from loss.csv with R's graphics when Rscript is there; says why not otherwise. */
static void draw_plot(const char * dir) {
    char script[4096], cmd[4600];
    snprintf(script, sizeof script, "%s/plot_loss.R", dir);
    FILE * f = fopen(script, "w");
    if (!f) { printf("no picture drawn: cannot write %s\n", script); return; }
    fprintf(f,
        "# Draws the loss curve of a train_austen run: Rscript plot_loss.R loss.csv loss.png\n"
        "a <- commandArgs(TRUE); d <- read.csv(a[1])\n"
        "png(a[2], width = 900, height = 560, type = 'cairo')\n"
        "par(mar = c(4.5, 4.5, 3, 1))\n"
        "v <- d[!is.na(d$val_loss), ]\n"
        "yl <- range(c(d$train_loss, v$val_loss), finite = TRUE)\n"
        "plot(d$step, d$train_loss, type = 'l', col = 'grey55', ylim = yl, xlab = 'step', ylab = 'loss (nats per character)',\n"
        "     main = 'Character-level GPT on Jane Austen')\n"
        "if (nrow(d) >= 25) lines(d$step, stats::filter(d$train_loss, rep(1/25, 25), sides = 1), col = 'black', lwd = 2)\n"
        "lines(v$step, v$val_loss, type = 'o', col = 'firebrick', pch = 19, lwd = 2)\n"
        "grid()\n"
        "legend('topright', c('train (batch)', 'train (25-step mean)', 'validation'), col = c('grey55', 'black', 'firebrick'),\n"
        "       lwd = c(1, 2, 2), pch = c(NA, NA, 19), bg = 'white')\n"
        "invisible(dev.off())\n");
    fclose(f);
    if (system("command -v Rscript >/dev/null 2>&1") != 0) {
        printf("no picture drawn: Rscript is not installed (apt-get install r-base-core); the curve is in %s/loss.csv\n", dir);
        return;
    }
    snprintf(cmd, sizeof cmd, "Rscript '%s' '%s/loss.csv' '%s/loss.png'", script, dir, dir);
    if (system(cmd) == 0) printf("loss curve: %s/loss.png (%s/loss.csv)\n", dir, dir);
    else printf("no picture drawn: Rscript failed on %s (the curve is in %s/loss.csv)\n", script, dir);
}

static int sample_only(const struct cli * c) {
    char path[4096];
    snprintf(path, sizeof path, "%s", c->checkpoint ? c->checkpoint : "out/checkpoint.gguf");
    struct gpt_model m;
    struct corpus vocab = {0};
    unsigned char v[256];
    int64_t step;
    if (!gpt_load(&m, path, v, &step)) return 1;
    corpus_set_vocab(&vocab, v, m.cfg.n_vocab);
    const bool ok = gpt_generate(&m, &vocab, c->sample_prompt, c->sample_len, c->temperature, c->top_k, c->train.seed, c->train.threads);
    gpt_model_free(&m);
    return ok ? 0 : 1;
}

static int train_main(int argc, char ** argv) {
    struct cli c;
    if (!parse_args(argc, argv, &c)) return 2;
    if (c.sample_prompt) return sample_only(&c);
    struct corpus data;
    if (!corpus_load(&data, c.data_path, 0.9)) return 1;
    struct gpt_model model;
    int64_t start = 0;
    if (c.resume) {
        unsigned char v[256];
        if (!dist_load(&model, c.resume, v, &start)) return 1;
        if (model.cfg.n_vocab != data.n_vocab || memcmp(v, data.vocab, (size_t) data.n_vocab) != 0) {
            fprintf(stderr, "error: %s was trained on a text with another vocabulary than %s\n", c.resume, c.data_path);
            return 1;
        }
        c.cfg = model.cfg;
        c.train.n_ctx = model.cfg.n_ctx;
    } else {
        c.cfg.n_vocab = data.n_vocab;
        const char * why = gpt_config_error(&c.cfg);
        if (why) { fprintf(stderr, "error: %s (see --help)\n", why); return 2; }
        if (!gpt_model_init(&model, &c.cfg, c.train.seed)) return 1;
    }
    if (!dist_check(&c.cfg, &c.train, &data, c.eval_interval)) return 1;
    const bool root = dist_rank() == 0;  /* the one that writes files */
    if (root && mkdir(c.out_dir, 0777) != 0 && errno != EEXIST) { fprintf(stderr, "error: cannot create %s: %s\n", c.out_dir, strerror(errno)); return 1; }
    struct trainer tr;
    /* every rank starts from rank 0's parameters (and, resumed, its moments) */
    if (!trainer_init(&tr, &model, &data, &c.train) || !dist_attach(&tr)) return 1;
    printf("ggmlR character-level GPT on %s: %lld characters (%lld train, %lld validation), vocabulary %d\n", c.data_path,
           (long long) data.n, (long long) data.n_train, (long long) (data.n - data.n_train), data.n_vocab);
    printf("model: %d layers, %d heads (%d key/value), embedding %d, context %d, %.2f M parameters; attention %s\n", c.cfg.n_layer,
           c.cfg.n_head, c.cfg.n_kv_head, c.cfg.n_embd, c.cfg.n_ctx, (double) gpt_model_n_weights(&model) / 1e6,
           c.train.fused ? "fused (ggml_flash_attn_ext)" : "unfused (mul_mat + soft_max_ext + mul_mat)");
    printf("training: %lld steps of %d x %d tokens, AdamW lr %g -> %g (warmup %lld, cosine to step %lld), weight decay %g, "
           "%d threads, SIMD path %s, products %s%s\n",
           (long long) c.train.iters, c.train.batch, c.train.n_ctx, (double) c.train.lr, (double) c.train.min_lr,
           (long long) c.train.warmup, (long long) c.train.decay_iters, (double) c.train.weight_decay, c.train.threads,
           ggml_cpu_simd_name(), c.train.prec == GGML_PREC_BF16 ? (strcmp(ggml_cpu_bf16_name(), "f32") ? "bf16" : "f32 (no bf16 on this CPU)") : "f32",
           start ? " (resumed)" : "");
    if (c.preset) {
        printf("preset %s (%s):", c.preset->name, c.preset->what);
        for (const char * const * o = c.preset->options; *o; o += 2) printf(" %s %s", o[0], o[1]);
        printf(" (options given on the command line override these; the lines above show the values in use)\n");
    }
    if (dist_size() > 1)
        printf("data parallel: %d ranks x batch %d = %d sequences per step\n", dist_size(), c.train.batch, dist_size() * c.train.batch);
    char csv_path[4096];
    snprintf(csv_path, sizeof csv_path, "%s/loss.csv", c.out_dir);
    FILE * csv = fopen(root ? csv_path : "/dev/null", start ? "a" : "w");
    if (!csv) { fprintf(stderr, "error: cannot write %s\n", csv_path); return 1; }
    if (ftell(csv) == 0) fprintf(csv, "step,train_loss,val_loss,lr,grad_norm\n");
    const bool tty = isatty(1);
    const double t0 = now();
    double t_steps = 0.0;
    int64_t tokens = 0;
    int status = 0;
    for (int64_t step = start; step <= c.train.iters; step++) {
        const bool last = step == c.train.iters;
        float val = NAN;
        if ((c.eval_interval > 0 && step % c.eval_interval == 0) || last) {
            if (!trainer_eval(&tr, &val)) { status = 1; break; }
            if (tty) printf("\r\033[K");
            printf("step %lld: validation loss %.4f\n", (long long) step, (double) val);
        }
        if (last) {
            if (!isnan(val)) fprintf(csv, "%lld,,%.6f,,\n", (long long) step, (double) val);
            break;
        }
        float loss, gnorm;
        const double ts = now();
        if (!trainer_step(&tr, step, &loss, &gnorm)) { status = 1; break; }
        t_steps += now() - ts;
        tokens += (int64_t) dist_size() * c.train.batch * c.train.n_ctx;
        fprintf(csv, "%lld,%.6f,", (long long) step, (double) loss);
        if (!isnan(val)) fprintf(csv, "%.6f", (double) val);
        fprintf(csv, ",%.6g,%.4f\n", (double) train_lr(&c.train, step), (double) gnorm);
        const int64_t done = step + 1 - start, total = c.train.iters - start;
        if (done % c.log_interval == 0 || step + 1 == c.train.iters || tty) {
            char el[32], eta[32];
            const double elapsed = now() - t0;
            fmt_time(elapsed, el, sizeof el);
            fmt_time(elapsed / (double) done * (double) (total - done), eta, sizeof eta);
            const double tps = (double) tokens / t_steps;
            if (tty) {
                const int width = 30, fill = (int) (width * (double) (step + 1) / (double) c.train.iters);
                printf("\r\033[K[%.*s%*s] ", fill, "##############################", width - fill, "");
            }
            if (!tty || done % c.log_interval == 0 || step + 1 == c.train.iters)
                printf("step %lld/%lld | loss %.4f | %.0f tokens/s | elapsed %s | ETA %s%s", (long long) (step + 1), (long long) c.train.iters,
                       (double) loss, tps, el, eta, tty ? "" : "\n");
            fflush(stdout);
        }
        if (root && c.checkpoint_every > 0 && (step + 1) % c.checkpoint_every == 0) {
            char p[4200];
            snprintf(p, sizeof p, "%s/checkpoint-%lld.gguf", c.out_dir, (long long) (step + 1));
            if (!trainer_save(&tr, p, step + 1)) { status = 1; break; }
        }
    }
    fclose(csv);
    if (tty) printf("\n");
    if (status == 0 && root) {
        char el[32];
        fmt_time(now() - t0, el, sizeof el);
        printf("done in %s: %.0f tokens/s in training steps\n", el, t_steps > 0 ? (double) tokens / t_steps : 0.0);
        char p[4200];
        snprintf(p, sizeof p, "%s/checkpoint.gguf", c.out_dir);
        if (!trainer_save(&tr, p, c.train.iters)) status = 1;
        else printf("checkpoint: %s\n", p);
    }
    if (status == 0 && root && c.plot) draw_plot(c.out_dir);
    if (status == 0 && root && c.sample_len > 0) {
        printf("\nsample (temperature %.2f, top-k %d):\n\n", (double) c.temperature, c.top_k);
        fflush(stdout);
        if (!gpt_generate(&model, &data, "\n", c.sample_len, c.temperature, c.top_k, c.train.seed, c.train.threads)) status = 1;
    }
    trainer_free(&tr);
    gpt_model_free(&model);
    corpus_free(&data);
    return status;
}

int main(int argc, char ** argv) {
    if (!dist_init(&argc, &argv)) return 1;
    return dist_finish(train_main(argc, argv));
}

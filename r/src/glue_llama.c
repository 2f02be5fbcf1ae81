/* glue_llama.c -- the llama-family model of examples/llama (its library,
 * copied into ggmlr/examples/llama by configure) from R: loading a GGUF,
 * tokenizing, logits, generation with a KV cache, LoRA fine-tuning and the
 * tiny random model.
 *
 * A model handle owns the model and its vocabulary; its finalizer (or
 * ggml_llama_free) frees both, and a freed handle is an R error. An adapter
 * is named by its file and loaded against the model for each call, so it can
 * never be applied to a model of other shapes. The library reports failures
 * as text (llama_stderr.h routes it here); each call clears that text and an
 * R error carries it. Every C resource of a call is freed before any R error
 * is raised, and R vectors are allocated before the C resources. */
#include "glue.h"

#include "ggmlr/examples/llama/llama.h"

#include <R_ext/Utils.h>

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define CLS_LLAMA "ggml_llama_model"

/* ---- the library's error text ---- */

char rg_llama_stderr_tag;
static char llama_msg[4096];
static size_t llama_msg_len;

static int llama_msg_append(const char * fmt, va_list ap) {
    const int n = vsnprintf(llama_msg + llama_msg_len, sizeof llama_msg - llama_msg_len, fmt, ap);
    if (n > 0) llama_msg_len += (size_t) n < sizeof llama_msg - llama_msg_len ? (size_t) n : sizeof llama_msg - 1 - llama_msg_len;
    return n;
}

int rg_llama_fprintf(FILE * f, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const int n = f == (FILE *) (void *) &rg_llama_stderr_tag ? llama_msg_append(fmt, ap) : vfprintf(f, fmt, ap);
    va_end(ap);
    return n;
}

/* A failure found by the glue itself, reported as the library's are. */
static void llama_note(const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    llama_msg_append(fmt, ap);
    va_end(ap);
}

static void llama_msg_clear(void) { llama_msg_len = 0; llama_msg[0] = '\0'; }

/* R error "fn: <the library's text>", its "error: " prefixes and last newline dropped. */
static NORET void llama_fail(const char * fn) {
    char msg[sizeof llama_msg];
    size_t n = 0;
    for (const char * p = llama_msg; *p && n + 1 < sizeof msg;) {
        if (strncmp(p, "error: ", 7) == 0) p += 7;
        while (*p && n + 1 < sizeof msg) { msg[n++] = *p; if (*p++ == '\n') break; }
    }
    while (n > 0 && msg[n - 1] == '\n') n--;
    msg[n] = '\0';
    llama_msg_clear();
    if (n == 0) Rf_error("%s failed", fn);
    Rf_error("%s: %s", fn, msg);
}

/* ---- the model handle ---- */

struct rg_llama {
    struct llama_model model;
    struct llama_vocab vocab;
};

static void llama_release(SEXP x) {
    struct rg_llama * r = R_ExternalPtrAddr(x);
    if (!r) return;
    R_ClearExternalPtr(x);
    llama_vocab_free(&r->vocab);
    llama_model_free(&r->model);
    free(r);
}

static struct rg_llama * llama_arg(SEXP x) { return rg_object_get(x, CLS_LLAMA, "model"); }

/* A file name argument: one string, not NA (R expands a tilde first). */
static const char * path_arg(SEXP x, const char * arg) {
    if (TYPEOF(x) != STRSXP || XLENGTH(x) != 1 || STRING_ELT(x, 0) == NA_STRING || !CHAR(STRING_ELT(x, 0))[0])
        Rf_error("'%s' must be a file name (one non-empty string, not NA)", arg);
    return Rf_translateChar(STRING_ELT(x, 0));
}

static int threads_arg(SEXP x) {
    const int n = rg_int(x, "threads");
    if (n < 0 || n > 256) Rf_error("'threads' must be between 1 and 256, or 0 for the package default (got %d)", n);
    return n > 0 ? n : rg_default_threads();
}

SEXP R_ggml_llama_load(SEXP path) {
    const char * p = path_arg(path, "path");
    SEXP x = PROTECT(rg_object_handle(CLS_LLAMA, R_NilValue, llama_release));
    struct rg_llama * r = calloc(1, sizeof *r);
    if (!r) Rf_error("ggml_llama_load: out of memory");
    llama_msg_clear();
    if (!llama_model_load(&r->model, p)) { free(r); llama_fail("ggml_llama_load"); }
    if (!llama_vocab_load(&r->vocab, &r->model)) { llama_model_free(&r->model); free(r); llama_fail("ggml_llama_load"); }
    R_SetExternalPtrAddr(x, r);
    UNPROTECT(1);
    return x;
}

SEXP R_ggml_llama_free(SEXP model) { return rg_object_free(model, CLS_LLAMA, "model", llama_release); }

SEXP R_ggml_llama_info(SEXP model) {
    const struct rg_llama * r = llama_arg(model);
    const struct llama_hparams * hp = &r->model.hp;
    const char * names[] = {"arch", "n_layer", "n_embd", "n_ff", "n_head", "n_head_kv", "n_vocab", "n_ctx", "n_rot", "rope_base",
                            "rms_eps", "type_embd", "type_blocks", "type_output", "tied", "tokenizer", "bos", "eos", "add_bos", "add_eos"};
    const int n = (int) (sizeof names / sizeof names[0]);
    SEXP out = PROTECT(Rf_allocVector(VECSXP, n));
    SEXP nm = PROTECT(Rf_allocVector(STRSXP, n));
    for (int i = 0; i < n; i++) SET_STRING_ELT(nm, i, Rf_mkChar(names[i]));
    Rf_setAttrib(out, R_NamesSymbol, nm);
    const int ints[] = {hp->n_layer, hp->n_embd, hp->n_ff, hp->n_head, hp->n_head_kv, hp->n_vocab, hp->n_ctx, hp->n_rot};
    SET_VECTOR_ELT(out, 0, Rf_mkString(hp->arch));
    for (int i = 0; i < 8; i++) SET_VECTOR_ELT(out, 1 + i, Rf_ScalarInteger(ints[i]));
    SET_VECTOR_ELT(out, 9, Rf_ScalarReal(hp->rope_base));
    SET_VECTOR_ELT(out, 10, Rf_ScalarReal(hp->rms_eps));
    SET_VECTOR_ELT(out, 11, Rf_mkString(ggml_type_name(r->model.tok_embd->type)));
    SET_VECTOR_ELT(out, 12, Rf_mkString(hp->n_layer > 0 ? ggml_type_name(r->model.layers[0].w[LLAMA_Q]->type) : "none"));
    SET_VECTOR_ELT(out, 13, Rf_mkString(ggml_type_name(r->model.output->type)));
    SET_VECTOR_ELT(out, 14, Rf_ScalarLogical(r->model.output == r->model.tok_embd));
    SET_VECTOR_ELT(out, 15, Rf_mkString(r->vocab.bpe ? "gpt2" : "llama"));
    SET_VECTOR_ELT(out, 16, Rf_ScalarInteger(r->vocab.bos));
    SET_VECTOR_ELT(out, 17, Rf_ScalarInteger(r->vocab.eos));
    SET_VECTOR_ELT(out, 18, Rf_ScalarLogical(r->vocab.add_bos));
    SET_VECTOR_ELT(out, 19, Rf_ScalarLogical(r->vocab.add_eos));
    UNPROTECT(2);
    return out;
}

/* ---- tokens ---- */

/* add_bos: the vocabulary's BOS first and EOS last when it adds them (llama.cpp's add_special). */
SEXP R_ggml_llama_tokenize(SEXP model, SEXP text, SEXP add_bos, SEXP special) {
    const struct rg_llama * r = llama_arg(model);
    const char * s = rg_string(text, "text");
    const int bos = rg_bool(add_bos, "add_bos"), sp = rg_bool(special, "special");
    int32_t * ids = NULL;
    llama_msg_clear();
    const int n = llama_tokenize(&r->vocab, s, strlen(s), bos, sp, &ids);
    if (n < 0) llama_fail("ggml_llama_tokenize");
    SEXP out = Rf_allocVector(INTSXP, n);  /* on an allocation error ids leaks: R is out of memory then */
    if (n > 0) memcpy(INTEGER(out), ids, (size_t) n * sizeof *ids);
    free(ids);
    return out;
}

/* The number of token ids in x (integer or double, whole, in the vocabulary), or an R error. */
static int ids_check(SEXP x, const struct rg_llama * r, const char * arg) {
    const R_xlen_t n = rg_numeric_len(x, arg);
    if (n > INT32_MAX) Rf_error("'%s': too many tokens", arg);
    for (R_xlen_t i = 0; i < n; i++) {
        const double v = rg_num_at(x, i);
        if (!rg_is_int32(v) || v < 0 || v >= r->model.hp.n_vocab)
            Rf_error("'%s'[%lld] = %g is not a token id (0 .. %d)", arg, (long long) i + 1, v, r->model.hp.n_vocab - 1);
    }
    return (int) n;
}

/* The n checked ids of x as a malloc'd array (NULL: out of memory). */
static int32_t * ids_copy(SEXP x, int n) {
    int32_t * ids = malloc((size_t) (n > 0 ? n : 1) * sizeof *ids);
    if (ids) for (int i = 0; i < n; i++) ids[i] = (int32_t) rg_num_at(x, i);
    return ids;
}

/* Appends the bytes of token id to buf (grown as needed); NUL bytes are dropped (an R string holds none). */
static int append_piece(const struct rg_llama * r, int32_t id, char ** buf, size_t * len, size_t * cap) {
    char piece[256];
    const int n = llama_token_to_piece(&r->vocab, id, piece, sizeof piece);
    if (*len + (size_t) n + 1 > *cap) {
        const size_t want = 2 * (*cap + (size_t) n + 1);
        char * grown = realloc(*buf, want);
        if (!grown) return 0;
        *buf = grown;
        *cap = want;
    }
    for (int i = 0; i < n; i++) if (piece[i]) (*buf)[(*len)++] = piece[i];
    return 1;
}

static SEXP utf8_string(const char * s, size_t len) {
    SEXP out = PROTECT(Rf_allocVector(STRSXP, 1));
    SET_STRING_ELT(out, 0, Rf_mkCharLenCE(s, (int) len, CE_UTF8));
    UNPROTECT(1);
    return out;
}

SEXP R_ggml_llama_detokenize(SEXP model, SEXP ids) {
    const struct rg_llama * r = llama_arg(model);
    const int n = ids_check(ids, r, "ids");
    size_t len = 0, cap = 64;
    char * text = malloc(cap);
    int ok = text != NULL;
    for (int i = 0; ok && i < n; i++) ok = append_piece(r, (int32_t) rg_num_at(ids, i), &text, &len, &cap);
    if (!ok) { free(text); Rf_error("ggml_llama_detokenize: out of memory"); }
    SEXP out = PROTECT(Rf_allocVector(STRSXP, 1));  /* a long error jump here would leak text: R is out of memory then */
    SET_STRING_ELT(out, 0, Rf_mkCharLenCE(text, (int) len, CE_UTF8));
    free(text);
    UNPROTECT(1);
    return out;
}

/* ---- inference ---- */

/* The adapter file named by lora (R NULL: none). */
static const char * lora_arg(SEXP lora) { return lora == R_NilValue ? NULL : path_arg(lora, "lora"); }

/* The adapter at path (NULL: none) loaded for r's model into l; 0 with the library's text. */
static int lora_open(const char * path, const struct rg_llama * r, struct llama_lora * l) {
    memset(l, 0, sizeof *l);
    return !path || llama_lora_load(l, &r->model, path);
}

/* The logits of every position of the sequence ids: a [n_vocab, n] matrix. */
SEXP R_ggml_llama_logits(SEXP model, SEXP ids, SEXP lora, SEXP threads) {
    const struct rg_llama * r = llama_arg(model);
    const int nt = threads_arg(threads);
    const char * adapter = lora_arg(lora);
    const int V = r->model.hp.n_vocab;
    const int n = ids_check(ids, r, "ids");
    if (n < 1 || n > r->model.hp.n_ctx) Rf_error("'ids' must hold 1 to %d tokens (the model's context), not %d", r->model.hp.n_ctx, n);
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, V, n));
    int32_t * tok = ids_copy(ids, n);
    if (!tok) Rf_error("ggml_llama_logits: out of memory");
    struct llama_lora l;
    struct llama_session s = {0};
    llama_msg_clear();
    int ok = lora_open(adapter, r, &l);
    ok = ok && llama_session_init(&s, &r->model, adapter ? &l : NULL, n, nt);
    ok = ok && llama_decode(&s, tok, n, true);
    if (ok) for (R_xlen_t i = 0; i < (R_xlen_t) V * n; i++) REAL(out)[i] = s.logits[i];
    if (s.model) llama_session_free(&s);
    if (l.ctx) llama_lora_free(&l);
    free(tok);
    if (!ok) llama_fail("ggml_llama_logits");
    UNPROTECT(1);
    return out;
}

static void check_interrupt(void * unused) { (void) unused; R_CheckUserInterrupt(); }
/* Is an interrupt pending? (Checked without a long jump, so the caller can free its resources first.) */
static int interrupted(void) { return !R_ToplevelExec(check_interrupt, NULL); }

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

/* list(text, ids, n_prompt, prompt_seconds, generation_seconds): the prompt
 * in one batch, then one token at a time until n_predict or EOS (as the
 * ggmlr-llama CLI does: BOS and EOS around the prompt as the vocabulary
 * adds them; the text is the continuation only). */
SEXP R_ggml_llama_generate(SEXP model, SEXP prompt, SEXP n_predict, SEXP temperature, SEXP top_k, SEXP top_p, SEXP seed, SEXP lora,
                           SEXP n_ctx, SEXP threads) {
    const struct rg_llama * r = llama_arg(model);
    const char * text = rg_string(prompt, "prompt");
    const int n_new = rg_int(n_predict, "n_predict"), k = rg_int(top_k, "top_k"), nt = threads_arg(threads);
    const double temp = rg_double(temperature, "temperature"), p = rg_double(top_p, "top_p"), sd = rg_double(seed, "seed");
    int ctx = rg_int(n_ctx, "n_ctx");
    const char * adapter = lora_arg(lora);
    if (n_new < 0) Rf_error("'n_predict' must be >= 0 (got %d)", n_new);
    if (!(temp >= 0)) Rf_error("'temperature' must be >= 0 (0: greedy)");
    if (k < 0) Rf_error("'top_k' must be >= 0 (0: all)");
    if (!(p > 0 && p <= 1)) Rf_error("'top_p' must be in (0, 1]");
    if (!(sd >= 0 && sd <= 9007199254740992.0 && sd == floor(sd))) Rf_error("'seed' must be a whole number in 0 .. 2^53");
    if (ctx < 0) Rf_error("'n_ctx' must be >= 0 (0: prompt + n_predict)");
    const char * names[] = {"text", "ids", "n_prompt", "prompt_seconds", "generation_seconds"};
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 5));
    SEXP nm = PROTECT(Rf_allocVector(STRSXP, 5));
    for (int i = 0; i < 5; i++) SET_STRING_ELT(nm, i, Rf_mkChar(names[i]));
    Rf_setAttrib(out, R_NamesSymbol, nm);
    SEXP ids = PROTECT(Rf_allocVector(INTSXP, n_new));

    struct llama_sampler smp = {.temperature = (float) temp, .top_k = k, .top_p = (float) p, .state = (uint64_t) sd};
    struct llama_lora l;
    struct llama_session s = {0};
    int32_t * tok = NULL;
    char * gen = NULL;
    size_t len = 0, cap = 256;
    int n_done = 0, n_prompt = 0, stop = 0;  /* stop: 1 error, 2 interrupt, 3 out of memory */
    double t0 = 0, t1 = 0, t2 = 0;
    llama_msg_clear();
    if (!lora_open(adapter, r, &l)) stop = 1;
    if (!stop && (n_prompt = llama_tokenize(&r->vocab, text, strlen(text), true, true, &tok)) < 1) {
        if (n_prompt == 0) llama_note("error: the prompt has no tokens\n");
        stop = 1;
    }
    if (!stop) {
        if (ctx == 0) ctx = n_prompt + n_new < r->model.hp.n_ctx ? n_prompt + n_new : r->model.hp.n_ctx;
        if ((int64_t) n_prompt + n_new > ctx) {
            llama_note("error: %d prompt tokens + %d new ones do not fit the context of %d (the model's: %d)\n", n_prompt, n_new,
                             ctx, r->model.hp.n_ctx);
            stop = 1;
        }
    }
    if (!stop && !(gen = malloc(cap))) stop = 3;
    if (!stop && !llama_session_init(&s, &r->model, adapter ? &l : NULL, ctx, nt)) stop = 1;
    if (!stop) {
        t0 = seconds_now();
        if (!llama_decode(&s, tok, n_prompt, false)) stop = 1;
        t1 = seconds_now();
    }
    for (; !stop && n_done < n_new; n_done++) {
        const int32_t next = llama_sample(&smp, s.logits, r->model.hp.n_vocab);
        if (next == r->vocab.eos) break;
        INTEGER(ids)[n_done] = next;
        if (!append_piece(r, next, &gen, &len, &cap)) stop = 3;
        else if (interrupted()) stop = 2;
        else if (n_done + 1 < n_new && !llama_decode(&s, &next, 1, false)) stop = 1;
    }
    t2 = seconds_now();
    if (s.model) llama_session_free(&s);
    if (l.ctx) llama_lora_free(&l);
    free(tok);
    if (stop) {
        free(gen);
        if (stop == 2) Rf_error("ggml_llama_generate: interrupted");
        if (stop == 3) Rf_error("ggml_llama_generate: out of memory");
        llama_fail("ggml_llama_generate");
    }
    SET_VECTOR_ELT(out, 0, utf8_string(gen, len));  /* a long error jump here would leak gen: R is out of memory then */
    free(gen);
    SET_VECTOR_ELT(out, 1, Rf_lengthgets(ids, n_done));
    SET_VECTOR_ELT(out, 2, Rf_ScalarInteger(n_prompt));
    SET_VECTOR_ELT(out, 3, Rf_ScalarReal(t1 - t0));
    SET_VECTOR_ELT(out, 4, Rf_ScalarReal(t2 - t1));
    UNPROTECT(3);
    return out;
}

/* ---- fine-tuning ---- */

/* The numeric options of R_ggml_llama_finetune, in the order R passes them
 * (checked there; range checks that guard memory are repeated here). */
enum { FT_RANK, FT_ALPHA, FT_ITERS, FT_BATCH, FT_CTX, FT_ACCUM, FT_LR, FT_MIN_LR, FT_WARMUP, FT_WD, FT_CLIP, FT_VAL_SPLIT, FT_EVAL_EVERY,
       FT_EVAL_BATCHES, FT_SAVE_EVERY, FT_SEED, FT_THREADS, FT_LOG_EVERY, FT_STOP_AFTER, FT_N };

/* data.frame-like list(step, loss, grad_norm, lr, val_loss): one row per
 * optimizer step run (val_loss NA where no validation was run). text is the
 * training data (text, or JSONL lines when jsonl), named data_name in
 * messages. The adapter is written to adapter_out; with checkpoint, the
 * adapters and AdamW state every save_every steps and at the end; with
 * resume, training continues from such a checkpoint. stop_after > 0 ends
 * the run after that step as if interrupted (adapter and checkpoint
 * written), for a later resume. */
SEXP R_ggml_llama_finetune(SEXP model, SEXP text, SEXP jsonl, SEXP data_name, SEXP targets, SEXP options, SEXP checkpoint, SEXP resume,
                           SEXP adapter_out, SEXP verbose) {
    const struct rg_llama * r = llama_arg(model);
    const char * data = rg_string(text, "data");
    const int is_jsonl = rg_bool(jsonl, "jsonl"), talk = rg_bool(verbose, "verbose");
    const char * name = rg_string(data_name, "data_name");
    const int mats = rg_int(targets, "targets");
    if (rg_numeric_len(options, "options") != FT_N) Rf_error("'options' must hold %d numbers", FT_N);
    double o[FT_N];
    for (int i = 0; i < FT_N; i++) {
        o[i] = rg_num_at(options, i);
        if (!R_FINITE(o[i]) || o[i] < 0) Rf_error("'options'[%d] must be a finite number >= 0", i + 1);
    }
    if (mats <= 0 || (unsigned) mats > LLAMA_LORA_ALL) Rf_error("'targets' must select some of the %d matrices", LLAMA_N_MAT);
    if (o[FT_ITERS] < 1 || o[FT_ITERS] > 1e8 || o[FT_EVAL_EVERY] < 1 || o[FT_EVAL_BATCHES] < 1 || o[FT_LOG_EVERY] < 1 || o[FT_BATCH] > 1e6 ||
        o[FT_CTX] > 1e6 || o[FT_ACCUM] > 1e6 || o[FT_EVAL_BATCHES] > 1e6 || o[FT_RANK] > 1e6 || !(o[FT_VAL_SPLIT] > 0 && o[FT_VAL_SPLIT] < 1))
        Rf_error("an option of ggml_llama_finetune is out of range");
    const char * ckpt = checkpoint == R_NilValue ? NULL : path_arg(checkpoint, "checkpoint");
    const char * from = resume == R_NilValue ? NULL : path_arg(resume, "resume");
    const char * out_path = path_arg(adapter_out, "adapter_out");
    const int64_t iters = (int64_t) o[FT_ITERS], eval_every = (int64_t) o[FT_EVAL_EVERY], save_every = (int64_t) o[FT_SAVE_EVERY],
                  log_every = (int64_t) o[FT_LOG_EVERY],
                  end = o[FT_STOP_AFTER] > 0 && o[FT_STOP_AFTER] < o[FT_ITERS] ? (int64_t) o[FT_STOP_AFTER] : iters;
    const struct llama_train_opts to = {
        .batch = (int) o[FT_BATCH], .n_ctx = (int) o[FT_CTX], .accum = (int) o[FT_ACCUM], .iters = iters, .lr = (float) o[FT_LR],
        .min_lr = (float) o[FT_MIN_LR], .warmup = (int64_t) o[FT_WARMUP], .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
        .weight_decay = (float) o[FT_WD], .clip = (float) o[FT_CLIP], .threads = o[FT_THREADS] > 0 ? (int) o[FT_THREADS] : rg_default_threads(),
        .seed = (uint64_t) o[FT_SEED], .eval_batches = (int) o[FT_EVAL_BATCHES]};

    const char * cols[] = {"step", "loss", "grad_norm", "lr", "val_loss"};
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 5));
    SEXP nm = PROTECT(Rf_allocVector(STRSXP, 5));
    for (int i = 0; i < 5; i++) {
        SET_STRING_ELT(nm, i, Rf_mkChar(cols[i]));
        SET_VECTOR_ELT(out, i, Rf_allocVector(i == 0 ? INTSXP : REALSXP, (R_xlen_t) iters));
    }
    Rf_setAttrib(out, R_NamesSymbol, nm);
    int * step_col = INTEGER(VECTOR_ELT(out, 0));
    double * loss_col = REAL(VECTOR_ELT(out, 1)), * gn_col = REAL(VECTOR_ELT(out, 2)), * lr_col = REAL(VECTOR_ELT(out, 3)),
           * val_col = REAL(VECTOR_ELT(out, 4));

    struct llama_data d = {0};
    struct llama_lora l = {0};
    struct llama_trainer t = {0};
    int64_t step = 0, rows = 0;
    int stop = 0;  /* 1 error, 2 interrupt */
    llama_msg_clear();
    if (is_jsonl) {
        if (!llama_jsonl_data(&r->vocab, name, data, strlen(data), &d)) stop = 1;
    } else {
        const int n = llama_tokenize(&r->vocab, data, strlen(data), true, false, &d.tokens);
        if (n < 0) stop = 1;
        else d.n = n;
    }
    if (!stop) llama_data_split(&d, (float) o[FT_VAL_SPLIT]);
    if (!stop && !(from ? llama_lora_load(&l, &r->model, from)
                        : llama_lora_init(&l, &r->model, (int) o[FT_RANK], (float) o[FT_ALPHA], (unsigned) mats, to.seed))) stop = 1;
    if (!stop && !llama_trainer_init(&t, &r->model, &l, &d, &to)) stop = 1;
    if (!stop && from && !llama_trainer_resume(&t, from, &step)) stop = 1;
    if (!stop && step > iters) {
        llama_note("error: the checkpoint %s is at step %lld, past iters = %lld\n", from, (long long) step, (long long) iters);
        stop = 1;
    }
    const struct ggml_opt_lr_schedule sched = {.type = GGML_OPT_LR_SCHEDULE_WARMUP_COSINE, .warmup = to.warmup, .decay_steps = iters,
                                               .min_lr = to.min_lr};
    for (; !stop && step < end; step++, rows++) {
        float loss, gn, val = 0.0f;
        if (interrupted()) { stop = 2; break; }
        if (!llama_trainer_step(&t, step, &loss, &gn)) { stop = 1; break; }
        const int last = step + 1 == end;
        const int eval = (step + 1) % eval_every == 0 || last;
        if (eval && !llama_trainer_eval(&t, &val)) { stop = 1; break; }
        step_col[rows] = (int) (step + 1);
        loss_col[rows] = loss;
        gn_col[rows] = gn;
        lr_col[rows] = ggml_opt_lr_schedule_lr(&sched, to.lr, step);
        val_col[rows] = eval ? val : NA_REAL;
        if (talk && ((step + 1) % log_every == 0 || last)) {
            REprintf("step %5lld/%lld  loss %.4f  grad-norm %.3f", (long long) step + 1, (long long) iters, (double) loss, (double) gn);
            if (eval) REprintf("  validation loss %.4f", (double) val);
            REprintf("\n");
        }
        if (ckpt && ((save_every > 0 && (step + 1) % save_every == 0) || last) && !llama_trainer_save(&t, ckpt, step + 1)) { stop = 1; break; }
    }
    if (!stop && !llama_lora_save(&l, &r->model, out_path)) stop = 1;
    if (t.model) llama_trainer_free(&t);
    if (l.ctx) llama_lora_free(&l);
    llama_data_free(&d);
    if (stop == 2) Rf_error("ggml_llama_finetune: interrupted after %lld steps", (long long) step);
    if (stop) llama_fail("ggml_llama_finetune");
    for (int i = 0; i < 5; i++) SET_VECTOR_ELT(out, i, Rf_lengthgets(VECTOR_ELT(out, i), (R_xlen_t) rows));
    UNPROTECT(2);
    return out;
}

/* ---- the tiny random model ---- */

SEXP R_ggml_llama_tiny(SEXP path, SEXP arch, SEXP type, SEXP sizes, SEXP tied, SEXP seed) {
    const char * p = path_arg(path, "path");
    const char * a = rg_string(arch, "arch"), * tn = rg_string(type, "type");
    const int tie = rg_bool(tied, "tied");
    const double sd = rg_double(seed, "seed");
    if (!(sd >= 0 && sd <= 9007199254740992.0 && sd == floor(sd))) Rf_error("'seed' must be a whole number in 0 .. 2^53");
    if (strcmp(a, "llama") != 0 && strcmp(a, "qwen2") != 0) Rf_error("'arch' must be \"llama\" or \"qwen2\" (got \"%s\")", a);
    enum ggml_type wt = GGML_TYPE_COUNT;
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char * name = ggml_type_name((enum ggml_type) t);
        if (name && strcasecmp(name, tn) == 0 && ggml_blck_size((enum ggml_type) t) > 0) wt = (enum ggml_type) t;
    }
    if (wt == GGML_TYPE_COUNT) Rf_error("'type' \"%s\" is not a tensor type name (f32, f16, q8_0, q4_k, ...)", tn);
    const char * size_names[] = {"n_embd", "n_ff", "n_layer", "n_head", "n_head_kv", "n_ctx"};
    if (rg_numeric_len(sizes, "sizes") != 6) Rf_error("'sizes' must hold 6 numbers");
    int v[6];
    for (int i = 0; i < 6; i++) {
        const double x = rg_num_at(sizes, i);
        if (!rg_is_int32(x) || x < 1 || x > 65536) Rf_error("'%s' must be a whole number in 1 .. 65536", size_names[i]);
        v[i] = (int) x;
    }
    if (v[2] > LLAMA_MAX_LAYERS) Rf_error("'n_layer' must be at most %d", LLAMA_MAX_LAYERS);
    if (v[0] % v[3] != 0 || v[3] % v[4] != 0 || (v[0] / v[3]) % 2 != 0)
        Rf_error("'n_embd' must be a multiple of 'n_head' with an even head size, and 'n_head' a multiple of 'n_head_kv'");
    const struct llama_tiny_opts o = {.arch = a, .n_embd = v[0], .n_ff = v[1], .n_layer = v[2], .n_head = v[3], .n_head_kv = v[4],
                                      .n_ctx = v[5], .type = wt, .tied = tie, .seed = (uint64_t) sd};
    llama_msg_clear();
    if (!llama_tiny_write(p, &o)) llama_fail("ggml_llama_tiny");
    return R_NilValue;
}

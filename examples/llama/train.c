/* train.c -- fine-tuning through ggml-opt, of LoRA adapters or of the whole
 * model: with LoRA the adapters' A and B are the only parameters (the base
 * weights, of any type, are constants the gradient flows through), in full
 * training every weight is (train_full.c makes them F32); the loss is the mean next-token cross-entropy
 * (over the response tokens only for prompt/response data), and the
 * optimization context does gradient accumulation (opt_period), clipping,
 * AdamW and the warmup + cosine schedule. Batches are a pure
 * function of (seed, split, index), so a resumed run sees the same data. */
#include "llama.h"

#include "rng.h"

#include "ggml-cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool fail(const char * what) {
    fprintf(stderr, "error: %s: %s\n", what, ggml_last_error());
    return false;
}

static struct ggml_opt_optimizer_params adamw_params(void * userdata) {
    const struct llama_trainer * t = userdata;
    struct ggml_opt_optimizer_params p = ggml_opt_get_default_optimizer_params(NULL);
    p.adamw.alpha = t->o.lr;
    p.adamw.beta1 = t->o.beta1;
    p.adamw.beta2 = t->o.beta2;
    p.adamw.eps = t->o.eps;
    p.adamw.wd = t->o.weight_decay;
    p.clip_norm = t->o.clip;
    return p;
}

bool llama_trainer_init(struct llama_trainer * t, const struct llama_model * m, struct llama_lora * lora, const struct llama_data * data,
                        const struct llama_train_opts * o) {
    memset(t, 0, sizeof *t);
    t->model = m; t->lora = lora; t->data = data; t->o = *o;
    const int64_t need = (int64_t) o->n_ctx + 1;
    if (o->n_ctx < 2 || o->n_ctx > m->hp.n_ctx || o->batch < 1 || o->accum < 1) {
        fprintf(stderr, "error: sequences of %d tokens (the model's context is %d), batch %d, accumulation %d\n", o->n_ctx, m->hp.n_ctx, o->batch, o->accum);
        return false;
    }
    if (data->starts) {  /* examples: a sequence starts at one, so each split needs one */
        while (t->n_train_starts < data->n_starts && data->starts[t->n_train_starts] < data->n_train) t->n_train_starts++;
        if (t->n_train_starts == 0 || t->n_train_starts == data->n_starts) {
            fprintf(stderr, "error: too few examples: %lld for training and %lld for validation, each split needs one\n",
                    (long long) t->n_train_starts, (long long) (data->n_starts - t->n_train_starts));
            return false;
        }
    } else if (data->n_train < need || data->n - data->n_train < need) {
        fprintf(stderr, "error: the text is too short: %lld training and %lld validation tokens, each split needs %lld\n",
                (long long) data->n_train, (long long) (data->n - data->n_train), (long long) need);
        return false;
    }
    /* the parameters: A and B of each adapter, or every weight */
    t->params = malloc(sizeof *t->params * (lora ? 2 * LLAMA_N_MAT * (size_t) m->hp.n_layer : LLAMA_MAX_WEIGHTS));
    if (!t->params) { fprintf(stderr, "error: out of memory\n"); return false; }
    if (!lora) t->n_params = llama_model_weights(m, t->params);
    for (int l = 0; lora && l < m->hp.n_layer; l++)
        for (int k = 0; k < LLAMA_N_MAT; k++)
            if (lora->a[l][k]) { t->params[t->n_params++] = lora->a[l][k]; t->params[t->n_params++] = lora->b[l][k]; }
    for (int i = 0; i < t->n_params; i++) {
        if (t->params[i]->type != GGML_TYPE_F32) {
            fprintf(stderr, "error: %s is %s, not F32 (llama_model_make_trainable first)\n", ggml_get_name(t->params[i]), ggml_type_name(t->params[i]->type));
            llama_trainer_free(t);
            return false;
        }
        ggml_set_param(t->params[i]);
    }
    const size_t graph_size = 256 + 1024 * (size_t) m->hp.n_layer;
    t->backend = ggml_backend_cpu_init();
    if (!t->backend) { llama_trainer_free(t); return fail("the CPU backend"); }
    ggml_backend_cpu_set_n_threads(t->backend, o->threads > 0 ? o->threads : ggml_cpu_n_cores());
    t->sched = ggml_backend_sched_new(&t->backend, NULL, 1, graph_size, false, true);
    struct ggml_init_params io_params = {.mem_size = 8 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true};
    struct ggml_init_params compute_params = {.mem_size = ggml_tensor_overhead() * graph_size, .mem_buffer = NULL, .no_alloc = true};
    t->ctx_io = ggml_init(io_params);
    t->ctx_compute = ggml_init(compute_params);
    if (!t->sched || !t->ctx_io || !t->ctx_compute) { llama_trainer_free(t); return fail("ggml_init"); }
    struct ggml_tensor * logits = llama_build(t->ctx_compute, t->ctx_io, NULL, m, lora, NULL, 0, o->n_ctx, o->batch, false, o->grad_checkpoint, &t->in);
    /* a loss mask: F32 labels, zero rows for the targets that do not count
     * (cross-entropy of a zero row is 0, and so is its gradient) */
    t->targets = data->loss_mask ? ggml_new_tensor_2d(t->ctx_io, GGML_TYPE_F32, m->hp.n_vocab, (int64_t) o->n_ctx * o->batch)
                                 : ggml_new_tensor_1d(t->ctx_io, GGML_TYPE_I32, (int64_t) o->n_ctx * o->batch);
    struct ggml_tensor * loss = logits && t->targets ? ggml_cross_entropy_loss(t->ctx_compute, logits, t->targets) : NULL;
    if (!loss) { llama_trainer_free(t); return fail("building the training graph"); }
    ggml_set_input(t->targets);
    ggml_set_loss(loss);
    t->io_buffer = ggml_backend_alloc_ctx_tensors(t->ctx_io, t->backend);
    if (!t->io_buffer) { llama_trainer_free(t); return fail("allocating the inputs"); }
    llama_batch_fill(&t->in, 0);
    struct ggml_opt_params p = ggml_opt_default_params(t->sched, GGML_OPT_LOSS_TYPE_MEAN);
    p.ctx_compute = t->ctx_compute;
    p.inputs = t->in.tokens;
    p.outputs = logits;
    p.loss = loss;
    p.labels = t->targets;
    p.opt_period = o->accum;
    p.get_opt_pars = adamw_params;
    p.get_opt_pars_ud = t;
    p.lr_schedule = (struct ggml_opt_lr_schedule) {.type = GGML_OPT_LR_SCHEDULE_WARMUP_COSINE, .warmup = o->warmup, .decay_steps = o->iters, .min_lr = o->min_lr};
    t->opt = ggml_opt_init(p);
    if (!t->opt) { llama_trainer_free(t); return fail("building the training graphs"); }
    return true;
}

void llama_trainer_free(struct llama_trainer * t) {
    if (t->opt) ggml_opt_free(t->opt);
    if (t->io_buffer) ggml_backend_buffer_free(t->io_buffer);
    ggml_free(t->ctx_compute);
    ggml_free(t->ctx_io);
    if (t->sched) ggml_backend_sched_free(t->sched);
    if (t->backend) ggml_backend_free(t->backend);
    free(t->params);
    memset(t, 0, sizeof *t);
}

/* The masked form of set_batch: each window starts at an example drawn
 * from the split; past the split's end it is padded (weight 0). The labels
 * are one-hot rows scaled by R / count (R = T*B rows, count of them with
 * weight 1): the op's mean over R rows is then the mean over the counted
 * ones, and the others' rows (zero) add nothing to the loss or gradient. */
static void set_masked_batch(const struct llama_trainer * t, int split, uint64_t s) {
    const struct llama_data * d = t->data;
    const int T = t->o.n_ctx, B = t->o.batch;
    const int64_t V = t->targets->ne[0], hi = split ? d->n : d->n_train;
    const int64_t k_lo = split ? t->n_train_starts : 0, k_hi = split ? d->n_starts : t->n_train_starts;
    int32_t * tok = t->in.tokens->data;
    float * lab = t->targets->data;
    memset(lab, 0, ggml_nbytes(t->targets));
    /* pass 0 counts the targets that count, pass 1 writes them with the weight
     * (both draw the same windows from the same state) */
    int64_t count = 0;
    float w = 0.0f;
    for (int pass = 0; pass < 2; pass++) {
        uint64_t r = s;
        for (int b = 0; b < B; b++) {
            const int64_t start = d->starts[k_lo + (int64_t) (rng_next(&r) % (uint64_t) (k_hi - k_lo))];
            for (int i = 0; i < T; i++) {
                const int64_t p = start + i, q = p + 1;
                const bool counted = q < hi && d->loss_mask[q];
                if (pass == 0) { count += counted; continue; }
                tok[(size_t) b * T + i] = d->tokens[p < hi ? p : hi - 1];
                if (counted) lab[((size_t) b * T + i) * (size_t) V + (size_t) d->tokens[q]] = w;
            }
        }
        w = count ? (float) ((double) T * B / (double) count) : 0.0f;  /* none: loss and gradient 0 */
    }
}

/* Batch `index` of a split (0 training, 1 validation): B windows of T + 1
 * tokens at offsets drawn from (seed, split, index) alone. */
static void set_batch(const struct llama_trainer * t, int split, int64_t index) {
    const int T = t->o.n_ctx;
    const int64_t lo = split ? t->data->n_train : 0, hi = split ? t->data->n : t->data->n_train;
    uint64_t s = rng_mix(t->o.seed ^ rng_mix((uint64_t) split * 0x9e3779b97f4a7c15ull + (uint64_t) index));
    if (t->data->loss_mask) { set_masked_batch(t, split, s); return; }
    int32_t * tok = t->in.tokens->data, * tgt = t->targets->data;
    for (int b = 0; b < t->o.batch; b++) {
        const int64_t start = lo + (int64_t) (rng_next(&s) % (uint64_t) (hi - lo - T));
        memcpy(tok + (size_t) b * T, t->data->tokens + start, (size_t) T * sizeof *tok);
        memcpy(tgt + (size_t) b * T, t->data->tokens + start + 1, (size_t) T * sizeof *tgt);
    }
}

static enum ggml_status run(struct llama_trainer * t, bool backward, float * loss) {
    enum ggml_status st = ggml_opt_alloc(t->opt, backward);
    if (st == GGML_STATUS_SUCCESS) {
        st = ggml_opt_eval(t->opt, NULL);
        /* ggml-opt divides a mean loss by opt_period (the accumulated gradient
         * is then the logical batch's): undone for the loss reported */
        *loss = (float) ((double) *(const float *) ggml_opt_loss(t->opt)->data * t->o.accum);
    }
    return st;
}

bool llama_trainer_step(struct llama_trainer * t, int64_t step, float * loss, float * grad_norm) {
    ggml_opt_set_steps(t->opt, step);
    double sum = 0.0;
    for (int a = 0; a < t->o.accum; a++) {
        set_batch(t, 0, step * t->o.accum + a);
        float l = 0.0f;
        const enum ggml_status st = run(t, true, &l);
        if (st == GGML_STATUS_ABORTED) {
            fprintf(stderr, "error: step %lld: the loss (%g) or a gradient is not finite; the adapters were not updated\n", (long long) step, (double) l);
            return false;
        }
        if (st != GGML_STATUS_SUCCESS) return fail("training step");
        sum += l;
    }
    *loss = (float) (sum / t->o.accum);
    *grad_norm = (float) ggml_opt_last_grad_norm(t->opt);
    return true;
}

bool llama_trainer_eval(struct llama_trainer * t, float * loss) {
    double sum = 0.0;
    const int n = t->o.eval_batches > 0 ? t->o.eval_batches : 1;
    for (int b = 0; b < n; b++) {
        set_batch(t, 1, b);
        float l;
        if (run(t, false, &l) != GGML_STATUS_SUCCESS) return fail("evaluation");
        sum += l;
    }
    *loss = (float) (sum / n);
    return true;
}

/* ---- checkpoints: the parameters (the adapter file, or the model's file
 * with F32 weights) plus adam_m.<name>, adam_v.<name> and training.step ---- */

static struct gguf_context * checkpoint_base(const struct llama_trainer * t) {
    if (!t->lora) return llama_model_gguf_f32(t->model);  /* holds the weights */
    struct gguf_context * g = gguf_init_empty();
    if (!g) { fail("checkpoint"); return NULL; }
    gguf_set_val_str(g, "general.architecture", t->model->hp.arch);
    gguf_set_val_str(g, "general.type", "adapter");
    gguf_set_val_str(g, "adapter.type", "lora");
    gguf_set_val_f32(g, "adapter.lora.alpha", t->lora->alpha);
    for (int i = 0; i < t->n_params; i++) gguf_add_tensor(g, t->params[i]);
    return g;
}

bool llama_trainer_save(const struct llama_trainer * t, const char * path, int64_t step) {
    struct gguf_context * g = checkpoint_base(t);
    if (!g) return false;
    gguf_set_val_u64(g, "training.step", (uint64_t) step);
    /* the moments are renamed in a context of their own (the optimizer's keep their names) */
    struct ggml_init_params ip = {.mem_size = 2 * (size_t) t->n_params * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true};
    struct ggml_context * names = ggml_init(ip);
    bool ok = names != NULL;
    for (int i = 0; ok && i < t->n_params; i++) {
        struct ggml_tensor * mv[2] = {ggml_opt_grad_m(t->opt, t->params[i]), ggml_opt_grad_v(t->opt, t->params[i])};
        for (int j = 0; j < 2 && ok; j++) {
            struct ggml_tensor * alias = mv[j] ? ggml_view_tensor(names, mv[j]) : NULL;
            if (!alias) { ok = false; break; }
            ggml_format_name(alias, "adam_%c.%s", j ? 'v' : 'm', ggml_get_name(t->params[i]));
            gguf_add_tensor(g, alias);
        }
    }
    if (!ok) fprintf(stderr, "error: the optimizer has no moments for the parameters\n");
    ok = ok && llama_gguf_write(g, path);
    gguf_free(g);
    ggml_free(names);
    return ok;
}

/* dst = the checkpoint's tensor `name` (F32, dst's shape); false with a message */
static bool restore(const struct ggml_context * data, const char * path, const char * name, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = ggml_get_tensor((struct ggml_context *) data, name);
    if (!src || !dst || src->type != GGML_TYPE_F32 || !ggml_are_same_shape(src, dst)) {
        fprintf(stderr, "error: %s: %s is missing or shaped otherwise\n", path, name);
        return false;
    }
    memcpy(dst->data, src->data, ggml_nbytes(src));
    return true;
}

bool llama_trainer_resume(struct llama_trainer * t, const char * path, int64_t * step) {
    struct ggml_context * data = NULL;
    struct gguf_init_params ip = {.no_alloc = false, .ctx = &data};
    struct gguf_context * g = gguf_init_from_file(path, ip);
    if (!g) { fprintf(stderr, "error: cannot load %s: %s\n", path, ggml_last_error()); return false; }
    const int64_t sk = gguf_find_key(g, "training.step");
    bool ok = sk >= 0 && gguf_get_kv_type(g, sk) == GGUF_TYPE_UINT64;
    if (!ok) fprintf(stderr, "error: %s is not a training checkpoint (no training.step)\n", path);
    for (int i = 0; ok && i < t->n_params; i++) {
        char name[GGML_MAX_NAME + 8];
        ok = restore(data, path, ggml_get_name(t->params[i]), t->params[i]);
        for (int j = 0; j < 2 && ok; j++) {
            snprintf(name, sizeof name, "adam_%c.%s", j ? 'v' : 'm', ggml_get_name(t->params[i]));
            ok = restore(data, path, name, j ? ggml_opt_grad_v(t->opt, t->params[i]) : ggml_opt_grad_m(t->opt, t->params[i]));
        }
    }
    if (ok) {
        *step = (int64_t) gguf_get_val_u64(g, sk);
        ggml_opt_set_steps(t->opt, *step);
    }
    gguf_free(g);
    ggml_free(data);
    return ok;
}

/* llama.h -- a llama-family model (llama, qwen2) read from a GGUF with
 * llama.cpp's keys and tensor names, run with a KV cache, and fine-tuned with
 * LoRA adapters in llama.cpp's adapter format. Every function that can fail
 * prints "error: ..." to stderr and returns false / NULL. */
#ifndef LLAMA_H
#define LLAMA_H

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-opt.h"
#include "gguf.h"

#include <stdbool.h>
#include <stdint.h>

#define LLAMA_MAX_LAYERS 256

/* ---- model (model.c) ---- */

struct llama_hparams {
    char arch[16];                  /* "llama" or "qwen2" */
    int n_vocab, n_ctx, n_embd, n_ff, n_layer, n_head, n_head_kv, n_rot;
    float rope_base, rms_eps;
    int rope_mode;                  /* GGML_ROPE_TYPE_NORMAL for llama, _NEOX for qwen2 (llama.cpp's choice) */
};

/* The linear maps of a block, in llama.cpp's tensor names (llama_mat_name). */
enum llama_mat { LLAMA_Q, LLAMA_K, LLAMA_V, LLAMA_O, LLAMA_GATE, LLAMA_UP, LLAMA_DOWN, LLAMA_N_MAT };
const char * llama_mat_name(enum llama_mat m);  /* "attn_q", ..., "ffn_down" */

struct llama_layer {
    struct ggml_tensor * attn_norm, * ffn_norm;  /* [n_embd] */
    struct ggml_tensor * w[LLAMA_N_MAT];         /* [n_in, n_out], any type mul_mat takes */
    struct ggml_tensor * bq, * bk, * bv;         /* qwen2's biases, NULL for llama */
};

struct llama_model {
    struct llama_hparams hp;
    struct gguf_context * gguf;     /* the file's metadata (the tokenizer reads it) */
    struct ggml_context * ctx;      /* the weights */
    struct ggml_context * ctx_f32;  /* F32 copies of F16/BF16 weights being trained (llama_model_make_trainable), else NULL */
    struct ggml_tensor * tok_embd;  /* [n_embd, n_vocab] */
    struct ggml_tensor * output_norm;
    struct ggml_tensor * output;    /* [n_embd, n_vocab]; tok_embd when the file has none (tied) */
    struct llama_layer layers[LLAMA_MAX_LAYERS];
};

bool llama_model_load(struct llama_model * m, const char * path);
void llama_model_free(struct llama_model * m);

/* ---- full training of the weights (train_full.c) ---- */

#define LLAMA_MAX_WEIGHTS (3 + 12 * LLAMA_MAX_LAYERS)
/* The model's weights (token_embd, output unless tied, the norms, matrices
 * and biases), each once; their count (at most LLAMA_MAX_WEIGHTS). */
int llama_model_weights(const struct llama_model * m, struct ggml_tensor ** out);
/* Makes every weight an F32 tensor that AdamW can update: F32 ones in place,
 * F16/BF16 ones as F32 copies (ctx_f32) the model's pointers move to. False,
 * naming the tensor and its type, for a quantized weight. */
bool llama_model_make_trainable(struct llama_model * m);
/* Writes the model's file with the trained weights, each in its file's type
 * (F16/BF16 rounded from the F32 copies); keys and other tensors unchanged. */
bool llama_model_save_trained(const struct llama_model * m, const char * path);
/* The file's keys and tensors with the trained weights as F32 (a checkpoint's base). */
struct gguf_context * llama_model_gguf_f32(const struct llama_model * m);

/* ---- LoRA adapters (lora.c) ---- */

/* W x + (alpha/r) B (A x) on the chosen matrices: A [n_in, r], B [r, n_out]
 * (llama.cpp's lora_a / lora_b shapes), F32. */
struct llama_lora {
    int rank;
    float alpha;
    unsigned mats;                  /* bit m set: matrix m of every layer has an adapter */
    struct ggml_context * ctx;
    struct ggml_tensor * a[LLAMA_MAX_LAYERS][LLAMA_N_MAT], * b[LLAMA_MAX_LAYERS][LLAMA_N_MAT];
};

#define LLAMA_LORA_DEFAULT ((1u << LLAMA_Q) | (1u << LLAMA_V))
#define LLAMA_LORA_ALL     ((1u << LLAMA_N_MAT) - 1u)

/* New adapters: A ~ N(0, 1/sqrt(r)) from seed, B = 0 (the model is unchanged at first). */
bool llama_lora_init(struct llama_lora * l, const struct llama_model * m, int rank, float alpha, unsigned mats, uint64_t seed);
void llama_lora_free(struct llama_lora * l);
/* An adapter GGUF in llama.cpp's format: general.type = adapter, adapter.type = lora,
 * adapter.lora.alpha, tensors blk.N.<mat>.weight.lora_a / .lora_b. */
bool llama_lora_save(const struct llama_lora * l, const struct llama_model * m, const char * path);
bool llama_lora_load(struct llama_lora * l, const struct llama_model * m, const char * path);  /* also a training checkpoint's */

/* ---- writing a model GGUF (model_write.c) ---- */

/* The tensor to write in place of the file's tensor t (t itself: unchanged;
 * a new one made in ctx; NULL: failed, with a message). */
typedef struct ggml_tensor * (*llama_replace_fn)(void * ud, struct ggml_context * ctx, struct ggml_tensor * t);
/* A GGUF context with every key of m's file and its tensors in the file's
 * order, each replaced as replace says (ctx passed on to it); the tensors'
 * data must live until it is written. NULL on failure. */
struct gguf_context * llama_model_gguf(const struct llama_model * m, struct ggml_context * ctx, llama_replace_fn replace, void * ud);
/* llama_model_gguf written to path, with a context that has room for a
 * replacement of every tensor. */
bool llama_model_write(const struct llama_model * m, const char * path, llama_replace_fn replace, void * ud);
/* Writes g to path; on failure a message and no file left behind. */
bool llama_gguf_write(struct gguf_context * g, const char * path);
/* Whether floats can be stored in this type (F32, F16, BF16, a quantized type
 * with a quantizer that needs no importance matrix); if not, a message naming
 * the tensor. */
bool llama_type_storable(enum ggml_type type, const char * name);
/* A new tensor in ctx named and shaped as like, of type `type`, holding x
 * (ggml_nelements(like) floats) converted: rounded or re-quantized. */
struct ggml_tensor * llama_tensor_from_f32(struct ggml_context * ctx, const struct ggml_tensor * like, enum ggml_type type, const float * x);
/* t's values as floats (dequantized), ggml_nelements(t) of them. */
bool llama_tensor_to_f32(const struct ggml_tensor * t, float * out);

/* ---- the merged model (lora_merge.c) ---- */

/* Whether every matrix l adapts can be stored back in its type (a message if not). */
bool llama_lora_merge_check(const struct llama_model * m, const struct llama_lora * l);
/* Writes m's file with W' = W + (alpha/r) B A for each adapted matrix, in W's
 * type (quantized types re-quantized), everything else copied unchanged. */
bool llama_lora_merge(const struct llama_model * m, const struct llama_lora * l, const char * path);

/* ---- the forward graph (graph.c) ---- */

struct llama_kv;

/* The inputs of one forward pass over B sequences of T tokens. */
struct llama_batch {
    struct ggml_tensor * tokens;    /* I32 [T*B] */
    struct ggml_tensor * pos;       /* I32 [T]: positions n_past .. n_past+T-1 */
    struct ggml_tensor * mask;      /* F32 [n_kv, T]: causal, filled by llama_batch_fill */
};

/* Records the forward pass in ctx: logits [V, T*B] (only the last token's,
 * [V, 1], when last_only). With kv (B = 1) the keys and values of the T new
 * tokens are written into the cache at n_past (the copies are expanded into
 * gf first) and attention reads the cache's n_past + T rows. lora may be NULL.
 * checkpoint: each block's input (and the last block's output) is marked with
 * ggml_set_checkpoint, so that a backward pass recomputes the activations
 * inside the blocks instead of keeping them (gradient checkpointing). */
struct ggml_tensor * llama_build(struct ggml_context * ctx, struct ggml_context * ctx_io, struct ggml_cgraph * gf,
                                 const struct llama_model * m, const struct llama_lora * lora, struct llama_kv * kv,
                                 int n_past, int T, int B, bool last_only, bool checkpoint, struct llama_batch * in);
/* Positions and the causal mask (query t sees keys 0 .. n_past + t). */
void llama_batch_fill(const struct llama_batch * in, int n_past);

/* ---- inference with a KV cache (kv_cache.c) ---- */

struct llama_kv {
    struct ggml_context * ctx;
    struct ggml_tensor * k[LLAMA_MAX_LAYERS], * v[LLAMA_MAX_LAYERS];  /* F32 [head_dim * n_head_kv, n_ctx] */
    int n_ctx, n_past;
};

struct llama_session {
    const struct llama_model * model;
    const struct llama_lora * lora;
    struct llama_kv kv;
    ggml_backend_t backend;         /* the CPU, with the thread count */
    ggml_gallocr_t galloc;          /* the memory of each step's intermediate tensors */
    float * logits;                 /* [n_logits][n_vocab] of the last llama_decode */
    int n_logits;
};

bool llama_session_init(struct llama_session * s, const struct llama_model * m, const struct llama_lora * lora, int n_ctx, int threads);
void llama_session_free(struct llama_session * s);
/* Appends n tokens to the cache and computes their logits (all of them, or
 * the last one's); the prefix already in the cache is not recomputed. */
bool llama_decode(struct llama_session * s, const int32_t * tokens, int n, bool all_logits);

/* ---- sampling (sample.c) ---- */

struct llama_sampler {
    float temperature;              /* 0: greedy */
    int top_k;                      /* 0: all */
    float top_p;                    /* 1: all */
    uint64_t state;                 /* the random generator (seed) */
};

int llama_sample(struct llama_sampler * s, const float * logits, int n_vocab);

/* ---- the tiny test model (tiny.c) ---- */

struct llama_tiny_opts {
    const char * arch;              /* "llama" or "qwen2" */
    int n_embd, n_ff, n_layer, n_head, n_head_kv, n_ctx;
    enum ggml_type type;            /* of the block matrices and token_embd: F32, F16, Q8_0, Q4_K, ... */
    bool tied;                      /* no output.weight */
    uint64_t seed;
};

/* Writes a GGUF with random weights, llama.cpp's keys, tensor names and
 * shapes, and a small SentencePiece vocabulary (bytes, a few merges). */
bool llama_tiny_write(const char * path, const struct llama_tiny_opts * o);

/* ---- the tokenizer from the file (tokenizer.c) ---- */

/* tokenizer.ggml.model "llama": SentencePiece BPE (merge the adjacent pair
 * whose joined text is the highest-scored token, leftmost first; spaces as
 * U+2581, a space prefix; characters outside the vocabulary as <0xXX> byte
 * tokens); "gpt2": byte-level BPE with tokenizer.ggml.merges after the
 * pre-tokenizer tokenizer.ggml.pre names (pretok.c: llama.cpp's types,
 * llama3, qwen2, deepseek-llm, ...). As in llama.cpp, control, unknown and
 * user-defined tokens are cut out of the text first, the longest text first
 * (control and unknown ones only when parse_special is set). */
struct llama_pre;
struct llama_vocab {
    int n;
    const char ** text;             /* the file's strings (owned by the model's gguf context) */
    float * scores;
    int32_t * types;                /* SentencePiece's: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte */
    int bos, eos, unk;
    bool add_bos, add_eos;          /* tokenizer.ggml.add_bos_token / add_eos_token, or the type's default */
    bool add_space_prefix;
    bool spm_words;                 /* no token has a character then U+2581: SentencePiece merges never cross a word start */
    int byte_id[256];               /* the id of <0xXX>, -1 if absent */
    int32_t * hash;                 /* open addressing: text -> id (-1 empty) */
    int32_t * special;              /* the control, unknown and user-defined tokens, the longest text first */
    int n_special;
    bool bpe;                       /* "gpt2": byte-level BPE by merge rank */
    const struct llama_pre * pre;   /* its pre-tokenizer */
    bool ignore_merges;             /* a pre-tokenized piece that is a token is that token (llama3, tekken) */
    const char ** merges;           /* "a b", by rank */
    int n_merges;
    int32_t * merge_hash;           /* (a, b) -> rank (-1 empty) */
    uint32_t merge_mask;
    uint32_t hash_mask;
};

bool llama_vocab_load(struct llama_vocab * v, const struct llama_model * m);
void llama_vocab_free(struct llama_vocab * v);
/* The tokens of text[0..len); add_special: BOS first and EOS last when the
 * vocabulary adds them (add_bos, add_eos). The count, or -1 with a message. *out is malloc'ed. */
int llama_tokenize(const struct llama_vocab * v, const char * text, size_t len, bool add_special, bool parse_special, int32_t ** out);
/* The pre-tokenizer tokenizer.ggml.pre = name names (pretok.c), or NULL. */
const struct llama_pre * llama_pre_find(const char * name);
/* Splits text[0..len) as that pre-tokenizer does: the end offsets of the
 * pieces (ends holds len entries); their count, (size_t) -1 out of memory. */
size_t llama_pre_split(const struct llama_pre * pre, const char * text, size_t len, size_t * ends);
/* The bytes token id stands for (control tokens: none); their count, at most cap. */
int llama_token_to_piece(const struct llama_vocab * v, int32_t id, char * buf, int cap);

/* ---- LoRA fine-tuning (train.c) ---- */

/* Tokens packed end to end; sequences are drawn from [0, n_train) for
 * training and [n_train, n) for validation. Prompt/response data (jsonl.c)
 * also has a loss mask and the examples' first tokens: a sequence then
 * begins at an example, runs on into the next ones (padding, weighted 0,
 * past its split's end), and the loss is the mean over the targets whose
 * loss_mask is 1 only. */
struct llama_data {
    int32_t * tokens;
    int64_t n, n_train;
    uint8_t * loss_mask;            /* NULL: every target counts; else [n], 1: the token is a loss target */
    int64_t * starts;               /* NULL, or the first token of each example, ascending */
    int64_t n_starts;
};

/* ---- prompt/response data (jsonl.c) ---- */

struct llama_pair {
    char * prompt, * response;      /* UTF-8, NUL-terminated, malloc'ed */
    size_t prompt_len, response_len;
};

/* One JSONL line: an object with string values only, "prompt" and
 * "response" required (other string fields are read and ignored). False:
 * why, with the column, in err. */
bool llama_jsonl_parse_line(const char * line, size_t len, struct llama_pair * p, char * err, size_t err_cap);
void llama_pair_free(struct llama_pair * p);
/* Every non-blank line of text: BOS (when the vocabulary adds one) + prompt
 * + response (tokenized without a space prefix of its own) + EOS, packed;
 * loss_mask is 1 on the response's tokens and the EOS. False: a message
 * naming path:line. n_train is left 0 (llama_data_split). */
bool llama_jsonl_data(const struct llama_vocab * v, const char * path, const char * text, size_t len, struct llama_data * d);
/* n_train: the first (1 - val_split) of the tokens, rounded up to the next
 * example's start when the data has examples. */
void llama_data_split(struct llama_data * d, float val_split);
void llama_data_free(struct llama_data * d);

struct llama_train_opts {
    int batch, n_ctx;               /* B sequences of T tokens per micro-batch */
    int accum;                      /* micro-batches per optimizer step (gradient accumulation) */
    int64_t iters;                  /* optimizer steps */
    float lr, min_lr;               /* peak and final learning rate */
    int64_t warmup;                 /* linear warmup steps, then cosine decay to min_lr at iters */
    float beta1, beta2, eps, weight_decay, clip;
    int threads;
    uint64_t seed;                  /* of the batches */
    int eval_batches;               /* validation batches per evaluation */
    bool grad_checkpoint;           /* recompute each block's activations in the backward pass (memory O(layers)) */
};

struct llama_trainer {
    const struct llama_model * model;
    struct llama_lora * lora;       /* its A and B are the parameters, the base frozen; NULL: every weight is (full training) */
    struct ggml_tensor ** params;   /* the parameters: the adapters' A and B, or the model's weights */
    int n_params;
    const struct llama_data * data;
    struct llama_train_opts o;
    ggml_backend_t backend;
    ggml_backend_sched_t sched;
    struct ggml_context * ctx_io, * ctx_compute;
    ggml_backend_buffer_t io_buffer;
    struct llama_batch in;
    struct ggml_tensor * targets;   /* I32 [T*B]; with a loss mask F32 [n_vocab, T*B]: one-hot rows scaled by T*B / (targets that count), zero rows for the others */
    int64_t n_train_starts;         /* with examples: how many start in the training split */
    ggml_opt_context_t opt;
};

/* lora NULL: full training, m made trainable (llama_model_make_trainable) first. */
bool llama_trainer_init(struct llama_trainer * t, const struct llama_model * m, struct llama_lora * lora, const struct llama_data * data,
                        const struct llama_train_opts * o);
void llama_trainer_free(struct llama_trainer * t);
/* Optimizer step `step` (from 0) over o.accum micro-batches: the mean
 * training loss before the update and the gradient norm before clipping. */
bool llama_trainer_step(struct llama_trainer * t, int64_t step, float * loss, float * grad_norm);
/* Mean validation loss over the fixed batches 0 .. eval_batches-1. */
bool llama_trainer_eval(struct llama_trainer * t, float * loss);
/* A checkpoint: the parameters (LoRA: an adapter GGUF; full: the model's
 * file with F32 weights), their AdamW moments and the step count, so that
 * training resumes bitwise. */
bool llama_trainer_save(const struct llama_trainer * t, const char * path, int64_t step);
/* Loads a checkpoint's parameters, moments and step count into the trainer
 * (after llama_trainer_init; the adapters come from llama_lora_load of the
 * same file, before it). */
bool llama_trainer_resume(struct llama_trainer * t, const char * path, int64_t * step);

#endif

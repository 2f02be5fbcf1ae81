/* dist.c -- dist.h over ggml-mpi.h, or a single process without MPI. */
#include "dist.h"

#include <stdio.h>
#include <string.h>

#ifdef GGMLR_MPI
#include "ggml-mpi.h"

static int g_rank = 0, g_size = 1;

bool dist_init(int * argc, char *** argv) {
    if (MPI_Init(argc, argv) != MPI_SUCCESS) { fprintf(stderr, "error: MPI_Init failed\n"); return false; }
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (g_rank != 0 && !freopen("/dev/null", "w", stdout)) fprintf(stderr, "rank %d: cannot silence stdout\n", g_rank);
    return true;
}

int dist_finish(int status) {
    if (status != 0 && g_size > 1) {
        fprintf(stderr, "rank %d: stopping the job (exit status %d)\n", g_rank, status);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, status);
    }
    MPI_Finalize();
    return status;
}

int dist_rank(void) { return g_rank; }
int dist_size(void) { return g_size; }

static bool mpi_ok(enum ggml_status st, const char * what) {
    if (st != GGML_STATUS_SUCCESS) fprintf(stderr, "error: rank %d: %s: %s\n", g_rank, what, ggml_last_error());
    return st == GGML_STATUS_SUCCESS;
}

bool dist_load(struct gpt_model * m, const char * path, unsigned char * vocab, int64_t * step) {
    if (g_size == 1) return gpt_load(m, path, vocab, step);
    /* rank 0 reads the file (the other nodes need not have it) */
    struct { int32_t ok, cfg[6]; int64_t step; unsigned char vocab[256]; } head;
    memset(&head, 0, sizeof head);
    if (g_rank == 0 && gpt_load(m, path, vocab, step)) {
        const struct gpt_config * c = &m->cfg;
        const int32_t cfg[6] = {c->n_vocab, c->n_ctx, c->n_embd, c->n_head, c->n_kv_head, c->n_layer};
        head.ok = 1;
        memcpy(head.cfg, cfg, sizeof cfg);
        head.step = *step;
        memcpy(head.vocab, vocab, 256);
    }
    if (!mpi_ok(ggml_mpi_bcast_bytes(MPI_COMM_WORLD, &head, sizeof head), "sharing the checkpoint")) return false;
    if (!head.ok) {
        if (g_rank != 0) fprintf(stderr, "error: rank %d: rank 0 could not load %s\n", g_rank, path);
        return false;
    }
    if (g_rank == 0) return true;
    const struct gpt_config cfg = {head.cfg[0], head.cfg[1], head.cfg[2], head.cfg[3], head.cfg[4], head.cfg[5]};
    memcpy(vocab, head.vocab, 256);
    *step = head.step;
    return gpt_model_init(m, &cfg, 0);  /* the values come with dist_attach */
}

/* FNV-1a */
static uint64_t fnv(uint64_t h, const void * p, size_t n) {
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *) p)[i]) * 0x100000001b3ull;
    return h;
}
#define FNV0 0xcbf29ce484222325ull
#define HASH(h, x) ((h) = fnv((h), &(x), sizeof(x)))

bool dist_check(const struct gpt_config * cfg, const struct train_opts * o, const struct corpus * data, int64_t eval_interval) {
    if (g_size == 1) return true;
    uint64_t h[4] = {FNV0, FNV0, FNV0, FNV0};
    HASH(h[0], cfg->n_vocab); HASH(h[0], cfg->n_ctx); HASH(h[0], cfg->n_embd);
    HASH(h[0], cfg->n_head); HASH(h[0], cfg->n_kv_head); HASH(h[0], cfg->n_layer);
    HASH(h[1], data->n_vocab);
    h[1] = fnv(h[1], data->vocab, (size_t) data->n_vocab);
    HASH(h[2], data->n); HASH(h[2], data->n_train);
    h[2] = fnv(h[2], data->ids, (size_t) data->n * sizeof *data->ids);
    HASH(h[3], o->batch); HASH(h[3], o->n_ctx); HASH(h[3], o->iters); HASH(h[3], o->lr); HASH(h[3], o->min_lr);
    HASH(h[3], o->warmup); HASH(h[3], o->decay_iters); HASH(h[3], o->beta1); HASH(h[3], o->beta2); HASH(h[3], o->eps);
    HASH(h[3], o->weight_decay); HASH(h[3], o->clip); HASH(h[3], o->seed); HASH(h[3], o->eval_batches);
    HASH(h[3], o->fused); HASH(h[3], o->prec); HASH(h[3], eval_interval);
    static const char * const what[4] = {
        "the model configuration (--layers --heads --kv-heads --embd --ctx, or the checkpoint's)",
        "the vocabulary of the training text",
        "the training text (--data: every node needs the same file)",
        ("the training options (--batch --iters --lr --min-lr --warmup --decay-iters --beta1 --beta2 "
         "--weight-decay --clip --seed --eval-batches --eval-interval --attn --precision)"),
    };
    return mpi_ok(ggml_mpi_check_same(MPI_COMM_WORLD, h, what, 4), "the ranks were started differently");
}

bool dist_attach(struct trainer * t) {
    t->rank = g_rank;
    t->ranks = g_size;
    return g_size == 1 || mpi_ok(ggml_opt_set_mpi_comm(t->opt, MPI_COMM_WORLD), "sharing rank 0's parameters and moments");
}

#else  /* a single process */

bool dist_init(int * argc, char *** argv) { (void) argc; (void) argv; return true; }
int dist_finish(int status) { return status; }
int dist_rank(void) { return 0; }
int dist_size(void) { return 1; }
bool dist_load(struct gpt_model * m, const char * path, unsigned char * vocab, int64_t * step) { return gpt_load(m, path, vocab, step); }
bool dist_check(const struct gpt_config * cfg, const struct train_opts * o, const struct corpus * data, int64_t eval_interval) {
    (void) cfg; (void) o; (void) data; (void) eval_interval;
    return true;
}
bool dist_attach(struct trainer * t) { (void) t; return true; }

#endif

/* test_mpi_opt.c -- data-parallel ggml_opt over MPI (run with mpirun -np 2+):
 * N ranks with batches of n train exactly as one process with batches of N*n
 * (losses, predictions and parameters to 1e-5: cross-entropy with AdamW,
 * clipping and gradient accumulation; mean squared error and SUM with SGD,
 * where the 1/N scaling of the gradients shows);
 * the parameters are rank 0's after ggml_opt_set_mpi_comm and stay bitwise
 * the same on every rank; a second run is bitwise the first; a model that
 * differs across ranks is refused on every rank; a NaN on one rank skips the
 * step on all; the building blocks against hand-computed sums. */
#include "test_common.h"

#include "ggml-mpi.h"
#include "ggml-opt.h"

#include <stdlib.h>
#include <string.h>

enum { NIN = 2, NCLASS = 3, ND = 48, NEPOCH = 3 };

static int rank, size;

/* ---- an MLP: outputs [3, n] = W2 gelu(W1 x + b1) + b2 ---- */
struct mlp {
    struct ggml_context * ctx_static, * ctx_compute;
    ggml_backend_buffer_t buf;
    struct ggml_tensor * W1, * b1, * W2, * b2, * x, * out;
    struct ggml_tensor * params[4];
};

static bool mlp_init(struct mlp * m, ggml_backend_t be, int hidden, int n, uint64_t seed) {
    memset(m, 0, sizeof *m);
    struct ggml_init_params ps = {8 * ggml_tensor_overhead(), NULL, true}, pc = {16 * ggml_tensor_overhead(), NULL, true};
    m->ctx_static = ggml_init(ps);
    m->ctx_compute = ggml_init(pc);
    if (!m->ctx_static || !m->ctx_compute) return false;
    m->W1 = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, NIN, hidden);
    m->b1 = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, hidden, 1);
    m->W2 = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, hidden, NCLASS);
    m->b2 = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, NCLASS, 1);
    m->x = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, NIN, n);
    struct ggml_tensor * ps4[4] = {m->W1, m->b1, m->W2, m->b2};
    for (int i = 0; i < 4; i++) { m->params[i] = ps4[i]; ggml_set_param(ps4[i]); }
    m->buf = ggml_backend_alloc_ctx_tensors(m->ctx_static, be);
    if (!m->buf) return false;
    tc_seed(seed);
    for (int i = 0; i < 4; i++) tc_fill_uniform(m->params[i], -0.8, 0.8);
    struct ggml_context * c = m->ctx_compute;
    m->out = ggml_add(c, ggml_mul_mat(c, m->W2, ggml_gelu(c, ggml_add(c, ggml_mul_mat(c, m->W1, m->x), m->b1))), m->b2);
    return m->out != NULL;
}

static void mlp_free(struct mlp * m) {
    ggml_backend_buffer_free(m->buf);
    ggml_free(m->ctx_compute);
    ggml_free(m->ctx_static);
}

/* three Gaussian blobs, one-hot labels (none for a SUM loss); the same on every rank */
static ggml_opt_dataset_t blobs(bool labels) {
    static const float centre[3][2] = {{-1.0f, 0.0f}, {1.0f, 0.8f}, {0.5f, -1.2f}};
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, NIN, labels ? NCLASS : 0, ND, 1);
    if (!ds) return NULL;
    float * x = ggml_opt_dataset_data(ds)->data, * y = labels ? ggml_opt_dataset_labels(ds)->data : NULL;
    tc_seed(77);
    for (int j = 0; j < ND; j++) {
        const int c = j % 3;
        x[2 * j] = centre[c][0] + (float) tc_uniform(-0.6, 0.6);
        x[2 * j + 1] = centre[c][1] + (float) tc_uniform(-0.6, 0.6);
        for (int k = 0; k < 3 && y; k++) y[3 * j + k] = k == c;
    }
    return ds;
}

struct config {
    const char * name;
    enum ggml_opt_loss_type loss;
    enum ggml_opt_optimizer_type optimizer;
    int opt_period;
    float clip_norm;
};

struct run {
    double loss[NEPOCH], acc[NEPOCH];
    int32_t pred[NEPOCH][ND];
    float * params;  /* the parameters after training, concatenated */
    size_t n_params;
};

static ggml_opt_context_t opt_for(ggml_backend_sched_t sched, struct mlp * m, const struct config * cf, struct ggml_opt_optimizer_params * pars) {
    struct ggml_opt_params p = ggml_opt_default_params(sched, cf->loss);
    p.ctx_compute = m->ctx_compute;
    p.inputs = m->x;
    p.outputs = m->out;
    p.optimizer = cf->optimizer;
    p.opt_period = cf->opt_period;
    p.get_opt_pars = ggml_opt_get_constant_optimizer_params;
    p.get_opt_pars_ud = pars;
    return ggml_opt_init(p);
}

/* NEPOCH shuffled epochs with batches of n per process, on comm (MPI_COMM_NULL: alone).
 * The model starts from seed 1 on rank 0; other ranks start elsewhere (the broadcast fixes that). */
static bool train(ggml_backend_sched_t sched, ggml_backend_t be, const struct config * cf, int n, MPI_Comm comm, struct run * out) {
    struct mlp m;
    ggml_opt_dataset_t ds = blobs(cf->loss != GGML_OPT_LOSS_TYPE_SUM);
    const uint64_t seed = comm == MPI_COMM_NULL || rank == 0 ? 1 : 1000 + (uint64_t) rank;
    bool ok = CHECK(ds && mlp_init(&m, be, 8, n, seed), "%s: setup: %s", cf->name, ggml_last_error());
    if (!ok) { ggml_opt_dataset_free(ds); return false; }
    struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
    pars.adamw.alpha = 0.05f;
    pars.sgd.alpha = 0.01f;
    pars.clip_norm = cf->clip_norm;
    ggml_opt_context_t o = opt_for(sched, &m, cf, &pars);
    ggml_opt_result_t r = ggml_opt_result_init();
    ok = CHECK(o && r, "%s: opt: %s", cf->name, ggml_last_error());
    if (ok && comm != MPI_COMM_NULL) {
        ok = CHECK(ggml_opt_set_mpi_comm(o, comm) == GGML_STATUS_SUCCESS, "%s: set comm: %s", cf->name, ggml_last_error());
        if (ok && rank != 0) {  /* rank 0's starting point, bitwise */
            struct mlp m0;
            if (CHECK(mlp_init(&m0, be, 8, n, 1), "setup")) {
                bool same = true;
                for (int i = 0; i < 4; i++) same &= memcmp(m0.params[i]->data, m.params[i]->data, ggml_nbytes(m.params[i])) == 0;
                CHECK(same, "%s: rank %d holds rank 0's parameters after ggml_opt_set_mpi_comm", cf->name, rank);
                mlp_free(&m0);
            }
        }
    }
    for (int e = 0; e < NEPOCH && ok; e++) {
        ggml_opt_result_reset(r);
        ok = CHECK(ggml_opt_dataset_shuffle(o, ds, -1) == GGML_STATUS_SUCCESS, "shuffle");
        ok = ok && CHECK(ggml_opt_epoch(o, ds, r, NULL, -1, NULL, NULL) == GGML_STATUS_SUCCESS, "%s: epoch %d: %s", cf->name, e, ggml_last_error());
        int64_t nd = 0;
        ggml_opt_result_ndata(r, &nd);
        ok = ok && CHECK(nd == ND, "%s: the result counts the global batch (%lld of %d)", cf->name, (long long) nd, ND);
        ggml_opt_result_loss(r, &out->loss[e], NULL);
        ggml_opt_result_accuracy(r, &out->acc[e], NULL);
        if (ok) ggml_opt_result_pred(r, out->pred[e]);
    }
    out->n_params = 0;
    for (int i = 0; i < 4; i++) out->n_params += (size_t) ggml_nelements(m.params[i]);
    out->params = malloc(out->n_params * sizeof *out->params);
    for (size_t i = 0, at = 0; i < 4 && out->params; at += (size_t) ggml_nelements(m.params[i]), i++)
        memcpy(out->params + at, m.params[i]->data, ggml_nbytes(m.params[i]));
    ggml_opt_result_free(r);
    ggml_opt_free(o);
    mlp_free(&m);
    ggml_opt_dataset_free(ds);
    return ok && out->params;
}

static double rel_diff(const float * a, const float * b, size_t n) {
    double d = 0.0, s = 0.0;
    for (size_t i = 0; i < n; i++) { d += ((double) a[i] - b[i]) * ((double) a[i] - b[i]); s += (double) b[i] * b[i]; }
    return s > 0.0 ? sqrt(d / s) : sqrt(d);
}

static uint64_t fnv(const void * p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *) p)[i]) * 0x100000001b3ull;
    return h;
}

static void test_equivalence(ggml_backend_sched_t sched, ggml_backend_t be, const struct config * cf) {
    enum { N_LOCAL = 4 };
    struct run par = {0}, again = {0}, ref = {0};
    const bool ok = train(sched, be, cf, N_LOCAL, MPI_COMM_WORLD, &par) && train(sched, be, cf, N_LOCAL, MPI_COMM_WORLD, &again) &&
                    train(sched, be, cf, N_LOCAL * size, MPI_COMM_NULL, &ref);
    if (ok) {
        for (int e = 0; e < NEPOCH; e++) {
            CHECK_REL(fabs(par.loss[e] - ref.loss[e]) / fabs(ref.loss[e]), 1e-5, cf->name);
            CHECK((par.acc[e] == ref.acc[e] || (isnan(par.acc[e]) && isnan(ref.acc[e]))) && memcmp(par.pred[e], ref.pred[e], sizeof par.pred[e]) == 0,
                  "%s: epoch %d: predictions of %d ranks are one process's (accuracy %g, %g)", cf->name, e, size, par.acc[e], ref.acc[e]);
        }
        CHECK(ref.loss[NEPOCH - 1] < ref.loss[0] - 0.1 * fabs(ref.loss[0]), "%s: it trains (loss %g -> %g)", cf->name, ref.loss[0], ref.loss[NEPOCH - 1]);
        CHECK_REL(rel_diff(par.params, ref.params, ref.n_params), 1e-5, "parameters of N ranks x n against one process x N*n");
        CHECK(memcmp(par.params, again.params, par.n_params * sizeof *par.params) == 0 &&
              memcmp(par.loss, again.loss, sizeof par.loss) == 0, "%s: a second run is bitwise the first", cf->name);
        /* every rank holds bitwise the same parameters */
        const uint64_t h = fnv(par.params, par.n_params * sizeof *par.params);
        const char * what = "the trained parameters";
        CHECK(ggml_mpi_check_same(MPI_COMM_WORLD, &h, &what, 1) == GGML_STATUS_SUCCESS, "%s: %s", cf->name, ggml_last_error());
    }
    free(par.params);
    free(again.params);
    free(ref.params);
}

/* rank 1 builds a wider hidden layer: refused on every rank, with the reason */
static void test_mismatch(ggml_backend_sched_t sched, ggml_backend_t be) {
    struct mlp m;
    if (!CHECK(mlp_init(&m, be, rank == 1 ? 9 : 8, 4, 1), "setup")) return;
    const struct config cf = {"mismatch", GGML_OPT_LOSS_TYPE_CROSS_ENTROPY, GGML_OPT_OPTIMIZER_TYPE_ADAMW, 1, 0.0f};
    struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
    ggml_opt_context_t o = opt_for(sched, &m, &cf, &pars);
    if (CHECK(o != NULL, "opt: %s", ggml_last_error())) {
        const enum ggml_status st = ggml_opt_set_mpi_comm(o, MPI_COMM_WORLD);
        CHECK(st == GGML_STATUS_FAILED && strstr(ggml_last_error(), "differs across"), "rank %d: a different model refused: %s", rank, ggml_last_error());
    }
    ggml_opt_free(o);
    mlp_free(&m);
}

/* a NaN in rank 1's rows: every rank reports it and skips the step */
static void test_nonfinite(ggml_backend_sched_t sched, ggml_backend_t be) {
    struct mlp m;
    if (!CHECK(mlp_init(&m, be, 8, 4, 1), "setup")) return;
    const struct config cf = {"nan", GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, GGML_OPT_OPTIMIZER_TYPE_ADAMW, 1, 0.0f};
    struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
    ggml_opt_context_t o = opt_for(sched, &m, &cf, &pars);
    if (CHECK(o && ggml_opt_set_mpi_comm(o, MPI_COMM_WORLD) == GGML_STATUS_SUCCESS, "opt: %s", ggml_last_error())) {
        float before[8 * NIN];
        memcpy(before, m.W1->data, sizeof before);
        CHECK(ggml_opt_alloc(o, true) == GGML_STATUS_SUCCESS, "alloc");
        tc_fill_uniform(m.x, -1, 1);
        tc_fill_uniform(ggml_opt_labels(o), -1, 1);
        if (rank == 1) ((float *) m.x->data)[3] = NAN;
        const enum ggml_status st = ggml_opt_eval(o, NULL);
        CHECK(st == GGML_STATUS_ABORTED && memcmp(before, m.W1->data, sizeof before) == 0,
              "rank %d: a NaN on rank 1 skips the step here too (status %d: %s)", rank, (int) st, ggml_last_error());
    }
    ggml_opt_free(o);
    mlp_free(&m);
}

static void test_building_blocks(void) {
    struct ggml_init_params ip = {1 << 16, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5), * v = ggml_view_2d(ctx, t, 2, 2, 3 * sizeof(float), 0);
    for (int i = 0; i < 5; i++) ((float *) t->data)[i] = (float) ((rank + 1) * (i + 1));
    float extra[2] = {(float) rank, 1.0f};
    const double tri = size * (size + 1) / 2.0;  /* sum of rank + 1 */
    CHECK(ggml_mpi_allreduce_tensors(MPI_COMM_WORLD, &t, 1, 0.5f, extra, 2) == GGML_STATUS_SUCCESS, "allreduce: %s", ggml_last_error());
    bool ok = extra[0] == (float) (tri - size) && extra[1] == (float) size;
    for (int i = 0; i < 5; i++) ok &= ((float *) t->data)[i] == (float) (0.5 * tri * (i + 1));
    CHECK(ok, "allreduce: sums scaled, extras summed");
    CHECK(ggml_mpi_allreduce_tensors(MPI_COMM_WORLD, &v, 1, 1.0f, NULL, 0) == GGML_STATUS_FAILED, "a strided view refused");
    for (int i = 0; i < 5; i++) ((float *) t->data)[i] = (float) (rank * 10 + i);
    CHECK(ggml_mpi_bcast_tensors(MPI_COMM_WORLD, &t, 1) == GGML_STATUS_SUCCESS && ((float *) t->data)[4] == 4.0f, "broadcast from rank 0");
    const uint64_t same = 42, differs = (uint64_t) rank;
    const char * what = "the rank";
    CHECK(ggml_mpi_check_same(MPI_COMM_WORLD, &same, &what, 1) == GGML_STATUS_SUCCESS, "equal values pass");
    CHECK(ggml_mpi_check_same(MPI_COMM_WORLD, &differs, &what, 1) == GGML_STATUS_FAILED && strstr(ggml_last_error(), "the rank differs"),
          "differing values fail everywhere: %s", ggml_last_error());
    ggml_free(ctx);
}

int main(int argc, char ** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "run with mpirun -np 2 or more (got %d ranks)", size);
    ggml_backend_t be = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(be, 1);
    ggml_backend_sched_t sched = ggml_backend_sched_new(&be, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, true);
    if (CHECK(sched != NULL && ND % (4 * size) == 0, "setup: %s", ggml_last_error())) {
        test_building_blocks();
        static const struct config configs[] = {
            {"cross-entropy, AdamW, clipping, 2 micro-batches", GGML_OPT_LOSS_TYPE_CROSS_ENTROPY, GGML_OPT_OPTIMIZER_TYPE_ADAMW, 2, 0.3f},
            {"mean squared error, SGD", GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, GGML_OPT_OPTIMIZER_TYPE_SGD, 1, 0.0f},
            {"sum, SGD", GGML_OPT_LOSS_TYPE_SUM, GGML_OPT_OPTIMIZER_TYPE_SGD, 1, 0.0f},
        };
        for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) test_equivalence(sched, be, &configs[i]);
        test_mismatch(sched, be);
        test_nonfinite(sched, be);
    }
    ggml_backend_sched_free(sched);
    ggml_backend_free(be);
    char suite[64];
    snprintf(suite, sizeof suite, "test_mpi_opt (rank %d of %d)", rank, size);
    const int rc = tc_finish(suite);
    MPI_Finalize();
    return rc;
}

/* opt_mpi.c -- ggml-mpi.h: data-parallel training over MPI.
 *
 * Every collective is started non-blocking and polled, so that a rank whose
 * peers stopped answering notices it (the timeout) instead of waiting
 * forever: MPI itself has no timeout on a collective. Reductions pack all
 * tensors into one float buffer: one MPI_Allreduce per optimizer step,
 * whatever the number of parameters. */
#include "core/internal.h"
#include "opt/opt_dist.h"

#include "ggml-mpi.h"

#include <limits.h>
#include <stdlib.h>
#include <time.h>

static double   g_timeout = -1.0;  /* seconds; < 0: not read from the environment yet */
static uint64_t g_bytes_reduced;

void ggml_mpi_set_timeout(double seconds) { g_timeout = seconds > 0.0 ? seconds : 0.0; }

double ggml_mpi_get_timeout(void) {
    if (g_timeout < 0.0) {
        const char * env = getenv("GGMLR_MPI_TIMEOUT");
        char * end = NULL;
        const double v = env ? strtod(env, &end) : 600.0;
        g_timeout = env && (end == env || *end) ? 600.0 : (v > 0.0 ? v : 0.0);
    }
    return g_timeout;
}

uint64_t ggml_mpi_bytes_reduced(void) { return g_bytes_reduced; }

static enum ggml_status mpi_failed(int rc, const char * what) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error code %d", rc);
    ggmlr_set_error("%s: %s", what, msg);
    return GGML_STATUS_FAILED;
}

/* Wait for req, polling; past the timeout, say so and end the job: a started
 * collective can be neither cancelled nor freed. */
static enum ggml_status wait_or_abort(MPI_Request * req, MPI_Comm comm, const char * what) {
    const double limit = ggml_mpi_get_timeout(), t0 = MPI_Wtime();
    for (long polls = 0;; polls++) {
        int done = 0;
        const int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return mpi_failed(rc, what);
        if (done) return GGML_STATUS_SUCCESS;
        if (polls > 1000) {  /* a slow peer: leave the core to the threads of others */
            const struct timespec pause = {0, 20000};
            nanosleep(&pause, NULL);
        }
        if (limit > 0.0 && MPI_Wtime() - t0 > limit) {
            int rank = -1;
            MPI_Comm_rank(comm, &rank);
            fprintf(stderr, "ggmlr: rank %d: %s did not complete within %g s (GGMLR_MPI_TIMEOUT): another rank has stopped "
                            "or is stuck; aborting the job\n", rank, what, limit);
            fflush(stderr);
            MPI_Abort(comm, 1);
            return GGML_STATUS_FAILED;  /* not reached */
        }
    }
}

enum ggml_status ggml_mpi_bcast_bytes(MPI_Comm comm, void * data, size_t size) {
    static const char * what = "ggml_mpi_bcast_bytes";
    for (size_t off = 0; off < size;) {
        const size_t chunk = size - off < (size_t) INT_MAX ? size - off : (size_t) INT_MAX;
        MPI_Request req;
        const int rc = MPI_Ibcast((char *) data + off, (int) chunk, MPI_BYTE, 0, comm, &req);
        if (rc != MPI_SUCCESS) return mpi_failed(rc, what);
        const enum ggml_status st = wait_or_abort(&req, comm, "a broadcast (MPI_Ibcast)");
        if (st != GGML_STATUS_SUCCESS) return st;
        off += chunk;
    }
    return GGML_STATUS_SUCCESS;
}

static bool usable(const struct ggml_tensor * t, const char * fn, bool f32) {
    if (!t || !t->data || !ggml_is_contiguous(t) || (f32 && t->type != GGML_TYPE_F32)) {
        ggmlr_set_error("%s: tensor '%s' must be %scontiguous and have memory", fn, t ? t->name : "(NULL)", f32 ? "F32, " : "");
        return false;
    }
    return true;
}

enum ggml_status ggml_mpi_bcast_tensors(MPI_Comm comm, struct ggml_tensor * const * ts, int n) {
    for (int i = 0; i < n; i++) if (!usable(ts[i], "ggml_mpi_bcast_tensors", false)) return GGML_STATUS_FAILED;
    for (int i = 0; i < n; i++) {
        const enum ggml_status st = ggml_mpi_bcast_bytes(comm, ts[i]->data, ggml_nbytes(ts[i]));
        if (st != GGML_STATUS_SUCCESS) return st;
    }
    return GGML_STATUS_SUCCESS;
}

enum ggml_status ggml_mpi_allreduce_tensors(MPI_Comm comm, struct ggml_tensor * const * ts, int n, float scale, float * extra, int n_extra) {
    static const char * fn = "ggml_mpi_allreduce_tensors";
    size_t total = n_extra > 0 ? (size_t) n_extra : 0;
    for (int i = 0; i < n; i++) {
        if (!usable(ts[i], fn, true)) return GGML_STATUS_FAILED;
        total += (size_t) ggml_nelements(ts[i]);
    }
    if (total == 0) return GGML_STATUS_SUCCESS;
    float * buf = malloc(total * sizeof *buf);
    if (!buf) { ggmlr_set_error("%s: out of memory (%zu floats)", fn, total); return GGML_STATUS_ALLOC_FAILED; }
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        memcpy(buf + at, ts[i]->data, ggml_nbytes(ts[i]));
        at += (size_t) ggml_nelements(ts[i]);
    }
    if (n_extra > 0) memcpy(buf + at, extra, (size_t) n_extra * sizeof *extra);
    enum ggml_status st = GGML_STATUS_SUCCESS;
    for (size_t off = 0; off < total && st == GGML_STATUS_SUCCESS;) {
        const size_t chunk = total - off < (size_t) INT_MAX ? total - off : (size_t) INT_MAX;
        MPI_Request req;
        const int rc = MPI_Iallreduce(MPI_IN_PLACE, buf + off, (int) chunk, MPI_FLOAT, MPI_SUM, comm, &req);
        st = rc != MPI_SUCCESS ? mpi_failed(rc, fn) : wait_or_abort(&req, comm, "a gradient reduction (MPI_Iallreduce)");
        off += chunk;
    }
    if (st == GGML_STATUS_SUCCESS) {
        g_bytes_reduced += (uint64_t) (total * sizeof *buf);
        at = 0;
        for (int i = 0; i < n; i++) {
            float * d = ts[i]->data;
            const size_t ne = (size_t) ggml_nelements(ts[i]);
            for (size_t j = 0; j < ne; j++) d[j] = buf[at + j] * scale;
            at += ne;
        }
        if (n_extra > 0) memcpy(extra, buf + at, (size_t) n_extra * sizeof *extra);
    }
    free(buf);
    return st;
}

enum ggml_status ggml_mpi_check_same(MPI_Comm comm, const uint64_t * values, const char * const * what, int n) {
    static const char * fn = "ggml_mpi_check_same";
    if (n <= 0) return GGML_STATUS_SUCCESS;
    /* max of v and of ~v: the largest and (complemented) the smallest value in one reduction */
    uint64_t * mm = malloc(2 * (size_t) n * sizeof *mm);
    if (!mm) { ggmlr_set_error("%s: out of memory", fn); return GGML_STATUS_ALLOC_FAILED; }
    for (int i = 0; i < n; i++) { mm[2 * i] = values[i]; mm[2 * i + 1] = ~values[i]; }
    MPI_Request req;
    const int rc = MPI_Iallreduce(MPI_IN_PLACE, mm, 2 * n, MPI_UINT64_T, MPI_MAX, comm, &req);
    enum ggml_status st = rc != MPI_SUCCESS ? mpi_failed(rc, fn) : wait_or_abort(&req, comm, "the configuration check (MPI_Iallreduce)");
    for (int i = 0; i < n && st == GGML_STATUS_SUCCESS; i++) {
        if (mm[2 * i] != ~mm[2 * i + 1]) {
            int rank = -1, size = 0;
            MPI_Comm_rank(comm, &rank);
            MPI_Comm_size(comm, &size);
            ggmlr_set_error("%s differs across the %d ranks (rank %d has %016llx; the values range from %016llx to %016llx)",
                            what ? what[i] : "a value", size, rank, (unsigned long long) values[i],
                            (unsigned long long) ~mm[2 * i + 1], (unsigned long long) mm[2 * i]);
            st = GGML_STATUS_FAILED;
        }
    }
    free(mm);
    return st;
}

/* ====== An optimization context as one replica (opt_dist.h) ====== */

struct opt_mpi {
    MPI_Comm comm;  /* a duplicate of the caller's */
};

static enum ggml_status opt_mpi_allreduce(void * ud, struct ggml_tensor * const * ts, int n, float scale, float * extra, int n_extra) {
    return ggml_mpi_allreduce_tensors(((struct opt_mpi *) ud)->comm, ts, n, scale, extra, n_extra);
}

static void opt_mpi_free(void * ud) {
    struct opt_mpi * om = ud;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&om->comm);
    free(om);
}

enum ggml_status ggml_opt_set_mpi_comm(ggml_opt_context_t oc, MPI_Comm comm) {
    static const char * fn = "ggml_opt_set_mpi_comm";
    if (!oc) { ggmlr_set_error("%s: context is NULL", fn); return GGML_STATUS_FAILED; }
    if (comm == MPI_COMM_NULL) return ggmlr_opt_set_dist(oc, NULL);
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) { ggmlr_set_error("%s: MPI is not initialized (call MPI_Init first)", fn); return GGML_STATUS_FAILED; }
    struct opt_mpi * om = calloc(1, sizeof *om);
    if (!om) { ggmlr_set_error("%s: out of memory", fn); return GGML_STATUS_ALLOC_FAILED; }
    const int rc = MPI_Comm_dup(comm, &om->comm);
    if (rc != MPI_SUCCESS) { free(om); return mpi_failed(rc, fn); }
    struct ggmlr_opt_dist d = {.allreduce = opt_mpi_allreduce, .free_ud = opt_mpi_free, .ud = om};
    MPI_Comm_rank(om->comm, &d.rank);
    MPI_Comm_size(om->comm, &d.size);

    const uint64_t config = ggmlr_opt_config_hash(oc);
    const char * what = "the model (shapes and types of the inputs, outputs and parameters, loss, optimizer, opt_period)";
    enum ggml_status st = ggml_mpi_check_same(om->comm, &config, &what, 1);
    struct ggml_tensor ** state = malloc(3 * (size_t) ggmlr_opt_n_params(oc) * sizeof *state + 1);
    if (st == GGML_STATUS_SUCCESS && !state) { ggmlr_set_error("%s: out of memory", fn); st = GGML_STATUS_ALLOC_FAILED; }
    if (st == GGML_STATUS_SUCCESS) st = ggml_mpi_bcast_tensors(om->comm, state, ggmlr_opt_state_tensors(oc, state));
    if (st == GGML_STATUS_SUCCESS) st = ggml_mpi_bcast_bytes(om->comm, ggmlr_opt_iter(oc), sizeof(int64_t));
    free(state);
    if (st == GGML_STATUS_SUCCESS) st = ggmlr_opt_set_dist(oc, &d);
    if (st != GGML_STATUS_SUCCESS) opt_mpi_free(om);
    return st;
}

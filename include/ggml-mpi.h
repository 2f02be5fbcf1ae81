/*
 * ggml-mpi.h -- data-parallel training over MPI (built when the CMake option
 * GGMLR_MPI is on; installed only then). See docs/mpi.md.
 *
 * Data parallelism: every rank holds the whole model and computes the
 * gradients of its own shard of each batch; the gradients are summed across
 * the ranks (one MPI_Allreduce of one fused buffer per optimizer step) and
 * every rank applies the same optimizer step, so the parameters stay the same
 * everywhere. N ranks with batches of n datapoints train as one process with
 * batches of N*n (up to the rounding of the sums).
 *
 * The library never uses MPI_COMM_WORLD on its own: the caller passes the
 * communicator (MPI_COMM_WORLD, or any sub-communicator when the library runs
 * inside a larger MPI program) and is responsible for MPI_Init/MPI_Finalize.
 * Each optimization context works on its own duplicate of that communicator,
 * so its collectives never match the caller's.
 *
 * Failures: MPI errors return GGML_STATUS_FAILED with the MPI message (under
 * MPI's default handler, MPI_ERRORS_ARE_FATAL, MPI ends the job itself; a
 * rank that dies makes mpirun end the others). A collective that does not
 * complete within the timeout (a peer that stopped, or is stuck) cannot be
 * undone in MPI: the waiting rank prints which collective timed out and
 * calls MPI_Abort, which ends the job instead of hanging.
 */
#ifndef GGML_MPI_H
#define GGML_MPI_H

#include "ggml.h"
#include "ggml-opt.h"

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Make opt_ctx one of the data-parallel replicas of the ranks of comm (every
 * rank calls it, collectively, after the parameters have their values):
 *  - checks that every rank built the same model (shapes and types of the
 *    inputs, outputs and parameters, loss, optimizer, opt_period): on a
 *    mismatch every rank gets GGML_STATUS_FAILED and a message;
 *  - broadcasts the parameters, the AdamW moments and the step count from
 *    rank 0 (call it again after loading a checkpoint on rank 0 to share it);
 *  - from then on, ggml_opt_epoch gives rank r the datapoints
 *    [r*n, (r+1)*n) of each global batch of size*n (n = inputs->ne[1]);
 *    ggml_opt_eval makes the loss, the predictions and ncorrect those of the
 *    global batch on every rank (one small allreduce per evaluation); before
 *    each optimizer step the gradient accumulators are summed over the ranks
 *    (divided by their number unless the loss is SUM), then clipped, checked
 *    for NaN/Inf and applied identically everywhere. A GRAD-only context's
 *    accumulators stay local. ggml_opt_epoch_callback_progress_bar prints on
 *    rank 0 only.
 * All ranks must then call ggml_opt_alloc/ggml_opt_eval the same number of
 * times. MPI_COMM_NULL detaches (back to a single process). Free the context
 * before MPI_Finalize. */
GGML_API enum ggml_status ggml_opt_set_mpi_comm(ggml_opt_context_t opt_ctx, MPI_Comm comm);

/* ====== Building blocks, for programs with their own training loop ====== */

/* Broadcast the data of n contiguous tensors, or bytes, from rank 0. */
GGML_API enum ggml_status ggml_mpi_bcast_tensors(MPI_Comm comm, struct ggml_tensor * const * ts, int n);
GGML_API enum ggml_status ggml_mpi_bcast_bytes(MPI_Comm comm, void * data, size_t size);

/* Sum n contiguous F32 tensors element-wise over the ranks and multiply by
 * scale (1/size gives the mean), in place, plus n_extra floats summed (not
 * scaled): one MPI_Allreduce of one packed buffer. Every rank gets the same
 * values. */
GGML_API enum ggml_status ggml_mpi_allreduce_tensors(MPI_Comm comm, struct ggml_tensor * const * ts, int n, float scale,
                                                     float * extra, int n_extra);

/* Whether values[i] is the same on every rank, for i < n (what[i] names it in
 * the message). GGML_STATUS_FAILED on every rank when one differs anywhere. */
GGML_API enum ggml_status ggml_mpi_check_same(MPI_Comm comm, const uint64_t * values, const char * const * what, int n);

/* Seconds a collective may wait for the other ranks before the job is
 * aborted (default 600, or the environment variable GGMLR_MPI_TIMEOUT; <= 0:
 * wait forever). Process-wide. */
GGML_API void   ggml_mpi_set_timeout(double seconds);
GGML_API double ggml_mpi_get_timeout(void);

/* Bytes this process has passed to the reductions so far (their payload,
 * not what the network carries: a ring allreduce moves about 2(size-1)/size
 * times the payload per rank). */
GGML_API uint64_t ggml_mpi_bytes_reduced(void);

#ifdef __cplusplus
}
#endif

#endif /* GGML_MPI_H */

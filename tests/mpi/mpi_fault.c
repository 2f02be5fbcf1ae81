/* mpi_fault.c -- a job in which rank 1 fails while rank 0 waits in a gradient
 * reduction; run by test_mpi_faults.sh, which checks that the job ends within
 * seconds with a non-zero status instead of hanging.
 *   mpi_fault exit   rank 1 exits with status 3 without MPI_Finalize
 *   mpi_fault kill   rank 1 dies of SIGKILL
 *   mpi_fault hang   rank 1 sleeps; rank 0's collective times out (GGMLR_MPI_TIMEOUT) */
#include "ggml-mpi.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char ** argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char * mode = argc > 1 ? argv[1] : "";
    if (rank == 1) {
        sleep(1);  /* rank 0 is in the reduction by now */
        if (!strcmp(mode, "exit")) return 3;
        if (!strcmp(mode, "kill")) raise(SIGKILL);
        if (!strcmp(mode, "hang")) sleep(120);
    }
    struct ggml_init_params ip = {1 << 16, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * g = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1000);
    memset(g->data, 0, ggml_nbytes(g));
    const enum ggml_status st = ggml_mpi_allreduce_tensors(MPI_COMM_WORLD, &g, 1, 0.5f, NULL, 0);
    fprintf(stderr, "rank %d: the reduction returned %d (%s)\n", rank, (int) st, ggml_last_error());
    ggml_free(ctx);
    MPI_Finalize();
    return 0;
}

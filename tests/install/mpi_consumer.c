/* mpi_consumer.c -- a program built against the installed library with
 * pkg-config alone (ggml-mpi.h, MPI's flags from ggmlr.pc): two ranks average
 * a tensor. Run with mpirun -np 2. */
#include "ggml-mpi.h"

#include <stdio.h>

int main(int argc, char ** argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct ggml_init_params ip = {1 << 16, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    for (int i = 0; i < 4; i++) ((float *) t->data)[i] = (float) (rank + i);
    const enum ggml_status st = ggml_mpi_allreduce_tensors(MPI_COMM_WORLD, &t, 1, 1.0f / (float) size, NULL, 0);
    /* mean over ranks of rank + i = (size - 1) / 2 + i */
    int ok = st == GGML_STATUS_SUCCESS;
    for (int i = 0; i < 4; i++) ok &= ((float *) t->data)[i] == 0.5f * (float) (size - 1) + (float) i;
    if (rank == 0) printf("mpi_consumer: %d ranks, mean %s\n", size, ok ? "ok" : "WRONG");
    ggml_free(ctx);
    MPI_Finalize();
    return ok ? 0 : 1;
}

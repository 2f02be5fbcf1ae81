/* compute.h -- the executor's entry points for the stages above cpu
 * (compute.c): the CPU backend (src/backend) runs graphs and asks what a
 * kernel computes through these. */
#ifndef GGMLR_COMPUTE_H
#define GGMLR_COMPUTE_H

#include "core/internal.h"

/* Runs graph on pool's threads (NULL: the calling thread's own pool). */
struct ggmlr_pool;
enum ggml_status ggmlr_graph_compute(struct ggmlr_pool * pool, struct ggml_cgraph * graph, int n_threads);
/* Whether a CPU kernel computes t (its op, and types the library has). */
bool ggmlr_cpu_supports_op(const struct ggml_tensor * t);
/* Test hook: this thread's next computes fail at node `node` (-1: off), as a kernel calling ggmlr_compute_fail would. */
void ggmlr_test_fail_at_node(int node);

#endif

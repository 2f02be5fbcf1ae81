/* ggml-cpu.h -- the multi-threaded CPU executor and CPU backend. */
#ifndef GGML_CPU_H
#define GGML_CPU_H

#include "ggml.h"
#include "ggml-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of cores of this machine (the default thread count). */
GGML_API int              ggml_cpu_n_cores(void);
/* Name of the SIMD path chosen at run time: "avx512", "avx2" or "scalar". */
GGML_API const char *     ggml_cpu_simd_name(void);
/* Runs on the calling thread plus n_threads - 1 workers (n_threads <= 0: all
 * cores) kept by the calling thread between computes; results do not depend
 * on n_threads. See docs/threading.md. */
GGML_API enum ggml_status ggml_graph_compute_with_ctx(struct ggml_context * ctx, struct ggml_cgraph * graph, int n_threads);
/* Profiling: when on, every graph compute times each node and then prints to
 * stderr the time per op type and the slowest nodes (wall time of each node
 * with all its threads). Off by default; the environment variable
 * GGMLR_PROFILE=1 turns it on for the whole process, GGMLR_PROFILE=cpu with
 * thread 0's CPU time instead of wall time (for 1-thread runs on a busy machine). */
GGML_API void             ggml_cpu_set_profile(bool enable);

/* The backend keeps its own workers until ggml_backend_free; threads sharing
 * one backend take turns. */
GGML_API ggml_backend_t   ggml_backend_cpu_init(void);
GGML_API bool             ggml_backend_is_cpu(ggml_backend_t backend);
GGML_API void             ggml_backend_cpu_set_n_threads(ggml_backend_t backend, int n_threads);
GGML_API ggml_backend_reg_t ggml_backend_cpu_reg(void);

#ifdef __cplusplus
}
#endif

#endif /* GGML_CPU_H */

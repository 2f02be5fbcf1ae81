/* ggml-backend.h -- backends, buffers and tensor data transfer (CPU backend only). */
#ifndef GGML_BACKEND_H
#define GGML_BACKEND_H

#include "ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ggml_backend        * ggml_backend_t;
typedef struct ggml_backend_buffer * ggml_backend_buffer_t;
typedef struct ggml_backend_buffer_type * ggml_backend_buffer_type_t;
typedef struct ggml_backend_sched * ggml_backend_sched_t;

GGML_API const char *          ggml_backend_name(ggml_backend_t backend);
GGML_API void                  ggml_backend_free(ggml_backend_t backend);
/* Allocates, in one buffer, every tensor of ctx that has no data yet (views
 * get their source's memory). Returns NULL with a message on failure. */
GGML_API ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_t backend);
GGML_API void                  ggml_backend_buffer_free(ggml_backend_buffer_t buffer);
GGML_API size_t                ggml_backend_buffer_get_size(ggml_backend_buffer_t buffer);
GGML_API void *                ggml_backend_buffer_get_base(ggml_backend_buffer_t buffer);
/* Byte-range copies; out-of-range requests are refused (see ggml_last_error). */
GGML_API void                  ggml_backend_tensor_set(struct ggml_tensor * tensor, const void * data, size_t offset, size_t size);
GGML_API void                  ggml_backend_tensor_get(const struct ggml_tensor * tensor, void * data, size_t offset, size_t size);
GGML_API enum ggml_status      ggml_backend_tensor_set_checked(struct ggml_tensor * tensor, const void * data, size_t offset, size_t size);
GGML_API enum ggml_status      ggml_backend_tensor_get_checked(const struct ggml_tensor * tensor, void * data, size_t offset, size_t size);
GGML_API enum ggml_status      ggml_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * graph);

/* Buffer types: there is one, CPU memory. */
GGML_API ggml_backend_buffer_type_t ggml_backend_cpu_buffer_type(void);
GGML_API ggml_backend_buffer_type_t ggml_backend_get_default_buffer_type(ggml_backend_t backend);
GGML_API const char *               ggml_backend_buft_name(ggml_backend_buffer_type_t buft);
GGML_API ggml_backend_buffer_t      ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, ggml_backend_buffer_type_t buft);

/*
 * Scheduler (upstream's entry points, for CPU backends only). It gives memory
 * to the tensors of a graph that have none (those of a no_alloc context) and
 * computes the graph on backends[0]; ggml_backend_sched_reset takes that
 * memory back (the tensors have no data again). bufts may be NULL or hold the
 * CPU buffer type; parallel and op_offload have nothing to choose here.
 */
GGML_API ggml_backend_sched_t ggml_backend_sched_new(ggml_backend_t * backends, ggml_backend_buffer_type_t * bufts, int n_backends,
                                                     size_t graph_size, bool parallel, bool op_offload);
GGML_API void                 ggml_backend_sched_free(ggml_backend_sched_t sched);
GGML_API int                  ggml_backend_sched_get_n_backends(ggml_backend_sched_t sched);
GGML_API ggml_backend_t       ggml_backend_sched_get_backend(ggml_backend_sched_t sched, int i);
GGML_API size_t               ggml_backend_sched_get_graph_size(ggml_backend_sched_t sched); /* extension */
GGML_API bool                 ggml_backend_sched_reserve(ggml_backend_sched_t sched, struct ggml_cgraph * measure_graph); /* memory is given on demand: only checks */
GGML_API bool                 ggml_backend_sched_alloc_graph(ggml_backend_sched_t sched, struct ggml_cgraph * graph);
GGML_API enum ggml_status     ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph * graph); /* allocates first if needed */
GGML_API void                 ggml_backend_sched_reset(ggml_backend_sched_t sched);

#ifdef __cplusplus
}
#endif

#endif /* GGML_BACKEND_H */

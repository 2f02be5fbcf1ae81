/* ggml-alloc.h -- tensor and graph allocators (upstream's API, CPU buffers).
 *
 * ggml_tallocr places tensors one after another in a buffer. ggml_gallocr
 * places the tensors of a graph that have no memory yet in one buffer of its
 * own, reusing the memory of an intermediate result once every node that reads
 * it has run. What it never reuses: leafs, parameters, inputs
 * (ggml_set_input), outputs (ggml_set_output), nodes no other node reads (the
 * graph's results), and tensors that already had memory (those it leaves
 * alone). Differences from upstream: failures return false/NULL/a status with
 * a message instead of asserting; inputs keep their memory to the end of the
 * graph; one buffer per allocator (ggml_gallocr_new_n takes one buffer type).
 */
#ifndef GGML_ALLOC_H
#define GGML_ALLOC_H

#include "ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ggml_backend_buffer_type * ggml_backend_buffer_type_t;
typedef struct ggml_backend_buffer      * ggml_backend_buffer_t;
typedef struct ggml_backend             * ggml_backend_t;

/* Tensor allocator: bump allocation in an existing buffer. */
struct ggml_tallocr {
    ggml_backend_buffer_t buffer;
    void * base;
    size_t alignment;
    size_t offset;
};

GGML_API struct ggml_tallocr ggml_tallocr_new(ggml_backend_buffer_t buffer);
/* GGML_STATUS_ALLOC_FAILED with a message when the buffer is full. */
GGML_API enum ggml_status    ggml_tallocr_alloc(struct ggml_tallocr * talloc, struct ggml_tensor * tensor);

/* Graph allocator. */
typedef struct ggml_gallocr * ggml_gallocr_t;

GGML_API ggml_gallocr_t ggml_gallocr_new(ggml_backend_buffer_type_t buft);
GGML_API ggml_gallocr_t ggml_gallocr_new_n(ggml_backend_buffer_type_t * bufts, int n_bufs); /* n_bufs must be 1 */
GGML_API void           ggml_gallocr_free(ggml_gallocr_t galloc);

/* Sizes the buffer for graph (grows it if needed) without touching the graph. */
GGML_API bool ggml_gallocr_reserve(ggml_gallocr_t galloc, struct ggml_cgraph * graph);
/* node_buffer_ids / leaf_buffer_ids may be NULL or hold only 0 (one buffer). */
GGML_API bool ggml_gallocr_reserve_n(ggml_gallocr_t galloc, struct ggml_cgraph * graph,
                                     const int * node_buffer_ids, const int * leaf_buffer_ids);
GGML_API void ggml_gallocr_reserve_n_size(ggml_gallocr_t galloc, struct ggml_cgraph * graph,
                                          const int * node_buffer_ids, const int * leaf_buffer_ids, size_t * sizes);
/* Gives memory to every tensor of graph that has none (growing the buffer if
 * needed: tensors placed by an earlier call then point into freed memory). */
GGML_API bool   ggml_gallocr_alloc_graph(ggml_gallocr_t galloc, struct ggml_cgraph * graph);
GGML_API size_t ggml_gallocr_get_buffer_size(ggml_gallocr_t galloc, int buffer_id);

/* One zeroed buffer holding every tensor of ctx that has no memory yet (views
 * get their source's); NULL with a message on failure. Unlike upstream, a
 * context with nothing to allocate still gets a (small) buffer, not NULL. */
GGML_API size_t                       ggml_backend_alloc_ctx_tensors_from_buft_size(struct ggml_context * ctx, ggml_backend_buffer_type_t buft);
GGML_API struct ggml_backend_buffer * ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, ggml_backend_buffer_type_t buft);
GGML_API struct ggml_backend_buffer * ggml_backend_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_t backend);

#ifdef __cplusplus
}
#endif

#endif /* GGML_ALLOC_H */

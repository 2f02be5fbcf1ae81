/* ggml-backend.h -- backends, buffers and tensor data transfer (CPU backend only). */
#ifndef GGML_BACKEND_H
#define GGML_BACKEND_H

#include "ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ggml_backend        * ggml_backend_t;
typedef struct ggml_backend_buffer * ggml_backend_buffer_t;

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

#ifdef __cplusplus
}
#endif

#endif /* GGML_BACKEND_H */

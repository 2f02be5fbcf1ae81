/* backend_internal.h -- shared by the files of src/backend (not installed). */
#ifndef GGMLR_BACKEND_INTERNAL_H
#define GGMLR_BACKEND_INTERNAL_H

#include "core/internal.h"
#include "ggml-backend.h"

/* The backend buffer: one block of CPU memory holding tensor data
 * (src/backend/buffer.c). owns_data: freed with the buffer (false for
 * ggml_backend_cpu_buffer_from_ptr). Below backend, a tensor's buffer is an
 * opaque pointer (ggml.h). */
struct ggml_backend_buffer {
    void * data;
    size_t size;
    bool   owns_data;
    enum ggml_backend_buffer_usage usage;
};
#define GGMLR_BUFFER_ALIGN 64  /* of every buffer and of each tensor placed in one */

static inline size_t ggmlr_align_up(size_t x) { return (x + GGMLR_BUFFER_ALIGN - 1) / GGMLR_BUFFER_ALIGN * GGMLR_BUFFER_ALIGN; }

/* buffer.c: a zeroed CPU buffer of size bytes (at least one alignment unit,
 * so that every tensor placed in it has a real address); NULL with a message
 * naming fn on failure. */
ggml_backend_buffer_t ggmlr_buffer_new(const char * fn, size_t size);

/* buffer.c: bytes a tensor takes in a buffer (its span, rounded up to the
 * alignment, at least one unit); SIZE_MAX when that overflows. */
size_t ggmlr_buffer_tensor_size(const struct ggml_tensor * t);

#endif

/* buffer.c -- the CPU buffer type and backend buffers: blocks of CPU memory
 * that tensors are placed in (by ggml_backend_alloc_ctx_tensors, the
 * allocators of galloc.c, the scheduler, or ggml_backend_tensor_alloc). */
#include "backend/backend_internal.h"

#include <stdlib.h>

/* The one buffer type: CPU memory, 64-byte aligned. */
struct ggml_backend_buffer_type { const char * name; };
static struct ggml_backend_buffer_type cpu_buffer_type = {"CPU"};

ggml_backend_buffer_type_t ggml_backend_cpu_buffer_type(void) { return &cpu_buffer_type; }
const char * ggml_backend_buft_name(ggml_backend_buffer_type_t buft) { return buft ? buft->name : NULL; }
size_t ggml_backend_buft_get_alignment(ggml_backend_buffer_type_t buft) { return buft ? GGMLR_BUFFER_ALIGN : 0; }
size_t ggml_backend_buft_get_max_size(ggml_backend_buffer_type_t buft) { return buft ? SIZE_MAX : 0; }
bool ggml_backend_buft_is_host(ggml_backend_buffer_type_t buft) { return buft != NULL; }

size_t ggmlr_buffer_tensor_size(const struct ggml_tensor * t) {
    const size_t n = ggml_nbytes(t);
    if (n > SIZE_MAX - GGMLR_BUFFER_ALIGN) return SIZE_MAX;
    return n == 0 ? GGMLR_BUFFER_ALIGN : ggmlr_align_up(n);
}

size_t ggml_backend_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor) {
    return buft && tensor ? ggml_nbytes(tensor) : 0;
}

ggml_backend_buffer_t ggmlr_buffer_new(const char * fn, size_t size) {
    const size_t bytes = size > GGMLR_BUFFER_ALIGN ? ggmlr_align_up(size) : GGMLR_BUFFER_ALIGN;
    if (bytes < size) { ggmlr_set_error("%s: %zu bytes overflow", fn, size); return NULL; }
    struct ggml_backend_buffer * buf = ggmlr_calloc(1, sizeof *buf);
    if (!buf) { ggmlr_set_error("%s: out of memory", fn); return NULL; }
    buf->data = ggmlr_aligned_alloc(GGMLR_BUFFER_ALIGN, bytes);
    if (!buf->data) {
        ggmlr_set_error("%s: cannot allocate %zu bytes", fn, size);
        free(buf);
        return NULL;
    }
    memset(buf->data, 0, bytes);  /* nothing uninitialised is ever read back */
    buf->size = size;
    buf->owns_data = true;
    return buf;
}

ggml_backend_buffer_t ggml_backend_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    if (buft != &cpu_buffer_type) { ggmlr_set_error("ggml_backend_buft_alloc_buffer: buffer type is not the CPU one"); return NULL; }
    return ggmlr_buffer_new("ggml_backend_buft_alloc_buffer", size);
}

ggml_backend_buffer_t ggml_backend_cpu_buffer_from_ptr(void * ptr, size_t size) {
    if (!ptr || (uintptr_t) ptr % GGMLR_BUFFER_ALIGN != 0) {
        ggmlr_set_error("ggml_backend_cpu_buffer_from_ptr: pointer is NULL or not %d-byte aligned", GGMLR_BUFFER_ALIGN);
        return NULL;
    }
    struct ggml_backend_buffer * buf = ggmlr_calloc(1, sizeof *buf);
    if (!buf) { ggmlr_set_error("ggml_backend_cpu_buffer_from_ptr: out of memory"); return NULL; }
    buf->data = ptr;
    buf->size = size;
    return buf;
}

void ggml_backend_buffer_free(ggml_backend_buffer_t buffer) {
    if (!buffer) return;
    if (buffer->owns_data) free(buffer->data);
    free(buffer);
}

const char * ggml_backend_buffer_name(ggml_backend_buffer_t buffer) { return buffer ? cpu_buffer_type.name : NULL; }
size_t ggml_backend_buffer_get_size(ggml_backend_buffer_t buffer) { return buffer ? buffer->size : 0; }
void * ggml_backend_buffer_get_base(ggml_backend_buffer_t buffer) { return buffer ? buffer->data : NULL; }
size_t ggml_backend_buffer_get_alignment(ggml_backend_buffer_t buffer) { return buffer ? GGMLR_BUFFER_ALIGN : 0; }
size_t ggml_backend_buffer_get_max_size(ggml_backend_buffer_t buffer) { return buffer ? SIZE_MAX : 0; }
bool ggml_backend_buffer_is_host(ggml_backend_buffer_t buffer) { return buffer != NULL; }
ggml_backend_buffer_type_t ggml_backend_buffer_get_type(ggml_backend_buffer_t buffer) { return buffer ? &cpu_buffer_type : NULL; }
void ggml_backend_buffer_set_usage(ggml_backend_buffer_t buffer, enum ggml_backend_buffer_usage usage) { if (buffer) buffer->usage = usage; }
enum ggml_backend_buffer_usage ggml_backend_buffer_get_usage(ggml_backend_buffer_t buffer) { return buffer ? buffer->usage : GGML_BACKEND_BUFFER_USAGE_ANY; }
void ggml_backend_buffer_reset(ggml_backend_buffer_t buffer) { (void) buffer; /* CPU buffers keep no per-tensor state */ }

size_t ggml_backend_buffer_get_alloc_size(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor) {
    return buffer && tensor ? ggml_nbytes(tensor) : 0;
}

void ggml_backend_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    if (buffer && buffer->size > 0) memset(buffer->data, value, buffer->size);
}

enum ggml_status ggml_backend_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    if (!buffer || !tensor) { ggmlr_set_error("ggml_backend_buffer_init_tensor: buffer or tensor is NULL"); return GGML_STATUS_FAILED; }
    if (tensor->view_src && !tensor->buffer) return ggml_backend_view_init(tensor);
    return GGML_STATUS_SUCCESS;  /* CPU tensors need nothing more than their address */
}

enum ggml_status ggml_backend_view_init(struct ggml_tensor * tensor) {
    if (!tensor || !tensor->view_src) { ggmlr_set_error("ggml_backend_view_init: tensor is NULL or not a view"); return GGML_STATUS_FAILED; }
    const struct ggml_tensor * src = tensor->view_src;
    if (!src->data) {
        ggmlr_set_error("ggml_backend_view_init: view '%s' of '%s', which has no memory", tensor->name, src->name);
        return GGML_STATUS_FAILED;
    }
    tensor->data = (char *) src->data + tensor->view_offs;
    tensor->buffer = src->buffer;
    return GGML_STATUS_SUCCESS;
}

enum ggml_status ggml_backend_tensor_alloc(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, void * addr) {
    static const char fn[] = "ggml_backend_tensor_alloc";
    if (!buffer || !tensor || !addr) { ggmlr_set_error("%s: buffer, tensor or address is NULL", fn); return GGML_STATUS_FAILED; }
    if (tensor->data) { ggmlr_set_error("%s: tensor '%s' already has memory", fn, tensor->name); return GGML_STATUS_FAILED; }
    const uintptr_t base = (uintptr_t) buffer->data, at = (uintptr_t) addr;
    const size_t n = ggml_nbytes(tensor);
    if (at < base || at - base > buffer->size || n > buffer->size - (at - base)) {
        ggmlr_set_error("%s: %zu bytes of '%s' at offset %lld do not fit in a buffer of %zu bytes", fn, n, tensor->name,
                        (long long) (at - base), buffer->size);
        return GGML_STATUS_FAILED;
    }
    tensor->data = addr;
    tensor->buffer = buffer;
    return GGML_STATUS_SUCCESS;
}

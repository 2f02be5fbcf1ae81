/* backend-cpu.c -- the CPU backend: backend objects, buffers for no_alloc
 * contexts, bounds-checked tensor data transfer, graph compute. */
#include "core/internal.h"

#include "cpu/exec/threadpool.h"
#include "ggml-cpu.h"

#include <stdlib.h>

#define BUFFER_ALIGN 64

struct ggml_backend {
    int n_threads;
    struct ggmlr_pool * pool;  /* its workers live as long as the backend */
};

ggml_backend_t ggml_backend_cpu_init(void) {
    struct ggml_backend * be = ggmlr_calloc(1, sizeof *be);
    if (!be) { ggmlr_set_error("ggml_backend_cpu_init: out of memory"); return NULL; }
    if (!(be->pool = ggmlr_pool_new())) { free(be); return NULL; }
    be->n_threads = ggml_cpu_n_cores();
    return be;
}

bool ggml_backend_is_cpu(ggml_backend_t backend) { return backend != NULL; }
const char * ggml_backend_name(ggml_backend_t backend) { return backend ? "CPU" : NULL; }
void ggml_backend_free(ggml_backend_t backend) {
    if (!backend) return;
    ggmlr_pool_free(backend->pool);
    free(backend);
}

void ggml_backend_cpu_set_n_threads(ggml_backend_t backend, int n_threads) {
    if (!backend) return;
    backend->n_threads = n_threads > 0 ? n_threads : ggml_cpu_n_cores();
}

static size_t align_up(size_t x) { return (x + BUFFER_ALIGN - 1) / BUFFER_ALIGN * BUFFER_ALIGN; }

/* The one buffer type: CPU memory. */
struct ggml_backend_buffer_type { const char * name; };
static struct ggml_backend_buffer_type cpu_buffer_type = {"CPU"};

ggml_backend_buffer_type_t ggml_backend_cpu_buffer_type(void) { return &cpu_buffer_type; }
ggml_backend_buffer_type_t ggml_backend_get_default_buffer_type(ggml_backend_t backend) { return backend ? &cpu_buffer_type : NULL; }
const char * ggml_backend_buft_name(ggml_backend_buffer_type_t buft) { return buft ? buft->name : NULL; }

static ggml_backend_buffer_t alloc_ctx_tensors(struct ggml_context * ctx);

ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_t backend) {
    if (!ctx || !backend) { ggmlr_set_error("ggml_backend_alloc_ctx_tensors: context or backend is NULL"); return NULL; }
    return alloc_ctx_tensors(ctx);
}

ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, ggml_backend_buffer_type_t buft) {
    if (!ctx || buft != &cpu_buffer_type) { ggmlr_set_error("ggml_backend_alloc_ctx_tensors_from_buft: context is NULL or buffer type is not the CPU one"); return NULL; }
    return alloc_ctx_tensors(ctx);
}

static ggml_backend_buffer_t alloc_ctx_tensors(struct ggml_context * ctx) {
    size_t total = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        if (t->data || t->view_src) continue;
        const size_t n = align_up(ggml_nbytes(t));
        if (n > SIZE_MAX - total) { ggmlr_set_error("ggml_backend_alloc_ctx_tensors: total size overflows"); return NULL; }
        total += n;
    }
    struct ggml_backend_buffer * buf = ggmlr_calloc(1, sizeof *buf);
    if (!buf) { ggmlr_set_error("ggml_backend_alloc_ctx_tensors: out of memory"); return NULL; }
    /* At least one block even when every tensor is empty: each tensor gets a
     * real address (data != NULL means allocated; no arithmetic on NULL).
     * Zeroed, so that nothing uninitialised is ever read back. */
    const size_t bytes = total > 0 ? total : BUFFER_ALIGN;
    buf->data = ggmlr_aligned_alloc(BUFFER_ALIGN, bytes);
    if (!buf->data) {
        ggmlr_set_error("ggml_backend_alloc_ctx_tensors: cannot allocate %zu bytes", total);
        free(buf);
        return NULL;
    }
    memset(buf->data, 0, bytes);
    buf->size = total;
    size_t offs = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        if (t->data || t->view_src) continue;
        t->data = (char *) buf->data + offs;
        t->buffer = buf;
        offs += align_up(ggml_nbytes(t));
    }
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        if (t->data || !t->view_src || !t->view_src->data) continue;
        t->data = (char *) t->view_src->data + t->view_offs;
        t->buffer = t->view_src->buffer;
    }
    return buf;
}

void ggml_backend_buffer_free(ggml_backend_buffer_t buffer) {
    if (!buffer) return;
    free(buffer->data);
    free(buffer);
}

size_t ggml_backend_buffer_get_size(ggml_backend_buffer_t buffer) { return buffer ? buffer->size : 0; }
void * ggml_backend_buffer_get_base(ggml_backend_buffer_t buffer) { return buffer ? buffer->data : NULL; }

/* Copies between user memory and a tensor's bytes; only for tensors whose
 * bytes are one dense block (contiguous), within bounds. */
static enum ggml_status check_transfer(const char * fn, const struct ggml_tensor * t, const void * data, size_t offset, size_t size) {
    if (!t) { ggmlr_set_error("%s: tensor is NULL", fn); return GGML_STATUS_FAILED; }
    if (!t->data) { ggmlr_set_error("%s: tensor '%s' has no memory (allocate its context's tensors first)", fn, t->name); return GGML_STATUS_FAILED; }
    if (!data && size > 0) { ggmlr_set_error("%s: data pointer is NULL", fn); return GGML_STATUS_FAILED; }
    if (!ggml_is_contiguous(t)) { ggmlr_set_error("%s: tensor '%s' is not contiguous", fn, t->name); return GGML_STATUS_FAILED; }
    const size_t n = ggml_nbytes(t);
    if (offset > n || size > n - offset) {
        ggmlr_set_error("%s: %zu bytes at offset %zu are out of bounds for tensor '%s' of %zu bytes", fn, size, offset, t->name, n);
        return GGML_STATUS_FAILED;
    }
    return GGML_STATUS_SUCCESS;
}

enum ggml_status ggml_backend_tensor_set_checked(struct ggml_tensor * t, const void * data, size_t offset, size_t size) {
    enum ggml_status st = check_transfer("ggml_backend_tensor_set", t, data, offset, size);
    if (st == GGML_STATUS_SUCCESS && size > 0) memcpy((char *) t->data + offset, data, size);
    return st;
}

enum ggml_status ggml_backend_tensor_get_checked(const struct ggml_tensor * t, void * data, size_t offset, size_t size) {
    enum ggml_status st = check_transfer("ggml_backend_tensor_get", t, data, offset, size);
    if (st == GGML_STATUS_SUCCESS && size > 0) memcpy(data, (const char *) t->data + offset, size);
    return st;
}

void ggml_backend_tensor_set(struct ggml_tensor * t, const void * data, size_t offset, size_t size) {
    (void) ggml_backend_tensor_set_checked(t, data, offset, size);
}

void ggml_backend_tensor_get(const struct ggml_tensor * t, void * data, size_t offset, size_t size) {
    (void) ggml_backend_tensor_get_checked(t, data, offset, size);
}

enum ggml_status ggml_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * graph) {
    if (!backend) { ggmlr_set_error("ggml_backend_graph_compute: backend is NULL"); return GGML_STATUS_FAILED; }
    return ggmlr_graph_compute(backend->pool, graph, backend->n_threads);
}

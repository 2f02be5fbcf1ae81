/* backend_cpu.c -- the CPU backend: backend objects, what they support,
 * bounds-checked tensor data transfer, graph compute. */
#include "backend/backend_internal.h"

#include "cpu/exec/compute.h"
#include "cpu/exec/threadpool.h"
#include "ggml-cpu.h"

#include <stdlib.h>

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

ggml_backend_buffer_type_t ggml_backend_get_default_buffer_type(ggml_backend_t backend) { return backend ? ggml_backend_cpu_buffer_type() : NULL; }
size_t ggml_backend_get_alignment(ggml_backend_t backend) { return backend ? GGMLR_BUFFER_ALIGN : 0; }
size_t ggml_backend_get_max_size(ggml_backend_t backend) { return backend ? SIZE_MAX : 0; }
bool ggml_backend_supports_buft(ggml_backend_t backend, ggml_backend_buffer_type_t buft) { return backend && buft == ggml_backend_cpu_buffer_type(); }
bool ggml_backend_offload_op(ggml_backend_t backend, const struct ggml_tensor * op) { (void) backend; (void) op; return false; }
void ggml_backend_synchronize(ggml_backend_t backend) { (void) backend; }

ggml_backend_buffer_t ggml_backend_alloc_buffer(ggml_backend_t backend, size_t size) {
    if (!backend) { ggmlr_set_error("ggml_backend_alloc_buffer: backend is NULL"); return NULL; }
    return ggmlr_buffer_new("ggml_backend_alloc_buffer", size);
}

bool ggml_backend_supports_op(ggml_backend_t backend, const struct ggml_tensor * op) { return backend && ggmlr_cpu_supports_op(op); }

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

void ggml_backend_tensor_memset(struct ggml_tensor * t, uint8_t value, size_t offset, size_t size) {
    if (check_transfer("ggml_backend_tensor_memset", t, t ? t->data : NULL, offset, size) == GGML_STATUS_SUCCESS && size > 0) {
        memset((char *) t->data + offset, value, size);
    }
}

void ggml_backend_tensor_copy(const struct ggml_tensor * src, struct ggml_tensor * dst) {
    if (!src || !dst || src->type != dst->type || !ggml_are_same_shape(src, dst)) {
        ggmlr_set_error("ggml_backend_tensor_copy: tensors are NULL or differ in type or shape");
        return;
    }
    if (src == dst) return;
    if (check_transfer("ggml_backend_tensor_copy", src, src->data, 0, ggml_nbytes(src)) != GGML_STATUS_SUCCESS) return;
    (void) ggml_backend_tensor_set_checked(dst, src->data, 0, ggml_nbytes(src));
}

enum ggml_status ggml_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * graph) {
    if (!backend) { ggmlr_set_error("ggml_backend_graph_compute: backend is NULL"); return GGML_STATUS_FAILED; }
    return ggmlr_graph_compute(backend->pool, graph, backend->n_threads);
}

enum ggml_status ggml_backend_graph_compute_async(ggml_backend_t backend, struct ggml_cgraph * graph) {
    return ggml_backend_graph_compute(backend, graph);
}

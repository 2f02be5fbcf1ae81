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
    struct ggml_threadpool * threadpool;  /* the caller's, used instead of pool when set */
    ggml_abort_callback abort_callback;
    void *              abort_callback_data;
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
    if (backend->abort_callback && backend->abort_callback(backend->abort_callback_data)) return GGML_STATUS_ABORTED;
    const struct ggml_threadpool * tp = backend->threadpool;
    if (tp) return ggmlr_graph_compute(tp->pool, graph, backend->n_threads < tp->n_threads ? backend->n_threads : tp->n_threads);
    return ggmlr_graph_compute(backend->pool, graph, backend->n_threads);
}

void ggml_backend_cpu_set_threadpool(ggml_backend_t backend, ggml_threadpool_t threadpool) {
    if (!backend) { ggmlr_set_error("ggml_backend_cpu_set_threadpool: backend is NULL"); return; }
    backend->threadpool = threadpool;
}

void ggml_backend_cpu_set_abort_callback(ggml_backend_t backend, ggml_abort_callback abort_callback, void * abort_callback_data) {
    if (!backend) { ggmlr_set_error("ggml_backend_cpu_set_abort_callback: backend is NULL"); return; }
    backend->abort_callback = abort_callback;
    backend->abort_callback_data = abort_callback_data;
}

/* one set of kernels here: nothing to switch to */
void ggml_backend_cpu_set_use_ref(ggml_backend_t backend, bool use_ref) {
    (void) use_ref;
    if (!backend) ggmlr_set_error("ggml_backend_cpu_set_use_ref: backend is NULL");
}

enum ggml_status ggml_backend_graph_compute_async(ggml_backend_t backend, struct ggml_cgraph * graph) {
    return ggml_backend_graph_compute(backend, graph);
}

/* The CPU backend's identity (upstream's GUID bytes are its own choice; any fixed value will do). */
ggml_guid_t ggml_backend_guid(ggml_backend_t backend) {
    static ggml_guid guid = {0x67, 0x67, 0x6d, 0x6c, 0x52, 0x2d, 0x43, 0x50, 0x55, 0x2d, 0x62, 0x61, 0x63, 0x6b, 0x65, 0x64};
    return backend ? &guid : NULL;
}

/* Strided transfers: every block is checked before the first is copied. */
static enum ggml_status check_2d(const char * fn, const struct ggml_tensor * t, const void * data, size_t offset, size_t size,
                                 size_t n_copies, size_t stride_tensor) {
    if (n_copies == 0) return check_transfer(fn, t, data, offset, 0);
    /* the last block starts at offset + (n_copies-1)*stride_tensor; checked against overflow */
    const size_t k = n_copies - 1;
    if (stride_tensor != 0 && k > (SIZE_MAX - offset) / stride_tensor) {
        ggmlr_set_error("%s: %zu blocks %zu bytes apart from offset %zu overflow", fn, n_copies, stride_tensor, offset);
        return GGML_STATUS_FAILED;
    }
    enum ggml_status st = check_transfer(fn, t, data, offset, size);
    if (st == GGML_STATUS_SUCCESS) st = check_transfer(fn, t, data, offset + k * stride_tensor, size);
    return st;
}

void ggml_backend_tensor_set_2d(struct ggml_tensor * t, const void * data, size_t offset, size_t size, size_t n_copies,
                                size_t stride_tensor, size_t stride_data) {
    if (check_2d("ggml_backend_tensor_set_2d", t, data, offset, size, n_copies, stride_tensor) != GGML_STATUS_SUCCESS || size == 0) return;
    for (size_t i = 0; i < n_copies; i++) memcpy((char *) t->data + offset + i * stride_tensor, (const char *) data + i * stride_data, size);
}

void ggml_backend_tensor_get_2d(const struct ggml_tensor * t, void * data, size_t offset, size_t size, size_t n_copies,
                                size_t stride_tensor, size_t stride_data) {
    if (check_2d("ggml_backend_tensor_get_2d", t, data, offset, size, n_copies, stride_tensor) != GGML_STATUS_SUCCESS || size == 0) return;
    for (size_t i = 0; i < n_copies; i++) memcpy((char *) data + i * stride_data, (const char *) t->data + offset + i * stride_tensor, size);
}

/* The _async forms: the CPU backend has no queue, so they copy at once. */
static bool have_backend(const char * fn, ggml_backend_t backend) {
    if (!backend) ggmlr_set_error("%s: backend is NULL", fn);
    return backend != NULL;
}

void ggml_backend_tensor_set_async(ggml_backend_t backend, struct ggml_tensor * t, const void * data, size_t offset, size_t size) {
    if (have_backend("ggml_backend_tensor_set_async", backend)) ggml_backend_tensor_set(t, data, offset, size);
}

void ggml_backend_tensor_get_async(ggml_backend_t backend, const struct ggml_tensor * t, void * data, size_t offset, size_t size) {
    if (have_backend("ggml_backend_tensor_get_async", backend)) ggml_backend_tensor_get(t, data, offset, size);
}

void ggml_backend_tensor_set_2d_async(ggml_backend_t backend, struct ggml_tensor * t, const void * data, size_t offset, size_t size,
                                      size_t n_copies, size_t stride_tensor, size_t stride_data) {
    if (have_backend("ggml_backend_tensor_set_2d_async", backend)) ggml_backend_tensor_set_2d(t, data, offset, size, n_copies, stride_tensor, stride_data);
}

void ggml_backend_tensor_get_2d_async(ggml_backend_t backend, const struct ggml_tensor * t, void * data, size_t offset, size_t size,
                                      size_t n_copies, size_t stride_tensor, size_t stride_data) {
    if (have_backend("ggml_backend_tensor_get_2d_async", backend)) ggml_backend_tensor_get_2d(t, data, offset, size, n_copies, stride_tensor, stride_data);
}

void ggml_backend_tensor_copy_async(ggml_backend_t backend_src, ggml_backend_t backend_dst, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    if (!backend_src || !backend_dst) { ggmlr_set_error("ggml_backend_tensor_copy_async: a backend is NULL"); return; }
    ggml_backend_tensor_copy(src, dst);
}

/* Graph plans: the graph and the backend it was made for. */
struct backend_plan {
    ggml_backend_t       backend;
    struct ggml_cgraph * graph;
};

ggml_backend_graph_plan_t ggml_backend_graph_plan_create(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    if (!backend || !cgraph) { ggmlr_set_error("ggml_backend_graph_plan_create: backend or graph is NULL"); return NULL; }
    struct backend_plan * plan = ggmlr_calloc(1, sizeof *plan);
    if (!plan) { ggmlr_set_error("ggml_backend_graph_plan_create: out of memory"); return NULL; }
    plan->backend = backend;
    plan->graph = cgraph;
    return plan;
}

void ggml_backend_graph_plan_free(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    (void) backend;
    free(plan);
}

enum ggml_status ggml_backend_graph_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    static const char fn[] = "ggml_backend_graph_plan_compute";
    const struct backend_plan * p = plan;
    if (!backend || !p) { ggmlr_set_error("%s: backend or plan is NULL", fn); return GGML_STATUS_FAILED; }
    if (p->backend != backend) { ggmlr_set_error("%s: the plan was made for another backend", fn); return GGML_STATUS_FAILED; }
    return ggml_backend_graph_compute(backend, p->graph);
}

/* Events: as upstream's CPU device, none (caps.events is false): event_new
 * gives NULL, and the calls that take an event refuse NULL with a message
 * (upstream's dereference it). */
ggml_backend_event_t ggml_backend_event_new(ggml_backend_dev_t device) {
    ggmlr_set_error(device ? "ggml_backend_event_new: the CPU device has no events (caps.events is false)"
                           : "ggml_backend_event_new: device is NULL");
    return NULL;
}

void ggml_backend_event_free(ggml_backend_event_t event) { (void) event; }

void ggml_backend_event_record(ggml_backend_event_t event, ggml_backend_t backend) {
    (void) event; (void) backend;
    ggmlr_set_error("ggml_backend_event_record: no event to record (the CPU device has none)");
}

void ggml_backend_event_synchronize(ggml_backend_event_t event) {
    (void) event;
    ggmlr_set_error("ggml_backend_event_synchronize: no event to wait for (the CPU device has none)");
}

void ggml_backend_event_wait(ggml_backend_t backend, ggml_backend_event_t event) {
    (void) backend; (void) event;
    ggmlr_set_error("ggml_backend_event_wait: no event to wait for (the CPU device has none)");
}

/* ggml-backend.h -- backends, buffers and tensor data transfer (CPU backend only). */
#ifndef GGML_BACKEND_H
#define GGML_BACKEND_H

#include "ggml.h"
#include "ggml-alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ggml_backend             * ggml_backend_t;
typedef struct ggml_backend_buffer      * ggml_backend_buffer_t;
typedef struct ggml_backend_buffer_type * ggml_backend_buffer_type_t;
typedef struct ggml_backend_sched       * ggml_backend_sched_t;
typedef struct ggml_backend_reg         * ggml_backend_reg_t;
typedef struct ggml_backend_device      * ggml_backend_dev_t;
typedef struct ggml_backend_event       * ggml_backend_event_t;
typedef void                            * ggml_backend_graph_plan_t;

/* Buffer types: there is one, CPU memory (ggml_backend_cpu_buffer_type). */
GGML_API const char *          ggml_backend_buft_name          (ggml_backend_buffer_type_t buft);
/* A zeroed buffer of size bytes (at least one alignment unit). */
GGML_API ggml_backend_buffer_t ggml_backend_buft_alloc_buffer  (ggml_backend_buffer_type_t buft, size_t size);
GGML_API size_t                ggml_backend_buft_get_alignment (ggml_backend_buffer_type_t buft);
GGML_API size_t                ggml_backend_buft_get_max_size  (ggml_backend_buffer_type_t buft);
GGML_API size_t                ggml_backend_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor);
GGML_API bool                  ggml_backend_buft_is_host       (ggml_backend_buffer_type_t buft);
GGML_API ggml_backend_dev_t    ggml_backend_buft_get_device    (ggml_backend_buffer_type_t buft);
GGML_API ggml_backend_buffer_type_t ggml_backend_cpu_buffer_type(void);

/* Buffers */
enum ggml_backend_buffer_usage {
    GGML_BACKEND_BUFFER_USAGE_ANY     = 0,
    GGML_BACKEND_BUFFER_USAGE_WEIGHTS = 1,
    GGML_BACKEND_BUFFER_USAGE_COMPUTE = 2
};

GGML_API const char *                   ggml_backend_buffer_name          (ggml_backend_buffer_t buffer);
GGML_API void                           ggml_backend_buffer_free          (ggml_backend_buffer_t buffer);
GGML_API void *                         ggml_backend_buffer_get_base      (ggml_backend_buffer_t buffer);
GGML_API size_t                         ggml_backend_buffer_get_size      (ggml_backend_buffer_t buffer);
GGML_API enum ggml_status               ggml_backend_buffer_init_tensor   (ggml_backend_buffer_t buffer, struct ggml_tensor * tensor);
GGML_API size_t                         ggml_backend_buffer_get_alignment (ggml_backend_buffer_t buffer);
GGML_API size_t                         ggml_backend_buffer_get_max_size  (ggml_backend_buffer_t buffer);
GGML_API size_t                         ggml_backend_buffer_get_alloc_size(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor);
GGML_API void                           ggml_backend_buffer_clear         (ggml_backend_buffer_t buffer, uint8_t value);
GGML_API bool                           ggml_backend_buffer_is_host       (ggml_backend_buffer_t buffer);
GGML_API void                           ggml_backend_buffer_set_usage     (ggml_backend_buffer_t buffer, enum ggml_backend_buffer_usage usage);
GGML_API enum ggml_backend_buffer_usage ggml_backend_buffer_get_usage     (ggml_backend_buffer_t buffer);
GGML_API ggml_backend_buffer_type_t     ggml_backend_buffer_get_type      (ggml_backend_buffer_t buffer);
GGML_API void                           ggml_backend_buffer_reset         (ggml_backend_buffer_t buffer);
/* A buffer over memory the caller owns (ggml_backend_buffer_free leaves it alone). */
GGML_API ggml_backend_buffer_t          ggml_backend_cpu_buffer_from_ptr  (void * ptr, size_t size);
/* Places tensor at addr inside buffer (bounds checked); views take their source's memory. */
GGML_API enum ggml_status               ggml_backend_tensor_alloc         (ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, void * addr);
GGML_API enum ggml_status               ggml_backend_view_init            (struct ggml_tensor * tensor);

/* Backends */
GGML_API ggml_guid_t                ggml_backend_guid(ggml_backend_t backend);  /* the CPU backend's; NULL for NULL */
GGML_API const char *               ggml_backend_name(ggml_backend_t backend);
GGML_API void                       ggml_backend_free(ggml_backend_t backend);
GGML_API ggml_backend_buffer_type_t ggml_backend_get_default_buffer_type(ggml_backend_t backend);
GGML_API ggml_backend_buffer_t      ggml_backend_alloc_buffer(ggml_backend_t backend, size_t size);
GGML_API size_t                     ggml_backend_get_alignment(ggml_backend_t backend);
GGML_API size_t                     ggml_backend_get_max_size(ggml_backend_t backend);
GGML_API ggml_backend_dev_t         ggml_backend_get_device(ggml_backend_t backend);
/* Whether the CPU kernels compute op (its op and types). */
GGML_API bool                       ggml_backend_supports_op(ggml_backend_t backend, const struct ggml_tensor * op);
GGML_API bool                       ggml_backend_supports_buft(ggml_backend_t backend, ggml_backend_buffer_type_t buft);
GGML_API bool                       ggml_backend_offload_op(ggml_backend_t backend, const struct ggml_tensor * op); /* false: one device */
GGML_API void                       ggml_backend_synchronize(ggml_backend_t backend); /* computes are synchronous */

/* Byte-range copies; out-of-range requests are refused (see ggml_last_error). */
GGML_API void                  ggml_backend_tensor_set(struct ggml_tensor * tensor, const void * data, size_t offset, size_t size);
GGML_API void                  ggml_backend_tensor_get(const struct ggml_tensor * tensor, void * data, size_t offset, size_t size);
GGML_API void                  ggml_backend_tensor_memset(struct ggml_tensor * tensor, uint8_t value, size_t offset, size_t size);
GGML_API enum ggml_status      ggml_backend_tensor_set_checked(struct ggml_tensor * tensor, const void * data, size_t offset, size_t size);
GGML_API enum ggml_status      ggml_backend_tensor_get_checked(const struct ggml_tensor * tensor, void * data, size_t offset, size_t size);
/* src and dst of the same shape and type, both contiguous. */
GGML_API void                  ggml_backend_tensor_copy(const struct ggml_tensor * src, struct ggml_tensor * dst);
GGML_API enum ggml_status      ggml_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * graph);
GGML_API enum ggml_status      ggml_backend_graph_compute_async(ggml_backend_t backend, struct ggml_cgraph * graph); /* synchronous */

/* n_copies blocks of size bytes: block i goes between tensor offset
 * offset + i*stride_tensor and data + i*stride_data. All blocks are checked
 * before any is copied (out of range: nothing copied, a message). */
GGML_API void ggml_backend_tensor_set_2d(      struct ggml_tensor * tensor, const void * data, size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);
GGML_API void ggml_backend_tensor_get_2d(const struct ggml_tensor * tensor,       void * data, size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);
/* The _async forms are synchronous here (the CPU backend has no queue): the
 * copy is done when they return; backend must be a backend (not NULL). */
GGML_API void ggml_backend_tensor_set_async   (ggml_backend_t backend,       struct ggml_tensor * tensor, const void * data, size_t offset, size_t size);
GGML_API void ggml_backend_tensor_get_async   (ggml_backend_t backend, const struct ggml_tensor * tensor,       void * data, size_t offset, size_t size);
GGML_API void ggml_backend_tensor_set_2d_async(ggml_backend_t backend,       struct ggml_tensor * tensor, const void * data, size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);
GGML_API void ggml_backend_tensor_get_2d_async(ggml_backend_t backend, const struct ggml_tensor * tensor,       void * data, size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);
GGML_API void ggml_backend_tensor_copy_async  (ggml_backend_t backend_src, ggml_backend_t backend_dst, const struct ggml_tensor * src, struct ggml_tensor * dst);

/* Graph plans: the graph (not copied: keep it alive and unchanged) and the
 * backend it was made for; compute runs it like ggml_backend_graph_compute. */
GGML_API ggml_backend_graph_plan_t ggml_backend_graph_plan_create (ggml_backend_t backend, struct ggml_cgraph * cgraph);
GGML_API void                      ggml_backend_graph_plan_free   (ggml_backend_t backend, ggml_backend_graph_plan_t plan);
GGML_API enum ggml_status          ggml_backend_graph_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t plan);

/* Events. Work on a CPU backend is done when its call returns, so an event
 * is complete once recorded: synchronize and wait return at once (upstream's
 * CPU device has no events and gives NULL). */
GGML_API ggml_backend_event_t ggml_backend_event_new(ggml_backend_dev_t device);
GGML_API void                 ggml_backend_event_free(ggml_backend_event_t event);
GGML_API void                 ggml_backend_event_record(ggml_backend_event_t event, ggml_backend_t backend);
GGML_API void                 ggml_backend_event_synchronize(ggml_backend_event_t event);
GGML_API void                 ggml_backend_event_wait(ggml_backend_t backend, ggml_backend_event_t event);

/* Devices and the registry: one backend ("CPU") with one device ("CPU"). */
enum ggml_backend_dev_type {
    GGML_BACKEND_DEVICE_TYPE_CPU,
    GGML_BACKEND_DEVICE_TYPE_GPU,
    GGML_BACKEND_DEVICE_TYPE_IGPU,
    GGML_BACKEND_DEVICE_TYPE_ACCEL,
    GGML_BACKEND_DEVICE_TYPE_META
};

struct ggml_backend_dev_caps {
    bool async;
    bool host_buffer;
    bool buffer_from_host_ptr;
    bool events;
    bool mmap_support;
};

struct ggml_backend_dev_props {
    const char * name;
    const char * description;
    size_t memory_free;
    size_t memory_total;
    enum ggml_backend_dev_type type;
    const char * device_id;
    struct ggml_backend_dev_caps caps;
};

GGML_API const char *               ggml_backend_dev_name(ggml_backend_dev_t device);
GGML_API const char *               ggml_backend_dev_description(ggml_backend_dev_t device);
GGML_API void                       ggml_backend_dev_memory(ggml_backend_dev_t device, size_t * free, size_t * total);
GGML_API enum ggml_backend_dev_type ggml_backend_dev_type(ggml_backend_dev_t device);
GGML_API void                       ggml_backend_dev_get_props(ggml_backend_dev_t device, struct ggml_backend_dev_props * props);
GGML_API ggml_backend_reg_t         ggml_backend_dev_backend_reg(ggml_backend_dev_t device);
GGML_API ggml_backend_t             ggml_backend_dev_init(ggml_backend_dev_t device, const char * params); /* params ignored */
GGML_API ggml_backend_buffer_type_t ggml_backend_dev_buffer_type(ggml_backend_dev_t device);
GGML_API ggml_backend_buffer_type_t ggml_backend_dev_host_buffer_type(ggml_backend_dev_t device); /* NULL: none */
GGML_API bool                       ggml_backend_dev_supports_op(ggml_backend_dev_t device, const struct ggml_tensor * op);
GGML_API bool                       ggml_backend_dev_supports_buft(ggml_backend_dev_t device, ggml_backend_buffer_type_t buft);
GGML_API bool                       ggml_backend_dev_offload_op(ggml_backend_dev_t device, const struct ggml_tensor * op);
/* A CPU buffer over ptr (64-byte aligned, owned by the caller); max_tensor_size is not used. */
GGML_API ggml_backend_buffer_t      ggml_backend_dev_buffer_from_host_ptr(ggml_backend_dev_t device, void * ptr, size_t size, size_t max_tensor_size);

GGML_API const char *       ggml_backend_reg_name(ggml_backend_reg_t reg);
GGML_API size_t             ggml_backend_reg_dev_count(ggml_backend_reg_t reg);
GGML_API ggml_backend_dev_t ggml_backend_reg_dev_get(ggml_backend_reg_t reg, size_t index);
/* Knows "ggml_backend_set_n_threads" (a ggml_backend_set_n_threads_t) and
 * "ggml_backend_get_features" (the CPU's instruction sets and the kernels'
 * SIMD path, "SIMD"); NULL otherwise. */
GGML_API void *             ggml_backend_reg_get_proc_address(ggml_backend_reg_t reg, const char * name);
typedef void (*ggml_backend_set_n_threads_t)(ggml_backend_t backend, int n_threads);
struct ggml_backend_feature {
    const char * name;
    const char * value;
};
typedef struct ggml_backend_feature * (*ggml_backend_get_features_t)(ggml_backend_reg_t reg);  /* NULL-terminated */

GGML_API size_t             ggml_backend_reg_count(void);
GGML_API ggml_backend_reg_t ggml_backend_reg_get(size_t index);
GGML_API ggml_backend_reg_t ggml_backend_reg_by_name(const char * name);  /* case-insensitive */
GGML_API size_t             ggml_backend_dev_count(void);
GGML_API ggml_backend_dev_t ggml_backend_dev_get(size_t index);
GGML_API ggml_backend_dev_t ggml_backend_dev_by_name(const char * name);  /* case-insensitive */
GGML_API ggml_backend_dev_t ggml_backend_dev_by_type(enum ggml_backend_dev_type type);
GGML_API ggml_backend_t     ggml_backend_init_by_name(const char * name, const char * params);
GGML_API ggml_backend_t     ggml_backend_init_by_type(enum ggml_backend_dev_type type, const char * params);
GGML_API ggml_backend_t     ggml_backend_init_best(void);  /* the CPU backend */
/* Nothing is loaded dynamically: load returns NULL with a message, the others do nothing. */
GGML_API ggml_backend_reg_t ggml_backend_load(const char * path);
GGML_API void               ggml_backend_unload(ggml_backend_reg_t reg);
GGML_API void               ggml_backend_load_all(void);
GGML_API void               ggml_backend_load_all_from_path(const char * dir_path);
/* The registry is fixed: registering the CPU backend or device (already
 * there) does nothing, anything else is refused with a message. */
GGML_API void               ggml_backend_register(ggml_backend_reg_t reg);
GGML_API void               ggml_backend_device_register(ggml_backend_dev_t device);

/* A copy of graph's tensors in a new context, the data they hold copied into
 * one buffer of backend; buffer is NULL (with a message) on failure. */
struct ggml_backend_graph_copy {
    ggml_backend_buffer_t buffer;
    struct ggml_context * ctx_allocated;
    struct ggml_context * ctx_unallocated;  /* NULL: views are in ctx_allocated */
    struct ggml_cgraph * graph;
};
GGML_API struct ggml_backend_graph_copy ggml_backend_graph_copy(ggml_backend_t backend, struct ggml_cgraph * graph);
GGML_API void                           ggml_backend_graph_copy_free(struct ggml_backend_graph_copy copy);
/* graph computed on backend1 and a copy of it on backend2: node by node, the
 * callback sees each computed pair and stops the walk by returning false; with
 * test_nodes, the whole graph first, then the callback for those nodes only. */
typedef bool (*ggml_backend_eval_callback)(int node_index, struct ggml_tensor * t1, struct ggml_tensor * t2, void * user_data);
GGML_API bool ggml_backend_compare_graph_backend(ggml_backend_t backend1, ggml_backend_t backend2, struct ggml_cgraph * graph,
                                                 ggml_backend_eval_callback callback, void * user_data,
                                                 struct ggml_tensor const * const * test_nodes, size_t num_test_nodes);

/*
 * Scheduler (upstream's entry points, for CPU backends only). It gives memory
 * to the tensors of a graph that have none (those of a no_alloc context) with
 * a graph allocator (ggml-alloc.h: intermediate results share memory, so read
 * only outputs, flagged with ggml_set_output, and results after a compute)
 * and computes the graph on backends[0]; ggml_backend_sched_reset takes that
 * memory back (the tensors have no data again). bufts may be NULL or hold the
 * CPU buffer type; parallel and op_offload have nothing to choose here.
 */
GGML_API ggml_backend_sched_t ggml_backend_sched_new(ggml_backend_t * backends, ggml_backend_buffer_type_t * bufts, int n_backends,
                                                     size_t graph_size, bool parallel, bool op_offload);
GGML_API void                 ggml_backend_sched_free(ggml_backend_sched_t sched);
GGML_API int                  ggml_backend_sched_get_n_backends(ggml_backend_sched_t sched);
GGML_API ggml_backend_t       ggml_backend_sched_get_backend(ggml_backend_sched_t sched, int i);
GGML_API size_t               ggml_backend_sched_get_graph_size(ggml_backend_sched_t sched); /* extension */
/* bytes of the allocators' buffers of the graphs allocated since the last reset */
GGML_API size_t               ggml_backend_sched_get_buffer_size(ggml_backend_sched_t sched, ggml_backend_t backend);
GGML_API bool                 ggml_backend_sched_reserve(ggml_backend_sched_t sched, struct ggml_cgraph * measure_graph); /* memory is given on demand: only checks */
GGML_API bool                 ggml_backend_sched_alloc_graph(ggml_backend_sched_t sched, struct ggml_cgraph * graph);
GGML_API enum ggml_status     ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph * graph); /* allocates first if needed */
GGML_API void                 ggml_backend_sched_reset(ggml_backend_sched_t sched);
/* sizes[i]: bytes backend i's buffer would need for measure_graph (all on
 * backend 0, the others 0); resets the scheduler first, like upstream. */
GGML_API void                 ggml_backend_sched_reserve_size(ggml_backend_sched_t sched, struct ggml_cgraph * measure_graph, size_t * sizes);
GGML_API int                  ggml_backend_sched_get_n_splits(ggml_backend_sched_t sched); /* of the last graph: 1 (0 before any, or empty) */
GGML_API int                  ggml_backend_sched_get_n_copies(ggml_backend_sched_t sched); /* 1: no pipeline copies */
GGML_API ggml_backend_buffer_type_t ggml_backend_sched_get_buffer_type(ggml_backend_sched_t sched, ggml_backend_t backend);
/* The backend asked for node until the next reset (NULL when none was); the
 * graph still runs on backends[0]: every backend here is a CPU one. */
GGML_API void                 ggml_backend_sched_set_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor * node, ggml_backend_t backend);
GGML_API ggml_backend_t       ggml_backend_sched_get_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor * node);
GGML_API void                 ggml_backend_sched_split_graph(ggml_backend_sched_t sched, struct ggml_cgraph * graph); /* one split */
GGML_API enum ggml_status     ggml_backend_sched_graph_compute_async(ggml_backend_sched_t sched, struct ggml_cgraph * graph); /* synchronous */
GGML_API void                 ggml_backend_sched_synchronize(ggml_backend_sched_t sched); /* nothing to wait for */
/* Asked (ask true) for each node in order whether the caller wants to see it;
 * the nodes up to one it wants are computed, then it is shown (ask false);
 * returning false then stops the compute (the status is still success). */
typedef bool (*ggml_backend_sched_eval_callback)(struct ggml_tensor * t, bool ask, void * user_data);
GGML_API void                 ggml_backend_sched_set_eval_callback(ggml_backend_sched_t sched, ggml_backend_sched_eval_callback callback, void * user_data);

/* Upstream's meta backend: one device made of several, tensors split across
 * them (tensor parallelism). There is one device here, so
 * ggml_backend_meta_device refuses (NULL with a message); the axis names are
 * upstream's ("0".."3", "MIRRORED", "PARTIAL", "NONE", "UNKNOWN"; NULL with a
 * message for another value). */
#define GGML_BACKEND_META_MAX_DEVICES 16
enum ggml_backend_meta_split_axis {
    GGML_BACKEND_SPLIT_AXIS_0 = 0,
    GGML_BACKEND_SPLIT_AXIS_1 = 1,
    GGML_BACKEND_SPLIT_AXIS_2 = 2,
    GGML_BACKEND_SPLIT_AXIS_3 = 3,
    GGML_BACKEND_SPLIT_AXIS_MIRRORED = 10,
    GGML_BACKEND_SPLIT_AXIS_PARTIAL  = 11,
    GGML_BACKEND_SPLIT_AXIS_NONE    = 98,
    GGML_BACKEND_SPLIT_AXIS_UNKNOWN = 99
};
GGML_API const char * ggml_backend_meta_split_axis_name(enum ggml_backend_meta_split_axis split_axis);
struct ggml_backend_meta_split_state {
    enum ggml_backend_meta_split_axis axis;
    int64_t  ne[16*GGML_BACKEND_META_MAX_DEVICES];
    uint32_t nr[16];
    uint32_t n_segments;
};
typedef struct ggml_backend_meta_split_state (*ggml_backend_meta_get_split_state_t)(const struct ggml_tensor * tensor, void * userdata);
GGML_API ggml_backend_dev_t ggml_backend_meta_device(ggml_backend_dev_t * devs, size_t n_devs, ggml_backend_meta_get_split_state_t get_split_state,
                                                     void * get_split_state_ud);

#ifdef __cplusplus
}
#endif

#endif /* GGML_BACKEND_H */

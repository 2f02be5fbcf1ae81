/* internal.h -- declarations shared by the library's own files (not installed). */
#ifndef GGMLR_INTERNAL_H
#define GGMLR_INTERNAL_H

#include "ggml.h"
#include "ggml-backend.h"
#include "quant/quant.h"   /* the tensor types (the stage below core) */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* error.c: text for the log callback (printf-style; ggml_log_set). */
void ggmlr_log(enum ggml_log_level level, const char * fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* error.c: record the message of the failure at hand (printf-style). */
void ggmlr_set_error(const char * fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* fp16.c: the portable row converters; cpu/simd/ adds the F16C pair and
 * picks the one of the SIMD path in use (ggml_fp16_to_fp32_row etc.). */
void ggmlr_fp16_to_fp32_row_scalar(const ggml_fp16_t * x, float * y, int64_t n);
void ggmlr_fp32_to_fp16_row_scalar(const float * x, ggml_fp16_t * y, int64_t n);

/* alloc.c: the heap for tensors, contexts, graphs and GGUF data (release
 * with free), so that the allocation-failure tests reach every such path
 * (the profiler, ggml-opt's prediction buffers and MPI's use malloc:
 * their failures are handled, but not injected). The test hook makes the allocation after the next k fail, once (k < 0: none);
 * ggmlr_test_alloc_count counts the allocations since it was last armed. */
void * ggmlr_malloc(size_t size);
void * ggmlr_calloc(size_t n, size_t size);
void * ggmlr_realloc(void * p, size_t size);
void * ggmlr_aligned_alloc(size_t align, size_t size);
void ggmlr_test_fail_alloc_after(long k);
long ggmlr_test_alloc_count(void);

/* The backend buffer: one block of CPU memory holding tensor data
 * (src/backend/buffer.c). owns_data: freed with the buffer (false for
 * ggml_backend_cpu_buffer_from_ptr). */
struct ggml_backend_buffer {
    void * data;
    size_t size;
    bool   owns_data;
    enum ggml_backend_buffer_usage usage;
};
#define GGMLR_BUFFER_ALIGN 64  /* of every buffer and of each tensor placed in one */

/* context.c */
struct ggml_tensor * ggmlr_new_tensor_impl(struct ggml_context * ctx, enum ggml_type type, int n_dims,
                                           const int64_t * ne, struct ggml_tensor * view_src, size_t view_offs);
void * ggmlr_ctx_alloc_object(struct ggml_context * ctx, size_t size); /* graphs; NULL + message when full */
size_t ggmlr_tensor_nbytes_span(const struct ggml_tensor * t);         /* bytes from data to last element */
/* Data pointer of element (i0,i1,i2,i3). */
static inline void * ggmlr_elem_ptr(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}
/* Element as float / store a float, for F32, F16, BF16 and I32 (NaN / nothing for a block type). */
float ggmlr_load_f32(enum ggml_type type, const void * p);
void  ggmlr_store_f32(enum ggml_type type, void * p, float v);

/* op_names.c: op is a value of enum ggml_unary_op (every one is implemented) */
bool ggmlr_unary_op_is_valid(int op);

/* graph.c: hash set of visited tensors, shared with autodiff.c */
struct ggml_cgraph {
    int size;       /* capacity of nodes / leafs */
    int n_nodes;
    int n_leafs;
    struct ggml_tensor ** nodes;
    struct ggml_tensor ** leafs;
    size_t hash_size;
    struct ggml_tensor ** hash_keys;  /* open addressing, NULL = empty */
    struct ggml_tensor ** grads;      /* by hash slot; NULL unless grads enabled */
    struct ggml_tensor ** grad_accs;  /* by hash slot; accumulators of params */
};
size_t ggmlr_hash_find(const struct ggml_cgraph * g, const struct ggml_tensor * t); /* slot or SIZE_MAX */
size_t ggmlr_hash_insert(struct ggml_cgraph * g, struct ggml_tensor * t);        /* slot or SIZE_MAX when full */
void   ggmlr_graph_rebuild_hash(struct ggml_cgraph * g);

/* cpu/compute.c: runs graph on pool's threads (NULL: the calling thread's own pool) */
struct ggmlr_pool;
enum ggml_status ggmlr_graph_compute(struct ggmlr_pool * pool, struct ggml_cgraph * graph, int n_threads);
/* cpu/compute.c: whether a CPU kernel computes t (its op, and types the library has) */
bool ggmlr_cpu_supports_op(const struct ggml_tensor * t);
/* Test hook: this thread's next computes fail at node `node` (-1: off), as a kernel calling ggmlr_compute_fail would. */
void ggmlr_test_fail_at_node(int node);

#endif

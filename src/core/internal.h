/* internal.h -- declarations shared by the library's own files (not installed). */
#ifndef GGMLR_INTERNAL_H
#define GGMLR_INTERNAL_H

#include "ggml.h"
#include "quant/quant.h"   /* the tensor types (the stage below core) */
#include "core/fp16.h"    /* fp16.c's portable row converters */

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

/* context.c */
struct ggml_tensor * ggmlr_new_tensor_impl(struct ggml_context * ctx, enum ggml_type type, int n_dims,
                                           const int64_t * ne, struct ggml_tensor * view_src, size_t view_offs);
void * ggmlr_ctx_alloc_object(struct ggml_context * ctx, size_t size); /* graphs; NULL + message when full */
size_t ggmlr_tensor_nbytes_span(const struct ggml_tensor * t);         /* bytes from data to last element */
/* Data pointer of element (i0,i1,i2,i3). */
static inline void * ggmlr_elem_ptr(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}
/* Element as float / store a float (integers saturate), for F32, F16, BF16, I32, I16, I8 and I64 (NaN / nothing for a block type). */
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

#endif

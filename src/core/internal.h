/* internal.h -- declarations shared by the library's own files (not installed). */
#ifndef GGMLR_INTERNAL_H
#define GGMLR_INTERNAL_H

#include "ggml.h"
#include "ggml-backend.h"

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

/* fp16.c: row converters, portable and (x86) with F16C; cpu/vec.c picks the
 * pair of the SIMD path in use, which ggml_fp16_to_fp32_row etc. call. */
void ggmlr_fp16_to_fp32_row_scalar(const ggml_fp16_t * x, float * y, int64_t n);
void ggmlr_fp32_to_fp16_row_scalar(const float * x, ggml_fp16_t * y, int64_t n);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GGMLR_HAVE_F16C 1
void ggmlr_fp16_to_fp32_row_f16c(const ggml_fp16_t * x, float * y, int64_t n);
void ggmlr_fp32_to_fp16_row_f16c(const float * x, ggml_fp16_t * y, int64_t n);
#endif

/* alloc.c: the library's only ways to the heap (release with free). The
 * test hook makes the allocation after the next k fail, once (k < 0: none);
 * ggmlr_test_alloc_count counts the allocations since it was last armed. */
void * ggmlr_malloc(size_t size);
void * ggmlr_calloc(size_t n, size_t size);
void * ggmlr_realloc(void * p, size_t size);
void * ggmlr_aligned_alloc(size_t align, size_t size);
void ggmlr_test_fail_alloc_after(long k);
long ggmlr_test_alloc_count(void);

/* The backend buffer: one malloc'd block holding a context's tensor data. */
struct ggml_backend_buffer {
    void * data;
    size_t size;
};

/* context.c */
struct ggml_tensor * ggmlr_new_tensor_impl(struct ggml_context * ctx, enum ggml_type type, int n_dims,
                                           const int64_t * ne, struct ggml_tensor * view_src, size_t view_offs);
void * ggmlr_ctx_alloc_object(struct ggml_context * ctx, size_t size); /* graphs; NULL + message when full */
size_t ggmlr_tensor_nbytes_span(const struct ggml_tensor * t);         /* bytes from data to last element */
bool   ggmlr_type_is_supported(enum ggml_type type);
/* Data pointer of element (i0,i1,i2,i3). */
static inline void * ggmlr_elem_ptr(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}
/* Element as float / store a float, for F32, F16 and I32. */
float ggmlr_load_f32(enum ggml_type type, const void * p);
void  ggmlr_store_f32(enum ggml_type type, void * p, float v);

/* ops.c: argument checks shared by the constructors (ops.c, ops_*.c). Each
 * failure sets the message and returns NULL, so a constructor can return it. */
struct ggml_tensor * ggmlr_null_input(const char * fn, const char * arg);
struct ggml_tensor * ggmlr_fail_type(const char * fn, const char * arg, const struct ggml_tensor * t, const char * want);
struct ggml_tensor * ggmlr_fail_shapes(const char * fn, const char * what, const struct ggml_tensor * a, const struct ggml_tensor * b);
const char *         ggmlr_shape_str(const struct ggml_tensor * t, char * buf, size_t n); /* "[ne0, ne1, ne2, ne3]" */
#define REQUIRE_CTX(fn) do { if (!ctx) { ggmlr_set_error("%s: context is NULL", fn); return NULL; } } while (0)
#define REQUIRE(fn, t)  do { if (!(t)) return ggmlr_null_input(fn, #t); } while (0)
#define REQUIRE_F32(fn, t) do { if ((t)->type != GGML_TYPE_F32) return ggmlr_fail_type(fn, #t, t, "F32"); } while (0)
/* A new node of op with sources src0, src1 (either may be NULL). */
struct ggml_tensor * ggmlr_new_node(struct ggml_context * ctx, enum ggml_op op, enum ggml_type type, const int64_t ne[4],
                                    struct ggml_tensor * src0, struct ggml_tensor * src1);

/* ops.c: ggml_acc (ACC_ON_COPY), or into zeros shaped like a (ACC_ON_ZEROS: the
 * backward of a view), or into a itself (ACC_IN_PLACE: the result is a view of
 * a; autodiff's sums of gradients that nothing else reads) */
enum ggmlr_acc_base { ACC_ON_COPY, ACC_ON_ZEROS, ACC_IN_PLACE };
/* an ACC node's op_params: the region's strides and offset (4 size_t: slots
 * 0..7), then at GGMLR_ACC_ZERO_BASE 1 when its base is zeros */
#define GGMLR_ACC_ZERO_BASE 8
struct ggml_tensor * ggmlr_acc_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                    size_t nb1, size_t nb2, size_t nb3, size_t offset, enum ggmlr_acc_base base);

/* ops.c: fused attention internals. A FLASH_ATTN_EXT node's src[GGMLR_FA_STATS_SRC]
 * is its row-statistics tensor (2 * N*H*B floats: row max, then log of the row
 * sum, row index (b*H + h)*N + n), an output the forward kernel fills as it
 * goes; keeping it in src[] makes it visible to every graph walk.
 * ggmlr_flash_attn_back_saved is ggml_flash_attn_back of that node's inputs
 * that reads the node's output and statistics instead of running the forward
 * again (src[5] = the node, src[6] = its statistics): the same numbers, 4*NMD
 * fewer flops. */
#define GGMLR_FA_STATS_SRC 5
struct ggml_tensor * ggmlr_flash_attn_stats(const struct ggml_tensor * fwd);
struct ggml_tensor * ggmlr_flash_attn_back_saved(struct ggml_context * ctx, struct ggml_tensor * fwd, struct ggml_tensor * d);

/* ops_nn.c: internal backward ops of autodiff. dx = g * f'(x) for the
 * activation op (UNARY_BACK), and the LayerNorm gradient (NORM_BACK); g and x
 * F32 of one shape. */
struct ggml_tensor * ggmlr_unary_back(struct ggml_context * ctx, struct ggml_tensor * g, struct ggml_tensor * x, enum ggml_unary_op op);
struct ggml_tensor * ggmlr_norm_back(struct ggml_context * ctx, struct ggml_tensor * g, struct ggml_tensor * x, float eps);
bool ggmlr_unary_op_is_valid(int op);

/* ops_rope.c: the scalar parameters of a ROPE / ROPE_BACK node (upstream's
 * op_params layout: [1] n_dims, [2] mode, [4] n_ctx_orig, [5..10] the floats),
 * and a node of either op built from them (checked as ggml_rope_ext checks). */
struct ggmlr_rope_params {
    int32_t n_dims, mode, n_ctx_orig;
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow;
};
struct ggmlr_rope_params ggmlr_rope_params_of(const struct ggml_tensor * node);
struct ggml_tensor * ggmlr_rope_node(struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, struct ggml_tensor * b,
                                     struct ggml_tensor * c, const struct ggmlr_rope_params * prm);

/* op params are stored as raw 32-bit words */
static inline void ggmlr_set_op_param_f32(struct ggml_tensor * t, int i, float v) { memcpy(&t->op_params[i], &v, sizeof v); }
static inline float ggmlr_get_op_param_f32(const struct ggml_tensor * t, int i) { float v; memcpy(&v, &t->op_params[i], sizeof v); return v; }

/* flash_attn_back packing (docs/attention.md): slice offsets in floats. */
static inline int64_t ggmlr_pad16_floats(int64_t n) { return (n + 3) / 4 * 4; }  /* = ceil(4n / 16) * 16 / 4, without overflow */

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
/* Test hook: this thread's next computes fail at node `node` (-1: off), as a kernel calling ggmlr_compute_fail would. */
void ggmlr_test_fail_at_node(int node);

#endif

/*
 * ggml.h -- public API of ggmlr, a C11 tensor library with a ggml-compatible
 * interface whose fused attention is differentiable.
 *
 * Conventions (as upstream ggml): tensors have up to 4 dimensions, ne[0] varies
 * fastest, nb[] are byte strides. Ops are lazy: constructors record a node, and
 * nothing is computed until a graph containing it is computed.
 *
 * Errors never abort: constructors return NULL and set a thread-local message
 * (ggml_last_error()); a NULL argument propagates as NULL; functions that run
 * things return an enum ggml_status.
 */
#ifndef GGML_H
#define GGML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>  /* as upstream's ggml.h: programs written against it rely on it */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(GGML_SHARED) && defined(GGML_BUILD)
#define GGML_API __declspec(dllexport) extern
#elif defined(__GNUC__) || defined(__clang__)
#define GGML_API __attribute__((visibility("default"))) extern
#else
#define GGML_API extern
#endif

#define GGML_MAX_DIMS           4
#define GGML_MAX_SRC            10
#define GGML_MAX_NAME           64
#define GGML_MAX_OP_PARAMS      64
#define GGML_MAX_N_THREADS      512  /* entries of ggml_threadpool_params.cpumask */
#define GGML_MEM_ALIGN          16
#define GGML_DEFAULT_GRAPH_SIZE 2048

typedef uint16_t ggml_fp16_t;

/* Numbering follows upstream ggml (byte layouts too: docs/quant-types.md).
 * Tensors of F32, F16, BF16, I32 and of the quantized types with a
 * quantizer and a dequantizer here (Q4_0 .. Q8_K, IQ4_NL, IQ4_XS, MXFP4) can
 * be created; the others are named so that GGUF metadata of any upstream
 * file can be read. */
enum ggml_type {
    GGML_TYPE_F32     = 0,
    GGML_TYPE_F16     = 1,
    GGML_TYPE_Q4_0    = 2,
    GGML_TYPE_Q4_1    = 3,
    /* 4, 5: Q4_2, Q4_3, removed upstream */
    GGML_TYPE_Q5_0    = 6,
    GGML_TYPE_Q5_1    = 7,
    GGML_TYPE_Q8_0    = 8,
    GGML_TYPE_Q8_1    = 9,
    GGML_TYPE_Q2_K    = 10,
    GGML_TYPE_Q3_K    = 11,
    GGML_TYPE_Q4_K    = 12,
    GGML_TYPE_Q5_K    = 13,
    GGML_TYPE_Q6_K    = 14,
    GGML_TYPE_Q8_K    = 15,
    GGML_TYPE_IQ2_XXS = 16,  /* layout only: no quantizer or dequantizer here */
    GGML_TYPE_IQ2_XS  = 17,  /* layout only */
    GGML_TYPE_IQ3_XXS = 18,  /* layout only */
    GGML_TYPE_IQ1_S   = 19,  /* layout only */
    GGML_TYPE_IQ4_NL  = 20,
    GGML_TYPE_IQ3_S   = 21,  /* layout only */
    GGML_TYPE_IQ2_S   = 22,  /* layout only */
    GGML_TYPE_IQ4_XS  = 23,
    GGML_TYPE_I8      = 24,  /* layout only */
    GGML_TYPE_I16     = 25,  /* layout only */
    GGML_TYPE_I32     = 26,
    GGML_TYPE_I64     = 27,  /* layout only */
    GGML_TYPE_F64     = 28,  /* layout only */
    GGML_TYPE_IQ1_M   = 29,  /* layout only */
    GGML_TYPE_BF16    = 30,
    /* 31..33, 36..38: interleaved Q4_0 / IQ4_NL, removed upstream */
    GGML_TYPE_TQ1_0   = 34,  /* layout only */
    GGML_TYPE_TQ2_0   = 35,  /* layout only */
    GGML_TYPE_MXFP4   = 39,
    GGML_TYPE_NVFP4   = 40,  /* layout only */
    GGML_TYPE_Q1_0    = 41,  /* layout only */
    GGML_TYPE_Q2_0    = 42,  /* layout only */
    GGML_TYPE_COUNT   = 43
};

/* Values follow upstream ggml. */
enum ggml_status {
    GGML_STATUS_ALLOC_FAILED = -2,
    GGML_STATUS_FAILED       = -1,
    GGML_STATUS_SUCCESS      =  0,
    GGML_STATUS_ABORTED      =  1
};

enum ggml_op {
    GGML_OP_NONE = 0,
    GGML_OP_DUP,
    GGML_OP_ADD,
    GGML_OP_ADD_ID,
    GGML_OP_ADD1,
    GGML_OP_ACC,
    GGML_OP_SUB,
    GGML_OP_MUL,
    GGML_OP_DIV,
    GGML_OP_SQR,
    GGML_OP_SQRT,
    GGML_OP_LOG,
    GGML_OP_SIN,
    GGML_OP_COS,
    GGML_OP_SUM,
    GGML_OP_SUM_ROWS,
    GGML_OP_CUMSUM,
    GGML_OP_MEAN,
    GGML_OP_ARGMAX,
    GGML_OP_COUNT_EQUAL,
    GGML_OP_REPEAT,
    GGML_OP_REPEAT_BACK,
    GGML_OP_CONCAT,
    GGML_OP_SILU_BACK,
    GGML_OP_NORM,
    GGML_OP_RMS_NORM,
    GGML_OP_RMS_NORM_BACK,
    GGML_OP_GROUP_NORM,
    GGML_OP_L2_NORM,
    GGML_OP_MUL_MAT,
    GGML_OP_MUL_MAT_ID,
    GGML_OP_OUT_PROD,
    GGML_OP_SCALE,
    GGML_OP_SET,
    GGML_OP_CPY,
    GGML_OP_CONT,
    GGML_OP_RESHAPE,
    GGML_OP_VIEW,
    GGML_OP_PERMUTE,
    GGML_OP_TRANSPOSE,
    GGML_OP_GET_ROWS,
    GGML_OP_GET_ROWS_BACK,
    GGML_OP_SET_ROWS,
    GGML_OP_DIAG,
    GGML_OP_DIAG_MASK_INF,
    GGML_OP_DIAG_MASK_ZERO,
    GGML_OP_SOFT_MAX,
    GGML_OP_SOFT_MAX_BACK,
    GGML_OP_ROPE,
    GGML_OP_ROPE_BACK,
    GGML_OP_CLAMP,
    GGML_OP_CONV_TRANSPOSE_1D,
    GGML_OP_IM2COL,
    GGML_OP_IM2COL_BACK,
    GGML_OP_IM2COL_3D,
    GGML_OP_COL2IM_1D,
    GGML_OP_CONV_2D,
    GGML_OP_CONV_3D,
    GGML_OP_CONV_2D_DW,
    GGML_OP_CONV_TRANSPOSE_2D,
    GGML_OP_POOL_1D,
    GGML_OP_POOL_2D,
    GGML_OP_POOL_2D_BACK,
    GGML_OP_UPSCALE,
    GGML_OP_PAD,
    GGML_OP_PAD_REFLECT_1D,
    GGML_OP_ROLL,
    GGML_OP_ARANGE,
    GGML_OP_TIMESTEP_EMBEDDING,
    GGML_OP_ARGSORT,
    GGML_OP_TOP_K,
    GGML_OP_LEAKY_RELU,
    GGML_OP_TRI,
    GGML_OP_FILL,
    GGML_OP_FLASH_ATTN_EXT,
    GGML_OP_FLASH_ATTN_BACK,
    GGML_OP_SSM_CONV,
    GGML_OP_SSM_SCAN,
    GGML_OP_WIN_PART,
    GGML_OP_WIN_UNPART,
    GGML_OP_GET_REL_POS,
    GGML_OP_ADD_REL_POS,
    GGML_OP_RWKV_WKV6,
    GGML_OP_GATED_LINEAR_ATTN,
    GGML_OP_RWKV_WKV7,
    GGML_OP_SOLVE_TRI,
    GGML_OP_GATED_DELTA_NET,
    GGML_OP_LIGHTNING_INDEXER,
    GGML_OP_DSV4_HC_COMB,
    GGML_OP_DSV4_HC_PRE,
    GGML_OP_DSV4_HC_POST,
    GGML_OP_UNARY,               /* element-wise activations: op_params[0] is an enum ggml_unary_op */
    GGML_OP_MAP_CUSTOM1,
    GGML_OP_MAP_CUSTOM2,
    GGML_OP_MAP_CUSTOM3,
    GGML_OP_CUSTOM,
    GGML_OP_CROSS_ENTROPY_LOSS,
    GGML_OP_CROSS_ENTROPY_LOSS_BACK,
    GGML_OP_OPT_STEP_ADAMW,
    GGML_OP_OPT_STEP_SGD,
    GGML_OP_GLU,
    /* ggmlr's own: backward ops autodiff builds (not in upstream) */
    GGML_OP_NORM_BACK,           /* LayerNorm backward (internal to autodiff) */
    GGML_OP_UNARY_BACK,          /* g * f'(x) for the activation in op_params[0] (internal to autodiff) */
    GGML_OP_GLU_BACK,            /* the gradient of a GLU's a or b (internal to autodiff) */
    GGML_OP_UPSCALE_BACK,        /* the gradient of an UPSCALE's input (internal to autodiff) */
    GGML_OP_L2_NORM_BACK,        /* the gradient of L2_NORM (internal to autodiff) */
    GGML_OP_GROUP_NORM_BACK,     /* the gradient of GROUP_NORM (internal to autodiff) */
    GGML_OP_PAD_BACK,            /* the gradient of a circular PAD's or of PAD_REFLECT_1D's input (internal to autodiff) */
    GGML_OP_GET_REL_POS_BACK,    /* the gradient of GET_REL_POS's table (internal to autodiff) */
    GGML_OP_SSM_CONV_BACK,       /* the gradient of an SSM_CONV's sx or c (internal to autodiff) */
    GGML_OP_SSM_SCAN_BACK,       /* the gradient of one of an SSM_SCAN's s, x, dt, A, B, C (internal to autodiff) */
    GGML_OP_RWKV_WKV6_BACK,      /* the gradients of RWKV_WKV6's inputs, packed (internal to autodiff) */
    GGML_OP_GATED_LINEAR_ATTN_BACK, /* the gradients of GATED_LINEAR_ATTN's inputs, packed (internal to autodiff) */
    GGML_OP_RWKV_WKV7_BACK,      /* the gradients of RWKV_WKV7's inputs, packed (internal to autodiff) */
    GGML_OP_GATED_DELTA_NET_BACK, /* the gradients of GATED_DELTA_NET's inputs, packed (internal to autodiff) */
    GGML_OP_CONV_DIRECT_BACK,    /* the gradient of a CONV_2D / CONV_3D / CONV_2D_DW's kernel or data (internal to autodiff) */
    GGML_OP_IM2COL_3D_BACK,      /* the gradient of an IM2COL_3D's data: the patches added back (internal to autodiff) */
    GGML_OP_COUNT
};

/* Activations of GGML_OP_UNARY; values follow upstream ggml (ggml_unary refuses the ones not implemented yet). */
enum ggml_unary_op {
    GGML_UNARY_OP_ABS = 0,
    GGML_UNARY_OP_SGN,
    GGML_UNARY_OP_NEG,
    GGML_UNARY_OP_STEP,
    GGML_UNARY_OP_TANH,
    GGML_UNARY_OP_ELU,
    GGML_UNARY_OP_RELU,
    GGML_UNARY_OP_SIGMOID,
    GGML_UNARY_OP_GELU,
    GGML_UNARY_OP_GELU_QUICK,
    GGML_UNARY_OP_SILU,
    GGML_UNARY_OP_HARDSWISH,
    GGML_UNARY_OP_HARDSIGMOID,
    GGML_UNARY_OP_EXP,
    GGML_UNARY_OP_EXPM1,
    GGML_UNARY_OP_SOFTPLUS,
    GGML_UNARY_OP_GELU_ERF,
    GGML_UNARY_OP_XIELU,
    GGML_UNARY_OP_FLOOR,
    GGML_UNARY_OP_CEIL,
    GGML_UNARY_OP_ROUND,
    GGML_UNARY_OP_TRUNC,
    GGML_UNARY_OP_COUNT
};

/* Gates of GGML_OP_GLU (upstream's values): act(x) * g, x and g the two halves of a row or a and b */
enum ggml_glu_op {
    GGML_GLU_OP_REGLU = 0,
    GGML_GLU_OP_GEGLU,
    GGML_GLU_OP_SWIGLU,
    GGML_GLU_OP_SWIGLU_OAI,
    GGML_GLU_OP_GEGLU_ERF,
    GGML_GLU_OP_GEGLU_QUICK,
    GGML_GLU_OP_COUNT
};

/* ggml_tri: which triangle of each matrix is kept (upstream's values; column i0, row i1) */
enum ggml_tri_type {
    GGML_TRI_TYPE_UPPER_DIAG = 0,  /* i0 >= i1 */
    GGML_TRI_TYPE_UPPER      = 1,  /* i0 >  i1 */
    GGML_TRI_TYPE_LOWER_DIAG = 2,  /* i0 <= i1 */
    GGML_TRI_TYPE_LOWER      = 3   /* i0 <  i1 */
};

/* Pooling of ggml_pool_1d / ggml_pool_2d (upstream's values) */
enum ggml_op_pool {
    GGML_OP_POOL_MAX,
    GGML_OP_POOL_AVG,
    GGML_OP_POOL_COUNT,
};

/* Resampling of ggml_upscale / ggml_interpolate (upstream's values): the mode
 * in the low byte, or-ed with flags */
enum ggml_scale_mode {
    GGML_SCALE_MODE_NEAREST  = 0,
    GGML_SCALE_MODE_BILINEAR = 1,
    GGML_SCALE_MODE_BICUBIC  = 2,
    GGML_SCALE_MODE_COUNT
};
enum ggml_scale_flag {
    GGML_SCALE_FLAG_ALIGN_CORNERS = (1 << 8),
    GGML_SCALE_FLAG_ANTIALIAS     = (1 << 9),  /* with BILINEAR only */
};

/* rope modes (upstream values): ggml_rope_ext takes NORMAL and NEOX, ggml_rope_multi also the
 * multi-section ones, MROPE, VISION and IMROPE, with GGML_MROPE_SECTIONS sections */
#define GGML_ROPE_TYPE_NORMAL 0
#define GGML_ROPE_TYPE_NEOX   2
#define GGML_ROPE_TYPE_MROPE  8
#define GGML_ROPE_TYPE_VISION 24
#define GGML_ROPE_TYPE_IMROPE 40
#define GGML_MROPE_SECTIONS   4

enum ggml_tensor_flag {
    GGML_TENSOR_FLAG_INPUT  = 1,
    GGML_TENSOR_FLAG_OUTPUT = 2,
    GGML_TENSOR_FLAG_PARAM  = 4,
    GGML_TENSOR_FLAG_LOSS   = 8,
    GGML_TENSOR_FLAG_COMPUTE = 16, /* the graph computes it (ggml_build_forward_order and _select add without) */
    GGML_TENSOR_FLAG_CHECKPOINT = 32 /* extension: kept for the backward pass, the activations after it recomputed (ggml_set_checkpoint) */
};

struct ggml_backend_buffer;

struct ggml_tensor {
    enum ggml_type type;
    struct ggml_backend_buffer * buffer;  /* backend buffer holding data, or NULL */

    int64_t ne[GGML_MAX_DIMS];  /* number of elements per dimension */
    size_t  nb[GGML_MAX_DIMS];  /* stride in bytes per dimension */

    enum ggml_op op;
    int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)];
    int32_t flags;

    struct ggml_tensor * src[GGML_MAX_SRC];

    struct ggml_tensor * view_src;  /* the tensor whose memory this one views */
    size_t               view_offs; /* byte offset into view_src->data */

    void * data;
    char   name[GGML_MAX_NAME];
    void * extra;
    char   padding[8];  /* upstream's size and layout */
};

struct ggml_init_params {
    size_t mem_size;    /* bytes */
    void * mem_buffer;  /* if NULL, the context allocates it */
    bool   no_alloc;    /* tensors get metadata only; a backend buffer holds data */
};

struct ggml_context;
struct ggml_cgraph;

/* log output (upstream's ggml_log_set): the library's progress and profile
 * text goes to the callback; the default writes it to stderr. */
enum ggml_log_level {
    GGML_LOG_LEVEL_NONE  = 0,
    GGML_LOG_LEVEL_DEBUG = 1,
    GGML_LOG_LEVEL_INFO  = 2,
    GGML_LOG_LEVEL_WARN  = 3,
    GGML_LOG_LEVEL_ERROR = 4,
    GGML_LOG_LEVEL_CONT  = 5  /* continues the previous message */
};
typedef void (*ggml_log_callback)(enum ggml_log_level level, const char * text, void * user_data);
/* NULL restores the default. Set it before other threads use the library. */
GGML_API void ggml_log_set(ggml_log_callback log_callback, void * user_data);
GGML_API void ggml_log_get(ggml_log_callback * log_callback, void ** user_data);

/* errors */
GGML_API const char * ggml_last_error(void);   /* "" when there was none */
GGML_API void         ggml_clear_error(void);
GGML_API const char * ggml_status_to_string(enum ggml_status status);

/* fp16 */
GGML_API float       ggml_fp16_to_fp32(ggml_fp16_t x);
GGML_API ggml_fp16_t ggml_fp32_to_fp16(float x);
GGML_API void        ggml_fp16_to_fp32_row(const ggml_fp16_t * x, float * y, int64_t n);
GGML_API void        ggml_fp32_to_fp16_row(const float * x, ggml_fp16_t * y, int64_t n);

/* ---- tensor types and quantization (upstream's API; src/quant/) ---- */

/* bf16: the upper half of a float; from float rounds to nearest even and
 * keeps a NaN a quiet NaN (as upstream). */
typedef struct { uint16_t bits; } ggml_bf16_t;
GGML_API ggml_bf16_t ggml_fp32_to_bf16(float x);
GGML_API float       ggml_bf16_to_fp32(ggml_bf16_t x);
GGML_API void        ggml_bf16_to_fp32_row(const ggml_bf16_t * x, float * y, int64_t n);
GGML_API void        ggml_fp32_to_bf16_row_ref(const float * x, ggml_bf16_t * y, int64_t n);
GGML_API void        ggml_fp32_to_bf16_row(const float * x, ggml_bf16_t * y, int64_t n);

GGML_API int64_t ggml_blck_size(enum ggml_type type);           /* elements per block; 0 for an unknown type */
GGML_API size_t  ggml_row_size(enum ggml_type type, int64_t ne); /* bytes of ne elements (ne whole blocks) */
GGML_API bool    ggml_is_quantized(enum ggml_type type);

#if defined(__cplusplus)
#define GGML_RESTRICT __restrict__
#else
#define GGML_RESTRICT restrict
#endif
typedef void (*ggml_to_float_t)  (const void  * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
typedef void (*ggml_from_float_t)(const float * GGML_RESTRICT x, void  * GGML_RESTRICT y, int64_t k);

struct ggml_type_traits {
    const char *      type_name;
    int64_t           blck_size;
    int64_t           blck_size_interleave; /* 0: no interleaved types here */
    size_t            type_size;            /* bytes per block */
    bool              is_quantized;
    ggml_to_float_t   to_float;             /* k elements, k a multiple of blck_size */
    ggml_from_float_t from_float_ref;       /* the reference quantizer: upstream's bytes */
};
GGML_API const struct ggml_type_traits * ggml_get_type_traits(enum ggml_type type); /* NULL when out of range */

/* No tables to build here (the IQ1/IQ2/IQ3 quantizers are not implemented):
 * init and free are no-ops, kept for upstream's callers. */
GGML_API void ggml_quantize_init(enum ggml_type type);
GGML_API void ggml_quantize_free(void);
GGML_API bool ggml_quantize_requires_imatrix(enum ggml_type type);
/* Quantizes nrows rows of n_per_row floats from src + start into dst (at row
 * start / n_per_row); returns the bytes written, or 0 with a message
 * (ggml_last_error) for an unsupported type or bad arguments. imatrix: one
 * weight per column (NULL: none), used by Q4_0 .. Q5_1, Q2_K .. Q6_K, IQ4_NL
 * and IQ4_XS and ignored by the others, as upstream. */
GGML_API size_t ggml_quantize_chunk(enum ggml_type type, const float * src, void * dst, int64_t start,
                                    int64_t nrows, int64_t n_per_row, const float * imatrix);

/* context */
GGML_API struct ggml_context * ggml_init(struct ggml_init_params params);
GGML_API void   ggml_free(struct ggml_context * ctx);
GGML_API void   ggml_set_no_alloc(struct ggml_context * ctx, bool no_alloc);
GGML_API bool   ggml_get_no_alloc(struct ggml_context * ctx);
GGML_API size_t ggml_used_mem(const struct ggml_context * ctx);
GGML_API size_t ggml_get_mem_size(const struct ggml_context * ctx);
GGML_API size_t ggml_tensor_overhead(void);
/* nbytes of type hold whole rows of finite values (false and a message otherwise) */
GGML_API bool ggml_validate_row_data(enum ggml_type type, const void * data, size_t nbytes);
GGML_API size_t ggml_graph_overhead(void);
GGML_API size_t ggml_graph_overhead_custom(size_t size, bool grads);
GGML_API struct ggml_tensor * ggml_get_first_tensor(const struct ggml_context * ctx);
GGML_API struct ggml_tensor * ggml_get_next_tensor(const struct ggml_context * ctx, struct ggml_tensor * tensor);
GGML_API struct ggml_tensor * ggml_get_tensor(struct ggml_context * ctx, const char * name);

/* types and tensor facts */
GGML_API size_t       ggml_type_size(enum ggml_type type);   /* bytes per block */
GGML_API const char * ggml_type_name(enum ggml_type type);
GGML_API const char * ggml_op_name(enum ggml_op op);
GGML_API size_t       ggml_element_size(const struct ggml_tensor * tensor);
GGML_API int64_t      ggml_nelements(const struct ggml_tensor * tensor);
GGML_API int64_t      ggml_nrows(const struct ggml_tensor * tensor);
GGML_API size_t       ggml_nbytes(const struct ggml_tensor * tensor);
GGML_API int          ggml_n_dims(const struct ggml_tensor * tensor);
GGML_API bool         ggml_is_contiguous(const struct ggml_tensor * tensor);
GGML_API bool         ggml_is_scalar(const struct ggml_tensor * tensor);
GGML_API bool         ggml_are_same_shape(const struct ggml_tensor * a, const struct ggml_tensor * b);
GGML_API bool         ggml_can_repeat(const struct ggml_tensor * a, const struct ggml_tensor * b);

/* upstream's further tensor facts (a NULL tensor: false, 0 or "UNKNOWN") */
GGML_API size_t       ggml_nbytes_pad(const struct ggml_tensor * tensor);    /* ggml_nbytes rounded up to GGML_MEM_ALIGN */
GGML_API double       ggml_type_sizef(enum ggml_type type);   /* type_size / blck_size; 0 for an unknown type */
GGML_API const char * ggml_op_symbol(enum ggml_op op);        /* e.g. "x+y", "X*Y"; "UNKNOWN" out of range */
GGML_API bool ggml_is_transposed(const struct ggml_tensor * tensor);  /* nb[0] > nb[1] */
GGML_API bool ggml_is_permuted(const struct ggml_tensor * tensor);    /* some nb[i] > nb[i+1] */
GGML_API bool ggml_is_empty(const struct ggml_tensor * tensor);       /* some ne[i] == 0 */
GGML_API bool ggml_is_view(const struct ggml_tensor * tensor);        /* view_src != NULL */
GGML_API bool ggml_is_3d(const struct ggml_tensor * tensor);          /* ne[3] == 1 */
GGML_API bool ggml_is_contiguous_0(const struct ggml_tensor * tensor);    /* ggml_is_contiguous */
GGML_API bool ggml_is_contiguous_1(const struct ggml_tensor * tensor);    /* rows contiguous, dims >= 2 packed after dim 1 */
GGML_API bool ggml_is_contiguous_2(const struct ggml_tensor * tensor);    /* rows contiguous, dim 3 packed after dim 2 */
GGML_API bool ggml_is_contiguous_to_1(const struct ggml_tensor * tensor); /* dim 0 contiguous */
GGML_API bool ggml_is_contiguous_to_2(const struct ggml_tensor * tensor); /* dims 0, 1 contiguous */
GGML_API bool ggml_is_contiguous_to_3(const struct ggml_tensor * tensor); /* dims 0..2 contiguous */
GGML_API bool ggml_is_contiguously_allocated(const struct ggml_tensor * tensor); /* no gaps (permutation allowed) */
GGML_API bool ggml_is_contiguous_channels(const struct ggml_tensor * tensor);    /* CxWxHxN stored, permuted to WxHxCxN */
GGML_API bool ggml_is_contiguous_rows(const struct ggml_tensor * tensor);        /* dim 0 contiguous or one block */
GGML_API bool ggml_are_same_stride(const struct ggml_tensor * a, const struct ggml_tensor * b);
/* flat index i (0 <= i < ggml_nelements) into coordinates; a NULL output is
 * skipped. Out of range: every output 0 and a message. */
GGML_API void ggml_unravel_index(const struct ggml_tensor * tensor, int64_t i, int64_t * i0, int64_t * i1, int64_t * i2, int64_t * i3);

/* model file types (upstream's numbers) */
enum ggml_ftype {
    GGML_FTYPE_UNKNOWN              = -1,
    GGML_FTYPE_ALL_F32              = 0,
    GGML_FTYPE_MOSTLY_F16           = 1,
    GGML_FTYPE_MOSTLY_Q4_0          = 2,
    GGML_FTYPE_MOSTLY_Q4_1          = 3,
    GGML_FTYPE_MOSTLY_Q4_1_SOME_F16 = 4,
    GGML_FTYPE_MOSTLY_Q8_0          = 7,
    GGML_FTYPE_MOSTLY_Q5_0          = 8,
    GGML_FTYPE_MOSTLY_Q5_1          = 9,
    GGML_FTYPE_MOSTLY_Q2_K          = 10,
    GGML_FTYPE_MOSTLY_Q3_K          = 11,
    GGML_FTYPE_MOSTLY_Q4_K          = 12,
    GGML_FTYPE_MOSTLY_Q5_K          = 13,
    GGML_FTYPE_MOSTLY_Q6_K          = 14,
    GGML_FTYPE_MOSTLY_IQ2_XXS       = 15,
    GGML_FTYPE_MOSTLY_IQ2_XS        = 16,
    GGML_FTYPE_MOSTLY_IQ3_XXS       = 17,
    GGML_FTYPE_MOSTLY_IQ1_S         = 18,
    GGML_FTYPE_MOSTLY_IQ4_NL        = 19,
    GGML_FTYPE_MOSTLY_IQ3_S         = 20,
    GGML_FTYPE_MOSTLY_IQ2_S         = 21,
    GGML_FTYPE_MOSTLY_IQ4_XS        = 22,
    GGML_FTYPE_MOSTLY_IQ1_M         = 23,
    GGML_FTYPE_MOSTLY_BF16          = 24,
    GGML_FTYPE_MOSTLY_MXFP4         = 25,
    GGML_FTYPE_MOSTLY_NVFP4         = 26,
    GGML_FTYPE_MOSTLY_Q1_0          = 27,
    GGML_FTYPE_MOSTLY_Q2_0          = 28
};
/* the tensor type of a file type; GGML_TYPE_COUNT and a message for
 * UNKNOWN, MOSTLY_Q4_1_SOME_F16 and values outside the enum (upstream asserts) */
GGML_API enum ggml_type ggml_ftype_to_ggml_type(enum ggml_ftype ftype);

/* upstream's further context functions */
GGML_API void   ggml_reset(struct ggml_context * ctx);  /* forget every object; the memory is reused */
GGML_API void * ggml_get_mem_buffer(const struct ggml_context * ctx);
GGML_API size_t ggml_get_max_tensor_size(const struct ggml_context * ctx);  /* the largest ggml_nbytes of its tensors */
/* nbytes of scratch memory from the arena (not zeroed); NULL + message when it does not fit */
GGML_API void * ggml_new_buffer(struct ggml_context * ctx, size_t nbytes);
struct ggml_object;  /* a context's object header (opaque) */
GGML_API void   ggml_print_object(const struct ggml_object * obj);      /* to the log (INFO) */
GGML_API void   ggml_print_objects(const struct ggml_context * ctx);    /* every object of the context, to the log */

/* tensors */
GGML_API struct ggml_tensor * ggml_new_tensor(struct ggml_context * ctx, enum ggml_type type, int n_dims, const int64_t * ne);
GGML_API struct ggml_tensor * ggml_new_tensor_1d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0);
GGML_API struct ggml_tensor * ggml_new_tensor_2d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1);
GGML_API struct ggml_tensor * ggml_new_tensor_3d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2);
GGML_API struct ggml_tensor * ggml_new_tensor_4d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
GGML_API struct ggml_tensor * ggml_new_f32(struct ggml_context * ctx, float value);
GGML_API struct ggml_tensor * ggml_dup_tensor(struct ggml_context * ctx, const struct ggml_tensor * src);
GGML_API struct ggml_tensor * ggml_view_tensor(struct ggml_context * ctx, struct ggml_tensor * src);

GGML_API void *               ggml_get_data(const struct ggml_tensor * tensor);
GGML_API float *              ggml_get_data_f32(const struct ggml_tensor * tensor); /* NULL unless F32 */
GGML_API struct ggml_tensor * ggml_set_name(struct ggml_tensor * tensor, const char * name);
GGML_API const char *         ggml_get_name(const struct ggml_tensor * tensor);

/* Element access on CPU-resident data; any layout (strides are honoured). */
GGML_API struct ggml_tensor * ggml_set_zero(struct ggml_tensor * tensor);
GGML_API struct ggml_tensor * ggml_set_f32(struct ggml_tensor * tensor, float value); /* fill */
GGML_API float ggml_get_f32_1d(const struct ggml_tensor * tensor, int64_t i);
GGML_API void  ggml_set_f32_1d(const struct ggml_tensor * tensor, int64_t i, float value);
GGML_API float ggml_get_f32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3);
GGML_API void  ggml_set_f32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3, float value);

/* ops (lazy) */
GGML_API struct ggml_tensor * ggml_dup(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_cpy(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
/* a copied into a new tensor of type `type` (F32 -> I32 truncates, integers saturate) */
GGML_API struct ggml_tensor * ggml_cast(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_type type);
GGML_API struct ggml_tensor * ggml_cont(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_reshape(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_reshape_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0);
GGML_API struct ggml_tensor * ggml_reshape_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1);
GGML_API struct ggml_tensor * ggml_reshape_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2);
GGML_API struct ggml_tensor * ggml_reshape_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
GGML_API struct ggml_tensor * ggml_view_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, size_t offset);
GGML_API struct ggml_tensor * ggml_view_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset);
GGML_API struct ggml_tensor * ggml_view_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2, size_t offset);
GGML_API struct ggml_tensor * ggml_view_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, size_t nb1, size_t nb2, size_t nb3, size_t offset);
GGML_API struct ggml_tensor * ggml_permute(struct ggml_context * ctx, struct ggml_tensor * a, int axis0, int axis1, int axis2, int axis3);
GGML_API struct ggml_tensor * ggml_transpose(struct ggml_context * ctx, struct ggml_tensor * a);

/* Binary ops broadcast b over a (each a->ne[i] a multiple of b->ne[i]). */
GGML_API struct ggml_tensor * ggml_add(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_sub(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_mul(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_div(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_add_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
/* a + b, the result of type `type` (F32, F16, BF16; a of any type ggml_cast takes) */
GGML_API struct ggml_tensor * ggml_add_cast(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, enum ggml_type type);
GGML_API struct ggml_tensor * ggml_scale(struct ggml_context * ctx, struct ggml_tensor * a, float s);
GGML_API struct ggml_tensor * ggml_sqr(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_sqrt(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_log(struct ggml_context * ctx, struct ggml_tensor * a);
/* a + b, b a scalar (upstream deprecates it for ggml_add) */
GGML_API struct ggml_tensor * ggml_add1(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_add1_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_sin(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_sin_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_cos(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_cos_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
/* min(max(a, min), max): a new tensor (upstream's writes over a) */
GGML_API struct ggml_tensor * ggml_clamp(struct ggml_context * ctx, struct ggml_tensor * a, float min, float max);
GGML_API struct ggml_tensor * ggml_leaky_relu(struct ggml_context * ctx, struct ggml_tensor * a, float negative_slope, bool inplace);
GGML_API struct ggml_tensor * ggml_sum(struct ggml_context * ctx, struct ggml_tensor * a);      /* -> [1] */
GGML_API struct ggml_tensor * ggml_sum_rows(struct ggml_context * ctx, struct ggml_tensor * a); /* -> [1,ne1,ne2,ne3] */
GGML_API struct ggml_tensor * ggml_mean(struct ggml_context * ctx, struct ggml_tensor * a);     /* row means -> [1,ne1,ne2,ne3] */
GGML_API struct ggml_tensor * ggml_repeat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);      /* a tiled to b's shape */
GGML_API struct ggml_tensor * ggml_repeat_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b); /* a summed down to b's shape */
/* a + b written into the strided region of a (nb1..nb3, byte offset) -> new tensor shaped like a */
GGML_API struct ggml_tensor * ggml_acc(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset);

/* a [K, M, ...], b [K, N, ...] -> [M, N, ...]; a broadcast over b's dims 2, 3. */
GGML_API struct ggml_tensor * ggml_mul_mat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);

GGML_API struct ggml_tensor * ggml_soft_max(struct ggml_context * ctx, struct ggml_tensor * a);
/* softmax(a*scale + slope*mask) along rows; mask [ne0, >=ne1, ...] F16 or F32, may be NULL. */
GGML_API struct ggml_tensor * ggml_soft_max_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask, float scale, float max_bias);

/*
 * Fused attention. q [DK,N,H,B] F32; k [DK,M,Hkv,B], v [DV,M,Hkv,B] F32 or F16;
 * mask [M, >=N, mh, mb] F16 or F32 or NULL; H % Hkv == 0.  -> [DV, H, N, B] F32.
 */
GGML_API struct ggml_tensor * ggml_flash_attn_ext(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                                  struct ggml_tensor * v, struct ggml_tensor * mask,
                                                  float scale, float max_bias, float logit_softcap);
/*
 * Gradients of sum(d * flash_attn_ext(q,k,v,mask,scale)) packed in one 1-D F32
 * tensor [dq | dk | dv], each slice starting on a 16-byte boundary, zero padding.
 */
GGML_API struct ggml_tensor * ggml_flash_attn_back(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                                   struct ggml_tensor * v, struct ggml_tensor * mask,
                                                   struct ggml_tensor * d, float scale);

/*
 * State-space models (Mamba), upstream's ops.
 * ggml_ssm_conv: the depthwise causal convolution of each channel's window,
 * sx [d_conv - 1 + n_t, d_inner, n_s] by c [d_conv, d_inner] -> [d_inner, n_t, n_s]:
 *   y[i, t, s] = sum_k sx[t + k, i, s] c[k, i].
 * ggml_ssm_scan: the selective scan. s [d_state, head_dim, n_head, >= 1] (the
 * states, row ids[q] of dim 3 starting sequence q), x [head_dim, n_head, n_t, n_s],
 * dt [n_head, n_t, n_s], A [d_state, n_head] (Mamba-1, K = 1) or [1, n_head]
 * (Mamba-2), B and C [d_state, n_group, n_t, n_s] (n_head % n_group == 0),
 * ids I32 [n_s]; K >= 1 states kept. Per token, with sp = softplus(dt):
 *   h = h * exp(sp A) + B x sp,  y = sum over d_state of h C.
 * The result is 1-D: y [head_dim, n_head, n_t, n_s], then K states
 * [d_state, head_dim, n_head, n_s]: state k is h after token n_t - 1 - k
 * (k = 0 the last; k = n_t the starting state; zeros past it).
 */
GGML_API struct ggml_tensor * ggml_ssm_conv(struct ggml_context * ctx, struct ggml_tensor * sx, struct ggml_tensor * c);
GGML_API struct ggml_tensor * ggml_ssm_scan(struct ggml_context * ctx, struct ggml_tensor * s, struct ggml_tensor * x,
                                            struct ggml_tensor * dt, struct ggml_tensor * A, struct ggml_tensor * B,
                                            struct ggml_tensor * C, struct ggml_tensor * ids, int64_t K);
/* ---- triangular solve; DeepSeek's sparse-attention indexer and hyper-connections (upstream's newest ops) ---- */

/* X with A X = B: a [n, n, ne2, ne3] triangular (element (i0, i1) is row i1,
 * column i0), b [k, n, ne2, ne3] (k columns), both F32 -> [k, n, ne2, ne3].
 * lower: A's lower triangle (else its upper); uni: a diagonal of ones (A's
 * own diagonal is not read). left = false (X A = B) is refused, as upstream's
 * CPU backend does; upstream also refuses upper and uni (ggmlr solves them). */
GGML_API struct ggml_tensor * ggml_solve_tri(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                             bool left, bool lower, bool uni);
/* DeepSeek's lightning indexer: q [D, H, N, S] F32, k [D, 1, KV, S] (F32, F16, BF16 or quantized),
 * weights [H, N, 1, S] F32 (prescaled), mask [KV, N, 1, S'] F16 (or F32), S % S' == 0 -> [KV, N, 1, S]:
 *   res[kv, t, 0, s] = sum_h max(q[:, h, t, s] . k[:, 0, kv, s], 0) weights[h, t, 0, s] + mask[kv, t, 0, s % S'] */
GGML_API struct ggml_tensor * ggml_lightning_indexer(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                                     struct ggml_tensor * weights, struct ggml_tensor * mask);
/* DeepSeek V4 hyper-connections (hc streams instead of one residual stream), F32.
 * hc_comb: mixes [(2 + hc) hc, T], scale [>= 3], base [(2 + hc) hc] -> comb [hc, hc, T]:
 *   logits[d, s, t] = mixes[2 hc + d + hc s, t] scale[2] + base[2 hc + d + hc s]; a softmax over d, + eps,
 *   then the sums over s brought to 1 (each divided by its sum + eps), then n_iter - 1 more rounds of
 *   over d, then over s (Sinkhorn); n_iter >= 1. Upstream takes hc = 4 only.
 * hc_pre: x [E, hc, T], weights [hc, T] -> [E, T]: res[i, t] = sum_h x[i, h, t] weights[h, t].
 * hc_post: x [E, T], residual [E, hc, T], post [hc, T], comb [hc, hc, T] -> [E, hc, T]:
 *   res[i, d, t] = x[i, t] post[d, t] + sum_s residual[i, s, t] comb[d, s, t]. */
GGML_API struct ggml_tensor * ggml_dsv4_hc_comb(struct ggml_context * ctx, struct ggml_tensor * mixes, struct ggml_tensor * scale,
                                                struct ggml_tensor * base, float eps, int32_t n_iter);
GGML_API struct ggml_tensor * ggml_dsv4_hc_pre(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * weights);
GGML_API struct ggml_tensor * ggml_dsv4_hc_post(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * residual,
                                                struct ggml_tensor * post, struct ggml_tensor * comb);
/*
 * Recurrent linear attention (upstream's RWKV / GLA / DeltaNet ops). Each
 * result packs the output, then the recurrent state after the last token:
 * F32 [S*H, n_tokens + S*n_seqs] (gated_delta_net: [S*H, n_tokens*n_seqs + K*S*n_seqs]).
 * k, v, r, td, q, g, w, a, b [S, H, n_tokens] F32 (the n_seqs sequences one
 * after another along n_tokens); state [S*S*H, n_seqs] F32, contiguous.
 * rwkv_wkv6: tf [S, H]; y_t = r_t^T (S_{t-1} + diag(tf) k_t v_t^T),  S_t = diag(td_t) S_{t-1} + k_t v_t^T.
 * gated_linear_attn: S_t = diag(g_t) S_{t-1} + k_t v_t^T,  y_t = scale q_t^T S_t.
 * rwkv_wkv7: S_t = S_{t-1} diag(w_t) + v_t k_t^T + (S_{t-1} a_t) b_t^T,  y_t = S_t r_t.
 */
GGML_API struct ggml_tensor * ggml_rwkv_wkv6(struct ggml_context * ctx, struct ggml_tensor * k, struct ggml_tensor * v,
                                             struct ggml_tensor * r, struct ggml_tensor * tf, struct ggml_tensor * td,
                                             struct ggml_tensor * state);
GGML_API struct ggml_tensor * ggml_gated_linear_attn(struct ggml_context * ctx, struct ggml_tensor * k, struct ggml_tensor * v,
                                                     struct ggml_tensor * q, struct ggml_tensor * g, struct ggml_tensor * state,
                                                     float scale);
GGML_API struct ggml_tensor * ggml_rwkv_wkv7(struct ggml_context * ctx, struct ggml_tensor * r, struct ggml_tensor * w,
                                             struct ggml_tensor * k, struct ggml_tensor * v, struct ggml_tensor * a,
                                             struct ggml_tensor * b, struct ggml_tensor * state);
/*
 * Gated delta rule. q, k [S, H_k, n_tokens, n_seqs_k] (H % H_k == 0, n_seqs % n_seqs_k == 0);
 * v [S, H, n_tokens, n_seqs]; g [1 or S, H, n_tokens, n_seqs] (log decay, scalar or per key);
 * beta [1, H, n_tokens, n_seqs]; state [S, S, H, n_seqs] (the initial state); K >= 1 snapshots.
 * Result [S*H, n_tokens*n_seqs + K*S*n_seqs]: the outputs, then K states, slot s the state
 * s tokens before the end (slots past n_tokens hold the initial state).
 */
GGML_API struct ggml_tensor * ggml_gated_delta_net(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                                   struct ggml_tensor * v, struct ggml_tensor * g, struct ggml_tensor * beta,
                                                   struct ggml_tensor * state, int64_t K);

/* ---- training ops (upstream names, signatures and meaning) ---- */

GGML_API const char *       ggml_unary_op_name(enum ggml_unary_op op);
GGML_API enum ggml_unary_op ggml_get_unary_op(const struct ggml_tensor * tensor);
GGML_API struct ggml_tensor * ggml_unary(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op);
GGML_API struct ggml_tensor * ggml_unary_inplace(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op);
/* Activations, each with its _inplace form (the result is a view of a, written over it; autodiff refuses it). */
GGML_API struct ggml_tensor * ggml_abs(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_abs_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_sgn(struct ggml_context * ctx, struct ggml_tensor * a); /* -1, 0, 1 */
GGML_API struct ggml_tensor * ggml_sgn_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_neg(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_neg_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_step(struct ggml_context * ctx, struct ggml_tensor * a); /* x > 0 */
GGML_API struct ggml_tensor * ggml_step_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_tanh(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_tanh_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_elu(struct ggml_context * ctx, struct ggml_tensor * a); /* x > 0 ? x : e^x - 1 */
GGML_API struct ggml_tensor * ggml_elu_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_relu(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_relu_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_sigmoid(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_sigmoid_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_gelu(struct ggml_context * ctx, struct ggml_tensor * a); /* tanh approximation */
GGML_API struct ggml_tensor * ggml_gelu_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_gelu_quick(struct ggml_context * ctx, struct ggml_tensor * a); /* x sigmoid(1.702 x) */
GGML_API struct ggml_tensor * ggml_gelu_quick_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_silu(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_silu_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_exp(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_exp_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_expm1(struct ggml_context * ctx, struct ggml_tensor * a); /* e^x - 1 */
GGML_API struct ggml_tensor * ggml_expm1_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_softplus(struct ggml_context * ctx, struct ggml_tensor * a); /* log(1 + e^x) */
GGML_API struct ggml_tensor * ggml_softplus_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_gelu_erf(struct ggml_context * ctx, struct ggml_tensor * a); /* exact, with erf */
GGML_API struct ggml_tensor * ggml_gelu_erf_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_floor(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_floor_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_ceil(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_ceil_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_round(struct ggml_context * ctx, struct ggml_tensor * a); /* halves away from 0 */
GGML_API struct ggml_tensor * ggml_round_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_trunc(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_trunc_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
/* a = dy, b = x: dy * silu'(x) */
GGML_API struct ggml_tensor * ggml_silu_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_hardswish(struct ggml_context * ctx, struct ggml_tensor * a);   /* x relu6(x + 3) / 6 */
GGML_API struct ggml_tensor * ggml_hardsigmoid(struct ggml_context * ctx, struct ggml_tensor * a); /* relu6(x + 3) / 6 */
/* xIELU: x > 0: alpha_p' x^2 + beta x; else alpha_n' (expm1(min(x, eps)) - x) + beta x, with
 * alpha_p' = softplus(alpha_p), alpha_n' = beta + softplus(alpha_n) (stored so in op_params [1..4]) */
GGML_API struct ggml_tensor * ggml_xielu(struct ggml_context * ctx, struct ggml_tensor * a, float alpha_n, float alpha_p, float beta, float eps);

/* Gated linear units. a [n, rows, ...]: y [n/2, rows, ...] = act(x) * g with x
 * the first half of each row and g the second (swapped: the other way round);
 * with b (_split): y = act(a) * b, a and b shaped alike. F32, any layout.
 * SWIGLU_OAI: x = min(x, limit), g = clamp(g, -limit, limit),
 * y = x sigmoid(alpha x) (g + 1). */
GGML_API const char *       ggml_glu_op_name(enum ggml_glu_op op);
GGML_API enum ggml_glu_op   ggml_get_glu_op(const struct ggml_tensor * tensor);
GGML_API struct ggml_tensor * ggml_glu(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_glu_op op, bool swapped);
GGML_API struct ggml_tensor * ggml_reglu(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_reglu_swapped(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_geglu(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_geglu_swapped(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_swiglu(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_swiglu_swapped(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_geglu_erf(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_geglu_erf_swapped(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_geglu_quick(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_geglu_quick_swapped(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_glu_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, enum ggml_glu_op op);
GGML_API struct ggml_tensor * ggml_reglu_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_geglu_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_swiglu_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_geglu_erf_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_geglu_quick_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_swiglu_oai(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float alpha, float limit);

/*
 * Convolution (upstream's layouts, ne0 fastest). 2-D: kernel a [KW, KH, IC, OC],
 * data b [IW, IH, IC, N]; 1-D: a [K, IC, OC], b [IW, IC, N]. Output size per
 * axis (I + 2p - d(K - 1) - 1) / s + 1. ggml_im2col: the patches, F32
 * [IC*KH*KW, OW, OH, N] (1-D: [IC*K, OW, N]), element ic*KH*KW + kh*KW + kw
 * (zero outside b); a is read for its shape only. ggml_im2col_back: its
 * adjoint, as upstream's kernel reads it: a = the gradient of an im2col result,
 * b = the kernel (shape only), ne = the data's shape -> F32 [ne]. The convolutions are
 * im2col + mul_mat (F32 kernels): conv_1d -> [OW, OC, N], conv_2d -> [OW, OH, OC, N];
 * _ph: padding K/2, conv_2d_sk_p0: stride = kernel size and no padding, conv_2d_s1_ph:
 * stride 1 and padding K/2. ggml_conv_2d_dw: depthwise, a [KW, KH, 1, C], b [IW, IH, C, N].
 * ggml_conv_1d_dw: depthwise, a [K, 1, C], b [IL, C, N] -> [OW, C, N] (_ph: padding K/2).
 */
GGML_API struct ggml_tensor * ggml_im2col(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int s1, int p0,
                                          int p1, int d0, int d1, bool is_2D, enum ggml_type dst_type);
GGML_API struct ggml_tensor * ggml_im2col_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int64_t * ne, int s0,
                                               int s1, int p0, int p1, int d0, int d1, bool is_2D);
GGML_API struct ggml_tensor * ggml_conv_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int p0, int d0);
GGML_API struct ggml_tensor * ggml_conv_1d_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s, int d);
GGML_API struct ggml_tensor * ggml_conv_2d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int s1, int p0,
                                           int p1, int d0, int d1);
GGML_API struct ggml_tensor * ggml_conv_2d_sk_p0(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_conv_2d_s1_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_conv_2d_dw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int s1, int p0,
                                              int p1, int d0, int d1);
GGML_API struct ggml_tensor * ggml_conv_1d_dw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int p0, int d0);
GGML_API struct ggml_tensor * ggml_conv_1d_dw_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int d0);

/*
 * Direct convolutions (no patch buffer), F32 data, F32 or F16 kernel, F32 result.
 * ggml_conv_2d_direct: a [KW, KH, IC, OC], b [IW, IH, IC, N] -> [OW, OH, OC, N].
 * ggml_conv_2d_dw_direct: depthwise, a [KW, KH, 1, C], b [IW, IH, C, N] -> [OW, OH, C, N];
 * for b stored channels first (ggml_is_contiguous_channels) the result is
 * stored channels first too, as upstream's.
 * ggml_conv_3d_direct: a [KW, KH, KD, IC*OC] (channel oc*IC + ic), b [IW, IH, ID, IC*N]
 * (channel n*IC + ic) -> [OW, OH, OD, OC*N] (channel n*OC + oc); n_channels = IC,
 * n_batch = N, n_channels_out = OC.
 * ggml_im2col_3d: the patches of b [IW, IH, ID, IC*N] for kernel a [KW, KH, KD, OC*IC]
 * (its KW, KH, KD only) -> [IC*KD*KH*KW, OW, OH, OD*N], element ((ic*KD + kd)*KH + kh)*KW + kw,
 * zero outside b; N = b->ne[3] / IC rounded down; dst_type F32 or F16.
 * ggml_col2im_1d: scatter-add of columns a [K*OC, T_in] (element oc*K + k) onto
 * [T_out, OC], y[t s0 + k - p0, oc] += a[oc*K + k, t], T_out = (T_in - 1) s0 + K - 2 p0;
 * F32, F16 or BF16 (the result of a's type, summed in F32).
 */
GGML_API struct ggml_tensor * ggml_conv_2d_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int s1,
                                                  int p0, int p1, int d0, int d1);
GGML_API struct ggml_tensor * ggml_conv_2d_dw_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int stride0,
                                                     int stride1, int pad0, int pad1, int dilation0, int dilation1);
GGML_API struct ggml_tensor * ggml_conv_3d_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int s1,
                                                  int s2, int p0, int p1, int p2, int d0, int d1, int d2, int n_channels, int n_batch,
                                                  int n_channels_out);
/* upstream's 3-D convolution: im2col_3d + mul_mat (the same result as ggml_conv_3d_direct with IC channels) */
GGML_API struct ggml_tensor * ggml_conv_3d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int64_t IC, int s0, int s1,
                                           int s2, int p0, int p1, int p2, int d0, int d1, int d2);
GGML_API struct ggml_tensor * ggml_im2col_3d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int64_t IC, int s0,
                                             int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2, enum ggml_type dst_type);
GGML_API struct ggml_tensor * ggml_col2im_1d(struct ggml_context * ctx, struct ggml_tensor * a, int s0, int oc, int p0);

/* Transposed convolution (the adjoint of a strided convolution, no padding):
 * y[l s + k, oc] += sum_ic a[k, oc, ic] b[l, ic]. 1-D: a [K, OC, IC], b [IL, IC]
 * (a matrix; p0 must be 0, d0 1, as upstream's) -> [(IL - 1) s0 + K, OC];
 * 2-D: a [KW, KH, OC, IC], b [IW, IH, IC, N] -> [(IW - 1) s + KW, (IH - 1) s + KH, OC, N]. F32. */
GGML_API struct ggml_tensor * ggml_conv_transpose_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s0, int p0,
                                                     int d0);
GGML_API struct ggml_tensor * ggml_conv_transpose_2d_p0(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int stride);

/*
 * Pooling of F32 a along ne0 (1-D) or ne0, ne1 (2-D), each plane apart; output
 * size (I + 2p - k) / s + 1, windows start at o*s - p and skip what lies outside a.
 * MAX: the largest element inside; AVG: 1-D divides by the elements inside,
 * 2-D by k0*k1 (upstream's). Paddings are whole numbers (p0, p1 are float in
 * upstream's signature). ggml_pool_2d_back: a = the gradient of a pool_2d
 * result, af = its input -> F32 shaped like af (MAX: to the first largest).
 */
GGML_API struct ggml_tensor * ggml_pool_1d(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op_pool op, int k0, int s0, int p0);
GGML_API struct ggml_tensor * ggml_pool_2d(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op_pool op, int k0, int k1, int s0,
                                           int s1, float p0, float p1);
GGML_API struct ggml_tensor * ggml_pool_2d_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * af, enum ggml_op_pool op,
                                                int k0, int k1, int s0, int s1, float p0, float p1);

/*
 * Shape ops (upstream's meaning). ggml_concat: a and b joined along dim, the
 * other dims equal, one type. ggml_pad_ext: lp zeros before and rp after
 * each dim (>= 0); ggml_pad: after only. ggml_pad_ext_circular and
 * ggml_pad_circular: the same sizes, filled from the other side of the torus,
 * out[i] = a[(i - lp) mod a->ne] per dim (a dim that is padded must not be
 * empty; the paddings may exceed a->ne: the torus is wrapped again).
 * ggml_pad_reflect_1d: p0 before and p1 after dim 0, mirrored about the
 * edge without repeating it ([a, b, c, d] with 1, 2 -> [b, a, b, c, d, c, b]),
 * 0 <= p0, p1 < a->ne[0]. ggml_interpolate: F32 a resampled to
 * [ne0, ne1, ne2, ne3], scale factor sf = ne / a->ne per dim; NEAREST reads
 * a[floor(i / sf)] on every dim; BILINEAR mixes the 2x2 neighbours of
 * x = (i + 0.5) / sf - 0.5 on dims 0, 1 (clamped to the edges; with
 * GGML_SCALE_FLAG_ALIGN_CORNERS x = i / sf, sf = (ne - 1) / (a->ne - 1));
 * BICUBIC the 4x4 around x with Keys' cubic weights (alpha -0.75);
 * BILINEAR | GGML_SCALE_FLAG_ANTIALIAS the triangle filter over
 * max(1, 1 / sf) inputs each side, normalised (upstream's window); all modes
 * are NEAREST on dims 2, 3. ggml_upscale: ne0, ne1 times scale_factor (> 1);
 * ggml_upscale_ext: ggml_interpolate with int sizes (upstream deprecates it).
 */
GGML_API struct ggml_tensor * ggml_concat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int dim);
GGML_API struct ggml_tensor * ggml_pad(struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1, int p2, int p3);
GGML_API struct ggml_tensor * ggml_pad_ext(struct ggml_context * ctx, struct ggml_tensor * a, int lp0, int rp0, int lp1, int rp1, int lp2, int rp2,
                                           int lp3, int rp3);
GGML_API struct ggml_tensor * ggml_pad_circular(struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1, int p2, int p3);
GGML_API struct ggml_tensor * ggml_pad_ext_circular(struct ggml_context * ctx, struct ggml_tensor * a, int lp0, int rp0, int lp1, int rp1, int lp2,
                                                    int rp2, int lp3, int rp3);
GGML_API struct ggml_tensor * ggml_pad_reflect_1d(struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1);
GGML_API struct ggml_tensor * ggml_upscale(struct ggml_context * ctx, struct ggml_tensor * a, int scale_factor, enum ggml_scale_mode mode);
GGML_API struct ggml_tensor * ggml_upscale_ext(struct ggml_context * ctx, struct ggml_tensor * a, int ne0, int ne1, int ne2, int ne3,
                                               enum ggml_scale_mode mode);
GGML_API struct ggml_tensor * ggml_interpolate(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                                               int64_t ne3, uint32_t mode);

/* Row-wise normalisation along ne0: (x - mean) / sqrt(var + eps), and x / sqrt(mean(x^2) + eps). */
GGML_API struct ggml_tensor * ggml_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps);
GGML_API struct ggml_tensor * ggml_rms_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps);
/* a = dy, b = x: the gradient of rms_norm(x) with respect to x. */
GGML_API struct ggml_tensor * ggml_rms_norm_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float eps);
/* each row (along ne0) over max(its 2-norm, eps) */
GGML_API struct ggml_tensor * ggml_l2_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps);
/* a [ne0, ne1, C, N]: the channels (ne2) in n_groups groups of ceil(C / n_groups) (the last may be
 * smaller), each group of each ne3 normalised over its elements: (x - mean) / sqrt(var + eps) */
GGML_API struct ggml_tensor * ggml_group_norm(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps);

/* Rows of a [ne0, rows, ne2, ne3] picked by I32 indices b [n, ne2, ne3] -> [ne0, n, ne2, ne3].
 * An index outside [0, rows) fails the compute with a message. */
GGML_API struct ggml_tensor * ggml_get_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
/* a = gradient of a get_rows result, b = its indices, c = its data (shape only): rows of a added into zeros shaped like c. */
GGML_API struct ggml_tensor * ggml_get_rows_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c);

/* ---- writes into tensors, masks, generators (upstream's semantics) ---- */
/* Rows of b [ne0, n, ne2, ne3] (F32 or F16) written into a [ne0, rows, ne2, ne3] (F32 or F16) at the rows
 * c [n, ne11, ne12] (I32; upstream also takes I64), c broadcast over b's dims 2, 3 (ne2 % ne11 == 0,
 * ne3 % ne12 == 0). The result is a view of a (written in place). An index outside [0, rows), or one
 * destination row named twice in a batch, fails the compute with a message. */
GGML_API struct ggml_tensor * ggml_set_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c);
/* a with b written over the strided region of a (nb1..nb3, byte offset), F32 or I32: a new tensor
 * (a view of a for _inplace); _1d and _2d take the missing strides from a. */
GGML_API struct ggml_tensor * ggml_set(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset);
GGML_API struct ggml_tensor * ggml_set_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset);
GGML_API struct ggml_tensor * ggml_set_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t offset);
GGML_API struct ggml_tensor * ggml_set_1d_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t offset);
GGML_API struct ggml_tensor * ggml_set_2d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t offset);
GGML_API struct ggml_tensor * ggml_set_2d_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t offset);
/* a [n, 1, ne2, ne3] -> [n, n, ne2, ne3]: a's row on the diagonal, zeros elsewhere. */
GGML_API struct ggml_tensor * ggml_diag(struct ggml_context * ctx, struct ggml_tensor * a);
/* Element (i0, i1) of each matrix set to -Inf (or 0) where i0 > n_past + i1; n_past >= 0. */
GGML_API struct ggml_tensor * ggml_diag_mask_inf(struct ggml_context * ctx, struct ggml_tensor * a, int n_past);
GGML_API struct ggml_tensor * ggml_diag_mask_inf_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_past);
GGML_API struct ggml_tensor * ggml_diag_mask_zero(struct ggml_context * ctx, struct ggml_tensor * a, int n_past);
GGML_API struct ggml_tensor * ggml_diag_mask_zero_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_past);
/* Square matrices of a (contiguous F32) with zeros outside the triangle `type` keeps. */
GGML_API struct ggml_tensor * ggml_tri(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_tri_type type);
/* A tensor shaped like a (contiguous F32 or F16) holding c everywhere; _inplace writes a. */
GGML_API struct ggml_tensor * ggml_fill(struct ggml_context * ctx, struct ggml_tensor * a, float c);
GGML_API struct ggml_tensor * ggml_fill_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float c);
/* [ceil((stop - start) / step)] F32: start + step * i; stop > start, step > 0. */
GGML_API struct ggml_tensor * ggml_arange(struct ggml_context * ctx, float start, float stop, float step);
/* Mixture of experts (upstream's shapes). add_id: dst[i0, i1, i2, i3] = a[i0, i1, i2, i3] + b[i0, ids[i1, i2]],
 * a F32 [ne0, n_used, n_tokens, ne3], b F32 [ne0, n_expert], ids I32 [n_used, n_tokens].
 * mul_mat_id: c[:, e, t] = mul_mat(as[:, :, ids[e, t]], b[:, e % b->ne[1], t]), as F32 [K, M, n_expert],
 * b F32 [K, n_b, n_tokens] (n_used % n_b == 0), ids I32 [n_used, n_tokens] -> [M, n_used, n_tokens].
 * An expert id outside [0, n_expert) fails the compute with a message. */
GGML_API struct ggml_tensor * ggml_add_id(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * ids);
GGML_API struct ggml_tensor * ggml_mul_mat_id(struct ggml_context * ctx, struct ggml_tensor * as, struct ggml_tensor * b, struct ggml_tensor * ids);
/* a (F32, any layout) with its elements moved by shift_d along each dim d, wrapping around:
 * y[i0, i1, i2, i3] = a[(i0 - shift0) mod ne0, ...]; |shift_d| < ne_d. */
GGML_API struct ggml_tensor * ggml_roll(struct ggml_context * ctx, struct ggml_tensor * a, int shift0, int shift1, int shift2, int shift3);
/* timesteps F32 [N] -> [dim, N]: row i = cos(t_i f_j) for j < dim/2, then sin(t_i f_j), then 0 when dim is odd,
 * f_j = exp(-ln(max_period) j / (dim/2)) (diffusion models' sinusoidal embedding). */
GGML_API struct ggml_tensor * ggml_timestep_embedding(struct ggml_context * ctx, struct ggml_tensor * timesteps, int dim, int max_period);

/* SAM's windowed attention (segment-anything's image encoder).
 * ggml_win_part: a F32 [C, W, H, 1] cut into w x w windows, zero-padded to
 * multiples of w: [C, w, w, npx*npy], npx = ceil(W/w), npy = ceil(H/w),
 * window px + npx*py holding a[:, px*w + i1, py*w + i2] (0 past the edge).
 * ggml_win_unpart: its reverse, a F32 [C, w, w, npx*npy] -> [C, w0, h0, 1],
 * the padding dropped. */
GGML_API struct ggml_tensor * ggml_win_part(struct ggml_context * ctx, struct ggml_tensor * a, int w);
GGML_API struct ggml_tensor * ggml_win_unpart(struct ggml_context * ctx, struct ggml_tensor * a, int w0, int h0, int w);
/* The relative-position table a [C, 2k - 1] (F32 or F16; qh == kh == k) read
 * at every query-key offset: y[:, i1, i2] = a[:, k - 1 - i1 + i2], [C, kh, qh]
 * of a's type (upstream's result is F16 always, its kernel F16 only). */
GGML_API struct ggml_tensor * ggml_get_rel_pos(struct ggml_context * ctx, struct ggml_tensor * a, int qh, int kh);
/* Decomposed relative positions added to attention scores: a F32 [K*K, R, B]
 * (one row of K x K key positions per query r), pw and ph F32 [K, R1, R2, B]
 * with R1*R2 = R: y[kw + K*kh, r, b] = a[kw + K*kh, r, b] + pw[kw, r, b] + ph[kh, r, b].
 * _inplace writes into a (contiguous). */
GGML_API struct ggml_tensor * ggml_add_rel_pos(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * pw, struct ggml_tensor * ph);
GGML_API struct ggml_tensor * ggml_add_rel_pos_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * pw,
                                                       struct ggml_tensor * ph);

/* a = gradient of y, b = y = soft_max_ext(x, mask, scale, max_bias): the gradient with respect to x. */
GGML_API struct ggml_tensor * ggml_soft_max_ext_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float scale, float max_bias);

/* Mean over rows of -sum(labels * log softmax(logits)) -> [1].
 * labels: F32 shaped like logits (rows are distributions), or, an extension,
 * I32 [rows of logits] with one class index per row. */
GGML_API struct ggml_tensor * ggml_cross_entropy_loss(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
/* a = logits, b = labels, c = gradient of the loss ([1]) -> gradient with respect to the logits. */
GGML_API struct ggml_tensor * ggml_cross_entropy_loss_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c);

/* a [m, n, ne2a, ne3a], b [p, n, ne2, ne3] (F32, any strides) -> [m, p, ne2, ne3]: dst[i, j] = sum_k a[i, k] b[j, k],
 * the sum over k of outer products a[:, k] b[:, k]^T; a's planes are broadcast like mul_mat's
 * (ne2, ne3 multiples of a's; plane i2 reads a's plane i2 / (ne2/ne2a)). */
GGML_API struct ggml_tensor * ggml_out_prod(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);

/* Rotary position embedding of a [ne0, n_head, n_tokens, ne3] (F32 or F16) with I32 positions b [n_tokens];
 * c: NULL or F32 frequency factors [>= n_dims/2] (the angle of pair k is divided by c[k]); mode GGML_ROPE_TYPE_NORMAL
 * or GGML_ROPE_TYPE_NEOX. The result has a's type and shape. YaRN (ext_factor != 0) takes any n_ctx_orig,
 * beta_fast, beta_slow as upstream (ggml_rope_yarn_corr_dims' values for them). ggml_rope_ext_back rotates by the opposite angles (its gradient). */
GGML_API struct ggml_tensor * ggml_rope_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                            int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                            float ext_factor, float attn_factor, float beta_fast, float beta_slow);
GGML_API struct ggml_tensor * ggml_rope_ext_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                                 int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                                 float ext_factor, float attn_factor, float beta_fast, float beta_slow);

/* Index of the largest element of each row: a [ne0, ne1] -> I32 [ne1]. */
GGML_API struct ggml_tensor * ggml_argmax(struct ggml_context * ctx, struct ggml_tensor * a);
/* inclusive prefix sums along ne0 */
GGML_API struct ggml_tensor * ggml_cumsum(struct ggml_context * ctx, struct ggml_tensor * a);
/* how many elements of a and b (I32, one shape) are equal -> I32 [1] (upstream's is I64) */
GGML_API struct ggml_tensor * ggml_count_equal(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
enum ggml_sort_order {
    GGML_SORT_ORDER_ASC,
    GGML_SORT_ORDER_DESC,
};
/* the indices that sort each row (I32, shaped like a); ties keep their order, NaN last */
GGML_API struct ggml_tensor * ggml_argsort(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_sort_order order);
/* the indices of the k largest of each row -> I32 [k, ne1, ne2, ne3], largest first (ties: lower index first) */
GGML_API struct ggml_tensor * ggml_top_k(struct ggml_context * ctx, struct ggml_tensor * a, int k);

/* Optimizer steps, updating a (and m, v) in place; the result is a view of a.
 * adamw_params F32 [7]: alpha, beta1, beta2, eps, wd, beta1h = 1/(1-beta1^t), beta2h = 1/(1-beta2^t).
 * sgd_params F32 [2]: alpha, wd. Weight decay is decoupled: a *= 1 - alpha*wd. */
GGML_API struct ggml_tensor * ggml_opt_step_adamw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * grad,
                                                  struct ggml_tensor * m, struct ggml_tensor * v, struct ggml_tensor * adamw_params);
GGML_API struct ggml_tensor * ggml_opt_step_sgd(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * grad,
                                                struct ggml_tensor * sgd_params);

/* ---- upstream's other forms of the ops above (the same ops and kernels) ----
 * _inplace: the result is a view of a, written over it (norms, soft_max and
 * rope need a contiguous); autodiff refuses one whose rule reads the
 * overwritten input (mul, sqr, log, the norms). */
GGML_API struct ggml_tensor * ggml_sub_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_mul_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_div_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b);
GGML_API struct ggml_tensor * ggml_sqr_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_sqrt_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_log_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_scale_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float s);
/* s * a + b */
GGML_API struct ggml_tensor * ggml_scale_bias(struct ggml_context * ctx, struct ggml_tensor * a, float s, float b);
GGML_API struct ggml_tensor * ggml_scale_bias_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float s, float b);
GGML_API struct ggml_tensor * ggml_dup_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_acc_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset);
GGML_API struct ggml_tensor * ggml_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps);
GGML_API struct ggml_tensor * ggml_rms_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps);
GGML_API struct ggml_tensor * ggml_l2_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps);
GGML_API struct ggml_tensor * ggml_group_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps);
GGML_API struct ggml_tensor * ggml_soft_max_inplace(struct ggml_context * ctx, struct ggml_tensor * a);
GGML_API struct ggml_tensor * ggml_soft_max_ext_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask, float scale, float max_bias);
GGML_API struct ggml_tensor * ggml_soft_max_ext_back_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float scale, float max_bias);
/* a (a soft_max result) gets one more logit per head in each row's denominator:
 * sinks F32 [a->ne[2]] (NULL removes them); differentiable in a and in sinks */
GGML_API void ggml_soft_max_add_sinks(struct ggml_tensor * a, struct ggml_tensor * sinks);
/* a's elements in their logical order, in a new contiguous tensor of that shape (same count) */
GGML_API struct ggml_tensor * ggml_cont_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0);
GGML_API struct ggml_tensor * ggml_cont_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1);
GGML_API struct ggml_tensor * ggml_cont_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2);
GGML_API struct ggml_tensor * ggml_cont_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
/* a tiled to ne0..ne3 (multiples of a's) */
GGML_API struct ggml_tensor * ggml_repeat_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
/* the first k columns of ggml_argsort(a, DESC): a view, I32 [k, ne1, ne2, ne3] */
GGML_API struct ggml_tensor * ggml_argsort_top_k(struct ggml_context * ctx, struct ggml_tensor * a, int k);
/* rope_ext with freq_base 10000 and no scaling or factors; _custom: without factors (deprecated upstream) */
GGML_API struct ggml_tensor * ggml_rope(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode);
GGML_API struct ggml_tensor * ggml_rope_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode);
GGML_API struct ggml_tensor * ggml_rope_ext_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                                    int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                                    float ext_factor, float attn_factor, float beta_fast, float beta_slow);
GGML_API struct ggml_tensor * ggml_rope_custom(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode,
                                               int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                               float beta_fast, float beta_slow);
GGML_API struct ggml_tensor * ggml_rope_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_dims, int mode,
                                                       int n_ctx_orig, float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                                       float beta_fast, float beta_slow);
/* Multi-section rope (Qwen-VL): b holds 4 I32 position streams of a->ne[2] tokens each, [t | h | w | e];
 * sections[s] pairs take their angle from stream s. MROPE: pair k (NEOX pairing (k, k + n_dims/2)) is in
 * section s by k mod (sum of sections) against the running sums; IMROPE interleaves them (sector j: h when
 * j % 3 == 1 and j < 3 sections[1], w when j % 3 == 2 and j < 3 sections[2], t when j % 3 == 0 and
 * j < 3 sections[0], else e); the angle of pair k is p_s base^(-2k/n_dims) as in rope_ext. VISION: n_dims
 * = ne0/2 pairs (k, k + n_dims) cover the whole row, each section's exponent counting from 0. Modes NORMAL
 * and NEOX ignore sections and take one position per token (rope_ext). c: NULL or >= (pairs) factors. */
GGML_API struct ggml_tensor * ggml_rope_multi(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                              int n_dims, int sections[GGML_MROPE_SECTIONS], int mode, int n_ctx_orig, float freq_base,
                                              float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow);
GGML_API struct ggml_tensor * ggml_rope_multi_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                                      int n_dims, int sections[GGML_MROPE_SECTIONS], int mode, int n_ctx_orig, float freq_base,
                                                      float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow);
/* rope_multi's rotation by the opposite angles (its gradient): a ROPE_BACK node */
GGML_API struct ggml_tensor * ggml_rope_multi_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                                   int n_dims, int sections[4], int mode, int n_ctx_orig, float freq_base,
                                                   float freq_scale, float ext_factor, float attn_factor, float beta_fast, float beta_slow);
/* Rotate the entries [n_offs, n_offs + n_dims) of each row instead of [0, n_dims) (the others are copied):
 * sets the offset of a ROPE or ROPE_BACK node a (not VISION) and returns a; n_offs even, n_offs + n_dims <= ne0.
 * NULL with a message (a unchanged) otherwise. Its gradient keeps the offset. */
GGML_API struct ggml_tensor * ggml_rope_set_offset(struct ggml_tensor * a, int n_offs);
/* YaRN's correction dims: the first and last pair of the ramp, floor(d(beta_fast)) and ceil(d(beta_slow)),
 * d(beta) = n_dims ln(n_ctx_orig / (2 pi beta)) / (2 ln freq_base), clamped as upstream: max(0, .) and
 * min(n_dims - 1, .) (n_ctx_orig 0: [0, -inf]; a NaN stays NaN) */
GGML_API void ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow, float dims[2]);
/* A matrix product's precision. mul_mat and out_prod accumulate in F32 at
 * every setting; GGML_PREC_BF16 (ggmlr's) also rounds both operands of an
 * F32 x F32 product to bf16 where the CPU multiplies bf16 (ggml_cpu_bf16_name()
 * is "avx512_bf16" or "amx"), which is faster, and is the F32 product
 * elsewhere. The backward rules give their products the forward's precision;
 * mul_mat_set_prec also takes an OUT_PROD node. The hint is accepted and ignored. */
enum ggml_prec {
    GGML_PREC_DEFAULT = 0,
    GGML_PREC_F32     = 10,
    GGML_PREC_BF16    = 16,
};
GGML_API enum ggml_prec ggml_mul_mat_get_prec(const struct ggml_tensor * a);
enum ggml_op_hint {
    GGML_HINT_NONE             = 0,
    GGML_HINT_SRC0_IS_HADAMARD = 1,
};
GGML_API void ggml_mul_mat_set_prec(struct ggml_tensor * a, enum ggml_prec prec);
GGML_API void ggml_mul_mat_set_hint(struct ggml_tensor * a, enum ggml_op_hint hint);
/* The attention accumulates in F32 at every setting; GGML_PREC_BF16 also rounds the operands of
 * its products (Q K^T, P V, and the backward's five) to bf16 where the CPU multiplies bf16, as
 * mul_mat; softmax statistics stay F32, and autodiff gives the backward the same (docs/precision.md).
 * Both also take a ggml_flash_attn_back node. A value outside the enum, or a node of another op:
 * a message, the node unchanged. */
GGML_API void           ggml_flash_attn_ext_set_prec(struct ggml_tensor * a, enum ggml_prec prec);
GGML_API enum ggml_prec ggml_flash_attn_ext_get_prec(const struct ggml_tensor * a);
/* Attention sinks: one more logit per query head, sinks[h] (F32 [H = q->ne[2]]), in the softmax
 * denominator only: p_m = e^(s_m - mx) / (sum_j e^(s_j - mx) + e^(sinks[h] - mx)) (not scaled, no
 * value row). NULL removes them; a bad argument leaves a as it was, with a message. Differentiable in
 * q, k, v and the sinks. */
GGML_API void ggml_flash_attn_ext_add_sinks(struct ggml_tensor * a, struct ggml_tensor * sinks);

/* ---- custom ops: the user's function run by the CPU backend, called on
 * min(n_tasks, threads) threads (n_tasks GGML_N_TASKS_MAX: every thread) with
 * ith in [0, nth); it writes dst. map_custom1/2/3: sources a, b, c (dst shaped
 * and typed like a; _inplace: a view of a). custom_4d: a new tensor of type
 * and shape ne0..ne3 with sources args[0..n_args) (n_args <= GGML_MAX_SRC);
 * custom_inplace: a view of a with a and the args as sources. Autodiff refuses
 * them (the function has no known derivative). */
#ifndef GGML_N_TASKS_MAX
#define GGML_N_TASKS_MAX (-1)
#endif
typedef void (*ggml_custom1_op_t)(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata);
typedef void (*ggml_custom2_op_t)(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith, int nth, void * userdata);
typedef void (*ggml_custom3_op_t)(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, const struct ggml_tensor * c,
                                  int ith, int nth, void * userdata);
typedef void (*ggml_custom_op_t)(struct ggml_tensor * dst, int ith, int nth, void * userdata);
GGML_API struct ggml_tensor * ggml_map_custom1(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun, int n_tasks, void * userdata);
GGML_API struct ggml_tensor * ggml_map_custom1_inplace(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun, int n_tasks, void * userdata);
GGML_API struct ggml_tensor * ggml_map_custom2(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, ggml_custom2_op_t fun,
                                               int n_tasks, void * userdata);
GGML_API struct ggml_tensor * ggml_map_custom2_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, ggml_custom2_op_t fun,
                                                       int n_tasks, void * userdata);
GGML_API struct ggml_tensor * ggml_map_custom3(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                               ggml_custom3_op_t fun, int n_tasks, void * userdata);
GGML_API struct ggml_tensor * ggml_map_custom3_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                                       ggml_custom3_op_t fun, int n_tasks, void * userdata);
GGML_API struct ggml_tensor * ggml_custom_4d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                             struct ggml_tensor ** args, int n_args, ggml_custom_op_t fun, int n_tasks, void * userdata);
GGML_API struct ggml_tensor * ggml_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor ** args, int n_args,
                                                  ggml_custom_op_t fun, int n_tasks, void * userdata);

/* graphs and autodiff */
GGML_API struct ggml_cgraph * ggml_new_graph(struct ggml_context * ctx);
GGML_API struct ggml_cgraph * ggml_new_graph_custom(struct ggml_context * ctx, size_t size, bool grads);
GGML_API void                 ggml_build_forward_expand(struct ggml_cgraph * graph, struct ggml_tensor * tensor);
/* add the tensor and its sources in order without marking them to be computed (a later expand marks them) */
GGML_API void                 ggml_build_forward_order(struct ggml_cgraph * graph, struct ggml_tensor * tensor);
/* all n_tensors in the graph, only tensors[idx] computed: one topology for branches chosen at run time */
GGML_API struct ggml_tensor * ggml_build_forward_select(struct ggml_cgraph * graph, struct ggml_tensor ** tensors, int n_tensors, int idx);
GGML_API enum ggml_status     ggml_build_forward_expand_status(struct ggml_cgraph * graph, struct ggml_tensor * tensor);
GGML_API enum ggml_status     ggml_build_backward_expand(struct ggml_context * ctx, struct ggml_cgraph * graph, struct ggml_tensor ** grad_accs);
GGML_API void                 ggml_set_param(struct ggml_tensor * tensor);
GGML_API void                 ggml_set_loss(struct ggml_tensor * tensor);
GGML_API void                 ggml_set_input(struct ggml_tensor * tensor);
GGML_API void                 ggml_set_output(struct ggml_tensor * tensor);
/* extension: gradient checkpointing. A forward tensor so marked is kept for
 * the backward pass; ggml_build_backward_expand then has the backward read
 * recomputed copies of the other activations (from the checkpoints before
 * them) instead of the forward's, so those die during the forward pass.
 * Gradients are bitwise the same; see docs/autodiff.md. */
GGML_API void                 ggml_set_checkpoint(struct ggml_tensor * tensor);
GGML_API void                 ggml_graph_reset(struct ggml_cgraph * graph);
GGML_API struct ggml_tensor * ggml_graph_get_grad(const struct ggml_cgraph * graph, const struct ggml_tensor * node);
GGML_API struct ggml_tensor * ggml_graph_get_grad_acc(const struct ggml_cgraph * graph, const struct ggml_tensor * node);
GGML_API int                  ggml_graph_size(const struct ggml_cgraph * graph);
GGML_API int                  ggml_graph_n_nodes(const struct ggml_cgraph * graph);
GGML_API struct ggml_tensor * ggml_graph_node(const struct ggml_cgraph * graph, int i); /* i < 0 counts from the end */

/* ---- upstream's utility macros, abort and timing (for programs written
 * against upstream; the library itself never aborts, see the top) ---- */
#define GGML_UNUSED(x) (void) (x)
#define GGML_PAD(x, n) (((x) + (n) - 1) & ~((n) - 1))
#if defined(__cplusplus)
#define GGML_NORETURN [[noreturn]]
#else
#define GGML_NORETURN _Noreturn
#endif
/* prints file:line and the message to stderr, then abort() */
GGML_NORETURN GGML_API void ggml_abort(const char * file, int line, const char * fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
#define GGML_ABORT(...) ggml_abort(__FILE__, __LINE__, __VA_ARGS__)
/* ggml_abort hands its message ("file:line: text") to this callback instead
 * of printing it, then aborts; NULL restores printing. Returns the callback
 * it replaces. (Process-wide, like ggml_log_set.) */
typedef void (*ggml_abort_callback_t)(const char * error_message);
GGML_API ggml_abort_callback_t ggml_set_abort_callback(ggml_abort_callback_t callback);
/* GUIDs (backends' identities) */
typedef uint8_t ggml_guid[16];
typedef ggml_guid * ggml_guid_t;
GGML_API bool ggml_guid_matches(ggml_guid_t guid_a, ggml_guid_t guid_b);  /* false if either is NULL */
/* upstream's thread-pool parameters (its numbers and defaults), taken by
 * ggml_threadpool_new (ggml-cpu.h). */
enum ggml_sched_priority {
    GGML_SCHED_PRIO_LOW = -1,
    GGML_SCHED_PRIO_NORMAL,
    GGML_SCHED_PRIO_MEDIUM,
    GGML_SCHED_PRIO_HIGH,
    GGML_SCHED_PRIO_REALTIME
};
struct ggml_threadpool_params {
    bool                     cpumask[GGML_MAX_N_THREADS]; /* CPUs to run on; all false: the default affinity */
    int                      n_threads;
    enum ggml_sched_priority prio;
    uint32_t                 poll;        /* 0: no polling .. 100: aggressive */
    bool                     strict_cpu;  /* one CPU of the mask per thread */
    bool                     paused;      /* start paused */
};
struct ggml_threadpool;  /* ggml_threadpool_new (ggml-cpu.h) */
typedef struct ggml_threadpool * ggml_threadpool_t;
/* n_threads, normal priority, poll 50, no mask, not strict, not paused */
GGML_API struct ggml_threadpool_params ggml_threadpool_params_default(int n_threads);
GGML_API void ggml_threadpool_params_init(struct ggml_threadpool_params * p, int n_threads);  /* p NULL: nothing */
/* same threads, priority, polling, strictness and mask (paused is not compared); false if either is NULL */
GGML_API bool ggml_threadpool_params_match(const struct ggml_threadpool_params * p0, const struct ggml_threadpool_params * p1);
#define GGML_ASSERT(x) if (!(x)) GGML_ABORT("GGML_ASSERT(%s) failed", #x)
/* custom ops: as many tasks as threads */
#define GGML_N_TASKS_MAX (-1)
/* if not NULL, asked before a compute; returning true aborts it (ggml-cpu.h) */
typedef bool (*ggml_abort_callback)(void * data);
GGML_API void    ggml_time_init(void);  /* optional: the clocks need no set-up */
GGML_API int64_t ggml_time_ms(void);    /* monotonic */
GGML_API int64_t ggml_time_us(void);
GGML_API int64_t ggml_cycles(void);     /* CPU time of the process in clock() ticks */
GGML_API int64_t ggml_cycles_per_ms(void);
GGML_API FILE *  ggml_fopen(const char * fname, const char * mode);
GGML_API const char * ggml_version(void);
GGML_API const char * ggml_commit(void);  /* "unknown": a build does not record its commit */

/* const type prefix0..prefix3 = pointer->array[0..3] (0 for a NULL pointer) */
#define GGML_TENSOR_LOCALS_1(type, prefix, pointer, array) \
    const type prefix##0 = (pointer) ? (pointer)->array[0] : 0; \
    GGML_UNUSED(prefix##0);
#define GGML_TENSOR_LOCALS_2(type, prefix, pointer, array) \
    GGML_TENSOR_LOCALS_1(type, prefix, pointer, array) \
    const type prefix##1 = (pointer) ? (pointer)->array[1] : 0; \
    GGML_UNUSED(prefix##1);
#define GGML_TENSOR_LOCALS_3(type, prefix, pointer, array) \
    GGML_TENSOR_LOCALS_2(type, prefix, pointer, array) \
    const type prefix##2 = (pointer) ? (pointer)->array[2] : 0; \
    GGML_UNUSED(prefix##2);
#define GGML_TENSOR_LOCALS(type, prefix, pointer, array) \
    GGML_TENSOR_LOCALS_3(type, prefix, pointer, array) \
    const type prefix##3 = (pointer) ? (pointer)->array[3] : 0; \
    GGML_UNUSED(prefix##3);

GGML_API bool                 ggml_is_vector(const struct ggml_tensor * tensor);  /* ne[1..3] == 1 */
GGML_API bool                 ggml_is_matrix(const struct ggml_tensor * tensor);  /* ne[2..3] == 1 */
GGML_API const char *         ggml_op_desc(const struct ggml_tensor * tensor);    /* the activation for UNARY, else the op */
GGML_API struct ggml_tensor * ggml_format_name(struct ggml_tensor * tensor, const char * fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* graph editing: add_node appends a node as it is (no sources); cpy copies
 * src's nodes and leafs (and gradients, when both have them) into dst */
GGML_API void                 ggml_graph_add_node(struct ggml_cgraph * graph, struct ggml_tensor * tensor);
GGML_API void                 ggml_graph_cpy(struct ggml_cgraph * src, struct ggml_cgraph * dst);
GGML_API void                 ggml_graph_clear(struct ggml_cgraph * graph);
GGML_API struct ggml_tensor * ggml_graph_get_tensor(const struct ggml_cgraph * graph, const char * name);
/* a new graph in ctx of graph's size, with gradients if graph has them or
 * force_grads, holding graph's nodes, leafs and gradients (NULL + message on failure) */
GGML_API struct ggml_cgraph *  ggml_graph_dup(struct ggml_context * ctx, struct ggml_cgraph * graph, bool force_grads);
GGML_API struct ggml_tensor ** ggml_graph_nodes(struct ggml_cgraph * graph);  /* its ggml_graph_n_nodes nodes; NULL for NULL */
GGML_API void                 ggml_graph_print(const struct ggml_cgraph * graph);  /* to the log */
/* the graph g in Graphviz's dot format (gb, may be NULL: the graph whose gradients color g's nodes) */
GGML_API void                 ggml_graph_dump_dot(const struct ggml_cgraph * gb, const struct ggml_cgraph * g, const char * filename);


#ifdef __cplusplus
}
#endif

#endif /* GGML_H */

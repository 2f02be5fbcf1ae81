/* kernels.h -- the CPU kernels the executor dispatches to, one family per file.
 *
 * Every kernel is called by all nth threads of the executor with its own ith,
 * and splits the work into pieces whose result does not depend on which
 * thread computes them: results are identical for any thread count. */
#ifndef GGMLR_KERNELS_H
#define GGMLR_KERNELS_H

#include "core/internal.h"
#include "core/op_list.h"
#include "cpu/simd/vec.h"

struct ggmlr_executor;  /* compute.c: the running compute */

struct ggmlr_compute_params {
    int    ith, nth;      /* this thread, number of threads */
    void * wdata;         /* this thread's scratch */
    size_t wsize;         /* bytes of scratch per thread */
    void * shared;        /* scratch shared by all threads of the node */
    struct ggmlr_executor * executor;  /* for ggmlr_barrier and ggmlr_compute_fail */
    int    node;          /* index of the node being computed */
};

/* All nth threads wait here until each has arrived (for kernels in phases). */
void ggmlr_barrier(const struct ggmlr_compute_params * p);

/* Fails the compute (printf-style message; the first failure wins, at most
 * GGMLR_FAIL_MESSAGE bytes): no node after this one runs, and the graph
 * compute returns GGML_STATUS_FAILED with the message in ggml_last_error().
 * The kernel still reaches each of its own ggmlr_barrier calls (the other
 * threads wait there), skipping only its work, and writes no byte out of bounds. */
#define GGMLR_FAIL_MESSAGE 256
void ggmlr_compute_fail(const struct ggmlr_compute_params * p, const char * fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Piece [*i0, *i1) of n items for thread ith of nth. */
static inline void ggmlr_split(int64_t n, int ith, int nth, int64_t * i0, int64_t * i1) {
    const int64_t per = (n + nth - 1) / nth;
    *i0 = per * ith < n ? per * ith : n;
    *i1 = *i0 + per < n ? *i0 + per : n;
}

/* Row r of a tensor as (i1, i2, i3). */
static inline void ggmlr_row_index(const struct ggml_tensor * t, int64_t r, int64_t * i1, int64_t * i2, int64_t * i3) {
    *i1 = r % t->ne[1];
    *i2 = (r / t->ne[1]) % t->ne[2];
    *i3 = r / (t->ne[1] * t->ne[2]);
}

/* This thread's share of the rows of t, visited in order with ggmlr_next_row:
 *   struct ggmlr_rows rows = ggmlr_my_rows(p, t);
 *   while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) { ... } */
struct ggmlr_rows { const struct ggml_tensor * t; int64_t next, end; };

static inline struct ggmlr_rows ggmlr_my_rows(const struct ggmlr_compute_params * p, const struct ggml_tensor * t) {
    struct ggmlr_rows rows = {t, 0, 0};
    ggmlr_split(ggml_nrows(t), p->ith, p->nth, &rows.next, &rows.end);
    return rows;
}

static inline bool ggmlr_next_row(struct ggmlr_rows * rows, int64_t * r, int64_t * i1, int64_t * i2, int64_t * i3) {
    if (rows->next >= rows->end) return false;
    *r = rows->next++;
    ggmlr_row_index(rows->t, *r, i1, i2, i3);
    return true;
}

/* The same for dst of a kernel that may write over its own inputs (ggml_cpy
 * into memory it reads, an in-place add of an overlapping view): when dst's
 * bytes overlap an input other than element for element, thread 0 takes every
 * row, in order; split rows would race, and the result would depend on the
 * thread count. */
struct ggmlr_rows ggmlr_my_dst_rows(const struct ggmlr_compute_params * p, const struct ggml_tensor * dst);

/* Row (i1,i2,i3) of t as F32: a pointer into t when its elements are packed
 * F32, else converted (dequantized) into `scratch` (t->ne[0] floats). */
const float * ggmlr_row_f32(const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3, float * scratch);

/* Does a kernel write dst with non-temporal stores (the vec ops' `stream`,
 * copy_stream)? For an F32 result of at least 16 MiB: it cannot stay in cache
 * for its reader anyway, and streaming skips reading each line before writing
 * it. Below that the result is left in cache for the next node. */
#define GGMLR_STREAM_BYTES ((size_t) 16 << 20)
static inline bool ggmlr_result_streams(const struct ggml_tensor * dst) {
    return dst->type == GGML_TYPE_F32 && ggml_nbytes(dst) >= GGMLR_STREAM_BYTES;
}

/* A kernel: compute == NULL marks an op whose result is a view of its source
 * (nothing to compute). work_size: bytes of scratch each thread needs;
 * shared_size: bytes shared by the node's threads (NULL: none). Each family
 * file defines its kernels' functions static and publishes them with
 * GGMLR_KERNEL(name, ...) as const struct ggmlr_kernel ggmlr_kernel_<name>,
 * the name core/op_list.h gives; cpu/exec/kernel_table.c maps ops to them. */
struct ggmlr_kernel {
    void   (*compute)(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
    size_t (*work_size)(const struct ggml_tensor * dst);
    size_t (*shared_size)(const struct ggml_tensor * dst);
};
#define GGMLR_KERNEL(name, compute, work_size, shared_size) \
    const struct ggmlr_kernel ggmlr_kernel_##name = {compute, work_size, shared_size}
extern const struct ggmlr_kernel * const ggmlr_kernels[]; /* GGML_OP_COUNT rows */
/* Ops whose result is a view of their source (no kernel, nothing to compute). */
bool ggmlr_op_is_view(enum ggml_op op);
/* copy.c: a DUP/CPY/CONT between tensors of one type with packed rows of one
 * length, which moves rows as bytes (the one thing done with a type stored
 * here without converters, so compute accepts those types for it) */
bool ggmlr_copy_moves_rows(const struct ggml_tensor * dst);

/* unary.c: one row of an activation and of its backward g * f'(x), for
 * the UNARY kernels and GLU's (outputs apart from the inputs) */
void ggmlr_act_row(enum ggml_unary_op op, int64_t n, const float * x, float * y);
void ggmlr_act_back_row(enum ggml_unary_op op, int64_t n, const float * g, const float * x, float * dx);

/* soft_max.c: ALiBi's slope for head h of n_head (also fused attention's) */
float ggmlr_alibi_slope(float max_bias, int64_t h, int64_t n_head);

/* mul_mat_quant.c: mul_mat of a quantized (or, for few columns, BF16)
 * weight by F32 activations through the CPU type traits' dot products;
 * mul_mat.c's kernel hands such a node over (sizes included) */
bool   ggmlr_mul_mat_quant_applies(const struct ggml_tensor * dst);
size_t ggmlr_mul_mat_quant_work_size(const struct ggml_tensor * dst);
size_t ggmlr_mul_mat_quant_shared_size(const struct ggml_tensor * dst);
void   ggmlr_mul_mat_quant(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
/* mul_mat_bf16.c: mul_mat and out_prod of F32 operands at GGML_PREC_BF16,
 * where the CPU multiplies bf16 (mul_mat.c hands them over) */
bool   ggmlr_mul_mat_bf16_applies(const struct ggml_tensor * dst);
size_t ggmlr_mul_mat_bf16_work_size(const struct ggml_tensor * dst);
size_t ggmlr_mul_mat_bf16_shared_size(const struct ggml_tensor * dst);
void   ggmlr_mul_mat_bf16(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);

#endif

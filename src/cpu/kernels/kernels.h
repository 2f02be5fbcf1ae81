/* kernels.h -- the CPU kernels the executor dispatches to, one family per file.
 *
 * Every kernel is called by all nth threads of the executor with its own ith,
 * and splits the work into pieces whose result does not depend on which
 * thread computes them: results are identical for any thread count. */
#ifndef GGMLR_KERNELS_H
#define GGMLR_KERNELS_H

#include "core/internal.h"
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
 * F32, else converted into `scratch` (t->ne[0] floats). */
const float * ggmlr_row_f32(const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3, float * scratch);

/* One row per op in kernel_table.c. compute == NULL marks an op whose result
 * is a view of its source (nothing to compute). work_size: bytes of scratch
 * each thread needs; shared_size: bytes shared by the node's threads (NULL: none). */
struct ggmlr_kernel {
    void   (*compute)(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
    size_t (*work_size)(const struct ggml_tensor * dst);
    size_t (*shared_size)(const struct ggml_tensor * dst);
};
extern const struct ggmlr_kernel ggmlr_kernels[]; /* GGML_OP_COUNT rows */
/* Ops whose result is a view of their source (no kernel, nothing to compute). */
bool ggmlr_op_is_view(enum ggml_op op);

/* copy.c */
void ggmlr_compute_dup(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);   /* DUP, CONT, CPY */
void ggmlr_compute_repeat(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
void ggmlr_compute_repeat_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
size_t ggmlr_repeat_back_work_size(const struct ggml_tensor * dst);
void ggmlr_compute_acc(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
/* elementwise.c */
void ggmlr_compute_binary(const struct ggmlr_compute_params * p, struct ggml_tensor * dst); /* ADD, SUB, MUL, DIV */
void ggmlr_compute_unary(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);  /* SQR, SQRT, LOG, SCALE */
/* reduce.c */
void ggmlr_compute_sum(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
void ggmlr_compute_sum_rows(const struct ggmlr_compute_params * p, struct ggml_tensor * dst); /* SUM_ROWS, MEAN */
/* matmul.c */
void ggmlr_compute_mul_mat(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);  /* MUL_MAT, OUT_PROD */
size_t ggmlr_mul_mat_work_size(const struct ggml_tensor * dst);
size_t ggmlr_mul_mat_shared_size(const struct ggml_tensor * dst);
/* softmax.c */
void ggmlr_compute_soft_max(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
size_t ggmlr_soft_max_work_size(const struct ggml_tensor * dst);
float ggmlr_alibi_slope(float max_bias, int64_t h, int64_t n_head);
void ggmlr_compute_soft_max_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst); /* work: ggmlr_soft_max_work_size */
/* unary.c: activations */
void ggmlr_compute_unary_act(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);   /* UNARY, UNARY_BACK */
size_t ggmlr_unary_act_work_size(const struct ggml_tensor * dst);
/* norm.c */
void ggmlr_compute_norm(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);        /* NORM, RMS_NORM */
void ggmlr_compute_norm_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);   /* NORM_BACK, RMS_NORM_BACK */
size_t ggmlr_norm_work_size(const struct ggml_tensor * dst);
/* flash_attn.c */
void ggmlr_compute_flash_attn_ext(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
void ggmlr_compute_flash_attn_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
size_t ggmlr_flash_attn_ext_work_size(const struct ggml_tensor * dst);
size_t ggmlr_flash_attn_ext_shared_size(const struct ggml_tensor * dst);
size_t ggmlr_flash_attn_back_work_size(const struct ggml_tensor * dst);
size_t ggmlr_flash_attn_back_shared_size(const struct ggml_tensor * dst);
/* rows.c */
void ggmlr_compute_get_rows(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
void ggmlr_compute_get_rows_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
void ggmlr_compute_argmax(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
size_t ggmlr_argmax_work_size(const struct ggml_tensor * dst);
/* loss.c */
void ggmlr_compute_cross_entropy_loss(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
void ggmlr_compute_cross_entropy_loss_back(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
size_t ggmlr_cross_entropy_work_size(const struct ggml_tensor * dst);
size_t ggmlr_cross_entropy_shared_size(const struct ggml_tensor * dst);
/* rope.c */
void ggmlr_compute_rope(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);   /* ROPE, ROPE_BACK */
size_t ggmlr_rope_work_size(const struct ggml_tensor * dst);
/* optim.c */
void ggmlr_compute_opt_step_adamw(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);
void ggmlr_compute_opt_step_sgd(const struct ggmlr_compute_params * p, struct ggml_tensor * dst);

#endif

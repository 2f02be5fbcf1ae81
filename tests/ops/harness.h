/* harness.h -- one row per op (and variant): how to build the node, its
 * inputs, a float64 reference and the tolerances. One harness runs every row:
 * forward against the reference with a poisoned result, bitwise equality
 * over 1/2/3/8 threads, inputs left as they were, and a finite-difference
 * gradient check (or that autodiff refuses the op with a message).
 *
 * A row's inputs may be F32, F16 or I32, contiguous or strided views; a row
 * is run once per combination of the layouts its inputs allow. */
#ifndef GGMLR_TEST_OPS_HARNESS_H
#define GGMLR_TEST_OPS_HARNESS_H

#include "common/test_common.h"

enum { OPS_MAX_IN = 8 };  /* ssm_scan_back: s, x, dt, A, B, C, ids and dy; rwkv_wkv7_back: 7 inputs and dy */

/* How an input of logical shape ne sits in memory: contiguous, or a
 * transposed / permuted (dims 0 <-> 2) view of a tensor whose memory has
 * those dims swapped. An input's layout is a mask of these (0: contiguous). */
enum { OPS_CONTIG = 1, OPS_TRANSPOSED = 2, OPS_PERMUTED = 4, OPS_ANY_LAYOUT = 7 };

/* Overwrite an input's uniform values (logical order, n of them) before they
 * are stored: special magnitudes, index lists, masks, distributions. */
typedef void (*ops_fill_fn)(double * v, const int64_t ne[4]);

struct ops_input {
    int64_t ne[4];
    double lo, hi;        /* F32, F16: uniform in [lo, hi]; I32, I64: integers in [lo, hi] */
    enum ggml_type type;  /* GGML_TYPE_F32 (the default), F16, I32 or I64 (set_rows' indices) */
    unsigned layout;      /* mask of OPS_CONTIG.. (0: contiguous only) */
    bool fixed;           /* never a parameter (labels, masks); F16 and I32 inputs are constants in the gradient check */
    ops_fill_fn fill;     /* NULL: uniform */
};

typedef struct ggml_tensor * (*ops_build_fn)(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params);
/* The expected result in logical (ne0-fastest) order, from the inputs'
 * values (logical order, float64 copies of what the tensors store). */
typedef void (*ops_ref_fn)(const double * const * in, const int64_t (*ne)[4], const void * params, double * out,
                           const int64_t ne_out[4]);
/* The result's shape from the inputs' shapes (NULL in a row: input 0's). */
typedef void (*ops_shape_fn)(const int64_t (*ne)[4], const void * params, int64_t ne_out[4]);
/* Checks of the result beyond its values (what names the row). */
typedef void (*ops_post_fn)(const struct ggml_tensor * out, const double * ref, const void * params, const char * what);

/* How an F32 result is compared (F16 results must be the nearest half of
 * the reference and I32 results equal to it, always). */
enum ops_cmp {
    OPS_NORM2,     /* relative 2-norm error <= tol */
    OPS_ELEMENTS,  /* each |y - ref| <= tol |ref| + atol; where |ref| > FLT_MAX, y is the Inf of its sign */
    OPS_EXACT,     /* each y == ref (data movement) */
};
enum ops_result {
    OPS_NEW,       /* a new tensor (or cpy's destination): poisoned before each compute */
    OPS_VIEW,      /* a view of input 0's memory: nothing computed, nothing poisoned */
    OPS_INPLACE,   /* written into input 0: restored before each compute */
};
enum ops_grad {
    OPS_FORWARD_ONLY,  /* the op's gradient is checked by other rows */
    OPS_GRAD,          /* finite differences on every input that is F32 and not fixed */
    OPS_REFUSED,       /* with every input that is not fixed a parameter, autodiff refuses */
};

struct ops_row {
    const char * op;       /* ggml_op_name of the node's op */
    const char * variant;
    ops_build_fn build;
    const void * params;   /* a struct of the family file, read by build and ref */
    int n_in;
    struct ops_input in[OPS_MAX_IN];
    ops_shape_fn shape;
    enum ggml_type out_type;  /* the result's type: GGML_TYPE_F32 (the default), F16 or I32 */
    ops_ref_fn ref;
    enum ops_cmp cmp;
    double tol, atol;
    enum ops_result result;
    ops_post_fn post;      /* NULL: none */
    enum ops_grad grad;
    double fd_eps, fd_atol, fd_rtol;  /* 0: the defaults 1e-2, 1e-3, 1e-2 */
    const char * refusal;  /* REFUSED: a word the message contains (NULL: any message) */
    /* GRAD, REFUSED: what the loss is taken of (NULL: the result itself),
     * for a result with infinities (diag_mask_inf: its softmax) or not F32
     * (get_rel_pos of an F16 table: its F32 copy) */
    struct ggml_tensor * (*grad_through)(struct ggml_context * ctx, struct ggml_tensor * out);
    /* input 0 reaches build through a node (scale by 1): an _inplace form then
     * overwrites an intermediate value, not the parameter (which it never does) */
    bool via_node;
};

struct ops_family {
    const char * name;
    const struct ops_row * rows;
    int n_rows;
    void (*check_refs)(void);  /* the family's references at values worked out by hand (NULL: none) */
    /* its constructors' refusals: each bad argument gives NULL and a message
     * (OPS_EXPECT_REFUSED); NULL: none here (the older families' are in
     * tests/test_op_refusals.c) */
    void (*check_refusals)(void);
};

/* Each tests/ops/<family>.c defines `const struct ops_family ops_<family>`
 * named "<family>"; tests/CMakeLists.txt lists them, and common/op_table.c
 * gathers them here (test_ops runs them, the API fuzzer draws ops from them). */
extern const struct ops_family * const ops_families[];
extern const char * const ops_family_files[];  /* tests/ops/<file>.c of each, in ops_families' order */
extern const int ops_n_families;

/* For a row of a backward op that only its family's rule creates (so that
 * the op needs no declaration outside src/ops/<family>.c): the node autodiff
 * makes for the gradient of in[which] when y = build(ctx, in, params) has
 * the gradient in[dy] (the loss sum(y * in[dy]) differentiated; its seed is
 * set, so the node computes as it stands). NULL, with the message, when
 * building or differentiating fails. */
struct ggml_tensor * ops_grad_node(struct ggml_context * ctx, struct ggml_tensor ** in, int which, int dy, ops_build_fn build,
                                   const void * params);

/* expr (a constructor call) gives NULL and ggml_last_error() says why (what
 * names the call); the error is cleared before and after. */
#define OPS_EXPECT_REFUSED(expr, what) \
    do { ggml_clear_error(); ops_expect_refused((expr), (what)); } while (0)
void ops_expect_refused(const struct ggml_tensor * t, const char * what);

/* Run every check of one row; the failures are counted by test_common. */
void ops_run_row(const struct ops_row * row);

/* x rounded to bf16, to nearest even, through float (as the kernels pack it; x finite) */
double ops_round_bf16(double x);

/* Logical-order helpers for references. */
static inline int64_t ops_nel(const int64_t ne[4]) { return ne[0] * ne[1] * ne[2] * ne[3]; }
static inline int64_t ops_at(const int64_t ne[4], int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return i0 + ne[0] * (i1 + ne[1] * (i2 + ne[2] * i3));
}
/* A shape written (n0, n1, n2, n3), so that a table macro can take it as one argument and print it. */
#define OPS_SHAPE(n0, n1, n2, n3) {n0, n1, n2, n3}
#define OPS_FOR4(ne, i0, i1, i2, i3)                                                                     \
    for (int64_t i3 = 0; i3 < (ne)[3]; i3++) for (int64_t i2 = 0; i2 < (ne)[2]; i2++)                   \
    for (int64_t i1 = 0; i1 < (ne)[1]; i1++) for (int64_t i0 = 0; i0 < (ne)[0]; i0++)

#endif

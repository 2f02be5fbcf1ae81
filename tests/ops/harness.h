/* harness.h -- one row per op (and variant): how to build the node, its
 * inputs, a float64 reference and the tolerances. One harness runs every row:
 * forward against the reference with NaN-poisoned outputs, bitwise equality
 * over 1/2/3/8 threads, and a finite-difference gradient check (or, for an
 * op that is not differentiable, that autodiff refuses it). */
#ifndef GGMLR_TEST_OPS_HARNESS_H
#define GGMLR_TEST_OPS_HARNESS_H

#include "common/test_common.h"

enum { OPS_MAX_IN = 4 };

struct ops_input {
    int64_t ne[4];
    double lo, hi;  /* values uniform in [lo, hi] */
};

typedef struct ggml_tensor * (*ops_build_fn)(struct ggml_context * ctx, struct ggml_tensor ** in, const void * params);
/* The expected node in logical (ne0-fastest) order, from the inputs' values
 * (also logical order, float64 copies of the floats the kernel reads). */
typedef void (*ops_ref_fn)(const double * const * in, const int64_t (*ne)[4], const void * params, double * out,
                           const int64_t ne_out[4]);

struct ops_row {
    const char * op;       /* ggml_op_name of the node's op */
    const char * variant;
    ops_build_fn build;
    const void * params;
    int n_in;
    struct ops_input in[OPS_MAX_IN];  /* F32 inputs */
    ops_ref_fn ref;
    double tol;            /* forward: relative 2-norm error */
    bool differentiable;   /* every input gets a gradient */
    double fd_eps, fd_atol, fd_rtol;
};

struct ops_family {
    const char * name;
    const struct ops_row * rows;
    int n_rows;
};

extern const struct ops_family ops_elementwise, ops_soft_max, ops_glu, ops_conv, ops_pool, ops_shape;

/* Run every check of one row; the failures are counted by test_common. */
void ops_run_row(const struct ops_row * row);

#endif

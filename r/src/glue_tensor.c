/* glue_tensor.c -- tensor creation, facts about tensors and types, names,
 * element access (ggml_set_f32 / ggml_get_f32 and the 1d / nd accessors) and
 * the fp16 converters. */
#include "glue.h"

#include <string.h>

/* ---- creation ---- */

/* ne as a list of scalars (ne0, ne1, ...) or a numeric vector of length n_dims. */
static void read_shape(SEXP ne, int n_dims, int64_t out[GGML_MAX_DIMS]) {
    char name[16];
    if (TYPEOF(ne) == VECSXP) {
        if (XLENGTH(ne) != n_dims) Rf_error("expected %d dimensions, got %lld", n_dims, (long long) XLENGTH(ne));
        for (int i = 0; i < n_dims; i++) {
            snprintf(name, sizeof name, "ne%d", i);
            out[i] = rg_count(VECTOR_ELT(ne, i), name);
        }
        return;
    }
    const R_xlen_t n = rg_numeric_len(ne, "ne");
    if (n != n_dims) Rf_error("'ne' must have n_dims = %d values (got %lld)", n_dims, (long long) n);
    for (int i = 0; i < n_dims; i++) {
        snprintf(name, sizeof name, "ne[%d]", i + 1);
        out[i] = rg_count_value(rg_num_at(ne, i), name);
    }
}

SEXP R_ggml_new_tensor(SEXP ctx, SEXP type, SEXP n_dims, SEXP ne) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    const enum ggml_type ty = rg_type(type, "type");
    const int nd = rg_int(n_dims, "n_dims");
    if (nd < 1 || nd > GGML_MAX_DIMS) Rf_error("'n_dims' must be 1 to 4 (got %d)", nd);
    int64_t shape[GGML_MAX_DIMS] = {1, 1, 1, 1};
    read_shape(ne, nd, shape);
    ggml_clear_error();
    return rg_result(ctx, ggml_new_tensor(c->ctx, ty, nd, shape), "ggml_new_tensor");
}

SEXP R_ggml_new_f32(SEXP ctx, SEXP value) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    const float v = rg_float(value, "value");
    ggml_clear_error();
    return rg_result(ctx, ggml_new_f32(c->ctx, v), "ggml_new_f32");
}

SEXP R_ggml_dup_tensor(SEXP ctx, SEXP src) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    struct ggml_tensor * s = rg_tensor_get(src, "src", 0);  /* shape only: no pointer kept */
    ggml_clear_error();
    return rg_result(ctx, ggml_dup_tensor(c->ctx, s), "ggml_dup_tensor");
}

SEXP R_ggml_view_tensor(SEXP ctx, SEXP src) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    struct ggml_tensor * s = rg_tensor_arg(c, src, "src", 0);
    ggml_clear_error();
    return rg_result(ctx, ggml_view_tensor(c->ctx, s), "ggml_view_tensor");
}

/* ---- facts ---- */

#define TENSOR_NUMBER(fn) \
    SEXP R_##fn(SEXP tensor) { return rg_size_sexp((double) fn(rg_tensor_get(tensor, "tensor", 0))); }
#define TENSOR_LOGICAL(fn) \
    SEXP R_##fn(SEXP tensor) { return Rf_ScalarLogical(fn(rg_tensor_get(tensor, "tensor", 0))); }
#define TENSOR_PAIR_LOGICAL(fn) \
    SEXP R_##fn(SEXP a, SEXP b) { return Rf_ScalarLogical(fn(rg_tensor_get(a, "a", 0), rg_tensor_get(b, "b", 0))); }

TENSOR_NUMBER(ggml_nelements)
TENSOR_NUMBER(ggml_nrows)
TENSOR_NUMBER(ggml_nbytes)
TENSOR_NUMBER(ggml_element_size)
TENSOR_LOGICAL(ggml_is_contiguous)
TENSOR_LOGICAL(ggml_is_scalar)
TENSOR_PAIR_LOGICAL(ggml_are_same_shape)
TENSOR_PAIR_LOGICAL(ggml_can_repeat)

SEXP R_ggml_n_dims(SEXP tensor) { return Rf_ScalarInteger(ggml_n_dims(rg_tensor_get(tensor, "tensor", 0))); }

SEXP R_ggml_tensor_shape(SEXP tensor) {
    const struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, GGML_MAX_DIMS));
    for (int i = 0; i < GGML_MAX_DIMS; i++) REAL(out)[i] = (double) t->ne[i];
    UNPROTECT(1);
    return out;
}

SEXP R_ggml_tensor_type(SEXP tensor) { return Rf_ScalarInteger((int) rg_tensor_get(tensor, "tensor", 0)->type); }
SEXP R_ggml_tensor_op(SEXP tensor)   { return Rf_ScalarInteger((int) rg_tensor_get(tensor, "tensor", 0)->op); }

SEXP R_ggml_type_size(SEXP type) { return rg_size_sexp((double) ggml_type_size(rg_type(type, "type"))); }
SEXP R_ggml_type_name(SEXP type) { return Rf_mkString(ggml_type_name(rg_type(type, "type"))); }
SEXP R_ggml_op_name(SEXP op)     { return Rf_mkString(ggml_op_name((enum ggml_op) rg_int(op, "op"))); }

SEXP R_ggml_set_name(SEXP tensor, SEXP name) {
    const char * s = rg_string(name, "name");
    ggml_set_name(rg_tensor_get(tensor, "tensor", 0), s);
    return tensor;
}

SEXP R_ggml_get_name(SEXP tensor) { return Rf_mkString(ggml_get_name(rg_tensor_get(tensor, "tensor", 0))); }

/* ---- element access ---- */

/* A tensor whose data lives in CPU memory (not yet true for a no_alloc context). */
static struct ggml_tensor * tensor_with_data(SEXP x, const char * fn) {
    struct ggml_tensor * t = rg_tensor_get(x, "tensor", 0);
    if (!t->data && ggml_nelements(t) > 0)
        Rf_error("%s: tensor '%s' has no data (its context is no_alloc: allocate the tensors "
                 "with ggml_backend_alloc_ctx_tensors first)", fn, t->name);
    return t;
}

/* NA has no int32 value: refuse it rather than store a made-up number. */
static float value_for(const struct ggml_tensor * t, double v, const char * fn) {
    if (t->type == GGML_TYPE_I32 && ISNAN(v)) Rf_error("%s: NA/NaN cannot be stored in an I32 tensor", fn);
    return (float) v;
}

/* Fail with the library's message if the void call just made set one. */
static void check_error(const char * fn) {
    if (ggml_last_error()[0]) rg_fail(fn);
}

SEXP R_ggml_set_f32(SEXP tensor, SEXP values) {
    struct ggml_tensor * t = tensor_with_data(tensor, "ggml_set_f32");
    const R_xlen_t n = rg_numeric_len(values, "values");
    const int64_t ne = ggml_nelements(t);
    if (ne == 0 && n <= 1) return tensor;  /* nothing to fill */
    if (n == 1) {
        const float v = value_for(t, rg_num_at(values, 0), "ggml_set_f32");
        ggml_clear_error();
        if (!ggml_set_f32(t, v)) rg_fail("ggml_set_f32");
    } else if ((int64_t) n == ne) {
        for (R_xlen_t i = 0; i < n; i++) value_for(t, rg_num_at(values, i), "ggml_set_f32");
        if (t->type == GGML_TYPE_F32 && ggml_is_contiguous(t)) {
            float * p = t->data;
            for (R_xlen_t i = 0; i < n; i++) p[i] = (float) rg_num_at(values, i);
        } else {
            ggml_clear_error();
            for (R_xlen_t i = 0; i < n; i++) ggml_set_f32_1d(t, i, (float) rg_num_at(values, i));
            check_error("ggml_set_f32");
        }
    } else {
        Rf_error("ggml_set_f32: 'values' has length %lld; it must be 1 (fill) or the tensor's %lld elements",
                 (long long) n, (long long) ne);
    }
    return tensor;
}

SEXP R_ggml_set_zero(SEXP tensor) {
    struct ggml_tensor * t = tensor_with_data(tensor, "ggml_set_zero");
    ggml_clear_error();
    if (!ggml_set_zero(t) && ggml_nelements(t) > 0) rg_fail("ggml_set_zero");
    return tensor;
}

SEXP R_ggml_get_f32(SEXP tensor) {
    const struct ggml_tensor * t = tensor_with_data(tensor, "ggml_get_f32");
    const int64_t n = ggml_nelements(t);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) n));
    double * o = REAL(out);
    if (t->type == GGML_TYPE_F32 && ggml_is_contiguous(t)) {
        const float * p = t->data;
        for (int64_t i = 0; i < n; i++) o[i] = p[i];
    } else {
        ggml_clear_error();
        for (int64_t i = 0; i < n; i++) o[i] = ggml_get_f32_1d(t, i);  /* any type and layout */
        check_error("ggml_get_f32");
    }
    UNPROTECT(1);
    return out;
}

SEXP R_ggml_get_f32_1d(SEXP tensor, SEXP i) {
    const struct ggml_tensor * t = tensor_with_data(tensor, "ggml_get_f32_1d");
    const int64_t idx = rg_count(i, "i");
    ggml_clear_error();
    const float v = ggml_get_f32_1d(t, idx);
    check_error("ggml_get_f32_1d");
    return Rf_ScalarReal(v);
}

SEXP R_ggml_set_f32_1d(SEXP tensor, SEXP i, SEXP value) {
    const struct ggml_tensor * t = tensor_with_data(tensor, "ggml_set_f32_1d");
    const int64_t idx = rg_count(i, "i");
    const float v = value_for(t, (double) rg_float(value, "value"), "ggml_set_f32_1d");
    ggml_clear_error();
    ggml_set_f32_1d(t, idx, v);
    check_error("ggml_set_f32_1d");
    return tensor;
}

/* i0..i3 as C ints (range-checked by the library). */
static void read_index(SEXP i0, SEXP i1, SEXP i2, SEXP i3, int idx[4]) {
    idx[0] = rg_int(i0, "i0");
    idx[1] = rg_int(i1, "i1");
    idx[2] = rg_int(i2, "i2");
    idx[3] = rg_int(i3, "i3");
}

SEXP R_ggml_get_f32_nd(SEXP tensor, SEXP i0, SEXP i1, SEXP i2, SEXP i3) {
    const struct ggml_tensor * t = tensor_with_data(tensor, "ggml_get_f32_nd");
    int idx[4];
    read_index(i0, i1, i2, i3, idx);
    ggml_clear_error();
    const float v = ggml_get_f32_nd(t, idx[0], idx[1], idx[2], idx[3]);
    check_error("ggml_get_f32_nd");
    return Rf_ScalarReal(v);
}

SEXP R_ggml_set_f32_nd(SEXP tensor, SEXP i0, SEXP i1, SEXP i2, SEXP i3, SEXP value) {
    const struct ggml_tensor * t = tensor_with_data(tensor, "ggml_set_f32_nd");
    int idx[4];
    read_index(i0, i1, i2, i3, idx);
    const float v = value_for(t, (double) rg_float(value, "value"), "ggml_set_f32_nd");
    ggml_clear_error();
    ggml_set_f32_nd(t, idx[0], idx[1], idx[2], idx[3], v);
    check_error("ggml_set_f32_nd");
    return tensor;
}

/* ---- fp16 ---- */

SEXP R_ggml_fp32_to_fp16(SEXP x) {
    const R_xlen_t n = rg_numeric_len(x, "x");
    SEXP out = PROTECT(Rf_allocVector(INTSXP, n));
    for (R_xlen_t i = 0; i < n; i++) INTEGER(out)[i] = ggml_fp32_to_fp16((float) rg_num_at(x, i));
    UNPROTECT(1);
    return out;
}

SEXP R_ggml_fp16_to_fp32(SEXP x) {
    const R_xlen_t n = rg_numeric_len(x, "x");
    for (R_xlen_t i = 0; i < n; i++) {
        const double v = rg_num_at(x, i);
        if (ISNAN(v) || v < 0 || v > 65535 || v != (double) (int) v)
            Rf_error("'x' must hold 16-bit patterns: whole numbers 0 to 65535 (element %lld is %g)", (long long) i + 1, v);
    }
    SEXP out = PROTECT(Rf_allocVector(REALSXP, n));
    for (R_xlen_t i = 0; i < n; i++) REAL(out)[i] = ggml_fp16_to_fp32((ggml_fp16_t) rg_num_at(x, i));
    UNPROTECT(1);
    return out;
}

/* glue_tensor.c -- tensor creation, facts about tensors and types, names,
 * element access (ggml_set_f32 / ggml_get_f32 and the 1d / nd accessors) and
 * the fp16 converters. */
#include "glue.h"

#include <math.h>
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
    /* C makes a tensor without data there and drops the value: refuse instead */
    if (ggml_get_no_alloc(c->ctx))
        Rf_error("ggml_new_f32: the context is no_alloc, so the value has nowhere to go (make the tensor with "
                 "ggml_new_tensor_1d, allocate it, then set its value)");
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
TENSOR_LOGICAL(ggml_is_transposed)
TENSOR_LOGICAL(ggml_is_permuted)
TENSOR_PAIR_LOGICAL(ggml_are_same_shape)
TENSOR_PAIR_LOGICAL(ggml_can_repeat)

SEXP R_ggml_n_dims(SEXP tensor) { return Rf_ScalarInteger(ggml_n_dims(rg_tensor_get(tensor, "tensor", 0))); }

/* t's 4 sizes (ne) or byte strides (nb) as R numbers */
static SEXP dims_vector(SEXP tensor, bool strides) {
    const struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, GGML_MAX_DIMS));
    for (int i = 0; i < GGML_MAX_DIMS; i++) REAL(out)[i] = strides ? (double) t->nb[i] : (double) t->ne[i];
    UNPROTECT(1);
    return out;
}

SEXP R_ggml_tensor_shape(SEXP tensor) { return dims_vector(tensor, false); }
SEXP R_ggml_tensor_nb(SEXP tensor) { return dims_vector(tensor, true); }

SEXP R_ggml_tensor_type(SEXP tensor) { return Rf_ScalarInteger((int) rg_tensor_get(tensor, "tensor", 0)->type); }
SEXP R_ggml_tensor_op(SEXP tensor)   { return Rf_ScalarInteger((int) rg_tensor_get(tensor, "tensor", 0)->op); }

SEXP R_ggml_type_size(SEXP type) { return rg_size_sexp((double) ggml_type_size(rg_type(type, "type"))); }
SEXP R_ggml_type_name(SEXP type) { return Rf_mkString(ggml_type_name(rg_type(type, "type"))); }
SEXP R_ggml_op_name(SEXP op)     { return Rf_mkString(ggml_op_name((enum ggml_op) rg_int(op, "op"))); }
SEXP R_ggml_unary_op_name(SEXP op) { return Rf_mkString(ggml_unary_op_name((enum ggml_unary_op) rg_int(op, "op"))); }

SEXP R_ggml_get_unary_op(SEXP tensor) {
    const struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    ggml_clear_error();
    const enum ggml_unary_op op = ggml_get_unary_op(t);
    if (op == GGML_UNARY_OP_COUNT) rg_fail("ggml_get_unary_op");
    return Rf_ScalarInteger((int) op);
}

/* Names are kept in UTF-8. One longer than the library's GGML_MAX_NAME - 1
 * bytes is cut at a character boundary, so that it reads back as valid UTF-8. */
SEXP R_ggml_set_name(SEXP tensor, SEXP name) {
    const char * s = rg_string(name, "name");
    struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    char buf[GGML_MAX_NAME];
    size_t n = strlen(s);
    if (n > sizeof buf - 1) {
        n = sizeof buf - 1;
        while (n > 0 && ((unsigned char) s[n] & 0xC0) == 0x80) n--;  /* s[n] continues a character: drop it whole */
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    ggml_set_name(t, buf);
    return tensor;
}

SEXP R_ggml_get_name(SEXP tensor) {
    return Rf_ScalarString(Rf_mkCharCE(ggml_get_name(rg_tensor_get(tensor, "tensor", 0)), CE_UTF8));
}

/* ---- element access ---- */

/* A tensor whose data lives in CPU memory (not yet true for a no_alloc context). */
static struct ggml_tensor * tensor_with_data(SEXP x, const char * fn) {
    struct ggml_tensor * t = rg_tensor_get(x, "tensor", 0);
    if (!t->data && ggml_nelements(t) > 0)
        Rf_error("%s: tensor '%s' has no data (a tensor of a no_alloc context has data once "
                 "ggml_backend_alloc_ctx_tensors allocated it, and loses it when that buffer is freed)", fn, t->name);
    return t;
}

/* Element access converts between R's doubles and the tensor's type here,
 * not through the C API's float: an I32 element holds any 32-bit integer
 * exactly, and an F16 element gets the binary16 value nearest to the double
 * (rg_half), not to the double first rounded to float. */

/* Address of element i (ne0 fastest) of t, for any layout. */
static char * elem_at(const struct ggml_tensor * t, int64_t i) {
    const int64_t i0 = i % t->ne[0]; i /= t->ne[0];
    const int64_t i1 = i % t->ne[1]; i /= t->ne[1];
    const int64_t i2 = i % t->ne[2];
    const int64_t i3 = i / t->ne[2];
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

/* The types whose elements are numbers of their own: everything but the
 * block types (quantized, and the types stored here without converters),
 * whose values ggml_get_array / ggml_set_array (de)quantize row by row. */
static void require_elements(const struct ggml_tensor * t, const char * fn) {
    switch (t->type) {
        case GGML_TYPE_F32: case GGML_TYPE_F16: case GGML_TYPE_BF16: case GGML_TYPE_F64:
        case GGML_TYPE_I8: case GGML_TYPE_I16: case GGML_TYPE_I32: case GGML_TYPE_I64: return;
        default:
            Rf_error("%s: a %s tensor holds blocks of %lld values, not single elements; "
                     "ggml_get_array / ggml_set_array convert whole rows", fn, ggml_type_name(t->type),
                     (long long) ggml_blck_size(t->type));
    }
}

/* tensor_with_data for the element accessors: a type with single elements */
static struct ggml_tensor * elements_with_data(SEXP tensor, const char * fn) {
    struct ggml_tensor * t = tensor_with_data(tensor, fn);
    require_elements(t, fn);
    return t;
}

static double load(const struct ggml_tensor * t, const char * p) {
    switch (t->type) {
        case GGML_TYPE_F32:  { float v; memcpy(&v, p, sizeof v); return v; }
        case GGML_TYPE_F16:  { ggml_fp16_t h; memcpy(&h, p, sizeof h); return ggml_fp16_to_fp32(h); }
        case GGML_TYPE_BF16: { ggml_bf16_t h; memcpy(&h, p, sizeof h); return ggml_bf16_to_fp32(h); }
        case GGML_TYPE_F64:  { double v; memcpy(&v, p, sizeof v); return v; }
        case GGML_TYPE_I8:   { int8_t v; memcpy(&v, p, sizeof v); return v; }
        case GGML_TYPE_I16:  { int16_t v; memcpy(&v, p, sizeof v); return v; }
        case GGML_TYPE_I64:  { int64_t v; memcpy(&v, p, sizeof v); return (double) v; }
        default:             { int32_t v; memcpy(&v, p, sizeof v); return v; }  /* I32 (require_elements ran) */
    }
}

/* Refuse (before anything is written) a value the tensor's type cannot hold:
 * for I32, NA/NaN, fractions and numbers outside 32 bits. */
static void check_value(const struct ggml_tensor * t, double v, R_xlen_t i, const char * fn) {
    double lo, hi;  /* an integer type's range (I64: the integers a double holds exactly) */
    const char * what;
    switch (t->type) {
        case GGML_TYPE_I8:  lo = INT8_MIN;  hi = INT8_MAX;  what = "an 8-bit integer"; break;
        case GGML_TYPE_I16: lo = INT16_MIN; hi = INT16_MAX; what = "a 16-bit integer"; break;
        case GGML_TYPE_I32: lo = INT32_MIN; hi = INT32_MAX; what = "a 32-bit integer"; break;
        case GGML_TYPE_I64: lo = -9007199254740992.0; hi = 9007199254740992.0; what = "a whole number within 2^53"; break;
        default: return;
    }
    if (ISNAN(v) || v != floor(v) || v < lo || v > hi) {
        if (i >= 0) Rf_error("%s: element %lld of 'values' (%g) is not %s (NA is not allowed)", fn, (long long) i + 1, v, what);
        Rf_error("%s: %g is not %s (NA is not allowed in an %s tensor)", fn, v, what, ggml_type_name(t->type));
    }
}

static void store(const struct ggml_tensor * t, char * p, double v) {
    switch (t->type) {
        case GGML_TYPE_F32: { const float f = (float) v; memcpy(p, &f, sizeof f); break; }
        case GGML_TYPE_F16: { const ggml_fp16_t h = rg_half(v); memcpy(p, &h, sizeof h); break; }
        case GGML_TYPE_BF16: { const ggml_bf16_t h = ggml_fp32_to_bf16((float) v); memcpy(p, &h, sizeof h); break; }
        case GGML_TYPE_F64: memcpy(p, &v, sizeof v); break;
        case GGML_TYPE_I8:  { const int8_t k = (int8_t) v; memcpy(p, &k, sizeof k); break; }
        case GGML_TYPE_I16: { const int16_t k = (int16_t) v; memcpy(p, &k, sizeof k); break; }
        case GGML_TYPE_I64: { const int64_t k = (int64_t) v; memcpy(p, &k, sizeof k); break; }
        default:            { const int32_t k = (int32_t) v; memcpy(p, &k, sizeof k); break; }  /* I32 */
    }
}

SEXP R_ggml_set_f32(SEXP tensor, SEXP values) {
    static const char * fn = "ggml_set_f32";
    struct ggml_tensor * t = elements_with_data(tensor, fn);
    const R_xlen_t n = rg_numeric_len(values, "values");
    const int64_t ne = ggml_nelements(t);
    if (ne == 0 && n <= 1) return tensor;  /* nothing to fill */
    if (n != 1 && (int64_t) n != ne)
        Rf_error("%s: 'values' has length %lld, which does not match the tensor's %lld elements (nor is it 1, a fill)",
                 fn, (long long) n, (long long) ne);
    for (R_xlen_t i = 0; i < n; i++) check_value(t, rg_num_at(values, i), n == 1 ? -1 : i, fn);
    if (t->type == GGML_TYPE_F32 && ggml_is_contiguous(t)) {
        float * p = t->data;
        for (int64_t i = 0; i < ne; i++) p[i] = (float) rg_num_at(values, n == 1 ? 0 : (R_xlen_t) i);
    } else {
        for (int64_t i = 0; i < ne; i++) store(t, elem_at(t, i), rg_num_at(values, n == 1 ? 0 : (R_xlen_t) i));
    }
    return tensor;
}

SEXP R_ggml_set_zero(SEXP tensor) {
    struct ggml_tensor * t = tensor_with_data(tensor, "ggml_set_zero");
    if (ggml_is_contiguous(t)) { memset(t->data, 0, ggml_nbytes(t)); return tensor; }  /* any type: zero bytes are zeros */
    require_elements(t, "ggml_set_zero");
    const int64_t ne = ggml_nelements(t);
    for (int64_t i = 0; i < ne; i++) store(t, elem_at(t, i), 0.0);
    return tensor;
}

SEXP R_ggml_get_f32(SEXP tensor) {
    const struct ggml_tensor * t = elements_with_data(tensor, "ggml_get_f32");
    const int64_t n = ggml_nelements(t);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) n));
    double * o = REAL(out);
    if (t->type == GGML_TYPE_F32 && ggml_is_contiguous(t)) {
        const float * p = t->data;
        for (int64_t i = 0; i < n; i++) o[i] = p[i];
    } else {
        for (int64_t i = 0; i < n; i++) o[i] = load(t, elem_at(t, i));  /* any type and layout */
    }
    UNPROTECT(1);
    return out;
}

/* A 0-based flat index into t, or an R error naming fn. */
static int64_t flat_index(const struct ggml_tensor * t, SEXP i, const char * fn) {
    const int64_t idx = rg_count(i, "i");
    if (idx >= ggml_nelements(t))
        Rf_error("%s: index %lld out of range [0, %lld)", fn, (long long) idx, (long long) ggml_nelements(t));
    return idx;
}

SEXP R_ggml_get_f32_1d(SEXP tensor, SEXP i) {
    const struct ggml_tensor * t = elements_with_data(tensor, "ggml_get_f32_1d");
    return Rf_ScalarReal(load(t, elem_at(t, flat_index(t, i, "ggml_get_f32_1d"))));
}

SEXP R_ggml_set_f32_1d(SEXP tensor, SEXP i, SEXP value) {
    static const char * fn = "ggml_set_f32_1d";
    const struct ggml_tensor * t = elements_with_data(tensor, fn);
    const int64_t idx = flat_index(t, i, fn);
    const double v = rg_double(value, "value");
    check_value(t, v, -1, fn);
    store(t, elem_at(t, idx), v);
    return tensor;
}

/* The address of element (i0, i1, i2, i3) of t, or an R error naming fn. */
static char * nd_at(const struct ggml_tensor * t, SEXP i0, SEXP i1, SEXP i2, SEXP i3, const char * fn) {
    const int idx[4] = {rg_int(i0, "i0"), rg_int(i1, "i1"), rg_int(i2, "i2"), rg_int(i3, "i3")};
    for (int k = 0; k < 4; k++) {
        if (idx[k] < 0 || idx[k] >= t->ne[k])
            Rf_error("%s: index (%d, %d, %d, %d) out of range for shape [%lld, %lld, %lld, %lld]", fn, idx[0], idx[1],
                     idx[2], idx[3], (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2], (long long) t->ne[3]);
    }
    return (char *) t->data + idx[0] * t->nb[0] + idx[1] * t->nb[1] + idx[2] * t->nb[2] + idx[3] * t->nb[3];
}

SEXP R_ggml_get_f32_nd(SEXP tensor, SEXP i0, SEXP i1, SEXP i2, SEXP i3) {
    const struct ggml_tensor * t = elements_with_data(tensor, "ggml_get_f32_nd");
    return Rf_ScalarReal(load(t, nd_at(t, i0, i1, i2, i3, "ggml_get_f32_nd")));
}

SEXP R_ggml_set_f32_nd(SEXP tensor, SEXP i0, SEXP i1, SEXP i2, SEXP i3, SEXP value) {
    static const char * fn = "ggml_set_f32_nd";
    const struct ggml_tensor * t = elements_with_data(tensor, fn);
    char * p = nd_at(t, i0, i1, i2, i3, fn);
    const double v = rg_double(value, "value");
    check_value(t, v, -1, fn);
    store(t, p, v);
    return tensor;
}

/* ---- fp16 ---- */

SEXP R_ggml_fp32_to_fp16(SEXP x) {
    const R_xlen_t n = rg_numeric_len(x, "x");
    SEXP out = PROTECT(Rf_allocVector(INTSXP, n));
    for (R_xlen_t i = 0; i < n; i++) INTEGER(out)[i] = rg_half(rg_num_at(x, i));
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

/* ---- quantized types: facts, quantizing and dequantizing R numbers ---- */

SEXP R_ggml_blck_size(SEXP type)   { return rg_size_sexp((double) ggml_blck_size(rg_type(type, "type"))); }
SEXP R_ggml_type_sizef(SEXP type)  { return Rf_ScalarReal(ggml_type_sizef(rg_type(type, "type"))); }
SEXP R_ggml_is_quantized(SEXP type) { return Rf_ScalarLogical(ggml_is_quantized(rg_type(type, "type"))); }
SEXP R_ggml_quantize_requires_imatrix(SEXP type) {
    return Rf_ScalarLogical(ggml_quantize_requires_imatrix(rg_type(type, "type")));
}
SEXP R_ggml_quantize_init(SEXP type) { ggml_quantize_init(rg_type(type, "type")); return R_NilValue; }
SEXP R_ggml_quantize_free(void)      { ggml_quantize_free(); return R_NilValue; }

/* n values of x as floats (R_alloc); finite ones only when `finite` (a
 * quantizer cannot hold NA, NaN or infinity). */
static float * floats_of(SEXP x, R_xlen_t n, int finite, const char * arg, const char * fn) {
    float * f = (float *) R_alloc((size_t) (n > 0 ? n : 1), sizeof(float));
    for (R_xlen_t i = 0; i < n; i++) {
        f[i] = (float) rg_num_at(x, i);
        if (finite && !isfinite(f[i]))
            Rf_error("%s: element %lld of '%s' (%g) is not a finite float: it cannot be quantized", fn, (long long) i + 1, arg,
                     rg_num_at(x, i));
    }
    return f;
}

/* `type` whose rows of n_per_row elements are whole blocks, or an R error. */
static void check_row(enum ggml_type ty, int64_t n_per_row, const char * fn) {
    const int64_t b = ggml_blck_size(ty);
    if (n_per_row % b != 0)
        Rf_error("%s: a row of type %s holds whole blocks of %lld elements (got %lld elements)", fn, ggml_type_name(ty),
                 (long long) b, (long long) n_per_row);
}

SEXP R_ggml_quantize_chunk(SEXP type, SEXP src, SEXP nrows, SEXP n_per_row, SEXP imatrix) {
    static const char * fn = "ggml_quantize_chunk";
    const enum ggml_type ty = rg_type(type, "type");
    const R_xlen_t n = rg_numeric_len(src, "src");
    const int64_t nr = rg_count(nrows, "nrows"), npr = rg_count(n_per_row, "n_per_row");
    if ((npr > 0 && nr > INT64_MAX / npr) || nr * npr != (int64_t) n)
        Rf_error("%s: 'src' has %lld values, not nrows * n_per_row (%lld * %lld)", fn, (long long) n, (long long) nr,
                 (long long) npr);
    check_row(ty, npr, fn);
    const float * im = NULL;
    if (imatrix != R_NilValue) {
        const R_xlen_t ni = rg_numeric_len(imatrix, "imatrix");
        if (ni != npr) Rf_error("%s: 'imatrix' must have n_per_row (%lld) weights (got %lld)", fn, (long long) npr, (long long) ni);
        im = floats_of(imatrix, ni, 1, "imatrix", fn);
    }
    const float * f = floats_of(src, n, ggml_is_quantized(ty), "src", fn);
    const size_t bytes = ggml_row_size(ty, npr) * (size_t) nr;
    SEXP out = PROTECT(Rf_allocVector(RAWSXP, (R_xlen_t) bytes));
    if (n > 0) {
        ggml_clear_error();
        if (ggml_quantize_chunk(ty, f, RAW(out), 0, nr, npr, im) != bytes) rg_fail(fn);
    }
    UNPROTECT(1);
    return out;
}

/* One row of n_elements values of src as the bytes of type, by the type's
 * reference quantizer (upstream's quantize_row_*_ref). Q8_K, an activation
 * type, has none in the public traits: its CPU quantizer does that job. */
SEXP R_ggml_quantize_row_ref(SEXP type, SEXP src, SEXP n_elements) {
    static const char * fn = "quantize_row_ref";
    const enum ggml_type ty = rg_type(type, "type");
    const R_xlen_t n_src = rg_numeric_len(src, "src_data");
    const int64_t n = rg_count(n_elements, "n_elements");
    if ((int64_t) n_src != n)
        Rf_error("%s: 'src_data' has %lld values, not n_elements (%lld)", fn, (long long) n_src, (long long) n);
    check_row(ty, n, fn);
    const struct ggml_type_traits * tt = ggml_get_type_traits(ty);
    const struct ggml_type_traits_cpu * cpu = ggml_get_type_traits_cpu(ty);
    ggml_from_float_t quantize = tt && tt->from_float_ref ? tt->from_float_ref
                               : ty == GGML_TYPE_Q8_K && cpu ? cpu->from_float : NULL;
    if (!quantize || !ggml_is_quantized(ty))
        Rf_error("%s: type %s has no reference quantizer here", fn, ggml_type_name(ty));
    const float * f = floats_of(src, n_src, 1, "src_data", fn);
    SEXP out = PROTECT(Rf_allocVector(RAWSXP, (R_xlen_t) ggml_row_size(ty, n)));
    if (n > 0) quantize(f, RAW(out), n);
    UNPROTECT(1);
    return out;
}

/* The first n elements held by the bytes `data` of type `type`, as doubles. */
SEXP R_ggml_dequantize_row(SEXP type, SEXP data, SEXP n_elements) {
    static const char * fn = "ggml_dequantize_row";
    const enum ggml_type ty = rg_type(type, "type");
    if (TYPEOF(data) != RAWSXP) Rf_error("%s: 'data' must be a raw vector", fn);
    const int64_t n = rg_count(n_elements, "n_elements");
    check_row(ty, n, fn);
    const size_t bytes = ggml_row_size(ty, n);
    if (bytes > (size_t) XLENGTH(data))
        Rf_error("%s: %lld elements of type %s take %zu bytes, 'data' has %lld", fn, (long long) n, ggml_type_name(ty), bytes,
                 (long long) XLENGTH(data));
    const struct ggml_type_traits * tt = ggml_get_type_traits(ty);
    if (!tt || !tt->to_float)
        Rf_error("%s: type %s has no conversion to numbers here", fn, ggml_type_name(ty));
    float * f = (float *) R_alloc((size_t) (n > 0 ? n : 1), sizeof(float));
    if (n > 0) tt->to_float(RAW(data), f, n);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) n));
    for (int64_t i = 0; i < n; i++) REAL(out)[i] = f[i];
    UNPROTECT(1);
    return out;
}

/* glue_args.c -- conversion of R arguments to C values.
 *
 * Each converter either returns a valid C value or signals an R error that
 * names the argument. They run before any C state changes, so an error here
 * never leaves anything half done. */
#include "glue.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#define MAX_EXACT 9007199254740992.0  /* 2^53: every whole double up to here is exact */

static const char * kind(SEXP x) {
    if (x == R_NilValue) return "NULL";
    if (Rf_isFactor(x)) return "a factor";
    return Rf_type2char(TYPEOF(x));
}

/* One number (integer or double), not NA; factors and logicals are refused. */
static double scalar(SEXP x, const char * arg) {
    if ((TYPEOF(x) != INTSXP && TYPEOF(x) != REALSXP) || Rf_isFactor(x) || XLENGTH(x) != 1)
        Rf_error("'%s' must be a single number (got %s of length %lld)", arg, kind(x),
                 x == R_NilValue ? 0LL : (long long) XLENGTH(x));
    if (TYPEOF(x) == INTSXP) {
        if (INTEGER(x)[0] == NA_INTEGER) Rf_error("'%s' must not be NA", arg);
        return (double) INTEGER(x)[0];
    }
    const double v = REAL(x)[0];
    if (R_IsNA(v)) Rf_error("'%s' must not be NA", arg);
    return v;
}

int64_t rg_count_value(double v, const char * arg) {
    if (ISNAN(v)) Rf_error("'%s' must not be NA or NaN", arg);
    if (!isfinite(v)) Rf_error("'%s' must be finite", arg);
    if (v < 0) Rf_error("'%s' must not be negative (got %g)", arg, v);
    if (v != floor(v)) Rf_error("'%s' must be a whole number (got %g)", arg, v);
    if (v > MAX_EXACT) Rf_error("'%s' is too large (got %g)", arg, v);
    return (int64_t) v;
}

int64_t rg_count(SEXP x, const char * arg) { return rg_count_value(scalar(x, arg), arg); }

size_t rg_bytes(SEXP x, const char * arg) {
    const int64_t v = rg_count(x, arg);
    if ((uint64_t) v > (uint64_t) SIZE_MAX) Rf_error("'%s' is too large", arg);
    return (size_t) v;
}

int rg_int(SEXP x, const char * arg) {
    const double v = scalar(x, arg);
    if (ISNAN(v)) Rf_error("'%s' must not be NaN", arg);
    if (v != floor(v) || v < -INT_MAX || v > INT_MAX) Rf_error("'%s' must be a whole number in integer range (got %g)", arg, v);
    return (int) v;
}

float rg_float(SEXP x, const char * arg) { return (float) scalar(x, arg); }

double rg_double(SEXP x, const char * arg) { return scalar(x, arg); }

int rg_is_int32(double v) { return !ISNAN(v) && v == floor(v) && v >= INT32_MIN && v <= INT32_MAX; }

/* Rounding a double to float and then to binary16 can be wrong: a double
 * just above a binary16 tie rounds to the tie itself as a float, which then
 * goes to even (down). Rounding to float "to odd" instead -- truncate, and set
 * the last bit when anything was cut off -- keeps the information that the
 * value was off the tie, and with 13 spare bits the second rounding is then
 * exactly the direct one. */
ggml_fp16_t rg_half(double v) {
    float f = (float) v;
    if (isfinite(f) && (double) f != v) {
        if (fabs((double) f) > fabs(v)) f = nextafterf(f, 0.0f);
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        u |= 1u;
        memcpy(&f, &u, sizeof f);
    }
    return ggml_fp32_to_fp16(f);
}

int rg_bool(SEXP x, const char * arg) {
    if (TYPEOF(x) != LGLSXP || XLENGTH(x) != 1 || LOGICAL(x)[0] == NA_LOGICAL)
        Rf_error("'%s' must be TRUE or FALSE", arg);
    return LOGICAL(x)[0];
}

enum ggml_type rg_type(SEXP x, const char * arg) {
    const int v = rg_int(x, arg);
    /* any type of enum ggml_type (not the holes of removed ones); whether a
     * tensor of it can be made is the library's to say */
    const struct ggml_type_traits * tt = v >= 0 && v < GGML_TYPE_COUNT ? ggml_get_type_traits((enum ggml_type) v) : NULL;
    if (!tt || !tt->type_name || tt->blck_size <= 0)
        Rf_error("'%s' must be a tensor type, one of the GGML_TYPE_* constants (got %d)", arg, v);
    return (enum ggml_type) v;
}

const char * rg_string(SEXP x, const char * arg) {
    if (TYPEOF(x) != STRSXP || XLENGTH(x) != 1 || STRING_ELT(x, 0) == NA_STRING)
        Rf_error("'%s' must be a single string, not NA", arg);
    return Rf_translateCharUTF8(STRING_ELT(x, 0));
}

R_xlen_t rg_numeric_len(SEXP x, const char * arg) {
    if ((TYPEOF(x) != INTSXP && TYPEOF(x) != REALSXP) || Rf_isFactor(x))
        Rf_error("'%s' must be a numeric vector (got %s)", arg, kind(x));
    return XLENGTH(x);
}

double rg_num_at(SEXP x, R_xlen_t i) {
    if (TYPEOF(x) == INTSXP) {
        const int v = INTEGER(x)[i];
        return v == NA_INTEGER ? NA_REAL : (double) v;
    }
    return REAL(x)[i];
}

SEXP rg_size_sexp(double v) { return Rf_ScalarReal(v); }

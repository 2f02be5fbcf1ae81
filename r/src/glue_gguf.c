/* glue_gguf.c -- GGUF files (gguf.h): contexts, key/value pairs, tensor
 * infos, reading and writing.
 *
 * gguf_add_tensor keeps a pointer to the tensor's data, read when the file is
 * written. The handle therefore keeps every added tensor's handle (and so its
 * context), and gguf_write_to_file first checks that each one is still usable
 * and points the info at the tensor's current data (a buffer may have been
 * freed or allocated again since). Key and tensor ids count from 0, as in C. */
#include "glue.h"

#include "gguf.h"

#include <math.h>
#include <string.h>

#define CLS_GGUF "gguf_context"

static void gguf_release(SEXP x) {
    struct gguf_context * g = R_ExternalPtrAddr(x);
    if (!g) return;
    R_ClearExternalPtr(x);
    gguf_free(g);
}

static struct gguf_context * gguf_arg(SEXP x) { return rg_object_get(x, CLS_GGUF, "ctx"); }

/* A new handle; prot holds the list of added tensor handles. */
static SEXP gguf_handle(void) {
    SEXP added = PROTECT(Rf_allocVector(VECSXP, 0));
    SEXP x = rg_object_handle(CLS_GGUF, added, gguf_release);
    UNPROTECT(1);
    return x;
}

SEXP R_gguf_init_empty(void) {
    SEXP x = PROTECT(gguf_handle());
    ggml_clear_error();
    rg_object_set(x, gguf_init_empty(), "gguf_init_empty");
    UNPROTECT(1);
    return x;
}

/* list(gguf = the GGUF context, ctx = a ggml context of its tensors or NULL) */
SEXP R_gguf_init_from_file(SEXP fname, SEXP no_alloc, SEXP with_ctx) {
    if (TYPEOF(fname) != STRSXP || XLENGTH(fname) != 1 || STRING_ELT(fname, 0) == NA_STRING)
        Rf_error("'fname' must be a single string, not NA");
    const char * path = R_ExpandFileName(Rf_translateChar(STRING_ELT(fname, 0)));
    const int na = rg_bool(no_alloc, "no_alloc"), wc = rg_bool(with_ctx, "ctx");
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
    SEXP names = PROTECT(Rf_allocVector(STRSXP, 2));
    SET_STRING_ELT(names, 0, Rf_mkChar("gguf"));
    SET_STRING_ELT(names, 1, Rf_mkChar("ctx"));
    Rf_setAttrib(out, R_NamesSymbol, names);
    SEXP x = gguf_handle();
    SET_VECTOR_ELT(out, 0, x);
    rg_ctx * rec = NULL;
    if (wc) SET_VECTOR_ELT(out, 1, rg_ctx_new_handle(&rec));  /* before the load: nothing can leak */
    struct gguf_init_params params = {na, rec ? &rec->ctx : NULL};
    ggml_clear_error();
    struct gguf_context * g = gguf_init_from_file(path, params);
    if (!g) {
        if (rec) rec->closed = 1;
        rg_fail("gguf_init_from_file");
    }
    R_SetExternalPtrAddr(x, g);
    UNPROTECT(2);
    return out;
}

SEXP R_gguf_free(SEXP ctx) { return rg_object_free(ctx, CLS_GGUF, "ctx", gguf_release); }

SEXP R_gguf_type_name(SEXP type) {
    const int t = rg_int(type, "type");
    if (t < 0 || t >= GGUF_TYPE_COUNT) Rf_error("'type' must be a GGUF type 0..%d (got %d)", GGUF_TYPE_COUNT - 1, t);
    return Rf_mkString(gguf_type_name((enum gguf_type) t));
}

/* ---- facts ---- */

SEXP R_gguf_get_version(SEXP ctx)     { return rg_size_sexp((double) gguf_get_version(gguf_arg(ctx))); }
SEXP R_gguf_get_alignment(SEXP ctx)   { return rg_size_sexp((double) gguf_get_alignment(gguf_arg(ctx))); }
SEXP R_gguf_get_data_offset(SEXP ctx) { return rg_size_sexp((double) gguf_get_data_offset(gguf_arg(ctx))); }
SEXP R_gguf_get_n_kv(SEXP ctx)        { return rg_size_sexp((double) gguf_get_n_kv(gguf_arg(ctx))); }
SEXP R_gguf_get_n_tensors(SEXP ctx)   { return rg_size_sexp((double) gguf_get_n_tensors(gguf_arg(ctx))); }
SEXP R_gguf_get_meta_size(SEXP ctx)   { return rg_size_sexp((double) gguf_get_meta_size(gguf_arg(ctx))); }

SEXP R_gguf_find_key(SEXP ctx, SEXP key) {
    struct gguf_context * g = gguf_arg(ctx);
    return rg_size_sexp((double) gguf_find_key(g, rg_string(key, "key")));
}

SEXP R_gguf_find_tensor(SEXP ctx, SEXP name) {
    struct gguf_context * g = gguf_arg(ctx);
    return rg_size_sexp((double) gguf_find_tensor(g, rg_string(name, "name")));
}

SEXP R_gguf_remove_key(SEXP ctx, SEXP key) {
    struct gguf_context * g = gguf_arg(ctx);
    return rg_size_sexp((double) gguf_remove_key(g, rg_string(key, "key")));
}

/* ---- by id: the library checks the id (sentinel + message) ---- */

#define CALL_ID(ctx, id, call) \
    struct gguf_context * g = gguf_arg(ctx); \
    const int64_t i = rg_count(id, "id"); \
    ggml_clear_error(); \
    call; \
    if (ggml_last_error()[0]) rg_fail(__func__);

static SEXP utf8(const char * s) { return Rf_ScalarString(Rf_mkCharCE(s, CE_UTF8)); }

SEXP R_gguf_get_key(SEXP ctx, SEXP id)         { CALL_ID(ctx, id, const char * s = gguf_get_key(g, i)); return utf8(s); }
SEXP R_gguf_get_kv_type(SEXP ctx, SEXP id)     { CALL_ID(ctx, id, const int t = gguf_get_kv_type(g, i)); return Rf_ScalarInteger(t); }
SEXP R_gguf_get_arr_type(SEXP ctx, SEXP id)    { CALL_ID(ctx, id, const int t = gguf_get_arr_type(g, i)); return Rf_ScalarInteger(t); }
SEXP R_gguf_get_arr_n(SEXP ctx, SEXP id)       { CALL_ID(ctx, id, const size_t n = gguf_get_arr_n(g, i)); return rg_size_sexp((double) n); }
SEXP R_gguf_get_tensor_name(SEXP ctx, SEXP id) { CALL_ID(ctx, id, const char * s = gguf_get_tensor_name(g, i)); return utf8(s); }
SEXP R_gguf_get_tensor_type(SEXP ctx, SEXP id) { CALL_ID(ctx, id, const int t = gguf_get_tensor_type(g, i)); return Rf_ScalarInteger(t); }
SEXP R_gguf_get_tensor_size(SEXP ctx, SEXP id) { CALL_ID(ctx, id, const size_t n = gguf_get_tensor_size(g, i)); return rg_size_sexp((double) n); }
SEXP R_gguf_get_tensor_offset(SEXP ctx, SEXP id) {
    CALL_ID(ctx, id, const size_t n = gguf_get_tensor_offset(g, i));
    return rg_size_sexp((double) n);
}

SEXP R_gguf_get_tensor_ne(SEXP ctx, SEXP id) {
    CALL_ID(ctx, id, const int64_t * ne = gguf_get_tensor_ne(g, i));
    if (!ne) rg_fail("gguf_get_tensor_ne");
    SEXP out = PROTECT(Rf_allocVector(REALSXP, GGML_MAX_DIMS));
    for (int k = 0; k < GGML_MAX_DIMS; k++) REAL(out)[k] = (double) ne[k];
    UNPROTECT(1);
    return out;
}

/* The value of scalar key id read as `type` (the library refuses another type). */
SEXP R_gguf_get_val(SEXP ctx, SEXP id, SEXP type) {
    const int t = rg_int(type, "type");
    CALL_ID(ctx, id, (void) 0);
    SEXP out = R_NilValue;
    switch (t) {
        case GGUF_TYPE_UINT8:   out = Rf_ScalarInteger(gguf_get_val_u8(g, i)); break;
        case GGUF_TYPE_INT8:    out = Rf_ScalarInteger(gguf_get_val_i8(g, i)); break;
        case GGUF_TYPE_UINT16:  out = Rf_ScalarInteger(gguf_get_val_u16(g, i)); break;
        case GGUF_TYPE_INT16:   out = Rf_ScalarInteger(gguf_get_val_i16(g, i)); break;
        case GGUF_TYPE_UINT32:  out = Rf_ScalarReal((double) gguf_get_val_u32(g, i)); break;
        case GGUF_TYPE_INT32:   out = Rf_ScalarInteger(gguf_get_val_i32(g, i)); break;
        case GGUF_TYPE_FLOAT32: out = Rf_ScalarReal((double) gguf_get_val_f32(g, i)); break;
        case GGUF_TYPE_UINT64:  out = Rf_ScalarReal((double) gguf_get_val_u64(g, i)); break;
        case GGUF_TYPE_INT64:   out = Rf_ScalarReal((double) gguf_get_val_i64(g, i)); break;
        case GGUF_TYPE_FLOAT64: out = Rf_ScalarReal(gguf_get_val_f64(g, i)); break;
        case GGUF_TYPE_BOOL:    out = Rf_ScalarLogical(gguf_get_val_bool(g, i)); break;
        case GGUF_TYPE_STRING: {
            const char * s = gguf_get_val_str(g, i);
            if (!s) rg_fail("gguf_get_val_str");
            out = utf8(s);
            break;
        }
        default: Rf_error("gguf_get_val: unknown type %d", t);
    }
    PROTECT(out);
    if (ggml_last_error()[0]) rg_fail("gguf_get_val");
    UNPROTECT(1);
    return out;
}

/* The elements of array key id: numbers (integer or double by type), logicals, or strings. */
SEXP R_gguf_get_arr_data(SEXP ctx, SEXP id) {
    CALL_ID(ctx, id, const int t = gguf_get_arr_type(g, i));
    if (gguf_get_kv_type(g, i) != GGUF_TYPE_ARRAY) Rf_error("gguf_get_arr_data: key %lld is not an array", (long long) i);
    const size_t n = gguf_get_arr_n(g, i);
    if (n > (size_t) R_XLEN_T_MAX) Rf_error("gguf_get_arr_data: array too long");
    if (t == GGUF_TYPE_STRING) {
        SEXP out = PROTECT(Rf_allocVector(STRSXP, (R_xlen_t) n));
        for (size_t k = 0; k < n; k++) {
            const char * s = gguf_get_arr_str(g, i, k);
            if (!s) rg_fail("gguf_get_arr_str");
            SET_STRING_ELT(out, (R_xlen_t) k, Rf_mkCharCE(s, CE_UTF8));
        }
        UNPROTECT(1);
        return out;
    }
    ggml_clear_error();
    const void * p = gguf_get_arr_data(g, i);
    if (!p && n > 0) rg_fail("gguf_get_arr_data");
    const int is_int = t == GGUF_TYPE_UINT8 || t == GGUF_TYPE_INT8 || t == GGUF_TYPE_UINT16 || t == GGUF_TYPE_INT16 || t == GGUF_TYPE_INT32;
    SEXP out = PROTECT(Rf_allocVector(t == GGUF_TYPE_BOOL ? LGLSXP : is_int ? INTSXP : REALSXP, (R_xlen_t) n));
    for (size_t k = 0; k < n; k++) {
        double v = 0;
        switch (t) {
            case GGUF_TYPE_UINT8:   v = ((const uint8_t *) p)[k]; break;
            case GGUF_TYPE_INT8:    v = ((const int8_t *) p)[k]; break;
            case GGUF_TYPE_UINT16:  { uint16_t x; memcpy(&x, (const char *) p + 2 * k, 2); v = x; break; }
            case GGUF_TYPE_INT16:   { int16_t x; memcpy(&x, (const char *) p + 2 * k, 2); v = x; break; }
            case GGUF_TYPE_UINT32:  { uint32_t x; memcpy(&x, (const char *) p + 4 * k, 4); v = x; break; }
            case GGUF_TYPE_INT32:   { int32_t x; memcpy(&x, (const char *) p + 4 * k, 4); v = x; break; }
            case GGUF_TYPE_FLOAT32: { float x; memcpy(&x, (const char *) p + 4 * k, 4); v = x; break; }
            case GGUF_TYPE_UINT64:  { uint64_t x; memcpy(&x, (const char *) p + 8 * k, 8); v = (double) x; break; }
            case GGUF_TYPE_INT64:   { int64_t x; memcpy(&x, (const char *) p + 8 * k, 8); v = (double) x; break; }
            case GGUF_TYPE_FLOAT64: memcpy(&v, (const char *) p + 8 * k, 8); break;
            case GGUF_TYPE_BOOL:    v = ((const uint8_t *) p)[k] != 0; break;
            default: Rf_error("gguf_get_arr_data: unsupported element type %d", t);
        }
        if (t == GGUF_TYPE_BOOL) LOGICAL(out)[k] = (int) v;
        else if (is_int) INTEGER(out)[k] = (int) v;
        else REAL(out)[k] = v;
    }
    UNPROTECT(1);
    return out;
}

/* ---- setters ---- */

/* Value i of x as a number of gguf type t, range-checked (an R error otherwise). */
static double number_for(SEXP x, R_xlen_t i, int t, const char * fn) {
    const double v = rg_num_at(x, i);
    if (ISNAN(v)) Rf_error("%s: element %lld is NA or NaN", fn, (long long) i + 1);
    if (t == GGUF_TYPE_FLOAT32 || t == GGUF_TYPE_FLOAT64) return v;
    double lo = 0, hi = 0;
    switch (t) {
        case GGUF_TYPE_UINT8:  hi = 255; break;
        case GGUF_TYPE_INT8:   lo = -128; hi = 127; break;
        case GGUF_TYPE_UINT16: hi = 65535; break;
        case GGUF_TYPE_INT16:  lo = -32768; hi = 32767; break;
        case GGUF_TYPE_UINT32: hi = 4294967295.0; break;
        case GGUF_TYPE_INT32:  lo = -2147483648.0; hi = 2147483647.0; break;
        case GGUF_TYPE_UINT64: hi = 9007199254740992.0; break;   /* exact in a double */
        case GGUF_TYPE_INT64:  lo = -9007199254740992.0; hi = 9007199254740992.0; break;
        default: Rf_error("%s: type %d is not a number type", fn, t);
    }
    if (v != floor(v) || v < lo || v > hi)
        Rf_error("%s: %g is not a whole number in the range of %s", fn, v, gguf_type_name((enum gguf_type) t));
    return v;
}

SEXP R_gguf_set_val(SEXP ctx, SEXP key, SEXP type, SEXP value) {
    struct gguf_context * g = gguf_arg(ctx);
    const char * k = rg_string(key, "key");
    const int t = rg_int(type, "type");
    const char * fn = "gguf_set_val";
    ggml_clear_error();
    if (t == GGUF_TYPE_STRING) {
        gguf_set_val_str(g, k, rg_string(value, "val"));
    } else if (t == GGUF_TYPE_BOOL) {
        gguf_set_val_bool(g, k, rg_bool(value, "val"));
    } else {
        if (rg_numeric_len(value, "val") != 1) Rf_error("%s: 'val' must be a single number", fn);
        const double v = number_for(value, 0, t, fn);
        switch (t) {
            case GGUF_TYPE_UINT8:   gguf_set_val_u8(g, k, (uint8_t) v); break;
            case GGUF_TYPE_INT8:    gguf_set_val_i8(g, k, (int8_t) v); break;
            case GGUF_TYPE_UINT16:  gguf_set_val_u16(g, k, (uint16_t) v); break;
            case GGUF_TYPE_INT16:   gguf_set_val_i16(g, k, (int16_t) v); break;
            case GGUF_TYPE_UINT32:  gguf_set_val_u32(g, k, (uint32_t) v); break;
            case GGUF_TYPE_INT32:   gguf_set_val_i32(g, k, (int32_t) v); break;
            case GGUF_TYPE_FLOAT32: gguf_set_val_f32(g, k, (float) v); break;
            case GGUF_TYPE_UINT64:  gguf_set_val_u64(g, k, (uint64_t) v); break;
            case GGUF_TYPE_INT64:   gguf_set_val_i64(g, k, (int64_t) v); break;
            default:                gguf_set_val_f64(g, k, v); break;
        }
    }
    if (ggml_last_error()[0]) rg_fail(fn);
    return ctx;
}

static size_t gguf_type_size(int t) {
    switch (t) {
        case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: return 1;
        case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: return 2;
        case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: return 4;
        case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64: return 8;
        default: return 0;
    }
}

SEXP R_gguf_set_arr_data(SEXP ctx, SEXP key, SEXP type, SEXP values) {
    static const char * fn = "gguf_set_arr_data";
    struct gguf_context * g = gguf_arg(ctx);
    const char * k = rg_string(key, "key");
    const int t = rg_int(type, "type");
    const size_t es = gguf_type_size(t);
    if (es == 0) Rf_error("%s: 'type' must be a number or bool GGUF type (got %d)", fn, t);
    R_xlen_t n;
    if (t == GGUF_TYPE_BOOL) {
        if (TYPEOF(values) != LGLSXP) Rf_error("%s: a bool array needs a logical vector", fn);
        n = XLENGTH(values);
    } else {
        n = rg_numeric_len(values, "data");
    }
    char * buf = R_alloc((size_t) n + 1, es);
    for (R_xlen_t i = 0; i < n; i++) {
        char * p = buf + (size_t) i * es;
        if (t == GGUF_TYPE_BOOL) {
            if (LOGICAL(values)[i] == NA_LOGICAL) Rf_error("%s: element %lld is NA", fn, (long long) i + 1);
            *p = (char) (LOGICAL(values)[i] != 0);
            continue;
        }
        const double v = number_for(values, i, t, fn);
        switch (t) {
            case GGUF_TYPE_UINT8:   { uint8_t x = (uint8_t) v;   memcpy(p, &x, es); break; }
            case GGUF_TYPE_INT8:    { int8_t x = (int8_t) v;     memcpy(p, &x, es); break; }
            case GGUF_TYPE_UINT16:  { uint16_t x = (uint16_t) v; memcpy(p, &x, es); break; }
            case GGUF_TYPE_INT16:   { int16_t x = (int16_t) v;   memcpy(p, &x, es); break; }
            case GGUF_TYPE_UINT32:  { uint32_t x = (uint32_t) v; memcpy(p, &x, es); break; }
            case GGUF_TYPE_INT32:   { int32_t x = (int32_t) v;   memcpy(p, &x, es); break; }
            case GGUF_TYPE_FLOAT32: { float x = (float) v;       memcpy(p, &x, es); break; }
            case GGUF_TYPE_UINT64:  { uint64_t x = (uint64_t) v; memcpy(p, &x, es); break; }
            case GGUF_TYPE_INT64:   { int64_t x = (int64_t) v;   memcpy(p, &x, es); break; }
            default:                memcpy(p, &v, es); break;
        }
    }
    ggml_clear_error();
    gguf_set_arr_data(g, k, (enum gguf_type) t, buf, (size_t) n);
    if (ggml_last_error()[0]) rg_fail(fn);
    return ctx;
}

SEXP R_gguf_set_arr_str(SEXP ctx, SEXP key, SEXP strings) {
    static const char * fn = "gguf_set_arr_str";
    struct gguf_context * g = gguf_arg(ctx);
    const char * k = rg_string(key, "key");
    if (TYPEOF(strings) != STRSXP) Rf_error("%s: 'data' must be a character vector", fn);
    const R_xlen_t n = XLENGTH(strings);
    const char ** v = (const char **) R_alloc((size_t) n + 1, sizeof *v);
    for (R_xlen_t i = 0; i < n; i++) {
        if (STRING_ELT(strings, i) == NA_STRING) Rf_error("%s: element %lld is NA", fn, (long long) i + 1);
        v[i] = Rf_translateCharUTF8(STRING_ELT(strings, i));
    }
    ggml_clear_error();
    gguf_set_arr_str(g, k, v, (size_t) n);
    if (ggml_last_error()[0]) rg_fail(fn);
    return ctx;
}

SEXP R_gguf_set_kv(SEXP ctx, SEXP src) {
    struct gguf_context * g = gguf_arg(ctx);
    struct gguf_context * s = rg_object_get(src, CLS_GGUF, "src");
    ggml_clear_error();
    gguf_set_kv(g, s);
    if (ggml_last_error()[0]) rg_fail("gguf_set_kv");
    return ctx;
}

/* ---- tensors ---- */

SEXP R_gguf_add_tensor(SEXP ctx, SEXP tensor) {
    struct gguf_context * g = gguf_arg(ctx);
    const struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    SEXP added = R_ExternalPtrProtected(ctx);
    const R_xlen_t n = XLENGTH(added);
    SEXP grown = PROTECT(Rf_allocVector(VECSXP, n + 1));  /* before the C call: nothing to undo if this fails */
    for (R_xlen_t i = 0; i < n; i++) SET_VECTOR_ELT(grown, i, VECTOR_ELT(added, i));
    SET_VECTOR_ELT(grown, n, tensor);
    ggml_clear_error();
    gguf_add_tensor(g, t);
    if (ggml_last_error()[0]) rg_fail("gguf_add_tensor");
    R_SetExternalPtrProtected(ctx, grown);
    UNPROTECT(1);
    return ctx;
}

SEXP R_gguf_write_to_file(SEXP ctx, SEXP fname, SEXP only_meta) {
    struct gguf_context * g = gguf_arg(ctx);
    if (TYPEOF(fname) != STRSXP || XLENGTH(fname) != 1 || STRING_ELT(fname, 0) == NA_STRING)
        Rf_error("'fname' must be a single string, not NA");
    const char * path = R_ExpandFileName(Rf_translateChar(STRING_ELT(fname, 0)));
    const int meta = rg_bool(only_meta, "only_meta");
    /* every added tensor still usable, its info pointing at its current data;
     * the tensor ids of added tensors follow the order of gguf_add_tensor */
    SEXP added = R_ExternalPtrProtected(ctx);
    const int64_t n_info = gguf_get_n_tensors(g), first = n_info - XLENGTH(added);
    for (R_xlen_t i = 0; i < XLENGTH(added) && !meta; i++) {
        const struct ggml_tensor * t = rg_tensor_get(VECTOR_ELT(added, i), "tensor", 0);
        if (!t->data && ggml_nbytes(t) > 0)
            Rf_error("gguf_write_to_file: tensor '%s' has no data (its buffer was freed or never allocated)", t->name);
        const char * name = gguf_get_tensor_name(g, first + i);
        if (name) gguf_set_tensor_data(g, name, t->data);
    }
    ggml_clear_error();
    if (!gguf_write_to_file(g, path, meta)) rg_fail("gguf_write_to_file");
    return ctx;
}

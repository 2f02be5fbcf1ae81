/* glue_backend.c -- the CPU backend, backend buffers, and data transfer
 * between R vectors and tensors (raw bytes, or numbers converted to and
 * from the tensor's type).
 *
 * A buffer made by ggml_backend_alloc_ctx_tensors belongs to its context:
 * it is freed with the context, so a tensor never outlives its data. */
#include "glue.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- backend ---- */

SEXP R_ggml_backend_cpu_init(void) {
    SEXP x = PROTECT(rg_backend_handle());
    ggml_clear_error();
    ggml_backend_t be = ggml_backend_cpu_init();
    if (!be) rg_fail("ggml_backend_cpu_init");
    R_SetExternalPtrAddr(x, be);
    ggml_backend_cpu_set_n_threads(be, rg_default_threads());
    UNPROTECT(1);
    return x;
}

SEXP R_ggml_backend_free(SEXP backend) {
    rg_backend_release(backend);
    return R_NilValue;
}

SEXP R_ggml_backend_is_cpu(SEXP backend) { return Rf_ScalarLogical(ggml_backend_is_cpu(rg_backend_get(backend, "backend"))); }
SEXP R_ggml_backend_name(SEXP backend)   { return Rf_mkString(ggml_backend_name(rg_backend_get(backend, "backend"))); }

SEXP R_ggml_backend_cpu_set_n_threads(SEXP backend, SEXP n_threads) {
    ggml_backend_t be = rg_backend_get(backend, "backend");
    const int n = rg_int(n_threads, "n_threads");
    if (n < 1 || n > 256) Rf_error("'n_threads' must be between 1 and 256 (got %d)", n);
    ggml_backend_cpu_set_n_threads(be, n);
    return backend;
}

SEXP R_ggml_backend_graph_compute(SEXP backend, SEXP graph) {
    ggml_backend_t be = rg_backend_get(backend, "backend");
    struct ggml_cgraph * g = rg_graph_get(graph, "graph");
    ggml_clear_error();
    const enum ggml_status st = ggml_backend_graph_compute(be, g);
    rg_check_status(st, "ggml_backend_graph_compute");
    return Rf_ScalarInteger(st);  /* CRAN ggmlR's value: the status, 0 (a failure is an R error) */
}

/* ---- buffers ---- */

SEXP R_ggml_backend_alloc_ctx_tensors(SEXP ctx, SEXP backend) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    ggml_backend_t be = rg_backend_get(backend, "backend");
    rg_buffer * rec = rg_ctx_add_buffer(c);  /* before allocating: nothing to undo if this fails */
    ggml_clear_error();
    rec->buf = ggml_backend_alloc_ctx_tensors(c->ctx, be);
    if (!rec->buf) {  /* no handle was made: drop the record again */
        c->buffers = rec->next;
        free(rec);
        rg_fail("ggml_backend_alloc_ctx_tensors");
    }
    return rg_buffer_wrap(rec, ctx);
}

SEXP R_ggml_backend_buffer_free(SEXP buffer) {
    rg_buffer_release(buffer);
    return R_NilValue;
}

SEXP R_ggml_backend_buffer_get_size(SEXP buffer) {
    return rg_size_sexp((double) ggml_backend_buffer_get_size(rg_buffer_get(buffer, "buffer")->buf));
}

/* ---- raw bytes ---- */

SEXP R_ggml_backend_tensor_set(SEXP tensor, SEXP data, SEXP offset, SEXP size) {
    struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    if (TYPEOF(data) != RAWSXP) Rf_error("'data' must be a raw vector");
    const size_t off = rg_bytes(offset, "offset");
    const size_t n = rg_bytes(size, "size");
    if (n > (size_t) XLENGTH(data)) Rf_error("'size' (%zu) is larger than 'data' (%lld bytes)", n, (long long) XLENGTH(data));
    ggml_clear_error();
    rg_check_status(ggml_backend_tensor_set_checked(t, RAW(data), off, n), "ggml_backend_tensor_set");
    return tensor;
}

SEXP R_ggml_backend_tensor_get(SEXP tensor, SEXP offset, SEXP size) {
    const struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    const size_t off = rg_bytes(offset, "offset");
    const size_t n = rg_bytes(size, "size");
    if (n > ggml_nbytes(t)) Rf_error("'size' (%zu) is larger than the tensor (%zu bytes)", n, ggml_nbytes(t));
    SEXP out = PROTECT(Rf_allocVector(RAWSXP, (R_xlen_t) n));
    ggml_clear_error();
    rg_check_status(ggml_backend_tensor_get_checked(t, RAW(out), off, n), "ggml_backend_tensor_get");
    UNPROTECT(1);
    return out;
}

/* ---- numbers, converted to and from the tensor's type ---- */

/* [offset, offset + n) must lie inside the tensor's elements, and for a
 * type of blocks (the quantized types) cover whole blocks. */
static void check_range(const struct ggml_tensor * t, int64_t offset, int64_t n, const char * fn) {
    const int64_t ne = ggml_nelements(t);
    if (offset > ne || n > ne - offset)
        Rf_error("%s: %lld elements at offset %lld do not fit in tensor '%s' of %lld elements",
                 fn, (long long) n, (long long) offset, t->name, (long long) ne);
    const int64_t b = ggml_blck_size(t->type);
    if (b > 1 && (offset % b != 0 || n % b != 0))
        Rf_error("%s: tensor '%s' is of type %s, whose blocks hold %lld elements: the offset (%lld) and the number of "
                 "elements (%lld) must be multiples of %lld", fn, t->name, ggml_type_name(t->type), (long long) b,
                 (long long) offset, (long long) n, (long long) b);
}

/* The converter between floats and t's type (from_float_ref, or to_float), or an R error. */
static const struct ggml_type_traits * converter(const struct ggml_tensor * t, int to_float, const char * fn) {
    const struct ggml_type_traits * tt = ggml_get_type_traits(t->type);
    if (!tt || (to_float ? tt->to_float == NULL : tt->from_float_ref == NULL))
        Rf_error("%s: tensor '%s' is of type %s, which has no conversion %s numbers here", fn, t->name,
                 ggml_type_name(t->type), to_float ? "to" : "from");
    return tt;
}

SEXP R_ggml_backend_tensor_set_data(SEXP tensor, SEXP data, SEXP offset) {
    static const char * fn = "ggml_backend_tensor_set_data";
    struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    const int64_t off = rg_count(offset, "offset");
    if (TYPEOF(data) == RAWSXP) {  /* the type's own bytes (whole blocks, as quantize_* give them): copied as they are */
        const size_t block_bytes = ggml_type_size(t->type);
        if ((size_t) XLENGTH(data) % block_bytes != 0)
            Rf_error("%s: raw 'data' of %lld bytes is not a whole number of %s blocks (%zu bytes each)", fn,
                     (long long) XLENGTH(data), ggml_type_name(t->type), block_bytes);
        const int64_t n_raw = (int64_t) ((size_t) XLENGTH(data) / block_bytes) * ggml_blck_size(t->type);
        check_range(t, off, n_raw, fn);
        ggml_clear_error();
        rg_check_status(ggml_backend_tensor_set_checked(t, RAW(data), ggml_row_size(t->type, off), (size_t) XLENGTH(data)), fn);
        return tensor;
    }
    const R_xlen_t n = rg_numeric_len(data, "data");
    check_range(t, off, n, fn);
    const size_t boff = ggml_row_size(t->type, off), bn = ggml_row_size(t->type, n);  /* bytes (whole blocks) */
    /* can the tensor take them at all (memory, layout)? before converting anything */
    ggml_clear_error();
    rg_check_status(ggml_backend_tensor_set_checked(t, NULL, boff, 0), fn);
    /* R_alloc: reclaimed by R even when an error follows */
    void * buf = n > 0 ? R_alloc(bn, 1) : NULL;
    switch (t->type) {
        case GGML_TYPE_F32:
            for (R_xlen_t i = 0; i < n; i++) ((float *) buf)[i] = (float) rg_num_at(data, i);
            break;
        case GGML_TYPE_F16:
            for (R_xlen_t i = 0; i < n; i++) ((ggml_fp16_t *) buf)[i] = rg_half(rg_num_at(data, i));
            break;
        case GGML_TYPE_I32:
            for (R_xlen_t i = 0; i < n; i++) {
                const double v = rg_num_at(data, i);
                if (!rg_is_int32(v))
                    Rf_error("%s: element %lld of 'data' (%g) is not a 32-bit integer (NA is not allowed)", fn, (long long) i + 1, v);
                ((int32_t *) buf)[i] = (int32_t) v;
            }
            break;
        default: {  /* BF16 and the quantized types: through floats and the reference quantizer */
            const struct ggml_type_traits * tt = converter(t, 0, fn);
            float * f = n > 0 ? (float *) R_alloc((size_t) n, sizeof(float)) : NULL;
            for (R_xlen_t i = 0; i < n; i++) {
                f[i] = (float) rg_num_at(data, i);
                if (tt->is_quantized && !isfinite(f[i]))
                    Rf_error("%s: element %lld of 'data' (%g) is not a finite float: type %s cannot hold it", fn,
                             (long long) i + 1, rg_num_at(data, i), ggml_type_name(t->type));
            }
            if (n > 0) tt->from_float_ref(f, buf, n);
            break;
        }
    }
    ggml_clear_error();
    rg_check_status(ggml_backend_tensor_set_checked(t, buf, boff, bn), fn);
    return tensor;
}

SEXP R_ggml_backend_tensor_get_data(SEXP tensor, SEXP offset, SEXP n_elements) {
    static const char * fn = "ggml_backend_tensor_get_data";
    const struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    const int64_t off = rg_count(offset, "offset");
    const int64_t ne = ggml_nelements(t);
    const int64_t n = n_elements == R_NilValue ? (off <= ne ? ne - off : 0) : rg_count(n_elements, "n_elements");
    check_range(t, off, n, fn);
    const size_t boff = ggml_row_size(t->type, off), bn = ggml_row_size(t->type, n);  /* bytes (whole blocks) */
    const int plain = t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_F16 || t->type == GGML_TYPE_I32;
    const struct ggml_type_traits * tt = plain ? NULL : converter(t, 1, fn);  /* refused before any work */
    /* memory and layout first: no scratch of the tensor's size for a tensor without data */
    ggml_clear_error();
    rg_check_status(ggml_backend_tensor_get_checked(t, NULL, boff, 0), fn);
    void * buf = n > 0 ? R_alloc(bn, 1) : NULL;
    ggml_clear_error();
    rg_check_status(ggml_backend_tensor_get_checked(t, buf, boff, bn), fn);
    float * f = !plain && n > 0 ? (float *) R_alloc((size_t) n, sizeof(float)) : NULL;
    if (f) tt->to_float(buf, f, n);  /* BF16 and the quantized types: dequantized */
    SEXP out = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) n));
    double * o = REAL(out);
    switch (t->type) {
        case GGML_TYPE_F32: for (int64_t i = 0; i < n; i++) o[i] = ((const float *) buf)[i]; break;
        case GGML_TYPE_F16: for (int64_t i = 0; i < n; i++) o[i] = ggml_fp16_to_fp32(((const ggml_fp16_t *) buf)[i]); break;
        case GGML_TYPE_I32: for (int64_t i = 0; i < n; i++) o[i] = ((const int32_t *) buf)[i]; break;
        default: for (int64_t i = 0; i < n; i++) o[i] = f[i]; break;
    }
    UNPROTECT(1);
    return out;
}

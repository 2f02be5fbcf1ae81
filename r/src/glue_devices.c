/* glue_devices.c -- upstream's device and backend registry API (one
 * registry, "CPU", with one device, "CPU"), backends made from them, and the
 * backend buffer facts and settings.
 *
 * Devices and registries are static objects of the library that live as long
 * as the process: their handles own nothing (no finalizer work), but a handle
 * restored from a saved session has no address and is refused. */
#include "glue.h"

#define CLS_DEVICE "ggml_backend_device"
#define CLS_REG    "ggml_backend_reg"

static void static_object_release(SEXP x) { (void) x; /* the library owns it */ }

/* A handle of class cls for p, or R NULL when p is NULL. */
static SEXP wrap_static(void * p, const char * cls) {
    if (!p) return R_NilValue;
    SEXP x = PROTECT(rg_object_handle(cls, R_NilValue, static_object_release));
    R_SetExternalPtrAddr(x, p);
    UNPROTECT(1);
    return x;
}

static ggml_backend_dev_t device_arg(SEXP x) { return rg_object_get(x, CLS_DEVICE, "device"); }
static ggml_backend_reg_t reg_arg(SEXP x)    { return rg_object_get(x, CLS_REG, "reg"); }

/* A backend handle for what the library made (be, or an R error naming fn),
 * computing with the package default thread count, as ggml_backend_cpu_init. */
static SEXP wrap_backend(ggml_backend_t be, const char * fn) {
    if (!be) rg_fail(fn);
    SEXP x = PROTECT(rg_backend_handle());
    R_SetExternalPtrAddr(x, be);
    if (ggml_backend_is_cpu(be)) ggml_backend_cpu_set_n_threads(be, rg_default_threads());
    UNPROTECT(1);
    return x;
}

/* 'params' of the init functions: NULL or one string (the CPU device ignores it). */
static const char * params_arg(SEXP params) { return params == R_NilValue ? NULL : rg_string(params, "params"); }

/* An index 0 <= i < n, or an R error. */
static size_t index_arg(SEXP index, size_t n, const char * what) {
    const int64_t i = rg_count(index, "index");
    if ((uint64_t) i >= n) Rf_error("'index' (%lld) is out of range: there %s %zu %s%s (0-based)", (long long) i,
                                    n == 1 ? "is" : "are", n, what, n == 1 ? "" : "s");
    return (size_t) i;
}

/* ---- device types and buffer usages ---- */

SEXP R_ggml_backend_device_types(void) {
    SEXP out = PROTECT(Rf_allocVector(INTSXP, 4));
    const char * names[] = {"cpu", "gpu", "igpu", "accel"};
    const int values[] = {GGML_BACKEND_DEVICE_TYPE_CPU, GGML_BACKEND_DEVICE_TYPE_GPU, GGML_BACKEND_DEVICE_TYPE_IGPU,
                          GGML_BACKEND_DEVICE_TYPE_ACCEL};
    SEXP nm = PROTECT(Rf_allocVector(STRSXP, 4));
    for (int i = 0; i < 4; i++) {
        INTEGER(out)[i] = values[i];
        SET_STRING_ELT(nm, i, Rf_mkChar(names[i]));
    }
    Rf_setAttrib(out, R_NamesSymbol, nm);
    UNPROTECT(2);
    return out;
}

/* ---- devices ---- */

SEXP R_ggml_backend_dev_count(void) { return rg_size_sexp((double) ggml_backend_dev_count()); }

SEXP R_ggml_backend_dev_get(SEXP index) {
    return wrap_static(ggml_backend_dev_get(index_arg(index, ggml_backend_dev_count(), "device")), CLS_DEVICE);
}

SEXP R_ggml_backend_dev_by_name(SEXP name) { return wrap_static(ggml_backend_dev_by_name(rg_string(name, "name")), CLS_DEVICE); }

SEXP R_ggml_backend_dev_by_type(SEXP type) {
    const int t = rg_int(type, "type");
    if (t < GGML_BACKEND_DEVICE_TYPE_CPU || t > GGML_BACKEND_DEVICE_TYPE_META) return R_NilValue;  /* no such device */
    return wrap_static(ggml_backend_dev_by_type((enum ggml_backend_dev_type) t), CLS_DEVICE);
}

SEXP R_ggml_backend_dev_name(SEXP device)        { return Rf_mkString(ggml_backend_dev_name(device_arg(device))); }
SEXP R_ggml_backend_dev_description(SEXP device) { return Rf_mkString(ggml_backend_dev_description(device_arg(device))); }
SEXP R_ggml_backend_dev_type(SEXP device)        { return Rf_ScalarInteger(ggml_backend_dev_type(device_arg(device))); }

static SEXP named_list(int n, const char ** names) {
    SEXP out = PROTECT(Rf_allocVector(VECSXP, n));
    SEXP nm = PROTECT(Rf_allocVector(STRSXP, n));
    for (int i = 0; i < n; i++) SET_STRING_ELT(nm, i, Rf_mkChar(names[i]));
    Rf_setAttrib(out, R_NamesSymbol, nm);
    UNPROTECT(2);
    return out;
}

SEXP R_ggml_backend_dev_memory(SEXP device) {
    size_t free_bytes = 0, total_bytes = 0;
    ggml_backend_dev_memory(device_arg(device), &free_bytes, &total_bytes);
    SEXP out = PROTECT(Rf_allocVector(REALSXP, 2));
    REAL(out)[0] = (double) free_bytes;
    REAL(out)[1] = (double) total_bytes;
    SEXP nm = PROTECT(Rf_allocVector(STRSXP, 2));
    SET_STRING_ELT(nm, 0, Rf_mkChar("free"));
    SET_STRING_ELT(nm, 1, Rf_mkChar("total"));
    Rf_setAttrib(out, R_NamesSymbol, nm);
    UNPROTECT(2);
    return out;
}

SEXP R_ggml_backend_dev_get_props(SEXP device) {
    struct ggml_backend_dev_props p;
    ggml_backend_dev_get_props(device_arg(device), &p);
    static const char * cap_names[] = {"async", "host_buffer", "buffer_from_host_ptr", "events", "mmap_support"};
    SEXP caps = PROTECT(named_list(5, cap_names));
    const bool cap_values[] = {p.caps.async, p.caps.host_buffer, p.caps.buffer_from_host_ptr, p.caps.events, p.caps.mmap_support};
    for (int i = 0; i < 5; i++) SET_VECTOR_ELT(caps, i, Rf_ScalarLogical(cap_values[i]));
    static const char * names[] = {"name", "description", "memory_free", "memory_total", "type", "device_id", "caps"};
    SEXP out = PROTECT(named_list(7, names));
    SET_VECTOR_ELT(out, 0, Rf_mkString(p.name));
    SET_VECTOR_ELT(out, 1, Rf_mkString(p.description));
    SET_VECTOR_ELT(out, 2, Rf_ScalarReal((double) p.memory_free));
    SET_VECTOR_ELT(out, 3, Rf_ScalarReal((double) p.memory_total));
    SET_VECTOR_ELT(out, 4, Rf_ScalarInteger(p.type));
    SET_VECTOR_ELT(out, 5, p.device_id ? Rf_mkString(p.device_id) : Rf_ScalarString(NA_STRING));
    SET_VECTOR_ELT(out, 6, caps);
    UNPROTECT(2);
    return out;
}

SEXP R_ggml_backend_dev_supports_op(SEXP device, SEXP op) {
    ggml_backend_dev_t d = device_arg(device);
    return Rf_ScalarLogical(ggml_backend_dev_supports_op(d, rg_tensor_get(op, "op", 0)));
}

SEXP R_ggml_backend_dev_offload_op(SEXP device, SEXP op) {
    ggml_backend_dev_t d = device_arg(device);
    return Rf_ScalarLogical(ggml_backend_dev_offload_op(d, rg_tensor_get(op, "op", 0)));
}

SEXP R_ggml_backend_dev_init(SEXP device, SEXP params) {
    ggml_backend_dev_t d = device_arg(device);
    const char * p = params_arg(params);
    ggml_clear_error();
    return wrap_backend(ggml_backend_dev_init(d, p), "ggml_backend_dev_init");
}

/* ---- registries ---- */

SEXP R_ggml_backend_reg_count(void) { return rg_size_sexp((double) ggml_backend_reg_count()); }

SEXP R_ggml_backend_reg_get(SEXP index) {
    return wrap_static(ggml_backend_reg_get(index_arg(index, ggml_backend_reg_count(), "registry")), CLS_REG);
}

SEXP R_ggml_backend_reg_by_name(SEXP name) { return wrap_static(ggml_backend_reg_by_name(rg_string(name, "name")), CLS_REG); }
SEXP R_ggml_backend_reg_name(SEXP reg)      { return Rf_mkString(ggml_backend_reg_name(reg_arg(reg))); }
SEXP R_ggml_backend_reg_dev_count(SEXP reg) { return rg_size_sexp((double) ggml_backend_reg_dev_count(reg_arg(reg))); }

SEXP R_ggml_backend_reg_dev_get(SEXP reg, SEXP index) {
    ggml_backend_reg_t r = reg_arg(reg);
    return wrap_static(ggml_backend_reg_dev_get(r, index_arg(index, ggml_backend_reg_dev_count(r), "device")), CLS_DEVICE);
}

SEXP R_ggml_backend_dev_backend_reg(SEXP device) { return wrap_static(ggml_backend_dev_backend_reg(device_arg(device)), CLS_REG); }

/* Nothing is loaded dynamically: R NULL, with the library's message as a warning. */
SEXP R_ggml_backend_load(SEXP path) {
    const char * p = rg_string(path, "path");
    ggml_clear_error();
    ggml_backend_reg_t r = ggml_backend_load(p);
    if (!r && ggml_last_error()[0]) Rf_warning("%s", ggml_last_error());
    return wrap_static(r, CLS_REG);
}

/* ---- backends ---- */

SEXP R_ggml_backend_init_by_name(SEXP name, SEXP params) {
    const char * n = rg_string(name, "name");
    const char * p = params_arg(params);
    ggml_clear_error();
    return wrap_backend(ggml_backend_init_by_name(n, p), "ggml_backend_init_by_name");
}

SEXP R_ggml_backend_init_by_type(SEXP type, SEXP params) {
    const int t = rg_int(type, "type");
    if (t < GGML_BACKEND_DEVICE_TYPE_CPU || t > GGML_BACKEND_DEVICE_TYPE_META)
        Rf_error("'type' must be a device type (ggml_backend_device_type_cpu() ...), not %d", t);
    const char * p = params_arg(params);
    ggml_clear_error();
    return wrap_backend(ggml_backend_init_by_type((enum ggml_backend_dev_type) t, p), "ggml_backend_init_by_type");
}

SEXP R_ggml_backend_init_best(void) {
    ggml_clear_error();
    return wrap_backend(ggml_backend_init_best(), "ggml_backend_init_best");
}

SEXP R_ggml_backend_get_device(SEXP backend) { return wrap_static(ggml_backend_get_device(rg_backend_get(backend, "backend")), CLS_DEVICE); }

SEXP R_ggml_backend_synchronize(SEXP backend) {
    ggml_backend_synchronize(rg_backend_get(backend, "backend"));
    return R_NilValue;
}

/* ---- buffers ---- */

static ggml_backend_buffer_t buffer_arg(SEXP buffer) { return rg_buffer_get(buffer, "buffer")->buf; }

SEXP R_ggml_backend_buffer_name(SEXP buffer)      { return Rf_mkString(ggml_backend_buffer_name(buffer_arg(buffer))); }
SEXP R_ggml_backend_buffer_is_host(SEXP buffer)   { return Rf_ScalarLogical(ggml_backend_buffer_is_host(buffer_arg(buffer))); }
SEXP R_ggml_backend_buffer_get_usage(SEXP buffer) { return Rf_ScalarInteger(ggml_backend_buffer_get_usage(buffer_arg(buffer))); }

SEXP R_ggml_backend_buffer_set_usage(SEXP buffer, SEXP usage) {
    ggml_backend_buffer_t b = buffer_arg(buffer);
    const int u = rg_int(usage, "usage");
    if (u < GGML_BACKEND_BUFFER_USAGE_ANY || u > GGML_BACKEND_BUFFER_USAGE_COMPUTE)
        Rf_error("'usage' must be a buffer usage (ggml_backend_buffer_usage_any() ...), not %d", u);
    ggml_backend_buffer_set_usage(b, (enum ggml_backend_buffer_usage) u);
    return R_NilValue;
}

SEXP R_ggml_backend_buffer_clear(SEXP buffer, SEXP value) {
    ggml_backend_buffer_t b = buffer_arg(buffer);
    const int v = rg_int(value, "value");
    if (v < 0 || v > 255) Rf_error("'value' must be a byte value 0..255 (got %d)", v);
    ggml_backend_buffer_clear(b, (uint8_t) v);
    return R_NilValue;
}

SEXP R_ggml_backend_buffer_reset(SEXP buffer) {
    ggml_backend_buffer_reset(buffer_arg(buffer));
    return R_NilValue;
}

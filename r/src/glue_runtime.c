/* glue_runtime.c -- facts about the running library and CPU (version, CPU
 * features), where its log and abort messages go, tensor layout facts and
 * op parameters, and printing a context's objects or a graph. */
#include "glue.h"

#include <string.h>

/* ---- version ---- */

SEXP R_ggml_version(void) { return Rf_mkString(ggml_version()); }

/* ---- CPU features (run-time detection) ---- */

static const struct { const char * name; int (*has)(void); } cpu_features[] = {
    {"sse3", ggml_cpu_has_sse3}, {"ssse3", ggml_cpu_has_ssse3}, {"avx", ggml_cpu_has_avx},
    {"avx_vnni", ggml_cpu_has_avx_vnni}, {"avx2", ggml_cpu_has_avx2}, {"bmi2", ggml_cpu_has_bmi2},
    {"f16c", ggml_cpu_has_f16c}, {"fma", ggml_cpu_has_fma}, {"avx512", ggml_cpu_has_avx512},
    {"avx512_vbmi", ggml_cpu_has_avx512_vbmi}, {"avx512_vnni", ggml_cpu_has_avx512_vnni},
    {"avx512_bf16", ggml_cpu_has_avx512_bf16}, {"amx_int8", ggml_cpu_has_amx_int8},
    {"neon", ggml_cpu_has_neon}, {"arm_fma", ggml_cpu_has_arm_fma}, {"fp16_va", ggml_cpu_has_fp16_va},
    {"dotprod", ggml_cpu_has_dotprod}, {"matmul_int8", ggml_cpu_has_matmul_int8}, {"sve", ggml_cpu_has_sve},
    {"sme", ggml_cpu_has_sme}, {"sme2", ggml_cpu_has_sme2}, {"riscv_v", ggml_cpu_has_riscv_v},
    {"vsx", ggml_cpu_has_vsx}, {"vxe", ggml_cpu_has_vxe}, {"wasm_simd", ggml_cpu_has_wasm_simd},
    {"llamafile", ggml_cpu_has_llamafile},
};
#define N_CPU_FEATURES ((int) (sizeof cpu_features / sizeof cpu_features[0]))

/* A named logical vector: every feature the library detects. */
SEXP R_ggml_cpu_has_features(void) {
    SEXP out = PROTECT(Rf_allocVector(LGLSXP, N_CPU_FEATURES));
    SEXP names = PROTECT(Rf_allocVector(STRSXP, N_CPU_FEATURES));
    for (int i = 0; i < N_CPU_FEATURES; i++) {
        LOGICAL(out)[i] = cpu_features[i].has() != 0;
        SET_STRING_ELT(names, i, Rf_mkChar(cpu_features[i].name));
    }
    Rf_setAttrib(out, R_NamesSymbol, names);
    UNPROTECT(2);
    return out;
}

SEXP R_ggml_cpu_get_sve_cnt(void)  { return Rf_ScalarInteger(ggml_cpu_get_sve_cnt()); }
SEXP R_ggml_cpu_get_rvv_vlen(void) { return Rf_ScalarInteger(ggml_cpu_get_rvv_vlen()); }

/* ---- log and abort messages ---- */

SEXP R_ggml_log_set_r(void) {
    ggml_log_set(rg_log_to_console, NULL);
    return R_NilValue;
}

SEXP R_ggml_log_set_default(void) {
    ggml_log_set(NULL, NULL);
    return R_NilValue;
}

SEXP R_ggml_log_is_r_enabled(void) {
    ggml_log_callback cb = NULL;
    void * data = NULL;
    ggml_log_get(&cb, &data);
    return Rf_ScalarLogical(cb == rg_log_to_console);
}

/* ggml_abort's message as an R error (the library itself never aborts; this
 * is for code written against upstream that calls GGML_ABORT). */
static void abort_to_r(const char * message) { Rf_error("ggml_abort: %s", message); }
static int abort_to_r_enabled = 0;

SEXP R_ggml_set_abort_callback_r(void) {
    ggml_set_abort_callback(abort_to_r);
    abort_to_r_enabled = 1;
    return R_NilValue;
}

SEXP R_ggml_set_abort_callback_default(void) {
    ggml_set_abort_callback(NULL);
    abort_to_r_enabled = 0;
    return R_NilValue;
}

SEXP R_ggml_abort_is_r_enabled(void) { return Rf_ScalarLogical(abort_to_r_enabled); }

/* ---- layout facts ---- */

/* The layout predicates, by name. */
static const struct { const char * name; bool (*test)(const struct ggml_tensor *); } layout_tests[] = {
    {"contiguous_0", ggml_is_contiguous_0}, {"contiguous_1", ggml_is_contiguous_1},
    {"contiguous_2", ggml_is_contiguous_2}, {"contiguously_allocated", ggml_is_contiguously_allocated},
    {"contiguous_channels", ggml_is_contiguous_channels}, {"contiguous_rows", ggml_is_contiguous_rows},
};

SEXP R_ggml_tensor_layout_is(SEXP tensor, SEXP what) {
    const struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    const char * w = rg_string(what, "what");
    for (size_t i = 0; i < sizeof layout_tests / sizeof layout_tests[0]; i++)
        if (strcmp(w, layout_tests[i].name) == 0) return Rf_ScalarLogical(layout_tests[i].test(t));
    Rf_error("unknown layout test '%s'", w);
}

SEXP R_ggml_are_same_stride(SEXP a, SEXP b) {
    const struct ggml_tensor * ta = rg_tensor_get(a, "a", 0);
    return Rf_ScalarLogical(ggml_are_same_stride(ta, rg_tensor_get(b, "b", 0)));
}

/* ---- op parameters ----
 * Reading is always safe. Writing is refused on the result of an op: its
 * parameters decide what the op reads and writes (view offsets, shapes). */

static struct ggml_tensor * op_params_tensor(SEXP tensor, int writing) {
    struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    if (writing && t->op != GGML_OP_NONE)
        Rf_error("the op parameters of '%s' (the result of %s) decide what the op reads and writes: they cannot be "
                 "changed (only those of a tensor made by ggml_new_tensor* can)", t->name, ggml_op_name(t->op));
    return t;
}

static int op_param_index(SEXP index) {
    const int i = rg_int(index, "index");
    const int n = (int) (GGML_MAX_OP_PARAMS / sizeof(int32_t));
    if (i < 0 || i >= n) Rf_error("'index' must be between 0 and %d (got %d)", n - 1, i);
    return i;
}

SEXP R_ggml_get_op_params(SEXP tensor) {
    const struct ggml_tensor * t = op_params_tensor(tensor, 0);
    SEXP out = PROTECT(Rf_allocVector(RAWSXP, GGML_MAX_OP_PARAMS));
    memcpy(RAW(out), t->op_params, GGML_MAX_OP_PARAMS);
    UNPROTECT(1);
    return out;
}

SEXP R_ggml_set_op_params(SEXP tensor, SEXP params) {
    struct ggml_tensor * t = op_params_tensor(tensor, 1);
    if (TYPEOF(params) != RAWSXP || XLENGTH(params) > GGML_MAX_OP_PARAMS)
        Rf_error("'params' must be a raw vector of at most %d bytes", GGML_MAX_OP_PARAMS);
    memcpy(t->op_params, RAW(params), (size_t) XLENGTH(params));
    return tensor;
}

SEXP R_ggml_get_op_params_i32(SEXP tensor, SEXP index) {
    const struct ggml_tensor * t = op_params_tensor(tensor, 0);
    return Rf_ScalarInteger(t->op_params[op_param_index(index)]);
}

SEXP R_ggml_set_op_params_i32(SEXP tensor, SEXP index, SEXP value) {
    struct ggml_tensor * t = op_params_tensor(tensor, 1);
    const int i = op_param_index(index);
    const int v = rg_int(value, "value");
    t->op_params[i] = v;
    return tensor;
}

SEXP R_ggml_get_op_params_f32(SEXP tensor, SEXP index) {
    const struct ggml_tensor * t = op_params_tensor(tensor, 0);
    float v;
    memcpy(&v, &t->op_params[op_param_index(index)], sizeof v);
    return Rf_ScalarReal(v);
}

SEXP R_ggml_set_op_params_f32(SEXP tensor, SEXP index, SEXP value) {
    struct ggml_tensor * t = op_params_tensor(tensor, 1);
    const int i = op_param_index(index);
    const float v = rg_float(value, "value");
    memcpy(&t->op_params[i], &v, sizeof v);
    return tensor;
}

/* ---- context and graph facts, printed to the log (R's console) ---- */

SEXP R_ggml_get_max_tensor_size(SEXP ctx) { return rg_size_sexp((double) ggml_get_max_tensor_size(rg_ctx_get(ctx, "ctx")->ctx)); }

SEXP R_ggml_print_objects(SEXP ctx) {
    ggml_print_objects(rg_ctx_get(ctx, "ctx")->ctx);
    return R_NilValue;
}

SEXP R_ggml_graph_print(SEXP graph) {
    ggml_graph_print(rg_graph_get(graph, "graph"));
    return R_NilValue;
}

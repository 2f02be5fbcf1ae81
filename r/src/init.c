/* init.c -- registration of the .Call entry points (R_init_ggmlR).
 *
 * Each entry point R_<name> is registered as "<name>"; the package NAMESPACE
 * (useDynLib(ggmlR, .registration = TRUE, .fixes = "C_")) makes it available
 * to the R code as C_<name>. Dynamic symbol lookup is off: only what is
 * listed here can be called. */
#include "glue.h"

#include <R_ext/Rdynload.h>
#include <R_ext/Visibility.h>

/* glue_backend.c */
SEXP R_ggml_backend_cpu_init(void);
SEXP R_ggml_backend_free(SEXP);
SEXP R_ggml_backend_is_cpu(SEXP);
SEXP R_ggml_backend_name(SEXP);
SEXP R_ggml_backend_cpu_set_n_threads(SEXP, SEXP);
SEXP R_ggml_backend_graph_compute(SEXP, SEXP);
SEXP R_ggml_backend_alloc_ctx_tensors(SEXP, SEXP);
SEXP R_ggml_backend_buffer_free(SEXP);
SEXP R_ggml_backend_buffer_get_size(SEXP);
SEXP R_ggml_backend_tensor_set(SEXP, SEXP, SEXP, SEXP);
SEXP R_ggml_backend_tensor_get(SEXP, SEXP, SEXP);
SEXP R_ggml_backend_tensor_set_data(SEXP, SEXP, SEXP);
SEXP R_ggml_backend_tensor_get_data(SEXP, SEXP, SEXP);
/* glue_context.c */
SEXP R_ggml_init(SEXP, SEXP);
SEXP R_ggml_free(SEXP);
SEXP R_ggml_set_no_alloc(SEXP, SEXP);
SEXP R_ggml_get_no_alloc(SEXP);
SEXP R_ggml_used_mem(SEXP);
SEXP R_ggml_get_mem_size(SEXP);
SEXP R_ggml_tensor_overhead(void);
SEXP R_ggml_graph_overhead(void);
SEXP R_ggml_graph_overhead_custom(SEXP, SEXP);
SEXP R_ggml_get_first_tensor(SEXP);
SEXP R_ggml_get_next_tensor(SEXP, SEXP);
SEXP R_ggml_get_tensor(SEXP, SEXP);
SEXP R_ggml_handle_valid(SEXP);
SEXP R_ggml_last_error(void);
SEXP R_ggml_clear_error(void);
SEXP R_ggml_status_to_string(SEXP);
SEXP R_ggml_set_n_threads(SEXP);
SEXP R_ggml_get_n_threads(void);
SEXP R_ggml_cpu_n_cores(void);
SEXP R_ggml_cpu_simd_name(void);
/* glue_graph.c */
SEXP R_ggml_new_graph(SEXP);
SEXP R_ggml_new_graph_custom(SEXP, SEXP, SEXP);
SEXP R_ggml_build_forward_expand(SEXP, SEXP, SEXP);
SEXP R_ggml_build_forward_expand_grads(SEXP, SEXP, SEXP);
SEXP R_ggml_graph_expand(SEXP, SEXP);
SEXP R_ggml_build_backward_expand(SEXP, SEXP);
SEXP R_ggml_set_loss(SEXP);
SEXP R_ggml_graph_reset(SEXP);
SEXP R_ggml_graph_get_grad(SEXP, SEXP);
SEXP R_ggml_graph_get_grad_acc(SEXP, SEXP);
SEXP R_ggml_graph_size(SEXP);
SEXP R_ggml_graph_n_nodes(SEXP);
SEXP R_ggml_graph_node(SEXP, SEXP);
SEXP R_ggml_graph_compute(SEXP, SEXP);
SEXP R_ggml_graph_compute_with_ctx(SEXP, SEXP, SEXP);
SEXP R_ggml_set_param(SEXP);
SEXP R_ggml_set_input(SEXP);
SEXP R_ggml_set_output(SEXP);
/* glue_ops.c */
SEXP R_ggml_scale(SEXP, SEXP, SEXP);
SEXP R_ggml_reshape_nd(SEXP, SEXP, SEXP);
SEXP R_ggml_view_nd(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP R_ggml_permute(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP R_ggml_acc(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP R_ggml_soft_max_ext(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP R_ggml_flash_attn_ext(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP R_ggml_flash_attn_back(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP R_ggml_dup(SEXP, SEXP);
SEXP R_ggml_cont(SEXP, SEXP);
SEXP R_ggml_transpose(SEXP, SEXP);
SEXP R_ggml_sqr(SEXP, SEXP);
SEXP R_ggml_sqrt(SEXP, SEXP);
SEXP R_ggml_log(SEXP, SEXP);
SEXP R_ggml_sum(SEXP, SEXP);
SEXP R_ggml_sum_rows(SEXP, SEXP);
SEXP R_ggml_mean(SEXP, SEXP);
SEXP R_ggml_soft_max(SEXP, SEXP);
SEXP R_ggml_cpy(SEXP, SEXP, SEXP);
SEXP R_ggml_reshape(SEXP, SEXP, SEXP);
SEXP R_ggml_add(SEXP, SEXP, SEXP);
SEXP R_ggml_sub(SEXP, SEXP, SEXP);
SEXP R_ggml_mul(SEXP, SEXP, SEXP);
SEXP R_ggml_div(SEXP, SEXP, SEXP);
SEXP R_ggml_add_inplace(SEXP, SEXP, SEXP);
SEXP R_ggml_repeat(SEXP, SEXP, SEXP);
SEXP R_ggml_repeat_back(SEXP, SEXP, SEXP);
SEXP R_ggml_mul_mat(SEXP, SEXP, SEXP);
/* glue_tensor.c */
SEXP R_ggml_new_tensor(SEXP, SEXP, SEXP, SEXP);
SEXP R_ggml_new_f32(SEXP, SEXP);
SEXP R_ggml_dup_tensor(SEXP, SEXP);
SEXP R_ggml_view_tensor(SEXP, SEXP);
SEXP R_ggml_n_dims(SEXP);
SEXP R_ggml_tensor_shape(SEXP);
SEXP R_ggml_tensor_type(SEXP);
SEXP R_ggml_tensor_op(SEXP);
SEXP R_ggml_type_size(SEXP);
SEXP R_ggml_type_name(SEXP);
SEXP R_ggml_op_name(SEXP);
SEXP R_ggml_set_name(SEXP, SEXP);
SEXP R_ggml_get_name(SEXP);
SEXP R_ggml_set_f32(SEXP, SEXP);
SEXP R_ggml_set_zero(SEXP);
SEXP R_ggml_get_f32(SEXP);
SEXP R_ggml_get_f32_1d(SEXP, SEXP);
SEXP R_ggml_set_f32_1d(SEXP, SEXP, SEXP);
SEXP R_ggml_get_f32_nd(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP R_ggml_set_f32_nd(SEXP, SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP R_ggml_fp32_to_fp16(SEXP);
SEXP R_ggml_fp16_to_fp32(SEXP);
SEXP R_ggml_nelements(SEXP);
SEXP R_ggml_nrows(SEXP);
SEXP R_ggml_nbytes(SEXP);
SEXP R_ggml_element_size(SEXP);
SEXP R_ggml_is_contiguous(SEXP);
SEXP R_ggml_is_scalar(SEXP);
SEXP R_ggml_are_same_shape(SEXP, SEXP);
SEXP R_ggml_can_repeat(SEXP, SEXP);

#define CALLDEF(name, n) {#name, (DL_FUNC) &R_##name, n}

static const R_CallMethodDef call_methods[] = {
    /* glue_backend.c */
    CALLDEF(ggml_backend_cpu_init, 0),
    CALLDEF(ggml_backend_free, 1),
    CALLDEF(ggml_backend_is_cpu, 1),
    CALLDEF(ggml_backend_name, 1),
    CALLDEF(ggml_backend_cpu_set_n_threads, 2),
    CALLDEF(ggml_backend_graph_compute, 2),
    CALLDEF(ggml_backend_alloc_ctx_tensors, 2),
    CALLDEF(ggml_backend_buffer_free, 1),
    CALLDEF(ggml_backend_buffer_get_size, 1),
    CALLDEF(ggml_backend_tensor_set, 4),
    CALLDEF(ggml_backend_tensor_get, 3),
    CALLDEF(ggml_backend_tensor_set_data, 3),
    CALLDEF(ggml_backend_tensor_get_data, 3),
    /* glue_context.c */
    CALLDEF(ggml_init, 2),
    CALLDEF(ggml_free, 1),
    CALLDEF(ggml_set_no_alloc, 2),
    CALLDEF(ggml_get_no_alloc, 1),
    CALLDEF(ggml_used_mem, 1),
    CALLDEF(ggml_get_mem_size, 1),
    CALLDEF(ggml_tensor_overhead, 0),
    CALLDEF(ggml_graph_overhead, 0),
    CALLDEF(ggml_graph_overhead_custom, 2),
    CALLDEF(ggml_get_first_tensor, 1),
    CALLDEF(ggml_get_next_tensor, 2),
    CALLDEF(ggml_get_tensor, 2),
    CALLDEF(ggml_handle_valid, 1),
    CALLDEF(ggml_last_error, 0),
    CALLDEF(ggml_clear_error, 0),
    CALLDEF(ggml_status_to_string, 1),
    CALLDEF(ggml_set_n_threads, 1),
    CALLDEF(ggml_get_n_threads, 0),
    CALLDEF(ggml_cpu_n_cores, 0),
    CALLDEF(ggml_cpu_simd_name, 0),
    /* glue_graph.c */
    CALLDEF(ggml_new_graph, 1),
    CALLDEF(ggml_new_graph_custom, 3),
    CALLDEF(ggml_build_forward_expand, 3),
    CALLDEF(ggml_build_forward_expand_grads, 3),
    CALLDEF(ggml_graph_expand, 2),
    CALLDEF(ggml_build_backward_expand, 2),
    CALLDEF(ggml_set_loss, 1),
    CALLDEF(ggml_graph_reset, 1),
    CALLDEF(ggml_graph_get_grad, 2),
    CALLDEF(ggml_graph_get_grad_acc, 2),
    CALLDEF(ggml_graph_size, 1),
    CALLDEF(ggml_graph_n_nodes, 1),
    CALLDEF(ggml_graph_node, 2),
    CALLDEF(ggml_graph_compute, 2),
    CALLDEF(ggml_graph_compute_with_ctx, 3),
    CALLDEF(ggml_set_param, 1),
    CALLDEF(ggml_set_input, 1),
    CALLDEF(ggml_set_output, 1),
    /* glue_ops.c */
    CALLDEF(ggml_scale, 3),
    CALLDEF(ggml_reshape_nd, 3),
    CALLDEF(ggml_view_nd, 5),
    CALLDEF(ggml_permute, 6),
    CALLDEF(ggml_acc, 7),
    CALLDEF(ggml_soft_max_ext, 5),
    CALLDEF(ggml_flash_attn_ext, 8),
    CALLDEF(ggml_flash_attn_back, 7),
    CALLDEF(ggml_dup, 2),
    CALLDEF(ggml_cont, 2),
    CALLDEF(ggml_transpose, 2),
    CALLDEF(ggml_sqr, 2),
    CALLDEF(ggml_sqrt, 2),
    CALLDEF(ggml_log, 2),
    CALLDEF(ggml_sum, 2),
    CALLDEF(ggml_sum_rows, 2),
    CALLDEF(ggml_mean, 2),
    CALLDEF(ggml_soft_max, 2),
    CALLDEF(ggml_cpy, 3),
    CALLDEF(ggml_reshape, 3),
    CALLDEF(ggml_add, 3),
    CALLDEF(ggml_sub, 3),
    CALLDEF(ggml_mul, 3),
    CALLDEF(ggml_div, 3),
    CALLDEF(ggml_add_inplace, 3),
    CALLDEF(ggml_repeat, 3),
    CALLDEF(ggml_repeat_back, 3),
    CALLDEF(ggml_mul_mat, 3),
    /* glue_tensor.c */
    CALLDEF(ggml_new_tensor, 4),
    CALLDEF(ggml_new_f32, 2),
    CALLDEF(ggml_dup_tensor, 2),
    CALLDEF(ggml_view_tensor, 2),
    CALLDEF(ggml_n_dims, 1),
    CALLDEF(ggml_tensor_shape, 1),
    CALLDEF(ggml_tensor_type, 1),
    CALLDEF(ggml_tensor_op, 1),
    CALLDEF(ggml_type_size, 1),
    CALLDEF(ggml_type_name, 1),
    CALLDEF(ggml_op_name, 1),
    CALLDEF(ggml_set_name, 2),
    CALLDEF(ggml_get_name, 1),
    CALLDEF(ggml_set_f32, 2),
    CALLDEF(ggml_set_zero, 1),
    CALLDEF(ggml_get_f32, 1),
    CALLDEF(ggml_get_f32_1d, 2),
    CALLDEF(ggml_set_f32_1d, 3),
    CALLDEF(ggml_get_f32_nd, 5),
    CALLDEF(ggml_set_f32_nd, 6),
    CALLDEF(ggml_fp32_to_fp16, 1),
    CALLDEF(ggml_fp16_to_fp32, 1),
    CALLDEF(ggml_nelements, 1),
    CALLDEF(ggml_nrows, 1),
    CALLDEF(ggml_nbytes, 1),
    CALLDEF(ggml_element_size, 1),
    CALLDEF(ggml_is_contiguous, 1),
    CALLDEF(ggml_is_scalar, 1),
    CALLDEF(ggml_are_same_shape, 2),
    CALLDEF(ggml_can_repeat, 2),
    {NULL, NULL, 0}
};

void attribute_visible R_init_ggmlR(DllInfo * dll) {
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}

/* kernel_table.c -- which kernel computes each op: one row per op.
 * Adding an op: one row here (see docs/adding-an-op.md). */
#include "cpu/kernels/kernels.h"

/* The rows are designated by op so that their order cannot drift from the
 * enum; the size check below catches a table that ends early, and
 * tests/test_ops_table.c checks that every op other than the views has a kernel. */
const struct ggmlr_kernel ggmlr_kernels[] = {
    [GGML_OP_NONE]            = {0},
    [GGML_OP_DUP]             = {ggmlr_compute_dup, NULL, NULL},
    [GGML_OP_ADD]             = {ggmlr_compute_binary, NULL, NULL},
    [GGML_OP_SUB]             = {ggmlr_compute_binary, NULL, NULL},
    [GGML_OP_MUL]             = {ggmlr_compute_binary, NULL, NULL},
    [GGML_OP_DIV]             = {ggmlr_compute_binary, NULL, NULL},
    [GGML_OP_SQR]             = {ggmlr_compute_unary, NULL, NULL},
    [GGML_OP_SQRT]            = {ggmlr_compute_unary, NULL, NULL},
    [GGML_OP_LOG]             = {ggmlr_compute_unary, NULL, NULL},
    [GGML_OP_SUM]             = {ggmlr_compute_sum, NULL, NULL},
    [GGML_OP_SUM_ROWS]        = {ggmlr_compute_sum_rows, NULL, NULL},
    [GGML_OP_MEAN]            = {ggmlr_compute_sum_rows, NULL, NULL},
    [GGML_OP_REPEAT]          = {ggmlr_compute_repeat, NULL, NULL},
    [GGML_OP_REPEAT_BACK]     = {ggmlr_compute_repeat_back, ggmlr_repeat_back_work_size, NULL},
    [GGML_OP_SCALE]           = {ggmlr_compute_unary, NULL, NULL},
    [GGML_OP_CPY]             = {ggmlr_compute_dup, NULL, NULL},
    [GGML_OP_CONT]            = {ggmlr_compute_dup, NULL, NULL},
    [GGML_OP_RESHAPE]         = {0},
    [GGML_OP_VIEW]            = {0},
    [GGML_OP_PERMUTE]         = {0},
    [GGML_OP_TRANSPOSE]       = {0},
    [GGML_OP_ACC]             = {ggmlr_compute_acc, NULL, NULL},
    [GGML_OP_MUL_MAT]         = {ggmlr_compute_mul_mat, ggmlr_mul_mat_work_size, ggmlr_mul_mat_shared_size},
    [GGML_OP_SOFT_MAX]        = {ggmlr_compute_soft_max, ggmlr_soft_max_work_size, NULL},
    [GGML_OP_FLASH_ATTN_EXT]  = {ggmlr_compute_flash_attn_ext, ggmlr_flash_attn_ext_work_size, ggmlr_flash_attn_ext_shared_size},
    [GGML_OP_FLASH_ATTN_BACK] = {ggmlr_compute_flash_attn_back, ggmlr_flash_attn_back_work_size, ggmlr_flash_attn_back_shared_size},
    [GGML_OP_GET_ROWS]        = {ggmlr_compute_get_rows, NULL, NULL},
    [GGML_OP_GET_ROWS_BACK]   = {ggmlr_compute_get_rows_back, NULL, NULL},
    [GGML_OP_NORM]            = {ggmlr_compute_norm, ggmlr_norm_work_size, NULL},
    [GGML_OP_RMS_NORM]        = {ggmlr_compute_norm, ggmlr_norm_work_size, NULL},
    [GGML_OP_NORM_BACK]       = {ggmlr_compute_norm_back, ggmlr_norm_work_size, NULL},
    [GGML_OP_RMS_NORM_BACK]   = {ggmlr_compute_norm_back, ggmlr_norm_work_size, NULL},
    [GGML_OP_UNARY]           = {ggmlr_compute_unary_act, ggmlr_unary_act_work_size, NULL},
    [GGML_OP_UNARY_BACK]      = {ggmlr_compute_unary_act, ggmlr_unary_act_work_size, NULL},
    [GGML_OP_SOFT_MAX_BACK]   = {ggmlr_compute_soft_max_back, ggmlr_soft_max_work_size, NULL},
    [GGML_OP_CROSS_ENTROPY_LOSS]      = {ggmlr_compute_cross_entropy_loss, ggmlr_cross_entropy_work_size, ggmlr_cross_entropy_shared_size},
    [GGML_OP_CROSS_ENTROPY_LOSS_BACK] = {ggmlr_compute_cross_entropy_loss_back, ggmlr_cross_entropy_work_size, NULL},
    [GGML_OP_OUT_PROD]        = {ggmlr_compute_mul_mat, ggmlr_mul_mat_work_size, ggmlr_mul_mat_shared_size},
    [GGML_OP_ROPE]            = {ggmlr_compute_rope, ggmlr_rope_work_size, NULL},
    [GGML_OP_ROPE_BACK]       = {ggmlr_compute_rope, ggmlr_rope_work_size, NULL},
    [GGML_OP_ARGMAX]          = {ggmlr_compute_argmax, ggmlr_argmax_work_size, NULL},
    [GGML_OP_OPT_STEP_ADAMW]  = {ggmlr_compute_opt_step_adamw, NULL, NULL},
    [GGML_OP_OPT_STEP_SGD]    = {ggmlr_compute_opt_step_sgd, NULL, NULL},
};
_Static_assert(sizeof ggmlr_kernels / sizeof ggmlr_kernels[0] == GGML_OP_COUNT, "one kernel row per op");

bool ggmlr_op_is_view(enum ggml_op op) {
    return op == GGML_OP_NONE || op == GGML_OP_RESHAPE || op == GGML_OP_VIEW || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

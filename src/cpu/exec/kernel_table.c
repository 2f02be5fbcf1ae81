/* kernel_table.c -- which kernel computes each op: the rows of
 * core/op_list.h, designated by op. The kernels live in
 * cpu/kernels/<family>.c; tests/test_ops_table.c checks that every op other
 * than the views has one. */
#include "cpu/kernels/kernels.h"

const struct ggmlr_kernel ggmlr_kernel_none = {0};

#define GGMLR_OP(op, kernel, rule) extern const struct ggmlr_kernel ggmlr_kernel_##kernel;
#include "core/op_list.h"
#undef GGMLR_OP

#define GGMLR_OP(op, kernel, rule) [GGML_OP_##op] = &ggmlr_kernel_##kernel,
const struct ggmlr_kernel * const ggmlr_kernels[GGML_OP_COUNT] = {
#include "core/op_list.h"
};
#undef GGMLR_OP

/* Listed, not derived from the table: so that tests/test_ops_table.c can
 * check that every other op has a kernel. */
bool ggmlr_op_is_view(enum ggml_op op) {
    return op == GGML_OP_NONE || op == GGML_OP_RESHAPE || op == GGML_OP_VIEW || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

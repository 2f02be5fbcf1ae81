/* test_ops.c -- runs every row of the op table (tests/ops/) and checks that
 * every op in enum ggml_op has a row or an exemption with its reason, so a new
 * op without a row fails here. */
#include "ops/harness.h"
#include "cpu/kernels/kernels.h"  /* which ops are not implemented yet */

#include <string.h>

static const struct ops_family * const families[] = {&ops_elementwise, &ops_soft_max, &ops_glu, &ops_conv, &ops_pool, &ops_shape};

/* Ops whose checks live elsewhere, each with where and why. */
static const struct { const char * op, * reason; } exempt[] = {
    {"NONE", "no op: a leaf or parameter, nothing to compute"},
    {"FLASH_ATTN_EXT", "fused attention: test_flash_attn_forward/graph (its own reference and masks)"},
    {"FLASH_ATTN_BACK", "fused attention backward: test_flash_attn_backward"},
    {"OPT_STEP_ADAMW", "optimizer step, a state update with no gradient: test_opt, test_ops_train"},
    {"OPT_STEP_SGD", "optimizer step, a state update with no gradient: test_opt, test_ops_train"},
    /* not yet moved from the per-family tests, which still check them */
    {"DUP", "test_ops_forward, test_ops_backward"}, {"SUB", "test_ops_forward, test_ops_backward"},
    {"MUL", "test_ops_forward, test_ops_backward"}, {"DIV", "test_ops_forward, test_ops_backward"},
    {"SQRT", "test_ops_forward, test_ops_backward"}, {"LOG", "test_ops_forward, test_ops_backward"},
    {"SUM", "test_ops_forward, test_ops_backward"}, {"SUM_ROWS", "test_ops_forward, test_ops_backward"},
    {"MEAN", "test_ops_forward, test_ops_backward"}, {"REPEAT", "test_ops_forward, test_ops_backward"},
    {"REPEAT_BACK", "test_ops_forward, test_ops_backward"}, {"SCALE", "test_ops_forward, test_ops_backward"},
    {"CPY", "test_ops_forward, test_ops_backward"}, {"CONT", "test_ops_forward, test_ops_backward"},
    {"RESHAPE", "test_ops_forward, test_ops_backward"}, {"VIEW", "test_ops_forward, test_ops_backward"},
    {"PERMUTE", "test_ops_forward, test_ops_backward"}, {"TRANSPOSE", "test_ops_forward, test_ops_backward"},
    {"ACC", "test_ops_forward, test_ops_backward"}, {"MUL_MAT", "test_ops_forward, test_ops_backward"},
    {"SOFT_MAX", "test_ops_forward, test_ops_backward"}, {"OUT_PROD", "test_ops_forward, test_ops_backward"},
    {"GET_ROWS", "test_ops_train"}, {"GET_ROWS_BACK", "test_ops_train"}, {"ARGMAX", "test_ops_train"},
    {"CROSS_ENTROPY_LOSS", "test_ops_train"}, {"CROSS_ENTROPY_LOSS_BACK", "test_ops_train"},
    {"NORM", "test_ops_nn"}, {"RMS_NORM", "test_ops_nn"}, {"NORM_BACK", "test_ops_nn"}, {"RMS_NORM_BACK", "test_ops_nn"},
    {"UNARY", "test_ops_nn"}, {"UNARY_BACK", "test_ops_nn"},
    {"ROPE", "test_rope"}, {"ROPE_BACK", "test_rope"},
};

static void check_coverage(void) {
    for (int op = 0; op < GGML_OP_COUNT; op++) {
        const char * name = ggml_op_name((enum ggml_op) op);
        if (ggmlr_kernels[op] == &ggmlr_kernel_missing) continue;  /* no constructor yet: nothing to test */
        int rows = 0, exemptions = 0;
        for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
            for (int r = 0; r < families[f]->n_rows; r++) rows += strcmp(families[f]->rows[r].op, name) == 0;
        for (size_t e = 0; e < sizeof exempt / sizeof exempt[0]; e++) exemptions += strcmp(exempt[e].op, name) == 0;
        CHECK(rows + exemptions > 0, "op %s has no row in tests/ops/ and no exemption", name);
        CHECK(!(rows && exemptions), "op %s has rows and an exemption", name);
        CHECK(exemptions <= 1, "op %s is exempted twice", name);
    }
    for (size_t e = 0; e < sizeof exempt / sizeof exempt[0]; e++) {
        bool known = false;
        for (int op = 0; op < GGML_OP_COUNT; op++) known |= strcmp(exempt[e].op, ggml_op_name((enum ggml_op) op)) == 0;
        CHECK(known, "exemption %s names no op", exempt[e].op);
    }
}

int main(void) {
    tc_seed(11);
    check_coverage();
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (int r = 0; r < families[f]->n_rows; r++) ops_run_row(&families[f]->rows[r]);
    printf("SIMD path: %s\n", ggml_cpu_simd_name());
    return tc_finish("ops");
}

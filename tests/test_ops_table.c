/* test_ops_table.c -- the per-op tables agree with the op enum: every op has
 * a distinct name, and every op that is not a view has a CPU kernel. (The
 * tables' lengths are checked at compile time.) */
#include "common/test_common.h"
#include "cpu/kernels/kernels.h"
#include "ops/grad.h"

#include <string.h>

int main(void) {
    for (int op = 0; op < GGML_OP_COUNT; op++) {
        const char * name = ggml_op_name((enum ggml_op) op);
        CHECK(name && strcmp(name, "UNKNOWN") != 0, "op %d has no name", op);
        for (int other = 0; other < op; other++)
            CHECK(strcmp(name, ggml_op_name((enum ggml_op) other)) != 0, "ops %d and %d share the name %s", other, op, name);
        const bool view = ggmlr_op_is_view((enum ggml_op) op);
        CHECK(view || ggmlr_kernels[op]->compute != NULL, "op %s has no CPU kernel", name);
        CHECK(!view || ggmlr_kernels[op]->compute == NULL, "view op %s has a kernel", name);
        /* a refusal without a rule would never be reached */
        CHECK(ggmlr_grad_rules[op]->build || !ggmlr_grad_rules[op]->refuse, "op %s refuses a backward it does not have", name);
    }
    CHECK(strcmp(ggml_op_name(GGML_OP_COUNT), "UNKNOWN") == 0, "GGML_OP_COUNT is not an op");
    return tc_finish("ops_table");
}

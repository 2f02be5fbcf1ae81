/* test_ops_table.c -- the per-op tables (core/op_list.h) agree with the op
 * enum: every op has a distinct name, the one its enumerator in
 * include/ggml.h spells (read from the header, in order, so a row under the
 * wrong op is caught), and every op that is not a view has a CPU kernel or
 * is marked missing (upstream's number, not implemented yet, no rule); and
 * every GLU op has a distinct name, upstream's (ggml_glu_op_name). */
#include "common/test_common.h"
#include "cpu/kernels/kernels.h"
#include "ops/grad.h"

#include <stdio.h>
#include <string.h>

/* The enumerators of enum ggml_op in include/ggml.h, in order, without GGML_OP_. */
static int header_op_names(char names[][64], int max) {
    FILE * f = fopen(GGMLR_SOURCE_DIR "/include/ggml.h", "r");
    if (!f) return -1;
    char line[512];
    int n = 0, in_enum = 0;
    while (fgets(line, sizeof line, f) && n < max) {
        if (strstr(line, "enum ggml_op {")) { in_enum = 1; continue; }
        if (!in_enum) continue;
        if (strchr(line, '}')) break;
        char name[64];
        if (sscanf(line, " GGML_OP_%63[A-Z0-9_]", name) == 1 && strcmp(name, "COUNT") != 0) snprintf(names[n++], 64, "%s", name);
    }
    fclose(f);
    return n;
}

int main(void) {
    static char names[256][64];
    const int n = header_op_names(names, 256);
    CHECK(n == GGML_OP_COUNT, "include/ggml.h lists %d ops, GGML_OP_COUNT is %d", n, (int) GGML_OP_COUNT);
    for (int op = 0; op < n && op < GGML_OP_COUNT; op++)
        CHECK(strcmp(ggml_op_name((enum ggml_op) op), names[op]) == 0, "op %d is GGML_OP_%s in ggml.h but named %s", op, names[op],
              ggml_op_name((enum ggml_op) op));
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

    /* GLU ops: upstream's names (its GGML_GLU_OP_NAME in src/ggml.c), hand-written in
     * upstream's order, so that a renumbered enumerator is caught too */
    static const char * const glu_names[] = {"REGLU", "GEGLU", "SWIGLU", "SWIGLU_OAI", "GEGLU_ERF", "GEGLU_QUICK"};
    const int n_glu = (int) (sizeof glu_names / sizeof glu_names[0]);
    CHECK(n_glu == GGML_GLU_OP_COUNT, "GGML_GLU_OP_COUNT is %d, the test knows %d GLU ops", (int) GGML_GLU_OP_COUNT, n_glu);
    for (int op = 0; op < GGML_GLU_OP_COUNT && op < n_glu; op++) {
        const char * name = ggml_glu_op_name((enum ggml_glu_op) op);
        CHECK(name && strcmp(name, glu_names[op]) == 0, "GLU op %d is named %s, upstream's name is %s", op, name ? name : "(null)", glu_names[op]);
        for (int other = 0; name && other < op; other++)
            CHECK(strcmp(name, ggml_glu_op_name((enum ggml_glu_op) other)) != 0, "GLU ops %d and %d share the name %s", other, op, name);
    }
    CHECK(strcmp(ggml_glu_op_name(GGML_GLU_OP_COUNT), "UNKNOWN") == 0, "GGML_GLU_OP_COUNT is not a GLU op");
    printf("%d ops, every one with a CPU kernel or a view\n", (int) GGML_OP_COUNT);
    return tc_finish("ops_table");
}

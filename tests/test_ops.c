/* test_ops.c -- runs every row of the op table (tests/ops/<family>.c, one
 * file per src/ops/<family>.c) and checks that every op in enum ggml_op has
 * a row or an exemption with its reason, so a new op without a row fails
 * here; that an op with a backward rule has a gradient row, and an op whose
 * rule can refuse (or that has none) a refusal row. */
#include "ops/harness.h"
#include "cpu/kernels/kernels.h"  /* white-box: which ops are not implemented yet */
#include "ops/grad.h"            /* white-box: which ops have a backward rule */

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Ops whose checks live elsewhere, each with where and why. */
static const struct { const char * op, * reason; } exempt[] = {
    {"NONE", "no op: a leaf or parameter, nothing to compute"},
    {"FLASH_ATTN_BACK", "fused attention backward: test_flash_attn_backward"},
    {"OPT_STEP_ADAMW", "optimizer step, a state update in place with no gradient: test_opt_steps, test_opt"},
    {"OPT_STEP_SGD", "optimizer step, a state update in place with no gradient: test_opt_steps, test_opt"},
};

/* Ops without a rule that no refusal can be seen for: those with an I32 result
 * (ARGMAX, COUNT_EQUAL, ARGSORT, TOP_K: no F32 loss can reach them, only
 * get_rows' indices, which get_rows refuses), ARANGE (no sources: nothing can
 * need a gradient); and COL2IM_1D, whose refusal (an F16 input) comes with an
 * F16 result, which no loss of the table can take. */
static const char * const k_no_refusal_row[] = {"ARGMAX", "COUNT_EQUAL", "ARGSORT", "TOP_K", "ARANGE", "COL2IM_1D"};

static bool no_refusal_row(const char * name) {
    for (size_t i = 0; i < sizeof k_no_refusal_row / sizeof k_no_refusal_row[0]; i++)
        if (strcmp(name, k_no_refusal_row[i]) == 0) return true;
    return false;
}

/* Each family file is named after the src/ops/<family>.c that creates its
 * rows' ops (the file names GGML_OP_<op>). */
static void check_family_files(void) {
    for (size_t f = 0; f < (size_t) ops_n_families; f++) {
        CHECK(strcmp(ops_families[f]->name, ops_family_files[f]) == 0, "tests/ops/%s.c names its family %s", ops_family_files[f],
              ops_families[f]->name);
        char path[512], * text = NULL;
        snprintf(path, sizeof path, "%s/src/ops/%s.c", GGMLR_SOURCE_DIR, ops_families[f]->name);
        FILE * fp = fopen(path, "rb");
        if (!CHECK(fp != NULL, "family %s: no %s", ops_families[f]->name, path)) continue;
        size_t n = 0, cap = 0, got;
        do {
            if (n + 4096 + 1 > cap) text = realloc(text, cap = 2 * cap + 4096 + 1);
            got = fread(text + n, 1, 4096, fp);
            n += got;
        } while (got > 0);
        fclose(fp);
        text[n] = '\0';
        for (int r = 0; r < ops_families[f]->n_rows; r++) {
            char sym[64];
            snprintf(sym, sizeof sym, "GGML_OP_%s", ops_families[f]->rows[r].op);
            bool found = false;  /* a whole name: GGML_OP_SUM is not GGML_OP_SUM_ROWS */
            for (const char * at = strstr(text, sym); at && !found; at = strstr(at + 1, sym)) {
                const char c = at[strlen(sym)];
                found = !(c == '_' || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));
            }
            CHECK(found, "family %s: row %s's op is not made in %s", ops_families[f]->name, ops_families[f]->rows[r].op, path);
        }
        free(text);
    }
}

static void check_coverage(void) {
    for (int op = 0; op < GGML_OP_COUNT; op++) {
        const char * name = ggml_op_name((enum ggml_op) op);
        int rows = 0, grad_rows = 0, refused_rows = 0, exemptions = 0;
        for (size_t f = 0; f < (size_t) ops_n_families; f++)
            for (int r = 0; r < ops_families[f]->n_rows; r++) {
                const struct ops_row * row = &ops_families[f]->rows[r];
                if (strcmp(row->op, name) != 0) continue;
                rows++;
                grad_rows += row->grad == OPS_GRAD;
                refused_rows += row->grad == OPS_REFUSED;
            }
        for (size_t e = 0; e < sizeof exempt / sizeof exempt[0]; e++) exemptions += strcmp(exempt[e].op, name) == 0;
        CHECK(rows + exemptions > 0, "op %s has no row in tests/ops/ and no exemption", name);
        CHECK(!(rows && exemptions), "op %s has rows and an exemption", name);
        CHECK(exemptions <= 1, "op %s is exempted twice", name);
        if (!rows) continue;
        const struct ggmlr_grad_rule * rule = ggmlr_grad_rules[op];
        CHECK(!rule->build || grad_rows > 0, "op %s has a backward rule and no gradient row", name);
        CHECK(rule->build || grad_rows == 0, "op %s has no backward rule but a gradient row", name);
        CHECK(!(rule->refuse || !rule->build) || refused_rows > 0 || no_refusal_row(name),
              "op %s can be refused by autodiff and has no refusal row", name);
    }
    for (size_t e = 0; e < sizeof exempt / sizeof exempt[0]; e++) {
        bool known = false;
        for (int op = 0; op < GGML_OP_COUNT; op++) known |= strcmp(exempt[e].op, ggml_op_name((enum ggml_op) op)) == 0;
        CHECK(known, "exemption %s names no op", exempt[e].op);
    }
}

/* Each row draws its values from a seed of its own name, so that adding a
 * row elsewhere changes no other row's inputs (FNV-1a of op and variant). */
static uint64_t row_seed(const struct ops_row * row) {
    uint64_t h = 1469598103934665603ull;
    for (const char * s = row->op; *s; s++) h = (h ^ (unsigned char) *s) * 1099511628211ull;
    for (const char * s = row->variant; *s; s++) h = (h ^ (unsigned char) *s) * 1099511628211ull;
    return h;
}

int main(void) {
    tc_seed(11);
    check_coverage();
    check_family_files();
    for (size_t f = 0; f < (size_t) ops_n_families; f++) {
        const int before = tc_checks;
        const clock_t t0 = clock();
        if (ops_families[f]->check_refs) ops_families[f]->check_refs();
        if (ops_families[f]->check_refusals) ops_families[f]->check_refusals();
        for (int r = 0; r < ops_families[f]->n_rows; r++) {
            tc_seed(row_seed(&ops_families[f]->rows[r]));
            ops_run_row(&ops_families[f]->rows[r]);
        }
        printf("family %s: %d rows, %d checks, %.1f s of CPU\n", ops_families[f]->name, ops_families[f]->n_rows, tc_checks - before,
               (double) (clock() - t0) / CLOCKS_PER_SEC);
    }
    printf("SIMD path: %s\n", ggml_cpu_simd_name());
    return tc_finish("ops");
}

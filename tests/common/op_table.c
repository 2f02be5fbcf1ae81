/* op_table.c -- every family of the op table (tests/ops/<family>.c), from
 * the list tests/CMakeLists.txt makes of that folder (harness.h). */
#include "ops/harness.h"

#define OPS_FAMILY(f) extern const struct ops_family ops_##f;
#include "ops_families.h"
#undef OPS_FAMILY

#define OPS_FAMILY(f) &ops_##f,
const struct ops_family * const ops_families[] = {
#include "ops_families.h"
};
#undef OPS_FAMILY

#define OPS_FAMILY(f) #f,
const char * const ops_family_files[] = {
#include "ops_families.h"
};
#undef OPS_FAMILY

const int ops_n_families = (int) (sizeof ops_families / sizeof ops_families[0]);

/* rule_table.c -- which backward rule autodiff applies to each op: the rows
 * of core/op_list.h, designated by op. The rules live next to their
 * constructors (ops/<family>.c); an op whose rule is `none` is refused by
 * ggml_build_backward_expand with "<OP> has no backward rule". */
#include "ops/grad.h"

const struct ggmlr_grad_rule ggmlr_rule_none = {0};

#define GGMLR_OP(op, kernel, rule) extern const struct ggmlr_grad_rule ggmlr_rule_##rule;
#include "core/op_list.h"
#undef GGMLR_OP

#define GGMLR_OP(op, kernel, rule) [GGML_OP_##op] = &ggmlr_rule_##rule,
const struct ggmlr_grad_rule * const ggmlr_grad_rules[GGML_OP_COUNT] = {
#include "core/op_list.h"
};
#undef GGMLR_OP

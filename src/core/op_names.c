/* op_names.c -- the names of the ops and of the activations, below both the
 * constructors (ops/) and the kernels (cpu/), which use them in messages. */
#include "core/internal.h"
#include "core/op_list.h"

#define GGMLR_OP(op, kernel, rule) [GGML_OP_##op] = #op,
static const char * const op_names[GGML_OP_COUNT] = {
#include "core/op_list.h"
};
#undef GGMLR_OP

const char * ggml_op_name(enum ggml_op op) {
    return (op >= 0 && op < GGML_OP_COUNT && op_names[op]) ? op_names[op] : "UNKNOWN";
}

/* every activation of upstream's enum, by its number */
static const char * const unary_op_names[GGML_UNARY_OP_COUNT] = {
    [GGML_UNARY_OP_ABS] = "ABS", [GGML_UNARY_OP_SGN] = "SGN", [GGML_UNARY_OP_NEG] = "NEG",
    [GGML_UNARY_OP_STEP] = "STEP", [GGML_UNARY_OP_TANH] = "TANH", [GGML_UNARY_OP_ELU] = "ELU",
    [GGML_UNARY_OP_RELU] = "RELU", [GGML_UNARY_OP_SIGMOID] = "SIGMOID", [GGML_UNARY_OP_GELU] = "GELU",
    [GGML_UNARY_OP_GELU_QUICK] = "GELU_QUICK", [GGML_UNARY_OP_SILU] = "SILU", [GGML_UNARY_OP_HARDSWISH] = "HARDSWISH",
    [GGML_UNARY_OP_HARDSIGMOID] = "HARDSIGMOID", [GGML_UNARY_OP_EXP] = "EXP", [GGML_UNARY_OP_EXPM1] = "EXPM1",
    [GGML_UNARY_OP_SOFTPLUS] = "SOFTPLUS", [GGML_UNARY_OP_GELU_ERF] = "GELU_ERF", [GGML_UNARY_OP_XIELU] = "XIELU",
    [GGML_UNARY_OP_FLOOR] = "FLOOR", [GGML_UNARY_OP_CEIL] = "CEIL", [GGML_UNARY_OP_ROUND] = "ROUND",
    [GGML_UNARY_OP_TRUNC] = "TRUNC",
};

bool ggmlr_unary_op_is_valid(int op) { return op >= 0 && op < GGML_UNARY_OP_COUNT && unary_op_names[op]; }

const char * ggml_unary_op_name(enum ggml_unary_op op) { return ggmlr_unary_op_is_valid(op) ? unary_op_names[op] : "UNKNOWN"; }

/* upstream's "unary or op name": the activation for a UNARY node */
const char * ggml_op_desc(const struct ggml_tensor * t) {
    if (!t) return "UNKNOWN";
    return t->op == GGML_OP_UNARY ? ggml_unary_op_name((enum ggml_unary_op) ggmlr_unary_params_decode(t).op) : ggml_op_name(t->op);
}

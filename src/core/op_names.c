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

/* upstream's ggml_op_symbol strings (its graph-dump labels), by op; ggmlr's
 * own ops after them */
static const char * const op_symbols[GGML_OP_COUNT] = {
    [GGML_OP_NONE] = "none", [GGML_OP_DUP] = "x", [GGML_OP_ADD] = "x+y", [GGML_OP_ADD_ID] = "x[i]+y",
    [GGML_OP_ADD1] = "x+y", [GGML_OP_ACC] = "view(x,nb,offset)+=y->x", [GGML_OP_SUB] = "x-y", [GGML_OP_MUL] = "x*y",
    [GGML_OP_DIV] = "x/y", [GGML_OP_SQR] = "x^2", [GGML_OP_SQRT] = "√x", [GGML_OP_LOG] = "log(x)",
    [GGML_OP_SIN] = "sin(x)", [GGML_OP_COS] = "cos(x)", [GGML_OP_SUM] = "Σx", [GGML_OP_SUM_ROWS] = "Σx_k",
    [GGML_OP_CUMSUM] = "cumsum(x)", [GGML_OP_MEAN] = "Σx/n", [GGML_OP_ARGMAX] = "argmax(x)",
    [GGML_OP_COUNT_EQUAL] = "count_equal(x)", [GGML_OP_REPEAT] = "repeat(x)", [GGML_OP_REPEAT_BACK] = "repeat_back(x)",
    [GGML_OP_CONCAT] = "concat(x, y)", [GGML_OP_SILU_BACK] = "silu_back(x)", [GGML_OP_NORM] = "norm(x)",
    [GGML_OP_RMS_NORM] = "rms_norm(x)", [GGML_OP_RMS_NORM_BACK] = "rms_norm_back(x)",
    [GGML_OP_GROUP_NORM] = "group_norm(x)", [GGML_OP_L2_NORM] = "l2_norm(x)", [GGML_OP_MUL_MAT] = "X*Y",
    [GGML_OP_MUL_MAT_ID] = "X[i]*Y", [GGML_OP_OUT_PROD] = "X*Y", [GGML_OP_SCALE] = "x*v",
    [GGML_OP_SET] = "y-\\>view(x)", [GGML_OP_CPY] = "x-\\>y", [GGML_OP_CONT] = "cont(x)",
    [GGML_OP_RESHAPE] = "reshape(x)", [GGML_OP_VIEW] = "view(x)", [GGML_OP_PERMUTE] = "permute(x)",
    [GGML_OP_TRANSPOSE] = "transpose(x)", [GGML_OP_GET_ROWS] = "get_rows(x)",
    [GGML_OP_GET_ROWS_BACK] = "get_rows_back(x)", [GGML_OP_SET_ROWS] = "set_rows(x)", [GGML_OP_DIAG] = "diag(x)",
    [GGML_OP_DIAG_MASK_INF] = "diag_mask_inf(x)", [GGML_OP_DIAG_MASK_ZERO] = "diag_mask_zero(x)",
    [GGML_OP_SOFT_MAX] = "soft_max(x)", [GGML_OP_SOFT_MAX_BACK] = "soft_max_back(x)", [GGML_OP_ROPE] = "rope(x)",
    [GGML_OP_ROPE_BACK] = "rope_back(x)", [GGML_OP_CLAMP] = "clamp(x)",
    [GGML_OP_CONV_TRANSPOSE_1D] = "conv_transpose_1d(x)", [GGML_OP_IM2COL] = "im2col(x)",
    [GGML_OP_IM2COL_BACK] = "im2col_back(x)", [GGML_OP_IM2COL_3D] = "im2col_3d(x)",
    [GGML_OP_COL2IM_1D] = "col2im_1d(x)", [GGML_OP_CONV_2D] = "conv_2d(x)", [GGML_OP_CONV_3D] = "conv_3d(x)",
    [GGML_OP_CONV_2D_DW] = "conv_2d_dw(x)", [GGML_OP_CONV_TRANSPOSE_2D] = "conv_transpose_2d(x)",
    [GGML_OP_POOL_1D] = "pool_1d(x)", [GGML_OP_POOL_2D] = "pool_2d(x)", [GGML_OP_POOL_2D_BACK] = "pool_2d_back(x)",
    [GGML_OP_UPSCALE] = "upscale(x)", [GGML_OP_PAD] = "pad(x)", [GGML_OP_PAD_REFLECT_1D] = "pad_reflect_1d(x)",
    [GGML_OP_ROLL] = "roll(x)", [GGML_OP_ARANGE] = "arange(start, stop, step)",
    [GGML_OP_TIMESTEP_EMBEDDING] = "timestep_embedding(timesteps, dim, max_period)", [GGML_OP_ARGSORT] = "argsort(x)",
    [GGML_OP_TOP_K] = "top_k(x)", [GGML_OP_LEAKY_RELU] = "leaky_relu(x)", [GGML_OP_TRI] = "tri(x)",
    [GGML_OP_FILL] = "fill(x, c)", [GGML_OP_FLASH_ATTN_EXT] = "flash_attn_ext(x)",
    [GGML_OP_FLASH_ATTN_BACK] = "flash_attn_back(x)", [GGML_OP_SSM_CONV] = "ssm_conv(x)",
    [GGML_OP_SSM_SCAN] = "ssm_scan(x)", [GGML_OP_WIN_PART] = "win_part(x)", [GGML_OP_WIN_UNPART] = "win_unpart(x)",
    [GGML_OP_GET_REL_POS] = "get_rel_pos(x)", [GGML_OP_ADD_REL_POS] = "add_rel_pos(x)",
    [GGML_OP_RWKV_WKV6] = "rwkv_wkv6(k, v, r, tf, td, s)",
    [GGML_OP_GATED_LINEAR_ATTN] = "gated_linear_attn(k, v, q, gate, s)",
    [GGML_OP_RWKV_WKV7] = "rwkv_wkv7(r, w, k, v, a, b, s)", [GGML_OP_SOLVE_TRI] = "A X = B, A triangular, solve X",
    [GGML_OP_GATED_DELTA_NET] = "gated_delta_net(q, k, v, g, beta, s)",
    [GGML_OP_LIGHTNING_INDEXER] = "lightning_indexer(q, k, weights, mask)",
    [GGML_OP_DSV4_HC_COMB] = "dsv4_hc_comb(mixes, scale, base)", [GGML_OP_DSV4_HC_PRE] = "dsv4_hc_pre(x, weights)",
    [GGML_OP_DSV4_HC_POST] = "dsv4_hc_post(x, residual, post, comb)", [GGML_OP_UNARY] = "unary(x)",
    [GGML_OP_MAP_CUSTOM1] = "map_custom(x)", [GGML_OP_MAP_CUSTOM2] = "map_custom(x,y)",
    [GGML_OP_MAP_CUSTOM3] = "map_custom(x,y,z)", [GGML_OP_CUSTOM] = "custom(x)",
    [GGML_OP_CROSS_ENTROPY_LOSS] = "cross_entropy_loss(x,y)",
    [GGML_OP_CROSS_ENTROPY_LOSS_BACK] = "cross_entropy_loss_back(x,y)", [GGML_OP_OPT_STEP_ADAMW] = "adamw(x)",
    [GGML_OP_OPT_STEP_SGD] = "sgd(x)", [GGML_OP_GLU] = "glu(x)",
    [GGML_OP_NORM_BACK] = "norm_back(x)", [GGML_OP_UNARY_BACK] = "unary_back(x)", [GGML_OP_GLU_BACK] = "glu_back(x)",
    [GGML_OP_UPSCALE_BACK] = "upscale_back(x)", [GGML_OP_L2_NORM_BACK] = "l2_norm_back(x)",
    [GGML_OP_GROUP_NORM_BACK] = "group_norm_back(x)", [GGML_OP_PAD_BACK] = "pad_back(x)",
    [GGML_OP_GET_REL_POS_BACK] = "get_rel_pos_back(x)",
    [GGML_OP_SSM_CONV_BACK] = "ssm_conv_back(x)",
    [GGML_OP_SSM_SCAN_BACK] = "ssm_scan_back(x)",
};

/* an op without a symbol of its own is named as by ggml_op_name */
const char * ggml_op_symbol(enum ggml_op op) {
    if (op < 0 || op >= GGML_OP_COUNT) return "UNKNOWN";
    return op_symbols[op] ? op_symbols[op] : ggml_op_name(op);
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

static const char * const glu_op_names[GGML_GLU_OP_COUNT] = {
    [GGML_GLU_OP_REGLU] = "REGLU",           [GGML_GLU_OP_GEGLU] = "GEGLU",         [GGML_GLU_OP_SWIGLU] = "SWIGLU",
    [GGML_GLU_OP_SWIGLU_OAI] = "SWIGLU_OAI", [GGML_GLU_OP_GEGLU_ERF] = "GEGLU_ERF", [GGML_GLU_OP_GEGLU_QUICK] = "GEGLU_QUICK",
};

const char * ggml_glu_op_name(enum ggml_glu_op op) { return op >= 0 && op < GGML_GLU_OP_COUNT ? glu_op_names[op] : "UNKNOWN"; }

/* upstream's "unary, GLU or op name": the activation for a UNARY node, the
 * gated unit (SWIGLU, ...) for a GLU node (test-backend-ops -o filters on it) */
const char * ggml_op_desc(const struct ggml_tensor * t) {
    if (!t) return "UNKNOWN";
    if (t->op == GGML_OP_GLU) return ggml_glu_op_name((enum ggml_glu_op) ggmlr_glu_params_decode(t).op);
    return t->op == GGML_OP_UNARY ? ggml_unary_op_name((enum ggml_unary_op) ggmlr_unary_params_decode(t).op) : ggml_op_name(t->op);
}

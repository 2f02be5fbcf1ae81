/* op_list.h -- every op, one row each: GGMLR_OP(OP, kernel, rule).
 *
 * OP is the enum ggml_op name without GGML_OP_ (and the op's name, as
 * ggml_op_name gives it); kernel names the CPU kernel (const struct
 * ggmlr_kernel ggmlr_kernel_<kernel>, defined in cpu/kernels/<family>.c;
 * none: a view, nothing to compute); rule names the backward rule (const
 * struct ggmlr_grad_rule ggmlr_rule_<rule>, defined in ops/<family>.c next
 * to the constructor; none: autodiff refuses the op with a message).
 *
 * The file is included with GGMLR_OP defined, by core/op_names.c (the
 * names), cpu/exec/kernel_table.c and autodiff/grad_rules.c (the tables,
 * designated by op so that no row can drift from the enum). Adding an op is
 * one row here (docs/adding-an-op.md); tests/test_ops_table.c checks every
 * row against include/ggml.h. Tokens only: nothing here includes a layer. */

/*       OP                       kernel              rule */
GGMLR_OP(NONE,                    none,               none)
GGMLR_OP(DUP,                     dup,                dup)
GGMLR_OP(ADD,                     binary,             add)
GGMLR_OP(SUB,                     binary,             sub)
GGMLR_OP(MUL,                     binary,             mul)
GGMLR_OP(DIV,                     binary,             div)
GGMLR_OP(SQR,                     map,                sqr)
GGMLR_OP(SQRT,                    map,                sqrt)
GGMLR_OP(LOG,                     map,                log)
GGMLR_OP(SUM,                     sum,                sum)
GGMLR_OP(SUM_ROWS,                sum_rows,           sum)
GGMLR_OP(MEAN,                    sum_rows,           mean)
GGMLR_OP(REPEAT,                  repeat,             repeat)
GGMLR_OP(REPEAT_BACK,             repeat_back,        repeat_back)
GGMLR_OP(SCALE,                   map,                scale)
GGMLR_OP(CPY,                     dup,                cpy)
GGMLR_OP(CONT,                    dup,                dup)
GGMLR_OP(RESHAPE,                 none,               reshape)
GGMLR_OP(VIEW,                    none,               view)
GGMLR_OP(PERMUTE,                 none,               permute)
GGMLR_OP(TRANSPOSE,               none,               transpose)
GGMLR_OP(ACC,                     acc,                acc)
GGMLR_OP(MUL_MAT,                 mul_mat,            mul_mat)
GGMLR_OP(SOFT_MAX,                soft_max,           soft_max)
GGMLR_OP(FLASH_ATTN_EXT,          flash_attn_ext,     flash_attn_ext)
GGMLR_OP(FLASH_ATTN_BACK,         flash_attn_back,    none)
GGMLR_OP(GET_ROWS,                get_rows,           get_rows)
GGMLR_OP(GET_ROWS_BACK,           get_rows_back,      none)
GGMLR_OP(NORM,                    norm,               norm)
GGMLR_OP(RMS_NORM,                norm,               rms_norm)
GGMLR_OP(NORM_BACK,               norm_back,          none)
GGMLR_OP(RMS_NORM_BACK,           norm_back,          none)
GGMLR_OP(UNARY,                   unary,              unary)
GGMLR_OP(UNARY_BACK,              unary,              none)
GGMLR_OP(SOFT_MAX_BACK,           soft_max_back,      none)
GGMLR_OP(CROSS_ENTROPY_LOSS,      cross_entropy_loss, cross_entropy_loss)
GGMLR_OP(CROSS_ENTROPY_LOSS_BACK, cross_entropy_loss_back, none)
GGMLR_OP(OUT_PROD,                mul_mat,            out_prod)
GGMLR_OP(ROPE,                    rope,               rope)
GGMLR_OP(ROPE_BACK,               rope,               rope)
GGMLR_OP(ARGMAX,                  argmax,             none)
GGMLR_OP(OPT_STEP_ADAMW,          opt_step_adamw,     none)
GGMLR_OP(OPT_STEP_SGD,            opt_step_sgd,       none)

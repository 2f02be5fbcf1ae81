/* ops_internal.h -- what the op families (ops/<family>.c) share: argument
 * checks, node creation, and the internal constructors that backward rules
 * build from. Each failure sets the message and returns NULL, so a
 * constructor can return it. */
#ifndef GGMLR_OPS_INTERNAL_H
#define GGMLR_OPS_INTERNAL_H

#include "core/internal.h"
#include "core/op_list.h"

struct ggml_tensor * ggmlr_null_input(const char * fn, const char * arg);
struct ggml_tensor * ggmlr_fail_type(const char * fn, const char * arg, const struct ggml_tensor * t, const char * want);
struct ggml_tensor * ggmlr_fail_shapes(const char * fn, const char * what, const struct ggml_tensor * a, const struct ggml_tensor * b);
const char *         ggmlr_shape_str(const struct ggml_tensor * t, char * buf, size_t n); /* "[ne0, ne1, ne2, ne3]" */
#define REQUIRE_CTX(fn) do { if (!ctx) { ggmlr_set_error("%s: context is NULL", fn); return NULL; } } while (0)
#define REQUIRE(fn, t)  do { if (!(t)) return ggmlr_null_input(fn, #t); } while (0)
#define REQUIRE_F32(fn, t) do { if ((t)->type != GGML_TYPE_F32) return ggmlr_fail_type(fn, #t, t, "F32"); } while (0)
/* F32, F16 or BF16: the float types an elementwise op reads and writes (computed in F32) */
#define REQUIRE_FLOAT(fn, t) do { if (!ggmlr_is_float_type((t)->type)) return ggmlr_fail_type(fn, #t, t, "F32, F16 or BF16"); } while (0)

/* A new node of op with sources src0, src1 (either may be NULL). */
bool ggmlr_is_float_type(enum ggml_type type);
bool ggmlr_refuse_quantized(const char * fn, const struct ggml_tensor * t);  /* true + message when t is quantized */
struct ggml_tensor * ggmlr_new_node(struct ggml_context * ctx, enum ggml_op op, enum ggml_type type, const int64_t ne[4],
                                    struct ggml_tensor * src0, struct ggml_tensor * src1);
/* A node of op that is a view of a: shape ne, strides nb, `offset` bytes into
 * a's data (checked to lie inside a, aligned to the element size). */
struct ggml_tensor * ggmlr_new_view(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op op,
                                    const int64_t ne[4], const size_t nb[4], size_t offset);
/* The result of op for an _inplace form whose kernel writes whole rows:
 * a view of all of a (contiguous, else a message and NULL). */
struct ggml_tensor * ggmlr_new_inplace(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op op);
/* Bytes from the first to past the last element of a region of shape ne
 * (all >= 0) and strides nb; false when that overflows size_t. */
bool ggmlr_region_span(const int64_t ne[4], const size_t nb[4], size_t esize, size_t * span);
/* a and b F32 of one shape (the gradient ops' operands) */
bool ggmlr_check_same_f32_pair(const char * fn, const struct ggml_tensor * a, const struct ggml_tensor * b);
/* false (message set) when bound, an upper bound in double of every
 * intermediate of a size a constructor computes, reaches 2^62: checked
 * before the int64_t arithmetic so that it cannot overflow */
bool ggmlr_check_size_bound(const char * fn, double bound);
/* an attention or softmax mask is F16 or F32 */
static inline bool ggmlr_mask_type_ok(const struct ggml_tensor * m) { return m->type == GGML_TYPE_F16 || m->type == GGML_TYPE_F32; }

/* acc.c: ggml_acc (ACC_ON_COPY), or into zeros shaped like a (ACC_ON_ZEROS: the
 * backward of a view), or into a itself (ACC_IN_PLACE: the result is a view of
 * a; autodiff's sums of gradients that nothing else reads) */
enum ggmlr_acc_base { ACC_ON_COPY, ACC_ON_ZEROS, ACC_IN_PLACE };
struct ggml_tensor * ggmlr_acc_impl(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                    size_t nb1, size_t nb2, size_t nb3, size_t offset, enum ggmlr_acc_base base);

/* get_rows.c, for the backward of ADD_ID and MUL_MAT_ID: the rows
 * table[:, ids[e, t]] of a 2-D table, [ne0, n_used * n_tokens] (ids flattened,
 * e fastest); and x [ne0, n_used * n_tokens] added into zeros [ne0, n_rows]
 * at those rows. */
struct ggml_tensor * ggmlr_gather_by_ids(struct ggml_context * ctx, struct ggml_tensor * table, struct ggml_tensor * ids);
struct ggml_tensor * ggmlr_scatter_by_ids(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * ids, int64_t n_rows);

/* unary.c: dx = g * f'(x) for the activation prm (a UNARY node's parameters; UNARY_BACK); norm.c: the
 * LayerNorm gradient (NORM_BACK); g and x F32 of one shape. */
struct ggml_tensor * ggmlr_unary_back(struct ggml_context * ctx, struct ggml_tensor * g, struct ggml_tensor * x,
                                      const struct ggmlr_unary_params * prm);
struct ggml_tensor * ggmlr_norm_back(struct ggml_context * ctx, struct ggml_tensor * g, struct ggml_tensor * x, float eps);
/* norm.c: the gradients of l2_norm (L2_NORM_BACK) and of group_norm (GROUP_NORM_BACK), given dy = g */
struct ggml_tensor * ggmlr_l2_norm_back(struct ggml_context * ctx, struct ggml_tensor * g, struct ggml_tensor * x, float eps);
struct ggml_tensor * ggmlr_group_norm_back(struct ggml_context * ctx, struct ggml_tensor * dy, struct ggml_tensor * x, int n_groups, float eps);

/* rope.c: a ROPE or ROPE_BACK node (checked as ggml_rope_ext checks). */
struct ggml_tensor * ggmlr_rope_node(struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, struct ggml_tensor * b,
                                     struct ggml_tensor * c, const struct ggmlr_rope_params * prm);

/* flash_attn.c: ggml_flash_attn_back of a FLASH_ATTN_EXT node's inputs that
 * reads the node's output and statistics instead of running the forward
 * again (core/op_list.h): the same numbers, 4*NMD fewer flops. */
struct ggml_tensor * ggmlr_flash_attn_back_saved(struct ggml_context * ctx, struct ggml_tensor * fwd, struct ggml_tensor * d);

#endif

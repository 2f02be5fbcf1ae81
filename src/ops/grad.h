/* grad.h -- what a backward rule is written against. Each op family's rule
 * lives next to its constructor (ops/<family>.c); autodiff (autodiff/)
 * applies them through the table of core/op_list.h.
 *
 * A rule receives the node, the gradient g of the loss with respect to the
 * node, and need[s] (does source s depend on a parameter); it adds each needed
 * source's gradient with ggmlr_grad_acc, built from ordinary ops. Its refusal
 * (written next to it) says, before anything is built, why the rule cannot
 * serve this node, so that ggml_build_backward_expand stays all-or-nothing. */
#ifndef GGMLR_GRAD_H
#define GGMLR_GRAD_H

#include "ops/ops_internal.h"

struct ggmlr_grad_rule {
    /* why this node's backward cannot be built, or NULL; NULL function: never refuses */
    const char * (*refuse)(const struct ggml_tensor * node, const bool * need);
    /* add the sources' gradients; false on failure (message set). NULL: the op has no rule */
    bool (*build)(struct ggml_context * ctx, struct ggml_cgraph * g, struct ggml_tensor * node,
                  struct ggml_tensor * gr, const bool * need);
};
extern const struct ggmlr_grad_rule * const ggmlr_grad_rules[]; /* GGML_OP_COUNT rows, autodiff/rule_table.c */

/* A rule's build function; A and B are the node's first two sources. Each
 * family file defines its rules with RULE and publishes each as
 * GRAD_RULE(name, refuse, build): const struct ggmlr_grad_rule ggmlr_rule_<name>. */
#define RULE(name) static bool name(struct ggml_context * ctx, struct ggml_cgraph * gph, struct ggml_tensor * node, \
                                    struct ggml_tensor * g, const bool * need)
#define GRAD_RULE(name, refuse, build) const struct ggmlr_grad_rule ggmlr_rule_##name = {refuse, build}
#define A (node->src[0])
#define B (node->src[1])

/* grad.c: the gradient sums. Add contrib to the gradient of src (no-op when
 * src is not in the graph); false when contrib is NULL. */
bool ggmlr_grad_acc(struct ggml_context * ctx, struct ggml_cgraph * g, struct ggml_tensor * src, struct ggml_tensor * contrib);
/* Ends t's life as a gradient sum that autodiff may add into in place (see
 * grad.c): called before the rule of the node whose gradient t is. */
void ggmlr_grad_release(struct ggml_tensor * t);
/* Marks t, a view's gradient (an ACC on zeros), as a private sum. */
void ggmlr_grad_mark_private(struct ggml_tensor * t);
/* The refusal of an in-place node (its result a view of src[0], written
 * over it) whose rule reads src[0]: those values are gone. NULL otherwise. */
const char * ggmlr_refuse_in_place(const struct ggml_tensor * node, const bool * need);
/* a message when a source that needs a gradient, or the node, is not F32
 * (F16 kernels and images are constants; gradients are F32) */
const char * ggmlr_refuse_not_f32(const struct ggml_tensor * node, const bool * need);
/* g summed down to the shape of t when t was broadcast (ggml's modulo tiling). */
struct ggml_tensor * ggmlr_grad_reduce_to(struct ggml_context * ctx, struct ggml_tensor * g, const struct ggml_tensor * t);
/* t, or a contiguous copy of it. */
struct ggml_tensor * ggmlr_grad_contiguous(struct ggml_context * ctx, struct ggml_tensor * t);

#endif

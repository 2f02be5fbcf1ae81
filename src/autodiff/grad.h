/* grad.h -- the backward rules autodiff.c applies, one row per op.
 *
 * A rule receives the node, the gradient gr of the loss with respect to the
 * node, and need[s] (does source s depend on a parameter); it adds each needed
 * source's gradient with ggmlr_grad_acc, built from ordinary ops. Its refusal
 * (written next to it) says, before anything is built, why the rule cannot
 * serve this node, so that ggml_build_backward_expand stays all-or-nothing. */
#ifndef GGMLR_GRAD_H
#define GGMLR_GRAD_H

#include "core/internal.h"

struct ggmlr_grad_rule {
    /* why this node's backward cannot be built, or NULL; NULL function: never refuses */
    const char * (*refuse)(const struct ggml_tensor * node, const bool * need);
    /* add the sources' gradients; false on failure (message set). NULL: the op has no rule */
    bool (*build)(struct ggml_context * ctx, struct ggml_cgraph * g, struct ggml_tensor * node,
                  struct ggml_tensor * gr, const bool * need);
};
extern const struct ggmlr_grad_rule ggmlr_grad_rules[]; /* GGML_OP_COUNT rows, in grad_rules.c */

/* A rule's signature; A and B are the node's first two sources. */
#define RULE_SIGNATURE(name) bool name(struct ggml_context * ctx, struct ggml_cgraph * gph, struct ggml_tensor * node, \
                                       struct ggml_tensor * g, const bool * need)
#define RULE(name) static RULE_SIGNATURE(name)
#define A (node->src[0])
#define B (node->src[1])

/* grad_nn.c: activations, normalisation, softmax */
RULE_SIGNATURE(ggmlr_grad_unary);
RULE_SIGNATURE(ggmlr_grad_norm);
RULE_SIGNATURE(ggmlr_grad_rms_norm);
RULE_SIGNATURE(ggmlr_grad_soft_max);
const char * ggmlr_refuse_soft_max(const struct ggml_tensor * node, const bool * need);

/* Add contrib to the gradient of src (no-op when src is not in the graph); false when contrib is NULL. */
bool ggmlr_grad_acc(struct ggml_context * ctx, struct ggml_cgraph * g, struct ggml_tensor * src, struct ggml_tensor * contrib);
/* Ends t's life as a gradient sum that autodiff may add into in place (see
 * grad_rules.c): called before the rule of the node whose gradient t is. */
void ggmlr_grad_release(struct ggml_tensor * t);
/* g summed down to the shape of t when t was broadcast (ggml's modulo tiling). */
struct ggml_tensor * ggmlr_grad_reduce_to(struct ggml_context * ctx, struct ggml_tensor * g, const struct ggml_tensor * t);
/* t, or a contiguous copy of it. */
struct ggml_tensor * ggmlr_grad_contiguous(struct ggml_context * ctx, struct ggml_tensor * t);

/* grad_train.c: get_rows, cross_entropy_loss */
const char * ggmlr_refuse_get_rows(const struct ggml_tensor * node, const bool * need);
RULE_SIGNATURE(ggmlr_grad_get_rows);
const char * ggmlr_refuse_cross_entropy_loss(const struct ggml_tensor * node, const bool * need);
RULE_SIGNATURE(ggmlr_grad_cross_entropy_loss);

/* grad_rope.c: ROPE and ROPE_BACK (each is the other's gradient) */
const char * ggmlr_refuse_rope(const struct ggml_tensor * node, const bool * need);
RULE_SIGNATURE(ggmlr_grad_rope);

#endif

/* recompute.h -- gradient checkpointing inside ggml_build_backward_expand
 * (recompute.c). */
#ifndef GGMLR_RECOMPUTE_H
#define GGMLR_RECOMPUTE_H

#include "core/internal.h"

/* With checkpoints among the first n_fwd nodes (the forward pass) of g,
 * whose backward nodes follow: the backward nodes read recomputed copies of
 * the forward's other activations, placed just before their first reader.
 * Without checkpoints nothing changes. A failure (message set) leaves the
 * backward nodes rewritten: the caller drops them. */
enum ggml_status ggmlr_recompute_checkpointed(struct ggml_context * ctx, struct ggml_cgraph * g, int n_fwd);

#endif

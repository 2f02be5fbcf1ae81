/* profile.h -- the executor's optional per-node timing (profile.c). */
#ifndef GGMLR_PROFILE_H
#define GGMLR_PROFILE_H

#include "core/internal.h"

#include <stdio.h>

/* Whether computes are timed: GGMLR_PROFILE=1, or ggml_cpu_set_profile. */
bool ggmlr_profile_enabled(void);
uint64_t ggmlr_profile_now_ns(void);
/* The per-op-type totals and the slowest nodes of one compute of g
 * (node_ns[i]: wall time of node i, 0 for views). */
void ggmlr_profile_print(const struct ggml_cgraph * g, const uint64_t * node_ns, int nth);

#endif

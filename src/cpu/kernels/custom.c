/* custom.c -- MAP_CUSTOM1/2/3 and CUSTOM: the user's function, called by the
 * first min(n_tasks, nth) threads with (ith, that count); the others wait at
 * the node's barrier. What it computes, and how it splits the work, is the
 * function's. */
#include "cpu/kernels/kernels.h"

static void ggmlr_compute_custom(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_custom_params prm = ggmlr_custom_params_decode(dst);
    const int nth = prm.n_tasks == GGML_N_TASKS_MAX || prm.n_tasks > p->nth ? p->nth : prm.n_tasks;
    if (p->ith >= nth) return;
    const struct ggmlr_map_custom_srcs s = ggmlr_map_custom_srcs_decode(dst);
    switch (dst->op) {
        case GGML_OP_MAP_CUSTOM1: prm.fun.f1(dst, s.a, p->ith, nth, prm.userdata); break;
        case GGML_OP_MAP_CUSTOM2: prm.fun.f2(dst, s.a, s.b, p->ith, nth, prm.userdata); break;
        case GGML_OP_MAP_CUSTOM3: prm.fun.f3(dst, s.a, s.b, s.c, p->ith, nth, prm.userdata); break;
        default:                  prm.fun.f(dst, p->ith, nth, prm.userdata); break;
    }
}

GGMLR_KERNEL(custom, ggmlr_compute_custom, NULL, NULL);  /* MAP_CUSTOM1, MAP_CUSTOM2, MAP_CUSTOM3, CUSTOM */

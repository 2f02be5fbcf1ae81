/* profile.c -- per-node timings of one compute, summed per op type and printed.
 *
 * On when GGMLR_PROFILE=1 is in the environment (read once) or after
 * ggml_cpu_set_profile(true). The executor's thread 0 reads the clock after
 * each node's closing barrier, so a node's time is its wall time with all
 * threads (waiting for the slowest included). GGMLR_PROFILE=cpu times with
 * thread 0's CPU clock instead: on a loaded machine a 1-thread profile then
 * counts the node's work, not the time the thread spent preempted. Off, the
 * executor only tests a flag per compute. */
#include "cpu/exec/profile.h"
#include "cpu/kernels/kernels.h"

#include "ggml-cpu.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOP_NODES 12

/* -1: not decided yet (read GGMLR_PROFILE), else 0 (off), 1 (wall clock), 2 (thread CPU clock) */
static atomic_int profile_state = -1;

void ggml_cpu_set_profile(bool enable) { atomic_store(&profile_state, enable ? 1 : 0); }

bool ggmlr_profile_enabled(void) {
    int s = atomic_load_explicit(&profile_state, memory_order_relaxed);
    if (s < 0) {
        const char * env = getenv("GGMLR_PROFILE");
        s = !env || !env[0] || strcmp(env, "0") == 0 ? 0 : strcmp(env, "cpu") == 0 ? 2 : 1;
        int unset = -1;
        atomic_compare_exchange_strong(&profile_state, &unset, s);
        s = atomic_load(&profile_state);
    }
    return s > 0;
}

uint64_t ggmlr_profile_now_ns(void) {
    struct timespec ts;
    clock_gettime(atomic_load_explicit(&profile_state, memory_order_relaxed) == 2 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

struct op_total { uint64_t ns; int op, count; };
struct node_time { uint64_t ns; int index; };

static int desc(uint64_t a, uint64_t b) { return a < b ? 1 : a > b ? -1 : 0; }
static int op_desc(const void * x, const void * y) { return desc(((const struct op_total *) x)->ns, ((const struct op_total *) y)->ns); }
static int node_desc(const void * x, const void * y) { return desc(((const struct node_time *) x)->ns, ((const struct node_time *) y)->ns); }

static void shape_str(const struct ggml_tensor * t, char * buf, size_t n) {
    snprintf(buf, n, "%lldx%lldx%lldx%lld", (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2], (long long) t->ne[3]);
}

void ggmlr_profile_print(const struct ggml_cgraph * g, const uint64_t * node_ns, int nth) {
    struct op_total ops[GGML_OP_COUNT];
    struct node_time * top = malloc((size_t) (g->n_nodes > 0 ? g->n_nodes : 1) * sizeof *top);
    uint64_t total = 0;
    for (int op = 0; op < GGML_OP_COUNT; op++) ops[op] = (struct op_total) {0, op, 0};
    for (int i = 0; i < g->n_nodes; i++) {
        const int op = g->nodes[i]->op;
        if (op < 0 || op >= GGML_OP_COUNT) continue;
        ops[op].ns += node_ns[i];
        ops[op].count += !ggmlr_op_is_view(op);
        total += node_ns[i];
        if (top) top[i] = (struct node_time) {node_ns[i], i};
    }
    qsort(ops, GGML_OP_COUNT, sizeof ops[0], op_desc);
    const double ms_total = 1e-6 * (double) total;
    const bool cpu = atomic_load_explicit(&profile_state, memory_order_relaxed) == 2;
    ggmlr_log(GGML_LOG_LEVEL_INFO, "ggmlr profile: %d nodes, %d thread(s), %.3f ms (%s)\n", g->n_nodes, nth, ms_total, cpu ? "thread 0's CPU time" : "wall time");
    ggmlr_log(GGML_LOG_LEVEL_INFO, "  %-24s %6s %10s %6s\n", "op", "nodes", "ms", "%");
    for (int k = 0; k < GGML_OP_COUNT && ops[k].ns > 0; k++)
        ggmlr_log(GGML_LOG_LEVEL_INFO, "  %-24s %6d %10.3f %5.1f%%\n", ggml_op_name(ops[k].op), ops[k].count, 1e-6 * (double) ops[k].ns,
                total ? 100.0 * (double) ops[k].ns / (double) total : 0.0);
    if (top) {
        qsort(top, (size_t) g->n_nodes, sizeof top[0], node_desc);
        ggmlr_log(GGML_LOG_LEVEL_INFO, "  slowest nodes:\n");
        for (int k = 0; k < g->n_nodes && k < TOP_NODES && top[k].ns > 0; k++) {
            const struct ggml_tensor * t = g->nodes[top[k].index];
            char shape[96];
            shape_str(t, shape, sizeof shape);
            ggmlr_log(GGML_LOG_LEVEL_INFO, "  %5d %-20s %-24s %-20s %10.3f ms\n", top[k].index, ggml_op_name(t->op), t->name, shape, 1e-6 * (double) top[k].ns);
        }
        free(top);
    }
}

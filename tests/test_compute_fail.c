/* test_compute_fail.c -- a kernel failing a compute (ggmlr_compute_fail): the
 * compute returns GGML_STATUS_FAILED with the message in ggml_last_error() of
 * the calling thread, nodes before the failing one are computed, no node
 * after it runs (its output keeps the NaN poison), no thread hangs at a
 * barrier, and the next compute succeeds. No op fails at compute time yet,
 * so the library's test hook makes node `fail` fail on the last thread. */
#include "common/test_common.h"

#include <string.h>

void ggmlr_test_fail_at_node(int node);  /* internal test hook (src/cpu/exec/compute.h) */

enum { K = 33, M = 19, N = 23 };

/* nodes: 0 y = a*a, 1 z = y + a, 2 w = mul_mat(b, z) (a two-phase kernel with a barrier), 3 s = w * 0.5 */
struct graph {
    struct ggml_context * ctx;
    struct ggml_cgraph * g;
    struct ggml_tensor * a, * b, * node[4];
};

static struct graph build(void) {
    struct graph n;
    n.ctx = tc_ctx(8);
    n.a = ggml_new_tensor_2d(n.ctx, GGML_TYPE_F32, K, N);
    n.b = ggml_new_tensor_2d(n.ctx, GGML_TYPE_F32, K, M);
    tc_fill_uniform(n.a, -1, 1);
    tc_fill_uniform(n.b, -1, 1);
    n.node[0] = ggml_sqr(n.ctx, n.a);
    n.node[1] = ggml_add(n.ctx, n.node[0], n.a);
    n.node[2] = ggml_mul_mat(n.ctx, n.b, n.node[1]);
    n.node[3] = ggml_scale(n.ctx, n.node[2], 0.5f);
    n.g = ggml_new_graph(n.ctx);
    ggml_build_forward_expand(n.g, n.node[3]);
    return n;
}

static bool all_nan(const struct ggml_tensor * t) {
    for (int64_t i = 0; i < ggml_nelements(t); i++)
        if (!isnan(tc_get(t, i))) return false;
    return true;
}

/* Node 0 must hold a*a exactly (one float multiply per element). */
static bool node0_right(const struct graph * n) {
    for (int64_t i = 0; i < ggml_nelements(n->a); i++) {
        const float x = (float) tc_get(n->a, i);
        if ((float) tc_get(n->node[0], i) != x * x) return false;
    }
    return true;
}

static void check_failure(int fail, int n_threads, ggml_backend_t backend) {
    struct graph n = build();
    CHECK(n.g && ggml_graph_n_nodes(n.g) == 4 && ggml_graph_node(n.g, fail) == n.node[fail], "graph has the expected 4 nodes");
    for (int i = 0; i < 4; i++) tc_poison(n.node[i]);
    ggml_clear_error();
    ggmlr_test_fail_at_node(fail);
    enum ggml_status st;
    if (backend) {
        ggml_backend_cpu_set_n_threads(backend, n_threads);
        st = ggml_backend_graph_compute(backend, n.g);
    } else {
        st = ggml_graph_compute_with_ctx(n.ctx, n.g, n_threads);
    }
    ggmlr_test_fail_at_node(-1);
    const char * via = backend ? "backend" : "with_ctx";
    CHECK(st == GGML_STATUS_FAILED, "%s, %d threads, node %d fails: status %d", via, n_threads, fail, (int) st);
    char want[64];
    snprintf(want, sizeof want, "test failure requested at node %d", fail);
    CHECK(strstr(ggml_last_error(), want) != NULL, "%s: message '%s' carries '%s'", via, ggml_last_error(), want);
    snprintf(want, sizeof want, "node %d '", fail);
    CHECK(strstr(ggml_last_error(), want) != NULL, "%s: message '%s' names node %d", via, ggml_last_error(), fail);
    CHECK(fail == 0 || node0_right(&n), "%s, %d threads: node 0 (before the failure) was computed", via, n_threads);
    for (int i = fail + 1; i < 4; i++)
        CHECK(all_nan(n.node[i]), "%s, %d threads: node %d (after the failure at %d) did not run", via, n_threads, i, fail);

    /* the same executor computes the next graph normally */
    ggml_clear_error();
    st = backend ? ggml_backend_graph_compute(backend, n.g) : ggml_graph_compute_with_ctx(n.ctx, n.g, n_threads);
    CHECK(st == GGML_STATUS_SUCCESS && ggml_last_error()[0] == '\0', "%s, %d threads: compute after a failure: %s", via, n_threads, ggml_last_error());
    CHECK(node0_right(&n) && !all_nan(n.node[3]) && !isnan(tc_get(n.node[3], 0)), "%s, %d threads: every node computed", via, n_threads);
    ggml_free(n.ctx);
}

int main(void) {
    tc_seed(11);
    ggml_backend_t backend = ggml_backend_cpu_init();
    CHECK(backend != NULL, "backend: %s", ggml_last_error());
    for (int n_threads = 1; n_threads <= 4; n_threads++)
        for (int fail = 0; fail < 4; fail++) {
            check_failure(fail, n_threads, NULL);
            if (backend) check_failure(fail, n_threads, backend);
        }
    ggml_backend_free(backend);
    return tc_finish("compute_fail");
}

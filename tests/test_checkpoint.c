/* test_checkpoint.c -- gradient checkpointing (ggml_set_checkpoint): on a
 * stack of residual blocks (RMS norm, matrix products, GELU, softmax, views
 * and a permuted copy) with each block's input marked, the backward graph
 * reads recomputed activations; the gradients of every parameter and the loss
 * are bitwise those of the same graph without checkpoints, for 1, 2, 3 and 8
 * threads; the allocator's buffer for the graph is smaller; fewer nodes
 * are recomputed than the forward has; and a graph without room for the
 * copies is refused and left as it was. */
#include "common/test_common.h"

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <stdlib.h>
#include <string.h>

enum { L = 6, C = 32, F = 64, NT = 24 };

struct net {
    struct ggml_context * ctx_w;  /* weights and input (allocated) */
    struct ggml_tensor * x0, * gain[L], * w1[L], * w2[L];
};

static struct net make_net(void) {
    struct net n;
    n.ctx_w = tc_ctx(8);
    tc_seed(5);
    n.x0 = ggml_new_tensor_2d(n.ctx_w, GGML_TYPE_F32, C, NT);
    tc_fill_uniform(n.x0, -1, 1);
    for (int l = 0; l < L; l++) {
        n.gain[l] = ggml_new_tensor_1d(n.ctx_w, GGML_TYPE_F32, C);
        n.w1[l] = ggml_new_tensor_2d(n.ctx_w, GGML_TYPE_F32, C, F);
        n.w2[l] = ggml_new_tensor_2d(n.ctx_w, GGML_TYPE_F32, F, C);
        tc_fill_uniform(n.gain[l], 0.8, 1.2);
        tc_fill_uniform(n.w1[l], -0.3, 0.3);
        tc_fill_uniform(n.w2[l], -0.2, 0.2);
        ggml_set_param(n.gain[l]); ggml_set_param(n.w1[l]); ggml_set_param(n.w2[l]);
    }
    return n;
}

/* x_{l+1} = x_l + W2 (gelu(W1 h) + softmax-mixed copy of it), h = rmsnorm(x_l) * gain;
 * the loss is sum(x_L^2). With checkpoint, every x_l (l >= 1) is marked. */
static struct ggml_cgraph * build(struct ggml_context * ctx, const struct net * n, bool checkpoint, int size, struct ggml_tensor ** loss) {
    struct ggml_tensor * x = n->x0;
    for (int l = 0; l < L; l++) {
        struct ggml_tensor * h = ggml_mul(ctx, ggml_rms_norm(ctx, x, 1e-5f), n->gain[l]);
        struct ggml_tensor * u = ggml_gelu(ctx, ggml_mul_mat(ctx, n->w1[l], h));                       /* [F, NT] */
        /* views and a permuted copy: [F/4, 4, NT] -> [F/4, NT, 4] -> softmax over F/4 -> back */
        struct ggml_tensor * p = ggml_cont(ctx, ggml_permute(ctx, ggml_reshape_3d(ctx, u, F / 4, 4, NT), 0, 2, 1, 3));
        struct ggml_tensor * s = ggml_soft_max(ctx, p);
        struct ggml_tensor * back = ggml_reshape_2d(ctx, ggml_cont(ctx, ggml_permute(ctx, s, 0, 2, 1, 3)), F, NT);
        x = ggml_add(ctx, x, ggml_mul_mat(ctx, n->w2[l], ggml_add(ctx, u, back)));
        if (checkpoint) ggml_set_checkpoint(x);
    }
    *loss = ggml_sum(ctx, ggml_sqr(ctx, x));
    ggml_set_loss(*loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, size, true);
    ggml_build_forward_expand(g, *loss);
    return g;
}

struct run {
    float loss;
    float * grads;     /* every parameter's gradient, concatenated */
    size_t buffer;     /* the allocator's bytes for the graph */
    int n_fwd, n_nodes;
};

static struct run run(const struct net * n, bool checkpoint, int threads) {
    struct run r = {0};
    struct ggml_init_params ip = {.mem_size = 4096 * ggml_tensor_overhead() + ggml_graph_overhead_custom(2048, true), .mem_buffer = NULL, .no_alloc = true};
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * loss;
    struct ggml_cgraph * g = build(ctx, n, checkpoint, 2048, &loss);
    r.n_fwd = ggml_graph_n_nodes(g);
    if (!CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "backward: %s", ggml_last_error())) { ggml_free(ctx); return r; }
    r.n_nodes = ggml_graph_n_nodes(g);
    ggml_backend_t be = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(be, threads);
    ggml_gallocr_t ga = ggml_gallocr_new(ggml_backend_get_default_buffer_type(be));
    if (CHECK(ggml_gallocr_alloc_graph(ga, g), "alloc")) {
        r.buffer = ggml_gallocr_get_buffer_size(ga, 0);
        ggml_graph_reset(g);
        CHECK(ggml_backend_graph_compute(be, g) == GGML_STATUS_SUCCESS, "compute");
        r.loss = *(float *) loss->data;
        r.grads = malloc(sizeof(float) * L * (C + 2 * C * F));
        float * o = r.grads;
        for (int l = 0; l < L; l++) {
            const struct ggml_tensor * ps[3] = {n->gain[l], n->w1[l], n->w2[l]};
            for (int k = 0; k < 3; k++) {
                const struct ggml_tensor * gr = ggml_graph_get_grad(g, ps[k]);
                memcpy(o, gr->data, ggml_nbytes(gr));
                o += ggml_nelements(gr);
            }
        }
    }
    ggml_gallocr_free(ga);
    ggml_backend_free(be);
    ggml_free(ctx);
    return r;
}

int main(void) {
    struct net n = make_net();
    const size_t n_grad = (size_t) L * (C + 2 * C * F);
    struct run plain = run(&n, false, 2);
    if (plain.grads) {
        double norm = 0.0;
        for (size_t i = 0; i < n_grad; i++) norm += (double) plain.grads[i] * plain.grads[i];
        CHECK(norm > 0.0 && plain.loss > 0.0, "plain: the loss or the gradients are zero");
        const int threads[4] = {1, 2, 3, 8};
        for (int t = 0; t < 4; t++) {
            struct run ck = run(&n, true, threads[t]);
            if (!ck.grads) continue;
            CHECK(ck.loss == plain.loss, "%d threads: loss %.9g vs %.9g", threads[t], (double) ck.loss, (double) plain.loss);
            CHECK(memcmp(ck.grads, plain.grads, sizeof(float) * n_grad) == 0, "%d threads: the gradients differ from the graph without checkpoints", threads[t]);
            /* each recomputed node replaces a forward activation the backward reads */
            CHECK(ck.n_fwd == plain.n_fwd && ck.n_nodes > plain.n_nodes && ck.n_nodes - plain.n_nodes < plain.n_fwd,
                  "%d threads: %d nodes (forward %d) vs %d", threads[t], ck.n_nodes, ck.n_fwd, plain.n_nodes);
            if (t == 0) {
                printf("%d residual blocks: graph buffer %zu bytes with checkpoints, %zu without; %d recomputed nodes\n", L, ck.buffer,
                       plain.buffer, ck.n_nodes - plain.n_nodes);
                CHECK(ck.buffer < plain.buffer * 6 / 10, "the checkpointed graph's buffer (%zu) is not much smaller than %zu", ck.buffer, plain.buffer);
            }
            free(ck.grads);
        }
    }
    /* a graph with room for the backward nodes but not the copies: refused, the graph as it was */
    struct ggml_init_params ip = {.mem_size = 4096 * ggml_tensor_overhead() + ggml_graph_overhead_custom(2048, true), .mem_buffer = NULL, .no_alloc = true};
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * loss;
    struct ggml_cgraph * g = build(ctx, &n, true, plain.n_nodes, &loss);
    const int n_fwd = ggml_graph_n_nodes(g);
    CHECK(ggml_build_backward_expand(ctx, g, NULL) != GGML_STATUS_SUCCESS && strstr(ggml_last_error(), "no room for the") &&
          ggml_graph_n_nodes(g) == n_fwd && ggml_graph_get_grad(g, n.w1[0]) == NULL, "a graph too small for the copies: %s", ggml_last_error());
    ggml_free(ctx);
    free(plain.grads);
    ggml_free(n.ctx_w);
    return tc_finish("test_checkpoint");
}

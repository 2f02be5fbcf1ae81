/* harness.c -- the checks every row of the op table gets. */
#include "ops/harness.h"

#include <stdlib.h>
#include <string.h>

static const int k_threads[] = {1, 2, 3, 8};

static int64_t nel(const int64_t ne[4]) { return ne[0] * ne[1] * ne[2] * ne[3]; }

static void check_forward(const struct ops_row * row) {
    struct ggml_context * ctx = tc_ctx(64);
    struct ggml_tensor * in[OPS_MAX_IN];
    double * vals[OPS_MAX_IN];
    int64_t ne[OPS_MAX_IN][4];
    for (int i = 0; i < row->n_in; i++) {
        memcpy(ne[i], row->in[i].ne, sizeof ne[i]);
        in[i] = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne[i]);
        tc_fill_uniform(in[i], row->in[i].lo, row->in[i].hi);
        vals[i] = malloc((size_t) nel(ne[i]) * sizeof(double));
        for (int64_t k = 0; k < nel(ne[i]); k++) vals[i][k] = tc_get(in[i], k);
    }
    struct ggml_tensor * out = row->build(ctx, in, row->params);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, out);
    const int64_t n = ggml_nelements(out);
    double * ref = malloc((size_t) n * sizeof(double));
    row->ref((const double * const *) vals, (const int64_t (*)[4]) ne, row->params, ref, out->ne);

    /* the first run is the reference for the others, bit for bit: the split
     * of the work between threads must not change any element's arithmetic */
    void * first = malloc(ggml_nbytes(out));
    for (size_t t = 0; t < sizeof k_threads / sizeof k_threads[0]; t++) {
        tc_poison(out);
        tc_compute(ctx, g, k_threads[t]);
        if (t == 0) {
            const double err = tc_rel_err_tensor(out, ref);
            CHECK(err <= row->tol, "%s %s: relative error %.3g > %.3g", row->op, row->variant, err, row->tol);
            memcpy(first, out->data, ggml_nbytes(out));
        } else {
            CHECK(memcmp(first, out->data, ggml_nbytes(out)) == 0, "%s %s: %d threads differ from 1", row->op,
                  row->variant, k_threads[t]);
        }
    }
    CHECK(strcmp(ggml_op_name(out->op), row->op) == 0, "%s: the node is %s, not %s", row->variant,
          ggml_op_name(out->op), row->op);
    free(first);
    free(ref);
    for (int i = 0; i < row->n_in; i++) free(vals[i]);
    ggml_free(ctx);
}

/* loss = sum(y * W), W fixed random (tc_weighted_sum) */
static struct ggml_tensor * row_loss(struct ggml_context * ctx, struct ggml_tensor ** params, void * user) {
    const struct ops_row * row = user;
    return tc_weighted_sum(ctx, row->build(ctx, params, row->params));
}

static void check_gradient(const struct ops_row * row) {
    int64_t shapes[OPS_MAX_IN][4];
    double lo = row->in[0].lo, hi = row->in[0].hi;
    for (int i = 0; i < row->n_in; i++) {
        memcpy(shapes[i], row->in[i].ne, sizeof shapes[i]);
        /* tc_gradcheck draws every input from one range: the narrowest */
        if (row->in[i].lo > lo) lo = row->in[i].lo;
        if (row->in[i].hi < hi) hi = row->in[i].hi;
    }
    char what[160];
    snprintf(what, sizeof what, "%s %s gradient", row->op, row->variant);
    tc_gradcheck(what, row_loss, (void *) row, row->n_in, (const int64_t (*)[4]) shapes, lo, hi, row->fd_eps,
                 row->fd_atol, row->fd_rtol);
}

/* A backward through the row's node fails with a message and leaves the
 * graph as it was. */
static void check_refused(const struct ops_row * row) {
    struct ggml_context * ctx = tc_ctx(16);
    struct ggml_tensor * in[OPS_MAX_IN];
    for (int i = 0; i < row->n_in; i++) {
        in[i] = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, row->in[i].ne);
        tc_fill_uniform(in[i], row->in[i].lo, row->in[i].hi);
        ggml_set_param(in[i]);
    }
    struct ggml_tensor * loss = ggml_sum(ctx, row->build(ctx, in, row->params));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(g, loss);
    const int nodes = ggml_graph_n_nodes(g);
    CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_FAILED && ggml_last_error()[0] != '\0',
          "%s %s: autodiff refuses it with a message (%s)", row->op, row->variant, ggml_last_error());
    CHECK(ggml_graph_n_nodes(g) == nodes, "%s %s: a refused backward left %d nodes, not %d", row->op, row->variant,
          ggml_graph_n_nodes(g), nodes);
    ggml_free(ctx);
}

void ops_run_row(const struct ops_row * row) {
    const int before = tc_failures;
    check_forward(row);
    if (row->differentiable) check_gradient(row);
    else check_refused(row);
    printf("%-16s %-40s %s\n", row->op, row->variant, tc_failures == before ? "ok" : "FAILED");
}

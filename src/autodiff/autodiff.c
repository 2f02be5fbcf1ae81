/* autodiff.c -- reverse-mode differentiation: ggml_build_backward_expand.
 *
 * Gradients are built from ordinary ops (one rule per op, next to its
 * constructor in ops/<family>.c; the table: rule_table.c), so the executor
 * needs no special knowledge of them. The loss gradient is a leaf
 * that ggml_graph_reset sets to 1; each parameter gets an accumulator that the
 * backward graph adds into and ggml_graph_reset zeroes (upstream semantics).
 * The build is all-or-nothing: a refusal or a failure leaves the graph as it was. */
#include "ops/grad.h"
#include "autodiff/recompute.h"

#include <stdlib.h>

/* Index of t among the graph's nodes, or -1 (a leaf or not in the graph). */
static int node_index(const struct ggml_cgraph * g, const int * index_of_slot, const struct ggml_tensor * t) {
    if (!t) return -1;
    const size_t slot = ggmlr_hash_find(g, t);
    return slot == SIZE_MAX ? -1 : index_of_slot[slot];
}

static enum ggml_status build_backward(struct ggml_context * ctx, struct ggml_cgraph * g, struct ggml_tensor ** grad_accs,
                                       bool * needs, bool * reaches, int * index_of_slot) {
    const int n = g->n_nodes;
    for (size_t s = 0; s < g->hash_size; s++) index_of_slot[s] = -1;
    for (int i = 0; i < n; i++) index_of_slot[ggmlr_hash_find(g, g->nodes[i])] = i;
    /* needs[i]: node i depends on a parameter (sources come first in the order) */
    int n_loss = 0;
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * node = g->nodes[i];
        needs[i] = (node->flags & GGML_TENSOR_FLAG_PARAM) != 0;
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            const int j = node_index(g, index_of_slot, node->src[s]);
            if (j >= 0 && needs[j]) needs[i] = true;
        }
        if (node->flags & GGML_TENSOR_FLAG_LOSS) n_loss++;
    }
    if (n_loss == 0) { ggmlr_set_error("ggml_build_backward_expand: the graph has no loss (mark one with ggml_set_loss)"); return GGML_STATUS_FAILED; }
    /* reaches[i]: node i feeds a loss; check every rule we will need before building anything */
    for (int i = n - 1; i >= 0; i--) {
        struct ggml_tensor * node = g->nodes[i];
        reaches[i] = reaches[i] || (node->flags & GGML_TENSOR_FLAG_LOSS);
        if (!reaches[i] || !needs[i]) continue;
        bool src_needs[GGML_MAX_SRC] = {false};
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            const int j = node_index(g, index_of_slot, node->src[s]);
            if (j >= 0) { src_needs[s] = needs[j]; reaches[j] = true; }
        }
        const struct ggmlr_grad_rule * rule = ggmlr_grad_rules[node->op];
        static _Thread_local char no_rule[160];
        const char * why = rule->refuse ? rule->refuse(node, src_needs) : NULL;
        if (!rule->build && node->op != GGML_OP_NONE) {
            snprintf(no_rule, sizeof no_rule, "%s has no backward rule", ggml_op_name(node->op));
            why = no_rule;
        }
        if (why) { ggmlr_set_error("ggml_build_backward_expand: cannot differentiate node '%s': %s", node->name, why); return GGML_STATUS_FAILED; }
    }
    /* loss gradients: leaves that ggml_graph_reset sets to 1 (zero until then) */
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * node = g->nodes[i];
        if (!(node->flags & GGML_TENSOR_FLAG_LOSS) || !needs[i]) continue;
        struct ggml_tensor * lg = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
        if (!lg) return GGML_STATUS_ALLOC_FAILED;
        ggml_set_name(lg, "loss grad");
        if (lg->data) ggml_set_zero(lg);
        g->grads[ggmlr_hash_find(g, node)] = lg;
    }
    /* reverse sweep */
    for (int i = n - 1; i >= 0; i--) {
        struct ggml_tensor * node = g->nodes[i];
        struct ggml_tensor * gr = g->grads[ggmlr_hash_find(g, node)];
        if (!gr || !needs[i] || node->op == GGML_OP_NONE) continue;
        bool need[GGML_MAX_SRC] = {false};
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            const int j = node_index(g, index_of_slot, node->src[s]);
            need[s] = j >= 0 && needs[j];
        }
        ggmlr_grad_release(gr);  /* complete; the rule may hand it on to its sources as it is */
        if (!ggmlr_grad_rules[node->op]->build(ctx, g, node, gr, need)) return GGML_STATUS_FAILED;
    }
    for (size_t s = 0; s < g->hash_size; s++) ggmlr_grad_release(g->grads[s]);
    /* add the gradients to the graph; parameters accumulate into their own tensors */
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * node = g->nodes[i];
        const size_t slot = ggmlr_hash_find(g, node);
        struct ggml_tensor * gr = g->grads[slot];
        if (!gr || !needs[i] || (node->flags & GGML_TENSOR_FLAG_LOSS)) continue;
        if (node->flags & GGML_TENSOR_FLAG_PARAM) {
            struct ggml_tensor * acc = grad_accs && grad_accs[i] ? grad_accs[i] : ggml_new_tensor(ctx, GGML_TYPE_F32, 4, node->ne);
            if (!acc) return GGML_STATUS_ALLOC_FAILED;
            if (!ggml_are_same_shape(acc, node) || acc->type != GGML_TYPE_F32 || !ggml_is_contiguous(acc)) {
                ggmlr_set_error("ggml_build_backward_expand: grad_accs[%d] must be a contiguous F32 tensor shaped like '%s'", i, node->name);
                return GGML_STATUS_FAILED;
            }
            if (acc->data && !(grad_accs && grad_accs[i])) ggml_set_zero(acc);
            struct ggml_tensor * sum = ggml_add_inplace(ctx, acc, gr);
            if (!sum) return GGML_STATUS_ALLOC_FAILED;
            char name[GGML_MAX_NAME + 8];
            snprintf(name, sizeof name, "grad of %s", node->name);
            ggml_set_name(sum, name);
            g->grad_accs[slot] = sum;
            gr = sum;
        }
        if (ggml_build_forward_expand_status(g, gr) != GGML_STATUS_SUCCESS) return GGML_STATUS_FAILED;
    }
    return ggmlr_recompute_checkpointed(ctx, g, n);  /* nothing without checkpoints */
}

enum ggml_status ggml_build_backward_expand(struct ggml_context * ctx, struct ggml_cgraph * g, struct ggml_tensor ** grad_accs) {
    if (!ctx || !g) { ggmlr_set_error("ggml_build_backward_expand: context or graph is NULL"); return GGML_STATUS_FAILED; }
    if (!g->grads) {
        ggmlr_set_error("ggml_build_backward_expand: the graph was created without gradients (use ggml_new_graph_custom(ctx, size, true))");
        return GGML_STATUS_FAILED;
    }
    for (size_t i = 0; i < g->hash_size; i++) {
        if (g->grads[i]) { ggmlr_set_error("ggml_build_backward_expand: this graph already has its backward pass"); return GGML_STATUS_FAILED; }
    }
    const int n_nodes = g->n_nodes, n_leafs = g->n_leafs;
    bool * flags = ggmlr_calloc(2 * (size_t) (n_nodes + 1), sizeof *flags);
    int * index_of_slot = ggmlr_malloc(g->hash_size * sizeof *index_of_slot);
    enum ggml_status st = GGML_STATUS_ALLOC_FAILED;
    if (flags && index_of_slot) st = build_backward(ctx, g, grad_accs, flags, flags + n_nodes + 1, index_of_slot);
    else ggmlr_set_error("ggml_build_backward_expand: out of memory");
    free(flags);
    free(index_of_slot);
    if (st != GGML_STATUS_SUCCESS) {
        /* all or nothing: forget every node and gradient this call added */
        g->n_nodes = n_nodes;
        g->n_leafs = n_leafs;
        memset(g->grads, 0, g->hash_size * sizeof *g->grads);
        memset(g->grad_accs, 0, g->hash_size * sizeof *g->grad_accs);
        ggmlr_graph_rebuild_hash(g);
    }
    return st;
}

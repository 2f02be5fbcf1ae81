/* graph.c -- computation graphs: creation, topological order, reset, queries.
 *
 * A graph lives in its context's arena: the struct followed by the node and
 * leaf arrays and an open-addressing hash set of visited tensors. Gradients
 * are kept per hash slot, so a tensor's gradient is found in O(1). */
#include "core/internal.h"

#include <stdint.h>
#include <stdlib.h>

static size_t hash_size_for(size_t size) {
    /* load factor <= 1/2, odd so that the probe sequence covers every slot */
    return 2 * size + 1;
}

static size_t graph_bytes(size_t size, bool grads) {
    const size_t hs = hash_size_for(size);
    const size_t ptrs = 2 * size + hs * (grads ? 3 : 1);
    return sizeof(struct ggml_cgraph) + ptrs * sizeof(struct ggml_tensor *);
}

size_t ggml_graph_overhead_custom(size_t size, bool grads) {
    /* sizes no graph can have saturate instead of wrapping around */
    if (size > (SIZE_MAX / 8) / sizeof(struct ggml_tensor *)) return SIZE_MAX;
    return ggml_tensor_overhead() + graph_bytes(size, grads);  /* tensor_overhead ~ object header, generous */
}

size_t ggml_graph_overhead(void) { return ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, false); }

struct ggml_cgraph * ggml_new_graph_custom(struct ggml_context * ctx, size_t size, bool grads) {
    if (!ctx) { ggmlr_set_error("ggml_new_graph: context is NULL"); return NULL; }
    if (size == 0 || size > (size_t) INT32_MAX / 4) {
        ggmlr_set_error("ggml_new_graph: size %zu is out of range", size);
        return NULL;
    }
    struct ggml_cgraph * g = ggmlr_ctx_alloc_object(ctx, graph_bytes(size, grads));
    if (!g) return NULL;
    struct ggml_tensor ** p = (struct ggml_tensor **) (g + 1);
    g->size = (int) size;
    g->hash_size = hash_size_for(size);
    g->nodes = p;      p += size;
    g->leafs = p;      p += size;
    g->hash_keys = p;  p += g->hash_size;
    if (grads) {
        g->grads = p;      p += g->hash_size;
        g->grad_accs = p;
    }
    return g;
}

struct ggml_cgraph * ggml_new_graph(struct ggml_context * ctx) { return ggml_new_graph_custom(ctx, GGML_DEFAULT_GRAPH_SIZE, false); }

/* ---- hash set ---- */

static size_t hash_ptr(const void * p, size_t n) { return (size_t) (((uintptr_t) p >> 4) * 0x9E3779B97F4A7C15ull % n); }

size_t ggmlr_hash_find(const struct ggml_cgraph * g, const struct ggml_tensor * t) {
    size_t i = hash_ptr(t, g->hash_size);
    for (size_t probes = 0; probes < g->hash_size; probes++) {
        if (g->hash_keys[i] == t) return i;
        if (g->hash_keys[i] == NULL) return SIZE_MAX;
        i = (i + 1) % g->hash_size;
    }
    return SIZE_MAX;
}

size_t ggmlr_hash_insert(struct ggml_cgraph * g, struct ggml_tensor * t) {
    size_t i = hash_ptr(t, g->hash_size);
    for (size_t probes = 0; probes < g->hash_size; probes++) {
        if (g->hash_keys[i] == t) return i;
        if (g->hash_keys[i] == NULL) { g->hash_keys[i] = t; return i; }
        i = (i + 1) % g->hash_size;
    }
    return SIZE_MAX;
}

void ggmlr_graph_rebuild_hash(struct ggml_cgraph * g) {
    memset(g->hash_keys, 0, g->hash_size * sizeof *g->hash_keys);
    for (int i = 0; i < g->n_leafs; i++) ggmlr_hash_insert(g, g->leafs[i]);
    for (int i = 0; i < g->n_nodes; i++) ggmlr_hash_insert(g, g->nodes[i]);
}

/* ---- topological order ---- */

/* Depth-first post-order: sources before the tensors that use them. A tensor
 * with no op that is not a parameter is a leaf (an input); the rest are nodes.
 * The walk keeps its own stack (a chain of a million ops must not overflow the
 * C stack) and visits sources in order, as the recursive definition would. */
struct visit_frame { struct ggml_tensor * t; int next_src; };

/* A walk's stack of cap items of elem bytes, twice as large; NULL (with the
 * message set, the old stack intact) when that does not fit. */
static void * grow_stack(void * stack, size_t * cap, size_t elem) {
    void * bigger = *cap <= SIZE_MAX / 2 / elem ? ggmlr_realloc(stack, 2 * *cap * elem) : NULL;
    if (!bigger) { ggmlr_set_error("ggml_build_forward_expand: out of memory"); return NULL; }
    *cap *= 2;
    return bigger;
}

static bool append(struct ggml_cgraph * g, struct ggml_tensor * t) {
    const bool is_leaf = t->op == GGML_OP_NONE && !(t->flags & GGML_TENSOR_FLAG_PARAM);
    if ((is_leaf ? g->n_leafs : g->n_nodes) >= g->size) {
        ggmlr_set_error("graph is full (%d %s); create it with ggml_new_graph_custom and a larger size",
                        g->size, is_leaf ? "leafs" : "nodes");
        return false;
    }
    if (is_leaf) g->leafs[g->n_leafs++] = t;
    else         g->nodes[g->n_nodes++] = t;
    return true;
}

static bool visit(struct ggml_cgraph * g, struct ggml_tensor * root) {
    if (ggmlr_hash_find(g, root) != SIZE_MAX) return true;
    if (ggmlr_hash_insert(g, root) == SIZE_MAX) { ggmlr_set_error("graph hash set is full"); return false; }
    size_t cap = 64, n = 0;
    struct visit_frame * stack = ggmlr_malloc(cap * sizeof *stack);
    if (!stack) { ggmlr_set_error("ggml_build_forward_expand: out of memory"); return false; }
    stack[n++] = (struct visit_frame) {root, 0};
    bool ok = true;
    while (ok && n > 0) {
        struct visit_frame * top = &stack[n - 1];
        struct ggml_tensor * src = NULL;
        while (top->next_src < GGML_MAX_SRC && !src) src = top->t->src[top->next_src++];
        if (!src) {  /* every source done: the tensor itself */
            ok = append(g, top->t);
            n--;
            continue;
        }
        if (ggmlr_hash_find(g, src) != SIZE_MAX) continue;
        if (ggmlr_hash_insert(g, src) == SIZE_MAX) { ggmlr_set_error("graph hash set is full"); ok = false; break; }
        if (n == cap) {
            struct visit_frame * bigger = grow_stack(stack, &cap, sizeof *stack);
            if (!bigger) { ok = false; break; }
            stack = bigger;
        }
        stack[n++] = (struct visit_frame) {src, 0};
    }
    free(stack);
    return ok;
}

/* Upstream's compute flag: root and every op it depends on (leaves have
 * none to compute); a tensor already flagged had its sources flagged then. */
static bool mark_compute(struct ggml_tensor * root) {
    size_t cap = 64, n = 0;
    struct ggml_tensor ** stack = ggmlr_malloc(cap * sizeof *stack);
    if (!stack) { ggmlr_set_error("ggml_build_forward_expand: out of memory"); return false; }
    stack[n++] = root;
    while (n > 0) {
        struct ggml_tensor * t = stack[--n];
        if (t->op == GGML_OP_NONE || (t->flags & GGML_TENSOR_FLAG_COMPUTE)) continue;
        t->flags |= GGML_TENSOR_FLAG_COMPUTE;
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            if (!t->src[s]) continue;
            if (n == cap) {
                struct ggml_tensor ** bigger = grow_stack(stack, &cap, sizeof *stack);
                if (!bigger) { free(stack); return false; }
                stack = bigger;
            }
            stack[n++] = t->src[s];
        }
    }
    free(stack);
    return true;
}

/* t and its sources into g; `compute`: flagged to be computed, else only ordered */
static enum ggml_status build_forward(struct ggml_cgraph * g, struct ggml_tensor * t, bool compute) {
    if (!g) { ggmlr_set_error("ggml_build_forward_expand: graph is NULL"); return GGML_STATUS_FAILED; }
    if (!t) {
        char prev[400];
        snprintf(prev, sizeof prev, "%s", ggml_last_error());
        ggmlr_set_error("ggml_build_forward_expand: tensor is NULL%s%s%s", prev[0] ? " (earlier error: " : "", prev, prev[0] ? ")" : "");
        return GGML_STATUS_FAILED;
    }
    const int n_nodes = g->n_nodes, n_leafs = g->n_leafs;
    if (!visit(g, t) || (compute && !mark_compute(t))) {
        /* leave the graph as it was */
        g->n_nodes = n_nodes;
        g->n_leafs = n_leafs;
        ggmlr_graph_rebuild_hash(g);
        return GGML_STATUS_FAILED;
    }
    return GGML_STATUS_SUCCESS;
}

enum ggml_status ggml_build_forward_expand_status(struct ggml_cgraph * g, struct ggml_tensor * t) { return build_forward(g, t, true); }

void ggml_build_forward_expand(struct ggml_cgraph * g, struct ggml_tensor * t) { (void) build_forward(g, t, true); }

void ggml_build_forward_order(struct ggml_cgraph * g, struct ggml_tensor * t) { (void) build_forward(g, t, false); }

/* every tensor in the graph, only tensors[idx] (and what it needs) computed:
 * one topology for branches chosen at run time (upstream's; NULL and an idx
 * out of range give a message and NULL instead of an assert) */
struct ggml_tensor * ggml_build_forward_select(struct ggml_cgraph * g, struct ggml_tensor ** tensors, int n_tensors, int idx) {
    if (!g || !tensors || idx < 0 || idx >= n_tensors) {
        ggmlr_set_error("ggml_build_forward_select: %s", !g ? "graph is NULL" : !tensors ? "tensors is NULL" : "idx is not in [0, n_tensors)");
        return NULL;
    }
    for (int i = 0; i < n_tensors; i++)
        if (build_forward(g, tensors[i], i == idx) != GGML_STATUS_SUCCESS) return NULL;
    return tensors[idx];
}

/* ---- queries ---- */

int ggml_graph_size(const struct ggml_cgraph * g) { return g ? g->size : 0; }
int ggml_graph_n_nodes(const struct ggml_cgraph * g) { return g ? g->n_nodes : 0; }

struct ggml_tensor * ggml_graph_node(const struct ggml_cgraph * g, int i) {
    if (!g) return NULL;
    if (i < 0) i += g->n_nodes;
    if (i < 0 || i >= g->n_nodes) { ggmlr_set_error("ggml_graph_node: index out of range"); return NULL; }
    return g->nodes[i];
}

struct ggml_tensor * ggml_graph_get_grad(const struct ggml_cgraph * g, const struct ggml_tensor * t) {
    if (!g || !t || !g->grads) return NULL;
    const size_t i = ggmlr_hash_find(g, t);
    if (i == SIZE_MAX) return NULL;
    return g->grad_accs[i] ? g->grad_accs[i] : g->grads[i];
}

struct ggml_tensor * ggml_graph_get_grad_acc(const struct ggml_cgraph * g, const struct ggml_tensor * t) {
    if (!g || !t || !g->grad_accs) return NULL;
    const size_t i = ggmlr_hash_find(g, t);
    return i == SIZE_MAX ? NULL : g->grad_accs[i];
}

/* Loss gradients := 1, gradient accumulators := 0. */
void ggml_graph_reset(struct ggml_cgraph * g) {
    if (!g || !g->grads) { ggmlr_set_error("ggml_graph_reset: graph has no gradients"); return; }
    for (int i = 0; i < g->n_nodes; i++) {
        const struct ggml_tensor * node = g->nodes[i];
        const size_t slot = ggmlr_hash_find(g, node);
        if (slot == SIZE_MAX) continue;
        if ((node->flags & GGML_TENSOR_FLAG_LOSS) && g->grads[slot] && g->grads[slot]->data) {
            ggml_set_f32(g->grads[slot], 1.0f);
        }
        struct ggml_tensor * acc = g->grad_accs[slot];
        if (acc && acc->data) {
            /* the accumulator node is an in-place view; zero the memory it adds into */
            ggml_set_zero(acc->view_src ? acc->src[0] : acc);
        }
    }
}

/* A quantized tensor cannot be trained (no gradient step keeps its blocks):
 * refused with a message, the flag left unset. */
void ggml_set_param(struct ggml_tensor * t) {
    if (t && ggml_is_quantized(t->type)) {
        ggmlr_set_error("ggml_set_param: tensor '%s' is %s; a quantized tensor cannot be a parameter (train an F32 copy "
                        "or adapters)", t->name, ggml_type_name(t->type));
        return;
    }
    if (t) t->flags |= GGML_TENSOR_FLAG_PARAM;
}
void ggml_set_input(struct ggml_tensor * t) { if (t) t->flags |= GGML_TENSOR_FLAG_INPUT; }
void ggml_set_output(struct ggml_tensor * t) { if (t) t->flags |= GGML_TENSOR_FLAG_OUTPUT; }
void ggml_set_checkpoint(struct ggml_tensor * t) { if (t) t->flags |= GGML_TENSOR_FLAG_CHECKPOINT; }

void ggml_set_loss(struct ggml_tensor * t) {
    if (!t) { ggmlr_set_error("ggml_set_loss: tensor is NULL"); return; }
    if (!ggml_is_scalar(t) || t->type != GGML_TYPE_F32) {
        ggmlr_set_error("ggml_set_loss: the loss must be a scalar F32 tensor ('%s' is %s with %lld elements)",
                        t->name, ggml_type_name(t->type), (long long) ggml_nelements(t));
        return;
    }
    t->flags |= GGML_TENSOR_FLAG_LOSS;
}

/* ---- upstream's graph editing ---- */

void ggml_graph_add_node(struct ggml_cgraph * g, struct ggml_tensor * t) {
    if (!g || !t) { ggmlr_set_error("ggml_graph_add_node: graph or tensor is NULL"); return; }
    if (g->n_nodes >= g->size) { ggmlr_set_error("ggml_graph_add_node: graph is full (%d nodes)", g->size); return; }
    if (ggmlr_hash_insert(g, t) == SIZE_MAX) { ggmlr_set_error("ggml_graph_add_node: graph hash set is full"); return; }
    g->nodes[g->n_nodes++] = t;
    t->flags |= GGML_TENSOR_FLAG_COMPUTE;  /* a node added by hand is computed (upstream: only once flagged) */
}

void ggml_graph_clear(struct ggml_cgraph * g) {
    if (!g) return;
    g->n_nodes = g->n_leafs = 0;
    memset(g->hash_keys, 0, g->hash_size * sizeof *g->hash_keys);
    if (g->grads) {
        memset(g->grads, 0, g->hash_size * sizeof *g->grads);
        memset(g->grad_accs, 0, g->hash_size * sizeof *g->grad_accs);
    }
}

/* dst gets src's nodes and leafs, and its gradients when both have room for them. */
void ggml_graph_cpy(struct ggml_cgraph * src, struct ggml_cgraph * dst) {
    if (!src || !dst) { ggmlr_set_error("ggml_graph_cpy: graph is NULL"); return; }
    if (dst->size < src->n_nodes || dst->size < src->n_leafs) {
        ggmlr_set_error("ggml_graph_cpy: the destination holds %d tensors, the source has %d nodes and %d leafs", dst->size, src->n_nodes, src->n_leafs);
        return;
    }
    ggml_graph_clear(dst);
    memcpy(dst->nodes, src->nodes, (size_t) src->n_nodes * sizeof *dst->nodes);
    memcpy(dst->leafs, src->leafs, (size_t) src->n_leafs * sizeof *dst->leafs);
    dst->n_nodes = src->n_nodes;
    dst->n_leafs = src->n_leafs;
    ggmlr_graph_rebuild_hash(dst);
    if (!src->grads || !dst->grads) return;
    for (int i = 0; i < src->n_nodes; i++) {
        const size_t from = ggmlr_hash_find(src, src->nodes[i]), to = ggmlr_hash_find(dst, src->nodes[i]);
        if (from == SIZE_MAX || to == SIZE_MAX) continue;
        dst->grads[to] = src->grads[from];
        dst->grad_accs[to] = src->grad_accs[from];
    }
}

struct ggml_cgraph * ggml_graph_dup(struct ggml_context * ctx, struct ggml_cgraph * g, bool force_grads) {
    if (!g) { ggmlr_set_error("ggml_graph_dup: graph is NULL"); return NULL; }
    struct ggml_cgraph * d = ggml_new_graph_custom(ctx, (size_t) g->size, g->grads != NULL || force_grads);
    if (d) ggml_graph_cpy(g, d);
    return d;
}

struct ggml_tensor ** ggml_graph_nodes(struct ggml_cgraph * g) { return g ? g->nodes : NULL; }

struct ggml_tensor * ggml_graph_get_tensor(const struct ggml_cgraph * g, const char * name) {
    if (!g || !name) return NULL;
    for (int i = 0; i < g->n_leafs; i++) if (strcmp(g->leafs[i]->name, name) == 0) return g->leafs[i];
    for (int i = 0; i < g->n_nodes; i++) if (strcmp(g->nodes[i]->name, name) == 0) return g->nodes[i];
    return NULL;
}

/* One line per node and leaf to the log (INFO): index, shape, op, name. */
void ggml_graph_print(const struct ggml_cgraph * g) {
    if (!g) return;
    ggmlr_log(GGML_LOG_LEVEL_INFO, "=== GRAPH ===\nn_nodes = %d\n", g->n_nodes);
    for (int i = 0; i < g->n_nodes; i++) {
        const struct ggml_tensor * t = g->nodes[i];
        ggmlr_log(GGML_LOG_LEVEL_INFO, " - %3d: [ %5lld, %5lld, %5lld, %5lld] %16s %s\n", i, (long long) t->ne[0], (long long) t->ne[1],
                  (long long) t->ne[2], (long long) t->ne[3], ggml_op_desc(t), t->name);
    }
    ggmlr_log(GGML_LOG_LEVEL_INFO, "n_leafs = %d\n", g->n_leafs);
    for (int i = 0; i < g->n_leafs; i++) {
        const struct ggml_tensor * t = g->leafs[i];
        ggmlr_log(GGML_LOG_LEVEL_INFO, " - %3d: [ %5lld, %5lld] %8s %16s\n", i, (long long) t->ne[0], (long long) t->ne[1], ggml_op_name(t->op), t->name);
    }
    ggmlr_log(GGML_LOG_LEVEL_INFO, "========================================\n");
}

/* Graphviz: one box per node (op, name, shape; green: a parameter, yellow: has a
 * gradient in gb), one ellipse per leaf, an arrow from each source to its
 * node. gb may be NULL; it is read for the gradients of g's nodes only. */
void ggml_graph_dump_dot(const struct ggml_cgraph * gb, const struct ggml_cgraph * g, const char * filename) {
    if (!g || !filename) { ggmlr_set_error("ggml_graph_dump_dot: %s is NULL", g ? "filename" : "the graph"); return; }
    FILE * f = ggml_fopen(filename, "w");
    if (!f) { ggmlr_set_error("ggml_graph_dump_dot: cannot open '%s' for writing", filename); return; }
    fprintf(f, "digraph G {\n  newrank = true;\n  rankdir = TB;\n");
    for (int i = 0; i < g->n_nodes; i++) {
        const struct ggml_tensor * t = g->nodes[i];
        const bool param = (t->flags & GGML_TENSOR_FLAG_PARAM) != 0;
        const bool has_grad = gb && ggml_graph_get_grad(gb, t) != NULL;
        fprintf(f, "  \"%p\" [style = filled; fillcolor = %s; shape = record; label = \"%d: %s|%s|[%lld, %lld, %lld, %lld] %s\"; ];\n",
                (const void *) t, param ? "green" : has_grad ? "yellow" : "white", i, ggml_op_desc(t), t->name,
                (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2], (long long) t->ne[3], ggml_type_name(t->type));
    }
    for (int i = 0; i < g->n_leafs; i++) {
        const struct ggml_tensor * t = g->leafs[i];
        fprintf(f, "  \"%p\" [style = filled; fillcolor = pink; shape = ellipse; label = \"%s [%lld, %lld] %s\"; ];\n", (const void *) t,
                t->name, (long long) t->ne[0], (long long) t->ne[1], ggml_type_name(t->type));
    }
    for (int i = 0; i < g->n_nodes; i++)
        for (int s = 0; s < GGML_MAX_SRC; s++)
            if (g->nodes[i]->src[s])
                fprintf(f, "  \"%p\" -> \"%p\" [ label = \"%d\"; ];\n", (const void *) g->nodes[i]->src[s], (const void *) g->nodes[i], s);
    fprintf(f, "}\n");
    if (fclose(f) != 0) ggmlr_set_error("ggml_graph_dump_dot: writing '%s' failed", filename);
}

/* recompute.c -- gradient checkpointing (rematerialization) after the
 * backward build. When forward nodes are marked with ggml_set_checkpoint,
 * every other forward node that a backward node reads is replaced, in the
 * backward nodes' sources, by a recomputed copy: the same op on the copies
 * of its own sources, down to the checkpoints, parameters, leaves, outputs
 * and losses, which are read as they are. The copies are placed just before
 * the first backward node that needs them, so the forward's activations
 * between checkpoints die during the forward pass (the allocator frees a
 * tensor after its last reader) and each segment's activations exist again
 * only while its own backward runs: memory O(checkpoints + one segment)
 * instead of O(all activations), for one more forward pass of compute. The
 * copies compute what the originals did with the same kernels, so the
 * gradients are bitwise those without checkpoints.
 *
 * For the copies to die early, their readers must run early: the backward
 * nodes are rescheduled (a topological order still) so that a node runs as
 * soon as the gradients it reads exist -- a parameter's gradient right after
 * the segment's, not after the whole backward sweep, where autodiff's order
 * puts it. Nodes that read no gradient (a transposed activation, say) run
 * just before their first reader, so that they pull no segment in early.
 *
 * Kept as they are (read where they are, not recomputed): ops that write
 * into another tensor's memory (in-place ops, CPY/SET_ROWS into a view),
 * since running them twice would write twice; a recomputed copy of a plain
 * view (VIEW, RESHAPE, PERMUTE, TRANSPOSE) views the copy of its source. */
#include "autodiff/recompute.h"

#include <stdlib.h>

static bool is_pure_view(enum ggml_op op) {
    return op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

struct remat {
    struct ggml_context * ctx;
    struct ggml_cgraph * g;
    int n_fwd, n;                   /* nodes [0, n_fwd) are the forward pass, [n_fwd, n) the backward */
    int * index_of_slot;            /* hash slot -> node index, -1 */
    struct ggml_tensor ** copy;     /* [n_fwd]: the recomputed copy of forward node i, or NULL */
    bool * placed;                  /* [n]: backward node i is in the new order */
    bool * no_grad;                 /* [n]: backward node i reads no gradient, even indirectly */
    int * n_users, ** users;        /* [n]: the backward nodes that read backward node i */
    int * recent, n_recent;         /* backward nodes placed, in order (their readers may be ready) */
    struct ggml_tensor ** order;    /* the new node list being written */
    int n_order;
};

/* What t reads as: the index of t's node (-1: a leaf or not in the graph). */
static int index_of(const struct remat * r, const struct ggml_tensor * t) {
    if (!t) return -1;
    const size_t slot = ggmlr_hash_find(r->g, t);
    return slot == SIZE_MAX ? -1 : r->index_of_slot[slot];
}

/* The source s of t: src[s], or view_src for s == GGML_MAX_SRC (a view's memory is its base's). */
static struct ggml_tensor ** source(struct ggml_tensor * t, int s) { return s < GGML_MAX_SRC ? &t->src[s] : &t->view_src; }

/* The forward index of t if it is a node to recompute, else -1. */
static int recomputable(const struct remat * r, const struct ggml_tensor * t) {
    const int i = index_of(r, t);
    if (i < 0 || i >= r->n_fwd || t->op == GGML_OP_NONE) return -1;
    if (t->flags & (GGML_TENSOR_FLAG_CHECKPOINT | GGML_TENSOR_FLAG_PARAM | GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT | GGML_TENSOR_FLAG_LOSS)) return -1;
    if (t->view_src && !is_pure_view(t->op)) return -1;  /* writes into another tensor */
    return i;
}

/* The backward index of t, else -1. */
static int backward_index(const struct remat * r, const struct ggml_tensor * t) {
    const int i = index_of(r, t);
    return i >= r->n_fwd ? i : -1;
}

static bool make_copy(struct remat * r, int i) {
    struct ggml_tensor * f = r->g->nodes[i];
    const int vs = recomputable(r, f->view_src);
    struct ggml_tensor * c = ggmlr_new_tensor_impl(r->ctx, f->type, GGML_MAX_DIMS, f->ne, vs >= 0 ? r->copy[vs] : f->view_src, f->view_offs);
    if (!c) return false;
    for (int d = 0; d < GGML_MAX_DIMS; d++) c->nb[d] = f->nb[d];
    c->op = f->op;
    memcpy(c->op_params, f->op_params, sizeof c->op_params);
    for (int s = 0; s < GGML_MAX_SRC; s++) {
        const int j = recomputable(r, f->src[s]);
        c->src[s] = j >= 0 ? r->copy[j] : f->src[s];
    }
    c->flags = GGML_TENSOR_FLAG_COMPUTE;
    snprintf(c->name, sizeof c->name, "%.50s (recomputed)", f->name);
    if (ggmlr_hash_insert(r->g, c) == SIZE_MAX) { ggmlr_set_error("ggml_build_backward_expand: graph hash set is full"); return false; }
    r->copy[i] = c;
    r->order[r->n_order++] = c;
    return true;
}

/* Node `root` in the new order after what it needs, depth first with an
 * explicit stack (a chain may be long): for a forward node its copy after
 * the copies of its sources; for a backward node itself, after the copies
 * and the not yet placed backward nodes it reads, its sources then pointed
 * at the copies. */
static bool place(struct remat * r, int root) {
    struct frame { int i, next; };
    size_t cap = 64, n = 0;
    struct frame * st = ggmlr_malloc(cap * sizeof *st);
    if (!st) return false;
    st[n++] = (struct frame) {root, 0};
    bool ok = true;
    while (ok && n > 0) {
        struct frame * top = &st[n - 1];
        struct ggml_tensor * t = r->g->nodes[top->i];
        const bool fwd = top->i < r->n_fwd;
        int next = -1;
        while (top->next <= GGML_MAX_SRC && next < 0) {
            const struct ggml_tensor * s = *source(t, top->next++);
            const int j = recomputable(r, s), b = backward_index(r, s);
            if (j >= 0 && !r->copy[j]) next = j;
            else if (!fwd && b >= 0 && !r->placed[b]) next = b;
        }
        if (next >= 0) {
            if (n == cap) {
                struct frame * bigger = ggmlr_realloc(st, 2 * cap * sizeof *st);
                if (!bigger) { ok = false; break; }
                st = bigger;
                cap *= 2;
            }
            st[n++] = (struct frame) {next, 0};
            continue;
        }
        n--;
        if (fwd) { ok = make_copy(r, top->i); continue; }
        for (int s = 0; s <= GGML_MAX_SRC; s++) {
            struct ggml_tensor ** read = source(t, s);
            const int j = recomputable(r, *read);
            if (j >= 0) *read = r->copy[j];
        }
        r->placed[top->i] = true;
        r->order[r->n_order++] = t;
        r->recent[r->n_recent++] = top->i;
    }
    free(st);
    return ok;
}

/* Whether backward node c can run now: every gradient it reads exists. */
static bool ready(const struct remat * r, int c) {
    const struct ggml_tensor * t = r->g->nodes[c];
    for (int s = 0; s <= GGML_MAX_SRC; s++) {
        const int b = backward_index(r, *source((struct ggml_tensor *) t, s));
        if (b >= 0 && !r->placed[b] && !r->no_grad[b]) return false;
    }
    return true;
}

/* The readers of backward nodes, and which backward nodes read no gradient. */
static bool link_backward(struct remat * r) {
    for (int i = r->n_fwd; i < r->n; i++) {
        struct ggml_tensor * t = r->g->nodes[i];
        r->no_grad[i] = true;
        for (int s = 0; s <= GGML_MAX_SRC; s++) {
            const int b = backward_index(r, *source(t, s));
            if (b < 0) continue;
            r->no_grad[i] = r->no_grad[i] && r->no_grad[b];
            r->n_users[b]++;
        }
        /* the gradients start at the losses' gradient leaves */
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            const struct ggml_tensor * src = t->src[s];
            if (!src || index_of(r, src) >= 0) continue;
            for (int l = 0; l < r->n_fwd; l++) {
                const struct ggml_tensor * loss = r->g->nodes[l];
                if ((loss->flags & GGML_TENSOR_FLAG_LOSS) && r->g->grads[ggmlr_hash_find(r->g, loss)] == src) r->no_grad[i] = false;
            }
        }
    }
    for (int i = r->n_fwd; i < r->n; i++) {
        r->users[i] = r->n_users[i] ? ggmlr_malloc((size_t) r->n_users[i] * sizeof(int)) : NULL;
        if (r->n_users[i] && !r->users[i]) return false;
        r->n_users[i] = 0;
    }
    for (int i = r->n_fwd; i < r->n; i++)
        for (int s = 0; s <= GGML_MAX_SRC; s++) {
            const int b = backward_index(r, *source(r->g->nodes[i], s));
            if (b >= 0 && (r->n_users[b] == 0 || r->users[b][r->n_users[b] - 1] != i)) r->users[b][r->n_users[b]++] = i;
        }
    return true;
}

static bool schedule(struct remat * r) {
    if (!link_backward(r)) return false;
    for (int b = r->n_fwd; b < r->n; b++) {
        if (r->placed[b] || r->no_grad[b]) continue;  /* no_grad nodes: pulled in by their readers */
        if (!place(r, b)) return false;
        /* then whatever the new gradients make ready, as soon as it is */
        for (int k = 0; k < r->n_recent; k++)
            for (int u = 0; u < r->n_users[r->recent[k]]; u++) {
                const int c = r->users[r->recent[k]][u];
                if (!r->placed[c] && !r->no_grad[c] && ready(r, c) && !place(r, c)) return false;
            }
        r->n_recent = 0;
    }
    for (int b = r->n_fwd; b < r->n; b++) if (!r->placed[b] && !place(r, b)) return false;  /* no_grad nodes nothing reads */
    return true;
}

enum ggml_status ggmlr_recompute_checkpointed(struct ggml_context * ctx, struct ggml_cgraph * g, int n_fwd) {
    bool any = false;
    for (int i = 0; i < n_fwd && !any; i++) any = (g->nodes[i]->flags & GGML_TENSOR_FLAG_CHECKPOINT) != 0;
    if (!any) return GGML_STATUS_SUCCESS;
    const int n = g->n_nodes;
    struct remat r = {.ctx = ctx, .g = g, .n_fwd = n_fwd, .n = n, .index_of_slot = ggmlr_malloc(g->hash_size * sizeof(int)),
                      .copy = ggmlr_calloc((size_t) n_fwd + 1, sizeof(struct ggml_tensor *)),
                      .placed = ggmlr_calloc((size_t) n, sizeof(bool)), .no_grad = ggmlr_calloc((size_t) n, sizeof(bool)),
                      .n_users = ggmlr_calloc((size_t) n, sizeof(int)), .users = ggmlr_calloc((size_t) n, sizeof(int *)),
                      .recent = ggmlr_malloc((size_t) n * sizeof(int)),
                      .order = ggmlr_malloc((size_t) (n + n_fwd) * sizeof(struct ggml_tensor *))};  /* each copied at most once */
    enum ggml_status st = GGML_STATUS_ALLOC_FAILED;
    if (!r.index_of_slot || !r.copy || !r.placed || !r.no_grad || !r.n_users || !r.users || !r.recent || !r.order) {
        ggmlr_set_error("ggml_build_backward_expand: out of memory");
        goto out;
    }
    for (size_t s = 0; s < g->hash_size; s++) r.index_of_slot[s] = -1;
    for (int i = 0; i < n; i++) r.index_of_slot[ggmlr_hash_find(g, g->nodes[i])] = i;
    /* the forward as it was, then the backward rescheduled with the copies it reads */
    memcpy(r.order, g->nodes, (size_t) n_fwd * sizeof *r.order);
    r.n_order = n_fwd;
    /* a failure leaves the backward nodes rewritten: the caller drops them */
    st = GGML_STATUS_FAILED;
    if (!schedule(&r)) goto out;
    if (r.n_order > g->size) {
        ggmlr_set_error("ggml_build_backward_expand: the graph (size %d) has no room for the %d recomputed nodes of the checkpointed segments",
                        g->size, r.n_order - n);
        goto out;
    }
    memcpy(g->nodes, r.order, (size_t) r.n_order * sizeof *r.order);
    g->n_nodes = r.n_order;
    st = GGML_STATUS_SUCCESS;
out:
    for (int i = 0; r.users && i < n; i++) free(r.users[i]);
    free(r.index_of_slot); free(r.copy); free(r.placed); free(r.no_grad); free(r.n_users); free(r.users); free(r.recent); free(r.order);
    return st;
}

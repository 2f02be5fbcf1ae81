/* test_galloc.c -- ggml-alloc.h: the graph allocator against the
 * context-allocated path (bitwise equal results, forward and backward, also
 * through the scheduler, which places graphs with it),
 * memory reuse (a chain's exact peak, less than the sum over a model), no two
 * live tensors sharing bytes, inputs / outputs / leafs left intact, reserve,
 * and the tensor allocator. */
#include "common/test_common.h"

#include "ggml-alloc.h"

#include <stdlib.h>
#include <string.h>

enum { K = 24, N = 7, LAYERS = 4 };

struct model { struct ggml_tensor * x, * w[LAYERS], * b, * mid, * y; };

/* A residual MLP, then a transpose, softmax and RMSNorm: tensors read by
 * one and by two nodes, views, broadcasting. */
static void build(struct ggml_context * ctx, struct model * m) {
    struct ggml_tensor * h = m->x;
    for (int l = 0; l < LAYERS; l++) {
        struct ggml_tensor * a = ggml_add(ctx, ggml_mul_mat(ctx, m->w[l], h), m->b);
        h = ggml_add(ctx, h, ggml_gelu(ctx, a));  /* h is read by the product and by this sum */
        if (l == 1) m->mid = h;
    }
    struct ggml_tensor * s = ggml_soft_max(ctx, ggml_cont(ctx, ggml_transpose(ctx, h)));
    m->y = ggml_rms_norm(ctx, ggml_mul(ctx, s, s), 1e-5f);
}

static void make_leafs(struct ggml_context * ctx, struct model * m) {
    m->x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    for (int l = 0; l < LAYERS; l++) m->w[l] = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, K);
    m->b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, 1);
}

/* The reference's leafs, with random values (parameters for a backward graph). */
static void reference_leafs(struct ggml_context * ctx, struct model * m, bool params) {
    make_leafs(ctx, m);
    tc_fill_uniform(m->x, -1, 1);
    for (int l = 0; l < LAYERS; l++) tc_fill_uniform(m->w[l], -0.3, 0.3);
    tc_fill_uniform(m->b, -0.1, 0.1);
    for (int l = 0; params && l < LAYERS; l++) ggml_set_param(m->w[l]);
    if (params) ggml_set_param(m->b);
}

/* The same leafs in a backend buffer of their own, holding the reference's values. */
static ggml_backend_buffer_t backend_leafs(struct ggml_context * ctx, struct model * m, const struct model * ref, ggml_backend_t be, bool params) {
    make_leafs(ctx, m);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
    ggml_backend_tensor_set(m->x, ref->x->data, 0, ggml_nbytes(ref->x));
    ggml_backend_tensor_set(m->b, ref->b->data, 0, ggml_nbytes(ref->b));
    for (int l = 0; l < LAYERS; l++) ggml_backend_tensor_set(m->w[l], ref->w[l]->data, 0, ggml_nbytes(ref->w[l]));
    for (int l = 0; params && l < LAYERS; l++) ggml_set_param(m->w[l]);
    if (params) ggml_set_param(m->b);
    return buf;
}

static bool same_bytes(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    return a && b && a->data && b->data && ggml_nbytes(a) == ggml_nbytes(b) && memcmp(a->data, b->data, ggml_nbytes(a)) == 0;
}

static bool in_buffer(const struct ggml_tensor * t, ggml_backend_buffer_t buf) {
    const char * base = ggml_backend_buffer_get_base(buf), * d = t->data;
    return d && d >= base && d + ggml_nbytes(t) <= base + ggml_backend_buffer_get_size(buf);
}

/* The tensor whose memory t uses. */
static const struct ggml_tensor * base_of(const struct ggml_tensor * t) { return t->view_src ? t->view_src : t; }

/* Independent liveness: a tensor placed by the allocator lives from the node
 * that computes it (-1 for leafs and inputs) to the last node reading it or
 * one of its views (to the end for leafs, inputs, outputs and results). Two
 * tensors alive at once must not share a byte. Returns the pairs that do. */
static int live_overlaps(const struct ggml_cgraph * g, ggml_backend_buffer_t buf) {
    const int n = ggml_graph_n_nodes(g);
    int n_t = 0, overlaps = 0;
    const struct ggml_tensor ** ts = calloc((size_t) n + 64, sizeof *ts);
    int * first = calloc((size_t) n + 64, sizeof *first), * last = calloc((size_t) n + 64, sizeof *last);
    for (int i = 0; i < n; i++) {
        const struct ggml_tensor * t = ggml_graph_node(g, i);
        if (!t->view_src && in_buffer(t, buf)) { ts[n_t] = t; first[n_t] = (t->flags & GGML_TENSOR_FLAG_INPUT) ? -1 : i; last[n_t] = -2; n_t++; }
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            if (!t->src[s]) continue;
            for (int j = 0; j < n_t; j++) if (ts[j] == base_of(t->src[s])) last[j] = i;
        }
    }
    for (int j = 0; j < n_t; j++) {
        if (last[j] == -2 || (ts[j]->flags & (GGML_TENSOR_FLAG_OUTPUT | GGML_TENSOR_FLAG_INPUT))) last[j] = n;
    }
    for (int a = 0; a < n_t; a++)
        for (int b = a + 1; b < n_t; b++) {
            if (first[a] > last[b] || first[b] > last[a]) continue;
            const char * pa = ts[a]->data, * pb = ts[b]->data;
            if (pa < pb + ggml_nbytes(ts[b]) && pb < pa + ggml_nbytes(ts[a])) overlaps++;
        }
    free(ts);
    free(first);
    free(last);
    return overlaps;
}

static void test_model_forward(ggml_backend_t be) {
    /* reference: a context with memory for everything */
    struct ggml_context * ca = tc_ctx(8);
    struct model ma;
    reference_leafs(ca, &ma, false);
    build(ca, &ma);
    struct ggml_cgraph * ga = ggml_new_graph(ca);
    ggml_build_forward_expand(ga, ma.y);
    tc_compute(ca, ga, 2);

    /* the same with the leafs in a backend buffer and the graph in the allocator's */
    struct ggml_init_params pw = {16 * ggml_tensor_overhead(), NULL, true};
    struct ggml_init_params pg = {256 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
    struct ggml_context * cw = ggml_init(pw), * cg = ggml_init(pg);
    struct model mb;
    ggml_backend_buffer_t wbuf = backend_leafs(cw, &mb, &ma, be, false);
    /* b is a leaf of the graph context (no memory yet), flagged as an input */
    struct ggml_tensor * b_in = ggml_new_tensor_2d(cg, GGML_TYPE_F32, K, 1);
    ggml_set_input(b_in);
    mb.b = b_in;
    build(cg, &mb);
    ggml_set_output(mb.mid);
    struct ggml_cgraph * gb = ggml_new_graph(cg);
    ggml_build_forward_expand(gb, mb.y);

    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    size_t reserved = 0;
    ggml_gallocr_reserve_n_size(galloc, gb, NULL, NULL, &reserved);
    CHECK(reserved > 0 && ggml_gallocr_get_buffer_size(galloc, 0) == 0, "reserve_n_size plans %zu bytes and allocates nothing", reserved);
    CHECK(ggml_gallocr_reserve(galloc, gb) && ggml_gallocr_get_buffer_size(galloc, 0) == reserved, "reserve allocates the planned %zu bytes", reserved);
    CHECK(mb.y->data == NULL && b_in->data == NULL, "reserve leaves the graph without memory");
    if (!CHECK(ggml_gallocr_alloc_graph(galloc, gb), "alloc_graph: %s", ggml_last_error())) goto done;
    CHECK(ggml_gallocr_get_buffer_size(galloc, 0) == reserved, "alloc_graph after reserve does not grow the buffer");
    ggml_backend_tensor_set(b_in, ma.b->data, 0, ggml_nbytes(ma.b));

    /* what it saves: the bytes it placed, tensor by tensor, against its buffer */
    size_t sum = 0;
    int n_placed = 0, outside = 0;
    for (int i = 0; i < ggml_graph_n_nodes(gb); i++) {
        const struct ggml_tensor * t = ggml_graph_node(gb, i);
        if (t->view_src) continue;
        sum += (ggml_nbytes(t) + 63) / 64 * 64;
        n_placed++;
        outside += t->buffer != mb.y->buffer;
    }
    CHECK(outside == 0, "every computed tensor is in the allocator's buffer (%d are not)", outside);
    CHECK(reserved < sum / 2, "memory is reused: buffer %zu bytes, the %d computed tensors take %zu", reserved, n_placed, sum);
    printf("model forward: allocator buffer %zu bytes, computed tensors %zu bytes\n", reserved, sum);
    CHECK(live_overlaps(gb, mb.y->buffer) == 0, "no two live tensors share memory");

    float b_before[K];
    memcpy(b_before, b_in->data, sizeof b_before);
    CHECK(ggml_backend_graph_compute(be, gb) == GGML_STATUS_SUCCESS, "compute: %s", ggml_last_error());
    CHECK(same_bytes(mb.y, ma.y), "the result equals the context-allocated one bit for bit");
    CHECK(same_bytes(mb.mid, ma.mid), "an output in the middle of the graph is not overwritten");
    CHECK(memcmp(b_before, b_in->data, sizeof b_before) == 0, "the input is not overwritten");
    CHECK(same_bytes(mb.x, ma.x), "a leaf of another buffer is not touched");
done:
    ggml_gallocr_free(galloc);
    ggml_backend_buffer_free(wbuf);
    ggml_free(cg);
    ggml_free(cw);
    ggml_free(ca);
}

/* A chain of same-sized results needs exactly two of them at a time: the node
 * being computed and its source. */
static void test_chain_peak(ggml_backend_t be) {
    enum { LEN = 1000, STEPS = 12 };
    struct ggml_init_params pw = {4 * ggml_tensor_overhead(), NULL, true};
    struct ggml_init_params pg = {64 * ggml_tensor_overhead() + 2 * ggml_graph_overhead(), NULL, true};
    struct ggml_context * cw = ggml_init(pw), * cg = ggml_init(pg);
    struct ggml_tensor * x = ggml_new_tensor_1d(cw, GGML_TYPE_F32, LEN);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors(cw, be);
    float xs[LEN];
    double ref[LEN];
    for (int i = 0; i < LEN; i++) { xs[i] = (float) tc_uniform(-2, 2); ref[i] = xs[i]; }
    ggml_backend_tensor_set(x, xs, 0, sizeof xs);
    struct ggml_tensor * y = x;
    for (int s = 0; s < STEPS; s++) {
        y = s % 2 ? ggml_scale(cg, y, 0.5f) : ggml_tanh(cg, y);
        for (int i = 0; i < LEN; i++) ref[i] = s % 2 ? 0.5 * ref[i] : tanh(ref[i]);
    }
    struct ggml_cgraph * g = ggml_new_graph(cg);
    ggml_build_forward_expand(g, y);
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    CHECK(ggml_gallocr_alloc_graph(galloc, g), "alloc_graph of a chain: %s", ggml_last_error());
    const size_t one = (LEN * sizeof(float) + 63) / 64 * 64;
    CHECK(ggml_gallocr_get_buffer_size(galloc, 0) == 2 * one, "a chain of %d results takes 2 x %zu bytes (got %zu)", STEPS, one,
          ggml_gallocr_get_buffer_size(galloc, 0));
    CHECK(ggml_backend_graph_compute(be, g) == GGML_STATUS_SUCCESS, "compute the chain");
    float out[LEN];
    ggml_backend_tensor_get(y, out, 0, sizeof out);
    CHECK_REL(tc_rel_err_f32(out, ref, LEN), 1e-6, "chain against float64");
    CHECK(ggml_backend_tensor_get_checked(x, out, 0, sizeof out) == GGML_STATUS_SUCCESS && memcmp(out, xs, sizeof xs) == 0,
          "the chain's input is intact");

    /* a graph that needs more makes the buffer grow: its leaf and its result */
    struct ggml_tensor * wide = ggml_new_tensor_1d(cg, GGML_TYPE_F32, 4 * LEN);
    struct ggml_cgraph * g2 = ggml_new_graph(cg);
    ggml_build_forward_expand(g2, ggml_sqr(cg, wide));
    const size_t wide_bytes = (4 * LEN * sizeof(float) + 63) / 64 * 64;
    CHECK(ggml_gallocr_alloc_graph(galloc, g2) && ggml_gallocr_get_buffer_size(galloc, 0) == 2 * wide_bytes,
          "a wider graph grows the buffer to %zu bytes (got %zu)", 2 * wide_bytes, ggml_gallocr_get_buffer_size(galloc, 0));
    ggml_gallocr_free(galloc);
    ggml_backend_buffer_free(wbuf);
    ggml_free(cg);
    ggml_free(cw);
}

/* Forward and backward: gradients equal the context-allocated ones bit for bit. */
static struct ggml_tensor * loss_of(struct ggml_context * ctx, struct model * m) {
    build(ctx, m);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_sqr(ctx, m->y));
    ggml_set_loss(loss);
    return loss;
}

static void test_model_backward(ggml_backend_t be, bool via_sched) {
    struct ggml_context * ca = tc_ctx(16);
    struct model ma;
    reference_leafs(ca, &ma, true);
    struct ggml_cgraph * ga = ggml_new_graph_custom(ca, GGML_DEFAULT_GRAPH_SIZE, true);
    ggml_build_forward_expand(ga, loss_of(ca, &ma));
    CHECK(ggml_build_backward_expand(ca, ga, NULL) == GGML_STATUS_SUCCESS, "backward (context): %s", ggml_last_error());
    ggml_graph_reset(ga);
    tc_compute(ca, ga, 2);

    struct ggml_init_params pw = {16 * ggml_tensor_overhead(), NULL, true};
    struct ggml_init_params pg = {1024 * ggml_tensor_overhead() + ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, true), NULL, true};
    struct ggml_context * cw = ggml_init(pw), * cg = ggml_init(pg);
    struct model mb;
    ggml_backend_buffer_t wbuf = backend_leafs(cw, &mb, &ma, be, true);
    struct ggml_cgraph * gb = ggml_new_graph_custom(cg, GGML_DEFAULT_GRAPH_SIZE, true);
    ggml_build_forward_expand(gb, loss_of(cg, &mb));
    CHECK(ggml_build_backward_expand(cg, gb, NULL) == GGML_STATUS_SUCCESS, "backward (allocator): %s", ggml_last_error());

    /* placed by a graph allocator, or by the scheduler (which uses one) */
    ggml_gallocr_t galloc = via_sched ? NULL : ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    ggml_backend_sched_t sched = via_sched ? ggml_backend_sched_new(&be, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, true) : NULL;
    const char * by = via_sched ? "scheduler" : "allocator";
    const bool placed = via_sched ? ggml_backend_sched_alloc_graph(sched, gb) : ggml_gallocr_alloc_graph(galloc, gb);
    if (CHECK(placed, "alloc_graph (backward, %s): %s", by, ggml_last_error())) {
        ggml_graph_reset(gb);
        size_t sum = 0;
        for (int i = 0; i < ggml_graph_n_nodes(gb); i++) {
            const struct ggml_tensor * t = ggml_graph_node(gb, i);
            if (!t->view_src && t->buffer != wbuf) sum += (ggml_nbytes(t) + 63) / 64 * 64;
        }
        const size_t used = via_sched ? ggml_backend_sched_get_buffer_size(sched, be) : ggml_gallocr_get_buffer_size(galloc, 0);
        printf("model forward+backward: %s buffer %zu bytes, computed tensors %zu bytes\n", by, used, sum);
        CHECK(used < sum, "the training graph's memory falls (%s): %zu < %zu bytes", by, used, sum);
        CHECK(live_overlaps(gb, ggml_graph_node(gb, -1)->buffer ? ggml_graph_node(gb, -1)->buffer : wbuf) == 0,
              "no two live tensors of the training graph share memory (%s)", by);
        const enum ggml_status st = via_sched ? ggml_backend_sched_graph_compute(sched, gb) : ggml_backend_graph_compute(be, gb);
        CHECK(st == GGML_STATUS_SUCCESS, "compute (backward, %s): %s", by, ggml_last_error());
        int diff = 0;
        for (int l = 0; l < LAYERS; l++) diff += !same_bytes(ggml_graph_get_grad(gb, mb.w[l]), ggml_graph_get_grad(ga, ma.w[l]));
        diff += !same_bytes(ggml_graph_get_grad(gb, mb.b), ggml_graph_get_grad(ga, ma.b));
        CHECK(diff == 0, "gradients equal the context-allocated ones bit for bit (%s: %d of %d differ)", by, diff, LAYERS + 1);
    }
    ggml_gallocr_free(galloc);
    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(wbuf);
    ggml_free(cg);
    ggml_free(cw);
    ggml_free(ca);
}

static void test_tallocr(ggml_backend_t be) {
    struct ggml_init_params p = {8 * ggml_tensor_overhead(), NULL, true};
    struct ggml_context * ctx = ggml_init(p);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);    /* 20 bytes, padded to 64 */
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 40);   /* 80 bytes, padded to 128 */
    struct ggml_tensor * c = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);   /* 64 bytes */
    struct ggml_tensor * d = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    struct ggml_tensor * v = ggml_view_1d(ctx, c, 4, 8);
    ggml_backend_buffer_t buf = ggml_backend_alloc_buffer(be, 64 + 128 + 64);
    struct ggml_tallocr ta = ggml_tallocr_new(buf);
    CHECK(ta.buffer == buf && ta.base == ggml_backend_buffer_get_base(buf) && ta.alignment == 64 && ta.offset == 0, "tallocr_new");
    const bool ok = ggml_tallocr_alloc(&ta, a) == GGML_STATUS_SUCCESS && ggml_tallocr_alloc(&ta, b) == GGML_STATUS_SUCCESS &&
                    ggml_tallocr_alloc(&ta, c) == GGML_STATUS_SUCCESS;
    const char * base = ta.base;
    CHECK(ok && a->data == base && b->data == base + 64 && c->data == base + 192 && c->buffer == buf,
          "tensors are placed one after another at 64-byte boundaries");
    CHECK(ggml_tallocr_alloc(&ta, d) == GGML_STATUS_ALLOC_FAILED && d->data == NULL && strstr(ggml_last_error(), "does not fit"),
          "a full buffer refuses with a message: %s", ggml_last_error());
    CHECK(ggml_backend_view_init(v) == GGML_STATUS_SUCCESS && (char *) v->data == (char *) c->data + 8 && v->buffer == buf, "view_init");
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

/* Random graphs: a program of ops over a pool of tensors, built twice (in a
 * context with memory, and for the allocator), with tensors read by several
 * nodes, views, zero-sized rows, outputs in the middle. What every result and
 * output holds after the compute must be the same bit for bit. */
enum { PROG_LEN = 40, POOL = 64 };
struct step { int op, a, b; bool output; };

static int random_program(struct step * prog, int64_t * rows) {
    *rows = 1 + tc_randint(0, 3);
    int n = 0, pool = 3;  /* three leafs */
    for (int i = 0; i < PROG_LEN && pool < POOL; i++) {
        struct step st = {tc_randint(0, 6), tc_randint(0, pool - 1), tc_randint(0, pool - 1), tc_randint(0, 9) == 0};
        /* bias towards recent tensors: long live ranges and short ones both occur */
        if (tc_randint(0, 1)) st.a = pool - 1 - tc_randint(0, pool - 1 < 3 ? pool - 1 : 3);
        prog[n++] = st;
        pool++;
    }
    return n;
}

/* Builds the program in ctx over leafs x0..x2 [w, rows]; returns the pool size. */
static int build_program(struct ggml_context * ctx, const struct step * prog, int n, struct ggml_tensor ** pool) {
    int np = 3;
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * a = pool[prog[i].a], * b = pool[prog[i].b], * t = NULL;
        switch (prog[i].op) {
            case 0: t = ggml_add(ctx, a, b); break;
            case 1: t = ggml_mul(ctx, a, b); break;
            case 2: t = ggml_tanh(ctx, a); break;
            case 3: t = ggml_scale(ctx, a, 0.75f); break;
            case 4: t = ggml_sub(ctx, a, ggml_sqr(ctx, b)); break;
            case 5: t = ggml_add(ctx, ggml_view_2d(ctx, a, a->ne[0], a->ne[1], a->nb[1], 0), b); break;  /* a view read, then summed */
            default: t = ggml_neg(ctx, ggml_add_inplace(ctx, ggml_dup(ctx, a), b)); break;  /* an in-place node (a view of its result) */
        }
        if (prog[i].output) ggml_set_output(t);
        pool[np++] = t;
    }
    return np;
}

static void test_random_graphs(ggml_backend_t be) {
    static const int64_t widths[] = {0, 1, 3, 17};
    int mismatches = 0, overlaps = 0, graphs = 0, failures = 0;
    size_t planned = 0, summed = 0;
    for (int seed = 0; seed < 60; seed++) {
        tc_seed(1000 + (uint64_t) seed);
        struct step prog[PROG_LEN];
        int64_t rows;
        const int n = random_program(prog, &rows);
        const int64_t w = widths[seed % 4];
        struct ggml_tensor * pa[POOL + 8], * pb[POOL + 8];
        struct ggml_context * ca = tc_ctx(4);
        struct ggml_init_params pg = {(8 * POOL) * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
        struct ggml_context * cg = ggml_init(pg);
        for (int i = 0; i < 3; i++) {
            pa[i] = ggml_new_tensor_2d(ca, GGML_TYPE_F32, w, rows);
            tc_fill_uniform(pa[i], -1, 1);
            pb[i] = ggml_new_tensor_2d(cg, GGML_TYPE_F32, w, rows);
            if (i == 0) ggml_set_input(pb[i]);
        }
        const int np = build_program(ca, prog, n, pa);
        build_program(cg, prog, n, pb);
        struct ggml_cgraph * ga = ggml_new_graph(ca), * gb = ggml_new_graph(cg);
        for (int i = 3; i < np; i++) { ggml_build_forward_expand(ga, pa[i]); ggml_build_forward_expand(gb, pb[i]); }
        tc_compute(ca, ga, 2);
        ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
        if (!ggml_gallocr_alloc_graph(galloc, gb)) { failures++; goto next; }
        for (int i = 0; i < 3; i++) ggml_backend_tensor_set(pb[i], pa[i]->data, 0, ggml_nbytes(pa[i]));
        overlaps += live_overlaps(gb, pb[np - 1]->buffer ? pb[np - 1]->buffer : pb[0]->buffer);
        if (ggml_backend_graph_compute(be, gb) != GGML_STATUS_SUCCESS) { failures++; goto next; }
        /* every node no other node reads, and every output, as the reference */
        for (int i = 0; i < ggml_graph_n_nodes(gb); i++) {
            const struct ggml_tensor * t = ggml_graph_node(gb, i);
            bool read = false;
            for (int j = i + 1; j < ggml_graph_n_nodes(gb) && !read; j++)
                for (int s = 0; s < GGML_MAX_SRC; s++) read |= ggml_graph_node(gb, j)->src[s] && base_of(ggml_graph_node(gb, j)->src[s]) == base_of(t);
            if (!t->view_src) summed += (ggml_nbytes(t) + 63) / 64 * 64;
            if (read && !(t->flags & GGML_TENSOR_FLAG_OUTPUT)) continue;
            mismatches += !(ggml_nbytes(t) == 0 || same_bytes(t, ggml_graph_node(ga, i)));
        }
        planned += ggml_gallocr_get_buffer_size(galloc, 0);
        graphs++;
    next:
        ggml_gallocr_free(galloc);
        ggml_free(cg);
        ggml_free(ca);
    }
    CHECK(failures == 0, "%d of 60 random graphs failed to allocate or compute: %s", failures, ggml_last_error());
    CHECK(overlaps == 0, "random graphs: %d pairs of live tensors share memory", overlaps);
    CHECK(mismatches == 0, "random graphs: %d results or outputs differ from the context-allocated ones", mismatches);
    printf("random graphs: %d computed, allocator buffers %zu bytes in all, their computed tensors %zu\n", graphs, planned, summed);
}

static void test_refusals(void) {
    CHECK(ggml_gallocr_new(NULL) == NULL && ggml_last_error()[0], "gallocr_new without a CPU buffer type fails with a message");
    ggml_backend_buffer_type_t two[2] = {ggml_backend_cpu_buffer_type(), ggml_backend_cpu_buffer_type()};
    CHECK(ggml_gallocr_new_n(two, 2) == NULL && ggml_last_error()[0], "gallocr_new_n with two buffers is refused");
    CHECK(!ggml_gallocr_alloc_graph(NULL, NULL) && !ggml_gallocr_reserve(NULL, NULL), "NULL allocator or graph");
    ggml_gallocr_t ga = ggml_gallocr_new_n(two, 1);
    struct ggml_init_params p = {8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
    struct ggml_context * ctx = ggml_init(p);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, ggml_sqr(ctx, x));
    const int bad_ids[2] = {1, 1};
    CHECK(!ggml_gallocr_reserve_n(ga, g, bad_ids, NULL) && strstr(ggml_last_error(), "buffer 1"), "a second buffer id is refused");
    CHECK(ggml_gallocr_get_buffer_size(ga, 1) == 0, "buffer 1 has size 0");
    ggml_gallocr_free(ga);
    ggml_gallocr_free(NULL);
    ggml_free(ctx);
}

int main(void) {
    tc_seed(21);
    ggml_backend_t be = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(be, 2);
    test_model_forward(be);
    test_chain_peak(be);
    test_model_backward(be, false);
    test_model_backward(be, true);
    test_tallocr(be);
    test_random_graphs(be);
    test_refusals();
    ggml_backend_free(be);
    return tc_finish("galloc");
}

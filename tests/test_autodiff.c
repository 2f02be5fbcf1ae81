/* test_autodiff.c -- the semantics of ggml_build_backward_expand around the
 * rules (upstream ggml's): gradients start at 0 until ggml_graph_reset, they
 * accumulate over computes, reset zeroes them; and every refusal leaves the
 * graph exactly as it was and still computable. Expected values are closed
 * forms: loss = sum(x^2 * W) has gradient 2 x W. */
#include "common/test_common.h"

#include "ggml-cpu.h"
#include "core/op_list.h"  /* white-box: the precision a FLASH_ATTN_BACK node carries */

#include <stdlib.h>
#include <string.h>

#define N 12  /* elements of x: [4, 3] */

struct setup {
    struct ggml_context * ctx;
    struct ggml_tensor * x, * w, * sq, * loss;
    struct ggml_cgraph * g;
};

/* loss = sum(sqr(x) * w), forward graph built, gradients enabled, no backward yet */
static struct setup make_setup(void) {
    struct setup s;
    s.ctx = tc_ctx(16);
    s.x = ggml_new_tensor_2d(s.ctx, GGML_TYPE_F32, 4, 3);
    s.w = ggml_new_tensor_2d(s.ctx, GGML_TYPE_F32, 4, 3);
    tc_fill_uniform(s.x, -1, 1);
    tc_fill_uniform(s.w, -1, 1);
    ggml_set_name(s.x, "x");
    ggml_set_param(s.x);
    s.sq = ggml_sqr(s.ctx, s.x);
    s.loss = ggml_sum(s.ctx, ggml_mul(s.ctx, s.sq, s.w));
    ggml_set_loss(s.loss);
    s.g = ggml_new_graph_custom(s.ctx, 256, true);
    ggml_build_forward_expand(s.g, s.loss);
    return s;
}

static double loss_ref(const struct setup * s) {
    double l = 0;
    for (int i = 0; i < N; i++) { const double x = ((float *) s->x->data)[i]; l += x * x * ((float *) s->w->data)[i]; }
    return l;
}

/* max |grad - k * 2 x w| over the elements of t */
static double grad_err(const struct setup * s, const struct ggml_tensor * t, double k) {
    double e = 0;
    for (int i = 0; i < N; i++) {
        const double want = k * 2.0 * ((float *) s->x->data)[i] * ((float *) s->w->data)[i];
        const double d = fabs(tc_get(t, i) - want);
        e = d > e || d != d ? d : e;
    }
    return e;
}

static bool all_zero(const struct ggml_tensor * t) {
    for (int64_t i = 0; i < ggml_nelements(t); i++) if (tc_get(t, i) != 0.0) return false;
    return true;
}

/* the same nodes in the same order */
struct snapshot { int n; struct ggml_tensor * nodes[256]; };
static struct snapshot snap(const struct ggml_cgraph * g) {
    struct snapshot s = {ggml_graph_n_nodes(g), {0}};
    for (int i = 0; i < s.n && i < 256; i++) s.nodes[i] = ggml_graph_node(g, i);
    return s;
}
static bool same(const struct snapshot * a, const struct ggml_cgraph * g) {
    const struct snapshot b = snap(g);
    return a->n == b.n && memcmp(a->nodes, b.nodes, sizeof a->nodes) == 0;
}

static void test_reset_and_accumulation(void) {
    struct setup s = make_setup();
    const int n_fwd = ggml_graph_n_nodes(s.g);
    CHECK(ggml_build_backward_expand(s.ctx, s.g, NULL) == GGML_STATUS_SUCCESS, "backward build: %s", ggml_last_error());
    CHECK(ggml_graph_n_nodes(s.g) > n_fwd, "the backward pass adds nodes");
    struct ggml_tensor * gx = ggml_graph_get_grad(s.g, s.x);
    if (!CHECK(gx != NULL, "x has a gradient")) { ggml_free(s.ctx); return; }
    CHECK(ggml_are_same_shape(gx, s.x) && gx->type == GGML_TYPE_F32, "the gradient is shaped like x");

    tc_compute(s.ctx, s.g, 2);
    CHECK(fabs(tc_get(s.loss, 0) - loss_ref(&s)) < 1e-5, "the loss is computed (%g vs %g)", tc_get(s.loss, 0), loss_ref(&s));
    CHECK(all_zero(gx), "without ggml_graph_reset the gradient is 0 (loss gradient starts at 0)");

    ggml_graph_reset(s.g);
    CHECK(all_zero(gx), "ggml_graph_reset zeroes the accumulated gradient");
    tc_compute(s.ctx, s.g, 2);
    CHECK(grad_err(&s, gx, 1) < 1e-6, "after reset: gradient 2 x w (max err %g)", grad_err(&s, gx, 1));
    /* intermediate gradients are there too: d loss / d sqr(x) = w */
    struct ggml_tensor * gsq = ggml_graph_get_grad(s.g, s.sq);
    if (CHECK(gsq != NULL, "intermediate node sqr(x) has a gradient")) {
        double e = 0;
        for (int i = 0; i < N; i++) e = fmax(e, fabs(tc_get(gsq, i) - ((float *) s.w->data)[i]));
        CHECK(e < 1e-6, "gradient of sqr(x) is w (max err %g)", e);
    }

    tc_compute(s.ctx, s.g, 2);
    CHECK(grad_err(&s, gx, 2) < 1e-6, "computing again without reset accumulates: 2 * (2 x w) (max err %g)", grad_err(&s, gx, 2));
    tc_compute(s.ctx, s.g, 1);
    CHECK(grad_err(&s, gx, 3) < 1e-6, "and again: 3 * (2 x w) (max err %g)", grad_err(&s, gx, 3));

    ggml_graph_reset(s.g);
    CHECK(all_zero(gx), "reset zeroes again");
    tc_compute(s.ctx, s.g, 3);
    CHECK(grad_err(&s, gx, 1) < 1e-6, "after the second reset: 2 x w again (max err %g)", grad_err(&s, gx, 1));

    /* tensors outside the graph, and graphs without gradients, have none */
    struct ggml_tensor * other = ggml_new_tensor_1d(s.ctx, GGML_TYPE_F32, 3);
    CHECK(ggml_graph_get_grad(s.g, other) == NULL, "get_grad of a tensor not in the graph is NULL");
    CHECK(ggml_graph_get_grad(s.g, s.w) == NULL, "a constant input (not a param) has no gradient");
    struct ggml_cgraph * fwd = ggml_new_graph(s.ctx);
    ggml_build_forward_expand(fwd, s.loss);
    CHECK(ggml_graph_get_grad(fwd, s.x) == NULL, "get_grad on a graph without gradients is NULL");
    ggml_free(s.ctx);
}

static void test_build_errors(void) {
    /* a graph created without gradients */
    {
        struct setup s = make_setup();
        struct ggml_cgraph * g = ggml_new_graph_custom(s.ctx, 256, false);
        ggml_build_forward_expand(g, s.loss);
        const struct snapshot before = snap(g);
        ggml_clear_error();
        CHECK(ggml_build_backward_expand(s.ctx, g, NULL) != GGML_STATUS_SUCCESS, "backward on a graph without grads fails");
        CHECK(strstr(ggml_last_error(), "without gradients") != NULL, "... with a message: '%s'", ggml_last_error());
        CHECK(same(&before, g), "... and leaves the graph unchanged");
        ggml_free(s.ctx);
    }
    /* ggml_set_loss on a non-scalar */
    {
        struct ggml_context * ctx = tc_ctx(4);
        struct ggml_tensor * v = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
        ggml_clear_error();
        ggml_set_loss(v);
        CHECK(ggml_last_error()[0] != '\0', "set_loss of a [3] tensor sets a message");
        CHECK(!(v->flags & GGML_TENSOR_FLAG_LOSS), "... and does not mark it as a loss");
        struct ggml_tensor * h = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 1);
        ggml_clear_error();
        ggml_set_loss(h);
        CHECK(ggml_last_error()[0] != '\0' && !(h->flags & GGML_TENSOR_FLAG_LOSS), "an F16 scalar is not a loss either");
        ggml_free(ctx);
    }
    /* no loss */
    {
        struct ggml_context * ctx = tc_ctx(4);
        struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
        ggml_set_param(x);
        struct ggml_tensor * y = ggml_sum(ctx, ggml_sqr(ctx, x));
        struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, true);
        ggml_build_forward_expand(g, y);
        const struct snapshot before = snap(g);
        ggml_clear_error();
        CHECK(ggml_build_backward_expand(ctx, g, NULL) != GGML_STATUS_SUCCESS, "backward without a loss fails");
        CHECK(strstr(ggml_last_error(), "loss") != NULL, "... with a message about the loss: '%s'", ggml_last_error());
        CHECK(same(&before, g), "... and leaves the graph unchanged");
        /* fixing the problem then works on the same graph */
        ggml_set_loss(y);
        CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "after set_loss the same graph builds: %s", ggml_last_error());
        ggml_free(ctx);
    }
    /* building backward twice */
    {
        struct setup s = make_setup();
        CHECK(ggml_build_backward_expand(s.ctx, s.g, NULL) == GGML_STATUS_SUCCESS, "first backward build");
        struct ggml_tensor * gx = ggml_graph_get_grad(s.g, s.x);
        const struct snapshot before = snap(s.g);
        ggml_clear_error();
        CHECK(ggml_build_backward_expand(s.ctx, s.g, NULL) != GGML_STATUS_SUCCESS, "a second backward build fails");
        CHECK(ggml_last_error()[0] != '\0', "... with a message");
        CHECK(same(&before, s.g) && ggml_graph_get_grad(s.g, s.x) == gx, "... leaving graph and gradients as they were");
        ggml_graph_reset(s.g);
        tc_compute(s.ctx, s.g, 2);
        CHECK(gx && grad_err(&s, gx, 1) < 1e-6, "... and the gradient is still right (not doubled)");
        ggml_free(s.ctx);
    }
}

/* A loss that depends on a param only through FLASH_ATTN_BACK, which has no
 * backward: the build is refused and the graph stays as it was. With one key
 * (M = 1) the softmax is constant 1, so the packed result is known exactly:
 * dq = 0, dk = 0, dv[j] = sum_n d[j, 0, n]. */
static void test_flash_attn_back_refusal(void) {
    struct ggml_context * ctx = tc_ctx(16);
    const int DK = 4, NQ = 3;
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DK, NQ, 1, 1);
    struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DK, 1, 1, 1);
    struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DK, 1, 1, 1);
    struct ggml_tensor * d = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, DK, 1, NQ, 1);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);
    tc_fill_uniform(q, -1, 1); tc_fill_uniform(k, -1, 1); tc_fill_uniform(v, -1, 1); tc_fill_uniform(d, -1, 1); tc_fill_uniform(x, -1, 1);
    ggml_set_param(q);
    ggml_set_param(x);
    struct ggml_tensor * fab = ggml_flash_attn_back(ctx, q, k, v, NULL, d, 0.5f);
    if (!CHECK(fab != NULL, "flash_attn_back: %s", ggml_last_error())) { ggml_free(ctx); return; }
    struct ggml_tensor * w = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, fab->ne);
    tc_fill_uniform(w, -1, 1);
    struct ggml_tensor * loss = ggml_add(ctx, ggml_sum(ctx, ggml_mul(ctx, fab, w)), ggml_sum(ctx, ggml_sqr(ctx, x)));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 256, true);
    ggml_build_forward_expand(g, loss);
    const struct snapshot before = snap(g);
    ggml_clear_error();
    CHECK(ggml_build_backward_expand(ctx, g, NULL) != GGML_STATUS_SUCCESS, "backward through FLASH_ATTN_BACK is refused");
    CHECK(strstr(ggml_last_error(), "FLASH_ATTN_BACK") != NULL, "... naming the op: '%s'", ggml_last_error());
    CHECK(same(&before, g), "... and the graph is unchanged (%d nodes, was %d)", ggml_graph_n_nodes(g), before.n);
    CHECK(ggml_graph_get_grad(g, x) == NULL && ggml_graph_get_grad(g, q) == NULL, "... and has no gradients");
    /* the forward still computes, and right */
    tc_poison(fab);
    tc_compute(ctx, g, 2);
    const int64_t off_k = (DK * NQ * 4 + 15) / 16 * 16 / 4, off_v = off_k + (DK * 4 + 15) / 16 * 16 / 4;
    double want = 0;
    for (int i = 0; i < 5; i++) want += (double) ggml_get_f32_1d(x, i) * ggml_get_f32_1d(x, i);
    for (int64_t i = 0; i < ggml_nelements(fab); i++) {
        double f = 0;  /* dq, dk, padding: 0 */
        if (i >= off_v && i < off_v + DK)
            for (int n = 0; n < NQ; n++) f += ggml_get_f32_nd(d, (int) (i - off_v), 0, n, 0);
        want += f * ggml_get_f32_1d(w, i);
    }
    CHECK(fabs(tc_get(loss, 0) - want) < 1e-5, "forward after the refusal: loss %g, want %g", tc_get(loss, 0), want);
    ggml_free(ctx);
}

/* grad_accs: the caller's own accumulator tensors, indexed like the graph's nodes */
static void test_user_grad_accs(void) {
    struct setup s = make_setup();
    const int n = ggml_graph_n_nodes(s.g);
    struct ggml_tensor ** accs = calloc((size_t) n, sizeof *accs);
    int ix = -1;
    for (int i = 0; i < n; i++) if (ggml_graph_node(s.g, i) == s.x) ix = i;
    if (!CHECK(ix >= 0, "the param x is a node of the graph")) { free(accs); ggml_free(s.ctx); return; }

    /* a wrong accumulator is refused and changes nothing */
    accs[ix] = ggml_new_tensor_2d(s.ctx, GGML_TYPE_F32, 3, 4);
    const struct snapshot before = snap(s.g);
    ggml_clear_error();
    CHECK(ggml_build_backward_expand(s.ctx, s.g, accs) != GGML_STATUS_SUCCESS, "a grad_acc of the wrong shape is refused");
    CHECK(ggml_last_error()[0] != '\0' && same(&before, s.g), "... with a message, graph unchanged");

    struct ggml_tensor * mine = ggml_new_tensor_2d(s.ctx, GGML_TYPE_F32, 4, 3);
    ggml_set_f32(mine, 123.0f);
    accs[ix] = mine;
    CHECK(ggml_build_backward_expand(s.ctx, s.g, accs) == GGML_STATUS_SUCCESS, "backward with grad_accs: %s", ggml_last_error());
    struct ggml_tensor * gx = ggml_graph_get_grad(s.g, s.x);
    CHECK(gx != NULL && gx->data == mine->data, "the gradient lives in the caller's tensor");
    CHECK(ggml_graph_get_grad_acc(s.g, s.x) == gx, "get_grad_acc returns the accumulator");
    ggml_graph_reset(s.g);
    CHECK(all_zero(mine), "reset zeroes the caller's accumulator");
    tc_compute(s.ctx, s.g, 2);
    CHECK(grad_err(&s, mine, 1) < 1e-6, "the caller's tensor holds 2 x w");
    tc_compute(s.ctx, s.g, 2);
    CHECK(grad_err(&s, mine, 2) < 1e-6, "and accumulates");
    free(accs);
    ggml_free(s.ctx);
}

/* A refusal that comes late, after gradients of earlier nodes were already
 * added to the graph (a bad accumulator for the second param): everything
 * the failed call added is gone, and a correct retry works. */
static void test_late_failure_rolls_back(void) {
    struct ggml_context * ctx = tc_ctx(16);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 6);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 6);
    tc_fill_uniform(a, -1, 1);
    tc_fill_uniform(b, -1, 1);
    ggml_set_param(a);
    ggml_set_param(b);
    /* loss = sum(sqr(a)) + sum(b * sqr(a)): a and sqr(a) come before b in the node order */
    struct ggml_tensor * sa = ggml_sqr(ctx, a);
    struct ggml_tensor * loss = ggml_add(ctx, ggml_sum(ctx, sa), ggml_sum(ctx, ggml_mul(ctx, b, sa)));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 256, true);
    ggml_build_forward_expand(g, loss);
    const int n = ggml_graph_n_nodes(g);
    int ia = -1, ib = -1;
    for (int i = 0; i < n; i++) {
        if (ggml_graph_node(g, i) == a) ia = i;
        if (ggml_graph_node(g, i) == b) ib = i;
    }
    if (!CHECK(ia >= 0 && ib > ia + 1, "node order a (%d) ... b (%d)", ia, ib)) { ggml_free(ctx); return; }
    struct ggml_tensor ** accs = calloc((size_t) n, sizeof *accs);
    accs[ib] = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 6);   /* not F32: refused when b's turn comes */
    const struct snapshot before = snap(g);
    ggml_clear_error();
    CHECK(ggml_build_backward_expand(ctx, g, accs) != GGML_STATUS_SUCCESS, "a bad accumulator for the later param is refused");
    CHECK(ggml_last_error()[0] != '\0', "... with a message");
    CHECK(same(&before, g), "... and the nodes added before the refusal are gone (%d nodes, was %d)", ggml_graph_n_nodes(g), before.n);
    CHECK(ggml_graph_get_grad(g, a) == NULL && ggml_graph_get_grad(g, sa) == NULL, "... with no gradients left behind");
    tc_compute(ctx, g, 2);   /* the forward graph still computes */
    double want = 0;
    for (int i = 0; i < 6; i++) {
        const double x = ggml_get_f32_1d(a, i);
        want += x * x * (1.0 + ggml_get_f32_1d(b, i));
    }
    CHECK(fabs(tc_get(loss, 0) - want) < 1e-5, "the forward after the refusal is right");
    accs[ib] = NULL;
    CHECK(ggml_build_backward_expand(ctx, g, accs) == GGML_STATUS_SUCCESS, "a correct retry builds: %s", ggml_last_error());
    ggml_graph_reset(g);
    tc_compute(ctx, g, 2);
    double e = 0;
    for (int i = 0; i < 6; i++) {
        const double x = ggml_get_f32_1d(a, i), y = ggml_get_f32_1d(b, i);
        e = fmax(e, fabs(tc_get(ggml_graph_get_grad(g, a), i) - 2 * x * (1 + y)));
        e = fmax(e, fabs(tc_get(ggml_graph_get_grad(g, b), i) - x * x));
    }
    CHECK(e < 1e-6, "and its gradients are right (max err %g)", e);
    free(accs);
    ggml_free(ctx);
}

/* "Gradients are 0 until ggml_graph_reset" must not rely on zeroed memory:
 * a context on a caller's buffer full of garbage behaves the same. */
static void test_dirty_context_memory(void) {
    const size_t size = 4 << 20;
    void * mem = malloc(size);
    memset(mem, 0x7f, size);   /* 0x7f7f7f7f is a large finite float */
    struct ggml_init_params p = {size, mem, false};
    struct ggml_context * ctx = ggml_init(p);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);
    tc_fill_uniform(x, -1, 1);
    ggml_set_param(x);
    struct ggml_tensor * sq = ggml_sqr(ctx, x);
    struct ggml_tensor * loss = ggml_sum(ctx, sq);
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(g, loss);
    CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "backward in a dirty context: %s", ggml_last_error());
    tc_compute(ctx, g, 2);
    struct ggml_tensor * gx = ggml_graph_get_grad(g, x);
    CHECK(gx && all_zero(gx), "without reset the gradient is 0 even on dirty memory");
    CHECK(ggml_graph_get_grad(g, sq) && all_zero(ggml_graph_get_grad(g, sq)), "and so is an intermediate gradient");
    ggml_graph_reset(g);
    tc_compute(ctx, g, 2);
    double e = 0;
    for (int i = 0; i < 5; i++) e = fmax(e, fabs(tc_get(gx, i) - 2.0 * ggml_get_f32_1d(x, i)));
    CHECK(gx && e < 1e-6, "after reset: 2x (max err %g)", e);
    ggml_free(ctx);
    free(mem);
}

/* two params, one not reaching the loss; a loss on a longer chain with two uses */
static void test_params_and_paths(void) {
    struct ggml_context * ctx = tc_ctx(16);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);
    tc_fill_uniform(a, -1, 1);
    tc_fill_uniform(b, -1, 1);
    ggml_set_param(a);
    ggml_set_param(b);
    struct ggml_tensor * unused = ggml_sqr(ctx, b);
    /* loss = sum(a*a) + sum(3a) */
    struct ggml_tensor * loss = ggml_add(ctx, ggml_sum(ctx, ggml_mul(ctx, a, a)), ggml_sum(ctx, ggml_scale(ctx, a, 3.0f)));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 128, true);
    ggml_build_forward_expand(g, loss);
    ggml_build_forward_expand(g, unused);
    CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "backward: %s", ggml_last_error());
    ggml_graph_reset(g);
    tc_compute(ctx, g, 2);
    struct ggml_tensor * ga = ggml_graph_get_grad(g, a), * gb = ggml_graph_get_grad(g, b);
    double e = 0;
    for (int i = 0; i < 5; i++) e = fmax(e, fabs(tc_get(ga, i) - (2.0 * ggml_get_f32_1d(a, i) + 3.0)));
    CHECK(ga && e < 1e-6, "gradient 2a + 3 from two paths (max err %g)", e);
    CHECK(gb == NULL || all_zero(gb), "a param that does not reach the loss has no (or a zero) gradient");
    ggml_free(ctx);
}

/* y = x + x seen through a view, loss = sum(view * w): y's gradient is w in
 * the view's region (autodiff builds it as a sum it may add into in place)
 * and is handed to x twice; x's is 2 w there. Both must read so after the
 * compute: adding y's gradient to itself in y's own memory would show here. */
static void test_view_gradient_handed_on(void) {
    struct ggml_context * ctx = tc_ctx(16);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10);
    struct ggml_tensor * w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    tc_fill_uniform(x, -1, 1);
    tc_fill_uniform(w, -1, 1);
    ggml_set_param(x);
    struct ggml_tensor * y = ggml_add(ctx, x, x);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, ggml_view_1d(ctx, y, 4, 3 * sizeof(float)), w));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 128, true);
    ggml_build_forward_expand(g, loss);
    CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "backward: %s", ggml_last_error());
    ggml_graph_reset(g);
    tc_compute(ctx, g, 2);
    struct ggml_tensor * gx = ggml_graph_get_grad(g, x), * gy = ggml_graph_get_grad(g, y);
    double ex = 0, ey = 0;
    for (int i = 0; i < 10; i++) {
        const double wi = i >= 3 && i < 7 ? ggml_get_f32_1d(w, i - 3) : 0.0;
        ex = fmax(ex, fabs(tc_get(gx, i) - 2.0 * wi));
        ey = fmax(ey, fabs(tc_get(gy, i) - wi));
    }
    CHECK(gx && ex == 0.0, "x's gradient is 2 w in the view's region (max err %g)", ex);
    CHECK(gy && ey == 0.0, "y's gradient is w in the view's region, after x's was summed from it (max err %g)", ey);
    ggml_free(ctx);
}

/* loss = sum(mul_mat(W, x)) + sum(out_prod(u, v)), both at GGML_PREC_BF16:
 * every product autodiff builds for them has the forward's precision, and
 * the gradients are the closed forms dW[k, m] = sum_n x[k, n], du[i, k] =
 * sum_j v[j, k] (within bf16 rounding, 2^-8 relative, on a bf16 path) */
static void test_products_keep_precision(void) {
    struct ggml_context * ctx = tc_ctx(16);
    struct ggml_tensor * W = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 40, 36), * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 40, 33);
    struct ggml_tensor * u = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 34, 20), * v = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 35, 20);
    struct ggml_tensor * all[] = {W, x, u, v};
    for (int i = 0; i < 4; i++) { tc_fill_uniform(all[i], -1, 1); ggml_set_param(all[i]); }
    struct ggml_tensor * y = ggml_mul_mat(ctx, W, x), * z = ggml_out_prod(ctx, u, v);
    ggml_mul_mat_set_prec(y, GGML_PREC_BF16);
    ggml_mul_mat_set_prec(z, GGML_PREC_BF16);
    CHECK(ggml_mul_mat_get_prec(y) == GGML_PREC_BF16 && ggml_mul_mat_get_prec(z) == GGML_PREC_BF16, "set_prec is read back");
    struct ggml_tensor * loss = ggml_add(ctx, ggml_sum(ctx, y), ggml_sum(ctx, z));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 256, true);
    ggml_build_forward_expand(g, loss);
    CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "backward: %s", ggml_last_error());
    int products = 0, bf16 = 0;
    for (int i = 0; i < ggml_graph_n_nodes(g); i++) {
        struct ggml_tensor * t = ggml_graph_node(g, i);
        if (t->op != GGML_OP_MUL_MAT && t->op != GGML_OP_OUT_PROD) continue;
        products++;
        bf16 += ggml_mul_mat_get_prec(t) == GGML_PREC_BF16;
    }
    CHECK(products == 6 && bf16 == 6, "6 products (2 forward, 4 backward), all at GGML_PREC_BF16: %d of %d", bf16, products);
    ggml_graph_reset(g);
    tc_compute(ctx, g, 2);
    const double tol = strcmp(ggml_cpu_bf16_name(), "f32") == 0 ? 1e-5 : 1e-2;
    double e = 0, m = 0;
    struct ggml_tensor * gW = ggml_graph_get_grad(g, W), * gu = ggml_graph_get_grad(g, u);
    for (int k = 0; k < 40; k++) {
        double s = 0;
        for (int n = 0; n < 33; n++) s += ggml_get_f32_nd(x, k, n, 0, 0);
        for (int mm = 0; mm < 36; mm++) e = fmax(e, fabs(ggml_get_f32_nd(gW, k, mm, 0, 0) - s)), m = fmax(m, fabs(s));
    }
    for (int k = 0; k < 20; k++) {
        double s = 0;
        for (int j = 0; j < 35; j++) s += ggml_get_f32_nd(v, j, k, 0, 0);
        for (int i = 0; i < 34; i++) e = fmax(e, fabs(ggml_get_f32_nd(gu, i, k, 0, 0) - s)), m = fmax(m, fabs(s));
    }
    CHECK(e <= tol * m, "gradients of W and u against their closed forms: max error %g of %g (%s path)", e, m, ggml_cpu_bf16_name());
    /* a precision outside the enum, or a node that is no product: a message, nothing changed */
    ggml_mul_mat_set_prec(y, (enum ggml_prec) 3);
    CHECK(ggml_last_error()[0] != '\0' && ggml_mul_mat_get_prec(y) == GGML_PREC_BF16, "set_prec 3: refused, the node keeps BF16");
    ggml_free(ctx);
}

/* attention at GGML_PREC_BF16: the backward autodiff builds (FLASH_ATTN_BACK)
 * carries the forward's precision; a precision outside the enum is refused */
static void test_attention_keeps_precision(void) {
    struct ggml_context * ctx = tc_ctx(16);
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 16, 5, 2, 1), * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 16, 7, 1, 1);
    struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 7, 1, 1);
    struct ggml_tensor * all[] = {q, k, v};
    for (int i = 0; i < 3; i++) { tc_fill_uniform(all[i], -1, 1); ggml_set_param(all[i]); }
    struct ggml_tensor * y = ggml_flash_attn_ext(ctx, q, k, v, NULL, 0.25f, 0.0f, 0.0f);
    CHECK(ggml_flash_attn_ext_get_prec(y) == GGML_PREC_DEFAULT, "attention starts at GGML_PREC_DEFAULT");
    ggml_flash_attn_ext_set_prec(y, GGML_PREC_BF16);
    CHECK(ggml_flash_attn_ext_get_prec(y) == GGML_PREC_BF16, "set_prec is read back");
    struct ggml_tensor * loss = ggml_sum(ctx, y);
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 256, true);
    ggml_build_forward_expand(g, loss);
    CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "backward: %s", ggml_last_error());
    int backs = 0, bf16 = 0;
    for (int i = 0; i < ggml_graph_n_nodes(g); i++) {
        const struct ggml_tensor * t = ggml_graph_node(g, i);
        if (t->op != GGML_OP_FLASH_ATTN_BACK) continue;
        backs++;
        bf16 += ggmlr_flash_attn_prec_decode(t) == GGML_PREC_BF16;
    }
    CHECK(backs == 1 && bf16 == 1, "one FLASH_ATTN_BACK, at GGML_PREC_BF16: %d of %d", bf16, backs);
    ggml_clear_error();
    ggml_flash_attn_ext_set_prec(y, (enum ggml_prec) 3);
    CHECK(ggml_last_error()[0] != '\0' && ggml_flash_attn_ext_get_prec(y) == GGML_PREC_BF16, "set_prec 3: refused, the node keeps BF16");
    ggml_clear_error();
    ggml_flash_attn_ext_set_prec(loss, GGML_PREC_BF16);
    CHECK(ggml_last_error()[0] != '\0', "set_prec of a node that is no attention: refused");
    ggml_clear_error();
    struct ggml_tensor * back = ggml_flash_attn_back(ctx, q, k, v, NULL, y, 0.25f);
    ggml_flash_attn_ext_set_prec(back, GGML_PREC_BF16);
    CHECK(ggml_last_error()[0] == '\0' && ggml_flash_attn_ext_get_prec(back) == GGML_PREC_BF16, "a flash_attn_back node takes it too");
    ggml_clear_error();
    ggml_free(ctx);
}

int main(void) {
    tc_seed(3);
    test_products_keep_precision();
    test_attention_keeps_precision();
    test_reset_and_accumulation();
    test_build_errors();
    test_flash_attn_back_refusal();
    test_user_grad_accs();
    test_late_failure_rolls_back();
    test_dirty_context_memory();
    test_params_and_paths();
    test_view_gradient_handed_on();
    return tc_finish("autodiff");
}

/* harness.c -- the checks every row of the op table gets. */
#include "ops/harness.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* Thread counts compared bitwise: all of them on a row's first layout; on
 * its other layouts 1 and 3 (an uneven split), since 8 threads on a
 * machine of few cores mostly wait at barriers. */
static const int k_threads[] = {1, 3, 2, 8};
enum { N_THREADS_ALL = 4, N_THREADS_OTHER_LAYOUTS = 2 };

/* ---- element access that shares no code with the library (F16 decoded by test_common's reference) ---- */

static char * elem_ptr(const struct ggml_tensor * t, int64_t k) {
    size_t off = 0;
    for (int d = 0; d < 4; d++) {
        off += (size_t) (k % t->ne[d]) * t->nb[d];
        k /= t->ne[d];
    }
    return (char *) t->data + off;
}

/* BF16 is the upper half of a float32, rounded to nearest even (values here are finite) */
static uint16_t ref_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t) ((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

double ops_round_bf16(double x) {
    const uint32_t u = (uint32_t) ref_bf16((float) x) << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double raw_get(const struct ggml_tensor * t, int64_t k) {
    const char * p = elem_ptr(t, k);
    if (t->type == GGML_TYPE_F16) { uint16_t h; memcpy(&h, p, 2); return tc_ref_fp16_to_f64(h); }
    if (t->type == GGML_TYPE_BF16) { uint16_t h; memcpy(&h, p, 2); const uint32_t u = (uint32_t) h << 16; float f; memcpy(&f, &u, 4); return f; }
    if (t->type == GGML_TYPE_I16) { int16_t i; memcpy(&i, p, 2); return i; }
    if (t->type == GGML_TYPE_I32) { int32_t i; memcpy(&i, p, 4); return i; }
    if (t->type == GGML_TYPE_I64) { int64_t i; memcpy(&i, p, 8); return (double) i; }
    float f;
    memcpy(&f, p, 4);
    return f;
}

static void raw_set(const struct ggml_tensor * t, int64_t k, double v) {
    char * p = elem_ptr(t, k);
    if (t->type == GGML_TYPE_F16) { const uint16_t h = tc_ref_fp32_to_fp16((float) v); memcpy(p, &h, 2); }
    else if (t->type == GGML_TYPE_BF16) { const uint16_t h = ref_bf16((float) v); memcpy(p, &h, 2); }
    else if (t->type == GGML_TYPE_I16) { const int16_t i = (int16_t) v; memcpy(p, &i, 2); }
    else if (t->type == GGML_TYPE_I32) { const int32_t i = (int32_t) v; memcpy(p, &i, 4); }
    else if (t->type == GGML_TYPE_I64) { const int64_t i = (int64_t) v; memcpy(p, &i, 8); }
    else { const float f = (float) v; memcpy(p, &f, 4); }
}

/* NaN (F32, F16, BF16) or the most negative integer everywhere, so an element a kernel forgets to write fails */
static void raw_poison(const struct ggml_tensor * t) {
    for (int64_t k = 0; k < ggml_nelements(t); k++) {
        char * p = elem_ptr(t, k);
        if (t->type == GGML_TYPE_F16) { const uint16_t h = 0x7e00; memcpy(p, &h, 2); }
        else if (t->type == GGML_TYPE_BF16) { const uint16_t h = 0x7fc0; memcpy(p, &h, 2); }
        else if (t->type == GGML_TYPE_I16) { const int16_t i = INT16_MIN; memcpy(p, &i, 2); }
        else if (t->type == GGML_TYPE_I32) { const int32_t i = INT32_MIN; memcpy(p, &i, 4); }
        else if (t->type == GGML_TYPE_I64) { const int64_t i = INT64_MIN; memcpy(p, &i, 8); }
        else { const float f = NAN; memcpy(p, &f, 4); }
    }
}

/* ---- inputs ---- */

static const int k_axes[3][4] = {{0, 1, 2, 3}, {1, 0, 2, 3}, {2, 1, 0, 3}};  /* involutions */
static const char * const k_layout_name[3] = {" C", " T", " P"};  /* in messages, per input */
static int lay_index(unsigned lay) { return lay == OPS_TRANSPOSED ? 1 : lay == OPS_PERMUTED ? 2 : 0; }

static struct ggml_tensor * new_base(struct ggml_context * ctx, const struct ops_input * s, unsigned lay) {
    int64_t ne[4];
    for (int d = 0; d < 4; d++) ne[d] = s->ne[k_axes[lay_index(lay)][d]];
    return ggml_new_tensor(ctx, s->type, 4, ne);
}

/* base seen with the input's logical shape */
static struct ggml_tensor * layout_view(struct ggml_context * ctx, struct ggml_tensor * base, unsigned lay) {
    if (lay == OPS_TRANSPOSED) return ggml_transpose(ctx, base);
    if (lay == OPS_PERMUTED) return ggml_permute(ctx, base, 2, 1, 0, 3);
    return base;
}

/* The row's values for input s written through t; v gets what t stores. */
static void fill_input(const struct ggml_tensor * t, const struct ops_input * s, double * v) {
    const int64_t n = ops_nel(s->ne);
    const bool ints = s->type == GGML_TYPE_I32 || s->type == GGML_TYPE_I64 || s->type == GGML_TYPE_I16;
    for (int64_t k = 0; k < n; k++) v[k] = ints ? tc_randint((int) s->lo, (int) s->hi) : tc_uniform(s->lo, s->hi);
    if (s->fill) s->fill(v, s->ne);
    for (int64_t k = 0; k < n; k++) raw_set(t, k, v[k]);
    for (int64_t k = 0; k < n; k++) v[k] = raw_get(t, k);
}

static bool is_param(const struct ops_input * s) { return s->type == GGML_TYPE_F32 && !s->fixed; }

/* ---- forward ---- */

static struct ggml_tensor * build_row(struct ggml_context * ctx, const struct ops_row * row, struct ggml_tensor ** in) {
    if (!row->via_node) return row->build(ctx, in, row->params);
    struct ggml_tensor * through[OPS_MAX_IN];
    for (int i = 0; i < row->n_in; i++) through[i] = in[i];
    through[0] = ggml_scale(ctx, in[0], 1.0f);
    return row->build(ctx, through, row->params);
}

static void compare(const struct ops_row * row, const struct ggml_tensor * out, const double * ref, const char * what) {
    const int64_t n = ggml_nelements(out);
    if (out->type == GGML_TYPE_F32 && row->cmp == OPS_NORM2) {
        const double err = tc_rel_err_tensor(out, ref);
        CHECK(err <= row->tol, "%s: relative error %.3g > %.3g", what, err, row->tol);
        return;
    }
    int64_t bad = 0, first = -1;
    for (int64_t k = 0; k < n; k++) {
        const double y = raw_get(out, k);
        bool ok;
        if (out->type == GGML_TYPE_F16) {
            uint16_t h;
            memcpy(&h, elem_ptr(out, k), 2);
            ok = h == tc_ref_fp32_to_fp16((float) ref[k]);
        } else if (out->type == GGML_TYPE_I32 || row->cmp == OPS_EXACT) {
            ok = y == ref[k];
        } else {
            ok = fabs(ref[k]) > FLT_MAX ? y == copysign(INFINITY, ref[k]) : fabs(y - ref[k]) <= row->tol * fabs(ref[k]) + row->atol;
        }
        if (!ok && bad++ == 0) first = k;
    }
    CHECK(bad == 0, "%s: %lld of %lld elements off (first: element %lld = %.9g, want %.9g)", what, (long long) bad, (long long) n,
          (long long) first, first >= 0 ? raw_get(out, first) : 0.0, first >= 0 ? ref[first] : 0.0);
}

static bool overlaps(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    const char * pa = a->data, * pb = b->data;
    return pa < pb + ggml_nbytes(b) && pb < pa + ggml_nbytes(a);
}

/* The inputs of one forward check: the tensors, their memory, their values. */
struct fwd_inputs {
    struct ggml_tensor * base[OPS_MAX_IN], * in[OPS_MAX_IN];
    double * vals[OPS_MAX_IN];
    void * saved[OPS_MAX_IN];  /* base's bytes before any compute */
    int64_t ne[OPS_MAX_IN][4];
};

static bool check_shape(const struct ops_row * row, const struct fwd_inputs * x, const struct ggml_tensor * out, const char * what) {
    int64_t want[4];
    if (row->shape) row->shape((const int64_t (*)[4]) x->ne, row->params, want);
    else memcpy(want, x->ne[0], sizeof want);
    return CHECK(memcmp(want, out->ne, sizeof want) == 0, "%s: shape [%lld,%lld,%lld,%lld], want [%lld,%lld,%lld,%lld]", what,
                 (long long) out->ne[0], (long long) out->ne[1], (long long) out->ne[2], (long long) out->ne[3],
                 (long long) want[0], (long long) want[1], (long long) want[2], (long long) want[3]);
}

static void run_forward(struct ggml_context * ctx, const struct ops_row * row, const struct fwd_inputs * x, int n_threads,
                        const char * what) {
    ggml_clear_error();
    struct ggml_tensor * out = build_row(ctx, row, (struct ggml_tensor **) x->in);
    if (!CHECK(out != NULL, "%s: the constructor failed: %s", what, ggml_last_error())) return;
    CHECK(strcmp(ggml_op_name(out->op), row->op) == 0, "%s: the node is %s", what, ggml_op_name(out->op));
    if (!check_shape(row, x, out, what)) return;
    if (!CHECK(out->type == row->out_type, "%s: result type %s, want %s", what, ggml_type_name(out->type), ggml_type_name(row->out_type)))
        return;
    double * ref = malloc((size_t) ggml_nelements(out) * sizeof(double));
    row->ref((const double * const *) x->vals, (const int64_t (*)[4]) x->ne, row->params, ref, out->ne);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(g, out);
    /* the first run is the reference for the others, bit for bit: the split
     * of the work between threads must not change any element's arithmetic */
    void * first = malloc(ggml_nbytes(out));
    for (int t = 0; t < n_threads; t++) {
        if (row->result == OPS_NEW) raw_poison(out);
        if (row->result == OPS_INPLACE) memcpy(x->base[0]->data, x->saved[0], ggml_nbytes(x->base[0]));
        const enum ggml_status st = ggml_graph_compute_with_ctx(ctx, g, k_threads[t]);
        if (!CHECK(st == GGML_STATUS_SUCCESS, "%s: compute failed: %s", what, ggml_last_error())) break;
        if (t == 0) {
            compare(row, out, ref, what);
            memcpy(first, out->data, ggml_nbytes(out));
        } else {
            CHECK(memcmp(first, out->data, ggml_nbytes(out)) == 0, "%s: %d threads differ from 1", what, k_threads[t]);
        }
    }
    for (int i = row->result == OPS_INPLACE; i < row->n_in; i++)
        CHECK(memcmp(x->saved[i], x->base[i]->data, ggml_nbytes(x->base[i])) == 0, "%s: input %d was changed", what, i);
    if (row->result == OPS_VIEW) CHECK(overlaps(out, x->base[0]), "%s: the result is a view of input 0", what);
    if (row->result == OPS_INPLACE) CHECK(out->data == x->in[0]->data, "%s: the result is input 0's memory", what);
    for (int i = 0; i < row->n_in && row->result == OPS_NEW; i++)
        CHECK(!overlaps(out, x->base[i]), "%s: the result shares memory with input %d", what, i);
    if (row->post) row->post(out, ref, row->params, what);
    free(first);
    free(ref);
}

/* A context for a row's tensors: its inputs, its result and what build
 * makes alongside (cpy's destination, a shape tensor: each the size of the
 * result at most), a few times over. Small, since its memory is zeroed. */
static struct ggml_context * row_ctx(const struct ops_row * row) {
    int64_t ne_out[4], n = 0;
    int64_t ne[OPS_MAX_IN][4];
    for (int i = 0; i < row->n_in; i++) { memcpy(ne[i], row->in[i].ne, sizeof ne[i]); n += ops_nel(ne[i]); }
    if (row->shape) row->shape((const int64_t (*)[4]) ne, row->params, ne_out);
    else memcpy(ne_out, ne[0], sizeof ne_out);
    n += 3 * ops_nel(ne_out);
    return tc_ctx(1 + (size_t) n * 4 * 4 / (1024 * 1024));
}

static void check_forward(const struct ops_row * row, const unsigned * lay, int n_threads, const char * what) {
    struct ggml_context * ctx = row_ctx(row);
    struct fwd_inputs x;
    for (int i = 0; i < row->n_in; i++) {
        memcpy(x.ne[i], row->in[i].ne, sizeof x.ne[i]);
        x.base[i] = new_base(ctx, &row->in[i], lay[i]);
        x.in[i] = layout_view(ctx, x.base[i], lay[i]);
        x.vals[i] = malloc((size_t) ops_nel(x.ne[i]) * sizeof(double));
        fill_input(x.in[i], &row->in[i], x.vals[i]);
        x.saved[i] = malloc(ggml_nbytes(x.base[i]));
        memcpy(x.saved[i], x.base[i]->data, ggml_nbytes(x.base[i]));
    }
    run_forward(ctx, row, &x, n_threads, what);
    for (int i = 0; i < row->n_in; i++) { free(x.vals[i]); free(x.saved[i]); }
    ggml_free(ctx);
}

/* ---- gradients ---- */

struct grad_user { const struct ops_row * row; const unsigned * lay; };

/* loss = sum(y * W), W fixed random (tc_weighted_sum); the checker's
 * parameters get the row's values, the other inputs are new constants */
static struct ggml_tensor * row_loss(struct ggml_context * ctx, struct ggml_tensor ** params, void * user) {
    const struct grad_user * u = user;
    const struct ops_row * row = u->row;
    struct ggml_tensor * in[OPS_MAX_IN];
    int p = 0;
    for (int i = 0; i < row->n_in; i++) {
        const struct ops_input * s = &row->in[i];
        in[i] = layout_view(ctx, is_param(s) ? params[p++] : new_base(ctx, s, u->lay[i]), u->lay[i]);
        double * v = malloc((size_t) ops_nel(s->ne) * sizeof(double));
        fill_input(in[i], s, v);
        free(v);
    }
    struct ggml_tensor * out = build_row(ctx, row, in);
    return tc_weighted_sum(ctx, row->grad_through && out ? row->grad_through(ctx, out) : out);
}

static void check_gradient(const struct ops_row * row, const unsigned * lay, const char * what) {
    int64_t shapes[OPS_MAX_IN][4];
    int n = 0;
    for (int i = 0; i < row->n_in; i++) {
        if (!is_param(&row->in[i])) continue;
        for (int d = 0; d < 4; d++) shapes[n][d] = row->in[i].ne[k_axes[lay_index(lay[i])][d]];
        n++;
    }
    if (!CHECK(n > 0, "%s: a gradient row without a parameter", what)) return;
    char name[240];
    snprintf(name, sizeof name, "%s gradient", what);
    struct grad_user u = {row, lay};
    tc_gradcheck(name, row_loss, &u, n, (const int64_t (*)[4]) shapes, 0, 0, row->fd_eps > 0 ? row->fd_eps : 1e-2,
                 row->fd_atol > 0 ? row->fd_atol : 1e-3, row->fd_rtol > 0 ? row->fd_rtol : 1e-2);
}

/* A backward through the row's node fails with a message and leaves the
 * graph as it was. */
static void check_refused(const struct ops_row * row, const unsigned * lay, const char * what) {
    struct ggml_context * ctx = row_ctx(row);
    struct ggml_tensor * in[OPS_MAX_IN];
    for (int i = 0; i < row->n_in; i++) {
        struct ggml_tensor * base = new_base(ctx, &row->in[i], lay[i]);
        in[i] = layout_view(ctx, base, lay[i]);
        double * v = malloc((size_t) ops_nel(row->in[i].ne) * sizeof(double));
        fill_input(in[i], &row->in[i], v);
        free(v);
        if (!row->in[i].fixed) ggml_set_param(base);
    }
    struct ggml_tensor * out = build_row(ctx, row, in);
    struct ggml_tensor * loss = ggml_sum(ctx, row->grad_through && out ? row->grad_through(ctx, out) : out);
    if (CHECK(loss != NULL, "%s: building the loss failed: %s", what, ggml_last_error())) {
        ggml_set_loss(loss);
        struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, true);
        ggml_build_forward_expand(g, loss);
        const int nodes = ggml_graph_n_nodes(g);
        ggml_clear_error();
        const enum ggml_status st = ggml_build_backward_expand(ctx, g, NULL);
        CHECK(st == GGML_STATUS_FAILED && ggml_last_error()[0] != '\0', "%s: autodiff refuses it with a message (%s)", what,
              ggml_last_error());
        CHECK(!row->refusal || strstr(ggml_last_error(), row->refusal), "%s: the refusal '%s' names '%s'", what, ggml_last_error(),
              row->refusal);
        CHECK(ggml_graph_n_nodes(g) == nodes, "%s: a refused backward left %d nodes, not %d", what, ggml_graph_n_nodes(g), nodes);
    }
    ggml_free(ctx);
}

/* ---- a backward op reached through autodiff ---- */

struct ggml_tensor * ops_grad_node(struct ggml_context * ctx, struct ggml_tensor ** in, int which, int dy, ops_build_fn build,
                                   const void * params) {
    /* x: not the parameter itself (a parameter's gradient is its
     * accumulator), so that autodiff returns the rule's node for it: a
     * layout's view as it is, a contiguous input through a view of itself */
    struct ggml_tensor * src = in[which], * base = src->view_src ? src->view_src : src;
    struct ggml_tensor * x = src->view_src ? src : ggml_view_1d(ctx, src, ggml_nelements(src), 0);
    if (x != src) x = ggml_reshape_4d(ctx, x, src->ne[0], src->ne[1], src->ne[2], src->ne[3]);
    struct ggml_tensor * args[OPS_MAX_IN];
    memcpy(args, in, sizeof args);
    args[which] = x;
    struct ggml_tensor * y = x ? build(ctx, args, params) : NULL;
    struct ggml_tensor * loss = y ? ggml_sum(ctx, ggml_mul(ctx, y, in[dy])) : NULL;
    if (!loss) return NULL;
    ggml_set_param(base);
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 256, true);
    ggml_build_forward_expand(g, loss);
    if (ggml_build_backward_expand(ctx, g, NULL) != GGML_STATUS_SUCCESS) return NULL;
    ggml_graph_reset(g);  /* the loss's gradient := 1 */
    return ggml_graph_get_grad(g, x);
}

/* ---- a row: once per combination of its inputs' layouts ---- */

void ops_expect_refused(const struct ggml_tensor * t, const char * what) {
    CHECK(t == NULL && ggml_last_error()[0] != '\0', "%s: want NULL with a message (got %p, '%s')", what, (const void *) t, ggml_last_error());
    ggml_clear_error();
}

void ops_run_row(const struct ops_row * row) {
    const int before = tc_failures;
    int combos = 1;
    for (int i = 0; i < row->n_in; i++) combos *= __builtin_popcount(row->in[i].layout ? row->in[i].layout : OPS_CONTIG);
    for (int c = 0; c < combos; c++) {
        unsigned lay[OPS_MAX_IN];
        char what[200];
        int rest = c, len = snprintf(what, sizeof what, "%s %s", row->op, row->variant);
        for (int i = 0; i < row->n_in; i++) {
            const unsigned mask = row->in[i].layout ? row->in[i].layout : OPS_CONTIG;
            const int k = rest % __builtin_popcount(mask);
            rest /= __builtin_popcount(mask);
            int seen = -1;
            for (unsigned bit = OPS_CONTIG; bit <= OPS_PERMUTED; bit <<= 1)
                if ((mask & bit) && ++seen == k) lay[i] = bit;
            if (combos > 1 && len < (int) sizeof what)
                len += snprintf(what + len, sizeof what - (size_t) len, "%s", k_layout_name[lay_index(lay[i])]);
        }
        check_forward(row, lay, c == 0 ? N_THREADS_ALL : N_THREADS_OTHER_LAYOUTS, what);
        if (row->grad == OPS_GRAD) check_gradient(row, lay, what);
        if (row->grad == OPS_REFUSED) check_refused(row, lay, what);
    }
    printf("%-24s %-48s %d layout(s) %s\n", row->op, row->variant, combos, tc_failures == before ? "ok" : "FAILED");
}

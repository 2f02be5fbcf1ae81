/* test_ops_forward.c -- every forward kernel except flash attention, against
 * float64 references written here with plain loops, on odd shapes, with
 * strided (transposed / permuted / view) inputs and ggml broadcasting.
 *
 * Inputs are written straight into the tensors' memory and the reference
 * values are taken from the same floats, so nothing expected comes from the
 * code under test. Results are poisoned with NaN before each compute, so an
 * element a kernel forgets to write fails the comparison.
 *
 * Tolerance: relative error (2-norm over the tensor) 1e-5 for F32 results.
 * Every kernel here does at most a few float operations per result or sums
 * <= 70 terms of magnitude <= 4, so the float32 error is ~1e-7 relative; a
 * wrong element, index or broadcast gives errors of order 1e-2 or more. */
#include "common/test_common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define NTH 3         /* odd thread count: uneven splits of the work */
#define TOL 1e-5

/* ---- float64 reference arrays (logical ne0-fastest order) ---- */

typedef struct { int64_t ne[4]; double * v; } arr;

enum { POOL_MAX = 4096 };
static void * pool[POOL_MAX];
static int n_pool;

static void * pool_alloc(size_t n) {
    void * p = calloc(n ? n : 1, 1);
    if (!p || n_pool == POOL_MAX) { fprintf(stderr, "test allocation failed\n"); exit(2); }
    return pool[n_pool++] = p;
}
static void pool_free(void) { while (n_pool) free(pool[--n_pool]); }

static int64_t nel(const int64_t ne[4]) { return ne[0] * ne[1] * ne[2] * ne[3]; }
static int64_t flat(const int64_t ne[4], int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return i0 + ne[0] * (i1 + ne[1] * (i2 + ne[2] * i3));
}
#define AT(a, i0, i1, i2, i3) ((a).v[flat((a).ne, (i0), (i1), (i2), (i3))])
#define FOR4(ne, i0, i1, i2, i3)                                                                         \
    for (int64_t i3 = 0; i3 < (ne)[3]; i3++) for (int64_t i2 = 0; i2 < (ne)[2]; i2++)                   \
    for (int64_t i1 = 0; i1 < (ne)[1]; i1++) for (int64_t i0 = 0; i0 < (ne)[0]; i0++)

static arr arr_new(const int64_t ne[4]) {
    arr a;
    memcpy(a.ne, ne, sizeof a.ne);
    a.v = pool_alloc((size_t) nel(ne) * sizeof(double));
    return a;
}

/* The same values seen with another shape (same element count, flat order). */
static arr arr_reshape(arr a, const int64_t ne[4]) { memcpy(a.ne, ne, sizeof a.ne); return a; }

/* ggml_permute semantics: result dim ax[i] is source dim i. */
static arr arr_permute(arr a, const int ax[4]) {
    int64_t ne[4];
    for (int i = 0; i < 4; i++) ne[ax[i]] = a.ne[i];
    arr r = arr_new(ne);
    FOR4(ne, o0, o1, o2, o3) {
        const int64_t o[4] = {o0, o1, o2, o3};
        AT(r, o0, o1, o2, o3) = AT(a, o[ax[0]], o[ax[1]], o[ax[2]], o[ax[3]]);
    }
    return r;
}

/* ---- inputs ---- */

/* A new contiguous F32 tensor of uniform values in [lo, hi] (negated at
 * random when random_sign), and the same values as a reference array. */
static struct ggml_tensor * rand_f32(struct ggml_context * ctx, const int64_t ne[4], double lo, double hi, bool random_sign, arr * ref) {
    struct ggml_tensor * t = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    *ref = arr_new(ne);
    float * d = t->data;
    for (int64_t i = 0; i < nel(ne); i++) {
        double x = tc_uniform(lo, hi);
        if (random_sign && (tc_next() & 1)) x = -x;
        d[i] = (float) x;
        ref->v[i] = d[i];
    }
    return t;
}

/* How an input of logical shape ne is laid out in memory. */
enum layout { CONTIG, TRANSPOSED, PERMUTED, N_LAYOUTS };
static const char * const layout_name[N_LAYOUTS] = {"contiguous", "transposed", "permuted(0<->2)"};
static const int layout_axes[N_LAYOUTS][4] = {{0, 1, 2, 3}, {1, 0, 2, 3}, {2, 1, 0, 3}};  /* involutions */

/* An input of logical shape ne: a contiguous tensor, or a transposed /
 * permuted (non-contiguous) view of one whose memory has the axes swapped. */
static struct ggml_tensor * make_input(struct ggml_context * ctx, const int64_t ne[4], enum layout lay, double lo, double hi,
                                       bool random_sign, arr * ref) {
    const int * ax = layout_axes[lay];
    int64_t mem_ne[4];
    for (int i = 0; i < 4; i++) mem_ne[i] = ne[ax[i]];
    arr base_ref;
    struct ggml_tensor * base = rand_f32(ctx, mem_ne, lo, hi, random_sign, &base_ref);
    if (lay == CONTIG) { *ref = base_ref; return base; }
    *ref = arr_permute(base_ref, ax);
    return lay == TRANSPOSED ? ggml_transpose(ctx, base) : ggml_permute(ctx, base, ax[0], ax[1], ax[2], ax[3]);
}

/* ---- running and checking ---- */

static bool compute(struct ggml_context * ctx, struct ggml_tensor * out) {
    if (!CHECK(out != NULL, "op returned NULL: %s", ggml_last_error())) return false;
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(g, out);
    const enum ggml_status st = ggml_graph_compute_with_ctx(ctx, g, NTH);
    return CHECK(st == GGML_STATUS_SUCCESS, "compute failed: %s", ggml_last_error());
}

/* Fill the result with NaN, then compute it. */
static bool poison_compute(struct ggml_context * ctx, struct ggml_tensor * out) {
    if (out) tc_poison(out);
    return compute(ctx, out);
}

static void expect(const struct ggml_tensor * t, arr ref, double tol, const char * fmt, ...) __attribute__((format(printf, 4, 5)));
static void expect(const struct ggml_tensor * t, arr ref, double tol, const char * fmt, ...) {
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!CHECK(t != NULL, "%s: no result", what)) return;
    if (!CHECK(memcmp(t->ne, ref.ne, sizeof ref.ne) == 0, "%s: shape [%lld,%lld,%lld,%lld], want [%lld,%lld,%lld,%lld]", what,
               (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2], (long long) t->ne[3],
               (long long) ref.ne[0], (long long) ref.ne[1], (long long) ref.ne[2], (long long) ref.ne[3]))
        return;
    if (tol > 0) { CHECK_REL(tc_rel_err_tensor(t, ref.v), tol, what); return; }
    /* tol 0: data movement must be exact, element by element (Inf included) */
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < nel(ref.ne); i++)
        if (!(tc_get(t, i) == ref.v[i])) { if (first < 0) first = i; bad++; }
    CHECK(bad == 0, "%s: %lld of %lld elements differ (first: element %lld = %g, want %g)", what, (long long) bad,
          (long long) nel(ref.ne), (long long) first, first >= 0 ? tc_get(t, first) : 0.0, first >= 0 ? ref.v[first] : 0.0);
}

static const char * shape_s(const int64_t ne[4]) {
    static char buf[4][64];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "[%lld,%lld,%lld,%lld]", (long long) ne[0], (long long) ne[1], (long long) ne[2], (long long) ne[3]);
    return buf[k];
}

/* ---- float64 references ---- */

static double apply(enum ggml_op op, double x, double y) {
    switch (op) {
        case GGML_OP_ADD: return x + y;
        case GGML_OP_SUB: return x - y;
        case GGML_OP_MUL: return x * y;
        default:          return x / y;
    }
}

/* a op b with b tiled over a (index modulo b's shape) */
static arr ref_binary(enum ggml_op op, arr a, arr b) {
    arr r = arr_new(a.ne);
    FOR4(a.ne, i0, i1, i2, i3)
        AT(r, i0, i1, i2, i3) = apply(op, AT(a, i0, i1, i2, i3), AT(b, i0 % b.ne[0], i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]));
    return r;
}

static arr ref_repeat(arr b, const int64_t ne[4]) {
    arr r = arr_new(ne);
    FOR4(ne, i0, i1, i2, i3) AT(r, i0, i1, i2, i3) = AT(b, i0 % b.ne[0], i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]);
    return r;
}

static arr ref_repeat_back(arr a, const int64_t ne[4]) {
    arr r = arr_new(ne);
    FOR4(a.ne, i0, i1, i2, i3) AT(r, i0 % ne[0], i1 % ne[1], i2 % ne[2], i3 % ne[3]) += AT(a, i0, i1, i2, i3);
    return r;
}

/* sum of each row (mean: divided by its length) */
static arr ref_rows(arr a, bool mean) {
    const int64_t ne[4] = {1, a.ne[1], a.ne[2], a.ne[3]};
    arr r = arr_new(ne);
    FOR4(a.ne, i0, i1, i2, i3) AT(r, 0, i1, i2, i3) += AT(a, i0, i1, i2, i3) / (mean ? (double) a.ne[0] : 1.0);
    return r;
}

/* Elements of a view of a's flat memory: element (i0..i3) sits at float
 * index offset + i0 + i1*st[1] + i2*st[2] + i3*st[3] (strides in floats). */
static arr ref_view(arr a, const int64_t ne[4], const int64_t st[4], int64_t offset) {
    arr r = arr_new(ne);
    FOR4(ne, i0, i1, i2, i3) AT(r, i0, i1, i2, i3) = a.v[offset + i0 + i1 * st[1] + i2 * st[2] + i3 * st[3]];
    return r;
}

/* a with b added into the region (strides st in floats, offset in floats) */
static arr ref_acc(arr a, arr b, const int64_t st[4], int64_t offset) {
    arr r = arr_new(a.ne);
    memcpy(r.v, a.v, (size_t) nel(a.ne) * sizeof(double));
    FOR4(b.ne, i0, i1, i2, i3) r.v[offset + i0 + i1 * st[1] + i2 * st[2] + i3 * st[3]] += AT(b, i0, i1, i2, i3);
    return r;
}

/* c[i, j] = sum_k a[k, i] b[k, j]; a's plane for b's plane (i2, i3) is (i2 / r2, i3 / r3) */
static arr ref_mul_mat(arr a, arr b) {
    const int64_t ne[4] = {a.ne[1], b.ne[1], b.ne[2], b.ne[3]};
    const int64_t r2 = b.ne[2] / a.ne[2], r3 = b.ne[3] / a.ne[3];
    arr r = arr_new(ne);
    FOR4(ne, i, j, i2, i3) {
        double s = 0;
        for (int64_t k = 0; k < a.ne[0]; k++) s += AT(a, k, i, i2 / r2, i3 / r3) * AT(b, k, j, i2, i3);
        AT(r, i, j, i2, i3) = s;
    }
    return r;
}

/* c[i, j] = sum_k a[i, k] b[j, k]; a's plane for b's plane (i2, i3) is (i2 / r2, i3 / r3) */
static arr ref_out_prod(arr a, arr b) {
    const int64_t ne[4] = {a.ne[0], b.ne[0], b.ne[2], b.ne[3]};
    const int64_t r2 = b.ne[2] / a.ne[2], r3 = b.ne[3] / a.ne[3];
    arr r = arr_new(ne);
    FOR4(ne, i, j, i2, i3) {
        double s = 0;
        for (int64_t k = 0; k < a.ne[1]; k++) s += AT(a, i, k, i2 / r2, i3 / r3) * AT(b, j, k, i2, i3);
        AT(r, i, j, i2, i3) = s;
    }
    return r;
}

/* ALiBi slope of head h (upstream ggml's formula), 1 without max_bias. */
static double alibi_slope(double max_bias, int64_t h, int64_t n_head) {
    if (max_bias <= 0) return 1.0;
    int64_t n_head_log2 = 1;
    while (n_head_log2 * 2 <= n_head) n_head_log2 *= 2;
    const double m0 = pow(2.0, -max_bias / (double) n_head_log2);
    const double m1 = pow(2.0, -(max_bias / 2) / (double) n_head_log2);
    return h < n_head_log2 ? pow(m0, (double) (h + 1)) : pow(m1, (double) (2 * (h - n_head_log2) + 1));
}

/* softmax(scale*x + slope(i2)*mask[i0, i1, i2 % mne2, i3 % mne3]) along ne0;
 * a row that is all -Inf gives zeros. mask.v == NULL: no mask. */
static arr ref_soft_max(arr x, arr mask, double scale, double max_bias) {
    arr r = arr_new(x.ne);
    double * s = pool_alloc((size_t) x.ne[0] * sizeof(double));
    FOR4(x.ne, zero, i1, i2, i3) {
        if (zero != 0) continue;  /* once per row */
        double mx = -INFINITY;
        for (int64_t i = 0; i < x.ne[0]; i++) {
            s[i] = scale * AT(x, i, i1, i2, i3);
            if (mask.v) s[i] += alibi_slope(max_bias, i2, x.ne[2]) * AT(mask, i, i1, i2 % mask.ne[2], i3 % mask.ne[3]);
            if (s[i] > mx) mx = s[i];
        }
        double sum = 0;
        for (int64_t i = 0; i < x.ne[0]; i++) sum += mx == -INFINITY ? 0.0 : exp(s[i] - mx);
        for (int64_t i = 0; i < x.ne[0]; i++) AT(r, i, i1, i2, i3) = mx == -INFINITY ? 0.0 : exp(s[i] - mx) / sum;
    }
    return r;
}

/* ---- copies: dup, cont, cpy (with conversion and shape change) ---- */

static void test_copies(void) {
    struct ggml_context * ctx = tc_ctx(16);
    const int64_t ne[4] = {7, 5, 3, 2};
    arr ra;
    struct ggml_tensor * a = rand_f32(ctx, ne, -1, 1, false, &ra);

    struct ggml_tensor * d = ggml_dup(ctx, a);
    if (poison_compute(ctx, d)) expect(d, ra, 0, "dup");
    CHECK(d && d->data != a->data && ggml_is_contiguous(d), "dup makes a new contiguous tensor");

    /* cont and dup of a permuted (non-contiguous) view */
    const int ax[4] = {1, 3, 0, 2};
    struct ggml_tensor * p = ggml_permute(ctx, a, ax[0], ax[1], ax[2], ax[3]);
    const arr rp = arr_permute(ra, ax);
    struct ggml_tensor * c = ggml_cont(ctx, p);
    if (poison_compute(ctx, c)) expect(c, rp, 0, "cont of a permuted view");
    CHECK(c && ggml_is_contiguous(c), "cont result is contiguous");
    struct ggml_tensor * d2 = ggml_dup(ctx, p);
    if (poison_compute(ctx, d2)) expect(d2, rp, 0, "dup of a permuted view");

    /* cpy into a tensor of the same shape: the result is a view of b */
    struct ggml_tensor * b = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    tc_poison(b);
    struct ggml_tensor * cb = ggml_cpy(ctx, a, b);
    if (compute(ctx, cb)) expect(b, ra, 0, "cpy into b");
    CHECK(cb && cb->data == b->data, "cpy returns a view of b");

    /* cpy of a permuted view into a different shape with the same element count: flat logical order */
    const int64_t ne_flat[4] = {10, 21, 1, 1};
    struct ggml_tensor * b2 = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne_flat);
    tc_poison(b2);
    if (compute(ctx, ggml_cpy(ctx, p, b2))) expect(b2, arr_reshape(rp, ne_flat), 0, "shape-changing cpy of a permuted view");

    /* cpy into a transposed (non-contiguous) destination */
    const int64_t ne2[4] = {7, 5, 1, 1}, ne2t[4] = {5, 7, 1, 1};
    arr ra2;
    struct ggml_tensor * a2 = rand_f32(ctx, ne2, -1, 1, false, &ra2);
    struct ggml_tensor * bt = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne2t);
    tc_poison(bt);
    if (compute(ctx, ggml_cpy(ctx, a2, ggml_transpose(ctx, bt)))) expect(bt, arr_permute(ra2, layout_axes[TRANSPOSED]), 0, "cpy into a transposed view");

    /* F32 -> F16 (rounded to nearest even), F16 -> F32 (exact), F16 -> F16 with a new shape */
    const int64_t ne_big[4] = {37, 5, 3, 2};
    arr rbig;
    struct ggml_tensor * x = rand_f32(ctx, ne_big, -70000, 70000, false, &rbig);  /* includes values that overflow F16 */
    for (int i = 0; i < 37; i++) ((float *) x->data)[i] = rbig.v[i] = ldexp(tc_uniform(-1, 1), -14 - i % 12);  /* subnormal halves */
    struct ggml_tensor * h = ggml_new_tensor(ctx, GGML_TYPE_F16, 4, ne_big);
    struct ggml_tensor * f = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne_big);
    const int64_t ne_h2[4] = {74, 15, 1, 1};
    struct ggml_tensor * h2 = ggml_new_tensor(ctx, GGML_TYPE_F16, 4, ne_h2);
    memset(h->data, 0xff, ggml_nbytes(h));  /* 0xffff is a NaN half */
    memset(h2->data, 0xff, ggml_nbytes(h2));
    tc_poison(f);
    struct ggml_tensor * hn = ggml_cpy(ctx, x, h);
    struct ggml_tensor * fn = ggml_cpy(ctx, hn, f);
    struct ggml_tensor * h2n = ggml_cpy(ctx, hn, h2);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, fn);
    ggml_build_forward_expand(g, h2n);
    if (CHECK(ggml_graph_compute_with_ctx(ctx, g, NTH) == GGML_STATUS_SUCCESS, "F16 cpy graph: %s", ggml_last_error())) {
        const int64_t n = nel(ne_big);
        int bad_h = 0, bad_f = 0, bad_h2 = 0;
        for (int64_t i = 0; i < n; i++) {
            const uint16_t want = tc_ref_fp32_to_fp16((float) rbig.v[i]);
            if (((const uint16_t *) h->data)[i] != want) bad_h++;
            if ((double) ((const float *) f->data)[i] != tc_ref_fp16_to_f64(want)) bad_f++;
            if (((const uint16_t *) h2->data)[i] != want) bad_h2++;
        }
        CHECK(bad_h == 0, "cpy F32->F16: %d of %lld elements are not the nearest half", bad_h, (long long) n);
        CHECK(bad_f == 0, "cpy F16->F32: %d of %lld elements are not exact", bad_f, (long long) n);
        CHECK(bad_h2 == 0, "cpy F16->F16 with a new shape: %d of %lld elements differ", bad_h2, (long long) n);
    }
    /* F16 source read through a permuted view */
    struct ggml_tensor * hp = ggml_permute(ctx, h, 2, 1, 0, 3);
    struct ggml_tensor * f2 = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, hp->ne);
    tc_poison(f2);
    arr rh = arr_new(ne_big);
    for (int64_t i = 0; i < nel(ne_big); i++) rh.v[i] = tc_ref_round_fp16((float) rbig.v[i]);
    if (compute(ctx, ggml_cpy(ctx, hp, f2))) expect(f2, arr_permute(rh, layout_axes[PERMUTED]), 0, "cpy of a permuted F16 view to F32");
    ggml_free(ctx);
    pool_free();
}

/* ---- reshape, view, permute, transpose ---- */

static void test_layout_ops(void) {
    struct ggml_context * ctx = tc_ctx(16);
    const int64_t ne[4] = {7, 5, 3, 2};
    arr ra;
    struct ggml_tensor * a = rand_f32(ctx, ne, -1, 1, false, &ra);

    /* reshapes: views of a's memory with a new shape, the same flat order */
    const int64_t like_ne[4] = {30, 7, 1, 1};
    struct ggml_tensor * like = ggml_new_tensor(ctx, GGML_TYPE_F32, 2, like_ne);
    struct ggml_tensor * reshapes[5] = {
        ggml_reshape_1d(ctx, a, 210), ggml_reshape_2d(ctx, a, 14, 15), ggml_reshape_3d(ctx, a, 5, 6, 7),
        ggml_reshape_4d(ctx, a, 3, 5, 7, 2), ggml_reshape(ctx, a, like),
    };
    const int64_t want_ne[5][4] = {{210, 1, 1, 1}, {14, 15, 1, 1}, {5, 6, 7, 1}, {3, 5, 7, 2}, {30, 7, 1, 1}};
    for (int i = 0; i < 5; i++) {
        struct ggml_tensor * r = reshapes[i];
        if (!CHECK(r != NULL, "reshape %d: %s", i, ggml_last_error())) continue;
        CHECK(r->data == a->data && ggml_is_contiguous(r), "reshape %d is a contiguous view of a", i);
        struct ggml_tensor * out = ggml_cont(ctx, r);
        if (poison_compute(ctx, out)) expect(out, arr_reshape(ra, want_ne[i]), 0, "reshape %d to %s", i, shape_s(want_ne[i]));
    }

    /* views with offsets and strides (in floats: nb / 4) */
    struct {
        struct ggml_tensor * v;
        int64_t ne[4], st[4], offset;
    } views[] = {
        {ggml_view_1d(ctx, a, 11, 13 * 4), {11, 1, 1, 1}, {1, 11, 11, 11}, 13},
        {ggml_view_2d(ctx, a, 4, 3, a->nb[1], 2 * a->nb[1] + 3 * 4), {4, 3, 1, 1}, {1, 7, 21, 21}, 2 * 7 + 3},
        {ggml_view_2d(ctx, a, 3, 4, 2 * a->nb[1], 4), {3, 4, 1, 1}, {1, 14, 56, 56}, 1},  /* every other row */
        {ggml_view_3d(ctx, a, 2, 3, 2, a->nb[1], a->nb[2], 4 + a->nb[1] + a->nb[2]), {2, 3, 2, 1}, {1, 7, 35, 70}, 1 + 7 + 35},
        {ggml_view_4d(ctx, a, 3, 2, 2, 2, a->nb[1], a->nb[2], a->nb[3], 4 * 4 + 3 * a->nb[1] + a->nb[2]), {3, 2, 2, 2}, {1, 7, 35, 105}, 4 + 21 + 35},
        {ggml_view_4d(ctx, a, 2, 5, 3, 1, a->nb[2], a->nb[1], a->nb[3], 4 * 6), {2, 5, 3, 1}, {1, 35, 7, 105}, 6},  /* swapped strides */
    };
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
        struct ggml_tensor * v = views[i].v;
        if (!CHECK(v != NULL, "view %zu: %s", i, ggml_last_error())) continue;
        CHECK(v->data == (char *) a->data + views[i].offset * 4, "view %zu points offset bytes into a", i);
        struct ggml_tensor * out = ggml_cont(ctx, v);
        if (poison_compute(ctx, out)) expect(out, ref_view(ra, views[i].ne, views[i].st, views[i].offset), 0, "view %zu", i);
    }
    /* a view of a view adds the offsets */
    struct ggml_tensor * vv = ggml_view_1d(ctx, ggml_view_1d(ctx, a, 100, 50 * 4), 9, 7 * 4);
    const int64_t ne_vv[4] = {9, 1, 1, 1}, st_vv[4] = {1, 9, 9, 9};
    CHECK(vv && vv->data == (char *) a->data + 57 * 4, "a view of a view points 50 + 7 floats into a");
    struct ggml_tensor * vvc = vv ? ggml_cont(ctx, vv) : NULL;
    if (poison_compute(ctx, vvc)) expect(vvc, ref_view(ra, ne_vv, st_vv, 57), 0, "view of a view");

    /* all 24 permutations, and a permutation of a permutation */
    int n_perm = 0;
    for (int p0 = 0; p0 < 4; p0++) for (int p1 = 0; p1 < 4; p1++) for (int p2 = 0; p2 < 4; p2++) for (int p3 = 0; p3 < 4; p3++) {
        if ((1 << p0 | 1 << p1 | 1 << p2 | 1 << p3) != 15) continue;
        const int ax[4] = {p0, p1, p2, p3};
        struct ggml_tensor * pv = ggml_permute(ctx, a, p0, p1, p2, p3);
        if (!CHECK(pv != NULL, "permute(%d,%d,%d,%d): %s", p0, p1, p2, p3, ggml_last_error())) continue;
        CHECK(pv->data == a->data, "permute is a view");
        struct ggml_tensor * out = ggml_cont(ctx, pv);
        if (poison_compute(ctx, out)) expect(out, arr_permute(ra, ax), 0, "permute(%d,%d,%d,%d)", p0, p1, p2, p3);
        n_perm++;
    }
    CHECK(n_perm == 24, "24 permutations tested");
    const int ax1[4] = {2, 0, 3, 1}, ax2[4] = {1, 3, 0, 2};
    struct ggml_tensor * pp = ggml_cont(ctx, ggml_permute(ctx, ggml_permute(ctx, a, 2, 0, 3, 1), 1, 3, 0, 2));
    if (poison_compute(ctx, pp)) expect(pp, arr_permute(arr_permute(ra, ax1), ax2), 0, "permute of a permute");
    struct ggml_tensor * tr = ggml_cont(ctx, ggml_transpose(ctx, a));
    if (poison_compute(ctx, tr)) expect(tr, arr_permute(ra, layout_axes[TRANSPOSED]), 0, "transpose");
    ggml_free(ctx);
    pool_free();
}

/* ---- binary ops with broadcasting, add_inplace ---- */

static void test_binary(void) {
    static const int64_t cases[][2][4] = {
        {{7, 5, 3, 2}, {7, 5, 3, 2}}, {{7, 5, 3, 2}, {7, 1, 3, 1}}, {{7, 5, 3, 2}, {1, 5, 1, 1}},
        {{7, 5, 3, 2}, {1, 1, 1, 1}}, {{7, 5, 3, 2}, {7, 5, 1, 2}}, {{7, 5, 3, 2}, {1, 5, 3, 1}},
        {{6, 5, 3, 2}, {2, 5, 1, 2}},  /* b tiled three times along ne0 */
        {{1, 13, 1, 3}, {1, 13, 1, 3}}, {{1, 13, 1, 3}, {1, 1, 1, 3}}, {{1, 13, 1, 3}, {1, 13, 1, 1}},
    };
    static const enum ggml_op ops[4] = {GGML_OP_ADD, GGML_OP_SUB, GGML_OP_MUL, GGML_OP_DIV};
    static struct ggml_tensor * (*const fns[4])(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = {ggml_add, ggml_sub, ggml_mul, ggml_div};
    /* layouts of (a, b): both contiguous, a transposed, b permuted, both strided */
    static const enum layout lays[4][2] = {{CONTIG, CONTIG}, {TRANSPOSED, CONTIG}, {CONTIG, PERMUTED}, {PERMUTED, TRANSPOSED}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct ggml_context * ctx = tc_ctx(8);
        for (int o = 0; o < 4; o++) {
            for (int l = 0; l < 4; l++) {
                arr ra, rb;
                const bool div = ops[o] == GGML_OP_DIV;
                struct ggml_tensor * a = make_input(ctx, cases[c][0], lays[l][0], -1, 1, false, &ra);
                struct ggml_tensor * b = make_input(ctx, cases[c][1], lays[l][1], div ? 0.5 : -1, div ? 2 : 1, div, &rb);
                struct ggml_tensor * out = fns[o](ctx, a, b);
                if (poison_compute(ctx, out))
                    expect(out, ref_binary(ops[o], ra, rb), TOL, "%s a %s %s, b %s %s", ggml_op_name(ops[o]), shape_s(cases[c][0]),
                           layout_name[lays[l][0]], shape_s(cases[c][1]), layout_name[lays[l][1]]);
            }
        }
        /* add_inplace: the result is a's memory, for a contiguous and a transposed a */
        for (int l = 0; l < 2; l++) {
            const enum layout lay = l ? TRANSPOSED : CONTIG;
            arr ra, rb;
            struct ggml_tensor * a = make_input(ctx, cases[c][0], lay, -1, 1, false, &ra);
            struct ggml_tensor * b = make_input(ctx, cases[c][1], CONTIG, -1, 1, false, &rb);
            struct ggml_tensor * out = ggml_add_inplace(ctx, a, b);
            const arr want = ref_binary(GGML_OP_ADD, ra, rb);
            if (compute(ctx, out)) {
                CHECK(out->data == a->data, "add_inplace result shares a's memory");
                expect(out, want, TOL, "add_inplace %s (a %s) result", shape_s(cases[c][0]), layout_name[lay]);
                expect(a, want, TOL, "add_inplace %s (a %s) wrote into a", shape_s(cases[c][0]), layout_name[lay]);
            }
        }
        ggml_free(ctx);
        pool_free();
    }
}

/* ---- unary ops ---- */

static arr ref_unary(enum ggml_op op, arr a, double s) {
    arr r = arr_new(a.ne);
    for (int64_t i = 0; i < nel(a.ne); i++) {
        const double x = a.v[i];
        r.v[i] = op == GGML_OP_SQR ? x * x : op == GGML_OP_SQRT ? sqrt(x) : op == GGML_OP_LOG ? log(x) : s * x;
    }
    return r;
}

static void test_unary(void) {
    static const int64_t shapes[][4] = {{7, 5, 3, 2}, {1, 13, 1, 3}, {1, 1, 1, 1}};
    const float s = -1.7f;
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        struct ggml_context * ctx = tc_ctx(8);
        for (int lay = 0; lay < N_LAYOUTS; lay++) {
            arr rs, rp;  /* signed inputs for scale and sqr, positive ones for sqrt and log */
            struct ggml_tensor * xs = make_input(ctx, shapes[c], lay, -2, 2, false, &rs);
            struct ggml_tensor * xp = make_input(ctx, shapes[c], lay, 0.01, 4, false, &rp);
            struct ggml_tensor * outs[4] = {ggml_scale(ctx, xs, s), ggml_sqr(ctx, xs), ggml_sqrt(ctx, xp), ggml_log(ctx, xp)};
            const enum ggml_op ops[4] = {GGML_OP_SCALE, GGML_OP_SQR, GGML_OP_SQRT, GGML_OP_LOG};
            for (int o = 0; o < 4; o++) {
                if (poison_compute(ctx, outs[o]))
                    expect(outs[o], ref_unary(ops[o], o < 2 ? rs : rp, (double) s), TOL, "%s %s %s", ggml_op_name(ops[o]), shape_s(shapes[c]), layout_name[lay]);
            }
        }
        ggml_free(ctx);
        pool_free();
    }
}

/* ---- reductions ---- */

static void test_reductions(void) {
    static const int64_t shapes[][4] = {{7, 5, 3, 2}, {1, 13, 1, 3}, {13, 1, 1, 1}, {70, 3, 1, 1}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        struct ggml_context * ctx = tc_ctx(8);
        for (int lay = 0; lay < N_LAYOUTS; lay++) {
            arr ra;
            struct ggml_tensor * a = make_input(ctx, shapes[c], lay, -1, 1, false, &ra);
            struct ggml_tensor * sum = ggml_sum(ctx, a), * rows = ggml_sum_rows(ctx, a), * mean = ggml_mean(ctx, a);
            const int64_t one[4] = {1, 1, 1, 1};
            arr rsum = arr_new(one);
            for (int64_t i = 0; i < nel(ra.ne); i++) rsum.v[0] += ra.v[i];
            if (poison_compute(ctx, sum)) expect(sum, rsum, TOL, "sum %s %s", shape_s(shapes[c]), layout_name[lay]);
            if (poison_compute(ctx, rows)) expect(rows, ref_rows(ra, false), TOL, "sum_rows %s %s", shape_s(shapes[c]), layout_name[lay]);
            if (poison_compute(ctx, mean)) expect(mean, ref_rows(ra, true), TOL, "mean %s %s", shape_s(shapes[c]), layout_name[lay]);
        }
        ggml_free(ctx);
        pool_free();
    }
}

/* ---- repeat, repeat_back, acc ---- */

static void test_repeat(void) {
    static const int64_t cases[][2][4] = {  /* small, big */
        {{7, 1, 3, 1}, {7, 5, 3, 2}}, {{1, 5, 1, 1}, {7, 5, 3, 2}}, {{2, 1, 3, 1}, {6, 5, 3, 2}},
        {{1, 1, 1, 1}, {3, 2, 2, 2}}, {{7, 5, 3, 2}, {7, 5, 3, 2}}, {{1, 13, 1, 3}, {2, 13, 3, 3}},
        /* more tiles than repeat_back sums in one block (32): a bias gradient, and blocks that end inside a row */
        {{5, 1, 1, 1}, {5, 100, 1, 1}}, {{3, 2, 1, 1}, {6, 40, 1, 1}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct ggml_context * ctx = tc_ctx(8);
        for (int lay = 0; lay < N_LAYOUTS; lay++) {
            arr rs, rb;
            struct ggml_tensor * small = make_input(ctx, cases[c][0], lay, -1, 1, false, &rs);
            struct ggml_tensor * big = make_input(ctx, cases[c][1], lay, -1, 1, false, &rb);
            struct ggml_tensor * shape_big = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, cases[c][1]);
            struct ggml_tensor * shape_small = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, cases[c][0]);
            struct ggml_tensor * rep = ggml_repeat(ctx, small, shape_big);
            struct ggml_tensor * back = ggml_repeat_back(ctx, big, shape_small);
            if (poison_compute(ctx, rep)) expect(rep, ref_repeat(rs, cases[c][1]), TOL, "repeat %s -> %s %s", shape_s(cases[c][0]), shape_s(cases[c][1]), layout_name[lay]);
            if (poison_compute(ctx, back)) expect(back, ref_repeat_back(rb, cases[c][0]), TOL, "repeat_back %s -> %s %s", shape_s(cases[c][1]), shape_s(cases[c][0]), layout_name[lay]);
        }
        ggml_free(ctx);
        pool_free();
    }
}

static void test_acc(void) {
    struct ggml_context * ctx = tc_ctx(8);
    const int64_t ne[4] = {7, 5, 3, 2};
    struct {
        int64_t bne[4], st[4], offset;  /* region strides and offset in floats */
    } cases[] = {
        {{3, 2, 2, 1}, {1, 7, 35, 105}, 2 + 7 + 35 + 105},
        {{7, 5, 3, 2}, {1, 7, 35, 105}, 0},                  /* the whole of a */
        {{4, 3, 1, 1}, {1, 14, 42, 42}, 1},                  /* every other row */
        {{5, 1, 1, 1}, {1, 5, 5, 5}, 203},                   /* the last 5 elements */
        {{2, 3, 2, 2}, {1, 35, 7, 105}, 3},                  /* rows and planes swapped */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int lay = 0; lay < N_LAYOUTS; lay++) {
            arr ra, rb;
            struct ggml_tensor * a = rand_f32(ctx, ne, -1, 1, false, &ra);
            struct ggml_tensor * b = make_input(ctx, cases[c].bne, lay, -1, 1, false, &rb);
            struct ggml_tensor * out = ggml_acc(ctx, a, b, (size_t) cases[c].st[1] * 4, (size_t) cases[c].st[2] * 4,
                                                (size_t) cases[c].st[3] * 4, (size_t) cases[c].offset * 4);
            if (poison_compute(ctx, out)) expect(out, ref_acc(ra, rb, cases[c].st, cases[c].offset), TOL, "acc case %zu, b %s", c, layout_name[lay]);
            CHECK(out && out->data != a->data, "acc makes a new tensor");
            expect(a, ra, 0, "acc leaves a unchanged");
        }
    }
    ggml_free(ctx);
    pool_free();
}

/* ---- mul_mat ---- */

static void test_mul_mat(void) {
    static const struct { int64_t K, M, N, a2, a3, b2, b3; } cases[] = {
        {13, 7, 5, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1}, {1, 4, 3, 1, 1, 1, 1}, {17, 1, 1, 1, 1, 1, 1},
        {70, 3, 2, 1, 1, 1, 1}, {33, 6, 7, 3, 1, 3, 2},
        {9, 4, 3, 2, 1, 6, 3},   /* a broadcast over dims 2 (groups of 3) and 3 */
        {5, 3, 2, 2, 3, 4, 6},   /* groups of 2 in both dims */
        {6, 5, 4, 1, 2, 5, 2},
        {300, 130, 103, 1, 1, 1, 1}, {257, 65, 13, 1, 1, 2, 1},  /* past a panel, a reduction block, a column group */
    };
    static const enum layout lays[5][2] = {{CONTIG, CONTIG}, {TRANSPOSED, CONTIG}, {CONTIG, TRANSPOSED}, {TRANSPOSED, TRANSPOSED}, {PERMUTED, PERMUTED}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct ggml_context * ctx = tc_ctx(32);
        const int64_t ane[4] = {cases[c].K, cases[c].M, cases[c].a2, cases[c].a3};
        const int64_t bne[4] = {cases[c].K, cases[c].N, cases[c].b2, cases[c].b3};
        for (int l = 0; l < 5; l++) {
            arr ra, rb;
            struct ggml_tensor * a = make_input(ctx, ane, lays[l][0], -1, 1, false, &ra);
            struct ggml_tensor * b = make_input(ctx, bne, lays[l][1], -1, 1, false, &rb);
            struct ggml_tensor * out = ggml_mul_mat(ctx, a, b);
            if (poison_compute(ctx, out))
                expect(out, ref_mul_mat(ra, rb), TOL, "mul_mat a %s %s, b %s %s", shape_s(ane), layout_name[lays[l][0]], shape_s(bne), layout_name[lays[l][1]]);
        }
        ggml_free(ctx);
        pool_free();
    }
}

/* Sizes past one panel (64 rows with AVX-512), one reduction block (256),
 * several column groups and partial last groups, on every operand layout;
 * the result is the same bytes on 1 and 2 threads as on NTH. */
static void test_out_prod(void) {
    static const struct { int64_t M, N, K, a2, a3, b2, b3; } cases[] = {
        {7, 5, 13, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1}, {4, 3, 1, 1, 1, 1, 1}, {1, 1, 17, 1, 1, 1, 1},
        {3, 2, 70, 1, 1, 1, 1}, {6, 7, 33, 3, 1, 3, 2},
        {4, 3, 9, 2, 1, 6, 3},   /* a broadcast over dims 2 (groups of 3) and 3 */
        {3, 2, 5, 2, 3, 4, 6},   /* groups of 2 in both dims */
        {130, 103, 300, 1, 1, 1, 1}, {65, 13, 257, 1, 1, 2, 1}, {128, 82, 96, 1, 1, 1, 1},
    };
    static const enum layout lays[5][2] = {{CONTIG, CONTIG}, {TRANSPOSED, CONTIG}, {CONTIG, TRANSPOSED}, {TRANSPOSED, TRANSPOSED}, {PERMUTED, PERMUTED}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct ggml_context * ctx = tc_ctx(32);
        const int64_t ane[4] = {cases[c].M, cases[c].K, cases[c].a2, cases[c].a3};
        const int64_t bne[4] = {cases[c].N, cases[c].K, cases[c].b2, cases[c].b3};
        for (int l = 0; l < 5; l++) {
            arr ra, rb;
            struct ggml_tensor * a = make_input(ctx, ane, lays[l][0], -1, 1, false, &ra);
            struct ggml_tensor * b = make_input(ctx, bne, lays[l][1], -1, 1, false, &rb);
            struct ggml_tensor * out = ggml_out_prod(ctx, a, b);
            if (!poison_compute(ctx, out)) continue;
            expect(out, ref_out_prod(ra, rb), TOL, "out_prod a %s %s, b %s %s", shape_s(ane), layout_name[lays[l][0]], shape_s(bne), layout_name[lays[l][1]]);
            const size_t nb = ggml_nbytes(out);
            void * first = malloc(nb);
            memcpy(first, out->data, nb);
            for (int nth = 1; nth <= 2; nth++) {
                struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
                ggml_build_forward_expand(g, out);
                tc_poison(out);
                tc_compute(ctx, g, nth);
                CHECK(memcmp(first, out->data, nb) == 0, "out_prod %s x %s: %d thread(s) give the bytes of %d", shape_s(ane), shape_s(bne), nth, NTH);
            }
            free(first);
        }
        ggml_free(ctx);
        pool_free();
    }
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3), * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 2);
    CHECK(ggml_out_prod(ctx, a, b) == NULL && strstr(ggml_last_error(), "ne[1]"), "out_prod refuses a->ne[1] != b->ne[1]");
    CHECK(ggml_out_prod(ctx, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2), ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 5, 3, 3)) == NULL,
          "out_prod refuses planes of b that are not a multiple of a's");
    CHECK(ggml_out_prod(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 3), ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3)) == NULL, "out_prod refuses F16");
    ggml_free(ctx);
}

/* ---- soft_max ---- */

/* A mask of shape ne (F32 or F16) with values in [-1, 1], each -Inf with
 * probability p_inf, and row `inf_row` (if >= 0) -Inf everywhere. The
 * reference holds exactly what the tensor stores (halves decoded here). */
static struct ggml_tensor * make_mask(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4], double p_inf, int64_t inf_row, arr * ref) {
    struct ggml_tensor * m = ggml_new_tensor(ctx, type, 4, ne);
    *ref = arr_new(ne);
    FOR4(ne, i0, i1, i2, i3) {
        const float v = (i1 == inf_row || tc_uniform(0, 1) < p_inf) ? -INFINITY : (float) tc_uniform(-1, 1);
        const int64_t i = flat(ne, i0, i1, i2, i3);
        if (type == GGML_TYPE_F16) {
            ((uint16_t *) m->data)[i] = tc_ref_fp32_to_fp16(v);
            ref->v[i] = tc_ref_fp16_to_f64(((uint16_t *) m->data)[i]);
        } else {
            ((float *) m->data)[i] = v;
            ref->v[i] = v;
        }
    }
    return m;
}

static void test_soft_max(void) {
    /* plain soft_max */
    static const int64_t shapes[][4] = {{7, 5, 3, 2}, {1, 13, 1, 3}, {64, 3, 1, 1}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        struct ggml_context * ctx = tc_ctx(8);
        for (int lay = 0; lay < N_LAYOUTS; lay++) {
            arr rx;
            struct ggml_tensor * x = make_input(ctx, shapes[c], lay, -3, 3, false, &rx);
            struct ggml_tensor * y = ggml_soft_max(ctx, x);
            if (poison_compute(ctx, y)) expect(y, ref_soft_max(rx, (arr) {{0}, NULL}, 1.0, 0.0), TOL, "soft_max %s %s", shape_s(shapes[c]), layout_name[lay]);
        }
        ggml_free(ctx);
        pool_free();
    }
    /* soft_max_ext: scale, F32 / F16 masks with -Inf entries and a fully -Inf row, mask broadcasting, ALiBi */
    static const struct {
        int64_t xne[4], mne[4];
        enum ggml_type mtype;
        float scale, max_bias;
        int64_t inf_row;
        enum layout lay;
    } cases[] = {
        {{7, 5, 3, 2}, {7, 6, 1, 1}, GGML_TYPE_F32, 0.7f, 0.0f, 2, CONTIG},    /* mask has more rows than x (padding) */
        {{7, 5, 3, 2}, {7, 6, 1, 1}, GGML_TYPE_F16, 0.7f, 0.0f, 2, CONTIG},
        {{7, 5, 3, 2}, {7, 5, 3, 2}, GGML_TYPE_F16, 1.5f, 0.0f, 0, TRANSPOSED},
        {{7, 5, 3, 2}, {7, 5, 1, 2}, GGML_TYPE_F32, 0.3f, 0.0f, 4, PERMUTED},
        {{7, 5, 6, 2}, {7, 5, 1, 1}, GGML_TYPE_F32, 1.3f, 8.0f, -1, CONTIG},  /* 6 heads: n_head_log2 = 4, heads 4,5 use m1 */
        {{7, 5, 6, 2}, {7, 5, 3, 1}, GGML_TYPE_F16, 1.0f, 2.5f, 3, CONTIG},   /* mask planes i2 % 3 */
        {{5, 3, 8, 1}, {5, 4, 1, 1}, GGML_TYPE_F32, 0.9f, 8.0f, -1, TRANSPOSED}, /* 8 heads: slopes 2^-1 .. 2^-8 */
        {{9, 4, 3, 1}, {9, 4, 1, 1}, GGML_TYPE_F16, 1.0f, 1.0f, 1, CONTIG},   /* 3 heads: n_head_log2 = 2 */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct ggml_context * ctx = tc_ctx(8);
        arr rx, rm;
        struct ggml_tensor * x = make_input(ctx, cases[c].xne, cases[c].lay, -2, 2, false, &rx);
        struct ggml_tensor * m = make_mask(ctx, cases[c].mtype, cases[c].mne, 0.2, cases[c].inf_row, &rm);
        struct ggml_tensor * y = ggml_soft_max_ext(ctx, x, m, cases[c].scale, cases[c].max_bias);
        if (poison_compute(ctx, y)) {
            const arr want = ref_soft_max(rx, rm, cases[c].scale, cases[c].max_bias);
            expect(y, want, TOL, "soft_max_ext case %zu (x %s %s, %s mask %s, scale %g, max_bias %g)", c, shape_s(cases[c].xne),
                   layout_name[cases[c].lay], ggml_type_name(cases[c].mtype), shape_s(cases[c].mne), (double) cases[c].scale, (double) cases[c].max_bias);
            if (cases[c].inf_row >= 0) {  /* fully masked rows are exactly zero, not NaN */
                int bad = 0;
                for (int64_t i3 = 0; i3 < y->ne[3]; i3++) for (int64_t i2 = 0; i2 < y->ne[2]; i2++)
                    for (int64_t i0 = 0; i0 < y->ne[0]; i0++)
                        if (ggml_get_f32_nd(y, (int) i0, (int) cases[c].inf_row, (int) i2, (int) i3) != 0.0f) bad++;
                CHECK(bad == 0, "soft_max_ext case %zu: %d elements of the fully masked row are not 0", c, bad);
            }
        }
        ggml_free(ctx);
        pool_free();
    }
    /* the ALiBi reference itself, at values worked out by hand */
    CHECK(fabs(alibi_slope(8, 0, 8) - 0.5) < 1e-15 && fabs(alibi_slope(8, 7, 8) - 1.0 / 256) < 1e-15, "ALiBi slopes for 8 heads");
    CHECK(fabs(alibi_slope(8, 4, 6) - 0.5) < 1e-15 && fabs(alibi_slope(8, 5, 6) - 0.125) < 1e-15, "ALiBi m1 slopes for 6 heads");
}

int main(void) {
    tc_seed(42);
    test_copies();
    test_layout_ops();
    test_binary();
    test_unary();
    test_reductions();
    test_repeat();
    test_acc();
    test_mul_mat();
    test_out_prod();
    test_soft_max();
    printf("SIMD path: %s\n", ggml_cpu_simd_name());
    return tc_finish("ops_forward");
}

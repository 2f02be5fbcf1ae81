/* api_fuzz.c -- a random API-sequence fuzzer, driven by the tests' RNG: by a
 * seed in test_fuzz.c, by the fuzzer's bytes in tests/fuzz/fuzz_api.c.
 *
 * Each sequence (seeded from the base seed and its own index) opens one or two
 * contexts (holding data, no_alloc, or tiny enough to run out of memory) and
 * runs random actions from the table at the bottom over a pool of tensors:
 * tensor creation with random (often invalid) shapes and types, every op
 * constructor with random (often mismatched, sometimes NULL) arguments and
 * parameters, graphs (small, so that they fill up), autodiff on random losses
 * with random parameters, graph resets, computes with 1-3 threads, backend
 * allocation and transfers, element access.
 *
 * Every call must give either a valid result or NULL / a failing status with
 * a non-empty ggml_last_error(); after each failure every context must still
 * work (a small graph built when the context was opened still computes the
 * right answer, the value it computed before is intact, and canary tensors
 * interleaved with the others are unchanged). When a computation succeeds,
 * invariants that need no reference implementation are spot-checked: bounded
 * ops give finite results for bounded finite inputs, soft_max rows sum to 1
 * (or are all zero), attention outputs stay within the range of V, the
 * padding of flash_attn_back's result is zero, and results are bitwise the
 * same when recomputed with another thread count. */
#include "api_fuzz.h"
#include "core/op_list.h"  /* white-box: the parameters of a node, decoded */
#include "ops/harness.h"     /* the op table: every op's rows */
#include "test_common.h"
#include "workload.h"

#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define POOL_MAX    48
#define MAX_GRAPHS  6
#define MAX_CANARY  6
#define MAX_BUFFERS 32
#define CANARY_N    64
#define ELEM_LIMIT  4096                 /* larger tensors are checked but never computed */
#define ALLOC_LIMIT ((size_t) 64 << 20)  /* backend allocations that would succeed are kept below this */
#define BOUND       1e3                  /* inputs within this are "bounded" for the invariants */

/* ------------------------------------------------------------------ state */

enum ctx_kind { CTX_DATA, CTX_NO_ALLOC, CTX_TINY, CTX_KINDS };
static const char * const ctx_kind_name[CTX_KINDS] = {"data", "no_alloc", "tiny"};

struct canary { struct ggml_tensor * t; uint32_t seed; bool set; };

struct fctx {
    struct ggml_context * ctx;
    enum ctx_kind kind;
    struct ggml_tensor * probe_x, * probe_y;  /* probe_y = sum(probe_x^2) = 14 */
    struct ggml_cgraph * probe_g;
    struct canary canary[MAX_CANARY];
    int n_canary;
};

struct fgraph {
    struct ggml_cgraph * g;
    bool grads;     /* created with gradients */
    bool backward;  /* its backward pass was built */
};

struct fuzz {
    struct fctx c[2];
    int n_ctx;
    struct ggml_tensor * pool[POOL_MAX];
    int n_pool, next;               /* a ring: next is where the next tensor goes */
    struct fgraph graphs[MAX_GRAPHS];
    int n_graphs;
    ggml_backend_t backend;
    ggml_backend_buffer_t buffers[MAX_BUFFERS];
    int n_buffers;
};

struct fz_counts fz_counts;
#define n_calls      fz_counts.calls
#define n_failures   fz_counts.failures
#define n_computes   fz_counts.computes
#define n_invariants fz_counts.invariants
#define n_sequences  fz_counts.sequences
static bool verbose;
static size_t probe_bytes;  /* arena bytes the probe takes */

#define TRACE(...) do { if (verbose) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* ------------------------------------------------------------------ random values */

static uint64_t rnd(uint64_t n) { return n ? tc_next() % n : 0; }
static bool chance(double p) { return tc_uniform(0.0, 1.0) < p; }
#define PICK(arr) ((arr)[rnd(sizeof(arr) / sizeof((arr)[0]))])

static int64_t small_dim(void) { return 1 + (int64_t) rnd(chance(0.5) ? 3 : 7); }

/* A dimension: mostly small; with `wild`, sometimes 0, negative, huge or overflowing. */
static int64_t rand_dim(bool wild) {
    if (!wild || chance(0.88)) return small_dim();
    static const int64_t odd[] = {0, 0, 0, -1, -7, INT64_MIN, INT64_MAX, INT64_MAX / 4, INT64_MAX / 2 + 1,
                                  (INT64_C(1) << 61) - 1, INT64_C(1) << 31, INT64_C(1) << 32, INT64_C(1) << 40, 100000};
    return PICK(odd);
}

static enum ggml_type rand_type(bool wild) {
    if (wild && chance(0.06)) {
        static const int bad[] = {2, 3, 25, 27, 34, 35, 39, 40, 41, 42, 1000, -1, INT_MAX};
        return (enum ggml_type) PICK(bad);
    }
    /* I16 stands for the integer storage types (I8, I16) that only copies, views and accessors take */
    const uint64_t r = rnd(20);
    return r < 14 ? GGML_TYPE_F32 : r < 18 ? GGML_TYPE_F16 : r < 19 ? GGML_TYPE_I32 : GGML_TYPE_I16;
}

static float special_value(void) {
    static const float v[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e30f, 65504.0f, 1e-40f, FLT_MAX, -FLT_MAX, 3e9f};
    return PICK(v);
}

/* Scale-like parameters: mostly ordinary, sometimes 0, huge, NaN or Inf. */
static float rand_param(void) { return chance(0.85) ? (float) tc_uniform(-2.0, 2.0) : special_value(); }

static size_t rand_size(size_t valid_max) {
    if (chance(0.75)) return (size_t) rnd((uint64_t) valid_max + 1);
    static const size_t odd[] = {SIZE_MAX, SIZE_MAX - 3, SIZE_MAX / 2 + 1, (size_t) 1 << 62, (size_t) 1 << 40, 17, 4096};
    return chance(0.5) ? valid_max + 1 + rnd(64) : PICK(odd);
}

/* ------------------------------------------------------------------ tensor helpers */

/* Elements counting zero dimensions as 1: what a kernel may loop over. */
static double volume(const struct ggml_tensor * t) {
    double v = 1.0;
    for (int i = 0; i < GGML_MAX_DIMS; i++) v *= t->ne[i] > 1 ? (double) t->ne[i] : 1.0;
    return v;
}

/* Small enough to fill, compute and scan (inputs and the memory viewed too). */
static bool small_enough(const struct ggml_tensor * t) {
    if (volume(t) > ELEM_LIMIT) return false;
    if (t->view_src && volume(t->view_src) > 4 * ELEM_LIMIT) return false;
    for (int i = 0; i < GGML_MAX_SRC; i++)
        if (t->src[i] && volume(t->src[i]) > 4 * ELEM_LIMIT) return false;
    return true;
}

/* a type of the enum: rand_type's wild picks include quantized types (Q4_0, Q4_1, TQ1_0, TQ2_0, MXFP4, NVFP4,
 * Q1_0, Q2_0) that tensors may have */
static bool valid_type(enum ggml_type t) { return (unsigned) t < GGML_TYPE_COUNT; }

static const char * describe(const struct ggml_tensor * t, char * buf, size_t n) {
    if (!t) { snprintf(buf, n, "NULL"); return buf; }
    snprintf(buf, n, "%s[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]%s%s", ggml_type_name(t->type), t->ne[0], t->ne[1], t->ne[2],
             t->ne[3], ggml_is_contiguous(t) ? "" : "~", t->data ? "" : "(nodata)");
    return buf;
}

/* Fill with values in [-amp, amp]; with `dirty`, some specials (NaN, Inf, huge). */
static void fill(struct ggml_tensor * t, double amp, bool dirty) {
    if (!t || !t->data || !valid_type(t->type) || volume(t) > ELEM_LIMIT) return;
    const int64_t n = ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) ggml_set_f32_1d(t, i, dirty && chance(0.1) ? special_value() : (float) tc_uniform(-amp, amp));
}

/* A mask: rows that are all -Inf, otherwise a mix of 0, -Inf and small values. */
static void fill_mask(struct ggml_tensor * t) {
    if (!t || !t->data || !valid_type(t->type) || volume(t) > ELEM_LIMIT) return;
    const int64_t n0 = t->ne[0], rows = ggml_nrows(t);
    for (int64_t r = 0; r < rows; r++) {
        const bool all_masked = chance(0.1);
        for (int64_t i = 0; i < n0; i++) {
            const uint64_t k = rnd(4);
            const float v = all_masked || k == 1 ? -INFINITY : k == 0 || k == 2 ? 0.0f : (float) tc_uniform(-3.0, 1.0);
            ggml_set_f32_1d(t, r * n0 + i, v);
        }
    }
}

/* max |x| over t; NaN or +-Inf give INFINITY, except -Inf when allow_neg_inf. */
static double max_abs(const struct ggml_tensor * t, bool allow_neg_inf) {
    if (!t->data) return ggml_nelements(t) == 0 ? 0.0 : INFINITY;
    double m = 0.0;
    const int64_t n = ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) {
        const float x = ggml_get_f32_1d(t, i);
        if (allow_neg_inf && x == -INFINITY) continue;
        if (!isfinite(x)) return INFINITY;
        if (fabs(x) > m) m = fabs(x);
    }
    return m;
}

/* ------------------------------------------------------------------ pool, graphs, contexts */

static void keep(struct fuzz * f, struct ggml_tensor * t) {
    if (!t || !small_enough(t)) return;
    f->pool[f->next] = t;
    f->next = (f->next + 1) % POOL_MAX;
    if (f->n_pool < POOL_MAX) f->n_pool++;
}

/* A pool tensor (recent ones more often), or now and then NULL. */
static struct ggml_tensor * pick(struct fuzz * f) {
    if (f->n_pool == 0 || chance(0.03)) return NULL;
    if (chance(0.5)) {
        const int k = (int) rnd(f->n_pool < 8 ? (uint64_t) f->n_pool : 8);
        return f->pool[(f->next - 1 - k + POOL_MAX) % POOL_MAX];
    }
    return f->pool[rnd((uint64_t) f->n_pool)];
}

/* A pool tensor satisfying ok(t, a), or NULL. */
static struct ggml_tensor * find(struct fuzz * f, bool (*ok)(const struct ggml_tensor *, const struct ggml_tensor *), const struct ggml_tensor * a) {
    if (f->n_pool == 0) return NULL;
    const int start = (int) rnd((uint64_t) f->n_pool);
    for (int i = 0; i < f->n_pool; i++) {
        struct ggml_tensor * t = f->pool[(start + i) % f->n_pool];
        if (ok(t, a)) return t;
    }
    return NULL;
}

static struct fctx * pick_fctx(struct fuzz * f) { return &f->c[rnd((uint64_t) f->n_ctx)]; }
static struct ggml_context * pick_ctx(struct fuzz * f) { return chance(0.02) ? NULL : pick_fctx(f)->ctx; }

static struct fgraph * pick_graph(struct fuzz * f) { return f->n_graphs ? &f->graphs[rnd((uint64_t) f->n_graphs)] : NULL; }

static struct fgraph * add_graph(struct fuzz * f, struct ggml_cgraph * g, bool grads, bool backward) {
    struct fgraph * slot = f->n_graphs < MAX_GRAPHS ? &f->graphs[f->n_graphs++] : &f->graphs[rnd(MAX_GRAPHS)];
    *slot = (struct fgraph) {g, grads, backward};
    return slot;
}

/* canary contents: a bit pattern derived from its seed */
static void canary_pattern(uint32_t seed, uint32_t * out) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    for (int i = 0; i < CANARY_N; i++) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; out[i] = (uint32_t) s; }
}

/* Set the contents of canaries that got memory (from a backend allocation). */
static void arm_canaries(struct fctx * c) {
    for (int i = 0; i < c->n_canary; i++) {
        struct canary * k = &c->canary[i];
        if (k->set || !k->t->data) continue;
        canary_pattern(k->seed, k->t->data);
        k->set = true;
    }
}

static void check_canaries(struct fctx * c, const char * after) {
    uint32_t want[CANARY_N];
    for (int i = 0; i < c->n_canary; i++) {
        const struct canary * k = &c->canary[i];
        if (!k->set) continue;
        canary_pattern(k->seed, want);
        CHECK(memcmp(want, k->t->data, sizeof want) == 0, "after %s: canary %d of a %s context was overwritten", after, i,
              ctx_kind_name[c->kind]);
    }
}

/* The probe: sum(x^2) for x = (1, 2, 3), built with data even in a no_alloc context. */
static bool make_probe(struct fctx * c) {
    const bool na = ggml_get_no_alloc(c->ctx);
    ggml_set_no_alloc(c->ctx, false);
    c->probe_x = ggml_new_tensor_1d(c->ctx, GGML_TYPE_F32, 3);
    c->probe_y = ggml_sum(c->ctx, ggml_sqr(c->ctx, c->probe_x));
    c->probe_g = ggml_new_graph_custom(c->ctx, 4, false);
    ggml_set_no_alloc(c->ctx, na);
    if (!CHECK(c->probe_x && c->probe_y && c->probe_g, "cannot build the probe: %s", ggml_last_error())) return false;
    for (int i = 0; i < 3; i++) ggml_set_f32_1d(c->probe_x, i, (float) (i + 1));
    ggml_build_forward_expand(c->probe_g, c->probe_y);
    return CHECK(ggml_graph_compute_with_ctx(c->ctx, c->probe_g, 1) == GGML_STATUS_SUCCESS && ggml_get_f32_1d(c->probe_y, 0) == 14.0f,
                 "the probe computes 14");
}

/* The context still works and what it computed is intact. */
static void check_usable(struct fctx * c, const char * after, int nth) {
    check_canaries(c, after);
    CHECK(ggml_get_f32_1d(c->probe_x, 2) == 3.0f && ggml_get_f32_1d(c->probe_y, 0) == 14.0f,
          "after %s: the probe's data in a %s context changed", after, ctx_kind_name[c->kind]);
    CHECK(ggml_graph_compute_with_ctx(c->ctx, c->probe_g, nth) == GGML_STATUS_SUCCESS && ggml_get_f32_1d(c->probe_y, 0) == 14.0f,
          "after %s: a %s context no longer computes correctly (%s)", after, ctx_kind_name[c->kind], ggml_last_error());
}

static bool open_ctx(struct fctx * c, enum ctx_kind kind) {
    memset(c, 0, sizeof *c);
    c->kind = kind;
    size_t mem = kind == CTX_DATA ? ((size_t) 1 + rnd(2)) << 20 : kind == CTX_NO_ALLOC ? (size_t) 256 << 10 : probe_bytes + rnd(4096);
    struct ggml_init_params p = {mem, NULL, kind == CTX_NO_ALLOC};
    c->ctx = ggml_init(p);
    if (!CHECK(c->ctx != NULL, "ggml_init(%zu): %s", mem, ggml_last_error())) return false;
    return make_probe(c);
}

/* ------------------------------------------------------------------ checking calls */

/* Per-call outcome counts, printed with GGMLR_FUZZ_STATS=1 (to see what the fuzzer reaches). */
#define MAX_STATS 160
static struct { const char * call; long ok, failed; } stats[MAX_STATS];
static bool print_stats;

void fz_print_stats(void) {
    for (int i = 0; print_stats && i < MAX_STATS && stats[i].call; i++) printf("  %-36s %8ld ok %8ld failed\n", stats[i].call, stats[i].ok, stats[i].failed);
}

static void count(const char * call, bool ok) {
    for (int i = 0; print_stats && i < MAX_STATS; i++) {
        if (stats[i].call && strcmp(stats[i].call, call) != 0) continue;
        stats[i].call = call;
        if (ok) stats[i].ok++; else stats[i].failed++;
        return;
    }
}

static void failed(struct fuzz * f, const char * call) {
    n_failures++;
    count(call, false);
    CHECK(ggml_last_error()[0] != '\0', "%s failed without a message", call);
    TRACE("  -> failed: %s", ggml_last_error());
    const int nth = n_failures % 16 == 0 ? 2 : 1;
    for (int i = 0; i < f->n_ctx; i++) check_usable(&f->c[i], call, nth);
}

/* A constructor's result: NULL with a message, or a sane tensor (NULL for a NULL input). */
static struct ggml_tensor * check_result(struct fuzz * f, const char * call, struct ggml_tensor * t, bool null_input) {
    n_calls++;
    if (!t) { failed(f, call); return NULL; }
    count(call, true);
    char d[128];
    TRACE("  -> %s", describe(t, d, sizeof d));
    CHECK(!null_input, "%s: returned a tensor for a NULL input", call);
    CHECK(valid_type(t->type), "%s: result has type %d", call, (int) t->type);
    for (int i = 0; i < GGML_MAX_DIMS; i++) CHECK(t->ne[i] >= 0, "%s: result has ne[%d] = %" PRId64, call, i, t->ne[i]);
    CHECK(memchr(t->name, '\0', sizeof t->name) != NULL, "%s: result's name is not terminated", call);
    return t;
}

static enum ggml_status check_status(struct fuzz * f, const char * call, enum ggml_status st) {
    n_calls++;
    if (st != GGML_STATUS_SUCCESS) failed(f, call);
    else { count(call, true); TRACE("  -> ok"); }
    return st;
}

/* Run a constructor: clear the error first, then check what it gave. */
#define CALL(f, name, null_input, expr) \
    (ggml_clear_error(), check_result((f), (name), (expr), (null_input)))
#define STATUS(f, name, expr) (ggml_clear_error(), check_status((f), (name), (expr)))

static struct ggml_tensor * new_tensor(struct fuzz * f, struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4]) {
    TRACE("new_tensor_4d(%s, %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ")", ggml_type_name(type), ne[0], ne[1], ne[2], ne[3]);
    return CALL(f, "ggml_new_tensor_4d", !ctx, ggml_new_tensor_4d(ctx, type, ne[0], ne[1], ne[2], ne[3]));
}

/* A new tensor filled with bounded values, or now and then with some NaN and
 * +-Inf among them (no op may crash on them; the invariants skip such inputs). */
static struct ggml_tensor * new_filled(struct fuzz * f, struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4]) {
    struct ggml_tensor * t = new_tensor(f, ctx, type, ne);
    fill(t, 2.0, chance(0.1));
    return t;
}

/* ------------------------------------------------------------------ computing and invariants */

static enum ggml_status compute(struct fuzz * f, struct ggml_cgraph * g, int nth) {
    n_computes++;
    TRACE("compute(%d nodes, %d threads)", ggml_graph_n_nodes(g), nth);
    if (chance(0.5)) {
        ggml_backend_cpu_set_n_threads(f->backend, nth);
        return STATUS(f, "ggml_backend_graph_compute", ggml_backend_graph_compute(f->backend, g));
    }
    return STATUS(f, "ggml_graph_compute_with_ctx", ggml_graph_compute_with_ctx(f->c[0].ctx, g, nth));
}

static bool is_view_op(enum ggml_op op) {
    return op == GGML_OP_NONE || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

/* A node that writes into memory it does not own (in-place add, cpy), other than a gradient accumulator. */
static bool writes_in_place(const struct ggml_cgraph * g, const struct ggml_tensor * t) {
    if (is_view_op(t->op) || !t->view_src) return false;
    for (int i = 0; i < ggml_graph_n_nodes(g); i++)
        if (ggml_graph_get_grad_acc(g, ggml_graph_node(g, i)) == t) return false;
    return true;
}

static const struct ggml_tensor * memory_of(const struct ggml_tensor * t) { return t->view_src ? t->view_src : t; }

/* Values may change after their use: a node writes in place, or an input is
 * a leaf (ggml_view_tensor, no dependency) aliasing memory a node writes. */
static bool unstable(const struct ggml_cgraph * g) {
    const int n = ggml_graph_n_nodes(g);
    for (int i = 0; i < n; i++)
        if (writes_in_place(g, ggml_graph_node(g, i))) return true;
    for (int i = 0; i < n; i++) {
        const struct ggml_tensor * t = ggml_graph_node(g, i);
        for (int s = 0; s < GGML_MAX_SRC; s++) {
            const struct ggml_tensor * src = t->src[s];
            if (!src || src->op != GGML_OP_NONE || !src->view_src) continue;
            for (int j = 0; j < n; j++) {
                const struct ggml_tensor * w = ggml_graph_node(g, j);
                if (!is_view_op(w->op) && memory_of(w) == src->view_src) return true;
            }
        }
    }
    return false;
}

/* Values of the graph's nodes, in order, into a malloc'd array (count in *n). */
static float * snapshot(const struct ggml_cgraph * g, int64_t * n) {
    int64_t total = 0;
    for (int i = 0; i < ggml_graph_n_nodes(g); i++) {
        const struct ggml_tensor * t = ggml_graph_node(g, i);
        if (t->data) total += ggml_nelements(t);
    }
    float * v = malloc((size_t) (total + 1) * sizeof *v);
    int64_t k = 0;
    for (int i = 0; i < ggml_graph_n_nodes(g) && v; i++) {
        const struct ggml_tensor * t = ggml_graph_node(g, i);
        if (!t->data) continue;
        for (int64_t j = 0; j < ggml_nelements(t); j++) v[k++] = ggml_get_f32_1d(t, j);
    }
    *n = k;
    return v;
}

static void dump_node(const struct ggml_tensor * t);

/* Recomputing with another thread count gives bitwise the same values. */
static void check_thread_independence(struct fuzz * f, struct fgraph * fg, int nth) {
    if (unstable(fg->g)) return;
    const int other = nth == 1 ? 2 + (int) rnd(2) : 1;
    if (fg->backward) {
        ggml_graph_reset(fg->g);
        if (compute(f, fg->g, nth) != GGML_STATUS_SUCCESS) return;
    }
    int64_t n1, n2;
    float * a = snapshot(fg->g, &n1);
    if (fg->backward) ggml_graph_reset(fg->g);
    if (compute(f, fg->g, other) == GGML_STATUS_SUCCESS) {
        float * b = snapshot(fg->g, &n2);
        n_invariants++;
        if (!CHECK(a && b && n1 == n2 && memcmp(a, b, (size_t) n1 * sizeof *a) == 0,
                   "results with %d and %d threads differ (graph of %d nodes)", nth, other, ggml_graph_n_nodes(fg->g)) && a && b) {
            int64_t k = 0;  /* the first node that differs */
            for (int i = 0; i < ggml_graph_n_nodes(fg->g); i++) {
                const struct ggml_tensor * t = ggml_graph_node(fg->g, i);
                if (!t->data) continue;
                const int64_t n = ggml_nelements(t);
                if (k + n <= n1 && memcmp(a + k, b + k, (size_t) n * sizeof *a) != 0) {
                    if (verbose) fprintf(stderr, "  node %d of:\n", i);
                    for (int j = 0; verbose && j < ggml_graph_n_nodes(fg->g); j++) {
                        const struct ggml_tensor * u = ggml_graph_node(fg->g, j);
                        char d[128], d0[128], d1[128];
                        fprintf(stderr, "    %d %p %s %s <- %p %s, %p %s (view of %p)\n", j, (const void *) u, ggml_op_name(u->op), describe(u, d, sizeof d),
                                (const void *) u->src[0], describe(u->src[0], d0, sizeof d0), (const void *) u->src[1], describe(u->src[1], d1, sizeof d1), (const void *) u->view_src);
                    }
                    dump_node(t);
                    break;
                }
                k += n;
            }
        }
        free(b);
    }
    free(a);
}

static void check_soft_max_rows(const struct ggml_tensor * t) {
    const int64_t n0 = t->ne[0], rows = ggml_nrows(t);
    for (int64_t r = 0; r < rows; r++) {
        double s = 0.0;
        bool all_zero = true;
        for (int64_t i = 0; i < n0; i++) {
            const float y = ggml_get_f32_1d(t, r * n0 + i);
            s += y;
            all_zero = all_zero && y == 0.0f;
            if (!CHECK(y >= 0.0f && y <= 1.0f, "soft_max: element %.9g outside [0, 1]", (double) y)) return;
        }
        if (!CHECK(all_zero || fabs(s - 1.0) <= 1e-4, "soft_max: row %" PRId64 " sums to %.9g", r, s)) return;
    }
}

/* flash_attn_back's packing: the padding between and after the slices is zero. */
static void check_fab_padding(const struct ggml_tensor * t) {
    const struct ggmlr_flash_attn_srcs srcs = ggmlr_flash_attn_srcs_decode(t);
    const int64_t n[3] = {ggml_nelements(srcs.q), ggml_nelements(srcs.k), ggml_nelements(srcs.v)};
    int64_t off = 0;
    for (int s = 0; s < 3; s++) {
        const int64_t padded = (n[s] + 3) / 4 * 4;
        for (int64_t i = off + n[s]; i < off + padded; i++)
            if (!CHECK(ggml_get_f32_1d(t, i) == 0.0f, "flash_attn_back: padding element %" PRId64 " is not zero", i)) return;
        off += padded;
    }
    CHECK(off == ggml_nelements(t), "flash_attn_back: %" PRId64 " elements, slices need %" PRId64, ggml_nelements(t), off);
}

/* With GGMLR_FUZZ_TRACE: a node, its parameters and its inputs' values. */
static void dump_tensor(const char * what, const struct ggml_tensor * t) {
    char d[128];
    fprintf(stderr, "  %s %s nb %zu,%zu,%zu,%zu:", what, describe(t, d, sizeof d), t->nb[0], t->nb[1], t->nb[2], t->nb[3]);
    for (int64_t i = 0; t->data && i < ggml_nelements(t) && i < 256; i++) fprintf(stderr, " %g", (double) ggml_get_f32_1d(t, i));
    fputc('\n', stderr);
}

static void dump_node(const struct ggml_tensor * t) {
    if (!verbose) return;
    int32_t words[3];  /* the first three parameter words, shown as floats and as integers */
    memcpy(words, t->op_params, sizeof words);
    float f[3];
    memcpy(f, words, sizeof f);
    fprintf(stderr, "  op %s params %g %g %g (%d %d %d)\n", ggml_op_name(t->op), (double) f[0], (double) f[1], (double) f[2],
            (int) words[0], (int) words[1], (int) words[2]);
    dump_tensor("result", t);
    for (int s = 0; s < GGML_MAX_SRC; s++) if (t->src[s]) dump_tensor("src", t->src[s]);
}

/* Invariants of one computed node whose inputs are finite and bounded. */
static void check_node(const struct ggml_tensor * t) {
    if (!t->data || volume(t) > ELEM_LIMIT) return;
    float param = 1.0f;  /* the op's scale, where it has one */
    int mask_src = -1, n_src = 2;
    switch (t->op) {
        case GGML_OP_MEAN:
            if (t->src[0]->ne[0] == 0) return;  /* the mean of an empty row is 0/0 */
            break;
        case GGML_OP_ADD: case GGML_OP_SIN: case GGML_OP_COS: case GGML_OP_SUB: case GGML_OP_MUL: case GGML_OP_SQR: case GGML_OP_SUM: case GGML_OP_SUM_ROWS:
        case GGML_OP_MUL_MAT: case GGML_OP_OUT_PROD: case GGML_OP_REPEAT: case GGML_OP_REPEAT_BACK: case GGML_OP_DUP:
        case GGML_OP_CONT: case GGML_OP_ACC: case GGML_OP_GET_ROWS: case GGML_OP_GET_ROWS_BACK: case GGML_OP_CROSS_ENTROPY_LOSS:
        case GGML_OP_SET: case GGML_OP_DIAG: case GGML_OP_DIAG_MASK_ZERO: case GGML_OP_TRI:  /* input elements or zeros */
        case GGML_OP_ADD_ID: case GGML_OP_MUL_MAT_ID: case GGML_OP_ROLL: case GGML_OP_TIMESTEP_EMBEDDING:
            break;
        case GGML_OP_CROSS_ENTROPY_LOSS_BACK: n_src = 3; break;
        case GGML_OP_UNARY:
            switch (ggmlr_unary_params_decode(t).op) {
                case GGML_UNARY_OP_EXP: case GGML_UNARY_OP_EXPM1: return;  /* e^x overflows for bounded x */
                case GGML_UNARY_OP_XIELU: return;  /* its coefficients are unbounded */
                default: break;
            }
            break;
        case GGML_OP_NORM: case GGML_OP_RMS_NORM:
            break;
        case GGML_OP_SCALE: param = ggmlr_scale_params_decode(t).s; break;
        case GGML_OP_SOFT_MAX_BACK: param = ggmlr_soft_max_params_decode(t).scale; break;
        case GGML_OP_SOFT_MAX: param = ggmlr_soft_max_params_decode(t).scale; mask_src = 1; break;
        case GGML_OP_ROPE: case GGML_OP_ROPE_BACK:  /* |y| <= |attn_factor| (1 + 0.1 |ln freq_scale|) |x| sqrt(2) */
            if (ggmlr_rope_freq_factors_decode(t)) return;  /* a zero frequency factor makes the angle infinite */
            param = ggmlr_rope_params_decode(t).attn_factor;
            break;
        case GGML_OP_FLASH_ATTN_EXT: param = ggmlr_flash_attn_params_decode(t).scale; mask_src = 3; n_src = 4; break;
        case GGML_OP_FLASH_ATTN_BACK: param = ggmlr_flash_attn_params_decode(t).scale; mask_src = 3; n_src = 5; break;
        default: return;
    }
    if (!(fabsf(param) <= BOUND)) return;
    /* An F16 result holds at most 65504: SQR or MUL of inputs near BOUND overflow it by right.
     * Inputs within 1 keep every op above finite in F16 (a sum of 4 ELEM_LIMIT of them included). */
    const double in_bound = t->type == GGML_TYPE_F16 ? 1.0 : BOUND;
    for (int s = 0; s < n_src; s++) {
        const struct ggml_tensor * src = t->src[s];
        if (!src) continue;
        if (volume(src) > 4 * ELEM_LIMIT || !(max_abs(src, s == mask_src) <= in_bound)) return;
    }
    n_invariants++;
    const double m = max_abs(t, false);
    if (!CHECK(isfinite(m), "%s of bounded finite inputs gave a non-finite value", ggml_op_name(t->op))) {
        dump_node(t);
        return;
    }
    if (t->op == GGML_OP_SOFT_MAX && !ggmlr_soft_max_sinks_decode(t)) check_soft_max_rows(t);
    if (t->op == GGML_OP_FLASH_ATTN_EXT) {
        const double vmax = max_abs(ggmlr_flash_attn_srcs_decode(t).v, false);
        CHECK(m <= vmax * (1 + 1e-4) + 1e-6, "flash_attn_ext: |out| %.9g exceeds max |v| %.9g", m, vmax);
    }
    if (t->op == GGML_OP_FLASH_ATTN_BACK) check_fab_padding(t);
}

static void check_computed(struct fuzz * f, struct fgraph * fg, int nth) {
    for (int i = 0; i < f->n_ctx; i++) check_canaries(&f->c[i], "compute");
    for (int i = 0; i < ggml_graph_n_nodes(fg->g); i++) count(ggml_op_name(ggml_graph_node(fg->g, i)->op), true);
    if (unstable(fg->g)) return;  /* inputs may have changed after their use */
    for (int i = 0; i < ggml_graph_n_nodes(fg->g); i++) {
        const struct ggml_tensor * t = ggml_graph_node(fg->g, i);
        if (!writes_in_place(fg->g, t)) check_node(t);
    }
    if (chance(0.25)) check_thread_independence(f, fg, nth);
}

/* ------------------------------------------------------------------ actions: tensors */

static void act_new_tensor(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f);
    const enum ggml_type type = rand_type(true);
    const bool wild = chance(0.3);
    int64_t ne[4];
    for (int i = 0; i < 4; i++) ne[i] = i == 0 || chance(0.6) ? rand_dim(wild) : 1;
    struct ggml_tensor * t;
    switch (rnd(3)) {
        case 0: t = new_tensor(f, ctx, type, ne); break;
        case 1: {
            const int n_dims = chance(0.9) ? 1 + (int) rnd(4) : PICK(((const int[]) {0, -1, 5, INT_MAX}));
            TRACE("new_tensor(n_dims %d)", n_dims);
            t = CALL(f, "ggml_new_tensor", !ctx, ggml_new_tensor(ctx, type, n_dims, ne));
            break;
        }
        default: {
            TRACE("new_tensor_1d/2d/3d");
            switch (rnd(3)) {
                case 0: t = CALL(f, "ggml_new_tensor_1d", !ctx, ggml_new_tensor_1d(ctx, type, ne[0])); break;
                case 1: t = CALL(f, "ggml_new_tensor_2d", !ctx, ggml_new_tensor_2d(ctx, type, ne[0], ne[1])); break;
                default: t = CALL(f, "ggml_new_tensor_3d", !ctx, ggml_new_tensor_3d(ctx, type, ne[0], ne[1], ne[2])); break;
            }
        }
    }
    if (t) {
        /* facts about any accepted tensor, however large: no arithmetic overflows */
        (void) ggml_nrows(t);
        (void) ggml_nelements(t);
        (void) ggml_nbytes(t);
        (void) ggml_n_dims(t);
        fill(t, chance(0.2) ? 50.0 : 2.0, chance(0.05));
        keep(f, t);
    }
}

static void act_new_other(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f);
    struct ggml_tensor * a = pick(f), * t;
    switch (rnd(3)) {
        case 0:
            TRACE("new_f32");
            t = CALL(f, "ggml_new_f32", !ctx, ggml_new_f32(ctx, rand_param()));
            break;
        case 1:
            TRACE("dup_tensor");
            t = CALL(f, "ggml_dup_tensor", !ctx || !a, ggml_dup_tensor(ctx, a));
            fill(t, 2.0, false);
            break;
        default:
            TRACE("view_tensor");
            t = CALL(f, "ggml_view_tensor", !ctx || !a, ggml_view_tensor(ctx, a));
            break;
    }
    keep(f, t);
}

static void act_fill(struct fuzz * f) {
    struct ggml_tensor * t = pick(f);
    if (!t || !t->data) return;
    TRACE("fill");
    if (chance(0.3)) fill_mask(t);
    else fill(t, chance(0.2) ? 30.0 : 2.0, chance(0.05));
}

/* ------------------------------------------------------------------ actions: ops */

static bool broadcasts_over(const struct ggml_tensor * t, const struct ggml_tensor * a) { return ggml_can_repeat(t, a) && t->type == GGML_TYPE_F32; }
static bool tiles(const struct ggml_tensor * t, const struct ggml_tensor * a) { return ggml_can_repeat(a, t); }
static bool same_count(const struct ggml_tensor * t, const struct ggml_tensor * a) { return ggml_nelements(t) == ggml_nelements(a); }
static bool matmul_partner(const struct ggml_tensor * t, const struct ggml_tensor * a) {
    return t->ne[0] == a->ne[0] && a->ne[2] > 0 && a->ne[3] > 0 && t->ne[2] % a->ne[2] == 0 && t->ne[3] % a->ne[3] == 0;
}

/* Shape of a tensor that broadcasts over a: each dimension a's, 1 or a divisor. */
static void broadcast_shape(const struct ggml_tensor * a, int64_t ne[4]) {
    for (int i = 0; i < 4; i++) {
        const int64_t n = a->ne[i];
        ne[i] = chance(0.5) || n <= 1 ? n : chance(0.5) ? 1 : (n % 2 == 0 ? n / 2 : n);
    }
}

/* A partner for a: often compatible (from the pool or new), else anything. */
static struct ggml_tensor * partner(struct fuzz * f, struct ggml_context * ctx, struct ggml_tensor * a,
                                    bool (*ok)(const struct ggml_tensor *, const struct ggml_tensor *), void (*shape)(const struct ggml_tensor *, int64_t *)) {
    if (!a || chance(0.3)) return pick(f);
    struct ggml_tensor * b = chance(0.5) ? find(f, ok, a) : NULL;
    if (b) return b;
    int64_t ne[4];
    shape(a, ne);
    return new_filled(f, ctx, GGML_TYPE_F32, ne);
}

static void tile_shape(const struct ggml_tensor * a, int64_t ne[4]) { for (int i = 0; i < 4; i++) ne[i] = a->ne[i] * (chance(0.7) ? 1 : 2); }
static void count_shape(const struct ggml_tensor * a, int64_t ne[4]) {
    const int64_t n = ggml_nelements(a);
    ne[0] = n % 2 == 0 && chance(0.5) ? 2 : 1;
    ne[1] = n / ne[0];
    ne[2] = ne[3] = 1;
}
static bool out_prod_partner(const struct ggml_tensor * t, const struct ggml_tensor * a) {
    return t->ne[1] == a->ne[1] && a->ne[2] > 0 && a->ne[3] > 0 && t->ne[2] % a->ne[2] == 0 && t->ne[3] % a->ne[3] == 0;
}
static void out_prod_shape(const struct ggml_tensor * a, int64_t ne[4]) {
    ne[0] = small_dim();
    ne[1] = a->ne[1];
    ne[2] = a->ne[2] * (chance(0.7) ? 1 : 2);
    ne[3] = a->ne[3];
}
static void matmul_shape(const struct ggml_tensor * a, int64_t ne[4]) {
    ne[0] = a->ne[0];
    ne[1] = small_dim();
    ne[2] = a->ne[2] * (chance(0.7) ? 1 : 2);
    ne[3] = a->ne[3];
}

static void act_unary(struct fuzz * f) {
    static const struct { const char * name; struct ggml_tensor * (*fn)(struct ggml_context *, struct ggml_tensor *); } ops[] = {
        {"ggml_dup", ggml_dup}, {"ggml_cont", ggml_cont}, {"ggml_sqr", ggml_sqr}, {"ggml_sqrt", ggml_sqrt}, {"ggml_log", ggml_log},
        {"ggml_sum", ggml_sum}, {"ggml_sum_rows", ggml_sum_rows}, {"ggml_mean", ggml_mean}, {"ggml_soft_max", ggml_soft_max},
        {"ggml_transpose", ggml_transpose},
        {"ggml_neg", ggml_neg}, {"ggml_tanh", ggml_tanh}, {"ggml_relu", ggml_relu}, {"ggml_sigmoid", ggml_sigmoid},
        {"ggml_gelu", ggml_gelu}, {"ggml_gelu_erf", ggml_gelu_erf}, {"ggml_silu", ggml_silu}, {"ggml_exp", ggml_exp},
        {"ggml_gelu_quick", ggml_gelu_quick},
        {"ggml_abs", ggml_abs}, {"ggml_sgn", ggml_sgn}, {"ggml_step", ggml_step}, {"ggml_elu", ggml_elu},
        {"ggml_hardswish", ggml_hardswish}, {"ggml_hardsigmoid", ggml_hardsigmoid}, {"ggml_expm1", ggml_expm1},
        {"ggml_softplus", ggml_softplus}, {"ggml_floor", ggml_floor}, {"ggml_ceil", ggml_ceil}, {"ggml_round", ggml_round},
        {"ggml_trunc", ggml_trunc}, {"ggml_sin", ggml_sin}, {"ggml_cos", ggml_cos},
        /* halving ne0 (the GLUs) */
        {"ggml_swiglu", ggml_swiglu}, {"ggml_geglu_swapped", ggml_geglu_swapped}, {"ggml_reglu", ggml_reglu},
    };
    const size_t k = rnd(sizeof ops / sizeof ops[0]);
    struct ggml_context * ctx = pick_ctx(f);
    struct ggml_tensor * a = pick(f);
    char d[128];
    TRACE("%s(%s)", ops[k].name, describe(a, d, sizeof d));
    struct ggml_tensor * t = CALL(f, ops[k].name, !ctx || !a, ops[k].fn(ctx, a));
    const bool halves = strstr(ops[k].name, "glu") != NULL;
    if (t && a && (k <= 4 || (k >= 10 && !halves))) CHECK(ggml_are_same_shape(t, a), "%s: result shaped like its input", ops[k].name);
    if (t && a && halves) CHECK(t->ne[0] == a->ne[0] / 2 && t->ne[1] == a->ne[1], "%s: half of each row (an odd one's last element unread)", ops[k].name);
    if (t && k == 5) CHECK(ggml_is_scalar(t), "ggml_sum: a scalar");
    keep(f, t);
}

static void act_binary(struct fuzz * f) {
    typedef struct ggml_tensor * (*binary_fn)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *);
    static const struct {
        const char * name;
        binary_fn fn;
        bool (*ok)(const struct ggml_tensor *, const struct ggml_tensor *);
        void (*shape)(const struct ggml_tensor *, int64_t *);
    } ops[] = {
        {"ggml_add", ggml_add, broadcasts_over, broadcast_shape}, {"ggml_sub", ggml_sub, broadcasts_over, broadcast_shape},
        {"ggml_mul", ggml_mul, broadcasts_over, broadcast_shape}, {"ggml_div", ggml_div, broadcasts_over, broadcast_shape},
        {"ggml_add_inplace", ggml_add_inplace, broadcasts_over, broadcast_shape},
        {"ggml_repeat", ggml_repeat, tiles, tile_shape}, {"ggml_repeat_back", ggml_repeat_back, broadcasts_over, broadcast_shape},
        {"ggml_cpy", ggml_cpy, same_count, count_shape}, {"ggml_reshape", ggml_reshape, same_count, count_shape},
        {"ggml_mul_mat", ggml_mul_mat, matmul_partner, matmul_shape},
        {"ggml_out_prod", ggml_out_prod, out_prod_partner, out_prod_shape},
    };
    const size_t k = rnd(sizeof ops / sizeof ops[0]);
    struct ggml_context * ctx = pick_ctx(f);
    struct ggml_tensor * a = pick(f);
    struct ggml_tensor * b = partner(f, pick_fctx(f)->ctx, a, ops[k].ok, ops[k].shape);
    if (k == 7 && b && chance(0.3)) {  /* cpy into a view of a's own memory, or a type change */
        struct ggml_tensor * c = find(f, same_count, b);
        if (c) a = c;
    }
    char da[128], db[128];
    TRACE("%s(%s, %s)", ops[k].name, describe(a, da, sizeof da), describe(b, db, sizeof db));
    struct ggml_tensor * t = CALL(f, ops[k].name, !ctx || !a || !b, ops[k].fn(ctx, a, b));
    if (t && k <= 4) CHECK(ggml_are_same_shape(t, a), "%s: result shaped like a", ops[k].name);
    if (t && k == 9) CHECK(t->ne[0] == a->ne[1] && t->ne[1] == b->ne[1] && t->ne[2] == b->ne[2] && t->ne[3] == b->ne[3], "mul_mat: result shape");
    if (t && k == 10) CHECK(t->ne[0] == a->ne[0] && t->ne[1] == b->ne[0] && t->ne[2] == b->ne[2] && t->ne[3] == b->ne[3], "out_prod: result shape");
    if (t && (k == 9 || k == 10) && chance(0.5)) {  /* bf16 products, or a precision outside the enum (refused, kept) */
        const enum ggml_prec before = ggml_mul_mat_get_prec(t), prec = chance(0.9) ? GGML_PREC_BF16 : (enum ggml_prec) rnd(20);
        TRACE("ggml_mul_mat_set_prec(%d)", (int) prec);
        ggml_mul_mat_set_prec(t, prec);
        const bool valid = prec == GGML_PREC_DEFAULT || prec == GGML_PREC_F32 || prec == GGML_PREC_BF16;
        CHECK(ggml_mul_mat_get_prec(t) == (valid ? prec : before), "mul_mat_set_prec: kept when valid, unchanged otherwise");
    }
    keep(f, t);
}

/* Copies and in-place adds between views of the same memory: a tensor and
 * itself shifted by one element. */
static void act_overlap(struct fuzz * f) {
    struct ggml_context * ctx = pick_fctx(f)->ctx;
    const int64_t n = 2 + (int64_t) rnd(8), ne[4] = {n, 2 + (int64_t) rnd(3), 1, 1};
    struct ggml_tensor * b = new_filled(f, ctx, chance(0.8) ? GGML_TYPE_F32 : GGML_TYPE_F16, ne);
    if (!b) return;
    const size_t es = ggml_type_size(b->type);
    TRACE("overlapping view of %" PRId64 "x%" PRId64, ne[0], ne[1]);
    struct ggml_tensor * a = CALL(f, "ggml_view_2d", false, ggml_view_2d(ctx, b, n, ne[1], b->nb[1] - es, es));
    if (!a) return;
    keep(f, chance(0.5) ? CALL(f, "ggml_cpy", false, ggml_cpy(ctx, a, b)) : CALL(f, "ggml_cpy", false, ggml_cpy(ctx, b, a)));
    if (b->type == GGML_TYPE_F32) keep(f, CALL(f, "ggml_add_inplace", false, ggml_add_inplace(ctx, a, b)));
}

static void act_scale(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f);
    struct ggml_tensor * a = pick(f);
    const float s = rand_param();
    TRACE("scale(%g)", (double) s);
    keep(f, CALL(f, "ggml_scale", !ctx || !a, ggml_scale(ctx, a, s)));
}

static void act_reshape(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f);
    struct ggml_tensor * a = pick(f);
    int64_t ne[4] = {1, 1, 1, 1};
    const int64_t n = a ? ggml_nelements(a) : 1;
    const int nd = 1 + (int) rnd(4);
    if (chance(0.7)) {  /* a factorisation of n */
        int64_t rest = n;
        for (int i = 0; i < nd - 1; i++) {
            const int64_t d = rest % 2 == 0 && chance(0.5) ? 2 : rest % 3 == 0 && chance(0.5) ? 3 : 1;
            ne[i] = d;
            rest /= d == 0 ? 1 : d;
        }
        ne[nd - 1] = rest;
        if (chance(0.2)) ne[rnd((uint64_t) nd)] += chance(0.5) ? 1 : -1;
    } else {
        for (int i = 0; i < nd; i++) ne[i] = rand_dim(true);
    }
    TRACE("reshape_%dd(%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ")", nd, ne[0], ne[1], ne[2], ne[3]);
    struct ggml_tensor * t;
    switch (nd) {
        case 1: t = CALL(f, "ggml_reshape_1d", !ctx || !a, ggml_reshape_1d(ctx, a, ne[0])); break;
        case 2: t = CALL(f, "ggml_reshape_2d", !ctx || !a, ggml_reshape_2d(ctx, a, ne[0], ne[1])); break;
        case 3: t = CALL(f, "ggml_reshape_3d", !ctx || !a, ggml_reshape_3d(ctx, a, ne[0], ne[1], ne[2])); break;
        default: t = CALL(f, "ggml_reshape_4d", !ctx || !a, ggml_reshape_4d(ctx, a, ne[0], ne[1], ne[2], ne[3])); break;
    }
    if (t) CHECK(ggml_nelements(t) == n && (!a->data || t->data == a->data), "reshape: same elements, same memory");
    keep(f, t);
}

static void act_view(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f);
    struct ggml_tensor * a = pick(f);
    const size_t es = a ? ggml_type_size(a->type) : 4, nbytes = a ? ggml_nbytes(a) : 0;
    const bool sane = chance(0.7);
    int64_t ne[4];
    size_t nb[4], offset;
    for (int i = 0; i < 4; i++) ne[i] = sane ? 1 + (int64_t) rnd(a && a->ne[i] > 0 ? (uint64_t) a->ne[i] : 2) : rand_dim(true);
    nb[0] = es;
    for (int i = 1; i < 4; i++) {
        /* strides: packed, a's own, zero (broadcast), or random */
        const uint64_t k = rnd(sane ? 3 : 5);
        nb[i] = k == 0 ? nb[i - 1] * (size_t) (ne[i - 1] > 0 ? ne[i - 1] : 1) : k == 1 && a ? a->nb[i] : k == 2 ? 0 : k == 3 ? rnd(64) : rand_size(1 << 12);
    }
    offset = sane ? es * rnd(nbytes / (es ? es : 1) + 1) : rand_size(nbytes);
    const int nd = 1 + (int) rnd(4);
    TRACE("view_%dd(ne %" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 " nb %zu,%zu,%zu offset %zu)", nd, ne[0], ne[1], ne[2], ne[3], nb[1], nb[2], nb[3], offset);
    struct ggml_tensor * t;
    switch (nd) {
        case 1: t = CALL(f, "ggml_view_1d", !ctx || !a, ggml_view_1d(ctx, a, ne[0], offset)); break;
        case 2: t = CALL(f, "ggml_view_2d", !ctx || !a, ggml_view_2d(ctx, a, ne[0], ne[1], nb[1], offset)); break;
        case 3: t = CALL(f, "ggml_view_3d", !ctx || !a, ggml_view_3d(ctx, a, ne[0], ne[1], ne[2], nb[1], nb[2], offset)); break;
        default: t = CALL(f, "ggml_view_4d", !ctx || !a, ggml_view_4d(ctx, a, ne[0], ne[1], ne[2], ne[3], nb[1], nb[2], nb[3], offset)); break;
    }
    if (t && a->data) {
        /* the view lies within a's bytes */
        const char * lo = t->data, * base = a->data;
        CHECK(lo >= base && (size_t) (lo - base) + ggml_nbytes(t) <= nbytes, "view: inside its source");
    }
    keep(f, t);
}

static void act_permute(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f);
    struct ggml_tensor * a = pick(f);
    int ax[4] = {0, 1, 2, 3};
    for (int i = 3; i > 0; i--) { const int j = (int) rnd((uint64_t) i + 1), tmp = ax[i]; ax[i] = ax[j]; ax[j] = tmp; }
    if (chance(0.15)) ax[rnd(4)] = PICK(((const int[]) {-1, 4, 0, 3, INT_MIN, INT_MAX}));
    TRACE("permute(%d,%d,%d,%d)", ax[0], ax[1], ax[2], ax[3]);
    struct ggml_tensor * t = CALL(f, "ggml_permute", !ctx || !a, ggml_permute(ctx, a, ax[0], ax[1], ax[2], ax[3]));
    if (t) CHECK(ggml_nelements(t) == ggml_nelements(a) && ggml_nbytes(t) == ggml_nbytes(a), "permute: same elements and bytes");
    keep(f, t);
}

static void act_acc(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f);
    struct ggml_tensor * a = pick(f);
    struct ggml_tensor * b = pick(f);
    if (a && chance(0.6)) {  /* a region that fits */
        int64_t ne[4];
        for (int i = 0; i < 4; i++) ne[i] = a->ne[i] > 0 ? 1 + (int64_t) rnd((uint64_t) a->ne[i]) : 0;
        b = new_filled(f, pick_fctx(f)->ctx, GGML_TYPE_F32, ne);
    }
    const size_t nbytes = a ? ggml_nbytes(a) : 0;
    const bool sane = chance(0.7) && a;
    const size_t nb1 = sane ? a->nb[1] : rand_size(nbytes), nb2 = sane ? a->nb[2] : rand_size(nbytes), nb3 = sane ? a->nb[3] : rand_size(nbytes);
    const size_t offset = sane ? 4 * rnd(2) : rand_size(nbytes);
    TRACE("acc(nb %zu,%zu,%zu offset %zu)", nb1, nb2, nb3, offset);
    keep(f, CALL(f, "ggml_acc", !ctx || !a || !b, ggml_acc(ctx, a, b, nb1, nb2, nb3, offset)));
}

static void act_soft_max_ext(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f);
    struct ggml_tensor * a = pick(f), * mask = NULL;
    if (a && chance(0.6)) {
        int64_t ne[4] = {a->ne[0], a->ne[1] + (int64_t) rnd(2), 1, 1};
        if (chance(0.5)) ne[2] = a->ne[2];
        if (chance(0.3)) ne[3] = a->ne[3];
        if (chance(0.1)) ne[rnd(4)] += 1;
        mask = new_tensor(f, pick_fctx(f)->ctx, chance(0.6) ? GGML_TYPE_F16 : chance(0.8) ? GGML_TYPE_F32 : GGML_TYPE_I32, ne);
        fill_mask(mask);
    } else if (chance(0.2)) {
        mask = pick(f);
    }
    const float scale = chance(0.7) ? (float) tc_uniform(0.0, 2.0) : rand_param();
    const float max_bias = chance(0.6) ? 0.0f : chance(0.6) ? (float) tc_uniform(0.0, 8.0) : rand_param();
    char da[128], dm[128];
    TRACE("soft_max_ext(%s, mask %s, scale %g, max_bias %g)", describe(a, da, sizeof da), describe(mask, dm, sizeof dm), (double) scale, (double) max_bias);
    struct ggml_tensor * t = CALL(f, "ggml_soft_max_ext", !ctx || !a, ggml_soft_max_ext(ctx, a, mask, scale, max_bias));
    if (t) CHECK(ggml_are_same_shape(t, a), "soft_max_ext: shaped like a");
    keep(f, t);
}

/* Normalisation, its backward, the softmax backward and ggml_unary with any op
 * value: eps and scales mostly ordinary, sometimes negative, NaN or Inf. */
static void act_nn(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f);
    struct ggml_tensor * a = pick(f), * t;
    const float eps = chance(0.8) ? (float) tc_uniform(0.0, 1e-3) : chance(0.3) ? 0.0f : rand_param();
    char da[128], db[128];
    switch (rnd(7)) {
        case 5: {
            const int ng = chance(0.8) ? 1 + (int) rnd(6) : (int) rnd(3) - 1;
            const bool l2 = chance(0.5);
            TRACE("%s(%s, n_groups %d, eps %g)", l2 ? "l2_norm" : "group_norm", describe(a, da, sizeof da), ng, (double) eps);
            t = l2 ? CALL(f, "ggml_l2_norm", !ctx || !a, ggml_l2_norm(ctx, a, eps))
                   : CALL(f, "ggml_group_norm", !ctx || !a, ggml_group_norm(ctx, a, ng, eps));
            break;
        }
        case 6: {
            const float lo = rand_param(), hi = rand_param();
            TRACE("cumsum / clamp(%g, %g) / leaky_relu(%g) / xielu of %s", (double) lo, (double) hi, (double) lo, describe(a, da, sizeof da));
            switch (rnd(4)) {
                case 0:  t = CALL(f, "ggml_cumsum", !ctx || !a, ggml_cumsum(ctx, a)); break;
                case 1:  t = CALL(f, "ggml_clamp", !ctx || !a, ggml_clamp(ctx, a, lo, hi)); break;
                case 2:  t = CALL(f, "ggml_leaky_relu", !ctx || !a, ggml_leaky_relu(ctx, a, lo, false)); break;
                default: t = CALL(f, "ggml_xielu", !ctx || !a, ggml_xielu(ctx, a, lo, hi, 0.5f, -1e-6f)); break;
            }
            break;
        }
        case 0: case 1: {
            const bool rms = chance(0.5);
            TRACE("%s(%s, eps %g)", rms ? "rms_norm" : "norm", describe(a, da, sizeof da), (double) eps);
            t = rms ? CALL(f, "ggml_rms_norm", !ctx || !a, ggml_rms_norm(ctx, a, eps)) : CALL(f, "ggml_norm", !ctx || !a, ggml_norm(ctx, a, eps));
            break;
        }
        case 2: {
            struct ggml_tensor * b = partner(f, pick_fctx(f)->ctx, a, broadcasts_over, tile_shape);
            TRACE("rms_norm_back(%s, %s, eps %g)", describe(a, da, sizeof da), describe(b, db, sizeof db), (double) eps);
            t = CALL(f, "ggml_rms_norm_back", !ctx || !a || !b, ggml_rms_norm_back(ctx, a, b, eps));
            break;
        }
        case 3: {
            struct ggml_tensor * b = partner(f, pick_fctx(f)->ctx, a, broadcasts_over, tile_shape);
            const float scale = rand_param(), max_bias = chance(0.7) ? 0.0f : rand_param();
            TRACE("soft_max_ext_back(%s, %s, scale %g, max_bias %g)", describe(a, da, sizeof da), describe(b, db, sizeof db), (double) scale, (double) max_bias);
            t = CALL(f, "ggml_soft_max_ext_back", !ctx || !a || !b, ggml_soft_max_ext_back(ctx, a, b, scale, max_bias));
            break;
        }
        default: {
            const int op = chance(0.8) ? PICK(((const int[]) {0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 18, 21}))
                                   : PICK(((const int[]) {17, 22, -1, INT_MAX}));  /* XIELU only through ggml_xielu */
            TRACE("unary(%s, op %d)", describe(a, da, sizeof da), op);
            t = CALL(f, "ggml_unary", !ctx || !a, ggml_unary(ctx, a, (enum ggml_unary_op) op));
            if (t) CHECK(ggml_get_unary_op(t) == (enum ggml_unary_op) op, "ggml_get_unary_op gives the op back");
        }
    }
    if (t) CHECK(ggml_are_same_shape(t, a), "%s: shaped like a", ggml_op_name(t->op));
    keep(f, t);
}

/* ---- attention ---- */

struct attn_shape { int64_t DK, DV, N, M, H, Hkv, B, Nm, mh, mb; };

/* Consistent shapes; with `wild`, one dimension set to 0 or something huge. */
static struct attn_shape rand_attn_shape(bool wild) {
    struct attn_shape s;
    s.DK = 1 + (int64_t) rnd(chance(0.7) ? 8 : 70);
    s.DV = chance(0.5) ? s.DK : 1 + (int64_t) rnd(chance(0.7) ? 8 : 40);
    s.N = 1 + (int64_t) rnd(chance(0.7) ? 6 : 30);
    s.M = chance(0.05) ? 0 : 1 + (int64_t) rnd(chance(0.6) ? 8 : 40);
    s.Hkv = 1 + (int64_t) rnd(2);
    s.H = s.Hkv * (1 + (int64_t) rnd(3));
    s.B = 1 + (int64_t) rnd(2);
    s.Nm = s.N + (int64_t) rnd(3);
    s.mh = 1 + (int64_t) rnd((uint64_t) s.H);
    s.mb = 1 + (int64_t) rnd((uint64_t) s.B);
    if (wild) {
        if (chance(0.5)) s.N = s.M = s.H = s.Hkv = s.B = s.mh = s.mb = 1;  /* room for one huge dimension */
        int64_t * dims[] = {&s.DK, &s.DV, &s.N, &s.M, &s.H, &s.Hkv, &s.B};
        static const int64_t odd[] = {0, 0, INT64_C(1) << 20, INT64_C(1) << 31, (INT64_C(1) << 61) - 1, INT64_MAX / 4, INT64_MAX};
        *PICK(dims) = PICK(odd);
        if (s.Hkv != 0 && s.H % s.Hkv != 0) s.H = s.Hkv;
        s.Nm = s.N;
    }
    return s;
}

static bool attn_is_small(const struct attn_shape * s) {
    const double q = (double) s->DK * s->N * s->H * s->B, k = (double) s->DK * s->M * s->Hkv * s->B, v = (double) s->DV * s->M * s->Hkv * s->B;
    return q <= ELEM_LIMIT && k <= ELEM_LIMIT && v <= ELEM_LIMIT && (double) s->DV * s->N * s->H * s->B <= ELEM_LIMIT &&
           (double) s->M * s->Nm * s->mh * s->mb <= ELEM_LIMIT;
}

/* An attention input [n0, n1, n2, n3] (a mask when amp is 0): sometimes a
 * permuted view, with dimensions 1 and 2 or 0 and 1 swapped in memory. */
static struct ggml_tensor * attn_input(struct fuzz * f, struct ggml_context * ctx, enum ggml_type type, int64_t n0, int64_t n1, int64_t n2,
                                       int64_t n3, double amp) {
    const uint64_t layout = chance(0.75) ? 0 : 1 + rnd(2);
    const int64_t ne[3][4] = {{n0, n1, n2, n3}, {n0, n2, n1, n3}, {n1, n0, n2, n3}};
    struct ggml_tensor * t = new_tensor(f, ctx, type, ne[layout]);
    if (amp == 0.0) fill_mask(t);
    else fill(t, amp, layout == 0 && chance(0.03));
    if (!t || layout == 0) return t;
    return layout == 1 ? CALL(f, "ggml_permute", false, ggml_permute(ctx, t, 0, 2, 1, 3)) : CALL(f, "ggml_transpose", false, ggml_transpose(ctx, t));
}

/* Inputs of one attention call: fresh tensors of consistent shapes, one of
 * them now and then swapped for a pool tensor, NULL or a misshapen one. */
struct attn_inputs { struct ggml_tensor * q, * k, * v, * mask, * d; };

static struct attn_inputs attn_inputs(struct fuzz * f, bool backward) {
    struct attn_inputs in = {NULL, NULL, NULL, NULL, NULL};
    const bool wild = chance(0.15);
    const struct attn_shape s = rand_attn_shape(wild);
    struct ggml_context * ctx = pick_fctx(f)->ctx;
    const bool big = !attn_is_small(&s), old_no_alloc = ggml_get_no_alloc(ctx);
    if (big) ggml_set_no_alloc(ctx, true);  /* metadata only: check the constructor, never compute */
    TRACE("attention shape DK %" PRId64 " DV %" PRId64 " N %" PRId64 " M %" PRId64 " H %" PRId64 " Hkv %" PRId64 " B %" PRId64 " mask [%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]",
          s.DK, s.DV, s.N, s.M, s.H, s.Hkv, s.B, s.M, s.Nm, s.mh, s.mb);
    const double amp = chance(0.2) ? 8.0 : 1.5;
    const enum ggml_type kv = backward || chance(0.6) ? GGML_TYPE_F32 : GGML_TYPE_F16;
    in.q = attn_input(f, ctx, GGML_TYPE_F32, s.DK, s.N, s.H, s.B, amp);
    in.k = attn_input(f, ctx, kv, s.DK, s.M, s.Hkv, s.B, amp);
    in.v = attn_input(f, ctx, chance(0.9) ? kv : GGML_TYPE_F32, s.DV, s.M, s.Hkv, s.B, amp);
    if (chance(0.6)) in.mask = attn_input(f, ctx, chance(0.7) ? GGML_TYPE_F16 : GGML_TYPE_F32, s.M, s.Nm, s.mh, s.mb, 0.0);
    if (backward) in.d = attn_input(f, ctx, GGML_TYPE_F32, s.DV, s.H, s.N, s.B, amp);
    if (big) ggml_set_no_alloc(ctx, old_no_alloc);
    if (chance(0.2)) {  /* break one input */
        struct ggml_tensor ** slots[] = {&in.q, &in.k, &in.v, &in.mask, &in.d};
        struct ggml_tensor ** victim = slots[rnd(backward ? 5 : 4)];
        if (chance(0.5)) *victim = pick(f);
        else if (*victim && chance(0.7)) {
            int64_t ne[4] = {(*victim)->ne[0], (*victim)->ne[1], (*victim)->ne[2], (*victim)->ne[3]};
            ne[rnd(4)] += chance(0.5) ? 1 : -1;
            *victim = new_filled(f, ctx, chance(0.8) ? (*victim)->type : rand_type(false), ne);
        } else *victim = NULL;
    }
    return in;
}

static float attn_scale(const struct ggml_tensor * q) {
    if (chance(0.8)) return q && q->ne[0] > 0 ? 1.0f / sqrtf((float) q->ne[0]) : 1.0f;
    return rand_param();
}

static void act_flash_attn_ext(struct fuzz * f) {
    const struct attn_inputs in = attn_inputs(f, false);
    struct ggml_context * ctx = pick_ctx(f);
    const float scale = attn_scale(in.q);
    const float max_bias = chance(0.7) ? 0.0f : chance(0.6) ? (float) tc_uniform(0.0, 8.0) : rand_param();
    const float softcap = chance(0.7) ? 0.0f : chance(0.6) ? (float) tc_uniform(0.5, 50.0) : rand_param();
    char dq[128], dk[128], dv[128], dm[128];
    TRACE("flash_attn_ext(%s, %s, %s, mask %s, scale %g, max_bias %g, softcap %g)", describe(in.q, dq, sizeof dq), describe(in.k, dk, sizeof dk),
          describe(in.v, dv, sizeof dv), describe(in.mask, dm, sizeof dm), (double) scale, (double) max_bias, (double) softcap);
    struct ggml_tensor * t = CALL(f, "ggml_flash_attn_ext", !ctx || !in.q || !in.k || !in.v,
                                  ggml_flash_attn_ext(ctx, in.q, in.k, in.v, in.mask, scale, max_bias, softcap));
    if (t) CHECK(t->ne[0] == in.v->ne[0] && t->ne[1] == in.q->ne[2] && t->ne[2] == in.q->ne[1] && t->ne[3] == in.q->ne[3], "flash_attn_ext: [DV, H, N, B]");
    keep(f, t);
}

static void act_flash_attn_back(struct fuzz * f) {
    const struct attn_inputs in = attn_inputs(f, true);
    struct ggml_context * ctx = pick_ctx(f);
    const float scale = attn_scale(in.q);
    char dq[128], dk[128], dv[128], dm[128], dd[128];
    TRACE("flash_attn_back(%s, %s, %s, mask %s, d %s, scale %g)", describe(in.q, dq, sizeof dq), describe(in.k, dk, sizeof dk),
          describe(in.v, dv, sizeof dv), describe(in.mask, dm, sizeof dm), describe(in.d, dd, sizeof dd), (double) scale);
    struct ggml_tensor * t = CALL(f, "ggml_flash_attn_back", !ctx || !in.q || !in.k || !in.v || !in.d,
                                  ggml_flash_attn_back(ctx, in.q, in.k, in.v, in.mask, in.d, scale));
    if (t) {
        const int64_t n = (ggml_nelements(in.q) + 3) / 4 * 4 + (ggml_nelements(in.k) + 3) / 4 * 4 + (ggml_nelements(in.v) + 3) / 4 * 4;
        CHECK(ggml_nelements(t) == n && ggml_n_dims(t) == 1, "flash_attn_back: one 1-D tensor of the padded slices");
    }
    keep(f, t);
}

/* I32 indices [ne0, ne1, ne2] into `rows` rows (or classes): mostly in range,
 * now and then not (the compute must then fail with a message, not read out of bounds). */
static struct ggml_tensor * new_indices(struct fuzz * f, struct ggml_context * ctx, int64_t rows, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[4] = {ne0, ne1, ne2, 1};
    struct ggml_tensor * t = new_tensor(f, ctx, GGML_TYPE_I32, ne);
    if (!t || !t->data || volume(t) > ELEM_LIMIT) return t;
    static const int32_t wild[] = {-1, -7, INT32_MIN, INT32_MAX};
    int32_t * d = t->data;  /* new, so contiguous */
    for (int64_t i = 0; i < ggml_nelements(t); i++) {
        if (chance(0.03)) d[i] = chance(0.5) ? (int32_t) (rows < INT32_MAX ? rows : -1) : PICK(wild);
        else d[i] = rows > 0 && rows <= INT32_MAX ? (int32_t) rnd((uint64_t) rows) : 0;
    }
    return t;
}

/* A tensor shaped like a for a per-element partner (labels, gradient, moments), or anything. */
static struct ggml_tensor * same_shape_partner(struct fuzz * f, struct ggml_context * ctx, const struct ggml_tensor * a) {
    if (!a || chance(0.15)) return pick(f);
    return new_filled(f, ctx, chance(0.9) ? GGML_TYPE_F32 : rand_type(false), a->ne);
}

/* set_rows, set, the masks, the generators, the experts' ops, roll and timestep_embedding, with sane or wild arguments */
static void act_write_mask(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f), * data_ctx = pick_fctx(f)->ctx;
    struct ggml_tensor * a = pick(f), * b = pick(f), * t = NULL;
    const int n = chance(0.9) ? (int) rnd(9) : PICK(((const int[]) {-1, INT_MIN, INT_MAX}));
    char da[128];
    TRACE("write_mask(%s, %d)", describe(a, da, sizeof da), n);
    switch (rnd(11)) {
        case 0: {  /* rows of b written into a: the indices may repeat or run out of range (the compute fails) */
            if (a && chance(0.7)) {
                const int64_t ne[4] = {a->ne[0], small_dim(), a->ne[2], a->ne[3]};
                b = new_filled(f, data_ctx, GGML_TYPE_F32, ne);
            }
            struct ggml_tensor * c = a && b && chance(0.8) ? new_indices(f, data_ctx, a->ne[1], b->ne[1], b->ne[2], b->ne[3]) : pick(f);
            t = CALL(f, "ggml_set_rows", !ctx || !a || !b || !c, ggml_set_rows(ctx, a, b, c));
            if (t) CHECK(ggml_are_same_shape(t, a) && t->view_src == (a->view_src ? a->view_src : a) && (!a->data || t->data == a->data), "set_rows: a view of a");
            break;
        }
        case 1: {
            const size_t nbytes = a ? ggml_nbytes(a) : 0;
            const bool sane = chance(0.7) && a;
            const size_t nb1 = sane ? a->nb[1] : rand_size(nbytes), offset = sane ? 4 * rnd(2) : rand_size(nbytes);
            t = CALL(f, "ggml_set_2d", !ctx || !a || !b, ggml_set_2d(ctx, a, b, nb1, offset));
            if (t) CHECK(ggml_are_same_shape(t, a), "set: shaped like a");
            break;
        }
        case 2: t = CALL(f, "ggml_diag_mask_inf", !ctx || !a, ggml_diag_mask_inf(ctx, a, n)); break;
        case 3: t = CALL(f, "ggml_diag_mask_zero", !ctx || !a, ggml_diag_mask_zero(ctx, a, n)); break;
        case 4:
            t = CALL(f, "ggml_diag", !ctx || !a, ggml_diag(ctx, a));
            if (t) CHECK(t->ne[0] == a->ne[0] && t->ne[1] == a->ne[0], "diag: [n, n, ne2, ne3]");
            break;
        case 5: t = CALL(f, "ggml_tri", !ctx || !a, ggml_tri(ctx, a, (enum ggml_tri_type) n)); break;
        case 6: t = CALL(f, "ggml_fill", !ctx || !a, ggml_fill(ctx, a, rand_param())); break;
        case 7: {  /* experts: b [ne0, n_expert] picked by ids, or a as the experts [K, M, n_expert] */
            struct ggml_tensor * ids = a && chance(0.8) ? new_indices(f, data_ctx, 1 + (int64_t) rnd(4), a->ne[1], a->ne[2], 1) : pick(f);
            if (chance(0.5)) {
                if (a && chance(0.7)) b = new_filled(f, data_ctx, GGML_TYPE_F32, (const int64_t[4]) {a->ne[0], 4, 1, 1});
                t = CALL(f, "ggml_add_id", !ctx || !a || !b || !ids, ggml_add_id(ctx, a, b, ids));
                if (t) CHECK(ggml_are_same_shape(t, a), "add_id: shaped like a");
            } else {
                if (a && ids && chance(0.7)) b = new_filled(f, data_ctx, GGML_TYPE_F32, (const int64_t[4]) {a->ne[0], 1, ids->ne[1], 1});
                t = CALL(f, "ggml_mul_mat_id", !ctx || !a || !b || !ids, ggml_mul_mat_id(ctx, a, b, ids));
                if (t) CHECK(t->ne[0] == a->ne[1] && t->ne[1] == ids->ne[0] && t->ne[2] == b->ne[2], "mul_mat_id: [M, n_used, n_tokens]");
            }
            break;
        }
        case 8: {
            const int s0 = chance(0.8) && a ? (int) rnd((uint64_t) a->ne[0]) : n;
            t = CALL(f, "ggml_roll", !ctx || !a, ggml_roll(ctx, a, s0, chance(0.5) ? 0 : -(n / 2), 0, 0));  /* -(n/2): -INT_MIN overflows */
            if (t) CHECK(ggml_are_same_shape(t, a), "roll: shaped like a");
            break;
        }
        case 9:
            t = CALL(f, "ggml_timestep_embedding", !ctx || !a, ggml_timestep_embedding(ctx, a, n, chance(0.9) ? 10000 : n));
            if (t) CHECK(t->ne[0] == n && t->ne[1] == a->ne[0], "timestep_embedding: [dim, N]");
            break;
        default: {
            const float start = rand_param(), step = rand_param();
            t = CALL(f, "ggml_arange", !ctx, ggml_arange(ctx, start, start + (float) n, step));
            if (t) CHECK(t->type == GGML_TYPE_F32 && ggml_nelements(t) >= 1 && t->ne[1] == 1, "arange: F32 [n >= 1]");
            break;
        }
    }
    keep(f, t);
}

static void act_train_op(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f), * data_ctx = pick_fctx(f)->ctx;
    struct ggml_tensor * a = pick(f), * t = NULL;
    char da[128];
    switch (rnd(7)) {
        case 0: {
            struct ggml_tensor * b = a && chance(0.8) ? new_indices(f, data_ctx, a->ne[1], small_dim(), a->ne[2], a->ne[3]) : pick(f);
            TRACE("get_rows(%s)", describe(a, da, sizeof da));
            t = CALL(f, "ggml_get_rows", !ctx || !a || !b, ggml_get_rows(ctx, a, b));
            if (t) CHECK(t->ne[0] == a->ne[0] && t->ne[1] == b->ne[0] && t->ne[2] == b->ne[1] && t->ne[3] == b->ne[2], "get_rows: [ne0, n, ne2, ne3]");
            break;
        }
        case 1: {  /* a = gradient of a get_rows of c */
            struct ggml_tensor * c = a, * b = c && chance(0.8) ? new_indices(f, data_ctx, c->ne[1], small_dim(), c->ne[2], c->ne[3]) : pick(f), * g = pick(f);
            if (c && b && chance(0.8)) {
                const int64_t ne[4] = {c->ne[0], b->ne[0], c->ne[2], c->ne[3]};
                g = new_filled(f, data_ctx, GGML_TYPE_F32, ne);
            }
            TRACE("get_rows_back(c %s)", describe(c, da, sizeof da));
            t = CALL(f, "ggml_get_rows_back", !ctx || !g || !b || !c, ggml_get_rows_back(ctx, g, b, c));
            if (t) CHECK(ggml_are_same_shape(t, c), "get_rows_back: shaped like c");
            break;
        }
        case 2: case 3: {
            struct ggml_tensor * labels = a && chance(0.5) ? new_indices(f, data_ctx, a->ne[0], a->ne[1], a->ne[2], a->ne[3]) : same_shape_partner(f, data_ctx, a);
            const bool back = chance(0.4);
            TRACE("cross_entropy_loss%s(%s)", back ? "_back" : "", describe(a, da, sizeof da));
            if (!back) {
                t = CALL(f, "ggml_cross_entropy_loss", !ctx || !a || !labels, ggml_cross_entropy_loss(ctx, a, labels));
                if (t) CHECK(ggml_is_scalar(t), "cross_entropy_loss: a scalar");
            } else {
                struct ggml_tensor * c = chance(0.8) ? new_filled(f, data_ctx, GGML_TYPE_F32, (const int64_t[4]) {1, 1, 1, 1}) : pick(f);
                t = CALL(f, "ggml_cross_entropy_loss_back", !ctx || !a || !labels || !c, ggml_cross_entropy_loss_back(ctx, c, a, labels));
                if (t) CHECK(ggml_are_same_shape(t, a), "cross_entropy_loss_back: shaped like the logits");
            }
            break;
        }
        case 4:
            TRACE("argmax(%s)", describe(a, da, sizeof da));
            t = CALL(f, "ggml_argmax", !ctx || !a, ggml_argmax(ctx, a));
            if (t) CHECK(t->type == GGML_TYPE_I32 && t->ne[0] == a->ne[1] && ggml_nelements(t) == a->ne[1], "argmax: I32 [ne1]");
            break;
        default: {  /* optimizer steps: a is updated in place */
            const bool adamw = chance(0.5);
            if (a && chance(0.7)) ggml_set_param(a);
            struct ggml_tensor * g = same_shape_partner(f, data_ctx, a), * m = same_shape_partner(f, data_ctx, a), * v = same_shape_partner(f, data_ctx, a);
            struct ggml_tensor * hp = chance(0.9) ? new_tensor(f, data_ctx, GGML_TYPE_F32, (const int64_t[4]) {adamw ? 7 : 2, 1, 1, 1}) : pick(f);
            if (hp && hp->data && hp->type == GGML_TYPE_F32 && ggml_nelements(hp) <= 7) {
                const float sane[7] = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 10.0f, 1000.0f};  /* alpha, beta1, beta2, eps, wd, beta1h, beta2h */
                for (int64_t i = 0; i < ggml_nelements(hp); i++) ggml_set_f32_1d(hp, i, chance(0.95) ? sane[i] : rand_param());
                if (!adamw && ggml_nelements(hp) == 2) ggml_set_f32_1d(hp, 1, 0.01f);
            }
            if (v && v->data && chance(0.9)) for (int64_t i = 0; volume(v) <= ELEM_LIMIT && i < ggml_nelements(v); i++) ggml_set_f32_1d(v, i, fabsf(ggml_get_f32_1d(v, i)));
            TRACE("opt_step_%s(%s)", adamw ? "adamw" : "sgd", describe(a, da, sizeof da));
            t = adamw ? CALL(f, "ggml_opt_step_adamw", !ctx || !a || !g || !m || !v || !hp, ggml_opt_step_adamw(ctx, a, g, m, v, hp))
                      : CALL(f, "ggml_opt_step_sgd", !ctx || !a || !g || !hp, ggml_opt_step_sgd(ctx, a, g, hp));
            if (t) CHECK(memory_of(t) == memory_of(a) && t->view_offs == (a->view_src ? a->view_offs : 0) && ggml_are_same_shape(t, a),
                         "opt_step: a view of a");
            break;
        }
    }
    keep(f, t);
}

/* Rotary embedding and its backward: mostly a with positions for its ne[2]
 * tokens (any value, INT32_MIN and INT32_MAX too), valid modes and n_dims, and
 * plain or YaRN parameters; sometimes frequency factors; now and then anything. */
static void act_rope(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f), * data_ctx = pick_fctx(f)->ctx;
    struct ggml_tensor * a = pick(f);
    struct ggml_tensor * pos = a && chance(0.85) ? new_indices(f, data_ctx, chance(0.5) ? 64 : INT32_MAX, a->ne[2], 1, 1) : pick(f);
    const int64_t ne0 = a ? a->ne[0] : 0;
    const int n_dims = chance(0.85) && ne0 >= 2 && ne0 <= INT_MAX ? 2 * (1 + (int) rnd((uint64_t) ne0 / 2)) : PICK(((const int[]) {0, 1, 3, -2, 64, INT_MAX}));
    const int mode = chance(0.9) ? PICK(((const int[]) {GGML_ROPE_TYPE_NORMAL, GGML_ROPE_TYPE_NEOX})) : PICK(((const int[]) {1, 3, 8, 24, -1}));
    const bool yarn = chance(0.4);
    const int n_ctx_orig = chance(0.9) ? PICK(((const int[]) {512, 4096})) : PICK(((const int[]) {0, -1, 1}));
    const float freq_base = chance(0.85) ? PICK(((const float[]) {10000.0f, 500000.0f, 10.0f})) : rand_param();
    const float freq_scale = chance(0.5) ? 1.0f : chance(0.8) ? (float) tc_uniform(0.05, 1.0) : rand_param();
    const float ext_factor = !yarn ? 0.0f : chance(0.8) ? 1.0f : rand_param();
    const float attn_factor = chance(0.8) ? 1.0f : rand_param();
    const float beta_fast = chance(0.9) ? 32.0f : rand_param(), beta_slow = chance(0.9) ? 1.0f : rand_param();
    struct ggml_tensor * c = NULL;
    if (chance(0.15)) c = chance(0.8) && n_dims > 0 && n_dims < 4096 ? new_filled(f, data_ctx, GGML_TYPE_F32, (const int64_t[4]) {n_dims / 2 + (int64_t) rnd(2), 1, 1, 1}) : pick(f);
    const bool back = chance(0.35);
    char da[128], dp[128];
    TRACE("rope_ext%s(%s, pos %s, c %s, n_dims %d, mode %d, n_ctx_orig %d, base %g, scale %g, ext %g, attn %g, beta %g %g)", back ? "_back" : "",
          describe(a, da, sizeof da), describe(pos, dp, sizeof dp), c ? "yes" : "NULL", n_dims, mode, n_ctx_orig, (double) freq_base,
          (double) freq_scale, (double) ext_factor, (double) attn_factor, (double) beta_fast, (double) beta_slow);
    struct ggml_tensor * t = back
        ? CALL(f, "ggml_rope_ext_back", !ctx || !a || !pos, ggml_rope_ext_back(ctx, a, pos, c, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow))
        : CALL(f, "ggml_rope_ext", !ctx || !a || !pos, ggml_rope_ext(ctx, a, pos, c, n_dims, mode, n_ctx_orig, freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow));
    if (t) CHECK(t->type == a->type && ggml_are_same_shape(t, a), "rope_ext: of a's type and shape");
    keep(f, t);
}

/* Convolution, pooling and the shape ops: mostly small strides, paddings,
 * dilations and sizes, now and then zero, negative or huge ones, and kernels
 * or partners of any shape. */
static int small_param(int lo) { return chance(0.85) ? lo + (int) rnd(3) : PICK(((const int[]) {0, -1, -7, 64, INT_MAX, INT_MIN})); }

/* An op of the op table (tests/ops/<family>.c): a random row's constructor
 * on new inputs of its shapes, types and value ranges, now and then one
 * dimension one longer or shorter and a transposed view where the row allows
 * one, in a context of its own with memory (row builders may fill constants);
 * the constructor gives a node or NULL with a message, the node computes (or
 * fails on its data with a message) to the same bits on 1 and 3 threads, and
 * where the row differentiates, a backward pass builds (or is refused with a
 * message) and computes. An op with rows is fuzzed without an entry of its
 * own here. */
#define TABLE_MAX_ELEMENTS 1024  /* inputs of larger rows are skipped: they fuzz no other path */
static bool fails_on_data(const struct ggml_cgraph * g);
static void act_table_op(struct fuzz * f) {
    const struct ops_family * fam = ops_families[rnd((uint64_t) ops_n_families)];
    if (fam->n_rows == 0) return;
    const struct ops_row * row = &fam->rows[rnd((uint64_t) fam->n_rows)];
    int64_t ne[OPS_MAX_IN][4], total = 0;
    for (int i = 0; i < row->n_in; i++) {
        memcpy(ne[i], row->in[i].ne, sizeof ne[i]);
        total += ops_nel(ne[i]);
    }
    if (total > TABLE_MAX_ELEMENTS) return;
    if (row->n_in > 0 && chance(0.2)) {
        int64_t * d = &ne[rnd((uint64_t) row->n_in)][rnd(4)];
        *d = *d > 1 && chance(0.5) ? *d - 1 : *d + 1;
    }
    struct ggml_init_params ip = {(size_t) 2 << 20, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    if (!CHECK(ctx != NULL, "table op: ggml_init: %s", ggml_last_error())) return;
    TRACE("table op %s (%s)", row->op, row->variant);
    struct ggml_tensor * in[OPS_MAX_IN] = {NULL};
    bool ok = true;
    for (int i = 0; ok && i < row->n_in; i++) {
        const struct ops_input * s = &row->in[i];
        const bool transposed = (s->layout & OPS_TRANSPOSED) && chance(0.3);
        const int64_t mem[4] = {transposed ? ne[i][1] : ne[i][0], transposed ? ne[i][0] : ne[i][1], ne[i][2], ne[i][3]};
        struct ggml_tensor * t = new_tensor(f, ctx, s->type, mem);
        if (!t) { ok = false; break; }
        for (int64_t k = 0; k < ggml_nelements(t); k++) {
            if (s->type == GGML_TYPE_I32) ggml_set_i32_1d(t, (int) k, (int32_t) s->lo + (int32_t) rnd((uint64_t) (s->hi - s->lo) + 1));
            else ggml_set_f32_1d(t, (int) k, (float) tc_uniform(s->lo, s->hi));
        }
        in[i] = transposed ? CALL(f, "ggml_transpose", false, ggml_transpose(ctx, t)) : t;
        ok = in[i] != NULL;
    }
    struct ggml_tensor * y = ok ? CALL(f, row->op, false, row->build(ctx, in, row->params)) : NULL;
    if (y && y->type == GGML_TYPE_F32 && row->grad == OPS_GRAD && chance(0.3)) {
        for (int i = 0; i < row->n_in; i++)
            if (!row->in[i].fixed && in[i]->type == GGML_TYPE_F32) ggml_set_param(in[i]);
        struct ggml_tensor * loss = CALL(f, "ggml_sum", false, ggml_sum(ctx, y));
        struct ggml_cgraph * g = loss ? ggml_new_graph_custom(ctx, 1024, true) : NULL;
        if (g) {
            ggml_set_loss(loss);
            ggml_build_forward_expand(g, loss);
            if (STATUS(f, "ggml_build_backward_expand", ggml_build_backward_expand(ctx, g, NULL)) == GGML_STATUS_SUCCESS) {
                ggml_graph_reset(g);
                STATUS(f, "ggml_graph_compute_with_ctx (backward)", ggml_graph_compute_with_ctx(ctx, g, 1 + (int) rnd(3)));
            }
        }
    } else if (y && chance(0.7)) {
        struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 1024, false);
        ggml_build_forward_expand(g, y);
        const size_t bytes = y->data ? ggml_nbytes(y) : 0;
        void * first = bytes ? malloc(bytes) : NULL;
        if (STATUS(f, "ggml_graph_compute_with_ctx", ggml_graph_compute_with_ctx(ctx, g, 1)) == GGML_STATUS_SUCCESS && first) {
            memcpy(first, y->data, bytes);
            const bool same = STATUS(f, "ggml_graph_compute_with_ctx", ggml_graph_compute_with_ctx(ctx, g, 3)) == GGML_STATUS_SUCCESS &&
                              memcmp(first, y->data, bytes) == 0;
            /* an op writing over its input computes on other values the second time
             * (a via_node row, built here on the input itself, is an _inplace form) */
            CHECK(same || row->result == OPS_INPLACE || row->via_node || fails_on_data(g), "table op %s (%s): 1 and 3 threads differ", row->op, row->variant);
        }
        free(first);
    }
    ggml_free(ctx);
}

static void act_conv(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f), * data_ctx = pick_fctx(f)->ctx;
    struct ggml_tensor * a = pick(f), * t = NULL;
    struct ggml_tensor * k = a && chance(0.7) ? new_filled(f, data_ctx, GGML_TYPE_F32, (const int64_t[4]) {small_dim(), small_dim(),
                                                  chance(0.8) ? a->ne[2] : small_dim(), small_dim()}) : pick(f);
    const int s0 = small_param(1), s1 = small_param(1), p0 = small_param(0), p1 = small_param(0), d0 = small_param(1), d1 = small_param(1);
    char da[128], dk[128];
    describe(a, da, sizeof da);
    describe(k, dk, sizeof dk);
    switch (rnd(8)) {
        case 0:
            TRACE("conv_2d(%s, %s, %d %d %d %d %d %d)", dk, da, s0, s1, p0, p1, d0, d1);
            t = CALL(f, "ggml_conv_2d", !ctx || !a || !k, ggml_conv_2d(ctx, k, a, s0, s1, p0, p1, d0, d1));
            break;
        case 1:
            TRACE("im2col(%s, %s, %d %d %d %d %d %d)", dk, da, s0, s1, p0, p1, d0, d1);
            t = CALL(f, "ggml_im2col", !ctx || !a || !k, ggml_im2col(ctx, k, a, s0, s1, p0, p1, d0, d1, chance(0.5), GGML_TYPE_F32));
            break;
        case 2:
            TRACE("conv_transpose_2d_p0(%s, %s, %d)", dk, da, s0);
            t = CALL(f, "ggml_conv_transpose_2d_p0", !ctx || !a || !k, ggml_conv_transpose_2d_p0(ctx, k, a, s0));
            break;
        case 3: {
            const enum ggml_op_pool op = (enum ggml_op_pool) (chance(0.9) ? (int) rnd(2) : PICK(((const int[]) {-1, 2, 100})));
            const int k0 = small_param(1), k1 = small_param(1);
            TRACE("pool(%s, op %d, k %d %d, s %d %d, p %d %d)", da, (int) op, k0, k1, s0, s1, p0, p1);
            t = chance(0.5) ? CALL(f, "ggml_pool_1d", !ctx || !a, ggml_pool_1d(ctx, a, op, k0, s0, p0))
                            : CALL(f, "ggml_pool_2d", !ctx || !a, ggml_pool_2d(ctx, a, op, k0, k1, s0, s1, (float) p0, (float) p1));
            break;
        }
        case 4: {
            struct ggml_tensor * b = chance(0.8) ? same_shape_partner(f, data_ctx, a) : pick(f);
            const int dim = chance(0.9) ? (int) rnd(4) : PICK(((const int[]) {-1, 4, INT_MAX}));
            TRACE("concat(%s, dim %d)", da, dim);
            t = CALL(f, "ggml_concat", !ctx || !a || !b, ggml_concat(ctx, a, b, dim));
            break;
        }
        case 5: {
            const int lp1 = small_param(0), rp2 = small_param(0);
            TRACE("pad_ext(%s, %d %d %d %d)", da, p0, p1, lp1, rp2);
            t = CALL(f, "ggml_pad_ext", !ctx || !a, ggml_pad_ext(ctx, a, p0, p1, lp1, 0, 0, rp2, 1, 0));
            break;
        }
        case 6: {
            const uint32_t mode = chance(0.9) ? (uint32_t) rnd(2) | (chance(0.3) ? GGML_SCALE_FLAG_ALIGN_CORNERS : 0)
                                              : PICK(((const uint32_t[]) {2, 3, 255, GGML_SCALE_FLAG_ANTIALIAS | 1u, 0xFFFFFFFFu}));
            const int64_t ne0 = chance(0.9) ? small_dim() : (int64_t) small_param(0), ne1 = small_dim();
            TRACE("interpolate(%s, %" PRId64 " %" PRId64 ", mode 0x%x)", da, ne0, ne1, (unsigned) mode);
            t = CALL(f, "ggml_interpolate", !ctx || !a, ggml_interpolate(ctx, a, ne0, ne1, a ? a->ne[2] : 1, a ? a->ne[3] : 1, mode));
            break;
        }
        default:
            TRACE("upscale(%s, %d)", da, s0);
            t = CALL(f, "ggml_upscale", !ctx || !a, ggml_upscale(ctx, a, s0, GGML_SCALE_MODE_BILINEAR));
            break;
    }
    if (t) CHECK(t->type == GGML_TYPE_F32 || t->op == GGML_OP_CONCAT, "conv/pool/shape ops: F32 results");
    keep(f, t);
}

/* Huge or degenerate metadata-only tensors thrown at constructors: no overflow, no crash. */
static void act_huge(struct fuzz * f) {
    struct fctx * c = pick_fctx(f);
    const bool old = ggml_get_no_alloc(c->ctx);
    ggml_set_no_alloc(c->ctx, true);
    int64_t ne[4];
    for (int i = 0; i < 4; i++) ne[i] = chance(0.5) ? rand_dim(true) : small_dim();
    if (chance(0.3)) ne[0] = 0;  /* zero first: the other dimensions may then be anything */
    struct ggml_tensor * h = new_tensor(f, c->ctx, chance(0.8) ? GGML_TYPE_F32 : GGML_TYPE_F16, ne);
    if (h) {
        (void) ggml_nrows(h);
        (void) ggml_nbytes(h);
        struct ggml_tensor * o = pick(f);
        struct ggml_context * ctx = c->ctx;
        switch (rnd(12)) {
            case 0: CALL(f, "ggml_sum_rows", false, ggml_sum_rows(ctx, h)); break;
            case 1: CALL(f, "ggml_mul_mat", false, ggml_mul_mat(ctx, h, h)); break;
            case 2: CALL(f, "ggml_transpose", false, ggml_transpose(ctx, h)); break;
            case 3: CALL(f, "ggml_soft_max_ext", false, ggml_soft_max_ext(ctx, h, chance(0.5) ? h : o, 1.0f, 0.0f)); break;
            case 4: CALL(f, "ggml_flash_attn_ext", false, ggml_flash_attn_ext(ctx, h, h, h, chance(0.5) ? NULL : h, 1.0f, 0.0f, 0.0f)); break;
            case 5: CALL(f, "ggml_flash_attn_back", false, ggml_flash_attn_back(ctx, h, h, h, NULL, h, 1.0f)); break;
            case 6: CALL(f, "ggml_view_2d", false, ggml_view_2d(ctx, h, ne[0], 2, rand_size(1 << 20), rand_size(1 << 20))); break;
            case 7: CALL(f, "ggml_reshape_1d", false, ggml_reshape_1d(ctx, h, ggml_nelements(h))); break;
            case 8: CALL(f, "ggml_repeat", false, ggml_repeat(ctx, o, h)); break;
            case 9: CALL(f, "ggml_add", false, ggml_add(ctx, h, o)); break;
            case 10: CALL(f, "ggml_acc", false, ggml_acc(ctx, h, o, h->nb[1], h->nb[2], h->nb[3], rand_size(1 << 10))); break;
            default: CALL(f, "ggml_cpy", false, ggml_cpy(ctx, o, h)); break;
        }
    }
    ggml_set_no_alloc(c->ctx, old);
}

/* ------------------------------------------------------------------ actions: graphs */

static void act_new_graph(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f);
    const size_t size = chance(0.9) ? 1 + rnd(chance(0.5) ? 8 : 200) : PICK(((const size_t[]) {0, (size_t) INT32_MAX, SIZE_MAX, (size_t) 1 << 26}));
    const bool plain = chance(0.1), grads = !plain && chance(0.5);
    TRACE("new_graph_custom(%zu, %d)", size, grads);
    ggml_clear_error();
    struct ggml_cgraph * g = plain ? ggml_new_graph(ctx) : ggml_new_graph_custom(ctx, size, grads);
    n_calls++;
    if (!g) { failed(f, "ggml_new_graph_custom"); return; }
    CHECK(ctx != NULL, "ggml_new_graph: a graph from a NULL context");
    add_graph(f, g, grads, false);
}

static void act_expand(struct fuzz * f) {
    struct fgraph * fg = pick_graph(f);
    if (!fg) return;
    struct ggml_tensor * t = pick(f);
    const int before = ggml_graph_n_nodes(fg->g);
    char d[128];
    TRACE("build_forward_expand(%s) into %d/%d nodes", describe(t, d, sizeof d), before, ggml_graph_size(fg->g));
    if (STATUS(f, "ggml_build_forward_expand", ggml_build_forward_expand_status(fg->g, t)) != GGML_STATUS_SUCCESS) {
        CHECK(ggml_graph_n_nodes(fg->g) == before, "a failed expand leaves the graph as it was");
    } else {
        CHECK(t != NULL, "expanding NULL succeeded");
    }
}

static void act_params(struct fuzz * f) {
    struct ggml_tensor * t = pick(f);
    TRACE("set flags");
    switch (rnd(4)) {
        case 0: ggml_set_param(t); break;
        case 1: ggml_set_input(t); break;
        case 2: ggml_set_output(t); break;
        default: {
            ggml_clear_error();
            ggml_set_loss(t);
            n_calls++;
            const bool ok = t && ggml_is_scalar(t) && t->type == GGML_TYPE_F32;
            if (!ok) failed(f, "ggml_set_loss");
            CHECK(!t || ok == ((t->flags & GGML_TENSOR_FLAG_LOSS) != 0), "set_loss flags exactly the scalar F32 tensors");
        }
    }
}

/* The graph has a node whose compute can fail on its data: indices, expert ids or class labels out of range, a row set twice. */
static bool fails_on_data(const struct ggml_cgraph * g) {
    for (int i = 0; i < ggml_graph_n_nodes(g); i++) {
        const struct ggml_tensor * t = ggml_graph_node(g, i);
        if (t->op == GGML_OP_GET_ROWS || t->op == GGML_OP_GET_ROWS_BACK || t->op == GGML_OP_SET_ROWS) return true;
        if (t->op == GGML_OP_ADD_ID || t->op == GGML_OP_MUL_MAT_ID) return true;
        if ((t->op == GGML_OP_CROSS_ENTROPY_LOSS || t->op == GGML_OP_CROSS_ENTROPY_LOSS_BACK) && t->src[1]->type == GGML_TYPE_I32) return true;
    }
    return false;
}

static void act_compute_graph(struct fuzz * f, struct fgraph * fg) {
    if (fg->backward && chance(0.7)) ggml_graph_reset(fg->g);
    const int nth = chance(0.99) ? 1 + (int) rnd(3) : 4 + (int) rnd(3);
    int64_t n_before, n_after;
    float * before = snapshot(fg->g, &n_before);
    if (compute(f, fg->g, nth) == GGML_STATUS_SUCCESS) {
        check_computed(f, fg, nth);
    } else {
        /* a refused compute changes nothing (memory is checked before any work), unless a
           node failed on its data (an index out of range) after the nodes before it ran */
        float * after = snapshot(fg->g, &n_after);
        CHECK(fails_on_data(fg->g) || (before && after && n_before == n_after && memcmp(before, after, (size_t) n_before * sizeof *before) == 0),
              "a failed compute changed the graph's values");
        free(after);
    }
    free(before);
}

static void act_compute(struct fuzz * f) {
    struct fgraph * fg = pick_graph(f);
    if (fg) act_compute_graph(f, fg);
}

/* A random loss (with random parameters) and its backward pass in a new graph. */
static void act_backward(struct fuzz * f) {
    struct ggml_context * ctx = pick_ctx(f);
    for (int i = (int) rnd(3); i > 0; i--) ggml_set_param(pick(f));
    struct ggml_tensor * x = pick(f), * loss = x;
    char d[128];
    TRACE("backward of %s", describe(x, d, sizeof d));
    if (!x || !ggml_is_scalar(x) || chance(0.5)) {
        loss = CALL(f, chance(0.8) ? "ggml_sum" : "ggml_sum(sqr)", !ctx || !x, chance(0.8) ? ggml_sum(ctx, x) : ggml_sum(ctx, ggml_sqr(ctx, x)));
    }
    ggml_set_loss(loss);
    const size_t size = 2 + rnd(chance(0.5) ? 30 : 400);
    const bool grads = chance(0.9);
    ggml_clear_error();
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, size, grads);
    n_calls++;
    if (!g) { failed(f, "ggml_new_graph_custom"); return; }
    if (STATUS(f, "ggml_build_forward_expand", ggml_build_forward_expand_status(g, loss)) != GGML_STATUS_SUCCESS && chance(0.5)) return;
    const int before = ggml_graph_n_nodes(g);
    struct ggml_tensor ** accs = NULL;
    if (chance(0.2)) {  /* user accumulators: right, wrong or missing */
        accs = calloc((size_t) before + 1, sizeof *accs);
        for (int i = 0; i < before && accs; i++) {
            const struct ggml_tensor * n = ggml_graph_node(g, i);
            if (!(n->flags & GGML_TENSOR_FLAG_PARAM) || chance(0.3)) continue;
            int64_t ne[4] = {n->ne[0], n->ne[1], n->ne[2], n->ne[3]};
            if (chance(0.2)) ne[rnd(4)] += 1;
            accs[i] = new_tensor(f, pick_fctx(f)->ctx, chance(0.9) ? GGML_TYPE_F32 : GGML_TYPE_F16, ne);
        }
    }
    TRACE("build_backward_expand(%d nodes, size %zu, grads %d, accs %d)", before, size, grads, accs != NULL);
    const enum ggml_status st = STATUS(f, "ggml_build_backward_expand", ggml_build_backward_expand(ctx, g, accs));
    free(accs);
    if (st != GGML_STATUS_SUCCESS) CHECK(ggml_graph_n_nodes(g) == before, "a failed backward build leaves the graph as it was");
    struct fgraph * fg = add_graph(f, g, grads, st == GGML_STATUS_SUCCESS);
    if (st == GGML_STATUS_SUCCESS && chance(0.6)) act_compute_graph(f, fg);
    bool has_grads = false;
    for (int i = 0; st == GGML_STATUS_SUCCESS && i < ggml_graph_n_nodes(g); i++) has_grads = has_grads || ggml_graph_get_grad(g, ggml_graph_node(g, i));
    if (has_grads) {
        /* a second backward pass is refused */
        CHECK(STATUS(f, "ggml_build_backward_expand (again)", ggml_build_backward_expand(ctx, g, NULL)) != GGML_STATUS_SUCCESS,
              "a second backward pass is refused");
    }
}

static void act_reset(struct fuzz * f) {
    struct fgraph * fg = pick_graph(f);
    if (!fg) return;
    TRACE("graph_reset");
    const bool null_graph = chance(0.03);
    ggml_clear_error();
    ggml_graph_reset(null_graph ? NULL : fg->g);
    n_calls++;
    const bool refused = ggml_last_error()[0] != '\0';
    CHECK(refused == (null_graph || !fg->grads), "graph_reset refuses exactly the graphs without gradients");
    if (refused) failed(f, "ggml_graph_reset");
}

/* A pool tensor in a new graph, computed at once. */
static void act_evaluate(struct fuzz * f) {
    struct ggml_tensor * t = pick(f);
    if (!t) return;
    struct ggml_context * ctx = f->c[0].ctx;
    ggml_clear_error();
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16 + rnd(256), false);
    n_calls++;
    if (!g) { failed(f, "ggml_new_graph_custom"); return; }
    struct fgraph * fg = add_graph(f, g, false, false);
    if (STATUS(f, "ggml_build_forward_expand", ggml_build_forward_expand_status(g, t)) != GGML_STATUS_SUCCESS) return;
    act_compute_graph(f, fg);
}

/* ------------------------------------------------------------------ actions: backend, memory, access */

/* Bytes a backend allocation of ctx would need (tensors without data, not views). */
static size_t pending_bytes(struct ggml_context * ctx) {
    size_t total = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        if (t->data || t->view_src) continue;
        const size_t n = ggml_nbytes(t);
        total = n > SIZE_MAX - total - 64 ? SIZE_MAX : total + n + 64;
    }
    return total;
}

static void act_backend_alloc(struct fuzz * f) {
    if (f->n_buffers == MAX_BUFFERS) return;
    struct fctx * c = pick_fctx(f);
    const size_t need = pending_bytes(c->ctx);
    if (need > ALLOC_LIMIT && need < ((size_t) 1 << 52)) return;  /* it would work, slowly */
    const bool null_ctx = chance(0.03), null_be = chance(0.03);
    TRACE("backend_alloc_ctx_tensors(%zu bytes pending)", need);
    ggml_clear_error();
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(null_ctx ? NULL : c->ctx, null_be ? NULL : f->backend);
    n_calls++;
    if (!buf) { failed(f, "ggml_backend_alloc_ctx_tensors"); return; }
    count("ggml_backend_alloc_ctx_tensors", true);
    CHECK(!null_ctx && !null_be, "backend alloc with a NULL argument succeeded");
    f->buffers[f->n_buffers++] = buf;
    arm_canaries(c);
    for (struct ggml_tensor * t = ggml_get_first_tensor(c->ctx); t; t = ggml_get_next_tensor(c->ctx, t))
        CHECK(t->data || ggml_nelements(t) == 0 || (t->view_src && !t->view_src->data), "after backend alloc, a tensor has no data");
}

static void act_transfer(struct fuzz * f) {
    struct ggml_tensor * t = pick(f);
    const size_t n = t ? ggml_nbytes(t) : 0;
    const size_t offset = rand_size(n);
    const size_t size = rand_size(offset <= n ? n - offset : 0);
    const bool in_range = t && t->data && ggml_is_contiguous(t) && offset <= n && size <= n - offset;
    const bool null_data = chance(0.03);
    unsigned char small[64];
    unsigned char * buf = size <= n + 64 ? malloc(size ? size : 1) : small;
    for (size_t i = 0; buf != small && i < size; i++) buf[i] = (unsigned char) rnd(256);
    const bool set = chance(0.5), unchecked = chance(0.1);
    TRACE("backend_tensor_%s(offset %zu, size %zu of %zu)", set ? "set" : "get", offset, size, n);
    const void * data = null_data ? NULL : buf;
    enum ggml_status st;
    ggml_clear_error();
    if (unchecked) {
        if (set) ggml_backend_tensor_set(t, data, offset, size);
        else ggml_backend_tensor_get(t, (void *) data, offset, size);
        st = ggml_last_error()[0] ? GGML_STATUS_FAILED : GGML_STATUS_SUCCESS;
    } else {
        st = set ? ggml_backend_tensor_set_checked(t, data, offset, size) : ggml_backend_tensor_get_checked(t, (void *) data, offset, size);
    }
    check_status(f, set ? "ggml_backend_tensor_set" : "ggml_backend_tensor_get", st);
    if (st == GGML_STATUS_SUCCESS) {
        CHECK(in_range && (!null_data || size == 0), "a transfer of %zu bytes at %zu (tensor of %zu) was accepted", size, offset, n);
        if (set && buf != small && !null_data && in_range) {
            unsigned char * back = malloc(size ? size : 1);
            CHECK(ggml_backend_tensor_get_checked(t, back, offset, size) == GGML_STATUS_SUCCESS && memcmp(back, buf, size) == 0,
                  "what was set reads back");
            free(back);
        }
    }
    if (buf != small) free(buf);
}

static void act_element_access(struct fuzz * f) {
    struct ggml_tensor * t = pick(f);
    const int64_t n = ggml_nelements(t);
    const int64_t i = chance(0.8) && n > 0 ? (int64_t) rnd((uint64_t) n) : PICK(((const int64_t[]) {-1, 0, n, n + 1, INT64_MIN, INT64_MAX}));
    TRACE("element access %" PRId64 " of %" PRId64, i, n);
    ggml_clear_error();
    n_calls++;
    const bool ok = t && t->data && i >= 0 && i < n;
    switch (rnd(5)) {
        case 4: {  /* fill the whole tensor, any layout */
            const float v = chance(0.5) ? 0.0f : (float) tc_uniform(-2.0, 2.0);
            struct ggml_tensor * r = v == 0.0f ? ggml_set_zero(t) : ggml_set_f32(t, v);
            if (!r) failed(f, "ggml_set_f32");
            else CHECK(r == t && (n == 0 || t->type != GGML_TYPE_F32 || ggml_get_f32_1d(t, n - 1) == v), "set_f32 fills");
            break;
        }
        case 0: {
            const float v = ggml_get_f32_1d(t, i);
            if (!ok) { CHECK(isnan(v), "get_f32_1d out of range gives NaN"); failed(f, "ggml_get_f32_1d"); }
            break;
        }
        case 1: {
            const float v = (float) tc_uniform(-4.0, 4.0);
            ggml_set_f32_1d(t, i, v);
            if (!ok) failed(f, "ggml_set_f32_1d");
            else if (t->type == GGML_TYPE_F32) CHECK(ggml_get_f32_1d(t, i) == v, "set_f32_1d then get_f32_1d");
            break;
        }
        default: {
            int idx[4];
            bool in = t && t->data;
            for (int k = 0; k < 4; k++) {
                idx[k] = t && chance(0.9) ? (int) rnd(t->ne[k] > 0 && t->ne[k] < INT_MAX ? (uint64_t) t->ne[k] : 1) : PICK(((const int[]) {-1, INT_MAX, INT_MIN, 5}));
                in = in && idx[k] >= 0 && idx[k] < t->ne[k];
            }
            if (rnd(2)) {
                const float v = ggml_get_f32_nd(t, idx[0], idx[1], idx[2], idx[3]);
                if (!in) { CHECK(isnan(v), "get_f32_nd out of range gives NaN"); failed(f, "ggml_get_f32_nd"); }
            } else {
                ggml_set_f32_nd(t, idx[0], idx[1], idx[2], idx[3], (float) tc_uniform(-4.0, 4.0));
                if (!in) failed(f, "ggml_set_f32_nd");
            }
        }
    }
}

static void act_canary(struct fuzz * f) {
    struct fctx * c = pick_fctx(f);
    if (c->n_canary == MAX_CANARY) return;
    TRACE("canary");
    struct ggml_tensor * t = CALL(f, "ggml_new_tensor_1d (canary)", false, ggml_new_tensor_1d(c->ctx, GGML_TYPE_F32, CANARY_N));
    if (!t) return;
    ggml_set_name(t, "canary");
    c->canary[c->n_canary++] = (struct canary) {t, (uint32_t) tc_next(), false};
    arm_canaries(c);
}

static void act_queries(struct fuzz * f) {
    struct ggml_tensor * a = pick(f), * b = pick(f);
    struct fgraph * fg = pick_graph(f);
    struct fctx * c = pick_fctx(f);
    TRACE("queries");
    (void) ggml_are_same_shape(a, b);
    (void) ggml_can_repeat(a, b);
    (void) ggml_is_contiguous(a);
    (void) ggml_is_scalar(a);
    (void) ggml_n_dims(a);
    (void) ggml_nrows(a);
    (void) ggml_element_size(a);
    (void) ggml_op_name((enum ggml_op) PICK(((const int[]) {0, 5, GGML_OP_COUNT - 1, GGML_OP_COUNT, -1, 1000})));
    (void) ggml_type_name(rand_type(true));
    (void) ggml_type_size(rand_type(true));
    (void) ggml_status_to_string((enum ggml_status) PICK(((const int[]) {-2, -1, 0, 1, 7, -100})));
    CHECK(ggml_used_mem(c->ctx) <= ggml_get_mem_size(c->ctx), "used memory within the context's size");
    CHECK(ggml_graph_overhead_custom(1 + rnd(4096), chance(0.5)) > 0 && ggml_tensor_overhead() > 0, "overheads");
    CHECK(ggml_backend_is_cpu(f->backend) && ggml_backend_name(f->backend) != NULL, "a CPU backend");
    for (int i = 0; i < f->n_buffers; i++)
        CHECK(ggml_backend_buffer_get_size(f->buffers[i]) == 0 || ggml_backend_buffer_get_base(f->buffers[i]) != NULL, "a buffer has memory");
    {   /* fp16 row conversion round trip */
        float x[37], y[37];
        ggml_fp16_t h[37];
        const int64_t n = (int64_t) rnd(38);
        for (int64_t i = 0; i < n; i++) x[i] = chance(0.9) ? (float) tc_uniform(-100.0, 100.0) : special_value();
        ggml_fp32_to_fp16_row(x, h, n);
        ggml_fp16_to_fp32_row(h, y, n);
        for (int64_t i = 0; i < n; i++)
            CHECK(ggml_fp32_to_fp16(y[i]) == h[i] || isnan(y[i]), "fp16 rows round-trip (%g)", (double) x[i]);
    }
    if (a) {
        char name[100];
        const int len = (int) rnd(sizeof name);
        memset(name, 'a' + (int) rnd(26), (size_t) len);
        name[len] = '\0';
        ggml_set_name(a, name);
        CHECK(strlen(ggml_get_name(a)) == (size_t) (len < GGML_MAX_NAME ? len : GGML_MAX_NAME - 1), "names are truncated to fit");
        (void) ggml_get_tensor(c->ctx, ggml_get_name(a));
    }
    (void) ggml_get_tensor(c->ctx, NULL);
    int count = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(c->ctx); t && count < 100000; t = ggml_get_next_tensor(c->ctx, t)) count++;
    CHECK(count < 100000, "the tensor list ends");
    if (fg) {
        const int n = ggml_graph_n_nodes(fg->g), i = (int) rnd((uint64_t) (2 * n + 3)) - n - 1;
        ggml_clear_error();
        struct ggml_tensor * node = ggml_graph_node(fg->g, i);
        CHECK((node != NULL) == (i >= -n && i < n), "graph_node(%d) of %d nodes", i, n);
        CHECK(n <= ggml_graph_size(fg->g), "nodes within the graph's size");
        (void) ggml_graph_get_grad(fg->g, a);
        (void) ggml_graph_get_grad_acc(fg->g, a);
    }
}

static void act_toggle_no_alloc(struct fuzz * f) {
    struct fctx * c = pick_fctx(f);
    TRACE("set_no_alloc");
    ggml_set_no_alloc(c->ctx, chance(0.5));
}

/* A short-lived context with odd parameters (sizes, a caller's buffer at any
 * alignment): a few ops, perhaps a compute, then free. */
static void act_scratch_ctx(struct fuzz * f) {
    static const size_t sizes[] = {0, 1, 15, 16, 100, 1000, 4096, 1 << 16, SIZE_MAX, SIZE_MAX - 3, SIZE_MAX / 2, SIZE_MAX / 2 + 1};
    size_t mem = chance(0.4) ? probe_bytes + rnd(3000) : PICK(sizes);
    void * user = NULL;
    char * raw = NULL;
    if (chance(0.4) && mem <= (1 << 16)) {  /* the caller's memory, exactly mem bytes at any alignment */
        const size_t misalign = rnd(16);
        raw = malloc(mem + misalign + 1);
        user = raw ? raw + misalign : NULL;
    }
    struct ggml_init_params p = {mem, user, chance(0.3)};
    TRACE("init(%zu, user buffer %d, no_alloc %d)", mem, user != NULL, p.no_alloc);
    ggml_clear_error();
    struct ggml_context * ctx = ggml_init(p);
    n_calls++;
    if (!ctx) {
        failed(f, "ggml_init");
    } else {
        count("ggml_init", true);
        const int64_t ne[4] = {small_dim(), small_dim(), 1, 1};
        struct ggml_tensor * x = new_filled(f, ctx, GGML_TYPE_F32, ne);
        struct ggml_tensor * y = CALL(f, "ggml_sum", !x, ggml_sum(ctx, ggml_sqr(ctx, x)));
        ggml_clear_error();
        struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 1 + rnd(8), chance(0.5));
        n_calls++;
        if (!g) failed(f, "ggml_new_graph_custom");
        ggml_backend_buffer_t buf = NULL;
        if (g && y && STATUS(f, "ggml_build_forward_expand", ggml_build_forward_expand_status(g, y)) == GGML_STATUS_SUCCESS) {
            if (p.no_alloc) buf = ggml_backend_alloc_ctx_tensors(ctx, f->backend);
            if (buf) {
                float v[64];
                for (int i = 0; i < 64; i++) v[i] = 1.0f;
                ggml_backend_tensor_set(x, v, 0, ggml_nbytes(x));
            }
            if (x->data) {
                if (!x->buffer) ggml_set_f32(x, 1.0f);
                if (compute(f, g, 1 + (int) rnd(2)) == GGML_STATUS_SUCCESS)
                    CHECK(ggml_get_f32_1d(y, 0) == (float) ggml_nelements(x), "sum of ones squared");
            }
        }
        ggml_backend_buffer_free(buf);
        ggml_free(ctx);
    }
    ggml_free(NULL);
    free(raw);
}

/* The training API end to end (tests/common/workload.c) with a random
 * configuration: loss, optimizer and build types (sometimes out of range), the
 * accumulation period, the validation split and the hyperparameters
 * (sometimes NaN, Inf, zero or out of range). It trains, stops on a
    {"rope", 3, act_rope},
 * non-finite loss (ABORTED), or refuses with a message. */
static void act_opt_train(struct fuzz * f) {
    struct tw_opt_config cfg = tw_opt_default();
    cfg.loss = (enum ggml_opt_loss_type) (chance(0.95) ? (int) rnd(4) : PICK(((const int[]) {-1, 4, 100})));
    cfg.optimizer = (enum ggml_opt_optimizer_type) (chance(0.95) ? (int) rnd(2) : PICK(((const int[]) {-1, 2, 7})));
    cfg.build = (enum ggml_opt_build_type) PICK(((const int[]) {GGML_OPT_BUILD_TYPE_FORWARD, GGML_OPT_BUILD_TYPE_GRAD, GGML_OPT_BUILD_TYPE_OPT,
                                                                GGML_OPT_BUILD_TYPE_OPT, 0, 25}));
    cfg.opt_period = chance(0.9) ? 1 + (int32_t) rnd(3) : PICK(((const int32_t[]) {0, -1, INT32_MAX}));
    cfg.epochs = 1 + (int64_t) rnd(2);
    cfg.idata_split = chance(0.8) ? 8 * (int64_t) rnd(7) : PICK(((const int64_t[]) {-1, 3, 47, 49, 1000, INT64_MIN, INT64_MAX}));
    float * hyper[] = {&cfg.hyper.adamw.alpha, &cfg.hyper.adamw.beta1, &cfg.hyper.adamw.beta2, &cfg.hyper.adamw.eps,
                       &cfg.hyper.adamw.wd, &cfg.hyper.sgd.alpha, &cfg.hyper.sgd.wd, &cfg.hyper.clip_norm};
    for (size_t i = 0; i < sizeof hyper / sizeof hyper[0]; i++)
        if (chance(0.05)) *hyper[i] = rand_param();
    const int nth = 1 + (int) rnd(3);
    TRACE("opt_train(loss %d, optimizer %d, build %d, period %d, split %" PRId64 ", %d threads)", (int) cfg.loss, (int) cfg.optimizer,
          (int) cfg.build, (int) cfg.opt_period, cfg.idata_split, nth);
    float params[TW_N_OPT_PARAMS];
    double loss = 0.0;
    ggml_clear_error();
    const enum ggml_status st = tw_train_opt(rnd(1000), nth, &cfg, params, &loss);
    if (st == GGML_STATUS_ABORTED) { n_calls++; count("ggml_opt (non-finite, aborted)", true); return; }
    check_status(f, "ggml_opt (workload)", st);
}

/* ------------------------------------------------------------------ the action table */

struct action { const char * name; int weight; void (*run)(struct fuzz *); };

static const struct action actions[] = {
    {"new_tensor", 12, act_new_tensor},
    {"new_other", 3, act_new_other},
    {"fill", 4, act_fill},
    {"unary", 8, act_unary},
    {"binary", 12, act_binary},
    {"scale", 3, act_scale},
    {"overlap", 1, act_overlap},
    {"reshape", 4, act_reshape},
    {"view", 6, act_view},
    {"permute", 4, act_permute},
    {"acc", 3, act_acc},
    {"write_mask", 3, act_write_mask},
    {"soft_max_ext", 4, act_soft_max_ext},
    {"nn", 4, act_nn},
    {"flash_attn_ext", 5, act_flash_attn_ext},
    {"flash_attn_back", 3, act_flash_attn_back},
    {"train_op", 6, act_train_op},
    {"rope", 3, act_rope},
    {"conv", 3, act_conv},
    {"table_op", 3, act_table_op},
    {"opt_train", 1, act_opt_train},
    {"huge", 3, act_huge},
    {"new_graph", 3, act_new_graph},
    {"expand", 10, act_expand},
    {"params", 3, act_params},
    {"backward", 4, act_backward},
    {"reset", 2, act_reset},
    {"compute", 6, act_compute},
    {"evaluate", 6, act_evaluate},
    {"backend_alloc", 2, act_backend_alloc},
    {"transfer", 3, act_transfer},
    {"element_access", 3, act_element_access},
    {"canary", 1, act_canary},
    {"queries", 2, act_queries},
    {"toggle_no_alloc", 1, act_toggle_no_alloc},
    {"scratch_ctx", 1, act_scratch_ctx},
};
#define N_ACTIONS ((int) (sizeof actions / sizeof actions[0]))

static const struct action * pick_action(void) {
    int total = 0;
    for (int i = 0; i < N_ACTIONS; i++) total += actions[i].weight;
    int r = (int) rnd((uint64_t) total);
    for (int i = 0; i < N_ACTIONS; i++) {
        if (r < actions[i].weight) return &actions[i];
        r -= actions[i].weight;
    }
    return &actions[0];
}

/* ------------------------------------------------------------------ sequences */

void fz_run_sequence(uint64_t index, int steps) {
    struct fuzz f;
    memset(&f, 0, sizeof f);
    f.backend = ggml_backend_cpu_init();
    f.n_ctx = chance(0.3) ? 1 : 2;
    const enum ctx_kind second = (enum ctx_kind) rnd(CTX_KINDS);
    TRACE("== sequence %" PRIu64 ": %d context(s), second %s", index, f.n_ctx, ctx_kind_name[second]);
    bool ok = f.backend && open_ctx(&f.c[0], CTX_DATA) && (f.n_ctx == 1 || open_ctx(&f.c[1], second));
    for (int s = 0; ok && s < steps && !tc_bytes_exhausted(); s++) {
        const struct action * a = pick_action();
        TRACE("[%" PRIu64 ".%d] %s", index, s, a->name);
        a->run(&f);
    }
    for (int i = 0; i < f.n_ctx; i++) if (f.c[i].ctx) check_usable(&f.c[i], "the sequence", 1);
    for (int i = 0; i < f.n_ctx; i++) ggml_free(f.c[i].ctx);
    for (int i = 0; i < f.n_buffers; i++) ggml_backend_buffer_free(f.buffers[i]);
    ggml_backend_free(f.backend);
    n_sequences++;
}

bool fz_setup(bool trace, bool stats) {
    verbose = trace;
    print_stats = stats;
    /* the arena bytes of a probe, for contexts that are just big enough */
    struct ggml_init_params p = {1 << 16, NULL, false};
    struct fctx c = {0};
    c.ctx = ggml_init(p);
    if (!c.ctx || !make_probe(&c)) { ggml_free(c.ctx); return false; }
    probe_bytes = ggml_used_mem(c.ctx);
    ggml_free(c.ctx);
    return true;
}

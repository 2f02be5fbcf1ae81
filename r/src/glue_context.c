/* glue_context.c -- context records, the handles built on them, and the
 * context-level R entry points (ggml_init, ggml_free, memory facts, errors,
 * the default thread count).
 *
 * Lifetime of a context record (rg_ctx):
 *
 *   open --ggml_free()/GC--> closed --(no dependents)--> memory released
 *
 * "Closed" is what handles see: every use of a closed context is an R error.
 * The memory (the ggml arena and the backend buffers) is released as soon as
 * the context is closed AND no other context's tensors point into it. A
 * context gains such dependents when an op builds a node in another context
 * from its tensors (rg_tensor_arg). The record itself is freed once the
 * memory is released and its R object has been collected (finalized). */
#include "glue.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- tags ---- */

static SEXP tag_ctx(void)     { static SEXP s = NULL; if (!s) s = Rf_install("ggml_context");        return s; }
static SEXP tag_tensor(void)  { static SEXP s = NULL; if (!s) s = Rf_install("ggml_tensor");         return s; }
static SEXP tag_graph(void)   { static SEXP s = NULL; if (!s) s = Rf_install("ggml_cgraph");         return s; }
static SEXP tag_backend(void) { static SEXP s = NULL; if (!s) s = Rf_install("ggml_backend");        return s; }
static SEXP tag_buffer(void)  { static SEXP s = NULL; if (!s) s = Rf_install("ggml_backend_buffer"); return s; }

/* The end of the message for a handle whose address R dropped (saveRDS or
 * save, then readRDS or load). */
#define RG_RESTORED_HINT "it was saved (saveRDS, save) and read back, which keeps no ggml memory; " \
    "save a model with ggml_save_model() and read it back with ggml_load_model() (tensors: GGUF files)"

static int has_tag(SEXP x, SEXP tag) { return TYPEOF(x) == EXTPTRSXP && R_ExternalPtrTag(x) == tag; }

/* "a ggml_opt_context", ...: the handles of glue_opt.c and glue_gguf.c are
 * tagged with their class name; any other external pointer is foreign. */
static const char * describe_object(SEXP x) {
    static char buf[96];
    const SEXP tag = R_ExternalPtrTag(x);
    if (TYPEOF(tag) != SYMSXP || !Rf_inherits(x, CHAR(PRINTNAME(tag)))) return "a foreign external pointer";
    snprintf(buf, sizeof buf, "a %s", CHAR(PRINTNAME(tag)));
    return buf;
}

/* "a ggml tensor", "NULL", "a character vector", ... for error messages. */
static const char * describe(SEXP x) {
    if (x == R_NilValue) return "NULL";
    if (has_tag(x, tag_ctx()))     return "a ggml context";
    if (has_tag(x, tag_tensor()))  return "a ggml tensor";
    if (has_tag(x, tag_graph()))   return "a ggml graph";
    if (has_tag(x, tag_backend())) return "a ggml backend";
    if (has_tag(x, tag_buffer()))  return "a ggml backend buffer";
    switch (TYPEOF(x)) {
        case LGLSXP:  return "a logical vector";
        case INTSXP:  return Rf_isFactor(x) ? "a factor" : "an integer vector";
        case REALSXP: return "a numeric vector";
        case STRSXP:  return "a character vector";
        case VECSXP:  return "a list";
        case CLOSXP: case BUILTINSXP: case SPECIALSXP: return "a function";
        case EXTPTRSXP: return describe_object(x);
        default:      return Rf_type2char(TYPEOF(x));
    }
}

static SEXP new_handle(void * p, SEXP tag, SEXP prot, const char * cls) {
    SEXP x = PROTECT(R_MakeExternalPtr(p, tag, prot));
    Rf_setAttrib(x, R_ClassSymbol, Rf_mkString(cls));
    UNPROTECT(1);
    return x;
}

/* A tensor, graph or buffer handle made after its context was reset
 * (ggml_reset) carries the context's generation; one made before does not
 * match it and is refused. Contexts never reset cost nothing. */
static SEXP sym_generation(void) { static SEXP s = NULL; if (!s) s = Rf_install("ggml_generation"); return s; }

static double handle_generation(SEXP x) {
    SEXP g = Rf_getAttrib(x, sym_generation());
    return TYPEOF(g) == REALSXP && XLENGTH(g) == 1 ? REAL(g)[0] : 0;
}

static SEXP stamp_generation(SEXP x, SEXP owner) {
    const rg_ctx * c = has_tag(owner, tag_ctx()) ? R_ExternalPtrAddr(owner) : NULL;
    if (c && c->generation > 0) {
        PROTECT(x);
        Rf_setAttrib(x, sym_generation(), Rf_ScalarReal((double) c->generation));
        UNPROTECT(1);
    }
    return x;
}

static int stale(SEXP handle, const rg_ctx * c) { return c->generation > 0 && handle_generation(handle) != (double) c->generation; }

NORET void rg_fail(const char * fn) {
    const char * msg = ggml_last_error();
    if (msg && msg[0]) Rf_error("%s", msg);
    Rf_error("%s failed", fn);
}

void rg_check_status(enum ggml_status st, const char * fn) {
    if (st == GGML_STATUS_SUCCESS) return;
    if (!ggml_last_error()[0]) Rf_error("%s: %s", fn, ggml_status_to_string(st));
    rg_fail(fn);
}

/* ---- context records ---- *
 *
 * The records and their dependencies form a directed acyclic graph. Walks over
 * it are iterative (a chain of thousands of contexts must not overflow the C
 * stack), and a rank keeps the cycle check cheap: every context ranks above
 * the contexts it depends on, so a new dependency from a higher-ranked context
 * (the usual case: a new context using tensors of an older one) cannot close
 * a cycle and needs no walk at all. */

static uint64_t last_rank = 0;  /* the highest rank given out */
static uint64_t last_walk = 0;  /* stamp of the latest walk (marks) */

static int list_has(const rg_ctx_list * l, const rg_ctx * c) {
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == c) return 1;
    return 0;
}

/* Room for one more entry; 0 if out of memory (the list is unchanged). */
static int list_reserve(rg_ctx_list * l) {
    if (l->n < l->cap) return 1;
    if (l->cap > INT_MAX / 2) return 0;
    const int cap = l->cap ? 2 * l->cap : 4;
    rg_ctx ** v = realloc(l->v, (size_t) cap * sizeof *v);
    if (!v) return 0;
    l->v = v;
    l->cap = cap;
    return 1;
}

static void list_remove(rg_ctx_list * l, const rg_ctx * c) {
    for (int i = 0; i < l->n; i++) {
        if (l->v[i] == c) { l->v[i] = l->v[--l->n]; return; }
    }
}

static void list_clear(rg_ctx_list * l) {
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* A stack of records for the walks, in memory R reclaims after the call. */
typedef struct { rg_ctx ** v; R_xlen_t n, cap; } walk_stack;

static void walk_push(walk_stack * s, rg_ctx * c) {
    if (s->n == s->cap) {
        const R_xlen_t cap = s->cap ? 2 * s->cap : 64;
        rg_ctx ** v = (rg_ctx **) R_alloc((size_t) cap, sizeof *v);
        if (s->n) memcpy(v, s->v, (size_t) s->n * sizeof *v);
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = c;
}

static void free_record(rg_ctx * c) {
    rg_buffer * b = c->buffers;
    while (b) {
        rg_buffer * next = b->next;
        free(b);
        b = next;
    }
    list_clear(&c->deps);
    list_clear(&c->dependents);
    free(c);
}

static int releasable(const rg_ctx * c) { return c->closed && c->dependents.n == 0 && c->pins == 0 && c->ctx; }

/* Return the memory of c if it is closed and nobody depends on it, then do
 * the same for the contexts that only c kept alive. A worklist threaded
 * through the records (no allocation: this runs in finalizers too). */
static void maybe_release(rg_ctx * c) {
    if (!releasable(c)) return;
    rg_ctx * head = c;
    c->queued = 1;
    c->next_queued = NULL;
    while (head) {
        rg_ctx * x = head;
        head = x->next_queued;
        x->queued = 0;
        if (!releasable(x)) continue;
        for (rg_buffer * b = x->buffers; b; b = b->next) {
            if (b->buf) { ggml_backend_buffer_free(b->buf); b->buf = NULL; }
        }
        ggml_free(x->ctx);
        x->ctx = NULL;
        for (int i = 0; i < x->deps.n; i++) {
            rg_ctx * d = x->deps.v[i];
            list_remove(&d->dependents, x);
            if (!d->queued && releasable(d)) {
                d->queued = 1;
                d->next_queued = head;
                head = d;
            }
        }
        list_clear(&x->deps);
        if (x->finalized) free_record(x);
    }
}

static void ctx_finalizer(SEXP x) {
    rg_ctx * c = R_ExternalPtrAddr(x);
    if (!c) return;
    R_ClearExternalPtr(x);
    c->closed = 1;
    c->finalized = 1;
    if (c->ctx) maybe_release(c);  /* frees the record too, unless others still depend on it */
    else if (c->pins == 0) free_record(c);  /* memory already released by ggml_free */
}

rg_ctx * rg_ctx_get(SEXP x, const char * arg) {
    if (!has_tag(x, tag_ctx())) Rf_error("'%s' must be a ggml context (from ggml_init), not %s", arg, describe(x));
    rg_ctx * c = R_ExternalPtrAddr(x);
    if (!c) Rf_error("'%s' is not a usable context: " RG_RESTORED_HINT, arg);
    if (c->closed) Rf_error("'%s': the context has been freed (ggml_free)", arg);
    return c;
}

/* Does `src` reach `dst` through dependencies? Two walks take turns: forward
 * from src (the contexts it points into) and backward from dst (the contexts
 * pointing into it); they meet if and only if there is a path, and either one
 * running out proves there is none, so the cost is that of the smaller side.
 * Ranks fall along every edge, so the forward walk only needs contexts ranked
 * above dst and the backward walk only contexts ranked below src. */
static int reaches(rg_ctx * src, rg_ctx * dst) {
    const uint64_t walk = ++last_walk;
    walk_stack fwd = {NULL, 0, 0}, bwd = {NULL, 0, 0};
    src->mark = walk;
    dst->mark_b = walk;
    walk_push(&fwd, src);
    walk_push(&bwd, dst);
    while (fwd.n > 0 && bwd.n > 0) {
        const rg_ctx * x = fwd.v[--fwd.n];
        for (int i = 0; i < x->deps.n; i++) {
            rg_ctx * d = x->deps.v[i];
            if (d->mark_b == walk) return 1;  /* src reaches d, d reaches dst */
            if (d->mark == walk || d->rank <= dst->rank) continue;
            d->mark = walk;
            walk_push(&fwd, d);
        }
        const rg_ctx * y = bwd.v[--bwd.n];
        for (int i = 0; i < y->dependents.n; i++) {
            rg_ctx * e = y->dependents.v[i];
            if (e->mark == walk) return 1;    /* src reaches e, e reaches dst */
            if (e->mark_b == walk || e->rank >= src->rank) continue;
            e->mark_b = walk;
            walk_push(&bwd, e);
        }
    }
    return 0;
}

/* c's rank becomes `rank`; contexts depending on it rise above it, and so on. */
static void raise_rank(rg_ctx * c, uint64_t rank) {
    walk_stack s = {NULL, 0, 0};
    c->rank = rank;
    walk_push(&s, c);
    while (s.n > 0) {
        const rg_ctx * y = s.v[--s.n];
        if (y->rank > last_rank) last_rank = y->rank;
        for (int i = 0; i < y->dependents.n; i++) {
            rg_ctx * x = y->dependents.v[i];
            if (x->rank > y->rank) continue;
            x->rank = y->rank + 1;
            walk_push(&s, x);
        }
    }
}

void rg_ctx_depend(rg_ctx * from, rg_ctx * to) {
    if (from == to || list_has(&from->deps, to)) return;
    const int reorder = from->rank <= to->rank;
    if (reorder && reaches(to, from))
        Rf_error("tensors of two contexts cannot point into each other: the other context already uses "
                 "tensors of this one (build the op in that context instead)");
    if (!list_reserve(&from->deps) || !list_reserve(&to->dependents))
        Rf_error("out of memory recording a context dependency");
    from->deps.v[from->deps.n++] = to;
    to->dependents.v[to->dependents.n++] = from;
    if (reorder) raise_rank(from, to->rank + 1);
}

rg_buffer * rg_ctx_add_buffer(rg_ctx * c) {
    rg_buffer * b = calloc(1, sizeof *b);
    if (!b) Rf_error("ggml_backend_alloc_ctx_tensors: out of memory");
    b->next = c->buffers;
    c->buffers = b;
    return b;
}

void rg_ctx_pin(rg_ctx * c) { c->pins++; }

void rg_ctx_unpin(rg_ctx * c) {
    if (!c || --c->pins > 0) return;
    if (c->ctx) maybe_release(c);      /* frees the record too once it is finalized */
    else if (c->finalized) free_record(c);
}

void rg_ctx_free_buffer(rg_ctx * c, rg_buffer * b) {
    if (b->user_freed || !b->buf) { b->user_freed = 1; return; }
    /* Tensors pointing into the buffer: c's own (views included: they share
     * the buffer pointer), and views of them made in contexts that depend on
     * c, directly or through others. Collect those contexts first (the only
     * step that can fail), then detach the tensors and free the memory:
     * using any of them is now a clean "no data" error, and
     * ggml_backend_alloc_ctx_tensors can allocate c's tensors again. */
    const uint64_t walk = ++last_walk;
    walk_stack todo = {NULL, 0, 0}, seen = {NULL, 0, 0};
    c->mark = walk;
    walk_push(&todo, c);
    while (todo.n > 0) {
        rg_ctx * x = todo.v[--todo.n];
        walk_push(&seen, x);
        for (int i = 0; i < x->dependents.n; i++) {
            rg_ctx * d = x->dependents.v[i];
            if (d->mark == walk) continue;
            d->mark = walk;
            walk_push(&todo, d);
        }
    }
    b->user_freed = 1;
    for (R_xlen_t i = 0; i < seen.n; i++) {
        const rg_ctx * x = seen.v[i];
        if (!x->ctx) continue;
        for (struct ggml_tensor * t = ggml_get_first_tensor(x->ctx); t; t = ggml_get_next_tensor(x->ctx, t)) {
            if (t->buffer == b->buf) { t->data = NULL; t->buffer = NULL; }
        }
    }
    ggml_backend_buffer_free(b->buf);
    b->buf = NULL;
}

rg_ctx ** rg_ctx_connected(rg_ctx * c, size_t * count) {
    /* A breadth-first walk over the array it fills; malloc only: this runs
     * in finalizers too. */
    const uint64_t walk = ++last_walk;
    size_t n = 0, cap = 16;
    rg_ctx ** seen = malloc(cap * sizeof *seen);
    if (!seen) return NULL;
    c->mark = walk;
    seen[n++] = c;
    for (size_t k = 0; k < n; k++) {
        const rg_ctx * x = seen[k];
        const size_t need = n + (size_t) x->deps.n + (size_t) x->dependents.n;
        if (need > cap) {
            rg_ctx ** v = realloc(seen, 2 * need * sizeof *v);
            if (!v) { free(seen); return NULL; }
            seen = v;
            cap = 2 * need;
        }
        const rg_ctx_list * lists[2] = {&x->deps, &x->dependents};
        for (int l = 0; l < 2; l++) {
            for (int i = 0; i < lists[l]->n; i++) {
                rg_ctx * y = lists[l]->v[i];
                if (y->mark == walk) continue;
                y->mark = walk;
                seen[n++] = y;
            }
        }
    }
    *count = n;
    return seen;
}

int rg_ctx_detach_connected(rg_ctx * c, ggml_backend_buffer_t buf) {
    size_t n;
    rg_ctx ** seen = rg_ctx_connected(c, &n);
    if (!seen) return 0;
    for (size_t k = 0; k < n; k++) {
        struct ggml_context * ctx = seen[k]->ctx;
        if (!ctx) continue;
        for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
            if (t->buffer == buf) { t->data = NULL; t->buffer = NULL; }
        }
    }
    free(seen);
    return 1;
}

/* ---- handles ---- */

SEXP rg_owner(SEXP handle) { return R_ExternalPtrProtected(handle); }

/* Is owner an object handle (a dataset or optimization context owning
 * tensors of its own) rather than a ggml context? */
static int object_owner(SEXP owner) { return TYPEOF(owner) == EXTPTRSXP && !has_tag(owner, tag_ctx()); }

/* The open context a handle belongs to, or an R error. A tensor owned by an
 * object (dataset, optimization context) has none: NULL once the object is
 * checked to be alive. */
static rg_ctx * owner_ctx(SEXP handle, const char * arg, const char * what) {
    SEXP owner = rg_owner(handle);
    if (object_owner(owner)) {
        if (!R_ExternalPtrAddr(owner)) Rf_error("'%s' belongs to %s that has been freed", arg, describe_object(owner));
        return NULL;
    }
    rg_ctx * c = has_tag(owner, tag_ctx()) ? R_ExternalPtrAddr(owner) : NULL;
    if (!c) Rf_error("'%s' is not a usable %s: " RG_RESTORED_HINT, arg, what);
    if (c->closed) Rf_error("'%s' belongs to a context that has been freed (ggml_free)", arg);
    if (stale(handle, c)) Rf_error("'%s' belongs to a context that has been reset (ggml_reset) since it was made", arg);
    return c;
}

SEXP rg_tensor_wrap(struct ggml_tensor * t, SEXP owner) {
    if (!t) return R_NilValue;
    return stamp_generation(new_handle(t, tag_tensor(), owner, "ggml_tensor"), owner);
}

struct ggml_tensor * rg_tensor_get(SEXP x, const char * arg, int allow_null) {
    if (x == R_NilValue) {
        if (allow_null) return NULL;
        Rf_error("'%s' is NULL: a ggml tensor is required", arg);
    }
    if (!has_tag(x, tag_tensor())) Rf_error("'%s' must be a ggml tensor, not %s", arg, describe(x));
    struct ggml_tensor * t = R_ExternalPtrAddr(x);
    if (!t) Rf_error("'%s' is not a usable tensor: " RG_RESTORED_HINT, arg);
    owner_ctx(x, arg, "tensor");
    return t;
}

struct ggml_tensor * rg_tensor_arg(rg_ctx * ctx, SEXP x, const char * arg, int allow_null) {
    struct ggml_tensor * t = rg_tensor_get(x, arg, allow_null);
    if (!t) return t;
    rg_ctx * c = owner_ctx(x, arg, "tensor");
    if (!c) Rf_error("'%s' belongs to %s: it cannot be used in ops (copy its values into a tensor of a context)",
                     arg, describe_object(rg_owner(x)));
    rg_ctx_depend(ctx, c);
    return t;
}

SEXP rg_result(SEXP ctx, struct ggml_tensor * t, const char * fn) {
    if (!t) rg_fail(fn);
    return rg_tensor_wrap(t, ctx);
}

SEXP rg_graph_wrap(struct ggml_cgraph * g, SEXP owner) {
    if (!g) return R_NilValue;
    return stamp_generation(new_handle(g, tag_graph(), owner, "ggml_cgraph"), owner);
}

struct ggml_cgraph * rg_graph_get(SEXP x, const char * arg) {
    if (!has_tag(x, tag_graph())) Rf_error("'%s' must be a ggml graph, not %s", arg, describe(x));
    struct ggml_cgraph * g = R_ExternalPtrAddr(x);
    if (!g) Rf_error("'%s' is not a usable graph: " RG_RESTORED_HINT, arg);
    owner_ctx(x, arg, "graph");
    return g;
}

static void backend_finalizer(SEXP x) {
    ggml_backend_t be = R_ExternalPtrAddr(x);
    if (be) {
        R_ClearExternalPtr(x);
        ggml_backend_free(be);
    }
}

SEXP rg_backend_handle(void) {
    SEXP x = PROTECT(new_handle(NULL, tag_backend(), R_NilValue, "ggml_backend"));
    R_RegisterCFinalizerEx(x, backend_finalizer, TRUE);
    UNPROTECT(1);
    return x;
}

ggml_backend_t rg_backend_get(SEXP x, const char * arg) {
    if (!has_tag(x, tag_backend())) Rf_error("'%s' must be a ggml backend (from ggml_backend_cpu_init), not %s", arg, describe(x));
    ggml_backend_t be = R_ExternalPtrAddr(x);
    if (!be) Rf_error("'%s': the backend has been freed (ggml_backend_free)", arg);
    return be;
}

void rg_backend_release(SEXP x) {
    if (!has_tag(x, tag_backend())) Rf_error("'backend' must be a ggml backend, not %s", describe(x));
    backend_finalizer(x);
}

SEXP rg_buffer_wrap(rg_buffer * b, SEXP owner) {
    return stamp_generation(new_handle(b, tag_buffer(), owner, "ggml_backend_buffer"), owner);
}

rg_buffer * rg_buffer_get(SEXP x, const char * arg) {
    if (!has_tag(x, tag_buffer())) Rf_error("'%s' must be a ggml backend buffer, not %s", arg, describe(x));
    rg_buffer * b = R_ExternalPtrAddr(x);
    if (!b) Rf_error("'%s' is not a usable buffer: " RG_RESTORED_HINT, arg);
    owner_ctx(x, arg, "buffer");
    if (b->user_freed) Rf_error("'%s': the buffer has been freed (ggml_backend_buffer_free)", arg);
    return b;
}

void rg_buffer_release(SEXP x) {
    if (!has_tag(x, tag_buffer())) Rf_error("'buffer' must be a ggml backend buffer, not %s", describe(x));
    /* already freed, or gone with its context: nothing to do */
    if (rg_handle_valid(x)) rg_ctx_free_buffer(R_ExternalPtrAddr(rg_owner(x)), R_ExternalPtrAddr(x));
}

int rg_handle_valid(SEXP x) {
    if (TYPEOF(x) != EXTPTRSXP || !R_ExternalPtrAddr(x)) return 0;
    SEXP tag = R_ExternalPtrTag(x);
    if (tag == tag_backend()) return 1;
    if (tag == tag_ctx()) return !((rg_ctx *) R_ExternalPtrAddr(x))->closed;
    if (tag != tag_tensor() && tag != tag_graph() && tag != tag_buffer())
        return TYPEOF(tag) == SYMSXP && Rf_inherits(x, CHAR(PRINTNAME(tag)));  /* a live object handle */
    SEXP owner = rg_owner(x);
    if (tag == tag_tensor() && object_owner(owner)) return R_ExternalPtrAddr(owner) != NULL;
    const rg_ctx * c = has_tag(owner, tag_ctx()) ? R_ExternalPtrAddr(owner) : NULL;
    if (!c || c->closed || stale(x, c)) return 0;
    return tag != tag_buffer() || !((rg_buffer *) R_ExternalPtrAddr(x))->user_freed;
}

/* ---- R entry points: contexts ---- */

/* A context handle with an open record and no arena yet (the caller sets
 * rec->ctx). The handle first, then the record: if a later step fails the
 * finalizer frees what was made, so nothing leaks. */
SEXP rg_ctx_new_handle(rg_ctx ** rec) {
    SEXP x = PROTECT(new_handle(NULL, tag_ctx(), R_NilValue, "ggml_context"));
    R_RegisterCFinalizerEx(x, ctx_finalizer, TRUE);
    rg_ctx * c = calloc(1, sizeof *c);
    if (!c) Rf_error("ggml_init: out of memory");
    R_SetExternalPtrAddr(x, c);
    c->rank = ++last_rank;
    *rec = c;
    UNPROTECT(1);
    return x;
}

SEXP R_ggml_init(SEXP mem_size, SEXP no_alloc) {
    struct ggml_init_params params = {rg_bytes(mem_size, "mem_size"), NULL, rg_bool(no_alloc, "no_alloc")};
    rg_ctx * c;
    SEXP x = PROTECT(rg_ctx_new_handle(&c));
    ggml_clear_error();
    c->ctx = ggml_init(params);
    if (!c->ctx) {
        c->closed = 1;
        rg_fail("ggml_init");
    }
    UNPROTECT(1);
    return x;
}

SEXP R_ggml_free(SEXP x) {
    if (!has_tag(x, tag_ctx())) Rf_error("'ctx' must be a ggml context (from ggml_init), not %s", describe(x));
    rg_ctx * c = R_ExternalPtrAddr(x);
    if (c && !c->closed) {  /* freeing twice is harmless */
        c->closed = 1;
        maybe_release(c);
    }
    return R_NilValue;
}

/* Forget every object of the context and reuse its memory. Its tensors,
 * graphs and buffers made so far become unusable (their handles are refused,
 * the buffers freed). Refused while tensors of other contexts point into it
 * or an optimization context uses it: they would point into reused memory. */
SEXP R_ggml_reset(SEXP ctx) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    if (c->dependents.n > 0)
        Rf_error("ggml_reset: tensors of %d other context%s point into this context's memory (views, op results): free "
                 "them first", c->dependents.n, c->dependents.n == 1 ? "" : "s");
    if (c->pins > 0) Rf_error("ggml_reset: an optimization context or a graph allocator uses this context: free it first");
    for (rg_buffer * b = c->buffers; b; b = b->next) {
        if (b->buf) { ggml_backend_buffer_free(b->buf); b->buf = NULL; }
        b->user_freed = 1;
    }
    ggml_reset(c->ctx);
    c->generation++;
    return R_NilValue;
}

SEXP R_ggml_set_no_alloc(SEXP ctx, SEXP no_alloc) {
    const int v = rg_bool(no_alloc, "no_alloc");
    ggml_set_no_alloc(rg_ctx_get(ctx, "ctx")->ctx, v);
    return R_NilValue;
}

SEXP R_ggml_get_no_alloc(SEXP ctx) { return Rf_ScalarLogical(ggml_get_no_alloc(rg_ctx_get(ctx, "ctx")->ctx)); }
SEXP R_ggml_used_mem(SEXP ctx)     { return rg_size_sexp((double) ggml_used_mem(rg_ctx_get(ctx, "ctx")->ctx)); }
SEXP R_ggml_get_mem_size(SEXP ctx) { return rg_size_sexp((double) ggml_get_mem_size(rg_ctx_get(ctx, "ctx")->ctx)); }
SEXP R_ggml_tensor_overhead(void)  { return rg_size_sexp((double) ggml_tensor_overhead()); }
SEXP R_ggml_graph_overhead(void)   { return rg_size_sexp((double) ggml_graph_overhead()); }

SEXP R_ggml_graph_overhead_custom(SEXP size, SEXP grads) {
    return rg_size_sexp((double) ggml_graph_overhead_custom((size_t) rg_count(size, "size"), rg_bool(grads, "grads")));
}

SEXP R_ggml_get_first_tensor(SEXP ctx) {
    return rg_tensor_wrap(ggml_get_first_tensor(rg_ctx_get(ctx, "ctx")->ctx), ctx);
}

SEXP R_ggml_get_next_tensor(SEXP ctx, SEXP tensor) {
    rg_ctx * c = rg_ctx_get(ctx, "ctx");
    struct ggml_tensor * t = rg_tensor_get(tensor, "tensor", 0);
    /* The walk follows the tensor's own context, which must be ctx. The
     * handle's owner does not say (a graph's nodes carry the graph's
     * context): the library checks where the tensor lives. */
    ggml_clear_error();
    struct ggml_tensor * next = ggml_get_next_tensor(c->ctx, t);
    if (!next && ggml_last_error()[0]) rg_fail("ggml_get_next_tensor");
    return rg_tensor_wrap(next, ctx);
}

SEXP R_ggml_get_tensor(SEXP ctx, SEXP name) {
    const char * s = rg_string(name, "name");
    return rg_tensor_wrap(ggml_get_tensor(rg_ctx_get(ctx, "ctx")->ctx, s), ctx);
}

SEXP R_ggml_handle_valid(SEXP x) { return Rf_ScalarLogical(rg_handle_valid(x)); }
/* A tensor, graph or context handle whose address is NULL: never made so
 * here, so it was serialized (saveRDS, save) and read back. */
SEXP R_ggml_handle_restored(SEXP x) {
    return Rf_ScalarLogical(TYPEOF(x) == EXTPTRSXP && !R_ExternalPtrAddr(x) &&
                            (has_tag(x, tag_tensor()) || has_tag(x, tag_graph()) || has_tag(x, tag_ctx())));
}

/* ---- errors ---- */

SEXP R_ggml_last_error(void) { return Rf_mkString(ggml_last_error()); }
SEXP R_ggml_clear_error(void) { ggml_clear_error(); return R_NilValue; }
SEXP R_ggml_status_to_string(SEXP status) { return Rf_mkString(ggml_status_to_string((enum ggml_status) rg_int(status, "status"))); }

/* ---- threads and CPU ---- */

static int default_threads = 0;  /* 0: the machine's cores */

int rg_default_threads(void) { return default_threads > 0 ? default_threads : ggml_cpu_n_cores(); }

SEXP R_ggml_set_n_threads(SEXP n) {
    const int v = rg_int(n, "n");
    if (v < 1 || v > 256) Rf_error("'n' must be between 1 and 256 (got %d)", v);
    default_threads = v;
    return R_NilValue;
}

SEXP R_ggml_get_n_threads(void) { return Rf_ScalarInteger(rg_default_threads()); }
SEXP R_ggml_cpu_n_cores(void)   { return Rf_ScalarInteger(ggml_cpu_n_cores()); }
SEXP R_ggml_cpu_simd_name(void) { return Rf_mkString(ggml_cpu_simd_name()); }

/* ---- object handles (datasets, optimization contexts, results, GGUF contexts) ---- */

SEXP rg_object_handle(const char * cls, SEXP prot, R_CFinalizer_t finalizer) {
    SEXP x = PROTECT(new_handle(NULL, Rf_install(cls), prot, cls));
    R_RegisterCFinalizerEx(x, finalizer, TRUE);
    UNPROTECT(1);
    return x;
}

int rg_is_object(SEXP x, const char * cls) { return TYPEOF(x) == EXTPTRSXP && R_ExternalPtrTag(x) == Rf_install(cls); }

void * rg_object_get(SEXP x, const char * cls, const char * arg) {
    if (!rg_is_object(x, cls)) Rf_error("'%s' must be a %s, not %s", arg, cls, describe(x));
    void * p = R_ExternalPtrAddr(x);
    if (!p) Rf_error("'%s': the %s has been freed (or was saved and restored from another session)", arg, cls);
    return p;
}

void rg_object_set(SEXP x, void * p, const char * fn) {
    if (!p) rg_fail(fn);
    R_SetExternalPtrAddr(x, p);
}

SEXP rg_object_free(SEXP x, const char * cls, const char * arg, R_CFinalizer_t release) {
    if (!rg_is_object(x, cls)) rg_object_get(x, cls, arg);  /* the error */
    release(x);
    return R_NilValue;
}

/* glue.h -- shared pieces of the R glue: handles and argument conversion.
 *
 * Every object crosses into R as an external pointer (EXTPTRSXP) whose tag
 * names its kind. The rules that keep the session safe:
 *
 *  - A context is an `rg_ctx` record. ggml_free() (or the garbage collector)
 *    closes it; every handle checks that its context is open before use, so a
 *    freed context gives an R error, never a dangling pointer.
 *  - Tensor, graph and buffer handles store their context's external pointer
 *    in their protected slot: while such a handle is reachable, its context
 *    is too, so the garbage collector never frees memory still in use.
 *  - An op may use tensors of another context. The new tensor then points
 *    into that context's memory, so the context that holds it records a
 *    dependency; a closed context keeps its memory until no context
 *    depends on it any more (see glue_context.c).
 *  - All arguments are converted and checked before any C state changes, and
 *    every C failure becomes an R error carrying ggml_last_error().
 */
#ifndef GGMLR_GLUE_H
#define GGMLR_GLUE_H

#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>

#include <stdint.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

/* ---- context records (glue_context.c) ---- */

/* A backend buffer owned by a context (ggml_backend_alloc_ctx_tensors). */
typedef struct rg_buffer {
    ggml_backend_buffer_t buf;  /* NULL once its memory is returned */
    int user_freed;             /* ggml_backend_buffer_free() called: the handle refuses it */
    struct rg_buffer * next;
} rg_buffer;

/* A set of context records (a growable array). */
typedef struct rg_ctx_list {
    struct rg_ctx ** v;
    int n, cap;
} rg_ctx_list;

typedef struct rg_ctx {
    struct ggml_context * ctx;  /* NULL once its memory is released */
    int closed;                 /* ggml_free() called or collected: handles refuse it */
    int finalized;              /* its R object is gone */
    rg_ctx_list deps;           /* contexts this one's tensors point into */
    rg_ctx_list dependents;     /* contexts whose tensors point into this one */
    uint64_t rank;              /* greater than the rank of every context in deps */
    rg_buffer * buffers;        /* buffers holding this context's tensor data */
    uint64_t mark, mark_b;      /* scratch for the walks over dependencies */
    int pins;                   /* objects (optimization contexts) using its memory: not released while > 0 */
    uint64_t generation;        /* ggml_reset count: handles made before the latest reset are refused */
    int queued;                 /* on the release worklist */
    struct rg_ctx * next_queued;
} rg_ctx;

/* A new context handle with an open record whose arena the caller makes
 * (rec->ctx; a caller that fails sets rec->closed). Made before the arena, so
 * that an R error cannot leak it. */
SEXP      rg_ctx_new_handle(rg_ctx ** rec);
/* Keep c's memory while an object outside the context graph uses it. */
void      rg_ctx_pin(rg_ctx * c);
void      rg_ctx_unpin(rg_ctx * c);
/* The open context behind x, or an R error naming `arg`. */
rg_ctx *  rg_ctx_get(SEXP x, const char * arg);
/* Record that tensors of `from` point into `to` (R error on a cycle). */
void      rg_ctx_depend(rg_ctx * from, rg_ctx * to);
/* ggml_backend_buffer_free of a context's buffer: every tensor that points
 * into it (the context's own, and views made in contexts that depend on it)
 * loses its data, and the memory goes now. */
void      rg_ctx_free_buffer(rg_ctx * c, rg_buffer * b);
/* The contexts connected to c through dependencies, either way (c first):
 * a malloc'd array of *count (the caller frees it), NULL when out of memory.
 * No R allocation: finalizers may call it. */
rg_ctx ** rg_ctx_connected(rg_ctx * c, size_t * count);
/* Every tensor pointing into buf, in the contexts connected to c through
 * dependencies (either way), loses its data (data and buffer cleared). No R
 * allocation (finalizers may call it); 0 when out of memory, nothing done. */
int       rg_ctx_detach_connected(rg_ctx * c, ggml_backend_buffer_t buf);
/* A new buffer record for c (R error if out of memory; nothing changed then). */
rg_buffer * rg_ctx_add_buffer(rg_ctx * c);

/* ---- handles (glue_context.c) ---- */

SEXP rg_tensor_wrap(struct ggml_tensor * t, SEXP owner);  /* R NULL for NULL */
/* The tensor behind x (R NULL allowed only with allow_null), or an R error. */
struct ggml_tensor * rg_tensor_get(SEXP x, const char * arg, int allow_null);
/* The context external pointer a handle belongs to. */
SEXP rg_owner(SEXP handle);
/* A tensor argument of an op that creates nodes in ctx: records the dependency. */
struct ggml_tensor * rg_tensor_arg(rg_ctx * ctx, SEXP x, const char * arg, int allow_null);
/* The tensor handle for an op's result in ctx, or an R error naming fn. */
SEXP rg_result(SEXP ctx, struct ggml_tensor * t, const char * fn);

SEXP                 rg_graph_wrap(struct ggml_cgraph * g, SEXP owner);
struct ggml_cgraph * rg_graph_get(SEXP x, const char * arg);

/* An empty backend handle whose finalizer frees the backend set into it
 * with R_SetExternalPtrAddr (made first, so a failure cannot leak). */
SEXP          rg_backend_handle(void);
ggml_backend_t rg_backend_get(SEXP x, const char * arg);
/* ggml_backend_free: frees it once; again is harmless; not a backend is an R error. */
void          rg_backend_release(SEXP x);

SEXP        rg_buffer_wrap(rg_buffer * b, SEXP owner);
rg_buffer * rg_buffer_get(SEXP x, const char * arg);
/* ggml_backend_buffer_free, with the same rules. */
void        rg_buffer_release(SEXP x);

/* Handles of the C objects of glue_opt.c and glue_gguf.c: an external pointer
 * tagged and classed `cls`, whose finalizer frees the object; the address is
 * NULL once freed. rg_object_get gives the live object or an R error. A
 * tensor handle may have such an object as owner (the tensors a dataset or an
 * optimization context holds): it is usable while the object is alive, and
 * cannot be an op argument. */
SEXP   rg_object_handle(const char * cls, SEXP prot, R_CFinalizer_t finalizer);
void * rg_object_get(SEXP x, const char * cls, const char * arg);
/* Is x an object handle of class cls (alive or freed)? */
int    rg_is_object(SEXP x, const char * cls);
/* The constructor's result p for the new handle x (which the caller holds
 * protected): set into x, or an R error naming fn when p is NULL. */
void   rg_object_set(SEXP x, void * p, const char * fn);
/* The R side of ggml_..._free: release(x) frees the object once (it clears the
 * address, so again is harmless); not a handle of class cls is an R error
 * naming arg. Returns R NULL. */
SEXP   rg_object_free(SEXP x, const char * cls, const char * arg, R_CFinalizer_t release);

/* Is the handle usable (its context open, the object not freed)? Never errors. */
int rg_handle_valid(SEXP x);

/* ---- errors ---- */

/* R error with the library's message (or a fallback naming fn). */
NORET void rg_fail(const char * fn);
/* R error unless st is GGML_STATUS_SUCCESS. */
void rg_check_status(enum ggml_status st, const char * fn);

/* ---- argument conversion (glue_args.c); each gives an R error on bad input ---- */

int64_t        rg_count(SEXP x, const char * arg);     /* whole number >= 0 (sizes, ne) */
int64_t        rg_count_value(double v, const char * arg);  /* the same check for one value */
size_t         rg_bytes(SEXP x, const char * arg);     /* whole number >= 0 (byte strides, offsets) */
int            rg_int(SEXP x, const char * arg);       /* any whole number in int range */
float          rg_float(SEXP x, const char * arg);     /* a number, not NA */
double         rg_double(SEXP x, const char * arg);    /* a number, not NA (NaN allowed) */
int            rg_is_int32(double v);                  /* a whole number in int32 range, not NA/NaN */
ggml_fp16_t    rg_half(double v);                      /* the nearest binary16 (ties to even) */
int            rg_bool(SEXP x, const char * arg);      /* TRUE or FALSE */
enum ggml_type rg_type(SEXP x, const char * arg);      /* a value of enum ggml_type (GGML_TYPE_*) */
const char *   rg_string(SEXP x, const char * arg);    /* one string, not NA */
/* A numeric (double or integer) vector: its length, and its values as doubles via rg_num_at. */
R_xlen_t       rg_numeric_len(SEXP x, const char * arg);
double         rg_num_at(SEXP x, R_xlen_t i);
/* Size as an R number (double: exact up to 2^53). */
SEXP           rg_size_sexp(double v);

/* The log callback writing the library's text to R's console (init.c). */
void rg_log_to_console(enum ggml_log_level level, const char * text, void * user_data);

/* The package default thread count (ggml_set_n_threads). */
int rg_default_threads(void);

/* ---- op wrappers (glue_bindings.c, generated by tools/bindings.R) ----
 *
 * Every op wrapper follows the same three steps: check the context, convert
 * the arguments in order (tensor arguments record that ctx now points into
 * their context), call the constructor, and turn a NULL result into an R
 * error with the library's message. */

#define TENSOR(c, x, name)          rg_tensor_arg(c, x, name, 0)
#define TENSOR_OR_NULL(c, x, name)  rg_tensor_arg(c, x, name, 1)
/* Clear the error state, call the constructor (all arguments are converted
 * by now), and wrap the result or fail with the library's message. */
#define FINISH(ctx, fn, call)       (ggml_clear_error(), rg_result(ctx, (call), fn))

/* ---- .Call entry points: SEXP R_<name>(SEXP, ...) for each line of entry_points.h ---- */

/* The parameter list of an entry point taking n arguments (n <= 15,
 * ggml_conv_3d_direct: a longer one needs its line here). */
#define RG_SEXP_ARGS_0 void
#define RG_SEXP_ARGS_1 SEXP
#define RG_SEXP_ARGS_2 SEXP, SEXP
#define RG_SEXP_ARGS_3 SEXP, SEXP, SEXP
#define RG_SEXP_ARGS_4 SEXP, SEXP, SEXP, SEXP
#define RG_SEXP_ARGS_5 SEXP, SEXP, SEXP, SEXP, SEXP
#define RG_SEXP_ARGS_6 SEXP, SEXP, SEXP, SEXP, SEXP, SEXP
#define RG_SEXP_ARGS_7 SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP
#define RG_SEXP_ARGS_8 SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP
#define RG_SEXP_ARGS_9 RG_SEXP_ARGS_8, SEXP
#define RG_SEXP_ARGS_10 RG_SEXP_ARGS_8, SEXP, SEXP
#define RG_SEXP_ARGS_11 RG_SEXP_ARGS_8, SEXP, SEXP, SEXP
#define RG_SEXP_ARGS_12 RG_SEXP_ARGS_8, SEXP, SEXP, SEXP, SEXP
#define RG_SEXP_ARGS_13 RG_SEXP_ARGS_8, SEXP, SEXP, SEXP, SEXP, SEXP
#define RG_SEXP_ARGS_14 RG_SEXP_ARGS_8, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP
#define RG_SEXP_ARGS_15 RG_SEXP_ARGS_8, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP, SEXP

#define ENTRY(name, nargs) SEXP R_##name(RG_SEXP_ARGS_##nargs);
#include "entry_points.h"
#undef ENTRY

#endif /* GGMLR_GLUE_H */

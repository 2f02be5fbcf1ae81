/* context.c -- the context arena, tensor creation, views, names and element access.
 *
 * A context is one memory block. Objects (tensors, graphs) are laid out in it
 * one after another, each preceded by a small header that links them in
 * creation order, so a context can list its tensors (the backend allocator
 * needs that). Nothing in a context is freed individually. */
#include "core/internal.h"

/* Only for the prototypes of the I32 element access defined below (next to
 * the F32 one, sharing its checks): upstream's public API declares them in
 * ggml-cpu.h. Core uses nothing of the cpu stage (tests/check_layers.sh). */
#include "ggml-cpu.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

enum object_kind { OBJECT_TENSOR, OBJECT_GRAPH, OBJECT_WORK_BUFFER };  /* upstream's numbers (ggml_print_object) */

struct object {
    size_t offs;   /* of the payload, from the start of the arena */
    size_t size;   /* payload bytes */
    struct object * next;
    enum object_kind kind;
    char padding[4];
};

struct ggml_context {
    size_t mem_size;
    void * mem_buffer;
    bool   mem_buffer_owned;
    bool   no_alloc;
    int    n_objects;
    struct object * objects_begin;
    struct object * objects_end;
};

#define ALIGN_UP(x, a) (((x) + (a) - 1) / (a) * (a))
#define OBJECT_SIZE ALIGN_UP(sizeof(struct object), GGML_MEM_ALIGN)

/* ---- types ---- */

/* Names, sizes and converters are quant/traits.c's (the stage below). */

float ggmlr_load_f32(enum ggml_type type, const void * p) {
    switch (type) {
        case GGML_TYPE_F32: { float v; memcpy(&v, p, 4); return v; }
        case GGML_TYPE_F16: { ggml_fp16_t h; memcpy(&h, p, 2); return ggml_fp16_to_fp32(h); }
        case GGML_TYPE_BF16: { ggml_bf16_t h; memcpy(&h, p, 2); return ggml_bf16_to_fp32(h); }
        case GGML_TYPE_I32: { int32_t v; memcpy(&v, p, 4); return (float) v; }
        case GGML_TYPE_I16: { int16_t v; memcpy(&v, p, 2); return (float) v; }
        case GGML_TYPE_I64: { int64_t v; memcpy(&v, p, 8); return (float) v; }
        case GGML_TYPE_I8:  { int8_t v; memcpy(&v, p, 1); return (float) v; }
        case GGML_TYPE_F64: { double v; memcpy(&v, p, 8); return (float) v; }
        default: return NAN;
    }
}

void ggmlr_store_f32(enum ggml_type type, void * p, float v) {
    switch (type) {
        case GGML_TYPE_F32: memcpy(p, &v, 4); break;
        case GGML_TYPE_F16: { ggml_fp16_t h = ggml_fp32_to_fp16(v); memcpy(p, &h, 2); break; }
        case GGML_TYPE_BF16: { ggml_bf16_t h = ggml_fp32_to_bf16(v); memcpy(p, &h, 2); break; }
        case GGML_TYPE_I32: {
            /* saturate: a float outside int32 (or NaN) has no int32 value */
            int32_t i = isnan(v) ? 0 : v >= 2147483648.0f ? INT32_MAX : v < -2147483648.0f ? INT32_MIN : (int32_t) v;
            memcpy(p, &i, 4);
            break;
        }
        case GGML_TYPE_I64: {
            /* 2^63 is the first float past INT64_MAX */
            const int64_t i = isnan(v) ? 0 : v >= 9223372036854775808.0f ? INT64_MAX : v < -9223372036854775808.0f ? INT64_MIN : (int64_t) v;
            memcpy(p, &i, 8);
            break;
        }
        case GGML_TYPE_I16: {
            const int16_t i = isnan(v) ? 0 : v >= 32767.0f ? INT16_MAX : v <= -32768.0f ? INT16_MIN : (int16_t) v;
            memcpy(p, &i, 2);
            break;
        }
        case GGML_TYPE_I8: {
            const int8_t i = isnan(v) ? 0 : v >= 127.0f ? INT8_MAX : v <= -128.0f ? INT8_MIN : (int8_t) v;
            memcpy(p, &i, 1);
            break;
        }
        case GGML_TYPE_F64: { const double d = v; memcpy(p, &d, 8); break; }
        default: break;
    }
}

/* ---- context ---- */

struct ggml_context * ggml_init(struct ggml_init_params params) {
    if (params.mem_size > SIZE_MAX / 2) {
        ggmlr_set_error("ggml_init: mem_size %zu is too large", params.mem_size);
        return NULL;
    }
    struct ggml_context * ctx = ggmlr_calloc(1, sizeof *ctx);
    if (!ctx) { ggmlr_set_error("ggml_init: out of memory allocating the context"); return NULL; }
    size_t size = ALIGN_UP(params.mem_size, GGML_MEM_ALIGN);
    if (size == 0) size = GGML_MEM_ALIGN;
    ctx->mem_size = size;
    ctx->no_alloc = params.no_alloc;
    if (params.mem_buffer) {
        /* the caller's buffer holds exactly mem_size bytes from wherever it
         * starts: the arena is its aligned part, rounded down, never more */
        const size_t skip = ALIGN_UP((uintptr_t) params.mem_buffer, GGML_MEM_ALIGN) - (uintptr_t) params.mem_buffer;
        ctx->mem_size = params.mem_size > skip ? (params.mem_size - skip) / GGML_MEM_ALIGN * GGML_MEM_ALIGN : 0;
        ctx->mem_buffer = params.mem_buffer;
    } else {
        ctx->mem_buffer = ggmlr_calloc(1, size + GGML_MEM_ALIGN);
        if (!ctx->mem_buffer) {
            ggmlr_set_error("ggml_init: cannot allocate %zu bytes for the context", size);
            free(ctx);
            return NULL;
        }
        ctx->mem_buffer_owned = true;
    }
    return ctx;
}

void ggml_free(struct ggml_context * ctx) {
    if (!ctx) return;
    if (ctx->mem_buffer_owned) free(ctx->mem_buffer);
    free(ctx);
}

void ggml_set_no_alloc(struct ggml_context * ctx, bool no_alloc) { if (ctx) ctx->no_alloc = no_alloc; }
bool ggml_get_no_alloc(struct ggml_context * ctx) { return ctx ? ctx->no_alloc : false; }
size_t ggml_get_mem_size(const struct ggml_context * ctx) { return ctx ? ctx->mem_size : 0; }

size_t ggml_used_mem(const struct ggml_context * ctx) {
    if (!ctx || !ctx->objects_end) return 0;
    return ctx->objects_end->offs + ctx->objects_end->size;
}

size_t ggml_tensor_overhead(void) { return OBJECT_SIZE + ALIGN_UP(sizeof(struct ggml_tensor), GGML_MEM_ALIGN); }

/* Reserve an object of `size` payload bytes at the end of the arena. */
static struct object * new_object(struct ggml_context * ctx, enum object_kind kind, size_t size) {
    const size_t cur_end = ggml_used_mem(ctx);
    const size_t payload = ALIGN_UP(size, GGML_MEM_ALIGN);
    /* overflow-safe: cur_end <= mem_size always holds */
    if (payload > ctx->mem_size || OBJECT_SIZE > ctx->mem_size - payload ||
        cur_end > ctx->mem_size - payload - OBJECT_SIZE) {
        ggmlr_set_error("not enough space in the context's memory pool (needed %zu bytes, available %zu of %zu)",
                        payload + OBJECT_SIZE, ctx->mem_size - cur_end, ctx->mem_size);
        return NULL;
    }
    char * base = (char *) ALIGN_UP((uintptr_t) ctx->mem_buffer, GGML_MEM_ALIGN);
    struct object * obj = (struct object *) (base + cur_end);
    obj->offs = cur_end + OBJECT_SIZE;
    obj->size = payload;
    obj->next = NULL;
    obj->kind = kind;
    if (ctx->objects_end) ctx->objects_end->next = obj; else ctx->objects_begin = obj;
    ctx->objects_end = obj;
    ctx->n_objects++;
    return obj;
}

static void * object_payload(const struct ggml_context * ctx, const struct object * obj) {
    return (char *) ALIGN_UP((uintptr_t) ctx->mem_buffer, GGML_MEM_ALIGN) + obj->offs;
}

void * ggmlr_ctx_alloc_object(struct ggml_context * ctx, size_t size) {
    struct object * obj = new_object(ctx, OBJECT_GRAPH, size);
    if (!obj) return NULL;
    void * p = object_payload(ctx, obj);
    memset(p, 0, size);
    return p;
}

/* Forgets every object: the arena is reused from its start and the tensors
 * and graphs made before must no longer be used (as upstream). */
void ggml_reset(struct ggml_context * ctx) {
    if (!ctx) return;
    ctx->n_objects = 0;
    ctx->objects_begin = ctx->objects_end = NULL;
}

void * ggml_get_mem_buffer(const struct ggml_context * ctx) { return ctx ? ctx->mem_buffer : NULL; }

void * ggml_new_buffer(struct ggml_context * ctx, size_t nbytes) {
    if (!ctx) { ggmlr_set_error("ggml_new_buffer: context is NULL"); return NULL; }
    struct object * obj = new_object(ctx, OBJECT_WORK_BUFFER, nbytes);
    return obj ? object_payload(ctx, obj) : NULL;
}

void ggml_print_object(const struct ggml_object * obj) {
    if (!obj) return;
    const struct object * o = (const struct object *) obj;
    ggmlr_log(GGML_LOG_LEVEL_INFO, " - ggml_object: type = %d, offset = %zu, size = %zu, next = %p\n", (int) o->kind, o->offs,
              o->size, (const void *) o->next);
}

void ggml_print_objects(const struct ggml_context * ctx) {
    if (!ctx) return;
    ggmlr_log(GGML_LOG_LEVEL_INFO, "ggml_print_objects: objects in context %p:\n", (const void *) ctx);
    for (const struct object * o = ctx->objects_begin; o; o = o->next) ggml_print_object((const struct ggml_object *) o);
    ggmlr_log(GGML_LOG_LEVEL_INFO, "ggml_print_objects: --- end ---\n");
}

struct ggml_tensor * ggml_get_first_tensor(const struct ggml_context * ctx) {
    if (!ctx) return NULL;
    for (struct object * o = ctx->objects_begin; o; o = o->next)
        if (o->kind == OBJECT_TENSOR) return object_payload(ctx, o);
    return NULL;
}

struct ggml_tensor * ggml_get_next_tensor(const struct ggml_context * ctx, struct ggml_tensor * tensor) {
    if (!ctx || !tensor) return NULL;
    /* the object header sits just before the tensor: only a tensor of this
     * context has one that can be followed */
    const uintptr_t base = ALIGN_UP((uintptr_t) ctx->mem_buffer, GGML_MEM_ALIGN), p = (uintptr_t) tensor;
    if (p < base + OBJECT_SIZE || p - base >= ggml_used_mem(ctx)) {
        ggmlr_set_error("ggml_get_next_tensor: tensor '%s' does not belong to this context", tensor->name);
        return NULL;
    }
    struct object * o = (struct object *) ((char *) tensor - OBJECT_SIZE);
    for (o = o->next; o; o = o->next)
        if (o->kind == OBJECT_TENSOR) return object_payload(ctx, o);
    return NULL;
}

size_t ggml_get_max_tensor_size(const struct ggml_context * ctx) {
    size_t max = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t))
        if (ggml_nbytes(t) > max) max = ggml_nbytes(t);
    return max;
}

struct ggml_tensor * ggml_get_tensor(struct ggml_context * ctx, const char * name) {
    if (!name) return NULL;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t))
        if (strcmp(t->name, name) == 0) return t;
    return NULL;
}

/* ---- tensor facts ---- */

int64_t ggml_nelements(const struct ggml_tensor * t) { return t ? t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3] : 0; }
int64_t ggml_nrows(const struct ggml_tensor * t)     { return t ? t->ne[1] * t->ne[2] * t->ne[3] : 0; }
size_t  ggml_element_size(const struct ggml_tensor * t) { return t ? ggml_type_size(t->type) : 0; }

/* A row of a block type is ne[0] / blck blocks of nb[0] bytes (as upstream). */
size_t ggmlr_tensor_nbytes_span(const struct ggml_tensor * t) {
    if (ggml_nelements(t) == 0) return 0;
    const int64_t blck = ggml_blck_size(t->type);
    if (blck <= 1) {
        size_t n = ggml_type_size(t->type);
        for (int i = 0; i < GGML_MAX_DIMS; i++) n += (size_t) (t->ne[i] - 1) * t->nb[i];
        return n;
    }
    size_t n = (size_t) (t->ne[0] / blck) * t->nb[0];
    for (int i = 1; i < GGML_MAX_DIMS; i++) n += (size_t) (t->ne[i] - 1) * t->nb[i];
    return n;
}

size_t ggml_nbytes(const struct ggml_tensor * t) { return t ? ggmlr_tensor_nbytes_span(t) : 0; }

int ggml_n_dims(const struct ggml_tensor * t) {
    if (!t) return 0;
    for (int i = GGML_MAX_DIMS - 1; i >= 1; i--) if (t->ne[i] > 1) return i + 1;
    return 1;
}

/* Dimension 0 holds whole blocks of nb[0] == type_size bytes (or is one
 * block); dimensions 1..free may have any stride; dimensions free+1 .. end-1
 * each follow the previous one without a gap (or have size 1). */
static bool contiguous_dims(const struct ggml_tensor * t, int free, int end) {
    if (!t) return false;
    const int64_t blck = ggml_blck_size(t->type) > 0 ? ggml_blck_size(t->type) : 1;
    size_t next = ggml_type_size(t->type);
    if (t->ne[0] != blck && t->nb[0] != next) return false;
    next *= (size_t) (t->ne[0] / blck);
    for (int i = 1; i < end; i++) {
        if (i <= free) { next = (size_t) t->ne[i] * t->nb[i]; continue; }
        if (t->ne[i] != 1 && t->nb[i] != next) return false;
        next *= (size_t) t->ne[i];
    }
    return true;
}
bool ggml_is_contiguous(const struct ggml_tensor * t) { return contiguous_dims(t, 0, GGML_MAX_DIMS); }

bool ggml_is_scalar(const struct ggml_tensor * t) {
    return t && t->ne[0] == 1 && t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1;
}
bool ggml_is_vector(const struct ggml_tensor * t) { return t && t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1; }
bool ggml_is_matrix(const struct ggml_tensor * t) { return t && t->ne[2] == 1 && t->ne[3] == 1; }

bool ggml_are_same_shape(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    return a && b && a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] && a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3];
}

bool ggml_can_repeat(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (!a || !b) return false;
    for (int i = 0; i < GGML_MAX_DIMS; i++)
        if (a->ne[i] == 0 ? b->ne[i] != 0 : b->ne[i] % a->ne[i] != 0) return false;
    return true;
}

size_t ggml_nbytes_pad(const struct ggml_tensor * t) { return ALIGN_UP(ggml_nbytes(t), GGML_MEM_ALIGN); }

double ggml_type_sizef(enum ggml_type type) {
    const int64_t blck = ggml_blck_size(type);
    return blck > 0 ? (double) ggml_type_size(type) / (double) blck : 0.0;
}

bool ggml_is_transposed(const struct ggml_tensor * t) { return t && t->nb[0] > t->nb[1]; }
bool ggml_is_permuted(const struct ggml_tensor * t) {
    return t && (t->nb[0] > t->nb[1] || t->nb[1] > t->nb[2] || t->nb[2] > t->nb[3]);
}
bool ggml_is_empty(const struct ggml_tensor * t) {
    return t && (t->ne[0] == 0 || t->ne[1] == 0 || t->ne[2] == 0 || t->ne[3] == 0);
}
bool ggml_is_view(const struct ggml_tensor * t) { return t && t->view_src != NULL; }
bool ggml_is_3d(const struct ggml_tensor * t) { return t && t->ne[3] == 1; }

bool ggml_is_contiguous_0(const struct ggml_tensor * t)    { return ggml_is_contiguous(t); }
bool ggml_is_contiguous_1(const struct ggml_tensor * t)    { return contiguous_dims(t, 1, GGML_MAX_DIMS); }
bool ggml_is_contiguous_2(const struct ggml_tensor * t)    { return contiguous_dims(t, 2, GGML_MAX_DIMS); }
bool ggml_is_contiguous_to_1(const struct ggml_tensor * t) { return contiguous_dims(t, 0, 1); }
bool ggml_is_contiguous_to_2(const struct ggml_tensor * t) { return contiguous_dims(t, 0, 2); }
bool ggml_is_contiguous_to_3(const struct ggml_tensor * t) { return contiguous_dims(t, 0, 3); }

bool ggml_is_contiguously_allocated(const struct ggml_tensor * t) {
    if (!t || ggml_blck_size(t->type) <= 0) return false;
    return ggml_nbytes(t) == (size_t) ggml_nelements(t) * ggml_type_size(t->type) / (size_t) ggml_blck_size(t->type);
}
bool ggml_is_contiguous_channels(const struct ggml_tensor * t) {
    return t && t->nb[0] > t->nb[2] && t->nb[1] > t->nb[0] && t->nb[2] == ggml_type_size(t->type);
}
bool ggml_is_contiguous_rows(const struct ggml_tensor * t) {
    return t && (t->ne[0] == ggml_blck_size(t->type) || t->nb[0] == ggml_type_size(t->type));
}
bool ggml_are_same_stride(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    return a && b && a->nb[0] == b->nb[0] && a->nb[1] == b->nb[1] && a->nb[2] == b->nb[2] && a->nb[3] == b->nb[3];
}

void ggml_unravel_index(const struct ggml_tensor * t, int64_t i, int64_t * i0, int64_t * i1, int64_t * i2, int64_t * i3) {
    int64_t c[GGML_MAX_DIMS] = {0};
    if (!t || i < 0 || i >= ggml_nelements(t)) {
        ggmlr_set_error("ggml_unravel_index: index %lld is outside the tensor's %lld elements", (long long) i,
                        (long long) ggml_nelements(t));
    } else {
        for (int d = 0; d < GGML_MAX_DIMS; d++) { c[d] = i % t->ne[d]; i /= t->ne[d]; }
    }
    if (i0) *i0 = c[0];
    if (i1) *i1 = c[1];
    if (i2) *i2 = c[2];
    if (i3) *i3 = c[3];
}

enum ggml_type ggml_ftype_to_ggml_type(enum ggml_ftype ftype) {
    switch (ftype) {
        case GGML_FTYPE_ALL_F32:        return GGML_TYPE_F32;
        case GGML_FTYPE_MOSTLY_F16:     return GGML_TYPE_F16;
        case GGML_FTYPE_MOSTLY_BF16:    return GGML_TYPE_BF16;
        case GGML_FTYPE_MOSTLY_Q4_0:    return GGML_TYPE_Q4_0;
        case GGML_FTYPE_MOSTLY_Q4_1:    return GGML_TYPE_Q4_1;
        case GGML_FTYPE_MOSTLY_Q5_0:    return GGML_TYPE_Q5_0;
        case GGML_FTYPE_MOSTLY_Q5_1:    return GGML_TYPE_Q5_1;
        case GGML_FTYPE_MOSTLY_Q8_0:    return GGML_TYPE_Q8_0;
        case GGML_FTYPE_MOSTLY_Q1_0:    return GGML_TYPE_Q1_0;
        case GGML_FTYPE_MOSTLY_Q2_0:    return GGML_TYPE_Q2_0;
        case GGML_FTYPE_MOSTLY_MXFP4:   return GGML_TYPE_MXFP4;
        case GGML_FTYPE_MOSTLY_NVFP4:   return GGML_TYPE_NVFP4;
        case GGML_FTYPE_MOSTLY_Q2_K:    return GGML_TYPE_Q2_K;
        case GGML_FTYPE_MOSTLY_Q3_K:    return GGML_TYPE_Q3_K;
        case GGML_FTYPE_MOSTLY_Q4_K:    return GGML_TYPE_Q4_K;
        case GGML_FTYPE_MOSTLY_Q5_K:    return GGML_TYPE_Q5_K;
        case GGML_FTYPE_MOSTLY_Q6_K:    return GGML_TYPE_Q6_K;
        case GGML_FTYPE_MOSTLY_IQ2_XXS: return GGML_TYPE_IQ2_XXS;
        case GGML_FTYPE_MOSTLY_IQ2_XS:  return GGML_TYPE_IQ2_XS;
        case GGML_FTYPE_MOSTLY_IQ2_S:   return GGML_TYPE_IQ2_S;
        case GGML_FTYPE_MOSTLY_IQ3_XXS: return GGML_TYPE_IQ3_XXS;
        case GGML_FTYPE_MOSTLY_IQ3_S:   return GGML_TYPE_IQ3_S;
        case GGML_FTYPE_MOSTLY_IQ1_S:   return GGML_TYPE_IQ1_S;
        case GGML_FTYPE_MOSTLY_IQ1_M:   return GGML_TYPE_IQ1_M;
        case GGML_FTYPE_MOSTLY_IQ4_NL:  return GGML_TYPE_IQ4_NL;
        case GGML_FTYPE_MOSTLY_IQ4_XS:  return GGML_TYPE_IQ4_XS;
        default: break;  /* UNKNOWN, MOSTLY_Q4_1_SOME_F16 (a mix), anything else */
    }
    ggmlr_set_error("ggml_ftype_to_ggml_type: file type %d has no single tensor type", (int) ftype);
    return GGML_TYPE_COUNT;
}

/* ---- tensor creation ---- */

struct ggml_tensor * ggmlr_new_tensor_impl(struct ggml_context * ctx, enum ggml_type type, int n_dims,
                                           const int64_t * ne, struct ggml_tensor * view_src, size_t view_offs) {
    if (!ctx) { ggmlr_set_error("ggml_new_tensor: context is NULL"); return NULL; }
    if (!ggmlr_type_has_layout(type)) {
        ggmlr_set_error("ggml_new_tensor: type %d is not a tensor type (upstream removed it, or it is out of range)", (int) type);
        return NULL;
    }
    const int64_t blck = ggml_blck_size(type);
    if (n_dims < 1 || n_dims > GGML_MAX_DIMS || !ne) {
        ggmlr_set_error("ggml_new_tensor: n_dims must be 1..4 (got %d)", n_dims);
        return NULL;
    }
    if (ne[0] % blck != 0) {   /* rows are whole blocks */
        ggmlr_set_error("ggml_new_tensor: ne[0] = %lld is not a multiple of %s's block size %lld", (long long) ne[0],
                        ggml_type_name(type), (long long) blck);
        return NULL;
    }
    int64_t shape[GGML_MAX_DIMS] = {1, 1, 1, 1};
    /* The product of the nonzero dimensions must fit too, not just the size:
     * with a zero dimension the others would otherwise be unbounded, and row
     * counts (ggml_nrows) or any partial product of them would overflow.
     * nbytes multiplies blocks in the first dimension. */
    size_t nbytes = ggml_type_size(type), span = nbytes;
    for (int i = 0; i < n_dims; i++) {
        if (ne[i] < 0) {
            ggmlr_set_error("ggml_new_tensor: ne[%d] = %lld is negative", i, (long long) ne[i]);
            return NULL;
        }
        const int64_t n = i == 0 ? ne[0] / blck : ne[i];
        shape[i] = ne[i];
        if (ne[i] != 0 && span > (size_t) INT64_MAX / (size_t) ne[i]) {
            ggmlr_set_error("ggml_new_tensor: size overflows (dimension %d = %lld)", i, (long long) ne[i]);
            return NULL;
        }
        if (ne[i] != 0) span *= (size_t) ne[i];   /* (an upper bound of the bytes for a block type) */
        nbytes *= (size_t) n;
    }
    /* bounds of a view are checked by its constructor (ops.c), which knows its strides */
    if (view_src && view_src->view_src) { view_offs += view_src->view_offs; view_src = view_src->view_src; }
    const bool needs_data = !view_src && !ctx->no_alloc;
    if (needs_data && nbytes > SIZE_MAX / 2) {
        ggmlr_set_error("ggml_new_tensor: %zu bytes is too large", nbytes);
        return NULL;
    }
    struct object * obj = new_object(ctx, OBJECT_TENSOR, ALIGN_UP(sizeof(struct ggml_tensor), GGML_MEM_ALIGN) + (needs_data ? nbytes : 0));
    if (!obj) return NULL;
    struct ggml_tensor * t = object_payload(ctx, obj);
    memset(t, 0, sizeof *t);
    t->type = type;
    t->view_src = view_src;
    t->view_offs = view_offs;
    for (int i = 0; i < GGML_MAX_DIMS; i++) t->ne[i] = shape[i];
    t->nb[0] = ggml_type_size(type);
    t->nb[1] = t->nb[0] * (size_t) (t->ne[0] / blck);
    for (int i = 2; i < GGML_MAX_DIMS; i++) t->nb[i] = t->nb[i - 1] * (size_t) t->ne[i - 1];
    if (view_src) {
        t->buffer = view_src->buffer;
        if (view_src->data) t->data = (char *) view_src->data + view_offs;
    } else if (needs_data) {
        t->data = (char *) t + ALIGN_UP(sizeof(struct ggml_tensor), GGML_MEM_ALIGN);
    }
    return t;
}

struct ggml_tensor * ggml_new_tensor(struct ggml_context * ctx, enum ggml_type type, int n_dims, const int64_t * ne) {
    return ggmlr_new_tensor_impl(ctx, type, n_dims, ne, NULL, 0);
}
struct ggml_tensor * ggml_new_tensor_1d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0) {
    return ggml_new_tensor(ctx, type, 1, &ne0);
}
struct ggml_tensor * ggml_new_tensor_2d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = {ne0, ne1};
    return ggml_new_tensor(ctx, type, 2, ne);
}
struct ggml_tensor * ggml_new_tensor_3d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = {ne0, ne1, ne2};
    return ggml_new_tensor(ctx, type, 3, ne);
}
struct ggml_tensor * ggml_new_tensor_4d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return ggml_new_tensor(ctx, type, 4, ne);
}

struct ggml_tensor * ggml_new_f32(struct ggml_context * ctx, float value) {
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    if (t && t->data) ggml_set_f32(t, value);
    return t;
}

struct ggml_tensor * ggml_dup_tensor(struct ggml_context * ctx, const struct ggml_tensor * src) {
    if (!src) { ggmlr_set_error("ggml_dup_tensor: src is NULL"); return NULL; }
    return ggml_new_tensor(ctx, src->type, GGML_MAX_DIMS, src->ne);
}

struct ggml_tensor * ggml_view_tensor(struct ggml_context * ctx, struct ggml_tensor * src) {
    if (!src) { ggmlr_set_error("ggml_view_tensor: src is NULL"); return NULL; }
    struct ggml_tensor * t = ggmlr_new_tensor_impl(ctx, src->type, GGML_MAX_DIMS, src->ne, src, 0);
    if (!t) return NULL;
    memcpy(t->nb, src->nb, sizeof t->nb);
    ggml_set_name(t, src->name);
    return t;
}

struct ggml_tensor * ggml_set_name(struct ggml_tensor * t, const char * name) {
    if (!t) return NULL;
    if (!name) name = "";
    size_t n = strlen(name);
    if (n >= sizeof t->name) n = sizeof t->name - 1;
    memmove(t->name, name, n);
    t->name[n] = '\0';
    return t;
}

const char * ggml_get_name(const struct ggml_tensor * t) { return t ? t->name : NULL; }

struct ggml_tensor * ggml_format_name(struct ggml_tensor * t, const char * fmt, ...) {
    if (!t || !fmt) return t;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof t->name, fmt, ap);  /* truncated to GGML_MAX_NAME - 1 characters */
    va_end(ap);
    return t;
}

void * ggml_get_data(const struct ggml_tensor * t) { return t ? t->data : NULL; }
float * ggml_get_data_f32(const struct ggml_tensor * t) { return t && t->type == GGML_TYPE_F32 ? (float *) t->data : NULL; }

/* ---- element access ---- */

static bool check_cpu_data(const struct ggml_tensor * t, const char * fn) {
    if (!t) { ggmlr_set_error("%s: tensor is NULL", fn); return false; }
    if (!t->data) { ggmlr_set_error("%s: tensor '%s' has no data (allocate its context's tensors first)", fn, t->name); return false; }
    return true;
}

static void unravel(const struct ggml_tensor * t, int64_t i, int64_t idx[4]) {
    idx[0] = i % t->ne[0]; i /= t->ne[0];
    idx[1] = i % t->ne[1]; i /= t->ne[1];
    idx[2] = i % t->ne[2]; i /= t->ne[2];
    idx[3] = i;
}

struct ggml_tensor * ggml_set_f32(struct ggml_tensor * t, float value) {
    if (!check_cpu_data(t, "ggml_set_f32")) return NULL;
    const int64_t n = ggml_nelements(t);
    if (ggml_is_contiguous(t) && (value == 0.0f && !signbit(value))) {  /* +0 is all-zero bytes in every type */
        memset(t->data, 0, ggml_nbytes(t));
        return t;
    }
    if (ggml_is_contiguous(t) && t->type == GGML_TYPE_F32) {
        float * x = t->data;
        for (int64_t i = 0; i < n; i++) x[i] = value;
        return t;
    }
    int64_t idx[4];
    for (int64_t i = 0; i < n; i++) {
        unravel(t, i, idx);
        ggmlr_store_f32(t->type, ggmlr_elem_ptr(t, idx[0], idx[1], idx[2], idx[3]), value);
    }
    return t;
}

struct ggml_tensor * ggml_set_zero(struct ggml_tensor * t) { return ggml_set_f32(t, 0.0f); }

static bool index_in_range(const struct ggml_tensor * t, int64_t i, const char * fn) {
    if (i < 0 || i >= ggml_nelements(t)) {
        ggmlr_set_error("%s: index %lld out of range [0, %lld)", fn, (long long) i, (long long) ggml_nelements(t));
        return false;
    }
    return true;
}

float ggml_get_f32_1d(const struct ggml_tensor * t, int64_t i) {
    if (!check_cpu_data(t, "ggml_get_f32_1d") || !index_in_range(t, i, "ggml_get_f32_1d")) return NAN;
    int64_t idx[4];
    unravel(t, i, idx);
    return ggmlr_load_f32(t->type, ggmlr_elem_ptr(t, idx[0], idx[1], idx[2], idx[3]));
}

void ggml_set_f32_1d(const struct ggml_tensor * t, int64_t i, float value) {
    if (!check_cpu_data(t, "ggml_set_f32_1d") || !index_in_range(t, i, "ggml_set_f32_1d")) return;
    int64_t idx[4];
    unravel(t, i, idx);
    ggmlr_store_f32(t->type, ggmlr_elem_ptr(t, idx[0], idx[1], idx[2], idx[3]), value);
}

static bool nd_in_range(const struct ggml_tensor * t, int i0, int i1, int i2, int i3, const char * fn) {
    if (i0 < 0 || i0 >= t->ne[0] || i1 < 0 || i1 >= t->ne[1] || i2 < 0 || i2 >= t->ne[2] || i3 < 0 || i3 >= t->ne[3]) {
        ggmlr_set_error("%s: index (%d,%d,%d,%d) out of range", fn, i0, i1, i2, i3);
        return false;
    }
    return true;
}

float ggml_get_f32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3) {
    if (!check_cpu_data(t, "ggml_get_f32_nd") || !nd_in_range(t, i0, i1, i2, i3, "ggml_get_f32_nd")) return NAN;
    return ggmlr_load_f32(t->type, ggmlr_elem_ptr(t, i0, i1, i2, i3));
}

void ggml_set_f32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3, float value) {
    if (!check_cpu_data(t, "ggml_set_f32_nd") || !nd_in_range(t, i0, i1, i2, i3, "ggml_set_f32_nd")) return;
    ggmlr_store_f32(t->type, ggmlr_elem_ptr(t, i0, i1, i2, i3), value);
}

/* I32 access: exact for I32 tensors (no trip through float, which holds
 * integers exactly only up to 2^24); other types convert as ggml_set_f32 and
 * ggml_get_f32_1d do, a float read back saturating like an I32 store. */
static int32_t load_i32(const struct ggml_tensor * t, const void * p) {
    int32_t v;
    if (t->type == GGML_TYPE_I32) memcpy(&v, p, sizeof v);
    else ggmlr_store_f32(GGML_TYPE_I32, &v, ggmlr_load_f32(t->type, p));
    return v;
}

static void store_i32(const struct ggml_tensor * t, void * p, int32_t v) {
    if (t->type == GGML_TYPE_I32) memcpy(p, &v, sizeof v);
    else ggmlr_store_f32(t->type, p, (float) v);
}

struct ggml_tensor * ggml_new_i32(struct ggml_context * ctx, int32_t value) {
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
    if (t && t->data) ggml_set_i32(t, value);
    return t;
}

struct ggml_tensor * ggml_set_i32(struct ggml_tensor * t, int32_t value) {
    if (!check_cpu_data(t, "ggml_set_i32")) return NULL;
    const int64_t n = ggml_nelements(t);
    int64_t idx[4];
    for (int64_t i = 0; i < n; i++) {
        unravel(t, i, idx);
        store_i32(t, ggmlr_elem_ptr(t, idx[0], idx[1], idx[2], idx[3]), value);
    }
    return t;
}

int32_t ggml_get_i32_1d(const struct ggml_tensor * t, int i) {
    if (!check_cpu_data(t, "ggml_get_i32_1d") || !index_in_range(t, i, "ggml_get_i32_1d")) return 0;
    int64_t idx[4];
    unravel(t, i, idx);
    return load_i32(t, ggmlr_elem_ptr(t, idx[0], idx[1], idx[2], idx[3]));
}

void ggml_set_i32_1d(const struct ggml_tensor * t, int i, int32_t value) {
    if (!check_cpu_data(t, "ggml_set_i32_1d") || !index_in_range(t, i, "ggml_set_i32_1d")) return;
    int64_t idx[4];
    unravel(t, i, idx);
    store_i32(t, ggmlr_elem_ptr(t, idx[0], idx[1], idx[2], idx[3]), value);
}

int32_t ggml_get_i32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3) {
    if (!check_cpu_data(t, "ggml_get_i32_nd") || !nd_in_range(t, i0, i1, i2, i3, "ggml_get_i32_nd")) return 0;
    return load_i32(t, ggmlr_elem_ptr(t, i0, i1, i2, i3));
}

void ggml_set_i32_nd(const struct ggml_tensor * t, int i0, int i1, int i2, int i3, int32_t value) {
    if (!check_cpu_data(t, "ggml_set_i32_nd") || !nd_in_range(t, i0, i1, i2, i3, "ggml_set_i32_nd")) return;
    store_i32(t, ggmlr_elem_ptr(t, i0, i1, i2, i3), value);
}

/* gguf.c -- GGUF files (gguf.h): the value and tensor types, an empty
 * context and its release, and the getters of key/value pairs and tensor
 * infos. Reading a file is in gguf_read.c, editing and writing one in
 * gguf_write.c. The format and the differences from upstream are described
 * in include/gguf.h. */
#include "gguf/gguf_internal.h"

#include <inttypes.h>
#include <stdlib.h>

/* Largest tensor size in bytes: it must fit a size_t and ggml's int64 counts. */
#define GGUF_BYTES_MAX ((uint64_t) (SIZE_MAX < INT64_MAX ? SIZE_MAX : INT64_MAX))

/* ---- types ---- */

static const char * const kv_type_names[GGUF_TYPE_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64",
};

size_t ggmlr_gguf_type_size(enum gguf_type type) {
    static const uint8_t sizes[GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return (unsigned) type < GGUF_TYPE_COUNT ? sizes[type] : 0;
}

const char * gguf_type_name(enum gguf_type type) {
    return (unsigned) type < GGUF_TYPE_COUNT ? kv_type_names[type] : NULL;
}

/* Bytes of a tensor of this type and shape into *nbytes, or why it has none
 * (the same limits as ggml_new_tensor: the product of the nonzero dimensions
 * must fit an int64). */
const char * ggmlr_gguf_tensor_nbytes(enum ggml_type type, const int64_t * ne, uint64_t * nbytes) {
    /* every upstream number has its block size and bytes in the type traits,
     * also the types this library cannot hold (their metadata is readable) */
    if (ggml_blck_size(type) <= 0) return "an unknown type";
    const uint64_t blck = (uint64_t) ggml_blck_size(type), size = ggml_type_size(type);
    uint64_t nonzero = 1;
    bool empty = false;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (ne[i] < 0) return "a negative dimension";
        if (ne[i] == 0) { empty = true; continue; }
        if (nonzero > (uint64_t) INT64_MAX / (uint64_t) ne[i]) return "too many elements";
        nonzero *= (uint64_t) ne[i];
    }
    if (ne[0] % (int64_t) blck != 0) return "rows that are not whole blocks of its type";
    if (nonzero / blck > GGUF_BYTES_MAX / size) return "too many bytes";
    *nbytes = empty ? 0 : nonzero / blck * size;
    return NULL;
}

/* ---- the context ---- */

struct gguf_context * gguf_init_empty(void) {
    struct gguf_context * ctx = ggmlr_calloc(1, sizeof *ctx);
    if (!ctx) { ggmlr_set_error("gguf_init_empty: out of memory"); return NULL; }
    ctx->version = GGUF_VERSION;
    ctx->alignment = GGUF_DEFAULT_ALIGNMENT;
    return ctx;
}

void ggmlr_gguf_free_strings(struct gguf_str * s, size_t n) {
    for (size_t i = 0; i < n; i++) free(s[i].data);
    free(s);
}

void ggmlr_gguf_kv_free(struct gguf_kv * kv) {
    if (kv->type == GGUF_TYPE_STRING && kv->data) ggmlr_gguf_free_strings(kv->data, kv->n);
    else free(kv->data);
    free(kv->key);
}

void gguf_free(struct gguf_context * ctx) {
    if (!ctx) return;
    for (size_t i = 0; i < ctx->n_kv; i++) ggmlr_gguf_kv_free(&ctx->kv[i]);
    free(ctx->kv);
    free(ctx->info);
    free(ctx);
}

/* ---- getters ---- */

uint32_t gguf_get_version(const struct gguf_context * ctx) { return ctx ? ctx->version : 0; }
size_t   gguf_get_alignment(const struct gguf_context * ctx) { return ctx ? ctx->alignment : 0; }
size_t   gguf_get_data_offset(const struct gguf_context * ctx) { return ctx ? ctx->data_offset : 0; }
int64_t  gguf_get_n_kv(const struct gguf_context * ctx) { return ctx ? (int64_t) ctx->n_kv : 0; }
int64_t  gguf_get_n_tensors(const struct gguf_context * ctx) { return ctx ? (int64_t) ctx->n_info : 0; }

int64_t gguf_find_key(const struct gguf_context * ctx, const char * key) {
    if (!ctx || !key) { ggmlr_set_error("gguf_find_key: %s is NULL", ctx ? "key" : "ctx"); return -1; }
    for (size_t i = 0; i < ctx->n_kv; i++)
        if (strcmp(ctx->kv[i].key, key) == 0) return (int64_t) i;
    return -1;
}

static const struct gguf_kv * get_kv(const struct gguf_context * ctx, int64_t key_id, const char * fn) {
    if (!ctx) { ggmlr_set_error("%s: ctx is NULL", fn); return NULL; }
    if (key_id < 0 || (uint64_t) key_id >= ctx->n_kv) {
        ggmlr_set_error("%s: key id %" PRId64 " is not in [0, %zu)", fn, key_id, ctx->n_kv);
        return NULL;
    }
    return &ctx->kv[key_id];
}

/* The value of a scalar kv pair of exactly this type, or NULL. */
static const void * get_scalar(const struct gguf_context * ctx, int64_t key_id, enum gguf_type type, const char * fn) {
    const struct gguf_kv * kv = get_kv(ctx, key_id, fn);
    if (!kv) return NULL;
    if (kv->is_array || kv->type != type) {
        ggmlr_set_error("%s: key '%s' holds %s%s, not %s", fn, kv->key, kv->is_array ? "an array of " : "",
                        kv_type_names[kv->type], kv_type_names[type]);
        return NULL;
    }
    return kv->data;
}

const char * gguf_get_key(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = get_kv(ctx, key_id, __func__);
    return kv ? kv->key : NULL;
}

enum gguf_type gguf_get_kv_type(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = get_kv(ctx, key_id, __func__);
    return !kv ? GGUF_TYPE_COUNT : kv->is_array ? GGUF_TYPE_ARRAY : kv->type;
}

enum gguf_type gguf_get_arr_type(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = get_kv(ctx, key_id, __func__);
    if (kv && !kv->is_array) { ggmlr_set_error("gguf_get_arr_type: key '%s' is not an array", kv->key); return GGUF_TYPE_COUNT; }
    return kv ? kv->type : GGUF_TYPE_COUNT;
}

/* Scalars are stored as their file bytes (a bool as one byte). */
#define GGUF_GETTER(suffix, T, stored_t, gtype)                                               \
    T gguf_get_val_##suffix(const struct gguf_context * ctx, int64_t key_id) {                \
        const void * p = get_scalar(ctx, key_id, gtype, __func__);                            \
        stored_t v = 0;                                                                      \
        if (p) memcpy(&v, p, sizeof v);                                                       \
        return (T) v;                                                                         \
    }
GGUF_SCALAR_TYPES(GGUF_GETTER)
#undef GGUF_GETTER

const char * gguf_get_val_str(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_str * s = get_scalar(ctx, key_id, GGUF_TYPE_STRING, __func__);
    return s ? s->data : NULL;
}

const void * gguf_get_val_data(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = get_kv(ctx, key_id, __func__);
    if (kv && (kv->is_array || kv->type == GGUF_TYPE_STRING)) {
        ggmlr_set_error("gguf_get_val_data: key '%s' is not a numeric scalar", kv->key);
        return NULL;
    }
    return kv ? kv->data : NULL;
}

size_t gguf_get_arr_n(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = get_kv(ctx, key_id, __func__);
    return kv ? kv->n : 0;
}

const void * gguf_get_arr_data(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = get_kv(ctx, key_id, __func__);
    if (kv && kv->type == GGUF_TYPE_STRING) {
        ggmlr_set_error("gguf_get_arr_data: key '%s' holds strings (use gguf_get_arr_str)", kv->key);
        return NULL;
    }
    return kv ? kv->data : NULL;
}

const char * gguf_get_arr_str(const struct gguf_context * ctx, int64_t key_id, size_t i) {
    const struct gguf_kv * kv = get_kv(ctx, key_id, __func__);
    if (!kv) return NULL;
    if (kv->type != GGUF_TYPE_STRING || i >= kv->n) {
        ggmlr_set_error("gguf_get_arr_str: key '%s' %s", kv->key, kv->type != GGUF_TYPE_STRING ? "does not hold strings" : "has fewer strings");
        return NULL;
    }
    return ((const struct gguf_str *) kv->data)[i].data;
}

int64_t gguf_find_tensor(const struct gguf_context * ctx, const char * name) {
    if (!ctx || !name) { ggmlr_set_error("gguf_find_tensor: %s is NULL", ctx ? "name" : "ctx"); return -1; }
    for (size_t i = 0; i < ctx->n_info; i++)
        if (strcmp(ctx->info[i].name, name) == 0) return (int64_t) i;
    return -1;
}

static const struct gguf_tensor_info * get_info(const struct gguf_context * ctx, int64_t tensor_id, const char * fn) {
    if (!ctx) { ggmlr_set_error("%s: ctx is NULL", fn); return NULL; }
    if (tensor_id < 0 || (uint64_t) tensor_id >= ctx->n_info) {
        ggmlr_set_error("%s: tensor id %" PRId64 " is not in [0, %zu)", fn, tensor_id, ctx->n_info);
        return NULL;
    }
    return &ctx->info[tensor_id];
}

size_t gguf_get_tensor_offset(const struct gguf_context * ctx, int64_t tensor_id) {
    const struct gguf_tensor_info * info = get_info(ctx, tensor_id, __func__);
    return info ? (size_t) info->offset : SIZE_MAX;
}

const char * gguf_get_tensor_name(const struct gguf_context * ctx, int64_t tensor_id) {
    const struct gguf_tensor_info * info = get_info(ctx, tensor_id, __func__);
    return info ? info->name : NULL;
}

const int64_t * gguf_get_tensor_ne(const struct gguf_context * ctx, int64_t tensor_id) {
    const struct gguf_tensor_info * info = get_info(ctx, tensor_id, __func__);
    return info ? info->ne : NULL;
}

enum ggml_type gguf_get_tensor_type(const struct gguf_context * ctx, int64_t tensor_id) {
    const struct gguf_tensor_info * info = get_info(ctx, tensor_id, __func__);
    return info ? info->type : GGML_TYPE_COUNT;
}

size_t gguf_get_tensor_size(const struct gguf_context * ctx, int64_t tensor_id) {
    const struct gguf_tensor_info * info = get_info(ctx, tensor_id, __func__);
    return info ? (size_t) info->nbytes : 0;
}

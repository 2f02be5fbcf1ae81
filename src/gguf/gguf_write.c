/* gguf_write.c -- building a GGUF context (gguf.h: key/value pairs, tensor
 * infos, the offsets of the data section) and serialising it: into memory,
 * or atomically into a file (a temporary file synced and renamed over the
 * target). */
#include "gguf/gguf_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* Tensor i starts where tensor i-1 ends, padded to the alignment. */
static void recompute_offsets(struct gguf_context * ctx) {
    uint64_t offset = 0;
    for (size_t i = 0; i < ctx->n_info; i++) {
        ctx->info[i].offset = offset;
        offset += ALIGN_UP(ctx->info[i].nbytes, ctx->alignment);
    }
}

/* Room for one more element in a growing array (doubling). */
static bool reserve_one(void ** items, size_t * cap, size_t n, size_t item_size) {
    if (n < *cap) return true;
    const size_t new_cap = *cap ? 2 * *cap : 8;
    if (new_cap > SIZE_MAX / item_size) return false;
    void * p = ggmlr_realloc(*items, new_cap * item_size);
    if (!p) return false;
    *items = p;
    *cap = new_cap;
    return true;
}

/* ---- setters ---- */

int64_t gguf_remove_key(struct gguf_context * ctx, const char * key) {
    const int64_t id = gguf_find_key(ctx, key);
    if (id < 0) return -1;
    ggmlr_gguf_kv_free(&ctx->kv[id]);
    memmove(&ctx->kv[id], &ctx->kv[id + 1], (ctx->n_kv - (size_t) id - 1) * sizeof *ctx->kv);
    ctx->n_kv--;
    if (strcmp(key, GGUF_KEY_GENERAL_ALIGNMENT) == 0) {
        ctx->alignment = GGUF_DEFAULT_ALIGNMENT;
        recompute_offsets(ctx);
    }
    return id;
}

/* Copies of n strings, from C strings or from counted strings (one of them). */
static struct gguf_str * copy_strings(size_t n, const char * const * cstrs, const struct gguf_str * strs) {
    struct gguf_str * out = ggmlr_calloc(n ? n : 1, sizeof *out);
    for (size_t i = 0; out && i < n; i++) {
        const char * src = cstrs ? cstrs[i] : strs[i].data;
        out[i].n = cstrs ? strlen(src) : strs[i].n;
        out[i].data = ggmlr_malloc((size_t) out[i].n + 1);
        if (!out[i].data) { ggmlr_gguf_free_strings(out, i); return NULL; }
        memcpy(out[i].data, src, (size_t) out[i].n + 1);
    }
    return out;
}

/* Set key to n values of type (numbers from `values`, strings from `cstrs` or
 * `strs`): the old pair with that key goes, the new one is last. On any
 * failure the context is unchanged. */
static void set_kv(struct gguf_context * ctx, const char * key, enum gguf_type type, bool is_array, size_t n,
                   const void * values, const char * const * cstrs, const struct gguf_str * strs, const char * fn) {
    if (!ctx || !key) { ggmlr_set_error("%s: %s is NULL", fn, ctx ? "key" : "ctx"); return; }
    if (key[0] == '\0') { ggmlr_set_error("%s: the key is empty", fn); return; }
    if ((unsigned) type >= GGUF_TYPE_COUNT || type == GGUF_TYPE_ARRAY) { ggmlr_set_error("%s: type %d is not a value type", fn, (int) type); return; }
    const size_t size = ggmlr_gguf_type_size(type);
    if (type != GGUF_TYPE_STRING && n > 0 && (!values || n > SIZE_MAX / size)) {
        ggmlr_set_error("%s: key '%s': %s", fn, key, values ? "too many values" : "the values are NULL");
        return;
    }
    if (type == GGUF_TYPE_STRING && n > 0 && !cstrs && !strs) { ggmlr_set_error("%s: key '%s': the strings are NULL", fn, key); return; }
    for (size_t i = 0; cstrs && i < n; i++)
        if (!cstrs[i]) { ggmlr_set_error("%s: key '%s': string %zu is NULL", fn, key, i); return; }
    const bool is_alignment = strcmp(key, GGUF_KEY_GENERAL_ALIGNMENT) == 0;
    uint32_t alignment = 0;
    if (is_alignment && type == GGUF_TYPE_UINT32 && !is_array) memcpy(&alignment, values, sizeof alignment);
    if (is_alignment && (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > GGUF_MAX_ALIGNMENT)) {
        ggmlr_set_error("%s: %s must be a u32 power of 2 of at most %u", fn, GGUF_KEY_GENERAL_ALIGNMENT, GGUF_MAX_ALIGNMENT);
        return;
    }
    struct gguf_kv kv = {NULL, type, is_array, n, NULL};
    kv.key = ggmlr_malloc(strlen(key) + 1);
    if (type == GGUF_TYPE_STRING) {
        kv.data = copy_strings(n, cstrs, strs);
    } else {
        kv.data = ggmlr_malloc(n ? n * size : 1);
        if (kv.data && n) memcpy(kv.data, values, n * size);
    }
    if (!kv.key || !kv.data || !reserve_one((void **) &ctx->kv, &ctx->cap_kv, ctx->n_kv, sizeof *ctx->kv)) {
        ggmlr_set_error("%s: out of memory for key '%s'", fn, key);
        ggmlr_gguf_kv_free(&kv);
        return;
    }
    strcpy(kv.key, key);
    gguf_remove_key(ctx, key);
    ctx->kv[ctx->n_kv++] = kv;
    if (is_alignment) {
        ctx->alignment = alignment;
        recompute_offsets(ctx);
    }
}

/* A bool is stored as one byte, 0 or 1. */
#define GGUF_SETTER(suffix, T, stored_t, gtype)                                               \
    void gguf_set_val_##suffix(struct gguf_context * ctx, const char * key, T val) {          \
        const stored_t v = (stored_t) val;                                                    \
        set_kv(ctx, key, gtype, false, 1, &v, NULL, NULL, __func__);                          \
    }
GGUF_SCALAR_TYPES(GGUF_SETTER)
#undef GGUF_SETTER

void gguf_set_val_str(struct gguf_context * ctx, const char * key, const char * val) {
    if (!val) { ggmlr_set_error("gguf_set_val_str: val is NULL"); return; }
    set_kv(ctx, key, GGUF_TYPE_STRING, false, 1, NULL, &val, NULL, __func__);
}

void gguf_set_arr_data(struct gguf_context * ctx, const char * key, enum gguf_type type, const void * data, size_t n) {
    if (type == GGUF_TYPE_STRING) { ggmlr_set_error("gguf_set_arr_data: use gguf_set_arr_str for strings"); return; }
    set_kv(ctx, key, type, true, n, data, NULL, NULL, __func__);
}

void gguf_set_arr_str(struct gguf_context * ctx, const char * key, const char ** data, size_t n) {
    set_kv(ctx, key, GGUF_TYPE_STRING, true, n, NULL, data, NULL, __func__);
}

void gguf_set_kv(struct gguf_context * ctx, const struct gguf_context * src) {
    if (!ctx || !src) { ggmlr_set_error("gguf_set_kv: %s is NULL", ctx ? "src" : "ctx"); return; }
    if (ctx == src) return;
    for (size_t i = 0; i < src->n_kv; i++) {
        const struct gguf_kv * kv = &src->kv[i];
        const bool is_str = kv->type == GGUF_TYPE_STRING;
        set_kv(ctx, kv->key, kv->type, kv->is_array, kv->n, is_str ? NULL : kv->data, NULL,
               is_str ? kv->data : NULL, __func__);
    }
}

void gguf_add_tensor(struct gguf_context * ctx, const struct ggml_tensor * tensor) {
    if (!ctx || !tensor) { ggmlr_set_error("gguf_add_tensor: %s is NULL", ctx ? "tensor" : "ctx"); return; }
    if (!memchr(tensor->name, '\0', sizeof tensor->name)) { ggmlr_set_error("gguf_add_tensor: the name is not terminated"); return; }
    if (gguf_find_tensor(ctx, tensor->name) >= 0) {
        ggmlr_set_error("gguf_add_tensor: a tensor named '%s' is already there", tensor->name);
        return;
    }
    if (!ggml_is_contiguous(tensor)) { ggmlr_set_error("gguf_add_tensor: tensor '%s' is not contiguous", tensor->name); return; }
    struct gguf_tensor_info info = {{0}, tensor->type, {0}, 0, 0, tensor->data};
    memcpy(info.name, tensor->name, sizeof info.name);
    memcpy(info.ne, tensor->ne, sizeof info.ne);
    const char * why = ggmlr_gguf_tensor_nbytes(info.type, info.ne, &info.nbytes);
    if (why) { ggmlr_set_error("gguf_add_tensor: tensor '%s' has %s", tensor->name, why); return; }
    if (!reserve_one((void **) &ctx->info, &ctx->cap_info, ctx->n_info, sizeof *ctx->info)) {
        ggmlr_set_error("gguf_add_tensor: out of memory");
        return;
    }
    if (ctx->n_info > 0) {
        const struct gguf_tensor_info * prev = &ctx->info[ctx->n_info - 1];
        info.offset = prev->offset + ALIGN_UP(prev->nbytes, ctx->alignment);
    }
    ctx->info[ctx->n_info++] = info;
}

static struct gguf_tensor_info * find_info(struct gguf_context * ctx, const char * name, const char * fn) {
    const int64_t id = gguf_find_tensor(ctx, name);
    if (id < 0) {
        if (ctx && name) ggmlr_set_error("%s: no tensor named '%s'", fn, name);
        return NULL;
    }
    return &ctx->info[id];
}

void gguf_set_tensor_type(struct gguf_context * ctx, const char * name, enum ggml_type type) {
    struct gguf_tensor_info * info = find_info(ctx, name, __func__);
    if (!info) return;
    uint64_t nbytes;
    const char * why = ggmlr_gguf_tensor_nbytes(type, info->ne, &nbytes);
    if (why) { ggmlr_set_error("gguf_set_tensor_type: tensor '%s' would have %s", name, why); return; }
    info->type = type;
    info->nbytes = nbytes;
    recompute_offsets(ctx);
}

void gguf_set_tensor_data(struct gguf_context * ctx, const char * name, const void * data) {
    struct gguf_tensor_info * info = find_info(ctx, name, __func__);
    if (info) info->data = data;
}

/* ---- writing ---- */

/* Writes to a file, or into a buffer, or only counts (file and buf NULL). */
struct writer {
    FILE *    file;
    uint8_t * buf;
    uint64_t  written;
    bool      ok;
};

static void wr(struct writer * w, const void * p, size_t n) {
    if (w->file && w->ok && n > 0 && fwrite(p, 1, n, w->file) != n) w->ok = false;
    if (w->buf && n > 0) memcpy(w->buf + w->written, p, n);
    w->written += n;
}

static void wr_str(struct writer * w, const char * s, uint64_t n) {
    wr(w, &n, sizeof n);
    wr(w, s, (size_t) n);
}

static void wr_i32(struct writer * w, int32_t v) { wr(w, &v, sizeof v); }

static void wr_pad(struct writer * w, size_t alignment) {
    static const uint8_t zeros[256];
    uint64_t pad = ALIGN_UP(w->written, (uint64_t) alignment) - w->written;
    if (!w->file && !w->buf) { w->written += pad; return; }
    while (pad > 0) {
        const size_t n = pad < sizeof zeros ? (size_t) pad : sizeof zeros;
        wr(w, zeros, n);
        pad -= n;
    }
}

static void wr_meta(struct writer * w, const struct gguf_context * ctx) {
    const int64_t n_tensors = (int64_t) ctx->n_info, n_kv = (int64_t) ctx->n_kv;
    wr(w, GGUF_MAGIC, 4);
    wr(w, &ctx->version, sizeof ctx->version);
    wr(w, &n_tensors, sizeof n_tensors);
    wr(w, &n_kv, sizeof n_kv);
    for (size_t i = 0; i < ctx->n_kv; i++) {
        const struct gguf_kv * kv = &ctx->kv[i];
        wr_str(w, kv->key, strlen(kv->key));
        if (kv->is_array) {
            const uint64_t n = kv->n;
            wr_i32(w, GGUF_TYPE_ARRAY);
            wr_i32(w, (int32_t) kv->type);
            wr(w, &n, sizeof n);
        } else {
            wr_i32(w, (int32_t) kv->type);
        }
        if (kv->type == GGUF_TYPE_STRING) {
            const struct gguf_str * s = kv->data;
            for (size_t j = 0; j < kv->n; j++) wr_str(w, s[j].data, s[j].n);
        } else {
            wr(w, kv->data, kv->n * ggmlr_gguf_type_size(kv->type));
        }
    }
    for (size_t i = 0; i < ctx->n_info; i++) {
        const struct gguf_tensor_info * info = &ctx->info[i];
        uint32_t n_dims = GGML_MAX_DIMS;  /* trailing 1s are left out, at least one dimension stays */
        while (n_dims > 1 && info->ne[n_dims - 1] == 1) n_dims--;
        wr_str(w, info->name, strlen(info->name));
        wr(w, &n_dims, sizeof n_dims);
        wr(w, info->ne, n_dims * sizeof(int64_t));
        wr_i32(w, (int32_t) info->type);
        wr(w, &info->offset, sizeof info->offset);
    }
    wr_pad(w, ctx->alignment);
}

size_t gguf_get_meta_size(const struct gguf_context * ctx) {
    if (!ctx) { ggmlr_set_error("gguf_get_meta_size: ctx is NULL"); return 0; }
    struct writer w = {NULL, NULL, 0, true};
    wr_meta(&w, ctx);
    return (size_t) w.written;
}

void gguf_get_meta_data(const struct gguf_context * ctx, void * data) {
    if (!ctx || !data) { ggmlr_set_error("gguf_get_meta_data: %s is NULL", ctx ? "data" : "ctx"); return; }
    struct writer w = {NULL, data, 0, true};
    wr_meta(&w, ctx);
}

/* Flush a just-renamed file's directory entry to disk (best effort: not
 * every file system can sync a directory). */
static void sync_parent_dir(const char * fname) {
    const char * slash = strrchr(fname, '/');
    char * dir = slash ? ggmlr_malloc((size_t) (slash - fname) + 2) : NULL;
    if (slash && !dir) return;
    if (dir) {
        const size_t len = slash == fname ? 1 : (size_t) (slash - fname);
        memcpy(dir, fname, len);
        dir[len] = '\0';
    }
    const int fd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY);
    free(dir);
    if (fd >= 0) { (void) fsync(fd); close(fd); }
}

/* The file is written under a temporary name in the same directory, synced,
 * and renamed over fname: rename is atomic, so fname is at every moment the
 * old file or the complete new one. */
bool gguf_write_to_file(const struct gguf_context * ctx, const char * fname, bool only_meta) {
    if (!ctx || !fname) { ggmlr_set_error("gguf_write_to_file: %s is NULL", ctx ? "fname" : "ctx"); return false; }
    for (size_t i = 0; !only_meta && i < ctx->n_info; i++) {
        if (!ctx->info[i].data && ctx->info[i].nbytes > 0) {
            ggmlr_set_error("gguf_write_to_file: tensor '%s' has no data", ctx->info[i].name);
            return false;
        }
    }
    const size_t tmp_size = strlen(fname) + 48;
    char * tmp = ggmlr_malloc(tmp_size);
    if (!tmp) { ggmlr_set_error("gguf_write_to_file: out of memory"); return false; }
    int fd = -1;
    for (unsigned attempt = 0; fd < 0 && attempt < 100; attempt++) {
        snprintf(tmp, tmp_size, "%s.tmp.%ld.%u", fname, (long) getpid(), attempt);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        ggmlr_set_error("gguf_write_to_file: cannot create '%s' (%s)", tmp, strerror(errno));
        free(tmp);
        return false;
    }
    FILE * f = fdopen(fd, "wb");
    if (!f) close(fd);
    struct writer w = {f, NULL, 0, f != NULL};
    if (f) {
        wr_meta(&w, ctx);
        for (size_t i = 0; !only_meta && i < ctx->n_info; i++) {
            wr(&w, ctx->info[i].data, (size_t) ctx->info[i].nbytes);
            wr_pad(&w, ctx->alignment);
        }
        w.ok = w.ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
        w.ok = fclose(f) == 0 && w.ok;
    }
    const int write_errno = errno;
    const bool ok = w.ok && rename(tmp, fname) == 0;
    if (!ok) {
        ggmlr_set_error("gguf_write_to_file: cannot write '%s' (%s)", fname, strerror(w.ok ? errno : write_errno));
        unlink(tmp);
    } else {
        sync_parent_dir(fname);
    }
    free(tmp);
    return ok;
}

/* At file's current position; the file stays open (flushed). */
bool gguf_write_to_file_ptr(const struct gguf_context * ctx, FILE * file, bool only_meta) {
    static const char fn[] = "gguf_write_to_file_ptr";
    if (!ctx || !file) { ggmlr_set_error("%s: %s is NULL", fn, ctx ? "file" : "ctx"); return false; }
    for (size_t i = 0; !only_meta && i < ctx->n_info; i++) {
        if (!ctx->info[i].data && ctx->info[i].nbytes > 0) {
            ggmlr_set_error("%s: tensor '%s' has no data", fn, ctx->info[i].name);
            return false;
        }
    }
    struct writer w = {file, NULL, 0, true};
    wr_meta(&w, ctx);
    for (size_t i = 0; !only_meta && i < ctx->n_info; i++) {
        wr(&w, ctx->info[i].data, (size_t) ctx->info[i].nbytes);
        wr_pad(&w, ctx->alignment);
    }
    if (!w.ok || fflush(file) != 0) {
        ggmlr_set_error("%s: cannot write (%s)", fn, strerror(errno));
        return false;
    }
    return true;
}

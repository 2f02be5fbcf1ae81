/* gguf_read.c -- parsing a GGUF file or buffer (gguf.h), which may be hostile:
 * every count and length is checked against the bytes that remain before
 * anything is allocated for it, names must be unique C strings, and the data
 * section must hold every tensor where its offset says, before the tensors
 * are (optionally) loaded into a ggml context. */
#include "gguf/gguf_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>

/* Fewest bytes a kv pair (u64 key length, a 1-byte key, i32 type, a 1-byte
 * value) and a tensor info (u64 name length, u32 n_dims = 0, i32 type, u64
 * offset) take in a file: the header's counts are checked against them
 * before the arrays that hold them are allocated. */
#define MIN_KV_BYTES   14
#define MIN_INFO_BYTES 24

/* ---- reading a file ---- */

/* A file or a memory buffer, read front to back with its size known, so that
 * every length can be checked against the bytes that remain. */
struct reader {
    FILE *          file;  /* NULL: read from buf, or through cb */
    const uint8_t * buf;
    uint64_t        size;
    uint64_t        pos;
    const char *    what;  /* "gguf_init_from_file: 'name'" for messages */
    uint64_t        base;  /* file: where the GGUF starts in it (gguf_init_from_file_ptr) */
    gguf_reader_callback_t cb;  /* gguf_init_from_callback: reads at pos, at most chunk bytes a call */
    void *          ud;
    size_t          chunk;
};

static void fail(const struct reader * r, const char * fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void fail(const struct reader * r, const char * fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ggmlr_set_error("%s: %s", r->what, msg);
}

static uint64_t remaining(const struct reader * r) { return r->size - r->pos; }

static bool rd(struct reader * r, void * dst, uint64_t n, const char * what) {
    if (n > remaining(r)) {
        fail(r, "the file ends inside %s (byte %" PRIu64 ": %" PRIu64 " bytes needed, %" PRIu64 " left)",
             what, r->pos, n, remaining(r));
        return false;
    }
    if (n == 0) return true;
    if (r->cb) {
        for (uint64_t done = 0; done < n;) {
            const size_t len = n - done < r->chunk ? (size_t) (n - done) : r->chunk;
            const size_t got = r->cb(r->ud, (uint8_t *) dst + done, r->pos + done, len);
            if (got != len) {
                fail(r, "the callback gave %zu of %zu bytes at byte %" PRIu64 " (%s)", got, len, r->pos + done, what);
                return false;
            }
            done += len;
        }
    } else if (r->file) {
        if (fread(dst, 1, (size_t) n, r->file) != n) {
            fail(r, "read error at byte %" PRIu64 " (%s)", r->pos, ferror(r->file) ? strerror(errno) : "end of file");
            return false;
        }
    } else {
        memcpy(dst, r->buf + r->pos, (size_t) n);
    }
    r->pos += n;
    return true;
}

static bool rd_at(struct reader * r, uint64_t pos, void * dst, uint64_t n, const char * what) {
    if (pos > r->size) { fail(r, "%s starts past the end of the file", what); return false; }
    if (r->file && (pos > (uint64_t) INT64_MAX - r->base || fseeko(r->file, (off_t) (r->base + pos), SEEK_SET) != 0)) {
        fail(r, "cannot seek to byte %" PRIu64 " (%s)", pos, strerror(errno));
        return false;
    }
    r->pos = pos;
    return rd(r, dst, n, what);
}

/* A counted string, at most max_len bytes; *s owns a NUL-terminated copy. */
static bool rd_str(struct reader * r, struct gguf_str * s, uint64_t max_len, const char * what) {
    const uint64_t at = r->pos;
    uint64_t n;
    if (!rd(r, &n, sizeof n, what)) return false;
    if (n > remaining(r) || n > max_len) {
        fail(r, "%s at byte %" PRIu64 " has length %" PRIu64 ", more than %s %" PRIu64,
             what, at, n, n > remaining(r) ? "the bytes left," : "the limit", n > remaining(r) ? remaining(r) : max_len);
        return false;
    }
    s->data = ggmlr_malloc((size_t) n + 1);
    if (!s->data) { fail(r, "out of memory for %s of %" PRIu64 " bytes", what, n); return false; }
    if (!rd(r, s->data, n, what)) { free(s->data); s->data = NULL; return false; }
    s->data[n] = '\0';
    s->n = n;
    return true;
}

/* A key or a tensor name: not empty (keys), no NUL bytes inside. */
static bool rd_name(struct reader * r, struct gguf_str * s, uint64_t max_len, bool allow_empty, const char * what) {
    const uint64_t at = r->pos;
    if (!rd_str(r, s, max_len, what)) return false;
    if ((s->n == 0 && !allow_empty) || memchr(s->data, '\0', (size_t) s->n)) {
        fail(r, "%s at byte %" PRIu64 " is %s", what, at, s->n == 0 ? "empty" : "not a C string (it holds a NUL byte)");
        free(s->data);
        s->data = NULL;
        return false;
    }
    return true;
}

static bool rd_kv(struct reader * r, struct gguf_kv * kv) {
    struct gguf_str key = {0, NULL};
    if (!rd_name(r, &key, UINT64_MAX, false, "a key")) return false;
    kv->key = key.data;
    int32_t type;
    uint64_t n = 1;
    const uint64_t type_at = r->pos;
    if (!rd(r, &type, sizeof type, "a value type")) return false;
    if (type == GGUF_TYPE_ARRAY) {
        kv->is_array = true;
        if (!rd(r, &type, sizeof type, "an array type") || !rd(r, &n, sizeof n, "an array length")) return false;
    }
    if (type < 0 || type >= GGUF_TYPE_COUNT || type == GGUF_TYPE_ARRAY) {
        fail(r, "key '%s' has %s %" PRId32 " (byte %" PRIu64 ")", kv->key,
             type == GGUF_TYPE_ARRAY ? "an array of arrays, type" : "an unknown type", type, type_at);
        return false;
    }
    kv->type = (enum gguf_type) type;
    /* a string takes at least its 8-byte length */
    const uint64_t min_elem = type == GGUF_TYPE_STRING ? 8 : ggmlr_gguf_type_size(kv->type);
    if (n > remaining(r) / min_elem) {
        fail(r, "key '%s' has %" PRIu64 " elements, more than the %" PRIu64 " bytes left can hold", kv->key, n, remaining(r));
        return false;
    }
    kv->n = (size_t) n;
    if (kv->type == GGUF_TYPE_STRING) {
        struct gguf_str * s = ggmlr_calloc(n ? (size_t) n : 1, sizeof *s);
        kv->data = s;
        if (!s) { fail(r, "out of memory for key '%s'", kv->key); return false; }
        for (uint64_t i = 0; i < n; i++)
            if (!rd_str(r, &s[i], UINT64_MAX, "a string value")) return false;
        return true;
    }
    const uint64_t bytes = n * min_elem;
    kv->data = ggmlr_malloc(bytes ? (size_t) bytes : 1);
    if (!kv->data) { fail(r, "out of memory for key '%s'", kv->key); return false; }
    if (!rd(r, kv->data, bytes, "a value")) return false;
    if (kv->type == GGUF_TYPE_BOOL) {  /* as upstream: any nonzero byte is true, kept as 1 */
        uint8_t * b = kv->data;
        for (uint64_t i = 0; i < n; i++) b[i] = b[i] != 0;
    }
    return true;
}

static bool rd_tensor_info(struct reader * r, struct gguf_tensor_info * info) {
    struct gguf_str name = {0, NULL};
    if (!rd_name(r, &name, GGML_MAX_NAME - 1, true, "a tensor name")) return false;
    memcpy(info->name, name.data, (size_t) name.n + 1);
    free(name.data);
    uint32_t n_dims;
    if (!rd(r, &n_dims, sizeof n_dims, "a tensor's n_dims")) return false;
    if (n_dims > GGML_MAX_DIMS) {
        fail(r, "tensor '%s' has %" PRIu32 " dimensions, more than %d", info->name, n_dims, GGML_MAX_DIMS);
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) info->ne[i] = 1;
    if (!rd(r, info->ne, (uint64_t) n_dims * sizeof(int64_t), "a tensor's shape")) return false;
    int32_t type;
    if (!rd(r, &type, sizeof type, "a tensor type")) return false;
    info->type = (enum ggml_type) type;
    const char * why = type < 0 ? "an unknown type" : ggmlr_gguf_tensor_nbytes(info->type, info->ne, &info->nbytes);
    if (why) {
        fail(r, "tensor '%s' has %s (type %" PRId32 ", shape %" PRId64 " x %" PRId64 " x %" PRId64 " x %" PRId64 ")",
             info->name, why, type, info->ne[0], info->ne[1], info->ne[2], info->ne[3]);
        return false;
    }
    return rd(r, &info->offset, sizeof info->offset, "a tensor offset");
}

static int compare_names(const void * a, const void * b) {
    return strcmp(*(const char * const *) a, *(const char * const *) b);
}

/* A name that occurs twice among n (sorted in place), or NULL. */
static const char * find_duplicate(const char ** names, size_t n) {
    qsort(names, n, sizeof *names, compare_names);
    for (size_t i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0) return names[i];
    return NULL;
}

static bool check_unique_names(const struct reader * r, const struct gguf_context * ctx) {
    const size_t n = ctx->n_kv > ctx->n_info ? ctx->n_kv : ctx->n_info;
    const char ** names = ggmlr_malloc((n ? n : 1) * sizeof *names);
    if (!names) { fail(r, "out of memory"); return false; }
    for (size_t i = 0; i < ctx->n_kv; i++) names[i] = ctx->kv[i].key;
    const char * dup = find_duplicate(names, ctx->n_kv);
    if (dup) fail(r, "key '%s' occurs twice", dup);
    if (!dup) {
        for (size_t i = 0; i < ctx->n_info; i++) names[i] = ctx->info[i].name;
        dup = find_duplicate(names, ctx->n_info);
        if (dup) fail(r, "tensor name '%s' occurs twice", dup);
    }
    free(names);
    return dup == NULL;
}

static bool read_alignment(const struct reader * r, struct gguf_context * ctx) {
    const int64_t id = gguf_find_key(ctx, GGUF_KEY_GENERAL_ALIGNMENT);
    if (id < 0) return true;
    const struct gguf_kv * kv = &ctx->kv[id];
    uint32_t a = 0;
    if (kv->type == GGUF_TYPE_UINT32 && !kv->is_array) memcpy(&a, kv->data, sizeof a);
    if (a == 0 || (a & (a - 1)) != 0 || a > GGUF_MAX_ALIGNMENT) {
        fail(r, "%s must be a u32 power of 2 of at most %u", GGUF_KEY_GENERAL_ALIGNMENT, GGUF_MAX_ALIGNMENT);
        return false;
    }
    ctx->alignment = a;
    return true;
}

/* The data section: tensors in order, each at the previous one's end padded
 * to the alignment (so none overlap), all inside the file with their padding
 * (as upstream, which reads the padded section whole). */
static bool check_data_layout(struct reader * r, struct gguf_context * ctx) {
    if (ctx->n_info > 0) {
        const uint64_t start = ALIGN_UP(r->pos, (uint64_t) ctx->alignment);
        if (start > r->size) {
            fail(r, "the file ends before its data section (at byte %" PRIu64 ")", start);
            return false;
        }
        r->pos = start;
    }
    ctx->data_offset = (size_t) r->pos;
    const uint64_t avail = remaining(r);
    uint64_t expect = 0;
    for (size_t i = 0; i < ctx->n_info; i++) {
        const struct gguf_tensor_info * info = &ctx->info[i];
        if (info->offset != expect) {
            fail(r, "tensor '%s' is at offset %" PRIu64 ", expected %" PRIu64
                 " (tensors follow each other, each padded to the alignment %zu)", info->name, info->offset, expect, ctx->alignment);
            return false;
        }
        /* no overflow: nbytes < 2^63 and alignment <= 2^31 */
        const uint64_t padded = ALIGN_UP(info->nbytes, (uint64_t) ctx->alignment);
        if (padded > avail - expect) {
            fail(r, "tensor '%s' (%" PRIu64 " bytes at offset %" PRIu64 ", padded to %" PRIu64 ") ends past the end of the file (%" PRIu64 " data bytes)",
                 info->name, info->nbytes, info->offset, padded, avail);
            return false;
        }
        expect += padded;
    }
    return true;
}

/* One tensor per info in a new ggml context, with its data unless no_alloc. */
static struct ggml_context * load_tensors(struct reader * r, const struct gguf_context * ctx, bool no_alloc) {
    size_t mem_size = 0;
    for (size_t i = 0; i < ctx->n_info; i++) {
        const struct gguf_tensor_info * info = &ctx->info[i];
        const size_t bytes = ggml_tensor_overhead() + (no_alloc ? 0 : ALIGN_UP((size_t) info->nbytes, GGML_MEM_ALIGN));
        if (bytes > SIZE_MAX - mem_size) { fail(r, "the tensors do not fit in memory"); return NULL; }
        mem_size += bytes;
    }
    struct ggml_init_params params = {mem_size, NULL, no_alloc};
    struct ggml_context * gctx = ggml_init(params);
    if (!gctx) { fail(r, "cannot create the ggml context (%s)", ggml_last_error()); return NULL; }
    for (size_t i = 0; i < ctx->n_info; i++) {
        const struct gguf_tensor_info * info = &ctx->info[i];
        struct ggml_tensor * t = ggml_new_tensor(gctx, info->type, GGML_MAX_DIMS, info->ne);
        if (!t) { fail(r, "cannot create tensor '%s' (%s)", info->name, ggml_last_error()); ggml_free(gctx); return NULL; }
        ggml_set_name(t, info->name);
        if (!no_alloc && !rd_at(r, ctx->data_offset + info->offset, t->data, info->nbytes, "tensor data")) {
            ggml_free(gctx);
            return NULL;
        }
    }
    return gctx;
}

static struct gguf_context * parse(struct reader * r, struct gguf_init_params params) {
    if (params.ctx) *params.ctx = NULL;
    char magic[4];
    if (!rd(r, magic, sizeof magic, "the magic")) return NULL;
    if (memcmp(magic, GGUF_MAGIC, sizeof magic) != 0) { fail(r, "not a GGUF file (bad magic)"); return NULL; }
    uint32_t version;
    int64_t n_tensors, n_kv;
    if (!rd(r, &version, sizeof version, "the version")) return NULL;
    if (version < 2 || version > GGUF_VERSION) {
        fail(r, "GGUF version %" PRIu32 " is not supported (2 or 3)%s", version,
             version != 0 && (version & 0xFFFF) == 0 ? "; the file may have the other byte order" : "");
        return NULL;
    }
    if (!rd(r, &n_tensors, sizeof n_tensors, "the tensor count") || !rd(r, &n_kv, sizeof n_kv, "the kv count")) return NULL;
    /* both counts at once, so that their arrays are never larger than the file can fill */
    if (n_tensors < 0 || n_kv < 0 || (uint64_t) n_tensors > remaining(r) / MIN_INFO_BYTES ||
        (uint64_t) n_kv > (remaining(r) - (uint64_t) n_tensors * MIN_INFO_BYTES) / MIN_KV_BYTES) {
        fail(r, "%" PRId64 " tensors and %" PRId64 " kv pairs cannot fit in the %" PRIu64 " bytes left",
             n_tensors, n_kv, remaining(r));
        return NULL;
    }
    struct gguf_context * ctx = gguf_init_empty();
    if (!ctx) return NULL;
    ctx->version = version;
    ctx->kv = ggmlr_calloc(n_kv ? (size_t) n_kv : 1, sizeof *ctx->kv);
    ctx->info = ggmlr_calloc(n_tensors ? (size_t) n_tensors : 1, sizeof *ctx->info);
    if (!ctx->kv || !ctx->info) { fail(r, "out of memory"); goto fail; }
    ctx->cap_kv = (size_t) n_kv;
    ctx->cap_info = (size_t) n_tensors;
    for (int64_t i = 0; i < n_kv; i++) {
        ctx->n_kv++;  /* counted first: gguf_free frees what a failed read left */
        if (!rd_kv(r, &ctx->kv[i])) goto fail;
    }
    for (int64_t i = 0; i < n_tensors; i++) {
        if (!rd_tensor_info(r, &ctx->info[i])) goto fail;
        ctx->n_info++;
    }
    if (!check_unique_names(r, ctx) || !read_alignment(r, ctx) || !check_data_layout(r, ctx)) goto fail;
    if (params.ctx) {
        *params.ctx = load_tensors(r, ctx, params.no_alloc);
        if (!*params.ctx) goto fail;
    }
    return ctx;
fail:
    gguf_free(ctx);
    return NULL;
}

struct gguf_context * gguf_init_from_file(const char * fname, struct gguf_init_params params) {
    if (params.ctx) *params.ctx = NULL;
    if (!fname) { ggmlr_set_error("gguf_init_from_file: fname is NULL"); return NULL; }
    char what[300];
    snprintf(what, sizeof what, "gguf_init_from_file: '%s'", fname);
    FILE * f = fopen(fname, "rb");
    if (!f) { ggmlr_set_error("%s: cannot open (%s)", what, strerror(errno)); return NULL; }
    struct stat st;
    struct gguf_context * ctx = NULL;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) {
        ggmlr_set_error("%s: not a regular file", what);
    } else {
        struct reader r = {f, NULL, (uint64_t) st.st_size, 0, what, 0, NULL, NULL, 0};
        ctx = parse(&r, params);
    }
    fclose(f);
    return ctx;
}

struct gguf_context * gguf_init_from_buffer(const void * data, size_t size, struct gguf_init_params params) {
    if (params.ctx) *params.ctx = NULL;
    if (!data || size == 0) { ggmlr_set_error("gguf_init_from_buffer: the buffer is empty"); return NULL; }
    struct reader r = {NULL, data, size, 0, "gguf_init_from_buffer", 0, NULL, NULL, 0};
    return parse(&r, params);
}

/* The GGUF starts at file's current position and runs to its end. */
struct gguf_context * gguf_init_from_file_ptr(FILE * file, struct gguf_init_params params) {
    static const char fn[] = "gguf_init_from_file_ptr";
    if (params.ctx) *params.ctx = NULL;
    if (!file) { ggmlr_set_error("%s: file is NULL", fn); return NULL; }
    const off_t start = ftello(file);
    off_t end = -1;
    if (start >= 0 && fseeko(file, 0, SEEK_END) == 0) end = ftello(file);
    if (start < 0 || end < start || fseeko(file, start, SEEK_SET) != 0) {
        ggmlr_set_error("%s: the file cannot be sought (%s)", fn, strerror(errno));
        return NULL;
    }
    struct reader r = {file, NULL, (uint64_t) (end - start), 0, fn, (uint64_t) start, NULL, NULL, 0};
    return parse(&r, params);
}

/* max_expected_size bytes at most, read through callback (max_chunk_read a call, 0: any). */
struct gguf_context * gguf_init_from_callback(gguf_reader_callback_t callback, void * userdata, size_t max_chunk_read, uint64_t max_expected_size,
                                              struct gguf_init_params params) {
    static const char fn[] = "gguf_init_from_callback";
    if (params.ctx) *params.ctx = NULL;
    if (!callback) { ggmlr_set_error("%s: callback is NULL", fn); return NULL; }
    if (max_expected_size == 0) { ggmlr_set_error("%s: max_expected_size is 0 (the stream's size, or more)", fn); return NULL; }
    struct reader r = {NULL, NULL, max_expected_size, 0, fn, 0, callback, userdata, max_chunk_read ? max_chunk_read : SIZE_MAX};
    return parse(&r, params);
}

/* gguf.c -- GGUF files: parse an untrusted file into a gguf_context (and
 * optionally a ggml context holding its tensors), edit a context, and write
 * it atomically. The format and the differences from upstream are described
 * in include/gguf.h. */
#include "gguf.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define ALIGN_UP(x, a) (((x) + (a) - 1) / (a) * (a))

/* Largest tensor size in bytes: it must fit a size_t and ggml's int64 counts. */
#define GGUF_BYTES_MAX ((uint64_t) (SIZE_MAX < INT64_MAX ? SIZE_MAX : INT64_MAX))

/* Fewest bytes a kv pair (u64 key length, a 1-byte key, i32 type, a 1-byte
 * value) and a tensor info (u64 name length, u32 n_dims = 0, i32 type, u64
 * offset) take in a file: the header's counts are checked against them
 * before the arrays that hold them are allocated. */
#define MIN_KV_BYTES   14
#define MIN_INFO_BYTES 24

struct gguf_str {
    uint64_t n;    /* bytes, which may include NULs */
    char *   data; /* n bytes and a terminating NUL */
};

struct gguf_kv {
    char *         key;
    enum gguf_type type;     /* of the value, or of the elements of an array */
    bool           is_array;
    size_t         n;        /* elements; 1 for a scalar */
    void *         data;     /* n values of kv_type_size bytes, or n struct gguf_str */
};

struct gguf_tensor_info {
    char           name[GGML_MAX_NAME];
    enum ggml_type type;
    int64_t        ne[GGML_MAX_DIMS];
    uint64_t       nbytes;
    uint64_t       offset;  /* from the start of the data section */
    const void *   data;    /* what gguf_write_to_file writes for it */
};

struct gguf_context {
    uint32_t version;
    size_t   alignment;
    size_t   data_offset;  /* of the data section in the file it was read from */
    struct gguf_kv *          kv;
    size_t                    n_kv, cap_kv;
    struct gguf_tensor_info * info;
    size_t                    n_info, cap_info;
};

/* ---- types ---- */

static const char * const kv_type_names[GGUF_TYPE_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64",
};

static size_t kv_type_size(enum gguf_type type) {
    static const uint8_t sizes[GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return (unsigned) type < GGUF_TYPE_COUNT ? sizes[type] : 0;
}

const char * gguf_type_name(enum gguf_type type) {
    return (unsigned) type < GGUF_TYPE_COUNT ? kv_type_names[type] : NULL;
}

/* Elements per block and bytes per block of upstream's tensor types (upstream
 * numbering), so that the metadata of any ggml file can be read and its
 * offsets checked. {0, 0}: a number upstream does not use. */
static const struct { uint16_t blck, size; } tensor_types[GGML_TYPE_COUNT] = {
    [0]  = {1, 4},    [1]  = {1, 2},    [2]  = {32, 18},  [3]  = {32, 20},  [6]  = {32, 22},
    [7]  = {32, 24},  [8]  = {32, 34},  [9]  = {32, 36},  [10] = {256, 84}, [11] = {256, 110},
    [12] = {256, 144}, [13] = {256, 176}, [14] = {256, 210}, [15] = {256, 292}, [16] = {256, 66},
    [17] = {256, 74}, [18] = {256, 98}, [19] = {256, 50}, [20] = {32, 18},  [21] = {256, 110},
    [22] = {256, 82}, [23] = {256, 136}, [24] = {1, 1},   [25] = {1, 2},    [26] = {1, 4},
    [27] = {1, 8},    [28] = {1, 8},    [29] = {256, 56}, [30] = {1, 2},    [34] = {256, 54},
    [35] = {256, 66}, [39] = {32, 17},
};

/* Bytes of a tensor of this type and shape into *nbytes, or why it has none
 * (the same limits as ggml_new_tensor: the product of the nonzero dimensions
 * must fit an int64). */
static const char * tensor_nbytes(enum ggml_type type, const int64_t * ne, uint64_t * nbytes) {
    if ((unsigned) type >= GGML_TYPE_COUNT || tensor_types[type].blck == 0) return "an unknown type";
    const uint64_t blck = tensor_types[type].blck, size = tensor_types[type].size;
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

static void free_strings(struct gguf_str * s, size_t n) {
    for (size_t i = 0; i < n; i++) free(s[i].data);
    free(s);
}

static void kv_free(struct gguf_kv * kv) {
    if (kv->type == GGUF_TYPE_STRING && kv->data) free_strings(kv->data, kv->n);
    else free(kv->data);
    free(kv->key);
}

void gguf_free(struct gguf_context * ctx) {
    if (!ctx) return;
    for (size_t i = 0; i < ctx->n_kv; i++) kv_free(&ctx->kv[i]);
    free(ctx->kv);
    free(ctx->info);
    free(ctx);
}

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

/* ---- reading a file ---- */

/* A file or a memory buffer, read front to back with its size known, so that
 * every length can be checked against the bytes that remain. */
struct reader {
    FILE *          file;  /* NULL: read from buf */
    const uint8_t * buf;
    uint64_t        size;
    uint64_t        pos;
    const char *    what;  /* "gguf_init_from_file: 'name'" for messages */
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
    if (r->file) {
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
    if (r->file && fseeko(r->file, (off_t) pos, SEEK_SET) != 0) {
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
    const uint64_t min_elem = type == GGUF_TYPE_STRING ? 8 : kv_type_size(kv->type);
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
    const char * why = type < 0 ? "an unknown type" : tensor_nbytes(info->type, info->ne, &info->nbytes);
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
        if (!ggmlr_type_is_supported(info->type)) {
            fail(r, "tensor '%s' has type %d, which a ggml context of this library cannot hold (only F32, F16 and I32); "
                 "load with params.ctx = NULL to read the metadata", info->name, (int) info->type);
            return NULL;
        }
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
        struct reader r = {f, NULL, (uint64_t) st.st_size, 0, what};
        ctx = parse(&r, params);
    }
    fclose(f);
    return ctx;
}

struct gguf_context * gguf_init_from_buffer(const void * data, size_t size, struct gguf_init_params params) {
    if (params.ctx) *params.ctx = NULL;
    if (!data || size == 0) { ggmlr_set_error("gguf_init_from_buffer: the buffer is empty"); return NULL; }
    struct reader r = {NULL, data, size, 0, "gguf_init_from_buffer"};
    return parse(&r, params);
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
GGUF_GETTER(u8,   uint8_t,  uint8_t,  GGUF_TYPE_UINT8)
GGUF_GETTER(i8,   int8_t,   int8_t,   GGUF_TYPE_INT8)
GGUF_GETTER(u16,  uint16_t, uint16_t, GGUF_TYPE_UINT16)
GGUF_GETTER(i16,  int16_t,  int16_t,  GGUF_TYPE_INT16)
GGUF_GETTER(u32,  uint32_t, uint32_t, GGUF_TYPE_UINT32)
GGUF_GETTER(i32,  int32_t,  int32_t,  GGUF_TYPE_INT32)
GGUF_GETTER(f32,  float,    float,    GGUF_TYPE_FLOAT32)
GGUF_GETTER(u64,  uint64_t, uint64_t, GGUF_TYPE_UINT64)
GGUF_GETTER(i64,  int64_t,  int64_t,  GGUF_TYPE_INT64)
GGUF_GETTER(f64,  double,   double,   GGUF_TYPE_FLOAT64)
GGUF_GETTER(bool, bool,     int8_t,   GGUF_TYPE_BOOL)
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

/* ---- setters ---- */

int64_t gguf_remove_key(struct gguf_context * ctx, const char * key) {
    const int64_t id = gguf_find_key(ctx, key);
    if (id < 0) return -1;
    kv_free(&ctx->kv[id]);
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
        if (!out[i].data) { free_strings(out, i); return NULL; }
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
    const size_t size = kv_type_size(type);
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
        kv_free(&kv);
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
GGUF_SETTER(u8,   uint8_t,  uint8_t,  GGUF_TYPE_UINT8)
GGUF_SETTER(i8,   int8_t,   int8_t,   GGUF_TYPE_INT8)
GGUF_SETTER(u16,  uint16_t, uint16_t, GGUF_TYPE_UINT16)
GGUF_SETTER(i16,  int16_t,  int16_t,  GGUF_TYPE_INT16)
GGUF_SETTER(u32,  uint32_t, uint32_t, GGUF_TYPE_UINT32)
GGUF_SETTER(i32,  int32_t,  int32_t,  GGUF_TYPE_INT32)
GGUF_SETTER(f32,  float,    float,    GGUF_TYPE_FLOAT32)
GGUF_SETTER(u64,  uint64_t, uint64_t, GGUF_TYPE_UINT64)
GGUF_SETTER(i64,  int64_t,  int64_t,  GGUF_TYPE_INT64)
GGUF_SETTER(f64,  double,   double,   GGUF_TYPE_FLOAT64)
GGUF_SETTER(bool, bool,     int8_t,   GGUF_TYPE_BOOL)
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
    const char * why = tensor_nbytes(info.type, info.ne, &info.nbytes);
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
    const char * why = tensor_nbytes(type, info->ne, &nbytes);
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
            wr(w, kv->data, kv->n * kv_type_size(kv->type));
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

/* fuzz_gguf.c -- GGUF bytes from the fuzzer, loaded without a ggml context,
 * with one holding the data and with a no_alloc one. Whatever loads is read
 * through every getter (right and wrong types, ids out of range), its tensor
 * data read byte by byte, and written back: the metadata with
 * gguf_get_meta_data, then the whole file to a buffer and to a file, both
 * reloaded and compared with the first load. Invariants: a refused input
 * leaves a message; a loaded one is self-consistent and round-trips exactly.
 * Build with -DGGMLR_FUZZ=ON (clang) and run e.g.
 *   build-fuzz/tests/fuzz_gguf -max_total_time=60 corpus-copy/ tests/corpus/gguf */
#include "fuzz_target.h"

#include "ggml.h"
#include "gguf.h"

#include <string.h>
#include <unistd.h>

FUZZ_ASAN_OPTIONS

static size_t elem_size(enum gguf_type t) {
    switch (t) {
        case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: return 1;
        case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: return 2;
        case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64: return 8;
        default: return 4;
    }
}

/* Every getter of key id: the one of its type must agree with the raw data;
 * the others must refuse with a sentinel (checked not to crash). */
static void read_key(const struct gguf_context * g, int64_t id) {
    const char * key = gguf_get_key(g, id);
    FUZZ_ASSERT(key != NULL, "key %lld", (long long) id);
    FUZZ_ASSERT(gguf_find_key(g, key) == id, "find_key('%s')", key);
    const enum gguf_type type = gguf_get_kv_type(g, id);
    FUZZ_ASSERT(type < GGUF_TYPE_COUNT && gguf_type_name(type) != NULL, "type %d", (int) type);
    const size_t n = gguf_get_arr_n(g, id);
    if (type == GGUF_TYPE_ARRAY) {
        const enum gguf_type et = gguf_get_arr_type(g, id);
        FUZZ_ASSERT(et < GGUF_TYPE_COUNT && et != GGUF_TYPE_ARRAY, "element type %d", (int) et);
        if (et == GGUF_TYPE_STRING) {
            for (size_t i = 0; i < n; i++) FUZZ_ASSERT(gguf_get_arr_str(g, id, i) != NULL, "string %zu of %zu", i, n);
            FUZZ_ASSERT(gguf_get_arr_data(g, id) == NULL, "arr_data of a string array");
        } else {
            const unsigned char * p = gguf_get_arr_data(g, id);
            FUZZ_ASSERT(p != NULL || n == 0, "arr_data of %zu elements", n);
            unsigned sum = 0;  /* touch every byte, so that ASan sees a short array */
            for (size_t i = 0; p && i < n * elem_size(et); i++) sum += p[i];
            FUZZ_ASSERT(sum <= 255 * n * elem_size(et), "byte sum");
            (void) gguf_get_arr_str(g, id, 0);
        }
    } else {
        FUZZ_ASSERT(n == 1, "a scalar has arr_n %zu", n);
        if (type == GGUF_TYPE_STRING) FUZZ_ASSERT(gguf_get_val_str(g, id) != NULL, "val_str");
        else FUZZ_ASSERT(gguf_get_val_data(g, id) != NULL, "val_data");
    }
    /* every typed getter: right type returns the value, wrong type a sentinel */
    (void) gguf_get_val_u8(g, id);  (void) gguf_get_val_i8(g, id);
    (void) gguf_get_val_u16(g, id); (void) gguf_get_val_i16(g, id);
    (void) gguf_get_val_u32(g, id); (void) gguf_get_val_i32(g, id);
    (void) gguf_get_val_f32(g, id); (void) gguf_get_val_u64(g, id);
    (void) gguf_get_val_i64(g, id); (void) gguf_get_val_f64(g, id);
    (void) gguf_get_val_bool(g, id); (void) gguf_get_val_str(g, id);
    (void) gguf_get_val_data(g, id); (void) gguf_get_arr_type(g, id);
    (void) gguf_get_arr_data(g, id); (void) gguf_get_arr_str(g, id, n);
}

static void read_tensor_infos(const struct gguf_context * g) {
    const int64_t n = gguf_get_n_tensors(g);
    size_t end = 0;
    for (int64_t i = 0; i < n; i++) {
        const char * name = gguf_get_tensor_name(g, i);
        FUZZ_ASSERT(name != NULL && gguf_find_tensor(g, name) == i, "tensor %lld's name", (long long) i);
        const int64_t * ne = gguf_get_tensor_ne(g, i);
        FUZZ_ASSERT(ne != NULL, "ne");
        for (int d = 0; d < GGML_MAX_DIMS; d++) FUZZ_ASSERT(ne[d] >= 0, "ne[%d] = %lld", d, (long long) ne[d]);
        (void) gguf_get_tensor_type(g, i);
        const size_t offset = gguf_get_tensor_offset(g, i), size = gguf_get_tensor_size(g, i);
        FUZZ_ASSERT(offset != SIZE_MAX && offset >= end && offset % gguf_get_alignment(g) == 0, "offset %zu after %zu", offset, end);
        end = offset + size;
    }
    /* out-of-range ids and absent names give sentinels */
    FUZZ_ASSERT(gguf_get_tensor_name(g, n) == NULL && gguf_get_tensor_name(g, -1) == NULL, "name of a bad id");
    FUZZ_ASSERT(gguf_get_tensor_offset(g, n) == SIZE_MAX, "offset of a bad id");
    FUZZ_ASSERT(gguf_get_key(g, gguf_get_n_kv(g)) == NULL && gguf_find_key(g, "") == -1, "bad key id");
}

/* The tensors of the ggml context: one per info, same shape and type, and
 * (with data) the bytes at the info's offset in the data section. */
static void read_tensors(const struct gguf_context * g, struct ggml_context * ctx, const uint8_t * file, size_t size, bool no_alloc) {
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) {
        struct ggml_tensor * t = ggml_get_tensor(ctx, gguf_get_tensor_name(g, i));
        FUZZ_ASSERT(t != NULL && t->type == gguf_get_tensor_type(g, i), "tensor %lld in the ggml context", (long long) i);
        FUZZ_ASSERT(memcmp(t->ne, gguf_get_tensor_ne(g, i), sizeof t->ne) == 0 && ggml_nbytes(t) == gguf_get_tensor_size(g, i), "shape");
        if (no_alloc) { FUZZ_ASSERT(t->data == NULL, "no_alloc tensor with data"); continue; }
        const size_t at = gguf_get_data_offset(g) + gguf_get_tensor_offset(g, i);
        FUZZ_ASSERT(at <= size && ggml_nbytes(t) <= size - at, "tensor data inside the file");
        FUZZ_ASSERT(ggml_nbytes(t) == 0 || memcmp(t->data, file + at, ggml_nbytes(t)) == 0, "tensor data as in the file");
        for (int64_t e = 0; e < ggml_nelements(t) && e < 4096; e++) (void) ggml_get_f32_1d(t, e);
    }
}

/* The whole file in memory: metadata, then each tensor's bytes at its offset. */
static uint8_t * serialize(const struct gguf_context * g, size_t * size) {
    const size_t meta = gguf_get_meta_size(g);
    const int64_t n = gguf_get_n_tensors(g);
    size_t total = meta;
    if (n > 0) total += gguf_get_tensor_offset(g, n - 1) + gguf_get_tensor_size(g, n - 1);
    total += (gguf_get_alignment(g) - total % gguf_get_alignment(g)) % gguf_get_alignment(g);
    uint8_t * buf = calloc(total ? total : 1, 1);
    if (!buf) return NULL;
    gguf_get_meta_data(g, buf);
    *size = total;
    return buf;
}

/* Two contexts describe the same file: same keys, values, tensor infos (the
 * version field aside: a v2 file is rewritten as it was read, a new context is v3). */
static void check_same(const struct gguf_context * a, const struct gguf_context * b) {
    FUZZ_ASSERT(gguf_get_n_kv(a) == gguf_get_n_kv(b) && gguf_get_n_tensors(a) == gguf_get_n_tensors(b), "counts");
    FUZZ_ASSERT(gguf_get_alignment(a) == gguf_get_alignment(b), "alignment");
    const size_t meta = gguf_get_meta_size(a);
    FUZZ_ASSERT(meta == gguf_get_meta_size(b), "meta size %zu vs %zu", meta, gguf_get_meta_size(b));
    uint8_t * ma = malloc(meta), * mb = malloc(meta);
    if (ma && mb) {
        gguf_get_meta_data(a, ma);
        gguf_get_meta_data(b, mb);
        FUZZ_ASSERT(memcmp(ma, mb, 4) == 0 && memcmp(ma + 8, mb + 8, meta - 8) == 0, "metadata bytes");
    }
    free(ma);
    free(mb);
}

/* Rebuild from the loaded tensors (gguf_set_kv, gguf_add_tensor), write to a
 * buffer and reload: the same file, bit for bit in its metadata. */
static void round_trip(const struct gguf_context * g, struct ggml_context * ctx) {
    struct gguf_context * out = gguf_init_empty();
    if (!out) return;
    gguf_set_kv(out, g);
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) gguf_add_tensor(out, ggml_get_tensor(ctx, gguf_get_tensor_name(g, i)));
    check_same(g, out);
    size_t size = 0;
    uint8_t * buf = serialize(out, &size);
    if (buf) {
        for (int64_t i = 0; i < gguf_get_n_tensors(out); i++) {
            const struct ggml_tensor * t = ggml_get_tensor(ctx, gguf_get_tensor_name(out, i));
            if (ggml_nbytes(t)) memcpy(buf + gguf_get_meta_size(out) + gguf_get_tensor_offset(out, i), t->data, ggml_nbytes(t));
        }
        struct ggml_context * ctx2 = NULL;
        struct gguf_context * back = gguf_init_from_buffer(buf, size, (struct gguf_init_params) {false, &ctx2});
        FUZZ_ASSERT(back != NULL, "reload of a written file: %s", ggml_last_error());
        check_same(out, back);
        read_tensors(back, ctx2, buf, size, false);
        gguf_free(back);
        ggml_free(ctx2);
        free(buf);
    }
    /* and through a file (small inputs only: the write syncs to disk) */
    if (gguf_get_meta_size(out) < 2048) {
        char path[64];
        snprintf(path, sizeof path, "%s/fuzz_gguf.%ld.gguf", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (long) getpid());
        if (gguf_write_to_file(out, path, false)) {
            struct ggml_context * ctx3 = NULL;
            struct gguf_context * back = gguf_init_from_file(path, (struct gguf_init_params) {false, &ctx3});
            FUZZ_ASSERT(back != NULL, "reload of %s: %s", path, ggml_last_error());
            check_same(out, back);
            gguf_free(back);
            ggml_free(ctx3);
        }
        unlink(path);
    }
    gguf_free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    for (int mode = 0; mode < 3; mode++) {  /* no ggml context, with data, no_alloc */
        struct ggml_context * ctx = NULL;
        struct gguf_init_params params = {mode == 2, mode == 0 ? NULL : &ctx};
        ggml_clear_error();
        struct gguf_context * g = gguf_init_from_buffer(data, size, params);
        if (!g) {
            FUZZ_ASSERT(ggml_last_error()[0] != '\0' && ctx == NULL, "a refused input leaves a message and no context");
            continue;
        }
        FUZZ_ASSERT(gguf_get_version(g) >= 2 && gguf_get_version(g) <= 3, "version");
        const size_t alignment = gguf_get_alignment(g);
        FUZZ_ASSERT(alignment > 0 && (alignment & (alignment - 1)) == 0, "alignment %zu", alignment);
        /* a file without tensors needs no padded data section */
        FUZZ_ASSERT(gguf_get_data_offset(g) <= size && (gguf_get_data_offset(g) % alignment == 0 || gguf_get_n_tensors(g) == 0), "data offset");
        for (int64_t id = 0; id < gguf_get_n_kv(g); id++) read_key(g, id);
        read_tensor_infos(g);
        if (ctx) {
            read_tensors(g, ctx, data, size, mode == 2);
            if (mode == 1) round_trip(g, ctx);
        }
        /* the metadata alone, through the public writer: exactly gguf_get_meta_size bytes
         * (not necessarily the file's own header size: the writer stores each tensor's
         * n_dims as ggml_n_dims of its shape, as upstream does, and a file may store
         * another, e.g. 0 for a [1, 1, 1, 1] tensor) */
        const size_t meta = gguf_get_meta_size(g);
        uint8_t * mbuf = malloc(meta + 16);
        if (mbuf) {
            memset(mbuf + meta, 0xA5, 16);
            gguf_get_meta_data(g, mbuf);
            for (int k = 0; k < 16; k++) FUZZ_ASSERT(mbuf[meta + k] == 0xA5, "gguf_get_meta_data wrote past %zu bytes", meta);
            free(mbuf);
        }
        gguf_free(g);
        ggml_free(ctx);
    }
    return 0;
}

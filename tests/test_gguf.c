/* test_gguf.c -- GGUF files: round trips of every kv type and tensor type
 * (bitwise), the byte layout against an independent encoder, alignment,
 * lookups, metadata-only loads, errors as values, atomic writes, and hostile
 * files (every truncation, every single-byte corruption of the metadata,
 * random corruptions, hand-made bad counts / lengths / shapes / offsets).
 *
 * The encoder below (struct bb) writes GGUF bytes from the format description
 * (docs/gguf.md upstream), sharing no code with src/gguf/: it is the
 * reference for the writer and the source of the hand-made files.
 *
 * `test_gguf --write-corpus DIR` writes the seed corpus (tests/corpus/gguf/,
 * for a fuzzer): valid_* files load with their data, invalid_* are refused. A plain run checks that
 * the committed corpus still behaves so. */
#define _POSIX_C_SOURCE 200809L
#include "common/test_common.h"
#include "gguf.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TMP_DIR "gguf_tmp"

/* ---- an independent little-endian GGUF encoder ---- */

struct bb { uint8_t * p; size_t n, cap; };

static void bb_bytes(struct bb * b, const void * src, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) { fprintf(stderr, "out of memory\n"); exit(2); }
    }
    if (n) memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void bb_le(struct bb * b, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) { const uint8_t c = (uint8_t) (v >> (8 * i)); bb_bytes(b, &c, 1); }
}
static void bb_u32(struct bb * b, uint32_t v) { bb_le(b, v, 4); }
static void bb_u64(struct bb * b, uint64_t v) { bb_le(b, v, 8); }
static void bb_strn(struct bb * b, const char * s, uint64_t n) { bb_u64(b, n); bb_bytes(b, s, (size_t) n); }
static void bb_str(struct bb * b, const char * s) { bb_strn(b, s, strlen(s)); }
static void bb_pad(struct bb * b, size_t a) { while (b->n % a) bb_le(b, 0, 1); }
static void bb_header(struct bb * b, uint32_t version, int64_t n_tensors, int64_t n_kv) {
    bb_bytes(b, "GGUF", 4); bb_u32(b, version); bb_u64(b, (uint64_t) n_tensors); bb_u64(b, (uint64_t) n_kv);
}
static void bb_kv_u32(struct bb * b, const char * key, uint32_t v) { bb_str(b, key); bb_u32(b, GGUF_TYPE_UINT32); bb_u32(b, v); }
static void bb_info(struct bb * b, const char * name, uint32_t n_dims, const int64_t * ne, int32_t type, uint64_t offset) {
    bb_str(b, name); bb_u32(b, n_dims);
    for (uint32_t i = 0; i < n_dims; i++) bb_u64(b, (uint64_t) ne[i]);
    bb_u32(b, (uint32_t) type); bb_u64(b, offset);
}
/* n bytes of data, then padding to a */
static void bb_data(struct bb * b, size_t n, size_t a) { for (size_t i = 0; i < n; i++) bb_le(b, (uint8_t) (i * 7 + 1), 1); bb_pad(b, a); }

/* ---- helpers ---- */

static uint8_t * read_all(const char * path, size_t * size) {
    FILE * f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t * p = malloc(n > 0 ? (size_t) n : 1);
    *size = p && n >= 0 && fread(p, 1, (size_t) n, f) == (size_t) n ? (size_t) n : 0;
    fclose(f);
    return p;
}

static bool write_all(const char * path, const void * p, size_t n) {
    FILE * f = fopen(path, "wb");
    if (!f) return false;
    const bool ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok;
}

static void fill_random_bits(struct ggml_tensor * t) {
    uint8_t * p = t->data;
    for (size_t i = 0; i < ggml_nbytes(t); i++) p[i] = (uint8_t) tc_next();
}

static struct gguf_init_params params_of(bool no_alloc, struct ggml_context ** gctx) {
    struct gguf_init_params p = {no_alloc, gctx};
    return p;
}

/* Load from a buffer; must fail with a message (what names the case). */
static void expect_refused(const struct bb * b, const char * what) {
    struct ggml_context * gctx = (struct ggml_context *) &gctx;  /* must be reset to NULL */
    ggml_clear_error();
    struct gguf_context * g = gguf_init_from_buffer(b->p, b->n, params_of(false, &gctx));
    CHECK(g == NULL && gctx == NULL && ggml_last_error()[0] != '\0', "%s: should be refused", what);
    gguf_free(g);
    ggml_free(g ? gctx : NULL);
}

/* ---- every kv type ---- */

enum { N_ARR = 5 };
static const uint8_t  v_u8 = 250;
static const int8_t   v_i8 = -7;
static const uint16_t v_u16 = 65000;
static const int16_t  v_i16 = -30000;
static const uint32_t v_u32 = 4000000000u;
static const int32_t  v_i32 = -2000000000;
static const uint64_t v_u64 = UINT64_MAX - 1;
static const int64_t  v_i64 = INT64_MIN;
static const uint32_t v_f32_bits = 0x7fc12345u;            /* NaN with a payload */
static const uint64_t v_f64_bits = 0x8000000000000001ull;  /* the negative subnormal */
static const char *   v_str = "h\xc3\xa9llo w\xc3\xb6rld";
static const char *   v_strs[] = {"", "a", "\xc3\xbcn\xc3\xaf\x63ode", "tokens and more tokens"};
/* numeric array element types and their sizes; bytes of each array below */
static const enum gguf_type arr_types[] = {GGUF_TYPE_UINT8, GGUF_TYPE_INT8, GGUF_TYPE_UINT16, GGUF_TYPE_INT16,
    GGUF_TYPE_UINT32, GGUF_TYPE_INT32, GGUF_TYPE_FLOAT32, GGUF_TYPE_BOOL, GGUF_TYPE_UINT64, GGUF_TYPE_INT64, GGUF_TYPE_FLOAT64};
static const size_t arr_sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 8, 8, 8};
#define N_ARR_TYPES (sizeof arr_types / sizeof arr_types[0])
static uint8_t arr_bytes[N_ARR_TYPES][N_ARR * 8];

static void make_arr_bytes(void) {
    tc_seed(11);
    for (size_t t = 0; t < N_ARR_TYPES; t++)
        for (size_t i = 0; i < N_ARR * arr_sizes[t]; i++)
            arr_bytes[t][i] = arr_types[t] == GGUF_TYPE_BOOL ? (uint8_t) (tc_next() & 1) : (uint8_t) tc_next();
}

static void arr_key(char * key, size_t t) { snprintf(key, 32, "arr.%s", gguf_type_name(arr_types[t])); }

static void set_all_kv(struct gguf_context * g) {
    float f32; double f64;
    memcpy(&f32, &v_f32_bits, 4);
    memcpy(&f64, &v_f64_bits, 8);
    gguf_set_val_str(g, "general.name", "will be overridden");
    gguf_set_val_u8(g, "v.u8", v_u8);
    gguf_set_val_i8(g, "v.i8", v_i8);
    gguf_set_val_u16(g, "v.u16", v_u16);
    gguf_set_val_i16(g, "v.i16", v_i16);
    gguf_set_val_u32(g, "v.u32", v_u32);
    gguf_set_val_i32(g, "v.i32", v_i32);
    gguf_set_val_f32(g, "v.f32", f32);
    gguf_set_val_u64(g, "v.u64", v_u64);
    gguf_set_val_i64(g, "v.i64", v_i64);
    gguf_set_val_f64(g, "v.f64", f64);
    gguf_set_val_bool(g, "v.bool", true);
    gguf_set_val_str(g, "general.name", v_str);  /* replaces the first pair, now last */
    for (size_t t = 0; t < N_ARR_TYPES; t++) {
        char key[32];
        arr_key(key, t);
        gguf_set_arr_data(g, key, arr_types[t], arr_bytes[t], N_ARR);
    }
    gguf_set_arr_str(g, "arr.str", v_strs, 4);
    gguf_set_arr_data(g, "arr.empty", GGUF_TYPE_UINT8, NULL, 0);
    gguf_set_arr_str(g, "arr.empty_str", NULL, 0);
}

static void check_all_kv(const struct gguf_context * g, const char * where) {
    static const char * order[] = {"v.u8", "v.i8", "v.u16", "v.i16", "v.u32", "v.i32", "v.f32", "v.u64", "v.i64", "v.f64", "v.bool", "general.name"};
    const int64_t n_kv = 12 + (int64_t) N_ARR_TYPES + 3 + (gguf_find_key(g, GGUF_KEY_GENERAL_ALIGNMENT) >= 0);
    CHECK(gguf_get_n_kv(g) == n_kv, "%s: n_kv %" PRId64 ", expected %" PRId64, where, gguf_get_n_kv(g), n_kv);
    for (int i = 0; i < 12; i++)
        CHECK(gguf_get_key(g, i) && strcmp(gguf_get_key(g, i), order[i]) == 0, "%s: key %d is %s", where, i, gguf_get_key(g, i));
    CHECK(gguf_get_val_u8(g, gguf_find_key(g, "v.u8")) == v_u8, "%s: u8", where);
    CHECK(gguf_get_val_i8(g, gguf_find_key(g, "v.i8")) == v_i8, "%s: i8", where);
    CHECK(gguf_get_val_u16(g, gguf_find_key(g, "v.u16")) == v_u16, "%s: u16", where);
    CHECK(gguf_get_val_i16(g, gguf_find_key(g, "v.i16")) == v_i16, "%s: i16", where);
    CHECK(gguf_get_val_u32(g, gguf_find_key(g, "v.u32")) == v_u32, "%s: u32", where);
    CHECK(gguf_get_val_i32(g, gguf_find_key(g, "v.i32")) == v_i32, "%s: i32", where);
    CHECK(gguf_get_val_u64(g, gguf_find_key(g, "v.u64")) == v_u64, "%s: u64", where);
    CHECK(gguf_get_val_i64(g, gguf_find_key(g, "v.i64")) == v_i64, "%s: i64", where);
    CHECK(gguf_get_val_bool(g, gguf_find_key(g, "v.bool")) == true, "%s: bool", where);
    const float f32 = gguf_get_val_f32(g, gguf_find_key(g, "v.f32"));
    const double f64 = gguf_get_val_f64(g, gguf_find_key(g, "v.f64"));
    CHECK(memcmp(&f32, &v_f32_bits, 4) == 0, "%s: f32 bits", where);
    CHECK(memcmp(&f64, &v_f64_bits, 8) == 0, "%s: f64 bits", where);
    const int64_t name = gguf_find_key(g, "general.name");
    CHECK(gguf_get_kv_type(g, name) == GGUF_TYPE_STRING && gguf_get_val_str(g, name) && strcmp(gguf_get_val_str(g, name), v_str) == 0,
          "%s: string", where);
    for (size_t t = 0; t < N_ARR_TYPES; t++) {
        char key[32];
        arr_key(key, t);
        const int64_t id = gguf_find_key(g, key);
        const void * data = gguf_get_arr_data(g, id);
        CHECK(id >= 0 && gguf_get_kv_type(g, id) == GGUF_TYPE_ARRAY && gguf_get_arr_type(g, id) == arr_types[t] &&
              gguf_get_arr_n(g, id) == N_ARR && data && memcmp(data, arr_bytes[t], N_ARR * arr_sizes[t]) == 0,
              "%s: array %s", where, key);
    }
    const int64_t strs = gguf_find_key(g, "arr.str");
    CHECK(gguf_get_arr_type(g, strs) == GGUF_TYPE_STRING && gguf_get_arr_n(g, strs) == 4, "%s: string array", where);
    for (size_t i = 0; i < 4; i++) {
        const char * s = gguf_get_arr_str(g, strs, i);
        CHECK(s && strcmp(s, v_strs[i]) == 0, "%s: string %zu", where, i);
    }
    CHECK(gguf_get_arr_n(g, gguf_find_key(g, "arr.empty")) == 0 && gguf_get_arr_type(g, gguf_find_key(g, "arr.empty")) == GGUF_TYPE_UINT8,
          "%s: empty array", where);
    CHECK(gguf_get_arr_n(g, gguf_find_key(g, "arr.empty_str")) == 0 && gguf_get_arr_type(g, gguf_find_key(g, "arr.empty_str")) == GGUF_TYPE_STRING,
          "%s: empty string array", where);
}

/* ---- tensors ---- */

struct tensor_spec { const char * name; enum ggml_type type; int64_t ne[4]; };
static const struct tensor_spec specs[] = {
    {"token_embd.weight",   GGML_TYPE_F32, {7, 3, 1, 1}},
    {"blk.0.attn_q.weight", GGML_TYPE_F16, {5, 2, 3, 1}},
    {"positions",           GGML_TYPE_I32, {1, 1, 1, 1}},
    {"x4d",                 GGML_TYPE_F32, {2, 3, 1, 2}},
    {"empty",               GGML_TYPE_F32, {0, 4, 1, 1}},
    {"last",                GGML_TYPE_F16, {3, 1, 1, 1}},
};
#define N_SPECS (sizeof specs / sizeof specs[0])

static size_t spec_nbytes(const struct tensor_spec * s) {
    const size_t esize = s->type == GGML_TYPE_F16 ? 2 : 4;
    return esize * (size_t) (s->ne[0] * s->ne[1] * s->ne[2] * s->ne[3]);
}

/* A context with the spec tensors (random bits) in *gctx, added to g. */
static void add_spec_tensors(struct gguf_context * g, struct ggml_context ** gctx) {
    *gctx = tc_ctx(1);
    for (size_t i = 0; i < N_SPECS; i++) {
        struct ggml_tensor * t = ggml_new_tensor(*gctx, specs[i].type, 4, specs[i].ne);
        ggml_set_name(t, specs[i].name);
        fill_random_bits(t);
        gguf_add_tensor(g, t);
    }
}

/* Loaded tensors: names, types, shapes, data bitwise; offsets as the format
 * says (running sum of padded sizes), data at those offsets in the file. */
static void check_tensors(const struct gguf_context * g, struct ggml_context * loaded, struct ggml_context * orig,
                          const uint8_t * file, size_t file_size, size_t alignment, bool with_data, const char * where) {
    CHECK(gguf_get_n_tensors(g) == (int64_t) N_SPECS, "%s: n_tensors", where);
    CHECK(gguf_get_alignment(g) == alignment, "%s: alignment %zu", where, gguf_get_alignment(g));
    const size_t data_offset = gguf_get_data_offset(g);
    CHECK(data_offset % alignment == 0, "%s: data offset %zu not aligned", where, data_offset);
    size_t expect = 0;
    for (size_t i = 0; i < N_SPECS; i++) {
        const int64_t id = gguf_find_tensor(g, specs[i].name);
        const size_t nbytes = spec_nbytes(&specs[i]);
        CHECK(id == (int64_t) i, "%s: find_tensor %s", where, specs[i].name);
        CHECK(gguf_get_tensor_type(g, id) == specs[i].type && gguf_get_tensor_size(g, id) == nbytes, "%s: %s type/size", where, specs[i].name);
        CHECK(gguf_get_tensor_offset(g, id) == expect && expect % alignment == 0, "%s: %s offset %zu, expected %zu",
              where, specs[i].name, gguf_get_tensor_offset(g, id), expect);
        CHECK(memcmp(gguf_get_tensor_ne(g, id), specs[i].ne, sizeof specs[i].ne) == 0, "%s: %s shape", where, specs[i].name);
        const struct ggml_tensor * src = ggml_get_tensor(orig, specs[i].name);
        CHECK(data_offset + expect + nbytes <= file_size && memcmp(file + data_offset + expect, src->data, nbytes) == 0,
              "%s: %s bytes in the file", where, specs[i].name);
        if (loaded) {
            const struct ggml_tensor * t = ggml_get_tensor(loaded, specs[i].name);
            CHECK(t && t->type == specs[i].type && memcmp(t->ne, specs[i].ne, sizeof t->ne) == 0, "%s: loaded %s", where, specs[i].name);
            if (t && with_data) CHECK(t->data && memcmp(t->data, src->data, nbytes) == 0, "%s: %s data bitwise", where, specs[i].name);
            if (t && !with_data) CHECK(t->data == NULL, "%s: %s has data under no_alloc", where, specs[i].name);
        }
        expect += (nbytes + alignment - 1) / alignment * alignment;
    }
    CHECK(file_size == data_offset + expect, "%s: file size %zu, expected %zu", where, file_size, data_offset + expect);
}

/* ---- hand-made files (shared by the hostile-file tests and the corpus) ---- */

/* Two F32 [8] tensors "a" and "b" at offsets 0 and off_b, `data` bytes of data
 * (64 when off_b = 32). */
static void make_two_f32(struct bb * b, uint64_t off_b, size_t data) {
    const int64_t ne[1] = {8};
    bb_header(b, 3, 2, 1);
    bb_kv_u32(b, "k", 1);
    bb_info(b, "a", 1, ne, GGML_TYPE_F32, 0);
    bb_info(b, "b", 1, ne, GGML_TYPE_F32, off_b);
    bb_pad(b, 32);
    bb_data(b, data, 1);
}

/* Version 2, a 0-dim (scalar) tensor, a zero-size tensor, an empty array and
 * a bool stored as 2: all valid. */
static void make_edge(struct bb * b) {
    const int64_t ne0[1] = {0}, ne2[2] = {3, 1};
    bb_header(b, 2, 3, 2);
    bb_str(b, "empty"); bb_u32(b, GGUF_TYPE_ARRAY); bb_u32(b, GGUF_TYPE_FLOAT64); bb_u64(b, 0);
    bb_str(b, "flag"); bb_u32(b, GGUF_TYPE_BOOL); bb_le(b, 2, 1);
    bb_info(b, "scalar", 0, NULL, GGML_TYPE_F32, 0);
    bb_info(b, "none", 1, ne0, GGML_TYPE_F16, 32);
    bb_info(b, "row", 2, ne2, GGML_TYPE_I32, 32);
    bb_pad(b, 32);
    bb_data(b, 4, 32);
    bb_data(b, 12, 32);
}

/* one 1-D tensor of ne0 elements of this type, nbytes of data */
static void make_one_tensor(struct bb * b, const char * name, int64_t ne0, int type, size_t nbytes) {
    bb_header(b, 3, 1, 0);
    bb_info(b, name, 1, &ne0, type, 0);
    bb_pad(b, 32);
    bb_data(b, nbytes, 32);
}

/* A Q8_0 tensor of 64 elements (2 blocks of 34 bytes): loads with its data. */
static void make_q8_0(struct bb * b) { make_one_tensor(b, "q", 64, 8, 68); }

/* An IQ2_XXS tensor of 256 elements (one block of 66 bytes): a type this
 * library stores without converters, so its bytes load. */
static void make_iq2_xxs(struct bb * b) { make_one_tensor(b, "grid", 256, 16, 66); }

static void make_huge_counts(struct bb * b) { bb_header(b, 3, INT64_MAX / 8, INT64_MAX / 16); bb_data(b, 64, 1); }
static void make_overlap(struct bb * b) { make_two_f32(b, 0, 96); }
static void make_nested_array(struct bb * b) {
    bb_header(b, 3, 0, 1);
    bb_str(b, "nest"); bb_u32(b, GGUF_TYPE_ARRAY); bb_u32(b, GGUF_TYPE_ARRAY); bb_u64(b, 1);
    bb_u32(b, GGUF_TYPE_UINT8); bb_u64(b, 1); bb_le(b, 5, 1);
}
static void make_dup_key(struct bb * b) { bb_header(b, 3, 0, 2); bb_kv_u32(b, "k", 1); bb_kv_u32(b, "k", 2); }
static void make_bad_alignment(struct bb * b) {
    const int64_t ne[1] = {8};
    bb_header(b, 3, 1, 1);
    bb_kv_u32(b, GGUF_KEY_GENERAL_ALIGNMENT, 48);
    bb_info(b, "a", 1, ne, GGML_TYPE_F32, 0);
    bb_pad(b, 48);
    bb_data(b, 32, 48);
}
static void make_five_dims(struct bb * b) {
    const int64_t ne[5] = {1, 1, 1, 1, 1};
    bb_header(b, 3, 1, 0);
    bb_info(b, "a", 5, ne, GGML_TYPE_F32, 0);
    bb_pad(b, 32);
    bb_data(b, 4, 32);
}

/* Files written by the library itself. */
static void bytes_of(struct gguf_context * g, struct bb * b) {
    const char * path = TMP_DIR "/bytes_of.gguf";
    size_t n = 0;
    CHECK(gguf_write_to_file(g, path, false), "write %s: %s", path, ggml_last_error());
    uint8_t * p = read_all(path, &n);
    bb_bytes(b, p, n);
    free(p);
}
static void make_empty(struct bb * b) {
    struct gguf_context * g = gguf_init_empty();
    bytes_of(g, b);
    gguf_free(g);
}
static void make_kv(struct bb * b) {
    struct gguf_context * g = gguf_init_empty();
    set_all_kv(g);
    bytes_of(g, b);
    gguf_free(g);
}
static void make_tensors(struct bb * b) {
    struct gguf_context * g = gguf_init_empty();
    struct ggml_context * gctx;
    tc_seed(5);
    gguf_set_val_str(g, "general.architecture", "test");
    gguf_set_val_u32(g, GGUF_KEY_GENERAL_ALIGNMENT, 64);
    add_spec_tensors(g, &gctx);
    bytes_of(g, b);
    gguf_free(g);
    ggml_free(gctx);
}
static void make_truncated(struct bb * b) { make_tensors(b); b->n -= 5; }

struct corpus_file { const char * name; void (*make)(struct bb *); };
static const struct corpus_file corpus[] = {
    {"valid_empty.gguf", make_empty},       {"valid_kv.gguf", make_kv},
    {"valid_tensors.gguf", make_tensors},   {"valid_edge.gguf", make_edge},
    {"valid_q8_0.gguf", make_q8_0},         {"valid_iq2_xxs.gguf", make_iq2_xxs},
    {"invalid_truncated.gguf", make_truncated},
    {"invalid_huge_counts.gguf", make_huge_counts}, {"invalid_overlap.gguf", make_overlap},
    {"invalid_nested_array.gguf", make_nested_array}, {"invalid_dup_key.gguf", make_dup_key},
    {"invalid_bad_alignment.gguf", make_bad_alignment}, {"invalid_five_dims.gguf", make_five_dims},
};
#define N_CORPUS (sizeof corpus / sizeof corpus[0])

/* What a corpus file must do, by its name's prefix. */
static void check_corpus_behaviour(const char * name, const uint8_t * p, size_t n) {
    struct ggml_context * gctx = NULL;
    struct gguf_context * g = gguf_init_from_buffer(p, n, params_of(false, &gctx));
    struct gguf_context * meta = gguf_init_from_buffer(p, n, params_of(true, NULL));
    if (strncmp(name, "valid_", 6) == 0) CHECK(g && gctx && meta, "corpus %s should load: %s", name, ggml_last_error());
    else CHECK(!g && !meta, "corpus %s should be refused", name);
    gguf_free(g);
    gguf_free(meta);
    ggml_free(gctx);
}

static int write_corpus(const char * dir) {
    mkdir(TMP_DIR, 0777);
    make_arr_bytes();
    for (size_t i = 0; i < N_CORPUS; i++) {
        struct bb b = {0};
        char path[512];
        corpus[i].make(&b);
        snprintf(path, sizeof path, "%s/%s", dir, corpus[i].name);
        if (!write_all(path, b.p, b.n)) { fprintf(stderr, "cannot write %s\n", path); return 1; }
        printf("%s: %zu bytes\n", path, b.n);
        free(b.p);
    }
    return 0;
}

/* The committed corpus (next to this source file) still behaves as named. */
static void test_corpus(void) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char * slash = strrchr(dir, '/');
    if (!slash) { printf("corpus: source directory unknown, skipped\n"); return; }
    snprintf(slash, sizeof dir - (size_t) (slash - dir), "/corpus/gguf");
    DIR * d = opendir(dir);
    if (!d) { printf("corpus: %s not found, skipped\n", dir); return; }
    int n_files = 0;
    for (struct dirent * e; (e = readdir(d)) != NULL;) {
        if (!strstr(e->d_name, ".gguf")) continue;
        char path[2048];
        size_t n = 0;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        uint8_t * p = read_all(path, &n);
        CHECK(p != NULL, "corpus: cannot read %s", path);
        if (p) check_corpus_behaviour(e->d_name, p, n);
        free(p);
        n_files++;
    }
    closedir(d);
    CHECK(n_files >= (int) N_CORPUS, "corpus: %d files in %s, expected %zu", n_files, dir, N_CORPUS);
    /* and what the generator makes now behaves the same */
    for (size_t i = 0; i < N_CORPUS; i++) {
        struct bb b = {0};
        corpus[i].make(&b);
        check_corpus_behaviour(corpus[i].name, b.p, b.n);
        free(b.p);
    }
}

/* ---- the tests ---- */

/* The writer's bytes equal the independent encoder's, byte for byte. */
static void test_byte_layout(void) {
    struct ggml_context * gctx = tc_ctx(1);
    struct ggml_tensor * w = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, 3, 2);
    struct ggml_tensor * bias = ggml_new_tensor_1d(gctx, GGML_TYPE_I32, 5);
    ggml_set_name(w, "w");
    ggml_set_name(bias, "b");
    fill_random_bits(w);
    fill_random_bits(bias);
    const int16_t arr[3] = {1, -2, 3};
    struct gguf_context * g = gguf_init_empty();
    gguf_set_val_u32(g, "a.u32", 7);
    gguf_set_val_str(g, "general.name", "tiny");
    gguf_set_arr_data(g, "arr", GGUF_TYPE_INT16, arr, 3);
    gguf_add_tensor(g, w);
    gguf_add_tensor(g, bias);

    struct bb e = {0};
    const int64_t ne_w[2] = {3, 2}, ne_b[1] = {5};
    bb_header(&e, 3, 2, 3);
    bb_kv_u32(&e, "a.u32", 7);
    bb_str(&e, "general.name"); bb_u32(&e, GGUF_TYPE_STRING); bb_str(&e, "tiny");
    bb_str(&e, "arr"); bb_u32(&e, GGUF_TYPE_ARRAY); bb_u32(&e, GGUF_TYPE_INT16); bb_u64(&e, 3);
    for (int i = 0; i < 3; i++) bb_le(&e, (uint16_t) arr[i], 2);
    bb_info(&e, "w", 2, ne_w, GGML_TYPE_F32, 0);
    bb_info(&e, "b", 1, ne_b, GGML_TYPE_I32, 32);  /* 24 bytes of w padded to 32 */
    bb_pad(&e, 32);
    const size_t meta = e.n;
    bb_bytes(&e, w->data, 24); bb_pad(&e, 32);
    bb_bytes(&e, bias->data, 20); bb_pad(&e, 32);

    CHECK(gguf_get_meta_size(g) == meta, "meta size %zu, expected %zu", gguf_get_meta_size(g), meta);
    uint8_t * meta_bytes = malloc(meta);
    gguf_get_meta_data(g, meta_bytes);
    CHECK(memcmp(meta_bytes, e.p, meta) == 0, "gguf_get_meta_data differs from the encoder");
    struct bb got = {0};
    bytes_of(g, &got);
    CHECK(got.n == e.n && memcmp(got.p, e.p, e.n) == 0, "file bytes differ from the encoder (%zu vs %zu bytes)", got.n, e.n);
    CHECK(gguf_write_to_file(g, TMP_DIR "/meta_only.gguf", true), "only_meta write");
    size_t n = 0;
    uint8_t * p = read_all(TMP_DIR "/meta_only.gguf", &n);
    CHECK(p && n == meta && memcmp(p, e.p, meta) == 0, "only_meta file: %zu bytes", n);
    free(p);
    free(meta_bytes);
    free(got.p);
    free(e.p);
    gguf_free(g);
    ggml_free(gctx);
}

static void test_roundtrip_kv(void) {
    struct gguf_context * g = gguf_init_empty();
    set_all_kv(g);
    check_all_kv(g, "in memory");
    CHECK(gguf_write_to_file(g, TMP_DIR "/kv.gguf", false), "write kv: %s", ggml_last_error());
    struct gguf_context * r = gguf_init_from_file(TMP_DIR "/kv.gguf", params_of(true, NULL));
    CHECK(r != NULL, "read kv: %s", ggml_last_error());
    if (!r) { gguf_free(g); return; }
    check_all_kv(r, "from file");
    CHECK(gguf_get_version(r) == 3 && gguf_get_n_tensors(r) == 0, "version / n_tensors");
    /* a copy by gguf_set_kv writes the same bytes */
    struct gguf_context * c = gguf_init_empty();
    gguf_set_kv(c, r);
    check_all_kv(c, "copied");
    CHECK(gguf_write_to_file(c, TMP_DIR "/kv_copy.gguf", false), "write copy");
    size_t n1 = 0, n2 = 0;
    uint8_t * p1 = read_all(TMP_DIR "/kv.gguf", &n1), * p2 = read_all(TMP_DIR "/kv_copy.gguf", &n2);
    CHECK(p1 && p2 && n1 == n2 && memcmp(p1, p2, n1) == 0, "copy writes other bytes");
    free(p1);
    free(p2);
    /* removing a key */
    const int64_t id = gguf_find_key(c, "v.i16");
    CHECK(gguf_remove_key(c, "v.i16") == id && gguf_find_key(c, "v.i16") == -1 && gguf_remove_key(c, "v.i16") == -1, "remove key");
    CHECK(strcmp(gguf_get_key(c, id), "v.u32") == 0, "keys after a removed one move down");
    gguf_free(c);
    gguf_free(r);
    gguf_free(g);
}

static void test_roundtrip_tensors(void) {
    static const size_t alignments[] = {32, 1, 64, 256};
    for (size_t a = 0; a < sizeof alignments / sizeof alignments[0]; a++) {
        const size_t alignment = alignments[a];
        char path[64], where[64];
        snprintf(path, sizeof path, TMP_DIR "/tensors_%zu.gguf", alignment);
        struct gguf_context * g = gguf_init_empty();
        struct ggml_context * orig;
        tc_seed(100 + alignment);
        if (alignment == 1) gguf_set_val_u32(g, GGUF_KEY_GENERAL_ALIGNMENT, 1);
        if (alignment == 256) set_all_kv(g);
        add_spec_tensors(g, &orig);
        if (alignment > 32) gguf_set_val_u32(g, GGUF_KEY_GENERAL_ALIGNMENT, (uint32_t) alignment);  /* after: offsets move */
        CHECK(gguf_get_alignment(g) == alignment, "alignment %zu set", alignment);
        CHECK(gguf_write_to_file(g, path, false), "write %s: %s", path, ggml_last_error());
        size_t n = 0;
        uint8_t * file = read_all(path, &n);
        for (int mode = 0; mode < 4; mode++) {
            /* 0: file with data, 1: file no_alloc, 2: file metadata only, 3: buffer with data */
            struct ggml_context * loaded = NULL;
            const bool no_alloc = mode == 1 || mode == 2;
            struct gguf_init_params params = params_of(no_alloc, mode == 2 ? NULL : &loaded);
            struct gguf_context * r = mode == 3 ? gguf_init_from_buffer(file, n, params) : gguf_init_from_file(path, params);
            snprintf(where, sizeof where, "alignment %zu mode %d", alignment, mode);
            CHECK(r != NULL && (mode == 2) == (loaded == NULL), "%s: load: %s", where, ggml_last_error());
            if (r) check_tensors(r, loaded, orig, file, n, alignment, !no_alloc, where);
            if (r && alignment == 256) check_all_kv(r, where);
            if (loaded) {
                int count = 0;
                for (struct ggml_tensor * t = ggml_get_first_tensor(loaded); t; t = ggml_get_next_tensor(loaded, t)) count++;
                CHECK(count == (int) N_SPECS, "%s: %d tensors in the ggml context", where, count);
            }
            gguf_free(r);
            ggml_free(loaded);
        }
        free(file);
        gguf_free(g);
        ggml_free(orig);
    }
}

/* gguf_write_to_file_ptr / gguf_init_from_file_ptr at an offset in a file,
 * and gguf_init_from_callback in small chunks: the same bytes and tensors
 * as gguf_write_to_file / gguf_init_from_file. */
struct chunked { const uint8_t * p; size_t n; size_t max_len; int calls; };

static size_t read_chunk(void * ud, void * out, uint64_t offset, size_t len) {
    struct chunked * c = ud;
    c->calls++;
    if (len > c->max_len) c->max_len = len;
    if (offset >= c->n) return 0;
    const size_t k = len < c->n - offset ? len : c->n - (size_t) offset;
    memcpy(out, c->p + offset, k);
    return k;
}

static void test_file_ptr_and_callback(void) {
    const char * path = TMP_DIR "/file_ptr.gguf", * ref_path = TMP_DIR "/file_ptr_ref.gguf";
    struct gguf_context * g = gguf_init_empty();
    struct ggml_context * orig;
    tc_seed(7);
    add_spec_tensors(g, &orig);
    gguf_set_val_str(g, "note", "behind 13 bytes");
    CHECK(gguf_write_to_file(g, ref_path, false), "reference file: %s", ggml_last_error());
    size_t n = 0;
    uint8_t * ref = read_all(ref_path, &n);

    FILE * f = fopen(path, "w+b");
    static const char junk[13] = "not a gguf..";
    CHECK(f && fwrite(junk, 1, sizeof junk, f) == sizeof junk && gguf_write_to_file_ptr(g, f, false), "write at byte 13: %s", ggml_last_error());
    size_t m = 0;
    uint8_t * got = read_all(path, &m);
    CHECK(got && m == n + 13 && memcmp(got, junk, 13) == 0 && memcmp(got + 13, ref, n) == 0, "the file holds 13 bytes, then gguf_write_to_file's (%zu of %zu)", m, n + 13);
    struct ggml_context * loaded = NULL;
    CHECK(f && fseek(f, 13, SEEK_SET) == 0, "seek to the GGUF");
    struct gguf_context * r = gguf_init_from_file_ptr(f, params_of(false, &loaded));
    CHECK(r && loaded, "load from byte 13: %s", ggml_last_error());
    if (r) check_tensors(r, loaded, orig, ref, n, 32, true, "file_ptr");
    if (r) CHECK(strcmp(gguf_get_val_str(r, gguf_find_key(r, "note")), "behind 13 bytes") == 0, "the string kv");
    gguf_free(r);
    ggml_free(loaded);
    CHECK(f && fseek(f, 0, SEEK_SET) == 0 && gguf_init_from_file_ptr(f, params_of(true, NULL)) == NULL && strstr(ggml_last_error(), "magic"),
          "from byte 0 the junk is refused");
    if (f) fclose(f);
    free(got);

    struct chunked c = {ref, n, 0, 0};
    loaded = NULL;
    r = gguf_init_from_callback(read_chunk, &c, 7, n, params_of(false, &loaded));
    CHECK(r && loaded && c.max_len <= 7 && c.calls > (int) (n / 7), "callback in chunks of at most 7 (%d calls, %zu bytes at most): %s", c.calls, c.max_len, ggml_last_error());
    if (r) check_tensors(r, loaded, orig, ref, n, 32, true, "callback");
    gguf_free(r);
    ggml_free(loaded);
    struct chunked short_c = {ref, n / 2, 0, 0};
    CHECK(gguf_init_from_callback(read_chunk, &short_c, 0, n, params_of(false, &loaded)) == NULL && loaded == NULL &&
          strstr(ggml_last_error(), "the callback gave"), "a stream that ends early: %s", ggml_last_error());
    ggml_clear_error();
    CHECK(gguf_init_from_callback(NULL, &c, 0, n, params_of(true, NULL)) == NULL && strstr(ggml_last_error(), "NULL"), "NULL callback");
    CHECK(gguf_init_from_callback(read_chunk, &c, 0, 0, params_of(true, NULL)) == NULL && strstr(ggml_last_error(), "max_expected_size"), "size 0");
    CHECK(gguf_init_from_file_ptr(NULL, params_of(true, NULL)) == NULL && gguf_write_to_file_ptr(g, NULL, false) == false &&
          gguf_write_to_file_ptr(NULL, stdout, true) == false, "NULL files and contexts");
    free(ref);
    gguf_free(g);
    ggml_free(orig);
}

/* Misuse gives sentinels and a message, never an abort. */
static void test_api_errors(void) {
    struct gguf_context * g = gguf_init_empty();
    gguf_set_val_u32(g, "k.u32", 5);
    gguf_set_val_str(g, "k.str", "s");
    const char * strs[2] = {"x", "y"};
    gguf_set_arr_str(g, "k.strs", strs, 2);
    const int64_t ku = gguf_find_key(g, "k.u32"), ks = gguf_find_key(g, "k.str"), ka = gguf_find_key(g, "k.strs");
#define CHECK_ERR(expr, what) do { ggml_clear_error(); const bool sentinel_ = (expr); \
        CHECK(sentinel_ && ggml_last_error()[0] != '\0', "%s: expected a sentinel and a message", what); } while (0)
    CHECK_ERR(gguf_get_val_i32(g, ku) == 0, "i32 of a u32");
    CHECK_ERR(gguf_get_val_u64(g, ku) == 0, "u64 of a u32");
    CHECK_ERR(gguf_get_val_str(g, ku) == NULL, "str of a u32");
    CHECK_ERR(gguf_get_val_u32(g, ks) == 0, "u32 of a str");
    CHECK_ERR(gguf_get_val_str(g, ka) == NULL, "str of an array");
    CHECK_ERR(gguf_get_arr_data(g, ka) == NULL, "arr_data of strings");
    CHECK_ERR(gguf_get_arr_str(g, ku, 0) == NULL, "arr_str of a u32");
    CHECK_ERR(gguf_get_arr_str(g, ka, 2) == NULL, "arr_str past the end");
    CHECK_ERR(gguf_get_arr_type(g, ku) == GGUF_TYPE_COUNT, "arr_type of a scalar");
    CHECK_ERR(gguf_get_val_data(g, ks) == NULL, "val_data of a string");
    CHECK_ERR(gguf_get_key(g, -1) == NULL, "key -1");
    CHECK_ERR(gguf_get_key(g, 3) == NULL, "key past the end");
    CHECK_ERR(gguf_get_kv_type(g, 99) == GGUF_TYPE_COUNT, "kv_type past the end");
    CHECK_ERR(gguf_get_arr_n(g, 99) == 0, "arr_n past the end");
    CHECK_ERR(gguf_get_tensor_name(g, 0) == NULL, "tensor name of none");
    CHECK_ERR(gguf_get_tensor_type(g, 0) == GGML_TYPE_COUNT, "tensor type of none");
    CHECK_ERR(gguf_get_tensor_offset(g, -1) == SIZE_MAX, "tensor offset of none");
    CHECK_ERR(gguf_get_tensor_ne(g, 0) == NULL, "tensor ne of none");
    CHECK_ERR(gguf_get_tensor_size(g, 0) == 0, "tensor size of none");
    CHECK_ERR(gguf_find_key(NULL, "k") == -1, "find_key in NULL");
    CHECK_ERR(gguf_find_tensor(g, NULL) == -1, "find_tensor NULL");
    CHECK_ERR(gguf_get_val_u8(NULL, 0) == 0, "u8 of NULL");
    CHECK(gguf_find_key(g, "absent") == -1 && gguf_find_tensor(g, "absent") == -1, "absent names give -1");
    CHECK(gguf_get_arr_n(g, ku) == 1 && gguf_get_val_u32(g, ku) == 5, "a scalar has one element");
    CHECK(gguf_type_name(GGUF_TYPE_COUNT) == NULL && strcmp(gguf_type_name(GGUF_TYPE_FLOAT64), "f64") == 0, "type names");

    /* setters that fail change nothing */
    const int64_t n_kv = gguf_get_n_kv(g);
    CHECK_ERR((gguf_set_val_u32(g, NULL, 1), gguf_get_n_kv(g) == n_kv), "NULL key");
    CHECK_ERR((gguf_set_val_u32(g, "", 1), gguf_get_n_kv(g) == n_kv), "empty key");
    CHECK_ERR((gguf_set_val_str(g, "k.str", NULL), strcmp(gguf_get_val_str(g, ks), "s") == 0), "NULL string");
    CHECK_ERR((gguf_set_arr_data(g, "k.arr", GGUF_TYPE_STRING, strs, 2), gguf_find_key(g, "k.arr") == -1), "arr_data of strings");
    CHECK_ERR((gguf_set_arr_data(g, "k.arr", GGUF_TYPE_ARRAY, strs, 2), gguf_find_key(g, "k.arr") == -1), "arr_data of arrays");
    CHECK_ERR((gguf_set_arr_data(g, "k.arr", GGUF_TYPE_UINT8, NULL, 2), gguf_find_key(g, "k.arr") == -1), "arr_data NULL");
    const char * with_null[2] = {"x", NULL};
    CHECK_ERR((gguf_set_arr_str(g, "k.arr", with_null, 2), gguf_find_key(g, "k.arr") == -1), "arr_str with a NULL");
    CHECK_ERR((gguf_set_val_u32(g, GGUF_KEY_GENERAL_ALIGNMENT, 48), gguf_get_alignment(g) == 32), "alignment 48");
    CHECK_ERR((gguf_set_val_u32(g, GGUF_KEY_GENERAL_ALIGNMENT, 0), gguf_get_alignment(g) == 32), "alignment 0");
    CHECK_ERR((gguf_set_val_i32(g, GGUF_KEY_GENERAL_ALIGNMENT, 64), gguf_get_alignment(g) == 32), "alignment as i32");
    const uint32_t a64 = 64;
    CHECK_ERR((gguf_set_arr_data(g, GGUF_KEY_GENERAL_ALIGNMENT, GGUF_TYPE_UINT32, &a64, 1), gguf_get_alignment(g) == 32), "alignment as array");
    CHECK(gguf_find_key(g, GGUF_KEY_GENERAL_ALIGNMENT) == -1 && gguf_get_n_kv(g) == n_kv, "refused alignments leave no key");

    /* tensors */
    struct ggml_context * gctx = tc_ctx(1);
    struct ggml_tensor * a = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, 64, 3);
    struct ggml_tensor * b = ggml_new_tensor_1d(gctx, GGML_TYPE_F16, 7);
    ggml_set_name(a, "a");
    ggml_set_name(b, "b");
    gguf_add_tensor(g, a);
    gguf_add_tensor(g, b);
    CHECK_ERR((gguf_add_tensor(g, a), gguf_get_n_tensors(g) == 2), "duplicate tensor");
    struct ggml_tensor * at = ggml_transpose(gctx, a);
    ggml_set_name(at, "a_t");
    CHECK_ERR((gguf_add_tensor(g, at), gguf_get_n_tensors(g) == 2), "non-contiguous tensor");
    CHECK_ERR((gguf_add_tensor(g, NULL), gguf_get_n_tensors(g) == 2), "NULL tensor");
    CHECK(gguf_get_tensor_offset(g, 1) == 768, "b follows a's 768 bytes");
    gguf_set_tensor_type(g, "a", (enum ggml_type) 8);  /* Q8_0: 64 elements = 2 blocks of 34 bytes per row */
    CHECK(gguf_get_tensor_size(g, 0) == 3 * 68 && gguf_get_tensor_offset(g, 1) == 224, "set_tensor_type Q8_0: size %zu, next at %zu",
          gguf_get_tensor_size(g, 0), gguf_get_tensor_offset(g, 1));
    CHECK_ERR((gguf_set_tensor_type(g, "b", (enum ggml_type) 8), gguf_get_tensor_type(g, 1) == GGML_TYPE_F16), "Q8_0 of 7 elements");
    CHECK_ERR((gguf_set_tensor_type(g, "b", (enum ggml_type) 4), gguf_get_tensor_type(g, 1) == GGML_TYPE_F16), "removed type 4");
    CHECK_ERR((gguf_set_tensor_type(g, "zz", GGML_TYPE_F32), true), "set_tensor_type of an absent tensor");
    CHECK_ERR((gguf_set_tensor_data(g, "zz", NULL), true), "set_tensor_data of an absent tensor");
    gguf_set_val_u32(g, GGUF_KEY_GENERAL_ALIGNMENT, 256);
    CHECK(gguf_get_alignment(g) == 256 && gguf_get_tensor_offset(g, 1) == 256, "alignment 256 moves b");
    gguf_remove_key(g, GGUF_KEY_GENERAL_ALIGNMENT);
    CHECK(gguf_get_alignment(g) == 32 && gguf_get_tensor_offset(g, 1) == 224, "removing the alignment restores 32");
    gguf_set_tensor_data(g, "a", NULL);
    CHECK_ERR(!gguf_write_to_file(g, TMP_DIR "/no_data.gguf", false), "writing a tensor without data");
    CHECK_ERR(!gguf_write_to_file(NULL, TMP_DIR "/x.gguf", false), "writing NULL");
#undef CHECK_ERR
    gguf_free(g);
    gguf_free(NULL);
    ggml_free(gctx);
}

static int count_temp_files(const char * prefix) {
    DIR * d = opendir(TMP_DIR);
    int n = 0;
    for (struct dirent * e; d && (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strstr(e->d_name, ".tmp.")) n++;
    if (d) closedir(d);
    return n;
}

/* A failed write leaves the old file whole and no temporary file behind. */
static void test_write_safety(void) {
    const char * path = TMP_DIR "/safe.gguf";
    struct ggml_context * gctx = tc_ctx(1);
    struct ggml_tensor * t = ggml_new_tensor_1d(gctx, GGML_TYPE_F32, 100);
    ggml_set_name(t, "t");
    fill_random_bits(t);
    struct gguf_context * g = gguf_init_empty();
    gguf_add_tensor(g, t);
    CHECK(gguf_write_to_file(g, path, false), "first write: %s", ggml_last_error());
    size_t n_old = 0, n_now = 0;
    uint8_t * old = read_all(path, &n_old);
    gguf_set_val_str(g, "more", "metadata");
    gguf_set_tensor_data(g, "t", NULL);
    ggml_clear_error();
    CHECK(!gguf_write_to_file(g, path, false) && ggml_last_error()[0], "a write that cannot complete fails");
    uint8_t * now = read_all(path, &n_now);
    CHECK(old && now && n_old == n_now && memcmp(old, now, n_old) == 0, "the old file is intact");
    free(now);
    CHECK(count_temp_files("safe.gguf") == 0, "no temporary file left");
    gguf_set_tensor_data(g, "t", t->data);
    CHECK(gguf_write_to_file(g, path, false), "overwrite: %s", ggml_last_error());
    now = read_all(path, &n_now);
    CHECK(now && n_now > n_old && count_temp_files("safe.gguf") == 0, "replaced, no temporary file left");
    struct gguf_context * r = gguf_init_from_file(path, params_of(true, NULL));
    CHECK(r && gguf_find_key(r, "more") >= 0, "the new file loads");
    ggml_clear_error();
    CHECK(!gguf_write_to_file(g, TMP_DIR "/no/such/dir.gguf", false) && ggml_last_error()[0], "no such directory");
    ggml_clear_error();
    CHECK(!gguf_init_from_file(TMP_DIR "/no/such/file.gguf", params_of(true, NULL)) && ggml_last_error()[0], "no such file");
    ggml_clear_error();
    CHECK(!gguf_init_from_file(TMP_DIR, params_of(true, NULL)) && ggml_last_error()[0], "a directory");
    gguf_free(r);
    free(now);
    free(old);
    gguf_free(g);
    ggml_free(gctx);
}

/* A loaded context is consistent: every tensor inside the file, its ggml
 * twin readable (the sanitizers see a bad pointer). */
static void check_consistent(const struct gguf_context * g, struct ggml_context * gctx, size_t file_size, const char * where) {
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) {
        const size_t off = gguf_get_tensor_offset(g, i), size = gguf_get_tensor_size(g, i);
        CHECK(gguf_get_data_offset(g) + off + size <= file_size, "%s: tensor %" PRId64 " outside the file", where, i);
        const struct ggml_tensor * t = ggml_get_tensor(gctx, gguf_get_tensor_name(g, i));
        CHECK(t && ggml_nbytes(t) == size, "%s: tensor %" PRId64 " not in the ggml context", where, i);
        unsigned sum = 0;
        for (size_t j = 0; t && j < size; j++) sum += ((const uint8_t *) t->data)[j];
        (void) sum;
    }
    for (int64_t i = 0; i < gguf_get_n_kv(g); i++) CHECK(gguf_get_key(g, i) != NULL, "%s: key %" PRId64, where, i);
}

/* Load bytes with data; either a consistent context or NULL with a message. */
static bool load_or_refuse(const uint8_t * p, size_t n, const char * where) {
    struct ggml_context * gctx = NULL;
    ggml_clear_error();
    struct gguf_context * g = gguf_init_from_buffer(p, n, params_of(false, &gctx));
    if (g) check_consistent(g, gctx, n, where);
    else CHECK(ggml_last_error()[0] != '\0' && gctx == NULL, "%s: refused without a message", where);
    gguf_free(g);
    ggml_free(gctx);
    return g != NULL;
}

/* The full file: every kv type and every tensor. */
static void make_full(struct bb * b) {
    struct gguf_context * g = gguf_init_empty();
    struct ggml_context * gctx;
    tc_seed(7);
    set_all_kv(g);
    add_spec_tensors(g, &gctx);
    bytes_of(g, b);
    gguf_free(g);
    ggml_free(gctx);
}

static void test_truncations(const struct bb * full) {
    int bad[4] = {0};
    for (size_t len = 0; len < full->n; len++) {
        struct ggml_context * gctx = NULL;
        struct gguf_context * g;
        g = gguf_init_from_buffer(full->p, len, params_of(false, &gctx)); bad[0] += g != NULL || gctx != NULL; gguf_free(g);
        g = gguf_init_from_buffer(full->p, len, params_of(true, &gctx));  bad[1] += g != NULL || gctx != NULL; gguf_free(g);
        g = gguf_init_from_buffer(full->p, len, params_of(true, NULL));   bad[2] += g != NULL; gguf_free(g);
        write_all(TMP_DIR "/trunc.gguf", full->p, len);
        ggml_clear_error();
        g = gguf_init_from_file(TMP_DIR "/trunc.gguf", params_of(false, &gctx));
        bad[3] += g != NULL || gctx != NULL || ggml_last_error()[0] == '\0';
        gguf_free(g);
    }
    for (int m = 0; m < 4; m++) CHECK(bad[m] == 0, "truncation mode %d: %d of %zu prefixes loaded", m, bad[m], full->n);
    CHECK(load_or_refuse(full->p, full->n, "the whole file"), "the whole file loads");
    printf("truncations: all %zu prefixes refused (buffer x3 modes, file)\n", full->n);
}

static void test_corruptions(const struct bb * full) {
    struct gguf_context * g = gguf_init_from_buffer(full->p, full->n, params_of(true, NULL));
    const size_t meta = gguf_get_data_offset(g);
    gguf_free(g);
    static const struct { uint8_t xor_mask, set; } edits[] = {{0x01, 0}, {0x80, 0}, {0xFF, 0}, {0, 0x00}, {0, 0xFF}};
    uint8_t * p = malloc(full->n);
    int loaded = 0, refused = 0;
    char where[64];
    for (size_t pos = 0; pos < meta; pos++) {
        for (size_t e = 0; e < sizeof edits / sizeof edits[0]; e++) {
            memcpy(p, full->p, full->n);
            p[pos] = edits[e].xor_mask ? (uint8_t) (p[pos] ^ edits[e].xor_mask) : edits[e].set;
            snprintf(where, sizeof where, "byte %zu edit %zu", pos, e);
            if (load_or_refuse(p, full->n, where)) loaded++; else refused++;
        }
    }
    printf("single-byte corruptions of %zu metadata bytes: %d loaded, %d refused\n", meta, loaded, refused);
    /* random: a few bytes changed anywhere, sometimes truncated too */
    tc_seed(2024);
    loaded = refused = 0;
    for (int it = 0; it < 20000; it++) {
        memcpy(p, full->p, full->n);
        const int n_edits = tc_randint(1, 4);
        for (int k = 0; k < n_edits; k++) p[tc_next() % meta] = (uint8_t) tc_next();
        const size_t n = tc_randint(0, 3) == 0 ? (size_t) (tc_next() % full->n) : full->n;
        snprintf(where, sizeof where, "random %d", it);
        if (load_or_refuse(p, n, where)) loaded++; else refused++;
    }
    printf("random corruptions: %d loaded, %d refused\n", loaded, refused);
    free(p);
}

/* Hand-made bad files are refused; hand-made edge cases load. */
static void test_hostile(void) {
    struct bb b = {0};
    const int64_t ne8[1] = {8};
#define REFUSE(what, ...) do { b.n = 0; __VA_ARGS__; expect_refused(&b, what); } while (0)
    REFUSE("bad magic", make_two_f32(&b, 32, 64); b.p[3] = 'X');
    static const uint32_t versions[] = {0, 1, 4, 0x03000000u};
    for (size_t i = 0; i < 4; i++) REFUSE("bad version", bb_header(&b, versions[i], 0, 0); bb_data(&b, 64, 1));
    static const int64_t counts[][2] = {{INT64_MAX, 0}, {0, INT64_MAX}, {-1, 0}, {0, -1}, {1ll << 40, 0}, {0, 1ll << 40},
                                        {1, 1ll << 59}, {INT64_MIN, INT64_MIN}, {3, 0}, {0, 9}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        REFUSE("bad counts", bb_header(&b, 3, counts[i][0], counts[i][1]); bb_data(&b, 200, 1));
    static const uint64_t lengths[] = {UINT64_MAX, 1ull << 63, 1ull << 32, 4};
    for (size_t i = 0; i < 4; i++) REFUSE("key length", bb_header(&b, 3, 0, 1); bb_u64(&b, lengths[i]); bb_bytes(&b, "abc", 3));
    for (size_t i = 0; i < 4; i++)
        REFUSE("string length", bb_header(&b, 3, 0, 1); bb_str(&b, "k"); bb_u32(&b, GGUF_TYPE_STRING); bb_u64(&b, lengths[i]); bb_bytes(&b, "abc", 3));
    static const uint64_t array_ns[] = {UINT64_MAX, 1ull << 61, 1ull << 62, 3};
    for (size_t i = 0; i < 4; i++) {
        REFUSE("u64 array length", bb_header(&b, 3, 0, 1); bb_str(&b, "k"); bb_u32(&b, GGUF_TYPE_ARRAY); bb_u32(&b, GGUF_TYPE_UINT64);
               bb_u64(&b, array_ns[i]); bb_data(&b, 16, 1));
        REFUSE("string array length", bb_header(&b, 3, 0, 1); bb_str(&b, "k"); bb_u32(&b, GGUF_TYPE_ARRAY); bb_u32(&b, GGUF_TYPE_STRING);
               bb_u64(&b, array_ns[i]); bb_u64(&b, 1); bb_bytes(&b, "x", 1); bb_u64(&b, 1); bb_bytes(&b, "y", 1));
    }
    REFUSE("nested arrays", make_nested_array(&b));
    static const uint32_t kv_types[] = {GGUF_TYPE_COUNT, 0xFFFFFFFFu, 1000};
    for (size_t i = 0; i < 3; i++) {
        REFUSE("unknown kv type", bb_header(&b, 3, 0, 1); bb_str(&b, "k"); bb_u32(&b, kv_types[i]); bb_data(&b, 16, 1));
        REFUSE("unknown array type", bb_header(&b, 3, 0, 1); bb_str(&b, "k"); bb_u32(&b, GGUF_TYPE_ARRAY); bb_u32(&b, kv_types[i]);
               bb_u64(&b, 1); bb_data(&b, 16, 1));
    }
    REFUSE("empty key", bb_header(&b, 3, 0, 1); bb_kv_u32(&b, "", 1));
    REFUSE("key with a NUL", bb_header(&b, 3, 0, 1); bb_strn(&b, "a\0b", 3); bb_u32(&b, GGUF_TYPE_UINT8); bb_le(&b, 1, 1));
    REFUSE("duplicate keys", make_dup_key(&b));
    REFUSE("alignment 48", make_bad_alignment(&b));
    REFUSE("alignment 0", bb_header(&b, 3, 0, 1); bb_kv_u32(&b, GGUF_KEY_GENERAL_ALIGNMENT, 0));
    REFUSE("alignment 2^31 past the end", bb_header(&b, 3, 1, 1); bb_kv_u32(&b, GGUF_KEY_GENERAL_ALIGNMENT, 1u << 31);
           bb_info(&b, "a", 1, ne8, GGML_TYPE_F32, 0); bb_data(&b, 64, 1));
    REFUSE("alignment as i32", bb_header(&b, 3, 0, 1); bb_str(&b, GGUF_KEY_GENERAL_ALIGNMENT); bb_u32(&b, GGUF_TYPE_INT32); bb_u32(&b, 32));
    REFUSE("alignment as array", bb_header(&b, 3, 0, 1); bb_str(&b, GGUF_KEY_GENERAL_ALIGNMENT); bb_u32(&b, GGUF_TYPE_ARRAY);
           bb_u32(&b, GGUF_TYPE_UINT32); bb_u64(&b, 1); bb_u32(&b, 32));
    REFUSE("five dimensions", make_five_dims(&b));
    REFUSE("2^32 - 1 dimensions", bb_header(&b, 3, 1, 0); bb_str(&b, "a"); bb_u32(&b, UINT32_MAX); bb_data(&b, 256, 1));
    static const int64_t bad_shapes[][2] = {{-1, 1}, {1, -1}, {1ll << 32, 1ll << 32}, {INT64_MAX, 1}, {0, INT64_MAX}, {INT64_MIN, 1}, {3, 1ll << 62}};
    for (size_t i = 0; i < sizeof bad_shapes / sizeof bad_shapes[0]; i++)
        REFUSE("bad shape", bb_header(&b, 3, 1, 0); bb_info(&b, "a", 2, bad_shapes[i], GGML_TYPE_F32, 0); bb_pad(&b, 32); bb_data(&b, 64, 1));
    static const int32_t tensor_types[] = {4, 5, 31, 36, GGML_TYPE_COUNT, -1, 1000};
    for (size_t i = 0; i < sizeof tensor_types / sizeof tensor_types[0]; i++)
        REFUSE("unknown tensor type", bb_header(&b, 3, 1, 0); bb_info(&b, "a", 1, ne8, tensor_types[i], 0); bb_pad(&b, 32); bb_data(&b, 64, 1));
    const int64_t ne33[1] = {33};
    REFUSE("Q8_0 row of 33", bb_header(&b, 3, 1, 0); bb_info(&b, "q", 1, ne33, 8, 0); bb_pad(&b, 32); bb_data(&b, 128, 1));
    REFUSE("duplicate tensor names", bb_header(&b, 3, 2, 0); bb_info(&b, "a", 1, ne8, GGML_TYPE_F32, 0);
           bb_info(&b, "a", 1, ne8, GGML_TYPE_F32, 32); bb_pad(&b, 32); bb_data(&b, 64, 1));
    char long_name[65];
    memset(long_name, 'n', 64);
    long_name[64] = '\0';
    REFUSE("name of 64 bytes", bb_header(&b, 3, 1, 0); bb_info(&b, long_name, 1, ne8, GGML_TYPE_F32, 0); bb_pad(&b, 32); bb_data(&b, 64, 1));
    REFUSE("name with a NUL", bb_header(&b, 3, 1, 0); bb_strn(&b, "a\0b", 3); bb_u32(&b, 1); bb_u64(&b, 8); bb_u32(&b, GGML_TYPE_F32);
           bb_u64(&b, 0); bb_pad(&b, 32); bb_data(&b, 64, 1));
    static const uint64_t bad_offsets[] = {0, 16, 33, 64, UINT64_MAX, 1ull << 63};
    for (size_t i = 0; i < sizeof bad_offsets / sizeof bad_offsets[0]; i++) REFUSE("overlapping or misplaced tensor", make_two_f32(&b, bad_offsets[i], 256));
    REFUSE("first tensor not at 0", bb_header(&b, 3, 1, 0); bb_info(&b, "a", 1, ne8, GGML_TYPE_F32, 32); bb_pad(&b, 32); bb_data(&b, 128, 1));
    REFUSE("data past the end", make_two_f32(&b, 32, 63));
    const int64_t ne3[1] = {3};
    REFUSE("no padding after the last tensor", bb_header(&b, 3, 1, 0); bb_info(&b, "a", 1, ne3, GGML_TYPE_F32, 0); bb_pad(&b, 32);
           bb_data(&b, 12, 1));
    REFUSE("data section past the end", bb_header(&b, 3, 1, 0); bb_info(&b, "a", 1, ne8, GGML_TYPE_F32, 0));
#undef REFUSE

    /* edge cases that are valid */
    b.n = 0;
    make_two_f32(&b, 32, 96);
    CHECK(load_or_refuse(b.p, b.n, "two tensors"), "two tensors load");
    b.n = 0;
    bb_header(&b, 3, 0, 0);
    struct ggml_context * gctx = NULL;
    struct gguf_context * g = gguf_init_from_buffer(b.p, b.n, params_of(false, &gctx));
    CHECK(g && gctx && gguf_get_n_kv(g) == 0 && gguf_get_data_offset(g) == 24 && ggml_get_first_tensor(gctx) == NULL, "header only");
    gguf_free(g);
    ggml_free(gctx);
    b.n = 0;
    make_edge(&b);
    g = gguf_init_from_buffer(b.p, b.n, params_of(false, &gctx));
    CHECK(g && gguf_get_version(g) == 2, "edge file: %s", ggml_last_error());
    if (g) {
        const int64_t flag = gguf_find_key(g, "flag"), empty = gguf_find_key(g, "empty");
        CHECK(gguf_get_val_bool(g, flag) && *(const uint8_t *) gguf_get_val_data(g, flag) == 1, "a bool stored as 2 reads as true (1)");
        CHECK(gguf_get_arr_n(g, empty) == 0 && gguf_get_arr_type(g, empty) == GGUF_TYPE_FLOAT64, "empty f64 array");
        const struct ggml_tensor * s = ggml_get_tensor(gctx, "scalar"), * none = ggml_get_tensor(gctx, "none"), * row = ggml_get_tensor(gctx, "row");
        CHECK(s && ggml_nelements(s) == 1 && none && ggml_nelements(none) == 0 && row && row->ne[0] == 3 && row->type == GGML_TYPE_I32, "edge tensors");
        CHECK(row && memcmp(row->data, b.p + gguf_get_data_offset(g) + 32, 12) == 0, "edge tensor data");
    }
    gguf_free(g);
    ggml_free(gctx);
    b.n = 0;
    make_q8_0(&b);
    g = gguf_init_from_buffer(b.p, b.n, params_of(true, NULL));
    CHECK(g && gguf_get_tensor_type(g, 0) == (enum ggml_type) 8 && gguf_get_tensor_size(g, 0) == 68, "Q8_0 metadata: %s", ggml_last_error());
    gguf_free(g);
    g = gguf_init_from_buffer(b.p, b.n, params_of(false, &gctx));
    const struct ggml_tensor * q = gctx ? ggml_get_tensor(gctx, "q") : NULL;
    CHECK(g && q && q->type == GGML_TYPE_Q8_0 && ggml_nbytes(q) == 68 && q->nb[0] == 34 && q->nb[1] == 68 &&
          memcmp(q->data, b.p + gguf_get_data_offset(g), 68) == 0, "Q8_0 into a ggml context, bytes kept: %s", ggml_last_error());
    gguf_free(g);
    ggml_free(gctx);
    free(b.p);
    b = (struct bb) {0};
    make_iq2_xxs(&b);
    g = gguf_init_from_buffer(b.p, b.n, params_of(true, NULL));
    CHECK(g && gguf_get_tensor_type(g, 0) == GGML_TYPE_IQ2_XXS && gguf_get_tensor_size(g, 0) == 66, "IQ2_XXS metadata: %s", ggml_last_error());
    gguf_free(g);
    /* a type stored without converters loads as bytes */
    g = gguf_init_from_buffer(b.p, b.n, params_of(false, &gctx));
    const struct ggml_tensor * grid = gctx ? ggml_get_tensor(gctx, "grid") : NULL;
    CHECK(g && grid && grid->type == GGML_TYPE_IQ2_XXS && ggml_nbytes(grid) == 66 &&
          memcmp(grid->data, b.p + gguf_get_data_offset(g), 66) == 0, "IQ2_XXS into a ggml context, bytes kept: %s", ggml_last_error());
    gguf_free(g);
    ggml_free(gctx);
    free(b.p);
}

int main(int argc, char ** argv) {
    if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0) return write_corpus(argv[2]);
    if (mkdir(TMP_DIR, 0777) != 0 && errno != EEXIST) { perror(TMP_DIR); return 2; }
    make_arr_bytes();
    test_byte_layout();
    test_roundtrip_kv();
    test_roundtrip_tensors();
    test_file_ptr_and_callback();
    test_api_errors();
    test_write_safety();
    test_hostile();
    struct bb full = {0};
    make_full(&full);
    test_truncations(&full);
    test_corruptions(&full);
    free(full.p);
    test_corpus();
    return tc_finish("gguf");
}

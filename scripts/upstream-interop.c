/* upstream-interop.c -- GGUF interop and mul_mat accuracy, built against
 * this library and against upstream ggml from the same source (only the
 * public ggml.h, ggml-cpu.h and gguf.h); scripts/compare-upstream-gguf.sh
 * builds and runs it.
 *
 *   upstream-interop write FILE
 *       a GGUF file: one 1024 x 8 tensor of every type both libraries'
 *       ggml_quantize_chunk makes (fixed pseudo-random data; the types that
 *       use an importance matrix once more with one, "<type>.imatrix"), and
 *       one metadata key of every GGUF value type (arrays of several)
 *   upstream-interop read FILE DIR
 *       reads FILE, checks every metadata key's type and value and every
 *       tensor's type and shape, and writes into DIR (which must exist):
 *       meta.txt (the keys, floats as their bits), tensors.txt (name, type,
 *       shape, offset, bytes) and per tensor NAME.q (its bytes) and NAME.f32
 *       (to_float of them; F32: the bytes); exit status 1 on a mismatch
 *   upstream-interop accuracy TYPE N
 *       W (K = 4096 x M = 64, quantized to TYPE from fixed data) times x
 *       (4096 x N, F32) by ggml_mul_mat on the CPU (2 threads), against the
 *       product in double of to_float(W) and x; prints
 *       "TYPE N max_abs_err max_abs_ref rel_l2_err"
 *   upstream-interop types
 *       the type names, one a line */
#include "ggml.h"
#include "ggml-cpu.h"
#include "gguf.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const enum ggml_type types[] = {
    GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
    GGML_TYPE_Q8_0, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_IQ4_NL,
    GGML_TYPE_IQ4_XS, GGML_TYPE_MXFP4, GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0,
};
#define NTYPES ((int) (sizeof types / sizeof types[0]))
#define NE0 1024
#define NE1 8

/* the types whose quantizer reads an importance matrix (both libraries) */
static int uses_imatrix(enum ggml_type t) {
    return t == GGML_TYPE_Q4_0 || t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_0 || t == GGML_TYPE_Q5_1 || t == GGML_TYPE_Q2_K ||
           t == GGML_TYPE_Q3_K || t == GGML_TYPE_Q4_K || t == GGML_TYPE_Q5_K || t == GGML_TYPE_Q6_K ||
           t == GGML_TYPE_IQ4_NL || t == GGML_TYPE_IQ4_XS;
}

static uint64_t rng;
static double urand(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (double) (rng >> 11) * (1.0 / 9007199254740992.0); }

/* weights: roughly normal (sum of 4 uniforms), 1 % outliers ten times larger */
static void fill_weights(float * x, int64_t n, uint64_t seed) {
    rng = 0x9E3779B97F4A7C15ull ^ (seed * 0x100000001B3ull + 1);
    for (int64_t i = 0; i < n; i++) {
        const double g = urand() + urand() + urand() + urand() - 2.0;
        x[i] = (float) (urand() < 0.01 ? 10 * g : g) * 0.05f;
    }
}

static enum ggml_type type_by_name(const char * s) {
    for (int i = 0; i < NTYPES; i++) if (strcmp(ggml_type_name(types[i]), s) == 0) return types[i];
    return GGML_TYPE_COUNT;
}

/* to_float of n elements of type (F32: a copy; upstream's traits have no converter for it) */
static int to_float(enum ggml_type type, const void * src, float * dst, int64_t n) {
    if (type == GGML_TYPE_F32) { memcpy(dst, src, (size_t) n * sizeof(float)); return 0; }
    const struct ggml_type_traits * tt = ggml_get_type_traits(type);
    if (!tt || !tt->to_float) return 1;
    tt->to_float(src, dst, n);
    return 0;
}

/* ---- metadata: one key of every value type ---- */

static const int32_t arr_i32[] = {1, -2, 2147483647, -2147483647 - 1};
static const float arr_f32[] = {0.5f, -1e-30f, 3.4e38f, 1.0f / 3.0f};
static const uint8_t arr_u8[] = {0, 1, 255};
static const double arr_f64[] = {1e-300, -2.5, 1.0 / 3.0};
static const char * arr_str[] = {"alpha", "", "gr\xc3\xbc\xc3\x9f"};

static void set_meta(struct gguf_context * g) {
    gguf_set_val_u32(g, "general.alignment", 64);
    gguf_set_val_str(g, "general.name", "ggml interop test");
    gguf_set_val_u8(g, "interop.u8", 200);
    gguf_set_val_i8(g, "interop.i8", -100);
    gguf_set_val_u16(g, "interop.u16", 60000);
    gguf_set_val_i16(g, "interop.i16", -30000);
    gguf_set_val_u32(g, "interop.u32", 4000000000u);
    gguf_set_val_i32(g, "interop.i32", -2000000000);
    gguf_set_val_f32(g, "interop.f32", 3.14159274f);
    gguf_set_val_bool(g, "interop.bool", true);
    gguf_set_val_str(g, "interop.str", "text with \"quotes\" and \xe2\x9c\x93");
    gguf_set_val_u64(g, "interop.u64", 18000000000000000000ull);
    gguf_set_val_i64(g, "interop.i64", -9000000000000000000ll);
    gguf_set_val_f64(g, "interop.f64", 2.718281828459045);
    gguf_set_arr_data(g, "interop.arr_i32", GGUF_TYPE_INT32, arr_i32, 4);
    gguf_set_arr_data(g, "interop.arr_f32", GGUF_TYPE_FLOAT32, arr_f32, 4);
    gguf_set_arr_data(g, "interop.arr_u8", GGUF_TYPE_UINT8, arr_u8, 3);
    gguf_set_arr_data(g, "interop.arr_f64", GGUF_TYPE_FLOAT64, arr_f64, 3);
    gguf_set_arr_str(g, "interop.arr_str", arr_str, 3);
    gguf_set_arr_data(g, "interop.arr_empty", GGUF_TYPE_INT32, arr_i32, 0);
}
#define N_META 20

static int bad;
#define CHECK(cond, ...) do { if (!(cond)) { fprintf(stderr, "mismatch: " __VA_ARGS__); fprintf(stderr, "\n"); bad++; } } while (0)

/* the key's id if it has type t, else -1 (and a mismatch) */
static int64_t key(const struct gguf_context * g, const char * k, enum gguf_type t) {
    const int64_t id = gguf_find_key(g, k);
    CHECK(id >= 0, "%s missing", k);
    if (id < 0) return -1;
    CHECK(gguf_get_kv_type(g, id) == t, "%s has type %d, want %d", k, (int) gguf_get_kv_type(g, id), (int) t);
    return gguf_get_kv_type(g, id) == t ? id : -1;
}

static int64_t arr(const struct gguf_context * g, const char * k, enum gguf_type t, size_t n) {
    const int64_t id = key(g, k, GGUF_TYPE_ARRAY);
    if (id < 0) return -1;
    CHECK(gguf_get_arr_type(g, id) == t, "%s: element type %d, want %d", k, (int) gguf_get_arr_type(g, id), (int) t);
    CHECK(gguf_get_arr_n(g, id) == n, "%s: %zu elements, want %zu", k, gguf_get_arr_n(g, id), n);
    return gguf_get_arr_type(g, id) == t && gguf_get_arr_n(g, id) == n ? id : -1;
}

static void check_meta(const struct gguf_context * g) {
    int64_t id;
    CHECK(gguf_get_n_kv(g) == N_META, "%lld keys, want %d", (long long) gguf_get_n_kv(g), N_META);
    CHECK(gguf_get_alignment(g) == 64, "alignment %zu, want 64", gguf_get_alignment(g));
    if ((id = key(g, "general.alignment", GGUF_TYPE_UINT32)) >= 0) CHECK(gguf_get_val_u32(g, id) == 64, "general.alignment");
    if ((id = key(g, "general.name", GGUF_TYPE_STRING)) >= 0) CHECK(!strcmp(gguf_get_val_str(g, id), "ggml interop test"), "general.name");
    if ((id = key(g, "interop.u8", GGUF_TYPE_UINT8)) >= 0) CHECK(gguf_get_val_u8(g, id) == 200, "u8");
    if ((id = key(g, "interop.i8", GGUF_TYPE_INT8)) >= 0) CHECK(gguf_get_val_i8(g, id) == -100, "i8");
    if ((id = key(g, "interop.u16", GGUF_TYPE_UINT16)) >= 0) CHECK(gguf_get_val_u16(g, id) == 60000, "u16");
    if ((id = key(g, "interop.i16", GGUF_TYPE_INT16)) >= 0) CHECK(gguf_get_val_i16(g, id) == -30000, "i16");
    if ((id = key(g, "interop.u32", GGUF_TYPE_UINT32)) >= 0) CHECK(gguf_get_val_u32(g, id) == 4000000000u, "u32");
    if ((id = key(g, "interop.i32", GGUF_TYPE_INT32)) >= 0) CHECK(gguf_get_val_i32(g, id) == -2000000000, "i32");
    if ((id = key(g, "interop.f32", GGUF_TYPE_FLOAT32)) >= 0) CHECK(gguf_get_val_f32(g, id) == 3.14159274f, "f32");
    if ((id = key(g, "interop.bool", GGUF_TYPE_BOOL)) >= 0) CHECK(gguf_get_val_bool(g, id) == true, "bool");
    if ((id = key(g, "interop.str", GGUF_TYPE_STRING)) >= 0) CHECK(!strcmp(gguf_get_val_str(g, id), "text with \"quotes\" and \xe2\x9c\x93"), "str");
    if ((id = key(g, "interop.u64", GGUF_TYPE_UINT64)) >= 0) CHECK(gguf_get_val_u64(g, id) == 18000000000000000000ull, "u64");
    if ((id = key(g, "interop.i64", GGUF_TYPE_INT64)) >= 0) CHECK(gguf_get_val_i64(g, id) == -9000000000000000000ll, "i64");
    if ((id = key(g, "interop.f64", GGUF_TYPE_FLOAT64)) >= 0) CHECK(gguf_get_val_f64(g, id) == 2.718281828459045, "f64");
    if ((id = arr(g, "interop.arr_i32", GGUF_TYPE_INT32, 4)) >= 0) CHECK(!memcmp(gguf_get_arr_data(g, id), arr_i32, sizeof arr_i32), "arr_i32");
    if ((id = arr(g, "interop.arr_f32", GGUF_TYPE_FLOAT32, 4)) >= 0) CHECK(!memcmp(gguf_get_arr_data(g, id), arr_f32, sizeof arr_f32), "arr_f32");
    if ((id = arr(g, "interop.arr_u8", GGUF_TYPE_UINT8, 3)) >= 0) CHECK(!memcmp(gguf_get_arr_data(g, id), arr_u8, sizeof arr_u8), "arr_u8");
    if ((id = arr(g, "interop.arr_f64", GGUF_TYPE_FLOAT64, 3)) >= 0) CHECK(!memcmp(gguf_get_arr_data(g, id), arr_f64, sizeof arr_f64), "arr_f64");
    if ((id = arr(g, "interop.arr_str", GGUF_TYPE_STRING, 3)) >= 0)
        for (size_t i = 0; i < 3; i++) CHECK(!strcmp(gguf_get_arr_str(g, id, i), arr_str[i]), "arr_str[%zu]", i);
    arr(g, "interop.arr_empty", GGUF_TYPE_INT32, 0);
}

/* one element of type t at p, as text (floats by their bits) */
static void put_scalar(FILE * f, enum gguf_type t, const void * p) {
    switch (t) {
        case GGUF_TYPE_UINT8:   fprintf(f, "%u", *(const uint8_t *) p); break;
        case GGUF_TYPE_INT8:    fprintf(f, "%d", *(const int8_t *) p); break;
        case GGUF_TYPE_UINT16:  fprintf(f, "%u", *(const uint16_t *) p); break;
        case GGUF_TYPE_INT16:   fprintf(f, "%d", *(const int16_t *) p); break;
        case GGUF_TYPE_UINT32:  fprintf(f, "%u", *(const uint32_t *) p); break;
        case GGUF_TYPE_INT32:   fprintf(f, "%d", *(const int32_t *) p); break;
        case GGUF_TYPE_UINT64:  fprintf(f, "%llu", (unsigned long long) *(const uint64_t *) p); break;
        case GGUF_TYPE_INT64:   fprintf(f, "%lld", (long long) *(const int64_t *) p); break;
        case GGUF_TYPE_FLOAT32: { uint32_t b; memcpy(&b, p, 4); fprintf(f, "0x%08x", b); break; }
        case GGUF_TYPE_FLOAT64: { uint64_t b; memcpy(&b, p, 8); fprintf(f, "0x%016llx", (unsigned long long) b); break; }
        case GGUF_TYPE_BOOL:    fprintf(f, "%d", *(const int8_t *) p); break;
        default:                fprintf(f, "?"); break;
    }
}

/* bytes of one array element of type t (gguf_type_size is not public) */
static size_t elem_size(enum gguf_type t) {
    switch (t) {
        case GGUF_TYPE_UINT8: case GGUF_TYPE_INT8: case GGUF_TYPE_BOOL: return 1;
        case GGUF_TYPE_UINT16: case GGUF_TYPE_INT16: return 2;
        case GGUF_TYPE_UINT32: case GGUF_TYPE_INT32: case GGUF_TYPE_FLOAT32: return 4;
        case GGUF_TYPE_UINT64: case GGUF_TYPE_INT64: case GGUF_TYPE_FLOAT64: return 8;
        default: return 0;
    }
}

static void dump_meta(const struct gguf_context * g, FILE * f) {
    fprintf(f, "version %u alignment %zu n_kv %lld n_tensors %lld\n", (unsigned) gguf_get_version(g), gguf_get_alignment(g),
            (long long) gguf_get_n_kv(g), (long long) gguf_get_n_tensors(g));
    for (int64_t i = 0; i < gguf_get_n_kv(g); i++) {
        const enum gguf_type t = gguf_get_kv_type(g, i);
        fprintf(f, "%s %s ", gguf_get_key(g, i), gguf_type_name(t));
        if (t == GGUF_TYPE_STRING) fprintf(f, "\"%s\"", gguf_get_val_str(g, i));
        else if (t == GGUF_TYPE_ARRAY) {
            const enum gguf_type at = gguf_get_arr_type(g, i);
            const size_t n = gguf_get_arr_n(g, i);
            fprintf(f, "%s[%zu]", gguf_type_name(at), n);
            for (size_t j = 0; j < n; j++) {
                fputc(' ', f);
                if (at == GGUF_TYPE_STRING) fprintf(f, "\"%s\"", gguf_get_arr_str(g, i, j));
                else put_scalar(f, at, (const char *) gguf_get_arr_data(g, i) + j * elem_size(at));
            }
        } else put_scalar(f, t, gguf_get_val_data(g, i));
        fputc('\n', f);
    }
}

static int write_file(const char * fname) {
    const size_t per = ggml_row_size(GGML_TYPE_F32, NE0) * NE1 + 256;
    struct ggml_init_params ip = {(size_t) 2 * NTYPES * per + ((size_t) 1 << 20), NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * g = gguf_init_empty();
    set_meta(g);
    float * src = malloc(sizeof(float) * NE0 * NE1), imat[NE0];
    for (int i = 0; i < NE0; i++) imat[i] = (float) (0.1 + (i % 17) * 0.3);
    for (int i = 0; i < NTYPES; i++)
        for (int with_imat = 0; with_imat <= uses_imatrix(types[i]); with_imat++) {
            const enum ggml_type t = types[i];
            fill_weights(src, NE0 * NE1, (uint64_t) t * 2 + (uint64_t) with_imat);
            struct ggml_tensor * w = ggml_new_tensor_2d(ctx, t, NE0, NE1);
            const size_t got = ggml_quantize_chunk(t, src, w->data, 0, NE1, NE0, with_imat ? imat : NULL);
            if (got != ggml_nbytes(w)) { fprintf(stderr, "%s: quantize gave %zu bytes, want %zu\n", ggml_type_name(t), got, ggml_nbytes(w)); return 1; }
            char name[64];
            snprintf(name, sizeof name, "%s%s", ggml_type_name(t), with_imat ? ".imatrix" : "");
            ggml_set_name(w, name);
            gguf_add_tensor(g, w);
        }
    free(src);
    if (!gguf_write_to_file(g, fname, false)) { fprintf(stderr, "cannot write %s\n", fname); return 1; }
    gguf_free(g);
    ggml_free(ctx);
    return 0;
}

static int write_bytes(const char * dir, const char * name, const char * ext, const void * p, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    FILE * f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) { fprintf(stderr, "cannot write %s\n", path); if (f) fclose(f); return 1; }
    return fclose(f) != 0;
}

static int read_file(const char * fname, const char * dir) {
    struct ggml_context * ctx = NULL;
    struct gguf_init_params ip = {false, &ctx};
    struct gguf_context * g = gguf_init_from_file(fname, ip);
    if (!g || !ctx) { fprintf(stderr, "cannot read %s\n", fname); return 1; }
    check_meta(g);
    char path[4096];
    snprintf(path, sizeof path, "%s/meta.txt", dir);
    FILE * fm = fopen(path, "w");
    snprintf(path, sizeof path, "%s/tensors.txt", dir);
    FILE * ft = fopen(path, "w");
    if (!fm || !ft) { fprintf(stderr, "cannot write into %s\n", dir); return 1; }
    dump_meta(g, fm);
    int64_t want = 0;
    for (int i = 0; i < NTYPES; i++) want += 1 + uses_imatrix(types[i]);
    CHECK(gguf_get_n_tensors(g) == want, "%lld tensors, want %lld", (long long) gguf_get_n_tensors(g), (long long) want);
    float * y = malloc(sizeof(float) * NE0 * NE1);
    for (int64_t i = 0; i < gguf_get_n_tensors(g); i++) {
        const char * name = gguf_get_tensor_name(g, i);
        struct ggml_tensor * t = ggml_get_tensor(ctx, name);
        char tname[64];
        snprintf(tname, sizeof tname, "%s", name);
        char * dot = strchr(tname, '.');
        if (dot) *dot = 0;
        const enum ggml_type want_type = type_by_name(tname);
        CHECK(t != NULL, "tensor %s not in the context", name);
        if (!t) continue;
        CHECK(t->type == want_type && gguf_get_tensor_type(g, i) == want_type, "%s: type %d", name, (int) t->type);
        CHECK(t->ne[0] == NE0 && t->ne[1] == NE1 && t->ne[2] == 1 && t->ne[3] == 1, "%s: shape", name);
        CHECK(gguf_get_tensor_size(g, i) == ggml_nbytes(t), "%s: size %zu", name, gguf_get_tensor_size(g, i));
        CHECK(gguf_get_tensor_offset(g, i) % 64 == 0, "%s: offset %zu not aligned", name, gguf_get_tensor_offset(g, i));
        fprintf(ft, "%s %s %lld %lld offset %zu bytes %zu\n", name, ggml_type_name(t->type), (long long) t->ne[0],
                (long long) t->ne[1], gguf_get_tensor_offset(g, i), gguf_get_tensor_size(g, i));
        if (t->type != want_type || ggml_nelements(t) != NE0 * NE1) continue;
        bad += write_bytes(dir, name, "q", t->data, ggml_nbytes(t));
        if (to_float(t->type, t->data, y, NE0 * NE1)) { CHECK(0, "%s: no to_float", name); continue; }
        bad += write_bytes(dir, name, "f32", y, sizeof(float) * NE0 * NE1);
    }
    free(y);
    fclose(fm);
    fclose(ft);
    gguf_free(g);
    ggml_free(ctx);
    if (bad) fprintf(stderr, "%s: %d mismatches\n", fname, bad);
    return bad != 0;
}

/* ---- accuracy of mul_mat ---- */

static int accuracy(const char * tname, int n) {
    enum { K = 4096, M = 64 };
    const enum ggml_type type = type_by_name(tname);
    if (type == GGML_TYPE_COUNT || n < 1 || n > 512) { fprintf(stderr, "unknown type %s or bad N\n", tname); return 2; }
    struct ggml_init_params ip = {(size_t) K * (M + n) * 4 * 2 + (size_t) M * n * 4 + ((size_t) 16 << 20), NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, type, K, M), * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, n);
    float * src = malloc(sizeof(float) * K * M);
    fill_weights(src, (int64_t) K * M, 1000 + (uint64_t) type);
    if (ggml_quantize_chunk(type, src, w->data, 0, M, K, NULL) != ggml_nbytes(w)) { fprintf(stderr, "quantize failed\n"); return 1; }
    if (to_float(type, w->data, src, (int64_t) K * M)) { fprintf(stderr, "no to_float\n"); return 1; }
    rng = 12345;
    float * xd = (float *) x->data;
    for (int64_t i = 0; i < (int64_t) K * n; i++) xd[i] = (float) (urand() * 2 - 1);
    struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    if (ggml_graph_compute_with_ctx(ctx, gf, 2) != GGML_STATUS_SUCCESS) { fprintf(stderr, "compute failed\n"); return 1; }
    double max_err = 0, max_ref = 0, se = 0, sr = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < M; i++) {
            double r = 0;
            for (int k = 0; k < K; k++) r += (double) src[(size_t) i * K + k] * (double) xd[(size_t) j * K + k];
            const double e = fabs((double) ((float *) y->data)[(size_t) j * M + i] - r);
            if (!(e <= max_err)) max_err = e;  /* a NaN shows */
            if (fabs(r) > max_ref) max_ref = fabs(r);
            se += e * e;
            sr += r * r;
        }
    printf("%s %d %.3e %.3e %.3e\n", tname, n, max_err, max_ref, sqrt(se / sr));
    free(src);
    ggml_free(ctx);
    return 0;
}

int main(int argc, char ** argv) {
    if (argc == 3 && !strcmp(argv[1], "write")) return write_file(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "read")) return read_file(argv[2], argv[3]);
    if (argc == 4 && !strcmp(argv[1], "accuracy")) return accuracy(argv[2], atoi(argv[3]));
    if (argc == 2 && !strcmp(argv[1], "types")) {
        for (int i = 0; i < NTYPES; i++) printf("%s\n", ggml_type_name(types[i]));
        return 0;
    }
    fprintf(stderr, "usage: %s write FILE | read FILE DIR | accuracy TYPE N | types\n", argv[0]);
    return 2;
}

/* test_gguf_types.c -- GGUF files with tensors of every type that has a
 * dequantizer (BF16 and the quantized ones, next to F32/F16/I32): written,
 * read back into a ggml context with the same type, shape, bytes and
 * dequantized values, each tensor's data at a multiple of the 32-byte
 * alignment; the sizes in the file are the type traits'; a row that is not
 * whole blocks, a removed or unknown type number, and a type this library
 * only names are refused with a message naming the tensor and the type. */
#include "common/test_common.h"
#include "quant/quant.h"

#include "gguf.h"

#include <stdlib.h>
#include <string.h>

#define TMP_FILE "gguf_types_tmp.gguf"

static const enum ggml_type types[] = {
    GGML_TYPE_F32,  GGML_TYPE_F16,  GGML_TYPE_BF16, GGML_TYPE_I32,  GGML_TYPE_Q4_0,   GGML_TYPE_Q4_1,
    GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1, GGML_TYPE_Q2_K,   GGML_TYPE_Q3_K,
    GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_Q8_K, GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS,
    GGML_TYPE_MXFP4, GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0,   GGML_TYPE_TQ1_0,  GGML_TYPE_TQ2_0,
};
#define NTYPES ((int) (sizeof types / sizeof types[0]))

/* quantized rows of random values (bytes for I32) */
static void fill_tensor(struct ggml_tensor * t) {
    const int64_t n = ggml_nelements(t);
    float * x = malloc(sizeof(float) * (size_t) n);
    for (int64_t i = 0; i < n; i++) x[i] = (float) tc_uniform(-3, 3);
    const struct ggml_type_traits * tt = ggmlr_type_traits_own(t->type);
    if (t->type == GGML_TYPE_I32) for (int64_t i = 0; i < n; i++) ((int32_t *) t->data)[i] = (int32_t) (x[i] * 1000);
    else if (t->type == GGML_TYPE_F32) memcpy(t->data, x, sizeof(float) * (size_t) n);
    else tt->from_float_ref(x, t->data, n);
    free(x);
}

static void test_round_trip(void) {
    struct ggml_context * ctx = tc_ctx(16);
    struct gguf_context * g = gguf_init_empty();
    struct ggml_tensor * ts[NTYPES];
    for (int i = 0; i < NTYPES; i++) {
        /* two rows of 512 (whole blocks of every type), a third dimension for some */
        ts[i] = ggml_new_tensor_3d(ctx, types[i], 512, 2, 1 + i % 2);
        char name[32];
        snprintf(name, sizeof name, "t_%s", ggml_type_name(types[i]));
        ggml_set_name(ts[i], name);
        fill_tensor(ts[i]);
        gguf_add_tensor(g, ts[i]);
        CHECK(gguf_get_tensor_size(g, i) == ggml_row_size(types[i], 512) * 2 * (size_t) (1 + i % 2),
              "%s: size in the file is the traits' row size", name);
    }
    CHECK(gguf_write_to_file(g, TMP_FILE, false), "write: %s", ggml_last_error());
    gguf_free(g);

    struct ggml_context * back = NULL;
    struct gguf_init_params params = {false, &back};
    g = gguf_init_from_file(TMP_FILE, params);
    CHECK(g && back && gguf_get_n_tensors(g) == NTYPES, "read back: %s", ggml_last_error());
    for (int i = 0; g && back && i < NTYPES; i++) {
        const struct ggml_tensor * t = ggml_get_tensor(back, ts[i]->name);
        const char * name = ts[i]->name;
        CHECK(t && t->type == types[i] && ggml_are_same_shape(t, ts[i]) && memcmp(t->nb, ts[i]->nb, sizeof t->nb) == 0,
              "%s: type, shape and strides", name);
        CHECK(t && ggml_nbytes(t) == ggml_nbytes(ts[i]) && memcmp(t->data, ts[i]->data, ggml_nbytes(t)) == 0, "%s: bytes", name);
        CHECK(gguf_get_tensor_offset(g, i) % 32 == 0 && gguf_get_tensor_type(g, i) == types[i], "%s: 32-byte aligned offset", name);
        const struct ggml_type_traits * tt = ggmlr_type_traits_own(types[i]);
        if (t && tt->to_float) {
            const int64_t n = ggml_nelements(t);
            float * a = malloc(sizeof(float) * (size_t) n), * b = malloc(sizeof(float) * (size_t) n);
            tt->to_float(t->data, a, n);
            tt->to_float(ts[i]->data, b, n);
            CHECK(memcmp(a, b, sizeof(float) * (size_t) n) == 0, "%s: dequantized values", name);
            free(a); free(b);
        }
    }
    gguf_free(g);
    ggml_free(back);
    remove(TMP_FILE);
    ggml_free(ctx);
}

/* a one-tensor file: header, the tensor info (1-D, ne0, type), padding,
 * nbytes of data padded to the alignment */
static size_t one_tensor_file(uint8_t * p, const char * name, int64_t ne0, int32_t type, size_t nbytes) {
    size_t n = 0;
    const uint32_t version = 3;
    const int64_t n_tensors = 1, n_kv = 0;
    const uint64_t len = strlen(name), offset = 0;
    const uint32_t n_dims = 1;
    memcpy(p + n, "GGUF", 4); n += 4;
    memcpy(p + n, &version, 4); n += 4;
    memcpy(p + n, &n_tensors, 8); n += 8;
    memcpy(p + n, &n_kv, 8); n += 8;
    memcpy(p + n, &len, 8); n += 8;
    memcpy(p + n, name, len); n += len;
    memcpy(p + n, &n_dims, 4); n += 4;
    memcpy(p + n, &ne0, 8); n += 8;
    memcpy(p + n, &type, 4); n += 4;
    memcpy(p + n, &offset, 8); n += 8;
    while (n % 32) p[n++] = 0;
    memset(p + n, 0x11, nbytes);
    n += nbytes;
    while (n % 32) p[n++] = 0;
    return n;
}

static void test_refusals(void) {
    uint8_t buf[4096];
    struct ggml_context * gctx = NULL;
    struct gguf_init_params with_ctx = {false, &gctx}, meta = {true, NULL};
    /* Q4_K with 100 elements: not whole 256-blocks */
    size_t n = one_tensor_file(buf, "w.partial", 100, GGML_TYPE_Q4_K, 144);
    struct gguf_context * g = gguf_init_from_buffer(buf, n, meta);
    CHECK(!g && strstr(ggml_last_error(), "'w.partial'") && strstr(ggml_last_error(), "whole blocks"),
          "a row that is not whole blocks: %s", ggml_last_error());
    /* numbers upstream removed, and past the end */
    static const int32_t unknown[] = {4, 31, 38, GGML_TYPE_COUNT};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        n = one_tensor_file(buf, "w.old", 256, unknown[i], 256);
        g = gguf_init_from_buffer(buf, n, meta);
        CHECK(!g && strstr(ggml_last_error(), "'w.old'") && strstr(ggml_last_error(), "unknown type"),
              "type %d: %s", (int) unknown[i], ggml_last_error());
    }
    /* a type stored without converters: metadata, and its bytes in a context */
    n = one_tensor_file(buf, "w.iq3", 256, GGML_TYPE_IQ3_S, 110);
    g = gguf_init_from_buffer(buf, n, meta);
    CHECK(g && gguf_get_tensor_size(g, 0) == 110, "IQ3_S metadata: %s", ggml_last_error());
    gguf_free(g);
    g = gguf_init_from_buffer(buf, n, with_ctx);
    const struct ggml_tensor * iq3 = gctx ? ggml_get_tensor(gctx, "w.iq3") : NULL;
    size_t as_written = 0;  /* the file's data bytes are all 0x11 */
    for (size_t i = 0; iq3 && i < ggml_nbytes(iq3); i++) as_written += ((const uint8_t *) iq3->data)[i] == 0x11;
    CHECK(g && iq3 && iq3->type == GGML_TYPE_IQ3_S && ggml_nbytes(iq3) == 110 && as_written == 110,
          "IQ3_S into a context, its 110 bytes as in the file: %s", ggml_last_error());
    gguf_free(g);
    ggml_free(gctx);
    gctx = NULL;
    /* truncated data of a quantized tensor */
    n = one_tensor_file(buf, "w.short", 512, GGML_TYPE_Q6_K, 420);
    g = gguf_init_from_buffer(buf, n - 32, with_ctx);   /* 416 of the 420 bytes */
    CHECK(!g && !gctx && ggml_last_error()[0], "truncated Q6_K data: %s", ggml_last_error());
    g = gguf_init_from_buffer(buf, n, with_ctx);
    CHECK(g && gctx && ggml_get_tensor(gctx, "w.short") && ggml_get_tensor(gctx, "w.short")->type == GGML_TYPE_Q6_K,
          "the whole Q6_K tensor loads: %s", ggml_last_error());
    gguf_free(g);
    ggml_free(gctx);
}

int main(void) {
    tc_seed(22);
    test_round_trip();
    test_refusals();
    return tc_finish("gguf types");
}

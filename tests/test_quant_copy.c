/* test_quant_copy.c -- ggml_cpy / ggml_dup / ggml_cont with BF16 and the
 * quantized types (the CPY kernel's whole-row path, cpu/kernels/copy.c). A
 * separate file for now rather than rows of the op table (tests/ops/), whose
 * harness takes F32 inputs. For every quantized type and every source of
 * F32, F16, BF16 (contiguous and transposed): the bytes of cpy(x, q) are the
 * reference quantizer's of x's values, read back as F32 they are to_float's,
 * and within the format's error of x in float64; identical on 1, 2, 3 and 8
 * threads; quantized -> quantized through F32; dup and cont of a quantized
 * tensor copy its bytes; a shape mismatch, a quantized parameter and the
 * other ops are refused with a message; the gradient of cpy through a
 * quantized tensor is straight-through (as upstream); set_rows into a
 * quantized or BF16 table. */
#include "common/test_common.h"
#include "quant/quant.h"

#include <stdlib.h>
#include <string.h>

static const enum ggml_type qtypes[] = {
    GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1,
    GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_Q8_K,
    GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_MXFP4, GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_TQ1_0,
    GGML_TYPE_TQ2_0,
};
#define NQ ((int) (sizeof qtypes / sizeof qtypes[0]))

enum { NE0 = 512, NE1 = 3, NE2 = 2 };

static void compute(struct ggml_context * ctx, struct ggml_tensor * out, int nth) {
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, out);
    tc_compute(ctx, g, nth);
}

/* source x (type st, transposed when `transposed`: a view of a [NE1*?] tensor);
 * its logical values as floats into v (NE0*NE1*NE2, ne0 fastest) */
static struct ggml_tensor * make_source(struct ggml_context * ctx, enum ggml_type st, bool transposed, float * v) {
    struct ggml_tensor * x;
    if (transposed) {
        struct ggml_tensor * base = ggml_new_tensor_3d(ctx, st, NE1, NE0, NE2);
        tc_fill_uniform(base, -2, 2);
        x = ggml_transpose(ctx, base);   /* [NE0, NE1, NE2], ne0 strided */
    } else {
        x = ggml_new_tensor_3d(ctx, st, NE0, NE1, NE2);
        tc_fill_uniform(x, -2, 2);
    }
    for (int i2 = 0; i2 < NE2; i2++)
        for (int i1 = 0; i1 < NE1; i1++)
            for (int i0 = 0; i0 < NE0; i0++) v[(i2 * NE1 + i1) * NE0 + i0] = ggml_get_f32_nd(x, i0, i1, i2, 0);
    return x;
}

static void test_to_and_from(void) {
    static const enum ggml_type srcs[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16};
    const int n = NE0 * NE1 * NE2;
    float * v = malloc(sizeof(float) * n), * back = malloc(sizeof(float) * n);
    uint8_t * want = malloc((size_t) n * 2), * first = malloc((size_t) n * 2);
    for (int q = 0; q < NQ; q++) {
        const enum ggml_type qt = qtypes[q];
        const struct ggml_type_traits * tt = ggmlr_type_traits_own(qt);
        const char * name = ggml_type_name(qt);
        for (size_t s = 0; s < sizeof srcs / sizeof srcs[0]; s++) {
            for (int tr = 0; tr < 2; tr++) {
                struct ggml_context * ctx = tc_ctx(8);
                struct ggml_tensor * x = make_source(ctx, srcs[s], tr, v);
                struct ggml_tensor * b = ggml_new_tensor_3d(ctx, qt, NE0, NE1, NE2);
                struct ggml_tensor * y = ggml_cpy(ctx, x, b);
                struct ggml_tensor * f = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, NE0, NE1, NE2);
                struct ggml_tensor * z = ggml_cpy(ctx, b, f);
                CHECK(y && z, "%s from %s: cpy built: %s", name, ggml_type_name(srcs[s]), ggml_last_error());
                if (!y || !z) { ggml_free(ctx); continue; }
                tt->from_float_ref(v, want, n);
                const size_t bytes = ggml_nbytes(b);
                bool same_threads = true;
                static const int nths[] = {1, 2, 3, 8};
                for (int k = 0; k < 4; k++) {
                    memset(b->data, 0xee, bytes);
                    compute(ctx, y, nths[k]);
                    if (k == 0) memcpy(first, b->data, bytes);
                    else same_threads &= memcmp(first, b->data, bytes) == 0;
                }
                CHECK(memcmp(b->data, want, bytes) == 0, "%s from %s%s: the reference quantizer's bytes", name,
                      ggml_type_name(srcs[s]), tr ? " (transposed)" : "");
                CHECK(same_threads, "%s from %s: identical on 1/2/3/8 threads", name, ggml_type_name(srcs[s]));
                tc_poison(f);
                compute(ctx, z, 3);
                tt->to_float(b->data, back, n);
                CHECK(memcmp(f->data, back, sizeof(float) * (size_t) n) == 0, "%s -> f32: to_float's values", name);
                double e2 = 0, x2 = 0;
                for (int i = 0; i < n; i++) {
                    const double d = (double) ((float *) f->data)[i] - v[i];
                    e2 += d * d;
                    x2 += (double) v[i] * v[i];
                }
                CHECK(sqrt(e2 / x2) <= tc_quant_rms_bound(qt), "%s from %s: relative RMS error %.4g > %.4g", name,
                      ggml_type_name(srcs[s]), sqrt(e2 / x2), tc_quant_rms_bound(qt));
                ggml_free(ctx);
            }
        }
    }
    free(v); free(back); free(want); free(first);
}

/* Q8_0 -> Q4_K -> BF16: each step the reference conversion of the previous values */
static void test_between_types(void) {
    const int n = NE0 * NE1;
    struct ggml_context * ctx = tc_ctx(8);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, NE0, NE1);
    tc_fill_uniform(x, -1, 1);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, NE0, NE1);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_K, NE0, NE1);
    struct ggml_tensor * c = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, NE0, NE1);
    struct ggml_tensor * out = ggml_cpy(ctx, ggml_cpy(ctx, ggml_cpy(ctx, x, a), b), c);
    compute(ctx, out, 2);
    float * v = malloc(sizeof(float) * n);
    uint8_t * q8 = malloc((size_t) n * 2), * q4 = malloc((size_t) n * 2);
    ggml_get_type_traits(GGML_TYPE_Q8_0)->from_float_ref(x->data, q8, n);
    ggml_get_type_traits(GGML_TYPE_Q8_0)->to_float(q8, v, n);
    ggml_get_type_traits(GGML_TYPE_Q4_K)->from_float_ref(v, q4, n);
    ggml_get_type_traits(GGML_TYPE_Q4_K)->to_float(q4, v, n);
    int bad = 0;
    for (int i = 0; i < n; i++) bad += ((ggml_bf16_t *) c->data)[i].bits != ggml_fp32_to_bf16(v[i]).bits;
    CHECK(memcmp(a->data, q8, ggml_nbytes(a)) == 0 && memcmp(b->data, q4, ggml_nbytes(b)) == 0 && bad == 0,
          "F32 -> Q8_0 -> Q4_K -> BF16 (%d bf16 values wrong)", bad);
    /* dup and cont of a quantized tensor keep its bytes */
    struct ggml_tensor * d = ggml_dup(ctx, b), * e = ggml_cont(ctx, b);
    CHECK(d && e && d->type == GGML_TYPE_Q4_K, "dup/cont of Q4_K: %s", ggml_last_error());
    if (d && e) {
        compute(ctx, d, 2);
        compute(ctx, e, 3);
        CHECK(memcmp(d->data, b->data, ggml_nbytes(b)) == 0 && memcmp(e->data, b->data, ggml_nbytes(b)) == 0, "dup/cont bytes");
    }
    free(v); free(q8); free(q4);
    ggml_free(ctx);
}

static void test_refusals(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 256, 2);
    struct ggml_tensor * q = ggml_new_tensor_1d(ctx, GGML_TYPE_Q4_K, 512);
    CHECK(!ggml_cpy(ctx, x, q) && strstr(ggml_last_error(), "rows of one length"), "cpy to a quantized tensor with rows of another length: %s", ggml_last_error());
    CHECK(!ggml_cpy(ctx, q, x) && strstr(ggml_last_error(), "rows of one length"), "cpy from a quantized tensor with rows of another length");
    ggml_clear_error();
    ggml_set_param(q);
    CHECK(!(q->flags & GGML_TENSOR_FLAG_PARAM) && strstr(ggml_last_error(), "parameter"), "a quantized parameter is refused: %s", ggml_last_error());
    ggml_free(ctx);
}

/* loss = sum(cpy(cpy(x, q), f) * W): upstream's cpy passes the gradient
 * through unchanged (straight-through), so dloss/dx = W */
static void test_straight_through(void) {
    struct ggml_context * ctx = tc_ctx(8);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 2);
    tc_fill_uniform(x, -1, 1);
    ggml_set_param(x);
    struct ggml_tensor * q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 2);
    struct ggml_tensor * f = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 2);
    struct ggml_tensor * y = ggml_cpy(ctx, ggml_cpy(ctx, x, q), f);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 2);
    tc_fill_uniform(w, -1, 1);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, y, w));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 128, true);
    ggml_build_forward_expand(g, loss);
    CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "backward through a quantized copy: %s", ggml_last_error());
    ggml_graph_reset(g);
    tc_compute(ctx, g, 2);
    struct ggml_tensor * gx = ggml_graph_get_grad(g, x);
    int bad = 0;
    for (int i = 0; gx && i < 128; i++) bad += ggml_get_f32_1d(gx, i) != ggml_get_f32_1d(w, i);
    CHECK(gx && bad == 0, "dloss/dx = W through the quantized copy (%d wrong)", bad);
    ggml_free(ctx);
}

/* set_rows into a quantized or BF16 table (a KV cache): rows c = {4, 1} of
 * a [NE0, 6] get the reference quantizer's bytes of b's two F32 rows, the
 * other rows keep theirs; the same bytes on 1 and 3 threads */
static void test_set_rows(void) {
    static const enum ggml_type types[] = {GGML_TYPE_Q8_0, GGML_TYPE_Q4_K, GGML_TYPE_IQ4_NL, GGML_TYPE_BF16};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        const enum ggml_type t = types[k];
        struct ggml_context * ctx = tc_ctx(16);
        struct ggml_tensor * a = ggml_new_tensor_2d(ctx, t, NE0, 6), * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, NE0, 2);
        struct ggml_tensor * c = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
        tc_fill_uniform(b, -2, 2);
        ggml_set_i32_1d(c, 0, 4);
        ggml_set_i32_1d(c, 1, 1);
        const size_t row = ggml_row_size(t, NE0);
        unsigned char * want = malloc(6 * row), * first = malloc(6 * row);
        for (size_t i = 0; i < 6 * row; i++) want[i] = (unsigned char) (i * 7 + 3);  /* any bytes: rows not written keep them */
        ggml_get_type_traits(t)->from_float_ref((const float *) b->data, want + 4 * row, NE0);
        ggml_get_type_traits(t)->from_float_ref((const float *) b->data + NE0, want + 1 * row, NE0);
        struct ggml_tensor * y = ggml_set_rows(ctx, a, b, c);
        if (!CHECK(y != NULL, "set_rows into %s: %s", ggml_type_name(t), ggml_last_error())) { ggml_free(ctx); free(want); free(first); continue; }
        for (int nth = 1; nth <= 3; nth += 2) {
            for (size_t i = 0; i < 6 * row; i++) ((unsigned char *) a->data)[i] = (unsigned char) (i * 7 + 3);
            compute(ctx, y, nth);
            if (nth == 1) memcpy(first, a->data, 6 * row);
            else CHECK(memcmp(first, a->data, 6 * row) == 0, "set_rows into %s: 3 threads differ from 1", ggml_type_name(t));
        }
        CHECK(memcmp(first, want, 6 * row) == 0, "set_rows into %s: rows 4 and 1 quantized, the others untouched", ggml_type_name(t));
        free(want); free(first);
        ggml_free(ctx);
    }
}

int main(void) {
    tc_seed(4);
    test_set_rows();
    test_to_and_from();
    test_between_types();
    test_refusals();
    test_straight_through();
    return tc_finish("quant copy");
}

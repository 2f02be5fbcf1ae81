/* test_flash_attn_errors.c -- bad input to ggml_flash_attn_ext and
 * ggml_flash_attn_back: every shape or type mismatch returns NULL with a
 * message naming the function, never aborts, and leaves nothing sticky. */
#include "common/test_common.h"

#include <string.h>

static struct ggml_context * ctx;

static struct ggml_tensor * t4(enum ggml_type type, int64_t a, int64_t b, int64_t c, int64_t d) {
    return ggml_new_tensor_4d(ctx, type, a, b, c, d);
}

/* The message m names fn, and word when word is not NULL. */
static bool names(const char * m, const char * fn, const char * word) {
    return m && m[0] && strstr(m, fn) && (!word || strstr(m, word));
}

/* r must be NULL with a message that names fn (and `word`, when given). */
#define EXPECT_FAIL(expr, fn, word, what)                                                                                   \
    do {                                                                                                                    \
        ggml_clear_error();                                                                                                 \
        struct ggml_tensor * r_ = (expr);                                                                                   \
        const char * m_ = ggml_last_error();                                                                                \
        CHECK(r_ == NULL, "%s: accepted", what);                                                                            \
        CHECK(names(m_, fn, word), "%s: message \"%s\" should name %s (and %s)", what, m_ ? m_ : "(null)", fn,          \
              (word) ? (const char *) (word) : "-");                                                                        \
    } while (0)

#define EXPECT_OK(expr, what)                                                                      \
    do {                                                                                           \
        struct ggml_tensor * r_ = (expr);                                                          \
        CHECK(r_ != NULL, "%s: refused: %s", what, ggml_last_error());                             \
    } while (0)

int main(void) {
    ctx = tc_ctx(16);
    const enum ggml_type F32 = GGML_TYPE_F32, F16 = GGML_TYPE_F16, I32 = GGML_TYPE_I32, I16 = GGML_TYPE_I16;
    const enum ggml_type BF16 = GGML_TYPE_BF16, Q8_0 = GGML_TYPE_Q8_0, Q4_0 = GGML_TYPE_Q4_0, Q5_1 = GGML_TYPE_Q5_1, IQ4_NL = GGML_TYPE_IQ4_NL;
    const char * fe = "ggml_flash_attn_ext", * fb = "ggml_flash_attn_back";
    /* valid: DK 4, DV 3, N 5, M 6, H 4, Hkv 2, B 2 */
    struct ggml_tensor * q = t4(F32, 4, 5, 4, 2), * k = t4(F32, 4, 6, 2, 2), * v = t4(F32, 3, 6, 2, 2);
    struct ggml_tensor * mask = t4(F16, 6, 8, 1, 1), * d = t4(F32, 3, 4, 5, 2);
    struct ggml_tensor * k16 = t4(F16, 4, 6, 2, 2), * v16 = t4(F16, 3, 6, 2, 2);
    const float s = 0.5f;

    EXPECT_OK(ggml_flash_attn_ext(ctx, q, k, v, mask, s, 0, 0), "valid ext");
    EXPECT_OK(ggml_flash_attn_ext(ctx, q, k16, v16, NULL, s, 0, 0), "valid ext F16 K/V");
    /* K/V of any float or block type, mixed: upstream's constructor takes them all
     * (a block type needs DK and DV multiples of its block: 32 here) */
    struct ggml_tensor * qq = t4(F32, 32, 5, 4, 2), * kq = t4(Q8_0, 32, 6, 2, 2), * vq = t4(Q4_0, 32, 6, 2, 2);
    struct ggml_tensor * dq = t4(F32, 32, 4, 5, 2);
    EXPECT_OK(ggml_flash_attn_ext(ctx, qq, kq, vq, mask, s, 0, 0), "valid ext Q8_0 K, Q4_0 V");
    EXPECT_OK(ggml_flash_attn_ext(ctx, qq, t4(BF16, 32, 6, 2, 2), t4(IQ4_NL, 32, 6, 2, 2), NULL, s, 0, 0), "valid ext BF16 K, IQ4_NL V");
    EXPECT_OK(ggml_flash_attn_ext(ctx, qq, t4(Q5_1, 32, 6, 2, 2), t4(F16, 32, 6, 2, 2), NULL, s, 0, 0), "valid ext Q5_1 K, F16 V");
    EXPECT_OK(ggml_flash_attn_ext(ctx, q, k, v, t4(F32, 6, 5, 2, 2), s, 4.0f, 30.0f), "valid ext F32 mask, ALiBi, softcap");
    EXPECT_OK(ggml_flash_attn_back(ctx, q, k, v, mask, d, s), "valid back");
    EXPECT_OK(ggml_flash_attn_back(ctx, q, k, v, NULL, d, s), "valid back without mask");

    /* ---- ggml_flash_attn_ext ---- */
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, t4(F32, 5, 6, 2, 2), v, NULL, s, 0, 0), fe, "DK", "ext: DK of q vs k");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, t4(F32, 3, 7, 2, 2), NULL, s, 0, 0), fe, "M", "ext: M of k vs v");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, t4(F32, 3, 6, 1, 2), NULL, s, 0, 0), fe, NULL, "ext: Hkv of k vs v");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, t4(F32, 4, 6, 2, 1), t4(F32, 3, 6, 2, 1), NULL, s, 0, 0), fe, NULL, "ext: batch of q vs k, v");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, t4(F32, 4, 5, 3, 2), k, v, NULL, s, 0, 0), fe, "Hkv", "ext: H % Hkv != 0");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, t4(F32, 4, 6, 3, 2), t4(F32, 3, 6, 3, 2), NULL, s, 0, 0), fe, "Hkv", "ext: H = 4, Hkv = 3");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, v, t4(F16, 7, 8, 1, 1), s, 0, 0), fe, "mask", "ext: mask ne0 != M");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, v, t4(F16, 5, 5, 1, 1), s, 0, 0), fe, "mask", "ext: mask ne0 < M");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, v, t4(F16, 6, 4, 1, 1), s, 0, 0), fe, "mask", "ext: mask rows < N");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, v, t4(I32, 6, 8, 1, 1), s, 0, 0), fe, "mask", "ext: I32 mask");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, t4(F16, 4, 5, 4, 2), k, v, NULL, s, 0, 0), fe, "q", "ext: F16 q");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, t4(I32, 4, 5, 4, 2), k, v, NULL, s, 0, 0), fe, "q", "ext: I32 q");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, t4(I32, 4, 6, 2, 2), v, NULL, s, 0, 0), fe, "k", "ext: I32 k");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, t4(I32, 3, 6, 2, 2), NULL, s, 0, 0), fe, "v", "ext: I32 v");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, v, NULL, s, 8.0f, 0), fe, "mask", "ext: max_bias > 0 without a mask");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, v, mask, s, 0, -1.0f), fe, "softcap", "ext: negative softcap");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, v, mask, s, 0, NAN), fe, "softcap", "ext: NaN softcap");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, v, mask, s, 0, INFINITY), fe, "softcap", "ext: infinite softcap");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, v, mask, s, -1.0f, 0), fe, "max_bias", "ext: negative max_bias");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, v, mask, s, NAN, 0), fe, "max_bias", "ext: NaN max_bias");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, v, mask, NAN, 0, 0), fe, "scale", "ext: NaN scale");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, v, mask, INFINITY, 0, 0), fe, "scale", "ext: infinite scale");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, NULL, k, v, mask, s, 0, 0), fe, "NULL", "ext: NULL q");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, NULL, v, mask, s, 0, 0), fe, "NULL", "ext: NULL k");
    EXPECT_FAIL(ggml_flash_attn_ext(ctx, q, k, NULL, mask, s, 0, 0), fe, "NULL", "ext: NULL v");
    EXPECT_FAIL(ggml_flash_attn_ext(NULL, q, k, v, mask, s, 0, 0), fe, "NULL", "ext: NULL context");

    /* ---- ggml_flash_attn_back ---- */
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, v, mask, t4(F32, 3, 5, 4, 2), s), fb, "d", "back: d as [DV, N, H, B]");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, v, mask, t4(F32, 4, 4, 5, 2), s), fb, "d", "back: d ne0 = DK");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, v, mask, t4(F32, 3, 2, 5, 2), s), fb, "d", "back: d ne1 = Hkv");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, v, mask, t4(F32, 3, 4, 5, 1), s), fb, "d", "back: d batch");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, v, mask, t4(F32, 3, 4, 8, 2), s), fb, "d", "back: d with N' rows");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, v, mask, t4(F16, 3, 4, 5, 2), s), fb, "d", "back: F16 d");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, t4(F16, 4, 5, 4, 2), k, v, mask, d, s), fb, "q", "back: F16 q");
    EXPECT_OK(ggml_flash_attn_back(ctx, q, k16, v, mask, d, s), "back: F16 k (read converted)");
    EXPECT_OK(ggml_flash_attn_back(ctx, q, k, v16, mask, d, s), "back: F16 v (read converted)");
    EXPECT_OK(ggml_flash_attn_back(ctx, qq, kq, vq, mask, dq, s), "back: Q8_0 k and v (read converted)");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, t4(I32, 4, 6, 2, 2), v, NULL, d, s), fb, "k", "back: I32 k");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, t4(I16, 3, 6, 2, 2), NULL, d, s), fb, "v", "back: I16 v");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, t4(F32, 5, 6, 2, 2), v, NULL, d, s), fb, "DK", "back: DK of q vs k");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, t4(F32, 3, 7, 2, 2), NULL, d, s), fb, "M", "back: M of k vs v");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, t4(F32, 4, 5, 3, 2), k, v, NULL, t4(F32, 3, 3, 5, 2), s), fb, "Hkv", "back: H % Hkv != 0");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, v, t4(F16, 7, 8, 1, 1), d, s), fb, "mask", "back: mask ne0 != M");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, v, t4(F16, 6, 4, 1, 1), d, s), fb, "mask", "back: mask rows < N");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, v, t4(I32, 6, 8, 1, 1), d, s), fb, "mask", "back: I32 mask");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, v, mask, d, NAN), fb, "scale", "back: NaN scale");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, NULL, k, v, mask, d, s), fb, "NULL", "back: NULL q");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, NULL, v, mask, d, s), fb, "NULL", "back: NULL k");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, NULL, mask, d, s), fb, "NULL", "back: NULL v");
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, v, mask, NULL, s), fb, "NULL", "back: NULL d");
    EXPECT_FAIL(ggml_flash_attn_back(NULL, q, k, v, mask, d, s), fb, "NULL", "back: NULL context");

    /* a failure propagates through a chain as NULL, keeping the first message visible */
    ggml_clear_error();
    struct ggml_tensor * bad = ggml_flash_attn_ext(ctx, q, t4(F32, 5, 6, 2, 2), v, NULL, s, 0, 0);
    struct ggml_tensor * chained = ggml_sum(ctx, bad);
    CHECK(bad == NULL && chained == NULL, "chain: NULL propagates");
    CHECK(strstr(ggml_last_error(), "ggml_flash_attn_ext") != NULL, "chain: the first failure is still named: \"%s\"", ggml_last_error());
    EXPECT_FAIL(ggml_flash_attn_back(ctx, q, k, v, NULL, ggml_flash_attn_ext(ctx, NULL, k, v, NULL, s, 0, 0), s), fb, "NULL", "back: d from a failed call");

    /* nothing sticky: valid calls work after all the failures, and compute */
    tc_fill_uniform(q, -1, 1);
    tc_fill_uniform(k, -1, 1);
    tc_fill_uniform(v, -1, 1);
    tc_fill_uniform(d, -1, 1);
    ggml_set_f32(mask, 0.0f);
    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, mask, s, 0, 0);
    struct ggml_tensor * fab = ggml_flash_attn_back(ctx, q, k, v, mask, d, s);
    if (CHECK(out && fab, "valid calls after failures: %s", ggml_last_error())) {
        struct ggml_cgraph * g = ggml_new_graph(ctx);
        ggml_build_forward_expand(g, out);
        ggml_build_forward_expand(g, fab);
        CHECK(ggml_graph_compute_with_ctx(ctx, g, 2) == GGML_STATUS_SUCCESS, "compute after failures: %s", ggml_last_error());
        int bad_vals = 0;
        for (int64_t i = 0; i < ggml_nelements(out); i++) bad_vals += !isfinite(ggml_get_f32_1d(out, i));
        for (int64_t i = 0; i < ggml_nelements(fab); i++) bad_vals += !isfinite(ggml_get_f32_1d(fab, i));
        CHECK(bad_vals == 0, "compute after failures: %d non-finite values", bad_vals);
    }
    ggml_free(ctx);
    return tc_finish("flash_attn_errors");
}

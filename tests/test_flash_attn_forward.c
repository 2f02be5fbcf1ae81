/* test_flash_attn_forward.c -- ggml_flash_attn_ext against the float64
 * reference (tests/common/attn_ref.c): many random shapes, every mask form
 * (causal, random -Inf, fully masked rows, F16/F32, extra rows, broadcast
 * planes), GQA, batches, F16 K/V, non-contiguous inputs, ALiBi, softcap,
 * saturated softmax, a large case, and bitwise equality across thread counts;
 * one and two query rows over long caches (the untiled decode path);
 * attention sinks (ggml_flash_attn_ext_add_sinks) on the same cases, and their
 * refusals. */
#include "common/attn_ref.h"

#include <stdlib.h>
#include <string.h>

#define FWD_TOL 1e-5

static double max_err_seen = 0;  /* reported at the end: the margin under FWD_TOL */

/* The forward node of case c, with its sinks if it has them. */
static struct ggml_tensor * attn_forward(struct ggml_context * ctx, const attn_case * c, const attn_inputs * in) {
    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, in->q, in->k, in->v, in->mask, c->scale, c->max_bias, c->softcap);
    if (out && in->sinks) {
        ggml_clear_error();
        ggml_flash_attn_ext_add_sinks(out, in->sinks);
        CHECK(ggml_last_error()[0] == '\0', "add_sinks refused valid sinks: %s [%s]", ggml_last_error(), attn_case_str(c));
    }
    return out;
}

/* Runs the forward of case c with n threads; returns the relative error against
 * the reference (and checks finiteness and exact zeros on fully masked rows). */
static double check_forward(const char * what, const attn_case * c, int n_threads) {
    struct ggml_context * ctx = tc_ctx(32);
    attn_inputs in;
    attn_inputs_make(ctx, c, &in);
    struct ggml_tensor * out = attn_forward(ctx, c, &in);
    double err = INFINITY;
    if (!CHECK(out != NULL, "%s: flash_attn_ext refused a valid case: %s [%s]", what, ggml_last_error(), attn_case_str(c))) goto done;
    const attn_dims * a = &in.p.a;
    CHECK(out->type == GGML_TYPE_F32 && out->ne[0] == a->DV && out->ne[1] == a->H && out->ne[2] == a->N && out->ne[3] == a->B,
          "%s: output shape [%lld,%lld,%lld,%lld], want [DV,H,N,B] [%s]", what, (long long) out->ne[0], (long long) out->ne[1],
          (long long) out->ne[2], (long long) out->ne[3], attn_case_str(c));
    tc_poison(out);
    if (!attn_compute(ctx, out, n_threads)) goto done;

    const int64_t n = attn_nout(a);
    double * ref = malloc((size_t) n * sizeof *ref);
    attn_ref_forward(&in.p, ref);
    err = tc_rel_err_tensor(out, ref);
    if (err > max_err_seen) max_err_seen = err;
    CHECK(err < FWD_TOL, "%s: forward relative error %.3g >= %g [%s]", what, err, FWD_TOL, attn_case_str(c));

    /* every element finite; rows whose scores are all -Inf are exactly zero */
    double * pr = malloc((size_t) a->M * sizeof *pr);
    int nonfinite = 0, bad_zero = 0;
    for (int64_t b = 0; b < a->B; b++)
        for (int64_t nn = 0; nn < a->N; nn++)
            for (int64_t h = 0; h < a->H; h++) {
                const bool live = attn_ref_probs(&in.p, nn, h, b, pr);
                const int64_t base = a->DV * (h + a->H * (nn + a->N * b));
                for (int64_t i = 0; i < a->DV; i++) {
                    const float x = ((const float *) out->data)[base + i];
                    if (!isfinite(x)) nonfinite++;
                    if (!live && x != 0.0f) bad_zero++;
                }
            }
    CHECK(nonfinite == 0, "%s: %d non-finite outputs [%s]", what, nonfinite, attn_case_str(c));
    CHECK(bad_zero == 0, "%s: %d outputs of fully masked rows are not 0 [%s]", what, bad_zero, attn_case_str(c));
    free(pr);
    free(ref);
done:
    attn_inputs_free(&in);
    ggml_free(ctx);
    return err;
}

/* The reference itself, on values worked out by hand. */
static void test_reference_by_hand(void) {
    /* upstream ALiBi slopes: H = 8, max_bias = 8 -> 2^-1 .. 2^-8 */
    for (int h = 0; h < 8; h++)
        CHECK(fabs(attn_alibi_slope(8.0, h, 8) - pow(2.0, -(h + 1))) < 1e-15, "alibi slope H=8 h=%d", h);
    /* H = 6: n_head_log2 = 4, m0 = 2^-2, m1 = 2^-1: 1/4, 1/16, 1/64, 1/256, then m1^1, m1^3 */
    const double want6[6] = {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};
    for (int h = 0; h < 6; h++) CHECK(fabs(attn_alibi_slope(8.0, h, 6) - want6[h]) < 1e-15, "alibi slope H=6 h=%d", h);
    CHECK(attn_alibi_slope(0.0, 3, 6) == 1.0, "no ALiBi: slope 1");
    CHECK(attn_pad(1) == 4 && attn_pad(4) == 4 && attn_pad(5) == 8 && attn_pad(0) == 0 && attn_pad(30) == 32, "pad()");

    /* DK = 1, M = 2: scores 0 and ln 3 -> p = (1/4, 3/4); v = (1, 5) -> 4 */
    double q[1] = {1.0}, k[2] = {0.0, log(3.0)}, v[2] = {1.0, 5.0}, out[1];
    attn_problem p = {{1, 1, 1, 2, 1, 1, 1}, q, k, v, NULL, {0}, 1.0, 0.0, 0.0, NULL};
    attn_ref_forward(&p, out);
    CHECK(fabs(out[0] - 4.0) < 1e-14, "reference by hand: %.17g != 4", out[0]);
    /* a mask of (-Inf, 0) leaves only key 1 */
    double mask[2] = {-INFINITY, 0.0};
    p.mask = mask;
    p.mne[0] = 2; p.mne[1] = 1; p.mne[2] = 1; p.mne[3] = 1;
    attn_ref_forward(&p, out);
    CHECK(fabs(out[0] - 5.0) < 1e-14, "reference with mask: %.17g != 5", out[0]);
    /* softcap c: score c*tanh(ln3/c) */
    p.mask = NULL;
    p.softcap = 0.5;
    attn_ref_forward(&p, out);
    const double s1 = 0.5 * tanh(log(3.0) / 0.5), p1 = exp(s1) / (1 + exp(s1));
    CHECK(fabs(out[0] - (1 + 4 * p1)) < 1e-14, "reference with softcap");
}

/* The named cases of attn_ref.c, all of them. */
static void test_named_cases(void) {
    attn_named_case cases[64];
    const int n = attn_named_cases(cases, 64);
    tc_seed(101);
    for (int i = 0; i < n; i++) check_forward(cases[i].what, &cases[i].c, 2);
}

/* Many random shapes and options. */
static void test_random_cases(void) {
    tc_seed(202);
    char what[64];
    for (int i = 0; i < 150; i++) {
        const attn_case c = attn_random_case(true);
        snprintf(what, sizeof what, "random case %d", i);
        check_forward(what, &c, 1 + i % 3);
    }
}

/* All scores -Inf: zeros, never NaN, with either mask type and with ALiBi. */
static void test_all_masked(void) {
    const enum ggml_type types[2] = {GGML_TYPE_F16, GGML_TYPE_F32};
    for (int t = 0; t < 2; t++) {
        struct ggml_context * ctx = tc_ctx(4);
        struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 2, 1);
        struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 5, 1, 1);
        struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 5, 1, 1);
        struct ggml_tensor * m = ggml_new_tensor_2d(ctx, types[t], 5, 3);
        tc_fill_uniform(q, -1, 1);
        tc_fill_uniform(k, -1, 1);
        tc_fill_uniform(v, -1, 1);
        ggml_set_f32(m, -INFINITY);
        for (int alibi = 0; alibi < 2; alibi++) {
            struct ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, m, 0.5f, alibi ? 8.0f : 0.0f, 0.0f);
            if (!CHECK(out != NULL, "all masked: %s", ggml_last_error())) continue;
            tc_poison(out);
            attn_compute(ctx, out, 2);
            int bad = 0;
            for (int64_t i = 0; i < ggml_nelements(out); i++) bad += ggml_get_f32_1d(out, i) != 0.0f;
            CHECK(bad == 0, "all masked (%s mask, alibi %d): %d outputs are not 0", ggml_type_name(types[t]), alibi, bad);
        }
        ggml_free(ctx);
    }
}

/* Case c with 1, 2, 3 and 8 threads: bitwise identical, and within FWD_TOL of the reference. */
static void check_threads(const char * what, const attn_case * c) {
    struct ggml_context * ctx = tc_ctx(16);
    attn_inputs in;
    attn_inputs_make(ctx, c, &in);
    struct ggml_tensor * out = attn_forward(ctx, c, &in);
    if (!CHECK(out != NULL, "%s: flash_attn_ext refused a valid case: %s", what, ggml_last_error())) goto done;
    const size_t nb = ggml_nbytes(out);
    float * first = malloc(nb);
    const int threads[4] = {1, 2, 3, 8};
    for (int t = 0; t < 4; t++) {
        tc_poison(out);
        attn_compute(ctx, out, threads[t]);
        if (t == 0) memcpy(first, out->data, nb);
        else CHECK(memcmp(first, out->data, nb) == 0, "%s: %d threads differ from 1 thread [%s]", what, threads[t], attn_case_str(c));
    }
    const int64_t n = attn_nout(&in.p.a);
    double * ref = malloc((size_t) n * sizeof *ref);
    attn_ref_forward(&in.p, ref);
    const double err = tc_rel_err_f32(first, ref, n);
    if (err > max_err_seen) max_err_seen = err;
    CHECK(err < FWD_TOL, "%s: relative error %.3g >= %g [%s]", what, err, FWD_TOL, attn_case_str(c));
    free(ref);
    free(first);
done:
    attn_inputs_free(&in);
    ggml_free(ctx);
}

/* The same forward with 1, 2, 3 and 8 threads: bitwise identical. */
static void test_threads(void) {
    tc_seed(303);
    attn_case c = attn_base_case(17, 9, 11, 23, 6, 2, 2);
    c.mask = AM_VALUES | AM_RANDINF | AM_FULLROW;
    c.mh = 3;
    c.mN = 12;
    char what[32];
    for (int variant = 0; variant < 6; variant++) {
        if (variant == 1) { c.kv_type = GGML_TYPE_F16; c.softcap = 10.0f; c.max_bias = 4.0f; c.layout = AL_PERMUTED; }
        if (variant == 2) {  /* several query blocks and key tiles */
            c = attn_base_case(24, 20, 61, 333, 2, 1, 2);
            c.mask = AM_VALUES | AM_TOPROWS | AM_KEYSPAN | AM_RANDINF;
            c.mh = 2;
        }
        if (variant == 3) {  /* rows read in place, 128-key tiles, a last partial one */
            c = attn_base_case(32, 64, 45, 300, 2, 1, 1);
            c.mask = AM_VALUES | AM_RANDINF;
        }
        if (variant == 4) {  /* N >= 256: 48-row query blocks, a last partial one */
            c = attn_base_case(32, 32, 290, 300, 2, 1, 1);
            c.mask = AM_CAUSAL | AM_RANDINF;
        }
        if (variant == 5) {  /* sinks, several query blocks and key tiles */
            c = attn_base_case(24, 20, 61, 333, 4, 2, 2);
            c.mask = AM_VALUES | AM_FULLROW | AM_KEYSPAN | AM_RANDINF;
            c.sinks = AS_MIXED;
        }
        snprintf(what, sizeof what, "forward variant %d", variant);
        check_threads(what, &c);
    }
}

/* One or two query rows (generation from a KV cache; the kernel's untiled
 * path, flash_attn_decode.c): long caches read in blocks of 64 values, more
 * query heads per kv head than one task takes (8), keys hidden in whole
 * blocks and at the end, F16 and strided K/V, ALiBi, softcap, sinks, fully
 * masked rows; each with 1, 2, 3 and 8 threads against the reference. */
static void test_decode(void) {
    tc_seed(505);
    attn_case c[5];
    c[0] = attn_base_case(64, 64, 1, 1000, 16, 1, 1);  /* 16 heads on one kv head: two tasks of 8 */
    c[0].mask = AM_VALUES | AM_KEYSPAN | AM_RANDINF;
    c[1] = attn_base_case(40, 24, 2, 333, 8, 2, 2);
    c[1].mask = AM_VALUES | AM_RANDINF;
    c[1].mh = 2;
    c[1].kv_type = GGML_TYPE_F16;
    c[1].softcap = 10.0f;
    c[1].max_bias = 4.0f;
    c[1].layout = AL_PERMUTED;
    c[2] = attn_base_case(64, 64, 1, 200, 8, 4, 1);  /* causal: key 0 alone is live, the rest skipped */
    c[2].mask = AM_CAUSAL;
    c[2].sinks = AS_MIXED;
    c[3] = attn_base_case(16, 20, 2, 130, 6, 3, 1);  /* row 0 fully masked, a dominant sink */
    c[3].mask = AM_FULLROW | AM_VALUES;
    c[3].mask_type = GGML_TYPE_F32;
    c[3].sinks = AS_DOMINANT;
    c[3].layout = AL_TRANSPOSED;
    c[4] = attn_base_case(64, 64, 1, 700, 8, 4, 1);  /* no mask */
    char what[32];
    for (int i = 0; i < 5; i++) {
        snprintf(what, sizeof what, "decode case %d", i);
        check_threads(what, &c[i]);
    }
}

/* Attention sinks: the named cases and random ones with sinks of every kind
 * (in the reference: e^(sink - max) in each row's denominator), a sink
 * dominating every head (the outputs shrink by ~e^-10: the rescale past the
 * margin), fully masked rows (still 0), and removing them again (NULL). */
static void test_sinks(void) {
    attn_named_case cases[64];
    const int n = attn_named_cases(cases, 64);
    tc_seed(404);
    char what[96];
    for (int i = 0; i < n; i++) {
        attn_case c = cases[i].c;
        c.sinks = i % 3 == 2 ? AS_DOMINANT : AS_MIXED;
        snprintf(what, sizeof what, "sinks, %s", cases[i].what);
        check_forward(what, &c, 1 + i % 3);
    }
    for (int i = 0; i < 60; i++) {
        attn_case c = attn_random_case(true);
        c.sinks = i % 4 == 3 ? AS_DOMINANT : AS_MIXED;
        snprintf(what, sizeof what, "sinks, random case %d", i);
        check_forward(what, &c, 1 + i % 3);
    }
    /* sinks set, then removed: the plain attention */
    attn_case c = attn_base_case(8, 5, 7, 9, 4, 2, 1);
    c.mask = AM_VALUES | AM_FULLROW;
    c.sinks = AS_MIXED;
    struct ggml_context * ctx = tc_ctx(8);
    attn_inputs in;
    attn_inputs_make(ctx, &c, &in);
    struct ggml_tensor * out = attn_forward(ctx, &c, &in);
    ggml_flash_attn_ext_add_sinks(out, NULL);
    free(in.p.sinks);
    in.p.sinks = NULL;
    tc_poison(out);
    if (attn_compute(ctx, out, 2)) {
        double * ref = malloc((size_t) attn_nout(&in.p.a) * sizeof *ref);
        attn_ref_forward(&in.p, ref);
        CHECK_REL(tc_rel_err_tensor(out, ref), FWD_TOL, "sinks removed by add_sinks(NULL)");
        free(ref);
    }
    attn_inputs_free(&in);
    ggml_free(ctx);
}

/* add_sinks leaves a bad call's node as it was, with a message. */
static void test_sinks_refused(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 4, 1);
    struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 5, 2, 1);
    struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 5, 2, 1);
    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, NULL, 0.5f, 0.0f, 0.0f);
    struct ggml_tensor * good = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * bad[5] = {ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2), ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5),
                                   ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2), ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 4),
                                   ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4)};
    static const char * const why[5] = {"Hkv sinks", "H + 1 sinks", "2-D sinks", "F16 sinks", "I32 sinks"};
    ggml_flash_attn_ext_add_sinks(out, good);
    for (int i = 0; i < 5; i++) {
        ggml_clear_error();
        ggml_flash_attn_ext_add_sinks(out, bad[i]);
        CHECK(ggml_last_error()[0] != '\0', "add_sinks with %s: no message", why[i]);
        CHECK(out->src[4] == good, "add_sinks with %s changed the node", why[i]);
    }
    ggml_clear_error();
    ggml_flash_attn_ext_add_sinks(NULL, good);
    CHECK(ggml_last_error()[0] != '\0', "add_sinks on NULL: no message");
    ggml_clear_error();
    ggml_flash_attn_ext_add_sinks(q, good);
    CHECK(ggml_last_error()[0] != '\0' && q->src[4] == NULL, "add_sinks on a tensor that is not flash_attn_ext: no message, or changed");
    ggml_clear_error();
    ggml_free(ctx);
}

int main(void) {
    if (tc_part("by_hand")) test_reference_by_hand();
    if (tc_part("named")) test_named_cases();
    if (tc_part("random")) test_random_cases();
    if (tc_part("all_masked")) test_all_masked();
    if (tc_part("threads")) test_threads();
    if (tc_part("decode")) test_decode();
    if (tc_part("sinks")) test_sinks();
    if (tc_part("sinks_refused")) test_sinks_refused();
    printf("SIMD path %s; largest forward relative error %.3g (tolerance %g)\n", ggml_cpu_simd_name(), max_err_seen, FWD_TOL);
    return tc_finish("flash_attn_forward");
}

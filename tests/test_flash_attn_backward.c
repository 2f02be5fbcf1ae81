/* test_flash_attn_backward.c -- ggml_flash_attn_back called directly:
 * all three gradients against the analytic float64 reference and against
 * central differences of the float64 forward, on many shapes (masks, GQA,
 * batches, non-contiguous inputs, saturated softmax, large), the packed
 * [dq | dk | dv] layout (offsets, zero padding, nothing left unwritten), fully
 * masked rows, and bitwise equality across thread counts. */
#include "common/attn_ref.h"

#include <stdlib.h>
#include <string.h>

#define BWD_TOL 1e-5

static double max_err_seen[3];  /* reported at the end: the margins under BWD_TOL */

struct bwd_result {
    double err[3];   /* relative errors of dq, dk, dv */
    float * packed;  /* copy of the packed output (caller frees) */
    int64_t len;
};

static const char * const gname[3] = {"dq", "dk", "dv"};

/* Runs flash_attn_back for case c with n threads and checks it against the
 * reference; the packed output is poisoned with NaN first. */
static struct bwd_result check_backward(const char * what, const attn_case * c, int n_threads) {
    struct bwd_result r = {{INFINITY, INFINITY, INFINITY}, NULL, 0};
    struct ggml_context * ctx = tc_ctx(48);
    attn_inputs in;
    attn_inputs_make(ctx, c, &in);
    const attn_dims * a = &in.p.a;
    struct ggml_tensor * fab = ggml_flash_attn_back(ctx, in.q, in.k, in.v, in.mask, in.d_t, c->scale);
    if (!CHECK(fab != NULL, "%s: flash_attn_back refused a valid case: %s [%s]", what, ggml_last_error(), attn_case_str(c))) goto done;

    const int64_t nq = attn_nq(a), nk = attn_nk(a), nv = attn_nv(a);
    const int64_t off[3] = {0, attn_pad(nq), attn_pad(nq) + attn_pad(nk)};
    const int64_t cnt[3] = {nq, nk, nv};
    const int64_t len = attn_pad(nq) + attn_pad(nk) + attn_pad(nv);
    if (!CHECK(fab->type == GGML_TYPE_F32 && fab->ne[0] == len && fab->ne[1] == 1 && fab->ne[2] == 1 && fab->ne[3] == 1,
               "%s: packed result is %s [%lld,%lld,%lld,%lld], want F32 [%lld] [%s]", what, ggml_type_name(fab->type),
               (long long) fab->ne[0], (long long) fab->ne[1], (long long) fab->ne[2], (long long) fab->ne[3], (long long) len,
               attn_case_str(c)))
        goto done;
    CHECK((uintptr_t) fab->data % 16 == 0, "%s: the packed result is not 16-byte aligned", what);
    tc_poison(fab);
    if (!attn_compute(ctx, fab, n_threads)) goto done;
    const float * out = fab->data;

    double * ref[3];
    for (int s = 0; s < 3; s++) ref[s] = malloc((size_t) (cnt[s] > 0 ? cnt[s] : 1) * sizeof(double));
    attn_ref_backward(&in.p, in.d, ref[0], ref[1], ref[2]);
    for (int s = 0; s < 3; s++) {
        r.err[s] = tc_rel_err_f32(out + off[s], ref[s], cnt[s]);
        if (r.err[s] > max_err_seen[s]) max_err_seen[s] = r.err[s];
        CHECK(r.err[s] < BWD_TOL, "%s: %s relative error %.3g >= %g [%s]", what, gname[s], r.err[s], BWD_TOL, attn_case_str(c));
    }
    /* nothing NaN or infinite anywhere (padding included); padding exactly zero */
    int nonfinite = 0, pad_nonzero = 0;
    for (int64_t i = 0; i < len; i++) nonfinite += !isfinite(out[i]);
    for (int s = 0; s < 3; s++)
        for (int64_t i = off[s] + cnt[s]; i < off[s] + attn_pad(cnt[s]); i++) pad_nonzero += out[i] != 0.0f;
    CHECK(nonfinite == 0, "%s: %d non-finite values in the packed gradients [%s]", what, nonfinite, attn_case_str(c));
    CHECK(pad_nonzero == 0, "%s: %d padding values are not 0 [%s]", what, pad_nonzero, attn_case_str(c));

    /* exact zeros: the dq row of a fully masked query; dk/dv rows of a key no query sees */
    if (in.p.mask) {
        double * pr = malloc((size_t) a->M * sizeof *pr);
        char * seen = calloc((size_t) (a->M * a->Hkv * a->B), 1);
        int bad_q = 0, bad_kv = 0;
        for (int64_t b = 0; b < a->B; b++)
            for (int64_t h = 0; h < a->H; h++)
                for (int64_t n = 0; n < a->N; n++) {
                    const int64_t hk = h / (a->H / a->Hkv);
                    if (!attn_ref_probs(&in.p, n, h, b, pr)) {
                        for (int64_t i = 0; i < a->DK; i++) bad_q += out[a->DK * (n + a->N * (h + a->H * b)) + i] != 0.0f;
                        continue;
                    }
                    for (int64_t m = 0; m < a->M; m++) {
                        const int64_t mh = h % in.p.mne[2], mb = b % in.p.mne[3];
                        if (in.p.mask[m + a->M * (n + in.p.mne[1] * (mh + in.p.mne[2] * mb))] != -INFINITY) seen[m + a->M * (hk + a->Hkv * b)] = 1;
                    }
                }
        for (int64_t t = 0; t < a->M * a->Hkv * a->B; t++) {
            if (seen[t]) continue;
            for (int64_t i = 0; i < a->DK; i++) bad_kv += out[off[1] + a->DK * t + i] != 0.0f;
            for (int64_t i = 0; i < a->DV; i++) bad_kv += out[off[2] + a->DV * t + i] != 0.0f;
        }
        CHECK(bad_q == 0, "%s: %d dq values of fully masked query rows are not 0 [%s]", what, bad_q, attn_case_str(c));
        CHECK(bad_kv == 0, "%s: %d dk/dv values of keys no query attends to are not 0 [%s]", what, bad_kv, attn_case_str(c));
        free(pr);
        free(seen);
    }
    r.packed = malloc((size_t) len * sizeof(float));
    memcpy(r.packed, out, (size_t) len * sizeof(float));
    r.len = len;
    for (int s = 0; s < 3; s++) free(ref[s]);
done:
    attn_inputs_free(&in);
    ggml_free(ctx);
    return r;
}

static void run_case(const char * what, const attn_case * c, int n_threads) {
    struct bwd_result r = check_backward(what, c, n_threads);
    free(r.packed);
}

/* The named cases of attn_ref.c that have a backward. */
static void test_named_cases(void) {
    attn_named_case cases[64];
    const int n = attn_named_cases(cases, 64);
    tc_seed(111);
    for (int i = 0; i < n; i++)
        if (!cases[i].fwd_only) run_case(cases[i].what, &cases[i].c, 2);
}

static void test_random_cases(void) {
    tc_seed(222);
    char what[64];
    for (int i = 0; i < 150; i++) {
        const attn_case c = attn_random_case(false);
        snprintf(what, sizeof what, "random case %d", i);
        run_case(what, &c, 1 + i % 3);
    }
}

/* The analytic float64 reference against central differences of the float64
 * forward (so the reference itself is checked), and the kernel against the same
 * central differences. */
static void test_finite_differences(void) {
    attn_case cases[6];
    int n = 0;
    cases[n++] = attn_base_case(4, 4, 3, 5, 1, 1, 1);
    attn_case c = attn_base_case(3, 5, 2, 4, 4, 2, 2); c.mask = AM_VALUES | AM_CAUSAL; cases[n++] = c;
    c = attn_base_case(5, 3, 3, 4, 3, 1, 1); c.mask = AM_RANDINF | AM_FULLROW; c.mask_type = GGML_TYPE_F32; c.mN = 5; cases[n++] = c;
    c = attn_base_case(2, 3, 4, 3, 6, 3, 1); c.mask = AM_VALUES; c.mh = 3; c.layout = AL_PERMUTED; cases[n++] = c;
    c = attn_base_case(3, 2, 2, 5, 2, 2, 2); c.mask = AM_VALUES; c.mb = 2; c.layout = AL_TRANSPOSED; c.lo = -2; c.hi = 2; cases[n++] = c;
    c = attn_base_case(4, 3, 3, 6, 2, 1, 1); c.scale = 1.0f; c.lo = -3; c.hi = 3; c.pair_keys = true; cases[n++] = c;

    tc_seed(333);
    for (int ci = 0; ci < n; ci++) {
        struct ggml_context * ctx = tc_ctx(8);
        attn_inputs in;
        attn_inputs_make(ctx, &cases[ci], &in);
        const attn_dims * a = &in.p.a;
        const int64_t cnt[3] = {attn_nq(a), attn_nk(a), attn_nv(a)};
        const int64_t off[3] = {0, attn_pad(cnt[0]), attn_pad(cnt[0]) + attn_pad(cnt[1])};
        double * ref[3], * num[3];
        for (int s = 0; s < 3; s++) {
            ref[s] = malloc((size_t) cnt[s] * sizeof(double));
            num[s] = malloc((size_t) cnt[s] * sizeof(double));
        }
        attn_ref_backward(&in.p, in.d, ref[0], ref[1], ref[2]);
        for (int s = 0; s < 3; s++) {
            attn_ref_numgrad(&in.p, in.d, s, 1e-5, num[s]);
            double num_f = 0, den = 0;
            for (int64_t i = 0; i < cnt[s]; i++) { num_f += (ref[s][i] - num[s][i]) * (ref[s][i] - num[s][i]); den += num[s][i] * num[s][i]; }
            CHECK(den > 0 && sqrt(num_f / den) < 1e-7, "fd case %d: reference %s vs finite differences %.3g [%s]", ci, gname[s],
                  den > 0 ? sqrt(num_f / den) : INFINITY, attn_case_str(&cases[ci]));
        }
        struct ggml_tensor * fab = ggml_flash_attn_back(ctx, in.q, in.k, in.v, in.mask, in.d_t, cases[ci].scale);
        if (CHECK(fab != NULL, "fd case %d: %s", ci, ggml_last_error()) && attn_compute(ctx, fab, 2)) {
            for (int s = 0; s < 3; s++) {
                const double e = tc_rel_err_f32((const float *) fab->data + off[s], num[s], cnt[s]);
                CHECK(e < BWD_TOL, "fd case %d: kernel %s vs central differences of the float64 forward: %.3g [%s]", ci, gname[s], e,
                      attn_case_str(&cases[ci]));
            }
        }
        for (int s = 0; s < 3; s++) { free(ref[s]); free(num[s]); }
        attn_inputs_free(&in);
        ggml_free(ctx);
    }
}

/* The packed layout, on sizes that are not multiples of 4. */
static void test_packing(void) {
    struct { int64_t DK, DV, N, M, H, Hkv, B; } shapes[] = {
        {3, 5, 2, 4, 4, 2, 2},   /* the seed's: nq = 48, nk = 48, nv = 80 */
        {3, 5, 1, 3, 1, 1, 1},   /* nq = 3, nk = 9, nv = 15 */
        {3, 5, 3, 3, 1, 1, 1},   /* nq = 9, nk = 9, nv = 15 */
        {1, 2, 2, 3, 1, 1, 1},   /* 2, 3, 6 */
        {5, 3, 3, 7, 3, 1, 1},   /* 45, 35, 21 */
        {7, 2, 3, 5, 2, 2, 1},   /* 42, 70, 20 */
        {2, 3, 2, 3, 2, 1, 1},   /* 8, 6, 9: one slice aligned, the next not */
    };
    tc_seed(444);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        attn_case c = attn_base_case(shapes[i].DK, shapes[i].DV, shapes[i].N, shapes[i].M, shapes[i].H, shapes[i].Hkv, shapes[i].B);
        if (i % 2) c.mask = AM_VALUES;
        char what[64];
        snprintf(what, sizeof what, "packing %zu", i);
        struct bwd_result r = check_backward(what, &c, 2);  /* offsets, padding, NaN poison, values */
        if (r.packed) {
            const attn_dims a = {c.DK, c.DV, c.N, c.M, c.H, c.Hkv, c.B};
            const int64_t cnt[3] = {attn_nq(&a), attn_nk(&a), attn_nv(&a)};
            const int64_t off[3] = {0, attn_pad(cnt[0]), attn_pad(cnt[0]) + attn_pad(cnt[1])};
            CHECK(off[1] % 4 == 0 && off[2] % 4 == 0 && r.len % 4 == 0, "%s: slices start on 16-byte boundaries", what);
            CHECK(cnt[0] <= off[1] && off[1] + cnt[1] <= off[2] && off[2] + cnt[2] <= r.len, "%s: slices are disjoint and in bounds", what);
            for (int s = 0; s < 3; s++) {
                double mx = 0;
                for (int64_t j = 0; j < cnt[s]; j++) mx = fmax(mx, fabs(r.packed[off[s] + j]));
                CHECK(mx > 0, "%s: slice %s is all zero", what, gname[s]);
            }
        }
        free(r.packed);
    }
}

/* 1, 2, 3 and 8 threads: bitwise identical packed gradients. */
static void test_threads(void) {
    attn_case cs[7];
    cs[0] = attn_base_case(17, 9, 11, 23, 6, 2, 2);
    cs[0].mask = AM_VALUES | AM_RANDINF | AM_FULLROW; cs[0].mh = 3; cs[0].mN = 12;
    cs[1] = attn_base_case(5, 7, 9, 13, 4, 4, 3);  /* 12 (kv head, batch) pairs: more than 8 threads */
    cs[1].mask = AM_CAUSAL; cs[1].layout = AL_PERMUTED;
    cs[2] = attn_base_case(3, 5, 7, 6, 3, 1, 1);   /* 1 pair: most threads idle */
    cs[3] = attn_base_case(24, 20, 61, 333, 2, 1, 1);  /* several query blocks, key tiles and key chunks */
    cs[3].mask = AM_VALUES | AM_TOPROWS | AM_KEYSPAN | AM_RANDINF; cs[3].mh = 2;
    cs[4] = attn_base_case(32, 64, 45, 300, 2, 1, 1);  /* q, k, v rows read in place (dO copied: H rows apart), 128-key tiles */
    cs[4].mask = AM_CAUSAL;
    cs[5] = attn_base_case(32, 32, 290, 300, 2, 1, 1);  /* N >= 256: 48-row query blocks, a last partial one */
    cs[5].mask = AM_CAUSAL | AM_RANDINF;
    cs[6] = attn_base_case(32, 64, 45, 300, 1, 1, 1);  /* one head: dO's rows adjacent, read in place too */
    cs[6].mask = AM_CAUSAL;
    const int threads[4] = {1, 2, 3, 8};
    for (int ci = 0; ci < 7; ci++) {
        float * first = NULL;
        int64_t len = 0;
        for (int t = 0; t < 4; t++) {
            tc_seed(555);  /* the same inputs each time */
            char what[64];
            snprintf(what, sizeof what, "threads case %d, %d threads", ci, threads[t]);
            struct bwd_result r = check_backward(what, &cs[ci], threads[t]);
            if (!r.packed) continue;
            if (!first) { first = r.packed; len = r.len; continue; }
            CHECK(r.len == len && memcmp(first, r.packed, (size_t) len * sizeof(float)) == 0,
                  "backward case %d: %d threads differ from 1 thread", ci, threads[t]);
            free(r.packed);
        }
        free(first);
    }
}

int main(void) {
    if (tc_part("named")) test_named_cases();
    if (tc_part("random")) test_random_cases();
    if (tc_part("finite_differences")) test_finite_differences();
    if (tc_part("packing")) test_packing();
    if (tc_part("threads")) test_threads();
    printf("SIMD path %s; largest relative errors dq %.3g, dk %.3g, dv %.3g (tolerance %g)\n", ggml_cpu_simd_name(), max_err_seen[0],
           max_err_seen[1], max_err_seen[2], BWD_TOL);
    return tc_finish("flash_attn_backward");
}

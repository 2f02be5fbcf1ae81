/* test_common.c -- see test_common.h. */
#include "test_common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int tc_failures = 0;
int tc_checks = 0;

bool tc_check(bool ok, const char * file, int line, const char * fmt, ...) {
    tc_checks++;
    if (!ok) {
        tc_failures++;
        fprintf(stderr, "FAIL %s:%d: ", file, line);
        va_list ap;
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
    }
    return ok;
}

bool tc_part(const char * name) {
    const char * parts = getenv("GGMLR_TEST_PARTS");
    if (!parts || !*parts) return true;
    const size_t len = strlen(name);
    for (const char * p = parts; *p; p += strcspn(p, ",")) {
        if (*p == ',') p++;
        if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0')) return true;
    }
    return false;
}

int tc_finish(const char * suite) {
    const char * parts = getenv("GGMLR_TEST_PARTS");
    if (parts && *parts) printf("%s: only the parts %s\n", suite, parts);
    printf("%s: %d checks\n", suite, tc_checks);
    printf("%d passed, %d failed\n", tc_checks - tc_failures, tc_failures);
    return tc_failures == 0 && tc_checks > 0 ? 0 : 1;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static const uint8_t * rng_bytes;  /* the byte source, when not NULL */
static size_t rng_bytes_left;
static bool rng_exhausted;

void tc_seed(uint64_t seed) { rng_state = seed * 0x9E3779B97F4A7C15ull + 1; rng_bytes = NULL; rng_exhausted = false; }

void tc_seed_bytes(const uint8_t * data, size_t n) { rng_bytes = data; rng_bytes_left = n; rng_exhausted = false; }

bool tc_bytes_exhausted(void) { return rng_exhausted; }

uint64_t tc_next(void) {
    if (rng_bytes) {
        /* two bytes per draw, spread over all 64 bits by splitmix64's finaliser,
         * so that a mutation of those bytes changes just this one choice */
        uint64_t z = 0;
        for (int k = 0; k < 2; k++) {
            if (rng_bytes_left == 0) { rng_exhausted = true; break; }
            z = z << 8 | *rng_bytes++;
            rng_bytes_left--;
        }
        z += 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
double tc_uniform(double lo, double hi) { return lo + (hi - lo) * ((double) (tc_next() >> 11) / 9007199254740992.0); }
int tc_randint(int lo, int hi) { return lo + (int) (tc_next() % (uint64_t) (hi - lo + 1)); }

struct ggml_context * tc_ctx(size_t mb) {
    struct ggml_init_params p = {mb * 1024 * 1024, NULL, false};
    struct ggml_context * ctx = ggml_init(p);
    if (!ctx) { fprintf(stderr, "ggml_init failed: %s\n", ggml_last_error()); exit(2); }
    return ctx;
}

void tc_fill_uniform(struct ggml_tensor * t, double lo, double hi) {
    for (int64_t i = 0; i < ggml_nelements(t); i++) ggml_set_f32_1d(t, i, (float) tc_uniform(lo, hi));
}

void tc_poison(struct ggml_tensor * t) {
    for (int64_t i = 0; i < ggml_nelements(t); i++) ggml_set_f32_1d(t, i, NAN);
}

double tc_get(const struct ggml_tensor * t, int64_t i) { return ggml_get_f32_1d(t, i); }

double tc_rel_err_f32(const float * x, const double * ref, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        const double d = (double) x[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    if (num != num) return INFINITY;  /* NaN anywhere fails */
    /* an all-zero reference (a gradient that cancels exactly, e.g. attention
     * over a single key): the root-mean-square error, so rounding noise in
     * many elements does not add up to a failure while any real value does */
    return den > 0 ? sqrt(num / den) : sqrt(num / (double) (n > 0 ? n : 1));
}

double tc_rel_err_tensor(const struct ggml_tensor * t, const double * ref) {
    const int64_t n = ggml_nelements(t);
    float * x = malloc((size_t) (n > 0 ? n : 1) * sizeof *x);
    for (int64_t i = 0; i < n; i++) x[i] = ggml_get_f32_1d(t, i);
    const double e = tc_rel_err_f32(x, ref, n);
    free(x);
    return e;
}

void tc_compute(struct ggml_context * ctx, struct ggml_cgraph * g, int n_threads) {
    enum ggml_status st = ggml_graph_compute_with_ctx(ctx, g, n_threads);
    if (st != GGML_STATUS_SUCCESS) { fprintf(stderr, "graph compute failed: %s\n", ggml_last_error()); exit(2); }
}

int tc_gradcheck(const char * what, tc_loss_builder build, void * user, int n_params, const int64_t (*shapes)[4],
                 double lo, double hi, double eps, double atol, double rtol) {
    struct ggml_tensor * params[8];
    if (n_params > 8) { fprintf(stderr, "tc_gradcheck: too many params\n"); exit(2); }
    /* room for the forward and backward graphs' tensors: a few hundred times
     * the parameters (a context's memory is zeroed, so no more than that) */
    size_t param_bytes = 0;
    for (int p = 0; p < n_params; p++) param_bytes += (size_t) (shapes[p][0] * shapes[p][1] * shapes[p][2] * shapes[p][3]) * sizeof(float);
    const size_t mb = 32 + param_bytes * 512 / (1024 * 1024);
    struct ggml_context * ctx = tc_ctx(mb < 256 ? mb : 256);
    for (int p = 0; p < n_params; p++) {
        params[p] = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, shapes[p][0], shapes[p][1], shapes[p][2], shapes[p][3]);
        tc_fill_uniform(params[p], lo, hi);
        ggml_set_param(params[p]);
    }
    struct ggml_tensor * loss = build(ctx, params, user);
    if (!CHECK(loss != NULL, "%s: building the loss failed: %s", what, ggml_last_error())) { ggml_free(ctx); return 1; }
    ggml_set_loss(loss);
    struct ggml_cgraph * fwd = ggml_new_graph_custom(ctx, 4096, false);
    ggml_build_forward_expand(fwd, loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 4096, true);
    ggml_build_forward_expand(g, loss);
    if (!CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "%s: backward build failed: %s", what, ggml_last_error())) {
        ggml_free(ctx);
        return 1;
    }
    ggml_graph_reset(g);
    tc_compute(ctx, g, 2);
    int bad = 0;
    for (int p = 0; p < n_params; p++) {
        struct ggml_tensor * grad = ggml_graph_get_grad(g, params[p]);
        if (!CHECK(grad != NULL, "%s: no gradient for param %d", what, p)) { bad++; continue; }
        for (int64_t i = 0; i < ggml_nelements(params[p]); i++) {
            const float x0 = ggml_get_f32_1d(params[p], i);
            ggml_set_f32_1d(params[p], i, (float) (x0 + eps));
            tc_compute(ctx, fwd, 1);
            const double fp = ggml_get_f32_1d(loss, 0);
            ggml_set_f32_1d(params[p], i, (float) (x0 - eps));
            tc_compute(ctx, fwd, 1);
            const double fm = ggml_get_f32_1d(loss, 0);
            ggml_set_f32_1d(params[p], i, x0);
            const double numeric = (fp - fm) / (2 * eps);
            const double analytic = ggml_get_f32_1d(grad, i);
            if (!(fabs(analytic - numeric) <= atol + rtol * fabs(numeric))) {
                if (bad < 5) fprintf(stderr, "  %s: param %d element %lld: analytic %.6g numeric %.6g\n", what, p, (long long) i, analytic, numeric);
                bad++;
            }
        }
    }
    CHECK(bad == 0, "%s: %d gradient elements disagree with finite differences", what, bad);
    ggml_free(ctx);
    return bad;
}

uint16_t tc_ref_fp32_to_fp16(float x) {
    const uint16_t sign = signbit(x) ? 0x8000u : 0u;
    if (isnan(x)) return (uint16_t) (sign | 0x7e00u);
    const double a = fabs((double) x);
    if (isinf(a)) return (uint16_t) (sign | 0x7c00u);
    if (a < 0x1p-14) {  /* subnormal range: a multiple of 2^-24 (1024 * 2^-24 is the smallest normal) */
        const double q = nearbyint(a * 0x1p24);  /* exact scaling; default mode rounds ties to even */
        return (uint16_t) (sign | (uint16_t) q);
    }
    int e;
    frexp(a, &e);                                /* a in [2^(e-1), 2^e) */
    const int E = e - 1;
    const double q = nearbyint(ldexp(a, 10 - E)); /* 11-bit significand in [1024, 2048] */
    if (E > 15 || (E == 15 && q >= 2048)) return (uint16_t) (sign | 0x7c00u);
    /* q == 2048 carries into the exponent field by itself */
    return (uint16_t) (sign | (uint16_t) (((E + 15) << 10) + (int) q - 1024));
}

double tc_ref_fp16_to_f64(uint16_t h) {
    const int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v;
    if (e == 0x1f) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp((double) m, -24);
    else v = ldexp((double) (1024 + m), e - 25);
    return s ? -v : v;
}

double tc_ref_round_fp16(float x) { return tc_ref_fp16_to_f64(tc_ref_fp32_to_fp16(x)); }

int tc_thread_count(void) {
    FILE * f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1) break;
    fclose(f);
    return n;
}

struct ggml_tensor * tc_weighted_sum(struct ggml_context * ctx, struct ggml_tensor * t) {
    if (!t) return NULL;
    struct ggml_tensor * w = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, t->ne);
    tc_fill_uniform(w, -1, 1);
    return ggml_sum(ctx, ggml_mul(ctx, t, w));
}

/* expected relative RMS error of an ideal grid of N levels spread over the
 * data's range, for uniform data: step/sqrt(12) over rms = range/sqrt(12)
 * gives 1/(N-1). N per type: the quant levels over the sub-block's range; for
 * the non-uniform grids the range over the widest gap (IQ4: 240/24 = 10, so
 * 11; MXFP4: 12/2 = 6, so 7). The bound allows 1.25 times that. */
double tc_quant_rms_bound(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_Q2_K: return 1.25 / 3;
        case GGML_TYPE_Q3_K: return 1.25 / 7;
        case GGML_TYPE_Q5_0: case GGML_TYPE_Q5_1: case GGML_TYPE_Q5_K: return 1.25 / 31;
        case GGML_TYPE_Q6_K: return 1.25 / 63;
        case GGML_TYPE_Q8_0: case GGML_TYPE_Q8_1: case GGML_TYPE_Q8_K: return 1.25 / 254;
        case GGML_TYPE_IQ4_NL: case GGML_TYPE_IQ4_XS: return 1.25 / 10;
        case GGML_TYPE_MXFP4: return 1.25 / 6;
        /* NVFP4's scale puts amax at the top level: gaps of 1/12 (4 of
         * them), 1/6 (2) and 1/3 of amax give sqrt(sum gap^3 / 4) = 0.11, so 9 */
        case GGML_TYPE_NVFP4: return 1.25 / 9;
        /* three levels over the range (Q2_0's fourth, 2d, lies past amax);
         * Q1_0's two, +-mean|x|, leave the same error: |x| - 1/2 on [0, 1] */
        case GGML_TYPE_Q1_0: case GGML_TYPE_Q2_0: case GGML_TYPE_TQ1_0: case GGML_TYPE_TQ2_0: return 1.25 / 2;
        default: return 1.25 / 15;   /* the 4-bit types */
    }
}

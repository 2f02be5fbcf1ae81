/* test_fp16.c -- IEEE binary16 conversions against hand-written bit patterns
 * and against the independent float64 reference in test_common (nearest-even
 * rounding, overflow, subnormals, signed zero, Inf, NaN), for the scalar
 * converters and for the row converters (which may use F16C hardware). */
#include "common/test_common.h"

#include <stdlib.h>
#include <string.h>

static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static bool half_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

/* Known conversions, expected bits written by hand from the IEEE format. */
static void test_known_values(void) {
    static const struct { float x; uint16_t h; const char * why; } cases[] = {
        {0.0f, 0x0000, "zero"},
        {-0.0f, 0x8000, "negative zero keeps its sign"},
        {1.0f, 0x3c00, "one"},
        {-2.0f, 0xc000, "minus two"},
        {0.5f, 0x3800, "half"},
        {0.1f, 0x2e66, "0.1 rounds down"},
        {1.0f / 3.0f, 0x3555, "1/3"},
        {65504.0f, 0x7bff, "max half"},
        {65519.0f, 0x7bff, "65519 rounds down to max"},
        {65520.0f, 0x7c00, "65520 is the halfway point to 2^16: ties to even overflows to Inf"},
        {-65520.0f, 0xfc00, "-65520 -> -Inf"},
        {1e10f, 0x7c00, "large -> Inf"},
        {0x1p-14f, 0x0400, "smallest normal"},
        {0x1p-24f, 0x0001, "smallest subnormal 2^-24"},
        {0x1p-25f, 0x0000, "2^-25 is halfway between 0 and 2^-24: ties to even gives 0"},
        {0x1.8p-24f, 0x0002, "3*2^-25 is halfway between 1 and 2 (x 2^-24): ties to even gives 2"},
        {0x1.4p-24f, 0x0001, "1.25*2^-24 rounds down"},
        {0x1.0000020p-25f, 0x0001, "just above 2^-25 rounds up"},
        {0x1p-26f, 0x0000, "2^-26 underflows to 0"},
        {-0x1p-26f, 0x8000, "-2^-26 underflows to -0"},
        {0x1.ffcp-15f, 0x0400, "1023.5*2^-24 ties to even: 1024*2^-24, the smallest normal"},
        {0x1.ff8p-15f, 0x03ff, "1023*2^-24, the largest subnormal"},
        {0x1.ff0p-15f, 0x03fe, "1022*2^-24 exact subnormal"},
        {0x1.002p0f, 0x3c00, "1 + 2^-11: halfway between 1 and 1+2^-10, ties to even keeps 1"},
        {0x1.006p0f, 0x3c02, "1 + 3*2^-11: halfway, ties to even goes up to 1+2^-9"},
        {0x1.002002p0f, 0x3c01, "just above halfway rounds up"},
        {0x1.ffep0f, 0x4000, "1.9995 -> 2 (mantissa carry into exponent)"},
        {INFINITY, 0x7c00, "+Inf"},
        {-INFINITY, 0xfc00, "-Inf"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const uint16_t got = ggml_fp32_to_fp16(cases[i].x);
        CHECK(got == cases[i].h, "fp32_to_fp16(%a) = 0x%04x, want 0x%04x (%s)", (double) cases[i].x, got, cases[i].h, cases[i].why);
        CHECK(tc_ref_fp32_to_fp16(cases[i].x) == cases[i].h, "the test's own reference disagrees on %a (%s)", (double) cases[i].x, cases[i].why);
    }
    CHECK(ggml_fp16_to_fp32(0x7bff) == 65504.0f, "0x7bff -> 65504");
    CHECK(ggml_fp16_to_fp32(0x0001) == 0x1p-24f, "0x0001 -> 2^-24");
    CHECK(ggml_fp16_to_fp32(0x03ff) == 0x1.ff8p-15f, "0x03ff -> largest subnormal");
    CHECK(ggml_fp16_to_fp32(0x7c00) == INFINITY && ggml_fp16_to_fp32(0xfc00) == -INFINITY, "Inf");
    const float nz = ggml_fp16_to_fp32(0x8000);
    CHECK(nz == 0.0f && signbit(nz), "0x8000 -> -0");
}

static void test_nan(void) {
    const float nans[] = {NAN, -NAN, bits_f32(0x7f800001u), bits_f32(0x7fc00000u), bits_f32(0xffbfffffu), bits_f32(0x7f802000u)};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        const uint16_t h = ggml_fp32_to_fp16(nans[i]);
        CHECK(half_is_nan(h), "NaN 0x%08x -> 0x%04x is not a NaN", f32_bits(nans[i]), h);
        CHECK((h & 0x8000u) == ((f32_bits(nans[i]) >> 16) & 0x8000u), "NaN sign kept for 0x%08x", f32_bits(nans[i]));
        uint16_t hr;
        ggml_fp32_to_fp16_row(&nans[i], &hr, 1);
        CHECK(half_is_nan(hr), "row converter: NaN 0x%08x -> 0x%04x", f32_bits(nans[i]), hr);
    }
    const uint16_t hnans[] = {0x7c01, 0x7e00, 0xfd00, 0x7fff};
    for (size_t i = 0; i < sizeof hnans / sizeof hnans[0]; i++)
        CHECK(isnan(ggml_fp16_to_fp32(hnans[i])), "half NaN 0x%04x -> float is not NaN", hnans[i]);
}

/* Every one of the 65536 halves: to float (exact, against the reference), and
 * back to the same bits; the row converters agree with the scalar ones. */
static void test_all_halves(void) {
    uint16_t * h = malloc(65536 * sizeof *h), * back = malloc(65536 * sizeof *back);
    float * f = malloc(65536 * sizeof *f);
    for (int i = 0; i < 65536; i++) h[i] = (uint16_t) i;
    ggml_fp16_to_fp32_row(h, f, 65536);
    ggml_fp32_to_fp16_row(f, back, 65536);
    int bad_value = 0, bad_trip = 0, bad_row = 0, bad_row_trip = 0;
    for (int i = 0; i < 65536; i++) {
        const float x = ggml_fp16_to_fp32(h[i]);
        const double ref = tc_ref_fp16_to_f64(h[i]);
        if (half_is_nan(h[i])) {
            if (!isnan(x)) bad_value++;
            if (!isnan(f[i]) || !half_is_nan(back[i]) || !half_is_nan(ggml_fp32_to_fp16(x))) bad_trip++;
            continue;
        }
        if ((double) x != ref || !signbit(x) != !signbit(ref)) bad_value++;
        if (ggml_fp32_to_fp16(x) != h[i]) bad_trip++;
        if (f32_bits(f[i]) != f32_bits(x)) bad_row++;
        if (back[i] != h[i]) bad_row_trip++;
    }
    CHECK(bad_value == 0, "%d halves convert to the wrong float", bad_value);
    CHECK(bad_trip == 0, "%d halves do not survive half -> float -> half", bad_trip);
    CHECK(bad_row == 0, "%d halves: ggml_fp16_to_fp32_row differs from ggml_fp16_to_fp32", bad_row);
    CHECK(bad_row_trip == 0, "%d halves do not survive the row converters' round trip", bad_row_trip);
    free(h); free(back); free(f);
}

/* Every halfway point between adjacent finite halves must round to the even
 * neighbour; one float ulp either side rounds to the nearer one. */
static void test_halfway_points(void) {
    int bad = 0;
    for (uint32_t b = 0; b < 0x7bff; b++) {  /* pairs (b, b+1), both finite, positive */
        const double lo = tc_ref_fp16_to_f64((uint16_t) b), hi = tc_ref_fp16_to_f64((uint16_t) (b + 1));
        const float mid = (float) ((lo + hi) / 2);  /* 12 significant bits: exact in float */
        const uint16_t even = (b & 1) ? (uint16_t) (b + 1) : (uint16_t) b;
        const float below = nextafterf(mid, 0.0f), above = nextafterf(mid, INFINITY);
        const uint16_t got[3] = {ggml_fp32_to_fp16(mid), ggml_fp32_to_fp16(below), ggml_fp32_to_fp16(above)};
        const uint16_t want[3] = {even, (uint16_t) b, (uint16_t) (b + 1)};
        for (int k = 0; k < 3; k++) {
            const uint16_t neg = ggml_fp32_to_fp16(-(k == 0 ? mid : k == 1 ? below : above));
            if (got[k] != want[k] || neg != (want[k] | 0x8000u)) {
                if (bad < 5) fprintf(stderr, "  halfway pair 0x%04x: case %d got 0x%04x want 0x%04x\n", b, k, got[k], want[k]);
                bad++;
            }
        }
    }
    CHECK(bad == 0, "%d halfway/near-halfway conversions are wrong", bad);
}

/* Float bit patterns spread over the whole range (every 97th, so every
 * exponent and many mantissas) and random ones, scalar and row converters. */
static void test_float_sweep(void) {
    enum { CHUNK = 4096 };
    float x[CHUNK];
    uint16_t hr[CHUNK];
    int bad = 0, bad_row = 0;
    uint64_t u = 0;
    while (u <= 0xffffffffull) {
        int n = 0;
        for (; n < CHUNK && u <= 0xffffffffull; n++, u += 97) x[n] = bits_f32((uint32_t) u);
        ggml_fp32_to_fp16_row(x, hr, n);
        for (int i = 0; i < n; i++) {
            const uint16_t ref = tc_ref_fp32_to_fp16(x[i]), got = ggml_fp32_to_fp16(x[i]);
            const bool ok = isnan(x[i]) ? half_is_nan(got) : got == ref;
            const bool ok_row = isnan(x[i]) ? half_is_nan(hr[i]) : hr[i] == ref;
            if (!ok) { if (bad < 5) fprintf(stderr, "  %a: got 0x%04x want 0x%04x\n", (double) x[i], got, ref); bad++; }
            if (!ok_row) { if (bad_row < 5) fprintf(stderr, "  row %a: got 0x%04x want 0x%04x\n", (double) x[i], hr[i], ref); bad_row++; }
        }
    }
    CHECK(bad == 0, "%d of the swept floats convert wrongly (scalar)", bad);
    CHECK(bad_row == 0, "%d of the swept floats convert wrongly (row converter)", bad_row);
    /* random floats in the half range, with odd row lengths for the vector tails */
    int bad_rand = 0;
    for (int rep = 0; rep < 200; rep++) {
        const int n = tc_randint(1, 37);
        for (int i = 0; i < n; i++) x[i] = (float) (tc_uniform(-1, 1) * ldexp(1.0, tc_randint(-26, 16)));
        ggml_fp32_to_fp16_row(x, hr, n);
        for (int i = 0; i < n; i++) if (hr[i] != tc_ref_fp32_to_fp16(x[i]) || ggml_fp32_to_fp16(x[i]) != hr[i]) bad_rand++;
    }
    CHECK(bad_rand == 0, "%d random floats convert wrongly", bad_rand);
}

int main(void) {
    tc_seed(16);
    test_known_values();
    test_nan();
    test_all_halves();
    test_halfway_points();
    test_float_sweep();
    return tc_finish("fp16");
}

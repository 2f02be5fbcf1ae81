/* act_impl.h -- vectorised activations (exp, GELU and its derivative, SILU,
 * GELU_QUICK, GELU_ERF, SWIGLU_OAI's gated form),
 * written once with GCC/Clang vector extensions and compiled per instruction
 * set by vec.c (VEC_FN adds a suffix, VEC_TARGET sets the ISA), in vectors
 * of the register width TILE_VEC_BYTES (so that they can be passed and
 * returned without ABI trouble, as in tile_impl.h). Rows of any length: the tail goes
 * through the same vector code on a zero-padded copy, so every element gets
 * the same formula wherever it sits. */

typedef float   VEC_FN(af) __attribute__((vector_size(TILE_VEC_BYTES), aligned(4)));
typedef int32_t VEC_FN(ai) __attribute__((vector_size(TILE_VEC_BYTES), aligned(4)));
#define AF VEC_FN(af)
#define AI VEC_FN(ai)
#define AL (TILE_VEC_BYTES / 4)
#define SEL(m, a, b) ((AF) (((AI) (a) & (m)) | ((AI) (b) & ~(m))))  /* m ? a : b, lane-wise */

/* e^x lane-wise, as expf: +Inf past the float range, 0 far below it, NaN kept.
 * x = n ln2 + r with |r| <= ln2/2 (Cody-Waite: ln2 in two parts, so r keeps
 * its digits for large |x|); e^r by its degree-7 Taylor polynomial (error
 * < 6e-9); 2^n as two powers of two built from exponent bits (each half of n
 * stays in the normal range, so the product overflows or goes subnormal as
 * expf does). */
VEC_TARGET static inline __attribute__((always_inline)) AF VEC_FN(expv)(AF x) {
    const AI nan = x != x, dead = x < -104.0f;
    x = SEL(nan, (AF) {0}, x);
    x = SEL(x > 89.0f, (AF) {0} + 89.0f, x);
    x = SEL(dead, (AF) {0} - 104.0f, x);
    const AF n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  /* round to nearest */
    const AF r = (x - n * 0.693145751953125f) - n * 1.42860682030941723212e-6f;
    AF p = r * (1.0f / 5040) + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const AI ni = __builtin_convertvector(n, AI), n1 = ni >> 1, n2 = ni - n1;  /* n in [-150, 129] */
    const AF y = p * (AF) ((n1 + 127) << 23) * (AF) ((n2 + 127) << 23);
    return SEL(nan, x + __builtin_nanf(""), SEL(dead, (AF) {0}, y));
}

/* 2u, u = sqrt(2/pi) (x + 0.044715 x^3): 0.5 (1 + tanh u) = 1 / (1 + e^(-2u)) */
VEC_TARGET static inline __attribute__((always_inline)) AF VEC_FN(gelu_2u)(AF x) {
    const AF k2 = (AF) {0} + 2.0f * 0.79788456080286535588f;
    return k2 * x + (k2 * 0.044715f) * x * (x * x);
}

/* e^(-2u) */
VEC_TARGET static inline __attribute__((always_inline)) AF VEC_FN(gelu_e)(AF x) { return VEC_FN(expv)(-VEC_FN(gelu_2u)(x)); }

/* y = x / (1 + e^(-2u)) = x/2 (1 + tanh u) */
VEC_TARGET static inline __attribute__((always_inline)) AF VEC_FN(gelu1)(AF x) { return x / (1.0f + VEC_FN(gelu_e)(x)); }

/* dx = g (s + 2 k x s (1 - s) (1 + 3c x^2)), s = 1 / (1 + e^(-2u)). Where s
 * saturates (|x| > 10) s (1 - s) is 0; x^2 is capped so that 0 * Inf cannot occur. */
VEC_TARGET static inline __attribute__((always_inline)) AF VEC_FN(gelu_back1)(AF g, AF x) {
    const AF s = 1.0f / (1.0f + VEC_FN(gelu_e)(x));
    AF x2 = x * x;
    x2 = SEL(x2 > 1e4f, (AF) {0} + 1e4f, x2);
    return g * (s + (2.0f * 0.79788456080286535588f) * x * s * (1.0f - s) * (1.0f + (3.0f * 0.044715f) * x2));
}

/* x sigmoid(k x) = x / (1 + e^(-k x)): SILU (k = 1), GELU_QUICK (k = 1.702) */
VEC_TARGET static inline __attribute__((always_inline)) AF VEC_FN(xsig1)(AF x, float k) { return x / (1.0f + VEC_FN(expv)(-k * x)); }

/* GELU_ERF: x/2 erfc(-x / sqrt2). With z = |x| / sqrt2 and t = 1 / (1 + z/2),
 * erfc(z) = t e^(-z^2 + P(t)), P the degree-9 polynomial of Numerical Recipes'
 * erfcc (fractional error < 1.2e-7 for every z >= 0); erfc(-z) = 2 - erfc(z). */
VEC_TARGET static inline __attribute__((always_inline)) AF VEC_FN(gelu_erf1)(AF x) {
    const AF z = SEL(x < 0.0f, -x, x) * 0.70710678118654752440f, t = 1.0f / (1.0f + 0.5f * z);
    AF p = t * 0.17087277f - 0.82215223f;
    p = p * t + 1.48851587f;
    p = p * t - 1.13520398f;
    p = p * t + 0.27886807f;
    p = p * t - 0.18628806f;
    p = p * t + 0.09678418f;
    p = p * t + 0.37409196f;
    p = p * t + 1.00002368f;
    p = p * t - 1.26551223f;
    const AF e = t * VEC_FN(expv)(p - z * z);
    return 0.5f * x * SEL(x >= 0.0f, 2.0f - e, e);
}

/* GLU's gates x / (1 + e^t): SWIGLU, GEGLU_QUICK and SWIGLU_OAI (t = -k x)
 * and GEGLU (t = -2u). A shorter e^t than expv's, for the GLU forward only
 * (the unary ops keep expv's bits): 1 + e^t needs no NaN care (t is a NaN
 * only where x is, and x, the numerator, carries it into y).
 * t = n ln2 + r, |r| <= ln2/2 (n by the 1.5 2^23 rounding trick, whose low
 * mantissa bits then hold n); e^r = 1 + r P(r), P of degree 4 fitted by
 * Remez exchange to the least maximal relative error of e^r on
 * |r| <= ln2/2 (9.2e-8 before rounding). Then 2^n:
 *  - AVX-512: vscalefps, which saturates to +Inf above the float range and
 *    to 0 below it (t kept in [-104, 89] by min/max, so n stays exact);
 *  - elsewhere: n added to p's exponent field, which needs n in [-125, 127]:
 *    t clamped to [-86, 88] (where e^-86 vanishes beside 1), and above 88
 *    (a NaN aside) e = +Inf, so that x / (1 + e) is -0 there as with expf. */
VEC_TARGET static inline __attribute__((always_inline)) AF VEC_FN(glu_gate)(AF x, AF t) {
#if TILE_VEC_BYTES == 64
    t = (AF) _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps((__m512) t, _mm512_set1_ps(-104.0f)));
#else
    const AI finite = t < 88.0f;
    t = SEL(finite, t, (AF) {0} + 88.0f);
    t = SEL(t > -86.0f, t, (AF) {0} - 86.0f);
#endif
    const AF z = t * 1.44269504088896341f + 12582912.0f, n = z - 12582912.0f;
    const AF r = (t - n * 0.693145751953125f) - n * 1.42860682030941723212e-6f;
    AF p = r * 0x1.0fa7ep-7f + 0x1.573ac2p-5f;
    p = p * r + 0x1.555a6cp-3f;
    p = p * r + 0x1.fffdc4p-2f;
    p = p * r + 0x1.fffff6p-1f;
    p = p * r + 1.0f;
#if TILE_VEC_BYTES == 64
    return x / (1.0f + (AF) _mm512_scalef_ps((__m512) p, (__m512) n));
#else
    const AF e = (AF) ((AI) p + ((AI) z << 23));
    return x / (1.0f + SEL(finite, e, (AF) {0} + __builtin_inff()));
#endif
}

/* The loops: whole vectors, then the tail through a zero-padded vector. */
#define ACT_LOOP1(name, expr)                                                                    \
    VEC_TARGET static void VEC_FN(name)(int64_t n, const float * x, float * y) {                \
        int64_t i = 0;                                                                           \
        for (; i + AL <= n; i += AL) { const AF xv = *(const AF *) (x + i); *(AF *) (y + i) = (expr); } \
        if (i < n) {                                                                             \
            float buf[AL] = {0};                                                                 \
            for (int64_t j = i; j < n; j++) buf[j - i] = x[j];                                   \
            const AF xv = *(const AF *) buf;                                                     \
            *(AF *) buf = (expr);                                                                \
            for (int64_t j = i; j < n; j++) y[j] = buf[j - i];                                   \
        }                                                                                        \
    }

ACT_LOOP1(act_exp, VEC_FN(expv)(xv))
ACT_LOOP1(act_gelu, VEC_FN(gelu1)(xv))
ACT_LOOP1(act_silu, VEC_FN(xsig1)(xv, 1.0f))
ACT_LOOP1(act_gelu_quick, VEC_FN(xsig1)(xv, 1.702f))
ACT_LOOP1(act_gelu_erf, VEC_FN(gelu_erf1)(xv))

/* GLU results too large to stay in cache (the caller decides, glu.c) go out
 * with non-temporal stores: a plain store first reads the line it writes, so
 * streaming x and g in and y out costs 4 memory transfers per element where
 * non-temporal stores take 3 (measured 1.2-1.6x on 36-142 MB results,
 * bench/README.md). They need an aligned address: the first vector is stored
 * plainly, and streaming starts at the first aligned element after it (the
 * elements between are written twice, with the same value). An sfence ends
 * the streamed stores, before the node's barrier lets other threads read y.
 * The values are the same either way.
 * Returns the index where streaming starts, or -1 for none (not asked, the
 * scalar path, a row shorter than a vector, y not float-aligned). */
VEC_TARGET static inline __attribute__((always_inline)) int64_t VEC_FN(stream_start)(bool stream, const float * y, int64_t n) {
    if (TILE_VEC_BYTES == 16 || !stream || n < AL || (uintptr_t) y % sizeof(float) != 0) return -1;
    return (int64_t) ((TILE_VEC_BYTES - (uintptr_t) y % TILE_VEC_BYTES) % TILE_VEC_BYTES / sizeof(float));
}

/* y[0..AL) = v, streamed or not; one expression of the value for both, so
 * that the compiler's choices (FMA contraction) cannot differ between them */
VEC_TARGET static inline __attribute__((always_inline)) void VEC_FN(put)(float * y, AF v, bool streamed) {
#if TILE_VEC_BYTES == 64
    if (streamed) { _mm512_stream_ps(y, (__m512) v); return; }
#elif TILE_VEC_BYTES == 32
    if (streamed) { _mm256_stream_ps(y, (__m256) v); return; }
#else
    (void) streamed;
#endif
    *(AF *) y = v;
}

VEC_TARGET static inline __attribute__((always_inline)) void VEC_FN(stream_fence)(void) {
#if TILE_VEC_BYTES > 16
    _mm_sfence();
#endif
}

/* y[i] = expr for i < n, expr a vector expression of xv = x[i..] and gv =
 * g[i..]: whole vectors with plain stores, then (from stream_start) streamed
 * ones, then the tail through buffers padded with 0. */
#define STREAM_LOOP(expr)                                                                                \
    do {                                                                                                 \
        const int64_t s0 = VEC_FN(stream_start)(stream, y, n);                                           \
        int64_t i = 0;                                                                                   \
        for (int part = 0; part < 2; part++) {  /* plain stores, then streamed ones */                   \
            const int64_t end = part == 1 ? n : s0 > 0 ? AL : s0 == 0 ? 0 : n;                           \
            if (part == 1 && s0 > 0) i = s0;                                                             \
            for (; i + AL <= end; i += AL) {                                                             \
                const AF xv = *(const AF *) (x + i), gv = *(const AF *) (g + i);                         \
                VEC_FN(put)(y + i, (expr), part == 1);                                                   \
            }                                                                                            \
        }                                                                                                \
        if (s0 >= 0) VEC_FN(stream_fence)();                                                             \
        if (i < n) {                                                                                     \
            float xb[AL] = {0}, gb[AL] = {0};                                                            \
            for (int64_t j = i; j < n; j++) { xb[j - i] = x[j]; gb[j - i] = g[j]; }                      \
            const AF xv = *(const AF *) xb, gv = *(const AF *) gb;                                       \
            *(AF *) xb = (expr);                                                                         \
            for (int64_t j = i; j < n; j++) y[j] = xb[j - i];                                            \
        }                                                                                                \
    } while (0)

/* GLU: y = act(x) g in one pass, act one of ggml's RELU, GELU, SILU,
 * GELU_QUICK, GELU_ERF (the others: SILU). */
VEC_TARGET static void VEC_FN(act_glu)(int act, int64_t n, const float * x, const float * g, float * y, bool stream) {
    switch (act) {
        case GGML_UNARY_OP_RELU:       STREAM_LOOP(SEL(xv > 0.0f, xv, (AF) {0}) * gv); break;
        case GGML_UNARY_OP_GELU:       STREAM_LOOP(VEC_FN(glu_gate)(xv, -VEC_FN(gelu_2u)(xv)) * gv); break;
        case GGML_UNARY_OP_GELU_QUICK: STREAM_LOOP(VEC_FN(glu_gate)(xv, -1.702f * xv) * gv); break;
        case GGML_UNARY_OP_GELU_ERF:   STREAM_LOOP(VEC_FN(gelu_erf1)(xv) * gv); break;
        default:                       STREAM_LOOP(VEC_FN(glu_gate)(xv, -xv) * gv); break;
    }
}

/* SWIGLU_OAI: y = x' sigmoid(alpha x') (g' + 1), x' = min(x, limit), g' = clamp(g, -limit, limit)
 * (a NaN x or g becomes the bound, as fminf/fmaxf make it) */
VEC_TARGET static inline __attribute__((always_inline)) AF VEC_FN(oai1)(AF x, AF g, float alpha, float limit) {
    const AF xc = SEL(x < limit, x, (AF) {0} + limit);
    AF gc = SEL(g > -limit, g, (AF) {0} - limit);
    gc = SEL(gc < limit, gc, (AF) {0} + limit);
    return VEC_FN(glu_gate)(xc, -alpha * xc) * (gc + 1.0f);
}

VEC_TARGET static void VEC_FN(act_oai)(int64_t n, const float * x, const float * g, float alpha, float limit, float * y, bool stream) {
    STREAM_LOOP(VEC_FN(oai1)(xv, gv, alpha, limit));
}

/* dx[i] = g[i] gelu'(x[i]) */
VEC_TARGET static void VEC_FN(act_gelu_back)(int64_t n, const float * g, const float * x, float * dx) {
    int64_t i = 0;
    for (; i + AL <= n; i += AL) *(AF *) (dx + i) = VEC_FN(gelu_back1)(*(const AF *) (g + i), *(const AF *) (x + i));
    if (i < n) {
        float gb[AL] = {0}, xb[AL] = {0};
        for (int64_t j = i; j < n; j++) { gb[j - i] = g[j]; xb[j - i] = x[j]; }
        *(AF *) gb = VEC_FN(gelu_back1)(*(const AF *) gb, *(const AF *) xb);
        for (int64_t j = i; j < n; j++) dx[j] = gb[j - i];
    }
}

/* y = x, n floats, with non-temporal stores from y's first aligned vector
 * on (the head and the tail stored plainly; stream_start): for rows built in
 * cache and written to a result too large to stay there (IM2COL). No fence:
 * the caller ends its run of copies with stream_fence. */
VEC_TARGET static void VEC_FN(copy_stream)(int64_t n, const float * x, float * y) {
    const int64_t s0 = VEC_FN(stream_start)(true, y, n);
    if (s0 < 0) { memcpy(y, x, (size_t) n * sizeof(float)); return; }
    memcpy(y, x, (size_t) s0 * sizeof(float));
    int64_t i = s0;
    for (; i + AL <= n; i += AL) VEC_FN(put)(y + i, *(const AF *) (x + i), true);
    memcpy(y + i, x + i, (size_t) (n - i) * sizeof(float));
}

#undef ACT_LOOP1
#undef STREAM_LOOP
#undef SEL
#undef AF
#undef AI
#undef AL

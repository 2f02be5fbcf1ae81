/* quant_dot_impl.h -- the 256-bit dot-product kernels, included by
 * quant_dot.c once per ISA (ISA: the name's suffix, TARGET: its target
 * attribute, VNNI defined: vpdpbusd / vpdpwssd fuse the integer adds). */

#define QD_CAT_(a, b) a##_##b
#define QD_CAT(a, b) QD_CAT_(a, b)
#define FN(name) QD_CAT(name, ISA)
#define DOT_API_E(name, isa) DOT_API(name, isa)
#define DOT_API_X(name) DOT_API_E(name, ISA)

static TARGET inline float FN(hsum)(__m256 v) {
    __m128 l = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    l = _mm_add_ps(l, _mm_movehl_ps(l, l));
    return _mm_cvtss_f32(_mm_add_ss(l, _mm_movehdup_ps(l)));
}

/* 8 int32: lane k = sum_{b<4} u[4k+b] s[4k+b], u unsigned, s signed bytes */
static TARGET inline __m256i FN(dot_us)(__m256i u, __m256i s) {
#ifdef VNNI
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#else
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

/* acc + the same with each pair of bytes' sum weighted by the int16 lane of sc16 */
static TARGET inline __m256i FN(dot_us_scaled)(__m256i u, __m256i s, __m256i sc16, __m256i acc) {
    const __m256i p16 = _mm256_maddubs_epi16(u, s);
#ifdef VNNI
    return _mm256_dpwssd_epi32(acc, p16, sc16);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p16, sc16));
#endif
}

/* signed x . signed y as |x| . sign(y, x) */
static TARGET inline __m256i FN(dot_ss)(__m256i x, __m256i y) { return FN(dot_us)(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x)); }

static TARGET float FN(dot_q4_0)(int n, const void * vx, const void * vy) {
    const block_q4_0 * x = vx;
    const block_q8_0 * y = vy;
    const __m128i m4 = _mm_set1_epi8(0xf);
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < n / QK4_0; i++) {
        const __m128i b = _mm_loadu_si128((const __m128i *) x[i].qs);
        /* elements 0..15: low nibbles, 16..31: high nibbles */
        const __m256i q = _mm256_sub_epi8(_mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), m4), _mm_and_si128(b, m4)),
                                          _mm256_set1_epi8(8));
        const __m256i p = FN(dot_ss)(q, _mm256_loadu_si256((const __m256i *) y[i].qs));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(x[i].d) * _cvtsh_ss(y[i].d)), _mm256_cvtepi32_ps(p), acc);
    }
    return FN(hsum)(acc);
}
DOT_API_X(q4_0)

/* Q4_K: upstream's 6-bit scales and mins of the 8 sub-blocks, unpacked from
 * the 12 bytes a word at a time (little-endian): bytes 0..7 of the result
 * are the scales, 8..15 the mins. The mins' term dmin sum_s m_s (bsums of
 * s's two 16-runs) is a second accumulator, in integers within the block. */
static TARGET float FN(dot_q4_K)(int n, const void * vx, const void * vy) {
    const block_q4_K * x = vx;
    const block_q8_K * y = vy;
    const __m256i m4 = _mm256_set1_epi8(0xf);
    __m256 acc = _mm256_setzero_ps();
    __m128 accm = _mm_setzero_ps();
    for (int i = 0; i < n / QK_K; i++) {
        uint32_t u[4];
        memcpy(u, x[i].scales, 12);
        u[3] = ((u[2] >> 4) & 0x0f0f0f0fu) | (((u[1] >> 6) & 0x03030303u) << 4);  /* mins 4..7 */
        const uint32_t mins_lo = u[1] & 0x3f3f3f3fu;                               /* mins 0..3 */
        u[1] = (u[2] & 0x0f0f0f0fu) | (((u[0] >> 6) & 0x03030303u) << 4);          /* scales 4..7 */
        u[2] = mins_lo;
        u[0] &= 0x3f3f3f3fu;                                                       /* scales 0..3 */
        /* the 8 scales as int16 in both halves; scale s broadcast by a byte shuffle */
        const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(_mm_set_epi32(0, 0, (int) u[1], (int) u[0])));
        /* sum_s m_s (bsums[2s] + bsums[2s + 1]) in 4 int32 lanes */
        const __m128i bs = _mm_hadd_epi16(_mm_loadu_si128((const __m128i *) y[i].bsums), _mm_loadu_si128((const __m128i *) (y[i].bsums + 8)));
        const __m128i pm = _mm_madd_epi16(_mm_cvtepu8_epi16(_mm_set_epi32(0, 0, (int) u[3], (int) u[2])), bs);
        __m256i isum = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {  /* 64 elements: sub-block 2j in the low nibbles, 2j + 1 in the high */
            const __m256i q = _mm256_loadu_si256((const __m256i *) (x[i].qs + 32 * j));
            const __m256i s0 = _mm256_shuffle_epi8(sc16, _mm256_set1_epi16((short) (0x0100 + 0x0404 * j)));
            const __m256i s1 = _mm256_shuffle_epi8(sc16, _mm256_set1_epi16((short) (0x0302 + 0x0404 * j)));
            isum = FN(dot_us_scaled)(_mm256_and_si256(q, m4), _mm256_loadu_si256((const __m256i *) (y[i].qs + 64 * j)), s0, isum);
            isum = FN(dot_us_scaled)(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4),
                                     _mm256_loadu_si256((const __m256i *) (y[i].qs + 64 * j + 32)), s1, isum);
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * _cvtsh_ss(x[i].d)), _mm256_cvtepi32_ps(isum), acc);
        accm = _mm_fmadd_ps(_mm_set1_ps(y[i].d * _cvtsh_ss(x[i].dmin)), _mm_cvtepi32_ps(pm), accm);
    }
    accm = _mm_add_ps(accm, _mm_movehl_ps(accm, accm));
    return FN(hsum)(acc) - _mm_cvtss_f32(_mm_add_ss(accm, _mm_movehdup_ps(accm)));
}
DOT_API_X(q4_K)

/* Element 128h + 32g + l: low nibble of ql[64h + 32(g%2) + l] (the high one
 * for g >= 2), bits 2g, 2g+1 of qh[32h + l]; u = those six bits, q6 = u - 32 */
static TARGET float FN(dot_q6_K)(int n, const void * vx, const void * vy) {
    const block_q6_K * x = vx;
    const block_q8_K * y = vy;
    const __m256i m4 = _mm256_set1_epi8(0xf), m3 = _mm256_set1_epi8(3);
    const __m256i pick = _mm256_set_epi8(3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0);
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < n / QK_K; i++) {
        /* the 16 scales as int16; dword k holds scales 2k and 2k + 1 */
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) x[i].scales));
        /* - 32 sum_s sc_s bsums_s, in the integer sum (exact: |isum| < 2^29) */
        __m256i isum = _mm256_slli_epi32(_mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *) y[i].bsums)), 5);
        isum = _mm256_sub_epi32(_mm256_setzero_si256(), isum);
        for (int h = 0; h < 2; h++) {
            const __m256i ql0 = _mm256_loadu_si256((const __m256i *) (x[i].ql + 64 * h));
            const __m256i ql1 = _mm256_loadu_si256((const __m256i *) (x[i].ql + 64 * h + 32));
            const __m256i qh = _mm256_loadu_si256((const __m256i *) (x[i].qh + 32 * h));
            __m256i u[4];
            u[0] = _mm256_or_si256(_mm256_and_si256(ql0, m4), _mm256_slli_epi16(_mm256_and_si256(qh, m3), 4));
            u[1] = _mm256_or_si256(_mm256_and_si256(ql1, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m3), 4));
            u[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), m3), 4));
            u[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), m3), 4));
            for (int g = 0; g < 4; g++) {  /* 32 elements: sub-blocks 8h + 2g and 8h + 2g + 1 */
                /* scale 8h + 2g in the low half, 8h + 2g + 1 in the high half */
                const __m256i s16 = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(sc16, _mm256_set1_epi32(4 * h + g)), pick);
                isum = FN(dot_us_scaled)(u[g], _mm256_loadu_si256((const __m256i *) (y[i].qs + 128 * h + 32 * g)), s16, isum);
            }
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(y[i].d * _cvtsh_ss(x[i].d)), _mm256_cvtepi32_ps(isum), acc);
    }
    return FN(hsum)(acc);
}
DOT_API_X(q6_K)

#ifndef VNNI  /* the AVX-512 build has 512-bit ones (quant_dot.c) */
static TARGET float FN(dot_q8_0)(int n, const void * vx, const void * vy) {
    const block_q8_0 * x = vx, * y = vy;
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < n / QK8_0; i++) {
        const __m256i p = FN(dot_ss)(_mm256_loadu_si256((const __m256i *) x[i].qs), _mm256_loadu_si256((const __m256i *) y[i].qs));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(_cvtsh_ss(x[i].d) * _cvtsh_ss(y[i].d)), _mm256_cvtepi32_ps(p), acc);
    }
    return FN(hsum)(acc);
}
DOT_API_X(q8_0)

static TARGET float FN(dot_f16)(int n, const void * vx, const void * vy) {
    const uint16_t * x = vx, * y = vy;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (x + i))),
                             _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (y + i))), a0);
        a1 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (x + i + 8))),
                             _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (y + i + 8))), a1);
    }
    float sum = FN(hsum)(_mm256_add_ps(a0, a1));
    for (; i < n; i++) sum += _cvtsh_ss(x[i]) * _cvtsh_ss(y[i]);
    return sum;
}
DOT_API_X(f16)

/* bf16 -> f32 is a 16-bit shift */
static TARGET inline __m256 FN(bf16x8)(const uint16_t * p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *) p)), 16));
}

static TARGET float FN(dot_bf16)(int n, const void * vx, const void * vy) {
    const uint16_t * x = vx, * y = vy;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_fmadd_ps(FN(bf16x8)(x + i), FN(bf16x8)(y + i), a0);
        a1 = _mm256_fmadd_ps(FN(bf16x8)(x + i + 8), FN(bf16x8)(y + i + 8), a1);
    }
    float sum = FN(hsum)(_mm256_add_ps(a0, a1));
    for (; i < n; i++) {
        union { uint32_t u; float f; } a = {(uint32_t) x[i] << 16}, b = {(uint32_t) y[i] << 16};
        sum += a.f * b.f;
    }
    return sum;
}
DOT_API_X(bf16)
#endif

#undef QD_CAT_
#undef QD_CAT
#undef FN
#undef DOT_API_E
#undef DOT_API_X

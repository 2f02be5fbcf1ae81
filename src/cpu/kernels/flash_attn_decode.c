/* flash_attn_decode.c -- the forward of fused attention for at most
 * DECODE_MAX_ROWS query rows per head: generation from a KV cache (N = 1).
 *
 * The tiled kernel (flash_attn.c) computes micro-tiles of 6 query rows and
 * first packs every K tile transposed: with one live row, 5/6 of its products
 * are on padding and the transpose reads and writes the whole cache once more,
 * both growing with the cache's length. Here one task is query row n of up to
 * DECODE_HEADS query heads that share kv head hk (GQA), so that each key and
 * value row is read from memory once for all of them, where it lies:
 *   s_m = scale q.k_m  (softcap c > 0: c tanh(s_m / c)),  s_m += slope_h mask[m, n]
 *   mx = max(max_m s_m, sink_h),  p_m = e^(s_m - mx),  l = sum_m p_m (+ e^(sink_h - mx))
 *   out = (sum_m p_m v_m) / l        (l = 0, every key masked and no sink: out = 0)
 * an exact two-pass softmax over the row's M scores (M floats of scratch per
 * head). Keys and values go in blocks of DECODE_KEYS rows: the scores of a
 * block are one dot_rows per head (the dot products of 8 keys folded
 * together, not summed one key at a time), a block that every head masks is
 * not read, and P V runs up to the last live key. One thread computes a
 * whole row, so the result does not depend on the thread count. */
#include "cpu/kernels/flash_attn_impl.h"

#include <math.h>

#define DECODE_KEYS 64   /* keys and values per block (converted here when not F32 rows) */
#define SCORE_ALIGN 16   /* a head's scores: a multiple of this many floats (the exponential's vector width divides it) */

/* At most DECODE_MAX_ROWS query rows of at least one head (empty shapes stay
 * with the tiled kernel, which writes nothing for them). ggml_flash_attn_back's
 * phase 1 takes the same path for the same shapes, so its statistics and
 * outputs are those autodiff's backward reads (bit for bit). */
bool ggmlr_fa_decode_fits(const struct fa * a) { return !a->bf16 && a->N >= 1 && a->N <= DECODE_MAX_ROWS && a->group >= 1; }

static int64_t heads_per_task(const struct fa * a) { return a->group < DECODE_HEADS ? a->group : DECODE_HEADS; }

/* floats of one head's scores: M, padded with -Inf up to a multiple of SCORE_ALIGN */
static int64_t score_floats(const struct fa * a) { return (a->M + SCORE_ALIGN - 1) / SCORE_ALIGN * SCORE_ALIGN; }

/* one block of cache rows converted to F32: DECODE_KEYS rows of DK or DV */
static int64_t block_floats(const struct fa * a) { return DECODE_KEYS * (a->DK > a->DV ? a->DK : a->DV); }

/* per thread, per head of a task: the scores, the output row [DVp], the
 * query row [row floats]; then a block of converted cache rows and its dot products */
size_t ggmlr_fa_decode_floats(const struct fa * a) {
    const int64_t wide = ggmlr_fa_row_floats(a);
    return (size_t) (heads_per_task(a) * (score_floats(a) + a->DVp + wide) + block_floats(a) + DECODE_KEYS + 64);
}

/* slope * mask[m] of a mask row, -Inf kept (0 * -Inf would be NaN) */
static float mask_at(const struct ggml_tensor * mk, const char * row, int64_t m, float slope) {
    const float x = mk->type == GGML_TYPE_F32 ? *(const float *) (row + m * mk->nb[0]) : ggmlr_load_f32(mk->type, row + m * mk->nb[0]);
    return x == -INFINITY ? x : slope * x;
}

/* Rows [m0, m0 + nk) of kv head hk of the cache x (K or V, rows of `width`)
 * as F32 rows and their stride: where they lie when they are F32 rows, else
 * converted into buf. (Prefetching the next block's rows, a cache row
 * apart, measured no faster: the hardware's stride prefetcher follows them.) */
static const float * cache_rows(const struct ggml_tensor * x, int64_t width, const struct fa_decode_task * t, int64_t m0, int64_t nk,
                                float * buf, int64_t * ld) {
    if (x->type == GGML_TYPE_F32 && x->nb[0] == sizeof(float) && x->nb[1] % sizeof(float) == 0) {
        *ld = (int64_t) (x->nb[1] / sizeof(float));
        return (const float *) ggmlr_elem_ptr(x, 0, m0, t->hk, t->b);
    }
    for (int64_t j = 0; j < nk; j++) {
        const float * row = ggmlr_row_f32(x, m0 + j, t->hk, t->b, buf + j * width);
        if (row != buf + j * width) memcpy(buf + j * width, row, (size_t) width * sizeof(float));
    }
    *ld = width;
    return buf;
}

/* s[g][m] for every key: the scores of the task's heads (rows of
 * score_floats), -Inf where masked and in the padding; returns each head's
 * max into smax[g]. Keys in blocks of DECODE_KEYS: a block that every head
 * masks is not read, the others are read once for all the heads. */
static void scores(const struct fa * a, const struct fa_decode_task * t, const float * const * q, float * s, float * kbuf, float * dots,
                   float * smax) {
    const int64_t Ms = score_floats(a);
    const char * mrow[DECODE_HEADS];
    float slope[DECODE_HEADS];
    for (int64_t g = 0; g < t->G; g++) {
        const int64_t h = t->h0 + g;
        slope[g] = ggmlr_alibi_slope(a->max_bias, h, a->H);
        mrow[g] = a->mask ? ggmlr_elem_ptr(a->mask, 0, t->n, h % a->mask->ne[2], t->b % a->mask->ne[3]) : NULL;
        smax[g] = -INFINITY;
        for (int64_t m = a->M; m < Ms; m++) s[g * Ms + m] = -INFINITY;
    }
    for (int64_t m0 = 0; m0 < a->M; m0 += DECODE_KEYS) {
        const int64_t nk = a->M - m0 < DECODE_KEYS ? a->M - m0 : DECODE_KEYS;
        bool live = false;  /* the mask's terms first: slope mask (0 without one), -Inf kept */
        for (int64_t g = 0; g < t->G; g++)
            for (int64_t j = 0; j < nk; j++) {
                const float add = mrow[g] ? mask_at(a->mask, mrow[g], m0 + j, slope[g]) : 0.0f;
                s[g * Ms + m0 + j] = add;
                live |= add != -INFINITY;
            }
        if (!live) continue;
        int64_t ld;
        const float * k = cache_rows(a->k, a->DK, t, m0, nk, kbuf, &ld);
        for (int64_t g = 0; g < t->G; g++) {
            float * sg = s + g * Ms + m0;
            a->vec->dot_rows(a->DK, nk, q[g], k, ld, dots);
            for (int64_t j = 0; j < nk; j++) {
                if (sg[j] == -INFINITY) continue;
                float x = a->scale * dots[j];
                if (a->softcap > 0.0f) x = a->softcap * tanhf(x / a->softcap);
                sg[j] = x + sg[j];
                if (sg[j] > smax[g]) smax[g] = sg[j];
            }
        }
    }
}

/* The task's rows: outputs into o[g] (rows of DVp), each head's max and log-sum into mx[g], lsum[g]. */
static void decode_task(const struct fa * a, const struct fa_decode_task * t, float * w, float * mx, float * lsum) {
    const int64_t wide = ggmlr_fa_row_floats(a), G = t->G, Ms = score_floats(a);
    float * s = w, * o = s + G * Ms, * qbuf = o + G * a->DVp, * buf = qbuf + G * wide, * dots = buf + block_floats(a);
    const float * q[DECODE_HEADS];
    for (int64_t g = 0; g < G; g++) q[g] = ggmlr_row_f32(a->q, t->n, t->h0 + g, t->b, qbuf + g * wide);
    float smax[DECODE_HEADS], l[DECODE_HEADS];
    scores(a, t, q, s, buf, dots, smax);
    int64_t live_end = 0;  /* 1 + the last key some head attends */
    for (int64_t g = 0; g < G; g++) {
        float * sg = s + g * Ms;
        const float sink = a->sinks ? *(const float *) ggmlr_elem_ptr(a->sinks, t->h0 + g, 0, 0, 0) : -INFINITY;
        const float ref = smax[g] > sink ? smax[g] : sink;
        memset(o + g * a->DVp, 0, (size_t) a->DVp * sizeof(float));
        mx[g] = ref;
        l[g] = 0.0f;
        if (ref == -INFINITY) continue;  /* nothing attended: out = 0 */
        a->vec->tile_exp_rows(1, Ms, Ms, sg, &ref, &l[g]);  /* p = e^(s - ref), l = sum p; the padding gives 0 */
        if (sink != -INFINITY) l[g] += expf(sink - ref);
        int64_t end = a->M;
        while (end > live_end && sg[end - 1] == 0.0f) end--;
        if (end > live_end) live_end = end;
    }
    for (int64_t m0 = 0; m0 < live_end; m0 += DECODE_KEYS) {
        const int64_t nk = live_end - m0 < DECODE_KEYS ? live_end - m0 : DECODE_KEYS;
        int64_t ld;
        const float * vr = cache_rows(a->v, a->DV, t, m0, nk, buf, &ld);
        for (int64_t g = 0; g < G; g++)
            if (l[g] > 0.0f) a->vec->gemv_acc(a->DV, nk, s + g * Ms + m0, vr, ld, o + g * a->DVp);
    }
    for (int64_t g = 0; g < G; g++) {
        if (l[g] > 0.0f) a->vec->scal(a->DV, 1.0f / l[g], o + g * a->DVp);
        else mx[g] = -INFINITY;  /* a fully masked row: -Inf and 0, as the tiled kernel stores */
        lsum[g] = l[g] > 0.0f ? logf(l[g]) : 0.0f;
    }
}

int64_t ggmlr_fa_decode_n_tasks(const struct fa * a) {
    const int64_t GH = heads_per_task(a);
    return a->B * a->Hkv * a->N * ((a->group + GH - 1) / GH);
}

struct fa_decode_task ggmlr_fa_decode_run(const struct fa * a, int64_t task, float * w, float * mx, float * lsum) {
    const int64_t GH = heads_per_task(a), chunks = (a->group + GH - 1) / GH, c = task % chunks;
    struct fa_decode_task t;
    t.n = (task / chunks) % a->N;
    t.hk = (task / (chunks * a->N)) % a->Hkv;
    t.b = task / (chunks * a->N * a->Hkv);
    t.h0 = t.hk * a->group + c * GH;
    t.G = a->group - c * GH < GH ? a->group - c * GH : GH;
    t.o = w + t.G * score_floats(a);
    decode_task(a, &t, w, mx, lsum);
    return t;
}

void ggmlr_fa_decode(const struct ggmlr_compute_params * p, const struct fa * a, struct ggml_tensor * dst) {
    struct fa_shared * sh = p->shared;
    ggmlr_fa_start_node(p, sh);
    /* the row statistics, for a backward that does not run the forward again */
    float * st = ggmlr_flash_attn_srcs_decode(dst).stats->data;
    const int64_t rows = a->B * a->H * a->N;
    int64_t task;
    while (next_task(&sh->counter[1], ggmlr_fa_decode_n_tasks(a), &task)) {
        float mx[DECODE_HEADS], lsum[DECODE_HEADS];
        const struct fa_decode_task t = ggmlr_fa_decode_run(a, task, p->wdata, mx, lsum);
        for (int64_t g = 0; g < t.G; g++) {
            const int64_t row = (t.b * a->H + t.h0 + g) * a->N + t.n;  /* the statistics' row order */
            st[row] = mx[g];
            st[rows + row] = lsum[g];
            memcpy(ggmlr_elem_ptr(dst, 0, t.h0 + g, t.n, t.b), t.o + g * a->DVp, (size_t) a->DV * sizeof(float));
        }
    }
}

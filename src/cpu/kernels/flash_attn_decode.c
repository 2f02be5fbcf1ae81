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
 * head); a key whose mask is -Inf is not read, and P V runs over blocks of
 * DECODE_KEYS values up to the block's last live key. One thread computes a
 * whole row, so the result does not depend on the thread count. */
#include "cpu/kernels/flash_attn_impl.h"

#include <math.h>

#define DECODE_KEYS 64   /* values per P V block (converted here when not F32 rows) */
#define DECODE_AHEAD 8   /* keys between a prefetch and its use */

/* At most DECODE_MAX_ROWS query rows of at least one head (empty shapes stay
 * with the tiled kernel, which writes nothing for them). ggml_flash_attn_back's
 * phase 1 takes the same path for the same shapes, so its statistics and
 * outputs are those autodiff's backward reads (bit for bit). */
bool ggmlr_fa_decode_fits(const struct fa * a) { return !a->bf16 && a->N >= 1 && a->N <= DECODE_MAX_ROWS && a->group >= 1; }

static int64_t heads_per_task(const struct fa * a) { return a->group < DECODE_HEADS ? a->group : DECODE_HEADS; }

/* per thread, per head of a task: the scores [M], the output row [DVp], the
 * query row [row floats]; then one converted key row and a block of values */
size_t ggmlr_fa_decode_floats(const struct fa * a) {
    const int64_t wide = ggmlr_fa_row_floats(a);
    return (size_t) (heads_per_task(a) * (a->M + a->DVp + wide) + wide + DECODE_KEYS * a->DVp + 64);
}

/* Starts loading the cache lines of [p, p + bytes), those only (a row of one
 * kv head lies between other heads' rows). */
static inline void prefetch_row(const void * p, int64_t bytes) {
    const uintptr_t first = (uintptr_t) p & ~(uintptr_t) 63, last = ((uintptr_t) p + (uintptr_t) bytes - 1) & ~(uintptr_t) 63;
    for (uintptr_t line = first; line <= last; line += 64) __builtin_prefetch((const void *) line);
}

/* slope * mask[m] of a mask row, -Inf kept (0 * -Inf would be NaN) */
static float mask_at(const struct ggml_tensor * mk, const char * row, int64_t m, float slope) {
    const float x = mk->type == GGML_TYPE_F32 ? *(const float *) (row + m * mk->nb[0]) : ggmlr_load_f32(mk->type, row + m * mk->nb[0]);
    return x == -INFINITY ? x : slope * x;
}

/* s[g][m] for every key: the scores of the task's heads, -Inf where masked;
 * returns each head's max into smax[g] */
static void scores(const struct fa * a, const struct fa_decode_task * t, const float * const * q, float * s, float * tmp, float * smax) {
    const char * mrow[DECODE_HEADS];
    float slope[DECODE_HEADS];
    for (int64_t g = 0; g < t->G; g++) {
        const int64_t h = t->h0 + g;
        slope[g] = ggmlr_alibi_slope(a->max_bias, h, a->H);
        mrow[g] = a->mask ? ggmlr_elem_ptr(a->mask, 0, t->n, h % a->mask->ne[2], t->b % a->mask->ne[3]) : NULL;
        smax[g] = -INFINITY;
    }
    const bool k_rows = a->k->type == GGML_TYPE_F32 && a->k->nb[0] == sizeof(float);
    for (int64_t m = 0; m < a->M; m++) {
        /* the keys lie a cache row apart and miss the caches: ask for one
         * DECODE_AHEAD rows on while this one is computed */
        if (k_rows && m + DECODE_AHEAD < a->M) prefetch_row(ggmlr_elem_ptr(a->k, 0, m + DECODE_AHEAD, t->hk, t->b), a->DK * (int64_t) sizeof(float));
        const float * k = NULL;  /* read (or converted) once, for the first head that needs it */
        for (int64_t g = 0; g < t->G; g++) {
            float * sg = s + g * a->M;
            const float add = mrow[g] ? mask_at(a->mask, mrow[g], m, slope[g]) : 0.0f;
            if (add == -INFINITY) { sg[m] = -INFINITY; continue; }
            if (!k) k = ggmlr_row_f32(a->k, m, t->hk, t->b, tmp);
            float x = a->scale * a->vec->dot(a->DK, q[g], k);
            if (a->softcap > 0.0f) x = a->softcap * tanhf(x / a->softcap);
            sg[m] = x + add;
            if (sg[m] > smax[g]) smax[g] = sg[m];
        }
    }
}

/* Rows of values [m0, m0 + nk) as F32 rows and their stride: where they lie
 * when they are F32 rows, else converted into buf (rows of DV). */
static const float * value_rows(const struct fa * a, const struct fa_decode_task * t, int64_t m0, int64_t nk, float * buf, int64_t * ld) {
    const struct ggml_tensor * v = a->v;
    if (v->type == GGML_TYPE_F32 && v->nb[0] == sizeof(float) && v->nb[1] % sizeof(float) == 0) {
        *ld = (int64_t) (v->nb[1] / sizeof(float));
        return (const float *) ggmlr_elem_ptr(v, 0, m0, t->hk, t->b);
    }
    for (int64_t j = 0; j < nk; j++) {
        const float * row = ggmlr_row_f32(v, m0 + j, t->hk, t->b, buf + j * a->DV);
        if (row != buf + j * a->DV) memcpy(buf + j * a->DV, row, (size_t) a->DV * sizeof(float));
    }
    *ld = a->DV;
    return buf;
}

/* The task's rows: outputs into o[g] (rows of DVp), each head's max and log-sum into mx[g], lsum[g]. */
static void decode_task(const struct fa * a, const struct fa_decode_task * t, float * w, float * mx, float * lsum) {
    const int64_t wide = ggmlr_fa_row_floats(a), G = t->G;
    float * s = w, * o = s + G * a->M, * qbuf = o + G * a->DVp, * tmp = qbuf + G * wide, * vbuf = tmp + wide;
    const float * q[DECODE_HEADS];
    for (int64_t g = 0; g < G; g++) q[g] = ggmlr_row_f32(a->q, t->n, t->h0 + g, t->b, qbuf + g * wide);
    float smax[DECODE_HEADS], l[DECODE_HEADS];
    scores(a, t, q, s, tmp, smax);
    int64_t live_end = 0;  /* 1 + the last key some head attends */
    for (int64_t g = 0; g < G; g++) {
        float * sg = s + g * a->M;
        const float sink = a->sinks ? *(const float *) ggmlr_elem_ptr(a->sinks, t->h0 + g, 0, 0, 0) : -INFINITY;
        const float ref = smax[g] > sink ? smax[g] : sink;
        memset(o + g * a->DVp, 0, (size_t) a->DVp * sizeof(float));
        mx[g] = ref;
        l[g] = 0.0f;
        if (ref == -INFINITY) continue;  /* nothing attended: out = 0 */
        for (int64_t m = 0; m < a->M; m++) sg[m] -= ref;
        a->vec->exp(a->M, sg, sg);
        l[g] = sink != -INFINITY ? expf(sink - ref) : 0.0f;
        for (int64_t m = 0; m < a->M; m++) l[g] += sg[m];
        int64_t end = a->M;
        while (end > live_end && sg[end - 1] == 0.0f) end--;
        if (end > live_end) live_end = end;
    }
    for (int64_t m0 = 0; m0 < live_end; m0 += DECODE_KEYS) {
        const int64_t nk = live_end - m0 < DECODE_KEYS ? live_end - m0 : DECODE_KEYS;
        int64_t ld;
        const float * vr = value_rows(a, t, m0, nk, vbuf, &ld);
        if (vr != vbuf && m0 + DECODE_KEYS < live_end)  /* the next block's rows, while this one is summed */
            for (int64_t j = 0; j < DECODE_KEYS && m0 + DECODE_KEYS + j < live_end; j++)
                prefetch_row(vr + (DECODE_KEYS + j) * ld, a->DV * (int64_t) sizeof(float));
        for (int64_t g = 0; g < G; g++)
            if (l[g] > 0.0f) a->vec->gemv_acc(a->DV, nk, s + g * a->M + m0, vr, ld, o + g * a->DVp);
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
    t.o = w + t.G * a->M;
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

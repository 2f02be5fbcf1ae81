/* lightning_indexer.c -- DeepSeek's lightning indexer scores
 * (GGML_OP_LIGHTNING_INDEXER), any input layout, k of any type with a row
 * converter:
 *   res[kv, t, 0, s] = sum_h max(q[:, h, t, s] . k[:, 0, kv, s], 0) w[h, t, 0, s] + mask[kv, t, 0, s % S']
 * Split by result rows (t, s); each key row is converted once per result
 * row, the H dot products then share it. */
#include "cpu/kernels/kernels.h"

/* scratch: q's H rows, one key row, the weights' row, the mask's row */
static size_t indexer_work_size(const struct ggml_tensor * dst) {
    const struct ggmlr_lightning_indexer_srcs s = ggmlr_lightning_indexer_srcs_decode(dst);
    const size_t d = (size_t) s.q->ne[0], h = (size_t) s.q->ne[1];
    return ((h + 1) * d + h + (size_t) dst->ne[0]) * sizeof(float);
}

static void indexer_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_lightning_indexer_srcs s = ggmlr_lightning_indexer_srcs_decode(dst);
    const int64_t d = s.q->ne[0], nh = s.q->ne[1];
    float * qbuf = p->wdata, * kbuf = qbuf + nh * d, * wbuf = kbuf + d, * mbuf = wbuf + nh;
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, t, i2, st;
    while (ggmlr_next_row(&rows, &r, &t, &i2, &st)) {
        /* the H query rows of (t, st), side by side in qbuf */
        for (int64_t h = 0; h < nh; h++) {
            const float * qr = ggmlr_row_f32(s.q, h, t, st, qbuf + h * d);
            if (qr != qbuf + h * d) memcpy(qbuf + h * d, qr, (size_t) d * sizeof(float));
        }
        const float * w = ggmlr_row_f32(s.weights, t, 0, st, wbuf);
        const float * m = ggmlr_row_f32(s.mask, t, 0, st % s.mask->ne[3], mbuf);
        float * y = ggmlr_elem_ptr(dst, 0, t, 0, st);
        for (int64_t kv = 0; kv < dst->ne[0]; kv++) {
            const float * kr = ggmlr_row_f32(s.k, 0, kv, st, kbuf);
            float score = 0.0f;
            for (int64_t h = 0; h < nh; h++) {
                const float * qh = qbuf + h * d;
                float dot = 0.0f;
                for (int64_t i = 0; i < d; i++) dot += qh[i] * kr[i];
                score += (dot > 0.0f ? dot : 0.0f) * w[h];
            }
            y[kv] = score + m[kv];
        }
    }
}

GGMLR_KERNEL(lightning_indexer, indexer_forward, indexer_work_size, NULL);

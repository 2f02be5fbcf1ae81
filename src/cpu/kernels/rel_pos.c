/* rel_pos.c -- SAM's windowed attention, row by row, any input layout:
 *   WIN_PART    y[:, i1, i2, px + npx*py] = a[:, px*w + i1, py*w + i2] (0 past a's edge)
 *   WIN_UNPART  y[:, i1, i2] = a[:, i1 % w, i2 % w, i1/w + npx*(i2/w)], npx = ceil(w0 / w)
 *   GET_REL_POS y[:, i1, i2] = a[:, k - 1 - i1 + i2] (F32 or F16, copied as stored)
 *   GET_REL_POS_BACK  da[:, p] = sum over i2 of dy[:, k - 1 - p + i2, i2], i2 in ascending order
 *   ADD_REL_POS y[kw + K*kh, r, b] = a[kw + K*kh, r, b] + pw[kw, r, b] + ph[kh, r, b],
 *               pw's and ph's row r at (r % R1, r / R1, b)
 * Each kernel splits dst's rows over the threads, so any thread count gives
 * the same bits. */
#include "cpu/kernels/kernels.h"

/* dst's row (i1, i2, i3) = src's row (j1, j2, j3), elements of one type copied as they are */
static void copy_row(struct ggml_tensor * dst, int64_t i1, int64_t i2, int64_t i3, const struct ggml_tensor * src, int64_t j1, int64_t j2,
                     int64_t j3) {
    const size_t es = ggml_type_size(dst->type);
    char * y = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
    const char * x = ggmlr_elem_ptr(src, 0, j1, j2, j3);
    if (src->nb[0] == es) { memcpy(y, x, (size_t) dst->ne[0] * es); return; }
    for (int64_t i = 0; i < dst->ne[0]; i++) memcpy(y + (size_t) i * es, x + (size_t) i * src->nb[0], es);
}

static void win_part_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_win_part_params wp = ggmlr_win_part_params_decode(dst);
    const struct ggml_tensor * a = dst->src[0];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const int64_t x = (i3 % wp.npx) * wp.w + i1, y = (i3 / wp.npx) * wp.w + i2;
        if (x < a->ne[1] && y < a->ne[2]) copy_row(dst, i1, i2, i3, a, x, y, 0);
        else memset(ggmlr_elem_ptr(dst, 0, i1, i2, i3), 0, (size_t) dst->ne[0] * sizeof(float));
    }
}

static void win_unpart_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const int64_t w = ggmlr_i32_param_decode(dst), npx = (dst->ne[1] + w - 1) / w;
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) copy_row(dst, i1, i2, i3, dst->src[0], i1 % w, i2 % w, i1 / w + npx * (i2 / w));
}

static void get_rel_pos_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const int64_t k = dst->ne[1];
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) copy_row(dst, i1, i2, i3, dst->src[0], k - 1 - i1 + i2, 0, 0);
}

/* scratch: one row of dy */
static size_t row_work_size(const struct ggml_tensor * dst) { return (size_t) dst->ne[0] * sizeof(float); }

static void get_rel_pos_backward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * dy = dst->src[0];
    const int64_t n = dst->ne[0], k = dy->ne[1];
    if (n == 0) return;  /* no scratch then */
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t pos, i1, i2, i3;
    while (ggmlr_next_row(&rows, &pos, &i1, &i2, &i3)) {
        float * da = ggmlr_elem_ptr(dst, 0, pos, 0, 0);
        memset(da, 0, (size_t) n * sizeof(float));
        /* the diagonal i1 - i2 = k - 1 - pos of dy */
        const int64_t lo = pos - (k - 1) > 0 ? pos - (k - 1) : 0, hi = pos < k - 1 ? pos : k - 1;
        for (int64_t j = lo; j <= hi; j++) {
            const float * g = ggmlr_row_f32(dy, k - 1 - pos + j, j, 0, p->wdata);
            for (int64_t i = 0; i < n; i++) da[i] += g[i];
        }
    }
}

/* scratch: a's row, then pw's and ph's */
static size_t add_rel_pos_work_size(const struct ggml_tensor * dst) {
    return ((size_t) dst->ne[0] + 2 * (size_t) ggmlr_add_rel_pos_srcs_decode(dst).pw->ne[0]) * sizeof(float);
}

static void add_rel_pos_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_add_rel_pos_srcs s = ggmlr_add_rel_pos_srcs_decode(dst);
    const int64_t k = s.pw->ne[0], r1 = s.pw->ne[1];
    if (k == 0) return;  /* empty rows, no scratch */
    float * abuf = p->wdata, * wbuf = abuf + dst->ne[0], * hbuf = wbuf + k;
    /* in place, pw or ph may lie in a's memory: then one thread takes every row */
    struct ggmlr_rows rows = ggmlr_my_dst_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        /* in place, x and y are one row: each element is read before it is written */
        const float * x = ggmlr_row_f32(s.a, i1, i2, 0, abuf);
        const float * pw = ggmlr_row_f32(s.pw, i1 % r1, i1 / r1, i2, wbuf);
        const float * ph = ggmlr_row_f32(s.ph, i1 % r1, i1 / r1, i2, hbuf);
        float * y = ggmlr_elem_ptr(dst, 0, i1, i2, 0);
        for (int64_t kh = 0; kh < k; kh++)
            for (int64_t kw = 0; kw < k; kw++) y[kw + k * kh] = x[kw + k * kh] + pw[kw] + ph[kh];
    }
}

GGMLR_KERNEL(win_part, win_part_forward, NULL, NULL);
GGMLR_KERNEL(win_unpart, win_unpart_forward, NULL, NULL);
GGMLR_KERNEL(get_rel_pos, get_rel_pos_forward, NULL, NULL);
GGMLR_KERNEL(get_rel_pos_back, get_rel_pos_backward, row_work_size, NULL);
GGMLR_KERNEL(add_rel_pos, add_rel_pos_forward, add_rel_pos_work_size, NULL);

/* acc.c -- acc: b added into a strided region of a copy of a, of zeros, or
 * of a itself (core/op_params.h: struct ggmlr_acc_params). */
#include "cpu/kernels/kernels.h"

/* Whether b's rows land on disjoint elements of dst (each stride at least the
 * extent of the block below it, as for any view): then they can be added by
 * different threads. */
static bool acc_rows_disjoint(const struct ggml_tensor * b, const size_t st[3]) {
    size_t extent = (size_t) b->ne[0] * sizeof(float);
    for (int d = 1; d < 4; d++) {
        if (b->ne[d] <= 1) continue;
        if (st[d - 1] < extent) return false;
        extent += st[d - 1] * (size_t) (b->ne[d] - 1);
    }
    return true;
}

/* dst = a (or zeros; nothing when dst is a itself), then b added into the
 * region (nb1..nb3, offset) of dst. Phase 1 splits dst's bytes over the
 * threads; phase 2 splits b's rows when they land on disjoint elements, else
 * thread 0 adds them all, in order. */
static void ggmlr_compute_acc(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const struct ggmlr_acc_params prm = ggmlr_acc_params_decode(dst);
    const bool zero_base = prm.zero_base != 0;
    int64_t e0, e1;
    ggmlr_split(ggml_nelements(dst), p->ith, p->nth, &e0, &e1);
    float * d = dst->data;
    if (zero_base || d != a->data) {  /* else in place: dst is a */
        if (zero_base) memset(d + e0, 0, (size_t) (e1 - e0) * sizeof(float));
        else memcpy(d + e0, (const float *) a->data + e0, (size_t) (e1 - e0) * sizeof(float));
        ggmlr_barrier(p);
    }
    /* an empty b adds nothing (its strides were never checked against a: no row address is formed) */
    if (ggml_nelements(b) == 0) return;
    const bool disjoint = acc_rows_disjoint(b, (const size_t[3]) {prm.nb1, prm.nb2, prm.nb3});
    if (!disjoint && p->ith != 0) return;
    struct ggmlr_rows rows = ggmlr_my_rows(p, b);
    if (!disjoint) rows.next = 0, rows.end = ggml_nrows(b);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        float * t = (float *) ((char *) dst->data + prm.offset + i1 * prm.nb1 + i2 * prm.nb2 + i3 * prm.nb3);
        const char * brow = ggmlr_elem_ptr(b, 0, i1, i2, i3);
        if (b->nb[0] == sizeof(float)) {  /* packed rows: a loop that vectorises */
            const float * x = (const float *) brow;
            for (int64_t i0 = 0; i0 < b->ne[0]; i0++) t[i0] += x[i0];
        } else {
            for (int64_t i0 = 0; i0 < b->ne[0]; i0++) t[i0] += *(const float *) (brow + i0 * b->nb[0]);
        }
    }
}

GGMLR_KERNEL(acc, ggmlr_compute_acc, NULL, NULL);

/* acc.c -- acc: b added into a strided region of a copy of a, of zeros, or
 * of a itself (core/op_list.h: struct ggmlr_acc_params); set: b written
 * over such a region of a copy of a or of a (struct ggmlr_set_params). */
#include "cpu/kernels/kernels.h"

/* The region b lands in: its strides and byte offset in dst, and whether b's
 * rows are added (acc, F32) or copied (set, any 4-byte element). */
struct region { size_t st[3], offset; bool overwrite; };

/* dst = a (or zeros; nothing when dst is a itself), then b added into or
 * written over the region of dst. Phase 1 splits dst's bytes over the
 * threads; phase 2 splits b's rows when they land on disjoint elements, else
 * thread 0 handles them all, in order (a later row wins, or adds last). */
static void region_compute(const struct ggmlr_compute_params * p, struct ggml_tensor * dst, const struct region * rg, bool zero_base) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    int64_t e0, e1;
    ggmlr_split(ggml_nelements(dst), p->ith, p->nth, &e0, &e1);
    char * d = dst->data;
    const size_t es = ggml_type_size(dst->type);  /* 4: F32 or I32 */
    if (zero_base || d != a->data) {  /* else in place: dst is a */
        if (zero_base) memset(d + e0 * es, 0, (size_t) (e1 - e0) * es);
        else memcpy(d + e0 * es, (const char *) a->data + e0 * es, (size_t) (e1 - e0) * es);
        ggmlr_barrier(p);
    }
    /* an empty b writes nothing (its strides were never checked against a: no row address is formed) */
    if (ggml_nelements(b) == 0) return;
    const bool disjoint = ggmlr_region_rows_disjoint(b->ne, es, rg->st);
    if (!disjoint && p->ith != 0) return;
    struct ggmlr_rows rows = ggmlr_my_rows(p, b);
    if (!disjoint) rows.next = 0, rows.end = ggml_nrows(b);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        char * t = d + rg->offset + i1 * rg->st[0] + i2 * rg->st[1] + i3 * rg->st[2];
        const char * brow = ggmlr_elem_ptr(b, 0, i1, i2, i3);
        if (rg->overwrite) {
            if (b->nb[0] == es) memcpy(t, brow, (size_t) b->ne[0] * es);
            else for (int64_t i0 = 0; i0 < b->ne[0]; i0++) memcpy(t + i0 * es, brow + i0 * b->nb[0], es);
        } else if (b->nb[0] == sizeof(float)) {  /* packed rows: a loop that vectorises */
            const float * x = (const float *) brow;
            for (int64_t i0 = 0; i0 < b->ne[0]; i0++) ((float *) t)[i0] += x[i0];
        } else {
            for (int64_t i0 = 0; i0 < b->ne[0]; i0++) ((float *) t)[i0] += *(const float *) (brow + i0 * b->nb[0]);
        }
    }
}

static void ggmlr_compute_acc(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_acc_params prm = ggmlr_acc_params_decode(dst);
    const struct region rg = {{prm.nb1, prm.nb2, prm.nb3}, prm.offset, false};
    region_compute(p, dst, &rg, prm.zero_base != 0);
}

static void ggmlr_compute_set(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_set_params prm = ggmlr_set_params_decode(dst);
    const struct region rg = {{(size_t) prm.nb1, (size_t) prm.nb2, (size_t) prm.nb3}, (size_t) prm.offset, true};
    region_compute(p, dst, &rg, false);
}

GGMLR_KERNEL(acc, ggmlr_compute_acc, NULL, NULL);
GGMLR_KERNEL(set, ggmlr_compute_set, NULL, NULL);

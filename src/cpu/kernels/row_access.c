/* row_access.c -- how the kernels read and split rows: a row as F32
 * (converted when it is not packed F32, dequantized for a block type), and the rows of a destination that
 * may overlap its own inputs or itself (kernels.h). */
#include "cpu/kernels/kernels.h"

const float * ggmlr_row_f32(const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3, float * scratch) {
    const char * row = (const char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
    if (t->type == GGML_TYPE_F32 && t->nb[0] == sizeof(float)) return (const float *) row;
    if (t->type == GGML_TYPE_F16 && t->nb[0] == sizeof(ggml_fp16_t)) {
        ggml_fp16_to_fp32_row((const ggml_fp16_t *) row, scratch, t->ne[0]);
    } else if (ggml_is_quantized(t->type)) {   /* a row of whole blocks, always packed */
        ggmlr_type_traits_own(t->type)->to_float(row, scratch, t->ne[0]);
    } else {
        for (int64_t i = 0; i < t->ne[0]; i++) scratch[i] = ggmlr_load_f32(t->type, row + i * t->nb[0]);
    }
    return scratch;
}

static bool same_elements(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->data != b->data || a->type != b->type) return false;
    for (int i = 0; i < GGML_MAX_DIMS; i++) if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i]) return false;
    return true;
}

/* Byte ranges [data, data + span) intersect. */
static bool bytes_overlap(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    const char * a0 = a->data, * b0 = b->data;
    const size_t na = ggmlr_tensor_nbytes_span(a), nb = ggmlr_tensor_nbytes_span(b);
    return na > 0 && nb > 0 && a0 < b0 + nb && b0 < a0 + na;
}

/* Can two rows of t share an element? Sufficient test for "no": with the
 * dims 1..3 that have more than one index sorted by stride, each stride is
 * at least the extent of the rows below it. */
static bool rows_may_overlap(const struct ggml_tensor * t) {
    int dims[3], n = 0;
    for (int d = 1; d < GGML_MAX_DIMS; d++) if (t->ne[d] > 1) dims[n++] = d;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t->nb[dims[j]] < t->nb[dims[j - 1]]; j--) { const int x = dims[j]; dims[j] = dims[j - 1]; dims[j - 1] = x; }
    if (t->ne[0] == 0) return false;
    size_t extent = ggml_is_quantized(t->type) ? ggml_row_size(t->type, t->ne[0])  /* a row of whole blocks, packed */
                                                : (size_t) (t->ne[0] - 1) * t->nb[0] + ggml_type_size(t->type);
    for (int i = 0; i < n; i++) {
        if (t->nb[dims[i]] < extent) return true;
        extent += (size_t) (t->ne[dims[i]] - 1) * t->nb[dims[i]];
    }
    return false;
}

struct ggmlr_rows ggmlr_my_dst_rows(const struct ggmlr_compute_params * p, const struct ggml_tensor * dst) {
    if (rows_may_overlap(dst)) {  /* rows that share elements: one thread writes them, in order */
        struct ggmlr_rows rows = {dst, 0, p->ith == 0 ? ggml_nrows(dst) : 0};
        return rows;
    }
    for (int s = 0; s < GGML_MAX_SRC; s++) {
        const struct ggml_tensor * src = dst->src[s];
        if (src && src->data && !same_elements(src, dst) && bytes_overlap(src, dst)) {
            struct ggmlr_rows rows = {dst, 0, p->ith == 0 ? ggml_nrows(dst) : 0};
            return rows;
        }
    }
    return ggmlr_my_rows(p, dst);
}

/* fill.c -- generators: fill (every element := c, F32 or F16, packed) and
 * arange (element i := start + step * i in float, as upstream). Threads split
 * the elements. */
#include "cpu/kernels/kernels.h"

static void ggmlr_compute_fill(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const float c = ggmlr_f32_param_decode(dst);
    int64_t e0, e1;
    ggmlr_split(ggml_nelements(dst), p->ith, p->nth, &e0, &e1);
    if (dst->type == GGML_TYPE_F16) {
        const ggml_fp16_t h = ggml_fp32_to_fp16(c);
        for (int64_t i = e0; i < e1; i++) ((ggml_fp16_t *) dst->data)[i] = h;
    } else {
        for (int64_t i = e0; i < e1; i++) ((float *) dst->data)[i] = c;
    }
}

static void ggmlr_compute_arange(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_arange_params prm = ggmlr_arange_params_decode(dst);
    int64_t e0, e1;
    ggmlr_split(ggml_nelements(dst), p->ith, p->nth, &e0, &e1);
    for (int64_t i = e0; i < e1; i++) ((float *) dst->data)[i] = prm.start + prm.step * (float) i;
}

GGMLR_KERNEL(fill, ggmlr_compute_fill, NULL, NULL);
GGMLR_KERNEL(arange, ggmlr_compute_arange, NULL, NULL);

/* mul_mat_quant.c -- mul_mat of a stored weight a (a quantized type; BF16
 * for at most VEC_COLS columns) by F32 activations b through the CPU type
 * traits' dot products (cpu/simd/cpu_traits.c), as upstream's CPU backend
 * computes it:
 *   phase 0: every column b[:, j, i2, i3] is quantized once to a's
 *            vec_dot_type (from_float) into shared scratch, columns split
 *            over the threads;
 *   phase 1: dst[i, j, i2, i3] = vec_dot(a[:, i, i2 / r2, i3 / r3], q_j).
 * Tasks are blocks of ROWS rows of one plane of dst, split into contiguous
 * shares over the threads; a task walks its columns in blocks of COLS, each
 * row of a against every column of the block, so that the row stays in L1
 * and the block of quantized columns in L2. With few columns (token
 * generation) this is a row-parallel matrix-vector product that streams a
 * once. Every element is one dot product of the same operands whatever
 * thread computes it, so the result does not depend on the thread count.
 * Accuracy: the product of the stored weights with the activations rounded
 * to vec_dot_type (Q8_0, Q8_1, Q8_K: d = amax / 127 per block), as upstream. */
#include "cpu/kernels/kernels.h"

#include "ggml-cpu.h"

#define VEC_COLS 8   /* BF16 weights: the vector path up to this many columns, the GEMM beyond */
#define ROWS 16      /* rows of a per task */
#define COLS 32      /* quantized columns per block: 32 x 4096 Q8_K is 146 KB */

bool ggmlr_mul_mat_quant_applies(const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    if (dst->op != GGML_OP_MUL_MAT || a->ne[0] > INT32_MAX) return false;
    if (!ggml_is_quantized(a->type) && !(a->type == GGML_TYPE_BF16 && a->nb[0] == 2 && b->ne[1] <= VEC_COLS)) return false;
    const struct ggml_type_traits_cpu * t = ggml_get_type_traits_cpu(a->type);
    return t->vec_dot && ggml_get_type_traits_cpu(t->vec_dot_type)->from_float;
}

static size_t col_bytes(const struct ggml_tensor * dst) {
    return ggml_row_size(ggml_get_type_traits_cpu(dst->src[0]->type)->vec_dot_type, dst->src[0]->ne[0]);
}

size_t ggmlr_mul_mat_quant_shared_size(const struct ggml_tensor * dst) {
    const struct ggml_tensor * b = dst->src[1];
    return (size_t) (b->ne[1] * b->ne[2] * b->ne[3]) * col_bytes(dst);
}

size_t ggmlr_mul_mat_quant_work_size(const struct ggml_tensor * dst) { return (size_t) dst->src[1]->ne[0] * sizeof(float); }

void ggmlr_mul_mat_quant(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const struct ggml_type_traits_cpu * t = ggml_get_type_traits_cpu(a->type);
    const ggml_from_float_t quantize = ggml_get_type_traits_cpu(t->vec_dot_type)->from_float;
    const int K = (int) a->ne[0];
    const int64_t M = a->ne[1], N = b->ne[1], planes = b->ne[2] * b->ne[3];
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    const size_t cb = col_bytes(dst);
    char * cols = p->shared;

    /* phase 0: column c = (plane, j), in plane-major order */
    for (int64_t c = p->ith; c < N * planes; c += p->nth) {
        const int64_t j = c % N, plane = c / N;
        quantize(ggmlr_row_f32(b, j, plane % b->ne[2], plane / b->ne[2], p->wdata), cols + (size_t) c * cb, K);
    }
    ggmlr_barrier(p);

    /* phase 1: task = (plane of dst, block of ROWS rows) */
    const int64_t blocks = (M + ROWS - 1) / ROWS;
    int64_t task, last;
    ggmlr_split(planes * blocks, p->ith, p->nth, &task, &last);
    for (; task < last; task++) {
        const int64_t plane = task / blocks, i0 = task % blocks * ROWS, i1 = i0 + ROWS < M ? i0 + ROWS : M;
        const int64_t i2 = plane % b->ne[2], i3 = plane / b->ne[2];
        const char * arows = (const char *) a->data + (i2 / r2) * a->nb[2] + (i3 / r3) * a->nb[3];
        const char * pcols = cols + (size_t) (plane * N) * cb;
        for (int64_t j0 = 0; j0 < N; j0 += COLS) {
            const int64_t j1 = j0 + COLS < N ? j0 + COLS : N;
            for (int64_t i = i0; i < i1; i++)
                for (int64_t j = j0; j < j1; j++)
                    t->vec_dot(K, (float *) ggmlr_elem_ptr(dst, i, j, i2, i3), 0, arows + i * a->nb[1], 0, pcols + (size_t) j * cb, 0, 1);
        }
    }
}

/* conv_gemm.c -- CONV_2D's forward as packed patches times the kernel, on
 * the GEMM micro-kernels of cpu/simd (the direct loops of conv_direct.c run
 * at axpy speed; this is the product that upstream's CPU backend also makes).
 *
 * With K = IC KH KW taps, k = (ic KH + ky) KW + kx, and the output positions
 * of one image p = oy OW + ox:
 *   B[k][p]  = data[ox s0 + kx d0 - p0, oy s1 + ky d1 - p1, ic, n]  (0 outside)
 *   A[oc][k] = kernel[kx, ky, ic, oc]
 *   out[ox, oy, oc, n] = sum_k A[oc][k] B[k][p], the sum in k order.
 * A unit of work is one image's run of PCOLS positions: its B panel is packed
 * once (PCOLS columns, zero past the last position), then every block of
 * GGMLR_TILE_R output channels (their A rows converted to F32) is multiplied
 * with it tile_c columns at a time. Each output is one fixed sequence of
 * multiply-adds whoever computes it, so the result does not depend on the
 * thread count. Every tensor is read and written through its strides (F32
 * data and output, F32 or F16 kernel; upstream's cwhn layout is a view). */
#include "cpu/kernels/conv_gemm.h"

#define PCOLS 256                      /* a multiple of every path's tile_c (8, 16, 64) */
#define MAX_SCRATCH ((size_t) 64 << 20) /* per thread; larger K: the direct loops */

static inline float load(enum ggml_type type, const char * ptr) {
    return type == GGML_TYPE_F32 ? *(const float *) ptr : ggml_fp16_to_fp32(*(const ggml_fp16_t *) ptr);
}

static int64_t taps(const struct ggml_tensor * dst) { return dst->src[0]->ne[0] * dst->src[0]->ne[1] * dst->src[0]->ne[2]; }

/* the B panel (K x PCOLS), the A block (TILE_R x K) and a C tile (TILE_R x tile_c) */
size_t ggmlr_conv_gemm_work_size(const struct ggml_tensor * dst) {
    if (dst->op != GGML_OP_CONV_2D || dst->type != GGML_TYPE_F32 || dst->src[1]->type != GGML_TYPE_F32) return 0;
    const int64_t k = taps(dst);
    if (k <= 0 || ggml_nelements(dst) == 0 || k > (int64_t) (MAX_SCRATCH / sizeof(float) / (PCOLS + GGMLR_TILE_R))) return 0;
    return ((size_t) k * (PCOLS + GGMLR_TILE_R) + (size_t) GGMLR_TILE_R * (size_t) ggmlr_vec()->tile_c) * sizeof(float);
}

/* B[k][c] for the positions p0 + c of image n (c < PCOLS) */
static void pack_patches(const struct ggml_tensor * dst, const struct ggmlr_conv_direct_params * cp, int64_t n, int64_t p0, float * b) {
    const struct ggml_tensor * kern = dst->src[0], * data = dst->src[1];
    const int64_t kw = kern->ne[0], kh = kern->ne[1], ic_n = kern->ne[2], iw = data->ne[0], ih = data->ne[1];
    const int64_t ow = dst->ne[0], np = dst->ne[0] * dst->ne[1];
    for (int64_t ic = 0; ic < ic_n; ic++)
        for (int64_t ky = 0; ky < kh; ky++)
            for (int64_t kx = 0; kx < kw; kx++, b += PCOLS) {
                int64_t c = 0, p = p0, oy = p0 / ow, ox = p0 % ow;
                for (; c < PCOLS && p < np; c++, p++) {
                    const int64_t ix = ox * cp->s0 + kx * cp->d0 - cp->p0, iy = oy * cp->s1 + ky * cp->d1 - cp->p1;
                    b[c] = ix >= 0 && ix < iw && iy >= 0 && iy < ih
                               ? *(const float *) ((const char *) data->data + (size_t) ix * data->nb[0] + (size_t) iy * data->nb[1] +
                                                   (size_t) ic * data->nb[2] + (size_t) n * data->nb[3])
                               : 0.0f;
                    if (++ox == ow) { ox = 0; oy++; }
                }
                for (; c < PCOLS; c++) b[c] = 0.0f;
            }
}

/* A's rows oc0 .. oc0 + rows - 1 in F32, k order; the row pointers repeat row 0 past rows */
static void pack_kernel_rows(const struct ggml_tensor * kern, int64_t oc0, int64_t rows, float * a, const float ** ap) {
    const int64_t k_n = kern->ne[0] * kern->ne[1] * kern->ne[2];
    for (int64_t r = 0; r < GGMLR_TILE_R; r++) ap[r] = a + (r < rows ? r : 0) * k_n;
    for (int64_t r = 0; r < rows; r++) {
        float * row = a + r * k_n;
        for (int64_t ic = 0; ic < kern->ne[2]; ic++)
            for (int64_t ky = 0; ky < kern->ne[1]; ky++)
                for (int64_t kx = 0; kx < kern->ne[0]; kx++)
                    *row++ = load(kern->type, (const char *) kern->data + (size_t) kx * kern->nb[0] + (size_t) ky * kern->nb[1] +
                                                  (size_t) ic * kern->nb[2] + (size_t) (oc0 + r) * kern->nb[3]);
    }
}

void ggmlr_conv_gemm_forward(const struct ggmlr_compute_params * prm, struct ggml_tensor * dst) {
    const struct ggmlr_conv_direct_params cp = ggmlr_conv_direct_params_decode(dst);
    const struct ggmlr_vec_ops * v = ggmlr_vec();
    const int64_t k_n = taps(dst), ow = dst->ne[0], np = dst->ne[0] * dst->ne[1], oc_n = dst->ne[2], tc = v->tile_c;
    const int64_t chunks = (np + PCOLS - 1) / PCOLS;
    float * b = prm->wdata, * a = b + (size_t) k_n * PCOLS, * c = a + (size_t) k_n * GGMLR_TILE_R;
    int64_t u, end;
    ggmlr_split(chunks * dst->ne[3], prm->ith, prm->nth, &u, &end);
    for (; u < end; u++) {
        const int64_t n = u / chunks, p0 = u % chunks * PCOLS, cols = np - p0 < PCOLS ? np - p0 : PCOLS;
        pack_patches(dst, &cp, n, p0, b);
        for (int64_t oc0 = 0; oc0 < oc_n; oc0 += GGMLR_TILE_R) {
            const int64_t rows = oc_n - oc0 < GGMLR_TILE_R ? oc_n - oc0 : GGMLR_TILE_R;
            const float * ap[GGMLR_TILE_R];
            pack_kernel_rows(dst->src[0], oc0, rows, a, ap);
            for (int64_t j0 = 0; j0 < cols; j0 += tc) {
                v->gemm_6xc_store(k_n, ap, b + j0, PCOLS, c, tc, NULL, NULL);
                const int64_t jn = cols - j0 < tc ? cols - j0 : tc;
                for (int64_t r = 0; r < rows; r++) {
                    int64_t p = p0 + j0, oy = p / ow, ox = p % ow;
                    for (int64_t j = 0; j < jn; j++) {
                        *(float *) ((char *) dst->data + (size_t) ox * dst->nb[0] + (size_t) oy * dst->nb[1] + (size_t) (oc0 + r) * dst->nb[2] +
                                    (size_t) n * dst->nb[3]) = c[r * tc + j];
                        if (++ox == ow) { ox = 0; oy++; }
                    }
                }
            }
        }
    }
}

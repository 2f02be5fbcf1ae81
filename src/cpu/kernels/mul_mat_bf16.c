/* mul_mat_bf16.c -- mul_mat and out_prod of F32 operands at GGML_PREC_BF16,
 * where the CPU multiplies bf16 (cpu/simd/bf16_gemm.h: AVX512_BF16 or AMX):
 *   dst[i, j] = sum_k bf16(P(i, k)) bf16(X(j, k))   (FP32 sums)
 * with P, X the operands seen as in mul_mat.c (mul_mat: P = a, X = b, k
 * along ne0; out_prod: k along ne1).
 *   phase 0: P is packed once per plane into vnni blocks of 16 rows i, X
 *            into row blocks of 16 columns j, both rounded to bf16 as they
 *            are packed and padded with zeros to whole 32 x 32 blocks and
 *            to K rounded up to 32 (the tiles' step);
 *   phase 1: task = (plane of dst, block of 32 rows i, block of 32 columns j),
 *            one 32 x 32 micro-kernel over the whole reduction, stored
 *            straight into dst when the block is whole and dst's rows are
 *            packed, else through a 32 x 32 scratch.
 * Tasks run j fastest, so a block of P stays in cache across the columns;
 * each element is computed by one task in a fixed order, so the result does
 * not depend on the thread count. */
#include "cpu/kernels/kernels.h"
#include "cpu/simd/bf16_gemm.h"

#define BLK 32  /* rows and columns of one task's block */

struct bf16_gemm {
    struct ggmlr_bf16_view p, x;  /* P(i, k), X(j, k) at plane 0 */
    int64_t M, N, K, Kp, Mb, Nb; /* Mb, Nb: blocks of BLK */
    const struct ggml_tensor * a, * b;
};

static struct bf16_gemm gemm_of(const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    struct bf16_gemm g = {.a = a, .b = b};
    if (dst->op == GGML_OP_OUT_PROD) {
        g.p = (struct ggmlr_bf16_view) {a->data, a->nb[0], a->nb[1]};
        g.x = (struct ggmlr_bf16_view) {b->data, b->nb[0], b->nb[1]};
        g.M = a->ne[0]; g.N = b->ne[0]; g.K = a->ne[1];
    } else {
        g.p = (struct ggmlr_bf16_view) {a->data, a->nb[1], a->nb[0]};
        g.x = (struct ggmlr_bf16_view) {b->data, b->nb[1], b->nb[0]};
        g.M = a->ne[1]; g.N = b->ne[1]; g.K = a->ne[0];
    }
    g.Kp = (g.K + GGMLR_BF16_K - 1) / GGMLR_BF16_K * GGMLR_BF16_K;
    g.Mb = (g.M + BLK - 1) / BLK;
    g.Nb = (g.N + BLK - 1) / BLK;
    return g;
}

bool ggmlr_mul_mat_bf16_applies(const struct ggml_tensor * dst) {
    if (dst->op != GGML_OP_MUL_MAT && dst->op != GGML_OP_OUT_PROD) return false;
    if (ggmlr_mul_mat_params_decode(dst).prec != GGML_PREC_BF16) return false;
    if (dst->src[0]->type != GGML_TYPE_F32 || dst->src[1]->type != GGML_TYPE_F32) return false;
    return ggmlr_bf16_path() != NULL;
}

/* bytes of one plane's packed P and X */
static size_t p_plane_bytes(const struct bf16_gemm * g) { return (size_t) (g->Mb * BLK * g->Kp) * sizeof(uint16_t); }
static size_t x_plane_bytes(const struct bf16_gemm * g) { return (size_t) (g->Nb * BLK * g->Kp) * sizeof(uint16_t); }

size_t ggmlr_mul_mat_bf16_shared_size(const struct ggml_tensor * dst) {
    const struct bf16_gemm g = gemm_of(dst);
    return (size_t) (g.a->ne[2] * g.a->ne[3]) * p_plane_bytes(&g) + (size_t) (g.b->ne[2] * g.b->ne[3]) * x_plane_bytes(&g);
}

/* packing: 16 * Kp floats and 16 * Kp bf16; the product: a BLK x BLK block */
size_t ggmlr_mul_mat_bf16_work_size(const struct ggml_tensor * dst) {
    const struct bf16_gemm g = gemm_of(dst);
    return (size_t) (16 * g.Kp) * (sizeof(float) + sizeof(uint16_t)) + BLK * BLK * sizeof(float) + 64;
}

/* rows of a block of 16 from `start` that lie below n (0 for a padding block) */
static int64_t block_len(int64_t n, int64_t start) { return n - start >= 16 ? 16 : n - start > 0 ? n - start : 0; }

static struct ggmlr_bf16_view at_plane(struct ggmlr_bf16_view v, const struct ggml_tensor * t, int64_t plane) {
    v.base += (plane % t->ne[2]) * t->nb[2] + (plane / t->ne[2]) * t->nb[3];
    return v;
}

void ggmlr_mul_mat_bf16(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct bf16_gemm g = gemm_of(dst);
    const int64_t p_planes = g.a->ne[2] * g.a->ne[3], x_planes = g.b->ne[2] * g.b->ne[3];
    const int64_t p16 = 2 * g.Mb, x16 = 2 * g.Nb;  /* blocks of 16 per plane */
    uint16_t * ppack = p->shared, * xpack = (uint16_t *) ((char *) p->shared + (size_t) p_planes * p_plane_bytes(&g));
    float * ctile = p->wdata, * tmp = ctile + BLK * BLK;
    uint16_t * tmp16 = (uint16_t *) (tmp + 16 * g.Kp);

    /* phase 0: block t of P (plane, 16 rows i) or of X (plane, 16 columns j) */
    const int64_t n_p = p_planes * p16;
    for (int64_t t = p->ith; t < n_p + x_planes * x16; t += p->nth) {
        if (t < n_p) {
            const int64_t plane = t / p16, c0 = t % p16 * 16, nc = block_len(g.M, c0);
            const struct ggmlr_bf16_view v = at_plane(g.p, g.a, plane);
            ggmlr_bf16_pack_vnni(ppack + (size_t) t * 16 * (size_t) g.Kp, &v, c0, nc, g.K, g.Kp, tmp, tmp16);
        } else {
            const int64_t u = t - n_p, plane = u / x16, r0 = u % x16 * 16, nr = block_len(g.N, r0);
            const struct ggmlr_bf16_view v = at_plane(g.x, g.b, plane);
            ggmlr_bf16_pack_rows(xpack + (size_t) u * 16 * (size_t) g.Kp, &v, r0, nr, g.K, g.Kp, tmp);
        }
    }
    ggmlr_barrier(p);

    /* phase 1: task = (plane of dst, block of rows i, block of columns j) */
    const int64_t r2 = dst->ne[2] / g.a->ne[2], r3 = dst->ne[3] / g.a->ne[3];
    const bool packed_rows = dst->nb[0] == sizeof(float) && dst->nb[1] % sizeof(float) == 0;
    int64_t task, last;
    ggmlr_split(dst->ne[2] * dst->ne[3] * g.Mb * g.Nb, p->ith, p->nth, &task, &last);
    for (; task < last; task++) {
        const int64_t jb = task % g.Nb, ib = task / g.Nb % g.Mb, plane = task / (g.Nb * g.Mb);
        const int64_t i2 = plane % dst->ne[2], i3 = plane / dst->ne[2], pplane = i3 / r3 * g.a->ne[2] + i2 / r2;
        const uint16_t * pb = ppack + ((size_t) (pplane * p16 + 2 * ib) * 16) * (size_t) g.Kp;
        const uint16_t * xb = xpack + ((size_t) (plane * x16 + 2 * jb) * 16) * (size_t) g.Kp;
        const int64_t i0 = ib * BLK, j0 = jb * BLK;
        const int64_t ni = g.M - i0 < BLK ? g.M - i0 : BLK, nj = g.N - j0 < BLK ? g.N - j0 : BLK;
        const bool direct = packed_rows && ni == BLK && nj == BLK;
        float * c = direct ? ggmlr_elem_ptr(dst, i0, j0, i2, i3) : ctile;
        const int64_t ldc = direct ? (int64_t) (dst->nb[1] / sizeof(float)) : BLK;
        /* C[j][i]: the rows side is X (j), the vnni side P (i) */
        ggmlr_bf16_gemm_32x32(g.Kp, xb, xb + 16 * g.Kp, g.Kp, pb, pb + 16 * g.Kp, c, ldc);
        if (!direct)
            for (int64_t j = 0; j < nj; j++)
                for (int64_t i = 0; i < ni; i++) *(float *) ggmlr_elem_ptr(dst, i0 + i, j0 + j, i2, i3) = ctile[j * BLK + i];
    }
}

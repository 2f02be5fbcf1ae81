/* vec.h -- SIMD primitives chosen once at run time (AVX-512, AVX2+FMA+F16C or scalar). */
#ifndef GGMLR_VEC_H
#define GGMLR_VEC_H

#include <stdbool.h>
#include <stdint.h>

/* Rows of every GEMM micro-tile (columns depend on the ISA: tile_c). The
 * kernels are named gemm_6xc_* after this shape. */
#define GGMLR_TILE_R 6

struct ggmlr_vec_ops {
    const char * name;
    float (*dot)(int64_t n, const float * x, const float * y);
    void  (*scal)(int64_t n, float a, float * y);
    /* y[f] += sum_{m<k} p[m] rows[m * ld + f], f < n (one row of P V, y in registers) */
    void  (*gemv_acc)(int64_t n, int64_t k, const float * p, const float * rows, int64_t ld, float * y);
    /* y[m] = sum_{f<n} x[f] rows[m * ld + f], m < k (one query row's scores against k keys) */
    void  (*dot_rows)(int64_t n, int64_t k, const float * x, const float * rows, int64_t ld, float * y);
    /* GEMM micro-kernels (tile_impl.h), a 6 x tile_c block of C in registers for
     * the whole reduction; used by mul_mat and fused attention.
     * store: c[r][j]  = sum_{k<K} a[r][k] * b[k * ldb + j] (+ add[r * ldc + j]),
     *        rmax[r] = max(rmax[r], max_j c[r][j]) (add, rmax: may be NULL)
     * acc:   c[r][j] += sum_{k<K} a[r * ars + k * aks] * b[k * ldb + j]
     * 6xh: the same on tile_c / 2 columns */
    int   tile_c;
    void  (*gemm_6xc_store)(int64_t K, const float * const * a, const float * b, int64_t ldb, float * c, int64_t ldc,
                            const float * add, float * rmax);
    void  (*gemm_6xh_store)(int64_t K, const float * const * a, const float * b, int64_t ldb, float * c, int64_t ldc,
                            const float * add, float * rmax);
    void  (*gemm_6xc_acc)(int64_t K, const float * a, int64_t ars, int64_t aks, const float * b, int64_t ldb, float * const * c);
    void  (*gemm_6xh_acc)(int64_t K, const float * a, int64_t ars, int64_t aks, const float * b, int64_t ldb, float * const * c);
    /* attention softmax kernels (tile_impl.h) on rows of n scores (row stride ld), n a multiple of the vector width */
    void  (*tile_exp_rows)(int64_t rows, int64_t n, int64_t ld, float * s, const float * shift, float * sum);
    float (*tile_add_max)(int64_t n, float * s, const float * add);            /* returns the max */
    /* attention backward (tile_impl.h), products with the softmax in their epilogue, on tile_c columns
     * (half: tile_c / 2) of 6 rows (row stride ldc for c, mask, p; per row mx, lsum, D):
     * p:  c = P  = exp((sum_k a[r][k] * b[k * ldb + j] + mask - mx) - lsum)   (mask may be NULL)
     * ds: c = dS = p (sum_k a[r][k] * b[k * ldb + j] - D);  rows with mx = -Inf: 0 */
    void  (*gemm_6xc_p)(bool half, int64_t K, const float * const * a, const float * b, int64_t ldb, float * c, int64_t ldc,
                        const float * mask, const float * mx, const float * lsum);
    void  (*gemm_6xc_ds)(bool half, int64_t K, const float * const * a, const float * b, int64_t ldb, float * c, int64_t ldc,
                         const float * p, const float * mx, const float * D);
    /* packing (pack_impl.h): dst[i * ldd + r] = mul * src[r * lds + i] for r < 8, i < n */
    void  (*transpose8)(int64_t n, const float * src, int64_t lds, float mul, float * dst, int64_t ldd);
    /* n F16 mask elements: all -Inf? all +-0? returns 1 + the index of the last one that is not -Inf (0: none) */
    int64_t (*scan_f16_mask)(int64_t n, const uint16_t * x, bool * all_inf, bool * all_zero);
    /* activations (act_impl.h), any n: y = exp(x), y = gelu(x), dx = g * gelu'(x) */
    void  (*exp)(int64_t n, const float * x, float * y);
    void  (*gelu)(int64_t n, const float * x, float * y);
    void  (*gelu_back)(int64_t n, const float * g, const float * x, float * dx);
    /* y = x sigmoid(x), x sigmoid(1.702 x), x/2 erfc(-x / sqrt2); SWIGLU_OAI's y = x' sigmoid(alpha x') (g' + 1) */
    void  (*silu)(int64_t n, const float * x, float * y);
    void  (*gelu_quick)(int64_t n, const float * x, float * y);
    void  (*gelu_erf)(int64_t n, const float * x, float * y);
    void  (*oai)(int64_t n, const float * x, const float * g, float alpha, float limit, float * y, bool stream);
    /* GLU: y = act(x) g, act an enum ggml_unary_op: RELU, GELU, GELU_QUICK, GELU_ERF, else SILU.
     * stream (glu and oai): y is written with non-temporal stores where y is
     * aligned to the vector width (AVX2, AVX-512), for results larger than the cache; same values */
    void  (*glu)(int act, int64_t n, const float * x, const float * g, float * y, bool stream);
    /* y = x (n floats), written with non-temporal stores like glu's stream (plain
     * on the scalar path); stream_fence orders them before other threads' reads:
     * call it once after the last copy_stream of a run */
    void  (*copy_stream)(int64_t n, const float * x, float * y);
    void  (*stream_fence)(void);
    /* the norms' row sums and outputs, in double (vec_impl.h):
     * dot_dev = sum_i (x[i] - mu) (y[i] - nu), y = NULL: sum_i (x[i] - mu);
     * norm_apply: y = (x - mu) inv, or with g: y = (g - gmu - (x - mu) inv k) inv */
    double (*dot_dev)(int64_t n, const float * x, double mu, const float * y, double nu);
    void  (*norm_apply)(int64_t n, const float * x, double mu, double inv, const float * g, double gmu, double k, float * y);
    /* sum[i] += (double) x[i], i < n (vec_impl.h) */
    void  (*acc_f64)(int64_t n, const float * x, double * sum);
    /* pooling (vec_impl.h): acc[o] = acc[o] op in[o s + j] for j < k, o < n; op: max (a NaN never wins) or +;
     * avail: the floats readable at in (at least (n - 1) s + k) */
    void  (*pool_rows)(bool is_max, int64_t n, int64_t s, int64_t k, const float * in, int64_t avail, float * acc);
    /* IEEE binary16 rows (ggml_fp16_t), F16C on the x86 paths */
    void  (*fp16_to_fp32_row)(const uint16_t * x, float * y, int64_t n);
    void  (*fp32_to_fp16_row)(const float * x, uint16_t * y, int64_t n);
};

/* The best path this CPU supports; GGMLR_SIMD=scalar|avx2|avx512 narrows it. */
const struct ggmlr_vec_ops * ggmlr_vec(void);

#endif

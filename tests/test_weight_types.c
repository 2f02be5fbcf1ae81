/* test_weight_types.c -- mul_mat, out_prod, mul_mat_id and get_rows with a first
 * operand stored as F16, BF16 or a block type (a frozen or quantized weight,
 * an embedding table), against float64 products of its dequantized values
 * (to_float, itself checked against the documented layouts in test_quant);
 * bitwise alike on 1 and 3 threads; and the gradients through such a weight:
 * to the activations, and straight through ggml_cpy(W, quantized) to an F32
 * master copy W (QLoRA-style training of a model whose weights are stored
 * quantized). The op table's harness holds F32/F16/I32 inputs, so these
 * checks live here. */
#include "common/test_common.h"

#include "ggml-cpu.h"
#include "quant/quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { K = 256, M = 37, N = 5 };  /* K a multiple of every block size; M, N odd */

static const enum ggml_type types[] = {
    GGML_TYPE_F16,  GGML_TYPE_BF16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0,   GGML_TYPE_Q5_1,  GGML_TYPE_Q8_0, GGML_TYPE_Q2_K,
    GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_MXFP4,
    GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0,
};

/* t (ne0 a multiple of its block) quantized from uniform values; its values as to_float gives them, in logical order */
static double * fill_stored(struct ggml_tensor * t) {
    const int64_t n0 = t->ne[0], rows = ggml_nrows(t);
    float * src = malloc((size_t) (n0 * rows) * sizeof *src);
    double * v = malloc((size_t) (n0 * rows) * sizeof *v);
    float * back = malloc((size_t) n0 * sizeof *back);
    for (int64_t i = 0; i < n0 * rows; i++) src[i] = (float) tc_uniform(-1, 1);
    CHECK(ggml_quantize_chunk(t->type, src, t->data, 0, rows, n0, NULL) == ggml_nbytes(t), "%s: quantized %s", ggml_type_name(t->type),
          ggml_last_error());
    for (int64_t r = 0; r < rows; r++) {
        ggml_get_type_traits(t->type)->to_float((const char *) t->data + r * t->nb[1], back, n0);
        for (int64_t i = 0; i < n0; i++) v[r * n0 + i] = back[i];
    }
    free(src);
    free(back);
    return v;
}

static double * fill_f32(struct ggml_tensor * t) {
    double * v = malloc((size_t) ggml_nelements(t) * sizeof *v);
    tc_fill_uniform(t, -1, 1);
    for (int64_t i = 0; i < ggml_nelements(t); i++) v[i] = tc_get(t, i);
    return v;
}

/* Computes t on 1 and 3 threads (result poisoned first): the two agree bitwise; t's values after the last. */
static void compute_twice(struct ggml_context * ctx, struct ggml_tensor * t, const char * what) {
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, t);
    const size_t n = ggml_nbytes(t);
    void * first = malloc(n);
    for (int pass = 0; pass < 2; pass++) {
        tc_poison(t);
        CHECK(ggml_graph_compute_with_ctx(ctx, g, pass ? 3 : 1) == GGML_STATUS_SUCCESS, "%s: compute: %s", what, ggml_last_error());
        if (pass == 0) memcpy(first, t->data, n);
        else CHECK(memcmp(first, t->data, n) == 0, "%s: 1 and 3 threads differ", what);
    }
    free(first);
}

/* b's values as the product sees them: F32, or rounded to a's vec_dot_type
 * (the CPU traits' from_float, then to_float) where mul_mat quantizes the
 * activations, as upstream does (block types; BF16 up to 8 columns); for
 * Q8_1 also each block's stored sum s (fp16 of d sum q), which the products
 * of Q4_1 and Q5_1 use for their min's term, as upstream's do (else NULL) */
static void activations_seen(enum ggml_type type, int n_cols, const double * bv, double * seen, double * block_sums, int64_t n) {
    const struct ggml_type_traits_cpu * t = ggml_get_type_traits_cpu(type);
    const bool rounded = ggml_is_quantized(type) || (type == GGML_TYPE_BF16 && n_cols <= 8);
    float * f = malloc(K * sizeof *f), * back = malloc(K * sizeof *back);
    void * q = malloc(ggml_row_size(t->vec_dot_type, K));
    for (int64_t r = 0; r < n / K; r++) {
        for (int k = 0; k < K; k++) f[k] = (float) bv[r * K + k];
        if (rounded) {
            ggml_get_type_traits_cpu(t->vec_dot_type)->from_float(f, q, K);
            ggmlr_type_traits_own(t->vec_dot_type)->to_float(q, back, K);
            if (t->vec_dot_type == GGML_TYPE_Q8_1)
                for (int b = 0; b < K / QK8_1; b++) block_sums[r * (K / QK8_1) + b] = ggml_fp16_to_fp32(((const block_q8_1 *) q)[b].s);
        } else memcpy(back, f, K * sizeof *f);
        for (int k = 0; k < K; k++) seen[r * K + k] = back[k];
    }
    free(f); free(back); free(q);
}

/* Q4_1 / Q5_1 rows x = d q + m against Q8_1 activations y: the min's term
 * m sum y of each block is taken as m s (the stored sum), as upstream's dot
 * takes it: the product's x . y is sum_e x_e y_e + m (s - sum_e y_e) per block.
 * Both block types begin with the fp16 pair {d, m}. */
static double stored_sum_correction(const struct ggml_tensor * a, int64_t row, const double * y, const double * sums) {
    double c = 0;
    for (int b = 0; b < K / QK8_1; b++) {
        const char * block = (const char *) a->data + row * a->nb[1] + (size_t) b * ggml_type_size(a->type);
        double ysum = 0;
        for (int e = b * QK8_1; e < (b + 1) * QK8_1; e++) ysum += y[e];
        c += ggml_fp16_to_fp32(((const ggml_fp16_t *) block)[1]) * (sums[b] - ysum);
    }
    return c;
}

/* mul_mat: a [K, M, 2, 1] stored, b [K, n, 4, 1] of type tb (F32 or F16, its stored values):
 * y[m, j] = sum_k a[k, m] b[k, j], a's planes shared by pairs of b's; against float64 of the
 * dequantized a and b as the product sees it (float rounding only), and within the activations'
 * rounding of the product with b itself */
static void check_mul_mat(struct ggml_context * ctx, enum ggml_type type, int n, enum ggml_type tb) {
    const char * name = ggml_type_name(type);
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, type, K, M, 2, 1), * b = ggml_new_tensor_4d(ctx, tb, K, n, 4, 1);
    double * av = fill_stored(a), * bv = fill_f32(b), * bs = malloc((size_t) (K * n * 4) * sizeof *bs);
    double * sums = malloc((size_t) (n * 4 * (K / QK8_1)) * sizeof *sums);
    const bool stored_sums = ggml_get_type_traits_cpu(type)->vec_dot_type == GGML_TYPE_Q8_1;
    activations_seen(type, n, bv, bs, sums, K * n * 4);
    struct ggml_tensor * y = ggml_mul_mat(ctx, a, b);
    if (CHECK(y != NULL, "%s: mul_mat built: %s", name, ggml_last_error())) {
        double * ref = calloc((size_t) (M * n * 4), sizeof *ref), * ref_f32 = calloc((size_t) (M * n * 4), sizeof *ref_f32);
        for (int p = 0; p < 4; p++)
            for (int j = 0; j < n; j++)
                for (int m = 0; m < M; m++) {
                    double s = 0, sf = 0;
                    for (int k = 0; k < K; k++) {
                        s += av[((p / 2) * M + m) * K + k] * bs[(p * n + j) * K + k];
                        sf += av[((p / 2) * M + m) * K + k] * bv[(p * n + j) * K + k];
                    }
                    if (stored_sums) s += stored_sum_correction(a, (p / 2) * M + m, bs + (p * n + j) * K, sums + (p * n + j) * (K / QK8_1));
                    ref[(p * n + j) * M + m] = s;
                    ref_f32[(p * n + j) * M + m] = sf;
                }
        compute_twice(ctx, y, name);
        const double e = tc_rel_err_tensor(y, ref), ef = tc_rel_err_tensor(y, ref_f32);
        CHECK(e < 1e-5, "%s, %d columns of %s: mul_mat relative error %.3g vs float64 of the dequantized a and the activations as seen",
              name, n, ggml_type_name(tb), e);
        /* 8-bit activations (Q8_*: d = amax / 127 per block) or BF16 give ~0.4 % here */
        CHECK(ef < 1e-2, "%s, %d columns of %s: mul_mat relative error %.3g vs float64 with the activations as stored", name, n,
              ggml_type_name(tb), ef);
        free(ref);
        free(ref_f32);
    }
    free(av); free(bv); free(bs); free(sums);
}

enum { E = 3, NB = 2, U = 4, T = 4 };  /* mul_mat_id: experts, columns of b, experts used per token, tokens */

static int expert_of(int e, int t) { return ((t * U + e) * 5 + 1) % E; }

/* The gradient of y = mul_mat_id(as stored, b, ids) to b, L = sum(y * R):
 * db[k, j, t] = sum over e with e % NB = j of sum_m as[k, m, ids[e, t]] R[m, e, t] */
static void check_mul_mat_id_grad(struct ggml_context * ctx, struct ggml_tensor * y, struct ggml_tensor * b, const double * av,
                                  const char * name) {
    struct ggml_tensor * R = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, M, U, T);
    double * rv = fill_f32(R), * gb = calloc((size_t) (K * NB * T), sizeof *gb);
    ggml_set_param(b);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, y, R));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 256, true);
    ggml_build_forward_expand(g, loss);
    if (CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "%s: mul_mat_id backward: %s", name, ggml_last_error())) {
        ggml_graph_reset(g);
        CHECK(ggml_graph_compute_with_ctx(ctx, g, 3) == GGML_STATUS_SUCCESS, "%s: mul_mat_id backward compute: %s", name, ggml_last_error());
        for (int t = 0; t < T; t++)
            for (int e = 0; e < U; e++)
                for (int m = 0; m < M; m++)
                    for (int k = 0; k < K; k++)
                        gb[(t * NB + e % NB) * K + k] += av[(expert_of(e, t) * M + m) * K + k] * rv[(t * U + e) * M + m];
        const double err = tc_rel_err_tensor(ggml_graph_get_grad(g, b), gb);
        CHECK(err < 1e-5, "%s: mul_mat_id gradient of b through the stored experts: relative error %.3g", name, err);
    }
    free(rv); free(gb);
}

/* mul_mat_id: experts as [K, M, 3] stored, b [K, 2, 4] F32, ids [4, 4]:
 * y[m, e, t] = sum_k as[k, m, ids[e, t]] b[k, e % 2, t], against float64 of the dequantized experts */
static void check_mul_mat_id(struct ggml_context * ctx, enum ggml_type type) {
    const char * name = ggml_type_name(type);
    struct ggml_tensor * as = ggml_new_tensor_3d(ctx, type, K, M, E), * b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, K, NB, T);
    struct ggml_tensor * ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, U, T);
    for (int t = 0; t < T; t++)
        for (int e = 0; e < U; e++) ggml_set_i32_1d(ids, t * U + e, expert_of(e, t));
    double * av = fill_stored(as), * bv = fill_f32(b);
    struct ggml_tensor * y = ggml_mul_mat_id(ctx, as, b, ids);
    if (CHECK(y != NULL, "%s: mul_mat_id built: %s", name, ggml_last_error())) {
        double * ref = calloc((size_t) (M * U * T), sizeof *ref);
        for (int t = 0; t < T; t++)
            for (int e = 0; e < U; e++)
                for (int m = 0; m < M; m++) {
                    double s = 0;
                    for (int k = 0; k < K; k++) s += av[(expert_of(e, t) * M + m) * K + k] * bv[(t * NB + e % NB) * K + k];
                    ref[(t * U + e) * M + m] = s;
                }
        compute_twice(ctx, y, name);
        const double e = tc_rel_err_tensor(y, ref);
        CHECK(e < 1e-5, "%s: mul_mat_id relative error %.3g vs float64 of the dequantized experts", name, e);
        free(ref);
        check_mul_mat_id_grad(ctx, y, b, av, name);
    }
    free(av); free(bv);
}

static void test_type(enum ggml_type type) {
    const char * name = ggml_type_name(type);
    struct ggml_init_params ip = {64u << 20, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    check_mul_mat(ctx, type, N, GGML_TYPE_F32);
    check_mul_mat(ctx, type, 40, GGML_TYPE_F32);  /* past the vector path of BF16 and one block of columns */
    check_mul_mat(ctx, type, N, GGML_TYPE_F16);   /* F16 activations: read as stored */
    check_mul_mat(ctx, type, 40, GGML_TYPE_F16);
    check_mul_mat_id(ctx, type);
    /* out_prod: a [K, M] stored (K along ne0), b [N, M]: y[i, j] = sum_k a[i, k] b[j, k] */
    struct ggml_tensor * bo = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, N, M);
    struct ggml_tensor * a2 = ggml_new_tensor_2d(ctx, type, K, M);
    double * bov = fill_f32(bo), * a2v = fill_stored(a2);
    struct ggml_tensor * yo = ggml_out_prod(ctx, a2, bo);
    if (CHECK(yo != NULL, "%s: out_prod built: %s", name, ggml_last_error())) {
        double * ref = calloc((size_t) (K * N), sizeof *ref);
        for (int j = 0; j < N; j++)
            for (int i = 0; i < K; i++) {
                double s = 0;
                for (int k = 0; k < M; k++) s += a2v[k * K + i] * bov[k * N + j];
                ref[j * K + i] = s;
            }
        compute_twice(ctx, yo, name);
        const double e = tc_rel_err_tensor(yo, ref);
        CHECK(e < 1e-5, "%s: out_prod relative error %.3g vs float64 of the dequantized a", name, e);
        free(ref);
    }
    /* get_rows: the rows at the indices, dequantized exactly */
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, type, K, M, 2, 1);
    double * av = fill_stored(a);
    struct ggml_tensor * idx = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 6, 2);
    for (int i = 0; i < 12; i++) ggml_set_i32_1d(idx, i, (i * 7 + 3) % M);
    struct ggml_tensor * rows = ggml_get_rows(ctx, a, idx);
    if (CHECK(rows != NULL && rows->type == GGML_TYPE_F32, "%s: get_rows built: %s", name, ggml_last_error())) {
        compute_twice(ctx, rows, name);
        int bad = 0;
        for (int p = 0; p < 2; p++)
            for (int j = 0; j < 6; j++)
                for (int i = 0; i < K; i++)
                    bad += ggml_get_f32_nd(rows, i, j, p, 0) != (float) av[(p * M + ggml_get_i32_1d(idx, p * 6 + j)) * K + i];
        CHECK(bad == 0, "%s: get_rows: %d elements differ from to_float's", name, bad);
    }
    free(av);
    free(a2v);
    free(bov);
    ggml_free(ctx);
}

/* Gradients through W stored as type: y = mul_mat(cpy(W, type), x), L = sum(y * R).
 * dL/dx[k, n] = sum_m Wq[k, m] R[m, n]; dL/dW = dL/dWq (straight through the
 * copy) = sum_n x[k, n] R[m, n]; Wq the dequantized copy. */
static void test_gradients(enum ggml_type type) {
    const char * name = ggml_type_name(type);
    struct ggml_init_params ip = {64u << 20, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * W = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M), * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor * R = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, M, N);
    double * xv = fill_f32(x), * rv = fill_f32(R);
    free(fill_f32(W));
    ggml_set_param(W);
    ggml_set_param(x);
    struct ggml_tensor * Wq = ggml_cpy(ctx, W, ggml_new_tensor_2d(ctx, type, K, M));
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, ggml_mul_mat(ctx, Wq, x), R));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 256, true);
    ggml_build_forward_expand(g, loss);
    if (!CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "%s: backward through the stored weight: %s", name,
               ggml_last_error())) {
        ggml_free(ctx);
        return;
    }
    ggml_graph_reset(g);
    CHECK(ggml_graph_compute_with_ctx(ctx, g, 2) == GGML_STATUS_SUCCESS, "%s: compute: %s", name, ggml_last_error());
    double * wq = malloc((size_t) (K * M) * sizeof *wq), * gx = calloc((size_t) (K * N), sizeof *gx), * gw = calloc((size_t) (K * M), sizeof *gw);
    float * row = malloc(K * sizeof *row);
    for (int m = 0; m < M; m++) {
        ggml_get_type_traits(type)->to_float((const char *) Wq->data + m * Wq->nb[1], row, K);
        for (int k = 0; k < K; k++) wq[m * K + k] = row[k];
    }
    for (int n = 0; n < N; n++)
        for (int m = 0; m < M; m++)
            for (int k = 0; k < K; k++) {
                gx[n * K + k] += wq[m * K + k] * rv[n * M + m];
                gw[m * K + k] += xv[n * K + k] * rv[n * M + m];
            }
    const double ex = tc_rel_err_tensor(ggml_graph_get_grad(g, x), gx), ew = tc_rel_err_tensor(ggml_graph_get_grad(g, W), gw);
    CHECK(ex < 1e-5, "%s: the activations' gradient through the stored weight: relative error %.3g", name, ex);
    CHECK(ew < 1e-5, "%s: the master weight's gradient straight through the copy: relative error %.3g", name, ew);
    free(wq); free(gx); free(gw); free(row); free(xv); free(rv);
    ggml_free(ctx);
}

int main(void) {
    tc_seed(20261204);
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        test_type(types[t]);
        test_gradients(types[t]);
    }
    /* a block type's weight cannot itself be a parameter, and other ops still refuse it */
    struct ggml_init_params ip = {1u << 20, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 2), * f = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 2);
    CHECK(ggml_mul_mat(ctx, f, q) == NULL && strstr(ggml_last_error(), "F32"), "mul_mat refuses a quantized second operand");
    CHECK(ggml_add(ctx, q, q) == NULL && strstr(ggml_last_error(), "q8_0"), "add refuses quantized tensors: %s", ggml_last_error());
    ggml_free(ctx);
    printf("SIMD path: %s\n", ggml_cpu_simd_name());
    return tc_finish("weight_types");
}

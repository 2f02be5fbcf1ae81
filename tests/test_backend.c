/* test_backend.c -- the CPU backend with a no_alloc context: allocation of a
 * context's tensors in one buffer (views share their source's memory), data
 * transfer, graph compute with a thread count, autodiff in backend memory,
 * and freeing everything (AddressSanitizer checks for leaks). */
#include "common/test_common.h"

#include <stdlib.h>
#include <string.h>

enum { K = 13, M = 7, N = 5 };

static void fill(float * x, int n) { for (int i = 0; i < n; i++) x[i] = (float) tc_uniform(-1, 1); }

/* [data, data + nbytes) lies inside the buffer */
static bool inside(const struct ggml_tensor * t, ggml_backend_buffer_t buf) {
    const char * base = ggml_backend_buffer_get_base(buf);
    const char * d = t->data;
    return d && base && d >= base && d + ggml_nbytes(t) <= base + ggml_backend_buffer_get_size(buf);
}

static void test_alloc_and_compute(void) {
    struct ggml_init_params p = {32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
    struct ggml_context * ctx = ggml_init(p);
    if (!CHECK(ctx != NULL && ggml_get_no_alloc(ctx), "a no_alloc context")) return;
    ggml_backend_t be = ggml_backend_cpu_init();
    CHECK(be != NULL && ggml_backend_is_cpu(be) && strcmp(ggml_backend_name(be), "CPU") == 0, "CPU backend");

    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor * bias = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, M, 1);
    struct ggml_tensor * h = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 9);   /* an odd byte count (18) */
    struct ggml_tensor * va = ggml_view_1d(ctx, a, 10, 3 * sizeof(float));
    struct ggml_tensor * vva = ggml_view_1d(ctx, va, 4, 2 * sizeof(float));
    struct ggml_tensor * ra = ggml_reshape_2d(ctx, a, M, K);
    struct ggml_tensor * y = ggml_scale(ctx, ggml_add(ctx, ggml_mul_mat(ctx, a, b), bias), 0.5f);  /* [M, N] */
    struct ggml_tensor * s = ggml_sum(ctx, vva);
    CHECK(a->data == NULL && y->data == NULL && va->data == NULL, "no_alloc: tensors have no data before allocation");

    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
    if (!CHECK(buf != NULL, "alloc: %s", ggml_last_error())) { ggml_backend_free(be); ggml_free(ctx); return; }

    /* every tensor that owns memory is inside the buffer, and none overlap */
    struct ggml_tensor * owners[64];
    int n_owners = 0;
    size_t need = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        CHECK(t->data != NULL, "tensor %d has data after allocation", n_owners);
        if (t->view_src) continue;
        CHECK(inside(t, buf), "an allocated tensor lies inside the buffer");
        CHECK(((uintptr_t) t->data) % GGML_MEM_ALIGN == 0, "tensor data is aligned to GGML_MEM_ALIGN");
        need += ggml_nbytes(t);
        if (n_owners < 64) owners[n_owners++] = t;
    }
    int overlaps = 0;
    for (int i = 0; i < n_owners; i++)
        for (int j = i + 1; j < n_owners; j++) {
            const char * ai = owners[i]->data, * aj = owners[j]->data;
            if (ai < aj + ggml_nbytes(owners[j]) && aj < ai + ggml_nbytes(owners[i])) overlaps++;
        }
    CHECK(overlaps == 0, "%d pairs of tensors share memory", overlaps);
    CHECK(ggml_backend_buffer_get_size(buf) >= need, "buffer size %zu holds the %zu bytes of its tensors", ggml_backend_buffer_get_size(buf), need);
    /* at most one 64-byte alignment pad per tensor (the CPU buffer's alignment): no double allocation */
    CHECK(ggml_backend_buffer_get_size(buf) <= need + 64 * (size_t) n_owners, "buffer size %zu is not wildly larger than %zu", ggml_backend_buffer_get_size(buf), need);

    /* views get their source's memory */
    CHECK(va->data == (char *) a->data + 3 * sizeof(float), "a view points into its source");
    CHECK(vva->data == (char *) a->data + 5 * sizeof(float), "a view of a view adds the offsets");
    CHECK(ra->data == a->data, "a reshape shares its source's memory");

    /* transfers and compute */
    float ha[K * M], hb[K * N], hbias[M];
    fill(ha, K * M); fill(hb, K * N); fill(hbias, M);
    ggml_backend_tensor_set(a, ha, 0, sizeof ha);
    ggml_backend_tensor_set(b, hb, 0, sizeof hb / 2);                          /* in two pieces */
    ggml_backend_tensor_set(b, (const char *) hb + sizeof hb / 2, sizeof hb / 2, sizeof hb - sizeof hb / 2);
    ggml_backend_tensor_set(bias, hbias, 0, sizeof hbias);
    const uint16_t hh[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    ggml_backend_tensor_set(h, hh, 0, sizeof hh);
    uint16_t hh_back[9];
    ggml_backend_tensor_get(h, hh_back, 0, sizeof hh_back);
    CHECK(memcmp(hh, hh_back, sizeof hh) == 0, "F16 bytes round trip");

    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);
    ggml_build_forward_expand(g, s);
    double ref[M * N];
    for (int j = 0; j < N; j++)
        for (int i = 0; i < M; i++) {
            double acc = hbias[i];
            for (int k = 0; k < K; k++) acc += (double) ha[i * K + k] * hb[j * K + k];
            ref[j * M + i] = 0.5 * acc;
        }
    const double ref_s = (double) ha[5] + ha[6] + ha[7] + ha[8];
    float out1[M * N], out3[M * N], out_def[M * N];
    const int threads[3] = {1, 3, 0};   /* 0: the default (all cores) */
    float * outs[3] = {out1, out3, out_def};
    for (int t = 0; t < 3; t++) {
        ggml_backend_cpu_set_n_threads(be, threads[t]);
        memset(outs[t], 0xff, sizeof out1);
        if (!CHECK(ggml_backend_graph_compute(be, g) == GGML_STATUS_SUCCESS, "compute (%d threads): %s", threads[t], ggml_last_error())) continue;
        ggml_backend_tensor_get(y, outs[t], 0, sizeof out1);
        CHECK_REL(tc_rel_err_f32(outs[t], ref, M * N), 1e-6, "mul_mat + add + scale through the backend");
        float sv;
        ggml_backend_tensor_get(s, &sv, 0, sizeof sv);
        CHECK(fabs(sv - ref_s) < 1e-6, "sum over a view of a view: %g vs %g", (double) sv, ref_s);
    }
    CHECK(memcmp(out1, out3, sizeof out1) == 0 && memcmp(out1, out_def, sizeof out1) == 0, "results do not depend on the thread count");
    /* a partial read at an offset */
    float part[3];
    ggml_backend_tensor_get(y, part, 4 * sizeof(float), sizeof part);
    CHECK(memcmp(part, out1 + 4, sizeof part) == 0, "tensor_get at an offset");

    ggml_backend_buffer_free(buf);
    ggml_backend_free(be);
    ggml_free(ctx);
}

/* autodiff with backend memory: the loss gradient and accumulators start at
 * 0 in the zeroed buffer; ggml_graph_reset sets them up. loss = sum(x^2 * w). */
static void test_backward_in_backend(void) {
    struct ggml_init_params p = {256 * ggml_tensor_overhead() + ggml_graph_overhead_custom(512, true), NULL, true};
    struct ggml_context * ctx = ggml_init(p);
    ggml_backend_t be = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(be, 2);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 4);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 4);
    ggml_set_param(x);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, ggml_sqr(ctx, x), w));
    ggml_set_loss(loss);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 512, true);
    ggml_build_forward_expand(g, loss);
    CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "backward in a no_alloc context: %s", ggml_last_error());
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
    if (!CHECK(buf != NULL, "alloc: %s", ggml_last_error())) { ggml_backend_free(be); ggml_free(ctx); return; }
    float hx[24], hw[24], gx[24];
    fill(hx, 24); fill(hw, 24);
    ggml_backend_tensor_set(x, hx, 0, sizeof hx);
    ggml_backend_tensor_set(w, hw, 0, sizeof hw);
    struct ggml_tensor * grad = ggml_graph_get_grad(g, x);
    if (!CHECK(grad != NULL, "x has a gradient")) { ggml_backend_buffer_free(buf); ggml_backend_free(be); ggml_free(ctx); return; }
    CHECK(ggml_backend_graph_compute(be, g) == GGML_STATUS_SUCCESS, "compute before reset");
    ggml_backend_tensor_get(grad, gx, 0, sizeof gx);
    int nonzero = 0;
    for (int i = 0; i < 24; i++) nonzero += gx[i] != 0.0f;
    CHECK(nonzero == 0, "before ggml_graph_reset the gradient is 0");
    ggml_graph_reset(g);
    CHECK(ggml_backend_graph_compute(be, g) == GGML_STATUS_SUCCESS, "compute after reset");
    ggml_backend_tensor_get(grad, gx, 0, sizeof gx);
    double e = 0;
    for (int i = 0; i < 24; i++) e = fmax(e, fabs(gx[i] - 2.0 * hx[i] * hw[i]));
    CHECK(e < 1e-6, "gradient 2 x w in backend memory (max err %g)", e);
    ggml_backend_buffer_free(buf);
    ggml_backend_free(be);
    ggml_free(ctx);
}

/* An empty context allocates an empty buffer; freeing NULLs is harmless. */
static void test_edge_cases(void) {
    struct ggml_init_params p = {ggml_tensor_overhead(), NULL, true};
    struct ggml_context * ctx = ggml_init(p);
    ggml_backend_t be = ggml_backend_cpu_init();
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
    CHECK(buf == NULL || ggml_backend_buffer_get_size(buf) == 0, "an empty context needs no memory");
    ggml_backend_buffer_free(buf);
    ggml_clear_error();
    CHECK(ggml_backend_alloc_ctx_tensors(NULL, be) == NULL && ggml_last_error()[0], "alloc of a NULL context fails with a message");
    ggml_backend_buffer_free(NULL);
    ggml_backend_free(NULL);
    ggml_backend_free(be);
    ggml_free(ctx);
    ggml_free(NULL);
}

int main(void) {
    tc_seed(5);
    test_alloc_and_compute();
    test_backward_in_backend();
    test_edge_cases();
    return tc_finish("backend");
}

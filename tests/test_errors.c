/* test_errors.c -- every error path returns NULL or a failing status with a
 * non-empty ggml_last_error(), never aborts, and leaves the context usable:
 * after each one, the same context still builds and computes a small graph
 * correctly. */
#include "common/test_common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A failure: NULL result (or failing status), a message containing `word`. */
#define EXPECT_NULL(expr, word) expect_null_((expr) == NULL, #expr, word, __LINE__)
static void expect_null_(bool is_null, const char * expr, const char * word, int line) {
    const char * msg = ggml_last_error();
    tc_check(is_null, __FILE__, line, "%s should fail", expr);
    tc_check(msg[0] != '\0', __FILE__, line, "%s: no error message", expr);
    if (word) tc_check(strstr(msg, word) != NULL, __FILE__, line, "%s: message '%s' should mention '%s'", expr, msg, word);
}
#define EXPECT_FAIL(status, word) expect_null_((status) != GGML_STATUS_SUCCESS, #status, word, __LINE__)

/* The context still works: sum(x^2) for x = (1, 2, 3) is 14. */
static void still_usable(struct ggml_context * ctx, const char * after) {
    ggml_clear_error();
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    if (!CHECK(x != NULL, "after %s: cannot create a tensor: %s", after, ggml_last_error())) return;
    for (int i = 0; i < 3; i++) ggml_set_f32_1d(x, i, (float) (i + 1));
    struct ggml_tensor * y = ggml_sum(ctx, ggml_sqr(ctx, x));
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16, false);
    if (!CHECK(y && g, "after %s: cannot build: %s", after, ggml_last_error())) return;
    ggml_build_forward_expand(g, y);
    CHECK(ggml_graph_compute_with_ctx(ctx, g, 2) == GGML_STATUS_SUCCESS && ggml_get_f32_1d(y, 0) == 14.0f,
          "after %s: the context no longer computes correctly", after);
}

static void test_arena(void) {
    struct ggml_init_params p = {1024, NULL, false};
    struct ggml_context * tiny = ggml_init(p);
    if (!CHECK(tiny != NULL, "a 1 KiB context")) return;
    ggml_clear_error();
    EXPECT_NULL(ggml_new_tensor_1d(tiny, GGML_TYPE_F32, 1000), "memory");
    EXPECT_NULL(ggml_new_graph(tiny), "memory");
    const size_t used = ggml_used_mem(tiny);
    ggml_clear_error();
    EXPECT_NULL(ggml_new_tensor_2d(tiny, GGML_TYPE_F32, 1 << 20, 1 << 10), NULL);
    CHECK(ggml_used_mem(tiny) == used, "a failed allocation uses no memory");
    ggml_free(tiny);

    /* a size that would overflow when rounded up is refused, not wrapped to a tiny arena */
    struct ggml_init_params huge = {SIZE_MAX - 3, NULL, false};
    ggml_clear_error();
    EXPECT_NULL(ggml_init(huge), "too large");

    /* a context with room for a few small tensors: fill it, the failure changes nothing */
    struct ggml_context * ctx = tc_ctx(1);
    ggml_clear_error();
    EXPECT_NULL(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1 << 20), "memory");
    still_usable(ctx, "arena exhaustion");
    ggml_free(ctx);

    /* the caller's buffer of an odd size at an odd address: filling the
     * context never writes past its end (guard bytes stay intact) */
    for (size_t misalign = 0; misalign < 16; misalign += 5) {
        enum { SIZE = 1000, GUARD = 64 };
        unsigned char * raw = malloc(16 + SIZE + GUARD);
        unsigned char * buf = raw + misalign;
        memset(buf + SIZE, 0xA5, GUARD);
        struct ggml_init_params up = {SIZE, buf, false};
        struct ggml_context * uc = ggml_init(up);
        if (!CHECK(uc != NULL, "a context in the caller's buffer")) { free(raw); continue; }
        CHECK(ggml_get_mem_size(uc) <= SIZE, "the arena fits the caller's %d bytes", (int) SIZE);
        struct ggml_tensor * t;
        while ((t = ggml_new_tensor_1d(uc, GGML_TYPE_F32, 1)) != NULL) ggml_set_f32(t, -1.0f);
        while (ggml_new_graph_custom(uc, 1, false) != NULL) {}
        int overwritten = 0;
        for (int i = 0; i < GUARD; i++) overwritten += buf[SIZE + i] != 0xA5;
        CHECK(overwritten == 0, "misalignment %zu: %d bytes past the caller's buffer were written", misalign, overwritten);
        ggml_free(uc);
        free(raw);
    }
}

static void test_tensor_creation(void) {
    struct ggml_context * ctx = tc_ctx(1);
    ggml_clear_error();
    EXPECT_NULL(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, -1), "negative");
    EXPECT_NULL(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, INT64_MAX / 2, 4), "overflow");
    EXPECT_NULL(ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1 << 20, 1 << 20, 1 << 20, 1 << 20), "overflow");
    /* a zero dimension does not make the others unbounded: their row count would overflow */
    ggml_set_no_alloc(ctx, true);
    EXPECT_NULL(ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 0, INT64_C(1) << 40, INT64_C(1) << 40, 3), "overflow");
    EXPECT_NULL(ggml_new_tensor_3d(ctx, GGML_TYPE_F16, INT64_C(1) << 31, 0, INT64_C(1) << 32), "overflow");
    struct ggml_tensor * empty = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 0, 1 << 20, 1 << 20, 1 << 10);
    CHECK(empty != NULL && ggml_nelements(empty) == 0 && ggml_nrows(empty) == INT64_C(1) << 50, "an empty tensor with large dimensions");
    ggml_set_no_alloc(ctx, false);
    EXPECT_NULL(ggml_new_tensor_1d(ctx, (enum ggml_type) 4, 4), "type");            /* removed upstream */
    EXPECT_NULL(ggml_new_tensor_1d(ctx, GGML_TYPE_IQ2_XXS, 100), "block size");  /* named, stored without converters */
    EXPECT_NULL(ggml_new_tensor_1d(ctx, GGML_TYPE_Q4_0, 4), "block size");
    EXPECT_NULL(ggml_new_tensor_1d(ctx, GGML_TYPE_COUNT, 4), "type");
    EXPECT_NULL(ggml_new_tensor_1d(ctx, (enum ggml_type) -1, 4), "type");
    const int64_t ne[1] = {4};
    EXPECT_NULL(ggml_new_tensor(ctx, GGML_TYPE_F32, 0, ne), "n_dims");
    EXPECT_NULL(ggml_new_tensor(ctx, GGML_TYPE_F32, 5, ne), "n_dims");
    EXPECT_NULL(ggml_new_tensor_1d(NULL, GGML_TYPE_F32, 4), "NULL");
    EXPECT_NULL(ggml_dup_tensor(ctx, NULL), NULL);
    still_usable(ctx, "bad tensor creation");
    ggml_free(ctx);
}

static void test_op_shapes(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 5, 3, 2);
    struct ggml_tensor * b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 5, 3, 2);   /* 4 does not divide 6 */
    struct ggml_tensor * m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 5);
    struct ggml_tensor * h = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 6, 5);  /* F16 and BF16 are taken, as upstream */
    ggml_clear_error();
    EXPECT_NULL(ggml_add(ctx, a, b), "broadcast");
    EXPECT_NULL(ggml_sub(ctx, b, a), "broadcast");
    EXPECT_NULL(ggml_mul(ctx, a, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 5, 2, 2)), "broadcast");  /* 2 does not divide 3 */
    EXPECT_NULL(ggml_div(ctx, a, h), "BF16");
    EXPECT_NULL(ggml_add_inplace(ctx, b, a), NULL);
    EXPECT_NULL(ggml_mul_mat(ctx, a, m), "ne[0]");                                        /* K 6 vs 7 */
    EXPECT_NULL(ggml_mul_mat(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 2, 2, 1), ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 2, 3, 1)), "multiple");
    EXPECT_NULL(ggml_mul_mat(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 2, 1, 2), ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 2, 1, 3)), "multiple");
    EXPECT_NULL(ggml_repeat(ctx, a, b), "multiple");
    EXPECT_NULL(ggml_repeat_back(ctx, b, a), "multiple");
    EXPECT_NULL(ggml_cpy(ctx, a, b), "elements");
    EXPECT_NULL(ggml_acc(ctx, m, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 3), m->nb[1], m->nb[2], m->nb[3], 3 * m->nb[1]), "past");
    EXPECT_NULL(ggml_acc(ctx, m, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3), m->nb[1], m->nb[2], m->nb[3], (size_t) -4), "past");
    /* region strides whose byte span wraps around size_t (the write would land far outside a) */
    EXPECT_NULL(ggml_acc(ctx, m, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, 3), (size_t) 1 << 63, (size_t) 1 << 63, (size_t) 1 << 63, 0), NULL);
    EXPECT_NULL(ggml_soft_max_ext(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 4), 1.0f, 0.0f), "mask");   /* too few rows */
    EXPECT_NULL(ggml_soft_max_ext(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 5), 1.0f, 0.0f), "mask");   /* wrong ne0 */
    EXPECT_NULL(ggml_soft_max_ext(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 6, 5), 1.0f, 0.0f), "mask");
    EXPECT_NULL(ggml_soft_max_ext(ctx, a, NULL, 1.0f, 2.0f), "mask");                                          /* ALiBi without mask */
    EXPECT_NULL(ggml_soft_max_ext(ctx, a, NULL, NAN, 0.0f), "finite");
    EXPECT_NULL(ggml_sqrt(ctx, h), "BF16");
    still_usable(ctx, "shape mismatches");
    ggml_free(ctx);
}

static void test_layout_errors(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 5, 3, 2);
    ggml_clear_error();
    EXPECT_NULL(ggml_reshape_2d(ctx, a, 7, 25), "elements");
    EXPECT_NULL(ggml_reshape_4d(ctx, a, 6, 5, 3, -2), "elements");
    EXPECT_NULL(ggml_reshape_1d(ctx, ggml_transpose(ctx, a), 180), "contiguous");
    EXPECT_NULL(ggml_reshape(ctx, a, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 179)), "elements");
    /* element counts whose product wraps around 2^64 to a's count (180 = 2^2 * 45) */
    EXPECT_NULL(ggml_reshape_2d(ctx, a, (INT64_C(1) << 62) + 45, 4), NULL);
    EXPECT_NULL(ggml_view_1d(ctx, a, 181, 0), "past");
    EXPECT_NULL(ggml_view_1d(ctx, a, 10, 171 * 4), "past");
    EXPECT_NULL(ggml_view_1d(ctx, a, 1, SIZE_MAX - 2), "past");
    EXPECT_NULL(ggml_view_2d(ctx, a, 6, 31, a->nb[1], 0), "past");
    EXPECT_NULL(ggml_view_4d(ctx, a, 6, 5, 3, 3, a->nb[1], a->nb[2], a->nb[3], 0), "past");
    EXPECT_NULL(ggml_view_2d(ctx, a, 1, -1, a->nb[1], 0), "negative");
    /* strides so large that the byte span wraps around size_t */
    EXPECT_NULL(ggml_view_2d(ctx, a, 1, 3, (size_t) 1 << 63, 0), NULL);
    EXPECT_NULL(ggml_view_3d(ctx, a, 1, 2, 2, SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 1, 0), NULL);
    /* an empty view whose rows would start outside a (a negative stride cast to size_t, found by the fuzzer) */
    EXPECT_NULL(ggml_view_2d(ctx, a, 0, 3, (size_t) -4, 4), "empty view");
    EXPECT_NULL(ggml_view_2d(ctx, a, 0, 3, a->nb[1] * 100, 0), "empty view");
    CHECK(ggml_view_2d(ctx, a, 0, 3, a->nb[1], 0) != NULL, "an empty view with its rows inside a: %s", ggml_last_error());
    CHECK(ggml_view_1d(ctx, a, 0, ggml_nbytes(a)) != NULL, "an empty view at a's very end: %s", ggml_last_error());
    /* offsets and strides that are not whole elements (kernels load aligned floats) */
    EXPECT_NULL(ggml_view_1d(ctx, a, 4, 2), "multiple");
    EXPECT_NULL(ggml_view_2d(ctx, a, 2, 3, 6, 0), "multiple");
    EXPECT_NULL(ggml_view_4d(ctx, a, 1, 1, 2, 1, 4, 10, 40, 0), "multiple");
    EXPECT_NULL(ggml_acc(ctx, a, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2), a->nb[1], a->nb[2], a->nb[3], 1), "multiple");
    EXPECT_NULL(ggml_acc(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 2), 9, a->nb[2], a->nb[3], 0), "multiple");
    EXPECT_NULL(ggml_permute(ctx, a, 0, 1, 1, 3), "permutation");
    EXPECT_NULL(ggml_permute(ctx, a, 0, 1, 2, 4), "permutation");
    EXPECT_NULL(ggml_permute(ctx, a, -1, 1, 2, 3), "permutation");
    still_usable(ctx, "layout errors");
    ggml_free(ctx);
}

static void test_null_propagation(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_clear_error();
    struct ggml_tensor * bad = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, -3);   /* the first failure */
    EXPECT_NULL(bad, "negative");
    EXPECT_NULL(ggml_add(ctx, bad, b), "negative");                          /* mentions the earlier error */
    EXPECT_NULL(ggml_sum(ctx, ggml_sqr(ctx, ggml_mul(ctx, b, bad))), "negative");
    ggml_clear_error();
    EXPECT_NULL(ggml_add(ctx, NULL, b), "NULL");
    struct ggml_tensor * (*unary[])(struct ggml_context *, struct ggml_tensor *) = {
        ggml_dup, ggml_cont, ggml_sqr, ggml_sqrt, ggml_log, ggml_sum, ggml_sum_rows, ggml_mean, ggml_soft_max, ggml_transpose,
    };
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
        ggml_clear_error();
        EXPECT_NULL(unary[i](ctx, NULL), "NULL");
        ggml_clear_error();
        EXPECT_NULL(unary[i](NULL, b), "NULL");   /* a NULL context */
    }
    struct ggml_tensor * (*binary[])(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = {
        ggml_add, ggml_sub, ggml_mul, ggml_div, ggml_add_inplace, ggml_mul_mat, ggml_repeat, ggml_repeat_back, ggml_cpy, ggml_reshape,
    };
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) {
        ggml_clear_error();
        EXPECT_NULL(binary[i](ctx, b, NULL), "NULL");
        ggml_clear_error();
        EXPECT_NULL(binary[i](ctx, NULL, b), "NULL");
    }
    ggml_clear_error();
    EXPECT_NULL(ggml_scale(ctx, NULL, 2.0f), "NULL");
    EXPECT_NULL(ggml_view_1d(ctx, NULL, 1, 0), "NULL");
    EXPECT_NULL(ggml_view_2d(ctx, NULL, 1, 1, 4, 0), "NULL");
    EXPECT_NULL(ggml_reshape_2d(ctx, NULL, 2, 2), "NULL");
    EXPECT_NULL(ggml_permute(ctx, NULL, 0, 1, 2, 3), "NULL");
    EXPECT_NULL(ggml_acc(ctx, b, NULL, 16, 16, 16, 0), "NULL");
    EXPECT_NULL(ggml_soft_max_ext(ctx, NULL, NULL, 1.0f, 0.0f), "NULL");
    EXPECT_NULL(ggml_flash_attn_ext(ctx, NULL, b, b, NULL, 1.0f, 0.0f, 0.0f), "NULL");
    EXPECT_NULL(ggml_flash_attn_back(ctx, b, NULL, b, NULL, b, 1.0f), "NULL");
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_clear_error();
    ggml_new_tensor_1d(ctx, GGML_TYPE_F32, -1);
    EXPECT_FAIL(ggml_build_forward_expand_status(g, NULL), "negative");
    CHECK(ggml_graph_n_nodes(g) == 0, "expanding NULL adds nothing");
    ggml_build_forward_expand(g, NULL);   /* the void variant must not crash either */
    ggml_set_param(NULL);
    ggml_clear_error();
    ggml_set_loss(NULL);
    CHECK(ggml_last_error()[0] != '\0', "set_loss(NULL) sets a message");
    still_usable(ctx, "NULL inputs");
    ggml_free(ctx);
}

static void test_loss_and_element_access(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * v = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 2);
    ggml_set_f32(v, 1.5f);
    ggml_clear_error();
    ggml_set_loss(v);
    CHECK(ggml_last_error()[0] != '\0' && !(v->flags & GGML_TENSOR_FLAG_LOSS), "set_loss on a non-scalar: message, flag not set");
    ggml_clear_error();
    CHECK(isnan(ggml_get_f32_1d(v, 6)) && strstr(ggml_last_error(), "range"), "get_f32_1d(6) of 6 elements: NaN, message '%s'", ggml_last_error());
    ggml_clear_error();
    CHECK(isnan(ggml_get_f32_1d(v, -1)) && ggml_last_error()[0], "get_f32_1d(-1): NaN with a message");
    ggml_clear_error();
    CHECK(isnan(ggml_get_f32_nd(v, 0, 2, 0, 0)) && ggml_last_error()[0], "get_f32_nd out of range: NaN with a message");
    ggml_clear_error();
    ggml_set_f32_1d(v, 6, 9.0f);
    CHECK(ggml_last_error()[0] != '\0', "set_f32_1d out of range sets a message");
    ggml_clear_error();
    ggml_set_f32_nd(v, 3, 0, 0, 0, 9.0f);
    CHECK(ggml_last_error()[0] != '\0', "set_f32_nd out of range sets a message");
    for (int i = 0; i < 6; i++) CHECK(ggml_get_f32_1d(v, i) == 1.5f, "out-of-range writes changed nothing (element %d)", i);
    ggml_clear_error();
    CHECK(isnan(ggml_get_f32_1d(NULL, 0)) && ggml_last_error()[0], "get_f32_1d(NULL): NaN with a message");
    still_usable(ctx, "element access errors");
    ggml_free(ctx);
}

static void test_transfers(void) {
    struct ggml_init_params p = {64 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true};
    struct ggml_context * ctx = ggml_init(p);
    ggml_backend_t be = ggml_backend_cpu_init();
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    float buf[16] = {0};
    ggml_clear_error();
    EXPECT_FAIL(ggml_backend_tensor_set_checked(a, buf, 0, 4), "memory");    /* no data yet */
    EXPECT_FAIL(ggml_backend_tensor_get_checked(a, buf, 0, 4), "memory");
    ggml_backend_buffer_t buffer = ggml_backend_alloc_ctx_tensors(ctx, be);
    if (!CHECK(buffer != NULL, "alloc: %s", ggml_last_error())) { ggml_backend_free(be); ggml_free(ctx); return; }
    const float vals[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(ggml_backend_tensor_set_checked(a, vals, 0, sizeof vals) == GGML_STATUS_SUCCESS, "an in-bounds set works");
    ggml_clear_error();
    EXPECT_FAIL(ggml_backend_tensor_set_checked(a, buf, 4, 32), "bounds");   /* 4 + 32 > 32 */
    EXPECT_FAIL(ggml_backend_tensor_get_checked(a, buf, 0, 33), "bounds");
    EXPECT_FAIL(ggml_backend_tensor_get_checked(a, buf, 33, 0), "bounds");
    EXPECT_FAIL(ggml_backend_tensor_set_checked(a, buf, SIZE_MAX - 3, 8), "bounds");  /* offset + size wraps */
    EXPECT_FAIL(ggml_backend_tensor_get_checked(a, buf, 8, SIZE_MAX - 3), "bounds");
    EXPECT_FAIL(ggml_backend_tensor_set_checked(a, NULL, 0, 4), "NULL");
    EXPECT_FAIL(ggml_backend_tensor_get_checked(NULL, buf, 0, 4), "NULL");
    ggml_backend_tensor_set(a, buf, 4, 32);   /* the unchecked variants refuse too (and must not crash) */
    ggml_backend_tensor_get(a, buf, 0, 1000);
    float back[8];
    CHECK(ggml_backend_tensor_get_checked(a, back, 0, sizeof back) == GGML_STATUS_SUCCESS && memcmp(back, vals, sizeof vals) == 0,
          "refused transfers left the data unchanged");

    /* a result created after the allocation has no memory: compute fails, nothing crashes */
    struct ggml_tensor * y = ggml_sqr(ctx, a);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);
    ggml_clear_error();
    EXPECT_FAIL(ggml_backend_graph_compute(be, g), "memory");
    EXPECT_FAIL(ggml_graph_compute_with_ctx(ctx, g, 2), "memory");
    EXPECT_FAIL(ggml_backend_graph_compute(NULL, g), NULL);
    EXPECT_FAIL(ggml_backend_graph_compute(be, NULL), NULL);
    /* allocating again gives y memory, and the same graph then computes */
    ggml_backend_buffer_t buffer2 = ggml_backend_alloc_ctx_tensors(ctx, be);
    CHECK(buffer2 != NULL && y->data != NULL, "a second allocation covers the new tensor");
    if (CHECK(ggml_backend_graph_compute(be, g) == GGML_STATUS_SUCCESS, "compute after allocating: %s", ggml_last_error())) {
        float out[8];
        ggml_backend_tensor_get(y, out, 0, sizeof out);
        int bad = 0;
        for (int i = 0; i < 8; i++) bad += out[i] != vals[i] * vals[i];
        CHECK(bad == 0, "the recovered graph computes x^2");
    }
    ggml_backend_buffer_free(buffer2);
    ggml_backend_buffer_free(buffer);
    ggml_backend_free(be);
    ggml_free(ctx);
}

/* Expanding a chain of `chain_len` scales of sqr(x) into a graph of `size`
 * that already holds sqr(x) fails (on the node limit or, for tiny graphs, the
 * hash set) and leaves the graph exactly as it was: the same nodes, and no
 * trace of the refused tensors (expanding one again fails again). */
static void check_graph_full(struct ggml_context * ctx, struct ggml_tensor * x, size_t size, int chain_len) {
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, size, false);
    if (!CHECK(g != NULL, "a graph of size %zu", size)) return;
    struct ggml_tensor * first = ggml_sqr(ctx, x);
    CHECK(ggml_build_forward_expand_status(g, first) == GGML_STATUS_SUCCESS, "one node fits");
    struct ggml_tensor * chain = first;
    for (int i = 0; i < chain_len; i++) chain = ggml_scale(ctx, chain, 0.5f);
    ggml_clear_error();
    EXPECT_FAIL(ggml_build_forward_expand_status(g, chain), "full");
    CHECK(ggml_graph_n_nodes(g) == 1 && ggml_graph_node(g, 0) == first, "size %zu: a failed expand leaves the graph unchanged", size);
    CHECK(ggml_build_forward_expand_status(g, chain) != GGML_STATUS_SUCCESS, "size %zu: expanding the refused tensor again fails again", size);
    ggml_build_forward_expand(g, chain);   /* the void variant: same refusal, no crash */
    CHECK(ggml_graph_n_nodes(g) == 1, "size %zu: still unchanged", size);
    CHECK(ggml_graph_compute_with_ctx(ctx, g, 2) == GGML_STATUS_SUCCESS && ggml_get_f32_1d(first, 0) == 4.0f, "size %zu: the graph still computes", size);
    /* the refused tensor can still go into a bigger graph */
    struct ggml_cgraph * big = ggml_new_graph_custom(ctx, 64, false);
    CHECK(ggml_build_forward_expand_status(big, chain) == GGML_STATUS_SUCCESS, "the chain fits a bigger graph");
    CHECK(ggml_graph_compute_with_ctx(ctx, big, 2) == GGML_STATUS_SUCCESS && ggml_get_f32_1d(chain, 0) == ldexpf(4.0f, -chain_len), "and computes");
}

static void test_graph_errors(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_set_f32(x, 2.0f);
    check_graph_full(ctx, x, 2, 5);    /* the hash set (2 * 2 + 1 slots) fills first */
    check_graph_full(ctx, x, 8, 10);   /* the node array fills first */
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 2, false);
    ggml_build_forward_expand(g, ggml_sqr(ctx, x));
    ggml_clear_error();
    EXPECT_NULL(ggml_new_graph_custom(ctx, 0, false), "size");
    EXPECT_NULL(ggml_new_graph_custom(NULL, 8, false), "NULL");
    EXPECT_NULL(ggml_graph_node(g, 5), "range");
    EXPECT_NULL(ggml_graph_node(g, -2), "range");
    ggml_clear_error();
    ggml_graph_reset(g);   /* no gradients: a message, no crash */
    CHECK(ggml_last_error()[0] != '\0', "graph_reset without gradients sets a message");
    still_usable(ctx, "graph errors");
    ggml_free(ctx);
}

/* Attention shapes whose sizes are near the limits: refused with a message, no overflow. */
static void test_huge_attention(void) {
    struct ggml_init_params p = {1 << 20, NULL, true};
    struct ggml_context * ctx = ggml_init(p);
    const int64_t big = (INT64_C(1) << 61) - 1;   /* the most F32 elements a tensor can have */
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, big, 1, 1, 1);
    struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, big, 0, 1, 1);
    struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, 0, 1, 1);
    struct ggml_tensor * d = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, 1, 1, 1);
    if (!CHECK(q && k && v && d, "metadata tensors: %s", ggml_last_error())) { ggml_free(ctx); return; }
    ggml_clear_error();
    EXPECT_NULL(ggml_flash_attn_back(ctx, q, k, v, NULL, d, 1.0f), "too large");   /* the padded q slice alone is 2^61 floats */
    ggml_free(ctx);
}

/* ALiBi with a large max_bias: the slope underflows to 0, yet -Inf still
 * masks (0 * -Inf would be NaN) and the results stay finite. */
static void test_extreme_alibi(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 2);
    struct ggml_tensor * m = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 3, 2);
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 2, 1, 1);
    struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 1, 1);
    struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 1, 1);
    tc_fill_uniform(a, -1, 1);
    tc_fill_uniform(q, -1, 1);
    tc_fill_uniform(k, -1, 1);
    ggml_set_zero(m);
    ggml_set_f32_1d(m, 1, -INFINITY);   /* row 0: key 1 masked */
    for (int i = 3; i < 6; i++) ggml_set_f32_1d(m, i, -INFINITY);   /* row 1: all masked */
    for (int i = 0; i < 12; i++) ggml_set_f32_1d(v, i, (float) (i / 4));   /* v row m = m */
    struct ggml_tensor * sm = ggml_soft_max_ext(ctx, a, m, 1.0f, 1000.0f);
    struct ggml_tensor * fa = ggml_flash_attn_ext(ctx, q, k, v, m, 0.5f, 1000.0f, 0.0f);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, sm);
    ggml_build_forward_expand(g, fa);
    if (!CHECK(sm && fa && ggml_graph_compute_with_ctx(ctx, g, 2) == GGML_STATUS_SUCCESS, "compute: %s", ggml_last_error())) { ggml_free(ctx); return; }
    int bad = 0;
    for (int i = 0; i < 6; i++) bad += !isfinite(ggml_get_f32_1d(sm, i));
    for (int i = 0; i < 8; i++) bad += !isfinite(ggml_get_f32_1d(fa, i));
    CHECK(bad == 0, "%d non-finite results with max_bias 1000", bad);
    CHECK(ggml_get_f32_1d(sm, 1) == 0.0f && fabsf(ggml_get_f32_1d(sm, 0) + ggml_get_f32_1d(sm, 2) - 1.0f) < 1e-6f, "soft_max: the masked key gets 0");
    CHECK(ggml_get_f32_1d(sm, 3) == 0.0f && ggml_get_f32_1d(sm, 4) == 0.0f && ggml_get_f32_1d(sm, 5) == 0.0f, "soft_max: a fully masked row is zeros");
    /* query 0 weighs keys 0 and 2 only, whose v rows are 0 and 2 */
    const float o = ggml_get_f32_1d(fa, 0);
    CHECK(o >= 0.0f && o <= 2.0f, "flash_attn_ext: output %g within the unmasked values", (double) o);
    CHECK(ggml_get_f32_1d(fa, 4) == 0.0f, "flash_attn_ext: a fully masked row is zeros");
    ggml_free(ctx);
}

int main(void) {
    test_arena();
    test_tensor_creation();
    test_op_shapes();
    test_layout_errors();
    test_null_propagation();
    test_loss_and_element_access();
    test_transfers();
    test_graph_errors();
    test_huge_attention();
    test_extreme_alibi();
    CHECK(strcmp(ggml_status_to_string(GGML_STATUS_SUCCESS), ggml_status_to_string(GGML_STATUS_FAILED)) != 0, "status strings differ");
    return tc_finish("errors");
}

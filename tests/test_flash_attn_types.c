/* test_flash_attn_types.c -- ggml_flash_attn_ext with K and V of every type
 * that has a dequantizer (BF16 and the block types: whichever types' traits
 * have to_float and from_float_ref, so a type that gains a converter is tested
 * with no edit here), K and V of different types, K/V as views of a wider
 * cache and as permuted views; the float64 reference is run on the values the
 * tensors store (each row quantized, then read back with to_float), so the
 * tolerance stays that of F32. Also: results bitwise equal across thread
 * counts, dQ through frozen K/V of those types (ggml_flash_attn_back and
 * autodiff with q the only parameter), and a block type without a converter:
 * the node builds (as upstream's does) and its compute fails with a message. */
#include "common/attn_ref.h"
#include "quant/quant.h"  /* ggmlr_type_is_supported: which stored types convert */

#include <stdlib.h>
#include <string.h>

#define TOL 1e-5

enum kv_layout { KV_PLAIN, KV_CACHE_VIEW, KV_PERMUTED, KV_LAYOUTS, KV_V_OF_K = KV_LAYOUTS };
static const char * const layout_name[KV_LAYOUTS + 1] = {"contiguous", "view of a wider cache", "permuted", "V the first half of K's rows"};

/* a type the test can store values in and read them back from */
static bool convertible(enum ggml_type type, int64_t D) {
    const struct ggml_type_traits * tr = ggml_get_type_traits(type);
    return type != GGML_TYPE_F32 && ggml_type_size(type) > 0 && tr->to_float && tr->from_float_ref && !ggml_quantize_requires_imatrix(type) &&
           D % ggml_blck_size(type) == 0;
}

/* A [D, M, Hkv, B] tensor of `type` in the given layout holding host's values
 * (dense, ggml order) as that type stores them; host is overwritten with the
 * stored values, read back. */
static struct ggml_tensor * stored_kv(struct ggml_context * ctx, enum ggml_type type, enum kv_layout layout, double * host, int64_t D,
                                      int64_t M, int64_t Hkv, int64_t B) {
    struct ggml_tensor * t;
    if (layout == KV_CACHE_VIEW) {  /* the first M of M + 5 cached keys */
        struct ggml_tensor * cache = ggml_new_tensor_4d(ctx, type, D, M + 5, Hkv, B);
        t = ggml_view_4d(ctx, cache, D, M, Hkv, B, cache->nb[1], cache->nb[2], cache->nb[3], 0);
    } else if (layout == KV_PERMUTED) {  /* stored [D, Hkv, M, B] */
        t = ggml_permute(ctx, ggml_new_tensor_4d(ctx, type, D, Hkv, M, B), 0, 2, 1, 3);
    } else {
        t = ggml_new_tensor_4d(ctx, type, D, M, Hkv, B);
    }
    const struct ggml_type_traits * tr = ggml_get_type_traits(type);
    float * row = malloc((size_t) D * sizeof *row);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hkv; h++)
            for (int64_t m = 0; m < M; m++) {
                double * x = host + D * (m + M * (h + Hkv * b));
                char * dst = (char *) t->data + m * t->nb[1] + h * t->nb[2] + b * t->nb[3];
                for (int64_t i = 0; i < D; i++) row[i] = (float) x[i];
                tr->from_float_ref(row, dst, D);
                tr->to_float(dst, row, D);
                for (int64_t i = 0; i < D; i++) x[i] = row[i];
            }
    free(row);
    return t;
}

/* One case: K of type tk, V of type tv (F32 for either is allowed), in
 * `layout` (KV_V_OF_K: V is a view of K's rows, their first DV = DK / 2
 * elements, as upstream's v_is_view_of_k; tv unused); the forward against float64 and bitwise across 1, 2 and 3
 * threads; with grad, dQ (ggml_flash_attn_back, and autodiff with q the
 * only parameter) against the float64 backward. */
static void check_types(enum ggml_type tk, enum ggml_type tv, enum kv_layout layout, bool grad) {
    attn_case c = attn_base_case(256, layout == KV_V_OF_K ? 128 : 256, 5, 70, 4, 2, 2);
    c.mask = AM_VALUES | AM_RANDINF;
    c.sinks = grad ? AS_NONE : AS_MIXED;
    struct ggml_context * ctx = tc_ctx(64);
    attn_inputs in;
    attn_inputs_make(ctx, &c, &in);
    const attn_dims * a = &in.p.a;
    if (tk != GGML_TYPE_F32) in.k = stored_kv(ctx, tk, layout, in.p.k, a->DK, a->M, a->Hkv, a->B);
    if (layout == KV_V_OF_K) {
        in.v = ggml_view_4d(ctx, in.k, a->DV, a->M, a->Hkv, a->B, in.k->nb[1], in.k->nb[2], in.k->nb[3], 0);
        for (int64_t r = 0; r < a->M * a->Hkv * a->B; r++) memcpy(in.p.v + r * a->DV, in.p.k + r * a->DK, (size_t) a->DV * sizeof(double));
        tv = tk;
    } else if (tv != GGML_TYPE_F32) {
        in.v = stored_kv(ctx, tv, layout, in.p.v, a->DV, a->M, a->Hkv, a->B);
    }
    char what[160];
    snprintf(what, sizeof what, "K %s, V %s, %s", ggml_type_name(tk), ggml_type_name(tv), layout_name[layout]);

    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, in.q, in.k, in.v, in.mask, c.scale, 0.0f, 0.0f);
    if (!CHECK(out != NULL, "%s: refused: %s", what, ggml_last_error())) goto done;
    if (in.sinks) ggml_flash_attn_ext_add_sinks(out, in.sinks);
    const int64_t n = attn_nout(a);
    double * ref = malloc((size_t) n * sizeof *ref);
    float * first = malloc((size_t) n * sizeof *first);
    attn_ref_forward(&in.p, ref);
    for (int nth = 1; nth <= 3; nth++) {
        tc_poison(out);
        if (!attn_compute(ctx, out, nth)) break;
        if (nth == 1) {
            CHECK_REL(tc_rel_err_tensor(out, ref), TOL, what);
            memcpy(first, out->data, (size_t) n * sizeof *first);
        } else {
            CHECK(memcmp(first, out->data, (size_t) n * sizeof *first) == 0, "%s: %d threads differ from 1", what, nth);
        }
    }
    free(first);
    free(ref);
    if (grad) {
        const int64_t nq = attn_nq(a);
        double * dq = malloc((size_t) nq * sizeof *dq), * dk = malloc((size_t) attn_nk(a) * sizeof *dk);
        double * dv = malloc((size_t) attn_nv(a) * sizeof *dv);
        attn_ref_backward(&in.p, in.d, dq, dk, dv);
        /* the direct call: dq is the packed result's first slice */
        struct ggml_tensor * fab = ggml_flash_attn_back(ctx, in.q, in.k, in.v, in.mask, in.d_t, c.scale);
        if (CHECK(fab != NULL, "%s: flash_attn_back refused: %s", what, ggml_last_error()) && attn_compute(ctx, fab, 2))
            CHECK_REL(tc_rel_err_f32(fab->data, dq, nq), TOL, "flash_attn_back dq");
        /* autodiff: loss = sum(d * out), q the only parameter */
        ggml_set_param(in.q);
        struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, out, in.d_t));
        ggml_set_loss(loss);
        struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 2048, true);
        ggml_build_forward_expand(g, loss);
        if (CHECK(ggml_build_backward_expand(ctx, g, NULL) == GGML_STATUS_SUCCESS, "%s: backward: %s", what, ggml_last_error())) {
            ggml_graph_reset(g);
            if (CHECK(ggml_graph_compute_with_ctx(ctx, g, 3) == GGML_STATUS_SUCCESS, "%s: compute: %s", what, ggml_last_error()))
                CHECK_REL(tc_rel_err_tensor(ggml_graph_get_grad(g, in.q), dq), TOL, "autodiff dq");
        }
        free(dq); free(dk); free(dv);
    }
done:
    attn_inputs_free(&in);
    ggml_free(ctx);
}

/* every convertible type as K and V together, then K of one type with V of
 * the next, in each layout in turn */
static void test_every_type(void) {
    tc_seed(515);
    enum ggml_type types[GGML_TYPE_COUNT];
    int n = 0;
    for (int t = 0; t < GGML_TYPE_COUNT; t++)
        if (convertible((enum ggml_type) t, 256)) types[n++] = (enum ggml_type) t;
    CHECK(n >= 8, "only %d convertible types (BF16, F16 and the 32-blocks at least)", n);
    printf("K/V types:");
    for (int i = 0; i < n; i++) printf(" %s", ggml_type_name(types[i]));
    printf("\n");
    for (int i = 0; i < n; i++) {
        check_types(types[i], types[i], (enum kv_layout) (i % KV_LAYOUTS), i % 2 == 0);
        check_types(types[i], types[(i + 1) % n], (enum kv_layout) ((i + 1) % KV_LAYOUTS), i % 2 == 1);
    }
    check_types(GGML_TYPE_Q8_0, GGML_TYPE_F32, KV_CACHE_VIEW, true);  /* one side converted, the other read in place */
    check_types(GGML_TYPE_F32, GGML_TYPE_Q4_0, KV_PERMUTED, true);
    for (int i = 0; i < n; i++)
        if (ggml_blck_size(types[i]) <= 128) check_types(types[i], types[i], KV_V_OF_K, i % 2 == 0);
}

/* A block type stored without a converter: the node builds, supports_op
 * says no, and its compute fails with a message naming the type. */
static void test_unconvertible(void) {
    enum ggml_type type = GGML_TYPE_COUNT;
    for (int t = 0; t < GGML_TYPE_COUNT && type == GGML_TYPE_COUNT; t++)
        if (ggml_is_quantized((enum ggml_type) t) && ggml_type_size((enum ggml_type) t) > 0 && !ggmlr_type_is_supported((enum ggml_type) t))
            type = (enum ggml_type) t;
    if (type == GGML_TYPE_COUNT) return;  /* every stored type converts */
    struct ggml_context * ctx = tc_ctx(4);
    const int64_t bs = ggml_blck_size(type);
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, bs, 3, 2, 1);
    struct ggml_tensor * k = ggml_new_tensor_4d(ctx, type, bs, 4, 1, 1), * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 4, 1, 1);
    ggml_set_name(k, "k");
    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, NULL, 0.5f, 0.0f, 0.0f);
    if (CHECK(out != NULL, "K of %s (no converter): the node must build: %s", ggml_type_name(type), ggml_last_error())) {
        ggml_backend_t be = ggml_backend_cpu_init();
        CHECK(!ggml_backend_supports_op(be, out), "K of %s: supports_op says yes", ggml_type_name(type));
        ggml_backend_free(be);
        struct ggml_cgraph * g = ggml_new_graph(ctx);
        ggml_build_forward_expand(g, out);
        ggml_clear_error();
        CHECK(ggml_graph_compute_with_ctx(ctx, g, 2) != GGML_STATUS_SUCCESS, "K of %s: compute succeeded", ggml_type_name(type));
        CHECK(strstr(ggml_last_error(), ggml_type_name(type)) != NULL, "K of %s: message \"%s\" does not name the type", ggml_type_name(type),
              ggml_last_error());
    }
    ggml_free(ctx);
}

int main(void) {
    if (tc_part("every_type")) test_every_type();
    if (tc_part("unconvertible")) test_unconvertible();
    return tc_finish("flash_attn_types");
}

/* test_quant_views.c -- a quantized tensor seen through the layout ops, and
 * the types this library stores without converters.
 *
 * Views: permute (dim 0 kept), reshape and view_2d of a Q4_0 tensor keep
 * whole blocks along dim 0, so copying one moves whole blocks: the bytes of
 * cpy(permute(q), q2) are q's blocks at the permuted places, read here from
 * the raw bytes by index arithmetic; a reshape's strides count blocks; a
 * row view feeds get_rows, concat moves whole blocks, and get_rows_back takes Q4_0 rows as their
 * F32 copy. A permutation that moves dim 0 is refused.
 *
 * Storage only (IQ2_XXS, IQ3_S, IQ1_M, ...: named, no dequantizer): a tensor
 * can be created, viewed and written as bytes, as upstream lets a program
 * build any graph; a copy to the same type moves its bytes; computing a
 * node that would convert one fails with a message, leaves the destination as it was, and the backend says it does
 * not support the node. */
#include "common/test_common.h"

#include "ggml-backend.h"

#include <string.h>

static void compute(struct ggml_context * ctx, struct ggml_tensor * out, int nth) {
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, out);
    tc_compute(ctx, g, nth);
}

enum { NE0 = 64, NE1 = 3, NE2 = 2 };  /* two Q4_0 blocks per row */

static void test_views(void) {
    struct ggml_context * ctx = tc_ctx(8);
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, NE0, NE1, NE2);
    tc_fill_uniform(x, -2, 2);
    struct ggml_tensor * q = ggml_new_tensor_3d(ctx, GGML_TYPE_Q4_0, NE0, NE1, NE2);
    compute(ctx, ggml_cpy(ctx, x, q), 1);
    const size_t row = ggml_row_size(GGML_TYPE_Q4_0, NE0);

    /* permute (0, 2, 1, 3): p[:, i2, i1] = q[:, i1, i2], row by row of whole blocks */
    struct ggml_tensor * p = ggml_permute(ctx, q, 0, 2, 1, 3);
    if (CHECK(p != NULL, "permute of a Q4_0 tensor keeping dim 0: %s", ggml_last_error())) {
        CHECK(p->ne[0] == NE0 && p->ne[1] == NE2 && p->ne[2] == NE1 && p->nb[0] == ggml_type_size(GGML_TYPE_Q4_0), "permuted shape");
        struct ggml_tensor * q2 = ggml_new_tensor_3d(ctx, GGML_TYPE_Q4_0, NE0, NE2, NE1);
        struct ggml_tensor * y = ggml_cpy(ctx, p, q2);
        if (CHECK(y != NULL, "cpy of the permuted view: %s", ggml_last_error())) {
            for (int nth = 1; nth <= 3; nth += 2) {
                memset(q2->data, 0xAB, ggml_nbytes(q2));
                compute(ctx, y, nth);
                int bad = 0;
                for (int i1 = 0; i1 < NE1; i1++)
                    for (int i2 = 0; i2 < NE2; i2++)
                        bad += memcmp((const char *) q2->data + (i1 * NE2 + i2) * row, (const char *) q->data + (i2 * NE1 + i1) * row, row) != 0;
                CHECK(bad == 0, "%d threads: the copy holds q's rows at the permuted places (%d rows wrong)", nth, bad);
            }
        }
    }
    CHECK(!ggml_permute(ctx, q, 1, 0, 2, 3) && strstr(ggml_last_error(), "dim 0"), "a permutation moving a block type's dim 0: %s",
          ggml_last_error());
    CHECK(!ggml_transpose(ctx, q), "transposing a block type is refused");

    /* reshape [64, 3, 2] -> [32, 12]: one block per row, strides in blocks */
    struct ggml_tensor * r = ggml_reshape_2d(ctx, q, 32, NE1 * NE2 * 2);
    if (CHECK(r != NULL, "reshape of a Q4_0 tensor: %s", ggml_last_error())) {
        CHECK(r->nb[1] == ggml_row_size(GGML_TYPE_Q4_0, 32) && ggml_nbytes(r) == ggml_nbytes(q), "reshape strides count whole blocks");
        struct ggml_tensor * f = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, NE1 * NE2 * 2);
        struct ggml_tensor * full = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, NE0, NE1, NE2);
        compute(ctx, ggml_cpy(ctx, r, f), 2);
        compute(ctx, ggml_cpy(ctx, q, full), 2);
        CHECK(memcmp(f->data, full->data, ggml_nbytes(full)) == 0, "the reshaped tensor dequantizes to the same floats in order");
    }
    CHECK(!ggml_reshape_2d(ctx, q, 16, NE1 * NE2 * 4) && strstr(ggml_last_error(), "whole blocks"), "a reshape that splits blocks: %s",
          ggml_last_error());

    /* rows 1..2 of batch 1 as a view, gathered by get_rows */
    struct ggml_tensor * v = ggml_view_2d(ctx, q, NE0, 2, row, (size_t) (NE1 + 1) * row);
    struct ggml_tensor * idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
    ggml_set_i32_1d(idx, 0, 1);
    ggml_set_i32_1d(idx, 1, 0);
    struct ggml_tensor * gr = v ? ggml_get_rows(ctx, v, idx) : NULL;
    if (CHECK(gr != NULL, "get_rows from a row view of Q4_0: %s", ggml_last_error())) {
        struct ggml_tensor * full = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, NE0, NE1, NE2);
        compute(ctx, ggml_cpy(ctx, q, full), 1);
        compute(ctx, gr, 2);
        const float * want = (const float *) full->data + (size_t) NE1 * NE0;  /* batch 1 */
        CHECK(memcmp(gr->data, want + 2 * NE0, NE0 * sizeof(float)) == 0 && memcmp((float *) gr->data + NE0, want + NE0, NE0 * sizeof(float)) == 0,
              "get_rows picks rows 2 and 1 of batch 1");
    }
    /* cpy between shapes with rows of one length: row r to row r, in order */
    struct ggml_tensor * flat = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, NE0, NE1 * NE2), * full = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, NE0, NE1, NE2);
    struct ggml_tensor * q6 = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, NE0, NE1 * NE2);
    struct ggml_tensor * to_flat = ggml_cpy(ctx, q, flat), * to_q6 = ggml_cpy(ctx, x, q6);
    if (CHECK(to_flat && to_q6, "cpy of Q4_0 [64,3,2] <-> [64,6]: %s", ggml_last_error())) {
        compute(ctx, to_flat, 2);
        compute(ctx, to_q6, 2);
        compute(ctx, ggml_cpy(ctx, q, full), 1);
        CHECK(memcmp(flat->data, full->data, ggml_nbytes(full)) == 0 && memcmp(q6->data, q->data, ggml_nbytes(q)) == 0,
              "the rows keep their order across the reshaping copy, both ways");
    }
    CHECK(!ggml_cpy(ctx, q, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2 * NE0, 3)) && strstr(ggml_last_error(), "rows of one length"),
          "a copy that would split quantized rows: %s", ggml_last_error());

    /* concat of two Q4_0 tensors moves whole blocks: along dim 0 each row is
     * q's row then q's row again; along dim 2 q's bytes twice */
    for (int dim = 0; dim <= 2; dim += 2) {
        struct ggml_tensor * cc = ggml_concat(ctx, q, q, dim);
        if (!CHECK(cc != NULL, "concat of Q4_0 along dim %d: %s", dim, ggml_last_error())) continue;
        compute(ctx, cc, 2);
        int bad = 0;
        for (int r = 0; r < NE1 * NE2; r++)
            for (int half = 0; half < 2; half++) {
                const char * got = dim == 0 ? (const char *) cc->data + (2 * r + half) * row : (const char *) cc->data + (half * NE1 * NE2 + r) * row;
                bad += memcmp(got, (const char *) q->data + r * row, row) != 0;
            }
        CHECK(bad == 0, "concat of Q4_0 along dim %d: the blocks of both halves in place (%d rows wrong)", dim, bad);
    }

    /* get_rows_back reads a Q4_0 gradient's rows dequantized: as from their F32 copy */
    struct ggml_tensor * rows = ggml_new_tensor_3d(ctx, GGML_TYPE_I32, NE1, NE2, 1);
    for (int i = 0; i < NE1 * NE2; i++) ggml_set_i32_1d(rows, i, (i * 2) % NE1);
    struct ggml_tensor * table = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, NE0, NE1, NE2);
    struct ggml_tensor * qf = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, NE0, NE1, NE2);
    compute(ctx, ggml_cpy(ctx, q, qf), 1);
    struct ggml_tensor * back_q = ggml_get_rows_back(ctx, q, rows, table), * back_f = ggml_get_rows_back(ctx, qf, rows, table);
    if (CHECK(back_q && back_f, "get_rows_back of a Q4_0 gradient: %s", ggml_last_error())) {
        compute(ctx, back_q, 2);
        compute(ctx, back_f, 2);
        CHECK(memcmp(back_q->data, back_f->data, ggml_nbytes(back_f)) == 0, "get_rows_back of Q4_0 rows = of their F32 copy");
    }
    ggml_free(ctx);
}

static void test_storage_only(void) {
    static const enum ggml_type types[] = {GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ3_S, GGML_TYPE_IQ1_M, GGML_TYPE_IQ2_S};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        const enum ggml_type t = types[k];
        const char * name = ggml_type_name(t);
        struct ggml_context * ctx = tc_ctx(4);
        struct ggml_tensor * a = ggml_new_tensor_2d(ctx, t, 256, 3);
        if (!CHECK(a != NULL, "%s: a tensor can be created: %s", name, ggml_last_error())) { ggml_free(ctx); continue; }
        CHECK(ggml_nbytes(a) == 3 * ggml_type_size(t), "%s: 3 rows of one block", name);
        for (size_t i = 0; i < ggml_nbytes(a); i++) ((unsigned char *) a->data)[i] = (unsigned char) (i * 13 + 1);

        /* a row view; a copy to the same type moves the bytes */
        struct ggml_tensor * b = ggml_new_tensor_2d(ctx, t, 256, 3);
        compute(ctx, ggml_cpy(ctx, a, b), 2);
        CHECK(memcmp(a->data, b->data, ggml_nbytes(a)) == 0, "%s: a same-type copy moves the bytes", name);
        /* converting nodes build and then refuse to compute */
        struct ggml_tensor * f = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 256, 3);
        CHECK(ggml_view_2d(ctx, a, 256, 2, a->nb[1], a->nb[1]) != NULL, "%s: a view of rows: %s", name, ggml_last_error());
        struct ggml_tensor * nodes[2] = {ggml_cpy(ctx, a, f), ggml_get_rows(ctx, a, ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1))};
        for (int n = 0; n < 2; n++) {
            if (!CHECK(nodes[n] != NULL, "%s: node %d builds: %s", name, n, ggml_last_error())) continue;
            memset(nodes[n]->data, 0x5A, ggml_nbytes(nodes[n]));
            struct ggml_cgraph * g = ggml_new_graph(ctx);
            ggml_build_forward_expand(g, nodes[n]);
            ggml_clear_error();
            const enum ggml_status st = ggml_graph_compute_with_ctx(ctx, g, 2);
            CHECK(st != GGML_STATUS_SUCCESS && strstr(ggml_last_error(), name) && strstr(ggml_last_error(), "cannot convert"),
                  "%s: computing node %d fails with a message: %s", name, n, ggml_last_error());
            size_t changed = 0;
            for (size_t i = 0; i < ggml_nbytes(nodes[n]); i++) changed += ((unsigned char *) nodes[n]->data)[i] != 0x5A;
            CHECK(changed == 0, "%s: node %d's memory is untouched (%zu bytes changed)", name, n, changed);
        }
        ggml_backend_t cpu = ggml_backend_cpu_init();
        CHECK(nodes[0] && !ggml_backend_supports_op(cpu, nodes[0]), "%s: the CPU backend does not support the copy", name);
        ggml_backend_free(cpu);
        ggml_clear_error();
        ggml_set_param(a);
        CHECK(!(a->flags & GGML_TENSOR_FLAG_PARAM), "%s: not a parameter", name);
        ggml_free(ctx);
    }
}

int main(void) {
    tc_seed(9);
    test_views();
    test_storage_only();
    return tc_finish("quant views");
}

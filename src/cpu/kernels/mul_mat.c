/* matmul.c -- the two matrix products, on one GEMM driver:
 *   mul_mat:  dst[i, j] = sum_k a[k, i] * b[k, j]   (K = a.ne0, contraction over dim 0)
 *   out_prod: dst[i, j] = sum_k a[i, k] * b[j, k]   (K = a.ne1, contraction over dim 1)
 *   mul_mat_id: dst[:, e, t] = mul_mat(as[:, :, ids[e, t]], b[:, e % n_b, t])   (a dot product per element)
 * per (i2, i3) plane; a's planes are shared by contiguous groups of b's
 * (i02 = i2 / (ne2/ne02)). Both read their F32 operands through strides, so a
 * transposed or permuted view is multiplied as it lies (no copy first); a
 * first operand of another type (F16, BF16, a block type) is converted to
 * F32 as its panels are packed, a second operand (activations) of F16 or
 * BF16 once per node into a packed F32 copy that is then read like an F32
 * b; mul_mat of a block type (and of BF16 with
 * few columns) goes to the dot products of mul_mat_quant.c instead, and
 * products at GGML_PREC_BF16 to the bf16 kernels of mul_mat_bf16.c where the
 * CPU has them.
 *
 * The driver computes dst[i, j] = sum_k P(i, k) X(j, k), P = a and X = b seen
 * through (row, reduction) strides. Blocked on the micro-kernel gemm_6xc_acc.
 * Phase 0 packs P, once, into panels of TC rows i stored k-major, panel[k][c]
 * (shared scratch), except whole panels whose rows i are contiguous, which
 * are read in place. Phase 1: each group of TILE_R columns j runs the whole
 * reduction over k against one panel in registers, reading X in place through
 * its strides (gathered only for a last, partial group); a panel of at most
 * TC / 2 rows runs the half-width kernel. A task is (plane, one panel or
 * all of them, group of columns); thread ith takes the ith contiguous share
 * of the tasks, so its columns j are the rows that the next row-wise node
 * (bias, norm, activation) gives it, still in its cache. Every element of dst
 * is computed by one task in a fixed order, so the result does not depend on
 * the thread count or on how the columns are grouped. */
#include "cpu/kernels/kernels.h"

#define TR GGMLR_TILE_R
#define J_MAX (16 * TR)   /* columns of X per task, at most */
#define KC 256            /* reduction block: a panel block of KC x TC floats stays in L2 */
#define MIN_TASKS 8       /* split columns finer until there are this many tasks */
#define P_CACHED_FLOATS (128 * 1024)  /* 512 KB: about half the L2 of a current x86 core */

/* P(i, k) at p->data + i*p_i + k*p_k + plane offsets (bytes), likewise X(j, k). */
struct gemm_view {
    const struct ggml_tensor * p, * x;
    size_t p_i, p_k, x_j, x_k;
    int64_t M, N, K;
};

static struct gemm_view view_of_operands(enum ggml_op op, const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (op == GGML_OP_OUT_PROD) return (struct gemm_view) {a, b, a->nb[0], a->nb[1], b->nb[0], b->nb[1], a->ne[0], b->ne[0], a->ne[1]};
    return (struct gemm_view) {a, b, a->nb[1], a->nb[0], b->nb[1], b->nb[0], a->ne[1], b->ne[1], a->ne[0]};
}

static struct gemm_view view_of(const struct ggml_tensor * dst) { return view_of_operands(dst->op, dst->src[0], dst->src[1]); }

/* Activations b stored as F16 or BF16 are converted, once per node, to a
 * packed F32 copy of b's shape in shared scratch after the panels; the
 * product then reads that copy as it reads an F32 b. */
static size_t b_f32_floats(const struct ggml_tensor * dst) {
    return dst->src[1]->type == GGML_TYPE_F32 ? 0 : (size_t) ggml_nelements(dst->src[1]);
}

/* The copy's header: b's shape, F32, packed strides, data `offset` floats
 * into the shared scratch (none when the scratch is empty). */
static struct ggml_tensor b_as_f32(const struct ggml_tensor * b, float * shared, size_t offset) {
    struct ggml_tensor t = *b;
    t.type = GGML_TYPE_F32;
    t.data = shared ? shared + offset : NULL;
    t.nb[0] = sizeof(float);
    for (int d = 1; d < GGML_MAX_DIMS; d++) t.nb[d] = t.nb[d - 1] * (size_t) t.ne[d - 1];
    return t;
}

/* Row t = (i1, i2, i3) of b, converted into its place in the copy: rows split over the threads. */
static void convert_b(const struct ggmlr_compute_params * p, const struct ggml_tensor * b, float * out) {
    const int64_t n1 = b->ne[1], n2 = b->ne[2];
    for (int64_t t = p->ith; t < n1 * n2 * b->ne[3]; t += p->nth)
        ggmlr_row_f32(b, t % n1, t / n1 % n2, t / (n1 * n2), out + t * b->ne[0]);  /* a row not F32 is written to its scratch */
}

static int64_t n_panels(const struct gemm_view * v, int64_t TC) { return (v->M + TC - 1) / TC; }

/* floats of the packed panels of all of P's planes (shared scratch) */
static size_t panel_floats(const struct gemm_view * v, int64_t TC) { return (size_t) (v->p->ne[2] * v->p->ne[3] * n_panels(v, TC) * v->K * TC); }

static int64_t gcd(int64_t a, int64_t b) { return b ? gcd(b, a % b) : a; }

/* Groups of columns when each (plane, range of panels) is split into tasks:
 * at least MIN_TASKS tasks when the shape allows, at most J_MAX columns a
 * group, and a multiple of nth tasks in all where the columns allow, so that
 * the threads' shares are equal. Group g holds the TR-column micro-groups
 * [g nmg / groups, (g + 1) nmg / groups), so group sizes differ by one
 * micro-group at most. */
static int64_t n_col_groups(const struct gemm_view * v, int64_t planes, int64_t ranges, int nth) {
    const int64_t nmg = (v->N + TR - 1) / TR, others = planes * ranges;
    if (others == 0 || nmg == 0) return 1;  /* an empty result: nothing to split */
    int64_t groups = (MIN_TASKS + others - 1) / others;
    const int64_t fewest = (nmg + J_MAX / TR - 1) / (J_MAX / TR);
    if (groups < fewest) groups = fewest;
    const int64_t step = nth / gcd(others % nth, nth);  /* others * groups is a multiple of nth when step divides groups */
    groups = (groups + step - 1) / step * step;
    return groups > nmg ? nmg : groups;
}

/* Panels per task: one (each task reads its panel of P and a slice of X: X
 * is read once per panel) or all of them (each task reads its slice of X
 * once, and P once per group of columns), whichever reads fewer floats,
 * groups * |P| + panels * |X| against groups' * |P| + |X|; all of them only
 * when P's plane fits in a core's L2 cache, else every group of columns
 * would stream it from memory again. */
static int64_t panels_per_task(const struct gemm_view * v, int64_t np, int64_t planes, int nth) {
    if (v->M * v->K > P_CACHED_FLOATS) return 1;
    const double p = (double) v->M, x = (double) v->N;  /* |P|, |X| per unit of K */
    const double one = (double) n_col_groups(v, planes, np, nth) * p + (double) np * x;
    const double all = (double) n_col_groups(v, planes, 1, nth) * p + x;
    return all < one ? np : 1;
}

static size_t ggmlr_mul_mat_work_size(const struct ggml_tensor * dst) {
    if (ggmlr_mul_mat_quant_applies(dst)) return ggmlr_mul_mat_quant_work_size(dst);
    if (ggmlr_mul_mat_bf16_applies(dst)) return ggmlr_mul_mat_bf16_work_size(dst);
    /* TR gathered column slices of X, the task's J_MAX x TC results; and a
     * row of a that is not F32, converted */
    const size_t row = dst->src[0]->type == GGML_TYPE_F32 ? 0 : (size_t) dst->src[0]->ne[0];
    return (size_t) (TR * KC + J_MAX * ggmlr_vec()->tile_c + 16 + row) * sizeof(float);
}

static size_t ggmlr_mul_mat_shared_size(const struct ggml_tensor * dst) {
    if (ggmlr_mul_mat_quant_applies(dst)) return ggmlr_mul_mat_quant_shared_size(dst);
    if (ggmlr_mul_mat_bf16_applies(dst)) return ggmlr_mul_mat_bf16_shared_size(dst);
    const struct gemm_view v = view_of(dst);
    return (panel_floats(&v, ggmlr_vec()->tile_c) + b_f32_floats(dst)) * sizeof(float);
}

/* panel[k][c] = P(i0 + c, k) of one plane of P, zero for rows past M. Rows i
 * that are contiguous in k (mul_mat's transposed operand) are transposed in
 * blocks of 8; otherwise k by k, so the panel is written in order. */
static void pack_panel(const struct gemm_view * v, const char * base, int64_t i0, int64_t TC, float * panel) {
    const int64_t ni = v->M - i0 < TC ? v->M - i0 : TC, K = v->K;
    const bool blocks = v->p_k == sizeof(float) && v->p_i % sizeof(float) == 0 && v->p_i != sizeof(float);
    const int64_t transposed = blocks ? ni / 8 * 8 : 0;  /* rows [0, transposed) are done in blocks */
    for (int64_t c = 0; c < transposed; c += 8)
        ggmlr_vec()->transpose8(K, (const float *) (base + (size_t) (i0 + c) * v->p_i), (int64_t) (v->p_i / sizeof(float)), 1.0f,
                                panel + c, TC);
    for (int64_t k = 0; k < K; k++) {
        const char * src = base + (size_t) k * v->p_k + (size_t) i0 * v->p_i;
        float * out = panel + k * TC;
        if (v->p_i == sizeof(float)) memcpy(out, src, (size_t) ni * sizeof(float));
        else for (int64_t c = transposed; c < ni; c++) out[c] = *(const float *) (src + (size_t) c * v->p_i);
        memset(out + ni, 0, (size_t) (TC - ni) * sizeof(float));
    }
}

/* A whole panel of P whose rows i are contiguous (out_prod's first operand)
 * is read in place, its k-th row TC floats at stride p_k: no packing. */
static bool panel_in_place(const struct gemm_view * v, int64_t i0, int64_t TC) {
    return v->p->type == GGML_TYPE_F32 && v->p_i == sizeof(float) && v->p_k % sizeof(float) == 0 && i0 + TC <= v->M;
}

/* P stored as F16, BF16 or a block type (a frozen or quantized weight):
 * every panel is packed from its rows converted to F32 (ggmlr_row_f32),
 * each row of a's tensor converted once. Row r of mul_mat's a holds P(r, k)
 * for all k; row r of out_prod's a holds P(i, r) for all i. Task t is
 * (plane, row r); the panels' rows past M are zeroed by the task of row 0. */
static void pack_converted(const struct ggmlr_compute_params * p, const struct gemm_view * v, const struct ggml_tensor * dst,
                           int64_t TC, int64_t np, float * panels, float * row) {
    const struct ggml_tensor * P = v->p;
    const bool rows_are_i = dst->op == GGML_OP_MUL_MAT;
    const int64_t K = v->K, M = v->M, tail = np * TC - M;
    for (int64_t t = p->ith; t < P->ne[1] * P->ne[2] * P->ne[3]; t += p->nth) {
        const int64_t r = t % P->ne[1], plane = t / P->ne[1];
        float * planel = panels + plane * np * K * TC;
        const float * x = ggmlr_row_f32(P, r, plane % P->ne[2], plane / P->ne[2], row);
        if (rows_are_i) {
            float * dstp = planel + (r / TC) * K * TC + r % TC;
            for (int64_t k = 0; k < K; k++) dstp[k * TC] = x[k];
        } else {
            for (int64_t i = 0; i < M; i++) planel[(i / TC) * K * TC + r * TC + i % TC] = x[i];
        }
        if (r == 0 && tail > 0)
            for (int64_t k = 0; k < K; k++) memset(planel + (np - 1) * K * TC + k * TC + (TC - tail), 0, (size_t) tail * sizeof(float));
    }
}

static void ggmlr_compute_mul_mat(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    if (ggmlr_mul_mat_quant_applies(dst)) {
        ggmlr_mul_mat_quant(p, dst);
        return;
    }
    if (ggmlr_mul_mat_bf16_applies(dst)) {
        ggmlr_mul_mat_bf16(p, dst);
        return;
    }
    const struct ggmlr_vec_ops * vec = ggmlr_vec();
    const int64_t TC = vec->tile_c;
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    float * panels = p->shared, * xrows = p->wdata, * ctile = xrows + TR * KC;
    const struct gemm_view as_stored = view_of(dst);
    const struct ggml_tensor b32 = b_as_f32(b, panels, panel_floats(&as_stored, TC));
    const bool convert = b->type != GGML_TYPE_F32;
    const struct gemm_view v = view_of_operands(dst->op, a, convert ? &b32 : b);
    const struct ggml_tensor * P = v.p, * X = v.x;
    const int64_t K = v.K, M = v.M, N = v.N, np = n_panels(&v, TC);
    const int64_t r2 = dst->ne[2] / P->ne[2], r3 = dst->ne[3] / P->ne[3];

    /* phase 0: b converted to F32 where it is not; panel (plane of P, pi) */
    if (convert) convert_b(p, b, b32.data);
    if (P->type != GGML_TYPE_F32) pack_converted(p, &v, dst, TC, np, panels, ctile + J_MAX * TC + 16);
    else for (int64_t t = p->ith; t < P->ne[2] * P->ne[3] * np; t += p->nth) {
        const int64_t pi = t % np, plane = t / np;
        const char * base = (const char *) P->data + (plane % P->ne[2]) * P->nb[2] + (plane / P->ne[2]) * P->nb[3];
        if (!panel_in_place(&v, pi * TC, TC)) pack_panel(&v, base, pi * TC, TC, panels + t * K * TC);
    }
    ggmlr_barrier(p);

    /* phase 1: task = (plane of dst, range of panels, columns [j_begin, j_end)) */
    const bool x_in_place = v.x_j % sizeof(float) == 0 && v.x_k % sizeof(float) == 0;
    const int64_t xs_j = (int64_t) (v.x_j / sizeof(float)), xs_k = (int64_t) (v.x_k / sizeof(float));
    const int64_t planes = dst->ne[2] * dst->ne[3], per_task = panels_per_task(&v, np, planes, p->nth), ranges = np / per_task;
    const int64_t n_groups = n_col_groups(&v, planes, ranges, p->nth), nmg = (N + TR - 1) / TR;
    const int64_t n_tasks = ranges * n_groups * planes;
    int64_t task, last;
    ggmlr_split(n_tasks, p->ith, p->nth, &task, &last);
    for (; task < last; task++) {
        const int64_t range = task % ranges, gi = (task / ranges) % n_groups, plane = task / (ranges * n_groups);
        const int64_t i2 = plane % dst->ne[2], i3 = plane / dst->ne[2], p2 = i2 / r2, p3 = i3 / r3;
        const char * xplane = (const char *) X->data + i2 * X->nb[2] + i3 * X->nb[3];
        const int64_t j_begin = TR * (gi * nmg / n_groups), j_stop = TR * ((gi + 1) * nmg / n_groups);
        const int64_t j_end = j_stop < N ? j_stop : N;
        for (int64_t pi = range * per_task; pi < (range + 1) * per_task; pi++) {
            const int64_t i0 = pi * TC, ni = M - i0 < TC ? M - i0 : TC;
            const bool in_place = panel_in_place(&v, i0, TC);
            const int64_t ldp = in_place ? (int64_t) (v.p_k / sizeof(float)) : TC;
            const float * panel = in_place ? (const float *) ((const char *) P->data + p2 * P->nb[2] + p3 * P->nb[3]) + i0
                                           : panels + (p3 * P->ne[2] * np + p2 * np + pi) * K * TC;
            /* a whole panel accumulates straight into dst's rows; a partial one in
             * ctile, copied out at the end (ctile then also takes the rows past
             * j_end of a last, partial group of columns) */
            const bool direct = ni == TC && dst->nb[0] == sizeof(float);
            if (direct)
                for (int64_t j = j_begin; j < j_end; j++) memset(ggmlr_elem_ptr(dst, i0, j, i2, i3), 0, (size_t) TC * sizeof(float));
            else memset(ctile, 0, (size_t) ((j_end - j_begin + TR - 1) / TR * TR * TC) * sizeof(float));
            for (int64_t k0 = 0; k0 < K; k0 += KC) {
                const int64_t kc = K - k0 < KC ? K - k0 : KC;
                for (int64_t j0 = j_begin; j0 < j_end; j0 += TR) {
                    const int64_t nj = j_end - j0 < TR ? j_end - j0 : TR;
                    /* X(j0 + r, k0 + k) for r < TR, k < kc: in place, or gathered with zero rows past nj */
                    const float * xp;
                    int64_t ars, aks;
                    if (x_in_place && nj == TR) {
                        xp = (const float *) (xplane + (size_t) j0 * v.x_j + (size_t) k0 * v.x_k);
                        ars = xs_j;
                        aks = xs_k;
                    } else {
                        for (int64_t r = 0; r < TR; r++) {
                            float * row = xrows + r * KC;
                            if (r >= nj) { memset(row, 0, (size_t) kc * sizeof(float)); continue; }
                            const char * src = xplane + (size_t) (j0 + r) * v.x_j + (size_t) k0 * v.x_k;
                            for (int64_t k = 0; k < kc; k++) row[k] = *(const float *) (src + (size_t) k * v.x_k);
                        }
                        xp = xrows;
                        ars = KC;
                        aks = 1;
                    }
                    float * out[TR];
                    for (int r = 0; r < TR; r++) {
                        if (!direct) out[r] = ctile + (j0 - j_begin + r) * TC;
                        else if (j0 + r < j_end) out[r] = (float *) ggmlr_elem_ptr(dst, i0, j0 + r, i2, i3);
                        else out[r] = ctile;  /* a row past the task's columns: scratch */
                    }
                    /* a last panel of at most TC / 2 rows (the LM head's 82 = 64 + 18) needs half the work */
                    if (ni <= TC / 2) vec->gemm_6xh_acc(kc, xp, ars, aks, panel + k0 * ldp, ldp, out);
                    else vec->gemm_6xc_acc(kc, xp, ars, aks, panel + k0 * ldp, ldp, out);
                }
            }
            if (!direct)
                for (int64_t j = j_begin; j < j_end; j++)
                    memcpy(ggmlr_elem_ptr(dst, i0, j, i2, i3), ctile + (j - j_begin) * TC, (size_t) ni * sizeof(float));
        }
    }
}

GGMLR_KERNEL(mul_mat, ggmlr_compute_mul_mat, ggmlr_mul_mat_work_size, ggmlr_mul_mat_shared_size);  /* MUL_MAT, OUT_PROD */

/* MUL_MAT_ID: dst row (e, t) = as[:, :, x]^T b[:, e % n_b, t] with x = ids[e, t]
 * (checked: out of range fails the compute). Threads split dst rows; each
 * element is one dot product of length K (rows of as and b packed into
 * scratch when strided or not F32: as and b may be of any type with a
 * converter), so the result does not depend on the thread count. */
static void ggmlr_compute_mul_mat_id(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * as = dst->src[0], * b = dst->src[1], * ids = ggmlr_expert_ids_decode(dst);
    const struct ggmlr_vec_ops * vec = ggmlr_vec();
    const int64_t K = as->ne[0];
    float * xs = p->wdata, * ws = xs ? xs + K : NULL;  /* K = 0: no scratch */
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, e, t, i3;
    while (ggmlr_next_row(&rows, &r, &e, &t, &i3)) {
        const int32_t x = *(const int32_t *) ggmlr_elem_ptr(ids, e, t, 0, 0);
        if (x < 0 || x >= as->ne[2]) {
            ggmlr_compute_fail(p, "MUL_MAT_ID: expert id %d at (%lld, %lld) is outside [0, %lld)", (int) x, (long long) e, (long long) t,
                               (long long) as->ne[2]);
            return;
        }
        const float * xv = ggmlr_row_f32(b, e % b->ne[1], t, 0, xs);
        float * y = ggmlr_elem_ptr(dst, 0, e, t, 0);
        for (int64_t m = 0; m < dst->ne[0]; m++)
            *(float *) ((char *) y + m * dst->nb[0]) = vec->dot(K, ggmlr_row_f32(as, m, x, 0, ws), xv);
    }
}

static size_t mul_mat_id_work(const struct ggml_tensor * dst) { return 2 * (size_t) dst->src[0]->ne[0] * sizeof(float); }

GGMLR_KERNEL(mul_mat_id, ggmlr_compute_mul_mat_id, mul_mat_id_work, NULL);

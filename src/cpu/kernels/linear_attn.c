/* linear_attn.c -- the recurrent linear attentions (RWKV_WKV6,
 * GATED_LINEAR_ATTN, RWKV_WKV7, GATED_DELTA_NET): per sequence and head, the
 * recurrence over its tokens. The heads (GATED_DELTA_NET: the (sequence, head)
 * pairs) are split over the threads; each is computed by one thread in a
 * fixed order, so the result does not depend on the thread count.
 *
 * RWKV_WKV6 and GATED_LINEAR_ATTN are one recurrence (core/op_list.h), the
 * state S [key i, value j] row-major, P = S_{t-1}:
 *   y_t[j] = sum_i q_i (a_i P_ij + b_i k_i v_j)      S_t[i][j] = w_i P_ij + k_i v_j
 * WKV6: q = r, a = 1, b = tf, w = td;  GLA: q = scale q, a = w = g, b = 1.
 * Their _BACK ops, RWKV_WKV7_BACK and GATED_DELTA_NET_BACK run the recurrences back
 * through time (below), each packing the gradients of all its sources.
 * RWKV_WKV7, the state S [value i, key j] row-major:
 *   S_t[i][j] = P_ij w_j + v_i k_j + (sum_l P_il a_l) b_j      y_t[i] = sum_j S_t[i][j] r_j
 * GATED_DELTA_NET, the state kept transposed, M[j][i] = S[i][j] (key i, value j):
 *   S *= exp(g) (scalar, or row i by exp(g_i));  d_j = beta (v_j - sum_i S_ij k_i);
 *   S_ij += k_i d_j;  y_j = sum_i S_ij q_i / sqrt(S_v)
 * The per-token inputs are read a row (one head's S values) at a time in any
 * layout; the first three's state is contiguous [S*S*H, n_seqs]. */
#include "cpu/kernels/kernels.h"

#include <math.h>
#include <string.h>

/* shapes of the first three: S, H, n_tokens (k's), n_seqs (the state's ne1), tokens per sequence */
struct rec_dims { int64_t S, H, T, n_seqs, T_seq; };

static struct rec_dims rec_dims(const struct ggml_tensor * k, const struct ggml_tensor * state) {
    const int64_t n_seqs = state->ne[1];
    return (struct rec_dims) {k->ne[0], k->ne[1], k->ne[2], n_seqs, k->ne[2] / n_seqs};
}

/* ---- RWKV_WKV6, GATED_LINEAR_ATTN ---- */

/* scratch: the rows k, v, q, w, u of one token and head, and a row of ones */
static size_t decay_attn_work_size(const struct ggml_tensor * dst) { return 6 * (size_t) dst->src[0]->ne[0] * sizeof(float); }

/* One token's inputs for head h (pointers into the tensors or into scratch). */
struct decay_row { const float * k, * v, * q, * w, * a, * b; };

static struct decay_row decay_row(const struct ggmlr_decay_attn_srcs * s, int64_t h, int64_t tok, const float * u, const float * ones,
                                  float * scratch, int64_t S) {
    struct decay_row r;
    r.k = ggmlr_row_f32(s->k, h, tok, 0, scratch);
    r.v = ggmlr_row_f32(s->v, h, tok, 0, scratch + S);
    r.q = ggmlr_row_f32(s->q, h, tok, 0, scratch + 2 * S);
    r.w = ggmlr_row_f32(s->w, h, tok, 0, scratch + 3 * S);
    r.a = u ? ones : r.w;
    r.b = u ? u : ones;
    return r;
}

static void decay_attn_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_decay_attn_srcs s = ggmlr_decay_attn_srcs_decode(dst);
    const struct rec_dims d = rec_dims(s.k, s.state);
    const int64_t S = d.S, C = d.S * d.H;
    const float scale = ggmlr_decay_attn_scale_decode(dst);
    float * scratch = p->wdata, * ones = scratch + 5 * S;
    for (int64_t i = 0; i < S; i++) ones[i] = 1.0f;
    float * out = dst->data;
    int64_t h0, h1;
    ggmlr_split(d.H, p->ith, p->nth, &h0, &h1);
    for (int64_t h = h0; h < h1; h++) {
        const float * u = s.u ? ggmlr_row_f32(s.u, h, 0, 0, scratch + 4 * S) : NULL;
        for (int64_t seq = 0; seq < d.n_seqs; seq++) {
            float * st = out + C * d.T + (seq * d.H + h) * S * S;
            memcpy(st, (const float *) s.state->data + (seq * d.H + h) * S * S, (size_t) (S * S) * sizeof(float));
            for (int64_t tok = seq * d.T_seq; tok < (seq + 1) * d.T_seq; tok++) {
                const struct decay_row r = decay_row(&s, h, tok, u, ones, scratch, S);
                float * y = out + tok * C + h * S;
                for (int64_t j = 0; j < S; j++) y[j] = 0.0f;
                for (int64_t i = 0; i < S; i++) {
                    const float qa = scale * r.q[i] * r.a[i], qbk = scale * r.q[i] * r.b[i] * r.k[i];
                    float * row = st + i * S;
                    for (int64_t j = 0; j < S; j++) {
                        y[j] += qa * row[j] + qbk * r.v[j];
                        row[j] = r.w[i] * row[j] + r.k[i] * r.v[j];
                    }
                }
            }
        }
    }
}

/* ---- RWKV_WKV6_BACK, GATED_LINEAR_ATTN_BACK ----
 * Back through time with G = dL/dS_t (from the result's state rows at the
 * last token), dy = dL/dy_t, P = S_{t-1} (kept from a forward pass):
 *   dq'_i = a_i sum_j dy_j P_ij + b_i k_i (dy.v)     (dq = scale dq')
 *   da_i  = q'_i sum_j dy_j P_ij                      db_i = q'_i k_i (dy.v)
 *   dk_i  = q'_i b_i (dy.v) + sum_j G_ij v_j          dw_i = sum_j G_ij P_ij
 *   dv_j  = dy_j sum_i q'_i b_i k_i + sum_i G_ij k_i
 *   then G := dL/dS_{t-1} = q'_i a_i dy_j + w_i G_ij; the state's gradient is G at the first token.
 * WKV6: dr = dq', dtd = dw, dtf = the sum of db over tokens and sequences;
 * GLA: dg = da + dw. The result packs them slot by slot (core/op_list.h). */

/* scratch: one sequence's states before each token, G, the five rows, ones, dv */
static size_t decay_attn_back_work_size(const struct ggml_tensor * dst) {
    const struct ggmlr_decay_attn_srcs s = ggmlr_decay_attn_srcs_decode(dst);
    const struct rec_dims d = rec_dims(s.k, s.state);
    return ((size_t) (d.T_seq + 1) * (size_t) (d.S * d.S) + 7 * (size_t) d.S) * sizeof(float);
}

static void decay_attn_backward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_decay_attn_srcs s = ggmlr_decay_attn_srcs_decode(dst);
    const struct rec_dims d = rec_dims(s.k, s.state);
    const int64_t S = d.S, SS = d.S * d.S, C = d.S * d.H;
    const bool wkv6 = s.u != NULL;
    const float scale = ggmlr_decay_attn_scale_decode(dst);
    float * saved = p->wdata, * G = saved + d.T_seq * SS, * scratch = G + SS, * ones = scratch + 5 * S, * dv = ones + S;
    for (int64_t i = 0; i < S; i++) ones[i] = 1.0f;
    const float * grad = s.grad->data;
    float * out = dst->data;
    float * dk = out, * dvv = out + ggmlr_packed_grad_offset(dst, 1), * dq = out + ggmlr_packed_grad_offset(dst, 2);
    float * du = wkv6 ? out + ggmlr_packed_grad_offset(dst, 3) : NULL, * dw = out + ggmlr_packed_grad_offset(dst, wkv6 ? 4 : 3);
    float * dstate = out + ggmlr_packed_grad_offset(dst, wkv6 ? 5 : 4);
    int64_t h0, h1;
    ggmlr_split(d.H, p->ith, p->nth, &h0, &h1);
    for (int64_t h = h0; h < h1; h++) {
        const float * u = wkv6 ? ggmlr_row_f32(s.u, h, 0, 0, scratch + 4 * S) : NULL;
        if (du) for (int64_t i = 0; i < S; i++) du[h * S + i] = 0.0f;
        for (int64_t seq = 0; seq < d.n_seqs; seq++) {
            const int64_t tok0 = seq * d.T_seq;
            memcpy(saved, (const float *) s.state->data + (seq * d.H + h) * SS, (size_t) SS * sizeof(float));
            for (int64_t tt = 0; tt + 1 < d.T_seq; tt++) {  /* saved[tt] = the state before token tok0 + tt */
                const struct decay_row r = decay_row(&s, h, tok0 + tt, u, ones, scratch, S);
                const float * P = saved + tt * SS;
                float * next = saved + (tt + 1) * SS;
                for (int64_t i = 0; i < S; i++)
                    for (int64_t j = 0; j < S; j++) next[i * S + j] = r.w[i] * P[i * S + j] + r.k[i] * r.v[j];
            }
            memcpy(G, grad + C * d.T + (seq * d.H + h) * SS, (size_t) SS * sizeof(float));
            for (int64_t tt = d.T_seq - 1; tt >= 0; tt--) {
                const int64_t tok = tok0 + tt, at = tok * C + h * S;
                const struct decay_row r = decay_row(&s, h, tok, u, ones, scratch, S);
                const float * dy = grad + at, * P = saved + tt * SS;
                float sv = 0.0f, qbk = 0.0f;
                for (int64_t j = 0; j < S; j++) { sv += dy[j] * r.v[j]; dv[j] = 0.0f; }
                for (int64_t i = 0; i < S; i++) qbk += scale * r.q[i] * r.b[i] * r.k[i];
                for (int64_t i = 0; i < S; i++) {
                    const float qs = scale * r.q[i], * Pi = P + i * S;
                    float * Gi = G + i * S, Py = 0.0f, Gv = 0.0f, GP = 0.0f;
                    for (int64_t j = 0; j < S; j++) {
                        Py += dy[j] * Pi[j];
                        Gv += Gi[j] * r.v[j];
                        GP += Gi[j] * Pi[j];
                        dv[j] += Gi[j] * r.k[i];
                        Gi[j] = qs * r.a[i] * dy[j] + r.w[i] * Gi[j];  /* G becomes dL/dS_{t-1} */
                    }
                    dk[at + i] = qs * r.b[i] * sv + Gv;
                    dq[at + i] = scale * (r.a[i] * Py + r.b[i] * r.k[i] * sv);
                    dw[at + i] = wkv6 ? GP : GP + qs * Py;
                    if (du) du[h * S + i] += qs * r.k[i] * sv;
                }
                for (int64_t j = 0; j < S; j++) dvv[at + j] = dy[j] * qbk + dv[j];
            }
            memcpy(dstate + (seq * d.H + h) * SS, G, (size_t) SS * sizeof(float));
        }
    }
}

/* ---- RWKV_WKV7 ---- */

/* scratch: the rows r, w, k, v, a, b of one token and head */
static size_t wkv7_work_size(const struct ggml_tensor * dst) { return 6 * (size_t) dst->src[0]->ne[0] * sizeof(float); }

static void wkv7_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_wkv7_srcs s = ggmlr_wkv7_srcs_decode(dst);
    const struct rec_dims d = rec_dims(s.k, s.state);
    const int64_t S = d.S, C = d.S * d.H;
    float * scratch = p->wdata, * out = dst->data;
    int64_t h0, h1;
    ggmlr_split(d.H, p->ith, p->nth, &h0, &h1);
    for (int64_t h = h0; h < h1; h++)
        for (int64_t seq = 0; seq < d.n_seqs; seq++) {
            float * st = out + C * d.T + (seq * d.H + h) * S * S;
            memcpy(st, (const float *) s.state->data + (seq * d.H + h) * S * S, (size_t) (S * S) * sizeof(float));
            for (int64_t tok = seq * d.T_seq; tok < (seq + 1) * d.T_seq; tok++) {
                const float * r = ggmlr_row_f32(s.r, h, tok, 0, scratch), * w = ggmlr_row_f32(s.w, h, tok, 0, scratch + S);
                const float * k = ggmlr_row_f32(s.k, h, tok, 0, scratch + 2 * S), * v = ggmlr_row_f32(s.v, h, tok, 0, scratch + 3 * S);
                const float * a = ggmlr_row_f32(s.a, h, tok, 0, scratch + 4 * S), * b = ggmlr_row_f32(s.b, h, tok, 0, scratch + 5 * S);
                float * y = out + tok * C + h * S;
                for (int64_t i = 0; i < S; i++) {
                    float * row = st + i * S, sa = 0.0f, acc = 0.0f;
                    for (int64_t j = 0; j < S; j++) sa += a[j] * row[j];
                    for (int64_t j = 0; j < S; j++) {
                        row[j] = row[j] * w[j] + v[i] * k[j] + sa * b[j];
                        acc += row[j] * r[j];
                    }
                    y[i] = acc;
                }
            }
        }
}

/* ---- RWKV_WKV7_BACK ----
 * Back through time with G = dL/dS_t, dy = dL/dy_t, P = S_{t-1} (kept from a
 * forward pass), sa_i = sum_l P_il a_l, S_t as above and Gt = G + dy r^T:
 *   dr_j = sum_i S_ij dy_i   dw_j = sum_i Gt_ij P_ij   dk_j = sum_i Gt_ij v_i   db_j = sum_i Gt_ij sa_i
 *   dv_i = sum_j Gt_ij k_j   dsa_i = sum_j Gt_ij b_j   da_l = sum_i dsa_i P_il
 *   then G := dL/dS_{t-1} = Gt_il w_l + dsa_i a_l; the state's gradient is G at the first token. */

/* scratch: one sequence's states before each token, G, the six rows, the five sums over i */
static size_t wkv7_back_work_size(const struct ggml_tensor * dst) {
    const struct ggmlr_wkv7_srcs s = ggmlr_wkv7_srcs_decode(dst);
    const struct rec_dims d = rec_dims(s.k, s.state);
    return ((size_t) (d.T_seq + 1) * (size_t) (d.S * d.S) + 11 * (size_t) d.S) * sizeof(float);
}

static void wkv7_backward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_wkv7_srcs s = ggmlr_wkv7_srcs_decode(dst);
    const struct rec_dims d = rec_dims(s.k, s.state);
    const int64_t S = d.S, SS = d.S * d.S, C = d.S * d.H;
    float * saved = p->wdata, * G = saved + d.T_seq * SS, * rows = G + SS, * sums = rows + 6 * S;
    float * dr = sums, * dw = sums + S, * dk = sums + 2 * S, * db = sums + 3 * S, * da = sums + 4 * S;
    const float * grad = s.grad->data;
    float * out = dst->data;
    int64_t h0, h1;
    ggmlr_split(d.H, p->ith, p->nth, &h0, &h1);
    for (int64_t h = h0; h < h1; h++)
        for (int64_t seq = 0; seq < d.n_seqs; seq++) {
            const int64_t tok0 = seq * d.T_seq;
            memcpy(saved, (const float *) s.state->data + (seq * d.H + h) * SS, (size_t) SS * sizeof(float));
            for (int64_t tt = 0; tt + 1 < d.T_seq; tt++) {  /* saved[tt] = the state before token tok0 + tt */
                const float * w = ggmlr_row_f32(s.w, h, tok0 + tt, 0, rows), * k = ggmlr_row_f32(s.k, h, tok0 + tt, 0, rows + S);
                const float * v = ggmlr_row_f32(s.v, h, tok0 + tt, 0, rows + 2 * S), * a = ggmlr_row_f32(s.a, h, tok0 + tt, 0, rows + 3 * S);
                const float * b = ggmlr_row_f32(s.b, h, tok0 + tt, 0, rows + 4 * S);
                const float * P = saved + tt * SS;
                float * next = saved + (tt + 1) * SS;
                for (int64_t i = 0; i < S; i++) {
                    float sa = 0.0f;
                    for (int64_t j = 0; j < S; j++) sa += a[j] * P[i * S + j];
                    for (int64_t j = 0; j < S; j++) next[i * S + j] = P[i * S + j] * w[j] + v[i] * k[j] + sa * b[j];
                }
            }
            memcpy(G, grad + C * d.T + (seq * d.H + h) * SS, (size_t) SS * sizeof(float));
            for (int64_t tt = d.T_seq - 1; tt >= 0; tt--) {
                const int64_t tok = tok0 + tt, at = tok * C + h * S;
                const float * r = ggmlr_row_f32(s.r, h, tok, 0, rows), * w = ggmlr_row_f32(s.w, h, tok, 0, rows + S);
                const float * k = ggmlr_row_f32(s.k, h, tok, 0, rows + 2 * S), * v = ggmlr_row_f32(s.v, h, tok, 0, rows + 3 * S);
                const float * a = ggmlr_row_f32(s.a, h, tok, 0, rows + 4 * S), * b = ggmlr_row_f32(s.b, h, tok, 0, rows + 5 * S);
                const float * dy = grad + at, * P = saved + tt * SS;
                memset(sums, 0, 5 * (size_t) S * sizeof(float));
                for (int64_t i = 0; i < S; i++) {
                    const float * Pi = P + i * S;
                    float * Gi = G + i * S, sa = 0.0f, dv = 0.0f, dsa = 0.0f;
                    for (int64_t j = 0; j < S; j++) sa += a[j] * Pi[j];
                    for (int64_t j = 0; j < S; j++) {
                        const float Sij = Pi[j] * w[j] + v[i] * k[j] + sa * b[j];
                        Gi[j] += dy[i] * r[j];  /* Gt */
                        dr[j] += Sij * dy[i];
                        dw[j] += Gi[j] * Pi[j];
                        dk[j] += Gi[j] * v[i];
                        db[j] += Gi[j] * sa;
                        dv += Gi[j] * k[j];
                        dsa += Gi[j] * b[j];
                    }
                    for (int64_t l = 0; l < S; l++) {
                        da[l] += dsa * Pi[l];
                        Gi[l] = Gi[l] * w[l] + dsa * a[l];  /* G becomes dL/dS_{t-1} */
                    }
                    out[ggmlr_packed_grad_offset(dst, 3) + at + i] = dv;
                }
                const int slot_of[5] = {0, 1, 2, 5, 4};  /* dr, dw, dk, db, da: r, w, k, b, a */
                for (int q = 0; q < 5; q++) memcpy(out + ggmlr_packed_grad_offset(dst, slot_of[q]) + at, sums + q * S, (size_t) S * sizeof(float));
            }
            memcpy(out + ggmlr_packed_grad_offset(dst, 6) + (seq * d.H + h) * SS, G, (size_t) SS * sizeof(float));
        }
}

/* ---- GATED_DELTA_NET ---- */

/* scratch: the state M (S*S), the rows q, k, v, g, d (5 S), beta */
static size_t gdn_work_size(const struct ggml_tensor * dst) {
    const int64_t S = ggmlr_gdn_srcs_decode(dst).v->ne[0];
    return ((size_t) (S * S) + 5 * (size_t) S + 1) * sizeof(float);
}

static void gdn_forward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_gdn_srcs s = ggmlr_gdn_srcs_decode(dst);
    const int64_t S = s.v->ne[0], H = s.v->ne[1], T = s.v->ne[2], B = s.v->ne[3], K = ggmlr_i32_param_decode(dst);
    const bool per_key = s.g->ne[0] == S && S != 1;
    const float scale = 1.0f / sqrtf((float) S);
    float * M = p->wdata, * qb = M + S * S, * kb = qb + S, * vb = kb + S, * gb = vb + S, * delta = gb + S, * bb = delta + S;
    float * out = dst->data, * states = out + S * H * T * B;
    const int64_t snap = S * S * H * B;  /* floats per state slot */
    int64_t u0, u1;
    ggmlr_split(H * B, p->ith, p->nth, &u0, &u1);
    for (int64_t unit = u0; unit < u1; unit++) {
        const int64_t h = unit % H, seq = unit / H;
        const int64_t hq = h % s.q->ne[1], sq = seq / (B / s.q->ne[3]), hk = h % s.k->ne[1], sk = seq / (B / s.k->ne[3]);
        for (int64_t j = 0; j < S; j++) memcpy(M + j * S, ggmlr_row_f32(s.state, j, h, seq, delta), (size_t) S * sizeof(float));
        for (int64_t slot = T; slot < K; slot++)  /* before the first token: the initial state */
            memcpy(states + slot * snap + unit * S * S, M, (size_t) (S * S) * sizeof(float));
        for (int64_t t = 0; t < T; t++) {
            const float * q = ggmlr_row_f32(s.q, hq, t, sq, qb), * k = ggmlr_row_f32(s.k, hk, t, sk, kb);
            const float * v = ggmlr_row_f32(s.v, h, t, seq, vb), * g = ggmlr_row_f32(s.g, h, t, seq, gb);
            const float beta = ggmlr_row_f32(s.beta, h, t, seq, bb)[0];
            for (int64_t i = 0; i < S; i++) delta[i] = expf(per_key ? g[i] : g[0]);
            for (int64_t j = 0; j < S; j++) {
                float * row = M + j * S, kS = 0.0f;
                for (int64_t i = 0; i < S; i++) { row[i] *= delta[i]; kS += row[i] * k[i]; }
                /* column j of S depends only on itself: update it, then read it out */
                const float dj = beta * (v[j] - kS);
                float y = 0.0f;
                for (int64_t i = 0; i < S; i++) { row[i] += k[i] * dj; y += row[i] * q[i]; }
                out[((seq * T + t) * H + h) * S + j] = y * scale;
            }
            const int64_t slot = T - 1 - t;
            if (slot < K) memcpy(states + slot * snap + unit * S * S, M, (size_t) (S * S) * sizeof(float));
        }
    }
}

/* ---- GATED_DELTA_NET_BACK ----
 * Back through time per (sequence, head), q and k of v's heads, with
 * G = dL/dS_t (the snapshot slots' gradients added at their tokens), P = S_{t-1}
 * (kept from a forward pass), e_i = exp(g_i) (or exp(g)), S' = diag(e) P,
 * kS = S'^T k, d = beta (v - kS), S_t = S' + k d^T, c = 1/sqrt(S):
 *   Gt = G + c q dy^T          dq = c S_t dy          dd = Gt^T k
 *   dk = Gt d + S' dkS, dkS = -beta dd                dv = beta dd
 *   dbeta = dd.(v - kS)        dS' = Gt + k dkS^T     dg_i = sum_j dS'_ij S'_ij (summed over i for a scalar gate)
 *   then G := dL/dS_{t-1} = diag(e) dS'; the state's gradient is G at the
 *   first token plus the gradients of the slots that hold the initial state. */

/* scratch: the states before each token and G, the rows q, k, v, g, e, dq, dk, dg, and beta */
static size_t gdn_back_work_size(const struct ggml_tensor * dst) {
    const struct ggml_tensor * v = ggmlr_gdn_srcs_decode(dst).v;
    const int64_t S = v->ne[0];
    return ((size_t) (v->ne[2] + 1) * (size_t) (S * S) + 8 * (size_t) S + 1) * sizeof(float);
}

static void gdn_backward(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_gdn_srcs s = ggmlr_gdn_srcs_decode(dst);
    const int64_t S = s.v->ne[0], H = s.v->ne[1], T = s.v->ne[2], B = s.v->ne[3], K = ggmlr_i32_param_decode(dst), SS = S * S;
    const bool per_key = s.g->ne[0] == S && S != 1;
    const float c = 1.0f / sqrtf((float) S);
    float * saved = p->wdata, * G = saved + T * SS, * qb = G + SS, * kb = qb + S, * vb = kb + S, * gb = vb + S, * e = gb + S;
    float * dq = e + S, * dk = dq + S, * dg = dk + S, * bb = dg + S;
    const float * grad = s.grad->data, * gstates = grad + S * H * T * B;
    const int64_t snap = SS * H * B;
    float * out = dst->data;
    float * odq = out, * odk = out + ggmlr_packed_grad_offset(dst, 1), * odv = out + ggmlr_packed_grad_offset(dst, 2);
    float * odg = out + ggmlr_packed_grad_offset(dst, 3), * odb = out + ggmlr_packed_grad_offset(dst, 4);
    float * ods = out + ggmlr_packed_grad_offset(dst, 5);
    int64_t u0, u1;
    ggmlr_split(H * B, p->ith, p->nth, &u0, &u1);
    for (int64_t unit = u0; unit < u1; unit++) {
        const int64_t h = unit % H, seq = unit / H;
        for (int64_t j = 0; j < S; j++) memcpy(saved + j * S, ggmlr_row_f32(s.state, j, h, seq, qb), (size_t) S * sizeof(float));
        for (int64_t t = 0; t + 1 < T; t++) {  /* saved[t] = the state before token t (M[j][i] = S_ij) */
            const float * k = ggmlr_row_f32(s.k, h, t, seq, kb), * v = ggmlr_row_f32(s.v, h, t, seq, vb);
            const float * g = ggmlr_row_f32(s.g, h, t, seq, gb), beta = ggmlr_row_f32(s.beta, h, t, seq, bb)[0];
            for (int64_t i = 0; i < S; i++) e[i] = expf(per_key ? g[i] : g[0]);
            for (int64_t j = 0; j < S; j++) {
                const float * P = saved + t * SS + j * S;
                float * next = saved + (t + 1) * SS + j * S, kS = 0.0f;
                for (int64_t i = 0; i < S; i++) { next[i] = e[i] * P[i]; kS += next[i] * k[i]; }
                const float dj = beta * (v[j] - kS);
                for (int64_t i = 0; i < S; i++) next[i] += k[i] * dj;
            }
        }
        memset(G, 0, (size_t) SS * sizeof(float));
        for (int64_t t = T - 1; t >= 0; t--) {
            const int64_t slot = T - 1 - t, at = (seq * T + t) * H + h;
            if (slot < K)
                for (int64_t x = 0; x < SS; x++) G[x] += gstates[slot * snap + unit * SS + x];
            const float * q = ggmlr_row_f32(s.q, h, t, seq, qb), * k = ggmlr_row_f32(s.k, h, t, seq, kb);
            const float * v = ggmlr_row_f32(s.v, h, t, seq, vb), * g = ggmlr_row_f32(s.g, h, t, seq, gb);
            const float beta = ggmlr_row_f32(s.beta, h, t, seq, bb)[0], * dy = grad + at * S;
            for (int64_t i = 0; i < S; i++) { e[i] = expf(per_key ? g[i] : g[0]); dq[i] = dk[i] = dg[i] = 0.0f; }
            float dbeta = 0.0f;
            for (int64_t j = 0; j < S; j++) {  /* row j of M: column j of S */
                const float * P = saved + t * SS + j * S;
                float * Gj = G + j * S, kS = 0.0f, dd = 0.0f;
                for (int64_t i = 0; i < S; i++) kS += e[i] * P[i] * k[i];
                const float dj = beta * (v[j] - kS);
                for (int64_t i = 0; i < S; i++) {
                    const float Sp = e[i] * P[i];
                    dq[i] += c * (Sp + k[i] * dj) * dy[j];
                    Gj[i] += c * q[i] * dy[j];  /* Gt */
                    dd += Gj[i] * k[i];
                    dk[i] += Gj[i] * dj;
                }
                const float dkS = -beta * dd;
                odv[at * S + j] = beta * dd;
                dbeta += dd * (v[j] - kS);
                for (int64_t i = 0; i < S; i++) {
                    const float Sp = e[i] * P[i], dSp = Gj[i] + k[i] * dkS;
                    dk[i] += Sp * dkS;
                    dg[i] += dSp * Sp;
                    Gj[i] = e[i] * dSp;  /* G becomes dL/dS_{t-1} */
                }
            }
            memcpy(odq + at * S, dq, (size_t) S * sizeof(float));
            memcpy(odk + at * S, dk, (size_t) S * sizeof(float));
            odb[at] = dbeta;
            if (per_key) memcpy(odg + at * S, dg, (size_t) S * sizeof(float));
            else {
                float sum = 0.0f;
                for (int64_t i = 0; i < S; i++) sum += dg[i];
                odg[at] = sum;
            }
        }
        for (int64_t slot = T; slot < K; slot++)  /* the slots that hold the initial state */
            for (int64_t x = 0; x < SS; x++) G[x] += gstates[slot * snap + unit * SS + x];
        memcpy(ods + unit * SS, G, (size_t) SS * sizeof(float));
    }
}

GGMLR_KERNEL(decay_attn, decay_attn_forward, decay_attn_work_size, NULL);
GGMLR_KERNEL(decay_attn_back, decay_attn_backward, decay_attn_back_work_size, NULL);
GGMLR_KERNEL(rwkv_wkv7, wkv7_forward, wkv7_work_size, NULL);
GGMLR_KERNEL(rwkv_wkv7_back, wkv7_backward, wkv7_back_work_size, NULL);
GGMLR_KERNEL(gated_delta_net, gdn_forward, gdn_work_size, NULL);
GGMLR_KERNEL(gated_delta_net_back, gdn_backward, gdn_back_work_size, NULL);

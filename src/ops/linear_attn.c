/* linear_attn.c -- the recurrent linear attentions (upstream's RWKV_WKV6,
 * GATED_LINEAR_ATTN, RWKV_WKV7, GATED_DELTA_NET): constructors, and the
 * backward rules (kernels: cpu/kernels/linear_attn.c). F32.
 *
 * Each carries a state S (S x S per head and sequence) through the tokens of
 * a sequence and packs its outputs, then the final state(s), into one result
 * (upstream's layout). The first three read n_tokens tokens as n_seqs
 * sequences one after another (n_tokens % n_seqs == 0, n_seqs the state's
 * ne1); their per-token inputs are [S, H, n_tokens] in any layout, the state
 * [S*S*H, n_seqs] contiguous, as upstream lays it out. */
#include "ops/grad.h"

/* t is F32 of shape [n0, n1, n2, n3] */
static bool check_f32_shape(const char * fn, const char * arg, const struct ggml_tensor * t, int64_t n0, int64_t n1, int64_t n2,
                            int64_t n3) {
    if (!t) { ggmlr_null_input(fn, arg); return false; }
    if (t->type != GGML_TYPE_F32) { ggmlr_fail_type(fn, arg, t, "F32"); return false; }
    if (t->ne[0] != n0 || t->ne[1] != n1 || t->ne[2] != n2 || t->ne[3] != n3) {
        char got[96];
        ggmlr_set_error("%s: %s is %s, want [%lld, %lld, %lld, %lld]", fn, arg, ggmlr_shape_str(t, got, sizeof got), (long long) n0,
                        (long long) n1, (long long) n2, (long long) n3);
        return false;
    }
    return true;
}

/* The shared shape of the first three: S, H, n_tokens from k ([S, H, n_tokens]),
 * n_seqs from the state, which is F32, contiguous, S*S*H*n_seqs elements. */
struct recurrence_dims { int64_t S, H, T, n_seqs; };

static bool check_recurrence(const char * fn, const struct ggml_tensor * k, const struct ggml_tensor * state, struct recurrence_dims * d) {
    if (!k) { ggmlr_null_input(fn, "k"); return false; }
    if (!check_f32_shape(fn, "k", k, k->ne[0], k->ne[1], k->ne[2], 1)) return false;
    d->S = k->ne[0]; d->H = k->ne[1]; d->T = k->ne[2];
    if (!state) { ggmlr_null_input(fn, "state"); return false; }
    if (state->type != GGML_TYPE_F32) { ggmlr_fail_type(fn, "state", state, "F32"); return false; }
    if (!ggml_is_contiguous(state)) { ggmlr_set_error("%s: state must be contiguous", fn); return false; }
    d->n_seqs = state->ne[1];
    const double per_seq = (double) d->S * (double) d->S * (double) d->H;
    if (!ggmlr_check_size_bound(fn, per_seq * (double) d->n_seqs + (double) d->S * d->H * (double) d->T)) return false;
    if (d->n_seqs < 1 || ggml_nelements(state) != d->S * d->S * d->H * d->n_seqs) {
        char got[96];
        ggmlr_set_error("%s: state is %s; want S*S*H = %lld elements per sequence, n_seqs = ne1 >= 1", fn,
                        ggmlr_shape_str(state, got, sizeof got), (long long) (d->S * d->S * d->H));
        return false;
    }
    if (d->T % d->n_seqs != 0) {
        ggmlr_set_error("%s: n_tokens = %lld is not a multiple of n_seqs = %lld (the state's ne1)", fn, (long long) d->T,
                        (long long) d->n_seqs);
        return false;
    }
    return true;
}

/* [S*H, n_tokens + S*n_seqs]: the outputs, then the final states */
static struct ggml_tensor * recurrence_node(struct ggml_context * ctx, enum ggml_op op, const struct recurrence_dims * d) {
    const int64_t ne[4] = {d->S * d->H, d->T + d->S * d->n_seqs, 1, 1};
    return ggmlr_new_node(ctx, op, GGML_TYPE_F32, ne, NULL, NULL);
}

/* ---- RWKV_WKV6, GATED_LINEAR_ATTN: the diagonal-decay recurrence (core/op_list.h) ---- */

static struct ggml_tensor * decay_attn(const char * fn, struct ggml_context * ctx, enum ggml_op op, const struct ggmlr_decay_attn_srcs * s,
                                       float scale) {
    REQUIRE_CTX(fn);
    struct recurrence_dims d;
    if (!check_recurrence(fn, s->k, s->state, &d)) return NULL;
    const bool wkv6 = op == GGML_OP_RWKV_WKV6;
    if (!check_f32_shape(fn, "v", s->v, d.S, d.H, d.T, 1) || !check_f32_shape(fn, wkv6 ? "r" : "q", s->q, d.S, d.H, d.T, 1) ||
        !check_f32_shape(fn, wkv6 ? "td" : "g", s->w, d.S, d.H, d.T, 1) || (wkv6 && !check_f32_shape(fn, "tf", s->u, d.S, d.H, 1, 1)))
        return NULL;
    if (!isfinite(scale)) { ggmlr_set_error("%s: scale is %g, not a finite number", fn, (double) scale); return NULL; }
    struct ggml_tensor * t = recurrence_node(ctx, op, &d);
    if (!t) return NULL;
    ggmlr_decay_attn_srcs_encode(t, s);
    if (!wkv6) ggmlr_f32_param_encode(t, scale);
    return t;
}

struct ggml_tensor * ggml_rwkv_wkv6(struct ggml_context * ctx, struct ggml_tensor * k, struct ggml_tensor * v, struct ggml_tensor * r,
                                    struct ggml_tensor * tf, struct ggml_tensor * td, struct ggml_tensor * state) {
    const struct ggmlr_decay_attn_srcs s = {k, v, r, tf, td, state, NULL};
    return decay_attn("ggml_rwkv_wkv6", ctx, GGML_OP_RWKV_WKV6, &s, 1.0f);
}

struct ggml_tensor * ggml_gated_linear_attn(struct ggml_context * ctx, struct ggml_tensor * k, struct ggml_tensor * v,
                                            struct ggml_tensor * q, struct ggml_tensor * g, struct ggml_tensor * state, float scale) {
    const struct ggmlr_decay_attn_srcs s = {k, v, q, NULL, g, state, NULL};
    return decay_attn("ggml_gated_linear_attn", ctx, GGML_OP_GATED_LINEAR_ATTN, &s, scale);
}

/* ---- their backward: RWKV_WKV6_BACK / GATED_LINEAR_ATTN_BACK, one node for
 * every source's gradient, packed slot by slot (ggmlr_packed_grad_offset);
 * the rule hands each source its slice, a view shaped like it. The kernel
 * runs the recurrence forward once more, keeping each token's state, then
 * back through time (cpu/kernels/linear_attn.c). ---- */

/* The node of a packed backward op of fwd (n_srcs sources), given grad =
 * dL/d(fwd): F32 [the sources' elements], its sources left to the caller. */
static struct ggml_tensor * packed_back(const char * fn, struct ggml_context * ctx, const struct ggml_tensor * fwd, const struct ggml_tensor * grad,
                                        enum ggml_op op, int n_srcs, int64_t S, int64_t T_seq) {
    if (grad->type != GGML_TYPE_F32 || !ggml_are_same_shape(grad, fwd) || !ggml_is_contiguous(grad)) {
        ggmlr_set_error("%s: the gradient must be F32, contiguous, shaped like the %s node", fn, ggml_op_name(fwd->op));
        return NULL;
    }
    /* the kernel keeps one sequence's states: (T_seq + 1) S*S floats a thread */
    if (!ggmlr_check_size_bound(fn, ((double) T_seq + 1) * (double) S * (double) S * sizeof(float))) return NULL;
    const int64_t ne[4] = {ggmlr_packed_grad_offset(fwd, n_srcs), 1, 1, 1};
    return ggmlr_new_node(ctx, op, GGML_TYPE_F32, ne, NULL, NULL);
}

/* Each needed source of node gets its slice of back, a view shaped like it. */
static bool grad_slices(struct ggml_context * ctx, struct ggml_cgraph * gph, const struct ggml_tensor * node, struct ggml_tensor * back,
                        int n_srcs, const bool * need) {
    if (!back) return false;
    for (int slot = 0; slot < n_srcs; slot++) {
        struct ggml_tensor * src = node->src[slot];
        if (!need[slot]) continue;
        const size_t nb1 = (size_t) src->ne[0] * sizeof(float), nb2 = nb1 * (size_t) src->ne[1], nb3 = nb2 * (size_t) src->ne[2];
        struct ggml_tensor * d = ggml_view_4d(ctx, back, src->ne[0], src->ne[1], src->ne[2], src->ne[3], nb1, nb2, nb3,
                                              (size_t) ggmlr_packed_grad_offset(node, slot) * sizeof(float));
        if (!ggmlr_grad_acc(ctx, gph, src, d)) return false;
    }
    return true;
}

static struct ggml_tensor * decay_attn_back(struct ggml_context * ctx, struct ggml_tensor * fwd, struct ggml_tensor * grad) {
    struct ggmlr_decay_attn_srcs s = ggmlr_decay_attn_srcs_decode(fwd);
    s.grad = grad;
    const bool wkv6 = fwd->op == GGML_OP_RWKV_WKV6;
    struct ggml_tensor * t = packed_back("decay_attn_back", ctx, fwd, grad, wkv6 ? GGML_OP_RWKV_WKV6_BACK : GGML_OP_GATED_LINEAR_ATTN_BACK,
                                         ggmlr_decay_attn_n_srcs(fwd), s.k->ne[0], s.k->ne[2] / s.state->ne[1]);
    if (!t) return NULL;
    ggmlr_decay_attn_srcs_encode(t, &s);
    if (!wkv6) ggmlr_f32_param_encode(t, ggmlr_decay_attn_scale_decode(fwd));
    return t;
}

RULE(grad_decay_attn) {
    struct ggml_tensor * gc = ggmlr_grad_contiguous(ctx, g);
    return gc && grad_slices(ctx, gph, node, decay_attn_back(ctx, node, gc), ggmlr_decay_attn_n_srcs(node), need);
}

GRAD_RULE(decay_attn, NULL, grad_decay_attn);

/* ---- RWKV_WKV7 ---- */

struct ggml_tensor * ggml_rwkv_wkv7(struct ggml_context * ctx, struct ggml_tensor * r, struct ggml_tensor * w, struct ggml_tensor * k,
                                    struct ggml_tensor * v, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * state) {
    const char * fn = "ggml_rwkv_wkv7";
    REQUIRE_CTX(fn);
    struct recurrence_dims d;
    if (!check_recurrence(fn, k, state, &d)) return NULL;
    const struct ggmlr_wkv7_srcs s = {r, w, k, v, a, b, state, NULL};
    if (!check_f32_shape(fn, "r", r, d.S, d.H, d.T, 1) || !check_f32_shape(fn, "w", w, d.S, d.H, d.T, 1) ||
        !check_f32_shape(fn, "v", v, d.S, d.H, d.T, 1) || !check_f32_shape(fn, "a", a, d.S, d.H, d.T, 1) ||
        !check_f32_shape(fn, "b", b, d.S, d.H, d.T, 1))
        return NULL;
    struct ggml_tensor * t = recurrence_node(ctx, GGML_OP_RWKV_WKV7, &d);
    if (t) ggmlr_wkv7_srcs_encode(t, &s);
    return t;
}

/* its backward: RWKV_WKV7_BACK, the gradients of the seven sources packed (as above) */
RULE(grad_rwkv_wkv7) {
    struct ggml_tensor * gc = ggmlr_grad_contiguous(ctx, g);
    if (!gc) return false;
    struct ggmlr_wkv7_srcs s = ggmlr_wkv7_srcs_decode(node);
    s.grad = gc;
    struct ggml_tensor * back = packed_back("rwkv_wkv7_back", ctx, node, gc, GGML_OP_RWKV_WKV7_BACK, 7, s.k->ne[0], s.k->ne[2] / s.state->ne[1]);
    if (back) ggmlr_wkv7_srcs_encode(back, &s);
    return grad_slices(ctx, gph, node, back, 7, need);
}

GRAD_RULE(rwkv_wkv7, NULL, grad_rwkv_wkv7);

/* ---- GATED_DELTA_NET ---- */

/* q or k: [S, H_k, T, B_k] with H_k dividing H and B_k dividing B (tiled over heads, sequences) */
static bool check_gdn_qk(const char * fn, const char * arg, const struct ggml_tensor * t, const struct ggml_tensor * v) {
    if (!t) { ggmlr_null_input(fn, arg); return false; }
    if (!check_f32_shape(fn, arg, t, v->ne[0], t->ne[1], v->ne[2], t->ne[3])) return false;
    if (t->ne[1] < 1 || v->ne[1] % t->ne[1] != 0 || t->ne[3] < 1 || v->ne[3] % t->ne[3] != 0) {
        ggmlr_set_error("%s: %s has %lld heads and %lld sequences; each must divide v's (%lld, %lld)", fn, arg, (long long) t->ne[1],
                        (long long) t->ne[3], (long long) v->ne[1], (long long) v->ne[3]);
        return false;
    }
    return true;
}

struct ggml_tensor * ggml_gated_delta_net(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k, struct ggml_tensor * v,
                                          struct ggml_tensor * g, struct ggml_tensor * beta, struct ggml_tensor * state, int64_t K) {
    const char * fn = "ggml_gated_delta_net";
    REQUIRE_CTX(fn); REQUIRE(fn, v); REQUIRE_F32(fn, v);
    const int64_t S = v->ne[0], H = v->ne[1], T = v->ne[2], n_seqs = v->ne[3];
    if (!check_gdn_qk(fn, "q", q, v) || !check_gdn_qk(fn, "k", k, v)) return NULL;
    REQUIRE(fn, g);
    if (!check_f32_shape(fn, "g", g, g->ne[0] == S ? S : 1, H, T, n_seqs) || !check_f32_shape(fn, "beta", beta, 1, H, T, n_seqs) ||
        !check_f32_shape(fn, "state", state, S, S, H, n_seqs))
        return NULL;
    if (K < 1 || K > INT32_MAX) { ggmlr_set_error("%s: K = %lld snapshots, want 1 .. 2^31 - 1", fn, (long long) K); return NULL; }
    if (!ggmlr_check_size_bound(fn, (double) S * H * ((double) T * n_seqs + (double) K * S * n_seqs))) return NULL;
    const int64_t ne[4] = {S * H, T * n_seqs + K * S * n_seqs, 1, 1};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_GATED_DELTA_NET, GGML_TYPE_F32, ne, NULL, NULL);
    if (!t) return NULL;
    const struct ggmlr_gdn_srcs s = {q, k, v, g, beta, state, NULL};
    ggmlr_gdn_srcs_encode(t, &s);
    ggmlr_i32_param_encode(t, (int32_t) K);
    return t;
}

/* its backward: GATED_DELTA_NET_BACK, the gradients of the six sources
 * packed (as above), for q and k of v's heads and sequences (shared ones
 * would sum gradients across heads: refused) */
static const char * refuse_gated_delta_net(const struct ggml_tensor * node, const bool * need) {
    (void) need;
    const struct ggmlr_gdn_srcs s = ggmlr_gdn_srcs_decode(node);
    if (s.q->ne[1] == s.v->ne[1] && s.q->ne[3] == s.v->ne[3] && s.k->ne[1] == s.v->ne[1] && s.k->ne[3] == s.v->ne[3]) return NULL;
    return "GATED_DELTA_NET: q or k shared across heads or sequences (fewer than v's) has no gradient here; repeat them to v's first";
}

RULE(grad_gated_delta_net) {
    struct ggml_tensor * gc = ggmlr_grad_contiguous(ctx, g);
    if (!gc) return false;
    struct ggmlr_gdn_srcs s = ggmlr_gdn_srcs_decode(node);
    s.grad = gc;
    struct ggml_tensor * back = packed_back("gated_delta_net_back", ctx, node, gc, GGML_OP_GATED_DELTA_NET_BACK, 6, s.v->ne[0], s.v->ne[2]);
    if (back) {
        ggmlr_gdn_srcs_encode(back, &s);
        ggmlr_i32_param_encode(back, ggmlr_i32_param_decode(node));
    }
    return grad_slices(ctx, gph, node, back, 6, need);
}

GRAD_RULE(gated_delta_net, refuse_gated_delta_net, grad_gated_delta_net);

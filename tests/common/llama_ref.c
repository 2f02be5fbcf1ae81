/* llama_ref.c -- the float64 reference of examples/llama/graph.c's forward
 * pass, written from the maths (llama.cpp's conventions: RoPE NORM rotates
 * adjacent pairs (2i, 2i+1), NEOX pairs (i, i + n_rot/2); query head h reads
 * key/value head h / (H / Hkv)). */
#include "llama_ref.h"
#include "test_common.h"

#include "ggml-cpu.h"
#include "quant/quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* one linear map: the stored weight W (its type decides how the activations
 * are rounded, see matvec) and the LoRA delta (alpha/r) B A, applied to the
 * unrounded activations as the adapter's F32 products are */
struct ref_linear {
    double * w, * delta;
    enum ggml_type type;
};

struct llama_ref {
    struct llama_hparams hp;
    double * tok, * out_norm;
    double * attn_norm[LLAMA_MAX_LAYERS], * ffn_norm[LLAMA_MAX_LAYERS], * bias[LLAMA_MAX_LAYERS][3];
    struct ref_linear w[LLAMA_MAX_LAYERS][LLAMA_N_MAT], out;
};

/* t's elements as doubles (dequantized by the type's own to_float). */
static double * to_double(const struct ggml_tensor * t) {
    if (!t) return NULL;
    const int64_t n = ggml_nelements(t);
    float * f = malloc((size_t) n * sizeof *f);
    double * d = malloc((size_t) n * sizeof *d);
    if (t->type == GGML_TYPE_F32) memcpy(f, t->data, (size_t) n * sizeof *f);
    else ggml_get_type_traits(t->type)->to_float(t->data, f, n);
    for (int64_t i = 0; i < n; i++) d[i] = f[i];
    free(f);
    return d;
}

struct llama_ref * llama_ref_new(const struct llama_model * m, const struct llama_lora * lora) {
    struct llama_ref * r = calloc(1, sizeof *r);
    r->hp = m->hp;
    r->tok = to_double(m->tok_embd);
    r->out = (struct ref_linear) {to_double(m->output), NULL, m->output->type};
    r->out_norm = to_double(m->output_norm);
    for (int l = 0; l < m->hp.n_layer; l++) {
        const struct llama_layer * L = &m->layers[l];
        r->attn_norm[l] = to_double(L->attn_norm);
        r->ffn_norm[l] = to_double(L->ffn_norm);
        r->bias[l][0] = to_double(L->bq); r->bias[l][1] = to_double(L->bk); r->bias[l][2] = to_double(L->bv);
        for (int k = 0; k < LLAMA_N_MAT; k++) {
            r->w[l][k] = (struct ref_linear) {to_double(L->w[k]), NULL, L->w[k]->type};
            if (!lora || !lora->a[l][k]) continue;
            /* delta[o, i] = (alpha/r) sum_j B[o, j] A[j, i]; A is [n_in, r], B [r, n_out] (ne0 first) */
            const double * A = to_double(lora->a[l][k]), * B = to_double(lora->b[l][k]);
            const int64_t n_in = L->w[k]->ne[0], n_out = L->w[k]->ne[1], R = lora->rank;
            double * delta = r->w[l][k].delta = malloc(sizeof(double) * (size_t) (n_in * n_out));
            for (int64_t o = 0; o < n_out; o++)
                for (int64_t i = 0; i < n_in; i++) {
                    double s = 0.0;
                    for (int64_t j = 0; j < R; j++) s += B[o * R + j] * A[j * n_in + i];
                    delta[o * n_in + i] = (double) lora->alpha / (double) R * s;
                }
            free((void *) A); free((void *) B);
        }
    }
    return r;
}

void llama_ref_free(struct llama_ref * r) {
    if (!r) return;
    free(r->tok); free(r->out.w); free(r->out_norm);
    for (int l = 0; l < r->hp.n_layer; l++) {
        free(r->attn_norm[l]); free(r->ffn_norm[l]);
        for (int k = 0; k < 3; k++) free(r->bias[l][k]);
        for (int k = 0; k < LLAMA_N_MAT; k++) { free(r->w[l][k].w); free(r->w[l][k].delta); }
    }
    free(r);
}

/* y[o] = sum_i W[o, i] x~[i] + sum_i delta[o, i] x[i] (+ b[o]); W is
 * [n_in, n_out], ne0 = n_in fastest; x~ is x, or for a quantized W x rounded
 * to its vec_dot_type as mul_mat rounds it (from_float then to_float: Q8_0/Q8_K
 * blocks with d = amax / 127) */
static void matvec(const struct ref_linear * L, const double * b, const double * x, int64_t n_in, int64_t n_out, double * y) {
    const double * W = L->w;
    const enum ggml_type type = L->type;
    double * xr = malloc(sizeof(double) * (size_t) n_in);
    memcpy(xr, x, sizeof(double) * (size_t) n_in);
    if (ggml_is_quantized(type)) {
        const enum ggml_type dot = ggml_get_type_traits_cpu(type)->vec_dot_type;
        float * f = malloc(sizeof(float) * (size_t) n_in);
        void * q = malloc(ggml_row_size(dot, n_in));
        for (int64_t i = 0; i < n_in; i++) f[i] = (float) x[i];
        ggml_get_type_traits_cpu(dot)->from_float(f, q, n_in);
        ggmlr_type_traits_own(dot)->to_float(q, f, n_in);
        for (int64_t i = 0; i < n_in; i++) xr[i] = f[i];
        free(f); free(q);
    }
    for (int64_t o = 0; o < n_out; o++) {
        double s = b ? b[o] : 0.0;
        for (int64_t i = 0; i < n_in; i++) s += W[o * n_in + i] * xr[i];
        if (L->delta) for (int64_t i = 0; i < n_in; i++) s += L->delta[o * n_in + i] * x[i];
        y[o] = s;
    }
    free(xr);
}

static void rmsnorm(const double * x, const double * w, int64_t n, double eps, double * y) {
    double ss = 0.0;
    for (int64_t i = 0; i < n; i++) ss += x[i] * x[i];
    const double s = 1.0 / sqrt(ss / (double) n + eps);
    for (int64_t i = 0; i < n; i++) y[i] = x[i] * s * w[i];
}

/* one head's vector x[0..D) at position pos */
static void rope(const struct llama_hparams * hp, double * x, int pos) {
    const int half = hp->n_rot / 2;
    for (int i = 0; i < half; i++) {
        const double theta = pos * pow((double) hp->rope_base, -2.0 * i / hp->n_rot);
        const int a = hp->rope_mode == GGML_ROPE_TYPE_NEOX ? i : 2 * i, b = hp->rope_mode == GGML_ROPE_TYPE_NEOX ? i + half : 2 * i + 1;
        const double x0 = x[a], x1 = x[b];
        x[a] = x0 * cos(theta) - x1 * sin(theta);
        x[b] = x0 * sin(theta) + x1 * cos(theta);
    }
}

void llama_ref_forward(const struct llama_ref * r, const int32_t * tokens, int T, double * logits) {
    const struct llama_hparams * hp = &r->hp;
    const int64_t C = hp->n_embd, H = hp->n_head, Hkv = hp->n_head_kv, D = C / H, Ckv = D * Hkv, F = hp->n_ff, V = hp->n_vocab;
    double * x = malloc(sizeof(double) * (size_t) (T * C)), * h = malloc(sizeof(double) * (size_t) C);
    double * q = malloc(sizeof(double) * (size_t) (T * C)), * k = malloc(sizeof(double) * (size_t) (T * Ckv)), * v = malloc(sizeof(double) * (size_t) (T * Ckv));
    double * y = malloc(sizeof(double) * (size_t) C), * o = malloc(sizeof(double) * (size_t) C), * p = malloc(sizeof(double) * (size_t) T);
    double * g = malloc(sizeof(double) * (size_t) F), * u = malloc(sizeof(double) * (size_t) F);
    for (int t = 0; t < T; t++) memcpy(x + t * C, r->tok + (int64_t) tokens[t] * C, sizeof(double) * (size_t) C);
    for (int l = 0; l < hp->n_layer; l++) {
        for (int t = 0; t < T; t++) {
            rmsnorm(x + t * C, r->attn_norm[l], C, hp->rms_eps, h);
            matvec(&r->w[l][LLAMA_Q], r->bias[l][0], h, C, C, q + t * C);
            matvec(&r->w[l][LLAMA_K], r->bias[l][1], h, C, Ckv, k + t * Ckv);
            matvec(&r->w[l][LLAMA_V], r->bias[l][2], h, C, Ckv, v + t * Ckv);
            for (int64_t hh = 0; hh < H; hh++) rope(hp, q + t * C + hh * D, t);
            for (int64_t hh = 0; hh < Hkv; hh++) rope(hp, k + t * Ckv + hh * D, t);
        }
        for (int t = 0; t < T; t++) {
            for (int64_t hh = 0; hh < H; hh++) {
                const int64_t kh = hh / (H / Hkv);
                double mx = -INFINITY, sum = 0.0;
                for (int j = 0; j <= t; j++) {
                    double s = 0.0;
                    for (int64_t d = 0; d < D; d++) s += q[t * C + hh * D + d] * k[j * Ckv + kh * D + d];
                    p[j] = s / sqrt((double) D);
                    if (p[j] > mx) mx = p[j];
                }
                for (int j = 0; j <= t; j++) sum += p[j] = exp(p[j] - mx);
                for (int64_t d = 0; d < D; d++) {
                    double s = 0.0;
                    for (int j = 0; j <= t; j++) s += p[j] * v[j * Ckv + kh * D + d];
                    y[hh * D + d] = s / sum;
                }
            }
            matvec(&r->w[l][LLAMA_O], NULL, y, C, C, o);
            for (int64_t c = 0; c < C; c++) x[t * C + c] += o[c];
        }
        for (int t = 0; t < T; t++) {
            rmsnorm(x + t * C, r->ffn_norm[l], C, hp->rms_eps, h);
            matvec(&r->w[l][LLAMA_GATE], NULL, h, C, F, g);
            matvec(&r->w[l][LLAMA_UP], NULL, h, C, F, u);
            for (int64_t f = 0; f < F; f++) g[f] = g[f] / (1.0 + exp(-g[f])) * u[f];  /* silu(gate) * up */
            matvec(&r->w[l][LLAMA_DOWN], NULL, g, F, C, o);
            for (int64_t c = 0; c < C; c++) x[t * C + c] += o[c];
        }
    }
    for (int t = 0; t < T; t++) {
        rmsnorm(x + t * C, r->out_norm, C, hp->rms_eps, h);
        matvec(&r->out, NULL, h, C, V, logits + (int64_t) t * V);
    }
    free(x); free(h); free(q); free(k); free(v); free(y); free(o); free(p); free(g); free(u);
}

double llama_ref_loss(const struct llama_model * m, const struct llama_lora * lora, const int32_t * tok, const int32_t * tgt, int T) {
    const int V = m->hp.n_vocab;
    double * lg = malloc(sizeof(double) * (size_t) T * (size_t) V);
    struct llama_ref * r = llama_ref_new(m, lora);
    llama_ref_forward(r, tok, T, lg);
    double loss = 0.0;
    for (int t = 0; t < T; t++) {
        const double * z = lg + (size_t) t * V;
        double mx = z[0], s = 0.0;
        for (int i = 1; i < V; i++) if (z[i] > mx) mx = z[i];
        for (int i = 0; i < V; i++) s += exp(z[i] - mx);
        loss += mx + log(s) - z[tgt[t]];
    }
    llama_ref_free(r);
    free(lg);
    return loss / T;
}

double llama_ref_grad_error(const struct llama_model * m, const struct llama_lora * lora, struct ggml_tensor ** params, int n_params,
                            int per_param, int * n_checked) {
    enum { T = 6 };
    const int32_t tok[T] = {1, 290, 300, 104, 270, 288}, tgt[T] = {290, 300, 104, 270, 288, 2};
    for (int p = 0; p < n_params; p++) ggml_set_param(params[p]);
    struct ggml_context * ctx = tc_ctx(64);
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 8192, true);
    struct llama_batch in;
    struct ggml_tensor * logits = llama_build(ctx, ctx, gf, m, lora, NULL, 0, T, 1, false, false, &in);
    struct ggml_tensor * targets = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, T);
    struct ggml_tensor * loss = ggml_cross_entropy_loss(ctx, logits, targets);
    ggml_set_loss(loss);
    ggml_build_forward_expand(gf, loss);
    double e = INFINITY;
    *n_checked = 0;
    if (CHECK(ggml_build_backward_expand(ctx, gf, NULL) == GGML_STATUS_SUCCESS, "grad: backward: %s", ggml_last_error())) {
        memcpy(in.tokens->data, tok, sizeof tok);
        memcpy(targets->data, tgt, sizeof tgt);
        llama_batch_fill(&in, 0);
        ggml_graph_reset(gf);
        CHECK(ggml_graph_compute_with_ctx(ctx, gf, 2) == GGML_STATUS_SUCCESS, "grad: compute");
        const double l0 = llama_ref_loss(m, lora, tok, tgt, T);
        CHECK(fabs(*(float *) loss->data - l0) < 1e-5 * fabs(l0), "grad: loss %g, float64 %g", (double) *(float *) loss->data, l0);
        /* per_param entries of every parameter: analytic against central differences */
        double num = 0.0, den = 0.0;
        for (int p = 0; p < n_params; p++) {
            struct ggml_tensor * w = params[p];
            const float * g = ggml_graph_get_grad(gf, w)->data;
            float * x = w->data;
            for (int s = 0; s < per_param; s++, (*n_checked)++) {
                const int64_t i = tc_randint(0, (int) ggml_nelements(w) - 1);
                const float x0 = x[i], h = 1e-3f;
                x[i] = x0 + h; const double lp = llama_ref_loss(m, lora, tok, tgt, T); const float xp = x[i];
                x[i] = x0 - h; const double lm = llama_ref_loss(m, lora, tok, tgt, T); const float xm = x[i];
                x[i] = x0;
                const double fd = (lp - lm) / ((double) xp - (double) xm);
                num += (g[i] - fd) * (g[i] - fd);
                den += fd * fd;
            }
        }
        e = den > 0.0 ? sqrt(num / den) : INFINITY;
    }
    ggml_free(ctx);
    return e;
}

struct llama_data llama_test_stream(int n_vocab, int64_t n) {
    struct llama_data d = {.tokens = malloc(sizeof(int32_t) * (size_t) n), .n = n, .n_train = n * 9 / 10};
    uint64_t s = 99;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        d.tokens[i] = (s >> 61) == 0 ? (int32_t) ((s >> 33) % (uint64_t) n_vocab) : (int32_t) (3 + (i % 23) * 11);
    }
    return d;
}

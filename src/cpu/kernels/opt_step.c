/* optim.c -- optimizer steps, updating the weights (and AdamW's moments) in
 * place, element by element (so any split over threads gives the same result).
 *
 * AdamW (upstream ggml's form; beta1h = 1/(1 - beta1^t), beta2h = 1/(1 - beta2^t)
 * are the bias corrections of step t, computed by the caller):
 *   m = beta1 m + (1 - beta1) g
 *   v = beta2 v + (1 - beta2) g^2
 *   w = w (1 - alpha wd) - alpha (m beta1h) / (sqrt(v beta2h) + eps)
 * SGD: w = w (1 - alpha wd) - alpha g. Weight decay is decoupled from the gradient. */
#include "cpu/kernels/kernels.h"

#include <math.h>

static void ggmlr_compute_opt_step_adamw(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_opt_step_srcs s = ggmlr_opt_step_srcs_decode(dst);
    float * w = s.a->data;
    const float * g = s.grad->data;
    float * m = s.m->data, * v = s.v->data;
    const float * hp = s.hparams->data;
    const float alpha = hp[0], beta1 = hp[1], beta2 = hp[2], eps = hp[3], wd = hp[4], beta1h = hp[5], beta2h = hp[6];
    const float keep = 1.0f - alpha * wd;
    int64_t i0, i1;
    ggmlr_split(ggml_nelements(dst), p->ith, p->nth, &i0, &i1);
    for (int64_t i = i0; i < i1; i++) {
        m[i] = m[i] * beta1 + g[i] * (1.0f - beta1);
        v[i] = v[i] * beta2 + g[i] * g[i] * (1.0f - beta2);
        const float m_hat = m[i] * beta1h, v_hat = v[i] * beta2h;
        w[i] = w[i] * keep - alpha * m_hat / (sqrtf(v_hat) + eps);
    }
}

static void ggmlr_compute_opt_step_sgd(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggmlr_opt_step_srcs s = ggmlr_opt_step_srcs_decode(dst);
    float * w = s.a->data;
    const float * g = s.grad->data;
    const float * hp = s.hparams->data;
    const float alpha = hp[0], keep = 1.0f - hp[0] * hp[1];
    int64_t i0, i1;
    ggmlr_split(ggml_nelements(dst), p->ith, p->nth, &i0, &i1);
    for (int64_t i = i0; i < i1; i++) w[i] = w[i] * keep - alpha * g[i];
}

GGMLR_KERNEL(opt_step_adamw, ggmlr_compute_opt_step_adamw, NULL, NULL);
GGMLR_KERNEL(opt_step_sgd, ggmlr_compute_opt_step_sgd, NULL, NULL);

/* opt_model.c -- see opt_model.h. */
#include "opt_model.h"

#include <math.h>
#include <string.h>

bool model_init(struct model * m, ggml_backend_t be, int K, int M, int B) {
    memset(m, 0, sizeof *m);
    m->K = K; m->M = M; m->B = B;
    struct ggml_init_params ps = {8 * ggml_tensor_overhead(), NULL, true};
    struct ggml_init_params pc = {16 * ggml_tensor_overhead(), NULL, true};
    m->ctx_static = ggml_init(ps);
    m->ctx_compute = ggml_init(pc);
    if (!m->ctx_static || !m->ctx_compute) return false;
    m->W = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, K, M);
    m->b = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, M, 1);
    m->x = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, K, B);
    ggml_set_name(m->W, "W");
    ggml_set_name(m->b, "b");
    ggml_set_name(m->x, "x");
    ggml_set_param(m->W);
    ggml_set_param(m->b);
    m->buf = ggml_backend_alloc_ctx_tensors(m->ctx_static, be);
    m->out = ggml_add(m->ctx_compute, ggml_mul_mat(m->ctx_compute, m->W, m->x), m->b);
    return m->buf && m->out;
}

void model_free(struct model * m) {
    ggml_backend_buffer_free(m->buf);
    ggml_free(m->ctx_compute);
    ggml_free(m->ctx_static);
}

void model_set(struct model * m, const float * W, const float * b) {
    ggml_backend_tensor_set(m->W, W, 0, ggml_nbytes(m->W));
    ggml_backend_tensor_set(m->b, b, 0, ggml_nbytes(m->b));
}

ggml_opt_context_t opt_for(ggml_backend_sched_t sched, struct model * m, enum ggml_opt_loss_type loss,
                                  enum ggml_opt_optimizer_type optimizer, int opt_period, struct ggml_opt_optimizer_params * pars) {
    struct ggml_opt_params p = ggml_opt_default_params(sched, loss);
    p.ctx_compute = m->ctx_compute;
    p.inputs = m->x;
    p.outputs = m->out;
    p.optimizer = optimizer;
    p.opt_period = opt_period;
    if (pars) {
        p.get_opt_pars = ggml_opt_get_constant_optimizer_params;
        p.get_opt_pars_ud = pars;
    }
    return ggml_opt_init(p);
}

double mse_grad_ref(const struct model * m, const float * W, const float * b, const float * x, const float * y, int n,
                           double * gW, double * gb) {
    const int K = m->K, M = m->M;
    double loss = 0.0;
    for (int i = 0; i < K * M; i++) gW[i] = 0.0;
    for (int i = 0; i < M; i++) gb[i] = 0.0;
    for (int j = 0; j < n; j++) {
        for (int o = 0; o < M; o++) {
            double v = b[o];
            for (int k = 0; k < K; k++) v += (double) W[o * K + k] * x[j * K + k];
            const double e = v - y[j * M + o];
            loss += e * e;
            for (int k = 0; k < K; k++) gW[o * K + k] += 2.0 * e * x[j * K + k];
            gb[o] += 2.0 * e;
        }
    }
    for (int i = 0; i < K * M; i++) gW[i] /= (double) M * n;
    for (int i = 0; i < M; i++) gb[i] /= (double) M * n;
    return loss / ((double) M * n);
}

void fill_f32(float * v, int n, double lo, double hi) { for (int i = 0; i < n; i++) v[i] = (float) tc_uniform(lo, hi); }

bool step_case_init(struct step_case * c, ggml_backend_t be, int B) {
    if (!model_init(&c->m, be, RK, RM, B)) return false;
    fill_f32(c->W0, RK * RM, -1, 1);
    fill_f32(c->b0, RM, -1, 1);
    fill_f32(c->x, RK * RB, -1, 1);
    fill_f32(c->y, RM * RB, -2, 2);
    model_set(&c->m, c->W0, c->b0);
    return true;
}

enum ggml_status train_batch(ggml_opt_context_t o, struct step_case * c, int j0, ggml_opt_result_t r) {
    const int B = c->m.B;
    enum ggml_status st = ggml_opt_alloc(o, true);
    if (st != GGML_STATUS_SUCCESS) return st;
    ggml_backend_tensor_set(c->m.x, c->x + j0 * RK, 0, (size_t) B * RK * sizeof(float));
    ggml_backend_tensor_set(ggml_opt_labels(o), c->y + j0 * RM, 0, (size_t) B * RM * sizeof(float));
    return ggml_opt_eval(o, r);
}

double max_abs_diff(const struct ggml_tensor * t, const double * ref) {
    double e = 0.0;
    for (int64_t i = 0; i < ggml_nelements(t); i++) e = fmax(e, fabs(ggml_get_f32_1d(t, i) - ref[i]));
    return e;
}


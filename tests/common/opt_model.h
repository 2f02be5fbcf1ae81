/* opt_model.h -- the small models the training API's tests train: a
 * linear model outputs [M, B] = W [K, M]^T x [K, B] + b [M, 1] with its
 * float64 MSE gradient, and a fixed case of it (step_case) to take single
 * optimizer steps on (test_opt.c, test_opt_ext.c). */
#ifndef GGMLR_TEST_OPT_MODEL_H
#define GGMLR_TEST_OPT_MODEL_H

#include "test_common.h"

#include "ggml-opt.h"

struct model {
    struct ggml_context * ctx_static;   /* W, b, x: memory of their own */
    struct ggml_context * ctx_compute;  /* the forward tensors: no_alloc */
    ggml_backend_buffer_t buf;
    struct ggml_tensor * W, * b, * x, * out;
    int K, M, B;
};

bool model_init(struct model * m, ggml_backend_t be, int K, int M, int B);
void model_free(struct model * m);
void model_set(struct model * m, const float * W, const float * b);
/* A context over m's outputs; pars (if not NULL) are the constant optimizer parameters. */
ggml_opt_context_t opt_for(ggml_backend_sched_t sched, struct model * m, enum ggml_opt_loss_type loss,
                           enum ggml_opt_optimizer_type optimizer, int opt_period, struct ggml_opt_optimizer_params * pars);
/* float64 MSE gradient of the model on n datapoints: L = sum (o - y)^2 / (M n); returns L */
double mse_grad_ref(const struct model * m, const float * W, const float * b, const float * x, const float * y, int n,
                    double * gW, double * gb);
void fill_f32(float * v, int n, double lo, double hi);

enum { RK = 3, RM = 2, RB = 8 };

struct step_case {
    struct model m;
    float W0[RK * RM], b0[RM], x[RK * RB], y[RM * RB];
};

bool step_case_init(struct step_case * c, ggml_backend_t be, int B);
/* one backward eval on datapoints [j0, j0 + B) with MSE loss */
enum ggml_status train_batch(ggml_opt_context_t o, struct step_case * c, int j0, ggml_opt_result_t r);
double max_abs_diff(const struct ggml_tensor * t, const double * ref);

#endif

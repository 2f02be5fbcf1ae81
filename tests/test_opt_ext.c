/* test_opt_ext.c -- ggml-opt's extensions, which the character model and the
 * R package train through: parameter groups (lr and weight-decay factors),
 * learning-rate schedules, a loss of the caller's own with its labels, the
 * per-batch callback that stops training, the AdamW moments and the step
 * count (for checkpoints and resuming), the last gradient norm; every
 * update against float64, and the refusals of bad groups and schedules. */
#include "common/opt_model.h"

#include <math.h>
#include <string.h>

static struct ggml_opt_params params_for(ggml_backend_sched_t sched, struct model * m, enum ggml_opt_optimizer_type optimizer,
                                         struct ggml_opt_optimizer_params * pars) {
    struct ggml_opt_params p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR);
    p.ctx_compute = m->ctx_compute;
    p.inputs = m->x;
    p.outputs = m->out;
    p.optimizer = optimizer;
    p.get_opt_pars = ggml_opt_get_constant_optimizer_params;
    p.get_opt_pars_ud = pars;
    return p;
}

/* SGD: w1 = w0 (1 - lr wd) - lr g, with b in a group of lr x0.5 and no decay */
static void test_groups_sgd(ggml_backend_sched_t sched, ggml_backend_t be) {
    struct step_case c;
    if (!CHECK(step_case_init(&c, be, RB), "model")) return;
    struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
    pars.sgd.alpha = 0.1f;
    pars.sgd.wd = 0.05f;
    struct ggml_opt_params p = params_for(sched, &c.m, GGML_OPT_OPTIMIZER_TYPE_SGD, &pars);
    struct ggml_tensor * bias[1] = {c.m.b};
    const struct ggml_opt_param_group g = {.params = bias, .n_params = 1, .lr_scale = 0.5f, .wd_scale = 0.0f};
    p.param_groups = &g;
    p.n_param_groups = 1;
    ggml_opt_context_t o = ggml_opt_init(p);
    if (!CHECK(o != NULL, "opt with a group: %s", ggml_last_error())) { model_free(&c.m); return; }
    double gW[RK * RM], gb[RM], W1[RK * RM], b1[RM];
    mse_grad_ref(&c.m, c.W0, c.b0, c.x, c.y, RB, gW, gb);
    for (int i = 0; i < RK * RM; i++) W1[i] = c.W0[i] * (1.0 - 0.1 * 0.05) - 0.1 * gW[i];
    for (int i = 0; i < RM; i++) b1[i] = c.b0[i] - 0.05 * gb[i];
    CHECK(train_batch(o, &c, 0, NULL) == GGML_STATUS_SUCCESS, "grouped SGD step: %s", ggml_last_error());
    CHECK(max_abs_diff(c.m.W, W1) < 1e-6, "W (no group): decayed, full lr: %g", max_abs_diff(c.m.W, W1));
    CHECK(max_abs_diff(c.m.b, b1) < 1e-6, "b (group): half lr, no decay: %g", max_abs_diff(c.m.b, b1));
    ggml_opt_free(o);
    model_free(&c.m);
}

/* AdamW's first step from zero moments moves w by lr g / (|g| + eps); with
 * the step count set to 5 the corrections are those of t = 6:
 * m = (1-b1) g, v = (1-b2) g^2, w1 = w0 (1 - lr wd) - lr (m/(1-b1^6)) / (sqrt(v/(1-b2^6)) + eps) */
static void test_groups_adamw_and_steps(ggml_backend_sched_t sched, ggml_backend_t be) {
    struct step_case c;
    if (!CHECK(step_case_init(&c, be, RB), "model")) return;
    struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
    pars.adamw.alpha = 0.01f; pars.adamw.beta1 = 0.8f; pars.adamw.beta2 = 0.9f; pars.adamw.eps = 1e-3f; pars.adamw.wd = 0.1f;
    struct ggml_opt_params p = params_for(sched, &c.m, GGML_OPT_OPTIMIZER_TYPE_ADAMW, &pars);
    struct ggml_tensor * weights[1] = {c.m.W};
    const struct ggml_opt_param_group g = {.params = weights, .n_params = 1, .lr_scale = 2.0f, .wd_scale = 0.0f};
    p.param_groups = &g;
    p.n_param_groups = 1;
    ggml_opt_context_t o = ggml_opt_init(p);
    if (!CHECK(o != NULL, "opt: %s", ggml_last_error())) { model_free(&c.m); return; }
    CHECK(ggml_opt_grad_m(o, c.m.W) && ggml_opt_grad_v(o, c.m.b) && !ggml_opt_grad_m(o, c.m.x) && !ggml_opt_grad_v(o, NULL),
          "moments of parameters only");
    CHECK(ggml_opt_get_steps(o) == 0 && isnan(ggml_opt_last_grad_norm(o)), "no step yet: 0 steps, no gradient norm");
    ggml_opt_set_steps(o, 5);
    CHECK(ggml_opt_get_steps(o) == 5, "steps set to 5");
    double gW[RK * RM], gb[RM], W1[RK * RM], b1[RM], mW[RK * RM], norm2 = 0.0;
    mse_grad_ref(&c.m, c.W0, c.b0, c.x, c.y, RB, gW, gb);
    const double c1 = 1.0 / (1.0 - pow(0.8, 6)), c2 = 1.0 / (1.0 - pow(0.9, 6));
    for (int i = 0; i < RK * RM + RM; i++) {
        const bool isW = i < RK * RM;
        const double gr = isW ? gW[i] : gb[i - RK * RM], w = isW ? c.W0[i] : c.b0[i - RK * RM];
        const double lr = isW ? 0.02 : 0.01, wd = isW ? 0.0 : 0.1;
        const double w1 = w * (1.0 - lr * wd) - lr * (0.2 * gr * c1) / (sqrt(0.1 * gr * gr * c2) + 1e-3);
        if (isW) { W1[i] = w1; mW[i] = 0.2 * gr; } else b1[i - RK * RM] = w1;
        norm2 += gr * gr;
    }
    CHECK(train_batch(o, &c, 0, NULL) == GGML_STATUS_SUCCESS, "AdamW step: %s", ggml_last_error());
    CHECK(max_abs_diff(c.m.W, W1) < 2e-6, "W: lr x2, no decay, t = 6: %g", max_abs_diff(c.m.W, W1));
    CHECK(max_abs_diff(c.m.b, b1) < 2e-6, "b: lr, decay, t = 6: %g", max_abs_diff(c.m.b, b1));
    CHECK(max_abs_diff(ggml_opt_grad_m(o, c.m.W), mW) < 1e-6, "first moment of W = (1 - beta1) g");
    CHECK(ggml_opt_get_steps(o) == 6, "one more step: %lld", (long long) ggml_opt_get_steps(o));
    CHECK(fabs(ggml_opt_last_grad_norm(o) - sqrt(norm2)) < 1e-6 * sqrt(norm2), "gradient norm %g, float64 %g", ggml_opt_last_grad_norm(o),
          sqrt(norm2));
    ggml_opt_free(o);
    model_free(&c.m);
}

static double ref_lr(double alpha, double min_lr, int64_t warmup, int64_t decay, int64_t step) {
    if (step < warmup) return alpha * (double) (step + 1) / (double) (warmup + 1);
    if (step > decay) return min_lr;
    const double r = (double) (step - warmup) / (double) (decay - warmup);
    return min_lr + 0.5 * (1.0 + cos(3.14159265358979323846 * r)) * (alpha - min_lr);
}

static void test_schedule(ggml_backend_sched_t sched, ggml_backend_t be) {
    const struct ggml_opt_lr_schedule s = {.type = GGML_OPT_LR_SCHEDULE_WARMUP_COSINE, .warmup = 10, .decay_steps = 110, .min_lr = 1e-4f};
    const int64_t steps[] = {0, 5, 9, 10, 11, 60, 109, 110, 111, 1000};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        const double want = ref_lr(1e-3f, 1e-4f, 10, 110, steps[i]), got = ggml_opt_lr_schedule_lr(&s, 1e-3f, steps[i]);
        CHECK(fabs(got - want) <= 1e-6 * want, "warmup+cosine at step %lld: %.9g, float64 %.9g", (long long) steps[i], got, want);
    }
    const struct ggml_opt_lr_schedule constant = {0};
    CHECK(ggml_opt_lr_schedule_lr(&constant, 0.25f, 7) == 0.25f && ggml_opt_lr_schedule_lr(NULL, 0.25f, 7) == 0.25f, "constant schedule");
    /* the schedule drives the steps: SGD at step 0 of a warmup of 2 moves by lr/3 */
    struct step_case c;
    if (!CHECK(step_case_init(&c, be, RB), "model")) return;
    struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
    pars.sgd.alpha = 0.3f;
    struct ggml_opt_params p = params_for(sched, &c.m, GGML_OPT_OPTIMIZER_TYPE_SGD, &pars);
    p.lr_schedule = (struct ggml_opt_lr_schedule) {.type = GGML_OPT_LR_SCHEDULE_WARMUP_COSINE, .warmup = 2, .decay_steps = 4};
    ggml_opt_context_t o = ggml_opt_init(p);
    double gW[RK * RM], gb[RM], W1[RK * RM];
    mse_grad_ref(&c.m, c.W0, c.b0, c.x, c.y, RB, gW, gb);
    for (int i = 0; i < RK * RM; i++) W1[i] = c.W0[i] - 0.1 * gW[i];
    CHECK(o && train_batch(o, &c, 0, NULL) == GGML_STATUS_SUCCESS, "scheduled step: %s", ggml_last_error());
    CHECK(max_abs_diff(c.m.W, W1) < 1e-6, "step 0 of warmup 2: lr = alpha/3: %g", max_abs_diff(c.m.W, W1));
    ggml_opt_free(o);
    model_free(&c.m);
}

/* The caller's MSE, built as the library builds it, trains bitwise alike;
 * with opt_period 2 it is divided by 2 as the built-in one is. */
static void test_user_loss(ggml_backend_sched_t sched, ggml_backend_t be) {
    for (int period = 1; period <= 2; period++) {
        struct step_case a, u;
        if (!CHECK(step_case_init(&a, be, RB / period) && step_case_init(&u, be, RB / period), "models")) return;
        memcpy(u.W0, a.W0, sizeof a.W0); memcpy(u.b0, a.b0, sizeof a.b0);
        memcpy(u.x, a.x, sizeof a.x);    memcpy(u.y, a.y, sizeof a.y);
        model_set(&u.m, u.W0, u.b0);
        struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
        pars.adamw.alpha = 0.01f;
        ggml_opt_context_t oa = opt_for(sched, &a.m, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, GGML_OPT_OPTIMIZER_TYPE_ADAMW, period, &pars);
        /* labels with memory of their own; the loss in the compute context */
        struct ggml_init_params lp = {ggml_tensor_overhead(), NULL, true};
        struct ggml_context * cl = ggml_init(lp);
        struct ggml_tensor * y = ggml_new_tensor_2d(cl, GGML_TYPE_F32, RM, RB / period);
        ggml_backend_buffer_t yb = ggml_backend_alloc_ctx_tensors(cl, be);
        struct ggml_context * cc = u.m.ctx_compute;
        struct ggml_tensor * loss = ggml_scale(cc, ggml_sum(cc, ggml_sqr(cc, ggml_sub(cc, u.m.out, y))), 1.0f / (float) (RM * RB / period));
        struct ggml_opt_params p = params_for(sched, &u.m, GGML_OPT_OPTIMIZER_TYPE_ADAMW, &pars);
        p.loss_type = GGML_OPT_LOSS_TYPE_MEAN;
        p.opt_period = period;
        p.loss = loss;
        p.labels = y;
        ggml_opt_context_t ou = ggml_opt_init(p);
        if (CHECK(oa && ou && yb, "contexts: %s", ggml_last_error())) {
            CHECK(ggml_opt_labels(ou) == y && ggml_opt_pred(ou) == NULL, "the caller's labels; no predictions");
            for (int j = 0; j < period; j++) {
                CHECK(train_batch(oa, &a, j * RB / period, NULL) == GGML_STATUS_SUCCESS, "built-in loss: %s", ggml_last_error());
                CHECK(train_batch(ou, &u, j * RB / period, NULL) == GGML_STATUS_SUCCESS, "caller's loss: %s", ggml_last_error());
            }
            float wa[RK * RM], wu[RK * RM];
            ggml_backend_tensor_get(a.m.W, wa, 0, sizeof wa);
            ggml_backend_tensor_get(u.m.W, wu, 0, sizeof wu);
            double d = 0.0;
            for (int i = 0; i < RK * RM; i++) d = fmax(d, fabs((double) wa[i] - wu[i]));
            if (period == 1) CHECK(memcmp(wa, wu, sizeof wa) == 0, "opt_period 1: the caller's MSE steps bitwise as the built-in one");
            else CHECK(d < 1e-7, "opt_period 2: the caller's mean is divided by 2 (max diff %g)", d);
        }
        ggml_opt_free(oa);
        ggml_opt_free(ou);
        ggml_backend_buffer_free(yb);
        ggml_free(cl);
        model_free(&a.m);
        model_free(&u.m);
    }
}

struct stop_state { int calls, stop_at; };
static bool stop_after(void * ud, bool train, ggml_opt_context_t o, ggml_opt_result_t r, int64_t ib, int64_t ib_max) {
    (void) train; (void) o; (void) r; (void) ib_max;
    struct stop_state * s = ud;
    s->calls++;
    return ib < s->stop_at;
}

static void test_batch_callback(ggml_backend_sched_t sched, ggml_backend_t be) {
    struct model m;
    if (!CHECK(model_init(&m, be, RK, RM, 4), "model")) return;
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, RK, RM, 24, 1);
    if (!CHECK(ds != NULL, "dataset")) { model_free(&m); return; }
    fill_f32(ggml_opt_dataset_data(ds)->data, RK * 24, -1, 1);
    fill_f32(ggml_opt_dataset_labels(ds)->data, RM * 24, -1, 1);
    struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
    struct ggml_opt_params p = params_for(sched, &m, GGML_OPT_OPTIMIZER_TYPE_ADAMW, &pars);
    struct stop_state s = {0, 2};
    p.batch_callback = stop_after;
    p.batch_callback_ud = &s;
    ggml_opt_context_t o = ggml_opt_init(p);
    ggml_opt_result_t r = ggml_opt_result_init();
    if (CHECK(o && r, "opt: %s", ggml_last_error())) {
        CHECK(ggml_opt_epoch(o, ds, r, NULL, -1, NULL, NULL) == GGML_STATUS_SUCCESS, "epoch: %s", ggml_last_error());
        int64_t n;
        ggml_opt_result_ndata(r, &n);
        CHECK(s.calls == 2 && ggml_opt_get_steps(o) == 2 && n == 8, "stopped after batch 2 of 6: %d calls, %lld steps, %lld datapoints",
              s.calls, (long long) ggml_opt_get_steps(o), (long long) n);
        /* a new epoch starts again */
        s.stop_at = 100;
        CHECK(ggml_opt_epoch(o, ds, NULL, NULL, -1, NULL, NULL) == GGML_STATUS_SUCCESS && ggml_opt_get_steps(o) == 8, "next epoch runs whole");
    }
    ggml_opt_result_free(r);
    ggml_opt_free(o);
    ggml_opt_dataset_free(ds);
    model_free(&m);
}

static void test_refusals(ggml_backend_sched_t sched, ggml_backend_t be) {
    struct model m;
    if (!CHECK(model_init(&m, be, RK, RM, RB), "model")) return;
    struct ggml_opt_optimizer_params pars = ggml_opt_get_default_optimizer_params(NULL);
    struct ggml_tensor * not_param[1] = {m.x}, * twice[1] = {m.W}, * none[1] = {NULL};
    struct ggml_opt_param_group two[2] = {{twice, 1, 1.0f, 0.0f}, {twice, 1, 1.0f, 1.0f}};
    const struct { struct ggml_opt_param_group g; const char * what; } bad_groups[] = {
        {{not_param, 1, 1.0f, 1.0f}, "a tensor that is not a parameter"},
        {{none, 1, 1.0f, 1.0f}, "a NULL tensor"},
        {{twice, 1, -1.0f, 1.0f}, "a negative lr_scale"},
        {{twice, 1, 1.0f, NAN}, "a NaN wd_scale"},
        {{NULL, 2, 1.0f, 1.0f}, "n_params without params"},
    };
    for (size_t i = 0; i < sizeof bad_groups / sizeof bad_groups[0]; i++) {
        struct ggml_opt_params p = params_for(sched, &m, GGML_OPT_OPTIMIZER_TYPE_ADAMW, &pars);
        p.param_groups = &bad_groups[i].g;
        p.n_param_groups = 1;
        CHECK(ggml_opt_init(p) == NULL && strstr(ggml_last_error(), "group"), "refused: %s (%s)", bad_groups[i].what, ggml_last_error());
    }
    struct ggml_opt_params p = params_for(sched, &m, GGML_OPT_OPTIMIZER_TYPE_ADAMW, &pars);
    p.param_groups = two;
    p.n_param_groups = 2;
    CHECK(ggml_opt_init(p) == NULL && strstr(ggml_last_error(), "groups 0 and 1"), "refused: a parameter in two groups (%s)", ggml_last_error());
    p.param_groups = NULL;
    CHECK(ggml_opt_init(p) == NULL, "refused: n_param_groups without groups");
    p.n_param_groups = 0;
    const struct ggml_opt_lr_schedule bad_schedules[] = {
        {(enum ggml_opt_lr_schedule_type) 7, 0, 0, 0.0f}, {GGML_OPT_LR_SCHEDULE_WARMUP_COSINE, -1, 10, 0.0f},
        {GGML_OPT_LR_SCHEDULE_WARMUP_COSINE, 1, -10, 0.0f}, {GGML_OPT_LR_SCHEDULE_WARMUP_COSINE, 1, 10, NAN},
    };
    for (size_t i = 0; i < sizeof bad_schedules / sizeof bad_schedules[0]; i++) {
        p.lr_schedule = bad_schedules[i];
        CHECK(ggml_opt_init(p) == NULL && strstr(ggml_last_error(), "lr_schedule"), "refused: bad schedule %zu", i);
    }
    p.lr_schedule = (struct ggml_opt_lr_schedule) {0};
    p.labels = m.x;
    CHECK(ggml_opt_init(p) == NULL && strstr(ggml_last_error(), "labels"), "refused: labels without a loss");
    p.labels = NULL;
    p.loss = m.out;  /* [RM, RB]: not one element */
    CHECK(ggml_opt_init(p) == NULL && strstr(ggml_last_error(), "one element"), "refused: a loss of many elements");
    model_free(&m);
}

int main(void) {
    tc_seed(20261204);
    ggml_backend_t be = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(be, 1);
    ggml_backend_sched_t sched = ggml_backend_sched_new(&be, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, true);
    if (CHECK(sched != NULL, "sched: %s", ggml_last_error())) {
        test_groups_sgd(sched, be);
        test_groups_adamw_and_steps(sched, be);
        test_schedule(sched, be);
        test_user_loss(sched, be);
        test_batch_callback(sched, be);
        test_refusals(sched, be);
    }
    ggml_backend_sched_free(sched);
    ggml_backend_free(be);
    return tc_finish("test_opt_ext");
}

/* test_smoke.c -- one end-to-end path: mul_mat -> sqr -> sum, gradient vs float64. */
#include "common/test_common.h"

static struct ggml_tensor * loss_mm(struct ggml_context * ctx, struct ggml_tensor ** p, void * u) {
    (void) u;
    return ggml_sum(ctx, ggml_sqr(ctx, ggml_mul_mat(ctx, p[0], p[1])));
}

int main(void) {
    tc_seed(1);
    const int64_t shapes[2][4] = {{5, 3, 1, 1}, {5, 4, 1, 1}};
    tc_gradcheck("mul_mat-sqr-sum", loss_mm, NULL, 2, shapes, -1, 1, 1e-2, 1e-3, 1e-2);
    return tc_finish("smoke");
}

/* elementwise.c -- binary ops with ggml broadcasting (b tiled over a),
 * add_id (b's rows picked by expert ids) and unary ops. dst may alias a
 * (the _inplace forms): each element is read before it
 * is written, by the same thread; a dst overlapping an input otherwise is
 * done by one thread (ggmlr_my_dst_rows). */
#include "cpu/kernels/kernels.h"

#include <math.h>

/* an element through F32: F32 directly (the hot case), F16/BF16 converted */
static inline float load_elem(enum ggml_type type, const char * p) { return type == GGML_TYPE_F32 ? *(const float *) p : ggmlr_load_f32(type, p); }
static inline void store_elem(enum ggml_type type, char * p, float v) {
    if (type == GGML_TYPE_F32) *(float *) p = v;
    else ggmlr_store_f32(type, p, v);
}

static inline float apply_binary(enum ggml_op op, float x, float y) {
    switch (op) {
        case GGML_OP_ADD: case GGML_OP_ADD1: return x + y;
        case GGML_OP_SUB: return x - y;
        case GGML_OP_MUL: return x * y;
        default:          return x / y;
    }
}

static void ggmlr_compute_binary(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1];
    const enum ggml_op op = dst->op;
    const bool all_f32 = a->type == GGML_TYPE_F32 && b->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32;
    const bool packed = all_f32 && a->nb[0] == sizeof(float) && b->nb[0] == sizeof(float) && dst->nb[0] == sizeof(float);
    struct ggmlr_rows rows = ggmlr_my_dst_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        char * d = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        const char * arow = ggmlr_elem_ptr(a, 0, i1, i2, i3);
        const char * brow = ggmlr_elem_ptr(b, 0, i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3]);
        const int64_t n = dst->ne[0];
        if (packed && b->ne[0] == n) {
            const float * x = (const float *) arow, * y = (const float *) brow;
            float * z = (float *) d;
            switch (op) {  /* separate loops so each vectorises */
                case GGML_OP_ADD: case GGML_OP_ADD1: for (int64_t i = 0; i < n; i++) z[i] = x[i] + y[i]; break;
                case GGML_OP_SUB: for (int64_t i = 0; i < n; i++) z[i] = x[i] - y[i]; break;
                case GGML_OP_MUL: for (int64_t i = 0; i < n; i++) z[i] = x[i] * y[i]; break;
                default:          for (int64_t i = 0; i < n; i++) z[i] = x[i] / y[i]; break;
            }
        } else {
            /* strided, broadcast along dim 0, or F16/BF16: each element through F32 */
            for (int64_t i = 0; i < n; i++) {
                const float x = load_elem(a->type, arow + i * a->nb[0]);
                const float y = load_elem(b->type, brow + (i % b->ne[0]) * b->nb[0]);
                store_elem(dst->type, d + i * dst->nb[0], apply_binary(op, x, y));
            }
        }
    }
}

/* dst is a new tensor or (in place) a itself, with a's strides: each
 * element is read before it is written, by the thread that owns its row */
static void ggmlr_compute_unary(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const enum ggml_op op = dst->op;
    const float s = op == GGML_OP_LEAKY_RELU ? ggmlr_f32_param_decode(dst) : 0.0f;
    const struct ggmlr_scale_params sc = op == GGML_OP_SCALE ? ggmlr_scale_params_decode(dst) : (struct ggmlr_scale_params) {0, 0};
    const struct ggmlr_clamp_params c = op == GGML_OP_CLAMP ? ggmlr_clamp_params_decode(dst) : (struct ggmlr_clamp_params) {0, 0};
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        char * d = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        const char * arow = ggmlr_elem_ptr(a, 0, i1, i2, i3);
        for (int64_t i = 0; i < dst->ne[0]; i++) {
            const float x = load_elem(a->type, arow + i * a->nb[0]);
            float y;
            switch (op) {
                case GGML_OP_SQR:        y = x * x; break;
                case GGML_OP_SQRT:       y = sqrtf(x); break;
                case GGML_OP_LOG:        y = logf(x); break;
                case GGML_OP_SIN:        y = sinf(x); break;
                case GGML_OP_COS:        y = cosf(x); break;
                case GGML_OP_CLAMP:      y = fminf(fmaxf(x, c.min), c.max); break;
                case GGML_OP_LEAKY_RELU: y = x > 0.0f ? x : s * x; break;
                default:                 y = x * sc.s + sc.bias; break;
            }
            store_elem(dst->type, d + i * dst->nb[0], y);
        }
    }
}

/* dst row (i1, i2, i3) = a's row + b's row ids[i1, i2]; an id out of range fails the compute */
static void ggmlr_compute_add_id(const struct ggmlr_compute_params * p, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0], * b = dst->src[1], * ids = ggmlr_expert_ids_decode(dst);
    struct ggmlr_rows rows = ggmlr_my_rows(p, dst);
    int64_t r, i1, i2, i3;
    while (ggmlr_next_row(&rows, &r, &i1, &i2, &i3)) {
        const int32_t e = *(const int32_t *) ggmlr_elem_ptr(ids, i1, i2, 0, 0);
        if (e < 0 || e >= b->ne[1]) {
            ggmlr_compute_fail(p, "ADD_ID: expert id %d at (%lld, %lld) is outside [0, %lld)", (int) e, (long long) i1, (long long) i2,
                               (long long) b->ne[1]);
            return;
        }
        float * d = ggmlr_elem_ptr(dst, 0, i1, i2, i3);
        const char * x = ggmlr_elem_ptr(a, 0, i1, i2, i3), * y = ggmlr_elem_ptr(b, 0, e, 0, 0);
        for (int64_t i = 0; i < dst->ne[0]; i++) d[i] = *(const float *) (x + i * a->nb[0]) + *(const float *) (y + i * b->nb[0]);
    }
}

GGMLR_KERNEL(binary, ggmlr_compute_binary, NULL, NULL);  /* ADD, ADD1, SUB, MUL, DIV */
GGMLR_KERNEL(add_id, ggmlr_compute_add_id, NULL, NULL);
GGMLR_KERNEL(map, ggmlr_compute_unary, NULL, NULL);     /* SQR, SQRT, LOG, SIN, COS, SCALE, CLAMP, LEAKY_RELU */

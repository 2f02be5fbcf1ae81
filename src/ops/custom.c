/* custom.c -- the custom ops: map_custom1/2/3 (and _inplace), custom_4d and
 * custom_inplace, nodes that run the user's function (kernel:
 * cpu/kernels/custom.c). No backward rule: autodiff refuses them. */
#include "ops/ops_internal.h"

/* n_tasks > 0 or GGML_N_TASKS_MAX, and a function */
static bool check_call(const char * fn, bool has_fun, int n_tasks) {
    if (!has_fun) { ggmlr_set_error("%s: fun is NULL", fn); return false; }
    if (n_tasks != GGML_N_TASKS_MAX && n_tasks < 1) {
        ggmlr_set_error("%s: n_tasks must be > 0 or GGML_N_TASKS_MAX (got %d)", fn, n_tasks);
        return false;
    }
    return true;
}

/* op over srcs[0..n) (srcs[0] = a): shaped and typed like a, or a view of it */
static struct ggml_tensor * map_node(const char * fn, struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor ** srcs, int n,
                                     const struct ggmlr_custom_params * prm, bool inplace) {
    REQUIRE_CTX(fn);
    for (int i = 0; i < n; i++) if (!srcs[i]) return ggmlr_null_input(fn, i == 0 ? "a" : i == 1 ? "b" : "c");
    struct ggml_tensor * a = srcs[0];
    struct ggml_tensor * t = inplace ? ggmlr_new_view(fn, ctx, a, op, a->ne, a->nb, 0) : ggmlr_new_node(ctx, op, a->type, a->ne, NULL, NULL);
    if (!t) return NULL;
    const struct ggmlr_map_custom_srcs s = {a, n > 1 ? srcs[1] : NULL, n > 2 ? srcs[2] : NULL};
    ggmlr_map_custom_srcs_encode(t, &s);
    ggmlr_custom_params_encode(t, prm);
    return t;
}

#define MAP(name, op, n, field, inplace, ...)                                                                              \
    {                                                                                                                  \
        if (!check_call(name, fun != NULL, n_tasks)) return NULL;                                                      \
        struct ggml_tensor * srcs[] = {__VA_ARGS__};                                                                   \
        return map_node(name, ctx, op, srcs, n, &(const struct ggmlr_custom_params) {.fun.field = fun, .n_tasks = n_tasks, .userdata = userdata}, inplace); \
    }

struct ggml_tensor * ggml_map_custom1(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun, int n_tasks, void * userdata)
    MAP("ggml_map_custom1", GGML_OP_MAP_CUSTOM1, 1, f1, false, a)

struct ggml_tensor * ggml_map_custom1_inplace(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun, int n_tasks, void * userdata)
    MAP("ggml_map_custom1_inplace", GGML_OP_MAP_CUSTOM1, 1, f1, true, a)

struct ggml_tensor * ggml_map_custom2(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, ggml_custom2_op_t fun,
                                      int n_tasks, void * userdata)
    MAP("ggml_map_custom2", GGML_OP_MAP_CUSTOM2, 2, f2, false, a, b)

struct ggml_tensor * ggml_map_custom2_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, ggml_custom2_op_t fun,
                                              int n_tasks, void * userdata)
    MAP("ggml_map_custom2_inplace", GGML_OP_MAP_CUSTOM2, 2, f2, true, a, b)

struct ggml_tensor * ggml_map_custom3(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                      ggml_custom3_op_t fun, int n_tasks, void * userdata)
    MAP("ggml_map_custom3", GGML_OP_MAP_CUSTOM3, 3, f3, false, a, b, c)

struct ggml_tensor * ggml_map_custom3_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                              ggml_custom3_op_t fun, int n_tasks, void * userdata)
    MAP("ggml_map_custom3_inplace", GGML_OP_MAP_CUSTOM3, 3, f3, true, a, b, c)

/* CUSTOM over args[0..n_args) after `first` sources already set (custom_inplace: a) */
static bool set_args(const char * fn, struct ggml_tensor * t, int first, struct ggml_tensor ** args, int n_args) {
    for (int i = 0; i < n_args; i++) {
        if (!args[i]) { ggmlr_set_error("%s: args[%d] is NULL", fn, i); return false; }
        ggmlr_custom_src_encode(t, first + i, args[i]);
    }
    return true;
}

static bool check_args(const char * fn, struct ggml_tensor ** args, int n_args, int room) {
    if (n_args < 0 || n_args > room) { ggmlr_set_error("%s: n_args must be in 0..%d (got %d)", fn, room, n_args); return false; }
    if (n_args > 0 && !args) { ggmlr_set_error("%s: args is NULL", fn); return false; }
    return true;
}

struct ggml_tensor * ggml_custom_4d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                    struct ggml_tensor ** args, int n_args, ggml_custom_op_t fun, int n_tasks, void * userdata) {
    const char * fn = "ggml_custom_4d";
    REQUIRE_CTX(fn);
    if (!check_call(fn, fun != NULL, n_tasks) || !check_args(fn, args, n_args, GGML_MAX_SRC)) return NULL;
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    double bound = 1.0;
    for (int i = 0; i < 4; i++) {
        if (ne[i] < 0) { ggmlr_set_error("%s: ne[%d] = %lld is negative", fn, i, (long long) ne[i]); return NULL; }
        bound *= (double) ne[i];
    }
    if (!ggmlr_check_size_bound(fn, bound)) return NULL;
    if (type < 0 || type >= GGML_TYPE_COUNT || ggml_type_size(type) == 0) { ggmlr_set_error("%s: unknown type %d", fn, (int) type); return NULL; }
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_CUSTOM, type, ne, NULL, NULL);
    if (!t || !set_args(fn, t, 0, args, n_args)) return NULL;
    ggmlr_custom_params_encode(t, &(const struct ggmlr_custom_params) {.fun.f = fun, .n_tasks = n_tasks, .userdata = userdata});
    return t;
}

struct ggml_tensor * ggml_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor ** args, int n_args,
                                         ggml_custom_op_t fun, int n_tasks, void * userdata) {
    const char * fn = "ggml_custom_inplace";
    REQUIRE_CTX(fn); REQUIRE(fn, a);
    if (!check_call(fn, fun != NULL, n_tasks) || !check_args(fn, args, n_args, GGML_MAX_SRC - 1)) return NULL;
    struct ggml_tensor * t = ggmlr_new_view(fn, ctx, a, GGML_OP_CUSTOM, a->ne, a->nb, 0);
    if (!t) return NULL;
    ggmlr_custom_src_encode(t, 0, a);
    if (!set_args(fn, t, 1, args, n_args)) return NULL;
    ggmlr_custom_params_encode(t, &(const struct ggmlr_custom_params) {.fun.f = fun, .n_tasks = n_tasks, .userdata = userdata});
    return t;
}

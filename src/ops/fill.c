/* fill.c -- generators: fill (a constant, shaped like a) and arange (an
 * arithmetic sequence), and fill's backward rule (kernel: cpu/kernels/fill.c). */
#include "ops/grad.h"

#include <math.h>

static struct ggml_tensor * fill_impl(const char * fn, struct ggml_context * ctx, struct ggml_tensor * a, float c, bool inplace) {
    REQUIRE_CTX(fn); REQUIRE(fn, a);
    if (a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16) return ggmlr_fail_type(fn, "a", a, "F32 or F16");
    /* only the in-place form writes a's memory (as packed elements); the new tensor reads a's shape alone */
    if (inplace && !ggml_is_contiguous(a)) { ggmlr_set_error("%s: a must be contiguous", fn); return NULL; }
    struct ggml_tensor * t = inplace ? ggmlr_new_view(fn, ctx, a, GGML_OP_FILL, a->ne, a->nb, 0) : ggmlr_new_node(ctx, GGML_OP_FILL, a->type, a->ne, a, NULL);
    if (t) ggmlr_f32_param_encode(t, c);
    return t;
}

struct ggml_tensor * ggml_fill(struct ggml_context * ctx, struct ggml_tensor * a, float c) { return fill_impl("ggml_fill", ctx, a, c, false); }
struct ggml_tensor * ggml_fill_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float c) {
    return fill_impl("ggml_fill_inplace", ctx, a, c, true);
}

struct ggml_tensor * ggml_arange(struct ggml_context * ctx, float start, float stop, float step) {
    const char * fn = "ggml_arange";
    REQUIRE_CTX(fn);
    if (!isfinite(start) || !isfinite(stop) || !isfinite(step) || !(stop > start) || !(step > 0)) {
        ggmlr_set_error("%s: needs finite start < stop and step > 0 (got %g, %g, %g)", fn, (double) start, (double) stop, (double) step);
        return NULL;
    }
    /* upstream's count, in float */
    const float steps = ceilf((stop - start) / step);
    if (!(steps < 0x1p62f)) { ggmlr_set_error("%s: %g elements", fn, (double) steps); return NULL; }
    const int64_t ne[4] = {(int64_t) steps, 1, 1, 1};
    struct ggml_tensor * t = ggmlr_new_node(ctx, GGML_OP_ARANGE, GGML_TYPE_F32, ne, NULL, NULL);
    if (!t) return NULL;
    const struct ggmlr_arange_params p = {start, stop, step};
    ggmlr_arange_params_encode(t, &p);
    return t;
}

/* ---- backward: fill's result does not depend on a's values: a's gradient is zero ---- */

RULE(grad_fill) {
    (void) need;
    return ggmlr_grad_acc(ctx, gph, A, ggml_fill(ctx, g, 0.0f));
}

GRAD_RULE(fill, NULL, grad_fill);

// test_cpp_api.cpp -- every public header compiles as C++ (extern "C",
// no C-only syntax), and ggml-cpp.h's owners free what they hold: a graph
// placed by a ggml_gallocr_ptr and computed on a ggml_backend_ptr, checked
// against float64 (AddressSanitizer runs catch a missing free).
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpp.h"
#include "ggml-cpu.h"
#include "ggml-opt.h"
#include "gguf.h"

#include <cmath>
#include <cstdio>
#include <vector>

static int failures = 0, checks = 0;
static void check(bool ok, const char * what) {
    checks++;
    if (!ok) { failures++; std::printf("FAIL %s: %s\n", what, ggml_last_error()); }
}

int main() {
    ggml_backend_ptr backend(ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, nullptr));
    check(backend != nullptr, "a CPU backend from the registry");
    ggml_init_params pw = {4 * ggml_tensor_overhead(), nullptr, true};
    ggml_init_params pg = {16 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true};
    ggml_context_ptr cw(ggml_init(pw)), cg(ggml_init(pg));
    const int n = 37;
    ggml_tensor * a = ggml_new_tensor_1d(cw.get(), GGML_TYPE_F32, n);
    ggml_tensor * b = ggml_new_tensor_1d(cw.get(), GGML_TYPE_F32, n);
    ggml_backend_buffer_ptr buf(ggml_backend_alloc_ctx_tensors(cw.get(), backend.get()));
    std::vector<float> av(n), bv(n);
    double ref = 0;
    for (int i = 0; i < n; i++) {
        av[i] = 0.1f * (float) i - 1.0f;
        bv[i] = 0.5f - 0.03f * (float) i;
        const double s = (double) av[i] * bv[i] + av[i];
        ref += s * s;
    }
    ggml_backend_tensor_set(a, av.data(), 0, n * sizeof(float));
    ggml_backend_tensor_set(b, bv.data(), 0, n * sizeof(float));
    ggml_tensor * y = ggml_sum(cg.get(), ggml_sqr(cg.get(), ggml_add(cg.get(), ggml_mul(cg.get(), a, b), a)));
    ggml_cgraph * g = ggml_new_graph(cg.get());
    ggml_build_forward_expand(g, y);
    ggml_gallocr_ptr galloc(ggml_gallocr_new(ggml_backend_get_default_buffer_type(backend.get())));
    check(ggml_gallocr_alloc_graph(galloc.get(), g), "alloc_graph");
    check(ggml_backend_graph_compute(backend.get(), g) == GGML_STATUS_SUCCESS, "compute");
    float out = 0;
    ggml_backend_tensor_get(y, &out, 0, sizeof out);
    check(std::fabs(out - ref) <= 1e-5 * std::fabs(ref), "sum((a*b + a)^2) against float64");
    gguf_context_ptr gguf(gguf_init_empty());
    check(gguf != nullptr, "gguf_context_ptr");
    ggml_backend_ptr none(ggml_backend_init_by_name("CUDA", nullptr));
    check(none == nullptr, "no CUDA backend");
    std::printf("cpp_api: %d checks\n%d passed, %d failed\n", checks, checks - failures, failures);
    return failures ? 1 : 0;
}

/* test_upstream_api.c -- upstream's API surface beyond ops: the registry and its
 * one CPU device, buffer types and buffers, tensor memset/copy, the compute
 * plan (ggml_graph_plan / ggml_graph_compute), CPU feature queries, clocks,
 * I32 element access, graph editing and naming, backend features, graph
 * copies and the comparison of two backends, tensor layout queries, context
 * extras (reset, work buffers, object listing), graph_dup and the abort callback. */
#include "common/test_common.h"

#include "ggml-alloc.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void test_registry(void) {
    ggml_backend_load_all();
    CHECK(ggml_backend_reg_count() == 1 && ggml_backend_dev_count() == 1, "one backend, one device");
    ggml_backend_reg_t reg = ggml_backend_reg_get(0);
    ggml_backend_dev_t dev = ggml_backend_dev_get(0);
    CHECK(reg && strcmp(ggml_backend_reg_name(reg), "CPU") == 0 && ggml_backend_reg_by_name("cpu") == reg, "the CPU backend, found by name in any case");
    CHECK(ggml_backend_reg_get(1) == NULL && ggml_backend_dev_get(1) == NULL && ggml_backend_reg_by_name("CUDA") == NULL, "nothing else");
    CHECK(ggml_backend_reg_dev_count(reg) == 1 && ggml_backend_reg_dev_get(reg, 0) == dev && ggml_backend_dev_backend_reg(dev) == reg, "reg <-> dev");
    CHECK(dev && strcmp(ggml_backend_dev_name(dev), "CPU") == 0 && ggml_backend_dev_description(dev)[0], "device name and description");
    /* the description is the processor's model name (upstream's), else "CPU" */
    const char * desc = dev ? ggml_backend_dev_description(dev) : "";
    char model[1024] = "";
    FILE * cpuinfo = fopen("/proc/cpuinfo", "r");
    while (cpuinfo && fgets(model, sizeof model, cpuinfo) && strncmp(model, "model name", 10) != 0) model[0] = '\0';
    if (cpuinfo) fclose(cpuinfo);
    CHECK(strncmp(model, "model name", 10) == 0 ? desc[0] && strstr(model, desc) && desc[0] != ' ' && desc[strlen(desc) - 1] != ' '
                                                : strcmp(desc, "CPU") == 0,
          "device description '%s' from /proc/cpuinfo's model name", desc);
    CHECK(ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_CPU && ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU) == dev, "a CPU device");
    CHECK(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_GPU) == NULL && ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_GPU, NULL) == NULL &&
          ggml_last_error()[0], "no GPU, with a message");
    size_t free_b = 0, total_b = 0;
    ggml_backend_dev_memory(dev, &free_b, &total_b);
    CHECK(total_b > ((size_t) 64 << 20) && free_b <= total_b, "device memory: %zu of %zu bytes free", free_b, total_b);
    struct ggml_backend_dev_props props;
    ggml_backend_dev_get_props(dev, &props);
    CHECK(props.name == ggml_backend_dev_name(dev) && props.type == GGML_BACKEND_DEVICE_TYPE_CPU && props.memory_total == total_b, "props");
    CHECK(ggml_backend_dev_buffer_type(dev) == ggml_backend_cpu_buffer_type() && ggml_backend_buft_get_device(ggml_backend_cpu_buffer_type()) == dev,
          "the device's buffer type is the CPU one");
    CHECK(ggml_backend_load("libggml-cuda.so") == NULL && strstr(ggml_last_error(), "not loaded dynamically"), "load refuses with a message");

    ggml_backend_t backends[3] = {ggml_backend_dev_init(dev, NULL), ggml_backend_init_by_name("CPU", NULL), ggml_backend_init_best()};
    for (int i = 0; i < 3; i++) CHECK(backends[i] && ggml_backend_is_cpu(backends[i]) && ggml_backend_get_device(backends[i]) == dev, "backend %d is a CPU backend", i);
    CHECK(ggml_backend_init_by_name("Metal", NULL) == NULL, "no Metal backend");
    ggml_backend_set_n_threads_t set_n = (ggml_backend_set_n_threads_t) ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
    CHECK(set_n != NULL && ggml_backend_reg_get_proc_address(reg, "ggml_backend_split_buffer_type") == NULL, "proc address of set_n_threads only");

    /* supports_op: by op and type; a graph computed on a backend set to one thread */
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 3), * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 5);
    struct ggml_tensor * p = ggml_mul_mat(ctx, a, b);
    CHECK(ggml_backend_supports_op(backends[0], p) && ggml_backend_dev_supports_op(dev, p), "mul_mat is supported");
    struct ggml_tensor fake = *p;
    fake.op = GGML_OP_COUNT;
    CHECK(!ggml_backend_supports_op(backends[0], &fake) && !ggml_backend_supports_op(NULL, p), "an unknown op is not");
    if (set_n) set_n(backends[0], 1);
    tc_fill_uniform(a, -1, 1);
    tc_fill_uniform(b, -1, 1);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, p);
    CHECK(ggml_backend_graph_compute_async(backends[0], g) == GGML_STATUS_SUCCESS, "compute on the device's backend");
    ggml_backend_synchronize(backends[0]);
    double ref = 0;
    for (int k = 0; k < 8; k++) ref += (double) ggml_get_f32_nd(a, k, 2, 0, 0) * ggml_get_f32_nd(b, k, 4, 0, 0);
    CHECK(fabs(ggml_get_f32_nd(p, 2, 4, 0, 0) - ref) <= 1e-5 * (1 + fabs(ref)), "its result");
    ggml_free(ctx);
    for (int i = 0; i < 3; i++) ggml_backend_free(backends[i]);
}

static void test_buffers(void) {
    ggml_backend_buffer_type_t buft = ggml_backend_cpu_buffer_type();
    CHECK(strcmp(ggml_backend_buft_name(buft), "CPU") == 0 && ggml_backend_buft_get_alignment(buft) == 64 && ggml_backend_buft_is_host(buft) &&
          ggml_backend_buft_get_max_size(buft) == SIZE_MAX, "the CPU buffer type");
    ggml_backend_buffer_t buf = ggml_backend_buft_alloc_buffer(buft, 1000);
    if (!CHECK(buf != NULL, "alloc_buffer: %s", ggml_last_error())) return;
    const unsigned char * base = ggml_backend_buffer_get_base(buf);
    int nonzero = 0;
    for (int i = 0; i < 1000; i++) nonzero += base[i] != 0;
    CHECK(nonzero == 0 && ggml_backend_buffer_get_size(buf) == 1000 && (uintptr_t) base % 64 == 0, "zeroed, sized, aligned");
    CHECK(ggml_backend_buffer_get_type(buf) == buft && ggml_backend_buffer_is_host(buf) && strcmp(ggml_backend_buffer_name(buf), "CPU") == 0, "its type");
    ggml_backend_buffer_set_usage(buf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    CHECK(ggml_backend_buffer_get_usage(buf) == GGML_BACKEND_BUFFER_USAGE_WEIGHTS, "usage");
    ggml_backend_buffer_clear(buf, 0xAB);
    CHECK(base[0] == 0xAB && base[999] == 0xAB, "clear fills the buffer");

    struct ggml_init_params ip = {8 * ggml_tensor_overhead(), NULL, true};
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100), * u = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100);
    struct ggml_tensor * big = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 300);
    CHECK(ggml_backend_buffer_get_alloc_size(buf, t) == 400 && ggml_backend_buft_get_alloc_size(buft, t) == 400, "alloc size = nbytes");
    CHECK(ggml_backend_tensor_alloc(buf, t, (char *) base + 64) == GGML_STATUS_SUCCESS && t->buffer == buf, "tensor_alloc inside");
    CHECK(ggml_backend_tensor_alloc(buf, big, (char *) base + 64) == GGML_STATUS_FAILED && big->data == NULL, "tensor_alloc past the end is refused");
    CHECK(ggml_backend_tensor_alloc(buf, u, (char *) base + 512) == GGML_STATUS_SUCCESS, "a second tensor");
    ggml_backend_tensor_memset(t, 0, 0, ggml_nbytes(t));
    ggml_backend_tensor_memset(t, 0x3F, 8, 4);
    float x[100];
    ggml_backend_tensor_get(t, x, 0, sizeof x);
    CHECK(x[0] == 0 && x[1] == 0 && x[2] != 0 && x[3] == 0, "memset writes its byte range only");
    ggml_clear_error();
    ggml_backend_tensor_memset(t, 0, 396, 8);
    CHECK(strstr(ggml_last_error(), "out of bounds") != NULL, "memset out of bounds is refused");
    ggml_backend_tensor_copy(t, u);
    CHECK(memcmp(t->data, u->data, ggml_nbytes(t)) == 0, "tensor_copy");
    CHECK(ggml_get_data(t) == t->data && ggml_get_data_f32(t) == t->data, "get_data");
    ggml_backend_buffer_free(buf);

    /* a buffer over the caller's memory is not freed with it */
    void * mine = aligned_alloc(64, 256);
    ggml_backend_buffer_t view = ggml_backend_cpu_buffer_from_ptr(mine, 256);
    CHECK(view && ggml_backend_buffer_get_base(view) == mine && ggml_backend_buffer_get_size(view) == 256, "buffer from a pointer");
    ggml_backend_buffer_free(view);
    memset(mine, 1, 256);  /* still ours (AddressSanitizer would catch a use after free) */
    CHECK(ggml_backend_cpu_buffer_from_ptr((char *) mine + 1, 8) == NULL, "an unaligned pointer is refused");
    free(mine);
    ggml_free(ctx);
}

static bool abort_now(void * data) { return *(bool *) data; }

static void test_cplan(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * s = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 33, 9);
    tc_fill_uniform(s, -3, 3);
    struct ggml_tensor * y = ggml_soft_max(ctx, s);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);
    struct ggml_cplan plan = ggml_graph_plan(g, 2, NULL);
    CHECK(plan.n_threads == 2 && plan.work_data == NULL, "plan for 2 threads, needing %zu bytes", plan.work_size);
    if (plan.work_size > 0) CHECK(ggml_graph_compute(g, &plan) == GGML_STATUS_FAILED && ggml_last_error()[0], "no work_data: refused");
    uint8_t * work = malloc(plan.work_size + 1);
    plan.work_data = work;
    bool stop = true;
    plan.abort_callback = abort_now;
    plan.abort_callback_data = &stop;
    ggml_set_f32(y, -1.0f);
    CHECK(ggml_graph_compute(g, &plan) == GGML_STATUS_ABORTED && ggml_get_f32_1d(y, 0) == -1.0f, "the abort callback stops it before any node");
    stop = false;
    CHECK(ggml_graph_compute(g, &plan) == GGML_STATUS_SUCCESS, "compute with the plan: %s", ggml_last_error());
    double max_err = 0;
    for (int r = 0; r < 9; r++) {
        double m = -INFINITY, z = 0;
        for (int i = 0; i < 33; i++) m = fmax(m, ggml_get_f32_nd(s, i, r, 0, 0));
        for (int i = 0; i < 33; i++) z += exp(ggml_get_f32_nd(s, i, r, 0, 0) - m);
        for (int i = 0; i < 33; i++) max_err = fmax(max_err, fabs(ggml_get_f32_nd(y, i, r, 0, 0) - exp(ggml_get_f32_nd(s, i, r, 0, 0) - m) / z));
    }
    CHECK(max_err < 1e-6, "softmax through the plan against float64 (max error %.3g)", max_err);
    free(work);
    ggml_free(ctx);
}

static void test_features_and_time(void) {
    /* the CPU's own words: /proc/cpuinfo flags, when there is such a file */
    FILE * f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    bool found = false;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0) continue;
        found = true;
        CHECK(ggml_cpu_has_avx2() == (strstr(line, " avx2") != NULL), "avx2 as /proc/cpuinfo says");
        CHECK(ggml_cpu_has_fma() == (strstr(line, " fma") != NULL), "fma as /proc/cpuinfo says");
        CHECK(ggml_cpu_has_f16c() == (strstr(line, " f16c") != NULL), "f16c as /proc/cpuinfo says");
        CHECK(ggml_cpu_has_avx512() == (strstr(line, " avx512f") != NULL), "avx512 as /proc/cpuinfo says");
        CHECK(ggml_cpu_has_ssse3() == (strstr(line, " ssse3") != NULL), "ssse3 as /proc/cpuinfo says");
        break;
    }
    if (f) fclose(f);
    if (!found) printf("no /proc/cpuinfo flags: feature queries not cross-checked\n");
    CHECK(ggml_cpu_has_neon() == 0 || ggml_cpu_has_avx() == 0, "not both ARM and x86");
    ggml_cpu_init();
    ggml_time_init();
    const int64_t t0 = ggml_time_us(), m0 = ggml_time_ms(), c0 = ggml_cycles();
    volatile double sink = 0;
    while (ggml_time_us() - t0 < 20000) sink += 1;  /* 20 ms of work */
    const int64_t dt = ggml_time_us() - t0, dm = ggml_time_ms() - m0;
    CHECK(dt >= 20000 && dm >= 19 && dm <= dt / 1000 + 1, "clocks: %lld us, %lld ms", (long long) dt, (long long) dm);
    CHECK(ggml_cycles() > c0 && ggml_cycles_per_ms() > 0, "cycles advance");
    GGML_ASSERT(GGML_PAD(13, 8) == 16 && GGML_N_TASKS_MAX == -1);
    GGML_UNUSED(sink);
}

/* argsort_top_k: the first k columns of the descending argsort, as a view */
static void test_argsort_top_k(void) {
    struct ggml_context * ctx = tc_ctx(1);
    static const float x[2][5] = {{3, 9, 1, 7, 5}, {-1, -5, 2, 0, 8}};
    static const int32_t want[2][3] = {{1, 3, 4}, {4, 2, 3}};  /* worked out by hand */
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 2);
    memcpy(a->data, x, sizeof x);
    struct ggml_tensor * t = ggml_argsort_top_k(ctx, a, 3);
    if (CHECK(t && t->ne[0] == 3 && t->ne[1] == 2 && t->type == GGML_TYPE_I32 && t->view_src, "argsort_top_k: an I32 [3, 2] view")) {
        struct ggml_cgraph * g = ggml_new_graph(ctx);
        ggml_build_forward_expand(g, t);
        tc_compute(ctx, g, 2);
        int bad = 0;
        for (int r = 0; r < 2; r++)
            for (int k = 0; k < 3; k++) bad += ggml_get_i32_nd(t, k, r, 0, 0) != want[r][k];
        CHECK(bad == 0, "argsort_top_k: the indices of the 3 largest, largest first (%d differ)", bad);
    }
    ggml_free(ctx);
}

static void test_i32_access(void) {
    struct ggml_context * ctx = tc_ctx(1);
    const int32_t big = (1 << 24) + 1;  /* no float holds it */
    struct ggml_tensor * one = ggml_new_i32(ctx, big);
    CHECK(one && one->type == GGML_TYPE_I32 && ggml_get_i32_1d(one, 0) == big && *(int32_t *) one->data == big, "new_i32 keeps 2^24 + 1 exactly");
    struct ggml_tensor * m = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 2);
    ggml_set_i32(m, -7);
    ggml_set_i32_nd(m, 2, 1, 0, 0, INT32_MAX);
    ggml_set_i32_1d(m, 1, INT32_MIN);
    const int32_t * d = m->data;
    CHECK(d[0] == -7 && d[1] == INT32_MIN && d[4] == -7 && d[5] == INT32_MAX && ggml_get_i32_nd(m, 2, 1, 0, 0) == INT32_MAX, "set/get i32 1d/nd");
    struct ggml_tensor * h = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 4), * f = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    ggml_set_i32(h, 3);
    ggml_set_i32_1d(h, 2, -2049);  /* F16 rounds it to -2048 (ties to even) */
    ggml_set_f32_1d(f, 0, 3.0e9f);
    ggml_set_f32_1d(f, 1, -2.5f);
    CHECK(ggml_get_f32_1d(h, 0) == 3.0f && ggml_get_i32_1d(h, 2) == -2048, "i32 into F16 converts as ggml_set_f32 does");
    CHECK(ggml_get_i32_1d(f, 0) == INT32_MAX && ggml_get_i32_1d(f, 1) == -2, "F32 read as i32: saturates, truncates toward 0");
    ggml_clear_error();
    CHECK(ggml_get_i32_1d(m, 6) == 0 && strstr(ggml_last_error(), "out of range"), "index out of range: 0 and a message");
    CHECK(ggml_get_i32_nd(m, 0, 2, 0, 0) == 0 && ggml_set_i32(NULL, 1) == NULL, "nd out of range; NULL tensor");
    ggml_free(ctx);
}

/* I16 and I8: storage types (upstream's test-dup copies I16 tensors) that the
 * accessors and the copies take, saturating what does not fit. */
static void test_small_int_types(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * s = ggml_new_tensor_2d(ctx, GGML_TYPE_I16, 5, 2), * b = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 4);
    if (!CHECK(s && b && ggml_is_contiguous(s) && s->nb[1] == 10 && b->nb[0] == 1, "I16 [5, 2] and I8 [4] tensors: %s", ggml_last_error()))
        return;
    for (int i = 0; i < 10; i++) ggml_set_i32_1d(s, i, 1000 * i - 4000);
    ggml_set_i32_1d(s, 9, 40000);   /* saturates to 32767 */
    ggml_set_f32_1d(s, 8, -1e9f);   /* to -32768 */
    const int16_t * sd = s->data;
    CHECK(sd[0] == -4000 && sd[4] == 0 && sd[7] == 3000 && sd[8] == INT16_MIN && sd[9] == INT16_MAX, "I16 stores, saturating");
    ggml_set_i32(b, 300);
    ggml_set_i32_1d(b, 1, -7);
    ggml_set_f32_1d(b, 2, -200.0f);
    const int8_t * bd = b->data;
    CHECK(bd[0] == 127 && bd[1] == -7 && bd[2] == -128 && ggml_get_f32_1d(b, 3) == 127.0f, "I8 stores, saturating");
    /* copies: I16 -> F32 (the transposed view: strided reads), F32 -> I16, I16 -> I16 */
    struct ggml_tensor * f = ggml_cont(ctx, ggml_cast(ctx, ggml_transpose(ctx, s), GGML_TYPE_F32));
    struct ggml_tensor * back = ggml_cast(ctx, f, GGML_TYPE_I16);
    struct ggml_tensor * same = ggml_dup(ctx, s);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    if (!CHECK(f && back && same, "I16 casts: %s", ggml_last_error())) return;
    ggml_build_forward_expand(g, back);
    ggml_build_forward_expand(g, same);
    CHECK(ggml_graph_compute_with_ctx(ctx, g, 2) == GGML_STATUS_SUCCESS, "computes");
    CHECK(f->type == GGML_TYPE_F32 && f->ne[0] == 2 && ggml_get_f32_nd(f, 1, 2, 0, 0) == 3000.0f && ggml_get_f32_nd(f, 1, 3, 0, 0) == -32768.0f,
          "I16 -> F32 through a transposed view");
    const int16_t * bk = back->data, * sm = same->data;
    CHECK(bk[0] == -4000 && bk[1] == 1000 && bk[9] == INT16_MAX && memcmp(sm, sd, 20) == 0, "F32 -> I16 and I16 -> I16 copies");
    ggml_free(ctx);
}

/* ggml_validate_row_data: finite rows pass; a NaN or Inf value, a block
 * with a NaN scale, a partial block and a bad type fail with a message.
 * ggml_graph_dump_dot: a dot file with a box per node and an edge per source. */
static void test_validate_and_dot(void) {
    float f[4] = {1, -2, 3, 0};
    CHECK(ggml_validate_row_data(GGML_TYPE_F32, f, sizeof f), "finite F32 rows are valid");
    f[2] = NAN;
    ggml_clear_error();
    CHECK(!ggml_validate_row_data(GGML_TYPE_F32, f, sizeof f) && ggml_last_error()[0], "an F32 NaN is not");
    f[2] = INFINITY;
    CHECK(!ggml_validate_row_data(GGML_TYPE_F32, f, sizeof f), "an F32 Inf is not");
    CHECK(!ggml_validate_row_data(GGML_TYPE_F32, f, 6), "6 bytes are not whole F32 values");
    const ggml_fp16_t h[2] = {ggml_fp32_to_fp16(1.5f), ggml_fp32_to_fp16(NAN)};
    CHECK(ggml_validate_row_data(GGML_TYPE_F16, h, 2) && !ggml_validate_row_data(GGML_TYPE_F16, h, 4), "F16: 1.5 valid, NaN not");
    float row[32];
    for (int i = 0; i < 32; i++) row[i] = (float) i - 16;
    unsigned char q[2 * 34];  /* two Q8_0 blocks */
    ggml_get_type_traits(GGML_TYPE_Q8_0)->from_float_ref(row, q, 32);
    memcpy(q + 34, q, 34);
    CHECK(ggml_validate_row_data(GGML_TYPE_Q8_0, q, sizeof q), "Q8_0 blocks of finite values are valid");
    const ggml_fp16_t nan16 = ggml_fp32_to_fp16(NAN);
    memcpy(q + 34, &nan16, sizeof nan16);  /* the second block's scale d */
    CHECK(!ggml_validate_row_data(GGML_TYPE_Q8_0, q, sizeof q), "a Q8_0 block with a NaN scale is not");
    CHECK(!ggml_validate_row_data(GGML_TYPE_Q8_0, q, 33), "33 bytes are not whole Q8_0 blocks");
    const int32_t ints[2] = {INT32_MIN, 7};
    CHECK(ggml_validate_row_data(GGML_TYPE_I32, ints, sizeof ints), "integers are always valid");
    CHECK(!ggml_validate_row_data((enum ggml_type) 1000, ints, sizeof ints), "an unknown type is not");

    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    ggml_set_param(x);
    struct ggml_tensor * y = ggml_sum(ctx, ggml_sqr(ctx, x));
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16, true);
    ggml_build_forward_expand(g, y);
    const char * path = "test_upstream_api_graph.dot";  /* in the working directory, removed below */
    {
        ggml_graph_dump_dot(NULL, g, path);
        FILE * fp = fopen(path, "r");
        char buf[4096] = {0};
        const size_t n = fp ? fread(buf, 1, sizeof buf - 1, fp) : 0;
        if (fp) fclose(fp);
        int edges = 0;
        for (const char * s = buf; (s = strstr(s, "->")) != NULL; s += 2) edges++;
        CHECK(n > 0 && strncmp(buf, "digraph G {", 11) == 0 && strstr(buf, "SQR") && strstr(buf, "SUM") && edges == 2,
              "dot file: a digraph with SQR and SUM and 2 edges (%d edges)", edges);
        remove(path);
    }
    ggml_clear_error();
    ggml_graph_dump_dot(NULL, g, "/nonexistent-dir/x.dot");
    CHECK(strstr(ggml_last_error(), "cannot open") != NULL, "an unwritable path: a message");
    ggml_free(ctx);
}

static int log_hits;
static void count_log(enum ggml_log_level level, const char * text, void * user) {
    (void) level;
    if (strstr(text, (const char *) user)) log_hits++;
}

static void test_graph_editing(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3), * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * s = ggml_add(ctx, a, b), * g = ggml_gelu(ctx, s);
    ggml_format_name(g, "gelu_%d_%s", 7, "of_a_name_long_enough_to_be_cut_at_sixty_three_characters_xxxxxxxxxx");
    CHECK(strncmp(ggml_get_name(g), "gelu_7_of_a_name", 16) == 0 && strlen(ggml_get_name(g)) == GGML_MAX_NAME - 1, "format_name, truncated");
    CHECK(strcmp(ggml_op_desc(g), "GELU") == 0 && strcmp(ggml_op_desc(s), "ADD") == 0, "op_desc: the activation of UNARY, else the op");
    CHECK(ggml_is_matrix(a) && !ggml_is_vector(a) && ggml_is_vector(b) && ggml_is_matrix(b), "is_vector / is_matrix");
    GGML_TENSOR_LOCALS(int64_t, ne, a, ne);
    GGML_TENSOR_LOCALS(size_t, nb, a, nb);
    CHECK(ne0 == 4 && ne1 == 3 && ne2 == 1 && ne3 == 1 && nb1 == 16 && nb3 == 48, "GGML_TENSOR_LOCALS");

    struct ggml_cgraph * g1 = ggml_new_graph(ctx), * g2 = ggml_new_graph_custom(ctx, 8, false), * tiny = ggml_new_graph_custom(ctx, 1, false);
    ggml_set_name(s, "the sum");
    ggml_build_forward_expand(g1, g);
    ggml_graph_cpy(g1, g2);
    CHECK(ggml_graph_n_nodes(g2) == 2 && ggml_graph_node(g2, 0) == s && ggml_graph_node(g2, 1) == g, "graph_cpy copies the nodes");
    CHECK(ggml_graph_get_tensor(g2, "the sum") == s && ggml_graph_get_tensor(g2, "nothing") == NULL, "graph_get_tensor by name");
    ggml_graph_cpy(g1, tiny);
    CHECK(ggml_graph_n_nodes(tiny) == 0 && strstr(ggml_last_error(), "holds 1"), "graph_cpy into a graph too small is refused");
    struct ggml_tensor * extra = ggml_sqr(ctx, g);
    ggml_graph_add_node(g2, extra);
    CHECK(ggml_graph_n_nodes(g2) == 3 && ggml_graph_node(g2, -1) == extra, "graph_add_node appends");
    ggml_build_forward_expand(g2, extra);
    CHECK(ggml_graph_n_nodes(g2) == 3, "an added node is in the graph's set (not added twice)");
    ggml_log_set(count_log, (void *) "the sum");
    ggml_graph_print(g2);
    ggml_log_set(NULL, NULL);
    CHECK(log_hits == 1, "graph_print names each node once (%d)", log_hits);
    ggml_graph_clear(g2);
    CHECK(ggml_graph_n_nodes(g2) == 0 && ggml_graph_get_tensor(g2, "the sum") == NULL, "graph_clear");
    ggml_free(ctx);

    CHECK(strcmp(ggml_version(), "0.1.0") == 0 && ggml_commit()[0], "version %s, commit %s", ggml_version(), ggml_commit());
    FILE * f = ggml_fopen("/dev/null", "rb");
    CHECK(f != NULL && ggml_fopen(NULL, "r") == NULL, "fopen");
    if (f) fclose(f);
}

/* ggml_build_forward_select: three branches in one graph, only the chosen
 * one computed (the others keep their poisoned memory); ggml_build_forward_order
 * adds without computing until a later expand marks the tensor */
static void test_forward_select(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    for (int i = 0; i < 8; i++) ggml_set_f32_1d(x, i, (float) i);
    struct ggml_tensor * branch[3] = {ggml_scale(ctx, x, 2.0f), ggml_scale(ctx, x, 3.0f), ggml_sqr(ctx, x)};
    struct ggml_tensor * shared = ggml_add(ctx, branch[1], x);  /* branch 1 reaches the graph through it */
    struct ggml_tensor * outs[3] = {branch[0], shared, branch[2]};
    for (int b = 0; b < 3; b++) for (int i = 0; i < 8; i++) ggml_set_f32_1d(branch[b], i, -7.0f);
    for (int i = 0; i < 8; i++) ggml_set_f32_1d(shared, i, -7.0f);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    CHECK(ggml_build_forward_select(g, outs, 3, 1) == shared, "select returns the chosen tensor");
    CHECK(ggml_graph_n_nodes(g) == 4, "every branch is in the graph (%d nodes)", ggml_graph_n_nodes(g));
    tc_compute(ctx, g, 2);
    CHECK(ggml_get_f32_1d(shared, 5) == 20.0f && ggml_get_f32_1d(branch[1], 5) == 15.0f, "the chosen branch computed");
    CHECK(ggml_get_f32_1d(branch[0], 5) == -7.0f && ggml_get_f32_1d(branch[2], 5) == -7.0f, "the others not computed");
    /* ordered, then expanded: computed */
    struct ggml_cgraph * g2 = ggml_new_graph(ctx);
    ggml_build_forward_order(g2, branch[2]);
    tc_compute(ctx, g2, 1);
    CHECK(ggml_get_f32_1d(branch[2], 5) == -7.0f, "an ordered tensor is not computed");
    ggml_build_forward_expand(g2, branch[2]);
    tc_compute(ctx, g2, 1);
    CHECK(ggml_get_f32_1d(branch[2], 5) == 25.0f && ggml_graph_n_nodes(g2) == 1, "expanded later, it is");
    CHECK(!ggml_build_forward_select(g, outs, 3, 3) && strstr(ggml_last_error(), "idx"), "idx out of range: %s", ggml_last_error());
    ggml_free(ctx);
}

static void test_features(void) {
    ggml_backend_get_features_t get = (ggml_backend_get_features_t) ggml_backend_reg_get_proc_address(ggml_backend_cpu_reg(), "ggml_backend_get_features");
    if (!CHECK(get != NULL, "ggml_backend_get_features is known")) return;
    const struct ggml_backend_feature * f = get(ggml_backend_cpu_reg());
    bool simd = false, avx2 = false;
    int n = 0;
    for (; f[n].name && n < 32; n++) {
        simd |= strcmp(f[n].name, "SIMD") == 0 && strcmp(f[n].value, ggml_cpu_simd_name()) == 0;
        avx2 |= strcmp(f[n].name, "AVX2") == 0;
    }
    CHECK(n < 32 && simd && avx2 == (ggml_cpu_has_avx2() != 0), "features: %d, NULL-terminated, SIMD path and AVX2 as queried", n);
}

struct compare_log { int calls, stop_after, differ; int nodes[16]; };
static bool on_pair(int i, struct ggml_tensor * t1, struct ggml_tensor * t2, void * user) {
    struct compare_log * log = user;
    if (log->calls < 16) log->nodes[log->calls] = i;
    log->calls++;
    log->differ += ggml_nbytes(t1) != ggml_nbytes(t2) || t1 == t2 || memcmp(t1->data, t2->data, ggml_nbytes(t1)) != 0;
    return log->calls != log->stop_after;
}

static void test_graph_copy_and_compare(void) {
    ggml_backend_t b1 = ggml_backend_cpu_init(), b2 = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(b2, 1);
    struct ggml_context * ctx = tc_ctx(2);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 8), * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 5);
    tc_fill_uniform(a, -1, 1);
    tc_fill_uniform(w, -1, 1);
    struct ggml_tensor * p = ggml_mul_mat(ctx, w, a);                 /* [5, 8] */
    struct ggml_tensor * t = ggml_cont(ctx, ggml_transpose(ctx, p));  /* a view, then a copy */
    struct ggml_tensor * y = ggml_soft_max(ctx, ggml_scale(ctx, t, 0.5f));
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);
    tc_compute(ctx, g, 2);
    struct ggml_backend_graph_copy c = ggml_backend_graph_copy(b2, g);
    if (!CHECK(c.buffer && c.graph && ggml_graph_n_nodes(c.graph) == ggml_graph_n_nodes(g), "graph_copy: %s", ggml_last_error())) goto done;
    int same_meta = 0;
    for (int i = 0; i < ggml_graph_n_nodes(g); i++) {
        const struct ggml_tensor * o = ggml_graph_node(g, i), * k = ggml_graph_node(c.graph, i);
        same_meta += o != k && o->op == k->op && ggml_are_same_shape(o, k) && memcmp(o->nb, k->nb, sizeof o->nb) == 0 &&
                     strcmp(o->name, k->name) == 0 && k->buffer == c.buffer && (o->view_src == NULL) == (k->view_src == NULL);
    }
    CHECK(same_meta == ggml_graph_n_nodes(g), "the copy's nodes are new tensors like the originals, in its buffer (%d of %d)", same_meta, ggml_graph_n_nodes(g));
    struct ggml_tensor * cy = ggml_graph_node(c.graph, -1);
    CHECK(memcmp(cy->data, y->data, ggml_nbytes(y)) == 0, "the data held is copied");
    ggml_set_f32(cy, 0.0f);
    CHECK(ggml_backend_graph_compute(b2, c.graph) == GGML_STATUS_SUCCESS && memcmp(cy->data, y->data, ggml_nbytes(y)) == 0 && cy->data != y->data,
          "the copy computes the same result in its own memory");
    ggml_backend_graph_copy_free(c);

    struct compare_log log = {0};
    CHECK(ggml_backend_compare_graph_backend(b1, b2, g, on_pair, &log, NULL, 0), "compare: %s", ggml_last_error());
    /* nodes: mul_mat, transpose (a view: skipped), cont, scale, soft_max */
    CHECK(ggml_graph_n_nodes(g) == 5 && log.calls == 4 && log.nodes[0] == 0 && log.nodes[1] == 2 && log.nodes[3] == 4,
          "the callback sees each computed node (%d calls)", log.calls);
    CHECK(log.differ == 0, "both backends agree bit for bit on every node");
    struct compare_log stop = {.stop_after = 2};
    ggml_backend_compare_graph_backend(b1, b2, g, on_pair, &stop, NULL, 0);
    CHECK(stop.calls == 2, "returning false stops the walk");
    struct compare_log one = {0};
    const struct ggml_tensor * wanted[1] = {y};
    CHECK(ggml_backend_compare_graph_backend(b1, b2, g, on_pair, &one, wanted, 1) && one.calls == 1 && one.nodes[0] == 4 && one.differ == 0,
          "with test nodes: the whole graph, then those nodes");
done:
    ggml_free(ctx);
    ggml_backend_free(b1);
    ggml_backend_free(b2);
}

/* upstream's tensor queries, on layouts whose answers follow from the strides by hand */
static void test_tensor_queries(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2);     /* nb 4, 16, 48, 96 */
    struct ggml_tensor * b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 3, 2, 2);  /* nb 4, 16, 48, 96 */
    struct ggml_tensor * t = ggml_transpose(ctx, a);                              /* [3, 4, 2], nb 16, 4, 48 */
    struct ggml_tensor * u = ggml_view_3d(ctx, b, 2, 3, 4, 16, 48, 0);            /* rows of 2 in rows of 4 */
    struct ggml_tensor * w = ggml_view_3d(ctx, b, 4, 3, 2, 16, 96, 0);            /* planes 96 bytes apart */
    struct ggml_tensor * x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 4, 5, 1);  /* C, W, H, N: nb 4, 12, 48, 240 */
    struct ggml_tensor * p = ggml_permute(ctx, x, 2, 0, 1, 3);                    /* [W, H, C, N], nb 12, 48, 4, 240 */
    struct ggml_tensor * e = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 0, 3);
    struct ggml_tensor * q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 32, 2);      /* one block per row */
    if (!CHECK(a && b && t && u && w && x && p && e && q, "tensors: %s", ggml_last_error())) { ggml_free(ctx); return; }

    const struct { struct ggml_tensor * t; const char * name; bool c0, c1, c2, to1, to2, to3, alloc, rows; } lay[] = {
        {a, "a", 1, 1, 1, 1, 1, 1, 1, 1}, {t, "transpose", 0, 0, 0, 0, 0, 0, 1, 0},
        {u, "u", 0, 1, 1, 1, 0, 0, 0, 1}, {w, "w", 0, 0, 1, 1, 1, 0, 0, 1},
        {p, "permute", 0, 0, 0, 0, 0, 0, 1, 0}, {e, "empty", 1, 1, 1, 1, 1, 1, 1, 1}, {q, "Q4_0", 1, 1, 1, 1, 1, 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof lay / sizeof lay[0]; i++) {
        const struct ggml_tensor * v = lay[i].t;
        CHECK(ggml_is_contiguous_0(v) == lay[i].c0 && ggml_is_contiguous(v) == lay[i].c0 && ggml_is_contiguous_1(v) == lay[i].c1 &&
              ggml_is_contiguous_2(v) == lay[i].c2, "%s: is_contiguous_0/1/2 %d %d %d", lay[i].name, ggml_is_contiguous_0(v),
              ggml_is_contiguous_1(v), ggml_is_contiguous_2(v));
        CHECK(ggml_is_contiguous_to_1(v) == lay[i].to1 && ggml_is_contiguous_to_2(v) == lay[i].to2 && ggml_is_contiguous_to_3(v) == lay[i].to3,
              "%s: is_contiguous_to_1/2/3 %d %d %d", lay[i].name, ggml_is_contiguous_to_1(v), ggml_is_contiguous_to_2(v), ggml_is_contiguous_to_3(v));
        CHECK(ggml_is_contiguously_allocated(v) == lay[i].alloc && ggml_is_contiguous_rows(v) == lay[i].rows,
              "%s: contiguously_allocated %d, contiguous_rows %d", lay[i].name, ggml_is_contiguously_allocated(v), ggml_is_contiguous_rows(v));
    }
    CHECK(ggml_is_contiguous_channels(p) && !ggml_is_contiguous_channels(x) && !ggml_is_contiguous_channels(t), "is_contiguous_channels");
    CHECK(ggml_is_transposed(t) && !ggml_is_transposed(a) && !ggml_is_transposed(p) && ggml_is_permuted(p) && ggml_is_permuted(t) &&
          !ggml_is_permuted(a) && !ggml_is_permuted(u), "is_transposed / is_permuted");
    CHECK(ggml_is_view(t) && ggml_is_view(u) && !ggml_is_view(a) && !ggml_is_view(NULL), "is_view");
    CHECK(ggml_is_3d(a) && ggml_is_3d(w) && !ggml_is_3d(b) && ggml_is_empty(e) && !ggml_is_empty(a) && !ggml_is_empty(NULL), "is_3d / is_empty");
    CHECK(ggml_are_same_stride(a, ggml_dup_tensor(ctx, a)) && ggml_are_same_stride(a, b) && !ggml_are_same_stride(a, t) &&
          !ggml_are_same_stride(a, NULL), "are_same_stride");
    CHECK(!ggml_is_contiguous_1(NULL) && !ggml_is_contiguous_rows(NULL) && !ggml_is_contiguously_allocated(NULL), "NULL is nothing");

    /* 5 floats: 20 bytes, padded to 32; 24 floats: 96 already aligned */
    CHECK(ggml_nbytes_pad(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5)) == 32 && ggml_nbytes_pad(a) == 96 && ggml_nbytes_pad(NULL) == 0, "nbytes_pad");
    CHECK(ggml_type_sizef(GGML_TYPE_F32) == 4.0 && ggml_type_sizef(GGML_TYPE_F16) == 2.0 && ggml_type_sizef(GGML_TYPE_Q4_0) == 18.0 / 32 &&
          ggml_type_sizef(GGML_TYPE_Q8_0) == 34.0 / 32 && ggml_type_sizef(GGML_TYPE_Q6_K) == 210.0 / 256 && ggml_type_sizef(GGML_TYPE_COUNT) == 0.0,
          "type_sizef");

    int64_t c[4] = {-1, -1, -1, -1};
    ggml_unravel_index(a, 17, &c[0], &c[1], &c[2], &c[3]);   /* 17 = 1 + 4*1 + 12*1 */
    CHECK(c[0] == 1 && c[1] == 1 && c[2] == 1 && c[3] == 0, "unravel 17 in [4,3,2]: %lld %lld %lld %lld", (long long) c[0], (long long) c[1],
          (long long) c[2], (long long) c[3]);
    ggml_unravel_index(b, 47, &c[0], &c[1], &c[2], &c[3]);   /* 47 = 3 + 4*2 + 12*1 + 24*1 */
    CHECK(c[0] == 3 && c[1] == 2 && c[2] == 1 && c[3] == 1, "unravel 47 in [4,3,2,2]");
    ggml_unravel_index(b, 30, NULL, &c[1], NULL, &c[3]);     /* 30 = 2 + 4*1 + 12*0 + 24*1 */
    CHECK(c[1] == 1 && c[3] == 1, "unravel with NULL outputs");
    ggml_clear_error();
    ggml_unravel_index(a, 24, &c[0], &c[1], &c[2], &c[3]);
    CHECK(c[0] == 0 && c[1] == 0 && c[2] == 0 && c[3] == 0 && strstr(ggml_last_error(), "ggml_unravel_index"), "unravel out of range: zeros + message");
    ggml_clear_error();
    ggml_unravel_index(e, 0, &c[0], NULL, NULL, NULL);
    CHECK(c[0] == 0 && ggml_last_error()[0], "unravel in an empty tensor is refused");

    CHECK(strcmp(ggml_op_symbol(GGML_OP_ADD), "x+y") == 0 && strcmp(ggml_op_symbol(GGML_OP_MUL_MAT), "X*Y") == 0 &&
          strcmp(ggml_op_symbol(GGML_OP_SQRT), "\xe2\x88\x9ax") == 0 && strcmp(ggml_op_symbol(GGML_OP_SET), "y-\\>view(x)") == 0 &&
          strcmp(ggml_op_symbol(GGML_OP_NONE), "none") == 0 && strcmp(ggml_op_symbol(GGML_OP_GLU), "glu(x)") == 0 &&
          strcmp(ggml_op_symbol(GGML_OP_NORM_BACK), "norm_back(x)") == 0 && strcmp(ggml_op_symbol(GGML_OP_COUNT), "UNKNOWN") == 0,
          "op_symbol");
    int unnamed = 0;
    for (int op = 0; op < GGML_OP_COUNT; op++) unnamed += strcmp(ggml_op_symbol((enum ggml_op) op), "UNKNOWN") == 0;
    CHECK(unnamed == 0, "every op has a symbol (%d without)", unnamed);

    CHECK(ggml_ftype_to_ggml_type(GGML_FTYPE_ALL_F32) == GGML_TYPE_F32 && ggml_ftype_to_ggml_type(GGML_FTYPE_MOSTLY_Q4_K) == GGML_TYPE_Q4_K &&
          ggml_ftype_to_ggml_type(GGML_FTYPE_MOSTLY_BF16) == GGML_TYPE_BF16 && ggml_ftype_to_ggml_type(GGML_FTYPE_MOSTLY_IQ4_XS) == GGML_TYPE_IQ4_XS &&
          ggml_ftype_to_ggml_type(GGML_FTYPE_MOSTLY_Q8_0) == GGML_TYPE_Q8_0, "ftype_to_ggml_type");
    ggml_clear_error();
    CHECK(ggml_ftype_to_ggml_type(GGML_FTYPE_MOSTLY_Q4_1_SOME_F16) == GGML_TYPE_COUNT && ggml_last_error()[0] &&
          ggml_ftype_to_ggml_type(GGML_FTYPE_UNKNOWN) == GGML_TYPE_COUNT, "a mixed or unknown file type: GGML_TYPE_COUNT + message");

    ggml_guid g1 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, g2, g3;
    memcpy(g2, g1, sizeof g1);
    memcpy(g3, g1, sizeof g1);
    g3[15] = 0;
    CHECK(ggml_guid_matches(&g1, &g2) && !ggml_guid_matches(&g1, &g3) && !ggml_guid_matches(&g1, NULL), "guid_matches");
    ggml_free(ctx);
}

static int objects_seen[3], objects_lines;
static void object_log(enum ggml_log_level level, const char * text, void * user) {
    (void) level; (void) user;
    objects_lines++;
    for (int k = 0; k < 3; k++) {
        char key[32];
        snprintf(key, sizeof key, "type = %d,", k);
        if (strstr(text, "ggml_object:") && strstr(text, key)) objects_seen[k]++;
    }
}

static void test_context_extras(void) {
    static char mem[1 << 16];
    struct ggml_context * ctx = ggml_init((struct ggml_init_params) {sizeof mem, mem, false});
    if (!CHECK(ctx != NULL, "init on a caller's buffer")) return;
    CHECK(ggml_get_mem_buffer(ctx) == mem && ggml_get_mem_buffer(NULL) == NULL, "get_mem_buffer");
    CHECK(ggml_get_max_tensor_size(ctx) == 0, "no tensors: max size 0");
    struct ggml_tensor * t1 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);        /* 20 bytes */
    const size_t before = ggml_used_mem(ctx);
    void * buf = ggml_new_buffer(ctx, 100);
    CHECK(buf && ggml_used_mem(ctx) - before >= 100 && (uintptr_t) buf % GGML_MEM_ALIGN == 0, "new_buffer takes arena room, aligned");
    if (buf) memset(buf, 0xab, 100);
    struct ggml_tensor * t2 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);     /* 48 bytes */
    struct ggml_tensor * t3 = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 10);       /* 20 bytes */
    CHECK(t1 && t2 && t3 && ggml_get_first_tensor(ctx) == t1 && ggml_get_next_tensor(ctx, t1) == t2, "the buffer is not a tensor");
    CHECK(ggml_get_max_tensor_size(ctx) == 48 && ggml_get_max_tensor_size(NULL) == 0, "max tensor size %zu", ggml_get_max_tensor_size(ctx));
    ggml_clear_error();
    CHECK(ggml_new_buffer(ctx, sizeof mem) == NULL && strstr(ggml_last_error(), "not enough space") && ggml_new_buffer(NULL, 8) == NULL,
          "a buffer too big: NULL + message");

    objects_lines = 0;
    ggml_log_set(object_log, NULL);
    ggml_print_objects(ctx);
    ggml_log_set(NULL, NULL);
    CHECK(objects_seen[0] == 3 && objects_seen[1] == 0 && objects_seen[2] == 1 && objects_lines == 6,
          "print_objects: 3 tensors, 1 buffer, a header and an end line (%d %d %d, %d lines)", objects_seen[0], objects_seen[1], objects_seen[2],
          objects_lines);

    ggml_reset(ctx);
    ggml_reset(NULL);
    CHECK(ggml_used_mem(ctx) == 0 && ggml_get_first_tensor(ctx) == NULL && ggml_get_max_tensor_size(ctx) == 0, "reset empties the context");
    struct ggml_tensor * r = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);
    CHECK(r == t1 && ggml_get_next_tensor(ctx, r) == NULL && ggml_used_mem(ctx) == before, "the first tensor after a reset takes the first place");
    ggml_free(ctx);

    /* graph_dup and graph_nodes */
    ctx = tc_ctx(1);
    struct ggml_tensor * w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4), * y = ggml_sqr(ctx, w), * loss = ggml_sum(ctx, y);
    ggml_set_param(w);
    ggml_set_loss(loss);
    struct ggml_cgraph * plain = ggml_new_graph_custom(ctx, 16, false), * gg = ggml_new_graph_custom(ctx, 16, true);
    ggml_build_forward_expand(plain, loss);
    ggml_build_forward_expand(gg, loss);
    CHECK(ggml_build_backward_expand(ctx, gg, NULL) == GGML_STATUS_SUCCESS, "backward: %s", ggml_last_error());
    struct ggml_cgraph * d1 = ggml_graph_dup(ctx, plain, false), * d2 = ggml_graph_dup(ctx, plain, true), * d3 = ggml_graph_dup(ctx, gg, false);
    if (CHECK(d1 && d2 && d3, "graph_dup: %s", ggml_last_error())) {
        CHECK(ggml_graph_size(d1) == 16 && ggml_graph_n_nodes(d1) == 3 && ggml_graph_nodes(d1)[0] == w && ggml_graph_nodes(d1)[1] == y &&
              ggml_graph_nodes(d1)[2] == loss &&
              ggml_graph_nodes(d1) != ggml_graph_nodes(plain), "dup: same size and nodes (a parameter is a node), its own node array (%d, %d)",
              ggml_graph_size(d1), ggml_graph_n_nodes(d1));
        ggml_clear_error();
        ggml_graph_reset(d1);
        const bool d1_refused = ggml_last_error()[0] != 0;
        ggml_clear_error();
        ggml_graph_reset(d2);
        CHECK(d1_refused && ggml_last_error()[0] == 0, "force_grads gives gradient tables (graph_reset refuses only the graph without)");
        CHECK(ggml_graph_get_grad(d3, w) != NULL && ggml_graph_get_grad(d3, w) == ggml_graph_get_grad(gg, w) &&
              ggml_graph_n_nodes(d3) == ggml_graph_n_nodes(gg), "dup of a graph with gradients keeps them");
    }
    CHECK(ggml_graph_dup(ctx, NULL, false) == NULL && ggml_graph_nodes(NULL) == NULL, "NULL graph");
    ggml_free(ctx);
}

static void test_threadpool_params(void) {
    struct ggml_threadpool_params p = ggml_threadpool_params_default(6), q;
    memset(&q, 0x5a, sizeof q);
    ggml_threadpool_params_init(&q, 6);
    int mask = 0;
    for (int i = 0; i < GGML_MAX_N_THREADS; i++) mask += p.cpumask[i];
    CHECK(p.n_threads == 6 && p.prio == GGML_SCHED_PRIO_NORMAL && p.poll == 50 && !p.strict_cpu && !p.paused && mask == 0,
          "threadpool_params_default: 6 threads, normal priority, poll 50, no mask");
    CHECK(ggml_threadpool_params_match(&p, &q) && q.poll == 50 && !q.paused, "init fills every field as default does");
    q.paused = true;
    CHECK(ggml_threadpool_params_match(&p, &q), "paused is not compared");
    q.cpumask[3] = true;
    CHECK(!ggml_threadpool_params_match(&p, &q), "the mask is");
    q.cpumask[3] = false;
    q.poll = 0;
    CHECK(!ggml_threadpool_params_match(&p, &q) && !ggml_threadpool_params_match(&p, NULL), "so is polling; NULL matches nothing");
    ggml_threadpool_params_init(NULL, 2);
}

static char abort_message[256];
static jmp_buf abort_jump;
static void on_abort(const char * message) {
    snprintf(abort_message, sizeof abort_message, "%s", message);
    longjmp(abort_jump, 1);
}

static void test_abort_callback(void) {
    CHECK(ggml_set_abort_callback(on_abort) == NULL && ggml_set_abort_callback(on_abort) == on_abort, "set_abort_callback returns the previous one");
    volatile int line = 0;
    if (setjmp(abort_jump) == 0) {
        line = __LINE__; GGML_ABORT("value %d", 42);
    }
    char want[64];
    snprintf(want, sizeof want, "test_upstream_api.c:%d: value 42", line);
    const size_t n = strlen(abort_message), m = strlen(want);
    CHECK(n >= m && strcmp(abort_message + n - m, want) == 0, "ggml_abort hands \"%s\" to the callback", abort_message);
    CHECK(ggml_set_abort_callback(NULL) == on_abort, "NULL restores printing");
}

int main(void) {
    test_argsort_top_k();
    tc_seed(3);
    test_registry();
    test_buffers();
    test_cplan();
    test_features_and_time();
    test_i32_access();
    test_small_int_types();
    test_validate_and_dot();
    test_graph_editing();
    test_features();
    test_forward_select();
    test_graph_copy_and_compare();
    test_tensor_queries();
    test_context_extras();
    test_threadpool_params();
    test_abort_callback();
    return tc_finish("upstream_api");
}

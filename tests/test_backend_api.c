/* test_backend_api.c -- the rest of upstream's backend and CPU API: strided
 * and _async tensor transfers, graph plans, events, GUIDs, the fixed
 * registry, the scheduler's extras (buffer types, splits, per-node backends,
 * reserve sizes, the eval callback), the meta backend's refusal, caller-owned
 * thread pools, the CPU backend's abort callback, NUMA and the row
 * converters. Expected values are worked out by hand below each check. */
#include "common/test_common.h"

#include "ggml-alloc.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* expr runs with no earlier message; true when it left one containing needle */
#define REFUSED(expr, needle) (ggml_clear_error(), (void) (expr), strstr(ggml_last_error(), (needle)) != NULL)

static float f32_at(const struct ggml_tensor * t, int i0, int i1) { return *(const float *) ((const char *) t->data + i0 * t->nb[0] + i1 * t->nb[1]); }

/* set_2d / get_2d: blocks of a 4x6 F32 tensor (rows of 16 bytes) */
static void test_2d(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 6);
    memset(t->data, 0, ggml_nbytes(t));
    float src[15];
    for (int i = 0; i < 15; i++) src[i] = (float) (i + 1);
    /* 3 blocks of 2 floats: from src rows of 5 floats (20 bytes) to tensor
     * rows 1, 3, 5 at column 1 (offset 16 + 4, every 32 bytes) */
    ggml_clear_error();
    ggml_backend_tensor_set_2d(t, src, 20, 8, 3, 32, 20);
    bool ok = ggml_last_error()[0] == '\0';
    for (int r = 0; r < 6; r++) {
        for (int c = 0; c < 4; c++) {
            const bool in = r % 2 == 1 && (c == 1 || c == 2);
            const float want = in ? (float) (5 * (r / 2) + (c - 1) + 1) : 0.0f;
            ok &= f32_at(t, c, r) == want;
        }
    }
    CHECK(ok, "set_2d wrote rows 1,3,5 columns 1..2 from src rows of 5 floats, nothing else");
    /* back into blocks 3 floats apart: {1,2,x, 6,7,x, 11,12,x} */
    float back[9];
    for (int i = 0; i < 9; i++) back[i] = -1.0f;
    ggml_backend_tensor_get_2d(t, back, 20, 8, 3, 32, 12);
    const float want_back[9] = {1, 2, -1, 6, 7, -1, 11, 12, -1};
    CHECK(memcmp(back, want_back, sizeof back) == 0, "get_2d read the blocks back: %g %g %g %g %g %g", back[0], back[1], back[3], back[4], back[6], back[7]);

    /* refusals: nothing copied, a message */
    float before[24];
    memcpy(before, t->data, sizeof before);
    CHECK(REFUSED(ggml_backend_tensor_set_2d(t, src, 20, 8, 4, 32, 20), "out of bounds"), "a 4th block at row 7 of 6 is refused");
    CHECK(memcmp(before, t->data, sizeof before) == 0, "and no block of it was written");
    CHECK(REFUSED(ggml_backend_tensor_set_2d(t, src, 96, 4, 1, 0, 0), "out of bounds"), "offset past the end");
    CHECK(REFUSED(ggml_backend_tensor_set_2d(t, src, 0, 4, 3, SIZE_MAX / 2, 0), "out of bounds"), "a last block at SIZE_MAX - 1");
    CHECK(REFUSED(ggml_backend_tensor_set_2d(t, src, 0, 4, 4, SIZE_MAX / 2, 0), "overflow"), "strides that overflow");
    CHECK(REFUSED(ggml_backend_tensor_get_2d(t, NULL, 0, 4, 2, 16, 4), "NULL"), "NULL data");
    CHECK(REFUSED(ggml_backend_tensor_get_2d(NULL, back, 0, 4, 2, 16, 4), "NULL"), "NULL tensor");
    CHECK(REFUSED(ggml_backend_tensor_set_2d(t, src, 0, 4, 0, 16, 4), "") && ggml_last_error()[0] == '\0', "0 copies: nothing to do");
    struct ggml_tensor * tr = ggml_transpose(ctx, t);
    CHECK(REFUSED(ggml_backend_tensor_get_2d(tr, back, 0, 4, 1, 0, 0), "not contiguous"), "a transposed view is refused");
    struct ggml_init_params np = {1 << 16, NULL, true};
    struct ggml_context * nctx = ggml_init(np);
    struct ggml_tensor * nodata = ggml_new_tensor_1d(nctx, GGML_TYPE_F32, 4);
    CHECK(REFUSED(ggml_backend_tensor_set_2d(nodata, src, 0, 4, 1, 0, 0), "no memory"), "a tensor without memory");

    /* _async: the same copies at once; a NULL backend is refused */
    ggml_backend_t be = ggml_backend_cpu_init();
    const float v[4] = {0.5f, -2.0f, 3.25f, 8.0f};
    ggml_backend_tensor_set_async(be, t, v, 16, sizeof v);
    float w[4] = {0};
    ggml_backend_tensor_get_async(be, t, w, 16, sizeof w);
    ggml_backend_synchronize(be);
    CHECK(memcmp(v, w, sizeof v) == 0 && f32_at(t, 2, 1) == 3.25f, "set_async / get_async at row 1");
    CHECK(REFUSED(ggml_backend_tensor_set_async(NULL, t, v, 0, sizeof v), "backend is NULL") && f32_at(t, 0, 0) == 0.0f, "set_async without a backend");
    ggml_backend_tensor_set_2d_async(be, t, v, 0, 4, 4, 16, 4);  /* column 0 of rows 0..3 = v */
    float col[4] = {0};
    ggml_backend_tensor_get_2d_async(be, t, col, 0, 4, 4, 16, 4);
    CHECK(memcmp(col, v, sizeof v) == 0 && f32_at(t, 0, 3) == 8.0f, "2d_async: column 0 of rows 0..3");
    CHECK(REFUSED(ggml_backend_tensor_get_2d_async(NULL, t, col, 0, 4, 1, 0, 0), "backend is NULL"), "get_2d_async without a backend");
    struct ggml_tensor * u = ggml_dup_tensor(ctx, t);
    ggml_backend_tensor_copy_async(be, be, t, u);
    CHECK(memcmp(u->data, t->data, ggml_nbytes(t)) == 0, "copy_async copies");
    CHECK(REFUSED(ggml_backend_tensor_copy_async(be, NULL, t, u), "backend is NULL"), "copy_async without a destination backend");
    ggml_backend_free(be);
    ggml_free(nctx);
    ggml_free(ctx);
}

/* y = a*b + a (element-wise), 8 elements */
static struct ggml_cgraph * small_graph(struct ggml_context * ctx, struct ggml_tensor ** out) {
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8), * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    for (int i = 0; i < 8; i++) {
        ggml_set_f32_1d(a, i, (float) i);
        ggml_set_f32_1d(b, i, 0.5f * (float) i - 1.0f);
    }
    *out = ggml_add(ctx, ggml_mul(ctx, a, b), a);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, *out);
    return g;
}

static void test_plans_events_registry(void) {
    struct ggml_context * ctx = tc_ctx(1);
    struct ggml_tensor * y;
    struct ggml_cgraph * g = small_graph(ctx, &y);
    ggml_backend_t be = ggml_backend_cpu_init(), other = ggml_backend_cpu_init();
    ggml_backend_graph_plan_t plan = ggml_backend_graph_plan_create(be, g);
    CHECK(plan && ggml_backend_graph_plan_compute(be, plan) == GGML_STATUS_SUCCESS, "a plan computes");
    bool ok = true;
    for (int i = 0; i < 8; i++) ok &= ggml_get_f32_1d(y, i) == (float) i * (0.5f * (float) i - 1.0f) + (float) i;  /* i*(i/2-1)+i = i*i/2 */
    CHECK(ok && ggml_get_f32_1d(y, 4) == 8.0f, "plan result i*i/2 (y[4] = %g)", ggml_get_f32_1d(y, 4));
    CHECK(REFUSED(ggml_backend_graph_plan_compute(other, plan), "another backend"), "a plan runs on its own backend only");
    CHECK(ggml_backend_graph_plan_create(NULL, g) == NULL && ggml_backend_graph_plan_compute(be, NULL) == GGML_STATUS_FAILED, "NULL plan arguments");
    ggml_backend_graph_plan_free(be, plan);

    /* events: none on the CPU device, as upstream's; every call says so, none crashes */
    ggml_backend_dev_t dev = ggml_backend_get_device(be);
    ggml_backend_event_t ev = ggml_backend_event_new(dev);
    CHECK(ev == NULL && strstr(ggml_last_error(), "no events"), "event_new on the CPU device: NULL with the reason");
    CHECK(REFUSED(ggml_backend_event_new(NULL), "device is NULL") && REFUSED(ggml_backend_event_record(ev, be), "no event") &&
          REFUSED(ggml_backend_event_synchronize(ev), "no event") && REFUSED(ggml_backend_event_wait(other, ev), "no event"),
          "record, synchronize and wait refuse, with a message");
    ggml_backend_event_free(ev);  /* NULL: nothing to do */
    struct ggml_backend_dev_props props;
    ggml_backend_dev_get_props(dev, &props);
    CHECK(!props.caps.events && props.caps.buffer_from_host_ptr && !props.caps.async, "caps: host pointers, no events, no async");

    /* GUIDs: one per backend kind */
    CHECK(ggml_backend_guid(be) && ggml_guid_matches(ggml_backend_guid(be), ggml_backend_guid(other)) && ggml_backend_guid(NULL) == NULL, "the CPU GUID");

    /* the fixed registry */
    CHECK(REFUSED(ggml_backend_register(ggml_backend_cpu_reg()), "") && ggml_last_error()[0] == '\0' && ggml_backend_reg_count() == 1,
          "registering the CPU backend again does nothing");
    CHECK(REFUSED(ggml_backend_register(NULL), "only the built-in") && REFUSED(ggml_backend_device_register(NULL), "only the built-in"), "others are refused");
    CHECK(REFUSED(ggml_backend_device_register(dev), "") && ggml_last_error()[0] == '\0' && ggml_backend_dev_count() == 1, "the CPU device again: nothing");
    void * mem = aligned_alloc(64, 256);
    ggml_backend_buffer_t hb = ggml_backend_dev_buffer_from_host_ptr(dev, mem, 256, 256);
    CHECK(hb && ggml_backend_buffer_get_base(hb) == mem && ggml_backend_buffer_get_size(hb) == 256 && ggml_backend_buffer_is_host(hb), "a buffer over host memory");
    ggml_backend_buffer_free(hb);  /* leaves mem alone */
    memset(mem, 1, 256);
    CHECK(REFUSED(ggml_backend_dev_buffer_from_host_ptr(NULL, mem, 256, 0), "not the CPU device"), "NULL device");
    CHECK(REFUSED(ggml_backend_dev_buffer_from_host_ptr(dev, (char *) mem + 4, 64, 0), "aligned"), "a misaligned pointer");
    free(mem);

    /* the meta backend */
    CHECK(strcmp(ggml_backend_meta_split_axis_name(GGML_BACKEND_SPLIT_AXIS_2), "2") == 0 &&
          strcmp(ggml_backend_meta_split_axis_name(GGML_BACKEND_SPLIT_AXIS_MIRRORED), "MIRRORED") == 0 &&
          strcmp(ggml_backend_meta_split_axis_name(GGML_BACKEND_SPLIT_AXIS_UNKNOWN), "UNKNOWN") == 0, "split axis names");
    CHECK(REFUSED(ggml_backend_meta_split_axis_name((enum ggml_backend_meta_split_axis) 5), "no split axis 5"), "axis 5 has no name");
    ggml_backend_dev_t devs[2] = {dev, dev};
    CHECK(REFUSED(ggml_backend_meta_device(devs, 2, NULL, NULL), "one device"), "no meta device");

    ggml_backend_free(other);
    ggml_backend_free(be);
    ggml_free(ctx);
}

struct observed {
    int asks, shown, stop_at;
    float seen;  /* y's first element when shown */
    struct ggml_tensor * watch;
};

static bool observe(struct ggml_tensor * t, bool ask, void * user) {
    struct observed * o = user;
    if (ask) { o->asks++; return t == o->watch; }
    o->shown++;
    o->seen = ((const float *) t->data)[1];
    return o->stop_at < 0;
}

static void test_sched(void) {
    ggml_backend_t b[2] = {ggml_backend_cpu_init(), ggml_backend_cpu_init()}, stranger = ggml_backend_cpu_init();
    ggml_backend_sched_t s = ggml_backend_sched_new(b, NULL, 2, 64, false, true);
    CHECK(ggml_backend_sched_get_buffer_type(s, b[1]) == ggml_backend_cpu_buffer_type(), "buffer type of a backend");
    CHECK(REFUSED(ggml_backend_sched_get_buffer_type(s, stranger) == NULL, "not one of the scheduler's"), "a foreign backend has none");
    CHECK(ggml_backend_sched_get_n_copies(s) == 1 && ggml_backend_sched_get_n_splits(s) == 0, "one copy, no split yet");

    /* a no_alloc graph: m = a*b, y = m + a (a, b inputs with data set after allocation) */
    struct ggml_init_params ip = {ggml_tensor_overhead() * 16 + ggml_graph_overhead(), NULL, true};
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4), * bb = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_set_input(a);
    ggml_set_input(bb);
    struct ggml_tensor * m = ggml_mul(ctx, a, bb), * y = ggml_add(ctx, m, a);
    ggml_set_output(m);
    ggml_set_output(y);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);

    size_t sizes[2] = {7, 7};
    ggml_backend_sched_reserve_size(s, g, sizes);
    /* a, b, m, y: 16 bytes each, each rounded to one 64-byte unit; nothing shared (inputs and outputs) */
    CHECK(sizes[0] >= 4 * 16 && sizes[0] <= 4 * 64 && sizes[1] == 0, "reserve sizes %zu, %zu", sizes[0], sizes[1]);
    CHECK(a->data == NULL, "reserve_size gives no memory");

    ggml_backend_sched_set_tensor_backend(s, y, b[1]);
    CHECK(ggml_backend_sched_get_tensor_backend(s, y) == b[1] && ggml_backend_sched_get_tensor_backend(s, m) == NULL, "the asked backend, none otherwise");
    CHECK(REFUSED(ggml_backend_sched_set_tensor_backend(s, y, stranger), "not one of") && ggml_backend_sched_get_tensor_backend(s, y) == b[1],
          "a foreign backend is refused");
    ggml_backend_sched_split_graph(s, g);
    CHECK(ggml_backend_sched_get_n_splits(s) == 1, "one split");

    CHECK(ggml_backend_sched_alloc_graph(s, g), "alloc");
    const float av[4] = {1, 2, 3, 4}, bv[4] = {2, -1, 0.5f, 3};
    ggml_backend_tensor_set(a, av, 0, sizeof av);
    ggml_backend_tensor_set(bb, bv, 0, sizeof bv);
    /* the callback wants to see m: asked once per node, m shown once; y = a*b + a */
    struct observed o = {0, 0, -1, 0, m};
    ggml_backend_sched_set_eval_callback(s, observe, &o);
    CHECK(ggml_backend_sched_graph_compute_async(s, g) == GGML_STATUS_SUCCESS, "compute with a callback");
    ggml_backend_sched_synchronize(s);
    float yv[4];
    ggml_backend_tensor_get(y, yv, 0, sizeof yv);
    CHECK(o.asks == ggml_graph_n_nodes(g) && o.shown == 1 && o.seen == -2.0f, "asked %d times (of %d nodes), shown %d, m[1] = %g (2*-1)", o.asks, ggml_graph_n_nodes(g), o.shown, o.seen);
    CHECK(yv[0] == 3.0f && yv[1] == 0.0f && yv[2] == 4.5f && yv[3] == 16.0f, "y = a*b + a");
    /* stopping at m: y is not computed (cleared first) */
    const float zero[4] = {0};
    ggml_backend_tensor_set(y, zero, 0, sizeof zero);
    o = (struct observed) {0, 0, 1, 0, m};
    CHECK(ggml_backend_sched_graph_compute(s, g) == GGML_STATUS_SUCCESS, "a stopped compute is a success");
    ggml_backend_tensor_get(y, yv, 0, sizeof yv);
    CHECK(o.shown == 1 && yv[3] == 0.0f, "nothing after m ran (y[3] = %g)", yv[3]);
    ggml_backend_sched_set_eval_callback(s, NULL, NULL);
    CHECK(ggml_backend_sched_graph_compute(s, g) == GGML_STATUS_SUCCESS && ggml_get_f32_1d(y, 3) == 16.0f, "without the callback again");

    ggml_backend_sched_reset(s);
    CHECK(ggml_backend_sched_get_tensor_backend(s, y) == NULL, "reset forgets the asked backends");
    CHECK(REFUSED(ggml_backend_sched_reserve_size(s, g, NULL), "NULL") && REFUSED(ggml_backend_sched_split_graph(NULL, g), "NULL"), "NULL arguments");
    ggml_backend_sched_free(s);
    ggml_free(ctx);
    ggml_backend_free(stranger);
    ggml_backend_free(b[1]);
    ggml_backend_free(b[0]);
}

static bool always_abort(void * data) {
    (*(int *) data)++;
    return true;
}

/* a 64x48 * 64x40 product: enough rows for every thread */
static void test_threadpool(void) {
    struct ggml_context * ctx = tc_ctx(4);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 48), * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 40);
    for (int i = 0; i < 64 * 48; i++) ((float *) a->data)[i] = (float) tc_uniform(-1, 1);
    for (int i = 0; i < 64 * 40; i++) ((float *) b->data)[i] = (float) tc_uniform(-1, 1);
    struct ggml_tensor * p = ggml_mul_mat(ctx, a, b);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, p);
    CHECK(ggml_graph_compute_with_ctx(ctx, g, 1) == GGML_STATUS_SUCCESS, "reference compute, 1 thread");
    const size_t n = ggml_nbytes(p);
    float * ref = malloc(n);
    memcpy(ref, p->data, n);

    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(3);
    struct ggml_threadpool * tp = ggml_threadpool_new(&tpp);
    CHECK(tp && ggml_threadpool_get_n_threads(tp) == 3, "a pool of 3 threads");
    ggml_threadpool_pause(tp);
    ggml_threadpool_resume(tp);
    struct ggml_cplan plan = ggml_graph_plan(g, 3, tp);
    void * work = plan.work_size ? malloc(plan.work_size) : NULL;
    plan.work_data = work;
    memset(p->data, 0, n);
    CHECK(ggml_graph_compute(g, &plan) == GGML_STATUS_SUCCESS && memcmp(ref, p->data, n) == 0, "the plan on the pool: the same bits");
    free(work);

    ggml_backend_t be = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(be, 8);
    ggml_backend_cpu_set_threadpool(be, tp);
    ggml_backend_cpu_set_use_ref(be, true);
    memset(p->data, 0, n);
    CHECK(ggml_backend_graph_compute(be, g) == GGML_STATUS_SUCCESS && memcmp(ref, p->data, n) == 0, "the backend on the pool: the same bits");
    int asked = 0;
    ggml_backend_cpu_set_abort_callback(be, always_abort, &asked);
    memset(p->data, 0, n);
    CHECK(ggml_backend_graph_compute(be, g) == GGML_STATUS_ABORTED && asked == 1 && ((float *) p->data)[0] == 0.0f, "aborted before computing");
    ggml_backend_cpu_set_abort_callback(be, NULL, NULL);
    ggml_backend_cpu_set_threadpool(be, NULL);
    CHECK(ggml_backend_graph_compute(be, g) == GGML_STATUS_SUCCESS && memcmp(ref, p->data, n) == 0, "its own workers again");
    ggml_backend_free(be);
    ggml_threadpool_free(tp);

    tpp.n_threads = 0;
    CHECK(REFUSED(ggml_threadpool_new(&tpp), "n_threads 0") && REFUSED(ggml_threadpool_new(NULL), "NULL"), "bad pool parameters");
    CHECK(REFUSED(ggml_threadpool_get_n_threads(NULL), "NULL") && REFUSED(ggml_backend_cpu_set_threadpool(NULL, NULL), "NULL") &&
          REFUSED(ggml_backend_cpu_set_abort_callback(NULL, NULL, NULL), "NULL") && REFUSED(ggml_backend_cpu_set_use_ref(NULL, false), "NULL"),
          "NULL pool / backend");
    free(ref);
    ggml_free(ctx);
}

static void test_numa_and_converters(void) {
    ggml_numa_init(GGML_NUMA_STRATEGY_DISABLED);
    /* more than one node when Linux lists node1 */
    CHECK(ggml_is_numa() == (access("/sys/devices/system/node/node1", F_OK) == 0), "is_numa");
    CHECK(REFUSED(ggml_numa_init(GGML_NUMA_STRATEGY_COUNT), "no NUMA strategy"), "a strategy out of range");

    float x[11] = {0.0f, -0.0f, 0.1f, 1.0f / 3.0f, 65504.0f, 70000.0f, 1e-8f, -2.5f, INFINITY, -INFINITY, NAN};
    ggml_fp16_t h[11];
    ggml_bf16_t bf[11];
    float back[11];
    bool ok = true;
    ggml_cpu_fp32_to_fp16(x, h, 11);
    for (int i = 0; i < 11; i++) ok &= h[i] == ggml_fp32_to_fp16(x[i]);
    CHECK(ok, "fp32_to_fp16 = ggml_fp32_to_fp16 per element");
    ggml_cpu_fp16_to_fp32(h, back, 11);
    ok = true;
    for (int i = 0; i < 11; i++) { float w = ggml_fp16_to_fp32(h[i]); ok &= memcmp(&w, &back[i], 4) == 0; }
    CHECK(ok && back[7] == -2.5f && back[4] == 65504.0f, "fp16_to_fp32 = ggml_fp16_to_fp32 per element");
    ggml_cpu_fp32_to_bf16(x, bf, 11);
    ggml_cpu_bf16_to_fp32(bf, back, 11);
    ok = true;
    for (int i = 0; i < 11; i++) {
        ggml_bf16_t e = ggml_fp32_to_bf16(x[i]);
        float w = ggml_bf16_to_fp32(e);
        ok &= bf[i].bits == e.bits && memcmp(&w, &back[i], 4) == 0;
    }
    CHECK(ok && back[7] == -2.5f, "bf16 both ways = the per-element conversions");
    ggml_cpu_fp32_to_fp32(x, back, 11);
    CHECK(memcmp(x, back, sizeof x) == 0, "fp32_to_fp32 copies bits");
    const float xi[8] = {1.9f, -1.9f, 3e9f, -3e9f, NAN, 2147483520.0f, -2147483648.0f, 0.5f};
    const int32_t want[8] = {1, -1, INT32_MAX, INT32_MIN, 0, 2147483520, INT32_MIN, 0};
    int32_t yi[8];
    ggml_cpu_fp32_to_i32(xi, yi, 8);
    CHECK(memcmp(yi, want, sizeof want) == 0, "fp32_to_i32: %d %d %d %d %d %d %d %d", yi[0], yi[1], yi[2], yi[3], yi[4], yi[5], yi[6], yi[7]);
    CHECK(REFUSED(ggml_cpu_fp32_to_fp16(NULL, h, 3), "NULL") && REFUSED(ggml_cpu_fp32_to_i32(xi, NULL, 1), "NULL"), "NULL rows");
    CHECK(REFUSED(ggml_cpu_bf16_to_fp32(NULL, NULL, 0), "") && ggml_last_error()[0] == '\0', "0 elements: nothing");
}

int main(void) {
    tc_seed(21);
    test_2d();
    test_plans_events_registry();
    test_sched();
    test_threadpool();
    test_numa_and_converters();
    return tc_finish("backend_api");
}

/* test_alloc_fail.c -- every allocation the library makes can fail.
 *
 * The workload: ops (matmul, softmax, norm, flash attention) computed on 2
 * threads, plain autodiff with AdamW steps, two ggml_opt epochs through a
 * CPU scheduler, and a GGUF file built, written, loaded from the file and
 * from a buffer. One clean run counts its N allocations (src/alloc.c's hook);
 * then for every k < N the run is repeated with allocation k failing. Each
 * must either fail with a message (ggml_last_error) or, where the library
 * can do without that memory, succeed with bitwise the clean run's results;
 * and a clean run right after must succeed with those results again. Each
 * run is on a fresh thread, so that the per-thread compute pool is created
 * (and its creation fails) every time. Leaks show under ASan's leak checker
 * (scripts/test-all.sh runs every test under it). */
#include "common/test_common.h"
#include "common/workload.h"
#include "gguf.h"
#include "core/internal.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Huge requests under AddressSanitizer: return NULL (as libc does) instead of aborting. */
const char * __asan_default_options(void) __attribute__((visibility("default"), used));
const char * __asan_default_options(void) { return "allocator_may_return_null=1"; }

struct outcome {
    bool ok;
    float ops[16], autodiff[TW_N_WEIGHTS], opt[TW_N_OPT_PARAMS], gguf[6];
    char error[256];
};

static char gguf_path[64];

/* softmax(x W) normalised, and flash attention on it: four ops on 2 threads */
static bool run_ops(struct outcome * o) {
    struct ggml_init_params ip = {(size_t) 1 << 20, NULL, false};
    struct ggml_context * ctx = ggml_init(ip);
    if (!ctx) return false;
    bool ok = false;
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 4), * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 8);
    if (x && w) {
        for (int i = 0; i < 32; i++) ggml_set_f32_1d(x, i, (float) (i % 7) * 0.25f - 0.5f);
        for (int i = 0; i < 64; i++) ggml_set_f32_1d(w, i, (float) (i % 5) * 0.1f - 0.2f);
        struct ggml_tensor * h = ggml_norm(ctx, ggml_soft_max(ctx, ggml_mul_mat(ctx, w, x)), 1e-5f);
        struct ggml_tensor * q = h ? ggml_reshape_4d(ctx, h, 8, 4, 1, 1) : NULL;
        struct ggml_tensor * a = q ? ggml_flash_attn_ext(ctx, q, q, q, NULL, 0.35f, 0.0f, 0.0f) : NULL;
        struct ggml_cgraph * g = a ? ggml_new_graph(ctx) : NULL;
        if (g && ggml_build_forward_expand_status(g, a) == GGML_STATUS_SUCCESS && ggml_graph_compute_with_ctx(ctx, g, 2) == GGML_STATUS_SUCCESS) {
            for (int i = 0; i < 16; i++) o->ops[i] = ggml_get_f32_1d(a, i);
            ok = true;
        }
    }
    ggml_free(ctx);
    return ok;
}

/* a GGUF with keys of each kind and a tensor: written, then read from the file and from memory */
static bool run_gguf(struct outcome * o) {
    bool ok = false;
    struct ggml_init_params ip = {(size_t) 1 << 16, NULL, false};
    struct ggml_context * ctx = ggml_init(ip), * loaded_ctx = NULL;
    struct gguf_context * g = gguf_init_empty(), * from_file = NULL, * from_buf = NULL;
    unsigned char * meta = NULL;
    struct ggml_tensor * t = ctx ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 2) : NULL;
    if (!g || !t) goto done;
    for (int i = 0; i < 6; i++) ggml_set_f32_1d(t, i, (float) i + 0.5f);
    ggml_set_name(t, "weights");
    const char * strs[] = {"a", "bc", "def"};
    const int32_t ints[] = {1, 2, 3, 4};
    gguf_set_val_str(g, "general.name", "alloc-fail");
    gguf_set_val_u32(g, "general.alignment", 64);
    gguf_set_arr_str(g, "tokens", strs, 3);
    gguf_set_arr_data(g, "ints", GGUF_TYPE_INT32, ints, 4);
    gguf_add_tensor(g, t);
    /* the setters return nothing: a failed one shows as a missing key or tensor */
    if (gguf_get_n_kv(g) != 4 || gguf_get_n_tensors(g) != 1) goto done;
    if (!gguf_write_to_file(g, gguf_path, false)) goto done;
    const size_t meta_size = gguf_get_meta_size(g);
    from_file = gguf_init_from_file(gguf_path, (struct gguf_init_params) {false, &loaded_ctx});
    if (!from_file) goto done;
    struct ggml_tensor * back = ggml_get_tensor(loaded_ctx, "weights");
    /* the whole file in memory: metadata, then the tensor padded to the alignment */
    meta = calloc(meta_size + 64, 1);
    if (!back || !meta) goto done;
    gguf_get_meta_data(g, meta);
    memcpy(meta + meta_size, t->data, ggml_nbytes(t));
    from_buf = gguf_init_from_buffer(meta, meta_size + 64, (struct gguf_init_params) {true, NULL});
    if (!from_buf || gguf_get_n_kv(from_buf) != 4) goto done;
    for (int i = 0; i < 6; i++) o->gguf[i] = ggml_get_f32_1d(back, i);
    ok = true;
done:
    free(meta);
    gguf_free(from_buf);
    gguf_free(from_file);
    ggml_free(loaded_ctx);
    gguf_free(g);
    ggml_free(ctx);
    return ok;
}

static void * run_workload(void * arg) {
    struct outcome * o = arg;
    struct tw_opt_config cfg = tw_opt_default();
    cfg.epochs = 2;
    cfg.opt_period = 2;
    ggml_clear_error();
    o->ok = run_ops(o) && tw_train_autodiff(7, 2, 2, o->autodiff) == GGML_STATUS_SUCCESS &&
            tw_train_opt(9, 2, &cfg, o->opt, NULL) == GGML_STATUS_SUCCESS && run_gguf(o);
    snprintf(o->error, sizeof o->error, "%s", ggml_last_error());  /* the message is per thread */
    return NULL;
}

/* The workload on a new thread, with allocation k failing (k < 0: none). */
static void run(long k, struct outcome * o) {
    memset(o, 0, sizeof *o);
    ggmlr_test_fail_alloc_after(k < 0 ? LONG_MAX : k);
    pthread_t th;
    if (pthread_create(&th, NULL, run_workload, o) == 0) pthread_join(th, NULL);
    else run_workload(o);
    ggmlr_test_fail_alloc_after(-1);
}

static bool same_results(const struct outcome * a, const struct outcome * b) {
    return memcmp(a->ops, b->ops, sizeof a->ops) == 0 && memcmp(a->autodiff, b->autodiff, sizeof a->autodiff) == 0 &&
           memcmp(a->opt, b->opt, sizeof a->opt) == 0 && memcmp(a->gguf, b->gguf, sizeof a->gguf) == 0;
}

int main(void) {
    /* tmpfs where there is one: the write syncs to disk, 260 times */
    snprintf(gguf_path, sizeof gguf_path, "%s/test_alloc_fail.%ld.gguf", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (long) getpid());
    struct outcome clean, o, after;
    run(-1, &clean);
    const long n_allocs = ggmlr_test_alloc_count();
    if (!CHECK(clean.ok, "the workload runs: %s", clean.error)) return tc_finish("alloc_fail");
    CHECK(n_allocs > 50, "the workload allocates (%ld times)", n_allocs);
    run(-1, &o);
    CHECK(o.ok && same_results(&clean, &o) && ggmlr_test_alloc_count() == n_allocs, "a second clean run: same results, same %ld allocations", n_allocs);

    long failed_with_message = 0, recovered = 0;
    for (long k = 0; k < n_allocs; k++) {
        run(k, &o);
        if (o.ok) {
            recovered++;
            CHECK(same_results(&clean, &o), "allocation %ld failed: the run succeeded with other results", k);
        } else {
            failed_with_message++;
            CHECK(o.error[0] != '\0', "allocation %ld failed: the run failed without a message", k);
        }
        run(-1, &after);
        CHECK(after.ok && same_results(&clean, &after), "after allocation %ld failed, the workload runs again: %s", k, after.error);
    }
    unlink(gguf_path);
    printf("alloc_fail: %ld allocation points; %ld failed the run with a message, %ld were done without\n", n_allocs,
           failed_with_message, recovered);
    return tc_finish("alloc_fail");
}

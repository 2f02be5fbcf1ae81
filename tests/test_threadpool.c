/* test_threadpool.c -- the executor's worker threads across computes: they
 * are reused (the process's thread count stays put over many computes),
 * resized to the requested count, sleep when idle (no CPU time used), are
 * joined when their owner goes (backend freed, calling thread exited), work
 * for several user threads computing at once, and a forked child computes
 * with fresh workers. Every result must be bitwise equal to the 1-thread one. */
#define _POSIX_C_SOURCE 200809L  /* fork, nanosleep, clock_gettime */

#include "common/test_common.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { K = 45, M = 37, N = 29 };

/* out = soft_max(mul_mat(w, x)) + x_rows: kernels with phases and barriers */
struct net {
    struct ggml_context * ctx;
    struct ggml_cgraph * g;
    struct ggml_tensor * out;
};

static struct net build(uint64_t seed) {
    struct net n;
    tc_seed(seed);
    n.ctx = tc_ctx(8);
    struct ggml_tensor * w = ggml_new_tensor_2d(n.ctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor * x = ggml_new_tensor_2d(n.ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor * bias = ggml_new_tensor_2d(n.ctx, GGML_TYPE_F32, M, N);
    tc_fill_uniform(w, -1, 1);
    tc_fill_uniform(x, -1, 1);
    tc_fill_uniform(bias, -1, 1);
    n.out = ggml_add(n.ctx, ggml_soft_max(n.ctx, ggml_mul_mat(n.ctx, w, x)), bias);
    n.g = ggml_new_graph(n.ctx);
    ggml_build_forward_expand(n.g, n.out);
    return n;
}

static float reference[M * N];

/* Computes n's graph (backend NULL: with_ctx) and compares with the reference bit for bit. */
static bool compute_matches(struct net * n, ggml_backend_t backend, int n_threads) {
    tc_poison(n->out);
    const enum ggml_status st = backend ? ggml_backend_graph_compute(backend, n->g) : ggml_graph_compute_with_ctx(n->ctx, n->g, n_threads);
    return st == GGML_STATUS_SUCCESS && memcmp(n->out->data, reference, sizeof reference) == 0;
}

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long) (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_reuse_and_resize(void) {
    struct net n = build(1);
    const int base = tc_thread_count();
    int bad = 0;
    for (int i = 0; i < 200; i++) bad += !compute_matches(&n, NULL, 3);
    CHECK(bad == 0, "200 computes with 3 threads: %d differ from 1 thread", bad);
    CHECK(base < 0 || tc_thread_count() == base + 2, "3 threads = caller + 2 workers kept: %d threads, %d before", tc_thread_count(), base);
    static const int counts[] = {2, 5, 1, 4, 4, 2, 3, 1, 8};
    for (int i = 0; i < (int) (sizeof counts / sizeof counts[0]); i++) {
        CHECK(compute_matches(&n, NULL, counts[i]), "%d threads after resizing: bitwise equal to 1 thread", counts[i]);
        CHECK(base < 0 || tc_thread_count() == base + counts[i] - 1, "resized to %d threads: %d threads, %d before", counts[i], tc_thread_count(), base);
    }
    ggml_free(n.ctx);
}

static void test_idle_workers_sleep(void) {
    struct net n = build(1);
    CHECK(compute_matches(&n, NULL, 3), "3 threads");
    sleep_ms(100);  /* past the spin */
    const double c0 = cpu_seconds();
    sleep_ms(300);
    const double used = cpu_seconds() - c0;
    CHECK(used < 0.03, "2 idle workers used %.3f s of CPU in 0.3 s", used);
    ggml_free(n.ctx);
}

static void test_backend_owns_its_workers(void) {
    struct net n = build(1);
    const int base = tc_thread_count();
    ggml_backend_t backend = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(backend, 4);
    int bad = 0;
    for (int i = 0; i < 100; i++) bad += !compute_matches(&n, backend, 4);
    CHECK(bad == 0, "backend, 4 threads: %d of 100 differ", bad);
    CHECK(base < 0 || tc_thread_count() == base + 3, "backend with 4 threads keeps 3 workers: %d, %d before", tc_thread_count(), base);
    ggml_backend_free(backend);
    CHECK(base < 0 || tc_thread_count() == base, "ggml_backend_free joins its workers: %d threads, %d before", tc_thread_count(), base);
    ggml_free(n.ctx);
}

/* User threads computing at once: each its own graph via with_ctx, or all
 * sharing one backend (whose computes then take turns). */
struct user { struct net net; ggml_backend_t backend; int n_threads; int bad; };

static void * user_main(void * arg) {
    struct user * u = arg;
    for (int i = 0; i < 40; i++) u->bad += !compute_matches(&u->net, u->backend, u->n_threads);
    return NULL;
}

static void test_concurrent_users(void) {
    const int base = tc_thread_count();
    ggml_backend_t backend = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(backend, 2);
    enum { USERS = 6 };
    struct user users[USERS];
    pthread_t threads[USERS];
    for (int i = 0; i < USERS; i++) {
        users[i] = (struct user) {build(1), i < 2 ? backend : NULL, 1 + i % 3, 0};  /* built here: the test RNG is not thread-safe */
        CHECK(pthread_create(&threads[i], NULL, user_main, &users[i]) == 0, "start user thread %d", i);
    }
    for (int i = 0; i < USERS; i++) {
        pthread_join(threads[i], NULL);
        CHECK(users[i].bad == 0, "user thread %d (%s, %d threads): %d of 40 computes differ", i,
              users[i].backend ? "shared backend" : "with_ctx", users[i].n_threads, users[i].bad);
        ggml_free(users[i].net.ctx);
    }
    ggml_backend_free(backend);
    /* a thread's own pool goes with the thread */
    CHECK(base < 0 || tc_thread_count() == base, "user threads' workers joined at thread exit: %d threads, %d before", tc_thread_count(), base);
}

static void test_fork(void) {
    struct net n = build(1);
    ggml_backend_t backend = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(backend, 3);
    CHECK(compute_matches(&n, NULL, 3) && compute_matches(&n, backend, 3), "parent computes before fork");
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        alarm(60);  /* a hang in the child fails the test instead of blocking it */
        bool ok = true;
        for (int i = 0; i < 20; i++) ok = ok && compute_matches(&n, NULL, 3) && compute_matches(&n, backend, 3);
        ggml_backend_free(backend);
        _exit(ok ? 0 : 1);
    }
    CHECK(pid > 0, "fork");
    int status = 0;
    if (pid > 0) waitpid(pid, &status, 0);
    CHECK(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "forked child computes with 3 threads (status %d)", status);
    CHECK(compute_matches(&n, NULL, 3) && compute_matches(&n, backend, 3), "parent computes after fork");
    ggml_backend_free(backend);
    ggml_free(n.ctx);
}

int main(void) {
    struct net n = build(1);
    tc_compute(n.ctx, n.g, 1);
    memcpy(reference, n.out->data, sizeof reference);
    ggml_free(n.ctx);

    test_reuse_and_resize();
    test_idle_workers_sleep();
    test_backend_owns_its_workers();
    test_concurrent_users();
    test_fork();
    return tc_finish("threadpool");
}

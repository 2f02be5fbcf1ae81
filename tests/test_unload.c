/* test_unload.c -- unloading the shared library (dlclose, as R's dyn.unload
 * does) while it holds worker threads: a calling thread's pool and a backend
 * the user never freed. After dlclose no worker may be left (they would run
 * unmapped code), a thread that computed and exits afterwards must not call
 * into the unmapped library, and loading the library again works.
 * ctest passes the library's path in GGMLR_SHARED_LIB. */
#define _POSIX_C_SOURCE 200809L  /* dlopen; pthread */

#include "common/test_common.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

/* Under LeakSanitizer (the ASan build): the backends this test leaves to the
 * unload on purpose can never be freed, and their frames are gone with the
 * library, so no suppression can name them. */
const char * __lsan_default_options(void) __attribute__((visibility("default"), used));
const char * __lsan_default_options(void) { return "detect_leaks=0"; }

struct lib {
    void * handle;
    struct ggml_context * (*init)(struct ggml_init_params);
    void (*free_ctx)(struct ggml_context *);
    struct ggml_tensor * (*new_1d)(struct ggml_context *, enum ggml_type, int64_t);
    struct ggml_tensor * (*add)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *);
    struct ggml_cgraph * (*new_graph)(struct ggml_context *);
    void (*expand)(struct ggml_cgraph *, struct ggml_tensor *);
    enum ggml_status (*compute)(struct ggml_context *, struct ggml_cgraph *, int);
    ggml_backend_t (*backend_init)(void);
    void (*backend_threads)(ggml_backend_t, int);
    enum ggml_status (*backend_compute)(ggml_backend_t, struct ggml_cgraph *);
};

static bool load(struct lib * l, const char * path) {
    l->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!l->handle) { fprintf(stderr, "dlopen %s: %s\n", path, dlerror()); return false; }
#define SYM(field, name) *(void **) &l->field = dlsym(l->handle, name); if (!l->field) return false
    SYM(init, "ggml_init");
    SYM(free_ctx, "ggml_free");
    SYM(new_1d, "ggml_new_tensor_1d");
    SYM(add, "ggml_add");
    SYM(new_graph, "ggml_new_graph");
    SYM(expand, "ggml_build_forward_expand");
    SYM(compute, "ggml_graph_compute_with_ctx");
    SYM(backend_init, "ggml_backend_cpu_init");
    SYM(backend_threads, "ggml_backend_cpu_set_n_threads");
    SYM(backend_compute, "ggml_backend_graph_compute");
#undef SYM
    return true;
}

/* c = a + b of 64 floats with n_threads, via with_ctx or a backend; true when c = 3. */
static bool compute_add(const struct lib * l, ggml_backend_t backend, int n_threads) {
    struct ggml_init_params ip = {1 << 20, NULL, false};
    struct ggml_context * ctx = l->init(ip);
    if (!ctx) return false;
    struct ggml_tensor * a = l->new_1d(ctx, GGML_TYPE_F32, 64), * b = l->new_1d(ctx, GGML_TYPE_F32, 64);
    for (int i = 0; i < 64; i++) { ((float *) a->data)[i] = 1.0f; ((float *) b->data)[i] = 2.0f; }
    struct ggml_tensor * c = l->add(ctx, a, b);
    struct ggml_cgraph * g = l->new_graph(ctx);
    l->expand(g, c);
    bool ok = (backend ? l->backend_compute(backend, g) : l->compute(ctx, g, n_threads)) == GGML_STATUS_SUCCESS;
    for (int i = 0; ok && i < 64; i++) ok = ((float *) c->data)[i] == 3.0f;
    l->free_ctx(ctx);
    return ok;
}

/* A user thread that computes, then waits until the library is gone, then exits. */
struct user { const struct lib * l; bool ok; pthread_mutex_t m; pthread_cond_t cv; int stage; };

static void * user_main(void * arg) {
    struct user * u = arg;
    u->ok = compute_add(u->l, NULL, 2);
    pthread_mutex_lock(&u->m);
    u->stage = 1;
    pthread_cond_broadcast(&u->cv);
    while (u->stage != 2) pthread_cond_wait(&u->cv, &u->m);
    pthread_mutex_unlock(&u->m);
    return NULL;
}

int main(void) {
    const char * path = getenv("GGMLR_SHARED_LIB");
    if (!CHECK(path != NULL, "GGMLR_SHARED_LIB names the shared library")) return tc_finish("unload");
    const int base = tc_thread_count();
    for (int round = 0; round < 2; round++) {
        struct lib l;
        if (!CHECK(load(&l, path), "round %d: load %s and its symbols", round, path)) break;
        CHECK(compute_add(&l, NULL, 3), "round %d: with_ctx, 3 threads", round);
        ggml_backend_t backend = l.backend_init();  /* never freed: the unload must stop its workers */
        l.backend_threads(backend, 4);
        CHECK(backend && compute_add(&l, backend, 4), "round %d: backend, 4 threads", round);
        struct user u = {.l = &l, .m = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, user_main, &u) == 0, "start a user thread");
        pthread_mutex_lock(&u.m);
        while (u.stage != 1) pthread_cond_wait(&u.cv, &u.m);
        pthread_mutex_unlock(&u.m);
        CHECK(u.ok, "round %d: user thread computes with 2 threads", round);
        CHECK(base < 0 || tc_thread_count() == base + 2 + 3 + 2, "round %d: workers alive before unload: %d threads, %d at start", round,
              tc_thread_count(), base);
        CHECK(dlclose(l.handle) == 0, "round %d: dlclose", round);
        CHECK(base < 0 || tc_thread_count() == base + 1, "round %d: after dlclose only the user thread is left: %d threads, %d at start",
              round, tc_thread_count(), base);
        pthread_mutex_lock(&u.m);
        u.stage = 2;  /* the user thread exits now, with the library gone */
        pthread_cond_broadcast(&u.cv);
        pthread_mutex_unlock(&u.m);
        pthread_join(t, NULL);
        CHECK(base < 0 || tc_thread_count() == base, "round %d: %d threads at the end, %d at start", round, tc_thread_count(), base);
    }
    return tc_finish("unload");
}

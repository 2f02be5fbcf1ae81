/* ggml-cpu.h -- the multi-threaded CPU executor and CPU backend. */
#ifndef GGML_CPU_H
#define GGML_CPU_H

#include "ggml.h"
#include "ggml-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of cores of this machine (the default thread count). */
GGML_API int              ggml_cpu_n_cores(void);
/* Name of the SIMD path chosen at run time: "avx512", "avx2" or "scalar". */
GGML_API const char *     ggml_cpu_simd_name(void);
/* how GGML_PREC_BF16 products run: "avx512_bf16" (VDPBF16PS), "amx" (bf16
 * tiles, opt-in with GGMLR_AMX=1) or "f32" (the F32 products: a CPU without
 * AVX512_BF16, or a GGMLR_SIMD other than avx512) */
GGML_API const char *     ggml_cpu_bf16_name(void);
/* Runs on the calling thread plus n_threads - 1 workers (n_threads <= 0: all
 * cores) kept by the calling thread between computes; results do not depend
 * on n_threads. See docs/threading.md. */
GGML_API enum ggml_status ggml_graph_compute_with_ctx(struct ggml_context * ctx, struct ggml_cgraph * graph, int n_threads);

/* I32 element access (upstream declares it here; the F32 one is in ggml.h):
 * values convert like ggml_set_f32's, NULL / 0 with a message on bad input. */
GGML_API struct ggml_tensor * ggml_new_i32(struct ggml_context * ctx, int32_t value);
GGML_API struct ggml_tensor * ggml_set_i32(struct ggml_tensor * tensor, int32_t value); /* fill */
GGML_API int32_t ggml_get_i32_1d(const struct ggml_tensor * tensor, int i);
GGML_API void    ggml_set_i32_1d(const struct ggml_tensor * tensor, int i, int32_t value);
GGML_API int32_t ggml_get_i32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3);
GGML_API void    ggml_set_i32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3, int32_t value);

/* Upstream's compute plan. ggml_graph_plan sizes the scratch (work_size) for
 * n_threads; the caller gives work_data of that many bytes (or NULL when it
 * is 0). With a threadpool (ggml_threadpool_new) the compute runs on its
 * workers, else on the calling thread's own; abort_callback is asked once,
 * before the compute (true: GGML_STATUS_ABORTED, nothing computed); use_ref
 * is ignored (there is one set of kernels; results do not depend on it). */
struct ggml_cplan {
    size_t    work_size;
    uint8_t * work_data;
    int n_threads;
    struct ggml_threadpool * threadpool;
    ggml_abort_callback abort_callback;
    void *              abort_callback_data;
    bool use_ref;
};
GGML_API struct ggml_cplan ggml_graph_plan(const struct ggml_cgraph * cgraph, int n_threads, struct ggml_threadpool * threadpool);
GGML_API enum ggml_status  ggml_graph_compute(struct ggml_cgraph * cgraph, struct ggml_cplan * cplan);

/* Thread pools: workers that live until ggml_threadpool_free, for computes
 * given the pool (ggml_graph_plan, ggml_backend_cpu_set_threadpool); a
 * compute runs on at most params->n_threads of them (1..GGML_MAX_N_THREADS).
 * The CPU mask, priority, polling and strictness are not applied (the
 * workers spin briefly, then sleep); pause and resume change nothing (a
 * compute resumes a paused pool, and idle workers sleep). Results do not depend on the pool. */
GGML_API struct ggml_threadpool * ggml_threadpool_new          (struct ggml_threadpool_params * params);
GGML_API void                     ggml_threadpool_free         (struct ggml_threadpool * threadpool);
GGML_API int                      ggml_threadpool_get_n_threads(struct ggml_threadpool * threadpool);
GGML_API void                     ggml_threadpool_pause        (struct ggml_threadpool * threadpool);
GGML_API void                     ggml_threadpool_resume       (struct ggml_threadpool * threadpool);

/* NUMA: ggml_numa_init counts the machine's NUMA nodes (Linux sysfs) and
 * places nothing (every strategy is taken like DISABLED); ggml_is_numa:
 * whether it found more than one. */
enum ggml_numa_strategy {
    GGML_NUMA_STRATEGY_DISABLED   = 0,
    GGML_NUMA_STRATEGY_DISTRIBUTE = 1,
    GGML_NUMA_STRATEGY_ISOLATE    = 2,
    GGML_NUMA_STRATEGY_NUMACTL    = 3,
    GGML_NUMA_STRATEGY_MIRROR     = 4,
    GGML_NUMA_STRATEGY_COUNT
};
GGML_API void ggml_numa_init(enum ggml_numa_strategy numa);
GGML_API bool ggml_is_numa(void);

/* Row converters (n elements; NULL pointers with n > 0: a message, nothing
 * written): like the per-element ggml_fp32_to_fp16 / ggml_fp32_to_bf16 and
 * back; fp32_to_i32 truncates toward zero, NaN gives 0 and values out of
 * range the nearest int32 (upstream leaves those undefined). */
GGML_API void ggml_cpu_fp32_to_fp32(const float *,       float *, int64_t);
GGML_API void ggml_cpu_fp32_to_i32 (const float *,     int32_t *, int64_t);
GGML_API void ggml_cpu_fp32_to_fp16(const float *, ggml_fp16_t *, int64_t);
GGML_API void ggml_cpu_fp16_to_fp32(const ggml_fp16_t *, float *, int64_t);
GGML_API void ggml_cpu_fp32_to_bf16(const float *, ggml_bf16_t *, int64_t);
GGML_API void ggml_cpu_bf16_to_fp32(const ggml_bf16_t *, float *, int64_t);

/* What this CPU offers (run-time detection; upstream: what its build targets). */
GGML_API int ggml_cpu_has_sse3       (void);
GGML_API int ggml_cpu_has_ssse3      (void);
GGML_API int ggml_cpu_has_avx        (void);
GGML_API int ggml_cpu_has_avx_vnni   (void);
GGML_API int ggml_cpu_has_avx2       (void);
GGML_API int ggml_cpu_has_bmi2       (void);
GGML_API int ggml_cpu_has_f16c       (void);
GGML_API int ggml_cpu_has_fma        (void);
GGML_API int ggml_cpu_has_avx512     (void);
GGML_API int ggml_cpu_has_avx512_vbmi(void);
GGML_API int ggml_cpu_has_avx512_vnni(void);
GGML_API int ggml_cpu_has_avx512_bf16(void);
GGML_API int ggml_cpu_has_amx_int8   (void);
GGML_API int ggml_cpu_has_neon       (void);
GGML_API int ggml_cpu_has_arm_fma    (void);
GGML_API int ggml_cpu_has_fp16_va    (void);
GGML_API int ggml_cpu_has_dotprod    (void);
GGML_API int ggml_cpu_has_matmul_int8(void);
GGML_API int ggml_cpu_has_sve        (void);
GGML_API int ggml_cpu_get_sve_cnt    (void);
GGML_API int ggml_cpu_has_sme        (void);
GGML_API int ggml_cpu_has_sme2       (void);
GGML_API int ggml_cpu_has_riscv_v    (void);
GGML_API int ggml_cpu_get_rvv_vlen   (void);
GGML_API int ggml_cpu_has_vsx        (void);
GGML_API int ggml_cpu_has_vxe        (void);
GGML_API int ggml_cpu_has_wasm_simd  (void);
GGML_API int ggml_cpu_has_llamafile  (void);
GGML_API void ggml_cpu_init(void);  /* nothing to set up: a no-op */
/* Profiling: when on, every graph compute times each node and then prints to
 * stderr the time per op type and the slowest nodes (wall time of each node
 * with all its threads). Off by default; the environment variable
 * GGMLR_PROFILE=1 turns it on for the whole process, GGMLR_PROFILE=cpu with
 * thread 0's CPU time instead of wall time (for 1-thread runs on a busy machine). */
GGML_API void             ggml_cpu_set_profile(bool enable);

/* The backend keeps its own workers until ggml_backend_free; threads sharing
 * one backend take turns. */
GGML_API ggml_backend_t   ggml_backend_cpu_init(void);
GGML_API bool             ggml_backend_is_cpu(ggml_backend_t backend);
GGML_API void             ggml_backend_cpu_set_n_threads(ggml_backend_t backend, int n_threads);
/* Computes run on threadpool's workers (NULL: the backend's own again); the
 * pool must outlive its use by the backend. */
GGML_API void             ggml_backend_cpu_set_threadpool(ggml_backend_t backend_cpu, ggml_threadpool_t threadpool);
/* Asked once before each compute: true gives GGML_STATUS_ABORTED, nothing computed. */
GGML_API void             ggml_backend_cpu_set_abort_callback(ggml_backend_t backend_cpu, ggml_abort_callback abort_callback, void * abort_callback_data);
GGML_API void             ggml_backend_cpu_set_use_ref(ggml_backend_t backend_cpu, bool use_ref); /* no effect: one set of kernels (see ggml_cplan) */
GGML_API ggml_backend_reg_t ggml_backend_cpu_reg(void);

/* The CPU's type traits (upstream's): from_float quantizes a row of F32
 * activations to vec_dot_type; vec_dot(n, s, bs, x, bx, y, by, nrc) sets
 * s[r + c*bs] = row r of x (bx bytes apart) . row c of y (by bytes apart,
 * of vec_dot_type) for r, c < nrc, n elements; nrows is the nrc the kernels
 * are fastest with (1 for every type here). The SIMD path is picked at run
 * time like the others (GGMLR_SIMD); see docs/quant-types.md. NULL for a
 * number out of range; a type without a dot product has vec_dot NULL. */
typedef void (*ggml_vec_dot_t)(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                               const void * GGML_RESTRICT y, size_t by, int nrc);
struct ggml_type_traits_cpu {
    ggml_from_float_t from_float;
    ggml_vec_dot_t    vec_dot;
    enum ggml_type    vec_dot_type;
    int64_t           nrows;  /* number of rows to process simultaneously */
};
GGML_API const struct ggml_type_traits_cpu * ggml_get_type_traits_cpu(enum ggml_type type);

#ifdef __cplusplus
}
#endif

#endif /* GGML_CPU_H */

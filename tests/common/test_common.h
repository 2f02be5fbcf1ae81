/* test_common.h -- helpers shared by the C tests: checks that count failures,
 * a seeded RNG, relative errors against float64 references, and one generic
 * finite-difference gradient checker used for every backward rule. */
#ifndef GGMLR_TEST_COMMON_H
#define GGMLR_TEST_COMMON_H

#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-backend.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

extern int tc_failures;
extern int tc_checks;

/* Record one check; print the location and message when it fails. */
bool tc_check(bool ok, const char * file, int line, const char * fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define CHECK(cond, ...) tc_check((cond), __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_REL(err, tol, what) tc_check((err) <= (tol), __FILE__, __LINE__, "%s: relative error %.3g > %.3g", (what), (double) (err), (double) (tol))

/* Print "N passed, M failed" and return the process exit code. */
int tc_finish(const char * suite);

/* Whether to run the part of a test called `name`: all parts unless the
 * environment variable GGMLR_TEST_PARTS lists some (comma-separated), as the
 * slow sanitizer and valgrind runs do, e.g. GGMLR_TEST_PARTS=threads. */
bool tc_part(const char * name);

/* Deterministic xorshift RNG. */
void     tc_seed(uint64_t seed);
/* Draw from these bytes instead (two per tc_next), as a fuzzer's input; once
 * they run out, tc_bytes_exhausted() is true (until the next seeding). */
void     tc_seed_bytes(const uint8_t * data, size_t n);
bool     tc_bytes_exhausted(void);
uint64_t tc_next(void);
double   tc_uniform(double lo, double hi);
int      tc_randint(int lo, int hi);  /* inclusive */

/* A new context of `mb` MiB that holds data (aborts the test on failure). */
struct ggml_context * tc_ctx(size_t mb);
/* Fill every element of t (any layout, F32/F16/I32) with uniform values in [lo, hi]. */
void tc_fill_uniform(struct ggml_tensor * t, double lo, double hi);
/* Fill with NaN, so that an element a kernel forgets to write fails the test. */
void tc_poison(struct ggml_tensor * t);
/* Element i (logical ne0-fastest order) as double. */
double tc_get(const struct ggml_tensor * t, int64_t i);

/* ||x - ref|| / ||ref|| over n values (ref in double); the RMS of x - ref when ref is 0. */
double tc_rel_err_f32(const float * x, const double * ref, int64_t n);
/* The same, reading x from a tensor in logical order. */
double tc_rel_err_tensor(const struct ggml_tensor * t, const double * ref);

/* sum(t * W) with a fixed random W shaped like t (t may be a strided view):
 * a loss whose gradient is not uniform, so a wrong index or transpose shows. */
struct ggml_tensor * tc_weighted_sum(struct ggml_context * ctx, struct ggml_tensor * t);

/* Compute a graph with n threads and fail the test on a bad status. */
void tc_compute(struct ggml_context * ctx, struct ggml_cgraph * g, int n_threads);

/* Threads of this process (Linux /proc/self/status); -1 when unknown. */
int tc_thread_count(void);

/*
 * Generic gradient check. `build` makes a scalar F32 loss from the n_params
 * parameter tensors (already created and filled by the checker, shapes from
 * `shapes`, values uniform in [lo, hi]). The checker builds the backward graph,
 * then compares every analytic gradient element against central differences
 * of the loss (step eps, forward recomputed in float32). Passes when
 * |analytic - numeric| <= atol + rtol * |numeric| for every element.
 * Returns the number of mismatching elements (also counted as failures).
 */
typedef struct ggml_tensor * (*tc_loss_builder)(struct ggml_context * ctx, struct ggml_tensor ** params, void * user);
int tc_gradcheck(const char * what, tc_loss_builder build, void * user, int n_params, const int64_t (*shapes)[4],
                 double lo, double hi, double eps, double atol, double rtol);

/* Independent IEEE binary16 reference in float64 arithmetic (round to nearest
 * even, overflow to Inf, subnormals; NaN -> a quiet NaN with x's sign). It
 * shares no code with the library, so conversions can be checked against it. */
uint16_t tc_ref_fp32_to_fp16(float x);
double   tc_ref_fp16_to_f64(uint16_t h);
/* x rounded to the nearest half, as a double (what an F16 tensor stores). */
double   tc_ref_round_fp16(float x);

/* The relative RMS error a quantized type may show on uniform data:
 * 1.25/(levels-1), the levels of its grid over a (sub-)block's range
 * (test_common.c gives the derivation). */
double tc_quant_rms_bound(enum ggml_type t);

#endif

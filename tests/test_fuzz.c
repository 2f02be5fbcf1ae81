/* test_fuzz.c -- the API-sequence fuzzer (tests/common/api_fuzz.c), seeded:
 * each sequence's RNG seed comes from the base seed and its own index.
 *
 * Usage: test_fuzz [sequences [steps [seed [first_sequence]]]]
 * or the environment variables GGMLR_FUZZ_SEQS, GGMLR_FUZZ_STEPS,
 * GGMLR_FUZZ_SEED, GGMLR_FUZZ_FIRST; GGMLR_FUZZ_TRACE=1 prints every call
 * (to reproduce one sequence: test_fuzz 1 <steps> <seed> <sequence>) and
 * GGMLR_FUZZ_STATS=1 how often each call succeeded and which ops computed.
 * The ctest run uses the fixed defaults below; scripts/test-all.sh runs many
 * seeds under ASan + UBSan and one under TSan. */
#include "common/api_fuzz.h"
#include "common/test_common.h"

#include <inttypes.h>
#include <stdlib.h>

/* Huge requests under AddressSanitizer: return NULL (as libc does) instead of aborting. */
const char * __asan_default_options(void) __attribute__((visibility("default"), used));
const char * __asan_default_options(void) { return "allocator_may_return_null=1"; }

#define DEFAULT_SEQS  500
#define DEFAULT_STEPS 80
#define DEFAULT_SEED  20240601

static bool env_flag(const char * name) {
    const char * v = getenv(name);
    return v && *v && *v != '0';
}

static uint64_t arg_or_env(int argc, char ** argv, int i, const char * env, uint64_t def) {
    const char * s = i < argc ? argv[i] : getenv(env);
    return s && *s ? strtoull(s, NULL, 0) : def;
}

int main(int argc, char ** argv) {
    const uint64_t seqs = arg_or_env(argc, argv, 1, "GGMLR_FUZZ_SEQS", DEFAULT_SEQS);
    const int steps = (int) arg_or_env(argc, argv, 2, "GGMLR_FUZZ_STEPS", DEFAULT_STEPS);
    const uint64_t seed = arg_or_env(argc, argv, 3, "GGMLR_FUZZ_SEED", DEFAULT_SEED);
    const uint64_t first = arg_or_env(argc, argv, 4, "GGMLR_FUZZ_FIRST", 0);
    if (!fz_setup(env_flag("GGMLR_FUZZ_TRACE"), env_flag("GGMLR_FUZZ_STATS"))) return tc_finish("fuzz");

    for (uint64_t i = first; i < first + seqs; i++) {
        const int failures_before = tc_failures;
        tc_seed(seed * 1000003u + i);
        fz_run_sequence(i, steps);
        if (tc_failures != failures_before)
            fprintf(stderr, "  (in sequence %" PRIu64 " of seed %" PRIu64 "; rerun with GGMLR_FUZZ_TRACE=1 %s 1 %d %" PRIu64 " %" PRIu64 ")\n",
                    i, seed, argv[0], steps, seed, i);
    }
    fz_print_stats();
    printf("fuzz: seed %" PRIu64 ", %ld sequences, %ld calls (%ld failed as expected), %ld computes, %ld invariant checks\n", seed,
           fz_counts.sequences, fz_counts.calls, fz_counts.failures, fz_counts.computes, fz_counts.invariants);
    return tc_finish("fuzz");
}

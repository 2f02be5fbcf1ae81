/* fuzz_api.c -- the API-sequence fuzzer (tests/common/api_fuzz.c) driven by
 * the fuzzer's bytes: every choice it makes (call, shapes, types, values,
 * NaN/Inf among them, thread counts, graphs, autodiff, optimizer steps, a
 * ggml_opt training run) is two input bytes, so libFuzzer's mutations steer
 * it. One input is one sequence; it ends when the bytes do. A broken
 * invariant (a failed CHECK) aborts, so libFuzzer keeps the input. */
#include "fuzz_target.h"

#include "../common/api_fuzz.h"
#include "../common/test_common.h"

#include <stdbool.h>

FUZZ_ASAN_OPTIONS

#define MAX_STEPS 100

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    static bool ready;
    if (!ready) {
        const char * trace = getenv("GGMLR_FUZZ_TRACE");
        FUZZ_ASSERT(fz_setup(trace && *trace == '1', false), "setup");
        ready = true;
    }
    const int failures = tc_failures;
    tc_seed_bytes(data, size);
    fz_run_sequence(0, MAX_STEPS);
    FUZZ_ASSERT(tc_failures == failures, "%d checks failed in this input (see above)", tc_failures - failures);
    return 0;
}

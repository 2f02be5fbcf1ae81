/* api_fuzz.h -- the API-sequence fuzzer (api_fuzz.c), shared by the seeded
 * ctest test_fuzz and the libFuzzer target tests/fuzz/fuzz_api.c. Every random
 * choice is a tc_next() draw: seed with tc_seed or tc_seed_bytes first. A
 * broken invariant is a failed CHECK (tc_failures grows). */
#ifndef GGMLR_API_FUZZ_H
#define GGMLR_API_FUZZ_H

#include <stdbool.h>
#include <stdint.h>

struct fz_counts { long calls, failures, computes, invariants, sequences; };
extern struct fz_counts fz_counts;

/* Once per process: trace prints every call, stats counts outcomes per call. */
bool fz_setup(bool trace, bool stats);
/* One sequence of up to `steps` actions (fewer when the input bytes run out). */
void fz_run_sequence(uint64_t index, int steps);
/* With stats: how often each call succeeded and failed. */
void fz_print_stats(void);

#endif

#!/bin/sh
# Fused attention (bench_attention) against PyTorch's CPU attention on the same
# shapes, in one run: prints both and the ratio ggmlr / torch in GFLOP/s.
# Needs Debian's python3-torch (and libopenblas0-pthread, or torch uses the
# reference BLAS). OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are unset for torch only.
#   bench/compare_torch.sh [threads] [reps] [n_max]
set -eu
cd "$(dirname "$0")/.."
T=${1:-$(nproc)}
R=${2:-5}
NMAX=${3:-1000000000}
. bench/args.sh
positive threads "$T"
positive reps "$R"
positive n_max "$NMAX"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target bench_attention >/dev/null
# bench_attention exits non-zero when a figure exceeds the measured FMA peak (a broken yardstick)
if ! ./build/examples/bench_attention "$T" "$R" "$NMAX" > /tmp/ggmlr_bench.$$; then
  cat /tmp/ggmlr_bench.$$; rm -f /tmp/ggmlr_bench.$$; exit 1
fi
cat /tmp/ggmlr_bench.$$
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS="$T" OMP_NUM_THREADS="$T" MKL_NUM_THREADS="$T" \
  /usr/bin/python3 bench/bench_torch.py "$T" "$R" "$NMAX" > /tmp/torch_bench.$$
echo
# bwd ratios use the backward autodiff builds (it reuses the forward, as torch's autograd does)
echo "shape                              | torch fwd GF/s  ggmlr/torch | torch bwd GF/s  ggmlr/torch"
grep '^D=' /tmp/ggmlr_bench.$$ | awk '{print $8, $25}' | sed 's/[^0-9. ]//g' > /tmp/ours.$$
paste -d' ' /tmp/torch_bench.$$ /tmp/ours.$$ | awk '{printf "D=%-3s N=%-5s M=%-5s H=%s/%s %-6s | %8.1f       %6.1fx     | %8.1f       %6.1fx\n", $2, $3, $4, $5, $6, $7, $8, $10 / $8, $9, $11 / $9}'
rm -f /tmp/ggmlr_bench.$$ /tmp/torch_bench.$$ /tmp/ours.$$

#!/bin/sh
# Where a training step of the main job spends its time, per op type: runs
# ./build/train_austen with GGMLR_PROFILE=1 for N steps at 1 and at T threads,
# R times interleaved (1, T, 1, T, ...: load on a shared machine falls on both),
# and averages the profiler's per-op wall times over each run's steps (the
# forward + backward graph and the optimizer graph; evaluation graphs are left
# out). Prints, per op, the median over the R runs of ms per step at each
# thread count, their ratio, and the ms that the op loses against perfect
# scaling (T-thread time - 1-thread time / T).
#   bench/step_profile.sh [threads] [steps] [runs]     (defaults: all cores, 60, 3)
set -eu
cd "$(dirname "$0")/.."
T=${1:-$(nproc)}
N=${2:-60}
R=${3:-3}
. bench/args.sh
positive threads "$T"
positive steps "$N"
positive runs "$R"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target train_austen >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=1
while [ "$i" -le "$R" ]; do
  for t in 1 "$T"; do
    GGMLR_PROFILE=1 ./build/train_austen --threads "$t" --iters "$N" --eval-interval "$N" --eval-batches 1 \
        --log-interval "$N" --no-plot --sample-len 1 --out "$tmp/out" > "$tmp/p$t.txt" 2>&1
    # the step graph has the backward ops, the optimizer graph only OPT_STEP_* nodes
    awk -v n="$N" '
      /^ggmlr profile:/ { on = 0; k = 0; delete cur; next }
      /^  op / { on = 1; next }
      /slowest nodes/ { if (train) for (o in cur) ms[o] += cur[o]; on = 0; train = 0; next }
      on && NF == 4 && $1 ~ /^[A-Z_]+$/ { cur[$1] = $3; if ($1 ~ /_BACK$|^OPT_STEP/) train = 1 }
      END { for (o in ms) printf "%s %.3f\n", o, ms[o] / n }' "$tmp/p$t.txt" >> "$tmp/runs$t.txt"
  done
  i=$((i + 1))
done
# per op, the median of its R per-run means
for t in 1 "$T"; do
  sort -k1,1 -k2,2n "$tmp/runs$t.txt" |
    awk '{ v[$1, ++c[$1]] = $2 } END { for (o in c) { n = c[o]; m = n % 2 ? v[o, (n + 1) / 2] : (v[o, n / 2] + v[o, n / 2 + 1]) / 2; printf "%s %.3f\n", o, m } }' |
    sort > "$tmp/a$t.txt"
done
simd=$(sed -n 's/.*SIMD path \([a-z0-9]*\).*/\1/p' "$tmp/p$T.txt" | head -1)
echo "per-op time of a training step (ms per step: mean of $N steps, median of $R runs; GGMLR_PROFILE=1, SIMD path $simd)"
join -a1 -e 0 -o 0,1.2,2.2 "$tmp/a1.txt" "$tmp/a$T.txt" | sort -k3 -n -r |
  awk -v t="$T" 'BEGIN { printf "%-26s %10s %10s %7s %9s\n", "op", "1 thread", t " threads", "ratio", "lost ms" }
    { a += $2; b += $3; printf "%-26s %10.3f %10.3f %6.2fx %9.3f\n", $1, $2, $3, ($3 > 0 ? $2 / $3 : 0), $3 - $2 / t }
    END { printf "%-26s %10.3f %10.3f %6.2fx %9.3f\n", "total", a, b, (b > 0 ? a / b : 0), b - a / t }'

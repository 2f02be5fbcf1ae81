#!/bin/sh
# How the main job's training step scales from 1 to T threads: runs
# ./build/train_austen at 1 and at T threads back to back, R pairs (so that
# load on a shared machine falls on both halves of a pair alike), and prints
# each pair's tokens/s (training steps only, wall clock) and their ratio, then
# the median ratio.
#   bench/thread_scaling.sh [threads] [iters] [pairs]     (defaults: all cores, 200, 5)
set -eu
cd "$(dirname "$0")/.."
T=${1:-$(nproc)}
N=${2:-200}
R=${3:-5}
. bench/args.sh
positive threads "$T"
positive iters "$N"
positive pairs "$R"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target train_austen >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rate() {
  ./build/train_austen --threads "$1" --iters "$N" --batch 12 --ctx 64 --eval-interval "$N" --eval-batches 1 \
      --log-interval "$N" --no-plot --sample-len 1 --out "$tmp/out" > "$tmp/log"
  sed -n 's/^done in .*: \([0-9]*\) tokens\/s.*/\1/p' "$tmp/log"
}
i=1
while [ "$i" -le "$R" ]; do
  one=$(rate 1)
  many=$(rate "$T")
  ratio=$(echo "$many $one" | awk '{printf "%.3f", $1 / $2}')
  echo "pair $i: 1 thread $one tokens/s, $T threads $many tokens/s, ratio ${ratio}x"
  echo "$ratio" >> "$tmp/ratios"
  i=$((i + 1))
done
med=$(sort -n "$tmp/ratios" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
echo "1 -> $T threads, $N iterations, median of $R pairs: ${med}x (SIMD path $(sed -n 's/.*SIMD path \([a-z0-9]*\).*/\1/p' "$tmp/log"))"

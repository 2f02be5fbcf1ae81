#!/bin/sh
# The main job's training step against its PyTorch twin (bench/gpt_torch.py),
# same model, batch and thread count, runs interleaved (ggmlr, torch, ggmlr,
# ...) so that load on a shared machine falls on both alike. Prints each run's
# tokens/s (wall clock, training steps only), tokens per CPU second (ggmlr: the
# whole process, start-up and evaluation included; torch: its training steps)
# and max RSS (/usr/bin/time -v), then the medians. On a loaded machine the
# wall-clock rates follow the scheduler; the CPU-second rates follow the work.
# Needs Debian's python3-torch and libopenblas0-pthread; OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE are unset for the torch runs only.
#   bench/compare_train.sh [threads] [iters] [reps]     (defaults: all cores, 200, 3)
set -eu
cd "$(dirname "$0")/.."
T=${1:-$(nproc)}
N=${2:-200}
R=${3:-3}
. bench/args.sh
positive threads "$T"
positive iters "$N"
positive reps "$R"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target train_austen >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rss() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$1"; }
cpu() { awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$1"; }
i=1
while [ "$i" -le "$R" ]; do
  /usr/bin/time -v ./build/train_austen --threads "$T" --iters "$N" --batch 12 --ctx 64 --eval-interval "$N" --eval-batches 1 \
      --log-interval "$N" --no-plot --sample-len 1 --out "$tmp/out" > "$tmp/g.out" 2> "$tmp/g.time"
  g=$(sed -n 's/^done in .*: \([0-9]*\) tokens\/s.*/\1/p' "$tmp/g.out")
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS="$T" OPENBLAS_NUM_THREADS="$T" MKL_NUM_THREADS="$T" \
    /usr/bin/time -v /usr/bin/python3 bench/gpt_torch.py --threads "$T" --iters "$N" --log-interval "$N" > "$tmp/t.out" 2> "$tmp/t.time"
  t=$(sed -n 's/^median \([0-9]*\) tokens\/s.*/\1/p' "$tmp/t.out")
  gc=$(echo "$(cpu "$tmp/g.time") $N" | awk '{printf "%.0f", $2 * 768 / $1}')
  tc=$(sed -n 's/^cpu \([0-9]*\) tokens.*/\1/p' "$tmp/t.out")
  echo "run $i: ggmlr $g tokens/s, $gc tokens/CPU-s, max RSS $(rss "$tmp/g.time") KB | torch $t tokens/s, $tc tokens/CPU-s, max RSS $(rss "$tmp/t.time") KB"
  echo "$g $(rss "$tmp/g.time") $t $(rss "$tmp/t.time") $gc $tc" >> "$tmp/all"
  i=$((i + 1))
done
med() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
gm=$(cut -d' ' -f1 "$tmp/all" | med); tm=$(cut -d' ' -f3 "$tmp/all" | med)
gcm=$(cut -d' ' -f5 "$tmp/all" | med); tcm=$(cut -d' ' -f6 "$tmp/all" | med)
echo "$T thread(s), $N iterations, median of $R: ggmlr $gm tokens/s, $gcm tokens/CPU-s (max RSS $(cut -d' ' -f2 "$tmp/all" | med) KB);" \
     "torch $tm tokens/s, $tcm tokens/CPU-s (max RSS $(cut -d' ' -f4 "$tmp/all" | med) KB);" \
     "ggmlr/torch $(echo "$gm $tm" | awk '{printf "%.2f", $1 / $2}')x wall, $(echo "$gcm $tcm" | awk '{printf "%.2f", $1 / $2}')x CPU"

#!/bin/sh
# The main job's training step against its PyTorch twin (bench/gpt_torch.py),
# same model, batch and thread count, runs interleaved (ggmlr, torch fp32,
# torch bf16 autocast, ggmlr, ...) so that load on a shared machine falls on
# all alike; PyTorch runs in its best configuration: torch's threads = T with
# OPENBLAS_NUM_THREADS=1 (OpenBLAS threads under torch's oversubscribe the
# cores), in fp32 and in bf16 autocast, and the ratio is against the faster
# of the two. Prints each run's
# tokens/s (wall clock, training steps only), ggmlr's tokens per CPU second
# (the whole process, start-up and evaluation included) and max RSS
# (/usr/bin/time -v), then the medians. On a loaded machine the
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
  line="run $i: ggmlr $g tokens/s, $(echo "$(cpu "$tmp/g.time") $N" | awk '{printf "%.0f", $2 * 768 / $1}') tokens/CPU-s, max RSS $(rss "$tmp/g.time") KB"
  row="$g $(rss "$tmp/g.time")"
  for prec in fp32 bf16; do
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS="$T" OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
      /usr/bin/time -v /usr/bin/python3 bench/gpt_torch.py --threads "$T" --iters "$N" --log-interval "$N" --precision "$prec" \
      > "$tmp/t.out" 2> "$tmp/t.time"
    t=$(sed -n 's/^median \([0-9]*\) tokens\/s.*/\1/p' "$tmp/t.out")
    line="$line | torch $prec $t tokens/s, max RSS $(rss "$tmp/t.time") KB"
    row="$row $t"
  done
  echo "$line"
  echo "$row" >> "$tmp/all"
  i=$((i + 1))
done
med() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
gm=$(cut -d' ' -f1 "$tmp/all" | med); fm=$(cut -d' ' -f3 "$tmp/all" | med); bm=$(cut -d' ' -f4 "$tmp/all" | med)
best=$(echo "$fm $bm" | awk '{print ($1 > $2) ? $1 : $2}')
echo "$T thread(s), $N iterations, median of $R: ggmlr $gm tokens/s (max RSS $(cut -d' ' -f2 "$tmp/all" | med) KB);" \
     "torch fp32 $fm, torch bf16 autocast $bm tokens/s; ggmlr / best torch $(echo "$gm $best" | awk '{printf "%.2f", $1 / $2}')x"

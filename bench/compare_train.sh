#!/bin/sh
# The main job's training step against its PyTorch twin (bench/gpt_torch.py),
# same model, batch and thread count, runs interleaved (ggmlr f32, ggmlr
# bf16, torch fp32, torch bf16 autocast, ggmlr f32, ...) so that load on a
# shared machine falls on all alike; PyTorch runs in its best configuration:
# torch's threads = T with OPENBLAS_NUM_THREADS=1 (OpenBLAS threads under
# torch's oversubscribe the cores), in fp32 and in bf16 autocast; ggmlr with
# --precision f32 and bf16 (its products at GGML_PREC_BF16); the ratio is the
# faster ggmlr against the faster torch. Prints each run's tokens/s (wall
# clock, training steps only) and tokens per CPU second (ggmlr: the whole
# process, start-up and evaluation included; torch: its training steps) and
# max RSS (/usr/bin/time -v), then the medians. On a loaded machine the
# wall-clock rates follow the scheduler; the CPU-second rates follow the work.
# Configurations: baby (the main job: 4 layers, 4 heads, embedding 128,
# context 64, batch 12) and shakespeare (nanoGPT's Shakespeare-char: 6
# layers, 6 heads, embedding 384, context 256, batch 8; 10.75 M weights).
# Needs Debian's python3-torch and libopenblas0-pthread; OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE are unset for the torch runs only.
#   bench/compare_train.sh [threads] [iters] [reps] [baby|shakespeare]   (defaults: all cores, 200, 3, baby)
set -eu
cd "$(dirname "$0")/.."
T=${1:-$(nproc)}
N=${2:-200}
R=${3:-3}
C=${4:-baby}
. bench/args.sh
positive threads "$T"
positive iters "$N"
positive reps "$R"
case $C in
  baby) L=4 E=128 H=4 X=64 B=12 ;;
  shakespeare) L=6 E=384 H=6 X=256 B=8 ;;
  *) echo "configuration must be baby or shakespeare, not '$C'" >&2; exit 2 ;;
esac
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target train_austen >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rss() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$1"; }
cpu() { awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$1"; }
i=1
while [ "$i" -le "$R" ]; do
  line="run $i:"
  row=""
  for prec in f32 bf16; do
    /usr/bin/time -v ./build/train_austen --threads "$T" --iters "$N" --layers "$L" --embd "$E" --heads "$H" --batch "$B" --ctx "$X" \
        --warmup 100 --decay-iters 2000 --eval-interval "$N" --eval-batches 1 --log-interval "$N" --no-plot --sample-len 1 \
        --precision "$prec" --out "$tmp/out" > "$tmp/g.out" 2> "$tmp/g.time"
    g=$(sed -n 's/^done in .*: \([0-9]*\) tokens\/s.*/\1/p' "$tmp/g.out")
    gc=$(echo "$(cpu "$tmp/g.time") $N" | awk -v t=$((B * X)) '{printf "%.0f", $2 * t / $1}')
    line="$line ggmlr $prec $g tokens/s ($gc/CPU-s, max RSS $(rss "$tmp/g.time") KB) |"
    row="$row $g $gc"
  done
  for prec in fp32 bf16; do
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS="$T" OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
      /usr/bin/time -v /usr/bin/python3 bench/gpt_torch.py --threads "$T" --iters "$N" --log-interval "$N" --precision "$prec" \
      --layers "$L" --embd "$E" --heads "$H" --batch "$B" --ctx "$X" > "$tmp/t.out" 2> "$tmp/t.time"
    t=$(sed -n 's/^median \([0-9]*\) tokens\/s.*/\1/p' "$tmp/t.out")
    tc=$(sed -n 's/^cpu \([0-9]*\) tokens per CPU second.*/\1/p' "$tmp/t.out")
    line="$line torch $prec $t tokens/s ($tc/CPU-s, max RSS $(rss "$tmp/t.time") KB) |"
    row="$row $t $tc"
  done
  echo "$line"
  echo "$row" >> "$tmp/all"
  i=$((i + 1))
done
med() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { cut -d' ' -f"$1" "$tmp/all" | med; }
max2() { echo "$1 $2" | awk '{print ($1 > $2) ? $1 : $2}'; }
g32=$(col 2); g16=$(col 4); t32=$(col 6); t16=$(col 8)
g32c=$(col 3); g16c=$(col 5); t32c=$(col 7); t16c=$(col 9)
echo "$C, $T thread(s), $N iterations, median of $R, tokens/s (per CPU second):" \
     "ggmlr f32 $g32 ($g32c), ggmlr bf16 $g16 ($g16c), torch fp32 $t32 ($t32c), torch bf16 autocast $t16 ($t16c);" \
     "best ggmlr / best torch $(echo "$(max2 "$g32" "$g16") $(max2 "$t32" "$t16")" | awk '{printf "%.2f", $1 / $2}')x" \
     "($(echo "$(max2 "$g32c" "$g16c") $(max2 "$t32c" "$t16c")" | awk '{printf "%.2f", $1 / $2}')x per CPU second)"

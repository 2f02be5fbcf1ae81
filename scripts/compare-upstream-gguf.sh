#!/bin/sh
# compare-upstream-gguf.sh -- GGUF interop, mul_mat accuracy and quantized
# mul_mat speed against upstream ggml, both built from source.
#
#   scripts/compare-upstream-gguf.sh [--speed] UPSTREAM_CHECKOUT [WORK_DIR]
#
# UPSTREAM_CHECKOUT: a checkout of github:ggml-org/ggml (`git archive HEAD |
# tar -x -C DIR` of a snapshot); nothing of it is copied into this
# repository. Upstream is built (scripts/upstream-build.sh) in UP_BUILD_DIR
# (default WORK_DIR/up; an existing build of the same checkout is reused, as
# compare-upstream-perf.sh leaves one), this library in BUILD_DIR (default
# build/, configured already; the targets it needs are brought up to date).
# WORK_DIR (default: a temporary directory, removed at the end) keeps the
# programs and the files.
#
# Without --speed, scripts/upstream-interop.c built against both libraries:
#   1. each writes a GGUF file (a tensor of every type both quantize, keys of
#      every value type); the two files are compared byte for byte;
#   2. each reads both files (checking every key and tensor) and dumps the
#      metadata, each tensor's bytes and its dequantized floats; per type the
#      four dumps must be identical (bytes, floats), and the metadata too;
#   3. per type and N = 1, 16 columns: mul_mat's error against float64 of the
#      dequantized weights, ours and upstream's (max abs, relative L2).
# With --speed: bench/quant_matmul.c against upstream and against this
# library, run one after the other on THREADS (default 2) threads, REPS
# (default 15) repetitions, with the load (uptime) before each; ROUNDS
# (default 1) times, alternating.
# Exit status 1 if a type or the metadata differs.
set -eu
SPEED=0
if [ "${1:-}" = "--speed" ]; then SPEED=1; shift; fi
if [ $# -lt 1 ] || [ ! -f "$1/include/gguf.h" ]; then
  echo "usage: $0 [--speed] UPSTREAM_CHECKOUT [WORK_DIR]   (UPSTREAM_CHECKOUT/include/gguf.h must exist)" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 2 ]; then
  mkdir -p "$2"; W=$(cd "$2" && pwd)
else
  W=$(mktemp -d); trap 'rm -rf "$W"' EXIT INT TERM
fi
BUILD=$(cd "${BUILD_DIR:-$ROOT/build}" && pwd)
JOBS=${JOBS:-2}
. "$ROOT/scripts/upstream-build.sh"
upstream_build "$1" "${UP_BUILD_DIR:-$W/up}"
echo "building ggmlr ($ROOT) in $BUILD" >&2
cmake --build "$BUILD" -j"$JOBS" --target ggmlr_static quant_matmul >/dev/null

if [ "$SPEED" = 1 ]; then
  THREADS=${THREADS:-2}; REPS=${REPS:-15}
  upstream_cc "$W/quant_matmul-up" "$ROOT/bench/quant_matmul.c" -D_POSIX_C_SOURCE=200809L -I"$ROOT/bench"
  echo "CPU: $(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores"
  QM="$BUILD/examples/quant_matmul"; [ -x "$QM" ] || QM="$BUILD/quant_matmul"
  r=1
  while [ "$r" -le "${ROUNDS:-1}" ]; do
    echo "round $r; load before upstream: $(uptime)"
    "$W/quant_matmul-up" "$THREADS" "$REPS"
    echo "load before ggmlr: $(uptime)"
    "$QM" "$THREADS" "$REPS"
    r=$((r + 1))
  done
  echo "load after: $(uptime)"
  exit 0
fi

upstream_cc "$W/interop-up" "$ROOT/scripts/upstream-interop.c"
cc -std=c11 -O2 -I"$ROOT/include" "$ROOT/scripts/upstream-interop.c" -o "$W/interop-ours" "$BUILD/libggmlr.a" -lm -lpthread
status=0
for lib in up ours; do "$W/interop-$lib" write "$W/$lib.gguf" || { echo "$lib: write failed"; status=1; }; done
if cmp -s "$W/up.gguf" "$W/ours.gguf"; then echo "GGUF files written: byte-identical ($(wc -c < "$W/up.gguf") bytes)"
else echo "GGUF files written: differ (cmp: $(cmp "$W/up.gguf" "$W/ours.gguf" 2>&1 | head -n 1))"; fi
for r in up ours; do
  for f in up ours; do
    rm -rf "$W/read-$r-$f"; mkdir -p "$W/read-$r-$f"
    if "$W/interop-$r" read "$W/$f.gguf" "$W/read-$r-$f" 2> "$W/read-$r-$f.err"; then :
    else echo "$r reading $f's file: checks failed"; cat "$W/read-$r-$f.err"; status=1; fi
  done
done
# the same dump, every reader of every file
same() {
  for d in read-up-ours read-ours-up read-ours-ours; do cmp -s "$W/read-up-up/$1" "$W/$d/$1" || return 1; done
}
for x in meta.txt tensors.txt; do
  if same "$x"; then echo "$x: identical (4 reads)"; else echo "$x: DIFFERS"; status=1; fi
done
printf '%-14s %-10s %-10s\n' tensor bytes floats
for t in $(sed 's/ .*//' "$W/read-up-up/tensors.txt"); do
  q=identical; f=identical
  same "$t.q" || { q=DIFFER; status=1; }
  same "$t.f32" || { f=DIFFER; status=1; }
  printf '%-14s %-10s %-10s\n' "$t" "$q" "$f"
done

echo
echo "mul_mat, K = 4096, M = 64: error against float64 of the dequantized weights (max abs / relative L2)"
printf '%-7s %3s %9s  %-21s %-21s %s\n' type N max_ref upstream ours "ours/upstream (max abs)"
for t in $("$W/interop-ours" types); do
  for n in 1 16; do
    u=$("$W/interop-up" accuracy "$t" "$n" 2>/dev/null || echo "$t $n - - -")
    o=$("$W/interop-ours" accuracy "$t" "$n" 2>/dev/null || echo "$t $n - - -")
    echo "$u $o" | awk '{ r = ($3 == "-" || $8 == "-" || $3 == 0) ? "-" : sprintf("%.2f", $8 / $3);
      printf "%-7s %3s %9s  %-21s %-21s %s\n", $1, $2, $4, $3 " / " $5, $8 " / " $10, r }'
  done
done
exit $status

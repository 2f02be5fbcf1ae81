#!/bin/sh
# compare-upstream-perf.sh -- speed of ggmlr against upstream ggml's CPU
# backend, both built from source in the same run.
#
#   scripts/compare-upstream-perf.sh UPSTREAM_CHECKOUT [WORK_DIR]
#
# UPSTREAM_CHECKOUT: a checkout of github:ggml-org/ggml (e.g. `git archive
# HEAD | tar -x -C DIR` of a snapshot); this script fetches nothing and copies
# nothing of it into this repository. WORK_DIR (default: a temporary
# directory, removed at the end) keeps the builds, so a second run only
# rebuilds what changed. It builds
#   - upstream's CPU backend and its tests/test-backend-ops (Release,
#     GGML_NATIVE=ON), and bench/upstream_ops.c against it;
#   - this repository (Release, installed into WORK_DIR/prefix), the same
#     unchanged test-backend-ops.cpp and bench/upstream_ops.c against it
#     (upstream's build lines: scripts/upstream-build.sh, which
#     compare-upstream-gguf.sh shares);
# then runs, op by op, upstream's binary and then ours (one after the other,
# never at once; both on nproc threads, test-backend-ops' default), ROUNDS
# times (default 1) interleaved (upstream, ours, upstream, ...), and keeps
# each case's least us/run over the rounds (on a loaded host the least is
# the run least disturbed by other work):
#   test-backend-ops perf -o OP  for CONV_2D, IM2COL, SWIGLU (its GLU cases)
#   upstream_ops THREADS OP      for NORM, RMS_NORM, L2_NORM, RMS_NORM_BACK,
#                                GROUP_NORM, POOL_2D, GLU (upstream's perf
#                                set has no case for these but GLU's SWIGLU)
# TBO_OPS and BENCH_OPS (space-separated) replace those lists; PARAMS, a
# regular expression, keeps the test-backend-ops cases whose parameters match
# (test-backend-ops -p; its CONV_2D set alone runs minutes on 2 cores).
# BENCH_CLOCK=cpu makes upstream_ops time the process's CPU time instead of
# wall-clock time (bench/upstream_ops.c). It prints one line per case: op,
# case, upstream us/run, ours us/run and
# upstream / ours (> 1: ggmlr is faster). A case either side does not run
# (not supported, or a constructor we refuse) shows "-".
set -eu
if [ $# -lt 1 ] || [ ! -f "$1/tests/test-backend-ops.cpp" ]; then
  echo "usage: $0 UPSTREAM_CHECKOUT [WORK_DIR]   (UPSTREAM_CHECKOUT/tests/test-backend-ops.cpp must exist)" >&2
  exit 2
fi
ROUNDS=${ROUNDS:-1}
case $ROUNDS in ''|*[!0-9]*|0) echo "$0: ROUNDS must be a whole number >= 1 (got '$ROUNDS')" >&2; exit 2;; esac
UP=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 2 ]; then
  mkdir -p "$2"; W=$(cd "$2" && pwd)
else
  W=$(mktemp -d); trap 'rm -rf "$W"' EXIT INT TERM
fi
JOBS=${JOBS:-2}
THREADS=$(nproc)

. "$ROOT/scripts/upstream-build.sh"
upstream_build "$UP" "$W/up" test-backend-ops
upstream_cc "$W/upstream_ops-up" "$ROOT/bench/upstream_ops.c"

echo "building ggmlr ($ROOT) in $W/ours" >&2
cmake -S "$ROOT" -B "$W/ours" -DCMAKE_BUILD_TYPE=Release -DGGMLR_MPI=OFF -DGGMLR_BUILD_TESTS=OFF \
      -DGGMLR_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$W/ours" -j"$JOBS" >/dev/null
cmake --install "$W/ours" --prefix "$W/prefix" >/dev/null
LIB="$W/prefix/lib"; [ -d "$LIB" ] || LIB="$W/prefix/lib64"
# relinked when its source is newer or it was linked against another prefix
# (its run path must be this WORK_DIR's, or it runs a stale library)
if [ ! -x "$W/tbo-ours" ] || [ "$UP/tests/test-backend-ops.cpp" -nt "$W/tbo-ours" ] ||
   ! readelf -d "$W/tbo-ours" 2>/dev/null | grep -q "path: \[$LIB\]"; then
  g++ -std=c++17 -O2 -I"$W/prefix/include" "$UP/tests/test-backend-ops.cpp" -o "$W/tbo-ours" \
      -L"$LIB" -lggmlr -Wl,-rpath,"$LIB" -lm -lpthread
fi
cc -std=c11 -O2 -I"$W/prefix/include" "$ROOT/bench/upstream_ops.c" -o "$W/upstream_ops-ours" \
   -L"$LIB" -lggmlr -Wl,-rpath,"$LIB" -lm -lpthread

echo "CPU: $(grep -m 1 'model name' /proc/cpuinfo | sed 's/.*: //'), $THREADS threads" >&2
# one binary's figures: "OP<TAB>case<TAB>us/run" per line, colour codes removed
figures() {
  sed 's/\x1b\[[0-9;]*m//g' | sed -n -E 's/^  ([A-Z0-9_]+)\((.*)\): +[0-9]+ runs - +([0-9.]+) us\/run.*/\1\t\2\t\3/p'
}
: > "$W/up.tsv"; : > "$W/ours.tsv"
set -- ${PARAMS:+-p "$PARAMS"}
round=0
while [ "$round" -lt "$ROUNDS" ]; do
  round=$((round + 1))
  for op in ${TBO_OPS:-CONV_2D IM2COL SWIGLU}; do
    "$W/up/bin/test-backend-ops" perf -b CPU -o "$op" "$@" | figures >> "$W/up.tsv"
    "$W/tbo-ours" perf -b CPU -o "$op" "$@" | figures >> "$W/ours.tsv"
  done
  for op in ${BENCH_OPS:-NORM RMS_NORM L2_NORM RMS_NORM_BACK GROUP_NORM POOL_2D GLU}; do
    "$W/upstream_ops-up" "$THREADS" "$op" | figures >> "$W/up.tsv"
    "$W/upstream_ops-ours" "$THREADS" "$op" | figures >> "$W/ours.tsv"
  done
done
# each case's least us/run over the rounds
for side in up ours; do
  awk -F '\t' '{ k = $1 "\t" $2 } !(k in m) || $3 + 0 < m[k] { m[k] = $3 + 0 }
                END { for (k in m) printf "%s\t%.2f\n", k, m[k] }' "$W/$side.tsv" | sort > "$W/$side.min"
  mv "$W/$side.min" "$W/$side.tsv"
done

printf 'op\tcase\tupstream us/run\tours us/run\tupstream/ours\n'
awk -F '\t' 'NR == FNR { ours[$1 "\t" $2] = $3; next }
             { k = $1 "\t" $2; o = (k in ours) ? ours[k] : "-"; seen[k] = 1
               printf "%s\t%s\t%s\t%s\t%s\n", $1, $2, $3, o, o == "-" || o == 0 ? "-" : sprintf("%.2f", $3 / o) }
             END { for (k in ours) if (!(k in seen)) printf "%s\t-\t%s\t-\n", k, ours[k] }' "$W/ours.tsv" "$W/up.tsv"

#!/bin/sh
# Compiles upstream ggml's own test programs (its tests/*.c and tests/*.cpp),
# examples/simple and examples/mnist, unchanged, against the installed ggmlr,
# and runs those that link.
#
#   scripts/upstream-tests.sh UPSTREAM_CHECKOUT [PREFIX]
#
# UPSTREAM_CHECKOUT: a checkout of github:ggml-org/ggml (only its tests/ and
# examples/ are read; this script fetches nothing). PREFIX: an installed ggmlr
# (include/, lib/); without it, this repository is built in a temporary
# directory and installed there. Prints one line per file (COMPILES +
# PASS/FAIL/TIMEOUT of its run, or the first compiler or linker error), then
# the counts; the per-file results of a run are in docs/upstream-tests.md.
# examples/mnist (left out when the checkout lacks it) runs on synthetic
# digits that scripts/synthetic-mnist.c writes in MNIST's file format:
# mnist-train trains the fully connected and the convolutional model (30
# epochs each, as upstream's program fixes: minutes, the convolutional one
# tens of minutes on two busy cores; two hours at most), mnist-eval evaluates
# each saved GGUF model on the test images; a line per run gives the
# validation loss and accuracy after the first and the last epoch, the test
# loss and accuracy, and the time. Exits 0.
set -eu
if [ $# -lt 1 ] || [ ! -d "$1/tests" ]; then
  echo "usage: $0 UPSTREAM_CHECKOUT [PREFIX]   (UPSTREAM_CHECKOUT/tests must exist)" >&2
  exit 2
fi
UP=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT INT TERM
if [ $# -ge 2 ]; then
  PREFIX=$(cd "$2" && pwd)
else
  PREFIX="$WORK/prefix"
  cmake -S "$ROOT" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DGGMLR_MPI=OFF -DGGMLR_BUILD_TESTS=OFF \
        -DGGMLR_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$WORK/build" -j2 >/dev/null
  cmake --install "$WORK/build" --prefix "$PREFIX" >/dev/null
fi
LIBDIR="$PREFIX/lib"
[ -d "$LIBDIR" ] || LIBDIR="$PREFIX/lib64"

n=0; compiled=0; passed=0
# upstream's tests, then its examples/simple (they need no downloaded data)
for src in "$UP"/tests/*.c "$UP"/tests/*.cpp "$UP"/examples/simple/*.cpp; do
  [ -f "$src" ] || continue
  name=$(basename "$src")
  n=$((n + 1))
  case "$name" in
    *.c)   cc=${CC:-gcc};  std=-std=c11 ;;
    *.cpp) cc=${CXX:-g++}; std=-std=c++17 ;;
  esac
  bin="$WORK/${name%.*}"
  if LC_ALL=C "$cc" $std -O1 -I"$PREFIX/include" "$src" -o "$bin" -L"$LIBDIR" -lggmlr -lm -lpthread >"$WORK/log" 2>&1; then
    compiled=$((compiled + 1))
    # each program in a scratch directory of its own; 300 s at most
    mkdir -p "$WORK/run-$name"
    if (cd "$WORK/run-$name" && LD_LIBRARY_PATH="$LIBDIR" timeout 300 "$bin" >"$WORK/out" 2>&1); then
      passed=$((passed + 1))
      echo "$name: COMPILES, PASS"
    else
      rc=$?
      [ $rc -eq 124 ] && verdict=TIMEOUT || verdict="FAIL (exit $rc): $(tail -n 1 "$WORK/out")"
      echo "$name: COMPILES, $verdict"
    fi
  else
    # what is missing: every undeclared name, unknown type, missing header or
    # undefined symbol the compiler and linker name (else the first error)
    missing=$(sed -n -E "s/.*'([A-Za-z0-9_.-]+)' (was not declared|undeclared|does not name a type|has no member).*/\1/p;
                         s/.*implicit declaration of function '([A-Za-z0-9_]+)'.*/\1/p;
                         s/.*unknown type name '([A-Za-z0-9_]+)'.*/\1/p;
                         s/.*undefined reference to \`([A-Za-z0-9_]+)'.*/\1/p;
                         s/.*fatal error: ([A-Za-z0-9_.-]+): No such file.*/\1/p" "$WORK/log" | sort -u | tr '\n' ' ')
    [ -n "$missing" ] || missing=$(grep -m 1 -E 'error' "$WORK/log" | sed "s|$UP/tests/||" || true)
    echo "$name: does not compile; missing: $missing"
  fi
done

# examples/mnist: two programs (mnist-train, mnist-eval) of three files each,
# run on synthetic data; a program passes when all its runs exit 0 (and an
# evaluation scores above 50%, chance being 10%)
MNIST="$UP/examples/mnist"
if [ -f "$MNIST/mnist-common.cpp" ]; then
  mkdir -p "$WORK/mnist"
  ${CC:-gcc} -std=c11 -O2 "$ROOT/scripts/synthetic-mnist.c" -o "$WORK/synthetic-mnist" -lm
  "$WORK/synthetic-mnist" "$WORK/mnist" >/dev/null
  # the lines of a run's output that match $2, carriage returns (its progress bar) as new lines
  lines() { tr '\r' '\n' <"$1" | grep -E "$2"; }
  last_line() { lines "$1" "$2" | tail -n 1; }
  for prog in mnist-train mnist-eval; do
    n=$((n + 1))
    if ! LC_ALL=C ${CXX:-g++} -std=c++17 -O2 -I"$PREFIX/include" "$MNIST/mnist-common.cpp" "$MNIST/$prog.cpp" \
           -o "$WORK/$prog" -L"$LIBDIR" -lggmlr -lm -lpthread >"$WORK/log" 2>&1; then
      echo "$prog.cpp: does not compile: $(grep -m 1 -E 'error' "$WORK/log" || true)"
      continue
    fi
    compiled=$((compiled + 1))
    ok=1
    for arch in fc cnn; do
      start=$(date +%s)
      if [ $prog = mnist-train ]; then
        (cd "$WORK/mnist" && LD_LIBRARY_PATH="$LIBDIR" timeout 7200 "$WORK/$prog" mnist-$arch mnist-$arch-f32.gguf \
           train-images-idx3-ubyte train-labels-idx1-ubyte >"$WORK/out" 2>&1) && rc=0 || rc=$?
        # validation after the first and the last epoch
        result=$(lines "$WORK/out" '^val: .*data=([0-9]+)/\1 ' | sed -n -E '1p;$p' |
                 sed -E 's/.* (loss=[^ ]*) (acc=[^ ]*) .*/val \1 \2/' | paste -s -d '>' | sed 's/>/ -> /')
      else
        (cd "$WORK/mnist" && LD_LIBRARY_PATH="$LIBDIR" timeout 300 "$WORK/$prog" mnist-$arch-f32.gguf \
           t10k-images-idx3-ubyte t10k-labels-idx1-ubyte >"$WORK/out" 2>&1) && rc=0 || rc=$?
        acc=$(last_line "$WORK/out" 'test_acc=' | sed -E 's/.*test_acc=([0-9]+).*/\1/')
        [ $rc -ne 0 ] || [ "${acc:-0}" -gt 50 ] || rc=1
        result="$(last_line "$WORK/out" 'test_loss=' | sed 's/.*main: //') $(last_line "$WORK/out" 'test_acc=' | sed 's/.*main: //')"
      fi
      seconds=$(( $(date +%s) - start ))
      if [ $rc -eq 0 ]; then
        echo "$prog.cpp mnist-$arch: COMPILES, PASS ($result; ${seconds} s)"
      else
        ok=0
        [ $rc -eq 124 ] && verdict=TIMEOUT || verdict="FAIL (exit $rc): $(tail -n 1 "$WORK/out")"
        echo "$prog.cpp mnist-$arch: COMPILES, $verdict"
      fi
    done
    [ $ok -eq 0 ] || passed=$((passed + 1))
  done
fi
echo "upstream tests and examples: $compiled of $n compile, $passed of $n pass"

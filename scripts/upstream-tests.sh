#!/bin/sh
# Compiles upstream ggml's own test programs (its tests/*.c and tests/*.cpp)
# and examples/simple, unchanged, against the installed ggmlr, and runs those
# that link.
#
#   scripts/upstream-tests.sh UPSTREAM_CHECKOUT [PREFIX]
#
# UPSTREAM_CHECKOUT: a checkout of github:ggml-org/ggml (only its tests/ is
# read; this script fetches nothing). PREFIX: an installed ggmlr (include/,
# lib/); without it, this repository is built in a temporary directory and
# installed there. Prints one line per file (COMPILES + PASS/FAIL/TIMEOUT of
# its run, or the first compiler or linker error), then the counts; the
# per-file results of a run are in docs/upstream-tests.md. Exits 0.
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
echo "upstream tests and examples/simple: $compiled of $n compile, $passed of $n pass"

#!/bin/sh
# Runs ALL tests: the C library (gcc, and clang when present, warnings as
# errors), both libFuzzer targets for two minutes each, an upstream-style program built against the installed library
# (pkg-config and find_package), and the R package (install, testthat,
# R CMD build + R CMD check). Installs what it needs on Debian when run as root.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=$(nproc 2>/dev/null || echo 2)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0
stage() { printf '\n=== %s ===\n' "$1"; stage_t0=$(date +%s); }
ok() { passed=$((passed + 1)); echo "(stage passed in $(($(date +%s) - stage_t0)) s)"; }
fail() { failed=$((failed + 1)); echo "STAGE FAILED after $(($(date +%s) - stage_t0)) s: $1" >&2; }

need_pkgs=""
command -v pkg-config >/dev/null 2>&1 || need_pkgs="$need_pkgs pkg-config"
command -v R >/dev/null 2>&1 || need_pkgs="$need_pkgs r-base-core r-base-dev"
if command -v Rscript >/dev/null 2>&1; then
  Rscript -e 'quit(status = !requireNamespace("testthat", quietly = TRUE))' >/dev/null 2>&1 || need_pkgs="$need_pkgs r-cran-testthat"
else
  need_pkgs="$need_pkgs r-cran-testthat"
fi
if [ -n "$need_pkgs" ]; then
  stage "installing:$need_pkgs"
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need_pkgs >/dev/null
  else
    echo "missing:$need_pkgs (install them, or run as root on Debian)" >&2
    exit 1
  fi
fi

stage "C library and tests (gcc, -Werror)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGGMLR_WERROR=ON >/dev/null
cmake --build build -j"$JOBS" >/dev/null
(cd build && ctest --output-on-failure -j"$JOBS")
ok

if command -v clang >/dev/null 2>&1; then
  stage "C library builds warning-free with clang"
  CC=clang cmake -S . -B "$WORK/build-clang" -DCMAKE_BUILD_TYPE=Release -DGGMLR_WERROR=ON >/dev/null
  cmake --build "$WORK/build-clang" -j"$JOBS" >/dev/null
  ok
fi

# Coverage-guided fuzzing: both libFuzzer targets at once (one core each) for
# GGMLR_FUZZ_TIME seconds, on copies of the seed corpora. A crash fails the
# stage and leaves its input in $WORK; keep it as tests/corpus/<target>/regress-*
# so that ctest replays it from then on.
FUZZ_TIME=${GGMLR_FUZZ_TIME:-120}
if command -v clang >/dev/null 2>&1; then
  stage "libFuzzer (clang, ASan + UBSan): fuzz_gguf and fuzz_api, ${FUZZ_TIME} s each"
  if CC=clang cmake -S . -B "$WORK/build-fuzz" -DGGMLR_FUZZ=ON -DGGMLR_BUILD_EXAMPLES=OFF >/dev/null &&
     cmake --build "$WORK/build-fuzz" -j"$JOBS" --target fuzz_gguf fuzz_api >/dev/null; then
    for t in gguf api; do
      mkdir -p "$WORK/corpus-$t" && cp tests/corpus/$t/* "$WORK/corpus-$t/"
      (cd "$WORK" && "$WORK/build-fuzz/tests/fuzz_$t" -max_total_time="$FUZZ_TIME" -timeout=60 -rss_limit_mb=2048 \
         -print_final_stats=1 -artifact_prefix="$WORK/crash-$t-" "$WORK/corpus-$t" >"$WORK/fuzz-$t.log" 2>&1; echo $? >"$WORK/fuzz-$t.rc") &
    done
    wait
    fuzz_ok=true
    for t in gguf api; do
      printf 'fuzz_%s: %s executions, %s inputs in the corpus\n' "$t" \
        "$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/fuzz-$t.log")" "$(ls "$WORK/corpus-$t" | wc -l)"
      if [ "$(cat "$WORK/fuzz-$t.rc")" != 0 ]; then
        fuzz_ok=false
        grep -v '^#' "$WORK/fuzz-$t.log" | tail -n 60
        for c in "$WORK"/crash-$t-*; do [ -e "$c" ] && echo "crash input: $c (base64 below; add it as tests/corpus/$t/regress-<name>)" && base64 "$c" | head -c 20000; done
      fi
    done
    if $fuzz_ok; then ok; else fail "libFuzzer found a crash"; fi
  else
    fail "libFuzzer build"
  fi
fi

stage "installed library: pkg-config and find_package consumers"
cmake --install build --prefix "$WORK/prefix" >/dev/null
LIBDIR=$(ls -d "$WORK"/prefix/lib*/pkgconfig | head -n 1)
PKG_CONFIG_PATH="$LIBDIR" pkg-config --exists ggmlr
cc -o "$WORK/upstream_style" tests/install/upstream_style.c $(PKG_CONFIG_PATH="$LIBDIR" pkg-config --cflags --libs ggmlr) -lm
LD_LIBRARY_PATH="$(dirname "$LIBDIR")" "$WORK/upstream_style"
cmake -S tests/install/cmake_consumer -B "$WORK/consumer" -DCMAKE_PREFIX_PATH="$WORK/prefix" >/dev/null
cmake --build "$WORK/consumer" >/dev/null
LD_LIBRARY_PATH="$(dirname "$LIBDIR")" "$WORK/consumer/upstream_style"
ok

stage "R package: install and testthat"
mkdir -p "$WORK/rlib"
MAKEFLAGS="-j$JOBS" R CMD INSTALL --no-test-load -l "$WORK/rlib" r >"$WORK/rinstall.log" 2>&1 || { cat "$WORK/rinstall.log"; exit 1; }
R_LIBS="$WORK/rlib" Rscript -e '
  library(testthat); library(ggmlR)
  res <- as.data.frame(test_dir("r/tests/testthat", reporter = "summary", stop_on_failure = TRUE))
  cat(sprintf("testthat: %d expectations, %d failed, %d errors\n", sum(res$nb), sum(res$failed), sum(res$error)))'
ok

stage "R package: R CMD build and R CMD check (no ERROR, no WARNING)"
sh r/configure >/dev/null  # the tarball carries the current copy of the C sources
(cd "$WORK" && R CMD build "$ROOT/r" >build.log 2>&1) || { cat "$WORK/build.log"; exit 1; }
TARBALL=$(ls "$WORK"/ggmlR_*.tar.gz)
(cd "$WORK" && _R_CHECK_FORCE_SUGGESTS_=false MAKEFLAGS="-j$JOBS" R CMD check --no-manual "$TARBALL" >check.log 2>&1) || true
tail -n 25 "$WORK/check.log"
if grep -Eq "^Status: .*(ERROR|WARNING)" "$WORK/check.log" || ! grep -q "^Status:" "$WORK/check.log"; then
  cat "$WORK"/ggmlR.Rcheck/00install.out 2>/dev/null | tail -n 30 || true
  echo "R CMD check reported an ERROR or WARNING" >&2
  failed=$((failed + 1))
else
  ok
fi

printf '\nstages: %d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]

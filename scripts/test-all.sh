#!/bin/sh
# Runs ALL tests: the C library (gcc, and clang, warnings as errors), the C
# suite under AddressSanitizer + UndefinedBehaviorSanitizer, the API fuzzer over
# many seeds under them, the libFuzzer targets, the threaded tests under
# ThreadSanitizer, a valgrind memcheck subset, an upstream-style program built
# against the installed library (pkg-config and find_package), data-parallel
# training over MPI (Open MPI; the library is also built and tested without
# it), and the R package (install, testthat, R CMD build + R CMD check).
# Installs what it needs on Debian when run as root.
#
# Every stage reports "(stage passed in N s)" or "STAGE FAILED ..." and the run
# goes on to the next; the last line is "stages: N passed, N failed" and the
# exit status is 1 when any stage failed. `--only NAME[,NAME...]` runs only the
# stages named (`--help` lists them); a stage that uses another one's build
# (valgrind and install: build/ of gcc; fuzz: the asan build) builds it itself
# when run alone, and finds it done when run after it.
# GGMLR_FUZZ_SEEDS / GGMLR_FUZZ_SEQS size the sanitized fuzzing (seeds 1..N),
# GGMLR_FUZZ_TIME / GGMLR_FUZZ_SEED the libFuzzer stage.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)

STAGES="gcc nompi clang asan fuzz tsan valgrind libfuzzer install r-test r-check"
usage() {
  cat <<'EOF'
usage: scripts/test-all.sh [--only NAME[,NAME...]] [--help]

Runs every test stage (or only those named), each reporting passed or FAILED;
exits 1 when any stage failed, 2 on a bad argument.

stages, in the order they run:
  gcc        C library and all ctest tests (gcc, -Werror, with MPI) in build/
  nompi      the library without MPI (GGMLR_MPI=OFF): builds, training tests pass
  clang      the library builds warning-free with clang
  asan       the whole C suite and simple_autodiff under ASan + UBSan (clang)
  fuzz       the API fuzzer over many seeds under ASan + UBSan (builds the asan tree's test_fuzz)
  tsan       the threaded tests under ThreadSanitizer (clang)
  valgrind   valgrind memcheck of a subset (uses build/ of gcc; builds it when needed)
  libfuzzer  the libFuzzer targets, fuzz_gguf, fuzz_api and fuzz_tokenizer (clang)
  install    pkg-config, find_package and MPI consumers of the installed library (uses build/ of gcc; builds it when needed)
  r-test     the R package: install and testthat
  r-check    the R package: R CMD build and R CMD check (no ERROR, no WARNING)

environment: GGMLR_FUZZ_SEEDS (40), GGMLR_FUZZ_SEQS (300): the fuzz stage;
GGMLR_FUZZ_TIME (120 s), GGMLR_FUZZ_SEED (1; 0: random): the libfuzzer stage.
EOF
}

ONLY=""
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --only|--only=*)
      if [ "$1" = --only ]; then list=${2-}; shift $(($# >= 2 ? 2 : 1)); else list=${1#--only=}; shift; fi
      list=$(echo "$list" | tr ',' ' ')
      [ -n "$(echo $list)" ] || { echo "--only needs a stage name (stages: $STAGES)" >&2; exit 2; }
      ONLY="$ONLY $list" ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -n "$ONLY" ]; then
  for s in $ONLY; do
    case " $STAGES " in
      *" $s "*) ;;
      *) echo "unknown stage: $s (stages: $STAGES)" >&2; exit 2 ;;
    esac
  done
else
  ONLY=$STAGES
fi
want() { case " $ONLY " in *" $1 "*) return 0 ;; esac; return 1; }
want_any() { for w in "$@"; do want "$w" && return 0; done; return 1; }

JOBS=$(nproc 2>/dev/null || echo 2)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
passed=0
failed=0
stage_t0=$(date +%s)
stage() { printf '\n=== %s ===\n' "$1"; stage_t0=$(date +%s); }
ok() { passed=$((passed + 1)); echo "(stage passed in $(($(date +%s) - stage_t0)) s)"; }
fail() { failed=$((failed + 1)); echo "STAGE FAILED after $(($(date +%s) - stage_t0)) s: $1" >&2; }

# run NAME TITLE: when NAME is selected, runs the function st_NAME in a subshell
# with `set -e` (the first failing command fails the stage, not the run) and
# counts it as passed or failed.
run() {
  want "$1" || return 0
  stage "$1: $2"
  set +e
  (set -e; "st_$(echo "$1" | tr - _)")
  rc=$?
  set -e
  if [ "$rc" -eq 0 ]; then ok; else fail "$1 (exit status $rc; run it alone: scripts/test-all.sh --only $1)"; fi
}

# ---- what the selected stages need, installed on Debian when run as root ----
need_pkgs=""
if want install; then
  command -v pkg-config >/dev/null 2>&1 || need_pkgs="$need_pkgs pkg-config"
fi
if want_any gcc valgrind install; then
  { command -v mpicc && command -v mpirun; } >/dev/null 2>&1 || need_pkgs="$need_pkgs libopenmpi-dev openmpi-bin"
fi
if want_any r-test r-check; then
  command -v R >/dev/null 2>&1 || need_pkgs="$need_pkgs r-base-core r-base-dev"
  if command -v Rscript >/dev/null 2>&1; then
    Rscript -e 'quit(status = !requireNamespace("testthat", quietly = TRUE))' >/dev/null 2>&1 || need_pkgs="$need_pkgs r-cran-testthat"
  else
    need_pkgs="$need_pkgs r-cran-testthat"
  fi
fi
# clang's sanitizer runtimes (libclang-rt-14-dev on Debian 12) and valgrind
if want_any clang asan fuzz tsan libfuzzer; then
  echo 'int main(void) { return 0; }' >"$WORK/probe.c"
  for san in address,undefined thread; do
    clang -fsanitize=$san -o "$WORK/probe" "$WORK/probe.c" >/dev/null 2>&1 || { need_pkgs="$need_pkgs clang libclang-rt-14-dev"; break; }
  done
fi
if want valgrind; then
  command -v valgrind >/dev/null 2>&1 || need_pkgs="$need_pkgs valgrind"
fi
if [ -n "$need_pkgs" ]; then
  stage "installing:$need_pkgs"
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need_pkgs >/dev/null; then
      echo "(installed in $(($(date +%s) - stage_t0)) s)"
    else
      fail "apt-get install$need_pkgs (the stages that need them will fail too)"
    fi
  else
    echo "missing:$need_pkgs (install them, or run as root on Debian)" >&2
    exit 1
  fi
fi

# Open MPI refuses to start as root, or more ranks than cores, unless told (CI: root, 2 cores)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Sanitized builds: -O1 -g, no recovery (the first finding fails the test).
export UBSAN_OPTIONS=print_stacktrace=1
export TSAN_OPTIONS=halt_on_error=1:allocator_may_return_null=1

need_clang() { command -v clang >/dev/null 2>&1 || { echo "clang is not installed (apt-get install clang libclang-rt-14-dev)" >&2; return 1; }; }

# build/ as the gcc stage makes it (a no-op after it); arguments: targets (none: all)
gcc_build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DGGMLR_WERROR=ON -DGGMLR_MPI=ON >/dev/null
  if [ $# -eq 0 ]; then cmake --build build -j"$JOBS" >/dev/null; else cmake --build build -j"$JOBS" --target "$@" >/dev/null; fi
}
# the asan stage's tree in $WORK (a no-op after it); arguments: targets (none: all)
asan_build() {
  need_clang
  CC=clang cmake -S . -B "$WORK/build-asan" -DGGMLR_WERROR=ON -DGGMLR_SANITIZE=address,undefined >/dev/null
  if [ $# -eq 0 ]; then cmake --build "$WORK/build-asan" -j"$JOBS" >/dev/null; else cmake --build "$WORK/build-asan" -j"$JOBS" --target "$@" >/dev/null; fi
}

st_gcc() {
  gcc_build
  (cd build && ctest --output-on-failure -j"$JOBS")
}

st_nompi() {
  cmake -S . -B "$WORK/build-nompi" -DCMAKE_BUILD_TYPE=Release -DGGMLR_WERROR=ON -DGGMLR_MPI=OFF >/dev/null
  cmake --build "$WORK/build-nompi" -j"$JOBS" >/dev/null
  (cd "$WORK/build-nompi" && ctest --output-on-failure -j"$JOBS" -R "test_opt|test_gpt|test_errors")
}

st_clang() {
  need_clang
  CC=clang cmake -S . -B "$WORK/build-clang" -DCMAKE_BUILD_TYPE=Release -DGGMLR_WERROR=ON >/dev/null
  cmake --build "$WORK/build-clang" -j"$JOBS" >/dev/null
}

st_asan() {
  asan_build
  (cd "$WORK/build-asan" && ctest --output-on-failure -j"$JOBS")
  "$WORK/build-asan/examples/simple_autodiff" >/dev/null
}

FUZZ_SEEDS=${GGMLR_FUZZ_SEEDS:-40}
FUZZ_SEQS=${GGMLR_FUZZ_SEQS:-300}
st_fuzz() {
  asan_build test_fuzz
  mkdir -p "$WORK/fuzz"
  seq 1 "$FUZZ_SEEDS" | xargs -P "$JOBS" -I{} sh -c '"$1" "$2" 80 {} >"$3/fuzz/{}.log" 2>&1 ||
    { echo "fuzz seed {} FAILED:"; grep -v "failed to allocate" "$3/fuzz/{}.log" | tail -n 40; exit 1; }' \
    sh "$WORK/build-asan/tests/test_fuzz" "$FUZZ_SEQS" "$WORK"
  cat "$WORK"/fuzz/*.log | awk '/^fuzz: seed/ { n++; s += $4; c += $6; f += substr($8, 2); k += $12; i += $14 }
    END { printf "fuzz: %d seeds, %d sequences, %d calls (%d failed as expected), %d computes, %d invariant checks\n", n, s, c, f, k, i }'
}

# (not test_threadpool: it counts the process's threads and forks, which TSan's own
# thread and its fork limits break; the pool runs under TSan in all of these)
st_tsan() {
  need_clang
  tsan_tests="test_threads test_concurrency test_flash_attn_seed test_flash_attn_forward test_flash_attn_backward test_flash_attn_graph test_fuzz"
  CC=clang cmake -S . -B "$WORK/build-tsan" -DGGMLR_WERROR=ON -DGGMLR_BUILD_EXAMPLES=OFF -DGGMLR_SANITIZE=thread >/dev/null
  cmake --build "$WORK/build-tsan" -j"$JOBS" --target $tsan_tests >/dev/null
  cd "$WORK/build-tsan/tests"
  set -x
  ./test_threads
  ./test_concurrency
  ./test_flash_attn_seed
  GGMLR_TEST_PARTS=threads ./test_flash_attn_forward
  GGMLR_TEST_PARTS=threads ./test_flash_attn_backward
  GGMLR_TEST_PARTS=threads ./test_flash_attn_graph
  ./test_fuzz 100 80 1
}

# vg PARTS TEST: PARTS as GGMLR_TEST_PARTS ("" for all); the random sweeps are left to the ASan stage
VG="valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite"
vg() { echo "+ (in build/tests) GGMLR_TEST_PARTS=$1 $VG ./$2"; (cd build/tests && GGMLR_TEST_PARTS="$1" $VG "./$2"); }
st_valgrind() {
  command -v valgrind >/dev/null 2>&1 || { echo "valgrind is not installed (apt-get install valgrind)" >&2; return 1; }
  gcc_build test_smoke test_backend test_flash_attn_seed test_flash_attn_forward test_flash_attn_backward test_flash_attn_graph
  vg "" test_smoke
  vg "" test_backend
  vg "" test_flash_attn_seed
  vg by_hand,named,all_masked,threads test_flash_attn_forward
  vg named,finite_differences,packing,threads test_flash_attn_backward
  vg "" test_flash_attn_graph
}

# Coverage-guided fuzzing: the libFuzzer targets at once for
# GGMLR_FUZZ_TIME seconds, on copies of the seed corpora. A crash fails the
# stage and prints its input (base64); keep it as tests/corpus/<target>/regress-*
# so that ctest replays it from then on.
FUZZ_TIME=${GGMLR_FUZZ_TIME:-120}
FUZZ_SEED=${GGMLR_FUZZ_SEED:-1}  # fixed: a CI run is reproducible (0: a random seed)
st_libfuzzer() {
  need_clang
  echo "fuzz_gguf, fuzz_api and fuzz_tokenizer, ${FUZZ_TIME} s each, seed $FUZZ_SEED"
  CC=clang cmake -S . -B "$WORK/build-fuzz" -DGGMLR_FUZZ=ON -DGGMLR_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$WORK/build-fuzz" -j"$JOBS" --target fuzz_gguf fuzz_api fuzz_tokenizer >/dev/null
  for t in gguf api tokenizer; do
    mkdir -p "$WORK/corpus-$t" && cp tests/corpus/$t/* "$WORK/corpus-$t/"
    (cd "$WORK"; rc=0
     "$WORK/build-fuzz/tests/fuzz_$t" -seed="$FUZZ_SEED" -max_total_time="$FUZZ_TIME" -timeout=60 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$WORK/crash-$t-" "$WORK/corpus-$t" >"$WORK/fuzz-$t.log" 2>&1 || rc=$?
     echo "$rc" >"$WORK/fuzz-$t.rc") &
  done
  wait
  fuzz_ok=true
  for t in gguf api tokenizer; do
    printf 'fuzz_%s: %s executions, %s inputs in the corpus\n' "$t" \
      "$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/fuzz-$t.log")" "$(ls "$WORK/corpus-$t" | wc -l)"
    if [ "$(cat "$WORK/fuzz-$t.rc")" != 0 ]; then
      fuzz_ok=false
      grep -v '^#' "$WORK/fuzz-$t.log" | tail -n 60
      for c in "$WORK"/crash-$t-*; do
        if [ -e "$c" ]; then echo "crash input: $c (base64 below; add it as tests/corpus/$t/regress-<name>)"; base64 "$c" | head -c 20000; fi
      done
    fi
  done
  $fuzz_ok || { echo "libFuzzer found a crash" >&2; return 1; }
}

st_install() {
  gcc_build
  rm -rf "$WORK/prefix"
  cmake --install build --prefix "$WORK/prefix" >/dev/null
  LIBDIR=$(ls -d "$WORK"/prefix/lib*/pkgconfig | head -n 1)
  PKG_CONFIG_PATH="$LIBDIR" pkg-config --exists ggmlr
  cc -o "$WORK/upstream_style" tests/install/upstream_style.c $(PKG_CONFIG_PATH="$LIBDIR" pkg-config --cflags --libs ggmlr) -lm
  LD_LIBRARY_PATH="$(dirname "$LIBDIR")" "$WORK/upstream_style"
  cmake -S tests/install/cmake_consumer -B "$WORK/consumer" -DCMAKE_PREFIX_PATH="$WORK/prefix" >/dev/null
  cmake --build "$WORK/consumer" >/dev/null
  LD_LIBRARY_PATH="$(dirname "$LIBDIR")" "$WORK/consumer/upstream_style"
  # ggml-mpi.h through pkg-config: the MPI flags come with the library's
  cc -o "$WORK/mpi_consumer" tests/install/mpi_consumer.c $(PKG_CONFIG_PATH="$LIBDIR" pkg-config --cflags --libs ggmlr) -lm
  LD_LIBRARY_PATH="$(dirname "$LIBDIR")" mpirun -x LD_LIBRARY_PATH -np 2 "$WORK/mpi_consumer"
}

st_r_test() {
  mkdir -p "$WORK/rlib"
  if ! MAKEFLAGS="-j$JOBS" R CMD INSTALL --no-test-load -l "$WORK/rlib" r >"$WORK/rinstall.log" 2>&1; then
    cat "$WORK/rinstall.log"; echo "R CMD INSTALL failed" >&2; return 1
  fi
  R_LIBS="$WORK/rlib" Rscript -e '
    library(testthat); library(ggmlR)
    res <- as.data.frame(test_dir("r/tests/testthat", reporter = "summary", stop_on_failure = TRUE))
    cat(sprintf("testthat: %d expectations, %d failed, %d errors\n", sum(res$nb), sum(res$failed), sum(res$error)))'
}

st_r_check() {
  sh r/configure >/dev/null  # the tarball carries the current copy of the C sources
  if ! (cd "$WORK" && R CMD build "$ROOT/r" >build.log 2>&1); then
    cat "$WORK/build.log"; echo "R CMD build failed" >&2; return 1
  fi
  TARBALL=$(ls "$WORK"/ggmlR_*.tar.gz)
  (cd "$WORK" && _R_CHECK_FORCE_SUGGESTS_=false MAKEFLAGS="-j$JOBS" R CMD check --no-manual "$TARBALL" >check.log 2>&1) || true
  tail -n 25 "$WORK/check.log"
  if grep -Eq "^Status: .*(ERROR|WARNING)" "$WORK/check.log" || ! grep -q "^Status:" "$WORK/check.log"; then
    tail -n 30 "$WORK"/ggmlR.Rcheck/00install.out 2>/dev/null || true
    echo "R CMD check reported an ERROR or WARNING" >&2
    return 1
  fi
}

run gcc "C library and tests (gcc, -Werror, with MPI)"
run nompi "C library without MPI (GGMLR_MPI=OFF): builds, training tests pass"
run clang "C library builds warning-free with clang"
run asan "C suite under AddressSanitizer + UndefinedBehaviorSanitizer (clang, GGMLR_SANITIZE=address,undefined, all ctest tests)"
run fuzz "API fuzzer under ASan + UBSan: seeds 1..$FUZZ_SEEDS, $FUZZ_SEQS sequences of 80 calls each"
run tsan "threaded tests under ThreadSanitizer (GGMLR_SANITIZE=thread): test_threads, test_concurrency, test_flash_attn_seed, the attention tests' thread comparisons, a short fuzz"
run valgrind "valgrind memcheck (gcc build in build/): no invalid access, no definite leak"
run libfuzzer "libFuzzer (clang, ASan + UBSan): fuzz_gguf, fuzz_api and fuzz_tokenizer, ${FUZZ_TIME} s each"
run install "installed library: pkg-config and find_package consumers (gcc build in build/)"
run r-test "R package: install and testthat"
run r-check "R package: R CMD build and R CMD check (no ERROR, no WARNING)"

printf '\nstages: %d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]

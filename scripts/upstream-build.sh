# upstream-build.sh -- sourced (`. scripts/upstream-build.sh`) by the compare
# scripts that build programs against upstream ggml's CPU backend. Nothing of
# upstream is copied into this repository: it is built from a checkout given
# by the caller (e.g. `git archive HEAD | tar -x -C DIR` of a snapshot).
#
#   upstream_build UP_CHECKOUT UP_BUILD_DIR [EXTRA_TARGETS...]
#       configures and builds upstream (Release, GGML_NATIVE=ON, no examples)
#       in UP_BUILD_DIR: the ggml libraries and EXTRA_TARGETS (a second call
#       only rebuilds what changed); sets UP (the checkout), UPLIB (the folder
#       of libggml-cpu.so) and UPLIBS (its libggml*.so, for a link line)
#   upstream_cc OUTPUT SOURCE [CC_ARGS...]
#       compiles a C11 source of the public API (ggml.h, ggml-cpu.h, gguf.h)
#       against that build, with -DBENCH_UPSTREAM
# JOBS (default 2) is the build's parallelism.

upstream_build() {
  UP=$(cd "$1" && pwd)
  _upb=$2
  shift 2
  echo "building upstream ggml ($UP) in $_upb" >&2
  cmake -S "$UP" -B "$_upb" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$_upb" -j"${JOBS:-2}" --target ggml "$@" >/dev/null
  UPLIB=$(dirname "$(find "$_upb/" -name 'libggml-cpu.so' | head -n 1)")
  UPLIBS=$(for l in "$UPLIB"/libggml*.so; do printf '%s ' "$l"; done)
}

upstream_cc() {
  _out=$1; _src=$2
  shift 2
  # shellcheck disable=SC2086
  cc -std=c11 -O2 -DBENCH_UPSTREAM -I"$UP/include" "$_src" -o "$_out" "$@" \
     $UPLIBS -Wl,-rpath,"$UPLIB" -lm -lpthread
}

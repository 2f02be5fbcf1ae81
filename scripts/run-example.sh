#!/bin/sh
# The main job: build the library and run the example program, which builds a
# graph with fused attention, differentiates it and prints the gradients next
# to finite differences.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target simple_autodiff >/dev/null
./build/examples/simple_autodiff

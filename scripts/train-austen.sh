#!/bin/sh
# The main job: builds the library and trains the character-level GPT on Jane
# Austen's novels with nanoGPT's "baby GPT" defaults, then prints a sample.
# Leaves out/loss.csv, out/loss.png and out/checkpoint.gguf (out/ is not tracked:
# a run leaves the checkout clean). Options are passed on to the program
# (./scripts/train-austen.sh --help lists them).
#
# The loss picture is drawn with R's graphics: when Rscript is missing and this
# runs as root on Debian, r-base-core is installed first; otherwise the program
# says why no picture was drawn and the curve stays in out/loss.csv
# (Rscript scripts/plot_loss.R out/loss.csv out/loss.png draws it later).
set -eu
cd "$(dirname "$0")/.."
if ! command -v Rscript >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing r-base-core (to draw the loss curve)..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq r-base-core >/dev/null || echo "could not install r-base-core"
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target train_austen >/dev/null
mkdir -p out
exec ./build/train_austen "$@"

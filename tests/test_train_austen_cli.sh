#!/bin/sh
# The main job's option parser (no training: --iters 0 builds the model,
# evaluates one batch and stops):
#  - --help lists the presets with their options;
#  - --preset 5min sets its values (the header shows them), and options on
#    the command line override it, before or after it;
#  - without a preset the defaults are nanoGPT's baby GPT;
#  - an unknown preset or a missing value: a message, exit status 2, no
#    output folder.
# test_train_austen_cli.sh TRAIN_AUSTEN DATA_FILE
set -u
PROG=$1
DATA=$2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
QUICK="--iters 0 --eval-batches 1 --threads 1 --no-plot --sample-len 0 --data $DATA"
failed=0
# expect STATUS TEXT ARGS...: the program exits with STATUS and prints TEXT (stdout or stderr);
# expect_re: TEXT is an extended regular expression
expect() { match -F "$@"; }
expect_re() { match -E "$@"; }
match() {
  how=$1; want=$2; text=$3; shift 3
  timeout 300 "$PROG" "$@" >"$W/log" 2>&1
  rc=$?
  if [ "$rc" -eq "$want" ] && grep -q "$how" -- "$text" "$W/log"; then
    echo "ok   [$*]: status $rc, '$text'"
  else
    echo "FAIL [$*]: status $rc (expected $want), '$text' expected in:"; cat "$W/log"; failed=$((failed + 1))
  fi
}

expect 0 "5min: the lowest validation loss in 5 minutes of training on 2 cores" --help
expect 0 "--layers 4 --heads 4 --embd 128 --ctx 64 --batch 12 --precision bf16 --iters 12000 --decay-iters 12000" --help

# the preset's values
expect 0 "model: 4 layers, 4 heads (4 key/value), embedding 128, context 64" --preset 5min $QUICK --out "$W/p1"
expect 0 "0 steps of 12 x 64 tokens, AdamW lr 0.004 -> 0.0004 (warmup 100, cosine to step 12000), weight decay 0.1" \
  --preset 5min $QUICK --out "$W/p2"
# bf16 products where the CPU multiplies bf16
expect_re 0 "products (bf16|f32 \(no bf16 on this CPU\))$" --preset 5min $QUICK --out "$W/p3"
expect 0 "preset 5min (the lowest validation loss" --preset 5min $QUICK --out "$W/p4"
# overridden, after the preset and before it
expect 0 "model: 2 layers, 2 heads (2 key/value), embedding 96, context 32" --preset 5min --embd 96 --heads 2 --layers 2 --ctx 32 $QUICK --out "$W/o1"
expect 0 "0 steps of 8 x 64 tokens, AdamW lr 0.0005 -> 0.0004 (warmup 10, cosine to step 12000)" \
  --batch 8 --lr 5e-4 --warmup 10 --preset 5min $QUICK --out "$W/o2"
expect_re 0 "products f32$" --preset 5min --precision f32 $QUICK --out "$W/o3"
# no preset: the baby GPT
expect 0 "model: 4 layers, 4 heads (4 key/value), embedding 128, context 64" $QUICK --out "$W/d1"
expect 0 "0 steps of 12 x 64 tokens, AdamW lr 0.001 -> 0.0001 (warmup 100, cosine to step 2000), weight decay 0.1" $QUICK --out "$W/d2"
if grep -q "^preset" "$W/log"; then echo "FAIL a run without --preset prints a preset"; failed=$((failed + 1)); fi

# refused: status 2, a message, nothing written
expect 2 "error: unknown preset 'large' (presets: 5min)" --preset large $QUICK --out "$W/bad1"
expect 2 "error: --preset needs a value" $QUICK --out "$W/bad2" --preset
expect 2 "error: unknown preset '' (presets: 5min)" --preset "" $QUICK --out "$W/bad3"
for d in bad1 bad2 bad3; do
  if [ -e "$W/$d" ]; then echo "FAIL a refused run created $d"; failed=$((failed + 1)); fi
done

echo "test_train_austen_cli: $failed failed"
[ "$failed" -eq 0 ]

#!/bin/sh
# The main job under mpiexec (tiny configuration):
#  - 2 ranks x --batch 2 give the losses, validation losses and gradient norms
#    of one process with --batch 4 (loss.csv, to 1e-5 relative plus one unit
#    in the last printed digit);
#  - a second 2-rank run is bitwise the first (loss.csv and the checkpoint);
#  - a 2-rank run resumed from its step-5 checkpoint ends bitwise where the
#    straight run ends;
#  - ranks started with different models stop at once, each saying why.
# test_train_austen_mpi.sh MPIEXEC TRAIN_AUSTEN DATA_FILE
set -u
MPIEXEC=$1
PROG=$2
DATA=$3
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
TINY="--layers 1 --embd 32 --heads 2 --ctx 16 --iters 10 --lr 1e-2 --warmup 2 --decay-iters 10 --eval-interval 5
      --eval-batches 3 --threads 1 --no-plot --sample-len 0 --data $DATA"
failed=0
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
ok() { echo "ok   $*"; }
run() {  # run OUT_DIR ARGS...: the job, quiet unless it fails
  out=$1; shift
  if ! timeout 300 "$@" --out "$out" >"$out.log" 2>&1; then cat "$out.log"; return 1; fi
}

# same_csv A B: every field equal to 1e-5 relative, plus one unit in B's last printed digit
same_csv() {
  awk -F, 'NR == FNR { a[FNR] = $0; n = FNR; next }
    { split(a[FNR], x, ","); m = FNR
      for (i = 1; i <= NF; i++) {
        if ((x[i] == "") != ($i == "")) { bad++; continue }
        if ($i == "" || x[i] == $i) continue
        mant = $i; sub(/[eE].*/, "", mant); d = index(mant, ".") ? length(mant) - index(mant, ".") : 0
        unit = 10 ^ -d; diff = x[i] - $i; if (diff < 0) diff = -diff; ref = $i < 0 ? -$i : $i
        if (diff > 1e-5 * ref + unit) { bad++; printf "  line %d field %d: %s vs %s\n", FNR, i, x[i], $i }
      } }
    END { exit (bad > 0 || m != n) }' "$1" "$2"
}

run "$W/one" "$PROG" $TINY --batch 4 || fail "one process"
run "$W/two" "$MPIEXEC" -np 2 "$PROG" $TINY --batch 2 || fail "2 ranks"
run "$W/again" "$MPIEXEC" -np 2 "$PROG" $TINY --batch 2 || fail "2 ranks again"
if [ -f "$W/one/loss.csv" ] && [ -f "$W/two/loss.csv" ] && same_csv "$W/one/loss.csv" "$W/two/loss.csv" &&
   [ "$(wc -l <"$W/two/loss.csv")" -eq 12 ]; then
  ok "2 ranks x batch 2 = 1 process x batch 4 ($(wc -l <"$W/two/loss.csv") lines of loss.csv)"
else
  fail "2 ranks x batch 2 differ from 1 process x batch 4"; paste -d'|' "$W/one/loss.csv" "$W/two/loss.csv"
fi
if cmp -s "$W/two/loss.csv" "$W/again/loss.csv" && cmp -s "$W/two/checkpoint.gguf" "$W/again/checkpoint.gguf"; then
  ok "a second 2-rank run is bitwise the first"
else
  fail "two 2-rank runs differ"
fi

run "$W/part" "$MPIEXEC" -np 2 "$PROG" $TINY --batch 2 --checkpoint-every 5 || fail "2 ranks with checkpoints"
run "$W/resumed" "$MPIEXEC" -np 2 "$PROG" $TINY --batch 2 --resume "$W/part/checkpoint-5.gguf" || fail "2 ranks resumed"
if cmp -s "$W/two/checkpoint.gguf" "$W/resumed/checkpoint.gguf"; then
  ok "resumed at step 5 on 2 ranks, the run ends bitwise where the straight run ends"
else
  fail "the resumed 2-rank run ends elsewhere"
fi

# MPMD: rank 0 and rank 1 with different embeddings
start=$(date +%s)
timeout 120 "$MPIEXEC" -np 1 "$PROG" $TINY --batch 2 --out "$W/bad" : -np 1 "$PROG" $TINY --batch 2 --embd 48 --out "$W/bad" \
  >"$W/bad.log" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$took" -le 60 ] &&
   [ "$(grep -c 'model configuration .* differs across the 2 ranks' "$W/bad.log")" -ge 1 ]; then
  ok "different models on the ranks: status $rc after ${took}s: $(grep -m1 'differs across' "$W/bad.log")"
else
  fail "different models on the ranks: status $rc after ${took}s"; cat "$W/bad.log"
fi

echo "test_train_austen_mpi: $failed failed"
[ "$failed" -eq 0 ]

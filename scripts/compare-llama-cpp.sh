#!/bin/sh
# compare-llama-cpp.sh -- ggmlr-llama against llama.cpp itself, on models
# made for the test (ggmlr-llama tiny: random weights).
#
#   scripts/compare-llama-cpp.sh [logits|lora|tokenize|speed|all]   (default all)
#
# LLAMA_CPP: a llama.cpp source tree built with cmake in LLAMA_CPP/build
#   (the library target `llama`, shared; CPU only), default /tmp/lcpp. This
#   script fetches nothing and copies nothing of it into this repository: it
#   compiles scripts/llama-cpp-logits.c (ours) against its llama.h.
# BUILD: our build directory with ggmlr-llama (and tests/test_llama_vocab_vectors
#   for `tokenize`), default build.
# VOCAB_DIR: llama.cpp's test vocabularies (models/ggml-vocab-*.gguf with
#   .inp/.out), default LLAMA_CPP/models.
# THREADS (2), RUNS (5), GEN ("128 400 1000": the generation lengths),
#   LONG_PROMPT (600: bytes of data/austen.txt as a long prompt), LONG_GEN (400:
#   tokens generated after it; 0: no long case): for `speed`. WORK: kept
#   outputs (default a temporary directory, removed at the end).
#
# logits    F32, F16, Q8_0 and Q4_K llama models (4 layers, 256 wide, GQA 4/2)
#           and a qwen2 one: every position's logits of a fixed list of token
#           ids (the tokenizer out of the way), ours against llama.cpp's;
# lora      an adapter written by `ggmlr-llama finetune`, loaded by llama.cpp
#           (llama_adapter_lora_init + llama_set_adapter_lora): the logits
#           with it, ours against llama.cpp's (F32 and Q4_K bases), and the
#           merged model that finetune --merge-out writes, read by both;
# tokenize  llama.cpp's live tokenization of every VOCAB_DIR .inp (and of the
#           same texts on our tiny model's vocabulary) written as .out files,
#           compared with the shipped .out files and with ours
#           (test_llama_vocab_vectors on them);
# speed     greedy generation tokens/s, RUNS interleaved runs each of ours and
#           of llama.cpp's on the same loop (prompt in one batch, then N
#           tokens one at a time) for each N of GEN and for the long prompt,
#           medians per case; llama.cpp runs in both its settings (F32 cache
#           with flash attention off, and --fa: flash attention with its
#           F16 cache) and the ratio is against the faster median.
# The error is max |ours - llama.cpp| over max |llama.cpp| (relative to the
# logits' scale). Exit status 1 when a check fails.
set -eu

what=${1:-all}
LLAMA_CPP=${LLAMA_CPP:-/tmp/lcpp}
BUILD=${BUILD:-build}
VOCAB_DIR=${VOCAB_DIR:-$LLAMA_CPP/models}
THREADS=${THREADS:-2}
RUNS=${RUNS:-5}
GEN=${GEN:-128 400 1000}
LONG_PROMPT=${LONG_PROMPT:-600}
LONG_GEN=${LONG_GEN:-400}
root=$(cd "$(dirname "$0")/.." && pwd)
ours=$root/$BUILD/ggmlr-llama
[ -x "$ours" ] || { echo "error: $ours not built (cmake --build $BUILD --target ggmlr-llama)" >&2; exit 2; }
lib=$LLAMA_CPP/build/bin
[ -f "$lib/libllama.so" ] || { echo "error: $lib/libllama.so not found: build llama.cpp first (see docs/llama.md)" >&2; exit 2; }
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; else WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; fi

ref=$WORK/llama-cpp-logits
cc -O2 -std=c11 -Wall -Wextra -o "$ref" "$root/scripts/llama-cpp-logits.c" -I"$LLAMA_CPP/include" -I"$LLAMA_CPP/ggml/include" \
   -L"$lib" -lllama -lggml -lggml-base -Wl,-rpath,"$lib"

# A prompt of 24 ids of the tiny vocabulary (BOS, bytes, letters, merges).
IDS=1,76,107,104,3,119,111,288,200,35,66,259,270,300,123,9,45,260,101,110,303,150,99,72
failed=0

# compare LABEL OURS REF TOL: prints the error and whether it is within TOL.
compare() {
    python3 - "$@" <<'EOF' || failed=1
import sys
label, ours, ref, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
a = [[float(x) for x in l.split()] for l in open(ours)]
b = [[float(x) for x in l.split()] for l in open(ref)]
assert a and len(a) == len(b) and all(len(x) == len(y) for x, y in zip(a, b)), "shapes differ"
err = max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))
scale = max(abs(y) for rb in b for y in rb)
same_top = sum(ra.index(max(ra)) == rb.index(max(rb)) for ra, rb in zip(a, b))
ok = err <= tol * scale
# positions equal to float rounding: a quantized product differs when one
# activation's rounding to Q8_K flips, and then only from that position on
exact = sum(max(abs(x - y) for x, y in zip(ra, rb)) <= 1e-5 * scale for ra, rb in zip(a, b))
print(f"{label:<26} {len(a):>3} x {len(a[0]):<4} max|diff| {err:9.3e}  rel {err / scale:9.3e}  "
      f"rows within 1e-5 {exact:>2}/{len(a)}  argmax {same_top}/{len(a)}  {'ok' if ok else 'FAIL'} (tol {tol:g})")
sys.exit(0 if ok else 1)
EOF
}

# logits_pair LABEL MODEL TOL [ADAPTER]
logits_pair() {
    label=$1 model=$2 tol=$3
    lora_ours="" lora_ref=""
    if [ $# -ge 4 ]; then lora_ours="--lora $4"; lora_ref="--lora $4"; fi
    # shellcheck disable=SC2086
    "$ours" logits -m "$model" --tokens $IDS --all -t "$THREADS" $lora_ours > "$WORK/ours.txt"
    # shellcheck disable=SC2086
    "$ref" logits "$model" $IDS --all -t "$THREADS" $lora_ref > "$WORK/ref.txt"
    compare "$label" "$WORK/ours.txt" "$WORK/ref.txt" "$tol"
}

do_logits() {
    echo "== logits: ours (ggmlr-llama logits) against llama.cpp's C API, every position of $(echo $IDS | tr ',' ' ' | wc -w) ids"
    for spec in "llama f32 1e-4" "llama f16 1e-3" "llama q8_0 1e-3" "llama q4_k 2e-2" "qwen2 f16 1e-3" "qwen2-tied f32 1e-4"; do
        set -- $spec
        arch=${1%-tied} extra=""
        [ "$1" != "$arch" ] && extra=--tied
        # shellcheck disable=SC2086
        "$ours" tiny -o "$WORK/$1-$2.gguf" --arch "$arch" --type "$2" $extra > /dev/null
        logits_pair "$1 $2" "$WORK/$1-$2.gguf" "$3"
    done
}

do_lora() {
    echo "== lora: an adapter from ggmlr-llama finetune, applied by ours and by llama.cpp"
    head -c 20000 "$root/data/austen.txt" > "$WORK/austen.txt"
    # tolerances as for the bases alone (do_logits): Q4_K's is its own, since
    # llama.cpp's repacked Q4_K kernels differ from its plain ones by ~1e-2
    for spec in "f32 1e-4" "q4_k 2e-2"; do
        set -- $spec
        type=$1 tol=$2
        "$ours" tiny -o "$WORK/base-$type.gguf" --type "$type" > /dev/null
        "$ours" finetune -m "$WORK/base-$type.gguf" --data "$WORK/austen.txt" -o "$WORK/lora-$type.gguf" --targets all \
            --iters 8 --lr 1e-2 --warmup 1 --ctx 32 --eval-every 8 --log-every 8 -t "$THREADS" \
            --merge-out "$WORK/merged-$type.gguf" 2> "$WORK/finetune.log"
        # the adapter must move the logits, or the check below proves nothing
        "$ours" logits -m "$WORK/base-$type.gguf" --tokens $IDS --all -t "$THREADS" > "$WORK/base.txt"
        "$ours" logits -m "$WORK/base-$type.gguf" --tokens $IDS --all -t "$THREADS" --lora "$WORK/lora-$type.gguf" > "$WORK/adapted.txt"
        python3 - "$WORK/base.txt" "$WORK/adapted.txt" <<'EOF' || failed=1
import sys
a = [float(x) for l in open(sys.argv[1]) for x in l.split()]
b = [float(x) for l in open(sys.argv[2]) for x in l.split()]
d = max(abs(x - y) for x, y in zip(a, b)) / max(abs(x) for x in a)
print(f"  (the adapter moves our logits by {d:.3e} of their scale)")
sys.exit(0 if d > 1e-2 else 1)
EOF
        logits_pair "llama $type + lora (all)" "$WORK/base-$type.gguf" "$tol" "$WORK/lora-$type.gguf"
        # the merged model (W + (alpha/r) B A in W's type) read by llama.cpp as a plain model
        logits_pair "llama $type merged" "$WORK/merged-$type.gguf" "$tol"
    done
}

do_tokenize() {
    echo "== tokenize: llama.cpp's tokenizer (live) against its shipped .out files and against ours"
    vocabs=$WORK/vocab
    mkdir -p "$vocabs"
    n=0
    for inp in "$VOCAB_DIR"/ggml-vocab-*.gguf.inp; do
        gguf=${inp%.inp}
        name=$(basename "$gguf")
        [ -f "$gguf" ] || { echo "$name: no vocabulary file, skipped"; continue; }
        if ! "$ref" tokenize "$gguf" "$inp" > "$vocabs/$name.out" 2> "$WORK/tok.err"; then
            echo "$name: llama.cpp did not load it ($(head -c 200 "$WORK/tok.err" | tr '\n' ' ')), skipped"
            rm -f "$vocabs/$name.out"
            continue
        fi
        ln -sf "$gguf" "$vocabs/$name"
        ln -sf "$inp" "$vocabs/$name.inp"
        if cmp -s "$vocabs/$name.out" "${gguf}.out"; then echo "$name: llama.cpp now = its shipped .out"; else echo "$name: llama.cpp now differs from its shipped .out"; fi
        n=$((n + 1))
    done
    # our tiny model's SentencePiece vocabulary, on the same texts
    "$ours" tiny -o "$vocabs/ggmlr-tiny.gguf" > /dev/null
    first=$(ls "$VOCAB_DIR"/ggml-vocab-*.gguf.inp | head -n 1)
    cp "$first" "$vocabs/ggmlr-tiny.gguf.inp"
    "$ref" tokenize "$vocabs/ggmlr-tiny.gguf" "$vocabs/ggmlr-tiny.gguf.inp" > "$vocabs/ggmlr-tiny.gguf.out"
    echo "ours against llama.cpp's live ids ($n test vocabularies + ggmlr-tiny):"
    GGMLR_LLAMA_VOCAB_DIR=$vocabs "$root/$BUILD/tests/test_llama_vocab_vectors" || failed=1
}

# speed_case LABEL PROMPT N: one run of ours, then one of llama.cpp's in
# each setting, on the same prompt; appends "LABEL ours llama.cpp
# llama.cpp-fa" (tokens/s) to speed.txt
speed_case() {
    printf '%s\n__ggml_vocab_test__\n' "$2" > "$WORK/prompt.inp"
    # the same prompt ids for llama.cpp: BOS + its tokenization of the text
    ids=1$("$ref" tokenize "$model" "$WORK/prompt.inp" | tr ' ' ',')
    o=$("$ours" generate -m "$model" -p "$2" -n "$3" --temp 0 -t "$THREADS" 2>&1 > /dev/null | sed -n 's/.*generation: \([0-9]*\) tokens in .* (\([0-9.]*\) tokens\/s).*/\1 \2/p')
    l=$("$ref" speed "$model" "$ids" "$3" -t "$THREADS" | sed -n 's/.*(\([0-9.]*\) tokens\/s).*/\1/p')
    lf=$("$ref" speed "$model" "$ids" "$3" -t "$THREADS" --fa | sed -n 's/.*(\([0-9.]*\) tokens\/s).*/\1/p')
    set -- "$1" "$3" $o "$l" "$lf"
    [ "$3" = "$2" ] || echo "warning: ours stopped after $3 tokens (EOS)"
    printf '%-5s %-22s %16s %16s %16s\n' "$r" "$1" "$4" "$5" "$6"
    echo "$1 $4 $5 $6" >> "$WORK/speed.txt"
}

do_speed() {
    model=$WORK/speed.gguf
    "$ours" tiny -o "$model" --type q4_k --embd 512 --ff 1536 --layers 8 --heads 8 --kv-heads 4 --ctx 2048 --seed 3 > /dev/null
    prompt="It is a truth universally acknowledged, that a single man"
    # the long prompt: the first LONG_PROMPT bytes of Austen, lines joined
    long=$(head -c "$LONG_PROMPT" "$root/data/austen.txt" | tr '\n' ' ')
    echo "== speed: greedy generation, $THREADS threads, q4_k, 8 layers, 512 wide, GQA 8/4, $RUNS interleaved runs (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    printf '%-5s %-22s %16s %16s %16s\n' run case "ggmlr-llama t/s" "llama.cpp t/s" "llama.cpp --fa"
    : > "$WORK/speed.txt"
    for r in $(seq 1 "$RUNS"); do
        for n in $GEN; do speed_case "gen$n" "$prompt" "$n"; done
        [ "$LONG_GEN" = 0 ] || speed_case "long$LONG_PROMPT+gen$LONG_GEN" "$long" "$LONG_GEN"
    done
    python3 - "$WORK/speed.txt" <<'EOF'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1])]
for case in dict.fromkeys(r[0] for r in rows):
    o, l, lf = (statistics.median(float(r[i]) for r in rows if r[0] == case) for i in (1, 2, 3))
    print(f"median {case:<22} {o:16.1f} {l:16.1f} {lf:16.1f}   ours / faster llama.cpp = {o / max(l, lf):.2f}")
EOF
}

case $what in
    logits) do_logits ;;
    lora) do_lora ;;
    tokenize) do_tokenize ;;
    speed) do_speed ;;
    all) do_logits; do_lora; do_tokenize; do_speed ;;
    *) echo "usage: $0 [logits|lora|tokenize|speed|all]" >&2; exit 2 ;;
esac
[ "$failed" = 0 ] || { echo "some checks FAILED" >&2; exit 1; }

#!/usr/bin/env bash
# The speed-up of bf16 and int8 exports over fp32, as the median of several rounds: each
# round times the fp32, bf16 and int8 files of a model one after the other with
# build/sift-latency-bench, so every ratio compares runs a few seconds apart. On this
# shared machine one dtype_bench.sh table moves a ratio by 10-30% between runs; the median
# of rounds is what RESULTS.md quotes for the targets.
#
#   bench/dtype_rounds.sh DIR [MODEL...]
#
# DIR: the temporary folder of `KEEP_TMP=1 bench/dtype_bench.sh` (MODEL.fp32.pt,
# MODEL.bf16.pt, MODEL.int8.pt, texts.txt). MODELs default to "transformer rnn".
# Environment: ROUNDS (default 5), SINGLE (batch-1 calls a run, default 300), BATCHES
# (batches of 64 a pass, default 10), THREADS (default 1), BUILD (default build).
set -euo pipefail
DIR=${1:?usage: bench/dtype_rounds.sh DIR [MODEL...]}
shift
MODELS=("$@")
((${#MODELS[@]})) || MODELS=(transformer rnn)
ROUNDS=${ROUNDS:-5} SINGLE=${SINGLE:-300} BATCHES=${BATCHES:-10} THREADS=${THREADS:-1}
BUILD=${BUILD:-build}
[[ -x $BUILD/sift-latency-bench ]] || { echo "dtype_rounds.sh: $BUILD/sift-latency-bench is missing" >&2; exit 1; }
for m in "${MODELS[@]}"; do
  for v in fp32 bf16 int8; do
    [[ -f $DIR/$m.$v.pt ]] || { echo "dtype_rounds.sh: $DIR/$m.$v.pt is missing" >&2; exit 1; }
  done
  for ((r = 1; r <= ROUNDS; r++)); do
    for v in fp32 bf16 int8; do
      echo "{\"model\": \"$m\", \"variant\": \"$v\", \"round\": $r, \"cpp\": $("$BUILD/sift-latency-bench" \
        --model "$DIR/$m.$v.pt" --texts "$DIR/texts.txt" --threads "$THREADS" --single "$SINGLE" \
        --batches "$BATCHES")}"
    done
  done
done | /usr/bin/python3 -c '
import json, statistics, sys
rows = [json.loads(l) for l in sys.stdin]
print("| model | export | batch 1 p50, median (us) | batch 64 texts/s, median | speed-up vs fp32, batch 1: median (range) | batch 64: median (range) |")
print("|---|---|---|---|---|---|")
for m in dict.fromkeys(r["model"] for r in rows):
    by = {(r["variant"], r["round"]): r["cpp"] for r in rows if r["model"] == m}
    rounds = sorted({k[1] for k in by})
    for v in ("fp32", "bf16", "int8"):
        b1 = [by[("fp32", r)]["p50_us"] / by[(v, r)]["p50_us"] for r in rounds]
        b64 = [by[(v, r)]["batch64_texts_per_s"] / by[("fp32", r)]["batch64_texts_per_s"] for r in rounds]
        print("| %s | %s | %.0f | %.0f | %.2fx (%.2f-%.2f) | %.2fx (%.2f-%.2f) |" % (
            m, v, statistics.median(by[(v, r)]["p50_us"] for r in rounds),
            statistics.median(by[(v, r)]["batch64_texts_per_s"] for r in rounds),
            statistics.median(b1), min(b1), max(b1), statistics.median(b64), min(b64), max(b64)))
print()
print("%d rounds; batch 1 over %s texts, batch 64 the best of 3 passes over %d batches; threads %s." % (
    len(rounds), sys.argv[1], int(sys.argv[2]), sys.argv[3]))
' "$SINGLE" "$BATCHES" "$THREADS"

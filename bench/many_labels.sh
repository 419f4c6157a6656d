#!/usr/bin/env bash
# train.loss with many labels (issue #20): softmax, hs and ns in Sift against the fastText
# CLI's -loss softmax / hs / ns, one run of each in one go, on a synthetic set with
# CLASSES Zipf-distributed labels (sift-gen-corpus --label-zipf 1: label cK has weight
# 1/(K+1)). Same settings everywhere: dim 10, 1 epoch, lr 0.5 with linear decay, bigrams,
# 2M buckets, THREADS training threads (Sift: train.fast_path_threads, the fused loop),
# negatives 5. Reports wall, CPU (user + sys), peak RSS (`/usr/bin/time -v`), the seconds
# of Sift's training loop (its `--json` summary) and precision@1 on the test set
# (fastText's P@1, Sift's test accuracy) as a Markdown table on stdout.
#
#   bench/many_labels.sh                           # 200k lines, 10,000 labels, 1 thread
#   LINES=1000000 THREADS=2 bench/many_labels.sh
#
# Variables: BUILD (default build), BENCH_DATA (where the corpus is generated once;
# default /tmp/siftbench-labels), LINES (200000), CLASSES (10000), THREADS (1), ONLY
# (space-separated losses to run; default "softmax hs ns").
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SIFT=$BUILD/sift
GEN=$BUILD/sift-gen-corpus
BENCH_DATA=${BENCH_DATA:-/tmp/siftbench-labels}
LINES=${LINES:-200000}
CLASSES=${CLASSES:-10000}
THREADS=${THREADS:-1}
ONLY=${ONLY:-softmax hs ns}
for tool in "$SIFT" "$GEN" fasttext /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "many_labels.sh: $tool missing" >&2; exit 1; }
done

# The task of seed 1 (vocabulary 200k so that 10k classes each own some words; half the
# tokens of a topical line from its class); the test set: 20k other lines of that task.
DATA=$BENCH_DATA/l${LINES}-c$CLASSES
GEN_ARGS=(--classes "$CLASSES" --label-zipf 1 --vocab 200000 --mix 0.5 --task-seed 1)
if [[ ! -f $DATA/train.txt ]]; then
  mkdir -p "$DATA/test"
  "$GEN" --lines "$LINES" --seed 1 "${GEN_ARGS[@]}" --out "$DATA/train" >&2
  "$GEN" --lines 20000 --seed 2 "${GEN_ARGS[@]}" --out "$DATA/test/part" >&2
  mv "$DATA/train-00000-of-00001.txt" "$DATA/train.txt"
fi
TEST=$DATA/test/part-00000-of-00001.txt
# Every label of the task: at 10,000 Zipf labels some of the rarest occur in the test lines
# only. fastText counts those lines as misses; Sift refuses a test label it was not told of,
# so it is told of all of them (data.labels) and misses those lines too.
LABELS=$DATA/labels.txt
[[ -f $LABELS ]] || seq 0 $((CLASSES - 1)) | sed 's/^/c/' > "$LABELS"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sift-labels.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# shellcheck source=bench/lib/time_fields.sh
source bench/lib/time_fields.sh

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $LINES lines, $CLASSES labels, $THREADS thread(s)"
echo
echo "| run | wall s | CPU s | peak RSS MB | loop s | precision@1 |"
echo "|---|---|---|---|---|---|"
for loss in $ONLY; do
  /usr/bin/time -v -o "$TMP/ft.time" fasttext supervised -input "$DATA/train.txt" \
    -output "$TMP/ft" -dim 10 -epoch 1 -lr 0.5 -wordNgrams 2 -bucket 2000000 -neg 5 \
    -loss "$loss" -thread "$THREADS" -verbose 0 >&2
  p1=$(fasttext test "$TMP/ft.bin" "$TEST" | awk '$1 == "P@1" { print $2 }')
  read -r wall cpu rss < <(time_fields "$TMP/ft.time")
  echo "| fastText -loss $loss | $wall | $cpu | $rss | | $p1 |"

  rm -rf "$TMP/runs"
  neg=()
  [[ $loss == ns ]] && neg=(--set train.neg=5)
  /usr/bin/time -v -o "$TMP/sift.time" "$SIFT" train configs/synthetic.yaml --quiet --json \
    --set "data.train.path=$DATA/train.txt" --set "data.test.path=$TEST" \
    --set data.valid_split=0 --set "data.labels=$LABELS" --set "run.dir=$TMP/runs" \
    --set "train.loss=$loss" \
    --set "train.fast_path_threads=$THREADS" "${neg[@]}" > "$TMP/sift.json"
  read -r loop p1 < <(/usr/bin/python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print("%.1f %.4f" % (j["train"]["seconds"], j["splits"]["test"]["accuracy"]))' "$TMP/sift.json")
  read -r wall cpu rss < <(time_fields "$TMP/sift.time")
  echo "| Sift train.loss $loss | $wall | $cpu | $rss | $loop | $p1 |"
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

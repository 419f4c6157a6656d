#!/usr/bin/env bash
# The fastText model side by side with the fastText CLI on synthetic text, one run of
# each, in one go: `fasttext supervised` and `sift train configs/synthetic.yaml` on the
# autograd path (train.fast_path: off), the fused SGD path on one thread, and the fused
# path on THREADS Hogwild threads (train.fast_path_threads). Same dim 10, 1 epoch, lr 0.5,
# bigrams, 2M buckets, linear decay. Reports wall, CPU (user + sys), peak RSS
# (`/usr/bin/time -v`) and test accuracy (fastText's P@1, Sift's test accuracy) as a
# Markdown table on stdout.
#
#   bench/fast_path_synthetic.sh                 # 1M lines, THREADS=2
#   LINES=10000000 bench/fast_path_synthetic.sh
#
# Variables: BUILD (default build), BENCH_DATA (where the corpus is generated once;
# default /tmp/siftbench-fast), LINES (1000000), THREADS (2), SIFT_SET (extra --set
# arguments for every Sift run), AUTOGRAD (0: no autograd row), MAIN (1: the one-thread
# fast path again in sift-main, SIFT_LITE=0; `sift train` runs it in sift-lite).
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SIFT=$BUILD/sift
GEN=$BUILD/sift-gen-corpus
BENCH_DATA=${BENCH_DATA:-/tmp/siftbench-fast}
LINES=${LINES:-1000000}
THREADS=${THREADS:-2}
for tool in "$SIFT" "$GEN" fasttext /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "fast_path_synthetic.sh: $tool missing" >&2; exit 1; }
done

# 8 classes, the task of seed 1; the test set: 20k other lines of the same task.
DATA=$BENCH_DATA/c$LINES
if [[ ! -f $DATA/train.txt ]]; then
  mkdir -p "$DATA/train" "$DATA/test"
  "$GEN" --lines "$LINES" --classes 8 --shards 2 --seed 1 --task-seed 1 --out "$DATA/train/part" >&2
  "$GEN" --lines 20000 --classes 8 --seed 2 --task-seed 1 --out "$DATA/test/part" >&2
  cat "$DATA"/train/part-*.txt > "$DATA/train.txt"
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sift-fastpath.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# shellcheck source=bench/lib/time_fields.sh
source bench/lib/time_fields.sh

echo "| run | wall s | CPU s | peak RSS MB | test accuracy |"
echo "|---|---|---|---|---|"
/usr/bin/time -v -o "$TMP/ft.time" fasttext supervised -input "$DATA/train.txt" -output "$TMP/ft" \
  -dim 10 -epoch 1 -lr 0.5 -wordNgrams 2 -bucket 2000000 -thread "$THREADS" -verbose 0 >&2
acc=$(fasttext test "$TMP/ft.bin" "$DATA/test/part-00000-of-00001.txt" | awk '$1 == "P@1" { print $2 }')
read -r wall cpu rss < <(time_fields "$TMP/ft.time")
echo "| fastText CLI, $THREADS threads | $wall | $cpu | $rss | $acc |"

sift_run() {  # label, then --set arguments
  local label=$1
  shift
  rm -rf "$TMP/runs"
  # shellcheck disable=SC2086
  /usr/bin/time -v -o "$TMP/sift.time" "$SIFT" train configs/synthetic.yaml --quiet --json \
    --set "data.train.path=$DATA/train" --set "data.test.path=$DATA/test" \
    --set "run.dir=$TMP/runs" "$@" $(for s in ${SIFT_SET:-}; do echo --set "$s"; done) \
    > "$TMP/sift.json"
  local acc
  acc=$(/usr/bin/python3 -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1]))["splits"]["test"]["accuracy"])' "$TMP/sift.json")
  read -r wall cpu rss < <(time_fields "$TMP/sift.time")
  echo "| Sift, $label | $wall | $cpu | $rss | $acc |"
}
if [[ ${AUTOGRAD:-1} == 1 ]]; then
  sift_run "autograd (train.fast_path: off)" --set train.fast_path=off
fi
sift_run "fused SGD, 1 thread" --set train.fast_path=auto --set train.fast_path_threads=1
if [[ ${MAIN:-0} == 1 ]]; then  # the same run in sift-main, with LibTorch loaded
  SIFT_LITE=0 sift_run "fused SGD, 1 thread, sift-main (SIFT_LITE=0)" --set train.fast_path=auto \
    --set train.fast_path_threads=1
fi
sift_run "fused SGD, $THREADS Hogwild threads" --set train.fast_path=auto \
  --set "train.fast_path_threads=$THREADS"

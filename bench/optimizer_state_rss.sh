#!/usr/bin/env bash
# Peak RSS of saving and resuming a run whose optimizer state is large: a Transformer of
# 19.8M parameters (dim 512, 6 layers, ff 2048) under Adam on TREC's test sample, 2 steps
# and a save of last.ckpt (238 MB: weights and Adam's two moments), then a resume that
# takes one more step and saves again. Each build's runs are interleaved, pair by pair.
#
#   bench/optimizer_state_rss.sh [-n N] [--nproc P] BUILD_DIR [BUILD_DIR...]
#
#   -n N       rounds (default 3); medians are printed
#   --nproc P  train and resume under `sift launch --nproc P` (the largest rank's peak)
#   BUILD_DIR  a folder holding the sift program (sift-main beside it), e.g. build
#
# Run from the repository root. Prints one row per build: the save's and the resume's
# peak RSS in MB, medians of N, then each round's figures.
set -euo pipefail

rounds=3
nproc=1
builds=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) rounds="$2"; shift 2 ;;
    --nproc) nproc="$2"; shift 2 ;;
    -*) echo "optimizer_state_rss.sh: unknown option $1" >&2; exit 2 ;;
    *) builds+=("$1"); shift ;;
  esac
done
[ ${#builds[@]} -gt 0 ] || { echo "optimizer_state_rss.sh: give at least one BUILD_DIR" >&2; exit 2; }

repo=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/big.yaml" <<EOF
run:
  dir: $work/runs
  threads: 1
data:
  train:
    path: $repo/tests/data/trec/TREC.train.sample
  format: label_first
  max_length: 16
model:
  type: transformer
  dim: 512
  layers: 6
  heads: 8
  ff_dim: 2048
  max_positions: 16
train:
  epochs: 1
  max_steps: 2
  batch_size: 4
  save_last: end
  optimizer:
    type: adam
    lr: 0.0001
EOF

# Peak RSS in MB of the command (the largest process it waited for).
peak_mb() {
  /usr/bin/time -f '%M' -o "$work/time" "$@" > "$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
  echo $(( $(tail -1 "$work/time") / 1024 ))
}

run() {  # BUILD_DIR NAME ARGS...: `sift train` directly or under `sift launch`
  local sift="$1/sift"; shift
  if [ "$nproc" -gt 1 ]; then
    peak_mb "$sift" launch --nproc "$nproc" -- train "$@"
  else
    peak_mb "$sift" train "$@"
  fi
}

median() { tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A saves resumes
for r in $(seq 1 "$rounds"); do
  for i in "${!builds[@]}"; do
    b="${builds[$i]}"
    name="b${i}_r$r"
    saves[$i]+="$(run "$b" "$work/big.yaml" --set run.name="$name") "
    resumes[$i]+="$(run "$b" --resume "$work/runs/$name" --set train.max_steps=3) "
  done
done
echo "| build | save: peak RSS MB (median) | resume: peak RSS MB (median) | rounds: save / resume |"
echo "|---|---|---|---|"
for i in "${!builds[@]}"; do
  echo "| ${builds[$i]} | $(echo ${saves[$i]} | median) | $(echo ${resumes[$i]} | median) | ${saves[$i]}/ ${resumes[$i]}|"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); ranks: $nproc"

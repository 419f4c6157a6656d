#!/usr/bin/env bash
# K-fold cross-validation on a data set's training file, Sift against the fastText CLI:
# settings are chosen here, on held-out folds of the training data, never on test sets.
#
#   bench/fasttext_cv.sh [--only A,B] [-k K] [--seeds "1 2"] [--no-fasttext] [--label L]
#                        [-- --set KEY=VALUE ...]
#
#   --only A,B     data sets (ag_news trec sst2 sst2_glue mr; default: all five)
#   -k K           folds (default 5): fold f holds out lines f, f+K, f+2K, ...
#   --seeds "S.."  Sift run.seed and fastText -seed values (default "1 2")
#   --no-fasttext  Sift only (the fastText rows do not depend on Sift's settings)
#   --label L      the row's name for Sift (default "sift")
#   -- ...         extra arguments for every `sift train` (e.g. --set train.batch_size=1)
#
# Both tools read the same files: bench/python/to_fasttext.py's conversion of the training
# file (lower-cased, "__label__NAME text"), cut into folds. Sift trains with configs/NAME.yaml
# (its model, tokenizer and train sections) on the other folds and is tested on the held-out
# one; fastText with the same dim, epochs, lr, bigrams, 2M buckets and -thread THREADS
# (default 2). Prints one line per tool and data set: the accuracy over every held-out line
# of every fold, per seed and pooled over the seeds.
# Environment: SIFT (default build/sift), DATA (default data), THREADS. Run from the
# repository root; needs tools/get_data.sh's data sets and the `fasttext` package.
set -euo pipefail

SIFT=${SIFT:-build/sift}
DATA=${DATA:-data}
THREADS=${THREADS:-2}
PY=/usr/bin/python3
ONLY="ag_news trec sst2 sst2_glue mr"
K=5
SEEDS="1 2"
FASTTEXT=1
LABEL=sift
die() { echo "fasttext_cv.sh: error: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --only) ONLY=${2//,/ }; shift 2 ;;
    -k) K=$2; shift 2 ;;
    --seeds) SEEDS=$2; shift 2 ;;
    --no-fasttext) FASTTEXT=0; shift ;;
    --label) LABEL=$2; shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (--help lists them)" ;;
  esac
done
[[ $K =~ ^[0-9]+$ && $K -ge 2 ]] || die "-k wants a whole number of at least 2, got '$K'"
[[ -x $SIFT ]] || die "$SIFT is missing: build first (tools/build.sh)"
command -v fasttext >/dev/null || ((FASTTEXT == 0)) || die "no fasttext CLI (tools/setup.sh installs it)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sift-cv.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# fastText's settings per data set (those of compare_fasttext.sh): dim epochs lr.
ft_settings() {
  case $1 in
    ag_news | trec | sst2 | sst2_glue | mr) echo "10 5 0.5" ;;
    *) die "unknown data set '$1' (ag_news trec sst2 sst2_glue mr)" ;;
  esac
}

# Every data key a config may set per split, reset so that the folds' fastText files are read.
FOLD_DATA=(--set data.format=fasttext --set 'data.labels=[]' --set 'data.valid.path=[]'
           --set data.valid_split=0)
for split in train test; do
  FOLD_DATA+=(--set "data.$split.format=fasttext" --set "data.$split.text=[]"
              --set "data.$split.label=\"\"" --set "data.$split.header=false"
              --set "data.$split.encoding=utf-8" --set "data.$split.label_mapping=name")
done

# Accuracy of one tool on fold FOLD of set NAME with seed SEED.
fold_accuracy() {
  local tool=$1 name=$2 fold=$3 seed=$4
  shift 4
  local train="$TMP/$name.f$fold.train" held="$TMP/$name.f$fold.held"
  if [[ $tool == fasttext ]]; then
    read -r dim epochs lr < <(ft_settings "$name")
    fasttext supervised -input "$train" -output "$TMP/ft" -dim "$dim" -epoch "$epochs" -lr "$lr" \
      -wordNgrams 2 -bucket 2000000 -thread "$THREADS" -seed "$seed" -verbose 0 >"$TMP/ft.log" 2>&1 ||
      { cat "$TMP/ft.log" >&2; die "fasttext supervised failed on $name fold $fold"; }
    fasttext test "$TMP/ft.bin" "$held" | awk '$1 == "P@1" { print $2 }'
  else
    rm -rf "$TMP/runs"
    "$SIFT" train "configs/$name.yaml" --quiet --json --set "run.dir=$TMP/runs" --set "run.seed=$seed" \
      "${FOLD_DATA[@]}" --set "data.train.path=$train" --set "data.test.path=$held" "$@" \
      >"$TMP/sift.json" 2>"$TMP/sift.err" || { cat "$TMP/sift.err" >&2; die "sift train failed on $name fold $fold"; }
    "$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["splits"]["test"]["accuracy"])' "$TMP/sift.json"
  fi
}

# One line: per-seed and pooled accuracy over every held-out line.
cross_validate() {
  local tool=$1 row=$2 name=$3
  shift 3
  local all_right=0 all_lines=0 per_seed=""
  for seed in $SEEDS; do
    local right=0 lines=0
    for ((f = 0; f < K; f++)); do
      local n acc
      n=$(wc -l <"$TMP/$name.f$f.held")
      acc=$(fold_accuracy "$tool" "$name" "$f" "$seed" "$@")
      right=$((right + $(awk -v a="$acc" -v n="$n" 'BEGIN { printf "%d", a * n + 0.5 }')))
      lines=$((lines + n))
    done
    per_seed+=" $(awk -v r=$right -v n=$lines 'BEGIN { printf "%.4f", r / n }')"
    all_right=$((all_right + right))
    all_lines=$((all_lines + lines))
  done
  printf '%-10s %-12s %d folds, seeds %s:%s  pooled %.4f (%d lines)\n' "$name" "$row" "$K" \
    "${SEEDS// /,}" "$per_seed" "$(awk -v r=$all_right -v n=$all_lines 'BEGIN { print r / n }')" "$all_lines"
}

for name in $ONLY; do
  ft_settings "$name" >/dev/null
  [[ -f configs/$name.yaml ]] || die "configs/$name.yaml is missing"
  "$PY" bench/python/to_fasttext.py "$name" "$DATA" "$TMP" >&2
  for ((f = 0; f < K; f++)); do
    awk -v k="$K" -v f="$f" 'NR % k == f' "$TMP/$name.train.ft" >"$TMP/$name.f$f.held"
    awk -v k="$K" -v f="$f" 'NR % k != f' "$TMP/$name.train.ft" >"$TMP/$name.f$f.train"
  done
  ((FASTTEXT)) && cross_validate fasttext "fastText" "$name"
  cross_validate sift "$LABEL" "$name" "$@"
done

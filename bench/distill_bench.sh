#!/usr/bin/env bash
# Knowledge distillation (train.distill, issue #14): a BiLSTM teacher teaches fastText
# and TextCNN students; each student is trained alone and distilled, on the same data
# with the same seeds. Two teachers per data set: one trained on the students' lines
# only ("same lines"), one on those and MORE_LINES more ("more lines": the usual case of
# a big model trained on more data than the small one gets). GLUE SST-2: accuracy on the GLUE validation set (872 sentences;
# GLUE's test labels are not public); AG News: on its test set (7,600). Every run keeps
# the epoch that is best on a hashed 5% dev share of its training lines
# (data.valid_split), never chosen on the reported set. Writes the distill section of
# bench/RESULTS.md.
#
#   tools/get_data.sh sst2 --from ../shared/data    # once (and ag_news)
#   bench/distill_bench.sh                          # seeds 1 2 3, writes RESULTS.md
#   SEEDS="1" STUDENTS="fasttext" DATASETS=sst2 bench/distill_bench.sh --no-write
#   bench/distill_bench.sh --from FILE              # the table from kept JSON lines
#
# Variables: SIFT (default build/sift), SEEDS (default "1 2 3"), STUDENTS (default
# "fasttext textcnn"), DATASETS (default "sst2 ag_news"), TRAIN_LINES (SST-2: lines
# sampled from GLUE's 67,349 training phrases, default 6000, since the teacher's forward
# on every student batch is the cost on a 2-core machine), AG_LINES (AG News: lines
# sampled from the 10,000-line sample that tools/get_data.sh fetches, default 2500: its
# texts are 4x longer), SST2_MORE / AG_MORE (the second teacher's extra lines, default
# 14000 / 7500, all of the AG sample), TEACHERS (default "same more"), ALPHA (0.5),
# TEMPERATURE (2), SWEEP ("ALPHA:T ..." pairs tried with seed 1 and the second teacher,
# to be chosen between on dev; rows other than 0.5:2 are named distilled_more@ALPHA:T),
# TRANSFER (default none; "unlabeled augment": with the second teacher, also a run whose
# student gets the second teacher's extra lines as unlabelled text (unlabeled:N: the first N
# of them, rows +unlabeled:N),
# train.distill.unlabeled at UNLABELED_RATIO (default 1), and one with augmented copies of
# its own lines, train.distill.augment.copies 1; rows named distilled_more@ALPHA:T+unlabeled
# and +augment), OUT (the JSON lines,
# default bench/results/distill.jsonl; rows already there are not run again), WORK (a
# folder kept between runs, whose teachers a rerun reuses; default a temporary one).
set -euo pipefail
# What bench/RESULTS.md names as the command of this script's table (bench/results_section.py).
export SIFT_BENCH_COMMAND="${SIFT_BENCH_COMMAND:-bench/distill_bench.sh${*:+ $*}}"

cd "$(dirname "$0")/.."
WRITE=1
FROM=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --no-write) WRITE=0; shift ;;
    --from) FROM="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    *) echo "distill_bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
SIFT=${SIFT:-build/sift}
SEEDS=${SEEDS:-1 2 3}
STUDENTS=${STUDENTS:-fasttext textcnn}
DATASETS=${DATASETS:-sst2 ag_news}
TRAIN_LINES=${TRAIN_LINES:-6000}
AG_LINES=${AG_LINES:-2500}
SST2_MORE=${SST2_MORE:-14000}
AG_MORE=${AG_MORE:-7500}
TEACHERS=${TEACHERS:-same more}
ALPHA=${ALPHA:-0.5}
TEMPERATURE=${TEMPERATURE:-2}
OUT=${OUT:-bench/results/distill.jsonl}
if [[ -n $FROM ]]; then
  OUT=$FROM
  DATASETS=
fi
[[ -z $DATASETS || -x $SIFT ]] || { echo "distill_bench.sh: $SIFT is missing" >&2; exit 1; }
if [[ -n ${WORK:-} ]]; then  # kept: a rerun reuses its teachers
  TMP=$WORK
  mkdir -p "$TMP"
else
  TMP=$(mktemp -d /tmp/siftdistill.XXXXXX)
  trap 'rm -rf "$TMP"' EXIT
fi
touch "$OUT"

# One YAML per data set and model: the same training lines, dev share and test set.
data_yaml() {  # data_yaml DATA
  if [[ $1 == sst2 ]]; then
    printf '%s\n' "data:" "  train: {path: $TMP/sst2_train.tsv}" \
      "  test: {path: data/sst2/glue_validation.tsv}" "  format: tsv" "  header: true" \
      "  text: sentence" "  label: label" "  valid_split: 0.05"
  else
    printf '%s\n' "data:" \
      "  train: {path: $TMP/ag_news_train.tsv, format: tsv, text: 0, label: 1}" \
      "  test: {path: data/ag_news/test.csv, format: csv, text: [1, 2], label: 0, label_mapping: index1}" \
      "  labels: data/ag_news/classes.txt" "  valid_split: 0.05"
  fi
}
write_configs() {  # write_configs DATA
  local ds=$1
  { echo "run: {dir: $TMP/runs, threads: 1}"; data_yaml "$ds"
    echo "model: {type: rnn, dim: 64, cell: lstm, hidden: 64, bidirectional: true, pooling: max, dropout: 0.5}"
    echo "train: {epochs: 3, batch_size: 64, loss_reduction: mean, optimizer: {type: adam, lr: 0.002}}"
  } > "$TMP/$ds-teacher.yaml"
  sed "s|  train: {path: \([^,}]*\)|  train: {path: [\1, \1.more]|" "$TMP/$ds-teacher.yaml" \
    > "$TMP/$ds-teacher-more.yaml"
  # fastText as configs/sst2_glue.yaml (one thread: LibTorch's pool spin-waits on it).
  { echo "run: {dir: $TMP/runs, threads: 1}"; data_yaml "$ds"
    echo "model: {type: fasttext, dim: 10, ngrams: 2, buckets: 200000}"
    echo "train: {epochs: 5, batch_size: 16, loss_reduction: sum, optimizer: {type: sgd, lr: 0.5}, scheduler: {type: linear}}"
  } > "$TMP/$ds-fasttext.yaml"
  { echo "run: {dir: $TMP/runs, threads: 1}"; data_yaml "$ds"
    echo "model: {type: textcnn, dim: 64, widths: [3, 4, 5], filters: 50, dropout: 0.5}"
    echo "train: {epochs: 8, batch_size: 50, loss_reduction: mean, optimizer: {type: adam, lr: 0.001}}"
  } > "$TMP/$ds-textcnn.yaml"
}

# sample N MORE OUT HEADER FILE...: N lines of the FILEs (each with HEADER header lines,
# kept once) drawn without replacement by a fixed generator into OUT, and MORE others
# into OUT.more.
sample() {
  /usr/bin/python3 - "$@" <<'PY'
import random, sys
n, more, out_path, header, files = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5:]
head, lines = [], []
for name in files:
    text = open(name, encoding="utf-8").read().splitlines()
    head, lines = text[:header], lines + text[header:]
chosen = random.Random(14).sample(range(len(lines)), min(n, len(lines)))
rest = sorted(set(range(len(lines))) - set(chosen))
extra = random.Random(15).sample(rest, min(more, len(rest)))
for path, picked in ((out_path, chosen), (out_path + ".more", extra)):
    with open(path, "w", encoding="utf-8") as out:
        out.writelines(l + "\n" for l in head + [lines[i] for i in picked])
PY
}

# result DATA MODEL MODE SEED REPORT: one JSON line.
result() {
  /usr/bin/python3 -c '
import json, sys
r = json.load(open(sys.argv[5]))
print(json.dumps({"data": sys.argv[1], "model": sys.argv[2], "mode": sys.argv[3],
                  "seed": int(sys.argv[4]), "records": r["train"]["records"],
                  "dev": r["splits"]["valid"]["accuracy"], "accuracy": r["splits"]["test"]["accuracy"],
                  "seconds": r["train"]["seconds"]}))
' "$@"
}
done_before() { grep -q "\"data\": \"$1\", \"model\": \"$2\", \"mode\": \"$3\", \"seed\": $4," "$OUT"; }

# run DATA MODEL MODE SEED [--set ...]: trains, appends one JSON line to $OUT.
run() {
  local ds=$1 model=$2 mode=$3 seed=$4
  shift 4
  if done_before "$ds" "$model" "$mode" "$seed"; then return; fi
  echo "$ds $model $mode seed $seed" >&2
  "$SIFT" train "$TMP/$ds-$model.yaml" --json --quiet --overwrite \
    --set "run.name=$ds-$model-$mode-$seed" --set "run.seed=$seed" "$@" > "$TMP/last.json"
  result "$ds" "$model" "$mode" "$seed" "$TMP/last.json" >> "$OUT"
}

for ds in $DATASETS; do
  case $ds in
    sst2) need=data/sst2/glue_validation.tsv ;;
    ag_news) need=data/ag_news/test.csv ;;
    *) echo "distill_bench.sh: unknown data set $ds" >&2; exit 2 ;;
  esac
  [[ -f $need ]] || { echo "distill_bench.sh: $need is missing: tools/get_data.sh $ds" >&2; exit 1; }
  # The training lines: drawn without replacement (a fixed generator) from the data's files.
  if [[ $ds == sst2 ]]; then
    sample "$TRAIN_LINES" "$SST2_MORE" "$TMP/sst2_train.tsv" 1 data/sst2/glue_train_part1.tsv \
      data/sst2/glue_train_part2.tsv
  else
    sample "$AG_LINES" "$AG_MORE" "$TMP/ag_news_train.tsv" 0 data/ag_news/train_sample_10k.tsv
  fi
  write_configs "$ds"
  # The teachers: one BiLSTM each (seed 1), reported on the same test set.
  for variant in $TEACHERS; do
    name=$ds-teacher$([[ $variant == same ]] || echo "-$variant")
    if [[ ! -f $TMP/runs/$name/report.json ]]; then
      echo "$ds teacher ($variant lines)" >&2
      "$SIFT" train "$TMP/$name.yaml" --json --quiet --overwrite --set "run.name=$name" \
        --set run.seed=1 > /dev/null
    fi
    mode=teacher$([[ $variant == same ]] || echo "_$variant")
    if ! done_before "$ds" bilstm "$mode" 1; then
      result "$ds" bilstm "$mode" 1 "$TMP/runs/$name/report.json" >> "$OUT"
    fi
  done
  for student in $STUDENTS; do
    for seed in $SEEDS; do
      run "$ds" "$student" alone "$seed"
      for variant in $TEACHERS; do
        name=$ds-teacher$([[ $variant == same ]] || echo "-$variant")
        tag=$([[ $ALPHA:$TEMPERATURE == 0.5:2 ]] || echo "@$ALPHA:$TEMPERATURE")
        run "$ds" "$student" "distilled$([[ $variant == same ]] || echo "_$variant")$tag" "$seed" \
          --set "train.distill.teacher=$TMP/runs/$name" --set "train.distill.alpha=$ALPHA" \
          --set "train.distill.temperature=$TEMPERATURE"
      done
    done
    # The transfer set (train.distill.unlabeled, augment): with the second teacher, whose
    # extra lines the student sees only as text.
    for seed in $SEEDS; do
      for transfer in ${TRANSFER:-}; do
        case $transfer in
          unlabeled|unlabeled:*)
            # The extra lines' text column (SST-2: after its header), without labels; with
            # unlabeled:N only the first N of them (the gain as the transfer set grows).
            n=${transfer#unlabeled}
            n=${n#:}
            if [[ $ds == sst2 ]]; then
              tail -n +2 "$TMP/${ds}_train.tsv.more" | cut -f1 > "$TMP/${ds}_unlabeled.txt"
            else
              cut -f1 "$TMP/${ds}_train.tsv.more" > "$TMP/${ds}_unlabeled.txt"
            fi
            if [[ -n $n ]]; then
              head -n "$n" "$TMP/${ds}_unlabeled.txt" > "$TMP/${ds}_unlabeled.head"
              mv "$TMP/${ds}_unlabeled.head" "$TMP/${ds}_unlabeled.txt"
            fi
            more=(--set "train.distill.unlabeled=[$TMP/${ds}_unlabeled.txt]"
                  --set "train.distill.unlabeled_ratio=${UNLABELED_RATIO:-1}") ;;
          augment) more=(--set train.distill.augment.copies=1) ;;
          *) echo "distill_bench.sh: unknown TRANSFER $transfer" >&2; exit 2 ;;
        esac
        run "$ds" "$student" "distilled_more@$ALPHA:$TEMPERATURE+$transfer" "$seed" \
          --set "train.distill.teacher=$TMP/runs/$ds-teacher-more" --set "train.distill.alpha=$ALPHA" \
          --set "train.distill.temperature=$TEMPERATURE" "${more[@]}"
      done
    done
    for pair in ${SWEEP:-}; do
      run "$ds" "$student" "distilled_more@$pair" 1 --set "train.distill.teacher=$TMP/runs/$ds-teacher-more" \
        --set "train.distill.alpha=${pair%%:*}" --set "train.distill.temperature=${pair##*:}"
    done
  done
done

/usr/bin/python3 - "$OUT" "$WRITE" "$ALPHA" "$TEMPERATURE" <<'PY'
import json, statistics, sys, datetime
sys.path.insert(0, "bench")
from results_section import write_section
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
write, alpha, temperature = sys.argv[2] == "1", sys.argv[3], sys.argv[4]
names = {"sst2": "SST-2 (GLUE validation)", "ag_news": "AG News (test)"}
def stats(xs):
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)
def row_for(ds, words, model, t_acc, alone, dist, mode):
    seeds = sorted(set(alone) & set(dist))
    if not seeds:
        return
    am, asd = stats([alone[s]["accuracy"] for s in seeds])
    dm, dsd = stats([dist[s]["accuracy"] for s in seeds])
    gap = t_acc - am
    closed = f"{100 * (dm - am) / gap:.0f}%" if gap > 0 else "n/a (teacher not ahead)"
    setting = mode.split("@")[1] if "@" in mode else "0.5:2"  # rows without @: the default
    lines.append(f"| {names.get(ds, ds)} | {words} | {model} student, alpha:T {setting} | {len(seeds)} | "
                 f"{am:.4f} ± {asd:.4f} | {dm:.4f} ± {dsd:.4f} | {100 * (dm - am):+.2f} | {closed} | "
                 f"{statistics.mean(alone[s]['dev'] for s in seeds):.4f} / "
                 f"{statistics.mean(dist[s]['dev'] for s in seeds):.4f} | "
                 f"{statistics.mean(alone[s]['seconds'] for s in seeds):.0f} / "
                 f"{statistics.mean(dist[s]['seconds'] for s in seeds):.0f} |")

lines = ["| data | teacher trained on | model | seeds | alone | distilled | gain (points) | teacher's lead closed | dev alone / distilled | train s alone / distilled |",
         "|---|---|---|---|---|---|---|---|---|---|"]
notes = []
for ds in dict.fromkeys(r["data"] for r in rows):
    for variant, words in (("", "the students' lines"), ("_more", "those and more")):
        teacher = [r for r in rows if r["data"] == ds and r["mode"] == "teacher" + variant]
        if not teacher:
            continue
        t = teacher[0]
        t_acc = t["accuracy"]
        lines.append(f"| {names.get(ds, ds)} | {words} | BiLSTM teacher | 1 | {t_acc:.4f} | | | | {t['dev']:.4f} | {t['seconds']:.0f} |")
        notes.append(f"{names.get(ds, ds).split(' (')[0]} teacher on {words}: {t['records']}")
        for model in ("fasttext", "textcnn"):
            def pick(mode):
                return {r["seed"]: r for r in rows if r["data"] == ds and r["model"] == model and r["mode"] == mode}
            modes = sorted({r["mode"] for r in rows if r["data"] == ds and r["model"] == model
                            and r["mode"].split("@")[0] == "distilled" + variant})
            for mode in modes:
                row_for(ds, words, model, t_acc, pick("alone"), pick(mode), mode)
    students = [r for r in rows if r["data"] == ds and r["mode"] == "alone"]
    if students:
        notes.append(f"{names.get(ds, ds).split(' (')[0]} students: {students[0]['records']}")
lines.append("")
lines.append("Accuracy: mean ± standard deviation over the seeds (run.seed: initialisation, shuffling, "
             "dropout); teacher: one BiLSTM run (dim 64, hidden 64, max pooling, 3 epochs, Adam 2e-3). "
             "Students: fastText (dim 10, bigrams, 5 epochs, SGD 0.5, batch 16) and TextCNN (dim 64, "
             "widths 3/4/5 x 50 filters, 8 epochs, Adam 1e-3). Every run keeps its epoch with the best "
             "accuracy on a hashed 5% dev share of its training lines. Training records (seed 1): "
             f"{'; '.join(notes)}; fixed random samples of GLUE SST-2's 67,349 training phrases and "
             "of the 10,000 AG News lines of tools/get_data.sh, the second teacher's extra lines "
             "drawn from the rest. "
             "Distilled: train.distill.alpha:temperature 0.5:2 was fixed before any run; rows with "
             "another alpha:T and 1 seed come from SWEEP (seed 1, compared on dev), and the setting "
             "best on dev then ran with all seeds. The reported sets chose nothing. "
             f"{datetime.date.today()}, `bench/distill_bench.sh`.")
table = "\n".join(lines)
print(table)
if write:
    write_section("distill", "Knowledge distillation (issue #14)", table)
PY

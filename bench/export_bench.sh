#!/usr/bin/env bash
# TorchScript export figures on AG News (10k training sample, 7,600 test texts), one run,
# side by side on this machine:
#   - for each model type (fasttext, textcnn, rnn, transformer): file size and test
#     accuracy of the run folder, the fp32 export and the int8 export;
#   - inference latency at batch 1 and throughput at batch 256, framework module vs export
#     loaded in C++ (build/sift-export-bench, Google Benchmark, encoded inputs);
#   - end to end for the fastText model: 76,000 texts through `sift predict` (run folder,
#     fp32 and int8 export) and `fasttext predict` (a fastText CLI model trained with the
#     same settings).
#
#   bench/export_bench.sh [--no-write] [-n N]
#
#   -n N        repetitions of the end-to-end timings, interleaved; medians (default 3)
#   --no-write  print the tables, leave bench/RESULTS.md alone
#
# Environment: BUILD (default build), DATA (default data), THREADS (LibTorch
# threads for inference, default 1), KEEP_TMP=1 keeps the temporary folder, RUNS=DIR
# reuses the trained runs of an earlier KEEP_TMP=1 run (DIR/fasttext, ...) instead of
# training again.
# Run from the repository root after building (sift, sift-export-bench).
set -euo pipefail
# What bench/RESULTS.md names as the command of this script's table (bench/results_section.py).
export SIFT_BENCH_COMMAND="${SIFT_BENCH_COMMAND:-bench/export_bench.sh${*:+ $*}}"

BUILD=${BUILD:-build}
DATA=${DATA:-data}
THREADS=${THREADS:-1}
PY=/usr/bin/python3
N=3
WRITE=1
die() { echo "export_bench.sh: $*" >&2; exit 1; }
while (($#)); do
  case "$1" in
    --no-write) WRITE=0 ;;
    -n) N=$2; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
  shift
done
[[ -f CMakeLists.txt && -d bench ]] || die "run this from the repository root"
for b in sift sift-export-bench; do
  [[ -x $BUILD/$b ]] || die "$BUILD/$b is missing: cmake --build $BUILD"
done
command -v fasttext >/dev/null || die "the fastText CLI is missing (tools/setup.sh)"
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (tools/setup.sh)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sift-export-bench.XXXXXX")
if [[ "${KEEP_TMP:-0}" == 1 ]]; then echo "temporary files kept in $TMP" >&2
else trap 'rm -rf "$TMP"' EXIT; fi
SIFT=$BUILD/sift

# --- configs: AG News data, one model section each -----------------------------------
data_section() {
  cat <<EOF
run: {dir: $TMP/runs, name: $1, threads: 2}
data:
  train: {path: $DATA/ag_news/train_sample_10k.tsv, format: tsv, text: 0, label: 1}
  test: {path: $DATA/ag_news/test.csv, format: csv, text: [1, 2], label: 0, label_mapping: index1}
  labels: $DATA/ag_news/classes.txt
  valid_split: 0
  max_length: 128
EOF
}
MODELS=(fasttext textcnn rnn transformer)
data_section fasttext > "$TMP/fasttext.yaml"
cat >> "$TMP/fasttext.yaml" <<'EOF'
model: {type: fasttext, dim: 10, ngrams: 2, buckets: 2000000}
train: {epochs: 5, batch_size: 16, loss_reduction: sum, optimizer: {type: sgd, lr: 0.5}, scheduler: {type: linear}}
EOF
data_section textcnn > "$TMP/textcnn.yaml"
cat >> "$TMP/textcnn.yaml" <<'EOF'
model: {type: textcnn, dim: 128, widths: [3, 4, 5], filters: 100, dropout: 0.5}
train: {epochs: 2, batch_size: 32, loss_reduction: mean, optimizer: {type: adam, lr: 0.001}}
EOF
data_section rnn > "$TMP/rnn.yaml"
cat >> "$TMP/rnn.yaml" <<'EOF'
model: {type: rnn, cell: lstm, dim: 128, hidden: 128, layers: 1, bidirectional: true, pooling: max, dropout: 0.3}
train: {epochs: 2, batch_size: 32, loss_reduction: mean, optimizer: {type: adam, lr: 0.002}}
EOF
data_section transformer > "$TMP/transformer.yaml"
cat >> "$TMP/transformer.yaml" <<'EOF'
model: {type: transformer, dim: 128, layers: 2, heads: 4, ff_dim: 256, positions: sinusoidal, max_positions: 128, pooling: mean, dropout: 0.1}
train: {epochs: 1, batch_size: 32, loss_reduction: mean, clip_norm: 1.0, optimizer: {type: adamw, lr: 0.0005, weight_decay: 0.01}, scheduler: {type: warmup_linear, warmup_ratio: 0.1}}
EOF

# --- texts: the AG test set as plain lines, and as fastText sees them ------------------
"$PY" - "$DATA" "$TMP" <<'PYEOF'
import csv, re, sys
data, tmp = sys.argv[1:3]
classes = [l.strip() for l in open(data + "/ag_news/classes.txt") if l.strip()]
ws = re.compile(r"\s+")
with open(data + "/ag_news/test.csv", encoding="utf-8", newline="") as f, \
     open(tmp + "/texts.txt", "w") as texts, open(tmp + "/train.ft", "w") as train:
    rows = list(csv.reader(f))
    for row in rows:
        texts.write(ws.sub(" ", row[1] + " " + row[2]).strip() + "\n")
    for line in open(data + "/ag_news/train_sample_10k.tsv", encoding="utf-8"):
        text, label = line.rstrip("\n").split("\t")
        train.write("__label__%s %s\n" % (label.replace(" ", "_"), ws.sub(" ", text.lower()).strip()))
with open(tmp + "/texts_x10.txt", "w") as out, open(tmp + "/texts_x10.ft", "w") as ft:
    for _ in range(10):
        for row in rows:
            text = ws.sub(" ", row[1] + " " + row[2]).strip()
            out.write(text + "\n")
            ft.write(text.lower() + "\n")
PYEOF

# --- train, export, evaluate ------------------------------------------------------------
declare -A ACC SIZE
RUNS=${RUNS:-$TMP/runs}
for m in "${MODELS[@]}"; do
  run=$RUNS/$m
  if [[ ! -f $run/best.ckpt && ! -f $run/last.ckpt ]] || [[ ! -f $run/report.json ]]; then
    echo "== $m: training" >&2
    "$SIFT" train "$TMP/$m.yaml" --quiet --set run.dir="$RUNS" >/dev/null
  fi
  "$SIFT" export "$run" --out "$TMP/$m.pt" >/dev/null
  "$SIFT" export "$run" --out "$TMP/$m.int8.pt" --quantize int8 >/dev/null
  ckpt=$run/best.ckpt; [[ -f $ckpt ]] || ckpt=$run/last.ckpt
  SIZE[$m,run]=$(stat -c %s "$ckpt")
  for v in run fp32 int8; do
    case $v in run) model=$RUNS/$m ;; fp32) model=$TMP/$m.pt ;; int8) model=$TMP/$m.int8.pt ;; esac
    [[ $v != run ]] && SIZE[$m,$v]=$(stat -c %s "$model")
    ACC[$m,$v]=$("$SIFT" eval --model "$model" --json --set run.threads=2 |
                 "$PY" -c 'import json,sys; print(json.load(sys.stdin)["splits"]["test"]["accuracy"])')
  done
done

# --- Google Benchmark: framework vs export, batch 1 and 256 ---------------------------
cases=()
for m in "${MODELS[@]}"; do cases+=(--case "$m=$RUNS/$m,$TMP/$m.pt"); done
echo "== sift-export-bench" >&2
"$BUILD/sift-export-bench" "${cases[@]}" --texts "$TMP/texts.txt" --threads "$THREADS" \
  --benchmark_format=json --benchmark_repetitions=3 --benchmark_min_time=0.5 \
  --benchmark_report_aggregates_only=true > "$TMP/micro.json"

# --- end to end, fastText model: 76k texts through the CLIs ---------------------------
fasttext supervised -input "$TMP/train.ft" -output "$TMP/ft" -dim 10 -epoch 5 -lr 0.5 \
  -wordNgrams 2 -bucket 2000000 -thread 2 >/dev/null 2>&1
wall() { /usr/bin/time -f %e -o "$TMP/time" "$@" >/dev/null; cat "$TMP/time"; }
: > "$TMP/e2e.txt"
for ((i = 0; i < N; i++)); do
  echo "== end to end, repetition $((i + 1))/$N" >&2
  echo "fasttext_cli $(wall fasttext predict "$TMP/ft.bin" "$TMP/texts_x10.ft")" >> "$TMP/e2e.txt"
  for v in run fp32 int8; do
    case $v in run) model=$RUNS/fasttext ;; fp32) model=$TMP/fasttext.pt ;; int8) model=$TMP/fasttext.int8.pt ;; esac
    echo "fasttext,$v $(wall "$SIFT" predict --model "$model" --input "$TMP/texts_x10.txt")" >> "$TMP/e2e.txt"
  done
done

# --- tables -----------------------------------------------------------------------------
for m in "${MODELS[@]}"; do
  for v in run fp32 int8; do echo "$m $v ${SIZE[$m,$v]} ${ACC[$m,$v]}"; done
done > "$TMP/sizes.txt"
"$PY" - "$TMP" "$WRITE" "$N" "$THREADS" <<'PYEOF'
import json, statistics, sys
sys.path.insert(0, "bench")
from results_section import write_section
tmp, write, n, threads = sys.argv[1], sys.argv[2] == "1", sys.argv[3], sys.argv[4]
models = ["fasttext", "textcnn", "rnn", "transformer"]
sizes = {}
for line in open(tmp + "/sizes.txt"):
    m, v, size, acc = line.split()
    sizes[m, v] = (int(size), float(acc))
micro = {}
for b in json.load(open(tmp + "/micro.json"))["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    model, kind, batch = b["run_name"].split("/")
    micro[model, kind, batch] = b
e2e = {}
for line in open(tmp + "/e2e.txt"):
    key, secs = line.split()
    e2e.setdefault(key, []).append(float(secs))
med = {k: statistics.median(v) for k, v in e2e.items()}

rows = ["| model | run checkpoint | fp32 export | int8 export | int8 / fp32 size | accuracy run | accuracy fp32 export | accuracy int8 export |",
        "|---|---|---|---|---|---|---|---|"]
mb = lambda b: "%.2f MB" % (b / 1e6)
for m in models:
    r, f, q = sizes[m, "run"], sizes[m, "fp32"], sizes[m, "int8"]
    rows.append("| %s | %s | %s | %s | %.2f | %.4f | %.4f | %.4f |" % (
        m, mb(r[0]), mb(f[0]), mb(q[0]), q[0] / f[0], r[1], f[1], q[1]))
rows += ["", "| model | batch 1 latency, framework | batch 1 latency, export | ratio | batch 256 texts/s, framework | batch 256 texts/s, export | ratio |",
         "|---|---|---|---|---|---|---|"]
for m in models:
    f1, e1 = micro[m, "framework", "batch:1"], micro[m, "export", "batch:1"]
    f2, e2 = micro[m, "framework", "batch:256"], micro[m, "export", "batch:256"]
    rows.append("| %s | %.1f us | %.1f us | %.2f | %.0f | %.0f | %.2f |" % (
        m, f1["real_time"], e1["real_time"], e1["real_time"] / f1["real_time"],
        f2["items_per_second"], e2["items_per_second"], e2["items_per_second"] / f2["items_per_second"]))
rows += ["", "| 76,000 AG texts end to end, fastText model (wall, median of %s) | `sift predict`, run folder | `sift predict`, fp32 export | `sift predict`, int8 export | `fasttext predict` |" % n,
         "|---|---|---|---|---|"]
rows.append("| seconds | %.2f | %.2f | %.2f | %.2f |" % (
    med["fasttext,run"], med["fasttext,fp32"], med["fasttext,int8"], med["fasttext_cli"]))
rows.append("| texts/s | %.0f | %.0f | %.0f | %.0f |" % tuple(
    76000 / med[k] for k in ("fasttext,run", "fasttext,fp32", "fasttext,int8", "fasttext_cli")))
rows.append("")
rows.append("Conditions: LibTorch threads %s for the micro benchmark (`sift predict` uses the run's run.threads, 2), "
            "Google Benchmark medians of 3 repetitions; end-to-end medians of %s interleaved runs; "
            "shared 2-core machine." % (threads, n))
table = "\n".join(rows)
print(table)
if write:
    write_section("export", "TorchScript export: size, accuracy, inference speed", table)
PYEOF

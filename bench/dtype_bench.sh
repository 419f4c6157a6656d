#!/usr/bin/env bash
# fp32, bf16 and int8 exports of every model type on AG News (10k training sample, 7,600
# test texts), one run, side by side on this machine: file size, test accuracy, batch-1
# latency p50/p99 and batch-64 throughput, from C++ (build/sift-latency-bench) and from
# Python (bench/python/export_latency.py, torch.jit.load), inputs already encoded.
# The successor of export_bench.sh's size and speed tables for the precisions of #15.
#
#   bench/dtype_bench.sh [--no-write]
#
#   --no-write  print the table, leave bench/RESULTS.md alone
#
# Environment: BUILD (default build), DATA (default data), THREADS (LibTorch threads for
# the timings, default 1), ENGINE (quantized engine for int8, default LibTorch's),
# STEPS (optimizer steps of training for the sequence models, default 300), SINGLE
# (batch-1 calls timed, default 1000), BATCHES (batches of 64 a pass, default 40), MODELS
# (default "fasttext mlp textcnn rnn transformer transformer_wide"), KEEP_TMP=1 keeps the temporary
# folder, RUNS=DIR reuses the trained runs of an earlier KEEP_TMP=1 run.
# Run from the repository root after building (sift, sift-latency-bench).
set -euo pipefail
# What bench/RESULTS.md names as the command of this script's table (bench/results_section.py).
export SIFT_BENCH_COMMAND="${SIFT_BENCH_COMMAND:-bench/dtype_bench.sh${*:+ $*}}"

ENGINE=${ENGINE:-}
STEPS=${STEPS:-300}
read -r -a MODELS <<< "${MODELS:-fasttext mlp textcnn rnn transformer transformer_wide}"
NAME=dtype_bench.sh HELP_LINES=2,17p
# shellcheck source=lib/latency_common.sh
source "$(dirname "$0")/lib/latency_common.sh"

# --- configs: AG News data, one model section each (as export_bench.sh) --------------
write_config() {
  cat > "$TMP/$1.yaml" <<EOF
run: {dir: $TMP/runs, name: $1, threads: 2}
data:
  train: {path: $DATA/ag_news/train_sample_10k.tsv, format: tsv, text: 0, label: 1}
  test: {path: $DATA/ag_news/test.csv, format: csv, text: [1, 2], label: 0, label_mapping: index1}
  labels: $DATA/ag_news/classes.txt
  valid_split: 0
  max_length: 128
model: $2
train: $3
EOF
}
write_config fasttext "{type: fasttext, dim: 10, ngrams: 2, buckets: 2000000}" \
  "{epochs: 5, batch_size: 16, loss_reduction: sum, optimizer: {type: sgd, lr: 0.5}, scheduler: {type: linear}}"
write_config mlp "{type: mlp, dim: 64, hidden: 256, layers: 2, ngrams: 2, buckets: 200000, dropout: 0.2}" \
  "{epochs: 2, batch_size: 32, loss_reduction: mean, optimizer: {type: adam, lr: 0.002}}"
write_config textcnn "{type: textcnn, dim: 128, widths: [3, 4, 5], filters: 100, dropout: 0.5}" \
  "{epochs: 2, max_steps: $STEPS, batch_size: 32, loss_reduction: mean, optimizer: {type: adam, lr: 0.001}}"
write_config rnn "{type: rnn, cell: lstm, dim: 128, hidden: 128, layers: 1, bidirectional: true, pooling: max, dropout: 0.3}" \
  "{epochs: 2, max_steps: $STEPS, batch_size: 32, loss_reduction: mean, optimizer: {type: adam, lr: 0.002}}"
write_config transformer "{type: transformer, dim: 128, layers: 2, heads: 4, ff_dim: 256, positions: sinusoidal, max_positions: 128, pooling: mean, dropout: 0.1}" \
  "{epochs: 1, max_steps: $STEPS, batch_size: 32, loss_reduction: mean, clip_norm: 1.0, optimizer: {type: adamw, lr: 0.0005, weight_decay: 0.01}, scheduler: {type: warmup_linear, warmup_ratio: 0.1}}"

# The same Transformer four times as wide (dim 512, ff 2048): where its Linear layers, which
# int8 and bf16 speed up, outweigh the attention (matmul, softmax), which they do not.
write_config transformer_wide "{type: transformer, dim: 512, layers: 2, heads: 8, ff_dim: 2048, positions: sinusoidal, max_positions: 128, pooling: mean, dropout: 0.1}" \
  "{epochs: 1, max_steps: $STEPS, batch_size: 32, loss_reduction: mean, clip_norm: 1.0, optimizer: {type: adamw, lr: 0.0005, weight_decay: 0.01}, scheduler: {type: warmup_linear, warmup_ratio: 0.1}}"

# --- texts: the AG test set as plain lines ---------------------------------------------
"$PY" - "$DATA" "$TMP" <<'PYEOF'
import csv, re, sys
data, tmp = sys.argv[1:3]
ws = re.compile(r"\s+")
with open(data + "/ag_news/test.csv", encoding="utf-8", newline="") as f, \
     open(tmp + "/texts.txt", "w") as texts:
    for row in csv.reader(f):
        texts.write(ws.sub(" ", row[1] + " " + row[2]).strip() + "\n")
PYEOF

# --- train, export, evaluate, time --------------------------------------------------------
RUNS=${RUNS:-$TMP/runs}
engine_args=(--single "$SINGLE" --batches "$BATCHES")
[[ -n $ENGINE ]] && engine_args+=(--engine "$ENGINE")
eval_engine=()
[[ -n $ENGINE ]] && eval_engine=(--quantized-engine "$ENGINE")
: > "$TMP/rows.jsonl"
for m in "${MODELS[@]}"; do
  run=$RUNS/$m
  if [[ ! -f $run/report.json ]]; then
    echo "== $m: training" >&2
    "$SIFT" train "$TMP/$m.yaml" --quiet --set run.dir="$RUNS" >/dev/null
  fi
  for v in fp32 bf16 int8; do
    file=$TMP/$m.$v.pt
    case $v in
      fp32) "$SIFT" export "$run" --out "$file" >/dev/null ;;
      bf16) "$SIFT" export "$run" --out "$file" --dtype bf16 >/dev/null ;;
      int8) "$SIFT" export "$run" --out "$file" --quantize int8 >/dev/null ;;
    esac
    echo "== $m $v: accuracy and timings" >&2
    acc=$("$SIFT" eval --model "$file" --json --set run.threads=2 "${eval_engine[@]}" |
          "$PY" -c 'import json,sys; print(json.load(sys.stdin)["splits"]["test"]["accuracy"])')
    cpp=$("$BUILD/sift-latency-bench" --model "$file" --texts "$TMP/texts.txt" \
          --threads "$THREADS" "${engine_args[@]}")
    # torch.set_num_threads does not reach OpenBLAS's own pool (core/blas_threads.h);
    # sift and sift-latency-bench set both.
    py=$(OPENBLAS_NUM_THREADS=$THREADS "$PY" bench/python/export_latency.py "$file" "$TMP/texts.txt" --threads "$THREADS" \
         "${engine_args[@]}")
    echo "{\"model\": \"$m\", \"variant\": \"$v\", \"bytes\": $(stat -c %s "$file"), \"accuracy\": $acc, \"cpp\": $cpp, \"python\": $py}" >> "$TMP/rows.jsonl"
  done
done

# --- table -------------------------------------------------------------------------------
"$PY" - "$TMP" "$WRITE" "$THREADS" "$SINGLE" "$BATCHES" <<'PYEOF'
import json, sys
sys.path.insert(0, "bench")
from results_section import write_section
tmp, write, threads, single, batches = sys.argv[1], sys.argv[2] == "1", *sys.argv[3:6]
rows = [json.loads(l) for l in open(tmp + "/rows.jsonl")]
fp32 = {r["model"]: r for r in rows if r["variant"] == "fp32"}
out = ["| model | export | size | size / fp32 | accuracy | C++ batch 1 p50 / p99 | C++ batch 64 texts/s | Python batch 1 p50 / p99 | Python batch 64 texts/s | speed-up vs fp32, C++ batch 1 / batch 64 |",
       "|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    f = fp32[r["model"]]
    c, p = r["cpp"], r["python"]
    out.append("| %s | %s | %.2f MB | %.2f | %.4f | %.0f / %.0f us | %.0f | %.0f / %.0f us | %.0f | %.2fx / %.2fx |" % (
        r["model"], r["variant"], r["bytes"] / 1e6, r["bytes"] / f["bytes"], r["accuracy"],
        c["p50_us"], c["p99_us"], c["batch64_texts_per_s"], p["p50_us"], p["p99_us"],
        p["batch64_texts_per_s"], f["cpp"]["p50_us"] / c["p50_us"],
        c["batch64_texts_per_s"] / f["cpp"]["batch64_texts_per_s"]))
engine = next((r["cpp"]["engine"] for r in rows if r["variant"] == "int8"), "?")
out.append("")
out.append("Conditions: LibTorch threads %s; quantized engine %s; batch 1 over the first %s "
           "test texts (one call each), batch 64 the best of 3 passes over %d texts; "
           "inputs encoded beforehand; shared 2-core machine." % (threads, engine, single,
                                                                  64 * int(batches)))
table = "\n".join(out)
print(table)
if write:
    write_section("export_dtypes", "Export precisions: fp32, bf16, int8 (size, accuracy, speed)", table)
PYEOF

#!/usr/bin/env bash
# Peak training memory and step time for {fp32, bf16} x {checkpointing off, all}, for a
# Transformer (6 layers, d=512, 8 heads, ff 2048, sequence 512) and a 2-layer BiLSTM.
# Every configuration runs in a fresh process of build/sift-precision-bench; the eight
# configurations are interleaved within each repetition (so machine load hits them alike),
# and the table gives medians over repetitions. Writes the precision section of
# bench/RESULTS.md (between <!-- precision:begin/end -->).
#
#   bench/precision.sh                  # N=3, writes RESULTS.md
#   bench/precision.sh -n 1 --no-write  # a quick look
#   bench/precision.sh --from FILE      # the table from kept JSON lines (KEEP_TMP=1), no runs
#
# Variables: BUILD (default build), THREADS (default 2), TF_BATCH (default 2),
# LSTM_BATCH (default 8), LSTM_LENGTH (default 128), STEPS (timed steps per process,
# default 2), KEEP_TMP=1 (keep the JSON lines).
set -euo pipefail
# What bench/RESULTS.md names as the command of this script's table (bench/results_section.py).
export SIFT_BENCH_COMMAND="${SIFT_BENCH_COMMAND:-bench/precision.sh${*:+ $*}}"

cd "$(dirname "$0")/.."
N=3
WRITE=1
FROM=
while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) N="$2"; shift 2 ;;
    --no-write) WRITE=0; shift ;;
    --from) FROM="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    *) echo "precision.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

BUILD=${BUILD:-build}
BENCH=$BUILD/sift-precision-bench
[[ -x $BENCH ]] || { echo "precision.sh: $BENCH is missing (cmake --build $BUILD)" >&2; exit 1; }
THREADS=${THREADS:-2}
STEPS=${STEPS:-2}
TMP=$(mktemp -d /tmp/siftprecision.XXXXXX)
[[ ${KEEP_TMP:-0} == 1 ]] || trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/results.jsonl

transformer=(--model transformer --layers 6 --dim 512 --heads 8 --ff 2048 --length 512
             --batch "${TF_BATCH:-2}")
bilstm=(--model bilstm --layers 2 --dim 256 --hidden 256 --length "${LSTM_LENGTH:-128}"
        --batch "${LSTM_BATCH:-8}")

if [[ -n $FROM ]]; then
  cp "$FROM" "$OUT"
  N=$(( $(wc -l < "$OUT") / 8 ))
fi
for rep in $( [[ -n $FROM ]] || seq 1 "$N"); do
  for model in transformer bilstm; do
    for precision in fp32 bf16; do
      for checkpointing in off all; do
        if [[ $model == transformer ]]; then args=("${transformer[@]}"); else args=("${bilstm[@]}"); fi
        echo "rep $rep: $model $precision checkpointing=$checkpointing" >&2
        OMP_WAIT_POLICY=PASSIVE "$BENCH" "${args[@]}" --precision "$precision" \
          --checkpointing "$checkpointing" --threads "$THREADS" --steps "$STEPS" --warmup 1 >> "$OUT"
      done
    done
  done
done
[[ ${KEEP_TMP:-0} == 1 ]] && echo "results: $OUT" >&2

/usr/bin/python3 - "$OUT" "$N" "$WRITE" "$THREADS" <<'PY'
import json, statistics, sys, subprocess, datetime
sys.path.insert(0, "bench")
from results_section import write_section
rows = [json.loads(l) for l in open(sys.argv[1])]
n, write, threads = int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
def med(model, p, c, key):
    return statistics.median(r[key] for r in rows
                             if r["model"] == model and r["precision"] == p and r["checkpointing"] == c)
lines = ["| model | precision | checkpointing | step CPU s | CPU speed vs fp32 off | step wall s | peak tensor MB | vs off | activations MB | vs off | peak RSS MB | vs off |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
def pct(x, ref):
    return f"{100 * (x / ref - 1):+.0f}%"
for model in ("transformer", "bilstm"):
    r0 = next(r for r in rows if r["model"] == model)
    c_ref = med(model, "fp32", "off", "median_step_cpu_seconds")
    for p in ("fp32", "bf16"):
        m_off = med(model, p, "off", "peak_tensor_mb")
        a_off = med(model, p, "off", "activation_peak_mb")
        r_off = med(model, p, "off", "peak_rss_mb")
        for c in ("off", "all"):
            t = med(model, p, c, "median_step_seconds")
            cs = med(model, p, c, "median_step_cpu_seconds")
            m = med(model, p, c, "peak_tensor_mb")
            act = med(model, p, c, "activation_peak_mb")
            rss = med(model, p, c, "peak_rss_mb")
            lines.append(f"| {model} (batch {r0['batch']} x {r0['length']} tokens, {r0['parameters']/1e6:.1f}M params) | {p} | {c} | "
                         f"{cs:.2f} | {c_ref / cs:.2f}x | {t:.1f} | {m:.0f} | {pct(m, m_off)} | {act:.0f} | {pct(act, a_off)} | "
                         f"{rss:.0f} | {pct(rss, r_off)} |")
lines.append("")
for model in ("transformer", "bilstm"):
    summary = []
    for p in ("fp32", "bf16"):
        c_off = med(model, p, "off", "median_step_cpu_seconds"); c_on = med(model, p, "all", "median_step_cpu_seconds")
        m_off = med(model, p, "off", "peak_tensor_mb"); m_on = med(model, p, "all", "peak_tensor_mb")
        a_off = med(model, p, "off", "activation_peak_mb"); a_on = med(model, p, "all", "activation_peak_mb")
        summary.append(f"{p}: checkpointing changes peak tensor memory by {pct(m_on, m_off)} (activations {pct(a_on, a_off)}) "
                       f"for {pct(c_on, c_off)} CPU time per step")
    b_cpu = med(model, "fp32", "off", "median_step_cpu_seconds") / med(model, "bf16", "off", "median_step_cpu_seconds")
    lines.append(f"- {model}: " + "; ".join(summary) + f"; bf16 runs at {b_cpu:.2f}x the speed of fp32 (CPU time, checkpointing off).")
cpu = subprocess.run(["sh", "-c", "lscpu | sed -n 's/^Model name: *//p'"], capture_output=True, text=True).stdout.strip()
load = open("/proc/loadavg").read().split()[0]
lines.append("")
lines.append(f"Medians of {n} repetitions (each a fresh process: 1 warm-up step, then the median of the "
             f"timed steps), {threads} threads, Adam, dropout 0.1. Peak tensor MB: all CPU tensor bytes above the "
             f"weights and the batch (gradients, Adam state, activations); activations MB: the peak of the timed "
             f"steps above what lives between steps. CPU s: process CPU time per step, the figure to compare on a "
             f"shared machine (wall time also counts waiting for a core); {cpu}; load average {load} at the end; "
             f"{datetime.date.today()}. Command: `bench/precision.sh -n {n}`.")
table = "\n".join(lines)
print(table)
if write:
    write_section("precision", "Mixed precision and gradient checkpointing (issue #5)", table)
PY

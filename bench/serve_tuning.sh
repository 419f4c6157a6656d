#!/usr/bin/env bash
# `sift serve`'s batching knobs for the Transformer (issue #39): requests/s and p99 at
# concurrency 32 across --max-delay-us and --run-cost-tokens, for the fp32 and the int8
# export of configs/sst2_transformer.yaml (the models bench/serve_bench.sh --models DIR
# --prepare trains), wrk on loopback, one SST-2 sentence a request. Each round runs every
# setting once, odd rounds in one order and even rounds in reverse, so that the shared
# machine's load falls on all alike; the table gives each setting's median over the rounds.
#
#   bench/serve_tuning.sh --models DIR [-d SECONDS] [--rounds N] [--delays "0 500 2000"]
#                         [--costs "16 32 64"] [--out FILE]
#   (default 4 s a run, 4 rounds: 2 exports x 9 settings x 4 rounds, about 8 minutes)
#
# Writes bench/results/serve-tuning.json (or FILE), then bench/RESULTS.md. Environment:
# SIFT (default build/sift), DATA (default data; needs data/sst2), KEEP_TMP=1.
set -euo pipefail

SIFT=${SIFT:-build/sift}
DATA=${DATA:-data}
PY=/usr/bin/python3
DUR=4
ROUNDS=4
DELAYS="0 500 2000"
COSTS="16 32 64"
OUT=bench/results/serve-tuning.json
MODELS=
die() { echo "serve_tuning.sh: $*" >&2; exit 1; }
while (($#)); do
  case "$1" in
    -d) DUR=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --delays) DELAYS=$2; shift ;;
    --costs) COSTS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --models) MODELS=$2; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1" ;;
  esac
  shift
done
command -v wrk >/dev/null || die "wrk is not installed (tools/setup.sh)"
[[ -x $SIFT ]] || die "$SIFT is missing (tools/build.sh)"
[[ -n $MODELS && -f $MODELS/tf.pt && -f $MODELS/tf_int8.pt ]] ||
  die "--models DIR must hold tf.pt and tf_int8.pt (bench/serve_bench.sh --models DIR --prepare)"
[[ -f $DATA/sst2/stsa.binary.test ]] || die "$DATA/sst2 is missing (tools/get_data.sh)"

# shellcheck source=lib/serve_load.sh
source "$(dirname "$0")/lib/serve_load.sh"
open_scratch
write_bodies "$DATA/sst2/stsa.binary.test" "$TMP/body.lua"
ROWS=$TMP/rows.jsonl
: >"$ROWS"

# Every (export, delay, cost), in order; even rounds run them in reverse, so that a setting's
# place in the round (the load drifting over it) is the same for all on average.
SETTINGS=()
for export in fp32 int8; do
  for delay in $DELAYS; do
    for cost in $COSTS; do SETTINGS+=("$export $delay $cost"); done
  done
done
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq 1 "$ROUNDS"); do
  round_order "$round"
  for setting in "${ORDER[@]}"; do
    read -r export delay cost <<<"$setting"
    model=$MODELS/tf.pt
    [[ $export == int8 ]] && model=$MODELS/tf_int8.pt
    sift_serve tf "$model" --max-delay-us "$delay" --run-cost-tokens "$cost"
    wrk -t1 -c32 -d1s -s "$TMP/body.lua" "$URL" >/dev/null  # warm-up
    wrk -t1 -c32 -d"${DUR}"s --latency -s "$TMP/body.lua" "$URL" >"$TMP/wrk.txt"
    echo -n "round $round: " >&2
    wrk_row "$TMP/wrk.txt" "$setting" "$export" 32 0 >>"$ROWS"
    stop_server
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

$PY - "$ROWS" "$OUT" "$DUR" "$ROUNDS" "$load_before" "$load_after" "$DELAYS" "$COSTS" \
  "$(dirname "$0")/lib" <<'EOF'
import sys
rows_file, out, dur, rounds, before, after = sys.argv[1:7]
delays, costs = sys.argv[7].split(), sys.argv[8].split()
sys.path.insert(0, sys.argv[9])
from serve_rounds import Rounds, heading, write_page
runs = Rounds(rows_file)
rows = []
for export in ("fp32", "int8"):
    for d in delays:
        keys = [f"{export} {d} {c}" for c in costs]
        rows.append([export, int(d)] + [round(runs.median(k, "requests_per_s")) for k in keys]
                    + [round(runs.median(k, "p99_ms"), 2) for k in keys])
table = heading("Transformer exports: --max-delay-us and --run-cost-tokens at concurrency 32",
                f"`bench/serve_tuning.sh --models DIR -d {dur} --rounds {rounds}`", before, after)
table.update({
    "columns": ["export", "--max-delay-us"] + [f"requests/s, run cost {c}" for c in costs]
               + [f"p99 ms, run cost {c}" for c in costs],
    "rows": rows,
    "notes": [f"wrk -t1 -c32 -d{dur}s on loopback, one SST-2 sentence a request; each cell the "
              f"median of {rounds} rounds, every setting once a round, even rounds in reverse "
              "order (a fresh server each run, 1 s of warm-up). sift serve's defaults otherwise: "
              "--max-batch 32, 2 workers x 1 LibTorch thread, length buckets. "
              + runs.spread_note() + ": differences under that are the machine's noise."]})
write_page(out, 3, [table])
for r in rows:
    print(" | ".join(str(v) for v in r), file=sys.stderr)
EOF
$PY "$(dirname "$0")/results_page.py"

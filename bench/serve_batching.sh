#!/usr/bin/env bash
# What dynamic batching gains in `sift serve`, by Transformer size (issue #39): requests/s
# and p99 at concurrency 32 with dynamic batching (--max-batch 32 --max-delay-us 2000)
# against batch-1 serving (--max-batch 1), for the fp32, int8 and bf16 exports of two
# Transformers trained 1 epoch on SST-2 (throughput does not depend on accuracy):
#   small: configs/sst2_transformer.yaml as it is (2 layers of dim 128, ff 256);
#   mini:  the same with BERT-Mini's shape (4 layers of dim 256, 4 heads, ff 1024).
# Beside them the server users write today: gunicorn (2 workers) + Flask around
# torch.jit.load of the fp32 export. wrk on loopback, one SST-2 test sentence a request.
# Each round runs every server once, odd rounds in one order and even rounds in reverse, so
# that the shared machine's load falls on all alike; the table gives medians over rounds.
#
#   bench/serve_batching.sh [-d SECONDS] [--rounds N] [--models DIR] [--out FILE]
#   (default 10 s a run, 3 rounds: 14 servers x 3 rounds, about 12 minutes; --models: the
#   trained models are kept in DIR/small and DIR/mini and reused by the next run)
#
# Writes bench/results/serve-batching.json (or FILE), then bench/RESULTS.md. Environment:
# SIFT (default build/sift), DATA (default data; needs data/sst2), KEEP_TMP=1.
set -euo pipefail

SIFT=${SIFT:-build/sift}
DATA=${DATA:-data}
PY=/usr/bin/python3
DUR=10
ROUNDS=3
OUT=bench/results/serve-batching.json
MODELS=
die() { echo "serve_batching.sh: $*" >&2; exit 1; }
while (($#)); do
  case "$1" in
    -d) DUR=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --models) MODELS=$2; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1" ;;
  esac
  shift
done
for tool in wrk gunicorn; do
  command -v $tool >/dev/null || die "$tool is not installed (tools/setup.sh)"
done
[[ -x $SIFT ]] || die "$SIFT is missing (tools/build.sh)"
[[ -f $DATA/sst2/stsa.binary.train ]] || die "$DATA/sst2 is missing (tools/get_data.sh)"

# shellcheck source=lib/serve_load.sh
source "$(dirname "$0")/lib/serve_load.sh"
open_scratch
M=${MODELS:-$TMP}
mkdir -p "$M/small" "$M/mini"
prepare_transformer "$M/small"
prepare_transformer "$M/mini" --set model.dim=256 --set model.layers=4 --set model.heads=4 \
  --set model.ff_dim=1024
write_bodies "$DATA/sst2/stsa.binary.test" "$TMP/body.lua"
ROWS=$TMP/rows.jsonl
: >"$ROWS"

SETTINGS=()
for shape in small mini; do
  for export in fp32 int8 bf16; do
    for mode in batched batch-1; do SETTINGS+=("$shape $export $mode"); done
  done
  SETTINGS+=("$shape fp32 gunicorn")
done
# serve SHAPE EXPORT MODE: the server of one setting, its URL in URL.
serve() {
  local model=$M/$1/tf.pt
  [[ $2 != fp32 ]] && model=$M/$1/tf_$2.pt
  case $3 in
    batched) sift_serve tf "$model" --max-batch 32 --max-delay-us 2000 ;;
    batch-1) sift_serve tf "$model" --max-batch 1 ;;
    gunicorn) python_serve torch "$model" ;;
  esac
}
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq 1 "$ROUNDS"); do
  round_order "$round"
  for setting in "${ORDER[@]}"; do
    read -r shape export mode <<<"$setting"
    serve "$shape" "$export" "$mode"
    wrk -t1 -c32 -d2s -s "$TMP/body.lua" "$URL" >/dev/null  # warm-up
    echo -n "round $round: " >&2
    load_row "$setting" "$shape" "$URL" 32 "$DUR" >>"$ROWS"
    stop_server
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

$PY - "$ROWS" "$OUT" "$DUR" "$ROUNDS" "$load_before" "$load_after" "$(dirname "$0")/lib" <<'EOF'
import sys
rows_file, out, dur, rounds, before, after = sys.argv[1:7]
sys.path.insert(0, sys.argv[7])
from serve_rounds import Rounds, heading, write_page
runs = Rounds(rows_file)
med = runs.median
shapes = {"small": "small (2 x 128, ff 256)", "mini": "mini (4 x 256, ff 1024)"}
rows = []
for shape, name in shapes.items():
    py = f"{shape} fp32 gunicorn"
    for export in ("fp32", "int8", "bf16"):
        b, one = f"{shape} {export} batched", f"{shape} {export} batch-1"
        rows.append([name, export, round(med(b, "requests_per_s")), round(med(one, "requests_per_s")),
                     f"**{med(b, 'requests_per_s') / med(one, 'requests_per_s'):.2f}x**",
                     round(med(b, "p99_ms"), 1), round(med(one, "p99_ms"), 1),
                     round(med(b, "server_cpu_us")), round(med(one, "server_cpu_us")),
                     round(med(b, "peak_rss_mb"))])
    rows.append([name, "gunicorn + Flask + torch.jit, fp32", round(med(py, "requests_per_s")), "",
                 "", round(med(py, "p99_ms"), 1), "", round(med(py, "server_cpu_us")), "",
                 round(med(py, "peak_rss_mb"))])
table = heading("Transformer: dynamic batching against batch-1 serving, by model size, concurrency 32",
                f"`bench/serve_batching.sh -d {dur} --rounds {rounds}`", before, after)
table.update({
    "columns": ["model", "export", "batched req/s", "batch-1 req/s", "ratio", "p99 ms batched",
                "p99 ms batch-1", "server CPU us/req batched", "batch-1", "peak RSS MB"],
    "rows": rows,
    "notes": [f"wrk -t1 -c32 -d{dur}s on loopback, one SST-2 test sentence a request; medians "
              f"of {rounds} rounds, every server once a round, even rounds in reverse order "
              "(a fresh server each run, 2 s of warm-up). sift serve: 2 workers x 1 LibTorch "
              "thread (its default); batched is --max-batch 32 --max-delay-us 2000, batch-1 "
              "--max-batch 1. gunicorn: 2 workers, torch.set_num_threads(1). Both models: "
              "configs/sst2_transformer.yaml trained 1 epoch; mini with --set model.dim=256 "
              "model.layers=4 model.heads=4 model.ff_dim=1024 (BERT-Mini's shape). "
              + runs.spread_note("server") + "."]})
write_page(out, 4, [table])
for r in rows:
    print(" | ".join(str(v) for v in r), file=sys.stderr)
EOF
$PY "$(dirname "$0")/results_page.py"

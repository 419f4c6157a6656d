#!/usr/bin/env bash
# `sift serve` under load (issue #39), side by side with the server users write today:
# gunicorn (2 workers) + Flask around the fastText Python binding, and around
# torch.jit.load of the Transformer's export (tokenized by examples/classify.py), on
# loopback, one text a request, wrk with a Lua POST body cycling through 200 SST-2 test
# sentences.
#   fastText: a `fasttext supervised` .bin on SST-2 (dim 10, bigrams, 5 epochs), served by
#     Python as is and by `sift serve` through `sift import fasttext` (sift-lite, no LibTorch);
#   Transformer: configs/sst2_transformer.yaml trained 1 epoch (throughput does not depend
#     on accuracy), exported; `sift serve` with dynamic batching (length buckets across the
#     queue, runs of similar length) and with --max-batch 1, each 2 workers x 1 thread (the
#     default), and batching with 1 worker x 2 threads; the int8 and bf16 exports batched and
#     batch-1 at concurrency 32 (bf16: 1 worker x 1 thread both); the padding share is read from
#     /metrics. What batching can gain at most is measured without the server: the export's
#     forward alone on one thread (build/sift-latency-bench), batch 1 against batches of 32
#     texts sorted by length (no padding to speak of), for the fp32, int8 and bf16 exports.
#
#   bench/serve_bench.sh [-d SECONDS] [--soak SECONDS] [--out FILE] [--models DIR [--prepare]]
#     (default 30 s a run, as the issue asks; soak 60 s; --models: the trained models are
#     kept in DIR and reused by the next run, so that a quiet window holds only the load;
#     --prepare: train them and stop)
# Then the fastText server is soaked at concurrency 64 (RSS and open descriptors before
# and after) and sent SIGTERM under load (its exit status; wrk's read errors are requests
# that got no answer).
#
# Prints one line per (server, concurrency): requests/s, texts/s, p50, p99, errors
# (non-2xx and socket errors), the server's peak RSS (VmHWM, summed over gunicorn's
# processes); writes them to bench/results/serve.json (or FILE). Environment: SIFT
# (default build/sift), DATA (default data; needs data/sst2, tools/get_data.sh),
# KEEP_TMP=1. Run from the repository root; tools/setup.sh installs wrk, gunicorn,
# python3-flask, python3-fasttext and fasttext.
set -euo pipefail

SIFT=${SIFT:-build/sift}
DATA=${DATA:-data}
PY=/usr/bin/python3
DUR=30
SOAK=60
OUT=bench/results/serve.json
die() { echo "serve_bench.sh: $*" >&2; exit 1; }
while (($#)); do
  case "$1" in
    -d) DUR=$2; shift ;;
    --soak) SOAK=$2; shift ;;
    --out) OUT=$2; shift ;;
    --models) MODELS=$2; shift ;;
    --prepare) PREPARE=1 ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1" ;;
  esac
  shift
done
for tool in wrk gunicorn fasttext; do
  command -v $tool >/dev/null || die "$tool is not installed (tools/setup.sh)"
done
[[ -x $SIFT ]] || die "$SIFT is missing (tools/build.sh)"
LATENCY_BENCH=$(dirname "$SIFT")/sift-latency-bench
[[ -x $LATENCY_BENCH ]] || die "$LATENCY_BENCH is missing (cmake --build build --target sift_latency_bench)"
[[ -f $DATA/sst2/stsa.binary.train ]] || die "$DATA/sst2 is missing (tools/get_data.sh)"

# shellcheck source=lib/serve_load.sh
source "$(dirname "$0")/lib/serve_load.sh"
open_scratch
ROWS=$TMP/rows.jsonl
: >"$ROWS"
: >"$TMP/extra.jsonl"

# ---- models (kept in --models DIR when given, and reused from it) ---------------------
M=${MODELS:-$TMP}
mkdir -p "$M"
if [[ ! -f $M/ft.bin || ! -d $M/ft_run ]]; then
  sed 's/^\([0-9]\) /__label__\1 /' "$DATA/sst2/stsa.binary.train" >"$TMP/train.ft"
  fasttext supervised -input "$TMP/train.ft" -output "$M/ft" -dim 10 -wordNgrams 2 -epoch 5 \
    -lr 0.5 -bucket 2000000 -verbose 0
  rm -rf "$M/ft_run"
  "$SIFT" import fasttext "$M/ft.bin" --out "$M/ft_run" >/dev/null
fi
prepare_transformer "$M"
[[ ${PREPARE:-0} == 1 ]] && exit 0

# ---- the request bodies: one SST-2 test sentence each ---------------------------------
write_bodies "$DATA/sst2/stsa.binary.test" "$TMP/body.lua"

# run_load SERVER MODEL URL CONCURRENCY...: wrk at each concurrency; one row each.
run_load() {
  local server=$1 model=$2 url=$3
  shift 3
  wrk -t1 -c8 -d2s -s "$TMP/body.lua" "$url" >/dev/null  # warm-up
  for c in "$@"; do load_row "$server" "$model" "$url" "$c" "$DUR" >>"$ROWS"; done
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)

sift_serve ft "$M/ft_run"
run_load "sift serve (sift-lite)" fasttext "$URL" 1 8 64
# Soak: SOAK seconds at concurrency 64; RSS and open descriptors before and after.
fds() { find /proc/"$SERVER_PID"/fd -mindepth 1 -maxdepth 1 | wc -l; }
rss_now() { awk '/VmRSS/ {print $2}' /proc/"$SERVER_PID"/status; }
rss0=$(rss_now) fd0=$(fds)
wrk -t1 -c64 -d"${SOAK}"s -s "$TMP/body.lua" "$URL" >"$TMP/soak.txt"
rss1=$(rss_now) fd1=$(fds)
soak_errors=$(awk '/Non-2xx/ {n += $NF} /Socket errors/ {gsub(",", ""); n += $4 + $6 + $8 + $10} END {print n + 0}' "$TMP/soak.txt")
soak_requests=$(awk '/requests in/ {print $1}' "$TMP/soak.txt")
echo "soak ${SOAK} s c=64: $soak_requests requests, $soak_errors errors, RSS $rss0 -> $rss1 kB, fds $fd0 -> $fd1" >&2
echo "{\"soak\": true, \"seconds\": $SOAK, \"requests\": $soak_requests, \"errors\": $soak_errors, \"rss0_kb\": $rss0, \"rss1_kb\": $rss1, \"fd0\": $fd0, \"fd1\": $fd1}" >>"$TMP/extra.jsonl"
# SIGTERM under load: wrk at concurrency 64 for 4 s, SIGTERM after 2; a read or write error
# is a request on an open connection that got no answer (connect errors are wrk
# reconnecting after the drain's Connection: close, to a listener that is gone).
wrk -t1 -c64 -d4s -s "$TMP/body.lua" "$URL" >"$TMP/term.txt" &
WRK_PID=$!
sleep 2
kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
term_status=$?
SERVER_PID=
wait "$WRK_PID" || true
# wrk's read errors are requests that got no answer on an open connection; its write errors
# after the drain are its reconnects to a listener that is gone (measured: read 0, write
# 93,632 in 2 s), so only read errors are counted.
term_read_errors=$(awk '/Socket errors/ {gsub(",", ""); print $6 + 0}' "$TMP/term.txt")
term_requests=$(awk '/requests in/ {print $1}' "$TMP/term.txt")
echo "SIGTERM under load: exit $term_status, $term_requests answered, read errors ${term_read_errors:-0}" >&2
echo "{\"sigterm\": true, \"exit\": $term_status, \"requests\": $term_requests, \"read_errors\": ${term_read_errors:-0}}" >>"$TMP/extra.jsonl"
python_serve fasttext "$M/ft.bin"
run_load "gunicorn -w 2 + Flask + fasttext" fasttext "$URL" 1 8 64
stop_server

# padding NAME: the share of the tokens the model ran that were padding (/metrics).
padding() {
  curl -s "${URL%/v1/*}/metrics" | awk -v name="$1" '
    /^sift_batch_tokens_total/ {t = $NF} /^sift_batch_padded_tokens_total/ {p = $NF}
    END {printf "{\"padding\": \"%s\", \"tokens\": %d, \"padded\": %d}\n", name, t, p}' \
    >>"$TMP/extra.jsonl"
}
sift_serve tf "$M/tf.pt" --max-batch 32 --max-delay-us 2000
run_load "sift serve, dynamic batching" transformer "$URL" 1 8 32 64
padding "length buckets"
stop_server
sift_serve tf "$M/tf.pt" --max-batch 1
run_load "sift serve, --max-batch 1" transformer "$URL" 1 8 32 64
stop_server
sift_serve tf "$M/tf.pt" --max-batch 32 --max-delay-us 2000 --workers 1 --compute-threads 2
run_load "sift serve, batching, 1 worker x 2 threads" transformer "$URL" 32
padding "1 worker x 2 threads"
stop_server
# export_pair FILE KIND: the export in $M/FILE served batched and at --max-batch 1, at
# concurrency 32 (the other defaults).
export_pair() {
  sift_serve tf "$M/$1" --max-batch 32 --max-delay-us 2000
  run_load "sift serve, $2 export, dynamic batching" transformer "$URL" 32
  padding "$2 export"
  stop_server
  sift_serve tf "$M/$1" --max-batch 1
  run_load "sift serve, $2 export, --max-batch 1" transformer "$URL" 32
  stop_server
}
# The int8 export (Linear layers on fbgemm): a forward's own cost is a larger share of it.
export_pair tf_int8.pt int8
# The bf16 export: one worker of one thread (oneDNN's bf16 kernels, docs/serving.md; with
# --compute-threads 2 its batch-1 server answered 653-1,019 requests/s against 1,425-1,489).
export_pair tf_bf16.pt bf16
# The forward alone, one thread, every SST-2 test sentence: batch 1 against batches of 32
# sorted by length (the most batching can gain: no server, no padding to speak of).
cut -d' ' -f2- "$DATA/sst2/stsa.binary.test" >"$TMP/test.txt"
for order in file length int8 bf16; do
  model=$M/tf.pt
  [[ $order == int8 || $order == bf16 ]] && model=$M/tf_$order.pt
  sort_by=$order
  [[ $order == int8 || $order == bf16 ]] && sort_by=length
  "$LATENCY_BENCH" --model "$model" --texts "$TMP/test.txt" --threads 1 --single 100000 \
    --batches 100000 --batch 32 --order "$sort_by" |
    $PY -c 'import json, sys; d = json.loads(sys.stdin.read()); d["forward"] = sys.argv[1]; print(json.dumps(d))' "$order" \
    >>"$TMP/extra.jsonl"
done
python_serve torch "$M/tf.pt"
run_load "gunicorn -w 2 + Flask + torch.jit" transformer "$URL" 1 8 32 64
stop_server

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
$PY - "$ROWS" "$OUT" "$DUR" "$load_before" "$load_after" "$TMP/extra.jsonl" <<'EOF'
import datetime, json, subprocess, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
dur = sys.argv[3]
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                        text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
cols = ["server", "concurrency", "requests/s", "texts/s", "p50 ms", "p99 ms", "errors",
        "peak RSS MB", "server CPU us/request"]
def table(model, title, notes):
    return {"title": title,
            "command": f"`bench/serve_bench.sh -d {dur} --soak {soak['seconds']}`",
            "commit": commit,
            "machine": f"{cpu}, 2 cores (shared with wrk)",
            "date": datetime.date.today().isoformat(),
            "load": f"load average {sys.argv[4]} before, {sys.argv[5]} after",
            "columns": cols,
            "rows": [[r["server"], r["concurrency"], r["requests_per_s"], r["texts_per_s"],
                      r["p50_ms"], r["p99_ms"], r["errors"], r["peak_rss_mb"],
                      r.get("server_cpu_us")]
                     for r in rows if r["model"] == model],
            "notes": notes}
extra, pads, fwd = {}, [], {}
for line in open(sys.argv[6]):
    e = json.loads(line)
    if "padding" in e:
        pads.append(e)
    elif "forward" in e:
        fwd[e["forward"]] = e
    else:
        extra["soak" if e.get("soak") else "sigterm"] = e
soak, term = extra.get("soak"), extra.get("sigterm")
soak_note = (f"Soak, same server: {soak['seconds']} s at concurrency 64, {soak['requests']} "
             f"requests, {soak['errors']} errors, RSS {soak['rss0_kb'] / 1024:.1f} -> "
             f"{soak['rss1_kb'] / 1024:.1f} MB, open descriptors {soak['fd0']} -> {soak['fd1']}. "
             f"SIGTERM 2 s into 4 s of load: exit {term['exit']}, {term['requests']} requests "
             f"answered, {term['read_errors']} wrk read error(s) (requests written on an open "
             "connection that got no answer; its write errors, its reconnects after the drain, "
             "are not counted).")
pad_note = "Padding share of the tokens the Transformer ran (/metrics, the server's loads): " + ", ".join(
    f"{p['padding']} {100.0 * (p['padded'] - p['tokens']) / max(p['padded'], 1):.1f}% "
    f"({p['tokens']:,} tokens, {p['padded']:,} with padding)" for p in pads) + "."
one = 1e6 / fwd["length"]["mean_us"]
fwd_note = (f"The forward alone (build/sift-latency-bench --threads 1 --batch 32, every SST-2 test "
            f"sentence, no server): batch 1 {one:,.0f} texts/s (mean {fwd['length']['mean_us']:.0f} us), "
            f"batches of 32 sorted by length {fwd['length']['batch_texts_per_s']:,.0f} texts/s "
            f"({fwd['length']['batch_texts_per_s'] / one:.2f}x), in file order "
            f"{fwd['file']['batch_texts_per_s']:,.0f} ({fwd['file']['batch_texts_per_s'] / one:.2f}x); "
            f"the int8 export: batch 1 {1e6 / fwd['int8']['mean_us']:,.0f} texts/s, batches of 32 "
            f"sorted by length {fwd['int8']['batch_texts_per_s']:,.0f} "
            f"({fwd['int8']['batch_texts_per_s'] * fwd['int8']['mean_us'] / 1e6:.2f}x); "
            f"the bf16 export: batch 1 {1e6 / fwd['bf16']['mean_us']:,.0f}, batches of 32 "
            f"sorted by length {fwd['bf16']['batch_texts_per_s']:,.0f} "
            f"({fwd['bf16']['batch_texts_per_s'] * fwd['bf16']['mean_us'] / 1e6:.2f}x): "
            "the most dynamic batching can gain over batch 1 for this model on this machine, "
            "before any server cost.")
# One note a table: bench/RESULTS.md is kept under 700 lines.
cpu_note = ("server CPU us/request: the server's CPU time (user + system; gunicorn with its "
            "workers) over the load, divided by the requests answered: what a request costs "
            "whatever share of the two cores wrk and other jobs left the server.")
page = {"family": "serving", "heading": "Serving", "order": 1, "tables": [
    table("fasttext", "fastText model: sift serve against gunicorn + Flask + fasttext",
          [f"wrk -t1 -cC -d{dur}s on loopback, one SST-2 sentence a request (200 cycled). "
           "The same model: a `fasttext supervised` .bin (dim 10, bigrams, 5 epochs), "
           "`sift import`ed for sift serve (sift-lite: no LibTorch). " + soak_note + " " + cpu_note]),
    table("transformer", "Transformer export: dynamic batching, batch-1, gunicorn + Flask + torch.jit",
          [f"wrk -t1 -cC -d{dur}s; configs/sst2_transformer.yaml trained 1 epoch and exported "
           "(fp32; the int8 and bf16 rows: its --quantize int8 and --dtype bf16 exports). sift serve: "
           "2 workers x 1 LibTorch thread (the default; bf16: 1 worker x 1 thread); dynamic batching "
           "is --max-batch 32 --max-delay-us 2000, its batches bucketed by length across the "
           "queue and cut into runs of similar length (--run-cost-tokens 32, the default). "
           "gunicorn: 2 workers, torch.set_num_threads(1), examples/classify.py's tokenizer. "
           + pad_note + " " + fwd_note + " " + cpu_note])]}
with open(sys.argv[2] + ".tmp", "w") as f:
    json.dump(page, f, indent=1)
    f.write("\n")
import os
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
print(f"wrote {sys.argv[2]}", file=sys.stderr)
EOF

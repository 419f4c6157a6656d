# The load of the serving benches (sourced by bench/serve_bench.sh, bench/serve_tuning.sh and
# bench/serve_batching.sh, which set PY, SIFT and DATA and define die()): their scratch folder
# TMP, the Transformer and its exports, the request bodies, a `sift serve` or gunicorn server
# on a free port, the server's CPU time and peak RSS, and wrk's figures as one JSON row.
# shellcheck source=ports.sh
source "$(dirname "${BASH_SOURCE[0]}")/ports.sh"

# open_scratch: TMP, a new folder removed at exit (KEEP_TMP=1 keeps it), when the server
# started last (SERVER_PID) is stopped if it still runs.
open_scratch() {
  TMP=$(mktemp -d)
  SERVER_PID=
  trap close_scratch EXIT
}
close_scratch() {
  [[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null || true
  [[ ${KEEP_TMP:-0} == 1 ]] || rm -rf "$TMP"
}

# write_bodies TEST_FILE OUT.lua: wrk's Lua script POSTing {"texts": [one sentence]},
# cycling through the first 200 sentences of a label-first file.
write_bodies() {
  $PY - "$1" "$2" <<'EOF'
import json, sys
texts = [l.split(" ", 1)[1].strip() for l in open(sys.argv[1], encoding="utf-8") if " " in l][:200]
with open(sys.argv[2], "w") as out:
    out.write("wrk.method = 'POST'\nwrk.headers['Content-Type'] = 'application/json'\n")
    out.write("local bodies = {\n")
    for t in texts:
        out.write("  %s,\n" % json.dumps(json.dumps({"texts": [t]})))
    out.write("}\nlocal i = 0\n")
    out.write("request = function()\n  i = i % #bodies + 1\n"
              "  return wrk.format(nil, nil, nil, bodies[i])\nend\n")
EOF
}

stop_server() {
  kill -TERM "$SERVER_PID"
  wait "$SERVER_PID" || true
  SERVER_PID=
}

sift_serve() {  # sift_serve NAME MODEL_PATH OPTIONS...
  local port
  port=$(free_port)
  "$SIFT" serve --model "$1=$2" --port "$port" --no-access-log "${@:3}" 2>"$TMP/serve.err" &
  SERVER_PID=$!
  wait_port "$port"
  URL=http://127.0.0.1:$port/v1/models/$1/predict
}

# wrk_row WRK_OUTPUT SERVER MODEL CONCURRENCY PEAK_RSS_MB [SERVER_CPU_SECONDS]: wrk
# --latency's figures as one JSON row on stdout (and a readable line on stderr); with the
# server's CPU seconds during the load, its CPU microseconds per request too.
wrk_row() {
  $PY - "$@" <<'EOF'
import json, re, sys
text = open(sys.argv[1]).read()
def ms(v, unit):
    return float(v) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
p = {m.group(1): ms(m.group(2), m.group(3))
     for m in re.finditer(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)}
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
total = int(re.search(r"(\d+) requests in", text).group(1))
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
errors = (int(non2xx.group(1)) if non2xx else 0) + (sum(map(int, sock.groups())) if sock else 0)
row = {"server": sys.argv[2], "model": sys.argv[3], "concurrency": int(sys.argv[4]),
       "requests_per_s": round(rps), "texts_per_s": round(rps), "p50_ms": round(p["50"], 2),
       "p99_ms": round(p["99"], 2), "errors": errors, "requests": total,
       "peak_rss_mb": int(sys.argv[5])}
if len(sys.argv) > 6:
    row["server_cpu_us"] = round(float(sys.argv[6]) * 1e6 / max(total, 1))
print(json.dumps(row))
print(f"{row['server']:<34} c={row['concurrency']:<3} {row['requests_per_s']:>7} req/s  "
      f"p50 {row['p50_ms']:>7} ms  p99 {row['p99_ms']:>7} ms  errors {errors}  "
      f"RSS {row['peak_rss_mb']} MB" +
      (f"  CPU {row['server_cpu_us']} us/req" if "server_cpu_us" in row else ""), file=sys.stderr)
EOF
}

# prepare_transformer DIR [--set KEY=VALUE...]: configs/sst2_transformer.yaml trained 1 epoch
# (throughput does not depend on accuracy) in DIR/tf, and its exports DIR/tf.pt (fp32),
# DIR/tf_int8.pt (--quantize int8) and DIR/tf_bf16.pt (--dtype bf16); what is there is kept.
prepare_transformer() {
  local dir=$1
  shift
  if [[ ! -f $dir/tf.pt ]]; then
    rm -rf "$dir/tf"
    "$SIFT" train configs/sst2_transformer.yaml --quiet --set run.dir="$dir" --set run.name=tf \
      --set train.epochs=1 --set data.train.path="$DATA/sst2/stsa.binary.train" \
      --set data.valid.path="$DATA/sst2/stsa.binary.dev" \
      --set data.test.path="$DATA/sst2/stsa.binary.test" "$@" >/dev/null
    "$SIFT" export "$dir/tf" --out "$dir/tf.pt" >/dev/null
  fi
  if [[ ! -f $dir/tf_int8.pt ]]; then
    "$SIFT" export "$dir/tf" --out "$dir/tf_int8.pt" --quantize int8 >/dev/null
  fi
  if [[ ! -f $dir/tf_bf16.pt ]]; then
    "$SIFT" export "$dir/tf" --out "$dir/tf_bf16.pt" --dtype bf16 >/dev/null
  fi
}

# Peak RSS (MB) of a process and its children (gunicorn's workers).
peak_rss() {
  local total=0 p
  for p in $1 $(pgrep -P "$1" || true); do
    total=$((total + $(awk '/VmHWM/ {print $2}' /proc/"$p"/status 2>/dev/null || echo 0)))
  done
  echo $((total / 1024))
}

# CPU time (clock ticks, user + system) of a process and its children (gunicorn's workers).
cpu_ticks() {
  local total=0 p
  for p in $1 $(pgrep -P "$1" || true); do
    total=$((total + $(awk '{print $14 + $15}' /proc/"$p"/stat 2>/dev/null || echo 0)))
  done
  echo "$total"
}

python_serve() {  # python_serve KIND MODEL_PATH
  local port
  port=$(free_port)
  SERVE_KIND=$1 SERVE_MODEL=$2 gunicorn -w 2 -b 127.0.0.1:"$port" --chdir bench/python \
    --log-level warning serve_flask:app &
  SERVER_PID=$!
  wait_port "$port"
  URL=http://127.0.0.1:$port/predict
}


# load_row LABEL MODEL URL CONCURRENCY SECONDS: wrk --latency at that concurrency on the
# bodies in $TMP/body.lua, as one JSON row with the server's (SERVER_PID's) peak RSS and its
# CPU microseconds per request (what a request costs whatever share of the two cores wrk
# and other jobs left the server).
load_row() {
  local ticks
  ticks=$(cpu_ticks "$SERVER_PID")
  wrk -t1 -c"$4" -d"$5"s --latency -s "$TMP/body.lua" "$3" >"$TMP/wrk.txt"
  ticks=$(($(cpu_ticks "$SERVER_PID") - ticks))
  wrk_row "$TMP/wrk.txt" "$1" "$2" "$4" "$(peak_rss "$SERVER_PID")" \
    "$(echo "$ticks $(getconf CLK_TCK)" | awk '{print $1 / $2}')"
}

# round_order ROUND: SETTINGS into ORDER, reversed in even rounds, so that a setting's place
# in the round (the load drifting over it) is the same for all on average.
round_order() {
  ORDER=("${SETTINGS[@]}")
  if (($1 % 2 == 0)); then
    ORDER=()
    for ((i = ${#SETTINGS[@]} - 1; i >= 0; i--)); do ORDER+=("${SETTINGS[i]}"); done
  fi
}

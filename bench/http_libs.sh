#!/usr/bin/env bash
# cpp-httplib (sift serve's HTTP library) against Boost.Beast on Asio, measured on the same
# route (bench/http_libs/route.h: sift serve's predict body parsed as JSON, a fixed answer,
# no model), on loopback, wrk -t1 with a Lua POST body of one SST-2-like sentence:
#   cpp-httplib: a blocking thread per connection from a pool of 128 (sift serve's design);
#   Beast: Asio's event loop on 1 and on 2 threads.
# Each (server, concurrency) runs ROUNDS times, the servers alternating; the median round
# is reported (the machine is shared).
#
#   bench/http_libs.sh [-d SECONDS] [--rounds N] [--out FILE]   (default 10 s, 3 rounds)
#   bench/http_libs.sh --page [--out FILE]   (the table again from FILE's runs; no run)
#
# Needs build/sift-http-httplib and build/sift-http-beast (libboost-dev; cmake --build
# build --target sift_http_httplib sift_http_beast) and wrk. Writes
# bench/results/http-libs.json (the Serving section of bench/RESULTS.md) and the page.
set -euo pipefail

BUILD=${BUILD:-build}
DUR=10
ROUNDS=3
PAGE_ONLY=0
OUT=bench/results/http-libs.json
die() { echo "http_libs.sh: $*" >&2; exit 1; }
while (($#)); do
  case "$1" in
    -d) DUR=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --page) PAGE_ONLY=1 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1" ;;
  esac
  shift
done
if [[ $PAGE_ONLY == 0 ]]; then
  command -v wrk >/dev/null || die "wrk is not installed (tools/setup.sh)"
  for b in sift-http-httplib sift-http-beast; do
    [[ -x $BUILD/$b ]] || die "$BUILD/$b is missing (libboost-dev, then cmake --build)"
  done
fi

TMP=$(mktemp -d)
PID=
cleanup() {
  [[ -n $PID ]] && kill "$PID" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT
cat >"$TMP/body.lua" <<'LUA'
wrk.method = 'POST'
wrk.headers['Content-Type'] = 'application/json'
wrk.body = '{"texts": ["a gorgeous , witty , seductive movie ."]}'
LUA
# shellcheck source=lib/ports.sh
source "$(dirname "$0")/lib/ports.sh"

# measure NAME BINARY THREADS C ROUND: one wrk run against a fresh server; one JSON row.
measure() {
  local port
  port=$(free_port)
  "$BUILD/$2" "$port" "$3" &
  PID=$!
  wait_port "$port"
  wrk -t1 -c8 -d1s -s "$TMP/body.lua" "http://127.0.0.1:$port/v1/models/m/predict" >/dev/null
  wrk -t1 -c"$4" -d"${DUR}"s --latency -s "$TMP/body.lua" \
    "http://127.0.0.1:$port/v1/models/m/predict" >"$TMP/wrk.txt"
  local rss
  rss=$(awk '/VmHWM/ {print int($2 / 1024)}' /proc/"$PID"/status)
  kill "$PID"
  wait "$PID" 2>/dev/null || true
  PID=
  /usr/bin/python3 - "$TMP/wrk.txt" "$1" "$4" "$5" "$rss" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
unit = {"us": 0.001, "ms": 1.0, "s": 1000.0}
p = {m.group(1): float(m.group(2)) * unit[m.group(3)]
     for m in re.finditer(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)}
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
errors = (int(non2xx.group(1)) if non2xx else 0) + (sum(map(int, sock.groups())) if sock else 0)
row = {"server": sys.argv[2], "concurrency": int(sys.argv[3]), "round": int(sys.argv[4]),
       "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1)),
       "p50": p["50"], "p99": p["99"], "errors": errors, "rss": int(sys.argv[5])}
print(json.dumps(row))
print(f"round {row['round']} {row['server']:<28} c={row['concurrency']:<3} {row['rps']:>9.0f} "
      f"req/s p50 {row['p50']:.3f} ms p99 {row['p99']:.3f} ms errors {errors}", file=sys.stderr)
PY
}

[[ $PAGE_ONLY == 1 ]] || {
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$TMP/rows.jsonl"
for round in $(seq 1 "$ROUNDS"); do
  for c in 1 8 64; do
    measure "cpp-httplib, 128-thread pool" sift-http-httplib 128 "$c" "$round" >>"$TMP/rows.jsonl"
    measure "Boost.Beast, 1 Asio thread" sift-http-beast 1 "$c" "$round" >>"$TMP/rows.jsonl"
    measure "Boost.Beast, 2 Asio threads" sift-http-beast 2 "$c" "$round" >>"$TMP/rows.jsonl"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# The median round of each (server, concurrency): the page file's "runs".
/usr/bin/python3 - "$TMP/rows.jsonl" "$OUT" "$DUR" "$ROUNDS" "$load_before" "$load_after" <<'PY'
import datetime, json, os, subprocess, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
dur, rounds = sys.argv[3], int(sys.argv[4])
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                        text=True).stdout.strip()
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "?")
groups = {}
for r in rows:
    groups.setdefault((r["concurrency"], r["server"]), []).append(r)
runs = []
for (c, server), rs in sorted(groups.items(), key=lambda g: (g[0][0], g[1][0]["server"])):
    med = sorted(rs, key=lambda r: r["rps"])[len(rs) // 2]
    runs.append([server, c, round(med["rps"]), round(med["p50"], 3), round(med["p99"], 3),
                 sum(r["errors"] for r in rs), max(r["rss"] for r in rs),
                 " / ".join(f"{r['rps']:.0f}" for r in rs)])
page = {"family": "serving", "order": 2, "tables": [{
    "title": "HTTP libraries: cpp-httplib against Boost.Beast on the same route",
    "command": f"`bench/http_libs.sh -d {dur} --rounds {rounds}`",
    "commit": commit,
    "machine": f"{cpu}, 2 cores (shared with wrk)",
    "date": datetime.date.today().isoformat(),
    "load": f"load average {sys.argv[5]} before, {sys.argv[6]} after",
    "duration_s": int(dur), "runs": runs}]}
with open(sys.argv[2] + ".tmp", "w") as f:
    json.dump(page, f, indent=1)
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
PY
}

# The table: one row per server, its requests/s and p99 at each concurrency (--page redoes
# this from the page file's runs).
/usr/bin/python3 - "$OUT" <<'PY'
import json, os, sys
page = json.load(open(sys.argv[1]))
t = page["tables"][0]
# A page file written before the runs were kept holds them as its rows.
runs = t.pop("runs", None) or t["rows"]
t["runs"] = runs
dur = t.get("duration_s", 10)
levels = sorted({r[1] for r in runs})
servers = sorted({r[0] for r in runs})
at = {(r[0], r[1]): r for r in runs}
t["columns"] = (["server"] + [f"requests/s c={c}" for c in levels] +
                [f"p99 ms c={c}" for c in levels] + ["errors", "peak RSS MB"])
t["rows"] = [[s] + [at[s, c][2] for c in levels] + [at[s, c][4] for c in levels] +
             [sum(at[s, c][5] for c in levels), max(at[s, c][6] for c in levels)]
             for s in servers]
top = max(levels)
t["notes"] = [
    f"wrk -t1 -cC -d{dur}s on loopback, one text a request, each server started fresh for "
    "each run; the median of the rounds (servers alternating), errors (wrk's non-2xx and "
    "socket errors) summed over them. The route (bench/http_libs/route.h) parses sift "
    "serve's predict body with nlohmann JSON and answers one fixed prediction: no model, so "
    "the figures are the library's cost and wrk's.",
    f"Each round's requests/s at c={top}: " + "; ".join(
        f"{s} {at[s, top][7]}" for s in servers) + "."]
with open(sys.argv[1] + ".tmp", "w") as f:
    json.dump(page, f, indent=1)
    f.write("\n")
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
print(f"wrote {sys.argv[1]}", file=sys.stderr)
PY
/usr/bin/python3 bench/results_page.py

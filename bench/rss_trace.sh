#!/usr/bin/env bash
# Resident memory of a command over time: every 20 ms, the seconds since its start, then
# VmRSS, RssAnon (private: heap, tensors, relocated library data), RssFile (mapped files:
# shared libraries' pages) and VmHWM (the peak so far), in MB, from /proc/PID/status.
# What /usr/bin/time's single peak figure cannot say: when the peak happens and of what.
#
#   bench/rss_trace.sh OUT COMMAND [ARGS...]
#
# e.g. bench/rss_trace.sh /tmp/rss.txt build/sift train configs/synthetic.yaml --quiet
# (the launcher `sift` execs sift-main in the same process, so the trace follows it).
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n 2,11p "$0" >&2; exit 2; }
out=$1
shift
: > "$out"
"$@" &
pid=$!
start=$(date +%s.%N)
while kill -0 "$pid" 2>/dev/null; do
  now=$(date +%s.%N)
  awk -v t="$(echo "$now - $start" | bc)" '
    /^VmRSS|^RssAnon|^RssFile|^VmHWM/ { v[$1] = $2 }
    END { if (length(v)) printf "%.2f %d %d %d %d\n", t, v["VmRSS:"] / 1024,
            v["RssAnon:"] / 1024, v["RssFile:"] / 1024, v["VmHWM:"] / 1024 }' \
    "/proc/$pid/status" 2>/dev/null >> "$out" || true
  sleep 0.02
done
wait "$pid"

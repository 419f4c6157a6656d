#!/bin/bash
# `sift serve` of a Transformer export: the thread split and the batch delay, at
# concurrency 1 and 32, 5 s each (wrk, the body.lua of serve_bench.sh).
#   KEEP_TMP=1 bench/serve_bench.sh; bench/serve_split.sh THAT_TMP_FOLDER
D=$1; SIFT=${SIFT:-build/sift}
run() {
  local port=$((20000 + RANDOM % 20000))
  $SIFT serve --model tf=$D/tf.pt --port $port --no-access-log "$@" 2>/dev/null & local pid=$!
  for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done
  wrk -t1 -c8 -d1s -s $D/body.lua http://127.0.0.1:$port/v1/models/tf/predict >/dev/null
  for c in 1 32; do
    r=$(wrk -t1 -c$c -d5s --latency -s $D/body.lua http://127.0.0.1:$port/v1/models/tf/predict | awk '/Requests\/sec/ {r=$2} /^ +99%/ {p=$2} /^ +50%/ {m=$2} END {print r, "p50", m, "p99", p}')
    echo "$* c=$c: $r"
  done
  kill $pid; wait $pid
}
run --max-batch 1 --workers 1
run --max-batch 32 --max-delay-us 2000 --workers 1
run --max-batch 32 --max-delay-us 2000 --workers 2
run --max-batch 64 --max-delay-us 5000 --workers 1
run --max-batch 32 --max-delay-us 2000 --workers 1 --compute-threads 1

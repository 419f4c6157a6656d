#!/usr/bin/env bash
# Cold times of the README's two commands: fresh clones of this repository's HEAD, ccache
# off, one after the other, each under /usr/bin/time -v; then the build's and ctest's
# shares (the build's from its .ninja_log). For the README's table.
#
#   bench/cold_times.sh [WORK_DIR]     # default /tmp/sift-cold (emptied first)
#
# Run it on an otherwise idle machine: it takes about half an hour on 2 cores.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-/tmp/sift-cold}
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK"
git clone -q "$SRC" quickstart && git clone -q "$SRC" test
export CCACHE_DISABLE=1
build_seconds() { awk 'NR > 1 && $2 > m { m = $2 } END { printf "%.0f", m / 1000 }' "$1"; }
for cmd in quickstart test; do
  echo "== tools/$cmd.sh, $(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
  (cd "$cmd" && /usr/bin/time -v "tools/$cmd.sh" > ../$cmd.out 2> ../$cmd.err)
  grep -E "Elapsed|Maximum resident|User time|System time" $cmd.err
  echo "build: $(build_seconds $cmd/build/.ninja_log) s, $(($(wc -l < $cmd/build/.ninja_log) - 1)) steps"
  grep -E "tests passed|Total Test time" $cmd.out || tail -n 4 $cmd.out
done

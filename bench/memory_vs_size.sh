#!/usr/bin/env bash
# Peak RSS and wall time of `sift train` against the size of the training data, with one
# FIXED config (configs/synthetic.yaml: fastText model, dim 10, bigrams, 2M buckets,
# 1 epoch, data.workers 2, shuffle_buffer 10000, no checkpoint during the epoch). Only
# data.train.path changes. The target: the 10M-line run's peak RSS within 10% of the
# 1M-line run's. Writes the table into the memory section of bench/RESULTS.md
# (between <!-- memory:begin/end -->) and prints it.
#
#   bench/memory_vs_size.sh                # 1M (N=3) and 10M (N=1) lines
#   bench/memory_vs_size.sh --full         # + 3M lines (N=1)
#   bench/memory_vs_size.sh --huge-vocab   # + a 1M-line corpus with a 5M-word vocabulary,
#                                          #   trained with the default count_limit (5M) and
#                                          #   with count_limit 500k
#   bench/memory_vs_size.sh -n 1 --no-write
#
# Variables: BUILD (folder with sift and sift-gen-corpus; default build), BENCH_DATA
# (where corpora are generated once, 8 plain shards each; default /tmp/siftbench),
# SIFT_SET (extra --set arguments for every run, e.g. "train.max_steps=1000"), KEEP_TMP=1
# (keep the time -v reports and JSON summaries), RAW_OUT=FILE (also write the rows as JSON).
set -euo pipefail
# What bench/RESULTS.md names as the command of this script's table (bench/results_section.py).
export SIFT_BENCH_COMMAND="${SIFT_BENCH_COMMAND:-bench/memory_vs_size.sh${*:+ $*}}"

cd "$(dirname "$0")/.."
N=3
FULL=0
HUGE=0
WRITE=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) N="$2"; shift 2 ;;
    --full) FULL=1; shift ;;
    --huge-vocab) HUGE=1; shift ;;
    --no-write) WRITE=0; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    *) echo "memory_vs_size.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

BUILD=${BUILD:-build}
SIFT=$BUILD/sift
GEN=$BUILD/sift-gen-corpus
BENCH_DATA=${BENCH_DATA:-/tmp/siftbench}
CONFIG=configs/synthetic.yaml
PY=/usr/bin/python3
for tool in "$SIFT" "$GEN"; do
  [[ -x $tool ]] || { echo "memory_vs_size.sh: $tool missing; build it: cmake --build $BUILD --target sift sift_gen_corpus" >&2; exit 1; }
done
[[ -x /usr/bin/time ]] || { echo "memory_vs_size.sh: /usr/bin/time missing (apt-get install time)" >&2; exit 1; }

# corpus NAME LINES [gen args...]: generates $BENCH_DATA/NAME once (8 plain shards).
corpus() {
  local name=$1 lines=$2
  shift 2
  local dir=$BENCH_DATA/$name
  local args="--lines $lines --shards 8 --seed 1 --task-seed 1 $*"
  if [[ ! -f $dir/.args || $(cat "$dir/.args") != "$args" ]]; then
    rm -rf "$dir"
    mkdir -p "$dir"
    # shellcheck disable=SC2086
    "$GEN" $args --out "$dir/part" >&2
    echo "$args" > "$dir/.args"
  fi
  echo "$dir"
}

TMP=$(mktemp -d /tmp/sift-memory-XXXXXX)
[[ ${KEEP_TMP:-0} == 1 ]] && echo "memory_vs_size.sh: keeping $TMP" >&2 || trap 'rm -rf "$TMP"' EXIT
EXTRA=()
for kv in ${SIFT_SET:-}; do EXTRA+=(--set "$kv"); done

# run CASE LINES DIR REPS [--set k=v ...]: trains REPS times, appends one line per run.
run() {
  local case=$1 lines=$2 dir=$3 reps=$4
  shift 4
  local bytes
  bytes=$(cat "$dir"/part-*.txt | wc -c)
  for rep in $(seq 1 "$reps"); do
    echo "== $case ($lines lines) repetition $rep/$reps" >&2
    local tag=$TMP/$case-$rep
    /usr/bin/time -v -o "$tag.time" "$SIFT" train "$CONFIG" --json --quiet \
      --set data.train.path="$dir" --set run.dir="$TMP/runs" --set run.name="$case-$rep" \
      "$@" "${EXTRA[@]}" > "$tag.json" 2> "$tag.err" || {
        echo "memory_vs_size.sh: sift train failed ($case):" >&2; cat "$tag.err" >&2; exit 1; }
    rm -rf "$TMP/runs/$case-$rep"
    echo "$case $lines $bytes $tag" >> "$TMP/runs.txt"
  done
}

C1=$(corpus mem-1000000 1000000)
C10=$(corpus mem-10000000 10000000)
[[ $FULL == 1 ]] && C3=$(corpus mem-3000000 3000000)
[[ $HUGE == 1 ]] && CH=$(corpus mem-1000000-vocab5m 1000000 --vocab 5000000)

cat "$C1"/part-*.txt > /dev/null
run 1M 1000000 "$C1" "$N"
[[ $FULL == 1 ]] && run 3M 3000000 "$C3" 1
run 10M 10000000 "$C10" 1
if [[ $HUGE == 1 ]]; then
  run 1M-vocab5M 1000000 "$CH" 1
  run 1M-vocab5M-limit500k 1000000 "$CH" 1 --set tokenizer.count_limit=500000
fi

CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
export TMP N CPU CORES=$(nproc) MEM=$(free -g | awk '/^Mem:/ {print $2}') WRITE
export COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
export DIRTY=$(git status --porcelain 2>/dev/null | grep -q . && echo ' (+ local changes)' || true)
export TORCHVER=$(dpkg-query -W -f='${Version}' libtorch-dev 2>/dev/null || echo '?')
export SIFT_SET=${SIFT_SET:-}
$PY - <<'EOF'
import json, os, re, statistics, sys, time

tmp = os.environ["TMP"]

def time_v(path):
    text = open(path).read()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text).group(1)
    secs = 0.0
    for part in wall.split(":"):
        secs = secs * 60 + float(part)
    return rss / 1024.0, secs

def summary(path):
    try:
        return json.load(open(path))
    except Exception:
        return {}

def find(d, *keys):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d

cases = {}
order = []
for row in open(f"{tmp}/runs.txt"):
    case, lines, nbytes, tag = row.split()
    rss, wall = time_v(tag + ".time")
    js = summary(tag + ".json")
    if case not in cases:
        order.append(case)
        cases[case] = {"lines": int(lines), "bytes": int(nbytes), "runs": []}
    cases[case]["runs"].append((rss, wall, js))

base = statistics.median(r[0] for r in cases["1M"]["runs"]) if "1M" in cases else None
out = []
stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
out.append("Generated by `bench/memory_vs_size.sh`: `sift train configs/synthetic.yaml --set "
           "data.train.path=DIR` under `/usr/bin/time -v`.")
out.append("")
out.append(f"- date: {stamp}; sift commit {os.environ['COMMIT']}{os.environ['DIRTY']}; "
           f"LibTorch {os.environ['TORCHVER']}")
out.append(f"- machine: {os.environ['CPU']}, {os.environ['CORES']} cores, {os.environ['MEM']} GiB "
           "(shared with other jobs: wall times are noisy)")
out.append("- config (fixed): fastText model, dim 10, bigrams, 2M buckets, 1 epoch, batch 32, "
           "data.workers 2, shuffle_buffer 10000, run.threads 1, valid_split 0.01, "
           "checkpoint_minutes 100000, count_limit 5M" +
           (f"; extra `--set {os.environ['SIFT_SET']}`" if os.environ['SIFT_SET'] else ""))
out.append("- data: `sift-gen-corpus --lines L --shards 8 --seed 1 --task-seed 1` (vocabulary "
           "50k words unless stated), plain shards in the page cache")
out.append(f"- 1M: median of N={os.environ['N']} runs; every other row: one run (N=1)")
out.append("")
out.append("| case | lines | data MB | vocab | peak RSS MB | RSS vs 1M | wall s | train loop s | lines/s (wall) |")
out.append("|---|---|---|---|---|---|---|---|---|")
for case in order:
    c = cases[case]
    rss = statistics.median(r[0] for r in c["runs"])
    wall = statistics.median(r[1] for r in c["runs"])
    js = c["runs"][0][2]
    vocab = find(js, "train", "vocabulary")
    loop = [find(r[2], "train", "seconds") for r in c["runs"]]
    loop = [x for x in loop if isinstance(x, (int, float))]
    ratio = f"{rss / base:.3f}" if base else "-"
    out.append(f"| {case} | {c['lines']:,} | {c['bytes']/1e6:.0f} | {vocab if vocab is not None else '-'} | "
               f"{rss:.0f} | {ratio} | {wall:.1f} | "
               f"{statistics.median(loop):.1f} | {c['lines']/wall:,.0f} |" if loop else
               f"| {case} | {c['lines']:,} | {c['bytes']/1e6:.0f} | {vocab if vocab is not None else '-'} | "
               f"{rss:.0f} | {ratio} | {wall:.1f} | - | {c['lines']/wall:,.0f} |")
if base and "10M" in cases:
    r10 = statistics.median(r[0] for r in cases["10M"]["runs"]) / base
    verdict = "met" if r10 <= 1.10 else "NOT met"
    out.append("")
    out.append(f"Target (10M peak RSS within 10% of 1M): **{verdict}** (ratio {r10:.3f}).")
table = "\n".join(out)
print(table)
if os.environ.get("RAW_OUT"):  # bench/compare plots these
    rows = [{"case": k, "lines": cases[k]["lines"], "bytes": cases[k]["bytes"],
             "peak_rss_mb": statistics.median(r[0] for r in cases[k]["runs"]),
             "wall_s": statistics.median(r[1] for r in cases[k]["runs"])} for k in order]
    json.dump(rows, open(os.environ["RAW_OUT"], "w"), indent=1)

if os.environ["WRITE"] == "1":
    sys.path.insert(0, "bench")
    from results_section import write_section
    write_section("memory", "Peak memory against data size", table)
EOF

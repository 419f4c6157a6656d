#!/usr/bin/env bash
# Data-pipeline throughput: read + parse + tokenize (+ batch) of a generated corpus with
# each tokenizer (word, word+bigrams, SentencePiece) and 1/2 workers, next to the limits
# `cat FILES > /dev/null` and `spm_encode` on the same files. Writes a table of medians
# into the throughput section of bench/RESULTS.md (between <!-- throughput:begin/end -->).
#
#   bench/throughput.sh                 # 1M lines, N=3, writes RESULTS.md
#   bench/throughput.sh -n 5 --no-write
#   LINES=200000 bench/throughput.sh --no-write   # quick look
#
# Variables: BUILD (build folder with sift-data-bench, sift-gen-corpus; default build),
# BENCH_DATA (where the corpus and the SentencePiece model are generated once; default
# /tmp/siftbench), LINES (default 1000000), SHARDS (default 8), KEEP_TMP=1 (keep the
# benchmark JSON and timings).
set -euo pipefail
# What bench/RESULTS.md names as the command of this script's table (bench/results_section.py).
export SIFT_BENCH_COMMAND="${SIFT_BENCH_COMMAND:-bench/throughput.sh${*:+ $*}}"

cd "$(dirname "$0")/.."
N=3
WRITE=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    -n) N="$2"; shift 2 ;;
    --no-write) WRITE=0; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; exit 0 ;;
    *) echo "throughput.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

BUILD=${BUILD:-build}
BENCH=$BUILD/sift-data-bench
GEN=$BUILD/sift-gen-corpus
BENCH_DATA=${BENCH_DATA:-/tmp/siftbench}
LINES=${LINES:-1000000}
SHARDS=${SHARDS:-8}
PY=/usr/bin/python3
for tool in "$BENCH" "$GEN"; do
  [[ -x $tool ]] || { echo "throughput.sh: $tool missing; build it: cmake --build $BUILD --target sift_data_bench sift_gen_corpus" >&2; exit 1; }
done
for tool in spm_train spm_encode "$PY"; do
  command -v "$tool" >/dev/null || { echo "throughput.sh: $tool missing (apt-get install sentencepiece python3)" >&2; exit 1; }
done

CORPUS=$BENCH_DATA/tp-$LINES-$SHARDS
mkdir -p "$CORPUS"
if [[ ! -f $CORPUS/.done ]]; then
  "$GEN" --lines "$LINES" --shards "$SHARDS" --out "$CORPUS/part" --seed 1 --task-seed 1
  touch "$CORPUS/.done"
fi
FILES=("$CORPUS"/part-*.txt)
HALF=$(( ${#FILES[@]} / 2 ))
SPM=$CORPUS/spm
if [[ ! -f $SPM.model ]]; then
  # Unigram, 8000 pieces, trained on the text (labels cut off) of the first 200k lines.
  head -n 200000 "${FILES[0]}" | cut -d' ' -f2- > "$CORPUS/spm_sample.txt"
  spm_train --input="$CORPUS/spm_sample.txt" --model_prefix="$SPM" --vocab_size=8000 \
    --model_type=unigram --input_sentence_size=200000 --num_threads=2 --minloglevel=1
fi

TMP=$(mktemp -d /tmp/sift-throughput-XXXXXX)
[[ ${KEEP_TMP:-0} == 1 ]] && echo "throughput.sh: keeping $TMP" >&2 || trap 'rm -rf "$TMP"' EXIT
now() { date +%s.%N; }

cat "${FILES[@]}" > /dev/null  # warm the page cache once
for rep in $(seq 1 "$N"); do
  echo "== repetition $rep/$N" >&2
  t0=$(now); cat "${FILES[@]}" > /dev/null; t1=$(now)
  echo "cat $t0 $t1" >> "$TMP/limits.txt"
  t0=$(now); spm_encode --model="$SPM.model" --output_format=id "${FILES[@]}" > /dev/null; t1=$(now)
  echo "spm1 $t0 $t1" >> "$TMP/limits.txt"
  t0=$(now)
  spm_encode --model="$SPM.model" --output_format=id "${FILES[@]:0:$HALF}" > /dev/null &
  spm_encode --model="$SPM.model" --output_format=id "${FILES[@]:$HALF}" > /dev/null
  wait
  t1=$(now)
  echo "spm2 $t0 $t1" >> "$TMP/limits.txt"
  SIFT_BENCH_SHARDS=$CORPUS/part-*.txt SIFT_BENCH_SPM_MODEL=$SPM.model SIFT_BENCH_TEXT_MB=0.1 \
    "$BENCH" --benchmark_filter='^BM_(ShardedStream|Driver)/' --benchmark_min_time=0.01 \
    --benchmark_format=json --benchmark_out="$TMP/bench-$rep.json" --benchmark_out_format=json \
    > /dev/null
done

BYTES=$(cat "${FILES[@]}" | wc -c)
CPU=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
export TMP N LINES BYTES CPU CORES=$(nproc) SPMVER=$(dpkg-query -W -f='${Version}' sentencepiece 2>/dev/null || echo '?')
export COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
export DIRTY=$(git status --porcelain 2>/dev/null | grep -q . && echo ' (+ local changes)' || true)
export SHARDS FILESHOW="$CORPUS/part-*.txt" WRITE
$PY - <<'EOF'
import glob, json, os, statistics, sys, time

tmp = os.environ["TMP"]
n = int(os.environ["N"])
lines = int(os.environ["LINES"])
nbytes = int(os.environ["BYTES"])

limits = {}
for row in open(f"{tmp}/limits.txt"):
    name, t0, t1 = row.split()
    limits.setdefault(name, []).append(float(t1) - float(t0))

runs = {}  # name -> list of (real seconds, items/s, bytes/s)
for path in sorted(glob.glob(f"{tmp}/bench-*.json")):
    for b in json.load(open(path))["benchmarks"]:
        if b.get("error_occurred"):
            runs.setdefault(b["name"], []).append(None)
            continue
        secs = b["real_time"] / {"ms": 1e3, "us": 1e6, "ns": 1e9, "s": 1}[b["time_unit"]]
        runs.setdefault(b["name"], []).append((secs, b["items_per_second"], b["bytes_per_second"]))

def med(xs):
    return statistics.median(xs)

cat_mbs = nbytes / med(limits["cat"]) / 1e6
rows = []
def row(what, tok, workers, secs_list, items=None, bytes_=None):
    s = med(secs_list)
    lps = (items if items is not None else lines / s)
    mbs = (bytes_ if bytes_ is not None else nbytes / s) / 1e6
    rows.append((what, tok, workers, lps, mbs, s))

row("`cat FILES > /dev/null` (page cache)", "-", "1 process", limits["cat"])
row("`spm_encode --output_format=id FILES`", "sentencepiece", "1 process", limits["spm1"])
row("`spm_encode` x2 (half the files each)", "sentencepiece", "2 processes", limits["spm2"])

tok_names = {"0": "word", "1": "word+bigrams", "2": "sentencepiece"}
def add(prefix, label):
    for name, vals in runs.items():
        if not name.startswith(prefix):
            continue
        args = dict(p.split(":") for p in name.split("/")[1:] if ":" in p)
        tok = tok_names[args["tok"]]
        extra = ""
        if args.get("shuffle", "0") != "0":
            extra = f", shuffle {args['shuffle']}"
        if any(v is None for v in vals):
            rows.append((label + extra, tok, args["workers"], None, None, None))
            continue
        rows.append((label + extra, tok, args["workers"], med([v[1] for v in vals]),
                     med([v[2] for v in vals]) / 1e6, med([v[0] for v in vals])))

add("BM_ShardedStream/", "Sift ShardedStream (read+parse+tokenize+encode+batch)")
add("BM_Driver/", "Sift readers only (RecordReader+encode, no batching)")

stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
out = []
out.append(f"Generated by `bench/throughput.sh` (N={n} repetitions, medians; each repetition runs "
           "every row once, one after another).")
out.append("")
out.append(f"- date: {stamp}; sift commit {os.environ['COMMIT']}{os.environ['DIRTY']}")
out.append(f"- machine: {os.environ['CPU']}, {os.environ['CORES']} cores (shared with other jobs: "
           "only ratios within this table mean much)")
out.append(f"- data: `sift-gen-corpus --lines {lines} --shards {os.environ['SHARDS']}` "
           f"(fastText format, vocabulary 50k, median 20 tokens/line), {nbytes/1e6:.1f} MB, plain, "
           "read from the page cache")
out.append(f"- SentencePiece: unigram, 8000 pieces, trained by `spm_train` on 200k lines of the corpus; "
           f"Debian `sentencepiece` {os.environ['SPMVER']}. `spm_encode` reads the raw lines "
           "(labels included, ~7% more bytes to encode); Sift encodes the parsed text only")
out.append("- Sift rows: `sift-data-bench` (`bench/micro/data_bench.cc`), one epoch per "
           "iteration, shuffle off unless stated, batch 32, prefetch 1024; the vocabulary pass "
           "before it is not timed")
out.append("")
out.append("| what | tokenizer | workers | lines/s | MB/s | vs `cat` | s |")
out.append("|---|---|---|---|---|---|---|")
for what, tok, workers, lps, mbs, s in rows:
    if lps is None:
        out.append(f"| {what} | {tok} | {workers} | skipped | | | |")
        continue
    secs = f"{s:.3f}" if s < 1 else f"{s:.2f}"
    out.append(f"| {what} | {tok} | {workers} | {lps:,.0f} | {mbs:.1f} | "
               f"{mbs/cat_mbs*100:.2f}% | {secs} |")
table = "\n".join(out)
print(table)

if os.environ["WRITE"] == "1":
    sys.path.insert(0, "bench")
    from results_section import write_section
    write_section("throughput", "Data pipeline throughput", table)
EOF

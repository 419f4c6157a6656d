#!/usr/bin/env bash
# Side-by-side benchmark: the fastText CLI (`fasttext supervised`) against `sift train`
# on the public data sets in data/ (tools/get_data.sh), same settings, same machine, one run.
#
#   bench/compare_fasttext.sh [--quick | --full] [-n N] [--only A,B] [--no-write]
#
#   --quick     AG News sample, TREC, SST-2 (stsa.binary)
#   (default)   those plus SST-2 GLUE and MR
#   --full      those plus 20 Newsgroups (dim 50, 50 epochs: minutes per repetition)
#   -n N        repetitions of each fastText/Sift pair, interleaved (default 3); medians reported.
#               The pairs alternate which program goes first; the load average is read before
#               and after each pair, and a set whose pairs saw a load above 1.5 is marked busy.
#   --only A,B  only these data sets (ag_news trec sst2 sst2_glue mr 20ng); implies --no-write
#   --synthetic LINES  instead: a synthetic corpus of LINES lines that no config was tuned on
#               (sift-gen-corpus: 8 labels, about 32 words a line, seed 7; a test set of
#               20,000 lines, seed 8), 1 epoch of configs/synthetic.yaml with run.threads=2
#               and data.workers=2 against `fasttext supervised -thread 2` (issue #46)
#   --no-write  print the table only, leave bench/RESULTS.md alone
#
# Environment: SIFT (the sift binary, default build/sift), DATA (default data),
# THREADS (fastText -thread, default 2), SIFT_THREADS (overrides run.threads of the configs,
# which say 1), SIFT_SET (extra --set KEY=VALUE arguments for every Sift run, e.g.
# "train.fast_path=off"), SIFT_SEEDS (run.seed of each repetition in turn, e.g. "1 2 3 4 5"
# with -n 5: Sift's runs are deterministic, so its spread over seeds is what repetitions show;
# default: the configs' seed every time), KEEP_TMP=1 keeps the temporary folder,
# RAW_OUT=FILE copies the per-repetition rows (tab-separated) there.
# Run from the repository root. Installs nothing: tools/setup.sh installs fasttext and time.
set -euo pipefail
# What bench/RESULTS.md names as the command of this script's table (bench/results_section.py).
export SIFT_BENCH_COMMAND="${SIFT_BENCH_COMMAND:-bench/compare_fasttext.sh${*:+ $*}}"

SIFT=${SIFT:-build/sift}
DATA=${DATA:-data}
THREADS=${THREADS:-2}
SIFT_THREADS=${SIFT_THREADS:-}
read -r -a SIFT_SEED_LIST <<<"${SIFT_SEEDS:-}"
PY=/usr/bin/python3
MODE=default
N=3
WRITE=1
ONLY=
SYNTH=
GEN=${GEN:-build/sift-gen-corpus}

usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "compare_fasttext.sh: $*" >&2; exit 1; }

while (($#)); do
  case "$1" in
    --quick) MODE=quick ;;
    --full) MODE=full ;;
    -n) [[ $# -ge 2 ]] || die "-n needs a number"; N=$2; shift ;;
    -n*) N=${1#-n} ;;
    --no-write) WRITE=0 ;;
    --only) [[ $# -ge 2 ]] || die "--only needs data set names"; ONLY=$2; WRITE=0; shift ;;
    --synthetic) [[ $# -ge 2 ]] || die "--synthetic needs a line count"; SYNTH=$2; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
  shift
done
[[ "$N" =~ ^[1-9][0-9]*$ ]] || die "-n: expected a positive integer, got '$N'"

# --- preconditions --------------------------------------------------------------------
[[ -f CMakeLists.txt && -d configs && -d bench ]] ||
  die "run this from the repository root (bench/compare_fasttext.sh)"
command -v fasttext >/dev/null 2>&1 ||
  die "the fastText CLI 'fasttext' is not installed (Debian package 'fasttext'; tools/setup.sh installs it)"
[[ -x /usr/bin/time ]] ||
  die "/usr/bin/time is missing (Debian package 'time'; tools/setup.sh installs it)"
[[ -x "$PY" ]] || die "$PY is missing (the script uses it to convert data and build the table)"
[[ -x "$SIFT" ]] || die "sift binary '$SIFT' not found or not executable: build it, or set SIFT=path/to/sift"
[[ -d "$DATA" ]] || die "data folder '$DATA' not found (set DATA=...)"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sift-ftcompare.XXXXXX")
if [[ "${KEEP_TMP:-0}" == 1 ]]; then
  echo "temporary files kept in $TMP" >&2
else
  trap 'rm -rf "$TMP"' EXIT
fi

# --- data sets ------------------------------------------------------------------------
# name|config|fastText dim|epochs|lr
SETS=("ag_news|configs/ag_news.yaml|10|5|0.5"
      "trec|configs/trec.yaml|10|5|0.5"
      "sst2|configs/sst2.yaml|10|5|0.5")
if [[ $MODE != quick ]]; then
  SETS+=("sst2_glue|configs/sst2_glue.yaml|10|5|0.5"
         "mr|configs/mr.yaml|10|5|0.5")
fi
[[ $MODE == full ]] && SETS+=("20ng|configs/20ng.yaml|50|50|1.0")
[[ -n $SYNTH ]] && SETS=("synthetic|configs/synthetic.yaml|10|1|0.5")
if [[ -n $ONLY ]]; then
  ALL=("ag_news|configs/ag_news.yaml|10|5|0.5" "trec|configs/trec.yaml|10|5|0.5"
       "sst2|configs/sst2.yaml|10|5|0.5" "sst2_glue|configs/sst2_glue.yaml|10|5|0.5"
       "mr|configs/mr.yaml|10|5|0.5" "20ng|configs/20ng.yaml|50|50|1.0")
  SETS=()
  for want in ${ONLY//,/ }; do
    found=0
    for e in "${ALL[@]}"; do [[ ${e%%|*} == "$want" ]] && { SETS+=("$e"); found=1; }; done
    ((found)) || die "--only: unknown data set '$want' (ag_news trec sst2 sst2_glue mr 20ng)"
  done
fi

# Converts one data set to fastText's format ($TMP/NAME.train.ft, $TMP/NAME.test.ft).
convert() {
  if [[ $1 == synthetic ]]; then
    [[ -x $GEN ]] || die "$GEN not found: build sift-gen-corpus or set GEN=..."
    mkdir -p "$TMP/synthetic"
    "$GEN" --lines "$SYNTH" --shards 8 --classes 8 --median-length 24 --seed 7 \
      --out "$TMP/synthetic/part" >&2
    cat "$TMP"/synthetic/part-*.txt >"$TMP/synthetic.train.ft"
    "$GEN" --lines 20000 --classes 8 --median-length 24 --seed 8 --out "$TMP/synthetic.test" >&2
    mv "$TMP"/synthetic.test-00000-of-00001.txt "$TMP/synthetic.test.ft"
    return
  fi
  "$PY" bench/python/to_fasttext.py "$1" "$DATA" "$TMP"
}

# Wall seconds, peak RSS (kB) and CPU seconds (user + system) from a `/usr/bin/time -v` report.
time_fields() {
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; wall = s }
    /Maximum resident set size/ { rss = $2 }
    /User time \(seconds\)|System time \(seconds\)/ { cpu += $2 }
    END { printf "%.3f %d %.2f\n", wall, rss, cpu }' "$1"
}

load1() { cut -d' ' -f1 /proc/loadavg; }

# One fastText run and one Sift run of the set in $name (globals: the loop's).
run_fasttext() {
  # fastText: supervised (timed), then test (timed separately).
  rm -f "$TMP/ft.bin" "$TMP/ft.vec"
  /usr/bin/time -v -o "$TMP/ft_train.time" fasttext supervised \
    -input "$TMP/$name.train.ft" -output "$TMP/ft" -dim "$dim" -epoch "$epochs" -lr "$lr" \
    -wordNgrams 2 -thread "$THREADS" -bucket 2000000 -verbose 0 \
    >"$TMP/ft_train.log" 2>&1 || { cat "$TMP/ft_train.log" >&2; die "fasttext supervised failed on $name"; }
  /usr/bin/time -v -o "$TMP/ft_test.time" fasttext test "$TMP/ft.bin" "$TMP/$name.test.ft" \
    >"$TMP/ft_test.out" 2>&1 || { cat "$TMP/ft_test.out" >&2; die "fasttext test failed on $name"; }
  ft_acc=$(awk '$1 == "P@1" { print $2 }' "$TMP/ft_test.out")
  [[ -n "$ft_acc" ]] || { cat "$TMP/ft_test.out" >&2; die "no P@1 in fasttext test output ($name)"; }
  read -r ft_wall ft_rss ft_cpu < <(time_fields "$TMP/ft_train.time")
  read -r ft_test_wall ft_test_rss _ < <(time_fields "$TMP/ft_test.time")
}

run_sift() {
  # Sift: train with the matching config; the test split is evaluated inside the run.
  rm -rf "$TMP/runs"
  /usr/bin/time -v -o "$TMP/sift.time" "$SIFT" train "$config" --json --quiet \
    --set "run.dir=$TMP/runs" "${extra[@]}" ${seed[@]+"${seed[@]}"} \
    >"$TMP/sift.json" 2>"$TMP/sift.err" ||
    { cat "$TMP/sift.err" >&2; die "sift train $config failed"; }
  read -r sift_acc sift_train_s < <("$PY" -c '
import json, sys
try:
  j = json.load(open(sys.argv[1]))
  print(j["splits"]["test"]["accuracy"], j["train"]["seconds"])
except Exception as e:
  print("error", repr(e))' "$TMP/sift.json")
  [[ $sift_acc != error && -n $sift_acc ]] ||
    die "no test accuracy in the --json output of sift train $config ($sift_train_s): $(head -c 300 "$TMP/sift.json")"
  read -r sift_wall sift_rss sift_cpu < <(time_fields "$TMP/sift.time")
}

RAW="$TMP/raw.tsv"
: >"$RAW"
echo "fastText $(dpkg-query -W -f='${Version}' fasttext 2>/dev/null || echo '?') (-thread $THREADS), sift: $SIFT (run.threads: ${SIFT_THREADS:-from the configs}), mode $MODE, N=$N" >&2

for entry in "${SETS[@]}"; do
  IFS='|' read -r name config dim epochs lr <<<"$entry"
  [[ -f "$config" ]] || die "$config is missing"
  echo "== $name: converting to fastText format" >&2
  convert "$name"
  extra=()
  if [[ -n $SIFT_THREADS ]]; then extra+=(--set "run.threads=$SIFT_THREADS"); fi
  for s in ${SIFT_SET:-}; do extra+=(--set "$s"); done
  if [[ $name == mr ]]; then
    # The same 90/10 split for both tools (mr.yaml itself holds out a hashed 10%).
    extra+=(--set "data.train.path=$TMP/mr.train.all" --set "data.test.path=$TMP/mr.test.all"
           --set data.valid_split=0)
  fi
  if [[ $name == synthetic ]]; then
    extra+=(--set "data.train.path=$TMP/synthetic" --set "data.test.path=$TMP/synthetic.test.ft"
           --set run.threads=2 --set data.workers=2)
  fi
  if [[ $name == 20ng ]]; then
    # fastText reads every word: Sift too, so that both see the same text (20ng.yaml
    # leaves stop words and punctuation out; model_zoo_accuracy.py measures that).
    extra+=(--set 'tokenizer.stopwords=""' --set tokenizer.drop_punctuation=false)
  fi
  for ((rep = 1; rep <= N; rep++)); do
    seed=()
    if ((${#SIFT_SEED_LIST[@]})); then
      seed=(--set "run.seed=${SIFT_SEED_LIST[(rep - 1) % ${#SIFT_SEED_LIST[@]}]}")
    fi
    # The two programs alternate going first (odd pairs fastText, even pairs Sift), so
    # that neither always meets the other's page cache or the machine's warm-up.
    load_before=$(load1)
    if ((rep % 2)); then run_fasttext; run_sift; else run_sift; run_fasttext; fi
    load_after=$(load1)
    printf '%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$rep" "$ft_acc" \
      "$ft_wall" "$ft_rss" "$ft_test_wall" "$sift_acc" "$sift_wall" "$sift_rss" "$sift_train_s" \
      "$dim/$epochs/$lr" "$ft_cpu" "$sift_cpu" "$load_before" "$load_after" >>"$RAW"
    printf '   rep %d: fastText acc %.4f wall %.2fs cpu %.2fs (+test %.2fs) | sift acc %.4f wall %.2fs cpu %.2fs (training loop %.2fs) | load %s -> %s\n' \
      "$rep" "$ft_acc" "$ft_wall" "$ft_cpu" "$ft_test_wall" "$sift_acc" "$sift_wall" "$sift_cpu" \
      "$sift_train_s" "$load_before" "$load_after" >&2
  done
done

# --- table ----------------------------------------------------------------------------
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
cores=$(nproc)
ft_version=$(dpkg-query -W -f='${Version}' fasttext 2>/dev/null || echo unknown)
torch_version=$(dpkg-query -W -f='${Version}' libtorch-dev 2>/dev/null || echo unknown)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -n "$(git status --porcelain 2>/dev/null)" ]] && commit="$commit (+ local changes)"
stamp=$(date -u '+%Y-%m-%d %H:%M UTC')

TABLE="$TMP/table.md"
"$PY" - "$RAW" "$N" "$MODE" "$cpu" "$cores" "$stamp" "$ft_version" "$torch_version" "$commit" \
  "$THREADS" "${SIFT_THREADS:-as in each config}" "${SIFT_SEEDS:-as in each config}" >"$TABLE" <<'PYEOF'
import statistics, sys
raw, n, mode, cpu, cores, stamp, ftv, torchv, commit, threads, sift_threads, seeds = sys.argv[1:13]
rows = {}
order = []
for line in open(raw):
    f = line.rstrip("\n").split("\t")
    name = f[0]
    if name not in rows:
        rows[name] = []
        order.append(name)
    rows[name].append(dict(ft_acc=float(f[2]), ft_wall=float(f[3]), ft_rss=int(f[4]),
                           ft_test=float(f[5]), s_acc=float(f[6]), s_wall=float(f[7]),
                           s_rss=int(f[8]), s_train=float(f[9]), settings=f[10],
                           ft_cpu=float(f[11]), s_cpu=float(f[12]),
                           load=max(float(f[13]), float(f[14]))))
labels = {"ag_news": "AG News sample 10k -> AG test 7.6k",
          "trec": "TREC train -> test",
          "sst2": "SST-2 stsa.binary train -> test",
          "sst2_glue": "SST-2 GLUE train 67k -> GLUE validation",
          "mr": "MR, 90% -> every 10th line",
          "20ng": "20NG train -> test", "synthetic": "synthetic (8 labels) -> 20k lines"}
med = lambda rs, k: statistics.median(r[k] for r in rs)
print("Generated by `bench/compare_fasttext.sh` (mode %s, N=%s repetitions, medians)." % (mode, n))
print()
print("- date: %s; sift commit %s" % (stamp, commit))
print("- machine: %s, %s cores; fastText `-thread %s`, Sift `run.threads` %s, `run.seed` %s"
      % (cpu, cores, threads, sift_threads, seeds))
print("- fastText CLI %s (Debian `fasttext`); LibTorch %s (Debian `libtorch-dev`)" % (ftv, torchv))
print()
print("| data (train -> test) | dim/epochs/lr | fastText acc | Sift acc | diff (pts) "
      "| fastText wall s | Sift wall s | wall ratio | fastText CPU s | Sift CPU s | CPU ratio "
      "| fastText test s | Sift loop s | fastText RSS MB | Sift RSS MB | load (highest) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name in order:
    rs = rows[name]
    fa, sa = med(rs, "ft_acc"), med(rs, "s_acc")
    fw, sw = med(rs, "ft_wall"), med(rs, "s_wall")
    ratio = statistics.median(r["s_wall"] / r["ft_wall"] for r in rs if r["ft_wall"] > 0) \
        if any(r["ft_wall"] > 0 for r in rs) else float("nan")
    cpu_ratio = statistics.median(r["s_cpu"] / r["ft_cpu"] for r in rs if r["ft_cpu"] > 0) \
        if any(r["ft_cpu"] > 0 for r in rs) else float("nan")
    load = max(r["load"] for r in rs)
    # Above 1.5 the two programs competed with other work for the 2 cores: not a quiet figure.
    busy = " (busy: above 1.5)" if load > 1.5 else ""
    print("| %s | %s | %.3f | %.4f | %+.1f | %.2f | %.2f | %.2fx | %.2f | %.2f | %.2fx | %.2f | %.2f | %.0f | %.0f | %.2f%s |" % (
        labels.get(name, name), rs[0]["settings"], fa, sa, 100 * (sa - fa), fw, sw, ratio,
        med(rs, "ft_cpu"), med(rs, "s_cpu"), cpu_ratio,
        med(rs, "ft_test"), med(rs, "s_train"), med(rs, "ft_rss") / 1024, med(rs, "s_rss") / 1024,
        load, busy))
if int(n) > 1:
    print()
    print("Accuracy over the repetitions, mean (lowest-highest), fastText against Sift:")
    for name in order:
        rs = rows[name]
        stats = lambda k: (statistics.mean(r[k] for r in rs), min(r[k] for r in rs), max(r[k] for r in rs))
        f, s = stats("ft_acc"), stats("s_acc")
        print("- %s: %.4f (%.3f-%.3f) against %.4f (%.4f-%.4f), %+.2f points" % (
            labels.get(name, name), f[0], f[1], f[2], s[0], s[1], s[2], 100 * (s[0] - f[0])))
PYEOF

echo
cat "$TABLE"
if [[ -n ${RAW_OUT:-} ]]; then cp "$RAW" "$RAW_OUT"; fi  # per-repetition rows, for bench/compare

if ((WRITE)); then
  # bench/results/fasttext-compare.json, then bench/RESULTS.md from every such file.
  section=fasttext-compare heading="Five data sets against the fastText CLI"
  if [[ -n $SYNTH ]]; then
    # The vocabulary cache (docs/training.md): off, every Sift run counts its data; on, the
    # first pair counts it and the later pairs read the count back.
    if [[ ${SIFT_CACHE_DIR-} == off ]]; then
      section=fasttext-synthetic-$SYNTH-counted
      heading="$SYNTH synthetic lines against the fastText CLI, two threads each, every run counting its vocabulary"
    else
      section=fasttext-synthetic-$SYNTH
      heading="$SYNTH synthetic lines against the fastText CLI, two threads each, the vocabulary counted by the first pair and read back by the others"
    fi
  fi
  "$PY" - "$TABLE" "$section" "$heading" <<'PYEOF'
import sys
sys.path.insert(0, "bench")
from results_section import write_section
write_section(sys.argv[2], sys.argv[3], open(sys.argv[1], encoding="utf-8").read())
PYEOF
fi

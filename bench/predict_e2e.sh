#!/usr/bin/env bash
# End-to-end prediction against `fasttext predict` (issue #15): the AG News test texts
# through `sift predict` of a run folder (sift-lite, no LibTorch), the same with
# SIFT_LITE=0 (sift-main, LibTorch) and `fasttext predict` of a fastText model trained with
# the same settings (dim 10, 5 epochs, lr 0.5, bigrams, 2M buckets), the three runs
# alternating, N rounds; the texts once (7,600) and ten times (76,000). Then the shipped
# forms, on the 7,600 texts: Sift's pq export (--quantize pq --cutoff 100000 --retrain
# --qnorm) through sift-lite and through LibTorch, against fastText's .ftz (quantize
# -cutoff 100000 -retrain -qnorm).
#
#   bench/predict_e2e.sh [-n N]      (default N=5)
#
# Prints each run (wall s, peak RSS MB), then medians and ratios to fastText's, and
# how many of the 7,600 top labels Sift and fastText share. Environment: SIFT (default
# build/sift), DATA (default data), KEEP_TMP=1 keeps the temporary folder. Run from the
# repository root; tools/setup.sh installs fasttext and time.
set -euo pipefail

SIFT=${SIFT:-build/sift}
DATA=${DATA:-data}
PY=/usr/bin/python3
N=5
die() { echo "predict_e2e.sh: $*" >&2; exit 1; }
while (($#)); do
  case "$1" in
    -n) N=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1" ;;
  esac
  shift
done
command -v fasttext >/dev/null || die "fasttext is not installed (tools/setup.sh)"
[[ -x $SIFT ]] || die "$SIFT is missing (tools/build.sh)"

TMP=$(mktemp -d)
[[ ${KEEP_TMP:-0} == 1 ]] || trap 'rm -rf "$TMP"' EXIT
# shellcheck source=bench/lib/time_fields.sh
source bench/lib/time_fields.sh
    /Maximum resident set size/ { rss = $2 / 1024 }
    END { printf "%.2f %.0f\n", wall, rss }' "$1"
}

echo "== training both models (AG News sample, configs/ag_news.yaml settings)" >&2
"$PY" bench/python/to_fasttext.py ag_news "$DATA" "$TMP" >/dev/null
fasttext supervised -input "$TMP/ag_news.train.ft" -output "$TMP/ft" -dim 10 -epoch 5 \
  -lr 0.5 -wordNgrams 2 -bucket 2000000 -thread 2 -verbose 0
"$SIFT" train configs/ag_news.yaml --quiet --set "run.dir=$TMP" --set run.name=ag \
  --set "data.train.path=$DATA/ag_news/train_sample_10k.tsv" \
  --set "data.test.path=$DATA/ag_news/test.csv" >/dev/null
"$SIFT" export "$TMP/ag" --out "$TMP/ag_pq.pt" --quantize pq --cutoff 100000 --retrain \
  --qnorm >/dev/null
fasttext quantize -input "$TMP/ag_news.train.ft" -output "$TMP/ft" -cutoff 100000 -retrain \
  -qnorm -epoch 5 -lr 0.5 -thread 2 >/dev/null
# The test texts as fastText reads them (both drop the __label__ tokens), once and x10.
cp "$TMP/ag_news.test.ft" "$TMP/x1.txt"
for _ in 1 2 3 4 5 6 7 8 9 10; do cat "$TMP/ag_news.test.ft"; done >"$TMP/x10.txt"

run() {  # NAME INPUT COMMAND...: one timed run, its row into $TMP/rows
  local name=$1 input=$2
  shift 2
  /usr/bin/time -v -o "$TMP/time" "$@" >"$TMP/$name.$input.out" 2>"$TMP/err" ||
    { cat "$TMP/err" >&2; die "$name failed"; }
  read -r wall _cpu rss < <(time_fields "$TMP/time" 2)  # these runs take 0.1 s
  printf '%s\t%s\t%s\t%s\n' "$input" "$name" "$wall" "$rss" | tee -a "$TMP/rows" >&2
}
: >"$TMP/rows"
for ((round = 1; round <= N; round++)); do
  for input in x1 x10; do
    run fasttext "$input" fasttext predict "$TMP/ft.bin" "$TMP/$input.txt"
    run sift "$input" "$SIFT" predict --model "$TMP/ag" --input "$TMP/$input.txt"
    run sift_libtorch "$input" env SIFT_LITE=0 "$SIFT" predict --model "$TMP/ag" \
      --input "$TMP/$input.txt"
  done
  run fasttext pq fasttext predict "$TMP/ft.ftz" "$TMP/x1.txt"
  run sift pq "$SIFT" predict --model "$TMP/ag_pq.pt" --input "$TMP/x1.txt"
  run sift_libtorch pq env SIFT_LITE=0 "$SIFT" predict --model "$TMP/ag_pq.pt" \
    --input "$TMP/x1.txt"
done

"$PY" - "$TMP" "$N" <<'PYEOF'
import statistics, sys
tmp, n = sys.argv[1], sys.argv[2]
rows = [l.rstrip("\n").split("\t") for l in open(tmp + "/rows")]
print(f"AG News test texts, {n} alternating rounds (wall s, median; peak RSS MB, median):")
print("| texts | fasttext predict | sift predict (sift-lite) | sift predict, SIFT_LITE=0 | sift-lite / fastText | LibTorch path / fastText |")
print("|---|---|---|---|---|---|")
for inp, label in (("x1", "7,600"), ("x10", "76,000"),
                   ("pq", "7,600, shipped: Sift pq export / fastText .ftz")):
    med = {}
    for name in ("fasttext", "sift", "sift_libtorch"):
        walls = [float(r[2]) for r in rows if r[0] == inp and r[1] == name]
        rss = [float(r[3]) for r in rows if r[0] == inp and r[1] == name]
        med[name] = (statistics.median(walls), min(walls), max(walls), statistics.median(rss))
    cell = lambda m: f"{m[0]:.2f} ({m[1]:.2f}-{m[2]:.2f}) / {m[3]:.0f} MB"
    print(f"| {label} | {cell(med['fasttext'])} | {cell(med['sift'])} | {cell(med['sift_libtorch'])} "
          f"| {med['sift'][0] / med['fasttext'][0]:.2f}x | {med['sift_libtorch'][0] / med['fasttext'][0]:.2f}x |")
ft = [l.split()[0] for l in open(tmp + "/fasttext.x1.out")]
si = ["__label__" + l.split("\t")[0] for l in open(tmp + "/sift.x1.out")]
lt = [l for l in open(tmp + "/sift_libtorch.x1.out")]
same = sum(a == b for a, b in zip(ft, si))
print(f"Top labels shared with fastText: {same} of {len(ft)}; sift-lite's lines equal to "
      f"the LibTorch path's: {sum(a == b for a, b in zip(open(tmp + '/sift.x1.out'), lt))} of {len(lt)}; "
      f"with the pq export: {sum(a == b for a, b in zip(open(tmp + '/sift.pq.out'), open(tmp + '/sift_libtorch.pq.out')))}")
PYEOF

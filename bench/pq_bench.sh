#!/usr/bin/env bash
# fastText-style compression side by side with the fastText CLI, one run, same machine:
# `fasttext supervised` + `fasttext quantize -qnorm` (all rows), with `-cutoff 100000`, and
# with `-cutoff 100000 -retrain`, against `sift train` + `sift export --quantize pq
# --qnorm`, with `--cutoff 100000`, and with `--cutoff 100000 --retrain`, on AG News (10k
# training sample -> 7,600 test texts) and SST-2 (stsa.binary), same data, dim 10,
# 5 epochs, lr 0.5, bigrams, 2M buckets. Reports file sizes (and what the TorchScript zip
# holds besides the weights), test accuracy, `sift predict` against `fasttext predict`
# wall time over the 7,600 AG News texts (medians of interleaved repetitions), and
# sift-latency-bench's batch-1 and batch-64 timings of the fp32 and pq files.
#
#   bench/pq_bench.sh [--no-write]
#
#   --no-write  print the tables, leave bench/RESULTS.md alone
#
# Environment: BUILD (default build), DATA (default data), THREADS (LibTorch threads and
# fastText -thread, default 1), REPS (predict repetitions, default 5), CUTOFF (default
# 100000), SINGLE, BATCHES (sift-latency-bench), KEEP_TMP=1 keeps the temporary folder,
# REUSE=DIR times and tabulates again the models of such a kept folder without training.
# Run from the repository root after building (sift, sift-latency-bench).
set -euo pipefail
# What bench/RESULTS.md names as the command of this script's table (bench/results_section.py).
export SIFT_BENCH_COMMAND="${SIFT_BENCH_COMMAND:-bench/pq_bench.sh${*:+ $*}}"

NAME=pq_bench.sh HELP_LINES=2,20p
# shellcheck source=lib/latency_common.sh
source "$(dirname "$0")/lib/latency_common.sh"
REPS=${REPS:-5}
CUTOFF=${CUTOFF:-100000}
command -v fasttext >/dev/null || die "the fastText CLI is missing (Debian package fasttext)"
[[ -f $DATA/sst2/stsa.binary.train ]] || die "$DATA/sst2 is missing: tools/get_data.sh sst2"

wall() {  # seconds of wall time of a command, its output to $1
  local out=$1 t0 t1
  shift
  t0=$(date +%s%N)
  "$@" > "$out"
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000)) | awk '{printf "%.3f\n", $1 / 1000}'
}

if [[ -n ${REUSE:-} ]]; then  # the models of a kept run: timings and tables only
  [[ -s $REUSE/rows.jsonl ]] || die "REUSE=$REUSE holds no rows.jsonl of a kept run"
  trap - EXIT  # the kept folder stays
  rm -rf "$TMP"
  TMP=$REUSE
fi
[[ -n ${REUSE:-} ]] || : > "$TMP/rows.jsonl"
row() {  # one line of rows.jsonl: set, tool, variant, file, accuracy
  echo "{\"set\": \"$1\", \"tool\": \"$2\", \"variant\": \"$3\", \"bytes\": $(stat -c %s "$4"), \"acc\": $5}" \
    >> "$TMP/rows.jsonl"
}
for set in ag_news sst2; do
  [[ -z ${REUSE:-} ]] || break
  echo "== $set: fastText supervised + quantize" >&2
  "$PY" bench/python/to_fasttext.py "$set" "$DATA" "$TMP"
  ft=$TMP/$set.ft
  ft_test() { fasttext test "$1" "$TMP/$set.test.ft" | awk '$1 == "P@1" {print $2}'; }
  fasttext supervised -input "$TMP/$set.train.ft" -output "$ft" -dim 10 -epoch 5 -lr 0.5 \
    -wordNgrams 2 -bucket 2000000 -thread "$THREADS" -verbose 0
  row "$set" fasttext "supervised .bin" "$ft.bin" "$(ft_test "$ft.bin")"
  # quantize writes $ft.ftz from $ft.bin each time: each variant is copied aside.
  # Its own -epoch and -lr (defaults 5 and 0.05) are those of the retraining: given the
  # supervised run's, as Sift retrains with the run's.
  fasttext quantize -input "$TMP/$set.train.ft" -output "$ft" -qnorm -thread "$THREADS" -verbose 0
  cp "$ft.ftz" "$ft.all.ftz"
  row "$set" fasttext "quantize -qnorm" "$ft.all.ftz" "$(ft_test "$ft.all.ftz")"
  fasttext quantize -input "$TMP/$set.train.ft" -output "$ft" -cutoff "$CUTOFF" -qnorm \
    -thread "$THREADS" -verbose 0
  cp "$ft.ftz" "$ft.cut.ftz"
  row "$set" fasttext "quantize -cutoff $CUTOFF -qnorm" "$ft.cut.ftz" "$(ft_test "$ft.cut.ftz")"
  fasttext quantize -input "$TMP/$set.train.ft" -output "$ft" -cutoff "$CUTOFF" -retrain \
    -qnorm -epoch 5 -lr 0.5 -thread "$THREADS" -verbose 0
  row "$set" fasttext "quantize -cutoff $CUTOFF -retrain -qnorm" "$ft.ftz" "$(ft_test "$ft.ftz")"

  echo "== $set: sift train + export" >&2
  if [[ $set == ag_news ]]; then
    paths=(--set "data.train.path=$DATA/ag_news/train_sample_10k.tsv"
           --set "data.test.path=$DATA/ag_news/test.csv" --set "data.labels=$DATA/ag_news/classes.txt")
  else
    paths=(--set "data.train.path=$DATA/sst2/stsa.binary.train"
           --set "data.valid.path=$DATA/sst2/stsa.binary.dev"
           --set "data.test.path=$DATA/sst2/stsa.binary.test")
  fi
  "$SIFT" train "configs/$set.yaml" --quiet --set run.dir="$TMP/runs" \
    --set "run.threads=$THREADS" "${paths[@]}" > /dev/null
  run=$TMP/runs/$set
  acc() {
    "$SIFT" eval --model "$1" --json --set "run.threads=$THREADS" |
      "$PY" -c 'import json,sys; print(json.load(sys.stdin)["splits"]["test"]["accuracy"])'
  }
  "$SIFT" export "$run" --out "$TMP/$set.fp32.pt" > /dev/null
  row "$set" sift "export fp32" "$TMP/$set.fp32.pt" "$(acc "$TMP/$set.fp32.pt")"
  "$SIFT" export "$run" --out "$TMP/$set.pq_all.pt" --quantize pq --qnorm > /dev/null
  row "$set" sift "export --quantize pq --qnorm" "$TMP/$set.pq_all.pt" "$(acc "$TMP/$set.pq_all.pt")"
  "$SIFT" export "$run" --out "$TMP/$set.pq_cut.pt" --quantize pq --cutoff "$CUTOFF" \
    --qnorm > /dev/null
  row "$set" sift "export --quantize pq --cutoff $CUTOFF --qnorm" "$TMP/$set.pq_cut.pt" \
    "$(acc "$TMP/$set.pq_cut.pt")"
  "$SIFT" export "$run" --out "$TMP/$set.pq.pt" --quantize pq --cutoff "$CUTOFF" --retrain \
    --qnorm > /dev/null 2> "$TMP/$set.retrain.log"
  row "$set" sift "export --quantize pq --cutoff $CUTOFF --retrain --qnorm" "$TMP/$set.pq.pt" \
    "$(acc "$TMP/$set.pq.pt")"
  "$PY" - "$TMP/$set.pq.pt" > "$TMP/$set.zip.json" <<'PYEOF'
import json, os, sys, zipfile
path = sys.argv[1]
parts = {"weights": 0, "extra": 0, "code": 0}
extra = {}
with zipfile.ZipFile(path) as z:
    for i in z.infolist():
        kind = "weights" if "/data/" in i.filename else "extra" if "/extra/" in i.filename else "code"
        parts[kind] += i.file_size
        if kind == "extra":
            extra[i.filename.split("/")[-1]] = i.file_size
parts["zip_overhead"] = os.path.getsize(path) - sum(parts.values())
parts["extra_files"] = extra
print(json.dumps(parts))
PYEOF
done

# --- predict over the AG News test texts, interleaved ------------------------------------
"$PY" - "$DATA" "$TMP" <<'PYEOF'
import csv, re, sys
data, tmp = sys.argv[1:3]
ws = re.compile(r"\s+")
with open(data + "/ag_news/test.csv", encoding="utf-8", newline="") as f, \
     open(tmp + "/texts.txt", "w") as texts, open(tmp + "/texts.lower.txt", "w") as lower:
    for row in csv.reader(f):
        t = ws.sub(" ", row[1] + " " + row[2]).strip()
        texts.write(t + "\n")
        lower.write(t.lower() + "\n")  # as to_fasttext.py wrote fastText's training text
PYEOF
: > "$TMP/predict.tsv"
for ((r = 1; r <= REPS; r++)); do
  echo "== predict repetition $r/$REPS" >&2
  a=$(wall "$TMP/p.ft" fasttext predict "$TMP/ag_news.ft.ftz" "$TMP/texts.lower.txt")
  b=$(wall "$TMP/p.pq" "$SIFT" predict --model "$TMP/ag_news.pq.pt" --input "$TMP/texts.txt")
  c=$(wall "$TMP/p.fp32" "$SIFT" predict --model "$TMP/ag_news.fp32.pt" --input "$TMP/texts.txt")
  printf '%s\t%s\t%s\n' "$a" "$b" "$c" >> "$TMP/predict.tsv"
done
[[ $(wc -l < "$TMP/p.pq") == 7600 && $(wc -l < "$TMP/p.ft") == 7600 ]] ||
  die "predict did not print 7,600 lines"
lat_fp32=$("$BUILD/sift-latency-bench" --model "$TMP/ag_news.fp32.pt" --texts "$TMP/texts.txt" \
  --threads "$THREADS" --single "$SINGLE" --batches "$BATCHES")
lat_pq=$("$BUILD/sift-latency-bench" --model "$TMP/ag_news.pq.pt" --texts "$TMP/texts.txt" \
  --threads "$THREADS" --single "$SINGLE" --batches "$BATCHES")
load=$(cut -d' ' -f1-3 /proc/loadavg)

# --- tables --------------------------------------------------------------------------------
"$PY" - "$TMP" "$WRITE" "$THREADS" "$REPS" "$CUTOFF" "$load" "$lat_fp32" "$lat_pq" <<'PYEOF'
import json, statistics, sys
sys.path.insert(0, "bench")
from results_section import write_section
tmp, write, threads, reps, cutoff, load, lat_fp32, lat_pq = sys.argv[1:9]
rows = [json.loads(l) for l in open(tmp + "/rows.jsonl")]
names = {"ag_news": "AG News (10k sample -> 7.6k test)", "sst2": "SST-2 (stsa.binary)"}
kb = lambda b: "%.0f KB" % (b / 1e3) if b < 1e6 else "%.2f MB" % (b / 1e6)
out = []
for s in names:
    mine = [r for r in rows if r["set"] == s]
    ft_ftz = [r for r in mine if r["tool"] == "fasttext" and "-retrain" in r["variant"]][0]
    out += ["%s:" % names[s], "",
            "| tool | model | bytes | size | / fastText quantize -cutoff -retrain | test accuracy |",
            "|---|---|---|---|---|---|"]
    for r in mine:
        out.append("| %s | `%s` | %d | %s | %.2f | %.4f |" % (
            r["tool"], r["variant"], r["bytes"], kb(r["bytes"]), r["bytes"] / ft_ftz["bytes"],
            r["acc"]))
    out.append("")
out += ["What the Sift pq file (cutoff, retrain, qnorm) holds (bytes):", "",
        "| data | weights (codes, centroids, kept ids, output) | extra files | TorchScript code | zip headers | extra files in detail |",
        "|---|---|---|---|---|---|"]
for s in names:
    z = json.load(open("%s/%s.zip.json" % (tmp, s)))
    out.append("| %s | %d | %d | %d | %d | %s |" % (
        names[s], z["weights"], z["extra"], z["code"], z["zip_overhead"],
        ", ".join("%s %d" % kv for kv in sorted(z["extra_files"].items(), key=lambda kv: -kv[1]))))
p = [list(map(float, l.split())) for l in open(tmp + "/predict.tsv")]
ft, pq, fp32 = (statistics.median(c) for c in zip(*p))
lf, lq = json.loads(lat_fp32), json.loads(lat_pq)
out += ["", "| predict, 7,600 AG News texts (wall, median of %s) | seconds | / fasttext predict |" % reps,
        "|---|---|---|",
        "| `fasttext predict` .ftz (cutoff, retrain) | %.3f | 1.00 |" % ft,
        "| `sift predict` pq export (cutoff, retrain) | %.3f | %.2f |" % (pq, pq / ft),
        "| `sift predict` fp32 export | %.3f | %.2f |" % (fp32, fp32 / ft),
        "", "| sift-latency-bench (AG News) | batch 1 p50 / p99 | batch 64 texts/s |", "|---|---|---|",
        "| fp32 | %.0f / %.0f us | %.0f |" % (lf["p50_us"], lf["p99_us"], lf["batch64_texts_per_s"]),
        "| pq | %.0f / %.0f us | %.0f |" % (lq["p50_us"], lq["p99_us"], lq["batch64_texts_per_s"]),
        "", "Conditions: dim 10, 5 epochs, lr 0.5, bigrams, 2M buckets for both tools; cutoff %s, "
        "retrain (5 epochs, lr 0.5: fastText's `quantize -epoch 5 -lr 0.5`, Sift the run's), "
        "qnorm, dsub 2; fastText -thread and LibTorch threads %s; predict timings interleaved; "
        "shared 2-core machine, load average at the end %s." % (cutoff, threads, load)]
table = "\n".join(out)
print(table)
if write:
    write_section("pq_compression", "fastText-style compression: Sift pq against fastText quantize (#15 pq)", table)
PYEOF

#!/bin/bash
# bench/fuzz.sh [SECONDS] [TARGET...]: coverage-guided fuzzing of the torch-free readers
# (tests/fuzz/) with clang's libFuzzer, SECONDS (default 60) per target, and a report of
# executions and coverage per target. Builds build-fuzz/ (clang, -fsanitize=fuzzer-no-link
# and address on the libraries; -DSIFT_LIBFUZZER=ON) on first use. Each target starts
# from a copy of its seed corpus (tests/data/fuzz/TARGET) in build-fuzz/corpus/TARGET,
# which keeps what libFuzzer adds; crashes go to build-fuzz/findings/TARGET/.
# The CI runs the same targets briefly and deterministically (ctest -L fuzz).
# Run with every target (no TARGET given), it also writes its table to bench/RESULTS.md
# (family "reliability", bench/results/fuzz.json).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
all=0
[ ${#targets[@]} -eq 0 ] && all=1 && targets=(record_parser yaml_config checkpoint export_format safetensors http_body)
build=build-fuzz
if [ ! -f $build/build.ninja ]; then
  CC=clang CXX=clang++ cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSIFT_LIBFUZZER=ON -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address" \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address" >/dev/null
fi
cmake --build $build --target $(printf 'fuzz_%s ' "${targets[@]}") >/dev/null
declare -A readers=([record_parser]=datasets/record_parser [yaml_config]="config/loader (YAML, --set)"
  [checkpoint]=framework/runtime/base/checkpoint_file [export_format]=framework/runtime/base/export_format
  [safetensors]=datasets/safetensors [http_body]=tools/serve/request_json)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
printf '%-14s %8s %12s %10s %8s %8s\n' target seconds executions exec/s cov ft
table="| target | reader | seconds | executions | executions/s | edges (cov) | features (ft) | findings |
|---|---|---|---|---|---|---|---|"
for t in "${targets[@]}"; do
  mkdir -p $build/corpus/$t $build/findings/$t
  cp -n tests/data/fuzz/$t/* $build/corpus/$t/ 2>/dev/null || true
  log=$build/findings/$t/last.log
  if ! $build/tests/fuzz/fuzz_$t $build/corpus/$t -max_total_time=$seconds -print_final_stats=1 \
      -artifact_prefix=$build/findings/$t/ -max_len=65536 >"$log" 2>&1; then
    echo "$t: a finding, see $log and $build/findings/$t/" >&2
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  last=$(grep -E '#[0-9]+.*cov: ' "$log" | tail -1)
  cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*' || echo ?)
  ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*' || echo ?)
  printf '%-14s %8s %12s %10s %8s %8s\n' "$t" "$seconds" "$runs" "$((runs / seconds))" "$cov" "$ft"
  found=$(find $build/findings/$t -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' \
    -o -maxdepth 1 -name 'oom-*' -o -maxdepth 1 -name 'timeout-*' | wc -l)
  reader=${readers[$t]:-?}
  table+=$'\n'"| $t | ${reader:-?} | $seconds | $runs | $((runs / seconds)) | $cov | $ft | $found |"
done
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD)"
if [ $all -eq 1 ]; then
  SIFT_BENCH_COMMAND="bench/fuzz.sh $seconds" python3 - "$table" "$load_before" <<'PY'
import sys
sys.path.insert(0, "bench")
from results_section import write_section
table, load = sys.argv[1], sys.argv[2]
write_section("fuzz", "Coverage-guided fuzzing of the readers (libFuzzer + ASan)",
              f"- load average {load} at the start\n\n{table}\n\n"
              "- Each target starts from its seed corpus (tests/data/fuzz/TARGET) plus what earlier "
              "runs added (build-fuzz/corpus/); findings counts crash-, leak-, oom- and timeout- files "
              "in build-fuzz/findings/TARGET/. CI runs the same targets deterministically on the seed "
              "corpus and 2,000 seeded mutations each (`ctest -L fuzz`).")
PY
fi

# Shared start of the bench scripts that train on AG News and time exports with
# sift-latency-bench (dtype_bench.sh, prune_bench.sh). Source it after setting NAME (the
# script's name for messages) and HELP_LINES (the sed range of its usage comment); it
# parses --no-write/--help, checks the build and the data, and makes $TMP (removed at
# exit unless KEEP_TMP=1). Sets BUILD, DATA, THREADS, SINGLE, BATCHES, PY, WRITE, SIFT.
BUILD=${BUILD:-build}
DATA=${DATA:-data}
THREADS=${THREADS:-1}
SINGLE=${SINGLE:-1000}
BATCHES=${BATCHES:-40}
PY=/usr/bin/python3
WRITE=1
die() { echo "$NAME: $*" >&2; exit 1; }
while (($#)); do
  case "$1" in
    --no-write) WRITE=0 ;;
    -h|--help) sed -n "$HELP_LINES" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
  shift
done
[[ -f CMakeLists.txt && -d bench ]] || die "run this from the repository root"
for b in sift sift-latency-bench; do
  [[ -x $BUILD/$b ]] || die "$BUILD/$b is missing: cmake --build $BUILD"
done
[[ -f $DATA/ag_news/test.csv ]] || die "$DATA/ag_news is missing: tools/get_data.sh ag_news"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sift-${NAME%.sh}.XXXXXX")
if [[ "${KEEP_TMP:-0}" == 1 ]]; then echo "temporary files kept in $TMP" >&2
else trap 'rm -rf "$TMP"' EXIT; fi
SIFT=$BUILD/sift

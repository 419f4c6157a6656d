#!/usr/bin/env bash
# tools/get_data.sh with --from: copies and checks a set, skips a complete one, and
# refuses unknown names, missing mirror files and checksum mismatches with a clear
# "get_data.sh: error:" line and a non-zero exit. Uses the committed SMS collection as
# the mirror's content and writes only under a temporary folder (DATA_DIR).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
check() {  # DESCRIPTION EXPECTED_RC EXPECTED_TEXT COMMAND...
  local what=$1 want_rc=$2 want_text=$3; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [[ $rc != "$want_rc" || "$out" != *"$want_text"* ]]; then
    echo "FAIL: $what: exit $rc (wanted $want_rc), output:"; echo "$out"; fails=$((fails + 1))
  else
    echo "ok: $what"
  fi
}
G="$ROOT/tools/get_data.sh"
mkdir -p "$T/mirror/sms_spam" "$T/bad/sms_spam"
cp "$ROOT/data/sms_spam/SMSSpamCollection" "$T/mirror/sms_spam/"
{ cat "$ROOT/data/sms_spam/SMSSpamCollection"; echo "ham	one more"; } >"$T/bad/sms_spam/SMSSpamCollection"

export DATA_DIR="$T/data"
check "copies and checks a set" 0 "sms_spam: 1 files in $T/data/sms_spam" "$G" sms_spam --from "$T/mirror"
cmp -s "$T/data/sms_spam/SMSSpamCollection" "$ROOT/data/sms_spam/SMSSpamCollection" || { echo "FAIL: copy differs"; fails=$((fails + 1)); }
check "skips a complete set" 0 "already in" "$G" sms_spam --from "$T/mirror"
check "unknown name" 1 "get_data.sh: error: unknown data set 'imdb'" "$G" imdb --from "$T/mirror"
check "missing mirror file" 1 "get_data.sh: error: $T/mirror/trec/TREC.train.all: missing in the mirror" "$G" trec --from "$T/mirror"
check "missing mirror folder" 1 "get_data.sh: error: $T/nowhere: no such mirror folder" "$G" trec --from "$T/nowhere"
check "checksum mismatch" 1 "get_data.sh: error: sms_spam/SMSSpamCollection: checksum mismatch" "$G" sms_spam --force --from "$T/bad"
cmp -s "$T/data/sms_spam/SMSSpamCollection" "$ROOT/data/sms_spam/SMSSpamCollection" || { echo "FAIL: a bad copy replaced the good file"; fails=$((fails + 1)); }
check "no name: usage" 2 "usage: tools/get_data.sh" "$G"
left=$(find "$T/data" -name '.get_data.*' | wc -l)
[[ $left == 0 ]] || { echo "FAIL: $left temporary folders left in DATA_DIR"; fails=$((fails + 1)); }
exit $((fails > 0))

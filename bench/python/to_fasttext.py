#!/usr/bin/env python3
"""Converts one public data set of data/ (tools/get_data.sh) to fastText's format for the
side-by-side benchmarks (bench/compare_fasttext.sh, bench/tune_vs_autotune.sh):
"__label__NAME text" per line, the text lower-cased and whitespace-collapsed.

    to_fasttext.py NAME DATA_DIR OUT_DIR    (NAME: ag_news trec sst2 sst2_glue mr 20ng)

Writes OUT_DIR/NAME.train.ft and OUT_DIR/NAME.test.ft; for MR also the raw train/test
halves Sift reads (every 10th line is test, the file being sorted by label)."""
import csv, io, re, sys

name, data, tmp = sys.argv[1:4]
ws = re.compile(r"\s+")

def clean(text):
    return ws.sub(" ", text.lower()).strip()

def write(path, rows, shuffle=False):
    # fastText reads its input in file order (each thread from its own offset), so a file
    # sorted by label (MR, 20NG) trains it class after class; Sift's shuffle buffer mixes
    # such a file. Those two are shuffled here (seeded; they fit in memory easily).
    if shuffle:
        import random
        rows = list(rows)
        random.Random(12345).shuffle(rows)
    n = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for label, text in rows:
            out.write("__label__%s %s\n" % (label.replace(" ", "_"), clean(text)))
            n += 1
    if n == 0:
        sys.exit("to_fasttext.py: %s: no record converted" % path)

def lines(path, encoding="utf-8"):
    with open(path, encoding=encoding, errors="replace", newline="\n") as f:
        for line in f:
            yield line.rstrip("\n").rstrip("\r")

def label_first(path, encoding="utf-8"):
    for line in lines(path, encoding):
        if line.strip():
            label, _, text = line.partition(" ")
            yield label, text

def tsv(path, text_col, label_col, header=False):
    for i, line in enumerate(lines(path)):
        if header and i == 0:
            continue
        cols = line.split("\t")
        yield cols[label_col], cols[text_col]

def unescape(text):
    return re.sub(r"\\(.)", lambda m: {"n": " ", "t": " ", "\\": "\\"}.get(m.group(1), m.group(0)), text)

d = data
if name == "ag_news":
    classes = [l for l in lines(d + "/ag_news/classes.txt") if l]
    write(tmp + "/ag_news.train.ft", tsv(d + "/ag_news/train_sample_10k.tsv", 0, 1))
    def ag_test():
        with open(d + "/ag_news/test.csv", encoding="utf-8", newline="") as f:
            for row in csv.reader(f):
                yield classes[int(row[0]) - 1], row[1] + " " + row[2]
    write(tmp + "/ag_news.test.ft", ag_test())
elif name == "trec":
    write(tmp + "/trec.train.ft", label_first(d + "/trec/TREC.train.all", "latin-1"))
    write(tmp + "/trec.test.ft", label_first(d + "/trec/TREC.test.all", "latin-1"))
elif name == "sst2":
    write(tmp + "/sst2.train.ft", label_first(d + "/sst2/stsa.binary.train"))
    write(tmp + "/sst2.test.ft", label_first(d + "/sst2/stsa.binary.test"))
elif name == "sst2_glue":
    def glue_train():
        for part in ("part1", "part2"):
            yield from tsv(d + "/sst2/glue_train_%s.tsv" % part, 0, 1, header=True)
    write(tmp + "/sst2_glue.train.ft", glue_train())
    write(tmp + "/sst2_glue.test.ft", tsv(d + "/sst2/glue_validation.tsv", 0, 1, header=True))
elif name == "mr":
    # The raw halves, byte for byte, for Sift; the converted halves for fastText.
    with open(d + "/mr/rt-polarity.all", "rb") as f, \
         open(tmp + "/mr.train.all", "wb") as tr, open(tmp + "/mr.test.all", "wb") as te:
        for i, raw in enumerate(f):
            (te if i % 10 == 9 else tr).write(raw)
    write(tmp + "/mr.train.ft", label_first(tmp + "/mr.train.all", "latin-1"), shuffle=True)
    write(tmp + "/mr.test.ft", label_first(tmp + "/mr.test.all", "latin-1"))
elif name == "20ng":
    def ng(path):
        for label, text in tsv(path, 1, 0):
            yield label, unescape(text)
    write(tmp + "/20ng.train.ft", ng(d + "/20ng/20ng_train.tsv"), shuffle=True)
    write(tmp + "/20ng.test.ft", ng(d + "/20ng/20ng_test.tsv"))
else:
    sys.exit("unknown data set " + name)

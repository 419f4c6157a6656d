#!/usr/bin/env python3
"""A config of data paths alone against `fasttext supervised` with its defaults (issue #41).

    python3 bench/defaults_vs_fasttext.py [--sift build/sift] [--sets trec,sst2,ag_news]

For each set (fetched by tools/get_data.sh into data/), both programs read the same
fastText-format files written here: `fasttext supervised -input train -output m` (its
defaults, -thread 2) then `fasttext test`, and `sift train --set data.train.path=train
--set data.test.path=test` (nothing else: the fastText model's defaults). A third row
trains with the option table's old defaults for the fastText model (batch 32, mean,
constant rate), which the model's own defaults replaced. Test accuracy is P@1 for
fastText (one label a line). Writes bench/results/defaults.json and bench/RESULTS.md.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import results_section  # noqa: E402

OLD_DEFAULTS = ["--set", "train.batch_size=32", "--set", "train.loss_reduction=mean",
                "--set", "train.scheduler.type=constant"]


def label_first(path, out):
    """TREC and SST-2's "LABEL text" lines as fastText's."""
    with open(path, "rb") as f, open(out, "wb") as o:
        for line in f:
            label, _, text = line.rstrip(b"\r\n").partition(b" ")
            o.write(b"__label__" + label + b" " + text + b"\n")


def ag_train(path, out):
    with open(path, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
        for line in f:
            text, _, label = line.rstrip("\n").rpartition("\t")
            o.write(f"__label__{label.replace(' ', '_')} {text}\n")


def ag_test(path, classes, out):
    names = [c.strip() for c in open(classes, encoding="utf-8") if c.strip()]
    with open(path, encoding="utf-8", newline="") as f, open(out, "w", encoding="utf-8") as o:
        for row in csv.reader(f):
            label = names[int(row[0]) - 1].replace(" ", "_")
            text = " ".join(row[1:]).replace("\\n", " ").replace("\n", " ")
            o.write(f"__label__{label} {text}\n")


SETS = {
    "trec": lambda d, w: (label_first(f"{d}/trec/TREC.train.all", f"{w}/train.txt"),
                          label_first(f"{d}/trec/TREC.test.all", f"{w}/test.txt")),
    "sst2": lambda d, w: (label_first(f"{d}/sst2/stsa.binary.train", f"{w}/train.txt"),
                          label_first(f"{d}/sst2/stsa.binary.test", f"{w}/test.txt")),
    "ag_news": lambda d, w: (ag_train(f"{d}/ag_news/train_sample_10k.tsv", f"{w}/train.txt"),
                             ag_test(f"{d}/ag_news/test.csv", f"{d}/ag_news/classes.txt",
                                     f"{w}/test.txt")),
}


def timed(cmd, cwd):
    start = time.monotonic()
    out = subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True)
    return out, time.monotonic() - start


def fasttext_row(work):
    _, seconds = timed(["fasttext", "supervised", "-input", "train.txt", "-output", "m",
                        "-thread", "2", "-verbose", "0"], work)
    out, _ = timed(["fasttext", "test", "m.bin", "test.txt"], work)
    p1 = float(next(l.split()[1] for l in out.stdout.splitlines() if l.startswith("P@1")))
    return p1, seconds


def sift_row(sift, work, name, extra):
    out, seconds = timed([sift, "train", "--json", "--quiet", "--set", "data.train.path=train.txt",
                          "--set", "data.test.path=test.txt", "--set", f"run.name={name}"] + extra,
                         work)
    return json.loads(out.stdout)["splits"]["test"]["accuracy"], seconds


def parse_args(doc):
    """--sift, --data and --sets, for this script and the others that read SETS."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--sift", default=os.path.join(ROOT, "build", "sift"))
    parser.add_argument("--data", default=os.path.join(ROOT, "data"))
    parser.add_argument("--sets", default="trec,sst2,ag_news")
    return parser.parse_args()


def main():
    args = parse_args(__doc__)
    load_before = results_section.loadavg()
    rows = []
    for name in args.sets.split(","):
        with tempfile.TemporaryDirectory(prefix=f"defaults-{name}-") as work:
            SETS[name](args.data, work)
            ft, ft_s = fasttext_row(work)
            ours, ours_s = sift_row(args.sift, work, "defaults", [])
            old, old_s = sift_row(args.sift, work, "old", OLD_DEFAULTS)
        rows.append([name, round(ft, 4), round(ours, 4), round(ours - ft, 4), round(old, 4),
                     round(ft_s, 2), round(ours_s, 2)])
        print(rows[-1], flush=True)
    page = {
        "family": "fasttext", "order": 60,
        "title": "Defaults: a config of data paths alone against `fasttext supervised`'s defaults",
        "command": "`python3 bench/defaults_vs_fasttext.py`",
        "columns": ["set", "fastText test acc.", "Sift test acc.", "Sift - fastText",
                    "Sift, table defaults before #41", "fastText s", "Sift s"],
        "rows": rows,
        "notes": ["One run each, fixed seeds (Sift's run.seed, fastText's -seed 0). fastText: "
                  "-thread 2 (its default is 12); Sift: one training thread (deterministic). "
                  "Both train on every line (the fastText model's data.valid_split default is "
                  "0, as fastText's)."],
    }
    results_section.write_page("defaults", page, load_before)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Character n-grams against typos (issue #41): the fastText model with and without
model.minn/maxn, tested on each set's test file and on a typo-noised copy of it.

    python3 bench/subwords_typos.py [--sift build/sift] [--sets trec,sst2,ag_news]

The noised copy changes about 30% of the words of 4 or more letters by one edit (swap of
two neighbours, a deleted, doubled or replaced letter), with a fixed seed; labels stay.
Both runs read the same fastText-format files (bench/defaults_vs_fasttext.py writes them)
at lr 0.5 for 10 epochs, and differ only in `--set model.minn=3 --set model.maxn=6`;
fastText itself is run with the same flags for reference. (At the fastText model's
defaults, lr 0.1 for 5 epochs, a bag ten times longer learns too slowly: TREC 0.49,
SST-2 and AG News at chance, for fastText as for Sift.) Writes bench/results/subwords.json and bench/RESULTS.md.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import defaults_vs_fasttext as sets  # noqa: E402
import results_section  # noqa: E402

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def typo(word, rng):
    i = rng.randrange(len(word) - 1)
    kind = rng.randrange(4)
    if kind == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if kind == 1:
        return word[:i] + word[i + 1:]
    if kind == 2:
        return word[:i] + word[i] + word[i:]
    return word[:i] + rng.choice(LETTERS) + word[i + 1:]


def noised(path, out, seed=41):
    rng = random.Random(seed)
    with open(path, encoding="utf-8", errors="surrogateescape") as f, \
            open(out, "w", encoding="utf-8", errors="surrogateescape") as o:
        for line in f:
            words = line.rstrip("\n").split(" ")
            for k, w in enumerate(words):
                if not w.startswith("__label__") and len(w) >= 4 and w.isalpha() and \
                        rng.random() < 0.3:
                    words[k] = typo(w, rng)
            o.write(" ".join(words) + "\n")


def sift_accuracy(sift, work, name, extra, test):
    out = subprocess.run([sift, "train", "--json", "--quiet", "--set", "data.train.path=train.txt",
                          "--set", f"data.test.path={test}", "--set", f"run.name={name}"] + extra,
                         cwd=work, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["splits"]["test"]["accuracy"]


def sift_eval(sift, work, name, test):
    out = subprocess.run([sift, "test", f"runs/{name}", test, "1"], cwd=work, check=True,
                         capture_output=True, text=True)
    return float(next(l.split()[1] for l in out.stdout.splitlines() if l.startswith("P@1")))


def fasttext_accuracy(work, flags, test):
    subprocess.run(["fasttext", "supervised", "-input", "train.txt", "-output", "m", "-thread",
                    "2", "-verbose", "0"] + flags, cwd=work, check=True, capture_output=True)
    out = subprocess.run(["fasttext", "test", "m.bin", test], cwd=work, check=True,
                         capture_output=True, text=True)
    return float(next(l.split()[1] for l in out.stdout.splitlines() if l.startswith("P@1")))


def main():
    args = sets.parse_args(__doc__)
    load_before = results_section.loadavg()
    rows = []
    steps = ["--set", "train.optimizer.lr=0.5", "--set", "train.epochs=10"]
    subwords = steps + ["--set", "model.minn=3", "--set", "model.maxn=6"]
    for name in args.sets.split(","):
        with tempfile.TemporaryDirectory(prefix=f"subwords-{name}-") as work:
            sets.SETS[name](args.data, work)
            noised(os.path.join(work, "test.txt"), os.path.join(work, "typos.txt"))
            words = sift_accuracy(args.sift, work, "words", steps, "test.txt")
            words_typos = sift_eval(args.sift, work, "words", "typos.txt")
            chars = sift_accuracy(args.sift, work, "chars", subwords, "test.txt")
            chars_typos = sift_eval(args.sift, work, "chars", "typos.txt")
            ft_flags = ["-lr", "0.5", "-epoch", "10"]
            ft_words = fasttext_accuracy(work, ft_flags, "typos.txt")
            ft = fasttext_accuracy(work, ft_flags + ["-minn", "3", "-maxn", "6"], "typos.txt")
        rows.append([name, round(words, 4), round(chars, 4), round(words_typos, 4),
                     round(chars_typos, 4), round(chars_typos - words_typos, 4),
                     round(ft_words, 4), round(ft, 4)])
        print(rows[-1], flush=True)
    page = {
        "family": "fasttext", "order": 61,
        "title": "Character n-grams against typos: the fastText model without and with "
                 "model.minn 3, model.maxn 6",
        "command": "`python3 bench/subwords_typos.py`",
        "columns": ["set", "test acc., words", "test acc., + char n-grams",
                    "typos, words", "typos, + char n-grams", "gain on typos",
                    "fastText, typos, words", "fastText, typos, -minn 3 -maxn 6"],
        "rows": rows,
        "notes": ["lr 0.5, 10 epochs, the fastText model's defaults otherwise; one run each. The typo-noised copy changes about 30% of the words of four or "
                  "more letters by one edit, seed 41."],
    }
    results_section.write_page("subwords", page, load_before)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Sift's reader of fastText model files against Debian's libfasttext-dev (issue #41).

    python3 bench/fasttext_readers.py [--sift build/sift] [--rounds 5]

Trains `fasttext supervised -wordNgrams 2 -minn 2 -maxn 4` on data/ag_news's 10,000 lines
(dim 100, bucket 2M: 2.04M input rows), quantizes it twice (`-qnorm`: every row; `-qnorm
-cutoff 100000 -retrain`: the usual small .ftz), then, in rounds interleaving the two
readers, times each giving the input matrix's rows as floats
(build/sift-fasttext-reader-bench, built where libfasttext-dev is installed) and checks
that the rows agree; and times `sift import fasttext` itself (/usr/bin/time: wall, peak
RSS). Writes bench/results/fasttext-readers.json, then bench/RESULTS.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import defaults_vs_fasttext as sets  # noqa: E402
import results_section  # noqa: E402


def reader(bench, model, which, rows):
    cmd = [bench, model, "--reader", which] + (["--rows", str(rows)] if rows else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def timed_import(sift, model, out):
    cmd = ["/usr/bin/time", "-f", "%e %M", sift, "import", "fasttext", model, "--out", out,
           "--force"]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall, kb = done.stderr.strip().splitlines()[-1].split()
    return float(wall), int(kb) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sift", default=os.path.join(ROOT, "build", "sift"))
    parser.add_argument("--data", default=os.path.join(ROOT, "data"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    bench = os.path.join(os.path.dirname(args.sift), "sift-fasttext-reader-bench")
    load_before = results_section.loadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="fasttext-readers-") as work:
        sets.ag_train(f"{args.data}/ag_news/train_sample_10k.tsv", f"{work}/train.txt")
        subprocess.run(["fasttext", "supervised", "-input", "train.txt", "-output", "ag",
                        "-wordNgrams", "2", "-minn", "2", "-maxn", "4", "-thread", "2",
                        "-verbose", "0"], cwd=work, check=True)
        models = {"ag.bin": None, "all.ftz": "-qnorm",
                  "cut.ftz": "-qnorm -cutoff 100000 -retrain"}
        for name, flags in models.items():
            if flags is None:
                continue
            stem = name[:-4]
            subprocess.run(["cp", "ag.bin", stem + ".bin"], cwd=work, check=True)
            subprocess.run(["fasttext", "quantize", "-input", "train.txt", "-output", stem,
                            "-verbose", "0"] + flags.split(), cwd=work, check=True)
            os.remove(os.path.join(work, stem + ".bin"))
        for name, flags in models.items():
            model = os.path.join(work, name)
            both = reader(bench, model, "both", 0)
            sift_s, lib_s, imports = [], [], []
            for _ in range(args.rounds):
                sift_s.append(reader(bench, model, "sift", 0)["sift_s"])
                lib_s.append(reader(bench, model, "libfasttext", both["rows"])["libfasttext_s"])
                imports.append(timed_import(args.sift, model, model + ".imported"))
            wall = statistics.median(w for w, _ in imports)
            rss = max(r for _, r in imports)
            rows.append([f"{name} ({flags or 'fasttext supervised'})",
                         f"{os.path.getsize(model) / 1e6:.1f} MB", both["rows"],
                         round(statistics.median(sift_s), 3), round(statistics.median(lib_s), 3),
                         both["max_abs_diff"], both["rows_differing"], round(wall, 2),
                         round(rss)])
            print(rows[-1], flush=True)
    page = {
        "family": "fasttext", "order": 62,
        "title": "Reading fastText's .bin and .ftz: Sift's reader against libfasttext-dev",
        "command": "`python3 bench/fasttext_readers.py`",
        "columns": ["model", "file", "input rows", "Sift's reader, s (median)",
                    "libfasttext, s (median)", "max |row difference|", "rows differing",
                    "`sift import`, wall s (median)", "`sift import`, peak RSS MB"],
        "rows": rows,
        "notes": [f"{args.rounds} rounds, the readers interleaved, one process each. A reader's "
                  "time: the file to every input row as floats (Sift: read_fasttext_model, "
                  "then pq_table_of and pq_decode for a .ftz; libfasttext: "
                  "FastText::loadModel, then getInputVector for each row). `sift import` "
                  "writes a run folder for the .bin and a pq export for a .ftz; its time "
                  "includes LibTorch's start."],
    }
    results_section.write_page("fasttext-readers", page, load_before)


if __name__ == "__main__":
    main()

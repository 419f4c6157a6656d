#!/usr/bin/python3
"""Accuracy of the model zoo on the real data sets, next to published figures (issue #4).

Runs each entry with the sift binary (one process at a time), keeps every measurement in
bench/model_zoo_accuracy.json (so that entries can be rerun one by one: --only NAME), and
writes the table of the latest measurement per entry into bench/RESULTS.md (section
model-zoo-accuracy; the notes below the table are kept).

  bench/model_zoo_accuracy.py                       # every entry (about an hour here)
  bench/model_zoo_accuracy.py --only trec_textcnn   # one entry
  bench/model_zoo_accuracy.py --list
  bench/model_zoo_accuracy.py --from-report mr_textcnn_cv10 runs/mr_textcnn-cv/cv.json
      # records a run made by hand with the entry's own command (report.json, --json
      # output or cv.json) instead of running it again; an entry averaged over seeds
      # takes one report per seed
"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_section import write_section  # noqa: E402

SIFT = os.environ.get("SIFT", "build/sift")
DATA = os.environ.get("DATA", "data")
STORE = "bench/model_zoo_accuracy.json"

KIM = ("--set train.optimizer.type=adadelta --set train.optimizer.lr=1.0 "
       "--set train.optimizer.rho=0.95 --set train.optimizer.eps=1e-6 --set train.max_norm=3")

# 20NG as configured before stop words (configs/20ng.yaml until 2026-11-30).
NO_STOP = "--set 'tokenizer.stopwords=\"\"' --set tokenizer.drop_punctuation=false"

# name: (command after `sift`, how to read the figure, target, what the target is)
ENTRIES = {
    "trec_textcnn": ("train configs/trec_textcnn.yaml --json --quiet", "test", 0.912,
                     "Kim 2014 CNN-rand"),
    # Seeds also draw other validation splits; one thread, as the runs were made.
    "trec_textcnn_5seeds": ("train configs/trec_textcnn.yaml --json --quiet --set run.threads=1",
                            "seeds:42,2,3,4,5", 0.912, "Kim 2014 CNN-rand"),
    "trec_textcnn_10seeds": ("train configs/trec_textcnn.yaml --json --quiet --set run.threads=1",
                             "seeds:42,2,3,4,5,6,7,8,9,10", 0.912, "Kim 2014 CNN-rand"),
    "trec_textcnn_kim_tokens_3seeds": ("train configs/trec_textcnn.yaml --json --quiet "
                                       "--set run.threads=1 --set tokenizer.split_punctuation=false",
                                       "seeds:42,2,3", 0.912, "Kim 2014 CNN-rand"),
    "trec_textcnn_kim_tokens_f200_3seeds": ("train configs/trec_textcnn.yaml --json --quiet "
                                            "--set run.threads=1 "
                                            "--set tokenizer.split_punctuation=false "
                                            "--set model.filters=200",
                                            "seeds:42,2,3", 0.912, "Kim 2014 CNN-rand"),
    "trec_textcnn_maxnorm": ("train configs/trec_textcnn.yaml --json --quiet "
                             "--set train.max_norm=3 --set train.epochs=10", "test", 0.912,
                             "Kim 2014 CNN-rand"),
    "trec_textcnn_adadelta": (f"train configs/trec_textcnn.yaml --json --quiet {KIM} "
                              "--set train.epochs=10", "test", 0.912, "Kim 2014 CNN-rand"),
    "sst2_textcnn": ("train configs/sst2_textcnn.yaml --json --quiet", "test", 0.827,
                     "Kim 2014 CNN-rand"),
    "sst2_textcnn_maxnorm": ("train configs/sst2_textcnn.yaml --json --quiet "
                             "--set train.max_norm=3", "test", 0.827, "Kim 2014 CNN-rand"),
    "sst2_textcnn_adadelta": (f"train configs/sst2_textcnn.yaml --json --quiet {KIM} "
                              "--set train.epochs=10", "test", 0.827, "Kim 2014 CNN-rand"),
    "mr_textcnn_cv10": ("cv configs/mr_textcnn.yaml --folds 10 --json --set train.epochs=3", "cv",
                        0.761, "Kim 2014 CNN-rand (10-fold CV)"),
    "20ng_fasttext": ("train configs/20ng.yaml --json --quiet", "test", 0.794,
                      "fastText in Yao et al. 2019"),
    "20ng_fasttext_valid": ("train configs/20ng.yaml --json --quiet --set data.valid_split=0.1",
                            "test", 0.794, "fastText in Yao et al. 2019"),
    "20ng_fasttext_no_stopwords": (f"train configs/20ng.yaml --json --quiet {NO_STOP}", "test",
                                   0.794, "fastText in Yao et al. 2019"),
    "20ng_fasttext_dim100_unigrams": (f"train configs/20ng.yaml --json --quiet {NO_STOP} "
                                      "--set model.dim=100 --set model.ngrams=1", "test", 0.794,
                                      "fastText in Yao et al. 2019"),
    "20ng_fasttext_dim100_25ep": (f"train configs/20ng.yaml --json --quiet {NO_STOP} "
                                  "--set model.dim=100 --set train.epochs=25", "test", 0.794,
                                  "fastText in Yao et al. 2019"),
    "ag_pairs_multilabel": (None, "multilabel", None,
                            "fastText CLI -loss ova, same files (micro-F1)"),
}


def ag_pairs(folder):
    """Multi-label AG News: items joined in pairs carry both topics; every third record is
    one item with one topic. Lines 0-5999 of the 10k sample train, 6000-9999 test."""
    lines = [l for l in open(f"{DATA}/ag_news/train_sample_10k.tsv", encoding="utf-8")
             .read().split("\n") if l]

    def make(first, count):
        out, k = [], 0
        for i in range(first, min(first + count, len(lines)) - 1, 2):
            ta, la = lines[i].rsplit("\t", 1)
            tb, lb = lines[i + 1].rsplit("\t", 1)
            la, lb = la.replace("/", "_"), lb.replace("/", "_")
            out.append(f"__label__{la} {ta}" if k % 3 == 0 else
                       f"__label__{la} __label__{lb} {ta} {tb}")
            k += 1
        return "\n".join(out) + "\n"

    paths = {}
    for name, first, count in (("train", 0, 6000), ("test", 6000, 4000)):
        paths[name] = os.path.join(folder, f"{name}.txt")
        with open(paths[name], "w", encoding="utf-8") as f:
            f.write(make(first, count))
    return paths


def run(command):
    start = time.time()
    out = subprocess.run(command, shell=True, check=True, capture_output=True, text=True).stdout
    return json.loads(out), time.time() - start


def measure_multilabel(tmp):
    p = ag_pairs(tmp)
    cmd = (f"train configs/ag_pairs_multilabel.yaml --json --quiet --set run.dir={tmp}/runs "
           f"--set data.train.path={p['train']} --set data.test.path={p['test']}")
    report, seconds = run(f"{SIFT} {cmd}")
    t = report["splits"]["test"]
    ft = subprocess.run(
        f"fasttext supervised -input {p['train']} -output {tmp}/ft -dim 20 -epoch 10 -lr 1.0 "
        f"-loss ova -wordNgrams 2 -bucket 200000 -thread 1 -verbose 0 && "
        f"fasttext test {tmp}/ft.bin {p['test']} -1 0.5",
        shell=True, check=True, capture_output=True, text=True).stdout.split()
    precision, recall = float(ft[ft.index("P@-1") + 1]), float(ft[ft.index("R@-1") + 1])
    return {"value": t["micro_f1"], "subset_accuracy": t["accuracy"], "macro_f1": t["macro_f1"],
            "hamming_loss": t["hamming_loss"], "reference": 2 * precision * recall /
            (precision + recall), "seconds": seconds, "command": f"sift {cmd}"}


def figures(name, report, seconds):
    command, kind, _, _ = ENTRIES[name]
    if kind == "cv":
        return {"value": report["accuracy"]["mean"], "std": report["accuracy"]["std"],
                "folds": [f["accuracy"] for f in report["per_fold"]], "seconds": seconds,
                "command": f"sift {command}"}
    return {"value": report["splits"]["test"]["accuracy"], "seconds": seconds,
            "command": f"sift {command}"}


def measure_seeds(name, tmp):
    """The entry's command once per seed (each seed also draws another validation split):
    the mean and sample standard deviation of the test accuracy."""
    command, kind, _, _ = ENTRIES[name]
    seeds = [int(x) for x in kind.split(":")[1].split(",")]
    values, seconds = [], 0.0
    for seed in seeds:
        report, s = run(f"{SIFT} {command} --set run.dir={tmp}/runs --set run.seed={seed}")
        values.append(report["splits"]["test"]["accuracy"])
        seconds += s
        print(f"  {name} seed {seed}: {values[-1]:.4f}", flush=True)
    return seed_figures(values, seeds, seconds, command)


def measure(name, tmp):
    command, kind, _, _ = ENTRIES[name]
    if kind == "multilabel":
        return measure_multilabel(tmp)
    if kind.startswith("seeds:"):
        return measure_seeds(name, tmp)
    report, seconds = run(f"{SIFT} {command} --set run.dir={tmp}/runs")
    return figures(name, report, seconds)


def seed_figures(values, seeds, seconds, command):
    return {"value": statistics.mean(values), "std": statistics.stdev(values), "seeds": seeds,
            "per_seed": values, "seconds": seconds,
            "command": f"sift {command} --set run.seed=S for S in {seeds}"}


def from_seed_reports(name, paths):
    reports = [json.load(open(p)) for p in paths]
    # report.json does not repeat the config: the seed is in the run folder's config.yaml.
    seeds = [int(re.search(r"^\s+seed: (\d+)$", open(os.path.join(os.path.dirname(p),
                                                                  "config.yaml")).read(),
                           re.M).group(1)) for p in paths]
    want = [int(x) for x in ENTRIES[name][1].split(":")[1].split(",")]
    if sorted(seeds) != sorted(want):
        sys.exit(f"model_zoo_accuracy.py: {name} needs the seeds {want}, the reports have {seeds}")
    m = seed_figures([r["splits"]["test"]["accuracy"] for r in reports], seeds,
                     sum(r["train"]["seconds"] for r in reports), ENTRIES[name][0])
    m["from_report"] = True
    return m


def from_report(name, path):
    report = json.load(open(path))
    if "per_fold" in report:
        seconds = sum(f["train_seconds"] for f in report["per_fold"])
    else:
        seconds = report["train"]["seconds"]
    m = figures(name, report, seconds)
    m["from_report"] = True
    return m


def table(store):
    rows = ["| entry | measured | target | reference | met | wall | reproduce |",
            "|---|---|---|---|---|---|---|"]
    for name, (_, kind, target, what) in ENTRIES.items():
        if name not in store:
            rows.append(f"| {name} | not run | {target or ''} | {what} | | | |")
            continue
        m = store[name]
        value = f"{m['value']:.4f}" + (f" ± {m['std']:.4f}" if "std" in m else "")
        if "per_seed" in m:
            value += f" (mean of {len(m['per_seed'])} seeds, each: " + ", ".join(
                f"{v:.3f}" for v in m["per_seed"]) + ")"
        if kind == "multilabel":
            value += (f" (subset acc {m['subset_accuracy']:.3f}, Hamming "
                      f"{m['hamming_loss']:.3f})")
            goal, met = f"{m['reference']:.4f}", "yes" if m["value"] >= m["reference"] else "no"
        else:
            goal, met = f"{target:.3f}", "yes" if m["value"] >= target else "**no**"
        wall = f"{m['seconds']:.0f} s" + (" (training)" if m.get("from_report") else "")
        rows.append(f"| {name} | {value} | {goal} | {what} | {met} | {wall} | "
                    f"`bench/model_zoo_accuracy.py --only {name}` |")
    return "\n".join(rows) + (f"\n\nLast run {datetime.date.today()} on this machine "
                              "(2 shared cores, other builds running); one run per entry unless seeds are listed.")


def check(names):
    """Measures each entry and compares it with its target; nothing is stored."""
    missed = 0
    for name in names:
        if name not in ENTRIES:
            return f"model_zoo_accuracy.py: unknown entry {name} (see --list)"
        with tempfile.TemporaryDirectory() as tmp:
            m = measure(name, tmp)
        goal = m["reference"] if ENTRIES[name][1] == "multilabel" else ENTRIES[name][2]
        ok = m["value"] >= goal
        missed += not ok
        print(f"{name}: {m['value']:.4f} against {goal:.4f}: {'met' if ok else 'MISSED'}",
              flush=True)
    return 1 if missed else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="comma-separated entries")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--check", action="store_true",
                    help="measure --only's entries, keep nothing, exit 1 if one misses its "
                         "target (the ctest label `accuracy`)")
    ap.add_argument("--from-report", nargs="+", metavar="NAME REPORT",
                    help="an entry and its report (one per seed for a seeds entry)")
    args = ap.parse_args()
    if args.list:
        print("\n".join(ENTRIES))
        return
    names = args.only.split(",") if args.only else list(ENTRIES)
    if args.check:
        sys.exit(check(names))
    store = json.load(open(STORE)) if os.path.exists(STORE) else {}
    if args.from_report:
        names = []
        name, paths = args.from_report[0], args.from_report[1:]
        if name not in ENTRIES or not paths:
            sys.exit("model_zoo_accuracy.py: --from-report takes an entry and its report(s)")
        seeded = ENTRIES[name][1].startswith("seeds:")
        if not seeded and len(paths) != 1:
            sys.exit(f"model_zoo_accuracy.py: {name} takes one report")
        store[name] = from_seed_reports(name, paths) if seeded else from_report(name, paths[0])
        with open(STORE, "w") as f:
            json.dump(store, f, indent=2)
    for name in names:
        if name not in ENTRIES:
            sys.exit(f"model_zoo_accuracy.py: unknown entry {name} (see --list)")
        with tempfile.TemporaryDirectory() as tmp:
            store[name] = measure(name, tmp)
        print(f"{name}: {store[name]['value']:.4f} ({store[name]['seconds']:.0f} s)", flush=True)
        with open(STORE, "w") as f:
            json.dump(store, f, indent=2)
    print(table(store))
    if not args.no_write:
        write_section("model-zoo-accuracy", "Model zoo accuracy against published figures (#4)",
                      table(store))


if __name__ == "__main__":
    main()

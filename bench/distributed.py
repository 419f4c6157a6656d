#!/usr/bin/env python3
"""Distributed data-parallel training: 1 process against 2 (`sift launch --nproc 2`), side
by side in one run, and the gradient all-reduce time per step by bucket size.

  python3 bench/distributed.py            # N=3 repetitions, writes bench/RESULTS.md
  python3 bench/distributed.py -n 1 --no-write

Every run reads its figures from the run's report.json: train.steps, train.seconds (the
training loop, without start-up and the final evaluation), train.examples and, with 2
ranks, train.allreduce_seconds / allreduce_calls (time in Distributed::average_gradients,
which waits for the slower rank, so it includes load imbalance). Medians over N.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_section import write_section  # noqa: E402

SIFT = os.environ.get("SIFT", "build/sift")

# (label, config, extra settings): the fastText model (sparse embedding gradients) and
# TextCNN (dense: 2.6M embedding + 0.36M convolution parameters, Adam).
MODELS = [
    ("fastText, AG News 10k", "configs/ag_news.yaml",
     ["train.epochs=2", "model.buckets=200000"]),
    ("TextCNN, TREC", "configs/trec_textcnn.yaml", ["train.epochs=1"]),
]
BUCKETS_MB = [0.05, 0.5, 2, 25]


def run(args, tmp, name, settings, nproc):
    cmd = [SIFT]
    if nproc > 1:
        cmd += ["launch", "--nproc", str(nproc), "--"]
    cmd += ["train"] + args + ["--quiet", "--set", f"run.dir={tmp}", "--set", f"run.name={name}"]
    for s in settings:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(tmp, name, "report.json")) as f:
        t = json.load(f)["train"]
    shutil.rmtree(os.path.join(tmp, name))
    return t


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-n", type=int, default=3)
    p.add_argument("--no-write", action="store_true")
    a = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="sift_dist_bench_")
    rows = []
    # Each process: 1 compute thread, 1 data worker. "1 process, 2 threads" uses both
    # cores in one process, for comparison.
    setups = [("1 process", 1, ["run.threads=1", "data.workers=1"]),
              ("1 process, 2 threads + 2 workers", 1, ["run.threads=2", "data.workers=2"]),
              ("2 processes", 2, ["run.threads=1", "data.workers=1"])]
    for label, config, extra in MODELS:
        results = {s[0]: [] for s in setups}
        for rep in range(a.n):
            for setup, nproc, settings in setups:  # interleaved: same machine load
                t = run([config], tmp, f"r{rep}", extra + settings, nproc)
                results[setup].append(t)
        base = median([t["examples"] / t["seconds"] for t in results["1 process"]])
        for setup, _, _ in setups:
            ts = results[setup]
            eps = median([t["examples"] / t["seconds"] for t in ts])
            sps = median([t["steps"] / t["seconds"] for t in ts])
            ar = median([1000 * t["allreduce_seconds"] / max(t["allreduce_calls"], 1)
                         for t in ts if "allreduce_calls" in t])
            rows.append(f"| {label} | {setup} | {ts[0]['steps']} | {sps:.1f} | {eps:.0f} | "
                        f"{eps / base:.2f}x | " + ("-" if ar != ar else f"{ar:.2f}") + " |")
            print(rows[-1], flush=True)
    bucket_rows = []
    label, config, extra = MODELS[1]
    for mb in BUCKETS_MB:
        ts = [run([config], tmp, f"b{rep}", extra + ["run.threads=1", "data.workers=1",
                                                     f"train.bucket_mb={mb}"], 2)
              for rep in range(a.n)]
        ar = median([1000 * t["allreduce_seconds"] / t["allreduce_calls"] for t in ts])
        step = median([1000 * t["seconds"] / t["steps"] for t in ts])
        bucket_rows.append(f"| {mb} | {ar:.2f} | {step:.1f} | {100 * ar / step:.0f}% |")
        print(bucket_rows[-1], flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    cpu = subprocess.run(["sh", "-c", "nproc; grep -m1 'model name' /proc/cpuinfo"],
                         capture_output=True, text=True).stdout.split("\n")
    table = "\n".join([
        f"Machine: {cpu[0]} cores, {cpu[1].split(':')[-1].strip()}; medians of {a.n} runs, "
        f"set-ups interleaved; `python3 bench/distributed.py -n {a.n}`.",
        "",
        "| model | set-up | steps | steps/s | examples/s | vs 1 process | all-reduce ms/step |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"All-reduce time per optimizer step by `train.bucket_mb` ({label}, 2 processes, "
        "dense gradients: 300-d embeddings of the TREC vocabulary, 3 x 100 filters):",
        "",
        "| bucket MB | all-reduce ms/step | step ms | share of the step |",
        "|---|---|---|---|",
        *bucket_rows,
    ])
    print(table)
    if not a.no_write:
        write_section("distributed", "Distributed data-parallel training (1 vs 2 processes)", table)


if __name__ == "__main__":
    main()

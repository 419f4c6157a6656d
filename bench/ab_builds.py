#!/usr/bin/env python3
"""Two builds of Sift side by side: a refactoring's before and after, in one sitting.

Each case runs with build A's `sift` and build B's, in interleaved pairs (the order flips
every round), and the medians of wall time, peak RSS and, where the run reports it,
training examples/s are printed with B's ratio to A. The cases are the three paths a run
can take: the fastText model without LibTorch (sift-lite), the same model handed to
sift-main (train.loss ns, its fused step), and the Transformer through autograd.

    python3 bench/ab_builds.py --a /tmp/before --b build
    python3 bench/ab_builds.py --a OLD --b NEW --rounds 7

A and B are folders holding `sift` and `sift-main` (a build folder, or a copy of one).
Needs data/sst2 (tools/get_data.sh). Prints only: a before/after figure belongs in the
commit or note that makes the change, not on the results page.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CASES = [
    ("fastText, sift-lite (SST-2)", ["train", "configs/sst2.yaml"]),
    ("fastText, sift-main fused (SST-2, ns)", ["train", "configs/sst2.yaml", "--set", "train.loss=ns"]),
    ("Transformer, 40 steps (SST-2)",
     ["train", "configs/sst2_transformer.yaml", "--set", "train.max_steps=40"]),
]


def run(build, args, tmp, name):
    """Wall seconds, peak RSS MB and examples/s (or None) of one run of BUILD/sift ARGS."""
    cmd = ["/usr/bin/time", "-f", "%e %M", os.path.join(build, "sift")] + args + [
        "--quiet", "--json", "--set", f"run.dir={tmp}", "--set", f"run.name={name}",
        "--set", "run.overwrite=true"]
    out = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        sys.exit(f"ab_builds.py: {' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    wall, rss = out.stderr.strip().splitlines()[-1].split()
    rate = json.loads(out.stdout)["train"].get("examples_per_second")
    return float(wall), int(rss) / 1024, rate


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--a", required=True, help="the folder of the 'before' sift and sift-main")
    p.add_argument("--b", required=True, help="the folder of the 'after' sift and sift-main")
    p.add_argument("--rounds", type=int, default=5, help="pairs per case")
    args = p.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}")
    print("| case | A wall s | B wall s | B/A wall | A RSS MB | B RSS MB | A examples/s | B examples/s | B/A rate |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for label, case in CASES:
            got = {"a": [], "b": []}
            for r in range(args.rounds):
                for side in (("a", "b") if r % 2 == 0 else ("b", "a")):
                    got[side].append(run(getattr(args, side), case, tmp, side))
            a = [median([x[i] for x in got["a"]]) for i in range(3)]
            b = [median([x[i] for x in got["b"]]) for i in range(3)]
            rate = f"{b[2] / a[2]:.3f}x" if a[2] and b[2] else "-"
            fmt = lambda v: "-" if v is None else f"{v:.0f}"  # noqa: E731
            print(f"| {label} | {a[0]:.2f} | {b[0]:.2f} | {b[0] / a[0]:.3f}x | {a[1]:.0f} | "
                  f"{b[1]:.0f} | {fmt(a[2])} | {fmt(b[2])} | {rate} |")
    print(f"load after: {os.getloadavg()[0]:.2f}; medians of {args.rounds} interleaved pairs")


if __name__ == "__main__":
    main()

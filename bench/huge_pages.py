#!/usr/bin/env python3
"""Transparent huge pages for Sift's allocations, on and off, side by side.

The launcher once added glibc.malloc.hugetlb=1 to GLIBC_TUNABLES (malloc then madvises its
mappings for 2 MB pages). Each case runs here with the tunable at 1 and at 0, in
interleaved pairs (the order flips every round), and reports the medians of wall and
system time. The fastText CLI can run before each Sift run, as bench/compare_fasttext.sh
alternates them: a process that has just freed its memory beside the measured one.

    python3 bench/huge_pages.py                  # SST-2, SST-2 after fastText, TextCNN, --version
    python3 bench/huge_pages.py --synthetic 1000000 --rounds 5
    python3 bench/huge_pages.py --no-write       # print the table only

Needs build/sift, build/sift-main, build/sift-gen-corpus (--synthetic), the fastText CLI and
data/sst2 (tools/get_data.sh).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_section  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, tunable, cwd):
    """Wall, user and system seconds and peak RSS (MB) of CMD under glibc.malloc.hugetlb=TUNABLE."""
    env = dict(os.environ, GLIBC_TUNABLES=f"glibc.malloc.hugetlb={tunable}")
    out = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M"] + cmd, env=env, cwd=cwd,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        sys.exit(f"huge_pages.py: {' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    wall, user, system, rss = out.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user), float(system), int(rss) / 1024


def fasttext_run(tmp):
    subprocess.run(["fasttext", "supervised", "-input", f"{tmp}/sst2.train.ft", "-output",
                    f"{tmp}/ft", "-dim", "10", "-epoch", "5", "-lr", "0.5", "-wordNgrams", "2",
                    "-thread", "1", "-bucket", "2000000", "-verbose", "0"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def cases(args, tmp):
    sift, main = f"{args.build}/sift", f"{args.build}/sift-main"
    runs = f"{tmp}/runs"

    def train(config, *sets):
        return [sift, "train", config, "--quiet", "--set", f"run.dir={runs}"] + [
            x for s in sets for x in ("--set", s)]

    yield "SST-2, fastText model (sift-lite)", train("configs/sst2.yaml"), False
    yield "SST-2 after a fastText CLI run", train("configs/sst2.yaml"), True
    yield "SST-2 TextCNN, 10 steps (LibTorch)", train("configs/sst2_textcnn.yaml",
                                                      "train.max_steps=10"), False
    yield "`sift --version` (LibTorch start-up)", [main, "--version"], False
    if args.synthetic:
        data = f"{tmp}/synthetic"
        yield (f"{args.synthetic:,} synthetic lines, 2 threads",
               train("configs/synthetic.yaml", f"data.train.path={data}",
                     f"data.test.path={tmp}/synthetic.test.ft", "run.threads=2",
                     "data.workers=2"), False)


def prepare(args, tmp):
    with open(f"{ROOT}/data/sst2/stsa.binary.train") as src, open(f"{tmp}/sst2.train.ft", "w") as dst:
        for line in src:
            label, _, text = line.partition(" ")
            dst.write(f"__label__{label} {text}")
    if args.synthetic:
        gen = f"{args.build}/sift-gen-corpus"
        os.makedirs(f"{tmp}/synthetic")
        common = ["--classes", "8", "--median-length", "24"]
        subprocess.run([gen, "--lines", str(args.synthetic), "--shards", "8", "--seed", "7",
                        "--out", f"{tmp}/synthetic/part"] + common, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run([gen, "--lines", "20000", "--seed", "8", "--out", f"{tmp}/synthetic.test"]
                       + common, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.rename(f"{tmp}/synthetic.test-00000-of-00001.txt", f"{tmp}/synthetic.test.ft")


def measure(args, tmp):
    rows = []
    for name, cmd, after_fasttext in cases(args, tmp):
        got = {1: [], 0: []}
        shutil.rmtree(f"{tmp}/runs", ignore_errors=True)
        timed(cmd, 1, ROOT)  # a first run counts the vocabulary into the task cache
        for r in range(args.rounds):
            for tunable in (1, 0) if r % 2 == 0 else (0, 1):
                shutil.rmtree(f"{tmp}/runs", ignore_errors=True)
                if after_fasttext:
                    fasttext_run(tmp)
                got[tunable].append(timed(cmd, tunable, ROOT))
        rows.append((name, got))
        print(f"{name}: on {[g[0] for g in got[1]]} off {[g[0] for g in got[0]]}", file=sys.stderr)
    return rows


def median(values):
    return statistics.median(values)


def table(rows):
    lines = ["| case | huge pages: wall s (min-max) | system s | RSS MB | 4 kB pages: wall s "
             "(min-max) | system s | RSS MB | wall, off / on |",
             "|---|---|---|---|---|---|---|---|"]
    for name, got in rows:
        cells = []
        for tunable in (1, 0):
            walls = [g[0] for g in got[tunable]]
            cells.append(f"{median(walls):.2f} ({min(walls):.2f}-{max(walls):.2f}) | "
                         f"{median([g[2] for g in got[tunable]]):.2f} | "
                         f"{median([g[3] for g in got[tunable]]):.0f}")
        ratio = median([g[0] for g in got[0]]) / median([g[0] for g in got[1]])
        lines.append(f"| {name} | {cells[0]} | {cells[1]} | {ratio:.2f}x |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=f"{ROOT}/build")
    p.add_argument("--rounds", type=int, default=7, help="pairs per case")
    p.add_argument("--synthetic", type=int, default=0, help="add a synthetic corpus of N lines")
    p.add_argument("--no-write", action="store_true", help="print only; leave the page")
    args = p.parse_args()
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    with tempfile.TemporaryDirectory(prefix="sift-huge-") as tmp:
        prepare(args, tmp)
        rows = measure(args, tmp)
    md = table(rows)
    print(md)
    if args.no_write:
        return
    command = "python3 bench/huge_pages.py" + (
        f" --synthetic {args.synthetic}" if args.synthetic else "") + f" --rounds {args.rounds}"
    note = (f"- Medians of {args.rounds} interleaved pairs per case, after one run that fills the "
            "task cache; load average {load} at the start. Since this table, the launcher no "
            "longer adds the tunable (tools/launcher/launcher.cc); GLIBC_TUNABLES=glibc.malloc."
            "hugetlb=1 asks for huge pages again.")
    results_section.write_section("fasttext-huge-pages",
                                  "Transparent huge pages (glibc.malloc.hugetlb) on and off",
                                  md + "\n\n" + note.format(load=load), command=command)

if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""bench/watch_bench.py: the measurements of issue #16 in bench/RESULTS.md ("Where the time
goes"). Prints markdown; writes nothing else. Run from anywhere after building.

  bench/watch_bench.py synthetic [--lines 10000000] [--max-steps 0]
      Generates LINES synthetic lines (build/sift-gen-corpus, 8 shards) under $TMPDIR
      (default /tmp), trains configs/synthetic.yaml on them (1 epoch) under
      /usr/bin/time -v, prints the run's phase table as a RESULTS.md row, its bottleneck
      line and the load average, and deletes the corpus and the run.
  bench/watch_bench.py overhead --base BASE_BUILD [--rounds 3]
      Rounds of `bench/compare --quick --only fasttext --no-write` (AG News sample, TREC,
      SST-2: the fastText CLI and `sift train`), each round running three arms one after
      the other: BASE_BUILD/sift, this build's sift, and this build's with
      train.profile=true (SIFT_SET). Per data set: the median over rounds of Sift's
      training-loop seconds (report train.seconds) and wall seconds of each arm, their
      ratio to the base, and the fastText CLI's wall seconds as the control of the
      machine's load. Make BASE_BUILD from another commit, e.g.
        git worktree add --detach /tmp/wt-base b3a9dc9~1
        cmake -S /tmp/wt-base -B /tmp/wt-base/build -G Ninja -DCMAKE_BUILD_TYPE=Release
        ninja -C /tmp/wt-base/build sift
      Needs data/ag_news, data/trec, data/sst2 (tools/get_data.sh).

BUILD=folder picks this build (default build).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BUILD", "build")
PHASES = ["data_wait", "copy", "fused", "forward", "backward", "optimizer", "checkpoint", "validation",
          "other"]


def log(msg):
    print(f"[watch_bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def load():
    return "%.1f %.1f %.1f" % os.getloadavg()


def time_v(path):
    """Wall seconds and peak RSS (MiB) from a /usr/bin/time -v report."""
    text = open(path).read()
    clock = re.search(r"Elapsed \(wall clock\) time.*: ([\d:.]+)", text).group(1)
    wall = 0.0
    for part in clock.split(":"):
        wall = wall * 60 + float(part)
    rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1))
    return wall, rss_kb / 1024


def synthetic(args):
    tmp = tempfile.mkdtemp(prefix="sift-watch-synthetic.", dir=os.environ.get("TMPDIR", "/tmp"))
    try:
        corpus = os.path.join(tmp, "corpus")
        os.makedirs(corpus)
        log(f"generating {args.lines:,} lines into {corpus}; load {load()}")
        t0 = time.time()
        subprocess.run([f"{BUILD}/sift-gen-corpus", "--lines", str(args.lines), "--shards", "8",
                        "--out", os.path.join(corpus, "part")], cwd=ROOT, check=True)
        gen_s = time.time() - t0
        size = sum(os.path.getsize(os.path.join(corpus, f)) for f in os.listdir(corpus))
        log(f"generated {size / 1e9:.2f} GB in {gen_s:.0f} s; training; load {load()}")
        load_start = load()
        cmd = ["/usr/bin/time", "-v", "-o", os.path.join(tmp, "time"), f"{BUILD}/sift", "train",
               "configs/synthetic.yaml", "--json", "--quiet", "--set", f"data.train.path={corpus}",
               "--set", f"run.dir={tmp}/runs"]
        if args.max_steps:
            cmd += ["--set", f"train.max_steps={args.max_steps}"]
        out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
        wall, rss = time_v(os.path.join(tmp, "time"))
        report = json.load(open(os.path.join(tmp, "runs", "synthetic", "report.json")))
        summary = json.loads(out)
        p = report["train"]["phases"]
        share = {r["phase"]: r["share"] for r in p["table"]}
        ms = {r["phase"]: r["ms_per_step"] for r in p["table"]}
        row = (f"| synthetic {args.lines / 1e6:g}M lines, 1 epoch (configs/synthetic.yaml) | "
               f"{p['steps']} | {p['wall_seconds']:.2f} | " +
               " | ".join(f"{100 * share.get(k, 0):.1f}%" for k in PHASES) +
               f" | {p['peak_rss_bytes'] / 2**20:.0f} MiB |")
        print("| run | steps | wall s | " + " | ".join(PHASES).replace("_", " ") + " | peak RSS |")
        print("|---" * (len(PHASES) + 4) + "|")
        print(row)
        print()
        print(f"- ms per step: " + ", ".join(f"{k} {ms.get(k, 0):.4f}" for k in PHASES[:6]))
        print(f"- bottleneck line: {p.get('bottleneck', '(none: data wait below 30% of step time)')}")
        print(f"- data wait share of step time: {100 * p['data_wait_share_of_step']:.1f}%")
        print(f"- corpus {size / 1e9:.2f} GB generated in {gen_s:.0f} s; `sift train` wall "
              f"{wall:.0f} s (training loop {report['train']['seconds']:.0f} s), peak RSS "
              f"{rss:.0f} MiB; {report['train']['examples']:,} examples, valid accuracy "
              f"{summary['splits']['valid']['accuracy']:.4f}")
        print(f"- load average (1/5/15 min) at the start {load_start}, at the end {load()}; "
              f"{os.cpu_count()} cores")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def compare_once(build, sift_set):
    """One `bench/compare --quick --only fasttext --no-write`: per data set, Sift's loop and
    wall seconds and the fastText CLI's wall seconds, parsed from its progress lines."""
    env = dict(os.environ, BUILD=build, SIFT_SET=sift_set)
    proc = subprocess.run([os.path.join(ROOT, "bench", "compare"), "--quick", "--only", "fasttext",
                           "--no-write"], cwd=ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"bench/compare failed ({build}, SIFT_SET={sift_set!r}):\n{proc.stderr[-3000:]}")
    rows, name = {}, None
    for line in proc.stderr.splitlines():
        m = re.match(r"== (\S+): converting", line)
        if m:
            name = m.group(1)
        m = re.search(r"fastText acc [\d.]+ wall ([\d.]+)s .*\| sift acc ([\d.]+) wall ([\d.]+)s "
                      r"\(training loop ([\d.]+)s\)", line)
        if m and name:
            rows[name] = dict(ft_wall=float(m.group(1)), acc=float(m.group(2)),
                              wall=float(m.group(3)), loop=float(m.group(4)))
    return rows


def overhead(args):
    base = os.path.abspath(args.base)
    if not os.access(os.path.join(base, "sift"), os.X_OK):
        sys.exit(f"{base}/sift is missing: build the base commit there first")
    arms = [("base", base, ""), ("this build", BUILD, ""),
            ("this build, train.profile=true", BUILD, "train.profile=true")]
    runs = {a[0]: [] for a in arms}
    load_start = load()
    for r in range(1, args.rounds + 1):
        for label, build, sift_set in arms:
            log(f"round {r}/{args.rounds}: {label}; load {load()}")
            runs[label].append(compare_once(build, sift_set))
    names = list(runs["base"][0])
    print("| data set | arm | Sift training loop s (median) | ratio to base | Sift wall s | "
          "ratio to base | fastText CLI wall s (control) | test accuracy |")
    print("|---|---|---|---|---|---|---|---|")
    med = lambda label, name, key: statistics.median(x[name][key] for x in runs[label])
    for name in names:
        for label, _, _ in arms:
            loop, wall = med(label, name, "loop"), med(label, name, "wall")
            each = ", ".join(f"{x[name]['loop']:.2f}" for x in runs[label])
            print(f"| {name} | {label} | {loop:.2f} ({each}) | "
                  f"{loop / med('base', name, 'loop'):.3f} | {wall:.2f} | "
                  f"{wall / med('base', name, 'wall'):.3f} | {med(label, name, 'ft_wall'):.2f} | "
                  f"{med(label, name, 'acc'):.4f} |")
    print()
    print(f"- {args.rounds} rounds, arms alternating within each round; base `{base}/sift`, "
          f"this build `{BUILD}/sift`")
    print(f"- load average (1/5/15 min) at the start {load_start}, at the end {load()}; "
          f"{os.cpu_count()} cores")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    s = sub.add_parser("synthetic", help="phase table of a synthetic run")
    s.add_argument("--lines", type=int, default=10_000_000)
    s.add_argument("--max-steps", type=int, default=0, help="stop training after this many steps")
    o = sub.add_parser("overhead", help="the always-on counting against a base build")
    o.add_argument("--base", required=True, help="build folder of the base commit")
    o.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    synthetic(a) if a.what == "synthetic" else overhead(a)


if __name__ == "__main__":
    main()

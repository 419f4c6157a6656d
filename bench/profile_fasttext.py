#!/usr/bin/env python3
"""Where the CPU goes when the fastText model trains, in Sift and in the fastText CLI
(issue #46): a sampling profile (Debian's linux-perf) of one run of each on the same
synthetic corpus, the samples grouped by what the function does.

    python3 bench/profile_fasttext.py [--lines N] [--no-write]

The corpus is sift-gen-corpus's (8 labels, about 32 words a line, seed 7, 8 shards), the
settings the issue's: configs/synthetic.yaml with run.threads=2 and data.workers=2 against
`fasttext supervised -dim 10 -wordNgrams 2 -bucket 2000000 -epoch 1 -lr 0.5 -thread 2`.
Each program's CPU seconds (user + system, /usr/bin/time) are split by its share of the
samples; a function goes to the first group whose pattern its name matches (GROUPS). Run
from the repository root; SIFT and GEN name the binaries (default build/sift,
build/sift-gen-corpus). The table goes to bench/RESULTS.md unless --no-write.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# (group, pattern on the symbol); the first match wins. Kernel symbols ([k]) are system
# time whatever they do: page faults, reads, futex wake-ups, scheduling.
GROUPS = [
    ("kernel (system time)", r"^\[k\]"),
    ("vocabulary pass", r"VocabBuilder|WordIndex|Dictionary::(add|threshold|readFromFile|initNgrams)"),
    ("reading, parsing, tokenizing",
     r"RecordParser|LineReader|RecordReader|ExampleStream::next|WordTokenizer|to_utf8|casefold|"
     r"decode_utf8|has_control_byte|crc32|inflate|ZSTD|__memchr|Dictionary::readWord|"
     r"Dictionary::getLine|basic_istream|basic_streambuf|_IO_|__uflow|getc"),
    ("validation split (hash of each line)", r"in_part|record_hash|mix64"),
    ("word lookup and n-gram hashing",
     r"BagEncoder|append_ngrams|CharNgrams|_Hash_bytes|_Hashtable|_Map_base|Dictionary::(find|hash|"
     r"getId|addWordNgrams|addSubwords|computeSubwords|pushHash)"),
    ("batches between threads",
     r"ShardedStream|EncodedRecord|take_round_robin|deque|RawBatch|condition_variable|pthread_cond|"
     r"__lll_lock|futex"),
    ("model update (forward, backward)",
     r"Sgd|SoftmaxSgd|NegativeSampling|HierarchicalSoftmax|fill_values|__ieee754_exp|__ieee754_log|"
     r"^exp|^log|expf|logf|Model::|Loss::|SoftmaxLoss|Vector::|DenseMatrix::|Matrix::|"
     r"computeHidden|findKBest|std_log|sigmoid|FastText::(supervised|trainThread)"),
    ("evaluation", r"lite_evaluate|evaluate|FastText::test|Meter"),
    ("malloc, copies, string ops (libc)",
     r"malloc|_int_free|free|unlink_chunk|memmove|memcpy|memset|memcmp|basic_string|"
     r"vector<std::__cxx11::basic_string"),
]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def cpu_seconds(time_file):
    total = 0.0
    for line in open(time_file):
        if "User time" in line or "System time" in line:
            total += float(line.split(":")[1])
    return total


def profile(name, cmd, workdir):
    """perf record of cmd; returns ({group: share}, cpu seconds, top symbols)."""
    data = os.path.join(workdir, name + ".perf")
    tfile = os.path.join(workdir, name + ".time")
    # The vocabulary cache off: the profile shows the whole work of a first run.
    env = dict(os.environ, SIFT_CACHE_DIR="off")
    run(["/usr/bin/time", "-v", "-o", tfile, "perf", "record", "-q", "-F", "999", "-o", data,
         "--"] + cmd, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    report = subprocess.run(
        ["perf", "report", "-i", data, "--no-children", "--sort", "symbol", "-g", "none",
         "--stdio", "--percent-limit", "0"], capture_output=True, text=True, check=True).stdout
    shares, top = {}, []
    for line in report.splitlines():
        m = re.match(r"\s*([0-9.]+)%\s+(\[[.k]\])\s+(.*?)\s*$", line)
        if not m:
            continue
        pct, kind = float(m.group(1)), m.group(2)
        symbol = re.sub(r"(\s+-)+$", "", m.group(3)).strip()
        key = "[k] " + symbol if kind == "[k]" else symbol
        group = next((g for g, p in GROUPS if re.search(p, key)), "other")
        shares[group] = shares.get(group, 0.0) + pct / 100
        top.append((pct, symbol))
    return shares, cpu_seconds(tfile), sorted(top, reverse=True)[:8]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=1000000)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    sift = os.path.abspath(os.environ.get("SIFT", "build/sift"))
    gen = os.path.abspath(os.environ.get("GEN", "build/sift-gen-corpus"))
    for tool in ("perf", "fasttext"):
        if not shutil.which(tool):
            sys.exit(f"profile_fasttext.py: '{tool}' is not installed (Debian: linux-perf, fasttext)")
    load_before = " ".join(open("/proc/loadavg").read().split()[:3])
    work = tempfile.mkdtemp(prefix="sift-profile.")
    try:
        corpus = os.path.join(work, "corpus")
        os.makedirs(corpus)
        run([gen, "--lines", str(args.lines), "--shards", "8", "--classes", "8",
             "--median-length", "24", "--seed", "7", "--out", os.path.join(corpus, "part")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        joined = os.path.join(work, "train.ft")
        with open(joined, "wb") as out:
            for f in sorted(os.listdir(corpus)):
                with open(os.path.join(corpus, f), "rb") as part:
                    shutil.copyfileobj(part, out)
        config = os.path.abspath("configs/synthetic.yaml")
        sift_shares, sift_cpu, sift_top = profile(
            "sift", [sift, "train", config, "--quiet", "--set", f"data.train.path={corpus}",
                     "--set", "run.threads=2", "--set", "data.workers=2",
                     "--set", f"run.dir={work}/runs"], work)
        ft_shares, ft_cpu, ft_top = profile(
            "fasttext", ["fasttext", "supervised", "-input", joined, "-output",
                         os.path.join(work, "ft"), "-dim", "10", "-wordNgrams", "2", "-bucket",
                         "2000000", "-epoch", "1", "-lr", "0.5", "-thread", "2", "-verbose", "0"],
            work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    groups = [g for g, _ in GROUPS] + ["other"]
    lines = [f"- load average {load_before} at the start",
             f"- {args.lines:,} synthetic lines; Sift `configs/synthetic.yaml` with run.threads=2, "
             "data.workers=2 against `fasttext supervised -thread 2` (dim 10, bigrams, 2M buckets, "
             "1 epoch, lr 0.5); `perf record -F 999`, CPU seconds from `/usr/bin/time -v`; "
             "Sift with SIFT_CACHE_DIR=off (its vocabulary counted, as on a first run)",
             "",
             "| where the CPU goes | Sift share | Sift CPU s | fastText share | fastText CPU s |",
             "|---|---|---|---|---|"]
    for g in groups:
        s, f = sift_shares.get(g, 0.0), ft_shares.get(g, 0.0)
        if s < 0.0005 and f < 0.0005:
            continue
        lines.append(f"| {g} | {100 * s:.1f}% | {s * sift_cpu:.2f} | {100 * f:.1f}% | "
                     f"{f * ft_cpu:.2f} |")
    lines.append(f"| **total** | 100% | {sift_cpu:.2f} | 100% | {ft_cpu:.2f} |")
    lines += ["", "- Sift's busiest functions: " +
              "; ".join(f"{sym[:60]} {pct:.1f}%" for pct, sym in sift_top),
              "- fastText's busiest functions: " +
              "; ".join(f"{sym[:60]} {pct:.1f}%" for pct, sym in ft_top)]
    table = "\n".join(lines)
    print(table)
    if not args.no_write:
        from results_section import write_section
        write_section("fasttext-profile", f"Where the CPU goes: Sift and fastText on "
                      f"{args.lines:,} synthetic lines", table)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Runs a command and reports its wall time and peak memory as one JSON line on stderr
(or into --out): `max_rss_kb`, the largest resident set of any one process of the run
(getrusage, as `/usr/bin/time -v` reports it), and `tree_peak_kb`, the largest sum of
VmRSS over the process and all its descendants, sampled every 20 ms (what a DataLoader
with worker processes costs in total).

  bench/peak_rss.py --out run.json -- build/sift train configs/ag_news.yaml --json
"""
import json
import os
import resource
import subprocess
import sys
import time


def children_map():
    kids = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(pid))
    return kids


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss(root):
    kids = children_map()
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss_kb(pid)
        todo.extend(kids.get(pid, []))
    return total


def main():
    args = sys.argv[1:]
    out = None
    if args[:1] == ["--out"]:
        out, args = args[1], args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.exit("usage: peak_rss.py [--out FILE] -- COMMAND ...")
    start = time.perf_counter()
    proc = subprocess.Popen(args)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.02)
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {"rc": proc.returncode, "wall_s": wall, "max_rss_kb": usage.ru_maxrss,
              "tree_peak_kb": max(peak, usage.ru_maxrss),
              "cpu_s": usage.ru_utime + usage.ru_stime}
    line = json.dumps(result)
    if out:
        with open(out, "w") as f:
            f.write(line + "\n")
    else:
        print(line, file=sys.stderr)
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()

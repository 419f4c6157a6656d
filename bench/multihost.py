#!/usr/bin/env python3
"""Training across two "machines" (network namespaces joined by a veth link, each rank in
its own namespace with GLOO_SOCKET_IFNAME=eth0) against the same two ranks over loopback
(`sift launch --nproc 2`), side by side; then the cost of a lost node under
`sift launch --max-restarts` with one agent per namespace.

  sudo python3 bench/multihost.py            # N=3, prints the tables (docs/distributed.md)
  sudo python3 bench/multihost.py -n 1

Needs root (ip netns). Figures from each run's report.json: train.examples / train.seconds
(the training loop), train.allreduce_seconds / allreduce_calls (time in the gradient
average, which includes waiting for the slower rank). Medians over N, set-ups interleaved.

Restart: the fastText model trains with train.log_every=1 (a timestamped train.log line
per step) and train.checkpoint_minutes=C; node1's rank is killed with SIGKILL at a fixed
time after the first save. "kill to first resumed step" is from the kill to the first step
line after the restart's line in train.log (the agents noticing, stopping, rendezvousing
again on port + 1, starting the process, loading last.ckpt). "steps lost" is the last step
logged before the kill minus restarts.jsonl's resumed_from_step.
"""
import argparse
import datetime
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_section import write_section  # noqa: E402

SIFT = os.path.abspath(os.environ.get("SIFT", "build/sift"))
NET = f"smb{os.getpid()}x"
ADDR = ["10.88.0.1", "10.88.0.2"]

MODELS = [
    ("fastText, SMS spam", "configs/sms_spam.yaml",
     ["train.epochs=3", "model.buckets=200000"]),
    ("Transformer, SST-2", "configs/sst2_transformer.yaml", ["train.epochs=1"]),
]
COMMON = ["run.threads=1", "data.workers=1", "run.dist_timeout_seconds=30"]


def sh(cmd):
    subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL)


def make_network():
    """Namespaces NET+h (a bridge), NET+n0 and NET+n1 (eth0 at ADDR[i])."""
    sh(f"ip netns add {NET}h && ip -n {NET}h link add br0 type bridge && ip -n {NET}h link set br0 up")
    for i in range(2):
        ns, v, p = f"{NET}n{i}", f"{NET}v{i}", f"{NET}p{i}"
        sh(f"ip netns add {ns} && ip link add {v} type veth peer name {p} && "
           f"ip link set {v} netns {ns} && ip link set {p} netns {NET}h && "
           f"ip -n {NET}h link set {p} master br0 up && ip -n {ns} link set {v} name eth0 && "
           f"ip -n {ns} addr add {ADDR[i]}/24 dev eth0 && ip -n {ns} link set eth0 up && "
           f"ip -n {ns} link set lo up")


def remove_network():
    for ns in (f"{NET}n0", f"{NET}n1", f"{NET}h"):
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout
        for p in pids.split():
            os.kill(int(p), signal.SIGKILL)
        subprocess.run(["ip", "netns", "delete", ns], stderr=subprocess.DEVNULL)


def on_node(i, argv, env):
    """argv run in node i (its namespace and host name node<i>)."""
    script = f"hostname node{i} && exec env " + " ".join(env) + " " + " ".join(
        "'" + a.replace("'", "'\\''") + "'" for a in argv)
    return subprocess.Popen(["ip", "netns", "exec", f"{NET}n{i}", "unshare", "--uts",
                             "/bin/sh", "-c", script],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def train_argv(config, tmp, name, settings):
    argv = ["train", config, "--quiet", "--set", f"run.dir={tmp}", "--set", f"run.name={name}"]
    for s in settings + COMMON:
        argv += ["--set", s]
    return argv


def report(tmp, name):
    with open(os.path.join(tmp, name, "report.json")) as f:
        t = json.load(f)["train"]
    shutil.rmtree(os.path.join(tmp, name))
    return t


def run_loopback(config, tmp, name, settings):
    subprocess.run([SIFT, "launch", "--nproc", "2", "--"] + train_argv(config, tmp, name, settings),
                   check=True, stdout=subprocess.DEVNULL)
    return report(tmp, name)


def run_veth(config, tmp, name, settings):
    procs = [on_node(i, [SIFT] + train_argv(config, tmp, name, settings),
                     [f"RANK={i}", "LOCAL_RANK=0", "WORLD_SIZE=2", f"MASTER_ADDR={ADDR[0]}",
                      "MASTER_PORT=29500", "GLOO_SOCKET_IFNAME=eth0"]) for i in range(2)]
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"a rank over veth failed: {err}")
    return report(tmp, name)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def throughput_rows(n, tmp):
    rows = []
    for label, config, extra in MODELS:
        res = {"loopback": [], "veth": []}
        for rep in range(n):
            res["loopback"].append(run_loopback(config, tmp, f"l{rep}", extra))
            res["veth"].append(run_veth(config, tmp, f"v{rep}", extra))
        base = median([t["examples"] / t["seconds"] for t in res["loopback"]])
        for setup in ("loopback", "veth"):
            ts = res[setup]
            eps = median([t["examples"] / t["seconds"] for t in ts])
            ar = median([1000 * t["allreduce_seconds"] / max(t["allreduce_calls"], 1) for t in ts])
            step = median([1000 * t["seconds"] / t["steps"] for t in ts])
            rows.append(f"| {label} | 2 ranks, {setup} | {ts[0]['steps']} | {eps:.0f} | "
                        f"{eps / base:.2f}x | {ar:.2f} | {step:.2f} |")
            print(rows[-1], flush=True)
    return rows


def log_times(path):
    """[(unix time, line)] of train.log."""
    out = []
    for line in open(path, encoding="utf-8"):
        stamp, _, text = line.rstrip("\n").partition(" ")
        t = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
        out.append((t, text))
    return out


def step_of(text):
    words = text.split()
    if len(words) > 3 and words[0] == "epoch" and words[2] == "step" and "/" in words[3]:
        return int(words[3].split("/")[0])
    return None


def restart_row(tmp, name, minutes, kill_after):
    config, extra = "configs/sms_spam.yaml", ["train.epochs=40", "model.buckets=2000000"]
    settings = extra + [f"train.checkpoint_minutes={minutes}", "train.log_every=1"]
    agents = [on_node(i, [SIFT, "launch", "--nnodes", "2", "--node-rank", str(i), "--master-addr",
                          ADDR[0], "--master-port", "29500", "--nproc", "1", "--max-restarts",
                          "1", "--"] + train_argv(config, tmp, name, settings),
                      ["GLOO_SOCKET_IFNAME=eth0"]) for i in range(2)]
    last = os.path.join(tmp, name, "last.ckpt")
    while not os.path.exists(last):
        time.sleep(0.05)
    time.sleep(kill_after)
    ranks = open(f"/proc/{agents[1].pid}/task/{agents[1].pid}/children").read().split()
    killed_at = time.time()
    os.kill(int(ranks[0]), signal.SIGKILL)
    for a in agents:
        _, err = a.communicate()
        if a.returncode != 0:
            raise RuntimeError(f"an agent failed: {err}")
    log = log_times(os.path.join(tmp, name, "train.log"))
    before = [step_of(t) for s, t in log if s <= killed_at and step_of(t) is not None]
    restart_at = next(i for i, (s, t) in enumerate(log) if t.startswith("restart 1 "))
    first = next(s for s, t in log[restart_at:] if step_of(t) is not None)
    with open(os.path.join(tmp, name, "restarts.jsonl")) as f:
        resumed = json.loads(f.readline())["resumed_from_step"]
    with open(os.path.join(tmp, name, "report.json")) as f:
        phases = json.load(f)["train"]["phases"]
    shutil.rmtree(os.path.join(tmp, name))
    return first - killed_at, before[-1] - resumed, phases


def restart_table(rows):
    return "\n".join(
        ["| train.checkpoint_minutes | kill to first resumed step, s | steps lost (median) | "
         "steps lost (each run) | saving's share of the resumed run |",
         "|---|---|---|---|---|"] + rows +
        ["", "fastText with 2M buckets (an 80 MB last.ckpt), 2 agents `sift launch --nnodes 2 "
         "--max-restarts 1`, node1's rank killed 8 s after the first save."])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-n", type=int, default=3)
    p.add_argument("--write", action="store_true", help="also bench/RESULTS.md")
    a = p.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/multihost.py: needs root (ip netns)")
    tmp = tempfile.mkdtemp(prefix="sift_multihost_bench_")
    load_before = " ".join(open("/proc/loadavg").read().split()[:3])
    make_network()
    try:
        rows = throughput_rows(a.n, tmp)
        restart_rows = []
        for minutes in (0.05, 0.2):
            runs = [restart_row(tmp, f"k{minutes}_{rep}", minutes, 8.0) for rep in range(a.n)]
            share = median([next((row["share"] for row in r[2]["table"]
                                  if row["phase"] == "checkpoint"), 0.0) for r in runs])
            restart_rows.append(f"| {minutes} | {median([r[0] for r in runs]):.1f} | "
                                f"{median([r[1] for r in runs]):.0f} | "
                                f"{' '.join(str(r[1]) for r in runs)} | {100 * share:.0f}% |")
            print(restart_rows[-1], flush=True)
    finally:
        remove_network()
        shutil.rmtree(tmp, ignore_errors=True)
    table = "\n".join([
        f"- load average: {load_before} at the start",
        "",
        "| model | set-up | steps | examples/s | vs loopback | all-reduce ms/step | step ms |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Medians of N runs, set-ups interleaved; 1 compute thread and 1 data worker per rank, "
        "both ranks on this machine's cores in either set-up: the veth row adds the kernel's "
        "network path (bridge, veth, TCP over eth0 instead of lo), not a slower wire.",
    ])
    table += "\n\n" + restart_table(restart_rows)
    print(table)
    if a.write:
        write_section("multihost", "Two machines over a veth link, and restarts", table)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""run.shard (ZeRO stages 1 to 3) against data parallelism, 1, 2 and 4 ranks over Gloo.

  python3 bench/sharding.py              # writes bench/RESULTS.md (section Distributed)
  python3 bench/sharding.py --no-write --steps 4
  python3 bench/sharding.py --stage3 --steps 6   # the stage-3 table (below)
  python3 bench/sharding.py --rows --steps 12     # stage 3 of the fastText table (below)

--stage3: every stage on a larger encoder (model.type transformer, 6 layers, 768 wide,
12 heads, 3072 feed-forward: BERT-Base's layers; SMS spam's vocabulary), Adam, 2% of the
data held out for validation, at each rank count of --nproc (default 2; 3 and 4 ranks
share this machine's 2 cores: memory is the figure there): per rank the weights between
steps and at their peak (report.json's train.ranks: inside a step, a validation or a
save), the gradients between steps and at their peak (the backward's), the optimizer state
and the most of it a save held (optimizer_state_peak_bytes: rank 0 gathers the whole
state into last.ckpt a tensor at a time), the weights, gradients and state together
between steps, peak RSS of each rank (VmHWM, read at the run's end, after the final
validation and save), and seconds per step (train.seconds / train.steps).
Stage 3 recomputes every layer in backward, so at 2 ranks `none` is run with
train.gradient_checkpointing all as well (the same arithmetic, the time it costs), and
`optimizer` (stage 1); --short leaves both out.

--rows: the fastText model with a large bucket table (model.buckets 1M x model.dim 50),
Adam, at every stage against data parallelism at 1, 2 and 4 ranks (`parameters`: its
table kept by rows, each batch's rows gathered from their owners): per rank (rank 0) the
weights between steps and at their peak (a save gathers the table whole), the gradients
between steps and at their peak, the optimizer state, the three together between steps
(x DDP), peak RSS of every rank, examples/s and the validation accuracy.

The default run: a BERT-Small-shaped encoder (model.type transformer, 4 layers, 512 wide,
8 heads, 2048 feed-forward; SMS spam's vocabulary) under Adam on SMS spam, every stage. Every run trains
--steps optimizer steps (the ranks share this machine's cores: memory is the figure,
time secondary) with one compute thread and one data worker per rank. Per rank, from
report.json's train.ranks (rank_figures.cc): optimizer_state_bytes, gradient_bytes (held
between steps), gradient_peak_bytes (the backward's), weights_bytes and peak_rss_bytes;
examples/s from train.examples / train.seconds; the validation accuracy. Figures are
rank 0's (the others differ by at most one 64-element cut); "x DDP" divides by the
data-parallel run at the same number of ranks.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_section import write_section  # noqa: E402

SIFT = os.environ.get("SIFT", "build/sift")
ADAM = ["train.optimizer.type=adam", "train.optimizer.lr=0.001", "train.epochs=1",
        "train.scheduler.type=constant", "run.threads=1", "data.workers=1"]
ENCODER = """data:
  train:
    path: data/sms_spam/SMSSpamCollection
  format: tsv
  text: 1
  label: 0
  max_length: 64
model:
  type: transformer
  dim: 512
  layers: 4
  heads: 8
  ff_dim: 2048
  positions: learned
  max_positions: 64
train:
  batch_size: 8
"""
MODELS = [("BERT-Small-shaped encoder", ENCODER, [])]
# --rows: every stage of the fastText model, stage 3 its table kept by rows.
FASTTEXT = ("fastText, 1M x 50 buckets", "configs/sms_spam.yaml",
            ["model.buckets=1000000", "model.dim=50", "train.batch_size=32"])
SETUPS = [(1, "none"), (2, "none"), (2, "optimizer"), (2, "gradients"), (2, "parameters"),
          (4, "none"), (4, "optimizer"), (4, "gradients"), (4, "parameters")]


def train(tmp, name, config, settings, nproc, shard):
    cmd = [SIFT]
    if nproc > 1:
        cmd += ["launch", "--nproc", str(nproc), "--"]
    cmd += ["train", config, "--quiet", "--json", "--set", f"run.dir={tmp}",
            "--set", f"run.name={name}", "--set", f"run.shard={shard}"]
    for s in settings:
        cmd += ["--set", s]
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    shutil.rmtree(os.path.join(tmp, name))
    return json.loads(out)


def mib(b):
    return b / (1 << 20)


def options():
    p = argparse.ArgumentParser(description="run.shard against data parallelism")
    p.add_argument("--steps", type=int, default=12, help="optimizer steps of every run")
    p.add_argument("--no-write", action="store_true", help="print only; no RESULTS.md")
    p.add_argument("--stage3", action="store_true",
                   help="only every stage on the larger encoder (stage 3 included)")
    p.add_argument("--nproc", type=int, nargs="+", default=[2],
                   help="--stage3: the rank counts (default 2)")
    p.add_argument("--rows", action="store_true",
                   help="only the fastText model, every stage (stage 3: its table by rows)")
    p.add_argument("--short", action="store_true",
                   help="--stage3: at 2 ranks too only none, gradients and parameters")
    return p.parse_args()


def encoder_config(tmp, dim, layers, heads, ff):
    path = os.path.join(tmp, f"encoder{dim}.yaml")
    text = (ENCODER.replace("data/", os.path.abspath("data") + "/")
            .replace("dim: 512", f"dim: {dim}").replace("layers: 4", f"layers: {layers}")
            .replace("heads: 8", f"heads: {heads}").replace("ff_dim: 2048", f"ff_dim: {ff}"))
    with open(path, "w") as f:
        f.write(text)
    return path


STAGE3 = [("none", []), ("none", ["train.gradient_checkpointing=all"]), ("optimizer", []),
          ("gradients", []), ("parameters", [])]
# --short, and at 3 and 4 ranks (the cores shared): data parallelism and stages 2 and 3.
STAGE3_SHORT = [("none", []), ("gradients", []), ("parameters", [])]


def stage3(a, tmp):
    config = encoder_config(tmp, 768, 6, 12, 3072)
    settings = ADAM + [f"train.max_steps={a.steps}", "data.valid_split=0.02"]
    rows, params = [], 0
    for nproc in a.nproc:
        ddp, ddp_all, ddp_held = None, None, None
        for shard, extra in (STAGE3 if nproc == 2 and not a.short else STAGE3_SHORT):
            s = train(tmp, f"s3{nproc}{shard}{len(extra)}", config, settings + extra, nproc, shard)
            t = s["train"]
            ranks = t["ranks"]
            r = ranks[0]
            rss = [x["peak_rss_bytes"] for x in ranks]
            held = r["weights_bytes"] + r["gradient_bytes"] + r["optimizer_state_bytes"]
            if ddp is None:
                ddp, ddp_all, ddp_held, params = r, sum(rss), held, r["weights_bytes"] // 4
            state = r["optimizer_state_bytes"]
            row = (f"| {nproc} | {shard}{' (recomputed)' if extra else ''} | "
                   f"{mib(r['weights_bytes']):.1f} / {mib(r['weights_peak_bytes']):.1f} | "
                   f"{mib(r['gradient_bytes']):.1f} / {mib(r['gradient_peak_bytes']):.1f} | "
                   f"{mib(state):.1f} ({state / ddp['optimizer_state_bytes']:.3f}x) / "
                   f"{mib(r['optimizer_state_peak_bytes']):.1f} | "
                   f"{mib(held):.1f} ({held / ddp_held:.3f}x) | "
                   + " / ".join(f"{mib(x):.0f}" for x in rss) + " | "
                   f"{sum(rss) / ddp_all:.3f}x | {t['seconds'] / t['steps']:.2f} |")
            rows.append(row)
            print(row, flush=True)
    return params, "\n".join([
        "| ranks | run.shard | weights MiB between steps / peak | gradients MiB between steps / "
        "peak | optimizer state MiB (x DDP) / at a save | weights + gradients + state MiB "
        "between steps (x DDP) | peak RSS MiB, rank 0 / 1 / ... | peak RSS, all ranks (x DDP) "
        "| seconds per step |",
        "|---|---|---|---|---|---|---|---|---|", *rows])


def main_stage3(a):
    tmp = tempfile.mkdtemp(prefix="sift_shard_bench_")
    start_load = open("/proc/loadavg").read().split()[:3]
    params, table = stage3(a, tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    load = open("/proc/loadavg").read().split()[:3]
    ranks = " ".join(str(n) for n in a.nproc)
    # The table's caption is its heading, and what each stage holds is docs/distributed.md's
    # (bench/RESULTS.md is capped at 640 lines).
    heading = (f"Sharding: run.shard parameters (ZeRO 3), 6 x 768 encoder ({params / 1e6:.1f}M "
               f"parameters), Adam, {a.steps} steps; weights and state of rank 0, peak RSS at "
               "the run's end (docs/distributed.md says what each stage holds)")
    text = "\n\n".join([
        f"- run: `python3 bench/sharding.py --stage3 --steps {a.steps} --nproc {ranks}"
        f"{' --short' if a.short else ''}`; load "
        f"average {' '.join(start_load)} at the start, {' '.join(load)} at the end (2 cores, "
        "shared: times are indicative only, and 3 or 4 ranks share them)",
        table])
    print(heading + "\n\n" + text)
    if not a.no_write:
        write_section("sharding-stage3", heading, text)


ROWS = [(1, "none"), (2, "none"), (2, "optimizer"), (2, "gradients"), (2, "parameters"),
        (4, "none"), (4, "optimizer"), (4, "gradients"), (4, "parameters")]


def main_rows(a):
    tmp = tempfile.mkdtemp(prefix="sift_shard_bench_")
    start_load = open("/proc/loadavg").read().split()[:3]
    label, config, extra = FASTTEXT
    settings = extra + ADAM + [f"train.max_steps={a.steps}"]
    rows, ddp, params = [], {}, 0
    for nproc, shard in ROWS:
        s = train(tmp, f"rows{nproc}{shard}", config, settings, nproc, shard)
        t = s["train"]
        r = t["ranks"][0]
        held = r["weights_bytes"] + r["gradient_bytes"] + r["optimizer_state_bytes"]
        if shard == "none":
            ddp[nproc], params = (r, held), r["weights_bytes"] // 4
        base, base_held = ddp[nproc]
        state = r["optimizer_state_bytes"]
        row = (f"| {nproc} | {shard} | "
               f"{mib(r['weights_bytes']):.1f} / {mib(r['weights_peak_bytes']):.1f} | "
               f"{mib(r['gradient_bytes']):.1f} / {mib(r['gradient_peak_bytes']):.1f} | "
               f"{mib(state):.1f} ({state / base['optimizer_state_bytes']:.3f}x) | "
               f"{mib(held):.1f} ({held / base_held:.3f}x) | "
               + " / ".join(f"{mib(x['peak_rss_bytes']):.0f}" for x in t["ranks"]) + " | "
               f"{t['examples'] / t['seconds']:.1f} | "
               f"{s['splits']['valid']['accuracy']:.4f} |")
        rows.append(row)
        print(row, flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    load = open("/proc/loadavg").read().split()[:3]
    heading = (f"Sharding: run.shard on the fastText model ({label}, {params / 1e6:.1f}M "
               f"parameters; stage 3 keeps the table by rows), Adam, {a.steps} steps; rank 0's "
               "weights, gradients and state, every rank's peak RSS (docs/distributed.md)")
    text = "\n\n".join([
        f"- run: `python3 bench/sharding.py --rows --steps {a.steps}`; load average "
        f"{' '.join(start_load)} at the start, {' '.join(load)} at the end (2 cores, shared: "
        "examples/s are indicative only, and 4 ranks share them)",
        "\n".join([
            "| ranks | run.shard | weights MiB between steps / peak | gradients MiB between "
            "steps / peak | optimizer state MiB (x DDP) | weights + gradients + state MiB "
            "between steps (x DDP) | peak RSS MiB, rank 0 / 1 / ... | examples/s "
            "| valid accuracy |",
            "|---|---|---|---|---|---|---|---|---|", *rows])])
    print(heading + "\n\n" + text)
    if not a.no_write:
        write_section("sharding-rows", heading, text)


def main():
    a, tables = options(), []
    if a.stage3:
        main_stage3(a)
        return
    if a.rows:
        main_rows(a)
        return
    tmp = tempfile.mkdtemp(prefix="sift_shard_bench_")
    for label, config, extra in MODELS:
        if not config.endswith(".yaml"):
            path = os.path.join(tmp, "encoder.yaml")
            with open(path, "w") as f:
                f.write(config.replace("data/", os.path.abspath("data") + "/"))
            config = path
        settings = extra + ADAM + [f"train.max_steps={a.steps}"]
        rows, ddp = [], {}
        for nproc, shard in SETUPS:
            s = train(tmp, f"{nproc}{shard}", config, settings, nproc, shard)
            t = s["train"]
            r = t["ranks"][0]
            state, grads, peak, weights = (r["optimizer_state_bytes"], r["gradient_bytes"],
                                           r["gradient_peak_bytes"], r["weights_bytes"])
            total = state + grads + weights
            if shard == "none":
                ddp[nproc] = (state, total)
                params = weights // 4  # fp32, whole on every rank
            row = (f"| {nproc} | {shard} | {mib(weights):.1f} | {mib(grads):.1f} "
                   f"(peak {mib(peak):.1f}) | {mib(state):.1f} ({state / ddp[nproc][0]:.3f}x) | "
                   f"{mib(total):.1f} ({total / ddp[nproc][1]:.3f}x) | "
                   f"{mib(r['peak_rss_bytes']):.0f} / {mib(t['ranks'][-1]['peak_rss_bytes']):.0f} | "
                   f"{t['examples'] / t['seconds']:.1f} | "
                   f"{s['splits']['valid']['accuracy']:.4f} |")
            rows.append(row)
            print(row, flush=True)
        tables.append("\n".join([
            f"{label} ({params / 1e6:.1f}M parameters) under Adam, {a.steps} steps; figures of rank 0 "
            "but for the last rank's peak RSS", "",
            "| ranks | run.shard | weights MiB | gradients MiB between steps | optimizer state "
            "MiB (x DDP) | weights + gradients + state MiB (x DDP) | peak RSS MiB, rank 0 / last "
            "| examples/s "
            "| valid accuracy |",
            "|---|---|---|---|---|---|---|---|---|", *rows]))
    shutil.rmtree(tmp, ignore_errors=True)
    load = open("/proc/loadavg").read().split()[:3]
    text = "\n\n".join([
        f"- run: `python3 bench/sharding.py --steps {a.steps}`; load average {' '.join(load)} "
        "at the end (this 2-core machine is shared: examples/s are indicative only)",
        *tables,
        "Rank 0 writes last.ckpt from the optimizer state's own memory under data "
        "parallelism, and under run.shard gathers it into the file a tensor at a time "
        "(optimizer_stream), so its peak RSS holds one tensor's state more than the other "
        "ranks'. Stages 1 and 2 can peak above data parallelism on a small model: the "
        "buckets (train.bucket_mb) of the emulated reduce-scatter and of the weights' "
        "all-gather can cost more than the optimizer state they save. "
        "The encoder has SMS spam's vocabulary: fewer embedding rows than "
        "BERT-Small's 30k (29M parameters in all).",
        "Stages 1 and 2 keep the weights whole on every rank; stage 3 (parameters) keeps a "
        "slice of each layer and of the token table between steps, gathers a layer whole for "
        "its forward and again for its backward (every layer is recomputed) and the table's "
        "rows that the ranks' batches read (a larger encoder in --stage3's table). The gradient peak is whole on every rank too (all-reduce, no reduce-scatter "
        "in Gloo 1.13; docs/distributed.md)."])
    print(text)
    if not a.no_write:
        write_section("sharding", "Sharding: run.shard (ZeRO 1-3) against data parallelism", text)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Fine-tuning an imported BERT: Sift against a PyTorch eager baseline, side by side.

For the BERT-Mini shape (4 layers, 256 hidden, 4 heads) and the BERT-Small shape (4 x 512,
8 heads), both with BERT's 30,522-token vocabulary and 128-token texts, batch 32: a random
Hugging Face folder (bench/make_hf_bert.py), `sift import hf`, then `sift train` through
train.init_from, in fp32 and bf16 with gradient checkpointing off and on, each run
followed at once by bench/python/finetune_torch.py (the same model, batch and AdamW in
PyTorch eager) under the same conditions: one LibTorch thread, /usr/bin/time -v for peak
RSS, examples/s over the steady steps: --warmup steps first (allocations, the optimizer's
state, the data pipeline's start) that neither side's rate counts, then --steps-mini or
--steps-small timed steps (sift: metrics.csv's rows, one each --warmup steps, after the
first; PyTorch: its clock from step --warmup + 1); sift's whole-run rate (report.json: from
the first step to last.ckpt written) beside them. Then the
fine-tuned Mini run's export latency (fp32, bf16, int8) at batch 1 and 64, in C++
(build/sift-latency-bench) and Python (bench/python/export_latency.py).

    /usr/bin/python3 bench/finetune_hf.py [--rounds N] [--warmup W] [--steps-mini S]
        [--steps-small S] [--no-write]

The timed steps must be a multiple of --warmup (sift logs a row each --warmup steps).

    /usr/bin/python3 bench/finetune_hf.py --sst2 [--rounds N] [--window W] [--steps-mini S]
        [--steps-small S] [--shapes mini,small] [--no-write]

--sst2: the same comparison on real text, SST-2's training sentences (data/sst2/
stsa.binary.train, tools/get_data.sh sst2; about 19 words each), where padding decides the
work: a WordPiece vocabulary that `sift tokenizer train` makes from those sentences, padded
to BERT's 30,522 tokens with unreachable [unusedN] entries, goes into the random folders;
`sift tokenizer encode` writes each sentence's ids, which the Python WordPiece reference
(tests/datasets/bert_tokenizer_reference.py) must give too (asserted), and which PyTorch
reads. Both sides read the sentences in file order (sift: data.shuffle_buffer 0) at batch 32,
data.max_length 128; sift with data.bucket_window W and without (a batch padded to its
longest), PyTorch padded to each batch's longest (DataCollatorWithPadding), to 128
(run_glue.py's pad_to_max_length) and bucketed as sift buckets. W warm-up steps (one window)
untimed, then the timed steps (a multiple of W: whole windows, the same batches on both
sides). Writes bench/results/finetune-hf-sst2.json.

Each figure is the median over --rounds interleaved rounds (default 1: the whole bench
takes about ten minutes of one CPU). Writes bench/results/finetune-hf.json and
bench/RESULTS.md (unless --no-write). Run from the repository root after building
(sift, sift-latency-bench).
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

PY = "/usr/bin/python3"
BUILD = os.environ.get("BUILD", "build")
SIFT = os.path.join(BUILD, "sift")
SHAPES = {"mini": (4, 256, 4), "small": (4, 512, 8)}
BATCH, LENGTH = 32, 128


def timed(cmd, cwd=None):
    """(stdout, peak RSS in MB) of `cmd` under /usr/bin/time -v."""
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, cwd=cwd,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    if r.returncode != 0:
        sys.exit(f"finetune_hf.py: {' '.join(cmd)} failed:\n{r.stderr[-3000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    return r.stdout, rss / 1024


def checked(cmd):
    """stdout of `cmd` (one BLAS thread); its stderr and an exit when it fails."""
    r = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    if r.returncode != 0:
        sys.exit(f"finetune_hf.py: {' '.join(cmd)} failed:\n{r.stderr[-3000:]}")
    return r.stdout


def texts(path, n, vocab, seed):
    """n fastText lines of LENGTH - 2 single-token words (w{i}, i % 3 != 2), labels by parity."""
    import random
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab - 5) if i % 3 != 2]
    with open(path, "w") as f:
        for k in range(n):
            line = " ".join(rng.choice(words) for _ in range(LENGTH - 2))
            f.write(f"__label__{'pos' if k % 2 else 'neg'} {line}\n")


def sst2_texts(tmp):
    """SST-2's training sentences as fastText lines (train.txt) and alone (texts.txt)."""
    src = os.path.join("data", "sst2", "stsa.binary.train")
    if not os.path.exists(src):
        sys.exit("finetune_hf.py: no data/sst2/stsa.binary.train: run tools/get_data.sh sst2")
    labels, texts = [], []
    for line in open(src, encoding="utf-8"):
        label, text = line.rstrip("\n").split(" ", 1)
        labels.append(int(label))
        texts.append(text)
    with open(os.path.join(tmp, "train.txt"), "w", encoding="utf-8") as f:
        for label, text in zip(labels, texts):
            f.write(f"__label__{'pos' if label else 'neg'} {text}\n")
    with open(os.path.join(tmp, "texts.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in texts))
    return labels, texts


def sst2_vocab(tmp, size):
    """vocab.txt from `sift tokenizer train` (tokenizer.type wordpiece) on the sentences,
    padded to `size` with [unusedN] tokens (BERT's own filler; punctuation is split off
    before WordPiece, so no text reaches them): BERT's embedding shape, this data's words."""
    path = os.path.join(tmp, "vocab.txt")
    with open(os.path.join(tmp, "vocab.yaml"), "w") as f:
        f.write(f"data: {{train: {{path: {os.path.join(tmp, 'train.txt')}}}, format: fasttext}}\n"
                f"tokenizer: {{type: wordpiece, model: {path}, vocab_size: {size}}}\n")
    checked([SIFT, "tokenizer", "train", os.path.join(tmp, "vocab.yaml")])
    tokens = open(path, encoding="utf-8").read().split("\n")
    tokens = [t for t in tokens if t]
    learnt = len(tokens)
    tokens += [f"[unused{i}]" for i in range(size - learnt)]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(tokens) + "\n")
    return tokens, learnt


def sst2_ids(tmp, base, labels, texts, tokens):
    """Each sentence's ids from `sift tokenizer encode` (what sift train reads), checked
    equal to the Python WordPiece reference's; written as ids.txt (label, then ids)."""
    out = checked([SIFT, "tokenizer", "encode", os.path.join(base, "config.yaml"),
                   "--set", f"train.init_from={base}", "--set", "data.format=fasttext",
                   "--set", f"data.train.path=[{os.path.join(tmp, 'train.txt')}]",
                   "--set", f"data.max_length={LENGTH}",
                   "--input", os.path.join(tmp, "texts.txt")])
    sift_ids = [list(map(int, line.split())) for line in out.splitlines()]
    job = json.dumps({"vocab": tokens, "lowercase": True, "texts": texts})
    ref = subprocess.run([PY, "tests/datasets/bert_tokenizer_reference.py"], input=job,
                         capture_output=True, text=True, check=True)
    index = {t: i for i, t in enumerate(tokens)}
    cls, sep = index["[CLS]"], index["[SEP]"]
    ref_ids = [[cls] + [index[p] for p in r["pieces"]][:LENGTH - 2] + [sep]
               for r in json.loads(ref.stdout)]
    if sift_ids != ref_ids:
        bad = next(i for i, (a, b) in enumerate(zip(sift_ids, ref_ids)) if a != b) \
            if len(sift_ids) == len(ref_ids) else -1
        sys.exit(f"finetune_hf.py: sift's ids differ from the Python reference's at text {bad}")
    with open(os.path.join(tmp, "ids.txt"), "w") as f:
        for label, ids in zip(labels, sift_ids):
            f.write(f"{label} {' '.join(map(str, ids))}\n")
    return sift_ids


def padding(ids, policy, window, first, count):
    """(padded ids, ids) of batches first..first+count-1 of the sentences in file order,
    padded as `policy` (longest, max, bucket) pads them; bucket: the windows' batches as a
    set (sift and PyTorch take each window's batches in their own random order)."""
    lengths = [len(x) for x in ids]
    if policy == "bucket":
        lengths = [n for w in range(0, len(lengths), BATCH * window)
                   for n in sorted(lengths[w:w + BATCH * window])]
    padded = real = 0
    for b in range(first, first + count):
        chunk = lengths[b * BATCH:(b + 1) * BATCH]
        padded += BATCH * (LENGTH if policy == "max" else max(chunk))
        real += sum(chunk)
    return padded, real


def steady_rate(metrics_csv, warmup):
    """examples/s over metrics.csv's rows after the first (each covers `warmup` steps)."""
    import csv
    rows = list(csv.DictReader(open(metrics_csv)))[1:]
    seconds = sum(BATCH * warmup / float(r["examples_per_s"]) for r in rows)
    return BATCH * warmup * len(rows) / seconds


def sift_run(tmp, shape, warmup, steps, precision, ckpt, name, extra=None):
    base = os.path.join(tmp, f"base_{shape}")
    sets = {"run.dir": os.path.join(tmp, "runs"), "run.name": name, "run.threads": "1",
            "run.overwrite": "true", "data.train.path": f"[{os.path.join(tmp, 'train.txt')}]",
            "data.format": "fasttext", "data.valid_split": "0", "data.workers": "1",
            "data.max_length": str(LENGTH), "train.init_from": base, "train.epochs": "1",
            "train.max_steps": str(warmup + steps), "train.batch_size": str(BATCH),
            "train.optimizer.type": "adamw", "train.optimizer.lr": "5e-5",
            "train.optimizer.weight_decay": "0.01", "train.precision": precision,
            "train.gradient_checkpointing": "all" if ckpt else "off",
            "train.log_every": str(warmup)}
    sets.update(extra or {})
    cmd = [SIFT, "train", os.path.join(base, "config.yaml"), "--quiet"]
    for k, v in sets.items():
        cmd += ["--set", f"{k}={v}"]
    _, rss = timed(cmd)
    report = json.load(open(os.path.join(tmp, "runs", name, "report.json")))
    steady = steady_rate(os.path.join(tmp, "runs", name, "metrics.csv"), warmup)
    return steady, rss, report["train"]["examples_per_second"]


def torch_run(shape, warmup, steps, precision, ckpt, extra=()):
    layers, hidden, heads = SHAPES[shape]
    cmd = [PY, "bench/python/finetune_torch.py", "--layers", str(layers), "--hidden", str(hidden),
           "--heads", str(heads), "--batch", str(BATCH), "--length", str(LENGTH),
           "--steps", str(steps), "--warmup", str(warmup), "--threads", "1"]
    cmd += ["--bf16"] if precision == "bf16" else []
    cmd += ["--checkpointing"] if ckpt else []
    out, rss = timed(cmd + list(extra))
    return json.loads(out.strip().splitlines()[-1])["examples_per_s"], rss


def latency(tmp, run):
    """{variant: (file MB, C++ json, Python json)} of the run's fp32, bf16 and int8 exports."""
    # sift-latency-bench reads at least 320 texts: the training texts, cycled to 512.
    with open(os.path.join(tmp, "train.txt")) as f, open(os.path.join(tmp, "texts.txt"), "w") as o:
        lines = list(f)
        for i in range(64 * 8):
            o.write(lines[i % len(lines)].split(" ", 1)[1])
    rows = {}
    for variant, flags in (("fp32", []), ("bf16", ["--dtype", "bf16"]),
                           ("int8", ["--quantize", "int8"])):
        out = os.path.join(tmp, f"{variant}.pt")
        subprocess.run([SIFT, "export", run, "--out", out] + flags, check=True,
                       capture_output=True)
        cpp = checked([os.path.join(BUILD, "sift-latency-bench"), "--model", out, "--texts",
                       os.path.join(tmp, "texts.txt"), "--threads", "1", "--single", "200",
                       "--batches", "8"])
        py = checked([PY, "bench/python/export_latency.py", out, os.path.join(tmp, "texts.txt"),
                      "--threads", "1", "--single", "200", "--batches", "8"])
        rows[variant] = (os.path.getsize(out) / 1e6, json.loads(cpp.strip().splitlines()[-1]),
                         json.loads(py.strip().splitlines()[-1]))
    return rows


SST2_SIFT = ("bucketed", "unbucketed")
SST2_TORCH = ("longest", "max", "bucket")


def sst2_main(a):
    """The --sst2 family (module docstring)."""
    shapes = a.shapes.split(",")
    steps = {"mini": a.steps_mini, "small": a.steps_small}
    if any(steps[s] % a.window for s in shapes):
        sys.exit("finetune_hf.py: --steps-mini and --steps-small must be multiples of --window")
    load_before = " ".join(open("/proc/loadavg").read().split()[:3])
    tmp = tempfile.mkdtemp(prefix="sift_finetune_sst2_")
    try:
        labels, texts = sst2_texts(tmp)
        tokens, learnt = sst2_vocab(tmp, 30522)
        for shape in shapes:
            layers, hidden, heads = SHAPES[shape]
            folder = os.path.join(tmp, f"hf_{shape}")
            subprocess.run([PY, "bench/make_hf_bert.py", folder, "--layers", str(layers),
                            "--hidden", str(hidden), "--heads", str(heads)], check=True)
            shutil.copy(os.path.join(tmp, "vocab.txt"), os.path.join(folder, "vocab.txt"))
            subprocess.run([SIFT, "import", "hf", folder, "--labels", "neg,pos", "--out",
                            os.path.join(tmp, f"base_{shape}")], check=True, capture_output=True)
        ids = sst2_ids(tmp, os.path.join(tmp, f"base_{shapes[0]}"), labels, texts, tokens)
        results, started = {}, time.monotonic()
        for shape in shapes:
            for r in range(a.rounds):
                # --minutes: no round starts after that long (the table says each shape's count).
                if r > 0 and a.minutes and time.monotonic() - started > 60 * a.minutes:
                    break
                for precision in ("fp32", "bf16"):
                    for ckpt in (False, True):
                        key = (shape, precision, ckpt)
                        row = {}
                        # Alternate which side starts each round.
                        order = [("sift", p) for p in SST2_SIFT] + [("torch", p) for p in SST2_TORCH]
                        if r % 2:
                            order.reverse()
                        for side, policy in order:
                            if side == "sift":
                                extra = {"data.shuffle_buffer": "0",
                                         "data.train.path": f"[{os.path.join(tmp, 'train.txt')}]",
                                         "data.max_length": str(LENGTH),
                                         "data.bucket_window":
                                             str(a.window if policy == "bucketed" else 0)}
                                name = f"{shape}_{precision}_{int(ckpt)}_{policy}"
                                rate, rss, _ = sift_run(tmp, shape, a.window, steps[shape],
                                                        precision, ckpt, name, extra)
                            else:
                                rate, rss = torch_run(shape, a.window, steps[shape], precision,
                                                      ckpt, ["--ids", os.path.join(tmp, "ids.txt"),
                                                             "--pad", policy, "--bucket-window",
                                                             str(a.window)])
                            row[policy] = (rate, rss)
                        print(key, row, file=sys.stderr, flush=True)
                        results.setdefault(key, []).append(row)
        load_after = " ".join(open("/proc/loadavg").read().split()[:3])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = statistics.median
    out = ["| shape | precision | gradient checkpointing | Sift bucketed examples/s "
           "| Sift unbucketed | PyTorch pad to longest | PyTorch pad to 128 | PyTorch bucketed "
           "| Sift bucketed / PyTorch longest | Sift bucketed / PyTorch bucketed "
           "| peak RSS: Sift bucketed, unbucketed | PyTorch longest, 128, bucketed |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (shape, precision, ckpt), rows in results.items():
        rate = {p: med([r[p][0] for r in rows]) for p in SST2_SIFT + SST2_TORCH}
        rss = {p: med([r[p][1] for r in rows]) for p in SST2_SIFT + SST2_TORCH}
        vs_longest = med([r["bucketed"][0] / r["longest"][0] for r in rows])
        vs_bucket = med([r["bucketed"][0] / r["bucket"][0] for r in rows])
        out.append(f"| BERT-{shape.capitalize()} {'x'.join(map(str, SHAPES[shape][:2]))} "
                   f"| {precision} | {'on' if ckpt else 'off'} | {rate['bucketed']:.1f} "
                   f"| {rate['unbucketed']:.1f} | {rate['longest']:.1f} | {rate['max']:.1f} "
                   f"| {rate['bucket']:.1f} | **{vs_longest:.2f}x** | {vs_bucket:.2f}x "
                   f"| {rss['bucketed']:.0f}, {rss['unbucketed']:.0f} MB "
                   f"| {rss['longest']:.0f}, {rss['max']:.0f}, {rss['bucket']:.0f} MB |")
    done = {}
    for (shape, _, _), rows in results.items():
        done[shape] = len(rows)
    rounds = ", ".join(f"{n} ({shape.capitalize()})" for shape, n in done.items())
    mean_ids = statistics.mean(len(x) for x in ids)
    share = {}
    for p in ("longest", "bucket", "max"):
        cells = []
        for shape in done:
            padded, real = padding(ids, p, a.window, a.window, steps[shape])
            cells.append(f"{100 * (1 - real / padded):.0f}%")
        share[p] = " / ".join(dict.fromkeys(cells)) if len(set(cells)) == 1 else " / ".join(
            f"{c} ({shape.capitalize()})" for c, shape in zip(cells, done))
    out.append("")
    out.append(f"- Data: SST-2's {len(ids):,} training sentences (data/sst2/stsa.binary.train) "
               f"in file order, {mean_ids:.1f} WordPiece ids each on average (longest "
               f"{max(len(x) for x in ids)}; vocabulary: `sift tokenizer train`'s {learnt:,} "
               f"tokens of these sentences, then [unusedN] to 30,522); PyTorch reads the ids "
               f"`sift tokenizer encode` gives, checked equal to the Python WordPiece "
               f"reference's. Share of padding in the timed batches' ids: {share['longest']} "
               f"padded to each batch's longest (Sift unbucketed, PyTorch longest), "
               f"{share['bucket']} bucketed, {share['max']} padded to 128.")
    out.append(f"- Where the gain comes from: less padding, not faster kernels. Both sides run "
               f"the same LibTorch kernels; bucketing (data.bucket_window {a.window}) cuts the "
               f"ids each step computes. Sift bucketed / PyTorch bucketed is the kernel-level "
               f"ratio (the 128-token table above: parity).")
    out.append(f"- Conditions: batch {BATCH}, data.max_length {LENGTH}, AdamW (lr 5e-5, weight "
               f"decay 0.01 but biases and LayerNorm); {a.window} warm-up steps (one bucket "
               f"window) untimed on both sides, then {a.steps_mini} (Mini) and {a.steps_small} "
               f"(Small) timed steps, whole windows (Sift: metrics.csv's windows after the "
               f"first; PyTorch: its clock); one LibTorch thread each (Sift: one data worker "
               f"more); peak RSS by /usr/bin/time -v; median of {rounds} interleaved "
               f"round(s) of the five runs, the side that starts alternating (each ratio: "
               f"median of each round's); load average {load_before} "
               f"before, {load_after} after, shared 2-core machine.")
    table = "\n".join(out)
    print(table)
    if not a.no_write:
        sys.path.insert(0, "bench")
        from results_section import write_section
        write_section("finetune-hf-sst2",
                      "Fine-tuning an imported BERT on SST-2 sentences: Sift vs PyTorch eager (#40)",
                      table)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps-mini", type=int, default=8)
    ap.add_argument("--steps-small", type=int, default=4)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--sst2", action="store_true")
    ap.add_argument("--window", type=int, default=8)
    ap.add_argument("--shapes", default="mini,small")
    ap.add_argument("--minutes", type=float, default=0)
    a = ap.parse_args()
    if a.sst2:
        return sst2_main(a)
    load_before = " ".join(open("/proc/loadavg").read().split()[:3])
    tmp = tempfile.mkdtemp(prefix="sift_finetune_bench_")
    try:
        steps = {"mini": a.steps_mini, "small": a.steps_small}
        if any(s % a.warmup for s in steps.values()):
            sys.exit("finetune_hf.py: --steps-mini and --steps-small must be multiples of --warmup")
        texts(os.path.join(tmp, "train.txt"), BATCH * (a.warmup + max(steps.values())), 30522, 1)
        for shape, (layers, hidden, heads) in SHAPES.items():
            folder = os.path.join(tmp, f"hf_{shape}")
            subprocess.run([PY, "bench/make_hf_bert.py", folder, "--layers", str(layers),
                            "--hidden", str(hidden), "--heads", str(heads)], check=True)
            subprocess.run([SIFT, "import", "hf", folder, "--labels", "neg,pos", "--out",
                            os.path.join(tmp, f"base_{shape}")], check=True, capture_output=True)
        results = {}
        for _ in range(a.rounds):
            for shape in SHAPES:
                for precision in ("fp32", "bf16"):
                    for ckpt in (False, True):
                        key = (shape, precision, ckpt)
                        name = f"{shape}_{precision}_{int(ckpt)}"
                        s = sift_run(tmp, shape, a.warmup, steps[shape], precision, ckpt, name)
                        t = torch_run(shape, a.warmup, steps[shape], precision, ckpt)
                        print(key, "sift", s, "torch", t, file=sys.stderr, flush=True)
                        results.setdefault(key, []).append((s, t))
        lat = latency(tmp, os.path.join(tmp, "runs", "mini_fp32_0"))
        load_after = " ".join(open("/proc/loadavg").read().split()[:3])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = lambda xs: statistics.median(xs)  # noqa: E731
    out = ["| shape | precision | gradient checkpointing | Sift examples/s (steady) "
           "| PyTorch eager examples/s (steady) | Sift / PyTorch | Sift whole run examples/s "
           "| Sift peak RSS | PyTorch peak RSS |", "|---|---|---|---|---|---|---|---|---|"]
    for (shape, precision, ckpt), rows in results.items():
        se, sr, sw = (med([r[0][i] for r in rows]) for i in range(3))
        te, tr = med([r[1][0] for r in rows]), med([r[1][1] for r in rows])
        ratio = med([r[0][0] / r[1][0] for r in rows])
        out.append(f"| BERT-{shape.capitalize()} {'x'.join(map(str, SHAPES[shape][:2]))} | {precision} "
                   f"| {'on' if ckpt else 'off'} | {se:.2f} | {te:.2f} | {ratio:.2f}x | {sw:.2f} "
                   f"| {sr:.0f} MB | {tr:.0f} MB |")
    out.append("")
    out.append(f"- Conditions: batch {BATCH} texts of {LENGTH} WordPiece tokens, vocabulary 30,522, "
               f"AdamW (lr 5e-5, weight decay 0.01 but biases and LayerNorm); {a.warmup} warm-up "
               f"steps untimed on both sides, then {a.steps_mini} (Mini) and {a.steps_small} "
               f"(Small) timed steps (Sift: metrics.csv's windows of {a.warmup} steps after the "
               f"first, which adds a gradient-norm pass each window; PyTorch: its clock); "
               f"one LibTorch thread each (Sift: one data worker more), median of {a.rounds} "
               f"interleaved round(s) (the ratio: median of each round's); load average "
               f"{load_before} before, {load_after} after, on a shared 2-core machine. "
               f"Sift's whole-run rate (report.json) also counts the warm-up and writing "
               f"last.ckpt; PyTorch's batches are ids already.")
    out.append("")
    out.append("| export (fine-tuned BERT-Mini) | file | C++ batch 1 p50 | C++ batch 64 texts/s "
               "| Python batch 1 p50 | Python batch 64 texts/s |")
    out.append("|---|---|---|---|---|---|")
    for variant, (mb, cpp, py) in lat.items():
        out.append(f"| {variant} | {mb:.1f} MB | {cpp['p50_us'] / 1000:.1f} ms "
                   f"| {cpp['batch64_texts_per_s']:.0f} | {py['p50_us'] / 1000:.1f} ms "
                   f"| {py['batch64_texts_per_s']:.0f} |")
    out.append("")
    out.append("- Latency: 128-token texts, batch 1 over 200 texts (one call each), batch 64 over "
               "8 batches, inputs encoded beforehand, one thread.")
    table = "\n".join(out)
    print(table)
    if not a.no_write:
        sys.path.insert(0, "bench")
        from results_section import write_section
        write_section("finetune-hf", "Fine-tuning an imported BERT: Sift vs PyTorch eager (#40)",
                      table)


if __name__ == "__main__":
    main()

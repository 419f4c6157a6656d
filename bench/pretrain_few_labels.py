#!/usr/bin/env python3
"""Few labels with and without `sift pretrain` (issue #43), on AG News.

    python3 bench/pretrain_few_labels.py [--sift build/sift] [--labels 1000]
        [--pretrain-minutes 10] [--seeds 1,2,3]

AG News as tools/get_data.sh fetches it (data/ag_news: the 10,000-record training sample
and the 7,600-record test set). A fixed, balanced sample of --labels training records is
labelled; another balanced 1,000 is the validation split every run chooses its best
weights on; 500 more are held out of pretraining for its masked-token accuracy curve. The
test set is read only by the final evaluation. Rows:

  (a) the fastText model (its defaults), on the labelled sample;
  (b) TextCNN from scratch (its defaults: Adam 1e-3), on the labelled sample;
  (c) a BERT-family encoder pretrained by `sift pretrain` on every training text but the
      500 held out (labels dropped) for at most --pretrain-minutes, with a WordPiece
      vocabulary from `sift tokenizer train`, then fine-tuned on the labelled sample
      through train.init_from.

Each row is trained with every seed of --seeds (fine-tuning starts from the one
pretrained encoder); the table gives the mean test accuracy and the spread. Pretraining
throughput is the median tokens/s of its metrics.csv rows; the curve is its validations'
masked-token accuracy against the tokens seen (steps x texts per step x mean ids per
text, from the same rows). Writes bench/results/pretrain.json and bench/RESULTS.md.
"""
import argparse
import csv
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import results_section  # noqa: E402

ENCODER = {"model.type": "bert", "model.dim": 128, "model.layers": 2, "model.heads": 2,
           "model.ff_dim": 512, "model.max_positions": 128, "model.dropout": 0.1,
           "tokenizer.type": "wordpiece", "data.max_length": 128}


def parse_args(doc):
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sift", default=os.path.join(ROOT, "build", "sift"))
    p.add_argument("--data", default=os.path.join(ROOT, "data"))
    p.add_argument("--labels", type=int, default=1000)
    p.add_argument("--pretrain-minutes", type=float, default=10.0)
    p.add_argument("--pretrain-steps", type=int, default=0, help="0: until the minutes end")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--work", default="", help="keep the runs here (default: a temporary folder)")
    return p.parse_args()


def ag_records(data):
    """(text, label) of the training sample and of the test set."""
    train = []
    with open(f"{data}/ag_news/train_sample_10k.tsv", encoding="utf-8") as f:
        for line in f:
            text, _, label = line.rstrip("\n").rpartition("\t")
            train.append((text, label.replace(" ", "_")))
    names = [c.strip() for c in open(f"{data}/ag_news/classes.txt", encoding="utf-8") if c.strip()]
    test = []
    with open(f"{data}/ag_news/test.csv", encoding="utf-8", newline="") as f:
        for row in csv.reader(f):
            text = " ".join(row[1:]).replace("\\n", " ").replace("\n", " ")
            test.append((text, names[int(row[0]) - 1].replace(" ", "_")))
    return train, test


def split(train, labels, seed=0):
    """Balanced labelled and validation samples, a held-out set, and the rest (unlabelled)."""
    order = list(range(len(train)))
    random.Random(seed).shuffle(order)
    classes = sorted({label for _, label in train})
    per = {"labelled": labels // len(classes), "valid": 1000 // len(classes)}
    taken = {name: {c: [] for c in classes} for name in per}
    held_out, rest = [], []
    for i in order:
        label = train[i][1]
        for name in ("labelled", "valid"):
            if len(taken[name][label]) < per[name]:
                taken[name][label].append(i)
                break
        else:
            (held_out if len(held_out) < 500 else rest).append(i)
    pick = lambda name: [train[i] for c in classes for i in taken[name][c]]
    # Pretraining reads every training text but the held-out ones, the labelled ones too.
    unlabelled = [train[i][0] for i in order if i not in set(held_out)]
    return pick("labelled"), pick("valid"), [train[i][0] for i in held_out], unlabelled


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line.replace("\n", " ") + "\n")


def sets(overrides):
    out = []
    for key, value in overrides.items():
        out += ["--set", f"{key}={value}"]
    return out


def sift(args, cmd, cwd):
    start = time.monotonic()
    done = subprocess.run([args.sift] + cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"sift {' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return done.stdout, time.monotonic() - start


def classify(args, work, name, seed, overrides):
    """Test accuracy of one classifier run (best weights on the validation split)."""
    base = {"run.dir": "runs", "run.name": f"{name}-{seed}", "run.seed": seed, "run.overwrite": "true",
            "data.train.path": "labelled.tsv", "data.valid.path": "valid.tsv",
            "data.test.path": "test.tsv", "data.format": "tsv", "data.text": "0",
            "data.label": "1"}
    base.update(overrides)
    out, seconds = sift(args, ["train", "--quiet", "--json"] + sets(base), work)
    return json.loads(out)["splits"]["test"]["accuracy"], seconds


def pretrain(args, work):
    """The pretraining run: its folder, seconds, median tokens/s and its accuracy curve."""
    sift(args, ["tokenizer", "train"] + sets({
        "pretrain.files": "[unlabelled.txt]", "tokenizer.type": "wordpiece",
        "tokenizer.model": "vocab.txt", "tokenizer.vocab_size": 8000,
        "tokenizer.sample_lines": 20000}), work)
    config = dict(ENCODER)
    config.update({"run.dir": "runs", "run.name": "pretrained", "run.seed": 1,
                   "run.overwrite": "true", "pretrain.files": "[unlabelled.txt]",
                   "pretrain.valid": "[held_out.txt]", "pretrain.max_tokens": 128,
                   "tokenizer.model": "vocab.txt", "train.batch_size": 32,
                   "train.epochs": 100, "train.eval_every": 100, "train.log_every": 20,
                   "train.optimizer.type": "adamw", "train.optimizer.lr": 0.001,
                   "train.scheduler.type": "warmup_linear", "train.scheduler.warmup_ratio": 0.06,
                   "train.max_steps": args.pretrain_steps or 100000})
    cmd = ["pretrain", "--quiet", "--json"] + sets(config)
    start = time.monotonic()
    proc = subprocess.Popen([args.sift] + cmd, cwd=work, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=args.pretrain_minutes * 60 if not args.pretrain_steps else None)
    except subprocess.TimeoutExpired:
        proc.terminate()  # SIGTERM: the run saves last.ckpt and best.ckpt where it stands
        proc.wait()
    seconds = time.monotonic() - start
    run = f"{work}/runs/pretrained"
    rows = list(csv.DictReader(open(f"{run}/metrics.csv", encoding="utf-8")))
    train_rows = [r for r in rows if r.get("tokens_per_s") not in ("", None, "nan")]
    tokens_per_s = statistics.median(float(r["tokens_per_s"]) for r in train_rows)
    ids_per_text = statistics.median(float(r["tokens_per_s"]) / float(r["examples_per_s"])
                                     for r in train_rows)
    curve = [(int(r["step"]), int(int(r["step"]) * 32 * ids_per_text),
              float(r["valid_masked_accuracy"]))
             for r in rows if r.get("valid_masked_accuracy") not in ("", None)]
    return run, seconds, tokens_per_s, curve


def mean_sd(values):
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.mean(values):.4f} ± {sd:.4f}"


def main():
    args = parse_args(__doc__)
    args.sift = os.path.abspath(args.sift)
    seeds = [int(s) for s in args.seeds.split(",")]
    load_before = results_section.loadavg()
    train, test = ag_records(args.data)
    labelled, valid, held_out, unlabelled = split(train, args.labels)
    work = args.work or tempfile.mkdtemp(prefix="pretrain-bench-")
    os.makedirs(work, exist_ok=True)
    write_lines(f"{work}/labelled.tsv", [f"{t}\t{l}" for t, l in labelled])
    write_lines(f"{work}/valid.tsv", [f"{t}\t{l}" for t, l in valid])
    write_lines(f"{work}/test.tsv", [f"{t}\t{l}" for t, l in test])
    write_lines(f"{work}/held_out.txt", held_out)
    write_lines(f"{work}/unlabelled.txt", unlabelled)

    results = {}
    results["(a) fastText model"] = [classify(args, work, "fasttext", s, {}) for s in seeds]
    print("fasttext", results["(a) fastText model"], flush=True)
    results["(b) TextCNN from scratch"] = [
        classify(args, work, "textcnn", s, {"model.type": "textcnn", "train.epochs": 10})
        for s in seeds]
    print("textcnn", results["(b) TextCNN from scratch"], flush=True)
    run, pre_seconds, tokens_per_s, curve = pretrain(args, work)
    print("pretrained", pre_seconds, tokens_per_s, curve[-1:], flush=True)
    fine = dict(ENCODER)
    fine.update({"tokenizer.model": "vocab.txt", "train.init_from": run, "train.epochs": 6,
                 "train.batch_size": 32, "train.optimizer.lr": 0.0003})
    results["(c) sift pretrain + fine-tune"] = [
        classify(args, work, "finetuned", s, fine) for s in seeds]
    print("fine-tuned", results["(c) sift pretrain + fine-tune"], flush=True)

    rows = [[name, mean_sd([a for a, _ in runs]), round(statistics.mean(s for _, s in runs), 1)]
            for name, runs in results.items()]
    best_ab = max(statistics.mean(a for a, _ in results[k]) for k in list(results)[:2])
    gain = statistics.mean(a for a, _ in results["(c) sift pretrain + fine-tune"]) - best_ab
    page = {
        "family": "accuracy", "order": 80,
        "title": f"Few labels: AG News, {args.labels} labelled examples, with `sift pretrain`",
        "command": f"`python3 bench/pretrain_few_labels.py --labels {args.labels} "
                   f"--pretrain-minutes {args.pretrain_minutes:g} --seeds {args.seeds}`",
        "columns": ["model", f"test accuracy (mean ± sd, seeds {args.seeds})", "train s (mean)"],
        "rows": rows,
        "notes": [
            f"(c) - best of (a), (b): {gain * 100:+.1f} points (target of issue #43: +3).",
            f"Pretraining: {pre_seconds / 60:.1f} min wall, {curve[-1][0] if curve else 0} "
            f"steps of 32 packed texts of 128 ids, median {tokens_per_s:.0f} tokens/s, on "
            f"{len(unlabelled)} AG News training texts (the 10,000-record sample less 500 held "
            "out; not the 120,000 of the issue). Encoder: 2 layers, dim 128, 2 heads, ff 512; "
            "WordPiece vocabulary of 8,000 from `sift tokenizer train`.",
            "Masked-token accuracy on the 500 held-out texts against tokens seen: " +
            ", ".join(f"{tokens / 1e6:.2f}M: {acc:.3f}" for _, tokens, acc in curve),
            "Settings are fixed in the script (not tuned); best weights chosen on the "
            "validation split, the test set read once per run.",
        ],
    }
    results_section.write_page("pretrain", page, load_before)


if __name__ == "__main__":
    main()

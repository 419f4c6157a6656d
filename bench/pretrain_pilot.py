#!/usr/bin/env python3
"""The validation-only pilot behind bench/pretrain_few_labels.py's fine-tuning recipe (#43).

    python3 bench/pretrain_pilot.py [--set ag_news] [--pretrain-steps 1500]
        [--pretrain-minutes 4] [--pretrain-lr 0.002] [--skip-pretrain] [--work DIR]
        --variants '[["NAME", INIT_FROM_PRETRAINED, {"KEY": VALUE, ...}], ...]'

The same splits, vocabulary and pretraining as pretrain_few_labels.py (its functions), then
one fine-tuning run per variant with seed 1: the encoder pretrained here (true) or the same
encoder shape from random initialisation (false), with the base recipe (6 epochs of 32
texts, AdamW at 0.001, warmup then linear decay) and the variant's overrides. Every figure
it prints is a VALIDATION accuracy: the test file it writes for `sift train` is the
validation split again, so no choice made from it has seen a test set.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pretrain_few_labels as bench  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sift", default=os.path.join(bench.ROOT, "build", "sift"))
    p.add_argument("--data", default=os.path.join(bench.ROOT, "data"))
    p.add_argument("--work", default="/tmp/pretrain-pilot")
    p.add_argument("--set", default="ag_news", choices=sorted(bench.SETS))
    p.add_argument("--pretrain-steps", type=int, default=1500)
    p.add_argument("--pretrain-minutes", type=float, default=4.0)
    p.add_argument("--pretrain-lr", type=float, default=0.002)
    p.add_argument("--skip-pretrain", action="store_true", help="reuse WORK's pretrained run")
    p.add_argument("--variants", required=True)
    a = p.parse_args()
    args = argparse.Namespace(sift=os.path.abspath(a.sift), data=os.path.abspath(a.data),
                              pretrain_minutes=a.pretrain_minutes,
                              pretrain_steps=a.pretrain_steps, pretrain_lr=a.pretrain_lr,
                              warmup=0.06, pre_norm=True, work=a.work)
    labelled, valid, _test, more = bench.SETS[a.set](args.data, 1000)
    work = os.path.join(a.work, a.set)
    os.makedirs(work, exist_ok=True)
    clean = bench.clean
    bench.write_lines(f"{work}/labelled.tsv", [f"{clean(t)}\t{l}" for t, l in labelled])
    bench.write_lines(f"{work}/valid.tsv", [f"{clean(t)}\t{l}" for t, l in valid])
    bench.write_lines(f"{work}/test.tsv", [f"{clean(t)}\t{l}" for t, l in valid])  # valid only
    bench.write_lines(f"{work}/held_out.txt", [clean(t) for t, _ in valid])
    bench.write_lines(f"{work}/unlabelled.txt",
                      [clean(t) for t, _ in labelled] + [clean(t) for t in more])
    if not a.skip_pretrain:
        _run, seconds, tokens_per_s, curve, steps = bench.pretrain(
            args, work, bench.PRETRAIN_BATCH[a.set])
        print(f"pretrained {steps} steps in {seconds:.0f} s, {tokens_per_s:.0f} tokens/s; "
              f"valid masked-token accuracy: {curve}", flush=True)
    for name, pretrained, overrides in json.loads(a.variants):
        fine = bench.encoder(args)
        fine.update({"tokenizer.model": "vocab.txt", "train.batch_size": bench.BATCH,
                     "train.epochs": 6, "train.optimizer.lr": 0.001})
        if pretrained:
            fine["train.init_from"] = f"{work}/runs/pretrained"
        fine.update(overrides)
        valid_acc, _, seconds = bench.classify(args, work, "pilot-" + name, 1, fine)
        print(f"{name}: pretrained={pretrained} {overrides} valid accuracy {valid_acc:.4f} "
              f"({seconds:.0f} s)", flush=True)


if __name__ == "__main__":
    main()

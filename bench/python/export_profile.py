#!/usr/bin/python3
"""Where an exported model's inference time goes, op by op (PyTorch's profiler over
torch.jit.load through examples/classify.py): the self CPU time of each op over N calls at
one batch size, after a first pass over the same inputs (oneDNN's primitive caches warm).
Used for the "where the time goes" figures of bench/RESULTS.md (export precisions).

    /usr/bin/python3 bench/python/export_profile.py FILE.pt TEXTS [--batch B] [--calls N]
        [--threads N] [--engine E] [--rows R]

Run it with the allocator settings sift uses (GLIBC_TUNABLES, see RESULTS.md "Why the
earlier C++ batch-64 column was low"), or large batches measure page faults.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from classify import Classifier  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("texts")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--engine", choices=torch.backends.quantized.supported_engines)
    parser.add_argument("--rows", type=int, default=15, help="ops listed")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.engine:
        torch.backends.quantized.engine = args.engine
    model = Classifier(args.model)
    with open(args.texts, "rb") as f:
        texts = [line.rstrip(b"\n") for line in f]
    inputs = [model.inputs(texts[i:i + args.batch])
              for i in range(0, args.batch * args.calls, args.batch)]
    forward = model.module.forward
    with torch.no_grad():
        for x in inputs:
            forward(*x)
        with torch.autograd.profiler.profile() as prof:
            for x in inputs:
                forward(*x)
    averages = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in averages)
    print("%s, batch %d: %.1f us a call over %d calls" %
          (os.path.basename(args.model), args.batch, total / len(inputs), len(inputs)))
    for e in sorted(averages, key=lambda e: -e.self_cpu_time_total)[:args.rows]:
        print("  %-28s %9.1f us a call  %5.1f%%" %
              (e.key, e.self_cpu_time_total / len(inputs), 100.0 * e.self_cpu_time_total / total))


if __name__ == "__main__":
    main()

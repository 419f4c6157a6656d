#!/usr/bin/python3
"""Inference speed of one exported model loaded in Python (torch.jit.load through
examples/classify.py): batch-1 latency p50/p99 over one call per text and texts/s at
batch 64, inputs already encoded. The twin of build/sift-latency-bench (C++).

    /usr/bin/python3 bench/python/export_latency.py FILE.pt TEXTS [--threads N]
        [--engine E] [--single N] [--batches N]

Prints one JSON line: {"p50_us", "p99_us", "batch64_texts_per_s", "engine"}.
"""
import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from classify import Classifier  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("texts")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--engine", choices=torch.backends.quantized.supported_engines)
    parser.add_argument("--single", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=40)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.engine:  # before loading: int8 weights are packed for it at load
        torch.backends.quantized.engine = args.engine
    model = Classifier(args.model)
    with open(args.texts, "rb") as f:
        texts = [line.rstrip(b"\n") for line in f]
    single = [model.inputs([t]) for t in texts[:args.single]]
    batched = [model.inputs(texts[i:i + 64])
               for i in range(0, min(len(texts), 64 * args.batches) - 63, 64)]
    forward = model.module.forward
    with torch.no_grad():
        for i in range(5):  # the TorchScript executor profiles its first calls
            forward(*single[i % len(single)])
            forward(*batched[i % len(batched)])
        us = []
        for inputs in single:
            start = time.perf_counter()
            forward(*inputs)
            us.append((time.perf_counter() - start) * 1e6)
        us.sort()
        rates = []
        for _ in range(3):
            start = time.perf_counter()
            for inputs in batched:
                forward(*inputs)
            rates.append(len(batched) * 64 / (time.perf_counter() - start))
    print(json.dumps({"p50_us": us[len(us) // 2],
                      "p99_us": us[min(len(us) - 1, len(us) * 99 // 100)],
                      "batch64_texts_per_s": max(rates),  # the least disturbed pass
                      "engine": torch.backends.quantized.engine}))


if __name__ == "__main__":
    main()

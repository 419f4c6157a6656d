#!/usr/bin/python3
"""What one int8 Linear call costs under LibTorch 1.13's oneDNN engine, and whether its
outputs hold, for the choices in models/script_writer.cc (ScriptWriter::linear):

1. Time per call (us, best of 3 passes, one thread) of fp32 `linear`, the plain
   `quantized::linear_dynamic` (every input a new scale, as in real use), and the same
   kernel on the input's range rounded up to a quarter octave and given as one extra row
   ("anchored", what exports do for inputs of at most 2^17 values).
2. Mixed calls (random shapes, ranges and one-sided inputs, some plain) on one packed layer:
   how many come back more than 5% off fp32 with the anchored range symmetric
   ([-top, top], what exports do) and with its two ends rounded apart.

    /usr/bin/python3 bench/python/int8_linear_calls.py [--calls N]
"""
import argparse
import math
import random
import time

import torch


def packed(k, n):
    w = torch.randn(n, k) / math.sqrt(k)
    b = torch.randn(n) * 0.1
    q = torch.quantize_per_channel(w, w.abs().amax(1) / 127, torch.zeros(n, dtype=torch.long), 0,
                                   torch.qint8)
    return w, b, torch.ops.quantized.linear_prepack(q, b)


def grid(v):  # up to one of four steps an octave
    return torch.exp2(torch.ceil(torch.log2(v.clamp_min(1e-30)) * 4) * 0.25)


def anchored(x, p, symmetric=True):
    low, high = torch.aminmax(x)
    anchor = x.new_zeros([1, x.size(1)])
    if symmetric:
        top = grid(torch.maximum(high, -low))
        anchor[0, 0], anchor[0, 1] = top, -top
    else:
        anchor[0, 0], anchor[0, 1] = grid(high), -grid(-low)
    return torch.ops.quantized.linear_dynamic(torch.cat([x, anchor]), p, False)[:-1]


def per_call(fn, xs):
    best = float("inf")
    for r in range(3):
        fresh = [x * (1 + 0.001 * r + 1e-6 * i) for i, x in enumerate(xs)]  # new scales
        start = time.perf_counter()
        for x in fresh:
            fn(x)
        best = min(best, (time.perf_counter() - start) / len(xs) * 1e6)
    return best


def timings():
    print("| rows x in x out | fp32 us | int8 plain us | int8 anchored us |")
    print("|---|---|---|---|")
    for rows, k, n, count in [(40, 128, 384, 200), (40, 512, 2048, 100), (2560, 128, 384, 30),
                              (2560, 512, 2048, 10)]:
        w, b, p = packed(k, n)
        xs = [torch.randn(rows, k) * (0.5 + i % 7) for i in range(count)]
        print("| %d x %d x %d | %.0f | %.0f | %.0f |" % (
            rows, k, n, per_call(lambda x: torch.nn.functional.linear(x, w, b), xs),
            per_call(lambda x: torch.ops.quantized.linear_dynamic(x, p, False), xs),
            per_call(lambda x: anchored(x, p), xs)))


def mixed(calls, symmetric):
    rng = random.Random(2)
    torch.manual_seed(2)
    w, b, p = packed(256, 128)
    bad = 0
    for _ in range(calls):
        rows = rng.choice([1, 2, 5, 17, 40, 64, 100, 128, 600])
        x = torch.randn(rows, 256) * rng.choice([0.5, 1, 3, 7])
        if rng.random() < 0.3:
            x = torch.nn.functional.gelu(x)
        expected = torch.nn.functional.linear(x, w, b)
        if rows >= 600 or rng.random() < 0.3:
            y = torch.ops.quantized.linear_dynamic(x, p, False)
        else:
            y = anchored(x, p, symmetric)
        bad += float((y - expected).abs().max() / expected.abs().max()) > 0.05
    return bad


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=4000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.backends.quantized.engine = "onednn"
    timings()
    print()
    for symmetric in (True, False):
        print("mixed calls, %s range: %d of %d more than 5%% off fp32" % (
            "symmetric" if symmetric else "ends rounded apart", mixed(args.calls, symmetric),
            args.calls))


if __name__ == "__main__":
    main()

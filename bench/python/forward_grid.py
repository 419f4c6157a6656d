"""The forward time of a `sift export` file by batch size and length, one thread: where
sift serve's --run-cost-tokens default comes from (a forward's fixed cost over its cost per
padded token; docs/serving.md "Dynamic batching").

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/python/forward_grid.py model.pt

(OpenBLAS keeps its own threads: without the variable, larger products run on two.) Prints
microseconds per forward, then per padded token, for batches of 1 to 32 texts of 8 to 64
tokens; the best of 3 passes after a first pass over every shape (TorchScript's profiling
executor optimises again for each of the first few shapes).
"""
import sys
import time

import torch

BATCHES = [1, 2, 4, 8, 16, 32]
LENGTHS = [8, 16, 24, 32, 48, 64]


def main():
    torch.set_num_threads(1)
    model = torch.jit.load(sys.argv[1], map_location="cpu")
    us = {}
    with torch.no_grad():
        for timed in (False, True):
            for b in BATCHES:
                for length in LENGTHS:
                    ids = torch.randint(5, 1000, (b, length))
                    lengths = torch.full((b,), length)
                    calls = max(3, 200 * 16 // (b * length))
                    best = float("inf")
                    for _ in range(3 if timed else 1):
                        start = time.perf_counter()
                        for _ in range(calls):
                            model.forward(ids, lengths)
                        best = min(best, (time.perf_counter() - start) / calls * 1e6)
                    us[(b, length)] = best
    print("batch \\ tokens " + "".join(f"{n:>9}" for n in LENGTHS))
    for b in BATCHES:
        print(f"{b:>14} " + "".join(f"{us[(b, n)]:9.0f}" for n in LENGTHS) + "  us a forward")
    for b in BATCHES:
        print(f"{b:>14} " + "".join(f"{us[(b, n)] / (b * n):9.2f}" for n in LENGTHS) +
              "  us a padded token")


if __name__ == "__main__":
    main()

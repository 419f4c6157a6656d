#!/usr/bin/python3
"""The in-memory approach of small Python text-classification libraries, for the
memory-against-data-size comparison of bench/compare: read the whole file into a list,
tokenize every line, build the vocabulary, then a dense documents x words TF-IDF matrix
with numpy (float64, numpy's default), L2-normalised rows, and one pass of softmax
regression over it. Prints one JSON line: status ok / out_of_memory / skipped.

  prlimit --as=17179869184 /usr/bin/python3 bench/python/tfidf_in_memory.py FILE_OR_DIR LINES

Run it under an address-space cap (`prlimit --as`): numpy's allocation of a matrix larger
than the cap then fails at once with MemoryError without touching the machine's RAM.
A matrix that fits under the cap but is larger than $TFIDF_SAFE_GB (default 2) is not
built (status skipped): this machine is shared, and the point is where the approach
fails on the emulated laptop, not to fill this machine's memory.
"""
import glob
import itertools
import json
import os
import re
import resource
import sys
import time

import numpy as np

TOKEN = re.compile(r"\S+")


def report(**fields):
    usage = resource.getrusage(resource.RUSAGE_SELF)
    fields["max_rss_mb"] = usage.ru_maxrss / 1024.0
    print(json.dumps(fields))
    sys.stdout.flush()


def main():
    path, limit = sys.argv[1], int(sys.argv[2])  # the first LINES lines of the files
    safe = float(os.environ.get("TFIDF_SAFE_GB", "2")) * 2**30
    cap = resource.getrlimit(resource.RLIMIT_AS)[0]
    t0 = time.perf_counter()
    files = sorted(glob.glob(os.path.join(path, "*"))) if os.path.isdir(path) else [path]
    lines = []
    for name in files:  # the whole data in one list, as these libraries read it
        with open(name, encoding="utf-8") as f:
            lines.extend(itertools.islice(f, limit - len(lines)))
        if len(lines) >= limit:
            break
    labels, docs = [], []
    for line in lines:
        label, _, text = line.partition(" ")
        labels.append(label)
        docs.append(TOKEN.findall(text.lower()))
    vocab = {}
    for doc in docs:
        for w in doc:
            vocab.setdefault(w, len(vocab))
    classes = {c: i for i, c in enumerate(sorted(set(labels)))}
    n, v = len(docs), len(vocab)
    need = n * v * 8
    base = dict(lines=n, vocabulary=v, matrix_bytes=need,
                cap_bytes=None if cap == resource.RLIM_INFINITY else cap)
    if need > safe and (cap == resource.RLIM_INFINITY or need < cap):
        report(status="skipped", reason="matrix fits under the cap but exceeds TFIDF_SAFE_GB", **base)
        return
    try:
        x = np.zeros((n, v))  # dense documents x words
        for i, doc in enumerate(docs):
            for w in doc:
                x[i, vocab[w]] += 1.0
        df = (x > 0).sum(0)
        x *= np.log((1 + n) / (1 + df)) + 1.0
        x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        y = np.array([classes[c] for c in labels])
        w = np.zeros((v, len(classes)))
        for start in range(0, n, 256):  # one epoch of mini-batch softmax regression
            xb = x[start : start + 256]
            logits = xb @ w
            p = np.exp(logits - logits.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            p[np.arange(len(xb)), y[start : start + 256]] -= 1.0
            w -= 0.5 * xb.T @ p / len(xb)
    except MemoryError as e:
        report(status="out_of_memory", error=str(e)[:200], seconds=time.perf_counter() - t0, **base)
        sys.exit(3)
    report(status="ok", seconds=time.perf_counter() - t0, **base)


if __name__ == "__main__":
    main()

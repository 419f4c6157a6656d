#!/usr/bin/python3
"""Classify lines of text with a model written by `sift export`, in PyTorch alone.

    /usr/bin/python3 examples/classify.py model.pt [FILE] [--top-k K] [--json]

Reads one text per line from FILE (default: stdin) and prints "label<TAB>probability"
per line, as `sift predict` does. The reader is the package's pure-Python part,
sift.torch_export (python/sift/torch_export.py): it needs PyTorch, not Sift's native
module. With the package built, `sift.load(path).predict(texts)` does the same.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import torch  # noqa: E402
from sift.torch_export import Classifier, ExportError  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a file written by `sift export`")
    parser.add_argument("input", nargs="?", default="-", help="text file, one text per line")
    parser.add_argument("--top-k", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--logits", action="store_true",
                        help="print each line's logits as a JSON list (for checks)")
    parser.add_argument("--quantized-engine", choices=torch.backends.quantized.supported_engines,
                        help="int8 exports: the engine their weights are packed for at load")
    args = parser.parse_args()
    if args.quantized_engine:
        torch.backends.quantized.engine = args.quantized_engine
    try:
        model = Classifier(args.model)
    except ExportError as e:
        print(f"classify.py: error: {e}", file=sys.stderr)
        return 1
    stream = sys.stdin.buffer if args.input == "-" else open(args.input, "rb")
    lines = [line.rstrip(b"\n").removesuffix(b"\r") for line in stream]
    if args.logits:
        for start in range(0, len(lines), 256):
            for row in model.logits(lines[start:start + 256]).tolist():
                print(json.dumps(row))
        return 0
    for text, predictions in zip(lines, model.predict(lines, args.top_k)):
        if args.json:  # `sift predict --json`'s keys
            preds = [{"label": label, "score": p} for label, p in predictions]
            print(json.dumps({"text": text.decode("utf-8", "replace"), "predictions": preds}))
        else:
            print("\t".join(f"{label}\t{p:.4f}" for label, p in predictions))
    return 0


if __name__ == "__main__":
    sys.exit(main())

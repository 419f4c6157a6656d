#!/usr/bin/python3
"""The PyTorch eager baseline of bench/finetune_hf.py: fine-tuning the same BERT shape
(post-LayerNorm blocks, exact GELU, [CLS] through a tanh pooler, then the classifier) on
the same batches of WordPiece ids, with AdamW (no decay on biases and LayerNorm), as a
Hugging Face user writes it by hand. Written for this bench; no Hugging Face code.

    /usr/bin/python3 bench/python/finetune_torch.py --layers 4 --hidden 256 --heads 4
        --batch 32 --length 128 --steps 8 [--warmup 2] [--bf16] [--checkpointing] [--threads 1]
        [--ids FILE --pad longest|max|bucket [--bucket-window 8]]

Without --ids, each batch is --length random ids per text. With --ids (a line per text: its
label, then its input ids, as `sift tokenizer encode` gives them), batches are the file's
texts in file order, --batch at a time, padded as --pad says: longest (to the batch's
longest text, as Hugging Face's DataCollatorWithPadding), max (to --length, as run_glue.py's
pad_to_max_length) or bucket (Sift's data.bucket_window: windows of --bucket-window
batches' worth sorted by length, cut into batches taken in a seeded random order).

Prints one JSON line: {"examples_per_s", "seconds", "steps", "loss", "padded_tokens",
"tokens"}; the timing covers the --steps steps after --warmup untimed ones
(bench/finetune_hf.py times sift's the same way); padded_tokens and tokens count the timed
batches' ids with and without padding.
"""
import argparse
import json
import math
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as checkpoint


class Layer(nn.Module):
    def __init__(self, hidden, heads, inter, dropout):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.norm1 = nn.LayerNorm(hidden, eps=1e-12)
        self.ff_in = nn.Linear(hidden, inter)
        self.ff_out = nn.Linear(inter, hidden)
        self.norm2 = nn.LayerNorm(hidden, eps=1e-12)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, bias):
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads) + bias
        attended = (self.drop(scores.softmax(-1)) @ v).transpose(1, 2).reshape(b, n, d)
        h = self.norm1(x + self.drop(self.out(attended)))
        return self.norm2(h + self.drop(self.ff_out(F.gelu(self.ff_in(h)))))


class Bert(nn.Module):
    def __init__(self, vocab, hidden, layers, heads, positions, classes, dropout=0.1):
        super().__init__()
        self.words = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(positions, hidden)
        self.types = nn.Embedding(2, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.drop = nn.Dropout(dropout)
        self.layers = nn.ModuleList(Layer(hidden, heads, 4 * hidden, dropout) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)
        self.classifier = nn.Linear(hidden, classes)
        self.checkpointing = False

    def forward(self, ids, lengths):
        n = ids.shape[1]
        x = self.words(ids) + self.positions.weight[:n] + self.types.weight[0]
        x = self.drop(self.norm(x))
        valid = torch.arange(n).unsqueeze(0) < lengths.unsqueeze(1)
        bias = torch.zeros(valid.shape, dtype=x.dtype).masked_fill(~valid, -1e9)[:, None, None, :]
        for layer in self.layers:
            if self.checkpointing and self.training:
                x = checkpoint.checkpoint(layer, x, bias, use_reentrant=False)
            else:
                x = layer(x, bias)
        return self.classifier(self.drop(torch.tanh(self.pooler(x[:, 0]))))


def real_batches(path, batch, length, pad, window, count):
    """`count` (ids, lengths, labels) batches of the texts in `path`, padded as `pad` says."""
    texts = []
    for line in open(path):
        label, *ids = map(int, line.split())
        texts.append((ids[:length], label))
    if pad == "bucket":
        order, rng = [], random.Random(1)
        for w in range(0, len(texts), batch * window):
            sorted_window = sorted(texts[w:w + batch * window], key=lambda t: len(t[0]))
            runs = [sorted_window[i:i + batch] for i in range(0, len(sorted_window), batch)]
            rng.shuffle(runs)
            order += [t for run in runs for t in run]
        texts = order
    out = []
    for b in range(count):
        chunk = [texts[(b * batch + i) % len(texts)] for i in range(batch)]
        lengths = torch.tensor([len(ids) for ids, _ in chunk])
        width = length if pad == "max" else int(lengths.max())
        ids = torch.zeros(batch, width, dtype=torch.int64)
        for i, (row, _) in enumerate(chunk):
            ids[i, :len(row)] = torch.tensor(row)
        out.append((ids, torch.tensor([label for _, label in chunk]), lengths))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=30522)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--length", type=int, default=128)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=0)
    ap.add_argument("--bf16", action="store_true")
    ap.add_argument("--checkpointing", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ids")
    ap.add_argument("--pad", choices=["longest", "max", "bucket"], default="longest")
    ap.add_argument("--bucket-window", type=int, default=8)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = Bert(a.vocab, a.hidden, a.layers, a.heads, 512, 2)
    model.checkpointing = a.checkpointing
    model.train()
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias") or "norm" in n]
    decay = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "norm" in n)]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=5e-5)
    if a.ids:
        batches = real_batches(a.ids, a.batch, a.length, a.pad, a.bucket_window,
                               a.warmup + a.steps)
    else:
        g = torch.Generator().manual_seed(2)
        full = torch.full((a.batch,), a.length, dtype=torch.int64)
        batches = [(torch.randint(5, a.vocab, (a.batch, a.length), generator=g),
                    torch.randint(0, 2, (a.batch,), generator=g), full) for _ in range(4)]
    timed = [batches[s % len(batches)] for s in range(a.warmup, a.warmup + a.steps)]
    start = time.perf_counter()
    for step in range(a.warmup + a.steps):
        if step == a.warmup:
            start = time.perf_counter()
        ids, labels, lengths = batches[step % len(batches)]
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
            logits = model(ids, lengths)
        loss = F.cross_entropy(logits.float(), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    seconds = time.perf_counter() - start
    print(json.dumps({"examples_per_s": a.steps * a.batch / seconds, "seconds": seconds,
                      "steps": a.steps, "loss": loss.item(),
                      "padded_tokens": sum(b[0].numel() for b in timed),
                      "tokens": sum(int(b[2].sum()) for b in timed)}))


if __name__ == "__main__":
    main()

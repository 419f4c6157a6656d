#!/usr/bin/python3
"""The PyTorch-in-Python baseline of bench/compare: the same model, data, batch size,
epochs, optimizer and schedule as `sift train` with configs/ag_news.yaml (fastText
model) or configs/ag_news_transformer.yaml (Transformer), written the way a PyTorch
user would: an IterableDataset streaming the file through a DataLoader, nn modules,
torch.optim. Prints one JSON object (phase timings, examples/s, test accuracy).

  /usr/bin/python3 bench/python/train_torch.py --model fasttext --threads 1
  /usr/bin/python3 bench/python/train_torch.py --model transformer --threads 2 --epochs 1
"""
import argparse
import json
import math
import os
import sys
import time

T0 = time.perf_counter()
import torch  # noqa: E402  (start-up of torch is timed as a phase)
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader  # noqa: E402

T_IMPORT = time.perf_counter()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from text_pipeline import Encoder, Source, StreamingDataset, Vocab, count_words  # noqa: E402

DATA = os.environ.get("DATA", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data"))


class FastText(nn.Module):
    """EmbeddingBag (mean) + Linear, fastText's initialisation, as models/fasttext.cc."""

    def __init__(self, num_ids, dim, classes, sparse):
        super().__init__()
        self.embedding = nn.EmbeddingBag(num_ids, dim, mode="mean", sparse=sparse)
        self.output = nn.Linear(dim, classes)
        with torch.no_grad():
            self.embedding.weight.uniform_(-1.0 / dim, 1.0 / dim)
            self.output.weight.zero_()
            self.output.bias.zero_()

    def forward(self, ids, offsets):
        return self.output(self.embedding(ids, offsets))


def sinusoids(positions, dim):
    pos = torch.arange(positions, dtype=torch.float64).unsqueeze(1)
    rate = torch.exp(torch.arange(0, dim, 2, dtype=torch.float64) * (-math.log(10000.0) / dim))
    table = torch.zeros(positions, dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(pos * rate)
    table[:, 1::2] = torch.cos(pos * rate)[:, : dim // 2]
    return table.float()


class Transformer(nn.Module):
    """Pre-LayerNorm encoder (PyTorch's own TransformerEncoderLayer, norm_first, GELU),
    sinusoidal positions, padding mask, final LayerNorm, mean pooling: models/transformer.cc."""

    def __init__(self, num_ids, dim, layers, heads, ff_dim, max_positions, dropout, classes):
        super().__init__()
        self.dim = dim
        self.embedding = nn.Embedding(num_ids, dim, padding_idx=0)
        with torch.no_grad():
            self.embedding.weight.normal_(0.0, 1.0 / math.sqrt(dim))
            self.embedding.weight[0].zero_()
        self.register_buffer("positions", sinusoids(max_positions, dim))
        self.dropout = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(dim, heads, ff_dim, dropout, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.final_norm = nn.LayerNorm(dim)
        self.output = nn.Linear(dim, classes)

    def forward(self, ids, lengths):
        length = ids.size(1)
        valid = torch.arange(length).unsqueeze(0) < lengths.unsqueeze(1)
        x = self.embedding(ids) * math.sqrt(self.dim) + self.positions[:length].unsqueeze(0)
        x = self.encoder(self.dropout(x), src_key_padding_mask=~valid)
        x = self.final_norm(x)
        w = valid.unsqueeze(2).to(x.dtype)
        pooled = (x * w).sum(1) / lengths.unsqueeze(1).to(x.dtype)
        return self.output(self.dropout(pooled))


def ag_news():
    classes = [l.strip() for l in open(os.path.join(DATA, "ag_news/classes.txt")) if l.strip()]
    train = Source(os.path.join(DATA, "ag_news/train_sample_10k.tsv"), "tsv", [0], 1)
    test = Source(os.path.join(DATA, "ag_news/test.csv"), "csv", [1, 2], 0)
    return classes, train, test


def scheduled_lr(kind, lr, step, total, warmup_ratio):
    """framework/optimization.cc: linear decay to 0, or linear warm-up then linear decay."""
    warmup = int(warmup_ratio * total) if kind == "warmup_linear" else 0
    if step < warmup:
        return lr * (step + 1) / warmup
    return lr - lr * min(1.0, (step - warmup) / max(total - warmup, 1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=["fasttext", "transformer"], required=True)
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (Sift: run.threads)")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--workers", type=int, default=0,
                   help="DataLoader worker processes (Sift's data.workers are threads in one process)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (Sift: train.max_steps)")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    bag = a.model == "fasttext"
    # configs/ag_news.yaml and configs/ag_news_transformer.yaml
    cfg = (dict(batch=16, dim=10, buckets=2000000, lr=0.5, schedule="linear", reduction="sum")
           if bag else
           dict(batch=32, dim=128, layers=2, heads=4, ff_dim=256, max_length=128, lr=5e-4,
                weight_decay=0.01, schedule="warmup_linear", warmup=0.1, clip=1.0,
                reduction="mean", bucket_window=8, dropout=0.1))

    classes, train_src, test_src = ag_news()
    labels = {name: i for i, name in enumerate(classes)}
    test_labels = {str(i + 1): i for i in range(len(classes))}  # test.csv: index from 1
    t = time.perf_counter()
    counts, records = count_words(train_src)
    vocab = Vocab(counts)
    t_vocab = time.perf_counter() - t

    t = time.perf_counter()
    if bag:
        num_ids = len(vocab) + cfg["buckets"]
        model = FastText(num_ids, cfg["dim"], len(classes), sparse=True)
        opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
        enc = Encoder(vocab, labels, bag=True, buckets=cfg["buckets"])
        test_enc = Encoder(vocab, test_labels, bag=True, buckets=cfg["buckets"])
    else:
        model = Transformer(len(vocab), cfg["dim"], cfg["layers"], cfg["heads"], cfg["ff_dim"],
                            cfg["max_length"], cfg["dropout"], len(classes))
        opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"])
        enc = Encoder(vocab, labels, bag=False, max_length=cfg["max_length"])
        test_enc = Encoder(vocab, test_labels, bag=False, max_length=cfg["max_length"])
    t_model = time.perf_counter() - t

    data = StreamingDataset(train_src, enc, cfg["batch"], bucket_window=cfg.get("bucket_window", 0),
                            seed=a.seed)
    loader = DataLoader(data, batch_size=None, num_workers=a.workers,
                        persistent_workers=False, prefetch_factor=8 if a.workers else 2)
    loss_fn = nn.CrossEntropyLoss(reduction=cfg["reduction"])
    total_steps = a.epochs * math.ceil(records / cfg["batch"])
    if a.max_steps > 0:  # framework/trainer.cc: the schedule's horizon is the step limit
        total_steps = min(total_steps, a.max_steps)
    step = examples = 0
    model.train()
    t = time.perf_counter()
    for epoch in range(1, a.epochs + 1):
        data.set_epoch(epoch)
        for x, y_or_len, labels_t in ((b[0], b[1], b[2]) for b in loader):
            if step == total_steps:
                break
            for group in opt.param_groups:
                group["lr"] = scheduled_lr(cfg["schedule"], cfg["lr"], step, total_steps, cfg.get("warmup", 0))
            loss = loss_fn(model(x, y_or_len), labels_t)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.get("clip"):
                nn.utils.clip_grad_norm_(model.parameters(), cfg["clip"])
            opt.step()
            step += 1
            examples += labels_t.numel()
    t_train = time.perf_counter() - t

    t = time.perf_counter()
    model.eval()
    correct = total = 0
    test_data = StreamingDataset(test_src, test_enc, 256, shuffle_buffer=0)
    with torch.inference_mode():
        for x, y_or_len, labels_t in test_data:
            correct += (model(x, y_or_len).argmax(1) == labels_t).sum().item()
            total += labels_t.numel()
    t_eval = time.perf_counter() - t

    print(json.dumps({
        "model": a.model, "threads": a.threads, "workers": a.workers, "epochs": a.epochs,
        "batch_size": cfg["batch"], "records": records, "vocabulary": len(vocab),
        "train": {"steps": step, "examples": examples, "seconds": t_train,
                  "examples_per_second": examples / t_train if t_train > 0 else 0.0},
        "test_accuracy": correct / max(total, 1), "test_records": total,
        "phases": {"import_torch": T_IMPORT - T0, "vocabulary": t_vocab, "model": t_model,
                   "train": t_train, "evaluate": t_eval},
        "torch": torch.__version__,
    }))


if __name__ == "__main__":
    main()

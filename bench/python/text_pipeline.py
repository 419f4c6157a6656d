"""The data side of the PyTorch-in-Python baseline: reading, Sift's word tokenization,
the vocabulary pass, fastText's hashed bigrams, and an IterableDataset that streams
encoded examples through a shuffle buffer (and, for sequences, length buckets), as
`sift train` does. Plain Python + torch 1.13 (Debian's python3-torch).
"""
import csv
import random
import re

import torch
from torch.utils.data import IterableDataset, get_worker_info

PAD, UNK = 0, 1

# Sift's WordTokenizer (datasets/tokenizer.h): lower-case, split on whitespace, and every
# ASCII punctuation character is a token of its own.
_PUNCT = r"!-/:-@\[-`{-~"
_TOKEN = re.compile(r"[^\s%s]+|[%s]" % (_PUNCT, _PUNCT))


def tokenize(text):
    return _TOKEN.findall(text.lower())


def fnv1a(word):
    """Sift's hash_word (datasets/encoder.cc): 32-bit FNV-1a over the UTF-8 bytes."""
    h = 2166136261
    for b in word.encode("utf-8"):
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


class Source:
    """Where the records of one split come from: a file and how to read it."""

    def __init__(self, path, fmt, text_cols, label_col, label_mapping="name", encoding="utf-8"):
        self.path, self.fmt, self.text_cols, self.label_col = path, fmt, text_cols, label_col
        self.label_mapping, self.encoding = label_mapping, encoding

    def records(self, part=0, parts=1):
        """(label string, text) pairs; with parts > 1 every parts-th record from `part`."""
        with open(self.path, encoding=self.encoding, errors="replace", newline="") as f:
            rows = csv.reader(f) if self.fmt == "csv" else (l.rstrip("\r\n").split("\t") for l in f)
            for i, cols in enumerate(rows):
                if i % parts != part or not cols:
                    continue
                yield cols[self.label_col], " ".join(cols[c] for c in self.text_cols)


class Vocab:
    """Word -> (id, FNV hash); ids 0 and 1 are padding and unknown, as in Sift."""

    def __init__(self, counts, min_count=1):
        words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
        self.table = {w: (i + 2, fnv1a(w)) for i, w in enumerate(words)}

    def __len__(self):
        return len(self.table) + 2


def count_words(source):
    counts = {}
    n = 0
    for _, text in source.records():
        for w in tokenize(text):
            counts[w] = counts.get(w, 0) + 1
        n += 1
    return counts, n


class Encoder:
    """Tokens to ids: words plus hashed bigrams for a bag model, in-vocabulary words in
    order (truncated to max_length) for a sequence model."""

    def __init__(self, vocab, labels, bag, buckets=0, max_length=0):
        self.vocab, self.labels, self.bag = vocab.table, labels, bag
        self.base, self.buckets, self.max_length = len(vocab), buckets, max_length

    def __call__(self, label, text):
        tokens = tokenize(text)
        table = self.vocab
        if not self.bag:
            if self.max_length:
                tokens = tokens[: self.max_length]
            return [table.get(t, (UNK, 0))[0] for t in tokens] or [PAD], self.labels[label]
        ids, hashes = [], []
        for t in tokens:
            entry = table.get(t)
            if entry is None:
                hashes.append(fnv1a(t))
            else:
                ids.append(entry[0])
                hashes.append(entry[1])
        base, buckets = self.base, self.buckets
        for a, b in zip(hashes, hashes[1:]):
            ids.append(base + ((a * 116049371 + b) % buckets))
        return ids, self.labels[label]


class StreamingDataset(IterableDataset):
    """Encoded batches from a Source: a shuffle buffer of `shuffle_buffer` records (as
    data.shuffle_buffer), then for sequences windows of `bucket_window` batches sorted by
    length (as data.bucket_window). Each DataLoader worker reads every n-th record."""

    def __init__(self, source, encoder, batch_size, shuffle_buffer=10000, bucket_window=0, seed=1):
        self.source, self.encoder, self.batch_size = source, encoder, batch_size
        self.shuffle_buffer, self.bucket_window, self.seed = shuffle_buffer, bucket_window, seed
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def _examples(self):
        info = get_worker_info()
        part, parts = (info.id, info.num_workers) if info else (0, 1)
        rng = random.Random(self.seed * 1000003 + self.epoch * 101 + part)
        buf = []
        for label, text in self.source.records(part, parts):
            example = self.encoder(label, text)
            if self.shuffle_buffer <= 1:
                yield example
                continue
            if len(buf) < self.shuffle_buffer:
                buf.append(example)
                continue
            i = rng.randrange(len(buf))
            yield buf[i]
            buf[i] = example
        rng.shuffle(buf)
        yield from buf

    def __iter__(self):
        examples = self._examples()
        window = self.batch_size * max(self.bucket_window, 1)
        chunk = []
        for example in examples:
            chunk.append(example)
            if len(chunk) == window:
                yield from self._cut(chunk)
                chunk = []
        if chunk:
            yield from self._cut(chunk)

    def _cut(self, chunk):
        if self.bucket_window > 1:
            chunk.sort(key=lambda e: len(e[0]))
        for i in range(0, len(chunk), self.batch_size):
            yield self._collate(chunk[i : i + self.batch_size])

    def _collate(self, examples):
        labels = torch.tensor([e[1] for e in examples], dtype=torch.int64)
        if self.encoder.bag:
            offsets, total = [], 0
            for ids, _ in examples:
                offsets.append(total)
                total += len(ids)
            flat = torch.tensor([i for ids, _ in examples for i in ids], dtype=torch.int64)
            return flat, torch.tensor(offsets, dtype=torch.int64), labels
        lengths = [len(ids) for ids, _ in examples]
        padded = torch.zeros(len(examples), max(lengths), dtype=torch.int64)
        for row, (ids, _) in enumerate(examples):
            padded[row, : len(ids)] = torch.tensor(ids, dtype=torch.int64)
        return padded, torch.tensor(lengths, dtype=torch.int64), labels

#!/usr/bin/python3
"""Is `sift pretrain`'s masked-token objective learning as a reference does? (#43)

    /usr/bin/python3 bench/mlm_reference.py [--steps 1000] [--lr 0.01] [--rows 32] [--batch 16]
        [--seeds 1,2,3] [--post-norm] [--work /tmp/mlm-reference]

On the synthetic corpus of PretrainCli.AMaskedWordThatItsNeighboursGiveAwayIsPredicted...
(texts that walk a fixed cycle of 40 words, so a word's neighbours give it away; the same
generator), for each seed: `sift pretrain` of a tiny BERT-family encoder (dim 32, 2 layers,
4 heads, ff 64), and a PyTorch loop written here from the papers, not from Sift's code: the
same encoder (BERT's N(0, 0.02) initialisation, learned positions, pre- or post-LN, the
tied head with dense, GELU, LayerNorm and a bias), the texts of a batch packed into rows,
15% of the tokens chosen (80% [MASK], 10% random, 10% kept), AdamW without weight decay,
warm-up over 6% of the steps then linear decay to 0. Prints the held-out accuracy at the
[MASK] positions of each. Needs /usr/bin/python3 with torch and build/sift.
"""
import argparse
import json
import math
import os
import random
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CYCLE = 40
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def cycle_texts(count, seed):
    """tests/tools/pretrain_cli_test.cc's cycle_texts, line for line."""
    order = [(i * 17 + 5) % CYCLE for i in range(CYCLE)]
    state = seed

    def draw(n):
        nonlocal state
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        return (state >> 33) % n

    out = []
    for _ in range(count):
        at, n = draw(CYCLE), 10 + draw(21)
        words = []
        for _ in range(n):
            words.append(f"c{order[at]}")
            at = (at + 1) % CYCLE
        out.append(" ".join(words))
    return out


def run_sift(a, work, seed):
    config = (f"run: {{dir: runs, name: seed{seed}, seed: {seed}, threads: 1, overwrite: true}}\n"
              "data: {workers: 1, shuffle_buffer: 64}\n"
              f"pretrain: {{files: [unlabelled.txt], valid: [held_out.txt], max_tokens: {a.rows}}}\n"
              f"model: {{type: bert, dim: 32, layers: 2, heads: 4, ff_dim: 64, "
              f"max_positions: {a.rows}, dropout: 0.0, pre_norm: {str(not a.post_norm).lower()}}}\n"
              "tokenizer: {type: wordpiece, model: vocab.txt}\n"
              f"train: {{epochs: 100000, max_steps: {a.steps}, batch_size: {a.batch}, "
              f"eval_every: 1000000, optimizer: {{type: adamw, lr: {a.lr}}}, "
              "scheduler: {type: warmup_linear, warmup_ratio: 0.06}}\n")
    with open(f"{work}/pretrain.yaml", "w", encoding="utf-8") as f:
        f.write(config)
    out = subprocess.run([a.sift, "pretrain", "pretrain.yaml", "--quiet", "--json"], cwd=work,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["splits"]["valid"]["mask_accuracy"]


def run_reference(a, train, valid, seed):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    rng = random.Random(seed + 1)
    ids_of = {w: i for i, w in enumerate(SPECIAL + [f"c{i}" for i in range(CYCLE)])}
    V, D, T, pre = len(ids_of), 32, a.rows, not a.post_norm

    def texts(lines):
        return [[2] + [ids_of[w] for w in line.split()] + [3] for line in lines]

    def pack(batch):
        flat = [t for text in batch for t in text]
        rows = [flat[i:i + T] for i in range(0, len(flat), T)]
        lengths = torch.tensor([len(r) for r in rows])
        return torch.tensor([r + [0] * (T - len(r)) for r in rows]), lengths

    def mask(ids, r):
        shown, target = ids.clone(), torch.full_like(ids, -100)
        for (b, p), t in zip(((b, p) for b in range(ids.size(0)) for p in range(T)),
                             ids.flatten().tolist()):
            if t < len(SPECIAL) or r.random() >= 0.15:
                continue
            target[b, p], u = t, r.random()
            if u < 0.8:
                shown[b, p] = 4
            elif u < 0.9:
                shown[b, p] = r.randrange(len(SPECIAL), V)
        return shown, target

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.att = nn.MultiheadAttention(D, 4, batch_first=True)
            self.n1, self.n2 = nn.LayerNorm(D, eps=1e-12), nn.LayerNorm(D, eps=1e-12)
            self.f1, self.f2 = nn.Linear(D, 64), nn.Linear(64, D)

        def forward(self, x, pad):
            if pre:
                h = self.n1(x)
                x = x + self.att(h, h, h, key_padding_mask=pad, need_weights=False)[0]
                return x + self.f2(F.gelu(self.f1(self.n2(x))))
            x = self.n1(x + self.att(x, x, x, key_padding_mask=pad, need_weights=False)[0])
            return self.n2(x + self.f2(F.gelu(self.f1(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.pos = nn.Embedding(V, D), nn.Embedding(T, D)
            self.norms = nn.ModuleList([nn.LayerNorm(D, eps=1e-12) for _ in range(3)])
            self.blocks = nn.ModuleList([Block(), Block()])
            self.dense, self.bias = nn.Linear(D, D), nn.Parameter(torch.zeros(V))
            for name, p in self.named_parameters():
                if "norm" in name or name.startswith(("blocks.0.n", "blocks.1.n")):
                    continue
                nn.init.zeros_(p) if name.endswith("bias") else nn.init.normal_(p, 0, 0.02)

        def forward(self, ids, lengths):
            pad = torch.arange(T)[None, :] >= lengths[:, None]
            x = self.norms[0](self.emb(ids) + self.pos.weight)
            for block in self.blocks:
                x = block(x, pad)
            if pre:
                x = self.norms[1](x)
            return self.norms[2](F.gelu(self.dense(x))) @ self.emb.weight.t() + self.bias

    model = Encoder()
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.0)
    warmup = int(0.06 * a.steps)
    train, valid = texts(train), texts(valid)
    order = []
    for step in range(a.steps):
        if len(order) < a.batch:
            more = list(range(len(train)))
            rng.shuffle(more)
            order += more
        ids, lengths = pack([train[i] for i in order[:a.batch]])
        order = order[a.batch:]
        shown, target = mask(ids, rng)
        lr = (a.lr * (step + 1) / warmup if step < warmup
              else a.lr * (1 - (step - warmup) / max(a.steps - warmup, 1)))
        for g in opt.param_groups:
            g["lr"] = lr
        loss = F.cross_entropy(model(shown, lengths).reshape(-1, V), target.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
    right = total = 0
    vr = random.Random(7)
    with torch.no_grad():
        for i in range(0, len(valid), a.batch):
            ids, lengths = pack(valid[i:i + a.batch])
            shown, target = mask(ids, vr)
            at = (target >= 0) & (shown == 4)
            right += (model(shown, lengths).argmax(-1)[at] == target[at]).sum().item()
            total += at.sum().item()
    return right / total


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sift", default=os.path.join(ROOT, "build", "sift"))
    p.add_argument("--work", default="/tmp/mlm-reference")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--rows", type=int, default=32, help="pretrain.max_tokens")
    p.add_argument("--batch", type=int, default=16, help="texts a step")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--post-norm", action="store_true")
    a = p.parse_args()
    a.sift = os.path.abspath(a.sift)
    os.makedirs(a.work, exist_ok=True)
    train, valid = cycle_texts(2000, 1), cycle_texts(300, 2)
    for name, lines in (("unlabelled.txt", train), ("held_out.txt", valid),
                        ("vocab.txt", SPECIAL + [f"c{i}" for i in range(CYCLE)])):
        with open(f"{a.work}/{name}", "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    print(f"{a.steps} steps of {a.batch} texts in rows of {a.rows}, lr {a.lr}, "
          f"{'post' if a.post_norm else 'pre'}-LN; accuracy at [MASK] (chance {1 / CYCLE:.3f})")
    for seed in (int(s) for s in a.seeds.split(",")):
        ours = run_sift(a, a.work, seed)
        ref = run_reference(a, train, valid, seed)
        print(f"seed {seed}: sift {ours:.3f}  reference {ref:.3f}", flush=True)


if __name__ == "__main__":
    main()

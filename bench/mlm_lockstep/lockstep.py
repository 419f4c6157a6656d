#!/usr/bin/python3
"""Lockstep: sift pretrain's dumped batches and initial weights through a PyTorch loop."""
import os, sys, subprocess, json, glob
import torch, torch.nn as nn, torch.nn.functional as F
sys.path.insert(0, "/work/wt-mlm/bench")
import mlm_reference as R

torch.set_num_threads(1)
torch.set_default_dtype(torch.float32)
work = sys.argv[1] if len(sys.argv) > 1 else None
steps = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 20
D, T, V = 32, 32, 45

def load(name):
    return torch.jit.load if False else torch.load(f"{work}/dump/{name}.pt")

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.att = nn.MultiheadAttention(D, 4, batch_first=True)
        self.n1, self.n2 = nn.LayerNorm(D, eps=1e-12), nn.LayerNorm(D, eps=1e-12)
        self.f1, self.f2 = nn.Linear(D, 64), nn.Linear(64, D)
    def forward(self, x, pad):
        h = self.n1(x)
        x = x + self.att(h, h, h, key_padding_mask=pad, need_weights=False)[0]
        return x + self.f2(F.gelu(self.f1(self.n2(x))))

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb, self.pos = nn.Embedding(V, D), nn.Embedding(T, D)
        self.norms = nn.ModuleList([nn.LayerNorm(D, eps=1e-12) for _ in range(3)])
        self.blocks = nn.ModuleList([Block(), Block()])
        self.dense, self.bias = nn.Linear(D, D), nn.Parameter(torch.zeros(V))
        self.tt = nn.Embedding(2, D) if os.environ.get("TT", "1") == "1" else None
    def forward(self, ids, lengths):
        pad = torch.arange(T)[None, :] >= lengths[:, None]
        x = self.emb(ids) + self.pos.weight
        if self.tt is not None: x = x + self.tt.weight[0]
        x = self.norms[0](x)
        for block in self.blocks:
            x = block(x, pad)
        x = self.norms[1](x)
        return self.norms[2](F.gelu(self.dense(x))) @ self.emb.weight.t() + self.bias

def ref_name(k):
    m = {"embedding.weight": "emb.weight", "positions.weight": "pos.weight",
         "mlm.bias": "bias", "token_types.weight": "tt.weight"}
    if k in m: return m[k]
    k = k.replace("embedding_norm.", "norms.0.").replace("final_norm.", "norms.1.")
    k = k.replace("mlm.norm.", "norms.2.").replace("mlm.dense.", "dense.")
    k = k.replace("layers.", "blocks.").replace("attention.in_proj.weight", "att.in_proj_weight")
    k = k.replace("attention.in_proj.bias", "att.in_proj_bias").replace("attention.out_proj.", "att.out_proj.")
    k = k.replace("attention_norm.", "n1.").replace("ff_norm.", "n2.").replace("ff_in.", "f1.").replace("ff_out.", "f2.")
    return k

def fresh():
    model = Encoder()
    params = dict(model.named_parameters())
    init = load("init")
    for k, v in init.items():
        if k.startswith(("head.", "output.")): continue
        with torch.no_grad(): params[ref_name(k)].copy_(v)
    return model


def main():
    global model, params
    model = Encoder()
    params = dict(model.named_parameters())
    init = load("init")
    for k, v in init.items():
        if k.startswith(("head.", "output.")): continue
        with torch.no_grad(): params[ref_name(k)].copy_(v)
    print("init loaded:", len(init), "sift tensors;", len(params), "reference tensors")
    opt = torch.optim.AdamW(model.parameters(), lr=0.0, weight_decay=0.0)

    def worst(a, b):
        return (a - b).abs().max().item(), b.abs().max().item()

    for step in range(steps):
        b = load(f"batch{step}_0")
        lr = load(f"lr{step}")["lr"].item()
        for g in opt.param_groups: g["lr"] = lr
        ids, lengths = b["ids"], b["lengths"]
        assert ids.shape[1] == T, ids.shape
        scores = model(ids, lengths).reshape(-1, V)[b["positions"]]
        loss = F.cross_entropy(scores, b["targets"])
        opt.zero_grad(); loss.backward()
        g = load(f"grad{step}")
        gd = sorted(((worst(params[ref_name(k)].grad, v)[0] / (v.abs().max().item() + 1e-30), k)
                     for k, v in g.items() if not k.startswith(("head.", "output."))), reverse=True)
        opt.step()
        a = load(f"after{step}")
        wd = sorted(((worst(params[ref_name(k)].detach(), v)[0], k)
                     for k, v in a.items() if not k.startswith(("head.", "output."))), reverse=True)
        print(f"step {step}: lr {lr:.3e} rows {ids.shape[0]} masked {b['targets'].numel()} "
              f"loss sift {b['loss'].item():.6f} ref {loss.item():.6f} | worst grad rel {gd[0][0]:.2e} ({gd[0][1]}) "
              f"| worst weight abs {wd[0][0]:.2e} ({wd[0][1]})")
        if step == 0:
            for r, k in gd[:40]: print(f"   grad {k}: rel {r:.2e}")
        # re-sync weights to sift's to see per-step differences only
        if os.environ.get("RESYNC"):
            with torch.no_grad():
                for k, v in a.items():
                    if not k.startswith(("head.", "output.")): params[ref_name(k)].copy_(v)

if __name__ == "__main__":
    main()

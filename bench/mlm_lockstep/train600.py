#!/usr/bin/python3
"""The PyTorch loop from sift's initial weights for `steps` steps, fed
  sift:   sift's dumped batches (its order, packing and masks)
  ref:    the reference's batches (random.Random(seed+1): full shuffle, its masks)
  siftorder-refmask: sift's texts in sift's order, packed, masked by the reference's mask()
  reforder-siftmask: not possible without sift's mask generator
argv: work source seed [steps]. Prints held-out accuracy at [MASK] (the reference's eval)."""
import os, sys, random
import torch, torch.nn.functional as F
sys.path.insert(0, "/tmp/lockstep"); sys.path.insert(0, "/work/wt-mlm/bench")
import mlm_reference as R
import lockstep as L
work, source, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
steps = int(sys.argv[4]) if len(sys.argv) > 4 else 600
L.work = work
torch.manual_seed(seed)
T, V, B = 32, 45, 16
ids_of = {w: i for i, w in enumerate(R.SPECIAL + [f"c{i}" for i in range(R.CYCLE)])}
def texts(lines): return [[2] + [ids_of[w] for w in l.split()] + [3] for l in lines]
train, valid = texts(R.cycle_texts(2000, 1)), texts(R.cycle_texts(300, 2))
def pack(batch):
    flat = [t for text in batch for t in text]
    rows = [flat[i:i + T] for i in range(0, len(flat), T)]
    return torch.tensor([r + [0] * (T - len(r)) for r in rows]), torch.tensor([len(r) for r in rows])
def mask(ids, r):
    shown, target = ids.clone(), torch.full_like(ids, -100)
    for (b, p), t in zip(((b, p) for b in range(ids.size(0)) for p in range(T)), ids.flatten().tolist()):
        if t < 5 or r.random() >= 0.15: continue
        target[b, p], u = t, r.random()
        if u < 0.8: shown[b, p] = 4
        elif u < 0.9: shown[b, p] = r.randrange(5, V)
    return shown, target
def sift_batch(step):
    b = torch.load(f"{work}/dump/batch{step}_0.pt")
    return b
def original(b):
    flat = b["ids"].flatten().clone(); flat[b["positions"]] = b["targets"]
    return flat.view_as(b["ids"])
init = os.environ.get("INIT", "sift")
if init == "sift":
    model = L.fresh()
elif init == "sift_nott":
    model = L.fresh()
    with torch.no_grad(): model.tt.weight.zero_()
elif init == "ref_tt":  # the reference's own init, then token_types N(0, 0.02) as sift has it
    model = L.Encoder()
    for name, p in model.named_parameters():
        if name.startswith("tt."): continue
        if "norm" in name or name.startswith(("blocks.0.n", "blocks.1.n")): continue
        torch.nn.init.zeros_(p) if name.endswith("bias") else torch.nn.init.normal_(p, 0, 0.02)
    torch.nn.init.normal_(model.tt.weight, 0, 0.02)
else:  # the reference's own: torch.manual_seed(seed), N(0, 0.02) / zeros, norms left
    assert os.environ.get("TT") == "0"
    model = L.Encoder()
    for name, p in model.named_parameters():
        if "norm" in name or name.startswith(("blocks.0.n", "blocks.1.n")): continue
        torch.nn.init.zeros_(p) if name.endswith("bias") else torch.nn.init.normal_(p, 0, 0.02)
opt = torch.optim.AdamW(model.parameters(), lr=0.003, weight_decay=0.0)
rng = random.Random(seed + 1)
order = []
warmup = int(0.06 * steps)
for step in range(steps):
    if source == "ref":
        if len(order) < B:
            more = list(range(len(train))); rng.shuffle(more); order += more
        ids, lengths = pack([train[i] for i in order[:B]]); order = order[B:]
        shown, target = mask(ids, rng)
    else:
        b = sift_batch(step)
        if source == "sift":
            shown, lengths = b["ids"], b["lengths"]
            target = torch.full((shown.numel(),), -100, dtype=torch.long)
            target[b["positions"]] = b["targets"]; target = target.view_as(shown)
        else:  # siftorder-refmask
            ids, lengths = original(b), b["lengths"]
            shown, target = mask(ids, rng)
    lr = 0.003 * (step + 1) / warmup if step < warmup else 0.003 * (1 - (step - warmup) / max(steps - warmup, 1))
    for g in opt.param_groups: g["lr"] = lr
    loss = F.cross_entropy(model(shown, lengths).reshape(-1, V), target.flatten())
    opt.zero_grad(); loss.backward(); opt.step()
right = total = 0
vr = random.Random(7)
with torch.no_grad():
    for i in range(0, len(valid), B):
        ids, lengths = pack(valid[i:i + B]); shown, target = mask(ids, vr)
        at = (target >= 0) & (shown == 4)
        right += (model(shown, lengths).argmax(-1)[at] == target[at]).sum().item(); total += at.sum().item()
print(f"init {init} data {source} seed {seed}: accuracy at [MASK] {right / total:.3f}")

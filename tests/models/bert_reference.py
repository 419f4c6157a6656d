"""An independent forward of BERT, DistilBERT and ELECTRA sequence classifiers, written from
the published architectures (Hugging Face's modeling_bert.py, modeling_distilbert.py and
modeling_electra.py: post-LayerNorm blocks, erf GELU, positions from 0, token type 0, the
mask as the dtype's minimum), over a safetensors file in their tensor names. The other side
of tests/models/bert_test.cc.

usage: bert_reference.py MODEL_DIR INPUT_JSON  (INPUT_JSON: {"ids": [[...]], "lengths": [...]})
prints the logits as a JSON list of lists.
"""
import json
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F


def load_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", info
        a, b = info["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[a:b], dtype=np.float32).copy()).reshape(info["shape"])
    return out


def linear(w, prefix, x):
    return F.linear(x, w[prefix + ".weight"], w[prefix + ".bias"])


def attention(w, q_name, k_name, v_name, heads, x, mask):
    batch, length, dim = x.shape
    d = dim // heads

    def split(t):
        return t.view(batch, length, heads, d).transpose(1, 2)

    q, k, v = split(linear(w, q_name, x)), split(linear(w, k_name, x)), split(linear(w, v_name, x))
    scores = torch.matmul(q, k.transpose(-1, -2)) / (d ** 0.5)
    scores = scores + (1.0 - mask[:, None, None, :]) * torch.finfo(torch.float32).min
    return torch.matmul(torch.softmax(scores, -1), v).transpose(1, 2).reshape(batch, length, dim)


def norm(w, prefix, x, eps):
    return F.layer_norm(x, (x.shape[-1],), w[prefix + ".weight"], w[prefix + ".bias"], eps)


def bert_like(w, cfg, ids, mask, base, electra):
    eps = cfg.get("layer_norm_eps", 1e-12)
    e = base + "embeddings."
    length = ids.shape[1]
    x = (w[e + "word_embeddings.weight"][ids] + w[e + "position_embeddings.weight"][:length][None]
         + w[e + "token_type_embeddings.weight"][0])
    x = norm(w, e + "LayerNorm", x, eps)
    if electra and base + "embeddings_project.weight" in w:
        x = linear(w, base + "embeddings_project", x)
    for i in range(cfg["num_hidden_layers"]):
        p = f"{base}encoder.layer.{i}."
        a = attention(w, p + "attention.self.query", p + "attention.self.key", p + "attention.self.value",
                      cfg["num_attention_heads"], x, mask)
        x = norm(w, p + "attention.output.LayerNorm", x + linear(w, p + "attention.output.dense", a), eps)
        h = F.gelu(linear(w, p + "intermediate.dense", x))
        x = norm(w, p + "output.LayerNorm", x + linear(w, p + "output.dense", h), eps)
    cls = x[:, 0]
    if electra:
        return linear(w, "classifier.out_proj", F.gelu(linear(w, "classifier.dense", cls)))
    return linear(w, "classifier", torch.tanh(linear(w, base + "pooler.dense", cls)))


def distilbert(w, cfg, ids, mask, base):
    e = base + "embeddings."
    length = ids.shape[1]
    x = w[e + "word_embeddings.weight"][ids] + w[e + "position_embeddings.weight"][:length][None]
    x = norm(w, e + "LayerNorm", x, 1e-12)
    for i in range(cfg["n_layers"]):
        p = f"{base}transformer.layer.{i}."
        a = attention(w, p + "attention.q_lin", p + "attention.k_lin", p + "attention.v_lin", cfg["n_heads"], x, mask)
        x = norm(w, p + "sa_layer_norm", x + linear(w, p + "attention.out_lin", a), 1e-12)
        h = linear(w, p + "ffn.lin2", F.gelu(linear(w, p + "ffn.lin1", x)))
        x = norm(w, p + "output_layer_norm", x + h, 1e-12)
    return linear(w, "classifier", torch.relu(linear(w, "pre_classifier", x[:, 0])))


def main():
    folder, inputs = sys.argv[1], json.load(open(sys.argv[2]))
    cfg = json.load(open(folder + "/config.json"))
    w = load_safetensors(folder + "/model.safetensors")
    ids = torch.tensor(inputs["ids"], dtype=torch.long)
    lengths = torch.tensor(inputs["lengths"])
    mask = (torch.arange(ids.shape[1])[None] < lengths[:, None]).float()
    kind = cfg["model_type"]
    base = kind + "." if kind + ".embeddings.word_embeddings.weight" in w else ""
    with torch.no_grad():
        if kind == "distilbert":
            logits = distilbert(w, cfg, ids, mask, base)
        else:
            logits = bert_like(w, cfg, ids, mask, base, kind == "electra")
    json.dump(logits.tolist(), sys.stdout)


main()

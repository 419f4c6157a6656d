#!/usr/bin/python3
"""Writes a random BERT model folder in Hugging Face's layout (config.json, model.safetensors,
vocab.txt), as `save_pretrained` leaves a base model: no classification head. For the
fine-tuning bench (bench/finetune_hf.py) where no real checkpoint can be downloaded.

    /usr/bin/python3 bench/make_hf_bert.py OUT --layers 4 --hidden 256 --heads 4 [--vocab 30522]
"""
import argparse
import json
import os
import struct

import torch


def tensors(layers, hidden, inter, vocab, positions, generator):
    def normal(*shape):
        return torch.randn(*shape, generator=generator) * 0.02

    t = {"bert.embeddings.word_embeddings.weight": normal(vocab, hidden),
         "bert.embeddings.position_embeddings.weight": normal(positions, hidden),
         "bert.embeddings.token_type_embeddings.weight": normal(2, hidden),
         "bert.embeddings.LayerNorm.weight": torch.ones(hidden),
         "bert.embeddings.LayerNorm.bias": torch.zeros(hidden)}

    def linear(name, out, inp):
        t[name + ".weight"] = normal(out, inp)
        t[name + ".bias"] = torch.zeros(out)

    for i in range(layers):
        p = f"bert.encoder.layer.{i}."
        for part in ("query", "key", "value"):
            linear(p + "attention.self." + part, hidden, hidden)
        linear(p + "attention.output.dense", hidden, hidden)
        t[p + "attention.output.LayerNorm.weight"] = torch.ones(hidden)
        t[p + "attention.output.LayerNorm.bias"] = torch.zeros(hidden)
        linear(p + "intermediate.dense", inter, hidden)
        linear(p + "output.dense", hidden, inter)
        t[p + "output.LayerNorm.weight"] = torch.ones(hidden)
        t[p + "output.LayerNorm.bias"] = torch.zeros(hidden)
    linear("bert.pooler.dense", hidden, hidden)
    return t


def write_safetensors(path, named):
    header, offset, blobs = {}, 0, []
    for name, t in named.items():
        data = t.contiguous().to(torch.float32).numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for b in blobs:
            f.write(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=30522)
    ap.add_argument("--positions", type=int, default=512)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    g = torch.Generator().manual_seed(a.seed)
    inter = 4 * a.hidden
    write_safetensors(os.path.join(a.out, "model.safetensors"),
                      tensors(a.layers, a.hidden, inter, a.vocab, a.positions, g))
    config = {"model_type": "bert", "architectures": ["BertModel"], "vocab_size": a.vocab,
              "hidden_size": a.hidden, "num_hidden_layers": a.layers,
              "num_attention_heads": a.heads, "intermediate_size": inter,
              "max_position_embeddings": a.positions, "type_vocab_size": 2,
              "layer_norm_eps": 1e-12, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
              "attention_probs_dropout_prob": 0.1}
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    # [PAD] [UNK] [CLS] [SEP] [MASK], then words and "##" pieces of a made-up language.
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    i = 0
    while len(words) < a.vocab:
        words.append(("##" if i % 3 == 2 else "") + f"w{i}")
        i += 1
    with open(os.path.join(a.out, "vocab.txt"), "w") as f:
        f.write("\n".join(words) + "\n")


if __name__ == "__main__":
    main()

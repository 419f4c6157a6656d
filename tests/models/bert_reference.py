"""An independent forward of BERT, DistilBERT, ELECTRA, ALBERT and XLM-R sequence
classifiers, written from the published architectures (Hugging Face's modeling_bert.py,
modeling_distilbert.py, modeling_electra.py, modeling_albert.py and modeling_xlm_roberta.py:
post-LayerNorm blocks, erf GELU or ALBERT's gelu_new, positions from 0 or RoBERTa's from
padding_idx + 1, token type 0, the mask as the dtype's minimum; ALBERT's layer groups),
over a safetensors file in their tensor names. The other side of tests/models/bert_test.cc.
For ALBERT and XLM-R it also tokenizes texts as their Hugging Face tokenizers do
(AlbertTokenizer, XLMRobertaTokenizer, with Debian's python3-sentencepiece).

usage: bert_reference.py MODEL_DIR INPUT_JSON  (INPUT_JSON: {"ids": [[...]], "lengths": [...]}
                                                or {"texts": [...]})
prints the logits as a JSON list of lists (with {"texts": [...], "only_ids": true}: each
text's ids instead).
"""
import json
import math
import struct
import sys
import unicodedata

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


def bert_layers(w, cfg, x, mask, base, eps):
    """BERT's post-LayerNorm encoder layers (modeling_bert's BertLayer), as BERT, ELECTRA and
    XLM-R stack them."""
    for i in range(cfg["num_hidden_layers"]):
        p = f"{base}encoder.layer.{i}."
        a = attention(w, p + "attention.self.query", p + "attention.self.key", p + "attention.self.value",
                      cfg["num_attention_heads"], x, mask)
        x = norm(w, p + "attention.output.LayerNorm", x + linear(w, p + "attention.output.dense", a), eps)
        h = F.gelu(linear(w, p + "intermediate.dense", x))
        x = norm(w, p + "output.LayerNorm", x + linear(w, p + "output.dense", h), eps)
    return x


def bert_like(w, cfg, ids, mask, base, electra):
    eps = cfg.get("layer_norm_eps", 1e-12)
    e = base + "embeddings."
    length = ids.shape[1]
    x = (w[e + "word_embeddings.weight"][ids] + w[e + "position_embeddings.weight"][:length][None]
         + w[e + "token_type_embeddings.weight"][0])
    x = norm(w, e + "LayerNorm", x, eps)
    if electra and base + "embeddings_project.weight" in w:
        x = linear(w, base + "embeddings_project", x)
    x = bert_layers(w, cfg, x, mask, base, eps)
    cls = x[:, 0]
    if electra:
        return linear(w, "classifier.out_proj", F.gelu(linear(w, "classifier.dense", cls)))
    return linear(w, "classifier", torch.tanh(linear(w, base + "pooler.dense", cls)))


def gelu_new(x):
    """modeling_albert's gelu_new (NewGELUActivation): GELU's tanh approximation."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def albert(w, cfg, ids, mask, base):
    eps = cfg.get("layer_norm_eps", 1e-12)
    e = base + "embeddings."
    length = ids.shape[1]
    x = (w[e + "word_embeddings.weight"][ids] + w[e + "position_embeddings.weight"][:length][None]
         + w[e + "token_type_embeddings.weight"][0])
    x = linear(w, base + "encoder.embedding_hidden_mapping_in", norm(w, e + "LayerNorm", x, eps))
    layers, groups = cfg["num_hidden_layers"], cfg.get("num_hidden_groups", 1)
    act = gelu_new if cfg.get("hidden_act") == "gelu_new" else F.gelu
    for i in range(layers):
        group = int(i / (layers / groups))  # AlbertTransformer's group_idx
        p = f"{base}encoder.albert_layer_groups.{group}.albert_layers.0."
        a = attention(w, p + "attention.query", p + "attention.key", p + "attention.value",
                      cfg["num_attention_heads"], x, mask)
        x = norm(w, p + "attention.LayerNorm", x + linear(w, p + "attention.dense", a), eps)
        h = linear(w, p + "ffn_output", act(linear(w, p + "ffn", x)))
        x = norm(w, p + "full_layer_layer_norm", h + x, eps)
    return linear(w, "classifier", torch.tanh(linear(w, base + "pooler", x[:, 0])))


def xlm_roberta(w, cfg, ids, lengths, mask, base):
    """RoBERTa's embeddings: padding slots hold padding_idx, positions count real tokens from
    padding_idx + 1 (create_position_ids_from_input_ids); the classifier's dense + tanh."""
    eps = cfg.get("layer_norm_eps", 1e-12)
    pad = cfg.get("pad_token_id", 1)
    ids = torch.where(mask > 0, ids, torch.full_like(ids, pad))
    real = ids.ne(pad).int()
    positions = torch.cumsum(real, dim=1) * real + pad
    e = base + "embeddings."
    x = (w[e + "word_embeddings.weight"][ids] + w[e + "position_embeddings.weight"][positions]
         + w[e + "token_type_embeddings.weight"][0])
    x = norm(w, e + "LayerNorm", x, eps)
    x = bert_layers(w, cfg, x, mask, base, eps)
    return linear(w, "classifier.out_proj", torch.tanh(linear(w, "classifier.dense", x[:, 0])))


def albert_tokens(sp, text, lower):
    """AlbertTokenizer: preprocess_text, _tokenize (its digit-comma rule), [CLS] ... [SEP]."""
    outputs = " ".join(text.strip().split())
    outputs = outputs.replace("``", '"').replace("''", '"')
    outputs = unicodedata.normalize("NFKD", outputs)
    outputs = "".join([c for c in outputs if not unicodedata.combining(c)])
    if lower:
        outputs = outputs.lower()
    new_pieces = []
    for piece in sp.encode(outputs, out_type=str):
        if len(piece) > 1 and piece[-1] == "," and piece[-2].isdigit():
            cur = sp.encode(piece[:-1].replace("\u2581", ""), out_type=str)
            if piece[0] != "\u2581" and cur[0][0] == "\u2581":
                if len(cur[0]) == 1:
                    cur = cur[1:]
                else:
                    cur[0] = cur[0][1:]
            cur.append(piece[-1])
            new_pieces.extend(cur)
        else:
            new_pieces.append(piece)
    return ([sp.piece_to_id("[CLS]")] + [sp.piece_to_id(p) for p in new_pieces]
            + [sp.piece_to_id("[SEP]")])


def xlmr_tokens(sp, text):
    """XLMRobertaTokenizer: fairseq's <s> 0, <pad> 1, </s> 2, <unk> 3, then pieces + 1."""
    ids = []
    for piece in sp.encode(text, out_type=str):
        spm_id = sp.piece_to_id(piece)
        ids.append(spm_id + 1 if spm_id else 3)
    return [0] + ids + [2]


def tokenized(folder, cfg, texts):
    import sentencepiece  # Debian: python3-sentencepiece
    if cfg["model_type"] == "albert":
        sp = sentencepiece.SentencePieceProcessor(model_file=folder + "/spiece.model")
        lower = json.load(open(folder + "/tokenizer_config.json")).get("do_lower_case", True)
        rows = [albert_tokens(sp, t, lower) for t in texts]
    else:
        sp = sentencepiece.SentencePieceProcessor(model_file=folder + "/sentencepiece.bpe.model")
        rows = [xlmr_tokens(sp, t) for t in texts]
    longest = max(len(r) for r in rows)
    return {"ids": [r + [0] * (longest - len(r)) for r in rows], "lengths": [len(r) for r in rows]}


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
    if "texts" in inputs:
        only_ids = inputs.get("only_ids", False)
        inputs = tokenized(folder, cfg, inputs["texts"])
        if only_ids:  # each text's ids, unpadded
            json.dump([r[:n] for r, n in zip(inputs["ids"], inputs["lengths"])], sys.stdout)
            return
    w = load_safetensors(folder + "/model.safetensors")
    ids = torch.tensor(inputs["ids"], dtype=torch.long)
    lengths = torch.tensor(inputs["lengths"])
    mask = (torch.arange(ids.shape[1])[None] < lengths[:, None]).float()
    kind = cfg["model_type"]
    prefix = "roberta" if kind == "xlm-roberta" else kind
    base = prefix + "." if prefix + ".embeddings.word_embeddings.weight" in w else ""
    with torch.no_grad():
        if kind == "distilbert":
            logits = distilbert(w, cfg, ids, mask, base)
        elif kind == "albert":
            logits = albert(w, cfg, ids, mask, base)
        elif kind == "xlm-roberta":
            logits = xlm_roberta(w, cfg, ids, lengths, mask, base)
        else:
            logits = bert_like(w, cfg, ids, mask, base, kind == "electra")
    json.dump(logits.tolist(), sys.stdout)


main()

"""An export of `sift export` in PyTorch alone: its tokenizer in Python, its TorchScript
module under torch.jit.load. Needs nothing of Sift's native code (sift._sift), only PyTorch
(Debian: python3-torch) and, for models with a SentencePiece tokenizer, the sentencepiece
module (python3-sentencepiece).

    from sift.torch_export import Classifier
    model = Classifier("model.pt")
    model.predict(["how far is the moon ?"], k=2)   # [[("NUM", 0.87), ("LOC", 0.05)]]

Everything the model needs comes from the file's extra files: the label names, the
vocabulary and the tokenizer settings (tokenizer.json), the word tokenizer's Unicode
tables (unicode.json: character classes, case folding, NFKC data, from the utf8proc
that sift was built with, so Python's own Unicode version plays no part), or the
SentencePiece model, or BERT's WordPiece vocab.txt (its basic tokenizer runs on Python's
unicodedata, as BERT's own tokenizer does). The tokenizer below is datasets/tokenizer.cc, datasets/unicode.cc
and datasets/encoder.cc in Python: the same token boundaries, case folding, word ids
and hashed word n-grams. examples/classify.py is its command line.
"""
import bisect
import json
import re
import unicodedata
import zlib

import torch

FORMAT_NAME = "sift-export"
FORMAT_VERSION = 1  # the newest export format this reader reads
EXTRA_FILES = ["sift_format.json", "tokenizer.json", "labels.txt", "vocab.txt",
               "tokenizer.model", "config.yaml", "unicode.json"]
PAD, UNK = 0, 1
U64 = (1 << 64) - 1


class ExportError(Exception):
    pass


# ---- the word tokenizer (datasets/tokenizer.cc, datasets/unicode.cc) -------------------

# Hangul syllables, composed and decomposed by arithmetic (as utf8proc does).
S_BASE, L_BASE, V_BASE, T_BASE = 0xAC00, 0x1100, 0x1161, 0x11A7
L_COUNT, V_COUNT, T_COUNT = 19, 21, 28
N_COUNT = V_COUNT * T_COUNT
S_COUNT = L_COUNT * N_COUNT
ZWJ = 0x200D


def decode_at(text, i):
    """(code point, length) of the UTF-8 character at text[i]; (-1, 1) for a byte that
    does not start a valid sequence (utf8proc_iterate's rule: strict UTF-8)."""
    b = text[i]
    if b < 0x80:
        return b, 1
    n = 2 if 0xC2 <= b <= 0xDF else 3 if 0xE0 <= b <= 0xEF else 4 if 0xF0 <= b <= 0xF4 else 0
    if n and i + n <= len(text):
        try:
            return ord(text[i:i + n].decode("utf-8")), n
        except UnicodeDecodeError:
            pass
    return -1, 1


class UnicodeTables:
    """unicode.json of an export: the classes (w word, s space, p punctuation, y symbol,
    e extend), case folding and NFKC data of the sift that wrote it."""

    def __init__(self, j):
        self.version = j["version"]
        self.starts = [start for start, _ in j["classes"]]
        self.letters = [letter for _, letter in j["classes"]]
        self.fold = {int(cp): text.encode() for cp, text in j["casefold"].items()}
        self.decomposition = {int(cp): v for cp, v in j.get("decompose", {}).items()}
        self.ccc = {int(cp): v for cp, v in j.get("ccc", {}).items()}
        self.pairs = {(a, b): c for a, b, c in j.get("compose", [])}

    def char_class(self, cp):
        if cp < 0:
            return "w"
        return self.letters[bisect.bisect_right(self.starts, cp) - 1]

    def casefold(self, token):
        """casefold_utf8: each character folded; invalid bytes kept."""
        out = bytearray()
        i, n = 0, len(token)
        while i < n:
            cp, length = decode_at(token, i)
            out += self.fold.get(cp, token[i:i + length]) if cp >= 0 else token[i:i + 1]
            i += length
        return bytes(out)

    def _compose_pair(self, a, b):
        l_index = a - L_BASE
        if 0 <= l_index < L_COUNT and 0 <= b - V_BASE < V_COUNT:
            return S_BASE + (l_index * V_COUNT + b - V_BASE) * T_COUNT
        s_index = a - S_BASE
        # utf8proc 2.8 accepts T_BASE itself (index 0), which it then drops.
        if 0 <= s_index < S_COUNT and s_index % T_COUNT == 0 and 0 <= b - T_BASE < T_COUNT:
            return a + b - T_BASE
        return self.pairs.get((a, b))

    def nfkc(self, text):
        """nfkc_utf8: NFKC as utf8proc computes it; ASCII and invalid UTF-8 unchanged."""
        if text.isascii():
            return text
        try:
            chars = text.decode("utf-8")
        except UnicodeDecodeError:
            return text
        cps = []
        for ch in chars:
            cp = ord(ch)
            s_index = cp - S_BASE
            if 0 <= s_index < S_COUNT:
                cps += [L_BASE + s_index // N_COUNT, V_BASE + s_index % N_COUNT // T_COUNT]
                if s_index % T_COUNT:
                    cps.append(T_BASE + s_index % T_COUNT)
            else:
                cps += self.decomposition.get(cp, (cp,))
        ccc = self.ccc
        i = 0
        while i < len(cps):  # canonical order: stable sort of each run of non-starters
            if not ccc.get(cps[i], 0):
                i += 1
                continue
            j = i
            while j < len(cps) and ccc.get(cps[j], 0):
                j += 1
            cps[i:j] = sorted(cps[i:j], key=ccc.__getitem__)
            i = j
        out, starter, max_ccc = [], None, -1
        for cp in cps:  # composition, as utf8proc_normalize_utf32
            cc = ccc.get(cp, 0)
            if starter is not None and cc > max_ccc:
                composite = self._compose_pair(out[starter], cp)
                if composite is not None:
                    out[starter] = composite
                    continue
            out.append(cp)
            if cc:
                max_ccc = max(max_ccc, cc)
            else:
                starter, max_ccc = len(out) - 1, -1
        return "".join(map(chr, out)).encode()


def tokenize_unicode(text, tables, lowercase, split_punctuation, drop_punctuation=False,
                     nfkc=False, stopwords=frozenset()):
    """UTF-8 bytes -> tokens (bytes), as WordTokenizer::tokenize: Unicode spaces split;
    with split_punctuation each punctuation character (class p) and symbol (class y) is a
    token of its own with the extenders (class e; a joiner takes the next character
    along) after it; with drop_punctuation punctuation only separates words; case
    folding; stop words left out."""
    if text.isascii():  # the same rules, faster
        return tokenize(text, lowercase, split_punctuation, drop_punctuation, stopwords)
    if nfkc:
        text = tables.nfkc(text)
    split = split_punctuation or drop_punctuation
    char_class = tables.char_class
    tokens = []
    i, n = 0, len(text)
    while i < n:
        cp, length = decode_at(text, i)
        cls = char_class(cp)
        if cls == "s":
            i += length
            continue
        begin = i
        i += length
        if split and cls in "py":
            while i < n:  # skip_extenders
                cp, length = decode_at(text, i)
                if char_class(cp) != "e":
                    break
                i += length
                if cp == ZWJ and i < n:
                    cp, length = decode_at(text, i)
                    if char_class(cp) == "s":
                        break
                    i += length
            if drop_punctuation and cls == "p":
                continue
        else:
            while i < n:
                cp, length = decode_at(text, i)
                c = char_class(cp)
                if c == "s" or (split and c in "py"):
                    break
                i += length
                if cp == ZWJ and i < n:
                    cp, length = decode_at(text, i)
                    if char_class(cp) != "s":
                        i += length
        token = text[begin:i]
        if lowercase:
            token = tables.casefold(token)
        if token not in stopwords:
            tokens.append(token)
    return tokens


# The rules of sift before unicode.json (exports without it): ASCII punctuation, lower-
# casing of 2-byte capitals only.

SPACE = frozenset(b" \t\n\r\v\f")
PUNCT = frozenset(c for c in range(33, 127) if not chr(c).isalnum())


def _lower_latin_extended_a(cp):
    if cp == 0x130:
        return ord("i")
    if cp == 0x178:
        return 0xFF
    if cp in (0x138, 0x149, 0x17F):
        return cp
    odd_capitals = 0x139 <= cp <= 0x148 or cp >= 0x179
    is_capital = (cp % 2 == 1) == odd_capitals
    return cp + 1 if is_capital else cp


def _lower_greek(cp):
    if 0x391 <= cp <= 0x3AB and cp != 0x3A2:
        return cp + 32
    if 0x388 <= cp <= 0x38A:
        return cp + 37
    if 0x3D8 <= cp <= 0x3EF:
        return cp + 1 if cp % 2 == 0 else cp
    if cp >= 0x3FD:
        return cp - 130
    if cp in (0x370, 0x372, 0x376, 0x3F7, 0x3FA):
        return cp + 1
    return {0x37F: 0x3F3, 0x386: 0x3AC, 0x38C: 0x3CC, 0x38E: 0x3CD, 0x38F: 0x3CE,
            0x3CF: 0x3D7, 0x3F4: 0x3B8, 0x3F9: 0x3F2}.get(cp, cp)


def _lower_cyrillic(cp):
    if cp <= 0x40F:
        return cp + 80
    if cp <= 0x42F:
        return cp + 32
    if cp == 0x4C0:
        return 0x4CF
    if 0x4C1 <= cp <= 0x4CE:
        return cp + 1 if cp % 2 == 1 else cp
    paired = 0x460 <= cp <= 0x481 or cp >= 0x48A
    return cp + 1 if paired and cp % 2 == 0 else cp


def _lower_two_byte(cp):
    if 0xC0 <= cp <= 0xDE:
        return cp if cp == 0xD7 else cp + 32
    if 0x100 <= cp <= 0x17F:
        return _lower_latin_extended_a(cp)
    if 0x370 <= cp <= 0x3FF:
        return _lower_greek(cp)
    if 0x400 <= cp <= 0x4FF:
        return _lower_cyrillic(cp)
    return cp


def lowercase_utf8(token):
    """ASCII capitals and the 2-byte capitals of Latin-1, Latin Extended-A, Greek and
    Cyrillic; every other byte kept (casefold_utf8 in datasets/unicode.cc)."""
    out = bytearray()
    r, n = 0, len(token)
    while r < n:
        c = token[r]
        if c < 0x80:
            out.append(c + 32 if 65 <= c <= 90 else c)
            r += 1
            continue
        nxt = token[r + 1] if r + 1 < n else 0
        if (c & 0xE0) != 0xC0 or (nxt & 0xC0) != 0x80:
            out.append(c)
            r += 1
            continue
        lower = _lower_two_byte(((c & 0x1F) << 6) | (nxt & 0x3F))
        if lower < 0x80:
            out.append(lower)
        else:
            out += bytes((0xC0 | (lower >> 6), 0x80 | (lower & 0x3F)))
        r += 2
    return bytes(out)


def tokenize(text, lowercase, split_punctuation, drop_punctuation=False, stopwords=frozenset()):
    """UTF-8 bytes -> tokens (bytes): whitespace and U+00A0 split; with
    split_punctuation every ASCII punctuation byte is a token of its own, with
    drop_punctuation it only separates words; stop words are left out."""
    tokens = []
    i, n = 0, len(text)
    split_punctuation = split_punctuation or drop_punctuation

    def space_at(k):
        if text[k] in SPACE:
            return 1
        return 2 if text[k] == 0xC2 and k + 1 < n and text[k + 1] == 0xA0 else 0

    while i < n:
        skip = space_at(i)
        if skip:
            i += skip
            continue
        begin = i
        if split_punctuation and text[i] in PUNCT:
            i += 1
            if drop_punctuation:
                continue
        else:
            i += 1
            while i < n and not space_at(i) and not (split_punctuation and text[i] in PUNCT):
                i += 1
        token = text[begin:i]
        token = lowercase_utf8(token) if lowercase else token
        if token not in stopwords:
            tokens.append(token)
    return tokens


# ---- BERT's tokenizer (datasets/wordpiece.cc): basic tokenizer, then WordPiece ----------

# CJK ideograph blocks, each ideograph a word of its own (BERT's _is_chinese_char).
CJK_BLOCKS = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]


def _bert_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True  # every ASCII symbol, as BERT splits "$" and "^" too
    return unicodedata.category(ch).startswith("P")


def bert_basic_tokens(text, lowercase, strip_accents, split_cjk):
    """BERT's basic tokenizer on a str: clean, split CJK, NFC, whitespace, case and accents,
    punctuation."""
    out = []
    for ch in text:
        cp = ord(ch)
        if cp == 0 or cp == 0xFFFD:
            continue
        cat = unicodedata.category(ch)
        if ch in " \t\n\r" or cat == "Zs":
            out.append(" ")
        elif cat.startswith("C"):
            continue
        elif split_cjk and any(a <= cp <= b for a, b in CJK_BLOCKS):
            out.append(f" {ch} ")
        else:
            out.append(ch)
    words = []
    for token in unicodedata.normalize("NFC", "".join(out)).split():
        if lowercase:
            token = token.lower()
        if strip_accents:
            token = "".join(c for c in unicodedata.normalize("NFD", token)
                            if unicodedata.category(c) != "Mn")
        run = ""
        for c in token:
            if _bert_punctuation(c):
                if run:
                    words.append(run)
                run = ""
                words.append(c)
            else:
                run += c
        if run:
            words.append(run)
    return words


def wordpiece_ids(word, vocab, wp):
    """Greedy longest-match-first pieces of one word (a word that cannot be cut: [UNK])."""
    unk = [vocab[wp["unk"]]]
    if len(word) > wp["max_chars_per_word"]:
        return unk
    ids, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            piece = (wp["continuation"] if start > 0 else "") + word[start:end]
            if piece in vocab:
                found = vocab[piece]
                break
            end -= 1
        if found is None:
            return unk
        ids.append(found)
        start = end
    return ids


# ---- A pretrained model's own SentencePiece ids (datasets/model_pieces.cc) ---------------
WORD_START = "\u2581"


def albert_normalized(text, lowercase):
    """AlbertTokenizer's text before its pieces: spaces, quotes, accents, case."""
    text = " ".join(text.split()).replace("``", '"').replace("''", '"')
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return text.lower() if lowercase else text


def albert_piece_ids(sp, text, lowercase):
    """ALBERT's pieces of `text` as ids; a digit-then-comma piece is cut before the comma."""
    ids = []
    for piece in sp.encode(albert_normalized(text, lowercase), out_type=str):
        if len(piece) > 1 and piece[-1] == "," and unicodedata.category(piece[-2]) == "Nd":
            cut = sp.encode(piece[:-1].replace(WORD_START, ""), out_type=str)
            if piece[0] != WORD_START and cut and cut[0][0] == WORD_START:
                cut = cut[1:] if len(cut[0]) == 1 else [cut[0][1:]] + cut[1:]
            ids += [sp.piece_to_id(p) for p in cut + [piece[-1]]]
        else:
            ids.append(sp.piece_to_id(piece))
    return ids


def model_piece_ids(sp, scheme, text, lowercase, max_length):
    """[CLS] pieces [SEP] (albert) or <s> pieces </s> with fairseq's ids (fairseq)."""
    if scheme == "albert":
        first, last = sp.piece_to_id("[CLS]"), sp.piece_to_id("[SEP]")
        ids = albert_piece_ids(sp, text, lowercase)
    else:
        first, last = 0, 2
        ids = [3 if p == sp.unk_id() else p + 1 for p in sp.encode(text, out_type=int)]
    if max_length > 0:
        ids = ids[:max(max_length - 2, 0)]
    return [first] + ids + [last]


def hash_word(token, signed=False):
    """FNV-1a, 32-bit, over the UTF-8 bytes (hash_word in datasets/encoder.cc). signed:
    fastText's own hash (fasttext_hash_word there): bytes as signed chars, and the 32-bit
    result sign-extended to 64 bits as fastText's int32_t hashes are."""
    h = 2166136261
    for b in token:
        h = ((h ^ ((b - 256) & 0xFFFFFFFF if signed and b >= 128 else b)) * 16777619) & 0xFFFFFFFF
    return h | 0xFFFFFFFF00000000 if signed and h >= 0x80000000 else h


def char_ngram_ids(word, minn, maxn, buckets, first_bucket, signed):
    """fastText's subwords of a word (BagEncoder::append_char_ngrams): runs of minn..maxn
    UTF-8 characters of b"<" + word + b">", a lone "<" or ">" left out, each hashed with
    FNV-1a (signed chars for runs imported from fastText) into the buckets."""
    if word == b"</s>":
        return []
    w = b"<" + word + b">"
    ids = []
    for i in range(len(w)):
        if w[i] & 0xC0 == 0x80:
            continue
        j, n = i, 1
        while j < len(w) and n <= maxn:
            j += 1
            while j < len(w) and w[j] & 0xC0 == 0x80:
                j += 1
            if n >= minn and not (n == 1 and (i == 0 or j == len(w))):
                h = hash_word(w[i:j], signed) & 0xFFFFFFFF
                ids.append(first_bucket + h % buckets)
            n += 1
    return ids


def ngram_ids(values, ngrams, buckets, first_bucket, multiplier):
    """fastText's word n-grams: by start position, then length; h on uint64."""
    ids = []
    n = len(values)
    for i in range(n):
        h = values[i]
        for j in range(i + 1, min(n, i + ngrams)):
            h = (h * multiplier + values[j]) & U64
            ids.append(first_bucket + h % buckets)
    return ids


# ---- the export ------------------------------------------------------------------------

def packed_crc(value, crc):
    """CRC-32 of a packed int8 weight's state, as weights_crc in sift's export.cc."""
    if isinstance(value, torch.Tensor):
        if value.is_quantized:
            if value.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric):
                scales = value.q_per_channel_scales().double()
            else:
                scales = torch.tensor([value.q_scale()], dtype=torch.float64)
            crc = zlib.crc32(value.int_repr().contiguous().numpy().tobytes(), crc)
            return zlib.crc32(scales.contiguous().numpy().tobytes(), crc)
        return zlib.crc32(value.detach().contiguous().numpy().tobytes(), crc)
    if isinstance(value, (list, tuple)):
        for item in value:
            crc = packed_crc(item, crc)
    elif isinstance(value, torch.ScriptObject):
        crc = packed_crc(value.__getstate__(), crc)
    return crc


class Classifier:
    """An exported Sift model: text in, logits and probabilities out."""

    def __init__(self, path):
        extra = {name: "" for name in EXTRA_FILES}
        try:
            self.module = torch.jit.load(path, map_location="cpu", _extra_files=extra)
        except Exception as e:  # a truncated file, or not TorchScript at all
            raise ExportError(f"{path} is not a readable TorchScript file "
                              f"(truncated, corrupted or not ours): {str(e).splitlines()[0]}")
        extra = {k: (v if isinstance(v, bytes) else v.encode()) for k, v in extra.items()}
        try:
            fmt = json.loads(extra["sift_format.json"])
            assert fmt["format"] == FORMAT_NAME
        except Exception:
            raise ExportError(f"{path} is not a Sift export (no valid sift_format.json)")
        if fmt["version"] > FORMAT_VERSION:
            raise ExportError(f"{path} is in Sift export format version {fmt['version']}; "
                              f"this reader reads up to {FORMAT_VERSION}")
        self._check_weights(path, fmt["crc32"]["weights"], fmt.get("packed", []))
        # An int8 export keeps its Linear layers' fp32 weights once for the products too small
        # for the int8 kernel (Sift's loader does the same); else each call unpacks them.
        if hasattr(self.module, "prepare_weights"):
            self.module.prepare_weights()
        self.labels = extra["labels.txt"].decode().splitlines()
        self.tok = json.loads(extra["tokenizer.json"])
        self.bag = self.tok["input"] == "bag"
        words = [w.encode() for w in self.tok.get("stopwords", [])]
        self.nfkc = self.tok.get("normalize", "none") == "nfkc"
        self.unicode = None
        if extra["unicode.json"]:
            self.unicode = UnicodeTables(json.loads(extra["unicode.json"]))
            if self.nfkc:
                words = [self.unicode.nfkc(w) for w in words]
            fold = self.unicode.casefold
        else:
            fold = lowercase_utf8
        self.stopwords = frozenset(fold(w) if self.tok["lowercase"] else w for w in words)
        self.wordpiece = None
        if self.tok["type"] == "wordpiece":  # BERT's vocab.txt: a token's id is its line
            self.pieces = None
            self.wordpiece = self.tok["wordpiece"]
            tokens = extra["vocab.txt"].decode("utf-8").split("\n")
            self.vocab = {t: i for i, t in enumerate(tokens[:-1] if tokens[-1] == "" else tokens)}
        elif self.tok["type"] == "sentencepiece":
            import sentencepiece  # Debian: python3-sentencepiece
            self.pieces = sentencepiece.SentencePieceProcessor(
                model_proto=extra["tokenizer.model"])
        else:
            self.pieces = None
            lines = extra["vocab.txt"].split(b"\n")
            if not lines[0].startswith(b"sift-vocab"):
                raise ExportError(f"{path}: vocab.txt is not a Sift vocabulary")
            self.vocab = {line.split(b"\t", 1)[0]: i + 2
                          for i, line in enumerate(l for l in lines[1:] if l)}

    def _check_weights(self, path, expected, packed):
        tensors = dict(self.module.named_parameters(recurse=False))
        tensors.update(dict(self.module.named_buffers(recurse=False)))
        crc = 0
        for name in sorted(tensors):
            crc = zlib.crc32(name.encode(), crc)
            t = tensors[name].detach().contiguous()
            if t.dtype == torch.bfloat16:  # numpy has no bf16: the same bytes as int16
                t = t.view(torch.int16)
            crc = zlib.crc32(t.numpy().tobytes(), crc)
        # int8 exports: weights packed for this process's quantized engine; their state
        # (int8 weights, per-row scales, biases) is what was written.
        for name in packed:
            crc = zlib.crc32(name.encode(), crc)
            crc = packed_crc(getattr(self.module, name), crc)
        if crc != expected:
            raise ExportError(f"{path} is corrupted: its weights do not match their checksum")

    def encode(self, text):
        """UTF-8 bytes -> model ids (TextEncoder::encode)."""
        t = self.tok
        max_length = t["max_length"]
        if self.wordpiece is not None:  # [CLS] pieces [SEP], at most max_length ids
            wp = self.wordpiece
            ids = []
            for word in bert_basic_tokens(text.decode("utf-8", "replace"), t["lowercase"],
                                          wp["strip_accents"], wp["split_cjk"]):
                ids += wordpiece_ids(word, self.vocab, wp)
            if max_length > 0:
                ids = ids[:max(max_length - 2, 0)]
            return [self.vocab[wp["cls"]]] + ids + [self.vocab[wp["sep"]]]
        if self.pieces is not None and t.get("piece_ids", "sift") != "sift":
            return model_piece_ids(self.pieces, t["piece_ids"], text.decode("utf-8", "replace"),
                                   t["lowercase"], max_length)
        if self.pieces is not None:
            ids = self.pieces.encode(text.decode("utf-8", "replace"), out_type=int)
            if max_length > 0:
                ids = ids[:max_length]
            ids = [p + 1 for p in ids]  # 0 is the padding id
            if self.bag and t["ngrams"] > 1:
                ids += ngram_ids(ids, t["ngrams"], t["buckets"], t["vocab_size"],
                                 t["ngram_hash_multiplier"])
            return ids
        fasttext_compat = t.get("fasttext_compat", False)
        if fasttext_compat:  # fastText's reading: ASCII whitespace, then "</s>"
            tokens = [w for w in re.split(rb"[ \t\n\r\v\f\0]+", text) if w] + [b"</s>"]
        elif self.unicode is not None:
            tokens = tokenize_unicode(text, self.unicode, t["lowercase"], t["split_punctuation"],
                                      t.get("drop_punctuation", False), self.nfkc,
                                      self.stopwords)
        else:
            tokens = tokenize(text, t["lowercase"], t["split_punctuation"],
                              t.get("drop_punctuation", False), self.stopwords)
        if max_length > 0:
            tokens = tokens[:max_length]
        if not self.bag:
            return [self.vocab.get(w, UNK) for w in tokens]
        if t.get("maxn", 0) > 0:  # each word's id (if known), then its character n-grams
            ids = []
            for w in tokens:
                ids += [self.vocab[w]] if w in self.vocab else []
                ids += char_ngram_ids(w, t["minn"], t["maxn"], t["buckets"], t["vocab_size"],
                                      fasttext_compat)
        else:
            ids = [self.vocab[w] for w in tokens if w in self.vocab]  # unknown words dropped
        if t["ngrams"] > 1:
            hashes = [hash_word(w, fasttext_compat) for w in tokens]
            ids += ngram_ids(hashes, t["ngrams"], t["buckets"], t["vocab_size"],
                             t["ngram_hash_multiplier"])
        return ids

    def inputs(self, texts):
        """A batch as the model's forward takes it: (ids, offsets) for bag models,
        (ids padded with 0, lengths >= 1) for sequence models."""
        encoded = [self.encode(text) for text in texts]
        if self.bag:
            offsets, flat = [], []
            for ids in encoded:
                offsets.append(len(flat))
                flat += ids
            return torch.tensor(flat, dtype=torch.int64), torch.tensor(offsets, dtype=torch.int64)
        lengths = [max(len(ids), 1) for ids in encoded]
        padded = torch.zeros(len(encoded), max(lengths), dtype=torch.int64)
        for row, ids in enumerate(encoded):
            padded[row, :len(ids)] = torch.tensor(ids, dtype=torch.int64)
        return padded, torch.tensor(lengths, dtype=torch.int64)

    @torch.no_grad()
    def logits(self, texts):
        return self.module.forward(*self.inputs(texts))

    @torch.no_grad()
    def predict_proba(self, texts):
        return self.module.predict_proba(*self.inputs(texts))

    def predict(self, texts, k=1):
        """The k most probable labels of each text (str or UTF-8 bytes) with their
        probabilities, best first: one list of (label, score) pairs per text."""
        batch = [t.encode() if isinstance(t, str) else t for t in texts]
        out = []
        for start in range(0, len(batch), 256):
            probs = self.predict_proba(batch[start:start + 256])
            values, indices = probs.topk(min(k, len(self.labels)), 1)
            for v, idx in zip(values.tolist(), indices.tolist()):
                out.append([(self.labels[i], p) for i, p in zip(idx, v)])
        return out

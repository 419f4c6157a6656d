"""BERT's basic + WordPiece tokenization as published (tokenization.py of google-research/bert,
as Hugging Face's slow BertTokenizer runs it, with its NFC step), on Python's unicodedata:
the independent side of tests/datasets/wordpiece_test.cc.

stdin: a JSON object {"vocab": [tokens], "lowercase": bool, "texts": [str]}
stdout: a JSON list, per text {"basic": [words], "pieces": [wordpieces]}
"""
import json
import sys
import unicodedata


def is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch):
    return ch not in "\t\n\r" and unicodedata.category(ch).startswith("C")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


CJK = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
       (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]


def basic(text, lowercase):
    out = []
    for ch in text:
        if ord(ch) == 0 or ord(ch) == 0xFFFD or is_control(ch):
            continue
        ch = " " if is_whitespace(ch) else ch
        out.append(f" {ch} " if any(a <= ord(ch) <= b for a, b in CJK) else ch)
    text = unicodedata.normalize("NFC", "".join(out))
    words = []
    for token in text.split():
        if lowercase:
            token = token.lower()
            token = "".join(c for c in unicodedata.normalize("NFD", token)
                            if unicodedata.category(c) != "Mn")
        run = ""
        for c in token:
            if is_punctuation(c):
                if run:
                    words.append(run)
                run = ""
                words.append(c)
            else:
                run += c
        if run:
            words.append(run)
    return words


def wordpieces(word, vocab):
    if len(word) > 100:
        return ["[UNK]"]
    pieces, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while start < end:
            part = ("##" if start > 0 else "") + word[start:end]
            if part in vocab:
                found = part
                break
            end -= 1
        if found is None:
            return ["[UNK]"]
        pieces.append(found)
        start = end
    return pieces


def main():
    job = json.load(sys.stdin)
    vocab = set(job["vocab"])
    result = []
    for text in job["texts"]:
        words = basic(text, job["lowercase"])
        result.append({"basic": words, "pieces": [p for w in words for p in wordpieces(w, vocab)]})
    json.dump(result, sys.stdout, ensure_ascii=False)


main()

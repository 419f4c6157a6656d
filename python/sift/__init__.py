"""Sift from Python: load a trained run folder or export and classify texts; train a
model from a YAML config or a dict; tokenize as training does.

    import sift
    model = sift.load("runs/trec")                 # a run folder or an export
    model.predict("how far is the moon ?")         # [("NUM", 0.87)]
    model.predict(["a", "b"], k=2)                 # one list of (label, score) per text
    summary = sift.train("configs/trec.yaml", train__epochs=2)

Predictions are `sift predict`'s: the same labels and scores for the same model and
text. Errors from Sift (a bad config key, a missing file) raise sift.Error with Sift's
one-line message; Ctrl-C during sift.train saves last.ckpt and raises KeyboardInterrupt.

sift.torch_export reads an export in PyTorch alone (its tokenizer in Python), without
the native module sift._sift that the rest needs.
"""

import json
import os

try:
    from ._sift import Error, __version__
    from . import _sift
except ImportError as _why:  # the source tree, or a copy of the pure-Python part
    _sift = None
    _MISSING = _why
    __version__ = "unknown"

    class Error(Exception):
        """Sift's one-line error message."""


def _native():
    if _sift is None:
        raise ImportError(
            "sift's native module (sift._sift) is not built here: build the package "
            "(cmake --build build --target sift_python) and put build/python on PYTHONPATH; "
            f"sift.torch_export reads exports without it ({_MISSING})")
    return _sift

__all__ = ["Error", "Model", "load", "train", "tokenize", "__version__"]


class Model:
    """A trained model: `sift.load(path)`."""

    def __init__(self, path):
        self._model = _native().Model(os.fspath(path))

    @property
    def labels(self):
        """The label names, in the run's order (labels.txt)."""
        return list(self._model.labels)

    @property
    def kind(self):
        """The model type: "fasttext", "transformer", "bert", ..."""
        return self._model.kind

    @property
    def multi_label(self):
        return self._model.multi_label

    def predict(self, texts, k=1, threshold=None):
        """The k most probable labels of each text with their probabilities, best first
        (multi-label models: every label over `threshold`, by default the run's
        train.threshold). A str gives one list of (label, score) pairs; a list of texts
        gives one such list per text."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be an integer of at least 1, not {k!r}")
        single = isinstance(texts, str)
        batch = [texts] if single else list(texts)
        for i, text in enumerate(batch):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] is {type(text).__name__}, not str")
        out = self._model.predict(batch, k, threshold)
        return out[0] if single else out

    def encode(self, text):
        """The ids the model reads for `text` (its tokenizer and vocabulary)."""
        return self._model.encode(text)

    def __repr__(self):
        return f"sift.Model({self._model.path!r}, kind={self.kind!r}, labels={len(self.labels)})"


def load(path):
    """Opens a run folder (best weights) or an export (.pt, .ptz, .ftz-style pq)."""
    return Model(path)


def _yaml_value(value):
    # JSON is YAML's flow syntax: strings quoted, lists as flow sequences.
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    return json.dumps(value)


def _flatten(prefix, tree, out):
    for key, value in tree.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            _flatten(name, value, out)
        else:
            out.append(f"{name}={_yaml_value(value)}")
    return out


def train(config=None, *, quiet=False, resume=None, allow_data_change=False, **overrides):
    """Trains as `sift train` does and returns the run's report (report.json) as a dict.

    `config` is a YAML file's path or a dict nested as the YAML would be ({"data":
    {"train": {"path": ...}}}), or None for defaults only. Keyword overrides are `--set`s:
    `train__epochs=2` or `**{"train.epochs": 2}`. `resume` continues a run folder."""
    path = ""
    assignments = []
    if isinstance(config, dict):
        _flatten("", config, assignments)
    elif config is not None:
        path = os.fspath(config)
    for key, value in overrides.items():
        assignments.append(f"{key.replace('__', '.')}={_yaml_value(value)}")
    report = _native().train(path, assignments, quiet, allow_data_change,
                         os.fspath(resume) if resume is not None else "")
    return json.loads(report)


def tokenize(text, lowercase=True, split_punctuation=True, drop_punctuation=False, nfkc=False):
    """The word tokens of `text` as Sift's word tokenizer splits them (the defaults are
    tokenizer.lowercase's and tokenizer.split_punctuation's)."""
    return _native().tokenize(text, lowercase, split_punctuation, drop_punctuation, nfkc)

"""The Python package end to end: train from Python, load run folders and exports, and
predict exactly what `sift predict` prints. Run by ctest (Python.*) with Debian's
python3-pytest against the build's package (SIFT_BUILD_DIR, SIFT_SOURCE_DIR)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

import sift

SOURCE = Path(os.environ.get("SIFT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("SIFT_BUILD_DIR", SOURCE / "build"))
SIFT = BUILD / "sift"
TREC = SOURCE / "tests" / "data" / "trec"
QUESTIONS = [
    "How far is it from Denver to Aspen ?",
    "What county is Modesto , California in ?",
    "Who was Galileo ?",
    "What is an atom ?",
    "When did Hawaii become a state ?",
    "Why does the moon turn orange ?",
]


def trec_config(run_dir, name, model_type="fasttext", epochs=3):
    """configs/trec.yaml's settings on the repository's TREC cut, as a dict."""
    config = {
        "run": {"dir": str(run_dir), "name": name, "threads": 1, "seed": 7},
        "data": {
            "train": {"path": str(TREC / "TREC.train.sample")},
            "test": {"path": str(TREC / "TREC.test.sample")},
            "format": "label_first",
            "encoding": "latin-1",
            "valid_split": 0,
        },
        "model": {"type": model_type},
        "train": {"epochs": epochs},
    }
    if model_type == "fasttext":
        config["model"].update({"dim": 10, "ngrams": 2, "buckets": 20000})
        config["train"].update(
            {"batch_size": 1, "loss_reduction": "sum", "optimizer": {"type": "sgd", "lr": 0.5}}
        )
    return config


def cli_predict(model, texts, tmp_path, k):
    """`sift predict`'s (label, score) pairs per text, from its JSON lines."""
    inputs = tmp_path / "texts.txt"
    inputs.write_text("".join(t + "\n" for t in texts))
    out = subprocess.run(
        [str(SIFT), "predict", "--model", str(model), "--input", str(inputs),
         "--top-k", str(k), "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    return [[(p["label"], p["score"]) for p in json.loads(line)["predictions"]]
            for line in out.splitlines()]


def assert_same_predictions(ours, theirs):
    assert len(ours) == len(theirs)
    for mine, cli in zip(ours, theirs):
        assert [label for label, _ in mine] == [label for label, _ in cli]
        # The CLI prints 4 decimals.
        assert [round(score, 4) for _, score in mine] == pytest.approx(
            [score for _, score in cli], abs=1e-4)


@pytest.fixture(scope="module")
def fasttext_run(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    summary = sift.train(trec_config(runs, "ft"), quiet=True)
    return runs / "ft", summary


@pytest.fixture(scope="module")
def textcnn_run(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    config = trec_config(runs, "cnn", model_type="textcnn", epochs=1)
    summary = sift.train(config, quiet=True, train__batch_size=32)
    return runs / "cnn", summary


def test_train_from_a_dict_returns_the_runs_report_and_learns(fasttext_run):
    run, summary = fasttext_run
    assert (run / "report.json").is_file()
    assert json.loads((run / "report.json").read_text())["splits"] == summary["splits"]
    test = summary["splits"]["test"]
    assert test["examples"] == 100
    # Six classes: chance is about 0.2; the fastText model on 600 questions learns more.
    assert test["accuracy"] > 0.45


def test_a_loaded_fasttext_run_predicts_what_sift_predict_prints(fasttext_run, tmp_path):
    run, _ = fasttext_run
    model = sift.load(run)
    assert model.kind == "fasttext"
    assert sorted(model.labels) == sorted((run / "labels.txt").read_text().split())
    assert_same_predictions(model.predict(QUESTIONS, k=3),
                            cli_predict(run, QUESTIONS, tmp_path, 3))


def test_one_text_gives_one_list_and_scores_are_probabilities(fasttext_run):
    model = sift.load(fasttext_run[0])
    top = model.predict("Who was Galileo ?", k=len(model.labels))
    assert [label for label, _ in top] and len(top) == len(model.labels)
    assert sum(score for _, score in top) == pytest.approx(1.0, abs=1e-4)
    assert [s for _, s in top] == sorted((s for _, s in top), reverse=True)
    assert model.predict(["Who was Galileo ?"], k=2)[0] == top[:2]


def test_a_textcnn_run_and_its_torchscript_export_predict_what_sift_predict_prints(
        textcnn_run, tmp_path):
    run, summary = textcnn_run
    assert summary["splits"]["test"]["examples"] == 100
    model = sift.load(run)
    assert model.kind == "textcnn"
    ours = model.predict(QUESTIONS, k=2)
    assert_same_predictions(ours, cli_predict(run, QUESTIONS, tmp_path, 2))
    export = tmp_path / "cnn.pt"
    subprocess.run([str(SIFT), "export", str(run), "--out", str(export)], check=True,
                   capture_output=True)
    exported = sift.load(export)
    assert exported.labels == model.labels
    assert_same_predictions(exported.predict(QUESTIONS, k=2),
                            cli_predict(export, QUESTIONS, tmp_path, 2))


def test_the_pure_python_reader_of_an_export_predicts_as_the_native_package(
        textcnn_run, tmp_path):
    """sift.torch_export (PyTorch alone, the tokenizer in Python) against sift.load, and
    examples/classify.py, its command line, from the source tree without the native module."""
    from sift.torch_export import Classifier
    export = tmp_path / "cnn_py.pt"
    subprocess.run([str(SIFT), "export", str(textcnn_run[0]), "--out", str(export)],
                   check=True, capture_output=True)
    native = sift.load(export).predict(QUESTIONS, k=2)
    assert_same_predictions(Classifier(str(export)).predict(QUESTIONS, k=2), native)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(["/usr/bin/python3", str(SOURCE / "examples" / "classify.py"),
                           str(export), "--top-k", "2", "--json"],
                          input="\n".join(QUESTIONS) + "\n", capture_output=True, text=True,
                          env=env, check=True)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert_same_predictions([[(p["label"], p["score"]) for p in line["predictions"]]
                             for line in lines], native)


def test_train_reads_a_yaml_path_with_keyword_overrides(tmp_path):
    config = tmp_path / "trec.yaml"
    # JSON is YAML: the same settings as a file.
    config.write_text(json.dumps(trec_config(tmp_path / "runs", "from_yaml", epochs=1)))
    summary = sift.train(config, quiet=True, **{"train.epochs": 2}, model__dim=8)
    saved = (tmp_path / "runs" / "from_yaml" / "config.yaml").read_text()
    assert "epochs: 2" in saved and "dim: 8" in saved
    assert summary["splits"]["test"]["examples"] == 100


def test_errors_raise_sift_error_naming_the_key_or_file(tmp_path):
    with pytest.raises(sift.Error, match="train.epoch"):
        sift.train(trec_config(tmp_path, "bad"), train__epoch=3)
    with pytest.raises(sift.Error, match="no_such_run"):
        sift.load(tmp_path / "no_such_run")
    missing = trec_config(tmp_path, "missing")
    missing["data"]["train"]["path"] = str(tmp_path / "absent.txt")
    with pytest.raises(sift.Error, match="absent.txt"):
        sift.train(missing, quiet=True)


def test_bad_arguments_to_predict_raise_before_any_work(fasttext_run):
    model = sift.load(fasttext_run[0])
    with pytest.raises(ValueError, match="k must be"):
        model.predict("a", k=0)
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        model.predict(["a", 3])


def test_tokenize_splits_as_the_word_tokenizer_does():
    assert sift.tokenize("Don't STOP!") == ["don", "'", "t", "stop", "!"]
    assert sift.tokenize("Don't STOP!", lowercase=False, split_punctuation=False) == [
        "Don't", "STOP!"]
    assert sift.tokenize("Straße") == ["strasse"]


def test_the_version_is_sifts():
    out = subprocess.run([str(SIFT), "--version"], check=True, capture_output=True,
                         text=True).stdout
    assert sift.__version__ in out

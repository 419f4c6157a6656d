#!/usr/bin/env python3
"""Each zoo model with a config of data paths alone (issue #41): the model's own defaults.

    python3 bench/defaults_zoo.py [--sift build/sift] [--sets trec,sst2] [--models textcnn,rnn,...]

For each set, the fastText-format files of bench/defaults_vs_fasttext.py, and `sift train
--set data.train.path=train --set data.test.path=test --set model.type=M` (nothing else:
the model's defaults, one run, its seed). Beside each: the fastText model's defaults on the
same files, and the tuned config's test accuracy where bench/results/model-zoo-accuracy.json
measured one (configs/trec_textcnn.yaml, configs/sst2_textcnn.yaml). Writes
bench/results/defaults-zoo.json and bench/RESULTS.md.
"""
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import defaults_vs_fasttext as base  # noqa: E402
import results_section  # noqa: E402

# The tuned configs' entries in model-zoo-accuracy.json, by (set, model).
TUNED = {("trec", "textcnn"): "trec_textcnn_10seeds", ("sst2", "textcnn"): "sst2_textcnn"}


def tuned_accuracy(entry):
    page = json.load(open(os.path.join(HERE, "results", "model-zoo-accuracy.json")))
    for table in page["tables"]:
        for row in table["rows"]:
            if row[0] == entry:
                return float(str(row[1]).split()[0])
    return None


def main():
    sys.argv, models = base_args()
    args = base.parse_args(__doc__)
    load_before = results_section.loadavg()
    rows = []
    for name in args.sets.split(","):
        with tempfile.TemporaryDirectory(prefix=f"defaults-zoo-{name}-") as work:
            base.SETS[name](args.data, work)
            floor, _ = base.sift_row(args.sift, work, "fasttext", [])
            for model in models:
                acc, seconds = base.sift_row(args.sift, work, model,
                                             ["--set", f"model.type={model}"])
                tuned = tuned_accuracy(TUNED[(name, model)]) if (name, model) in TUNED else None
                rows.append([name, model, round(acc, 4), round(floor, 4),
                             "-" if tuned is None else f"{tuned:.4f} ({TUNED[(name, model)]})",
                             "-" if tuned is None else f"{100 * (acc - tuned):+.1f}",
                             round(seconds, 1)])
                print(rows[-1], flush=True)
    page = {
        "family": "fasttext", "order": 61,
        "title": "Defaults of every zoo model: a config of data paths and model.type alone",
        "command": "`python3 bench/defaults_zoo.py`",
        "columns": ["set", "model.type", "test acc. (its defaults)",
                    "fastText model, its defaults", "tuned config (model zoo page)",
                    "defaults - tuned (pts)", "Sift s"],
        "rows": rows,
        "notes": ["One run each at the model's defaults and seed, one training thread; the "
                  "tuned figures are the model zoo page's (mean of seeds where it says so)."],
    }
    results_section.write_page("defaults-zoo", page, load_before)


def base_args():
    """(argv without --models, the model types): --models is this script's own flag."""
    argv, models = list(sys.argv), ["textcnn", "rnn", "transformer", "mlp"]
    if "--models" in argv:
        i = argv.index("--models")
        models = argv[i + 1].split(",")
        del argv[i:i + 2]
    return argv, models


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Few labels with and without `sift pretrain` (issue #43): AG News, TREC and SST-2.

    python3 bench/pretrain_few_labels.py [--sift build/sift] [--sets ag_news,trec,sst2]
        [--labels 1000|all] [--pretrain-steps 1800] [--pretrain-minutes 15] [--seeds 1,2,3]
        [--no-control] [--no-distill] [--pretrained WORK/SET] [--general 20ng]
        [--adapt-steps N] [--adapt-lr 0.001]
        [--work DIR] [--no-write]
    python3 bench/pretrain_few_labels.py --from WORK1/pretrain_few_labels.json,WORK2/...
        [--onto-page]

Data as tools/get_data.sh fetches it (data/ag_news: the 10,000-record training sample and
the 7,600-record test set; data/trec: TREC.train.all and TREC.test.all; data/sst2:
stsa.binary.{train,dev,test}; data/mr: rt-polarity.all). Per set:

  AG News: a fixed, balanced sample of --labels training records is labelled; another
           balanced 1,000 are the validation split. --labels all: every record but the
           1,000-label sample's validation split (9,001) is labelled.
  TREC:    500 training records (fixed, random) are the validation split; the other 4,952
           are labelled.
  SST-2:   stsa.binary.train is labelled (6,920), .dev the validation split, .test the test
           set; the pretraining texts are its training texts and MR's lines but those whose
           letters and digits (lowercased) equal or hold a dev or test sentence's, or equal
           a training sentence's (MR is the same Rotten Tomatoes snippets: sst2()).

Every run chooses its best weights on the validation split, and every choice below is
made on it; the test set is read only by each run's final evaluation. Rows:

  (a) the fastText model, its epochs and learning rate chosen on valid (FASTTEXT_GRID);
  (b) TextCNN from scratch (its defaults: Adam 1e-3; the best from-scratch zoo model on
      these sets in bench/RESULTS.md's model zoo table), --textcnn-epochs;
  (c) a BERT-family encoder pretrained by `sift pretrain` on every training text but the
      validation split's (labels dropped) for --pretrain-steps (the learning rate's
      warmup and linear decay; stopped at --pretrain-minutes if not done), with a WordPiece
      vocabulary from `sift tokenizer train`, then fine-tuned on the labelled records
      through train.init_from; the fine-tuning learning rate is chosen from --lrs by the
      validation accuracy of the first seed;
  (d) a fastText student (with (a)'s settings) distilled from (c) (alpha 0.5, T 2) with
      the pretraining texts as
      its transfer set (train.distill.unlabeled, --transfer-ratio per labelled example);
  (e) the control: (c)'s encoder shape, vocabulary and fine-tuning recipe (its learning
      rate chosen from --lrs the same way) from BERT's random initialisation, no
      pretraining: (c) minus (e) is what pretraining gave.
--no-distill and --no-control leave (d) and (e) out (time: on 9,001 AG News labels a
fine-tuning run takes about 6 minutes, a distillation more); --pretrained fine-tunes a
kept run's encoder when the pretraining texts are the same (AG News, all labels: the
1,000-label run's). --general 20ng adds ULMFiT's general-domain step with the text this
machine holds: one encoder for all of --sets, pretrained once on 20 Newsgroups' training
paragraphs and the sets' pretraining texts (general_pretraining), then fine-tuned per set
(the table names such rows "pretrained with 20NG text"; the issue's (c) is the set's texts
alone). --adapt-steps then adapts that encoder to each set (Gururangan et al. 2020's
task-adaptive pretraining: more masked-token steps on the set's own texts alone, a new cycle
peaking at --adapt-lr, in WORK/SET/runs/adapted) before fine-tuning ("then its own").

Fine-tuning pools the mean of the token states (--pooling): masked-token pretraining never
predicts [CLS], so its state is not trained to summarise the text.

Each row is trained with every seed of --seeds (fine-tuning starts from the one
pretrained encoder; seed s's student learns from seed s's (c)); the table gives the mean
test accuracy and its spread, and the mean validation accuracy. Pretraining throughput is
the median tokens/s of its metrics.csv rows; the curve is its validations' masked-token
accuracy (on the validation split's texts, never pretrained on) against the tokens seen
(steps x batch x median ids per text). Every run uses one thread (the machine's two CPU
slots). Each run keeps its measurements in WORK/pretrain_few_labels.json; --from joins
kept runs into bench/results/pretrain.json and bench/RESULTS.md (one table, a row a set).
"""
import argparse
import csv
import datetime
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import results_page  # noqa: E402
import results_section  # noqa: E402

ENCODER = {"model.type": "bert", "model.dim": 128, "model.layers": 2, "model.heads": 2,
           "model.ff_dim": 512, "model.max_positions": 128, "model.dropout": 0.1,
           "tokenizer.type": "wordpiece", "data.max_length": 128}
# Cramming's recipe on a small budget (Geiping & Goldstein 2022): pre-LN blocks (stable at a
# large learning rate), no dropout while pretraining, rows packed without padding, one
# cycle of the learning rate (warmup, then linear decay to 0 at the schedule's end).
ONE_THREAD = {"run.threads": 1, "data.workers": 1}
BATCH = 32  # fine-tuning's texts per step
FINETUNE_EPOCHS = 6  # --finetune-epochs' default
# Pretraining's texts per step: about 6,000 ids (100 packed rows of 64; TREC's questions are
# short, SST-2's sentences about 25 ids): at 1,600 ids a step no recipe tried on AG News left
# the unigram plateau (docs/pretraining.md).
PRETRAIN_BATCH = {"ag_news": 128, "trec": 512, "sst2": 256}
NAMES = {"ag_news": "AG News", "trec": "TREC-6", "sst2": "SST-2"}


def parse_args(doc):
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sift", default=os.path.join(ROOT, "build", "sift"))
    p.add_argument("--data", default=os.path.join(ROOT, "data"))
    p.add_argument("--sets", default="ag_news,trec")
    p.add_argument("--labels", type=lambda v: 0 if v == "all" else int(v), default=1000,
                   help="AG News labelled records (all: every one but the validation split's)")
    p.add_argument("--pretrain-minutes", type=float, default=15.0, help="a cap on each set's")
    p.add_argument("--pretrain-steps", type=int, default=1800,
                   help="the schedule's length (warmup_linear); 0: until the minutes end")
    p.add_argument("--pretrain-lr", type=float, default=0.005, help="the cycle's peak")
    p.add_argument("--warmup", type=float, default=0.06, help="share of the schedule warming up")
    p.add_argument("--pre-norm", action=argparse.BooleanOptionalAction, default=True,
                   help="pre-LN blocks (model.pre_norm)")
    p.add_argument("--positions", default="sinusoidal", choices=["learned", "sinusoidal"],
                   help="model.positions: the position table's start (both are learned)")
    p.add_argument("--pretrain-batch", type=int, default=0,
                   help="pretraining's texts a step (0: PRETRAIN_BATCH's for the set)")
    p.add_argument("--rows", type=int, default=64, help="pretrain.max_tokens: packed row length")
    p.add_argument("--pretrain-set", action="append", default=[], metavar="KEY=VALUE",
                   help="another key of the pretraining config (repeatable)")
    p.add_argument("--pretrain-only", action="store_true",
                   help="pretrain alone and print its curve (recipe probes; no table)")
    p.add_argument("--lrs", default="0.001,0.003", help="fine-tuning rates, chosen on valid")
    p.add_argument("--pooling", default="mean", help="fine-tuning's model.pooling (cls or mean)")
    p.add_argument("--finetune-epochs", type=int, default=FINETUNE_EPOCHS)
    p.add_argument("--textcnn-epochs", type=int, default=10)
    p.add_argument("--transfer-ratio", type=float, default=2.0)
    p.add_argument("--no-control", dest="control", action="store_false",
                   help="skip row (e), the random-init control (time)")
    p.add_argument("--no-distill", dest="distill", action="store_false",
                   help="skip row (d), the distilled student (time)")
    p.add_argument("--pretrained", default="",
                   help="a kept set folder (WORK/SET) whose encoder (runs/pretrained, vocab.txt)"
                        " is fine-tuned instead of pretraining again; its pretraining texts "
                        "must be this run's (a --general folder's: hold them)")
    p.add_argument("--general", default="", choices=["", "20ng"],
                   help="20ng: one encoder for every set of --sets, pretrained once in "
                        "WORK/general on 20 Newsgroups' training paragraphs and the sets' "
                        "pretraining texts (general_pretraining)")
    p.add_argument("--adapt-steps", type=int, default=0,
                   help="with a --general encoder: pretrain it this many steps more on the "
                        "set's own texts alone before fine-tuning (adapt); 0: off")
    p.add_argument("--adapt-lr", type=float, default=0.001, help="the adapting cycle's peak")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--work", default="", help="keep the runs here (default: a temporary folder)")
    p.add_argument("--no-write", action="store_true", help="print the table only")
    p.add_argument("--onto-page", action="store_true",
                   help="with --from: add its rows to the page's table as it stands (rows, "
                        "notes, command, stamp kept; each added run's note names its commit, "
                        "machine and date) rather than writing the table of its runs alone")
    p.add_argument("--from", dest="from_json", default="",
                   help="the table from the measurements runs kept (WORK/pretrain_few_labels.json"
                        ", comma-separated: their sets joined in that order)")
    return p.parse_args()


def ag_news(data, labels, _info):
    """(labelled, valid, test, more unlabelled texts) of AG News; labels 0: every record
    but the validation split's (the validation split of the 1,000-label sample)."""
    train = []
    with open(f"{data}/ag_news/train_sample_10k.tsv", encoding="utf-8") as f:
        for line in f:
            text, _, label = line.rstrip("\n").rpartition("\t")
            train.append((text, label.replace(" ", "_")))
    names = [c.strip() for c in open(f"{data}/ag_news/classes.txt", encoding="utf-8") if c.strip()]
    test = []
    with open(f"{data}/ag_news/test.csv", encoding="utf-8", newline="") as f:
        for row in csv.reader(f):
            text = " ".join(row[1:]).replace("\\n", " ").replace("\n", " ")
            test.append((text, names[int(row[0]) - 1].replace(" ", "_")))
    order = list(range(len(train)))
    random.Random(0).shuffle(order)
    classes = sorted({label for _, label in train})
    per = {"labelled": (labels or 1000) // len(classes), "valid": 1000 // len(classes)}
    taken = {name: {c: [] for c in classes} for name in per}
    rest = []
    for i in order:
        for name in ("labelled", "valid"):
            if len(taken[name][train[i][1]]) < per[name]:
                taken[name][train[i][1]].append(i)
                break
        else:
            rest.append(i)
    pick = lambda name: [train[i] for c in classes for i in taken[name][c]]
    if not labels:  # the sample's classes are not balanced (2,458 to 2,538): all of them
        valid = {i for c in classes for i in taken["valid"][c]}
        return [train[i] for i in order if i not in valid], pick("valid"), test, []
    return pick("labelled"), pick("valid"), test, [train[i][0] for i in rest]


def trec(data, _labels, _info):
    """(labelled, valid, test, []) records of TREC-6 ("LABEL text" lines)."""
    def read(path):
        out = []
        for line in open(path, encoding="latin-1"):
            label, _, text = line.rstrip("\n").partition(" ")
            out.append((text, "c" + label))
        return out
    train = read(f"{data}/trec/TREC.train.all")
    order = list(range(len(train)))
    random.Random(0).shuffle(order)
    valid = [train[i] for i in order[:500]]
    labelled = [train[i] for i in order[500:]]
    return labelled, valid, read(f"{data}/trec/TREC.test.all"), []


def normalised(text):
    """A text's letters and digits, lowercased: SST's tokens ("wo n't", "-lrb-") and MR's
    ("won't", "(") compare equal."""
    text = text.lower().replace("-lrb-", "").replace("-rrb-", "")
    return "".join(ch for ch in text if ch.isalnum())


def sst2(data, _labels, info):
    """(labelled, valid, test, MR's texts) of SST-2 ("LABEL text" lines). MR holds the same
    Rotten Tomatoes snippets, SST-2's dev and test sentences among them: an MR line is
    dropped when its normalised text equals a dev or test sentence's or contains one of 10
    characters or more (shorter ones, "a mess", are common phrases), and when it equals a
    training sentence (already in the pretraining texts); info counts each."""
    def read(path):
        out = []
        for line in open(path, encoding="utf-8"):
            label, _, text = line.rstrip("\n").partition(" ")
            out.append((text, {"0": "negative", "1": "positive"}[label]))
        return out
    labelled, valid, test = (read(f"{data}/sst2/stsa.binary.{split}")
                             for split in ("train", "dev", "test"))
    unseen = {normalised(t) for t, _ in valid + test}
    seen = {normalised(t) for t, _ in labelled}
    long_unseen = [u for u in unseen if len(u) >= 10]
    # MR is Latin-1; its lines end in \n alone (NEL, 0x85, is a character inside some).
    mr = [line.rstrip("\n") for line in open(f"{data}/mr/rt-polarity.all", encoding="latin-1",
                                             newline="\n")]
    more, equal, within, train_copies = [], 0, 0, 0
    for line in mr:
        text = line.partition(" ")[2]
        key = normalised(text)
        if key in unseen:
            equal += 1
        elif key in seen:
            train_copies += 1
        elif any(u in key for u in long_unseen):
            within += 1
        else:
            more.append(text)
    info.update({"mr_lines": len(mr), "mr_dropped_equal": equal, "mr_dropped_within": within,
                 "mr_dropped_train_copies": train_copies, "mr_kept": len(more)})
    return labelled, valid, test, more


SETS = {"ag_news": ag_news, "trec": trec, "sst2": sst2}
SCRATCH_ROW = "(e) (c) without pretraining: random init, same recipe"


def clean(text):
    return " ".join(text.split())  # no tab or newline inside a text


def encoder(args):
    """The encoder's keys: ENCODER, with --pre-norm pre-LN blocks, --positions' table."""
    return dict(ENCODER, **({"model.pre_norm": "true"} if args.pre_norm else {}),
                **{"model.positions": args.positions})


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line + "\n")


def sets(overrides):
    out = []
    for key, value in overrides.items():
        out += ["--set", f"{key}={value}"]
    return out


def sift(args, cmd, cwd):
    start = time.monotonic()
    done = subprocess.run([args.sift] + cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"sift {' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return done.stdout, time.monotonic() - start


def classify(args, work, name, seed, overrides):
    """(valid accuracy, test accuracy, seconds) of one classifier run."""
    base = {"run.dir": "runs", "run.name": f"{name}-{seed}", "run.seed": seed,
            "run.overwrite": "true", "data.train.path": "labelled.tsv",
            "data.valid.path": "valid.tsv", "data.test.path": "test.tsv", "data.format": "tsv",
            "data.text": "0", "data.label": "1"}
    base.update(ONE_THREAD)
    base.update(overrides)
    out, seconds = sift(args, ["train", "--quiet", "--json"] + sets(base), work)
    splits = json.loads(out)["splits"]
    return splits["valid"]["accuracy"], splits["test"]["accuracy"], seconds


def reuse(args, name, work, unlabelled):
    """pretrain()'s answer for the encoder of --pretrained, copied here: the kept run's
    pretraining seconds (its pretrain_few_labels.json, one folder up; a --general encoder's
    general.json), tokens/s and curve. A set's kept encoder must have been pretrained on
    this run's texts, a --general one on these and more."""
    kept = os.path.abspath(args.pretrained)
    general = os.path.exists(f"{kept}/general.json")
    with open(f"{kept}/unlabelled.txt", encoding="utf-8") as f:
        kept_texts = [line.rstrip("\n") for line in f]
    if (not set(unlabelled) <= set(kept_texts) if general
            else sorted(kept_texts) != sorted(unlabelled)):
        sys.exit(f"--pretrained {kept}: its pretraining texts are not this run's")
    shutil.copytree(f"{kept}/runs/pretrained", f"{work}/runs/pretrained", dirs_exist_ok=True)
    shutil.copy(f"{kept}/vocab.txt", f"{work}/vocab.txt")
    if general:
        with open(f"{kept}/general.json", encoding="utf-8") as f:
            was = json.load(f)
    else:
        with open(f"{os.path.dirname(kept)}/pretrain_few_labels.json", encoding="utf-8") as f:
            was = json.load(f)["results"][name]
    return (f"{work}/runs/pretrained", was["pretrain_seconds"], was["tokens_per_s"],
            [tuple(point) for point in was["curve"]], was["steps"], was.get("general"))


def newsgroup_paragraphs(data):
    """20 Newsgroups' training posts as paragraphs of prose (--general 20ng): past each
    post's headers, its blank-line-separated paragraphs without quoted (>, |, :) or address
    (@) lines, of 6 words or more, 60% of them alphabetic, cut at 200 words."""
    paragraphs = []
    for line in open(f"{data}/20ng/20ng_train.tsv", encoding="utf-8"):
        text = line.rstrip("\n").split("\t", 1)[1].replace("\\t", " ").replace("\\\\", "\\")
        body = text.split("\\n\\n", 1)[1] if "\\n\\n" in text else text
        for paragraph in body.split("\\n\\n"):
            kept = [l for l in paragraph.split("\\n")
                    if not l.lstrip().startswith((">", "|", ":")) and "@" not in l]
            words = " ".join(kept).split()
            if len(words) >= 6 and sum(w.isalpha() for w in words) >= 0.6 * len(words):
                paragraphs.append(" ".join(words[:200]))
    return paragraphs


def general_pretraining(args):
    """--general 20ng: ULMFiT's general-domain step on what this machine holds. One encoder
    for every set of --sets, pretrained in WORK/general on 20 Newsgroups' paragraphs and
    each set's pretraining texts (never a validation or test text), shuffled together; its
    curve is on the first set's validation texts. Returns the folder (--pretrained's)."""
    work = os.path.join(args.work, "general")
    os.makedirs(work, exist_ok=True)
    paragraphs = newsgroup_paragraphs(args.data)
    texts, held = list(paragraphs), None
    for name in args.sets.split(","):
        labelled, valid, _, more = SETS[name](args.data, args.labels, {})
        texts += [clean(t) for t, _ in labelled] + [clean(t) for t in more]
        held = held or [clean(t) for t, _ in valid]
    random.Random(1).shuffle(texts)
    write_lines(f"{work}/unlabelled.txt", texts)
    write_lines(f"{work}/held_out.txt", held)
    batch = args.pretrain_batch or 128
    run, seconds, tokens_per_s, curve, steps = pretrain(args, work, batch)
    info = {"pretrain_seconds": seconds, "tokens_per_s": tokens_per_s, "curve": curve,
            "steps": steps, "general": {
                "corpus": "20ng", "paragraphs": len(paragraphs),
                "words": sum(len(p.split()) for p in paragraphs), "texts": len(texts),
                "sets": args.sets, "batch": batch}}
    with open(f"{work}/general.json", "w", encoding="utf-8") as f:
        json.dump(info, f, indent=1)
    print("general pretrained", f"{seconds:.0f} s", f"{tokens_per_s:.0f} tokens/s",
          f"{steps} steps", flush=True)
    return work


def pretrain(args, work, batch):
    """The pretraining run: its folder, seconds, median tokens/s and its accuracy curve."""
    with open(f"{work}/tokenizer.yaml", "w", encoding="utf-8") as f:
        f.write("pretrain: {files: [unlabelled.txt]}\ntokenizer: {type: wordpiece, model: "
                "vocab.txt, vocab_size: 8000, sample_lines: 20000}\n")
    sift(args, ["tokenizer", "train", "tokenizer.yaml"], work)
    over = {"train.optimizer.lr": args.pretrain_lr,
            "train.max_steps": args.pretrain_steps or 100000}
    over.update(dict(kv.split("=", 1) for kv in args.pretrain_set))
    return masked_lm(args, work, "pretrained", batch, encoder(args), over)


def adapt(args, work, run, batch):
    """--adapt-steps, Gururangan et al.'s task-adaptive step: the --general encoder `run`
    pretrained --adapt-steps more on the set's own pretraining texts alone (its vocabulary,
    a new cycle peaking at --adapt-lr). Its folder and the row's "adapt" record."""
    over = {"train.init_from": run, "train.optimizer.lr": args.adapt_lr,
            "train.max_steps": args.adapt_steps, "train.eval_every": 100}
    adapted, seconds, _, curve, steps = masked_lm(args, work, "adapted", batch, {}, over)
    return adapted, {"steps": steps, "seconds": seconds, "lr": args.adapt_lr, "batch": batch,
                     "curve": curve}


def masked_lm(args, work, name, batch, model, over):
    """`sift pretrain` in WORK on unlabelled.txt (held_out.txt measures it): run `name` of
    `model`'s keys, the bench's recipe (`batch` texts a step) and `over`'s keys over both,
    stopped by SIGTERM (which saves where it stands) at --pretrain-minutes. Its folder,
    seconds, median tokens/s and its masked-token accuracy curve."""
    keys = dict(model)
    keys.update(ONE_THREAD)
    keys.update({"run.dir": "runs", "run.name": name, "run.seed": 1,
                 "run.overwrite": "true", "pretrain.files": "[unlabelled.txt]",
                 "pretrain.valid": "[held_out.txt]", "pretrain.max_tokens": args.rows,
                 "tokenizer.model": "vocab.txt", "train.batch_size": batch,
                 "train.epochs": 1000, "train.eval_every": 200, "train.log_every": 20,
                 "train.optimizer.type": "adamw", "train.scheduler.type": "warmup_linear",
                 "train.scheduler.warmup_ratio": args.warmup, "model.dropout": 0.0})
    keys.update(over)
    cmd = ["pretrain", "--quiet", "--json"] + sets(keys)
    start = time.monotonic()
    proc = subprocess.Popen([args.sift] + cmd, cwd=work, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=args.pretrain_minutes * 60)
    except subprocess.TimeoutExpired:
        proc.terminate()  # SIGTERM: the run saves last.ckpt and best.ckpt where it stands
        proc.wait()
    else:
        if proc.returncode != 0:
            sys.exit(f"sift {' '.join(cmd)} failed:\n{proc.stderr.read()[-2000:]}")
    seconds = time.monotonic() - start
    run = f"{work}/runs/{name}"
    rows = list(csv.DictReader(open(f"{run}/metrics.csv", encoding="utf-8")))
    train_rows = [r for r in rows if r.get("tokens_per_s") not in ("", None, "nan")]
    tokens_per_s = statistics.median(float(r["tokens_per_s"]) for r in train_rows)
    ids_per_text = statistics.median(float(r["tokens_per_s"]) / float(r["examples_per_s"])
                                     for r in train_rows)
    curve = [(int(r["step"]), int(int(r["step"]) * batch * ids_per_text),
              float(r["valid_masked_accuracy"]), float(r["valid_mask_accuracy"]),
              float(r["valid_loss"]))
             for r in rows if r.get("valid_masked_accuracy") not in ("", None)]
    steps = int(rows[-1]["step"]) if rows else 0
    return run, seconds, tokens_per_s, curve, steps


# fastText's settings for (a) and (d)'s student, chosen on the validation split: its
# defaults (5 epochs) leave a linear model on 1,000 texts near chance.
FASTTEXT_GRID = {
    "epochs 5": {},
    "epochs 25": {"train.epochs": 25},
    "epochs 25, lr 0.5": {"train.epochs": 25, "train.optimizer.lr": 0.5},
    "epochs 50, lr 0.5": {"train.epochs": 50, "train.optimizer.lr": 0.5},
}


def run_prefix(name, grid, label):
    return f"{name}-{list(grid).index(label)}"


def teacher_run(label, args):
    return run_prefix("finetuned", [f"lr {lr}" for lr in args.lrs.split(",")], label)


def lr_grid(args):
    return {f"lr {lr}": {"train.optimizer.lr": lr} for lr in args.lrs.split(",")}


def choose(args, work, name, seeds, base, grid):
    """(the label of grid's setting best on the validation split with seeds[0], its runs
    over every seed, {label: that valid accuracy}): every setting runs with the first seed."""
    tried = {label: classify(args, work, run_prefix(name, grid, label), seeds[0],
                             dict(base, **over))
             for label, over in grid.items()}
    best = max(tried, key=lambda k: tried[k][0])
    runs = [tried[best]] + [classify(args, work, run_prefix(name, grid, best), s,
                                     dict(base, **grid[best])) for s in seeds[1:]]
    return best, runs, {label: valid for label, (valid, _, _) in tried.items()}


def run_set(args, name, seeds):
    info = {}
    labelled, valid, test, more = SETS[name](args.data, args.labels, info)
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    write_lines(f"{work}/labelled.tsv", [f"{clean(t)}\t{l}" for t, l in labelled])
    write_lines(f"{work}/valid.tsv", [f"{clean(t)}\t{l}" for t, l in valid])
    write_lines(f"{work}/test.tsv", [f"{clean(t)}\t{l}" for t, l in test])
    # Pretraining reads every training text but the validation split's, which measure it.
    write_lines(f"{work}/held_out.txt", [clean(t) for t, _ in valid])
    unlabelled = [clean(t) for t, _ in labelled] + [clean(t) for t in more]
    write_lines(f"{work}/unlabelled.txt", unlabelled)
    out = {"labelled": len(labelled), "unlabelled": len(unlabelled), "rows": {}, **info}
    if name == "ag_news" and not args.labels:
        out["all_labels"] = True
    log = lambda *a: print(name, *a, flush=True)

    out["batch"] = args.pretrain_batch or PRETRAIN_BATCH[name]
    out["finetune_epochs"] = args.finetune_epochs
    if not args.pretrain_only:
        run_baselines(args, work, seeds, out, log)
    if args.pretrained:
        (run, out["pretrain_seconds"], out["tokens_per_s"], out["curve"], out["steps"],
         general) = reuse(args, name, work, unlabelled)
        out["pretrained_from"] = args.pretrained
        if general:  # the encoder's own batch, not the set's
            out["general"], out["batch"] = general, general["batch"]
        if args.adapt_steps:  # main() checked that the encoder is a --general one
            run, out["adapt"] = adapt(args, work, run, args.pretrain_batch or PRETRAIN_BATCH[name])
    else:
        run, out["pretrain_seconds"], out["tokens_per_s"], out["curve"], out["steps"] = \
            pretrain(args, work, out["batch"])
    log("pretrained", f"{out['pretrain_seconds']:.0f} s", f"{out['tokens_per_s']:.0f} tokens/s",
        f"{out['steps']} steps")
    if args.pretrain_only:
        for stage, curve in [("", out["curve"]), ("adapted ", out.get("adapt", {}).get("curve"))]:
            for step, tokens, masked, at_mask, loss in curve or []:
                log(f"{stage}step {step} tokens {tokens / 1e6:.2f}M masked_accuracy {masked:.3f} "
                    f"mask_accuracy {at_mask:.3f} valid_loss {loss:.3f}")
        return out
    scratch = encoder(args)
    scratch.update({"tokenizer.model": "vocab.txt", "model.pooling": args.pooling,
                    "train.epochs": args.finetune_epochs, "train.batch_size": BATCH})
    fine = dict(scratch, **{"train.init_from": run})
    teacher, out["rows"]["(c) sift pretrain + fine-tune"], out["lr_valid"] = choose(
        args, work, "finetuned", seeds, fine, lr_grid(args))
    out["lr"] = teacher
    log("fine-tuned", teacher, out["rows"]["(c) sift pretrain + fine-tune"])
    if not args.distill:
        return out
    student = dict(FASTTEXT_GRID[out["fasttext"]])
    out["rows"]["(d) (c) distilled into fastText"] = [
        classify(args, work, "distilled", s, dict(student, **{
            "train.distill.teacher": f"runs/{teacher_run(teacher, args)}-{s}",
            "train.distill.alpha": 0.5, "train.distill.temperature": 2,
            "train.distill.unlabeled": "[unlabelled.txt]",
            "train.distill.unlabeled_ratio": args.transfer_ratio}))
        for s in seeds]
    log("distilled", out["rows"]["(d) (c) distilled into fastText"])
    if not args.control:
        return out
    out["scratch_lr"], out["rows"][SCRATCH_ROW], out["scratch_lr_valid"] = choose(
        args, work, "scratch", seeds, scratch, lr_grid(args))
    log("from random init", out["scratch_lr"], out["rows"][SCRATCH_ROW])
    return out


def run_baselines(args, work, seeds, out, log):
    """Rows (a) and (b): fastText (its settings chosen on valid) and TextCNN."""
    out["fasttext"], out["rows"]["(a) fastText"], out["fasttext_valid"] = choose(
        args, work, "fasttext", seeds, {}, FASTTEXT_GRID)
    log("fasttext", out["fasttext"], out["rows"]["(a) fastText"])
    out["rows"]["(b) TextCNN from scratch"] = [
        classify(args, work, "textcnn-0", s,
                 {"model.type": "textcnn", "train.epochs": args.textcnn_epochs})
        for s in seeds]
    log("textcnn", out["rows"]["(b) TextCNN from scratch"])


def mean(values):
    return statistics.mean(values)


def mean_sd(values):
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean(values):.4f} ± {sd:.4f}"


ROWS = ["(a) fastText", "(b) TextCNN from scratch", "(c) sift pretrain + fine-tune",
        "(d) (c) distilled into fastText", SCRATCH_ROW]
COLUMNS = ["(a) fastText", "(b) TextCNN", "(c) sift pretrain + fine-tune",
           "(d) (c) distilled into fastText", "(e) (c)'s recipe from random init"]


def set_name(name, r):
    """The table's name of a set's run; `name` is the set, or SET#N when runs were joined."""
    every = "all " if r.get("all_labels") else ""
    # All-label rows were fine-tuned for more than one number of epochs.
    epochs = (f", fine-tuned {r.get('finetune_epochs', FINETUNE_EPOCHS)} epochs"
              if r.get("all_labels") else "")
    general = (", pretrained with 20NG text" + (", then its own" if r.get("adapt") else "")
               if r.get("general") else "")
    return f"{NAMES[name.split('#')[0]]}, {every}{r['labelled']:,} labels{general}{epochs}"


def encoder_note(r):
    """How a row's encoder was pretrained: its minutes, steps and throughput, with the
    general corpus of a 20NG encoder, or the kept run it reuses."""
    took = (f"{r['pretrain_seconds'] / 60:.1f} min, {r['steps']} steps of {r['batch']} "
            f"texts, {r['tokens_per_s']:.0f} tokens/s")
    g = r.get("general")
    if g:
        return (f"with {g['paragraphs']:,} paragraphs of 20 Newsgroups' training posts "
                f"({g['words'] / 1e6:.1f}M words) and the texts of "
                f"{' and '.join(NAMES[n] for n in g['sets'].split(','))}, {g['texts']:,} in all, "
                f"in one encoder for those sets (--general 20ng): {took}")
    if r.get("pretrained_from"):
        return f"{took}, an encoder kept by another run of the same texts (--pretrained)"
    return took


def adapt_note(r):
    """The --adapt-steps stage of a row ("" without one): steps, minutes, accuracy."""
    ad = r.get("adapt")
    if not ad:
        return ""
    note = (f"; then {ad['steps']} steps of {ad['batch']} of the set's own texts alone "
            f"(--adapt-steps, peak lr {ad['lr']:g}): {ad['seconds'] / 60:.1f} min")
    marks = ad["curve"][::max(1, (len(ad["curve"]) - 1) // 2)]
    if marks:
        note += "; its masked-token accuracy " + ", ".join(
            f"{acc:.3f} at step {step}" for step, _, acc, _, _ in marks)
    return note


def table(results):
    """One row a set: each of ROWS' test accuracy (mean ± sd over the seeds), its mean
    validation accuracy and training seconds; a row a run left out reads "not run"."""
    rows, notes = [], []
    for name, r in results.items():
        test = {k: mean([t for _, t, _ in runs]) for k, runs in r["rows"].items()}
        a, b, c = (test[k] for k in ROWS[:3])
        cell = lambda runs: (f"{mean_sd([t for _, t, _ in runs])} "
                             f"({mean([v for v, _, _ in runs]):.4f}, "
                             f"{mean([s for _, _, s in runs]):.0f} s)")
        cells = [cell(r["rows"][k]) if k in r["rows"] else "not run" for k in ROWS]
        against = [f"(c) {(c - max(a, b)) * 100:+.1f} over the best of (a), (b)"]
        if r.get("all_labels"):
            against.append(f"{(c - b) * 100:+.1f} over (b)")
        if ROWS[3] in test:
            against.append(f"(d) keeps {(test[ROWS[3]] - a) / (c - a):.0%} of (c)'s gain over (a)"
                           if c > a else "(c) not ahead of (a)")
        if SCRATCH_ROW in test:
            against.append(f"pretraining gave {(c - test[SCRATCH_ROW]) * 100:+.1f} ((c) - (e))")
        rows.append([set_name(name, r)] + cells + ["; ".join(against)])
        points = r["curve"][::max(1, (len(r["curve"]) - 1) // 2)]
        curve = ", ".join(f"{tokens / 1e6:.1f}M {acc:.3f}" for _, tokens, acc, _, _ in points)
        chosen = lambda label, tried: f"{r[label]} (" + ", ".join(
            f"{k}: {v:.3f}" for k, v in r[tried].items()) + ")"
        g = r.get("general")
        mr = (f"; MR: {r['mr_lines']:,} lines, {r['mr_dropped_equal']:,} dropped as SST-2 dev/test "
              f"sentences, {r['mr_dropped_within']:,} as holding one (10+ characters), "
              f"{r['mr_dropped_train_copies']:,} as copies of its training sentences"
              if "mr_lines" in r else "")
        notes.append(
            f"{set_name(name, r)}: pretrained on {r['unlabelled']:,} texts{mr}"
            f"{' ' if g and not mr else '; '}{encoder_note(r)}; "
            f"masked-token accuracy against tokens seen {curve}{adapt_note(r)}. On valid (seed 1): "
            "fine-tuning " + chosen("lr", "lr_valid")
            + (", random init " + chosen("scratch_lr", "scratch_lr_valid")
               if "scratch_lr" in r else "")
            + ", fastText " + chosen("fasttext", "fasttext_valid")
            + (f"; fine-tuning {r['finetune_epochs']} epochs"
               if r.get("finetune_epochs", FINETUNE_EPOCHS) != FINETUNE_EPOCHS else "") + ".")
    return rows, [" ".join(notes)]  # one bullet for every set's: the page has a line cap


def kept_runs(paths):
    """The measurements of the runs kept at `paths` (comma-separated), their sets joined."""
    joined = {"results": {}, "minutes": 0.0, "commands": [], "commits": []}
    for path in paths.split(","):
        with open(path, encoding="utf-8") as f:
            kept = json.load(f)
        joined.setdefault("load_before", kept["load_before"])
        joined["load_after"] = kept["load_after"]
        for name, r in kept["results"].items():
            joined["results"][f"{name}#{len(joined['results'])}"] = r
        joined["minutes"] += kept["minutes"]
        joined["commands"].append(kept.get("command") or f"(a run kept at {path})")
        joined["commits"].append(kept.get("commit", "?"))
    return joined


def add_to_page(rows, set_notes, commands, commits):
    """--onto-page: `rows` joined to the page's table as it stands, the runs' commands to its
    command and their notes, commit, machine and date to its notes of the sets."""
    path = os.path.join(results_page.RESULTS_DIR, "pretrain.json")
    with open(path, encoding="utf-8") as f:
        section = json.load(f)
    t = section["tables"][0]
    t["rows"] += rows
    t["command"] += "; " + "; ".join(commands)
    t["notes"][1] += (f" {set_notes} (Added at commit {', '.join(commits)} on "
                      f"{results_section.this_machine()}, {datetime.date.today().isoformat()}.)")
    results_section.save_section("pretrain", section)


def main():
    args = parse_args(__doc__)
    args.sift = os.path.abspath(args.sift)
    args.data = os.path.abspath(args.data)
    seeds = [int(s) for s in args.seeds.split(",")]
    command = " ".join(["python3", os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:])
    if args.from_json:
        kept = kept_runs(args.from_json)
        load_before, results, minutes = kept["load_before"], kept["results"], kept["minutes"]
        load_after, commands, commits = kept["load_after"], kept["commands"], kept["commits"]
    else:
        load_before = results_section.loadavg()
        start = time.monotonic()
        if args.adapt_steps and not (args.general or
                                     os.path.exists(f"{args.pretrained}/general.json")):
            sys.exit("--adapt-steps continues a --general encoder (--general 20ng, or "
                     "--pretrained WORK/general)")
        args.work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="pretrain-bench-"))
        if args.general and not args.pretrained:
            args.pretrained = general_pretraining(args)
        results = {name: run_set(args, name, seeds) for name in args.sets.split(",")}
        minutes = (time.monotonic() - start) / 60
        load_after = results_section.loadavg()
        commands, commits = [command], [results_section.this_commit()]
        # Kept with --pretrain-only too: --pretrained WORK/SET reads the encoder's figures here.
        with open(os.path.join(args.work, "pretrain_few_labels.json"), "w", encoding="utf-8") as f:
            json.dump({"load_before": load_before, "load_after": load_after, "command": command,
                       "commit": commits[0], "results": results, "minutes": minutes}, f, indent=1)
        if args.pretrain_only:
            return
    rows, notes = table(results)
    if args.onto_page:
        return add_to_page(rows, notes[0], commands, commits)
    notes = [
        "Each cell: test accuracy, mean ± sd over the seeds (valid mean, train s). (b) is "
        "TextCNN, the best from-scratch zoo model on these sets in the model zoo table; (d) "
        "is the fastText model, so it predicts at fastText's speed. Targets of issue #43: (c) "
        "+3 over the best of (a), (b) at 1,000 AG News labels, +1 on TREC, no worse than (b) "
        "with all labels; (d) keeps half of (c)'s gain over (a). Rows not run: for time."
    ] + notes + [
        f"Encoder: BERT-family, 2 layers, dim 128, 2 heads, ff 512, "
        f"{'pre-LN' if args.pre_norm else 'post-LN'}, position table started {args.positions}, "
        f"WordPiece vocabulary of 8,000 from `sift tokenizer train`; pretraining at most "
        f"{args.pretrain_minutes:g} min (the issue allows 60; a 20NG row's note gives its "
        f"own), AdamW at a peak of {args.pretrain_lr:g}, warmup {args.warmup:g} of "
        f"{args.pretrain_steps} steps (or the note's) then "
        f"linear decay, no dropout, rows of {args.rows} packed ids, the masked-token head's "
        f"bias started at the unigram distribution; the pretraining texts are the set's "
        f"training texts but the validation split's, which measure masked-token accuracy "
        f"(every chosen token, the 10% left unchanged too: copying alone scores about 0.1). "
        f"Fine-tuning: {args.finetune_epochs} epochs (a set's note gives its own where they "
        f"differ) of {BATCH} texts, AdamW, warmup 0.1 then "
        f"linear decay, dropout 0.1, model.pooling {args.pooling}. "
        + (f"{len(commands)} runs (the command's), at commits {', '.join(commits)}, each kept "
           f"in its WORK/pretrain_few_labels.json and joined with --from; "
           if len(commands) > 1 else "") + f"{minutes:.0f} min in all. AG News here is the "
        "10,000-record training sample, not the issue's 120,000 texts."]
    columns = ["set"] + COLUMNS + ["against the targets"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print("\n".join("- " + n for n in notes))
    if args.no_write:
        return
    page = {
        "family": "accuracy", "order": 80,
        "title": "Few labels with `sift pretrain` (" +
                 ", ".join(dict.fromkeys(NAMES[n.split("#")[0]] for n in results)) + "), seeds " +
                 ", ".join(str(s) for s in seeds),
        "command": "; ".join(commands),
        "columns": columns, "rows": rows, "notes": notes,
    }
    results_section.write_page("pretrain", page, load_before, load_after)


if __name__ == "__main__":
    main()

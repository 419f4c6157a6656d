#!/usr/bin/env python3
"""bench/RESULTS.md from bench/results/*.json: one command, no hand edits.

    python3 bench/results_page.py           # writes bench/RESULTS.md
    python3 bench/results_page.py --check   # exit 1 if RESULTS.md is not what the JSON gives,
                                            # or a table lacks its command, commit, machine,
                                            # date or load

A page file holds one table or several:

    {"title", "command", "commit", "machine", "date", "load", "columns", "rows",
     "notes" (optional list), "plot" (optional, relative to bench/)}
    {"family": "fasttext", "order": 1, "intro": "...", "tables": [ {as above}, ... ]}

The family (default: the file's name) picks the section; sections come in FAMILIES' order,
targets first, then any other family by name; within a family, by "order" (default
50), then file name. Other JSON files in bench/results (raw data
such as model_bench.json) are left alone. The bench scripts write their page files through
bench/results_section.py, which calls this.
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS_DIR = os.path.join(HERE, "results")
PAGE = os.path.join(HERE, "RESULTS.md")
REQUIRED = ("command", "commit", "machine", "date", "load")

# (family, section heading), in page order.
FAMILIES = [
    ("targets", "Targets"),
    ("fasttext", "Against the fastText CLI"),
    ("python", "Against PyTorch in Python"),
    ("memory", "Memory against data size"),
    ("export", "Export precisions"),
    ("compression", "Compression: pq and pruning"),
    ("distillation", "Distillation"),
    ("tuning", "Tuning: sift tune against fastText autotune"),
    ("serving", "Serving"),
    ("distributed", "Distributed training"),
    ("accuracy", "Model zoo accuracy"),
    ("precision", "Mixed precision and gradient checkpointing"),
    ("throughput", "Data pipeline throughput"),
    ("watching", "Where the time goes"),
    ("reliability", "Reliability: fuzzing"),
]
ALIASES = {"serve": "serving"}


def is_page_file(data):
    return isinstance(data, dict) and ("tables" in data or ("columns" in data and "rows" in data))


def load_pages(results_dir=RESULTS_DIR):
    """{family: [(file name, page dict)]} of every page file, by file name."""
    pages = {}
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if not is_page_file(data):
            continue
        stem = os.path.splitext(os.path.basename(path))[0]
        if "tables" not in data:
            data = {"heading": data.get("title", stem), "tables": [data]}
        family = data.get("family") or ALIASES.get(stem, stem)
        pages.setdefault(family, []).append((os.path.basename(path), data))
    for files in pages.values():
        files.sort(key=lambda f: (f[1].get("order", 50), f[0]))
    return pages


def problems(pages):
    """One line per table that lacks a field every table must have."""
    out = []
    for family, files in pages.items():
        for name, data in files:
            for i, t in enumerate(data["tables"]):
                for key in REQUIRED + ("columns", "rows"):
                    if not t.get(key):
                        out.append(f"bench/results/{name}: table {i + 1} "
                                   f"({t.get('title', 'no title')!r}) has no {key}")
                for r, row in enumerate(t.get("rows") or []):
                    if len(row) != len(t.get("columns") or []):
                        out.append(f"bench/results/{name}: table {i + 1} row {r + 1} has "
                                   f"{len(row)} cells for {len(t['columns'])} columns")
    return out


def code(text):
    text = str(text)
    return text if "`" in text else f"`{text}`"


def cell(value):
    return str(value).replace("|", "\\|").replace("\n", " ")


def render_table(t):
    """The table's header line (title, command, commit, machine, date, load), the table,
    its notes, then its plot."""
    lines = [f"**{t['title']}.** command {code(t['command'])} · commit `{t['commit']}` · "
             f"machine {t['machine']} · date {t['date']} · load {t['load']}", ""]
    lines.append("| " + " | ".join(cell(c) for c in t["columns"]) + " |")
    lines.append("|" + "---|" * len(t["columns"]))
    for row in t["rows"]:
        lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    lines += [f"- {n}" for n in t.get("notes") or []]
    if t.get("plot"):
        lines += ["", f"![{t['title']}]({t['plot']})"]
    lines.append("")
    return lines


def anchor(heading):
    keep = "".join(ch for ch in heading.lower() if ch.isalnum() or ch in " -")
    return keep.replace(" ", "-")


def render(pages):
    known = [f for f, _ in FAMILIES]
    order = [(f, h) for f, h in FAMILIES if f in pages or f == "serving"]
    order += [(f, pages[f][0][1].get("heading", f)) for f in sorted(pages) if f not in known]
    out = ["# Benchmark results", "",
           "Generated by `python3 bench/results_page.py` from `bench/results/*.json`; do not edit"
           " by hand (the bench scripts write the JSON: bench/README.md). Each table names the"
           " command that produced it, the commit, the machine, the date and the load average;"
           " the machine is shared, so read ratios measured side by side, not absolute times."
           " Earlier measurements and the work log: `git log -p bench/RESULTS.md`.", "",
           "Contents: " + " · ".join(f"[{h}](#{anchor(h)})" for _, h in order), ""]
    for family, heading in order:
        out += [f"## {heading}", ""]
        files = pages.get(family, [])
        if not files:
            out += ["Not measured yet: no `bench/results/*.json` of this family"
                    f" (`\"family\": \"{family}\"`).", ""]
        for _, data in files:
            if data.get("intro"):
                out += [data["intro"], ""]
            for t in data["tables"]:
                out += render_table(t)
    return "\n".join(out).rstrip("\n") + "\n"


def write_atomically(path, text):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main(argv):
    check = "--check" in argv[1:]
    unknown = [a for a in argv[1:] if a != "--check"]
    if unknown:
        print(f"results_page.py: error: unknown argument {unknown[0]} (use --check or nothing)",
              file=sys.stderr)
        return 2
    pages = load_pages()
    bad = problems(pages)
    for line in bad:
        print(f"results_page.py: error: {line}", file=sys.stderr)
    if bad:
        return 1
    text = render(pages)
    if check:
        current = open(PAGE, encoding="utf-8").read() if os.path.exists(PAGE) else ""
        if current != text:
            print("results_page.py: error: bench/RESULTS.md is not what bench/results/*.json "
                  "gives: run python3 bench/results_page.py", file=sys.stderr)
            return 1
        return 0
    write_atomically(PAGE, text)
    print(f"written to {os.path.relpath(PAGE)} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

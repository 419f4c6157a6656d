"""Writes one bench script's results as bench/results/NAME.json, then bench/RESULTS.md.

A script hands over what it measured as markdown, as before: bullet lines of set-up
("- run: `CMD`, DATE; Sift `COMMIT`", "- machine: ...", "- date: ...; sift commit X"),
one or more tables, and notes. The tables become the page file's tables; the command,
commit, machine, date and load each table is headed by come from those lines where the
script wrote them, else from this machine now (the measurement has just run). The page
is then made again from every page file (bench/results_page.py).
"""
import datetime
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results_page  # noqa: E402

# Which section of the page each script's results belong to.
FAMILY = {
    "compare-summary": "targets", "fasttext-compare": "fasttext", "python-compare": "python",
    "model-bench": "python", "memory": "memory", "memory-inmemory": "memory",
    "throughput": "throughput", "model-zoo-accuracy": "accuracy", "precision": "precision",
    "precision-accuracy": "precision", "distributed": "distributed", "multihost": "distributed",
    "export": "export",
    "export_dtypes": "export", "tune": "tuning", "distill": "distillation",
    "prune": "compression", "pq_compression": "compression", "fuzz": "reliability",
    "sharding": "distributed", "sharding-stage3": "distributed", "sharding-rows": "distributed",
    "finetune-hf-sst2": "finetune-hf",
}


def _run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def this_commit():
    commit = _run(["git", "rev-parse", "--short", "HEAD"]) or "unknown"
    dirty = _run(["git", "status", "--porcelain", "--untracked-files=no"])
    return commit + (" (+ local changes)" if dirty else "")


def this_machine():
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem_kb = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal"))
        mem = f", {mem_kb / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        mem = ""
    return f"{model or 'unknown CPU'}, {os.cpu_count()} cores{mem}"


def this_load():
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3]) + " at the end"
    except OSError:
        return "unknown"


def parse_tables(markdown):
    """[(columns, rows, notes, plot)] and the set-up lines before the first table."""
    tables, setup, current = [], [], None
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if line.startswith("|") and i + 1 < len(lines) and lines[i + 1].strip().startswith("|---"):
            cols = [c.strip() for c in line.strip("|").split("|")]
            rows = []
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            current = {"columns": cols, "rows": rows, "notes": []}
            tables.append(current)
            continue
        plot = re.match(r"!\[[^\]]*\]\(([^)]+)\)", line)
        if plot and current is not None:
            current["plot"] = plot.group(1)
        elif line:
            text = line[2:] if line.startswith("- ") else line
            (current["notes"] if current is not None else setup).append(text)
        i += 1
    return tables, setup


def header_fields(setup, command):
    """command, commit, machine, date, load: from the set-up lines where they say so."""
    f = {"command": command, "commit": "", "machine": "", "date": "", "load": ""}
    for line in setup:
        m = re.match(r"run: (`[^`]+`), ([^;]+); Sift `([0-9a-f]+)`", line)
        if m:
            f["command"], f["date"], f["commit"] = m.group(1), m.group(2), m.group(3)
        m = re.match(r"date: ([^;]+); sift commit ([0-9a-f]+( \(\+ local changes\))?)", line)
        if m:
            f["date"], f["commit"] = m.group(1), m.group(2)
        if line.startswith("machine: "):
            f["machine"] = line[len("machine: "):].split(";")[0]
        m = re.search(r"load average[^0-9]*([0-9.]+ [0-9.]+ [0-9.]+)", line)
        if m and not f["load"]:
            f["load"] = m.group(1) + " at the start"
    return f


def write_section(name, heading, table, path=None, command=None):
    """bench/results/NAME.json from the markdown `table`, then bench/RESULTS.md. `path` is
    the page to write (tests); `command` what reproduces the figures (default: the
    script that called, with its arguments)."""
    page = path or results_page.PAGE
    results_dir = os.path.join(os.path.dirname(os.path.abspath(page)), "results")
    os.makedirs(results_dir, exist_ok=True)
    command = command or os.environ.get("SIFT_BENCH_COMMAND") or " ".join(
        [os.path.relpath(sys.argv[0])] + sys.argv[1:])
    tables, setup = parse_tables(table)
    if not tables:
        raise ValueError(f"results_section: {name}: no markdown table in what was given")
    fields = header_fields(setup, command)
    fields["commit"] = fields["commit"] or this_commit()
    fields["machine"] = fields["machine"] or this_machine()
    fields["date"] = fields["date"] or datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC")
    fields["load"] = fields["load"] or this_load()
    consumed = re.compile(r"(run|date|machine): ")
    tables[0]["notes"] = [s for s in setup if not consumed.match(s)] + tables[0]["notes"]
    family = FAMILY.get(name, "fasttext" if name.startswith("fasttext-") else name)
    out = {"family": family, "heading": heading, "tables": []}
    json_path = os.path.join(results_dir, f"{name}.json")
    if os.path.exists(json_path):
        with open(json_path, encoding="utf-8") as f:
            old = json.load(f)
        if isinstance(old, dict) and "order" in old:
            out["order"] = old["order"]
    for i, t in enumerate(tables):
        title = heading if len(tables) == 1 else f"{heading} ({i + 1} of {len(tables)})"
        out["tables"].append(dict(title=title, **fields, **t))
    results_page.write_atomically(json_path, json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    pages = results_page.load_pages(results_dir)
    bad = results_page.problems(pages)
    if bad:
        raise ValueError("; ".join(bad))
    results_page.write_atomically(page, results_page.render(pages))
    print(f"\nwritten to {json_path} and {page}")


def write_page(name, page, load_before, load_after=None):
    """A script's page file as it stands (title, command, columns, rows, notes...), with the
    commit, machine, date and load filled in here, written to bench/results/NAME.json; then
    bench/RESULTS.md again. `load_before`: /proc/loadavg's three figures before the runs;
    `load_after` those after them (default: now)."""
    table = dict(page, commit=this_commit(), machine=this_machine(),
                 date=datetime.date.today().isoformat(),
                 load=f"{load_before} before, {load_after or loadavg()} after")
    # The table joins its family's section ("family", "order" stay on the page file).
    wrapped = {key: table.pop(key) for key in ("family", "order") if key in table}
    wrapped["tables"] = [table]
    save_section(name, wrapped)


def save_section(name, section):
    """bench/results/NAME.json as `section` holds it, then bench/RESULTS.md again."""
    with open(os.path.join(results_page.RESULTS_DIR, name + ".json"), "w",
              encoding="utf-8") as f:
        json.dump(section, f, indent=1)
        f.write("\n")
    results_page.main(["results_page.py"])


def loadavg():
    """/proc/loadavg's 1, 5 and 15 minute figures."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])

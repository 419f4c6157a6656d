"""The figures of a serving bench run in rounds (bench/serve_tuning.sh, bench/serve_batching.sh):
wrk's rows (bench/lib/serve_load.sh's wrk_row) grouped by server, each server's median over the
rounds and how far its own runs spread, a table's heading fields, and the page written."""
import datetime
import json
import os
import statistics
import subprocess
import sys


class Rounds:
    def __init__(self, rows_file):
        self.runs = {}
        for line in open(rows_file):
            row = json.loads(line)
            self.runs.setdefault(row["server"], []).append(row)

    def median(self, server, key):
        return statistics.median(r[key] for r in self.runs[server])

    def spread_note(self, what="setting"):
        """Errors over every run, and how far a server's own runs spread (requests/s)."""
        errors = sum(r["errors"] for rs in self.runs.values() for r in rs)
        spreads = sorted((max(r["requests_per_s"] for r in rs) - min(r["requests_per_s"] for r in rs))
                         / max(self.median(k, "requests_per_s"), 1) for k, rs in self.runs.items())
        return (f"Errors over every run: {errors}. A {what}'s own runs spread (max - min over the "
                f"median, requests/s) {100 * spreads[0]:.0f}% to {100 * spreads[-1]:.0f}%, "
                f"median {100 * statistics.median(spreads):.0f}%")


def heading(title, command, load_before, load_after):
    """A table's title, command, commit, machine, date and load."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "?")
    return {"title": title, "command": command, "commit": commit,
            "machine": f"{cpu}, 2 cores (shared with wrk)",
            "date": datetime.date.today().isoformat(),
            "load": f"load average {load_before} before, {load_after} after"}


def write_page(out, order, tables):
    """bench/results/<name>.json of the serving family, written whole or not at all."""
    with open(out + ".tmp", "w") as f:
        json.dump({"family": "serving", "order": order, "tables": tables}, f, indent=1)
        f.write("\n")
    os.replace(out + ".tmp", out)
    print(f"wrote {out}", file=sys.stderr)

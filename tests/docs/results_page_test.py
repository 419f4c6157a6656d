#!/usr/bin/python3
"""bench/RESULTS.md is what bench/results/*.json gives (python3 bench/results_page.py), every
table is headed by its command, commit, machine, date and load, and the bench scripts'
writer (bench/results_section.py) and other helpers' page files (the one-table shape of
serve.json) land in the right section. Run by ctest."""
import io
import json
import os
import re
import shutil
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import results_page  # noqa: E402
import results_section  # noqa: E402

HEADER = re.compile(r"command .+ · commit `[^`]+` · machine .+ · date .+ · load .+")


def tables_with_headers(text):
    """[(header line, column line, rows)] of every markdown table in `text`."""
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines):
        if line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            if i > 0 and lines[i - 1].startswith("|"):
                continue
            j = i - 1
            while j >= 0 and not lines[j].strip():
                j -= 1
            rows = []
            k = i + 2
            while k < len(lines) and lines[k].startswith("|"):
                rows.append(lines[k])
                k += 1
            out.append((lines[j] if j >= 0 else "", line, rows))
    return out


class ResultsPageTest(unittest.TestCase):
    def test_the_page_is_what_the_json_gives(self):
        pages = results_page.load_pages()
        self.assertEqual(results_page.problems(pages), [])
        with open(results_page.PAGE, encoding="utf-8") as f:
            self.assertEqual(f.read(), results_page.render(pages),
                             "bench/RESULTS.md is stale: run python3 bench/results_page.py")

    def test_every_table_is_headed_by_its_command_commit_machine_date_and_load(self):
        text = open(results_page.PAGE, encoding="utf-8").read()
        tables = tables_with_headers(text)
        self.assertGreater(len(tables), 20)
        for header, columns, _ in tables:
            self.assertRegex(header, HEADER, f"the table {columns[:60]!r} has no full header")

    def test_targets_come_first_and_the_page_stays_short(self):
        text = open(results_page.PAGE, encoding="utf-8").read()
        sections = re.findall(r"^## (.+)$", text, flags=re.M)
        self.assertEqual(sections[0], "Targets")
        for family in ("Against the fastText CLI", "Against PyTorch in Python",
                       "Memory against data size", "Export precisions", "Distillation",
                       "Distributed training", "Serving"):
            self.assertTrue(any(s.startswith(family) for s in sections), family)
        # Short enough to read: 2,579 lines once; each table adds about 15. 480 until this
        # round's families (multi-host, fastText readers, pretrained fine-tuning, pretraining,
        # sharding) came: 640 held them at one or two tables each; 700 with serving's HTTP
        # libraries and the huge-pages table of the fastText family; 715 with serving's
        # batching by model size; 720 with stage 3 in the BERT-Small sharding table.
        self.assertLessEqual(text.count("\n"), 720)

    def test_no_row_appears_in_two_tables(self):
        text = open(results_page.PAGE, encoding="utf-8").read()
        seen = {}
        for header, _, rows in tables_with_headers(text):
            for row in rows:
                self.assertNotIn(row, seen, f"{row} is in two tables: {seen.get(row)!r}")
                seen[row] = header[:60]

    def test_a_one_table_file_such_as_serve_json_lands_under_serving(self):
        with tempfile.TemporaryDirectory() as tmp:
            json.dump({"title": "sift serve, 2 workers", "command": "bench/serve_bench.sh",
                       "commit": "abc1234", "machine": "2 cores", "date": "2026-12-05",
                       "load": "1.0", "columns": ["clients", "requests/s"],
                       "rows": [[1, 900], [8, 2100]], "notes": ["wrk, 30 s"]},
                      open(os.path.join(tmp, "serve.json"), "w"))
            json.dump({"raw": [1, 2, 3]}, open(os.path.join(tmp, "compare.json"), "w"))
            pages = results_page.load_pages(tmp)
            self.assertEqual(list(pages), ["serving"])
            text = results_page.render(pages)
            serving = text[text.index("## Serving"):]
            self.assertIn("command `bench/serve_bench.sh` · commit `abc1234`", serving)
            self.assertIn("| 8 | 2100 |", serving)

    def test_a_family_without_results_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            text = results_page.render(results_page.load_pages(tmp))
            self.assertIn("## Serving\n\nNot measured yet", text)

    def test_a_table_without_its_commit_is_refused_naming_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            json.dump({"title": "t", "command": "c", "commit": "", "machine": "m", "date": "d",
                       "load": "l", "columns": ["a"], "rows": [["1"]]},
                      open(os.path.join(tmp, "serve.json"), "w"))
            bad = results_page.problems(results_page.load_pages(tmp))
            self.assertEqual(bad, ["bench/results/serve.json: table 1 ('t') has no commit"])

    def test_a_bench_script_writes_its_json_and_then_the_page(self):
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(os.path.join(ROOT, "bench", "results"), os.path.join(tmp, "results"))
            page = os.path.join(tmp, "RESULTS.md")
            md = ("- date: 2026-12-05 00:10 UTC; sift commit 1234abc\n"
                  "- machine: AMD EPYC, 2 cores; shared\n\n"
                  "| bucket MB | all-reduce ms/step |\n|---|---|\n| 25 | 40.0 |\n\nA note.\n")
            with redirect_stdout(io.StringIO()):
                results_section.write_section("distributed", "Distributed", md, path=page,
                                              command="python3 bench/distributed.py -n 2")
            saved = json.load(open(os.path.join(tmp, "results", "distributed.json")))
            self.assertEqual(saved["family"], "distributed")
            t = saved["tables"][0]
            self.assertEqual((t["commit"], t["machine"], t["date"]),
                             ("1234abc", "AMD EPYC, 2 cores", "2026-12-05 00:10 UTC"))
            self.assertEqual(t["notes"], ["A note."])
            text = open(page, encoding="utf-8").read()
            self.assertIn("command `python3 bench/distributed.py -n 2` · commit `1234abc`", text)
            self.assertIn("| 25 | 40.0 |", text)
            self.assertNotIn("| TextCNN, TREC |", text)  # the old distributed tables are gone


if __name__ == "__main__":
    unittest.main()

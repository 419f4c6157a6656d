"""Writes one generated section of bench/RESULTS.md, keeping the notes written by hand.

A section is <!-- NAME:begin --> generated table <!-- NAME:generated-end --> notes
<!-- NAME:end -->: a rerun replaces the table and keeps the notes.
"""
import os


def write_section(name, heading, table, path="bench/RESULTS.md"):
    text = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
    begin, gen_end, end = (f"<!-- {name}:begin -->", f"<!-- {name}:generated-end -->",
                           f"<!-- {name}:end -->")
    block = f"{begin}\n{table}\n{gen_end}"
    if begin in text and gen_end in text:
        a = text.index(begin)
        b = text.index(gen_end) + len(gen_end)
        text = text[:a] + block + text[b:]
    elif begin in text and end in text:
        a = text.index(begin)
        b = text.index(end) + len(end)
        text = text[:a] + block + "\n" + end + text[b:]
    else:
        text = text.rstrip("\n") + f"\n\n## {heading}\n\n" + block + "\n" + end + "\n"
    open(path, "w").write(text)
    print(f"\nwritten to {path}")

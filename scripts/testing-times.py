#!/usr/bin/env python3
"""Writes the measured figures of docs/testing.md: how long each step of CI
takes and how many tests the default suite holds. Nothing else in the tree
states them (tests/scripts/docs_figures_test.cc checks that).

  testing-times.py DOC --count N --run NAME=STEP_LOG [--run NAME=STEP_LOG ...]

Each STEP_LOG is the file .ci/run leaves in build/Testing/ci-steps.txt (one
line per step: "<seconds> s  <step>"); NAME heads its column ("cold", "warm",
...). The table replaces what lies between the markers
<!-- figures:begin --> and <!-- figures:end --> in DOC.
"""
import argparse
import datetime
import re
import sys

BEGIN, END = "<!-- figures:begin -->", "<!-- figures:end -->"
LINE = re.compile(r"^\s*(\d+) s  (.*?)(  FAILED.*)?$")


def read_log(path):
    steps = []
    for line in open(path, encoding="utf-8"):
        m = LINE.match(line.rstrip("\n"))
        if m:
            steps.append((m.group(2), int(m.group(1)), bool(m.group(3))))
    return steps


def minutes(seconds):
    return "%d s" % seconds if seconds < 120 else "%d s (%.0f min)" % (seconds, seconds / 60)


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("doc")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--run", action="append", default=[])
    a = p.parse_args(argv)
    runs = []
    for spec in a.run:
        name, _, path = spec.partition("=")
        runs.append((name, read_log(path)))
    order = []
    for _, steps in runs:
        for step, _, _ in steps:
            if step not in order:
                order.append(step)
    if not runs:
        rows = ["No run of CI has been measured since the suite last changed size."]
        return write(a, rows)
    head = "| step | " + " | ".join(name for name, _ in runs) + " |"
    rows = [head, "|---|" + "---|" * len(runs)]
    for step in order:
        cells = []
        for _, steps in runs:
            got = [(s, failed) for name, s, failed in steps if name == step]
            cells.append("" if not got else minutes(got[0][0]) + (" (failed)" if got[0][1] else ""))
        rows.append("| " + step + " | " + " | ".join(cells) + " |")
    totals = [minutes(sum(s for _, s, _ in steps)) for _, steps in runs]
    rows.append("| **all of CI** | " + " | ".join("**%s**" % t for t in totals) + " |")
    return write(a, rows)


def write(a, rows):
    block = "\n".join([
        BEGIN,
        "Measured %s on this project's 2-core machine; the default suite holds %d tests "
        "(`ctest --preset default -N`)." % (datetime.date.today().isoformat(), a.count),
        "",
        *rows,
        END,
    ])
    text = open(a.doc, encoding="utf-8").read()
    if BEGIN not in text or END not in text:
        print("testing-times: %s has no %s ... %s block" % (a.doc, BEGIN, END), file=sys.stderr)
        return 2
    text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    open(a.doc, "w", encoding="utf-8").write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

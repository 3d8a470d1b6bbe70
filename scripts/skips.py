#!/usr/bin/env python3
"""The skips of a ctest run, grouped by what the machine lacks.

  skips.py JUNIT_XML REASONS_SOURCE

JUNIT_XML is ctest's --output-junit file; REASONS_SOURCE is
tests/harness/machine.cc, whose kNames table lists the reasons a test may
skip for (docs/testing.md explains each). A test skips through
NCCOM_SKIP_MACHINE_LACKS, which prints "machine lacks <reason>: <detail>".

Prints the skipped tests grouped by reason, then one line per test that
skipped for anything else (or was disabled). Exit 0 when every skip names a
known reason, 1 otherwise, 2 when the inputs cannot be read.
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET

SKIP_LINE = re.compile(r"machine lacks ([a-z0-9-]+): ?(.*)")


def known_reasons(source):
    text = open(source, encoding="utf-8").read()
    table = re.search(r"kNames\s*=\s*\{(.*?)\};", text, re.S)
    if table is None:
        raise ValueError(source + " has no kNames table")
    return re.findall(r'"([a-z0-9-]+)"', table.group(1))


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    try:
        reasons = known_reasons(argv[1])
        cases = ET.parse(argv[0]).getroot().iter("testcase")
    except (OSError, ValueError, ET.ParseError) as e:
        print("skips: cannot read the run's results: %s" % e, file=sys.stderr)
        return 2
    by_reason = collections.defaultdict(list)
    unexplained = []
    for case in cases:
        # ctest's names of parameterised cases carry "  # GetParam() = ...".
        name = case.get("name").split("  # ")[0]
        if case.get("status") == "disabled":
            unexplained.append((name, "disabled (a DISABLED_ test hides a failure)"))
            continue
        if case.find("skipped") is None:
            continue
        out = case.findtext("system-out") or ""
        found = [m for m in map(SKIP_LINE.search, out.splitlines()) if m]
        if not found:
            tail = [line for line in out.splitlines() if line.strip()][-3:]
            unexplained.append((name, "skipped without a machine reason: " + " | ".join(tail)))
        elif found[0].group(1) not in reasons:
            unexplained.append((name, "skipped for '%s', not one of the machine reasons (%s)"
                                % (found[0].group(1), ", ".join(reasons))))
        else:
            by_reason[found[0].group(1)].append((name, found[0].group(2)))
    total = sum(len(v) for v in by_reason.values())
    if total == 0 and not unexplained:
        print("skips: none")
        return 0
    if total:
        print("skips: %d test(s) skipped for what this machine lacks (docs/testing.md):" % total)
        for reason in reasons:
            skipped = by_reason.get(reason, [])
            if not skipped:
                continue
            print("  %s (%d):" % (reason, len(skipped)))
            # One line per distinct detail, then the tests it holds for.
            details = collections.OrderedDict()
            for name, detail in skipped:
                details.setdefault(detail, []).append(name)
            for detail, names in details.items():
                print("    %s" % detail)
                print("      %s" % ", ".join(names))
    if unexplained:
        print("skips: %d test(s) skipped for no machine reason; a test skips only through "
              "NCCOM_SKIP_MACHINE_LACKS (tests/harness/machine.h):" % len(unexplained))
        for name, why in unexplained:
            print("  %s: %s" % (name, why))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

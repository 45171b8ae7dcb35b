#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The test command's totals, with every skip checked against a budget.

usage: test-summary.py [--sanitize] [--budget FILE] LOG.json...

LOG.json: meson's test logs (testlog.json and the like). VBR_COUNTS in the
environment: the last lines ("N passed, N failed, N skipped") of legs run
apart from meson, one a line, added as they are.

Counts: a test counts once, as meson says (OK, EXPECTEDFAIL: passed; SKIP:
skipped; the rest: failed), unless its output ends with a line "totals: N
passed, N failed, N skipped", which counts instead (a failed test with no
failure there still counts one).

Skips: every skip a test says, with its reason -- the "SKIP: why" of a
test or program that skips (or "SKIP (part): why" of a part of one), the
"skip: why" of a skipped case (app/test/test.h), and rdma-core's own
reasons (provider-rdma-core) -- is checked against the budget: lines
"TEST<tab>REASON<tab>WHY" (regular expressions, matched from the start of
the test's name and of the reason; "nonroot:" before TEST: only when not
run as root; "sanitize:": only with --sanitize, the sanitizer legs). A
skip the budget has no line for is
a failure: the product or the machine took a test away that this machine
should run. Above the last line the skips are listed by reason.

Prints the skips, then as its last line "N passed, N failed, N skipped".
"""

import json
import os
import re
import sys

TOTALS = re.compile(r"^totals: (\d+) passed, (\d+) failed, (\d+) skipped$",
                    re.M)
COUNT = re.compile(r"(\d+) passed, (\d+) failed, (\d+) skipped")
# "SKIP: why", "SKIP (af_packet part): why", "skip: why" (a case)
SAID = re.compile(r"^(?:SKIP(?: \([^)]*\))?|skip): (.+?)\s*$", re.M)
RDMA_CORE_HEAD = "skipped, with rdma-core's reasons:"
RDMA_CORE_LINE = re.compile(r"^\s+(\d+)\s+(.+?)\s*$")


def load_budget(path, sanitize):
    rules = []
    if path is None:
        return rules
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 3 or not parts[2].strip():
                raise SystemExit(f"{path}:{n}: want TEST<tab>REASON<tab>WHY")
            if parts[0].startswith("nonroot:"):
                if os.geteuid() == 0:
                    continue
                parts[0] = parts[0][len("nonroot:"):]
            if parts[0].startswith("sanitize:"):
                if not sanitize:
                    continue
                parts[0] = parts[0][len("sanitize:"):]
            rules.append((re.compile(parts[0]), re.compile(parts[1]),
                          parts[2]))
    return rules


def allowed(rules, name, reason):
    return any(t.match(name) and r.match(reason) for t, r, _ in rules)


def no_budget(budget):
    """A budget that allows nothing is not an empty list: None means none
    was given (count only)."""
    return budget is None


def skips_of(test):
    """(reason, n) of every skip test says."""
    out = test.get("stdout") or ""
    found = [(m.group(1), 1) for m in SAID.finditer(out)]
    lines = out.splitlines()
    if RDMA_CORE_HEAD in lines:
        for line in lines[lines.index(RDMA_CORE_HEAD) + 1:]:
            m = RDMA_CORE_LINE.match(line)
            if m is None:
                break
            found.append(("rdma-core: " + m.group(2), int(m.group(1))))
    if test["result"] == "SKIP" and not found:
        found.append(("(no reason given)", 1))
    return found


def main():
    args = sys.argv[1:]
    budget = None
    sanitize = False
    if args and args[0] == "--sanitize":
        sanitize, args = True, args[1:]
    if len(args) >= 2 and args[0] == "--budget":
        budget, args = args[1], args[2:]
    rules = load_budget(budget, sanitize)
    passed = failed = skipped = 0
    for line in os.environ.get("VBR_COUNTS", "").splitlines():
        if not line:
            continue
        m = COUNT.fullmatch(line)
        if m is None:  # a leg that ended with no count failed
            print(f"test.sh: no count line from a leg: {line!r}")
            failed += 1
            continue
        passed += int(m[1])
        failed += int(m[2])
        skipped += int(m[3])
    by_reason = {}
    unexpected = []
    for log in args:
        with open(log) as f:
            for line in f:
                if not line.strip():
                    continue
                test = json.loads(line)
                res = test["result"]
                name = test["name"].split(" / ")[-1]
                ok = res in ("OK", "EXPECTEDFAIL", "SKIP")
                own = TOTALS.findall(test.get("stdout") or "")
                if own:
                    p, f_, s = (int(n) for n in own[-1])
                    passed += p
                    skipped += s
                    failed += f_ if f_ or ok else 1
                elif res in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif res == "SKIP":
                    skipped += 1
                else:  # FAIL, TIMEOUT, ERROR, UNEXPECTEDPASS
                    failed += 1
                for reason, n in skips_of(test):
                    by_reason[reason] = by_reason.get(reason, 0) + n
                    if not no_budget(budget) and \
                            not allowed(rules, name, reason):
                        unexpected.append((name, reason))
    if by_reason:
        print("skips by reason (tests, programs, parts and cases):")
        for reason, n in sorted(by_reason.items(),
                                key=lambda r: (-r[1], r[0])):
            print(f"  {n:4d}  {reason}")
    for name, reason in unexpected:
        print(f"test.sh: a skip the budget does not allow: {name}: "
              f"{reason}")
    failed += len(unexpected)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())

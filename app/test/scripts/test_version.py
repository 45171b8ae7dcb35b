#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""One version, meson.build's project(), everywhere a vbr build shows one.

usage: test_version.py VERSION SOURCE_ROOT [--vbr-stat PATH] [--pmd PATH]
                       [--glue PATH] [--pc PATH]

VERSION is meson.project_version(). Checked:
- the newest heading of SOURCE_ROOT/CHANGELOG.md ("## <version>") names it;
- `vbr-stat --version` prints "vbr-<version>";
- the PMD's probe message carries "(vbr <version>)" (its .rodata);
- the ibverbs glue object's file name ends in ".so.<version>";
- the pkg-config file says "Version: <version>".
Each check runs only when its file is given.
"""

import argparse
import os
import re
import subprocess
import sys


def changelog_version(root):
    with open(os.path.join(root, "CHANGELOG.md"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^## \[?v?([0-9][0-9A-Za-z.+~-]*)\]?", line)
            if m:
                return m.group(1)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("version")
    ap.add_argument("root")
    ap.add_argument("--vbr-stat")
    ap.add_argument("--pmd")
    ap.add_argument("--glue")
    ap.add_argument("--pc")
    a = ap.parse_args()
    want = a.version
    bad = []

    got = changelog_version(a.root)
    print(f"CHANGELOG.md newest: {got}")
    if got != want:
        bad.append(f"CHANGELOG.md's newest release is {got}, meson.build "
                   f"says {want}")

    if a.vbr_stat:
        out = subprocess.run([a.vbr_stat, "--version"], capture_output=True,
                             text=True, check=False)
        print(f"vbr-stat --version: {out.stdout.strip()}")
        if out.returncode != 0 or f"vbr-{want}" not in out.stdout.split():
            bad.append(f"vbr-stat --version printed {out.stdout.strip()!r} "
                       f"(exit {out.returncode}), not vbr-{want}")

    if a.pmd:
        with open(a.pmd, "rb") as f:
            blob = f.read()
        tag = f"(vbr {want})".encode()
        found = sorted(set(re.findall(rb"\(vbr [^)\0]{1,40}\)", blob)))
        print(f"PMD {a.pmd}: {[x.decode(errors='replace') for x in found]}")
        if found != [tag]:
            bad.append(f"the PMD carries {found}, not only {tag}")

    if a.glue:
        name = os.path.basename(os.path.realpath(a.glue))
        print(f"glue: {name}")
        if not name.endswith(f".so.{want}"):
            bad.append(f"the glue object {name} is not named .so.{want}")

    if a.pc:
        with open(a.pc, encoding="utf-8") as f:
            vers = re.findall(r"^Version:\s*(\S+)", f.read(), re.M)
        print(f"{a.pc}: Version {vers}")
        if vers != [want]:
            bad.append(f"{a.pc} says Version {vers}, not {want}")

    for b in bad:
        print(f"FAIL: {b}")
    if not bad:
        print(f"OK: version {want} everywhere checked")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
